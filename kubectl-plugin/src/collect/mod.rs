//! Live collection: reads the facts about a pod, node, NodeClaim or the Pending pods from the
//! cluster with kube-rs, read-only, and hands them on as `Document`s of their API JSON (one
//! ingest path: the same text pasted into `analyze` gives the same report).
//!
//! Shape of every verb: the subject's own reads and the cluster-wide Karpenter reads start at
//! once; what depends on the subject (its node, owner chain, volumes, nominated NodeClaim)
//! follows in a second wave, and the owner's owner or a volume's PV in a third. Nothing else is
//! sequential, so the critical path is at most 3 round trips. Every failed read becomes a
//! `MissingFact` with the reason; only an unreachable cluster (exit 3) or a subject that does
//! not exist (exit 2) stops collection.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use karpenter_why_core::Document;
use serde_json::Value;

pub mod api;
pub mod bundle;
mod client;
mod fetch;
mod karpenter;
mod logs;
mod missing;
mod progress;
mod verbs;

pub use fetch::Failure;

use api::Call;
use fetch::Fetcher;

/// What the user asked for, kubectl-style.
#[derive(Debug, Clone)]
pub struct Settings {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// Per request, the whole response included; `None` waits forever (`--request-timeout=0`).
    pub request_timeout: Option<Duration>,
    /// Log window (`--since`).
    pub since: Duration,
    /// Where Karpenter runs; `None` finds it by label in every namespace.
    pub karpenter_namespace: Option<String>,
    /// Cap on the log bytes read per container.
    pub log_limit_bytes: u64,
    /// Show a spinner on stderr (the caller decides: only when stderr is a terminal).
    pub progress: bool,
}

/// The default log window, as the troubleshooting guide's `kubectl logs --since=1h`.
pub const DEFAULT_SINCE: Duration = Duration::from_secs(3600);
/// Default per-request timeout: long enough for a slow API server, short enough that one hung
/// endpoint does not hold the report.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// Default cap on the log bytes read per Karpenter container.
pub const DEFAULT_LOG_LIMIT_BYTES: u64 = 16 * 1024 * 1024;

impl Default for Settings {
    fn default() -> Self {
        Settings {
            kubeconfig: None,
            context: None,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            since: DEFAULT_SINCE,
            karpenter_namespace: None,
            log_limit_bytes: DEFAULT_LOG_LIMIT_BYTES,
            progress: false,
        }
    }
}

/// What to collect about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `namespace: None` takes the kubeconfig context's namespace.
    Pod {
        namespace: Option<String>,
        name: String,
    },
    Node {
        name: String,
    },
    NodeClaim {
        name: String,
    },
    /// Every Pending pod of one namespace (`None`: the context's), or of all (`all`).
    Pending {
        namespace: Option<String>,
        all: bool,
    },
}

/// A fact that could not be collected, why, and the command that collects it by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingFact {
    pub what: String,
    pub reason: String,
    pub command: String,
}

/// The collected documents (API JSON as `kubectl get -o json` prints it; logs as text), in a
/// stable order.
#[derive(Debug, Clone)]
pub struct Collection {
    /// `Pod shop/web-0`, `Node ip-10-0-1-2`, `Pending pods in shop`.
    pub subject: String,
    /// The object asked about; `None` for `pending` (the pods are found, not named).
    pub object: Option<Subject>,
    /// `pending`: the Pending pods found.
    pub pending: Vec<Subject>,
    pub documents: Vec<Document>,
    pub missing: Vec<MissingFact>,
    /// API requests made.
    pub requests: usize,
}

/// The object a verb was asked about, with the namespace resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Subject {
    pub kind: &'static str,
    pub namespace: Option<String>,
    pub name: String,
}

/// Why collection stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CollectError {
    /// The cluster cannot be reached or authenticated to at all (exit 3).
    Unreachable(String),
    /// The subject does not exist: the API's own message (exit 2).
    NotFound(String),
}

impl CollectError {
    pub fn exit_code(&self) -> u8 {
        match self {
            CollectError::Unreachable(_) => 3,
            CollectError::NotFound(_) => 2,
        }
    }
}

