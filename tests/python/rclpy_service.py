#!/usr/bin/env python3
"""A real ROS 2 service and its client: rclpy nodes (over rmw_fastrtps_cpp, the wheels of
requirements.txt) of rcl_interfaces/srv/ListParameters (request: string[] prefixes, uint64
depth: the uint64 lies at another alignment inside an introspection event than in the
request alone), as a user's service that recd records (`rec start --services`) and that
`rec play --services-as-calls` calls again.

    rclpy_service.py server --domain D [--introspection] [--count N] [--idle S] [--timeout S]
        serves --service; prints {"ready": true} once serving, then per request received
        {"request": {"prefixes": [...], "depth": N}} and a final
        {"done": true, "received": N}. It stops after --count requests, --idle seconds
        without one after the first, or --timeout seconds in all.
    rclpy_service.py client --domain D --calls N [--introspection] [--start-after S]
        waits (up to --wait-service seconds) for the server and --start-after seconds
        more (time for a recorder to match its events' writer), then calls it N times, one
        call after the other, with request i: prefixes ["call<i>", "x" * i], depth
        1000 * i + 7; prints per call {"request": {...}, "answered": bool} and a final
        {"done": true, "matched": bool, "answered": N}.

--introspection turns service introspection on with CONTENTS (rcl publishes each request
and response on <service>/_service_event: REQUEST_SENT and RESPONSE_RECEIVED from the
client, REQUEST_RECEIVED and RESPONSE_SENT from the server). Every wait is bounded.
"""

import argparse
import os
import time

os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")

import rclpy  # noqa: E402
from rclpy.qos import qos_profile_system_default  # noqa: E402
from rclpy.service_introspection import ServiceIntrospectionState  # noqa: E402
from rcl_interfaces.srv import ListParameters  # noqa: E402

from script_io import emit  # noqa: E402


def request_json(request) -> dict:
    return {"prefixes": list(request.prefixes), "depth": int(request.depth)}


def introspect(node, endpoint) -> None:
    endpoint.configure_introspection(
        node.get_clock(), qos_profile_system_default, ServiceIntrospectionState.CONTENTS
    )


def serve(args) -> None:
    node = rclpy.create_node("calls_server")
    received = []

    def answer(request, response):
        received.append(request_json(request))
        response.result.names = [f"answer{len(received)}"]
        return response

    service = node.create_service(ListParameters, args.service, answer)
    if args.introspection:
        introspect(node, service)
    emit({"ready": True})
    started = time.monotonic()
    last = None
    printed = 0
    while printed < args.count:
        now = time.monotonic()
        if now - started > args.timeout or (last is not None and now - last > args.idle):
            break
        rclpy.spin_once(node, timeout_sec=0.05)
        for request in received[printed:]:
            last = time.monotonic()
            emit({"request": request})
        printed = len(received)
    # The last reply leaves while the node spins.
    until = time.monotonic() + 0.5
    while time.monotonic() < until:
        rclpy.spin_once(node, timeout_sec=0.05)
    emit({"done": True, "received": printed})
    node.destroy_node()


def call(args) -> None:
    node = rclpy.create_node("calls_client")
    client = node.create_client(ListParameters, args.service)
    if args.introspection:
        introspect(node, client)
    matched = client.wait_for_service(timeout_sec=args.wait_service)
    until = time.monotonic() + args.start_after
    while time.monotonic() < until:
        rclpy.spin_once(node, timeout_sec=0.05)
    answered = 0
    for i in range(args.calls if matched else 0):
        request = ListParameters.Request(prefixes=[f"call{i}", "x" * i], depth=1000 * i + 7)
        future = client.call_async(request)
        rclpy.spin_until_future_complete(node, future, timeout_sec=10.0)
        done = future.done() and future.result() is not None
        answered += done
        emit({"request": request_json(request), "answered": done})
    # The client's last events (RESPONSE_RECEIVED) leave while the node spins.
    until = time.monotonic() + args.linger
    while time.monotonic() < until:
        rclpy.spin_once(node, timeout_sec=0.05)
    emit({"done": True, "matched": matched, "answered": answered})
    node.destroy_node()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("role", choices=["server", "client"])
    parser.add_argument("--domain", type=int, required=True)
    parser.add_argument("--service", default="/recd_calls")
    parser.add_argument("--introspection", action="store_true")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=10.0)
    parser.add_argument("--timeout", type=float, default=90.0)
    parser.add_argument("--calls", type=int, default=0)
    parser.add_argument("--wait-service", type=float, default=30.0)
    parser.add_argument("--start-after", type=float, default=0.0)
    parser.add_argument("--linger", type=float, default=1.0)
    args = parser.parse_args()

    rclpy.init(domain_id=args.domain)
    try:
        serve(args) if args.role == "server" else call(args)
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
