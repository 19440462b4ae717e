#!/usr/bin/env python3
"""An iceoryx2 (Python bindings) publisher of N topics the busy-machine tests spawn: cameras
(or small raw topics) none of us wrote, with iceoryx2's default service settings (2 buffered
and 2 borrowed samples per subscriber: nothing is set but the payload type), or with the
queue depth an integrator configures for a recorded service (--buffer N sets
subscriber_max_buffer_size).

Each service `<name-prefix><stem>/<i>` carries a slice of u8 of --size bytes (6220800 by
default: a FullHD RGB frame). A sample's first 8 bytes are its frame index on that service
(little-endian u64, counting from 0 without gaps: the n-th sample sent carries n); the rest is
left as loaned (not written: the test checks counts and indices, and a Python loop filling
6 MB per frame would be the test's bottleneck), unless --fill TEXT asks for it to be TEXT
repeated (a marker the sealing tests look for on the raw disk).

    shm_camera.py --prefix P [--name-prefix busy/] [--stem camera] [--topics 8]
                  [--size 6220800] [--fps 30] [--count 120] [--wait 20] [--linger 0.5]
                  [--realtime PRIORITY] [--buffer N] [--fill TEXT]

All topics are published from this one process, in one loop: each tick (on an absolute
schedule, tick k at start + k / fps) publishes one sample on every topic. When the loop
falls behind by a whole period (Python cannot keep up, or the machine is busy), the ticks
already past are skipped rather than sent in a burst, so it sends fewer; --count is the
number of ticks scheduled, and the report says what was really sent per service.

The publisher waits (up to --wait seconds) for a subscriber on every service, publishes,
waits --linger seconds (so that the recorder takes the last samples before the services
go), and prints one JSON line. With --realtime it runs SCHED_FIFO at that priority, as an
ECU's sensor drivers do, so that other processes cannot delay its ticks into bursts:
{"done": true, "matched": true, "sent": {service: count}, "ticks": T, "skipped": S,
 "loan_errors": E, "elapsed_s": seconds, "rate_hz": samples per second in all}.
"""

import argparse
import ctypes
import os
import sys
import time

import iceoryx2 as iox2

from script_io import Ticks, emit


def main(argv=None) -> int:
    iox2.set_log_level(iox2.LogLevel.Error)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefix", required=True, help="iceoryx2 global.prefix (the test's domain)")
    ap.add_argument("--name-prefix", default="", help="prepended to every service name")
    ap.add_argument("--stem", default="camera", help="services are <name-prefix><stem>/<i>")
    ap.add_argument("--topics", type=int, default=8)
    ap.add_argument("--size", type=int, default=6220800, help="payload bytes (>= 8)")
    ap.add_argument("--fps", type=float, default=30.0, help="ticks per second")
    ap.add_argument("--count", type=int, default=120, help="ticks scheduled")
    ap.add_argument("--wait", type=float, default=20.0, help="seconds to wait for subscribers")
    ap.add_argument("--linger", type=float, default=0.5)
    ap.add_argument("--realtime", type=int, default=0,
                    help="run SCHED_FIFO at this priority (0: as started)")
    ap.add_argument("--buffer", type=int,
                    help="subscriber_max_buffer_size of the services (iceoryx2's 2 if left out)")
    ap.add_argument("--fill", help="fill each sample after its index with this text, repeated")
    args = ap.parse_args(argv)
    if args.realtime > 0:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(args.realtime))
    if args.size < 8:
        ap.error("--size must hold the 8-byte frame index")

    config = iox2.config.default()
    config.global_cfg.prefix = iox2.FileName.new(args.prefix)
    node = iox2.NodeBuilder.new().config(config).create(iox2.ServiceType.Ipc)
    names = [f"{args.name_prefix}{args.stem}/{i}" for i in range(args.topics)]
    services = []
    publishers = []
    for name in names:
        builder = (node.service_builder(iox2.ServiceName.new(name))
                   .publish_subscribe(iox2.Slice[ctypes.c_uint8]))
        if args.buffer:
            builder = builder.subscriber_max_buffer_size(args.buffer)
        service = builder.open_or_create()
        services.append(service)
        publishers.append(service.publisher_builder().initial_max_slice_len(args.size).create())

    deadline = time.monotonic() + args.wait
    while any(s.dynamic_config.number_of_subscribers == 0 for s in services):
        if time.monotonic() > deadline:
            emit({"done": True, "matched": False, "sent": {name: 0 for name in names}})
            return 3
        time.sleep(0.01)

    size = args.size
    fill = None
    if args.fill:
        text = args.fill.encode()
        fill = (text * ((size - 8) // len(text) + 1))[:size - 8]
    sent = [0] * len(publishers)
    loan_errors = 0
    ticks = Ticks(args.fps, args.count)
    for _ in ticks:
        for t, publisher in enumerate(publishers):
            try:
                sample = publisher.loan_slice_uninit(size)
            except Exception:  # LoanError: every sample is lent out; this one is not sent
                loan_errors += 1
                continue
            ctypes.c_uint64.from_address(sample.payload_ptr).value = sent[t]
            if fill is not None:
                ctypes.memmove(sample.payload_ptr + 8, fill, len(fill))
            sample.assume_init().send()
            sent[t] += 1
    elapsed = ticks.elapsed()
    skipped = ticks.skipped
    # Let the recorder take the last samples before the publishers go.
    time.sleep(args.linger)
    emit({
        "done": True,
        "matched": True,
        "sent": dict(zip(names, sent)),
        "ticks": args.count - skipped,
        "skipped": skipped,
        "loan_errors": loan_errors,
        "elapsed_s": round(elapsed, 3),
        "rate_hz": round(sum(sent) / elapsed, 1) if elapsed > 0 else None,
    })
    del publishers, services, node
    return 0


if __name__ == "__main__":
    sys.exit(main())