impl std::fmt::Display for CollectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CollectError::Unreachable(line) | CollectError::NotFound(line) => f.write_str(line),
        }
    }
}

/// Collects the facts about `target`. Builds its own single-threaded runtime: collection is
/// I/O-bound and the fan-out is concurrent, not parallel.
pub fn collect(settings: &Settings, target: &Target) -> Result<Collection, CollectError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| CollectError::Unreachable(format!("cannot start the I/O runtime: {e}")))?;
    runtime.block_on(collect_async(settings, target))
}

async fn collect_async(settings: &Settings, target: &Target) -> Result<Collection, CollectError> {
    let connection = client::connect(settings).await?;
    let fetcher = Fetcher::new(connection.client, settings.request_timeout);
    let cx = Cx {
        fetcher: fetcher.clone(),
        settings: settings.clone(),
        server: connection.server.clone(),
        documents: Mutex::new(Vec::new()),
        missing: Mutex::new(Vec::new()),
        discovered_groups: Default::default(),
    };
    let object = |kind: &'static str, namespace: Option<&str>, name: &str| {
        Some(Subject {
            kind,
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        })
    };
    let work = async {
        match target {
            Target::Pod { namespace, name } => {
                let ns = namespace
                    .clone()
                    .unwrap_or_else(|| connection.default_namespace.clone());
                verbs::pod(&cx, &ns, name).await?;
                Ok((
                    format!("Pod {ns}/{name}"),
                    object("Pod", Some(&ns), name),
                    Vec::new(),
                ))
            }
            Target::Node { name } => {
                verbs::node(&cx, name).await?;
                Ok((
                    format!("Node {name}"),
                    object("Node", None, name),
                    Vec::new(),
                ))
            }
            Target::NodeClaim { name } => {
                verbs::nodeclaim(&cx, name).await?;
                Ok((
                    format!("NodeClaim {name}"),
                    object("NodeClaim", None, name),
                    Vec::new(),
                ))
            }
            Target::Pending { namespace, all } => {
                let ns = if *all {
                    None
                } else {
                    Some(
                        namespace
                            .clone()
                            .unwrap_or_else(|| connection.default_namespace.clone()),
                    )
                };
                let pods = verbs::pending(&cx, ns.as_deref()).await?;
                let subject = match &ns {
                    Some(ns) => format!("Pending pods in {ns}"),
                    None => "Pending pods in all namespaces".to_string(),
                };
                Ok::<_, CollectError>((subject, None, pods))
            }
        }
    };
    let (subject, object, pending) =
        progress::while_running(settings.progress, &fetcher, work).await?;
    let (requests, _) = fetcher.counts();
    Ok(Collection {
        subject,
        object,
        pending,
        documents: cx.finish_documents(),
        missing: cx.missing.into_inner().unwrap_or_default(),
        requests,
    })
}

/// What the verbs share while collecting.
pub(crate) struct Cx {
    fetcher: Fetcher,
    settings: Settings,
    /// The API server URL, for error lines.
    server: String,
    documents: Mutex<Vec<(u8, Document)>>,
    missing: Mutex<Vec<MissingFact>>,
    /// Karpenter API groups already looked up after a 404 (one discovery GET per group).
    discovered_groups: Mutex<
        std::collections::BTreeMap<&'static str, std::sync::Arc<tokio::sync::OnceCell<String>>>,
    >,
}

impl Cx {
    /// Reads one object or a whole list; keeps each page as a document; returns the object
    /// (or the items) or the failure. A list that fails after some pages keeps those pages and
    /// notes the rest as missing.
    pub(crate) async fn read(&self, call: &Call) -> Result<Vec<Value>, Failure> {
        let (pages, items, failure) = self.fetcher.json(call).await;
        let read_some = !pages.is_empty();
        for (i, page) in pages.into_iter().enumerate() {
            let label = if i == 0 {
                call.label()
            } else {
                format!("{} (page {})", call.label(), i + 1)
            };
            self.add_document(rank(call), Document::new(label, as_kubectl_json(page)));
        }
        match failure {
            None => Ok(items),
            Some(failure) if read_some => {
                self.note_missing(missing::for_failure(call, &failure, Some(items.len())));
                Ok(items)
            }
            Some(failure) => Err(failure),
        }
    }

