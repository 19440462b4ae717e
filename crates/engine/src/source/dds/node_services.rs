//! The nodes that serve a service, as DDS discovery shows them: a node's `~/<service>` is
//! a reader of `rq/<node>/<service>Request` (rmw_dds_common's naming, which rmw_fastrtps
//! and rmw_cyclonedds share).

/// The node (`/ns/talker`) whose `~/<service>` (`get_type_description`) a reader of
/// `dds_topic` serves, if it is one.
pub(super) fn node_serving(dds_topic: &str, service: &str) -> Option<String> {
    let node = dds_topic
        .strip_prefix("rq/")?
        .strip_suffix("Request")?
        .strip_suffix(service)?
        .strip_suffix('/')?;
    (!node.is_empty()).then(|| format!("/{node}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_named_by_its_service_s_request_topic() {
        let service = "list_parameters";
        assert_eq!(
            node_serving("rq/ns/talker/list_parametersRequest", service).as_deref(),
            Some("/ns/talker")
        );
        assert_eq!(node_serving("rq/list_parametersRequest", service), None);
        assert_eq!(node_serving("rq//list_parametersRequest", service), None);
        assert_eq!(
            node_serving("rr/talker/list_parametersReply", service),
            None
        );
        assert_eq!(
            node_serving("rq/talker/get_parametersRequest", service),
            None
        );
        assert_eq!(
            node_serving("rq/talker/xlist_parametersRequest", service),
            None
        );
    }
}
