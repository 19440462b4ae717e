//! `rec topics`: what could be recorded now, found with the sources a session would use
//! (recd's iceoryx2 prefix, DDS interfaces and message directories).

use std::path::PathBuf;
use std::time::Duration;

use recd_control::{ErrorKind, ErrorReply, StartRequest, TopicOnOffer, TopicsFound, TopicsRequest};

use super::replies::error;
use super::Sessions;

/// The longest discovery or measuring time a request may ask for.
const LONGEST: Duration = Duration::from_secs(60);

impl Sessions {
    /// Receives what recd's configuration and `request` select for a while and reports
    /// each topic with its type, publishers and rates; writes nothing.
    pub fn topics(&self, request: &TopicsRequest) -> Result<TopicsFound, ErrorReply> {
        let discovery = Duration::from_millis(request.discovery_ms);
        let window = Duration::from_millis(request.window_ms);
        if discovery > LONGEST || window > LONGEST || window.is_zero() {
            return Err(error(
                ErrorKind::InvalidArgument,
                "topics are measured for more than 0 s and at most 60 s, after at most 60 s of discovery",
            ));
        }
        let start = StartRequest {
            dds_domain: request.dds_domain,
            no_iceoryx2: request.no_iceoryx2,
            topic_types: request.topic_types.clone(),
            exclude_topic_types: request.exclude_topic_types.clone(),
            ..StartRequest::default()
        };
        let config = self
            .config
            .recording
            .recording_config(&start, String::new(), PathBuf::new())
            .map_err(|e| error(ErrorKind::InvalidArgument, e.to_string()))?;
        let survey = recd_engine::survey(&config, discovery, window)
            .map_err(|e| error(ErrorKind::Failed, e.to_string()))?;
        let topics: Vec<TopicOnOffer> = survey
            .topics
            .into_iter()
            .map(|topic| TopicOnOffer {
                name: topic.name,
                service: topic.service,
                type_name: topic.type_name,
                publishers: topic.publishers,
                messages_per_s: topic.messages_per_s,
                bytes_per_s: topic.bytes_per_s,
            })
            .collect();
        Ok(TopicsFound {
            topics,
            problems: survey.problems,
        })
    }
}
