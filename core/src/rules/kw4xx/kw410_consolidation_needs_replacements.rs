//! KW410 consolidation-needs-replacements.

use crate::facts::{contains_ignore_ascii_case, Facts};
use crate::rules::kw4xx::disruption::{
    hits, node_name, nodepool_lookup_command, number_after, subject_nodepools, subject_of,
    subjects_label, unescaped, Endings,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW410",
    slug: "consolidation-needs-replacements",
    title: "Removing the node would need more than one replacement node",
    severity: Severity::Info,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Consolidation simulated removing the node and found its pods would need several new nodes.
Karpenter replaces a node with at most one, so it keeps this one: an underused node can stay
for that reason.

Signal: the `Unconsolidatable` text `Can't remove without creating <n> candidates` (on the Node
and the NodeClaim). Not this rule: the pre-v0.32 debug line `will not consolidate to more than 1
node`, which multi-node consolidation also logs for whole batches of candidates.

## Why it happens
The node's pods do not fit together on one cheaper node, nor on the other nodes' free space:
large pods, anti-affinity or topology spread between them, or resources only a big instance has.

## How to fix
Usually nothing: the decision saves churn. To let the node go, make its pods fit elsewhere
(smaller requests, relaxed anti-affinity / spread), or let the NodePool offer an instance type
that holds them all.
"#,
};

