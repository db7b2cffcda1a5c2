//! Shared helpers for the cross-crate tests: the fake Kubernetes API server the live-mode tests
//! and the live benchmark run against. Other helpers live in the test files themselves.

pub mod fake_api;
