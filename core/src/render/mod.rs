//! Renderers: a report (and the rule catalogue) as terminal text, markdown or JSON. They live
//! in core so the CLI and the web page print the same words; the words shared by several
//! formats are defined here once.

use crate::document::Evidence;
use crate::report::Report;
use crate::rules::{Diagnosis, Severity};

pub mod json;
pub mod markdown;
pub mod text;

pub use text::TextOptions;

pub const CHECKLIST_TITLE: &str = "Checklist";
pub const MISSING_TITLE: &str = "Missing facts: collect these and run again";
pub const INPUT_ERRORS_TITLE: &str = "Input errors (the rest of the input was analysed)";
pub const NO_DIAGNOSIS: &str =
    "No diagnosis: nothing in the input matches a known Karpenter problem.";
pub const NO_SUBJECT: &str = "the input (it names no pod, node, NodeClaim or NodePool)";
/// [`NO_SUBJECT`] for an input from before v0.32, whose objects are Machines and Provisioners.
pub const NO_SUBJECT_V1ALPHA5: &str = "the input (it names no pod, node, Machine or Provisioner)";
/// [`NO_SUBJECT`] for an input from before v0.28, which had no Machine: the Provisioner
/// launched nodes itself.
pub const NO_SUBJECT_PRE_MACHINE: &str = "the input (it names no pod, node or Provisioner)";
pub const RULES_TITLE: &str = "karpenter-why rules";

/// Evidence items quoted per diagnosis before the rest is only counted (JSON has them all).
pub const MAX_EVIDENCE: usize = 8;

/// `Pod shop/web-0`, or what the report is about when nothing is named.
pub fn subject_line(report: &Report) -> String {
    report
        .subject
        .as_ref()
        .map(|s| s.describe())
        .unwrap_or_else(|| {
            // The checklist already knows the input's API: its step 2 is about Machines
            // before v0.32, and about the Provisioners' nodes before v0.28.
            match report.checklist.get(1).map(|s| s.name) {
                Some(crate::report::PRE_MACHINE_STEP) => NO_SUBJECT_PRE_MACHINE,
                Some("Machines") => NO_SUBJECT_V1ALPHA5,
                _ => NO_SUBJECT,
            }
            .to_string()
        })
}

