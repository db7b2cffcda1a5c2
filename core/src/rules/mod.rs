//! The rule catalogue. One file per catalogue ID, grouped by range; each file holds the rule's
//! metadata and user documentation (What it means / Why it happens / How to fix) above its
//! check, and its tests below. `all()` is the registry every consumer reads: `explain`,
//! `rules`, docs/rules.md, the web page's rule browser and the JSON `docs` field.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::document::Evidence;
use crate::facts::{Facts, Message, ObjectRef};

mod kw0xx;
pub(crate) mod kw1xx;
mod kw2xx;
mod kw3xx;
mod kw4xx;
pub(crate) mod kw5xx;
pub(crate) mod names;
pub(crate) mod text;
pub(crate) mod time;
pub(crate) mod version;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    // Declared most severe first so that sorting ascending puts errors on top.
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// How sure a diagnosis is: `High` for an exact catalogue signal, lower when inferred from
/// numbers or from the presence of objects (the summary then says what it inferred from).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    High,
    Medium,
    Low,
}

/// A rule's static metadata; `docs` is markdown with the sections `## What it means`,
/// `## Why it happens`, `## How to fix`.
#[derive(Debug)]
pub struct RuleMeta {
    pub id: &'static str,
    /// Names the symptom, never the fix.
    pub slug: &'static str,
    pub title: &'static str,
    pub severity: Severity,
    pub docs: &'static str,
    /// Lower-case substrings that mark a line as a candidate for this rule. The log scanner's
    /// prefilter is built from every rule's signals, so a line holding none of them (and no
    /// structural marker the scanner keeps on its own) is never fully parsed: a rule must list
    /// here every text it matches in logs. Of the INFO/DEBUG lines kept only for a signal, each
    /// signal keeps its 1000 most recent (`ingest::scan::RECENT_PER_SIGNAL`).
    pub signals: &'static [&'static str],
    /// When any of these IDs fires, this rule's diagnoses are dropped (KW302 is the fallback
    /// for the specific launch rules, KW303 yields to kubelet evidence...).
    pub superseded_by: &'static [&'static str],
}

pub struct Rule {
    pub meta: RuleMeta,
    pub check: fn(&Facts) -> Vec<Diagnosis>,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule").field("id", &self.meta.id).finish()
    }
}

/// One remediation step: prose, optionally a command and/or YAML filled in with the user's
/// own names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Remediation {
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub yaml: Option<String>,
}

impl Remediation {
    pub fn text(text: impl Into<String>) -> Self {
        Remediation {
            text: text.into(),
            command: None,
            yaml: None,
        }
    }

    pub fn command(text: impl Into<String>, command: impl Into<String>) -> Self {
        Remediation {
            text: text.into(),
            command: Some(command.into()),
            yaml: None,
        }
    }

