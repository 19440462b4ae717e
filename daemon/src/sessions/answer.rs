//! What each request of the control protocol does: one home for the Unix socket and
//! remote control over DDS.

use recd_control::{ErrorReply, Request, Response, PROTOCOL_VERSION};

use super::Sessions;

impl Sessions {
    /// Carries out `request` (blocking: a stop finalizes files, a trigger ahead waits).
    pub fn answer(&self, request: Request) -> Result<Response, ErrorReply> {
        match request {
            Request::Ping => Ok(Response::Pong {
                version: PROTOCOL_VERSION,
                daemon: env!("CARGO_PKG_VERSION").to_string(),
            }),
            Request::Start(start) => self.start(&start).map(Response::Started),
            Request::Stop { name, all } => self
                .stop(name.as_deref(), all)
                .map(|sessions| Response::Stopped { sessions }),
            Request::Status { name } => {
                self.status(name.as_deref())
                    .map(|sessions| Response::Status {
                        sessions,
                        backlog: self.backlog(None),
                        rules: self.rule_status(),
                    })
            }
            Request::List => self.list().map(|sessions| Response::List { sessions }),
            Request::Topics(request) => self.topics(&request).map(Response::Topics),
            Request::Pause { name } => self.pause(name.as_deref(), true).map(Response::Paused),
            Request::Resume { name } => self.pause(name.as_deref(), false).map(Response::Paused),
            Request::Split { name } => self.split(name.as_deref()).map(|()| Response::Done),
            Request::Mark { name, text } => self.mark(name.as_deref(), &text).map(Response::Marked),
            Request::SetTopics(request) => self.set_topics(&request).map(Response::TopicsChanged),
            Request::Trigger(request) => {
                (self.incidents.trigger(&request)).map(Response::Triggered)
            }
            Request::Incidents { name } => (self.incidents.list(name.as_deref()))
                .map(|incidents| Response::Incidents { incidents }),
            Request::ReleaseIncident { id } => {
                (self.incidents.release(&id)).map(Response::IncidentsReleased)
            }
            Request::Files { name } => self.files(&name).map(|session| Response::Files { session }),
            Request::Reindexed {
                path,
                bytes,
                messages,
            } => self
                .mark_reindexed(&path, bytes, messages)
                .map(|()| Response::Done),
            Request::Upload(request) => self.queue_upload(&request).map(Response::UploadsQueued),
            Request::UploadStatus => self.upload_status().map(Response::Uploads),
        }
    }
}
