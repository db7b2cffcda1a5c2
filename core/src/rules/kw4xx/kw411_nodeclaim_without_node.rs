//! KW411 nodeclaim-without-node.

use crate::facts::{Facts, Message, ObjectRef};
use crate::rules::kw3xx::common::{claim_age, nodeclaim_of};
use crate::rules::kw4xx::disruption::{
    hits, nodepool_lookup_command, push_unique, subject_nodepools, subject_of, subjects_label,
    unescaped, wholly_after, Hits,
};
use crate::rules::text::contains_any;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW411",
    slug: "nodeclaim-without-node",
    title: "Karpenter cannot disrupt a NodeClaim without a node, or a node it does not manage",
    severity: Severity::Info,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter's disruption logic only considers a NodeClaim together with its Node. Either the
NodeClaim has no Node yet (the instance is still registering, or never will), or the Node is
not Karpenter's (a managed node group's, a self-managed one).

Signals: the `DisruptionBlocked` texts `state node doesn't contain both a node and a nodeclaim`
(v0.32 to v1.0; the v1alpha5 source before v0.32 says `... a node and a machine`), `node is not
managed by karpenter` (v1.1), `Node isn't managed by karpenter` and `Nodeclaim does not have an
associated node` (v1.2+).

## Why it happens
Right after a launch the NodeClaim exists before its Node registers: that is normal for a
minute or two. If it lasts, the node never joined (bootstrap, networking, IAM: KW303). For a
node Karpenter does not manage, nothing is wrong: Karpenter leaves it alone by design.

## How to fix
Wait a few minutes after a launch. If the NodeClaim stays without a node, follow KW303
(`kubectl get nodeclaim <name> -o yaml`: the `Registered` condition). For a non-Karpenter node,
nothing to do; scale it with the tool that owns it.
"#,
};

const SIGNALS: &[&str] = &[
    "doesn't contain both a node and a nodeclaim",
    "doesn't contain both a node and a machine",
    "does not have an associated node",
    "isn't managed by karpenter",
    "is not managed by karpenter",
];

/// Texts that say a NodeClaim's node has not registered yet.
const NOT_REGISTERED: &[&str] = &["node not registered with cluster", "nodenotfound"];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let found = hits(facts, |t| contains_any(t, SIGNALS));
    let (unmanaged, mut waiting) = split_unmanaged(found);
    // A NodeClaim the input shows with its node (Registered=True, a node name) got it after
    // the event: Karpenter's first-minute "does not have an associated node" is history.
    // So does a later `Registered` transition (Unknown -> True) of that NodeClaim.
    let has_node = |name: &str| {
        facts
            .nodeclaims
            .iter()
            .any(|c| c.meta.name == name && registered(c))
    };
    let registered_after = |m: &Message, name: &str| {
        facts.messages.iter().any(|r| {
            let t = unescaped(&r.text);
            subject_of(r).is_some_and(|s| s.name == name)
                && contains_any(&t, &["Type: Registered,", "Type: MachineRegistered,"])
                && contains_any(&t, &["-> True"])
                && wholly_after(r, m)
        })
    };
    waiting.messages.retain(|m| {
        subject_of(m).is_none_or(|s| !has_node(&s.name) && !registered_after(m, &s.name))
    });
    let kept = &waiting.messages;
    waiting
        .subjects
        .retain(|s| kept.iter().any(|m| subject_of(m).as_ref() == Some(s)));
    waiting.subjects.retain(|s| !has_node(&s.name));
    if waiting.messages.is_empty() {
        waiting.subjects.clear();
    }
    [(unmanaged, true), (waiting, false)]
        .into_iter()
        .filter(|(group, _)| !group.is_empty())
        .map(|(group, unmanaged_only)| diagnose(facts, group, unmanaged_only))
        .collect()
}

/// Whether the NodeClaim (Machine) object shows its node: Registered True and a node name, or
/// a `kubectl get nodeclaims` row's NODE (set only once the node registered).
fn registered(c: &crate::facts::NodeClaim) -> bool {
    c.node_name.is_some()
        && (c.meta.from_table
            || c.conditions.iter().any(|k| {
                (k.condition_type == "Registered" || k.condition_type == "MachineRegistered")
                    && k.status == "True"
            }))
}

