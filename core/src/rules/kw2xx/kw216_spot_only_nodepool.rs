//! KW216 spot-only-nodepool.

use crate::facts::{Facts, Message, NodePool, Requirement};
use crate::rules::kw2xx::kw202_no_offering_in_zone::zone_gap_known;
use crate::rules::kw2xx::scheduling::{
    in_values, message_nodepool, record_of, scheduling_errors, single_value, Cause, Clause,
};
use crate::rules::kw3xx::common::pods_waiting_on;
use crate::rules::kw4xx::disruption::{push_unique, unescaped};
use crate::rules::text::{contains_any, is_mask};
use crate::rules::version::before_v0_32;
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW216",
    slug: "spot-only-nodepool",
    title: "The NodePool allows only spot capacity while spot launches fail",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The NodePool allows only spot instances (`karpenter.sh/capacity-type In [spot]`), and spot
launches fail: no spot capacity for the allowed types and zones, the account's spot quota, or
the spot service-linked role missing. With nothing else allowed, the pods stay Pending although
on-demand capacity would launch.

Signals: a NodePool whose requirements allow only `spot` (or the scheduling error's
`requirements=` showing `karpenter.sh/capacity-type In [spot]`), together with spot launch
failures: the insufficient-capacity texts of KW215 (`InsufficientInstanceCapacity`, `There is no
Spot capacity available`, `MaxSpotInstanceCountExceeded`, `all requested instance types were
unavailable during launch`, `no instance type has the required offering`) or the service-linked
role failure of KW101. Before v0.32 the pool is a Provisioner (`incompatible with provisioner
"<p>"`, `launching machine, ...`), edited at its `spec.requirements`. Not this rule: `no
instance type has the required offering` for a zone the facts show the NodePool or its subnets
do not cover (KW202): no capacity type is offered there.

## Why it happens
Spot pools for a narrow set of types and zones run dry, spot quotas are reached, or a new
account never created the spot service-linked role. A spot-only NodePool has no fallback.

## How to fix
Add `on-demand` to the NodePool's capacity-type requirement: Karpenter prefers spot when both
are allowed and falls back to on-demand when spot is unavailable. Also allow more instance
families, sizes and zones (KW215), and create the service-linked role if it is missing (KW101).
"#,
};

const SIGNALS: &[&str] = &[
    "karpenter.sh/capacity-type",
    "insufficientinstancecapacity",
    "no spot capacity available",
    "maxspotinstancecountexceeded",
    "insufficient capacity",
    "all requested instance types were unavailable",
    "required offering",
    "servicelinkedrolecreationnotpermitted",
    "spotslrcreationfailed",
    "attempted to launch a spot instance",
    "spotmaxpricetoolow",
];

const CAPACITY_TYPE: &str = "karpenter.sh/capacity-type";

/// Spot launch failures of the KW101 kind.
const SLR: &[&str] = &[
    "ServiceLinkedRoleCreationNotPermitted",
    "SpotSLRCreationFailed",
    "Attempted to launch a spot instance but failed",
];

/// Spot launch failures of the KW215 kind.
const CAPACITY: &[&str] = &[
    "InsufficientInstanceCapacity",
    "There is no Spot capacity available",
    "MaxSpotInstanceCountExceeded",
    "insufficient capacity",
    "all requested instance types were unavailable",
    "UnfulfillableCapacity:",
    "SpotMaxPriceTooLow",
];

/// Whether a NodePool's requirements allow spot and nothing else.
fn spot_only(requirements: &[Requirement]) -> bool {
    requirements
        .iter()
        .filter(|r| r.key == CAPACITY_TYPE)
        .any(|r| match r.operator.as_str() {
            "In" => !r.values.is_empty() && r.values.iter().all(|v| v == "spot"),
            // `NotIn [on-demand]` (and `reserved`) leaves spot only where no reservation exists.
            "NotIn" => r.values.iter().any(|v| v == "on-demand"),
            _ => false,
        })
}

/// Whether a scheduling clause leaves the pod spot only: its `requirements=` (the NodePool's
/// and the pod's together) say `karpenter.sh/capacity-type In [spot]`, or, when they do not
/// name the capacity type, the NodePool the clause names allows only spot.
pub fn spot_only_clause(facts: &Facts, clause: &Clause) -> bool {
    let from_text = clause
        .requirements
        .as_deref()
        .and_then(|r| in_values(r, CAPACITY_TYPE));
    match from_text {
        Some(values) => values == ["spot"],
        None => clause
            .nodepool
            .as_deref()
            .and_then(|n| facts.nodepool(n))
            .is_some_and(|p| !p.meta.from_table && spot_only(&p.requirements)),
    }
}

