//! Log scan benchmark (DESIGN.md performance targets: at least 1 GB/s per core, within 2x of
//! `grep -F -f <signatures>`, memory independent of input size).
//!
//! Generates a realistic Karpenter v1 log (default 500 MB, `KW_BENCH_MB` to change) under
//! Cargo's target tmp dir, mostly INFO lines of the lifecycle kinds plus a few hundred lines
//! carrying catalogue signals, then reports in one run:
//! - the streaming scanner (what `analyze FILE` does): MB/s, kept lines, peak memory;
//! - `grep -c -F -f <signature list>` on the same file (`LC_ALL=C`), and with `-i`;
//! - the diagnosis of the kept lines (ingest + rules);
//! - `analyze` on a 100 MB text held in memory (the web page's path, no streaming).
//!
//! Run: `cargo bench -p karpenter-why-core --bench log_scan` (`KW_BENCH_SCAN_ONLY=1`: the
//! scanner alone, for profiling it).

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use karpenter_why_core::ingest::scan::{SignalMatcher, StreamScanner};
use karpenter_why_core::{analyze, rules, Document, Options};

/// Deterministic xorshift, so every run scans the same file.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn hex(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from(b"0123456789abcdef"[self.below(16) as usize]))
            .collect()
    }

    fn name(&mut self) -> String {
        (0..5)
            .map(|_| char::from(b"bcdfghjklmnpqrstvwxz2456789"[self.below(27) as usize]))
            .collect()
    }

    fn uuid(&mut self) -> String {
        format!(
            "{}-{}-4{}-8{}-{}",
            self.hex(8),
            self.hex(4),
            self.hex(3),
            self.hex(3),
            self.hex(12)
        )
    }
}

const POOLS: &[&str] = &[
    "default",
    "general-purpose",
    "spot-batch",
    "gpu",
    "arm64-builders",
];
const TYPES: &[&str] = &[
    "m6i.xlarge",
    "c6a.2xlarge",
    "r7i.large",
    "m7g.4xlarge",
    "c7i.8xlarge",
];
const ZONES: &[&str] = &["us-west-2a", "us-west-2b", "us-west-2c"];
const APPS: &[(&str, &str)] = &[
    ("shop", "checkout-7d4b9c6f8"),
    ("media", "render-worker-5b9c7f6d4"),
    ("fraud", "feature-store-api-79f6c8d5b4"),
    ("batch", "video-transcode-29311860"),
];

fn time(rng: &mut Rng, second: u64) -> String {
    format!(
        "2025-10-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        1 + (second / 86_400) % 28,
        (second / 3600) % 24,
        (second / 60) % 60,
        second % 60,
        rng.below(1000)
    )
}

