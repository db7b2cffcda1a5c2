use std::io::Read;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some("analyze") {
        eprintln!("usage: kubectl karpenter-why analyze FILE...|-");
        return ExitCode::from(2);
    }
    let mut documents = Vec::new();
    for path in &args[1..] {
        let text = if path == "-" {
            let mut s = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut s) {
                eprintln!("error: stdin: {e}");
                return ExitCode::from(2);
            }
            s
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
        documents.push(karpenter_why_core::Document { label, text });
    }
    let diagnoses = karpenter_why_core::analyze(&documents);
    for d in &diagnoses {
        println!("{} {} {}", d.id, d.slug, d.title);
        for e in &d.evidence {
            println!("  {}:{}: {}", e.source, e.line, e.text);
        }
    }
    if diagnoses.is_empty() {
        println!("no diagnosis");
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
