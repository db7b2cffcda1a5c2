//! KW209 pod-ignored-by-karpenter.

use crate::facts::{
    contains_ignore_ascii_case, find_ignore_ascii_case, Facts, Message, ObjectRef,
    PersistentVolumeClaim, Pod,
};
use crate::rules::kw2xx::scheduling::{pod_ref, record_of, tail_after};
use crate::rules::text::cluster_name_or_placeholder;
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW209",
    slug: "pod-ignored-by-karpenter",
    title: "Karpenter ignores the pod and will not provision for it",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter looked at the Pending pod and decided not to provision for it at all: the pod opts
out of Karpenter capacity, uses a scheduling feature Karpenter cannot simulate, or its volumes
cannot be resolved.

Signals: `configured to not run on a Karpenter provisioned node` (the pod requires
`karpenter.sh/nodepool DoesNotExist`), `node selector term with matchFields is not supported`,
`unbound pvc must define a storage class` (before v1.1: `unbound pvc <name> must define a
storage class`), `persistentvolumeclaim is being deleted` (Karpenter v1.1+, which names the
claim only in a structured field) and the scheduler's `persistentvolumeclaim "<name>" is being
deleted`, `failed to validate pvc` (newer releases add the reason: `pvc with immediate volume
binding mode must be bound`, `storage class uses unsupported topology key`, `provisioner is not
supported`), `persistentvolumeclaim bound to non-existent persistentvolume` (a Lost claim), `pvc
is considered unbound because it does not contain annotation` (`pv.kubernetes.io/bind-completed`),
and `ignoring pod, StorageClass.storage.k8s.io "<sc>" not found`. The scheduler's `pod has
unbound immediate PersistentVolumeClaims` with no Karpenter event or log line about the pod is
the same case seen from outside (medium confidence): the claim binds immediately (or has no
class) and has no volume yet, and recent releases ignore the pod until it has. Karpenter logs `ignoring pod` only at debug level, so a Pending pod whose spec requires
`karpenter.sh/nodepool DoesNotExist` in every nodeSelectorTerm, or uses `matchFields`, or that
mounts a claim being deleted (its object carries a `deletionTimestamp`; `kubectl get pvc`
prints STATUS `Terminating`, `kubectl describe pvc` prints `Status: Terminating (lasts <age>)`),
is reported from the objects alone (medium confidence); so is a claim that is unbound (STATUS
`Pending`, no volume) with no storage class. When the pods are listed without their volumes
(`kubectl get pods,pvc`), a claim named `<template>-<pod>` (a StatefulSet's
volumeClaimTemplates) is the pod's. A claim's own event (`ProvisioningFailed`) belongs to the
pod that mounts it: it joins that pod's diagnosis rather than making a second one. A Pending
pod a Fargate profile selected (label `eks.amazonaws.com/fargate-profile=<profile>`,
`schedulerName: fargate-scheduler`, or a `FailedScheduling` event from `fargate-scheduler`)
is Fargate's to place: no NodePool serves it. A Pending pod a DaemonSet owns (`Controlled By:
DaemonSet/<name>`) is never provisioned for: Karpenter leaves DaemonSet pods out and only counts
them as overhead on the nodes it launches.

## Why it happens
Karpenter's own pods carry `karpenter.sh/nodepool DoesNotExist` so that Karpenter never runs on
nodes it manages: they need managed-node-group or Fargate capacity, and stay Pending when there
is none. `matchFields` (usually `metadata.name`) cannot be evaluated for a node that does not
exist yet. A PVC without a storage class (and no default StorageClass), a PVC being deleted, or
a StorageClass that does not exist leave Karpenter unable to compute the volume's zone. A
DaemonSet pod is pinned to one existing node by its controller: a new node cannot host it, so a
Pending DaemonSet pod means that node lacks room.

## How to fix
Per cause: give Karpenter's pods non-Karpenter capacity (a managed node group or a Fargate
profile), or drop the `DoesNotExist` requirement from a workload that should use Karpenter;
replace `matchFields` by `matchExpressions` on `kubernetes.io/hostname`; set
`storageClassName` on the PVC or mark a default StorageClass; create the missing StorageClass.
For a claim being deleted: find what holds it (its finalizers, a running pod still using it),
keep the volume (`persistentVolumeReclaimPolicy: Retain`) if the data matters, let the deletion
finish (remove a finalizer whose controller is gone), then recreate the claim (for a StatefulSet,
delete the Pending pod: the controller recreates claim and pod). For a DaemonSet pod: a
priorityClass that preempts ordinary pods (`system-node-critical` for node agents), smaller
requests, or less work on that node.
"#,
};

const SIGNALS: &[&str] = &[
    "configured to not run on a karpenter provisioned node",
    "node selector term with matchfields is not supported",
    "unbound pvc",
    "is being deleted",
    "failed to validate pvc",
    "persistentvolumeclaim bound to non-existent persistentvolume",
    "pvc is considered unbound because it does not contain annotation",
    "storageclass.storage.k8s.io",
    "storageclasses.storage.k8s.io",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reason {
    OptedOut,
    MatchFields,
    NoStorageClass,
    PvcDeleting,
    StorageClassNotFound,
    PvcInvalid,
    /// A Fargate profile selects the pod: `fargate-scheduler` places it, on Fargate capacity.
    Fargate,
    /// A DaemonSet's pod: Karpenter leaves DaemonSet pods out of provisioning altogether.
    DaemonSet,
    /// The scheduler's `pod has unbound immediate PersistentVolumeClaims`, Karpenter silent:
    /// the claim has no volume yet, and the pod waits for it whatever the nodes.
    UnboundImmediateClaim,
}

fn reason_of(text: &str) -> Option<Reason> {
    let has = |s: &str| contains_ignore_ascii_case(text, s);
    if has("configured to not run on a karpenter provisioned node") {
        Some(Reason::OptedOut)
    } else if has("node selector term with matchfields is not supported") {
        Some(Reason::MatchFields)
    } else if unbound_pvc_without_class(text).is_some() {
        Some(Reason::NoStorageClass)
    } else if pvc_being_deleted(text).is_some() {
        Some(Reason::PvcDeleting)
    } else if (has("storageclass.storage.k8s.io") || has("storageclasses.storage.k8s.io"))
        && has("not found")
    {
        Some(Reason::StorageClassNotFound)
    } else if has("failed to validate pvc")
        || has("persistentvolumeclaim bound to non-existent persistentvolume")
        || has("pvc is considered unbound because it does not contain annotation")
    {
        Some(Reason::PvcInvalid)
    } else {
        None
    }
}

/// `unbound pvc must define a storage class` (v1.1+) or `unbound pvc <name> must define a
/// storage class` (before): `Some(name)` when the text names the claim.
fn unbound_pvc_without_class(text: &str) -> Option<Option<String>> {
    let tail = tail_after(text, "unbound pvc ")?;
    let at = find_ignore_ascii_case(&tail, "must define a storage class")?;
    let name = tail[..at].trim();
    // One name at most between the two: anything longer is another sentence.
    (!name.contains(' ')).then(|| (!name.is_empty()).then(|| name.to_string()))
}

