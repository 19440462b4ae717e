#!/usr/bin/env python3
"""A Cyclone DDS (Python) publisher the ROS 2 source's end-to-end tests spawn.

It publishes ROS 2-shaped samples (plain CDR, exactly what an rmw_cyclonedds node would send)
and prints, on stdout, ONE JSON line per sample written and a final line:

    {"topic": "rt/chatter", "i": 0, "bytes": 24, "sha256": "<hex>", "t_ns": <ns>, "data": "hello 0"}   (string)
    {"topic": "rt/blob", "i": 0, "bytes": 1036, "sha256": "<hex>", "seq": 0,
     "data_len": 1024, "data_sha256": "<hex>"}                                           (blob)
    {"done": true, "matched": true, "sent": 10, "acked": true}

"t_ns" is the wall clock (ns since the Unix epoch) just before the sample was written.
"bytes"/"sha256" describe the complete serialized sample as the wire carries it: the 4-byte
encapsulation header (00 01 00 00 = CDR little-endian, 00 07 00 00 = XCDR2 little-endian with
--xcdr2) followed by the payload, zero-padded to a multiple of 4 bytes. The padding is what
cyclonedds' DataWriter.write() itself adds (`ser.ljust(4-aligned, b'\\0')`) before handing the
buffer to the C library, which sends it unchanged (the header's option bytes stay 00 00; they do
NOT carry the padding count). Everything else (stderr) is diagnostics.

Kinds:
  string  type std_msgs::msg::dds_::String_   {data: string}, data = "hello <i>"
  blob    type recd_test::msg::dds_::Blob_     {seq: int32, data: sequence<uint8>}, seq = i,
          data[j] = (7*j + i) & 0xff for j in 0..--size
  keyed   type recd_test::Keyed (plain DDS, topic "Keyed") {id: int32 @key, data: string},
          id = i % 3, data = "keyed <i>"

Discovery: this host's loopback has no MULTICAST flag, so run it with
CYCLONEDDS_URI=file://<this dir>/cyclonedds-loopback.xml (loopback only, unicast peer 127.0.0.1).

Exit codes: 0 ok; 2 bad arguments; 3 no reader matched within --wait-match; 4 a write failed.
Every wait is bounded: --start-delay + --wait-match + count/rate + --linger (+ about 1 s).
"""

import argparse
import hashlib
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import DDSException, Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import final, key
from cyclonedds.idl.types import int32, sequence, uint8
from cyclonedds.pub import DataWriter, Publisher
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from script_io import emit, match_count


