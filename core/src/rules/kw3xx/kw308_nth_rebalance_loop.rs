//! KW308 nth-rebalance-loop.

use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw3xx::common::{
    join_names, json_field_in_text, karpenter_namespace, name_after, node_of, push_unique,
};
use crate::rules::kw3xx::interruption::{
    drain_cause, is_nth_rebalance_drain, nth, nth_json_field, nth_log_node, spot_evidence,
    DrainCause,
};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW308",
    slug: "nth-rebalance-loop",
    title:
        "AWS Node Termination Handler drains Karpenter's spot nodes: a loop of short-lived nodes",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
AWS Node Termination Handler (NTH) runs beside Karpenter and drains spot nodes on its own, most
often on rebalance recommendations (which Karpenter deliberately ignores). Karpenter then sees
Pending pods, launches the same instance types again, and later removes the emptied node: nodes
live minutes, pods restart again and again, and the cluster pays for the churn.

Inferred (medium confidence) from: NTH installed (DaemonSet or Deployment
`aws-node-termination-handler`, its Helm release), its draining settings on
(`enableRebalanceDraining: true`, `enableSpotInterruptionDraining: true`, env
`ENABLE_REBALANCE_DRAINING=true`, `ENABLE_SPOT_INTERRUPTION_DRAINING=true`) or its own
`CordonAndDrain` / `Rebalance recommendation received` events, together with spot nodes or spot
rebalance/interruption events.

## Why it happens
Karpenter handles spot interruptions itself through its interruption queue and does not drain
on rebalance recommendations, because a recommendation is not an interruption and the
replacement would often be the same type. NTH in IMDS mode does not know that Karpenter will
immediately launch the same capacity again.

## How to fix
Let Karpenter's interruption queue (`settings.interruptionQueue`) handle spot, and remove NTH
from Karpenter-managed nodes, or turn its draining off: `enableSpotInterruptionDraining: false`,
`enableRebalanceDraining: false` (and `enableRebalanceMonitoring: false`).
"#,
};

