//! What the cloud asks of a vehicle ([`Request`]), signed with the fleet's Ed25519 key
//! ([`Envelope`]), and what the vehicle answers ([`Reply`]).
//!
//! A request is JSON text; the envelope carries that text as a string beside the
//! signature of its exact bytes, so that no one has to agree on how JSON is written:
//!
//! ```json
//! {"request": "{\"id\":\"r1\",\"vehicle\":\"car-3\",\"issued_ns\":1764400000000000000,\"kind\":\"status\"}",
//!  "signature": "<base64 of the Ed25519 signature of the request's UTF-8 bytes>"}
//! ```

use base64::Engine;
use recd_chain::{PublicKey, SigningKey};
use serde::{Deserialize, Serialize};

pub use recd_control::UploadsMode;

use crate::topics::ALL;

/// The longest request id: ids are kept in the vehicle's catalog and name incidents.
pub const MAX_ID_LEN: usize = 128;
/// How far ahead of the vehicle's clock a request may say it was issued (clocks differ).
pub const MAX_CLOCK_AHEAD_NS: u64 = 10 * 60 * 1_000_000_000;

/// One request, as the cloud writes and signs it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// Unique per request: a vehicle serves an id once, however often it is delivered.
    /// It is also the id of the incident a window makes.
    pub id: String,
    /// The vehicle it is for, or `all`.
    pub vehicle: String,
    /// When it was made, ns since the Unix epoch: a vehicle refuses it once it is older
    /// than `max_request_age`.
    pub issued_ns: u64,
    /// What to do.
    #[serde(flatten)]
    pub action: Action,
}

/// What a request asks for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Keep a window of time of every session that holds part of it as an incident of
    /// origin `cloud`: pinned, cut, uploaded first.
    Window(WindowAsk),
    /// End the pin of the incidents with this id.
    Release {
        /// The incident's id.
        incident: String,
    },
    /// What the vehicle's link may carry now.
    Uploads {
        /// The mode.
        mode: UploadsMode,
    },
    /// What `rec status --json` prints, in the reply.
    Status,
    /// Rules to run, replacing the campaign's lower version; none removes it.
    Campaign(crate::Campaign),
}

impl Action {
    /// The kind's name on the wire.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Window(_) => "window",
            Self::Release { .. } => "release",
            Self::Uploads { .. } => "uploads",
            Self::Status => "status",
            Self::Campaign(_) => "campaign",
        }
    }
}

/// A window: `from_ns` and `to_ns`, or a moment `at_ns` with `before_ms` and `after_ms`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WindowAsk {
    /// Its start, ns since the Unix epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_ns: Option<u64>,
    /// Its end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_ns: Option<u64>,
    /// Its moment, with `before_ms` and `after_ms` around it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_ns: Option<u64>,
    /// Milliseconds before `at_ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_ms: Option<u64>,
    /// Milliseconds after `at_ns`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_ms: Option<u64>,
    /// Glob patterns of the topics to keep; empty keeps every topic.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<String>,
    /// Why; it goes into the incident.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl WindowAsk {
    /// The window as (start, end) in ns, or why it is not one.
    pub fn bounds(&self) -> Result<(u64, u64), String> {
        let (start, end) = match (self.from_ns, self.to_ns, self.at_ns) {
            (Some(from), Some(to), None) if self.before_ms.is_none() && self.after_ms.is_none() => {
                (from, to)
            }
            (None, None, Some(at)) => {
                let millis = |ms: Option<u64>| ms.unwrap_or(0).saturating_mul(1_000_000);
                (
                    at.saturating_sub(millis(self.before_ms)),
                    at.saturating_add(millis(self.after_ms)),
                )
            }
            _ => {
                return Err(
                    "a window gives from_ns and to_ns, or at_ns with before_ms and after_ms"
                        .to_string(),
                )
            }
        };
        if end <= start {
            return Err(format!(
                "the window ends ({end}) before or when it starts ({start})"
            ));
        }
        Ok((start, end))
    }
}

