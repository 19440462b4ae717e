#!/usr/bin/env python3
"""An iceoryx2 (Python bindings) subscriber of byte-slice services the playback tests spawn: a
subscriber none of us wrote, of the services shm_camera.py publishes (a slice of u8, no user
header), with iceoryx2's default service settings (2 buffered and 2 borrowed samples per
subscriber: nothing is set but the payload type).

    shm_slice_subscribe.py --prefix P --service S [--service S2 ...] --count N
                           [--idle 3] [--timeout 60] [--realtime PRIORITY]

It opens (or creates) every service and subscribes, prints {"ready": true}, then polls the
subscribers in turn and prints ONE JSON line per sample, in the order received:

    {"service": "cam/camera/0", "t": 12.345678, "index": 17, "bytes": 6220800, "sha256": "<hex>"}

"t" is the arrival time (time.monotonic(), seconds, taken as the sample is received); "index"
the sample's first 8 bytes (little-endian u64, shm_camera.py's frame index); "bytes" and
"sha256" the payload's length and digest. The digest is computed on the sample in place
(no copy: on a 2-core machine, copying 6 MB frames in Python costs more than the sender
it measures) before the sample is released; a camera's next frame comes a frame period
later, and the arrival time is taken before hashing. It ends after --count samples in all,
--idle seconds without one after the first, or --timeout, with
{"done": true, "received": {service: n}}.
With --realtime it runs SCHED_FIFO at that priority, as an ECU's consumers would, so that the
arrival times measure the sender rather than this process's turn on a busy machine.
"""

import argparse
import ctypes
import hashlib
import os
import sys
import time

import iceoryx2 as iox2

from script_io import emit


def main(argv=None) -> int:
    iox2.set_log_level(iox2.LogLevel.Error)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefix", required=True, help="iceoryx2 global.prefix (the test's domain)")
    ap.add_argument("--service", action="append", required=True, help="repeatable")
    ap.add_argument("--count", type=int, required=True, help="samples expected in all")
    ap.add_argument("--idle", type=float, default=3.0)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--realtime", type=int, default=0,
                    help="run SCHED_FIFO at this priority (0: as started)")
    args = ap.parse_args(argv)
    if args.realtime > 0:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.realtime))

    config = iox2.config.default()
    config.global_cfg.prefix = iox2.FileName.new(args.prefix)
    node = iox2.NodeBuilder.new().config(config).create(iox2.ServiceType.Ipc)
    services = []
    subscribers = []
    for name in args.service:
        service = (node.service_builder(iox2.ServiceName.new(name))
                   .publish_subscribe(iox2.Slice[ctypes.c_uint8]).open_or_create())
        services.append(service)
        subscribers.append((name, service.subscriber_builder().create()))
    emit({"ready": True})

    received = {name: 0 for name in args.service}
    total = 0
    monotonic = time.monotonic
    started = monotonic()
    last = None
    while total < args.count:
        now = monotonic()
        if now - started > args.timeout or (last is not None and now - last > args.idle):
            break
        got = False
        for name, subscriber in subscribers:
            sample = subscriber.receive() if total < args.count else None
            while sample is not None:
                t = monotonic()
                got = True
                view = sample.payload().as_memory_view()
                line = {"service": name, "t": t,
                        "index": int.from_bytes(view[:8], "little") if len(view) >= 8 else None,
                        "bytes": len(view), "sha256": hashlib.sha256(view).hexdigest()}
                del view
                sample.delete()
                emit(line)
                received[name] += 1
                total += 1
                last = t
                sample = subscriber.receive() if total < args.count else None
        if not got:
            time.sleep(0.0005)
    emit({"done": True, "received": received})
    del subscribers, services, node
    return 0


if __name__ == "__main__":
    sys.exit(main())
