//! Line-number gutters: a file or output copied from `cat -n`, `nl`, `less -N`, `grep -n`, a
//! GitHub file view or an editor (`     12\t{...}`, `12 | Events:`, `12: ...`). With the
//! numbers in front, no line starts where its format says (`Name:` at column 0, YAML keys at
//! their indentation, `{` of a JSON line), so the gutter comes off before segmenting.
//!
//! A number in front of a line is also a table's first column (`history`, a numbered list),
//! so a gutter is taken off only a run of at least [`MIN_LINES`] lines whose numbers follow
//! each other one by one, all with the same separator. A run of spaces is a separator only as
//! `less -N` prints it (the number right-aligned in 7 columns, one space): `history` aligns its
//! numbers in 5 and leaves two spaces, and its lines stay commands of their own.

/// Fewest numbered lines in a run that make it a gutter.
const MIN_LINES: usize = 3;

/// What separates the number from the line.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Separator {
    /// `cat -n`, `nl`: a tab.
    Tab,
    /// An editor or a GitHub view: `|` or `│`, spaces around it.
    Bar,
    /// `grep -n`, some editors: `:`.
    Colon,
    /// `less -N`: one space after a number right-aligned in 7 columns.
    Space,
    /// Only the number (`cat -n` of a blank line, its tab trimmed): fits any run.
    None,
}

/// A line's gutter: its number, separator, and the byte where the line's own text starts.
fn gutter(line: &str) -> Option<(u32, Separator, usize)> {
    let bytes = line.as_bytes();
    let lead = bytes.iter().take_while(|&&b| b == b' ').count();
    let digits = bytes[lead..]
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .count();
    if digits == 0 || digits > 7 {
        return None;
    }
    let number: u32 = line[lead..lead + digits].parse().ok()?;
    let at = lead + digits;
    let rest = &line[at..];
    let spaced = rest.trim_start_matches(' ');
    let bar_at = at + (rest.len() - spaced.len());
    let found = if rest.trim_end().is_empty() {
        (Separator::None, line.len())
    } else if let Some(after) = rest.strip_prefix('\t') {
        (Separator::Tab, line.len() - after.len())
    } else if rest.starts_with(':') {
        (Separator::Colon, at + 1)
    } else if spaced.starts_with('|') {
        (Separator::Bar, bar_at + 1)
    } else if spaced.starts_with('│') {
        (Separator::Bar, bar_at + '│'.len_utf8())
    } else if rest.starts_with(' ') && at >= 7 {
        (Separator::Space, at + 1)
    } else {
        return None;
    };
    Some((number, found.0, found.1))
}

/// The lines with their gutters taken off, or `false` when no run of lines has one. A line
/// keeps its place (no line is joined or dropped), so line numbers in evidence stay the
/// input's.
pub fn strip_gutters(lines: &mut [&str]) -> bool {
    let mut changed = false;
    let mut i = 0;
    while i < lines.len() {
        let Some((first, separator, _)) = gutter(lines[i]).filter(|g| g.1 != Separator::None)
        else {
            i += 1;
            continue;
        };
        let mut expected = first;
        let mut numbered = Vec::new();
        let mut k = i;
        while k < lines.len() {
            match gutter(lines[k]) {
                Some((n, s, start))
                    if n == expected && (s == separator || s == Separator::None) =>
                {
                    numbered.push((k, start));
                    expected = expected.saturating_add(1);
                }
                // `nl` numbers only the lines with text in them.
                _ if lines[k].trim().is_empty() => {}
                _ => break,
            }
            k += 1;
        }
        if numbered.len() >= MIN_LINES {
            // `12: text` and `12 | text` put a space after the separator that belongs to it
            // when every line has one; `12:  key: v` under `12:key:` would be YAML indentation.
            let spaced = matches!(separator, Separator::Colon | Separator::Bar)
                && numbered.iter().all(|&(k, start)| {
                    lines[k][start..].is_empty() || lines[k][start..].starts_with(' ')
                });
            for (k, start) in numbered {
                let text = &lines[k][start..];
                lines[k] = if spaced {
                    text.strip_prefix(' ').unwrap_or(text)
                } else {
                    text
                };
            }
            changed = true;
        }
        i = k.max(i + 1);
    }
    changed
}

/// Whether some line may carry a gutter (the cheap test before splitting the text).
pub fn may_have_gutter(text: &str) -> bool {
    text.split('\n')
        .any(|line| gutter(line).is_some_and(|g| g.1 != Separator::None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stripped(text: &str) -> String {
        let mut lines: Vec<&str> = text.split('\n').collect();
        strip_gutters(&mut lines);
        lines.join("\n")
    }

    #[test]
    fn gutters_of_cat_nl_less_grep_and_editors_come_off() {
        let plain = "Name:  web-0\nEvents:\n  Type  Reason\n\n  Normal  Nominated";
        let numbered = |f: &dyn Fn(usize, &str) -> String| {
            plain
                .split('\n')
                .enumerate()
                .map(|(i, l)| f(i + 12, l))
                .collect::<Vec<_>>()
                .join("\n")
        };
        for text in [
            numbered(&|n, l| format!("{n:6}\t{l}")),
            numbered(&|n, l| format!("{n:6}\t{l}").trim_end().to_string()),
            numbered(&|n, l| format!("{n:7} {l}")),
            numbered(&|n, l| format!("{n} | {l}")),
            numbered(&|n, l| format!("{n:4} │ {l}")),
            numbered(&|n, l| format!("{n}:{l}")),
            numbered(&|n, l| format!("{n}: {l}")),
        ] {
            assert_eq!(stripped(&text), plain, "{text}");
        }
        // Inside a quote (Slack, a GitHub reply).
        let quoted: String = numbered(&|n, l| format!("> {n:6}\t{l}"));
        let unwrapped = crate::ingest::unwrap::unwrapped(&quoted).map(|u| u.text);
        assert_eq!(unwrapped.as_deref(), Some(plain));
        // `nl` leaves blank lines unnumbered.
        assert_eq!(
            stripped("     1\tName:  web-0\n     2\tEvents:\n\n     3\t  Normal  Nominated"),
            "Name:  web-0\nEvents:\n\n  Normal  Nominated"
        );
    }

    #[test]
    fn numbered_tables_and_lists_keep_their_numbers() {
        for text in [
            // `history`: numbers in 5 columns, two spaces.
            "  501  kubectl get pods\n  502  kubectl describe pod web-0\n  503  kubectl get nodes",
            // Numbers that do not follow each other, or too few lines.
            "3\tfoo\n7\tbar\n8\tbaz",
            "1: a\n2: b",
            "12:30 start\n12:31 stop\n12:32 again",
            "0 1 2\n1 2 3\n2 3 4",
        ] {
            assert_eq!(stripped(text), text);
        }
    }
}
