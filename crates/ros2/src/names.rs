//! DDS names to ROS 2 names, the way the rmw implementations demangle them.
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
pub const INTERNAL_TOPICS: &[&str] = &["ros_discovery_info", "rt/parameter_events"];

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

/// Whether a DDS topic is a hidden ROS topic: one whose ROS name has a token starting with
/// `_` (`/_hidden`, `/fibonacci/_action/feedback`). `ros2 bag record` leaves these out unless
/// `--include-hidden-topics` is given (rosbag2_transport's `topic_filter.cpp`,
/// `topic_is_hidden`). `false` for DDS topics that are not ROS topics.
pub fn is_hidden(dds_topic: &str) -> bool {
    dds_topic
        .strip_prefix(ROS_TOPIC_PREFIX)
        .is_some_and(|rest| rest.split('/').any(|token| token.starts_with('_')))
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
}
