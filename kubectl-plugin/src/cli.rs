//! The command line: flags and verbs (clap derive; the same definitions drive `--help` and,
//! later, completions and the man page), and what each offline verb does.
//!
//! The live verbs (the default `POD` verb, `node`, `nodeclaim`, `pending`, `collect`) and the
//! kubectl connection flags are defined in `live.rs`; this file only routes to them.

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use karpenter_why_core::render::{self, TextOptions};
use karpenter_why_core::{analyze, rules, Options, Report};
use karpenter_why_plugin::collect::Target;

use crate::input;

#[derive(Debug, Parser)]
#[command(
    name = "kubectl karpenter-why",
    bin_name = "kubectl karpenter-why",
    version,
    about = "Why is this pod Pending, why did Karpenter not launch a node, why is that node not going away?",
    long_about = None,
    after_help = "Exit codes: 0 no error-severity diagnosis, 1 at least one, 2 bad usage, unreadable input or no such object, 3 the cluster could not be reached."
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The pod to diagnose, from the cluster (the default verb).
    #[arg(value_name = "POD")]
    pub pod: Option<String>,
    #[command(flatten)]
    pub cluster: crate::live::ClusterArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Flags every verb takes, before or after the verb.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Output format.
    #[arg(short = 'o', long, value_enum, global = true, default_value_t = Output::Text)]
    pub output: Output,
    /// When to colour text output; `auto` colours a terminal unless NO_COLOR is set.
    #[arg(long, value_enum, global = true, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Mask AWS account IDs, ARNs, IPs, instance and ENI IDs and EC2 hostnames in what is
    /// printed (or, with `collect`, saved), for a ticket or a chat: the same value gets the
    /// same mask throughout, as the web page's redaction toggle does.
    #[arg(long, global = true)]
    pub redact: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    Text,
    Markdown,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Diagnose saved or pasted text offline: files, directories of files, or stdin (`-`).
    Analyze(AnalyzeArgs),
    /// Print a rule's documentation (what it means, why it happens, how to fix).
    Explain(ExplainArgs),
    /// List every rule of the catalogue.
    Rules,
    /// Why is this node not ready, not removed, not consolidated (from the cluster).
    Node(crate::live::NodeArgs),
    /// Why is this NodeClaim stuck (from the cluster).
    Nodeclaim(crate::live::NodeClaimArgs),
    /// Every Pending pod of the namespace (or all with -A), grouped by diagnosis.
    Pending(crate::live::PendingArgs),
    /// Save what the POD verb collects as one text file, for `analyze` or the web page.
    Collect(crate::live::CollectArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish), or with
    /// `kubectl` the helper that lets kubectl complete `kubectl karpenter-why`.
    Completion(CompletionArgs),
}

#[derive(Debug, Args)]
pub struct CompletionArgs {
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: crate::completion::CompletionShell,
}

#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Files or directories to read; `-` (or nothing) reads stdin. Several inputs are
    /// analysed together, as one paste. gzip-compressed input (`karpenter.log.gz`) is
    /// decompressed while reading; a tar archive (`eks-logs.tar.gz`) gives one input per file.
    #[arg(value_name = "FILE")]
    pub inputs: Vec<String>,
    /// Run only these rule IDs (comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "ID")]
    pub only: Vec<String>,
    /// RFC 3339 time that ages are computed against (default: none; core reads no clock).
    #[arg(long, value_name = "TIME")]
    pub now: Option<String>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A rule ID, e.g. KW202 (case-insensitive).
    #[arg(value_name = "ID")]
    pub id: String,
}

/// A failure that exits with code 2: bad usage or unreadable input, said in one line.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a verb produced: text for stdout and the exit code.
pub struct Outcome {
    pub stdout: String,
    pub code: ExitCode,
}

/// Colour decision: an explicit flag wins; `auto` colours only a terminal, and never when
/// `NO_COLOR` is set to anything non-empty (no-color.org) or the terminal is `dumb`.
pub fn use_color(
    choice: ColorChoice,
    no_color: Option<&str>,
    term: Option<&str>,
    is_tty: bool,
) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => is_tty && no_color.is_none_or(str::is_empty) && term != Some("dumb"),
    }
}

impl GlobalArgs {
    fn text_options(&self) -> TextOptions {
        let no_color = std::env::var("NO_COLOR").ok();
        let term = std::env::var("TERM").ok();
        TextOptions {
            color: use_color(
                self.color,
                no_color.as_deref(),
                term.as_deref(),
                std::io::stdout().is_terminal(),
            ),
            ..TextOptions::default()
        }
    }
}