/// The nodes Karpenter does not manage, apart from the NodeClaims still waiting for a node:
/// `isn't managed by karpenter`, and v1.0's `doesn't contain both a node and a nodeclaim` when
/// it is about a Node (a Node with no NodeClaim; on a NodeClaim it means the node has not
/// registered yet). A paste often holds both, and only the NodeClaims' wait points to KW303.
fn split_unmanaged(found: Hits<'_>) -> (Hits<'_>, Hits<'_>) {
    let mut unmanaged = Hits::default();
    let mut waiting = Hits::default();
    for m in found.messages {
        let subject = subject_of(m);
        let t = unescaped(&m.text);
        let about_node = subject.as_ref().is_some_and(|s| s.kind == "Node");
        let group = if contains_any(&t, &["managed by karpenter"])
            || (about_node && contains_any(&t, &["doesn't contain both"]))
        {
            &mut unmanaged
        } else {
            &mut waiting
        };
        if let Some(s) = subject {
            push_unique(&mut group.subjects, s);
        }
        group.messages.push(m);
    }
    (unmanaged, waiting)
}

fn diagnose(facts: &Facts, found: Hits<'_>, unmanaged_only: bool) -> Diagnosis {
    let on = subjects_label(&found.subjects);
    // Before v0.32 the NodeClaim was a v1alpha5 Machine.
    let kind = if found
        .messages
        .iter()
        .any(|m| contains_any(&m.text, &["a node and a machine"]))
        || found.subjects.iter().any(|s| s.kind == "Machine")
        || (!facts.nodeclaims.is_empty() && facts.nodeclaims.iter().all(|c| c.is_machine))
    {
        "Machine"
    } else {
        "NodeClaim"
    };
    let waiting_claims: Vec<String> = facts
        .nodeclaims
        .iter()
        .filter(|c| {
            c.conditions.iter().any(|k| {
                // v1alpha5 Machines (before v0.32) call it `MachineRegistered`.
                (k.condition_type == "Registered" || k.condition_type == "MachineRegistered")
                    && k.status != "True"
                    && k.reason.as_deref() != Some("AwaitingReconciliation")
            }) || (c.node_name.is_none() && c.provider_id.is_some())
        })
        .map(|c| c.meta.name.clone())
        .collect();
    // The NodeClaims this is about: the ones the texts name, then those the objects show waiting.
    let mut claims: Vec<String> = Vec::new();
    if !unmanaged_only {
        for s in &found.subjects {
            if s.kind == "NodeClaim" || s.kind == "Machine" {
                push_unique(&mut claims, s.name.clone());
            }
        }
        for c in &waiting_claims {
            push_unique(&mut claims, c.clone());
        }
    }
    let nodes: Vec<String> = found
        .subjects
        .iter()
        .filter(|s| s.kind == "Node")
        .map(|s| s.name.clone())
        .collect();
    let many = claims.len() > 1;
    let not_registered_text = facts
        .messages
        .iter()
        .any(|m| contains_any(&m.text, NOT_REGISTERED));
    // How long the NodeClaims have waited: the blocking events' ages, or the claims' own age
    // (their events, creationTimestamp, `kubectl get nodeclaims` AGE) while no node is known.
    let claims_age = claims
        .iter()
        .filter(|c| {
            facts
                .nodeclaims
                .iter()
                .find(|n| &n.meta.name == *c)
                .is_none_or(|n| n.node_name.is_none())
        })
        .filter_map(|c| claim_age(facts, c))
        .map(|a| (a.seconds.max(0) / 60) as u64)
        .max();
    let age = longest_age_minutes(facts, &found.messages).max(claims_age);
    let long_wait = age.is_some_and(|a| a >= 5);
    let mut related: Vec<&'static str> = Vec::new();
    // Several subjects (nodes, or NodeClaims named by the texts) take plural words.
    let several_subjects = found.subjects.len() > 1;
    let mut summary = if unmanaged_only {
        if nodes.len() > 1 && nodes.len() == found.subjects.len() {
            format!(
                "Karpenter does not disrupt {}: {}. They are not managed by Karpenter (a managed node group's or self-managed nodes), which it leaves alone by design.",
                plural(nodes.len(), "node", "nodes"),
                nodes.join(", ")
            )
        } else if several_subjects {
            format!(
                "Karpenter does not disrupt {on}: they are not managed by Karpenter (a managed node group's or self-managed nodes), which it leaves alone by design."
            )
        } else {
            format!(
                "Karpenter does not disrupt {on}: the node is not managed by Karpenter (a managed node group's or self-managed node), which it leaves alone by design."
            )
        }
    } else {
        match claims.as_slice() {
            [] if several_subjects => format!(
                "Karpenter cannot disrupt {on}: their {kind}s have no registered node (or the nodes are not Karpenter's)."
            ),
            [] => format!(
                "Karpenter cannot disrupt {on}: the {kind} has no registered node (or the node is not Karpenter's)."
            ),
            [one] => format!(
                "{kind} {one} has no Node: Karpenter cannot disrupt it until its node registers (or while the node is not Karpenter's)."
            ),
            all => format!(
                "{} {kind}s have no Node: {}. Karpenter cannot disrupt them until their nodes register (or while a node is not Karpenter's).",
                all.len(),
                all.join(", ")
            ),
        }
    };
    if !unmanaged_only {
        if !waiting_claims.is_empty() || not_registered_text || long_wait {
            let (who, whose, instance) = match claims.len() {
                0 if several_subjects => (
                    format!("The {kind}s have"),
                    "their nodes",
                    "the instances are",
                ),
                0 => (format!("The {kind} has"), "its node", "the instance is"),
                1 => ("It has".to_string(), "its node", "the instance is"),
                _ => ("They have".to_string(), "their nodes", "the instances are"),
            };
            match age.filter(|_| long_wait) {
                Some(a) => summary.push_str(&format!(
                    " {who} waited for {whose} for about {}: {instance} not joining the cluster (KW303).",
                    plural(a as usize, "minute", "minutes")
                )),
                None => summary.push_str(&format!(
                    " {} Registered condition is not True; if that lasts beyond a few minutes, {instance} not joining the cluster (KW303).",
                    if many || (claims.is_empty() && several_subjects) {
                        "Their"
                    } else {
                        "Its"
                    }
                )),
            }
            related.push("KW303");
        } else {
            summary.push_str(" Right after a launch this is normal for a minute or two.");
        }
    }
    // Group-qualified: a bare `machine` may be Cluster API's Machine.
    let resource = if kind == "Machine" {
        crate::rules::version::MACHINES_RESOURCE.to_string()
    } else {
        kind.to_ascii_lowercase()
    };
    let registered = if kind == "Machine" {
        "MachineRegistered"
    } else {
        "Registered"
    };
    let steps = if unmanaged_only {
        vec![Remediation::text(
            "Nothing to do for Karpenter: scale that node with the tool that owns it (its managed node group, ASG, or your own process).",
        )]
    } else {
        let read = if many {
            Remediation::command(
                format!("Read the {kind}s' {registered} condition; Karpenter gives up and deletes a {kind} after 15 minutes without a node:"),
                format!(
                    "kubectl get {resource} {} -o jsonpath='{{range .items[*]}}{{.metadata.name}}: {{range .status.conditions[?(@.type==\"{registered}\")]}}{{.status}} {{.reason}}: {{.message}}{{end}}{{\"\\n\"}}{{end}}'",
                    claims.join(" ")
                ),
            )
        } else {
            Remediation::command(
                format!("Read the {kind}'s {registered} condition; Karpenter gives up and deletes it after 15 minutes without a node:"),
                format!(
                    "kubectl get {resource} {} -o jsonpath='{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}}: {{.message}}{{\"\\n\"}}{{end}}'",
                    claims.first().map_or("<nodeclaim>", String::as_str)
                ),
            )
        };
        // The bootstrap and the node role come from the NodePool's node class.
        let nodepools = subject_nodepools(facts, &claim_refs(kind, &claims));
        let class = if kind == "Machine" {
            Remediation::text(
                "If the instance runs but never joins, follow KW303: the node's bootstrap, its IAM role's access entry (or aws-auth mapping), networking to the API server.",
            )
        } else {
            let jsonpath = "-o jsonpath='{.spec.template.spec.nodeClassRef.name}{\"\\n\"}'";
            let (which, command) = match nodepools.as_slice() {
                [one] => (
                    format!("NodePool {one}'s EC2NodeClass"),
                    format!("kubectl get nodepool {one} {jsonpath}"),
                ),
                [] => (
                    format!(
                        "the NodePool's EC2NodeClass (`{}` names the NodePool)",
                        nodepool_lookup_command(facts, &claim_refs(kind, &claims))
                    ),
                    format!("kubectl get nodepool <nodepool> {jsonpath}"),
                ),
                several => (
                    format!("the EC2NodeClass of NodePools {}", several.join(", ")),
                    format!(
                        "for np in {}; do kubectl get nodepool \"$np\" {jsonpath}; done",
                        several.join(" ")
                    ),
                ),
            };
            Remediation::command(
                format!("If the instance runs but never joins, follow KW303: the bootstrap of {which}, its node role's access entry (or aws-auth mapping), networking to the API server. Which EC2NodeClass:"),
                command,
            )
        };
        vec![read, class]
    };
    let registration = facts
        .messages
        .iter()
        .filter(|m| !unmanaged_only && contains_any(&m.text, NOT_REGISTERED));
    // One evidence line per NodeClaim (or node): the same text about three NodeClaims is
    // three rows, not one "seen 3 times" naming only the first.
    let objects: Vec<ObjectRef> = if unmanaged_only || claims.is_empty() {
        found.subjects.clone()
    } else {
        claims
            .iter()
            .map(|c| ObjectRef::new(kind, None, c))
            .collect()
    };
    // A node Karpenter does not manage has no NodePool; a waiting NodeClaim has one.
    let nodepools = if unmanaged_only {
        Vec::new()
    } else {
        subject_nodepools(facts, &objects)
    };
    Diagnosis::new(&META, summary)
        .with_objects(&objects)
        .with_node_pools(&nodepools)
        .with_messages_per_object(found.messages.iter().copied(), &subject_of)
        .with_messages_per_object(registration, &|m| {
            subject_of(m).or_else(|| nodeclaim_of(facts, m).map(|n| ObjectRef::new(kind, None, &n)))
        })
        .with_related(&related)
        .with_remediation(steps)
}

