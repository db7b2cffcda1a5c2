//! KW203 requirements-incompatible.

use crate::facts::{Facts, ObjectRef, Pod};
use crate::rules::kw2xx::kw202_no_offering_in_zone::ZONE_KEYS;
use crate::rules::kw2xx::scheduling::{
    group_hits, hit_messages, in_values, nodepool_label, pod_label, scheduling_errors, Cause,
    Clause, SchedulingError,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW203",
    slug: "requirements-incompatible",
    title: "The pod asks for a label value no NodePool offers",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The pod's `nodeSelector` or required node affinity asks for a label (or a label value) that the
NodePool's requirements and template labels cannot produce, so no node Karpenter launches from
that NodePool would match the pod.

Signals (inside `Failed to schedule pod, ...` and `could not schedule pod`):
`incompatible requirements, label "<k>" does not have known values[ (typo of "<wk>"?)]` and
`incompatible requirements, key <k>, <pod requirement> not in <NodePool requirement>`; older
releases print the key form without the prefix (`key kubernetes.io/hostname,
kubernetes.io/hostname DoesNotExist not in kubernetes.io/hostname In [hostname-placeholder-...]`).

## Why it happens
A typo in a label key (Karpenter suggests the well-known key it resembles: `typo of "..."`),
a label that only existed on the old managed node groups (`eks.amazonaws.com/nodegroup`,
`nodegroup`, `role`), a value the NodePool's requirement does not list, or a pod pinned to
NodePools (`karpenter.sh/nodepool In [a b]`: any of the listed ones) so that every other
NodePool reports this clause (normal: look at the pinned NodePool's own failure). When none of
the pinned NodePools has a clause of its own, Karpenter tried none of them: they do not exist
(a renamed or deleted NodePool) or they are not ready (KW208).

## How to fix
Correct the pod's selector, or make the NodePool offer the label: add the value to its
requirement, or put the label in `spec.template.metadata.labels`.
"#,
};

const SIGNALS: &[&str] = &[
    "could not schedule pod",
    "failed to schedule pod",
    "incompatible requirements",
    "does not have known values",
];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let errors = scheduling_errors(facts);
    let groups = group_hits(
        &errors,
        |c| {
            matches!(
                c.cause,
                Cause::UnknownLabel { .. } | Cause::RequirementConflict { .. }
            )
        },
        |c| format!("{:?}\u{0}{}", c.nodepool, c.reason),
    );
    let mut out = Vec::new();
    // (pod, NodePool) pins already reported as one diagnosis.
    let mut pins_reported: Vec<(Option<ObjectRef>, String)> = Vec::new();
    for hits in groups {
        let first = hits[0];
        let clause = first.clause;
        let pod = first.error.pod.as_ref();
        let fact_pod = pod.and_then(|p| find_pod(facts, p));
        match pinned_to_untried_pool(facts, first.error, clause, &mut pins_reported) {
            Some(Some(d)) => {
                out.push(d.with_messages(hit_messages(&hits)));
                continue;
            }
            // The same pin, already reported from another NodePool's clause.
            Some(None) => continue,
            None => {}
        }
        let pool = nodepool_label(clause);
        let (mut summary, remediation, severity) = match &clause.cause {
            Cause::UnknownLabel { label, typo_of } => {
                let value = fact_pod.and_then(|p| p.node_selector.get(label).cloned());
                let summary = match typo_of {
                    Some(wk) => format!(
                        "Label \"{label}\" looks like a typo of \"{wk}\": {} asks for it and {pool} has no known values for it, so no node it launches would match.",
                        pod_label(pod)
                    ),
                    None => format!(
                        "{} asks for label \"{label}\"{}, which {pool} neither requires nor sets: no node it launches would carry it.",
                        pod_label(pod),
                        value.as_deref().map(|v| format!("={v}")).unwrap_or_default()
                    ),
                };
                (
                    summary,
                    unknown_label_fix(clause, label, typo_of.as_deref(), value.as_deref()),
                    Severity::Error,
                )
            }
            Cause::RequirementConflict {
                key,
                incoming,
                existing,
            } => {
                let pinned_elsewhere = pinned_to_other_pool(first.error, key, incoming);
                let summary = match &pinned_elsewhere {
                    Some(other) => format!(
                        "{} is pinned to {} (`{incoming}`), so {pool} (`{existing}`) is not a candidate; this clause is expected, see NodePool \"{other}\"'s own failure.",
                        pod_label(pod),
                        pinned_label(&pinned_pools(incoming).unwrap_or_default())
                    ),
                    None => format!(
                        "{} requires `{incoming}`, but {pool} offers `{existing}`: no node it launches would match.",
                        pod_label(pod)
                    ),
                };
                let severity = if pinned_elsewhere.is_some() {
                    Severity::Info
                } else {
                    Severity::Error
                };
                let mut summary = summary;
                let from_volume = ZONE_KEYS
                    .contains(&key.as_str())
                    .then(|| zone_from_volume(facts, pod, fact_pod))
                    .flatten();
                if let Some(why) = &from_volume {
                    summary.push_str(&format!(" {why}"));
                }
                let fix = match from_volume {
                    Some(_) => volume_zone_fix(clause, key, incoming, fact_pod),
                    None => conflict_fix(clause, key, incoming),
                };
                (summary, fix, severity)
            }
            _ => continue,
        };
        summary.push_str(&first.error.nearest_note(clause));
        out.push(
            Diagnosis::new(&META, summary)
                .with_severity(severity)
                .with_object(pod)
                .with_node_pool(clause.nodepool.as_deref())
                .with_messages(hit_messages(&hits))
                .with_remediation(remediation),
        );
    }
    out
}

