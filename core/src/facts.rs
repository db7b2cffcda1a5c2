//! The typed, normalised model that rules reason over. Ingest fills it; rules only read it.
//!
//! Two layers:
//! - `messages`: every message-bearing line from any source (event message, log message and
//!   error, condition reason/message, kubelet journal text, unrecognised text), decoded (JSON
//!   escapes resolved) so rules can match signal strings without caring where they came from.
//! - typed objects (pods, NodePools, ...) for the rules that reason across facts, and
//!   `settings`: every configuration knob (container env and args, ConfigMap data, helm values
//!   as dotted paths) with the line it was written on.
//!
//! Only the fields rules need are modelled; unknown fields are ignored, never errors.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::OnceLock;

use crate::document::{Evidence, InputError};

/// What an object is, as far as the input says.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectRef {
    /// `Pod`, `Node`, `NodeClaim`, `NodePool`, `EC2NodeClass`, `Deployment`, ...
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

impl ObjectRef {
    pub fn new(kind: &str, namespace: Option<&str>, name: &str) -> Self {
        ObjectRef {
            kind: kind.to_string(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        }
    }

    /// `ns/name` for namespaced objects, `name` otherwise.
    pub fn qualified_name(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{ns}/{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// Where a message came from; rules sometimes care (a condition reason is stronger than a
/// free-text mention).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum MessageOrigin {
    /// A Kubernetes Event (describe Events table, `kubectl get events`, Event objects).
    Event,
    /// A Karpenter controller log record.
    KarpenterLog,
    /// A status condition of an object (`reason: message`).
    Condition,
    /// A kubelet (or other node agent) journal line.
    Kubelet,
    /// A field of an object (e.g. a container state reason/message).
    ObjectField,
    /// Text that matched no known format; still scanned for signals.
    #[default]
    Unrecognised,
}

/// One message-bearing line, decoded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Message {
    pub origin: MessageOrigin,
    /// Decoded text rules match on. For log records: `message` then `error` and
    /// `errorCauses`, joined with `: `. For events: the event message. For conditions:
    /// `Type=Status Reason: message` (` Reason` and `: message` only when not empty). For
    /// object fields (a container state, a pod's status): `Reason: message`.
    pub text: String,
    /// The raw input line(s), as the user will recognise them.
    pub evidence: Evidence,
    /// The object the message is about, when known (event's involved object, log's `Pod`...).
    pub object: Option<ObjectRef>,
    /// The NodePool the message is about, when known.
    pub nodepool: Option<String>,
    /// The event reason (`FailedScheduling`, `DisruptionBlocked`, `SpotInterrupted`...) or the
    /// condition reason (`NodeClassNotFound`...), when the message has one.
    pub reason: Option<String>,
    /// Who said it: the event's reporting component (`karpenter`, `default-scheduler`,
    /// `kubelet`), or the log's `logger`/`controller`.
    pub component: Option<String>,
    /// Timestamp as written in the input, when any.
    pub time: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Event {
    /// `Normal` / `Warning`.
    pub event_type: String,
    pub reason: String,
    /// Reporting component (`karpenter`, `default-scheduler`, `kubelet`, ...).
    pub source: String,
    pub object: Option<ObjectRef>,
    pub message: String,
    /// `(x3 over 10m)` or the COUNT column; 1 when not stated.
    pub count: usize,
    /// Age / last seen as written.
    pub age: Option<String>,
    pub evidence: Evidence,
    /// Listed in a `kubectl describe` Events section, which shows every type: a
    /// `kubectl get events` list may have been filtered (`--field-selector type=Warning`).
    pub from_describe: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogRecord {
    /// Upper-case level: `DEBUG`, `INFO`, `WARN`, `ERROR`, ...
    pub level: String,
    pub time: Option<String>,
    pub logger: Option<String>,
    pub controller: Option<String>,
    pub message: String,
    pub error: Option<String>,
    pub error_causes: Vec<String>,
    /// Every other structured field, as JSON (`NodePool`, `Pod`, `NodeClaim`, `commit`...).
    pub fields: BTreeMap<String, serde_json::Value>,
    pub evidence: Evidence,
}

impl LogRecord {
    /// An optimistic-concurrency conflict (`Operation cannot be fulfilled on nodeclaims...: the
    /// object has been modified; please apply your changes to the latest version and try
    /// again`): two controllers updated the same object and the loser requeues. Logged at ERROR
    /// as a `Reconciler error`, harmless unless it repeats for minutes on one object.
    pub fn is_update_conflict(&self) -> bool {
        const CONFLICT: &str = "the object has been modified";
        self.message.contains(CONFLICT)
            || self.error.as_deref().is_some_and(|e| e.contains(CONFLICT))
    }

    /// A structured field as a name: `"x"`, `{"name":"x"}` or `{"namespace":"n","name":"x"}`
    /// (qualified as `n/x`), or Go's `%v` of that object, `"map[name:x namespace:n]"` (some
    /// v1.x builds log `"EC2NodeClass":"map[name:x]"`).
    pub fn field_name(&self, key: &str) -> Option<String> {
        match self.fields.get(key)? {
            serde_json::Value::String(s) => Some(go_map_name(s).unwrap_or_else(|| s.clone())),
            serde_json::Value::Object(map) => {
                let name = map.get("name")?.as_str()?;
                match map.get("namespace").and_then(|v| v.as_str()) {
                    Some(ns) if !ns.is_empty() => Some(format!("{ns}/{name}")),
                    _ => Some(name.to_string()),
                }
            }
            _ => None,
        }
    }

    /// Whether structured field `key` names `name` (as [`LogRecord::field_name`] would spell
    /// it), without building the name: rules compare it on every record of big logs.
    pub fn names(&self, key: &str, name: &str) -> bool {
        match self.fields.get(key) {
            Some(serde_json::Value::String(s)) if s.starts_with("map[") => {
                go_map_name(s).is_some_and(|n| n == name)
            }
            Some(serde_json::Value::String(s)) => s == name,
            Some(serde_json::Value::Object(map)) => {
                let Some(field_name) = map.get("name").and_then(|v| v.as_str()) else {
                    return false;
                };
                match map.get("namespace").and_then(|v| v.as_str()) {
                    Some(ns) if !ns.is_empty() => {
                        name.strip_prefix(ns)
                            .and_then(|rest| rest.strip_prefix('/'))
                            == Some(field_name)
                    }
                    _ => field_name == name,
                }
            }
            _ => false,
        }
    }
}

/// `map[name:x]` / `map[name:x namespace:n]` (Go's `%v` of a name object) -> `x` / `n/x`.
fn go_map_name(s: &str) -> Option<String> {
    let inner = s.strip_prefix("map[")?.strip_suffix(']')?;
    let mut name = None;
    let mut namespace = None;
    for pair in inner.split_whitespace() {
        match pair.split_once(':') {
            Some(("name", v)) if !v.is_empty() => name = Some(v),
            Some(("namespace", v)) if !v.is_empty() => namespace = Some(v),
            _ => {}
        }
    }
    let name = name?;
    Some(match namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    })
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Condition {
    pub condition_type: String,
    /// `True` / `False` / `Unknown`.
    pub status: String,
    pub reason: Option<String>,
    pub message: Option<String>,
    pub evidence: Option<Evidence>,
}

/// Collections [`Absorb::absorb`] fills when empty.
trait IsEmpty {
    fn is_empty(&self) -> bool;
}

impl<T> IsEmpty for Vec<T> {
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

impl<K, V> IsEmpty for BTreeMap<K, V> {
    fn is_empty(&self) -> bool {
        BTreeMap::is_empty(self)
    }
}

impl IsEmpty for LabelSelector {
    fn is_empty(&self) -> bool {
        self.match_labels.is_empty() && self.match_expressions.is_empty()
    }
}

/// An object the input may describe more than once: its `kubectl describe` and its `-o yaml`,
/// one paste twice, a list and a single get. Ingest keeps one fact per object
/// ([`Absorb::absorb`] takes the later descriptions into the first), so rules that count or
/// list objects count and list each once.
pub trait Absorb: Sized {
    fn meta(&self) -> &Meta;

    /// The kind, when one fact type holds several (a Workload, a NodePool or v1alpha5
    /// Provisioner); `""` otherwise. Objects of different kinds are different objects.
    fn kind(&self) -> &str {
        ""
    }

    /// Takes in a second description of the same object: what this one leaves unset or empty
    /// comes from `other`; labels, annotations and conditions are unioned. This one's values
    /// win where both have one. Each value keeps the evidence it was read with, so every
    /// evidence line still points at the line the value was written on.
    fn absorb(&mut self, other: Self);
}

/// `mine` when set, else `theirs`.
fn fill<T>(mine: &mut Option<T>, theirs: Option<T>) {
    if mine.is_none() {
        *mine = theirs;
    }
}

/// `mine` when not empty, else `theirs`: a list is shown whole or not at all (requirements,
/// taints, containers), so the two descriptions' lists are not mixed.
fn fill_empty<T: IsEmpty>(mine: &mut T, theirs: T) {
    if mine.is_empty() {
        *mine = theirs;
    }
}

/// Every key of both, this one's value where both have the key.
fn union_map<K: Ord, V>(mine: &mut BTreeMap<K, V>, theirs: BTreeMap<K, V>) {
    for (k, v) in theirs {
        mine.entry(k).or_insert(v);
    }
}

/// Every condition type of both, this one's condition where both have the type (a describe
/// cut after the first conditions, a YAML trimmed to one).
fn union_conditions(mine: &mut Vec<Condition>, theirs: Vec<Condition>) {
    for c in theirs {
        if !mine.iter().any(|m| m.condition_type == c.condition_type) {
            mine.push(c);
        }
    }
}

/// Common object metadata.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta {
    pub name: String,
    pub namespace: Option<String>,
    /// `apiVersion` as written (`karpenter.sh/v1`, `karpenter.sh/v1beta1`, `policy/v1`...): tells
    /// the Karpenter API generation apart.
    pub api_version: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    /// Owner references (`ReplicaSet/web-7d9`, `StatefulSet/db`), first is the controller.
    pub owners: Vec<ObjectRef>,
    /// The line naming the object (`name: web-0`, `Name:  web-0`).
    pub evidence: Option<Evidence>,
    /// `metadata.creationTimestamp` as written (`Creation Timestamp:` of a describe).
    pub creation_timestamp: Option<String>,
    /// True when the object is known only from a `kubectl get` table row, or from one field a
    /// jsonpath printed (`{.spec.disruption}` of a NodePool): its spec (selectors,
    /// requirements, taints...) is unknown, not empty, so rules must not read its empty
    /// collections as "none".
    pub from_table: bool,
    /// True when a table row's namespace is only kubectl's usual `default`: the table had no
    /// NAMESPACE column and no `-n` is known, so the row lists the context's namespace, which
    /// the paste does not show. Such a row joins a fuller description of the same name in
    /// another namespace rather than standing for a second object.
    pub namespace_assumed: bool,
    /// The AGE column of a `kubectl get` table row, as printed (`14m`, `2d3h`).
    pub table_age: Option<String>,
    /// True when a `kubectl describe` was cut before its `Annotations:` line (`| head`, a
    /// grep): the object's annotations are unknown, not none.
    pub annotations_cut: bool,
}

/// Labels that differ per pod or per revision: never part of a selector meant to keep
/// matching the workload's pods.
pub const VOLATILE_LABELS: &[&str] = &[
    "pod-template-hash",
    "controller-revision-hash",
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
];

impl Meta {
    /// [`Absorb::absorb`] for the metadata. A description that shows all of something (a full
    /// object rather than a table row, annotations not cut) makes the merged one show it.
    fn absorb(&mut self, other: Meta) {
        union_map(&mut self.labels, other.labels);
        union_map(&mut self.annotations, other.annotations);
        fill_empty(&mut self.owners, other.owners);
        fill(&mut self.namespace, other.namespace);
        fill(&mut self.api_version, other.api_version);
        fill(&mut self.evidence, other.evidence);
        fill(&mut self.creation_timestamp, other.creation_timestamp);
        fill(&mut self.table_age, other.table_age);
        self.from_table &= other.from_table;
        self.namespace_assumed &= other.namespace_assumed;
        self.annotations_cut &= other.annotations_cut;
    }

    /// The labels without the per-pod and per-revision ones ([`VOLATILE_LABELS`]).
    pub fn stable_labels(&self) -> BTreeMap<String, String> {
        let mut labels = self.labels.clone();
        labels.retain(|k, _| !VOLATILE_LABELS.contains(&k.as_str()));
        labels
    }

    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key).map(String::as_str)
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.get(key).map(String::as_str)
    }

    /// Whether the input shows all of the object's annotations, so a missing one is absent:
    /// not a table row, not a describe cut before its `Annotations:`.
    pub fn annotations_known(&self) -> bool {
        !self.from_table && !self.annotations_cut
    }
}

/// A node selector requirement (NodePool/NodeClaim requirements, pod node affinity).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirement {
    pub key: String,
    /// `In`, `NotIn`, `Exists`, `DoesNotExist`, `Gt`, `Lt`.
    pub operator: String,
    pub values: Vec<String>,
    pub min_values: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Taint {
    pub key: String,
    pub value: Option<String>,
    pub effect: String,
}

impl Taint {
    /// `key=value:Effect` (or `key:Effect`), the way Karpenter and kubectl print taints.
    pub fn display(&self) -> String {
        match &self.value {
            Some(v) if !v.is_empty() => format!("{}={}:{}", self.key, v, self.effect),
            _ => format!("{}:{}", self.key, self.effect),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Toleration {
    pub key: Option<String>,
    /// `Equal` / `Exists`.
    pub operator: Option<String>,
    pub value: Option<String>,
    pub effect: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopologySpread {
    pub topology_key: String,
    pub max_skew: Option<i64>,
    /// `DoNotSchedule` / `ScheduleAnyway`.
    pub when_unsatisfiable: Option<String>,
    pub label_selector: Option<LabelSelector>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Container {
    pub name: String,
    pub image: Option<String>,
    /// `waiting` / `running` / `terminated`.
    pub state: Option<String>,
    /// e.g. `ImagePullBackOff`, `ErrImagePull`, `ContainerCreating`, `CrashLoopBackOff`.
    pub reason: Option<String>,
    pub message: Option<String>,
    pub ready: Option<bool>,
    pub restart_count: Option<i64>,
    /// `lastState.terminated.reason` (`OOMKilled`, `Error`...): why the previous run ended.
    pub last_termination_reason: Option<String>,
    pub requests: BTreeMap<String, String>,
    /// `restartPolicy` of an init container: `Always` makes it a native sidecar (Kubernetes
    /// 1.29+), which keeps running beside the app containers.
    pub restart_policy: Option<String>,
    /// Literal env values; `valueFrom` entries map to an empty string. Each also becomes a
    /// `Setting` with its evidence.
    pub env: BTreeMap<String, String>,
    pub args: Vec<String>,
}

impl Container {
    /// An init container that keeps running (`restartPolicy: Always`): its requests add to
    /// the app containers' instead of running before them.
    pub fn is_sidecar(&self) -> bool {
        self.restart_policy.as_deref() == Some("Always")
    }

    /// The image tag (`1.0.8` of `public.ecr.aws/karpenter/controller:1.0.8@sha256:...`).
    pub fn image_tag(&self) -> Option<&str> {
        let image = self.image.as_deref()?;
        let without_digest = image.split('@').next()?;
        let last = without_digest.rsplit('/').next()?;
        last.split_once(':').map(|(_, tag)| tag)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pod {
    pub meta: Meta,
    pub phase: Option<String>,
    pub node_name: Option<String>,
    pub nominated_node: Option<String>,
    pub node_selector: BTreeMap<String, String>,
    /// Required node affinity, one inner Vec per nodeSelectorTerm (terms are ORed).
    pub node_affinity: Vec<Vec<Requirement>>,
    /// A required nodeSelectorTerm uses `matchFields` (Karpenter ignores such pods).
    pub node_affinity_match_fields: bool,
    pub tolerations: Vec<Toleration>,
    pub topology_spread: Vec<TopologySpread>,
    /// Any pod anti-affinity term, required or preferred.
    pub has_pod_anti_affinity: bool,
    /// Any pod affinity term, required or preferred.
    pub has_pod_affinity: bool,
    pub containers: Vec<Container>,
    pub init_containers: Vec<Container>,
    /// PersistentVolumeClaim names the pod mounts.
    pub pvc_names: Vec<String>,
    pub host_ports: Vec<u32>,
    pub dns_policy: Option<String>,
    pub conditions: Vec<Condition>,
    pub service_account: Option<String>,
    /// `Guaranteed` / `Burstable` / `BestEffort`, when the input states it.
    pub qos_class: Option<String>,
    pub scheduler_name: Option<String>,
    /// The RESTARTS cell of a `kubectl get pods` row (`9 (2m ago)` -> 9): the restarts of all
    /// its containers, where the row does not say which container restarted.
    pub restarts: Option<i64>,
    /// `spec.terminationGracePeriodSeconds`: how long the kubelet waits for the pod to stop.
    pub termination_grace_period_seconds: Option<i64>,
}

impl Absorb for Pod {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn absorb(&mut self, other: Pod) {
        self.meta.absorb(other.meta);
        fill(&mut self.phase, other.phase);
        fill(&mut self.node_name, other.node_name);
        fill(&mut self.nominated_node, other.nominated_node);
        fill_empty(&mut self.node_selector, other.node_selector);
        fill_empty(&mut self.node_affinity, other.node_affinity);
        self.node_affinity_match_fields |= other.node_affinity_match_fields;
        fill_empty(&mut self.tolerations, other.tolerations);
        fill_empty(&mut self.topology_spread, other.topology_spread);
        self.has_pod_anti_affinity |= other.has_pod_anti_affinity;
        self.has_pod_affinity |= other.has_pod_affinity;
        fill_empty(&mut self.containers, other.containers);
        fill_empty(&mut self.init_containers, other.init_containers);
        fill_empty(&mut self.pvc_names, other.pvc_names);
        fill_empty(&mut self.host_ports, other.host_ports);
        fill(&mut self.dns_policy, other.dns_policy);
        union_conditions(&mut self.conditions, other.conditions);
        fill(&mut self.service_account, other.service_account);
        fill(&mut self.qos_class, other.qos_class);
        fill(&mut self.scheduler_name, other.scheduler_name);
        fill(&mut self.restarts, other.restarts);
        fill(
            &mut self.termination_grace_period_seconds,
            other.termination_grace_period_seconds,
        );
    }
}

impl Pod {
    /// Whether its nodeSelector or node affinity names label `key`.
    pub fn selects_on(&self, key: &str) -> bool {
        self.node_selector.contains_key(key)
            || self.node_affinity.iter().flatten().any(|r| r.key == key)
    }

    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::new("Pod", self.meta.namespace.as_deref(), &self.meta.name)
    }

    pub fn is_pending(&self) -> bool {
        self.phase.as_deref() == Some("Pending")
    }

    /// Every container of the pod, init containers first.
    pub fn all_containers(&self) -> impl Iterator<Item = &Container> {
        self.init_containers.iter().chain(self.containers.iter())
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DisruptionSpec {
    /// `WhenEmptyOrUnderutilized` / `WhenEmpty` (v1), `WhenUnderutilized` (v1beta1).
    pub consolidation_policy: Option<String>,
    /// `consolidateAfter`; for a v1alpha5 Provisioner `ttlSecondsAfterEmpty` as `<n>s`.
    pub consolidate_after: Option<String>,
    /// v1alpha5 Provisioner `consolidation.enabled`.
    pub consolidation_enabled: Option<bool>,
    /// Budgets as written (`nodes: "0"`, `schedule`, `duration`, `reasons`).
    pub budgets: Vec<serde_json::Value>,
    /// Where `spec.disruption` is, when written.
    pub evidence: Option<Evidence>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodePool {
    pub meta: Meta,
    pub nodeclass_ref: Option<String>,
    pub requirements: Vec<Requirement>,
    pub taints: Vec<Taint>,
    pub startup_taints: Vec<Taint>,
    /// `spec.template.metadata.labels` (v1alpha5: `spec.labels`).
    pub template_labels: BTreeMap<String, String>,
    /// `spec.template.metadata.annotations` (v1alpha5: `spec.annotations`): every NodeClaim
    /// and Node the NodePool launches carries them.
    pub template_annotations: BTreeMap<String, String>,
    /// `spec.limits` (cpu, memory, ...; v1alpha5: `spec.limits.resources`).
    pub limits: BTreeMap<String, String>,
    /// `status.resources`: current usage.
    pub usage: BTreeMap<String, String>,
    pub disruption: DisruptionSpec,
    /// `expireAfter` (v1: template spec; v1beta1: disruption; v1alpha5: `ttlSecondsUntilExpired`
    /// as `<n>s`).
    pub expire_after: Option<String>,
    /// Kubelet settings as written: v1beta1 `spec.template.spec.kubelet`, v1alpha5
    /// `spec.kubeletConfiguration` (v1 moved them to the EC2NodeClass).
    pub kubelet: Option<serde_json::Value>,
    pub weight: Option<i64>,
    pub conditions: Vec<Condition>,
    /// v1alpha5 Provisioner (pre-v0.32) rather than a NodePool.
    pub is_provisioner: bool,
    /// v1 `spec.template.spec.terminationGracePeriod` (`48h`): how long Karpenter drains a
    /// node before it deletes the pods left, budgets and do-not-disrupt notwithstanding.
    pub termination_grace_period: Option<String>,
}

impl Absorb for NodePool {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn kind(&self) -> &str {
        // A Provisioner and the NodePool migrated from it often share a name (v0.32 to v0.33).
        if self.is_provisioner {
            "Provisioner"
        } else {
            "NodePool"
        }
    }

    fn absorb(&mut self, other: NodePool) {
        self.meta.absorb(other.meta);
        fill(&mut self.nodeclass_ref, other.nodeclass_ref);
        fill_empty(&mut self.requirements, other.requirements);
        fill_empty(&mut self.taints, other.taints);
        fill_empty(&mut self.startup_taints, other.startup_taints);
        fill_empty(&mut self.template_labels, other.template_labels);
        fill_empty(&mut self.template_annotations, other.template_annotations);
        fill_empty(&mut self.limits, other.limits);
        union_map(&mut self.usage, other.usage);
        let (d, theirs) = (&mut self.disruption, other.disruption);
        fill(&mut d.consolidation_policy, theirs.consolidation_policy);
        fill(&mut d.consolidate_after, theirs.consolidate_after);
        fill(&mut d.consolidation_enabled, theirs.consolidation_enabled);
        fill_empty(&mut d.budgets, theirs.budgets);
        fill(&mut d.evidence, theirs.evidence);
        fill(&mut self.expire_after, other.expire_after);
        fill(&mut self.kubelet, other.kubelet);
        fill(&mut self.weight, other.weight);
        union_conditions(&mut self.conditions, other.conditions);
        fill(
            &mut self.termination_grace_period,
            other.termination_grace_period,
        );
    }
}

impl NodePool {
    /// Values of an `In` requirement on `key`, if the NodePool constrains it.
    pub fn allowed_values(&self, key: &str) -> Option<Vec<String>> {
        self.requirements
            .iter()
            .find(|r| r.key == key && r.operator == "In")
            .map(|r| r.values.clone())
    }

    /// `maxPods` of the NodePool's own kubelet settings (v1beta1 / v1alpha5).
    pub fn max_pods(&self) -> Option<u64> {
        json_u64(self.kubelet.as_ref()?.get("maxPods")?)
    }
}

/// One `blockDeviceMappings` entry of an EC2NodeClass.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlockDeviceMapping {
    pub device_name: Option<String>,
    /// `ebs.volumeSize` as written (`20Gi`, `100G`).
    pub volume_size: Option<String>,
    pub volume_type: Option<String>,
    pub encrypted: Option<bool>,
    pub kms_key_id: Option<String>,
    pub snapshot_id: Option<String>,
    pub root_volume: Option<bool>,
    pub evidence: Option<Evidence>,
    /// The `kmsKeyID:` line itself, for the rules that quote the key.
    pub kms_key_evidence: Option<Evidence>,
}

/// One `status.amis` entry of an EC2NodeClass: the AMIs the selector resolved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResolvedAmi {
    pub id: String,
    pub name: Option<String>,
    /// The AMI's requirements (`kubernetes.io/arch In [arm64]`...).
    pub requirements: Vec<Requirement>,
}

/// One entry of an EC2NodeClass's `status.capacityReservations` (v1.3+).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CapacityReservation {
    /// `cr-...`.
    pub id: String,
    /// `reservationType`: `default` (an On-Demand Capacity Reservation) or `capacity-block`.
    pub reservation_type: Option<String>,
    pub instance_type: Option<String>,
    pub zone: Option<String>,
    /// `state`: `active` or `expiring`.
    pub state: Option<String>,
    /// `endTime`, as written.
    pub end_time: Option<String>,
    pub instance_match_criteria: Option<String>,
}

impl CapacityReservation {
    /// A Capacity Block (a fixed, prepaid window) rather than an On-Demand Capacity Reservation.
    pub fn is_capacity_block(&self) -> bool {
        self.reservation_type.as_deref() == Some("capacity-block")
    }
}

/// An EC2NodeClass (v1, v1beta1) or a v1alpha1 AWSNodeTemplate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeClass {
    pub meta: Meta,
    pub ami_family: Option<String>,
    /// Selector terms as written (`tags`, `id`, `name`, `alias`...). An AWSNodeTemplate's
    /// selector map becomes one `{"tags": {...}}` term, its `aws-ids` one `{"id": ...}` term
    /// per ID.
    pub subnet_selector_terms: Vec<serde_json::Value>,
    pub security_group_selector_terms: Vec<serde_json::Value>,
    pub ami_selector_terms: Vec<serde_json::Value>,
    pub role: Option<String>,
    pub instance_profile: Option<String>,
    /// `spec.kubelet` as written (maxPods, ...).
    pub kubelet: Option<serde_json::Value>,
    pub block_device_mappings: Vec<BlockDeviceMapping>,
    /// `status.subnets`: (id, zone).
    pub status_subnets: Vec<(String, String)>,
    pub status_amis: Vec<ResolvedAmi>,
    /// `status.instanceProfile`: the profile Karpenter created or resolved.
    pub status_instance_profile: Option<String>,
    /// `spec.capacityReservationSelectorTerms` as written (`id`, `tags`, `ownerID`), v1.3+.
    pub capacity_reservation_selector_terms: Vec<serde_json::Value>,
    /// `status.capacityReservations`: the reservations the selector terms resolved to.
    pub status_capacity_reservations: Vec<CapacityReservation>,
    pub conditions: Vec<Condition>,
    /// A v1alpha1 AWSNodeTemplate (pre-v0.32) rather than an EC2NodeClass.
    pub is_aws_node_template: bool,
    /// An AWSNodeTemplate's `spec.launchTemplate`: the name of a custom launch template
    /// Karpenter launches with instead of generating one. Its volumes (and their KMS key)
    /// are then the template's, not in the AWSNodeTemplate. v1beta1 dropped the field.
    pub launch_template: Option<String>,
}

impl Absorb for NodeClass {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn kind(&self) -> &str {
        if self.is_aws_node_template {
            "AWSNodeTemplate"
        } else {
            "EC2NodeClass"
        }
    }

    fn absorb(&mut self, other: NodeClass) {
        self.meta.absorb(other.meta);
        fill(&mut self.ami_family, other.ami_family);
        fill_empty(&mut self.subnet_selector_terms, other.subnet_selector_terms);
        fill_empty(
            &mut self.security_group_selector_terms,
            other.security_group_selector_terms,
        );
        fill_empty(&mut self.ami_selector_terms, other.ami_selector_terms);
        fill(&mut self.role, other.role);
        fill(&mut self.instance_profile, other.instance_profile);
        fill(&mut self.kubelet, other.kubelet);
        fill_empty(&mut self.block_device_mappings, other.block_device_mappings);
        fill_empty(&mut self.status_subnets, other.status_subnets);
        fill_empty(&mut self.status_amis, other.status_amis);
        fill(
            &mut self.status_instance_profile,
            other.status_instance_profile,
        );
        fill_empty(
            &mut self.capacity_reservation_selector_terms,
            other.capacity_reservation_selector_terms,
        );
        fill_empty(
            &mut self.status_capacity_reservations,
            other.status_capacity_reservations,
        );
        union_conditions(&mut self.conditions, other.conditions);
        fill(&mut self.launch_template, other.launch_template);
    }
}

impl NodeClass {
    /// `spec.kubelet.maxPods`.
    pub fn max_pods(&self) -> Option<u64> {
        json_u64(self.kubelet.as_ref()?.get("maxPods")?)
    }

    /// The `alias` of an `amiSelectorTerms` entry (`al2023@latest`), v1 only.
    pub fn ami_alias(&self) -> Option<&str> {
        self.ami_selector_terms
            .iter()
            .find_map(|t| t.get("alias")?.as_str())
    }
}

/// A number written as a number or as a numeric string.
fn json_u64(value: &serde_json::Value) -> Option<u64> {
    value
        .as_u64()
        .or_else(|| value.as_str()?.trim().parse().ok())
}

/// A NodeClaim (v1, v1beta1) or a v1alpha5 Machine.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeClaim {
    pub meta: Meta,
    /// The `karpenter.sh/nodepool` label (v1alpha5: `karpenter.sh/provisioner-name`).
    pub nodepool: Option<String>,
    pub nodeclass_ref: Option<String>,
    pub requirements: Vec<Requirement>,
    pub taints: Vec<Taint>,
    pub startup_taints: Vec<Taint>,
    pub node_name: Option<String>,
    pub provider_id: Option<String>,
    pub image_id: Option<String>,
    /// From the `node.kubernetes.io/instance-type` label.
    pub instance_type: Option<String>,
    /// From the `topology.kubernetes.io/zone` label, else from the provider ID
    /// (`aws:///us-east-1a/i-...`).
    pub zone: Option<String>,
    /// From the `karpenter.sh/capacity-type` label.
    pub capacity_type: Option<String>,
    /// `spec.resources.requests`: what the pods and daemonsets it was made for ask.
    pub requests: BTreeMap<String, String>,
    pub capacity: BTreeMap<String, String>,
    pub allocatable: BTreeMap<String, String>,
    pub expire_after: Option<String>,
    /// v1beta1 / v1alpha5 `spec.kubelet` as written.
    pub kubelet: Option<serde_json::Value>,
    pub conditions: Vec<Condition>,
    /// A v1alpha5 Machine (pre-v0.32) rather than a NodeClaim.
    pub is_machine: bool,
    /// v1 `spec.terminationGracePeriod`, copied from its NodePool's template.
    pub termination_grace_period: Option<String>,
}

impl Absorb for NodeClaim {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn kind(&self) -> &str {
        if self.is_machine {
            "Machine"
        } else {
            "NodeClaim"
        }
    }

    fn absorb(&mut self, other: NodeClaim) {
        self.meta.absorb(other.meta);
        fill(&mut self.nodepool, other.nodepool);
        fill(&mut self.nodeclass_ref, other.nodeclass_ref);
        fill_empty(&mut self.requirements, other.requirements);
        fill_empty(&mut self.taints, other.taints);
        fill_empty(&mut self.startup_taints, other.startup_taints);
        fill(&mut self.node_name, other.node_name);
        fill(&mut self.provider_id, other.provider_id);
        fill(&mut self.image_id, other.image_id);
        fill(&mut self.instance_type, other.instance_type);
        fill(&mut self.zone, other.zone);
        fill(&mut self.capacity_type, other.capacity_type);
        fill_empty(&mut self.requests, other.requests);
        fill_empty(&mut self.capacity, other.capacity);
        fill_empty(&mut self.allocatable, other.allocatable);
        fill(&mut self.expire_after, other.expire_after);
        fill(&mut self.kubelet, other.kubelet);
        union_conditions(&mut self.conditions, other.conditions);
        fill(
            &mut self.termination_grace_period,
            other.termination_grace_period,
        );
    }
}

impl NodeClaim {
    /// The condition of that type; a v1alpha5 Machine's `MachineLaunched` is `Launched`.
    pub fn condition(&self, condition_type: &str) -> Option<&Condition> {
        self.conditions
            .iter()
            .find(|c| condition_type_is(&c.condition_type, condition_type))
    }
}

/// Whether a NodeClaim condition type is `wanted`, in either API: before v0.32 a Machine's
/// conditions are `MachineLaunched`, `MachineRegistered`, `MachineInitialized`,
/// `MachineDrifted`, `MachineEmpty`, `MachineExpired` (v1beta1 dropped the prefix).
pub fn condition_type_is(actual: &str, wanted: &str) -> bool {
    actual.eq_ignore_ascii_case(wanted)
        || actual
            .strip_prefix("Machine")
            .is_some_and(|rest| rest.eq_ignore_ascii_case(wanted))
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    pub meta: Meta,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
    pub conditions: Vec<Condition>,
    pub allocatable: BTreeMap<String, String>,
    pub capacity: BTreeMap<String, String>,
    pub provider_id: Option<String>,
    /// The pods running on the node (`kubectl describe node`'s Non-terminated Pods table).
    pub pods: Vec<ObjectRef>,
}

impl Absorb for Node {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn absorb(&mut self, other: Node) {
        self.meta.absorb(other.meta);
        fill_empty(&mut self.taints, other.taints);
        self.unschedulable |= other.unschedulable;
        union_conditions(&mut self.conditions, other.conditions);
        fill_empty(&mut self.allocatable, other.allocatable);
        fill_empty(&mut self.capacity, other.capacity);
        fill(&mut self.provider_id, other.provider_id);
        fill_empty(&mut self.pods, other.pods);
    }
}

impl Node {
    pub fn condition(&self, condition_type: &str) -> Option<&Condition> {
        self.conditions
            .iter()
            .find(|c| c.condition_type == condition_type)
    }

    pub fn nodepool(&self) -> Option<&str> {
        self.meta.label("karpenter.sh/nodepool")
    }

    pub fn instance_type(&self) -> Option<&str> {
        self.meta.label("node.kubernetes.io/instance-type")
    }

    /// `spot`, `on-demand` or `reserved`, from the `karpenter.sh/capacity-type` label.
    pub fn capacity_type(&self) -> Option<&str> {
        self.meta.label("karpenter.sh/capacity-type")
    }

    /// Karpenter sets `karpenter.sh/initialized=true` once the node is ready, every requested
    /// resource is registered and every startup taint is gone.
    pub fn karpenter_initialized(&self) -> bool {
        self.meta.label("karpenter.sh/initialized") == Some("true")
    }
}

/// A Kubernetes label selector (`matchLabels` and `matchExpressions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    pub match_labels: BTreeMap<String, String>,
    pub match_expressions: Vec<Requirement>,
}

impl LabelSelector {
    /// Kubernetes semantics: every matchLabels pair and every expression must hold; an empty
    /// selector matches everything.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.match_labels
            .iter()
            .all(|(k, v)| labels.get(k) == Some(v))
            && self.match_expressions.iter().all(|e| {
                let value = labels.get(&e.key);
                match e.operator.as_str() {
                    "In" => value.is_some_and(|v| e.values.contains(v)),
                    "NotIn" => value.is_none_or(|v| !e.values.contains(v)),
                    "Exists" => value.is_some(),
                    "DoesNotExist" => value.is_none(),
                    _ => false,
                }
            })
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pdb {
    pub meta: Meta,
    pub selector: LabelSelector,
    /// An int or a percentage, as written.
    pub min_available: Option<String>,
    pub max_unavailable: Option<String>,
    /// `IfHealthyBudget` / `AlwaysAllow`.
    pub unhealthy_pod_eviction_policy: Option<String>,
    pub disruptions_allowed: Option<i64>,
    pub current_healthy: Option<i64>,
    pub desired_healthy: Option<i64>,
    pub expected_pods: Option<i64>,
    pub conditions: Vec<Condition>,
}

/// Deployment, StatefulSet, DaemonSet or ReplicaSet.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Workload {
    pub kind: String,
    pub meta: Meta,
    /// `spec.replicas`; for a DaemonSet `status.desiredNumberScheduled`.
    pub replicas: Option<i64>,
    /// `status.readyReplicas`; for a DaemonSet `status.numberReady`.
    pub ready_replicas: Option<i64>,
    pub selector: LabelSelector,
    pub template_labels: BTreeMap<String, String>,
    pub template_annotations: BTreeMap<String, String>,
    pub containers: Vec<Container>,
    pub init_containers: Vec<Container>,
    pub node_selector: BTreeMap<String, String>,
    /// The pod template's required node affinity: OR of terms, each an AND of requirements.
    pub node_affinity: Vec<Vec<Requirement>>,
    pub tolerations: Vec<Toleration>,
    pub dns_policy: Option<String>,
    pub service_account: Option<String>,
    pub conditions: Vec<Condition>,
}

impl Absorb for Pdb {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn absorb(&mut self, other: Pdb) {
        self.meta.absorb(other.meta);
        fill_empty(&mut self.selector, other.selector);
        fill(&mut self.min_available, other.min_available);
        fill(&mut self.max_unavailable, other.max_unavailable);
        fill(
            &mut self.unhealthy_pod_eviction_policy,
            other.unhealthy_pod_eviction_policy,
        );
        fill(&mut self.disruptions_allowed, other.disruptions_allowed);
        fill(&mut self.current_healthy, other.current_healthy);
        fill(&mut self.desired_healthy, other.desired_healthy);
        fill(&mut self.expected_pods, other.expected_pods);
        union_conditions(&mut self.conditions, other.conditions);
    }
}

impl Absorb for Workload {
    fn meta(&self) -> &Meta {
        &self.meta
    }

    fn kind(&self) -> &str {
        &self.kind
    }

    fn absorb(&mut self, other: Workload) {
        self.meta.absorb(other.meta);
        fill(&mut self.replicas, other.replicas);
        fill(&mut self.ready_replicas, other.ready_replicas);
        fill_empty(&mut self.selector, other.selector);
        fill_empty(&mut self.template_labels, other.template_labels);
        fill_empty(&mut self.template_annotations, other.template_annotations);
        fill_empty(&mut self.containers, other.containers);
        fill_empty(&mut self.init_containers, other.init_containers);
        fill_empty(&mut self.node_selector, other.node_selector);
        fill_empty(&mut self.node_affinity, other.node_affinity);
        fill_empty(&mut self.tolerations, other.tolerations);
        fill(&mut self.dns_policy, other.dns_policy);
        fill(&mut self.service_account, other.service_account);
        union_conditions(&mut self.conditions, other.conditions);
    }
}

impl Workload {
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef::new(&self.kind, self.meta.namespace.as_deref(), &self.meta.name)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct StorageClass {
    pub meta: Meta,
    pub provisioner: Option<String>,
    /// `Immediate` / `WaitForFirstConsumer`.
    pub volume_binding_mode: Option<String>,
    /// Zones of `allowedTopologies`.
    pub allowed_zones: Vec<String>,
    /// Marked the cluster's default (`(default)` after the name in `kubectl get storageclass`,
    /// the `is-default-class` annotation, describe's `IsDefaultClass: Yes`).
    pub is_default: bool,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PersistentVolume {
    pub meta: Meta,
    /// `awsElasticBlockStore` (in-tree) rather than CSI.
    pub in_tree_ebs: bool,
    /// `spec.csi.driver` (`ebs.csi.aws.com`...).
    pub csi_driver: Option<String>,
    /// The EBS volume ID (in-tree `volumeID` or CSI `volumeHandle`).
    pub volume_id: Option<String>,
    pub storage_class: Option<String>,
    /// Zones from the PV's node affinity (or its legacy zone labels).
    pub zones: Vec<String>,
    pub claim: Option<ObjectRef>,
    pub phase: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct PersistentVolumeClaim {
    pub meta: Meta,
    pub storage_class: Option<String>,
    pub volume_name: Option<String>,
    pub phase: Option<String>,
    /// `metadata.deletionTimestamp`: the claim is being deleted (`Terminating`).
    pub deletion_timestamp: Option<String>,
    /// Being deleted as kubectl prints it, without the timestamp: STATUS `Terminating` in
    /// `kubectl get pvc`, `Status: Terminating (lasts 5m)` in `kubectl describe pvc`.
    pub terminating: bool,
    /// How long the deletion has waited, from describe's `Terminating (lasts 5m)`.
    pub terminating_for: Option<String>,
    /// `metadata.finalizers` (`kubernetes.io/pvc-protection`, a backup tool's...): what holds a
    /// claim that is being deleted.
    pub finalizers: Vec<String>,
}

impl PersistentVolumeClaim {
    /// Whether the claim is being deleted (a `deletionTimestamp`, or kubectl's `Terminating`).
    pub fn is_terminating(&self) -> bool {
        self.deletion_timestamp.is_some() || self.terminating
    }
}

/// Where a `Setting` was written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum SettingSource {
    /// A container's `env` entry; `key` is the variable name.
    Env,
    /// A container's `args` flag; `key` is the flag with its dashes (`--log-level`).
    Arg,
    /// A ConfigMap `data` entry.
    ConfigMap,
    /// A document without `kind` (helm values, a fragment): `key` is the dotted path
    /// (`settings.isolatedVPC`, `controller.image.registry`, `tolerations[0].key`).
    #[default]
    Values,
}

/// One configuration knob with its value and where it was written: container env and args,
/// ConfigMap data, helm values. Rules look them up by key (`LOG_LEVEL`, `--log-level`,
/// `logLevel`, `settings.isolatedVPC`, `enableRebalanceDraining`...).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Setting {
    pub source: SettingSource,
    /// The workload / pod / ConfigMap holding it, or for helm values the release
    /// (`HelmRelease/<name>`) when the paste names it (`helm get values <name>`).
    pub owner: Option<ObjectRef>,
    pub container: Option<String>,
    pub key: String,
    pub value: String,
    pub evidence: Evidence,
}

/// A CustomResourceDefinition: served and storage versions and conversion (KW104).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Crd {
    pub meta: Meta,
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    pub versions: Vec<CrdVersion>,
    /// `spec.conversion.strategy`: `None` / `Webhook`.
    pub conversion_strategy: Option<String>,
    /// `status.storedVersions`.
    pub stored_versions: Vec<String>,
    pub conditions: Vec<Condition>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrdVersion {
    pub name: String,
    pub served: bool,
    pub storage: bool,
}

/// The `kube-system/aws-auth` ConfigMap: which IAM roles map to which Kubernetes groups.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AwsAuth {
    pub meta: Meta,
    pub map_roles: Vec<MapRole>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct MapRole {
    pub role_arn: String,
    pub username: Option<String>,
    pub groups: Vec<String>,
    pub evidence: Option<Evidence>,
}

/// A VPC resource controller SecurityGroupPolicy (Security Groups for Pods).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SecurityGroupPolicy {
    pub meta: Meta,
    pub pod_selector: Option<LabelSelector>,
    pub service_account_selector: Option<LabelSelector>,
    pub group_ids: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServiceAccount {
    pub meta: Meta,
}

impl ServiceAccount {
    /// The IRSA role (`eks.amazonaws.com/role-arn` annotation).
    pub fn role_arn(&self) -> Option<&str> {
        self.meta.annotation("eks.amazonaws.com/role-arn")
    }
}

/// Which kinds of evidence the input contained: drives the checklist and the `missing` list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Collected {
    PodEvents,
    /// A NodeClaim list or object, or `No resources found` for nodeclaims.
    NodeClaims,
    KarpenterLogs,
    /// Karpenter logs at debug level.
    DebugLogs,
    NodeClasses,
    NodePools,
    Nodes,
    Pdbs,
    KubeletLogs,
    KarpenterDeployment,
}

/// `No resources found` (or an empty list) for a kind, with where it was said.
#[derive(Debug, Clone, PartialEq)]
pub struct EmptyList {
    /// Lower-case resource as typed, e.g. `nodeclaims`; `None` when the output does not say.
    pub resource: Option<String>,
    pub namespace: Option<String>,
    pub evidence: Evidence,
}

/// A shell command the paste shows on a prompt line (`$ kubectl logs -n karpenter -l
/// app.kubernetes.io/name=karpenter`): what was collected, and from where.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ShellCommand {
    /// `kubectl` (also for `k` and `oc`), `helm`, `stern`, `aws`, `journalctl`...
    pub tool: String,
    /// kubectl's and helm's verb (`get`, `logs`, `describe`, `upgrade`...).
    pub verb: Option<String>,
    /// The resource as typed, lower-case (`pdb`, `deploy,pdb`, `deploy/karpenter`); for helm
    /// the release, for stern the pod query.
    pub resource: Option<String>,
    /// The canonical kinds the resource names (`PodDisruptionBudget`), when known.
    pub kinds: Vec<String>,
    /// The object name after the resource, when given.
    pub name: Option<String>,
    /// `-n` / `--namespace` (kubectl, helm, stern).
    pub namespace: Option<String>,
    /// `-A` / `--all-namespaces`.
    pub all_namespaces: bool,
    /// `-l` / `--selector`.
    pub selector: Option<String>,
    pub evidence: Evidence,
}

impl ShellCommand {
    /// A kubectl command of `verb` on `kind` (`get` on `PodDisruptionBudget`).
    pub fn is(&self, verb: &str, kind: &str) -> bool {
        self.tool == "kubectl"
            && self.verb.as_deref() == Some(verb)
            && self.kinds.iter().any(|k| k == kind)
    }
}

#[derive(Debug, Clone, Default)]
pub struct Facts {
    pub messages: Vec<Message>,
    pub events: Vec<Event>,
    pub logs: Vec<LogRecord>,
    pub pods: Vec<Pod>,
    pub nodes: Vec<Node>,
    pub nodeclaims: Vec<NodeClaim>,
    pub nodepools: Vec<NodePool>,
    pub nodeclasses: Vec<NodeClass>,
    pub pdbs: Vec<Pdb>,
    pub workloads: Vec<Workload>,
    pub storage_classes: Vec<StorageClass>,
    pub persistent_volumes: Vec<PersistentVolume>,
    pub pvcs: Vec<PersistentVolumeClaim>,
    pub settings: Vec<Setting>,
    pub crds: Vec<Crd>,
    pub aws_auth: Option<AwsAuth>,
    pub security_group_policies: Vec<SecurityGroupPolicy>,
    pub service_accounts: Vec<ServiceAccount>,
    pub empty_lists: Vec<EmptyList>,
    /// An Event object's `involvedObject` with its `fieldPath` (`spec.containers{app}`), which
    /// names the container the event is about: kept per object, not per event, since every
    /// builder of [`Event`] would otherwise have to fill it.
    pub event_field_paths: Vec<(ObjectRef, String)>,
    /// The shell commands the paste shows, in input order.
    pub commands: Vec<ShellCommand>,
    /// karpenter-why's own report pasted back into the input: per source, its first and last
    /// line (the `karpenter-why: <subject>` header, diagnoses, checklist, `Missing facts`).
    pub own_report: Vec<(String, usize, usize)>,
    /// Karpenter version when the input reveals it (image tag, log `commit`/version line,
    /// chart labels), without a leading `v`.
    pub karpenter_version: Option<String>,
    /// Chart version of the `karpenter-crd` helm release (`helm list`), without a leading `v`:
    /// the CRDs' version when they are installed apart from the controller.
    pub crd_chart_version: Option<String>,
    pub karpenter_namespace: Option<String>,
    pub collected: BTreeSet<Collected>,
    pub input_errors: Vec<InputError>,
    /// The caller's RFC 3339 "now" (`Options.now`), for ages; `None` leaves rules to the latest
    /// timestamp of the input.
    pub now: Option<String>,
    /// Karpenter log lines seen per upper-case level (`INFO`, `ERROR`...), counting the noise
    /// lines the log prefilter did not parse (and the streaming scanner left out).
    pub log_lines_by_level: BTreeMap<String, usize>,
    /// Noise lines of other components' JSON logs the scanner left out (the VPC CNI's ipamd
    /// in a node's log bundle): not in `log_lines_by_level`.
    pub other_component_log_lines: usize,
    /// `logs` by (source, line), built on first use: rules look up the record behind each
    /// log message, and a linear search per message made that quadratic on big logs.
    pub log_index: LogIndex,
    /// NodeClaim name -> the first log record naming it with its NodePool, built on first use:
    /// launch-failure rules ask it per failing NodeClaim, quadratic on big logs otherwise.
    pub claim_nodepool_index: ClaimNodePoolIndex,
}

/// See [`Facts::log_record_at`]; opaque so struct literals can still fill it with `Default`.
#[derive(Debug, Clone, Default)]
pub struct LogIndex(OnceLock<HashMap<(String, usize), usize>>);

/// See [`Facts::nodepool_of_claim_in_logs`]; a cache like [`LogIndex`].
#[derive(Debug, Clone, Default)]
pub struct ClaimNodePoolIndex(OnceLock<(usize, HashMap<String, usize>)>);

impl Facts {
    /// The log record read from `line` of `source` (the record behind a log message).
    pub fn log_record_at(&self, source: &str, line: usize) -> Option<&LogRecord> {
        let matches = |r: &&LogRecord| r.evidence.source == source && r.evidence.line == line;
        let index = self.log_index.0.get_or_init(|| {
            let mut index = HashMap::with_capacity(self.logs.len());
            for (i, r) in self.logs.iter().enumerate() {
                index
                    .entry((r.evidence.source.clone(), r.evidence.line))
                    .or_insert(i);
            }
            index
        });
        // The index is a cache: `logs` may have been changed after it was built.
        index
            .get(&(source.to_string(), line))
            .and_then(|&i| self.logs.get(i))
            .filter(matches)
            .or_else(|| self.logs.iter().find(matches))
    }

    /// The NodeClaim (or Machine) of node `node`: the claim object whose `status.nodeName` it
    /// is, the node's NodeClaim owner, else Karpenter's `registered` / `initialized nodeclaim`
    /// log line naming both. Only a name all of them agree on.
    pub fn claim_of_node(&self, node: &str) -> Option<String> {
        let mut names: Vec<String> = Vec::new();
        names.extend(
            self.nodeclaims
                .iter()
                .filter(|c| c.node_name.as_deref() == Some(node) && !c.meta.name.starts_with('<'))
                .map(|c| c.meta.name.clone()),
        );
        names.extend(
            self.nodes
                .iter()
                .filter(|n| n.meta.name == node)
                .flat_map(|n| &n.meta.owners)
                .filter(|o| o.kind == "NodeClaim" || o.kind == "Machine")
                .map(|o| o.name.clone()),
        );
        if names.is_empty() {
            names.extend(self.logs.iter().filter_map(|r| {
                let on_node = r.names("Node", node) || r.names("node", node);
                on_node
                    .then(|| {
                        ["NodeClaim", "nodeclaim", "Machine", "machine"]
                            .iter()
                            .find_map(|k| r.field_name(k))
                    })
                    .flatten()
            }));
        }
        let first = names.first()?.clone();
        names.iter().all(|n| *n == first).then_some(first)
    }

    /// [`Facts::claim_of_node`] for every node at once (node name -> NodeClaim name), for rules
    /// that ask it of many nodes: one pass over the claims, nodes and logs instead of one per
    /// node.
    pub fn claims_of_nodes(&self) -> BTreeMap<String, String> {
        let mut from_objects: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for c in &self.nodeclaims {
            if let Some(node) = c
                .node_name
                .as_deref()
                .filter(|_| !c.meta.name.starts_with('<'))
            {
                from_objects.entry(node).or_default().push(&c.meta.name);
            }
        }
        for n in &self.nodes {
            for o in n
                .meta
                .owners
                .iter()
                .filter(|o| o.kind == "NodeClaim" || o.kind == "Machine")
            {
                from_objects.entry(&n.meta.name).or_default().push(&o.name);
            }
        }
        let mut from_logs: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in &self.logs {
            let Some(claim) = ["NodeClaim", "nodeclaim", "Machine", "machine"]
                .iter()
                .find_map(|k| r.field_name(k))
            else {
                continue;
            };
            let nodes = [r.field_name("Node"), r.field_name("node")];
            for (i, node) in nodes.iter().enumerate() {
                // Both keys naming one node count once, as `claim_of_node` asks per record.
                if let Some(node) = node
                    .as_ref()
                    .filter(|n| i == 0 || nodes[0].as_ref() != Some(n))
                {
                    if !from_objects.contains_key(node.as_str()) {
                        from_logs
                            .entry(node.clone())
                            .or_default()
                            .push(claim.clone());
                    }
                }
            }
        }
        let agreed = |names: &[&str]| {
            let first = *names.first()?;
            names.iter().all(|n| *n == first).then(|| first.to_string())
        };
        let mut out = BTreeMap::new();
        for (node, names) in &from_objects {
            if let Some(claim) = agreed(names) {
                out.insert(node.to_string(), claim);
            }
        }
        for (node, names) in from_logs {
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            if let Some(claim) = agreed(&names) {
                out.insert(node, claim);
            }
        }
        out
    }

    /// The NodePool of NodeClaim `claim` according to the logs: the first record naming both
    /// (the `created nodeclaim` line, a launch failure).
    pub fn nodepool_of_claim_in_logs(&self, claim: &str) -> Option<String> {
        // v0.32 to v0.36 spell the keys in lower case (`"nodepool":"x","nodeclaim":"x-1"`).
        let pool_of = |r: &LogRecord| {
            r.field_name("NodePool")
                .or_else(|| r.field_name("nodepool"))
        };
        let claim_of = |r: &LogRecord| {
            r.field_name("NodeClaim")
                .or_else(|| r.field_name("nodeclaim"))
        };
        let names_both = |r: &&LogRecord| {
            (r.names("NodeClaim", claim) || r.names("nodeclaim", claim)) && pool_of(r).is_some()
        };
        let (indexed_len, index) = self.claim_nodepool_index.0.get_or_init(|| {
            let mut index = HashMap::new();
            for (i, r) in self.logs.iter().enumerate() {
                if pool_of(r).is_some() {
                    if let Some(claim) = claim_of(r) {
                        index.entry(claim).or_insert(i);
                    }
                }
            }
            (self.logs.len(), index)
        });
        // A cache: trusted while `logs` has the length it was built from and the hit agrees.
        let record = if *indexed_len == self.logs.len() {
            index
                .get(claim)
                .and_then(|&i| self.logs.get(i))
                .filter(names_both)
        } else {
            self.logs.iter().find(names_both)
        };
        record.and_then(pool_of)
    }

    /// Messages whose decoded text contains `needle`, ASCII-case-insensitively.
    pub fn messages_containing<'a>(
        &'a self,
        needle: &'a str,
    ) -> impl Iterator<Item = &'a Message> + 'a {
        self.messages
            .iter()
            .filter(move |m| contains_ignore_ascii_case(&m.text, needle))
    }

    /// Messages containing any of `needles`, each message once.
    pub fn messages_containing_any<'a>(
        &'a self,
        needles: &'a [&'a str],
    ) -> impl Iterator<Item = &'a Message> + 'a {
        self.messages.iter().filter(move |m| {
            needles
                .iter()
                .any(|n| contains_ignore_ascii_case(&m.text, n))
        })
    }

    /// Whether the logs show the NodeClaim (or Machine) past a lifecycle step whose condition the
    /// input shows not True: `launched`, `registered` or `initialized nodeclaim` (`... machine`
    /// before v0.32) naming it. The steps only move forward, so such a line outdates the pasted
    /// condition, whichever was collected first: the object was read before the step completed.
    /// `condition_type` is `Launched`, `Registered` or `Initialized`.
    pub fn claim_step_logged(&self, claim: &str, condition_type: &str) -> bool {
        let past = condition_type.to_ascii_lowercase();
        let logged = |text: &str| {
            let text = text.trim();
            text.len() > past.len()
                && text.as_bytes()[..past.len()].eq_ignore_ascii_case(past.as_bytes())
                && text.as_bytes()[past.len()] == b' '
                && ["nodeclaim", "machine"]
                    .iter()
                    .any(|k| text[past.len()..].trim().eq_ignore_ascii_case(k))
        };
        let names_claim = |r: &LogRecord| {
            ["NodeClaim", "nodeclaim", "Machine", "machine"]
                .iter()
                .any(|k| r.names(k, claim))
        };
        self.logs
            .iter()
            .any(|r| logged(&r.message) && names_claim(r))
    }

    pub fn nodepool(&self, name: &str) -> Option<&NodePool> {
        self.nodepools.iter().find(|p| p.meta.name == name)
    }

    /// The pod a reference names; a reference without a namespace matches any.
    pub fn pod(&self, r: &ObjectRef) -> Option<&Pod> {
        self.pods.iter().find(|p| {
            p.meta.name == r.name && (r.namespace.is_none() || p.meta.namespace == r.namespace)
        })
    }

    pub fn nodeclass(&self, name: &str) -> Option<&NodeClass> {
        self.nodeclasses.iter().find(|c| c.meta.name == name)
    }

    pub fn pending_pods(&self) -> impl Iterator<Item = &Pod> {
        self.pods.iter().filter(|p| p.is_pending())
    }

    /// The Karpenter controller Deployment, when the input has it.
    pub fn karpenter_deployment(&self) -> Option<&Workload> {
        self.workloads.iter().find(|w| {
            w.kind == "Deployment"
                && (w
                    .meta
                    .labels
                    .get("app.kubernetes.io/name")
                    .map(String::as_str)
                    == Some("karpenter")
                    || w.meta.name == "karpenter")
        })
    }

    pub fn has(&self, what: Collected) -> bool {
        self.collected.contains(&what)
    }

    /// Whether the input shows read-only `command` (a `kubectl get` / `describe` / `logs`, an
    /// `aws ... describe-*` / `get-*` / `list-*`) typed at a prompt, blanks aside: its output
    /// is in the input, and a report asking for it again would ask for what the user gave.
    /// Only the whole command counts: a pipe after it (`| jq`) printed something else.
    pub fn ran(&self, command: &str) -> bool {
        let words: Vec<&str> = command.split_whitespace().collect();
        let read_only = match words.as_slice() {
            ["kubectl", verb, ..] => matches!(*verb, "get" | "describe" | "logs" | "events"),
            ["aws", _, call, ..] => ["describe-", "get-", "list-"]
                .iter()
                .any(|p| call.starts_with(p)),
            _ => false,
        };
        if !read_only || command.contains(['|', ';', '&', '`', '$']) {
            return false;
        }
        self.commands.iter().any(|c| {
            let typed: Vec<&str> = c.evidence.text.split_whitespace().collect();
            typed.len() > words.len()
                && typed[typed.len() - words.len()..] == words[..]
                && typed[..typed.len() - words.len()]
                    .last()
                    .is_some_and(|p| p.ends_with(['$', '#', '>', '%']))
        })
    }

    /// Settings whose key is one of `keys` (ASCII case-insensitive), wherever written.
    pub fn settings_named<'a>(
        &'a self,
        keys: &'a [&'a str],
    ) -> impl Iterator<Item = &'a Setting> + 'a {
        self.settings
            .iter()
            .filter(move |s| keys.iter().any(|k| s.key.eq_ignore_ascii_case(k)))
    }

    pub fn pods_on_node<'a>(&'a self, node: &'a str) -> impl Iterator<Item = &'a Pod> + 'a {
        self.pods
            .iter()
            .filter(move |p| p.node_name.as_deref() == Some(node))
    }

    /// The PDBs of the pod's namespace whose selector matches the pod's labels.
    pub fn pdbs_covering<'a>(&'a self, pod: &'a Pod) -> impl Iterator<Item = &'a Pdb> + 'a {
        self.pdbs.iter().filter(move |b| {
            b.meta.namespace == pod.meta.namespace && b.selector.matches(&pod.meta.labels)
        })
    }

    /// The pod's top controller: a ReplicaSet's Deployment (from the ReplicaSet object when the
    /// input has it, else from the `pod-template-hash` naming convention), or the direct
    /// controller (StatefulSet, DaemonSet, Job...).
    pub fn controller_of(&self, pod: &Pod) -> Option<ObjectRef> {
        let owner = pod.meta.owners.first()?;
        if owner.kind != "ReplicaSet" {
            return Some(owner.clone());
        }
        let replica_set = self.workloads.iter().find(|w| {
            w.kind == "ReplicaSet"
                && w.meta.name == owner.name
                && w.meta.namespace == pod.meta.namespace
        });
        if let Some(rs) = replica_set {
            return Some(
                rs.meta
                    .owners
                    .first()
                    .cloned()
                    .unwrap_or_else(|| owner.clone()),
            );
        }
        let deployment = pod
            .meta
            .label("pod-template-hash")
            .and_then(|hash| owner.name.strip_suffix(hash)?.strip_suffix('-'));
        Some(match deployment {
            Some(name) => ObjectRef::new("Deployment", pod.meta.namespace.as_deref(), name),
            None => owner.clone(),
        })
    }

    /// A Deployment, StatefulSet, DaemonSet or ReplicaSet by reference.
    pub fn workload(&self, reference: &ObjectRef) -> Option<&Workload> {
        self.workloads.iter().find(|w| {
            w.kind == reference.kind
                && w.meta.name == reference.name
                && w.meta.namespace == reference.namespace
        })
    }
}

