//! recd's HTTP listener, off by default: Prometheus metrics (`/metrics`), Kubernetes-style
//! probes (`/livez`, `/readyz`), the live status as JSON (`/api/status`, `/api/overview`,
//! `/api/incidents`) and a page for a phone or tablet (`/`) whose buttons start, stop, pause, mark and
//! trigger sessions when control is allowed and the token presented.
//!
//! It runs on a thread of its own with its own runtime, never in the recording path; it
//! asks the daemon only through [`Backend`], a few times a second at most however many
//! clients ask.

mod access;
mod api;
mod backend;
mod control;
mod history;
mod incidents;
mod listener;
mod metrics;
mod page;
mod probes;
mod reply;
mod router;
mod settings;
mod shared;
mod snapshot;
mod token;

pub use backend::{Backend, Check, DaemonFacts, FleetRequests, Preset};
pub use listener::{HttpServer, StartError};
pub use metrics::{families, render, Family, Kind, TopicBudget};
pub use settings::{
    HttpSettings, SettingsError, HEADER_TIMEOUT, MAX_BODY_BYTES, MAX_CONNECTIONS, REQUEST_TIMEOUT,
};
pub use snapshot::Snapshot;
pub use token::{TokenError, TokenFile, MIN_TOKEN_CHARS};
