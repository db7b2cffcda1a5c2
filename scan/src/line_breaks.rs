//! Line breaks other than `\n` and `\r\n` made `\n`. A text saved on classic Mac OS, copied out
//! of some Windows tools or a web form, or run through a converter twice ends its lines with a
//! lone `\r` (or `\r\r\n`): read on `\n` alone it is one endless line in which no format is
//! found. A lone `\r` is a line break (as every editor shows it), a run of `\r` before a `\n` is
//! one. `\r\n` passes through as it is (readers strip the `\r`), so a Windows text is not
//! copied.

/// Streams bytes of any chunking; `\r`s at the end of a piece wait for the next one to tell
/// whether a `\n` follows.
#[derive(Debug, Default)]
pub struct LineBreaks {
    held_crs: usize,
    scratch: Vec<u8>,
    changed: bool,
}

impl LineBreaks {
    /// Passes `bytes` to `sink` with their line breaks fixed (unchanged bytes are not copied).
    pub fn push(&mut self, mut bytes: &[u8], sink: &mut dyn FnMut(&[u8])) {
        if bytes.is_empty() {
            return;
        }
        if self.held_crs > 0 {
            let leading = bytes.iter().take_while(|&&b| b == b'\r').count();
            if leading == bytes.len() {
                self.held_crs += leading;
                return;
            }
            let crs = std::mem::take(&mut self.held_crs) + leading;
            if bytes[leading] == b'\n' {
                // As within one piece: `\r\n` stays, a longer run before `\n` goes.
                if crs > 1 {
                    self.changed = true;
                } else {
                    sink(b"\r");
                }
            } else {
                self.changed = true;
                for _ in 0..crs {
                    sink(b"\n");
                }
            }
            bytes = &bytes[leading..];
        }
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        // `bytes[kept..]` is not yet in `out`; `fixed` says whether `out` is in use.
        let mut kept = 0;
        let mut fixed = false;
        let mut at = 0;
        let mut end = bytes.len();
        while let Some(offset) = memchr::memchr(b'\r', &bytes[at..]) {
            let cr = at + offset;
            let run_end = cr + bytes[cr..].iter().take_while(|&&b| b == b'\r').count();
            if run_end == bytes.len() {
                self.held_crs = run_end - cr;
                end = cr;
                break;
            }
            let lf = bytes[run_end] == b'\n';
            if !(lf && run_end - cr == 1) {
                out.extend_from_slice(&bytes[kept..cr]);
                if lf {
                    // One break: the `\n` stays, the `\r`s go.
                } else {
                    out.resize(out.len() + run_end - cr, b'\n');
                }
                kept = run_end;
                fixed = true;
            }
            at = run_end;
        }
        if fixed {
            self.changed = true;
            out.extend_from_slice(&bytes[kept..end]);
            sink(&out);
        } else if end > 0 {
            sink(&bytes[..end]);
        }
        self.scratch = out;
    }

    /// Passes the `\r`s still held (a text ending in lone `\r`s) as line breaks.
    pub fn finish(&mut self, sink: &mut dyn FnMut(&[u8])) {
        if self.held_crs > 0 {
            self.changed = true;
        }
        for _ in 0..std::mem::take(&mut self.held_crs) {
            sink(b"\n");
        }
    }

    /// Whether some line break was not `\n` or `\r\n`.
    pub fn changed(&self) -> bool {
        self.changed
    }
}

/// `text` with its line breaks fixed, or `None` when they are all `\n` or `\r\n`.
pub fn fixed_line_breaks(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    // The common case: no `\r` but before a `\n`.
    let lone = memchr::memchr_iter(b'\r', bytes).any(|cr| bytes.get(cr + 1) != Some(&b'\n'));
    if !lone {
        return None;
    }
    let mut breaks = LineBreaks::default();
    let mut out = Vec::with_capacity(bytes.len());
    breaks.push(bytes, &mut |b| out.extend_from_slice(b));
    breaks.finish(&mut |b| out.extend_from_slice(b));
    // Only ASCII bytes were replaced or removed: still UTF-8.
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixed(text: &str, piece: usize) -> String {
        let mut breaks = LineBreaks::default();
        let mut out = Vec::new();
        for chunk in text.as_bytes().chunks(piece.max(1)) {
            breaks.push(chunk, &mut |b| out.extend_from_slice(b));
        }
        breaks.finish(&mut |b| out.extend_from_slice(b));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn lone_carriage_returns_break_lines_in_any_chunking() {
        for (text, want) in [
            ("a\rb\r", "a\nb\n"),
            ("a\r\rb", "a\n\nb"),
            ("a\r\nb\r\n", "a\r\nb\r\n"),
            ("a\r\r\nb\r\r\r\nc", "a\nb\nc"),
            ("a\nb\r\nc\rd\r", "a\nb\r\nc\nd\n"),
            ("\r\r\r", "\n\n\n"),
            ("é\rü\r\n", "é\nü\r\n"),
            ("", ""),
        ] {
            for piece in [1, 2, 3, text.len()] {
                assert_eq!(fixed(text, piece), want, "{text:?} in pieces of {piece}");
            }
        }
    }

    #[test]
    fn unix_and_windows_texts_are_left_alone() {
        assert_eq!(fixed_line_breaks("a\nb\r\nc"), None);
        assert_eq!(fixed_line_breaks("a\r\nb\r\n"), None);
        assert_eq!(fixed_line_breaks("a\rb").as_deref(), Some("a\nb"));
        let mut breaks = LineBreaks::default();
        breaks.push(b"a\r", &mut |_| {});
        breaks.push(b"\nb", &mut |_| {});
        breaks.finish(&mut |_| {});
        assert!(!breaks.changed());
    }
}
