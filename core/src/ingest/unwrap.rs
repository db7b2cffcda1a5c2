//! Wrappers a paste arrives in: terminal colour codes (`stern`, `script`, a log saved with
//! `--color always`), no-break spaces from a chat or wiki copy, a Markdown or e-mail quote
//! (`> ` in a GitHub reply or a forwarded mail) and an indented Markdown code block. Kubernetes
//! YAML only parses from column 0 and a table cell with a colour code in it reads as another
//! word, so the wrapper comes off before the segmenter sees the text.
//!
//! Lines are only shortened, never joined or split: line numbers in evidence stay those of the
//! user's input.

use super::segment::is_blank;

/// The text without its wrappers, or `None` when it has none (the common case costs a search
/// for ESC and one look at each line start, no per-line work).
pub fn unwrapped(text: &str) -> Option<String> {
    let coloured = without_terminal_codes(text);
    let plain = without_odd_spaces(coloured.as_deref().unwrap_or(text)).or(coloured);
    let base = plain.as_deref().unwrap_or(text);
    let (may_quote, may_indent) = wrapper_hints(base.as_bytes());
    if !may_quote && !may_indent {
        return plain;
    }
    let mut lines: Vec<&str> = base.split('\n').collect();
    let mut changed = false;
    if may_quote {
        changed |= unquote(&mut lines);
    }
    changed |= dedent_code_blocks(&mut lines);
    if changed {
        Some(lines.join("\n"))
    } else {
        plain
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

/// Spaces that chat and wiki tools put in a copied text made plain: a run of spaces comes out
/// of Teams, Confluence or a web page as no-break spaces (U+00A0, also U+2007 and U+202F),
/// which YAML indentation and table columns do not take for spaces; zero-width characters
/// (U+200B, U+2060, U+FEFF) dropped. `None` when the text has none (one `memchr3` pass over
/// the three lead bytes of their UTF-8 forms).
fn without_odd_spaces(text: &str) -> Option<String> {
    let odd = |c: char| -> Option<Option<char>> {
        match c {
            '\u{a0}' | '\u{2007}' | '\u{202f}' => Some(Some(' ')),
            '\u{200b}' | '\u{2060}' | '\u{feff}' => Some(None),
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any text, built from the characters the wrappers are made of: no panic, and the
        /// lines stay where they were.
        #[test]
        fn never_panics_and_keeps_lines(text in "([>\\x1b\\[\\]0-9;mAB( \\t\\r\\n`~é]|apiVersion: v1|Name:  x|kubectl get pods)*") {
            let out = unwrapped(&text).unwrap_or_else(|| text.clone());
            prop_assert_eq!(out.split('\n').count(), text.split('\n').count());
        }
    }

    #[test]
    fn plain_text_is_left_alone() {
        assert_eq!(unwrapped("Name: web-0\n  Type  Reason\n"), None);
        assert_eq!(
            unwrapped("{\"level\":\"ERROR\"}\n{\"level\":\"INFO\"}"),
            None
        );
    }

    #[test]
    fn colour_codes_come_off_without_touching_the_lines() {
        let text = "\x1b[36mkarpenter-6d8f\x1b[0m \x1b[1;33mcontroller\x1b[0m {\"a\":1}\n\x1b]0;title\x07x \x1b(Bdone\n";
        assert_eq!(
            unwrapped(text).unwrap(),
            "karpenter-6d8f controller {\"a\":1}\nx done\n"
        );
        // A lone ESC at the end, an unterminated CSI, and non-ASCII text around codes.
        assert_eq!(unwrapped("é\x1b[31mü\x1b").unwrap(), "éü");
        assert_eq!(unwrapped("a\x1b[12").unwrap(), "a");
    }

    #[test]
    fn quoted_runs_lose_their_markers() {
        let text =
            "see below\n> apiVersion: v1\n> kind: Pod\n>\n> > metadata:\n>>   name: x\nthanks";
        assert_eq!(
            unwrapped(text).unwrap(),
            "see below\napiVersion: v1\nkind: Pod\n\nmetadata:\n  name: x\nthanks"
        );
    }

    #[test]
    fn prompts_and_single_quoted_lines_keep_their_marker() {
        assert_eq!(unwrapped("> kubectl get pods\n> kubectl get nodes\n"), None);
        assert_eq!(unwrapped("> just one line\nthen text"), None);
    }

    #[test]
    fn an_indented_yaml_block_moves_to_column_zero() {
        let text = "Here it is:\n\n    apiVersion: v1\n    kind: Pod\n    spec:\n      a: 1\n\n    ---\n    kind: Node\n\nThanks";
        assert_eq!(
            unwrapped(text).unwrap(),
            "Here it is:\n\napiVersion: v1\nkind: Pod\nspec:\n  a: 1\n\n---\nkind: Node\n\nThanks"
        );
        let fenced = "```\n  apiVersion: v1\n  kind: Pod\n```";
        assert_eq!(
            unwrapped(fenced).unwrap(),
            "```\napiVersion: v1\nkind: Pod\n```"
        );
    }

    #[test]
    fn an_indented_describe_moves_to_column_zero() {
        let text = "\n    $ kubectl describe nodepool spot\n    Name:  spot\n    Spec:\n      Limits:\n        Cpu:  10\n";
        assert_eq!(
            unwrapped(text).unwrap(),
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
            unwrapped(table).unwrap(),
            "Output:\n\n$ kubectl get nodeclaims\nNAME    TYPE        READY\nd-k2x   c6a.large   True\n\nThanks\n"
        );
        let headless = "  NAME        NODECLASS   READY\n  gpu-h100    gpu         False\n";
        assert_eq!(
            unwrapped(headless).unwrap(),
            "NAME        NODECLASS   READY\ngpu-h100    gpu         False\n"
        );
        // A console log in a code block (Stack Overflow's four spaces), a stern prefix before it.
        let log = "Logs:\n\n    karpenter-5f7b9 controller 2023-06-02T11:04:51.880Z\tINFO\tcontroller.provisioner\tno provisioners found\n";
        assert_eq!(
            unwrapped(log).unwrap(),
            "Logs:\n\nkarpenter-5f7b9 controller 2023-06-02T11:04:51.880Z\tINFO\tcontroller.provisioner\tno provisioners found\n"
        );
        // describe's own tables are indented under their heading and not upper case.
        assert_eq!(
            unwrapped("Conditions:\n\n  Type    Status\n  Ready   True\n"),
            None
        );
    }

    #[test]
    fn no_break_and_zero_width_spaces_become_plain() {
        let teams = "spec:\n\u{a0} disruption:\n\u{a0}\u{a0}\u{a0} budgets:\u{200b}\nNAME\u{a0}\u{a0}\u{202f}READY\n";
        assert_eq!(
            unwrapped(teams).unwrap(),
            "spec:\n  disruption:\n    budgets:\nNAME   READY\n"
        );
        // Other non-ASCII text (the lead bytes of no-break spaces) stays as written.
        assert_eq!(unwrapped("café – “quoted” ’\n"), None);
    }

    #[test]
    fn yaml_structure_is_not_a_wrapper() {
        // Children after a blank line, continued by their less-indented parent's siblings.
        let nested = "spec:\n  template:\n\n    kind: x\n  other: 1\n";
        assert_eq!(unwrapped(nested), None);
        // An indented block without Kubernetes YAML in it (a stack trace, a describe part).
        assert_eq!(unwrapped("panic: x\n\n\tgoroutine 1\n\tmain.go:3\n"), None);
        assert_eq!(unwrapped("Events:\n\n  Type  Reason\n"), None);
        assert_eq!(
            unwrapped("Spec:\n\n  Name:  x\n  Kind:  y\nStatus:\n"),
            None
        );
    }

    #[test]
    fn line_count_never_changes() {
        for text in [
            "> a\n> b\n\n    apiVersion: v1\n\x1b[0m\n",
            "\x1b[31m\n\n\n>\n>\n",
            "  kind: x\n\r\n  apiVersion: v\r\n",
        ] {
            let out = unwrapped(text).unwrap_or_else(|| text.to_string());
            assert_eq!(
                out.split('\n').count(),
                text.split('\n').count(),
                "{text:?}"
            );
        }
    }
}
