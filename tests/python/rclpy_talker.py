#!/usr/bin/env python3
"""A real ROS 2 talker: an rclpy node (over rmw_fastrtps_cpp, the wheels of requirements.txt)
publishing std_msgs/String "hello <i>" on one topic, as a user's node that recd records.

(Reconstructed: a first version of this script was overwritten by mistake while another
script was written; it keeps the interface daemon/tests/play_rclpy.rs uses.)

Prints on stdout ONE JSON line per message published and a final line:

    {"topic": "/chatter", "i": 0, "data": "hello 0"}
    {"done": true, "matched": true, "sent": 29}

It waits up to --wait-match seconds for a subscription to match before the first message
("matched" says whether one did), publishes --count messages at --rate per second, then
spins --linger seconds so that a reliable subscriber gets the last ones. The publisher is
reliable, volatile, keep last --depth.
"""

import argparse
import os
import time

os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")

import rclpy  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy, DurabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402

from script_io import Ticks, emit  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--topic", default="/chatter")
    parser.add_argument("--node", default="talker")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--wait-match", type=float, default=30.0)
    parser.add_argument("--linger", type=float, default=2.0)
    args = parser.parse_args()

    rclpy.init(domain_id=args.domain)
    node = rclpy.create_node(args.node)
    qos = QoSProfile(
        depth=args.depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
    publisher = node.create_publisher(String, args.topic, qos)

    deadline = time.monotonic() + args.wait_match
    while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
        rclpy.spin_once(node, timeout_sec=0.05)
    matched = publisher.get_subscription_count() > 0

    sent = 0
    for i in Ticks(args.rate, args.count):
        data = f"hello {i}"
        publisher.publish(String(data=data))
        sent += 1
        emit({"topic": args.topic, "i": i, "data": data})
        rclpy.spin_once(node, timeout_sec=0)
    until = time.monotonic() + args.linger
    while time.monotonic() < until:
        rclpy.spin_once(node, timeout_sec=0.05)
    emit({"done": True, "matched": matched, "sent": sent})
    node.destroy_node()
    rclpy.try_shutdown()


if __name__ == "__main__":
    main()
