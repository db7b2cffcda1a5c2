//! Kubernetes objects: YAML or JSON text (one object, `---` multi-document streams, `kind: List`
//! and `*List` kinds, Event lists) and the generic `kubectl describe` printout of custom
//! resources (NodePool, NodeClaim, EC2NodeClass, ...), turned into typed facts.
//!
//! The segmenter in `ingest/mod.rs` decides which lines are such a segment and hands them here;
//! this module owns what the objects mean.

use crate::document::{Document, Evidence};
use crate::facts::{Facts, Message, MessageOrigin};

/// A run of lines of one document: `text` starts at 0-based line `first_index` of `doc.text`.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    pub doc: &'a Document,
    pub first_index: usize,
    pub text: &'a str,
}

impl Segment<'_> {
    /// Evidence for the segment's line at 0-based `offset`, with its original line number.
    pub fn evidence(&self, offset: usize, text: &str) -> Evidence {
        Evidence::new(
            &self.doc.label,
            self.doc.original_line(self.first_index + offset),
            text.trim(),
        )
    }
}

/// A YAML or JSON segment holding Kubernetes objects.
pub fn ingest_structured(segment: Segment<'_>, facts: &mut Facts) {
    keep_lines_as_messages(segment, facts);
}

/// The generic `kubectl describe` printout of a custom resource (`Name:`, `API Version:`,
/// `Kind:`, `Spec:` ... indented `Key:  value` lines, then `Events:`).
pub fn ingest_generic_describe(segment: Segment<'_>, facts: &mut Facts) {
    keep_lines_as_messages(segment, facts);
}

/// Text this module does not model is still scanned for catalogue signals.
fn keep_lines_as_messages(segment: Segment<'_>, facts: &mut Facts) {
    for (offset, raw) in segment.text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        facts.messages.push(Message {
            origin: MessageOrigin::Unrecognised,
            text: line.to_string(),
            evidence: segment.evidence(offset, line),
            object: None,
            nodepool: None,
            reason: None,
            component: None,
            time: None,
        });
    }
}
