//! `rec start`, `rec stop`, `rec status`, `rec list`: sessions of the recd daemon, one
//! module per command.

mod backlog;
mod list;
mod rules_lines;
mod start;
mod status;
mod stop;
mod topic_table;

pub use list::{list, ListArgs};
pub use rules_lines::rules_text;
pub use start::{start, StartArgs};
pub use status::{status, StatusArgs};
pub use stop::{stop, StopArgs};
