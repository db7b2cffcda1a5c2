//! Terminal text: each diagnosis like a compiler error (header, summary, the evidence quoted
//! with `source:line` in a gutter, notes, `help:` steps with commands and YAML indented so
//! they paste as they are), then the checklist, the missing facts and the input errors.
//! Colour only when the caller asks for it: core never looks at the terminal or the
//! environment.

use std::fmt::Write;

use crate::render::{
    counts_line, location, printable, repeat_note, sections, subject_line, Section,
    CHECKLIST_TITLE, INPUT_ERRORS_TITLE, MAX_EVIDENCE, MISSING_TITLE, NO_DIAGNOSIS, RULES_TITLE,
};
use crate::report::{Report, StepStatus};
use crate::rules::{Rule, Severity};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextOptions {
    /// ANSI colours.
    pub color: bool,
    /// Column at which prose wraps (evidence lines are never wrapped: they are quotes).
    pub width: usize,
}

impl Default for TextOptions {
    fn default() -> Self {
        TextOptions {
            color: false,
            width: 100,
        }
    }
}

/// ANSI SGR parameters.
mod sgr {
    pub const BOLD: &str = "1";
    pub const ERROR: &str = "1;31";
    pub const WARNING: &str = "1;33";
    pub const INFO: &str = "1;36";
    pub const GUTTER: &str = "1;34";
    pub const HELP: &str = "1;32";
    pub const OK: &str = "32";
    pub const PROBLEM: &str = "31";
    pub const NOT_COLLECTED: &str = "33";
    pub const DIM: &str = "2";
}

struct Paint {
    on: bool,
}

impl Paint {
    fn paint(&self, style: &str, s: &str) -> String {
        if self.on && !s.is_empty() {
            format!("\x1b[{style}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }

    fn severity(&self, severity: Severity) -> String {
        self.paint(severity_style(severity), severity.as_str())
    }
}

fn severity_style(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => sgr::ERROR,
        Severity::Warning => sgr::WARNING,
        Severity::Info => sgr::INFO,
    }
}

/// Greedy word wrap; every line starts with `indent`. Words longer than the line stay whole.
fn wrap(text: &str, indent: &str, width: usize, out: &mut String) {
    for paragraph in text.lines() {
        let mut line = String::new();
        for word in paragraph.split_whitespace() {
            if !line.is_empty() && indent.len() + line.len() + 1 + word.len() > width {
                let _ = writeln!(out, "{indent}{line}");
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        let _ = writeln!(out, "{indent}{line}");
    }
}

/// The report as terminal text.
pub fn report(report: &Report, options: &TextOptions) -> String {
    let p = Paint { on: options.color };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {}",
        p.paint(sgr::BOLD, "karpenter-why:"),
        p.paint(sgr::BOLD, &printable(&subject_line(report)))
    );
    let _ = writeln!(out, "{}", counts_line(report));
    let _ = writeln!(out);
    let sections = sections(report);
    if sections.is_empty() {
        let _ = writeln!(out, "{NO_DIAGNOSIS}");
        let _ = writeln!(out);
    }
    for section in &sections {
        diagnosis(section, options, &p, &mut out);
        let _ = writeln!(out);
    }
    checklist(report, &p, &mut out);
    if !report.missing.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", p.paint(sgr::BOLD, MISSING_TITLE));
        for m in &report.missing {
            let _ = writeln!(out, "  {}:", printable(&m.what));
            if let Some(reason) = &m.reason {
                let _ = writeln!(out, "      # {}", printable(reason));
            }
            for line in m.command.lines() {
                let _ = writeln!(out, "      {}", printable(line));
            }
        }
    }
    if !report.input_errors.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", p.paint(sgr::BOLD, INPUT_ERRORS_TITLE));
        for e in &report.input_errors {
            let _ = writeln!(
                out,
                "  {}: {}",
                p.paint(sgr::GUTTER, &printable(&e.location())),
                printable(&e.message)
            );
        }
    }
    out
}

fn diagnosis(section: &Section<'_>, options: &TextOptions, p: &Paint, out: &mut String) {
    let d = section.diagnosis;
    let header = format!("{}[{}]", d.severity.as_str(), d.id);
    let _ = writeln!(
        out,
        "{}: {}",
        p.paint(severity_style(d.severity), &header),
        p.paint(sgr::BOLD, d.title)
    );
    if section.pods.len() > 1 {
        wrap(
            &format!(
                "{} pods: {}",
                section.pods.len(),
                printable(&section.pods.join(", "))
            ),
            "  ",
            options.width,
            out,
        );
    }
    wrap(&printable(&d.summary), "  ", options.width, out);
    if let Some(note) = section.shown_for() {
        wrap(&note, "  ", options.width, out);
    }
    let evidence = section.evidence();
    let shown = &evidence[..evidence.len().min(MAX_EVIDENCE)];
    let gutter = shown
        .iter()
        .map(|e| e.line.to_string().len())
        .max()
        .unwrap_or(1);
    let pad = " ".repeat(gutter);
    let bar = p.paint(sgr::GUTTER, "|");
    for (i, e) in shown.iter().enumerate() {
        let arrow = if i == 0 { "-->" } else { ":::" };
        let _ = writeln!(
            out,
            "{pad}{} {}",
            p.paint(sgr::GUTTER, arrow),
            printable(&location(e))
        );
        let _ = writeln!(out, "{pad} {bar}");
        for (j, line) in e.text.lines().enumerate() {
            let number = if j == 0 {
                format!("{:>gutter$}", e.line)
            } else {
                pad.clone()
            };
            let _ = writeln!(
                out,
                "{} {bar} {}",
                p.paint(sgr::GUTTER, &number),
                printable(line)
            );
        }
        if let Some(note) = repeat_note(e) {
            let _ = writeln!(out, "{pad} {} {note}", p.paint(sgr::GUTTER, "="));
        }
    }
    if !shown.is_empty() {
        let _ = writeln!(out, "{pad} {bar}");
    }
    if evidence.len() > shown.len() {
        let _ = writeln!(
            out,
            "{pad} {} and {} more evidence lines (all of them in `-o json`)",
            p.paint(sgr::GUTTER, "="),
            evidence.len() - shown.len()
        );
    }
    for (key, value) in section.notes() {
        let _ = writeln!(
            out,
            "{pad} {} {key}: {}",
            p.paint(sgr::GUTTER, "="),
            printable(&value)
        );
    }
    for step in &d.remediation {
        let label = p.paint(sgr::HELP, "help:");
        let mut wrapped = String::new();
        wrap(
            &printable(&step.text),
            "      ",
            options.width,
            &mut wrapped,
        );
        let _ = write!(out, "{label} {}", wrapped.trim_start());
        for block in [&step.command, &step.yaml].into_iter().flatten() {
            for line in block.lines() {
                let _ = writeln!(out, "        {}", printable(line));
            }
        }
    }
    let _ = writeln!(out, "{pad} {} docs: {}", p.paint(sgr::GUTTER, "="), d.docs);
}

fn checklist(report: &Report, p: &Paint, out: &mut String) {
    let _ = writeln!(out, "{}", p.paint(sgr::BOLD, CHECKLIST_TITLE));
    let name_width = report
        .checklist
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0);
    let status_width = StepStatus::NotCollected.as_str().len();
    for s in &report.checklist {
        let style = match s.status {
            StepStatus::Ok => sgr::OK,
            StepStatus::Problem => sgr::PROBLEM,
            StepStatus::NotCollected => sgr::NOT_COLLECTED,
        };
        let status = format!("{:<status_width$}", s.status.as_str());
        let signal = printable(&s.signal);
        let signal = if s.status == StepStatus::NotCollected {
            p.paint(sgr::DIM, &signal)
        } else {
            signal
        };
        let _ = writeln!(
            out,
            "  {}. {:<name_width$}  {}  {signal}",
            s.step,
            s.name,
            p.paint(style, &status)
        );
    }
}

