//! What KW308, KW309 and KW311 share: the interruption message kind of a log line, and whether
//! (and how) AWS Node Termination Handler runs beside Karpenter.

use crate::document::Evidence;
use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::record_of;
use crate::rules::kw3xx::common::{claim_ref, json_field_in_text, node_of, push_unique};

/// The interruption `messageKind` of a Karpenter log line (structured field, or the JSON tail of
/// a console line).
pub fn message_kind(facts: &Facts, m: &Message) -> Option<String> {
    record_of(facts, m)
        .and_then(|r| {
            r.fields
                .get("messageKind")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
        .or_else(|| json_field_in_text(&m.text, "messageKind"))
}

/// The interruption `action` of a Karpenter log line.
pub fn action(facts: &Facts, m: &Message) -> Option<String> {
    record_of(facts, m)
        .and_then(|r| {
            r.fields
                .get("action")
                .and_then(|v| v.as_str())
                .map(str::to_string)
        })
        .or_else(|| json_field_in_text(&m.text, "action"))
}

/// A message kind that is a rebalance recommendation (v1 `rebalance_recommendation`, pre-v0.32
/// `RebalanceRecommendationKind`).
pub fn is_rebalance_kind(kind: &str) -> bool {
    kind.to_ascii_lowercase()
        .replace('_', "")
        .contains("rebalancerecommendation")
}

/// What the input shows of AWS Node Termination Handler.
#[derive(Debug, Default)]
pub struct Nth<'a> {
    /// How it is known to run (`helm release aws-node-termination-handler`, `DaemonSet ...`).
    pub seen_as: Vec<String>,
    /// Draining settings turned on (`enableRebalanceDraining: true`, `ENABLE_...=true`).
    pub draining: Vec<String>,
    /// NTH's own events and log lines about draining.
    pub drain_messages: Vec<&'a Message>,
    /// Lines that show it is installed or configured.
    pub config_messages: Vec<&'a Message>,
    /// Its settings (Helm values, env) as ingest modelled them.
    pub config_evidence: Vec<Evidence>,
    /// Nodes NTH cordoned and drained.
    pub drained_nodes: Vec<String>,
    /// Helm release name and namespace, when the input shows them.
    pub release: Option<(String, String)>,
}

const NTH: &str = "aws-node-termination-handler";

/// The NTH settings that make it drain: Helm value, env var, and what each drains on.
const DRAIN_SETTINGS: &[(&str, &str)] = &[
    ("enableRebalanceDraining", "ENABLE_REBALANCE_DRAINING"),
    (
        "enableSpotInterruptionDraining",
        "ENABLE_SPOT_INTERRUPTION_DRAINING",
    ),
    ("enableRebalanceMonitoring", "ENABLE_REBALANCE_MONITORING"),
];

/// NTH's own event texts (`pkg/observability/k8s-events.go`, interruption monitors).
/// Its log lines (`INF Requesting instance drain ... kind=REBALANCE_RECOMMENDATION`) too.
const NTH_DRAIN_TEXTS: &[&str] = &[
    "Rebalance recommendation received. Instance will be cordoned",
    "Node successfully cordoned and drained",
    "Spot ITN received. Instance will be interrupted",
    "Requesting instance drain",
];

/// The node an NTH log line names: `node-name=<n>` (`Requesting instance drain`) or
/// `node_name=<n>` (`Node successfully cordoned and drained`).
pub fn nth_log_node(text: &str) -> Option<String> {
    ["node-name=", "node_name="].iter().find_map(|k| {
        let at = find_ignore_ascii_case(text, k)? + k.len();
        let name: String = text[at..]
            .trim_start_matches('"')
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '"')
            .collect();
        (!name.is_empty()).then_some(name)
    })
}

/// A field of an NTH log line written as JSON (`jsonLogging: true`): there the node
/// (`node_name`, `node-name`), the drain `reason` and the event `kind` are fields, not part of
/// the message text.
pub fn nth_json_field(facts: &Facts, m: &Message, keys: &[&str]) -> Option<String> {
    let record = record_of(facts, m)?;
    keys.iter().find_map(|k| {
        record
            .fields
            .get(*k)
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    })
}

