//! QoS: what the recorder's readers ask for, and how writers' offers are described in
//! the file.

use rustdds::policy::{self, Durability, History, Liveliness, Reliability};
use rustdds::{QosPolicies, QosPolicyBuilder};

use recd_ros2::qos as ros;

/// What a topic's reader requests, chosen the way rosbag2 chooses: reliable only if every
/// writer known is reliable, transient-local only if every one is (at least), so that the
/// reader matches all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReaderChoice {
    pub reliable: bool,
    pub transient_local: bool,
}

impl ReaderChoice {
    /// The choice that matches every writer offering `offers`. QoS missing from
    /// discovery means the DDS defaults for writers: reliable, volatile.
    pub fn for_offers<'a>(offers: impl IntoIterator<Item = &'a QosPolicies>) -> Self {
        let mut choice = Self {
            reliable: true,
            transient_local: true,
        };
        let mut any = false;
        for offer in offers {
            any = true;
            choice.reliable &= !matches!(offer.reliability(), Some(Reliability::BestEffort));
            choice.transient_local &= matches!(
                offer.durability(),
                Some(Durability::TransientLocal | Durability::Transient | Durability::Persistent)
            );
        }
        if !any {
            choice.transient_local = false;
        }
        choice
    }

    /// The reader's policies: the choice, a history of `depth` samples (rustdds' topic
    /// cache holds that many; the reader's own cache keeps all until taken, since the
    /// recorder takes everything each time), and both XCDR1 and XCDR2 data
    /// representation (a reader asking for XCDR1 only, the default, does not match an
    /// XCDR2 writer).
    pub fn policies(self, depth: i32) -> QosPolicies {
        let reliability = if self.reliable {
            Reliability::Reliable {
                max_blocking_time: rustdds::Duration::from_millis(100),
            }
        } else {
            Reliability::BestEffort
        };
        let durability = if self.transient_local {
            Durability::TransientLocal
        } else {
            Durability::Volatile
        };
        QosPolicyBuilder::new()
            .reliability(reliability)
            .durability(durability)
            .history(History::KeepAll)
            .resource_limits(policy::ResourceLimits {
                max_samples: depth,
                max_instances: i32::MAX,
                max_samples_per_instance: i32::MAX,
            })
            .build()
            .with_data_representation(policy::DataRepresentation {
                value: vec![
                    policy::XCDR_DATA_REPRESENTATION,
                    policy::XCDR2_DATA_REPRESENTATION,
                ],
            })
    }
}

/// A writer's offer as rosbag2 describes it in `offered_qos_profiles`.
pub(crate) fn ros_profile(offer: &QosPolicies) -> ros::QosProfile {
    let (history, depth) = match offer.history() {
        Some(History::KeepLast { depth }) => (ros::History::KeepLast, depth.max(0) as u32),
        Some(History::KeepAll) => (ros::History::KeepAll, 0),
        // Discovery does not carry a writer's history; rmw and rosbag2 say "unknown".
        None => (ros::History::Unknown, 0),
    };
    let reliability = match offer.reliability() {
        Some(Reliability::BestEffort) => ros::Reliability::BestEffort,
        _ => ros::Reliability::Reliable,
    };
    let durability = match offer.durability() {
        Some(Durability::TransientLocal | Durability::Transient | Durability::Persistent) => {
            ros::Durability::TransientLocal
        }
        _ => ros::Durability::Volatile,
    };
    let (liveliness, lease) = match offer.liveliness() {
        Some(Liveliness::ManualByTopic { lease_duration }) => {
            (ros::Liveliness::ManualByTopic, finite(lease_duration))
        }
        Some(Liveliness::ManualByParticipant { lease_duration }) => {
            // ROS 2 has no manual-by-participant liveliness any more.
            (ros::Liveliness::Unknown, finite(lease_duration))
        }
        Some(Liveliness::Automatic { lease_duration }) => {
            (ros::Liveliness::Automatic, finite(lease_duration))
        }
        None => (ros::Liveliness::Automatic, None),
    };
    ros::QosProfile {
        history,
        depth,
        reliability,
        durability,
        deadline: offer.deadline().and_then(|d| finite(d.0)),
        lifespan: offer.lifespan().and_then(|l| finite(l.duration)),
        liveliness,
        liveliness_lease_duration: lease,
        avoid_ros_namespace_conventions: false,
    }
}

/// `None` for DDS's infinite duration.
fn finite(duration: rustdds::Duration) -> Option<std::time::Duration> {
    (duration != rustdds::Duration::INFINITE).then(|| duration.to_std())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(reliability: Reliability, durability: Durability) -> QosPolicies {
        QosPolicyBuilder::new()
            .reliability(reliability)
            .durability(durability)
            .build()
    }

    const RELIABLE: Reliability = Reliability::Reliable {
        max_blocking_time: rustdds::Duration::ZERO,
    };

    #[test]
    fn the_reader_matches_the_weakest_writer() {
        let strong = offer(RELIABLE, Durability::TransientLocal);
        let weak = offer(Reliability::BestEffort, Durability::Volatile);
        assert_eq!(
            ReaderChoice::for_offers([&strong]),
            ReaderChoice {
                reliable: true,
                transient_local: true
            }
        );
        assert_eq!(
            ReaderChoice::for_offers([&strong, &weak]),
            ReaderChoice {
                reliable: false,
                transient_local: false
            }
        );
    }

    #[test]
    fn missing_qos_means_the_dds_writer_defaults() {
        let unspecified = QosPolicyBuilder::new().build();
        assert_eq!(
            ReaderChoice::for_offers([&unspecified]),
            ReaderChoice {
                reliable: true,
                transient_local: false
            }
        );
        let profile = ros_profile(&unspecified);
        assert_eq!(profile.reliability, ros::Reliability::Reliable);
        assert_eq!(profile.durability, ros::Durability::Volatile);
        assert_eq!((profile.history, profile.depth), (ros::History::Unknown, 0));
        assert_eq!(profile.deadline, None);
    }

    #[test]
    fn readers_accept_xcdr1_and_xcdr2() {
        let policies = ReaderChoice::for_offers([]).policies(8);
        let representations = policies.data_representation().unwrap().value;
        assert!(representations.contains(&policy::XCDR_DATA_REPRESENTATION));
        assert!(representations.contains(&policy::XCDR2_DATA_REPRESENTATION));
    }
}
