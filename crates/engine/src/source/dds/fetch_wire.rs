//! `type_description_interfaces/srv/GetTypeDescription` on the wire: its request and
//! response, field for field in IDL order, as ros2-client serializes service messages
//! (and rmw_zenoh's nodes take and send them, as CDR), and what a response says of a
//! type.

use recd_ros2::type_description::{
    definition_from_sources, type_hash, TypeDescription, TypeSource,
};
use ros2_client::Message;
use serde::{Deserialize, Serialize};

/// The request: which type, by name and hash, and whether to send its sources.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::source) struct GetTypeDescriptionRequest {
    pub type_name: String,
    pub type_hash: String,
    pub include_type_sources: bool,
}
impl Message for GetTypeDescriptionRequest {}

/// `type_description_interfaces/msg/KeyValue`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::source) struct KeyValue {
    pub key: String,
    pub value: String,
}

/// The response: the description and sources, or why the node has none.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(in crate::source) struct GetTypeDescriptionResponse {
    pub successful: bool,
    pub failure_reason: String,
    pub type_description: TypeDescription,
    pub type_sources: Vec<TypeSource>,
    pub extra_information: Vec<KeyValue>,
}
impl Message for GetTypeDescriptionResponse {}

/// The `ros2msg` definition of `ros_type` in `reply`: the node gave it, its hash is the
/// `hash` the publisher announced, and its sources make a definition; else why not.
pub(in crate::source) fn definition_of(
    reply: GetTypeDescriptionResponse,
    ros_type: &str,
    hash: &str,
) -> Result<String, String> {
    if !reply.successful {
        return Err(format!(
            "the node does not give the type: {}",
            reply.failure_reason
        ));
    }
    let got = type_hash(&reply.type_description);
    if got != hash {
        return Err(format!(
            "the description's hash is {got}, the writer announced {hash}"
        ));
    }
    definition_from_sources(ros_type, &reply.type_sources)
        .map_err(|e| format!("the sources sent do not make a definition: {e}"))
}
