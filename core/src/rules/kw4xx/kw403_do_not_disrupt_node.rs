//! KW403 do-not-disrupt-node.

use std::collections::BTreeMap;

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, NodePool, ObjectRef};
use crate::rules::kw4xx::disruption::{
    annotated_by_command, hits, lifted_after, node_or_claim, push_unique, subject_nodepools,
    subject_of, subjects_label, Hits, KubectlOutputs,
};
use crate::rules::text::capitalised;
use crate::rules::version;
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
will not consolidate it or replace it for drift, however underused or outdated it is. Karpenter
reads the Node's annotations once the node has registered (the NodeClaim's only before), and
publishes the `DisruptionBlocked` event on both objects: an event on a NodeClaim usually means
its Node carries the annotation. From v1 the annotation holds back only voluntary disruption
(consolidation, drift); expiry, spot interruption and node repair still replace the node.

Signals: the `DisruptionBlocked` text `disruption is blocked through the
"karpenter.sh/do-not-disrupt" annotation` (v1.0 to v1.1 after `Cannot disrupt Node: `; v1.2+
capitalised `Disruption is blocked through ...`), the v0.3x wording `Disruption is blocked with
the "karpenter.sh/do-not-disrupt" annotation`, and a Node or NodeClaim object carrying the
annotation.

Before v1 the Node annotation `karpenter.sh/do-not-consolidate: "true"` stopped consolidation
only (event `karpenter.sh/do-not-consolidate annotation exists`). When the input later shows the
annotation taken off (`kubectl annotate node <node> karpenter.sh/do-not-disrupt-`), the block is
past: said so, severity info.

## Why it happens
Someone annotated the node to protect it during an investigation or a maintenance window, or
the NodePool's `spec.template.metadata.annotations` puts it on every NodeClaim it creates.

## How to fix
Remove it: `kubectl annotate node <node> karpenter.sh/do-not-disrupt-` (for an event on a
NodeClaim, on its node, `status.nodeName`, and on the NodeClaim if it carries one too); if the NodePool
template sets it, remove it there, or new nodes carry it again.
"#,
};

const SIGNALS: &[&str] = &[
    "karpenter.sh/do-not-disrupt",
    "disruption is blocked",
    "karpenter.sh/do-not-consolidate",
];