/// Karpenter's `persistentvolumeclaim is being deleted` (v1.1+, the claim only in a structured
/// field) or the scheduler's `persistentvolumeclaim "<name>" is being deleted`: `Some(name)`
/// when the text names the claim.
pub(super) fn pvc_being_deleted(text: &str) -> Option<Option<String>> {
    const CLAIM: &str = "persistentvolumeclaim";
    const DELETED: &str = "is being deleted";
    let mut rest = text;
    while let Some(at) = find_ignore_ascii_case(rest, CLAIM) {
        let after = &rest[at + CLAIM.len()..];
        let tail = after.trim_start_matches(' ');
        if tail.len() >= DELETED.len()
            && tail.is_char_boundary(DELETED.len())
            && tail[..DELETED.len()].eq_ignore_ascii_case(DELETED)
        {
            return Some(None);
        }
        if let Some(quoted) = tail.strip_prefix('"') {
            if let Some((name, after_name)) = quoted.split_once('"') {
                let after_name = after_name.trim_start_matches(' ');
                if !name.is_empty()
                    && !name.contains(' ')
                    && after_name.len() >= DELETED.len()
                    && after_name.is_char_boundary(DELETED.len())
                    && after_name[..DELETED.len()].eq_ignore_ascii_case(DELETED)
                {
                    return Some(Some(name.to_string()));
                }
            }
        }
        rest = after;
    }
    None
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut groups: Vec<(Reason, Option<ObjectRef>, Vec<&Message>)> = Vec::new();
    for m in &facts.messages {
        // fargate-scheduler also reports the pods it places (`Scheduled`): only its failures.
        let from_fargate = m
            .component
            .as_deref()
            .is_some_and(|c| c.eq_ignore_ascii_case(FARGATE_SCHEDULER))
            && m.reason.as_deref() == Some("FailedScheduling");
        let Some(reason) = reason_of(&m.text).or_else(|| from_fargate.then_some(Reason::Fargate))
        else {
            continue;
        };
        let record = record_of(facts, m);
        let pod = record
            .and_then(|r| r.field_name("Pod").or_else(|| r.field_name("pod")))
            .map(|q| pod_ref(&q))
            .or_else(|| {
                m.object
                    .clone()
                    .filter(|o| o.kind.eq_ignore_ascii_case("pod"))
            })
            .or_else(|| {
                // An event of the claim itself (`ProvisioningFailed` on the PVC): the pod that
                // mounts it.
                let claim = m
                    .object
                    .as_ref()
                    .filter(|o| o.kind.eq_ignore_ascii_case("persistentvolumeclaim"))?;
                let mut mounting = facts
                    .pods
                    .iter()
                    .filter(|p| mounts(p, &claim.name, claim.namespace.as_deref()));
                match (mounting.next(), mounting.next()) {
                    (Some(only), None) => Some(only.object_ref()),
                    _ => None,
                }
            })
            .or_else(|| match facts.pods.as_slice() {
                [only] => Some(only.object_ref()),
                _ => None,
            });
        match groups
            .iter_mut()
            .find(|(r, p, _)| *r == reason && *p == pod)
        {
            Some((_, _, ms)) => ms.push(m),
            None => groups.push((reason, pod, vec![m])),
        }
    }
    // A line that names no pod (a claim's `ProvisioningFailed` event next to Karpenter's own
    // line about the pod) explains the same thing as the one group of that reason naming a pod:
    // one diagnosis, not two.
    let mut i = 0;
    while i < groups.len() {
        let (reason, pod) = (groups[i].0, groups[i].1.clone());
        let targets: Vec<usize> = (0..groups.len())
            .filter(|&k| k != i && groups[k].0 == reason && groups[k].1.is_some())
            .collect();
        if let (None, [target]) = (pod, targets.as_slice()) {
            let (_, _, moved) = groups.remove(i);
            let target = if *target > i { target - 1 } else { *target };
            groups[target].2.extend(moved);
            continue;
        }
        i += 1;
    }
    let mut out: Vec<Diagnosis> = groups
        .iter()
        .map(|(reason, pod, messages)| diagnose(facts, *reason, pod.as_ref(), messages))
        .collect();
    // Karpenter says why it ignores a pod only at debug level (`ignoring pod`); the pod's own
    // spec says it too.
    let mut from_spec: Vec<String> = Vec::new();
    for pod in facts.pending_pods().filter(|p| p.node_name.is_none()) {
        let Some(reason) = fargate_profile(pod)
            .map(|_| Reason::Fargate)
            .or_else(|| ignored_by_spec(pod))
            .or_else(|| deleting_claim_of(facts, pod).map(|_| Reason::PvcDeleting))
            .or_else(|| classless_claim_of(facts, pod).map(|_| Reason::NoStorageClass))
        else {
            continue;
        };
        let pod_ref = pod.object_ref();
        let said = groups
            .iter()
            .any(|(r, p, _)| *r == reason && p.as_ref().is_none_or(|p| p.name == pod_ref.name));
        if said {
            continue;
        }
        from_spec.push(pod_ref.name.clone());
        let mut d = diagnose(facts, reason, Some(&pod_ref), &[]);
        let claim_evidence = match reason {
            Reason::PvcDeleting => {
                d.summary.push_str(" (Read from the pod and the claim's objects: Karpenter logs why it ignores a pod only at debug level.)");
                deleting_claim_of(facts, pod).and_then(|c| c.meta.evidence.clone())
            }
            Reason::NoStorageClass => {
                d.summary.push_str(" (Read from the pod and the claim's objects: Karpenter logs why it ignores a pod only at debug level.)");
                classless_claim_of(facts, pod).and_then(|c| c.meta.evidence.clone())
            }
            // Karpenter logs nothing at all about DaemonSet pods; the scheduler's complaint
            // says what the pod's node lacks.
            Reason::DaemonSet => {
                d = d.with_messages(
                    facts
                        .messages_containing("nodes are available")
                        .filter(|m| m.object.as_ref().is_some_and(|o| o.name == pod_ref.name)),
                );
                None
            }
            _ => {
                d.summary.push_str(
                    " (Read from the pod's spec: Karpenter logs why it ignores a pod only at debug level.)",
                );
                None
            }
        };
        out.push(
            d.with_confidence(Confidence::Medium)
                .with_evidence(pod.meta.evidence.clone())
                .with_evidence(claim_evidence),
        );
    }
    // Only the scheduler speaks: the pod's claim is unbound and binds immediately (or has no
    // class). Recent Karpenter releases ignore such a pod until the claim is bound (at debug
    // level, `pvc with immediate volume binding mode must be bound`); older ones nominate it
    // (an answer, then not this). Either way no node helps before the volume exists.
    let mut waiting: Vec<(ObjectRef, Vec<&Message>)> = Vec::new();
    for m in facts.messages_containing(UNBOUND_IMMEDIATE) {
        let Some(pod) = m
            .object
            .clone()
            .filter(|o| o.kind.eq_ignore_ascii_case("pod"))
            .or_else(|| match facts.pods.as_slice() {
                [only] => Some(only.object_ref()),
                _ => None,
            })
        else {
            continue;
        };
        let explained = from_spec.contains(&pod.name)
            || groups
                .iter()
                .any(|(_, p, _)| p.as_ref().is_none_or(|p| p.name == pod.name));
        if explained || karpenter_answered(facts, &pod) || placed(facts, &pod) {
            continue;
        }
        match waiting.iter_mut().find(|(p, _)| p.name == pod.name) {
            Some((_, ms)) => ms.push(m),
            None => waiting.push((pod, vec![m])),
        }
    }
    for (pod, messages) in &waiting {
        out.push(
            diagnose(facts, Reason::UnboundImmediateClaim, Some(pod), messages)
                .with_confidence(Confidence::Medium),
        );
    }
    out
}

/// The scheduler's PreFilter refusal for a pod whose claim is unbound and binds immediately.
pub(super) const UNBOUND_IMMEDIATE: &str = "unbound immediate persistentvolumeclaims";

/// A Karpenter event (`Nominated`, `FailedScheduling` from karpenter) or log line about `pod`.
fn karpenter_answered(facts: &Facts, pod: &ObjectRef) -> bool {
    facts.events.iter().any(|e| {
        e.source.eq_ignore_ascii_case("karpenter")
            && e.object.as_ref().is_some_and(|o| o.name == pod.name)
    }) || facts
        .messages_containing_any(&["pod should schedule on", "failed to schedule pod"])
        .any(|m| m.object.as_ref().is_none_or(|o| o.name == pod.name))
        || facts
            .messages
            .iter()
            .filter(|m| m.origin == crate::facts::MessageOrigin::KarpenterLog)
            .any(|m| {
                contains_ignore_ascii_case(&m.text, &pod.name)
                    || record_of(facts, m).is_some_and(|r| {
                        r.fields
                            .values()
                            .any(|v| contains_ignore_ascii_case(&v.to_string(), &pod.name))
                    })
            })
}

