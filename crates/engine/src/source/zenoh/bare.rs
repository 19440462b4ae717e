//! A bare subscriber of a Zenoh domain: the Zenoh source's session and subscription,
//! without the recorder around them (no handoff, no writer, no file). Samples are counted
//! and dropped. It is the reference `recd-e2e zenoh` measures the recorder against: what
//! recd costs beyond it is recd's own, what it costs is Zenoh's.

use std::sync::{Arc, Mutex};

use zenoh::pubsub::Subscriber;
use zenoh::sample::Sample;
use zenoh::{Session, Wait};

use super::attachment::{Attachment, Gid};
use super::session::open_session;
use super::ZenohError;
use crate::config::ZenohConfig;
use crate::source::SequenceGaps;

/// What a [`BareZenohSubscriber`] received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BareZenohCounts {
    /// Samples received.
    pub received: u64,
    /// Samples missing between those received, by the publishers' sequence numbers.
    pub lost: u64,
    /// Payload bytes received.
    pub bytes: u64,
}

#[derive(Default)]
struct Tally {
    counts: BareZenohCounts,
    gaps: SequenceGaps<Gid>,
}

/// Every sample of a domain received the way the Zenoh source receives it, and nothing
/// else.
pub struct BareZenohSubscriber {
    session: Session,
    subscriber: Option<Subscriber<()>>,
    tally: Arc<Mutex<Tally>>,
}

impl BareZenohSubscriber {
    /// Joins the network as the Zenoh source does for `config` and subscribes to its
    /// domain's every key.
    pub fn open(config: &ZenohConfig) -> Result<Self, ZenohError> {
        let session = open_session(config)?;
        let tally = Arc::new(Mutex::new(Tally::default()));
        let counted = tally.clone();
        let key = format!("{}/**", config.domain);
        let subscriber = session
            .declare_subscriber(key.clone())
            .callback(move |sample: Sample| {
                let mut tally = counted.lock().unwrap_or_else(|e| e.into_inner());
                tally.counts.received += 1;
                tally.counts.bytes += sample.payload().len() as u64;
                if let Some(a) = sample.attachment().and_then(Attachment::parse) {
                    let lost = tally.gaps.track(a.gid, a.sequence);
                    tally.counts.lost += lost;
                }
            })
            .wait()
            .map_err(|e| ZenohError::Subscribe {
                what: key,
                reason: e.to_string(),
            })?;
        Ok(Self {
            session,
            subscriber: Some(subscriber),
            tally,
        })
    }

    /// What was received so far.
    pub fn counts(&self) -> BareZenohCounts {
        self.tally.lock().unwrap_or_else(|e| e.into_inner()).counts
    }

    /// Unsubscribes and leaves; returns what was received.
    pub fn close(mut self) -> BareZenohCounts {
        if let Some(subscriber) = self.subscriber.take() {
            let _ = subscriber.undeclare().wait();
        }
        let _ = self.session.close().wait();
        self.counts()
    }
}
