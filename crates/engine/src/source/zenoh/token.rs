//! rmw_zenoh's liveliness tokens, by which its entities announce themselves:
//! `@ros2_lv/<domain>/<session id>/<node id>/<entity id>/<kind>/<enclave>/<namespace>/<node>`
//! and, for publishers, subscriptions, services and clients,
//! `/<topic>/<type>/<type hash>/<qos>` after it (Jazzy's 0.2, Kilted's 0.6 and Rolling's
//! 0.12 alike; Rolling's may add a last chunk naming buffer backends). `/` within a name
//! is written `%`, and an empty name is `%` alone.

use recd_ros2::qos::QosProfile;

/// The first chunk of every token.
pub(super) const PREFIX: &str = "@ros2_lv";

/// The key expression of every token of `domain`.
pub(super) fn domain_tokens(domain: u16) -> String {
    format!("{PREFIX}/{domain}/**")
}

/// What kind of entity a token announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntityKind {
    Node,
    Publisher,
    Subscription,
    ServiceServer,
    ServiceClient,
}

impl EntityKind {
    fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "NN" => Self::Node,
            "MP" => Self::Publisher,
            "MS" => Self::Subscription,
            "SS" => Self::ServiceServer,
            "SC" => Self::ServiceClient,
            _ => return None,
        })
    }
}

/// The topic part of a publisher's, subscription's, service's or client's token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TopicPart {
    /// The ROS name (`/chatter`).
    pub ros_topic: String,
    /// rmw_zenoh's type name (`std_msgs::msg::dds_::String_`).
    pub type_name: String,
    pub type_hash: String,
    /// `None` when the QoS field does not parse.
    pub qos: Option<QosProfile>,
}

/// A liveliness token taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub domain: String,
    /// The Zenoh session's id.
    pub zid: String,
    pub node_id: String,
    pub entity_id: String,
    pub kind: EntityKind,
    pub namespace: String,
    pub node: String,
    pub topic: Option<TopicPart>,
}

/// A token recd does not know how to read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TokenError {
    /// Not under `@ros2_lv`.
    #[error("not under {PREFIX}")]
    Prefix,
    /// An entity kind rmw_zenoh did not use when recd was written.
    #[error("entity kind {0:?}")]
    Kind(String),
    /// A number of chunks no known version writes for its kind.
    #[error("{chunks} chunks for entity kind {kind}")]
    Chunks { kind: String, chunks: usize },
}

impl TokenError {
    /// The format this error names, to report each once.
    pub fn format(&self) -> String {
        self.to_string()
    }
}

impl Token {
    /// Takes a token's key expression apart.
    pub fn parse(key: &str) -> Result<Self, TokenError> {
        let chunks: Vec<&str> = key.split('/').collect();
        if chunks.first() != Some(&PREFIX) {
            return Err(TokenError::Prefix);
        }
        let kind_text = chunks.get(5).copied().unwrap_or_default();
        let kind =
            EntityKind::parse(kind_text).ok_or_else(|| TokenError::Kind(kind_text.into()))?;
        let known = match kind {
            EntityKind::Node => chunks.len() == 9,
            _ => matches!(chunks.len(), 13 | 14),
        };
        if !known || chunks.iter().any(|c| c.is_empty()) {
            return Err(TokenError::Chunks {
                kind: kind_text.into(),
                chunks: chunks.len(),
            });
        }
        let topic = (kind != EntityKind::Node).then(|| TopicPart {
            ros_topic: demangle(chunks[9]),
            type_name: chunks[10].to_string(),
            type_hash: chunks[11].to_string(),
            qos: super::qos::parse(chunks[12]),
        });
        Ok(Self {
            domain: chunks[1].into(),
            zid: chunks[2].into(),
            node_id: chunks[3].into(),
            entity_id: chunks[4].into(),
            kind,
            namespace: demangle(chunks[7]),
            node: demangle(chunks[8]),
            topic,
        })
    }
}

/// The GID of the entity whose token is `key`, as rmw_zenoh derives it: the XXH3-128 of
/// the token's key expression, low half first.
pub fn gid_of(key: &str) -> super::attachment::Gid {
    xxhash_rust::xxh3::xxh3_128(key.as_bytes()).to_le_bytes()
}