    /// `read`, noting a failure as missing (with the Karpenter API version check for 404s of
    /// Karpenter's CRDs).
    pub(crate) async fn read_or_note(&self, call: &Call) -> Vec<Value> {
        match self.read(call).await {
            Ok(items) => items,
            Err(failure) => {
                self.note_failure(call, &failure).await;
                Vec::new()
            }
        }
    }

    /// `read_or_note` of a call built on the spot.
    pub(crate) async fn read_owned(&self, call: Call) -> Vec<Value> {
        self.read_or_note(&call).await
    }

    pub(crate) async fn note_failure(&self, call: &Call, failure: &Failure) {
        let mut fact = missing::for_failure(call, failure, None);
        if failure.is_not_found() && call.resource.is_karpenter_crd() {
            fact.reason = self.karpenter_group_status(call.resource.group).await;
        }
        self.note_missing(fact);
    }

    /// Why a Karpenter CRD answered 404: the group is not served at all, or only in other
    /// versions. One discovery GET per group, shared by every caller.
    pub(crate) async fn karpenter_group_status(&self, group: &'static str) -> String {
        let cell = {
            let mut groups = self.discovered_groups.lock().expect("not poisoned");
            groups.entry(group).or_default().clone()
        };
        cell.get_or_init(|| async {
            missing::describe_group(group, self.fetcher.text(&format!("/apis/{group}")).await)
        })
        .await
        .clone()
    }

    pub(crate) fn note_missing(&self, fact: MissingFact) {
        let mut missing = self.missing.lock().expect("not poisoned");
        if !missing.contains(&fact) {
            missing.push(fact);
        }
    }

    pub(crate) fn add_document(&self, rank: u8, document: Document) {
        self.documents
            .lock()
            .expect("not poisoned")
            .push((rank, document));
    }

    /// Documents in a stable order whatever order the responses came in: by kind of fact,
    /// then label.
    fn finish_documents(&self) -> Vec<Document> {
        let mut documents = std::mem::take(&mut *self.documents.lock().expect("not poisoned"));
        documents.sort_by(|a, b| (a.0, &a.1.label).cmp(&(b.0, &b.1.label)));
        documents.into_iter().map(|(_, d)| d).collect()
    }
}

/// The API JSON as `kubectl get -o json` prints it: indented (so evidence lines point at one
/// field each), and the items of a list carrying their `kind` and `apiVersion`, which the API
/// server leaves out on the wire. Keys come out sorted, which for Kubernetes objects is the
/// familiar `apiVersion, kind, metadata, spec, status`.
fn as_kubectl_json(mut page: Value) -> String {
    let list_kind = page
        .get("kind")
        .and_then(|k| k.as_str())
        .and_then(|k| k.strip_suffix("List"))
        .map(str::to_string);
    let api_version = page.get("apiVersion").cloned();
    if let (Some(kind), Some(items)) = (
        list_kind,
        page.get_mut("items").and_then(|i| i.as_array_mut()),
    ) {
        for item in items.iter_mut().filter_map(|i| i.as_object_mut()) {
            item.entry("kind")
                .or_insert_with(|| Value::String(kind.clone()));
            if let Some(api_version) = &api_version {
                item.entry("apiVersion")
                    .or_insert_with(|| api_version.clone());
            }
        }
    }
    serde_json::to_string_pretty(&page).unwrap_or_default()
}

/// Document order: the objects a reader looks at first come first.
fn rank(call: &Call) -> u8 {
    match call.resource.kind {
        "Pod" => 0,
        "Node" => 1,
        "NodeClaim" => 2,
        "Event" => 3,
        "NodePool" => 4,
        "EC2NodeClass" => 5,
        "PodDisruptionBudget" => 6,
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job" => 7,
        _ => 8,
    }
}

/// Log documents come last.
pub(crate) const LOG_RANK: u8 = 9;