/// Requirement items written for a NodePool (`        - key: ...`, under
/// `spec.template.spec.requirements`) as the pool's YAML: a v1alpha5 Provisioner (Karpenter
/// before v0.32) holds them at `spec.requirements`, four columns to the left.
pub fn pool_requirements_yaml(provisioner: bool, items: &str) -> String {
    if !provisioner {
        return format!("spec:\n  template:\n    spec:\n      requirements:\n{items}");
    }
    let mut out = "spec:\n  requirements:\n".to_string();
    for l in items.lines() {
        out.push_str(l.strip_prefix("    ").unwrap_or(l));
        out.push('\n');
    }
    out
}

/// One spot-only NodePool and the failures seen for it.
struct Case<'a> {
    nodepool: Option<String>,
    /// The requirement as the evidence showed it.
    requirement: String,
    from_object: bool,
    failures: Vec<&'a Message>,
    slr: bool,
    capacity: bool,
    /// The scheduling text named it a Provisioner (`incompatible with provisioner "<p>"`).
    provisioner: bool,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut cases: Vec<Case<'_>> = Vec::new();
    for np in facts
        .nodepools
        .iter()
        .filter(|p| spot_only(&p.requirements))
    {
        let requirement = np
            .requirements
            .iter()
            .find(|r| r.key == CAPACITY_TYPE)
            .map(|r| format!("{CAPACITY_TYPE} {} [{}]", r.operator, r.values.join(" ")))
            .unwrap_or_default();
        // Ingest keeps one fact per NodePool; two of one name left are a v1alpha5 Provisioner
        // and the NodePool migrated from it, or pools an anonymiser masked alike
        // (`<redacted>`): one case, as the report cannot tell them apart by name.
        if cases
            .iter()
            .any(|c| c.nodepool.as_deref() == Some(np.meta.name.as_str()))
        {
            continue;
        }
        cases.push(Case {
            nodepool: Some(np.meta.name.clone()),
            requirement,
            from_object: true,
            failures: Vec::new(),
            slr: false,
            capacity: false,
            provisioner: np.is_provisioner,
        });
    }
    // The scheduling error's requirements hold the NodePool's (and the pod's) requirements.
    for e in scheduling_errors(facts) {
        for clause in &e.clauses {
            if clause.requirements.is_none() || !spot_only_clause(facts, clause) {
                continue;
            }
            let np = clause.nodepool.clone().or_else(|| {
                clause
                    .requirements
                    .as_deref()
                    .and_then(|r| single_value(r, "karpenter.sh/nodepool"))
            });
            // A zone the facts show the NodePool or its subnets lack is KW202's to explain:
            // on-demand would not be offered there either.
            let offering = matches!(clause.cause, Cause::InstanceTypes(f) if f.offering)
                && !zone_gap_known(facts, &e, clause);
            let i = case_for(&mut cases, np, || format!("{CAPACITY_TYPE} In [spot]"));
            cases[i].provisioner |= clause.provisioner;
            if offering {
                cases[i].failures.push(e.message);
                cases[i].capacity = true;
            }
        }
    }
    if cases.is_empty() {
        return Vec::new();
    }
    for m in &facts.messages {
        let t = unescaped(&m.text);
        let slr = contains_any(&t, SLR);
        let capacity = contains_any(&t, CAPACITY);
        if !slr && !capacity {
            continue;
        }
        if on_demand_failure(facts, m) {
            continue;
        }
        let np = failure_nodepool(facts, m);
        let target = match &np {
            Some(n) => cases
                .iter()
                .position(|c| c.nodepool.as_deref() == Some(n.as_str())),
            // Not attributable: it belongs to the spot-only NodePool when there is one, unless
            // it names a NodeClaim that is not that NodePool's (`<nodepool>-<suffix>`).
            None if cases.len() == 1 => {
                let foreign = match (failure_claim(facts, m), &cases[0].nodepool) {
                    (Some(claim), Some(pool)) => {
                        !is_mask(&claim) && !claim.starts_with(&format!("{pool}-"))
                    }
                    _ => false,
                };
                (!foreign).then_some(0)
            }
            None => None,
        };
        if let Some(i) = target {
            let c = &mut cases[i];
            if !c.failures.iter().any(|f| std::ptr::eq(*f, m)) {
                c.failures.push(m);
            }
            c.slr |= slr;
            c.capacity |= capacity;
        }
    }
    cases
        .iter()
        .filter(|c| !c.failures.is_empty())
        .map(|c| diagnose(facts, c))
        .collect()
}

