//! Wrappers a paste arrives in: line breaks other than `\n` (a lone `\r`), terminal colour
//! codes (`stern`, `script`, a log saved with `--color always`), no-break spaces and smart
//! quotes from a chat or wiki copy, a Markdown or e-mail quote (`> ` in a GitHub reply or a
//! forwarded mail), an indented Markdown code block, and a terminal's hard wrap (a line longer
//! than the window, copied as several), and a line-number gutter (`cat -n`, an editor: see
//! `gutter`). Kubernetes YAML only parses from column 0, a table cell
//! with a colour code in it reads as another word and a JSON log line cut in three parses as
//! none, so the wrapper comes off before the segmenter sees the text.
//!
//! Lines are shortened, and only a hard wrap's pieces are joined: each line then keeps the
//! number of its first piece, so line numbers in evidence stay those of the user's input.

use std::borrow::Cow;

use super::segment::{indent, is_blank};

/// A document's text without its wrappers.
pub struct Unwrapped {
    pub text: String,
    /// For each line of `text`, the index of the line of the input (its line breaks fixed)
    /// it starts at; `None` when no lines were joined.
    pub origin: Option<Vec<usize>>,
}

/// The text without its wrappers, or `None` when it has none (the common case costs a search
/// for a few bytes, one look at each line start and the length of each line).
pub fn unwrapped(text: &str) -> Option<Unwrapped> {
    let mut current = Cow::Borrowed(text);
    for step in [
        super::scan::line_breaks::fixed_line_breaks,
        without_terminal_codes,
        without_odd_characters,
    ] {
        if let Some(changed) = step(&current) {
            current = Cow::Owned(changed);
        }
    }
    let base: &str = &current;
    let (may_quote, may_indent) = wrapper_hints(base.as_bytes());
    let wrap_hint = hard_wrap_hint(base.split('\n'));
    let may_gutter = super::gutter::may_have_gutter(base);
    if !may_quote && !may_indent && !wrap_hint && !may_gutter {
        return match current {
            Cow::Owned(text) => Some(Unwrapped { text, origin: None }),
            Cow::Borrowed(_) => None,
        };
    }
    let mut lines: Vec<&str> = base.split('\n').collect();
    let mut changed = false;
    if may_quote {
        changed |= unquote(&mut lines);
    }
    if may_quote || may_indent {
        changed |= dedent_code_blocks(&mut lines);
    }
    // A gutter sits inside the quote or the code block the file was pasted in (a quoted
    // line starts with `>`, so the hint misses it).
    if may_gutter || changed {
        changed |= super::gutter::strip_gutters(&mut lines);
    }
    // The terminal wrapped the lines before they were quoted or indented.
    if let Some(width) = hard_wrap_width(&lines) {
        let (joined, origin) = joined_hard_wraps(&lines, width);
        return Some(Unwrapped {
            text: joined.join("\n"),
            origin: Some(origin),
        });
    }
    if changed {
        Some(Unwrapped {
            text: lines.join("\n"),
            origin: None,
        })
    } else {
        match current {
            Cow::Owned(text) => Some(Unwrapped { text, origin: None }),
            Cow::Borrowed(_) => None,
        }
    }
}

/// Whether some line starts with `>` (a quote), and whether some line after a blank one, or the
/// first, is indented or a fence opens (a code block): one pass over the line starts.
fn wrapper_hints(bytes: &[u8]) -> (bool, bool) {
    let opens_block = |at: usize| {
        let rest = &bytes[at..];
        rest.starts_with(b"```") || rest.starts_with(b"~~~")
    };
    let mut may_quote = bytes.first() == Some(&b'>');
    let after_blank_start = bytes.strip_prefix(b"\r").unwrap_or(bytes);
    let mut may_indent = matches!(bytes.first(), Some(b' ' | b'\t'))
        || opens_block(0)
        || [b"\n ", b"\n\t"]
            .iter()
            .any(|p| after_blank_start.starts_with(*p));
    for newline in memchr::memchr_iter(b'\n', bytes) {
        let next = newline + 1;
        match bytes.get(next) {
            Some(b'>') => may_quote = true,
            Some(b'\n') => may_indent |= matches!(bytes.get(next + 1), Some(b' ' | b'\t')),
            Some(b'\r') => {
                may_indent |= bytes.get(next + 1) == Some(&b'\n')
                    && matches!(bytes.get(next + 2), Some(b' ' | b'\t'))
            }
            Some(b'`' | b'~') => may_indent |= opens_block(next),
            _ => {}
        }
        if may_quote && may_indent {
            break;
        }
    }
    (may_quote, may_indent)
}

