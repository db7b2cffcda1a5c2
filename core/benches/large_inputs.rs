//! Large-cluster benchmark: the pastes of a big cluster (`kubectl get events -A` with tens of
//! thousands of rows, every Pending pod of `kubectl get pods -A`, a Karpenter log naming
//! thousands of pods, an Event JSON list, many pod describes) must be diagnosed in time
//! linear in their size. A rule that, for every message, scans every event is quadratic:
//! invisible on a one-incident paste, minutes on these.
//!
//! For each generated input, at `KW_BENCH_PODS` pods (default 20,000) and at half that, it
//! reports ingest, rules and report times, the slowest rules, MB/s, and the growth factor
//! from half size to full size (about 2 when linear, 4 when quadratic).
//!
//! Run: `cargo bench -p karpenter-why-core --bench large_inputs`.

use std::time::{Duration, Instant};

use karpenter_why_core::{ingest, report::Report, rules, Document};

/// One generated paste: its name and a generator of its text for `n` pods.
struct Input {
    name: &'static str,
    /// Describes are ten times larger per pod: fewer of them.
    pods_divisor: usize,
    text: fn(usize) -> String,
}

fn pod(i: usize) -> (String, String) {
    (
        format!("ns{}", i % 40),
        format!("web-{i:05}-7f9c8b6d5-x2k4q"),
    )
}

fn events_table(n: usize) -> String {
    let mut s = String::from(
        "NAMESPACE   LAST SEEN   TYPE      REASON             OBJECT                               MESSAGE\n",
    );
    for i in 0..n {
        let (ns, name) = pod(i);
        s.push_str(&format!("{ns}   2m   Warning   FailedScheduling   pod/{name}   Failed to schedule pod, incompatible with nodepool \"default\", incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]\n"));
        s.push_str(&format!("{ns}   3m   Warning   FailedScheduling   pod/{name}   0/6 nodes are available: 6 node(s) didn't match Pod's node affinity/selector. preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.\n"));
        if i % 7 == 0 {
            s.push_str(&format!("{ns}   1m   Normal    Nominated          pod/{name}   Pod should schedule on: nodeclaim/default-{i:05}\n"));
        }
    }
    s
}

fn pods_table(n: usize) -> String {
    let mut s = String::from("NAMESPACE   NAME   READY   STATUS   RESTARTS   AGE\n");
    for i in 0..n {
        let (ns, name) = pod(i);
        let status = if i % 3 == 0 { "Running" } else { "Pending" };
        s.push_str(&format!("{ns}   {name}   0/1   {status}   0   5m\n"));
    }
    s
}

fn karpenter_log(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let (ns, name) = pod(i);
        let time = format!(
            "2025-06-02T14:{:02}:{:02}.{:03}Z",
            (i / 60) % 60,
            i % 60,
            i % 1000
        );
        s.push_str(&format!("{{\"level\":\"INFO\",\"time\":\"{time}\",\"logger\":\"controller\",\"message\":\"found provisionable pod(s)\",\"commit\":\"901a5dc\",\"controller\":\"provisioner\",\"Pods\":\"{ns}/{name}\",\"duration\":\"12ms\"}}\n"));
        s.push_str(&format!("{{\"level\":\"ERROR\",\"time\":\"{time}\",\"logger\":\"controller\",\"message\":\"could not schedule pod\",\"commit\":\"901a5dc\",\"controller\":\"provisioner\",\"Pod\":{{\"name\":\"{name}\",\"namespace\":\"{ns}\"}},\"error\":\"incompatible with nodepool \\\"default\\\", daemonset overhead={{\\\"cpu\\\":\\\"180m\\\",\\\"memory\\\":\\\"250Mi\\\",\\\"pods\\\":\\\"4\\\"}}, incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]\"}}\n"));
    }
    s
}

fn events_json(n: usize) -> String {
    let mut s =
        String::from("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [\n");
    for i in 0..n {
        let (ns, name) = pod(i);
        if i > 0 {
            s.push_str(",\n");
        }
        s.push_str(&format!("    {{\"apiVersion\": \"v1\", \"kind\": \"Event\", \"metadata\": {{\"name\": \"{name}.1\", \"namespace\": \"{ns}\"}}, \"involvedObject\": {{\"kind\": \"Pod\", \"name\": \"{name}\", \"namespace\": \"{ns}\"}}, \"reason\": \"FailedScheduling\", \"message\": \"0/6 nodes are available: 6 Insufficient cpu. preemption: 0/6 nodes are available: 6 No preemption victims found for incoming pod.\", \"source\": {{\"component\": \"default-scheduler\"}}, \"type\": \"Warning\", \"count\": 3, \"lastTimestamp\": \"2025-06-02T14:00:00Z\"}}"));
    }
    s.push_str("\n  ]\n}\n");
    s
}

fn describes(n: usize) -> String {
    let mut s = String::new();
    for i in 0..n {
        let (ns, name) = pod(i);
        s.push_str(&format!(
            "Name:             {name}\nNamespace:        {ns}\nStatus:           Pending\nContainers:\n  web:\n    Image:      nginx:1.27\n    Requests:\n      cpu:        2\n      memory:     4Gi\nNode-Selectors:   kubernetes.io/arch=arm64\nEvents:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  2m    karpenter          Failed to schedule pod, incompatible with nodepool \"default\", incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]\n  Warning  FailedScheduling  3m    default-scheduler  0/6 nodes are available: 6 node(s) didn't match Pod's node affinity/selector.\n\n"
        ));
    }
    s
}

