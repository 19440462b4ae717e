#!/usr/bin/env python3
"""Reads an MCAP file with the Python `mcap` reader and checks recd's health in it
independently: the `recd/health` channel's schema is a valid JSON Schema (checked against
its metaschema by `jsonschema`) and every message of the channel validates against it; the
`health/<file>` Metadata record parses as JSON where it should.

    validate_health.py FILE

Prints one JSON line: {"messages": n, "schema_name": .., "schema_encoding": ..,
"message_encoding": .., "to": [each message's "to"], "verdict": .., "topics": [names]}.
Exits 1 with the reason on stderr when anything does not validate.
"""

import json
import sys

import jsonschema
from mcap.reader import make_reader


def main(argv) -> int:
    path = argv[1]
    with open(path, "rb") as stream:
        reader = make_reader(stream)
        messages = []
        schema = channel = None
        for schema_, channel_, message in reader.iter_messages(topics=["recd/health"]):
            schema, channel = schema_, channel_
            messages.append(json.loads(message.data))
        summary = reader.get_summary()
        records = {}
        for metadata in reader.iter_metadata():
            if metadata.name.startswith("health/"):
                records = metadata.metadata
    out = {"messages": len(messages), "to": [m["to"] for m in messages]}
    if schema is not None:
        document = json.loads(schema.data)
        validator = jsonschema.Draft202012Validator
        validator.check_schema(document)
        for message in messages:
            validator(document).validate(message)
        out.update(schema_name=schema.name, schema_encoding=schema.encoding,
                   message_encoding=channel.message_encoding)
    if records:
        out["verdict"] = records["verdict"]
        out["topics"] = sorted(json.loads(records["topics"]))
        json.loads(records["missing"])
    del summary
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