/// `kubectl karpenter-why rules`: one line per rule.
pub fn rules(rules: &[&Rule], options: &TextOptions) -> String {
    let p = Paint { on: options.color };
    let slug_width = rules.iter().map(|r| r.meta.slug.len()).max().unwrap_or(0);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({} rules; `kubectl karpenter-why explain ID` for one)",
        p.paint(sgr::BOLD, RULES_TITLE),
        rules.len()
    );
    for r in rules {
        let m = &r.meta;
        let severity = format!("{:<7}", m.severity.as_str());
        let _ = writeln!(
            out,
            "{}  {}  {:<slug_width$}  {}",
            p.paint(sgr::BOLD, m.id),
            p.paint(severity_style(m.severity), &severity),
            m.slug,
            m.title
        );
    }
    out
}

/// `kubectl karpenter-why explain ID`: the rule's header and its documentation.
pub fn explain(rule: &Rule, options: &TextOptions) -> String {
    let p = Paint { on: options.color };
    let m = &rule.meta;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {} ({})",
        p.paint(sgr::BOLD, m.id),
        p.paint(sgr::BOLD, m.slug),
        p.severity(m.severity)
    );
    let _ = writeln!(out, "{}", m.title);
    if !m.superseded_by.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            p.paint(
                sgr::DIM,
                &format!("Yields to: {}", m.superseded_by.join(", "))
            )
        );
    }
    for line in m.docs.lines() {
        match line.strip_prefix("## ") {
            Some(heading) => {
                let _ = writeln!(out);
                let _ = writeln!(out, "{}", p.paint(sgr::BOLD, heading));
            }
            None => {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{Facts, ObjectRef, Pod};
    use crate::rules::{Diagnosis, Remediation, RuleMeta};

    use crate::testing::SAMPLE_META as META;

    fn sample() -> Report {
        let mut facts = Facts::default();
        let mut pod = Pod::default();
        pod.meta.name = "web-0".into();
        pod.meta.namespace = Some("shop".into());
        pod.phase = Some("Pending".into());
        facts.pods.push(pod);
        let mut repeated = Evidence::new("karpenter.log", 1042, "could not schedule pod");
        repeated.count = 3;
        repeated.first_seen = Some("10:00:00".into());
        repeated.last_seen = Some("10:20:00".into());
        let d = Diagnosis::new(&META, "Pod shop/web-0 is stuck.")
            .with_object(Some(&ObjectRef::new("Pod", Some("shop"), "web-0")))
            .with_node_pool(Some("default"))
            .with_evidence([
                Evidence::new("describe.txt", 7, "Warning FailedScheduling"),
                repeated,
            ])
            .with_remediation([
                Remediation::command("Look at it:", "kubectl get nodepool default -o yaml"),
                Remediation::yaml("Add a zone:", "spec:\n  zones: [a]\n"),
            ]);
        Report::build(&facts, vec![d])
    }

    #[test]
    fn compiler_style_layout() {
        let text = report(&sample(), &TextOptions::default());
        let expected_fragments = [
            "karpenter-why: Pod shop/web-0\n1 error, 0 warnings, 0 info\n",
            "error[KW999]: A test problem\n  Pod shop/web-0 is stuck.\n",
            "    --> describe.txt:7\n     |\n   7 | Warning FailedScheduling\n",
            "    ::: karpenter.log:1042\n     |\n1042 | could not schedule pod\n     = seen 3 times, first 10:00:00, last 10:20:00\n     |\n",
            "     = nodepool: default\n",
            "help: Look at it:\n        kubectl get nodepool default -o yaml\n",
            "help: Add a zone:\n        spec:\n          zones: [a]\n",
            "     = docs: kubectl karpenter-why explain KW999\n",
            "Checklist\n  1. Pod events          not collected  no events in the input\n",
            "Missing facts: collect these and run again\n  Events of pod shop/web-0:\n      kubectl describe pod web-0 -n shop\n",
        ];
        for f in expected_fragments {
            assert!(text.contains(f), "missing {f:?} in\n{text}");
        }
        assert!(!text.contains('\u{1b}'));
    }

    #[test]
    fn colour_only_when_asked() {
        let coloured = report(
            &sample(),
            &TextOptions {
                color: true,
                ..Default::default()
            },
        );
        assert!(coloured.contains("\u{1b}[1;31merror[KW999]\u{1b}[0m"));
        assert!(coloured.contains("\u{1b}[33mnot collected"));
    }

    #[test]
    fn prose_wraps_but_quotes_do_not() {
        let mut out = String::new();
        wrap(&"word ".repeat(40), "  ", 30, &mut out);
        assert!(out.lines().all(|l| l.len() <= 30), "{out}");
        assert!(out.lines().count() > 5);
        let mut r = sample();
        r.diagnoses[0].evidence[0].text = "x".repeat(300);
        let text = report(&r, &TextOptions::default());
        assert!(text.contains(&"x".repeat(300)));
    }

    #[test]
    fn empty_report_says_so() {
        let text = report(
            &Report::build(&Facts::default(), vec![]),
            &TextOptions::default(),
        );
        assert!(text.starts_with(&format!("karpenter-why: {}\n", crate::render::NO_SUBJECT)));
        assert!(text.contains(NO_DIAGNOSIS));
        // Before v0.32 the objects it could name are Machines and Provisioners.
        let facts = Facts {
            karpenter_version: Some("0.31.1".into()),
            ..Facts::default()
        };
        let text = report(&Report::build(&facts, vec![]), &TextOptions::default());
        assert!(
            text.starts_with(
                "karpenter-why: the input (it names no pod, node, Machine or Provisioner)\n"
            ),
            "{text}"
        );
        // Before v0.28 there was no Machine to name.
        let facts = Facts {
            karpenter_version: Some("0.27.3".into()),
            ..Facts::default()
        };
        let text = report(&Report::build(&facts, vec![]), &TextOptions::default());
        assert!(
            text.starts_with("karpenter-why: the input (it names no pod, node or Provisioner)\n"),
            "{text}"
        );
    }

    #[test]
    fn evidence_beyond_the_cap_is_counted() {
        let mut r = sample();
        r.diagnoses[0].evidence = (1..=12)
            .map(|i| Evidence::new("log", i, format!("line {i}")))
            .collect();
        let text = report(&r, &TextOptions::default());
        assert!(text.contains("line 8\n"));
        assert!(!text.contains("line 9\n"));
        assert!(text.contains("and 4 more evidence lines"));
    }

    #[test]
    fn explain_prints_headings_and_docs() {
        let rule = Rule {
            meta: RuleMeta { ..META },
            check: |_| Vec::new(),
        };
        let text = explain(&rule, &TextOptions::default());
        assert!(text.starts_with("KW999 test-symptom (error)\nA test problem\n"));
        assert!(text.contains("\nWhat it means\nA.\n\nWhy it happens\nB.\n"));
        assert!(!text.contains("## "));
    }
}
