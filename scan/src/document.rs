//! Documents (text plus where it came from) and evidence spans pointing back into them.

use std::collections::BTreeMap;

use serde::Serialize;

/// Raw text plus a label saying where it came from (`karpenter.log`, `stdin`, `paste`,
/// `GET /api/v1/namespaces/shop/pods/web-0`). Live mode and paste mode both produce these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub label: String,
    pub text: String,
    /// When `text` holds only some lines of a larger input (the streaming log scanner keeps
    /// candidate lines only), the original 1-based line number of each line of `text`.
    pub line_numbers: Option<Vec<usize>>,
    /// Karpenter log lines the streaming scanner left out of `text` (noise holding no
    /// catalogue signal), counted per upper-case level.
    pub omitted_log_lines: BTreeMap<String, usize>,
    /// Noise lines of another component's JSON log (the VPC CNI's ipamd in a node's log
    /// bundle) the scanner left out: not Karpenter's, so not in `omitted_log_lines`.
    pub omitted_other_log_lines: usize,
}

impl Document {
    pub fn new(label: impl Into<String>, text: impl Into<String>) -> Self {
        Document {
            label: label.into(),
            text: text.into(),
            line_numbers: None,
            omitted_log_lines: BTreeMap::new(),
            omitted_other_log_lines: 0,
        }
    }

    /// The original 1-based line number of the line at `index` (0-based) of `text`. Past
    /// the last line (the end of the input), numbering goes on from the last original number.
    pub fn original_line(&self, index: usize) -> usize {
        match &self.line_numbers {
            Some(numbers) => numbers.get(index).copied().unwrap_or_else(|| {
                numbers
                    .last()
                    .map_or(index + 1, |last| last + index + 1 - numbers.len())
            }),
            None => index + 1,
        }
    }
}

/// One quoted piece of input: where it came from and the exact text. Repeated identical
/// lines collapse into one item with a count and the first/last timestamps seen.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    pub source: String,
    /// 1-based line number in the document.
    pub line: usize,
    pub text: String,
    #[serde(skip_serializing_if = "is_one")]
    pub count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_seen: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_seen: Option<String>,
}

fn is_one(n: &usize) -> bool {
    *n == 1
}

impl Evidence {
    pub fn new(source: impl Into<String>, line: usize, text: impl Into<String>) -> Self {
        Evidence {
            source: source.into(),
            line,
            text: text.into(),
            count: 1,
            first_seen: None,
            last_seen: None,
        }
    }

    pub fn at(mut self, time: Option<&str>) -> Self {
        self.first_seen = time.map(str::to_string);
        self.last_seen = self.first_seen.clone();
        self
    }
}

/// Input that could not be understood: reported with its place, never fatal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputError {
    pub source: String,
    pub line: usize,
    pub message: String,
}

impl InputError {
    /// `source:line`, or the source alone when the error is about the whole input (line 0:
    /// a file that could not be opened at all).
    pub fn location(&self) -> String {
        if self.line == 0 {
            self.source.clone()
        } else {
            format!("{}:{}", self.source, self.line)
        }
    }
}
