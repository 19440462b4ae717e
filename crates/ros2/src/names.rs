//! DDS names to ROS 2 names, the way the rmw implementations demangle them, and which ROS
//! topics carry service events and action traffic, the way rosbag2 classifies them.
//!
//! rmw publishes a ROS topic `/ns/name` as the DDS topic `rt/ns/name` (services use `rq/…` and
//! `rr/…`, which are not topics), and a ROS type `pkg/msg/Type` as the DDS type
//! `pkg::msg::dds_::Type_` (see `_demangle_if_ros_topic` / `_demangle_if_ros_type` in
//! rmw_fastrtps_shared_cpp's `demangle.cpp` and rmw_cyclonedds_cpp's `demangle.cpp`).

/// The DDS topic prefix of ROS topics (`rmw_dds_common`'s `ros_topic_prefix`).
const ROS_TOPIC_PREFIX: &str = "rt/";

/// DDS topics that carry ROS's own bookkeeping and are skipped unless explicitly selected:
///
/// - `ros_discovery_info`: rmw's graph information (participants, nodes, their readers and
///   writers), a DDS topic with no ROS name.
/// - `rt/parameter_events`: the ROS topic `/parameter_events`, on which every node with
///   parameters announces their changes.
///
/// Compared against the DDS topic name, exactly.
pub const INTERNAL_TOPICS: &[&str] = &["ros_discovery_info", PARAMETER_EVENTS];

/// The DDS topic of ROS `/parameter_events`: every node's parameter changes.
pub const PARAMETER_EVENTS: &str = "rt/parameter_events";

/// The ROS topic name of a DDS topic: `"rt/chatter"` → `Some("/chatter")`, `"rt/ns/cam/image"`
/// → `Some("/ns/cam/image")`.
///
/// `None` for DDS topics that are not ROS topics: no `rt/` prefix (`ros_discovery_info`,
/// `DCPSParticipant`, service topics `rq/…Request` and `rr/…Reply`, plain DDS topics such as
/// `Square`), or nothing after the prefix.
pub fn ros_topic_name(dds_topic: &str) -> Option<String> {
    let rest = dds_topic.strip_prefix(ROS_TOPIC_PREFIX)?;
    if rest.is_empty() {
        return None;
    }
    Some(format!("/{rest}"))
}

/// The ROS type name of a DDS type: `"std_msgs::msg::dds_::String_"` →
/// `Some("std_msgs/msg/String")`, `"pkg::srv::dds_::X_Request_"` → `Some("pkg/srv/X_Request")`,
/// `"pkg::action::dds_::X_FeedbackMessage_"` → `Some("pkg/action/X_FeedbackMessage")`.
///
/// The form is `<pkg>::<namespace>[::…]::dds_::<Name>_`, every part a non-empty identifier
/// (`[A-Za-z0-9_]`), as rmw_fastrtps requires it. `None` for any other type name, e.g.
/// `ShapeType` or `spike::Keyed`.
pub fn ros_type_name(dds_type: &str) -> Option<String> {
    let (namespace, name) = dds_type.split_once("::dds_::")?;
    let name = name.strip_suffix('_')?;
    if !is_identifier(name) {
        return None;
    }
    let parts: Vec<&str> = namespace.split("::").collect();
    if parts.len() < 2 || !parts.iter().all(|part| is_identifier(part)) {
        return None;
    }
    Some(format!("{}/{name}", parts.join("/")))
}

/// The DDS topic of a ROS topic: `"/chatter"` → `"rt/chatter"`; a name without the
/// leading slash (a plain DDS topic such as `Square`) is its own DDS name.
pub fn dds_topic_name(topic: &str) -> String {
    match topic.strip_prefix('/') {
        Some(rest) if !rest.is_empty() => format!("{ROS_TOPIC_PREFIX}{rest}"),
        _ => topic.to_string(),
    }
}

