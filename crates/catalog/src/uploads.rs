//! The upload queue: every finished file a session uploads waits here for its turn, and
//! the multipart upload under way is journaled part by part, so that a restart or a power
//! cut resumes at the next part rather than at zero.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use recd_control::{UploadState, UploadsMode};
use rusqlite::{params, OptionalExtension};

use crate::{Catalog, CatalogError};

/// The priority of an incident's cut file: it goes before every other.
const INCIDENT_PRIORITY: i64 = -1;

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS uploads (
    path TEXT PRIMARY KEY,
    key TEXT NOT NULL,
    priority INTEGER NOT NULL,
    queued_ns INTEGER NOT NULL,
    state TEXT NOT NULL,
    reason TEXT,
    bytes INTEGER NOT NULL,
    changed_ns INTEGER NOT NULL,
    upload_id TEXT,
    part_size INTEGER,
    uploaded_ns INTEGER,
    e_tag TEXT,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS upload_parts (
    path TEXT NOT NULL,
    number INTEGER NOT NULL,
    content_id TEXT NOT NULL,
    md5 BLOB NOT NULL,
    bytes INTEGER NOT NULL,
    PRIMARY KEY (path, number)
);
";

/// What identifies a file's content when it is queued: its size and its inode's change
/// time (which every write moves, and which no one can set back), so that a file altered
/// after queueing is not uploaded as the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fingerprint {
    /// Size in bytes.
    pub bytes: u64,
    /// The inode's change time (ctime), ns since the Unix epoch.
    pub changed_ns: i64,
}

impl Fingerprint {
    /// The fingerprint of the file at `path` now.
    pub fn of(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path)?;
        Ok(Self {
            bytes: metadata.len(),
            changed_ns: metadata.ctime() * 1_000_000_000 + metadata.ctime_nsec(),
        })
    }
}

/// A file to queue for upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUpload {
    /// The local file.
    pub path: PathBuf,
    /// The object's key.
    pub key: String,
    /// Goes before the others (trigger windows, markers).
    pub priority: bool,
    /// An incident's cut file: before every other, priority ones included.
    pub incident: bool,
    /// The file as it is now.
    pub fingerprint: Fingerprint,
    /// The object's user metadata.
    pub metadata: BTreeMap<String, String>,
}

/// A part of a multipart upload the bucket acknowledged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JournaledPart {
    /// Its index, from 0.
    pub number: u32,
    /// What the store returned for it (its ETag and checksum), needed to complete.
    pub content_id: String,
    /// MD5 of its bytes, for checking the object's ETag once complete.
    pub md5: [u8; 16],
    /// Its size.
    pub bytes: u64,
}

/// One file of the upload queue, with its journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedUpload {
    /// The local file.
    pub path: PathBuf,
    /// Its session's name.
    pub session: String,
    /// The object's key.
    pub key: String,
    /// Goes before the others (trigger windows, markers).
    pub priority: bool,
    /// Queued, ns since the Unix epoch.
    pub queued_ns: i64,
    /// Where it is.
    pub state: UploadState,
    /// Why it failed, or what the last attempt met.
    pub reason: Option<String>,
    /// The file as it was queued.
    pub fingerprint: Fingerprint,
    /// The multipart upload under way.
    pub upload_id: Option<String>,
    /// Its part size.
    pub part_size: Option<u64>,
    /// Its parts the bucket holds, by number.
    pub parts: Vec<JournaledPart>,
    /// Uploaded and verified, ns since the Unix epoch.
    pub uploaded_ns: Option<i64>,
    /// The object's ETag once uploaded.
    pub e_tag: Option<String>,
    /// The object's user metadata.
    pub metadata: BTreeMap<String, String>,
    /// It replaces the object under its key ([`Catalog::queue_upload_again`]); any other
    /// upload never overwrites one.
    pub replace: bool,
}

impl QueuedUpload {
    /// Bytes the bucket holds of the file.
    pub fn sent(&self) -> u64 {
        self.parts.iter().map(|part| part.bytes).sum()
    }
}

const COLUMNS: &str = "u.path, (SELECT s.name FROM files f JOIN sessions s ON s.id = f.session WHERE f.path = u.path), u.key, u.priority, u.queued_ns, u.state, u.reason, u.bytes, u.changed_ns, u.upload_id, u.part_size, u.uploaded_ns, u.e_tag, u.metadata, u.replace";

impl Catalog {
    /// Queues the file at `path` for upload (files with `priority` first, then the
    /// oldest). A file already queued, uploading or uploaded is left as it is (false); a
    /// failed one is queued again with its new fingerprint.
    pub fn queue_upload(&self, upload: &NewUpload, now_ns: i64) -> Result<bool, CatalogError> {
        self.upsert_upload(upload, now_ns, (false, "WHERE uploads.state = ?8"))
    }