fn case_for<'a>(
    cases: &mut Vec<Case<'a>>,
    nodepool: Option<String>,
    requirement: impl Fn() -> String,
) -> usize {
    if let Some(i) = cases
        .iter()
        .position(|c| c.nodepool == nodepool || (nodepool.is_none() && cases.len() == 1))
    {
        return i;
    }
    cases.push(Case {
        nodepool,
        requirement: requirement(),
        from_object: false,
        failures: Vec::new(),
        slr: false,
        capacity: false,
        provisioner: false,
    });
    cases.len() - 1
}

/// The NodeClaim a launch failure names: the event's object or the log's field.
fn failure_claim(facts: &Facts, m: &Message) -> Option<String> {
    m.object
        .as_ref()
        .filter(|o| o.kind.eq_ignore_ascii_case("NodeClaim"))
        .map(|o| o.name.clone())
        .or_else(|| {
            record_of(facts, m).and_then(|r| {
                r.field_name("NodeClaim")
                    .or_else(|| r.field_name("nodeclaim"))
            })
        })
}

/// A failure that says it was an on-demand launch (`"capacity-type":"on-demand"` on the
/// record): no evidence about spot.
fn on_demand_failure(facts: &Facts, m: &Message) -> bool {
    record_of(facts, m)
        .and_then(|r| r.fields.get("capacity-type"))
        .and_then(|v| v.as_str())
        .is_some_and(|v| v == "on-demand")
}

/// The NodePool a launch failure belongs to: the message's NodePool, else its NodeClaim's
/// (the object, the `created nodeclaim` log, or the `<nodepool>-<suffix>` name Karpenter gives
/// NodeClaims).
fn failure_nodepool(facts: &Facts, m: &Message) -> Option<String> {
    if let Some(np) = message_nodepool(facts, m) {
        return Some(np);
    }
    let claim = failure_claim(facts, m)?;
    if let Some(np) = facts
        .nodeclaims
        .iter()
        .find(|c| c.meta.name == claim)
        .and_then(|c| c.nodepool.clone())
    {
        return Some(np);
    }
    if let Some(np) = facts.nodepool_of_claim_in_logs(&claim) {
        return Some(np);
    }
    claim
        .rsplit_once('-')
        .map(|(prefix, _)| prefix.to_string())
        .filter(|p| facts.nodepool(p).is_some())
}

