//! What the handlers share: the daemon, the access rules, the latest snapshot, the rate
//! history, the metric budget and the presets.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::State;

use crate::access::Access;
use crate::backend::{Backend, Preset};
use crate::history::RateHistory;
use crate::metrics::TopicBudget;
use crate::snapshot::Snapshots;

/// The client's address, put on each request by the listener.
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub SocketAddr);

/// What the handlers share.
pub struct Shared {
    /// The daemon.
    pub backend: Arc<dyn Backend>,
    /// Who may ask what.
    pub access: Access,
    /// The latest snapshot.
    pub snapshots: Snapshots,
    /// The last minute of rates.
    pub history: Mutex<RateHistory>,
    /// Topics with metric series of their own.
    pub budget: Mutex<TopicBudget>,
    /// `[[preset]]`s.
    pub presets: Vec<Preset>,
    /// The preset each session started from the page was started from.
    pub started_from: Mutex<BTreeMap<String, String>>,
}

/// The handlers' state.
pub type AppState = State<Arc<Shared>>;
