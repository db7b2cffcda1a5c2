//! WebAssembly bindings of the karpenter-why engine (DESIGN.md, "WASM"): the web page calls
//! these from a Web Worker and gets back the JSON report of the CLI's `-o json` as plain JS
//! objects. Core never reads a clock: the page passes `now`.

use karpenter_why_core::{self as core, rules::RuleMeta, Document, Options, Report};
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** Options of `analyze` and `analyzeDocuments`. */
export interface AnalyzeOptions {
  /** RFC 3339 time that ages are computed against (core never reads a clock). */
  now?: string;
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

/** A catalogue entry; `docs` is markdown (What it means / Why it happens / How to fix). */
export interface RuleInfo {
  id: string;
  slug: string;
  title: string;
  severity: Severity;
  docs: string;
  supersededBy: string[];
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

#[derive(Debug, Default, Deserialize)]
struct AnalyzeOptions {
    now: Option<String>,
}

#[derive(Debug, Deserialize)]
struct InputDocument {
    label: String,
    text: String,
}

#[derive(Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleInfo {
    pub id: &'static str,
    pub slug: &'static str,
    pub title: &'static str,
    pub severity: &'static str,
    pub docs: &'static str,
    pub superseded_by: &'static [&'static str],
}

impl From<&RuleMeta> for RuleInfo {
    fn from(meta: &RuleMeta) -> Self {
        RuleInfo {
            id: meta.id,
            slug: meta.slug,
            title: meta.title,
            severity: meta.severity.as_str(),
            docs: meta.docs,
            superseded_by: meta.superseded_by,
        }
    }
}

/// The label of a single pasted text, as the CLI labels stdin.
pub const PASTE_LABEL: &str = "paste";

fn to_js<T: Serialize + ?Sized>(value: &T) -> Result<JsValue, JsError> {
    // Maps as plain objects and `None` as absent, exactly like the CLI's JSON.
    let serializer = serde_wasm_bindgen::Serializer::json_compatible();
    value
        .serialize(&serializer)
        .map_err(|e| JsError::new(&format!("could not build the report object: {e}")))
}

fn options_from_js(options: JsAnalyzeOptions) -> Result<Options, JsError> {
    let value: JsValue = options.into();
    let parsed: AnalyzeOptions = if value.is_undefined() || value.is_null() {
        AnalyzeOptions::default()
    } else {
        serde_wasm_bindgen::from_value(value)
            .map_err(|e| JsError::new(&format!("invalid options: {e}")))?
    };
    Ok(Options {
        now: parsed.now,
        ..Options::default()
    })
}

/// Analyses the documents: the same engine and report as `kubectl karpenter-why analyze`.
pub fn analyze_documents_native(documents: &[Document], options: &Options) -> Report {
    core::analyze(documents, options)
}

/// `analyze(text, {now?})`: one pasted text (any mix of formats), labelled `paste`.
#[wasm_bindgen(js_name = analyze)]
pub fn analyze(text: &str, options: Option<JsAnalyzeOptions>) -> Result<JsReport, JsError> {
    let options = options
        .map(options_from_js)
        .transpose()?
        .unwrap_or_default();
    let report = analyze_documents_native(&[Document::new(PASTE_LABEL, text)], &options);
    Ok(to_js(&report)?.unchecked_into())
}

/// `analyzeDocuments([{label, text}], {now?})`: several documents (dropped files), each
/// quoted in the evidence by its label.
#[wasm_bindgen(js_name = analyzeDocuments)]
pub fn analyze_documents(
    documents: JsDocuments,
    options: Option<JsAnalyzeOptions>,
) -> Result<JsReport, JsError> {
    let documents = documents_from_js(documents)?;
    let options = options
        .map(options_from_js)
        .transpose()?
        .unwrap_or_default();
    let report = analyze_documents_native(&documents, &options);
    Ok(to_js(&report)?.unchecked_into())
}

#[derive(Serialize)]
struct Diagnosed<'a> {
    report: &'a Report,
    markdown: String,
}

/// `diagnose([{label, text}], {now?})`: `analyzeDocuments` plus the markdown the CLI prints
/// with `-o markdown`, from one analysis (the page copies it for a ticket).
#[wasm_bindgen(js_name = diagnose)]
pub fn diagnose(
    documents: JsDocuments,
    options: Option<JsAnalyzeOptions>,
) -> Result<JsDiagnosed, JsError> {
    let documents = documents_from_js(documents)?;
    let options = options
        .map(options_from_js)
        .transpose()?
        .unwrap_or_default();
    let report = analyze_documents_native(&documents, &options);
    let markdown = markdown(&report);
    Ok(to_js(&Diagnosed {
        report: &report,
        markdown,
    })?
    .unchecked_into())
}

/// The report as markdown, exactly as `kubectl karpenter-why analyze -o markdown` prints it.
pub fn markdown(report: &Report) -> String {
    report.to_json()
}

fn documents_from_js(documents: JsDocuments) -> Result<Vec<Document>, JsError> {
    let parsed: Vec<InputDocument> =
        serde_wasm_bindgen::from_value(documents.into()).map_err(|e| {
            JsError::new(&format!(
                "documents must be an array of {{label, text}} objects: {e}"
            ))
        })?;
    Ok(parsed
        .into_iter()
        .map(|d| Document::new(d.label, d.text))
        .collect())
}

/// The catalogue, in catalogue order.
pub fn rules_native() -> Vec<RuleInfo> {
    core::rules::all()
        .into_iter()
        .map(|r| RuleInfo::from(&r.meta))
        .collect()
}

/// `rules()`: every rule's ID, slug, title, severity and docs.
#[wasm_bindgen(js_name = rules)]
pub fn rules() -> Result<JsRules, JsError> {
    Ok(to_js(&rules_native())?.unchecked_into())
}

/// `explain(id)`: the rule (case-insensitive ID) with its docs, or `undefined`.
#[wasm_bindgen(js_name = explain)]
pub fn explain(id: &str) -> Result<JsRule, JsError> {
    match core::rules::find(id.trim()) {
        Some(rule) => Ok(to_js(&RuleInfo::from(&rule.meta))?.unchecked_into()),
        None => Ok(JsValue::UNDEFINED.unchecked_into()),
    }
}

/// `version()`: the engine's version, as in the report's `tool.version`.
#[wasm_bindgen(js_name = version)]
pub fn version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}

/// `redact(text)`: the CLI's `--redact` masks (`<account-1>`, `<ip-3>`...), applied to any
/// text (the page redacts the markdown report before copying it).
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
    }

    #[test]
    fn version_matches_the_report_tool_version() {
        let report = analyze_documents_native(&[], &Options::default());
        assert_eq!(version(), report.tool.version);
    }
}
