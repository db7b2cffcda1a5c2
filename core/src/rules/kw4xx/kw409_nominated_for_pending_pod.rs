//! KW409 nominated-for-pending-pod.

use crate::facts::{contains_ignore_ascii_case, Facts};
use crate::rules::kw4xx::disruption::{hits, subject_of, subjects_label};
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
    if found.is_empty() {
        return Vec::new();
    }
    let summary = format!(
        "Karpenter keeps {} for now: a pending pod was nominated to it, so it is not disrupted until the pod binds or the nomination expires. This is transient.",
        subjects_label(&found.subjects)
    );
    vec![Diagnosis::new(&META, summary)
        .with_object(found.subjects.first())
        .with_messages_per_object(found.messages.iter().copied(), &subject_of)
        .with_remediation([Remediation::command(
            "If it lasts, find the Pending pods and read why they do not bind (their events):",
            "kubectl get pods -A --field-selector status.phase=Pending -o wide",
        )])]
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

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