/// Whether the input shows `pod` on a node or past Pending.
fn placed(facts: &Facts, pod: &ObjectRef) -> bool {
    facts
        .pods
        .iter()
        .filter(|p| p.meta.name == pod.name)
        .any(|p| {
            p.node_name
                .as_deref()
                .is_some_and(|n| !n.is_empty() && n != "<none>")
                || matches!(p.phase.as_deref(), Some("Running" | "Succeeded" | "Failed"))
        })
}

const FARGATE_SCHEDULER: &str = "fargate-scheduler";
const FARGATE_PROFILE_LABEL: &str = "eks.amazonaws.com/fargate-profile";

/// `Some(profile)` when a Fargate profile selected the pod: EKS's admission webhook labels it
/// `eks.amazonaws.com/fargate-profile=<profile>` and sets `schedulerName: fargate-scheduler`
/// (`Some("")` when only the scheduler name shows).
fn fargate_profile(pod: &Pod) -> Option<String> {
    pod.meta
        .label(FARGATE_PROFILE_LABEL)
        .map(str::to_string)
        .or_else(|| (pod.scheduler_name.as_deref() == Some(FARGATE_SCHEDULER)).then(String::new))
}

/// Why Karpenter ignores this pod, judging by its spec alone: every required nodeSelectorTerm
/// excludes Karpenter nodes (`karpenter.sh/nodepool DoesNotExist`, or the v1alpha5
/// `karpenter.sh/provisioner-name`), or a term uses matchFields.
pub(super) fn ignored_by_spec(pod: &Pod) -> Option<Reason> {
    // Before any validation: the provisioner skips pods a DaemonSet owns (they carry a
    // matchFields affinity too, but that is not why).
    if daemonset_of(pod).is_some() {
        return Some(Reason::DaemonSet);
    }
    if pod.node_affinity_match_fields {
        return Some(Reason::MatchFields);
    }
    let opted_out = !pod.node_affinity.is_empty()
        && pod.node_affinity.iter().all(|term| {
            term.iter().any(|r| {
                matches!(
                    r.key.as_str(),
                    "karpenter.sh/nodepool" | "karpenter.sh/provisioner-name"
                ) && r.operator == "DoesNotExist"
            })
        });
    opted_out.then_some(Reason::OptedOut)
}

/// The DaemonSet that owns the pod (`Controlled By: DaemonSet/<name>`, an ownerReference).
fn daemonset_of(pod: &Pod) -> Option<&ObjectRef> {
    pod.meta
        .owners
        .iter()
        .find(|o| o.kind.eq_ignore_ascii_case("DaemonSet"))
}

fn fact_pod<'a>(facts: &'a Facts, pod: Option<&ObjectRef>) -> Option<&'a Pod> {
    let p = pod?;
    facts.pods.iter().find(|fp| {
        fp.meta.name == p.name && (p.namespace.is_none() || fp.meta.namespace == p.namespace)
    })
}

/// Whether the pod mounts claim `name`: its volumes say so, or, when the input lists the pod
/// without its volumes (`kubectl get pods,pvc`), the claim is named the way a StatefulSet's
/// volumeClaimTemplates name them, `<template>-<pod>` (`data-kafka-2` for `kafka-2`).
fn mounts(pod: &Pod, name: &str, namespace: Option<&str>) -> bool {
    let same_ns = namespace.is_none()
        || pod.meta.namespace.is_none()
        || pod.meta.namespace.as_deref() == namespace;
    if !same_ns {
        return false;
    }
    if !pod.pvc_names.is_empty() {
        return pod.pvc_names.iter().any(|c| c == name);
    }
    name.strip_suffix(pod.meta.name.as_str())
        .is_some_and(|template| template.len() > 1 && template.ends_with('-'))
}

fn claims_of<'a>(
    facts: &'a Facts,
    pod: &'a Pod,
) -> impl Iterator<Item = &'a PersistentVolumeClaim> + 'a {
    facts
        .pvcs
        .iter()
        .filter(move |c| mounts(pod, &c.meta.name, c.meta.namespace.as_deref()))
}

/// A claim the pod mounts whose object says it is being deleted (`deletionTimestamp`).
fn deleting_claim_of<'a>(facts: &'a Facts, pod: &'a Pod) -> Option<&'a PersistentVolumeClaim> {
    claims_of(facts, pod).find(|c| c.is_terminating())
}

/// A claim the pod mounts that is unbound (no volume, phase Pending) and names no storage
/// class: Karpenter's `unbound pvc must define a storage class`.
fn classless_claim_of<'a>(facts: &'a Facts, pod: &'a Pod) -> Option<&'a PersistentVolumeClaim> {
    claims_of(facts, pod).find(|c| {
        !c.is_terminating()
            && c.volume_name.is_none()
            && c.phase.as_deref() == Some("Pending")
            && c.storage_class.as_deref().is_none_or(str::is_empty)
    })
}

/// The claim being deleted, by the best source: the scheduler's text, a structured
/// `PersistentVolumeClaim` field of the log record, the claim objects (one with a
/// `deletionTimestamp` that the pod mounts), or the pod's only claim.
fn deleting_claim_name(
    facts: &Facts,
    pod: Option<&ObjectRef>,
    messages: &[&Message],
) -> Option<String> {
    if let Some(name) = messages
        .iter()
        .find_map(|m| pvc_being_deleted(&m.text).flatten())
    {
        return Some(name);
    }
    let from_record = messages.iter().find_map(|m| {
        let record = record_of(facts, m)?;
        record
            .field_name("PersistentVolumeClaim")
            .or_else(|| record.field_name("persistentvolumeclaim"))
            .or_else(|| record.field_name("pvc"))
    });
    if let Some(name) = from_record {
        // `ns/name`: the pod's namespace is said elsewhere.
        return Some(name.rsplit('/').next().unwrap_or(&name).to_string());
    }
    if let Some(fp) = fact_pod(facts, pod) {
        if let Some(c) = deleting_claim_of(facts, fp) {
            return Some(c.meta.name.clone());
        }
        if let [only] = fp.pvc_names.as_slice() {
            return Some(only.clone());
        }
        return None;
    }
    let mut deleting = facts.pvcs.iter().filter(|c| c.is_terminating());
    match (deleting.next(), deleting.next()) {
        (Some(only), None) => Some(only.meta.name.clone()),
        _ => None,
    }
}

