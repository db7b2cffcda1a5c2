//! KW205 nodepool-limits-reached.

use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::{
    message_nodepool, quantity_parts, quantity_units, record_of, scheduling_errors_with, Cause,
    InstanceTypeFailure, PodIndex,
};
use crate::rules::version::before_v0_32;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};
use std::collections::BTreeMap;

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW205",
    slug: "nodepool-limits-reached",
    title: "The NodePool has reached its spec.limits",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
A NodePool's `spec.limits` (total cpu, memory, nodes... of the nodes it owns) leaves no room
for another node, so Karpenter will not launch one from it, however Pending the pod is.

Signals: `all available instance types exceed limits for nodepool: "<np>"` (v1.0 to v1.2),
`... exceed limits for nodepool "<np>"` (v1.3 to v1.4), `... exceed limits for nodepool
(NodePool=<np>)` (v1.5+), `node limits have been exhausted for nodepool (NodePool=<np>)`
(`limits.nodes`, v1.11+), the debug log `instance types were excluded because they would breach
limits` (v1.10+; `<n> out of <m> instance types were excluded because they would breach limits`
before), and the v1alpha5 forms `exceed limits for provisioner: "<p>"`, `exceed provisioner
limits`, `<n> out of <m> instance types were excluded because they would breach provisioner
limits`. A `no instance type has enough resources` next to an exclusion line for the same
NodePool is a limits problem too: the types that still fit under the limits are too small.

The diagnosis names the NodePool (from the text, else the only one of the input with limits);
for pre-v0.32 input it speaks of the Provisioner (`spec.limits.resources`) in its title, summary
and fixes.

## Why it happens
`spec.limits` caps what a NodePool may own in total (`status.resources` is the current usage).
Growth of the workload, nodes that consolidation cannot remove, or a limit set once and
forgotten bring the usage to the cap.

## How to fix
Raise `spec.limits` (`kubectl patch nodepool <np> --type merge -p
'{"spec":{"limits":{"cpu":"<more>"}}}'`), or free capacity: remove idle nodes, let
consolidation work (KW4xx explains what blocks it), or move workloads to another NodePool.
"#,
};

const SIGNALS: &[&str] = &[
    "could not schedule pod",
    "failed to schedule pod",
    "exceed limits for",
    "exceed provisioner limits",
    "node limits have been exhausted",
    "would breach limits",
    "would breach provisioner limits",
];

/// What the input says about one NodePool's limits.
#[derive(Default)]
struct PoolLimits<'a> {
    nodepool: Option<String>,
    provisioner: bool,
    /// Every available type exceeds the limits (or the node limit is used up).
    exhausted: bool,
    node_limit: bool,
    /// `(excluded, total)` of the exclusion lines.
    excluded: Option<(u64, u64)>,
    exclusion_seen: bool,
    pods: Vec<ObjectRef>,
    /// The same NodePool reported `no instance type has enough resources`.
    resources_failure: bool,
    messages: Vec<&'a Message>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut pools: Vec<PoolLimits> = Vec::new();
    let index = PodIndex::of(facts);
    let errors = scheduling_errors_with(facts, &index);
    let scheduling_texts: std::collections::BTreeSet<&str> =
        errors.iter().map(|e| e.message.text.as_str()).collect();
    for error in &errors {
        for clause in &error.clauses {
            let pool_of = |pools: &mut Vec<PoolLimits<'_>>| -> usize {
                pool_index(pools, clause.nodepool.as_deref())
            };
            match &clause.cause {
                Cause::Limits | Cause::NodeLimits => {
                    let i = pool_of(&mut pools);
                    let p = &mut pools[i];
                    p.exhausted = true;
                    p.node_limit |= clause.cause == Cause::NodeLimits;
                    p.provisioner |= clause.provisioner
                        || contains_ignore_ascii_case(&clause.reason, "provisioner");
                    if let Some(pod) = &error.pod {
                        if !p.pods.contains(pod) {
                            p.pods.push(pod.clone());
                        }
                    }
                    push_message(&mut p.messages, error.message);
                }
                Cause::InstanceTypes(InstanceTypeFailure {
                    resources: true, ..
                }) => {
                    let i = pool_of(&mut pools);
                    pools[i].resources_failure = true;
                }
                _ => {}
            }
        }
    }
    for m in facts.messages_containing_any(&[
        "would breach limits",
        "would breach provisioner limits",
        "exceed limits for",
        "exceed provisioner limits",
        "node limits have been exhausted",
    ]) {
        if scheduling_texts.contains(m.text.as_str()) || index.about_placed_pod(m) {
            continue;
        }
        let np = message_nodepool(facts, m);
        let i = pool_index(&mut pools, np.as_deref());
        let p = &mut pools[i];
        p.provisioner |= contains_ignore_ascii_case(&m.text, "provisioner limits")
            || contains_ignore_ascii_case(&m.text, "for provisioner");
        if contains_ignore_ascii_case(&m.text, "would breach") {
            p.exclusion_seen = true;
            if let Some(counts) = exclusion_counts(facts, m) {
                let (e, t) = p.excluded.unwrap_or((0, 0));
                p.excluded = Some((e.max(counts.0), t.max(counts.1)));
            }
        } else {
            p.exhausted = true;
            p.node_limit |= contains_ignore_ascii_case(&m.text, "node limits");
        }
        push_message(&mut p.messages, m);
    }
    fold_unnamed(&mut pools);
    pools
        .into_iter()
        .filter(|p| !p.messages.is_empty())
        .map(|p| diagnose(facts, p))
        .collect()
}

