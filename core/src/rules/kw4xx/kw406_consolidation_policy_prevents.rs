//! KW406 consolidation-policy-prevents.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{Facts, Message, NodePool, ObjectRef};
use crate::rules::kw4xx::disruption::{
    era_before_v1, grouped_hits, nodepool_lookup_command, subject_nodepools, subject_of,
    subjects_label, Endings,
};
use crate::rules::text::{contains_any, quoted_after, token_after};
use crate::rules::version::at_least;
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW406",
    slug: "consolidation-policy-prevents",
    title: "The NodePool's consolidation policy keeps underused nodes",
    severity: Severity::Info,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The NodePool is configured not to consolidate nodes that still run pods (or not to
consolidate at all), so an underused node stays. This is the configuration working as written.

Signals: the `Unconsolidatable` texts `NodePool "<np>" has consolidation policy WhenEmpty, but
node is not empty` (v1.14), `NodePool "<np>" has non-empty consolidation disabled` (v1.0 to
v1.13), `NodePool "<np>" has consolidation disabled` (`consolidateAfter: Never`), the v1alpha5
`provisioner <p> has consolidation disabled` (v0.2x to v0.31, `spec.consolidation.enabled` not
true); and the NodePool spec itself
(`consolidationPolicy: WhenEmpty`, `consolidateAfter: Never`).

Before v0.32 a Provisioner consolidates only with `spec.consolidation.enabled: true`: the event
`provisioner <p> has consolidation disabled`, or the Provisioner spec alone (no
`consolidation`, or `enabled: false`, with or without `ttlSecondsAfterEmpty`), inferred with
medium confidence.

## Why it happens
`consolidationPolicy: WhenEmpty` removes only empty nodes; `consolidateAfter: Never` disables
consolidation. Both are often chosen to avoid churn for stateful or slow-starting workloads.

## How to fix
If underused nodes should be packed, set `consolidationPolicy: WhenEmptyOrUnderutilized`
(`WhenUnderutilized` on the v1beta1 API, v0.32 to v0.37) and a `consolidateAfter` duration; keep
disruption under control with `spec.disruption.budgets` and PodDisruptionBudgets instead.
"#,
};

const SIGNALS: &[&str] = &[
    "has consolidation policy whenempty",
    "has non-empty consolidation disabled",
    "has consolidation disabled",
];

struct Group<'a> {
    nodepool: Option<String>,
    disabled: bool,
    /// A v1alpha5 Provisioner (before v0.32), not a NodePool.
    provisioner: bool,
    subjects: Vec<ObjectRef>,
    messages: Vec<&'a Message>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let endings = Endings::new(facts);
    let groups: Vec<Group<'_>> = grouped_hits(facts, |t| {
        contains_any(t, SIGNALS).then(|| {
            let provisioner = find_ignore_ascii_case(t, "provisioner ").is_some()
                && find_ignore_ascii_case(t, "nodepool ").is_none();
            let nodepool = if provisioner {
                // v0.2x printed the Provisioner's name unquoted.
                quoted_after(t, "provisioner ").or_else(|| {
                    token_after(t, "provisioner ").filter(|w| !w.eq_ignore_ascii_case("has"))
                })
            } else {
                quoted_after(t, "nodepool ").or_else(|| unquoted_name_after(t, "nodepool "))
            };
            // `has consolidation disabled` (consolidateAfter: Never) versus the WhenEmpty forms.
            (
                nodepool,
                contains_any(t, &["has consolidation disabled"]),
                provisioner,
            )
        })
    })
    .into_iter()
    .map(|(key, hits)| (key, endings.without_later_removal(hits)))
    .filter(|(_, hits)| !hits.is_empty())
    .map(|((nodepool, disabled, provisioner), hits)| Group {
        // The text's name unreadable: the nodes' own NodePool label, the NodeClaim's pool.
        nodepool: nodepool.or_else(
            || match subject_nodepools(facts, &hits.subjects).as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            },
        ),
        disabled,
        provisioner,
        subjects: hits.subjects,
        messages: hits.messages,
    })
    .collect();
    let mut out: Vec<Diagnosis> = groups.iter().map(|g| from_messages(facts, g)).collect();
    for np in &facts.nodepools {
        if groups
            .iter()
            .any(|g| g.nodepool.as_deref() == Some(np.meta.name.as_str()))
        {
            continue;
        }
        if let Some(d) = from_spec(facts, np) {
            out.push(d);
        }
    }
    out
}

