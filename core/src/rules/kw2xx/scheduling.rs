//! Karpenter's scheduling errors, parsed once for every KW2xx rule.
//!
//! Where they come from: the pod event `FailedScheduling` from `karpenter` with
//! `Failed to schedule pod, <err>`, and the controller log `could not schedule pod` with
//! `error` (and `errorCauses`, a copy of the same clauses); before v0.37 the log message was
//! `Could not schedule pod, <err>` with the error inlined.
//!
//! `<err>` is one clause per NodePool (or one per failed attempt), joined by `; `:
//! - v1.0 to v1.4: `incompatible with nodepool "<np>", daemonset overhead=<json>, <reason>`;
//! - v1.5 and later: the bare `<reason>`; the NodePool shows only inside the reason
//!   (`(NodePool=<np>)`, the `karpenter.sh/nodepool In [<np>]` of `requirements=`), in the
//!   log's structured `NodePool` field, or not at all;
//! - v1alpha5 (before v0.32): `incompatible with provisioner "<p>"[, daemonset overhead=<json>],
//!   <reason>`.
//!
//! Each clause is classified into a [`Cause`]; each rule picks the causes it explains.

use std::collections::BTreeMap;

use crate::facts::{
    contains_ignore_ascii_case, find_ignore_ascii_case, Event, Facts, LogRecord, Message,
    MessageOrigin, ObjectRef, Pod, Taint,
};
use crate::ingest::objects::number::parse_f64;
use crate::rules::time::age_seconds;

/// One pod's scheduling failure as one message reported it.
#[derive(Debug, Clone)]
pub struct SchedulingError<'a> {
    pub message: &'a Message,
    /// The pod, when the message (event object, log `Pod` field) or the facts say.
    pub pod: Option<ObjectRef>,
    pub clauses: Vec<Clause>,
}

/// One NodePool's (or one attempt's) reason the pod does not fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    /// The clause as written.
    pub text: String,
    pub nodepool: Option<String>,
    /// The pre-v0.32 grammar named a Provisioner rather than a NodePool.
    pub provisioner: bool,
    /// `daemonset overhead=` JSON (v1.0 to v1.4 and late v1alpha5).
    pub daemonset_overhead: Option<String>,
    /// The clause without its `incompatible with nodepool ..., daemonset overhead=...,` prefix.
    pub reason: String,
    /// `requirements=` (or `and requirements ` in v1.0 to v1.2).
    pub requirements: Option<String>,
    /// `resources=` JSON: pod requests plus daemonset overhead.
    pub resources: Option<String>,
    pub cause: Cause,
}

/// Which instance-type filters no type passed, from the phrase Karpenter chose (the twelve
/// `no instance type ...` forms of `InstanceTypeFilterError`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InstanceTypeFailure {
    pub requirements: bool,
    pub resources: bool,
    pub offering: bool,
    /// `no instance type met the requirements/resources/offering tuple`: each filter alone
    /// passes some type, no type passes all three.
    pub tuple: bool,
    /// `(CPU request >= 1 Million, m vs M typo?)`.
    pub cpu_typo: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Cause {
    /// `did not tolerate ...`: the taint as `key[=value]:Effect`.
    Taint(String),
    /// `incompatible requirements, label "<k>" does not have known values[ (typo of "<wk>"?)]`.
    UnknownLabel {
        label: String,
        typo_of: Option<String>,
    },
    /// `incompatible requirements, key <k>, <incoming> not in <existing>`.
    RequirementConflict {
        key: String,
        incoming: String,
        existing: String,
    },
    /// `incompatible volume requirements, <requirement error>`: the pod's volumes pin it to
    /// something (a zone) the NodePool does not offer.
    VolumeConflict {
        key: Option<String>,
        incoming: Option<String>,
        existing: Option<String>,
    },
    /// `checking host port usage, ...`.
    HostPort,
    /// One of the `no instance type ...` forms.
    InstanceTypes(InstanceTypeFailure),
    /// `all available instance types exceed limits for nodepool ...` and the provisioner forms.
    Limits,
    /// `node limits have been exhausted for nodepool ...` (`limits.nodes`, v1.11+).
    NodeLimits,
    /// `unsatisfiable topology constraint for <kind>, key=<key> (counts = ..., podDomains = ...,
    /// nodeDomains = ...` (Karpenter prints no closing parenthesis).
    Topology {
        /// `topology spread`, `pod affinity` or `pod anti-affinity`.
        constraint: String,
        key: String,
        counts: Option<String>,
        pod_domains: Option<String>,
        node_domains: Option<String>,
    },
    /// The minValues forms (U+2019 or ASCII apostrophes).
    MinValues,
    /// `nodepool requirements filtered out all available instance types`.
    AllTypesFiltered,
    /// The reserved-capacity forms (`could not be reserved`, `reservation fallback policy`...).
    Reserved,
    /// The dynamic resource allocation forms.
    DynamicResources,
    Other,
}

impl Cause {
    /// How near a NodePool failing this way came to taking the pod: lower is nearer.
    ///
    /// Karpenter checks a NodePool in order: taints, host ports, requirements (labels), then
    /// the instance types (requirements, resources, offerings) and limits. A NodePool that
    /// got as far as resources or offerings matches the pod's selectors and tolerations: it is
    /// the pool the pod was meant for, and only capacity is short (the easy fix). A label
    /// mismatch says the pod was never meant for the pool; a taint says nothing about labels
    /// yet, so it ranks just above the label failures.
    pub fn nearness(&self) -> u8 {
        match self {
            Cause::Limits | Cause::NodeLimits | Cause::Reserved => 1,
            Cause::InstanceTypes(f) if f.offering && !f.requirements && !f.resources => 1,
            Cause::InstanceTypes(f) if !f.requirements => 2,
            Cause::HostPort | Cause::Topology { .. } | Cause::VolumeConflict { .. } => 2,
            Cause::DynamicResources => 3,
            Cause::MinValues | Cause::AllTypesFiltered => 3,
            Cause::InstanceTypes(_) => 4,
            Cause::Other => 4,
            Cause::Taint(_) => 5,
            Cause::UnknownLabel { .. } | Cause::RequirementConflict { .. } => 6,
        }
    }

    /// What the NodePool fails on, for the "nearest NodePool" sentence.
    pub fn describe(&self) -> String {
        match self {
            Cause::Taint(t) => format!("the taint {t}"),
            Cause::UnknownLabel { label, .. } => format!("the label {label}"),
            Cause::RequirementConflict { key, .. } => format!("the requirement on {key}"),
            Cause::VolumeConflict { .. } => "the volume's zone".to_string(),
            Cause::HostPort => "a hostPort conflict".to_string(),
            Cause::InstanceTypes(f) => {
                let mut parts = Vec::new();
                if f.requirements {
                    parts.push("requirements");
                }
                if f.resources {
                    parts.push("resources");
                }
                if f.offering {
                    parts.push("offerings");
                }
                match parts.as_slice() {
                    _ if f.tuple => {
                        "its instance types (no single type meets requirements, resources and offerings)".to_string()
                    }
                    ["resources"] => "instance resources".to_string(),
                    ["offerings"] => "offerings (zone / capacity type)".to_string(),
                    ["requirements"] => "instance requirements".to_string(),
                    _ => format!("its instance types ({})", parts.join(", ")),
                }
            }
            Cause::Limits => "its spec.limits".to_string(),
            Cause::NodeLimits => "its node limit".to_string(),
            Cause::Topology { constraint, .. } => format!("a {constraint} constraint"),
            Cause::MinValues => "minValues".to_string(),
            Cause::AllTypesFiltered => "requirements that filter out every type".to_string(),
            Cause::Reserved => "reserved capacity".to_string(),
            Cause::DynamicResources => "dynamic resource requirements".to_string(),
            Cause::Other => "another constraint".to_string(),
        }
    }
}

impl SchedulingError<'_> {
    /// The clause of the NodePool that came nearest to taking the pod (see
    /// [`Cause::nearness`]); ties keep Karpenter's order (NodePools are tried by weight).
    pub fn nearest(&self) -> Option<&Clause> {
        self.clauses
            .iter()
            .filter(|c| !clause_is_cut(c))
            .min_by_key(|c| self.nearness_of(c))
    }

    /// [`Cause::nearness`], except that a taint keyed like an extended resource the pod
    /// requests (`nvidia.com/gpu`, on the NodePool made for that hardware) is nearest of all:
    /// only a toleration is missing there, while the other NodePools lack the resource itself.
    fn nearness_of(&self, clause: &Clause) -> u8 {
        // A clause the user cut short (`daemonset overh...`) lost its reason: it cannot be
        // called nearest on the strength of a reason nobody saw.
        if clause_is_cut(clause) {
            return u8::MAX;
        }
        if let Cause::Taint(text) = &clause.cause {
            let key = parse_taint(text).key;
            let requested = |c: &Clause| {
                c.resources
                    .as_deref()
                    .is_some_and(|r| r.contains(&format!("\"{key}\"")))
            };
            if key.contains('/') && self.clauses.iter().any(requested) {
                return 0;
            }
        }
        clause.cause.nearness()
    }

    /// One sentence naming the nearest NodePool when the pod failed against several, empty
    /// otherwise. `clause` is the one the diagnosis is about.
    pub fn nearest_note(&self, clause: &Clause) -> String {
        let tried = self.clauses.len();
        let pools = self.pools_tried();
        let all_same_pool = self
            .clauses
            .iter()
            .all(|c| c.nodepool.is_some() && c.nodepool == self.clauses[0].nodepool);
        if tried < 2 || all_same_pool {
            return String::new();
        }
        let Some((nearest, tied)) = self.nearest_and_tied() else {
            return String::new();
        };
        if tied.len() > 1 && !tied.contains(&clause) {
            return nearest_are(&pools, &tied);
        }
        if nearest == clause || tied.len() > 1 {
            let others: Vec<String> = self
                .clauses
                .iter()
                .filter(|c| *c != clause)
                .take(3)
                .map(describe_clause)
                .collect();
            let lead = if tied.len() > 1 {
                "none came nearer than this one"
            } else {
                "this one came nearest"
            };
            return format!(
                " Of the {pools} tried, {lead}; the others fail on: {}.",
                others.join("; ")
            );
        }
        came_nearest(&pools, nearest)
    }

    /// `2 NodePools`, or `2 Provisioners` before v0.32.
    fn pools_tried(&self) -> String {
        let word = if self.clauses.iter().any(|c| c.provisioner) {
            "Provisioners"
        } else {
            "NodePools"
        };
        format!("{} {word}", self.clauses.len())
    }

    /// [`nearest_note`](Self::nearest_note) for a diagnosis about several clauses of this
    /// error at once (one taint on two NodePools): the others are the clauses outside `group`.
    pub fn nearest_note_among(&self, group: &[&Clause]) -> String {
        if let [one] = group {
            return self.nearest_note(one);
        }
        let tried = self.clauses.len();
        let pools = self.pools_tried();
        let Some((nearest, tied)) = self.nearest_and_tied() else {
            return String::new();
        };
        if tried < 2 {
            return String::new();
        }
        let inside = |c: &Clause| group.contains(&c);
        let others: Vec<&Clause> = self.clauses.iter().filter(|c| !inside(c)).collect();
        if others.is_empty() {
            return format!(" Every one of the {pools} tried fails on this.");
        }
        if tied.iter().any(|c| inside(c)) {
            let names: Vec<String> = others.iter().take(3).map(|c| describe_clause(c)).collect();
            return format!(
                " Of the {pools} tried, none came nearer than these; the others fail on: {}.",
                names.join("; ")
            );
        }
        if tied.len() > 1 {
            return nearest_are(&pools, &tied);
        }
        came_nearest(&pools, nearest)
    }

    /// The nearest clause and every clause as near as it (the nearest first among them).
    fn nearest_and_tied(&self) -> Option<(&Clause, Vec<&Clause>)> {
        let nearest = self.nearest()?;
        let best = self.nearness_of(nearest);
        let tied = self
            .clauses
            .iter()
            .filter(|c| self.nearness_of(c) == best)
            .collect();
        Some((nearest, tied))
    }
}

