//! The Karpenter log prefilter, and the streaming scanner built on it.
//!
//! A crate of its own (the engine, `karpenter-why-core`, re-exports it as `ingest::scan`) so
//! that the web page's module compiles this hot loop for speed while the rest of the engine is
//! compiled for size (`[profile.wasm-release.package.karpenter-why-scan]`): every byte of a
//! paste goes through here, and the rules run on the few lines kept. The matcher is built
//! from the signals the caller passes (core passes every registered rule's).
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
//! every pattern holds one and cheap to search for in the input's first megabyte, are searched
//! on the lower-cased text (Teddy), and each hit is verified by comparing the patterns holding
//! that anchor where they would start. A line holding several signals counts for the one whose
//! match ends first (the lowest signal id among those ending there), in both paths: the
//! anchored search and the automaton's ([`SignalMatcher::signal_of`]).
//!
//! The same decision ([`LogLineFilter`]) runs in ingest and in [`StreamScanner`], so a file
//! streamed through the scanner and the same text pasted whole give identical facts: the
//! scanner keeps exactly the lines ingest would parse, plus the non-log lines.

use std::collections::{HashMap, VecDeque};
use std::sync::OnceLock;

use aho_corasick::automaton::{Automaton, FindOverlappingIter};
use aho_corasick::{dfa, packed, Input, Match, Span};
use memchr::memmem;

pub mod document;
pub mod encoding;
pub mod line_breaks;
#[cfg(any(test, all(target_arch = "wasm32", target_feature = "simd128")))]
pub mod wasm_teddy;

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
    automaton: SignalAutomaton,
    /// The lower-case byte patterns (each signal in each spelling).
    patterns: Vec<Vec<u8>>,
    /// For each pattern, the signal it spells.
    signal_of_pattern: Vec<u32>,
}

/// The signal patterns as one DFA, used directly rather than through `AhoCorasick`: the
/// `AhoCorasick` wrapper picks its automaton at run time, which links the search code of all
/// three kinds into the wasm module; the DFA is the kind it picked here anyway.
#[derive(Debug, Clone)]
struct SignalAutomaton(dfa::DFA);

impl SignalAutomaton {
    fn new(patterns: &[Vec<u8>]) -> Self {
        let build = |patterns: &[Vec<u8>]| {
            dfa::DFA::builder()
                .ascii_case_insensitive(true)
                .build(patterns)
        };
        // The DFA fails to build only past u32 states; the signals are the catalogue's, far
        // from that.
        SignalAutomaton(
            build(patterns)
                .or_else(|_| build(&[]))
                .expect("empty automaton"),
        )
    }

    fn is_match(&self, haystack: &[u8]) -> bool {
        matches!(
            self.0.try_find(&Input::new(haystack).earliest(true)),
            Ok(Some(_))
        )
    }

    fn find(&self, input: Input<'_>) -> Option<Match> {
        self.0.try_find(&input).ok().flatten()
    }

    /// Standard match semantics and unanchored starts, as built, make this infallible.
    fn find_overlapping_iter<'a, 'h>(
        &'a self,
        haystack: &'h [u8],
    ) -> FindOverlappingIter<'a, 'h, dfa::DFA> {
        self.0
            .try_find_overlapping_iter(Input::new(haystack))
            .expect("standard unanchored automaton")
    }
}