/// A request on the wire: its JSON text and the signature of that text's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// The [`Request`]'s JSON text.
    pub request: String,
    /// The base64 of the Ed25519 signature of `request`'s UTF-8 bytes; absent on a
    /// request no one signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl Envelope {
    /// `request` signed with `key` (or unsigned, without one), as the bytes to publish.
    pub fn seal(request: &Request, key: Option<&SigningKey>) -> Vec<u8> {
        let text = serde_json::to_string(request).expect("a request serializes");
        let signature = key
            .map(|key| base64::engine::general_purpose::STANDARD.encode(key.sign(text.as_bytes())));
        let envelope = Envelope {
            request: text,
            signature,
        };
        serde_json::to_vec(&envelope).expect("an envelope serializes")
    }
}

/// What a vehicle checks a request against.
#[derive(Debug, Clone)]
pub struct Acceptance<'a> {
    /// The vehicle's id.
    pub vehicle: &'a str,
    /// The keys whose signatures it takes (`[fleet] request_keys`).
    pub keys: &'a [PublicKey],
    /// Whether an unsigned request is taken (`allow_unsigned`, a test bench's).
    pub allow_unsigned: bool,
    /// The oldest a request may be, in ns (`max_request_age`).
    pub max_age_ns: u64,
    /// Now, ns since the Unix epoch.
    pub now_ns: u64,
}

/// Why a request was refused before anything was done; the label names the reason in
/// `/metrics` and logs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not an envelope holding a request.
    #[error("malformed request: {0}")]
    Malformed(String),
    /// No signature, and unsigned requests are not taken.
    #[error(
        "unsigned: this vehicle takes only requests signed with a key of [fleet] request_keys"
    )]
    Unsigned,
    /// A signature none of the keys made.
    #[error("signed by a key that is not in this vehicle's [fleet] request_keys")]
    WrongKey,
    /// For another vehicle.
    #[error("for vehicle {0:?}, not this one")]
    OtherVehicle(String),
    /// Older than `max_request_age`.
    #[error("stale: issued {age_s} s ago, longer than max_request_age ({max_s} s)")]
    Stale {
        /// Its age in seconds.
        age_s: u64,
        /// The bound.
        max_s: u64,
    },
    /// Issued further ahead of the vehicle's clock than clocks differ.
    #[error("issued {ahead_s} s in the future by this vehicle's clock")]
    Ahead {
        /// How far ahead, in seconds.
        ahead_s: u64,
    },
    /// An id served already.
    #[error("replayed: request {0:?} was taken already")]
    Replayed(String),
    /// An id that cannot be kept.
    #[error("bad id {0:?}: 1 to 128 characters, no control characters")]
    BadId(String),
}

impl Refusal {
    /// The reason's label in `/metrics`.
    pub fn label(&self) -> &'static str {
        match self {
            Self::Malformed(_) => "malformed",
            Self::Unsigned => "unsigned",
            Self::WrongKey => "wrong_key",
            Self::OtherVehicle(_) => "other_vehicle",
            Self::Stale { .. } => "stale",
            Self::Ahead { .. } => "ahead",
            Self::Replayed(_) => "replayed",
            Self::BadId(_) => "bad_id",
        }
    }

    /// Every label, for counters that start at zero.
    pub const LABELS: [&'static str; 8] = [
        "malformed",
        "unsigned",
        "wrong_key",
        "other_vehicle",
        "stale",
        "ahead",
        "replayed",
        "bad_id",
    ];
}

/// Opens the envelope `payload` under `acceptance`: the request, when it is signed by one
/// of the keys (or unsigned and allowed), for this vehicle or all, and neither stale nor
/// ahead. Whether its id was served before is the caller's to check (it keeps the ids).
pub fn open(payload: &[u8], acceptance: &Acceptance) -> Result<Request, Refusal> {
    let envelope: Envelope =
        serde_json::from_slice(payload).map_err(|e| Refusal::Malformed(e.to_string()))?;
    match &envelope.signature {
        None if !acceptance.allow_unsigned => return Err(Refusal::Unsigned),
        None => {}
        Some(signature) => {
            let signature = base64::engine::general_purpose::STANDARD
                .decode(signature)
                .map_err(|_| Refusal::Malformed("the signature is not base64".into()))?;
            let message = envelope.request.as_bytes();
            if !(acceptance.keys.iter()).any(|key| key.verifies(message, &signature)) {
                return Err(Refusal::WrongKey);
            }
        }
    }
    let request: Request =
        serde_json::from_str(&envelope.request).map_err(|e| Refusal::Malformed(e.to_string()))?;
    if request.id.is_empty()
        || request.id.chars().count() > MAX_ID_LEN
        || request.id.contains(char::is_control)
    {
        return Err(Refusal::BadId(request.id));
    }
    if request.vehicle != acceptance.vehicle && request.vehicle != ALL {
        return Err(Refusal::OtherVehicle(request.vehicle));
    }
    let now = acceptance.now_ns;
    if request.issued_ns > now.saturating_add(MAX_CLOCK_AHEAD_NS) {
        return Err(Refusal::Ahead {
            ahead_s: (request.issued_ns - now) / 1_000_000_000,
        });
    }
    let age = now.saturating_sub(request.issued_ns);
    if age > acceptance.max_age_ns {
        return Err(Refusal::Stale {
            age_s: age / 1_000_000_000,
            max_s: acceptance.max_age_ns / 1_000_000_000,
        });
    }
    Ok(request)
}

