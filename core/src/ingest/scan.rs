//! The Karpenter log prefilter, and the streaming scanner built on it.
//!
//! Karpenter logs are mostly INFO noise (`found provisionable pod(s)`, `created nodeclaim`...).
//! A line is parsed fully only when it may matter: it is not a log line at all (describe
//! output, YAML, tables: the segmenter needs those whole), its level is not INFO/DEBUG, it
//! holds a catalogue signal (the `signals` of every registered rule, matched ASCII
//! case-insensitively on the raw bytes, also in their JSON-escaped spellings), or it is the
//! first log line (its `commit`) or the first DEBUG line (KW004) of its document. INFO/DEBUG
//! lines kept only for a signal are bounded: each signal keeps its [`RECENT_PER_SIGNAL`] most
//! recent lines (lifecycle messages such as `created nodeclaim` are signals of some rules and
//! most of a busy log).
//!
//! Finding the lines that hold a signal runs at SIMD speed: a few short anchors, chosen so
//! every pattern holds one and rare in the input's first megabyte, are searched on the
//! lower-cased text (Teddy), and each hit's line is verified with the full automaton.
//!
//! The same decision ([`LogLineFilter`]) runs in ingest and in [`StreamScanner`], so a file
//! streamed through the scanner and the same text pasted whole give identical facts: the
//! scanner keeps exactly the lines ingest would parse, plus the non-log lines.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, Input, Span};
use memchr::memmem;

use crate::document::Document;

/// Lines longer than this are cut when streaming, so memory stays bounded by a constant even
/// for input without newlines; ingest then reports the cut line as malformed.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// How far into a line the level field is looked for: wrappers (timestamps, `kubectl logs
/// --prefix`, CloudWatch columns) put a little text before the JSON object.
const LEVEL_WINDOW: usize = 512;

/// Multi-pattern matcher over raw bytes, ASCII case-insensitive.
#[derive(Debug, Clone)]
pub struct SignalMatcher {
    automaton: AhoCorasick,
    /// The lower-case byte patterns (each signal in each spelling).
    patterns: Vec<Vec<u8>>,
    /// For each pattern, the signal it spells.
    signal_of_pattern: Vec<u32>,
}

