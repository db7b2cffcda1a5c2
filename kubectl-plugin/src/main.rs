use std::process::ExitCode;

use karpenter_why_core::{analyze, Options, Severity};

mod input;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("analyze") {
        eprintln!("usage: kubectl karpenter-why analyze FILE...|-");
        return ExitCode::from(2);
    }
    let documents = match input::read_documents(&args[1..]) {
        Ok(documents) => documents,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
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