/// Where a request stands, in a reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReplyState {
    /// Taken: a window's incident is pinned (its cut and upload follow).
    Accepted,
    /// Not taken; `reason` says why, and nothing changed.
    Refused,
    /// A window's files are cut (`files`); their upload follows when `[upload]` is set.
    Cut,
    /// A window's files are in the bucket (`objects`).
    Uploaded,
    /// Taken, but it could not be finished (`reason`).
    Failed,
    /// Done (a release, an uploads mode, a status).
    Done,
}

/// One reply of a vehicle to a request, on the request's response topic with its
/// correlation data (or on `<prefix>/<vehicle>/replies` when it gave none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The request's id (`None` when it could not be read).
    pub id: Option<String>,
    /// The vehicle replying.
    pub vehicle: String,
    /// Where the request stands.
    pub state: ReplyState,
    /// Whether no reply follows this one.
    pub last: bool,
    /// Why it was refused or failed, for a person to act on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A window's incidents: one per session holding part of it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub incidents: Vec<RepliedIncident>,
    /// A window's cut files (names in the vehicle's data directory).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// A window's objects in the bucket.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<String>,
    /// A status request's answer: what `rec status --json` prints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<serde_json::Value>,
}

impl Reply {
    /// A reply of `vehicle` to request `id` in `state`, with nothing else said.
    pub fn new(vehicle: &str, id: Option<&str>, state: ReplyState, last: bool) -> Self {
        Self {
            id: id.map(str::to_string),
            vehicle: vehicle.to_string(),
            state,
            last,
            reason: None,
            incidents: Vec::new(),
            files: Vec::new(),
            objects: Vec::new(),
            status: None,
        }
    }

    /// The refusal of request `id` (if it could be read) for `reason`.
    pub fn refused(vehicle: &str, id: Option<&str>, reason: impl Into<String>) -> Self {
        Self {
            reason: Some(reason.into()),
            ..Self::new(vehicle, id, ReplyState::Refused, true)
        }
    }
}

