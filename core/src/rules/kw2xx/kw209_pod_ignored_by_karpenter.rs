//! KW209 pod-ignored-by-karpenter.

use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef, Pod};
use crate::rules::kw2xx::scheduling::{pod_ref, record_of, tail_after};
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
`unbound pvc must define a storage class`, `persistentvolumeclaim is being deleted`, `failed to
validate pvc`, and `ignoring pod, StorageClass.storage.k8s.io "<sc>" not found`. Karpenter
logs `ignoring pod` only at debug level, so a Pending pod whose spec requires
`karpenter.sh/nodepool DoesNotExist` in every nodeSelectorTerm, or uses `matchFields`, is
reported from its spec alone (medium confidence).

## Why it happens
Karpenter's own pods carry `karpenter.sh/nodepool DoesNotExist` so that Karpenter never runs on
nodes it manages: they need managed-node-group or Fargate capacity, and stay Pending when there
is none. `matchFields` (usually `metadata.name`) cannot be evaluated for a node that does not
exist yet. A PVC without a storage class (and no default StorageClass), a PVC being deleted, or
a StorageClass that does not exist leave Karpenter unable to compute the volume's zone.

## How to fix
Per cause: give Karpenter's pods non-Karpenter capacity (a managed node group or a Fargate
profile), or drop the `DoesNotExist` requirement from a workload that should use Karpenter;
replace `matchFields` by `matchExpressions` on `kubernetes.io/hostname`; set
`storageClassName` on the PVC or mark a default StorageClass; create the missing StorageClass;
wait for (or finish) the PVC deletion.
"#,
};

