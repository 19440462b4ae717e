#!/usr/bin/env python3
"""An iceoryx2 (Python bindings) publisher or subscriber the playback tests spawn: shared
memory endpoints none of us wrote, with iceoryx2's default service settings but the queue
depth: --buffer N sets subscriber_max_buffer_size, as an integrator configures a recorded
service (iceoryx2's default, 2, when left out).

The service carries a fixed-size payload `recd_test::Pose` {u64 seq; f64 x, y, z} and a user
header `recd_test::Stamp` {u64 stamp_ns; u32 frame; u32 flags}. A sample's bytes are the user
header's followed by the payload's, which is how recd records them.

    shm_pubsub.py publish   --prefix P --service S --count N --rate HZ [--buffer N]
    shm_pubsub.py subscribe --prefix P --service S --count N [--buffer N]

The publisher waits (up to --wait, default 20 s) for a subscriber, publishes, and prints one JSON
line per sample: {"i": 0, "sha256": "<hex of header+payload>"}. The subscriber prints
{"ready": true} once subscribed, then one line per sample received, in order:
{"t": <time.monotonic()>, "sha256": "<hex>"}; it ends after --count samples, --idle seconds
without one after the first, or --timeout. Both end with {"done": true, ...}.
"""

import argparse
import ctypes
import hashlib
import sys
import time

import iceoryx2 as iox2

from script_io import emit, receive


class Pose(ctypes.Structure):
    _fields_ = [("seq", ctypes.c_uint64), ("x", ctypes.c_double),
                ("y", ctypes.c_double), ("z", ctypes.c_double)]

    @staticmethod
    def type_name() -> str:
        return "recd_test::Pose"


class Stamp(ctypes.Structure):
    _fields_ = [("stamp_ns", ctypes.c_uint64), ("frame", ctypes.c_uint32),
                ("flags", ctypes.c_uint32)]

    @staticmethod
    def type_name() -> str:
        return "recd_test::Stamp"


def digest(header: Stamp, payload: Pose) -> str:
    return hashlib.sha256(bytes(header) + bytes(payload)).hexdigest()


def open_service(prefix: str, name: str, buffer=None):
    """The service `name` (created with subscriber_max_buffer_size `buffer` where given)."""
    config = iox2.config.default()
    config.global_cfg.prefix = iox2.FileName.new(prefix)
    node = iox2.NodeBuilder.new().config(config).create(iox2.ServiceType.Ipc)
    builder = (node.service_builder(iox2.ServiceName.new(name))
               .publish_subscribe(Pose).user_header(Stamp))
    if buffer:
        builder = builder.subscriber_max_buffer_size(buffer)
    return node, builder.open_or_create()


def publish(args) -> int:
    node, service = open_service(args.prefix, args.service, args.buffer)
    publisher = service.publisher_builder().create()
    deadline = time.monotonic() + args.wait
    while service.dynamic_config.number_of_subscribers == 0:
        if time.monotonic() > deadline:
            emit({"done": True, "sent": 0, "matched": False})
            return 3
        time.sleep(0.01)
    period = 1.0 / args.rate
    started = time.monotonic()
    for i in range(args.count):
        sample = publisher.loan_uninit()
        header = sample.user_header().contents
        header.stamp_ns = time.time_ns()
        header.frame = i * 7
        header.flags = 0xA5A5_0000 | i
        payload = Pose(seq=i, x=i * 0.5, y=-i * 0.25, z=1.0 / (i + 1))
        sha = digest(header, payload)
        sample.write_payload(payload).send()
        emit({"i": i, "sha256": sha})
        delay = started + (i + 1) * period - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    # Let the recorder take the last samples before the publisher goes.
    time.sleep(args.linger)
    emit({"done": True, "sent": args.count, "matched": True})
    del publisher, service, node
    return 0


def subscribe(args) -> int:
    node, service = open_service(args.prefix, args.service, args.buffer)
    subscriber = service.subscriber_builder().create()
    emit({"ready": True})

    def take():
        sample = subscriber.receive()
        return [] if sample is None else [sample]

    received = 0
    for sample in receive(take, args.count, args.idle, args.timeout):
        received += 1
        sha = digest(sample.user_header().contents, sample.payload().contents)
        emit({"t": time.monotonic(), "sha256": sha})
        sample.delete()
    emit({"done": True, "received": received})
    del subscriber, service, node
    return 0


def main(argv=None) -> int:
    iox2.set_log_level(iox2.LogLevel.Error)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["publish", "subscribe"])
    ap.add_argument("--prefix", required=True, help="iceoryx2 global.prefix (the test's domain)")
    ap.add_argument("--service", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--wait", type=float, default=20.0)
    ap.add_argument("--linger", type=float, default=0.5)
    ap.add_argument("--idle", type=float, default=3.0)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--buffer", type=int, help="subscriber_max_buffer_size of the service")
    args = ap.parse_args(argv)
    return publish(args) if args.mode == "publish" else subscribe(args)


if __name__ == "__main__":
    sys.exit(main())
