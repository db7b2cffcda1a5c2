//! The input's byte encoding, told from its first bytes, and UTF-16 turned into the UTF-8 the
//! scanner reads. Windows PowerShell 5 writes `kubectl logs ... > karpenter.log` as UTF-16LE
//! with a byte-order mark; read as UTF-8 every other byte is a NUL, no line parses and the
//! report would silently find nothing.

/// How many leading bytes decide the encoding when there is no byte-order mark.
const SNIFF_BYTES: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Encoding {
    #[default]
    Unknown,
    Utf8,
    Utf16 {
        big_endian: bool,
    },
}

/// Streams bytes of any chunking to UTF-8 pieces.
#[derive(Debug, Default)]
pub struct Transcoder {
    encoding: Encoding,
    /// The first bytes, held until they tell the encoding.
    head: Vec<u8>,
    /// UTF-16 only: an odd trailing byte, or a high surrogate waiting for its pair.
    carry: Vec<u8>,
    utf8: Vec<u8>,
}

impl Transcoder {
    /// Passes the UTF-8 form of `bytes` to `sink` (nothing while the encoding is not known).
    pub fn push(&mut self, bytes: &[u8], sink: &mut dyn FnMut(&[u8])) {
        match self.encoding {
            Encoding::Utf8 => sink(bytes),
            Encoding::Utf16 { big_endian } => {
                self.decode_utf16(bytes, big_endian, false);
                sink(&self.utf8);
            }
            Encoding::Unknown => {
                self.head.extend_from_slice(bytes);
                if self.head.len() >= SNIFF_BYTES {
                    self.release_head(sink);
                }
            }
        }
    }

    /// Passes what is still held to `sink`: a short input's bytes, a dangling UTF-16 byte or
    /// surrogate (as U+FFFD).
    pub fn finish(&mut self, sink: &mut dyn FnMut(&[u8])) {
        if self.encoding == Encoding::Unknown {
            self.release_head(sink);
        }
        if let Encoding::Utf16 { big_endian } = self.encoding {
            if !self.carry.is_empty() {
                self.decode_utf16(&[], big_endian, true);
                sink(&self.utf8);
            }
        }
    }

    /// Whether the input was read as UTF-16.
    pub fn was_utf16(&self) -> bool {
        matches!(self.encoding, Encoding::Utf16 { .. })
    }

    fn release_head(&mut self, sink: &mut dyn FnMut(&[u8])) {
        let head = std::mem::take(&mut self.head);
        let (encoding, mark) = sniff(&head);
        self.encoding = encoding;
        self.push(&head[mark..], sink);
    }

    /// `bytes` (after the carry) as UTF-8 in `self.utf8`; unpaired surrogates become U+FFFD.
    fn decode_utf16(&mut self, bytes: &[u8], big_endian: bool, last: bool) {
        let mut input = std::mem::take(&mut self.carry);
        input.extend_from_slice(bytes);
        let whole = input.len() / 2 * 2;
        let unit = |pair: &[u8]| {
            let pair = [pair[0], pair[1]];
            if big_endian {
                u16::from_be_bytes(pair)
            } else {
                u16::from_le_bytes(pair)
            }
        };
        let mut end = whole;
        if !last && end >= 2 && (0xD800..0xDC00).contains(&unit(&input[end - 2..end])) {
            // A high surrogate whose pair is in the next piece.
            end -= 2;
        }
        self.utf8.clear();
        let units = input[..end].chunks_exact(2).map(unit);
        for c in char::decode_utf16(units) {
            let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
            let mut buffer = [0u8; 4];
            self.utf8
                .extend_from_slice(c.encode_utf8(&mut buffer).as_bytes());
        }
        if last && whole < input.len() {
            self.utf8.extend_from_slice(
                char::REPLACEMENT_CHARACTER
                    .encode_utf8(&mut [0u8; 4])
                    .as_bytes(),
            );
        } else {
            self.carry.extend_from_slice(&input[end..]);
        }
    }
}

