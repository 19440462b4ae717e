#!/usr/bin/env python3
"""A ROS 2 node on rmw_zenoh, played with Python `eclipse-zenoh` (a Zenoh none of us wrote),
and the Zenoh router it talks through: the Zenoh source's end-to-end tests spawn it.

It does what rmw_zenoh (Jazzy 0.2.4+, Kilted, Rolling) does for a publisher:
  - a liveliness token  @ros2_lv/<domain>/<zid>/<node id>/<entity id>/MP/%/%/<node>/
    <topic, '/' as '%'>/<type>/<type hash>/<qos>
  - samples on the key  <domain>/<topic without its leading '/'>/<type>/<type hash>
  - each with the 33-byte attachment: int64 LE sequence number (from 1), int64 LE source
    time (ns since the epoch), 0x10, the 16-byte GID
  - a transient-local publisher is a zenoh-ext advanced publisher with a cache of its last
    `depth` samples and publisher detection, as rmw_zenoh's are.
The GID is any 16 bytes of the publisher (rmw_zenoh hashes its token); recd counts by it.

The session is a Zenoh router listening on --listen, so that recd can connect to it (no
zenohd needed), or a client of the router at --connect (a node that restarts while recd
stays connected to the router). --zid fixes the session's Zenoh id (as ACL setups do), so
that a restarted node keeps its publishers' GIDs. Prints on stdout ONE JSON line per sample put and a final line:

    {"ready": true, "zid": "..."}            tokens declared, --before samples put
    {"topic": "/chatter", "seq": 3, "hex": "<payload hex>", "t_ns": <ns>}
    {"done": true, "sent": 10, "matched": true}

Kinds: string = std_msgs/msg/String "hello <seq>"; blob = recd_test/msg/Blob {int32 seq,
uint8[] data}, data[j] = (7*j + seq) & 0xff, --size bytes.

--token-after N declares the token only after N samples were put; --skip N leaves
sequence number N out once (it is never sent: one lost); --restart-after M
declares the publisher anew after M samples (a new entity and GID, numbers from 1 again);
--repeat N puts sample N a second time, attachment and all (a sample that arrives twice).
--serve-types FILE serves ~/get_type_description as rmw_zenoh's service servers do: a
queryable on <domain>/<node>/get_type_description/<service type>/<--service-hash> and its
SS token, declared before the publisher; each query is printed
({"query": {"payload_hex": ..., "attachment_hex": ...}}) and answered with the bytes FILE
holds in hex (a real node's reply, from type_description_reply.py) and an attachment with
the query's sequence number.
Every wait is bounded: --wait-match + count/rate + --linger.
"""

import argparse
import hashlib
import os
import struct
import sys
import time

import zenoh
import zenoh.ext

from script_io import emit

TYPES = {
    "string": ("std_msgs::msg::dds_::String_",
               "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"),
    "blob": ("recd_test::msg::dds_::Blob_",
             "RIHS01_" + hashlib.sha256(b"int32 seq\nuint8[] data").hexdigest()),
}


def cdr(kind: str, seq: int, size: int) -> bytes:
    """The complete CDR (encapsulation header first) an rmw_zenoh node puts."""
    if kind == "string":
        text = f"hello {seq}".encode() + b"\0"
        body = struct.pack("<I", len(text)) + text
    else:
        data = bytes((7 * j + seq) & 0xFF for j in range(size))
        body = struct.pack("<iI", seq, len(data)) + data
    body = body.ljust((len(body) + 3) & ~3, b"\0")
    return b"\x00\x01\x00\x00" + body


def mangle(name: str) -> str:
    return name.replace("/", "%") if name else "%"