/// ANSI escape sequences (SGR colours, cursor moves, window titles) removed; `None` when the
/// text has no ESC byte.
fn without_terminal_codes(text: &str) -> Option<String> {
    const ESC: u8 = 0x1b;
    let bytes = text.as_bytes();
    let mut at = memchr::memchr(ESC, bytes)?;
    let mut out = String::with_capacity(text.len());
    let mut kept_from = 0;
    loop {
        out.push_str(&text[kept_from..at]);
        let mut i = at + 1;
        match bytes.get(i) {
            // CSI: parameters and intermediates, then one final byte.
            Some(b'[') => {
                i += 1;
                while bytes.get(i).is_some_and(|b| (0x20..=0x3f).contains(b)) {
                    i += 1;
                }
                if bytes.get(i).is_some_and(|b| (0x40..=0x7e).contains(b)) {
                    i += 1;
                }
            }
            // OSC (a terminal title, a hyperlink): up to BEL or ST, never past the line.
            Some(b']') => {
                i += 1;
                while let Some(&b) = bytes.get(i) {
                    if b == 0x07 {
                        i += 1;
                        break;
                    }
                    if b == ESC && bytes.get(i + 1) == Some(&b'\\') {
                        i += 2;
                        break;
                    }
                    if b == b'\n' {
                        break;
                    }
                    i += 1;
                }
            }
            // Two- and three-byte escapes (`ESC ( B`, `ESC =`).
            Some(_) => {
                while bytes.get(i).is_some_and(|b| (0x20..=0x2f).contains(b)) {
                    i += 1;
                }
                if bytes.get(i).is_some_and(|b| (0x30..=0x7e).contains(b)) {
                    i += 1;
                }
            }
            None => {}
        }
        kept_from = i;
        match memchr::memchr(ESC, &bytes[i..]) {
            Some(next) => at = i + next,
            None => break,
        }
    }
    out.push_str(&text[kept_from..]);
    Some(out)
}

/// Characters that chat and wiki tools put in a copied text made plain: a run of spaces comes
/// out of Teams, Confluence or a web page as no-break spaces (U+00A0, also U+2007 and U+202F),
/// which YAML indentation and table columns do not take for spaces; zero-width characters
/// (U+200B, U+2060, U+FEFF) dropped; the curly quotes Slack, Confluence, Word and Outlook
/// type for `"` and `'` (YAML and JSON only quote with straight ones, and no Kubernetes or
/// Karpenter message has a curly one). `None` when the text has none (one `memchr3` pass
/// over the three lead bytes of their UTF-8 forms).
fn without_odd_characters(text: &str) -> Option<String> {
    let odd = |c: char| -> Option<Option<char>> {
        match c {
            '\u{a0}' | '\u{2007}' | '\u{202f}' => Some(Some(' ')),
            '\u{200b}' | '\u{2060}' | '\u{feff}' => Some(None),
            '\u{201c}' | '\u{201d}' | '\u{201e}' => Some(Some('"')),
            '\u{2018}' | '\u{2019}' | '\u{201a}' => Some(Some('\'')),
            _ => None,
        }
    };
    let first = memchr::memchr3_iter(0xc2, 0xe2, 0xef, text.as_bytes()).find(|&at| {
        text.get(at..)
            .and_then(|rest| rest.chars().next())
            .is_some_and(|c| odd(c).is_some())
    })?;
    let mut out = String::with_capacity(text.len());
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        match odd(c) {
            Some(Some(space)) => out.push(space),
            Some(None) => {}
            None => out.push(c),
        }
    }
    Some(out)
}