/// An unclassified clause ending where the paste was cut (`...`, `…`).
fn clause_is_cut(c: &Clause) -> bool {
    matches!(c.cause, Cause::Other) && (c.text.ends_with("...") || c.text.ends_with('…'))
}

/// `"<np>" (<what it fails on>)`, or `an unnamed one (...)`.
fn describe_clause(c: &Clause) -> String {
    if clause_is_cut(c) {
        return match &c.nodepool {
            Some(np) => format!("\"{np}\" (its reason is cut from the paste)"),
            None => "one whose reason is cut from the paste".to_string(),
        };
    }
    match &c.nodepool {
        Some(np) => format!("\"{np}\" ({})", c.cause.describe()),
        None => format!("an unnamed one ({})", c.cause.describe()),
    }
}

/// The sentence for several NodePools equally near (at most three named).
fn nearest_are(pools: &str, tied: &[&Clause]) -> String {
    let names: Vec<String> = tied.iter().take(3).map(|c| describe_clause(c)).collect();
    format!(
        " Of the {pools} tried, the nearest are {}.",
        names.join("; ")
    )
}

/// The sentence for one NodePool nearer than every other.
fn came_nearest(pools: &str, nearest: &Clause) -> String {
    match &nearest.nodepool {
        Some(name) => format!(
            " Of the {pools} tried, \"{name}\" came nearest (it fails only on {}).",
            nearest.cause.describe()
        ),
        None => format!(
            " Of the {pools} tried, the nearest fails only on {}.",
            nearest.cause.describe()
        ),
    }
}

/// The nearest-NodePool sentence of a group of hits that may span several pods: each pod's
/// error with the group's clauses in it. Pods whose errors read alike share one sentence;
/// pods whose errors differ get theirs each (`For Pod a/b: ...`), at most three.
pub fn group_nearest_note(hits: &[Hit<'_, '_>]) -> String {
    // (note, pods) in first-appearance order; one note per error message.
    let mut notes: Vec<(String, Vec<String>)> = Vec::new();
    // Each message's clauses, gathered in one pass: thousands of messages would make a pass
    // per message quadratic.
    let mut clauses: BTreeMap<*const Message, Vec<&Clause>> = BTreeMap::new();
    for h in hits {
        clauses
            .entry(h.error.message as *const Message)
            .or_default()
            .push(h.clause);
    }
    let mut pods_of_note: Vec<std::collections::BTreeSet<String>> = Vec::new();
    for hit in hits {
        let Some(group) = clauses.remove(&(hit.error.message as *const Message)) else {
            continue;
        };
        let note = hit.error.nearest_note_among(&group);
        let pod = hit
            .error
            .pod
            .as_ref()
            .map(ObjectRef::qualified_name)
            .unwrap_or_else(|| "the pod".to_string());
        match notes.iter().position(|(n, _)| *n == note) {
            Some(i) => {
                if pods_of_note[i].insert(pod.clone()) {
                    notes[i].1.push(pod);
                }
            }
            None => {
                pods_of_note.push([pod.clone()].into());
                notes.push((note, vec![pod]));
            }
        }
    }
    match notes.as_slice() {
        [] => String::new(),
        [(only, _)] => only.clone(),
        several => several
            .iter()
            .filter(|(n, _)| !n.is_empty())
            .take(3)
            .map(|(n, pods)| {
                let who = match pods.as_slice() {
                    [one] => format!("Pod {one}"),
                    many => format!("Pods {}", many.join(", ")),
                };
                format!(" For {who}:{}", n)
            })
            .collect(),
    }
}

/// `Pod shop/web-0`, `Pods shop/web-0, shop/web-1 and shop/web-2`, `Pods shop/web-0,
/// shop/web-1, shop/web-2 and 4 more`, or `The pod` when no pod is known.
pub fn pods_label(pods: &[ObjectRef]) -> String {
    let names: Vec<String> = pods.iter().map(ObjectRef::qualified_name).collect();
    match names.as_slice() {
        [] => "The pod".to_string(),
        [one] => format!("Pod {one}"),
        [first @ .., last] if names.len() <= 4 => {
            format!("Pods {} and {last}", first.join(", "))
        }
        _ => format!(
            "Pods {} and {} more",
            names[..3].join(", "),
            names.len() - 3
        ),
    }
}

/// `NodePool "a"`, `NodePools "a" and "b"`; `kind` is `NodePool` or `Provisioner`.
pub fn pools_label(kind: &str, pools: &[String]) -> String {
    let quoted: Vec<String> = pools.iter().map(|p| format!("\"{p}\"")).collect();
    match quoted.as_slice() {
        [] => format!("a {kind}"),
        [one] => format!("{kind} {one}"),
        [first @ .., last] => format!("{kind}s {} and {last}", first.join(", ")),
    }
}

/// The pods of a group of hits, in first-appearance order.
pub fn hit_pods(hits: &[Hit<'_, '_>]) -> Vec<ObjectRef> {
    // A set beside the list: a big cluster's paste has thousands of pods in one group.
    let mut seen: std::collections::BTreeSet<&ObjectRef> = Default::default();
    let mut pods: Vec<ObjectRef> = Vec::new();
    for p in hits.iter().filter_map(|h| h.error.pod.as_ref()) {
        if seen.insert(p) {
            pods.push(p.clone());
        }
    }
    pods
}

/// Every scheduling error in the facts, in input order.
pub fn scheduling_errors(facts: &Facts) -> Vec<SchedulingError<'_>> {
    scheduling_errors_with(facts, &PodIndex::of(facts))
}

/// `scheduling_errors` with the caller's `PodIndex`, for a rule that also needs the index:
/// building it reads every event and log record, so a rule builds it once.
pub fn scheduling_errors_with<'a>(
    facts: &'a Facts,
    index: &PodIndex<'a>,
) -> Vec<SchedulingError<'a>> {
    // Log messages carry `message: error: causes` in their text; the record keeps `error`
    // apart, which avoids splitting a clause on the causes' copy of it.
    // Inserts rather than `collect()`: the same map, without a stable sort copy in wasm.
    let mut records: BTreeMap<(&str, usize), &LogRecord> = BTreeMap::new();
    for r in &facts.logs {
        if contains_ignore_ascii_case(&r.message, "schedule pod") {
            records.insert((r.evidence.source.as_str(), r.evidence.line), r);
        }
    }
    let only_pod = match facts.pods.as_slice() {
        [pod] => Some(pod.object_ref()),
        _ => None,
    };
    let mut out = Vec::new();
    for message in &facts.messages {
        let record = if message.origin == MessageOrigin::KarpenterLog {
            records
                .get(&(message.evidence.source.as_str(), message.evidence.line))
                .copied()
        } else {
            None
        };
        let Some((error, pod, field_nodepool)) = error_text(message, record) else {
            continue;
        };
        // A pod the input shows on a node has left Pending since: Karpenter's earlier failure
        // for it (a describe of a pod that waited, then was Nominated and Scheduled) is
        // history, not why anything is Pending now. Only a pod the message itself names: the
        // one-pod fallback below may be a guess.
        if pod.as_ref().is_some_and(|p| index.left_pending(p, message)) {
            continue;
        }
        let pod = pod.or_else(|| only_pod.clone()).map(|mut p| {
            if p.namespace.is_none() {
                p.namespace = pod_namespace(facts, message, &p.name);
            }
            p
        });
        let mut clauses = parse_clauses(&error);
        if clauses.is_empty() {
            continue;
        }
        if let [clause] = clauses.as_mut_slice() {
            if clause.nodepool.is_none() {
                clause.nodepool = field_nodepool.or_else(|| message.nodepool.clone());
            }
        }
        name_from_nodepools(&mut clauses, facts);
        out.push(SchedulingError {
            message,
            pod,
            clauses,
        });
    }
    out
}

/// The messages scheduling errors were read from, to skip them in a second pass over every
/// message (a set: a big cluster's paste has tens of thousands of both).
pub fn messages_of(errors: &[SchedulingError<'_>]) -> std::collections::BTreeSet<*const Message> {
    errors.iter().map(|e| e.message as *const Message).collect()
}

/// The input's events, pods and Karpenter log records by the pod they name, built once per
/// rule run: a rule asks about each message's pod, and a big cluster's paste (`kubectl get
/// events -A`, a log naming thousands of pods) would make scanning every event or record for
/// each of them quadratic (minutes instead of milliseconds).
pub struct PodIndex<'a> {
    /// Events by their object's name, and Scheduled events also by the pod their message
    /// assigns (`Successfully assigned <ns>/<pod> to <node>`).
    events: BTreeMap<&'a str, Vec<&'a Event>>,
    /// The first event read from each input line.
    event_at: BTreeMap<(&'a str, usize), &'a Event>,
    pods: BTreeMap<&'a str, Vec<&'a Pod>>,
    /// `found provisionable pod(s)` records by the pods they list, in log order.
    found: BTreeMap<&'a str, Vec<&'a LogRecord>>,
    /// The times of `could not schedule pod` records by the pod they name.
    failed: BTreeMap<String, Vec<&'a str>>,
    /// The latest time of a `created nodeclaim` record.
    last_created: Option<&'a str>,
}

impl<'a> PodIndex<'a> {
    pub fn of(facts: &'a Facts) -> Self {
        let mut index = PodIndex {
            events: BTreeMap::new(),
            event_at: BTreeMap::new(),
            pods: BTreeMap::new(),
            found: BTreeMap::new(),
            failed: BTreeMap::new(),
            last_created: None,
        };
        for e in &facts.events {
            index
                .event_at
                .entry((e.evidence.source.as_str(), e.evidence.line))
                .or_insert(e);
            let object = e.object.as_ref().map(|o| o.name.as_str());
            if let Some(name) = object {
                index.events.entry(name).or_default().push(e);
            }
            let assigned = find_ignore_ascii_case(&e.message, "successfully assigned ")
                .and_then(|i| e.message[i + 22..].split(" to ").next())
                .map(|target| target.rsplit('/').next().unwrap_or(target))
                .filter(|name| Some(*name) != object);
            if let Some(name) = assigned {
                index.events.entry(name).or_default().push(e);
            }
        }
        for p in &facts.pods {
            index.pods.entry(p.meta.name.as_str()).or_default().push(p);
        }
        for r in &facts.logs {
            if contains_ignore_ascii_case(&r.message, "found provisionable pod") {
                for k in ["pods", "Pods"] {
                    let Some(list) = r.fields.get(k).and_then(|v| v.as_str()) else {
                        continue;
                    };
                    for p in list.split([',', ' ']) {
                        let name = p.rsplit('/').next().unwrap_or(p);
                        let records = index.found.entry(name).or_default();
                        if !records.last().is_some_and(|l| std::ptr::eq(*l, r)) {
                            records.push(r);
                        }
                    }
                }
            }
            let Some(time) = r.time.as_deref() else {
                continue;
            };
            if contains_ignore_ascii_case(&r.message, "schedule pod") {
                for k in ["Pod", "pod"] {
                    if let Some(n) = r.field_name(k) {
                        let name = n.rsplit('/').next().unwrap_or(&n).to_string();
                        index.failed.entry(name).or_default().push(time);
                    }
                }
            }
            if contains_ignore_ascii_case(&r.message, "created nodeclaim")
                && index.last_created.is_none_or(|t| time > t)
            {
                index.last_created = Some(time);
            }
        }
        index
    }

    /// The events naming pod `name`: its own, and Scheduled events assigning it.
    pub fn events_about(&self, name: &str) -> &[&'a Event] {
        self.events.get(name).map_or(&[], Vec::as_slice)
    }

    /// The first event read from the line of `evidence`.
    pub fn event_at(&self, evidence: &crate::document::Evidence) -> Option<&'a Event> {
        self.event_at
            .get(&(evidence.source.as_str(), evidence.line))
            .copied()
    }

    pub fn pods_named(&self, name: &str) -> &[&'a Pod] {
        self.pods.get(name).map_or(&[], Vec::as_slice)
    }

    /// Whether message `m` is about a pod the input shows placed since (a describe's Events
    /// of a pod that waited, then was Scheduled): the rules that also read raw messages,
    /// beside `scheduling_errors`, skip those as history too.
    pub fn about_placed_pod(&self, m: &Message) -> bool {
        m.object
            .as_ref()
            .is_some_and(|o| o.kind.eq_ignore_ascii_case("pod") && self.left_pending(o, m))
    }

    /// Placed, nominated or provisioned since `failure`: the failure is history.
    fn left_pending(&self, pod: &ObjectRef, failure: &Message) -> bool {
        self.placed(pod)
            || self.nominated_since(pod, failure)
            || self.provisioned_since(pod, failure)
    }

    /// Whether Karpenter nominated pod `pod` after `failure` was last seen: a `Nominated`
    /// event on the pod more recent than the failure's last occurrence (kubectl ages).
    /// Karpenter found a NodePool for the pod since (the limit was raised, the taint
    /// removed): the failure is history, and a NodeClaim is on its way. Without comparable
    /// ages, nothing is assumed.
    fn nominated_since(&self, pod: &ObjectRef, failure: &Message) -> bool {
        // `9m (x5 over 14m)`: last seen 9 minutes ago.
        let last_seen = |e: &Event| {
            e.age
                .as_deref()
                .and_then(|a| age_seconds(a.split(" (").next().unwrap_or(a)))
        };
        let Some(failed) = self
            .event_at
            .get(&(failure.evidence.source.as_str(), failure.evidence.line))
            .and_then(|e| last_seen(e))
        else {
            return false;
        };
        self.events_about(&pod.name).iter().any(|e| {
            e.reason == "Nominated"
                && e.object.as_ref().is_some_and(|o| {
                    o.name == pod.name
                        && (o.namespace.is_none()
                            || pod.namespace.is_none()
                            || o.namespace == pod.namespace)
                })
                && last_seen(e).is_some_and(|nominated| nominated < failed)
        })
    }

    /// Whether Karpenter's log shows a later batch that took pod `pod` (`found provisionable
    /// pod(s)` naming it, at or after `failure`) and created a NodeClaim, with no failure for
    /// the pod since: the failure is history. A batch's failures are logged between its
    /// `found` line and its `created nodeclaim` lines, so a later failure for the pod says it
    /// failed again.
    fn provisioned_since(&self, pod: &ObjectRef, failure: &Message) -> bool {
        let Some(failed) = failure.time.as_deref() else {
            return false;
        };
        let Some(found) = self
            .found
            .get(pod.name.as_str())
            .into_iter()
            .flatten()
            .filter_map(|r| r.time.as_deref())
            .find(|t| *t > failed)
        else {
            return false;
        };
        let failed_again = self
            .failed
            .get(&pod.name)
            .is_some_and(|times| times.iter().any(|t| *t >= found));
        !failed_again && self.last_created.is_some_and(|t| t >= found)
    }

    /// Whether the input shows pod `pod` bound to a node (`Node: <node>` of a describe,
    /// `spec.nodeName`) or past Pending (Running, Succeeded, Failed).
    fn placed(&self, pod: &ObjectRef) -> bool {
        // The scheduler's `Scheduled` event (`Successfully assigned <ns>/<pod> to <node>`): a
        // pod once bound never fails scheduling again, so every failure before it is history.
        let assigned = match &pod.namespace {
            Some(ns) => format!("Successfully assigned {ns}/{} to ", pod.name),
            None => format!("/{} to ", pod.name),
        };
        let scheduled_event = self.events_about(&pod.name).iter().any(|e| {
            e.reason == "Scheduled"
                && e.message.contains(&assigned)
                && (pod.namespace.is_some() || e.message.starts_with("Successfully assigned "))
        });
        scheduled_event
            || self
                .pods_named(&pod.name)
                .iter()
                .filter(|p| {
                    pod.namespace.is_none()
                        || p.meta.namespace.is_none()
                        || p.meta.namespace == pod.namespace
                })
                .any(|p| {
                    p.node_name
                        .as_deref()
                        .is_some_and(|n| !n.is_empty() && n != "<none>")
                        || matches!(p.phase.as_deref(), Some("Running" | "Succeeded" | "Failed"))
                })
    }
}

