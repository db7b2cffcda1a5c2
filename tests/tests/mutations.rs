//! Damaged pastes: every corpus case, cases/ case and fixture, cut and mangled the way pastes
//! get damaged (a selection that starts or ends mid-line, lines lost or doubled, lines
//! reordered, a terminal's wrapping, CRLF, stray bytes), analysed with every rule on, whole
//! and through the log scanner. None may panic, and each report must still render.
//!
//! The mutations are deterministic (a fixed seed per input), so a failure names the input and
//! the round to reproduce it. `MUTATION_ROUNDS=50 cargo test --release -p karpenter-why-tests
//! --test mutations` runs a longer search.

use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use karpenter_why_core::ingest::scan;
use karpenter_why_core::render::{self, TextOptions};
use karpenter_why_core::{analyze, Document, Options};
use karpenter_why_tests::cases::load_cases;

/// xorshift64*: the mutations need no crate and must be the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn inputs() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in [
        root.join("corpus"),
        root.join("cases"),
        root.join("../../shared/corpus"),
    ] {
        if dir.is_dir() {
            for case in load_cases(&dir) {
                out.push((format!("{}/{}", dir.display(), case.name), case.input));
            }
        }
    }
    let fixtures = root.join("fixtures");
    let mut files: Vec<PathBuf> = fs::read_dir(&fixtures)
        .expect("tests/fixtures exists")
        .filter_map(Result::ok)
        .flat_map(|d| fs::read_dir(d.path()).into_iter().flatten())
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    files.sort();
    for f in files {
        if let Ok(text) = fs::read_to_string(&f) {
            out.push((f.display().to_string(), text));
        }
    }
    out
}

/// One damaged copy of `text`: 1 to 4 of the mutations a paste suffers.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(lines.len());
        match rng.below(10) {
            // A selection that ends mid-line, and nothing after it.
            0 => {
                let cut = char_floor(&lines[at], rng.below(lines[at].len() + 1));
                lines[at].truncate(cut);
                lines.truncate(at + 1);
            }
            // A selection that starts mid-line.
            1 => {
                let cut = char_floor(&lines[at], rng.below(lines[at].len() + 1));
                lines[at] = lines[at][cut..].to_string();
                lines.drain(..at);
            }
            // Lines lost.
            2 => {
                let n = 1 + rng.below(5);
                let end = (at + n).min(lines.len());
                lines.drain(at..end);
            }
            // A line doubled.
            3 => {
                let line = lines[at].clone();
                lines.insert(at, line);
            }
            // Two lines swapped.
            4 => {
                let other = rng.below(lines.len());
                lines.swap(at, other);
            }
            // A terminal's hard wrap at 80 columns.
            5 => {
                let line = std::mem::take(&mut lines[at]);
                let mut parts = Vec::new();
                let mut rest = line.as_str();
                while rest.len() > 80 {
                    let cut = char_floor(rest, 80);
                    let cut = if cut == 0 { rest.len() } else { cut };
                    parts.push(rest[..cut].to_string());
                    rest = &rest[cut..];
                }
                parts.push(rest.to_string());
                lines.splice(at..=at, parts);
            }
            // Stray bytes: a control character, a lone brace, a replacement character.
            6 => {
                let junk = [
                    "\u{0}",
                    "{",
                    "}",
                    "\"",
                    "\u{fffd}",
                    "\t",
                    "\u{1b}[31m",
                    "---",
                ];
                let pos = char_floor(&lines[at], rng.below(lines[at].len() + 1));
                lines[at].insert_str(pos, junk[rng.below(junk.len())]);
            }
            // Indentation lost (a chat client trimming each line).
            7 => {
                for l in lines.iter_mut().skip(at).take(10) {
                    *l = l.trim_start().to_string();
                }
            }
            // A line's second half joined to the next (a soft wrap copied badly).
            8 => {
                if at + 1 < lines.len() {
                    let next = lines.remove(at + 1);
                    lines[at].push_str(&next);
                }
            }
            // Everything twice, the way a paste is repeated into the same box.
            _ => {
                if lines.len() < 2000 {
                    let copy = lines.clone();
                    lines.extend(copy);
                }
            }
        }
        if lines.is_empty() {
            lines.push(String::new());
        }
    }
    let eol = if rng.below(5) == 0 { "\r\n" } else { "\n" };
    lines.join(eol)
}

fn char_floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn seed(name: &str) -> u64 {
    name.bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
        .max(1)
}

#[test]
fn damaged_pastes_never_panic() {
    let rounds: usize = std::env::var("MUTATION_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1);
    let inputs = inputs();
    assert!(inputs.len() > 500, "only {} inputs found", inputs.len());
    let mut failures = Vec::new();
    let mut analysed = 0;
    for (name, text) in &inputs {
        let mut rng = Rng(seed(name));
        for round in 0..rounds {
            let damaged = mutate(text, &mut rng);
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                let doc = Document::new("damaged.txt", damaged.as_str());
                let report = analyze(&[doc], &Options::default());
                render::text::report(&report, &TextOptions::default());
                render::markdown::report(&report);
                serde_json::to_string(&report).expect("a report serialises");
                let scanned = scan::scan_bytes("damaged.txt".to_string(), damaged.as_bytes());
                analyze(&[scanned.document], &Options::default());
            }));
            analysed += 1;
            if outcome.is_err() {
                failures.push(format!("{name} round {round}"));
            }
        }
    }
    println!(
        "mutations: {} inputs, {analysed} damaged pastes analysed, {} panicked",
        inputs.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "panics on damaged input:\n{}",
        failures.join("\n")
    );
}
