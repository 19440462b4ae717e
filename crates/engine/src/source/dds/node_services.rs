//! Other nodes' services, as recd finds and calls them: a node's `~/<service>` is a reader
//! of `rq/<node>/<service>Request` in DDS discovery (rmw_dds_common's naming, which
//! rmw_fastrtps and rmw_cyclonedds share), and recd calls it from a ROS node of its own
//! through ros2-client, the way rmw_fastrtps serves it (`ServiceMapping::Enhanced`).

use ros2_client::{
    Client, Context as RosContext, Message, Name, Node, NodeName, NodeOptions, QosProfile,
    ServiceMapping, ServiceTypeName,
};

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

/// recd's ROS node `/<name>` for calling others' services: it logs nothing to `/rosout`
/// and serves no parameters of its own.
pub(super) fn calling_node(context: &RosContext, name: &str) -> Result<Node, String> {
    let name = NodeName::new("/", name).map_err(|e| format!("{e:?}"))?;
    let options = NodeOptions::new()
        .enable_rosout(false)
        .start_parameter_services(false);
    context
        .new_node(name, options)
        .map_err(|e| format!("cannot make a ROS 2 node: {e:?}"))
}

/// A client, on `ros_node`, of `node`'s `~/<service>` of type `<package>/srv/<type_name>`.
pub(super) fn client_of<Q: Message + Clone + 'static, A: Message + 'static>(
    ros_node: &mut Node,
    node: &str,
    service: &str,
    (package, type_name): (&str, &str),
) -> Result<Client<Q, A>, String> {
    let name = Name::new(node, service).map_err(|e| format!("{e:?}"))?;
    let qos =
        QosProfile::publisher_default().history(ros2_client::qos::History::KeepLast { depth: 10 });
    ros_node
        .create_client(
            ServiceMapping::Enhanced,
            &name,
            &ServiceTypeName::new(package, type_name),
            qos.clone(),
            qos,
        )
        .map_err(|e| format!("cannot make a client of {node}/{service}: {e:?}"))
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
