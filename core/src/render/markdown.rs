//! Markdown for a ticket or a chat thread: headings, the evidence and commands in fenced
//! blocks, the checklist as a table. Also the rule catalogue (`docs/rules.md` is this
//! renderer's output) and one rule's documentation.

use std::fmt::Write;

use crate::render::{
    counts_line, location, repeat_note, sections, subject_line, CHECKLIST_TITLE,
    INPUT_ERRORS_TITLE, MAX_EVIDENCE, MISSING_TITLE, NO_DIAGNOSIS, RULES_TITLE,
};
use crate::report::Report;
use crate::rules::{group_of, Rule, GROUPS};

/// A code fence longer than any backtick run in `content`, so pasted text cannot close it.
fn fence(content: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in content.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

fn block(lang: &str, content: &str, indent: &str, out: &mut String) {
    let f = fence(content);
    let _ = writeln!(out, "{indent}{f}{lang}");
    for line in content.lines() {
        let _ = writeln!(out, "{indent}{line}");
    }
    let _ = writeln!(out, "{indent}{f}");
}

/// Inline code that survives backticks in the content.
fn code(s: &str) -> String {
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

/// Prose: one line, with `<` outside code spans escaped so that placeholders such as
/// `<nodepool>` are not swallowed as HTML tags.
fn prose(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_code = false;
    for c in s.chars() {
        match c {
            '`' => {
                in_code = !in_code;
                out.push(c);
            }
            '<' if !in_code => out.push_str("&lt;"),
            '\n' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// A table cell: prose with pipes escaped.
fn cell(s: &str) -> String {
    prose(s).replace('|', "\\|")
}

/// The report as markdown.
pub fn report(report: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# karpenter-why: {}", subject_line(report));
    let _ = writeln!(out);
    let _ = writeln!(out, "{}", counts_line(report));
    let sections = sections(report);
    if sections.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "{NO_DIAGNOSIS}");
    }
    for section in &sections {
        let d = section.diagnosis;
        let _ = writeln!(out);
        let _ = writeln!(out, "## {} {}: {}", d.severity.as_str(), d.id, d.title);
        let _ = writeln!(out);
        if section.pods.len() > 1 {
            let _ = writeln!(
                out,
                "**{} pods:** {}",
                section.pods.len(),
                section
                    .pods
                    .iter()
                    .map(|p| code(p))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let _ = writeln!(out);
        }
        let _ = writeln!(out, "{}", prose(&d.summary));
        if let Some(note) = section.shown_for() {
            let _ = writeln!(out);
            let _ = writeln!(out, "_{note}_");
        }
        let evidence = section.evidence();
        if !evidence.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "**Evidence**");
        }
        for e in evidence.iter().take(MAX_EVIDENCE) {
            let _ = writeln!(out);
            match repeat_note(e) {
                Some(note) => {
                    let _ = writeln!(out, "{} ({note})", code(&location(e)));
                }
                None => {
                    let _ = writeln!(out, "{}", code(&location(e)));
                }
            }
            let _ = writeln!(out);
            block("text", &e.text, "", &mut out);
        }
        if evidence.len() > MAX_EVIDENCE {
            let _ = writeln!(out);
            let _ = writeln!(
                out,
                "_and {} more evidence lines (all of them in the JSON output)_",
                evidence.len() - MAX_EVIDENCE
            );
        }
        if !d.remediation.is_empty() {
            let _ = writeln!(out);
            let _ = writeln!(out, "**How to fix**");
            let _ = writeln!(out);
            for (i, step) in d.remediation.iter().enumerate() {
                let _ = writeln!(out, "{}. {}", i + 1, prose(&step.text));
                if let Some(cmd) = &step.command {
                    block("sh", cmd, "   ", &mut out);
                }
                if let Some(yaml) = &step.yaml {
                    block("yaml", yaml, "   ", &mut out);
                }
            }
        }
        let _ = writeln!(out);
        let mut facts: Vec<String> = section
            .notes()
            .into_iter()
            .map(|(k, v)| format!("{k}: {}", code(&v)))
            .collect();
        facts.push(format!("docs: {}", code(&d.docs)));
        let _ = writeln!(out, "{}", facts.join(" · "));
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "## {CHECKLIST_TITLE}");
    let _ = writeln!(out);
    let _ = writeln!(out, "| # | Step | Status | Signal |");
    let _ = writeln!(out, "|---|------|--------|--------|");
    for s in &report.checklist {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            s.step,
            s.name,
            s.status.as_str(),
            cell(&s.signal)
        );
    }
    if !report.missing.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "## {MISSING_TITLE}");
        let _ = writeln!(out);
        for m in &report.missing {
            match &m.reason {
                Some(reason) => {
                    let _ = writeln!(out, "- {}: {}", prose(&m.what), prose(reason));
                }
                None => {
                    let _ = writeln!(out, "- {}", prose(&m.what));
                }
            }
            block("sh", &m.command, "  ", &mut out);
        }
    }
    if !report.input_errors.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "## {INPUT_ERRORS_TITLE}");
        let _ = writeln!(out);
        for e in &report.input_errors {
            let _ = writeln!(out, "- {}: {}", code(&e.location()), prose(&e.message));
        }
    }
    out
}