fn find_pod<'a>(facts: &'a Facts, pod: &ObjectRef) -> Option<&'a Pod> {
    facts.pods.iter().find(|p| {
        p.meta.name == pod.name && (pod.namespace.is_none() || p.meta.namespace == pod.namespace)
    })
}

/// The NodePools a `karpenter.sh/nodepool In [a b]` pin lists: the pod may land on any of
/// them (Karpenter prints a requirement's values space-separated, at most five of them).
fn pinned_pools(incoming: &str) -> Option<Vec<String>> {
    in_values(incoming, "karpenter.sh/nodepool").filter(|v| !v.is_empty())
}

/// `NodePool "a"`, `NodePools "a" or "b"`.
fn pinned_label(pools: &[String]) -> String {
    let quoted: Vec<String> = pools.iter().map(|p| format!("\"{p}\"")).collect();
    match quoted.as_slice() {
        [] => "a NodePool".to_string(),
        [one] => format!("NodePool {one}"),
        [rest @ .., last] => format!("NodePools {} or {last}", rest.join(", ")),
    }
}

/// A NodePool the pod pins itself to with `karpenter.sh/nodepool In [x y]`, when one of the
/// listed NodePools was tried too (it then has a clause of its own in the same error).
fn pinned_to_other_pool(error: &SchedulingError, key: &str, incoming: &str) -> Option<String> {
    if key != "karpenter.sh/nodepool" {
        return None;
    }
    pinned_pools(incoming)?.into_iter().find(|w| {
        error
            .clauses
            .iter()
            .any(|c| c.nodepool.as_deref() == Some(w))
    })
}