/// The namespace of pod `name` when the message does not say it (an events table without a
/// NAMESPACE column, a console log line): the one pod of that name the input shows, else the
/// `-n` of the `kubectl get events` / `kubectl describe pod` the paste printed the message
/// under. The fix commands then carry `-n <ns>` instead of a placeholder or the default.
pub fn pod_namespace(facts: &Facts, message: &Message, name: &str) -> Option<String> {
    let mut same = facts.pods.iter().filter(|p| p.meta.name == name);
    if let (Some(p), None) = (same.next(), same.next()) {
        if p.meta.namespace.is_some() {
            return p.meta.namespace.clone();
        }
    }
    let under = facts
        .commands
        .iter()
        .filter(|c| {
            c.evidence.source == message.evidence.source && c.evidence.line < message.evidence.line
        })
        .max_by_key(|c| c.evidence.line)?;
    let lists_it = under.is("get", "Event")
        || under.is("describe", "Pod")
        || under.is("get", "Pod") && under.name.as_deref() == Some(name);
    (lists_it && !under.all_namespaces)
        .then(|| under.namespace.clone())
        .flatten()
}

/// Names the NodePool of clauses the text leaves unnamed (v1.5+ prints bare reasons) from the
/// NodePools the input shows: the only NodePool carrying an untolerated taint, else, when one
/// clause is left unnamed and exactly one ready NodePool is named by no clause, that one
/// (Karpenter writes one clause per NodePool it tried).
fn name_from_nodepools(clauses: &mut [Clause], facts: &Facts) {
    if facts.nodepools.is_empty() || clauses.iter().all(|c| c.nodepool.is_some()) {
        return;
    }
    let named: Vec<String> = clauses.iter().filter_map(|c| c.nodepool.clone()).collect();
    for clause in clauses.iter_mut().filter(|c| c.nodepool.is_none()) {
        if let Cause::Taint(text) = &clause.cause {
            let taint = parse_taint(text);
            let owners: Vec<&str> = facts
                .nodepools
                .iter()
                .filter(|p| p.taints.iter().any(|t| same_taint(t, &taint)))
                .map(|p| p.meta.name.as_str())
                .collect();
            if let [one] = owners.as_slice() {
                if !named.iter().any(|n| n == one) {
                    clause.nodepool = Some(one.to_string());
                }
            }
        }
    }
    // A requirement conflict quotes the NodePool's own requirement on the key: the only
    // NodePool of the input whose requirement (or template label) reads the same is the one.
    for i in 0..clauses.len() {
        let Cause::RequirementConflict { key, existing, .. } = &clauses[i].cause else {
            continue;
        };
        if clauses[i].nodepool.is_some() {
            continue;
        }
        let Some(mut offered) = in_values(existing, key) else {
            continue;
        };
        offered.sort();
        let owners: Vec<&str> = facts
            .nodepools
            .iter()
            .filter(|p| {
                let mut own = p
                    .allowed_values(key)
                    .or_else(|| p.template_labels.get(key).map(|v| vec![v.clone()]));
                if let Some(own) = own.as_mut() {
                    own.sort();
                }
                own.as_ref() == Some(&offered)
            })
            .map(|p| p.meta.name.as_str())
            .collect();
        if let [one] = owners.as_slice() {
            if !clauses.iter().any(|c| c.nodepool.as_deref() == Some(*one)) {
                clauses[i].nodepool = Some(one.to_string());
            }
        }
    }
    let unnamed: Vec<usize> = (0..clauses.len())
        .filter(|&i| clauses[i].nodepool.is_none())
        .collect();
    let [only] = unnamed.as_slice() else {
        return;
    };
    let mut left = facts.nodepools.iter().filter(|p| {
        let ready = p
            .conditions
            .iter()
            .find(|c| c.condition_type == "Ready")
            .is_none_or(|c| c.status.eq_ignore_ascii_case("true"));
        ready
            && !p.is_provisioner
            && !clauses
                .iter()
                .any(|c| c.nodepool.as_deref() == Some(&p.meta.name))
    });
    if let (Some(pool), None) = (left.next(), left.next()) {
        clauses[*only].nodepool = Some(pool.meta.name.clone());
    }
}

/// `key[=value]:Effect` as a taint; an empty value (`k=:E`) is no value.
pub fn parse_taint(text: &str) -> Taint {
    let (kv, effect) = text.rsplit_once(':').unwrap_or((text, ""));
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k, (!v.is_empty()).then(|| v.to_string())),
        None => (kv, None),
    };
    Taint {
        key: key.to_string(),
        value,
        effect: effect.to_string(),
    }
}

/// The same taint, an empty value being no value.
pub fn same_taint(a: &Taint, b: &Taint) -> bool {
    a.key == b.key
        && a.effect == b.effect
        && a.value.as_deref().unwrap_or("") == b.value.as_deref().unwrap_or("")
}

/// The error text, the pod and the structured NodePool field of a scheduling message.
fn error_text(
    message: &Message,
    record: Option<&LogRecord>,
) -> Option<(String, Option<ObjectRef>, Option<String>)> {
    if let Some(record) = record {
        let pod = record
            .field_name("Pod")
            .or_else(|| record.field_name("pod"))
            .map(|q| pod_ref(&q));
        let nodepool = record
            .field_name("NodePool")
            .or_else(|| record.field_name("nodepool"));
        let inline = tail_after(&record.message, "schedule pod, ");
        let error = match (&record.error, inline) {
            (Some(e), _) if !e.trim().is_empty() => e.clone(),
            (_, Some(inline)) => inline,
            _ if !record.error_causes.is_empty() => record.error_causes.join("; "),
            _ => return None,
        };
        return Some((error, pod, nodepool));
    }
    let text = &message.text;
    let pod = message
        .object
        .as_ref()
        .filter(|o| o.kind.eq_ignore_ascii_case("pod"))
        .cloned();
    if let Some(tail) = tail_after(text, "failed to schedule pod, ") {
        return Some((tail, pod, None));
    }
    // A log line that ingest could not decode (console format, a prefix it did not strip):
    // the error follows the message; a console line's JSON fields follow a tab.
    let tail = tail_after(text, "could not schedule pod")?;
    let tail = tail.trim_start_matches([',', ':', ' ', '\t']);
    let tail = tail.split("\t{").next().unwrap_or_default().trim();
    (!tail.is_empty()).then(|| (tail.to_string(), pod, message.nodepool.clone()))
}

/// The log record a Karpenter log message was decoded from (same place in the input).
pub fn record_of<'a>(facts: &'a Facts, message: &Message) -> Option<&'a LogRecord> {
    if message.origin != MessageOrigin::KarpenterLog {
        return None;
    }
    facts.log_record_at(&message.evidence.source, message.evidence.line)
}

/// The NodePool a message names: its structured field (also the lower-case `nodepool` /
/// `provisioner` fields of pre-v0.37 logs), a NodePool event's object, a
/// `(NodePool=<np>)` / `nodepool "<np>"` in its text, or the one NodePool of its
/// `incompatible with nodepool "<np>"` clauses. Never a storage provisioner: not the CSI
/// driver of `would exceed volume limit (provisioner=<driver>, ...)`, nor the
/// `"provisioner": "kubernetes.io/aws-ebs"` field of a StorageClass log line.
pub fn message_nodepool(facts: &Facts, message: &Message) -> Option<String> {
    if let Some(np) = &message.nodepool {
        return Some(np.clone());
    }
    if let Some(record) = record_of(facts, message) {
        for key in ["NodePool", "nodepool", "Provisioner", "provisioner"] {
            if let Some(np) = record.field_name(key).filter(|n| !n.contains('/')) {
                return Some(np);
            }
        }
    }
    if let Some(o) = &message.object {
        if o.kind.eq_ignore_ascii_case("nodepool") || o.kind.eq_ignore_ascii_case("provisioner") {
            return Some(o.name.clone());
        }
    }
    nodepool_in_reason(&message.text, &Cause::Other).or_else(|| {
        let mut named = Vec::new();
        for marker in [
            "incompatible with nodepool ",
            "incompatible with provisioner ",
        ] {
            let mut rest = message.text.as_str();
            while let Some(i) = find_ignore_ascii_case(rest, marker) {
                rest = &rest[i + marker.len()..];
                if let Some((name, _)) = quoted(rest) {
                    if !named.contains(&name) {
                        named.push(name);
                    }
                }
            }
        }
        match named.as_slice() {
            [one] => Some(one.to_string()),
            _ => None,
        }
    })
}

