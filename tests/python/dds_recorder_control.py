#!/usr/bin/env python3
"""An independent DDS remote controller of recorders, written with Cyclone DDS' Python bindings.

Two contracts, neither written by recd's authors:

command: eProsima DDS Record & Replay's remote control. Writes DdsRecorderCommand
  {string command; string args;} on /ddsrecorder/command and reads DdsRecorderStatus
  {string previous; string current; string info;} from /ddsrecorder/status (reliable,
  volatile). It waits until --expect recorders matched both topics, writes the command
  (--repeat times, --repeat-interval apart; with --trigger-in, args' trigger_ns is set to
  that long after the first write, printed first as {"trigger_ns": ...}), and prints ONE
  JSON line per status received:

    {"previous": "PAUSED", "current": "PAUSED", "info": {...parsed JSON...}, "latency_s": 0.004}

  then {"done": true, "replies": N, "matched_readers": A, "matched_writers": B}. A status is a
  reply when info.reply.command is the command (and info.reply.id the args' "id", if any);
  it stops early once --repeat x --expect replies came.

service: a ROS 2 service call as rmw_cyclonedds makes it: request topic
  rq/<node>/<service>Request, reply topic rr/<node>/<service>Reply, types
  rosbag2_interfaces::srv::dds_::<Type>_Request_/_Response_, each sample led by rmw_cyclonedds'
  16-byte header {uint64 guid; int64 seq} that the server echoes. Prints
  {"service": NAME, "reply": {...fields...}, "latency_s": x} (exit 0) or
  {"service": NAME, "error": "no reply"} (exit 5).

Discovery: run it with CYCLONEDDS_URI pointing at tests/python/cyclonedds-loopback.xml
(loopback only, unicast discovery), in the test's network namespace.
Exit codes: 0 ok; 2 bad arguments; 3 no match within --wait-match; 4 a write failed; 5 no reply.
Every wait is bounded.
"""

import argparse
import json
import random
import sys
import time
import types
from dataclasses import dataclass

from cyclonedds.core import DDSException, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import final
from cyclonedds.idl.types import int64, uint8, uint64
from cyclonedds.pub import DataWriter, Publisher
from cyclonedds.sub import DataReader, Subscriber
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from script_io import emit, match_count


@dataclass
@final
class DdsRecorderCommand(IdlStruct, typename="DdsRecorderCommand"):
    command: str
    args: str


@dataclass
@final
class DdsRecorderStatus(IdlStruct, typename="DdsRecorderStatus"):
    previous: str
    current: str
    info: str


def service_type(name: str, kind: str, fields: dict):
    """A rosbag2_interfaces service message with rmw_cyclonedds' request header first."""
    annotations = {"guid": uint64, "seq": int64, **fields}
    # types.new_class (not type()) so that IdlStruct's metaclass gets the typename.
    cls = types.new_class(f"{name}_{kind}_", (IdlStruct,),
                          {"typename": f"rosbag2_interfaces::srv::dds_::{name}_{kind}_"},
                          lambda namespace: namespace.update({"__annotations__": annotations}))
    return final(dataclass(cls))


EMPTY = {"structure_needs_at_least_one_field": uint8}
SERVICES = {
    "pause": ("Pause", EMPTY),
    "resume": ("Resume", EMPTY),
    "is_paused": ("IsPaused", {"paused": bool}),
    "split_bagfile": ("SplitBagfile", EMPTY),
    "snapshot": ("Snapshot", {"success": bool}),
    "stop": ("Stop", EMPTY),
}


def log(msg: str) -> None:
    print(f"dds_recorder_control: {msg}", file=sys.stderr, flush=True)


def reliable(depth: int) -> Qos:
    return Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.Volatile,
               Policy.History.KeepLast(depth))


def wait_matched(writer, reader, count: int, limit: float) -> tuple:
    deadline = time.monotonic() + limit
    while True:
        readers = match_count(writer)
        writers = match_count(reader)
        if (readers >= count and writers >= count) or time.monotonic() > deadline:
            return readers, writers
        time.sleep(0.02)