class Publisher:
    """One rmw_zenoh publisher: its token, its (advanced) publisher and its numbers."""

    def __init__(self, session, args, entity_id: int, token: bool = True):
        type_name, type_hash = TYPES[args.kind]
        self.key = f"{args.domain}/{args.topic.lstrip('/')}/{type_name}/{type_hash}"
        qos = (":1:" if args.transient_local else "::") + f",{args.depth}:,:,:,,"
        if args.best_effort:
            qos = "2" + qos
        self.token_key = (f"@ros2_lv/{args.domain}/{session.zid()}/0/{entity_id}/MP/%/%/"
                          f"{args.node}/{mangle(args.topic)}/{type_name}/{type_hash}/{qos}")
        self.gid = hashlib.blake2b(self.token_key.encode(), digest_size=16).digest()
        reliability = (zenoh.Reliability.BEST_EFFORT if args.best_effort
                       else zenoh.Reliability.RELIABLE)
        if args.transient_local:
            self.publisher = zenoh.ext.declare_advanced_publisher(
                session, self.key, cache=zenoh.ext.CacheConfig(max_samples=args.depth),
                publisher_detection=True)
            self.plain = None
        else:
            self.publisher = session.declare_publisher(
                self.key, reliability=reliability,
                congestion_control=zenoh.CongestionControl.DROP)
            self.plain = self.publisher
        self.session = session
        self.token = session.liveliness().declare_token(self.token_key) if token else None
        self.seq = 0

    def declare_token(self):
        if self.token is None:
            self.token = self.session.liveliness().declare_token(self.token_key)

    def put(self, payload: bytes, again: bool = False) -> int:
        self.seq += 1
        attachment = struct.pack("<qqB16s", self.seq, time.time_ns(), 16, self.gid)
        self.publisher.put(payload, attachment=attachment)
        if again:
            self.publisher.put(payload, attachment=attachment)
        return self.seq

    def matched(self) -> bool:
        return self.plain is None or self.plain.matching_status.matching

    def close(self):
        if self.token is not None:
            self.token.undeclare()
        self.publisher.undeclare()


class TypeService:
    """~/get_type_description of the node, served as rmw_zenoh serves a service."""

    SERVICE_TYPE = "type_description_interfaces::srv::dds_::GetTypeDescription_"

    def __init__(self, session, args):
        with open(args.serve_types) as f:
            self.reply = bytes.fromhex(f.read().strip())
        self.gid = hashlib.blake2b(b"type service", digest_size=16).digest()
        service = f"{args.node}/get_type_description"
        self.key = f"{args.domain}/{service}/{self.SERVICE_TYPE}/{args.service_hash}"
        self.token = session.liveliness().declare_token(
            f"@ros2_lv/{args.domain}/{session.zid()}/0/50/SS/%/%/{args.node}/"
            f"{mangle('/' + service)}/{self.SERVICE_TYPE}/{args.service_hash}/::,10:,:,:,,")
        self.queryable = session.declare_queryable(self.key, self.answer)

    def answer(self, query):
        payload = bytes(query.payload.to_bytes()) if query.payload is not None else b""
        attachment = bytes(query.attachment.to_bytes()) if query.attachment is not None else b""
        emit({"query": {"key": str(query.key_expr), "payload_hex": payload.hex(),
                        "attachment_hex": attachment.hex()}})
        sequence = struct.unpack_from("<q", attachment)[0] if len(attachment) >= 8 else 0
        query.reply(self.key, self.reply,
                    attachment=struct.pack("<qqB16s", sequence, time.time_ns(), 16, self.gid))

    def close(self):
        self.queryable.undeclare()
        self.token.undeclare()


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--listen", help="router endpoint, e.g. tcp/127.0.0.1:7447")
    where.add_argument("--connect", help="a router's endpoint to connect to as its client")
    ap.add_argument("--zid", help="the session's Zenoh id (hex), kept across restarts")
    ap.add_argument("--repeat", type=int, action="append", default=[],
                    help="put this sequence number twice")
    ap.add_argument("--domain", type=int, required=True)
    ap.add_argument("--topic", default="/chatter")
    ap.add_argument("--node", default="talker")
    ap.add_argument("--kind", choices=sorted(TYPES), default="string")
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--count", type=int, default=10, help="samples after a subscriber matched")
    ap.add_argument("--before", type=int, default=0,
                    help="samples put before waiting for a subscriber (a late joiner's history)")
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--transient-local", action="store_true")
    ap.add_argument("--best-effort", action="store_true")
    ap.add_argument("--skip", type=int, action="append", default=[])
    ap.add_argument("--restart-after", type=int)
    ap.add_argument("--token-after", type=int,
                    help="declare the liveliness token only after this many samples (a "
                         "subscriber sees samples of a topic it has no token of yet)")
    ap.add_argument("--odd-token", action="store_true",
                    help="also declare a token of an entity kind rmw_zenoh never wrote (XX)")
    ap.add_argument("--wait-match", type=float, default=30.0)
    ap.add_argument("--linger", type=float, default=1.0)
    ap.add_argument("--serve-types", help="hex file of a GetTypeDescription reply to serve")
    ap.add_argument("--service-hash", default="RIHS01_" + "0" * 64,
                    help="GetTypeDescription's type hash, in the service's key")
    return ap.parse_args(argv)


