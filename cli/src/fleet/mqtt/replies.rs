//! One request's round: published (signed, when a key is given) with a response topic of
//! this run's own and the request's id as correlation data, then the vehicles' replies
//! gathered until each has said enough or the time is up; `pull` and `uploads` share it.

use std::collections::BTreeSet;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use recd_chain::SigningKey;
use recd_fleet::{Envelope, Reply, ReplyState, Request, Topics, ALL};
use rumqttc::v5::mqttbytes::v5::PublishProperties;
use serde::Serialize;

use super::connect::{token, Link, Settings};
use crate::output::outln;

/// Whom a request is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// These vehicles, each by its own requests topic.
    Named(Vec<String>),
    /// Every vehicle, by `<prefix>/all/requests`: who replies is known only by listening.
    All,
}

/// How long replies are waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patience {
    /// How long to listen for vehicles replying to `all`, and, without `until_last`, how
    /// long to wait for a named vehicle's first reply.
    pub listen: Duration,
    /// `--wait`: wait for each replying vehicle's last reply, at most this long.
    pub until_last: Option<Duration>,
}

impl Patience {
    /// How long the round may last in all.
    pub fn limit(&self) -> Duration {
        self.until_last
            .map_or(self.listen, |wait| wait.max(self.listen))
    }
}

/// The replies so far, and whether they are enough.
#[derive(Debug, Clone)]
pub struct Tracker {
    target: Target,
    until_last: bool,
    replies: Vec<Reply>,
    heard: BTreeSet<String>,
    finished: BTreeSet<String>,
}

/// How a round ended, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    /// The request's id.
    pub id: String,
    /// Every reply, in the order they came.
    pub replies: Vec<Reply>,
    /// Vehicles that refused the request or failed it.
    pub failed: Vec<String>,
    /// Named vehicles that did not reply.
    pub silent: Vec<String>,
    /// With `--wait`: vehicles whose last reply had not come.
    pub unfinished: Vec<String>,
}

impl Outcome {
    /// 0 when someone replied and every reply is accepted, cut, uploaded or done; 1
    /// otherwise.
    pub fn exit_code(&self) -> ExitCode {
        let fine = !self.replies.is_empty()
            && self.failed.is_empty()
            && self.silent.is_empty()
            && self.unfinished.is_empty();
        if fine {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(crate::EXIT_FAILURE)
        }
    }
}

impl Tracker {
    /// Nothing heard yet from `target`; `until_last` as `--wait`.
    pub fn new(target: Target, until_last: bool) -> Self {
        Self {
            target,
            until_last,
            replies: Vec::new(),
            heard: BTreeSet::new(),
            finished: BTreeSet::new(),
        }
    }

    /// Takes one reply; `false` (and nothing taken) when it comes from a vehicle the
    /// request did not name.
    pub fn take(&mut self, reply: Reply) -> bool {
        if let Target::Named(names) = &self.target {
            if !names.contains(&reply.vehicle) {
                return false;
            }
        }
        self.heard.insert(reply.vehicle.clone());
        if reply.last {
            self.finished.insert(reply.vehicle.clone());
        }
        self.replies.push(reply);
        true
    }

    /// Whether nothing more is waited for; `listened` once `--listen` has passed (before,
    /// more vehicles may reply to `all`).
    pub fn settled(&self, listened: bool) -> bool {
        let expected: Vec<&String> = match &self.target {
            Target::Named(names) => names.iter().collect(),
            Target::All if !listened => return false,
            Target::All => self.heard.iter().collect(),
        };
        let enough = if self.until_last {
            &self.finished
        } else {
            &self.heard
        };
        expected.iter().all(|vehicle| enough.contains(*vehicle))
    }

