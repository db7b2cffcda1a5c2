//! The bindings in a real browser (wasm-bindgen-test in headless Chrome): the reports the page
//! receives carry the same verdicts as the native build on a sample of corpus cases, and the
//! JS objects are exactly the CLI's JSON.
//!
//! Run by scripts/test.d/50-web, which first writes the native verdicts and points
//! `KW_NATIVE_VERDICTS` at them.
#![cfg(target_arch = "wasm32")]

use karpenter_why_core::{analyze as core_analyze, Document, Options};
use karpenter_why_wasm as bindings;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

macro_rules! corpus_case {
    ($name:literal, $file:literal) => {
        (
            $name,
            $file,
            include_str!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../tests/corpus/",
                $name,
                "/",
                $file
            )),
        )
    };
}

/// One case per input format, diagnosed and healthy ones.
const CASES: &[(&str, &str, &str)] = &[
    corpus_case!("describe-pod-pending-karpenter-a", "input.txt"),
    corpus_case!("describe-node-notready-cni", "input.txt"),
    corpus_case!("karpenter-log-insufficient-capacity", "input.jsonl"),
    corpus_case!("karpenter-log-no-instance-type-met-a", "input.jsonl"),
    corpus_case!(
        "karpenter-log-topology-spread-unsatisfiable-a",
        "input.jsonl"
    ),
    corpus_case!("karpenter-log-subnet-ip-exhausted", "input.jsonl"),
    corpus_case!("events-disruption-blocked-pdb-a", "input.txt"),
    corpus_case!("events-nodeclaim-insufficient-capacity", "input.txt"),
    corpus_case!("ec2nodeclass-subnets-not-ready-a", "input.yaml"),
    corpus_case!("node-notready-kubelet-journal-a", "input.txt"),
    corpus_case!("nodepool-spot-only-ice-a", "input.txt"),
    corpus_case!("healthy-provisioning-log", "input.jsonl"),
    corpus_case!("healthy-describe-pod-running", "input.txt"),
];

const NATIVE_VERDICTS: &str = include_str!(env!(
    "KW_NATIVE_VERDICTS",
    "set KW_NATIVE_VERDICTS to the native verdicts file: scripts/test.d/50-web writes it first"
));

/// A JS value as JSON, through the browser's own JSON.stringify.
fn json_of(value: &JsValue) -> Value {
    let text: String = js_sys::JSON::stringify(value)
        .expect("the report is plain data")
        .into();
    serde_json::from_str(&text).expect("JSON.stringify output parses")
}

