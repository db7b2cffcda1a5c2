//! The fixtures of the rules this group and KW001-KW004 own, streamed: a log file read by
//! `analyze` goes through the scanner, which drops INFO/DEBUG log lines holding no rule's
//! signal. Each positive must still report its rule when streamed behind an unrelated INFO
//! line (the scanner always keeps a file's first log line, which would hide a missing signal).

use crate::ingest::scan::StreamScanner;
use crate::rules::{self, Rule};

const IDS: &[&str] = &[
    "KW001", "KW002", "KW003", "KW004", "KW101", "KW102", "KW103", "KW104", "KW105",
];

const NOISE: &str = r#"{"level":"INFO","time":"2025-01-01T00:00:00.000Z","logger":"controller","message":"Starting workers","commit":"0000000","controller":"nodeclaim.lifecycle","worker count":1000}"#;

fn streamed_ids(label: &str, text: &str, rule: &'static Rule) -> Vec<&'static str> {
    let mut scanner = StreamScanner::new(label);
    for chunk in format!("{NOISE}\n{text}").as_bytes().chunks(61) {
        scanner.feed(chunk);
    }
    let facts = crate::ingest::ingest(&[scanner.finish().document]);
    rules::run(&facts, &[rule]).iter().map(|d| d.id).collect()
}

#[test]
fn positives_report_their_rule_when_streamed_behind_noise() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
    let mut failures = Vec::new();
    let mut checked = 0;
    for id in IDS {
        let rule = rules::find(id).expect("registered");
        let mut files: Vec<_> = std::fs::read_dir(dir.join(id))
            .expect("fixture directory")
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for file in files {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            if !name.contains(".pos.") {
                continue;
            }
            let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
            checked += 1;
            if !streamed_ids(&name, &text, rule).contains(id) {
                failures.push(format!("{id}/{name}"));
            }
        }
    }
    assert!(checked > 50, "only {checked} fixtures found");
    assert!(
        failures.is_empty(),
        "not reported when streamed: {failures:?}"
    );
}
