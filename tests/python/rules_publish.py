#!/usr/bin/env python3
"""The publisher of the rules tests: ROS 2-shaped Cyclone DDS samples and iceoryx2 samples
whose contents cross the thresholds of recd's `[[rule]]`s at known ticks, one schedule for
all of them (tick k at the start + k / --rate; ticks a stalled process missed are skipped,
script_io.Ticks).

    rules_publish.py --domain D --prefix P [--ticks 400] [--rate 100] [--wait 20]

Per tick k (k = 0 .. --ticks - 1):
  rt/vehicle/status  recd_rules_test/msg/VehicleStatus {float64 speed, geometry_msgs/Vector3
                     accel, int8 gear, string mode}: accel.x = -1.0 but in the dips
                     (DIPS: [first, last] ticks) where it is below -6.0; mode "cruise" before
                     MODE_TICK, "brake" from it on.
  rt/diagnostics     (every 5th tick) recd_rules_test/msg/Diag {DiagStatus[] status}, DiagStatus
                     {byte level, string name}: [{0, "lidar"}, {L, "camera"}], L = 0 before
                     DIAG_TICK, 2 from it on.
  vehicle/speed      (iceoryx2) payload recd_test::Speed {u64 seq @0, f32 speed @8, u8 gear
                     @12} (16 bytes), user header recd_test::Stamp as shm_pubsub.py (16 bytes
                     before the payload in a recorded sample): speed = 10.05 + 0.1 k, gear 3
                     below tick 100, 4 from it on.
  lidar/front        (iceoryx2, every 2nd tick, before LIDAR_STOP only) payload
                     recd_test::Speed with seq = k; silent from LIDAR_STOP on.

It waits (up to --wait s) for a DDS reader on both topics and a subscriber on both iceoryx2
services, publishes, and prints ONE JSON line per vehicle status sample written and a final
line:

    {"i": k, "t_ns": <wall clock just before the write>, "accel_x": -6.5, "mode": "cruise"}
    {"done": true, "matched": true, "sent": {"status": n, "diag": n, "speed": n, "lidar": n},
     "skipped": ticks, "lidar_last_ns": <wall clock of the last lidar sample>}

Everything else (stderr) is diagnostics. Exit codes: 0 ok; 3 nothing matched within --wait.
"""

import argparse
import ctypes
import sys
import time
from dataclasses import dataclass

import iceoryx2 as iox2
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import final
from cyclonedds.idl.types import byte, float64, int8, sequence
from cyclonedds.pub import DataWriter, Publisher
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from script_io import Ticks, emit, match_count
from shm_pubsub import Stamp

# The thresholds' ticks (the test reads the recorded samples, not these).
DIPS = [(50, 54, -7.0), (120, 159, -6.5), (250, 289, -6.8)]
MODE_TICK = 200
DIAG_TICK = 300
GEAR_TICK = 100
LIDAR_STOP = 250


