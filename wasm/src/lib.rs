//! WebAssembly bindings of the karpenter-why engine (DESIGN.md, "WASM"): the web page calls
//! these from a Web Worker and gets back the JSON report of the CLI's `-o json` as plain JS
//! objects. Core never reads a clock: the page passes `now`.

use karpenter_why_core::ingest::scan::scan_bytes;
use karpenter_why_core::render::json::RuleView;
use karpenter_why_core::{self as core, Document, Options, Report};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** Options of `analyze`, `analyzeDocuments` and `diagnose`. */
export interface AnalyzeOptions {
  /** RFC 3339 time that ages are computed against (core never reads a clock). */
  now?: string;
  /**
   * Analyse the documents as `collect --redact` would have saved them: account IDs, ARNs, IPs,
   * instance and ENI IDs and hostnames masked (`<account-1>`, `<ip-3>`), labels included.
   */
  redact?: boolean;
}

/** One input document: its label (a file name, `paste`) and its text. */
export interface InputDocument {
  label: string;
  text: string;
}

export type Severity = "error" | "warning" | "info";

export interface Evidence {
  source: string;
  /** 1-based line number in the document named by `source`. */
  line: number;
  text: string;
  /** Present when identical lines were collapsed (2 or more). */
  count?: number;
  firstSeen?: string;
  lastSeen?: string;
}

export interface Remediation {
  text: string;
  command?: string;
  yaml?: string;
}

export interface ObjectRef {
  kind: string;
  namespace?: string;
  name: string;
}

export interface Diagnosis {
  id: string;
  slug: string;
  title: string;
  severity: Severity;
  confidence: "high" | "medium" | "low";
  summary: string;
  object?: ObjectRef;
  nodePool?: string;
  evidence: Evidence[];
  remediation: Remediation[];
  related?: string[];
  docs: string;
}

export interface ChecklistStep {
  step: number;
  name: string;
  status: "ok" | "problem" | "not-collected";
  signal: string;
  [extra: string]: unknown;
}

export interface Missing {
  what: string;
  command: string;
  /** Why live collection could not fetch it (a refused RBAC verb, a timeout). */
  reason?: string;
}

export interface InputErrorItem {
  source: string;
  line: number;
  message: string;
}

/** The JSON report, schemaVersion 1 (DESIGN.md). */
export interface Report {
  schemaVersion: number;
  tool: { name: string; version: string };
  subject?: ObjectRef;
  diagnoses: Diagnosis[];
  checklist: ChecklistStep[];
  missing: Missing[];
  inputErrors: InputErrorItem[];
}

/** What `diagnose` returns: the report and core's markdown rendering of it. */
export interface Diagnosed {
  report: Report;
  markdown: string;
}

/** A catalogue entry, as `rules -o json` prints it. */
export interface RuleInfo {
  id: string;
  slug: string;
  title: string;
  severity: Severity;
  /** The catalogue range's title. */
  group: string;
  /** Markdown: What it means / Why it happens / How to fix. */
  docs: string;
  /** Lower-case substrings that make a line a candidate for this rule. */
  signals: string[];
  supersededBy: string[];
  /** The terminal command that prints the docs. */
  explain: string;
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(typescript_type = "AnalyzeOptions")]
    pub type JsAnalyzeOptions;
    #[wasm_bindgen(typescript_type = "InputDocument[]")]
    pub type JsDocuments;
    #[wasm_bindgen(typescript_type = "Report")]
    pub type JsReport;
    #[wasm_bindgen(typescript_type = "Diagnosed")]
    pub type JsDiagnosed;
    #[wasm_bindgen(typescript_type = "RuleInfo[]")]
    pub type JsRules;
    #[wasm_bindgen(typescript_type = "RuleInfo | undefined")]
    pub type JsRule;
}

#[derive(Debug, Default)]
struct AnalyzeOptions {
    now: Option<String>,
    redact: bool,
}

/// The label of a single pasted text, as the CLI labels stdin.
pub const PASTE_LABEL: &str = "paste";