    pub fn yaml(text: impl Into<String>, yaml: impl Into<String>) -> Self {
        Remediation {
            text: text.into(),
            command: None,
            yaml: Some(yaml.into()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    pub id: &'static str,
    pub slug: &'static str,
    pub title: &'static str,
    pub severity: Severity,
    pub confidence: Confidence,
    pub summary: String,
    /// The object this diagnosis concerns (pod, node, NodeClaim...), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object: Option<SerializedRef>,
    /// Every object concerned when the one cause holds for several (pods of one workload
    /// stuck on one taint); `object` is then the first of them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<SerializedRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    /// Every NodePool concerned when the cause holds for several; `node_pool` is then unset.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub node_pools: Vec<String>,
    /// What `node_pool` / `node_pools` are: a `NodePool`, or a v1alpha5 `Provisioner`
    /// (Karpenter before v0.32). Set by `run` from the facts whenever a pool is named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_pool_kind: Option<NodePoolKind>,
    pub evidence: Vec<Evidence>,
    pub remediation: Vec<Remediation>,
    /// Other catalogue IDs this one links to (KW401 -> KW001, KW208 -> KW501...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<&'static str>,
    pub docs: String,
}

/// The API kind of the pool a diagnosis names: `NodePool` (v1, v1beta1) or the v1alpha5
/// `Provisioner` of Karpenter before v0.32.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum NodePoolKind {
    NodePool,
    Provisioner,
}

impl NodePoolKind {
    /// The note label the renderers print the pool under: `nodepool` or `provisioner`,
    /// plural for several.
    pub fn label(self, several: bool) -> &'static str {
        match (self, several) {
            (NodePoolKind::NodePool, false) => "nodepool",
            (NodePoolKind::NodePool, true) => "nodepools",
            (NodePoolKind::Provisioner, false) => "provisioner",
            (NodePoolKind::Provisioner, true) => "provisioners",
        }
    }

    /// The kind of the pools named `names` in this input: a Provisioner when the input holds
    /// them as Provisioner objects, when `object` (the diagnosis's object) is the Provisioner
    /// of that name, or, for pools the input has no object of, when the input is from before
    /// v0.32 (`version::before_v0_32`). A NodePool otherwise.
    pub fn of(facts: &Facts, names: &[String], object: Option<&SerializedRef>) -> NodePoolKind {
        let provisioner = |name: &String| match facts.nodepool(name) {
            Some(pool) => pool.is_provisioner,
            None => {
                object.is_some_and(|o| o.kind == "Provisioner" && &o.name == name)
                    || version::before_v0_32(facts)
            }
        };
        if !names.is_empty() && names.iter().all(provisioner) {
            NodePoolKind::Provisioner
        } else {
            NodePoolKind::NodePool
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SerializedRef {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
}

impl From<&ObjectRef> for SerializedRef {
    fn from(r: &ObjectRef) -> Self {
        SerializedRef {
            kind: r.kind.clone(),
            namespace: r.namespace.clone(),
            name: r.name.clone(),
        }
    }
}

impl Diagnosis {
    /// A diagnosis with the rule's metadata, high confidence, and nothing else yet.
    pub fn new(meta: &'static RuleMeta, summary: impl Into<String>) -> Self {
        Diagnosis {
            id: meta.id,
            slug: meta.slug,
            title: meta.title,
            severity: meta.severity,
            confidence: Confidence::High,
            summary: summary.into(),
            object: None,
            objects: Vec::new(),
            node_pool: None,
            node_pools: Vec::new(),
            node_pool_kind: None,
            evidence: Vec::new(),
            remediation: Vec::new(),
            related: Vec::new(),
            docs: format!("kubectl karpenter-why explain {}", meta.id),
        }
    }

    pub fn with_object(mut self, object: Option<&ObjectRef>) -> Self {
        self.object = object.map(SerializedRef::from);
        self
    }

    pub fn with_node_pool(mut self, node_pool: Option<&str>) -> Self {
        self.node_pool = node_pool.map(str::to_string);
        self
    }

    /// The objects one shared cause concerns, repeats dropped: `object` is the first, and
    /// `objects` lists them all when there are several.
    pub fn with_objects<'a>(mut self, objects: impl IntoIterator<Item = &'a ObjectRef>) -> Self {
        // A set beside the list: one cause can name thousands of pods.
        let mut seen: BTreeSet<(String, Option<String>, String)> = BTreeSet::new();
        let mut all: Vec<SerializedRef> = Vec::new();
        for o in objects.into_iter().map(SerializedRef::from) {
            if seen.insert((o.kind.clone(), o.namespace.clone(), o.name.clone())) {
                all.push(o);
            }
        }
        self.object = all.first().cloned();
        self.objects = if all.len() > 1 { all } else { Vec::new() };
        self
    }

    /// The NodePools one shared cause concerns: one is `node_pool`; several are `node_pools`
    /// (and `node_pool` is unset, no one of them being the NodePool).
    pub fn with_node_pools(mut self, node_pools: &[String]) -> Self {
        match node_pools {
            [] => {}
            [one] => self.node_pool = Some(one.clone()),
            several => {
                self.node_pool = None;
                self.node_pools = several.to_vec();
            }
        }
        self
    }

    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    pub fn with_confidence(mut self, confidence: Confidence) -> Self {
        self.confidence = confidence;
        self
    }

    /// Adds messages as evidence, collapsing repeats (see `collapse_evidence`).
    pub fn with_messages<'a>(mut self, messages: impl IntoIterator<Item = &'a Message>) -> Self {
        let items = messages.into_iter().map(message_evidence);
        self.evidence = collapse_evidence(std::mem::take(&mut self.evidence), items);
        self
    }

    /// `with_messages` for messages about several objects: repeats collapse per object, so
    /// that each pod of a shared cause keeps its own evidence line even when the messages
    /// read the same (an event's message does not name its pod).
    pub fn with_messages_of<'a>(
        mut self,
        messages: impl IntoIterator<Item = (Option<&'a ObjectRef>, &'a Message)>,
    ) -> Self {
        let items = messages.into_iter().map(|(object, m)| {
            let (text, e) = message_evidence(m);
            (
                per_object_key(object.map(ObjectRef::qualified_name), text),
                e,
            )
        });
        self.evidence = collapse_evidence(std::mem::take(&mut self.evidence), items);
        self
    }

    /// `with_messages` for messages about several objects of one kind (NodeClaims, Machines,
    /// nodes), each message's object read by `object_of`: one text about three NodeClaims
    /// stays three evidence lines instead of one line "seen 3 times" hiding two of them.
    /// Repeats about one object, or about none known, still collapse.
    pub fn with_messages_per_object<'a>(
        mut self,
        messages: impl IntoIterator<Item = &'a Message>,
        object_of: &dyn Fn(&Message) -> Option<ObjectRef>,
    ) -> Self {
        let items = messages.into_iter().map(|m| {
            let (text, e) = message_evidence(m);
            let who = object_of(m).map(|o| o.qualified_name());
            (per_object_key(who, text), e)
        });
        self.evidence = collapse_evidence(std::mem::take(&mut self.evidence), items);
        self
    }

    /// `with_evidence` for lines about several objects, each with the name of the object it
    /// is about (or `None`): as `with_messages_per_object`, repeats collapse per object only.
    pub fn with_evidence_per_object(
        mut self,
        evidence: impl IntoIterator<Item = (Option<String>, Evidence)>,
    ) -> Self {
        let items = evidence.into_iter().map(|(who, e)| {
            let text = e.text.clone();
            (per_object_key(who, text), e)
        });
        self.evidence = collapse_evidence(std::mem::take(&mut self.evidence), items);
        self
    }

