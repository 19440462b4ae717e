#!/usr/bin/env python3
"""A Cyclone DDS (Python) writer of ROS 2 service and action introspection, as rmw_cyclonedds
sends it when a node enables introspection (REP 2012), for the recorder's end-to-end tests.

It writes, with the real DDS topic and type names rmw uses:

  rt/<service>/_service_event             example_interfaces::srv::dds_::AddTwoInts_Event_
      per call i (1..--calls): REQUEST_SENT, REQUEST_RECEIVED (request = [{a: i, b: 10*i}]),
      RESPONSE_SENT, RESPONSE_RECEIVED (response = [{sum: 11*i}]); sequence_number = i,
      client_gid = bytes 0..15 + 16*k for the k-th --service (so each service has its client)
  rt/<action>/_action/feedback           example_interfaces::action::dds_::Fibonacci_FeedbackMessage_
      --feedback messages: goal_id.uuid = 16 x 7, sequence = the first j+2 Fibonacci numbers
  rt/<action>/_action/status              action_msgs::msg::dds_::GoalStatusArray_
      one message per feedback: one GoalStatus, goal_id 16 x 7, stamp {sec: j, nanosec: 0},
      status 2 (EXECUTING), the last one 4 (SUCCEEDED)
  rt/<action>/_action/send_goal/_service_event
                                          example_interfaces::action::dds_::Fibonacci_SendGoal_Event_
      one call: REQUEST_SENT (goal order 5), RESPONSE_SENT (accepted, stamp {sec: 1, nanosec: 2})
  rt/chatter                              std_msgs::msg::dds_::String_   --chatter strings "hello <j>"

and prints ONE JSON line per sample ({"topic": "/add_two_ints/_service_event", "message": {...}},
the message as a ROS 2 reader decodes it, byte arrays as lists of ints; and "hashed": the same
with byte arrays as {"len", "sha256"}, as read_ros2.py prints them) and a final
{"done": true, "matched": {topic: bool}, "sent": N}. Writers are RELIABLE, VOLATILE, KEEP_ALL.

Run with CYCLONEDDS_URI=file://<this dir>/cyclonedds-loopback.xml. Exit 3 when a writer found no
reader within --wait-match (unless --allow-unmatched, for topics a recorder should not take).
Every wait is bounded.
"""

import argparse
import hashlib
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.annotations import final
from cyclonedds.idl.types import array, int8, int32, int64, sequence, uint8, uint32
from cyclonedds.pub import DataWriter, Publisher
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from script_io import emit, match_count


@dataclass
@final
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32
    nanosec: uint32


@dataclass
@final
class ServiceEventInfo(IdlStruct, typename="service_msgs::msg::dds_::ServiceEventInfo_"):
    event_type: uint8
    stamp: Time
    client_gid: array[uint8, 16]
    sequence_number: int64


@dataclass
@final
class AddTwoIntsRequest(IdlStruct, typename="example_interfaces::srv::dds_::AddTwoInts_Request_"):
    a: int64
    b: int64


@dataclass
@final
class AddTwoIntsResponse(IdlStruct, typename="example_interfaces::srv::dds_::AddTwoInts_Response_"):
    sum: int64


@dataclass
@final
class AddTwoIntsEvent(IdlStruct, typename="example_interfaces::srv::dds_::AddTwoInts_Event_"):
    info: ServiceEventInfo
    request: sequence[AddTwoIntsRequest, 1]
    response: sequence[AddTwoIntsResponse, 1]


@dataclass
@final
class UUID(IdlStruct, typename="unique_identifier_msgs::msg::dds_::UUID_"):
    uuid: array[uint8, 16]


@dataclass
@final
class FibonacciGoal(IdlStruct, typename="example_interfaces::action::dds_::Fibonacci_Goal_"):
    order: int32


@dataclass
@final
class FibonacciFeedback(IdlStruct, typename="example_interfaces::action::dds_::Fibonacci_Feedback_"):
    sequence: sequence[int32]


@dataclass
@final
class FibonacciFeedbackMessage(
    IdlStruct, typename="example_interfaces::action::dds_::Fibonacci_FeedbackMessage_"
):
    goal_id: UUID
    feedback: FibonacciFeedback


