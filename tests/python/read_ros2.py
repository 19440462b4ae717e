#!/usr/bin/env python3
"""Reads a ROS 2 profile MCAP file (message encoding "cdr", schema encoding "ros2msg") with two
independent ROS 2 readers none of us wrote, and prints one JSON line per message and reader:

  usage: read_ros2.py [--lenient] FILE.mcap|BAG_DIR

  {"reader": "rosbags", "topic": "/chatter", "type": "std_msgs/msg/String",
   "log_time": 1700000000000000000, "cdr_len": 16, "cdr_sha256": "<hex>", "data": "hello 0"}
  {"reader": "mcap_ros2", ...same keys...}

All rosbags lines come first, then all mcap_ros2 lines, each in log-time order.
"cdr_len"/"cdr_sha256" describe the raw message bytes as stored (4-byte encapsulation header
included). "data" is
  * std_msgs/msg/String: the decoded `data` string;
  * a blob type ({int32 seq, uint8[] data}, e.g. recd_test/msg/Blob):
    {"seq": <seq>, "len": <len(data)>, "sha256": <hex of the data array>};
  * anything else: the message as a JSON object (uint8[] arrays as {"len", "sha256"}).

(a) rosbags 0.11.9, rosbags.highlevel.AnyReader. It opens a bare .mcap file directly: no
    bag directory and no metadata.yaml needed (rosbags.rosbag2.Reader picks its MCAP storage by
    the ".mcap" suffix; message counts and times come from the file's summary, or a scan). Only
    the suffix matters, so a file not named *.mcap is read through a "<name>.mcap" symlink in a
    temporary directory. No default typestore is given: every message type is built from the
    file's own schemas (the concatenated ros2msg definitions), so a file without definitions
    fails instead of silently falling back on rosbags' built-in ROS 2 types.
    rosbags decodes only classic CDR (encapsulation 00 00 / 00 01); XCDR2 (00 06..00 0b) is an
    error for it.
(b) mcap_ros2.reader.read_ros2_messages (mcap-ros2-support 0.6.0), which also builds its
    decoders from the file's ros2msg schemas. It hands back no raw bytes, so the reader it is
    given has a decoder factory that wraps mcap_ros2's own and keeps each message's raw bytes
    next to the decoded message. It looks at the endianness bit only, so it also decodes XCDR2
    of types whose XCDR2 layout equals CDR's (no 8-byte fields), such as String and the blob.

Given a directory, it is read as a ROS 2 bag: rosbags' AnyReader opens it through its
metadata.yaml (as `ros2 bag play` would) and only rosbags lines are printed, the files in the
order metadata.yaml lists them.

Any failure (unreadable file, unknown schema, a message either reader cannot decode) prints a
message to stderr and exits 1. With --lenient a message that cannot be decoded gives a line
with "data": null and "error": "<why>" instead, and the exit status stays 0 (file-level
failures still exit 1). A schema mcap_ros2 cannot parse fails each of its messages that way.
"""

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

# mcap_ros2.reader warns on import (it is "deprecated" in favour of DecoderFactory).
warnings.filterwarnings("ignore", category=DeprecationWarning)

from mcap.reader import make_reader  # noqa: E402
from mcap_ros2.decoder import DecoderFactory as Ros2DecoderFactory  # noqa: E402
from mcap_ros2.reader import read_ros2_messages  # noqa: E402
from rosbags.highlevel import AnyReader  # noqa: E402


class ReadError(Exception):
    pass


