//! Real kubectl against the fake API server (so the fake speaks what real clients expect), and
//! plugin discovery: with the binary's folder on PATH, `kubectl karpenter-why` runs it. Skipped,
//! with the reason printed, where there is no kubectl.

mod live_common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use karpenter_why_tests::binaries::{kubectl, plugin_binary};
use karpenter_why_tests::fake_api::{scenarios, FakeApi};
use live_common::TempDir;

/// kubectl with a private HOME (discovery cache) and no kubeconfig but `--server`.
fn kubectl_at(kubectl: &Path, server: &FakeApi, home: &Path, args: &[&str]) -> Output {
    Command::new(kubectl)
        .arg("--server")
        .arg(server.url())
        .args(args)
        .env("HOME", home)
        .env("KUBECONFIG", home.join("no-kubeconfig"))
        .output()
        .expect("kubectl runs")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "kubectl failed: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn require_kubectl() -> Option<PathBuf> {
    let found = kubectl();
    if found.is_none() {
        println!("skipped: no kubectl on this machine (/usr/bin/kubectl or PATH)");
    }
    found
}

#[test]
fn kubectl_gets_pods_and_nodeclaims_through_discovery_tables_and_paging() {
    let Some(kubectl) = require_kubectl() else {
        return;
    };
    let server = FakeApi::start(scenarios::pending_ice());
    let home = TempDir::new("kubectl");
    let table = stdout(&kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &["get", "pods,nodeclaims", "-A"],
    ));
    assert!(table.contains("pod/trino-worker-0"), "{table}");
    assert!(table.contains("Pending"), "{table}");
    assert!(
        table.contains("nodeclaim.karpenter.sh/trino-m7g-4kq8r"),
        "{table}"
    );
    let requests = server.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.path == "/apis" || r.path == "/api"),
        "kubectl discovered the API"
    );
    let listed = requests
        .iter()
        .find(|r| r.path == "/apis/karpenter.sh/v1/nodeclaims")
        .expect("a nodeclaims list");
    assert!(
        listed.accept.contains("as=Table"),
        "kubectl asked for a Table: {}",
        listed.accept
    );

    // Short and singular names resolve through the discovery documents; -o yaml gets JSON.
    let yaml = stdout(&kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &["get", "ec2nodeclass", "-o", "yaml"],
    ));
    assert!(yaml.contains("kind: EC2NodeClass"), "{yaml}");
    assert!(yaml.contains("karpenter.sh/discovery: prod"), "{yaml}");

    // Field selectors and paging (`--chunk-size` is kubectl's limit/continue).
    let pending = stdout(&kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &[
            "get",
            "pods",
            "-A",
            "--field-selector",
            "status.phase=Pending",
            "--chunk-size=1",
            "-o",
            "name",
        ],
    ));
    assert_eq!(pending.trim(), "pod/trino-worker-0");
    let all = stdout(&kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &["get", "pods", "-A", "--chunk-size=1", "-o", "name"],
    ));
    assert_eq!(all.lines().count(), 3, "{all}");
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r.param("continue").is_some()),
        "kubectl followed continue tokens"
    );

    // describe (pod, then its events by field selector) and logs by label.
    let describe = stdout(&kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &["describe", "pod", "-n", "analytics", "trino-worker-0"],
    ));
    assert!(
        describe.contains("Pod should schedule on: nodeclaim/trino-m7g-4kq8r"),
        "{describe}"
    );
    let logs = stdout(&kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &[
            "logs",
            "-n",
            "kube-system",
            "-l",
            "app.kubernetes.io/name=karpenter",
            "--since=1h",
        ],
    ));
    assert!(
        logs.contains("all requested instance types were unavailable during launch"),
        "{logs}"
    );

    let leader = ["logs", "-n", "kube-system", scenarios::LEADER];
    let tail = stdout(&kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &[&leader[..], &["--tail=2"]].concat(),
    ));
    assert_eq!(tail.lines().count(), 2, "{tail}");
    let limited = stdout(&kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &[&leader[..], &["--limit-bytes=20"]].concat(),
    ));
    assert_eq!(limited.len(), 20, "{limited}");
    let requested = server.requests();
    assert!(requested.iter().any(|r| r.param("tailLines") == Some("2")));
    assert!(requested
        .iter()
        .any(|r| r.param("limitBytes") == Some("20")));

    // `--previous` of a container that never restarted: the kubelet's 400, relayed.
    let no_previous = kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &[&leader[..], &["--previous"]].concat(),
    );
    assert!(!no_previous.status.success());
    assert_eq!(
        String::from_utf8_lossy(&no_previous.stderr).trim(),
        format!(
            "Error from server (BadRequest): previous terminated container \"controller\" in pod \"{}\" not found",
            scenarios::LEADER
        )
    );

    // The fake's errors are Status bodies kubectl prints as the API server's own.
    let missing = kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &["get", "pod", "-n", "analytics", "nope"],
    );
    assert!(!missing.status.success());
    assert_eq!(
        String::from_utf8_lossy(&missing.stderr).trim(),
        "Error from server (NotFound): pods \"nope\" not found"
    );
}

