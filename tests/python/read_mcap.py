"""Reads an MCAP file with the Python `mcap` package (an implementation none of us wrote)
and prints one JSON object: the summary's statistics and every message, its payload as a
SHA-256 digest."""

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
    print(
        json.dumps(
            {
                "library": header.library,
                "message_count": summary.statistics.message_count if summary else None,
                "chunk_count": len(summary.chunk_indexes) if summary else None,
                "messages": messages,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