const ANNOTATION: &str = "karpenter.sh/do-not-disrupt";
/// Before v1 (v0.2x to v0.37) the Node annotation that stopped consolidation only; its
/// `Unconsolidatable` event reads `karpenter.sh/do-not-consolidate annotation exists`.
const LEGACY_ANNOTATION: &str = "karpenter.sh/do-not-consolidate";

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let kubectl_outputs = KubectlOutputs::new(facts);
    let found = hits(facts, |t| {
        (contains_ignore_ascii_case(t, "disruption is blocked")
            && contains_ignore_ascii_case(t, ANNOTATION))
            || contains_ignore_ascii_case(t, "karpenter.sh/do-not-consolidate annotation exists")
    });
    let legacy = found
        .messages
        .iter()
        .any(|m| contains_ignore_ascii_case(&m.text, LEGACY_ANNOTATION))
        || facts
            .nodes
            .iter()
            .any(|n| legacy_annotated(&n.meta.annotations));
    let mut found = without_removed(facts, found);
    let mut from_objects: Vec<ObjectRef> = Vec::new();
    let mut evidence: Vec<Evidence> = Vec::new();
    for n in facts
        .nodes
        .iter()
        .filter(|n| annotated(&n.meta.annotations) || legacy_annotated(&n.meta.annotations))
    {
        from_objects.push(ObjectRef::new("Node", None, &n.meta.name));
        evidence.extend(n.meta.evidence.clone());
    }
    for c in facts
        .nodeclaims
        .iter()
        .filter(|c| annotated(&c.meta.annotations))
    {
        from_objects.push(ObjectRef::new(
            if c.is_machine { "Machine" } else { "NodeClaim" },
            None,
            &c.meta.name,
        ));
        evidence.extend(c.meta.evidence.clone());
    }
    // `kubectl annotate node <n> karpenter.sh/do-not-disrupt=true` in the shell history, not
    // taken off again further down.
    let mut from_command = false;
    for kind in ["Node", "NodeClaim"] {
        for (name, at, _) in annotated_by_command(facts, kind, ANNOTATION) {
            if lifted_after(&kubectl_outputs, kind, None, &name, Some(ANNOTATION), &at).is_some() {
                continue;
            }
            let object = ObjectRef::new(kind, None, &name);
            if !from_objects.contains(&object) && !found.subjects.contains(&object) {
                from_command = true;
            }
            from_objects.push(object);
            evidence.push(at);
        }
    }
    for o in from_objects {
        push_unique(&mut found.subjects, o);
    }
    let pools = protecting_pools(facts, &found.subjects);
    if found.is_empty() && found.subjects.is_empty() && pools.is_empty() {
        return Vec::new();
    }
    let inferred = found.is_empty();
    // Taken off later in the input (`kubectl annotate node <n> karpenter.sh/do-not-disrupt-`):
    // the block is past.
    let mut lifted: Vec<Evidence> = Vec::new();
    let blocked_at: Vec<(&ObjectRef, Evidence)> = found
        .subjects
        .iter()
        .filter_map(|s| {
            let last = found
                .messages
                .iter()
                .filter(|m| subject_of(m).as_ref() == Some(s))
                .map(|m| m.evidence.clone())
                .chain(object_evidence(facts, s))
                .max_by_key(|e| e.line)?;
            Some((s, last))
        })
        .collect();
    let all_lifted = !blocked_at.is_empty()
        && pools.is_empty()
        && blocked_at.iter().all(|(s, at)| {
            let found = [ANNOTATION, LEGACY_ANNOTATION]
                .iter()
                .find_map(|a| lifted_after(&kubectl_outputs, &s.kind, None, &s.name, Some(a), at));
            if let Some(e) = &found {
                lifted.push(e.clone());
            }
            found.is_some()
        });
    let annotation = if legacy
        && !found
            .messages
            .iter()
            .any(|m| contains_ignore_ascii_case(&m.text, ANNOTATION))
    {
        LEGACY_ANNOTATION
    } else {
        ANNOTATION
    };
    for pool in &pools {
        evidence.extend(pool.meta.evidence.clone());
    }
    // NodeClaims named only by an event, not shown carrying the annotation themselves.
    let claims_by_event: Vec<&ObjectRef> = found
        .subjects
        .iter()
        .filter(|s| s.kind == "NodeClaim")
        .filter(|s| {
            !facts
                .nodeclaims
                .iter()
                .any(|c| c.meta.name == s.name && annotated(&c.meta.annotations))
        })
        .collect();
    let mut summary = if found.subjects.is_empty() && !pools.is_empty() {
        format!(
            "{} puts the {ANNOTATION} annotation on every node it launches, so Karpenter will neither consolidate them nor replace them for drift.",
            pools_label(&pools)
        )
    } else {
        let mut s = if all_lifted {
            format!(
                "{} carried the {annotation} annotation, which kept Karpenter from disrupting it. The input then shows the annotation taken off: that block is past, and Karpenter can disrupt it at its next pass.",
                capitalised(&subjects_label(&found.subjects))
            )
        } else if annotation == LEGACY_ANNOTATION {
            format!(
                "{} carries the {LEGACY_ANNOTATION} annotation (before v1), so Karpenter will not consolidate it.",
                capitalised(&subjects_label(&found.subjects))
            )
        } else if !claims_by_event.is_empty() && claims_by_event.len() == found.subjects.len() {
            // A NodeClaim's event: Karpenter reads the Node's annotations once the node has
            // registered (the NodeClaim's only before), and publishes the event on both.
            format!(
                "The node of {} carries the {ANNOTATION} annotation (Karpenter reads the Node's annotations once it has registered, the NodeClaim's before), so Karpenter will neither consolidate it nor replace it for drift.",
                subjects_label(&found.subjects)
            )
        } else {
            format!(
                "{} carries the {ANNOTATION} annotation itself (not a pod's), so Karpenter will neither consolidate it nor replace it for drift.",
                capitalised(&subjects_label(&found.subjects))
            )
        };
        // v0.3x's wording (`blocked with the`) or a known pre-v1 version: expiry was voluntary
        // then, and the annotation held it back too.
        let pre_v1 = version::at_least(facts, 1, 0) == Some(false)
            || found
                .messages
                .iter()
                .any(|m| contains_ignore_ascii_case(&m.text, "blocked with the"));
        if annotation == ANNOTATION && !all_lifted && !pre_v1 {
            s.push_str(" From v1 it holds back only these voluntary disruptions: expiry (expireAfter), spot interruption and node repair still replace the node.");
        }
        if !pools.is_empty() {
            s.push_str(&format!(
                " {} puts it on every node it launches (spec.template.metadata.annotations), so removing it from the node alone does not last.",
                pools_label(&pools)
            ));
        }
        s
    };
    if inferred && from_command {
        summary.push_str(
            " (Inferred from the `kubectl annotate` command in the input; no event in the input names it.)",
        );
    } else if inferred {
        summary
            .push_str(" (Inferred from the objects' annotations; no event in the input names it.)");
    }
    let mut steps = Vec::new();
    for pool in &pools {
        let (kind, path) = if pool.is_provisioner {
            ("provisioner", "/spec/annotations")
        } else {
            ("nodepool", "/spec/template/metadata/annotations")
        };
        steps.push(Remediation::command(
            format!(
                "Remove the annotation from the template of {} {} (nodes launched before keep their copy):",
                if pool.is_provisioner { "Provisioner" } else { "NodePool" },
                pool.meta.name
            ),
            // JSON Pointer writes `/` inside a key as `~1`.
            format!(
                r#"kubectl patch {kind} {} --type json -p '[{{"op":"remove","path":"{path}/{}"}}]'"#,
                pool.meta.name,
                ANNOTATION.replace('/', "~1")
            ),
        ));
    }
    let nodes: Vec<&ObjectRef> = found.subjects.iter().filter(|s| s.kind == "Node").collect();
    let claims: Vec<&ObjectRef> = found
        .subjects
        .iter()
        .filter(|s| s.kind == "NodeClaim")
        .collect();
    if nodes.is_empty() && claims.is_empty() {
        steps.push(Remediation::command(
            "Remove the annotation from the node once it may go:",
            match pools.as_slice() {
                [pool] => format!(
                    "kubectl annotate node -l karpenter.sh/nodepool={} {ANNOTATION}-",
                    pool.meta.name
                ),
                _ => format!("kubectl annotate node <node> {ANNOTATION}-"),
            },
        ));
    }
    for n in nodes {
        steps.push(Remediation::command(
            format!("Remove the annotation from node {}:", n.name),
            format!("kubectl annotate node {} {annotation}-", n.name),
        ));
    }
    for c in claims {
        if claims_by_event.contains(&c) {
            // The annotation is on the claim's Node (or, before it registered, the claim).
            let node = facts
                .nodeclaims
                .iter()
                .find(|k| k.meta.name == c.name)
                .and_then(|k| k.node_name.clone())
                .unwrap_or_else(|| {
                    format!(
                        "\"$(kubectl get nodeclaim {} -o jsonpath='{{.status.nodeName}}')\"",
                        c.name
                    )
                });
            steps.push(Remediation::command(
                format!(
                    "Remove the annotation from the node of NodeClaim {} (and from the NodeClaim, if it carries one too):",
                    c.name
                ),
                format!(
                    "kubectl annotate node {node} {ANNOTATION}-\nkubectl annotate nodeclaim {} {ANNOTATION}-",
                    c.name
                ),
            ));
        } else {
            steps.push(Remediation::command(
                format!("Remove the annotation from NodeClaim {}:", c.name),
                format!("kubectl annotate nodeclaim {} {ANNOTATION}-", c.name),
            ));
        }
    }
    if pools.is_empty() {
        // The nodes' NodePool (label, NodeClaim, generated name), when known: show its template.
        let own_pool = match subject_nodepools(facts, &found.subjects).as_slice() {
            [one] if annotation != LEGACY_ANNOTATION => Some(one.clone()),
            _ => None,
        };
        steps.push(match own_pool {
            Some(pool) => Remediation::command(
                format!("If NodePool {pool}'s template sets {ANNOTATION} (the output names it), remove it there, or every new node is protected again:"),
                format!("kubectl get nodepool {pool} -o jsonpath='{{.spec.template.metadata.annotations}}{{\"\\n\"}}'"),
            ),
            None if annotation == LEGACY_ANNOTATION => Remediation::text(format!("If the Provisioner's spec.annotations (NodePool: spec.template.metadata.annotations) sets {annotation}, remove it there, or every new node is protected again.")),
            None => Remediation::text(format!("If the NodePool's spec.template.metadata.annotations sets {ANNOTATION}, remove it there, or every new node is protected again.")),
        });
    }
    let subject = found.subjects.first().cloned().or_else(|| {
        pools
            .first()
            .map(|p| ObjectRef::new("NodePool", None, &p.meta.name))
    });
    if all_lifted {
        steps = vec![Remediation::command(
            "Nothing to undo: check that the node no longer carries it, and that no NodePool template puts it back:",
            format!(
                "kubectl get node {} -o jsonpath='{{.metadata.annotations}}{{\"\\n\"}}'",
                found
                    .subjects
                    .first()
                    .map_or("<node>", |s| s.name.as_str())
            ),
        )];
    }
    let pool_names: Vec<String> = if pools.is_empty() {
        subject_nodepools(facts, &found.subjects)
    } else {
        pools.iter().map(|p| p.meta.name.clone()).collect()
    };
    let d = Diagnosis::new(&META, summary)
        .with_object(subject.as_ref())
        .with_node_pools(&pool_names)
        .with_confidence(if inferred {
            Confidence::Medium
        } else {
            Confidence::High
        })
        .with_messages_per_object(found.messages.iter().copied(), &subject_of)
        .with_evidence(evidence)
        .with_evidence(lifted)
        .with_remediation(steps);
    vec![if all_lifted {
        d.with_severity(Severity::Info)
    } else {
        d
    }]
}

