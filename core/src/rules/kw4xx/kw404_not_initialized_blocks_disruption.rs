//! KW404 not-initialized-blocks-disruption.

use std::collections::BTreeMap;

use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw3xx::common::Initialized;
use crate::rules::kw4xx::disruption::{
    described_event, hits, launch_time_only, node_name, push_unique, same_subject, subject_of,
    subjects_label, unescaped, Hits,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW404",
    slug: "not-initialized-blocks-disruption",
    title: "Karpenter does not disrupt a node that never initialized",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter never consolidates, replaces or expires a node it has not marked initialized: the
node stays, costs money and may hold pods that cannot run well on it.

Signals: the `DisruptionBlocked` texts `state node isn't initialized` (v1.0 to v1.1, after
`Cannot disrupt Node: `) and `Node isn't initialized` (v1.2+).

## Why it happens
Initialization needs three things: the node Ready, every resource the NodeClaim requested
registered (GPUs, `vpc.amazonaws.com/pod-eni`...), and the NodePool's startup taints removed by
the agents that own them. One of them never happened (KW306 names which).

## How to fix
Find what initialization waits for (`kubectl get nodeclaim <nodeclaim> -o yaml`: the
`Initialized` condition's reason and message) and fix that agent or resource (KW306). A node
that cannot recover can be deleted (`kubectl delete nodeclaim <nodeclaim>`): Karpenter drains
it and launches a replacement if pods need one.
"#,
};

const SIGNALS: &[&str] = &["isn't initialized"];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let found = hits(facts, |t| {
        contains_ignore_ascii_case(t, "isn't initialized")
    });
    let found = without_initialized(facts, found);
    if found.is_empty() {
        return Vec::new();
    }
    let on = subjects_label(&found.subjects);
    let summary = format!(
        "Karpenter does not disrupt {on}: it isn't initialized (Ready, its requested resources registered and its startup taints removed), and Karpenter never consolidates, replaces or expires a node before that. KW306 explains what initialization waits for."
    );
    let claim = found
        .subjects
        .iter()
        .find(|s| s.kind == "NodeClaim")
        .map(|s| s.name.clone());
    let node = node_name(facts, &found.subjects);
    // About the node only: its NodeClaim is often in the input all the same.
    let claim = claim.or_else(|| node.as_deref().and_then(|n| facts.claim_of_node(n)));
    let mut steps = Vec::new();
    match &claim {
        Some(c) => steps.push(Remediation::command(
            "Read the Initialized condition: its reason says what is missing (a startup taint, an unregistered resource, the node not Ready):",
            format!(
                "kubectl get nodeclaim {c} -o jsonpath='{{range .status.conditions[?(@.type==\"Initialized\")]}}{{.reason}}: {{.message}}{{\"\\n\"}}{{end}}'"
            ),
        )),
        None => steps.push(Remediation::command(
            "Find the node's NodeClaim and read its Initialized condition:",
            format!(
                "kubectl get nodeclaim -o wide | grep {}",
                node.as_deref().unwrap_or("<node>")
            ),
        )),
    }
    steps.push(Remediation::command(
        "Check the node's taints and conditions (a startup taint nobody removes, Ready=False):",
        format!(
            "kubectl describe node {}",
            node.as_deref().unwrap_or("<node>")
        ),
    ));
    steps.push(Remediation::command(
        "A node that cannot recover: delete its NodeClaim; Karpenter drains it and launches a replacement if pods need one.",
        format!("kubectl delete nodeclaim {}", claim.as_deref().unwrap_or("<nodeclaim>")),
    ));
    vec![Diagnosis::new(&META, summary)
        .with_object(found.subjects.first())
        .with_messages_per_object(found.messages.iter().copied(), &subject_of)
        .with_related(&["KW306"])
        .with_remediation(steps)]
}

/// The messages about a node or NodeClaim the objects do not show initialized: Karpenter says
/// `Node isn't initialized` in the first minute of every node, which a describe keeps in its
/// events long after the node initialized.
fn without_initialized<'a>(facts: &Facts, found: Hits<'a>) -> Hits<'a> {
    let initialized = Initialized::new(facts);
    let since = shown_initialized_by_subject(facts);
    let mut out = Hits::default();
    for m in found.messages {
        let subject = subject_of(m);
        let name_of = |kind: &str| {
            subject
                .as_ref()
                .filter(|s| s.kind == kind)
                .map(|s| s.name.as_str())
        };
        // A masked name (`<redacted>`) names no object in particular: the initialized state of
        // an object so masked is its own only in that object's describe.
        let named = subject
            .as_ref()
            .is_some_and(|s| !crate::rules::text::is_unnumbered_mask(&s.name))
            || described_event(facts, m);
        if (named && initialized.shown(name_of("NodeClaim"), name_of("Node")))
            || subject
                .as_ref()
                .is_some_and(|s| initialized_since(facts, &since, m, s))
            || subject
                .as_ref()
                .is_some_and(|s| s.kind == "Node" && launch_time_only(facts, m, &s.name))
        {
            continue;
        }
        if let Some(s) = subject.clone() {
            push_unique(&mut out.subjects, s);
        }
        out.messages.push(m);
    }
    out
}