/// `1 error, 2 warnings, 0 info`.
pub fn counts_line(report: &Report) -> String {
    report
        .counts()
        .iter()
        .map(|(severity, n)| match (severity, n) {
            (Severity::Error, 1) => "1 error".to_string(),
            (Severity::Error, n) => format!("{n} errors"),
            (Severity::Warning, 1) => "1 warning".to_string(),
            (Severity::Warning, n) => format!("{n} warnings"),
            (Severity::Info, n) => format!("{n} info"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `seen 12 times, first 10:01:02, last 10:31:40` for collapsed repeats; `None` for a line
/// seen once.
pub fn repeat_note(e: &Evidence) -> Option<String> {
    // A describe row quoting its own `(x31 over 9m)` says it already.
    if e.count <= 1 || e.text.contains(&format!("(x{} over ", e.count)) {
        return None;
    }
    let mut s = format!("seen {} times", e.count);
    if let Some(first) = &e.first_seen {
        s.push_str(&format!(", first {}", seen(first)));
    }
    if let Some(last) = &e.last_seen {
        s.push_str(&format!(", last {}", seen(last)));
    }
    Some(s)
}

/// A first/last seen value: a time as written, a bare kubectl age (`31s`, `5m2s`) as an age
/// (`31s ago`), never as if it were a time of day.
fn seen(value: &str) -> String {
    let bare_age = crate::rules::time::age_seconds(value).is_some() && !value.contains(" over ");
    if bare_age {
        format!("{value} ago")
    } else {
        value.to_string()
    }
}

/// `source:line`.
pub fn location(e: &Evidence) -> String {
    format!("{}:{}", e.source, e.line)
}

/// The notes under a diagnosis: NodePool, confidence when not high, related IDs.
pub fn notes(d: &Diagnosis) -> Vec<(&'static str, String)> {
    let mut notes = Vec::new();
    let name = |o: &crate::rules::SerializedRef| match &o.namespace {
        Some(ns) => format!("{ns}/{}", o.name),
        None => o.name.clone(),
    };
    if let [first, ..] = d.objects.as_slice() {
        let names: Vec<String> = d.objects.iter().map(name).collect();
        notes.push(("objects", format!("{}s {}", first.kind, names.join(", "))));
    } else if let Some(o) = &d.object {
        notes.push(("object", format!("{} {}", o.kind, name(o))));
    }
    let kind = d
        .node_pool_kind
        .unwrap_or(crate::rules::NodePoolKind::NodePool);
    if let Some(np) = &d.node_pool {
        notes.push((kind.label(false), np.clone()));
    } else if !d.node_pools.is_empty() {
        notes.push((kind.label(true), d.node_pools.join(", ")));
    }
    if d.confidence != crate::rules::Confidence::High {
        notes.push((
            "confidence",
            format!("{:?}", d.confidence).to_ascii_lowercase(),
        ));
    }
    if !d.related.is_empty() {
        notes.push(("related", d.related.join(", ")));
    }
    notes
}

/// The diagnoses to render one by one, with the pods of their group when the report groups
/// several pods by cause: (the representative diagnosis, every diagnosis of the group).
pub fn sections(report: &Report) -> Vec<Section<'_>> {
    if report.groups.is_empty() {
        return report
            .diagnoses
            .iter()
            .map(|d| Section {
                diagnosis: d,
                members: vec![d],
                pods: Vec::new(),
            })
            .collect();
    }
    report
        .groups
        .iter()
        .map(|g| Section {
            diagnosis: &report.diagnoses[g.diagnoses[0]],
            members: g.diagnoses.iter().map(|&i| &report.diagnoses[i]).collect(),
            pods: g
                .pods
                .iter()
                .map(|p| match (&p.namespace, report.subject.as_ref()) {
                    (Some(ns), Some(s)) if s.namespace.as_deref() == Some(ns.as_str()) => {
                        p.name.clone()
                    }
                    (Some(ns), _) => format!("{ns}/{}", p.name),
                    (None, _) => p.name.clone(),
                })
                .collect(),
        })
        .collect()
}

pub struct Section<'a> {
    pub diagnosis: &'a Diagnosis,
    pub members: Vec<&'a Diagnosis>,
    /// Pod names of a group (empty when not grouping).
    pub pods: Vec<String>,
}

impl Section<'_> {
    /// Evidence of every member, repeats across members collapsed. Lines one diagnosis keeps
    /// apart (one per NodeClaim, the texts reading the same) stay apart: the k-th line of a
    /// text in one member only collapses with the k-th line of that text in another.
    pub fn evidence(&self) -> Vec<Evidence> {
        let items = self.members.iter().flat_map(|d| {
            // (text, source, line) of each distinct line of this member, in order: the same
            // line listed twice (reached through two messages) is still one line.
            let mut seen: Vec<(&str, &str, usize)> = Vec::new();
            d.evidence.iter().map(move |e| {
                let this = (e.text.as_str(), e.source.as_str(), e.line);
                let earlier = |s: &&(&str, &str, usize)| s.0 == this.0;
                let k = match seen.iter().filter(earlier).position(|s| *s == this) {
                    Some(k) => k,
                    None => {
                        seen.push(this);
                        seen.iter().filter(earlier).count() - 1
                    }
                };
                (format!("{k}\u{0}{}", e.text), e.clone())
            })
        });
        crate::rules::collapse_evidence(Vec::new(), items)
    }

    /// The notes to print; a group lists its pods instead of one object.
    pub fn notes(&self) -> Vec<(&'static str, String)> {
        let mut all = notes(self.diagnosis);
        if self.pods.len() > 1 {
            all.retain(|(key, _)| *key != "object" && *key != "objects");
        }
        all
    }

    /// `(fix shown for web-0; the other pods have the same cause)` for groups of several
    /// diagnoses (one diagnosis naming several pods speaks for all of them).
    pub fn shown_for(&self) -> Option<String> {
        if self.members.len() < 2 {
            return None;
        }
        match self.pods.as_slice() {
            [first, _, ..] => Some(format!(
                "Summary and fix shown for {first}; the other pods have the same cause."
            )),
            _ => None,
        }
    }
}

/// Replaces control characters (terminal escape sequences in a paste) so that quoting user
/// input can never drive the terminal; tabs stay.
pub fn printable(s: &str) -> String {
    if !s.chars().any(|c| c.is_control() && c != '\t') {
        return s.to_string();
    }
    s.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{fffd}'
            } else {
                c
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_note_only_for_repeats() {
        let mut e = Evidence::new("log", 3, "x");
        assert_eq!(repeat_note(&e), None);
        e.count = 4;
        e.first_seen = Some("10:00".into());
        e.last_seen = Some("10:30".into());
        assert_eq!(
            repeat_note(&e).as_deref(),
            Some("seen 4 times, first 10:00, last 10:30")
        );
        // The quoted describe row already says how often and since when.
        e.text = "Warning  FailedScheduling  30s (x4 over 40m)  karpenter  ...".into();
        assert_eq!(repeat_note(&e), None);
    }

    #[test]
    fn escapes_are_neutralised() {
        assert_eq!(printable("a\u{1b}[31mb\tc"), "a\u{fffd}[31mb\tc");
        assert_eq!(printable("plain"), "plain");
    }
}
