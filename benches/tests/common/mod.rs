//! The shared helpers of recd's end-to-end tests.

#![allow(unused_imports)]

pub use recd_testkit::*;
