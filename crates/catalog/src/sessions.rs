//! Session rows: a session's start, its end with the final per-topic counts, and
//! reading them back.

use std::path::{Path, PathBuf};

use recd_control::{SessionState, TopicReport};
use rusqlite::{params, OptionalExtension};

use crate::paths::DataDir;
use crate::{Catalog, CatalogError};

/// A session's catalog id.
pub type SessionId = i64;

/// One session as the catalog keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// Its id.
    pub id: SessionId,
    /// Its name.
    pub name: String,
    /// The directory its files go to.
    pub directory: PathBuf,
    /// The recording configuration it ran with, as JSON.
    pub config: String,
    /// Start, ns since the Unix epoch.
    pub started_ns: i64,
    /// Stop, ns since the Unix epoch.
    pub stopped_ns: Option<i64>,
    /// Its state.
    pub state: SessionState,
    /// Why it failed, when it did.
    pub reason: Option<String>,
}

impl Catalog {
    /// Records a session that starts now; returns its id.
    pub fn begin_session(
        &self,
        name: &str,
        directory: &Path,
        config: &str,
        started_ns: i64,
    ) -> Result<SessionId, CatalogError> {
        self.connection.execute(
            "INSERT INTO sessions (name, directory, config, started_ns, state) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![name, self.data_dir.store(directory), config, started_ns, SessionState::Recording.as_str()],
        )?;
        Ok(self.connection.last_insert_rowid())
    }