impl SignalMatcher {
    /// A matcher for `signals`, each also in the spellings it takes inside JSON strings
    /// (quotes and backslashes escaped, `<>&` as `\u003c`..., non-ASCII as `\uXXXX`), inside
    /// JSON nested in a JSON string (CloudWatch `@message`, Fluent Bit `log`), and inside a
    /// CSV field (quotes doubled).
    pub fn new<'a>(signals: impl IntoIterator<Item = &'a str>) -> Self {
        let mut patterns: Vec<Vec<u8>> = Vec::new();
        let mut signal_of_pattern: Vec<u32> = Vec::new();
        let mut seen_signals: Vec<String> = Vec::new();
        for signal in signals {
            let signal = signal.to_ascii_lowercase();
            if signal.is_empty() {
                continue;
            }
            let id = match seen_signals.iter().position(|s| *s == signal) {
                Some(id) => id,
                None => {
                    seen_signals.push(signal.clone());
                    seen_signals.len() - 1
                }
            } as u32;
            let zap = escape_json(&signal, false, false);
            let variants = [
                zap.clone(),
                escape_json(&signal, true, false),
                escape_json(&signal, true, true),
                escape_json(&zap, false, false),
                signal.replace('"', "\"\""),
                signal,
            ];
            for v in variants {
                let v = v.to_ascii_lowercase().into_bytes();
                if !patterns.contains(&v) {
                    patterns.push(v);
                    signal_of_pattern.push(id);
                }
            }
        }
        let automaton = AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&patterns)
            .or_else(|_| {
                AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(&patterns)
            })
            .unwrap_or_else(|_| AhoCorasick::new(Vec::<String>::new()).expect("empty automaton"));
        SignalMatcher {
            automaton,
            patterns,
            signal_of_pattern,
        }
    }

    /// The matcher for every registered rule's signals, built once.
    pub fn for_rules() -> &'static SignalMatcher {
        static MATCHER: OnceLock<SignalMatcher> = OnceLock::new();
        MATCHER.get_or_init(|| {
            let rules = crate::rules::all();
            SignalMatcher::new(rules.iter().flat_map(|r| r.meta.signals.iter().copied()))
        })
    }

    /// How many byte patterns the signals expanded to.
    pub fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    pub fn is_match(&self, haystack: &[u8]) -> bool {
        !self.patterns.is_empty() && self.automaton.is_match(haystack)
    }

    /// The signal a line holds (the first the automaton reports), as an index.
    pub fn signal_of(&self, line: &[u8]) -> Option<u32> {
        if self.patterns.is_empty() {
            return None;
        }
        self.automaton
            .find(line)
            .map(|m| self.signal_of_pattern[m.pattern().as_usize()])
    }

    /// Anchors for searching text like `sample` quickly: a set of short substrings such that
    /// every pattern contains one, chosen rare in `sample` (so hits, each verified with the
    /// full automaton, stay few), searched with SIMD on the lower-cased text. `None` where no
    /// SIMD searcher exists (wasm32 without simd128), or without patterns.
    pub fn anchors_for(&self, sample: &[u8]) -> Option<Anchors> {
        if self.patterns.is_empty() {
            return None;
        }
        let sample = sample.to_ascii_lowercase();
        let mut windows: Vec<&[u8]> = Vec::new();
        let mut index: HashMap<&[u8], usize> = HashMap::new();
        // For each window, the patterns holding it.
        let mut holders: Vec<Vec<usize>> = Vec::new();
        for (p, pattern) in self.patterns.iter().enumerate() {
            let width = ANCHOR_WIDTH.min(pattern.len());
            for w in pattern.windows(width) {
                let id = *index.entry(w).or_insert_with(|| {
                    windows.push(w);
                    holders.push(Vec::new());
                    windows.len() - 1
                });
                if holders[id].last() != Some(&p) {
                    holders[id].push(p);
                }
            }
        }
        let counter = AhoCorasick::builder().build(&windows).ok()?;
        let mut seen = vec![0usize; windows.len()];
        for m in counter.find_overlapping_iter(&sample) {
            seen[m.pattern().as_usize()] += 1;
        }
        // Greedy cover: each round takes the window covering the most patterns still
        // uncovered per occurrence in the sample (occurrences weigh less and less until the
        // cover fits one SIMD searcher: 32 anchors run twice as fast as 64, and every group
        // beyond the first is one more pass over the text).
        let cover = |rarity: f64| {
            let mut covered = vec![false; self.patterns.len()];
            let mut chosen: Vec<&[u8]> = Vec::new();
            loop {
                let best = (0..windows.len())
                    .filter_map(|w| {
                        let gain = holders[w].iter().filter(|&&p| !covered[p]).count();
                        (gain > 0).then(|| (w, gain as f64 / (1.0 + seen[w] as f64).powf(rarity)))
                    })
                    .max_by(|(a, sa), (b, sb)| sa.total_cmp(sb).then_with(|| b.cmp(a)));
                let Some((best, _)) = best else { break };
                chosen.push(windows[best]);
                for &p in &holders[best] {
                    covered[p] = true;
                }
            }
            chosen
        };
        // Of the covers for a few weightings, keep the one that searches the sample fastest
        // by a simple cost model: a SIMD pass per group of 64 (half the speed above 32
        // anchors) plus a fixed cost per hit (a line to verify).
        let build = |chosen: &[&[u8]]| -> Option<Anchors> {
            let groups = chosen
                .chunks(64)
                .map(group_searcher)
                .collect::<Option<Vec<_>>>()?;
            Some(Anchors {
                groups,
                count: chosen.len(),
            })
        };
        let cost = |anchors: &Anchors| {
            let mut hits = 0usize;
            for group in &anchors.groups {
                let mut at = 0;
                while let Some(hit) = group.find_in(&sample[..], Span::from(at..sample.len())) {
                    hits += 1;
                    at = memchr::memchr(b'\n', &sample[hit.start()..])
                        .map_or(sample.len(), |p| hit.start() + p + 1);
                }
            }
            let per_byte = if anchors.count <= 32 { 1 } else { 2 };
            sample.len() * per_byte * anchors.groups.len() + hits * HIT_COST
        };
        let mut best: Option<(usize, Anchors)> = None;
        for rarity in [1.0, 0.75, 0.5, 0.35, 0.25, 0.15] {
            let anchors = build(&cover(rarity))?;
            let c = cost(&anchors);
            if best.as_ref().is_none_or(|(b, _)| c < *b) {
                best = Some((c, anchors));
            }
        }
        best.map(|(_, anchors)| anchors)
    }

    /// Appends to `out` the start (plus `offset`) of every line of `text` that holds a
    /// pattern, with the signal it holds ([`SignalMatcher::signal_of`]), in order. With
    /// `anchors`, `folded` is scratch for the lower-cased text.
    pub fn signal_lines(
        &self,
        text: &[u8],
        offset: usize,
        anchors: Option<&Anchors>,
        folded: &mut Vec<u8>,
        out: &mut Vec<(usize, u32)>,
    ) {
        if self.patterns.is_empty() {
            return;
        }
        let line_of = |at: usize| {
            let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |p| p + 1);
            let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |p| at + p);
            (start, end)
        };
        let first = out.len();
        match anchors {
            Some(anchors) => {
                lower_case_into(text, folded);
                for group in &anchors.groups {
                    let mut at = 0;
                    while at < folded.len() {
                        let Some(hit) = group.find_in(&folded[..], Span::from(at..folded.len()))
                        else {
                            break;
                        };
                        let (start, end) = line_of(hit.start());
                        if let Some(signal) = self.signal_of(&text[start..end]) {
                            out.push((offset + start, signal));
                        }
                        at = end + 1;
                    }
                }
                out[first..].sort_unstable();
                let mut kept = first;
                for k in first..out.len() {
                    if kept == first || out[kept - 1].0 != out[k].0 {
                        out[kept] = out[k];
                        kept += 1;
                    }
                }
                out.truncate(kept);
            }
            None => {
                let mut at = 0;
                while at < text.len() {
                    let Some(m) = self.automaton.find(Input::new(text).range(at..)) else {
                        break;
                    };
                    let (start, end) = line_of(m.start());
                    if let Some(signal) = self.signal_of(&text[start..end]) {
                        out.push((offset + start, signal));
                    }
                    at = end + 1;
                }
            }
        }
    }
}

