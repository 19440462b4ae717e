//! A window of time asked for by its bounds rather than around a trigger (the fleet's
//! cloud asks so): an incident of every session, running or stopped, whose files hold
//! part of it, all under one id.

use std::collections::{BTreeMap, BTreeSet};

use recd_catalog::SessionId;
use recd_control::{ErrorKind, ErrorReply, SessionTriggered, TriggerRequest};

use super::moment::Sides;
use super::taking::OnDisk;
use super::Incidents;
use crate::clock::rfc3339;
use crate::sessions::replies::{catalog_failure, error};

/// The most recorded topics a refusal of a window's topics names.
const SHOWN_TOPICS: usize = 20;

/// A window to keep: its bounds, who asks and why.
#[derive(Debug, Clone)]
pub struct WindowTake {
    /// The incidents' id, shared by every session's.
    pub id: String,
    /// Its start, ns since the Unix epoch.
    pub start_ns: u64,
    /// Its end.
    pub end_ns: u64,
    /// Why.
    pub note: String,
    /// Who asks (an origin name).
    pub origin: String,
    /// Glob patterns of the topics to keep (as `--topic` takes them); `None` keeps every
    /// topic.
    pub topics: Option<Vec<String>>,
}

impl Incidents {
    /// Takes `window` of every session whose files on the disk hold part of it (each an
    /// incident with the window's id, pinned and cut as a trigger's). Refused, naming the
    /// oldest moment held, when it starts before anything the disk still holds; refused
    /// when no session holds any of it. With topics, only sessions that recorded a
    /// topic matching them (or whose topics are not known yet) are taken, and their cuts
    /// keep only those topics; refused, naming the patterns, when no such session holds
    /// any of it. A session that refuses (its pinned bound) is logged and left out unless
    /// every one refuses.
    pub fn take_window(&self, window: &WindowTake) -> Result<Vec<SessionTriggered>, ErrorReply> {
        let mut sessions = self.sessions_holding(window)?;
        if let Some(patterns) = &window.topics {
            sessions = self.sessions_recording(sessions, patterns, window)?;
        }
        let mut taken = Vec::new();
        let mut refused = None;
        for (id, name) in sessions {
            let bytes_per_s = (self.registry.get(Some(&name)).ok())
                .filter(|running| running.id == id)
                .map_or(0.0, |running| running.bytes_per_s());
            let session = OnDisk {
                name,
                id,
                bytes_per_s,
            };
            let request = TriggerRequest {
                name: Some(session.name.clone()),
                before_ms: Some(0),
                after_ms: (window.end_ns - window.start_ns).div_ceil(1_000_000),
                note: window.note.clone(),
                at_ns: Some(window.start_ns),
                id: Some(window.id.clone()),
                origin: Some(window.origin.clone()),
                rule: None,
            };
            let sides = Sides::of(&request)?;
            match self.take(&session, &request, sides, window.topics.as_deref()) {
                Ok(triggered) => taken.push(triggered),
                Err(why) => {
                    tracing::warn!(session = %session.name, id = window.id, "the window is not kept of this session: {}", why.message);
                    refused.get_or_insert(why);
                }
            }
        }
        match refused {
            Some(why) if taken.is_empty() => Err(why),
            _ => Ok(taken),
        }
    }

    /// Of `sessions`, those that recorded a topic matching `patterns`, or whose topics
    /// are not known (a session that ended without saying); refused, naming the patterns
    /// and the topics recorded, when none is left.
    fn sessions_recording(
        &self,
        sessions: Vec<(SessionId, String)>,
        patterns: &[String],
        window: &WindowTake,
    ) -> Result<Vec<(SessionId, String)>, ErrorReply> {
        let filter =
            super::topic_filter(patterns).map_err(|why| error(ErrorKind::InvalidArgument, why))?;
        let mut recorded: Vec<(SessionId, String, Vec<String>)> = Vec::new();
        {
            let catalog = self.catalog();
            for (id, name) in sessions {
                let topics = catalog.topics(id).map_err(catalog_failure)?;
                let topics = topics.into_iter().map(|topic| topic.name).collect();
                recorded.push((id, name, topics));
            }
        }
        let mut matching = Vec::new();
        let mut seen = BTreeSet::new();
        for (id, name, mut topics) in recorded {
            // A running session's topics reach the catalog once it stops.
            if let Some(running) = self.registry.by_id(id) {
                topics.extend(
                    running
                        .recording
                        .status()
                        .topics
                        .into_iter()
                        .map(|t| t.name),
                );
            }
            if topics.is_empty() || topics.iter().any(|topic| filter.matches(topic)) {
                matching.push((id, name));
            } else {
                tracing::info!(session = %name, id = window.id, "the window is not kept of this session: it recorded no topic asked for");
                seen.extend(topics);
            }
        }
        if matching.is_empty() {
            let mut recorded: Vec<String> = seen.into_iter().collect();
            let more = recorded.len().saturating_sub(SHOWN_TOPICS);
            recorded.truncate(SHOWN_TOPICS);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            return Err(error(
                ErrorKind::InvalidArgument,
                format!(
                    "no recording holding the window {} to {} recorded a topic matching {patterns:?} (they recorded {}{more}): ask for topics they recorded, or leave topics out",
                    rfc3339(window.start_ns),
                    rfc3339(window.end_ns),
                    recorded.join(", "),
                ),
            ));
        }
        Ok(matching)
    }

    /// The sessions (id, name) whose files on the disk overlap `window`, oldest first.
    fn sessions_holding(
        &self,
        window: &WindowTake,
    ) -> Result<Vec<(SessionId, String)>, ErrorReply> {
        let catalog = self.catalog();
        let held = catalog.held_files().map_err(catalog_failure)?;
        let oldest = held.iter().filter_map(|file| file.start_ns).min();
        match oldest {
            None => {
                return Err(error(
                    ErrorKind::InvalidArgument,
                    "this vehicle holds no recording: nothing of the window is left",
                ))
            }
            Some(oldest) if window.start_ns < oldest => {
                return Err(error(
                    ErrorKind::InvalidArgument,
                    format!(
                        "the window starts at {}, before the oldest moment this vehicle still holds ({}): ask from then on",
                        rfc3339(window.start_ns),
                        rfc3339(oldest)
                    ),
                ))
            }
            Some(_) => {}
        }
        let mut sessions = BTreeMap::new();
        for file in &held {
            let Some(start) = file.start_ns else { continue };
            let end = if file.recording {
                u64::MAX
            } else {
                file.end_ns.unwrap_or(start)
            };
            if start <= window.end_ns && end >= window.start_ns {
                sessions.entry(file.session).or_insert(());
            }
        }
        let mut named = Vec::new();
        for id in sessions.into_keys() {
            if let Some(session) = catalog.session(id).map_err(catalog_failure)? {
                named.push((id, session.name));
            }
        }
        if named.is_empty() {
            return Err(error(
                ErrorKind::InvalidArgument,
                format!(
                    "no recording on this vehicle holds any of the window {} to {} (it was not recording then)",
                    rfc3339(window.start_ns),
                    rfc3339(window.end_ns)
                ),
            ));
        }
        Ok(named)
    }
}
