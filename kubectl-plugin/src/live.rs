//! The live verbs: `POD` (the default verb), `node`, `nodeclaim`, `pending` and `collect`, their
//! kubectl-style flags, and how a collection becomes a report (the one ingest path) or a file.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use karpenter_why_core::redact::Redactor;
use karpenter_why_core::report::Missing;
use karpenter_why_core::report::Subject;
use karpenter_why_core::rules::SerializedRef;
use karpenter_why_core::{analyze_about, Options};
use karpenter_why_plugin::collect::{
    self, api, bundle, CollectError, Collection, Settings, Target,
};

use crate::cli::{exit_code, render_report, GlobalArgs, Outcome, Output, UsageError};

/// kubectl's connection flags, accepted before or after any verb.
#[derive(Debug, Args)]
pub struct ClusterArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).
    #[arg(long, value_name = "PATH", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, value_name = "NAME", global = true)]
    pub context: Option<String>,
    /// Namespace of the pod (default: the context's namespace).
    #[arg(short = 'n', long, value_name = "NS", global = true)]
    pub namespace: Option<String>,
    /// Window of Karpenter logs to read, e.g. 30m, 1h, 2h30m.
    #[arg(long, value_name = "DURATION", default_value = "1h", value_parser = duration, global = true)]
    pub since: Duration,
    /// Namespace Karpenter runs in (default: found by its label in any namespace).
    #[arg(long, value_name = "NS", global = true)]
    pub karpenter_namespace: Option<String>,
    /// Time limit of each API request, e.g. 5s; 0 waits forever.
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = duration, global = true)]
    pub request_timeout: Duration,
}

#[derive(Debug, Args)]
pub struct NodeArgs {
    /// The node: why is it not ready, not removed, not consolidated?
    #[arg(value_name = "NODE")]
    pub node: String,
}

#[derive(Debug, Args)]
pub struct NodeClaimArgs {
    /// The NodeClaim: why is it not launched, registered or initialized?
    #[arg(value_name = "NAME")]
    pub name: String,
}

#[derive(Debug, Args)]
pub struct PendingArgs {
    /// Every namespace instead of one.
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,
}

#[derive(Debug, Args)]
pub struct CollectArgs {
    /// The pod whose facts to save.
    #[arg(value_name = "POD")]
    pub pod: String,
    /// File to write (`-o FILE` works too); `analyze` and the web page read it back.
    #[arg(long = "output-file", value_name = "FILE", required = true)]
    pub file: PathBuf,
}

fn duration(text: &str) -> Result<Duration, String> {
    api::parse_duration(text)
}

/// `collect POD -o FILE`: the global `-o` names the output format everywhere else, so after the
/// word `collect` an `-o FILE` / `--output FILE` / `-oFILE` / `--output=FILE` is rewritten to
/// `--output-file FILE` before clap parses the line.
pub fn rewrite_collect_output(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    let args: Vec<OsString> = args.into_iter().collect();
    // Flags whose value is the next word, so it is not mistaken for the verb.
    const TAKES_VALUE: &[&str] = &[
        "-n",
        "--namespace",
        "--kubeconfig",
        "--context",
        "--since",
        "--karpenter-namespace",
        "--request-timeout",
        "-o",
        "--output",
        "--color",
    ];
    let mut verb_at = None;
    let mut i = 1;
    while i < args.len() {
        let word = args[i].to_string_lossy();
        if TAKES_VALUE.contains(&word.as_ref()) {
            i += 2;
            continue;
        }
        if !word.starts_with('-') {
            if word == "collect" {
                verb_at = Some(i);
            }
            break;
        }
        i += 1;
    }
    let Some(verb_at) = verb_at else {
        return args;
    };
    let mut out: Vec<OsString> = args[..=verb_at].to_vec();
    let mut rest = args[verb_at + 1..].iter();
    while let Some(arg) = rest.next() {
        let word = arg.to_string_lossy();
        if word == "--" {
            out.push(arg.clone());
            out.extend(rest.cloned());
            break;
        }
        if word == "-o" || word == "--output" {
            out.push("--output-file".into());
        } else if let Some(file) = word.strip_prefix("--output=") {
            out.push(format!("--output-file={file}").into());
        } else if let Some(file) = word.strip_prefix("-o").filter(|f| !f.is_empty()) {
            out.push(format!("--output-file={}", file.trim_start_matches('=')).into());
        } else {
            out.push(arg.clone());
        }
    }
    out
}

impl ClusterArgs {
    fn settings(&self) -> Settings {
        Settings {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            request_timeout: (!self.request_timeout.is_zero()).then_some(self.request_timeout),
            since: self.since,
            karpenter_namespace: self.karpenter_namespace.clone(),
            progress: std::io::stderr().is_terminal(),
            ..Settings::default()
        }
    }
}

