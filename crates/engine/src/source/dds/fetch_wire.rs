//! `type_description_interfaces/srv/GetTypeDescription` on the wire: its request and
//! response, field for field in IDL order, as ros2-client serializes service messages.

use recd_ros2::type_description::{TypeDescription, TypeSource};
use ros2_client::Message;
use serde::{Deserialize, Serialize};

/// The request: which type, by name and hash, and whether to send its sources.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct GetTypeDescriptionRequest {
    pub type_name: String,
    pub type_hash: String,
    pub include_type_sources: bool,
}
impl Message for GetTypeDescriptionRequest {}

/// `type_description_interfaces/msg/KeyValue`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct KeyValue {
    pub key: String,
    pub value: String,
}

/// The response: the description and sources, or why the node has none.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct GetTypeDescriptionResponse {
    pub successful: bool,
    pub failure_reason: String,
    pub type_description: TypeDescription,
    pub type_sources: Vec<TypeSource>,
    pub extra_information: Vec<KeyValue>,
}
impl Message for GetTypeDescriptionResponse {}