/// The pod pins `karpenter.sh/nodepool In [<np>...]` to NodePools none of which has a clause
/// of its own in the error: Karpenter tried none of them (they do not exist, or are not ready),
/// and every other NodePool's clause only repeats the pin. One diagnosis per pod and pin,
/// naming the missing NodePools rather than blaming each one that was tried. `Some(None)`:
/// this pin was already reported.
fn pinned_to_untried_pool(
    facts: &Facts,
    error: &SchedulingError,
    clause: &Clause,
    reported: &mut Vec<(Option<ObjectRef>, String)>,
) -> Option<Option<Diagnosis>> {
    let Cause::RequirementConflict { key, incoming, .. } = &clause.cause else {
        return None;
    };
    if key != "karpenter.sh/nodepool" || pinned_to_other_pool(error, key, incoming).is_some() {
        return None;
    }
    let wanted = pinned_pools(incoming)?;
    let pod = error.pod.clone();
    let pin = wanted.join(" ");
    if reported.contains(&(pod.clone(), pin.clone())) {
        return Some(None);
    }
    reported.push((pod.clone(), pin.clone()));
    let several = wanted.len() > 1;
    let tried: Vec<String> = error
        .clauses
        .iter()
        .filter_map(|c| c.nodepool.clone())
        .collect();
    let mut summary = format!(
        "{} is pinned to {} (`{incoming}`), {} among the NodePools Karpenter tried{}",
        pod_label(pod.as_ref()),
        pinned_label(&wanted),
        if several {
            "none of which is"
        } else {
            "which is not"
        },
        if tried.is_empty() {
            String::new()
        } else {
            format!(" ({})", tried.join(", "))
        }
    );
    let known: Vec<&str> = facts
        .nodepools
        .iter()
        .map(|n| n.meta.name.as_str())
        .collect();
    let existing: Vec<String> = wanted
        .iter()
        .filter(|w| facts.nodepool(w).is_some())
        .cloned()
        .collect();
    // `and <n> others`: Karpenter printed only the first five names of the pin.
    let truncated = incoming.contains(" others]");
    match existing.as_slice() {
        _ if known.is_empty() => summary.push_str(if several {
            ": they do not exist, or they are not ready (KW208)."
        } else {
            ": it does not exist, or it is not ready (KW208)."
        }),
        [] => summary.push_str(&format!(
            ": {} (the input lists {}).",
            match (several, truncated) {
                (_, true) => "no NodePool of the names shown exists",
                (true, false) => "no NodePool of those names exists",
                (false, false) => "no NodePool of that name exists",
            },
            known.join(", ")
        )),
        [_] if !several => {
            summary.push_str(": it exists but Karpenter skipped it, so it is not ready (KW208).")
        }
        found => summary.push_str(&format!(
            ": {} {} but Karpenter skipped {}, so {} not ready (KW208).",
            pinned_label(found),
            if found.len() > 1 { "exist" } else { "exists" },
            if found.len() > 1 { "them" } else { "it" },
            if found.len() > 1 { "they are" } else { "it is" },
        )),
    }
    summary.push_str(" The other NodePools are rejected only because of this pin.");
    let steps = vec![
        Remediation::command(
            if several {
                "Check the NodePools the pod asks for exist and are Ready:"
            } else {
                "Check the NodePool the pod asks for exists and is Ready:"
            },
            format!("kubectl get nodepools\nkubectl describe nodepool {pin}"),
        ),
        Remediation::yaml(
            format!("Point the pod template's nodeSelector (or node affinity) at an existing NodePool{}:", known.first().map(|k| format!(" (e.g. {k})")).unwrap_or_default()),
            format!("nodeSelector:\n  karpenter.sh/nodepool: \"{}\"\n", known.first().copied().unwrap_or("<nodepool>")),
        ),
    ];
    // The one NodePool concerned: the only one pinned, else the only pinned one that exists.
    let concerned = match (wanted.as_slice(), existing.as_slice()) {
        ([one], _) | (_, [one]) => Some(one.as_str()),
        _ => None,
    };
    Some(Some(
        Diagnosis::new(&META, summary)
            .with_object(pod.as_ref())
            .with_node_pool(concerned)
            .with_related(&["KW208"])
            .with_remediation(steps),
    ))
}

fn unknown_label_fix(
    clause: &Clause,
    label: &str,
    typo_of: Option<&str>,
    value: Option<&str>,
) -> Vec<Remediation> {
    let np = clause.nodepool.as_deref().unwrap_or("<nodepool>");
    let value = value.unwrap_or("<value>");
    let mut steps = Vec::new();
    if let Some(wk) = typo_of {
        steps.push(Remediation::yaml(
            format!("Correct the key in the pod template's nodeSelector (or node affinity): \"{label}\" -> \"{wk}\"."),
            format!("nodeSelector:\n  {wk}: \"{value}\"\n"),
        ));
    } else {
        steps.push(Remediation::text(format!(
            "If \"{label}\" is a leftover from managed node groups, drop it from the pod template's nodeSelector / node affinity."
        )));
    }
    steps.push(Remediation::yaml(
        format!("Or make NodePool {np} set the label on its nodes (`kubectl edit nodepool {np}`):"),
        format!("spec:\n  template:\n    metadata:\n      labels:\n        {label}: \"{value}\"\n"),
    ));
    steps
}