    pub fn with_evidence(mut self, evidence: impl IntoIterator<Item = Evidence>) -> Self {
        let items = evidence.into_iter().map(|e| (e.text.clone(), e));
        self.evidence = collapse_evidence(std::mem::take(&mut self.evidence), items);
        self
    }

    pub fn with_remediation(mut self, steps: impl IntoIterator<Item = Remediation>) -> Self {
        self.remediation.extend(steps);
        self
    }

    pub fn with_related(mut self, ids: &[&'static str]) -> Self {
        for id in ids {
            if !self.related.contains(id) {
                self.related.push(id);
            }
        }
        self
    }
}

/// A message as evidence, its own time (a log line's, an event's) kept as when it was seen.
/// Evidence that already says when it was first and last seen (an Event object's
/// `firstTimestamp` and `lastTimestamp`, a repeat count's span) keeps that span.
pub fn evidence_of(m: &Message) -> Evidence {
    if m.evidence.first_seen.is_some() && m.evidence.last_seen.is_some() {
        return m.evidence.clone();
    }
    m.evidence.clone().at(m.time.as_deref())
}

/// How long ago something happened, and against what: the caller's "now", the latest
/// timestamp the input holds (core reads no clock), or the age kubectl printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Age {
    pub seconds: i64,
    pub base: AgeBase,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgeBase {
    /// `Options.now`.
    Now,
    /// The latest timestamp of the input (other than the object's own).
    LatestInInput,
    /// An age column kubectl printed when the input was collected.
    Kubectl,
    /// The oldest event about the object: it existed at least that long (the events of its
    /// first minutes may be gone, or it was quiet then).
    EventsAtLeast,
}

impl Age {
    /// `38s ago`, or `58s before the latest time in the input` when no "now" was given.
    pub fn ago(&self) -> String {
        let age = time::format_age(self.seconds);
        match self.base {
            AgeBase::Now | AgeBase::Kubectl => format!("{age} ago"),
            AgeBase::EventsAtLeast => format!("at least {age} ago"),
            AgeBase::LatestInInput => format!("{age} before the latest time in the input"),
        }
    }