def main(argv) -> int:
    args = parse_args(argv)
    config = zenoh.Config()
    if args.listen:
        config.insert_json5("mode", '"router"')
        config.insert_json5("listen/endpoints", f'["{args.listen}"]')
    else:
        config.insert_json5("mode", '"client"')
        config.insert_json5("connect/endpoints", f'["{args.connect}"]')
    if args.zid:
        config.insert_json5("id", f'"{args.zid}"')
    config.insert_json5("scouting/multicast/enabled", "false")
    config.insert_json5("timestamping/enabled", '{"router": true, "peer": true, "client": true}')
    session = zenoh.open(config)
    types = TypeService(session, args) if args.serve_types else None
    publisher = Publisher(session, args, entity_id=1, token=args.token_after is None)
    odd = None
    if args.odd_token:
        odd = session.liveliness().declare_token(
            f"@ros2_lv/{args.domain}/{session.zid()}/0/9/XX/%/%/{args.node}/%odd")
    sent = 0
    for _ in range(args.before):
        seq = publisher.put(cdr(args.kind, publisher.seq + 1, args.size))
        emit({"topic": args.topic, "seq": seq, "hex": cdr(args.kind, seq, args.size).hex(),
              "t_ns": time.time_ns(), "before": True})
        sent += 1
    emit({"ready": True, "zid": str(session.zid())})
    # A transient-local publisher's subscriber is seen by its first live sample; a plain one
    # by Zenoh's matching status.
    deadline = time.monotonic() + args.wait_match
    while not publisher.matched() and time.monotonic() < deadline:
        time.sleep(0.01)
    matched = publisher.matched()
    if os.environ.get("ZENOH_NODE_GO_FILE"):
        go = os.environ["ZENOH_NODE_GO_FILE"]
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.01)
    period = 1.0 / args.rate if args.rate > 0 else 0.0
    entity = 1
    for i in range(args.count):
        if args.token_after is not None and i == args.token_after:
            publisher.declare_token()
        if args.restart_after is not None and i == args.restart_after:
            publisher.close()
            entity += 1
            publisher = Publisher(session, args, entity_id=entity)
            time.sleep(0.5)
        if publisher.seq + 1 in args.skip:
            args.skip.remove(publisher.seq + 1)
            publisher.seq += 1
        seq = publisher.seq + 1
        payload = cdr(args.kind, seq, args.size)
        publisher.put(payload, again=seq in args.repeat)
        emit({"topic": args.topic, "seq": seq, "hex": payload.hex(), "t_ns": time.time_ns(),
              "entity": entity})
        sent += 1
        if period:
            time.sleep(period)
    time.sleep(args.linger)
    publisher.close()
    if types is not None:
        types.close()
    if odd is not None:
        odd.undeclare()
    emit({"done": True, "sent": sent, "matched": matched})
    session.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
