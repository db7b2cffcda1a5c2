//! `kubectl describe` output: split into top-level sections, the kind recognised, then read by
//! the per-kind modules (`describe_pod`, `describe_node`, `describe_misc`); custom resources
//! (NodePool, NodeClaim, EC2NodeClass, Provisioner, AWSNodeTemplate...) go to the objects
//! module's generic describe reader. The `Events:` table is read here for every kind and
//! attached to the described object.

use std::collections::BTreeMap;

use crate::facts::{
    Absorb, Collected, Condition, Facts, Message, MessageOrigin, NodeClaim, ObjectRef, Taint,
};

use super::segment::{self, is_blank};
use super::tables::{is_separator, Table};
use super::{
    describe_misc, describe_node, describe_pod, events_table, objects, Context, Part, Sink,
};

/// One top-level `Key:  value` of a describe block, with its continuation values (lines
/// aligned under the value, as Labels and Tolerations print) and its indented body.
#[derive(Debug, Clone)]
pub struct Section<'a> {
    pub key: &'a str,
    /// Line index of the key.
    pub line: usize,
    /// The inline value then each continuation line, with their line indexes; `<none>` kept.
    pub values: Vec<(usize, &'a str)>,
    /// Indented lines under the key that are not continuations.
    pub body: std::ops::Range<usize>,
}

impl<'a> Section<'a> {
    /// The inline value (trimmed), empty when none.
    pub fn value(&self) -> &'a str {
        self.values.first().map_or("", |(_, v)| v)
    }

    /// The values that are not `<none>` / `<unset>` / empty.
    pub fn items(&self) -> impl Iterator<Item = (usize, &'a str)> + '_ {
        self.values
            .iter()
            .copied()
            .filter(|(_, v)| !v.is_empty() && !matches!(*v, "<none>" | "<unset>" | "<nil>"))
    }
}

/// `(key, value)` of a `Key:  value` / `Key:` line (trimmed).
pub fn key_value(line: &str) -> Option<(&str, &str)> {
    key_value_at(line).map(|(k, v, _)| (k, v))
}

/// `(key, value, byte offset of the value in line)`; the key ends at the first colon that is
/// followed by whitespace or ends the line.
fn key_value_at(line: &str) -> Option<(&str, &str, usize)> {
    let lead = line.len() - line.trim_start().len();
    let trimmed = line.trim();
    let mut search = 0;
    while let Some(pos) = trimmed[search..].find(':') {
        let at = search + pos;
        let after = &trimmed[at + 1..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            let key = trimmed[..at].trim();
            if key.is_empty() || key.starts_with(['/', '-', '"']) {
                return None;
            }
            let value = after.trim_start();
            let offset = lead + at + 1 + (after.len() - value.len());
            return Some((key, value.trim_end(), offset));
        }
        search = at + 1;
    }
    None
}

/// The top-level sections of the block `start..end`.
pub fn sections<'a>(part: &Part<'a>, start: usize, end: usize) -> Vec<Section<'a>> {
    let mut out: Vec<Section<'a>> = Vec::new();
    let mut value_column: Option<usize> = None;
    let mut k = start;
    while k < end {
        let line = part.lines[k];
        if is_blank(line) || segment::is_cut_mark(line) {
            k += 1;
            continue;
        }
        let indent = segment::indent(line);
        // A row's tail a terminal wrapped to column 0 stays in its section's body.
        let wrapped = k > start && segment::hard_wrapped(part.lines[k - 1], line);
        if let (true, Some(section)) = (wrapped, out.last_mut().filter(|s| s.body.end == k)) {
            section.body.end = k + 1;
            k += 1;
            continue;
        }
        if indent == 0 {
            if let Some((key, value, offset)) = key_value_at(line) {
                value_column = (!value.is_empty()).then_some(offset);
                out.push(Section {
                    key,
                    line: k,
                    values: vec![(k, value)],
                    body: k + 1..k + 1,
                });
            }
            k += 1;
            continue;
        }
        let Some(section) = out.last_mut() else {
            k += 1;
            continue;
        };
        let continues = value_column == Some(indent) && section.body.is_empty();
        if continues {
            section.values.push((k, line.trim()));
        } else {
            if section.body.is_empty() {
                section.body = k..k;
            }
            value_column = None;
            section.body.end = k + 1;
        }
        k += 1;
    }
    out
}

/// A node of a section body's indentation tree.
#[derive(Debug, Clone)]
pub struct TreeNode<'a> {
    pub indent: usize,
    /// `Some` for `Key:  value` lines.
    pub key: Option<&'a str>,
    pub value: &'a str,
    /// The whole line, trimmed.
    pub raw: &'a str,
    pub line: usize,
    pub children: Vec<usize>,
}

/// The indentation tree of a section body (containers, volumes, capacity...).
#[derive(Debug, Clone, Default)]
pub struct Tree<'a> {
    pub nodes: Vec<TreeNode<'a>>,
    pub roots: Vec<usize>,
}

