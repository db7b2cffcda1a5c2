//! Reading the offline inputs of `analyze`: files, directories of files, and stdin, each
//! becoming one Document labelled with its path (or `stdin`).
//!
//! Every input is streamed through core's log scanner: Karpenter log noise (INFO/DEBUG lines
//! holding no catalogue signal) is counted and dropped while reading, so a multi-gigabyte log
//! costs memory for its candidate lines only. Everything else (describe output, YAML, tables)
//! is kept whole, with the original line numbers.

use std::io::Read;
use std::path::{Path, PathBuf};

use karpenter_why_core::ingest::scan;
use karpenter_why_core::{Document, InputError};

/// Bytes read per call: large enough that the scanner's block search amortises well.
const CHUNK: usize = 1 << 20;

/// What reading the inputs gave: the documents (a file that broke off mid-way keeps the lines
/// read before the break) and one error per input that could not be read, or not to its end.
/// An error's `line` is the last line read before the failure (0: nothing could be read).
#[derive(Debug, Default)]
pub struct Inputs {
    pub documents: Vec<Document>,
    pub errors: Vec<InputError>,
}

impl Inputs {
    fn read(&mut self, label: &str, reader: impl Read) {
        let (document, error) = scan_maybe_gzip(label, reader);
        if !document.text.is_empty() || error.is_none() {
            self.documents.push(document);
        }
        self.errors.extend(error);
    }

    fn failed(&mut self, label: &str, reason: impl ToString) {
        self.errors.push(InputError {
            source: label.to_string(),
            line: 0,
            message: format!("cannot read this input: {}", reason.to_string()),
        });
    }
}

/// Reads every named input; `-` is stdin; a directory contributes its files (sorted, not
/// recursing into hidden entries). An empty list reads stdin. One unreadable input does not
/// stop the others: the user still gets the analysis of everything that could be read.
pub fn read_documents(inputs: &[String]) -> Inputs {
    let mut read = Inputs::default();
    if inputs.is_empty() {
        read.read("stdin", std::io::stdin().lock());
    }
    for input in inputs {
        if input == "-" {
            read.read("stdin", std::io::stdin().lock());
            continue;
        }
        let path = Path::new(input);
        if path.is_dir() {
            for file in files_in(path, &mut read) {
                read_file(&file, &mut read);
            }
        } else {
            read_file(path, &mut read);
        }
    }
    read
}

fn read_file(path: &Path, read: &mut Inputs) {
    let label = path.display().to_string();
    match std::fs::File::open(path) {
        Ok(file) => read.read(&label, file),
        Err(e) => read.failed(&label, e),
    }
}

/// The gzip magic number: rotated kubelet/containerd logs and log exports are often gzipped.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Streams `reader` through the scanner, decompressing it on the way when it is gzip (every
/// member: `cat a.gz b.gz` and logrotate output have several). A read that fails mid-way (a
/// gzip file cut short by a full disk or an interrupted copy is the usual case) keeps the
/// lines before the failure and says where it stopped.
fn scan_maybe_gzip(label: &str, reader: impl Read) -> (Document, Option<InputError>) {
    let mut reader = std::io::BufReader::with_capacity(CHUNK, reader);
    let head = match std::io::BufRead::fill_buf(&mut reader) {
        Ok(head) => head,
        Err(e) => return (Document::new(label, ""), Some(read_error(label, 0, "", &e))),
    };
    if head.starts_with(&GZIP_MAGIC) {
        let decoder = flate2::bufread::MultiGzDecoder::new(reader);
        return scan_reader_with(label, decoder, "gzip data: ");
    }
    scan_reader_with(label, reader, "")
}

