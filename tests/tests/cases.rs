//! Extra corpus-style cases (`tests/cases/<case>/input.<ext>` + `expected.json`): whole
//! realistic pastes that mix formats and noise, written for the failure modes and wordings the
//! visible corpus does not show. Each is checked twice: pasted whole (`analyze`) and read the
//! way `analyze FILE` streams a file (through the log scanner, which keeps only the log lines
//! holding a rule's signal), so a signal missing from a rule's `signals` fails here.

use std::collections::BTreeSet;
use std::path::Path;

use karpenter_why_core::rules::{self, Severity};
use karpenter_why_tests::cases::{load_cases, Case};

fn cases() -> Vec<Case> {
    load_cases(&Path::new(env!("CARGO_MANIFEST_DIR")).join("cases"))
}

fn registered() -> BTreeSet<&'static str> {
    rules::all().iter().map(|r| r.meta.id).collect()
}

#[test]
fn every_case_passes_pasted_whole() {
    let checked = registered();
    let cases = cases();
    assert!(!cases.is_empty());
    let mut failures = Vec::new();
    let mut expectations = 0;
    for case in &cases {
        assert!(
            !case.must.is_empty() || !case.must_not.is_empty(),
            "{}: expected.json lists nothing",
            case.name
        );
        expectations += case.expectation_count(&checked);
        failures.extend(case.failures(&case.analyze(), &checked));
    }
    println!(
        "cases: {} cases, {expectations} expectations checked, {} failed",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_case_passes_through_the_log_scanner() {
    let checked = registered();
    let mut failures = Vec::new();
    for case in cases() {
        failures.extend(
            case.failures(&case.analyze_scanned(), &checked)
                .into_iter()
                .map(|f| format!("scanned: {f}")),
        );
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// A case named `healthy-*` shows Karpenter working: nothing in it may be an error.
#[test]
fn healthy_cases_raise_no_error() {
    for case in cases().iter().filter(|c| c.name.starts_with("healthy-")) {
        for report in [case.analyze(), case.analyze_scanned()] {
            let errors: Vec<&str> = report
                .diagnoses
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .map(|d| d.id)
                .collect();
            assert!(errors.is_empty(), "{}: errors {errors:?}", case.name);
        }
    }
}

/// A realistic paste is read whole: no line of it may be an input error.
#[test]
fn every_case_reads_without_input_errors() {
    for case in cases() {
        let report = case.analyze();
        assert!(
            report.input_errors.is_empty(),
            "{}: {:?}",
            case.name,
            report.input_errors
        );
    }
}
