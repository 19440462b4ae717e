#!/usr/bin/env python3
"""What a real ROS 2 node answers to ~/get_type_description, as bytes: an rclpy node
(rmw_fastrtps_cpp, PyPI's Kilted wheels) with a publisher of std_msgs/String asks its own
type description service for the type (sources included), and serializes the response as
rmw does (CDR, encapsulation header first). The Zenoh tests serve these bytes from a node
played with eclipse-zenoh, as rmw_zenoh's service server would send them.

    type_description_reply.py --domain 0

Prints ONE JSON line: {"done": true, "type_hash": "RIHS01_...", "service_hash": "RIHS01_...",
"reply_hex": "..."}; the service hash is the one the wheel's GetTypeDescription.json gives.
Every wait is bounded (--wait seconds).
"""

import argparse
import json
import os
import sys

os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")

import rclpy  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from type_description_interfaces.srv import GetTypeDescription  # noqa: E402

from script_io import emit  # noqa: E402

STRING_HASH = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"


def service_hash() -> str:
    """The RIHS01 hash of type_description_interfaces/srv/GetTypeDescription, as its wheel
    ships it."""
    share = os.path.join(sys.prefix, "share", "type_description_interfaces", "srv")
    with open(os.path.join(share, "GetTypeDescription.json")) as f:
        hashes = json.load(f)["type_hashes"]
    return next(h["hash_string"] for h in hashes
                if h["type_name"] == "type_description_interfaces/srv/GetTypeDescription")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--wait", type=float, default=30.0)
    args = parser.parse_args()
    rclpy.init(domain_id=args.domain)
    node = Node("describer")
    node.create_publisher(String, "/described", 10)
    client = node.create_client(GetTypeDescription, "/describer/get_type_description")
    if not client.wait_for_service(timeout_sec=args.wait):
        emit({"done": False, "why": "the node's own service did not show up"})
        return 1
    request = GetTypeDescription.Request(
        type_name="std_msgs/msg/String", type_hash=STRING_HASH, include_type_sources=True)
    future = client.call_async(request)
    rclpy.spin_until_future_complete(node, future, timeout_sec=args.wait)
    response = future.result()
    if response is None or not response.successful:
        emit({"done": False, "why": getattr(response, "failure_reason", "no answer")})
        return 1
    emit({"done": True, "type_hash": STRING_HASH, "service_hash": service_hash(),
          "reply_hex": serialize_message(response).hex()})
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
