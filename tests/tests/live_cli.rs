//! The live verbs through the real binary against the fake API server: output, exit codes,
//! missing facts in the report, `collect -o FILE` read back by `analyze`, `--redact`.

mod live_common;

use std::path::Path;
use std::process::{Command, Output};

use karpenter_why_tests::binaries::plugin_binary;
use karpenter_why_tests::fake_api::{scenarios, FakeApi, Scenario};
use live_common::TempDir;

struct Cluster {
    server: FakeApi,
    dir: TempDir,
    kubeconfig: String,
}

fn cluster(scenario: Scenario) -> Cluster {
    let server = FakeApi::start(scenario);
    let dir = TempDir::new("live-cli");
    let kubeconfig = server
        .write_kubeconfig(&dir.0, "default")
        .display()
        .to_string();
    Cluster {
        server,
        dir,
        kubeconfig,
    }
}

impl Cluster {
    fn run(&self, args: &[&str]) -> Output {
        Command::new(plugin_binary())
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .env("HOME", &self.dir.0)
            .env_remove("KUBECONFIG")
            .env_remove("NO_COLOR")
            .output()
            .expect("the plugin runs")
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json(output: &Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&output.stdout)))
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
fn the_default_verb_diagnoses_the_pod_and_exits_1_on_an_error() {
    let cluster = cluster(scenarios::pending_ice());
    let out = cluster.run(&["trino-worker-0", "-n", "analytics"]);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(
        stdout.starts_with("karpenter-why: Pod analytics/trino-worker-0\n"),
        "{stdout}"
    );
    assert!(stdout.contains("error[KW215]"), "{stdout}");
    assert!(stdout.contains("--> GET /api/v1/events?fieldSelector=involvedObject.kind=NodeClaim,involvedObject.name=trino-m7g-4kq8r:"), "{stdout}");
    // stderr is not a terminal here: no spinner.
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    assert!(cluster.server.requests().iter().all(|r| r.method == "GET"));
}

#[test]
fn missing_facts_reach_the_report_with_their_reason() {
    let cluster = cluster(scenarios::logs_forbidden());
    let out = cluster.run(&["-o", "json", "trino-worker-0", "-n", "analytics"]);
    let report = json(&out);
    assert_eq!(report["subject"]["kind"], "Pod");
    assert_eq!(report["subject"]["namespace"], "analytics");
    let missing = report["missing"].as_array().unwrap();
    let forbidden: Vec<&serde_json::Value> = missing
        .iter()
        .filter(|m| {
            m["reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("forbidden (403)"))
        })
        .collect();
    assert_eq!(forbidden.len(), 2, "{missing:#?}");
    assert!(forbidden[0]["command"]
        .as_str()
        .unwrap()
        .starts_with("kubectl logs karpenter-6d8b7c9f4-"));
    assert!(ids(&report).contains(&"KW215".to_string()));
    // The text report shows the reason above the command.
    let text_out = text(&cluster.run(&["trino-worker-0", "-n", "analytics"]).stdout);
    assert!(
        text_out
            .contains("      # forbidden (403): get pods/log in namespace kube-system was refused"),
        "{text_out}"
    );
}

/// A replica restarted, but the kubelet lost its previous instance (a node reboot): the 400 is
/// a missing fact naming `kubectl logs --previous` and how the instance ended, and the rest is
/// still diagnosed.
#[test]
fn a_lost_previous_log_is_a_missing_fact_with_the_kubectl_command() {
    let cluster = cluster(scenarios::karpenter_previous_log_gone());
    let report = json(&cluster.run(&["-o", "json", "trino-worker-0", "-n", "analytics"]));
    assert!(ids(&report).contains(&"KW215".to_string()));
    let missing = report["missing"].as_array().unwrap();
    let lost = missing
        .iter()
        .find(|m| {
            m["what"]
                .as_str()
                .is_some_and(|w| w.contains("previous instance"))
        })
        .unwrap_or_else(|| panic!("{missing:#?}"));
    let leader = scenarios::LEADER;
    assert_eq!(
        lost["command"],
        format!("kubectl logs {leader} -n kube-system -c controller --previous")
    );
    let reason = lost["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!(
            "400: previous terminated container \"controller\" in pod \"{leader}\" not found"
        )),
        "{reason}"
    );
    assert!(
        reason.contains("ContainerStatusUnknown, exit code 137"),
        "{reason}"
    );
    let text_out = text(&cluster.run(&["trino-worker-0", "-n", "analytics"]).stdout);
    assert!(
        text_out.contains(&format!(
            "      kubectl logs {leader} -n kube-system -c controller --previous\n"
        )),
        "{text_out}"
    );
}

