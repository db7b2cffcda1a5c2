//! The CLI through the real binary: exit codes, inputs (files, several, a directory, stdin),
//! usage errors, output formats and colour.
//!
//! The binary is built once with the same cargo, profile and target directory
//! (`karpenter_why_tests::binaries`).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use karpenter_why_tests::binaries::{plugin_binary as binary, repo};

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_with(args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(binary());
    cmd.args(args)
        .current_dir(repo())
        .env_remove("NO_COLOR")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("binary starts");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    Run {
        code: status.code().expect("exited normally"),
        stdout: String::from_utf8(stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(stderr).expect("utf-8 stderr"),
    }
}

fn run(args: &[&str]) -> Run {
    run_with(args, None, &[])
}

const EXAMPLE: &str = "examples/pending-zone.txt";
const KW202_LINE: &str = "Warning  FailedScheduling  1m  karpenter  Failed to schedule pod, no instance type has the required offering, requirements=karpenter.sh/nodepool In [default], topology.kubernetes.io/zone In [eu-west-1a], resources={\"cpu\":\"1\"}\n";
const HEALTHY_LOG: &str = "{\"level\":\"INFO\",\"time\":\"2025-06-03T09:29:40.502Z\",\"logger\":\"controller\",\"message\":\"found provisionable pod(s)\",\"Pods\":\"shop/web-0\"}\n";

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("karpenter-why-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn json(run: &Run) -> serde_json::Value {
    serde_json::from_str(&run.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}", run.stdout))
}

fn ids(report: &serde_json::Value) -> Vec<String> {
    report["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn the_readme_example_is_a_full_diagnosis_with_exit_code_1() {
    let r = run(&["analyze", EXAMPLE]);
    assert_eq!(r.code, 1, "stderr: {}", r.stderr);
    for part in [
        "karpenter-why: Pod billing/postgres-0",
        "error[KW202]",
        "--> examples/pending-zone.txt:",
        "seen 4 times, first 2025-06-03T09:29:40.507Z, last 2025-06-03T09:41:40.509Z",
        "help: ",
        "= docs: kubectl karpenter-why explain KW202",
        "Checklist\n  1. Pod events",
        "  8. NodePool",
    ] {
        assert!(r.stdout.contains(part), "missing {part:?} in\n{}", r.stdout);
    }
    assert!(!r.stdout.contains('\u{1b}'), "no colour when piped");
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    // The example holds the pod's events, the Karpenter log, the NodePool and the
    // EC2NodeClass; NodeClaims and debug logs are what it lacks.
    let v = json(&run(&["analyze", "-o", "json", EXAMPLE]));
    let statuses: Vec<&str> = v["checklist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [
            "problem",
            "not-collected",
            "problem",
            "not-collected",
            "ok",
            "ok",
            "ok",
            "ok"
        ],
        "{}",
        v["checklist"]
    );
    let missing: Vec<&str> = v["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["command"].as_str().unwrap())
        .collect();
    assert_eq!(missing[0], "kubectl describe nodeclaims");
    assert!(missing[1].contains("LOG_LEVEL=debug"), "{missing:?}");
    assert_eq!(ids(&v), ["KW202"]);
}

#[test]
fn no_error_diagnosis_exits_0() {
    let r = run_with(&["analyze", "-"], Some(HEALTHY_LOG), &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("No diagnosis"), "{}", r.stdout);
}

#[test]
fn stdin_is_read_with_dash_and_with_no_input() {
    for args in [&["analyze", "-"][..], &["analyze"][..]] {
        let r = run_with(args, Some(KW202_LINE), &[]);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(r.stdout.contains("--> stdin:1"), "{}", r.stdout);
    }
}

#[test]
fn several_files_and_a_directory_are_one_input() {
    let dir = temp_dir("inputs");
    std::fs::write(dir.join("events.txt"), KW202_LINE).unwrap();
    std::fs::write(dir.join("karpenter.log"), HEALTHY_LOG).unwrap();
    let events = dir.join("events.txt");
    let log = dir.join("karpenter.log");
    let files = run(&[
        "-o",
        "json",
        "analyze",
        events.to_str().unwrap(),
        log.to_str().unwrap(),
    ]);
    assert_eq!(files.code, 1, "{}", files.stderr);
    let report = json(&files);
    assert_eq!(ids(&report), ["KW202"]);
    assert_eq!(
        report["checklist"][2]["status"], "ok",
        "the log file was read too"
    );
    let whole_dir = run(&["-o", "json", "analyze", dir.to_str().unwrap()]);
    assert_eq!(whole_dir.code, 1);
    assert_eq!(json(&whole_dir)["diagnoses"], report["diagnoses"]);
    assert_eq!(json(&whole_dir)["checklist"], report["checklist"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unreadable_file_is_one_line_and_exit_2() {
    let r = run(&["analyze", "no/such/file.txt"]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty());
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("no/such/file.txt"), "{}", r.stderr);
}

#[test]
fn an_unreadable_file_among_readable_ones_is_named_and_the_rest_analysed() {
    let dir = temp_dir("one-unreadable");
    let events = dir.join("events.txt");
    std::fs::write(&events, KW202_LINE).unwrap();
    let r = run(&[
        "-o",
        "json",
        "analyze",
        "no/such/file.txt",
        events.to_str().unwrap(),
    ]);
    assert_eq!(
        r.code, 1,
        "the readable file is still diagnosed: {}",
        r.stderr
    );
    let v = json(&r);
    assert_eq!(ids(&v), ["KW202"]);
    let errors = v["inputErrors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["source"], "no/such/file.txt");
    assert_eq!(errors[0]["line"], 0);
    let text = run(&["analyze", "no/such/file.txt", events.to_str().unwrap()]);
    assert!(
        text.stdout
            .contains("\n  no/such/file.txt: cannot read this input: "),
        "{}",
        text.stdout
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn an_empty_directory_is_unreadable_input() {
    let dir = temp_dir("empty");
    let r = run(&["analyze", dir.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains(dir.to_str().unwrap()), "{}", r.stderr);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn unknown_rule_id_is_one_line_and_exit_2() {
    for args in [
        &["explain", "KW999"][..],
        &["analyze", "--only", "KW999", EXAMPLE][..],
    ] {
        let r = run(args);
        assert_eq!(r.code, 2, "{args:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
        assert!(r.stderr.contains("KW999"), "{}", r.stderr);
    }
}

#[test]
fn bad_usage_exits_2() {
    // A lone unknown word is the default verb's POD, so usage errors are missing or unknown
    // arguments of the verbs.
    for args in [
        &["node"][..],
        &["pending", "--frobnicate"][..],
        &["-o", "yaml", "rules"][..],
        &[][..],
        &["--color", "sometimes", "rules"][..],
    ] {
        let r = run(args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(!r.stderr.is_empty());
    }
}

#[test]
fn help_and_version_exit_0() {
    let help = run(&["--help"]);
    assert_eq!(help.code, 0);
    for verb in ["analyze", "explain", "rules", "--output", "--color"] {
        assert!(help.stdout.contains(verb), "{verb} in\n{}", help.stdout);
    }
    let version = run(&["--version"]);
    assert_eq!(version.code, 0);
    assert!(version.stdout.contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn json_follows_the_schema() {
    let r = run(&["analyze", "-o", "json", EXAMPLE]);
    assert_eq!(r.code, 1);
    let v = json(&r);
    assert_eq!(v["schemaVersion"], 1);
    assert_eq!(v["tool"]["name"], "karpenter-why");
    assert_eq!(v["tool"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["subject"]["kind"], "Pod");
    assert_eq!(v["subject"]["namespace"], "billing");
    assert_eq!(v["subject"]["name"], "postgres-0");
    let d = v["diagnoses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["id"] == "KW202")
        .expect("KW202");
    assert_eq!(d["slug"], "no-offering-in-zone");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["nodePool"], "default");
    assert_eq!(d["docs"], "kubectl karpenter-why explain KW202");
    assert!(d["title"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(d["summary"].as_str().is_some_and(|t| !t.is_empty()));
    let e = &d["evidence"][0];
    assert!(e["source"].as_str().unwrap().ends_with("pending-zone.txt"));
    assert!(e["line"].as_u64().unwrap() > 0);
    assert!(e["text"].as_str().is_some());
    assert!(d["remediation"][0]["text"].as_str().is_some());
    let steps = v["checklist"].as_array().unwrap();
    assert_eq!(steps.len(), 8);
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["step"], i + 1);
        assert!(["ok", "problem", "not-collected"].contains(&s["status"].as_str().unwrap()));
        assert!(s["name"].as_str().is_some() && s["signal"].as_str().is_some());
    }
    for m in v["missing"].as_array().unwrap() {
        assert!(m["what"].as_str().is_some() && m["command"].as_str().is_some());
    }
    assert!(v["inputErrors"].is_array());
}

#[test]
fn color_always_has_ansi_and_no_color_disables_auto() {
    let always = run(&["analyze", "--color", "always", EXAMPLE]);
    assert!(
        always.stdout.contains("\u{1b}[1;31merror"),
        "{}",
        always.stdout
    );
    let never = run(&["analyze", "--color=never", EXAMPLE]);
    assert!(!never.stdout.contains('\u{1b}'));
    // `auto` colours a terminal: run under a pseudo-terminal (util-linux `script`).
    let in_tty = |no_color: Option<&str>| {
        let command = format!("{} analyze --color auto {EXAMPLE}", binary().display());
        let mut cmd = Command::new("script");
        cmd.args(["-qec", &command, "/dev/null"])
            .current_dir(repo())
            .env("TERM", "xterm")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null());
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        }
        let out = cmd.output().expect("`script` (util-linux) is installed");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let tty = in_tty(None);
    assert!(
        tty.contains("error[KW202]") || tty.contains("KW202"),
        "{tty}"
    );
    assert!(
        tty.contains("\u{1b}[1;31m"),
        "a terminal gets colour:\n{tty}"
    );
    let tty_no_color = in_tty(Some("1"));
    assert!(tty_no_color.contains("KW202"), "{tty_no_color}");
    assert!(
        !tty_no_color.contains("\u{1b}["),
        "NO_COLOR disables colour:\n{tty_no_color}"
    );
    // An explicit flag beats NO_COLOR.
    let forced = run_with(
        &["analyze", "--color", "always", EXAMPLE],
        None,
        &[("NO_COLOR", "1")],
    );
    assert!(forced.stdout.contains('\u{1b}'));
}

#[test]
fn markdown_output_shape() {
    let r = run(&["analyze", "-o", "markdown", EXAMPLE]);
    assert_eq!(r.code, 1);
    let md = &r.stdout;
    assert!(
        md.starts_with("# karpenter-why: Pod billing/postgres-0\n"),
        "{md}"
    );
    assert!(md.contains("\n## error KW202: "), "{md}");
    assert!(md.contains("\n**Evidence**\n"), "{md}");
    assert!(md.contains("\n```text\n"), "{md}");
    // The example's only missing piece is a subnet: its fix is a command, not YAML.
    assert!(md.contains("\n   ```sh\n"), "{md}");
    assert!(
        md.contains("\n## Checklist\n\n| # | Step | Status | Signal |\n"),
        "{md}"
    );
    assert!(md.contains("\n## Missing facts"), "{md}");
    assert!(!md.contains('\u{1b}'));
    // Every fence is closed.
    assert_eq!(
        md.lines()
            .filter(|l| l.trim_start().starts_with("```"))
            .count()
            % 2,
        0
    );
}

#[test]
fn explain_and_rules() {
    let r = run(&["explain", "kw202"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.starts_with("KW202 no-offering-in-zone (error)\n"),
        "{}",
        r.stdout
    );
    for heading in ["\nWhat it means\n", "\nWhy it happens\n", "\nHow to fix\n"] {
        assert!(r.stdout.contains(heading), "{heading}");
    }
    let md = run(&["explain", "KW202", "-o", "markdown"]);
    assert!(md.stdout.starts_with("# KW202 no-offering-in-zone\n"));
    let one = run(&["explain", "KW202", "-o", "json"]);
    assert_eq!(json(&one)["slug"], "no-offering-in-zone");

    let list = run(&["rules"]);
    assert_eq!(list.code, 0);
    let rules = run(&["rules", "-o", "json"]);
    let all = json(&rules);
    let all = all.as_array().unwrap();
    assert!(all.len() >= 10);
    for rule in all {
        let id = rule["id"].as_str().unwrap();
        assert!(list.stdout.contains(id), "{id} in the text list");
        assert!(rule["docs"].as_str().unwrap().contains("## How to fix"));
    }
}

#[test]
fn only_limits_the_rules() {
    let r = run(&["analyze", "-o", "json", "--only", "KW201", EXAMPLE]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(ids(&json(&r)).is_empty());
}

#[test]
fn output_to_a_closed_pipe_is_not_a_crash() {
    let mut child = Command::new(binary())
        .args(["rules"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("panicked"));
}

#[test]
fn several_pods_are_grouped_by_cause() {
    let line = |pod: &str, zone: &str| {
        format!(
            "{{\"level\":\"ERROR\",\"time\":\"2025-06-03T09:29:40.507Z\",\"message\":\"could not schedule pod\",\"Pod\":{{\"name\":\"{pod}\",\"namespace\":\"shop\"}},\"error\":\"no instance type has the required offering, requirements=karpenter.sh/nodepool In [default], topology.kubernetes.io/zone In [{zone}], resources={{\\\"cpu\\\":\\\"1\\\"}}\"}}\n"
        )
    };
    let input = [
        line("web-0", "eu-west-1a"),
        line("web-1", "eu-west-1a"),
        line("db-0", "eu-west-1b"),
    ]
    .concat();
    let r = run_with(&["analyze", "-o", "json"], Some(&input), &[]);
    let v = json(&r);
    assert_eq!(v["subject"]["kind"], "Pods", "{}", r.stdout);
    assert_eq!(v["subject"]["namespace"], "shop");
    assert_eq!(v["subject"]["objects"].as_array().unwrap().len(), 3);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{}", r.stdout);
    assert_eq!(groups[0]["count"], 2);
    assert_eq!(groups[0]["pods"][1]["name"], "web-1");
    assert_eq!(groups[1]["count"], 1);
    let text = run_with(&["analyze"], Some(&input), &[]);
    assert!(
        text.stdout
            .starts_with("karpenter-why: 3 Pods in shop: db-0, web-0, web-1\n"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains("\n  2 pods: web-0, web-1\n"),
        "{}",
        text.stdout
    );
    assert_eq!(
        text.stdout.matches("error[KW202]").count(),
        2,
        "{}",
        text.stdout
    );
}

#[test]
fn input_errors_are_reported_and_the_rest_is_analysed() {
    let input = format!(
        "{KW202_LINE}{{\"level\":\"ERROR\",\"message\":\"could not schedule pod\",\"error\":\"no instance type has\n"
    );
    let r = run_with(&["analyze", "-o", "json"], Some(&input), &[]);
    assert_eq!(r.code, 1, "the KW202 line is still diagnosed: {}", r.stdout);
    let v = json(&r);
    assert_eq!(ids(&v), ["KW202"]);
    let errors = v["inputErrors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["source"], "stdin");
    assert_eq!(errors[0]["line"], 2);
    assert!(errors[0]["message"].as_str().is_some_and(|m| !m.is_empty()));
    let text = run_with(&["analyze"], Some(&input), &[]);
    assert!(
        text.stdout
            .contains("Input errors (the rest of the input was analysed)\n  stdin:2: "),
        "{}",
        text.stdout
    );
    let md = run_with(&["analyze", "-o", "markdown"], Some(&input), &[]);
    assert!(md.stdout.contains("\n## Input errors"), "{}", md.stdout);
    assert!(md.stdout.contains("- `stdin:2`: "), "{}", md.stdout);
}

/// `--redact` masks the printed report in every format (the same value, the same mask), the
/// JSON stays JSON, and the diagnosis is the one the unmasked input gives.
#[test]
fn redact_masks_the_report_in_every_format() {
    let input = "{\"level\":\"ERROR\",\"time\":\"2025-11-20T14:02:11.512Z\",\"logger\":\"controller\",\"message\":\"failed launching nodeclaim\",\"NodeClaim\":{\"name\":\"batch-7kq2m\"},\"error\":\"creating instance, with fleet error(s), UnauthorizedOperation: You are not authorized to perform this operation. User: arn:aws:sts::111122223333:assumed-role/KarpenterControllerRole-prod/1732111331 is not authorized to perform: ec2:RunInstances on resource: arn:aws:ec2:us-east-1:111122223333:instance/i-0abc1234def567890 with an explicit deny in a service control policy\"}\n";
    let secrets = ["111122223333", "i-0abc1234def567890"];
    let plain = run_with(&["analyze", "-o", "json"], Some(input), &[]);
    assert!(secrets.iter().all(|s| plain.stdout.contains(s)));
    for format in ["text", "markdown", "json"] {
        let r = run_with(&["analyze", "--redact", "-o", format], Some(input), &[]);
        assert_eq!(r.code, 1, "{format}: {}", r.stdout);
        for s in secrets {
            assert!(!r.stdout.contains(s), "{format} shows {s}:\n{}", r.stdout);
        }
        assert!(r.stdout.contains("<account-1>"), "{format}:\n{}", r.stdout);
    }
    // The flag is global: before the verb too, and the verdict does not change.
    let masked = json(&run_with(
        &["--redact", "-o", "json", "analyze"],
        Some(input),
        &[],
    ));
    assert_eq!(ids(&masked), ids(&json(&plain)));
    assert_eq!(ids(&masked), ["KW105"]);
}