def command(args) -> int:
    try:
        expected_id = json.loads(args.args).get("id") if args.args.strip() else None
    except (ValueError, AttributeError):
        expected_id = None  # malformed on purpose: the recorder must say so
    dp = DomainParticipant(args.domain)
    reader = DataReader(Subscriber(dp), Topic(dp, args.status_topic, DdsRecorderStatus), qos=reliable(100))
    writer = DataWriter(Publisher(dp), Topic(dp, args.command_topic, DdsRecorderCommand), qos=reliable(10))
    readers, writers = wait_matched(writer, reader, args.expect, args.wait_match)
    if readers < args.expect or writers < args.expect:
        emit({"error": "matched", "readers": readers, "writers": writers})
        return 3
    time.sleep(0.3)
    text = args.args
    if args.trigger_in is not None:
        # The moment is set now, just before the write, as a controller pressing a button would.
        fields = json.loads(text) if text.strip() else {}
        fields["trigger_ns"] = time.time_ns() + int(args.trigger_in * 1e9)
        text = json.dumps(fields)
        emit({"trigger_ns": fields["trigger_ns"]})
    replies = 0
    last_write = None
    for n in range(args.repeat):
        try:
            writer.write(DdsRecorderCommand(command=args.command, args=text))
        except DDSException as error:
            log(f"write failed: {error}")
            return 4
        last_write = time.monotonic()
        # Between repeats, and after the last, read what comes.
        until = last_write + (args.repeat_interval if n + 1 < args.repeat else args.timeout)
        while time.monotonic() < until and replies < args.repeat * args.expect:
            for sample in reader.take(N=100):
                if not isinstance(sample, DdsRecorderStatus):
                    continue
                try:
                    info = json.loads(sample.info)
                except ValueError:
                    info = sample.info
                reply = info.get("reply") if isinstance(info, dict) else None
                if isinstance(reply, dict) and reply.get("command") == args.command and (
                        expected_id is None or reply.get("id") == expected_id):
                    replies += 1
                emit({"previous": sample.previous, "current": sample.current, "info": info,
                      "latency_s": time.monotonic() - last_write})
            time.sleep(0.001)
    emit({"done": True, "replies": replies, "matched_readers": readers, "matched_writers": writers})
    return 0


def service(args) -> int:
    type_name, response_fields = SERVICES[args.service]
    Request = service_type(type_name, "Request", EMPTY)
    Response = service_type(type_name, "Response", response_fields)
    dp = DomainParticipant(args.domain)
    base = f"{args.node}/{args.service}"
    writer = DataWriter(Publisher(dp), Topic(dp, f"rq/{base}Request", Request), qos=reliable(10))
    reader = DataReader(Subscriber(dp), Topic(dp, f"rr/{base}Reply", Response), qos=reliable(10))
    readers, writers = wait_matched(writer, reader, 1, args.wait_match)
    if readers < 1 or writers < 1:
        emit({"error": "matched", "readers": readers, "writers": writers})
        return 3
    time.sleep(0.3)
    guid = random.getrandbits(63)
    started = time.monotonic()
    try:
        writer.write(Request(guid=guid, seq=1, structure_needs_at_least_one_field=0))
    except DDSException as error:
        log(f"write failed: {error}")
        return 4
    while time.monotonic() - started < args.timeout:
        for sample in reader.take(N=10):
            if isinstance(sample, Response) and sample.guid == guid and sample.seq == 1:
                fields = {name: getattr(sample, name) for name in response_fields}
                fields.pop("structure_needs_at_least_one_field", None)
                emit({"service": args.service, "reply": fields,
                      "latency_s": time.monotonic() - started})
                return 0
        time.sleep(0.001)
    emit({"service": args.service, "error": "no reply"})
    return 5


def main(argv) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="mode", required=True)
    c = sub.add_parser("command", help="eProsima's remote-control contract")
    c.add_argument("--domain", type=int, required=True)
    c.add_argument("--command", required=True, help="start, pause, event, ... (sent as is)")
    c.add_argument("--args", default="", help="the args text (JSON for recd)")
    c.add_argument("--expect", type=int, default=1, help="recorders to match and wait replies from")
    c.add_argument("--repeat", type=int, default=1, help="write the command this many times")
    c.add_argument("--repeat-interval", type=float, default=0.5, help="seconds between repeats (default 0.5)")
    c.add_argument("--trigger-in", type=float, metavar="SECONDS",
                   help="set args' trigger_ns to this long after the first write (printed first as "
                        '{"trigger_ns": ...})')
    c.add_argument("--wait-match", type=float, default=10.0)
    c.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for replies after the last write")
    c.add_argument("--command-topic", default="/ddsrecorder/command")
    c.add_argument("--status-topic", default="/ddsrecorder/status")
    s = sub.add_parser("service", help="a rosbag2 recorder service, as rmw_cyclonedds calls it")
    s.add_argument("--domain", type=int, required=True)
    s.add_argument("--node", required=True, help="the node name (no leading slash)")
    s.add_argument("--service", required=True, choices=sorted(SERVICES))
    s.add_argument("--wait-match", type=float, default=10.0)
    s.add_argument("--timeout", type=float, default=10.0)
    args = ap.parse_args(argv)
    return command(args) if args.mode == "command" else service(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
