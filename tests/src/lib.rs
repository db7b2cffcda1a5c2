//! Shared helpers for the cross-crate tests: the fake Kubernetes API server the live-mode tests
//! and the live benchmark run against, the programs the end-to-end tests run, and the loader
//! of corpus-style cases.

pub mod binaries;
pub mod cases;
pub mod fake_api;