/// Quote markers taken off every run of two or more lines that start with `>`. A run of shell
/// prompts (`> kubectl ...` in a shell whose prompt is `>`) is left alone: there the `>` is
/// what makes the line a command.
fn unquote(lines: &mut [&str]) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with('>') {
            i += 1;
            continue;
        }
        let end = (i..lines.len())
            .find(|&k| !lines[k].starts_with('>'))
            .unwrap_or(lines.len());
        let all_prompts = lines[i..end]
            .iter()
            .all(|l| super::segment::prompt(l).is_some());
        if end - i >= 2 && !all_prompts {
            for line in &mut lines[i..end] {
                *line = without_quote_marks(line);
            }
            changed = true;
        }
        i = end;
    }
    changed
}

/// `> text`, `>> text`, `> > text` and `>` (a quoted blank line) without their markers.
fn without_quote_marks(mut line: &str) -> &str {
    while let Some(rest) = line.strip_prefix('>') {
        line = rest.strip_prefix(' ').unwrap_or(rest);
    }
    line
}

/// Leading spaces and tabs, in bytes (unlike `segment::indent`, which also counts Unicode
/// whitespace): the block is cut at this many bytes, which must all be ASCII.
fn ascii_indent(line: &str) -> usize {
    line.bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count()
}

fn is_fence(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("```") || t.starts_with("~~~")
}

/// Output whose structure starts at column 0: Kubernetes YAML and `kubectl describe` (nested
/// fields are read by their indentation under a column-0 `Name:`), a `kubectl get` table
/// (its upper-case header, whose column positions cut the rows; describe's own `Type
/// Reason` tables sit indented under their heading), a shell prompt (`$ kubectl ...`,
/// which names what the output below it is), or a log.
fn starts_column_document(line: &str) -> bool {
    line.starts_with("apiVersion:")
        || line.starts_with("kind:")
        || line.trim_end() == "---"
        || super::segment::starts_describe(line)
        || (super::tables::Table::from_header(line).is_some()
            && !line.bytes().any(|b| b.is_ascii_lowercase()))
        // A prompt names the output under it; a bare command in an indented block is more
        // often an instruction in a Markdown list (a report pasted back) than a terminal copy.
        || super::segment::prompt(line).is_some()
        // A log line (console or JSON, a `--prefix`/stern prefix before it): log readers
        // take a line's leading spaces for a continuation of the line above.
        || super::scan::quick_level(line.as_bytes()).is_some()
        || super::scan::header_label(line.as_bytes()).is_some()
}

/// Indented code blocks holding Kubernetes YAML, `kubectl describe` or `kubectl get` output or
/// a shell prompt, moved back to column 0. A block starts after a
/// blank line, a fence or the start of the text, holds lines indented at least as far as its
/// first, and ends before a blank line, a fence or the end: an indented run that a less-indented
/// line continues right after (a YAML mapping's children) is structure, not a wrapper.
fn dedent_code_blocks(lines: &mut [&str]) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < lines.len() {
        let depth = ascii_indent(lines[i]);
        let opens = i == 0 || is_blank(lines[i - 1]) || is_fence(lines[i - 1]);
        if is_blank(lines[i]) || depth == 0 || !opens || is_fence(lines[i]) {
            i += 1;
            continue;
        }
        let end = (i + 1..lines.len())
            .find(|&k| {
                !is_blank(lines[k]) && (ascii_indent(lines[k]) < depth || is_fence(lines[k]))
            })
            .unwrap_or(lines.len());
        let closes = end == lines.len() || is_blank(lines[end - 1]) || is_fence(lines[end]);
        let holds_column_document = lines[i..end]
            .iter()
            .any(|l| ascii_indent(l) == depth && starts_column_document(&l[depth..]));
        if closes && holds_column_document {
            for line in &mut lines[i..end] {
                if !is_blank(line) {
                    *line = &line[depth..];
                }
            }
            changed = true;
        }
        i = end.max(i + 1);
    }
    changed
}

