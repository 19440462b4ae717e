//! Benchmarks of recd live in `benches/`; this crate has no library code of its own.