/// `consolidationPolicy: WhenEmpty, consolidateAfter: 5m` as the spec writes it.
fn spec_quote(np: &NodePool) -> Option<String> {
    let parts: Vec<String> = [
        np.disruption
            .consolidation_policy
            .as_ref()
            .map(|p| format!("consolidationPolicy: {p}")),
        np.disruption
            .consolidate_after
            .as_ref()
            .map(|a| format!("consolidateAfter: {a}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// A NodePool name written without ASCII double quotes: typographic quotes (a paste through a
/// chat tool or a document), single quotes, or none.
fn unquoted_name_after(text: &str, marker: &str) -> Option<String> {
    let start = find_ignore_ascii_case(text, marker)? + marker.len();
    let word = text[start..].split_whitespace().next()?;
    let name = word.trim_matches([
        '\u{201c}', '\u{201d}', '\u{2018}', '\u{2019}', '\'', '"', ',',
    ]);
    let is_name = !name.is_empty()
        && !name.eq_ignore_ascii_case("has")
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    is_name.then(|| name.to_string())
}

fn from_messages(facts: &Facts, g: &Group<'_>) -> Diagnosis {
    if g.provisioner {
        return from_provisioner_message(facts, g);
    }
    let Some(np) = g.nodepool.as_deref() else {
        return unnamed_nodepool(facts, g);
    };
    let several = several_nodes(&g.subjects);
    let mut summary = if g.disabled {
        format!(
            "NodePool {np} has consolidation disabled (consolidateAfter: Never), so Karpenter does not consolidate {}.",
            subjects_label(&g.subjects)
        )
    } else {
        format!(
            "NodePool {np} only consolidates empty nodes (consolidationPolicy: WhenEmpty), and {} {}, so {} however underused {}.",
            subjects_label(&g.subjects),
            if several { "still run pods" } else { "still runs pods" },
            if several { "they stay" } else { "it stays" },
            if several { "they are" } else { "it is" },
        )
    };
    if let Some(quote) = facts.nodepool(np).and_then(spec_quote) {
        summary.push_str(&format!(" Its spec.disruption: {quote}."));
    }
    summary.push_str(" This is the configuration working as written.");
    Diagnosis::new(&META, summary)
        .with_object(g.subjects.first())
        .with_node_pool(g.nodepool.as_deref())
        .with_messages_per_object(g.messages.iter().copied(), &subject_of)
        .with_evidence(facts.nodepool(np).and_then(|p| p.meta.evidence.clone()))
        .with_remediation(fix(facts, np, g.disabled))
}

/// Whether the subjects are several machines: several Nodes, or several NodeClaims when no
/// Node is named (a node and its NodeClaim are one).
fn several_nodes(subjects: &[ObjectRef]) -> bool {
    let nodes = subjects.iter().filter(|s| s.kind == "Node").count();
    if nodes > 0 {
        nodes > 1
    } else {
        subjects.len() > 1
    }
}

fn from_spec(facts: &Facts, np: &NodePool) -> Option<Diagnosis> {
    if np.is_provisioner {
        return from_provisioner_spec(np);
    }
    let policy = np.disruption.consolidation_policy.as_deref();
    let after = np.disruption.consolidate_after.as_deref();
    let when_empty = policy == Some("WhenEmpty");
    let never = after == Some("Never");
    if !when_empty && !never {
        return None;
    }
    let name = &np.meta.name;
    let quote = spec_quote(np).unwrap_or_default();
    let summary = if never {
        format!(
            "NodePool {name} disables consolidation ({quote}): Karpenter never consolidates its nodes, empty or not. Inferred from the NodePool spec."
        )
    } else {
        format!(
            "NodePool {name} only consolidates empty nodes ({quote}): a node that still runs pods stays however underused it is. Inferred from the NodePool spec."
        )
    };
    Some(
        Diagnosis::new(&META, summary)
            .with_confidence(Confidence::Medium)
            .with_object(Some(&ObjectRef::new("NodePool", None, name)))
            .with_node_pool(Some(name))
            .with_evidence(np.meta.evidence.clone())
            .with_remediation(fix(facts, name, never)),
    )
}

/// The text's NodePool name is unreadable and the input shows no label naming it: the fix
/// starts with the command that prints it.
fn unnamed_nodepool(facts: &Facts, g: &Group<'_>) -> Diagnosis {
    let on = subjects_label(&g.subjects);
    let summary = if g.disabled {
        format!("The node's NodePool has consolidation disabled (consolidateAfter: Never), so Karpenter does not consolidate {on}. This is the configuration working as written.")
    } else {
        format!(
            "The node's NodePool only consolidates empty nodes (consolidationPolicy: WhenEmpty), and {on} {}. This is the configuration working as written.",
            if several_nodes(&g.subjects) {
                "still run pods, so they stay however underused they are"
            } else {
                "still runs pods, so it stays however underused it is"
            }
        )
    };
    let mut steps = vec![Remediation::command(
        "Find the node's NodePool (the karpenter.sh/nodepool label):",
        nodepool_lookup_command(facts, &g.subjects),
    )];
    steps.extend(fix(facts, "<nodepool>", g.disabled));
    Diagnosis::new(&META, summary)
        .with_object(g.subjects.first())
        .with_messages_per_object(g.messages.iter().copied(), &subject_of)
        .with_remediation(steps)
}

/// The v1alpha5 form (before v0.32): consolidation was a Provisioner switch,
/// `spec.consolidation.enabled`, exclusive with `ttlSecondsAfterEmpty`.
fn from_provisioner_message(facts: &Facts, g: &Group<'_>) -> Diagnosis {
    let p = g.nodepool.as_deref().unwrap_or("<provisioner>");
    let mut summary = format!(
        "Provisioner {p} has consolidation disabled (spec.consolidation.enabled is not true), so Karpenter does not consolidate {}; with ttlSecondsAfterEmpty it removes only empty nodes.",
        subjects_label(&g.subjects)
    );
    let spec = facts.nodepool(p).filter(|np| np.is_provisioner);
    if let Some(np) = spec {
        summary.push_str(&format!(" Its spec: {}.", provisioner_quote(np)));
    }
    summary.push_str(" This is the configuration working as written (Karpenter before v0.32).");
    let mut steps = provisioner_fix(p);
    if spec.is_some_and(|np| !np.meta.from_table) {
        steps.remove(0);
    }
    Diagnosis::new(&META, summary)
        .with_object(g.subjects.first())
        .with_messages_per_object(g.messages.iter().copied(), &subject_of)
        .with_evidence(spec.and_then(|np| np.meta.evidence.clone()))
        .with_remediation(steps)
}

/// `consolidation.enabled: false; ttlSecondsAfterEmpty: 30` as a Provisioner writes them.
fn provisioner_quote(np: &NodePool) -> String {
    let mut parts = vec![match np.disruption.consolidation_enabled {
        Some(e) => format!("consolidation.enabled: {e}"),
        None => "no spec.consolidation".to_string(),
    }];
    if let Some(ttl) = &np.disruption.consolidate_after {
        parts.push(format!(
            "ttlSecondsAfterEmpty: {}",
            ttl.trim_end_matches('s')
        ));
    }
    parts.join("; ")
}

/// A v1alpha5 Provisioner (before v0.32) consolidates only with `consolidation.enabled: true`;
/// otherwise `ttlSecondsAfterEmpty` removes empty nodes, or nothing removes underused ones.
fn from_provisioner_spec(np: &NodePool) -> Option<Diagnosis> {
    if np.disruption.consolidation_enabled == Some(true) {
        return None;
    }
    // A `kubectl get provisioners` row shows a name and an age, not the spec: a consolidation
    // setting nothing printed is unknown, not absent.
    if np.meta.from_table
        && np.disruption.consolidation_enabled.is_none()
        && np.disruption.consolidate_after.is_none()
    {
        return None;
    }
    let name = &np.meta.name;
    let quote = provisioner_quote(np);
    let what = match &np.disruption.consolidate_after {
        Some(ttl) => format!(
            "Karpenter removes its nodes only once they are empty ({ttl} after the last pod leaves)"
        ),
        None => "Karpenter removes its nodes neither when empty nor when underused (only ttlSecondsUntilExpired or a manual delete ends them)".to_string(),
    };
    let summary = format!(
        "Provisioner {name} does not consolidate ({quote}): {what}; a node that still runs pods stays however underused it is. Inferred from the Provisioner spec (Karpenter before v0.32)."
    );
    Some(
        Diagnosis::new(&META, summary)
            .with_confidence(Confidence::Medium)
            .with_object(Some(&ObjectRef::new("Provisioner", None, name)))
            .with_node_pool(Some(name))
            .with_evidence(np.meta.evidence.clone())
            .with_remediation(provisioner_fix(name).split_off(1)),
    )
}

/// The first step reads the Provisioner's settings: left out where the input shows them.
fn provisioner_fix(p: &str) -> Vec<Remediation> {
    vec![
        Remediation::command(
            "See the Provisioner's consolidation settings:",
            format!(
                "kubectl get provisioner {p} -o jsonpath='{{.spec.consolidation}} {{.spec.ttlSecondsAfterEmpty}}{{\"\\n\"}}'"
            ),
        ),
        Remediation::yaml(
            format!(
                "If underused nodes should be packed, enable it (`kubectl edit provisioner {p}`; remove ttlSecondsAfterEmpty, which cannot be set with it):"
            ),
            "spec:\n  consolidation:\n    enabled: true\n",
        ),
        Remediation::text(
            "Provisioners are the pre-v0.32 API: on v0.32 and later the same switch is a NodePool's spec.disruption.consolidationPolicy.",
        ),
    ]
}

/// `disabled`: the text said `has consolidation disabled`, which a v1beta1 NodePool (v0.32 to
/// v0.37) reports only for `consolidationPolicy: WhenUnderutilized` with `consolidateAfter:
/// Never`, so there the fix is to drop consolidateAfter.
fn fix(facts: &Facts, np: &str, disabled: bool) -> Vec<Remediation> {
    // v1beta1 (v0.32 to v0.37) named the policy WhenUnderutilized and allowed
    // consolidateAfter only with WhenEmpty.
    // Unknown version: a NodePool read as karpenter.sh/v1beta1 dates the input, then the
    // input's wording (v0.3x loggers, pre-v1 event texts; a v1-only text keeps v1).
    let pool = facts.nodepool(np);
    let v1beta1 = at_least(facts, 1, 0).map_or_else(
        || {
            pool.and_then(|p| p.meta.api_version.as_deref())
                .map_or(era_before_v1(facts) == Some(true), |a| {
                    a.ends_with("/v1beta1")
                })
        },
        |v1| !v1,
    );
    let drop_after = if v1beta1
        && (disabled || pool.is_some_and(|p| p.disruption.consolidate_after.is_some()))
    {
        "; remove consolidateAfter, which v1beta1 accepts only with WhenEmpty"
    } else {
        ""
    };
    let how = format!(
        "If underused nodes should be packed, let NodePool {np} consolidate them (`kubectl edit nodepool {np}`){drop_after}; keep the pace under control with spec.disruption.budgets:"
    );
    let yaml = if v1beta1 {
        "spec:\n  disruption:\n    consolidationPolicy: WhenUnderutilized\n".to_string()
    } else {
        "spec:\n  disruption:\n    consolidationPolicy: WhenEmptyOrUnderutilized\n    consolidateAfter: 1m\n"
            .to_string()
    };
    let mut steps = Vec::new();
    // The input showing the NodePool's policy (its YAML, or this very jsonpath) has told it.
    if pool.is_none_or(|p| p.disruption.consolidation_policy.is_none()) {
        steps.push(Remediation::command(
            "See the NodePool's disruption settings:",
            format!("kubectl get nodepool {np} -o jsonpath='{{.spec.disruption}}{{\"\\n\"}}'"),
        ));
    }
    steps.push(Remediation::yaml(how, yaml));
    steps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{DisruptionSpec, Meta};
    use crate::testing::{check_only, ids};

    #[test]
    fn every_wording_names_the_nodepool() {
        for text in [
            r#"Normal  Unconsolidatable  5m  karpenter  NodePool "batch" has consolidation policy WhenEmpty, but node is not empty"#,
            r#"Normal  Unconsolidatable  5m  karpenter  NodePool "batch" has non-empty consolidation disabled"#,
            r#"NodePool "batch" has consolidation disabled"#,
        ] {
            let report = check_only("KW406", text);
            assert_eq!(ids(&report), ["KW406"], "{text}");
            let d = &report.diagnoses[0];
            assert!(d.summary.starts_with("NodePool batch"), "{}", d.summary);
            assert_eq!(d.node_pool.as_deref(), Some("batch"));
            assert!(d.remediation[1]
                .yaml
                .as_deref()
                .is_some_and(|y| y.contains("WhenEmptyOrUnderutilized")));
        }
    }

    #[test]
    fn a_name_without_ascii_quotes_or_none_at_all() {
        // Typographic quotes from a chat paste.
        let d = &check_only(
            "KW406",
            "Normal  Unconsolidatable  4m  karpenter  NodePool \u{201c}stateful\u{201d} has consolidation policy WhenEmpty, but node is not empty",
        )
        .diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("stateful"));
        assert!(
            d.summary.starts_with("NodePool stateful only"),
            "{}",
            d.summary
        );
        // No name in the text: the node's label gives it.
        let d = &check_only(
            "KW406",
            &crate::testing::karpenter_node_describe(
                "on-demand",
                "Normal  Unconsolidatable  4m  karpenter  NodePool has consolidation disabled",
            ),
        )
        .diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("general"));
        // Nowhere: the first step prints it.
        let d = &check_only(
            "KW406",
            "default 4m Normal Unconsolidatable node/ip-10-9-9-9.ec2.internal NodePool has consolidation disabled",
        )
        .diagnoses[0];
        assert_eq!(d.node_pool, None);
        assert!(
            d.summary
                .starts_with("The node's NodePool has consolidation disabled"),
            "{}",
            d.summary
        );
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("kubectl get node ip-10-9-9-9.ec2.internal -L karpenter.sh/nodepool")
        );
    }

    #[test]
    fn provisioners_quoted_or_not() {
        for text in [
            r#"Provisioner "batch" has consolidation disabled"#,
            "12m Normal Unconsolidatable node/ip-10-50-1-23 provisioner batch has consolidation disabled",
        ] {
            let report = check_only("KW406", text);
            assert_eq!(ids(&report), ["KW406"], "{text}");
            let d = &report.diagnoses[0];
            assert!(d.summary.starts_with("Provisioner batch"), "{}", d.summary);
            assert!(d.remediation[0]
                .command
                .as_deref()
                .is_some_and(|c| c.starts_with("kubectl get provisioner batch")));
            assert!(d.remediation[1]
                .yaml
                .as_deref()
                .is_some_and(|y| y.contains("enabled: true")));
        }
    }

    fn pool(policy: &str, after: &str) -> NodePool {
        NodePool {
            meta: Meta {
                name: "batch".into(),
                ..Default::default()
            },
            disruption: DisruptionSpec {
                consolidation_policy: Some(policy.into()),
                consolidate_after: Some(after.into()),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn quotes_the_spec_and_reads_it_alone() {
        let mut facts = Facts::default();
        facts.nodepools.push(pool("WhenEmpty", "5m"));
        facts.messages.push(Message {
            text: r#"NodePool "batch" has consolidation policy WhenEmpty, but node is not empty"#
                .into(),
            ..Default::default()
        });
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert!(d[0].summary.contains(
            "Its spec.disruption: consolidationPolicy: WhenEmpty, consolidateAfter: 5m."
        ));
        facts.messages.clear();
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].confidence, Confidence::Medium);
        let mut never = Facts::default();
        never
            .nodepools
            .push(pool("WhenEmptyOrUnderutilized", "Never"));
        assert!(check(&never)[0].summary.contains("never consolidates"));
        let mut fine = Facts::default();
        fine.nodepools.push(pool("WhenEmptyOrUnderutilized", "30s"));
        assert!(check(&fine).is_empty());
        let mut old = Facts {
            karpenter_version: Some("0.37.1".into()),
            ..Default::default()
        };
        old.nodepools.push(pool("WhenEmpty", "30s"));
        // The pool's policy is known: no step asks for it again.
        let steps = &check(&old)[0].remediation;
        assert!(steps.iter().all(|r| r.command.is_none()));
        assert!(steps[0]
            .yaml
            .as_deref()
            .is_some_and(|y| y.contains("WhenUnderutilized\n")));
    }

    /// v0.32-v0.37 report `has consolidation disabled` only for WhenUnderutilized with
    /// `consolidateAfter: Never`; the v1 fix (WhenEmptyOrUnderutilized plus a consolidateAfter)
    /// would not even validate there.
    #[test]
    fn v1beta1_wording_gets_the_v1beta1_fix() {
        let event = "default 4m Normal Unconsolidatable node/ip-10-40-7-201.eu-west-1.compute.internal NodePool \"batch-spot\" has consolidation disabled";
        let old = format!("2024-05-02T03:11:40.118Z\tINFO\tcontroller.disruption\tdisrupting via consolidation delete\t{{\"commit\": \"17dd42b\"}}\n{event}");
        let d = &check_only("KW406", &old).diagnoses[0];
        let step = &d.remediation[1];
        assert_eq!(
            step.yaml.as_deref(),
            Some("spec:\n  disruption:\n    consolidationPolicy: WhenUnderutilized\n")
        );
        assert!(
            step.text.contains("remove consolidateAfter"),
            "{}",
            step.text
        );
        // The event alone does not date the input: the current API's fix.
        let d = &check_only("KW406", event).diagnoses[0];
        assert!(d.remediation[1]
            .yaml
            .as_deref()
            .is_some_and(|y| y.contains("WhenEmptyOrUnderutilized")));
    }

    #[test]
    fn near_misses() {
        for text in [
            "Can't replace with a cheaper node",
            "pdb default/inflate-pdb prevents pod evictions",
        ] {
            assert!(ids(&check_only("KW406", text)).is_empty(), "{text}");
        }
    }
}