def emit(obj) -> None:
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def as_bytes(value):
    """uint8[] as decoded by either reader (bytes, numpy array, list) -> bytes, else None."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if hasattr(value, "dtype") and hasattr(value, "tobytes"):  # numpy array (rosbags)
        return value.tobytes() if str(value.dtype) in ("uint8", "int8") else None
    return None


def field_names(msg):
    if dataclasses.is_dataclass(msg):  # rosbags (its classes carry a `__msgtype__` field too)
        return [f.name for f in dataclasses.fields(msg) if not f.name.startswith("__")]
    return list(getattr(type(msg), "__slots__", []))  # mcap_ros2


def to_json(value):
    raw = as_bytes(value)
    if raw is not None:
        return {"len": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return {name: to_json(getattr(value, name)) for name in field_names(value)}


def summarize(type_name: str, msg):
    names = field_names(msg)
    if type_name == "std_msgs/msg/String":
        return msg.data
    if names == ["seq", "data"] and as_bytes(msg.data) is not None:
        raw = as_bytes(msg.data)
        return {"seq": int(msg.seq), "len": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    return to_json(msg)


def line(reader, topic, type_name, log_time, cdr, msg=None, error=None):
    out = {"reader": reader, "topic": topic, "type": type_name, "log_time": log_time,
           "cdr_len": len(cdr), "cdr_sha256": hashlib.sha256(cdr).hexdigest()}
    if error is None:
        out["data"] = summarize(type_name, msg)
    else:
        out["data"] = None
        out["error"] = error
    return out


def decode_failed(reader, topic, log_time, err, lenient):
    text = f"{type(err).__name__}: {err}"
    if not lenient:
        raise ReadError(f"{reader}: cannot decode the message on {topic} at log_time {log_time}: {text}")
    return text


def read_rosbags(path: Path, lenient: bool):
    with tempfile.TemporaryDirectory(prefix="read_ros2_") as tmp:
        if path.is_file() and path.suffix != ".mcap":  # rosbags picks its storage by suffix
            link = Path(tmp) / (path.name + ".mcap")
            os.symlink(path.resolve(), link)
            path = link
        try:
            with AnyReader([path]) as reader:  # no default_typestore: types from the file only
                for conn in reader.connections:
                    if conn.msgdef.format.name == "NONE":
                        raise ReadError(f"rosbags: topic {conn.topic} ({conn.msgtype}) has no "
                                        "message definition in the file")
                for conn, log_time, raw in reader.messages():
                    raw = bytes(raw)
                    try:
                        msg = reader.deserialize(raw, conn.msgtype)
                        yield line("rosbags", conn.topic, conn.msgtype, log_time, raw, msg)
                    except Exception as err:  # noqa: BLE001 - reported per message
                        if not conn.msgdef.data.strip():
                            err = ReadError(f"{err} (the file's definition of {conn.msgtype} is empty)")
                        why = decode_failed("rosbags", conn.topic, log_time, err, lenient)
                        yield line("rosbags", conn.topic, conn.msgtype, log_time, raw, error=why)
        except ReadError:
            raise
        except Exception as err:  # noqa: BLE001
            raise ReadError(f"rosbags: cannot read {path}: {type(err).__name__}: {err}") from err


class RawKeepingDecoderFactory(Ros2DecoderFactory):
    """mcap_ros2's decoder factory, but each decoded message comes with its raw bytes:
    ros_msg = (decoded message or None, raw bytes, error text or None)."""

    def decoder_for(self, message_encoding, schema):
        try:
            decode = super().decoder_for(message_encoding, schema)
        except Exception as err:  # noqa: BLE001 - a schema it cannot parse fails each message
            def refuse(data: bytes, err=err):
                return None, bytes(data), err
            return refuse
        if decode is None:
            return None

        def decode_keeping_raw(data: bytes):
            try:
                return decode(data), bytes(data), None
            except Exception as err:  # noqa: BLE001 - reported per message
                return None, bytes(data), err

        return decode_keeping_raw


def read_mcap_ros2(path: Path, lenient: bool):
    try:
        with open(path, "rb") as stream:
            reader = make_reader(stream, decoder_factories=[RawKeepingDecoderFactory()])
            for m in read_ros2_messages(reader):
                msg, raw, err = m.ros_msg
                topic, type_name, log_time = m.channel.topic, m.schema.name, m.log_time_ns
                if err is None:
                    try:
                        out = line("mcap_ros2", topic, type_name, log_time, raw, msg)
                    except Exception as e:  # noqa: BLE001 - e.g. a field the definition lacks
                        err = e
                if err is not None:
                    if not m.schema.data.strip():
                        err = ReadError(f"{err} (the file's definition of {type_name} is empty)")
                    why = decode_failed("mcap_ros2", topic, log_time, err, lenient)
                    out = line("mcap_ros2", topic, type_name, log_time, raw, error=why)
                yield out
    except ReadError:
        raise
    except Exception as err:  # noqa: BLE001
        raise ReadError(f"mcap_ros2: cannot read {path}: {type(err).__name__}: {err}") from err


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", type=Path, help="ROS 2 profile MCAP file, or a bag directory")
    ap.add_argument("--lenient", action="store_true",
                    help='undecodable messages give "data": null and "error" instead of failing')
    args = ap.parse_args(argv)
    if not args.file.exists():
        print(f"read_ros2: {args.file}: no such file or directory", file=sys.stderr)
        return 1
    try:
        for out in read_rosbags(args.file, args.lenient):
            emit(out)
        if args.file.is_file():
            for out in read_mcap_ros2(args.file, args.lenient):
                emit(out)
    except ReadError as err:
        print(f"read_ros2: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