impl<'a> Tree<'a> {
    pub fn parse(part: &Part<'a>, range: std::ops::Range<usize>) -> Tree<'a> {
        let mut tree = Tree::default();
        let mut stack: Vec<usize> = Vec::new();
        for k in range {
            let line = part.lines[k];
            if is_blank(line) {
                continue;
            }
            let indent = segment::indent(line);
            while stack
                .last()
                .is_some_and(|&top| tree.nodes[top].indent >= indent)
            {
                stack.pop();
            }
            let (key, value) = match key_value(line) {
                Some((key, value)) => (Some(key), value),
                None => (None, line.trim()),
            };
            let id = tree.nodes.len();
            tree.nodes.push(TreeNode {
                indent,
                key,
                value,
                raw: line.trim(),
                line: k,
                children: Vec::new(),
            });
            match stack.last() {
                Some(&parent) => tree.nodes[parent].children.push(id),
                None => tree.roots.push(id),
            }
            stack.push(id);
        }
        tree
    }

    pub fn node(&self, id: usize) -> &TreeNode<'a> {
        &self.nodes[id]
    }

    pub fn children(&self, id: usize) -> impl Iterator<Item = &TreeNode<'a>> + '_ {
        self.nodes[id].children.iter().map(|&c| &self.nodes[c])
    }

    pub fn child(&self, id: usize, key: &str) -> Option<usize> {
        self.nodes[id]
            .children
            .iter()
            .copied()
            .find(|&c| self.nodes[c].key == Some(key))
    }

    /// The inline value and the lines under it (a multi-value field such as a pod template's
    /// `Labels:`), without `<none>`.
    pub fn values(&self, id: usize) -> Vec<&'a str> {
        std::iter::once(self.nodes[id].value)
            .chain(self.children(id).map(|c| c.raw))
            .filter(|v| !v.is_empty() && !matches!(*v, "<none>" | "<unset>"))
            .collect()
    }

    /// `key: value` children of `id` as a map (requests, capacity, environment...).
    pub fn map_of(&self, id: usize) -> BTreeMap<String, String> {
        self.children(id)
            .filter_map(|n| Some((n.key?.to_string(), n.value.to_string())))
            .filter(|(_, v)| !v.is_empty())
            .collect()
    }
}

