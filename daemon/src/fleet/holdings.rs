//! The vehicle's holdings, read from the catalog: each session's files merged into spans,
//! its topics, the incidents, the disk.

use std::collections::BTreeMap;

use recd_catalog::{Catalog, CatalogError};
use recd_control::{SessionState, UploadState};
use recd_fleet::{
    merge_spans, Disk, FileSpan, Holdings, IncidentHolding, SessionHoldings, TopicHolding,
};

/// What the holdings say besides the catalog: the vehicle, the moment, the disk's bound and
/// free room.
pub struct Context {
    /// The vehicle's id.
    pub vehicle: String,
    /// Now, ns since the epoch: the end of what a session being recorded holds.
    pub now_ns: u64,
    /// `max_total_size`.
    pub bound_bytes: Option<u64>,
    /// Free bytes on the data directory's file system, when known.
    pub free_bytes: Option<u64>,
}

/// The holdings `catalog` describes.
pub fn gather(catalog: &Catalog, context: Context) -> Result<Holdings, CatalogError> {
    let mut by_session: BTreeMap<i64, Vec<recd_catalog::HeldFile>> = BTreeMap::new();
    for file in catalog.held_files()? {
        by_session.entry(file.session).or_default().push(file);
    }
    // Each session's name, and whether its end is recorded: a stopped session's last file
    // is closed a moment before its stop and topics are recorded (one transaction), and
    // until then it counts as recording, so that holdings that say a session ended always
    // carry its topics.
    let sessions_known: BTreeMap<i64, (String, bool)> = (catalog.sessions()?.into_iter())
        .map(|session| {
            let ended = session.state != SessionState::Recording;
            (session.id, (session.name, ended))
        })
        .collect();
    let mut sessions = Vec::new();
    for (id, files) in &by_session {
        let spans = merge_spans(
            &(files.iter())
                .filter_map(|file| {
                    let start_ns = file.start_ns?;
                    let end_ns = match (file.end_ns, file.recording) {
                        (_, true) => context.now_ns,
                        (Some(end), false) => end,
                        (None, false) => return None,
                    };
                    Some(FileSpan {
                        start_ns,
                        end_ns,
                        health: file.health.clone(),
                    })
                })
                .collect::<Vec<_>>(),
        );
        let topics = (catalog.topics(*id)?.into_iter())
            .map(|topic| TopicHolding {
                name: topic.name,
                messages: topic.written,
            })
            .collect();
        let (name, ended) = (sessions_known.get(id).cloned()).unwrap_or((String::new(), true));
        sessions.push(SessionHoldings {
            name,
            id: *id,
            recording: !ended || files.iter().any(|file| file.recording),
            spans,
            files: files.len() as u64,
            bytes: files.iter().map(|file| file.bytes).sum(),
            topics,
        });
    }
    sessions.sort_by_key(|session| session.spans.first().map(|span| span.from_ns));
    let oldest_ns = (sessions.iter())
        .filter_map(|session| session.spans.first().map(|span| span.from_ns))
        .min();
    let incidents = (catalog.incidents(None)?.into_iter().rev())
        .map(|incident| IncidentHolding {
            uploaded: !incident.cut_files.is_empty()
                && (incident.cut_files.iter())
                    .all(|file| file.upload == Some(UploadState::Uploaded)),
            id: incident.id,
            session: incident.session,
            from_ns: incident.start_ns,
            to_ns: incident.end_ns,
            cut: incident.cut.as_str().to_string(),
            released: incident.released.is_some(),
        })
        .collect();
    let used_bytes = by_session.values().flatten().map(|file| file.bytes).sum();
    Ok(Holdings {
        vehicle: context.vehicle,
        at_ns: context.now_ns,
        oldest_ns,
        disk: Disk {
            used_bytes,
            bound_bytes: context.bound_bytes,
            free_bytes: context.free_bytes,
        },
        sessions,
        incidents,
    })
}

/// How far the disk's free room must move before the holdings count as changed: anything
/// else on the disk (logs, the catalog) moves it a little all the time, and a cloud plans
/// with gigabytes, not bytes.
pub const FREE_BYTES_STEP: u64 = 1 << 30;

/// Whether `new` says something `old` did not, the moment it was taken aside and the
/// free room within [`FREE_BYTES_STEP`] of what `old` said.
pub fn changed(old: Option<&Holdings>, new: &Holdings) -> bool {
    old.is_none_or(|old| {
        let mut old = old.clone();
        old.at_ns = new.at_ns;
        if let (Some(was), Some(is)) = (old.disk.free_bytes, new.disk.free_bytes) {
            if was.abs_diff(is) < FREE_BYTES_STEP {
                old.disk.free_bytes = new.disk.free_bytes;
            }
        }
        // A session being recorded holds up to now: it changes with every look.
        old != *new
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holdings(free_bytes: u64, used_bytes: u64) -> Holdings {
        Holdings {
            vehicle: "car-1".into(),
            at_ns: 1,
            oldest_ns: None,
            disk: Disk {
                used_bytes,
                bound_bytes: None,
                free_bytes: Some(free_bytes),
            },
            sessions: Vec::new(),
            incidents: Vec::new(),
        }
    }

    #[test]
    fn the_free_room_drifting_is_no_change_but_a_gigabyte_or_a_recording_is() {
        let published = holdings(100 << 30, 5);
        assert!(changed(None, &published));
        let mut drifted = holdings((100 << 30) - (10 << 20), 5);
        drifted.at_ns = 61;
        assert!(!changed(Some(&published), &drifted));
        assert!(changed(Some(&published), &holdings(99 << 30, 5)));
        assert!(changed(Some(&published), &holdings(100 << 30, 6)));
    }

    #[test]
    fn a_session_whose_files_are_closed_is_recording_until_its_stop_is_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let mut catalog = Catalog::open(dir.path(), dir.path()).unwrap();
        let id = catalog.begin_session("drive", dir.path(), "{}", 1).unwrap();
        let file = recd_catalog::File {
            session: id,
            path: dir.path().join("drive_0000.mcap"),
            bytes: 10,
            messages: 1,
            state: recd_control::FileState::Complete,
        };
        catalog.upsert_file(&file).unwrap();
        let look = |catalog: &Catalog| {
            let context = Context {
                vehicle: "car-1".into(),
                now_ns: 5,
                bound_bytes: None,
                free_bytes: None,
            };
            gather(catalog, context).unwrap().sessions[0].clone()
        };
        let closing = look(&catalog);
        assert!(closing.recording, "its topics are not recorded yet");
        catalog
            .finish_session(id, SessionState::Stopped, None, 4, &[])
            .unwrap();
        assert!(!look(&catalog).recording);
    }
}