/// One INFO line of the kinds Karpenter prints all day.
fn noise_line(rng: &mut Rng, second: u64) -> String {
    let t = time(rng, second);
    let id = rng.uuid();
    let pool = POOLS[rng.below(POOLS.len() as u64) as usize];
    let claim = format!("{pool}-{}", rng.name());
    let node = format!(
        "ip-10-3-{}-{}.us-west-2.compute.internal",
        rng.below(64),
        rng.below(255)
    );
    let itype = TYPES[rng.below(TYPES.len() as u64) as usize];
    let zone = ZONES[rng.below(ZONES.len() as u64) as usize];
    let (ns, app) = APPS[rng.below(APPS.len() as u64) as usize];
    let instance = format!("i-0{}", rng.hex(16));
    let head = |message: &str, controller: &str| {
        format!(
            r#"{{"level":"INFO","time":"{t}","logger":"controller","message":"{message}","commit":"1f41772","controller":"{controller}""#
        )
    };
    let claim_head = |message: &str| {
        format!(
            r#"{},"controllerGroup":"karpenter.sh","controllerKind":"NodeClaim","NodeClaim":{{"name":"{claim}"}},"namespace":"","name":"{claim}","reconcileID":"{id}""#,
            head(message, "nodeclaim.lifecycle")
        )
    };
    match rng.below(9) {
        0 => format!(
            r#"{},"namespace":"","name":"","reconcileID":"{id}","Pods":"{ns}/{app}-{}, {ns}/{app}-{}","duration":"{}.{}ms"}}"#,
            head("found provisionable pod(s)", "provisioner"),
            rng.name(),
            rng.name(),
            rng.below(90),
            rng.below(999_999)
        ),
        1 => format!(
            r#"{},"namespace":"","name":"","reconcileID":"{id}","nodeclaims":1,"pods":{}}}"#,
            head("computed new nodeclaim(s) to fit pod(s)", "provisioner"),
            1 + rng.below(8)
        ),
        2 => format!(
            r#"{},"namespace":"","name":"","reconcileID":"{id}","NodePool":{{"name":"{pool}"}},"NodeClaim":{{"name":"{claim}"}},"requests":{{"cpu":"{}m","memory":"{}Mi","pods":"{}"}},"instance-types":"c6a.2xlarge, c6i.2xlarge, m6a.2xlarge, m6i.2xlarge, r6i.xlarge and {} other(s)"}}"#,
            head("created nodeclaim", "provisioner"),
            1000 + rng.below(30_000),
            512 + rng.below(60_000),
            1 + rng.below(30),
            rng.below(40)
        ),
        3 => format!(
            r#"{},"provider-id":"aws:///{zone}/{instance}","instance-type":"{itype}","zone":"{zone}","capacity-type":"spot","allocatable":{{"cpu":"7910m","ephemeral-storage":"17Gi","memory":"14162Mi","pods":"58"}}}}"#,
            claim_head("launched nodeclaim")
        ),
        4 => format!(
            r#"{},"provider-id":"aws:///{zone}/{instance}","Node":{{"name":"{node}"}}}}"#,
            claim_head("registered nodeclaim")
        ),
        5 => format!(
            r#"{},"provider-id":"aws:///{zone}/{instance}","Node":{{"name":"{node}"}},"allocatable":{{"cpu":"7910m","ephemeral-storage":"18242267924","hugepages-1Gi":"0","hugepages-2Mi":"0","memory":"14822500Ki","pods":"58"}}}}"#,
            claim_head("initialized nodeclaim")
        ),
        6 => format!(
            r#"{},"namespace":"","name":"","reconcileID":"{id}","command-id":"{}","reason":"underutilized","decision":"replace","disrupted-node-count":1,"replacement-node-count":1,"pod-count":{},"disrupted-nodes":[{{"Node":{{"name":"{node}"}},"NodeClaim":{{"name":"{claim}"}},"capacity-type":"spot","instance-type":"{itype}"}}],"replacement-nodes":[{{"capacity-type":"spot","instance-types":"m6a.large, m7a.large"}}]}}"#,
            head("disrupting node(s)", "disruption"),
            rng.uuid(),
            rng.below(12)
        ),
        7 => format!(
            r#"{},"controllerGroup":"karpenter.k8s.aws","controllerKind":"EC2NodeClass","EC2NodeClass":{{"name":"default"}},"namespace":"","name":"default","reconcileID":"{id}","parameter":"/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id","value":"ami-0{}"}}"#,
            head("discovered ssm parameter", "nodeclass"),
            rng.hex(16)
        ),
        _ => format!(
            r#"{},"controllerGroup":"","controllerKind":"Node","Node":{{"name":"{node}"}},"namespace":"","name":"{node}","reconcileID":"{id}","taint.Key":"karpenter.sh/disrupted","taint.Value":"","taint.Effect":"NoSchedule"}}"#,
            head("tainted node", "node.termination")
        ),
    }
}

/// A line a rule must see.
fn signal_line(rng: &mut Rng, second: u64) -> String {
    let t = time(rng, second);
    let id = rng.uuid();
    let (ns, app) = APPS[rng.below(APPS.len() as u64) as usize];
    let pod = format!("{app}-{}", rng.name());
    let claim = format!("spot-batch-{}", rng.name());
    match rng.below(4) {
        0 => format!(
            r#"{{"level":"ERROR","time":"{t}","logger":"controller","message":"could not schedule pod","commit":"1f41772","controller":"provisioner","namespace":"","name":"","reconcileID":"{id}","Pod":{{"name":"{pod}","namespace":"{ns}"}},"error":"no instance type has the required offering, requirements=karpenter.sh/capacity-type In [spot], karpenter.sh/nodepool In [spot-batch], topology.kubernetes.io/zone In [us-west-2a], resources={{\"cpu\":\"30180m\",\"memory\":\"56832Mi\",\"pods\":\"5\"}}"}}"#
        ),
        1 => format!(
            r#"{{"level":"ERROR","time":"{t}","logger":"controller","message":"failed launching nodeclaim","commit":"1f41772","controller":"nodeclaim.lifecycle","controllerGroup":"karpenter.sh","controllerKind":"NodeClaim","NodeClaim":{{"name":"{claim}"}},"namespace":"","name":"{claim}","reconcileID":"{id}","error":"creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient c7i.8xlarge capacity in the Availability Zone you requested (us-west-2a)."}}"#
        ),
        2 => format!(
            r#"{{"level":"INFO","time":"{t}","logger":"controller","message":"skipping, nodepool requirements filtered out all instance types","commit":"1f41772","controller":"provisioner","namespace":"","name":"","reconcileID":"{id}","NodePool":{{"name":"gpu"}}}}"#
        ),
        _ => format!(
            r#"{{"level":"DEBUG","time":"{t}","logger":"controller","caller":"provisioning/provisioner.go:301","message":"40 out of 458 instance types were excluded because they would breach limits","commit":"1f41772","controller":"provisioner","NodePool":{{"name":"default"}}}}"#
        ),
    }
}

