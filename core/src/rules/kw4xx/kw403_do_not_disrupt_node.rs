//! KW403 do-not-disrupt-node.

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, ObjectRef};
use crate::rules::kw4xx::disruption::{hits, push_unique, subjects_label};
use crate::rules::text::capitalised;
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW403",
    slug: "do-not-disrupt-node",
    title: "The node's own karpenter.sh/do-not-disrupt annotation keeps it",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The Node (or its NodeClaim) itself carries `karpenter.sh/do-not-disrupt: "true"`: Karpenter
will not consolidate it or replace it for drift, however underused or outdated it is.

Signals: the `DisruptionBlocked` text `disruption is blocked through the
"karpenter.sh/do-not-disrupt" annotation` (v1.0 to v1.1 after `Cannot disrupt Node: `; v1.2+
capitalised `Disruption is blocked through ...`), the v0.3x wording `Disruption is blocked with
the "karpenter.sh/do-not-disrupt" annotation`, and a Node or NodeClaim object carrying the
annotation.

## Why it happens
Someone annotated the node to protect it during an investigation or a maintenance window, or
the NodePool's `spec.template.metadata.annotations` puts it on every NodeClaim it creates.

## How to fix
Remove it: `kubectl annotate node <node> karpenter.sh/do-not-disrupt-` (and on the NodeClaim:
`kubectl annotate nodeclaim <nodeclaim> karpenter.sh/do-not-disrupt-`); if the NodePool
template sets it, remove it there, or new nodes carry it again.
"#,
};

const SIGNALS: &[&str] = &["karpenter.sh/do-not-disrupt", "disruption is blocked"];

const ANNOTATION: &str = "karpenter.sh/do-not-disrupt";

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut found = hits(facts, |t| {
        contains_ignore_ascii_case(t, "disruption is blocked")
            && contains_ignore_ascii_case(t, ANNOTATION)
    });
    let mut from_objects: Vec<ObjectRef> = Vec::new();
    let mut evidence: Vec<Evidence> = Vec::new();
    let annotated = |annotations: &std::collections::BTreeMap<String, String>| {
        annotations.get(ANNOTATION).map(String::as_str) == Some("true")
    };
    for n in facts
        .nodes
        .iter()
        .filter(|n| annotated(&n.meta.annotations))
    {
        from_objects.push(ObjectRef::new("Node", None, &n.meta.name));
        evidence.extend(n.meta.evidence.clone());
    }
    for c in facts
        .nodeclaims
        .iter()
        .filter(|c| annotated(&c.meta.annotations))
    {
        from_objects.push(ObjectRef::new("NodeClaim", None, &c.meta.name));
        evidence.extend(c.meta.evidence.clone());
    }
    if found.is_empty() && from_objects.is_empty() {
        return Vec::new();
    }
    let inferred = found.is_empty();
    for o in from_objects {
        push_unique(&mut found.subjects, o);
    }
    let mut summary = format!(
        "{} carries the {ANNOTATION} annotation itself, so Karpenter will neither consolidate it nor replace it for drift.",
        capitalised(&subjects_label(&found.subjects))
    );
    if inferred {
        summary
            .push_str(" (Inferred from the object's annotation; no event in the input names it.)");
    }
    let mut steps = Vec::new();
    let nodes: Vec<&ObjectRef> = found.subjects.iter().filter(|s| s.kind == "Node").collect();
    let claims: Vec<&ObjectRef> = found
        .subjects
        .iter()
        .filter(|s| s.kind == "NodeClaim")
        .collect();
    if nodes.is_empty() && claims.is_empty() {
        steps.push(Remediation::command(
            "Remove the annotation from the node once it may go:",
            format!("kubectl annotate node <node> {ANNOTATION}-"),
        ));
    }
    for n in nodes {
        steps.push(Remediation::command(
            format!("Remove the annotation from node {}:", n.name),
            format!("kubectl annotate node {} {ANNOTATION}-", n.name),
        ));
    }
    for c in claims {
        steps.push(Remediation::command(
            format!("Remove the annotation from NodeClaim {}:", c.name),
            format!("kubectl annotate nodeclaim {} {ANNOTATION}-", c.name),
        ));
    }
    steps.push(Remediation::text(format!(
        "If the NodePool's spec.template.metadata.annotations sets {ANNOTATION}, remove it there, or every new node is protected again."
    )));
    vec![Diagnosis::new(&META, summary)
        .with_object(found.subjects.first())
        .with_confidence(if inferred {
            Confidence::Medium
        } else {
            Confidence::High
        })
        .with_messages(found.messages.iter().copied())
        .with_evidence(evidence)
        .with_remediation(steps)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Meta, Node};
    use crate::testing::{check_only, ids};

    #[test]
    fn every_grammar() {
        for text in [
            r#"Normal  DisruptionBlocked  2m (x31 over 3h)  karpenter  Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation"#,
            r#"Cannot disrupt Node: disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation"#,
            r#"Normal  DisruptionBlocked  4m59s (x111 over 3h45m)  karpenter  Cannot disrupt Node: Disruption is blocked with the "karpenter.sh/do-not-disrupt" annotation"#,
            r#"1m Normal DisruptionBlocked node/ip-10-0-5-5.ec2.internal Disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation"#,
        ] {
            assert_eq!(ids(&check_only("KW403", text)), ["KW403"], "{text}");
        }
        let d = &check_only(
            "KW403",
            r#"1m Normal DisruptionBlocked node/ip-10-0-5-5.ec2.internal Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation"#,
        )
        .diagnoses[0];
        assert!(
            d.summary
                .starts_with("Node ip-10-0-5-5.ec2.internal carries"),
            "{}",
            d.summary
        );
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("kubectl annotate node ip-10-0-5-5.ec2.internal karpenter.sh/do-not-disrupt-")
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            r#"Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/x)"#,
            "Disruption is blocked by a budget",
            r#"Invalid karpenter.sh/do-not-disrupt annotation: failed to parse "forever" as a duration, ignoring annotation"#,
        ] {
            assert!(ids(&check_only("KW403", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn annotated_node_object() {
        let mut facts = Facts::default();
        facts.nodes.push(Node {
            meta: Meta {
                name: "ip-10-0-9-9".into(),
                annotations: [(ANNOTATION.to_string(), "true".to_string())].into(),
                ..Default::default()
            },
            ..Default::default()
        });
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].confidence, Confidence::Medium);
        assert_eq!(
            d[0].remediation[0].command.as_deref(),
            Some("kubectl annotate node ip-10-0-9-9 karpenter.sh/do-not-disrupt-")
        );
        facts.nodes[0].meta.annotations.clear();
        assert!(check(&facts).is_empty());
    }
}
