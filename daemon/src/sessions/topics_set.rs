//! `rec topics-set`: a running session's topics changed without a gap in those it keeps.

use recd_control::{ErrorKind, ErrorReply, SessionTopicsChanged, SetTopicsRequest};
use recd_engine::SetTopicsError;

use super::replies::error;
use super::Sessions;

impl Sessions {
    /// Adds topic patterns to a running session and removes others: the topics it keeps
    /// lose nothing, those removed end in the current files (their counts final), those
    /// added start with their next sample. A marker in every file being written says so,
    /// and the session's configuration in the catalog becomes the new selection.
    pub fn set_topics(
        &self,
        request: &SetTopicsRequest,
    ) -> Result<SessionTopicsChanged, ErrorReply> {
        if request.add.is_empty() && request.remove.is_empty() {
            return Err(error(
                ErrorKind::InvalidArgument,
                "nothing to change: name topics to --add or to --remove",
            ));
        }
        if let Some(empty) = (request.add.iter())
            .chain(&request.remove)
            .find(|pattern| pattern.trim().is_empty())
        {
            return Err(error(
                ErrorKind::InvalidArgument,
                format!("topic pattern {empty:?} is empty"),
            ));
        }
        let session = self.registry.get(request.name.as_deref())?;
        let name = session.name.clone();
        let topics = (session.sampled().topics).changed(&request.add, &request.remove);
        let text = change_text(&request.add, &request.remove);
        // The receive threads take the change with no lock held.
        let times_ns =
            session
                .recording
                .set_topics(&topics, &text)
                .map_err(|failure| match failure {
                    SetTopicsError::Pattern(pattern) => {
                        error(ErrorKind::InvalidArgument, pattern.to_string())
                    }
                    SetTopicsError::NotTaken(_) => error(
                        ErrorKind::Failed,
                        format!("session {name:?}: {failure}; it takes effect when it does"),
                    ),
                })?;
        session.sampled().topics = topics.clone();
        self.rules.session_records(session.id, &topics);
        let topics_json = serde_json::to_string(&topics).expect("a selection serializes");
        let id = session.id;
        let files = session.recording.current_files();
        drop(session);
        if let Err(failure) = self.catalog().set_session_topics(id, &topics_json) {
            tracing::warn!(session = %name, "cannot note the new topics in the catalog: {failure}");
        }
        tracing::info!(session = %name, add = ?request.add, remove = ?request.remove, "topics changed");
        Ok(SessionTopicsChanged {
            name,
            topics: topics.include,
            exclude: topics.exclude,
            times_ns,
            files,
        })
    }
}

/// The marker's text: `topics-set: +GLOB … -GLOB …`.
fn change_text(add: &[String], remove: &[String]) -> String {
    let added = add.iter().map(|pattern| format!(" +{pattern}"));
    let removed = remove.iter().map(|pattern| format!(" -{pattern}"));
    format!("topics-set:{}", added.chain(removed).collect::<String>())
}