/// The workload whose pod template makes the pod (`Controlled By:`, or the Deployment,
/// StatefulSet or CronJob its name implies), namespaced like the pod.
pub fn pod_owner(facts: &Facts, pod: Option<&ObjectRef>) -> Option<ObjectRef> {
    let pod = pod?;
    let namespace = pod.namespace.as_deref().filter(|ns| !ns.starts_with('<'));
    let owner = facts.pod(pod).and_then(|p| p.meta.owners.first());
    // A CronJob's pods are `<cronjob>-<scheduled minute>-<suffix>`: its Job is named after the
    // minute count (8 digits and more), which no pod-template-hash is, so the name would
    // otherwise pass for a Deployment's. A plain Job's template cannot be edited: no owner.
    let job = match owner {
        Some(o) if o.kind == "Job" => Some(o.name.as_str()),
        Some(_) => None,
        None => pod.name.rsplit_once('-').map(|(job, _)| job),
    };
    if let Some(cronjob) = job.and_then(cronjob_of_job) {
        return Some(ObjectRef::new("CronJob", namespace, cronjob));
    }
    if owner.is_some_and(|o| o.kind == "Job") {
        return None;
    }
    let (resource, name) = crate::rules::kw0xx::image_pull::owner_workload(facts, pod)?;
    let kind = match resource.as_str() {
        "deployment" => "Deployment",
        // Spark's executors are bare pods named `<app>-exec-<n>`, not a StatefulSet's.
        "statefulset" if owner.is_some() || !name.ends_with("-exec") => "StatefulSet",
        "daemonset" => "DaemonSet",
        _ => return None,
    };
    Some(ObjectRef::new(kind, namespace, &name))
}

/// The CronJob of Job `job` when it is named `<cronjob>-<scheduled minute>`.
fn cronjob_of_job(job: &str) -> Option<&str> {
    let (base, minute) = job.rsplit_once('-')?;
    (!base.is_empty() && minute.len() >= 8 && minute.chars().all(|c| c.is_ascii_digit()))
        .then_some(base)
}

/// `the pod template of Deployment web (`kubectl edit deployment web -n shop`)`.
pub fn pod_template_of(owner: &ObjectRef, ns: &str) -> String {
    format!(
        "the pod template of {} {} (`kubectl edit {} {} -n {}`)",
        owner.kind,
        owner.name,
        owner.kind.to_ascii_lowercase(),
        owner.name,
        owner.namespace.as_deref().unwrap_or(ns)
    )
}

/// The one workload every pod of `pods` comes from, when the input tells it for each.
pub fn shared_owner(facts: &Facts, pods: &[ObjectRef]) -> Option<ObjectRef> {
    let mut owners = pods.iter().map(|p| pod_owner(facts, Some(p)));
    let first = owners.next()??;
    owners.all(|o| o.as_ref() == Some(&first)).then_some(first)
}

/// `ns/name` or `name` as a Pod reference.
pub fn pod_ref(qualified: &str) -> ObjectRef {
    match qualified.split_once('/') {
        Some((ns, name)) => ObjectRef::new("Pod", Some(ns), name),
        None => ObjectRef::new("Pod", None, qualified),
    }
}

/// The node pod `pod` runs on: its `Node:` / `spec.nodeName`, else the scheduler's `Scheduled`
/// event (`Successfully assigned <ns>/<pod> to <node>`; the last one, as a recreated pod of
/// the same name is assigned again). None when the input shows neither.
pub fn assigned_node(facts: &Facts, pod: &ObjectRef) -> Option<String> {
    let bound = facts
        .pod(pod)
        .and_then(|p| p.node_name.clone())
        .filter(|n| !n.is_empty() && n != "<none>");
    if bound.is_some() {
        return bound;
    }
    let marker = match &pod.namespace {
        Some(ns) => format!("Successfully assigned {ns}/{} to ", pod.name),
        None => format!("/{} to ", pod.name),
    };
    facts
        .messages
        .iter()
        .filter(|m| contains_ignore_ascii_case(&m.text, "Successfully assigned "))
        .filter_map(|m| tail_after(&m.text, &marker))
        .filter_map(|rest| rest.split_whitespace().next().map(str::to_string))
        .rfind(|n| !n.is_empty())
}

/// The pod a message without an object is about, when its paste names one pod only in a
/// `Scheduled` event (`Successfully assigned <ns>/<pod> to <node>`): the Events section of a
/// `kubectl describe pod` pasted without its header. With its node.
pub fn scheduled_pod_in_source(facts: &Facts, m: &Message) -> Option<(ObjectRef, String)> {
    let mut found: Option<(ObjectRef, String)> = None;
    for e in facts.events.iter().filter(|e| {
        e.reason == "Scheduled" && e.evidence.source == m.evidence.source && e.object.is_none()
    }) {
        let Some(rest) = tail_after(&e.message, "Successfully assigned ") else {
            continue;
        };
        let Some((target, node)) = rest.split_once(" to ") else {
            continue;
        };
        let (ns, name) = match target.split_once('/') {
            Some((ns, name)) => (Some(ns), name),
            None => (None, target),
        };
        let node = node
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        if name.is_empty() || node.is_empty() {
            continue;
        }
        let pod = ObjectRef::new("Pod", ns, name);
        match &found {
            // Two pods in one source: the message may be either's.
            Some((p, _)) if *p != pod => return None,
            _ => found = Some((pod, node)),
        }
    }
    found
}

/// The text after the first case-insensitive occurrence of `marker`, if any.
pub fn tail_after(text: &str, marker: &str) -> Option<String> {
    let start = find_ignore_ascii_case(text, marker)? + marker.len();
    text.get(start..).map(str::to_string)
}

/// Byte offset of the first ASCII-case-insensitive occurrence of `needle`.
/// Splits a scheduling error into clauses and parses each; repeated clauses (the log's
/// `errorCauses` copy) are kept once.
pub fn parse_clauses(error: &str) -> Vec<Clause> {
    let mut out: Vec<Clause> = Vec::new();
    for piece in split_clauses(error) {
        let piece = piece.trim();
        // A sentence's full stop goes; a `...` where the user cut the message stays, so the
        // clause is known to be cut.
        let piece = if piece.ends_with("...") {
            piece
        } else {
            piece.trim_end_matches('.').trim()
        };
        if piece.is_empty() || out.iter().any(|c| c.text == piece) {
            continue;
        }
        out.push(parse_clause(piece));
    }
    out
}

/// Splits on `; ` outside braces (a JSON value never holds one, but a quoted label could).
fn split_clauses(error: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut depth, mut in_quotes, mut start) = (0i32, false, 0usize);
    let bytes = error.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => in_quotes = !in_quotes,
            b'{' if !in_quotes => depth += 1,
            b'}' if !in_quotes => depth -= 1,
            b';' if !in_quotes && depth <= 0 && bytes.get(i + 1) == Some(&b' ') => {
                pieces.push(&error[start..i]);
                start = i + 2;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    pieces.push(&error[start.min(error.len())..]);
    pieces
}