/// Runs of `Key: value` lines and of status blocks that prove no kind (then ones that do):
/// each refused block must be skipped whole, or the describe reader turns quadratic.
fn describe_key_runs(n: usize) -> String {
    let mut s = "Key: value\n".repeat(3 * n);
    s.push_str(&"Status:\n  Conditions:\n    Type:  Ready\n".repeat(n));
    s.push_str(&"Status:\n  Conditions:\n    Type:  Launched\n".repeat(n));
    s
}

/// A cluster-wide `kubectl get events -A` of disruption verdicts: every node blocked by its own
/// PDB, some NodeClaims not initialized, pods that would not reschedule. The KW4xx rules ask of
/// each verdict whether the node went later, or was initialized: once per message, not by
/// reading every message again.
fn disruption_events(n: usize) -> String {
    let mut s = String::from(
        "NAMESPACE   LAST SEEN   TYPE     REASON              OBJECT                                MESSAGE\n",
    );
    for i in 0..n {
        let (ns, name) = pod(i);
        let node = format!("ip-10-0-{}-{}.ec2.internal", i / 200, i % 200);
        s.push_str(&format!("default   {}m   Normal   DisruptionBlocked   node/{node}   Pdb \"{ns}/web-{i:05}\" prevents pod evictions\n", i % 50));
        if i % 5 == 0 {
            s.push_str(&format!("default   {}m   Normal   DisruptionBlocked   nodeclaim/default-{i:05}   Cannot disrupt NodeClaim: state node isn't initialized\n", i % 50));
            s.push_str(&format!("{ns}   {}m   Normal   Unconsolidatable   node/{node}   Not all pods would schedule, {ns}/{name} => would schedule against uninitialized nodeclaim\n", i % 50));
        }
        if i % 9 == 0 {
            s.push_str(&format!("default   {}m   Normal   Unconsolidatable   node/{node}   Can't replace with a cheaper node\n", i % 50));
        }
    }
    s
}

const INPUTS: &[Input] = &[
    Input {
        name: "kubectl get events -A",
        pods_divisor: 1,
        text: events_table,
    },
    Input {
        name: "kubectl get pods -A",
        pods_divisor: 1,
        text: pods_table,
    },
    Input {
        name: "Karpenter JSON log",
        pods_divisor: 1,
        text: karpenter_log,
    },
    Input {
        name: "Event JSON list",
        pods_divisor: 1,
        text: events_json,
    },
    Input {
        name: "kubectl describe pods",
        pods_divisor: 10,
        text: describes,
    },
    Input {
        name: "disruption events -A",
        pods_divisor: 1,
        text: disruption_events,
    },
    Input {
        name: "describe key runs",
        pods_divisor: 1,
        text: describe_key_runs,
    },
];

struct Timing {
    bytes: usize,
    ingest: Duration,
    rules: Duration,
    report: Duration,
    slowest: Vec<(&'static str, Duration)>,
    diagnoses: usize,
}

impl Timing {
    fn total(&self) -> Duration {
        self.ingest + self.rules + self.report
    }
}

fn time(text: String) -> Timing {
    let documents = [Document::new("bench", text)];
    let bytes = documents[0].text.len();
    let start = Instant::now();
    let facts = ingest::ingest(&documents);
    let ingest = start.elapsed();
    let mut per_rule: Vec<(&'static str, Duration)> = Vec::new();
    let start = Instant::now();
    let mut diagnoses = 0;
    for rule in rules::all() {
        let t = Instant::now();
        diagnoses += (rule.check)(&facts).len();
        per_rule.push((rule.meta.id, t.elapsed()));
    }
    let rules_time = start.elapsed();
    let all = rules::all();
    let start = Instant::now();
    let report = Report::build(&facts, rules::run(&facts, &all));
    // `run` repeats the rules: only the report's own part is timed.
    let report_time = start.elapsed().saturating_sub(rules_time);
    std::hint::black_box(&report);
    per_rule.sort_by_key(|rule| std::cmp::Reverse(rule.1));
    per_rule.truncate(3);
    Timing {
        bytes,
        ingest,
        rules: rules_time,
        report: report_time,
        slowest: per_rule,
        diagnoses,
    }
}

fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

fn main() {
    let pods: usize = std::env::var("KW_BENCH_PODS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    println!("large inputs, {pods} pods (describes: a tenth), then half as many:");
    for input in INPUTS {
        let n = pods / input.pods_divisor;
        let half = time((input.text)(n / 2));
        let full = time((input.text)(n));
        let mb = full.bytes as f64 / 1e6;
        let growth = full.total().as_secs_f64() / half.total().as_secs_f64().max(1e-9);
        println!(
            "{:<24} {:>6.1} MB  total {:>9} ({:>6.1} MB/s)  ingest {:>8}  rules {:>8}  report {:>8}  x{:.1} for 2x input  {} diagnoses",
            input.name,
            mb,
            ms(full.total()),
            mb / full.total().as_secs_f64().max(1e-9),
            ms(full.ingest),
            ms(full.rules),
            ms(full.report),
            growth,
            full.diagnoses,
        );
        let slowest: Vec<String> = full
            .slowest
            .iter()
            .map(|(id, d)| format!("{id} {}", ms(*d)))
            .collect();
        println!("{:<24} slowest rules: {}", "", slowest.join(", "));
    }
}