    /// `38s`, `12m`: the span alone.
    pub fn span(&self) -> String {
        time::format_age(self.seconds)
    }
}

/// How long ago an object came to be, when the input tells: the oldest age kubectl printed
/// for its events (`is_it` picks them), else `created` (its creationTimestamp) or the first
/// time of its own messages (`own`) against "now": `Options.now`, or the latest timestamp
/// among the other messages (its own times say nothing about when the input was taken).
pub fn age_of(
    facts: &Facts,
    is_it: &dyn Fn(&ObjectRef) -> bool,
    own: &dyn Fn(&Message) -> bool,
    created: Option<&str>,
) -> Option<Age> {
    let from_events = facts
        .events
        .iter()
        .filter(|e| e.object.as_ref().is_some_and(is_it))
        .filter_map(|e| e.age.as_deref().and_then(time::age_seconds))
        .max();
    if let Some(seconds) = from_events {
        return Some(Age {
            seconds,
            base: AgeBase::EventsAtLeast,
        });
    }
    let first_seen = || {
        facts
            .messages
            .iter()
            .filter(|m| own(m))
            // An Event object's repeats: its first time (firstTimestamp), not the last one
            // the message carries.
            .flat_map(|m| [m.evidence.first_seen.as_deref(), m.time.as_deref()])
            .filter_map(|t| t.and_then(time::epoch_seconds))
            .min()
    };
    let start = created.and_then(time::epoch_seconds).or_else(first_seen)?;
    let now = time::now_seconds(facts, own)?;
    let base = if facts.now.as_deref().and_then(time::epoch_seconds).is_some() {
        AgeBase::Now
    } else {
        AgeBase::LatestInInput
    };
    (now >= start).then_some(Age {
        seconds: now - start,
        base,
    })
}

/// Sorts `items` stably by `cmp`, exactly as `sort_by` does. A `sort_by` compiles a copy of
/// the standard sort for every element type and comparator (3-4 KB of wasm each); this sorts
/// positions through one shared copy and then moves the items.
pub fn sort_stable_by<T>(items: &mut Vec<T>, cmp: impl Fn(&T, &T) -> std::cmp::Ordering) {
    let order = stable_order(items.len(), &|a, b| cmp(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    items.extend(order.into_iter().filter_map(|i| slots[i].take()));
}

#[inline(never)]
fn stable_order(len: usize, cmp: &dyn Fn(usize, usize) -> std::cmp::Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..len).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// A message as evidence, keyed by its text. Not inlined: compiled once rather than into each
/// rule's `with_messages`.
#[inline(never)]
fn message_evidence(m: &Message) -> (String, Evidence) {
    let mut e = m.evidence.clone();
    if e.first_seen.is_none() {
        e.first_seen = m.time.clone();
        e.last_seen = m.time.clone();
    }
    (m.text.clone(), e)
}

/// The collapse key of a text about one object: the object's name, then the text. Without an
/// object, the text alone (what `with_messages` keys on).
#[inline(never)]
fn per_object_key(who: Option<String>, text: String) -> String {
    match who {
        Some(who) if !who.is_empty() => format!("{who}\u{0}{text}"),
        _ => text,
    }
}

/// Collapses repeated identical messages (same source, same decoded text: the timestamps of a
/// log line differ, the message does not) into one evidence item with a count and first/last
/// time, keeping first-appearance order.
pub fn collapse_evidence(
    existing: Vec<Evidence>,
    items: impl IntoIterator<Item = (String, Evidence)>,
) -> Vec<Evidence> {
    // The loop is all that is compiled per iterator type (each rule's `with_messages` is
    // one): the work is in `EvidenceCollapser`, compiled once.
    let mut collapser = EvidenceCollapser::new(existing);
    for (key_text, e) in items {
        collapser.add(key_text, e);
    }
    collapser.out
}

struct EvidenceCollapser {
    out: Vec<Evidence>,
    /// (source, text) of each kept item: where it is in `out`.
    index: BTreeMap<(String, String), usize>,
    /// (source, line, text) of every item taken in: one message reached twice from the same
    /// input line (a condition read as a condition and as a status message) is one occurrence,
    /// not a repeat.
    lines: BTreeSet<(String, usize, String)>,
}

impl EvidenceCollapser {
    #[inline(never)]
    fn new(existing: Vec<Evidence>) -> Self {
        let mut index = BTreeMap::new();
        let mut lines = BTreeSet::new();
        for (i, e) in existing.iter().enumerate() {
            index.insert((e.source.clone(), e.text.clone()), i);
            lines.insert((e.source.clone(), e.line, e.text.clone()));
        }
        EvidenceCollapser {
            out: existing,
            index,
            lines,
        }
    }

    #[inline(never)]
    fn add(&mut self, key_text: String, e: Evidence) {
        if !self
            .lines
            .insert((e.source.clone(), e.line, key_text.clone()))
        {
            return;
        }
        let key = (e.source.clone(), key_text);
        match self.index.get(&key) {
            Some(&i) => {
                let kept = &mut self.out[i];
                kept.count += e.count;
                // Input order is not time order (a `get events` list pasted above a describe
                // of the same pod): keep the earliest first and the latest last when both
                // sides say when, else the first one known and the later line's.
                kept.first_seen = match (kept.first_seen.take(), e.first_seen.clone()) {
                    (Some(k), Some(n)) if earlier(&n, &k) == Some(true) => Some(n),
                    (k, n) => k.or(n),
                };
                kept.last_seen = match (kept.last_seen.take(), e.last_seen.clone()) {
                    (Some(k), Some(n)) if earlier(&n, &k) == Some(true) => Some(k),
                    (k, n) => n.or(k),
                };
            }
            None => {
                self.index.insert(key, self.out.len());
                self.out.push(e);
            }
        }
    }
}

/// Whether first/last seen value `a` is before `b`: both timestamps, or both kubectl ages
/// (`40m ago` is before `30s ago`). A timestamp and an age, or a journal time without a year,
/// cannot be compared: `None`.
fn earlier(a: &str, b: &str) -> Option<bool> {
    fn moment(value: &str) -> Option<(bool, i64)> {
        if let Some(t) = time::epoch_seconds(value) {
            return Some((true, t));
        }
        let age = value.trim().strip_suffix(" ago")?;
        time::age_seconds(age).map(|s| (false, -s))
    }
    match (moment(a)?, moment(b)?) {
        ((kind_a, a), (kind_b, b)) if kind_a == kind_b => Some(a < b),
        _ => None,
    }
}

/// A range of the catalogue: IDs `KW<digit>xx` of one subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Group {
    /// `KW2`: every ID of the group starts with it.
    pub prefix: &'static str,
    pub title: &'static str,
}

/// The catalogue's ranges, in order.
pub const GROUPS: &[Group] = &[
    Group {
        prefix: "KW0",
        title: "Workloads and cluster operations",
    },
    Group {
        prefix: "KW1",
        title: "Installation, credentials, IAM, CRDs",
    },
    Group {
        prefix: "KW2",
        title: "Provisioning (the pod stays Pending)",
    },
    Group {
        prefix: "KW3",
        title: "Launch and node readiness",
    },
    Group {
        prefix: "KW4",
        title: "Disruption (the node is not removed or consolidated)",
    },
    Group {
        prefix: "KW5",
        title: "NodeClass, NodePool and controller configuration",
    },
];

/// The group an ID belongs to, by its range.
pub fn group_of(id: &str) -> Option<&'static Group> {
    GROUPS.iter().find(|g| id.starts_with(g.prefix))
}

/// Each group's rules, in the order of `GROUPS`.
const REGISTRY: [&[Rule]; 6] = [
    kw0xx::RULES,
    kw1xx::RULES,
    kw2xx::RULES,
    kw3xx::RULES,
    kw4xx::RULES,
    kw5xx::RULES,
];

/// Every rule, in catalogue order.
pub fn all() -> Vec<&'static Rule> {
    REGISTRY
        .into_iter()
        .flat_map(|group| group.iter())
        .collect()
}

/// The rule with this ID (case-insensitive), if any.
pub fn find(id: &str) -> Option<&'static Rule> {
    all()
        .into_iter()
        .find(|r| r.meta.id.eq_ignore_ascii_case(id))
}

