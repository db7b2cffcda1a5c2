//! KW311 spot-rebalance-recommendation.

use crate::facts::{contains_ignore_ascii_case, Facts, Message};
use crate::rules::kw3xx::common::{
    join_names, json_field_in_text, named, node_of, nodeclaim_of, push_unique,
};
use crate::rules::kw3xx::interruption::{
    is_rebalance_kind, is_rule_description, message_kind, notice_objects, nth, nth_log_node,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW311",
    slug: "spot-rebalance-recommendation",
    title: "EC2 sent a spot rebalance recommendation (not an interruption)",
    severity: Severity::Info,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
EC2 told the spot instance that its capacity pool is at elevated risk of interruption. It is
advice, not an interruption: the instance keeps running. Karpenter records it as an event on
the Node and NodeClaim and does not drain on it. Not KW309: nothing was reclaimed.

Signals: events `SpotRebalanceRecommendation` (`Spot rebalance recommendation was triggered`),
older `InstanceSpotRebalanceRecommendation` (`A spot rebalance recommendation was triggered for
the node`), the interruption log's `messageKind` `rebalance_recommendation`
(`RebalanceRecommendationKind` before v0.32), and AWS Node Termination Handler's own
`Rebalance recommendation received` event.

## Why it happens
Spot pools change; EC2 sends rebalance recommendations ahead of possible interruptions, often
some time before (or instead of) one.

## How to fix
Nothing, unless something else drains nodes on it: AWS Node Termination Handler with
`enableRebalanceDraining: true` does, and with Karpenter that becomes a loop of short-lived nodes
(KW308).
"#,
};

const SIGNALS: &[&str] = &[
    "spotrebalancerecommendation",
    "spot rebalance recommendation was triggered",
    "a spot rebalance recommendation was triggered for the node",
    "rebalance_recommendation",
    "rebalancerecommendationkind",
    "rebalance recommendation received",
];

