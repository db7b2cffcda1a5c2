//! KW208 no-ready-nodepool.

use crate::document::Evidence;
use crate::facts::{Facts, Message, MessageOrigin, NodePool, ObjectRef};
use crate::rules::kw2xx::scheduling::{message_nodepool, tail_after};
use crate::rules::kw4xx::disruption::unescaped;
use crate::rules::kw5xx::nodeclass::{
    contains_word, reports_condition, transition, undone_transition,
};
use crate::rules::names::closest;
use crate::rules::text::contains_any;
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW208",
    slug: "no-ready-nodepool",
    title: "No ready NodePool: Karpenter has nothing to launch from",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter provisions only from NodePools that are ready. Either the cluster has none
(`no nodepools found`), or the NodePool the pod needs is not ready and Karpenter skips it
(`ignoring nodepool, not ready`): Pending pods get no node.

Signals: the provisioner's `no nodepools found` (v0.32 to v1.8) / `no dynamic nodepools found`
(v1.9+) / `no provisioners found` (v0.2x to v0.31, Provisioner API), v0.32's `excluding nodePool
<np> from scheduling, provider not found` (its node class does not exist), `ignoring nodepool,
not ready` (with the `NodePool` field), v1.0's `nodePool not ready`,
and a NodePool whose `Ready` is False or whose `NodeClassReady` is False (condition, roll-up
message `NodeClassReady=False`, or `Status condition transitioned, Type: NodeClassReady, ...
-> False` event; `kubectl get nodepools` READY False), and `kubectl get nodepools` answering
`No resources found` while a pod is Pending (or the scheduler reports it unschedulable).

## Why it happens
Almost always the chain NodePool -> EC2NodeClass: `NodeClassReady` copies the EC2NodeClass's
`Ready`. The EC2NodeClass is not ready because a selector matched nothing (KW501), its
validation failed (KW502, or KW105 for the authorization checks), or it does not exist
(KW503). Less often the NodePool's own spec failed validation (`NodePoolValidationFailed`).
With no NodePool at all, Karpenter was installed without one.

## How to fix
Follow the chain: `kubectl get nodepool <np> -o yaml` (conditions), then `kubectl get
ec2nodeclass <name> -o yaml` (conditions), and fix the EC2NodeClass as the linked rule says.
Without any NodePool, create one that references an EC2NodeClass. When the input also shows
the EC2NodeClass reported missing, the message is older than the class: read the NodePool's
conditions again rather than creating it; when it shows a class of a similar name, the
`nodeClassRef` is misspelt; an AWSNodeTemplate of that name (pre-v0.32) does not count, a
NodePool needs an EC2NodeClass.
"#,
};

const SIGNALS: &[&str] = &[
    "no nodepools found",
    "no dynamic nodepools found",
    "no provisioners found",
    "from scheduling, provider not found",
    "ignoring nodepool, not ready",
    "nodepool not ready",
    "nodeclassready=false",
    "nodepoolvalidationfailed",
    "nodeclassnotfound",
    "nodeclassterminating",
    "nodeclass not found on cluster",
    "nodeclass is terminating",
    "status condition transitioned",
];

/// Why a NodePool is not ready, as far as the input says, with the rule that explains it.
#[derive(Debug, Clone, PartialEq)]
enum Cause {
    NodeClassMissing,
    /// Reported missing, but the input shows the node class it references existing; the
    /// failing dependents when it is not ready either.
    NodeClassExistsNow(Vec<String>),
    NodeClassTerminating,
    /// Its EC2NodeClass is not ready; the failing dependents when known.
    NodeClassNotReady(Vec<String>),
    /// The EC2NodeClass failed validation; `auth` when an authorization check failed.
    Validation {
        auth: bool,
    },
    OwnValidation,
    Unknown,
}

impl Cause {
    fn related(&self) -> Option<&'static str> {
        match self {
            Cause::NodeClassMissing | Cause::NodeClassTerminating => Some("KW503"),
            Cause::NodeClassNotReady(_) => Some("KW501"),
            Cause::NodeClassExistsNow(failing) if !failing.is_empty() => Some("KW501"),
            Cause::NodeClassExistsNow(_) => None,
            Cause::Validation { auth: true } => Some("KW105"),
            Cause::Validation { auth: false } => Some("KW502"),
            _ => None,
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Cause::Unknown => 0,
            Cause::OwnValidation => 1,
            Cause::Validation { .. } => 2,
            Cause::NodeClassNotReady(_) => 3,
            Cause::NodeClassTerminating
            | Cause::NodeClassMissing
            | Cause::NodeClassExistsNow(_) => 4,
        }
    }
}

const DEPENDENTS: &[&str] = &[
    "SubnetsReady",
    "SecurityGroupsReady",
    "AMIsReady",
    "InstanceProfileReady",
    "PlacementGroupReady",
    "CapacityReservationsReady",
];

const AUTH: &[&str] = &["AuthCheckFailed", "Controller isn't authorized to call"];

/// The cause a text shows for a NodePool's NodeClassReady=False.
fn cause_in(text: &str, auth_anywhere: bool) -> Cause {
    if contains_word(text, "NodeClassNotFound")
        || contains_any(
            text,
            &[
                "NodeClass not found on cluster",
                "from scheduling, provider not found",
            ],
        )
    {
        return Cause::NodeClassMissing;
    }
    if contains_word(text, "NodeClassTerminating")
        || contains_any(text, &["NodeClass is Terminating"])
    {
        return Cause::NodeClassTerminating;
    }
    let failing: Vec<String> = DEPENDENTS
        .iter()
        .filter(|d| contains_word(text, &format!("{d}=False")))
        .map(|d| format!("{d}=False"))
        .collect();
    if !failing.is_empty() {
        return Cause::NodeClassNotReady(failing);
    }
    if contains_word(text, "ValidationSucceeded=False")
        && !contains_word(text, "NodePoolValidationFailed")
    {
        return Cause::Validation {
            auth: auth_anywhere || contains_any(text, AUTH),
        };
    }
    if contains_word(text, "NodePoolValidationFailed") {
        return Cause::OwnValidation;
    }
    Cause::Unknown
}

/// Whether a message says a NodePool is not ready (as opposed to a NodeClaim or an
/// EC2NodeClass).
fn says_not_ready(facts: &Facts, m: &Message, text: &str) -> bool {
    if contains_any(
        text,
        &[
            "ignoring nodepool, not ready",
            "nodepool not ready",
            "from scheduling, provider not found",
        ],
    ) {
        return true;
    }
    if reports_condition(text, "NodeClassReady", "False")
        || contains_word(text, "NodePoolValidationFailed")
        || contains_word(text, "NodeClassNotFound")
        || contains_word(text, "NodeClassTerminating")
        || contains_any(
            text,
            &["NodeClass not found on cluster", "NodeClass is Terminating"],
        )
    {
        return true;
    }
    let about_nodepool = m
        .object
        .as_ref()
        .is_some_and(|o| o.kind.eq_ignore_ascii_case("NodePool"))
        || message_nodepool(facts, m).is_some() && m.object.is_none();
    about_nodepool
        && transition(text).is_some_and(|t| {
            t.condition_type.eq_ignore_ascii_case("Ready") && t.to.eq_ignore_ascii_case("False")
        })
}

struct Group<'a> {
    nodepool: Option<String>,
    cause: Cause,
    messages: Vec<&'a Message>,
    evidence: Vec<Evidence>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let (groups, none_found) = not_ready_groups(facts);
    let mut out: Vec<Diagnosis> = groups.iter().map(|g| diagnose(facts, g)).collect();
    if !none_found.is_empty() && groups.is_empty() {
        out.push(no_nodepools(facts, &none_found));
    } else if out.is_empty() {
        out.extend(empty_nodepool_list(facts));
    }
    out
}

/// `kubectl get nodepools` answering `No resources found` while a pod is Pending: the
/// cluster has no NodePool at all, which no log line needs to confirm.
fn empty_nodepool_list(facts: &Facts) -> Option<Diagnosis> {
    if facts.nodepools.iter().any(|p| !p.is_provisioner) {
        return None;
    }
    let empty = facts.empty_lists.iter().find(|e| {
        e.resource
            .as_deref()
            .is_some_and(|r| r.split(',').any(|r| r.starts_with("nodepool")))
    })?;
    let pending: Vec<ObjectRef> = facts
        .pods
        .iter()
        .filter(|p| p.is_pending())
        .map(|p| p.object_ref())
        .collect();
    let scheduling_failed = facts.messages.iter().any(|m| {
        contains_any(
            &m.text,
            &[
                "failed to schedule pod",
                "nodes are available",
                "FailedScheduling",
            ],
        )
    });
    if pending.is_empty() && !scheduling_failed {
        return None;
    }
    let (waiting, them) = match pending.as_slice() {
        [] => ("a pod is Pending".to_string(), "it"),
        [one] => (format!("Pod {} is Pending", one.qualified_name()), "it"),
        several => (format!("{} pods are Pending", several.len()), "them"),
    };
    let summary = format!(
        "The cluster has no NodePool (`kubectl get nodepools`: No resources found) while {waiting}: Karpenter provisions only from NodePools, so it launches nothing for {them} until one exists."
    );
    Some(
        Diagnosis::new(&META, summary)
            .with_confidence(Confidence::High)
            .with_objects(pending.iter())
            .with_evidence([empty.evidence.clone()])
            .with_remediation(create_nodepool_steps(facts)),
    )
}

/// Why a NodePool the input shows not ready is not ready, for the rules that meet it from
/// the pod's side (KW203: a pod pinned to it).
#[derive(Debug, Clone, PartialEq)]
pub struct NotReady {
    /// `EC2NodeClass gpu is not ready: SubnetsReady=False (KW501)`, or `the reason is not
    /// in the input`.
    pub because: String,
    /// Whether the input says why (`because` names a cause).
    pub cause_known: bool,
    /// The EC2NodeClass it references, when known.
    pub nodeclass: Option<String>,
    /// The rule that explains the cause (KW501, KW502, KW503, KW105), when known.
    pub related: Option<&'static str>,
    /// Where the input says it is not ready.
    pub evidence: Vec<Evidence>,
}

