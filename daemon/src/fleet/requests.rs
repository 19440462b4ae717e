//! The requests the fleet's cloud publishes for this vehicle: each opened (signature,
//! vehicle, age: [`recd_fleet::open`]), taken once by id (the catalog remembers every id,
//! so a request delivered twice or replayed changes nothing), carried out, and answered on
//! its response topic. A window's later steps (cut, uploaded) are [`super::progress`]'s.

use std::sync::{Arc, Mutex};

use recd_catalog::{Catalog, TakenRequest};
use recd_control::{origin, Request as ControlRequest, Response};
use recd_fleet::{Acceptance, Action, Refusal, RepliedIncident, Reply, ReplyState, Request};

use crate::incidents::{topic_filter, WindowTake};
use crate::locks::lock;
use crate::sessions::Sessions;

/// A reply to send: where, with which correlation data, what.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The topic.
    pub topic: String,
    /// The asker's correlation data, echoed.
    pub correlation: Option<Vec<u8>>,
    /// The reply.
    pub reply: Reply,
}

/// How requests are checked: the keys, the bound on age, whether unsigned ones pass.
pub struct Policy {
    /// The fleet's public keys (`request_keys`).
    pub keys: Vec<recd_chain::PublicKey>,
    /// `allow_unsigned`.
    pub allow_unsigned: bool,
    /// `max_request_age` in ns.
    pub max_age_ns: u64,
}

/// The kinds of request, for counters that start at zero.
const KINDS: [&str; 5] = ["window", "release", "uploads", "status", "campaign"];

/// What the requests did (`/metrics`): requests taken (carried out, or refused by what
/// they asked, e.g. a window no longer held) by kind, and refused before anything was
/// done by reason label; every kind and reason from zero.
pub fn new_tally() -> recd_http::FleetRequests {
    let zeros = |names: &[&str]| names.iter().map(|name| (name.to_string(), 0)).collect();
    recd_http::FleetRequests {
        taken: zeros(&KINDS),
        refused: zeros(&Refusal::LABELS),
    }
}

/// What the requests did, shared with `/metrics`.
pub type Tally = recd_http::FleetRequests;

/// Takes the requests of one vehicle.
pub struct Desk {
    /// The vehicle's id.
    pub vehicle: String,
    /// Where a reply goes when the request names no response topic.
    pub default_replies: String,
    /// How requests are checked.
    pub policy: Policy,
    /// The catalog: ids taken, where requests stand.
    pub catalog: Arc<Mutex<Catalog>>,
    /// What requests act on.
    pub sessions: Arc<Sessions>,
    /// What was done.
    pub tally: Arc<Mutex<Tally>>,
}

impl Desk {
    /// Takes the request in `payload`, published with `response_topic` and
    /// `correlation`, at `now_ns`: its first reply.
    pub fn take(
        &self,
        payload: &[u8],
        response_topic: Option<String>,
        correlation: Option<Vec<u8>>,
        now_ns: u64,
    ) -> Outgoing {
        let topic = response_topic.unwrap_or_else(|| self.default_replies.clone());
        let reply = match self.open(payload, now_ns) {
            Ok(request) => self.carry_out(&request, &topic, correlation.clone(), now_ns),
            Err((id, refusal)) => {
                tracing::warn!(
                    id,
                    reason = refusal.label(),
                    "fleet request refused: {refusal}"
                );
                *lock(&self.tally)
                    .refused
                    .entry(refusal.label().to_string())
                    .or_default() += 1;
                Reply::refused(&self.vehicle, id.as_deref(), refusal.to_string())
            }
        };
        Outgoing {
            topic,
            correlation,
            reply,
        }
    }

    /// The request in `payload`, or why it is refused (with its id, when it could be read).
    fn open(&self, payload: &[u8], now_ns: u64) -> Result<Request, (Option<String>, Refusal)> {
        let acceptance = Acceptance {
            vehicle: &self.vehicle,
            keys: &self.policy.keys,
            allow_unsigned: self.policy.allow_unsigned,
            max_age_ns: self.policy.max_age_ns,
            now_ns,
        };
        let request = recd_fleet::open(payload, &acceptance).map_err(|refusal| {
            let id = serde_json::from_slice::<recd_fleet::Envelope>(payload)
                .ok()
                .and_then(|envelope| {
                    serde_json::from_str::<serde_json::Value>(&envelope.request).ok()
                })
                .and_then(|request| request.get("id")?.as_str().map(str::to_string));
            (id, refusal)
        })?;
        match lock(&self.catalog).fleet_request_taken(&request.id) {
            Ok(None) => Ok(request),
            Ok(Some(_)) => Err((Some(request.id.clone()), Refusal::Replayed(request.id))),
            Err(error) => Err((
                Some(request.id),
                Refusal::Malformed(format!(
                    "the catalog cannot say whether it was taken: {error}"
                )),
            )),
        }
    }

