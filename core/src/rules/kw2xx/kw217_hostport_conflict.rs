//! KW217 hostport-conflict.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::{
    messages_of, record_of, scheduling_errors_with, Cause, PodIndex,
};
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
HostPort configuration ...` (v1.0 to v1.4, inside `incompatible with nodepool "<np>", ...`),
`checking host port usage, pod hostport conflicts with existing hostport configuration
(existing-hostport-ip=..., pod-hostport-port=<port>, ...)` (v1.5+).

## Why it happens
Only one pod per node can bind a given IP/port/protocol. A DaemonSet that already binds the port
on every node (a node exporter, an agent) makes the port unusable on any new node too; a
Deployment with a `hostPort` and more replicas than nodes, or two workloads that pick the same
port, leave pods Pending.
Not this rule: `invariant violated registering host port usage, ... please file an issue`, a
Karpenter-internal bookkeeping message that does not block the user's pod.

## How to fix
Drop the `hostPort` (use a Service, or `hostNetwork` only where really needed), pick another
port if a DaemonSet already holds this one, or spread the pods with a required pod
anti-affinity on `kubernetes.io/hostname` so that each lands on its own node and Karpenter
launches one per replica.
"#,
};

const SIGNALS: &[&str] = &[
    "conflicts with existing hostport configuration",
    "checking host port usage",
];

struct Conflict<'a> {
    pod: Option<ObjectRef>,
    nodepools: Vec<String>,
    /// The v1alpha5 grammar (`incompatible with provisioner "<p>"`, Karpenter before v0.32).
    provisioner: bool,
    port: Option<String>,
    messages: Vec<&'a Message>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let index = PodIndex::of(facts);
    let errors = scheduling_errors_with(facts, &index);
    let mut conflicts: Vec<Conflict> = Vec::new();
    fn add<'a>(
        conflicts: &mut Vec<Conflict<'a>>,
        pod: Option<ObjectRef>,
        np: Option<String>,
        text: &str,
        m: &'a Message,
    ) {
        let i = match conflicts.iter().position(|c| c.pod == pod) {
            Some(i) => i,
            None => {
                conflicts.push(Conflict {
                    pod,
                    nodepools: Vec::new(),
                    provisioner: false,
                    port: None,
                    messages: Vec::new(),
                });
                conflicts.len() - 1
            }
        };
        let c = &mut conflicts[i];
        if let Some(np) = np {
            if !c.nodepools.contains(&np) {
                c.nodepools.push(np);
            }
        }
        if c.port.is_none() {
            c.port = port_in(text);
        }
        if !c.messages.iter().any(|x| std::ptr::eq(*x, m)) {
            c.messages.push(m);
        }
    }
    for error in &errors {
        for clause in error.clauses.iter().filter(|c| c.cause == Cause::HostPort) {
            if is_bookkeeping(&clause.reason) {
                continue;
            }
            add(
                &mut conflicts,
                error.pod.clone(),
                clause.nodepool.clone(),
                &clause.reason,
                error.message,
            );
            if clause.provisioner {
                if let Some(c) = conflicts.iter_mut().find(|c| c.pod == error.pod) {
                    c.provisioner = true;
                }
            }
        }
    }
    let read = messages_of(&errors);
    for m in facts.messages_containing_any(SIGNALS) {
        if is_bookkeeping(&m.text)
            || read.contains(&(m as *const Message))
            || index.about_placed_pod(m)
        {
            continue;
        }
        let pod = m
            .object
            .clone()
            .filter(|o| o.kind.eq_ignore_ascii_case("pod"));
        add(&mut conflicts, pod, m.nodepool.clone(), &m.text, m);
    }
    // v1.5+ JSON logs carry the port as a structured field of the record
    // (`"pod-hostport-port":9100`), not in the error text; else the pod's own hostPort, when
    // it has exactly one.
    for c in conflicts.iter_mut().filter(|c| c.port.is_none()) {
        c.port = c
            .messages
            .iter()
            .find_map(|m| {
                let value = record_of(facts, m)?
                    .fields
                    .get("pod-hostport-port")?
                    .clone();
                match value {
                    serde_json::Value::Number(n) => Some(n.to_string()),
                    serde_json::Value::String(s) if s.chars().all(|c| c.is_ascii_digit()) => {
                        Some(s)
                    }
                    _ => None,
                }
            })
            .or_else(|| {
                let pod = c.pod.as_ref()?;
                let fact_pod = facts.pods.iter().find(|fp| {
                    fp.meta.name == pod.name
                        && (pod.namespace.is_none() || fp.meta.namespace == pod.namespace)
                })?;
                match fact_pod.host_ports.as_slice() {
                    [one] => Some(one.to_string()),
                    _ => None,
                }
            });
    }
    conflicts.into_iter().map(|c| diagnose(facts, c)).collect()
}

fn is_bookkeeping(text: &str) -> bool {
    contains_ignore_ascii_case(text, "invariant violated")
}

/// The port of `Port=<p>` (v1.0 to v1.4) or `pod-hostport-port=<p>` (v1.5+).
fn port_in(text: &str) -> Option<String> {
    for key in ["pod-hostport-port=", "Port="] {
        if let Some(i) = find_ignore_ascii_case(text, key) {
            let value: String = text[i + key.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            if !value.is_empty() {
                return Some(value);
            }
        }
    }
    None
}

fn diagnose(facts: &Facts, c: Conflict<'_>) -> Diagnosis {
    let pod_name = c
        .pod
        .as_ref()
        .map(|o| format!("Pod {}", o.qualified_name()))
        .unwrap_or_else(|| "The pod".to_string());
    let port_text = c
        .port
        .as_deref()
        .map_or_else(|| "a hostPort".to_string(), |p| format!("hostPort {p}"));
    let mut summary = format!(
        "{pod_name} needs {port_text}, which another pod already holds on the nodes Karpenter could launch"
    );
    if !c.nodepools.is_empty() {
        let pools: Vec<String> = c.nodepools.iter().map(|n| format!("\"{n}\"")).collect();
        let kind = if c.provisioner {
            "Provisioner"
        } else {
            "NodePool"
        };
        summary.push_str(&format!(" ({kind} {})", pools.join(", ")));
    }
    summary.push_str(": a DaemonSet binding the same port on every node is the usual holder.");
    let fact_pod = c.pod.as_ref().and_then(|p| {
        facts
            .pods
            .iter()
            .find(|fp| fp.meta.name == p.name && fp.meta.namespace == p.namespace)
    });
    let app_label = fact_pod
        .and_then(|p| {
            ["app.kubernetes.io/name", "app", "k8s-app"]
                .iter()
                .find_map(|k| p.meta.labels.get(*k).map(|v| format!("{k}: {v}")))
        })
        .unwrap_or_else(|| "app: <your-app-label>".to_string());
    let port = c.port.as_deref().unwrap_or("<port>");
    Diagnosis::new(&META, summary)
        .with_object(c.pod.as_ref())
        .with_node_pool(c.nodepools.first().map(String::as_str))
        .with_messages(c.messages.iter().copied())
        .with_remediation([
            Remediation::command(
                format!("Find what already binds port {port} on the nodes (DaemonSets first):"),
                format!("kubectl get pods -A -o jsonpath='{{range .items[*]}}{{.metadata.namespace}}/{{.metadata.name}} {{.spec.containers[*].ports[?(@.hostPort=={port})].hostPort}}{{\"\\n\"}}{{end}}' | awk 'NF>1'"),
            ),
            Remediation::text(
                "Remove the hostPort from the pod spec and expose the port through a Service, or pick a port no DaemonSet holds.",
            ),
            Remediation::yaml(
                "Or keep one replica per node, so Karpenter launches a node for each:",
                format!(
                    "affinity:\n  podAntiAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector:\n          matchLabels:\n            {app_label}\n        topologyKey: kubernetes.io/hostname\n"
                ),
            ),
        ])
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    /// v1.5+ JSON: the port is a structured field of the log record, not in the error text.
    #[test]
    fn v1_5_json_port_from_the_record_fields() {
        let report = check_only(
            "KW217",
            r#"{"level":"ERROR","message":"could not schedule pod","controller":"provisioner","Pod":{"name":"haproxy-1","namespace":"lb"},"error":"checking host port usage, pod hostport conflicts with existing hostport configuration","pod-hostport-ip":"0.0.0.0","pod-hostport-port":8443,"pod-hostport-protocol":"TCP","existing-hostport-port":8443}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .starts_with("Pod lb/haproxy-1 needs hostPort 8443"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0].text.contains("binds port 8443"));
    }

    #[test]
    fn v1_4_form_names_pools_and_port() {
        let report = check_only(
            "KW217",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"otel-0","namespace":"obs"},"error":"incompatible with nodepool \"general\", daemonset overhead={\"cpu\":\"560m\"}, checking host port usage, IP=0.0.0.0 Port=4317 Proto=TCP conflicts with existing HostPort configuration IP=0.0.0.0 Port=4317 Proto=TCP; incompatible with nodepool \"spot\", daemonset overhead={\"cpu\":\"460m\"}, checking host port usage, IP=0.0.0.0 Port=4317 Proto=TCP conflicts with existing HostPort configuration IP=0.0.0.0 Port=4317 Proto=TCP"}"#,
        );
        assert_eq!(ids(&report), ["KW217"]);
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("hostPort 4317"), "{}", d.summary);
        assert!(d.summary.contains("\"general\", \"spot\""), "{}", d.summary);
    }

    #[test]
    fn v1_5_form() {
        let report = check_only(
            "KW217",
            "Warning  FailedScheduling  2m4s (x5 over 12m)  karpenter  Failed to schedule pod, checking host port usage, pod hostport conflicts with existing hostport configuration (existing-hostport-ip=0.0.0.0, existing-hostport-port=9100, existing-hostport-protocol=TCP, pod-hostport-ip=0.0.0.0, pod-hostport-port=9100, pod-hostport-protocol=TCP)",
        );
        assert_eq!(ids(&report), ["KW217"]);
        assert!(report.diagnoses[0].summary.contains("hostPort 9100"));
    }

    #[test]
    fn invariant_message_is_not_a_conflict() {
        for text in [
            "invariant violated registering host port usage, pod hostport conflicts with existing hostport configuration, please file an issue",
            "0/5 nodes are available: 5 node(s) didn't have free ports for the requested pod ports.",
        ] {
            assert!(ids(&check_only("KW217", text)).is_empty(), "{text}");
        }
    }
}