/// The NodeClaims (Machines) `names` as objects.
fn claim_refs(kind: &str, names: &[String]) -> Vec<ObjectRef> {
    names
        .iter()
        .map(|c| ObjectRef::new(kind, None, c))
        .collect()
}

/// `1 node`, `3 nodes`.
fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The longest age of the events behind `messages` (`14m`, `2m (x31 over 3h)` counts 3h), in
/// minutes.
fn longest_age_minutes(facts: &Facts, messages: &[&Message]) -> Option<u64> {
    // The span the repeats cover: an Event object's firstTimestamp to lastTimestamp, or the
    // FIRST SEEN age of `kubectl get events -o wide` (`58m ago`).
    let spans = messages.iter().filter_map(|m| {
        let first = m.evidence.first_seen.as_deref()?;
        if let Some(ago) = first.trim().strip_suffix(" ago") {
            return age_minutes(ago);
        }
        let first = crate::rules::time::epoch_seconds(first)?;
        let last = crate::rules::time::epoch_seconds(m.evidence.last_seen.as_deref()?)?;
        u64::try_from((last - first) / 60).ok()
    });
    let ages = facts
        .events
        .iter()
        .filter(|e| {
            messages.iter().any(|m| {
                m.text == e.message
                    && m.evidence.source == e.evidence.source
                    && m.evidence.line == e.evidence.line
            })
        })
        .filter_map(|e| e.age.as_deref())
        .filter_map(age_minutes);
    ages.chain(spans).max()
}

