//! KW309 spot-interrupted.

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, Message};
use crate::rules::kw3xx::common::{
    claim_ref, join_names, named, node_of, nodeclaim_of, push_unique, Api,
};
use crate::rules::kw3xx::interruption::{
    action, is_rebalance_kind, is_rule_description, message_kind, notice_objects, nth,
    nth_drains_spot,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW309",
    slug: "spot-interrupted",
    title: "EC2 reclaimed the instance (spot interruption or instance state change)",
    severity: Severity::Info,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The node vanished because EC2 took the instance back: a spot interruption (two minutes'
warning), or the instance was stopped or terminated outside Karpenter, or AWS scheduled it for
maintenance. Karpenter received the notice from its interruption queue, tainted and drained the
node and deleted the NodeClaim; Pending pods get a new node.

Signals: events `SpotInterrupted` (`Spot interruption warning was triggered`),
`TerminatingOnInterruption` (`Interruption triggered termination for the NodeClaim` / `... for
the Node`), `InstanceTerminating` (`Instance is terminating`), `InstanceStopping`,
`InstanceUnhealthy`, `CapacityReservationInstanceInterrupted`; the log `initiating delete from
interruption message` with its `messageKind` (`spot_interrupted`, `instance_terminated`,
`instance_stopped`, `scheduled_change`, `capacity_reservation_interrupted`); pre-v0.32 `deleted
node from interruption message` (`messageKind` `SpotInterruptionKind`, `StateChangeKind`,
`ScheduledChangeKind`).
Not an instance EC2 terminated at launch because of its volumes' KMS key: KW307 explains that
termination, and this rule leaves its lines (and its NodeClaims' state changes) to it. Nor an
`InstanceTerminating` / `InstanceStopping` after Karpenter itself started disrupting that node
(`DisruptionTerminating`, `Disrupting Node: Empty/Delete`, a `disrupting node(s)` log line): the
state-change notice of Karpenter's own termination comes back through the same queue.

## Why it happens
Spot capacity is reclaimed when EC2 needs it back; pools of one instance type in one zone are
interrupted most. Instance state changes come from people, scripts or other controllers acting
on the instance.

## How to fix
Nothing, for one interruption. If they are frequent, let the NodePool choose from many
instance families, sizes and zones (Karpenter's price-capacity-optimized spot choice then avoids
the most interrupted pools), keep interruption-sensitive workloads on on-demand, and protect
availability with PodDisruptionBudgets and several replicas.
"#,
};

const SIGNALS: &[&str] = &[
    "spotinterrupted",
    "spot interruption warning was triggered",
    "terminatingoninterruption",
    "interruption triggered termination",
    "instanceterminating",
    "instance is terminating",
    "instancestopping",
    "instance is stopping",
    "an unhealthy warning was triggered for the instance",
    "capacity reservation interruption warning was triggered",
    "initiating delete from interruption message",
    "deleted node from interruption message",
    "spot itn received",
];

/// The event texts of an interruption (A `pkg/controllers/interruption/events/events.go`, NTH).
const EVENT_TEXTS: &[(&str, &str)] = &[
    (
        "Spot interruption warning was triggered",
        "spot interruption",
    ),
    (
        "Interruption triggered termination for the",
        "termination on interruption",
    ),
    ("Instance is terminating", "instance terminating"),
    ("Instance is stopping", "instance stopping"),
    (
        "An unhealthy warning was triggered for the instance",
        "scheduled maintenance",
    ),
    (
        "Capacity Reservation interruption warning was triggered",
        "capacity reservation interruption",
    ),
    ("Spot ITN received", "spot interruption (seen by NTH)"),
];

/// What kind of interruption a message reports, if it reports one.
fn kind_of(facts: &Facts, m: &Message) -> Option<String> {
    if is_rule_description(m) {
        return None;
    }
    let t = &m.text;
    if contains_ignore_ascii_case(t, "initiating delete from interruption message")
        || contains_ignore_ascii_case(t, "deleted node from interruption message")
    {
        let kind = message_kind(facts, m).unwrap_or_else(|| "interruption".to_string());
        return (!is_rebalance_kind(&kind)).then(|| describe_kind(&kind));
    }
    if let Some(reason) = &m.reason {
        match reason.as_str() {
            "SpotInterrupted" => return Some("spot interruption".into()),
            "InstanceTerminating" => return Some("instance terminating".into()),
            "InstanceStopping" => return Some("instance stopping".into()),
            "InstanceUnhealthy" => return Some("scheduled maintenance".into()),
            "CapacityReservationInstanceInterrupted" => {
                return Some("capacity reservation interruption".into())
            }
            "TerminatingOnInterruption" => return Some("termination on interruption".into()),
            _ => {}
        }
    }
    EVENT_TEXTS
        .iter()
        .find(|(s, _)| contains_ignore_ascii_case(t, s))
        .map(|(_, k)| k.to_string())
}

fn describe_kind(kind: &str) -> String {
    let k = kind.to_ascii_lowercase().replace('_', "");
    if k.contains("spotinterrupt") {
        "spot interruption".into()
    } else if k.contains("terminated") || k.contains("statechange") {
        "instance state change (terminated or stopped)".into()
    } else if k.contains("stopped") {
        "instance stopping".into()
    } else if k.contains("scheduledchange") {
        "scheduled maintenance".into()
    } else if k.contains("capacityreservation") {
        "capacity reservation interruption".into()
    } else {
        kind.to_string()
    }
}

/// What KW307 explains: an instance EC2 terminated at launch because of its volumes' KMS key is
/// not reclaimed capacity. The lines KW307 cites, and its NodeClaims.
fn kms_explained(facts: &Facts) -> (Vec<Evidence>, Vec<String>) {
    let mut lines = Vec::new();
    let mut claims = Vec::new();
    for d in (super::kw307_kms_key_denies_ebs::RULE.check)(facts) {
        lines.extend(d.evidence);
        claims.extend(d.object.into_iter().chain(d.objects).map(|o| o.name));
    }
    (lines, claims)
}

/// Whether Karpenter was itself disrupting the node or NodeClaim `m` is about, before `m`.
fn disrupted_by_karpenter(
    facts: &Facts,
    endings: &crate::rules::kw4xx::disruption::Endings<'_>,
    m: &Message,
) -> bool {
    let subject = node_of(facts, m)
        .map(|n| crate::facts::ObjectRef::new("Node", None, &n))
        .or_else(|| {
            nodeclaim_of(facts, m).map(|c| crate::facts::ObjectRef::new("NodeClaim", None, &c))
        });
    subject.is_some_and(|s| endings.disrupted_before(m, &s).is_some())
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let (kms_lines, kms_claims) = kms_explained(facts);
    let endings = crate::rules::kw4xx::disruption::Endings::new(facts);
    let mut hits: Vec<&Message> = Vec::new();
    let mut kinds: Vec<String> = Vec::new();
    let mut nodes: Vec<String> = Vec::new();
    let mut nodeclaims: Vec<String> = Vec::new();
    let mut actions: Vec<String> = Vec::new();
    for m in &facts.messages {
        let Some(kind) = kind_of(facts, m) else {
            continue;
        };
        // The same termination KW307 explains (its evidence, or a state change of its
        // NodeClaim) is not reported twice.
        let state_change = !kind.starts_with("spot") && !kind.contains("rebalance");
        if kms_lines
            .iter()
            .any(|e| e.source == m.evidence.source && e.line == m.evidence.line)
            || (state_change && nodeclaim_of(facts, m).is_some_and(|n| kms_claims.contains(&n)))
        {
            continue;
        }
        // Karpenter's own termination (it was disrupting the node: Empty/Delete, Drifted)
        // comes back as an EC2 state-change notice: nothing outside Karpenter took it.
        let echo = matches!(kind.as_str(), "instance terminating" | "instance stopping")
            || kind.starts_with("instance state change");
        if echo && disrupted_by_karpenter(facts, &endings, m) {
            continue;
        }
        // EC2 terminates the spot instance it reclaims with its own state-change notice: the
        // same interruption, not someone outside Karpenter.
        let same = |o: &Message| {
            let node = node_of(facts, m);
            (node.is_some() && node_of(facts, o) == node)
                || nodeclaim_of(facts, m).is_some_and(|n| nodeclaim_of(facts, o) == Some(n))
        };
        let spot_echo = echo
            && facts
                .messages
                .iter()
                .any(|o| same(o) && kind_of(facts, o).as_deref() == Some("spot interruption"));
        hits.push(m);
        if kind != "termination on interruption" && !spot_echo {
            push_unique(&mut kinds, kind);
        }
        if let Some(n) = nodeclaim_of(facts, m) {
            push_unique(&mut nodeclaims, n);
        }
        if let Some(n) = node_of(facts, m) {
            push_unique(&mut nodes, n);
        }
        if let Some(a) = action(facts, m) {
            push_unique(&mut actions, a);
        }
    }
    if hits.is_empty() {
        return Vec::new();
    }
    if kinds.is_empty() {
        kinds.push("interruption".into());
    }
    // NTH beside Karpenter handles the same notices, unless it is shown not to drain spot
    // nodes (queue mode for a node group's ASG hooks, spot draining off).
    let nth_present = nth(facts).is_some_and(|n| !n.seen_as.is_empty()) && nth_drains_spot(facts);
    // Before v0.32 a Machine of a Provisioner (and before v0.28 no Machine at all: Karpenter
    // deleted the node itself, `deleted node from interruption message`).
    let api = Api::of(facts, &nodeclaims);
    let mut subject = match (nodes.is_empty(), nodeclaims.is_empty()) {
        (false, false) => format!(
            "{} ({})",
            named("Node", &nodes),
            named(api.claim(), &nodeclaims)
        ),
        (false, true) => named("Node", &nodes),
        (true, false) => named(api.claim(), &nodeclaims),
        (true, true) => "The node".to_string(),
    };
    subject.push_str(&format!(
        " went away because of an EC2 {}",
        join_names(&kinds)
    ));
    let mut summary = subject;
    // Several interrupted nodes read in the plural: each was drained and its NodeClaim deleted.
    let several = nodes.len() > 1 || nodeclaims.len() > 1;
    // Older releases deleted the node itself and say so (`deleted node from interruption
    // message`); so does any release before v0.28, which had no Machine.
    let node_deleted = nodeclaims.is_empty()
        && (api.legacy
            || hits.iter().any(|m| {
                contains_ignore_ascii_case(&m.text, "deleted node from interruption message")
            }));
    let (them, claims, pods, vanished) = match (several, node_deleted) {
        (true, false) => (
            "them",
            format!("their {}s", api.claim()),
            "their",
            "the vanished nodes",
        ),
        (false, false) => (
            "it",
            format!("the {}", api.claim()),
            "its",
            "the vanished node",
        ),
        (true, true) => ("them", "them".to_string(), "their", "the vanished nodes"),
        (false, true) => ("it", "it".to_string(), "its", "the vanished node"),
    };
    if actions.is_empty() {
        summary.push_str(&format!(": Karpenter's interruption handling drained {them} and deleted {claims}; {pods} pods were rescheduled on new capacity."));
    } else {
        summary.push_str(&format!(
            ": Karpenter acted on {them} ({}) and deleted {claims}; {pods} pods were rescheduled on new capacity.",
            actions.join(", ")
        ));
    }
    summary.push_str(&format!(
        " This explains {vanished}; nothing needs fixing unless it keeps happening."
    ));
    if nth_present {
        summary.push_str(" AWS Node Termination Handler also runs in this cluster and handles the same notices (KW308).");
    }
    let state_change = kinds.iter().any(|k| {
        k.starts_with("instance state change")
            || k == "instance stopping"
            || k == "instance terminating"
    });
    // The pools of the interrupted nodes: the NodeClaims' (object, log, generated name), the
    // nodes' labels.
    let pools = crate::rules::kw4xx::disruption::subject_nodepools(
        facts,
        &notice_objects(facts, &nodes, &nodeclaims)
            .into_iter()
            .chain(nodeclaims.iter().map(|n| claim_ref(facts, n)))
            .collect::<Vec<_>>(),
    );
    let the_pool = match pools.as_slice() {
        [] => format!("the {}", api.pool()),
        [one] => format!(
            "{} {one} (`kubectl edit {} {one}`)",
            api.pool(),
            api.pool().to_ascii_lowercase()
        ),
        several => format!("{}s {}", api.pool(), join_names(several)),
    };
    let mut steps = Vec::new();
    if state_change {
        steps.push(Remediation::command(
            "Something outside Karpenter stopped or terminated the instance (a person, a script, an ASG or another controller): find who in CloudTrail:",
            "aws cloudtrail lookup-events --lookup-attributes AttributeKey=EventName,AttributeValue=TerminateInstances --max-results 20 --query 'Events[].[EventTime,Username,Resources[0].ResourceName]' --output table",
        ));
    }
    if kinds.iter().any(|k| k == "scheduled maintenance") {
        steps.push(Remediation::command(
            "AWS scheduled the instance for maintenance or retirement (an AWS Health event), whatever its capacity type: nothing to fix in Karpenter. See what else is scheduled:",
            "aws ec2 describe-instance-status --filters Name=event.code,Values=instance-reboot,system-reboot,system-maintenance,instance-retirement,instance-stop --query 'InstanceStatuses[].[InstanceId,AvailabilityZone,Events[0].Code,Events[0].NotBefore]' --output table",
        ));
    }
    // Spot advice only where spot is involved (or the notice's kind is not known).
    let spot = kinds
        .iter()
        .any(|k| k.starts_with("spot") || k == "interruption");
    if !spot {
        steps.push(Remediation::text(
            "Run workloads that must not stop with several replicas and a PodDisruptionBudget, so that the next notice moves them without an outage; pods with `karpenter.sh/do-not-disrupt` still go when EC2 takes the instance.",
        ));
    } else {
        steps.extend([
        Remediation::command(
            "See how often it happens:",
            "kubectl get events -A --field-selector reason=SpotInterrupted --sort-by=.lastTimestamp",
        ),
        Remediation::yaml(
            format!("If interruptions are frequent, let {the_pool} choose from many families, sizes and zones (Karpenter then picks the least interrupted spot pools), and keep on-demand as a fallback:"),
            if api.legacy {
                // A v1alpha5 Provisioner's requirements are top-level in its spec.
                "spec:\n  requirements:\n    - key: karpenter.k8s.aws/instance-category\n      operator: In\n      values: [\"c\", \"m\", \"r\"]\n    - key: karpenter.k8s.aws/instance-generation\n      operator: Gt\n      values: [\"5\"]\n    - key: karpenter.sh/capacity-type\n      operator: In\n      values: [\"spot\", \"on-demand\"]\n"
            } else {
                "spec:\n  template:\n    spec:\n      requirements:\n        - key: karpenter.k8s.aws/instance-category\n          operator: In\n          values: [\"c\", \"m\", \"r\"]\n        - key: karpenter.k8s.aws/instance-generation\n          operator: Gt\n          values: [\"5\"]\n        - key: karpenter.sh/capacity-type\n          operator: In\n          values: [\"spot\", \"on-demand\"]\n"
            },
        ),
        Remediation::text(format!(
            "Run interruption-sensitive workloads with several replicas and a PodDisruptionBudget, or on an on-demand {}.",
            api.pool()
        )),
    ]);
    }
    let objects = notice_objects(facts, &nodes, &nodeclaims);
    vec![Diagnosis::new(&META, summary)
        .with_objects(&objects)
        .with_node_pools(&pools)
        .with_messages_per_object(hits.iter().copied(), &|m: &Message| m.object.clone())
        .with_related(if nth_present { &["KW308"] } else { &[] })
        .with_remediation(steps)]
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn nth_with_spot_draining_off_handles_no_spot_notice() {
        let events = "NAMESPACE   LAST SEEN   TYPE     REASON            OBJECT                                MESSAGE
default     31m         Normal   SpotInterrupted   node/ip-10-9-120-33.ec2.internal      Spot interruption warning was triggered
default     12m         Normal   CordonAndDrain    node/ip-10-9-8-14.ec2.internal        Node successfully cordoned and drained
default     12m         Normal   ASGLifecycle      node/ip-10-9-8-14.ec2.internal        ASG Lifecycle Termination event received. Instance will be interrupted at 2026-12-06 21:40:11 +0000 UTC
";
        let values = "aws-node-termination-handler\tkube-system\t7\tdeployed\nenableSqsTerminationDraining: true\nenableSpotInterruptionDraining: false\n\n";
        let d = &check_only("KW309", &format!("{values}{events}")).diagnoses[0];
        assert!(d.related.is_empty(), "{:?}", d.related);
        assert!(!d.summary.contains("KW308"), "{}", d.summary);
        // Its default (IMDS mode drains on spot notices): it handles the same notices.
        let d = &check_only(
            "KW309",
            &format!(
                "aws-node-termination-handler\tkube-system\t7\tdeployed\n\n{}",
                events.lines().take(2).collect::<Vec<_>>().join("\n")
            ),
        )
        .diagnoses[0];
        assert_eq!(d.related, ["KW308"]);
    }

    #[test]
    fn the_spot_advice_names_the_interrupted_nodes_nodepool() {
        let log = r#"{"level":"INFO","time":"2026-12-06T21:12:30.575Z","logger":"controller","message":"initiating delete from interruption message","controller":"interruption","queue":"Karpenter-prod-eu","messageKind":"spot_interrupted","NodeClaim":{"name":"spot-batch-7lqht"},"action":"CordonAndDrain","Node":{"name":"ip-10-70-41-18.eu-west-3.compute.internal"}}"#;
        let d = &check_only("KW309", log).diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("spot-batch"));
        assert!(
            d.remediation.iter().any(|r| r
                .text
                .contains("let NodePool spot-batch (`kubectl edit nodepool spot-batch`) choose")),
            "{:?}",
            d.remediation
        );
    }

    #[test]
    fn scheduled_maintenance_gets_no_spot_advice() {
        let report = check_only(
            "KW309",
            r#"{"level":"INFO","time":"2025-03-03T03:00:00.000Z","logger":"controller","message":"initiating delete from interruption message","messageKind":"scheduled_change","NodeClaim":{"name":"ondemand-x7k2p"},"action":"CordonAndDrain","Node":{"name":"ip-10-0-9-9.ec2.internal"}}"#,
        );
        let steps = &report.diagnoses[0].remediation;
        assert!(
            steps[0]
                .command
                .as_deref()
                .is_some_and(|c| c.contains("describe-instance-status")),
            "{steps:?}"
        );
        assert!(
            !steps.iter().any(|r| r.text.contains("spot")
                || r.command
                    .as_deref()
                    .is_some_and(|c| c.contains("SpotInterrupted"))),
            "{steps:?}"
        );
    }

    /// Before v0.32: a Machine of a Provisioner, whose requirements sit at the top of its spec;
    /// a line that only says Karpenter deleted the node does not invent a NodeClaim.
    #[test]
    fn old_releases_get_their_own_words() {
        let machine = "2023-09-01T10:00:00.000Z\tINFO\tcontroller.interruption\tdeleted node from interruption message\t{\"commit\": \"61b3e1e\", \"queue\": \"q\", \"messageKind\": \"SpotInterruptionKind\", \"machine\": \"spot-7xk2p\", \"node\": \"ip-1\", \"action\": \"CordonAndDelete\"}";
        let d = &check_only("KW309", machine).diagnoses[0];
        assert!(
            d.summary.contains("(Machine spot-7xk2p)") && d.summary.contains("deleted the Machine"),
            "{}",
            d.summary
        );
        let yaml = d
            .remediation
            .iter()
            .find_map(|r| r.yaml.as_deref())
            .unwrap();
        assert!(yaml.starts_with("spec:\n  requirements:\n"), "{yaml}");
        assert!(d.remediation.iter().all(|r| !r.text.contains("NodePool")));
        let node_only = machine.replace("\"machine\": \"spot-7xk2p\", ", "");
        let d = &check_only("KW309", &node_only).diagnoses[0];
        assert!(
            d.summary.contains("and deleted it;") && !d.summary.contains("NodeClaim"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn every_form() {
        for text in [
            "95s         Warning   SpotInterrupted               nodeclaim/spot-builders-x7k2p               Spot interruption warning was triggered",
            "95s         Warning   TerminatingOnInterruption     node/ip-10-0-101-113.ec2.internal           Interruption triggered termination for the Node",
            "3m   Warning   InstanceTerminating   node/ip-1   Instance is terminating",
            r#"{"level":"INFO","message":"initiating delete from interruption message","controller":"interruption","queue":"Karpenter-my-cluster","messageKind":"spot_interrupted","NodeClaim":{"name":"spot-builders-x7k2p"},"action":"CordonAndDrain","Node":{"name":"ip-10-0-101-113.ec2.internal"}}"#,
            "2023-03-01T10:00:00.000Z\tINFO\tcontroller.interruption\tdeleted node from interruption message\t{\"commit\": \"5a7faa0\", \"queue\": \"Karpenter-demo\", \"messageKind\": \"SpotInterruptionKind\", \"node\": \"ip-192-168-1-1.ec2.internal\", \"action\": \"CordonAndDelete\"}",
            "2023-03-01T10:00:00.000Z\tINFO\tcontroller.interruption\tdeleted node from interruption message\t{\"commit\": \"5a7faa0\", \"messageKind\": \"StateChangeKind\", \"node\": \"ip-192-168-1-1.ec2.internal\"}",
        ] {
            assert_eq!(ids(&check_only("KW309", text)), ["KW309"], "{text}");
        }
    }

    #[test]
    fn names_node_kind_and_action() {
        let report = check_only(
            "KW309",
            r#"{"level":"INFO","message":"initiating delete from interruption message","controller":"interruption","messageKind":"spot_interrupted","NodeClaim":{"name":"spot-builders-x7k2p"},"action":"CordonAndDrain","Node":{"name":"ip-10-0-101-113.ec2.internal"}}"#,
        );
        let d = &report.diagnoses[0];
        assert!(d.summary.starts_with("Node ip-10-0-101-113.ec2.internal (NodeClaim spot-builders-x7k2p) went away because of an EC2 spot interruption"), "{}", d.summary);
        assert!(d.summary.contains("CordonAndDrain"), "{}", d.summary);
        let old = check_only(
            "KW309",
            "INFO\tcontroller.interruption\tdeleted node from interruption message\t{\"messageKind\": \"StateChangeKind\", \"node\": \"ip-1.ec2.internal\"}",
        );
        assert!(
            old.diagnoses[0].summary.contains("instance state change"),
            "{}",
            old.diagnoses[0].summary
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            "2m   Normal   SpotRebalanceRecommendation   node/ip-1   Spot rebalance recommendation was triggered",
            r#"{"level":"INFO","message":"initiating delete from interruption message","messageKind":"rebalance_recommendation","action":"NoAction"}"#,
            "Rebalance recommendation received. Instance will be cordoned at 2025-10-14T07:52:06Z",
        ] {
            assert!(ids(&check_only("KW309", text)).is_empty(), "{text}");
        }
    }
}