@dataclass
@final
class String(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    data: str


@dataclass
@final
class Keyed(IdlStruct, typename="recd_test::Keyed"):
    """A plain (non-ROS) DDS type with a key: its writer is a WITH_KEY endpoint."""
    id: int32
    key("id")
    data: str


@dataclass
@final
class Blob(IdlStruct, typename="recd_test::msg::dds_::Blob_"):
    seq: int32  # a bare Python `int` would be an int64 in cyclonedds' IDL mapping
    data: sequence[uint8]


# Type hashes as rmw puts them into USER_DATA ("typehash=RIHS01_<64 hex>;").
# std_msgs/msg/String's is the real one (ROS 2 Iron and later); the blob's is made up
# (sha256 of its ros2msg definition), good enough for a recorder that only passes it on.
TYPE_HASHES = {
    "string": "df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18",
    "blob": hashlib.sha256(b"int32 seq\nuint8[] data").hexdigest(),
}
DEFAULT_TOPICS = {"string": "rt/chatter", "blob": "rt/blob", "keyed": "Keyed"}

# data[j] = (7*j + i) & 0xff, built with bytes.translate so multi-megabyte blobs stay cheap.
_base_cache = {}


def blob_payload(size: int, i: int) -> bytes:
    base = _base_cache.get(size)
    if base is None:
        base = bytes((7 * j) & 0xFF for j in range(size))
        _base_cache[size] = base
    return base.translate(bytes((k + i) & 0xFF for k in range(256)))


def wire_bytes(sample, use_version_2) -> bytes:
    """Exactly what DataWriter.write() hands to the C library (and what goes on the wire)."""
    ser = sample.serialize(use_version_2=use_version_2)
    return ser.ljust((len(ser) + 3) & ~3, b"\0")


def log(msg: str) -> None:
    print(f"dds_publish: {msg}", file=sys.stderr, flush=True)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domain", type=int, required=True, help="DDS domain id")
    ap.add_argument("--topic", help="DDS topic name (default rt/chatter for string, rt/blob for blob)")
    ap.add_argument("--kind", choices=["string", "blob", "keyed"], default="string",
                    help="keyed: plain DDS type recd_test::Keyed {int32 id (key), string data}, "
                         "id = i %% 3, data = 'keyed <i>'")
    ap.add_argument("--size", type=int, default=1024, help="blob: bytes in data (default 1024)")
    ap.add_argument("--count", type=int, default=10, help="samples to publish (default 10)")
    ap.add_argument("--rate", type=float, default=10.0, help="samples per second (default 10; <=0: no pause)")
    ap.add_argument("--xcdr2", action="store_true", help="DataRepresentation QoS = XCDR2 only")
    ap.add_argument("--best-effort", action="store_true", help="BEST_EFFORT (default RELIABLE)")
    ap.add_argument("--transient-local", action="store_true", help="TRANSIENT_LOCAL durability (default VOLATILE)")
    ap.add_argument("--depth", type=int, help="KEEP_LAST history depth (default: --count)")
    ap.add_argument("--type-hash", nargs="?", const="auto", metavar="HEX",
                    help='put USER_DATA "typehash=RIHS01_<hex>;" on the writer as rmw does '
                         "(without HEX: the kind's built-in hash)")
    ap.add_argument("--wait-match", type=float, default=20.0,
                    help="seconds to wait for a matched reader before publishing (default 20); exit 3 "
                         "if none matched. 0: do not wait and do not require one (late joiners, "
                         "with --transient-local)")
    ap.add_argument("--linger", type=float, default=2.0,
                    help="seconds to stay after the last write (default 2). A reliable volatile writer "
                         "with matched readers leaves as soon as all samples are acknowledged; "
                         "best-effort and transient-local writers stay the whole time")
    ap.add_argument("--start-delay", type=float, default=0.0,
                    help="seconds to sleep before creating the participant (default 0)")
    args = ap.parse_args(argv)
    if args.count < 0 or args.size < 0 or (args.depth is not None and args.depth < 1):
        ap.error("--count/--size must be >= 0 and --depth >= 1")
    if args.topic is None:
        args.topic = DEFAULT_TOPICS[args.kind]
    if args.depth is None:
        args.depth = max(1, args.count)
    if args.type_hash == "auto":
        args.type_hash = TYPE_HASHES[args.kind]
    if args.type_hash is not None:
        h = args.type_hash.lower().removeprefix("rihs01_")
        if len(h) != 64 or any(c not in "0123456789abcdef" for c in h):
            ap.error("--type-hash wants 64 hex digits")
        args.type_hash = h
    return args


def build_qos(args) -> Qos:
    policies = [Policy.History.KeepLast(args.depth)]
    if args.best_effort:
        policies.append(Policy.Reliability.BestEffort)
    else:
        policies.append(Policy.Reliability.Reliable(duration(seconds=1)))
    if args.transient_local:
        policies.append(Policy.Durability.TransientLocal)
        # Cyclone keeps a TRANSIENT_LOCAL writer's history per DurabilityService.history
        # (default KEEP_LAST 1): make late joiners get all --depth samples.
        policies.append(Policy.DurabilityService(
            cleanup_delay=duration(seconds=0), history=Policy.History.KeepLast(args.depth),
            max_samples=-1, max_instances=-1, max_samples_per_instance=-1))
    else:
        policies.append(Policy.Durability.Volatile)
    if args.xcdr2:
        policies.append(Policy.DataRepresentation(use_xcdrv2_representation=True))
    if args.type_hash:
        policies.append(Policy.Userdata(f"typehash=RIHS01_{args.type_hash};".encode()))
    return Qos(*policies)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.start_delay > 0:
        time.sleep(args.start_delay)

    T = {"string": String, "blob": Blob, "keyed": Keyed}[args.kind]
    dp = DomainParticipant(args.domain)
    topic = Topic(dp, args.topic, T)
    writer = DataWriter(Publisher(dp), topic, qos=build_qos(args))
    # None / True / False as derived by DataWriter from its DataRepresentation QoS; write() uses it.
    use_v2 = writer._use_version_2

    t_start = time.monotonic()
    matched_first = False
    if args.wait_match > 0:
        deadline = t_start + args.wait_match
        while True:
            if match_count(writer):
                matched_first = True
                break
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        if not matched_first:
            log(f"no reader matched {args.topic!r} on domain {args.domain} within {args.wait_match} s "
                "(is the recorder running, and CYCLONEDDS_URI set to cyclonedds-loopback.xml?)")
            emit({"done": True, "matched": False, "sent": 0})
            return 3
    log(f"topic={args.topic} type={T.__idl_typename__} matched={matched_first} "
        f"after {time.monotonic() - t_start:.2f} s; publishing {args.count} at {args.rate} Hz")

    period = 1.0 / args.rate if args.rate > 0 else 0.0
    sent = 0
    t0 = time.monotonic()
    for i in range(args.count):
        if args.kind == "string":
            sample = String(data=f"hello {i}")
        elif args.kind == "keyed":
            sample = Keyed(id=i % 3, data=f"keyed {i}")
        else:
            sample = Blob(seq=i, data=blob_payload(args.size, i))
        wire = wire_bytes(sample, use_v2)
        t_ns = time.time_ns()
        try:
            writer.write(sample)
        except DDSException as e:
            log(f"write {i} failed: {e}")
            emit({"done": True, "matched": matched_first, "sent": sent, "error": str(e)})
            return 4
        sent += 1
        line = {"topic": args.topic, "i": i, "bytes": len(wire), "sha256": hashlib.sha256(wire).hexdigest(),
                "t_ns": t_ns}
        if args.kind in ("string", "keyed"):
            line["data"] = sample.data
        else:
            line.update(seq=i, data_len=len(sample.data), data_sha256=hashlib.sha256(sample.data).hexdigest())
        emit(line)
        if period:
            delay = t0 + (i + 1) * period - time.monotonic()
            if delay > 0:
                time.sleep(delay)

    # Linger: let reliable readers repair/ack, let late joiners fetch TRANSIENT_LOCAL history.
    acked = None
    t_linger_end = time.monotonic() + max(0.0, args.linger)
    if not args.best_effort and not args.transient_local:
        # True: every matched reliable reader acknowledged everything (also when none is left).
        acked = writer.wait_for_acks(duration(seconds=max(0.0, args.linger)))
        time.sleep(min(0.2, max(0.0, t_linger_end - time.monotonic())))  # let the last ACKNACK settle
    else:
        time.sleep(max(0.0, t_linger_end - time.monotonic()))
    # total_count is cumulative: true also when a late joiner came and went during the linger.
    matched = matched_first or writer.get_publication_matched_status().total_count > 0
    emit({"done": True, "matched": matched, "sent": sent, "acked": acked})
    return 0


if __name__ == "__main__":
    sys.exit(main())
