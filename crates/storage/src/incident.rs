//! Incidents: the moment a window of a session was kept around, its origin and why, as
//! the Metadata record named [`INCIDENT`] at the start of each cut file.

use std::collections::BTreeMap;

/// The name of an incident's Metadata record.
pub const INCIDENT: &str = "incident";

/// An incident as its cut files record it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IncidentRecord {
    /// Its id.
    pub id: String,
    /// Why (may be empty).
    pub note: String,
    /// Who made it: `cli`, `remote`, `page`, `fleet`, `buffer`.
    pub origin: String,
    /// Its moment T, ns since the Unix epoch.
    pub time_ns: u64,
    /// How far before T the window starts, ns.
    pub before_ns: u64,
    /// How far after T it ends, ns.
    pub after_ns: u64,
    /// The recorder's host.
    pub host: String,
    /// The session whose files were cut.
    pub session: String,
    /// What the host knew of its clock's synchronisation when it was taken.
    pub clock_sync: String,
    /// A rule's incident: the rule's name (empty for any other origin).
    pub rule: String,
    /// A rule's incident: the values its expression read at the sample that fired it
    /// (whose log time is `time_ns`), a JSON object keyed by path (`msg.accel.x`).
    pub rule_values: String,
}

impl IncidentRecord {
    /// The Metadata record's entries: `id`, `note`, `origin`, `time`, `before`, `after`
    /// (ns), `host`, `session`, `clock_sync`, and for a rule's incident `rule` and
    /// `rule_values`.
    pub fn record(&self) -> BTreeMap<String, String> {
        let rule = (!self.rule.is_empty()).then(|| {
            [
                ("rule".to_string(), self.rule.clone()),
                ("rule_values".to_string(), self.rule_values.clone()),
            ]
        });
        let mut entries = BTreeMap::from([
            ("id".to_string(), self.id.clone()),
            ("note".to_string(), self.note.clone()),
            ("origin".to_string(), self.origin.clone()),
            ("time".to_string(), self.time_ns.to_string()),
            ("before".to_string(), self.before_ns.to_string()),
            ("after".to_string(), self.after_ns.to_string()),
            ("host".to_string(), self.host.clone()),
            ("session".to_string(), self.session.clone()),
            ("clock_sync".to_string(), self.clock_sync.clone()),
        ]);
        entries.extend(rule.into_iter().flatten());
        entries
    }

    /// The incident a Metadata record of `name` holds, if it is one.
    pub fn from_record(name: &str, entries: &BTreeMap<String, String>) -> Option<Self> {
        if name != INCIDENT {
            return None;
        }
        let number = |key: &str| entries.get(key)?.parse().ok();
        let text = |key: &str| entries.get(key).cloned().unwrap_or_default();
        Some(Self {
            id: text("id"),
            note: text("note"),
            origin: text("origin"),
            time_ns: number("time")?,
            before_ns: number("before")?,
            after_ns: number("after")?,
            host: text("host"),
            session: text("session"),
            clock_sync: text("clock_sync"),
            rule: text("rule"),
            rule_values: text("rule_values"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_incident_reads_back_from_its_record() {
        let incident = IncidentRecord {
            id: "42".into(),
            note: "hard brake".into(),
            origin: "fleet".into(),
            time_ns: 10,
            before_ns: 3,
            after_ns: 4,
            host: "ecu1".into(),
            session: "drive".into(),
            clock_sync: "unknown".into(),
            rule: String::new(),
            rule_values: String::new(),
        };
        assert_eq!(
            IncidentRecord::from_record(INCIDENT, &incident.record()),
            Some(incident.clone())
        );
        assert!(!incident.record().contains_key("rule"));
        let fired = IncidentRecord {
            rule: "hard_brake".into(),
            rule_values: r#"{"msg.accel.x":-6.5}"#.into(),
            ..incident.clone()
        };
        assert_eq!(fired.record()["rule"], "hard_brake");
        assert_eq!(
            IncidentRecord::from_record(INCIDENT, &fired.record()),
            Some(fired)
        );
        assert_eq!(
            IncidentRecord::from_record("marker", &incident.record()),
            None
        );
    }
}
