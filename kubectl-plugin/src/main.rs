//! `kubectl karpenter-why`: parse the flags, run the verb (core does the work and the
//! rendering), print, and map the result to DESIGN.md's exit codes.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

mod cli;
mod completion;
mod input;
mod live;
#[cfg(test)]
mod manpage;

fn main() -> ExitCode {
    // kubectl's plugin completion passes the half-typed words (`-o m`) through; clap would
    // reject them as flags, so they never reach it.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == completion::COMPLETE_VERB) {
        let words: Vec<String> = args[2..]
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        print!("{}", completion::cobra_candidates(&words));
        return ExitCode::SUCCESS;
    }
    // clap prints usage errors itself and exits 2 (0 for --help and --version).
    let parsed = cli::Cli::parse_from(live::rewrite_collect_output(args));
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