/// Runs the parsed command line.
pub fn dispatch(cli: Cli) -> Result<Outcome, UsageError> {
    let Some(command) = cli.command else {
        if let Some(pod) = cli.pod {
            let target = Target::Pod {
                namespace: cli.cluster.namespace.clone(),
                name: pod,
            };
            return crate::live::diagnose(target, &cli.cluster, &cli.global);
        }
        let mut help = <Cli as clap::CommandFactory>::command();
        return Err(UsageError(format!(
            "a verb is required\n\n{}",
            help.render_help()
        )));
    };
    let global = &cli.global;
    match command {
        Command::Analyze(args) => run_analyze(args, global),
        Command::Explain(args) => {
            let rule = rules::find(&args.id).ok_or_else(|| {
                UsageError(format!(
                    "unknown rule ID {:?} (`kubectl karpenter-why rules` lists them)",
                    args.id
                ))
            })?;
            let stdout = match global.output {
                Output::Text => render::text::explain(rule, &global.text_options()),
                Output::Markdown => render::markdown::explain(rule),
                Output::Json => render::json::explain(rule),
            };
            Ok(success(stdout))
        }
        Command::Rules => {
            let all = rules::all();
            let stdout = match global.output {
                Output::Text => render::text::rules(&all, &global.text_options()),
                Output::Markdown => render::markdown::rules(&all),
                Output::Json => render::json::rules(&all),
            };
            Ok(success(stdout))
        }
        Command::Node(args) => {
            crate::live::diagnose(Target::Node { name: args.node }, &cli.cluster, global)
        }
        Command::Nodeclaim(args) => {
            crate::live::diagnose(Target::NodeClaim { name: args.name }, &cli.cluster, global)
        }
        Command::Pending(args) => crate::live::diagnose(
            Target::Pending {
                namespace: cli.cluster.namespace.clone(),
                all: args.all_namespaces,
            },
            &cli.cluster,
            global,
        ),
        Command::Collect(args) => crate::live::save(args, &cli.cluster, global.redact),
        Command::Completion(args) => Ok(success(crate::completion::script(args.shell))),
    }
}

fn success(stdout: String) -> Outcome {
    Outcome {
        stdout,
        code: ExitCode::SUCCESS,
    }
}

fn run_analyze(args: AnalyzeArgs, global: &GlobalArgs) -> Result<Outcome, UsageError> {
    for id in &args.only {
        if rules::find(id).is_none() {
            return Err(UsageError(format!(
                "unknown rule ID {id:?} in --only (`kubectl karpenter-why rules` lists them)"
            )));
        }
    }
    let reads_stdin = args.inputs.is_empty() || args.inputs.iter().any(|i| i == "-");
    if reads_stdin && std::io::stdin().is_terminal() {
        eprintln!("reading stdin: paste the text, then Ctrl-D (`kubectl karpenter-why analyze --help` for files)");
    }
    let input::Inputs { documents, errors } = input::read_documents(&args.inputs);
    if documents.is_empty() {
        // Nothing to analyse: the read errors are the whole answer.
        if errors.is_empty() {
            return Err(UsageError(format!(
                "no files to read in {}",
                args.inputs.join(", ")
            )));
        }
        let each: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {}", e.location(), e.message))
            .collect();
        return Err(UsageError(each.join("; ")));
    }
    let options = Options {
        now: args.now,
        only: (!args.only.is_empty()).then_some(args.only),
    };
    let mut report = analyze(&documents, &options);
    // Read failures come first: they say which input the report is missing.
    report.input_errors.splice(0..0, errors);
    Ok(Outcome {
        stdout: render_report(&report, global),
        code: exit_code(&report),
    })
}

/// The report in the chosen format; with `--redact`, masked after rendering, so the analysis
/// still saw the real values (an account ID fills the commands) and every format is covered.
/// Masks hold no quotes, backslashes or newlines: the JSON stays valid.
pub fn render_report(report: &Report, global: &GlobalArgs) -> String {
    let rendered = render_unredacted(report, global);
    if global.redact {
        karpenter_why_core::redact::redact(&rendered)
    } else {
        rendered
    }
}

fn render_unredacted(report: &Report, global: &GlobalArgs) -> String {
    match global.output {
        Output::Text => render::text::report(report, &global.text_options()),
        Output::Markdown => render::markdown::report(report),
        Output::Json => {
            let mut json = render::json::report(report);
            json.push('\n');
            json
        }
    }
}