/// What kind of object a describe block is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Described {
    Pod,
    Node,
    Pdb,
    Workload(&'static str),
    ServiceAccount,
    StorageClass,
    PersistentVolume,
    Pvc,
    /// Custom resources (`API Version:` and `Kind:`): the objects module reads them.
    Generic,
    /// A Karpenter custom resource pasted without its header (`Name:` ... `Kind:`), its kind
    /// told by its content or by the `kubectl describe` command: read like `Generic`.
    Karpenter(&'static str),
    Unknown,
}

/// Column-0 keys only `kubectl describe pod` prints (a workload's pod template indents its
/// own): two of them make a pod even when the paste lost `Containers:` and `QoS Class:`.
const POD_ONLY_KEYS: &[&str] = &[
    "Priority",
    "Priority Class Name",
    "Service Account",
    "Start Time",
    "IPs",
    "Nominated Node Name",
    "Node-Selectors",
    "Tolerations",
    "Init Containers",
    "Topology Spread Constraints",
    "Runtime Class Name",
    // A pod's `Node:` (`<none>` while Pending) and `Volumes:`; a node's describe has neither at
    // column 0, a NodeClaim's `Node Name` is nested under `Status`.
    "Node",
    "Volumes",
];

/// Column-0 keys only `kubectl describe node` prints: two of them make a node when the paste
/// stops before `Capacity:` (a node's header, labels and conditions, then cut).
const NODE_ONLY_KEYS: &[&str] = &[
    "Roles",
    "Taints",
    "Unschedulable",
    "Lease",
    "Addresses",
    "Allocatable",
    "System Info",
    "PodCIDR",
    "PodCIDRs",
    "ProviderID",
    "Non-terminated Pods",
    "Allocated resources",
];

/// A describe block starting at `start` without its `Name:` line: the paste began mid-way
/// (`Status:`, `Containers:`, `Node-Selectors:`...), or came from a tool that prints no
/// header. Its keys (or the `kubectl describe` command before it) must still show a pod or a
/// node, with at least two sections, so stray `Key: value` text is not taken for one.
/// Returns the block's end.
pub fn headless(part: &Part<'_>, start: usize, cx: &mut Context) -> Option<usize> {
    if start < cx.headless_refused_until || !segment::may_start_headless_describe(part.lines[start])
    {
        return None;
    }
    let end = segment::describe_end(&part.lines, start);
    let sections = sections(part, start, end);
    // One section is enough when it proves a Karpenter kind (`Status:` with its conditions,
    // the part of a NodeClaim describe people copy).
    if sections.len() < 2 && karpenter_kind_of(part, &sections).is_none() {
        cx.headless_refused_until = end;
        return None;
    }
    let described = cx.command.as_ref().and_then(|c| c.described_object());
    let from_keys = kind_of(part, &sections, None);
    let kind = match from_keys {
        Described::Unknown => kind_of(part, &sections, described.as_ref().map(|o| o.kind.as_str())),
        k => k,
    };
    let found = matches!(
        kind,
        Described::Pod | Described::Node | Described::Karpenter(_)
    );
    if !found {
        cx.headless_refused_until = end;
    }
    found.then_some(end)
}

/// Condition types only one Karpenter kind sets (`Ready` and `ValidationSucceeded` are shared
/// by several, so they prove nothing alone).
const CONDITION_KINDS: &[(&str, &str)] = &[
    ("Launched", "NodeClaim"),
    ("Registered", "NodeClaim"),
    ("Initialized", "NodeClaim"),
    ("ConsistentStateFound", "NodeClaim"),
    ("Consolidatable", "NodeClaim"),
    ("InstanceTerminating", "NodeClaim"),
    ("Drifted", "NodeClaim"),
    ("Expired", "NodeClaim"),
    ("Empty", "NodeClaim"),
    ("DisruptionReason", "NodeClaim"),
    ("MachineLaunched", "Machine"),
    ("MachineRegistered", "Machine"),
    ("MachineInitialized", "Machine"),
    ("MachineDrifted", "Machine"),
    ("MachineExpired", "Machine"),
    ("MachineEmpty", "Machine"),
    ("AMIsReady", "EC2NodeClass"),
    ("SubnetsReady", "EC2NodeClass"),
    ("SecurityGroupsReady", "EC2NodeClass"),
    ("InstanceProfileReady", "EC2NodeClass"),
    ("CapacityReservationsReady", "EC2NodeClass"),
    ("NodeClassReady", "NodePool"),
    ("NodeRegistrationHealthy", "NodePool"),
];

/// Fields right under `Status:` (or `Spec:`) that only one Karpenter kind prints, as
/// kubectl's generic describer labels them.
const FIELD_KINDS: &[(&str, &str, &str)] = &[
    ("Status", "Provider ID", "NodeClaim"),
    ("Status", "Amis", "EC2NodeClass"),
    ("Status", "Subnets", "EC2NodeClass"),
    ("Status", "Security Groups", "EC2NodeClass"),
    ("Status", "Instance Profile", "EC2NodeClass"),
    ("Status", "Node Class Observed Generation", "NodePool"),
    ("Spec", "Ami Selector Terms", "EC2NodeClass"),
    ("Spec", "Subnet Selector Terms", "EC2NodeClass"),
    ("Spec", "Security Group Selector Terms", "EC2NodeClass"),
    ("Spec", "Template", "NodePool"),
    ("Spec", "Disruption", "NodePool"),
    ("Spec", "Node Class Ref", "NodeClaim"),
];

/// The Karpenter kind a header-less describe is about, when its `Status:` / `Spec:` bodies
/// prove one and only one: a condition type (`Type:  Launched`) or a field only that kind
/// has. A NodePool's spec also holds `Node Class Ref` (under `Template`), so a NodePool
/// field wins over it. Linear in the sections' bodies.
fn karpenter_kind_of(part: &Part<'_>, sections: &[Section<'_>]) -> Option<&'static str> {
    let mut found: Vec<&'static str> = Vec::new();
    for s in sections
        .iter()
        // `Conditions:` at column 0: the Status block copied from its conditions on (a pod's
        // and a node's conditions are tables, with no `Type:` key lines).
        .filter(|s| matches!(s.key, "Status" | "Spec" | "Conditions"))
    {
        let body = &part.lines[s.body.clone()];
        let top = body
            .iter()
            .filter(|l| !is_blank(l))
            .map(|l| segment::indent(l))
            .min();
        for line in body {
            let Some((key, value)) = key_value(line) else {
                continue;
            };
            if key == "Type" {
                if let Some((_, kind)) = CONDITION_KINDS.iter().find(|(t, _)| *t == value) {
                    found.push(kind);
                }
            } else if Some(segment::indent(line)) == top {
                if let Some((_, _, kind)) = FIELD_KINDS
                    .iter()
                    .find(|(sec, k, _)| *sec == s.key && *k == key)
                {
                    found.push(kind);
                }
            }
        }
    }
    if found.contains(&"NodePool") {
        found.retain(|k| *k != "NodeClaim");
    }
    let first = *found.first()?;
    found.iter().all(|k| *k == first).then_some(first)
}