    /// Queues the file at `path` for upload as it is now, whatever became of it before,
    /// replacing the object under its key: for a file that grows and is uploaded again
    /// each time (a session's hash chain). An upload of it under way does not count as
    /// done ([`Catalog::finish_upload`] is for the content it was queued with).
    pub fn queue_upload_again(&self, upload: &NewUpload, now_ns: i64) -> Result<(), CatalogError> {
        self.upsert_upload(upload, now_ns, (true, "WHERE ?8 = ?8"))
            .map(|_| ())
    }

    fn upsert_upload(
        &self,
        upload: &NewUpload,
        now_ns: i64,
        (replace, condition): (bool, &str),
    ) -> Result<bool, CatalogError> {
        let stored = self.data_dir.store(&upload.path);
        let metadata = serde_json::to_string(&upload.metadata).expect("metadata serializes");
        let changed = self.connection.execute(
            &format!(
                "INSERT INTO uploads (path, key, priority, queued_ns, state, bytes, changed_ns, metadata, replace)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?9, ?10)
             ON CONFLICT(path) DO UPDATE SET key = ?2, priority = ?3, queued_ns = ?4, state = ?5,
                 bytes = ?6, changed_ns = ?7, metadata = ?9, reason = NULL, upload_id = NULL,
                 part_size = NULL, replace = ?10
             {condition}"
            ),
            params![
                stored,
                upload.key,
                if upload.incident {
                    INCIDENT_PRIORITY
                } else {
                    i64::from(!upload.priority)
                },
                now_ns,
                UploadState::Queued.as_str(),
                upload.fingerprint.bytes as i64,
                upload.fingerprint.changed_ns,
                UploadState::Failed.as_str(),
                metadata,
                replace
            ],
        )? > 0;
        if changed {
            self.connection
                .execute("DELETE FROM upload_parts WHERE path = ?1", params![stored])?;
        }
        Ok(changed)
    }

    /// The file at `path` was rewritten on purpose (reindexed): unless it is uploaded
    /// already, it starts over with its new content, and its object's `bytes` metadata
    /// says the new size.
    pub fn requeue_rewritten(
        &self,
        path: &Path,
        fingerprint: Fingerprint,
    ) -> Result<(), CatalogError> {
        let stored = self.data_dir.store(path);
        let changed = self.connection.execute(
            "UPDATE uploads SET state = ?2, bytes = ?3, changed_ns = ?4, reason = NULL, upload_id = NULL, part_size = NULL,
                 metadata = CASE WHEN json_extract(metadata, '$.bytes') IS NULL THEN metadata
                     ELSE json_set(metadata, '$.bytes', CAST(?3 AS TEXT)) END
             WHERE path = ?1 AND state != ?5",
            params![
                stored,
                UploadState::Queued.as_str(),
                fingerprint.bytes as i64,
                fingerprint.changed_ns,
                UploadState::Uploaded.as_str()
            ],
        )?;
        if changed > 0 {
            self.connection
                .execute("DELETE FROM upload_parts WHERE path = ?1", params![stored])?;
        }
        Ok(())
    }

    /// The file to upload next: one under way first (it resumes), then by priority and
    /// age; a file waiting to be finished in place waits for that first, and one the
    /// uploads mode holds back ([`Catalog::uploads_mode`]) waits until the mode allows it.
    pub fn next_upload(&self) -> Result<Option<QueuedUpload>, CatalogError> {
        let most_priority = match self.uploads_mode()? {
            UploadsMode::All => i64::MAX,
            UploadsMode::Incidents => INCIDENT_PRIORITY,
            UploadsMode::None => return Ok(None),
        };
        let found = self
            .connection
            .query_row(
                &format!(
                    "SELECT {COLUMNS} FROM uploads u WHERE u.state IN (?1, ?2) AND u.priority <= ?3
                     AND NOT EXISTS (SELECT 1 FROM files f WHERE f.path = u.path AND f.finish IS NOT NULL)
                     ORDER BY u.state = ?2 DESC, u.priority, u.queued_ns, u.rowid LIMIT 1"
                ),
                params![
                    UploadState::Queued.as_str(),
                    UploadState::Uploading.as_str(),
                    most_priority
                ],
                raw_upload,
            )
            .optional()?;
        found.map(|raw| self.complete(raw)).transpose()
    }

    /// The upload of `path` at this moment, with its journal.
    pub fn upload(&self, path: &Path) -> Result<Option<QueuedUpload>, CatalogError> {
        let found = self
            .connection
            .query_row(
                &format!("SELECT {COLUMNS} FROM uploads u WHERE u.path = ?1"),
                params![self.data_dir.store(path)],
                raw_upload,
            )
            .optional()?;
        found.map(|raw| self.complete(raw)).transpose()
    }

