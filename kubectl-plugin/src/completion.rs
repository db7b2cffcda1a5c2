//! Shell completion, from the same clap definitions as `--help`.
//!
//! Two ways in, because a kubectl plugin is typed two ways:
//! - `kubectl-karpenter_why <TAB>` (the binary itself): the static scripts clap_complete writes
//!   for bash, zsh, fish, PowerShell and elvish (`completion SHELL`).
//! - `kubectl karpenter-why <TAB>`: kubectl (1.26 and later) completes a plugin by running an
//!   executable `kubectl_complete-karpenter_why` on PATH with the words typed so far, and reads
//!   Cobra's `__complete` answer: one candidate per line (`value<TAB>description`), then
//!   `:<directive>`. `completion kubectl` prints that executable (a two-line shell script that
//!   calls the hidden `__complete` first word, see `main.rs`), so kubectl's own completion
//!   covers the plugin.

use clap::{Arg, Command, CommandFactory, ValueEnum};
use clap_complete::Shell;

use crate::cli::Cli;

/// The hidden first word that asks for kubectl-style candidates (handled before clap parses).
pub const COMPLETE_VERB: &str = "__complete";

/// The binary name the static scripts complete.
pub const BIN: &str = "kubectl-karpenter_why";

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
    Elvish,
    /// The `kubectl_complete-karpenter_why` executable for `kubectl karpenter-why <TAB>`.
    Kubectl,
}

/// The completion script for `shell`.
pub fn script(shell: CompletionShell) -> String {
    let shell = match shell {
        CompletionShell::Kubectl => return KUBECTL_COMPLETE.to_string(),
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
        CompletionShell::Powershell => Shell::PowerShell,
        CompletionShell::Elvish => Shell::Elvish,
    };
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), BIN, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

const KUBECTL_COMPLETE: &str = "#!/bin/sh
# kubectl runs this to complete `kubectl karpenter-why ...` (kubectl 1.26+). Install it on PATH:
#   kubectl karpenter-why completion kubectl > ~/.local/bin/kubectl_complete-karpenter_why
#   chmod +x ~/.local/bin/kubectl_complete-karpenter_why
exec kubectl-karpenter_why __complete \"$@\"
";

/// Cobra's directives: what the shell should do besides offering the candidates.
const DIRECTIVE_DEFAULT: u8 = 0;
const DIRECTIVE_NO_FILE_COMP: u8 = 4;

/// The `__complete` answer for the words after `kubectl karpenter-why` (the last one is the
/// word being completed, possibly empty).
pub fn cobra_candidates(words: &[String]) -> String {
    let (current, before) = match words.split_last() {
        Some((last, rest)) => (last.as_str(), rest),
        None => ("", &[][..]),
    };
    let root = Cli::command();
    let mut command = &root;
    let mut pending_value: Option<&Arg> = None;
    let mut positionals_seen = 0;
    for word in before {
        if pending_value.take().is_some() {
            continue;
        }
        if let Some(flag) = word.strip_prefix("--") {
            if !flag.contains('=') {
                pending_value = find_flag(&root, command, |a| a.get_long() == Some(flag))
                    .filter(|a| a.get_action().takes_values());
            }
        } else if let Some(short) = word.strip_prefix('-').filter(|s| s.len() == 1) {
            let c = short.chars().next();
            pending_value = find_flag(&root, command, |a| a.get_short() == c)
                .filter(|a| a.get_action().takes_values());
        } else if let Some(sub) = command.find_subcommand(word) {
            command = sub;
            positionals_seen = 0;
        } else {
            positionals_seen += 1;
        }
    }
    let mut lines: Vec<String> = Vec::new();
    let mut directive = DIRECTIVE_NO_FILE_COMP;
    if let Some(arg) = pending_value {
        match values_of(arg) {
            Some(values) => lines.extend(values.into_iter().filter(|v| v.starts_with(current))),
            None => directive = DIRECTIVE_DEFAULT,
        }
    } else if current.starts_with('-') {
        for arg in command.get_arguments().chain(global_flags(&root, command)) {
            if arg.is_hide_set() {
                continue;
            }
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            if let Some(long) = arg.get_long() {
                let flag = format!("--{long}");
                if flag.starts_with(current) {
                    lines.push(candidate(&flag, &help));
                }
            }
        }
    } else {
        for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name().starts_with(current) && positionals_seen == 0 {
                let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
                lines.push(candidate(sub.get_name(), &about));
            }
        }
        let positional = command.get_positionals().nth(positionals_seen);
        match command.get_name() {
            "explain" => lines.extend(
                karpenter_why_core::rules::all()
                    .into_iter()
                    .filter(|r| r.meta.id.starts_with(&current.to_ascii_uppercase()))
                    .map(|r| candidate(r.meta.id, r.meta.title)),
            ),
            "analyze" => directive = DIRECTIVE_DEFAULT,
            _ => {
                if let Some(values) = positional.and_then(values_of) {
                    lines.extend(values.into_iter().filter(|v| v.starts_with(current)));
                }
            }
        }
    }
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!(":{directive}\n"));
    out
}