/// DESIGN.md's exit codes: 1 when any diagnosis is an error, else 0.
pub fn exit_code(report: &Report) -> ExitCode {
    if report.has_errors() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn flags_go_before_or_after_the_verb() {
        let cli = Cli::try_parse_from(["k", "-o", "json", "analyze", "a.txt", "b.txt"]).unwrap();
        assert_eq!(cli.global.output, Output::Json);
        let Some(Command::Analyze(args)) = cli.command else {
            panic!("analyze expected");
        };
        assert_eq!(args.inputs, ["a.txt", "b.txt"]);
        let cli =
            Cli::try_parse_from(["k", "rules", "--output", "markdown", "--color=never"]).unwrap();
        assert_eq!(cli.global.output, Output::Markdown);
        assert_eq!(cli.global.color, ColorChoice::Never);
        let cli = Cli::try_parse_from(["k", "analyze", "--only", "KW202,kw201", "-"]).unwrap();
        let Some(Command::Analyze(args)) = cli.command else {
            panic!("analyze expected");
        };
        assert_eq!(args.only, ["KW202", "kw201"]);
        assert_eq!(args.inputs, ["-"]);
    }

    #[test]
    fn the_default_pod_verb_sits_beside_the_verbs() {
        let cli = Cli::try_parse_from(["k", "web-0", "-n", "shop", "-o", "json"]).unwrap();
        assert_eq!(cli.pod.as_deref(), Some("web-0"));
        assert_eq!(cli.cluster.namespace.as_deref(), Some("shop"));
        assert_eq!(cli.global.output, Output::Json);
        assert!(cli.command.is_none());
        let cli = Cli::try_parse_from(["k", "-o", "json", "analyze", "f.txt"]).unwrap();
        assert!(matches!(cli.command, Some(Command::Analyze(_))));
        assert_eq!(cli.pod, None);
    }

    #[test]
    fn live_verbs_take_the_kubectl_flags_before_or_after() {
        let cli = Cli::try_parse_from([
            "k",
            "--context",
            "prod",
            "node",
            "ip-10-0-1-2",
            "--since",
            "30m",
            "--request-timeout",
            "5s",
        ])
        .unwrap();
        assert!(matches!(&cli.command, Some(Command::Node(a)) if a.node == "ip-10-0-1-2"));
        assert_eq!(cli.cluster.context.as_deref(), Some("prod"));
        assert_eq!(cli.cluster.since, std::time::Duration::from_secs(1800));
        assert_eq!(
            cli.cluster.request_timeout,
            std::time::Duration::from_secs(5)
        );
        let cli = Cli::try_parse_from(["k", "pending", "-A", "--karpenter-namespace", "karpenter"])
            .unwrap();
        assert!(matches!(&cli.command, Some(Command::Pending(a)) if a.all_namespaces));
        assert_eq!(
            cli.cluster.karpenter_namespace.as_deref(),
            Some("karpenter")
        );
        let cli = Cli::try_parse_from(crate::live::rewrite_collect_output(
            [
                "k", "collect", "web-0", "-n", "shop", "-o", "out.txt", "--redact",
            ]
            .map(Into::into),
        ))
        .unwrap();
        assert!(
            matches!(&cli.command, Some(Command::Collect(a)) if a.pod == "web-0" && a.file.as_os_str() == "out.txt")
                && cli.global.redact
        );
        assert!(Cli::try_parse_from(["k", "web-0", "--since", "soon"]).is_err());
    }

    #[test]
    fn bad_values_are_usage_errors() {
        let e = Cli::try_parse_from(["k", "-o", "yaml", "rules"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let e = Cli::try_parse_from(["k", "node"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        let e = Cli::try_parse_from(["k", "collect", "web-0"]).unwrap_err();
        assert_eq!(e.exit_code(), 2, "collect needs -o FILE");
    }

    #[test]
    fn colour_rules() {
        use ColorChoice::*;
        assert!(use_color(Always, Some("1"), None, false));
        assert!(!use_color(Never, None, None, true));
        assert!(use_color(Auto, None, Some("xterm-256color"), true));
        assert!(!use_color(Auto, None, None, false));
        assert!(!use_color(Auto, Some("1"), None, true));
        // An empty NO_COLOR does not count (no-color.org).
        assert!(use_color(Auto, Some(""), None, true));
        assert!(!use_color(Auto, None, Some("dumb"), true));
    }
}
