//! KW404 not-initialized-blocks-disruption.

use crate::facts::{contains_ignore_ascii_case, Facts};
use crate::rules::kw4xx::disruption::{hits, node_name, subjects_label};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW404",
    slug: "not-initialized-blocks-disruption",
    title: "Karpenter does not disrupt a node that never initialized",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter never consolidates, replaces or expires a node it has not marked initialized: the
node stays, costs money and may hold pods that cannot run well on it.

Signals: the `DisruptionBlocked` texts `state node isn't initialized` (v1.0 to v1.1, after
`Cannot disrupt Node: `) and `Node isn't initialized` (v1.2+).

## Why it happens
Initialization needs three things: the node Ready, every resource the NodeClaim requested
registered (GPUs, `vpc.amazonaws.com/pod-eni`...), and the NodePool's startup taints removed by
the agents that own them. One of them never happened (KW306 names which).

## How to fix
Find what initialization waits for (`kubectl get nodeclaim <nodeclaim> -o yaml`: the
`Initialized` condition's reason and message) and fix that agent or resource (KW306). A node
that cannot recover can be deleted (`kubectl delete nodeclaim <nodeclaim>`): Karpenter drains
it and launches a replacement if pods need one.
"#,
};

const SIGNALS: &[&str] = &["isn't initialized"];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let found = hits(facts, |t| {
        contains_ignore_ascii_case(t, "isn't initialized")
    });
    if found.is_empty() {
        return Vec::new();
    }
    let on = subjects_label(&found.subjects);
    let summary = format!(
        "Karpenter does not disrupt {on}: it isn't initialized (Ready, its requested resources registered and its startup taints removed), and Karpenter never consolidates, replaces or expires a node before that. KW306 explains what initialization waits for."
    );
    let claim = found
        .subjects
        .iter()
        .find(|s| s.kind == "NodeClaim")
        .map(|s| s.name.clone());
    let node = node_name(facts, &found.subjects);
    let mut steps = Vec::new();
    match &claim {
        Some(c) => steps.push(Remediation::command(
            "Read the Initialized condition: its reason says what is missing (a startup taint, an unregistered resource, the node not Ready):",
            format!(
                "kubectl get nodeclaim {c} -o jsonpath='{{range .status.conditions[?(@.type==\"Initialized\")]}}{{.reason}}: {{.message}}{{\"\\n\"}}{{end}}'"
            ),
        )),
        None => steps.push(Remediation::command(
            "Find the node's NodeClaim and read its Initialized condition:",
            format!(
                "kubectl get nodeclaim -o wide | grep {}",
                node.as_deref().unwrap_or("<node>")
            ),
        )),
    }
    steps.push(Remediation::command(
        "Check the node's taints and conditions (a startup taint nobody removes, Ready=False):",
        format!(
            "kubectl describe node {}",
            node.as_deref().unwrap_or("<node>")
        ),
    ));
    steps.push(Remediation::command(
        "A node that cannot recover: delete its NodeClaim; Karpenter drains it and launches a replacement if pods need one.",
        format!("kubectl delete nodeclaim {}", claim.as_deref().unwrap_or("<nodeclaim>")),
    ));
    vec![Diagnosis::new(&META, summary)
        .with_object(found.subjects.first())
        .with_messages(found.messages.iter().copied())
        .with_related(&["KW306"])
        .with_remediation(steps)]
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn both_wordings() {
        for text in [
            "1m Normal DisruptionBlocked node/ip-10-0-71-41.ec2.internal Node isn't initialized",
            "Normal  DisruptionBlocked  9m  karpenter  Node isn't initialized",
            "Cannot disrupt Node: state node isn't initialized",
        ] {
            let report = check_only("KW404", text);
            assert_eq!(ids(&report), ["KW404"], "{text}");
            assert_eq!(report.diagnoses[0].related, ["KW306"]);
        }
        let d = &check_only(
            "KW404",
            "1m Normal DisruptionBlocked node/ip-10-0-71-41.ec2.internal Node isn't initialized",
        )
        .diagnoses[0];
        assert!(d.summary.contains("node ip-10-0-71-41.ec2.internal"));
        assert_eq!(
            d.remediation[1].command.as_deref(),
            Some("kubectl describe node ip-10-0-71-41.ec2.internal")
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            "Initialized  Unknown  NodeNotFound  Node not registered with cluster",
            "Normal DisruptionBlocked Node is nominated for a pending pod",
        ] {
            assert!(ids(&check_only("KW404", text)).is_empty(), "{text}");
        }
    }
}
