//! KW408 no-cheaper-replacement.

use crate::facts::{Facts, ObjectRef};
use crate::rules::kw4xx::disruption::{
    hits, nodepool_lookup_command, number_after, subject_nodepools, subject_of, subjects_label,
    unescaped, Endings,
};
use crate::rules::text::contains_any;
use crate::rules::text::karpenter_namespace_or_placeholder;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW408",
    slug: "no-cheaper-replacement",
    title: "Consolidation found no cheaper replacement for the node",
    severity: Severity::Info,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Consolidation considered replacing the node with a cheaper one and found none worth it, so the
node stays. This is a normal decision, not a failure.

Signals: the `Unconsolidatable` texts `Can't replace with a cheaper node` (the v1.0 docs:
`can't replace with a lower-priced node`), `SpotToSpotConsolidation is disabled, can't replace
a spot node with a spot node`, and `SpotToSpotConsolidation requires <n> cheaper instance type
options than the current candidate to consolidate, got <m>`.

## Why it happens
The node is already the cheapest type that fits its pods, or the cheaper types are not allowed
by the NodePool. For spot nodes, replacing spot with spot is off unless the
`SpotToSpotConsolidation` feature gate is enabled, and even then Karpenter wants at least 15
cheaper instance types to choose from, so that it does not trade a node for one likely to be
interrupted.
Before v0.32 (Provisioner and Machine, events on `machine/<name>`) there is no feature gate:
spot-to-spot consolidation came in v0.34, so a spot node was only ever deleted, never replaced.

## How to fix
Usually nothing. To let spot nodes consolidate onto cheaper spot: enable the feature gate (helm
`--set settings.featureGates.spotToSpotConsolidation=true`, or the controller's
`FEATURE_GATES=SpotToSpotConsolidation=true`), and allow many instance types (families, sizes,
generations) in the NodePool so that enough cheaper options exist. Right-size pod requests so a
smaller type fits.
"#,
};

