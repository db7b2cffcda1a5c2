//! An in-process fake Kubernetes API server speaking the real wire format, for testing live
//! collection without a cluster: discovery (`/version`, `/api`, `/apis`, group versions), get
//! and list with label and field selectors, `limit`/`continue` paging, `Table` output for
//! kubectl, pod logs (`container`, `previous`, `sinceSeconds`, `tailLines`, `limitBytes`), `Status` error
//! bodies, and per-endpoint injected latency and faults. It records every request so tests can
//! assert the methods, the counts and the critical-path depth.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod api;
mod http;
pub mod objects;
pub mod scenarios;
pub mod selector;

/// One line of a container's log, `age_seconds` before "now" (for `sinceSeconds`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    pub age_seconds: u64,
    pub text: String,
}

/// Which requests a fault applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher {
    /// The path exactly.
    Path(String),
    /// Paths starting with this.
    Prefix(String),
    /// Paths ending with this (`/log`).
    Suffix(String),
}

/// What happens to a matching request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FaultAction {
    /// An error `Status` with this code.
    Status {
        code: u16,
        reason: String,
        message: String,
    },
    /// Extra latency before the answer (longer than the client's timeout: a hung endpoint).
    Delay(Duration),
    /// Headers and half the body, then the connection closes.
    Truncate,
    /// The connection closes without an answer.
    Reset,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    pub matcher: Matcher,
    pub action: FaultAction,
}

impl Fault {
    pub fn new(matcher: Matcher, action: FaultAction) -> Fault {
        Fault { matcher, action }
    }

    /// The API server's 403 for `verb` on `resource`.
    pub fn forbidden(matcher: Matcher, verb: &str, resource: &str) -> Fault {
        Fault::new(
            matcher,
            FaultAction::Status {
                code: 403,
                reason: "Forbidden".into(),
                message: format!(
                    "{resource} is forbidden: User \"system:serviceaccount:dev:reader\" cannot {verb} resource \"{resource}\""
                ),
            },
        )
    }

    fn matches(&self, _method: &str, path: &str, _query: &str) -> bool {
        match &self.matcher {
            Matcher::Path(p) => path == p,
            Matcher::Prefix(p) => path.starts_with(p.as_str()),
            Matcher::Suffix(s) => path.ends_with(s.as_str()),
        }
    }
}

/// What the fake cluster holds and how it misbehaves.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// API objects, each with `apiVersion`, `kind` and `metadata`.
    pub objects: Vec<Value>,
    /// Logs by (namespace, pod, container): the container's current instance.
    pub logs: BTreeMap<(String, String, String), Vec<LogLine>>,
    /// The log of the container's previous (last terminated) instance, served for
    /// `previous=true` when the pod's status has a `lastState.terminated` with a `containerID`,
    /// and for the plain read while the container waits to restart (CrashLoopBackOff), as the
    /// kubelet does.
    pub previous_logs: BTreeMap<(String, String, String), Vec<LogLine>>,
    pub faults: Vec<Fault>,
    /// Added to every request.
    pub latency: Duration,
    /// Round mode: requests are held and answered together once none has arrived for this
    /// long, so each round is one wave of concurrent requests whatever the machine's load;
    /// the number of rounds is the number of sequential round trips.
    pub round_quiet: Option<Duration>,
    /// Served versions of `karpenter.sh` (empty: not installed).
    pub karpenter_sh_versions: Vec<&'static str>,
    /// Served versions of `karpenter.k8s.aws`.
    pub karpenter_aws_versions: Vec<&'static str>,
    pub server_version: String,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            objects: Vec::new(),
            logs: BTreeMap::new(),
            previous_logs: BTreeMap::new(),
            faults: Vec::new(),
            latency: Duration::ZERO,
            round_quiet: None,
            karpenter_sh_versions: vec!["v1"],
            karpenter_aws_versions: vec!["v1"],
            server_version: "v1.31.2-eks-7f9249a".into(),
        }
    }
}

impl Scenario {
    pub fn with(mut self, object: Value) -> Scenario {
        self.objects.push(object);
        self
    }

