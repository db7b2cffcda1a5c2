//! Shared helpers for the cross-crate tests live in the test files themselves.