/// Terminals are at least this wide; shorter lines of one length are YAML, PEM or base64
/// blocks, not pieces of a wrap.
const MIN_WRAP_WIDTH: usize = 60;

/// The widths a line of `line` may have been cut at: its characters and, with tabs in it, its
/// columns (a terminal moves a tab to the next multiple of 8).
fn widths(line: &str) -> [usize; 2] {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.len() < MIN_WRAP_WIDTH {
        return [0, 0];
    }
    let chars = line.chars().count();
    let columns = if line.contains('\t') {
        line.chars().fold(0, |col, c| {
            if c == '\t' {
                (col / 8 + 1) * 8
            } else {
                col + 1
            }
        })
    } else {
        chars
    };
    [chars, columns]
}

/// Lines of each width followed by a non-blank line, and lines of each width: in a hard-wrapped
/// text many lines have the window's width exactly (the pieces before the last), and none is
/// wider.
type WidthCounts = std::collections::BTreeMap<usize, (usize, usize)>;

fn width_counts<'a>(lines: impl Iterator<Item = &'a str>) -> WidthCounts {
    let mut counts = WidthCounts::new();
    let mut previous = [0, 0];
    for line in lines {
        let blank = is_blank(line);
        for width in dedup(previous) {
            counts.entry(width).or_default().0 += usize::from(!blank);
        }
        previous = widths(line);
        for width in dedup(previous) {
            counts.entry(width).or_default().1 += 1;
        }
    }
    counts
}

fn dedup([a, b]: [usize; 2]) -> impl Iterator<Item = usize> {
    [a, b]
        .into_iter()
        .enumerate()
        .filter_map(move |(k, w)| (w >= MIN_WRAP_WIDTH && (k == 0 || w != a)).then_some(w))
}

/// The widths, most frequent first, that two lines or more followed by text have, at least
/// as many as the lines wider still (a log of long lines has some of one length by chance,
/// and many longer ones), or that the widest line has.
fn wrap_candidates(counts: &WidthCounts) -> Vec<usize> {
    let mut wider = 0;
    let mut candidates: Vec<(usize, usize)> = Vec::new();
    for (&width, &(followed, total)) in counts.iter().rev() {
        if followed >= 2 && followed >= wider || followed == 1 && wider == 0 {
            candidates.push((followed, width));
        }
        wider += total;
    }
    candidates.sort_unstable_by(|a, b| b.cmp(a));
    candidates.into_iter().map(|(_, width)| width).collect()
}

fn hard_wrap_hint<'a>(lines: impl Iterator<Item = &'a str>) -> bool {
    !wrap_candidates(&width_counts(lines)).is_empty()
}

/// The window the terminal cut the lines at: the candidate width at which most lines are
/// continued by the next, and at least two; or the width of the widest line when it is cut
/// where it cannot end (see [`Reading::cannot_end`]).
fn hard_wrap_width(lines: &[&str]) -> Option<Window> {
    let counts = width_counts(lines.iter().copied());
    wrap_candidates(&counts)
        .into_iter()
        .take(3)
        .filter_map(|width| {
            let window = Window::new(lines, width);
            let mut cut: Vec<&str> = Vec::new();
            let mut sure = false;
            for k in 0..lines.len().saturating_sub(1) {
                if !widths(lines[k]).contains(&width) {
                    continue;
                }
                let reading = Reading::of(lines[k]);
                let (line, next) = (lines[k], lines[k + 1]);
                if window.full(line, line, next, &reading) && continues(line, line, next, &reading)
                {
                    cut.push(line);
                    sure |= reading.cannot_end(line, next);
                }
            }
            // A line pasted twice is one line of that width.
            cut.sort_unstable();
            cut.dedup();
            sure |= cut.len() >= 2;
            sure.then_some((cut.len(), window))
        })
        .max_by_key(|(cut, window)| (*cut, window.width))
        .map(|(_, window)| window)
}

