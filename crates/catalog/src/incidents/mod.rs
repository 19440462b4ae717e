//! Incidents and what they pin: each is a moment with a window of one session, kept in
//! the catalog so that a pin made before a crash or a power cut still holds after it, and
//! a cut that was interrupted is made again. A recording file is pinned while an
//! incident of its session that is not released overlaps it in time; an incident's own
//! files (its cut files, or a pre-trigger session's window file) are pinned while it
//! is. Incidents own their files many to many (`incident_files`): a window file that
//! two overlapping triggers share belongs to both, and stays while either pins it.

mod pins;
#[cfg(test)]
mod tests;

use std::path::Path;

use recd_control::{CutState, FileState, Incident, IncidentFile, Released, RuleFiring};
use recd_storage::LogWindow;
use rusqlite::{params, OptionalExtension};

use crate::files::parse_file_state;
use crate::uploads::parse_upload_state;
use crate::{Catalog, CatalogError, SessionId};

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS incidents (
    id TEXT NOT NULL,
    session INTEGER NOT NULL REFERENCES sessions(id),
    note TEXT NOT NULL,
    origin TEXT NOT NULL,
    time_ns INTEGER NOT NULL,
    start_ns INTEGER NOT NULL,
    end_ns INTEGER NOT NULL,
    created_ns INTEGER NOT NULL,
    keep_until_ns INTEGER,
    release_after_upload INTEGER NOT NULL DEFAULT 0,
    cut TEXT NOT NULL,
    cut_error TEXT,
    released_ns INTEGER,
    released_why TEXT,
    PRIMARY KEY (id, session)
);
CREATE TABLE IF NOT EXISTS incident_files (
    incident TEXT NOT NULL,
    session INTEGER NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (incident, session, path)
);
CREATE INDEX IF NOT EXISTS incident_files_by_path ON incident_files(path);
";

/// Brings an older catalog's incident files (one incident per file, in `files.incident`)
/// into `incident_files`; nothing once done.
pub(crate) const MOVE_OWN_FILES: &str = "
INSERT OR IGNORE INTO incident_files (incident, session, path)
    SELECT incident, session, path FROM files WHERE incident IS NOT NULL;
UPDATE files SET incident = NULL WHERE incident IS NOT NULL;
";

/// An incident to add.
#[derive(Debug, Clone, PartialEq)]
pub struct NewIncident {
    /// Its id.
    pub id: String,
    /// The session whose files it keeps.
    pub session: SessionId,
    /// Why.
    pub note: String,
    /// Who made it (a `recd_control::origin` name).
    pub origin: String,
    /// Its moment, ns since the Unix epoch.
    pub time_ns: u64,
    /// The window it keeps.
    pub window: LogWindow,
    /// When it was taken.
    pub created_ns: u64,
    /// When its pin ends by itself.
    pub keep_until_ns: Option<u64>,
    /// Its pin ends once its cut files are uploaded.
    pub release_after_upload: bool,
    /// How far its cut is.
    pub cut: CutState,
    /// A rule's incident: what fired it.
    pub rule: Option<RuleFiring>,
    /// Glob patterns of the topics its cut keeps; `None` keeps every topic.
    pub topics: Option<Vec<String>>,
}

/// An incident's row: its key and window, for the cutter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IncidentKey {
    /// Its id.
    pub id: String,
    /// Its session.
    pub session: SessionId,
}

const INCIDENT_COLUMNS: &str = "i.id, s.name, i.note, i.origin, i.time_ns, i.start_ns, i.end_ns, i.created_ns, i.cut, i.cut_error, i.keep_until_ns, i.release_after_upload, i.released_ns, i.released_why, i.session, i.rule, i.topics";

/// The SQL condition that a file (its columns prefixed by `file`, e.g. `f.`) spans some
/// of the window from `start` to `end` (SQL expressions); a file whose end is unknown (it
/// is open, or a crash left it so) spans everything from its start on.
fn spans(file: &str, start: &str, end: &str) -> String {
    format!(
        "({file}start_ns IS NULL OR {file}start_ns <= {end}) AND ({file}end_ns IS NULL OR {file}end_ns >= {start})"
    )
}