const SIGNALS: &[&str] = &[
    "aws-node-termination-handler",
    "enablerebalancedraining",
    "enable_rebalance_draining",
    "enablespotinterruptiondraining",
    "enable_spot_interruption_draining",
    "enablerebalancemonitoring",
    "enable_rebalance_monitoring",
    "rebalance recommendation received",
    "cordoned and drained",
    "spot itn received",
    "requesting instance drain",
    // Karpenter relaunching and removing the drained capacity.
    "created nodeclaim",
    "disrupting node",
];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let Some(mut nth) = nth(facts) else {
        return Vec::new();
    };
    // NTH draining a managed node group's instance on an ASG lifecycle hook (queue mode) is not
    // this loop: only its spot and rebalance drains, and drains whose cause is not known, count.
    let other_cause = |m: &Message| drain_cause(facts, m) == DrainCause::Other;
    let other_nodes: Vec<String> = nth
        .drain_messages
        .iter()
        .filter(|m| other_cause(m))
        .filter_map(|m| {
            node_of(facts, m)
                .or_else(|| nth_log_node(&m.text))
                .or_else(|| nth_json_field(facts, m, &["node_name", "node-name"]))
        })
        .collect();
    nth.drain_messages.retain(|m| !other_cause(m));
    nth.drained_nodes.retain(|n| !other_nodes.contains(n));
    let drains = !nth.draining.is_empty() || !nth.drain_messages.is_empty();
    if nth.seen_as.is_empty() || !drains || !spot_evidence(facts) {
        return Vec::new();
    }
    let rebalance: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| {
            contains_ignore_ascii_case(&m.text, "Spot rebalance recommendation was triggered")
                || contains_ignore_ascii_case(&m.text, "kind=REBALANCE_RECOMMENDATION")
                || is_nth_rebalance_drain(facts, m)
        })
        .collect();
    let recommendations = recommendations(facts, &rebalance);
    // Karpenter relaunching: `created nodeclaim` lines, per NodePool.
    let mut created: Vec<String> = Vec::new();
    let mut nodepools: Vec<String> = Vec::new();
    let mut types: Vec<String> = Vec::new();
    for r in &facts.logs {
        if r.message.eq_ignore_ascii_case("created nodeclaim") {
            if let Some(n) = r.field_name("NodeClaim") {
                push_unique(&mut created, n);
            }
            if let Some(np) = r.field_name("NodePool") {
                push_unique(&mut nodepools, np);
            }
        }
        if let Some(list) = r.fields.get("disrupted-nodes").and_then(|v| v.as_array()) {
            for n in list {
                if let Some(t) = n.get("instance-type").and_then(|v| v.as_str()) {
                    push_unique(&mut types, t);
                }
            }
        }
    }
    let mut inferred_from: Vec<String> = nth
        .seen_as
        .iter()
        .filter(|s| nth.drained_nodes.is_empty() || *s != "its own drain events")
        .cloned()
        .collect();
    if !nth.drained_nodes.is_empty() {
        inferred_from.push(format!(
            "NTH CordonAndDrain events on {}",
            join_names(&nth.drained_nodes)
        ));
    } else if !nth.drain_messages.is_empty() {
        inferred_from.push("NTH drain events".to_string());
    }
    if !recommendations.is_empty() {
        let nodes: Vec<String> = recommendations.iter().flatten().cloned().collect();
        // The drained nodes are already named just before: name them again only if they differ.
        let nodes = if nodes.iter().all(|n| nth.drained_nodes.contains(n)) {
            Vec::new()
        } else {
            nodes
        };
        let count = recommendations.len();
        inferred_from.push(format!(
            "{count} rebalance recommendation{}{}",
            if count > 1 { "s" } else { "" },
            if nodes.is_empty() {
                String::new()
            } else {
                format!(" (on {})", join_names(&nodes))
            }
        ));
    }
    inferred_from.push("spot nodes".to_string());
    let mut summary =
        "AWS Node Termination Handler runs beside Karpenter and drains spot nodes on its own"
            .to_string();
    if nth
        .draining
        .iter()
        .any(|d| d.to_ascii_lowercase().contains("rebalance"))
        || !rebalance.is_empty()
    {
        summary.push_str(", on rebalance recommendations that Karpenter deliberately ignores");
    }
    if !nth.drained_nodes.is_empty() {
        summary.push_str(&format!(
            ": it cordoned and drained {}",
            join_names(&nth.drained_nodes)
        ));
        if !types.is_empty() {
            summary.push_str(&format!(" ({})", join_names(&types)));
        }
    }
    if !created.is_empty() {
        summary.push_str(&format!(
            ", and Karpenter launched {} replacement NodeClaim{}{} ({})",
            created.len(),
            if created.len() > 1 { "s" } else { "" },
            if nodepools.is_empty() {
                String::new()
            } else {
                format!(" in NodePool {}", join_names(&nodepools))
            },
            join_names(&created)
        ));
    }
    summary.push_str(&format!(
        ": a loop of short-lived nodes. Inferred from: {}.",
        inferred_from.join("; ")
    ));
    let (release, ns) = nth.release.clone().unwrap_or_else(|| {
        (
            "aws-node-termination-handler".to_string(),
            "kube-system".to_string(),
        )
    });
    let karpenter_ns = karpenter_namespace(facts);
    let mut steps = vec![interruption_queue_step(facts, &karpenter_ns)];
    steps.extend([
        Remediation::command(
            "Then remove NTH (Karpenter replaces it for the nodes it manages):",
            format!("helm uninstall {release} -n {ns}"),
        ),
        Remediation::command(
            "Or, if NTH must stay for nodes Karpenter does not manage, stop it draining and keep it off Karpenter's nodes:",
            format!("helm upgrade {release} aws-node-termination-handler --repo https://aws.github.io/eks-charts -n {ns} --reuse-values --set enableRebalanceDraining=false --set enableRebalanceMonitoring=false --set enableSpotInterruptionDraining=false"),
        ),
        Remediation::yaml(
            "and keep its DaemonSet off Karpenter nodes (Helm values):",
            "affinity:\n  nodeAffinity:\n    requiredDuringSchedulingIgnoredDuringExecution:\n      nodeSelectorTerms:\n        - matchExpressions:\n            - key: karpenter.sh/nodepool\n              operator: DoesNotExist\n",
        ),
    ]);
    // The drained nodes are what the report is about (its headline names them).
    let drained: Vec<ObjectRef> = nth
        .drained_nodes
        .iter()
        .map(|n| ObjectRef::new("Node", None, n))
        .collect();
    vec![Diagnosis::new(&META, summary)
        .with_confidence(Confidence::Medium)
        .with_objects(drained.iter())
        .with_node_pool(nodepools.first().map(String::as_str))
        .with_evidence(nth.config_evidence.iter().cloned())
        .with_messages(nth.config_messages.iter().copied())
        .with_messages(nth.drain_messages.iter().copied())
        .with_messages(rebalance.iter().copied())
        .with_related(&["KW311", "KW309"])
        .with_remediation(steps)]
}

