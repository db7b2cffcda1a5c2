//! KW217 hostport-conflict.

use crate::facts::Facts;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW217",
    slug: "hostport-conflict",
    title: "The pod's hostPort is already taken on every candidate node",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The pod asks for a `hostPort` (a port bound on the node's own IP) that another pod already
holds, so it cannot be placed on that node, and Karpenter's simulation says the same of the
nodes it could launch.

Signals: `checking host port usage, IP=<ip> Port=<port> Proto=<proto> conflicts with existing
HostPort configuration ...`, `pod hostport conflicts with existing hostport configuration`.

## Why it happens
Only one pod per node can bind a given IP/port/protocol. A Deployment with a `hostPort` and
more replicas than nodes, or two workloads that pick the same port, leave pods Pending.
Not this rule: `invariant violated registering host port usage, ... please file an issue`, a
Karpenter-internal bookkeeping message that does not block the user's pod.

## How to fix
Drop the `hostPort` (use a Service, or `hostNetwork` only where really needed), or spread the
pods with a required pod anti-affinity on `kubernetes.io/hostname` so that each lands on its own
node and Karpenter launches one per replica.
"#,
};

const SIGNALS: &[&str] = &["conflicts with existing hostport configuration"];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<_> = facts
        .messages_containing_any(SIGNALS)
        .filter(|m| !m.text.to_ascii_lowercase().contains("invariant violated"))
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    let port = hits.iter().find_map(|m| field_after(&m.text, "Port="));
    let object = hits.iter().find_map(|m| m.object.as_ref());
    let pod_name = object
        .map(|o| o.qualified_name())
        .unwrap_or_else(|| "the pod".to_string());
    let port_text = port.as_deref().map(|p| format!(" {p}")).unwrap_or_default();
    let summary = format!(
        "{pod_name} needs hostPort{port_text}, which another pod already holds on the candidate nodes."
    );
    let app_label = "app: <your-app-label>";
    vec![Diagnosis::new(&META, summary)
        .with_object(object)
        .with_messages(hits.iter().copied())
        .with_remediation([
            Remediation::text(
                "Remove the hostPort from the pod spec and expose the port through a Service instead.",
            ),
            Remediation::yaml(
                "Or keep one replica per node, so Karpenter launches a node for each:",
                format!(
                    "affinity:\n  podAntiAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector:\n          matchLabels:\n            {app_label}\n        topologyKey: kubernetes.io/hostname\n"
                ),
            ),
        ])]
}

fn field_after(text: &str, key: &str) -> Option<String> {
    let start = text.find(key)? + key.len();
    let value: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric())
        .collect();
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn karpenter_log_form() {
        let report = check_only(
            "KW217",
            r#"{"level":"ERROR","message":"could not schedule pod","error":"checking host port usage, IP=0.0.0.0 Port=8080 Proto=TCP conflicts with existing HostPort configuration 0.0.0.0:8080/TCP"}"#,
        );
        assert_eq!(ids(&report), ["KW217"]);
        assert!(report.diagnoses[0].summary.contains("8080"));
    }

    #[test]
    fn invariant_message_is_not_a_conflict() {
        let report = check_only(
            "KW217",
            "invariant violated registering host port usage, pod hostport conflicts with existing hostport configuration, please file an issue",
        );
        assert!(ids(&report).is_empty());
    }
}