/// An NTH drain line caused by a rebalance recommendation: the text says so (console format,
/// events), or the JSON line's `reason` / `kind` field does.
pub fn is_nth_rebalance_drain(facts: &Facts, m: &Message) -> bool {
    if contains_ignore_ascii_case(&m.text, "Rebalance recommendation received") {
        return true;
    }
    // Only NTH's own drain lines: another tool's `kind` field says nothing about NTH.
    let nth_drain_line = NTH_DRAIN_TEXTS
        .iter()
        .any(|s| contains_ignore_ascii_case(&m.text, s));
    nth_drain_line
        && (nth_json_field(facts, m, &["reason"])
            .is_some_and(|r| contains_ignore_ascii_case(&r, "Rebalance recommendation received"))
            || nth_json_field(facts, m, &["kind"]).is_some_and(|k| is_rebalance_kind(&k)))
}

pub fn nth(facts: &Facts) -> Option<Nth<'_>> {
    let mut out = Nth::default();
    for w in &facts.workloads {
        if w.meta.name.contains(NTH) {
            push_unique(&mut out.seen_as, format!("{} {}", w.kind, w.meta.name));
            if let Some(ns) = &w.meta.namespace {
                out.release.get_or_insert((w.meta.name.clone(), ns.clone()));
            }
            for c in &w.containers {
                for (_, env) in DRAIN_SETTINGS {
                    if c.env
                        .get(*env)
                        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
                    {
                        push_unique(&mut out.draining, format!("{env}=true"));
                    }
                }
            }
        }
    }
    for (value, env) in DRAIN_SETTINGS {
        for s in facts.settings_named(&[value, env]) {
            let owned_by_nth = s.owner.as_ref().is_none_or(|o| o.name.contains(NTH));
            if owned_by_nth && s.value.eq_ignore_ascii_case("true") {
                push_unique(&mut out.draining, format!("{}=true", s.key));
                out.config_evidence.push(s.evidence.clone());
            }
        }
    }
    for s in &facts.settings {
        if let Some(o) = s.owner.as_ref().filter(|o| o.name.contains(NTH)) {
            let seen = match o.kind.as_str() {
                "HelmRelease" => format!("Helm release {}", o.name),
                kind => format!("{kind} {}", o.name),
            };
            push_unique(&mut out.seen_as, seen);
        }
    }
    for (i, m) in facts.messages.iter().enumerate() {
        let t = &m.text;
        if contains_ignore_ascii_case(t, NTH) {
            push_unique(
                &mut out.seen_as,
                "aws-node-termination-handler in the input".to_string(),
            );
            out.config_messages.push(m);
            // `helm list`: NAME NAMESPACE REVISION ...
            let words: Vec<&str> = t.split_whitespace().collect();
            if words.len() > 2 && words[0] == NTH && words.contains(&"deployed") {
                out.release = Some((words[0].to_string(), words[1].to_string()));
            }
        }
        for (value, env) in DRAIN_SETTINGS {
            let key = if setting_true(t, value) {
                Some(value)
            } else if setting_true(t, env) || env_pair_true(facts, i, env) {
                Some(env)
            } else {
                None
            };
            if let Some(key) = key {
                push_unique(&mut out.draining, format!("{key}=true"));
                let modelled = out
                    .config_evidence
                    .iter()
                    .any(|e| e.source == m.evidence.source && e.line == m.evidence.line);
                if !modelled {
                    out.config_messages.push(m);
                }
            }
        }
        if NTH_DRAIN_TEXTS
            .iter()
            .any(|s| contains_ignore_ascii_case(t, s))
        {
            out.drain_messages.push(m);
            if contains_ignore_ascii_case(t, "cordoned and drained") {
                if let Some(n) = node_of(facts, m)
                    .or_else(|| nth_log_node(t))
                    .or_else(|| nth_json_field(facts, m, &["node_name", "node-name"]))
                {
                    push_unique(&mut out.drained_nodes, n);
                }
            }
        }
    }
    if !out.draining.is_empty() {
        // Those settings exist only in NTH.
        push_unique(
            &mut out.seen_as,
            format!("its settings ({})", out.draining.join(", ")),
        );
    }
    if !out.drain_messages.is_empty() {
        // These event texts are NTH's own: it runs, whatever else the input shows.
        push_unique(&mut out.seen_as, "its own drain events".to_string());
    }
    (!out.seen_as.is_empty()).then_some(out)
}

/// `key: true`, `key=true`, `key: "true"`, `--set key=true`, and the env JSON
/// `{"name":"KEY","value":"true"}`.
fn setting_true(text: &str, key: &str) -> bool {
    let Some(at) = find_ignore_ascii_case(text, key) else {
        return false;
    };
    let rest = text[at + key.len()..]
        .trim_start_matches(['"', '\''])
        .trim_start();
    let rest = match rest.strip_prefix(',') {
        // `"name":"KEY","value":"true"`
        Some(r) => match r.trim_start().strip_prefix("\"value\"") {
            Some(v) => v,
            None => return false,
        },
        None => rest,
    };
    let Some(rest) = rest.trim_start().strip_prefix([':', '=']) else {
        return false;
    };
    rest.trim_start()
        .trim_start_matches(['"', '\''])
        .to_ascii_lowercase()
        .starts_with("true")
}