/// The rebalance recommendations behind the lines: one per node, whatever the number of lines.
/// EC2 sends one recommendation to an instance, and each is printed several times: Karpenter's
/// `SpotRebalanceRecommendation` event, NTH's `RebalanceRecommendation` event, and NTH's log lines
/// `Adding new event to the event store`, `Requesting instance drain` and `Node successfully
/// cordoned and drained`. A line that names no node (nor an NTH event id) counts on its own, as
/// `None`; lines that share an event id but name no node count once.
fn recommendations(facts: &Facts, lines: &[&Message]) -> Vec<Option<String>> {
    let mut nodes: Vec<String> = Vec::new();
    let mut event_ids: Vec<String> = Vec::new();
    let mut unnamed = 0usize;
    for m in lines {
        let node = node_of(facts, m)
            .or_else(|| nth_log_node(&m.text))
            .or_else(|| nth_json_field(facts, m, &["node_name", "node-name"]))
            .or_else(|| json_field_in_text(&m.text, "NodeName"))
            .filter(|n| !n.is_empty());
        if let Some(n) = node {
            push_unique(&mut nodes, n);
            continue;
        }
        let event_id = nth_json_field(facts, m, &["event-id"])
            .or_else(|| name_after(&m.text, "event-id="))
            .or_else(|| json_field_in_text(&m.text, "EventID"))
            .filter(|id| !id.is_empty());
        match event_id {
            Some(id) => push_unique(&mut event_ids, id),
            None => unnamed += 1,
        }
    }
    nodes
        .into_iter()
        .map(Some)
        .chain(std::iter::repeat_n(None, event_ids.len() + unnamed))
        .collect()
}

/// Where Karpenter's interruption queue is configured, across versions: the controller's env
/// and flag, helm values (v0.32+ and the older `aws.` form), the pre-v0.32 global settings
/// ConfigMap.
const INTERRUPTION_QUEUE_KEYS: &[&str] = &[
    "INTERRUPTION_QUEUE",
    "--interruption-queue",
    "settings.interruptionQueue",
    "settings.aws.interruptionQueueName",
    "aws.interruptionQueueName",
];

