//! KW207 nodepool-filtered-all-types.

use crate::facts::{contains_ignore_ascii_case, Facts, Message, NodePool, ObjectRef, Requirement};
use crate::rules::kw2xx::scheduling::{
    message_nodepool, messages_of, scheduling_errors_with, Cause, PodIndex,
};
use crate::rules::text::quoting_prose;
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

The diagnosis names the cause when the NodePool is in the input: one key whose requirements
exclude each other (`In` and `NotIn` the same values, `Gt`/`Lt` with nothing between), an
architecture no listed family has (`arm64` with `c5`: Graviton families carry a `g` after the
generation), a category, generation or size that excludes every listed family or type, a
`minValues` above the number of values its requirement allows, or an architecture the
EC2NodeClass resolved no AMI for; from the log, the label whose `minValues` fails.

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
    let index = PodIndex::of(facts);
    let errors = scheduling_errors_with(facts, &index);
    for error in errors.iter().filter(|e| !quoting_prose(e.message)) {
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
    let read = messages_of(&errors);
    for m in &facts.messages {
        if read.contains(&(m as *const Message)) || quoting_prose(m) || index.about_placed_pod(m) {
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
                let mut s = quoted(r);
                if let Some(mv) = r.min_values {
                    s.push_str(&format!(" minValues {mv}"));
                }
                s
            })
            .collect();
        summary.push_str(&format!(" Its requirements: {}.", reqs.join(", ")));
    }
    let found = np.map(|np| causes(facts, np)).unwrap_or_default();
    if !found.is_empty() {
        let sentences: Vec<&str> = found.iter().map(|f| f.sentence.as_str()).collect();
        summary.push_str(&format!(" Cause: {}", sentences.join(" ")));
    }
    let mut labels: Vec<String> = Vec::new();
    for m in &p.messages {
        for l in min_values_labels(&m.text) {
            if !labels.contains(&l) {
                labels.push(l);
            }
        }
    }
    if !labels.is_empty() && !found.iter().any(|f| labels.contains(&f.key)) {
        let detail: Vec<String> = labels
            .iter()
            .map(|l| {
                match np.and_then(|np| {
                    np.requirements
                        .iter()
                        .find(|r| &r.key == l && r.min_values.is_some())
                }) {
                    Some(r) => format!(
                        "{l} (minValues {}, {})",
                        r.min_values.unwrap_or_default(),
                        if r.operator == "In" {
                            format!(
                                "{} values allowed before the other requirements filter them",
                                r.values.len()
                            )
                        } else {
                            format!("{} {}", r.operator, r.values.join(" "))
                        }
                    ),
                    None => l.clone(),
                }
            })
            .collect();
        summary.push_str(&format!(
            " The minValues that fails is on {}: the instance types left after the other requirements have fewer distinct values.",
            detail.join(", ")
        ));
    }
    if !p.pods.is_empty() {
        let names: Vec<String> = p.pods.iter().map(ObjectRef::qualified_name).collect();
        summary.push_str(&format!(" Pending because of it: {}.", names.join(", ")));
    }
    let mut steps = vec![Remediation::command(
        format!("Look at NodePool {name}'s requirements (and minValues) and find the one that removes every type:"),
        format!("kubectl get nodepool {name} -o jsonpath='{{range .spec.template.spec.requirements[*]}}{{.key}} {{.operator}} {{.values}} {{.minValues}}{{\"\\n\"}}{{end}}'"),
    )];
    for f in &found {
        steps.push(Remediation::text(format!(
            "Change the `{}` requirement of NodePool {name} (`kubectl edit nodepool {name}`): {}",
            f.key, f.sentence
        )));
    }
    let min_req = np.and_then(|np| {
        np.requirements
            .iter()
            .filter(|r| r.min_values.is_some())
            .find(|r| labels.is_empty() || labels.contains(&r.key))
    });
    match (p.min_values, min_req) {
        // A cause found on that key already says what to change.
        (true, Some(r)) if !found.iter().any(|f| f.key == r.key) => steps.push(Remediation::yaml(
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
        (true, Some(_)) => {}
        (true, None) => steps.push(Remediation::text(
            "Lower the minValues of the NodePool's requirements, or allow more values (families, sizes) for the key whose minValues fails.",
        )),
        _ if !found.is_empty() => {}
        _ => steps.push(Remediation::text(
            "Loosen the requirements: families that exist for the NodePool's architecture and region, a generation bound every family meets, categories and sizes that overlap; `kubectl get ec2nodeclass` status may also have removed types (AMI architecture).",
        )),
    }
    Diagnosis::new(&META, summary)
        .with_object(p.pods.first())
        .with_node_pool(p.nodepool.as_deref())
        // Each pod's event reads the same: each keeps its own evidence line and count.
        .with_messages_per_object(p.messages.iter().copied(), &|m| m.object.clone())
        .with_remediation(
            steps
                .into_iter()
                .filter(|s| !super::reads_only_shown(facts, s)),
        )
}

const ARCH: &str = "kubernetes.io/arch";
const FAMILY: &str = "karpenter.k8s.aws/instance-family";
const CATEGORY: &str = "karpenter.k8s.aws/instance-category";
const GENERATION: &str = "karpenter.k8s.aws/instance-generation";
const SIZE: &str = "karpenter.k8s.aws/instance-size";
const TYPE: &str = "node.kubernetes.io/instance-type";

/// What the requirements show about why nothing is left: one sentence each, and the key to
/// change first.
struct Found {
    sentence: String,
    key: String,
}

/// `c5` -> (`c`, 5, ``), `m7gd` -> (`m`, 7, `gd`), `is4gen` -> (`is`, 4, `gen`).
fn family_parts(family: &str) -> Option<(&str, u64, &str)> {
    let digit = family.find(|c: char| c.is_ascii_digit())?;
    let rest = &family[digit..];
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let generation = rest[..end].parse().ok()?;
    let category = &family[..digit];
    (!category.is_empty()).then_some((category, generation, &rest[end..]))
}

/// The CPU architecture of an EC2 family: Graviton families carry a `g` after the
/// generation (`m6g`, `c7gn`, `r6gd`, `is4gen`, `g5g`), and `a1` is arm64.
fn family_arch(family: &str) -> Option<&'static str> {
    if family == "a1" {
        return Some("arm64");
    }
    let (_, _, suffix) = family_parts(family)?;
    Some(if suffix.contains('g') {
        "arm64"
    } else {
        "amd64"
    })
}