/// The kind, from the keys the block prints; the command that produced it (`kubectl describe
/// pod ...`) decides only when the keys do not.
fn kind_of(part: &Part<'_>, sections: &[Section<'_>], command_kind: Option<&str>) -> Described {
    let has = |key: &str| sections.iter().any(|s| s.key == key);
    if has("API Version") && has("Kind") {
        Described::Generic
    } else if let Some(kind) = karpenter_kind_of(part, sections) {
        Described::Karpenter(kind)
    } else if has("Containers")
        || has("QoS Class")
        || (has("IP") && has("Node") && has("Status"))
        || POD_ONLY_KEYS.iter().filter(|k| has(k)).count() >= 2
    {
        Described::Pod
    } else if has("ProviderID")
        || NODE_ONLY_KEYS.iter().filter(|k| has(k)).count() >= 2
        || (has("Capacity") && has("Allocatable"))
        || has("Non-terminated Pods")
    {
        Described::Node
    } else if has("StorageClass") && has("Volume") && !has("Claim") {
        // `kubectl describe pvc` (a PersistentVolume prints `Claim` and no `Volume`).
        Described::Pvc
    } else if has("Min available") || has("Max unavailable") || has("Allowed disruptions") {
        Described::Pdb
    } else if has("Provisioner") && (has("ReclaimPolicy") || has("IsDefaultClass")) {
        Described::StorageClass
    } else if has("Reclaim Policy") && has("Source") && (has("Claim") || has("Capacity")) {
        Described::PersistentVolume
    } else if has("Mountable secrets") || has("Image pull secrets") {
        Described::ServiceAccount
    } else if has("StrategyType") {
        Described::Workload("Deployment")
    } else if has("Desired Number of Nodes Scheduled") {
        Described::Workload("DaemonSet")
    } else if has("Replicas") && has("Pods Status") {
        Described::Workload(if has("Update Strategy") {
            "StatefulSet"
        } else {
            "ReplicaSet"
        })
    } else {
        match command_kind {
            Some("Pod") => Described::Pod,
            Some("Node") => Described::Node,
            Some("PodDisruptionBudget") => Described::Pdb,
            Some("Deployment") => Described::Workload("Deployment"),
            Some("StatefulSet") => Described::Workload("StatefulSet"),
            Some("DaemonSet") => Described::Workload("DaemonSet"),
            Some("ReplicaSet") => Described::Workload("ReplicaSet"),
            Some("ServiceAccount") => Described::ServiceAccount,
            Some("StorageClass") => Described::StorageClass,
            Some("PersistentVolume") => Described::PersistentVolume,
            Some("PersistentVolumeClaim") => Described::Pvc,
            Some("NodeClaim") => Described::Karpenter("NodeClaim"),
            Some("NodePool") => Described::Karpenter("NodePool"),
            Some("EC2NodeClass") => Described::Karpenter("EC2NodeClass"),
            Some("Machine") => Described::Karpenter("Machine"),
            Some("Provisioner") => Described::Karpenter("Provisioner"),
            Some("AWSNodeTemplate") => Described::Karpenter("AWSNodeTemplate"),
            _ if cut_node_describe(part, sections) => Described::Node,
            _ if cut_pod_describe(part, sections) => Described::Pod,
            _ => Described::Unknown,
        }
    }
}

/// A `kubectl describe node` cut down to its name, labels and events (what people keep when
/// they paste "the node that will not go away"): cluster-scoped (no `Namespace:`), and its
/// name, its labels or its events are a node's.
fn cut_node_describe(part: &Part<'_>, sections: &[Section<'_>]) -> bool {
    if sections.iter().any(|s| s.key == "Namespace") {
        return false;
    }
    let Some(name) = section(sections, "Name").map(Section::value) else {
        return false;
    };
    let hostname = name.ends_with(".compute.internal") || name.ends_with(".ec2.internal");
    let node_label = section(sections, "Labels").is_some_and(|labels| {
        labels
            .items()
            .any(|(_, label)| label.starts_with("kubernetes.io/hostname="))
    });
    let node_event = section(sections, "Events").is_some_and(|events| {
        part.lines[events.body.clone()].iter().any(|line| {
            line.contains("Cannot disrupt Node:")
                || line.contains(" node-controller ")
                || line
                    .split_whitespace()
                    .nth(1)
                    .is_some_and(|reason| crate::facts::NODE_EVENT_REASONS.contains(&reason))
        })
    });
    !name.is_empty() && (hostname || node_label || node_event)
}

/// A `kubectl describe pod` cut down to its name, namespace, node, status and events (what
/// people keep of a pod that "was Pending for 20 minutes"): too few pod-only keys for
/// `POD_ONLY_KEYS`, but namespaced and named, and its `Node:` is a pod's (`<none>` while
/// Pending, `<node>/<IP>` once bound) or its events are a pod's (Scheduled, FailedScheduling,
/// Nominated, Pulling...). Other namespaced kinds (a Deployment, a PVC) print neither.
fn cut_pod_describe(part: &Part<'_>, sections: &[Section<'_>]) -> bool {
    let named = |key: &str| {
        section(sections, key)
            .map(Section::value)
            .is_some_and(|v| !v.is_empty() && !matches!(v, "<none>" | "<unset>"))
    };
    if !named("Name") || !named("Namespace") {
        return false;
    }
    let pod_node = section(sections, "Node").is_some_and(|node| {
        let value = node.value();
        value == "<none>"
            || value.split_once('/').is_some_and(|(host, ip)| {
                !host.is_empty() && ip.parse::<std::net::IpAddr>().is_ok()
            })
    });
    let pod_event = section(sections, "Events").is_some_and(|events| {
        part.lines[events.body.clone()].iter().any(|line| {
            line.split_whitespace()
                .nth(1)
                .is_some_and(|reason| crate::facts::POD_EVENT_REASONS.contains(&reason))
        })
    });
    pod_node || pod_event
}