const SIGNALS: &[&str] = &[
    "configured to not run on a karpenter provisioned node",
    "node selector term with matchfields is not supported",
    "unbound pvc must define a storage class",
    "persistentvolumeclaim is being deleted",
    "failed to validate pvc",
    "storageclass.storage.k8s.io",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reason {
    OptedOut,
    MatchFields,
    NoStorageClass,
    PvcDeleting,
    StorageClassNotFound,
    PvcInvalid,
}

fn reason_of(text: &str) -> Option<Reason> {
    let has = |s: &str| contains_ignore_ascii_case(text, s);
    if has("configured to not run on a karpenter provisioned node") {
        Some(Reason::OptedOut)
    } else if has("node selector term with matchfields is not supported") {
        Some(Reason::MatchFields)
    } else if has("unbound pvc must define a storage class") {
        Some(Reason::NoStorageClass)
    } else if has("persistentvolumeclaim is being deleted") {
        Some(Reason::PvcDeleting)
    } else if has("storageclass.storage.k8s.io") && has("not found") {
        Some(Reason::StorageClassNotFound)
    } else if has("failed to validate pvc") {
        Some(Reason::PvcInvalid)
    } else {
        None
    }
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut groups: Vec<(Reason, Option<ObjectRef>, Vec<&Message>)> = Vec::new();
    for m in &facts.messages {
        let Some(reason) = reason_of(&m.text) else {
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
    let mut out: Vec<Diagnosis> = groups
        .iter()
        .map(|(reason, pod, messages)| diagnose(facts, *reason, pod.as_ref(), messages))
        .collect();
    // Karpenter says why it ignores a pod only at debug level (`ignoring pod`); the pod's own
    // spec says it too.
    for pod in facts.pending_pods().filter(|p| p.node_name.is_none()) {
        let Some(reason) = ignored_by_spec(pod) else {
            continue;
        };
        let pod_ref = pod.object_ref();
        let said = groups
            .iter()
            .any(|(r, p, _)| *r == reason && p.as_ref().is_none_or(|p| p.name == pod_ref.name));
        if said {
            continue;
        }
        let mut d = diagnose(facts, reason, Some(&pod_ref), &[]);
        d.summary.push_str(
            " (Read from the pod's spec: Karpenter logs why it ignores a pod only at debug level.)",
        );
        out.push(
            d.with_confidence(Confidence::Medium)
                .with_evidence(pod.meta.evidence.clone()),
        );
    }
    out
}

/// Why Karpenter ignores this pod, judging by its spec alone: every required nodeSelectorTerm
/// excludes Karpenter nodes (`karpenter.sh/nodepool DoesNotExist`, or the v1alpha5
/// `karpenter.sh/provisioner-name`), or a term uses matchFields.
pub(super) fn ignored_by_spec(pod: &Pod) -> Option<Reason> {
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
            let mut s = format!("{who} requires `karpenter.sh/nodepool DoesNotExist`: Karpenter will never launch a node for it.");
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
                        format!("eksctl create fargateprofile --cluster <cluster> --name karpenter --namespace {target_ns}"),
                    ),
                    Remediation::text(
                        "For a workload that should run on Karpenter nodes: remove the `karpenter.sh/nodepool DoesNotExist` term from its node affinity.",
                    ),
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
        Reason::NoStorageClass => (
            format!("{who} mounts an unbound PVC without a storage class (and the cluster has no default StorageClass): Karpenter cannot tell the volume's zone and ignores the pod."),
            vec![
                Remediation::text("Set `storageClassName` on the PersistentVolumeClaim (e.g. an EBS CSI class), or mark a default StorageClass:"),
                Remediation::command(
                    "Mark a StorageClass as the default:",
                    "kubectl patch storageclass <gp3> -p '{\"metadata\":{\"annotations\":{\"storageclass.kubernetes.io/is-default-class\":\"true\"}}}'",
                ),
            ],
        ),
        Reason::PvcDeleting => (
            format!("{who} mounts a PersistentVolumeClaim that is being deleted: Karpenter ignores the pod until the claim is gone or recreated."),
            vec![Remediation::command(
                "Find the terminating claim and what holds it (finalizers, another pod still using it):",
                format!("kubectl get pvc -n {ns} -o custom-columns=NAME:.metadata.name,DELETING:.metadata.deletionTimestamp,FINALIZERS:.metadata.finalizers"),
            )],
        ),
        Reason::StorageClassNotFound => {
            let sc = tail_after(text, "storageclass.storage.k8s.io \"")
                .and_then(|t| t.split('"').next().map(str::to_string))
                .filter(|s| !s.is_empty());
            let sc_name = sc.clone().unwrap_or_else(|| "<storage-class>".to_string());
            (
                format!("{who} mounts a PVC whose StorageClass \"{sc_name}\" does not exist: Karpenter ignores the pod."),
                vec![
                    Remediation::command("Create the StorageClass, or fix the PVC's storageClassName to an existing one:", "kubectl get storageclass"),
                    Remediation::yaml(
                        format!("An EBS CSI StorageClass named {sc_name}:"),
                        format!("apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: {sc_name}\nprovisioner: ebs.csi.aws.com\nvolumeBindingMode: WaitForFirstConsumer\nparameters:\n  type: gp3\n"),
                    ),
                ],
            )
        }
        Reason::PvcInvalid => (
            format!("{who}'s PersistentVolumeClaim failed Karpenter's validation: it ignores the pod."),
            vec![Remediation::command(
                "Look at the claims of the pod's namespace (storage class, phase, volume):",
                format!("kubectl get pvc -n {ns} -o wide"),
            )],
        ),
    };
    Diagnosis::new(&META, summary)
        .with_object(pod)
        .with_messages(messages.iter().copied())
        .with_remediation(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Requirement;
    use crate::testing::{check_only, ids};

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
    fn near_misses() {
        for text in [
            "failed tracking CSI volume limits for volume with unbound PVC, no storage class specified",
            "StorageClass .spec.provisioner uses an in-tree storage plugin which is unsupported by Karpenter",
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector.",
        ] {
            assert!(ids(&check_only("KW209", text)).is_empty(), "{text}");
        }
    }
}