/// The encoding of an input starting with `head`, and the length of its byte-order mark. Text
/// without a mark is UTF-16 when a quarter of its first bytes are NULs, nearly all on one side
/// of each byte pair (ASCII in UTF-16): no text log holds NULs otherwise.
fn sniff(head: &[u8]) -> (Encoding, usize) {
    match head {
        [0xEF, 0xBB, 0xBF, ..] => return (Encoding::Utf8, 3),
        [0xFF, 0xFE, ..] => return (Encoding::Utf16 { big_endian: false }, 2),
        [0xFE, 0xFF, ..] => return (Encoding::Utf16 { big_endian: true }, 2),
        _ => {}
    }
    let sample = &head[..head.len().min(SNIFF_BYTES)];
    let nuls_at = |parity: usize| {
        sample
            .iter()
            .enumerate()
            .filter(|&(i, &b)| b == 0 && i % 2 == parity)
            .count()
    };
    let (even, odd) = (nuls_at(0), nuls_at(1));
    let nuls = even + odd;
    if sample.len() >= 8 && nuls * 4 >= sample.len() {
        if odd * 10 >= nuls * 9 {
            return (Encoding::Utf16 { big_endian: false }, 0);
        }
        if even * 10 >= nuls * 9 {
            return (Encoding::Utf16 { big_endian: true }, 0);
        }
    }
    (Encoding::Utf8, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, big_endian: bool, mark: bool) -> Vec<u8> {
        let mut bytes = Vec::new();
        let units = mark
            .then_some(0xFEFF)
            .into_iter()
            .chain(text.encode_utf16());
        for u in units {
            bytes.extend_from_slice(&if big_endian {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            });
        }
        bytes
    }

    fn transcode(bytes: &[u8], piece: usize) -> (String, bool) {
        let mut transcoder = Transcoder::default();
        let mut out = Vec::new();
        for chunk in bytes.chunks(piece.max(1)) {
            transcoder.push(chunk, &mut |b| out.extend_from_slice(b));
        }
        transcoder.finish(&mut |b| out.extend_from_slice(b));
        (String::from_utf8(out).unwrap(), transcoder.was_utf16())
    }

    const TEXT: &str = "{\"level\":\"ERROR\",\"message\":\"failed launching nodeclaim\"}\r\nNode: ip-10-0-1-2 — 𝄞 ü\n";

    #[test]
    fn utf16_with_or_without_a_mark_is_read_in_any_chunking() {
        for big_endian in [false, true] {
            for mark in [true, false] {
                let bytes = utf16(TEXT, big_endian, mark);
                for piece in [1, 2, 3, 7, 513, bytes.len()] {
                    assert_eq!(
                        transcode(&bytes, piece),
                        (TEXT.to_string(), true),
                        "big_endian {big_endian} mark {mark} piece {piece}"
                    );
                }
            }
        }
    }

    #[test]
    fn utf8_passes_through_and_loses_only_its_mark() {
        assert_eq!(transcode(TEXT.as_bytes(), 5), (TEXT.to_string(), false));
        let marked = [&[0xEF, 0xBB, 0xBF][..], TEXT.as_bytes()].concat();
        assert_eq!(transcode(&marked, 1), (TEXT.to_string(), false));
        assert_eq!(transcode(b"", 1), (String::new(), false));
        assert_eq!(transcode(b"a\0", 1), ("a\0".to_string(), false));
    }

    #[test]
    fn a_dangling_byte_or_surrogate_becomes_a_replacement_character() {
        let mut bytes = utf16("ab", false, true);
        bytes.extend_from_slice(&0xD834u16.to_le_bytes());
        assert_eq!(transcode(&bytes, 3).0, "ab\u{FFFD}");
        let mut bytes = utf16("ab", false, true);
        bytes.push(b'c');
        assert_eq!(transcode(&bytes, 3).0, "ab\u{FFFD}");
    }
}