/// The terminal window a text was copied from.
#[derive(Debug, Clone, Copy)]
struct Window {
    width: usize,
    /// The console pads every line with spaces to the width (the old Windows console copies
    /// so; unpadded, the last piece of each wrapped line and every short line are narrower,
    /// and the only lines of the width ending in a space are pieces cut after one): a piece
    /// is full when it ends in text, or where the line cannot end (padding follows only the
    /// end of a line).
    padded: bool,
}

impl Window {
    fn new(lines: &[&str], width: usize) -> Self {
        let (mut spaced, mut narrower) = (0, 0);
        for line in lines {
            let [chars, columns] = widths(line);
            if chars.max(columns) < width {
                narrower += usize::from(!is_blank(line));
            } else if line.trim_end_matches('\r').ends_with([' ', '\t']) {
                spaced += usize::from(chars == width || columns == width);
            }
        }
        Window {
            width,
            padded: spaced > 4 * narrower,
        }
    }

    /// Whether `last`, the last piece read of the line starting with `first`, fills the
    /// window, so the terminal may have cut the line there.
    fn full(&self, first: &str, last: &str, next: &str, reading: &Reading) -> bool {
        widths(last).contains(&self.width)
            && !(self.padded
                && last.trim_end_matches('\r').ends_with([' ', '\t'])
                && !reading.cannot_end(first, next))
    }
}

/// The lines with each hard-wrapped line's pieces joined back without a separator (a hard
/// wrap loses no character), and the index of each line's first piece.
fn joined_hard_wraps<'a>(lines: &[&'a str], window: Window) -> (Vec<Cow<'a, str>>, Vec<usize>) {
    const MAX_BYTES: usize = 1 << 20;
    let mut out = Vec::with_capacity(lines.len());
    let mut origin = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let first = lines[i];
        let mut end = i;
        let mut reading = Reading::of(first);
        while end + 1 < lines.len()
            && window.full(first, lines[end], lines[end + 1], &reading)
            && continues(first, lines[end], lines[end + 1], &reading)
            && (end - i + 1) * window.width < MAX_BYTES
        {
            end += 1;
            reading.read(lines[end]);
        }
        // A wrapped line's last piece is narrower than the window (the text ended there); a
        // block of lines all of the window's width is a box, a table of fixed width (the AWS
        // CLI's `--output table`), or base64: not one line (nor are its lines from the second).
        let after = lines.get(end + 1).copied().unwrap_or_default();
        if end == i || window.full(first, lines[end], after, &reading) {
            out.extend(lines[i..=end].iter().map(|l| Cow::Borrowed(*l)));
            origin.extend(i..=end);
        } else {
            origin.push(i);
            let mut joined = String::new();
            for piece in &lines[i..=end] {
                joined.push_str(piece.strip_suffix('\r').unwrap_or(piece));
            }
            if window.padded {
                joined.truncate(joined.trim_end().len());
            }
            out.push(Cow::Owned(joined));
        }
        i = end + 1;
    }
    (out, origin)
}

/// Whether `next` goes on the line whose first piece is `first` and whose last piece, `last`,
/// fills the window. A wrap's piece starts anywhere in the line (inside a word, a number, a
/// JSON string), so what decides is what `next` is not: blank, a line that starts something
/// of its own, or a sibling of `first` (the same indentation, the same start as two log lines
/// or two table rows have). Inside an open JSON value only a line starting a record or a
/// document, or a pretty-printed member, ends it.
fn continues(first: &str, last: &str, next: &str, reading: &Reading) -> bool {
    let next = next.strip_suffix('\r').unwrap_or(next);
    if is_blank(next)
        || super::scan::quick_level(next.as_bytes()).is_some()
        || super::scan::header_label(next.as_bytes()).is_some()
        || super::segment::command_line(next).is_some()
        || starts_document(next)
    {
        return false;
    }
    let last = last.trim_end_matches('\r');
    if reading.depth > 0 {
        // A string never holds a line break; between members one may be pretty-printing.
        return reading.in_string || !(indent(next) > 0 && last.ends_with(['{', '[', ',']));
    }
    let depth = indent(first);
    if indent(next) > 0 && (indent(next) == depth || indent(next) < depth && starts_key(next)) {
        return false;
    }
    let sibling = |word: bool| {
        let lead = lead_shape(first, word);
        lead.iter().any(|&b| b != b'a' && b != b' ') && lead_shape(next, word) == lead
    };
    !(depth == 0 && (sibling(true) || sibling(false)))
        && !same_columns(first, next)
        && !box_rows(last, next)
}