/// Writes the log, streaming, until it holds at least `bytes`; returns the signal line count.
fn generate(path: &Path, bytes: u64) -> std::io::Result<u64> {
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut rng = Rng(0x5eed_cafe_f00d_beef);
    let (mut written, mut lines, mut signals) = (0u64, 0u64, 0u64);
    while written < bytes {
        let second = lines / 40;
        let line = if lines % 3_001 == 1_500 {
            signals += 1;
            signal_line(&mut rng, second)
        } else {
            noise_line(&mut rng, second)
        };
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        written += line.len() as u64 + 1;
        lines += 1;
    }
    out.flush()?;
    Ok(signals)
}

/// CPU time of the calling thread (Linux `/proc/thread-self/schedstat`): on a shared machine
/// the wall clock also counts time spent waiting for a core.
fn thread_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(Duration::from_nanos(
        stat.split_whitespace().next()?.parse().ok()?,
    ))
}

/// CPU time of the finished children (user + system, `/proc/self/stat` fields 16-17).
fn children_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    // After the command name: state is field 3, so cutime (16) is index 13, cstime index 14.
    let ticks: u64 = fields.get(13)?.parse::<u64>().ok()? + fields.get(14)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// Runs `f`, returning (wall time, CPU time of this thread, result).
fn timed<T>(f: impl FnOnce() -> T) -> (Duration, Option<Duration>, T) {
    let cpu = thread_cpu();
    let start = Instant::now();
    let out = f();
    let wall = start.elapsed();
    (wall, cpu.and_then(|c| Some(thread_cpu()? - c)), out)
}

fn rate(bytes: u64, wall: Duration, cpu: Option<Duration>) -> String {
    let per = |d: Duration| mb(bytes) / d.as_secs_f64();
    match cpu {
        Some(c) => format!(
            "{:.2} s wall ({:.0} MB/s), {:.2} s CPU ({:.0} MB/s)",
            wall.as_secs_f64(),
            per(wall),
            c.as_secs_f64(),
            per(c)
        ),
        None => format!("{:.2} s ({:.0} MB/s)", wall.as_secs_f64(), per(wall)),
    }
}

/// Peak resident memory of this process, from /proc (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets the peak RSS counter so the next reading covers only what follows.
fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}

fn scan_file(path: &Path, matcher: &SignalMatcher) -> (Document, usize) {
    let mut file = File::open(path).expect("open log");
    let mut scanner = StreamScanner::with_matcher("karpenter.log", matcher);
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buffer).expect("read log");
        if n == 0 {
            break;
        }
        scanner.feed(&buffer[..n]);
    }
    let out = scanner.finish();
    (out.document, out.stats.kept_lines)
}

/// `grep ARGS SIGNATURES LOG` with `LC_ALL=C`: (wall, CPU, stdout).
fn grep(
    args: &[&str],
    signatures: &Path,
    log: &Path,
) -> Option<(Duration, Option<Duration>, String)> {
    let before = children_cpu();
    let start = Instant::now();
    let output = Command::new("grep")
        .args(args)
        .arg(signatures)
        .arg(log)
        .env("LC_ALL", "C")
        .output()
        .ok()?;
    let wall = start.elapsed();
    let cpu = before.and_then(|b| Some(children_cpu()? - b));
    Some((
        wall,
        cpu,
        String::from_utf8_lossy(&output.stdout).trim().to_string(),
    ))
}