/// A line that names no NodePool (an exclusion line of an old release, an event without
/// object) belongs to the only NodePool the other lines name, when there is exactly one.
fn fold_unnamed(pools: &mut Vec<PoolLimits<'_>>) {
    let named: Vec<usize> = (0..pools.len())
        .filter(|&i| pools[i].nodepool.is_some())
        .collect();
    let Some(unnamed) = pools.iter().position(|p| p.nodepool.is_none()) else {
        return;
    };
    let [target] = named.as_slice() else {
        return;
    };
    let target = *target;
    let u = pools.remove(unnamed);
    let target = if unnamed < target { target - 1 } else { target };
    let t = &mut pools[target];
    t.provisioner |= u.provisioner;
    t.exhausted |= u.exhausted;
    t.node_limit |= u.node_limit;
    t.exclusion_seen |= u.exclusion_seen;
    t.resources_failure |= u.resources_failure;
    if t.excluded.is_none() {
        t.excluded = u.excluded;
    }
    for pod in u.pods {
        if !t.pods.contains(&pod) {
            t.pods.push(pod);
        }
    }
    for m in u.messages {
        push_message(&mut t.messages, m);
    }
}

fn pool_index(pools: &mut Vec<PoolLimits<'_>>, np: Option<&str>) -> usize {
    match pools.iter().position(|p| p.nodepool.as_deref() == np) {
        Some(i) => i,
        None => {
            pools.push(PoolLimits {
                nodepool: np.map(str::to_string),
                ..Default::default()
            });
            pools.len() - 1
        }
    }
}

fn push_message<'a>(messages: &mut Vec<&'a Message>, m: &'a Message) {
    if !messages.iter().any(|x| std::ptr::eq(*x, m)) {
        messages.push(m);
    }
}

/// `(excluded, total)` from `<n> out of <m> instance types ...` or the v1.10+ `excluded` /
/// `total` fields.
fn exclusion_counts(facts: &Facts, m: &Message) -> Option<(u64, u64)> {
    let words: Vec<&str> = m.text.split_whitespace().collect();
    if let Some(i) = words.iter().position(|w| *w == "out") {
        if words.get(i + 1) == Some(&"of") && i > 0 {
            let n = words[i - 1]
                .trim_matches(|c: char| !c.is_ascii_digit())
                .parse()
                .ok();
            let t = words.get(i + 2).and_then(|w| w.parse().ok());
            if let (Some(n), Some(t)) = (n, t) {
                return Some((n, t));
            }
        }
    }
    let record = record_of(facts, m)?;
    let num = |k: &str| -> Option<u64> {
        let v = record.fields.get(k)?;
        v.as_u64().or_else(|| v.as_str()?.parse().ok())
    };
    Some((num("excluded")?, num("total")?))
}

/// The title for a pre-v0.32 Provisioner (v1alpha5), which had the same `spec.limits`.
const PROVISIONER_TITLE: &str = "The Provisioner has reached its spec.limits";

