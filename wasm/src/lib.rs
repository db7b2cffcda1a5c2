//! WebAssembly bindings of the karpenter-why engine (DESIGN.md, "WASM"): the web page calls
//! these from a Web Worker and gets back the JSON report of the CLI's `-o json` as plain JS
//! objects. Core never reads a clock: the page passes `now`.

use karpenter_why_core::ingest::scan::{self, scan_bytes, StreamScanner};
use karpenter_why_core::render::json::RuleView;
use karpenter_why_core::{self as core, Document, InputError, Options, Report};
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
  /**
   * Errors the page met while reading its inputs (a dropped `.gz` file cut short): listed first
   * in the report's `inputErrors`, as the CLI lists a file it could not read to its end.
   */
  readErrors?: InputErrorItem[];
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

/** The API kind of the pool a diagnosis names. */
export type NodePoolKind = "NodePool" | "Provisioner";

export interface Diagnosis {
  id: string;
  slug: string;
  title: string;
  severity: Severity;
  confidence: "high" | "medium" | "low";
  summary: string;
  object?: ObjectRef;
  /** Every object when one cause holds for several (`object` is the first). */
  objects?: ObjectRef[];
  nodePool?: string;
  /** Every NodePool when one cause holds for several (`nodePool` is then unset). */
  nodePools?: string[];
  /**
   * Present with `nodePool` / `nodePools`: whether they name NodePools or v1alpha5
   * Provisioners (Karpenter before v0.32).
   */
  nodePoolKind?: NodePoolKind;
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
  /** 1-based; 0 when the error is about the whole input (a file that could not be read). */
  line: number;
  message: string;
}

/** Diagnoses with one ID and one cause across several pods. */
export interface DiagnosisGroup {
  id: string;
  title: string;
  severity: Severity;
  nodePool?: string;
  /** Present with `nodePool`: a NodePool or a v1alpha5 Provisioner. */
  nodePoolKind?: NodePoolKind;
  /** The first diagnosis's summary. */
  summary: string;
  pods: ObjectRef[];
  count: number;
  /** Evidence lines across the group, repeats included. */
  occurrences: number;
  /** Indices into `diagnoses`. */
  diagnoses: number[];
}

/** The JSON report, schemaVersion 1 (DESIGN.md). */
export interface Report {
  schemaVersion: number;
  tool: { name: string; version: string };
  subject?: ObjectRef;
  diagnoses: Diagnosis[];
  /** Only when the subject is several pods: diagnoses of one ID and cause, merged. */
  groups?: DiagnosisGroup[];
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
    read_errors: Vec<InputError>,
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
            "invalid options: expected an object {now?, redact?, readErrors?}",
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
    let read_errors = match property(&value, "readErrors") {
        None => Vec::new(),
        Some(errors) => read_errors_from_js(&errors)?,
    };
    Ok(AnalyzeOptions {
        now,
        redact,
        read_errors,
    })
}

fn read_errors_from_js(errors: &JsValue) -> Result<Vec<InputError>, JsError> {
    let invalid = || {
        JsError::new("invalid options: `readErrors` must be an array of {source, line, message}")
    };
    if !js_sys::Array::is_array(errors) {
        return Err(invalid());
    }
    js_sys::Array::from(errors)
        .iter()
        .map(|error| {
            let text = |key| property(&error, key).and_then(|v| v.as_string());
            let line = property(&error, "line").and_then(|v| v.as_f64());
            match (text("source"), line, text("message")) {
                (Some(source), Some(line), Some(message)) if line >= 0.0 => Ok(InputError {
                    source,
                    line: line as usize,
                    message,
                }),
                _ => Err(invalid()),
            }
        })
        .collect()
}

/// The page's read errors go first: they say which input the report is missing.
fn with_read_errors(mut report: Report, read_errors: Vec<InputError>) -> Report {
    report.input_errors.splice(0..0, read_errors);
    report
}

/// Runs the engine with the page's options: the documents are redacted first when asked, with
/// one `Redactor` so a value keeps its mask across documents.
fn run(documents: Vec<Document>, mut options: AnalyzeOptions) -> Report {
    let mut read_errors = std::mem::take(&mut options.read_errors);
    let documents = if options.redact {
        let mut redactor = core::redact::Redactor::new();
        // The errors name the files: masked with the same redactor as the labels.
        for error in &mut read_errors {
            error.source = redactor.redact(&error.source);
            error.message = redactor.redact(&error.message);
        }
        redact_with(&mut redactor, &documents)
    } else {
        documents
    };
    with_read_errors(
        analyze_documents_native(&documents, &engine_options(options)),
        read_errors,
    )
}

fn engine_options(options: AnalyzeOptions) -> Options {
    Options {
        now: options.now,
        ..Options::default()
    }
}

/// The documents as `collect --redact` saves them: labels and texts masked consistently.
pub fn redact_documents(documents: &[Document]) -> Vec<Document> {
    redact_with(&mut core::redact::Redactor::new(), documents)
}

