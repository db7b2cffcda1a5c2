//! `kubectl describe` of PodDisruptionBudgets, workloads (Deployment, StatefulSet, DaemonSet,
//! ReplicaSet), ServiceAccounts and PersistentVolumeClaims: the fields the disruption,
//! workload, credential and volume rules read.

use crate::facts::{
    Meta, ObjectRef, Pdb, PersistentVolume, PersistentVolumeClaim, ServiceAccount, StorageClass,
    Workload,
};

use super::describe::{self, section, Section, Tree};
use super::tables::parse_selector;
use super::{describe_pod, Part, Sink};

fn value<'a>(sections: &[Section<'a>], key: &str) -> Option<&'a str> {
    section(sections, key)
        .map(Section::value)
        .filter(|v| !v.is_empty() && !matches!(*v, "<none>" | "<unset>" | "N/A"))
}

fn meta(part: &Part<'_>, sections: &[Section<'_>]) -> Meta {
    Meta {
        name: value(sections, "Name").unwrap_or_default().to_string(),
        namespace: Some(
            value(sections, "Namespace")
                .unwrap_or("default")
                .to_string(),
        ),
        labels: describe::labels(section(sections, "Labels")),
        annotations: describe::annotations(section(sections, "Annotations")),
        annotations_cut: section(sections, "Annotations").is_none(),
        evidence: section(sections, "Name").map(|s| part.evidence(s.line)),
        ..Meta::default()
    }
}

/// The name, namespace, labels and annotations (the IRSA `eks.amazonaws.com/role-arn`).
pub fn read_service_account(part: &Part<'_>, sections: &[Section<'_>]) -> ServiceAccount {
    ServiceAccount {
        meta: meta(part, sections),
    }
}

/// `Provisioner:  kubernetes.io/aws-ebs`, `VolumeBindingMode:  WaitForFirstConsumer`.
pub fn read_storage_class(part: &Part<'_>, sections: &[Section<'_>]) -> StorageClass {
    let mut meta = meta(part, sections);
    meta.namespace = None;
    if let Some(line) = section(sections, "Provisioner").map(|s| s.line) {
        meta.evidence = Some(part.evidence(line));
    }
    StorageClass {
        meta,
        provisioner: value(sections, "Provisioner").map(str::to_string),
        volume_binding_mode: value(sections, "VolumeBindingMode").map(str::to_string),
        is_default: value(sections, "IsDefaultClass")
            .is_some_and(|v| v.eq_ignore_ascii_case("yes")),
        ..StorageClass::default()
    }
}

/// The `Source:` block (`Type:  AWSElasticBlockStore (a Persistent Disk resource in AWS)` with
/// `VolumeID:`, or `Type:  CSI (...)` with `Driver:` and `VolumeHandle:`), `StorageClass:`,
/// `Claim:` and `Status:`.
pub fn read_persistent_volume(part: &Part<'_>, sections: &[Section<'_>]) -> PersistentVolume {
    let mut meta = meta(part, sections);
    meta.namespace = None;
    let mut pv = PersistentVolume {
        storage_class: value(sections, "StorageClass").map(str::to_string),
        claim: value(sections, "Claim").map(|c| match c.split_once('/') {
            Some((ns, name)) => ObjectRef::new("PersistentVolumeClaim", Some(ns), name),
            None => ObjectRef::new("PersistentVolumeClaim", None, c),
        }),
        phase: value(sections, "Status").map(str::to_string),
        zones: [
            "topology.kubernetes.io/zone",
            "failure-domain.beta.kubernetes.io/zone",
        ]
        .iter()
        .filter_map(|k| meta.label(k))
        .map(str::to_string)
        .take(1)
        .collect(),
        ..PersistentVolume::default()
    };
    // A CSI volume carries its zone in `Node Affinity:` (`Term 0:  topology.kubernetes.io/zone
    // in [us-east-1a]`), not in labels; several terms are ORed, so only a single one pins it.
    if pv.zones.is_empty() {
        let terms: Vec<&str> = section(sections, "Node Affinity")
            .into_iter()
            .flat_map(|s| s.body.clone())
            .filter_map(|j| part.lines.get(j))
            .filter_map(|l| l.trim().strip_prefix("Term "))
            .collect();
        if let [term] = terms.as_slice() {
            pv.zones = term
                .split_once("zone in [")
                .and_then(|(_, rest)| rest.split_once(']'))
                .map(|(values, _)| values.split_whitespace().map(str::to_string).collect())
                .unwrap_or_default();
        }
    }
    if let Some(source) = section(sections, "Source") {
        for j in source.body.clone() {
            let Some((key, v)) = part.lines.get(j).and_then(|l| describe::key_value(l)) else {
                continue;
            };
            match key {
                "Type" => {
                    pv.in_tree_ebs = v.starts_with("AWSElasticBlockStore");
                    if pv.in_tree_ebs {
                        meta.evidence = Some(part.evidence(j));
                    }
                }
                "Driver" => pv.csi_driver = Some(v.to_string()),
                "VolumeID" | "VolumeHandle" => pv.volume_id = Some(v.to_string()),
                _ => {}
            }
        }
    }
    pv.meta = meta;
    pv
}