/// A describe block `start..end`.
pub fn ingest(part: &Part<'_>, start: usize, end: usize, cx: &Context, sink: &mut Sink) {
    let sections = sections(part, start, end);
    let described = cx.command.as_ref().and_then(|c| c.described_object());
    let kind = kind_of(part, &sections, described.as_ref().map(|o| o.kind.as_str()));
    let name = section(&sections, "Name")
        .map(Section::value)
        .unwrap_or_default();
    let namespace = section(&sections, "Namespace")
        .map(Section::value)
        .filter(|n| !n.is_empty());
    let events = sections.iter().find(|s| s.key == "Events");
    let object = match kind {
        Described::Pod => {
            let mut pod = describe_pod::read(part, &sections, sink);
            let assigned = events.and_then(|e| assigned_pod(part, e));
            if let (true, Some((ns, name))) = (pod.meta.name.is_empty(), &assigned) {
                // The scheduler's `Successfully assigned <ns>/<name> to <node>` names it.
                pod.meta.name = name.clone();
                if section(&sections, "Namespace").is_none() {
                    pod.meta.namespace = Some(ns.clone());
                }
                pod.meta.evidence = Some(part.evidence(start));
            }
            if pod.meta.name.is_empty() {
                pod.meta.name = unnamed(described.as_ref(), "Pod", "<pod>");
                if section(&sections, "Namespace").is_none() {
                    // Not `default`: the paste does not say.
                    let ns = described
                        .as_ref()
                        .filter(|o| o.kind == "Pod")
                        .and_then(|o| o.namespace.clone())
                        .or_else(|| cx.command.as_ref().and_then(|c| c.namespace.clone()));
                    pod.meta.namespace = Some(ns.unwrap_or_else(|| "<namespace>".to_string()));
                }
                pod.meta.evidence = Some(part.evidence(start));
            }
            let object = pod.object_ref();
            sink.facts.pods.push(pod);
            Some(object)
        }
        Described::Node => {
            let mut node = describe_node::read(part, &sections, sink);
            if node.meta.name.is_empty() {
                node.meta.name = unnamed(described.as_ref(), "Node", "<node>");
                node.meta.evidence = Some(part.evidence(start));
            }
            let object = ObjectRef::new("Node", None, &node.meta.name);
            sink.facts.nodes.push(node);
            sink.collected(Collected::Nodes);
            Some(object)
        }
        Described::Pdb => {
            let pdb = describe_misc::read_pdb(part, &sections);
            let object = ObjectRef::new(
                "PodDisruptionBudget",
                pdb.meta.namespace.as_deref(),
                &pdb.meta.name,
            );
            sink.facts.pdbs.push(pdb);
            sink.collected(Collected::Pdbs);
            Some(object)
        }
        Described::Pvc => {
            let pvc = describe_misc::read_pvc(part, &sections);
            let object = ObjectRef::new(
                "PersistentVolumeClaim",
                pvc.meta.namespace.as_deref(),
                &pvc.meta.name,
            );
            sink.facts.pvcs.push(pvc);
            Some(object)
        }
        Described::ServiceAccount => {
            let account = describe_misc::read_service_account(part, &sections);
            let object = ObjectRef::new(
                "ServiceAccount",
                account.meta.namespace.as_deref(),
                &account.meta.name,
            );
            sink.facts.service_accounts.push(account);
            Some(object)
        }
        Described::StorageClass => {
            let class = describe_misc::read_storage_class(part, &sections);
            let object = ObjectRef::new("StorageClass", None, &class.meta.name);
            sink.facts.storage_classes.push(class);
            Some(object)
        }
        Described::PersistentVolume => {
            let pv = describe_misc::read_persistent_volume(part, &sections);
            let object = ObjectRef::new("PersistentVolume", None, &pv.meta.name);
            sink.facts.persistent_volumes.push(pv);
            Some(object)
        }
        Described::Workload(kind) => {
            let workload = describe_misc::read_workload(part, &sections, kind, sink);
            let object = ObjectRef::new(
                kind,
                workload.meta.namespace.as_deref(),
                &workload.meta.name,
            );
            if sink_is_karpenter(&workload) {
                sink.collected(Collected::KarpenterDeployment);
            }
            sink.facts.workloads.push(workload);
            Some(object)
        }
        Described::Generic => {
            let body_end = events.map_or(end, |e| e.line);
            part.with_segment(start, body_end, |s| {
                objects::ingest_generic_describe(s, &mut sink.facts)
            });
            let kind = section(&sections, "Kind")
                .map(Section::value)
                .unwrap_or_default();
            (!kind.is_empty() && !name.is_empty()).then(|| {
                let ns = namespace.filter(|_| segment::is_namespaced(kind));
                ObjectRef::new(kind, ns, name)
            })
        }
        Described::Karpenter(kind) => {
            let named_in_events = || events.and_then(|e| named_in_events(part, e, kind));
            let name = if name.is_empty() {
                described
                    .as_ref()
                    .filter(|o| o.kind == kind)
                    .map(|o| o.name.clone())
                    .or_else(named_in_events)
                    .unwrap_or_else(|| format!("<{}>", kind.to_ascii_lowercase()))
            } else {
                name.to_string()
            };
            let body_end = events.map_or(end, |e| e.line);
            part.with_segment(start, body_end, |s| {
                objects::ingest_describe_as(s, kind, &name, &mut sink.facts)
            });
            Some(ObjectRef::new(kind, None, &name))
        }
        Described::Unknown => {
            let body_end = events.map_or(end, |e| e.line);
            for k in start..body_end {
                sink.unrecognised(part, k);
            }
            // Only the command can say what this is; trust it for the object it names.
            described
                .clone()
                .filter(|o| name.is_empty() || o.name == name)
        }
    };
    if let Some(events) = events {
        let end_of_events = events.body.end.max(events.line + 1);
        events_table::ingest_section(part, events.line, end_of_events, object.as_ref(), sink);
        if kind == Described::Pod {
            sink.collected(Collected::PodEvents);
        }
    }
    report_cut(part, &sections, kind, sink);
    let read_as = match kind {
        Described::Pod => Some("a pod"),
        Described::Node => Some("a node"),
        Described::Karpenter("EC2NodeClass") => Some("an EC2NodeClass"),
        Described::Karpenter("AWSNodeTemplate") => Some("an AWSNodeTemplate"),
        Described::Karpenter(kind) => Some(kind),
        _ => None,
    };
    // A Karpenter object the command names was cut on purpose (`| sed -n '/Status:/,$p'`);
    // without a name it is worth saying how it was read.
    let named_by_command = matches!(kind, Described::Karpenter(k)
        if described.as_ref().is_some_and(|o| o.kind == k));
    if let (true, false, Some(read_as), Some(first)) =
        (name.is_empty(), named_by_command, read_as, sections.first())
    {
        let read_as = if read_as.starts_with(char::is_uppercase) {
            format!("a {read_as}")
        } else {
            read_as.to_string()
        };
        sink.error(
            part,
            first.line,
            format!(
                "the describe output starts at `{}:` without its `Name:` line (copied from the middle?); read as {read_as} describe",
                first.key,
            ),
        );
    }
}