/// JSON rendered by core (the CLI's exact bytes) as a JS value. Going through `JSON.parse`
/// rather than a serde serializer into JS objects keeps one serializer (core's serde_json) in
/// the module: a second one doubles every `Serialize` impl, tens of KB of wasm.
fn from_json(json: &str) -> Result<JsValue, JsError> {
    js_sys::JSON::parse(json)
        .map_err(|e| JsError::new(&format!("could not build the report object: {e:?}")))
}

/// `object[key]`, with `undefined` and `null` both read as absent.
fn property(object: &JsValue, key: &str) -> Option<JsValue> {
    js_sys::Reflect::get(object, &JsValue::from_str(key))
        .ok()
        .filter(|v| !v.is_undefined() && !v.is_null())
}

fn options_from_js(options: Option<JsAnalyzeOptions>) -> Result<AnalyzeOptions, JsError> {
    let Some(options) = options else {
        return Ok(AnalyzeOptions::default());
    };
    let value: JsValue = options.into();
    if value.is_undefined() || value.is_null() {
        return Ok(AnalyzeOptions::default());
    }
    if !value.is_object() {
        return Err(JsError::new(
            "invalid options: expected an object {now?, redact?}",
        ));
    }
    let now = match property(&value, "now") {
        None => None,
        Some(now) => Some(
            now.as_string()
                .ok_or_else(|| JsError::new("invalid options: `now` must be a string"))?,
        ),
    };
    let redact = match property(&value, "redact") {
        None => false,
        Some(redact) => redact
            .as_bool()
            .ok_or_else(|| JsError::new("invalid options: `redact` must be a boolean"))?,
    };
    Ok(AnalyzeOptions { now, redact })
}

/// Runs the engine with the page's options: the documents are redacted first when asked, with
/// one `Redactor` so a value keeps its mask across documents.
fn run(documents: Vec<Document>, options: AnalyzeOptions) -> Report {
    let documents = if options.redact {
        redact_documents(&documents)
    } else {
        documents
    };
    analyze_documents_native(&documents, &engine_options(options))
}

fn engine_options(options: AnalyzeOptions) -> Options {
    Options {
        now: options.now,
        ..Options::default()
    }
}

/// The documents as `collect --redact` saves them: labels and texts masked consistently.
pub fn redact_documents(documents: &[Document]) -> Vec<Document> {
    let mut redactor = core::redact::Redactor::new();
    documents
        .iter()
        .map(|d| Document::new(redactor.redact(&d.label), redactor.redact(&d.text)))
        .collect()
}

/// Analyses the documents: the same engine and report as `kubectl karpenter-why analyze`.
/// Each document first goes through core's log scanner, which keeps exactly the lines ingest
/// would parse (with their original line numbers), so the facts are the same and a 50 MB log
/// of INFO noise costs one prefilter pass instead of a parse of every line.
pub fn analyze_documents_native(documents: &[Document], options: &Options) -> Report {
    let scanned: Vec<Document> = documents
        .iter()
        .map(|d| scan_bytes(d.label.clone(), d.text.as_bytes()).document)
        .collect();
    core::analyze(&scanned, options)
}

/// `analyze(text, {now?, redact?})`: one pasted text (any mix of formats), labelled `paste`.
#[wasm_bindgen(js_name = analyze)]
pub fn analyze(text: &str, options: Option<JsAnalyzeOptions>) -> Result<JsReport, JsError> {
    let report = run(
        vec![Document::new(PASTE_LABEL, text)],
        options_from_js(options)?,
    );
    Ok(from_json(&report.to_json())?.unchecked_into())
}

/// `analyzeDocuments([{label, text}], {now?, redact?})`: several documents (dropped files), each
/// quoted in the evidence by its label.
#[wasm_bindgen(js_name = analyzeDocuments)]
pub fn analyze_documents(
    documents: JsDocuments,
    options: Option<JsAnalyzeOptions>,
) -> Result<JsReport, JsError> {
    let report = run(documents_from_js(documents)?, options_from_js(options)?);
    Ok(from_json(&report.to_json())?.unchecked_into())
}

/// `diagnose([{label, text}], {now?, redact?})`: `analyzeDocuments` plus the markdown the CLI
/// prints with `-o markdown`, from one analysis (the page copies it for a ticket).
#[wasm_bindgen(js_name = diagnose)]
pub fn diagnose(
    documents: JsDocuments,
    options: Option<JsAnalyzeOptions>,
) -> Result<JsDiagnosed, JsError> {
    diagnosed(&run(
        documents_from_js(documents)?,
        options_from_js(options)?,
    ))
}