/// The report verbs: collect `target`, analyze the documents, add what could not be collected,
/// render.
pub fn diagnose(
    target: Target,
    cluster: &ClusterArgs,
    global: &GlobalArgs,
) -> Result<Outcome, UsageError> {
    let collection = match collect::collect(&cluster.settings(), &target) {
        Ok(collection) => collection,
        Err(error) => return Ok(failed(&error)),
    };
    let options = Options {
        now: Some(rfc3339_now()),
        only: None,
    };
    let subject = match (&collection.object, collection.pending.as_slice()) {
        (Some(object), _) => Some(subject(object)),
        (None, [])
            if global.output != Output::Json
                && !collection
                    .missing
                    .iter()
                    .any(|m| m.what == "the Pending pods") =>
        {
            return Ok(Outcome {
                stdout: format!("No {}.\n", collection.subject),
                code: ExitCode::SUCCESS,
            });
        }
        (None, [one]) => Some(subject(one)),
        (None, []) => None,
        (None, several) => Some(Subject {
            kind: "Pods".to_string(),
            namespace: common_namespace(several),
            name: several
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            objects: several
                .iter()
                .map(|p| SerializedRef {
                    kind: "Pod".to_string(),
                    namespace: p.namespace.clone(),
                    name: p.name.clone(),
                })
                .collect(),
        }),
    };
    let mut report = analyze_about(&collection.documents, &options, subject);
    let collected_missing = missing_entries(&collection);
    report.missing.splice(0..0, collected_missing);
    Ok(Outcome {
        stdout: render_report(&report, global),
        code: exit_code(&report),
    })
}

/// `collect POD -o FILE [--redact]`.
pub fn save(args: CollectArgs, cluster: &ClusterArgs, redact: bool) -> Result<Outcome, UsageError> {
    let target = Target::Pod {
        namespace: cluster.namespace.clone(),
        name: args.pod.clone(),
    };
    let collection = match collect::collect(&cluster.settings(), &target) {
        Ok(collection) => collection,
        Err(error) => return Ok(failed(&error)),
    };
    let text = if redact {
        let mut redactor = Redactor::new();
        bundle::render(
            &collection.documents,
            &collection.missing,
            &mut |s: &str| redactor.redact(s),
        )
    } else {
        bundle::render(
            &collection.documents,
            &collection.missing,
            &mut |s: &str| s.to_string(),
        )
    };
    std::fs::write(&args.file, &text)
        .map_err(|e| UsageError(format!("cannot write {}: {e}", args.file.display())))?;
    eprintln!(
        "wrote {} documents about {} ({} bytes) to {}{}",
        collection.documents.len(),
        collection.subject,
        text.len(),
        args.file.display(),
        match collection.missing.len() {
            0 => String::new(),
            n => format!("; {n} facts could not be collected (listed at the end of the file)"),
        }
    );
    Ok(Outcome {
        stdout: String::new(),
        code: ExitCode::SUCCESS,
    })
}

fn subject(object: &collect::Subject) -> Subject {
    Subject {
        kind: object.kind.to_string(),
        namespace: object.namespace.clone(),
        name: object.name.clone(),
        objects: Vec::new(),
    }
}

/// The namespace all `pods` share, if they do.
fn common_namespace(pods: &[collect::Subject]) -> Option<String> {
    let first = pods.first()?.namespace.clone();
    pods.iter()
        .all(|p| p.namespace == first)
        .then_some(first)
        .flatten()
}

/// One line on stderr and DESIGN.md's exit code (2 not found, 3 unreachable).
fn failed(error: &CollectError) -> Outcome {
    eprintln!("error: {error}");
    Outcome {
        stdout: String::new(),
        code: ExitCode::from(error.exit_code()),
    }
}

/// The collection's failed reads as report entries, the reason first.
fn missing_entries(collection: &Collection) -> Vec<Missing> {
    collection
        .missing
        .iter()
        .map(|fact| Missing {
            what: fact.what.clone(),
            reason: Some(fact.reason.clone()),
            command: fact.command.clone(),
        })
        .collect()
}

/// Now as RFC 3339 UTC (core reads no clock; the caller passes `now` for ages).
fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    rfc3339(secs)
}

fn rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn collect_takes_its_file_with_o() {
        for (line, expected) in [
            (
                "k collect web-0 -n shop -o out.txt --redact",
                "k collect web-0 -n shop --output-file out.txt --redact",
            ),
            (
                "k -n shop collect web-0 --output=a.txt",
                "k -n shop collect web-0 --output-file=a.txt",
            ),
            (
                "k collect web-0 -oa.txt",
                "k collect web-0 --output-file=a.txt",
            ),
            // Other verbs, and a pod named like the verb after a flag value, keep their -o.
            ("k web-0 -o json", "k web-0 -o json"),
            ("k -o json node n1", "k -o json node n1"),
            ("k -n collect web-0 -o json", "k -n collect web-0 -o json"),
        ] {
            assert_eq!(
                rewrite_collect_output(words(line)),
                words(expected),
                "{line}"
            );
        }
    }

    #[test]
    fn rfc3339_from_unix_seconds() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_758_031_331), "2025-09-16T14:02:11Z");
    }
}