/// `(namespace, name)` from the scheduler's `Successfully assigned <ns>/<name> to <node>`
/// event of a pod's Events section.
fn assigned_pod(part: &Part<'_>, events: &Section<'_>) -> Option<(String, String)> {
    events.body.clone().find_map(|k| {
        let line = part.lines.get(k)?;
        let at = line.find("Successfully assigned ")? + "Successfully assigned ".len();
        let target = line[at..].split_whitespace().next()?;
        let (ns, name) = target.split_once('/')?;
        (!ns.is_empty() && !name.is_empty()).then(|| (ns.to_string(), name.to_string()))
    })
}

/// The name of a Karpenter object whose describe lost its `Name:` line, from its own events:
/// Karpenter writes it into some messages (`NodeClaim <name> event: ...`, `Failed to resolve
/// NodeClass for NodeClaim <name>`, `NodeClaim <name> failed validation: ...`, `Machine
/// <name> event: ...` before v0.32, `... for NodePool <name>`), and tools print `kind/name`.
/// Only a name every such mention agrees on: the table belongs to that one object.
fn named_in_events(part: &Part<'_>, events: &Section<'_>, kind: &str) -> Option<String> {
    let lower = kind.to_ascii_lowercase();
    let word = format!("{kind} ");
    let slash = format!("{lower}/");
    let mut found: Option<&str> = None;
    for k in events.body.clone() {
        let line = part.lines.get(k).copied().unwrap_or_default();
        let mentions = line
            .match_indices(&word)
            .map(|(at, w)| (at, &line[at + w.len()..], false))
            .chain(
                line.match_indices(&slash)
                    .map(|(at, w)| (at, &line[at + w.len()..], true)),
            );
        for (at, rest, is_slash) in mentions {
            // A word of its own: not `MyNodeClaim ` nor `ec2nodeclass/` inside a longer kind.
            if line[..at].ends_with(|c: char| c.is_ascii_alphanumeric()) {
                continue;
            }
            let name_len = rest
                .find(|c: char| {
                    !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
                })
                .unwrap_or(rest.len());
            let name = rest[..name_len].trim_end_matches('.');
            let after = &rest[name_len..];
            let names_it = is_slash
                || line[..at].ends_with("for ")
                || after.starts_with(" event:")
                || after.starts_with(" failed validation");
            if !names_it || !is_object_name(name) {
                continue;
            }
            match found {
                Some(f) if f != name => return None,
                _ => found = Some(name),
            }
        }
    }
    found.map(str::to_string)
}

