#!/usr/bin/env python3
"""A Zenoh router (Python `eclipse-zenoh`, none of us wrote it) that the Zenoh playback
tests spawn: it listens where a ROS 2 node's rmw_zenoh router would, subscribes to a key
expression as an rmw_zenoh subscription does, and watches rmw_zenoh's liveliness tokens
(`@ros2_lv/**`), as a node's graph cache does.

It runs in router mode, so no zenohd is needed: `rec play --zenoh-connect ENDPOINT` (a
peer) connects to it. It prints, on stdout, {"ready": true} once it listens and its
subscribers exist, then one JSON line per data sample and per liveliness change, in the
order they came, and a final line:

    {"sample": 1, "key": "5/chatter/std_msgs::msg::dds_::String_/RIHS01_…",
     "payload": "000100000600…", "attachment": "0100000000000000…", "kind": "put"}
    {"token": "@ros2_lv/5/<zid>/0/1/MP/%/%/rec_play/%chatter/…", "kind": "put"}
    {"done": true, "samples": 5, "timed_out": false}

Payload and attachment are hex (the attachment null when a sample has none). It ends
once --count samples came and every token it saw put was deleted again (or --linger
seconds after the last sample, whichever is first), or after --timeout seconds in all.
"""

import argparse
import json
import time

import zenoh

from script_io import emit


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--listen", required=True, help="endpoint, e.g. tcp/127.0.0.1:7447")
    ap.add_argument("--key", default="**", help="key expression subscribed to")
    ap.add_argument("--count", type=int, required=True, help="samples to wait for")
    ap.add_argument("--linger", type=float, default=3.0,
                    help="seconds after the last sample to wait for tokens to go")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args(argv)

    config = zenoh.Config()
    config.insert_json5("mode", '"router"')
    config.insert_json5("listen/endpoints", json.dumps([args.listen]))
    config.insert_json5("connect/endpoints", "[]")
    config.insert_json5("scouting/multicast/enabled", "false")
    started = time.monotonic()
    with zenoh.open(config) as session:
        samples = session.declare_subscriber(args.key)
        tokens = session.liveliness().declare_subscriber("@ros2_lv/**", history=True)
        emit({"ready": True})

        received = 0
        alive = set()
        last_sample = None
        timed_out = False
        while True:
            now = time.monotonic()
            if now - started > args.timeout:
                timed_out = True
                break
            if received >= args.count and (
                not alive or now - last_sample > args.linger
            ):
                break
            busy = False
            sample = samples.try_recv()
            if sample is not None:
                busy = True
                received += 1
                last_sample = time.monotonic()
                attachment = sample.attachment
                emit({
                    "sample": received,
                    "key": str(sample.key_expr),
                    "payload": sample.payload.to_bytes().hex(),
                    "attachment": None if attachment is None else attachment.to_bytes().hex(),
                    "kind": str(sample.kind).rsplit(".", 1)[-1].lower(),
                })
            token = tokens.try_recv()
            if token is not None:
                busy = True
                key = str(token.key_expr)
                kind = str(token.kind).rsplit(".", 1)[-1].lower()
                if kind == "put":
                    alive.add(key)
                else:
                    alive.discard(key)
                emit({"token": key, "kind": kind})
            if not busy:
                time.sleep(0.001)
        emit({"done": True, "samples": received, "timed_out": timed_out})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