#[test]
fn node_nodeclaim_and_pending_verbs() {
    let cluster = cluster(scenarios::pdb_blocked_node());
    let node = cluster.run(&["-o", "json", "node", scenarios::PDB_NODE]);
    assert_eq!(json(&node)["subject"]["kind"], "Node");
    assert_eq!(json(&node)["subject"]["name"], scenarios::PDB_NODE);
    let claim = cluster.run(&["nodeclaim", "default-m2x8c", "-o", "json"]);
    assert_eq!(json(&claim)["subject"]["kind"], "NodeClaim");
    let none = cluster.run(&["pending", "-n", "ingress"]);
    assert_eq!(none.status.code(), Some(0));
    assert_eq!(text(&none.stdout), "No Pending pods in ingress.\n");
    let ice = crate::cluster(scenarios::pending_ice());
    let pending = ice.run(&["pending", "-A", "-o", "json"]);
    assert_eq!(json(&pending)["subject"]["name"], "trino-worker-0");
    assert!(ids(&json(&pending)).contains(&"KW215".to_string()));
}

#[test]
fn not_found_is_exit_2_and_unreachable_is_exit_3() {
    let cluster = cluster(scenarios::pending_ice());
    let out = cluster.run(&["trino-worker-9", "-n", "analytics"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "error: Error from server (NotFound): pods \"trino-worker-9\" not found\n"
    );
    assert!(out.stdout.is_empty());

    let dir = TempDir::new("unreachable");
    let kubeconfig = dir.0.join("kubeconfig");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    std::fs::write(
        &kubeconfig,
        format!("apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    token: t\n"),
    )
    .unwrap();
    let out = Command::new(plugin_binary())
        .args(["node", "n1", "--kubeconfig"])
        .arg(&kubeconfig)
        .env("HOME", &dir.0)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "error: cannot reach the cluster at https://127.0.0.1:{port}"
        )),
        "{stderr}"
    );

    let missing = Command::new(plugin_binary())
        .args(["web-0", "--kubeconfig", "/nonexistent/kubeconfig"])
        .env("HOME", &dir.0)
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(3));
    assert!(
        text(&missing.stderr).starts_with("error: cannot read kubeconfig /nonexistent/kubeconfig"),
        "{}",
        text(&missing.stderr)
    );
}

#[test]
fn collect_writes_one_file_that_analyze_reads_back() {
    let cluster = cluster(scenarios::logs_forbidden());
    let file = cluster.dir.0.join("trino.txt");
    let out = cluster.run(&[
        "collect",
        "trino-worker-0",
        "-n",
        "analytics",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("wrote 14 documents about Pod analytics/trino-worker-0 ("),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 facts could not be collected"),
        "{stderr}"
    );
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(
        saved.starts_with("==> GET /api/v1/namespaces/analytics/pods/trino-worker-0 <==\n{\n"),
        "{saved}"
    );
    assert!(saved.contains("\n==> karpenter-why: not collected <==\n"));
    // Offline, the file gives the live verdict, with the evidence still labelled by request.
    let live = json(&cluster.run(&["-o", "json", "trino-worker-0", "-n", "analytics"]));
    let offline_out = Command::new(plugin_binary())
        .args(["analyze", "-o", "json"])
        .arg(&file)
        .output()
        .unwrap();
    let offline = json(&offline_out);
    assert_eq!(ids(&offline), ids(&live));
    let sources: Vec<&str> = offline["diagnoses"][0]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["source"].as_str().unwrap())
        .collect();
    assert!(
        sources.iter().any(|s| s.starts_with("GET /api/v1/events?")),
        "{sources:?}"
    );
}

