//! The rule catalogue. One file per catalogue ID, grouped by range; each file holds the rule's
//! metadata and user documentation (What it means / Why it happens / How to fix) above its
//! check, and its tests below. `all()` is the registry every consumer reads: `explain`,
//! `rules`, docs/rules.md, the web page's rule browser and the JSON `docs` field.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::document::Evidence;
use crate::facts::{Facts, Message, ObjectRef};

mod kw0xx;
mod kw1xx;
mod kw2xx;
mod kw3xx;
mod kw4xx;
mod kw5xx;

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
    /// here every text it matches in logs.
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
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    pub evidence: Vec<Evidence>,
    pub remediation: Vec<Remediation>,
    /// Other catalogue IDs this one links to (KW401 -> KW001, KW208 -> KW501...).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<&'static str>,
    pub docs: String,
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
            node_pool: None,
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
        let items = messages.into_iter().map(|m| {
            let mut e = m.evidence.clone();
            if e.first_seen.is_none() {
                e.first_seen = m.time.clone();
                e.last_seen = m.time.clone();
            }
            (m.text.clone(), e)
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

/// Collapses repeated identical messages (same source, same decoded text: the timestamps of a
/// log line differ, the message does not) into one evidence item with a count and first/last
/// time, keeping first-appearance order.
pub fn collapse_evidence(
    existing: Vec<Evidence>,
    items: impl IntoIterator<Item = (String, Evidence)>,
) -> Vec<Evidence> {
    let mut out = existing;
    let mut index: BTreeMap<(String, String), usize> = BTreeMap::new();
    for (i, e) in out.iter().enumerate() {
        index.insert((e.source.clone(), e.text.clone()), i);
    }
    for (key_text, e) in items {
        let key = (e.source.clone(), key_text);
        match index.get(&key) {
            Some(&i) => {
                let kept = &mut out[i];
                kept.count += e.count;
                if kept.first_seen.is_none() {
                    kept.first_seen = e.first_seen.clone();
                }
                if e.last_seen.is_some() {
                    kept.last_seen = e.last_seen.clone();
                }
            }
            None => {
                index.insert(key, out.len());
                out.push(e);
            }
        }
    }
    out
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

/// Every rule, in catalogue order.
pub fn all() -> Vec<&'static Rule> {
    [
        kw0xx::RULES,
        kw1xx::RULES,
        kw2xx::RULES,
        kw3xx::RULES,
        kw4xx::RULES,
        kw5xx::RULES,
    ]
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
    let fired: Vec<&'static str> = diagnoses.iter().map(|d| d.id).collect();
    diagnoses.retain(|d| {
        find(d.id).is_none_or(|r| !r.meta.superseded_by.iter().any(|s| fired.contains(s)))
    });
    diagnoses
        .sort_by(|a, b| (a.severity, a.confidence, a.id).cmp(&(b.severity, b.confidence, b.id)));
    diagnoses
}