/// Where the input shows the object itself (a Node or NodeClaim with the annotation).
fn object_evidence(facts: &Facts, s: &ObjectRef) -> Option<Evidence> {
    node_or_claim(facts, s)?.0.evidence.clone()
}

fn legacy_annotated(annotations: &BTreeMap<String, String>) -> bool {
    annotations.get(LEGACY_ANNOTATION).map(String::as_str) == Some("true")
}

/// The messages about a Node or NodeClaim whose annotations the input shows in full without
/// the annotation: removed since (the describe keeps the events of when it was there).
fn without_removed<'a>(facts: &Facts, found: Hits<'a>) -> Hits<'a> {
    let removed = |s: &ObjectRef| {
        let meta = match s.kind.as_str() {
            "Node" => facts
                .nodes
                .iter()
                .find(|n| n.meta.name == s.name)
                .map(|n| &n.meta),
            "NodeClaim" => facts
                .nodeclaims
                .iter()
                .find(|c| c.meta.name == s.name)
                .map(|c| &c.meta),
            _ => None,
        };
        // No annotation at all means the paste left the Annotations section out (a Karpenter
        // node always has some: karpenter.sh/nodepool-hash, node.alpha.kubernetes.io/ttl), not
        // that the one the event names is gone.
        meta.is_some_and(|m| {
            m.annotations_known()
                && !m.annotations.is_empty()
                && !m.annotations.contains_key(ANNOTATION)
                && !m.annotations.contains_key(LEGACY_ANNOTATION)
        })
    };
    let mut out = Hits::default();
    for m in found.messages {
        let subject = subject_of(m);
        if subject.as_ref().is_some_and(removed) {
            continue;
        }
        if let Some(s) = subject {
            push_unique(&mut out.subjects, s);
        }
        out.messages.push(m);
    }
    out
}

