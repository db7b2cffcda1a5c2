//! What KW308, KW309 and KW311 share: the interruption message kind of a log line, and whether
//! (and how) AWS Node Termination Handler runs beside Karpenter.

use crate::document::Evidence;
use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::record_of;
use crate::rules::kw3xx::common::{claim_ref, json_field_in_text, node_of, push_unique};

/// A `description` setting that quotes an interruption text: the EventBridge rules of an
/// infrastructure module (`description = "Karpenter Interrupt - A spot rebalance recommendation
/// was triggered for the node"` in Terraform, `Description:` in CloudFormation) describe what
/// the rule forwards; they are configuration, not a notice that something happened.
pub fn is_rule_description(m: &Message) -> bool {
    let line = m
        .evidence
        .text
        .trim_start()
        .trim_start_matches(['+', '-', '~', ' ', '"']);
    let Some(head) = line.get(..11) else {
        return false;
    };
    head.eq_ignore_ascii_case("description")
        && line[11..]
            .trim_start_matches('"')
            .trim_start()
            .starts_with(['=', ':'])
}

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
    /// Spot draining settings the input shows turned off (`enableSpotInterruptionDraining:
    /// false`, `enableRebalanceDraining: false`).
    pub draining_off: Vec<String>,
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
    "Rebalance recommendation event received. Instance",
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

/// NTH's descriptions of a rebalance recommendation: IMDS mode (`Rebalance recommendation
/// received. Instance will be cordoned at ...`) and queue mode (`Rebalance recommendation event
/// received. Instance <id> will be cordoned at ...`).
const NTH_REBALANCE_TEXTS: &[&str] = &[
    "Rebalance recommendation received",
    "Rebalance recommendation event received",
];

/// NTH's descriptions of a spot interruption: IMDS mode (`Spot ITN received`) and queue mode
/// (`Spot Interruption notice for instance <id> was sent at ...`).
const NTH_SPOT_ITN_TEXTS: &[&str] = &["Spot ITN received", "Spot Interruption notice for instance"];

/// NTH's descriptions and kinds of interruptions that have nothing to do with spot: an ASG
/// scaling in (a managed node group's instance), an instance stopped or terminated by someone,
/// a scheduled maintenance event.
const NTH_OTHER_CAUSES: &[&str] = &[
    "ASG Lifecycle Termination event received",
    "EC2 State Change event received",
    "ASG_LIFECYCLE",
    "STATE_CHANGE",
    "SCHEDULED_EVENT",
];

/// Why NTH drained a node, as far as its line (or another line about the same node) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DrainCause {
    /// A spot interruption notice or a rebalance recommendation.
    Spot,
    /// An ASG lifecycle hook, an instance state change, scheduled maintenance.
    Other,
    /// The line does not say (a bare `Node successfully cordoned and drained` event).
    Unknown,
}

/// The cause a single NTH line states: its text, or its JSON `reason` / `kind` fields.
fn stated_cause(facts: &Facts, m: &Message) -> DrainCause {
    let fields = [
        Some(m.text.clone()),
        nth_json_field(facts, m, &["reason"]),
        nth_json_field(facts, m, &["kind"]),
    ];
    let says = |needles: &[&str]| {
        fields
            .iter()
            .flatten()
            .any(|t| needles.iter().any(|n| contains_ignore_ascii_case(t, n)))
    };
    if says(NTH_REBALANCE_TEXTS)
        || says(NTH_SPOT_ITN_TEXTS)
        || says(&["REBALANCE_RECOMMENDATION", "SPOT_ITN"])
    {
        DrainCause::Spot
    } else if says(NTH_OTHER_CAUSES) {
        DrainCause::Other
    } else {
        DrainCause::Unknown
    }
}

/// Why NTH drained on this line: what the line states, else what NTH's other lines about the
/// same node state (its `ASGLifecycle` event beside a bare `CordonAndDrain`), when they agree.
pub fn drain_cause(facts: &Facts, m: &Message) -> DrainCause {
    let stated = stated_cause(facts, m);
    if stated != DrainCause::Unknown {
        return stated;
    }
    let Some(node) = node_of(facts, m).or_else(|| nth_log_node(&m.text)) else {
        return DrainCause::Unknown;
    };
    let about_node = facts.messages.iter().filter(|o| {
        node_of(facts, o)
            .or_else(|| nth_log_node(&o.text))
            .or_else(|| nth_json_field(facts, o, &["node_name", "node-name"]))
            .is_some_and(|n| n == node)
    });
    let mut seen = DrainCause::Unknown;
    for cause in about_node.map(|o| stated_cause(facts, o)) {
        match (seen, cause) {
            (_, DrainCause::Unknown) => {}
            (DrainCause::Unknown, c) => seen = c,
            (a, b) if a != b => return DrainCause::Unknown,
            _ => {}
        }
    }
    seen
}