/// Width of an anchor: what Teddy fingerprints, so the sample counts measure its hits.
const ANCHOR_WIDTH: usize = 3;

/// A verified hit costs about as much as searching this many bytes (finding the line, running
/// the automaton over it, restarting the SIMD search).
const HIT_COST: usize = 600;

/// Below this size a text is checked line by line with the automaton: choosing anchors would
/// cost more than it saves.
pub const ANCHOR_MIN_TEXT: usize = 256 * 1024;

/// How much text chooses the anchors, and the least a first block must hold to do so.
const ANCHOR_SAMPLE: usize = 1 << 20;
const ANCHOR_SAMPLE_MIN: usize = 64 * 1024;

/// The starts of the lines of `text` holding a signal: with SIMD anchors (chosen on the
/// first megabyte) for large texts, line by line otherwise. The same answer as asking
/// [`SignalMatcher::is_match`] of every line.
pub fn signal_line_starts(matcher: &SignalMatcher, text: &[u8]) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    if text.len() < ANCHOR_MIN_TEXT {
        matcher.signal_lines(text, 0, None, &mut Vec::new(), &mut out);
        return out;
    }
    let anchors = matcher.anchors_for(&text[..text.len().min(ANCHOR_SAMPLE)]);
    let mut folded = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + ANCHOR_SAMPLE).min(text.len());
        if end < text.len() {
            end = match memchr::memrchr(b'\n', &text[start..end]) {
                Some(p) => start + p + 1,
                None => memchr::memchr(b'\n', &text[end..]).map_or(text.len(), |p| end + p + 1),
            };
        }
        matcher.signal_lines(
            &text[start..end],
            start,
            anchors.as_ref(),
            &mut folded,
            &mut out,
        );
        start = end;
    }
    out
}

/// The SIMD searcher of a group of up to 64 anchors: aho-corasick's Teddy, or on WebAssembly
/// (where aho-corasick has none) ours.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
type GroupSearcher = aho_corasick::packed::Searcher;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
type GroupSearcher = super::wasm_teddy::Searcher;

/// `None` where there is no SIMD searcher.
fn group_searcher(anchors: &[&[u8]]) -> Option<GroupSearcher> {
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        use aho_corasick::packed;
        let mut builder = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .builder();
        builder.extend(anchors.iter());
        builder.build()
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        GroupSearcher::new(anchors)
    }
}

/// `text` lower-cased into `folded`, what the anchors are searched in.
fn lower_case_into(text: &[u8], folded: &mut Vec<u8>) {
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    {
        // One pass, no zero-fill: blocks are mostly of one size.
        folded.truncate(text.len());
        if folded.len() < text.len() {
            folded.resize(text.len(), 0);
        }
        for (low, byte) in folded.iter_mut().zip(text) {
            *low = byte.to_ascii_lowercase();
        }
    }
    // The page's build optimises for size: a copy (`memory.copy`) then SIMD, where zero-filling
    // and lower-casing byte by byte cost more than the search (the page scans 50 MB as one
    // block).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        folded.clear();
        folded.extend_from_slice(text);
        super::wasm_teddy::make_ascii_lowercase(folded);
    }
}