/// The DDS type of a ROS type: `"std_msgs/msg/String"` → `"std_msgs::msg::dds_::String_"`,
/// the way rmw mangles it; a name that is not `<pkg>/<namespace>/<Name>` (a plain DDS type
/// such as `ShapeType`) is its own DDS name.
pub fn dds_type_name(ros_type: &str) -> String {
    match ros_type.rsplit_once('/') {
        Some((namespace, name))
            if is_identifier(name)
                && namespace.split('/').count() >= 2
                && namespace.split('/').all(is_identifier) =>
        {
            format!("{}::dds_::{name}_", namespace.replace('/', "::"))
        }
        _ => ros_type.to_string(),
    }
}

/// Whether a DDS topic is one of ROS's own bookkeeping topics, which are skipped unless
/// explicitly selected: exactly the DDS topics listed in [`INTERNAL_TOPICS`]
/// (`ros_discovery_info` and `rt/parameter_events`, i.e. ROS `/parameter_events`).
///
/// `/rosout` is not internal: rosbag2 records it like any other topic.
pub fn is_internal(dds_topic: &str) -> bool {
    INTERNAL_TOPICS.contains(&dds_topic)
}

/// The DDS topic prefixes of a service's requests and replies (`rmw_dds_common`'s
/// `ros_service_requester_prefix` and `ros_service_response_prefix`).
const SERVICE_PLUMBING_PREFIXES: &[&str] = &["rq/", "rr/"];

/// Whether a DDS topic carries a service's requests or replies (`rq/add_two_intsRequest`,
/// `rr/talker/get_parametersReply`): the plumbing of a service call, not a topic. recd
/// neither lists nor records these as topics (rosbag2 does not either); a service is
/// recorded by its introspection events (`--services`).
pub fn is_service_plumbing(dds_topic: &str) -> bool {
    SERVICE_PLUMBING_PREFIXES
        .iter()
        .any(|prefix| dds_topic.starts_with(prefix))
}

/// Whether a DDS topic is a hidden ROS topic: one whose ROS name has a token starting with
/// `_` (`/_hidden`, `/fibonacci/_action/feedback`). `ros2 bag record` leaves these out unless
/// `--include-hidden-topics` is given (rosbag2_transport's `topic_filter.cpp`,
/// `topic_is_hidden`). `false` for DDS topics that are not ROS topics.
pub fn is_hidden(dds_topic: &str) -> bool {
    dds_topic
        .strip_prefix(ROS_TOPIC_PREFIX)
        .is_some_and(|rest| rest.split('/').any(|token| token.starts_with('_')))
}

/// What a ROS topic carries, the way rosbag2 tells service-introspection and action topics
/// apart from plain topics (rosbag2_cpp's `service_utils` and `action_utils`): see
/// [`interface_of`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interface {
    /// A plain topic (also any topic below that doesn't carry the type it should).
    Topic,
    /// The introspection events of a service (`<service>/_service_event`).
    Service {
        /// The service's name, e.g. `/add_two_ints`.
        service: String,
    },
    /// One of the five topics of an action (`<action>/_action/…`).
    Action {
        /// The action's name, e.g. `/fibonacci`.
        action: String,
        /// Which of its topics.
        part: ActionPart,
    },
}

/// The topics of an action, all below `<action>/_action/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionPart {
    /// `feedback`, type `pkg/action/A_FeedbackMessage`.
    Feedback,
    /// `status`, type `action_msgs/msg/GoalStatusArray`.
    Status,
    /// `send_goal/_service_event`, type `pkg/action/A_SendGoal_Event`.
    SendGoal,
    /// `get_result/_service_event`, type `pkg/action/A_GetResult_Event`.
    GetResult,
    /// `cancel_goal/_service_event`, type `action_msgs/srv/CancelGoal_Event`.
    CancelGoal,
}

