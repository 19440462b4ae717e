//! How a DDS topic appears in the file: ROS 2 names and the `ros2` MCAP profile.

use std::collections::{BTreeMap, HashMap};

use recd_ros2::msgdef::{self, MessageDefinitions};
use recd_ros2::{names, qos as ros_qos, type_hash};
use recd_storage::dds as dds_keys;
use rustdds::QosPolicies;

use crate::topic::ChannelSpec;

/// A DDS topic's names in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Naming {
    /// The DDS topic name.
    pub dds_topic: String,
    /// The DDS type name.
    pub dds_type: String,
    /// The channel's topic: the ROS name (`/chatter` for `rt/chatter`) or the DDS name.
    pub channel: String,
    /// The schema's name: the ROS type (`std_msgs/msg/String`) or the DDS type name.
    pub schema: String,
    /// Whether the type follows ROS 2 conventions (its definition may be found).
    pub ros_type: bool,
}

impl Naming {
    /// Names a DDS topic of type `dds_type`.
    pub fn of(dds_topic: &str, dds_type: &str) -> Self {
        let ros_type = names::ros_type_name(dds_type);
        Self {
            dds_topic: dds_topic.to_string(),
            dds_type: dds_type.to_string(),
            channel: names::ros_topic_name(dds_topic).unwrap_or_else(|| dds_topic.to_string()),
            ros_type: ros_type.is_some(),
            schema: ros_type.unwrap_or_else(|| dds_type.to_string()),
        }
    }
}

/// One writer as discovery described it.
pub(crate) struct Offer<'a> {
    pub qos: &'a QosPolicies,
    pub user_data: &'a [u8],
}

/// Finds message definitions, each type once: from `.msg` files, else by the writer's
/// type hash among those learnt from the network ([`super::fetch`]) or kept from an
/// earlier session ([`super::type_cache`]).
pub(crate) struct Definitions {
    source: MessageDefinitions,
    found: HashMap<String, Result<String, String>>,
    /// What the network said of each type hash asked for: the definition, or why not.
    fetched: HashMap<String, Result<String, String>>,
    /// Where definitions learnt from the network are kept, if anywhere.
    cache: Option<std::path::PathBuf>,
}

impl Definitions {
    pub fn new(source: MessageDefinitions) -> Self {
        Self {
            source,
            found: HashMap::new(),
            fetched: HashMap::new(),
            cache: None,
        }
    }

    /// Also looks definitions up by type hash in `cache`.
    pub fn with_cache(mut self, cache: Option<std::path::PathBuf>) -> Self {
        self.cache = cache;
        self
    }

    /// Whether the topic of `naming` announcing `hash` needs its definition from the
    /// network: a ROS type no `.msg` file, earlier answer or kept file describes.
    pub fn needs_fetch(&mut self, naming: &Naming, hash: Option<&str>) -> bool {
        let Some(hash) = hash else {
            return false;
        };
        naming.ros_type
            && self.definition(&naming.schema).is_err()
            && !self.fetched.contains_key(hash)
            && self.kept(hash).is_none()
    }

    /// Takes what the network said of `hash`.
    pub fn learn(&mut self, hash: String, definition: Result<String, String>) {
        self.fetched.insert(hash, definition);
    }

    /// The definition kept for `hash` in the cache, remembered once read.
    fn kept(&mut self, hash: &str) -> Option<String> {
        let text = super::type_cache::load(self.cache.as_deref()?, hash)?;
        self.fetched.insert(hash.to_string(), Ok(text.clone()));
        Some(text)
    }

    /// The definition of a ROS type whose writer announced `hash`: from `.msg` files, else
    /// as learnt for the hash; the reasons of both when neither has it.
    fn definition_for(&mut self, ros_type: &str, hash: Option<&str>) -> Result<String, String> {
        let local = self.definition(ros_type);
        let Some(hash) = hash else {
            return local;
        };
        let learnt = self
            .fetched
            .get(hash)
            .cloned()
            .or_else(|| self.kept(hash).map(Ok));
        match (local, learnt) {
            (Ok(text), _) | (Err(_), Some(Ok(text))) => Ok(text),
            (Err(reason), Some(Err(network))) => {
                Err(format!("{reason}; asked the network for {hash}: {network}"))
            }
            (Err(reason), None) => Err(reason),
        }
    }

    /// The concatenated definition of a ROS type, or why there is none.
    fn definition(&mut self, ros_type: &str) -> Result<String, String> {
        self.found
            .entry(ros_type.to_string())
            .or_insert_with(|| {
                self.source
                    .definition(ros_type)
                    .map_err(|error| error.to_string())
            })
            .clone()
    }
}

