//! Ingest: documents -> facts. Splits a mixed paste into segments, recognises each format and
//! fills the fact model, keeping evidence (label, line, exact text) for everything.

use crate::document::{Document, Evidence};
use crate::facts::{Facts, LogRecord, Message, MessageOrigin};

pub mod logs;
pub mod objects;

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
        let evidence = Evidence::new(&doc.label, doc.original_line(index), line);
        if let Some(record) = logs::parse_log_line(line, evidence.clone()) {
            facts.messages.push(Message {
                origin: MessageOrigin::KarpenterLog,
                text: log_text(&record),
                evidence,
                object: None,
                nodepool: record.field_name("NodePool"),
                reason: None,
                component: record.logger.clone().or_else(|| record.controller.clone()),
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
            reason: None,
            component: None,
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
