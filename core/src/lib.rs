//! karpenter-why core: pure text-in, report-out diagnosis engine (no I/O, builds for wasm32).

/// Raw text plus where it came from; evidence points back into it by line.
#[derive(Debug, Clone)]
pub struct Document {
    pub label: String,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evidence {
    pub source: String,
    pub line: usize,
    pub text: String,
}

#[derive(Debug, Clone)]
pub struct Diagnosis {
    pub id: &'static str,
    pub slug: &'static str,
    pub title: &'static str,
    pub evidence: Vec<Evidence>,
}

struct Signal {
    id: &'static str,
    slug: &'static str,
    title: &'static str,
    needles: &'static [&'static str],
}

// Exact catalogue signal strings; matched case-insensitively on each line.
const SIGNALS: &[Signal] = &[
    Signal {
        id: "KW202",
        slug: "no-offering-in-zone",
        title: "No instance type has an offering in the required zone or capacity type",
        needles: &[
            "had a required offering",
            "no instance type has the required offering",
        ],
    },
    Signal {
        id: "KW204",
        slug: "taint-not-tolerated",
        title: "The pod does not tolerate a NodePool taint",
        needles: &["did not tolerate"],
    },
    Signal {
        id: "KW217",
        slug: "hostport-conflict",
        title: "The pod's hostPort conflicts with another pod's",
        needles: &["conflicts with existing hostport configuration"],
    },
];

pub fn analyze(documents: &[Document]) -> Vec<Diagnosis> {
    let mut out: Vec<Diagnosis> = Vec::new();
    for doc in documents {
        for (index, line) in doc.text.lines().enumerate() {
            let lower = line.to_lowercase();
            for signal in SIGNALS {
                if signal.needles.iter().any(|n| lower.contains(n)) {
                    let evidence = Evidence {
                        source: doc.label.clone(),
                        line: index + 1,
                        text: line.trim().to_string(),
                    };
                    match out.iter_mut().find(|d| d.id == signal.id) {
                        Some(d) => d.evidence.push(evidence),
                        None => out.push(Diagnosis {
                            id: signal.id,
                            slug: signal.slug,
                            title: signal.title,
                            evidence: vec![evidence],
                        }),
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offering_signal_found_with_line() {
        let doc = Document {
            label: "karpenter.log".into(),
            text: "noise\nFailed to schedule pod, no instance type met the scheduling requirements or had a required offering\n".into(),
        };
        let report = analyze(&[doc]);
        assert_eq!(report.len(), 1);
        assert_eq!(report[0].id, "KW202");
        assert_eq!(report[0].evidence[0].line, 2);
    }

    #[test]
    fn noise_gives_nothing() {
        let doc = Document {
            label: "x".into(),
            text: "all good\n".into(),
        };
        assert!(analyze(&[doc]).is_empty());
    }
}
