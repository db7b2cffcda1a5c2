//! Live-mode benchmark (not a test): against the fake API server with 100 ms of latency per
//! request, times `kubectl karpenter-why POD` (through real kubectl's plugin dispatch, and the
//! binary alone) and a shell script running the troubleshooting guide's checklist commands
//! through real kubectl; prints both, the ratio, and the requests and sequential round trips of
//! each verb. Run by `scripts/bench-live`, which builds the release binaries first.
//!
//! Usage: bench-live PLUGIN_BINARY [LATENCY_MS] [RUNS]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use karpenter_why_tests::binaries::kubectl;
use karpenter_why_tests::fake_api::{scenarios, FakeApi, Scenario};

const CHECKLIST: &str = r#"set -e
kubectl describe pod trino-worker-0 -n analytics
kubectl get nodeclaim
kubectl logs -n kube-system -l app.kubernetes.io/name=karpenter --since=1h
kubectl get ec2nodeclass -o yaml
kubectl get nodepool -o yaml
"#;

struct Timing {
    median: Duration,
    min: Duration,
    requests: usize,
    depth: usize,
}

fn main() {
    let mut args = std::env::args().skip(1);
    let plugin = PathBuf::from(
        args.next()
            .expect("usage: bench-live PLUGIN_BINARY [LATENCY_MS] [RUNS]"),
    );
    let latency = Duration::from_millis(args.next().and_then(|a| a.parse().ok()).unwrap_or(100));
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let kubectl = kubectl().expect("the benchmark needs kubectl (/usr/bin/kubectl or PATH)");
    let work =
        std::env::temp_dir().join(format!("karpenter-why-bench-live-{}", std::process::id()));
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin).expect("work dir");
    std::fs::copy(&plugin, bin.join("kubectl-karpenter_why")).expect("copy the plugin");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );

    let server = FakeApi::start(scenarios::pending_ice().with_latency(latency));
    let kubeconfig = server.write_kubeconfig(&work, "default");
    let env = |cmd: &mut Command| {
        cmd.env("PATH", &path)
            .env("HOME", &work)
            .env("KUBECONFIG", &kubeconfig)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
    };
    let time = |what: &dyn Fn() -> Command| -> Timing {
        // One warm-up run (kubectl's discovery cache, page cache), then `runs` timed ones.
        let _ = what().status();
        let mut samples = Vec::new();
        let mut requests = 0;
        let mut depth = 0;
        for _ in 0..runs {
            server.clear_requests();
            let started = Instant::now();
            let status = what().status().expect("runs");
            samples.push(started.elapsed());
            assert!(status.code().is_some_and(|c| c <= 1), "failed: {status}");
            requests = server.requests().len();
            depth = server.critical_path_depth();
        }
        samples.sort();
        Timing {
            median: samples[samples.len() / 2],
            min: samples[0],
            requests,
            depth,
        }
    };

    let via_kubectl = time(&|| {
        let mut cmd = Command::new(&kubectl);
        cmd.args(["karpenter-why", "trino-worker-0", "-n", "analytics"]);
        env(&mut cmd);
        cmd
    });
    let direct = time(&|| {
        let mut cmd = Command::new(&plugin);
        cmd.args(["trino-worker-0", "-n", "analytics"]);
        env(&mut cmd);
        cmd
    });
    let script_path = work.join("checklist.sh");
    std::fs::write(&script_path, CHECKLIST).expect("write the script");
    let script = time(&|| {
        let mut cmd = Command::new("sh");
        cmd.arg(&script_path);
        env(&mut cmd);
        cmd
    });

    println!(
        "live benchmark: fake API server, {} ms per request, median of {runs} runs (min)",
        latency.as_millis()
    );
    println!();
    let row = |name: &str, t: &Timing| {
        println!(
            "  {name:<44} {:>6} ms ({:>4} ms)  {:>3} requests, {} sequential round trips",
            t.median.as_millis(),
            t.min.as_millis(),
            t.requests,
            t.depth
        );
    };
    row("kubectl karpenter-why trino-worker-0", &via_kubectl);
    row("kubectl-karpenter_why trino-worker-0 (direct)", &direct);
    row("checklist script (5 kubectl commands)", &script);
    println!();
    let ratio = script.median.as_secs_f64() / via_kubectl.median.as_secs_f64();
    println!(
        "  ratio script / plugin: {ratio:.1}x  (targets: plugin under 1000 ms: {}; at least 4x: {})",
        if via_kubectl.median < Duration::from_secs(1) { "met" } else { "MISSED" },
        if ratio >= 4.0 { "met" } else { "MISSED" }
    );
    println!();
    println!(
        "requests per verb (each against its scenario, {} ms latency):",
        latency.as_millis()
    );
    drop(server);
    let verbs: [(&str, Scenario, Vec<&str>); 4] = [
        (
            "POD",
            scenarios::zone_offering(),
            vec!["ledger-0", "-n", "payments"],
        ),
        (
            "node NODE",
            scenarios::pdb_blocked_node(),
            vec!["node", scenarios::PDB_NODE],
        ),
        (
            "nodeclaim NAME",
            scenarios::nodeclaim_not_initialized(),
            vec!["nodeclaim", scenarios::UNINITIALIZED_CLAIM],
        ),
        (
            "pending -A",
            scenarios::pending_ice(),
            vec!["pending", "-A"],
        ),
    ];
    for (verb, scenario, args) in verbs {
        let server = FakeApi::start(scenario.with_latency(latency));
        let kubeconfig = server.write_kubeconfig(&work, "default");
        let started = Instant::now();
        let status = Command::new(&plugin)
            .args(&args)
            .env("HOME", &work)
            .env("KUBECONFIG", &kubeconfig)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("runs");
        let elapsed = started.elapsed();
        let requests = server.requests();
        let logs = requests.iter().filter(|r| r.path.ends_with("/log")).count();
        println!(
            "  {verb:<16} {:>3} requests ({} logs), {} sequential round trips, {:>5} ms, exit {}",
            requests.len(),
            logs,
            server.critical_path_depth(),
            elapsed.as_millis(),
            status.code().unwrap_or(-1)
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}