/// See [`SignalMatcher::anchors_for`].
#[derive(Debug, Clone)]
pub struct Anchors {
    groups: Vec<GroupSearcher>,
    count: usize,
}

impl Anchors {
    /// How many anchors stand for the patterns.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// `s` as it appears inside a JSON string: quotes and backslashes escaped; `html` also escapes
/// `<`, `>`, `&` (Go's encoding/json); `ascii` writes non-ASCII characters as `\uXXXX`.
fn escape_json(s: &str, html: bool, ascii: bool) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '<' if html => out.push_str("\\u003c"),
            '>' if html => out.push_str("\\u003e"),
            '&' if html => out.push_str("\\u0026"),
            c if ascii && !c.is_ascii() => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// The level word of a line that is certainly a log record, judged from its bytes alone
/// (no parsing): a JSON object (possibly wrapped or prefixed) with a `level` field and a
/// closing brace, or the console format's tab-separated level column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuickLevel<'a> {
    word: &'a [u8],
}

impl QuickLevel<'_> {
    pub fn is_info(&self) -> bool {
        self.word.eq_ignore_ascii_case(b"info")
    }

    pub fn is_debug(&self) -> bool {
        self.word.eq_ignore_ascii_case(b"debug")
    }

    /// INFO and DEBUG lines are noise unless they hold a signal.
    pub fn is_noise(&self) -> bool {
        self.is_info() || self.is_debug()
    }

    /// Upper-case level name, for counting.
    pub fn upper(&self) -> String {
        String::from_utf8_lossy(self.word).to_ascii_uppercase()
    }
}

fn level_finders() -> &'static [memmem::Finder<'static>; 5] {
    static FINDERS: OnceLock<[memmem::Finder<'static>; 5]> = OnceLock::new();
    FINDERS.get_or_init(|| {
        [
            memmem::Finder::new(b"\"level\":\""),
            memmem::Finder::new(b"\"level\": \""),
            memmem::Finder::new(b"\\\"level\\\":\\\""),
            memmem::Finder::new(b"\\\"level\\\": \\\""),
            memmem::Finder::new(b"\"\"level\"\":\"\""),
        ]
    })
}

const LEVEL_WORDS: &[&[u8]] = &[
    b"DEBUG", b"INFO", b"WARN", b"WARNING", b"ERROR", b"DPANIC", b"PANIC", b"FATAL",
];

/// See [`QuickLevel`]. Lines it returns `None` for are "not a log line" to the prefilter.
pub fn quick_level(line: &[u8]) -> Option<QuickLevel<'_>> {
    let line = trim_end(line);
    let last = *line.last()?;
    let head = &line[..line.len().min(LEVEL_WINDOW)];
    // A JSON object closes the line; a CSV field holding one closes with `}"`. (A line of a
    // pretty-printed export ending in `}",` or `}"` is not a record on its own.)
    let csv = line.ends_with(b"}\"");
    if last == b'}' || csv {
        const FAST: &[u8] = b"{\"level\":\"";
        let finders = level_finders();
        let value_start = if !csv && head.starts_with(FAST) {
            Some(FAST.len())
        } else if csv {
            finders[4].find(head).map(|p| p + finders[4].needle().len())
        } else {
            finders[..4]
                .iter()
                .find_map(|f| f.find(head).map(|p| p + f.needle().len()))
        };
        if let Some(start) = value_start {
            let word_len = line[start..]
                .iter()
                .take(16)
                .take_while(|b| b.is_ascii_alphabetic())
                .count();
            if word_len > 0 {
                return Some(QuickLevel {
                    word: &line[start..start + word_len],
                });
            }
            return None;
        }
    }
    // Console encoder: `<time>\t<LEVEL>\t<logger>\t<message>[\t<json fields>]`.
    if line.first().is_some_and(|b| b.is_ascii_whitespace()) {
        return None;
    }
    let window = &line[..line.len().min(160)];
    for tab in memchr::memchr_iter(b'\t', window) {
        let rest = &line[tab + 1..];
        let word_len = rest.iter().take_while(|b| b.is_ascii_uppercase()).count();
        if rest.get(word_len) == Some(&b'\t') && LEVEL_WORDS.contains(&&rest[..word_len]) {
            return Some(QuickLevel {
                word: &rest[..word_len],
            });
        }
    }
    None
}

fn trim_end(line: &[u8]) -> &[u8] {
    let end = line
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |p| p + 1);
    &line[..end]
}

