//! The plugin's library half: live collection from the cluster (kube-rs). The binary
//! (`main.rs`) parses the command line and prints; tests drive collection through this crate
//! against the fake API server.

pub mod collect;