@dataclass
@final
class Vector3(IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
    x: float64
    y: float64
    z: float64


@dataclass
@final
class VehicleStatus(IdlStruct, typename="recd_rules_test::msg::dds_::VehicleStatus_"):
    speed: float64
    accel: Vector3
    gear: int8
    mode: str


@dataclass
@final
class DiagStatus(IdlStruct, typename="recd_rules_test::msg::dds_::DiagStatus_"):
    level: byte
    name: str


@dataclass
@final
class Diag(IdlStruct, typename="recd_rules_test::msg::dds_::Diag_"):
    status: sequence[DiagStatus]


class Speed(ctypes.Structure):
    _fields_ = [("seq", ctypes.c_uint64), ("speed", ctypes.c_float), ("gear", ctypes.c_uint8)]

    @staticmethod
    def type_name() -> str:
        return "recd_test::Speed"


def log(msg: str) -> None:
    print(f"rules_publish: {msg}", file=sys.stderr, flush=True)


def accel_x(k: int) -> float:
    for first, last, value in DIPS:
        if first <= k <= last:
            return value
    return -1.0


def shm_service(prefix: str, name: str, with_header: bool):
    config = iox2.config.default()
    config.global_cfg.prefix = iox2.FileName.new(prefix)
    node = iox2.NodeBuilder.new().config(config).create(iox2.ServiceType.Ipc)
    builder = node.service_builder(iox2.ServiceName.new(name)).publish_subscribe(Speed)
    if with_header:
        builder = builder.user_header(Stamp)
    # A queue deep enough for a recorder a few periods late on a loaded machine.
    service = builder.subscriber_max_buffer_size(32).open_or_create()
    return node, service, service.publisher_builder().create()


def main(argv=None) -> int:
    iox2.set_log_level(iox2.LogLevel.Error)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domain", type=int, required=True, help="DDS domain id")
    ap.add_argument("--prefix", required=True, help="iceoryx2 global.prefix (the test's domain)")
    ap.add_argument("--ticks", type=int, default=400)
    ap.add_argument("--rate", type=float, default=100.0)
    ap.add_argument("--wait", type=float, default=20.0)
    ap.add_argument("--linger", type=float, default=1.0)
    args = ap.parse_args(argv)

    dp = DomainParticipant(args.domain)
    qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(args.ticks),
              Policy.Durability.Volatile)
    publisher = Publisher(dp)
    status_writer = DataWriter(publisher, Topic(dp, "rt/vehicle/status", VehicleStatus), qos=qos)
    diag_writer = DataWriter(publisher, Topic(dp, "rt/diagnostics", Diag), qos=qos)
    speed = shm_service(args.prefix, "vehicle/speed", True)
    lidar = shm_service(args.prefix, "lidar/front", False)

    deadline = time.monotonic() + args.wait
    while not (match_count(status_writer) and match_count(diag_writer)
               and speed[1].dynamic_config.number_of_subscribers > 0
               and lidar[1].dynamic_config.number_of_subscribers > 0):
        if time.monotonic() > deadline:
            log("no recorder matched within --wait (is the session running, and CYCLONEDDS_URI "
                "set to cyclonedds-loopback.xml?)")
            emit({"done": True, "matched": False, "sent": {}})
            return 3
        time.sleep(0.02)

    sent = {"status": 0, "diag": 0, "speed": 0, "lidar": 0}
    lidar_last_ns = None
    ticks = Ticks(args.rate, args.ticks)
    for k in ticks:
        mode = "cruise" if k < MODE_TICK else "brake"
        sample = VehicleStatus(speed=10.0 + 0.1 * k, accel=Vector3(x=accel_x(k), y=0.25, z=9.81),
                               gear=3 if k < GEAR_TICK else 4, mode=mode)
        t_ns = time.time_ns()
        status_writer.write(sample)
        sent["status"] += 1
        emit({"i": k, "t_ns": t_ns, "accel_x": sample.accel.x, "mode": mode})
        if k % 5 == 0:
            level = 0 if k < DIAG_TICK else 2
            diag_writer.write(Diag(status=[DiagStatus(level=0, name="lidar"),
                                           DiagStatus(level=level, name="camera")]))
            sent["diag"] += 1
        loan = speed[2].loan_uninit()
        header = loan.user_header().contents
        header.stamp_ns = time.time_ns()
        header.frame = k
        header.flags = 0
        loan.write_payload(Speed(seq=k, speed=10.05 + 0.1 * k, gear=3 if k < GEAR_TICK else 4)).send()
        sent["speed"] += 1
        if k % 2 == 0 and k < LIDAR_STOP:
            lidar[2].loan_uninit().write_payload(Speed(seq=k, speed=0.0, gear=0)).send()
            lidar_last_ns = time.time_ns()
            sent["lidar"] += 1

    acked = status_writer.wait_for_acks(duration(seconds=args.linger))
    diag_writer.wait_for_acks(duration(seconds=args.linger))
    time.sleep(args.linger)
    emit({"done": True, "matched": True, "sent": sent, "skipped": ticks.skipped,
          "acked": acked, "lidar_last_ns": lidar_last_ns})
    del speed, lidar
    return 0


if __name__ == "__main__":
    sys.exit(main())
