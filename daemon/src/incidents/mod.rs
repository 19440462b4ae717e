//! Incidents' files: what they are called ([`naming`]) and the thread that cuts each
//! incident's window out of its session's files once it has been written ([`Cutter`]).
//! Taking, listing and releasing incidents is the sessions' (`crate::sessions`); what
//! they pin is the catalog's.

mod cutter;
pub mod naming;

pub use cutter::Cutter;

/// The folder of the data directory that holds the cut files (no session may be called
/// so).
pub const DIRECTORY: &str = "incidents";
