//! The log prefilter and streaming scanner (crate `karpenter-why-scan`, re-exported here),
//! with the matcher of every registered rule's signals.

use std::sync::OnceLock;

pub use karpenter_why_scan::*;

/// The matcher for every registered rule's signals and the loggers and fields that date a log
/// (`rules::version`), built once.
pub fn rule_matcher() -> &'static SignalMatcher {
    static MATCHER: OnceLock<SignalMatcher> = OnceLock::new();
    MATCHER.get_or_init(|| SignalMatcher::new(rule_signals()))
}

fn rule_signals() -> impl Iterator<Item = &'static str> {
    crate::rules::all()
        .into_iter()
        .flat_map(|r| r.meta.signals.iter().copied())
        .chain(crate::rules::version::PRE_V0_32_LOGGERS.iter().copied())
        .chain(crate::rules::version::DATING_FIELDS.iter().copied())
}

/// A scanner using every registered rule's signals.
pub fn stream_scanner(label: impl Into<String>) -> StreamScanner<'static> {
    StreamScanner::with_matcher(label, rule_matcher())
}

/// Scans a whole byte buffer with every registered rule's signals (see [`scan_bytes_with`]).
pub fn scan_bytes(label: impl Into<String>, bytes: &[u8]) -> ScanOutput {
    scan_bytes_with(rule_matcher(), label, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchored_search_agrees_with_the_automaton_on_the_catalogue_signals() {
        let signals: Vec<&str> = rule_signals().collect();
        checks::assert_anchored_search_agrees(rule_matcher(), &signals);
    }
}