/// The topic-name suffix of service-introspection events (rcl's
/// `RCL_SERVICE_INTROSPECTION_TOPIC_POSTFIX`).
const SERVICE_EVENT_SUFFIX: &str = "/_service_event";

/// The types an action topic may have.
enum ActionTopicType {
    /// Exactly this type, shared by all actions.
    Shared(&'static str),
    /// `pkg/action/<Action><suffix>`, with this suffix.
    Generated(&'static str),
}

impl ActionTopicType {
    /// Whether `ros_type` is one of these types.
    fn fits(&self, ros_type: &str) -> bool {
        match self {
            Self::Shared(shared) => ros_type == *shared,
            Self::Generated(suffix) => generated_type(ros_type, "action", suffix).is_some(),
        }
    }
}

/// Each action topic: its name after `<action>`, its part, and its type.
const ACTION_TOPICS: [(&str, ActionPart, ActionTopicType); 5] = [
    (
        "/_action/feedback",
        ActionPart::Feedback,
        ActionTopicType::Generated("_FeedbackMessage"),
    ),
    (
        "/_action/status",
        ActionPart::Status,
        ActionTopicType::Shared("action_msgs/msg/GoalStatusArray"),
    ),
    (
        "/_action/send_goal/_service_event",
        ActionPart::SendGoal,
        ActionTopicType::Generated("_SendGoal_Event"),
    ),
    (
        "/_action/get_result/_service_event",
        ActionPart::GetResult,
        ActionTopicType::Generated("_GetResult_Event"),
    ),
    (
        "/_action/cancel_goal/_service_event",
        ActionPart::CancelGoal,
        ActionTopicType::Shared("action_msgs/srv/CancelGoal_Event"),
    ),
];

/// What the ROS topic `ros_topic` (`/add_two_ints/_service_event`) of ROS type `ros_type`
/// (`example_interfaces/srv/AddTwoInts_Event`) carries, so the recorder can treat service
/// events and action topics the way rosbag2 does:
///
/// - an action topic: `<action>/_action/feedback` of a `pkg/action/A_FeedbackMessage`,
///   `<action>/_action/status` of an `action_msgs/msg/GoalStatusArray`,
///   `<action>/_action/{send_goal,get_result}/_service_event` of a
///   `pkg/action/A_{SendGoal,GetResult}_Event`, `<action>/_action/cancel_goal/_service_event`
///   of an `action_msgs/srv/CancelGoal_Event`;
/// - otherwise a service: `<service>/_service_event` of a `pkg/srv/S_Event`;
/// - otherwise (a name or a type that does not fit, an empty `<action>`/`<service>`) a topic.
pub fn interface_of(ros_topic: &str, ros_type: &str) -> Interface {
    for (suffix, part, topic_type) in ACTION_TOPICS {
        if let Some(action) = ros_topic.strip_suffix(suffix) {
            if !action.is_empty() && topic_type.fits(ros_type) {
                return Interface::Action {
                    action: action.to_owned(),
                    part,
                };
            }
        }
    }
    match ros_topic.strip_suffix(SERVICE_EVENT_SUFFIX) {
        Some(service) if !service.is_empty() && service_type_of(ros_type).is_some() => {
            Interface::Service {
                service: service.to_owned(),
            }
        }
        _ => Interface::Topic,
    }
}

/// The service type whose introspection events have type `event_type`:
/// `example_interfaces/srv/AddTwoInts_Event` → `Some("example_interfaces/srv/AddTwoInts")`;
/// `None` for any other type.
pub fn service_type_of(event_type: &str) -> Option<String> {
    generated_type(event_type, "srv", "_Event")
}

/// The action type of the type of one of an action's own topics:
/// `example_interfaces/action/Fibonacci_FeedbackMessage`, `…_SendGoal_Event` and
/// `…_GetResult_Event` → `Some("example_interfaces/action/Fibonacci")`; `None` for any
/// other type, including the status and cancel types, which all actions share.
pub fn action_type_of(ros_type: &str) -> Option<String> {
    ["_FeedbackMessage", "_SendGoal_Event", "_GetResult_Event"]
        .into_iter()
        .find_map(|suffix| generated_type(ros_type, "action", suffix))
}

/// `pkg/<namespace>/Name` for a type `pkg/<namespace>/Name<suffix>`, all parts identifiers,
/// `Name` non-empty.
fn generated_type(ros_type: &str, namespace: &str, suffix: &str) -> Option<String> {
    let [package, ns, name] = ros_type.split('/').collect::<Vec<_>>()[..] else {
        return None;
    };
    let base = name.strip_suffix(suffix)?;
    (ns == namespace && is_identifier(package) && is_identifier(base))
        .then(|| format!("{package}/{namespace}/{base}"))
}

fn is_identifier(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_topics_lose_the_rt_prefix_and_gain_a_slash() {
        assert_eq!(ros_topic_name("rt/chatter").as_deref(), Some("/chatter"));
        assert_eq!(
            ros_topic_name("rt/ns/cam/image").as_deref(),
            Some("/ns/cam/image")
        );
        assert_eq!(
            ros_topic_name("rt/parameter_events").as_deref(),
            Some("/parameter_events")
        );
    }

    #[test]
    fn service_requests_and_replies_are_plumbing_not_topics() {
        for dds_topic in [
            "rq/add_two_intsRequest",
            "rr/add_two_intsReply",
            "rr/talker/get_type_descriptionReply",
            "rq/talker/list_parametersRequest",
        ] {
            assert!(is_service_plumbing(dds_topic), "{dds_topic}");
        }
        for dds_topic in [
            "rt/chatter",
            "rt/rq/chatter",
            "rt/add_two_ints/_service_event",
            "ros_discovery_info",
            "Square",
        ] {
            assert!(!is_service_plumbing(dds_topic), "{dds_topic}");
        }
    }

    #[test]
    fn non_ros_topics_have_no_ros_name() {
        for dds_topic in [
            "ros_discovery_info",
            "DCPSParticipant",
            "DCPSPublication",
            "rq/add_two_intsRequest",
            "rr/add_two_intsReply",
            "Square",
            "rt/",
            "rt",
            "chatter",
            "/chatter",
            "RT/chatter",
        ] {
            assert_eq!(ros_topic_name(dds_topic), None, "{dds_topic}");
        }
    }

    #[test]
    fn ros_types_are_demangled() {
        for (dds, ros) in [
            ("std_msgs::msg::dds_::String_", "std_msgs/msg/String"),
            ("sensor_msgs::msg::dds_::Image_", "sensor_msgs/msg/Image"),
            (
                "example_interfaces::srv::dds_::AddTwoInts_Request_",
                "example_interfaces/srv/AddTwoInts_Request",
            ),
            (
                "example_interfaces::srv::dds_::AddTwoInts_Response_",
                "example_interfaces/srv/AddTwoInts_Response",
            ),
            (
                "example_interfaces::action::dds_::Fibonacci_FeedbackMessage_",
                "example_interfaces/action/Fibonacci_FeedbackMessage",
            ),
            (
                "action_msgs::msg::dds_::GoalStatusArray_",
                "action_msgs/msg/GoalStatusArray",
            ),
        ] {
            assert_eq!(ros_type_name(dds).as_deref(), Some(ros), "{dds}");
        }
    }

    #[test]
    fn ros_names_are_mangled_back() {
        for dds in ["rt/chatter", "rt/ns/cam/image"] {
            assert_eq!(dds_topic_name(&ros_topic_name(dds).unwrap()), dds);
        }
        assert_eq!(dds_topic_name("Square"), "Square");
        assert_eq!(dds_topic_name("/"), "/");
        for dds in [
            "std_msgs::msg::dds_::String_",
            "example_interfaces::action::dds_::Fibonacci_FeedbackMessage_",
        ] {
            assert_eq!(dds_type_name(&ros_type_name(dds).unwrap()), dds);
        }
        for plain in ["ShapeType", "spike::Keyed", "msg/String", "a//B", "a/b/"] {
            assert_eq!(dds_type_name(plain), plain);
        }
    }

    #[test]
    fn non_ros_types_have_no_ros_name() {
        for dds in [
            "ShapeType",
            "spike::Keyed",
            "std_msgs::msg::String",
            "std_msgs::msg::dds_::String",
            "std_msgs::msg::dds_::_",
            "std_msgs::dds_::String_",
            "::msg::dds_::String_",
            "std_msgs::::dds_::String_",
            "dds_::String_",
            "std_msgs::msg::dds_::inner::String_",
            "std msgs::msg::dds_::String_",
            "",
        ] {
            assert_eq!(ros_type_name(dds), None, "{dds:?}");
        }
    }

    #[test]
    fn internal_topics_are_discovery_info_and_parameter_events_only() {
        assert!(is_internal("ros_discovery_info"));
        assert!(is_internal("rt/parameter_events"));
        for dds_topic in [
            "rt/chatter",
            "rt/rosout",
            "rt/ns/parameter_events",
            "parameter_events",
            "/parameter_events",
            "rt/ros_discovery_info",
            "Square",
        ] {
            assert!(!is_internal(dds_topic), "{dds_topic}");
        }
    }

    #[test]
    fn hidden_topics_have_a_token_starting_with_underscore() {
        assert!(is_hidden("rt/_hidden"));
        assert!(is_hidden("rt/fibonacci/_action/feedback"));
        assert!(!is_hidden("rt/chatter"));
        assert!(!is_hidden("rt/my_topic/sub_topic"));
        assert!(!is_hidden("_private_dds_topic"));
    }

    #[test]
    fn service_event_topics_are_services() {
        assert_eq!(
            interface_of(
                "/add_two_ints/_service_event",
                "example_interfaces/srv/AddTwoInts_Event"
            ),
            Interface::Service {
                service: "/add_two_ints".to_owned()
            }
        );
        assert_eq!(
            interface_of("/ns/srv/_service_event", "action_msgs/srv/CancelGoal_Event"),
            Interface::Service {
                service: "/ns/srv".to_owned()
            }
        );
        for (topic, ros_type) in [
            (
                "/add_two_ints/_service_event",
                "example_interfaces/srv/AddTwoInts",
            ),
            (
                "/add_two_ints/_service_event",
                "example_interfaces/msg/AddTwoInts_Event",
            ),
            (
                "/add_two_ints/_service_event",
                "example_interfaces/srv/_Event",
            ),
            ("/add_two_ints/_service_event", "srv/AddTwoInts_Event"),
            ("/add_two_ints/_service_event", "a/b/srv/AddTwoInts_Event"),
            (
                "/add_two_ints/service_event",
                "example_interfaces/srv/AddTwoInts_Event",
            ),
            ("/_service_event", "example_interfaces/srv/AddTwoInts_Event"),
            ("/chatter", "std_msgs/msg/String"),
        ] {
            assert_eq!(
                interface_of(topic, ros_type),
                Interface::Topic,
                "{topic} {ros_type}"
            );
        }
    }

    #[test]
    fn action_topics_are_actions() {
        for (topic, ros_type, part) in [
            (
                "/fibonacci/_action/feedback",
                "example_interfaces/action/Fibonacci_FeedbackMessage",
                ActionPart::Feedback,
            ),
            (
                "/fibonacci/_action/status",
                "action_msgs/msg/GoalStatusArray",
                ActionPart::Status,
            ),
            (
                "/fibonacci/_action/send_goal/_service_event",
                "example_interfaces/action/Fibonacci_SendGoal_Event",
                ActionPart::SendGoal,
            ),
            (
                "/fibonacci/_action/get_result/_service_event",
                "example_interfaces/action/Fibonacci_GetResult_Event",
                ActionPart::GetResult,
            ),
            (
                "/fibonacci/_action/cancel_goal/_service_event",
                "action_msgs/srv/CancelGoal_Event",
                ActionPart::CancelGoal,
            ),
        ] {
            assert_eq!(
                interface_of(topic, ros_type),
                Interface::Action {
                    action: "/fibonacci".to_owned(),
                    part
                },
                "{topic}"
            );
        }
        assert_eq!(
            interface_of(
                "/ns/nav/_action/feedback",
                "nav2_msgs/action/NavigateToPose_FeedbackMessage"
            ),
            Interface::Action {
                action: "/ns/nav".to_owned(),
                part: ActionPart::Feedback
            }
        );
    }

    #[test]
    fn action_topics_with_the_wrong_type_are_not_actions() {
        for (topic, ros_type) in [
            ("/fibonacci/_action/feedback", "std_msgs/msg/String"),
            (
                "/fibonacci/_action/feedback",
                "example_interfaces/action/Fibonacci_Feedback",
            ),
            (
                "/fibonacci/_action/status",
                "example_interfaces/msg/GoalStatusArray",
            ),
            (
                "/fibonacci/_action/send_goal/_service_event",
                "example_interfaces/action/Fibonacci_GetResult_Event",
            ),
            (
                "/fibonacci/_action/cancel_goal/_service_event",
                "example_interfaces/action/Fibonacci_SendGoal_Event",
            ),
            (
                "/_action/feedback",
                "example_interfaces/action/Fibonacci_FeedbackMessage",
            ),
            (
                "/fibonacci/_action/result",
                "example_interfaces/action/Fibonacci_Result",
            ),
        ] {
            assert_eq!(
                interface_of(topic, ros_type),
                Interface::Topic,
                "{topic} {ros_type}"
            );
        }
        // A service event of a service type below `_action/` is a service, as in rosbag2.
        assert_eq!(
            interface_of(
                "/fibonacci/_action/cancel_goal/_service_event",
                "my_pkg/srv/Cancel_Event"
            ),
            Interface::Service {
                service: "/fibonacci/_action/cancel_goal".to_owned()
            }
        );
    }

    #[test]
    fn service_and_action_types_of_their_topic_types() {
        assert_eq!(
            service_type_of("example_interfaces/srv/AddTwoInts_Event").as_deref(),
            Some("example_interfaces/srv/AddTwoInts")
        );
        assert_eq!(
            service_type_of("action_msgs/srv/CancelGoal_Event").as_deref(),
            Some("action_msgs/srv/CancelGoal")
        );
        for ros_type in [
            "example_interfaces/srv/AddTwoInts_Request",
            "example_interfaces/srv/AddTwoInts",
            "example_interfaces/action/Fibonacci_SendGoal_Event",
            "example_interfaces/srv/_Event",
            "example_interfaces/AddTwoInts_Event",
            "",
        ] {
            assert_eq!(service_type_of(ros_type), None, "{ros_type}");
        }
        for ros_type in [
            "example_interfaces/action/Fibonacci_FeedbackMessage",
            "example_interfaces/action/Fibonacci_SendGoal_Event",
            "example_interfaces/action/Fibonacci_GetResult_Event",
        ] {
            assert_eq!(
                action_type_of(ros_type).as_deref(),
                Some("example_interfaces/action/Fibonacci"),
                "{ros_type}"
            );
        }
        for ros_type in [
            "action_msgs/msg/GoalStatusArray",
            "action_msgs/srv/CancelGoal_Event",
            "example_interfaces/action/Fibonacci_Goal",
            "example_interfaces/srv/Fibonacci_SendGoal_Event",
            "example_interfaces/action/_FeedbackMessage",
        ] {
            assert_eq!(action_type_of(ros_type), None, "{ros_type}");
        }
    }
}