/// Minutes in a kubectl age: `14m`, `4m59s`, `3h`, `2d`, `2m (x31 over 3h)` (the `over` span).
fn age_minutes(age: &str) -> Option<u64> {
    let span = age
        .split(" over ")
        .nth(1)
        .map(|s| s.trim_end_matches(')'))
        .unwrap_or(age);
    let mut total = 0u64;
    let mut number = String::new();
    let mut seen = false;
    for c in span.trim().chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let n: u64 = number.parse().ok()?;
        number.clear();
        total += match c {
            'd' => n * 24 * 60,
            'h' => n * 60,
            'm' => n,
            's' => 0,
            _ => return None,
        };
        seen = true;
    }
    (seen && number.is_empty()).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Condition, Event, Message, Meta, NodeClaim};
    use crate::testing::{check_only, ids};

    #[test]
    fn a_waiting_nodeclaim_names_its_nodepool_an_unmanaged_node_none() {
        let d = &check_only(
            "KW411",
            "default 3m Normal DisruptionBlocked nodeclaim/web-general-r2mtn Nodeclaim does not have an associated node",
        )
        .diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("web-general"));
        assert_eq!(
            d.remediation[1].command.as_deref(),
            Some("kubectl get nodepool web-general -o jsonpath='{.spec.template.spec.nodeClassRef.name}{\"\\n\"}'")
        );
        // A name Karpenter did not generate: the step says how to find the NodePool.
        let d = &check_only(
            "KW411",
            "default 3m Normal DisruptionBlocked nodeclaim/imported-a Nodeclaim does not have an associated node",
        )
        .diagnoses[0];
        assert_eq!(d.node_pool, None);
        assert!(
            d.remediation[1].text.contains(
                "`kubectl get nodeclaim imported-a -L karpenter.sh/nodepool` names the NodePool"
            ),
            "{}",
            d.remediation[1].text
        );
        let unmanaged = &check_only(
            "KW411",
            "1m Normal DisruptionBlocked node/ip-10-0-1-1.ec2.internal Node isn't managed by karpenter",
        )
        .diagnoses[0];
        assert_eq!(unmanaged.node_pool, None);
    }

    #[test]
    fn the_claims_own_age_counts_not_only_the_blocking_events() {
        let text = "$ kubectl get nodeclaims
NAME             TYPE           CAPACITY    ZONE         NODE   READY     AGE
gpu-a100-7rwzk   p4d.24xlarge   on-demand   us-east-1a          Unknown   13m
$ kubectl get events -A --field-selector involvedObject.kind=NodeClaim
NAMESPACE   LAST SEEN   TYPE     REASON              OBJECT                     MESSAGE
default     2m          Normal   DisruptionBlocked   nodeclaim/gpu-a100-7rwzk   Nodeclaim does not have an associated node
";
        let d = &check_only("KW411", text).diagnoses[0];
        assert!(d.summary.contains("about 13 minutes"), "{}", d.summary);
        assert_eq!(d.related, ["KW303"]);
        // Two minutes old: normal right after a launch.
        let d = &check_only("KW411", &text.replace("Unknown   13m", "Unknown   2m")).diagnoses[0];
        assert!(
            d.summary.contains("normal for a minute or two"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn every_wording() {
        for text in [
            "Normal  DisruptionBlocked  14m  karpenter  Cannot disrupt NodeClaim: state node doesn't contain both a node and a nodeclaim",
            "Nodeclaim does not have an associated node",
            "Cannot disrupt Node: node is not managed by karpenter",
            "Node isn't managed by karpenter",
        ] {
            assert_eq!(ids(&check_only("KW411", text)), ["KW411"], "{text}");
        }
        let unmanaged = &check_only(
            "KW411",
            "1m Normal DisruptionBlocked node/ip-1 Node isn't managed by karpenter",
        )
        .diagnoses[0];
        assert!(
            unmanaged.summary.contains("by design"),
            "{}",
            unmanaged.summary
        );
        assert!(unmanaged.related.is_empty());
    }

    #[test]
    fn points_to_kw303_when_the_node_never_registered() {
        let report = check_only(
            "KW411",
            "Message: Node not registered with cluster\nReason: NodeNotFound\nNormal  DisruptionBlocked  14m  karpenter  Cannot disrupt NodeClaim: state node doesn't contain both a node and a nodeclaim",
        );
        assert_eq!(report.diagnoses[0].related, ["KW303"]);
        let mut facts = Facts::default();
        facts.messages.push(Message {
            text: "Nodeclaim does not have an associated node".into(),
            ..Default::default()
        });
        assert!(check(&facts)[0].related.is_empty());
        facts.nodeclaims.push(NodeClaim {
            meta: Meta {
                name: "default-4xq7m".into(),
                ..Default::default()
            },
            conditions: vec![Condition {
                condition_type: "Registered".into(),
                status: "Unknown".into(),
                reason: Some("NodeNotFound".into()),
                ..Default::default()
            }],
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert_eq!(d.related, ["KW303"]);
        assert!(
            d.summary
                .starts_with("NodeClaim default-4xq7m has no Node: Karpenter cannot disrupt it"),
            "{}",
            d.summary
        );
        facts.nodeclaims.clear();
        facts.events.push(Event {
            message: "Nodeclaim does not have an associated node".into(),
            age: Some("2m (x7 over 20m)".into()),
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert!(d.summary.contains("about 20 minutes"), "{}", d.summary);
    }

    /// The words agree with the number of objects: one node is `the node`, several are
    /// `nodes` and `they`; a count is never `1 nodes`.
    #[test]
    fn singular_and_plural_agree_with_the_count() {
        let waiting_on = |names: &[&str]| {
            let mut facts = Facts::default();
            for n in names {
                facts.messages.push(Message {
                    text: "Nodeclaim does not have an associated node".into(),
                    object: Some(ObjectRef::new("Node", None, n)),
                    ..Default::default()
                });
            }
            facts.events.push(Event {
                message: "Nodeclaim does not have an associated node".into(),
                age: Some("2m (x7 over 1m)".into()),
                ..Default::default()
            });
            check(&facts)
        };
        let d = &waiting_on(&["ip-1", "ip-2"])[0];
        assert!(
            d.summary
                .contains("their NodeClaims have no registered node")
                && !d.summary.contains("the NodeClaim has"),
            "{}",
            d.summary
        );
        let d = &waiting_on(&["ip-1"])[0];
        assert!(
            d.summary.contains("the NodeClaim has no registered node"),
            "{}",
            d.summary
        );
        let unmanaged = |rows: &[&str]| {
            let text: String = rows
                .iter()
                .map(|n| {
                    format!(
                        "1m Normal DisruptionBlocked node/{n} Node isn't managed by karpenter\n"
                    )
                })
                .collect();
            check_only("KW411", &text).diagnoses[0].summary.clone()
        };
        let one = unmanaged(&["ip-1"]);
        assert!(
            one.contains("the node is not managed") && !one.contains("1 nodes"),
            "{one}"
        );
        let two = unmanaged(&["ip-1", "ip-2"]);
        assert!(
            two.contains("does not disrupt 2 nodes: ip-1, ip-2"),
            "{two}"
        );
        assert_eq!(plural(1, "minute", "minutes"), "1 minute");
        assert_eq!(plural(12, "minute", "minutes"), "12 minutes");
    }

    #[test]
    fn unmanaged_nodes_apart_from_waiting_nodeclaims() {
        // v1.0 says `doesn't contain both` for a Node without a NodeClaim (a managed node
        // group's) and for a NodeClaim without its Node; only the NodeClaim waits to register.
        let report = check_only(
            "KW411",
            "NAMESPACE   LAST SEEN          TYPE     REASON              OBJECT                          MESSAGE
default     2m (x31 over 3h)   Normal   DisruptionBlocked   node/ip-10-0-9-9.ec2.internal   Cannot disrupt Node: state node doesn't contain both a node and a nodeclaim
default     40s                Normal   DisruptionBlocked   nodeclaim/default-p7xk2         Cannot disrupt NodeClaim: state node doesn't contain both a node and a nodeclaim
",
        );
        assert_eq!(ids(&report), ["KW411", "KW411"]);
        let [unmanaged, waiting] = &report.diagnoses[..] else {
            unreachable!()
        };
        assert!(
            unmanaged.summary.contains("node ip-10-0-9-9.ec2.internal")
                && unmanaged.summary.contains("by design")
                && !unmanaged.summary.contains("NodeClaim"),
            "{}",
            unmanaged.summary
        );
        assert!(unmanaged.related.is_empty());
        // The 3-hour-old rows of the unmanaged node do not age the NodeClaim's wait.
        assert!(
            waiting.summary.contains("NodeClaim default-p7xk2")
                && !waiting.summary.contains("ip-10-0-9-9")
                && !waiting.summary.contains("180 minutes")
                && waiting.summary.contains("normal for a minute or two"),
            "{}",
            waiting.summary
        );
        assert!(waiting.related.is_empty());
    }

    #[test]
    fn several_nodeclaims_are_counted_and_listed() {
        let report = check_only(
            "KW411",
            "NAMESPACE   LAST SEEN   TYPE     REASON              OBJECT                    MESSAGE
default     40s         Normal   DisruptionBlocked   nodeclaim/default-a1b2c   Nodeclaim does not have an associated node
default     35s         Normal   DisruptionBlocked   nodeclaim/default-d3e4f   Nodeclaim does not have an associated node
default     30s         Normal   DisruptionBlocked   nodeclaim/default-a1b2c   Nodeclaim does not have an associated node
default     20s         Normal   DisruptionBlocked   nodeclaim/gpu-g5h6i       Nodeclaim does not have an associated node
",
        );
        assert_eq!(ids(&report), ["KW411"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with(
                "3 NodeClaims have no Node: default-a1b2c, default-d3e4f, gpu-g5h6i. Karpenter cannot disrupt them"
            ),
            "{}",
            d.summary
        );
        let cmd = d.remediation[0].command.as_deref().unwrap();
        assert!(
            cmd.starts_with("kubectl get nodeclaim default-a1b2c default-d3e4f gpu-g5h6i -o jsonpath='{range .items[*]}"),
            "{cmd}"
        );
        let one = &check_only(
            "KW411",
            "2m  Normal  DisruptionBlocked  nodeclaim/general-z9d4f  Nodeclaim does not have an associated node",
        )
        .diagnoses[0];
        assert!(
            one.summary.starts_with("NodeClaim general-z9d4f has no Node: Karpenter cannot disrupt it until its node registers"),
            "{}",
            one.summary
        );
        let nodes = &check_only(
            "KW411",
            "LAST SEEN   TYPE     REASON              OBJECT           MESSAGE
2m          Normal   DisruptionBlocked   node/ip-10-0-1-1   Node isn't managed by karpenter
2m          Normal   DisruptionBlocked   node/ip-10-0-1-2   Node isn't managed by karpenter
",
        )
        .diagnoses[0];
        assert!(
            nodes.summary.starts_with(
                "Karpenter does not disrupt 2 nodes: ip-10-0-1-1, ip-10-0-1-2. They are"
            ),
            "{}",
            nodes.summary
        );
    }

    #[test]
    fn machines_before_v0_32() {
        let d = &check_only(
            "KW411",
            "Normal  DisruptionBlocked  machine/default-x7k2p  state node doesn't contain both a node and a machine",
        )
        .diagnoses[0];
        assert!(d.summary.contains("Machine"), "{}", d.summary);
        assert!(!d.summary.contains("NodeClaim"), "{}", d.summary);
        // Two Machines with the one v0.31 text: one evidence row and one object each.
        let d = &check_only(
            "KW411",
            "LAST SEEN   TYPE     REASON              OBJECT                    MESSAGE
5m          Normal   DeprovisioningBlocked   machine/default-x7k2p     Cannot deprovision Machine: state node doesn't contain both a node and a machine
4m          Normal   DeprovisioningBlocked   machine/default-q9w3e     Cannot deprovision Machine: state node doesn't contain both a node and a machine
",
        )
        .diagnoses[0];
        assert!(
            d.summary
                .starts_with("2 Machines have no Node: default-x7k2p, default-q9w3e."),
            "{}",
            d.summary
        );
        assert_eq!(d.evidence.len(), 2, "{:?}", d.evidence);
        let kinds: Vec<&str> = d.objects.iter().map(|o| o.kind.as_str()).collect();
        assert_eq!(kinds, ["Machine", "Machine"]);
        assert!(d.remediation[0].command.as_deref().is_some_and(
            |c| c.starts_with("kubectl get machines.karpenter.sh default-x7k2p default-q9w3e ")
        ));
    }

    #[test]
    fn one_evidence_row_per_nodeclaim() {
        let d = &check_only(
            "KW411",
            "NAMESPACE   LAST SEEN   TYPE     REASON              OBJECT                    MESSAGE
default     40s         Normal   DisruptionBlocked   nodeclaim/default-a1b2c   Nodeclaim does not have an associated node
default     35s         Normal   DisruptionBlocked   nodeclaim/default-d3e4f   Nodeclaim does not have an associated node
default     30s         Normal   DisruptionBlocked   nodeclaim/default-a1b2c   Nodeclaim does not have an associated node
",
        )
        .diagnoses[0];
        let rows: Vec<(usize, usize)> = d.evidence.iter().map(|e| (e.line, e.count)).collect();
        assert_eq!(rows, [(2, 2), (3, 1)]);
        assert_eq!(d.objects.len(), 2);
    }

    #[test]
    fn ages() {
        assert_eq!(age_minutes("14m"), Some(14));
        assert_eq!(age_minutes("4m59s"), Some(4));
        assert_eq!(age_minutes("2m (x31 over 3h)"), Some(180));
        assert_eq!(age_minutes("2d"), Some(2880));
        assert_eq!(age_minutes("<unknown>"), None);
        assert_eq!(age_minutes("14"), None);
    }
}
