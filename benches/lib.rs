//! The load generator's payload format and the check that proves a recording holds every
//! byte that was published; shared by `recd-load`, the end-to-end harness and the
//! end-to-end tests. The benchmarks themselves live in `benches/`.

pub mod blob;
pub mod proof;
pub mod report;
pub mod verify;