    /// The outcome of request `id` with the replies taken.
    pub fn outcome(self, id: &str) -> Outcome {
        let failed: BTreeSet<String> = (self.replies.iter())
            .filter(|reply| matches!(reply.state, ReplyState::Refused | ReplyState::Failed))
            .map(|reply| reply.vehicle.clone())
            .collect();
        let silent = match &self.target {
            Target::Named(names) => (names.iter())
                .filter(|name| !self.heard.contains(*name))
                .cloned()
                .collect(),
            Target::All => Vec::new(),
        };
        let unfinished = if self.until_last {
            (self.heard.iter())
                .filter(|vehicle| !self.finished.contains(*vehicle))
                .cloned()
                .collect()
        } else {
            Vec::new()
        };
        Outcome {
            id: id.to_string(),
            replies: self.replies,
            failed: failed.into_iter().collect(),
            silent,
            unfinished,
        }
    }
}

/// One reply in one line: vehicle, state, and what it says (reason, incidents, files,
/// objects).
pub fn line(reply: &Reply) -> String {
    let state = serde_json::to_value(reply.state)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut text = format!("{}: {state}", reply.vehicle);
    if let Some(reason) = &reply.reason {
        text += &format!(": {reason}");
    }
    for incident in &reply.incidents {
        text += &format!(
            "; incident in {} from {} to {}",
            incident.session,
            crate::format::timestamp(incident.from_ns),
            crate::format::timestamp(incident.to_ns)
        );
    }
    if !reply.files.is_empty() {
        text += &format!("; files: {}", reply.files.join(", "));
    }
    if !reply.objects.is_empty() {
        text += &format!("; objects: {}", reply.objects.join(", "));
    }
    if let Some(status) = &reply.status {
        text += &format!("; status: {status}");
    }
    text
}

/// The topic a request for `vehicle` (an id, or `all`) goes to under `prefix`.
pub fn requests_topic(prefix: &str, vehicle: &str) -> Result<String, String> {
    if vehicle == ALL {
        // The fleet-wide topic sits beside every vehicle's: any valid id names it.
        Ok(Topics::new(prefix, "any")
            .map_err(|e| e.to_string())?
            .all_requests())
    } else {
        Ok(Topics::new(prefix, vehicle)
            .map_err(|e| e.to_string())?
            .requests())
    }
}

/// One request with `action` per vehicle of `vehicles` (sorted, once each), or one for
/// all when none is named, with one `id`, issued at `now_ns`; and whom they are for.
pub fn addressed(
    vehicles: &[String],
    prefix: &str,
    id: &str,
    now_ns: u64,
    action: &recd_fleet::Action,
) -> Result<(Vec<Request>, Target), String> {
    let mut vehicles = vehicles.to_vec();
    vehicles.sort();
    vehicles.dedup();
    let target = if vehicles.is_empty() {
        Target::All
    } else {
        Target::Named(vehicles.clone())
    };
    if vehicles.is_empty() {
        vehicles.push(ALL.to_string());
    }
    (vehicles.into_iter())
        .map(|vehicle| {
            if vehicle == ALL && target != Target::All {
                return Err("--vehicle all: leave --vehicle out to ask every vehicle".to_string());
            }
            requests_topic(prefix, &vehicle)?;
            Ok(Request {
                id: id.to_string(),
                vehicle,
                issued_ns: now_ns,
                action: action.clone(),
            })
        })
        .collect::<Result<Vec<_>, String>>()
        .map(|requests| (requests, target))
}

/// Sends `requests` (to `target`, signed with the broker options' key), saying `what`
/// they ask unless `json`, and waits for each named vehicle's reply (or listens
/// `listen` for all's); the exit status says whether every one took it.
pub fn ask_each(
    settings: &Settings,
    broker: &super::BrokerArgs,
    listen: Duration,
    (requests, target): (Vec<Request>, Target),
    what: &str,
    json: bool,
) -> Result<ExitCode, String> {
    // Loaded once the requests are known good: its errors and note come after theirs.
    let key = broker.signing_key()?;
    let patience = Patience {
        listen,
        until_last: None,
    };
    if !json {
        let whom = match &target {
            Target::All => ALL.to_string(),
            Target::Named(names) => names.join(", "),
        };
        let id = requests.first().map_or("", |request| request.id.as_str());
        outln!("request {id}: {what} to {whom}");
    }
    let outcome = ask(
        settings,
        Round {
            prefix: broker.prefix(),
            requests,
            key: key.as_ref(),
            target,
            patience,
            print: !json,
        },
    )?;
    report(&outcome, patience, json)
}

