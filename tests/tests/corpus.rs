//! Runs the engine on every corpus case and checks `must` / `must_not` for every ID the
//! registry implements (IDs not yet implemented are skipped, derived from the registry).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use karpenter_why_core::rules;
use karpenter_why_tests::cases::{load_cases, Case};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

fn corpus() -> Vec<Case> {
    load_cases(&corpus_dir())
}

#[test]
fn every_corpus_case_passes_for_implemented_ids() {
    let implemented: BTreeSet<&str> = rules::all().iter().map(|r| r.meta.id).collect();
    let cases = corpus();
    assert!(cases.len() >= 100, "corpus has {} cases", cases.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in &cases {
        checked += case.expectation_count(&implemented);
        failures.extend(case.failures(&case.analyze(), &implemented));
    }
    println!(
        "corpus: {} cases, {checked} expectations checked, {} failed",
        cases.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "corpus failures:\n{}",
        failures.join("\n")
    );
}

#[test]
fn healthy_cases_raise_no_error() {
    for case in corpus().iter().filter(|c| c.name.starts_with("healthy-")) {
        let report = case.analyze();
        let errors: Vec<_> = report
            .diagnoses
            .iter()
            .filter(|d| d.severity == rules::Severity::Error)
            .map(|d| d.id)
            .collect();
        assert!(
            errors.is_empty(),
            "{}: error diagnoses {errors:?}",
            case.name
        );
    }
}

/// `../shared/corpus` is the upstream copy; a case there that `tests/corpus` lacks means the
/// copy is stale.
#[test]
fn corpus_copy_is_in_sync_with_shared() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
    let Ok(entries) = fs::read_dir(&shared) else {
        println!("no ../shared/corpus beside the checkout; nothing to compare");
        return;
    };
    let ours = corpus_dir();
    let missing: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !ours.join(name).is_dir())
        .collect();
    assert!(
        missing.is_empty(),
        "tests/corpus lacks cases from ../shared/corpus: {missing:?}"
    );
}
