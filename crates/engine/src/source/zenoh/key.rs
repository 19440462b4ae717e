//! rmw_zenoh's data key expressions: `<domain>/<topic>/<type>/<type hash>`, the topic
//! without its leading slash (`0/robot/cmd_vel/geometry_msgs::msg::dds_::Twist_/RIHS01_…`).

/// A data key expression taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataKey<'a> {
    /// The ROS 2 domain (the first chunk).
    pub domain: &'a str,
    /// The ROS topic without its leading slash (`robot/cmd_vel`).
    pub topic: &'a str,
    /// The type as rmw_zenoh names it (`geometry_msgs::msg::dds_::Twist_`).
    pub type_name: &'a str,
    /// `RIHS01_<64 hex digits>`, or `TypeHashNotSupported` from older peers.
    pub type_hash: &'a str,
}

impl<'a> DataKey<'a> {
    /// Takes `key` apart; `None` for a key of fewer than four chunks (not rmw_zenoh's).
    pub fn parse(key: &'a str) -> Option<Self> {
        let (rest, type_hash) = key.rsplit_once('/')?;
        let (rest, type_name) = rest.rsplit_once('/')?;
        let (domain, topic) = rest.split_once('/')?;
        if [domain, topic, type_name, type_hash]
            .iter()
            .any(|c| c.is_empty())
        {
            return None;
        }
        Some(Self {
            domain,
            topic,
            type_name,
            type_hash,
        })
    }

    /// The ROS topic name (`/robot/cmd_vel`).
    pub fn ros_topic(&self) -> String {
        format!("/{}", self.topic)
    }
}

/// The key expression of `ros_topic` of `type_name` in `domain`, any type hash.
pub fn topic_key(domain: u16, ros_topic: &str, type_name: &str) -> String {
    format!(
        "{domain}/{}/{type_name}/*",
        ros_topic.trim_start_matches('/')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_come_apart_into_domain_topic_type_and_hash() {
        let key = DataKey::parse(
            "0/robot/cmd_vel/geometry_msgs::msg::dds_::Twist_/RIHS01_9c45bf16fe0983d80e3cfe750d6835843d265a9a6c46bd2e609fcddde6fb8d2a",
        )
        .unwrap();
        assert_eq!(key.domain, "0");
        assert_eq!(key.topic, "robot/cmd_vel");
        assert_eq!(key.ros_topic(), "/robot/cmd_vel");
        assert_eq!(key.type_name, "geometry_msgs::msg::dds_::Twist_");
        assert!(key.type_hash.starts_with("RIHS01_"));
        assert_eq!(DataKey::parse("0/chatter"), None);
        assert_eq!(DataKey::parse("0//t/h"), None);
        assert_eq!(
            topic_key(3, "/a/b", "std_msgs::msg::dds_::String_"),
            "3/a/b/std_msgs::msg::dds_::String_/*"
        );
    }
}
