//! What the HTTP listener asks of the sessions beyond the control protocol: whether the
//! catalog answers, and the finishing queue's length.

use super::Sessions;

impl Sessions {
    /// Whether the catalog answers, on recd's connection and opened afresh.
    pub fn check_catalog(&self) -> Result<(), String> {
        self.catalog().check().map_err(|error| error.to_string())
    }

    /// Files waiting to be finished; `None` when the catalog cannot say.
    pub fn files_waiting_to_finish(&self) -> Option<u64> {
        self.catalog().count_waiting_to_finish().ok()
    }
}