fn diagnose(
    facts: &Facts,
    reason: Reason,
    pod: Option<&ObjectRef>,
    messages: &[&Message],
) -> Diagnosis {
    let who = match pod {
        Some(p) => format!("Pod {}", p.qualified_name()),
        None => "The pod".to_string(),
    };
    let ns = pod
        .and_then(|p| p.namespace.clone())
        .unwrap_or_else(|| "<namespace>".to_string());
    let text = messages.first().map(|m| m.text.as_str()).unwrap_or("");
    let karpenter_ns = facts.karpenter_namespace.clone();
    let (summary, steps) = match reason {
        Reason::OptedOut => {
            let own = pod.is_some_and(|p| {
                p.name.starts_with("karpenter")
                    || (karpenter_ns.is_some() && p.namespace == karpenter_ns)
            });
            let target_ns = karpenter_ns.clone().unwrap_or_else(|| ns.clone());
            // Before v0.32 the opt-out names the v1alpha5 label.
            let v1alpha5 = messages
                .iter()
                .any(|m| m.text.contains("karpenter.sh/provisioner-name"))
                || fact_pod(facts, pod).is_some_and(|fp| {
                    fp.node_affinity
                        .iter()
                        .flatten()
                        .any(|r| r.key == "karpenter.sh/provisioner-name")
                });
            let term = if v1alpha5 {
                "karpenter.sh/provisioner-name DoesNotExist"
            } else {
                "karpenter.sh/nodepool DoesNotExist"
            };
            let mut s = format!("{who} requires `{term}`: Karpenter will never launch a node for it.");
            if own {
                s.push_str(" It is one of Karpenter's own pods: they must run on managed-node-group or Fargate capacity, and stay Pending when there is none.");
            } else {
                s.push_str(" If it is not meant for non-Karpenter capacity, remove that requirement.");
            }
            (
                s,
                vec![
                    Remediation::command(
                        format!("Give it capacity Karpenter does not manage, e.g. a Fargate profile for namespace {target_ns} (or a small managed node group):"),
                        format!("eksctl create fargateprofile --cluster {} --name karpenter --namespace {target_ns}", cluster_name_or_placeholder(facts)),
                    ),
                    Remediation::text(format!(
                        "For a workload that should run on Karpenter nodes: remove the `{term}` term from its node affinity.",
                    )),
                ],
            )
        }
        Reason::Fargate => {
            let spec_says = fact_pod(facts, pod).and_then(fargate_profile);
            let profile = spec_says.clone().filter(|p| !p.is_empty());
            let by = match (&profile, &spec_says) {
                (Some(p), _) => format!("Fargate profile {p} selects it (label {FARGATE_PROFILE_LABEL}={p})"),
                (None, Some(_)) => "a Fargate profile selects it (schedulerName fargate-scheduler)".to_string(),
                // Only fargate-scheduler's event shows it.
                (None, None) => "a Fargate profile selects it (fargate-scheduler, not the default scheduler, reports on it)".to_string(),
            };
            let said = messages
                .iter()
                .find(|m| {
                    m.component
                        .as_deref()
                        .is_some_and(|c| c.eq_ignore_ascii_case(FARGATE_SCHEDULER))
                })
                .map(|m| format!(" fargate-scheduler reports: {}", m.text.trim()))
                .unwrap_or_default();
            let cluster = cluster_name_or_placeholder(facts);
            let name = profile.clone().unwrap_or_else(|| "<profile>".to_string());
            (
                format!("{who} runs on Fargate: {by}, so fargate-scheduler places it on Fargate capacity and Karpenter's NodePools never serve it; no NodePool change helps.{said}"),
                vec![
                    Remediation::command(
                        "If it belongs on Fargate, fix what fargate-scheduler reports (Fargate refuses privileged containers, DaemonSets, hostNetwork and hostPort, GPUs, and pods above its largest size); see the profile's selectors and subnets:",
                        format!("aws eks describe-fargate-profile --cluster-name {cluster} --fargate-profile-name {name} --query 'fargateProfile.[status,selectors,subnets]'"),
                    ),
                    Remediation::text(format!(
                        "If it belongs on Karpenter nodes: Fargate profiles cannot be edited, so create one whose selectors no longer match namespace {ns} (or this pod's labels), delete profile {name}, then delete the pod so that its controller recreates it for the default scheduler."
                    )),
                ],
            )
        }
        Reason::DaemonSet => {
            let ds = fact_pod(facts, pod)
                .and_then(daemonset_of)
                .map(|o| o.name.clone())
                .unwrap_or_else(|| "<daemonset>".to_string());
            let name = pod.map(|p| p.name.as_str()).unwrap_or("<pod>");
            (
                format!("{who} belongs to DaemonSet {ds}: Karpenter never provisions for DaemonSet pods, it only counts them as overhead on the nodes it launches. The DaemonSet controller pins each of its pods to one existing node (a matchFields node affinity), so a new node cannot help: the node this pod is pinned to lacks room for it (the scheduler's message says what is short)."),
                vec![
                    Remediation::command(
                        "See the node the pod is pinned to (its matchFields affinity) and what that node has left:",
                        format!("NODE=$(kubectl get pod {name} -n {ns} -o jsonpath='{{.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]}}'); kubectl describe node \"$NODE\" | sed -n '/Allocated resources/,/Events/p'"),
                    ),
                    Remediation::command(
                        format!("Unless it has one already, give DaemonSet {ds} a priority that preempts ordinary pods on the node (node agents usually run as system-node-critical):"),
                        format!("kubectl patch daemonset {ds} -n {ns} --type merge -p '{{\"spec\":{{\"template\":{{\"spec\":{{\"priorityClassName\":\"system-node-critical\"}}}}}}}}'"),
                    ),
                    Remediation::text(format!(
                        "Or lower DaemonSet {ds}'s requests, or move work off that node (nodes Karpenter launches from now on reserve room for the DaemonSet)."
                    )),
                ],
            )
        }
        Reason::MatchFields => (
            format!("{who} uses a nodeSelectorTerm with matchFields, which Karpenter cannot evaluate for a node that does not exist yet: it does not provision for the pod."),
            vec![Remediation::yaml(
                "Replace matchFields (usually metadata.name) by matchExpressions on the hostname label:",
                "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n        - matchExpressions:\n            - key: kubernetes.io/hostname\n              operator: In\n              values: [\"<node-name>\"]\n",
            )],
        ),
        Reason::NoStorageClass => {
            let claim = messages
                .iter()
                .find_map(|m| unbound_pvc_without_class(&m.text).flatten())
                .or_else(|| {
                    messages.iter().find_map(|m| {
                        let q = record_of(facts, m)?.field_name("PersistentVolumeClaim")?;
                        Some(q.rsplit('/').next().unwrap_or(&q).to_string())
                    })
                })
                .or_else(|| {
                    classless_claim_of(facts, fact_pod(facts, pod)?).map(|c| c.meta.name.clone())
                });
            let (what, which) = match &claim {
                Some(c) => (format!("PersistentVolumeClaim {c}, which is unbound and has no storage class"), format!("PersistentVolumeClaim {c}")),
                None => ("an unbound PVC without a storage class".to_string(), "the PersistentVolumeClaim".to_string()),
            };
            // Only the StorageClasses the input lists can say whether there is a default.
            let classes = &facts.storage_classes;
            let default = classes.iter().find(|c| c.is_default);
            let names: Vec<&str> = classes.iter().map(|c| c.meta.name.as_str()).collect();
            let candidate = classes
                .iter()
                .find(|c| c.provisioner.as_deref() == Some("ebs.csi.aws.com"))
                .or(classes.first())
                .map_or("<gp3>", |c| c.meta.name.as_str());
            let patch = format!("kubectl patch storageclass {candidate} -p '{{\"metadata\":{{\"annotations\":{{\"storageclass.kubernetes.io/is-default-class\":\"true\"}}}}}}'");
            let (note, steps) = match default {
                Some(d) => (
                    format!(" StorageClass {} is the default now, so the claim was created before it was, or with an explicit `storageClassName: \"\"`.", d.meta.name),
                    vec![Remediation::text(format!("Set `storageClassName: {}` on {which} (recreate the claim if it cannot be changed).", d.meta.name))],
                ),
                None if !classes.is_empty() => (
                    format!(" None of the StorageClasses in the input ({}) is marked default, so a claim without a class gets none.", names.join(", ")),
                    vec![
                        Remediation::text(format!("Set `storageClassName` on {which} (e.g. an EBS CSI class; recreate the claim if it cannot be changed), or mark a default StorageClass:")),
                        Remediation::command("Mark a StorageClass as the default:", patch),
                    ],
                ),
                None => (
                    String::new(),
                    vec![
                        Remediation::command("Check whether the cluster has a default StorageClass (listed with `(default)`): without one, a claim created without a class keeps none:", "kubectl get storageclass"),
                        Remediation::text(format!("Set `storageClassName` on {which} (e.g. an EBS CSI class; recreate the claim if it cannot be changed).")),
                        Remediation::command("Or, if no class is the default, mark one as the default:", patch),
                    ],
                ),
            };
            (
                format!("{who} mounts {what}: Karpenter cannot tell the volume's zone and ignores the pod.{note}"),
                steps,
            )
        }
        Reason::PvcDeleting => pvc_deleting_steps(facts, &who, pod, &ns, messages),
        Reason::StorageClassNotFound => {
            let sc = tail_after(text, "storageclass.storage.k8s.io \"")
                .or_else(|| tail_after(text, "storageclasses.storage.k8s.io \""))
                .and_then(|t| t.split('"').next().map(str::to_string))
                .filter(|s| !s.is_empty());
            let sc_name = sc.clone().unwrap_or_else(|| "<storage-class>".to_string());
            // The provisioner's event is on the claim itself (`persistentvolumeclaim/<name>`).
            let claim = messages
                .iter()
                .filter_map(|m| m.object.as_ref())
                .find(|o| o.kind.eq_ignore_ascii_case("PersistentVolumeClaim"))
                .map_or_else(|| "a PVC".to_string(), |c| format!("PVC {}", c.qualified_name()));
            (
                format!("{who} mounts {claim} whose StorageClass \"{sc_name}\" does not exist: Karpenter ignores the pod."),
                vec![
                    Remediation::command("Create the StorageClass, or point the claim at an existing one (storageClassName cannot change: recreate the claim, and for a StatefulSet recreate it too, its volumeClaimTemplates being immutable):", "kubectl get storageclass"),
                    Remediation::yaml(
                        format!("An EBS CSI StorageClass named {sc_name}:"),
                        format!("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: {sc_name}\nprovisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\nparameters:\n  type: gp3\n"),
                    ),
                ],
            )
        }
        Reason::PvcInvalid => pvc_invalid_steps(facts, &who, &ns, messages),
        Reason::UnboundImmediateClaim => {
            // The pod's volumes, else the listed claims named for it (`<template>-<pod>`).
            let claims: Vec<String> = fact_pod(facts, pod)
                .map(|p| {
                    if p.pvc_names.is_empty() {
                        claims_of(facts, p).map(|c| c.meta.name.clone()).collect()
                    } else {
                        p.pvc_names.clone()
                    }
                })
                .unwrap_or_default();
            let claim = match claims.as_slice() {
                [one] => one.clone(),
                _ => "<claim>".to_string(),
            };
            (
                format!("{who} waits for its PersistentVolumeClaim{} to bind: the scheduler reports `pod has unbound immediate PersistentVolumeClaims` (a claim whose StorageClass binds immediately, or that has no class, and has no volume yet). Karpenter ignores such a pod until the claim is bound (it says why only at debug level): the volume's zone decides the node's, and no node helps before the volume exists.", match claims.as_slice() {
                    [] => String::new(),
                    [one] => format!(" {one}"),
                    many => format!("s {}", many.join(", ")),
                }),
                vec![
                    Remediation::command(
                        "See the claims and why the volume is not created (the provisioner's events on the claim: CSI driver missing, its IAM permissions, an unknown StorageClass):",
                        format!("kubectl get pvc -n {ns} -o wide; kubectl describe pvc {claim} -n {ns}"),
                    ),
                    Remediation::text("Prefer a StorageClass with `volumeBindingMode: WaitForFirstConsumer` (the EBS CSI driver's usual setting): the volume is then created in the zone of the node the pod lands on, and Karpenter provisions for the pod right away."),
                ],
            )
        }
    };
    Diagnosis::new(&META, summary)
        .with_object(pod)
        .with_messages(messages.iter().copied())
        .with_remediation(steps)
}