fn candidate(value: &str, help: &str) -> String {
    let help = help.lines().next().unwrap_or_default();
    if help.is_empty() {
        value.to_string()
    } else {
        format!("{value}\t{help}")
    }
}

/// A flag of `command`, or a global flag declared on the root.
fn find_flag<'a>(
    root: &'a Command,
    command: &'a Command,
    pred: impl Fn(&Arg) -> bool,
) -> Option<&'a Arg> {
    command
        .get_arguments()
        .find(|a| pred(a))
        .or_else(|| root.get_arguments().find(|a| a.is_global_set() && pred(a)))
}

/// The root's global flags, when completing below the root (clap lists them on the root only
/// until the command is built for parsing).
fn global_flags<'a>(root: &'a Command, command: &'a Command) -> impl Iterator<Item = &'a Arg> {
    let below_root = !std::ptr::eq(root, command);
    root.get_arguments()
        .filter(move |a| below_root && a.is_global_set())
}

/// The possible values of an argument that has a closed set (`-o`, `--color`, a shell).
fn values_of(arg: &Arg) -> Option<Vec<String>> {
    let values = arg.get_possible_values();
    (!values.is_empty()).then(|| {
        values
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(words: &[&str]) -> String {
        cobra_candidates(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn verbs_at_the_top() {
        let out = complete(&["an"]);
        assert!(out.starts_with("analyze\t"), "{out}");
        assert!(out.ends_with(":4\n"), "{out}");
        let all = complete(&[""]);
        for verb in [
            "analyze",
            "explain",
            "rules",
            "node",
            "nodeclaim",
            "pending",
            "collect",
            "completion",
        ] {
            assert!(
                all.lines().any(|l| l.split('\t').next() == Some(verb)),
                "{verb} in {all}"
            );
        }
        assert!(
            !all.contains("__complete"),
            "hidden verbs stay hidden: {all}"
        );
    }

    #[test]
    fn flag_values_and_flags() {
        assert_eq!(complete(&["-o", "m"]), "markdown\n:4\n");
        assert_eq!(
            complete(&["analyze", "--color", ""]),
            "auto\nalways\nnever\n:4\n"
        );
        let flags = complete(&["pending", "--"]);
        assert!(flags.contains("--all-namespaces\t"), "{flags}");
        assert!(
            flags.contains("--kubeconfig\t"),
            "global flags below the root: {flags}"
        );
    }

    #[test]
    fn rule_ids_for_explain_and_files_for_analyze() {
        let out = complete(&["explain", "kw20"]);
        assert!(out.starts_with("KW200\t"), "{out}");
        assert!(out.contains("KW202\t"), "{out}");
        assert_eq!(complete(&["analyze", "ex"]), ":0\n");
        assert_eq!(complete(&["completion", "f"]), "fish\n:4\n");
    }

    #[test]
    fn static_scripts_name_the_binary() {
        for shell in [
            CompletionShell::Bash,
            CompletionShell::Zsh,
            CompletionShell::Fish,
        ] {
            let text = script(shell);
            assert!(text.contains(BIN), "{shell:?}");
            assert!(text.contains("nodeclaim"), "{shell:?}");
        }
        assert!(script(CompletionShell::Kubectl).contains("exec kubectl-karpenter_why __complete"));
    }
}