/// `kubectl logs --previous` of a restarted replica reads the instance that ended; the plain
/// read, the one running now.
#[test]
fn kubectl_reads_the_previous_instance_of_a_restarted_container() {
    let Some(kubectl) = require_kubectl() else {
        return;
    };
    let server = FakeApi::start(scenarios::karpenter_restarted());
    let home = TempDir::new("kubectl");
    let leader = ["logs", "-n", "kube-system", scenarios::LEADER];
    let previous = stdout(&kubectl_at(
        &kubectl,
        &server,
        &home.0,
        &[&leader[..], &["--previous"]].concat(),
    ));
    assert!(
        previous.contains("ec2 api connectivity check failed"),
        "{previous}"
    );
    let current = stdout(&kubectl_at(&kubectl, &server, &home.0, &leader));
    assert!(!current.contains("connectivity check failed"), "{current}");
    assert!(server
        .requests()
        .iter()
        .any(|r| r.param("previous") == Some("true")));
}

#[test]
fn kubectl_finds_the_plugin_on_path() {
    let Some(kubectl) = require_kubectl() else {
        return;
    };
    let bin = TempDir::new("plugin-path");
    let target = bin.0.join("kubectl-karpenter_why");
    std::fs::copy(plugin_binary(), &target).expect("copy the plugin");
    let path = format!(
        "{}:{}",
        bin.0.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run = |args: &[&str]| {
        Command::new(&kubectl)
            .args(args)
            .env("PATH", &path)
            .env("HOME", &bin.0)
            .env("KUBECONFIG", bin.0.join("no-kubeconfig"))
            .output()
            .expect("kubectl runs")
    };
    let help = stdout(&run(&["karpenter-why", "--help"]));
    assert!(
        help.contains("Usage: kubectl karpenter-why [OPTIONS] [POD] [COMMAND]"),
        "{help}"
    );
    for verb in ["node", "nodeclaim", "pending", "collect", "analyze"] {
        assert!(help.contains(verb), "{verb} in {help}");
    }
    let list = stdout(&run(&["plugin", "list"]));
    assert!(list.contains(&target.display().to_string()), "{list}");

    // The plugin reaches the fake cluster through kubectl too.
    let server = FakeApi::start(scenarios::pending_ice());
    let kubeconfig = server.write_kubeconfig(&bin.0, "analytics");
    let diagnosed = run(&[
        "karpenter-why",
        "--kubeconfig",
        kubeconfig.to_str().unwrap(),
        "trino-worker-0",
    ]);
    assert_eq!(
        diagnosed.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&diagnosed.stderr)
    );
    assert!(String::from_utf8_lossy(&diagnosed.stdout).contains("error[KW215]"));
}
