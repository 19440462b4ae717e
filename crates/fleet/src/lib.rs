//! The contract between recd and a fleet's cloud over an MQTT broker (`[fleet]`): where a
//! vehicle publishes ([`Topics`]) and what ([`Presence`], [`Holdings`]), as plain data that
//! serializes to the JSON on the wire. recd builds no server: the broker carries these
//! between the vehicles and whoever in the cloud subscribes.
//!
//! | topic                          | retained | payload      | published                        |
//! |--------------------------------|----------|--------------|----------------------------------|
//! | `<prefix>/<vehicle>/online`    | yes      | [`Presence`] | on connecting; `false` as the last will and on a clean stop |
//! | `<prefix>/<vehicle>/holdings`  | yes      | [`Holdings`] | on change, at most every `holdings_period` |
//! | `<prefix>/<vehicle>/requests`  | no       | requests     | by the cloud, for this vehicle   |
//! | `<prefix>/all/requests`        | no       | requests     | by the cloud, for every vehicle  |
//! | the request's response topic, else `<prefix>/<vehicle>/replies` | no | [`Reply`] | by the vehicle, for each step of a request |
//!
//! Requests travel as an [`Envelope`]: the [`Request`]'s JSON text and its Ed25519
//! signature by the fleet's key; a vehicle [`open`]s it or refuses it ([`Refusal`]).

#![warn(missing_docs)]

mod broker;
mod campaign;
mod holdings;
mod requests;
mod topics;

pub use broker::{Broker, BrokerError, MQTTS_PORT, MQTT_PORT};
pub use campaign::{Campaign, MAX_CAMPAIGN_NAME_LEN};
pub use holdings::{
    merge_spans, Disk, FileSpan, Holdings, IncidentHolding, SessionHoldings, Span, TopicHolding,
    SPAN_GAP_NS,
};
pub use requests::{
    open, Acceptance, Action, Envelope, Refusal, RepliedIncident, Reply, ReplyState, Request,
    UploadsMode, WindowAsk, MAX_CLOCK_AHEAD_NS, MAX_ID_LEN,
};
pub use topics::{TopicError, Topics, ALL, DEFAULT_PREFIX};

use serde::{Deserialize, Serialize};

/// Whether a vehicle's recd is connected: `true` with its version once it connects,
/// `false` as its last will (the broker publishes it when the connection is lost) and when
/// it stops cleanly. Retained, so a cloud that subscribes later learns it at once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Presence {
    /// Connected now.
    pub online: bool,
    /// The vehicle's id.
    pub vehicle: String,
    /// recd's version, when online.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}