/// `LABEL` of a `==> LABEL <==` line (the convention of `tail`/`head` on several files, and
/// what `kubectl karpenter-why collect` writes between documents).
pub fn header_label(line: &[u8]) -> Option<&[u8]> {
    let line = trim_end(line);
    let inner = line.strip_prefix(b"==> ")?.strip_suffix(b" <==")?;
    let start = inner.iter().position(|b| !b.is_ascii_whitespace())?;
    Some(trim_end(&inner[start..]))
}

/// What the prefilter decided for one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision<'a> {
    /// Not a log line: hand it to the segmenter whole.
    NotLog,
    /// A log line to parse fully.
    KeepLog(QuickLevel<'a>),
    /// An INFO/DEBUG line kept only for the signal it holds: of those, each signal keeps
    /// the [`RECENT_PER_SIGNAL`] most recent of the document part.
    KeepSignal(QuickLevel<'a>),
    /// A noise log line: count it, parse nothing.
    Drop(QuickLevel<'a>),
}

/// How many INFO/DEBUG lines each signal keeps per document part: the most recent ones.
/// Some rules list lifecycle messages as signals (`created nodeclaim`, `launched nodeclaim`,
/// `disrupting node(s)`) to correlate them; those are most of a busy log, and keeping every
/// one would make memory grow with the input. Rules reason about the recent past, which the
/// latest lines of each kind cover.
pub const RECENT_PER_SIGNAL: usize = 1000;

/// The keep/drop decision for log lines, with the little state it needs (first log line and
/// first DEBUG line of the current document part).
#[derive(Debug, Clone, Default)]
pub struct LogLineFilter {
    seen_log: bool,
    seen_debug: bool,
}

impl LogLineFilter {
    /// A `==> label <==` header starts a new document part.
    pub fn reset(&mut self) {
        *self = LogLineFilter::default();
    }

    /// Decides for `line`; `has_signal` is asked only when the answer depends on it, so the
    /// scanner can pass the result of a search it ran over a whole block.
    pub fn decide<'a>(
        &mut self,
        line: &'a [u8],
        has_signal: impl FnOnce() -> bool,
    ) -> Decision<'a> {
        let Some(level) = quick_level(line) else {
            return Decision::NotLog;
        };
        let first_log = !self.seen_log;
        self.seen_log = true;
        let first_debug = level.is_debug() && !self.seen_debug;
        if level.is_debug() {
            self.seen_debug = true;
        }
        if !level.is_noise() || first_log || first_debug {
            Decision::KeepLog(level)
        } else if has_signal() {
            Decision::KeepSignal(level)
        } else {
            Decision::Drop(level)
        }
    }
}

/// Counters of one scan.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanStats {
    pub bytes: u64,
    pub lines: usize,
    pub kept_lines: usize,
    pub omitted_info: usize,
    pub omitted_debug: usize,
    /// Lines longer than [`MAX_LINE_BYTES`], kept cut.
    pub cut_lines: usize,
}

/// What a scan produced: the document of kept lines (with their original line numbers) and
/// the counters.
#[derive(Debug, Clone)]
pub struct ScanOutput {
    pub document: Document,
    pub stats: ScanStats,
}

/// Streams raw bytes (any chunking) and keeps only the lines ingest would look at; memory is
/// the kept lines plus at most one partial line, whatever the input size.
#[derive(Debug)]
pub struct StreamScanner<'m> {
    label: String,
    matcher: &'m SignalMatcher,
    filter: LogLineFilter,
    partial: Vec<u8>,
    partial_cut: bool,
    kept: String,
    line_numbers: Vec<usize>,
    next_line: usize,
    stats: ScanStats,
    anchors: Option<Anchors>,
    anchors_tried: bool,
    /// Scratch: the current block lower-cased, and its lines holding a signal.
    folded: Vec<u8>,
    signal_starts: Vec<(usize, u32)>,
    /// Kept lines of the current document part not yet merged with the signal lines:
    /// their text (one after the other) and (line number, end in `tail`).
    tail: String,
    tail_lines: Vec<(usize, usize)>,
    /// Per signal, its most recent INFO/DEBUG lines of the current part: (line number,
    /// bytes, DEBUG?). Most are pushed out again, so they are decoded only when kept.
    recent: BTreeMap<u32, VecDeque<(usize, Vec<u8>, bool)>>,
}

impl StreamScanner<'static> {
    /// A scanner using every registered rule's signals.
    pub fn new(label: impl Into<String>) -> Self {
        StreamScanner::with_matcher(label, SignalMatcher::for_rules())
    }
}