impl SignalMatcher {
    /// A matcher for `signals`, each also in the spellings it takes inside JSON strings
    /// (quotes and backslashes escaped, `<>&` as `\u003c`..., non-ASCII as `\u` and four hex digits), inside
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
        let automaton = SignalAutomaton::new(&patterns);
        SignalMatcher {
            automaton,
            patterns,
            signal_of_pattern,
        }
    }

    /// How many byte patterns the signals expanded to.
    pub fn pattern_count(&self) -> usize {
        self.patterns.len()
    }

    pub fn is_match(&self, haystack: &[u8]) -> bool {
        !self.patterns.is_empty() && self.automaton.is_match(haystack)
    }

    /// The signal a line holds, as an index: of the matches that end first in the line, the
    /// one of the lowest signal (the first in catalogue order). The anchored search of
    /// [`SignalMatcher::signal_lines`] picks the same one, so a line counts for the same signal
    /// whether it was pasted or streamed.
    pub fn signal_of(&self, line: &[u8]) -> Option<u32> {
        if self.patterns.is_empty() {
            return None;
        }
        let mut matches = self.automaton.find_overlapping_iter(line);
        let first = matches.next()?;
        let mut signal = self.signal_of_pattern[first.pattern().as_usize()];
        // Overlapping matches come in the order they end.
        for m in matches.take_while(|m| m.end() == first.end()) {
            signal = signal.min(self.signal_of_pattern[m.pattern().as_usize()]);
        }
        Some(signal)
    }

    /// Anchors for searching text like `sample` quickly: a set of short substrings such that
    /// every pattern contains one, searched with SIMD on the lower-cased text; a hit is
    /// verified by comparing the patterns holding that anchor where they would start. Chosen
    /// for `sample`: rare in it, and few (a SIMD pass slows down with each one). `None` where
    /// no SIMD searcher exists (wasm32), or without patterns.
    pub fn anchors_for(&self, sample: &[u8]) -> Option<Anchors> {
        self.anchors_tuned(sample, &ANCHOR_WIDTHS, &ANCHOR_RARITIES, CostModel::DEFAULT)
    }

    fn anchors_tuned(
        &self,
        sample: &[u8],
        widths: &[usize],
        rarities: &[f64],
        model: CostModel,
    ) -> Option<Anchors> {
        // A pattern holding a line break never matches inside a line.
        let anchored: Vec<usize> = (0..self.patterns.len())
            .filter(|&p| !self.patterns[p].contains(&b'\n'))
            .collect();
        let shortest = anchored.iter().map(|&p| self.patterns[p].len()).min()?;
        let sample = sample[..sample.len().min(COST_SAMPLE)].to_ascii_lowercase();
        let mut freq = [0u32; 256];
        for &b in &sample {
            freq[usize::from(b)] += 1;
        }
        let mut best: Option<(usize, Anchors)> = None;
        let mut widths: Vec<usize> = widths
            .iter()
            .map(|&w| w.clamp(1, shortest.min(4)))
            .collect();
        widths.dedup();
        for width in widths {
            let mut windows: Vec<&[u8]> = Vec::new();
            let mut index: HashMap<&[u8], usize> = HashMap::new();
            // For each window, the patterns holding it, and where.
            let mut holders: Vec<Vec<usize>> = Vec::new();
            let mut places: Vec<Vec<(u32, u32)>> = Vec::new();
            for &p in &anchored {
                for (offset, w) in self.patterns[p].windows(width).enumerate() {
                    let id = *index.entry(w).or_insert_with(|| {
                        windows.push(w);
                        holders.push(Vec::new());
                        places.push(Vec::new());
                        windows.len() - 1
                    });
                    if holders[id].last() != Some(&p) {
                        holders[id].push(p);
                    }
                    places[id].push((p as u32, offset as u32));
                }
            }
            let seen = count_windows(&windows, width, &sample);
            let mut tried: Vec<Vec<usize>> = Vec::new();
            for &rarity in rarities {
                let chosen = greedy_cover(&holders, &seen, rarity, self.patterns.len());
                if tried.contains(&chosen) {
                    continue;
                }
                let anchors = build_anchors(&chosen, &windows, &places, width, &freq)?;
                let cost = self.search_cost(&anchors, &sample, model);
                if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                    best = Some((cost, anchors));
                }
                tried.push(chosen);
            }
        }
        best.map(|(_, anchors)| anchors)
    }

    /// What searching `sample` with `anchors` costs ([`CostModel`]): the scan itself (the
    /// bytes not skipped after a line's signal is found), the SIMD fingerprint's false alarms
    /// (counted on a part of the sample), the hits and the patterns compared at them.
    fn search_cost(&self, anchors: &Anchors, sample: &[u8], model: CostModel) -> usize {
        let mut found = Vec::new();
        let mut cost = 0;
        for group in &anchors.groups {
            let stats = self.search_group(group, anchors.width, sample, &mut found);
            let some = &sample[..sample.len().min(ALARM_SAMPLE)];
            let alarms = group.searcher.model.alarms(some) as u128 * stats.scanned as u128
                / some.len().max(1) as u128;
            cost += stats.scanned * model.byte
                + alarms as usize * model.alarm
                + stats.hits * model.hit
                + stats.compared * model.compare;
        }
        cost
    }

    /// One group's pass over `folded`: pushes (line start, end of its signal's match, signal)
    /// for each line where the group finds a signal.
    fn search_group(
        &self,
        group: &AnchorGroup,
        width: usize,
        folded: &[u8],
        found: &mut Vec<(usize, usize, u32)>,
    ) -> GroupStats {
        let mut stats = GroupStats::default();
        let len = folded.len();
        let mut at = 0;
        while at < len {
            let Some((h, anchor)) = group.searcher.find_in(folded, at, len) else {
                break;
            };
            stats.hits += 1;
            stats.compared += group.holders[anchor].len();
            let Some(mut best) = self.verify(group, folded, anchor, h) else {
                stats.scanned += h + 1 - at;
                at = h + 1;
                continue;
            };
            // A match ending before `best` would hold an anchor of its own inside it, after
            // `h` (`h` is the first anchor of the line that verified).
            let mut next = h + 1;
            while next + width <= best.0 {
                let Some((other_at, anchor)) = group.searcher.find_in(folded, next, best.0) else {
                    break;
                };
                stats.hits += 1;
                stats.compared += group.holders[anchor].len();
                if let Some(other) = self.verify(group, folded, anchor, other_at) {
                    best = best.min(other);
                }
                next = other_at + 1;
            }
            let start = memchr::memrchr(b'\n', &folded[..h]).map_or(0, |p| p + 1);
            let end = memchr::memchr(b'\n', &folded[best.0..]).map_or(len, |p| best.0 + p);
            found.push((start, best.0, best.1));
            stats.scanned += best.0 - at;
            at = end + 1;
        }
        stats.scanned += len.saturating_sub(at);
        stats
    }

    /// The match, of the patterns holding the group's `anchor` at `at`, that ends first (the
    /// lowest signal of those): (end, signal).
    fn verify(
        &self,
        group: &AnchorGroup,
        folded: &[u8],
        anchor: usize,
        at: usize,
    ) -> Option<(usize, u32)> {
        let mut best: Option<(usize, u32)> = None;
        for &(p, offset) in &group.holders[anchor] {
            let Some(start) = at.checked_sub(offset as usize) else {
                continue;
            };
            let pattern = &self.patterns[p as usize];
            let Some(text) = folded.get(start..start + pattern.len()) else {
                continue;
            };
            // Most patterns sharing an anchor differ at their ends: look there first.
            if text.last() == pattern.last() && text.first() == pattern.first() && text == pattern {
                let this = (start + pattern.len(), self.signal_of_pattern[p as usize]);
                best = Some(best.map_or(this, |b| b.min(this)));
            }
        }
        best
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
        match anchors {
            Some(anchors) => {
                teddy::fold(text, folded);
                let mut found = Vec::new();
                for group in &anchors.groups {
                    self.search_group(group, anchors.width, folded, &mut found);
                }
                if anchors.groups.len() > 1 {
                    // Each group found, per line, the first match among those its anchors
                    // hold; the line's is the first of these.
                    found.sort_unstable();
                    found.dedup_by_key(|(start, _, _)| *start);
                }
                out.extend(
                    found
                        .iter()
                        .map(|&(start, _, signal)| (offset + start, signal)),
                );
            }
            None => {
                let line_of = |at: usize| {
                    let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |p| p + 1);
                    let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |p| at + p);
                    (start, end)
                };
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

#[derive(Debug, Default)]
struct GroupStats {
    /// Bytes the SIMD search went over (not skipped after a line's signal was found).
    scanned: usize,
    /// Anchor hits verified.
    hits: usize,
    /// Patterns compared at those hits.
    compared: usize,
}

/// How greedy covers weigh an anchor's occurrences in the sample, from "rare anchors" (1) to
/// "few anchors" (0); the cost model picks among the covers.
const ANCHOR_RARITIES: [f64; 3] = [1.0, 0.5, 0.25];

/// Anchor widths tried: 4 bytes make rarer anchors and fewer false alarms, 3 bytes fewer
/// anchors.
const ANCHOR_WIDTHS: [usize; 2] = [3, 4];

/// Costs of an anchored search, in instructions (fitted with callgrind on the benchmark's log).
#[derive(Debug, Clone, Copy)]
struct CostModel {
    /// A byte searched (the SIMD pass, lower-casing, skipping the rest of a line).
    byte: usize,
    /// A false alarm of the SIMD fingerprint (per bucket to check at a position).
    alarm: usize,
    /// An anchor hit: the search stops, it restarts.
    hit: usize,
    /// A pattern compared at a hit.
    compare: usize,
}

impl CostModel {
    const DEFAULT: CostModel = CostModel {
        byte: 3,
        alarm: 45,
        hit: 650,
        compare: 40,
    };
}

/// Anchors of the `chosen` windows, with the places of each in the patterns.
fn build_anchors(
    chosen: &[usize],
    windows: &[&[u8]],
    places: &[Vec<(u32, u32)>],
    width: usize,
    freq: &[u32; 256],
) -> Option<Anchors> {
    let groups = chosen
        .chunks(64)
        .map(|group| {
            let words: Vec<&[u8]> = group.iter().map(|&w| windows[w]).collect();
            Some(AnchorGroup {
                searcher: AnchorSearcher::new(&words, width, freq)?,
                holders: group.iter().map(|&w| places[w].clone()).collect(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Anchors {
        groups,
        width,
        count: chosen.len(),
    })
}

/// How much of the sample the cost model searches, and how much it counts alarms on.
const COST_SAMPLE: usize = 256 * 1024;
const ALARM_SAMPLE: usize = 64 * 1024;

/// How often each of `windows` (all `width` bytes long, at most 4) occurs in `text`.
fn count_windows(windows: &[&[u8]], width: usize, text: &[u8]) -> Vec<usize> {
    // Open addressing on the window as a word: a hash map's hashing costs more than the rest.
    let bits = (windows.len() * 4)
        .next_power_of_two()
        .trailing_zeros()
        .max(4);
    let slot = |key: u64| (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize;
    let mut table: Vec<(u64, usize)> = vec![(u64::MAX, 0); 1 << bits];
    let key_of = |w: &[u8]| w.iter().rev().fold(0u64, |k, &b| k << 8 | u64::from(b));
    for (i, w) in windows.iter().enumerate() {
        let key = key_of(w);
        let mut at = slot(key);
        while table[at].0 != u64::MAX && table[at].0 != key {
            at = (at + 1) & ((1 << bits) - 1);
        }
        table[at] = (key, i);
    }
    let mut seen = vec![0usize; windows.len()];
    let Some(first) = text.get(..width.saturating_sub(1)) else {
        return seen;
    };
    let shift = 8 * (width as u32 - 1);
    let mut key = key_of(first) << 8;
    for &b in &text[first.len()..] {
        key = key >> 8 | u64::from(b) << shift;
        let mut at = slot(key);
        loop {
            let (k, i) = table[at];
            if k == key {
                seen[i] += 1;
                break;
            }
            if k == u64::MAX {
                break;
            }
            at = (at + 1) & ((1 << bits) - 1);
        }
    }
    seen
}

/// Greedy set cover: each round takes the window covering the most patterns still uncovered
/// per occurrence in the sample (`rarity` weighs occurrences: the lower, the fewer anchors
/// the cover needs). Lazy: a window's score only drops, so a stale top is rescored and put
/// back.
fn greedy_cover(
    holders: &[Vec<usize>],
    seen: &[usize],
    rarity: f64,
    patterns: usize,
) -> Vec<usize> {
    let weight: Vec<f64> = seen
        .iter()
        .map(|&s| (1.0 + s as f64).powf(rarity))
        .collect();
    let mut covered = vec![false; patterns];
    let score = |w: usize, covered: &[bool]| {
        let gain = holders[w].iter().filter(|&&p| !covered[p]).count();
        gain as f64 / weight[w]
    };
    // Scores are positive, so their bits order like them; ties go to the first window.
    let mut heap: std::collections::BinaryHeap<(u64, std::cmp::Reverse<usize>)> = (0..holders
        .len())
        .filter(|&w| !holders[w].is_empty())
        .map(|w| (score(w, &covered).to_bits(), std::cmp::Reverse(w)))
        .collect();
    let mut chosen = Vec::new();
    while let Some((top, std::cmp::Reverse(w))) = heap.pop() {
        let now = score(w, &covered);
        if now <= 0.0 {
            continue;
        }
        if now.to_bits() < top {
            heap.push((now.to_bits(), std::cmp::Reverse(w)));
            continue;
        }
        chosen.push(w);
        for &p in &holders[w] {
            covered[p] = true;
        }
    }
    chosen
}

/// Below this size a text is checked line by line with the automaton: choosing anchors would
/// cost more than it saves.
pub const ANCHOR_MIN_TEXT: usize = 256 * 1024;

/// How much text chooses the anchors, and the least a first block must hold to do so.
const ANCHOR_SAMPLE: usize = 1 << 20;
const ANCHOR_SAMPLE_MIN: usize = 64 * 1024;

/// The starts of the lines of `text` holding a signal: with SIMD anchors (chosen on the
/// first megabyte) for large texts, line by line otherwise. The same answer as asking
/// [`SignalMatcher::signal_of`] of every line.
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

/// See [`SignalMatcher::anchors_for`].
#[derive(Debug, Clone)]
pub struct Anchors {
    groups: Vec<AnchorGroup>,
    /// Every anchor is this long, so two never hit at the same place.
    width: usize,
    count: usize,
}

/// Up to 64 anchors, searched in one pass.
#[derive(Debug, Clone)]
struct AnchorGroup {
    searcher: AnchorSearcher,
    /// For each anchor, the patterns holding it: (pattern, where the anchor is in it).
    holders: Vec<Vec<(u32, u32)>>,
}

/// Finds anchors (exactly: the text is lower-cased first). Teddy where it runs on SIMD,
/// aho-corasick's packed searcher elsewhere (its own Teddy on other CPUs).
#[derive(Debug, Clone)]
struct AnchorSearcher {
    /// Also what the cost model counts alarms with.
    model: teddy::Teddy,
    packed: Option<packed::Searcher>,
}

impl AnchorSearcher {
    fn new(anchors: &[&[u8]], width: usize, freq: &[u32; 256]) -> Option<AnchorSearcher> {
        let model = teddy::Teddy::new(anchors, width, freq)?;
        let packed = if model.is_fast() {
            None
        } else {
            let mut builder = packed::Config::new()
                .match_kind(packed::MatchKind::LeftmostFirst)
                .builder();
            builder.extend(anchors.iter());
            Some(builder.build()?)
        };
        Some(AnchorSearcher { model, packed })
    }

    /// The leftmost anchor inside `haystack[start..end]`: (where, which).
    fn find_in(&self, haystack: &[u8], start: usize, end: usize) -> Option<(usize, usize)> {
        match &self.packed {
            Some(packed) => packed
                .find_in(haystack, Span::from(start..end))
                .map(|m| (m.start(), m.pattern().as_usize())),
            None => self
                .model
                .find_in(haystack, start, end)
                .map(|(at, anchor)| (at, anchor as usize)),
        }
    }
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

/// The SIMD anchor search: Teddy (Hyperscan's multi-substring fingerprint, as in
/// aho-corasick's `packed`), written here so its buckets and its cost can be chosen for the
/// anchors: every anchor has the same width (at most 4 bytes), each of 16 buckets holds a few,
/// and a 32-byte step looks up the nibbles of 4 shifted loads in per-bucket tables; a
/// position whose bytes may start an anchor of some bucket (an "alarm") is then compared
/// with that bucket's anchors. AVX2 where the CPU has it, WebAssembly SIMD in the web page
/// (`wasm_teddy`); elsewhere the same tables, a byte at a time (slow: [`AnchorSearcher`]
/// prefers aho-corasick's there).
mod teddy {
    pub const BUCKETS: usize = 16;

    #[derive(Debug, Clone)]
    pub struct Teddy {
        width: usize,
        /// Per byte of an anchor: for each byte value, the buckets with an anchor having it
        /// there (what the nibble tables give, byte-wise).
        table: [[u16; 256]; 4],
        /// Per byte of an anchor: the buckets by low and by high nibble, buckets 0-7 and 8-15
        /// apart (a SIMD lane holds 8).
        lo: [[[u8; 16]; 2]; 4],
        hi: [[[u8; 16]; 2]; 4],
        /// Per bucket: its anchors as little-endian words, with their index.
        buckets: [Vec<(u32, u32)>; BUCKETS],
        #[cfg(target_arch = "x86_64")]
        avx2: bool,
    }

    /// `dst` = `src` lower-cased (ASCII), at SIMD speed where the CPU allows.
    pub fn fold(src: &[u8], dst: &mut Vec<u8>) {
        // The page's build optimises for size, which leaves byte loops unvectorised: a copy
        // (`memory.copy`), then SIMD.
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            dst.clear();
            dst.extend_from_slice(src);
            crate::wasm_teddy::make_ascii_lowercase(dst);
        }
        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        {
            // One pass, no zero-fill: blocks are mostly of one size.
            dst.truncate(src.len());
            if dst.len() < src.len() {
                dst.resize(src.len(), 0);
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                unsafe { fold_avx2(src, dst) };
                return;
            }
            fold_bytes(src, dst);
        }
    }

    /// The same loop, compiled for AVX2 (the baseline x86-64 target has only SSE2).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn fold_avx2(src: &[u8], dst: &mut [u8]) {
        fold_bytes(src, dst);
    }

    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
    #[inline(always)]
    fn fold_bytes(src: &[u8], dst: &mut [u8]) {
        for (low, byte) in dst.iter_mut().zip(src) {
            *low = byte.to_ascii_lowercase();
        }
    }

    /// `width` (1 to 4) bytes at `at` as a little-endian word.
    fn word(bytes: &[u8], at: usize, width: usize) -> u32 {
        let mut w = [0u8; 4];
        w[..width].copy_from_slice(&bytes[at..at + width]);
        u32::from_le_bytes(w)
    }

    impl Teddy {
        /// `anchors` all `width` bytes long (1 to 4), distinct; `freq` counts each byte value
        /// in text like the one to search, to put anchors whose nibbles combine into
        /// common bytes in different buckets.
        pub fn new(anchors: &[&[u8]], width: usize, freq: &[u32; 256]) -> Option<Teddy> {
            if !(1..=4).contains(&width) || anchors.iter().any(|a| a.len() != width) {
                return None;
            }
            let mut t = Teddy {
                width,
                table: [[0; 256]; 4],
                lo: [[[0; 16]; 2]; 4],
                hi: [[[0; 16]; 2]; 4],
                buckets: Default::default(),
                #[cfg(target_arch = "x86_64")]
                avx2: std::arch::is_x86_feature_detected!("avx2"),
            };
            // Per bucket and anchor byte: the low and high nibbles present.
            let mut nibbles = [[(0u16, 0u16); 4]; BUCKETS];
            // How likely a byte of the text fires all the bytes of a bucket's fingerprint
            // (as if bytes were independent): what its alarms grow with.
            let rate = |nibbles: &[(u16, u16); 4]| {
                let mut rate = 1.0;
                for &(lo, hi) in &nibbles[..width] {
                    let mut fired = 0u64;
                    for h in (0..16).filter(|h| hi >> h & 1 == 1) {
                        for l in (0..16).filter(|l| lo >> l & 1 == 1) {
                            fired += u64::from(freq[h << 4 | l]);
                        }
                    }
                    rate *= fired as f64;
                }
                rate
            };
            for (index, anchor) in anchors.iter().enumerate() {
                let with = |bucket: usize| {
                    let mut n = nibbles[bucket];
                    for (j, &byte) in anchor.iter().enumerate() {
                        n[j].0 |= 1 << (byte & 15);
                        n[j].1 |= 1 << (byte >> 4);
                    }
                    n
                };
                let bucket = (0..BUCKETS)
                    .map(|b| (b, rate(&with(b)) - rate(&nibbles[b])))
                    .min_by(|(a, ca), (b, cb)| {
                        ca.total_cmp(cb)
                            .then(t.buckets[*a].len().cmp(&t.buckets[*b].len()))
                    })
                    .map_or(0, |(b, _)| b);
                nibbles[bucket] = with(bucket);
                t.buckets[bucket].push((word(anchor, 0, width), index as u32));
                for (j, &byte) in anchor.iter().enumerate() {
                    t.lo[j][bucket / 8][usize::from(byte & 15)] |= 1 << (bucket % 8);
                    t.hi[j][bucket / 8][usize::from(byte >> 4)] |= 1 << (bucket % 8);
                }
            }
            for j in 0..width {
                for b in 0..256 {
                    let half = |h: usize| u16::from(t.lo[j][h][b & 15] & t.hi[j][h][b >> 4]);
                    t.table[j][b] = half(0) | half(1) << 8;
                }
            }
            Some(t)
        }

        /// How many (position, bucket) alarms searching `text` raises.
        pub fn alarms(&self, text: &[u8]) -> usize {
            match self.width {
                1 => self.alarms_of::<1>(text),
                2 => self.alarms_of::<2>(text),
                3 => self.alarms_of::<3>(text),
                _ => self.alarms_of::<4>(text),
            }
        }

        fn alarms_of<const W: usize>(&self, text: &[u8]) -> usize {
            text.windows(W)
                .map(|w| {
                    let set = (self.table.iter().zip(w))
                        .fold(u16::MAX, |set, (table, &b)| set & table[usize::from(b)]);
                    set.count_ones() as usize
                })
                .sum()
        }

        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        fn fingerprint(&self, bytes: &[u8], at: usize) -> u16 {
            let mut set = self.table[0][usize::from(bytes[at])];
            for j in 1..self.width {
                set &= self.table[j][usize::from(bytes[at + j])];
            }
            set
        }

        /// The anchor at `at`, if one of the buckets in `set` holds it.
        fn verify(&self, haystack: &[u8], at: usize, mut set: u16) -> Option<u32> {
            let key = word(haystack, at, self.width);
            while set != 0 {
                let bucket = set.trailing_zeros() as usize;
                set &= set - 1;
                if let Some(&(_, anchor)) = self.buckets[bucket].iter().find(|(k, _)| *k == key) {
                    return Some(anchor);
                }
            }
            None
        }

        /// The leftmost anchor inside `haystack[start..end]`: (where, which).
        pub fn find_in(&self, haystack: &[u8], start: usize, end: usize) -> Option<(usize, u32)> {
            let end = end.min(haystack.len());
            #[cfg(target_arch = "x86_64")]
            if self.avx2 {
                // SAFETY: the CPU has AVX2.
                return unsafe {
                    match self.width {
                        1 => self.find_avx2::<1>(haystack, start, end),
                        2 => self.find_avx2::<2>(haystack, start, end),
                        3 => self.find_avx2::<3>(haystack, start, end),
                        _ => self.find_avx2::<4>(haystack, start, end),
                    }
                };
            }
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            return self.find_simd128(haystack, start, end);
            #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
            self.find_bytewise(haystack, start, end)
        }

        /// [`Teddy::find_in`] with WebAssembly SIMD (the web page).
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        fn find_simd128(&self, haystack: &[u8], start: usize, end: usize) -> Option<(usize, u32)> {
            use crate::wasm_teddy::find;
            let check = |at: usize, set: u16| self.verify(haystack, at, set).map(|a| (at, a));
            let (lo, hi) = (&self.lo, &self.hi);
            match self.width {
                1 => find::<_, 1>(lo, hi, haystack, start, end, check),
                2 => find::<_, 2>(lo, hi, haystack, start, end, check),
                3 => find::<_, 3>(lo, hi, haystack, start, end, check),
                _ => find::<_, 4>(lo, hi, haystack, start, end, check),
            }
        }

        #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
        fn find_bytewise(&self, haystack: &[u8], start: usize, end: usize) -> Option<(usize, u32)> {
            let last = end.checked_sub(self.width)?;
            (start..=last).find_map(|at| {
                let set = self.fingerprint(haystack, at);
                if set == 0 {
                    return None;
                }
                self.verify(haystack, at, set).map(|anchor| (at, anchor))
            })
        }

        /// Whether this searcher runs at SIMD speed on this CPU.
        pub fn is_fast(&self) -> bool {
            #[cfg(target_arch = "x86_64")]
            return self.avx2;
            #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
            return true;
            #[cfg(not(any(
                target_arch = "x86_64",
                all(target_arch = "wasm32", target_feature = "simd128")
            )))]
            false
        }

        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        unsafe fn find_avx2<const W: usize>(
            &self,
            haystack: &[u8],
            start: usize,
            end: usize,
        ) -> Option<(usize, u32)> {
            use std::arch::x86_64::*;
            let nibble = _mm256_set1_epi8(0x0f);
            let zero = _mm256_setzero_si256();
            let table = |t: &[u8; 16]| {
                // SAFETY: `t` holds the 16 bytes read.
                _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(t.as_ptr().cast()) })
            };
            let lo: [[__m256i; 2]; W] =
                std::array::from_fn(|j| [table(&self.lo[j][0]), table(&self.lo[j][1])]);
            let hi: [[__m256i; 2]; W] =
                std::array::from_fn(|j| [table(&self.hi[j][0]), table(&self.hi[j][1])]);
            // Every step reads 32 + W - 1 bytes; at the end of the span (or for a short
            // span) the step moves back inside the haystack and ignores lanes already seen
            // or past the span.
            let step = 32 + W - 1;
            if haystack.len() < step {
                return self.find_bytewise(haystack, start, end);
            }
            let mut at = start;
            while at + W <= end {
                let chunk = at.min(haystack.len() - step);
                let first = at - chunk;
                let last = (end - W - chunk).min(31);
                let lanes_in_span = ((1u64 << (last + 1)) - (1u64 << first)) as u32;
                let mut low = _mm256_set1_epi8(-1);
                let mut high = _mm256_set1_epi8(-1);
                for j in 0..W {
                    // SAFETY: chunk + j + 32 <= chunk + step <= haystack.len().
                    let v = unsafe { _mm256_loadu_si256(haystack.as_ptr().add(chunk + j).cast()) };
                    let lo_nibbles = _mm256_and_si256(v, nibble);
                    let hi_nibbles = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
                    low = _mm256_and_si256(
                        low,
                        _mm256_and_si256(
                            _mm256_shuffle_epi8(lo[j][0], lo_nibbles),
                            _mm256_shuffle_epi8(hi[j][0], hi_nibbles),
                        ),
                    );
                    high = _mm256_and_si256(
                        high,
                        _mm256_and_si256(
                            _mm256_shuffle_epi8(lo[j][1], lo_nibbles),
                            _mm256_shuffle_epi8(hi[j][1], hi_nibbles),
                        ),
                    );
                }
                let any = _mm256_or_si256(low, high);
                let mut alarms =
                    !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(any, zero)) as u32) & lanes_in_span;
                if alarms != 0 {
                    let mut lanes = [[0u8; 32]; 2];
                    // SAFETY: `lanes` holds the 64 bytes written.
                    unsafe {
                        _mm256_storeu_si256(lanes[0].as_mut_ptr().cast(), low);
                        _mm256_storeu_si256(lanes[1].as_mut_ptr().cast(), high);
                    }
                    while alarms != 0 {
                        let lane = alarms.trailing_zeros() as usize;
                        alarms &= alarms - 1;
                        let set = u16::from(lanes[0][lane]) | u16::from(lanes[1][lane]) << 8;
                        if let Some(anchor) = self.verify(haystack, chunk + lane, set) {
                            return Some((chunk + lane, anchor));
                        }
                    }
                }
                at = chunk + 32;
            }
            None
        }
    }
}

