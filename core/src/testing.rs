//! Test helpers shared by rule tests.

use crate::rules::{RuleMeta, Severity};
use crate::{analyze_text, Diagnosis, Options, Report};

/// A rule's metadata for renderer and report tests, outside every group's range.
pub static SAMPLE_META: RuleMeta = RuleMeta {
    id: "KW999",
    slug: "test-symptom",
    title: "A test problem",
    severity: Severity::Error,
    docs: "## What it means\nA.\n## Why it happens\nB.\n## How to fix\nC.\n",
    signals: &[],
    superseded_by: &[],
};

/// Analyses `text` (one document labelled `fixture`) with only rule `id` enabled.
pub fn check_only(id: &str, text: &str) -> Report {
    analyze_text(
        "fixture",
        text,
        &Options {
            now: None,
            only: Some(vec![id.to_string()]),
        },
    )
}

/// The IDs a report carries, in order.
pub fn ids(report: &Report) -> Vec<&'static str> {
    report.diagnoses.iter().map(|d| d.id).collect()
}

/// Every remediation step of `diagnosis` (text, command, YAML), one step per line, for asserting
/// what a user is told to run without caring which step says it.
pub fn remediation_text(diagnosis: &Diagnosis) -> String {
    diagnosis
        .remediation
        .iter()
        .map(|r| {
            format!(
                "{} {} {}\n",
                r.text,
                r.command.as_deref().unwrap_or(""),
                r.yaml.as_deref().unwrap_or("")
            )
        })
        .collect()
}

/// A status condition as objects carry it.
pub fn condition(
    condition_type: &str,
    status: &str,
    reason: &str,
    message: &str,
) -> crate::facts::Condition {
    crate::facts::Condition {
        condition_type: condition_type.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        evidence: None,
    }
}

/// `kubectl describe node` of a Karpenter node of NodePool `general` with `capacity_type` and
/// one event row (`Normal  Reason  Age  From  Message`).
pub fn karpenter_node_describe(capacity_type: &str, event: &str) -> String {
    format!(
        "Name:               ip-10-0-12-34.eu-west-1.compute.internal
Roles:              <none>
Labels:             karpenter.sh/nodepool=general
                    karpenter.sh/capacity-type={capacity_type}
Taints:             <none>
Unschedulable:      false
Events:
  Type    Reason             Age                  From       Message
  ----    ------             ----                 ----       -------
  {event}
"
    )
}