#[test]
fn collect_redact_masks_hosts_and_ids_consistently() {
    let cluster = cluster(scenarios::pdb_blocked_node());
    let file = cluster.dir.0.join("redacted.txt");
    let out = cluster.run(&[
        "collect",
        "ingress-nginx-controller-5c9f7d8b6-h4k2m",
        "-n",
        "ingress",
        "--redact",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(!saved.contains(scenarios::PDB_NODE), "hostnames are masked");
    assert!(
        !saved.contains("aws:///eu-west-1b/i-0"),
        "instance IDs are masked"
    );
    // The node named in the pod's spec and in the node's own request label get one mask.
    let header = saved
        .lines()
        .find(|l| l.starts_with("==> GET /api/v1/nodes/"))
        .expect("the node document");
    let mask = header
        .trim_start_matches("==> GET /api/v1/nodes/")
        .trim_end_matches(" <==");
    assert!(mask.starts_with("<host-"), "{header}");
    assert!(
        saved.contains(&format!("\"nodeName\": \"{mask}\"")),
        "{mask}"
    );
}

#[test]
fn the_spinner_shows_on_a_terminal_only() {
    // `script` (util-linux) runs the plugin on a pseudo-terminal.
    if !Path::new("/usr/bin/script").is_file() {
        println!("skipped: no /usr/bin/script to give the plugin a terminal");
        return;
    }
    let cluster =
        cluster(scenarios::pending_ice().with_latency(std::time::Duration::from_millis(200)));
    let command = format!(
        "{} --kubeconfig {} trino-worker-0 -n analytics --color never",
        plugin_binary().display(),
        cluster.kubeconfig
    );
    let out = Command::new("/usr/bin/script")
        .args(["-qec", &command, "/dev/null"])
        .env("HOME", &cluster.dir.0)
        .env("TERM", "xterm")
        .output()
        .expect("script runs");
    let screen = text(&out.stdout);
    assert!(screen.contains("collecting from the cluster: "), "{screen}");
    assert!(screen.contains(" requests done"), "{screen}");
    // The line is cleared before the report is printed.
    let cleared = screen
        .rfind("\r\x1b[2K")
        .expect("the spinner line is cleared");
    assert!(
        screen[cleared..].contains("karpenter-why: Pod analytics/trino-worker-0"),
        "{screen}"
    );
}

#[test]
fn the_readme_shows_the_live_example_as_it_prints() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let section = &readme[readme
        .find("## Live mode")
        .expect("README has the live section")..];
    let start = section.find("```\n").expect("an output block") + 4;
    let block = &section[start..start + section[start..].find("```").unwrap()];
    let cluster = cluster(scenarios::zone_offering());
    let out = cluster.run(&["ledger-0", "-n", "payments", "--color", "never"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        block,
        text(&out.stdout),
        "README.md's live example is stale: paste the new output"
    );
}

#[test]
fn pending_groups_every_pending_pod_by_diagnosis_with_counts() {
    let cluster = cluster(scenarios::pending_mix());
    let out = cluster.run(&["pending", "-A", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let report = json(&out);
    assert_eq!(report["subject"]["kind"], "Pods");
    let pods: Vec<String> = report["subject"]["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["namespace"].as_str().unwrap(),
                o["name"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(pods, ["analytics/trino-worker-0", "payments/ledger-0"]);
    let groups = report["groups"]
        .as_array()
        .expect("diagnoses grouped by cause");
    let zone = groups
        .iter()
        .find(|g| g["id"] == "KW202")
        .expect("a KW202 group");
    assert_eq!(zone["count"], 1);
    assert_eq!(zone["pods"][0]["name"], "ledger-0");
    assert!(ids(&report).contains(&"KW215".to_string()));
    // Only Pending pods were listed, through the field selector, never every pod.
    let lists: Vec<_> = cluster
        .server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v1/pods")
        .collect();
    assert!(lists
        .iter()
        .all(|r| r.param("fieldSelector") == Some("status.phase=Pending")
            || r.param("labelSelector").is_some()));
}