/// `s` as it appears inside a JSON string: quotes and backslashes escaped; `html` also escapes
/// `<`, `>`, `&` (Go's encoding/json); `ascii` writes non-ASCII characters as `\u` escapes.
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
    other_component: bool,
    /// A console line without its JSON fields at the end (Karpenter's logger always adds
    /// `commit`): the record may go on in the next line (a message with a line break, a
    /// terminal's hard wrap), which only the segmenter joins.
    unfinished: bool,
}

impl QuickLevel<'_> {
    /// A JSON record with `ts` right after `level`: zap's default encoder, which the VPC CNI
    /// (ipamd), the load balancer controller and other controller-runtime programs keep.
    /// Karpenter's encoder writes `time` there (see `foreign_log_line` in core's rules).
    pub fn is_other_component(&self) -> bool {
        self.other_component
    }

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
                let after = &line[start + word_len..];
                return Some(QuickLevel {
                    word: &line[start..start + word_len],
                    unfinished: false,
                    other_component: [&b"\",\"ts\":"[..], b"\", \"ts\":", b"\\\",\\\"ts\\\":"]
                        .iter()
                        .any(|key| after.starts_with(key)),
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
                other_component: false,
                unfinished: last != b'}',
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
        // Another component's DEBUG line says nothing of Karpenter's log level.
        let karpenter_debug = level.is_debug() && !level.is_other_component();
        let first_debug = karpenter_debug && !self.seen_debug;
        if karpenter_debug {
            self.seen_debug = true;
        }
        // An unfinished line is kept: dropped, the rest of its record would read as text.
        if !level.is_noise() || first_log || first_debug || level.unfinished {
            Decision::KeepLog(level)
        } else if has_signal() {
            Decision::KeepSignal(level)
        } else {
            Decision::Drop(level)
        }
    }
}