/// The fastest of `runs` runs, by CPU time when known.
fn best<T>(
    runs: usize,
    mut f: impl FnMut() -> (Duration, Option<Duration>, T),
) -> (Duration, Option<Duration>, T) {
    let mut result = f();
    for _ in 1..runs {
        let next = f();
        if next.1.unwrap_or(next.0) < result.1.unwrap_or(result.0) {
            result = next;
        }
    }
    result
}

fn main() {
    let megabytes: u64 = std::env::var("KW_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let log = dir.join(format!("karpenter-v1-{megabytes}mb.log"));
    let size = megabytes * 1_000_000;
    if std::fs::metadata(&log)
        .map(|m| m.len() < size)
        .unwrap_or(true)
    {
        let start = Instant::now();
        let signals = generate(&log, size).expect("generate the log");
        println!(
            "generated {} ({signals} signal lines) in {:.1?}",
            log.display(),
            start.elapsed()
        );
    }
    let bytes = std::fs::metadata(&log).expect("log").len();
    let all_rules = rules::all();
    let signals: Vec<&str> = all_rules
        .iter()
        .flat_map(|r| r.meta.signals.iter().copied())
        .collect();
    let signatures = dir.join("signatures.txt");
    std::fs::write(&signatures, signals.join("\n") + "\n").expect("write signatures");
    let matcher = SignalMatcher::new(signals.iter().copied());
    println!(
        "log: {:.0} MB; {} rules, {} signals ({} byte patterns with their JSON spellings)",
        mb(bytes),
        all_rules.len(),
        signals.len(),
        matcher.pattern_count()
    );

    // KW_BENCH_SCAN_ONLY=1: the scanner alone, for profiling it.
    let scan_only = std::env::var_os("KW_BENCH_SCAN_ONLY").is_some();
    // grep first: it also warms the page cache for everyone.
    let grep_runs: &[&[&str]] = if scan_only {
        &[]
    } else {
        &[&["-c", "-F", "-f"], &["-c", "-i", "-F", "-f"]]
    };
    for args in grep_runs {
        let (wall, cpu, count) = best(3, || grep(args, &signatures, &log).expect("grep runs"));
        println!(
            "grep {}: {}, {count} matching lines",
            args.join(" "),
            rate(bytes, wall, cpu)
        );
    }

    let rss_before = peak_rss_kib();
    let reset = reset_peak_rss();
    let (wall, cpu, (document, kept)) = best(3, || timed(|| scan_file(&log, &matcher)));
    let rss_after = peak_rss_kib();
    println!(
        "scanner (1 thread, streaming 1 MiB reads): {}, {kept} lines kept",
        rate(bytes, wall, cpu)
    );
    match (reset, rss_after) {
        (true, Some(peak)) => println!(
            "scanner peak memory: {:.1} MiB (VmHWM reset before the scans)",
            peak as f64 / 1024.0
        ),
        (_, Some(peak)) => println!(
            "peak memory: {:.1} MiB (VmHWM, whole process; {:.1} MiB before the scan)",
            peak as f64 / 1024.0,
            rss_before.unwrap_or(0) as f64 / 1024.0
        ),
        _ => println!("peak memory: not available on this platform"),
    }

    if scan_only {
        return;
    }
    // The first call also builds the engine's lazily built matchers; the best of three is the
    // diagnosis itself.
    let diagnose = || timed(|| analyze(std::slice::from_ref(&document), &Options::default()));
    let (first_wall, _, _) = diagnose();
    let (wall, cpu, report) = best(3, diagnose);
    let mut ids: Vec<&str> = report.diagnoses.iter().map(|d| d.id).collect();
    ids.dedup();
    println!(
        "diagnosis of the kept lines: {:.3} s wall, {:.3} s CPU ({:.3} s on the first call), {} diagnoses ({})",
        wall.as_secs_f64(),
        cpu.unwrap_or(wall).as_secs_f64(),
        first_wall.as_secs_f64(),
        report.diagnoses.len(),
        ids.join(" ")
    );

    let mut text = String::new();
    File::open(&log)
        .expect("open log")
        .take(100_000_000)
        .read_to_string(&mut text)
        .ok();
    if let Some(cut) = text.rfind('\n') {
        text.truncate(cut + 1);
    }
    let documents = [Document::new("paste", text)];
    let (wall, cpu, report) = timed(|| analyze(&documents, &Options::default()));
    println!(
        "analyze() on {:.0} MB held in memory (the web page's path): {}, {} diagnoses",
        mb(documents[0].text.len() as u64),
        rate(documents[0].text.len() as u64, wall, cpu),
        report.diagnoses.len()
    );
}
