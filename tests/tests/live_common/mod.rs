//! Shared by the `live_*` tests: run collection against a fake API server and look at what
//! came back and what the server saw.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use karpenter_why_core::{analyze, Options, Report};
use karpenter_why_plugin::collect::{collect, CollectError, Collection, Settings, Target};
use karpenter_why_tests::fake_api::{FakeApi, RequestRecord, Scenario};

pub struct Run {
    pub server: FakeApi,
    pub result: Result<Collection, CollectError>,
    pub requests: Vec<RequestRecord>,
    pub depth: usize,
    pub elapsed: Duration,
    _dir: TempDir,
}

impl Run {
    pub fn collection(&self) -> &Collection {
        match &self.result {
            Ok(collection) => collection,
            Err(e) => panic!("collection failed: {e}"),
        }
    }

    pub fn report(&self) -> Report {
        analyze(&self.collection().documents, &Options::default())
    }

    pub fn ids(&self) -> Vec<&'static str> {
        let mut ids: Vec<&'static str> = self.report().diagnoses.iter().map(|d| d.id).collect();
        ids.dedup();
        ids
    }

    pub fn labels(&self) -> Vec<String> {
        self.collection()
            .documents
            .iter()
            .map(|d| d.label.clone())
            .collect()
    }

    pub fn has_document(&self, label: &str) -> bool {
        self.collection().documents.iter().any(|d| d.label == label)
    }

    pub fn document(&self, label: &str) -> &str {
        &self
            .collection()
            .documents
            .iter()
            .find(|d| d.label == label)
            .unwrap_or_else(|| panic!("no document {label}; have {:#?}", self.labels()))
            .text
    }

    /// The missing entry about `what` (substring).
    pub fn missing(&self, what: &str) -> &karpenter_why_plugin::collect::MissingFact {
        self.collection()
            .missing
            .iter()
            .find(|m| m.what.contains(what))
            .unwrap_or_else(|| {
                panic!(
                    "no missing entry about {what}; have {:#?}",
                    self.collection().missing
                )
            })
    }

    /// Requests whose path is exactly `path`.
    pub fn requests_to(&self, path: &str) -> Vec<&RequestRecord> {
        self.requests.iter().filter(|r| r.path == path).collect()
    }

    /// Asserts the read-only and selective shape every run must have.
    pub fn assert_read_only_and_selective(&self) {
        for request in &self.requests {
            assert_eq!(request.method, "GET", "only GETs: {request:?}");
            assert!(
                !request.path.contains("/secrets"),
                "never Secrets: {request:?}"
            );
            assert_ne!(
                request.param("watch"),
                Some("true"),
                "no watches: {request:?}"
            );
            let is_pod_list = request.path.ends_with("/pods");
            if is_pod_list {
                assert!(
                    request.param("labelSelector").is_some()
                        || request.param("fieldSelector").is_some(),
                    "pods are never listed without a selector: {request:?}"
                );
            }
        }
    }
}

/// A temporary directory removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "karpenter-why-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Settings pointing at `server` through a written kubeconfig (context namespace `default`).
pub fn settings_for(server: &FakeApi, dir: &TempDir) -> Settings {
    Settings {
        kubeconfig: Some(server.write_kubeconfig(&dir.0, "default")),
        request_timeout: Some(Duration::from_secs(10)),
        ..Settings::default()
    }
}

/// Starts `scenario`, collects `target` with `adjust`ed settings, and records what happened.
pub fn run_with(scenario: Scenario, target: Target, adjust: impl FnOnce(&mut Settings)) -> Run {
    let server = FakeApi::start(scenario);
    let dir = TempDir::new("live");
    let mut settings = settings_for(&server, &dir);
    adjust(&mut settings);
    let started = Instant::now();
    let result = collect(&settings, &target);
    let elapsed = started.elapsed();
    let requests = server.requests();
    // Round mode counts sequential round trips exactly; otherwise they come from the timings.
    let depth = if requests.iter().any(|r| r.round.is_some()) {
        server.rounds()
    } else {
        server.critical_path_depth()
    };
    Run {
        server,
        result,
        requests,
        depth,
        elapsed,
        _dir: dir,
    }
}

pub fn run(scenario: Scenario, target: Target) -> Run {
    run_with(scenario, target, |_| {})
}

pub fn pod(namespace: &str, name: &str) -> Target {
    Target::Pod {
        namespace: Some(namespace.to_string()),
        name: name.to_string(),
    }
}

/// Asserts that every ID in `expected` was diagnosed.
pub fn assert_diagnosed(run: &Run, expected: &[&str]) {
    let ids = run.ids();
    for id in expected {
        assert!(ids.contains(id), "{id} expected, got {ids:?}");
    }
}

/// Asserts that no diagnosis in `unexpected` was made.
pub fn assert_not_diagnosed(run: &Run, unexpected: &[&str]) {
    let ids = run.ids();
    for id in unexpected {
        assert!(!ids.contains(id), "{id} not expected, got {ids:?}");
    }
}