/// A fresh request id: `what`, the time in UTC and a random token
/// (`pull-20261129T101530Z-3fa9c2d1e0b7a654`).
pub fn fresh_id(what: &str) -> String {
    let now = std::time::SystemTime::now();
    let time: String = (humantime::format_rfc3339_seconds(now).to_string().chars())
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    format!("{what}-{time}-{}", token())
}

/// One round: what to publish and how long to wait.
pub struct Round<'a> {
    /// The topic prefix.
    pub prefix: &'a str,
    /// The requests, one per topic (all share one id).
    pub requests: Vec<Request>,
    /// The fleet's key, when requests are signed.
    pub key: Option<&'a SigningKey>,
    /// Whom they are for.
    pub target: Target,
    /// How long to wait.
    pub patience: Patience,
    /// Print each reply as it comes (not with `--json`).
    pub print: bool,
}

/// Publishes the round's requests and gathers the replies; the error is the broker's.
pub fn ask(settings: &Settings, round: Round) -> Result<Outcome, String> {
    let id = round
        .requests
        .first()
        .map(|r| r.id.clone())
        .unwrap_or_default();
    let mut link = Link::connect(settings)?;
    // Subscribed before publishing: a reply may come at once.
    let response_topic = format!("{}/replies/{}", round.prefix, token());
    link.subscribe(std::slice::from_ref(&response_topic))?;
    for request in &round.requests {
        let topic = requests_topic(round.prefix, &request.vehicle)?;
        let properties = PublishProperties {
            response_topic: Some(response_topic.clone()),
            correlation_data: Some(id.as_bytes().to_vec().into()),
            content_type: Some("application/json".to_string()),
            ..PublishProperties::default()
        };
        if !link.publish(&topic, Envelope::seal(request, round.key), properties)? {
            eprintln!("rec: the broker says no one subscribes to {topic} (a vehicle never connected, or another --prefix?)");
        }
    }
    let started = Instant::now();
    let listened_at = started + round.patience.listen;
    let deadline = started + round.patience.limit();
    let mut tracker = Tracker::new(round.target, round.patience.until_last.is_some());
    while !tracker.settled(Instant::now() >= listened_at) {
        // Wake at the end of --listen too: `all` may be settled then.
        let wake = if Instant::now() < listened_at {
            listened_at.min(deadline)
        } else {
            deadline
        };
        let Some(message) = link.next_message(wake)? else {
            if Instant::now() >= deadline {
                break;
            }
            continue;
        };
        let correlated = (message.properties.as_ref())
            .and_then(|p| p.correlation_data.as_deref())
            .is_some_and(|data| data == id.as_bytes());
        if message.topic != response_topic.as_bytes() || !correlated {
            continue;
        }
        match serde_json::from_slice::<Reply>(&message.payload) {
            Ok(reply) if reply.id.as_deref().is_none_or(|replied| replied == id) => {
                let shown = line(&reply);
                let vehicle = reply.vehicle.clone();
                if !tracker.take(reply) {
                    eprintln!(
                        "rec: skipped a reply from {vehicle}, which the request did not name"
                    );
                } else if round.print {
                    outln!("{shown}");
                }
            }
            Ok(_) => {}
            Err(error) => eprintln!("rec: skipped a reply that does not read: {error}"),
        }
    }
    link.close();
    Ok(tracker.outcome(&id))
}