    /// Records `request` as taken (so it is never carried out twice) and does it.
    fn carry_out(
        &self,
        request: &Request,
        topic: &str,
        correlation: Option<Vec<u8>>,
        now_ns: u64,
    ) -> Reply {
        let kind = request.action.kind();
        let taken = TakenRequest {
            id: request.id.clone(),
            kind: kind.to_string(),
            taken_ns: now_ns,
            response_topic: topic.to_string(),
            correlation,
            state: "taken".to_string(),
        };
        match lock(&self.catalog).take_fleet_request(&taken) {
            Ok(true) => {}
            Ok(false) => {
                return Reply::refused(
                    &self.vehicle,
                    Some(&request.id),
                    Refusal::Replayed(request.id.clone()).to_string(),
                )
            }
            Err(error) => {
                return Reply::refused(
                    &self.vehicle,
                    Some(&request.id),
                    format!("the catalog cannot keep the request: {error}"),
                )
            }
        }
        *lock(&self.tally).taken.entry(kind.to_string()).or_default() += 1;
        tracing::info!(id = request.id, kind, "fleet request taken");
        let reply = self.act(request);
        let done = reply.last;
        let state = state_name(reply.state);
        if let Err(error) = lock(&self.catalog).settle_fleet_request(&request.id, &state, done) {
            tracing::warn!(
                id = request.id,
                "cannot record where the fleet request stands: {error}"
            );
        }
        if reply.state == ReplyState::Refused {
            tracing::warn!(
                id = request.id,
                kind,
                reason = reply.reason.as_deref().unwrap_or(""),
                "fleet request refused"
            );
        }
        reply
    }

    /// What `request` does, as its first reply.
    fn act(&self, request: &Request) -> Reply {
        let id = Some(request.id.as_str());
        let done = || Reply::new(&self.vehicle, id, ReplyState::Done, true);
        match &request.action {
            Action::Window(ask) => {
                let (start_ns, end_ns) = match ask.bounds() {
                    Ok(bounds) => bounds,
                    Err(why) => return Reply::refused(&self.vehicle, id, why),
                };
                // No topics keep every topic.
                let topics = (!ask.topics.is_empty()).then(|| ask.topics.clone());
                if let Some(Err(why)) = topics.as_deref().map(topic_filter) {
                    return Reply::refused(&self.vehicle, id, why);
                }
                let take = WindowTake {
                    id: request.id.clone(),
                    start_ns,
                    end_ns,
                    note: ask.note.clone(),
                    origin: origin::CLOUD.to_string(),
                    topics,
                };
                match self.sessions.incidents().take_window(&take) {
                    Ok(taken) => Reply {
                        incidents: (taken.iter())
                            .filter_map(|triggered| {
                                let incident = triggered.incident.as_ref()?;
                                Some(RepliedIncident {
                                    session: triggered.name.clone(),
                                    from_ns: incident.start_ns,
                                    to_ns: incident.end_ns,
                                })
                            })
                            .collect(),
                        ..Reply::new(&self.vehicle, id, ReplyState::Accepted, false)
                    },
                    Err(why) => Reply::refused(&self.vehicle, id, why.message),
                }
            }
            Action::Release { incident } => {
                match self.sessions.answer(ControlRequest::ReleaseIncident {
                    id: incident.clone(),
                }) {
                    Ok(_) => done(),
                    Err(why) => Reply::refused(&self.vehicle, id, why.message),
                }
            }
            Action::Uploads { mode } => match lock(&self.catalog).set_uploads_mode(*mode) {
                Ok(()) => {
                    tracing::info!(
                        mode = mode.name(),
                        "the fleet set what the uploads may carry"
                    );
                    done()
                }
                Err(error) => Reply::refused(&self.vehicle, id, error.to_string()),
            },
            Action::Status => match self.sessions.answer(ControlRequest::Status { name: None }) {
                Ok(Response::Status { sessions, .. }) => Reply {
                    status: serde_json::to_value(sessions).ok(),
                    ..done()
                },
                Ok(_) => done(),
                Err(why) => Reply::refused(&self.vehicle, id, why.message),
            },
            Action::Campaign(campaign) => match self.sessions.push_campaign(campaign.clone()) {
                Ok(_) => done(),
                Err(why) => Reply::refused(&self.vehicle, id, why),
            },
        }
    }
}

/// The name a reply state is kept under in the catalog.
pub fn state_name(state: ReplyState) -> String {
    serde_json::to_value(state)
        .ok()
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_default()
}