@dataclass
@final
class SendGoalRequest(
    IdlStruct, typename="example_interfaces::action::dds_::Fibonacci_SendGoal_Request_"
):
    goal_id: UUID
    goal: FibonacciGoal


@dataclass
@final
class SendGoalResponse(
    IdlStruct, typename="example_interfaces::action::dds_::Fibonacci_SendGoal_Response_"
):
    accepted: bool
    stamp: Time


@dataclass
@final
class SendGoalEvent(IdlStruct, typename="example_interfaces::action::dds_::Fibonacci_SendGoal_Event_"):
    info: ServiceEventInfo
    request: sequence[SendGoalRequest, 1]
    response: sequence[SendGoalResponse, 1]


@dataclass
@final
class GoalInfo(IdlStruct, typename="action_msgs::msg::dds_::GoalInfo_"):
    goal_id: UUID
    stamp: Time


@dataclass
@final
class GoalStatus(IdlStruct, typename="action_msgs::msg::dds_::GoalStatus_"):
    goal_info: GoalInfo
    status: int8


@dataclass
@final
class GoalStatusArray(IdlStruct, typename="action_msgs::msg::dds_::GoalStatusArray_"):
    status_list: sequence[GoalStatus]


@dataclass
@final
class String(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    data: str


REQUEST_SENT, REQUEST_RECEIVED, RESPONSE_SENT, RESPONSE_RECEIVED = 0, 1, 2, 3
GOAL = [7] * 16


def log(msg: str) -> None:
    print(f"ros2_introspection: {msg}", file=sys.stderr, flush=True)


def hashed(value, key=None):
    """`value` with its byte arrays (uuid, client_gid) as read_ros2.py prints them."""
    if key in ("uuid", "client_gid"):
        return {"len": len(value), "sha256": hashlib.sha256(bytes(value)).hexdigest()}
    if isinstance(value, dict):
        return {k: hashed(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [hashed(v) for v in value]
    return value


def info(event_type, gid, seq, t):
    return ServiceEventInfo(event_type=event_type, stamp=Time(sec=t, nanosec=event_type),
                            client_gid=gid, sequence_number=seq)


def info_json(event: ServiceEventInfo):
    return {"event_type": event.event_type,
            "stamp": {"sec": event.stamp.sec, "nanosec": event.stamp.nanosec},
            "client_gid": list(event.client_gid), "sequence_number": event.sequence_number}


def service_events(service_index, calls):
    gid = [(b + 16 * service_index) & 0xFF for b in range(16)]
    for i in range(1, calls + 1):
        request = AddTwoIntsRequest(a=i, b=10 * i)
        response = AddTwoIntsResponse(sum=11 * i)
        for kind in (REQUEST_SENT, REQUEST_RECEIVED, RESPONSE_SENT, RESPONSE_RECEIVED):
            with_request = kind in (REQUEST_SENT, REQUEST_RECEIVED)
            event = AddTwoIntsEvent(info=info(kind, gid, i, i),
                                    request=[request] if with_request else [],
                                    response=[] if with_request else [response])
            yield event, {"info": info_json(event.info),
                          "request": [{"a": i, "b": 10 * i}] if with_request else [],
                          "response": [] if with_request else [{"sum": 11 * i}]}


def fibonacci(n):
    seq = [0, 1]
    while len(seq) < n:
        seq.append(seq[-1] + seq[-2])
    return seq[:n]


def action_samples(action, feedback):
    goal = UUID(uuid=GOAL)
    gid = [0xA0 + b for b in range(16)]
    request = SendGoalRequest(goal_id=goal, goal=FibonacciGoal(order=5))
    response = SendGoalResponse(accepted=True, stamp=Time(sec=1, nanosec=2))
    for kind in (REQUEST_SENT, RESPONSE_SENT):
        with_request = kind == REQUEST_SENT
        event = SendGoalEvent(info=info(kind, gid, 1, 1), request=[request] if with_request else [],
                              response=[] if with_request else [response])
        yield f"{action}/_action/send_goal/_service_event", event, {
            "info": info_json(event.info),
            "request": [{"goal_id": {"uuid": GOAL}, "goal": {"order": 5}}] if with_request else [],
            "response": [] if with_request else [{"accepted": True, "stamp": {"sec": 1, "nanosec": 2}}]}
    for j in range(feedback):
        partial = fibonacci(j + 2)
        yield f"{action}/_action/feedback", FibonacciFeedbackMessage(
            goal_id=goal, feedback=FibonacciFeedback(sequence=partial)), {
            "goal_id": {"uuid": GOAL}, "feedback": {"sequence": partial}}
        status = 4 if j == feedback - 1 else 2
        yield f"{action}/_action/status", GoalStatusArray(status_list=[GoalStatus(
            goal_info=GoalInfo(goal_id=goal, stamp=Time(sec=j, nanosec=0)), status=status)]), {
            "status_list": [{"goal_info": {"goal_id": {"uuid": GOAL}, "stamp": {"sec": j, "nanosec": 0}},
                             "status": status}]}


TYPES = {
    "_action/feedback": FibonacciFeedbackMessage,
    "_action/status": GoalStatusArray,
    "_action/send_goal/_service_event": SendGoalEvent,
    "_service_event": AddTwoIntsEvent,
    "chatter": String,
}


def type_of(topic):
    return next(t for suffix, t in TYPES.items() if topic.endswith(suffix))


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domain", type=int, required=True, help="DDS domain id")
    ap.add_argument("--service", action="append", default=[],
                    help="ROS name of an AddTwoInts service to introspect; repeatable")
    ap.add_argument("--calls", type=int, default=3, help="calls per service (default 3)")
    ap.add_argument("--action", help="ROS name of a Fibonacci action to introspect")
    ap.add_argument("--feedback", type=int, default=4, help="feedback (and status) messages (default 4)")
    ap.add_argument("--chatter", type=int, default=0, help="std_msgs/String messages on /chatter")
    ap.add_argument("--wait-match", type=float, default=20.0,
                    help="seconds to wait for readers of every topic before writing (default 20)")
    ap.add_argument("--allow-unmatched", action="append", default=[], metavar="TOPIC",
                    help="a ROS topic no reader needs to match (one the recorder should leave); repeatable")
    ap.add_argument("--rate", type=float, default=50.0, help="samples per second (default 50)")
    ap.add_argument("--linger", type=float, default=2.0, help="seconds to wait for acks (default 2)")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    samples = []  # (ROS topic, sample, expected JSON)
    for k, service in enumerate(args.service):
        samples += [(f"{service}/_service_event", s, j) for s, j in service_events(k, args.calls)]
    if args.action:
        samples += list(action_samples(args.action, args.feedback))
    samples += [("/chatter", String(data=f"hello {j}"), {"data": f"hello {j}"})
                for j in range(args.chatter)]

    dp = DomainParticipant(args.domain)
    qos = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.Durability.Volatile,
              Policy.History.KeepAll)
    publisher = Publisher(dp)
    writers = {}
    for topic, _, _ in samples:
        if topic not in writers:
            writers[topic] = DataWriter(publisher, Topic(dp, "rt" + topic, type_of(topic)), qos=qos)

    deadline = time.monotonic() + args.wait_match
    waiting = {t for t in writers if t not in args.allow_unmatched}
    while waiting and time.monotonic() < deadline:
        waiting = {t for t in waiting if not match_count(writers[t])}
        time.sleep(0.02)
    if waiting:
        log(f"no reader matched {sorted(waiting)} within {args.wait_match} s")
        emit({"done": True, "matched": {t: t not in waiting for t in writers}, "sent": 0})
        return 3

    period = 1.0 / args.rate if args.rate > 0 else 0.0
    for topic, sample, expected in samples:
        writers[topic].write(sample)
        emit({"topic": topic, "message": expected, "hashed": hashed(expected)})
        if period:
            time.sleep(period)
    for writer in writers.values():
        writer.wait_for_acks(duration(seconds=args.linger))
    matched = {t: bool(match_count(w)) for t, w in writers.items()}
    emit({"done": True, "matched": matched, "sent": len(samples)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
