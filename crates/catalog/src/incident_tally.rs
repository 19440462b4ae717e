//! The incidents counted: by origin over all time, pinned, and waiting to be cut, in one
//! query however many the catalog holds.

use std::collections::BTreeMap;

use recd_control::CutState;
use rusqlite::params;

use crate::{Catalog, CatalogError};

/// How many incidents the catalog holds, by what they are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IncidentTally {
    /// Every incident, by origin.
    pub by_origin: BTreeMap<String, u64>,
    /// Incidents not released.
    pub pinned: u64,
    /// Incidents not released whose window is not cut yet.
    pub waiting_to_cut: u64,
}

impl Catalog {
    /// The incidents counted.
    pub fn incident_tally(&self) -> Result<IncidentTally, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT origin, COUNT(*),
                 SUM(released_ns IS NULL),
                 SUM(released_ns IS NULL AND cut = ?1)
             FROM incidents GROUP BY origin",
        )?;
        let rows = statement.query_map(params![CutState::Waiting.as_str()], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, i64>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, i64>(3)?,
            ))
        })?;
        let mut tally = IncidentTally::default();
        for row in rows {
            let (origin, all, pinned, waiting) = row?;
            tally.by_origin.insert(origin, all as u64);
            tally.pinned += pinned as u64;
            tally.waiting_to_cut += waiting as u64;
        }
        Ok(tally)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::NewIncident;

    fn incident(id: &str, session: i64, origin: &str, time_ns: u64) -> NewIncident {
        NewIncident {
            id: id.into(),
            session,
            note: String::new(),
            origin: origin.into(),
            time_ns,
            window: recd_storage::LogWindow {
                start_ns: time_ns - 10,
                end_ns: time_ns + 10,
            },
            created_ns: time_ns,
            keep_until_ns: None,
            release_after_upload: false,
            cut: CutState::Waiting,
            rule: None,
            topics: None,
        }
    }

    #[test]
    fn counts_by_origin_pinned_and_waiting_and_lists_the_newest() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
        assert_eq!(catalog.incident_tally().unwrap(), IncidentTally::default());
        let a = catalog
            .begin_session("a", Path::new("/data/a"), "{}", 1)
            .unwrap();
        for (id, origin, time) in [("1", "cli", 100), ("2", "page", 300), ("3", "cli", 200)] {
            assert!(catalog
                .add_incident(&incident(id, a, origin, time))
                .unwrap());
        }
        let key = |id: &str| crate::IncidentKey {
            id: id.into(),
            session: a,
        };
        catalog.set_cut(&key("1"), CutState::Cut, None).unwrap();
        assert_eq!(catalog.release_incidents("3", "released", 400).unwrap(), 1);
        let tally = catalog.incident_tally().unwrap();
        assert_eq!(
            tally.by_origin,
            BTreeMap::from([("cli".to_string(), 2), ("page".to_string(), 1)])
        );
        assert_eq!((tally.pinned, tally.waiting_to_cut), (2, 1));
        let newest: Vec<String> = (catalog.newest_incidents(2).unwrap().into_iter())
            .map(|incident| incident.id)
            .collect();
        assert_eq!(newest, ["2", "3"]);
    }
}
