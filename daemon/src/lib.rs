//! recd's configuration (`recd.toml`) as a library, so that the daemon, tools and the fuzz
//! targets read it the same way.

pub mod config;