    /// Records that a running session's topic selection changed (`rec topics-set`): the
    /// `topics` of its recording configuration become `topics` (a JSON object).
    pub fn set_session_topics(&self, session: SessionId, topics: &str) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE sessions SET config = json_set(config, '$.topics', json(?2)) WHERE id = ?1",
            params![session, topics],
        )?;
        Ok(())
    }

    /// Records a session's end: its state (with the reason of a failure), stop time and
    /// final topic counts.
    pub fn finish_session(
        &mut self,
        session: SessionId,
        state: SessionState,
        reason: Option<&str>,
        stopped_ns: i64,
        topics: &[TopicReport],
    ) -> Result<(), CatalogError> {
        let transaction = self.connection.transaction()?;
        transaction.execute(
            "UPDATE sessions SET state = ?2, stopped_ns = ?3, reason = ?4 WHERE id = ?1",
            params![session, state.as_str(), stopped_ns, reason],
        )?;
        for topic in topics {
            transaction.execute(
                "INSERT OR REPLACE INTO topics (session, name, service, received, written, dropped, lost, bytes_written, overflows, paused, evicted, unknown_loss, filtered, repeated)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                params![
                    session,
                    topic.name,
                    topic.service,
                    topic.received as i64,
                    topic.written as i64,
                    topic.dropped as i64,
                    topic.lost as i64,
                    topic.bytes_written as i64,
                    topic.overflows as i64,
                    topic.paused as i64,
                    topic.evicted as i64,
                    topic.unknown_loss,
                    topic.filtered as i64,
                    topic.repeated as i64
                ],
            )?;
        }
        transaction.commit()?;
        Ok(())
    }

    /// Every session, newest first.
    pub fn sessions(&self) -> Result<Vec<Session>, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT id, name, directory, config, started_ns, stopped_ns, state, reason FROM sessions ORDER BY id DESC",
        )?;
        let rows = statement.query_map([], session_row)?;
        rows.map(|row| row?.into_session(&self.data_dir)).collect()
    }

    /// The session with id `id`.
    pub fn session(&self, id: SessionId) -> Result<Option<Session>, CatalogError> {
        self.connection
            .query_row(
                "SELECT id, name, directory, config, started_ns, stopped_ns, state, reason FROM sessions
                 WHERE id = ?1",
                params![id],
                session_row,
            )
            .optional()?
            .map(|session| session.into_session(&self.data_dir))
            .transpose()
    }

    /// The newest session named `name`.
    pub fn session_by_name(&self, name: &str) -> Result<Option<Session>, CatalogError> {
        self.connection
            .query_row(
                "SELECT id, name, directory, config, started_ns, stopped_ns, state, reason FROM sessions
                 WHERE name = ?1 ORDER BY id DESC LIMIT 1",
                params![name],
                session_row,
            )
            .optional()?
            .map(|session| session.into_session(&self.data_dir))
            .transpose()
    }

    /// The final topic counts of a session.
    pub fn topics(&self, session: SessionId) -> Result<Vec<TopicReport>, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT name, service, received, written, dropped, lost, bytes_written, overflows, paused, evicted, unknown_loss, filtered, repeated FROM topics
             WHERE session = ?1 ORDER BY name",
        )?;
        let rows = statement.query_map(params![session], |row| {
            Ok(TopicReport {
                name: row.get(0)?,
                service: row.get(1)?,
                received: row.get::<_, i64>(2)? as u64,
                written: row.get::<_, i64>(3)? as u64,
                dropped: row.get::<_, i64>(4)? as u64,
                lost: row.get::<_, i64>(5)? as u64,
                bytes_written: row.get::<_, i64>(6)? as u64,
                overflows: row.get::<_, i64>(7)? as u64,
                paused: row.get::<_, i64>(8)? as u64,
                evicted: row.get::<_, i64>(9)? as u64,
                unknown_loss: row.get::<_, i64>(10)? != 0,
                filtered: row.get::<_, i64>(11)? as u64,
                repeated: row.get::<_, i64>(12)? as u64,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

struct RawSession {
    id: i64,
    name: String,
    directory: String,
    config: String,
    started_ns: i64,
    stopped_ns: Option<i64>,
    state: String,
    reason: Option<String>,
}

impl RawSession {
    fn into_session(self, data_dir: &DataDir) -> Result<Session, CatalogError> {
        Ok(Session {
            id: self.id,
            name: self.name,
            directory: data_dir.resolve(&self.directory),
            config: self.config,
            started_ns: self.started_ns,
            stopped_ns: self.stopped_ns,
            state: parse_session_state(&self.state)?,
            reason: self.reason,
        })
    }
}

fn session_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawSession> {
    Ok(RawSession {
        id: row.get(0)?,
        name: row.get(1)?,
        directory: row.get(2)?,
        config: row.get(3)?,
        started_ns: row.get(4)?,
        stopped_ns: row.get(5)?,
        state: row.get(6)?,
        reason: row.get(7)?,
    })
}

fn parse_session_state(text: &str) -> Result<SessionState, CatalogError> {
    text.parse().map_err(|_| CatalogError::Corrupt {
        what: "session state",
        value: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use recd_control::FileState;

    use super::*;
    use crate::files::tests::file;

    #[test]
    fn sessions_files_and_counts_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let id = {
            let mut catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
            let id = catalog
                .begin_session("drive", Path::new("/data/drive"), "{}", 5)
                .unwrap();
            catalog
                .upsert_file(&file(id, "/data/drive/a.mcap", FileState::Recording))
                .unwrap();
            let mut done = file(id, "/data/drive/a.mcap", FileState::Complete);
            done.bytes = 1000;
            catalog.upsert_file(&done).unwrap();
            let topics = [TopicReport {
                name: "/camera".into(),
                service: "camera".into(),
                received: 3,
                written: 3,
                dropped: 0,
                lost: 1,
                overflows: 2,
                bytes_written: 300,
                paused: 4,
                evicted: 5,
                filtered: 7,
                repeated: 8,
                unknown_loss: true,
            }];
            catalog
                .finish_session(id, SessionState::Stopped, None, 9, &topics)
                .unwrap();
            id
        };
        let catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
        let session = catalog.session_by_name("drive").unwrap().unwrap();
        assert_eq!(session.id, id);
        assert_eq!(session.state, SessionState::Stopped);
        assert_eq!(session.stopped_ns, Some(9));
        let files = catalog.files(id).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].state, FileState::Complete);
        assert_eq!(files[0].bytes, 1000);
        assert_eq!(catalog.topics(id).unwrap()[0].lost, 1);
        assert_eq!(catalog.topics(id).unwrap()[0].overflows, 2);
        assert_eq!(catalog.topics(id).unwrap()[0].paused, 4);
        assert_eq!(catalog.topics(id).unwrap()[0].evicted, 5);
        assert_eq!(catalog.topics(id).unwrap()[0].filtered, 7);
        assert_eq!(catalog.topics(id).unwrap()[0].repeated, 8);
        assert!(catalog.topics(id).unwrap()[0].unknown_loss);
        assert!(catalog.session_by_name("other").unwrap().is_none());
    }
}