/// The summary and steps for a claim that failed Karpenter's PVC validation, per the reason
/// the message gives (v1.x names the claim, class, volume in structured fields).
fn pvc_invalid_steps(
    facts: &Facts,
    who: &str,
    ns: &str,
    messages: &[&Message],
) -> (String, Vec<Remediation>) {
    let field = |key: &str| {
        messages
            .iter()
            .filter_map(|m| record_of(facts, m))
            .find_map(|r| r.field_name(key))
    };
    // `<namespace>/<name>`: the namespace is the pod's.
    let claim =
        field("PersistentVolumeClaim").map(|c| c.rsplit('/').next().unwrap_or(&c).to_string());
    let class = field("StorageClass").filter(|c| !c.is_empty());
    let volume = field("PersistentVolume").filter(|v| !v.is_empty());
    let text = messages.first().map(|m| m.text.as_str()).unwrap_or("");
    let has = |s: &str| contains_ignore_ascii_case(text, s);
    let claim_label = claim
        .as_deref()
        .map(|c| format!("PersistentVolumeClaim {c}"))
        .unwrap_or_else(|| "its PersistentVolumeClaim".to_string());
    let claim_name = claim.as_deref().unwrap_or("<claim>");
    let describe_claim = Remediation::command(
        "See the claim and its events:",
        format!("kubectl describe pvc {claim_name} -n {ns}"),
    );
    let class_label = class
        .as_deref()
        .map(|c| format!("StorageClass {c}"))
        .unwrap_or_else(|| "its StorageClass".to_string());
    if has("immediate volume binding mode must be bound") {
        return (
            format!("{who} mounts {claim_label}, which is not bound yet while {class_label} binds volumes immediately (`volumeBindingMode: Immediate`): Karpenter waits for the volume, whose zone decides the node's, and ignores the pod until then."),
            vec![
                Remediation::command(
                    "See why the claim does not bind (the CSI provisioner's events on it):",
                    format!("kubectl describe pvc {claim_name} -n {ns}"),
                ),
                Remediation::text(format!(
                    "Or give the claim a StorageClass with `volumeBindingMode: WaitForFirstConsumer` (the mode of {} cannot be changed: create a new class and recreate the claim), so that the volume is created where the pod lands.",
                    class.as_deref().unwrap_or("a class")
                )),
            ],
        );
    }
    if has("bound to non-existent persistentvolume") {
        return (
            format!("{who} mounts {claim_label}, which is Lost: its PersistentVolume{} no longer exists, so Karpenter ignores the pod.", volume.as_deref().map(|v| format!(" {v}")).unwrap_or_default()),
            vec![
                describe_claim,
                Remediation::text("Restore the volume (from a snapshot, as a PersistentVolume of the same name), or delete and recreate the claim (for a StatefulSet, delete the claim and the Pending pod); the data on the lost volume is gone."),
            ],
        );
    }
    if has("does not contain annotation") {
        return (
            format!("{who} mounts {claim_label}, which names volume {} but lacks the `pv.kubernetes.io/bind-completed` annotation: the scheduler and Karpenter treat it as unbound, and Karpenter ignores the pod.", volume.as_deref().unwrap_or("<volume>")),
            vec![
                Remediation::command(
                    "A claim pre-bound by hand (`spec.volumeName`) waits for the PersistentVolume controller: check the volume exists, is Available or points back at the claim (`claimRef`):",
                    format!("kubectl get pv {} -o jsonpath='{{.status.phase}} {{.spec.claimRef}}{{\"\\n\"}}'", volume.as_deref().unwrap_or("<volume>")),
                ),
                describe_claim,
            ],
        );
    }
    if has("unsupported topology key") {
        let key = field("TopologyKey");
        return (
            format!("{who} mounts {claim_label}, whose {class_label} restricts `allowedTopologies` with a key{} that nodes Karpenter launches never carry: Karpenter ignores the pod.", key.as_deref().map(|k| format!(" ({k})")).unwrap_or_default()),
            vec![Remediation::text(format!(
                "Use `topology.kubernetes.io/zone` in the allowedTopologies of a new StorageClass (a class cannot be changed) and recreate claim {claim_name} with it."
            ))],
        );
    }
    if has("provisioner is not supported") {
        let provisioner = field("Provisioner");
        return (
            format!("{who} mounts {claim_label}, whose volume provisioner{} Karpenter does not support: it ignores the pod.", provisioner.as_deref().map(|p| format!(" {p}")).unwrap_or_default()),
            vec![
                describe_claim,
                Remediation::text("Move the claim to a StorageClass of a CSI driver (for EBS, `provisioner: ebs.csi.aws.com`; KW211 for the in-tree plugin)."),
            ],
        );
    }
    (
        match &claim {
            Some(c) => format!("{who} mounts PersistentVolumeClaim {c}, which failed Karpenter's validation: it ignores the pod."),
            None => format!("{who}'s PersistentVolumeClaim failed Karpenter's validation: it ignores the pod."),
        },
        vec![Remediation::command(
            "Look at the claims of the pod's namespace (storage class, phase, volume):",
            format!("kubectl get pvc -n {ns} -o wide"),
        )],
    )
}