/// A DNS-1123 subdomain, as Kubernetes object names are.
fn is_object_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric())
}

/// The name of a describe block that lost its `Name:` line: the `kubectl describe` command's
/// object when it is of that kind, else a placeholder.
fn unnamed(described: Option<&ObjectRef>, kind: &str, placeholder: &str) -> String {
    described
        .filter(|o| o.kind == kind)
        .map_or_else(|| placeholder.to_string(), |o| o.name.clone())
}

fn sink_is_karpenter(workload: &crate::facts::Workload) -> bool {
    workload.kind == "Deployment"
        && (workload.meta.name == "karpenter"
            || workload
                .meta
                .labels
                .get("app.kubernetes.io/name")
                .is_some_and(|n| n == "karpenter"))
}

/// A block whose last section is a heading with nothing under it was cut while copying.
fn report_cut(part: &Part<'_>, sections: &[Section<'_>], kind: Described, sink: &mut Sink) {
    const NEEDS_BODY: &[&str] = &[
        "Containers",
        "Init Containers",
        "Conditions",
        "Volumes",
        "Capacity",
        "Allocatable",
        "Non-terminated Pods",
        "Spec",
        "Status",
    ];
    let Some(last) = sections.last() else {
        return;
    };
    let empty = last.value().is_empty() && last.body.is_empty() && last.values.len() == 1;
    if empty && NEEDS_BODY.contains(&last.key) && kind != Described::Unknown {
        sink.error(
            part,
            last.line,
            format!(
                "the describe output ends at `{}:` with nothing under it (cut while copying?); the rest of the block was read",
                last.key
            ),
        );
    }
}

pub fn section<'s, 'a>(sections: &'s [Section<'a>], key: &str) -> Option<&'s Section<'a>> {
    sections.iter().find(|s| s.key == key)
}

/// `key=value` label lines (Labels, Node-Selectors).
pub fn labels(section: Option<&Section<'_>>) -> BTreeMap<String, String> {
    section
        .into_iter()
        .flat_map(|s| s.items())
        .filter_map(|(_, v)| match v.split_once('=') {
            Some((k, v)) => Some((k.trim().to_string(), v.trim().to_string())),
            None => (!v.contains(' ')).then(|| (v.to_string(), String::new())),
        })
        .collect()
}

/// `key: value` annotation lines.
pub fn annotations(section: Option<&Section<'_>>) -> BTreeMap<String, String> {
    section
        .into_iter()
        .flat_map(|s| s.items())
        .filter_map(|(_, v)| {
            let (k, v) = v.split_once(':')?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// `key=value:Effect` / `key:Effect` taint lines.
pub fn taint(text: &str) -> Option<Taint> {
    let (kv, effect) = text.trim().rsplit_once(':')?;
    if !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
        return None;
    }
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k, Some(v.to_string())),
        None => (kv, None),
    };
    Some(Taint {
        key: key.to_string(),
        value,
        effect: effect.to_string(),
    })
}

/// A free-text field of a described object (a reason, a message): kept as a message so its
/// words are matched like any other.
pub fn field_message(
    part: &Part<'_>,
    line: usize,
    text: String,
    reason: Option<String>,
    object: &ObjectRef,
    sink: &mut Sink,
) {
    if text.trim().is_empty() {
        return;
    }
    sink.message(Message {
        origin: MessageOrigin::ObjectField,
        text,
        evidence: part.evidence(line),
        object: Some(object.clone()),
        reason,
        ..Message::default()
    });
}

/// A conditions table under a section (`Type  Status` for pods; nodes add heartbeat and
/// transition times, `Reason` and `Message`).
pub fn conditions(part: &Part<'_>, s: &Section<'_>) -> Vec<Condition> {
    let mut lines = s.body.clone();
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let Some(table) = Table::from_any_header(part.lines[header]) else {
        return Vec::new();
    };
    lines
        .filter(|&k| !is_separator(part.lines[k]))
        .filter_map(|k| {
            let cells = table.cut(part.lines[k])?;
            Some(Condition {
                condition_type: table.cell(&cells, "TYPE")?.to_string(),
                status: table.cell(&cells, "STATUS")?.to_string(),
                reason: table.cell(&cells, "REASON").map(str::to_string),
                message: table.cell(&cells, "MESSAGE").map(str::to_string),
                evidence: Some(part.evidence(k)),
            })
        })
        .collect()
}

