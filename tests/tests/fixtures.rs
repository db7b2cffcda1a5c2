//! Per-rule fixtures: `tests/fixtures/<ID>/<name>.pos.<ext>` must make rule ID report, and
//! `<name>.neg.<ext>` must not, each analysed with only that rule enabled. The rendered text
//! of every positive is snapshotted (`tests/tests/snapshots/`), so wording changes show up in
//! review. Every positive is also streamed through the log scanner, as `analyze FILE` reads it.
//!
//! New or changed snapshots: `INSTA_UPDATE=always cargo test -p karpenter-why-tests --test
//! fixtures` writes them (no cargo-insta needed); read them and commit them. Under `CI=true`
//! a missing or different snapshot fails.

use std::fs;
use std::path::{Path, PathBuf};

use karpenter_why_core::render::{self, TextOptions};
use karpenter_why_core::{analyze, rules, Document, Options, Report};

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

#[derive(Debug)]
struct Fixture {
    id: String,
    /// `KW202/v1.5-volume-zone.pos.txt`: the document label, stable across machines.
    label: String,
    positive: bool,
    text: String,
}

/// Every fixture, sorted; a file whose name says neither `.pos.` nor `.neg.` is an error.
fn load() -> (Vec<Fixture>, Vec<String>) {
    let mut fixtures = Vec::new();
    let mut errors = Vec::new();
    let mut dirs: Vec<_> = fs::read_dir(fixtures_dir())
        .expect("tests/fixtures exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let id = dir.file_name().unwrap().to_string_lossy().into_owned();
        let mut files: Vec<_> = fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .collect();
        files.sort();
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            let positive = if name.contains(".pos.") {
                true
            } else if name.contains(".neg.") {
                false
            } else {
                errors.push(format!(
                    "{id}/{name}: name it <variant>.pos.<ext> or <near-miss>.neg.<ext>"
                ));
                continue;
            };
            fixtures.push(Fixture {
                label: format!("{id}/{name}"),
                id: id.clone(),
                positive,
                text: String::from_utf8_lossy(&fs::read(&file).unwrap()).into_owned(),
            });
        }
    }
    (fixtures, errors)
}

fn analyze_alone(f: &Fixture) -> Report {
    analyze(
        &[Document::new(f.label.clone(), f.text.clone())],
        &Options {
            now: None,
            only: Some(vec![f.id.clone()]),
        },
    )
}

#[test]
fn positives_report_their_rule_and_negatives_do_not() {
    let (fixtures, mut failures) = load();
    assert!(!fixtures.is_empty());
    for f in &fixtures {
        if rules::find(&f.id).is_none() {
            failures.push(format!("{}: no rule {} is registered", f.label, f.id));
            continue;
        }
        let report = analyze_alone(f);
        let fired: Vec<&str> = report.diagnoses.iter().map(|d| d.id).collect();
        let reported = fired.contains(&f.id.as_str());
        if f.positive && !reported {
            failures.push(format!("{}: {} not reported", f.label, f.id));
        }
        if !f.positive && reported {
            let summary = &report.diagnoses[0].summary;
            failures.push(format!(
                "{}: near miss reported as {}: {summary}",
                f.label, f.id
            ));
        }
    }
    let positives = fixtures.iter().filter(|f| f.positive).count();
    println!(
        "fixtures: {} ({positives} positive, {} negative), {} failed",
        fixtures.len(),
        fixtures.len() - positives,
        failures.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// An unrelated INFO line put before a streamed fixture: the scanner always keeps a file's
/// first log line, which would hide a signal missing from the rule's `signals`.
const NOISE: &str = r#"{"level":"INFO","time":"2025-01-01T00:00:00.000Z","logger":"controller","message":"Starting workers","commit":"0000000","controller":"nodeclaim.lifecycle","worker count":1000}"#;

/// A log file read by `analyze FILE` goes through the scanner, which drops INFO/DEBUG lines
/// holding no rule's signal: every positive must still report its rule that way, fed in odd
/// chunks behind an unrelated INFO line.
#[test]
fn positives_report_their_rule_when_streamed() {
    let (fixtures, _) = load();
    let mut failures = Vec::new();
    let mut checked = 0;
    for f in fixtures.iter().filter(|f| f.positive) {
        let mut scanner = karpenter_why_core::ingest::scan::stream_scanner(f.label.clone());
        for chunk in format!("{NOISE}\n{}", f.text).as_bytes().chunks(61) {
            scanner.feed(chunk);
        }
        let report = analyze(
            &[scanner.finish().document],
            &Options {
                now: None,
                only: Some(vec![f.id.clone()]),
            },
        );
        checked += 1;
        if !report.diagnoses.iter().any(|d| d.id == f.id) {
            failures.push(format!("{}: {} not reported when streamed", f.label, f.id));
        }
    }
    println!("streamed fixtures: {checked}, {} failed", failures.len());
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn rendered() {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_omit_expression(true);
    settings.bind(|| {
        insta::glob!("../fixtures", "*/*.pos.*", |path| {
            let id = path
                .parent()
                .and_then(Path::file_name)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let fixture = Fixture {
                label: format!("{id}/{name}"),
                id,
                positive: true,
                text: String::from_utf8_lossy(&fs::read(path).unwrap()).into_owned(),
            };
            let text = render::text::report(&analyze_alone(&fixture), &TextOptions::default());
            insta::assert_snapshot!(text);
        });
    });
}

/// A renamed or deleted fixture leaves its snapshot behind; a `.snap.new` is an unreviewed
/// change. Neither belongs in the tree.
#[test]
fn every_snapshot_belongs_to_a_fixture() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut stray = Vec::new();
    for entry in fs::read_dir(&dir).expect("tests/tests/snapshots exists") {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix("rendered@")
            .and_then(|n| n.strip_suffix(".snap"))
        else {
            if name.starts_with("rendered@") {
                stray.push(format!(
                    "{name}: unreviewed; accept it with INSTA_UPDATE=always or delete it"
                ));
            }
            continue;
        };
        let Some((id, file)) = rest.split_once("__") else {
            stray.push(format!("{name}: not <ID>__<fixture>"));
            continue;
        };
        if !fixtures_dir().join(id).join(file).is_file() {
            stray.push(format!(
                "{name}: tests/fixtures/{id}/{file} does not exist; delete the snapshot"
            ));
        }
    }
    assert!(stray.is_empty(), "\n{}", stray.join("\n"));
}