fn diagnose(facts: &Facts, c: &Case<'_>) -> Diagnosis {
    let np_obj: Option<&NodePool> = c.nodepool.as_deref().and_then(|n| facts.nodepool(n));
    let np = c.nodepool.as_deref().unwrap_or("<nodepool>");
    // A v1alpha5 Provisioner (Karpenter before v0.32) is named and edited as one: the object
    // says, else the scheduling text or the input's era.
    let provisioner = match np_obj {
        Some(p) => p.is_provisioner,
        None => c.provisioner || before_v0_32(facts),
    };
    let (kind, resource) = if provisioner {
        ("Provisioner", "provisioner")
    } else {
        ("NodePool", "nodepool")
    };
    let label = c
        .nodepool
        .as_deref()
        .map(|n| format!("{kind} {n}"))
        .unwrap_or_else(|| format!("The {kind}"));
    let mut kinds: Vec<String> = Vec::new();
    if c.capacity {
        let codes: Vec<&str> = [
            "InsufficientInstanceCapacity",
            "MaxSpotInstanceCountExceeded",
            "SpotMaxPriceTooLow",
            "UnfulfillableCapacity:",
            "all requested instance types were unavailable",
            "required offering",
        ]
        .into_iter()
        .filter(|code| c.failures.iter().any(|m| contains_any(&m.text, &[code])))
        .map(|code| match code {
            "required offering" => "no instance type has the required offering",
            code => code.trim_end_matches(':'),
        })
        .collect();
        let seen = if codes.is_empty() {
            String::new()
        } else {
            format!(" ({})", codes.join(", "))
        };
        push_unique(
            &mut kinds,
            format!("no spot capacity (or spot quota) for the allowed types and zones{seen}"),
        );
    }
    if c.slr {
        push_unique(
            &mut kinds,
            "the spot service-linked role is missing".to_string(),
        );
    }
    let whose = if c.from_object {
        "its requirements"
    } else {
        if provisioner {
            "the requirements Karpenter evaluated (the Provisioner's and the pod's)"
        } else {
            "the requirements Karpenter evaluated (the NodePool's and the pod's)"
        }
    };
    let summary = format!(
        "{label} allows only spot capacity ({whose}: {}) while spot launches fail: {}. Nothing else is allowed, so the pods stay Pending although on-demand capacity would launch; with both allowed, Karpenter prefers spot and falls back to on-demand.",
        c.requirement,
        kinds.join("; ")
    );
    let mut related: Vec<&'static str> = Vec::new();
    if c.capacity {
        related.push("KW215");
    }
    if c.slr {
        related.push("KW101");
    }
    let items = match np_obj {
        Some(p) if !p.requirements.is_empty() => requirement_items(&p.requirements),
        _ => "        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"spot\", \"on-demand\"]\n".to_string(),
    };
    let yaml = pool_requirements_yaml(provisioner, &items);
    let mut steps = vec![Remediation::yaml(
        format!(
            "Allow on-demand next to spot in {kind} {np} (`kubectl edit {resource} {np}`; the other requirements stay as they are):"
        ),
        yaml,
    )];
    if !c.from_object {
        steps.push(Remediation::command(
            format!("If the {kind} already allows on-demand, the pod's own nodeSelector or affinity asks for spot: check both:"),
            format!(
                "kubectl get {resource} {np} -o jsonpath='{{{}}}{{\"\\n\"}}'",
                if provisioner {
                    ".spec.requirements"
                } else {
                    ".spec.template.spec.requirements"
                }
            ),
        ));
    }
    if c.slr {
        steps.push(Remediation::command(
            "Create the spot service-linked role once per account (KW101):",
            "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com",
        ));
    }
    // The pods waiting on these launches: the failures' own pods (a scheduling error), and the
    // pods the failing NodeClaims were made for.
    let claims: Vec<String> = c
        .failures
        .iter()
        .filter_map(|m| failure_claim(facts, m))
        .collect();
    let waiting = pods_waiting_on(facts, c.failures.iter().copied(), &claims);
    Diagnosis::new(&META, summary)
        .with_node_pool(c.nodepool.as_deref())
        .with_objects(&waiting)
        .with_confidence(if c.from_object || c.nodepool.is_some() {
            Confidence::High
        } else {
            Confidence::Medium
        })
        .with_messages(c.failures.iter().copied())
        .with_evidence(np_obj.and_then(|p| p.meta.evidence.clone()))
        .with_related(&related)
        .with_remediation(steps)
}

