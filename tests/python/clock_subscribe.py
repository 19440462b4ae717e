#!/usr/bin/env python3
"""A Cyclone DDS (Python) subscriber of ROS 2's /clock the playback tests spawn: a reader none
of us wrote, as a node with use_sim_time reads the simulated time a player publishes.

The DDS topic is rt/clock (ROS 2's /clock), type rosgraph_msgs::msg::dds_::Clock_ {
builtin_interfaces::msg::dds_::Time_ clock { int32 sec; uint32 nanosec; } }, read best effort
and volatile (rclcpp's ClockQoS is best effort, keep last 1: a reliable reader would not match).
It prints, on stdout, {"ready": true} once its reader exists, then ONE JSON line per sample
received, in the order received, and a final line:

    {"t": 12.345678, "sec": 1700000000, "nanosec": 123456789, "ns": 1700000000123456789,
     "bytes": 12, "header": "00010000"}
    {"done": true, "received": 250, "matched": true}

"t" is the arrival time (time.monotonic(), seconds); "ns" the time the sample carries, in ns
(sec * 1e9 + nanosec), decoded by the binding from the sample's CDR; "bytes" and "header" the
serialized sample as Cyclone received it (taken raw, before decoding) and its 4-byte
encapsulation header in hex (00010000: XCDR1, little endian).

It ends when --idle seconds passed without a sample after the first, or after --timeout
seconds in all. Discovery: run it with CYCLONEDDS_URI=file://<this dir>/cyclonedds-loopback.xml.
"""

import argparse
import sys
import time
from dataclasses import dataclass

from cyclonedds._clayer import ddspy_take
from cyclonedds.core import InstanceState, Policy, Qos, SampleState, ViewState
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import int32, uint32
from cyclonedds.sub import DataReader, Subscriber
from cyclonedds.topic import Topic

from script_io import emit


@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32
    nanosec: uint32


@dataclass
class Clock(IdlStruct, typename="rosgraph_msgs::msg::dds_::Clock_"):
    clock: Time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--topic", default="rt/clock", help="DDS topic name (default rt/clock)")
    ap.add_argument("--idle", type=float, default=2.0,
                    help="seconds without a sample, after the first, that end it")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args(argv)

    dp = DomainParticipant(args.domain)
    qos = Qos(Policy.Reliability.BestEffort, Policy.Durability.Volatile, Policy.History.KeepAll)
    reader = DataReader(Subscriber(dp), Topic(dp, args.topic, Clock), qos=qos)
    emit({"ready": True})

    mask = SampleState.Any | ViewState.Any | InstanceState.Any
    started = time.monotonic()
    last = None
    received = 0
    while True:
        now = time.monotonic()
        if now - started > args.timeout or (last is not None and now - last > args.idle):
            break
        taken = ddspy_take(reader._ref, mask, 64)
        samples = [] if isinstance(taken, int) else [raw for raw, info in taken if info.valid_data]
        if not samples:
            time.sleep(0.0005)
            continue
        last = time.monotonic()
        for raw in samples:
            received += 1
            clock = Clock.deserialize(raw).clock
            emit({"t": last, "sec": clock.sec, "nanosec": clock.nanosec,
                  "ns": clock.sec * 1_000_000_000 + clock.nanosec,
                  "bytes": len(raw), "header": raw[:4].hex()})
    emit({"done": True, "received": received,
          "matched": reader.get_subscription_matched_status().total_count > 0})
    return 0


if __name__ == "__main__":
    sys.exit(main())
