//! What a running session is asked while it records: pause and resume, split, a marker,
//! its live status. Each takes the session out of the registry and lets the registry go
//! before it asks the recording.

use recd_control::{ErrorKind, ErrorReply, SessionMarked, SessionPaused, SessionStatus};

use super::replies::{self, error};
use super::Sessions;

impl Sessions {
    /// Pauses (`pause`) or resumes a running session.
    pub fn pause(&self, name: Option<&str>, pause: bool) -> Result<SessionPaused, ErrorReply> {
        let session = self.registry.get(name)?;
        let changed = if pause {
            session.recording.pause()
        } else {
            session.recording.resume()
        };
        if changed {
            tracing::info!(session = %session.name, "{}", if pause { "paused" } else { "resumed" });
        }
        Ok(SessionPaused {
            name: session.name.clone(),
            paused: pause,
            changed,
        })
    }

    /// Ends a running session's files and continues in new ones.
    pub fn split(&self, name: Option<&str>) -> Result<(), ErrorReply> {
        let session = self.registry.get(name)?;
        if !session.recording.split() {
            return Err(error(
                ErrorKind::InvalidArgument,
                format!("session {:?} keeps its messages in memory until triggered; a trigger's window is one file", session.name),
            ));
        }
        tracing::info!(session = %session.name, "split on request");
        Ok(())
    }

    /// Writes a marker with `text` into the files a running session is writing.
    pub fn mark(&self, name: Option<&str>, text: &str) -> Result<SessionMarked, ErrorReply> {
        if text.trim().is_empty() {
            return Err(error(ErrorKind::InvalidArgument, "a marker needs a text"));
        }
        let session = self.registry.get(name)?;
        let recording = &session.recording;
        if recording.pre_trigger().is_some() && recording.current_files().is_empty() {
            return Err(error(
                ErrorKind::InvalidArgument,
                format!("session {:?} keeps its messages in memory until triggered and is writing no file now, so a marker would go nowhere (rec trigger {} writes one)", session.name, session.name),
            ));
        }
        let marker = recording.mark(text);
        let files = recording.current_files();
        let catalog = self.catalog();
        for path in &files {
            if let Err(failure) = catalog.note_marker(path) {
                tracing::warn!(file = %path.display(), "cannot note the marker in the catalog: {failure}");
            }
        }
        drop(catalog);
        Ok(SessionMarked {
            files,
            name: session.name.clone(),
            time_ns: marker.time_ns,
        })
    }

    /// Live status of one running session or of all.
    pub fn status(&self, name: Option<&str>) -> Result<Vec<SessionStatus>, ErrorReply> {
        let sessions = match name {
            Some(name) => vec![self.registry.get(Some(name))?],
            None => self.registry.snapshot(),
        };
        Ok(sessions
            .iter()
            .map(|session| {
                let status = session.recording.status();
                let backlog = self.backlog(Some(session.id)).unwrap_or_default();
                replies::session_status(
                    &session.name,
                    session.id,
                    &session.directory,
                    status,
                    &session.sampled().rates,
                    backlog,
                )
            })
            .collect())
    }
}
