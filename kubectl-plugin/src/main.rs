//! `kubectl karpenter-why`: parse the flags, run the verb (core does the work and the
//! rendering), print, and map the result to DESIGN.md's exit codes.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod input;
mod live;

fn main() -> ExitCode {
    // clap prints usage errors itself and exits 2 (0 for --help and --version).
    let parsed = cli::Cli::parse_from(live::rewrite_collect_output(std::env::args_os()));
    match cli::dispatch(parsed) {
        Ok(outcome) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is the reader's choice, not an error worth a panic.
            match stdout
                .write_all(outcome.stdout.as_bytes())
                .and_then(|()| stdout.flush())
            {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    eprintln!("error: writing the output: {e}");
                    ExitCode::from(2)
                }
                _ => outcome.code,
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