impl<'m> StreamScanner<'m> {
    pub fn with_matcher(label: impl Into<String>, matcher: &'m SignalMatcher) -> Self {
        StreamScanner {
            label: label.into(),
            matcher,
            filter: LogLineFilter::default(),
            partial: Vec::new(),
            partial_cut: false,
            kept: String::new(),
            line_numbers: Vec::new(),
            next_line: 1,
            stats: ScanStats::default(),
            anchors: None,
            anchors_tried: false,
            folded: Vec::new(),
            signal_starts: Vec::new(),
            tail: String::new(),
            tail_lines: Vec::new(),
            recent: BTreeMap::new(),
        }
    }

    pub fn feed(&mut self, mut bytes: &[u8]) {
        self.stats.bytes += bytes.len() as u64;
        if !self.partial.is_empty() || self.partial_cut {
            match memchr::memchr(b'\n', bytes) {
                Some(nl) => {
                    self.push_partial(&bytes[..nl]);
                    let line = std::mem::take(&mut self.partial);
                    if self.partial_cut {
                        self.stats.cut_lines += 1;
                    }
                    self.partial_cut = false;
                    self.whole_line(&line);
                    self.partial = line;
                    self.partial.clear();
                    bytes = &bytes[nl + 1..];
                }
                None => {
                    self.push_partial(bytes);
                    return;
                }
            }
        }
        let complete = match memchr::memrchr(b'\n', bytes) {
            Some(nl) => nl + 1,
            None => 0,
        };
        self.block(&bytes[..complete]);
        self.push_partial(&bytes[complete..]);
    }

    fn push_partial(&mut self, bytes: &[u8]) {
        let room = MAX_LINE_BYTES.saturating_sub(self.partial.len());
        if bytes.len() > room {
            self.partial_cut = true;
        }
        self.partial
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// Complete lines (`block` ends with a newline). The signal search runs once over the
    /// whole block (SIMD anchors, hits verified), then each line looks its answer up.
    fn block(&mut self, block: &[u8]) {
        if !self.anchors_tried && block.len() >= ANCHOR_SAMPLE_MIN {
            self.anchors_tried = true;
            self.anchors = self
                .matcher
                .anchors_for(&block[..block.len().min(ANCHOR_SAMPLE)]);
        }
        let mut signals = std::mem::take(&mut self.signal_starts);
        signals.clear();
        self.matcher.signal_lines(
            block,
            0,
            self.anchors.as_ref(),
            &mut self.folded,
            &mut signals,
        );
        let mut next_signal = 0;
        let mut start = 0usize;
        for nl in memchr::memchr_iter(b'\n', block) {
            let line = &block[start..nl];
            let line_start = start;
            start = nl + 1;
            while signals
                .get(next_signal)
                .is_some_and(|&(s, _)| s < line_start)
            {
                next_signal += 1;
            }
            if line.len() > MAX_LINE_BYTES {
                self.stats.cut_lines += 1;
                self.whole_line(&line[..MAX_LINE_BYTES]);
                continue;
            }
            let signal = signals
                .get(next_signal)
                .filter(|(s, _)| *s == line_start)
                .map(|&(_, id)| id);
            self.line_with(line, signal);
        }
        self.signal_starts = signals;
    }

    fn whole_line(&mut self, line: &[u8]) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let signal = self.matcher.signal_of(line);
        self.line_with(line, signal);
    }

    fn line_with(&mut self, raw: &[u8], signal: Option<u32>) {
        let number = self.next_line;
        self.next_line += 1;
        self.stats.lines += 1;
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if header_label(line).is_some() {
            self.flush();
            self.filter.reset();
        }
        match self.filter.decide(line, || signal.is_some()) {
            Decision::Drop(level) => self.omit(level.is_debug()),
            Decision::KeepSignal(level) => {
                let ring = self.recent.entry(signal.unwrap_or_default()).or_default();
                let mut text = if ring.len() >= RECENT_PER_SIGNAL {
                    let (_, reused, debug) = ring.pop_front().unwrap_or_default();
                    self.omit(debug);
                    reused
                } else {
                    Vec::new()
                };
                text.clear();
                text.extend_from_slice(line);
                let ring = self.recent.entry(signal.unwrap_or_default()).or_default();
                ring.push_back((number, text, level.is_debug()));
            }
            Decision::NotLog | Decision::KeepLog(_) => {
                self.tail.push_str(&String::from_utf8_lossy(line));
                self.tail_lines.push((number, self.tail.len()));
            }
        }
    }

    fn omit(&mut self, debug: bool) {
        if debug {
            self.stats.omitted_debug += 1;
        } else {
            self.stats.omitted_info += 1;
        }
    }