const SIGNALS: &[&str] = &[
    "can't replace with a cheaper node",
    "can't replace with a lower-priced node",
    "can\u{2019}t replace with a cheaper node",
    "can\u{2019}t replace with a lower-priced node",
    "spottospotconsolidation is disabled",
    "spottospotconsolidation requires",
];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let found =
        Endings::new(facts).without_later_removal(hits(facts, |t| contains_any(t, SIGNALS)));
    if found.is_empty() {
        return Vec::new();
    }
    let texts: Vec<String> = found
        .messages
        .iter()
        .map(|m| unescaped(&m.text).into_owned())
        .collect();
    let gate_off = texts
        .iter()
        .any(|t| contains_any(t, &["spottospotconsolidation is disabled"]));
    let options = texts.iter().find_map(|t| {
        let required = number_after(t, "SpotToSpotConsolidation requires")?;
        let got = number_after(t, ", got");
        Some((required, got))
    });
    let on = subjects_label(&found.subjects);
    let mut summary = format!(
        "Consolidation keeps {on}: it found no cheaper replacement worth making. This is a normal decision."
    );
    if gate_off {
        summary.push_str(" Replacing a spot node with another spot node is off: the SpotToSpotConsolidation feature gate is disabled.");
    }
    if let Some((required, got)) = options {
        let got = got.map(|g| format!(", found {g}")).unwrap_or_default();
        summary.push_str(&format!(
            " Spot-to-spot consolidation needs at least {required} cheaper instance types to choose from{got}, so that it does not trade the node for one likely to be interrupted."
        ));
    }
    // Before v0.32 (Provisioner, Machine): no feature gate to turn on; spot-to-spot replacement
    // came with v0.34.
    let legacy = crate::rules::version::before_v0_32(facts);
    // The NodePool whose requirements to widen: the nodes' label, the NodeClaim's pool or name,
    // the only one the input shows; else a command that prints it.
    let mut nodepools = subject_nodepools(facts, &found.subjects);
    if let ([], [only]) = (nodepools.as_slice(), facts.nodepools.as_slice()) {
        nodepools.push(only.meta.name.clone());
    }
    // What that NodePool's spec allows (`In` requirements; a table row shows none).
    let allowed = |key: &str| {
        let [one] = nodepools.as_slice() else {
            return None;
        };
        facts
            .nodepool(one)
            .filter(|p| !p.meta.from_table)?
            .requirements
            .iter()
            .find(|r| r.key == key && r.operator == "In")
            .map(|r| r.values.as_slice())
    };
    let pool_on_demand = allowed("karpenter.sh/capacity-type") == Some(&["on-demand".to_string()]);
    if let (Some(types), [np]) = (
        allowed("node.kubernetes.io/instance-type").filter(|t| t.len() <= 3),
        nodepools.as_slice(),
    ) {
        summary.push_str(&format!(
            " NodePool {np} allows only {}: consolidation has {} to replace the node with, so it mostly can only delete it once its pods fit on other nodes.",
            types.join(", "),
            if types.len() == 1 { "no other instance type" } else { "few instance types" }
        ));
    }
    if !gate_off
        && options.is_none()
        && !legacy
        && !pool_on_demand
        && !all_on_demand(facts, &found.subjects)
    {
        summary.push_str(" For a spot node this also says the SpotToSpotConsolidation feature gate is on: with it off, Karpenter says `SpotToSpotConsolidation is disabled` instead.");
    }
    if legacy && !all_on_demand(facts, &found.subjects) {
        summary.push_str(" Before v0.32 (Provisioner and Machine) Karpenter never replaced a spot node with another spot node: spot-to-spot consolidation came in v0.34, behind the SpotToSpotConsolidation feature gate.");
    }
    let pool_kind = if legacy { "Provisioner" } else { "NodePool" };
    let in_pool = match nodepools.as_slice() {
        [] => format!(
            "in the node's {pool_kind} (`{}` prints it; then `kubectl edit {} <name>`)",
            nodepool_lookup_command(facts, &found.subjects),
            pool_kind.to_ascii_lowercase()
        ),
        [one] => format!(
            "in {pool_kind} {one} (`kubectl edit {} {one}`)",
            pool_kind.to_ascii_lowercase()
        ),
        several => format!(
            "in {pool_kind}s {} (`kubectl edit {} <name>`)",
            several.join(", "),
            pool_kind.to_ascii_lowercase()
        ),
    };
    let mut steps = Vec::new();
    if legacy {
        steps.push(Remediation::text(
            "To have spot nodes consolidated onto cheaper spot, upgrade to v0.34 or later (Provisioner becomes NodePool at v0.32, per the upgrade guide) and enable the SpotToSpotConsolidation feature gate.",
        ));
        steps.push(Remediation::yaml(
            format!("Give consolidation cheaper options: allow many families, sizes and generations {in_pool}:"),
            "spec:\n  requirements:\n    - key: karpenter.k8s.aws/instance-category\n      operator: In\n      values: [\"c\", \"m\", \"r\"]\n    - key: karpenter.k8s.aws/instance-generation\n      operator: Gt\n      values: [\"4\"]\n",
        ));
    } else if gate_off {
        // Only this text says the gate is off: with the gate off, a spot candidate gets
        // `SpotToSpotConsolidation is disabled` (kubernetes-sigs/karpenter, consolidation.go),
        // so a bare `Can't replace with a cheaper node` is an on-demand node, or a spot node
        // with the gate on and no cheaper spot type.
        let ns = karpenter_namespace_or_placeholder(facts);
        steps.push(Remediation::command(
            "To let spot nodes consolidate onto cheaper spot, enable the SpotToSpotConsolidation feature gate (helm; or the controller's env FEATURE_GATES=SpotToSpotConsolidation=true):",
            format!("helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --reuse-values --namespace {ns} --set settings.featureGates.spotToSpotConsolidation=true"),
        ));
    }
    if !legacy {
        steps.push(Remediation::yaml(
        format!("Give consolidation cheaper options: allow many families, sizes and generations {in_pool}:"),
        "spec:\n  template:\n    spec:\n      requirements:\n        - key: karpenter.k8s.aws/instance-category\n          operator: In\n          values: [\"c\", \"m\", \"r\"]\n        - key: karpenter.k8s.aws/instance-generation\n          operator: Gt\n          values: [\"4\"]\n",
    ));
    }
    steps.push(Remediation::text(
        "Right-size pod requests: a node full of over-requested pods has no cheaper type that fits.",
    ));
    vec![Diagnosis::new(&META, summary)
        .with_object(found.subjects.first())
        .with_node_pools(&nodepools)
        .with_messages_per_object(found.messages.iter().copied(), &subject_of)
        .with_remediation(steps)]
}

