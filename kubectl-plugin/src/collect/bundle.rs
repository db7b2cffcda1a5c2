//! `collect POD -o FILE`: every collected document in one text file, each under a header line
//! `==> LABEL <==` (the `tail` convention, which ingest splits on so that labels and line numbers
//! survive), then what could not be collected. `analyze` and the web page read it back.

use std::fmt::Write as _;

use karpenter_why_core::Document;

use super::MissingFact;

/// The header line that opens each document.
pub fn header(label: &str) -> String {
    format!("==> {label} <==")
}

/// The label of the closing section listing what could not be collected.
pub const MISSING_LABEL: &str = "karpenter-why: not collected";

/// The file's text. `mask` (the `--redact` masks) is applied to every document and label.
pub fn render(
    documents: &[Document],
    missing: &[MissingFact],
    mask: &mut dyn FnMut(&str) -> String,
) -> String {
    let mut out = String::new();
    for document in documents {
        let _ = writeln!(out, "{}", header(&mask(&document.label)));
        let text = mask(&document.text);
        out.push_str(&text);
        if !text.ends_with('\n') {
            out.push('\n');
        }
        out.push('\n');
    }
    if !missing.is_empty() {
        let _ = writeln!(out, "{}", header(MISSING_LABEL));
        for fact in missing {
            let _ = writeln!(out, "{}: {}", mask(&fact.what), mask(&fact.reason));
            let _ = writeln!(out, "  collect it with: {}", mask(&fact.command));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_follow_their_headers() {
        let documents = vec![
            Document::new(
                "GET /api/v1/namespaces/shop/pods/web-0",
                "{\n  \"kind\": \"Pod\"\n}",
            ),
            Document::new(
                "karpenter/karpenter-1/controller.log",
                "line one\nline two\n",
            ),
        ];
        let missing = vec![MissingFact {
            what: "the NodeClaims".into(),
            reason: "forbidden (403)".into(),
            command: "kubectl get nodeclaims.karpenter.sh -o yaml".into(),
        }];
        let text = render(&documents, &missing, &mut |s| s.to_string());
        assert_eq!(
            text,
            "==> GET /api/v1/namespaces/shop/pods/web-0 <==\n{\n  \"kind\": \"Pod\"\n}\n\n\
             ==> karpenter/karpenter-1/controller.log <==\nline one\nline two\n\n\
             ==> karpenter-why: not collected <==\nthe NodeClaims: forbidden (403)\n  collect it with: kubectl get nodeclaims.karpenter.sh -o yaml\n"
        );
    }

    #[test]
    fn the_mask_applies_to_labels_text_and_missing() {
        let documents = vec![Document::new(
            "GET /api/v1/nodes/ip-10-0-1-2",
            "ip-10-0-1-2 is here",
        )];
        let missing = vec![MissingFact {
            what: "node ip-10-0-1-2".into(),
            reason: "r".into(),
            command: "kubectl get nodes ip-10-0-1-2".into(),
        }];
        let text = render(&documents, &missing, &mut |s| {
            s.replace("ip-10-0-1-2", "node-1")
        });
        assert!(!text.contains("ip-10-0-1-2"), "{text}");
        assert_eq!(text.matches("node-1").count(), 4);
    }
}
