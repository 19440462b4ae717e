//! What the HTTP listener asks of the sessions beyond the control protocol: whether the
//! catalog answers.

use super::Sessions;

impl Sessions {
    /// Whether the catalog answers, on recd's connection and opened afresh.
    pub fn check_catalog(&self) -> Result<(), String> {
        self.catalog().check().map_err(|error| error.to_string())
    }
}