fn ids_of(report: &Value) -> Vec<String> {
    let mut ids: Vec<String> = report["diagnoses"]
        .as_array()
        .expect("diagnoses is an array")
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

fn documents(list: &[(&str, &str)]) -> bindings::JsDocuments {
    let array = js_sys::Array::new();
    for (label, text) in list {
        let doc = js_sys::Object::new();
        js_sys::Reflect::set(&doc, &"label".into(), &(*label).into()).unwrap();
        js_sys::Reflect::set(&doc, &"text".into(), &(*text).into()).unwrap();
        array.push(&doc);
    }
    array.unchecked_into()
}

fn options(now: &str) -> bindings::JsAnalyzeOptions {
    let object = js_sys::Object::new();
    js_sys::Reflect::set(&object, &"now".into(), &now.into()).unwrap();
    object.unchecked_into()
}

#[wasm_bindgen_test]
fn corpus_sample_has_the_native_verdicts() {
    let native: Value = serde_json::from_str(NATIVE_VERDICTS).unwrap();
    for (name, file, text) in CASES {
        let report = bindings::analyze_documents(documents(&[(file, text)]), None)
            .unwrap_or_else(|_| panic!("{name}: analyzeDocuments failed"));
        let expected: Vec<String> = native[name]
            .as_array()
            .unwrap_or_else(|| panic!("{name} is missing from the native verdicts"))
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(ids_of(&json_of(&report)), expected, "{name}");
    }
}

#[wasm_bindgen_test]
fn the_js_report_is_exactly_the_cli_json() {
    for (name, _, text) in CASES {
        let now = "2025-09-01T05:00:00Z";
        let from_js = json_of(&bindings::analyze(text, Some(options(now))).unwrap());
        let core = core_analyze(
            &[Document::new("paste", *text)],
            &Options {
                now: Some(now.to_string()),
                ..Options::default()
            },
        );
        let from_core: Value = serde_json::from_str(&core.to_json()).unwrap();
        assert_eq!(from_js, from_core, "{name}");
        assert_eq!(from_js["schemaVersion"], 1);
    }
}

#[wasm_bindgen_test]
fn documents_keep_their_labels_in_the_evidence() {
    let (_, _, describe) = CASES[0];
    let (_, _, log) = CASES[2];
    let report = json_of(
        &bindings::analyze_documents(
            documents(&[("pod.txt", describe), ("karpenter.log", log)]),
            None,
        )
        .unwrap(),
    );
    let mut sources: Vec<&str> = report["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["evidence"].as_array().unwrap())
        .map(|e| e["source"].as_str().unwrap())
        .collect();
    sources.sort();
    sources.dedup();
    assert!(
        sources
            .iter()
            .all(|s| *s == "pod.txt" || *s == "karpenter.log"),
        "{sources:?}"
    );
    assert!(sources.contains(&"karpenter.log"), "{sources:?}");
}

#[wasm_bindgen_test]
fn diagnose_gives_the_report_and_its_markdown_from_one_analysis() {
    let (_, file, text) = CASES[2];
    let result = json_of(&bindings::diagnose(documents(&[(file, text)]), None).unwrap());
    let core = core_analyze(&[Document::new(file, text)], &Options::default());
    let from_core: Value = serde_json::from_str(&core.to_json()).unwrap();
    assert_eq!(result["report"], from_core);
    assert_eq!(result["markdown"], bindings::markdown(&core));
}

#[wasm_bindgen_test]
fn rules_explain_and_version() {
    let rules = json_of(&bindings::rules().unwrap());
    let rules = rules.as_array().unwrap();
    assert_eq!(rules.len(), karpenter_why_core::rules::all().len());
    let first = &rules[0];
    for key in ["id", "slug", "title", "severity", "docs", "supersededBy"] {
        assert!(first.get(key).is_some(), "rules()[0] has {key}");
    }
    let id = first["id"].as_str().unwrap();
    let explained = json_of(&bindings::explain(&id.to_lowercase()).unwrap());
    assert_eq!(&explained, first);
    let unknown: JsValue = bindings::explain("KW999").unwrap().into();
    assert!(unknown.is_undefined());
    let report = json_of(&bindings::analyze("", None).unwrap());
    assert_eq!(report["tool"]["version"], bindings::version());
}

#[wasm_bindgen_test]
fn bad_arguments_are_errors_not_panics() {
    let not_documents: bindings::JsDocuments = JsValue::from_str("paste").unchecked_into();
    assert!(bindings::analyze_documents(not_documents, None).is_err());
    let not_options: bindings::JsAnalyzeOptions = JsValue::from_f64(5.0).unchecked_into();
    assert!(bindings::analyze("text", Some(not_options)).is_err());
    let null_options: bindings::JsAnalyzeOptions = JsValue::NULL.unchecked_into();
    assert!(bindings::analyze("text", Some(null_options)).is_ok());
    // Binary garbage is input, not an argument error.
    assert!(bindings::analyze("\u{0}\u{1}\u{fffd}garbage\u{7}", None).is_ok());
}

#[wasm_bindgen_test]
fn redact_uses_the_core_masks() {
    assert_eq!(
        bindings::redact("node ip-10-0-1-2.ec2.internal 10.0.1.2 account 123456789012"),
        "node <host-1>.ec2.internal <ip-1> account <account-1>"
    );
}

#[wasm_bindgen_test]
fn the_redact_option_analyses_the_redacted_documents() {
    let (_, file, text) = CASES[2];
    let text = text.replace(
        "\"message\"",
        "\"host\":\"ip-10-1-2-3.ec2.internal\",\"account\":\"123456789012\",\"message\"",
    );
    let redact_options = js_sys::Object::new();
    js_sys::Reflect::set(&redact_options, &"redact".into(), &true.into()).unwrap();
    let result = json_of(
        &bindings::diagnose(
            documents(&[(file, &text)]),
            Some(redact_options.unchecked_into()),
        )
        .unwrap(),
    );
    let redacted = bindings::redact_documents(&[Document::new(file, text.as_str())]);
    let core = core_analyze(&redacted, &Options::default());
    assert_eq!(result["markdown"], bindings::markdown(&core));
    let markdown = result["markdown"].as_str().unwrap();
    assert!(!markdown.contains("123456789012") && !markdown.contains("ip-10-1-2-3"));
    assert!(!ids_of(&result["report"]).is_empty(), "still diagnosed");
    let plain = json_of(&bindings::analyze_documents(documents(&[(file, &text)]), None).unwrap());
    assert_eq!(ids_of(&result["report"]), ids_of(&plain));
}

/// Writes `bytes` into the module's memory at `offset`, as the page's `encodeInto` does.
fn write_into_memory(offset: usize, bytes: &[u8]) {
    let memory: js_sys::WebAssembly::Memory = wasm_bindgen::memory().unchecked_into();
    let view = js_sys::Uint8Array::new_with_byte_offset_and_length(
        &memory.buffer(),
        offset as u32,
        bytes.len() as u32,
    );
    view.copy_from(bytes);
}

#[wasm_bindgen_test]
fn streamed_documents_give_the_same_result_as_string_arguments() {
    let (_, file, log) = CASES[2];
    let (_, _, describe) = CASES[0];
    let unicode = format!("é€ {describe}");
    bindings::stream_clear();
    // The log in one piece, in a buffer with room to spare.
    bindings::stream_document(file.to_string(), true);
    let offset = bindings::stream_buffer(log.len() + 100);
    write_into_memory(offset, log.as_bytes());
    bindings::stream_feed(log.len()).unwrap();
    // The non-ASCII text in two pieces, the first ending inside `€` (bytes 2 to 4).
    bindings::stream_document("pod.txt".to_string(), true);
    let (head, tail) = unicode.as_bytes().split_at(4);
    for piece in [head, tail] {
        let offset = bindings::stream_buffer(piece.len());
        write_into_memory(offset, piece);
        bindings::stream_feed(piece.len()).unwrap();
    }

    let streamed =
        json_of(&bindings::diagnose_streamed(Some(options("2025-09-01T05:00:00Z"))).unwrap());
    let direct = json_of(
        &bindings::diagnose(
            documents(&[(file, log), ("pod.txt", &unicode)]),
            Some(options("2025-09-01T05:00:00Z")),
        )
        .unwrap(),
    );
    assert_eq!(streamed, direct);
    assert!(!ids_of(&streamed["report"]).is_empty());
    // Streamed documents stay for the redacted copy, until cleared.
    let redact_options = js_sys::Object::new();
    js_sys::Reflect::set(&redact_options, &"redact".into(), &true.into()).unwrap();
    let redacted =
        json_of(&bindings::diagnose_streamed(Some(redact_options.unchecked_into())).unwrap());
    assert_eq!(ids_of(&redacted["report"]), ids_of(&streamed["report"]));
    bindings::stream_clear();
    let empty = json_of(&bindings::diagnose_streamed(None).unwrap());
    assert!(empty["report"]["diagnoses"].as_array().unwrap().is_empty());
    assert!(
        bindings::stream_feed(10).is_err(),
        "feeding needs a streamed document"
    );
}

/// The page's anchor search loop (Teddy on WebAssembly SIMD) reports, from every start, the
/// first position the nibble tables give buckets for and the check accepts, as a
/// byte-at-a-time reading of the tables does (the check core's unit test runs on the portable
/// loop, here on the SIMD one).
#[cfg(target_feature = "simd128")]
#[wasm_bindgen_test]
fn simd_anchor_search_finds_what_a_naive_search_finds() {
    karpenter_why_core::ingest::wasm_teddy::assert_find_matches_naive(0x9e37_79b9_7f4a_7c15, 300);
}

/// On a large log (the page's paste), the SIMD anchors find exactly the lines (and signals)
/// the automaton finds line by line: corpus logs, upper-cased copies and noise, mixed.
#[cfg(target_feature = "simd128")]
#[wasm_bindgen_test]
fn simd_anchors_find_the_signal_lines_the_automaton_finds() {
    use karpenter_why_core::ingest::scan::signal_line_starts;
    use karpenter_why_core::ingest::wasm_teddy::Rng;
    let matcher = karpenter_why_core::ingest::scan::rule_matcher();
    let noise = r#"{"level":"INFO","time":"2024-05-01T10:00:00.000Z","logger":"controller","message":"computed 3 unready node(s) will fit 5 pod(s)","commit":"a1b2c3d"}"#;
    let lines: Vec<&str> = CASES.iter().flat_map(|(_, _, text)| text.lines()).collect();
    let mut rng = Rng(7);
    let mut text = String::new();
    while text.len() < 3 << 20 {
        let line = lines[rng.below(lines.len())];
        match rng.below(4) {
            0 => text.push_str(&line.to_uppercase()),
            1 => text.push_str(line),
            _ => text.push_str(noise),
        }
        text.push('\n');
    }
    let anchors = matcher.anchors_for(&text.as_bytes()[..1 << 20]);
    assert!(anchors.is_some(), "the page searches with SIMD anchors");
    let mut line_by_line = Vec::new();
    matcher.signal_lines(text.as_bytes(), 0, None, &mut Vec::new(), &mut line_by_line);
    assert!(
        line_by_line.len() > 1000,
        "{} signal lines",
        line_by_line.len()
    );
    assert_eq!(signal_line_starts(matcher, text.as_bytes()), line_by_line);
    let mut anchored = Vec::new();
    matcher.signal_lines(
        text.as_bytes(),
        0,
        anchors.as_ref(),
        &mut Vec::new(),
        &mut anchored,
    );
    assert_eq!(anchored, line_by_line);
}