/// What a publisher's token says of it.
pub struct PublisherToken<'a> {
    /// The ROS 2 domain.
    pub domain: u16,
    /// The Zenoh session's id.
    pub zid: &'a str,
    /// The node's and the publisher's ids within the session.
    pub node_id: u32,
    /// The publisher's id within the session.
    pub entity_id: u32,
    /// The node's namespace (`/` for none) and name.
    pub namespace: &'a str,
    /// The node's name.
    pub node: &'a str,
    /// The ROS topic (`/chatter`).
    pub ros_topic: &'a str,
    /// rmw_zenoh's type name and type hash.
    pub type_name: &'a str,
    /// `RIHS01_…`.
    pub type_hash: &'a str,
    /// The QoS field ([`super::qos::to_field`]).
    pub qos: &'a str,
}

/// The key expression of a node's liveliness token (enclave `/`): `node_id` twice, as
/// rmw_zenoh writes a node's own id as its entity id.
pub fn node_token(domain: u16, zid: &str, node_id: u32, namespace: &str, node: &str) -> String {
    format!(
        "{PREFIX}/{domain}/{zid}/{node_id}/{node_id}/NN/%/{}/{}",
        mangle(namespace),
        mangle(node)
    )
}

/// The key expression of a publisher's liveliness token (enclave `/`).
pub fn publisher_token(token: &PublisherToken<'_>) -> String {
    format!(
        "{PREFIX}/{}/{}/{}/{}/MP/%/{}/{}/{}/{}/{}/{}",
        token.domain,
        token.zid,
        token.node_id,
        token.entity_id,
        mangle(token.namespace),
        mangle(token.node),
        mangle(token.ros_topic),
        mangle(token.type_name),
        mangle(token.type_hash),
        token.qos
    )
}

/// A name as rmw_zenoh writes it in a chunk: `%` for `/`, `%` alone for an empty one.
pub fn mangle(name: &str) -> String {
    if name.is_empty() {
        "%".into()
    } else {
        name.replace('/', "%")
    }
}

/// A chunk's name.
fn demangle(chunk: &str) -> String {
    chunk.replace('%', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_publishers_token_names_its_topic_type_hash_and_qos() {
        let token = Token::parse(
            "@ros2_lv/0/aac3178e146ba6f1fc6e6a4085e77f21/0/11/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18/::,7:,:,:,,",
        )
        .unwrap();
        assert_eq!(token.kind, EntityKind::Publisher);
        assert_eq!(token.domain, "0");
        assert_eq!(token.node, "talker");
        assert_eq!(token.namespace, "/");
        let topic = token.topic.unwrap();
        assert_eq!(topic.ros_topic, "/chatter");
        assert_eq!(topic.type_name, "std_msgs::msg::dds_::String_");
        assert!(topic.type_hash.starts_with("RIHS01_df66"));
        assert_eq!(topic.qos.unwrap().depth, 7);
    }

    #[test]
    fn nodes_and_unknown_formats() {
        let node = Token::parse("@ros2_lv/3/zid/1/1/NN/%/%robot/driver").unwrap();
        assert_eq!(node.kind, EntityKind::Node);
        assert_eq!(node.namespace, "/robot");
        assert_eq!(node.topic, None);
        assert_eq!(
            Token::parse("@ros2_lv/0/zid/0/1/XX/%/%/n"),
            Err(TokenError::Kind("XX".into()))
        );
        let error = Token::parse("@ros2_lv/0/zid/0/1/MP/%/%/n/%t/T").unwrap_err();
        assert_eq!(error.format(), "11 chunks for entity kind MP");
        assert_eq!(mangle("/a/b"), "%a%b");
        let node = Token::parse(&node_token(4, "ab12", 0, "/", "rec_play")).unwrap();
        assert_eq!(
            (node.kind, node.node.as_str()),
            (EntityKind::Node, "rec_play")
        );
        let key = publisher_token(&PublisherToken {
            domain: 4,
            zid: "ab12",
            node_id: 0,
            entity_id: 2,
            namespace: "/",
            node: "rec_play",
            ros_topic: "/a/b",
            type_name: "std_msgs::msg::dds_::String_",
            type_hash: "RIHS01_00",
            qos: "::,7:,:,:,,",
        });
        let token = Token::parse(&key).unwrap();
        assert_eq!(token.kind, EntityKind::Publisher);
        assert_eq!(token.topic.unwrap().ros_topic, "/a/b");
        assert_eq!(gid_of(&key), gid_of(&key));
        assert_ne!(gid_of(&key), gid_of("@ros2_lv/4/other"));
        assert_eq!(mangle(""), "%");
    }
}