/// Why the pod's zone requirement is its volume's, when the input says so: the pod asks for no
/// zone itself but mounts claims, or the scheduler reports `volume node affinity conflict` for
/// it. An EBS volume lives in one zone and takes its pods there.
fn zone_from_volume(
    facts: &Facts,
    pod: Option<&ObjectRef>,
    fact_pod: Option<&Pod>,
) -> Option<String> {
    if let Some(p) = fact_pod {
        let asks_zone = p
            .node_selector
            .keys()
            .any(|k| ZONE_KEYS.contains(&k.as_str()))
            || p.node_affinity
                .iter()
                .flatten()
                .any(|r| ZONE_KEYS.contains(&r.key.as_str()));
        if asks_zone {
            return None;
        }
    }
    let scheduler_says = facts
        .messages_containing("volume node affinity conflict")
        .any(|m| match (&m.object, pod) {
            (Some(o), Some(p)) => o.name == p.name,
            _ => true,
        });
    let claims = fact_pod.map(|p| p.pvc_names.as_slice()).unwrap_or_default();
    match (scheduler_says, claims) {
        (true, _) => Some(
            "The zone comes from the pod's volume: the scheduler reports `volume node affinity conflict`, and an EBS volume lives in one zone and takes its pods there.".to_string(),
        ),
        (false, [first, ..]) => Some(format!(
            "The pod asks for no zone itself, so the requirement comes from its volume (claim {first}): an EBS volume lives in one zone and takes its pods there."
        )),
        (false, []) => None,
    }
}

/// The fix when a volume pins the zone: the data is in that zone, so the NodePool must go
/// there; recreating the volume elsewhere is the exception.
fn volume_zone_fix(
    clause: &Clause,
    key: &str,
    incoming: &str,
    fact_pod: Option<&Pod>,
) -> Vec<Remediation> {
    let np = clause.nodepool.as_deref().unwrap_or("<nodepool>");
    let values = quoted_values(incoming, key);
    let ns = fact_pod
        .and_then(|p| p.meta.namespace.as_deref())
        .unwrap_or("<namespace>");
    let claim = fact_pod
        .and_then(|p| p.pvc_names.first())
        .map(String::as_str)
        .unwrap_or("<pvc>");
    vec![
        Remediation::yaml(
            format!("Let NodePool {np} launch where the volume is: add the zone to its requirement on {key} (`kubectl edit nodepool {np}`), and check that its EC2NodeClass selects a subnet in that zone:"),
            format!(
                "spec:\n  template:\n    spec:\n      requirements:\n        - key: {key}\n          operator: In\n          values: [{values}]\n"
            ),
        ),
        Remediation::command(
            "See the volume's zone:",
            format!("kubectl get pv \"$(kubectl get pvc {claim} -n {ns} -o jsonpath='{{.spec.volumeName}}')\" -o jsonpath='{{.spec.nodeAffinity.required}}{{\"\\n\"}}'"),
        ),
        Remediation::text(format!(
            "Or, only if the data can be recreated: delete claim {claim} (and the pod, so that a StatefulSet makes both again) and the new volume is provisioned in a zone NodePool {np} offers."
        )),
    ]
}

