#!/usr/bin/env python3
"""A Cyclone DDS (Python) subscriber the playback tests spawn: a reader none of us wrote.

It reads one topic of one of dds_publish.py's kinds and prints, on stdout, ONE JSON line per
sample received, in the order received, then a final line:

    {"topic": "rt/chatter", "t": 12.345678, "bytes": 24, "sha256": "<hex>", "data": "hello 0"}
    {"done": true, "received": 10, "matched": true}

"t" is the arrival time (time.monotonic(), seconds). "bytes"/"sha256" describe the sample as
Cyclone received it: the serialized data (encapsulation header first) exactly as the writer
sent it, taken with the binding's raw take (ddspy_take) before any decoding. "data" is the
decoded string (string, keyed) or, for blobs, "seq" and "data_sha256".

It prints {"ready": true} once its reader exists. It ends when --count samples arrived, when
--idle seconds passed without a sample after the first, or after --timeout seconds in all.

Discovery: run it with CYCLONEDDS_URI=file://<this dir>/cyclonedds-loopback.xml.
"""

import argparse
import hashlib
import sys
import time

from cyclonedds._clayer import ddspy_take
from cyclonedds.core import InstanceState, Policy, Qos, SampleState, ViewState
from cyclonedds.domain import DomainParticipant
from cyclonedds.sub import DataReader, Subscriber
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from dds_publish import DEFAULT_TOPICS, Blob, Keyed, String
from script_io import emit, receive


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--topic", help="DDS topic name (default: the kind's, as in dds_publish.py)")
    ap.add_argument("--kind", choices=["string", "blob", "keyed"], default="string")
    ap.add_argument("--count", type=int, required=True, help="samples expected")
    ap.add_argument("--best-effort", action="store_true", help="BEST_EFFORT (default RELIABLE)")
    ap.add_argument("--transient-local", action="store_true",
                    help="TRANSIENT_LOCAL (matches only a transient-local writer)")
    ap.add_argument("--idle", type=float, default=3.0)
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args(argv)
    topic_name = args.topic or DEFAULT_TOPICS[args.kind]
    T = {"string": String, "blob": Blob, "keyed": Keyed}[args.kind]

    policies = [Policy.History.KeepAll]
    policies.append(Policy.Reliability.BestEffort if args.best_effort
                    else Policy.Reliability.Reliable(duration(seconds=1)))
    policies.append(Policy.Durability.TransientLocal if args.transient_local
                    else Policy.Durability.Volatile)
    dp = DomainParticipant(args.domain)
    reader = DataReader(Subscriber(dp), Topic(dp, topic_name, T), qos=Qos(*policies))
    emit({"ready": True})

    mask = SampleState.Any | ViewState.Any | InstanceState.Any

    def take():
        taken = ddspy_take(reader._ref, mask, 64)
        return [] if isinstance(taken, int) else [raw for raw, info in taken if info.valid_data]

    received = 0
    for raw in receive(take, args.count, args.idle, args.timeout):
        received += 1
        line = {"topic": topic_name, "t": time.monotonic(), "bytes": len(raw),
                "sha256": hashlib.sha256(raw).hexdigest()}
        sample = T.deserialize(raw)
        if args.kind == "blob":
            line.update(seq=sample.seq, data_sha256=hashlib.sha256(bytes(sample.data)).hexdigest())
        else:
            line["data"] = sample.data
        emit(line)
    emit({"done": True, "received": received,
          "matched": reader.get_subscription_matched_status().total_count > 0})
    return 0


if __name__ == "__main__":
    sys.exit(main())
