//! Reading the offline inputs of `analyze`: files, directories of files, and stdin, each
//! becoming one Document labelled with its path (or `stdin`).

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

use karpenter_why_core::Document;

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
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| InputReadError {
            path: "stdin".to_string(),
            reason: e.to_string(),
        })?;
    Ok(Document::new(
        "stdin",
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
}

fn read_file(path: &Path) -> Result<Document, InputReadError> {
    let bytes = std::fs::read(path).map_err(|e| InputReadError {
        path: path.display().to_string(),
        reason: e.to_string(),
    })?;
    Ok(Document::new(
        path.display().to_string(),
        String::from_utf8_lossy(&bytes).into_owned(),
    ))
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
