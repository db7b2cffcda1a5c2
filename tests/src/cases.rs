//! Corpus-style cases (`<dir>/<case>/input.<ext>` plus `expected.json`): loading them and
//! checking a report against their `must` / `must_not` lists. The visible corpus
//! (`tests/tests/corpus.rs`) and the extra realistic cases (`tests/tests/cases.rs`) both read
//! cases this way.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use karpenter_why_core::ingest::scan;
use karpenter_why_core::{analyze, Document, Options, Report};

/// One case: a paste and what a correct engine reports on it.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case directory's name.
    pub name: String,
    /// `input.<ext>`: the document label.
    pub input_name: String,
    pub input: String,
    pub must: Vec<String>,
    pub must_not: Vec<String>,
    /// `now` of `expected.json`, when the case needs ages computed against a fixed time.
    pub now: Option<String>,
}

impl Case {
    pub fn options(&self) -> Options {
        Options {
            now: self.now.clone(),
            only: None,
        }
    }

    /// The case analysed as a pasted text.
    pub fn analyze(&self) -> Report {
        analyze(
            &[Document::new(self.input_name.clone(), self.input.clone())],
            &self.options(),
        )
    }

    /// The case analysed the way `analyze FILE` reads a file: through the streaming log
    /// scanner, which drops INFO/DEBUG log lines that hold no rule's signal.
    pub fn analyze_scanned(&self) -> Report {
        let scanned = scan::scan_bytes(self.input_name.clone(), self.input.as_bytes());
        analyze(&[scanned.document], &self.options())
    }

    /// What the report got wrong: a `must` ID missing or a `must_not` ID present, among the
    /// IDs `checked` (the registered rules).
    pub fn failures(&self, report: &Report, checked: &BTreeSet<&str>) -> Vec<String> {
        let got: BTreeSet<&str> = report.diagnoses.iter().map(|d| d.id).collect();
        let mut failures = Vec::new();
        for id in self.must.iter().filter(|id| checked.contains(id.as_str())) {
            if !got.contains(id.as_str()) {
                failures.push(format!("{}: missing {id} (got {got:?})", self.name));
            }
        }
        for id in self
            .must_not
            .iter()
            .filter(|id| checked.contains(id.as_str()))
        {
            if got.contains(id.as_str()) {
                failures.push(format!("{}: must not report {id}", self.name));
            }
        }
        failures
    }

    /// How many expectations `failures` checks.
    pub fn expectation_count(&self, checked: &BTreeSet<&str>) -> usize {
        self.must
            .iter()
            .chain(&self.must_not)
            .filter(|id| checked.contains(id.as_str()))
            .count()
    }
}

/// Every case under `dir`, sorted by name. Panics with the case's name when a case is
/// malformed (no input, unreadable or invalid `expected.json`): a broken case must not pass
/// silently.
pub fn load_cases(dir: &Path) -> Vec<Case> {
    let mut dirs: Vec<_> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.iter().map(|path| load_case(path)).collect()
}

fn load_case(path: &Path) -> Case {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let expected_text = fs::read_to_string(path.join("expected.json"))
        .unwrap_or_else(|e| panic!("{name}/expected.json: {e}"));
    let expected: serde_json::Value = serde_json::from_str(&expected_text)
        .unwrap_or_else(|e| panic!("{name}/expected.json: {e}"));
    let input_path = fs::read_dir(path)
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.file_stem().is_some_and(|s| s == "input"))
        .unwrap_or_else(|| panic!("{name}: no input.<ext>"));
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
    Case {
        input_name: input_path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        input: String::from_utf8_lossy(
            &fs::read(&input_path).unwrap_or_else(|e| panic!("{name}: {e}")),
        )
        .into_owned(),
        must: list("must"),
        must_not: list("must_not"),
        now: expected["now"].as_str().map(str::to_string),
        name,
    }
}