/// Streams `reader` through the log scanner into a Document of the kept lines; `what` names
/// the layer a read error comes from.
fn scan_reader_with(
    label: &str,
    mut reader: impl Read,
    what: &str,
) -> (Document, Option<InputError>) {
    let mut scanner = scan::stream_scanner(label);
    let mut buffer = vec![0u8; CHUNK];
    let mut failure = None;
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => scanner.feed(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let output = scanner.finish();
    let error = failure.map(|e| read_error(label, output.stats.lines, what, &e));
    (output.document, error)
}

fn read_error(label: &str, lines_read: usize, what: &str, e: &std::io::Error) -> InputError {
    let message = if lines_read == 0 {
        format!("cannot read this input: {what}{e}")
    } else {
        format!("reading stopped here ({what}{e})")
    };
    InputError {
        source: label.to_string(),
        line: lines_read,
        message,
    }
}

fn files_in(dir: &Path, read: &mut Inputs) -> Vec<PathBuf> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            read.failed(&dir.display().to_string(), e);
            return Vec::new();
        }
    };
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if hidden {
            continue;
        }
        if path.is_dir() {
            files.extend(files_in(&path, read));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan_reader(label: &str, reader: impl Read) -> (Document, Option<InputError>) {
        scan_reader_with(label, reader, "")
    }

    #[test]
    fn noise_is_dropped_while_reading_and_lines_keep_their_numbers() {
        let mut text = String::from("Name:  web-0\n");
        for i in 0..1000 {
            text.push_str(&format!(
                "{{\"level\":\"INFO\",\"message\":\"Starting workers\",\"n\":{i}}}\n"
            ));
        }
        text.push_str("{\"level\":\"ERROR\",\"message\":\"could not schedule pod\"}\n");
        let (doc, error) = scan_reader("t", text.as_bytes());
        assert!(error.is_none());
        assert_eq!(doc.line_numbers.as_deref(), Some(&[1, 2, 1002][..]));
        assert_eq!(doc.omitted_log_lines.get("INFO"), Some(&999));
        assert!(doc.text.starts_with("Name:  web-0\n"));
    }

    #[test]
    fn a_gzipped_log_reads_like_its_text_and_a_corrupt_one_is_named() {
        use std::io::Write;
        let text = "Name:  web-0\n{\"level\":\"ERROR\",\"message\":\"could not schedule pod\"}\n";
        let gzip = |s: &str| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(s.as_bytes()).unwrap();
            e.finish().unwrap()
        };
        // Two members, as `cat part1.gz part2.gz` makes.
        let (first, second) = text.split_at(13);
        let mut bytes = gzip(first);
        bytes.extend(gzip(second));
        let (doc, error) = scan_maybe_gzip("karpenter.log.gz", &bytes[..]);
        assert!(error.is_none());
        assert_eq!(
            doc.text,
            scan_reader("karpenter.log.gz", text.as_bytes()).0.text
        );
        // Cut in the second member: what decompressed is kept (up to the cut, mid-line), and
        // the error says where reading stopped and that it was the gzip data.
        let cut = &bytes[..bytes.len() - 12];
        let (doc, error) = scan_maybe_gzip("karpenter.log.gz", cut);
        assert!(
            doc.text.starts_with("Name:  web-0\n{\"level\":\"ERROR\""),
            "{}",
            doc.text
        );
        let error = error.expect("a cut gzip file is reported");
        assert_eq!(error.location(), "karpenter.log.gz:2");
        assert!(
            error
                .message
                .starts_with("reading stopped here (gzip data: "),
            "{}",
            error.message
        );
        // Cut inside the first member's header: nothing read, line 0.
        let (doc, error) = scan_maybe_gzip("karpenter.log.gz", &bytes[..5]);
        assert_eq!(doc.text, "");
        assert_eq!(error.unwrap().location(), "karpenter.log.gz");
    }

    #[test]
    fn a_utf16_file_from_powershell_reads_like_its_utf8() {
        let text = "Name:  web-0\r\n{\"level\":\"INFO\",\"message\":\"Starting workers\"}\r\n{\"level\":\"ERROR\",\"message\":\"could not schedule pod\"}\r\n";
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        let (doc, _) = scan_reader("karpenter.log", &utf16[..]);
        assert_eq!(
            doc.text,
            scan_reader("karpenter.log", text.as_bytes()).0.text
        );
        assert!(doc.text.contains("could not schedule pod"));
    }

    #[test]
    fn an_unreadable_input_is_named_and_the_others_are_still_read() {
        let dir = std::env::temp_dir().join(format!("kw-unreadable-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("describe.txt"), "Name:  web-0\n").unwrap();
        let read = read_documents(&[
            "/nonexistent/karpenter.log".to_string(),
            dir.join("describe.txt").display().to_string(),
        ]);
        assert_eq!(read.documents.len(), 1);
        assert_eq!(read.documents[0].text, "Name:  web-0\n");
        assert_eq!(read.errors.len(), 1);
        assert_eq!(read.errors[0].location(), "/nonexistent/karpenter.log");
        assert!(read.errors[0]
            .message
            .starts_with("cannot read this input: "));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn directories_give_one_document_per_visible_file() {
        let dir = std::env::temp_dir().join(format!("kw-input-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("b.txt"), "b\n").unwrap();
        std::fs::write(dir.join("sub/a.txt"), "a\n").unwrap();
        std::fs::write(dir.join(".hidden"), "h\n").unwrap();
        let read = read_documents(&[dir.display().to_string()]);
        assert!(read.errors.is_empty());
        let texts: Vec<&str> = read.documents.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(texts, ["b\n", "a\n"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