/// The NodePool's requirement items with on-demand added to the capacity type.
fn requirement_items(requirements: &[Requirement]) -> String {
    let mut out = String::new();
    for r in requirements {
        out.push_str(&format!("        - key: {}\n", r.key));
        if r.key == CAPACITY_TYPE {
            out.push_str("          operator: In\n          values: [\"spot\", \"on-demand\"]\n");
            continue;
        }
        out.push_str(&format!("          operator: {}\n", r.operator));
        if !r.values.is_empty() {
            let values: Vec<String> = r.values.iter().map(|v| format!("\"{v}\"")).collect();
            out.push_str(&format!("          values: [{}]\n", values.join(", ")));
        }
        if let Some(m) = r.min_values {
            out.push_str(&format!("          minValues: {m}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Meta;
    use crate::testing::{check_only, ids};

    fn req(key: &str, op: &str, values: &[&str]) -> Requirement {
        Requirement {
            key: key.into(),
            operator: op.into(),
            values: values.iter().map(|v| v.to_string()).collect(),
            min_values: None,
        }
    }

    fn spot_pool() -> NodePool {
        NodePool {
            meta: Meta {
                name: "batch-spot".into(),
                ..Default::default()
            },
            requirements: vec![
                req(CAPACITY_TYPE, "In", &["spot"]),
                req(
                    "node.kubernetes.io/instance-type",
                    "In",
                    &["c6i.8xlarge", "c7i.8xlarge"],
                ),
            ],
            ..Default::default()
        }
    }

    fn failure(text: &str) -> Message {
        Message {
            text: text.into(),
            ..Default::default()
        }
    }

    /// A failure of another NodePool's NodeClaim, or of an on-demand launch, says nothing
    /// about the spot-only NodePool.
    #[test]
    fn foreign_or_on_demand_failures_are_not_attributed() {
        let pool = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: spot-batch\nspec:\n  template:\n    spec:\n      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"spot\"]\n---\n";
        let foreign = format!(
            "{pool}{}",
            r#"{"level":"ERROR","message":"failed launching nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"general-5kx2p"},"error":"creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient r6i.8xlarge capacity in the Availability Zone you requested (us-east-1a)."}"#
        );
        assert!(ids(&check_only("KW216", &foreign)).is_empty());
        let on_demand = format!(
            "{pool}{}",
            r#"{"level":"ERROR","message":"failed launching nodeclaim","capacity-type":"on-demand","error":"creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient r6i.8xlarge capacity in the Availability Zone you requested (us-east-1a)."}"#
        );
        assert!(ids(&check_only("KW216", &on_demand)).is_empty());
        let own = foreign.replace("general-5kx2p", "spot-batch-5kx2p");
        assert_eq!(ids(&check_only("KW216", &own)), ["KW216"]);
        // An anonymised NodeClaim name is no evidence of another NodePool.
        for masked in ["<redacted>", "***", "REDACTED", "<nodeclaim-1>"] {
            let text = foreign.replace("general-5kx2p", masked);
            assert_eq!(ids(&check_only("KW216", &text)), ["KW216"], "{masked}");
        }
        assert!(!is_mask("general-5kx2p"));
        assert!(!is_mask("x-large-pool-abcde"));
    }

    #[test]
    fn spot_only_requirements() {
        assert!(spot_only(&[req(CAPACITY_TYPE, "In", &["spot"])]));
        assert!(spot_only(&[req(CAPACITY_TYPE, "NotIn", &["on-demand"])]));
        assert!(!spot_only(&[req(
            CAPACITY_TYPE,
            "In",
            &["spot", "on-demand"]
        )]));
        assert!(!spot_only(&[req(CAPACITY_TYPE, "Exists", &[])]));
        // No requirement: Karpenter defaults to on-demand.
        assert!(!spot_only(&[]));
    }

    #[test]
    fn object_and_failure() {
        let mut facts = Facts::default();
        facts.nodepools.push(spot_pool());
        assert!(
            check(&facts).is_empty(),
            "a spot-only NodePool alone is a choice"
        );
        facts.messages.push(failure("creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: There is no Spot capacity available that matches your request."));
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert!(d[0].summary.starts_with("NodePool batch-spot allows only spot capacity (its requirements: karpenter.sh/capacity-type In [spot])"), "{}", d[0].summary);
        assert_eq!(d[0].related, ["KW215"]);
        let yaml = d[0].remediation[0].yaml.as_deref().unwrap();
        assert!(yaml.contains("values: [\"spot\", \"on-demand\"]"));
        assert!(yaml.contains("values: [\"c6i.8xlarge\", \"c7i.8xlarge\"]"));
        facts.messages.push(failure("Attempted to launch a spot instance but failed due to \"AuthFailure.ServiceLinkedRoleCreationNotPermitted\""));
        let d = check(&facts);
        assert_eq!(d[0].related, ["KW215", "KW101"]);
        assert!(d[0].remediation.iter().any(|r| r.command.as_deref()
            == Some("aws iam create-service-linked-role --aws-service-name spot.amazonaws.com")));
    }

    #[test]
    fn from_the_scheduling_text() {
        let report = check_only(
            "KW216",
            r#"{"level":"ERROR","message":"could not schedule pod","controller":"provisioner","Pod":{"name":"video-1","namespace":"batch"},"error":"no instance type has the required offering, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [batch-spot], node.kubernetes.io/instance-type In [c6i.8xlarge], resources={\"cpu\":\"30180m\"}"}"#,
        );
        assert_eq!(ids(&report), ["KW216"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("batch-spot"));
        assert!(
            d.summary.contains("the NodePool's and the pod's"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            // Both capacity types allowed.
            r#"{"level":"ERROR","message":"could not schedule pod","error":"no instance type has the required offering, requirements=karpenter.sh/capacity-type In [on-demand spot], karpenter.sh/nodepool In [general], resources={\"cpu\":\"1\"}"}"#,
            // Spot failures without a spot-only NodePool.
            "creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: There is no Spot capacity available that matches your request.",
            // Spot only, but resources are the problem.
            r#"{"level":"ERROR","message":"could not schedule pod","error":"no instance type has enough resources, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [batch], resources={\"cpu\":\"300\"}"}"#,
        ] {
            assert!(ids(&check_only("KW216", text)).is_empty(), "{text}");
        }
        let mut facts = Facts::default();
        let mut both = spot_pool();
        both.requirements[0].values.push("on-demand".into());
        facts.nodepools.push(both);
        facts.messages.push(failure(
            "MaxSpotInstanceCountExceeded: Max spot instance count exceeded",
        ));
        assert!(check(&facts).is_empty());
    }

    #[test]
    fn failure_of_another_nodepool_is_not_counted() {
        let mut facts = Facts::default();
        facts.nodepools.push(spot_pool());
        facts.nodepools.push(NodePool {
            meta: Meta {
                name: "general".into(),
                ..Default::default()
            },
            requirements: vec![req(CAPACITY_TYPE, "In", &["spot", "on-demand"])],
            ..Default::default()
        });
        facts.messages.push(Message {
            text:
                "insufficient capacity, all requested instance types were unavailable during launch"
                    .into(),
            object: Some(crate::facts::ObjectRef::new(
                "NodeClaim",
                None,
                "general-x7k2p",
            )),
            ..Default::default()
        });
        assert!(check(&facts).is_empty());
        facts.messages[0].object = Some(crate::facts::ObjectRef::new(
            "NodeClaim",
            None,
            "batch-spot-x7k2p",
        ));
        assert_eq!(check(&facts).len(), 1);
    }

    /// Before v0.32 the pool is a Provisioner even when the input holds no Provisioner
    /// object: named so, edited with `kubectl edit provisioner`, requirements at
    /// `spec.requirements`.
    #[test]
    fn a_provisioner_from_the_log_alone() {
        let report = check_only(
            "KW216",
            "2023-09-12T08:14:31.120Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner \"spot-batch\", daemonset overhead={\"cpu\":\"150m\"}, no instance type satisfied resources {\"cpu\":\"4150m\"} and requirements karpenter.sh/capacity-type In [spot], karpenter.sh/provisioner-name In [spot-batch], kubernetes.io/os In [linux] (no instance type has the required offering)\t{\"commit\": \"322822a\", \"pod\": \"batch/render-1\"}",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .starts_with("Provisioner spot-batch allows only spot"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("NodePool"), "{}", d.summary);
        let fix = &d.remediation[0];
        assert!(
            fix.text.contains("`kubectl edit provisioner spot-batch`"),
            "{}",
            fix.text
        );
        assert!(
            fix.yaml.as_deref().is_some_and(|y| y
                .starts_with("spec:\n  requirements:\n    - key: karpenter.sh/capacity-type\n")),
            "{:?}",
            fix.yaml
        );
        assert_eq!(
            d.remediation[1].command.as_deref(),
            Some("kubectl get provisioner spot-batch -o jsonpath='{.spec.requirements}{\"\\n\"}'")
        );
    }

    /// A zone the facts show without a subnet is KW202's: on-demand is not offered there
    /// either, so the scheduling text alone is no spot failure.
    #[test]
    fn a_zone_without_subnet_is_not_spot() {
        let text = "Failed to schedule pod, no instance type has the required offering, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [np], topology.kubernetes.io/zone In [us-east-1c], resources={\"cpu\":\"1\"}\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: np\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: nc\n      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"spot\"]\n---\napiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: nc\nstatus:\n  subnets:\n    - id: subnet-1\n      zone: us-east-1a\n";
        assert!(ids(&check_only("KW216", text)).is_empty());
        let covered = text.replace("zone: us-east-1a", "zone: us-east-1c");
        assert_eq!(ids(&check_only("KW216", &covered)), ["KW216"]);
    }
}