fn is_hit(facts: &Facts, m: &Message) -> bool {
    if is_rule_description(m) {
        return false;
    }
    let t = &m.text;
    if m.reason.as_deref().is_some_and(|r| {
        r == "SpotRebalanceRecommendation" || r == "InstanceSpotRebalanceRecommendation"
    }) {
        return true;
    }
    if [
        "Spot rebalance recommendation was triggered",
        "A spot rebalance recommendation was triggered for the node",
        "Rebalance recommendation received",
        "SpotRebalanceRecommendation",
    ]
    .iter()
    .any(|s| contains_ignore_ascii_case(t, s))
    {
        return true;
    }
    contains_ignore_ascii_case(t, "interruption message")
        && message_kind(facts, m).is_some_and(|k| is_rebalance_kind(&k))
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<&Message> = facts.messages.iter().filter(|m| is_hit(facts, m)).collect();
    if hits.is_empty() {
        return Vec::new();
    }
    let mut nodes: Vec<String> = Vec::new();
    let mut nodeclaims: Vec<String> = Vec::new();
    for m in &hits {
        if let Some(n) = nodeclaim_of(facts, m) {
            push_unique(&mut nodeclaims, n);
        }
        // NTH's event-store line names the node as `"NodeName":"<n>"`.
        if let Some(n) = node_of(facts, m)
            .or_else(|| nth_log_node(&m.text))
            .or_else(|| json_field_in_text(&m.text, "NodeName"))
        {
            push_unique(&mut nodes, n);
        }
    }
    // NTH with rebalance monitoring cordons the node (`Instance will be cordoned`), and with
    // rebalance draining requests its drain (`Requesting instance drain ...
    // kind=REBALANCE_RECOMMENDATION`): the loop KW308 describes.
    let nth_acts: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| {
            contains_ignore_ascii_case(&m.text, "Instance will be cordoned")
                || (contains_ignore_ascii_case(&m.text, "Requesting instance drain")
                    && contains_ignore_ascii_case(&m.text, "REBALANCE_RECOMMENDATION"))
        })
        .collect();
    let nth_drains = nth_acts
        .iter()
        .any(|m| contains_ignore_ascii_case(&m.text, "Requesting instance drain"));
    let nth = nth(facts).filter(|n| !n.seen_as.is_empty());
    let drained: Vec<String> = nth
        .as_ref()
        .map(|n| {
            n.drained_nodes
                .iter()
                .filter(|d| nodes.contains(d))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let plural = nodes.len().max(nodeclaims.len()) > 1;
    let s = if plural { "s" } else { "" };
    let subject = match (nodes.is_empty(), nodeclaims.is_empty()) {
        (false, false) => format!(
            "spot node{s} {} ({})",
            join_names(&nodes),
            named("NodeClaim", &nodeclaims)
        ),
        (false, true) => format!("spot node{s} {}", join_names(&nodes)),
        (true, false) => format!("spot NodeClaim{s} {}", join_names(&nodeclaims)),
        (true, true) => "a spot node".to_string(),
    };
    // The same nodes' later interruption is KW309's; the recommendation itself did nothing.
    let interrupted = facts.messages.iter().any(|m| {
        (m.reason.as_deref() == Some("SpotInterrupted")
            || contains_ignore_ascii_case(&m.text, "Spot interruption warning was triggered"))
            && (node_of(facts, m).is_some_and(|n| nodes.contains(&n))
                || nodeclaim_of(facts, m).is_some_and(|n| nodeclaims.contains(&n)))
    });
    let outcome = if interrupted {
        "the recommendation itself interrupted nothing (the spot interruption that followed is KW309)"
    } else {
        "but nothing was interrupted"
    };
    // One recommendation shows as a Node event and a NodeClaim event (or NTH's line pair).
    let several = plural || hits.len() > 2;
    let mut summary = format!(
        "EC2 sent {} for {subject}: {} spot pool{s} {} at higher risk of interruption, {outcome}. Karpenter records {} and does not drain on {}.",
        if several {
            "rebalance recommendations"
        } else {
            "a rebalance recommendation"
        },
        if plural { "their" } else { "its" },
        if plural { "are" } else { "is" },
        if several { "them" } else { "it" },
        if several { "them" } else { "it" },
    );
    if drained.is_empty() && !nth_acts.is_empty() {
        summary.push_str(&format!(
            " AWS Node Termination Handler acts on {}: {}",
            if several { "them" } else { "it" },
            if nth_drains {
                "it requested a drain of the node, which Karpenter answers by launching the same capacity again: a loop of short-lived nodes (KW308)."
            } else {
                "it cordons the node, and drains it too when its rebalance draining is on: with Karpenter that becomes a loop of short-lived nodes (KW308)."
            }
        ));
    } else if !drained.is_empty() {
        summary.push_str(&format!(
            " AWS Node Termination Handler did drain {} on {}, which Karpenter answers by launching the same capacity again (KW308).",
            join_names(&drained),
            if plural { "them" } else { "it" }
        ));
    } else if nth.is_some() {
        summary.push_str(" AWS Node Termination Handler also runs here; if it drains on rebalance recommendations, see KW308.");
    } else {
        summary.push_str(" Nothing to fix.");
    }
    let steps = vec![Remediation::command(
        "Nothing to do for Karpenter. To see whether anything else cordons or drains nodes on these recommendations:",
        "kubectl get events -A --field-selector involvedObject.kind=Node --sort-by=.lastTimestamp | grep -i -E 'rebalance|cordon|drain'",
    )];
    let objects = notice_objects(facts, &nodes, &nodeclaims);
    vec![Diagnosis::new(&META, summary)
        .with_objects(&objects)
        .with_messages_per_object(hits.iter().copied(), &|m: &Message| m.object.clone())
        .with_related(if nth.is_some() || !nth_acts.is_empty() {
            &["KW308"]
        } else {
            &[]
        })
        .with_related(if interrupted { &["KW309"] } else { &[] })
        .with_remediation(steps)]
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn every_form() {
        for text in [
            "2m          Normal    SpotRebalanceRecommendation   nodeclaim/spot-builders-x7k2p               Spot rebalance recommendation was triggered",
            "5m   Normal   InstanceSpotRebalanceRecommendation   node/ip-1.ec2.internal   A spot rebalance recommendation was triggered for the node",
            r#"{"level":"INFO","message":"initiating delete from interruption message","controller":"interruption","messageKind":"rebalance_recommendation","action":"NoAction","Node":{"name":"ip-1"}}"#,
            "INFO\tcontroller.interruption\tdeleted node from interruption message\t{\"messageKind\": \"RebalanceRecommendationKind\", \"node\": \"ip-1\"}",
            "default   27m   Normal   RebalanceRecommendation   node/ip-10-3-18-90.us-west-2.compute.internal   Rebalance recommendation received. Instance will be cordoned at 2025-10-14T07:52:06Z",
        ] {
            assert_eq!(ids(&check_only("KW311", text)), ["KW311"], "{text}");
        }
    }

    #[test]
    fn mentions_nth_drains() {
        let report = check_only(
            "KW311",
            "aws-node-termination-handler\tkube-system\t3\tdeployed\n6m   Normal   SpotRebalanceRecommendation   node/ip-10-3-29-7.us-west-2.compute.internal   Spot rebalance recommendation was triggered\n5m   Normal   CordonAndDrain   node/ip-10-3-29-7.us-west-2.compute.internal   Node successfully cordoned and drained",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("did drain ip-10-3-29-7.us-west-2.compute.internal"),
            "{}",
            d.summary
        );
        assert_eq!(d.related, ["KW308"]);
    }

    /// NTH's own log names the node and shows it draining on the recommendation.
    #[test]
    fn nth_log_names_node_and_drain() {
        let d = &check_only(
            "KW311",
            "2024/03/05 11:02:14 INF Adding new event to the event store event={\"Description\":\"Rebalance recommendation received. Instance will be cordoned at 2024-03-05T11:02:12Z \\n\",\"EventID\":\"rebalance-recommendation-6f3c\",\"Kind\":\"REBALANCE_RECOMMENDATION\",\"NodeName\":\"ip-10-8-44-201.eu-west-1.compute.internal\"}\n2024/03/05 11:02:15 INF Requesting instance drain event-id=rebalance-recommendation-6f3c instance-id= kind=REBALANCE_RECOMMENDATION node-name=ip-10-8-44-201.eu-west-1.compute.internal",
        )
        .diagnoses[0];
        assert!(
            d.summary.contains(
                "a rebalance recommendation for spot node ip-10-8-44-201.eu-west-1.compute.internal"
            ),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("requested a drain of the node"),
            "{}",
            d.summary
        );
        assert_eq!(d.related, ["KW308"]);
    }

    #[test]
    fn near_misses() {
        for text in [
            "95s   Warning   SpotInterrupted   node/ip-1   Spot interruption warning was triggered",
            r#"{"level":"INFO","message":"initiating delete from interruption message","messageKind":"spot_interrupted","action":"CordonAndDrain"}"#,
        ] {
            assert!(ids(&check_only("KW311", text)).is_empty(), "{text}");
        }
    }
}
