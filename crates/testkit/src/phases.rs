//! Checks that all run (and print their numbers) before the test fails for any of them:
//! a test of several configurations reports every one that failed, not only the first.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Labelled checks run one after the other; their failures are collected.
#[derive(Debug, Default)]
pub struct Phases {
    failed: Vec<String>,
}

impl Phases {
    /// Runs `check`; a panic in it is noted under `label` rather than ending the test.
    pub fn run(&mut self, label: &str, check: impl FnOnce()) {
        if let Err(panic) = catch_unwind(AssertUnwindSafe(check)) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            self.failed.push(format!("[{label}] {message}"));
        }
    }

    /// Fails the test, naming every check that failed, if any did.
    pub fn finish(self) {
        assert!(self.failed.is_empty(), "{}", self.failed.join("\n"));
    }
}