fn redact_with(redactor: &mut core::redact::Redactor, documents: &[Document]) -> Vec<Document> {
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

/// The documents the page streams into the engine a piece at a time (`streamDocument`).
#[derive(Default)]
struct Streamed {
    /// The scanned documents, finished.
    scanned: Vec<Document>,
    /// The document being fed.
    scanner: Option<StreamScanner<'static>>,
    /// Each document's whole text, kept only when the page will ask for a redacted analysis
    /// (redaction reads whole texts).
    texts: Vec<Option<Vec<u8>>>,
}

impl Streamed {
    fn finish(&mut self) {
        if let Some(scanner) = self.scanner.take() {
            self.scanned.push(scanner.finish().document);
        }
    }
}

thread_local! {
    static STREAMED: std::cell::RefCell<Streamed> =
        std::cell::RefCell::new(Streamed::default());
    /// The one buffer the page encodes each piece into, reused for every piece: the module's
    /// memory holds a piece at a time, never the whole paste.
    static PIECE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// `streamDocument(label, keepText)`: starts a new document, streamed through the log scanner
/// as the CLI streams a file. A large text reaches the engine faster this way than as a string
/// argument: wasm-bindgen copies a string argument into the module one UTF-16 unit at a time
/// in a JS loop, whereas the page's `TextEncoder.encodeInto` writes UTF-8 straight into the
/// buffer `streamBuffer` hands out. And the module's memory holds a piece and the kept lines,
/// never the whole paste: a first 50 MB paste no longer grows and zeroes 50 MB of memory.
/// `keepText` also keeps the whole text, for `diagnoseStreamed({redact: true})`.
#[wasm_bindgen(js_name = streamDocument)]
pub fn stream_document(label: String, keep_text: bool) {
    STREAMED.with_borrow_mut(|streamed| {
        streamed.finish();
        streamed.scanner = Some(scan::stream_scanner(label));
        streamed.texts.push(keep_text.then(Vec::new));
    });
}

/// `streamBuffer(bytes)`: the offset in the module's memory of a buffer of at least `bytes`
/// bytes for the next piece. The page must write into it (and call `streamFeed`) before
/// calling anything else in the module, which could move it.
#[wasm_bindgen(js_name = streamBuffer)]
pub fn stream_buffer(bytes: usize) -> usize {
    PIECE.with_borrow_mut(|piece| {
        if piece.len() < bytes {
            *piece = vec![0; bytes];
        }
        piece.as_mut_ptr() as usize
    })
}

/// `streamFeed(written)`: feeds the first `written` bytes of the buffer to the last streamed
/// document. A piece may end anywhere, even inside a line or a UTF-8 character: the scanner
/// keeps an unfinished line for the next piece.
#[wasm_bindgen(js_name = streamFeed)]
pub fn stream_feed(written: usize) -> Result<(), JsError> {
    PIECE.with_borrow(|piece| {
        let bytes = piece
            .get(..written)
            .ok_or_else(|| JsError::new("streamFeed: more bytes than streamBuffer gave"))?;
        stream_bytes(bytes).map_err(JsError::new)
    })
}

/// Feeds `bytes` to the last streamed document (the native half of `streamFeed`).
pub fn stream_bytes(bytes: &[u8]) -> Result<(), &'static str> {
    STREAMED.with_borrow_mut(|streamed| {
        let scanner = streamed
            .scanner
            .as_mut()
            .ok_or("streamFeed before streamDocument")?;
        scanner.feed(bytes);
        if let Some(Some(text)) = streamed.texts.last_mut() {
            text.extend_from_slice(bytes);
        }
        Ok(())
    })
}

/// `streamClear()`: forgets the streamed documents.
#[wasm_bindgen(js_name = streamClear)]
pub fn stream_clear() {
    STREAMED.take();
}

/// `diagnoseStreamed({now?, redact?})`: `diagnose` on the streamed documents, which stay until
/// `streamClear` (the redacted copy needs no second transfer; it needs `keepText`).
#[wasm_bindgen(js_name = diagnoseStreamed)]
pub fn diagnose_streamed(options: Option<JsAnalyzeOptions>) -> Result<JsDiagnosed, JsError> {
    let report = diagnose_streamed_native(options_from_js(options)?).map_err(JsError::new)?;
    diagnosed(&report)
}

fn diagnose_streamed_native(mut options: AnalyzeOptions) -> Result<Report, &'static str> {
    STREAMED.with_borrow_mut(|streamed| {
        streamed.finish();
        if options.redact {
            let documents = streamed
                .scanned
                .iter()
                .zip(&streamed.texts)
                .map(|(d, text)| {
                    let text = text
                        .as_deref()
                        .ok_or("a redacted analysis needs streamDocument(label, true)")?;
                    Ok(Document::new(
                        d.label.clone(),
                        String::from_utf8_lossy(text),
                    ))
                })
                .collect::<Result<Vec<_>, &'static str>>()?;
            Ok(run(documents, options))
        } else {
            let read_errors = std::mem::take(&mut options.read_errors);
            Ok(with_read_errors(
                core::analyze(&streamed.scanned, &engine_options(options)),
                read_errors,
            ))
        }
    })
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

    fn case_input(name: &str) -> String {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/corpus")
            .join(name);
        let input = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .find(|f| f.file_name().to_string_lossy().starts_with("input."))
            .unwrap();
        std::fs::read_to_string(input.path()).unwrap()
    }

    /// Streams the documents in pieces of `piece` bytes, as the page does, and diagnoses them.
    fn streamed(documents: &[Document], piece: usize, options: &str) -> Report {
        stream_clear();
        for document in documents {
            stream_document(document.label.clone(), true);
            for bytes in document.text.as_bytes().chunks(piece) {
                stream_bytes(bytes).unwrap();
            }
        }
        let options = AnalyzeOptions {
            now: Some("2025-09-01T05:00:00Z".to_string()),
            redact: options == "redact",
            ..AnalyzeOptions::default()
        };
        let report = diagnose_streamed_native(options).unwrap();
        stream_clear();
        report
    }

    /// Pieces end anywhere: inside a line, inside a multi-byte UTF-8 character, between
    /// documents; the report is the one of the whole texts, quoting the non-ASCII text intact.
    #[test]
    fn streamed_pieces_give_the_report_of_the_whole_texts() {
        let log = case_input("karpenter-log-insufficient-capacity").replacen(
            "failed launching nodeclaim",
            "failed launching nodeclaim é€🚀",
            1,
        );
        let paste = format!(
            "{}\n{}\n{}",
            case_input("describe-pod-pending-karpenter-a").replace("Name:", "Name: "),
            log,
            case_input("ec2nodeclass-subnets-not-ready-a"),
        );
        let documents = [
            Document::new("paste", paste),
            Document::new("pod.txt", case_input("events-disruption-blocked-pdb-a")),
            Document::new("empty.txt", ""),
        ];
        let options = Options {
            now: Some("2025-09-01T05:00:00Z".to_string()),
            ..Options::default()
        };
        let whole = core::analyze(&documents, &options).to_json();
        assert!(whole.contains("é€🚀"), "the non-ASCII line is quoted");
        let redacted = analyze_documents_native(&redact_documents(&documents), &options).to_json();
        let emoji = documents[0].text.find('🚀').unwrap();
        // 1 and 3 bytes split every character; `emoji + 2` ends a piece inside the emoji.
        for piece in [1, 3, 64, 1000, emoji + 2, 1 << 20] {
            assert_eq!(
                streamed(&documents, piece, "").to_json(),
                whole,
                "pieces of {piece}"
            );
            assert_eq!(
                streamed(&documents, piece, "redact").to_json(),
                redacted,
                "pieces of {piece}"
            );
        }
    }

    #[test]
    fn streaming_needs_a_document_and_redacting_its_text() {
        stream_clear();
        assert!(stream_bytes(b"x").is_err());
        stream_document("paste".to_string(), false);
        stream_bytes(b"{\"level\":\"ERROR\"}\n").unwrap();
        let redact = AnalyzeOptions {
            now: None,
            redact: true,
            ..AnalyzeOptions::default()
        };
        assert!(diagnose_streamed_native(redact).is_err());
        assert!(diagnose_streamed_native(AnalyzeOptions::default()).is_ok());
        stream_clear();
    }

    /// A `.gz` file the page could read only in part: its error comes first in the report
    /// and in the markdown, and the redacted copy masks the file name as it masks the label.
    #[test]
    fn the_page_read_errors_come_first_and_are_redacted_with_the_labels() {
        let label = "node/i-0a1b2c3d4e5f60789.log.gz";
        let documents = vec![Document::new(
            label,
            "{\"level\":\"ERROR\",\"message\":\"could not schedule pod\",\"error\":\"no instance type has\n",
        )];
        let read_error = InputError {
            source: label.to_string(),
            line: 1,
            message: "reading stopped here (gzip data cut short)".to_string(),
        };
        let options = |redact| AnalyzeOptions {
            redact,
            read_errors: vec![read_error.clone()],
            ..AnalyzeOptions::default()
        };
        let report = run(documents.clone(), options(false));
        assert_eq!(report.input_errors.len(), 2, "{:?}", report.input_errors);
        assert_eq!(report.input_errors[0], read_error);
        assert!(
            markdown(&report).contains("- `node/i-0a1b2c3d4e5f60789.log.gz:1`: reading stopped")
        );
        let redacted = run(documents, options(true));
        assert!(!redacted.input_errors[0]
            .source
            .contains("0a1b2c3d4e5f60789"));
        assert_eq!(
            redacted.input_errors[0].source, redacted.input_errors[1].source,
            "one mask for the file name in both errors"
        );
    }

    #[test]
    fn version_matches_the_report_tool_version() {
        let report = analyze_documents_native(&[], &Options::default());
        assert_eq!(version(), report.tool.version);
    }
}