/// A YAML env entry split over two lines: `- name: KEY` then `value: "true"`.
fn env_pair_true(facts: &Facts, index: usize, key: &str) -> bool {
    let m = &facts.messages[index];
    let t = m.text.trim().trim_start_matches("- ").trim();
    let named = t
        .strip_prefix("name:")
        .is_some_and(|v| v.trim().trim_matches(['"', '\'']) == key);
    named
        && facts.messages.get(index + 1).is_some_and(|next| {
            next.evidence.source == m.evidence.source
                && next.evidence.line == m.evidence.line + 1
                && next.text.trim().strip_prefix("value:").is_some_and(|v| {
                    v.trim()
                        .trim_matches(['"', '\''])
                        .eq_ignore_ascii_case("true")
                })
        })
}

/// The input shows spot capacity: spot nodes or NodeClaims, spot capacity-type labels, or
/// Karpenter's spot interruption/rebalance events.
pub fn spot_evidence(facts: &Facts) -> bool {
    let typed = facts.nodes.iter().any(|n| {
        n.meta
            .labels
            .get("karpenter.sh/capacity-type")
            .map(String::as_str)
            == Some("spot")
    }) || facts
        .nodeclaims
        .iter()
        .any(|c| c.capacity_type.as_deref() == Some("spot"));
    typed
        || facts.messages.iter().any(|m| {
            let t = &m.text;
            contains_ignore_ascii_case(t, "capacity-type=spot")
                || contains_ignore_ascii_case(t, "capacity-type: spot")
                || contains_ignore_ascii_case(t, "\"capacity-type\":\"spot\"")
                || contains_ignore_ascii_case(t, "SpotRebalanceRecommendation")
                || contains_ignore_ascii_case(t, "SpotInterrupted")
                || contains_ignore_ascii_case(t, "Spot rebalance recommendation was triggered")
                || contains_ignore_ascii_case(t, "Spot interruption warning was triggered")
                // NTH's kinds and event texts: EC2 sends both only to spot instances.
                || contains_ignore_ascii_case(t, "kind=REBALANCE_RECOMMENDATION")
                || contains_ignore_ascii_case(t, "kind=SPOT_ITN")
                || contains_ignore_ascii_case(t, "Rebalance recommendation received")
                || contains_ignore_ascii_case(t, "Spot ITN received")
                || t.split_whitespace().any(|w| w == "spot")
                // NTH's JSON lines (`jsonLogging: true`) carry the kind and the reason as fields.
                || is_nth_rebalance_drain(facts, m)
                || nth_json_field(facts, m, &["kind"])
                    .is_some_and(|k| k.eq_ignore_ascii_case("SPOT_ITN"))
                || nth_json_field(facts, m, &["reason"])
                    .is_some_and(|r| contains_ignore_ascii_case(&r, "Spot ITN received"))
        })
}

/// The objects of a diagnosis about interruption notices: every node the notices name, or,
/// when they name no node, every NodeClaim.
pub fn notice_objects(facts: &Facts, nodes: &[String], nodeclaims: &[String]) -> Vec<ObjectRef> {
    if nodes.is_empty() {
        nodeclaims.iter().map(|n| claim_ref(facts, n)).collect()
    } else {
        nodes
            .iter()
            .map(|n| ObjectRef::new("Node", None, n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_settings() {
        assert_eq!(
            json_field_in_text("deleted node from interruption message\t{\"commit\": \"abc\", \"messageKind\": \"SpotInterruptionKind\"}", "messageKind").as_deref(),
            Some("SpotInterruptionKind")
        );
        assert!(setting_true(
            "enableRebalanceDraining: true",
            "enableRebalanceDraining"
        ));
        assert!(setting_true(
            "- ENABLE_REBALANCE_DRAINING=\"true\"",
            "ENABLE_REBALANCE_DRAINING"
        ));
        assert!(!setting_true(
            "enableRebalanceDraining: false",
            "enableRebalanceDraining"
        ));
        assert!(is_rebalance_kind("rebalance_recommendation"));
        assert!(is_rebalance_kind("RebalanceRecommendationKind"));
        assert!(!is_rebalance_kind("spot_interrupted"));
    }
}