/// The family of an instance type (`c5.xlarge` -> `c5`).
fn type_family(instance_type: &str) -> &str {
    instance_type.split('.').next().unwrap_or(instance_type)
}

fn allows(r: &Requirement, value: &str) -> bool {
    match r.operator.as_str() {
        "In" => r.values.iter().any(|v| v == value),
        "NotIn" => !r.values.iter().any(|v| v == value),
        "Exists" => true,
        "DoesNotExist" => false,
        "Gt" | "Lt" => {
            let (Ok(v), Some(Ok(bound))) = (
                value.parse::<i64>(),
                r.values.first().map(|b| b.parse::<i64>()),
            ) else {
                return true;
            };
            if r.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => true,
    }
}

fn quoted(r: &Requirement) -> String {
    match r.operator.as_str() {
        "Exists" | "DoesNotExist" => format!("{} {}", r.key, r.operator),
        _ => format!("{} {} [{}]", r.key, r.operator, r.values.join(" ")),
    }
}

/// Causes the NodePool's requirements show on their own: a key whose requirements exclude
/// each other, families or types that another requirement (architecture, category,
/// generation, size) rules out, a minValues larger than the values allowed, and an
/// architecture the EC2NodeClass's AMIs do not have.
fn causes(facts: &Facts, np: &NodePool) -> Vec<Found> {
    let reqs = &np.requirements;
    let mut out: Vec<Found> = Vec::new();
    let on = |key: &'static str| reqs.iter().filter(move |r| r.key == key);
    // One key, requirements that leave no value.
    let mut keys: Vec<&str> = Vec::new();
    for r in reqs {
        if !keys.contains(&r.key.as_str()) {
            keys.push(&r.key);
        }
    }
    for key in keys {
        let list: Vec<&Requirement> = reqs.iter().filter(|r| r.key == key).collect();
        if let Some(r) = list
            .iter()
            .find(|r| r.operator == "In" && r.values.is_empty())
        {
            out.push(Found {
                sentence: format!("`{}` allows no value at all.", quoted(r)),
                key: key.to_string(),
            });
            continue;
        }
        let ins: Vec<&&Requirement> = list.iter().filter(|r| r.operator == "In").collect();
        if let Some(first) = ins.first() {
            let left: Vec<&String> = first
                .values
                .iter()
                .filter(|v| list.iter().all(|r| allows(r, v)))
                .collect();
            if left.is_empty() && list.len() > 1 {
                let all: Vec<String> = list.iter().map(|r| format!("`{}`", quoted(r))).collect();
                out.push(Found {
                    sentence: format!(
                        "{} exclude each other: no value of {key} is left.",
                        all.join(" and ")
                    ),
                    key: key.to_string(),
                });
            }
            continue;
        }
        let gt = list.iter().find(|r| r.operator == "Gt");
        let lt = list.iter().find(|r| r.operator == "Lt");
        if let (Some(g), Some(l)) = (gt, lt) {
            let bound = |r: &Requirement| r.values.first().and_then(|v| v.parse::<i64>().ok());
            if let (Some(a), Some(b)) = (bound(g), bound(l)) {
                if a + 1 >= b {
                    out.push(Found {
                        sentence: format!(
                            "`{}` and `{}` leave no whole number between them.",
                            quoted(g),
                            quoted(l)
                        ),
                        key: key.to_string(),
                    });
                }
            }
        }
    }
    // Families (from the family or the instance-type requirement) against the other keys.
    let families: Option<(Vec<String>, &str)> = on(FAMILY)
        .find(|r| r.operator == "In")
        .map(|r| (r.values.clone(), FAMILY))
        .or_else(|| {
            on(TYPE).find(|r| r.operator == "In").map(|r| {
                let mut f: Vec<String> = Vec::new();
                for t in &r.values {
                    let fam = type_family(t).to_string();
                    if !f.contains(&fam) {
                        f.push(fam);
                    }
                }
                (f, TYPE)
            })
        });
    if let Some((families, source)) = families.filter(|(f, _)| !f.is_empty()) {
        let what = if source == FAMILY {
            "families"
        } else {
            "instance types (families)"
        };
        for arch_req in on(ARCH) {
            let fits: Vec<&String> = families
                .iter()
                .filter(|f| family_arch(f).is_none_or(|a| allows(arch_req, a)))
                .collect();
            if fits.is_empty() {
                let other = if allows(arch_req, "arm64") {
                    "amd64 (x86)"
                } else {
                    "arm64 (Graviton)"
                };
                out.push(Found {
                    sentence: format!(
                        "`{}` conflicts with the {what} [{}]: they are all {other}; Graviton families carry a `g` after the generation (m7g, c7g, r7g).",
                        quoted(arch_req),
                        families.join(" ")
                    ),
                    key: ARCH.to_string(),
                });
            }
        }
        for (key, part_of) in [(CATEGORY, 0usize), (GENERATION, 1usize)] {
            for r in on(key) {
                let fits = families.iter().any(|f| match family_parts(f) {
                    Some((c, g, _)) => {
                        if part_of == 0 {
                            allows(r, c)
                        } else {
                            allows(r, &g.to_string())
                        }
                    }
                    None => true,
                });
                if !fits {
                    out.push(Found {
                        sentence: format!(
                            "`{}` excludes every one of the {what} [{}].",
                            quoted(r),
                            families.join(" ")
                        ),
                        key: key.to_string(),
                    });
                }
            }
        }
        if source == TYPE {
            // minValues on the family or category counts what the listed types leave.
            for r in on(FAMILY).chain(on(CATEGORY)) {
                let mut left: Vec<&str> = Vec::new();
                for f in &families {
                    let v = if r.key == FAMILY {
                        f.as_str()
                    } else {
                        family_parts(f).map_or(f.as_str(), |(c, _, _)| c)
                    };
                    if allows(r, v) && !left.contains(&v) {
                        left.push(v);
                    }
                }
                if r.min_values.is_some_and(|mv| (left.len() as u64) < mv) {
                    out.push(Found {
                        sentence: format!(
                            "`{}` has minValues {}, but the instance types [{}] leave only {} ({}): it can never be met; lower minValues to {} or allow more instance types.",
                            quoted(r),
                            r.min_values.unwrap_or_default(),
                            on(TYPE).flat_map(|t| t.values.iter().map(String::as_str)).collect::<Vec<_>>().join(" "),
                            left.len(),
                            left.join(" "),
                            left.len().max(1)
                        ),
                        key: r.key.clone(),
                    });
                }
            }
        }
        if source == FAMILY {
            for r in on(TYPE).filter(|r| r.operator == "In") {
                if !r
                    .values
                    .iter()
                    .any(|t| families.iter().any(|f| f == type_family(t)))
                {
                    out.push(Found {
                        sentence: format!(
                            "`{}` names no type of the families [{}].",
                            quoted(r),
                            families.join(" ")
                        ),
                        key: TYPE.to_string(),
                    });
                }
            }
        }
    }
    if let Some(types) = on(TYPE).find(|r| r.operator == "In") {
        for r in on(SIZE) {
            let fits = types
                .values
                .iter()
                .any(|t| t.split_once('.').is_none_or(|(_, size)| allows(r, size)));
            if !fits {
                out.push(Found {
                    sentence: format!(
                        "`{}` excludes every size of `{}`.",
                        quoted(r),
                        quoted(types)
                    ),
                    key: SIZE.to_string(),
                });
            }
        }
    }
    // minValues above the number of values the requirement allows.
    for r in reqs.iter().filter(|r| r.operator == "In") {
        if let Some(mv) = r.min_values {
            if (r.values.len() as u64) < mv {
                out.push(Found {
                    sentence: format!(
                        "`{}` has minValues {mv} but allows only {} value{}: it can never be met.",
                        quoted(r),
                        r.values.len(),
                        if r.values.len() == 1 { "" } else { "s" }
                    ),
                    key: r.key.clone(),
                });
            }
        }
    }
    // The NodePool's architecture against the AMIs its EC2NodeClass resolved.
    let class = np.nodeclass_ref.as_deref().and_then(|n| facts.nodeclass(n));
    if let (Some(class), Some(arch_req)) = (class, on(ARCH).find(|r| r.operator == "In")) {
        let ami_arches: Vec<&String> = class
            .status_amis
            .iter()
            .flat_map(|a| a.requirements.iter())
            .filter(|r| r.key == ARCH && r.operator == "In")
            .flat_map(|r| r.values.iter())
            .collect();
        if !ami_arches.is_empty() && !ami_arches.iter().any(|a| allows(arch_req, a)) {
            let mut arches: Vec<&str> = ami_arches.iter().map(|a| a.as_str()).collect();
            arches.sort_unstable();
            arches.dedup();
            out.push(Found {
                sentence: format!(
                    "`{}` has no AMI: EC2NodeClass {} resolved AMIs only for {}.",
                    quoted(arch_req),
                    class.meta.name,
                    arches.join(", ")
                ),
                key: ARCH.to_string(),
            });
        }
    }
    out
}

/// `label(s)=[a b]` of `minValues requirement is not met for label(s) (label(s)=[...])`.
fn min_values_labels(text: &str) -> Vec<String> {
    let Some(at) = text.find("label(s)=[") else {
        return Vec::new();
    };
    let rest = &text[at + "label(s)=[".len()..];
    rest.split(']')
        .next()
        .unwrap_or_default()
        .split([' ', ','])
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
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

    fn with_pool(reqs: &str) -> String {
        format!("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: np\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n      requirements:\n{reqs}---\n{{\"level\":\"INFO\",\"message\":\"skipping, nodepool requirements filtered out all instance types\",\"NodePool\":{{\"name\":\"np\"}}}}\n")
    }

    #[test]
    fn names_the_requirement_that_removes_everything() {
        for (reqs, expected) in [
            (
                "      - key: kubernetes.io/arch\n        operator: In\n        values: [\"amd64\"]\n      - key: node.kubernetes.io/instance-type\n        operator: In\n        values: [\"m7g.large\", \"c6gn.xlarge\"]\n",
                "`kubernetes.io/arch In [amd64]` conflicts with the instance types (families) [m7g c6gn]: they are all arm64 (Graviton)",
            ),
            (
                "      - key: karpenter.k8s.aws/instance-family\n        operator: In\n        values: [\"c5\", \"m5\"]\n      - key: karpenter.k8s.aws/instance-generation\n        operator: Gt\n        values: [\"6\"]\n",
                "`karpenter.k8s.aws/instance-generation Gt [6]` excludes every one of the families [c5 m5]",
            ),
            (
                "      - key: karpenter.k8s.aws/instance-category\n        operator: In\n        values: [\"r\"]\n      - key: karpenter.k8s.aws/instance-family\n        operator: In\n        values: [\"c7i\"]\n",
                "`karpenter.k8s.aws/instance-category In [r]` excludes every one of the families [c7i]",
            ),
            (
                "      - key: karpenter.sh/capacity-type\n        operator: In\n        values: [\"spot\"]\n      - key: karpenter.sh/capacity-type\n        operator: NotIn\n        values: [\"spot\"]\n",
                "`karpenter.sh/capacity-type In [spot]` and `karpenter.sh/capacity-type NotIn [spot]` exclude each other",
            ),
            (
                "      - key: karpenter.k8s.aws/instance-cpu\n        operator: Gt\n        values: [\"15\"]\n      - key: karpenter.k8s.aws/instance-cpu\n        operator: Lt\n        values: [\"16\"]\n",
                "leave no whole number between them",
            ),
            (
                "      - key: node.kubernetes.io/instance-type\n        operator: In\n        values: [\"c5.large\"]\n      - key: karpenter.k8s.aws/instance-size\n        operator: NotIn\n        values: [\"large\"]\n",
                "excludes every size of `node.kubernetes.io/instance-type In [c5.large]`",
            ),
        ] {
            let report = check_only("KW207", &with_pool(reqs));
            assert_eq!(ids(&report), ["KW207"]);
            let d = &report.diagnoses[0];
            assert!(d.summary.contains(expected), "{}", d.summary);
            assert!(d.remediation.iter().any(|r| r.text.starts_with("Change the `")));
        }
    }

    #[test]
    fn consistent_requirements_name_no_cause() {
        for reqs in [
            "      - key: kubernetes.io/arch\n        operator: In\n        values: [\"arm64\"]\n      - key: karpenter.k8s.aws/instance-family\n        operator: In\n        values: [\"c7g\", \"m5\", \"is4gen\", \"a1\"]\n",
            "      - key: karpenter.k8s.aws/instance-family\n        operator: In\n        values: [\"c7i\", \"m5\"]\n        minValues: 2\n      - key: karpenter.k8s.aws/instance-generation\n        operator: Gt\n        values: [\"5\"]\n",
        ] {
            let report = check_only("KW207", &with_pool(reqs));
            let d = &report.diagnoses[0];
            assert!(!d.summary.contains("Cause:"), "{}", d.summary);
        }
    }

    #[test]
    fn family_architecture() {
        use super::family_arch;
        for (family, arch) in [
            ("c5", "amd64"),
            ("g5", "amd64"),
            ("g4dn", "amd64"),
            ("g5g", "arm64"),
            ("c7gn", "arm64"),
            ("is4gen", "arm64"),
            ("a1", "arm64"),
            ("r8g", "arm64"),
            ("inf2", "amd64"),
        ] {
            assert_eq!(family_arch(family), Some(arch), "{family}");
        }
    }

    #[test]
    fn min_values_inside_requirements_is_not_kw207() {
        let text = r#"Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={}, no instance type satisfied resources {"cpu":"1"} and requirements karpenter.k8s.aws/instance-family In [g4ad] minValues 1 (no instance type has enough resources)"#;
        assert!(ids(&check_only("KW207", text)).is_empty());
        let listed = "requirements=karpenter.k8s.aws/instance-family In [c7g] minValues 2, minValues requirement";
        assert!(ids(&check_only("KW207", listed)).is_empty());
    }
}
