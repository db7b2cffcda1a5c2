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
    /// Reads one input: gzip is decompressed, a tar archive gives one document per file
    /// (`bundle.tar.gz/var/log/kubelet.log`), anything else is one document.
    fn read(&mut self, label: &str, reader: impl Read) {
        self.read_layer(label, &mut { reader }, "");
    }

    /// `layer` names what a read error comes from (`gzip data: `), for the message.
    /// (A `dyn` reader: each layer wraps the one below, so a generic one would recurse in its
    /// types.)
    fn read_layer(&mut self, label: &str, reader: &mut dyn Read, layer: &str) {
        let (head, failure) = read_head(reader, TAR_BLOCK);
        // A failure within the first bytes comes after them, as it would have unpeeked.
        let mut rest: &mut dyn Read = reader;
        let mut failed = failure.map(|e| Failed(Some(e)));
        if let Some(failed) = failed.as_mut() {
            rest = failed;
        }
        let reader = std::io::Cursor::new(head.clone()).chain(rest);
        if head.starts_with(&GZIP_MAGIC) {
            let mut decoder = flate2::read::MultiGzDecoder::new(reader);
            return self.read_layer(label, &mut decoder, "gzip data: ");
        }
        if is_tar_header(&head) {
            return self.read_tar(label, &mut { reader }, layer);
        }
        let (document, error) = scan_reader_with(label, reader, layer);
        if !document.text.is_empty() || error.is_none() {
            self.documents.push(document);
        }
        self.errors.extend(error);
    }

    /// Every regular, non-empty file of the archive, in archive order.
    fn read_tar(&mut self, label: &str, reader: &mut dyn Read, layer: &str) {
        let mut archive = tar::Archive::new(reader);
        let entries = match archive.entries() {
            Ok(entries) => entries,
            Err(e) => return self.errors.push(read_error(label, 0, layer, &e)),
        };
        let mut files = 0;
        for entry in entries {
            let mut entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    // The archive breaks off: the files before the break were read.
                    return self.errors.push(InputError {
                        source: label.to_string(),
                        line: 0,
                        message: format!(
                            "the archive breaks off after {files} file(s) ({layer}{e}); those were analysed"
                        ),
                    });
                }
            };
            let header = entry.header();
            if header.entry_type() != tar::EntryType::Regular || header.size().unwrap_or(0) == 0 {
                continue;
            }
            let path = entry.path().map_or_else(
                |_| String::from_utf8_lossy(&entry.path_bytes()).into_owned(),
                |p| p.display().to_string(),
            );
            files += 1;
            self.read_layer(
                &format!("{label}/{}", path.trim_start_matches("./")),
                &mut entry,
                layer,
            );
        }
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

/// A tar archive's blocks; its first one is a header.
const TAR_BLOCK: usize = 512;

/// A ustar (POSIX, GNU) header: `ustar` at offset 257, and a checksum that adds up.
fn is_tar_header(head: &[u8]) -> bool {
    if head.len() < TAR_BLOCK || &head[257..262] != b"ustar" {
        return false;
    }
    let stored = std::str::from_utf8(&head[148..156])
        .ok()
        .map(|s| s.trim_matches(|c: char| c == '\0' || c == ' '))
        .and_then(|s| u32::from_str_radix(s, 8).ok());
    // The checksum field counts as spaces.
    let sum: u32 = head[..TAR_BLOCK]
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u32::from(b)
            }
        })
        .sum();
    stored == Some(sum)
}

/// Up to `n` first bytes (fewer at the end of the input, or before a read error).
fn read_head(reader: &mut dyn Read, n: usize) -> (Vec<u8>, Option<std::io::Error>) {
    let mut head = vec![0; n];
    let mut filled = 0;
    while filled < n {
        match reader.read(&mut head[filled..]) {
            Ok(0) => break,
            Ok(k) => filled += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                head.truncate(filled);
                return (head, Some(e));
            }
        }
    }
    head.truncate(filled);
    (head, None)
}

/// A reader whose next read fails with the error it holds (then reads as ended).
struct Failed(Option<std::io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        self.0.take().map_or(Ok(0), Err)
    }
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

    /// One input through every layer: its one document (or none) and its one error (or none).
    fn scan_maybe_gzip(label: &str, bytes: &[u8]) -> (Document, Option<InputError>) {
        let mut inputs = Inputs::default();
        inputs.read(label, bytes);
        assert!(inputs.documents.len() <= 1 && inputs.errors.len() <= 1);
        let document = inputs
            .documents
            .pop()
            .unwrap_or_else(|| Document::new(label, ""));
        (document, inputs.errors.pop())
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    fn tarball(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut builder = tar::Builder::new(Vec::new());
        for (path, data) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            builder.append_data(&mut header, path, *data).unwrap();
        }
        builder.into_inner().unwrap()
    }

    /// The EKS log collector's bundle: every file a document named after the archive and its
    /// path, a rotated `.gz` inside decompressed, empty files and directories left out.
    #[test]
    fn a_tarball_gives_one_document_per_file() {
        let kubelet = "E0115 10:12:01.234567    2345 kubelet.go:2862] \"Container runtime network not ready\"\n";
        let ipamd = "{\"level\":\"error\",\"ts\":\"2026-12-06T20:42:03.412Z\",\"caller\":\"ipamd/ipamd.go:455\",\"msg\":\"Failed to call ec2:DescribeNetworkInterfaces\"}\n";
        let long_path = format!("./var/log/{}/kubelet.log.1.gz", "x".repeat(120));
        let bundle = tarball(&[
            ("./kubelet/kubelet.log", kubelet.as_bytes()),
            ("./var/log/empty.log", b""),
            (&long_path, &gzip(ipamd.as_bytes())),
        ]);
        for bytes in [bundle.clone(), gzip(&bundle)] {
            let mut inputs = Inputs::default();
            inputs.read("eks_i-0abc.tar.gz", &bytes[..]);
            assert!(inputs.errors.is_empty(), "{:?}", inputs.errors);
            let labels: Vec<&str> = inputs.documents.iter().map(|d| d.label.as_str()).collect();
            let long_label = format!("eks_i-0abc.tar.gz/{}", &long_path[2..]);
            assert_eq!(
                labels,
                ["eks_i-0abc.tar.gz/kubelet/kubelet.log", long_label.as_str()]
            );
            assert_eq!(inputs.documents[0].text, kubelet);
            assert_eq!(inputs.documents[1].text, ipamd);
        }
        // Cut in its second file: the first is kept, the break is named.
        let cut = &bundle[..1024 + 700];
        let mut inputs = Inputs::default();
        inputs.read("bundle.tar", cut);
        assert_eq!(inputs.documents.len(), 1, "{:?}", inputs.documents);
        assert_eq!(inputs.errors.len(), 1, "{:?}", inputs.errors);
        // Text that merely holds `ustar` is not an archive.
        let mut text = "x".repeat(257);
        text.push_str("ustar and more text\n");
        text.push_str(&"y".repeat(600));
        assert!(!is_tar_header(text.as_bytes()));
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
        let text = "Name:  web-0\n{\"level\":\"ERROR\",\"message\":\"could not schedule pod\"}\n";
        // Two members, as `cat part1.gz part2.gz` makes.
        let (first, second) = text.split_at(13);
        let mut bytes = gzip(first.as_bytes());
        bytes.extend(gzip(second.as_bytes()));
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