/// Runs `rules` over `facts`, drops superseded diagnoses, and sorts by severity, then
/// confidence, then ID.
pub fn run(facts: &Facts, rules: &[&'static Rule]) -> Vec<Diagnosis> {
    let mut diagnoses: Vec<Diagnosis> = rules.iter().flat_map(|r| (r.check)(facts)).collect();
    for d in &mut diagnoses {
        // A step that only reads what the input already shows asks the user for nothing new.
        d.remediation
            .retain(|r| !r.command.as_deref().is_some_and(|c| facts.ran(c)));
        let names: Vec<String> = d.node_pool.iter().chain(&d.node_pools).cloned().collect();
        if !names.is_empty() {
            d.node_pool_kind = Some(NodePoolKind::of(facts, &names, d.object.as_ref()));
        }
    }
    let superseded: Vec<bool> = diagnoses
        .iter()
        .map(|d| {
            find(d.id).is_some_and(|r| {
                diagnoses.iter().any(|by| {
                    r.meta.superseded_by.contains(&by.id) && may_concern_same(facts, by, d)
                })
            })
        })
        .collect();
    let mut superseded = superseded.into_iter();
    diagnoses.retain(|_| !superseded.next().unwrap_or(false));
    sort_stable_by(&mut diagnoses, |a, b| {
        (a.severity, a.confidence, a.id).cmp(&(b.severity, b.confidence, b.id))
    });
    diagnoses
}

/// Whether `by` may be about what `d` is about, so that it can supersede `d`. Only objects the
/// input proves apart keep both: two different nodes or NodeClaims, or a node that belongs to
/// another NodeClaim than `d`'s (the kubelet evidence of one node says nothing about another
/// NodeClaim that never got a node). Without an object on either side, or with masked names,
/// they may be the same.
fn may_concern_same(facts: &Facts, by: &Diagnosis, d: &Diagnosis) -> bool {
    let (Some(by_object), Some(d_object)) = (&by.object, &d.object) else {
        return true;
    };
    let by_objects = std::iter::once(by_object).chain(&by.objects);
    let d_objects: Vec<&SerializedRef> = std::iter::once(d_object).chain(&d.objects).collect();
    by_objects
        .into_iter()
        .any(|a| d_objects.iter().any(|b| !provably_apart(facts, a, b)))
}

/// Whether `a` and `b` are certainly different machines (node or NodeClaim).
fn provably_apart(facts: &Facts, a: &SerializedRef, b: &SerializedRef) -> bool {
    let machine = |r: &SerializedRef| match r.kind.to_ascii_lowercase().as_str() {
        "node" => Some(true),
        "nodeclaim" | "machine" => Some(false),
        _ => None,
    };
    let (Some(a_is_node), Some(b_is_node)) = (machine(a), machine(b)) else {
        return false;
    };
    if text::is_mask(&a.name) || text::is_mask(&b.name) {
        return false;
    }
    match (a_is_node, b_is_node) {
        (true, true) | (false, false) => a.name != b.name,
        (true, false) => node_apart_from_claim(facts, &a.name, &b.name),
        (false, true) => node_apart_from_claim(facts, &b.name, &a.name),
    }
}

/// Whether the input shows that `node` is not NodeClaim `claim`'s node: the NodeClaim names
/// another node, another NodeClaim names this one, or the two run different instances.
fn node_apart_from_claim(facts: &Facts, node: &str, claim: &str) -> bool {
    let instance = |provider_id: &Option<String>| {
        provider_id
            .as_deref()
            .and_then(|p| p.rsplit('/').next())
            .filter(|id| id.starts_with("i-"))
            .map(str::to_string)
    };
    let claim_fact = facts.nodeclaims.iter().find(|c| c.meta.name == claim);
    if let Some(named) = claim_fact.and_then(|c| c.node_name.as_deref()) {
        if !named.is_empty() && named != node {
            return true;
        }
    }
    let owned_by_other = facts
        .nodeclaims
        .iter()
        .any(|c| c.meta.name != claim && c.node_name.as_deref() == Some(node));
    if owned_by_other {
        return true;
    }
    let node_instance = facts
        .nodes
        .iter()
        .find(|n| n.meta.name == node)
        .and_then(|n| instance(&n.provider_id));
    let claim_instance = claim_fact.and_then(|c| instance(&c.provider_id));
    matches!((node_instance, claim_instance), (Some(n), Some(c)) if n != c)
}

/// Registry meta-tests over every group: the catalogue's conventions, checked on each rule's
/// metadata (fixtures and the generated docs are checked in `tests/tests/registry.rs`).
#[cfg(test)]
mod registry_tests {
    use std::collections::BTreeSet;

    use super::*;

    const SECTIONS: [&str; 3] = ["## What it means", "## Why it happens", "## How to fix"];

    /// First words that name a fix rather than the symptom (`use-csi-driver` says what to
    /// do; `in-tree-ebs-plugin` says what is wrong).
    const FIX_WORDS: &[&str] = &[
        "use",
        "avoid",
        "add",
        "set",
        "enable",
        "disable",
        "remove",
        "increase",
        "raise",
        "lower",
        "configure",
        "install",
        "fix",
        "upgrade",
        "create",
        "delete",
        "change",
        "switch",
        "prefer",
        "allow",
        "migrate",
        "mirror",
        "restart",
        "update",
        "tag",
        "grant",
    ];

    fn by_group() -> Vec<(&'static Group, &'static [Rule])> {
        assert_eq!(GROUPS.len(), REGISTRY.len());
        GROUPS.iter().zip(REGISTRY).collect()
    }

    fn is_id(s: &str) -> bool {
        s.len() == 5 && s.starts_with("KW") && s[2..].bytes().all(|b| b.is_ascii_digit())
    }

    /// What is wrong with one rule's metadata, as readable lines.
    fn problems(m: &RuleMeta, group: &Group) -> Vec<String> {
        let mut p = Vec::new();
        if !is_id(m.id) {
            p.push(format!("{}: ID is not KW + three digits", m.id));
        }
        if !m.id.starts_with(group.prefix) {
            p.push(format!(
                "{}: registered in {}xx ({}) but outside its range",
                m.id, group.prefix, group.title
            ));
        }
        let kebab = !m.slug.is_empty()
            && m.slug
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !m.slug.starts_with('-')
            && !m.slug.ends_with('-')
            && !m.slug.contains("--");
        if !kebab {
            p.push(format!(
                "{}: slug {:?} is not lower-case kebab",
                m.id, m.slug
            ));
        }
        let first = m.slug.split('-').next().unwrap_or("");
        if FIX_WORDS.contains(&first) {
            p.push(format!(
                "{}: slug {:?} names a fix; name the symptom",
                m.id, m.slug
            ));
        }
        if m.title.is_empty()
            || !m.title.starts_with(|c: char| c.is_uppercase())
            || m.title.ends_with('.')
        {
            p.push(format!(
                "{}: title {:?} must be a capitalised phrase without a final period",
                m.id, m.title
            ));
        }
        let headings: Vec<&str> = m.docs.lines().filter(|l| l.starts_with('#')).collect();
        if headings != SECTIONS {
            p.push(format!(
                "{}: docs headings {headings:?}, expected exactly {SECTIONS:?}",
                m.id
            ));
        } else {
            for (i, h) in SECTIONS.iter().enumerate() {
                let start = m.docs.find(h).unwrap() + h.len();
                let end = SECTIONS
                    .get(i + 1)
                    .and_then(|next| m.docs.find(next))
                    .unwrap_or(m.docs.len());
                if m.docs[start..end].trim().is_empty() {
                    p.push(format!("{}: docs section {h:?} is empty", m.id));
                }
            }
        }
        let mut seen = BTreeSet::new();
        for s in m.signals {
            if s.trim().is_empty() {
                p.push(format!("{}: empty signal", m.id));
            }
            if *s != s.to_lowercase() {
                p.push(format!(
                    "{}: signal {s:?} is not lower-case (the log prefilter matches lower-cased lines)",
                    m.id
                ));
            }
            if !seen.insert(*s) {
                p.push(format!("{}: signal {s:?} listed twice", m.id));
            }
        }
        for s in m.superseded_by {
            if !is_id(s) || *s == m.id {
                p.push(format!(
                    "{}: superseded_by {s:?} is not another rule ID",
                    m.id
                ));
            }
        }
        p
    }

    #[test]
    fn every_rule_follows_the_catalogue_conventions() {
        let mut all_problems = Vec::new();
        let mut ids = BTreeSet::new();
        for (group, rules) in by_group() {
            for rule in rules {
                all_problems.extend(problems(&rule.meta, group));
                if !ids.insert(rule.meta.id) {
                    all_problems.push(format!("{}: registered twice", rule.meta.id));
                }
            }
        }
        assert!(all_problems.is_empty(), "\n{}", all_problems.join("\n"));
        assert_eq!(ids.len(), all().len());
        for id in &ids {
            assert_eq!(find(&id.to_lowercase()).map(|r| r.meta.id), Some(*id));
        }
    }

    #[test]
    fn the_checks_catch_bad_metadata() {
        let good = RuleMeta {
            id: "KW299",
            slug: "thing-broken",
            title: "A thing is broken",
            severity: Severity::Error,
            docs: "## What it means\na\n## Why it happens\nb\n## How to fix\nc\n",
            signals: &["thing broken"],
            superseded_by: &["KW298"],
        };
        assert_eq!(problems(&good, &GROUPS[2]), Vec::<String>::new());
        let cases: [(RuleMeta, &str); 8] = [
            (
                RuleMeta {
                    id: "KW399",
                    ..good
                },
                "outside its range",
            ),
            (
                RuleMeta {
                    id: "KW2x9",
                    ..good
                },
                "not KW + three digits",
            ),
            (
                RuleMeta {
                    slug: "use-csi-driver",
                    ..good
                },
                "names a fix",
            ),
            (
                RuleMeta {
                    slug: "Thing_Broken",
                    ..good
                },
                "kebab",
            ),
            (
                RuleMeta {
                    docs: "## What it means\na\n## How to fix\nc\n",
                    ..good
                },
                "docs headings",
            ),
            (
                RuleMeta {
                    docs: "## What it means\n\n## Why it happens\nb\n## How to fix\nc\n",
                    ..good
                },
                "is empty",
            ),
            (
                RuleMeta {
                    signals: &["Thing"],
                    ..good
                },
                "not lower-case",
            ),
            (
                RuleMeta {
                    superseded_by: &["KW299"],
                    ..good
                },
                "superseded_by",
            ),
        ];
        for (meta, expected) in cases {
            let found = problems(&meta, &GROUPS[2]);
            assert!(
                found.iter().any(|p| p.contains(expected)),
                "{expected:?} not in {found:?}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An Event object says when it was first and last seen: `evidence_of` keeps that span
    /// instead of collapsing it to the message's one time; a log line gets its time.
    #[test]
    fn evidence_of_keeps_an_events_span() {
        let mut e = Evidence::new("events.json", 12, "NodeClaim default-x event: ...");
        (e.first_seen, e.last_seen, e.count) = (
            Some("2025-03-10T02:00:00Z".into()),
            Some("2025-03-10T02:13:00Z".into()),
            7,
        );
        let event = Message {
            time: Some("2025-03-10T02:13:00Z".into()),
            evidence: e,
            ..Message::default()
        };
        let kept = evidence_of(&event);
        assert_eq!(kept.first_seen.as_deref(), Some("2025-03-10T02:00:00Z"));
        assert_eq!(kept.last_seen.as_deref(), Some("2025-03-10T02:13:00Z"));
        let line = Message {
            time: Some("2025-03-10T02:11:31Z".into()),
            evidence: Evidence::new("karpenter.log", 3, "{...}"),
            ..Message::default()
        };
        let timed = evidence_of(&line);
        assert_eq!(timed.first_seen.as_deref(), Some("2025-03-10T02:11:31Z"));
        assert_eq!(timed.last_seen.as_deref(), Some("2025-03-10T02:11:31Z"));
    }

    #[test]
    fn collapse_keeps_the_earliest_first_and_latest_last_whatever_the_input_order() {
        let seen = |line: usize, first: &str, last: &str, count: usize| {
            let mut e = Evidence::new("d.txt", line, format!("line {line}"));
            (e.first_seen, e.last_seen, e.count) = (Some(first.into()), Some(last.into()), count);
            ("FailedScheduling".to_string(), e)
        };
        // A `get events` row (2m ago) above the describe row of the same event (x14 over 40m).
        let out = collapse_evidence(
            Vec::new(),
            [
                seen(3, "2m ago", "2m ago", 1),
                seen(9, "40m ago", "30s ago", 14),
            ],
        );
        let e = &out[0];
        assert_eq!((e.count, e.line), (15, 3));
        assert_eq!(e.first_seen.as_deref(), Some("40m ago"));
        assert_eq!(e.last_seen.as_deref(), Some("30s ago"));
        // Log times out of order; an age and a timestamp are not compared (input order wins).
        let out = collapse_evidence(
            Vec::new(),
            [
                seen(1, "2025-06-03T10:00:00Z", "2025-06-03T10:05:00Z", 1),
                seen(2, "2025-06-03T09:00:00Z", "2025-06-03T09:01:00Z", 1),
                seen(3, "5m ago", "5m ago", 1),
            ],
        );
        assert_eq!(out[0].first_seen.as_deref(), Some("2025-06-03T09:00:00Z"));
        assert_eq!(out[0].last_seen.as_deref(), Some("5m ago"));
    }

    #[test]
    fn collapse_counts_repeats_not_the_same_line_twice() {
        let at = |line: usize| Evidence::new("d.txt", line, format!("line {line}"));
        let text = "SecurityGroupSelector did not match any SecurityGroups".to_string();
        let out = collapse_evidence(
            Vec::new(),
            [
                (text.clone(), at(20)),
                // The same line through a second message: not a repeat.
                (text.clone(), at(20)),
                (text.clone(), at(31)),
                ("another message".to_string(), at(20)),
            ],
        );
        let counts: Vec<(usize, usize)> = out.iter().map(|e| (e.line, e.count)).collect();
        assert_eq!(counts, [(20, 2), (20, 1)]);
    }
}

#[cfg(test)]
mod per_object_tests {
    use super::*;
    use crate::facts::Message;

    fn message(line: usize, object: Option<&str>) -> Message {
        Message {
            text: "Nodeclaim does not have an associated node".into(),
            evidence: Evidence::new("e.txt", line, format!("row {line}")),
            object: object.map(|n| ObjectRef::new("NodeClaim", None, n)),
            ..Message::default()
        }
    }

    #[test]
    fn one_line_per_object_repeats_collapse_per_object() {
        let messages = [
            message(2, Some("a")),
            message(3, Some("b")),
            message(4, Some("a")),
            message(5, None),
            message(6, None),
        ];
        let meta = &crate::rules::find("KW411").unwrap().meta;
        let d = Diagnosis::new(meta, "s")
            .with_messages_per_object(messages.iter(), &|m: &Message| m.object.clone());
        let rows: Vec<(usize, usize)> = d.evidence.iter().map(|e| (e.line, e.count)).collect();
        assert_eq!(rows, [(2, 2), (3, 1), (5, 2)]);
        // `with_messages` still collapses them all into one line.
        let d = Diagnosis::new(meta, "s").with_messages(messages.iter());
        assert_eq!(d.evidence.len(), 1);
        assert_eq!(d.evidence[0].count, 5);
        let d = Diagnosis::new(meta, "s").with_evidence_per_object([
            (
                Some("a".to_string()),
                Evidence::new("d.txt", 7, "Message: x"),
            ),
            (
                Some("b".to_string()),
                Evidence::new("d.txt", 9, "Message: x"),
            ),
            (
                Some("b".to_string()),
                Evidence::new("d.txt", 11, "Message: x"),
            ),
        ]);
        let rows: Vec<(usize, usize)> = d.evidence.iter().map(|e| (e.line, e.count)).collect();
        assert_eq!(rows, [(7, 1), (9, 2)]);
    }
}

#[cfg(test)]
mod node_pool_kind_tests {
    use super::*;
    use crate::testing::check_only;

    const PROVISIONER: &str = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n  limits:\n    resources:\n      cpu: 10\n";
    const NODEPOOL: &str = "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: default\nspec:\n  limits:\n    cpu: 10\n";
    const LIMITS: &str = "2025-06-01T10:00:01.000Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner \"default\", all available instance types exceed limits for provisioner: \"default\"";

    fn kind_and_label(objects: &str) -> (serde_json::Value, String) {
        let report = check_only("KW205", &format!("{objects}---\n{LIMITS}\n"));
        let d = &report.diagnoses[0];
        let json = serde_json::to_value(d).unwrap();
        let notes = crate::render::notes(d);
        let label = notes
            .iter()
            .find(|(_, v)| v == "default")
            .map(|(k, _)| k.to_string())
            .unwrap_or_default();
        (json["nodePoolKind"].clone(), label)
    }

    #[test]
    fn the_pool_is_labelled_by_its_api_kind() {
        let (kind, label) = kind_and_label(PROVISIONER);
        assert_eq!(kind, "Provisioner");
        assert_eq!(label, "provisioner");
        let (kind, label) = kind_and_label(NODEPOOL);
        assert_eq!(kind, "NodePool");
        assert_eq!(label, "nodepool");
    }

    #[test]
    fn no_pool_no_kind() {
        let meta = &find("KW205").unwrap().meta;
        let json = serde_json::to_value(Diagnosis::new(meta, "s")).unwrap();
        assert!(json.get("nodePoolKind").is_none());
        let facts = Facts::default();
        let several = ["a".to_string(), "b".to_string()];
        assert_eq!(
            NodePoolKind::of(&facts, &several, None),
            NodePoolKind::NodePool
        );
        let object = SerializedRef {
            kind: "Provisioner".into(),
            namespace: None,
            name: "a".into(),
        };
        assert_eq!(
            NodePoolKind::of(&facts, &several[..1], Some(&object)),
            NodePoolKind::Provisioner
        );
        assert_eq!(NodePoolKind::Provisioner.label(true), "provisioners");
    }
}

#[cfg(test)]
mod age_tests {
    use super::*;

    fn message(time: &str, object: &str) -> Message {
        Message {
            text: "x".into(),
            time: Some(time.into()),
            object: Some(ObjectRef::new("NodeClaim", None, object)),
            evidence: Evidence::new("d.txt", 1, "x"),
            ..Message::default()
        }
    }

    #[test]
    fn ages_against_now_or_the_latest_other_time() {
        let mut facts = Facts::default();
        facts.messages.push(message("2025-06-03T09:31:05Z", "a"));
        facts.messages.push(message("2025-06-03T09:33:05Z", "b"));
        let is_a = |o: &ObjectRef| o.name == "a";
        let own = |m: &Message| m.object.as_ref().is_some_and(is_a);
        let age = age_of(&facts, &is_a, &own, Some("2025-06-03T09:31:02Z")).unwrap();
        assert_eq!(age.seconds, 123);
        assert_eq!(age.ago(), "2m3s before the latest time in the input");
        // Its own later times are no "now"; without a creation time its first time starts it.
        let age = age_of(&facts, &is_a, &own, None).unwrap();
        assert_eq!(age.seconds, 120);
        facts.now = Some("2025-06-03T09:32:05Z".into());
        let age = age_of(&facts, &is_a, &own, None).unwrap();
        assert_eq!((age.seconds, age.ago()), (60, "60s ago".to_string()));
        // Nothing else dated, no "now": no age.
        facts.now = None;
        facts.messages.pop();
        assert_eq!(age_of(&facts, &is_a, &own, None), None);
        let e = evidence_of(&facts.messages[0]);
        assert_eq!(e.first_seen.as_deref(), Some("2025-06-03T09:31:05Z"));
    }

    /// An Event object repeated for half an hour (`firstTimestamp` .. `lastTimestamp`): the
    /// object existed since its first time, not its last.
    #[test]
    fn a_repeated_event_ages_from_its_first_time() {
        let mut facts = Facts::default();
        let mut repeated = message("2025-06-03T10:01:05Z", "a");
        repeated.evidence.first_seen = Some("2025-06-03T09:31:05Z".into());
        facts.messages.push(repeated);
        facts.messages.push(message("2025-06-03T10:11:05Z", "b"));
        let is_a = |o: &ObjectRef| o.name == "a";
        let own = |m: &Message| m.object.as_ref().is_some_and(is_a);
        assert_eq!(age_of(&facts, &is_a, &own, None).unwrap().seconds, 40 * 60);
    }
}