    pub fn with_log(
        mut self,
        namespace: &str,
        pod: &str,
        container: &str,
        lines: Vec<LogLine>,
    ) -> Scenario {
        self.logs
            .entry((namespace.into(), pod.into(), container.into()))
            .or_default()
            .extend(lines);
        self
    }

    /// The log of the previous instance of a container (see `previous_logs`).
    pub fn with_previous_log(
        mut self,
        namespace: &str,
        pod: &str,
        container: &str,
        lines: Vec<LogLine>,
    ) -> Scenario {
        self.previous_logs
            .entry((namespace.into(), pod.into(), container.into()))
            .or_default()
            .extend(lines);
        self
    }

    pub fn with_fault(mut self, fault: Fault) -> Scenario {
        self.faults.push(fault);
        self
    }

    pub fn with_latency(mut self, latency: Duration) -> Scenario {
        self.latency = latency;
        self
    }

    /// Answers in rounds (see `round_quiet`).
    pub fn in_rounds(mut self, quiet: Duration) -> Scenario {
        self.round_quiet = Some(quiet);
        self
    }
}

/// One request as the fake saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    pub method: String,
    pub path: String,
    /// Decoded query parameters.
    pub query: Vec<(String, String)>,
    pub raw_query: String,
    pub accept: String,
    /// 0 when the connection was reset without an answer.
    pub status: u16,
    /// Since the server started.
    pub started: Duration,
    /// When the answer was ready to be written.
    pub finished: Duration,
    /// In round mode, the 0-based round that answered the request.
    pub round: Option<usize>,
}

impl RequestRecord {
    pub fn param(&self, key: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

pub(crate) struct Shared {
    scenario: Scenario,
    epoch: Instant,
    shutdown: AtomicBool,
    log: Mutex<Vec<RequestRecord>>,
    rounds: Rounds,
}

/// Round mode's state: the open round collects requests until it has been quiet long enough.
#[derive(Default)]
struct Rounds {
    state: Mutex<RoundState>,
    changed: Condvar,
}

#[derive(Default)]
struct RoundState {
    open: usize,
    last_arrival: Option<Instant>,
}

impl Rounds {
    /// Joins the open round and waits until it is answered; returns its number.
    fn join(&self, quiet: Duration) -> usize {
        let mut state = self.state.lock().expect("not poisoned");
        let round = state.open;
        state.last_arrival = Some(Instant::now());
        loop {
            if state.open > round {
                return round;
            }
            let since = state.last_arrival.map_or(quiet, |t| t.elapsed());
            if since >= quiet {
                state.open = round + 1;
                self.changed.notify_all();
                return round;
            }
            state = self
                .changed
                .wait_timeout(state, quiet - since)
                .expect("not poisoned")
                .0;
        }
    }
}

impl Shared {
    fn record(&self, record: RequestRecord) {
        self.log.lock().expect("not poisoned").push(record);
    }
}

/// A running fake API server; stops when dropped.
pub struct FakeApi {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_thread: Option<JoinHandle<()>>,
}

impl FakeApi {
    pub fn start(mut scenario: Scenario) -> FakeApi {
        add_namespaces(&mut scenario);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("bound address");
        let shared = Arc::new(Shared {
            scenario,
            epoch: Instant::now(),
            shutdown: AtomicBool::new(false),
            log: Mutex::new(Vec::new()),
            rounds: Rounds::default(),
        });
        let serving = Arc::clone(&shared);
        let accept_thread = std::thread::spawn(move || http::serve(listener, serving));
        FakeApi {
            addr,
            shared,
            accept_thread: Some(accept_thread),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in the order they finished.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.shared.log.lock().expect("not poisoned").clone()
    }

    /// Forgets the requests so far (e.g. after a warm-up run).
    pub fn clear_requests(&self) {
        self.shared.log.lock().expect("not poisoned").clear();
    }

    /// The longest chain of requests each started after the previous one finished: the number
    /// of sequential round trips the client needed. Timing-based: use it with latency, on a
    /// quiet machine; `rounds` is exact.
    pub fn critical_path_depth(&self) -> usize {
        critical_path_depth(&self.requests())
    }

    /// In round mode, the number of rounds the requests needed.
    pub fn rounds(&self) -> usize {
        self.requests()
            .iter()
            .filter_map(|r| r.round)
            .map(|r| r + 1)
            .max()
            .unwrap_or(0)
    }

    /// Writes a kubeconfig for this server (context `fake`, namespace `namespace`, a bearer
    /// token) to `dir/kubeconfig` and returns its path.
    pub fn write_kubeconfig(&self, dir: &Path, namespace: &str) -> PathBuf {
        let path = dir.join("kubeconfig");
        let text = format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {}\n\
             contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: reader\n    namespace: {namespace}\n\
             current-context: fake\nusers:\n- name: reader\n  user:\n    token: fake-token\n",
            self.url()
        );
        std::fs::write(&path, text).expect("write the kubeconfig");
        path
    }
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.shared
            .shutdown
            .store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the blocking accept so its thread sees the flag.
        let _ = TcpStream::connect(self.addr);
        if let Some(thread) = self.accept_thread.take() {
            let _ = thread.join();
        }
    }
}

/// Every namespace an object lives in exists as a Namespace object (kubectl looks one up after
/// a 404), as do `default` and `kube-system`.
fn add_namespaces(scenario: &mut Scenario) {
    let mut names: std::collections::BTreeSet<String> =
        ["default", "kube-system"].map(String::from).into();
    for object in &scenario.objects {
        if let Some(ns) = object
            .pointer("/metadata/namespace")
            .and_then(|v| v.as_str())
        {
            names.insert(ns.to_string());
        }
    }
    for object in &scenario.objects {
        if object.get("kind").and_then(|k| k.as_str()) == Some("Namespace") {
            if let Some(name) = object.pointer("/metadata/name").and_then(|v| v.as_str()) {
                names.remove(name);
            }
        }
    }
    for name in names {
        scenario.objects.push(serde_json::json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": objects::metadata("Namespace", None, &name),
            "status": {"phase": "Active"}
        }));
    }
}