/// The docs' `## ` sections one level deeper, under a rule heading of `level`.
fn demoted_docs(docs: &str, level: usize) -> String {
    let mut out = String::new();
    for line in docs.lines() {
        match line.strip_prefix("## ") {
            Some(h) => {
                let _ = writeln!(out, "{} {h}", "#".repeat(level + 1));
            }
            None => {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    out
}

fn anchor(id: &str, slug: &str) -> String {
    format!("{}-{slug}", id.to_ascii_lowercase())
}

/// One rule's documentation (`explain -o markdown`).
pub fn explain(rule: &Rule) -> String {
    let m = &rule.meta;
    let mut out = String::new();
    let _ = writeln!(out, "# {} {}", m.id, m.slug);
    let _ = writeln!(out);
    let _ = writeln!(out, "**{}** · severity: {}", m.title, m.severity.as_str());
    let _ = writeln!(out);
    out.push_str(&demoted_docs(m.docs, 1));
    out
}

/// The whole catalogue: a table, then every rule's documentation by group. `docs/rules.md` is
/// exactly this text; a test keeps it up to date.
pub fn rules(rules: &[&Rule]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!-- Generated from the rule registry: do not edit. Regenerate with\n     cargo run -q -p kubectl-karpenter-why -- rules -o markdown > docs/rules.md -->"
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "# {RULES_TITLE}");
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{} rules. Each ID is a public contract: it is never renumbered or reused. `kubectl karpenter-why explain ID` prints one rule's documentation.",
        rules.len()
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "| ID | Slug | Severity | Title |");
    let _ = writeln!(out, "|----|------|----------|-------|");
    for r in rules {
        let m = &r.meta;
        let _ = writeln!(
            out,
            "| [{}](#{}) | `{}` | {} | {} |",
            m.id,
            anchor(m.id, m.slug),
            m.slug,
            m.severity.as_str(),
            cell(m.title)
        );
    }
    for group in GROUPS {
        let members: Vec<&&Rule> = rules
            .iter()
            .filter(|r| group_of(r.meta.id) == Some(group))
            .collect();
        if members.is_empty() {
            continue;
        }
        let _ = writeln!(out);
        let _ = writeln!(out, "## {}xx: {}", group.prefix, group.title);
        for r in members {
            let m = &r.meta;
            let _ = writeln!(out);
            let _ = writeln!(out, "### {} {}", m.id, m.slug);
            let _ = writeln!(out);
            let _ = writeln!(out, "**{}** · severity: {}", m.title, m.severity.as_str());
            if !m.superseded_by.is_empty() {
                let _ = writeln!(out);
                let _ = writeln!(
                    out,
                    "Not reported when {} fires.",
                    m.superseded_by.join(" or ")
                );
            }
            let _ = writeln!(out);
            out.push_str(demoted_docs(m.docs, 3).trim_end());
            let _ = writeln!(out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{Facts, ObjectRef, Pod};
    use crate::rules::{Diagnosis, Remediation, RuleMeta, Severity};

    static META: RuleMeta = RuleMeta {
        id: "KW999",
        slug: "test-symptom",
        title: "A test problem",
        severity: Severity::Warning,
        docs: "## What it means\nA.\n## Why it happens\nB.\n## How to fix\nC.\n",
        signals: &[],
        superseded_by: &["KW998"],
    };

    #[test]
    fn report_shape() {
        let mut facts = Facts::default();
        for name in ["web-0", "web-1"] {
            let mut pod = Pod::default();
            pod.meta.name = name.into();
            pod.meta.namespace = Some("shop".into());
            pod.phase = Some("Pending".into());
            facts.pods.push(pod);
        }
        let d = |name: &str| {
            Diagnosis::new(&META, format!("Pod shop/{name} waits | here."))
                .with_object(Some(&ObjectRef::new("Pod", Some("shop"), name)))
                .with_evidence([Evidence::new("log", 2, "has ``` fences")])
                .with_remediation([Remediation::command("Run:", "kubectl get pods")])
        };
        let md = report(&Report::build(&facts, vec![d("web-0"), d("web-1")]));
        for f in [
            "# karpenter-why: 2 Pods in shop: web-0, web-1\n\n0 errors, 2 warnings, 0 info\n",
            "## warning KW999: A test problem\n\n**2 pods:** `web-0`, `web-1`\n\nPod shop/web-0 waits | here.\n",
            // Both pods cite the same line: shown once, not as a repeat.
            "**Evidence**\n\n`log:2`\n\n````text\nhas ``` fences\n````\n",
            "**How to fix**\n\n1. Run:\n   ```sh\n   kubectl get pods\n   ```\n",
            "\n\ndocs: `kubectl karpenter-why explain KW999`\n",
            "## Checklist\n\n| # | Step | Status | Signal |\n|---|------|--------|--------|\n| 1 | Pod events | not collected | no events in the input |\n",
            "## Missing facts: collect these and run again\n\n- Events of pod shop/web-0\n  ```sh\n  kubectl describe pod web-0 -n shop\n  ```\n",
        ] {
            assert!(md.contains(f), "missing {f:?} in\n{md}");
        }
        assert_eq!(md.matches("has ``` fences").count(), 1);
    }

    #[test]
    fn catalogue_document() {
        let rule = Rule {
            meta: RuleMeta {
                id: "KW299",
                ..META
            },
            check: |_| Vec::new(),
        };
        let outside = Rule {
            meta: RuleMeta { ..META },
            check: |_| Vec::new(),
        };
        let md = rules(&[&rule, &outside]);
        assert!(md.contains(
            "| [KW299](#kw299-test-symptom) | `test-symptom` | warning | A test problem |"
        ));
        assert!(md.contains("\n## KW2xx: Provisioning (the pod stays Pending)\n\n### KW299 test-symptom\n\n**A test problem** · severity: warning\n\nNot reported when KW998 fires.\n\n#### What it means\nA.\n#### Why it happens\n"));
        // KW999 is in no group's range: listed in the table only.
        assert!(md.contains("| [KW999]"));
        assert!(!md.contains("### KW999"));
        assert!(explain(&rule).starts_with(
            "# KW299 test-symptom\n\n**A test problem** · severity: warning\n\n## What it means\n"
        ));
    }

    #[test]
    fn placeholders_survive_outside_code() {
        assert_eq!(
            prose("Edit <nodepool> with `kubectl edit nodepool <nodepool>`\nnow"),
            "Edit &lt;nodepool> with `kubectl edit nodepool <nodepool>` now"
        );
        assert_eq!(cell("a | b"), "a \\| b");
    }

    #[test]
    fn fences_outgrow_content() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }
}