/// Whether `line` holds a time of day (`08:01:02`) in its first 160 bytes, where every log
/// format and prefix puts it: two such lines that are the same are one line pasted twice.
pub fn has_time_of_day(line: &[u8]) -> bool {
    line[..line.len().min(160)].windows(8).any(|w| {
        w[2] == b':' && w[5] == b':' && [0, 1, 3, 4, 6, 7].iter().all(|&k| w[k].is_ascii_digit())
    })
}

/// What a left-out noise line counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Noise {
    Info,
    Debug,
    OtherComponent,
}

impl Noise {
    fn of(level: &QuickLevel<'_>) -> Noise {
        if level.is_other_component() {
            Noise::OtherComponent
        } else if level.is_debug() {
            Noise::Debug
        } else {
            Noise::Info
        }
    }
}

fn count_omitted(stats: &mut ScanStats, noise: Noise) {
    match noise {
        Noise::Info => stats.omitted_info += 1,
        Noise::Debug => stats.omitted_debug += 1,
        Noise::OtherComponent => stats.omitted_other += 1,
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
    /// Noise lines of another component's JSON log (see [`QuickLevel::is_other_component`]),
    /// left out and not counted as Karpenter's.
    pub omitted_other: usize,
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
    recent: Vec<VecDeque<(usize, Vec<u8>, Noise)>>,
    transcoder: encoding::Transcoder,
    line_breaks: line_breaks::LineBreaks,
    /// Hashes of the timestamped lines left out so far ([`Self::omit`]).
    omitted_hashes: std::collections::HashSet<u64>,
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
            recent: Vec::new(),
            transcoder: encoding::Transcoder::default(),
            line_breaks: line_breaks::LineBreaks::default(),
            omitted_hashes: std::collections::HashSet::new(),
        }
    }

    /// Raw bytes of the input, in any encoding the transcoder knows (UTF-8, UTF-16 with or
    /// without a byte-order mark).
    pub fn feed(&mut self, bytes: &[u8]) {
        self.stats.bytes += bytes.len() as u64;
        let mut transcoder = std::mem::take(&mut self.transcoder);
        let mut breaks = std::mem::take(&mut self.line_breaks);
        transcoder.push(bytes, &mut |utf8| {
            breaks.push(utf8, &mut |fixed| self.feed_utf8(fixed))
        });
        self.transcoder = transcoder;
        self.line_breaks = breaks;
    }

    fn feed_utf8(&mut self, mut bytes: &[u8]) {
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
        let decision = self.filter.decide(line, || signal.is_some());
        match decision {
            Decision::Drop(level) => self.omit(level, line),
            Decision::KeepSignal(level) => {
                let id = signal.unwrap_or_default() as usize;
                if self.recent.len() <= id {
                    self.recent.resize_with(id + 1, VecDeque::new);
                }
                let ring = &mut self.recent[id];
                // The oldest line leaves the ring, and lends its buffer to the new one.
                let mut text = Vec::new();
                if ring.len() >= RECENT_PER_SIGNAL {
                    if let Some((_, reused, noise)) = ring.pop_front() {
                        count_omitted(&mut self.stats, noise);
                        text = reused;
                    }
                }
                text.clear();
                text.extend_from_slice(line);
                ring.push_back((number, text, Noise::of(&level)));
            }
            Decision::NotLog | Decision::KeepLog(_) => {
                // The first noise line is kept, and its repeat would be left out.
                if let Decision::KeepLog(level) = decision {
                    if level.is_noise() {
                        self.first_sight(line);
                    }
                }
                self.tail.push_str(&String::from_utf8_lossy(line));
                self.tail_lines.push((number, self.tail.len()));
            }
        }
    }

    /// A left-out line counts once: the same timestamped line again is the block pasted twice
    /// (core reads repeated records once too).
    fn omit(&mut self, level: QuickLevel<'_>, line: &[u8]) {
        if self.first_sight(line) {
            count_omitted(&mut self.stats, Noise::of(&level));
        }
    }

    /// Whether a noise line is not the repeat of an earlier one, remembering it. The hashes
    /// kept are capped, so a huge log costs bounded memory and only repeats past the cap count
    /// twice.
    fn first_sight(&mut self, line: &[u8]) -> bool {
        const MAX_REMEMBERED: usize = 1 << 18;
        if !has_time_of_day(line) {
            return true;
        }
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        line.trim_ascii_end().hash(&mut hasher);
        let hash = hasher.finish();
        if self.omitted_hashes.contains(&hash) {
            return false;
        }
        if self.omitted_hashes.len() < MAX_REMEMBERED {
            self.omitted_hashes.insert(hash);
        }
        true
    }

    /// Merges the current part's kept lines and its recent signal lines, in line order.
    fn flush(&mut self) {
        let mut signal_lines: Vec<(usize, Vec<u8>)> = std::mem::take(&mut self.recent)
            .into_iter()
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
        let mut transcoder = std::mem::take(&mut self.transcoder);
        let mut breaks = std::mem::take(&mut self.line_breaks);
        transcoder.finish(&mut |utf8| breaks.push(utf8, &mut |fixed| self.feed_utf8(fixed)));
        breaks.finish(&mut |fixed| self.feed_utf8(fixed));
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
        document.omitted_other_log_lines = self.stats.omitted_other;
        ScanOutput {
            document,
            stats: self.stats,
        }
    }
}

