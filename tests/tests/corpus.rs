//! Runs the engine on every corpus case and checks `must` / `must_not` for every ID the
//! registry implements (IDs not yet implemented are skipped, derived from the registry).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use karpenter_why_core::{analyze, rules, Document, Options};

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

struct Case {
    name: String,
    input_name: String,
    input: String,
    must: Vec<String>,
    must_not: Vec<String>,
}

fn load_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let mut dirs: Vec<_> = fs::read_dir(corpus_dir())
        .expect("tests/corpus exists")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .collect();
    dirs.sort_by_key(|e| e.file_name());
    for dir in dirs {
        let path = dir.path();
        let expected: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(path.join("expected.json")).unwrap()).unwrap();
        let input_path = fs::read_dir(&path)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.file_stem().is_some_and(|s| s == "input"))
            .expect("case has an input file");
        let list = |key: &str| -> Vec<String> {
            expected[key]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        cases.push(Case {
            name: dir.file_name().to_string_lossy().into_owned(),
            input_name: input_path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned(),
            input: String::from_utf8_lossy(&fs::read(&input_path).unwrap()).into_owned(),
            must: list("must"),
            must_not: list("must_not"),
        });
    }
    cases
}

#[test]
fn every_corpus_case_passes_for_implemented_ids() {
    let implemented: BTreeSet<&str> = rules::all().iter().map(|r| r.meta.id).collect();
    let cases = load_cases();
    assert!(cases.len() >= 100, "corpus has {} cases", cases.len());
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in &cases {
        let report = analyze(
            &[Document::new(case.input_name.clone(), case.input.clone())],
            &Options::default(),
        );
        let got: BTreeSet<&str> = report.diagnoses.iter().map(|d| d.id).collect();
        for id in case
            .must
            .iter()
            .filter(|id| implemented.contains(id.as_str()))
        {
            checked += 1;
            if !got.contains(id.as_str()) {
                failures.push(format!("{}: missing {id} (got {got:?})", case.name));
            }
        }
        for id in case
            .must_not
            .iter()
            .filter(|id| implemented.contains(id.as_str()))
        {
            checked += 1;
            if got.contains(id.as_str()) {
                failures.push(format!("{}: must not report {id}", case.name));
            }
        }
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
    for case in load_cases()
        .iter()
        .filter(|c| c.name.starts_with("healthy-"))
    {
        let report = analyze(
            &[Document::new(case.input_name.clone(), case.input.clone())],
            &Options::default(),
        );
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
