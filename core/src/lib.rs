//! karpenter-why core: the pure diagnosis engine. Documents in, report out: no I/O, no clock,
//! no threads, no environment, so it builds for `wasm32-unknown-unknown` and the CLI and the
//! web page print the same words.

pub use karpenter_why_scan::document;
pub mod facts;
pub mod ingest;
pub mod redact;
pub mod render;
pub mod report;
pub mod rules;

#[cfg(test)]
mod testing;

pub use document::{Document, Evidence, InputError};
pub use report::Report;
pub use rules::{Diagnosis, Rule, Severity};

/// What the caller may set; core never reads a clock, so "now" comes from outside.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// RFC 3339 time to compute ages against.
    pub now: Option<String>,
    /// Run only these rule IDs (tests and `--only`); `None` runs every rule.
    pub only: Option<Vec<String>>,
}

/// Ingests the documents, runs the rules and builds the report.
pub fn analyze(documents: &[Document], options: &Options) -> Report {
    analyze_about(documents, options, None)
}

/// `analyze` around a known subject (live mode knows which pod, node or NodeClaim it was asked
/// about); `None` infers it from the facts, as `analyze` does.
pub fn analyze_about(
    documents: &[Document],
    options: &Options,
    subject: Option<report::Subject>,
) -> Report {
    let mut facts = ingest::ingest(documents);
    facts.now = options.now.clone();
    let selected: Vec<&'static Rule> = rules::all()
        .into_iter()
        .filter(|r| {
            options
                .only
                .as_ref()
                .is_none_or(|only| only.iter().any(|id| id.eq_ignore_ascii_case(r.meta.id)))
        })
        .collect();
    let diagnoses = rules::run(&facts, &selected);
    Report::build_about(&facts, diagnoses, subject)
}

/// Convenience for a single pasted text.
pub fn analyze_text(label: &str, text: &str, options: &Options) -> Report {
    analyze(&[Document::new(label, text)], options)
}