/// `Some` when the input says NodePool `name` is not ready (its conditions, the
/// `kubectl get nodepools` READY column, `ignoring nodepool, not ready`).
pub fn not_ready(facts: &Facts, name: &str) -> Option<NotReady> {
    let (groups, _) = not_ready_groups(facts);
    let g = groups
        .iter()
        .find(|g| g.nodepool.as_deref() == Some(name))?;
    let (cause, nodeclass, because) = explain(facts, g);
    let mut evidence = g.evidence.clone();
    evidence.extend(g.messages.iter().map(|m| m.evidence.clone()));
    Some(NotReady {
        because,
        cause_known: cause != Cause::Unknown,
        nodeclass,
        related: cause.related(),
        evidence,
    })
}

fn not_ready_groups(facts: &Facts) -> (Vec<Group<'_>>, Vec<&Message>) {
    let auth_anywhere = facts.messages.iter().any(|m| contains_any(&m.text, AUTH));
    let mut none_found: Vec<&Message> = Vec::new();
    let mut groups: Vec<Group<'_>> = Vec::new();
    for m in &facts.messages {
        let t = unescaped(&m.text);
        // `no provisioners found` is a common phrase outside Karpenter: only its log counts.
        if contains_any(&t, &["no nodepools found", "no dynamic nodepools found"])
            || (m.origin == MessageOrigin::KarpenterLog
                && contains_any(&t, &["no provisioners found"]))
        {
            none_found.push(m);
            continue;
        }
        if !says_not_ready(facts, m, &t) || undone_transition(facts, m) {
            continue;
        }
        let nodepool = message_nodepool(facts, m).or_else(|| excluded_nodepool(&t));
        let cause = cause_in(&t, auth_anywhere);
        add(&mut groups, nodepool, cause, Some(m), None);
    }
    for np in &facts.nodepools {
        let not_ready = np.conditions.iter().find(|c| {
            (c.condition_type == "Ready" || c.condition_type == "NodeClassReady")
                && c.status == "False"
        });
        let Some(cond) = not_ready else { continue };
        let mut cause = Cause::Unknown;
        for c in np.conditions.iter().filter(|c| c.status == "False") {
            let text = format!(
                "{}=False {} {}",
                c.condition_type,
                c.reason.as_deref().unwrap_or_default(),
                c.message.as_deref().unwrap_or_default()
            );
            let found = if c.condition_type == "NodeClassReady"
                && cause_in(&text, auth_anywhere) == Cause::Unknown
            {
                Cause::NodeClassNotReady(Vec::new())
            } else {
                cause_in(&text, auth_anywhere)
            };
            if found.rank() > cause.rank() {
                cause = found;
            }
        }
        let evidence = cond.evidence.clone().or_else(|| np.meta.evidence.clone());
        add(
            &mut groups,
            Some(np.meta.name.clone()),
            cause,
            None,
            evidence,
        );
    }
    (groups, none_found)
}

