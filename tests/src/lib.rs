//! Shared helpers for the cross-crate tests: the fake Kubernetes API server the live-mode tests
//! and the live benchmark run against, and the programs the end-to-end tests run.

pub mod binaries;
pub mod fake_api;