/// ASCII case-insensitive substring test without allocating.
pub fn contains_ignore_ascii_case(haystack: &str, needle: &str) -> bool {
    needle.is_empty() || find_ignore_ascii_case(haystack, needle).is_some()
}

/// Byte offset of the first ASCII-case-insensitive occurrence of `needle` in `haystack`
/// (`None` for an empty needle). Rules call this on every message of big logs: candidates come
/// from a vectorised search for the needle's first byte in both cases, not a compare at every
/// offset.
pub fn find_ignore_ascii_case(haystack: &str, needle: &str) -> Option<usize> {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    let (&first, rest) = n.split_first()?;
    let last_start = h.len().checked_sub(n.len())?;
    let (lower, upper) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
    // A match starts with the needle's first byte, which begins a character in valid UTF-8
    // (ASCII case folding never changes a non-ASCII byte), so every hit is a char boundary.
    memchr::memchr2_iter(lower, upper, &h[..last_start + 1])
        .find(|&i| h[i + 1..i + n.len()].eq_ignore_ascii_case(rest))
}

/// Event reasons only a Node's events have (the kubelet's and the node controller's).
pub const NODE_EVENT_REASONS: &[&str] = &[
    "NodeNotReady",
    "NodeReady",
    "RegisteredNode",
    "RemovingNode",
    "NodeHasSufficientMemory",
    "NodeHasNoDiskPressure",
    "NodeHasSufficientPID",
    "NodeAllocatableEnforced",
    "NodeNotSchedulable",
    "NodeSchedulable",
    "InvalidDiskCapacity",
    "Rebooted",
];