/// The first 24 bytes of a line, or its first word (up to and with the blank after it), with
/// each run of letters and digits made one `a`: two log or journal lines
/// (`2025-06-02T14:10:00.123Z `, `[pod/karpenter-5c7d9/controller] `, `Dec 05 10:12:05
/// ip-10-0-8-9`) or two rows of tab-separated output (`INSTANCES\t`) start alike; a piece of a
/// wrapped line starts anywhere.
fn lead_shape(line: &str, word: bool) -> Vec<u8> {
    let mut shape = Vec::new();
    for b in line.bytes().take(24) {
        let class = if b.is_ascii_alphanumeric() { b'a' } else { b };
        if !(class == b'a' && shape.last() == Some(&b'a')) {
            shape.push(class);
        }
        if word && b.is_ascii_whitespace() {
            break;
        }
    }
    shape
}

/// Two lines of a box drawn in text (the AWS CLI's `--output table`): `last` is a rule of one
/// character, or `next` has a `|` or `+` under each of two or more `|` of `last`.
fn box_rows(last: &str, next: &str) -> bool {
    let (last, next) = (last.trim_end_matches('\r').as_bytes(), next.as_bytes());
    if last
        .first()
        .is_some_and(|&c| !c.is_ascii_alphanumeric() && last.iter().all(|&b| b == c))
    {
        return true;
    }
    let bars: Vec<usize> = memchr::memchr_iter(b'|', last).collect();
    bars.len() >= 2
        && bars
            .iter()
            .all(|&p| matches!(next.get(p), Some(b'|' | b'+')))
}

/// A line that starts a document at column 0 (not a piece of a longer line).
fn starts_document(line: &str) -> bool {
    super::segment::starts_describe(line)
        || super::segment::is_events_heading(line)
        || line.trim_end() == "---"
        || [
            "apiVersion:",
            "kind:",
            "metadata:",
            "spec:",
            "status:",
            "items:",
            "```",
        ]
        .iter()
        .any(|p| line.starts_with(p))
}

/// `key:` or `- ` after the indentation: a YAML or describe line.
fn starts_key(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("- ")
        || t.split_once(':').is_some_and(|(key, rest)| {
            (rest.is_empty() || rest.starts_with(' '))
                && !key.is_empty()
                && !key.contains(char::is_whitespace)
        })
}

/// Two rows of one table: every column `a` starts (after two spaces) within `b` starts there
/// in `b` too, and there are two or more.
fn same_columns(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut shared = 0;
    for p in 2..a.len().min(b.len()) {
        if a[p - 2] == b' ' && a[p - 1] == b' ' && a[p] != b' ' {
            if b[p - 1] != b' ' || b[p] == b' ' {
                return false;
            }
            shared += 1;
        }
    }
    shared >= 2
}

/// Where the pieces of a line read so far end: how deep in a JSON value (its braces and
/// brackets outside strings, from the first `{`), and whether inside a `"` string.
#[derive(Debug, Default)]
struct Reading {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Reading {
    fn of(piece: &str) -> Self {
        let mut reading = Reading::default();
        reading.read(piece);
        reading
    }