fn annotated(annotations: &BTreeMap<String, String>) -> bool {
    annotations.get(ANNOTATION).map(String::as_str) == Some("true")
}

/// The NodePools whose template puts the annotation on their nodes: those of the blocked
/// nodes when the facts tell their NodePool, otherwise every such NodePool in the input.
fn protecting_pools<'a>(facts: &'a Facts, subjects: &[ObjectRef]) -> Vec<&'a NodePool> {
    let pool_of = |s: &ObjectRef| -> Option<&str> {
        let by_node = facts
            .nodes
            .iter()
            .find(|n| s.kind == "Node" && n.meta.name == s.name)
            .and_then(|n| n.nodepool());
        let by_claim = facts
            .nodeclaims
            .iter()
            .find(|c| match s.kind.as_str() {
                "Node" => c.node_name.as_deref() == Some(s.name.as_str()),
                _ => c.meta.name == s.name,
            })
            .and_then(|c| c.nodepool.as_deref());
        by_node.or(by_claim)
    };
    let known: Vec<&str> = subjects.iter().filter_map(pool_of).collect();
    facts
        .nodepools
        .iter()
        .filter(|p| annotated(&p.template_annotations))
        .filter(|p| known.is_empty() || known.contains(&p.meta.name.as_str()))
        .collect()
}