fn diagnose(facts: &Facts, mut p: PoolLimits<'_>) -> Diagnosis {
    // A line that names none (`exceed provisioner limits`, an exclusion line of an old
    // release): the only NodePool of the input with limits, else the only one.
    if p.nodepool.is_none() {
        let with_limits: Vec<&str> = facts
            .nodepools
            .iter()
            .filter(|np| !np.limits.is_empty())
            .map(|np| np.meta.name.as_str())
            .collect();
        p.nodepool = match (with_limits.as_slice(), facts.nodepools.as_slice()) {
            ([only], _) => Some(only.to_string()),
            ([], [only]) => Some(only.meta.name.clone()),
            _ => None,
        };
    }
    let pool = p.nodepool.as_deref().and_then(|n| facts.nodepool(n));
    let provisioner =
        p.provisioner || pool.is_some_and(|np| np.is_provisioner) || before_v0_32(facts);
    p.provisioner = provisioner;
    let kind = if p.provisioner {
        "Provisioner"
    } else {
        "NodePool"
    };
    let name = p.nodepool.as_deref().unwrap_or(if provisioner {
        "<provisioner>"
    } else {
        "<nodepool>"
    });
    let label = match &p.nodepool {
        Some(np) => format!("{kind} \"{np}\""),
        None => format!("A {kind}"),
    };
    let all_excluded = p.excluded.is_some_and(|(e, t)| t > 0 && e >= t);
    let blocking = p.exhausted || all_excluded || (p.exclusion_seen && p.resources_failure);
    let mut summary = if p.exhausted && p.node_limit {
        format!("{label} has used up its node limit (spec.limits.nodes): Karpenter launches no more nodes from it.")
    } else if p.exhausted || all_excluded {
        format!("{label} has reached its spec.limits: every available instance type would exceed them, so Karpenter launches nothing more from it.")
    } else if p.resources_failure {
        format!("{label} is at its spec.limits: Karpenter excluded instance types that would breach them, and the ones left have not enough resources for the pod (so `no instance type has enough resources` is a limits problem).")
    } else {
        format!("{label} is close to its spec.limits: Karpenter excluded instance types that would breach them.")
    };
    if let Some((e, t)) = p.excluded {
        summary.push_str(&format!(" {e} out of {t} instance types were excluded."));
    }
    if !p.pods.is_empty() {
        let names: Vec<String> = p.pods.iter().map(ObjectRef::qualified_name).collect();
        summary.push_str(&format!(" Pending because of it: {}.", names.join(", ")));
    }
    let limits = pool.map(|np| &np.limits).filter(|l| !l.is_empty());
    let usage = pool.map(|np| &np.usage).filter(|u| !u.is_empty());
    if let Some(limits) = limits {
        let parts: Vec<String> = limits
            .iter()
            .map(|(k, v)| match usage.and_then(|u| u.get(k)) {
                Some(used) => format!("{k} {used} used of {v}"),
                None => format!("{k} limit {v}"),
            })
            .collect();
        summary.push_str(&format!(" Limits: {}.", parts.join(", ")));
    }
    let raised = raised_limits(limits, usage, p.node_limit);
    let patch = raised
        .iter()
        .map(|(k, v)| format!("\"{k}\":\"{v}\""))
        .collect::<Vec<_>>()
        .join(",");
    let command = if p.provisioner {
        format!("kubectl patch provisioner {name} --type merge -p '{{\"spec\":{{\"limits\":{{\"resources\":{{{patch}}}}}}}}}'")
    } else {
        format!("kubectl patch nodepool {name} --type merge -p '{{\"spec\":{{\"limits\":{{{patch}}}}}}}'")
    };
    let lower = if p.provisioner {
        "provisioner"
    } else {
        "nodepool"
    };
    let mut d = Diagnosis::new(&META, summary);
    if provisioner {
        d.title = PROVISIONER_TITLE;
    }
    d.with_severity(if blocking {
            Severity::Error
        } else {
            Severity::Warning
        })
        .with_object(p.pods.first())
        .with_node_pool(p.nodepool.as_deref())
        // One event per pod reads the same (an Event list's message does not name its pod):
        // each pod keeps its own evidence line and count.
        .with_messages_per_object(p.messages.iter().copied(), &|m| m.object.clone())
        .with_remediation([
            Remediation::command(
                format!("See the limits and the current usage of {kind} {name}:"),
                format!("kubectl get {lower} {name} -o jsonpath='{{.spec.limits}}{{\"\\n\"}}{{.status.resources}}{{\"\\n\"}}'"),
            ),
            Remediation::command(
                if raised.len() > 1 {
                    "Raise the limits that are (nearly) used up (the values here double the current ones; pick what your budget allows):"
                } else {
                    "Raise the limit (the value here doubles the current one when known; pick what your budget allows):"
                },
                command,
            ),
            Remediation::text(format!(
                "Or free capacity: delete idle nodes of {kind} {name}, let consolidation remove under-used ones (KW4xx says what blocks it), or move workloads to another {kind}."
            )),
        ]
        .into_iter()
        .filter(|s| !super::reads_only_shown(facts, s)))
}