/// `excluding nodePool <np> from scheduling, provider not found` (v0.32) -> `<np>`.
fn excluded_nodepool(text: &str) -> Option<String> {
    let tail = tail_after(text, "excluding nodepool ")?;
    let name = tail.split_whitespace().next()?;
    Some(name.trim_matches(['"', ',']).to_string()).filter(|n| !n.is_empty())
}

fn add<'a>(
    groups: &mut Vec<Group<'a>>,
    nodepool: Option<String>,
    cause: Cause,
    message: Option<&'a Message>,
    evidence: Option<Evidence>,
) {
    // An unnamed NodePool joins the only named one (the same paste describes one NodePool).
    let i = match groups
        .iter()
        .position(|g| g.nodepool == nodepool || g.nodepool.is_none() || nodepool.is_none())
    {
        Some(i) => i,
        None => {
            groups.push(Group {
                nodepool: nodepool.clone(),
                cause: Cause::Unknown,
                messages: Vec::new(),
                evidence: Vec::new(),
            });
            groups.len() - 1
        }
    };
    let g = &mut groups[i];
    if g.nodepool.is_none() {
        g.nodepool = nodepool;
    }
    if cause.rank() > g.cause.rank() {
        g.cause = cause;
    }
    g.messages.extend(message);
    g.evidence.extend(evidence);
}