    /// Merges the current part's kept lines and its recent signal lines, in line order.
    fn flush(&mut self) {
        let mut signal_lines: Vec<(usize, Vec<u8>)> = std::mem::take(&mut self.recent)
            .into_values()
            .flat_map(|ring| ring.into_iter().map(|(n, text, _)| (n, text)))
            .collect();
        signal_lines.sort_unstable_by_key(|(n, _)| *n);
        let mut signal_lines = signal_lines.into_iter().peekable();
        let mut start = 0;
        for &(number, end) in &self.tail_lines {
            while let Some((n, text)) = signal_lines.next_if(|(n, _)| *n < number) {
                self.kept.push_str(&String::from_utf8_lossy(&text));
                self.kept.push('\n');
                self.line_numbers.push(n);
            }
            self.kept.push_str(&self.tail[start..end]);
            self.kept.push('\n');
            self.line_numbers.push(number);
            start = end;
        }
        for (n, text) in signal_lines {
            self.kept.push_str(&String::from_utf8_lossy(&text));
            self.kept.push('\n');
            self.line_numbers.push(n);
        }
        self.tail.clear();
        self.tail_lines.clear();
    }

    pub fn finish(mut self) -> ScanOutput {
        if !self.partial.is_empty() || self.partial_cut {
            if self.partial_cut {
                self.stats.cut_lines += 1;
            }
            let line = std::mem::take(&mut self.partial);
            self.whole_line(&line);
        }
        self.flush();
        self.stats.kept_lines = self.line_numbers.len();
        let mut document = Document::new(self.label, self.kept);
        document.line_numbers = Some(self.line_numbers);
        if self.stats.omitted_info > 0 {
            document
                .omitted_log_lines
                .insert("INFO".to_string(), self.stats.omitted_info);
        }
        if self.stats.omitted_debug > 0 {
            document
                .omitted_log_lines
                .insert("DEBUG".to_string(), self.stats.omitted_debug);
        }
        ScanOutput {
            document,
            stats: self.stats,
        }
    }
}

