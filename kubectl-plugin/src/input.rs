//! Reading the offline inputs of `analyze`: files, directories of files, and stdin, each
//! becoming one Document labelled with its path (or `stdin`).
//!
//! Every input is streamed through core's log scanner: Karpenter log noise (INFO/DEBUG lines
//! holding no catalogue signal) is counted and dropped while reading, so a multi-gigabyte log
//! costs memory for its candidate lines only. Everything else (describe output, YAML, tables)
//! is kept whole, with the original line numbers.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use karpenter_why_core::ingest::scan;
use karpenter_why_core::Document;

/// Bytes read per call: large enough that the scanner's block search amortises well.
const CHUNK: usize = 1 << 20;

/// An input that could not be read at all: named, so the user knows which one.
#[derive(Debug)]
pub struct InputReadError {
    pub path: String,
    pub reason: String,
}

impl fmt::Display for InputReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot read {}: {}", self.path, self.reason)
    }
}

/// Reads every named input; `-` is stdin; a directory contributes its files (sorted, not
/// recursing into hidden entries). An empty list reads stdin.
pub fn read_documents(inputs: &[String]) -> Result<Vec<Document>, InputReadError> {
    let mut documents = Vec::new();
    if inputs.is_empty() {
        documents.push(read_stdin()?);
    }
    for input in inputs {
        if input == "-" {
            documents.push(read_stdin()?);
            continue;
        }
        let path = Path::new(input);
        if path.is_dir() {
            for file in files_in(path)? {
                documents.push(read_file(&file)?);
            }
        } else {
            documents.push(read_file(path)?);
        }
    }
    Ok(documents)
}

fn read_stdin() -> Result<Document, InputReadError> {
    scan_maybe_gzip("stdin", std::io::stdin().lock())
}

fn read_file(path: &Path) -> Result<Document, InputReadError> {
    let label = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| InputReadError {
        path: label.clone(),
        reason: e.to_string(),
    })?;
    scan_maybe_gzip(&label, file)
}

/// The gzip magic number: rotated kubelet/containerd logs and log exports are often gzipped.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Streams `reader` through the scanner, decompressing it on the way when it is gzip (every
/// member: `cat a.gz b.gz` and logrotate output have several).
fn scan_maybe_gzip(label: &str, reader: impl Read) -> Result<Document, InputReadError> {
    let mut reader = std::io::BufReader::with_capacity(CHUNK, reader);
    let head = std::io::BufRead::fill_buf(&mut reader).map_err(|e| InputReadError {
        path: label.to_string(),
        reason: e.to_string(),
    })?;
    if head.starts_with(&GZIP_MAGIC) {
        let decoder = flate2::bufread::MultiGzDecoder::new(reader);
        return scan_reader(label, decoder).map_err(|e| InputReadError {
            reason: format!("gzip data: {}", e.reason),
            ..e
        });
    }
    scan_reader(label, reader)
}

/// Streams `reader` through the log scanner into a Document of the kept lines.
pub fn scan_reader(label: &str, mut reader: impl Read) -> Result<Document, InputReadError> {
    let mut scanner = scan::stream_scanner(label);
    let mut buffer = vec![0u8; CHUNK];
    loop {
        match reader.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => scanner.feed(&buffer[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(InputReadError {
                    path: label.to_string(),
                    reason: e.to_string(),
                })
            }
        }
    }
    Ok(scanner.finish().document)
}

fn files_in(dir: &Path) -> Result<Vec<PathBuf>, InputReadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| InputReadError {
        path: dir.display().to_string(),
        reason: e.to_string(),
    })?;
    let mut files = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if hidden {
            continue;
        }
        if path.is_dir() {
            files.extend(files_in(&path)?);
        } else {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_dropped_while_reading_and_lines_keep_their_numbers() {
        let mut text = String::from("Name:  web-0\n");
        for i in 0..1000 {
            text.push_str(&format!(
                "{{\"level\":\"INFO\",\"message\":\"Starting workers\",\"n\":{i}}}\n"
            ));
        }
        text.push_str("{\"level\":\"ERROR\",\"message\":\"could not schedule pod\"}\n");
        let doc = scan_reader("t", text.as_bytes()).unwrap();
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
        let doc = scan_maybe_gzip("karpenter.log.gz", &bytes[..]).unwrap();
        assert_eq!(
            doc.text,
            scan_reader("karpenter.log.gz", text.as_bytes())
                .unwrap()
                .text
        );
        // Cut short: the error names the file and says it is the gzip data.
        let cut = &bytes[..bytes.len() / 2];
        let err = scan_maybe_gzip("karpenter.log.gz", cut).unwrap_err();
        assert_eq!(err.path, "karpenter.log.gz");
        assert!(
            err.to_string()
                .starts_with("cannot read karpenter.log.gz: gzip data: "),
            "{err}"
        );
    }

    #[test]
    fn a_utf16_file_from_powershell_reads_like_its_utf8() {
        let text = "Name:  web-0\r\n{\"level\":\"INFO\",\"message\":\"Starting workers\"}\r\n{\"level\":\"ERROR\",\"message\":\"could not schedule pod\"}\r\n";
        let mut utf16 = vec![0xFF, 0xFE];
        utf16.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        let doc = scan_reader("karpenter.log", &utf16[..]).unwrap();
        assert_eq!(
            doc.text,
            scan_reader("karpenter.log", text.as_bytes()).unwrap().text
        );
        assert!(doc.text.contains("could not schedule pod"));
    }

    #[test]
    fn unreadable_input_names_the_path() {
        let err = read_documents(&["/nonexistent/karpenter.log".to_string()]).unwrap_err();
        assert_eq!(err.path, "/nonexistent/karpenter.log");
        assert!(err
            .to_string()
            .starts_with("cannot read /nonexistent/karpenter.log: "));
    }

    #[test]
    fn directories_give_one_document_per_visible_file() {
        let dir = std::env::temp_dir().join(format!("kw-input-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("b.txt"), "b\n").unwrap();
        std::fs::write(dir.join("sub/a.txt"), "a\n").unwrap();
        std::fs::write(dir.join(".hidden"), "h\n").unwrap();
        let docs = read_documents(&[dir.display().to_string()]).unwrap();
        let texts: Vec<&str> = docs.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(texts, ["b\n", "a\n"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
