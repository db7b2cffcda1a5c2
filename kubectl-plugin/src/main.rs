use std::io::Read;
use std::process::ExitCode;

use karpenter_why_core::{analyze, Document, Options, Severity};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("analyze") {
        eprintln!("usage: kubectl karpenter-why analyze FILE...|-");
        return ExitCode::from(2);
    }
    let mut documents = Vec::new();
    for path in &args[1..] {
        let text = if path == "-" {
            let mut bytes = Vec::new();
            if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
                eprintln!("error: stdin: {e}");
                return ExitCode::from(2);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            match std::fs::read(path) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => {
                    eprintln!("error: {path}: {e}");
                    return ExitCode::from(2);
                }
            }
        };
        let label = if path == "-" {
            "stdin".to_string()
        } else {
            path.clone()
        };
        documents.push(Document::new(label, text));
    }
    let report = analyze(&documents, &Options::default());
    println!("{}", report.to_json());
    if report
        .diagnoses
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
