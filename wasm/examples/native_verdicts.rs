//! Prints, as JSON, the diagnosis IDs the native build reports for every corpus case
//! (`{"case": ["KW201", ...]}`): the browser tests check that the WebAssembly build and the
//! page report exactly the same.
//!   cargo run -p karpenter-why-wasm --example native_verdicts -- tests/corpus > verdicts.json

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use karpenter_why_core::{analyze, Document, Options};

fn main() {
    let corpus = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "tests/corpus".to_string());
    let mut verdicts: BTreeMap<String, Vec<&'static str>> = BTreeMap::new();
    let mut dirs: Vec<_> = fs::read_dir(&corpus)
        .unwrap_or_else(|e| panic!("cannot read {corpus}: {e}"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let Some(input) = input_file(&dir) else {
            continue;
        };
        let name = input.file_name().unwrap().to_string_lossy().into_owned();
        let text = String::from_utf8_lossy(&fs::read(&input).unwrap()).into_owned();
        let report = analyze(&[Document::new(name, text)], &Options::default());
        let mut ids: Vec<&'static str> = report.diagnoses.iter().map(|d| d.id).collect();
        ids.sort_unstable();
        ids.dedup();
        verdicts.insert(dir.file_name().unwrap().to_string_lossy().into_owned(), ids);
    }
    println!("{}", serde_json::to_string_pretty(&verdicts).unwrap());
}

fn input_file(dir: &Path) -> Option<std::path::PathBuf> {
    fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.file_stem().is_some_and(|s| s == "input"))
}
