#!/usr/bin/env python3
"""A real ROS 2 node (rclpy over rmw_fastrtps_cpp, from PyPI's Kilted wheels) that the
end-to-end tests record: it publishes some of std_msgs/String, geometry_msgs/PoseStamped and
sensor_msgs/Imu, and serves what every rclpy node serves (~/get_type_description,
parameters) while its executor spins.

    rclpy_types_node.py --domain 0 --node talker --topic /chatter:string --topic /pose:pose --topic /imu:imu \
        --count 40 --rate 20 --linger 2 [--no-spin] [--param name=value ...]

Prints ONE JSON line when its publishers exist ({"ready": true, "node": "/talker"}), one as it
starts publishing ({"publishing": true, "matched": true}) and a final one
({"done": true, "matched": true, "sent": {"/chatter": 40, ...}}): it waits up to
--wait-match seconds for every publisher to match a subscription before the first message
("matched" says whether they did). The Imu's linear_acceleration.x is
-9.5 in message --brake (default: the middle one) and 0.5 in the others.

--no-spin: the node never spins, so it never answers a service (a node that does not answer);
it publishes all the same.

--param name=value declares an integer, float or string parameter; --set name=value sets it
(after half the messages), so that a parameter event is published.

--set-when PATH sets the --set parameters when PATH holds a new text instead (again for each new
text), once a subscription of /parameter_events matched (printing {"set": [...],
"events_matched": true, "round": TEXT});
--until PATH keeps publishing past --count until PATH exists (at most --wait-until seconds):
the test says when.

RMW_IMPLEMENTATION is rmw_fastrtps_cpp unless set. Every wait is bounded: --wait-match + count/rate + --linger.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")

import rclpy  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from script_io import Ticks, emit  # noqa: E402


def message(kind, i, brake):
    if kind == "string":
        from std_msgs.msg import String

        return String(data=f"hello {i}")
    if kind == "pose":
        from geometry_msgs.msg import PoseStamped

        msg = PoseStamped()
        msg.header.frame_id = "map"
        msg.header.stamp.sec = i
        msg.pose.position.x = float(i)
        msg.pose.orientation.w = 1.0
        return msg
    if kind == "imu":
        from sensor_msgs.msg import Imu

        msg = Imu()
        msg.header.frame_id = "imu"
        msg.linear_acceleration.x = -9.5 if i == brake else 0.5
        return msg
    raise SystemExit(f"unknown kind {kind}")


def read_text(path):
    try:
        with open(path) as file:
            return file.read().strip()
    except FileNotFoundError:
        return ""


def message_type(kind):
    return type(message(kind, 0, -1))


def value(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--node", default="talker")
    parser.add_argument("--topic", action="append", default=[], help="NAME:KIND (string, pose, imu)")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--wait-match", type=float, default=30.0,
                        help="seconds to wait for every publisher to match a subscription")
    parser.add_argument("--linger", type=float, default=2.0, help="seconds spinning after the last")
    parser.add_argument("--brake", type=int, default=None)
    parser.add_argument("--no-spin", action="store_true")
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--set-when", default=None)
    parser.add_argument("--until", default=None)
    parser.add_argument("--wait-until", type=float, default=120.0)
    args = parser.parse_args()
    brake = args.count // 2 if args.brake is None else args.brake

    rclpy.init(domain_id=args.domain)
    node = Node(args.node)
    for pair in args.param:
        name, text = pair.split("=", 1)
        node.declare_parameter(name, value(text))
    publishers = []
    for spec in args.topic:
        name, kind = spec.rsplit(":", 1)
        publishers.append((name, kind, node.create_publisher(message_type(kind), name, 10)))
    emit({"ready": True, "node": node.get_fully_qualified_name()})

    def spin_for(seconds):
        until = time.monotonic() + seconds
        while time.monotonic() < until:
            if args.no_spin:
                time.sleep(0.01)
            else:
                rclpy.spin_once(node, timeout_sec=0.01)

    deadline = time.monotonic() + args.wait_match
    while time.monotonic() < deadline and any(
        p.get_subscription_count() == 0 for _, _, p in publishers
    ):
        spin_for(0.05)
    matched = all(p.get_subscription_count() > 0 for _, _, p in publishers)
    emit({"publishing": True, "matched": matched})
    sent = {name: 0 for name, _, _ in publishers}
    was_set = False
    set_round = ""
    until = time.monotonic() + args.wait_match + args.count / args.rate + args.wait_until
    for i in Ticks(args.rate, args.count if args.until is None else None):
        if i >= args.count and (os.path.exists(args.until) or time.monotonic() > until):
            break
        if args.set_when:
            # Each new content of the file asks for the --set parameters to be set (again).
            asked = read_text(args.set_when)
            due = asked not in ("", set_round)
            was_set = False if due else was_set
            set_round = asked if due else set_round
        else:
            due = i == args.count // 2
        if due and not was_set:
            was_set = True
            events_matched = True
            if args.set_when:
                # A change is only recorded by a recorder whose reader matched the node's
                # /parameter_events writer (volatile, as rclpy makes it): wait for it.
                events = node._parameter_event_publisher
                wait_until = time.monotonic() + args.wait_match
                while events.get_subscription_count() == 0 and time.monotonic() < wait_until:
                    spin_for(0.05)
                events_matched = events.get_subscription_count() > 0
            for pair in args.set:
                name, text = pair.split("=", 1)
                node.set_parameters([Parameter(name, value=value(text))])
            if args.set_when:
                emit({"set": args.set, "events_matched": events_matched, "round": set_round})
        for name, kind, publisher in publishers:
            publisher.publish(message(kind, i, brake))
            sent[name] += 1
        if not args.no_spin:
            rclpy.spin_once(node, timeout_sec=0)
    spin_for(args.linger)
    emit({"done": True, "matched": matched, "sent": sent})
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