/// See `FakeApi::critical_path_depth`.
pub fn critical_path_depth(requests: &[RequestRecord]) -> usize {
    let mut sorted: Vec<&RequestRecord> = requests.iter().collect();
    sorted.sort_by_key(|r| r.started);
    let mut depth = vec![0usize; sorted.len()];
    for i in 0..sorted.len() {
        let before = (0..i)
            .filter(|&j| sorted[j].finished <= sorted[i].started)
            .map(|j| depth[j])
            .max()
            .unwrap_or(0);
        depth[i] = before + 1;
    }
    depth.into_iter().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(started: u64, finished: u64) -> RequestRecord {
        RequestRecord {
            method: "GET".into(),
            path: "/".into(),
            query: Vec::new(),
            raw_query: String::new(),
            accept: String::new(),
            status: 200,
            started: Duration::from_millis(started),
            finished: Duration::from_millis(finished),
            round: None,
        }
    }

    #[test]
    fn depth_counts_sequential_round_trips_only() {
        assert_eq!(critical_path_depth(&[]), 0);
        // Three concurrent requests, then two that waited for the first wave, then one more.
        let wave = [
            record(0, 100),
            record(1, 101),
            record(2, 102),
            record(103, 200),
            record(104, 205),
            record(206, 300),
        ];
        assert_eq!(critical_path_depth(&wave), 3);
    }

    #[test]
    fn rounds_answer_concurrent_requests_together() {
        let rounds = std::sync::Arc::new(Rounds::default());
        let quiet = Duration::from_millis(60);
        let first: Vec<_> = (0..3)
            .map(|_| {
                let rounds = std::sync::Arc::clone(&rounds);
                std::thread::spawn(move || rounds.join(quiet))
            })
            .collect();
        let first: Vec<usize> = first.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(first, [0, 0, 0]);
        assert_eq!(rounds.join(quiet), 1);
    }
}
