//! Property tests of ingest: whatever is pasted, ingest does not panic, its output stays
//! proportional to the input, streaming through the log scanner changes nothing, and the
//! scanner's SIMD anchors find exactly the lines the plain automaton finds.

use std::sync::OnceLock;

use karpenter_why_core::facts::Facts;
use karpenter_why_core::ingest::ingest;
use karpenter_why_core::ingest::scan;
use karpenter_why_core::Document;
use proptest::prelude::*;

/// Every line of every corpus input: real-format material to shuffle.
fn fixture_lines() -> &'static [String] {
    static LINES: OnceLock<Vec<String>> = OnceLock::new();
    LINES.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
        let mut lines = Vec::new();
        let mut cases: Vec<_> = std::fs::read_dir(dir).expect("corpus").flatten().collect();
        cases.sort_by_key(|e| e.file_name());
        for case in cases {
            for file in std::fs::read_dir(case.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                if file.file_name().to_string_lossy().starts_with("input.") {
                    let text = std::fs::read(file.path()).expect("input");
                    lines.extend(String::from_utf8_lossy(&text).lines().map(str::to_string));
                }
            }
        }
        assert!(lines.len() > 1000, "corpus lines: {}", lines.len());
        lines
    })
}

/// How much ingest produced, in items and in bytes of text.
fn size(facts: &Facts) -> (usize, usize) {
    let items = facts.messages.len()
        + facts.events.len()
        + facts.logs.len()
        + facts.pods.len()
        + facts.nodes.len()
        + facts.nodeclaims.len()
        + facts.nodepools.len()
        + facts.nodeclasses.len()
        + facts.pdbs.len()
        + facts.workloads.len()
        + facts.empty_lists.len()
        + facts.settings.len()
        + facts.input_errors.len();
    let bytes = facts
        .messages
        .iter()
        .map(|m| m.text.len() + m.evidence.text.len())
        .sum::<usize>()
        + facts
            .input_errors
            .iter()
            .map(|e| e.message.len())
            .sum::<usize>();
    (items, bytes)
}

fn assert_bounded(text: &str, facts: &Facts) {
    // A lone `\r` breaks a line too (`\r\n` counts twice: a bound).
    let lines = text.split(['\n', '\r']).count() + 1;
    let (items, bytes) = size(facts);
    assert!(items <= 8 * lines + 8, "{items} facts for {lines} lines");
    assert!(
        bytes <= 6 * text.len() + 64 * lines,
        "{bytes} bytes of facts for {} bytes of input",
        text.len()
    );
    assert!(facts.input_errors.len() <= lines);
    for m in &facts.messages {
        assert!(
            m.evidence.line <= lines,
            "evidence line {} of {lines}",
            m.evidence.line
        );
    }
}

/// What must not depend on how the text reached ingest.
fn signature(facts: &Facts) -> Vec<String> {
    let mut out: Vec<String> = facts
        .messages
        .iter()
        .map(|m| {
            format!(
                "{:?} {} {} {}",
                m.origin, m.evidence.source, m.evidence.line, m.text
            )
        })
        .collect();
    out.extend(
        facts
            .input_errors
            .iter()
            .map(|e| format!("error {} {} {}", e.source, e.line, e.message)),
    );
    out.push(format!(
        "{:?} {:?}",
        facts.collected, facts.log_lines_by_level
    ));
    out.push(format!(
        "{} events {} logs {} pods",
        facts.events.len(),
        facts.logs.len(),
        facts.pods.len()
    ));
    out
}

fn mixture() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        8 => any::<prop::sample::Index>().prop_map(|i| i.get(fixture_lines()).clone()),
        1 => any::<prop::sample::Index>().prop_map(|i| {
            // A real line cut short (a truncated paste).
            let l = i.get(fixture_lines());
            let cut = l.char_indices().map(|(k, _)| k).nth(l.chars().count() / 2).unwrap_or(0);
            l[..cut].to_string()
        }),
        1 => "[ -~]{0,40}",
        1 => Just("==> other.txt <==".to_string()),
        1 => Just(String::new()),
    ];
    prop::collection::vec(line, 0..60).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(96),
    ))]

    #[test]
    fn arbitrary_bytes_never_panic_and_stay_bounded(bytes in prop::collection::vec(any::<u8>(), 0..3000)) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let facts = ingest(&[Document::new("fuzz", text.clone())]);
        assert_bounded(&text, &facts);
    }

    #[test]
    fn mixtures_of_real_lines_never_panic_and_stay_bounded(text in mixture()) {
        let facts = ingest(&[Document::new("mix", text.clone())]);
        assert_bounded(&text, &facts);
    }

    #[test]
    fn streaming_gives_the_facts_of_the_whole_text(text in mixture(), chunk in 1usize..300) {
        let whole = ingest(&[Document::new("mix", text.clone())]);
        let mut scanner = scan::stream_scanner("mix");
        for piece in text.as_bytes().chunks(chunk) {
            scanner.feed(piece);
        }
        let streamed = ingest(&[scanner.finish().document]);
        prop_assert_eq!(signature(&whole), signature(&streamed));
    }

    #[test]
    fn anchors_find_exactly_the_lines_the_automaton_finds(
        lines in prop::collection::vec(
            prop_oneof![
                3 => any::<prop::sample::Index>().prop_map(|i| i.get(fixture_lines()).clone()),
                1 => (any::<prop::sample::Index>(), any::<u64>()).prop_map(|(i, case)| {
                    // A signal in random letter case, inside JSON-ish noise.
                    let signals = ["could not schedule pod", "prevents pod evictions", "did not tolerate", "insufficientinstancecapacity"];
                    let s = i.get(&signals);
                    let mixed: String = s.chars().enumerate().map(|(k, c)| if case >> (k % 64) & 1 == 1 { c.to_ascii_uppercase() } else { c }).collect();
                    format!("{{\"level\":\"INFO\",\"message\":\"x {mixed} y\"}}")
                }),
            ],
            1..120,
        )
    ) {
        let matcher = scan::rule_matcher();
        let text = lines.join("\n");
        let expected: Vec<usize> = {
            let mut at = 0;
            let mut out = Vec::new();
            for l in text.split('\n') {
                if matcher.is_match(l.as_bytes()) {
                    out.push(at);
                }
                at += l.len() + 1;
            }
            out
        };
        // Anchors chosen on a different sample than the text: they must still be exact.
        let sample = fixture_lines()[..200].join("\n");
        let Some(anchors) = matcher.anchors_for(sample.as_bytes()) else {
            return Ok(());
        };
        let mut found = Vec::new();
        matcher.signal_lines(text.as_bytes(), 0, Some(&anchors), &mut Vec::new(), &mut found);
        let starts: Vec<usize> = found.iter().map(|(s, _)| *s).collect();
        prop_assert_eq!(starts, expected);
        let mut plain = Vec::new();
        matcher.signal_lines(text.as_bytes(), 0, None, &mut Vec::new(), &mut plain);
        prop_assert_eq!(found, plain);
    }
}