/// One incident a window made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepliedIncident {
    /// Its session.
    pub session: String,
    /// Its window's start, ns since the Unix epoch.
    pub from_ns: u64,
    /// Its window's end.
    pub to_ns: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRIVATE: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIHHFDrv+7tSepWl2kV+Nzn8Wtw4XPUNjdJZugQrb6d6b\n-----END PRIVATE KEY-----\n";
    const NOW: u64 = 1_764_400_000_000_000_000;
    const DAY: u64 = 86_400_000_000_000;

    fn key() -> SigningKey {
        SigningKey::from_pem(PRIVATE, "test").unwrap()
    }

    fn request(vehicle: &str, issued_ns: u64) -> Request {
        Request {
            id: "r1".into(),
            vehicle: vehicle.into(),
            issued_ns,
            action: Action::Window(WindowAsk {
                from_ns: Some(NOW - 60_000_000_000),
                to_ns: Some(NOW - 30_000_000_000),
                topics: vec!["/camera/*".into()],
                ..Default::default()
            }),
        }
    }

    fn acceptance<'a>(keys: &'a [PublicKey], allow_unsigned: bool) -> Acceptance<'a> {
        Acceptance {
            vehicle: "car-3",
            keys,
            allow_unsigned,
            max_age_ns: 4 * DAY,
            now_ns: NOW,
        }
    }

    #[test]
    fn a_request_signed_by_a_fleet_key_for_this_vehicle_or_all_is_opened_whole() {
        let keys = [key().public_key()];
        for vehicle in ["car-3", "all"] {
            let sent = request(vehicle, NOW - DAY);
            let payload = Envelope::seal(&sent, Some(&key()));
            assert_eq!(open(&payload, &acceptance(&keys, false)), Ok(sent));
        }
    }

    #[test]
    fn unsigned_forged_foreign_stale_and_future_requests_are_refused_with_their_reason() {
        let keys = [key().public_key()];
        let check = |payload: &[u8]| open(payload, &acceptance(&keys, false));
        let sent = request("car-3", NOW);
        assert_eq!(check(&Envelope::seal(&sent, None)), Err(Refusal::Unsigned));
        assert_eq!(
            open(&Envelope::seal(&sent, None), &acceptance(&keys, true)),
            Ok(sent.clone())
        );
        // Signed, then changed: the signature no longer covers the text.
        let mut envelope: Envelope =
            serde_json::from_slice(&Envelope::seal(&sent, Some(&key()))).unwrap();
        envelope.request = envelope.request.replace("car-3", "all");
        let forged = serde_json::to_vec(&envelope).unwrap();
        assert_eq!(check(&forged), Err(Refusal::WrongKey));
        let other = SigningKey::from_pem(OTHER, "other").unwrap();
        assert_eq!(
            check(&Envelope::seal(&sent, Some(&other))),
            Err(Refusal::WrongKey)
        );
        assert_eq!(
            check(&Envelope::seal(&request("car-4", NOW), Some(&key()))),
            Err(Refusal::OtherVehicle("car-4".into()))
        );
        assert_eq!(
            check(&Envelope::seal(
                &request("car-3", NOW - 5 * DAY),
                Some(&key())
            )),
            Err(Refusal::Stale {
                age_s: 5 * 86_400,
                max_s: 4 * 86_400
            })
        );
        assert_eq!(
            check(&Envelope::seal(&request("car-3", NOW + DAY), Some(&key()))),
            Err(Refusal::Ahead { ahead_s: 86_400 })
        );
        assert!(matches!(check(b"{\"id\":1}"), Err(Refusal::Malformed(_))));
        let mut bad_id = sent;
        bad_id.id = "a\nb".into();
        assert_eq!(
            check(&Envelope::seal(&bad_id, Some(&key()))),
            Err(Refusal::BadId("a\nb".into()))
        );
    }

    const OTHER: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEILFbA7u6tf6SpvYU1zhofNVJwtxT9zOIAuHnNSDMXtMT\n-----END PRIVATE KEY-----\n";

    #[test]
    fn a_window_is_from_and_to_or_a_moment_with_its_sides() {
        let between = WindowAsk {
            from_ns: Some(10),
            to_ns: Some(20),
            ..Default::default()
        };
        assert_eq!(between.bounds(), Ok((10, 20)));
        let around = WindowAsk {
            at_ns: Some(10_000_000_000),
            before_ms: Some(2000),
            after_ms: Some(1000),
            ..Default::default()
        };
        assert_eq!(around.bounds(), Ok((8_000_000_000, 11_000_000_000)));
        let mixed = WindowAsk {
            from_ns: Some(10),
            to_ns: Some(20),
            before_ms: Some(5),
            ..Default::default()
        };
        assert!(mixed.bounds().is_err());
        let backwards = WindowAsk {
            from_ns: Some(20),
            to_ns: Some(10),
            ..Default::default()
        };
        assert!(backwards.bounds().unwrap_err().contains("ends"));
    }

    #[test]
    fn requests_read_as_the_reference_writes_them() {
        let text =
            r#"{"id":"r9","vehicle":"all","issued_ns":5,"kind":"uploads","mode":"incidents"}"#;
        let request: Request = serde_json::from_str(text).unwrap();
        assert_eq!(
            request.action,
            Action::Uploads {
                mode: UploadsMode::Incidents
            }
        );
        let text = r#"{"id":"r9","vehicle":"all","issued_ns":5,"kind":"release","incident":"i1"}"#;
        let request: Request = serde_json::from_str(text).unwrap();
        assert_eq!(request.action.kind(), "release");
        let unknown = r#"{"id":"r9","vehicle":"all","issued_ns":5,"kind":"format_disk"}"#;
        assert!(serde_json::from_str::<Request>(unknown).is_err());
    }
}