/// The limits to raise, each with double its value: `nodes` for the node limit; otherwise every
/// limit the usage has reached 90% of (cpu and memory are often both near), else `cpu`.
fn raised_limits(
    limits: Option<&BTreeMap<String, String>>,
    usage: Option<&BTreeMap<String, String>>,
    node_limit: bool,
) -> Vec<(String, String)> {
    let doubled = |key: &str| {
        limits
            .and_then(|l| l.get(key))
            .and_then(|v| double_quantity(v.trim_matches('"')))
            .unwrap_or_else(|| "<more>".to_string())
    };
    if node_limit {
        return vec![("nodes".to_string(), doubled("nodes"))];
    }
    let near: Vec<(String, String)> = limits
        .into_iter()
        .flatten()
        .filter(|(k, limit)| {
            let used = usage
                .and_then(|u| u.get(*k))
                .and_then(|u| quantity_units(u));
            match (used, quantity_units(limit)) {
                (Some(used), Some(limit)) => used.saturating_mul(10) >= limit.saturating_mul(9),
                _ => false,
            }
        })
        .map(|(k, _)| (k.clone(), doubled(k)))
        .collect();
    if near.is_empty() {
        vec![("cpu".to_string(), doubled("cpu"))]
    } else {
        near
    }
}

/// `4000Gi` -> `8000Gi`: twice the number, the same suffix.
fn double_quantity(q: &str) -> Option<String> {
    let (number, suffix) = quantity_parts(q)?;
    Some(format!("{}{suffix}", number.checked_mul(2)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{MessageOrigin, NodePool};
    use crate::testing::{check_only, ids};

    #[test]
    fn quantities() {
        assert_eq!(double_quantity("4000Gi").as_deref(), Some("8000Gi"));
        assert_eq!(double_quantity("1000").as_deref(), Some("2000"));
        assert_eq!(double_quantity("1.5"), None);
        assert_eq!(double_quantity("10Zi"), None);
        assert_eq!(quantity_units("500m"), Some(500));
        assert_eq!(quantity_units("2"), Some(2000));
        assert_eq!(quantity_units("1Ki"), Some(1024 * 1000));
        assert!(quantity_units("3900Gi") > quantity_units("4000G"));
    }

    #[test]
    fn the_patch_raises_every_limit_that_is_nearly_used_up() {
        let paste = |cpu_used: &str| {
            format!(
                r#"{{"level":"ERROR","time":"2026-12-03T09:00:01.000Z","logger":"controller","message":"could not schedule pod","controller":"provisioner","Pod":{{"name":"spark-exec-7","namespace":"spark"}},"error":"all available instance types exceed limits for nodepool: \"spark\""}}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: spark
spec:
  limits:
    cpu: "1000"
    memory: 4000Gi
status:
  resources:
    cpu: "{cpu_used}"
    memory: 3900Gi
"#
            )
        };
        let patch = |report: &crate::report::Report| {
            report.diagnoses[0]
                .remediation
                .iter()
                .find_map(|r| r.command.clone().filter(|c| c.contains("kubectl patch")))
                .unwrap()
        };
        let report = check_only("KW205", &paste("996"));
        assert_eq!(ids(&report), ["KW205"]);
        assert!(
            patch(&report).contains(r#"{"spec":{"limits":{"cpu":"2000","memory":"8000Gi"}}}"#),
            "{}",
            patch(&report)
        );
        let report = check_only("KW205", &paste("400"));
        assert!(
            patch(&report).contains(r#"{"spec":{"limits":{"memory":"8000Gi"}}}"#),
            "{}",
            patch(&report)
        );
        // The node limit doubles the node limit, not the CPU one.
        let nodes = r#"{"level":"ERROR","time":"2026-12-03T09:00:01.000Z","logger":"controller","message":"could not schedule pod","controller":"provisioner","Pod":{"name":"web-1","namespace":"shop"},"error":"node limits have been exhausted for nodepool (NodePool=edge)"}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: edge
spec:
  limits:
    cpu: "1000"
    nodes: "10"
"#;
        let report = check_only("KW205", nodes);
        assert!(
            patch(&report).contains(r#"{"spec":{"limits":{"nodes":"20"}}}"#),
            "{}",
            patch(&report)
        );
    }

    #[test]
    fn every_limits_form() {
        for (text, np) in [
            (r#"Failed to schedule pod, all available instance types exceed limits for nodepool: "batch""#, "batch"),
            (r#"Failed to schedule pod, incompatible with nodepool "batch", daemonset overhead={}, all available instance types exceed limits for nodepool "batch""#, "batch"),
            ("Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=batch)", "batch"),
            ("Failed to schedule pod, node limits have been exhausted for nodepool (NodePool=batch)", "batch"),
            (r#"Failed to schedule pod, incompatible with provisioner "default", all available instance types exceed limits for provisioner: "default""#, "default"),
        ] {
            let report = check_only("KW205", text);
            assert_eq!(ids(&report), ["KW205"], "{text}");
            assert_eq!(report.diagnoses[0].node_pool.as_deref(), Some(np), "{text}");
            assert_eq!(report.diagnoses[0].severity, Severity::Error, "{text}");
        }
    }

    #[test]
    fn exclusion_line_alone_is_a_warning_with_counts() {
        let report = check_only(
            "KW205",
            r#"{"level":"DEBUG","message":"40 out of 458 instance types were excluded because they would breach limits","NodePool":{"name":"linux"}}"#,
        );
        assert_eq!(ids(&report), ["KW205"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.severity, Severity::Warning);
        assert!(d.summary.contains("40 out of 458"), "{}", d.summary);
        assert_eq!(d.node_pool.as_deref(), Some("linux"));
    }

    #[test]
    fn exclusion_next_to_enough_resources_is_an_error() {
        let report = check_only(
            "KW205",
            r#"{"level":"DEBUG","message":"instance types were excluded because they would breach limits","NodePool":{"name":"big"},"excluded":12,"total":80}
{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"w-0","namespace":"a"},"error":"no instance type has enough resources, requirements=karpenter.sh/nodepool In [big], resources={\"cpu\":\"30\"}"}"#,
        );
        assert_eq!(ids(&report), ["KW205"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.severity, Severity::Error);
        assert!(d.summary.contains("12 out of 80"), "{}", d.summary);
    }

    #[test]
    fn provisioner_exclusion_and_no_name_forms() {
        for text in [
            "12 out of 300 instance types were excluded because they would breach provisioner limits",
            "Could not schedule pod, all available instance types exceed provisioner limits",
        ] {
            assert_eq!(ids(&check_only("KW205", text)), ["KW205"], "{text}");
        }
    }

    #[test]
    fn quotes_limits_and_usage() {
        let mut facts = Facts::default();
        let text = "Failed to schedule pod, all available instance types exceed limits for nodepool (NodePool=spot-workers)";
        facts.messages.push(Message {
            origin: MessageOrigin::Event,
            text: text.into(),
            evidence: Evidence::new("events", 1, text),
            object: Some(ObjectRef::new("Pod", Some("platform"), "log-shipper-1")),
            nodepool: None,
            reason: None,
            component: None,
            time: None,
        });
        let mut np = NodePool::default();
        np.meta.name = "spot-workers".into();
        np.limits.insert("cpu".into(), "1000".into());
        np.usage.insert("cpu".into(), "998".into());
        facts.nodepools.push(np);
        let d = &check(&facts)[0];
        assert!(d.summary.contains("cpu 998 used of 1000"), "{}", d.summary);
        // Limits and usage are quoted: no step to read them again.
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("\"cpu\":\"2000\""));
    }

    #[test]
    fn near_misses() {
        for text in [
            "Failed to schedule pod, no instance type has enough resources, requirements=karpenter.sh/nodepool In [a], resources={}",
            "limits: cpu: 512",
        ] {
            assert!(ids(&check_only("KW205", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_provisioner_is_called_a_provisioner() {
        let report = check_only(
            "KW205",
            "2023-06-01T10:00:01.000Z\tERROR\tcontroller.provisioner\tCould not schedule pod, all available instance types exceed provisioner limits\t{\"pod\": \"etl/spark-1\"}\napiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: batch\nspec:\n  limits:\n    resources:\n      cpu: \"100\"\n",
        );
        let d = &report.diagnoses[0];
        assert_eq!(d.title, "The Provisioner has reached its spec.limits");
        assert!(
            d.summary.starts_with("Provisioner \"batch\""),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("NodePool"), "{}", d.summary);
        assert!(!d.remediation.iter().any(|r| r.text.contains("NodePool")));
        let v1 = check_only(
            "KW205",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"a","namespace":"b"},"error":"all available instance types exceed limits for nodepool (NodePool=general)"}"#,
        );
        assert_eq!(
            v1.diagnoses[0].title,
            "The NodePool has reached its spec.limits"
        );
        assert!(v1.diagnoses[0].summary.starts_with("NodePool \"general\""));
    }
}