/// The SQL condition that the file (its columns prefixed by `file`) is an incident's own
/// (a cut file, or a pre-trigger session's window file), not a recording of its session.
pub(crate) fn own(file: &str) -> String {
    format!("EXISTS (SELECT 1 FROM incident_files o WHERE o.path = {file}path)")
}

/// The SQL condition that the file `f` is one of incident `i`'s own.
const OWN_OF_I: &str = "EXISTS (SELECT 1 FROM incident_files o
    WHERE o.path = f.path AND o.incident = i.id AND o.session = i.session)";

/// Recording files (not incidents' own) of incident `i`'s session overlapping its window.
fn overlaps() -> String {
    format!(
        "f.session = i.session AND NOT {} AND {}",
        own("f."),
        spans("f.", "i.start_ns", "i.end_ns")
    )
}

impl Catalog {
    /// Adds `incident`; false when one with its id exists for its session already.
    pub fn add_incident(&self, incident: &NewIncident) -> Result<bool, CatalogError> {
        let added = self.connection.execute(
            "INSERT OR IGNORE INTO incidents (id, session, note, origin, time_ns, start_ns, end_ns,
                 created_ns, keep_until_ns, release_after_upload, cut, rule, topics)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            params![
                incident.id,
                incident.session,
                incident.note,
                incident.origin,
                incident.time_ns as i64,
                incident.window.start_ns as i64,
                incident.window.end_ns as i64,
                incident.created_ns as i64,
                incident.keep_until_ns.map(|ns| ns as i64),
                incident.release_after_upload,
                incident.cut.as_str(),
                incident
                    .rule
                    .as_ref()
                    .map(|rule| serde_json::to_string(rule).expect("a rule firing serializes")),
                incident
                    .topics
                    .as_ref()
                    .map(|topics| serde_json::to_string(topics).expect("strings serialize")),
            ],
        )?;
        Ok(added > 0)
    }

    /// Whether an incident with `id` exists for `session`.
    pub fn has_incident(&self, id: &str, session: SessionId) -> Result<bool, CatalogError> {
        Ok(self
            .connection
            .query_row(
                "SELECT 1 FROM incidents WHERE id = ?1 AND session = ?2",
                params![id, session],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
    }

    /// The incidents of `session`, or of all sessions, newest first, with their files.
    pub fn incidents(&self, session: Option<SessionId>) -> Result<Vec<Incident>, CatalogError> {
        self.incidents_where("?1 IS NULL OR i.session = ?1", None, params![session])
    }

    /// The `limit` newest incidents of all sessions, newest first, with their files.
    pub fn newest_incidents(&self, limit: usize) -> Result<Vec<Incident>, CatalogError> {
        self.incidents_where("1", Some(limit), params![])
    }

    /// The incident `key`, with its files.
    pub fn incident(&self, key: &IncidentKey) -> Result<Option<Incident>, CatalogError> {
        Ok(self
            .incidents_where(
                "i.id = ?1 AND i.session = ?2",
                None,
                params![key.id, key.session],
            )?
            .into_iter()
            .next())
    }

    fn incidents_where(
        &self,
        condition: &str,
        limit: Option<usize>,
        parameters: impl rusqlite::Params,
    ) -> Result<Vec<Incident>, CatalogError> {
        // SQLite reads a negative limit as none.
        let limit = limit.map_or(-1, |limit| i64::try_from(limit).unwrap_or(i64::MAX));
        let mut statement = self.connection.prepare(&format!(
            "SELECT {INCIDENT_COLUMNS} FROM incidents i JOIN sessions s ON s.id = i.session
             WHERE {condition} ORDER BY i.time_ns DESC, i.rowid DESC LIMIT {limit}"
        ))?;
        let rows = statement.query_map(parameters, |row| {
            Ok((
                Incident {
                    id: row.get(0)?,
                    session: row.get(1)?,
                    note: row.get(2)?,
                    origin: row.get(3)?,
                    time_ns: row.get::<_, i64>(4)? as u64,
                    start_ns: row.get::<_, i64>(5)? as u64,
                    end_ns: row.get::<_, i64>(6)? as u64,
                    created_ns: row.get::<_, i64>(7)? as u64,
                    cut: CutState::Waiting,
                    cut_error: row.get(9)?,
                    keep_until_ns: row.get::<_, Option<i64>>(10)?.map(|ns| ns as u64),
                    release_after_upload: row.get(11)?,
                    released: match (
                        row.get::<_, Option<i64>>(12)?,
                        row.get::<_, Option<String>>(13)?,
                    ) {
                        (Some(at_ns), why) => Some(Released {
                            at_ns: at_ns as u64,
                            why: why.unwrap_or_default(),
                        }),
                        (None, _) => None,
                    },
                    pinned_files: Vec::new(),
                    cut_files: Vec::new(),
                    rule: None,
                    topics: None,
                },
                row.get::<_, String>(8)?,
                row.get::<_, SessionId>(14)?,
                row.get::<_, Option<String>>(15)?,
                row.get::<_, Option<String>>(16)?,
            ))
        })?;
        let mut incidents = Vec::new();
        for row in rows {
            let (mut incident, cut, session, rule, topics) = row?;
            incident.topics = match topics {
                Some(json) => {
                    Some(
                        serde_json::from_str(&json).map_err(|_| CatalogError::Corrupt {
                            what: "incident topics",
                            value: json,
                        })?,
                    )
                }
                None => None,
            };
            incident.rule = match rule {
                Some(json) => {
                    Some(
                        serde_json::from_str(&json).map_err(|_| CatalogError::Corrupt {
                            what: "incident rule",
                            value: json,
                        })?,
                    )
                }
                None => None,
            };
            incident.cut = CutState::from_name(&cut).ok_or(CatalogError::Corrupt {
                what: "incident cut state",
                value: cut,
            })?;
            let key = IncidentKey {
                id: incident.id.clone(),
                session,
            };
            incident.pinned_files = self.incident_files(&key, false)?;
            incident.cut_files = self.incident_files(&key, true)?;
            incidents.push(incident);
        }
        Ok(incidents)
    }

    /// The recording files an incident's window overlaps (`cut` false), or its own cut
    /// files, with their upload states; deleted and missing ones left out.
    fn incident_files(
        &self,
        key: &IncidentKey,
        cut: bool,
    ) -> Result<Vec<IncidentFile>, CatalogError> {
        let which = if cut {
            OWN_OF_I.to_string()
        } else {
            overlaps()
        };
        let mut statement = self.connection.prepare(&format!(
            "SELECT f.path, f.bytes, f.state, (SELECT u.state FROM uploads u WHERE u.path = f.path)
             FROM incidents i JOIN files f ON {which}
             WHERE i.id = ?1 AND i.session = ?2 AND f.state NOT IN (?3, ?4)
             ORDER BY f.start_ns, f.rowid"
        ))?;
        let rows = statement.query_map(
            params![
                key.id,
                key.session,
                FileState::Deleted.as_str(),
                FileState::Missing.as_str()
            ],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, i64>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, Option<String>>(3)?,
                ))
            },
        )?;
        rows.map(|row| {
            let (path, bytes, state, upload) = row?;
            Ok(IncidentFile {
                path: self.data_dir.resolve(&path),
                bytes: bytes as u64,
                state: parse_file_state(&state)?,
                upload: upload.as_deref().map(parse_upload_state).transpose()?,
            })
        })
        .collect()
    }

    /// The incidents not released whose window is not cut yet, oldest window end first.
    pub fn incidents_to_cut(&self) -> Result<Vec<(IncidentKey, LogWindow)>, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT id, session, start_ns, end_ns FROM incidents
             WHERE cut = ?1 AND released_ns IS NULL ORDER BY end_ns, rowid",
        )?;
        let rows = statement.query_map(params![CutState::Waiting.as_str()], |row| {
            Ok((
                IncidentKey {
                    id: row.get(0)?,
                    session: row.get(1)?,
                },
                LogWindow {
                    start_ns: row.get::<_, i64>(2)? as u64,
                    end_ns: row.get::<_, i64>(3)? as u64,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Records how far the cut of `key` came.
    pub fn set_cut(
        &self,
        key: &IncidentKey,
        cut: CutState,
        error: Option<&str>,
    ) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE incidents SET cut = ?3, cut_error = ?4 WHERE id = ?1 AND session = ?2",
            params![key.id, key.session, cut.as_str(), error],
        )?;
        Ok(())
    }

    /// Records a cut file of `key` (complete and indexed), holding `messages` of its
    /// `window`, as one of the incident's own.
    pub fn add_cut_file(
        &self,
        key: &IncidentKey,
        path: &Path,
        (bytes, messages): (u64, u64),
        window: LogWindow,
    ) -> Result<(), CatalogError> {
        self.connection.execute(
            "INSERT INTO files (path, session, bytes, messages, state, start_ns, end_ns)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(path) DO UPDATE SET bytes = ?3, messages = ?4, state = ?5,
                 start_ns = ?6, end_ns = ?7",
            params![
                self.data_dir.store(path),
                key.session,
                bytes as i64,
                messages as i64,
                FileState::Indexed.as_str(),
                window.start_ns as i64,
                window.end_ns as i64
            ],
        )?;
        self.own_file(path, key)
    }

    /// Makes the file at `path` one of incident `key`'s own (a pre-trigger session's
    /// window file), besides any other incident's it is already: incidents own their
    /// files many to many.
    pub fn own_file(&self, path: &Path, key: &IncidentKey) -> Result<(), CatalogError> {
        self.connection.execute(
            "INSERT OR IGNORE INTO incident_files (incident, session, path)
             SELECT ?2, ?3, path FROM files WHERE path = ?1 AND session = ?3",
            params![self.data_dir.store(path), key.id, key.session],
        )?;
        Ok(())
    }

    /// Ends the pin of every incident with `id` not released yet (`why` says why);
    /// returns how many.
    pub fn release_incidents(
        &self,
        id: &str,
        why: &str,
        now_ns: u64,
    ) -> Result<usize, CatalogError> {
        Ok(self.connection.execute(
            "UPDATE incidents SET released_ns = ?2, released_why = ?3
             WHERE id = ?1 AND released_ns IS NULL",
            params![id, now_ns as i64, why],
        )?)
    }

    /// Ends the pin of the incidents whose keep ended by `now_ns`, and of those released
    /// after upload whose cut files are all uploaded; returns them with the reason.
    pub fn release_due(
        &self,
        now_ns: u64,
    ) -> Result<Vec<(IncidentKey, &'static str)>, CatalogError> {
        let mut due = Vec::new();
        let mut kept = self.connection.prepare(
            "SELECT id, session FROM incidents
             WHERE released_ns IS NULL AND keep_until_ns IS NOT NULL AND keep_until_ns <= ?1",
        )?;
        for row in kept.query_map(params![now_ns as i64], key_row)? {
            due.push((row?, "keep"));
        }
        let mut uploaded = self.connection.prepare(&format!(
            "SELECT i.id, i.session FROM incidents i
             WHERE i.released_ns IS NULL AND i.release_after_upload AND i.cut = ?1
               AND EXISTS (SELECT 1 FROM files f WHERE {OWN_OF_I})
               AND NOT EXISTS (SELECT 1 FROM files f LEFT JOIN uploads u ON u.path = f.path
                   WHERE {OWN_OF_I} AND (u.state IS NULL OR u.state != ?2))"
        ))?;
        for row in uploaded.query_map(
            params![
                CutState::Cut.as_str(),
                recd_control::UploadState::Uploaded.as_str()
            ],
            key_row,
        )? {
            due.push((row?, "uploaded"));
        }
        for (key, why) in &due {
            self.connection.execute(
                "UPDATE incidents SET released_ns = ?3, released_why = ?4
                 WHERE id = ?1 AND session = ?2 AND released_ns IS NULL",
                params![key.id, key.session, now_ns as i64, why],
            )?;
        }
        Ok(due)
    }

    /// The incidents whose own file (cut, or a pre-trigger session's window) the file at
    /// `path` is, oldest first; none for a recording of its session.
    pub fn incidents_owning(&self, path: &Path) -> Result<Vec<String>, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT o.incident FROM incident_files o
             JOIN incidents i ON i.id = o.incident AND i.session = o.session
             WHERE o.path = ?1 ORDER BY i.created_ns, i.rowid",
        )?;
        let rows = statement.query_map(params![self.data_dir.store(path)], |row| row.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

fn key_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<IncidentKey> {
    Ok(IncidentKey {
        id: row.get(0)?,
        session: row.get(1)?,
    })
}
