#!/usr/bin/env python3
"""An iceoryx2 (Python bindings) publisher of several topics at a steady rate, with scripted
disturbances, for the health tests: shared memory none of us wrote, iceoryx2's defaults but
the queue depth where --buffer N sets it (subscriber_max_buffer_size, as an integrator
configures a recorded service).

    shm_health.py --prefix P --services a,b,c --rate 50 --duration 5 \
        [--silence b:2.0:0.7] [--slow c:1.5:2.0] [--buffer 16]

Each service carries `recd_test::Pose` with user header `recd_test::Stamp`, as shm_pubsub.py.
`--silence S:AT:FOR` publishes nothing on S from AT s after the start for FOR s; `--slow
S:AT:FOR` publishes S at half the rate over that span. Ticks keep an absolute schedule, and
ticks a stalled process missed are skipped, not sent in a burst (script_io.Ticks). The
publisher waits (up to --wait s) for a subscriber on every service, publishes, and ends with
one JSON line: {"done": true, "sent": {service: n}, "silences": [{"service": S,
"last_before_ns": .., "first_after_ns": ..}], "slow": [{"service": S, "from_ns": .., "to_ns":
..}], "skipped": ticks}, times CLOCK_REALTIME ns as recd stamps.
"""

import argparse
import sys
import time

import iceoryx2 as iox2

from script_io import Ticks, emit
from shm_pubsub import Pose, Stamp, open_service


def span(text: str):
    service, at, length = text.rsplit(":", 2)
    return service, float(at), float(length)


def main(argv=None) -> int:
    iox2.set_log_level(iox2.LogLevel.Error)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--services", required=True, help="comma-separated service names")
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--duration", type=float, required=True)
    ap.add_argument("--silence", type=span, action="append", default=[])
    ap.add_argument("--slow", type=span, action="append", default=[])
    ap.add_argument("--wait", type=float, default=20.0)
    ap.add_argument("--linger", type=float, default=0.5)
    ap.add_argument("--buffer", type=int, help="subscriber_max_buffer_size of the services")
    args = ap.parse_args(argv)

    names = args.services.split(",")
    ports = []
    for name in names:
        node, service = open_service(args.prefix, name, args.buffer)
        ports.append((name, node, service, service.publisher_builder().create()))
    deadline = time.monotonic() + args.wait
    while any(p[2].dynamic_config.number_of_subscribers == 0 for p in ports):
        if time.monotonic() > deadline:
            emit({"done": True, "sent": {}, "matched": False})
            return 3
        time.sleep(0.01)

    sent = {name: 0 for name in names}
    silences = {s: {"service": s, "last_before_ns": None, "first_after_ns": None}
                for s, _, _ in args.silence}
    slow = [{"service": s, "from_ns": None, "to_ns": None} for s, _, _ in args.slow]
    ticks = Ticks(args.rate)
    for tick in ticks:
        elapsed = ticks.elapsed()
        if elapsed >= args.duration:
            break
        for name, _, _, publisher in ports:
            silent = any(s == name and at <= elapsed < at + length for s, at, length in args.silence)
            halved = [i for i, (s, at, length) in enumerate(args.slow)
                      if s == name and at <= elapsed < at + length]
            if silent or (halved and tick % 2 == 1):
                continue
            sample = publisher.loan_uninit()
            now_ns = time.time_ns()
            header = sample.user_header().contents
            header.stamp_ns = now_ns
            header.frame = sent[name]
            header.flags = 0
            sample.write_payload(Pose(seq=sent[name], x=0.0, y=0.0, z=0.0)).send()
            sent[name] += 1
            for i in halved:
                slow[i]["from_ns"] = slow[i]["from_ns"] or now_ns
                slow[i]["to_ns"] = now_ns
            record = silences.get(name)
            if record is not None:
                at = next(at for s, at, _ in args.silence if s == name)
                if elapsed < at:
                    record["last_before_ns"] = now_ns
                elif record["first_after_ns"] is None:
                    record["first_after_ns"] = now_ns
    time.sleep(args.linger)
    emit({"done": True, "sent": sent, "matched": True, "silences": list(silences.values()),
          "slow": slow, "skipped": ticks.skipped})
    del ports
    return 0


if __name__ == "__main__":
    sys.exit(main())