/// The schema and channel records of a topic written by `offers` (WITH_KEY endpoints when
/// `keyed`), and, when the message definition is missing, why.
pub(crate) fn channel_spec(
    naming: &Naming,
    keyed: bool,
    offers: &[Offer<'_>],
    definitions: &mut Definitions,
) -> (ChannelSpec, Option<String>) {
    let mut metadata = BTreeMap::from([
        (dds_keys::TOPIC.to_string(), naming.dds_topic.clone()),
        (dds_keys::TYPE_NAME.to_string(), naming.dds_type.clone()),
        (dds_keys::KEYED.to_string(), keyed.to_string()),
    ]);
    let profiles: Vec<ros_qos::QosProfile> = offers
        .iter()
        .map(|offer| super::qos::ros_profile(offer.qos))
        .collect();
    metadata.insert(
        dds_keys::OFFERED_QOS_PROFILES.to_string(),
        ros_qos::offered_qos_profiles_yaml(&profiles),
    );
    if let Some(hash) = offered_hash(offers) {
        metadata.insert(dds_keys::TOPIC_TYPE_HASH.to_string(), hash);
    }
    ros2_channel(naming, metadata, definitions)
}

/// The type hash the first writer that announces one announces.
pub(crate) fn offered_hash(offers: &[Offer<'_>]) -> Option<String> {
    offers
        .iter()
        .find_map(|offer| type_hash::from_user_data(offer.user_data))
}

/// The channel of a topic of `naming` (recorded as CDR) with `metadata`: a ROS 2 type's
/// schema is its message definition (`ros2msg`), another's is named only (`omgidl`);
/// and, when the definition is missing, why.
pub(crate) fn ros2_channel(
    naming: &Naming,
    metadata: BTreeMap<String, String>,
    definitions: &mut Definitions,
) -> (ChannelSpec, Option<String>) {
    let (schema_encoding, definition) = if naming.ros_type {
        (
            msgdef::SCHEMA_ENCODING,
            definitions.definition_for(
                &naming.schema,
                metadata.get(dds_keys::TOPIC_TYPE_HASH).map(String::as_str),
            ),
        )
    } else {
        (
            "omgidl",
            Err(format!(
                "{} is not a ROS 2 type; no definition is recorded",
                naming.schema
            )),
        )
    };
    let (schema_data, missing) = match definition {
        Ok(text) => (text.into_bytes(), None),
        Err(reason) => (Vec::new(), Some(reason)),
    };
    let spec = ChannelSpec {
        message_encoding: dds_keys::MESSAGE_ENCODING.to_string(),
        schema_name: naming.schema.clone(),
        schema_encoding: schema_encoding.to_string(),
        schema_data,
        metadata,
    };
    (spec, missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_topics_get_ros_names() {
        assert_eq!(
            Naming::of("rt/chatter", "std_msgs::msg::dds_::String_"),
            Naming {
                dds_topic: "rt/chatter".into(),
                dds_type: "std_msgs::msg::dds_::String_".into(),
                channel: "/chatter".into(),
                schema: "std_msgs/msg/String".into(),
                ros_type: true,
            }
        );
        assert_eq!(
            Naming::of("Square", "ShapeType"),
            Naming {
                dds_topic: "Square".into(),
                dds_type: "ShapeType".into(),
                channel: "Square".into(),
                schema: "ShapeType".into(),
                ros_type: false,
            }
        );
    }

    #[test]
    fn the_channel_follows_the_ros2_profile() {
        let dir = tempfile::tempdir().unwrap();
        let msg = dir.path().join("std_msgs/msg");
        std::fs::create_dir_all(&msg).unwrap();
        std::fs::write(msg.join("String.msg"), "string data\n").unwrap();
        let mut definitions =
            Definitions::new(MessageDefinitions::new(vec![dir.path().to_path_buf()]));
        let qos = QosPolicies::qos_none();
        let hash = format!("typehash=RIHS01_{};", "ab".repeat(32));
        let offers = [Offer {
            qos: &qos,
            user_data: hash.as_bytes(),
        }];
        let naming = Naming::of("rt/chatter", "std_msgs::msg::dds_::String_");
        let (spec, missing) = channel_spec(&naming, false, &offers, &mut definitions);
        assert_eq!(missing, None);
        assert_eq!(spec.metadata["dds.topic"], "rt/chatter");
        assert_eq!(
            spec.metadata["dds.type_name"],
            "std_msgs::msg::dds_::String_"
        );
        assert_eq!(spec.metadata["dds.keyed"], "false");
        assert_eq!(spec.message_encoding, "cdr");
        assert_eq!(spec.schema_encoding, "ros2msg");
        assert_eq!(spec.schema_data, b"string data\n");
        assert_eq!(
            spec.metadata["topic_type_hash"],
            format!("RIHS01_{}", "ab".repeat(32))
        );
        assert!(spec.metadata["offered_qos_profiles"].contains("reliable"));

        let unknown = Naming::of("rt/odd", "odd_msgs::msg::dds_::Odd_");
        let (spec, missing) = channel_spec(&unknown, true, &offers, &mut definitions);
        assert_eq!(spec.metadata["dds.keyed"], "true");
        assert!(spec.schema_data.is_empty());
        assert!(missing.unwrap().contains("odd_msgs"));
    }
}