/// The first fix: Karpenter must handle interruptions itself before NTH goes. What the input
/// shows of its queue setting decides whether that is already true, certainly off, or unknown.
fn interruption_queue_step(facts: &Facts, karpenter_ns: &str) -> Remediation {
    let queue = facts
        .settings_named(INTERRUPTION_QUEUE_KEYS)
        .find(|s| !s.value.trim().is_empty());
    if let Some(q) = queue {
        return Remediation::text(format!(
            "Karpenter's own interruption handling is on (`{}` is `{}` in the input): it already cordons, drains and replaces its spot nodes ahead of an interruption, so NTH only adds drains on top.",
            q.key,
            q.value.trim()
        ));
    }
    if facts.karpenter_deployment().is_some() {
        let cluster = crate::rules::text::cluster_name_or_placeholder(facts);
        return Remediation::command(
            "Karpenter's own interruption handling is off (the Karpenter Deployment in the input sets no interruption queue). Turn it on before removing NTH: the SQS queue and its EventBridge rules come from the getting-started CloudFormation template (the queue is usually named after the cluster):",
            format!("helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter -n {karpenter_ns} --reuse-values --set settings.interruptionQueue={cluster}"),
        );
    }
    Remediation::command(
        "Make sure Karpenter's own interruption handling is on (an SQS queue fed by EventBridge; empty output means it is off):",
        format!("kubectl -n {karpenter_ns} get deployment karpenter -o jsonpath='{{.spec.template.spec.containers[0].env[?(@.name==\"INTERRUPTION_QUEUE\")].value}}{{\"\\n\"}}'"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Container, Meta, Workload};
    use crate::rules;
    use crate::testing::{check_only, ids};

    #[test]
    fn helm_values_and_events() {
        let text = "aws-node-termination-handler\tkube-system\t3\t2025-08-04 10:22:51 +0000 UTC\tdeployed\taws-node-termination-handler-0.27.0\t1.25.0\nenableRebalanceDraining: true\ndefault   6m   Normal   SpotRebalanceRecommendation   node/ip-10-3-29-7.us-west-2.compute.internal   Spot rebalance recommendation was triggered\ndefault   5m   Normal   CordonAndDrain   node/ip-10-3-29-7.us-west-2.compute.internal   Node successfully cordoned and drained";
        let report = check_only("KW308", text);
        assert_eq!(ids(&report), ["KW308"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.confidence, Confidence::Medium);
        assert!(d.summary.contains("Inferred from"), "{}", d.summary);
        assert!(
            d.summary
                .contains("ip-10-3-29-7.us-west-2.compute.internal"),
            "{}",
            d.summary
        );
        assert!(d.remediation[1]
            .command
            .as_deref()
            .unwrap()
            .contains("helm uninstall aws-node-termination-handler -n kube-system"));
    }

    #[test]
    fn counts_recommendations_not_the_lines_that_print_them() {
        // Per recommendation: Karpenter's event, NTH's event and its drain event (events), or
        // NTH's three log lines (console or JSON). Two nodes, two recommendations.
        let events = "enableRebalanceDraining: true\n\
            default   27m   Normal   SpotRebalanceRecommendation   node/ip-10-1-1-1.ec2.internal   Spot rebalance recommendation was triggered\n\
            default   27m   Normal   RebalanceRecommendation   node/ip-10-1-1-1.ec2.internal   Rebalance recommendation received. Instance will be cordoned at 2025-10-14T07:52:06Z\n\
            default   26m   Normal   CordonAndDrain   node/ip-10-1-1-1.ec2.internal   Node successfully cordoned and drained\n\
            default   6m   Normal   SpotRebalanceRecommendation   node/ip-10-1-2-2.ec2.internal   Spot rebalance recommendation was triggered\n\
            default   6m   Normal   RebalanceRecommendation   node/ip-10-1-2-2.ec2.internal   Rebalance recommendation received. Instance will be cordoned at 2025-10-14T08:13:09Z\n";
        let json = "aws-node-termination-handler-9zq7d   1/1   Running   0   2h\n\
            ip-10-0-61-4.ec2.internal   Ready,SchedulingDisabled   <none>   41m   v1.30.4-eks-a737599   spot   batch\n\
            {\"level\":\"info\",\"event-id\":\"rebalance-recommendation-62\",\"kind\":\"REBALANCE_RECOMMENDATION\",\"node-name\":\"ip-10-0-61-4.ec2.internal\",\"message\":\"Requesting instance drain\"}\n\
            {\"level\":\"info\",\"node_name\":\"ip-10-0-61-4.ec2.internal\",\"reason\":\"Rebalance recommendation received. Instance will be cordoned at 2026-12-06T19:40:00Z \\n\",\"message\":\"Node successfully cordoned and drained\"}\n\
            {\"level\":\"info\",\"event-id\":\"rebalance-recommendation-63\",\"kind\":\"REBALANCE_RECOMMENDATION\",\"node-name\":\"ip-10-0-70-9.ec2.internal\",\"message\":\"Requesting instance drain\"}\n\
            {\"level\":\"info\",\"node_name\":\"ip-10-0-70-9.ec2.internal\",\"reason\":\"Rebalance recommendation received. Instance will be cordoned at 2026-12-06T20:10:00Z \\n\",\"message\":\"Node successfully cordoned and drained\"}\n";
        for text in [events, json] {
            let report = check_only("KW308", text);
            assert_eq!(ids(&report), ["KW308"], "{text}");
            let summary = &report.diagnoses[0].summary;
            assert!(summary.contains("2 rebalance recommendations"), "{summary}");
        }
        // A recommendation seen only through Karpenter's event names its node.
        let report = check_only("KW308", &events.replace("CordonAndDrain   node/ip-10-1-1-1.ec2.internal   Node successfully cordoned and drained", "Other   x   y"));
        assert!(
            report.diagnoses[0].summary.contains("2 rebalance recommendations (on ip-10-1-1-1.ec2.internal and ip-10-1-2-2.ec2.internal)"),
            "{}",
            report.diagnoses[0].summary
        );
    }

    #[test]
    fn the_first_step_follows_the_interruption_queue_setting() {
        let nth = "aws-node-termination-handler\tkube-system\t3\t2025-08-04 10:22:51 +0000 UTC\tdeployed\taws-node-termination-handler-0.27.0\t1.25.0\nenableRebalanceDraining: true\ndefault   6m   Normal   SpotRebalanceRecommendation   node/ip-10-3-29-7.us-west-2.compute.internal   Spot rebalance recommendation was triggered\ndefault   5m   Normal   CordonAndDrain   node/ip-10-3-29-7.us-west-2.compute.internal   Node successfully cordoned and drained\n";
        let first = |extra: &str| {
            let report = check_only(
                "KW308",
                &format!("==> nth.txt <==\n{nth}\n==> karpenter.yaml <==\n{extra}"),
            );
            assert_eq!(ids(&report), ["KW308"], "{extra}");
            report.diagnoses[0].remediation[0].clone()
        };
        let deployment = |env: &str| {
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: karpenter\n  namespace: karpenter\nspec:\n  template:\n    spec:\n      containers:\n        - name: controller\n          image: public.ecr.aws/karpenter/controller:1.3.1\n          env:\n            - name: CLUSTER_NAME\n              value: prod\n{env}"
            )
        };
        let on = first(&deployment(
            "            - name: INTERRUPTION_QUEUE\n              value: prod-karpenter\n",
        ));
        assert!(on.command.is_none());
        assert!(on.text.contains("`prod-karpenter`"), "{}", on.text);
        let off = first(&deployment(""));
        assert!(off.text.contains("is off"), "{}", off.text);
        assert_eq!(
            off.command.as_deref(),
            Some("helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter -n karpenter --reuse-values --set settings.interruptionQueue=prod")
        );
        let unknown = first("");
        assert!(unknown.command.unwrap().contains("INTERRUPTION_QUEUE"));
    }

    #[test]
    fn typed_daemonset_env() {
        let mut facts = crate::ingest::ingest(&[crate::Document::new(
            "nodes.txt",
            "ip-10-0-1-2.ec2.internal   Ready   <none>   4m   v1.31   m6a.large   spot   us-west-2a",
        )]);
        let mut env = std::collections::BTreeMap::new();
        env.insert(
            "ENABLE_SPOT_INTERRUPTION_DRAINING".to_string(),
            "true".to_string(),
        );
        facts.workloads.push(Workload {
            kind: "DaemonSet".into(),
            meta: Meta {
                name: "aws-node-termination-handler".into(),
                namespace: Some("kube-system".into()),
                ..Meta::default()
            },
            containers: vec![Container {
                name: "nth".into(),
                env,
                ..Container::default()
            }],
            ..Workload::default()
        });
        let d = (rules::find("KW308").unwrap().check)(&facts);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].summary
                .contains("DaemonSet aws-node-termination-handler"),
            "{}",
            d[0].summary
        );
        assert!(
            d[0].summary
                .contains("ENABLE_SPOT_INTERRUPTION_DRAINING=true"),
            "{}",
            d[0].summary
        );
    }

    #[test]
    fn typed_helm_values() {
        use crate::facts::{Setting, SettingSource};
        let mut facts = crate::ingest::ingest(&[crate::Document::new(
            "nodes.txt",
            "helm get values aws-node-termination-handler -n kube-system\nip-10-0-1-2.ec2.internal   Ready   <none>   4m   v1.31   m6a.large   spot",
        )]);
        facts.settings.push(Setting {
            source: SettingSource::Values,
            owner: Some(crate::facts::ObjectRef::new(
                "HelmRelease",
                None,
                "aws-node-termination-handler",
            )),
            container: None,
            key: "enableRebalanceDraining".into(),
            value: "true".into(),
            evidence: crate::Evidence::new("values.yaml", 3, "enableRebalanceDraining: true"),
        });
        let d = (rules::find("KW308").unwrap().check)(&facts);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].summary.contains("enableRebalanceDraining=true"),
            "{}",
            d[0].summary
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            // Karpenter's own events, no NTH.
            "2m   Normal   SpotRebalanceRecommendation   node/ip-1   Spot rebalance recommendation was triggered\n95s   Warning   SpotInterrupted   node/ip-1   Spot interruption warning was triggered",
            // NTH with draining off.
            "aws-node-termination-handler\tkube-system\t3\tdeployed\nenableRebalanceDraining: false\nenableSpotInterruptionDraining: false\nkarpenter.sh/capacity-type=spot",
            // NTH draining, but no spot capacity in sight.
            "aws-node-termination-handler\tkube-system\t3\tdeployed\nenableRebalanceDraining: true",
        ] {
            assert!(ids(&check_only("KW308", text)).is_empty(), "{text}");
        }
    }
}