fn pools_label(pools: &[&NodePool]) -> String {
    let names: Vec<String> = pools
        .iter()
        .map(|p| {
            let kind = if p.is_provisioner {
                "Provisioner"
            } else {
                "NodePool"
            };
            format!("{kind} {}", p.meta.name)
        })
        .collect();
    names.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Meta, Node, NodePool};
    use crate::testing::{check_only, ids};

    #[test]
    fn an_annotation_removed_since_is_history() {
        let describe = |annotations: &str| {
            format!(
                "Name:               ip-10-0-12-34.eu-west-1.compute.internal
Roles:              <none>
Labels:             karpenter.sh/nodepool=general
                    karpenter.sh/initialized=true
Annotations:        {annotations}
Taints:             <none>
Unschedulable:      false
Events:
  Type    Reason             Age                From       Message
  ----    ------             ----               ----       -------
  Normal  DisruptionBlocked  40m (x12 over 3h)  karpenter  Disruption is blocked through the \"karpenter.sh/do-not-disrupt\" annotation
"
            )
        };
        let removed = describe(
            "karpenter.sh/nodepool-hash: 123\n                    node.alpha.kubernetes.io/ttl: 0",
        );
        assert_eq!(ids(&check_only("KW403", &removed)), [] as [&str; 0]);
        let there = describe("karpenter.sh/do-not-disrupt: true\n                    karpenter.sh/nodepool-hash: 123");
        assert_eq!(ids(&check_only("KW403", &there)), ["KW403"]);
    }

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

    #[test]
    fn annotated_by_a_command_in_the_shell_history() {
        let facts = |text: &str| crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        for text in [
            "$ kubectl annotate --overwrite node ip-10-0-9-9 karpenter.sh/do-not-disrupt=true\nnode/ip-10-0-9-9 annotated\n",
            "$ kubectl annotate nodes/ip-10-0-9-9 karpenter.sh/do-not-disrupt=true --overwrite\n",
        ] {
            let d = check(&facts(text));
            assert_eq!(d.len(), 1, "{text}");
            assert!(d[0].summary.contains("Node ip-10-0-9-9 carries"), "{}", d[0].summary);
            assert!(d[0].summary.contains("`kubectl annotate` command"), "{}", d[0].summary);
            assert_eq!(
                d[0].remediation[0].command.as_deref(),
                Some("kubectl annotate node ip-10-0-9-9 karpenter.sh/do-not-disrupt-")
            );
        }
        for text in [
            // Taken off again further down, in another argument order.
            "$ kubectl annotate --overwrite node ip-10-0-9-9 karpenter.sh/do-not-disrupt=true\n$ kubectl annotate nodes/ip-10-0-9-9 --overwrite karpenter.sh/do-not-disrupt-\n",
            "$ kubectl annotate --overwrite node ip-10-0-9-9 karpenter.sh/do-not-disrupt=false\n",
            "$ kubectl annotate --overwrite node ip-10-0-9-9 example.com/owner=team-a\n",
        ] {
            assert!(check(&facts(text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn the_nodes_own_nodepool_template_is_the_one_to_check() {
        let text = r#"Name:               ip-10-11-64-140.ap-south-1.compute.internal
Roles:              <none>
Labels:             karpenter.sh/nodepool=etl
Annotations:        karpenter.sh/do-not-disrupt: true
Taints:             <none>
Events:
  Type    Reason             Age                  From       Message
  ----    ------             ----                 ----       -------
  Normal  DisruptionBlocked  4m31s (x26 over 2h)  karpenter  Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation
"#;
        let d = &check_only("KW403", text).diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("etl"));
        assert_eq!(
            d.remediation.last().unwrap().command.as_deref(),
            Some("kubectl get nodepool etl -o jsonpath='{.spec.template.metadata.annotations}{\"\\n\"}'")
        );
    }

    #[test]
    fn a_describe_cut_before_its_annotations_does_not_hide_the_event() {
        let event = r#"Normal  DisruptionBlocked  4m  karpenter  Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation"#;
        let cut = crate::testing::karpenter_node_describe("on-demand", event);
        assert_eq!(ids(&check_only("KW403", &cut)), ["KW403"]);
        // Its annotations shown, without this one: it was taken off since.
        let removed = cut.replace(
            "Taints:",
            "Annotations:        karpenter.sh/nodepool-hash: 1\n                    node.alpha.kubernetes.io/ttl: 0\nTaints:",
        );
        assert!(ids(&check_only("KW403", &removed)).is_empty());
    }

    #[test]
    fn nodepool_template_sets_it() {
        let pool = |name: &str, value: &str| NodePool {
            meta: Meta {
                name: name.into(),
                ..Default::default()
            },
            template_annotations: [(ANNOTATION.to_string(), value.to_string())].into(),
            ..Default::default()
        };
        let node = |name: &str, pool: &str| Node {
            meta: Meta {
                name: name.into(),
                labels: [("karpenter.sh/nodepool".to_string(), pool.to_string())].into(),
                ..Default::default()
            },
            ..Default::default()
        };
        // The NodePool alone: every node it launches is protected.
        let mut facts = Facts::default();
        facts.nodepools.push(pool("gpu", "true"));
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].confidence, Confidence::Medium);
        assert!(
            d[0].summary.starts_with("NodePool gpu puts"),
            "{}",
            d[0].summary
        );
        assert_eq!(
            d[0].remediation[0].command.as_deref(),
            Some(
                r#"kubectl patch nodepool gpu --type json -p '[{"op":"remove","path":"/spec/template/metadata/annotations/karpenter.sh~1do-not-disrupt"}]'"#
            )
        );
        assert_eq!(
            d[0].remediation[1].command.as_deref(),
            Some("kubectl annotate node -l karpenter.sh/nodepool=gpu karpenter.sh/do-not-disrupt-")
        );
        // A blocked node of another NodePool: only its own pool is named, and it sets nothing.
        facts.nodepools.push(pool("general", "false"));
        let mut blocked = node("ip-10-0-1-1", "general");
        blocked.meta.annotations = [(ANNOTATION.to_string(), "true".to_string())].into();
        facts.nodes.push(blocked);
        let d = check(&facts);
        assert!(!d[0].summary.contains("NodePool gpu"), "{}", d[0].summary);
        assert!(d[0].remediation.iter().all(|r| !r
            .command
            .as_deref()
            .unwrap_or("")
            .contains("patch")));
        // A blocked node of the protecting pool: the pool is the lasting fix.
        facts.nodes.push(node("ip-10-0-2-2", "gpu"));
        facts.nodes[1].meta.annotations = [(ANNOTATION.to_string(), "true".to_string())].into();
        facts.nodes.remove(0);
        let d = check(&facts);
        assert!(
            d[0].summary.contains("NodePool gpu puts it on every node"),
            "{}",
            d[0].summary
        );
        // Nothing set: quiet.
        let mut facts = Facts::default();
        facts.nodepools.push(pool("general", "false"));
        assert!(check(&facts).is_empty());
    }
}