/// Every node the decision is about is known to be on-demand (its `karpenter.sh/capacity-type`
/// label, on the Node or its NodeClaim): the spot-to-spot feature gate is beside the point.
fn all_on_demand(facts: &Facts, subjects: &[ObjectRef]) -> bool {
    let capacity_type = |s: &ObjectRef| {
        let labels = if s.kind.eq_ignore_ascii_case("Node") {
            facts
                .nodes
                .iter()
                .find(|n| n.meta.name == s.name)
                .map(|n| &n.meta.labels)
        } else if s.kind.eq_ignore_ascii_case("NodeClaim") {
            facts
                .nodeclaims
                .iter()
                .find(|c| c.meta.name == s.name)
                .map(|c| &c.meta.labels)
        } else {
            None
        };
        labels.and_then(|l| l.get("karpenter.sh/capacity-type"))
    };
    !subjects.is_empty()
        && subjects
            .iter()
            .all(|s| capacity_type(s).is_some_and(|t| t == "on-demand"))
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids, karpenter_node_describe};

    #[test]
    fn before_v0_32_has_no_feature_gate() {
        let d = &check_only(
            "KW408",
            "default  2m10s  Normal  Unconsolidatable  machine/default-x2lqp  Can't replace with a cheaper node",
        )
        .diagnoses[0];
        assert!(d.summary.contains("came in v0.34"), "{}", d.summary);
        assert!(d.remediation.iter().all(|r| !r
            .command
            .as_deref()
            .unwrap_or("")
            .contains("featureGates")));
    }

    #[test]
    fn every_wording() {
        for text in [
            "Normal  Unconsolidatable  13m (x86 over 23h)  karpenter  Can't replace with a cheaper node",
            "Normal  Unconsolidatable  33s (x3 over 30m)  karpenter  can't replace with a lower-priced node",
            "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node",
            "SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to consolidate, got 3",
        ] {
            assert_eq!(ids(&check_only("KW408", text)), ["KW408"], "{text}");
        }
        let d = &check_only(
            "KW408",
            "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node\nSpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to consolidate, got 3",
        )
        .diagnoses[0];
        assert!(d.summary.contains("feature gate is disabled"));
        assert!(d
            .summary
            .contains("at least 15 cheaper instance types to choose from, found 3"));
        assert!(d.remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.contains("settings.featureGates.spotToSpotConsolidation=true")));
    }

    #[test]
    fn the_spot_gate_only_when_karpenter_says_it_is_off() {
        let describe = |capacity_type: &str| {
            karpenter_node_describe(
                capacity_type,
                "Normal  Unconsolidatable   12m (x15 over 3h)    karpenter  Can't replace with a cheaper node",
            )
        };
        let gate = |report: &crate::report::Report| {
            report.diagnoses[0].remediation.iter().any(|r| {
                r.command
                    .as_deref()
                    .is_some_and(|c| c.contains("spotToSpotConsolidation"))
            })
        };
        // With the gate off a spot node gets `SpotToSpotConsolidation is disabled`: the bare
        // text says the gate is on already (spot) or beside the point (on-demand).
        assert!(!gate(&check_only("KW408", &describe("on-demand"))));
        assert!(!gate(&check_only("KW408", &describe("spot"))));
        assert!(!gate(&check_only(
            "KW408",
            "Normal  Unconsolidatable  node/ip-10-0-1-2.ec2.internal  Can't replace with a cheaper node"
        )));
        assert!(gate(&check_only(
            "KW408",
            "Normal  Unconsolidatable  node/ip-10-0-1-2.ec2.internal  SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
        )));
    }

    #[test]
    fn the_fix_names_the_nodepool_or_how_to_find_it() {
        let step = |text: &str| {
            let d = check_only("KW408", text).diagnoses.remove(0);
            let step = d
                .remediation
                .iter()
                .find(|r| r.text.contains("cheaper options"))
                .unwrap()
                .text
                .clone();
            (d.node_pool, step)
        };
        // The NodeClaim's generated name.
        let (pool, text) = step("default 14m Normal Unconsolidatable nodeclaim/batch-spot-x7k2p Can't replace with a cheaper node");
        assert_eq!(pool.as_deref(), Some("batch-spot"));
        assert!(
            text.contains("in NodePool batch-spot (`kubectl edit nodepool batch-spot`)"),
            "{text}"
        );
        // The node's label.
        let (pool, _) = step(&karpenter_node_describe(
            "spot",
            "Normal  Unconsolidatable  12m (x15 over 3h)    karpenter  Can't replace with a cheaper node",
        ));
        assert_eq!(pool.as_deref(), Some("general"));
        // Nothing names it: the command that prints it.
        let (pool, text) = step("default 14m Normal Unconsolidatable node/ip-10-20-31-7.eu-west-1.compute.internal Can't replace with a cheaper node");
        assert_eq!(pool, None);
        assert!(
            text.contains("`kubectl get node ip-10-20-31-7.eu-west-1.compute.internal -L karpenter.sh/nodepool` prints it"),
            "{text}"
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            "Can't remove without creating 2 candidates",
            "disrupting node(s) via replace, replacing with spot node",
        ] {
            assert!(ids(&check_only("KW408", text)).is_empty(), "{text}");
        }
    }
}
