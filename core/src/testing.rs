//! Test helpers shared by rule tests.

use crate::{analyze_text, Options, Report};

/// Analyses `text` (one document labelled `fixture`) with only rule `id` enabled.
pub fn check_only(id: &str, text: &str) -> Report {
    analyze_text(
        "fixture",
        text,
        &Options {
            now: None,
            only: Some(vec![id.to_string()]),
        },
    )
}

/// The IDs a report carries, in order.
pub fn ids(report: &Report) -> Vec<&'static str> {
    report.diagnoses.iter().map(|d| d.id).collect()
}
