//! KW409 nominated-for-pending-pod.

use crate::facts::{contains_ignore_ascii_case, Facts};
use crate::rules::kw4xx::disruption::{
    hits, push_unique, subject_nodepools, subject_of, subjects_label, wholly_after, Endings, Hits,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW409",
    slug: "nominated-for-pending-pod",
    title: "The node is kept because a pending pod was nominated to it",
    severity: Severity::Info,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter's scheduler decided that a Pending pod will run on this node, so it does not disrupt
the node while the nomination holds. This is transient: once the pod binds (or the nomination
expires) the node is a candidate again.

Signals: the `DisruptionBlocked` texts `state node is nominated for a pending pod` (v1.0 to
v1.1, after `Cannot disrupt Node: `) and `Node is nominated for a pending pod` (v1.2+), and the
older `Nominated for a pending pod` (v0.32 to v0.37 `DisruptionBlocked` `Cannot disrupt Node:
...`; v0.28 to v0.31 `DeprovisioningBlocked` `Cannot deprovision Node: ...` / `Cannot
deprovision node due to ...`). The pod's own `Nominated` event (`Pod should schedule on:
nodeclaim/...`) is not this signal.

## Why it happens
A pod became Pending and fits on this node (or on the NodeClaim being launched for it). The
nomination protects the capacity it will use.

## How to fix
Nothing, unless it lasts: then the pod nominated here cannot actually schedule (look at its
events; the kube-scheduler may disagree with Karpenter about taints, ports or volumes).
"#,
};

const SIGNALS: &[&str] = &["nominated for a pending pod"];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let found = hits(facts, |t| {
        contains_ignore_ascii_case(t, "nominated for a pending pod")
    });
    let found = Endings::new(facts).without_later_removal(found);
    let found = without_later_verdict(facts, found);
    if found.is_empty() {
        return Vec::new();
    }
    let nodepools = subject_nodepools(facts, &found.subjects);
    // Before v0.32 (a Machine) the pool was a v1alpha5 Provisioner.
    let kind = if crate::rules::version::before_v0_32(facts)
        || found.subjects.iter().any(|s| s.kind == "Machine")
    {
        "Provisioner"
    } else {
        "NodePool"
    };
    let pool = match nodepools.as_slice() {
        [] => String::new(),
        [one] => format!(" ({kind} {one})"),
        several => format!(" ({kind}s {})", several.join(", ")),
    };
    let summary = format!(
        "Karpenter keeps {}{pool} for now: a pending pod was nominated to it, so it is not disrupted until the pod binds or the nomination expires. This is transient.",
        subjects_label(&found.subjects)
    );
    let mut steps = vec![Remediation::command(
        "If it lasts, find the Pending pods and read why they do not bind (their events):",
        "kubectl get pods -A --field-selector status.phase=Pending -o wide",
    )];
    // Karpenter's `Nominated` pod event names the node (or NodeClaim) it nominated the pod to.
    let targets: Vec<String> = found
        .subjects
        .iter()
        .filter(|s| matches!(s.kind.as_str(), "Node" | "NodeClaim" | "Machine"))
        .map(|s| s.name.clone())
        .collect();
    if !targets.is_empty() {
        steps.push(Remediation::command(
            "The pods Karpenter nominated there (its Nominated pod events name the node or NodeClaim):",
            format!(
                "kubectl get events -A --field-selector reason=Nominated | grep -E '{}'",
                targets.join("|")
            ),
        ));
    }
    vec![Diagnosis::new(&META, summary)
        .with_object(found.subjects.first())
        .with_node_pools(&nodepools)
        .with_messages_per_object(found.messages.iter().copied(), &subject_of)
        .with_remediation(steps)]
}

/// `found` without the nominations a later consolidation verdict about the same node or
/// NodeClaim ended: Karpenter weighs a node for consolidation (`Unconsolidatable`: `Can't
/// replace with a cheaper node`, `SpotToSpotConsolidation is disabled...`) only once no pod is
/// nominated to it, so that verdict is the current reason and the nomination is over.
fn without_later_verdict<'a>(facts: &'a Facts, found: Hits<'a>) -> Hits<'a> {
    let mut out = Hits::default();
    for m in found.messages {
        let subject = subject_of(m);
        let ended = subject.as_ref().is_some_and(|s| {
            !crate::rules::text::is_unnumbered_mask(&s.name)
                && facts.messages.iter().any(|v| {
                    v.reason.as_deref() == Some("Unconsolidatable")
                        && subject_of(v).as_ref() == Some(s)
                        && wholly_after(v, m)
                })
        });
        if ended {
            continue;
        }
        if let Some(s) = subject {
            push_unique(&mut out.subjects, s);
        }
        out.messages.push(m);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn names_the_nodepool_and_where_the_nominations_are() {
        let report = check_only(
            "KW409",
            "default 9m Normal DisruptionBlocked node/ip-10-20-44-90.eu-west-1.compute.internal Node is nominated for a pending pod\n\
             default 9m Normal DisruptionBlocked nodeclaim/web-general-4hq8d Node is nominated for a pending pod",
        );
        let d = &report.diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("web-general"));
        assert!(
            d.summary.contains("(NodePool web-general)"),
            "{}",
            d.summary
        );
        assert_eq!(
            d.remediation[1].command.as_deref(),
            Some("kubectl get events -A --field-selector reason=Nominated | grep -E 'ip-10-20-44-90.eu-west-1.compute.internal|web-general-4hq8d'")
        );
    }

    #[test]
    fn both_wordings_and_the_pod_event_is_not_one() {
        for text in [
            "default 1m Normal DisruptionBlocked node/ip-10-0-64-17.ec2.internal Node is nominated for a pending pod",
            "Cannot disrupt Node: state node is nominated for a pending pod",
        ] {
            assert_eq!(ids(&check_only("KW409", text)), ["KW409"], "{text}");
        }
        assert!(ids(&check_only(
            "KW409",
            "Normal  Nominated  108s (x12 over 24m)  karpenter  Pod should schedule on: nodeclaim/default-cvkcv, node/ip-10-0-71-41.ec2.internal"
        ))
        .is_empty());
    }
}