/// Parses one clause.
pub fn parse_clause(text: &str) -> Clause {
    let mut rest = text;
    let mut nodepool = None;
    let mut provisioner = false;
    for (prefix, is_provisioner) in [
        ("incompatible with nodepool ", false),
        ("incompatible with provisioner ", true),
        ("compatible with nodepool ", false),
    ] {
        if let Some(after) = strip_prefix_ignore_case(rest, prefix) {
            if let Some((name, after_name)) = quoted(after) {
                nodepool = Some(name.to_string());
                provisioner = is_provisioner;
                rest = after_name.trim_start_matches([',', ' ']);
                // `compatible with nodepool "x" but failed to add pod while adhering to
                // reservation fallback policy, <reason>`.
                if let Some(after_but) = strip_prefix_ignore_case(rest, "but ") {
                    rest = after_but;
                }
            }
            break;
        }
    }
    let mut daemonset_overhead = None;
    if let Some(after) = strip_prefix_ignore_case(rest, "daemonset overhead=") {
        if let Some(end) = json_object_end(after) {
            daemonset_overhead = Some(after[..end].to_string());
            rest = after[end..].trim_start_matches([',', ' ']);
        }
    }
    let reason = rest.trim().to_string();
    let (requirements, resources) = requirements_and_resources(&reason);
    let cause = classify(&reason);
    let nodepool = nodepool
        .or_else(|| nodepool_in_reason(&reason, &cause))
        .or_else(|| {
            requirements
                .as_deref()
                .and_then(|r| single_value(r, "karpenter.sh/nodepool"))
        })
        .or_else(|| {
            requirements
                .as_deref()
                .and_then(|r| single_value(r, "karpenter.sh/provisioner-name"))
        });
    Clause {
        text: text.to_string(),
        nodepool,
        provisioner,
        daemonset_overhead,
        reason,
        requirements,
        resources,
        cause,
    }
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// `"name"rest` -> (`name`, `rest`).
fn quoted(text: &str) -> Option<(&str, &str)> {
    let inner = text.strip_prefix('"')?;
    let end = inner.find('"')?;
    Some((&inner[..end], &inner[end + 1..]))
}

/// The byte length of the JSON object at the start of `text` (balanced braces, strings
/// skipped), or `None` when `text` does not start with one.
pub fn json_object_end(text: &str) -> Option<usize> {
    if !text.starts_with('{') {
        return None;
    }
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    for (i, b) in text.bytes().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// `requirements=` and `resources=` of the v1.3+ form, or the `satisfied resources <json>
/// and requirements <reqs> (<reason>)` of v1.0 to v1.2.
fn requirements_and_resources(reason: &str) -> (Option<String>, Option<String>) {
    if let Some(start) = find_ignore_ascii_case(reason, "requirements=") {
        let after = &reason[start + "requirements=".len()..];
        let (reqs, resources) = match find_ignore_ascii_case(after, ", resources=") {
            Some(i) => {
                let res = &after[i + ", resources=".len()..];
                let res = match find_ignore_ascii_case(res, " (cpu request") {
                    Some(j) => &res[..j],
                    None => res,
                };
                (&after[..i], Some(res.trim().to_string()))
            }
            None => (after, None),
        };
        return (Some(reqs.trim().to_string()), resources);
    }
    if let Some(start) = find_ignore_ascii_case(reason, "satisfied resources ") {
        let after = &reason[start + "satisfied resources ".len()..];
        let Some(end) = json_object_end(after) else {
            return (None, None);
        };
        let resources = after[..end].to_string();
        let rest = &after[end..];
        let requirements = strip_prefix_ignore_case(rest, " and requirements ").map(|r| {
            let r = match final_group(r) {
                Some(i) => &r[..i],
                None => r,
            };
            r.trim().to_string()
        });
        return (requirements, Some(resources));
    }
    (None, None)
}

/// Where the ` (<reason>)` that ends a v1.0-1.2 `satisfied resources` text starts. The reason
/// may hold its own parentheses (`(no instance type has enough resources (CPU request >= 1
/// Million, m vs M typo?))`), so the group is matched from the closing one, not the last ` (`.
fn final_group(text: &str) -> Option<usize> {
    let trimmed = text.trim_end();
    if !trimmed.ends_with(')') {
        return text.rfind(" (");
    }
    let mut depth = 0usize;
    for (i, b) in trimmed.bytes().enumerate().rev() {
        match b {
            b')' => depth += 1,
            b'(' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return trimmed[..i].ends_with(' ').then(|| i - 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn classify(reason: &str) -> Cause {
    let lower = reason.to_ascii_lowercase();
    // The phrase before `requirements=` (v1.3+) or inside the final parentheses (v1.0-1.2):
    // `minValues 1` inside a requirements list is not a minValues failure.
    let phrase = match lower.find(", requirements=") {
        Some(i) => lower[..i].to_string(),
        None if lower.contains("satisfied resources") => final_group(&lower)
            .map(|i| lower[i..].to_string())
            .unwrap_or_else(|| lower.clone()),
        None => lower.clone(),
    };
    if lower.contains("did not tolerate") {
        return Cause::Taint(taint_in(reason));
    }
    if lower.contains("incompatible volume requirements") {
        let conflict = key_conflict(reason);
        return Cause::VolumeConflict {
            key: conflict.as_ref().map(|c| c.0.clone()),
            incoming: conflict.as_ref().map(|c| c.1.clone()),
            existing: conflict.map(|c| c.2),
        };
    }
    if lower.contains("does not have known values") {
        let label = tail_after(reason, "label ")
            .and_then(|t| quoted(&t).map(|(l, _)| l.to_string()))
            .unwrap_or_default();
        let typo_of =
            tail_after(reason, "typo of ").and_then(|t| quoted(&t).map(|(l, _)| l.to_string()));
        return Cause::UnknownLabel { label, typo_of };
    }
    if let Some((key, incoming, existing)) = key_conflict(reason) {
        return Cause::RequirementConflict {
            key,
            incoming,
            existing,
        };
    }
    if lower.contains("host port") || lower.contains("hostport") {
        return Cause::HostPort;
    }
    if let Some(tail) = tail_after(reason, "unsatisfiable topology constraint for ") {
        return topology(&tail);
    }
    if lower.contains("node limits have been exhausted") {
        return Cause::NodeLimits;
    }
    if lower.contains("exceed limits for") || lower.contains("exceed provisioner limits") {
        return Cause::Limits;
    }
    if phrase.contains("minvalues requirement is not met")
        || phrase.contains("meet minvalues requirements")
        || phrase.contains("minvalues incompatibility")
    {
        return Cause::MinValues;
    }
    if phrase.contains("filtered out all") {
        return Cause::AllTypesFiltered;
    }
    if phrase.contains("no instance type") {
        return Cause::InstanceTypes(instance_type_failure(&phrase, &lower));
    }
    if lower.contains("reserv") {
        return Cause::Reserved;
    }
    if lower.contains("dynamic resource") {
        return Cause::DynamicResources;
    }
    Cause::Other
}

fn instance_type_failure(phrase: &str, whole: &str) -> InstanceTypeFailure {
    let mut f = InstanceTypeFailure {
        cpu_typo: whole.contains("m vs m typo"),
        ..Default::default()
    };
    if phrase.contains("requirements/resources/offering tuple") {
        f.tuple = true;
    } else if phrase.contains("which met the scheduling requirements and had enough resources") {
        f.offering = true;
    } else if phrase.contains("which had enough resources and the required offering") {
        f.requirements = true;
    } else if phrase.contains("which met the scheduling requirements and the required offering") {
        f.resources = true;
    } else {
        f.requirements = phrase.contains("met the scheduling requirements")
            || phrase.contains("met all requirements");
        f.resources = phrase.contains("enough resources");
        f.offering = phrase.contains("required offering");
        if !(f.requirements || f.resources || f.offering) && phrase.contains("satisfied resources")
        {
            // Old releases print `no instance type satisfied resources <json> and requirements
            // <reqs>` with no reason: read as requirements and resources, the two the text
            // names (an offering problem is KW202's only when the text says so).
            f.requirements = true;
            f.resources = true;
        }
    }
    f
}

/// `key <k>, <incoming> not in <existing>` anywhere in the reason.
fn key_conflict(reason: &str) -> Option<(String, String, String)> {
    let start = if let Some(i) = find_ignore_ascii_case(reason, "incompatible requirements, key ") {
        i + "incompatible requirements, key ".len()
    } else if let Some(i) = find_ignore_ascii_case(reason, "requirements, key ") {
        i + "requirements, key ".len()
    } else if let Some(rest) = strip_prefix_ignore_case(reason, "key ") {
        reason.len() - rest.len()
    } else {
        return None;
    };
    let after = &reason[start..];
    let (key, pair) = after.split_once(", ")?;
    let (incoming, existing) = pair.split_once(" not in ")?;
    Some((
        key.trim().to_string(),
        incoming.trim().to_string(),
        requirement_end(existing).trim().to_string(),
    ))
}

/// A requirement (`<k> In [a b]`, `<k> DoesNotExist`) without what follows its value list: a
/// message read from text it was escaped in (a JSON string inside a JSON export) runs on
/// into `\"}",` and the wrapper's other fields.
fn requirement_end(requirement: &str) -> &str {
    match requirement.find(']') {
        Some(i) => &requirement[..=i],
        None => requirement.split(['"', '\\']).next().unwrap_or(requirement),
    }
}

/// The taint of a `did not tolerate` reason in any of its three forms, as `k[=v]:Effect`.
fn taint_in(reason: &str) -> String {
    let after = tail_after(reason, "did not tolerate ").unwrap_or_default();
    let after = after.trim();
    let taint = match strip_prefix_ignore_case(after, "taint (taint=") {
        Some(inner) => inner.split(')').next().unwrap_or(inner),
        None => match strip_prefix_ignore_case(after, "taint ") {
            Some(inner) => inner,
            None => after,
        },
    };
    let token = taint.split([' ', ';', ',']).next().unwrap_or_default();
    // The taint ends with its effect's letters: a JSON log line kept as raw text (in a table
    // cell, say) would otherwise leave the string's closing `"}` on it.
    match token.rfind(':') {
        Some(colon) => {
            let effect = token[colon + 1..]
                .bytes()
                .take_while(u8::is_ascii_alphabetic)
                .count();
            token[..colon + 1 + effect].to_string()
        }
        None => token.trim_end_matches(['"', '}', '\\', '|']).to_string(),
    }
}

fn topology(tail: &str) -> Cause {
    // Early releases: `unsatisfiable topology constraint for key <key>` (no kind, no counts).
    if let Some(key) = strip_prefix_ignore_case(tail.trim_start(), "key ") {
        if find_ignore_ascii_case(tail, ", key=").is_none() {
            return Cause::Topology {
                constraint: "topology constraint".to_string(),
                key: key.split([' ', ',']).next().unwrap_or_default().to_string(),
                counts: None,
                pod_domains: None,
                node_domains: None,
            };
        }
    }
    let (constraint, rest) = tail.split_once(", key=").unwrap_or((tail, ""));
    let key = rest
        .split([' ', ','])
        .next()
        .unwrap_or_default()
        .to_string();
    let field = |name: &str, next: Option<&str>| -> Option<String> {
        let start = find_ignore_ascii_case(rest, name)? + name.len();
        let value = &rest[start..];
        let end = next
            .and_then(|n| find_ignore_ascii_case(value, n))
            .unwrap_or(value.len());
        Some(value[..end].trim().trim_end_matches(')').trim().to_string())
    };
    Cause::Topology {
        constraint: constraint.trim().to_string(),
        key,
        counts: field("counts = ", Some(", podDomains")),
        pod_domains: field("podDomains = ", Some(", nodeDomains")),
        node_domains: field("nodeDomains = ", None),
    }
}

fn nodepool_in_reason(reason: &str, cause: &Cause) -> Option<String> {
    // `(NodePool=<np>)`, and `(Provisioner=<p>)` before v0.32; never the CSI driver of the
    // volume limit text, `would exceed volume limit (provisioner=<driver>, volume-count=<n>, ...)`.
    let mut from = 0;
    loop {
        let rest = &reason[from..];
        let found = ["(nodepool=", "(provisioner="]
            .iter()
            .filter_map(|m| find_ignore_ascii_case(rest, m).map(|i| (from + i, m.len())))
            .min();
        let Some((start, len)) = found else {
            break;
        };
        from = start + len;
        let tail = &reason[from..];
        let name = tail[..tail.find([')', ',']).unwrap_or(tail.len())].trim();
        if !name.is_empty() && !is_volume_limit_driver(reason, start) {
            return Some(name.to_string());
        }
    }
    // `because NodePool "<np>" couldn’t meet minValues requirements` (v1.0 to v1.4; later
    // releases drop the name and append `(NodePool=<np>)`).
    for marker in [
        "for nodepool: ",
        "for nodepool ",
        "for provisioner: ",
        "for provisioner ",
        "because nodepool ",
    ] {
        if let Some(tail) = tail_after(reason, marker) {
            if let Some((name, _)) = quoted(tail.trim()) {
                return Some(name.to_string());
            }
        }
    }
    if let Cause::RequirementConflict { key, existing, .. } = cause {
        if key == "karpenter.sh/nodepool" || key == "karpenter.sh/provisioner-name" {
            return single_value(existing, key);
        }
    }
    None
}

/// Whether the `(provisioner=` at `start` is the volume limit's CSI driver
/// (`would exceed volume limit (provisioner=ebs.csi.aws.com, volume-count=26, ...)`), not a
/// Provisioner.
fn is_volume_limit_driver(text: &str, start: usize) -> bool {
    let before = text[..start].trim_end();
    let after = &text[start..];
    let close = after.find(')').unwrap_or(after.len());
    before
        .get(before.len().saturating_sub("volume limit".len())..)
        .is_some_and(|t| t.eq_ignore_ascii_case("volume limit"))
        || contains_ignore_ascii_case(&after[..close], "volume-count=")
        || contains_ignore_ascii_case(&after[..close], "volume-limit=")
}

/// The single value of `<key> In [<value>]` inside a requirements string.
pub fn single_value(requirements: &str, key: &str) -> Option<String> {
    let values = in_values(requirements, key)?;
    match values.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// The values of `<key> In [<v1> <v2>]` inside a requirements string (Karpenter's
/// `Requirements.String()`: `key Op [v1 v2]` joined by `, `).
pub fn in_values(requirements: &str, key: &str) -> Option<Vec<String>> {
    let marker = format!("{key} In [");
    let mut search = requirements;
    loop {
        let i = search.find(&marker)?;
        // The key must start a requirement, not end a longer key.
        let boundary = i == 0 || search[..i].ends_with(", ") || search[..i].ends_with(' ');
        let after = &search[i + marker.len()..];
        if boundary {
            let end = after.find(']')?;
            let mut values: Vec<&str> = after[..end].split_whitespace().collect();
            // More than five values print as the first five and `and <n> others`.
            if let [.., and, count, others] = values.as_slice() {
                if *and == "and" && *others == "others" && count.parse::<u32>().is_ok() {
                    values.truncate(values.len() - 3);
                }
            }
            return Some(values.into_iter().map(str::to_string).collect());
        }
        search = after;
    }
}

/// The requirement on `key` inside a requirements string, as written (`key Op [..]`).
pub fn requirement_on(requirements: &str, key: &str) -> Option<String> {
    requirements
        .split(", ")
        .map(str::trim)
        .find(|r| r.starts_with(&format!("{key} ")))
        .map(str::to_string)
}

/// The node class a NodePool launches with and what the input shows of its subnets: the
/// zones a pod can get a node in are the NodePool's zones that also have a subnet, so
/// offering (KW202) and spread (KW206) diagnoses name the class and its missing zones.
#[derive(Debug, Clone, Default)]
pub struct NodePoolSubnets {
    /// The EC2NodeClass (or AWSNodeTemplate) name from the NodePool's `nodeClassRef`.
    pub nodeclass: String,
    /// The zones of its `status.subnets`, sorted and deduplicated; `None` when the input
    /// shows no such status (the class object is absent or its status was not printed).
    pub zones: Option<Vec<String>>,
    /// The first tag of its `subnetSelectorTerms` (`*` for a key-only selector): the tag a
    /// new subnet needs to be selected.
    pub tag: Option<(String, String)>,
}

impl NodePoolSubnets {
    /// The `wanted` zones the subnets do not cover; empty when the subnets are unknown.
    pub fn missing<'z>(&self, wanted: &'z [String]) -> Vec<&'z String> {
        match &self.zones {
            Some(zones) => wanted.iter().filter(|z| !zones.contains(z)).collect(),
            None => Vec::new(),
        }
    }

    /// The commands that find a subnet in `zone` and give it the tag the class selects on
    /// (the discovery tag with a placeholder when the selector is not in the input).
    pub fn tag_subnet_command(&self, zone: &str) -> String {
        tag_subnet_command(self.tag.as_ref(), zone)
    }
}

/// `aws ec2 describe-subnets` in `zone`, then `aws ec2 create-tags` with the selector's tag.
pub fn tag_subnet_command(tag: Option<&(String, String)>, zone: &str) -> String {
    let (key, value) = tag
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .unwrap_or(("karpenter.sh/discovery", "<cluster-name>"));
    format!(
        "aws ec2 describe-subnets --filters Name=availability-zone,Values={zone} --query 'Subnets[].[SubnetId,AvailableIpAddressCount,Tags]' && aws ec2 create-tags --resources <subnet-id> --tags Key={key},Value={value}"
    )
}

/// What the facts say about the subnets of NodePool `nodepool`'s node class; `None` when the
/// NodePool (with a node class reference) is not in the input.
pub fn nodepool_subnets(facts: &Facts, nodepool: &str) -> Option<NodePoolSubnets> {
    let np = facts.nodepool(nodepool)?;
    let name = np.nodeclass_ref.clone()?;
    let Some(nc) = facts.nodeclass(&name) else {
        return Some(NodePoolSubnets {
            nodeclass: name,
            ..Default::default()
        });
    };
    let zones = (!nc.status_subnets.is_empty()).then(|| {
        let mut zones: Vec<String> = nc.status_subnets.iter().map(|(_, z)| z.clone()).collect();
        zones.sort();
        zones.dedup();
        zones
    });
    let tag = nc.subnet_selector_terms.iter().find_map(|t| {
        let tags = t.get("tags")?.as_object()?;
        let (k, v) = tags.iter().next()?;
        Some((k.clone(), v.as_str().unwrap_or("*").to_string()))
    });
    Some(NodePoolSubnets {
        nodeclass: nc.meta.name.clone(),
        zones,
        tag,
    })
}

/// Whether `provider_id` (`aws:///eu-west-1a/i-0f1e...`) is that of EC2 instance `node`.
fn is_instance(node: &str, provider_id: Option<&str>) -> bool {
    node.starts_with("i-") && provider_id.is_some_and(|p| p.rsplit('/').next() == Some(node))
}

/// The name of the node running EC2 instance `id` (the ID an attach error names), when a
/// node or NodeClaim of the input has that instance.
pub fn node_of_instance(facts: &Facts, id: &str) -> Option<String> {
    facts
        .nodes
        .iter()
        .find(|n| is_instance(id, n.provider_id.as_deref()))
        .map(|n| n.meta.name.clone())
        .or_else(|| {
            facts
                .nodeclaims
                .iter()
                .find(|c| is_instance(id, c.provider_id.as_deref()))
                .and_then(|c| c.node_name.clone())
        })
}

/// The NodePool that launched node `node` (its name, or the EC2 instance ID an attach error
/// names): the node's `karpenter.sh/nodepool` label, else the NodeClaim of that node.
pub fn nodepool_of_node(facts: &Facts, node: &str) -> Option<String> {
    let is_instance = |provider_id: Option<&str>| is_instance(node, provider_id);
    facts
        .nodes
        .iter()
        .find(|n| n.meta.name == node || is_instance(n.provider_id.as_deref()))
        .and_then(|n| n.nodepool().map(str::to_string))
        .or_else(|| {
            facts
                .nodeclaims
                .iter()
                .find(|c| {
                    c.node_name.as_deref() == Some(node) || is_instance(c.provider_id.as_deref())
                })
                .and_then(|c| c.nodepool.clone())
        })
}

/// `pod ns/name` or `the pod`.
pub fn pod_label(pod: Option<&ObjectRef>) -> String {
    match pod {
        Some(p) => format!("Pod {}", p.qualified_name()),
        None => "The pod".to_string(),
    }
}

/// `NodePool "x"` or `a NodePool` (or `Provisioner "x"`).
pub fn nodepool_label(clause: &Clause) -> String {
    let kind = if clause.provisioner {
        "Provisioner"
    } else {
        "NodePool"
    };
    match &clause.nodepool {
        Some(np) => format!("{kind} \"{np}\""),
        None => format!("a {kind}"),
    }
}

/// The two totals of the v1.14+ `min={...}, max={...}` resources form: the pod's requests plus
/// the smallest and the largest daemonset overhead among the instance types (Karpenter prints
/// the bare JSON when both are equal).
pub fn resource_bounds(text: &str) -> Option<(&str, &str)> {
    let after_min = strip_prefix_ignore_case(text.trim(), "min=")?;
    let min_end = json_object_end(after_min)?;
    let after_max = strip_prefix_ignore_case(&after_min[min_end..], ", max=")?;
    let max_end = json_object_end(after_max)?;
    after_max[max_end..]
        .trim()
        .is_empty()
        .then(|| (&after_min[..min_end], &after_max[..max_end]))
}

/// A resources JSON (`{"cpu":"4180m","memory":"6264Mi"}`) as `cpu 4180m, memory 6264Mi`; the
/// v1.14 `min={...}, max={...}` form as ranges (`cpu 1250m to 1690m, memory 512Mi`); anything
/// unparsable is returned as written.
pub fn format_resources(json: &str) -> String {
    if let Some((min, max)) = resource_bounds(json) {
        return format_resource_range(min, max).unwrap_or_else(|| json.trim().to_string());
    }
    match serde_json::from_str::<serde_json::Value>(json.trim()) {
        Ok(serde_json::Value::Object(map)) if !map.is_empty() => map
            .iter()
            .map(|(k, v)| format!("{k} {}", quantity_text(v)))
            .collect::<Vec<_>>()
            .join(", "),
        _ => json.trim().to_string(),
    }
}

/// Each resource of the `max` total, with its `min` value when that differs.
fn format_resource_range(min: &str, max: &str) -> Option<String> {
    let serde_json::Value::Object(max_map) = serde_json::from_str(max).ok()? else {
        return None;
    };
    if max_map.is_empty() {
        return None;
    }
    let parts = max_map
        .iter()
        .map(|(name, value)| {
            let high = quantity_text(value);
            match resource_value(min, name) {
                Some(low) if low != high => format!("{name} {low} to {high}"),
                _ => format!("{name} {high}"),
            }
        })
        .collect::<Vec<_>>();
    Some(parts.join(", "))
}

fn quantity_text(value: &serde_json::Value) -> String {
    match value.as_str() {
        Some(s) => s.to_string(),
        None => value.to_string(),
    }
}

/// One resource of a resources JSON (`cpu`, `memory`...); of the v1.14 `min=..., max=...`
/// form, the larger total's (what the largest daemonset overhead makes the pod need).
pub fn resource_value(json: &str, name: &str) -> Option<String> {
    resource_entries(json)
        .into_iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value)
}

/// Every resource of a resources JSON with its quantity as written, in the JSON's order; of
/// the v1.14 `min=..., max=...` form, the larger total's.
pub fn resource_entries(json: &str) -> Vec<(String, String)> {
    let json = resource_bounds(json).map_or(json, |(_, max)| max);
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(json.trim()) else {
        return Vec::new();
    };
    map.iter()
        .map(|(key, value)| (key.clone(), quantity_text(value)))
        .collect()
}

/// Binary and decimal suffixes of Kubernetes quantities, in milli-units so that `500m` fits.
const QUANTITY_SUFFIXES: &[(&str, u128)] = &[
    ("Ki", 1 << 10),
    ("Mi", 1 << 20),
    ("Gi", 1 << 30),
    ("Ti", 1 << 40),
    ("Pi", 1 << 50),
    ("Ei", 1 << 60),
    ("k", 1_000),
    ("M", 1_000_000),
    ("G", 1_000_000_000),
    ("T", 1_000_000_000_000),
    ("P", 1_000_000_000_000_000),
    ("E", 1_000_000_000_000_000_000),
];

/// An integer quantity (`1000`, `4000Gi`, `500m`) split into its number and suffix.
pub fn quantity_parts(q: &str) -> Option<(u128, &str)> {
    let q = q.trim();
    let digits = q.len() - q.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, suffix) = q.split_at(digits);
    let known =
        suffix.is_empty() || suffix == "m" || QUANTITY_SUFFIXES.iter().any(|(s, _)| *s == suffix);
    (known && !number.is_empty())
        .then(|| number.parse().ok().map(|n| (n, suffix)))
        .flatten()
}

/// An integer quantity in thousandths of its unit, to compare usage with a limit.
pub fn quantity_units(q: &str) -> Option<u128> {
    let (number, suffix) = quantity_parts(q)?;
    let factor = match suffix {
        "" => 1_000,
        "m" => 1,
        s => 1_000 * QUANTITY_SUFFIXES.iter().find(|(k, _)| *k == s)?.1,
    };
    number.checked_mul(factor)
}

/// A CPU quantity (`29500m`, `2`, `0.5`, `2000M`) in cores.
pub fn cpu_cores(quantity: &str) -> Option<f64> {
    let q = quantity.trim();
    let (number, factor) = if let Some(n) = q.strip_suffix('m') {
        (n, 0.001)
    } else if let Some(n) = q.strip_suffix('k') {
        (n, 1e3)
    } else if let Some(n) = q.strip_suffix('M') {
        (n, 1e6)
    } else if let Some(n) = q.strip_suffix('G') {
        (n, 1e9)
    } else {
        (q, 1.0)
    };
    parse_f64(number).map(|n| n * factor)
}

/// A scheduling error together with one of its clauses.
#[derive(Debug, Clone, Copy)]
pub struct Hit<'e, 'a> {
    pub error: &'e SchedulingError<'a>,
    pub clause: &'e Clause,
}

/// The clauses `pick` selects, grouped by pod and `key` in first-appearance order, so that a
/// failure logged again and again yields one diagnosis with all its evidence.
pub fn group_hits<'e, 'a>(
    errors: &'e [SchedulingError<'a>],
    pick: impl Fn(&Clause) -> bool,
    key: impl Fn(&Clause) -> String,
) -> Vec<Vec<Hit<'e, 'a>>> {
    let mut groups: Vec<(String, Vec<Hit<'e, 'a>>)> = Vec::new();
    for error in errors {
        for clause in error.clauses.iter().filter(|c| pick(c)) {
            let pod = error
                .pod
                .as_ref()
                .map(ObjectRef::qualified_name)
                .unwrap_or_default();
            let k = format!("{pod}\u{0}{}", key(clause));
            match groups.iter_mut().find(|(gk, _)| *gk == k) {
                Some((_, hits)) => hits.push(Hit { error, clause }),
                None => groups.push((k, vec![Hit { error, clause }])),
            }
        }
    }
    groups.into_iter().map(|(_, hits)| hits).collect()
}

/// The clauses `pick` selects, grouped by `key` alone in first-appearance order: one cause
/// shared by several pods (and NodePools) is one group.
pub fn group_hits_across_pods<'e, 'a>(
    errors: &'e [SchedulingError<'a>],
    pick: impl Fn(&Clause) -> bool,
    key: impl Fn(&Clause) -> String,
) -> Vec<Vec<Hit<'e, 'a>>> {
    let mut groups: Vec<(String, Vec<Hit<'e, 'a>>)> = Vec::new();
    for error in errors {
        for clause in error.clauses.iter().filter(|c| pick(c)) {
            let k = key(clause);
            match groups.iter_mut().find(|(gk, _)| *gk == k) {
                Some((_, hits)) => hits.push(Hit { error, clause }),
                None => groups.push((k, vec![Hit { error, clause }])),
            }
        }
    }
    groups.into_iter().map(|(_, hits)| hits).collect()
}

/// The messages of a group of hits, for `Diagnosis::with_messages`.
pub fn hit_messages<'e, 'a>(hits: &'e [Hit<'e, 'a>]) -> impl Iterator<Item = &'a Message> + 'e {
    hits.iter().map(|h| h.error.message)
}

/// The messages of a group of hits with their pods, for `Diagnosis::with_messages_of`: one
/// evidence line per pod even when the pods' messages read the same.
pub fn hit_messages_of<'e, 'a>(
    hits: &'e [Hit<'e, 'a>],
) -> impl Iterator<Item = (Option<&'e ObjectRef>, &'a Message)> + 'e {
    hits.iter().map(|h| (h.error.pod.as_ref(), h.error.message))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An events table without a NAMESPACE column names the pod without one: the `-n` of the
    /// `kubectl get events` above it fills it in, so fix commands carry the namespace.
    #[test]
    fn a_pod_named_without_namespace_takes_the_events_command_namespace() {
        let row = "2m   Warning   FailedScheduling   pod/web-0   Failed to schedule pod, incompatible with nodepool \"default\", daemonset overhead={}, incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-west-1a] not in topology.kubernetes.io/zone In [eu-west-1b]\n";
        let header = "LAST SEEN   TYPE      REASON             OBJECT      MESSAGE\n";
        let namespace_of = |text: &str| {
            let report = crate::testing::check_only("KW203", text);
            report.diagnoses[0].object.as_ref()?.namespace.clone()
        };
        assert_eq!(
            namespace_of(&format!("$ kubectl get events -n shop\n{header}{row}")).as_deref(),
            Some("shop")
        );
        // No command: the one pod of that name the input describes.
        let describe = "Name:             web-0\nNamespace:        shop\nStatus:           Pending\nContainers:\n  web:\n    Image:  nginx\nQoS Class:       BestEffort\n\n";
        assert_eq!(
            namespace_of(&format!("{describe}{header}{row}")).as_deref(),
            Some("shop")
        );
        assert_eq!(namespace_of(&format!("{header}{row}")), None);
    }

    #[test]
    fn in_values_reads_each_value_and_drops_the_others_count() {
        let reqs = "karpenter.sh/nodepool In [a b c d e and 2 others], kubernetes.io/os In [linux]";
        assert_eq!(
            in_values(reqs, "karpenter.sh/nodepool").unwrap(),
            ["a", "b", "c", "d", "e"]
        );
        // A value that only looks like the tail is kept.
        assert_eq!(
            in_values("k In [and x others]", "k").unwrap(),
            ["and", "x", "others"]
        );
    }

    #[test]
    fn v1_14_min_max_resources() {
        let clause = parse_clause(
            r#"no instance type has enough resources, requirements=karpenter.sh/nodepool In [default], resources=min={"cpu":"1250m","memory":"512Mi"}, max={"cpu":"1690m","memory":"512Mi"} (CPU request >= 1 Million, m vs M typo?)"#,
        );
        let res = clause.resources.as_deref().unwrap();
        assert_eq!(
            resource_bounds(res),
            Some((
                r#"{"cpu":"1250m","memory":"512Mi"}"#,
                r#"{"cpu":"1690m","memory":"512Mi"}"#
            ))
        );
        assert_eq!(format_resources(res), "cpu 1250m to 1690m, memory 512Mi");
        assert_eq!(resource_value(res, "cpu").as_deref(), Some("1690m"));
        // The older single JSON is not a range.
        assert_eq!(resource_bounds(r#"{"cpu":"1"}"#), None);
        assert_eq!(format_resources(r#"{"cpu":"1"}"#), "cpu 1");
        for broken in [
            r#"min={"cpu":"1"}"#,
            "min={",
            r#"min={}, max={"#,
            "min={}, max={}",
            r#"min={"a":1}, max={"a":2} x"#,
        ] {
            assert_eq!(format_resources(broken), broken);
        }
    }

    #[test]
    fn v1_0_prefixed_clauses() {
        let clauses = parse_clauses(
            r#"incompatible with nodepool "gpu", daemonset overhead={"cpu":"690m","memory":"843162368","pods":"11"}, no instance type satisfied resources {"cpu":"1690m","nvidia.com/gpu":"1","pods":"12"} and requirements karpenter.k8s.aws/instance-family In [g4ad] minValues 1, karpenter.sh/nodepool In [gpu], nvidia.com/gpu In [true] (no instance type has enough resources); incompatible with nodepool "default", daemonset overhead={"cpu":"690m","pods":"10"}, incompatible requirements, label "nvidia.com/gpu" does not have known values"#,
        );
        assert_eq!(clauses.len(), 2);
        let gpu = &clauses[0];
        assert_eq!(gpu.nodepool.as_deref(), Some("gpu"));
        assert_eq!(
            gpu.daemonset_overhead.as_deref(),
            Some(r#"{"cpu":"690m","memory":"843162368","pods":"11"}"#)
        );
        assert_eq!(
            gpu.resources.as_deref(),
            Some(r#"{"cpu":"1690m","nvidia.com/gpu":"1","pods":"12"}"#)
        );
        assert_eq!(
            gpu.requirements.as_deref(),
            Some("karpenter.k8s.aws/instance-family In [g4ad] minValues 1, karpenter.sh/nodepool In [gpu], nvidia.com/gpu In [true]")
        );
        assert!(matches!(gpu.cause, Cause::InstanceTypes(f) if f.resources && !f.offering));
        assert_eq!(
            clauses[1].cause,
            Cause::UnknownLabel {
                label: "nvidia.com/gpu".into(),
                typo_of: None
            }
        );
        assert_eq!(clauses[1].nodepool.as_deref(), Some("default"));
    }

    #[test]
    fn v1_5_bare_clauses_find_their_nodepool() {
        let clauses = parse_clauses(
            r#"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [non-existent-zone] not in karpenter.sh/nodepool In [default-reserved]; no instance type met the scheduling requirements or had enough resources or had a required offering, requirements=karpenter.sh/capacity-type In [on-demand], karpenter.sh/nodepool In [non-existent-zone], topology.kubernetes.io/zone In [eu-west-2z], resources={"cpu":"750m","memory":"256Mi","pods":"3"}; all available instance types exceed limits for nodepool (NodePool=default)"#,
        );
        assert_eq!(clauses.len(), 3);
        assert_eq!(clauses[0].nodepool.as_deref(), Some("default-reserved"));
        assert_eq!(clauses[1].nodepool.as_deref(), Some("non-existent-zone"));
        assert_eq!(
            clauses[1].cause,
            Cause::InstanceTypes(InstanceTypeFailure {
                requirements: true,
                resources: true,
                offering: true,
                ..Default::default()
            })
        );
        assert_eq!(
            clauses[1].resources.as_deref(),
            Some(r#"{"cpu":"750m","memory":"256Mi","pods":"3"}"#)
        );
        assert_eq!(clauses[2].cause, Cause::Limits);
        assert_eq!(clauses[2].nodepool.as_deref(), Some("default"));
    }

    #[test]
    fn taint_forms() {
        for (text, taint) in [
            (
                "did not tolerate pool=jobs:NoSchedule",
                "pool=jobs:NoSchedule",
            ),
            (
                "did not tolerate CriticalAddonsOnly:NoSchedule",
                "CriticalAddonsOnly:NoSchedule",
            ),
            (
                "did not tolerate dedicated=:NoSchedule",
                "dedicated=:NoSchedule",
            ),
            (
                "did not tolerate taint (taint=example.io/tier=A400:NoSchedule)",
                "example.io/tier=A400:NoSchedule",
            ),
            (
                "did not tolerate taint (taint=CriticalAddonsOnly:NoSchedule)",
                "CriticalAddonsOnly:NoSchedule",
            ),
            // A JSON log line read as raw text: the string's end is not the taint's.
            (
                r#"did not tolerate pool=jobs:NoSchedule"} |"#,
                "pool=jobs:NoSchedule",
            ),
            (
                r#"did not tolerate nvidia.com/gpu:NoExecute\"}"#,
                "nvidia.com/gpu:NoExecute",
            ),
        ] {
            assert_eq!(
                parse_clause(text).cause,
                Cause::Taint(taint.into()),
                "{text}"
            );
        }
    }

    #[test]
    fn the_twelve_instance_type_phrases() {
        let f = |r: bool, s: bool, o: bool| InstanceTypeFailure {
            requirements: r,
            resources: s,
            offering: o,
            ..Default::default()
        };
        for (phrase, want) in [
            ("no instance type met the scheduling requirements or had enough resources or had a required offering", f(true, true, true)),
            ("no instance type met the scheduling requirements or had enough resources", f(true, true, false)),
            ("no instance type met the scheduling requirements or had a required offering", f(true, false, true)),
            ("no instance type had enough resources or had a required offering", f(false, true, true)),
            ("no instance type met all requirements", f(true, false, false)),
            ("no instance type has enough resources", f(false, true, false)),
            ("no instance type has the required offering", f(false, false, true)),
            ("no instance type which met the scheduling requirements and had enough resources, had a required offering", f(false, false, true)),
            ("no instance type which had enough resources and the required offering met the scheduling requirements", f(true, false, false)),
            ("no instance type which met the scheduling requirements and the required offering had the required resources", f(false, true, false)),
        ] {
            let text = format!("{phrase}, requirements=kubernetes.io/os In [linux], resources={{\"cpu\":\"1\"}}");
            assert_eq!(parse_clause(&text).cause, Cause::InstanceTypes(want), "{phrase}");
        }
        let tuple = parse_clause("no instance type met the requirements/resources/offering tuple, requirements=a In [b], resources={}");
        assert!(matches!(tuple.cause, Cause::InstanceTypes(f) if f.tuple));
        // The pre-v0.29 form without a reason.
        let bare = parse_clause(
            r#"incompatible with provisioner "default", no instance type satisfied resources {"cpu":"70","pods":"1"} and requirements karpenter.sh/provisioner-name In [default], kubernetes.io/os In [linux]"#,
        );
        assert!(
            matches!(bare.cause, Cause::InstanceTypes(f) if f.requirements && f.resources && !f.offering),
            "{:?}",
            bare.cause
        );
        // v1.0-1.2: the note inside the reason's parentheses.
        let nested = parse_clause(
            r#"no instance type satisfied resources {"cpu":"2000000000200m","pods":"5"} and requirements karpenter.sh/nodepool In [general], kubernetes.io/arch In [amd64] (no instance type has enough resources (CPU request >= 1 Million, m vs M typo?))"#,
        );
        assert!(
            matches!(&nested.cause, Cause::InstanceTypes(f) if f.cpu_typo && f.resources && !f.requirements),
            "{:?}",
            nested.cause
        );
        assert_eq!(
            nested.requirements.as_deref(),
            Some("karpenter.sh/nodepool In [general], kubernetes.io/arch In [amd64]")
        );
        let typo = parse_clause(
            r#"no instance type has enough resources, requirements=a In [b], resources={"cpu":"2000"} (CPU request >= 1 Million, m vs M typo?)"#,
        );
        assert!(matches!(typo.cause, Cause::InstanceTypes(f) if f.cpu_typo && f.resources));
        assert_eq!(typo.resources.as_deref(), Some(r#"{"cpu":"2000"}"#));
    }

    #[test]
    fn min_values_first_and_min_values_inside_requirements() {
        let first = parse_clause("minValues requirement is not met for label(s) (label(s)=[karpenter.k8s.aws/instance-family]), requirements=a In [b], resources={}");
        assert_eq!(first.cause, Cause::MinValues);
        let curly = parse_clause("pod didn\u{2019}t schedule because NodePool couldn\u{2019}t meet minValues requirements, minValues requirement is not met for label(s) (label(s)=[x]) (NodePool=spread)");
        assert_eq!(curly.cause, Cause::MinValues);
        assert_eq!(curly.nodepool.as_deref(), Some("spread"));
        let named = parse_clause("pod didn\u{2019}t schedule because NodePool \"graviton\" couldn\u{2019}t meet minValues requirements, minValues requirement is not met for label(s) (label(s)=[x])");
        assert_eq!(named.cause, Cause::MinValues);
        assert_eq!(named.nodepool.as_deref(), Some("graviton"));
        let inside = parse_clause("no instance type has enough resources, requirements=karpenter.k8s.aws/instance-family In [g4ad] minValues 1, resources={}");
        assert!(matches!(inside.cause, Cause::InstanceTypes(_)));
    }

    #[test]
    fn topology_without_closing_parenthesis() {
        let c = parse_clause("unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone (counts = us-east-1a: 1, us-east-1b: 1, us-east-1c: 0, podDomains = topology.kubernetes.io/zone Exists, nodeDomains = topology.kubernetes.io/zone In [us-east-1a us-east-1b]");
        match c.cause {
            Cause::Topology {
                constraint,
                key,
                counts,
                node_domains,
                ..
            } => {
                assert_eq!(constraint, "topology spread");
                assert_eq!(key, "topology.kubernetes.io/zone");
                assert_eq!(
                    counts.as_deref(),
                    Some("us-east-1a: 1, us-east-1b: 1, us-east-1c: 0")
                );
                assert_eq!(
                    node_domains.as_deref(),
                    Some("topology.kubernetes.io/zone In [us-east-1a us-east-1b]")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn provisioner_grammar_and_limits_forms() {
        let c = parse_clause(
            r#"incompatible with provisioner "default", daemonset overhead={"cpu":"100m"}, did not tolerate team=a:NoSchedule"#,
        );
        assert!(c.provisioner);
        assert_eq!(c.nodepool.as_deref(), Some("default"));
        for (text, np) in [
            (
                r#"all available instance types exceed limits for nodepool: "batch""#,
                "batch",
            ),
            (
                r#"all available instance types exceed limits for nodepool "batch""#,
                "batch",
            ),
            (
                "node limits have been exhausted for nodepool (NodePool=batch)",
                "batch",
            ),
            (
                r#"all available instance types exceed limits for provisioner: "old""#,
                "old",
            ),
        ] {
            let c = parse_clause(text);
            assert!(
                matches!(c.cause, Cause::Limits | Cause::NodeLimits),
                "{text}"
            );
            assert_eq!(c.nodepool.as_deref(), Some(np), "{text}");
        }
    }

    /// A message that says nothing: what a scheduling error hangs its clauses on in tests.
    fn empty_message() -> Message {
        Message {
            origin: MessageOrigin::Unrecognised,
            text: String::new(),
            evidence: crate::document::Evidence::new("x", 1, ""),
            object: None,
            nodepool: None,
            reason: None,
            component: None,
            time: None,
        }
    }

    #[test]
    fn a_clause_cut_short_is_never_nearest() {
        let clauses = parse_clauses(
            r#"incompatible with nodepool "arm", daemonset overhead={}, did not tolerate arch=arm64:NoSchedule; incompatible with nodepool "gpu", daemonset overh..."#,
        );
        let message = empty_message();
        let err = SchedulingError {
            message: &message,
            pod: None,
            clauses,
        };
        assert_eq!(err.nearest().unwrap().nodepool.as_deref(), Some("arm"));
        let note = err.nearest_note(&err.clauses[0]);
        assert!(
            note.contains("\"gpu\" (its reason is cut from the paste)"),
            "{note}"
        );
    }

    #[test]
    fn nearest_prefers_capacity_over_labels() {
        let clauses = parse_clauses(
            r#"incompatible with nodepool "system", daemonset overhead={}, did not tolerate CriticalAddonsOnly=true:NoSchedule; incompatible with nodepool "default", daemonset overhead={}, incompatible requirements, label "nodegroup" does not have known values; all available instance types exceed limits for nodepool: "batch""#,
        );
        let message = empty_message();
        let err = SchedulingError {
            message: &message,
            pod: None,
            clauses,
        };
        assert_eq!(err.nearest().unwrap().nodepool.as_deref(), Some("batch"));
        assert!(err
            .nearest_note(&err.clauses[0])
            .contains("\"batch\" came nearest"));
        let own = err.nearest_note(&err.clauses[2]);
        assert!(own.contains("this one came nearest"), "{own}");
        assert!(
            own.contains("\"system\" (the taint CriticalAddonsOnly=true:NoSchedule)"),
            "{own}"
        );
    }

    fn facts_with_pools(text: &str, pools: &[(&str, bool, Option<&str>)]) -> Facts {
        let mut facts = Facts::default();
        facts.messages.push(Message {
            origin: MessageOrigin::Event,
            text: text.to_string(),
            evidence: crate::document::Evidence::new("x", 1, text),
            ..Message::default()
        });
        for (name, ready, taint) in pools {
            let mut np = crate::facts::NodePool::default();
            np.meta.name = name.to_string();
            np.conditions.push(crate::facts::Condition {
                condition_type: "Ready".into(),
                status: if *ready { "True" } else { "False" }.into(),
                reason: None,
                message: None,
                evidence: None,
            });
            np.taints.extend(taint.map(parse_taint));
            facts.nodepools.push(np);
        }
        facts
    }

    #[test]
    fn unnamed_v1_5_clauses_take_their_nodepool_from_the_input() {
        let text = "Failed to schedule pod, did not tolerate taint (taint=CriticalAddonsOnly=true:NoSchedule); no instance type has enough resources, requirements=karpenter.sh/nodepool In [gpu], resources={}";
        // Eliminated: the only ready NodePool no clause names.
        let facts = facts_with_pools(
            text,
            &[
                ("gpu", true, None),
                ("system", true, None),
                ("old", false, None),
            ],
        );
        let errors = scheduling_errors(&facts);
        assert_eq!(errors[0].clauses[0].nodepool.as_deref(), Some("system"));
        // Two candidates left: no guess.
        let facts = facts_with_pools(
            text,
            &[
                ("gpu", true, None),
                ("system", true, None),
                ("batch", true, None),
            ],
        );
        assert_eq!(scheduling_errors(&facts)[0].clauses[0].nodepool, None);
        // The only NodePool with the taint, whatever else is listed.
        let facts = facts_with_pools(
            text,
            &[
                ("gpu", true, None),
                ("addons", true, Some("CriticalAddonsOnly=true:NoSchedule")),
                ("batch", true, None),
            ],
        );
        assert_eq!(
            scheduling_errors(&facts)[0].clauses[0].nodepool.as_deref(),
            Some("addons")
        );
    }

    #[test]
    fn an_unnamed_conflict_takes_the_nodepool_whose_requirement_it_quotes() {
        let text = "Failed to schedule pod, incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1d] not in topology.kubernetes.io/zone In [us-east-1b us-east-1a]; incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1d] not in topology.kubernetes.io/zone In [us-east-1a us-east-1c]";
        let mut facts = facts_with_pools(text, &[("ab", true, None), ("ac", true, None)]);
        for (pool, zones) in [
            ("ab", ["us-east-1a", "us-east-1b"]),
            ("ac", ["us-east-1a", "us-east-1c"]),
        ] {
            let np = facts
                .nodepools
                .iter_mut()
                .find(|p| p.meta.name == pool)
                .unwrap();
            np.requirements.push(crate::facts::Requirement {
                key: "topology.kubernetes.io/zone".into(),
                operator: "In".into(),
                values: zones.iter().map(|z| z.to_string()).collect(),
                ..Default::default()
            });
        }
        let errors = scheduling_errors(&facts);
        let named: Vec<Option<&str>> = errors[0]
            .clauses
            .iter()
            .map(|c| c.nodepool.as_deref())
            .collect();
        assert_eq!(named, [Some("ab"), Some("ac")]);
    }

    #[test]
    fn a_csi_provisioner_is_never_a_nodepool() {
        let limit = "checking volume usage, would exceed volume limit (provisioner=ebs.csi.aws.com, volume-count=26, volume-limit=25)";
        // The clause of an unnamed (v1.5+) error, and the message as a whole.
        assert_eq!(parse_clause(limit).nodepool, None);
        let text = format!("Failed to schedule pod, {limit}");
        let facts = facts_with_pools(&text, &[]);
        assert_eq!(message_nodepool(&facts, &facts.messages[0]), None);
        // Spaced or upper-case, the driver stays a driver.
        let facts = facts_with_pools("would exceed volume limit ( Provisioner=efs.csi.aws.com, volume-count=3, volume-limit=2)", &[]);
        assert_eq!(message_nodepool(&facts, &facts.messages[0]), None);
        // The NodePool the message does name is found: before the driver, after it, or as the
        // one NodePool the simulation was incompatible with.
        for (text, np) in [
            (format!("{limit} (NodePool=storage)"), "storage"),
            (format!("(Provisioner=old) {limit}"), "old"),
            (
                format!(
                    r#"Failed to schedule pod, incompatible with nodepool "storage", daemonset overhead={{"cpu":"200m"}}, {limit}"#
                ),
                "storage",
            ),
            (
                format!(r#"incompatible with provisioner "legacy", {limit}"#),
                "legacy",
            ),
        ] {
            let facts = facts_with_pools(&text, &[]);
            assert_eq!(
                message_nodepool(&facts, &facts.messages[0]).as_deref(),
                Some(np),
                "{text}"
            );
        }
        // Two NodePools tried: the message is about neither alone.
        let text = format!(
            r#"incompatible with nodepool "a", {limit}; incompatible with nodepool "b", {limit}"#
        );
        let facts = facts_with_pools(&text, &[]);
        assert_eq!(message_nodepool(&facts, &facts.messages[0]), None);
        // A StorageClass log line's provisioner field is not a Provisioner either.
        let mut facts = Facts::default();
        let record = crate::facts::LogRecord {
            message: "StorageClass .spec.provisioner uses an in-tree storage plugin".into(),
            fields: [
                ("storage-class", "gp2"),
                ("provisioner", "kubernetes.io/aws-ebs"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(v)))
            .collect(),
            evidence: crate::document::Evidence::new("karpenter.log", 1, "x"),
            ..Default::default()
        };
        let mut message = crate::ingest::logs::record_message(&record);
        message.evidence = record.evidence.clone();
        facts.logs.push(record);
        assert_eq!(message_nodepool(&facts, &message), None);
    }

    #[test]
    fn bad_input_never_panics() {
        for text in [
            "",
            ";",
            "; ; ",
            "incompatible with nodepool \"",
            "daemonset overhead={",
            "no instance type has enough resources, requirements=a In [b], resources=min={, max=",
            "did not tolerate",
            "key , not in",
            "unsatisfiable topology constraint for ",
            "é; ü",
        ] {
            let _ = parse_clauses(text);
        }
    }

    #[test]
    fn the_owner_to_edit_is_named_only_when_the_name_says_which() {
        let facts = Facts::default();
        let owner = |name: &str| {
            pod_owner(&facts, Some(&ObjectRef::new("Pod", Some("ns"), name)))
                .map(|o| format!("{} {}", o.kind, o.name))
        };
        assert_eq!(
            owner("web-7d9c6b8f5-xk2lp").as_deref(),
            Some("Deployment web")
        );
        assert_eq!(owner("kafka-2").as_deref(), Some("StatefulSet kafka"));
        // A CronJob's Job is named after the scheduled minute, no pod-template-hash.
        assert_eq!(
            owner("nightly-etl-29110560-5xk2v").as_deref(),
            Some("CronJob nightly-etl")
        );
        // Spark's executors are bare pods.
        assert_eq!(owner("etl-daily-8f2c1a9b7e-exec-1"), None);
    }

    #[test]
    fn a_key_conflict_read_from_escaped_text_ends_at_its_value_list() {
        let reason = r#"incompatible requirements, key k, k In [r x] not in k In [c m]\"}", "attributes": {}}"#;
        let (_, incoming, existing) = key_conflict(reason).unwrap();
        assert_eq!(
            (incoming.as_str(), existing.as_str()),
            ("k In [r x]", "k In [c m]")
        );
        let reason = r#"incompatible requirements, key h, h In [a] not in h DoesNotExist\"}""#;
        assert_eq!(key_conflict(reason).unwrap().2, "h DoesNotExist");
    }

    #[test]
    fn a_pod_since_placed_has_no_scheduling_error_left() {
        let describe = |node: &str, status: &str| {
            format!("Name:             api-1\nNamespace:        shop\nPriority:         0\nNode:             {node}\nStatus:           {status}\nEvents:\n  Type     Reason            Age   From       Message\n  ----     ------            ----  ----       -------\n  Warning  FailedScheduling  25m   karpenter  Failed to schedule pod, incompatible with nodepool \"default\", daemonset overhead={{}}, did not tolerate dedicated=api:NoSchedule\n")
        };
        let count = |text: &str| {
            scheduling_errors(&crate::ingest::ingest(&[crate::document::Document::new(
                "t", text,
            )]))
            .len()
        };
        assert_eq!(count(&describe("<none>", "Pending")), 1);
        assert_eq!(
            count(&describe("ip-10-0-1-23.ec2.internal/10.0.1.23", "Running")),
            0
        );
        // Bound but still creating its containers: scheduled all the same.
        assert_eq!(
            count(&describe("ip-10-0-1-23.ec2.internal/10.0.1.23", "Pending")),
            0
        );
    }
}