    fn read(&mut self, piece: &str) {
        for b in piece.bytes() {
            if self.in_string {
                match b {
                    _ if self.escaped => self.escaped = false,
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' => self.depth += 1,
                b'[' if self.depth > 0 => self.depth += 1,
                b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
    }

    /// The line read so far, starting with `first`, cannot end here: inside a JSON value or
    /// a quoted string, or indented with `next` at column 0 though `next` is no key (a describe
    /// field or a YAML value cut in two: their lines are indented under a column-0 key). (A
    /// console log record before its fields may: an AWS SDK error's message goes on in the
    /// next line.)
    fn cannot_end(&self, first: &str, next: &str) -> bool {
        self.depth > 0
            || self.in_string
            || indent(first) > 0
                && indent(next) == 0
                && !is_blank(next)
                && !next.starts_with(['}', ']'])
                && !starts_key(next)
                && !super::segment::is_describe_key_line(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The unwrapped text alone.
    fn plain(text: &str) -> Option<String> {
        unwrapped(text).map(|u| u.text)
    }

    proptest! {
        /// Any text, built from the characters the wrappers are made of: no panic, and the
        /// lines stay where they were, or (joined) say where they start.
        #[test]
        fn never_panics_and_keeps_lines(text in "([>\\x1b\\[\\]0-9;mAB( \\t\\r\\n`~é\"{}]|apiVersion: v1|Name:  x|kubectl get pods|[a-z\\-]{50,70})*") {
            let lines = super::super::scan::line_breaks::fixed_line_breaks(&text)
                .unwrap_or_else(|| text.clone())
                .split('\n')
                .count();
            match unwrapped(&text) {
                Some(Unwrapped { text: out, origin: Some(origin) }) => {
                    prop_assert_eq!(out.split('\n').count(), origin.len());
                    prop_assert!(origin.windows(2).all(|w| w[0] < w[1]));
                    prop_assert!(origin.last().is_some_and(|&k| k < lines));
                }
                Some(Unwrapped { text: out, origin: None }) => {
                    prop_assert_eq!(out.split('\n').count(), lines);
                }
                None => {}
            }
        }
    }

    #[test]
    fn plain_text_is_left_alone() {
        assert_eq!(plain("Name: web-0\n  Type  Reason\n"), None);
        assert_eq!(plain("{\"level\":\"ERROR\"}\n{\"level\":\"INFO\"}"), None);
    }

    #[test]
    fn colour_codes_come_off_without_touching_the_lines() {
        let text = "\x1b[36mkarpenter-6d8f\x1b[0m \x1b[1;33mcontroller\x1b[0m {\"a\":1}\n\x1b]0;title\x07x \x1b(Bdone\n";
        assert_eq!(
            plain(text).unwrap(),
            "karpenter-6d8f controller {\"a\":1}\nx done\n"
        );
        // A lone ESC at the end, an unterminated CSI, and non-ASCII text around codes.
        assert_eq!(plain("é\x1b[31mü\x1b").unwrap(), "éü");
        assert_eq!(plain("a\x1b[12").unwrap(), "a");
    }

    #[test]
    fn quoted_runs_lose_their_markers() {
        let text =
            "see below\n> apiVersion: v1\n> kind: Pod\n>\n> > metadata:\n>>   name: x\nthanks";
        assert_eq!(
            plain(text).unwrap(),
            "see below\napiVersion: v1\nkind: Pod\n\nmetadata:\n  name: x\nthanks"
        );
    }

    #[test]
    fn prompts_and_single_quoted_lines_keep_their_marker() {
        assert_eq!(plain("> kubectl get pods\n> kubectl get nodes\n"), None);
        assert_eq!(plain("> just one line\nthen text"), None);
    }

    #[test]
    fn an_indented_yaml_block_moves_to_column_zero() {
        let text = "Here it is:\n\n    apiVersion: v1\n    kind: Pod\n    spec:\n      a: 1\n\n    ---\n    kind: Node\n\nThanks";
        assert_eq!(
            plain(text).unwrap(),
            "Here it is:\n\napiVersion: v1\nkind: Pod\nspec:\n  a: 1\n\n---\nkind: Node\n\nThanks"
        );
        let fenced = "```\n  apiVersion: v1\n  kind: Pod\n```";
        assert_eq!(
            plain(fenced).unwrap(),
            "```\napiVersion: v1\nkind: Pod\n```"
        );
    }

    #[test]
    fn an_indented_describe_moves_to_column_zero() {
        let text = "\n    $ kubectl describe nodepool spot\n    Name:  spot\n    Spec:\n      Limits:\n        Cpu:  10\n";
        assert_eq!(
            plain(text).unwrap(),
            "\n$ kubectl describe nodepool spot\nName:  spot\nSpec:\n  Limits:\n    Cpu:  10\n"
        );
    }

    /// A `kubectl get` table's header gives the columns that cut its rows, and kubectl prints it
    /// at column 0: an indented one (a Markdown code block, a mail) comes back there, with the
    /// prompt above it.
    #[test]
    fn an_indented_table_prompt_or_log_moves_to_column_zero() {
        let table = "Output:\n\n    $ kubectl get nodeclaims\n    NAME    TYPE        READY\n    d-k2x   c6a.large   True\n\nThanks\n";
        assert_eq!(
            plain(table).unwrap(),
            "Output:\n\n$ kubectl get nodeclaims\nNAME    TYPE        READY\nd-k2x   c6a.large   True\n\nThanks\n"
        );
        let headless = "  NAME        NODECLASS   READY\n  gpu-h100    gpu         False\n";
        assert_eq!(
            plain(headless).unwrap(),
            "NAME        NODECLASS   READY\ngpu-h100    gpu         False\n"
        );
        // A console log in a code block (Stack Overflow's four spaces), a stern prefix before it.
        let log = "Logs:\n\n    karpenter-5f7b9 controller 2023-06-02T11:04:51.880Z\tINFO\tcontroller.provisioner\tno provisioners found\n";
        assert_eq!(
            plain(log).unwrap(),
            "Logs:\n\nkarpenter-5f7b9 controller 2023-06-02T11:04:51.880Z\tINFO\tcontroller.provisioner\tno provisioners found\n"
        );
        // describe's own tables are indented under their heading and not upper case.
        assert_eq!(
            plain("Conditions:\n\n  Type    Status\n  Ready   True\n"),
            None
        );
    }

    #[test]
    fn no_break_and_zero_width_spaces_become_plain() {
        let teams = "spec:\n\u{a0} disruption:\n\u{a0}\u{a0}\u{a0} budgets:\u{200b}\nNAME\u{a0}\u{a0}\u{202f}READY\n";
        assert_eq!(
            plain(teams).unwrap(),
            "spec:\n  disruption:\n    budgets:\nNAME   READY\n"
        );
        // Other non-ASCII text (the lead bytes of no-break spaces) stays as written.
        assert_eq!(plain("café – ü…\n"), None);
    }

    /// Slack, Confluence and mail clients type curly quotes: YAML and JSON read straight ones.
    #[test]
    fn smart_quotes_become_straight() {
        assert_eq!(
            plain("name: “web”\nvalue: ‘x’\n{“level”:“ERROR”} – it’s\n").unwrap(),
            "name: \"web\"\nvalue: 'x'\n{\"level\":\"ERROR\"} – it's\n"
        );
    }

    #[test]
    fn yaml_structure_is_not_a_wrapper() {
        // Children after a blank line, continued by their less-indented parent's siblings.
        let nested = "spec:\n  template:\n\n    kind: x\n  other: 1\n";
        assert_eq!(plain(nested), None);
        // An indented block without Kubernetes YAML in it (a stack trace, a describe part).
        assert_eq!(plain("panic: x\n\n\tgoroutine 1\n\tmain.go:3\n"), None);
        assert_eq!(plain("Events:\n\n  Type  Reason\n"), None);
        assert_eq!(plain("Spec:\n\n  Name:  x\n  Kind:  y\nStatus:\n"), None);
    }

    #[test]
    fn line_count_never_changes() {
        for text in [
            "> a\n> b\n\n    apiVersion: v1\n\x1b[0m\n",
            "\x1b[31m\n\n\n>\n>\n",
            "  kind: x\n\r\n  apiVersion: v\r\n",
        ] {
            let out = plain(text).unwrap_or_else(|| text.to_string());
            assert_eq!(
                out.split('\n').count(),
                text.split('\n').count(),
                "{text:?}"
            );
        }
    }
}
