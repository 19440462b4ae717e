//! What the fleet's cloud asked of this vehicle over MQTT: every request id taken (so that
//! one delivered twice, or replayed, is served once, across restarts), where a request
//! stands while its replies are due, and the uploads mode it set.

use recd_control::UploadsMode;
use rusqlite::{params, OptionalExtension};

use crate::{Catalog, CatalogError};

/// The tables of requests taken and of the fleet's settings.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS fleet_requests (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    taken_ns INTEGER NOT NULL,
    response_topic TEXT NOT NULL,
    correlation BLOB,
    state TEXT NOT NULL,
    done INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS fleet_settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
";

/// The setting that holds the uploads mode.
const UPLOADS_MODE: &str = "uploads_mode";

/// A request as it is taken: where its replies go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TakenRequest {
    /// Its id.
    pub id: String,
    /// Its kind (`window`, `release`, …).
    pub kind: String,
    /// When it was taken, ns since the Unix epoch.
    pub taken_ns: u64,
    /// Where its replies go.
    pub response_topic: String,
    /// What its replies carry back for the asker to match them.
    pub correlation: Option<Vec<u8>>,
    /// Where it stands (the state of its last reply).
    pub state: String,
}

impl Catalog {
    /// Records `request` as taken; `false` (and nothing changed) when its id was taken
    /// before.
    pub fn take_fleet_request(&self, request: &TakenRequest) -> Result<bool, CatalogError> {
        Ok(self.connection.execute(
            "INSERT OR IGNORE INTO fleet_requests (id, kind, taken_ns, response_topic, correlation, state)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                request.id,
                request.kind,
                request.taken_ns as i64,
                request.response_topic,
                request.correlation,
                request.state
            ],
        )? > 0)
    }

    /// When the request with `id` was taken, if it was.
    pub fn fleet_request_taken(&self, id: &str) -> Result<Option<u64>, CatalogError> {
        Ok(self
            .connection
            .query_row(
                "SELECT taken_ns FROM fleet_requests WHERE id = ?1",
                params![id],
                |row| row.get::<_, i64>(0),
            )
            .optional()?
            .map(|ns| ns as u64))
    }

    /// Records where the request `id` stands: its last reply's `state`, and whether no
    /// reply follows (`done`).
    pub fn settle_fleet_request(
        &self,
        id: &str,
        state: &str,
        done: bool,
    ) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE fleet_requests SET state = ?2, done = ?3 WHERE id = ?1",
            params![id, state, done],
        )?;
        Ok(())
    }

    /// The requests whose replies are still due, oldest first.
    pub fn open_fleet_requests(&self) -> Result<Vec<TakenRequest>, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT id, kind, taken_ns, response_topic, correlation, state FROM fleet_requests
             WHERE done = 0 ORDER BY taken_ns, rowid",
        )?;
        let rows = statement.query_map([], |row| {
            Ok(TakenRequest {
                id: row.get(0)?,
                kind: row.get(1)?,
                taken_ns: row.get::<_, i64>(2)? as u64,
                response_topic: row.get(3)?,
                correlation: row.get(4)?,
                state: row.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// What the uploads may carry now (`all` until the fleet said otherwise).
    pub fn uploads_mode(&self) -> Result<UploadsMode, CatalogError> {
        let value: Option<String> = self
            .connection
            .query_row(
                "SELECT value FROM fleet_settings WHERE name = ?1",
                params![UPLOADS_MODE],
                |row| row.get(0),
            )
            .optional()?;
        Ok(value
            .and_then(|name| UploadsMode::parse(&name).ok())
            .unwrap_or_default())
    }

    /// Sets what the uploads may carry; kept across restarts.
    pub fn set_uploads_mode(&self, mode: UploadsMode) -> Result<(), CatalogError> {
        self.connection.execute(
            "INSERT INTO fleet_settings (name, value) VALUES (?1, ?2)
             ON CONFLICT(name) DO UPDATE SET value = ?2",
            params![UPLOADS_MODE, mode.name()],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: &str, taken_ns: u64) -> TakenRequest {
        TakenRequest {
            id: id.into(),
            kind: "window".into(),
            taken_ns,
            response_topic: "recd/replies/op".into(),
            correlation: Some(b"c1".to_vec()),
            state: "accepted".into(),
        }
    }

    #[test]
    fn a_request_id_is_taken_once_and_remembered_across_restarts() {
        let state = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(state.path(), std::path::Path::new("/data")).unwrap();
        assert!(catalog.take_fleet_request(&request("r1", 5)).unwrap());
        assert!(!catalog.take_fleet_request(&request("r1", 9)).unwrap());
        assert!(catalog.take_fleet_request(&request("r2", 7)).unwrap());
        catalog.settle_fleet_request("r2", "done", true).unwrap();
        drop(catalog);
        let catalog = Catalog::open(state.path(), std::path::Path::new("/data")).unwrap();
        assert_eq!(catalog.fleet_request_taken("r1").unwrap(), Some(5));
        assert_eq!(catalog.fleet_request_taken("r3").unwrap(), None);
        assert_eq!(
            catalog.open_fleet_requests().unwrap(),
            vec![request("r1", 5)]
        );
    }

    #[test]
    fn the_uploads_mode_is_all_until_set_and_kept_across_restarts() {
        let state = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(state.path(), std::path::Path::new("/data")).unwrap();
        assert_eq!(catalog.uploads_mode().unwrap(), UploadsMode::All);
        catalog.set_uploads_mode(UploadsMode::Incidents).unwrap();
        drop(catalog);
        let catalog = Catalog::open(state.path(), std::path::Path::new("/data")).unwrap();
        assert_eq!(catalog.uploads_mode().unwrap(), UploadsMode::Incidents);
    }
}