fn quoted_values(incoming: &str, key: &str) -> String {
    in_values(incoming, key)
        .filter(|v| !v.is_empty())
        .map(|v| {
            v.iter()
                .map(|x| format!("\"{x}\""))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_else(|| "\"<value>\"".to_string())
}

fn conflict_fix(clause: &Clause, key: &str, incoming: &str) -> Vec<Remediation> {
    let np = clause.nodepool.as_deref().unwrap_or("<nodepool>");
    let values = quoted_values(incoming, key);
    vec![
        Remediation::text(format!(
            "Correct the pod's nodeSelector / node affinity on {key} if `{incoming}` is not what it should ask for."
        )),
        Remediation::yaml(
            format!("Or let NodePool {np} offer it: add the values to its requirement on {key} (`kubectl edit nodepool {np}`):"),
            format!(
                "spec:\n  template:\n    spec:\n      requirements:\n        - key: {key}\n          operator: In\n          values: [{values}]\n"
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use crate::rules::Severity;
    use crate::testing::{check_only, ids};

    const ZONE_CONFLICT: &str = r#"LAST SEEN   TYPE      REASON             OBJECT                  MESSAGE
2m          Warning   FailedScheduling   pod/postgres-1          Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"200m","memory":"300Mi","pods":"4"}, incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-west-1a] not in topology.kubernetes.io/zone In [eu-west-1b eu-west-1c]
"#;

    #[test]
    fn a_pin_to_an_untried_nodepool_is_one_diagnosis_naming_it() {
        let error = r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"trainer-0","namespace":"ml"},"error":"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-pool] not in karpenter.sh/nodepool In [default]; incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-pool] not in karpenter.sh/nodepool In [system]"}"#;
        let report = check_only("KW203", error);
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .starts_with("Pod ml/trainer-0 is pinned to NodePool \"gpu-pool\""),
            "{}",
            d.summary
        );
        assert!(
            d.summary
                .contains("tried (default, system): it does not exist, or it is not ready (KW208)"),
            "{}",
            d.summary
        );
        let listed = format!("{error}\n$ kubectl get nodepools\nNAME      NODECLASS   NODES   READY   AGE\ndefault   default     4       True    90d\nsystem    default     2       True    90d\n");
        let report = check_only("KW203", &listed);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("no NodePool of that name exists (the input lists default, system)"),
            "{}",
            d.summary
        );
        assert!(d.remediation[1]
            .yaml
            .as_deref()
            .unwrap()
            .contains("karpenter.sh/nodepool: \"default\""));
    }

    #[test]
    fn a_pin_listing_several_nodepools_names_each_of_them() {
        let error = r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"trainer-0","namespace":"ml"},"error":"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-a gpu-b] not in karpenter.sh/nodepool In [default]; incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-a gpu-b] not in karpenter.sh/nodepool In [system]"}"#;
        let report = check_only("KW203", error);
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with(
                "Pod ml/trainer-0 is pinned to NodePools \"gpu-a\" or \"gpu-b\" (`karpenter.sh/nodepool In [gpu-a gpu-b]`), none of which is among the NodePools Karpenter tried (default, system): they do not exist, or they are not ready (KW208)."
            ),
            "{}",
            d.summary
        );
        assert_eq!(d.node_pool, None);
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .ends_with("kubectl describe nodepool gpu-a gpu-b"));
        // One listed NodePool exists: it is the one Karpenter skipped, not "no such name".
        let listed = format!("{error}\n$ kubectl get nodepools\nNAME      NODECLASS   NODES   READY   AGE\ndefault   default     4       True    90d\ngpu-b     gpu         0       False   2d\nsystem    default     2       True    90d\n");
        let report = check_only("KW203", &listed);
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains(
                ": NodePool \"gpu-b\" exists but Karpenter skipped it, so it is not ready (KW208)."
            ),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("no NodePool of"), "{}", d.summary);
        assert_eq!(d.node_pool.as_deref(), Some("gpu-b"));
        // None of them exists.
        let listed = format!("{error}\n$ kubectl get nodepools\nNAME      NODECLASS   NODES   READY   AGE\ndefault   default     4       True    90d\n");
        let d = &check_only("KW203", &listed).diagnoses[0];
        assert!(
            d.summary
                .contains(": no NodePool of those names exists (the input lists default)."),
            "{}",
            d.summary
        );
    }

    #[test]
    fn a_pin_listing_a_tried_nodepool_is_not_untried() {
        // `gpu-b` was tried (its own clause): the pin is fine, the other clauses are expected.
        let report = check_only(
            "KW203",
            r#"Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={}, incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-a gpu-b] not in karpenter.sh/nodepool In [default]; incompatible with nodepool "gpu-b", daemonset overhead={}, no instance type has enough resources, requirements=karpenter.sh/nodepool In [gpu-b], resources={"cpu":"64"}"#,
        );
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.severity, Severity::Info);
        assert!(
            d.summary
                .contains("is pinned to NodePools \"gpu-a\" or \"gpu-b\"")
                && d.summary.contains("see NodePool \"gpu-b\"'s own failure"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("not among"), "{}", d.summary);
    }

    #[test]
    fn a_zone_the_volume_pins_sends_the_nodepool_there() {
        let scheduler = "4m          Warning   FailedScheduling   pod/postgres-1          0/7 nodes are available: 1 node(s) had volume node affinity conflict, 6 node(s) didn't match Pod's node affinity/selector. preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.\n";
        let report = check_only("KW203", &format!("{ZONE_CONFLICT}{scheduler}"));
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("comes from the pod's volume"),
            "{}",
            d.summary
        );
        let first = &d.remediation[0];
        assert!(first
            .text
            .starts_with("Let NodePool default launch where the volume is"));
        assert!(first
            .yaml
            .as_deref()
            .is_some_and(|y| y.contains("values: [\"eu-west-1a\"]")));
        assert!(!d
            .remediation
            .iter()
            .any(|r| r.text.contains("Correct the pod's nodeSelector")));

        // Without a word about volumes, the pod's own selector is the first suspect.
        let d = &check_only("KW203", ZONE_CONFLICT).diagnoses[0];
        assert!(!d.summary.contains("volume"));
        assert!(d.remediation[0]
            .text
            .contains("Correct the pod's nodeSelector"));
    }

    #[test]
    fn typo_suggestion_leads() {
        let report = check_only(
            "KW203",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"web","namespace":"shop"},"error":"incompatible with nodepool \"jobs\", daemonset overhead={\"cpu\":\"681m\"}, did not tolerate pool=jobs:NoSchedule; incompatible with nodepool \"stable\", daemonset overhead={\"cpu\":\"681m\"}, incompatible requirements, label \"node-role.example.io/stable\" does not have known values (typo of \"example.io/stage\"?)"}"#,
        );
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with(
                "Label \"node-role.example.io/stable\" looks like a typo of \"example.io/stage\""
            ),
            "{}",
            d.summary
        );
        assert_eq!(d.node_pool.as_deref(), Some("stable"));
    }

    #[test]
    fn unknown_label_v1_5() {
        let report = check_only(
            "KW203",
            r#"Failed to schedule pod, incompatible requirements, label "nodegroup" does not have known values"#,
        );
        assert_eq!(ids(&report), ["KW203"]);
        assert!(report.diagnoses[0].summary.contains("\"nodegroup\""));
    }

    #[test]
    fn key_conflict_forms() {
        for text in [
            "Failed to schedule pod, incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]",
            r#"Failed to schedule pod, incompatible with provisioner "default", key kubernetes.io/hostname, kubernetes.io/hostname DoesNotExist not in kubernetes.io/hostname In [hostname-placeholder-3245]"#,
        ] {
            let report = check_only("KW203", text);
            assert_eq!(ids(&report), ["KW203"], "{text}");
            assert_eq!(report.diagnoses[0].severity, Severity::Error);
        }
    }

    #[test]
    fn pinned_pod_makes_other_pools_info() {
        let report = check_only(
            "KW203",
            r#"Failed to schedule pod, incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu] not in karpenter.sh/nodepool In [default]; no instance type has enough resources, requirements=karpenter.sh/nodepool In [gpu], resources={"cpu":"64"}"#,
        );
        assert_eq!(ids(&report), ["KW203"]);
        assert_eq!(report.diagnoses[0].severity, Severity::Info);
        assert!(report.diagnoses[0]
            .summary
            .contains("pinned to NodePool \"gpu\""));
    }

    #[test]
    fn near_misses() {
        for text in [
            "0/5 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
            "Failed to schedule pod, no instance type has enough resources, requirements=karpenter.k8s.aws/instance-family In [g4ad] minValues 1, topology.kubernetes.io/zone DoesNotExist, resources={}",
            "Failed to schedule pod, incompatible with nodepool \"default\", daemonset overhead={}, unsatisfiable topology constraint for pod anti-affinity, key=kubernetes.io/hostname (counts = hostname-placeholder-0001: 1, podDomains = kubernetes.io/hostname Exists, nodeDomains = kubernetes.io/hostname In [hostname-placeholder-0001]",
        ] {
            assert!(ids(&check_only("KW203", text)).is_empty(), "{text}");
        }
    }
}