/// `{report, markdown}` of one analysis.
fn diagnosed(report: &Report) -> Result<JsDiagnosed, JsError> {
    let diagnosed = js_sys::Object::new();
    let set = |key: &str, value: JsValue| {
        js_sys::Reflect::set(&diagnosed, &JsValue::from_str(key), &value)
            .map_err(|e| JsError::new(&format!("could not build the result object: {e:?}")))
    };
    set("report", from_json(&report.to_json())?)?;
    set("markdown", JsValue::from_str(&markdown(report)))?;
    Ok(JsValue::from(diagnosed).unchecked_into())
}

/// The report as markdown, exactly as `kubectl karpenter-why analyze -o markdown` prints it.
pub fn markdown(report: &Report) -> String {
    core::render::markdown::report(report)
}

fn documents_from_js(documents: JsDocuments) -> Result<Vec<Document>, JsError> {
    let value: JsValue = documents.into();
    let error = |what: String| {
        JsError::new(&format!(
            "documents must be an array of {{label, text}} objects: {what}"
        ))
    };
    if !js_sys::Array::is_array(&value) {
        return Err(error("not an array".to_string()));
    }
    let array: js_sys::Array = value.unchecked_into();
    let mut parsed = Vec::with_capacity(array.length() as usize);
    for (index, item) in array.iter().enumerate() {
        let field = |key: &str| {
            property(&item, key)
                .and_then(|v| v.as_string())
                .ok_or_else(|| error(format!("item {index} has no string `{key}`")))
        };
        parsed.push(Document::new(field("label")?, field("text")?));
    }
    Ok(parsed)
}

/// A document being encoded into the module's memory: its label, its UTF-8 so far, and where
/// the space handed out by the last `stageReserve` starts.
struct Staged {
    label: String,
    text: Vec<u8>,
    reserved_from: usize,
}