/// A NodeClaim (or Machine) read from a header-less describe keeps a placeholder name unless
/// the rest of the input ties it to a named one: its provider ID or node name as a `kubectl
/// get nodeclaims` row (`rows`, not merged yet), a NodeClaim object, a node owned by it, or
/// Karpenter's `launched` / `registered` / `initialized nodeclaim` log lines show them. Only
/// one such claim, and only a name all that evidence agrees on: else the placeholder stays.
pub fn name_unnamed_claim(facts: &mut Facts, rows: &[NodeClaim]) {
    merge_unnamed_claims_of_one_instance(facts);
    let mut unnamed = facts
        .nodeclaims
        .iter()
        .enumerate()
        .filter(|(_, c)| matches!(c.meta.name.as_str(), "<nodeclaim>" | "<machine>"));
    let (Some((index, claim)), None) = (unnamed.next(), unnamed.next()) else {
        return;
    };
    let instance = claim.provider_id.as_deref().and_then(instance_id);
    let node = claim.node_name.as_deref().filter(|n| is_object_name(n));
    if instance.is_none() && node.is_none() {
        return;
    }
    let same_instance =
        |id: Option<&str>| instance.is_some() && id.and_then(instance_id) == instance;
    let same_node = |name: Option<&str>| node.is_some() && name == node;
    let mut names: Vec<String> = Vec::new();
    for c in rows.iter().chain(&facts.nodeclaims) {
        if c.meta.name != claim.meta.name
            && (same_instance(c.provider_id.as_deref()) || same_node(c.node_name.as_deref()))
        {
            names.push(c.meta.name.clone());
        }
    }
    for n in &facts.nodes {
        if same_instance(n.provider_id.as_deref()) || same_node(Some(&n.meta.name)) {
            names.extend(
                n.meta
                    .owners
                    .iter()
                    .filter(|o| o.kind == "NodeClaim" || o.kind == "Machine")
                    .map(|o| o.name.clone()),
            );
        }
    }
    for r in &facts.logs {
        let Some(name) = ["NodeClaim", "nodeclaim", "Machine", "machine"]
            .iter()
            .find_map(|k| r.field_name(k))
        else {
            continue;
        };
        let provider = r.field_name("provider-id");
        let on_node = ["Node", "node"].iter().find_map(|k| r.field_name(k));
        if same_instance(provider.as_deref()) || same_node(on_node.as_deref()) {
            names.push(name);
        }
    }
    let Some(name) = names.first().filter(|n| is_object_name(n)).cloned() else {
        return;
    };
    if !names.iter().all(|n| *n == name) {
        return;
    }
    let kind = if claim.is_machine {
        "Machine"
    } else {
        "NodeClaim"
    };
    let placeholder = ObjectRef::new(kind, None, &claim.meta.name);
    if let Some(known) = facts.nodeclaims.iter().position(|c| c.meta.name == name) {
        // The same claim as an object too: one claim, the object's fields first.
        let described = facts.nodeclaims.remove(index);
        let known = &mut facts.nodeclaims[if known > index { known - 1 } else { known }];
        known.absorb(described);
    } else {
        facts.nodeclaims[index].meta.name = name.clone();
    }
    // Its events were attached under the placeholder.
    let renamed = |o: &mut Option<ObjectRef>| {
        if o.as_ref() == Some(&placeholder) {
            if let Some(o) = o {
                o.name = name.clone();
            }
        }
    };
    facts.events.iter_mut().for_each(|e| renamed(&mut e.object));
    facts
        .messages
        .iter_mut()
        .for_each(|m| renamed(&mut m.object));
}

/// Header-less describes of claims on one instance (one paste twice, the status printed
/// again) are one claim: an instance is launched for one NodeClaim. Claims without an
/// instance ID, or on different instances, stay apart.
fn merge_unnamed_claims_of_one_instance(facts: &mut Facts) {
    let placeholder = |c: &NodeClaim| matches!(c.meta.name.as_str(), "<nodeclaim>" | "<machine>");
    let mut i = 0;
    while i < facts.nodeclaims.len() {
        let claim = &facts.nodeclaims[i];
        let instance = claim
            .provider_id
            .as_deref()
            .and_then(instance_id)
            .map(str::to_string);
        let Some(instance) = instance.filter(|_| placeholder(claim)) else {
            i += 1;
            continue;
        };
        let name = claim.meta.name.clone();
        let mut j = i + 1;
        while j < facts.nodeclaims.len() {
            let other = &facts.nodeclaims[j];
            let same = other.meta.name == name
                && other.provider_id.as_deref().and_then(instance_id) == Some(instance.as_str());
            if same {
                let other = facts.nodeclaims.remove(j);
                facts.nodeclaims[i].absorb(other);
            } else {
                j += 1;
            }
        }
        i += 1;
    }
}

/// `i-0abc` of `aws:///us-east-1a/i-0abc` (or of the bare instance ID a table shows).
fn instance_id(provider_id: &str) -> Option<&str> {
    let id = provider_id.rsplit('/').next()?.trim();
    id.starts_with("i-").then_some(id)
}
