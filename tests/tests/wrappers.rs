//! The wrappers a paste arrives in change nothing: every corpus case and cases/ case, pasted
//! with Windows line ends, as a Markdown or e-mail quote, in a fenced or an indented Markdown
//! code block, after a byte-order mark, between blank lines or with a chat tool's no-break
//! spaces, or pasted twice, gets the same diagnosis IDs as the plain paste. (A wrapper the ingest does not see through loses facts: the damage test
//! only checks that nothing panics.)

use std::collections::BTreeSet;
use std::path::Path;

use karpenter_why_core::{analyze, Document};
use karpenter_why_tests::cases::{load_cases, Case};

/// The lines as an editor shows them: a lone `\r` (an old Mac text, some Windows tools) breaks
/// a line too, so a wrapper that works line by line wraps every line the user sees.
fn editor_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().flat_map(|l| l.split('\r'))
}

fn crlf(text: &str) -> String {
    text.replace('\n', "\r\n")
}

/// `> ` before every line, a bare `>` on blank ones (GitHub's "Quote reply", a mail client).
fn quoted(text: &str) -> String {
    editor_lines(text)
        .map(|l| {
            if l.trim().is_empty() {
                ">\n".to_string()
            } else {
                format!("> {l}\n")
            }
        })
        .collect()
}

fn fenced(text: &str) -> String {
    format!(
        "Here is what I see:\n\n```\n{}\n```\n\nAny ideas?\n",
        text.trim_end_matches('\n')
    )
}

/// A Markdown code block by indentation: four spaces before every line that has text.
fn indented(text: &str) -> String {
    let body: String = editor_lines(text)
        .map(|l| {
            if l.trim().is_empty() {
                "\n".to_string()
            } else {
                format!("    {l}\n")
            }
        })
        .collect();
    format!("Output:\n\n{body}")
}

fn with_bom(text: &str) -> String {
    format!("\u{feff}{text}")
}

fn between_blank_lines(text: &str) -> String {
    format!("\n\n{text}\n\n")
}

/// The same output pasted twice (a second try, the message quoted back): nothing is there
/// twice, so nothing is counted twice (a pod is no second replica).
fn twice(text: &str) -> String {
    format!("{}\n\n{text}", text.trim_end_matches('\n'))
}

/// A copy out of Teams, Confluence or a web page: every other space of a run a no-break space.
fn chat_spaces(text: &str) -> String {
    text.replace("  ", "\u{a0} ")
}

/// A wrapper's name and what it does to a paste.
type Wrapper = (&'static str, fn(&str) -> String);

const WRAPPERS: &[Wrapper] = &[
    ("CRLF", crlf),
    ("quote", quoted),
    ("fence", fenced),
    ("indent", indented),
    ("BOM", with_bom),
    ("blank lines", between_blank_lines),
    ("no-break spaces", chat_spaces),
    ("pasted twice", twice),
];

fn ids(case: &Case, text: &str) -> BTreeSet<String> {
    let doc = Document::new(case.input_name.as_str(), text);
    analyze(&[doc], &case.options())
        .diagnoses
        .into_iter()
        .map(|d| d.id.to_string())
        .collect()
}

#[test]
fn wrapped_pastes_get_the_same_diagnoses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases = load_cases(&root.join("corpus"));
    cases.extend(load_cases(&root.join("cases")));
    assert!(cases.len() > 150, "only {} cases found", cases.len());
    let mut differences = Vec::new();
    let mut checked = 0;
    for case in &cases {
        let plain = ids(case, &case.input);
        for (wrapper, wrap) in WRAPPERS {
            let wrapped = ids(case, &wrap(&case.input));
            checked += 1;
            if wrapped != plain {
                differences.push(format!(
                    "{} ({wrapper}): {plain:?} plain, {wrapped:?} wrapped",
                    case.name
                ));
            }
        }
    }
    println!(
        "wrappers: {} cases x {} wrappers = {checked} wrapped pastes, {} differ",
        cases.len(),
        WRAPPERS.len(),
        differences.len()
    );
    assert!(
        differences.is_empty(),
        "wrapped pastes read differently:\n{}",
        differences.join("\n")
    );
}