/// The storage class, volume, phase, finalizers, and whether it is being deleted: kubectl prints
/// `Status: Terminating (lasts 5m)` for a claim with a deletionTimestamp, else the phase.
pub fn read_pvc(part: &Part<'_>, sections: &[Section<'_>]) -> PersistentVolumeClaim {
    let status = value(sections, "Status").unwrap_or_default();
    let terminating = status.starts_with("Terminating");
    let terminating_for = status
        .strip_prefix("Terminating")
        .and_then(|rest| rest.trim().strip_prefix("(lasts "))
        .map(|age| age.trim_end_matches(')').trim().to_string())
        .filter(|age| !age.is_empty() && age != "<unknown>");
    // `Finalizers:  [kubernetes.io/pvc-protection]`, Go's print of a list.
    let finalizers = value(sections, "Finalizers")
        .map(|f| {
            f.trim_start_matches('[')
                .trim_end_matches(']')
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut meta = meta(part, sections);
    if terminating {
        // The line that says so is the evidence.
        meta.evidence = section(sections, "Status").map(|s| part.evidence(s.line));
    }
    PersistentVolumeClaim {
        meta,
        storage_class: value(sections, "StorageClass").map(str::to_string),
        volume_name: value(sections, "Volume").map(str::to_string),
        phase: (!terminating && !status.is_empty()).then(|| status.to_string()),
        deletion_timestamp: None,
        terminating,
        terminating_for,
        finalizers,
    }
}

pub fn read_pdb(part: &Part<'_>, sections: &[Section<'_>]) -> Pdb {
    let mut pdb = Pdb {
        meta: meta(part, sections),
        min_available: value(sections, "Min available").map(str::to_string),
        max_unavailable: value(sections, "Max unavailable").map(str::to_string),
        selector: value(sections, "Selector")
            .map(parse_selector)
            .unwrap_or_default(),
        ..Pdb::default()
    };
    if let Some(status) = section(sections, "Status") {
        let tree = Tree::parse(part, status.body.clone());
        for &root in &tree.roots {
            let n = tree.node(root);
            let number = n.value.parse::<i64>().ok();
            match n.key {
                Some("Allowed disruptions") => pdb.disruptions_allowed = number,
                Some("Current") => pdb.current_healthy = number,
                Some("Desired") => pdb.desired_healthy = number,
                Some("Total") => pdb.expected_pods = number,
                _ => {}
            }
        }
    }
    pdb
}

/// `3 desired | 3 updated | 3 total | 3 available | 0 unavailable` -> (desired, available).
fn replicas(text: &str) -> (Option<i64>, Option<i64>) {
    let mut desired = None;
    let mut available = None;
    for part in text.split('|') {
        let mut words = part.split_whitespace();
        let (Some(n), Some(what)) = (words.next(), words.next()) else {
            continue;
        };
        let n = n.parse().ok();
        match what {
            "desired" => desired = n,
            "available" => available = n,
            _ => {}
        }
    }
    (desired, available)
}

pub fn read_workload(
    part: &Part<'_>,
    sections: &[Section<'_>],
    kind: &str,
    sink: &mut Sink,
) -> Workload {
    let meta = meta(part, sections);
    let object = ObjectRef::new(kind, meta.namespace.as_deref(), &meta.name);
    let (mut replicas, mut ready) = value(sections, "Replicas").map_or((None, None), replicas);
    if kind == "DaemonSet" {
        replicas =
            value(sections, "Desired Number of Nodes Scheduled").and_then(|v| v.parse().ok());
        ready = value(sections, "Number of Nodes Scheduled with Available Pods")
            .and_then(|v| v.parse().ok());
    }
    if let Some(status) = value(sections, "Pods Status") {
        ready = ready.or_else(|| status.split_whitespace().next()?.parse().ok());
    }
    let mut workload = Workload {
        kind: kind.to_string(),
        replicas,
        ready_replicas: ready,
        selector: value(sections, "Selector")
            .map(parse_selector)
            .unwrap_or_default(),
        meta,
        ..Workload::default()
    };
    if let Some(template) = section(sections, "Pod Template") {
        let tree = Tree::parse(part, template.body.clone());
        for &root in &tree.roots {
            let n = tree.node(root);
            let pairs = |sep: char| {
                tree.values(root)
                    .into_iter()
                    .filter_map(move |v| v.split_once(sep))
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            };
            match n.key {
                Some("Labels") => workload.template_labels.extend(pairs('=')),
                Some("Annotations") => workload.template_annotations.extend(pairs(':')),
                Some("Node-Selectors") => workload.node_selector.extend(pairs('=')),
                Some("Service Account") => {
                    workload.service_account = Some(n.value.to_string()).filter(|v| !v.is_empty())
                }
                Some("Tolerations") => workload.tolerations.extend(
                    tree.values(root)
                        .into_iter()
                        .filter_map(describe_pod::toleration),
                ),
                Some("Containers") => {
                    for &c in &tree.node(root).children {
                        if let Some(name) = tree.node(c).key {
                            let read = describe_pod::container(part, &tree, c, name, &object, sink);
                            workload.containers.push(read.container);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    workload
}
