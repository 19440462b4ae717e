//! Triggers and markers: a pre-trigger window written to a file, a marker into the files.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::incidents::{IncidentTaken, RuleFiring};

/// A trigger of a pre-trigger session.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TriggerRequest {
    /// The session; `None` means the only one running.
    pub name: Option<String>,
    /// Milliseconds before now to keep; `None` keeps the whole buffer.
    pub before_ms: Option<u64>,
    /// Milliseconds after now that still go to the file.
    pub after_ms: u64,
    /// Why; it goes into the file's `trigger` Metadata record.
    pub note: String,
    /// The trigger's moment, ns since the Unix epoch; `None` is when recd gets it. A
    /// moment ahead is waited for; one older than the buffer reaches is refused.
    pub at_ns: Option<u64>,
    /// The asker's id: a trigger repeated with the same id writes nothing new and gets
    /// the first one's answer; it is the incident's id.
    pub id: Option<String>,
    /// Who asks (an [`origin`](crate::origin) name); `None` is `cli`.
    pub origin: Option<String>,
    /// A rule's trigger: what fired it. Never on the wire: only recd's own rules set it.
    #[serde(skip)]
    pub rule: Option<RuleFiring>,
}

/// What a trigger made: a pre-trigger session's files, a disk session's incident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionTriggered {
    /// The session.
    pub name: String,
    /// The trigger's moment, ns since the Unix epoch.
    pub time_ns: u64,
    /// A pre-trigger session's files: one per source family of the session (none for a
    /// session on disk).
    pub files: Vec<TriggeredFile>,
    /// A session on disk: the incident whose window is pinned and will be cut.
    #[serde(default)]
    pub incident: Option<IncidentTaken>,
    /// The asker's id, if it gave one.
    #[serde(default)]
    pub id: Option<String>,
    /// A trigger with this id was taken before: this is its answer, nothing new written.
    #[serde(default)]
    pub repeated: bool,
}

/// A file a trigger writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggeredFile {
    /// Where it is.
    pub path: PathBuf,
    /// The first log time it holds, ns since the Unix epoch (latched samples aside).
    pub start_ns: u64,
    /// The last log time it holds, ns since the Unix epoch; it is complete once this has
    /// passed and it left the session's `current_files`.
    pub end_ns: u64,
    /// The trigger fell inside the window of a file being written, whose end it moved
    /// rather than start another.
    pub extended: bool,
}

/// A marker written into a session's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMarked {
    /// The session.
    pub name: String,
    /// The marker's time, ns since the Unix epoch.
    pub time_ns: u64,
    /// The files it goes into (those being written).
    pub files: Vec<PathBuf>,
}

#[cfg(test)]
mod rule_tests {
    use super::*;

    #[test]
    fn a_client_cannot_claim_a_rule_fired_its_trigger() {
        let json = r#"{"name":"drive","after_ms":0,"note":"","origin":"rule",
            "rule":{"rule":"hard_brake","topic":"/t","sample_ns":1,"values":{}}}"#;
        let request: TriggerRequest = serde_json::from_str(json).unwrap();
        assert_eq!(request.rule, None);
        let written = serde_json::to_string(&TriggerRequest {
            rule: Some(RuleFiring {
                rule: "hard_brake".into(),
                topic: "/t".into(),
                sample_ns: 1,
                values: Default::default(),
            }),
            ..Default::default()
        })
        .unwrap();
        assert!(!written.contains("hard_brake"), "{written}");
    }
}
