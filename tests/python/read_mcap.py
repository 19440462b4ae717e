"""Reads an MCAP file with the Python `mcap` package (an implementation none of us wrote)
and prints one JSON object: the summary's statistics, every message (its payload as a
SHA-256 digest), every Metadata record and every Attachment (its data as text)."""

import hashlib
import json
import sys

from mcap.reader import make_reader


def main(path: str) -> None:
    with open(path, "rb") as stream:
        reader = make_reader(stream)
        header = reader.get_header()
        summary = reader.get_summary()
        messages = [
            {
                "topic": channel.topic,
                "sequence": message.sequence,
                "log_time": message.log_time,
                "publish_time": message.publish_time,
                "sha256": hashlib.sha256(message.data).hexdigest(),
            }
            for _, channel, message in reader.iter_messages(log_time_order=False)
        ]
        metadata = [
            {"name": record.name, "metadata": dict(record.metadata)}
            for record in reader.iter_metadata()
        ]
        attachments = [
            {
                "name": attachment.name,
                "media_type": attachment.media_type,
                "log_time": attachment.log_time,
                "create_time": attachment.create_time,
                "data": attachment.data.decode("utf-8", errors="replace"),
            }
            for attachment in reader.iter_attachments()
        ]
    print(
        json.dumps(
            {
                "library": header.library,
                "message_count": summary.statistics.message_count if summary else None,
                "chunk_count": len(summary.chunk_indexes) if summary else None,
                "messages": messages,
                "metadata": metadata,
                "attachments": attachments,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
