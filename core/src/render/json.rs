//! JSON: the report in the schema of DESIGN.md (`schemaVersion` 1), and the rule catalogue
//! for `rules -o json`, `explain -o json` and the web page's rule browser.

use serde::Serialize;

use crate::report::Report;
use crate::rules::{group_of, Rule, Severity};

/// The report, pretty-printed.
pub fn report(report: &Report) -> String {
    report.to_json()
}

/// One rule as the catalogue's consumers see it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleView {
    pub id: &'static str,
    pub slug: &'static str,
    pub title: &'static str,
    pub severity: Severity,
    /// The catalogue range's title.
    pub group: &'static str,
    /// Markdown with the sections What it means / Why it happens / How to fix.
    pub docs: &'static str,
    pub signals: &'static [&'static str],
    pub superseded_by: &'static [&'static str],
    pub explain: String,
}

impl From<&Rule> for RuleView {
    fn from(rule: &Rule) -> Self {
        let m = &rule.meta;
        RuleView {
            id: m.id,
            slug: m.slug,
            title: m.title,
            severity: m.severity,
            group: group_of(m.id).map(|g| g.title).unwrap_or(""),
            docs: m.docs,
            signals: m.signals,
            superseded_by: m.superseded_by,
            explain: format!("kubectl karpenter-why explain {}", m.id),
        }
    }
}

/// Every rule, as a JSON array.
pub fn rules(rules: &[&Rule]) -> String {
    let views: Vec<RuleView> = rules.iter().map(|r| RuleView::from(*r)).collect();
    serde_json::to_string_pretty(&views).expect("rules serialise")
}

/// One rule, as a JSON object.
pub fn explain(rule: &Rule) -> String {
    serde_json::to_string_pretty(&RuleView::from(rule)).expect("rule serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogue_fields() {
        let all = crate::rules::all();
        let v: serde_json::Value = serde_json::from_str(&rules(&all)).unwrap();
        let list = v.as_array().unwrap();
        assert_eq!(list.len(), all.len());
        let first = &list[0];
        for key in [
            "id",
            "slug",
            "title",
            "severity",
            "group",
            "docs",
            "signals",
            "supersededBy",
            "explain",
        ] {
            assert!(first.get(key).is_some(), "{key}");
        }
        let one: serde_json::Value = serde_json::from_str(&explain(all[0])).unwrap();
        assert_eq!(one["id"], all[0].meta.id);
        assert!(!one["group"].as_str().unwrap().is_empty());
    }
}