/// An NTH drain line caused by a rebalance recommendation: the text says so (console format,
/// events), or the JSON line's `reason` / `kind` field does.
pub fn is_nth_rebalance_drain(facts: &Facts, m: &Message) -> bool {
    if NTH_REBALANCE_TEXTS
        .iter()
        .any(|t| contains_ignore_ascii_case(&m.text, t))
    {
        return true;
    }
    // Only NTH's own drain lines: another tool's `kind` field says nothing about NTH.
    let nth_drain_line = NTH_DRAIN_TEXTS
        .iter()
        .any(|s| contains_ignore_ascii_case(&m.text, s));
    nth_drain_line
        && (nth_json_field(facts, m, &["reason"]).is_some_and(|r| {
            NTH_REBALANCE_TEXTS
                .iter()
                .any(|t| contains_ignore_ascii_case(&r, t))
        }) || nth_json_field(facts, m, &["kind"]).is_some_and(|k| is_rebalance_kind(&k)))
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
    // Its pods, listed (`kubectl get pods -n kube-system -o wide | grep termination`).
    for p in facts.pods.iter().filter(|p| p.meta.name.starts_with(NTH)) {
        push_unique(
            &mut out.seen_as,
            "aws-node-termination-handler in the input".to_string(),
        );
        out.config_evidence.extend(p.meta.evidence.clone());
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
            for key in [value, env] {
                if setting_is(t, key, "false") {
                    push_unique(&mut out.draining_off, key.to_string());
                }
            }
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
    setting_is(text, key, "true")
}

/// [`setting_true`] for any value (`false`).
fn setting_is(text: &str, key: &str, value: &str) -> bool {
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
        .starts_with(value)
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

/// NTH runs and may drain spot nodes on its own: a draining setting is on, one of its drain
/// lines is about a spot notice (or does not say why), or nothing shows its spot draining
/// turned off (the chart's IMDS mode drains on spot interruptions by default).
pub fn nth_drains_spot(facts: &Facts) -> bool {
    let Some(n) = nth(facts) else {
        return false;
    };
    let spot_off = n.draining_off.iter().any(|k| {
        k.eq_ignore_ascii_case("enableSpotInterruptionDraining")
            || k.eq_ignore_ascii_case("ENABLE_SPOT_INTERRUPTION_DRAINING")
    });
    !n.draining.is_empty()
        || n.drain_messages
            .iter()
            .any(|m| drain_cause(facts, m) != DrainCause::Other)
        || (!spot_off && n.drain_messages.is_empty())
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
                || NTH_REBALANCE_TEXTS
                    .iter()
                    .chain(NTH_SPOT_ITN_TEXTS)
                    .any(|n| contains_ignore_ascii_case(t, n))
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
    fn drain_causes_from_the_line_or_the_nodes_other_lines() {
        let text = "NAMESPACE   LAST SEEN   TYPE     REASON           OBJECT                             MESSAGE
default     12m         Normal   CordonAndDrain   node/ip-10-9-8-14.ec2.internal     Node successfully cordoned and drained
default     12m         Normal   ASGLifecycle     node/ip-10-9-8-14.ec2.internal     ASG Lifecycle Termination event received. Instance will be interrupted at 2026-12-06 21:40:11 +0000 UTC
default     5m          Normal   CordonAndDrain   node/ip-10-9-77-2.ec2.internal     Node successfully cordoned and drained

2026/11/18 04:12:41 INF Node successfully cordoned and drained node_name=ip-10-44-19-201.ec2.internal reason=\"Rebalance recommendation event received. Instance i-0b7c6d5e4f3a29180 will be cordoned at 2026-11-18 04:12:07 +0000 UTC \\n\"
";
        let facts = crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        let cause = |needle: &str| {
            let m = facts
                .messages
                .iter()
                .find(|m| {
                    m.text.contains("cordoned and drained") && m.evidence.text.contains(needle)
                })
                .unwrap();
            drain_cause(&facts, m)
        };
        assert_eq!(cause("ip-10-9-8-14"), DrainCause::Other);
        assert_eq!(cause("ip-10-9-77-2"), DrainCause::Unknown);
        assert_eq!(cause("ip-10-44-19-201"), DrainCause::Spot);
        assert!(setting_is(
            "enableSpotInterruptionDraining: false",
            "enableSpotInterruptionDraining",
            "false"
        ));
    }

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