/// Event reasons only a Pod's events have: the scheduler's and Karpenter's scheduling events,
/// the kubelet's image, container, probe and sandbox events, and volume attach/mount events
/// (which Kubernetes records on the pod that waits for the volume).
pub const POD_EVENT_REASONS: &[&str] = &[
    "Scheduled",
    "FailedScheduling",
    "Nominated",
    "Preempted",
    "Pulling",
    "Pulled",
    "BackOff",
    "Created",
    "Started",
    "Killing",
    "Unhealthy",
    "FailedMount",
    "FailedAttachVolume",
    "SuccessfulAttachVolume",
    "FailedCreatePodSandBox",
    "SandboxChanged",
];

/// A JSON log line written by another controller: Karpenter's zap encoder (every version,
/// and the pre-v0.32 `config-logging` encoder config) writes `"message"` and `"time"`, while
/// the AWS Load Balancer Controller, the VPC CNI and other controller-runtime defaults write
/// `"msg"` and `"ts"`; or a `kubectl logs --prefix` / stern prefix naming another pod and
/// container.
pub fn foreign_log_line(raw: &str) -> bool {
    // Plain and JSON-escaped keys apart: an export that wraps the line in a `message` field
    // (`"message": "{\"level\": \"debug\", \"msg\": ...}"`) has a plain `message` key of its own.
    let plain = |k: &str| raw.contains(&format!("\"{k}\":"));
    let escaped = |k: &str| raw.contains(&format!("\\\"{k}\\\":"));
    if (plain("msg") && !plain("message")) || (escaped("msg") && !escaped("message")) {
        return true;
    }
    let Some(brace) = raw.find('{') else {
        return false;
    };
    let prefix = raw[..brace].trim();
    let karpenter = |s: &str| contains_ignore_ascii_case(s, "karpenter");
    // `[pod/<pod>/<container>]`
    if let Some(tag) = prefix
        .strip_prefix("[pod/")
        .and_then(|t| t.split(']').next())
    {
        let (pod, container) = tag.split_once('/').unwrap_or((tag, ""));
        return !karpenter(pod) && !karpenter(container) && container != "controller";
    }
    // stern: `<pod> <container>`
    let words: Vec<&str> = prefix.split_whitespace().collect();
    if let [pod, container] = words.as_slice() {
        let named = |w: &str| {
            w.starts_with(|c: char| c.is_ascii_lowercase())
                && w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
        };
        if named(pod) && named(container) && pod.contains('-') {
            return !karpenter(pod) && !karpenter(container) && *container != "controller";
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_in_go_map_form() {
        let mut r = LogRecord::default();
        r.fields.insert(
            "EC2NodeClass".into(),
            serde_json::Value::String("map[name:gpu-usw2b]".into()),
        );
        r.fields.insert(
            "Pod".into(),
            serde_json::Value::String("map[name:web-0 namespace:shop]".into()),
        );
        r.fields
            .insert("commit".into(), serde_json::Value::String("map[x]".into()));
        assert_eq!(r.field_name("EC2NodeClass").as_deref(), Some("gpu-usw2b"));
        assert!(r.names("EC2NodeClass", "gpu-usw2b"));
        assert_eq!(r.field_name("Pod").as_deref(), Some("shop/web-0"));
        assert_eq!(r.field_name("commit").as_deref(), Some("map[x]"));
    }

    /// The obvious search: compare at every character boundary.
    fn find_ignore_ascii_case_naive(haystack: &str, needle: &str) -> Option<usize> {
        if needle.is_empty() {
            return None;
        }
        (0..haystack.len())
            .filter(|&i| haystack.is_char_boundary(i))
            .find(|&i| {
                haystack.as_bytes()[i..]
                    .get(..needle.len())
                    .is_some_and(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
            })
    }

    #[test]
    fn find_ignore_ascii_case_agrees_with_comparing_at_every_offset() {
        let haystacks = [
            "",
            "a",
            "Insufficient Capacity: InsufficientInstanceCapacity, insufficient capacity",
            "ÄäInsufficientÄ capacity ÿ",
            "xxxXxXxx",
            "did not tolerate taint’s effect",
            "NodeClaim/default-abc nodeclaim/",
        ];
        let needles = [
            "a",
            "x",
            "xx",
            "XxX",
            "insufficient capacity",
            "INSUFFICIENT",
            "Ä",
            "äi",
            "ÿ",
            "taint’s",
            "nodeclaim/",
            "capacity ÿ",
            "missing",
            "",
        ];
        for h in haystacks {
            for n in needles {
                assert_eq!(
                    find_ignore_ascii_case(h, n),
                    find_ignore_ascii_case_naive(h, n),
                    "{n:?} in {h:?}"
                );
                assert_eq!(
                    contains_ignore_ascii_case(h, n),
                    n.is_empty() || find_ignore_ascii_case_naive(h, n).is_some()
                );
            }
        }
    }

    fn log_record(fields: serde_json::Value) -> LogRecord {
        LogRecord {
            fields: serde_json::from_value(fields).unwrap(),
            ..LogRecord::default()
        }
    }

    #[test]
    fn names_compares_a_field_as_field_name_spells_it() {
        let plain = log_record(serde_json::json!({"NodeClaim": "default-x"}));
        assert!(plain.names("NodeClaim", "default-x"));
        assert!(!plain.names("NodeClaim", "default"));
        assert!(!plain.names("NodePool", "default-x"));
        let qualified =
            log_record(serde_json::json!({"Pod": {"namespace": "shop", "name": "web-0"}}));
        assert!(qualified.names("Pod", "shop/web-0"));
        assert!(!qualified.names("Pod", "web-0"));
        assert!(!qualified.names("Pod", "shop/web-1"));
        assert!(!qualified.names("Pod", "shopweb-0"));
        let unqualified = log_record(serde_json::json!({"NodeClaim": {"name": "default-x"}}));
        assert!(unqualified.names("NodeClaim", "default-x"));
        let empty_namespace =
            log_record(serde_json::json!({"Pod": {"namespace": "", "name": "web-0"}}));
        assert!(empty_namespace.names("Pod", "web-0"));
        let number = log_record(serde_json::json!({"NodeClaim": 3}));
        assert!(!number.names("NodeClaim", "3"));
        for r in [&plain, &qualified, &unqualified, &empty_namespace] {
            for key in ["NodeClaim", "Pod"] {
                if let Some(name) = r.field_name(key) {
                    assert!(r.names(key, &name));
                }
            }
        }
    }

    #[test]
    fn nodepool_of_claim_in_logs_is_the_first_record_naming_both() {
        let mut facts = Facts {
            logs: vec![
                log_record(serde_json::json!({"NodeClaim": "default-a"})),
                log_record(
                    serde_json::json!({"NodeClaim": "default-a", "NodePool": {"name": "default"}}),
                ),
                log_record(serde_json::json!({"NodeClaim": "default-a", "NodePool": "other"})),
            ],
            ..Facts::default()
        };
        assert_eq!(
            facts.nodepool_of_claim_in_logs("default-a").as_deref(),
            Some("default")
        );
        assert_eq!(facts.nodepool_of_claim_in_logs("default-b"), None);
        // Records added after the first lookup are still found.
        facts.logs.push(log_record(
            serde_json::json!({"NodeClaim": "spot-b", "NodePool": "spot"}),
        ));
        assert_eq!(
            facts.nodepool_of_claim_in_logs("spot-b").as_deref(),
            Some("spot")
        );
    }

    /// v0.32 to v0.36 log `"nodepool":"ci-arm","nodeclaim":"ci-arm-hx7dl"`.
    #[test]
    fn nodepool_of_claim_in_logs_reads_lower_case_keys() {
        let facts = Facts {
            logs: vec![log_record(
                serde_json::json!({"nodeclaim": "ci-arm-hx7dl", "nodepool": "ci-arm"}),
            )],
            ..Facts::default()
        };
        assert_eq!(
            facts.nodepool_of_claim_in_logs("ci-arm-hx7dl").as_deref(),
            Some("ci-arm")
        );
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn selector_semantics() {
        let sel = LabelSelector {
            match_labels: labels(&[("app", "web")]),
            match_expressions: vec![Requirement {
                key: "tier".into(),
                operator: "NotIn".into(),
                values: vec!["batch".into()],
                min_values: None,
            }],
        };
        assert!(sel.matches(&labels(&[("app", "web")])));
        assert!(!sel.matches(&labels(&[("app", "web"), ("tier", "batch")])));
        assert!(!sel.matches(&labels(&[("app", "db")])));
        assert!(LabelSelector::default().matches(&labels(&[])));
    }

    fn pod(name: &str, owner: Option<ObjectRef>, hash: Option<&str>) -> Pod {
        let mut meta = Meta {
            name: name.into(),
            namespace: Some("shop".into()),
            owners: owner.into_iter().collect(),
            ..Meta::default()
        };
        if let Some(hash) = hash {
            meta.labels.insert("pod-template-hash".into(), hash.into());
        }
        Pod {
            meta,
            node_name: Some("n1".into()),
            ..Pod::default()
        }
    }

    #[test]
    fn controller_of_resolves_replica_sets() {
        let rs = ObjectRef::new("ReplicaSet", Some("shop"), "web-7d9c6b5f4");
        let mut facts = Facts::default();
        let by_hash = pod("web-7d9c6b5f4-x", Some(rs.clone()), Some("7d9c6b5f4"));
        assert_eq!(
            facts.controller_of(&by_hash),
            Some(ObjectRef::new("Deployment", Some("shop"), "web"))
        );
        let bare_rs = pod("web-x", Some(rs.clone()), None);
        assert_eq!(facts.controller_of(&bare_rs), Some(rs.clone()));
        facts.workloads.push(Workload {
            kind: "ReplicaSet".into(),
            meta: Meta {
                name: rs.name.clone(),
                namespace: Some("shop".into()),
                owners: vec![ObjectRef::new("Deployment", Some("shop"), "frontend")],
                ..Meta::default()
            },
            ..Workload::default()
        });
        assert_eq!(
            facts.controller_of(&bare_rs).map(|r| r.name),
            Some("frontend".to_string()),
            "the ReplicaSet object wins over the naming convention"
        );
        let sts = ObjectRef::new("StatefulSet", Some("shop"), "db");
        assert_eq!(
            facts.controller_of(&pod("db-0", Some(sts.clone()), None)),
            Some(sts)
        );
        assert_eq!(facts.controller_of(&pod("static", None, None)), None);
        assert!(facts.workload(&rs).is_some());
        assert!(facts
            .workload(&ObjectRef::new("ReplicaSet", None, &rs.name))
            .is_none());
    }

    #[test]
    fn claim_of_node_from_claims_owners_or_logs() {
        // `claims_of_nodes` answers for every node what `claim_of_node` answers for one.
        let agree = |facts: &Facts| {
            let all = facts.claims_of_nodes();
            for node in ["ip-1", "ip-2", "ip-3"] {
                assert_eq!(all.get(node).cloned(), facts.claim_of_node(node), "{node}");
            }
        };
        let mut facts = Facts::default();
        assert_eq!(facts.claim_of_node("ip-1"), None);
        agree(&facts);
        facts.logs.push(log_record(serde_json::json!({
            "NodeClaim": {"name": "other-9"},
            "node": "ip-3",
            "Node": {"name": "ip-3"}
        })));
        facts.logs.push(log_record(serde_json::json!({
            "nodeclaim": "other-9",
            "node": "ip-3"
        })));
        agree(&facts);
        facts.logs.push(log_record(serde_json::json!({
            "NodeClaim": {"name": "general-k4x9p"},
            "Node": {"name": "ip-1"}
        })));
        assert_eq!(
            facts.claim_of_node("ip-1").as_deref(),
            Some("general-k4x9p")
        );
        assert_eq!(facts.claim_of_node("ip-2"), None);
        // An object that says otherwise: no name rather than a wrong one.
        facts.nodeclaims.push(NodeClaim {
            meta: Meta {
                name: "general-k4x9p".into(),
                ..Meta::default()
            },
            node_name: Some("ip-1".into()),
            ..NodeClaim::default()
        });
        facts.nodes.push(Node {
            meta: Meta {
                name: "ip-1".into(),
                owners: vec![ObjectRef::new("NodeClaim", None, "other-2")],
                ..Meta::default()
            },
            ..Node::default()
        });
        assert_eq!(facts.claim_of_node("ip-1"), None);
        agree(&facts);
        facts.nodes.clear();
        assert_eq!(
            facts.claim_of_node("ip-1").as_deref(),
            Some("general-k4x9p")
        );
        agree(&facts);
        facts.logs.push(log_record(serde_json::json!({
            "NodeClaim": {"name": "third-1"},
            "Node": {"name": "ip-3"}
        })));
        assert_eq!(facts.claim_of_node("ip-3"), None);
        agree(&facts);
    }

    #[test]
    fn pods_on_node_and_covering_pdbs() {
        let mut facts = Facts::default();
        let mut web = pod("web-0", None, None);
        web.meta.labels.insert("app".into(), "web".into());
        facts.pods.push(web.clone());
        facts.pods.push(Pod {
            node_name: Some("n2".into()),
            ..pod("other", None, None)
        });
        facts.pdbs.push(Pdb {
            meta: Meta {
                name: "web".into(),
                namespace: Some("shop".into()),
                ..Meta::default()
            },
            selector: LabelSelector {
                match_labels: labels(&[("app", "web")]),
                ..LabelSelector::default()
            },
            ..Pdb::default()
        });
        facts.pdbs.push(Pdb {
            meta: Meta {
                name: "elsewhere".into(),
                namespace: Some("other".into()),
                ..Meta::default()
            },
            ..Pdb::default()
        });
        let on_n1: Vec<&str> = facts
            .pods_on_node("n1")
            .map(|p| p.meta.name.as_str())
            .collect();
        assert_eq!(on_n1, vec!["web-0"]);
        let covering: Vec<&str> = facts
            .pdbs_covering(&web)
            .map(|b| b.meta.name.as_str())
            .collect();
        assert_eq!(
            covering,
            vec!["web"],
            "a PDB of another namespace never covers"
        );
    }

    #[test]
    fn ran_is_a_read_only_command_typed_whole_at_a_prompt() {
        let prompt = |line: &str| ShellCommand {
            evidence: Evidence::new("p", 1, line),
            ..ShellCommand::default()
        };
        let facts = Facts {
            commands: vec![
                prompt("$ kubectl get nodepool batch -o jsonpath='{.spec.disruption}'"),
                prompt("user@host:~$ kubectl   describe nodeclaim c-1"),
                prompt("$ kubectl get pods -n shop | grep web"),
                prompt("$ kubectl rollout restart deployment/karpenter -n karpenter"),
            ],
            ..Facts::default()
        };
        assert!(facts.ran("kubectl get nodepool batch -o jsonpath='{.spec.disruption}'"));
        assert!(facts.ran("kubectl describe nodeclaim c-1"));
        // Another name, a part of a pipe, a command that changes something: asked.
        assert!(!facts.ran("kubectl describe nodeclaim c-12"));
        assert!(!facts.ran("kubectl get pods -n shop"));
        assert!(!facts.ran("kubectl rollout restart deployment/karpenter -n karpenter"));
        assert!(!facts.ran("kubectl get nodepool batch"));
    }

    #[test]
    fn case_insensitive_contains() {
        assert!(contains_ignore_ascii_case(
            "Pdb \"a/b\" prevents",
            "pdb \"a/b\""
        ));
        assert!(!contains_ignore_ascii_case("abc", "abcd"));
    }
}