const SIGNALS: &[&str] = &[
    "can't remove without creating",
    "can\u{2019}t remove without creating",
];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let found = hits(facts, |t| {
        SIGNALS.iter().any(|s| contains_ignore_ascii_case(t, s))
    });
    let found = Endings::new(facts).without_later_removal(found);
    if found.is_empty() {
        return Vec::new();
    }
    let mut found = found;
    // An event of a pasted `kubectl describe node` names no object: the describe's own `Name:`
    // is the node.
    if found.subjects.is_empty() {
        if let Some(o) =
            crate::rules::kw3xx::common::raw_describe_subject(facts).filter(|o| o.kind == "Node")
        {
            found.subjects.push(o);
        }
    }
    // Several nodes can each need a different number (`2 candidates` on one, `3` on another).
    let mut counts: Vec<u64> = found
        .messages
        .iter()
        .filter_map(|m| number_after(&unescaped(&m.text), "without creating"))
        .collect();
    counts.sort_unstable();
    counts.dedup();
    let how_many = match counts.as_slice() {
        [] => "several new nodes".to_string(),
        [n] => format!("{n} new nodes"),
        [low, .., high] => format!("{low} to {high} new nodes"),
    };
    let mut kept = subjects_label(&found.subjects);
    if !found.subjects.iter().any(|s| s.kind == "Node") {
        if let Some(n) = node_name(facts, &found.subjects) {
            kept.push_str(&format!(" (node {n})"));
        }
    }
    let summary = format!(
        "Consolidation keeps {kept}: its pods would need {how_many}, and Karpenter replaces a node with at most one. This is a normal decision, not an error."
    );
    // A NodeClaim whose node the input does not show: look the node up through it.
    let node = node_name(facts, &found.subjects)
        .or_else(|| {
            found
                .subjects
                .iter()
                .find(|s| s.kind == "NodeClaim" || s.kind == "Machine")
                .map(|s| {
                    format!(
                        "\"$(kubectl get {} {} -o jsonpath='{{.status.nodeName}}')\"",
                        s.kind.to_ascii_lowercase(),
                        s.name
                    )
                })
        })
        .unwrap_or_else(|| "<node>".to_string());
    let pools = subject_nodepools(facts, &found.subjects);
    let pool = match pools.as_slice() {
        [] => format!(
            " (`{}` names it)",
            nodepool_lookup_command(facts, &found.subjects)
        ),
        several => format!(" {}", several.join(", ")),
    };
    vec![Diagnosis::new(&META, summary)
        .with_object(found.subjects.first())
        .with_node_pools(&pools)
        .with_messages_per_object(found.messages.iter().copied(), &subject_of)
        .with_remediation([
            Remediation::command(
                "See the node's pods and their requests; large pods or anti-affinity between them keep them apart:",
                format!("kubectl get pods -A --field-selector spec.nodeName={node} -o custom-columns=NS:.metadata.namespace,POD:.metadata.name,CPU:.spec.containers[*].resources.requests.cpu,MEM:.spec.containers[*].resources.requests.memory"),
            ),
            Remediation::text(format!(
                "To let it go: smaller requests, preferred instead of required anti-affinity, or an instance type in the {}{} big enough to hold all its pods.",
                // Before v0.32 (a Machine, `can't remove without creating 2 machines`) the
                // node's pool is a Provisioner.
                if crate::rules::version::before_v0_32(facts)
                    || found.subjects.iter().any(|s| s.kind == "Machine")
                    || found.messages.iter().any(|m| contains_ignore_ascii_case(&m.text, "creating") && contains_ignore_ascii_case(&m.text, " machines"))
                {
                    "Provisioner"
                } else {
                    "NodePool"
                },
                pool
            )),
        ])]
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    /// A pre-v0.32 `kubectl describe node`: its `Name:` is the subject, and its pool a
    /// Provisioner.
    #[test]
    fn names_the_nodepool_or_how_to_find_it() {
        let d = &check_only(
            "KW410",
            "default 12m Normal Unconsolidatable nodeclaim/general-hh4vn Can't remove without creating 2 candidates",
        )
        .diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("general"));
        assert!(
            d.remediation[1]
                .text
                .contains("in the NodePool general big enough"),
            "{}",
            d.remediation[1].text
        );
        let d = &check_only(
            "KW410",
            "default 12m Normal Unconsolidatable node/ip-10-8-12-56.ec2.internal Can't remove without creating 2 candidates",
        )
        .diagnoses[0];
        assert_eq!(d.node_pool, None);
        assert!(
            d.remediation[1].text.contains("in the NodePool (`kubectl get node ip-10-8-12-56.ec2.internal -L karpenter.sh/nodepool` names it)"),
            "{}",
            d.remediation[1].text
        );
    }

    #[test]
    fn an_old_describe_names_its_node_and_provisioner() {
        let text = "Name:               ip-10-20-3-77.us-west-2.compute.internal\nLabels:             karpenter.sh/provisioner-name=default\nEvents:\n  Type    Reason            Age   From       Message\n  ----    ------            ----  ----       -------\n  Normal  Unconsolidatable  4m    karpenter  can't remove without creating 2 machines\n";
        let d = &check_only("KW410", text).diagnoses[0];
        assert!(
            d.summary
                .contains("keeps node ip-10-20-3-77.us-west-2.compute.internal"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.contains("spec.nodeName=ip-10-20-3-77.us-west-2.compute.internal")));
        assert!(d.remediation[1].text.contains("in the Provisioner"));
    }

    /// A NodeClaim's describe: its node and NodePool are named; without a node, the command
    /// looks it up through the NodeClaim.
    #[test]
    fn a_nodeclaim_names_its_node_and_pool() {
        let text = "Name:         general-purpose-8v2mx\nLabels:       karpenter.sh/nodepool=general-purpose\nAPI Version:  karpenter.sh/v1\nKind:         NodeClaim\nStatus:\n  Node Name:    ip-10-42-7-19.ec2.internal\nEvents:\n  Type    Reason            Age   From       Message\n  ----    ------            ----  ----       -------\n  Normal  Unconsolidatable  2m    karpenter  Can't remove without creating 2 candidates\n";
        let d = &check_only("KW410", text).diagnoses[0];
        assert!(
            d.summary
                .contains("NodeClaim general-purpose-8v2mx (node ip-10-42-7-19.ec2.internal)"),
            "{}",
            d.summary
        );
        assert!(
            d.remediation[1].text.contains("NodePool general-purpose "),
            "{}",
            d.remediation[1].text
        );
        let d = &check_only(
            "KW410",
            "default  4m  Normal  Unconsolidatable  nodeclaim/batch-x9k2q  Can't remove without creating 2 candidates",
        )
        .diagnoses[0];
        assert!(d.remediation[0].command.as_deref().is_some_and(|c| c
            .contains("spec.nodeName=\"$(kubectl get nodeclaim batch-x9k2q -o jsonpath='{.status.nodeName}')\"")));
    }

    #[test]
    fn names_the_count() {
        let report = check_only(
            "KW410",
            "Normal  Unconsolidatable  5m  karpenter  Can't remove without creating 2 candidates",
        );
        assert_eq!(ids(&report), ["KW410"]);
        assert!(report.diagnoses[0].summary.contains("2 new nodes"));
        assert_eq!(
            ids(&check_only(
                "KW410",
                "Can\u{2019}t remove without creating 3 candidates"
            )),
            ["KW410"]
        );
        assert!(ids(&check_only("KW410", "Can't replace with a cheaper node")).is_empty());
    }
}