/// Prints the end of a round: who failed, who stayed silent, who did not finish (with
/// `json`, the outcome as JSON); its exit status.
pub fn report(outcome: &Outcome, patience: Patience, json: bool) -> Result<ExitCode, String> {
    if json {
        crate::output::print_json(outcome)?;
        return Ok(outcome.exit_code());
    }
    let waited = humantime::format_duration(patience.limit());
    if outcome.replies.is_empty() && outcome.silent.is_empty() {
        eprintln!("rec: no vehicle replied to {} within {waited}", outcome.id);
    }
    if !outcome.failed.is_empty() {
        eprintln!("rec: refused or failed: {}", outcome.failed.join(", "));
    }
    if !outcome.silent.is_empty() {
        eprintln!(
            "rec: no reply to {} within {waited} from: {} (offline? the broker keeps the request for a vehicle's session; `rec fleet vehicles` shows who is online)",
            outcome.id,
            outcome.silent.join(", ")
        );
    }
    if !outcome.unfinished.is_empty() {
        eprintln!(
            "rec: not finished within {waited}: {}",
            outcome.unfinished.join(", ")
        );
    }
    Ok(outcome.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply(vehicle: &str, state: ReplyState, last: bool) -> Reply {
        Reply::new(vehicle, Some("r1"), state, last)
    }

    #[test]
    fn a_named_vehicle_is_settled_by_its_first_reply_or_with_wait_by_its_last() {
        let named = || Target::Named(vec!["car-1".into(), "car-2".into()]);
        let mut first = Tracker::new(named(), false);
        first.take(reply("car-1", ReplyState::Accepted, false));
        assert!(!first.settled(true));
        first.take(reply("car-2", ReplyState::Refused, true));
        assert!(first.settled(false));
        assert!(!first.take(reply("car-3", ReplyState::Done, true)));
        let outcome = first.outcome("r1");
        assert_eq!(outcome.replies.len(), 2);
        assert_eq!(outcome.failed, ["car-2"]);
        assert!(outcome.silent.is_empty() && outcome.unfinished.is_empty());
        assert_eq!(outcome.exit_code(), ExitCode::from(1));

        let mut last = Tracker::new(named(), true);
        last.take(reply("car-1", ReplyState::Accepted, false));
        last.take(reply("car-2", ReplyState::Accepted, false));
        last.take(reply("car-1", ReplyState::Cut, false));
        last.take(reply("car-1", ReplyState::Uploaded, true));
        assert!(!last.settled(true));
        let outcome = last.outcome("r1");
        assert_eq!(outcome.unfinished, ["car-2"]);
        assert!(outcome.failed.is_empty());
        assert_eq!(outcome.exit_code(), ExitCode::from(1));
    }

    #[test]
    fn all_is_settled_only_after_listening_and_then_by_whoever_replied() {
        let mut all = Tracker::new(Target::All, true);
        all.take(reply("car-1", ReplyState::Accepted, false));
        assert!(!all.settled(false));
        assert!(!all.settled(true));
        all.take(reply("car-1", ReplyState::Done, true));
        assert!(!all.settled(false));
        assert!(all.settled(true));
        let outcome = all.outcome("r1");
        assert_eq!(outcome.exit_code(), ExitCode::SUCCESS);
        // No reply at all is a failure, as a silent named vehicle is.
        assert!(Tracker::new(Target::All, false).settled(true));
        let none = Tracker::new(Target::All, false).outcome("r1");
        assert_eq!(none.exit_code(), ExitCode::from(1));
        let silent = Tracker::new(Target::Named(vec!["car-9".into()]), false).outcome("r1");
        assert_eq!(silent.silent, ["car-9"]);
    }

    #[test]
    fn a_reply_is_one_line_with_what_it_says() {
        let mut cut = reply("car-1", ReplyState::Cut, false);
        cut.files = vec!["a.mcap".into(), "b.mcap".into()];
        assert_eq!(line(&cut), "car-1: cut; files: a.mcap, b.mcap");
        let refused = Reply::refused("car-2", Some("r1"), "unsigned");
        assert_eq!(line(&refused), "car-2: refused: unsigned");
    }

    #[test]
    fn requests_go_to_the_vehicle_s_topic_or_all_s() {
        assert_eq!(
            requests_topic("recd", "car-1").unwrap(),
            "recd/car-1/requests"
        );
        assert_eq!(
            requests_topic("f/recd", "all").unwrap(),
            "f/recd/all/requests"
        );
        assert!(requests_topic("recd", "a/b")
            .unwrap_err()
            .contains("\"a/b\""));
        assert!(requests_topic("$SYS", "all").is_err());
        let id = fresh_id("pull");
        assert!(
            id.starts_with("pull-2") && id.len() == "pull-20261129T101530Z-".len() + 16,
            "{id}"
        );
        assert!(id.len() <= recd_fleet::MAX_ID_LEN);
    }
}
