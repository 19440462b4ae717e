//! The topics discovery selects.

use super::*;
use crate::config::TopicSelection;

#[test]
fn service_requests_and_replies_are_never_selected_as_topics() {
    let everything = TopicFilter::new(&TopicSelection::default()).unwrap();
    let wide = TopicFilter::new(&TopicSelection {
        include: vec!["*".into(), "rr/*".into(), "rq/*".into()],
        ..TopicSelection::default()
    })
    .unwrap();
    for filter in [&everything, &wide] {
        assert!(selected(
            filter,
            "rt/chatter",
            "std_msgs::msg::dds_::String_"
        ));
        assert!(!selected(
            filter,
            "rr/talker/get_parametersReply",
            "rcl_interfaces::srv::dds_::GetParameters_Response_"
        ));
        assert!(!selected(
            filter,
            "rq/talker/get_parametersRequest",
            "rcl_interfaces::srv::dds_::GetParameters_Request_"
        ));
    }
}

#[test]
fn parameter_events_are_selected_with_the_parameters_whatever_the_patterns() {
    let events_type = "rcl_interfaces::msg::dds_::ParameterEvent_";
    let chatter_only = TopicSelection {
        include: vec!["/chatter".into()],
        ..TopicSelection::default()
    };
    let filter = TopicFilter::new(&chatter_only).unwrap();
    assert!(!selected(&filter, "rt/parameter_events", events_type));
    let with_parameters = TopicSelection {
        parameter_events: true,
        ..chatter_only
    };
    let filter = TopicFilter::new(&with_parameters).unwrap();
    assert!(selected(&filter, "rt/parameter_events", events_type));
    assert!(selected(
        &filter,
        "rt/chatter",
        "std_msgs::msg::dds_::String_"
    ));
    assert!(!selected(
        &filter,
        "rt/other",
        "std_msgs::msg::dds_::String_"
    ));
    // Recording everything still leaves ROS's bookkeeping out without the parameters.
    let everything = TopicFilter::new(&TopicSelection::default()).unwrap();
    assert!(!selected(&everything, "rt/parameter_events", events_type));
}