/// Scans a whole byte buffer (the one-shot form of [`StreamScanner`]).
pub fn scan_bytes(label: impl Into<String>, bytes: &[u8]) -> ScanOutput {
    let mut scanner = StreamScanner::new(label);
    scanner.feed(bytes);
    scanner.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_match_in_their_json_spellings() {
        let m = SignalMatcher::new([
            "\"vpc.amazonaws.com/pod-eni\" was requested",
            "pod didn’t schedule",
            "a > b",
        ]);
        assert!(m.is_match(b"Resource \"vpc.amazonaws.com/pod-eni\" was requested"));
        assert!(
            m.is_match(br#"{"message":"Resource \"vpc.amazonaws.com/pod-eni\" was requested"}"#)
        );
        assert!(m.is_match(br#"{"@message":"{\"error\":\"Resource \\\"vpc.amazonaws.com/pod-eni\\\" was requested\"}"}"#));
        assert!(
            m.is_match(br#"x,"{""e"":""RESOURCE ""vpc.amazonaws.com/pod-eni"" WAS REQUESTED""}""#)
        );
        assert!(m.is_match("Pod didn’t schedule".as_bytes()));
        assert!(m.is_match(br"pod didn\u2019t schedule"));
        assert!(m.is_match(br"a \u003e b"));
        assert!(!m.is_match(b"vpc.amazonaws.com/pod-eni was requested"));
        assert!(!SignalMatcher::new([]).is_match(b"anything"));
    }

    #[test]
    fn quick_level_forms() {
        let level = |s: &str| quick_level(s.as_bytes()).map(|l| l.upper());
        assert_eq!(
            level(r#"{"level":"INFO","message":"x"}"#).as_deref(),
            Some("INFO")
        );
        assert_eq!(
            level(r#"[pod/k/controller] {"level":"DEBUG","message":"x"}  "#).as_deref(),
            Some("DEBUG")
        );
        assert_eq!(
            level(r#"{"log":"{\"level\":\"info\",\"msg\":\"x\"}\n","stream":"stderr"}"#).as_deref(),
            Some("INFO")
        );
        assert_eq!(
            level(r#"t,"{""level"":""ERROR"",""message"":""x""}""#).as_deref(),
            Some("ERROR")
        );
        assert_eq!(
            level("2023-04-21T06:05:00.044Z\tINFO\tcontroller.x\tmsg\t{\"commit\": \"b\"}")
                .as_deref(),
            Some("INFO")
        );
        // Truncated, pretty-printed and other lines are not log lines to the prefilter.
        assert_eq!(level(r#"{"level":"INFO","message":"x"#), None);
        assert_eq!(level(r#"  "@message": "{\"level\":\"INFO\"}","#), None);
        assert_eq!(level("Name:   web-0"), None);
        assert_eq!(level("\tINFO\tindented"), None);
    }

    fn lines_kept(text: &str, signals: &[&str]) -> Vec<usize> {
        let m = SignalMatcher::new(signals.iter().copied());
        let mut scanner = StreamScanner::with_matcher("t", &m);
        scanner.feed(text.as_bytes());
        scanner.finish().document.line_numbers.unwrap()
    }

    #[test]
    fn keeps_what_ingest_needs() {
        let text = [
            r#"{"level":"INFO","message":"first, for its commit"}"#,
            r#"{"level":"INFO","message":"found provisionable pod(s)"}"#,
            r#"{"level":"DEBUG","message":"first debug"}"#,
            r#"{"level":"DEBUG","message":"second debug"}"#,
            r#"{"level":"ERROR","message":"anything at error"}"#,
            r#"{"level":"INFO","message":"could not schedule pod"}"#,
            "Name:  not a log line",
            "==> other.log <==",
            r#"{"level":"INFO","message":"first of the next part"}"#,
            r#"{"level":"INFO","message":"noise"}"#,
        ]
        .join("\n");
        assert_eq!(
            lines_kept(&text, &["could not schedule pod"]),
            vec![1, 3, 5, 6, 7, 8, 9]
        );
    }

    #[test]
    fn each_signal_keeps_its_most_recent_noise_lines() {
        let m = SignalMatcher::new(["created nodeclaim", "found provisionable"]);
        let mut text = String::new();
        for i in 0..2500 {
            text.push_str(&format!(
                "{{\"level\":\"INFO\",\"message\":\"created nodeclaim\",\"n\":{i}}}\n"
            ));
            if i == 10 {
                text.push_str("{\"level\":\"INFO\",\"message\":\"found provisionable pod(s)\"}\n");
                text.push_str("{\"level\":\"ERROR\",\"message\":\"anything\"}\n");
            }
        }
        let mut s = StreamScanner::with_matcher("t", &m);
        s.feed(text.as_bytes());
        let out = s.finish();
        let numbers = out.document.line_numbers.unwrap();
        // The first log line, the rare signal and the error stay; of the frequent signal,
        // the last RECENT_PER_SIGNAL lines.
        assert_eq!(&numbers[..3], &[1, 12, 13]);
        assert_eq!(numbers.len(), 3 + RECENT_PER_SIGNAL);
        assert_eq!(numbers[3], 2502 - RECENT_PER_SIGNAL + 1);
        assert_eq!(*numbers.last().unwrap(), 2502);
        assert_eq!(out.stats.omitted_info, 2500 - 1 - RECENT_PER_SIGNAL);
        assert_eq!(out.stats.kept_lines, numbers.len());
    }

    #[test]
    fn chunking_does_not_change_the_result() {
        let text: String = (0..400)
            .map(|i| match i % 7 {
                0 => format!("{{\"level\":\"ERROR\",\"message\":\"failed {i}\"}}\n"),
                3 => format!("plain text {i}\r\n"),
                5 => format!("{{\"level\":\"INFO\",\"message\":\"signal here {i}\"}}\n"),
                _ => format!("{{\"level\":\"INFO\",\"message\":\"noise {i}\"}}\n"),
            })
            .collect();
        let m = SignalMatcher::new(["signal here"]);
        let whole = {
            let mut s = StreamScanner::with_matcher("t", &m);
            s.feed(text.as_bytes());
            s.finish()
        };
        for chunk in [1, 2, 7, 64, 1000] {
            let mut s = StreamScanner::with_matcher("t", &m);
            for piece in text.as_bytes().chunks(chunk) {
                s.feed(piece);
            }
            let out = s.finish();
            assert_eq!(out.document, whole.document, "chunk {chunk}");
            assert_eq!(out.stats, whole.stats, "chunk {chunk}");
        }
        assert_eq!(whole.stats.lines, 400);
        assert_eq!(whole.stats.omitted_info, 400 - whole.stats.kept_lines);
        assert!(whole.document.text.contains("plain text 3\n"));
        assert!(!whole.document.text.contains('\r'));
    }

    #[test]
    fn an_endless_line_is_cut_not_buffered() {
        let m = SignalMatcher::new([]);
        let mut s = StreamScanner::with_matcher("t", &m);
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..10 {
            s.feed(&chunk);
        }
        let out = s.finish();
        assert_eq!(out.stats.cut_lines, 1);
        assert_eq!(out.document.text.len(), MAX_LINE_BYTES + 1);
    }
}
