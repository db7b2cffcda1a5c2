//! Ingest: documents -> facts. Splits a mixed paste into segments, recognises each format and
//! fills the fact model, keeping evidence (label, line, exact text) for everything.

use crate::document::{Document, Evidence};
use crate::facts::{Facts, LogRecord, Message, MessageOrigin};

/// Ingests every document into one set of facts.
pub fn ingest(documents: &[Document]) -> Facts {
    let mut facts = Facts::default();
    for doc in documents {
        ingest_document(doc, &mut facts);
    }
    facts
}

fn ingest_document(doc: &Document, facts: &mut Facts) {
    for (index, raw) in doc.text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let evidence = Evidence::new(&doc.label, index + 1, line);
        if let Some(record) = parse_json_log(line, evidence.clone()) {
            facts.messages.push(Message {
                origin: MessageOrigin::KarpenterLog,
                text: log_text(&record),
                evidence,
                object: None,
                nodepool: record.field_name("NodePool"),
                time: record.time.clone(),
            });
            facts.logs.push(record);
            continue;
        }
        facts.messages.push(Message {
            origin: MessageOrigin::Unrecognised,
            text: line.to_string(),
            evidence,
            object: None,
            nodepool: None,
            time: None,
        });
    }
}

fn log_text(record: &LogRecord) -> String {
    let mut text = record.message.clone();
    for part in record.error.iter().chain(record.error_causes.iter()) {
        text.push_str(": ");
        text.push_str(part);
    }
    text
}

fn parse_json_log(line: &str, evidence: Evidence) -> Option<LogRecord> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let mut map = match value {
        serde_json::Value::Object(map) => map,
        _ => return None,
    };
    let message = map.remove("message").or_else(|| map.remove("msg"))?;
    let level = map
        .remove("level")
        .and_then(|v| v.as_str().map(str::to_ascii_uppercase));
    let text = |v: Option<serde_json::Value>| v.and_then(|v| v.as_str().map(str::to_string));
    Some(LogRecord {
        level: level.unwrap_or_default(),
        time: text(map.remove("time").or_else(|| map.remove("ts"))),
        logger: text(map.remove("logger")),
        controller: text(map.remove("controller")),
        message: message
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| message.to_string()),
        error: text(map.remove("error")),
        error_causes: Vec::new(),
        fields: map.into_iter().collect(),
        evidence,
    })
}