thread_local! {
    /// Documents the page encoded straight into the module's memory (`stageDocument`).
    static STAGED: std::cell::RefCell<Vec<Staged>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// `stageDocument(label)`: starts a new staged document. A large text reaches the engine
/// faster through staging than as a string argument: wasm-bindgen copies a string argument
/// into the module one UTF-16 unit at a time in a JS loop (about 150 ms for 50 MB), whereas
/// the page's `TextEncoder.encodeInto` writes the UTF-8 straight into the buffer that
/// `stageReserve` hands out (about 20 ms).
#[wasm_bindgen(js_name = stageDocument)]
pub fn stage_document(label: String) {
    STAGED.with_borrow_mut(|staged| {
        staged.push(Staged {
            label,
            text: Vec::new(),
            reserved_from: 0,
        })
    });
}

/// `stageReserve(bytes)`: grows the last staged document by `bytes` zeroed bytes and returns
/// the offset of that free space in the module's memory. The page must write into it (and
/// call `stageCommit`) before calling anything else in the module, which could move it.
#[wasm_bindgen(js_name = stageReserve)]
pub fn stage_reserve(bytes: usize) -> Result<usize, JsError> {
    STAGED.with_borrow_mut(|staged| {
        let last = staged
            .last_mut()
            .ok_or_else(|| JsError::new("stageReserve before stageDocument"))?;
        last.reserved_from = last.text.len();
        if last.text.is_empty() {
            // A fresh zeroed allocation: the allocator gets new pages from `memory.grow`
            // already zeroed, where `resize` would write 50 MB of zeros first.
            last.text = vec![0; bytes];
        } else {
            last.text.resize(last.reserved_from + bytes, 0);
        }
        Ok(last.text[last.reserved_from..].as_mut_ptr() as usize)
    })
}

/// `stageCommit(written)`: keeps the first `written` bytes of the space `stageReserve` gave
/// and drops the rest.
#[wasm_bindgen(js_name = stageCommit)]
pub fn stage_commit(written: usize) {
    STAGED.with_borrow_mut(|staged| {
        if let Some(last) = staged.last_mut() {
            let end = last.reserved_from.saturating_add(written);
            last.text.truncate(end);
            last.reserved_from = last.text.len();
        }
    });
}

/// `stageClear()`: forgets the staged documents.
#[wasm_bindgen(js_name = stageClear)]
pub fn stage_clear() {
    STAGED.with_borrow_mut(Vec::clear);
}

/// `diagnoseStaged({now?, redact?})`: `diagnose` on the staged documents (which stay staged,
/// so that the redacted copy needs no second transfer).
#[wasm_bindgen(js_name = diagnoseStaged)]
pub fn diagnose_staged(options: Option<JsAnalyzeOptions>) -> Result<JsDiagnosed, JsError> {
    let options = options_from_js(options)?;
    let report = STAGED.with_borrow(|staged| {
        if options.redact {
            let documents = staged
                .iter()
                .map(|d| Document::new(d.label.clone(), String::from_utf8_lossy(&d.text)))
                .collect();
            run(documents, options)
        } else {
            // Scanned straight from the staged bytes: no 50 MB string to build first.
            let scanned: Vec<Document> = staged
                .iter()
                .map(|d| scan_bytes(d.label.clone(), &d.text).document)
                .collect();
            core::analyze(&scanned, &engine_options(options))
        }
    });
    diagnosed(&report)
}

/// The catalogue, in catalogue order, as `kubectl karpenter-why rules -o json` lists it.
pub fn rules_native() -> Vec<RuleView> {
    core::rules::all().into_iter().map(RuleView::from).collect()
}

/// `rules()`: every rule's ID, slug, title, severity, group and docs.
#[wasm_bindgen(js_name = rules)]
pub fn rules() -> Result<JsRules, JsError> {
    Ok(from_json(&core::render::json::rules(&core::rules::all()))?.unchecked_into())
}

/// `explain(id)`: the rule (case-insensitive ID) with its docs, or `undefined`.
#[wasm_bindgen(js_name = explain)]
pub fn explain(id: &str) -> Result<JsRule, JsError> {
    match core::rules::find(id.trim()) {
        Some(rule) => Ok(from_json(&core::render::json::explain(rule))?.unchecked_into()),
        None => Ok(JsValue::UNDEFINED.unchecked_into()),
    }
}

/// `version()`: the engine's version, as in the report's `tool.version`.
#[wasm_bindgen(js_name = version)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// `redact(text)`: the CLI's `--redact` masks (`<account-1>`, `<ip-3>`...), applied to any
/// text.
#[wasm_bindgen(js_name = redact)]
pub fn redact(text: &str) -> String {
    core::redact::redact(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_lists_the_whole_registry_with_docs() {
        let rules = rules_native();
        assert_eq!(rules.len(), core::rules::all().len());
        assert!(rules
            .iter()
            .all(|r| r.id.starts_with("KW") && r.docs.contains("## How to fix")));
        let json: serde_json::Value =
            serde_json::from_str(&core::render::json::rules(&core::rules::all())).unwrap();
        assert_eq!(json.as_array().unwrap().len(), rules.len());
    }

    /// The page scans each document before analysing it; on every corpus case that must give
    /// exactly the report `analyze` gives on the whole text (what the CLI prints).
    #[test]
    fn scanned_documents_give_the_cli_report_on_the_whole_corpus() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
        let mut checked = 0;
        for dir in std::fs::read_dir(corpus).unwrap().filter_map(Result::ok) {
            let Some(input) = std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .filter_map(Result::ok)
                .find(|f| f.file_name().to_string_lossy().starts_with("input."))
            else {
                continue;
            };
            let text = String::from_utf8_lossy(&std::fs::read(input.path()).unwrap()).into_owned();
            let documents = [Document::new("input", text)];
            let options = Options {
                now: Some("2025-09-01T05:00:00Z".to_string()),
                ..Options::default()
            };
            assert_eq!(
                analyze_documents_native(&documents, &options).to_json(),
                core::analyze(&documents, &options).to_json(),
                "{}",
                dir.path().display()
            );
            checked += 1;
        }
        assert!(checked >= 100, "{checked} corpus cases");
    }

    #[test]
    fn version_matches_the_report_tool_version() {
        let report = analyze_documents_native(&[], &Options::default());
        assert_eq!(version(), report.tool.version);
    }
}