fn nodeclass_of<'a>(facts: &'a Facts, np: Option<&'a NodePool>) -> Option<String> {
    np.and_then(|p| p.nodeclass_ref.clone())
        .or_else(|| np.and_then(nodeclass_in_conditions))
        .or_else(|| match facts.nodeclasses.as_slice() {
            [only] => Some(only.meta.name.clone()),
            _ => None,
        })
        .or_else(|| only_nodeclass_spoken_of(facts))
}

/// The one EC2NodeClass (or AWSNodeTemplate) the input's events and conditions are about,
/// when it shows no such object itself (`kubectl describe ec2nodeclass` cut to its events).
fn only_nodeclass_spoken_of(facts: &Facts) -> Option<String> {
    let mut found: Option<&str> = None;
    for m in &facts.messages {
        let Some(o) = m.object.as_ref() else {
            continue;
        };
        if !matches!(o.kind.as_str(), "EC2NodeClass" | "AWSNodeTemplate") {
            continue;
        }
        match found {
            Some(name) if name != o.name => return None,
            _ => found = Some(&o.name),
        }
    }
    found.map(str::to_string)
}

/// The EC2NodeClass a NodePool's condition message names (`EC2NodeClass "default" not
/// found`), for a NodePool pasted without its spec (`sed -n '/^status/,$p'`).
fn nodeclass_in_conditions(np: &NodePool) -> Option<String> {
    np.conditions
        .iter()
        .find_map(|c| nodeclass_named_in(c.message.as_deref()?))
}

/// `<name>` of `NodeClass "<name>"` / `EC2NodeClass "<name>"` in a text.
fn nodeclass_named_in(text: &str) -> Option<String> {
    let at = text.find("NodeClass \"")? + "NodeClass \"".len();
    let name = text[at..].split('"').next()?;
    (!name.is_empty() && !name.contains(' ')).then(|| name.to_string())
}