/// What Karpenter says only of an initialized node: its `Initialized` condition turning True,
/// and the disruption decisions it makes after the initialization check (consolidation
/// verdicts, nominations, PDBs, do-not-disrupt, disrupting it). Initialization is never undone,
/// so any of them about the same Node or NodeClaim, in any order in the paste, means the
/// `isn't initialized` event is from its first minute.
const AFTER_INITIALIZATION: &[&str] = &[
    "can't remove without creating",
    "can't replace with a cheaper node",
    "can't replace with a lower-priced node",
    "spottospotconsolidation",
    "has consolidation disabled",
    "has non-empty consolidation disabled",
    "but node is not empty",
    "nominated for a pending pod",
    "prevents pod evictions",
    "karpenter.sh/do-not-disrupt",
    "not all pods would schedule",
    "disrupting node:",
    "disrupting nodeclaim:",
];

/// The messages saying what Karpenter says only of an initialized node
/// ([`AFTER_INITIALIZATION`], the `Initialized` transition to True), by the object they are
/// about: read once, since every `isn't initialized` message asks.
fn shown_initialized_by_subject(facts: &Facts) -> BTreeMap<ObjectRef, Vec<&Message>> {
    let mut out: BTreeMap<ObjectRef, Vec<&Message>> = BTreeMap::new();
    for m in &facts.messages {
        let t = unescaped(&m.text);
        let transitioned = contains_ignore_ascii_case(&t, "Type: Initialized,")
            && contains_ignore_ascii_case(&t, "-> True");
        let shows = transitioned
            || m.reason.as_deref() == Some("Unconsolidatable")
            || AFTER_INITIALIZATION
                .iter()
                .any(|s| contains_ignore_ascii_case(&t, s));
        if let Some(subject) = subject_of(m).filter(|_| shows) {
            out.entry(subject).or_default().push(m);
        }
    }
    out
}

fn initialized_since(
    facts: &Facts,
    since: &BTreeMap<ObjectRef, Vec<&Message>>,
    blocked: &Message,
    subject: &ObjectRef,
) -> bool {
    since.get(subject).is_some_and(|said| {
        said.iter()
            .any(|m| same_subject(facts, blocked, m, subject))
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn both_wordings() {
        for text in [
            "1m Normal DisruptionBlocked node/ip-10-0-71-41.ec2.internal Node isn't initialized",
            "Normal  DisruptionBlocked  9m  karpenter  Node isn't initialized",
            "Cannot disrupt Node: state node isn't initialized",
        ] {
            let report = check_only("KW404", text);
            assert_eq!(ids(&report), ["KW404"], "{text}");
            assert_eq!(report.diagnoses[0].related, ["KW306"]);
        }
        let d = &check_only(
            "KW404",
            "1m Normal DisruptionBlocked node/ip-10-0-71-41.ec2.internal Node isn't initialized",
        )
        .diagnoses[0];
        assert!(d.summary.contains("node ip-10-0-71-41.ec2.internal"));
        assert_eq!(
            d.remediation[1].command.as_deref(),
            Some("kubectl describe node ip-10-0-71-41.ec2.internal")
        );
    }

    #[test]
    fn a_launch_time_event_of_a_node_now_initialized_is_history() {
        // Karpenter says `Node isn't initialized` in every node's first minute; the describe
        // keeps the event after the node initialized.
        let node = "Name:               ip-10-0-44-13.us-east-2.compute.internal
Roles:              <none>
Labels:             karpenter.sh/nodepool=default
                    karpenter.sh/initialized=true
Taints:             <none>
Events:
  Type    Reason             Age   From       Message
  ----    ------             ----  ----       -------
  Normal  DisruptionBlocked  9m    karpenter  Node isn't initialized
";
        assert!(ids(&check_only("KW404", node)).is_empty());
        let claim = "apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-7vq2k
status:
  conditions:
  - {type: Initialized, status: \"True\", reason: Initialized}
---
LAST SEEN   TYPE     REASON              OBJECT                    MESSAGE
10m         Normal   DisruptionBlocked   nodeclaim/default-7vq2k   Node isn't initialized
10m         Normal   DisruptionBlocked   nodeclaim/default-k2x9p   Node isn't initialized
";
        let report = check_only("KW404", claim);
        assert_eq!(ids(&report), ["KW404"]);
        let summary = &report.diagnoses[0].summary;
        assert!(summary.contains("NodeClaim default-k2x9p"), "{summary}");
        assert!(!summary.contains("default-7vq2k"), "{summary}");
        // Without the initialized label the node is not shown initialized.
        let unlabelled = node.replace("                    karpenter.sh/initialized=true\n", "");
        assert_eq!(ids(&check_only("KW404", &unlabelled)), ["KW404"]);
    }

    #[test]
    fn near_misses() {
        for text in [
            "Initialized  Unknown  NodeNotFound  Node not registered with cluster",
            "Normal DisruptionBlocked Node is nominated for a pending pod",
        ] {
            assert!(ids(&check_only("KW404", text)).is_empty(), "{text}");
        }
    }
}