/// Scans a whole byte buffer (the one-shot form of [`StreamScanner`]), fed a megabyte at a
/// time as a file is: the scratch copy the anchors are searched in stays that small, and in
/// the web page each piece is a new call, which WebAssembly engines run with the optimised
/// code of the scanner once it is ready (a call already running keeps its baseline code).
pub fn scan_bytes_with(
    matcher: &SignalMatcher,
    label: impl Into<String>,
    bytes: &[u8],
) -> ScanOutput {
    let mut scanner = StreamScanner::with_matcher(label, matcher);
    for piece in bytes.chunks(SCAN_PIECE) {
        scanner.feed(piece);
    }
    scanner.finish()
}

/// How much of a buffer [`scan_bytes_with`] feeds at a time.
const SCAN_PIECE: usize = 1 << 20;

/// Checks shared with the engine's tests, which run them with the catalogue's signals.
#[doc(hidden)]
pub mod checks {
    use super::*;

    /// Deterministic xorshift for the randomized checks.
    pub struct Rng(pub u64);

    impl Rng {
        pub fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// Checks, on a random log of noise, signals in their spellings and near misses, that the
    /// anchored search finds exactly the lines (and signals) the automaton finds line by line.
    /// Core runs it with every rule's signals; a test here with a list of its own.
    pub fn assert_anchored_search_agrees(matcher: &SignalMatcher, signals: &[&str]) {
        let mut rng = Rng(0x5167_a15c_a7a1_0002);
        let cased = |s: &str, rng: &mut Rng| -> String {
            s.chars()
                .map(|c| match rng.below(3) {
                    0 => c.to_ascii_uppercase(),
                    _ => c,
                })
                .collect()
        };
        let mut text = String::new();
        let mut n = 0;
        while text.len() < 2 * ANCHOR_MIN_TEXT {
            n += 1;
            let line = match rng.below(6) {
                // Noise of the kinds a busy Karpenter prints.
                0..=2 => format!(
                    r#"{{"level":"INFO","time":"2025-10-01T00:00:{:02}.{n:03}Z","logger":"controller","message":"found provisionable pod(s)","commit":"1f41772","Pods":"shop/checkout-{n}","reconcileID":"{n:x}-4c2e","duration":"{n}ms"}}"#,
                    n % 60
                ),
                // One signal, or several, close together or overlapping.
                3 | 4 => {
                    let mut message = String::new();
                    for _ in 0..1 + rng.below(3) {
                        let signal = signals[rng.below(signals.len())];
                        let spelled = match rng.below(3) {
                            0 => escape_json(signal, false, false),
                            1 => escape_json(signal, true, true),
                            _ => signal.to_string(),
                        };
                        let cut = rng.below(spelled.len().min(4) + 1);
                        message.push_str(&cased(&spelled, &mut rng));
                        message.push_str(["", " ", ": ", "\\\""][rng.below(4)]);
                        if rng.below(3) == 0 {
                            // A signal cut short: a near miss.
                            let near = &spelled[..spelled.len() - cut];
                            message.push_str(&cased(near, &mut rng));
                        }
                    }
                    format!(r#"{{"level":"ERROR","message":"{message}","n":{n}}}"#)
                }
                _ => format!("plain text line {n}\r"),
            };
            text.push_str(&line);
            text.push('\n');
        }
        assert!(matcher.anchors_for(text.as_bytes()).is_some() || cfg!(target_arch = "wasm32"));
        let anchored = signal_line_starts(matcher, text.as_bytes());
        let mut expected = Vec::new();
        let mut at = 0;
        for line in text.split_inclusive('\n') {
            if let Some(signal) = matcher.signal_of(line.trim_end_matches('\n').as_bytes()) {
                expected.push((at, signal));
            }
            at += line.len();
        }
        assert!(expected.len() > 1000, "{} signal lines", expected.len());
        assert_eq!(anchored.len(), expected.len());
        for (a, e) in anchored.iter().zip(&expected) {
            let line = text[e.0..].lines().next().unwrap_or_default();
            assert_eq!(a, e, "line {line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::checks::{assert_anchored_search_agrees, Rng};
    use super::*;

    #[test]
    fn anchored_search_agrees_with_the_automaton_line_by_line() {
        // Catalogue-like signals: long and short, sharing words, with quotes, a curly
        // apostrophe and a backslash; core runs the same check with every rule's signals.
        let signals = [
            "could not schedule pod",
            "incompatible with nodepool",
            "no instance type satisfied resources",
            "insufficient capacity",
            "InsufficientInstanceCapacity",
            "UnauthorizedOperation",
            "\"vpc.amazonaws.com/pod-eni\" was requested",
            "pod didn’t schedule",
            "disruption budget",
            "pdb",
            "a\\b",
            "found provisionable pod",
        ];
        let matcher = SignalMatcher::new(signals);
        assert_anchored_search_agrees(&matcher, &signals);
    }

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

    /// ipamd's zap-default records (`ts` after `level`) beside Karpenter's: left out alike,
    /// counted apart; a signal line of theirs pushed out of its ring too.
    #[test]
    fn another_components_noise_is_counted_apart() {
        let m = SignalMatcher::new(["created nodeclaim"]);
        let mut text = String::from("{\"level\":\"ERROR\",\"time\":\"t\",\"message\":\"x\"}\n");
        for i in 0..10 {
            text.push_str(&format!(
                "{{\"level\":\"INFO\",\"time\":\"t\",\"message\":\"Starting workers {i}\"}}\n"
            ));
            text.push_str(&format!(
                "{{\"level\":\"info\",\"ts\":\"t\",\"caller\":\"ipamd/ipamd.go:1\",\"msg\":\"Reconcile {i}\"}}\n"
            ));
        }
        for i in 0..RECENT_PER_SIGNAL + 5 {
            text.push_str(&format!(
                "{{\"level\":\"debug\", \"ts\":\"t\",\"msg\":\"created nodeclaim {i}\"}}\n"
            ));
        }
        let mut s = StreamScanner::with_matcher("t", &m);
        s.feed(text.as_bytes());
        let out = s.finish();
        assert_eq!(out.stats.omitted_info, 10);
        assert_eq!(out.stats.omitted_debug, 0);
        assert_eq!(out.stats.omitted_other, 10 + 5);
        assert_eq!(out.document.omitted_other_log_lines, 10 + 5);
        assert_eq!(out.document.omitted_log_lines.get("INFO"), Some(&10));
        assert!(!out.document.omitted_log_lines.contains_key("DEBUG"));
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
    fn teddy_finds_the_leftmost_anchor_in_any_span() {
        let mut rng = Rng(0x7edd_1e5e_a5c4_0001);
        // A small alphabet, so anchors hit often and buckets share nibbles.
        let alphabet = b"abcqrs \"{}:,0AZ\xe2";
        for round in 0..400 {
            let width = 1 + round % 4;
            let mut anchors: Vec<Vec<u8>> = Vec::new();
            for _ in 0..1 + rng.below(40) {
                let a: Vec<u8> = (0..width)
                    .map(|_| alphabet[rng.below(alphabet.len())])
                    .collect();
                if !anchors.contains(&a) {
                    anchors.push(a);
                }
            }
            let refs: Vec<&[u8]> = anchors.iter().map(Vec::as_slice).collect();
            let mut freq = [0u32; 256];
            for _ in 0..100 {
                freq[usize::from(alphabet[rng.below(alphabet.len())])] += 1;
            }
            let teddy = teddy::Teddy::new(&refs, width, &freq).expect("teddy");
            let haystack: Vec<u8> = (0..rng.below(150))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect();
            for _ in 0..20 {
                let start = rng.below(haystack.len() + 1);
                let end = start + rng.below(haystack.len() + 1 - start);
                let expected = (start..end.saturating_sub(width - 1)).find_map(|at| {
                    let index = anchors.iter().position(|a| haystack[at..].starts_with(a))?;
                    Some((at, index as u32))
                });
                assert_eq!(
                    teddy.find_in(&haystack, start, end),
                    expected,
                    "anchors {anchors:?} in {haystack:?}[{start}..{end}]"
                );
            }
        }
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
