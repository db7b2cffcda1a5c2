//! KW207 nodepool-filtered-all-types.

use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::{message_nodepool, scheduling_errors, Cause};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW207",
    slug: "nodepool-filtered-all-types",
    title: "The NodePool's requirements (or minValues) leave no instance type",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Before any pod is considered, the NodePool's own requirements filtered out every instance type
the cloud offers (or left too few distinct values for a `minValues`), so Karpenter skips the
NodePool entirely.

Signals: the NodePool event `NoCompatibleInstanceTypes` with `NodePool requirements filtered out
all compatible available instance types[ due to minValues incompatibility]` (v1.3+), the logs
`skipping, nodepool requirements filtered out all instance types` and `nodepool requirements
filtered out all available instance types` (v1.7+), `minValues requirement is not met for
label(s)`, and `pod didn't schedule because NodePool couldn't meet minValues requirements`
(written with U+2019 apostrophes). A `minValues 1` inside a `requirements=` list is not this.

## Why it happens
Contradictory or too narrow requirements (an instance family that does not exist in the
region or for the architecture, a generation `Gt` above every family, a category plus a size
that never meet), instance types removed by the EC2NodeClass (AMI architecture, unsupported
types), or a `minValues` (say 5 families) that the remaining types cannot reach.

## How to fix
Loosen the NodePool's requirements or its `minValues`; check with `kubectl get nodepool <np>
-o yaml` which requirement removes everything (families, sizes, architecture, capacity type).
"#,
};

const SIGNALS: &[&str] = &[
    "filtered out all compatible available instance types",
    "filtered out all available instance types",
    "filtered out all instance types",
    "minvalues requirement is not met",
    "meet minvalues requirements",
    "due to minvalues incompatibility",
    "nocompatibleinstancetypes",
];

/// Texts of the signal, matched on the phrase only (the requirements list may hold
/// `minValues N`).
const PHRASES: &[&str] = &[
    "filtered out all compatible available instance types",
    "filtered out all available instance types",
    "filtered out all instance types",
    "minvalues requirement is not met",
    "meet minvalues requirements",
    "due to minvalues incompatibility",
];

struct Pool<'a> {
    nodepool: Option<String>,
    min_values: bool,
    pods: Vec<ObjectRef>,
    messages: Vec<&'a Message>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut pools: Vec<Pool> = Vec::new();
    let errors = scheduling_errors(facts);
    for error in &errors {
        for clause in &error.clauses {
            if !matches!(clause.cause, Cause::MinValues | Cause::AllTypesFiltered) {
                continue;
            }
            let pool = pool_entry(&mut pools, clause.nodepool.clone());
            pool.min_values |= clause.cause == Cause::MinValues;
            if let Some(pod) = &error.pod {
                if !pool.pods.contains(pod) {
                    pool.pods.push(pod.clone());
                }
            }
            pool.messages.push(error.message);
        }
    }
    for m in &facts.messages {
        if errors.iter().any(|e| std::ptr::eq(e.message, m)) {
            continue;
        }
        let phrase = phrase_of(&m.text);
        if !PHRASES
            .iter()
            .any(|p| contains_ignore_ascii_case(phrase, p))
        {
            continue;
        }
        let pool = pool_entry(&mut pools, message_nodepool(facts, m));
        pool.min_values |= contains_ignore_ascii_case(phrase, "minvalues");
        pool.messages.push(m);
    }
    // A line naming no NodePool (the NodePool event's object was not in the paste) belongs to
    // the only NodePool the other lines name, when there is exactly one.
    let named: Vec<usize> = (0..pools.len())
        .filter(|&i| pools[i].nodepool.is_some())
        .collect();
    if let (Some(u), [target]) = (
        pools.iter().position(|p| p.nodepool.is_none()),
        named.as_slice(),
    ) {
        let target = if u < *target { *target - 1 } else { *target };
        let unnamed = pools.remove(u);
        let t = &mut pools[target];
        t.min_values |= unnamed.min_values;
        t.pods.extend(
            unnamed
                .pods
                .into_iter()
                .filter(|p| !t.pods.contains(p))
                .collect::<Vec<_>>(),
        );
        t.messages.extend(unnamed.messages);
    }
    pools.into_iter().map(|p| diagnose(facts, p)).collect()
}

/// The text before a `requirements=` list.
fn phrase_of(text: &str) -> &str {
    match text.find("requirements=") {
        Some(i) => &text[..i],
        None => text,
    }
}

fn pool_entry<'p, 'a>(pools: &'p mut Vec<Pool<'a>>, np: Option<String>) -> &'p mut Pool<'a> {
    let i = match pools.iter().position(|p| p.nodepool == np) {
        Some(i) => i,
        None => {
            pools.push(Pool {
                nodepool: np,
                min_values: false,
                pods: Vec::new(),
                messages: Vec::new(),
            });
            pools.len() - 1
        }
    };
    &mut pools[i]
}

fn diagnose(facts: &Facts, p: Pool<'_>) -> Diagnosis {
    let name = p.nodepool.as_deref().unwrap_or("<nodepool>");
    let label = match &p.nodepool {
        Some(np) => format!("NodePool \"{np}\""),
        None => "A NodePool".to_string(),
    };
    let mut summary = if p.min_values {
        format!("{label} cannot meet its minValues: after its requirements, too few distinct values remain, so Karpenter skips it.")
    } else {
        format!("{label}'s requirements filter out every available instance type, so Karpenter skips it.")
    };
    let np = p.nodepool.as_deref().and_then(|n| facts.nodepool(n));
    if let Some(np) = np.filter(|np| !np.requirements.is_empty()) {
        let reqs: Vec<String> = np
            .requirements
            .iter()
            .map(|r| {
                let mut s = format!("{} {} [{}]", r.key, r.operator, r.values.join(" "));
                if let Some(mv) = r.min_values {
                    s.push_str(&format!(" minValues {mv}"));
                }
                s
            })
            .collect();
        summary.push_str(&format!(" Its requirements: {}.", reqs.join(", ")));
    }
    if !p.pods.is_empty() {
        let names: Vec<String> = p.pods.iter().map(ObjectRef::qualified_name).collect();
        summary.push_str(&format!(" Pending because of it: {}.", names.join(", ")));
    }
    let mut steps = vec![Remediation::command(
        format!("Look at NodePool {name}'s requirements (and minValues) and find the one that removes every type:"),
        format!("kubectl get nodepool {name} -o jsonpath='{{range .spec.template.spec.requirements[*]}}{{.key}} {{.operator}} {{.values}} {{.minValues}}{{\"\\n\"}}{{end}}'"),
    )];
    let min_req = np.and_then(|np| np.requirements.iter().find(|r| r.min_values.is_some()));
    match (p.min_values, min_req) {
        (true, Some(r)) => steps.push(Remediation::yaml(
            format!(
                "Lower minValues on {} (now {}) or allow more values for it:",
                r.key,
                r.min_values.unwrap_or_default()
            ),
            format!(
                "spec:\n  template:\n    spec:\n      requirements:\n        - key: {}\n          operator: {}\n          values: [{}]\n          minValues: {}\n",
                r.key,
                r.operator,
                r.values.iter().map(|v| format!("\"{v}\"")).collect::<Vec<_>>().join(", "),
                r.min_values.unwrap_or(1).saturating_sub(1).max(1)
            ),
        )),
        (true, None) => steps.push(Remediation::text(
            "Lower the minValues of the NodePool's requirements, or allow more values (families, sizes) for the key whose minValues fails.",
        )),
        _ => steps.push(Remediation::text(
            "Loosen the requirements: families that exist for the NodePool's architecture and region, a generation bound every family meets, categories and sizes that overlap; `kubectl get ec2nodeclass` status may also have removed types (AMI architecture).",
        )),
    }
    Diagnosis::new(&META, summary)
        .with_object(p.pods.first())
        .with_node_pool(p.nodepool.as_deref())
        .with_messages(p.messages.iter().copied())
        .with_remediation(steps)
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn every_form() {
        for text in [
            r#"{"level":"INFO","message":"skipping, nodepool requirements filtered out all instance types","NodePool":{"name":"gpu-legacy"}}"#,
            "Warning  NoCompatibleInstanceTypes  2m  karpenter  NodePool requirements filtered out all compatible available instance types",
            "Warning  NoCompatibleInstanceTypes  2m  karpenter  NodePool requirements filtered out all compatible available instance types due to minValues incompatibility",
            "Failed to schedule pod, nodepool requirements filtered out all available instance types",
            "Failed to schedule pod, pod didn\u{2019}t schedule because NodePool couldn\u{2019}t meet minValues requirements, minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family]) (NodePool=spread)",
            "Failed to schedule pod, minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family]), requirements=karpenter.sh/nodepool In [x], resources={}",
        ] {
            assert_eq!(ids(&check_only("KW207", text)), ["KW207"], "{text}");
        }
    }

    #[test]
    fn nodepool_named() {
        let report = check_only(
            "KW207",
            r#"{"level":"INFO","message":"skipping, nodepool requirements filtered out all instance types","NodePool":{"name":"gpu-legacy"}}"#,
        );
        assert_eq!(report.diagnoses[0].node_pool.as_deref(), Some("gpu-legacy"));
        let curly = check_only("KW207", "Failed to schedule pod, pod didn\u{2019}t schedule because NodePool couldn\u{2019}t meet minValues requirements, x (NodePool=spread)");
        assert_eq!(curly.diagnoses[0].node_pool.as_deref(), Some("spread"));
        assert!(curly.diagnoses[0].summary.contains("minValues"));
    }

    #[test]
    fn min_values_inside_requirements_is_not_kw207() {
        let text = r#"Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={}, no instance type satisfied resources {"cpu":"1"} and requirements karpenter.k8s.aws/instance-family In [g4ad] minValues 1 (no instance type has enough resources)"#;
        assert!(ids(&check_only("KW207", text)).is_empty());
        let listed = "requirements=karpenter.k8s.aws/instance-family In [c7g] minValues 2, minValues requirement";
        assert!(ids(&check_only("KW207", listed)).is_empty());
    }
}