/// The summary and steps for a pod whose claim is being deleted, with the claim's name when
/// any source gives it.
fn pvc_deleting_steps(
    facts: &Facts,
    who: &str,
    pod: Option<&ObjectRef>,
    ns: &str,
    messages: &[&Message],
) -> (String, Vec<Remediation>) {
    let claim = deleting_claim_name(facts, pod, messages);
    let object = claim.as_ref().and_then(|name| {
        facts.pvcs.iter().find(|c| {
            &c.meta.name == name
                && (pod.is_none()
                    || c.meta.namespace.is_none()
                    || c.meta.namespace.as_deref() == Some(ns))
        })
    });
    let forms: Vec<Option<String>> = messages
        .iter()
        .filter_map(|m| pvc_being_deleted(&m.text))
        .collect();
    let karpenter_said = forms.iter().any(Option::is_none);
    let scheduler_said = forms.iter().any(Option::is_some);
    let refused = match (karpenter_said, scheduler_said) {
        (true, true) => "Karpenter ignores the pod and the scheduler will not place it",
        (true, false) => "Karpenter ignores the pod (and the scheduler will not place it either)",
        (false, true) => "the scheduler will not place the pod (and Karpenter v1.1+ ignores it)",
        (false, false) => "Karpenter (v1.1+) ignores the pod and the scheduler will not place it",
    };
    let mut summary = match &claim {
        Some(c) => format!("{who} mounts PersistentVolumeClaim {c}, which is being deleted: {refused} until the claim is gone and recreated."),
        None => format!("{who} mounts a PersistentVolumeClaim that is being deleted (Karpenter's message does not name it; the pod's claims are listed below): {refused} until the claim is gone and recreated."),
    };
    if let Some(c) = object {
        let since = match (&c.deletion_timestamp, &c.terminating_for) {
            (Some(ts), _) => Some(format!(" Its deletionTimestamp is {ts}")),
            (None, Some(age)) => Some(format!(" It has been Terminating for {age}")),
            (None, None) => None,
        };
        if let Some(since) = since {
            summary.push_str(&since);
            if c.finalizers.is_empty() {
                summary.push('.');
            } else {
                summary.push_str(&format!(
                    "; finalizer{} still holding it: {}.",
                    if c.finalizers.len() > 1 { "s" } else { "" },
                    c.finalizers.join(", ")
                ));
            }
        }
    }
    let mut steps = Vec::new();
    match &claim {
        Some(c) => {
            steps.push(Remediation::command(
                format!("See what holds claim {c} (deletionTimestamp, finalizers) and its volume:"),
                format!("kubectl get pvc {c} -n {ns} -o jsonpath='{{.metadata.deletionTimestamp}}{{\" \"}}{{.metadata.finalizers}}{{\" \"}}{{.spec.volumeName}}{{\"\\n\"}}'"),
            ));
            steps.push(Remediation::command(
                "`kubernetes.io/pvc-protection` keeps the claim while a running pod still mounts it: find those pods and stop them (scale the workload down, or delete the old pod):",
                format!("kubectl get pods -n {ns} -o custom-columns=POD:.metadata.name,NODE:.spec.nodeName,PHASE:.status.phase,CLAIMS:.spec.volumes[*].persistentVolumeClaim.claimName | grep -w {c}"),
            ));
        }
        None => steps.push(Remediation::command(
            "Find the terminating claim and what holds it (finalizers, another pod still using it):",
            format!("kubectl get pvc -n {ns} -o custom-columns=NAME:.metadata.name,DELETING:.metadata.deletionTimestamp,FINALIZERS:.metadata.finalizers,VOLUME:.spec.volumeName"),
        )),
    }
    let c = claim.as_deref().unwrap_or("<claim>");
    let pv = object
        .and_then(|o| o.volume_name.clone())
        .map(|v| format!("kubectl patch pv {v}"))
        .unwrap_or_else(|| format!("kubectl patch pv \"$(kubectl get pvc {c} -n {ns} -o jsonpath='{{.spec.volumeName}}')\""));
    steps.push(Remediation::command(
        "If the data matters, keep the volume before the claim goes (a `Delete` reclaim policy deletes the EBS volume with the claim):",
        format!("{pv} -p '{{\"spec\":{{\"persistentVolumeReclaimPolicy\":\"Retain\"}}}}'"),
    ));
    let others: Vec<&str> = object
        .map(|o| {
            o.finalizers
                .iter()
                .map(String::as_str)
                .filter(|f| *f != "kubernetes.io/pvc-protection")
                .collect()
        })
        .unwrap_or_default();
    let release = if others.is_empty() {
        "Only if the claim is stuck on a finalizer whose controller is gone (no pod mounts it any more), release it:".to_string()
    } else {
        format!(
            "Finalizer {} belongs to another controller: it must finish (check that it runs); only if it is gone for good and no pod mounts the claim, release it:",
            others.join(", ")
        )
    };
    steps.push(Remediation::command(
        release,
        format!("kubectl patch pvc {c} -n {ns} --type=merge -p '{{\"metadata\":{{\"finalizers\":null}}}}'"),
    ));
    let pod_name = pod
        .map(|p| p.name.clone())
        .unwrap_or_else(|| "<pod>".to_string());
    let owner = facts
        .pods
        .iter()
        .find(|p| Some(&p.meta.name) == pod.map(|p| &p.name))
        .and_then(|p| facts.controller_of(p));
    let recreate = match owner {
        Some(o) if o.kind == "StatefulSet" => format!(
            "Once the claim is gone, delete the Pending pod: StatefulSet {} recreates claim {c} from its volumeClaimTemplates, then the pod.",
            o.name
        ),
        _ => "Once the claim is gone, recreate it (re-apply its manifest; a StatefulSet recreates it from its volumeClaimTemplates when you delete the Pending pod):".to_string(),
    };
    steps.push(Remediation::command(
        recreate,
        format!("kubectl delete pod {pod_name} -n {ns}"),
    ));
    (summary, steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Requirement;
    use crate::testing::{check_only, ids};

    #[test]
    fn a_pending_daemonset_pod_is_not_karpenters_to_provision_for() {
        let pod = |owner: &str| {
            format!("Name:             fluent-bit-x7k2p\nNamespace:        logging\nPriority:         2000001000\nNode:             <none>\nStatus:           Pending\nControlled By:    {owner}\nEvents:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  2m    default-scheduler  0/12 nodes are available: 1 Insufficient cpu, 11 node(s) didn't match Pod's node affinity/selector.\n")
        };
        let report = check_only("KW209", &pod("DaemonSet/fluent-bit"));
        assert_eq!(ids(&report), ["KW209"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("belongs to DaemonSet fluent-bit"),
            "{}",
            d.summary
        );
        assert!(crate::testing::remediation_text(d)
            .contains("kubectl patch daemonset fluent-bit -n logging"));
        // The scheduler's complaint is the evidence, next to the pod.
        assert!(d
            .evidence
            .iter()
            .any(|e| e.text.contains("Insufficient cpu")));
        // KW200 does not blame Karpenter's silence: it is by design.
        assert!(ids(&check_only("KW200", &pod("DaemonSet/fluent-bit"))).is_empty());
        // A ReplicaSet's pod is no DaemonSet pod.
        assert!(ids(&check_only("KW209", &pod("ReplicaSet/web-5d9c8b7f6"))).is_empty());
        assert_eq!(
            ids(&check_only("KW200", &pod("ReplicaSet/web-5d9c8b7f6"))),
            ["KW200"]
        );
    }

    #[test]
    fn a_claim_validation_failure_is_explained_per_reason() {
        let line = |error: &str| {
            format!(
                r#"{{"level":"DEBUG","message":"ignoring pod, {error}","controller":"provisioner","Pod":{{"name":"pg-0","namespace":"db"}},"PersistentVolumeClaim":{{"name":"data-pg-0","namespace":"db"}},"PersistentVolume":{{"name":"pvc-0a1b"}},"StorageClass":{{"name":"io2"}}}}"#
            )
        };
        let summary = |error: &str| {
            let report = check_only("KW209", &line(error));
            assert_eq!(ids(&report), ["KW209"], "{error}");
            report.diagnoses[0].summary.clone()
        };
        assert!(summary(
            "failed to validate pvc, pvc with immediate volume binding mode must be bound"
        )
        .contains("StorageClass io2 binds volumes immediately"));
        assert!(
            summary("persistentvolumeclaim bound to non-existent persistentvolume").contains(
                "PersistentVolumeClaim data-pg-0, which is Lost: its PersistentVolume pvc-0a1b"
            )
        );
        assert!(
            summary("pvc is considered unbound because it does not contain annotation")
                .contains("`pv.kubernetes.io/bind-completed`")
        );
        // Another validation failure keeps the general wording, with the claim named.
        assert!(
            summary("failed to validate pvc, persistentvolume is being deleted").contains(
                "mounts PersistentVolumeClaim data-pg-0, which failed Karpenter's validation"
            )
        );
    }

    #[test]
    fn a_pod_a_fargate_profile_selected_is_fargates() {
        let pod = |label: &str, phase: &str| {
            format!("Name:             api-0\nNamespace:        web\nLabels:           app=api\n                  {label}\nStatus:           {phase}\nContainers:\n  api:\n    Image:  nginx\nQoS Class:       BestEffort\n")
        };
        let report = check_only(
            "KW209",
            &pod("eks.amazonaws.com/fargate-profile=fp-web", "Pending"),
        );
        assert_eq!(ids(&report), ["KW209"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("Fargate profile fp-web selects it"),
            "{}",
            d.summary
        );
        assert!(crate::testing::remediation_text(d).contains("--fargate-profile-name fp-web"));
        // Running on Fargate, or Pending without the label: not this.
        let running = pod("eks.amazonaws.com/fargate-profile=fp-web", "Running");
        assert!(ids(&check_only("KW209", &running)).is_empty());
        assert!(ids(&check_only("KW209", &pod("tier=web", "Pending"))).is_empty());
    }

    #[test]
    fn every_cause() {
        for (text, word) in [
            ("Failed to schedule pod, configured to not run on a Karpenter provisioned node (requirement=karpenter.sh/nodepool DoesNotExist)", "DoesNotExist"),
            ("Failed to schedule pod, configured to not run on a Karpenter provisioned node via the karpenter.sh/nodepool DoesNotExist requirement", "DoesNotExist"),
            ("Warning  FailedScheduling  12s  karpenter  Failed to schedule pod, node selector term with matchFields is not supported", "matchFields"),
            (r#"{"level":"DEBUG","message":"ignoring pod","Pod":{"name":"db-0","namespace":"prod"},"error":"unbound pvc must define a storage class"}"#, "storage class"),
            ("Failed to schedule pod, persistentvolumeclaim is being deleted", "being deleted"),
            (r#"{"level":"DEBUG","message":"ignoring pod","Pod":{"name":"db-0","namespace":"prod"},"error":"failed to validate pvc, x"}"#, "validation"),
            (r#"ignoring pod, StorageClass.storage.k8s.io "fast-ssd" not found"#, "\"fast-ssd\""),
        ] {
            let report = check_only("KW209", text);
            assert_eq!(ids(&report), ["KW209"], "{text}");
            assert!(report.diagnoses[0].summary.contains(word), "{}", report.diagnoses[0].summary);
        }
    }

    #[test]
    fn karpenter_own_pod_is_named() {
        let report = check_only(
            "KW209",
            r#"{"level":"DEBUG","message":"ignoring pod","Pod":{"name":"karpenter-6b9d7c8f45-m4xkw","namespace":"kube-system"},"error":"configured to not run on a Karpenter provisioned node (requirement=karpenter.sh/nodepool DoesNotExist)"}"#,
        );
        assert!(report.diagnoses[0].summary.contains("Karpenter's own pods"));
    }

    /// Before v0.32 the opt-out label is `karpenter.sh/provisioner-name`: quote that one.
    #[test]
    fn a_v1alpha5_opt_out_names_its_own_label() {
        let report = check_only(
            "KW209",
            "2023-08-14T08:01:02.331Z\tDEBUG\tcontroller.provisioner\tignoring pod, configured to not run on a Karpenter provisioned node via karpenter.sh/provisioner-name DoesNotExist requirement\t{\"pod\": \"karpenter/karpenter-6b8d9c-x2v7p\"}",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("`karpenter.sh/provisioner-name DoesNotExist`"),
            "{}",
            d.summary
        );
        assert!(
            !d.summary.contains("karpenter.sh/nodepool"),
            "{}",
            d.summary
        );
    }

    fn pending_pod(name: &str, affinity: Vec<Vec<Requirement>>, match_fields: bool) -> Pod {
        let mut pod = Pod::default();
        pod.meta.name = name.into();
        pod.meta.namespace = Some("kube-system".into());
        pod.phase = Some("Pending".into());
        pod.node_affinity = affinity;
        pod.node_affinity_match_fields = match_fields;
        pod
    }

    fn req(key: &str, op: &str) -> Requirement {
        Requirement {
            key: key.into(),
            operator: op.into(),
            values: Vec::new(),
            min_values: None,
        }
    }

    #[test]
    fn the_pod_spec_says_it_without_a_debug_log() {
        let mut facts = Facts::default();
        facts.pods.push(pending_pod(
            "karpenter-6b9d7c8f45-m4xkw",
            vec![vec![req("karpenter.sh/nodepool", "DoesNotExist")]],
            false,
        ));
        facts.pods.push(pending_pod("fields", Vec::new(), true));
        // One term of two allows Karpenter nodes: the pod is not ignored.
        facts.pods.push(pending_pod(
            "either",
            vec![
                vec![req("karpenter.sh/nodepool", "DoesNotExist")],
                vec![req("kubernetes.io/os", "Exists")],
            ],
            false,
        ));
        let diagnoses = check(&facts);
        assert_eq!(diagnoses.len(), 2, "{diagnoses:?}");
        assert!(diagnoses[0].summary.contains("Karpenter's own pods"));
        assert!(diagnoses[1].summary.contains("matchFields"));
        assert!(diagnoses.iter().all(|d| d.confidence == Confidence::Medium));
    }

    #[test]
    fn a_claim_being_deleted_is_named_and_fixed() {
        // The scheduler names the claim; Karpenter (v1.1+) does not.
        let report = check_only(
            "KW209",
            "Events:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  2m    default-scheduler  0/3 nodes are available: persistentvolumeclaim \"data-db-0\" is being deleted. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.\n  Warning  FailedScheduling  1m    karpenter          Failed to schedule pod, persistentvolumeclaim is being deleted\n",
        );
        assert_eq!(ids(&report), ["KW209"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("PersistentVolumeClaim data-db-0, which is being deleted"),
            "{}",
            d.summary
        );
        assert!(
            d.remediation.iter().any(|r| r
                .command
                .as_deref()
                .is_some_and(|c| c.contains("kubectl get pvc data-db-0"))),
            "{:?}",
            d.remediation
        );
        assert!(d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("finalizers\":null"))));
        // A structured field of a v1.1+ debug line.
        let report = check_only(
            "KW209",
            r#"{"level":"DEBUG","message":"ignoring pod, persistentvolumeclaim is being deleted","Pod":{"name":"db-0","namespace":"prod"},"PersistentVolumeClaim":{"name":"data-db-0","namespace":"prod"}}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("Pod prod/db-0 mounts PersistentVolumeClaim data-db-0"),
            "{}",
            d.summary
        );
        assert!(d
            .remediation
            .iter()
            .any(|r| r.command.as_deref().is_some_and(|c| c.contains("-n prod"))));
    }

    #[test]
    fn a_claim_being_deleted_read_from_the_objects() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: db-0\n  namespace: prod\n  ownerReferences:\n  - apiVersion: apps/v1\n    kind: StatefulSet\n    name: db\n    controller: true\nspec:\n  volumes:\n  - name: data\n    persistentVolumeClaim:\n      claimName: data-db-0\nstatus:\n  phase: Pending\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data-db-0\n  namespace: prod\n  deletionTimestamp: \"2026-11-30T09:12:44Z\"\n  finalizers:\n  - kubernetes.io/pvc-protection\nspec:\n  storageClassName: gp3\n  volumeName: pvc-0a1b2c3d\nstatus:\n  phase: Bound\n";
        let report = check_only("KW209", text);
        assert_eq!(ids(&report), ["KW209"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.confidence, Confidence::Medium);
        assert!(d.summary.contains("data-db-0"), "{}", d.summary);
        assert!(
            d.summary.contains("kubernetes.io/pvc-protection"),
            "{}",
            d.summary
        );
        assert!(d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.starts_with("kubectl patch pv pvc-0a1b2c3d"))));
        assert!(d
            .remediation
            .iter()
            .any(|r| r.text.contains("StatefulSet db")));
        // The same claim, its pod already running: nothing is ignored.
        let running = text.replace(
            "status:\n  phase: Pending",
            "  nodeName: ip-10-0-1-2\nstatus:\n  phase: Running",
        );
        assert!(ids(&check_only("KW209", &running)).is_empty());
    }

    #[test]
    fn pre_v1_1_unbound_claim_is_named() {
        let report = check_only(
            "KW209",
            r#"2024-05-02T10:11:12.000Z	DEBUG	controller.provisioner	ignoring pod, unbound pvc data-db-0 must define a storage class	{"commit": "a70b39e", "pod": "prod/db-0"}"#,
        );
        assert_eq!(ids(&report), ["KW209"]);
        assert!(
            report.diagnoses[0]
                .summary
                .contains("PersistentVolumeClaim data-db-0"),
            "{}",
            report.diagnoses[0].summary
        );
    }

    #[test]
    fn no_default_storage_class_is_said_only_from_the_listed_classes() {
        let line = r#"{"level":"DEBUG","message":"ignoring pod","controller":"provisioner","Pod":{"name":"minio-0","namespace":"storage"},"error":"unbound pvc must define a storage class"}"#;
        let text_of = |report: &crate::Report| {
            let d = &report.diagnoses[0];
            let steps: Vec<String> = d
                .remediation
                .iter()
                .map(|r| format!("{} {}", r.text, r.command.as_deref().unwrap_or_default()))
                .collect();
            (d.summary.clone(), steps.join("\n"))
        };
        // Nothing about the StorageClasses: ask, with the command.
        let (summary, steps) = text_of(&check_only("KW209", line));
        assert!(!summary.contains("no default"), "{summary}");
        assert!(steps.contains("kubectl get storageclass"), "{steps}");
        // A listing without `(default)`: say so, naming them.
        let listed = format!("$ kubectl get storageclass\nNAME   PROVISIONER             RECLAIMPOLICY   VOLUMEBINDINGMODE      ALLOWVOLUMEEXPANSION   AGE\ngp2    kubernetes.io/aws-ebs   Delete          WaitForFirstConsumer   false                  2y\ngp3    ebs.csi.aws.com         Delete          WaitForFirstConsumer   true                   1y\n{line}\n");
        let (summary, steps) = text_of(&check_only("KW209", &listed));
        assert!(
            summary
                .contains("None of the StorageClasses in the input (gp2, gp3) is marked default"),
            "{summary}"
        );
        assert!(steps.contains("kubectl patch storageclass gp3 "), "{steps}");
        // A default exists: the claim predates it or opted out.
        let with_default = listed.replace("gp3    ebs", "gp3 (default)   ebs");
        let (summary, steps) = text_of(&check_only("KW209", &with_default));
        assert!(
            summary.contains("StorageClass gp3 is the default now"),
            "{summary}"
        );
        assert!(!summary.contains("None of"), "{summary}");
        assert!(steps.contains("storageClassName: gp3"), "{steps}");
    }

    #[test]
    fn near_misses() {
        for text in [
            "failed tracking CSI volume limits for volume with unbound PVC, no storage class specified",
            "Normal  WaitForFirstConsumer  3s  persistentvolume-controller  waiting for first consumer to be created before binding",
            "Warning  FailedScheduling  5s  default-scheduler  0/3 nodes are available: persistentvolumeclaim \"data-db-0\" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
            "namespace \"prod\" is being deleted",
            "StorageClass .spec.provisioner uses an in-tree storage plugin which is unsupported by Karpenter",
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
        ] {
            assert!(ids(&check_only("KW209", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_claim_event_and_karpenter_line_make_one_diagnosis() {
        let text = "$ kubectl get events -n shop\nLAST SEEN   TYPE      REASON               OBJECT                              MESSAGE\n2m          Warning   ProvisioningFailed   persistentvolumeclaim/data-cart-0   storageclass.storage.k8s.io \"io2-fast\" not found\n$ kubectl get pods -n shop\nNAME     READY   STATUS    RESTARTS   AGE\ncart-0   0/1     Pending   0          7m\nweb-1    0/1     Pending   0          7m\n{\"level\":\"DEBUG\",\"message\":\"ignoring pod, StorageClass.storage.k8s.io \\\"io2-fast\\\" not found\",\"Pod\":{\"name\":\"cart-0\",\"namespace\":\"shop\"}}\n";
        let report = check_only("KW209", text);
        assert_eq!(ids(&report), ["KW209"]);
        assert!(report.diagnoses[0].summary.starts_with("Pod shop/cart-0"));
        // The claim's event alone still finds the pod that mounts it, among two Pending pods.
        let event_only = text.lines().take(7).collect::<Vec<_>>().join("\n");
        let report = check_only("KW209", &event_only);
        assert_eq!(ids(&report), ["KW209"]);
        assert!(
            report.diagnoses[0].summary.starts_with("Pod shop/cart-0"),
            "{}",
            report.diagnoses[0].summary
        );
    }

    #[test]
    fn claims_by_statefulset_name() {
        let pod = Pod {
            meta: crate::facts::Meta {
                name: "kafka-2".into(),
                namespace: Some("streaming".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(mounts(&pod, "data-kafka-2", Some("streaming")));
        assert!(!mounts(&pod, "data-kafka-20", Some("streaming")));
        assert!(!mounts(&pod, "datakafka-2", Some("streaming")));
        assert!(!mounts(&pod, "kafka-2", Some("streaming")));
        assert!(!mounts(&pod, "data-kafka-2", Some("other")));
    }
}