/// The one EC2NodeClass the input's messages name that way (a status slice pasted without the
/// NodePool's spec is read as lines, not as an object).
fn nodeclass_named_in_messages(facts: &Facts) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for name in facts
        .messages_containing("NodeClass \"")
        .filter_map(|m| nodeclass_named_in(&m.text))
    {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The cause (refined from the EC2NodeClass object), the EC2NodeClass's name and the
/// `because` clause of the summary.
fn explain(facts: &Facts, g: &Group<'_>) -> (Cause, Option<String>, String) {
    let np_obj = g.nodepool.as_deref().and_then(|n| facts.nodepool(n));
    let reference = np_obj.and_then(|p| p.nodeclass_ref.clone());
    let nc = nodeclass_of(facts, np_obj).or_else(|| nodeclass_named_in_messages(facts));
    // Refine the cause from the EC2NodeClass object when the NodePool's texts did not say.
    let mut cause = g.cause.clone();
    let nc_obj = nc.as_deref().and_then(|n| facts.nodeclass(n));
    let failing: Vec<String> = nc_obj
        .map(|o| {
            o.conditions
                .iter()
                .filter(|c| DEPENDENTS.contains(&c.condition_type.as_str()) && c.status == "False")
                .map(|c| format!("{}=False", c.condition_type))
                .collect()
        })
        .unwrap_or_default();
    if let Some(nc_obj) = nc_obj {
        let validation = nc_obj
            .conditions
            .iter()
            .find(|c| c.condition_type == "ValidationSucceeded" && c.status == "False");
        if cause == Cause::NodeClassMissing && !nc_obj.is_aws_node_template {
            // Reported missing, yet the input holds it: a later paste, or (without the
            // NodePool object) the only node class, which may not be the one referenced.
            cause = Cause::NodeClassExistsNow(failing.clone());
        } else if !failing.is_empty() && cause.rank() <= 3 {
            cause = Cause::NodeClassNotReady(failing.clone());
        } else if let Some(v) = validation.filter(|_| cause.rank() < 2) {
            cause = Cause::Validation {
                auth: v.reason.as_deref().is_some_and(|r| contains_any(r, AUTH)),
            };
        } else if cause.rank() < 3
            && nc_obj
                .conditions
                .iter()
                .any(|c| c.condition_type == "Ready" && c.status == "False")
        {
            // Only its Ready column is known (`kubectl get ec2nodeclass`): not ready all the
            // same, which is why the NodePool is not; KW501 tells which part fails.
            cause = Cause::NodeClassNotReady(Vec::new());
        }
    } else if np_obj.is_some() && nc.is_some() && !facts.nodeclasses.is_empty() && cause.rank() < 4
    {
        cause = Cause::NodeClassMissing;
    }
    let nc_label = nc
        .as_deref()
        .map(|n| format!("EC2NodeClass {n}"))
        .unwrap_or_else(|| "its EC2NodeClass".to_string());
    let because = match &cause {
        Cause::NodeClassMissing => missing_because(facts, nc.as_deref(), &nc_label),
        Cause::NodeClassExistsNow(failing) => {
            let name = nc.as_deref().unwrap_or_default();
            let state = if failing.is_empty() {
                String::new()
            } else {
                format!(", not ready: {} (KW501)", failing.join(", "))
            };
            if reference.as_deref() == Some(name) {
                format!(
                    "Karpenter reported its EC2NodeClass {name} missing, but the input shows EC2NodeClass {name} existing{state}: the message predates its creation (read the NodePool's conditions again), so do not create it"
                )
            } else {
                format!(
                    "Karpenter reported its node class missing, but the input shows EC2NodeClass {name} existing{state}: either the message predates it, or the NodePool's nodeClassRef names another class (compare the reference below with {name})"
                )
            }
        }
        Cause::NodeClassTerminating => format!("{nc_label} is being deleted (KW503)"),
        Cause::NodeClassNotReady(failing) if !failing.is_empty() => {
            format!("{nc_label} is not ready: {} (KW501)", failing.join(", "))
        }
        Cause::NodeClassNotReady(_) => format!("{nc_label} is not ready (KW501)"),
        Cause::Validation { auth: true } => format!(
            "{nc_label} failed validation: the controller may not launch with it (an authorization check, KW105)"
        ),
        Cause::Validation { auth: false } => format!("{nc_label} failed validation (KW502)"),
        Cause::OwnValidation => "its own spec failed validation (NodePoolValidationFailed)".to_string(),
        // Its EC2NodeClass shown Ready rules out NodeClassReady: the NodePool's own
        // ValidationSucceeded (a requirement or label the controller rejects) is what is left.
        Cause::Unknown if shown_ready(facts, nc.as_deref()) => format!(
            "the reason is not in the input; {nc_label} shows Ready=True, so its NodeClassReady is not it: read the NodePool's own conditions (ValidationSucceeded=False names a requirement, label or taint the controller rejects), or the two were read at different times"
        ),
        Cause::Unknown => "the reason is not in the input".to_string(),
    };
    (cause, nc, because)
}

/// Whether the input shows this EC2NodeClass Ready (a condition, or READY True in a table row).
fn shown_ready(facts: &Facts, nc: Option<&str>) -> bool {
    nc.and_then(|n| facts.nodeclass(n)).is_some_and(|o| {
        o.conditions
            .iter()
            .any(|c| c.condition_type == "Ready" && c.status == "True")
    })
}

/// `EC2NodeClass <n> does not exist (KW503)`, with what the input has instead: an
/// AWSNodeTemplate of that name (which a NodePool cannot use), or a near-miss name.
fn missing_because(facts: &Facts, nc: Option<&str>, nc_label: &str) -> String {
    let mut because = format!("{nc_label} does not exist (KW503)");
    let Some(name) = nc else {
        let names: Vec<&str> = facts
            .nodeclasses
            .iter()
            .map(|c| c.meta.name.as_str())
            .collect();
        if !names.is_empty() {
            because.push_str(&format!(
                "; the input shows {} existing: the message may predate them, or the NodePool's nodeClassRef names none of them (compare the reference below)",
                names.join(", ")
            ));
        }
        return because;
    };
    if facts
        .nodeclass(name)
        .is_some_and(|c| c.is_aws_node_template)
    {
        because.push_str(&format!(
            "; the input's {name} is an AWSNodeTemplate (karpenter.k8s.aws/v1alpha1), which a NodePool cannot reference: convert it to an EC2NodeClass of that name"
        ));
        return because;
    }
    let others: Vec<&str> = facts
        .nodeclasses
        .iter()
        .filter(|c| !c.is_aws_node_template)
        .map(|c| c.meta.name.as_str())
        .collect();
    if let Some(near) = closest(name, others.iter().copied()) {
        because.push_str(&format!(
            "; the input has EC2NodeClass {near}, a near match: the nodeClassRef name is probably misspelt, point it at {near} rather than creating {name}"
        ));
    } else if !others.is_empty() {
        because.push_str(&format!(
            "; the input's EC2NodeClasses are {}",
            others.join(", ")
        ));
    }
    because
}

fn diagnose(facts: &Facts, g: &Group<'_>) -> Diagnosis {
    let (cause, nc, because) = explain(facts, g);
    let np_label = g
        .nodepool
        .as_deref()
        .map(|n| format!("NodePool {n}"))
        .unwrap_or_else(|| "The NodePool".to_string());
    let summary = if matches!(cause, Cause::NodeClassExistsNow(_)) {
        format!(
            "{np_label} was not ready when Karpenter looked, so it launched nothing from it: {because}. Pending pods that need it stayed Pending."
        )
    } else {
        format!(
            "{np_label} is not ready, so Karpenter ignores it and launches nothing from it: {because}. Pending pods that need it stay Pending."
        )
    };
    let np = g.nodepool.as_deref().unwrap_or("<nodepool>");
    let nc_name = nc.as_deref().unwrap_or("<ec2nodeclass>");
    let mut steps = vec![
        Remediation::command(
            "Read the NodePool's conditions (NodeClassReady copies its EC2NodeClass's Ready):",
            format!("kubectl get nodepool {np} -o jsonpath='{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}}: {{.message}}{{\"\\n\"}}{{end}}'"),
        ),
        Remediation::command(
            "Read the EC2NodeClass's conditions, and fix what the linked rule says:",
            format!("kubectl get ec2nodeclass {nc_name} -o jsonpath='{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}}: {{.message}}{{\"\\n\"}}{{end}}'"),
        ),
    ];
    if cause == Cause::Unknown && shown_ready(facts, nc.as_deref()) {
        steps.truncate(1);
    }
    if cause == Cause::NodeClassMissing {
        // No conditions to read on an object that does not exist: the reference is the fix.
        steps[1] = Remediation::command(
            format!(
                "{} does not exist: compare the reference with the EC2NodeClasses that exist, then create it or point the NodePool at one (KW503):",
                nc.as_deref()
                    .map(|n| format!("EC2NodeClass {n}"))
                    .unwrap_or_else(|| "The EC2NodeClass".to_string())
            ),
            format!("kubectl get nodepool {np} -o jsonpath='{{.spec.template.spec.nodeClassRef}}{{\"\\n\"}}' && kubectl get ec2nodeclasses"),
        );
    } else if matches!(cause, Cause::NodeClassExistsNow(_)) && !facts.nodeclasses.is_empty() {
        steps.insert(
            1,
            Remediation::command(
                "Compare the node class the NodePool references with those that exist:",
                format!("kubectl get nodepool {np} -o jsonpath='{{.spec.template.spec.nodeClassRef.name}}{{\"\\n\"}}' && kubectl get ec2nodeclasses"),
            ),
        );
    }
    // What the input shows in full needs no command to read it again.
    let pool = g
        .nodepool
        .as_deref()
        .and_then(|n| facts.nodepool(n))
        .filter(|p| !p.meta.from_table);
    steps.retain(|s| !super::reads_only_shown(facts, s));
    for step in &mut steps {
        // `<read the nodeClassRef> && kubectl get ec2nodeclasses`: the pasted NodePool shows it.
        let rest = step.command.as_deref().and_then(|c| c.split_once(" && "));
        if let (Some((_, rest)), true) = (rest, pool.is_some_and(|p| p.nodeclass_ref.is_some())) {
            // The list shown too: the step's text alone says what to do.
            step.command = (!facts.ran(rest)).then(|| rest.to_string());
            if step.command.is_none() {
                step.text = format!("{}.", step.text.trim_end_matches(':'));
            }
        }
    }
    let mut d = Diagnosis::new(&META, summary)
        .with_node_pool(g.nodepool.as_deref())
        .with_messages(g.messages.iter().copied())
        .with_evidence(g.evidence.clone())
        .with_remediation(steps);
    if let Some(n) = &g.nodepool {
        d = d.with_object(Some(&ObjectRef::new("NodePool", None, n)));
    }
    if let Some(r) = cause.related() {
        d = d.with_related(&[r]);
    }
    d
}

fn no_nodepools(facts: &Facts, messages: &[&Message]) -> Diagnosis {
    let provisioners = messages
        .iter()
        .any(|m| contains_any(&m.text, &["no provisioners found"]));
    if provisioners {
        // v0.2x to v0.31: the Provisioner API (karpenter.sh/v1alpha5).
        let summary = "Karpenter found no Provisioner to provision from (`no provisioners found`, Karpenter before v0.32): it launches nothing for Pending pods until one exists.".to_string();
        return Diagnosis::new(&META, summary)
            .with_confidence(Confidence::High)
            .with_messages(messages.iter().copied())
            .with_remediation([
                Remediation::command("Check what exists:", "kubectl get provisioners,awsnodetemplates"),
                Remediation::yaml(
                    "Create a Provisioner that references an AWSNodeTemplate (kubectl apply -f), or upgrade Karpenter and create a NodePool:",
                    "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n  providerRef:\n    name: default\n  requirements:\n    - key: karpenter.sh/capacity-type\n      operator: In\n      values: [\"spot\", \"on-demand\"]\n  limits:\n    resources:\n      cpu: 1000\n",
                ),
            ]);
    }
    let mut summary = "Karpenter found no NodePool to provision from (`no nodepools found`; v1.9+: `no dynamic nodepools found`): it launches nothing for Pending pods until one exists.".to_string();
    // A Provisioner left over from an upgrade: v0.33+ reads only NodePools.
    let left: Vec<&str> = facts
        .nodepools
        .iter()
        .filter(|p| p.is_provisioner)
        .map(|p| p.meta.name.as_str())
        .collect();
    if !left.is_empty() {
        summary.push_str(&format!(
            " Provisioner {} still exists, but this Karpenter reads only NodePools (the Provisioner API ended with v0.32): recreate it as a NodePool, copying its requirements and limits.",
            left.join(", ")
        ));
    }
    Diagnosis::new(&META, summary)
        .with_confidence(Confidence::High)
        .with_messages(messages.iter().copied())
        .with_remediation(create_nodepool_steps(facts))
}

/// Check what exists, then create a NodePool referencing the EC2NodeClass the input shows
/// (its only one, else `default`).
fn create_nodepool_steps(facts: &Facts) -> [Remediation; 2] {
    let nc = match facts.nodeclasses.as_slice() {
        [only] => only.meta.name.clone(),
        _ => "default".to_string(),
    };
    let np = facts
        .nodepools
        .iter()
        .find(|p| p.is_provisioner)
        .map_or("default", |p| p.meta.name.as_str());
    [
            Remediation::command("Check what exists:", "kubectl get nodepools,ec2nodeclasses"),
            Remediation::yaml(
                "Create a NodePool that references an EC2NodeClass (kubectl apply -f):",
                format!("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {np}\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: {nc}\n      requirements:\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"spot\", \"on-demand\"]\n  limits:\n    cpu: 1000\n"),
            ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Meta, NodeClass};
    use crate::testing::{check_only, condition as cond, ids};

    fn one(text: &str) -> Diagnosis {
        let report = check_only("KW208", text);
        assert_eq!(ids(&report), ["KW208"], "{text}");
        report.diagnoses[0].clone()
    }

    /// A NodePool without its spec takes the EC2NodeClass the events are about, only when
    /// they are about one.
    #[test]
    fn the_one_nodeclass_the_events_are_about_is_named() {
        let pool = "  Normal  Ready  3m  karpenter  Status condition transitioned, Type: Ready, Status: True -> False, Reason: UnhealthyDependents, Message: NodeClassReady=False\n";
        let class = |name: &str| {
            format!("$ kubectl describe ec2nodeclass {name}\nEvents:\n  Type    Reason  Age  From       Message\n  ----    ------  ---  ----       -------\n  Normal  Ready   3m   karpenter  Status condition transitioned, Type: Ready, Status: True -> False, Reason: UnhealthyDependents, Message: SubnetsReady=False\n")
        };
        let head = "$ kubectl describe nodepool general\nEvents:\n  Type    Reason  Age  From       Message\n  ----    ------  ---  ----       -------\n";
        let commands = |d: &Diagnosis| {
            d.remediation
                .iter()
                .filter_map(|r| r.command.clone())
                .collect::<Vec<_>>()
                .join("\n")
        };
        let d = one(&format!("{}{head}{pool}", class("private")));
        assert!(
            commands(&d).contains("get ec2nodeclass private "),
            "{:?}",
            d.remediation
        );
        let d = one(&format!(
            "{}{}{head}{pool}",
            class("private"),
            class("public")
        ));
        assert!(
            commands(&d).contains("<ec2nodeclass>"),
            "{:?}",
            d.remediation
        );
    }

    #[test]
    fn an_empty_nodepool_list_with_a_pending_pod() {
        let pods = "$ kubectl get pods -n shop\nNAME    READY   STATUS    RESTARTS   AGE\nweb-0   0/1     Pending   0          5m\n";
        let empty = "$ kubectl get nodepools\nNo resources found\n";
        let d = one(&format!("{pods}\n{empty}"));
        assert!(
            d.summary.contains("Pod shop/web-0 is Pending"),
            "{}",
            d.summary
        );
        assert_eq!(d.evidence[0].line, 6, "{:?}", d.evidence);
        // Without a Pending pod, an empty list is no problem yet.
        assert!(ids(&check_only("KW208", empty)).is_empty());
        // An empty list of another kind is not an empty NodePool list.
        let other = "$ kubectl get nodeclaims\nNo resources found\n";
        assert!(ids(&check_only("KW208", &format!("{pods}\n{other}"))).is_empty());
    }

    #[test]
    fn every_signal_form() {
        let d = one(
            r#"{"level":"ERROR","time":"2025-05-12T09:01:02.004Z","logger":"controller","message":"ignoring nodepool, not ready","controller":"provisioner","NodePool":{"name":"default"}}"#,
        );
        assert!(
            d.summary.starts_with("NodePool default is not ready"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("the reason is not in the input"));
        assert!(d.related.is_empty());
        let d = one("Normal  NodeClassReady  3m  karpenter  Status condition transitioned, Type: NodeClassReady, Status: True -> False, Reason: UnhealthyDependents, Message: SubnetsReady=False, ValidationSucceeded=False");
        assert_eq!(d.related, ["KW501"]);
        assert!(d.summary.contains("SubnetsReady=False"));
        let d = one("NodeClassReady=False NodeClassNotFound: NodeClass not found on cluster");
        assert_eq!(d.related, ["KW503"]);
        let d = one("    message: NodeClassReady=False");
        assert!(d.related.is_empty());
        let d = one("Normal  NodeClassReady  3m  karpenter  Status condition transitioned, Type: NodeClassReady, Status: True -> False, Reason: UnhealthyDependents, Message: ValidationSucceeded=False\nNormal  ValidationSucceeded  3m  karpenter  Status condition transitioned, Type: ValidationSucceeded, Status: True -> False, Reason: RunInstancesAuthCheckFailed, Message: Controller isn't authorized to call ec2:RunInstances");
        assert_eq!(d.related, ["KW105"]);
        let none =
            one(r#"{"level":"INFO","message":"no nodepools found","controller":"provisioner"}"#);
        assert!(none.summary.contains("no NodePool"));
        assert!(none.remediation[1]
            .yaml
            .as_deref()
            .is_some_and(|y| y.contains("kind: NodePool")));
        one("no dynamic nodepools found");
    }

    #[test]
    fn near_misses() {
        for text in [
            "NAME              NODECLASS   NODES   READY   AGE\ngeneral-purpose   default     0       True    6d",
            "Ready=False UnhealthyDependents: SubnetsReady=False",
            "Status condition transitioned, Type: Ready, Status: True -> False, Reason: UnhealthyDependents, Message: Initialized=Unknown, Registered=Unknown",
            "Normal  Nominated  1m  karpenter  Pod should schedule on: nodeclaim/default-x",
        ] {
            assert!(ids(&check_only("KW208", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn follows_the_chain_through_objects() {
        let mut facts = Facts::default();
        facts.nodepools.push(NodePool {
            meta: Meta {
                name: "general".into(),
                ..Default::default()
            },
            nodeclass_ref: Some("private".into()),
            conditions: vec![
                cond(
                    "NodeClassReady",
                    "False",
                    "UnhealthyDependents",
                    "SecurityGroupsReady=False",
                ),
                cond(
                    "Ready",
                    "False",
                    "UnhealthyDependents",
                    "NodeClassReady=False",
                ),
            ],
            ..Default::default()
        });
        let d = check(&facts);
        // The EC2NodeClass is not in the input: the roll-up message still names the dependent.
        assert!(
            d[0].summary
                .contains("EC2NodeClass private is not ready: SecurityGroupsReady=False (KW501)"),
            "{}",
            d[0].summary
        );
        facts.nodeclasses.push(NodeClass {
            meta: Meta {
                name: "other".into(),
                ..Default::default()
            },
            ..Default::default()
        });
        let d = check(&facts);
        assert!(
            d[0].summary
                .contains("EC2NodeClass private does not exist (KW503)"),
            "{}",
            d[0].summary
        );
        facts.nodeclasses[0].meta.name = "private".into();
        facts.nodeclasses[0].conditions = vec![cond(
            "ValidationSucceeded",
            "False",
            "TagValidationFailed",
            "",
        )];
        facts.nodepools[0].conditions = vec![cond(
            "Ready",
            "False",
            "UnhealthyDependents",
            "NodeClassReady=False",
        )];
        let d = check(&facts);
        assert_eq!(d[0].related, ["KW502"], "{}", d[0].summary);
        facts.nodepools[0].conditions = vec![cond("Ready", "True", "Ready", "")];
        assert!(check(&facts).is_empty());
    }

    #[test]
    fn missing_class_that_the_input_shows_existing() {
        let mut facts = Facts::default();
        facts.nodepools.push(NodePool {
            meta: Meta {
                name: "general".into(),
                ..Default::default()
            },
            nodeclass_ref: Some("default".into()),
            conditions: vec![cond(
                "NodeClassReady",
                "False",
                "NodeClassNotFound",
                "NodeClass not found on cluster",
            )],
            ..Default::default()
        });
        facts.nodeclasses.push(NodeClass {
            meta: Meta {
                name: "default".into(),
                ..Default::default()
            },
            conditions: vec![cond("SubnetsReady", "False", "SubnetsNotFound", "")],
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains(
                "shows EC2NodeClass default existing, not ready: SubnetsReady=False (KW501)"
            ),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("does not exist"), "{}", d.summary);
        assert_eq!(d.related, ["KW501"]);
        facts.nodeclasses[0].conditions.clear();
        assert!(check(&facts)[0].related.is_empty());
        // The same name as an AWSNodeTemplate does not count: a NodePool cannot use it.
        facts.nodeclasses[0].is_aws_node_template = true;
        let d = &check(&facts)[0];
        assert!(d.summary.contains("EC2NodeClass default does not exist (KW503); the input's default is an AWSNodeTemplate"), "{}", d.summary);
        // A different name: named as a near match when close, listed otherwise.
        facts.nodeclasses[0].is_aws_node_template = false;
        facts.nodeclasses[0].meta.name = "defualt".into();
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains("EC2NodeClass defualt, a near match"),
            "{}",
            d.summary
        );
        facts.nodeclasses[0].meta.name = "gpu".into();
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .contains("does not exist (KW503); the input's EC2NodeClasses are gpu"),
            "{}",
            d.summary
        );
    }
}