    /// The files of the queue: those waiting in the order they go, then the failed ones,
    /// then the newest `uploaded` of those uploaded (all of them would outgrow a reply).
    pub fn upload_queue(&self, uploaded: usize) -> Result<Vec<QueuedUpload>, CatalogError> {
        let mut statement = self.connection.prepare(&format!(
            "SELECT * FROM (
                 SELECT {COLUMNS}, 0 AS part FROM uploads u WHERE u.state != ?3
                 UNION ALL
                 SELECT * FROM (SELECT {COLUMNS}, 1 AS part FROM uploads u WHERE u.state = ?3
                                ORDER BY u.uploaded_ns DESC LIMIT ?4))
             ORDER BY part, state IN (?1, ?2) DESC, state = ?2 DESC,
                 CASE WHEN part = 0 THEN priority END, CASE WHEN part = 0 THEN queued_ns END,
                 uploaded_ns DESC"
        ))?;
        let raws = statement
            .query_map(
                params![
                    UploadState::Queued.as_str(),
                    UploadState::Uploading.as_str(),
                    UploadState::Uploaded.as_str(),
                    uploaded as i64
                ],
                raw_upload,
            )?
            .collect::<Result<Vec<_>, _>>()?;
        raws.into_iter().map(|raw| self.complete(raw)).collect()
    }

    /// Files uploaded so far, and their bytes.
    pub fn uploaded_totals(&self) -> Result<(u64, u64), CatalogError> {
        let (files, bytes): (i64, i64) = self.connection.query_row(
            "SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM uploads WHERE state = ?1",
            params![UploadState::Uploaded.as_str()],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        Ok((files as u64, bytes as u64))
    }

    /// The upload state of every queued file.
    pub fn upload_states(&self) -> Result<HashMap<PathBuf, UploadState>, CatalogError> {
        let mut statement = self.connection.prepare("SELECT path, state FROM uploads")?;
        let rows = statement.query_map([], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
        })?;
        rows.map(|row| {
            let (path, state) = row?;
            Ok((self.data_dir.resolve(&path), parse_upload_state(&state)?))
        })
        .collect()
    }

    /// A multipart upload of `path` began: its id and part size, before any part is sent.
    pub fn begin_multipart(
        &self,
        path: &Path,
        upload_id: &str,
        part_size: u64,
    ) -> Result<(), CatalogError> {
        let stored = self.data_dir.store(path);
        self.connection
            .execute("DELETE FROM upload_parts WHERE path = ?1", params![stored])?;
        self.connection.execute(
            "UPDATE uploads SET state = ?2, upload_id = ?3, part_size = ?4 WHERE path = ?1",
            params![
                stored,
                UploadState::Uploading.as_str(),
                upload_id,
                part_size as i64
            ],
        )?;
        Ok(())
    }

    /// The bucket acknowledged a part of the upload of `path`.
    pub fn journal_part(&self, path: &Path, part: &JournaledPart) -> Result<(), CatalogError> {
        self.connection.execute(
            "INSERT OR REPLACE INTO upload_parts (path, number, content_id, md5, bytes) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                self.data_dir.store(path),
                part.number,
                part.content_id,
                &part.md5[..],
                part.bytes as i64
            ],
        )?;
        Ok(())
    }

    /// The multipart upload of `path` is gone (the store forgot it): it starts over.
    pub fn forget_multipart(&self, path: &Path) -> Result<(), CatalogError> {
        let stored = self.data_dir.store(path);
        self.connection
            .execute("DELETE FROM upload_parts WHERE path = ?1", params![stored])?;
        self.connection.execute(
            "UPDATE uploads SET upload_id = NULL, part_size = NULL WHERE path = ?1",
            params![stored],
        )?;
        Ok(())
    }

    /// What the last attempt at `path` met (it is retried); `None` clears it.
    pub fn note_upload_attempt(
        &self,
        path: &Path,
        reason: Option<&str>,
    ) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE uploads SET reason = ?2 WHERE path = ?1",
            params![self.data_dir.store(path), reason],
        )?;
        Ok(())
    }

    /// `path`, as it was queued (`queued_as`), is in the bucket and verified; unless it
    /// was queued again with another content meanwhile, which is then uploaded too.
    pub fn finish_upload(
        &self,
        path: &Path,
        queued_as: Fingerprint,
        e_tag: &str,
        now_ns: i64,
    ) -> Result<(), CatalogError> {
        let stored = self.data_dir.store(path);
        self.connection.execute(
            "UPDATE uploads SET state = ?2, e_tag = ?3, uploaded_ns = ?4, reason = NULL
             WHERE path = ?1 AND bytes = ?5 AND changed_ns = ?6",
            params![
                stored,
                UploadState::Uploaded.as_str(),
                e_tag,
                now_ns,
                queued_as.bytes as i64,
                queued_as.changed_ns
            ],
        )?;
        // Retention may have deleted it while it was read from an open descriptor.
        self.connection.execute(
            "UPDATE files SET deleted_unuploaded = 0 WHERE path = ?1",
            params![stored],
        )?;
        Ok(())
    }

    /// Gives `path` up for `reason`, unless it was queued again with another content
    /// meanwhile (its fingerprint is no longer `queued_as`).
    pub fn fail_upload(
        &self,
        path: &Path,
        reason: &str,
        queued_as: Fingerprint,
    ) -> Result<(), CatalogError> {
        let stored = self.data_dir.store(path);
        self.connection.execute(
            "UPDATE uploads SET state = ?2, reason = ?3, upload_id = NULL, part_size = NULL
             WHERE path = ?1 AND bytes = ?4 AND changed_ns = ?5",
            params![
                stored,
                UploadState::Failed.as_str(),
                reason,
                queued_as.bytes as i64,
                queued_as.changed_ns
            ],
        )?;
        self.connection
            .execute("DELETE FROM upload_parts WHERE path = ?1", params![stored])?;
        Ok(())
    }

    /// A marker was written into the file at `path`: it goes first when uploaded.
    pub fn note_marker(&self, path: &Path) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE files SET markers = markers + 1 WHERE path = ?1",
            params![self.data_dir.store(path)],
        )?;
        Ok(())
    }

    /// Markers written into the file at `path`.
    pub fn markers(&self, path: &Path) -> Result<u64, CatalogError> {
        let markers: Option<i64> = self
            .connection
            .query_row(
                "SELECT markers FROM files WHERE path = ?1",
                params![self.data_dir.store(path)],
                |row| row.get(0),
            )
            .optional()?;
        Ok(markers.unwrap_or(0) as u64)
    }

    fn complete(&self, raw: RawUpload) -> Result<QueuedUpload, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT number, content_id, md5, bytes FROM upload_parts WHERE path = ?1 ORDER BY number",
        )?;
        let parts = statement
            .query_map(params![raw.path], |row| {
                let md5: Vec<u8> = row.get(2)?;
                Ok(JournaledPart {
                    number: row.get(0)?,
                    content_id: row.get(1)?,
                    md5: md5.try_into().unwrap_or([0; 16]),
                    bytes: row.get::<_, i64>(3)? as u64,
                })
            })?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(QueuedUpload {
            path: self.data_dir.resolve(&raw.path),
            session: raw.session.unwrap_or_default(),
            key: raw.key,
            priority: raw.priority <= 0,
            queued_ns: raw.queued_ns,
            state: parse_upload_state(&raw.state)?,
            reason: raw.reason,
            fingerprint: Fingerprint {
                bytes: raw.bytes as u64,
                changed_ns: raw.changed_ns,
            },
            upload_id: raw.upload_id,
            part_size: raw.part_size.map(|size| size as u64),
            parts,
            uploaded_ns: raw.uploaded_ns,
            e_tag: raw.e_tag,
            metadata: serde_json::from_str(&raw.metadata).unwrap_or_default(),
            replace: raw.replace,
        })
    }
}

struct RawUpload {
    path: String,
    session: Option<String>,
    key: String,
    priority: i64,
    queued_ns: i64,
    state: String,
    reason: Option<String>,
    bytes: i64,
    changed_ns: i64,
    upload_id: Option<String>,
    part_size: Option<i64>,
    uploaded_ns: Option<i64>,
    e_tag: Option<String>,
    metadata: String,
    replace: bool,
}

fn raw_upload(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawUpload> {
    Ok(RawUpload {
        path: row.get(0)?,
        session: row.get(1)?,
        key: row.get(2)?,
        priority: row.get(3)?,
        queued_ns: row.get(4)?,
        state: row.get(5)?,
        reason: row.get(6)?,
        bytes: row.get(7)?,
        changed_ns: row.get(8)?,
        upload_id: row.get(9)?,
        part_size: row.get(10)?,
        uploaded_ns: row.get(11)?,
        e_tag: row.get(12)?,
        metadata: row.get(13)?,
        replace: row.get(14)?,
    })
}

pub(crate) fn parse_upload_state(text: &str) -> Result<UploadState, CatalogError> {
    text.parse().map_err(|_| CatalogError::Corrupt {
        what: "upload state",
        value: text.to_string(),
    })
}

#[cfg(test)]
mod tests;
