//! KW212 volume-attach-limit.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::{
    assigned_node, message_nodepool, node_of_instance, nodepool_of_node, tail_after,
};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW212",
    slug: "volume-attach-limit",
    title: "Too many volumes land on one node: its attach limit is exceeded",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Pods with PersistentVolumes were placed on a node that cannot attach all their volumes (EBS
volumes per instance are limited), so some volumes stay attaching and their pods stay in
`ContainerCreating`, or Karpenter refuses a node because the volumes would not fit.

Signals: Karpenter's `checking volume usage, would exceed volume limit (provisioner=<driver>,
volume-count=<n>, volume-limit=<m>)` (before v1.1: `would exceed volume limit for <driver>, <n> >
<m>`), the scheduler's `<n> node(s) exceed max volume count` (NodeVolumeLimits / CSI limits
plugin, every Kubernetes version), `AttachVolume.Attach failed for volume ... expected device to
be attached but was attaching`, `Unable to attach or mount volumes: unmounted volumes=[...]`.
Not this rule: `Unable to attach or mount volumes` next to a cause of its own for that pod
(`MountVolume.SetUp failed` for a missing ConfigMap or Secret, `Multi-Attach error`, an
`AttachVolume.Attach failed` refused by IAM).

The diagnosis counts the volumes that did not attach, per pod (the pod volumes of `unmounted
volumes=[...]` without the `kube-api-access-*` token volume, or the PersistentVolumes of the
attach failures).

## Why it happens
The scheduler places pods before the new node's CSINode object publishes the driver's attach
limit, so a burst of PVC pods can all land on one fresh node; the volumes beyond the limit never
attach.

## How to fix
Spread PVC pods over nodes (`topologySpreadConstraints` on `kubernetes.io/hostname`, or a pod
anti-affinity), and give the NodePool the EBS CSI startup taint so no pod lands before the
driver is ready: `startupTaints: [{key: ebs.csi.aws.com/agent-not-ready, effect: NoExecute}]`.
"#,
};

const SIGNALS: &[&str] = &[
    "would exceed volume limit",
    "exceed max volume count",
    "expected device to be attached but was attaching",
    "unable to attach or mount volumes",
];

/// Texts that give an `Unable to attach or mount volumes` a cause other than the attach limit.
const OTHER_MOUNT_CAUSES: &[&str] = &[
    "mountvolume.setup failed",
    "mountvolume.mountdevice failed",
    "multi-attach error",
    "attachvolume.attach failed",
];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let limit: Vec<&Message> = facts
        .messages_containing("would exceed volume limit")
        .collect();
    let max_count: Vec<&Message> = facts
        .messages_containing("exceed max volume count")
        .collect();
    let attaching: Vec<&Message> = facts
        .messages_containing("expected device to be attached but was attaching")
        .collect();
    // Another failure of the same pod's volumes explains the unmounted volumes better (a
    // missing ConfigMap, a Multi-Attach, an attach refused by IAM), unless that failure is the
    // attach limit itself.
    let other_cause = |m: &Message| {
        facts.messages.iter().any(|o| {
            o.object == m.object
                && !contains_ignore_ascii_case(
                    &o.text,
                    "expected device to be attached but was attaching",
                )
                && OTHER_MOUNT_CAUSES
                    .iter()
                    .any(|c| contains_ignore_ascii_case(&o.text, c))
        })
    };
    let unmounted: Vec<&Message> = facts
        .messages_containing("unable to attach or mount volumes")
        .filter(|m| contains_ignore_ascii_case(&m.text, "unmounted volumes="))
        .filter(|m| !other_cause(m))
        .collect();
    if limit.is_empty() && max_count.is_empty() && attaching.is_empty() && unmounted.is_empty() {
        return Vec::new();
    }
    let mut summary = String::new();
    if let Some(m) = limit.first() {
        let (driver, count, max) = limit_numbers(&m.text);
        summary.push_str(&format!(
            "Karpenter's simulation says the pod's volumes would exceed the node's attach limit{}{}.",
            match (&count, &max) {
                (Some(c), Some(l)) => format!(" ({c} volumes for a limit of {l})"),
                _ => String::new(),
            },
            driver.map(|d| format!(" for driver {d}")).unwrap_or_default()
        ));
    }
    if let Some(m) = max_count.first() {
        if !summary.is_empty() {
            summary.push(' ');
        }
        let nodes = nodes_at_limit(&m.text);
        summary.push_str(&format!(
            "The scheduler finds {} at the CSI driver's attach limit (`exceed max volume count`): the pod's volumes do not fit there, so it needs a node with free attachment slots.",
            match nodes {
                Some(1) => "1 node".to_string(),
                Some(n) => format!("{n} nodes"),
                None => "the nodes".to_string(),
            }
        ));
    }
    // The node the failing pods were placed on (`Node:`, or their `Scheduled` event): the
    // attach error names only the EC2 instance ID, the operator knows the node by its name.
    let pods_node = attaching
        .iter()
        .chain(&unmounted)
        .filter_map(|m| m.object.as_ref().filter(|o| o.kind == "Pod"))
        .find_map(|o| assigned_node(facts, o))
        .or_else(|| {
            attaching
                .iter()
                .chain(&unmounted)
                .filter(|m| m.object.is_none())
                .find_map(|m| crate::rules::kw2xx::scheduling::scheduled_pod_in_source(facts, m))
                .map(|(_, node)| node)
        });
    if !attaching.is_empty() {
        let node = attaching
            .iter()
            .find_map(|m| quoted_after(&m.text, "to node \""))
            .filter(|n| n != "***");
        if !summary.is_empty() {
            summary.push(' ');
        }
        summary.push_str(&format!(
            "A volume stays attaching on {}: the node has more volumes than it can attach, usually because several PVC pods landed on it before its CSI driver published the limit.",
            match (node, &pods_node) {
                (Some(n), _) if !n.starts_with("i-") => format!("node {n}"),
                (Some(n), pods_node) => match node_of_instance(facts, &n).or(pods_node.clone()) {
                    Some(name) => format!("node {name} (instance {n})"),
                    None => format!("node {n}"),
                },
                (None, Some(name)) => format!("node {name}"),
                (None, None) => "the node".to_string(),
            }
        ));
    }
    if !unmounted.is_empty() && attaching.is_empty() && limit.is_empty() && max_count.is_empty() {
        summary.push_str("The pod's volumes never attached (`Unable to attach or mount volumes`): on a fresh Karpenter node this is typically the attach limit being exceeded.");
    }
    let confidence = if limit.is_empty() && attaching.is_empty() && max_count.is_empty() {
        // `Unable to attach or mount volumes` alone has other causes (a missing driver, IAM).
        Confidence::Medium
    } else {
        Confidence::High
    };
    // The node the volumes wait on (the attach error's instance, the pod's node) names the
    // NodePool to change; otherwise a NodePool without the startup taint is the suspect.
    let node = attaching
        .iter()
        .find_map(|m| quoted_after(&m.text, "to node \""))
        .filter(|n| n != "***")
        .into_iter()
        .chain(
            facts
                .pods
                .iter()
                .filter(|p| {
                    unmounted
                        .iter()
                        .chain(&attaching)
                        .any(|m| m.object.as_ref().is_some_and(|o| o.name == p.meta.name))
                })
                .filter_map(|p| p.node_name.clone()),
        )
        .chain(pods_node.clone())
        .find_map(|n| nodepool_of_node(facts, &n).map(|np| (n, np)));
    if let Some((n, np)) = &node {
        let name = node_of_instance(facts, n)
            .or_else(|| n.starts_with("i-").then(|| pods_node.clone()).flatten())
            .unwrap_or_else(|| n.clone());
        summary.push_str(&format!(" Node {name} was launched by NodePool {np}."));
    }
    let nodepool = node.map(|(_, np)| np).or_else(|| {
        facts
            .nodepools
            .iter()
            .find(|np| {
                !np.startup_taints
                    .iter()
                    .any(|t| t.key == "ebs.csi.aws.com/agent-not-ready")
            })
            .map(|np| np.meta.name.clone())
            // The NodePool Karpenter's simulation was about (`incompatible with nodepool "<np>"`).
            .or_else(|| limit.iter().find_map(|m| message_nodepool(facts, m)))
    });
    let np = nodepool.as_deref().unwrap_or("<nodepool>");
    let has_startup_taint = facts.nodepool(np).is_some_and(|p| {
        p.startup_taints
            .iter()
            .any(|t| t.key == "ebs.csi.aws.com/agent-not-ready")
    });
    // The pods whose events say so (kubelet and attach-detach events are about the pod).
    let mut pods: Vec<ObjectRef> = Vec::new();
    for m in limit
        .iter()
        .chain(&max_count)
        .chain(&attaching)
        .chain(&unmounted)
    {
        if let Some(o) = m.object.as_ref().filter(|o| o.kind == "Pod") {
            if !pods.contains(o) {
                pods.push(o.clone());
            }
        }
    }
    // A describe's Events without its header: the Scheduled row names the pod.
    if pods.is_empty() {
        if let Some((pod, _)) = limit
            .iter()
            .chain(&max_count)
            .chain(&attaching)
            .chain(&unmounted)
            .filter(|m| m.object.is_none())
            .find_map(|m| crate::rules::kw2xx::scheduling::scheduled_pod_in_source(facts, m))
        {
            pods.push(pod);
        }
    }
    let counted = volumes_waiting(&attaching, &unmounted);
    let total: usize = counted.iter().map(|(_, v)| v.len()).sum();
    if total > 0 {
        let parts: Vec<String> = counted
            .iter()
            .map(|(pod, vols)| match pod {
                Some(p) => format!("{} ({})", p.qualified_name(), vols.join(", ")),
                None => vols.join(", "),
            })
            .collect();
        summary.push_str(&format!(
            " {total} volume{} not attached: {}.",
            if total > 1 { "s" } else { "" },
            parts.join("; ")
        ));
    }
    if !pods.is_empty() {
        let names: Vec<String> = pods.iter().map(ObjectRef::qualified_name).collect();
        summary.push_str(&format!(
            " Waiting on it: pod{} {}.",
            if names.len() > 1 { "s" } else { "" },
            names.join(", ")
        ));
    }
    // The pod's own app label and workload, when its object is in the input.
    let fact_pod = pods.iter().find_map(|r| facts.pod(r));
    let (label_key, label_value) = fact_pod
        .and_then(|p| {
            ["app.kubernetes.io/name", "app", "k8s-app", "name"]
                .iter()
                .find_map(|k| p.meta.label(k).map(|v| (k.to_string(), v.to_string())))
        })
        .unwrap_or_else(|| ("app".to_string(), "<your-app-label>".to_string()));
    let spread_target = match fact_pod.and_then(|p| facts.controller_of(p)) {
        Some(o) => format!("the pod template of {} {}", o.kind, o.name),
        None => "pod template".to_string(),
    };
    vec![Diagnosis::new(&META, summary)
        .with_confidence(confidence)
        .with_object(pods.first())
        .with_node_pool(nodepool.as_deref())
        .with_messages(limit.iter().copied())
        .with_messages(max_count.iter().copied())
        .with_messages(attaching.iter().copied())
        .with_messages(unmounted.iter().copied())
        .with_remediation([
            // The node's NodePool may have the taint already: then the driver published the
            // limit and the spread (next step) is what is left.
            if has_startup_taint {
                Remediation::text(format!(
                    "NodePool {np} already has the EBS CSI startup taint (ebs.csi.aws.com/agent-not-ready), so pods waited for the driver: the node's attach limit is simply too low for the PVC pods placed on it; spread them (below) or use instance types that can attach more volumes."
                ))
            } else {
                Remediation::yaml(
                    format!("Give NodePool {np} the EBS CSI startup taint, so pods wait until the driver reports the node's limit (`kubectl edit nodepool {np}`):"),
                    "spec:\n  template:\n    spec:\n      startupTaints:\n        - key: ebs.csi.aws.com/agent-not-ready\n          effect: NoExecute\n",
                )
            },
            Remediation::yaml(
                format!("Spread the PVC pods over nodes ({}):", spread_target),
                format!("topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: kubernetes.io/hostname\n    whenUnsatisfiable: DoNotSchedule\n    labelSelector:\n      matchLabels:\n        {label_key}: {label_value}\n"),
            ),
        ])]
}

/// The volumes that did not attach, per pod: the PersistentVolumes of `AttachVolume.Attach
/// failed for volume "<pv>"` and the pod volumes of `unmounted volumes=[...]` (without the
/// service-account token volume `kube-api-access-*`, which is no attachment). A pod counts the
/// larger of the two lists, as both name the same volumes.
fn volumes_waiting(
    attaching: &[&Message],
    unmounted: &[&Message],
) -> Vec<(Option<ObjectRef>, Vec<String>)> {
    type Entry = (Option<ObjectRef>, Vec<String>, Vec<String>);
    let mut by_pod: Vec<Entry> = Vec::new();
    fn entry(by_pod: &mut Vec<Entry>, pod: Option<&ObjectRef>) -> usize {
        let pod = pod.filter(|o| o.kind == "Pod").cloned();
        match by_pod.iter().position(|(p, _, _)| *p == pod) {
            Some(i) => i,
            None => {
                by_pod.push((pod, Vec::new(), Vec::new()));
                by_pod.len() - 1
            }
        }
    }
    for m in attaching {
        if let Some(pv) = quoted_after(&m.text, "for volume \"") {
            let i = entry(&mut by_pod, m.object.as_ref());
            if !by_pod[i].1.contains(&pv) {
                by_pod[i].1.push(pv);
            }
        }
    }
    for m in unmounted {
        let Some(list) = tail_after(&m.text, "unmounted volumes=[")
            .and_then(|t| t.split(']').next().map(str::to_string))
        else {
            continue;
        };
        let i = entry(&mut by_pod, m.object.as_ref());
        for v in list.split([' ', ',']).filter(|v| !v.is_empty()) {
            if !v.starts_with("kube-api-access-") && !by_pod[i].2.iter().any(|x| x == v) {
                by_pod[i].2.push(v.to_string());
            }
        }
    }
    by_pod
        .into_iter()
        .map(|(pod, pvs, vols)| (pod, if vols.len() >= pvs.len() { vols } else { pvs }))
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

/// `(driver, count, limit)` of `would exceed volume limit (provisioner=<d>, volume-count=<n>,
/// volume-limit=<m>)` or of the pre-v1.1 `would exceed volume limit for <d>, <n> > <m>`.
fn limit_numbers(text: &str) -> (Option<String>, Option<String>, Option<String>) {
    let driver = value_of(text, "provisioner=");
    if driver.is_some() || value_of(text, "volume-count=").is_some() {
        return (
            driver,
            value_of(text, "volume-count="),
            value_of(text, "volume-limit="),
        );
    }
    let Some(tail) = tail_after(text, "would exceed volume limit for ") else {
        return (None, None, None);
    };
    let Some((driver, numbers)) = tail.split_once(", ") else {
        return (None, None, None);
    };
    let mut parts = numbers.split(" > ");
    let count = parts
        .next()
        .map(str::trim)
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
    let max: Option<String> = parts
        .next()
        .map(|m| m.chars().take_while(char::is_ascii_digit).collect())
        .filter(|m: &String| !m.is_empty());
    (
        Some(driver.trim().to_string()).filter(|d| !d.is_empty() && !d.contains(' ')),
        count.map(str::to_string),
        max,
    )
}

/// `<n>` of the scheduler's `<n> node(s) exceed max volume count`.
fn nodes_at_limit(text: &str) -> Option<usize> {
    let at = find_ignore_ascii_case(text, " node(s) exceed max volume count")?;
    let digits: String = text[..at]
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

fn value_of(text: &str, key: &str) -> Option<String> {
    let i = find_ignore_ascii_case(text, key)? + key.len();
    let v: String = text[i..]
        .chars()
        .take_while(|c| !matches!(c, ',' | ')' | ' '))
        .collect();
    (!v.is_empty()).then_some(v)
}

fn quoted_after(text: &str, marker: &str) -> Option<String> {
    tail_after(text, marker).and_then(|t| t.split('"').next().map(str::to_string))
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn every_signal() {
        for text in [
            "checking volume usage, would exceed volume limit (provisioner=ebs.csi.aws.com, volume-count=26, volume-limit=25)",
            "Warning   FailedAttachVolume    pod/db-3   AttachVolume.Attach failed for volume \"pvc-1\" : rpc error: code = Internal desc = Could not attach volume \"vol-1\" to node \"i-0abc\": attachment of disk \"vol-1\" failed, expected device to be attached but was attaching",
            "Warning   FailedMount   pod/db-3   Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data]: timed out waiting for the condition",
        ] {
            assert_eq!(ids(&check_only("KW212", text)), ["KW212"], "{text}");
        }
        let report = check_only("KW212", "checking volume usage, would exceed volume limit (provisioner=ebs.csi.aws.com, volume-count=26, volume-limit=25)");
        assert!(report.diagnoses[0]
            .summary
            .contains("26 volumes for a limit of 25"));
    }

    #[test]
    fn every_version_of_the_limit_texts() {
        // Karpenter before v1.1 (fmt.Errorf) and the scheduler's NodeVolumeLimits / CSI plugin.
        let report = check_only("KW212", "Failed to schedule pod, incompatible with nodepool \"default\", daemonset overhead={\"cpu\":\"200m\"}, checking volume usage, would exceed volume limit for ebs.csi.aws.com, 26 > 25");
        assert_eq!(ids(&report), ["KW212"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("26 volumes for a limit of 25) for driver ebs.csi.aws.com"),
            "{}",
            d.summary
        );
        let report = check_only("KW212", "Warning  FailedScheduling  31s  default-scheduler  0/5 nodes are available: 2 Insufficient cpu, 3 node(s) exceed max volume count. preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.");
        assert_eq!(ids(&report), ["KW212"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("3 nodes at the CSI driver's attach limit"),
            "{}",
            d.summary
        );
        assert_eq!(d.confidence, crate::rules::Confidence::High);
    }

    #[test]
    fn the_pods_label_fills_the_spread() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: es-data-3\n  namespace: search\n  labels:\n    app.kubernetes.io/name: elasticsearch\n  ownerReferences:\n  - kind: StatefulSet\n    name: es-data\n    controller: true\nstatus:\n  phase: Pending\n---\napiVersion: v1\nkind: Event\nmetadata:\n  name: es-data-3.1\n  namespace: search\ninvolvedObject:\n  kind: Pod\n  name: es-data-3\n  namespace: search\nreason: FailedScheduling\ntype: Warning\nsource:\n  component: default-scheduler\nmessage: \"0/4 nodes are available: 4 node(s) exceed max volume count.\"\n";
        let report = check_only("KW212", text);
        assert_eq!(ids(&report), ["KW212"]);
        let spread = report.diagnoses[0]
            .remediation
            .iter()
            .find(|r| r.text.contains("Spread"))
            .unwrap();
        assert!(
            spread.text.contains("StatefulSet es-data"),
            "{}",
            spread.text
        );
        assert!(spread
            .yaml
            .as_deref()
            .unwrap()
            .contains("app.kubernetes.io/name: elasticsearch"));
    }

    #[test]
    fn near_misses() {
        for text in [
            "failed tracking CSI volume limits for volume with unbound PVC, no storage class specified",
            "MountVolume.SetUp failed for volume \"config\" : configmap \"app\" not found",
            // The unmounted volumes have a cause of their own.
            "Warning  FailedMount  2m  kubelet  MountVolume.SetUp failed for volume \"config\" : configmap \"app\" not found\nWarning  FailedMount  1m  kubelet  Unable to attach or mount volumes: unmounted volumes=[config], unattached volumes=[config kube-api-access-1]: timed out waiting for the condition",
            "Warning  FailedAttachVolume  3m  attachdetach-controller  Multi-Attach error for volume \"pvc-1\" Volume is already exclusively attached to one node and can't be attached to another\nWarning  FailedMount  1m  kubelet  Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data]: timed out waiting for the condition",
            "AttachVolume.Attach failed for volume \"pvc-1\" : rpc error: code = Internal desc = Could not attach volume \"vol-1\" to node \"i-1\": UnauthorizedOperation: You are not authorized to perform this operation.",
            "0/3 nodes are available: 3 node(s) had volume node affinity conflict.",
            "would exceed max pods",
        ] {
            assert!(ids(&check_only("KW212", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn counts_the_volumes_not_attached() {
        let text = "LAST SEEN   TYPE      REASON               OBJECT         MESSAGE\n4m          Warning   FailedAttachVolume   pod/kafka-4    AttachVolume.Attach failed for volume \"pvc-4c1d\" : attachment of disk \"vol-0aa1\" failed, expected device to be attached but was attaching\n2m          Warning   FailedMount          pod/kafka-4    Unable to attach or mount volumes: unmounted volumes=[data logs], unattached volumes=[data logs kube-api-access-7xk2p]: timed out waiting for the condition\n2m          Warning   FailedMount          pod/kafka-5    Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data kube-api-access-q9w8e]: timed out waiting for the condition\n";
        let report = check_only("KW212", text);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("3 volumes not attached: kafka-4 (data, logs); kafka-5 (data)"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("kube-api-access"), "{}", d.summary);
    }
}
