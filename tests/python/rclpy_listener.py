#!/usr/bin/env python3
"""A real ROS 2 listener: an rclpy node (over rmw_fastrtps_cpp, the wheels of
requirements.txt) subscribing to one topic, as a user's node that runs before a replay.

Prints on stdout ONE JSON line per message received and a final line:

    {"ready": true}                                   subscribed
    {"topic": "/chatter", "message": {"data": "hello 0"}}
    {"publishers": [{"node_name": "rec_play", "node_namespace": "/",
                     "topic_type": "std_msgs/msg/String", "topic_type_hash": "RIHS01_...",
                     "gid": "01.0f..."}]}             ROS 2's graph of the topic's publishers
    {"done": true, "received": 29}

The graph is asked for the topic's publishers while messages arrive (rclpy's
`get_publishers_info_by_topic`) until one with a known node name is seen (rmw names a
publisher's node from `ros_discovery_info`, which may come just after its first
message); the last answer is printed once, before the final line.

It stops after --count messages, --idle seconds without one after the first, or
--timeout seconds in all. The subscription is reliable, volatile, keep last --depth.
"""

import argparse
import importlib
import os
import time

os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")

import rclpy  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy, DurabilityPolicy  # noqa: E402

from script_io import emit  # noqa: E402

UNKNOWN_NODE = "_NODE_NAME_UNKNOWN_"


def message_type(name: str):
    """The Python class of `pkg/msg/Name`."""
    package, kind, type_name = name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), type_name)


def as_json(value):
    """A ROS message as plain JSON values, field by field."""
    if hasattr(value, "get_fields_and_field_types"):
        return {field: as_json(getattr(value, field)) for field in value.get_fields_and_field_types()}
    if isinstance(value, (list, tuple)):
        return [as_json(item) for item in value]
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def publishers(node, topic: str):
    return [
        {
            "node_name": info.node_name,
            "node_namespace": info.node_namespace,
            "topic_type": info.topic_type,
            "topic_type_hash": str(info.topic_type_hash),
            "gid": ".".join(f"{b:02x}" for b in info.endpoint_gid),
        }
        for info in node.get_publishers_info_by_topic(topic)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--topic", default="/chatter")
    parser.add_argument("--type", default="std_msgs/msg/String")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--timeout", type=float, default=90.0)
    args = parser.parse_args()

    rclpy.init(domain_id=args.domain)
    node = rclpy.create_node("listener")
    received = []
    qos = QoSProfile(
        depth=args.depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
    node.create_subscription(message_type(args.type), args.topic, received.append, qos)
    emit({"ready": True})

    started = time.monotonic()
    last = None
    printed = 0
    graph = []
    while printed < args.count:
        now = time.monotonic()
        if now - started > args.timeout or (last is not None and now - last > args.idle):
            break
        rclpy.spin_once(node, timeout_sec=0.05)
        if len(received) > printed:
            last = time.monotonic()
            if not any(p["node_name"] != UNKNOWN_NODE for p in graph):
                graph = publishers(node, args.topic)
        for message in received[printed:]:
            emit({"topic": args.topic, "message": as_json(message)})
        printed = len(received)
    # The node may be announced just after the messages: ask a little longer.
    deadline = time.monotonic() + 5.0
    while printed and time.monotonic() < deadline:
        if any(p["node_name"] != UNKNOWN_NODE for p in graph):
            break
        rclpy.spin_once(node, timeout_sec=0.05)
        graph = publishers(node, args.topic) or graph
    emit({"publishers": graph})
    emit({"done": True, "received": printed})
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
