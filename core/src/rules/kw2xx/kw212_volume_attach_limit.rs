//! KW212 volume-attach-limit.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::tail_after;
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

Signals: `checking volume usage, would exceed volume limit (provisioner=<driver>,
volume-count=<n>, volume-limit=<m>)`, `AttachVolume.Attach failed for volume ... expected device
to be attached but was attaching`, `Unable to attach or mount volumes: unmounted volumes=[...]`.

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
    "expected device to be attached but was attaching",
    "unable to attach or mount volumes",
];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let limit: Vec<&Message> = facts
        .messages_containing("would exceed volume limit")
        .collect();
    let attaching: Vec<&Message> = facts
        .messages_containing("expected device to be attached but was attaching")
        .collect();
    let unmounted: Vec<&Message> = facts
        .messages_containing("unable to attach or mount volumes")
        .filter(|m| contains_ignore_ascii_case(&m.text, "unmounted volumes="))
        .collect();
    if limit.is_empty() && attaching.is_empty() && unmounted.is_empty() {
        return Vec::new();
    }
    let mut summary = String::new();
    if let Some(m) = limit.first() {
        let count = value_of(&m.text, "volume-count=");
        let max = value_of(&m.text, "volume-limit=");
        let driver = value_of(&m.text, "provisioner=");
        summary.push_str(&format!(
            "Karpenter's simulation says the pod's volumes would exceed the node's attach limit{}{}.",
            match (&count, &max) {
                (Some(c), Some(l)) => format!(" ({c} volumes for a limit of {l})"),
                _ => String::new(),
            },
            driver.map(|d| format!(" for driver {d}")).unwrap_or_default()
        ));
    }
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
            node.map(|n| format!("node {n}")).unwrap_or_else(|| "the node".to_string())
        ));
    }
    if !unmounted.is_empty() && attaching.is_empty() && limit.is_empty() {
        summary.push_str("The pod's volumes never attached (`Unable to attach or mount volumes`): on a fresh Karpenter node this is typically the attach limit being exceeded.");
    }
    let confidence = if limit.is_empty() && attaching.is_empty() {
        // `Unable to attach or mount volumes` alone has other causes (a missing driver, IAM).
        Confidence::Medium
    } else {
        Confidence::High
    };
    let nodepool = facts
        .nodepools
        .iter()
        .find(|np| {
            !np.startup_taints
                .iter()
                .any(|t| t.key == "ebs.csi.aws.com/agent-not-ready")
        })
        .map(|np| np.meta.name.clone());
    let np = nodepool.as_deref().unwrap_or("<nodepool>");
    // The pods whose events say so (kubelet and attach-detach events are about the pod).
    let mut pods: Vec<ObjectRef> = Vec::new();
    for m in limit.iter().chain(&attaching).chain(&unmounted) {
        if let Some(o) = m.object.as_ref().filter(|o| o.kind == "Pod") {
            if !pods.contains(o) {
                pods.push(o.clone());
            }
        }
    }
    if !pods.is_empty() {
        let names: Vec<String> = pods.iter().map(ObjectRef::qualified_name).collect();
        summary.push_str(&format!(
            " Waiting on it: pod{} {}.",
            if names.len() > 1 { "s" } else { "" },
            names.join(", ")
        ));
    }
    vec![Diagnosis::new(&META, summary)
        .with_confidence(confidence)
        .with_object(pods.first())
        .with_node_pool(nodepool.as_deref())
        .with_messages(limit.iter().copied())
        .with_messages(attaching.iter().copied())
        .with_messages(unmounted.iter().copied())
        .with_remediation([
            Remediation::yaml(
                format!("Give NodePool {np} the EBS CSI startup taint, so pods wait until the driver reports the node's limit (`kubectl edit nodepool {np}`):"),
                "spec:\n  template:\n    spec:\n      startupTaints:\n        - key: ebs.csi.aws.com/agent-not-ready\n          effect: NoExecute\n",
            ),
            Remediation::yaml(
                "Spread the PVC pods over nodes (pod template):",
                "topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: kubernetes.io/hostname\n    whenUnsatisfiable: DoNotSchedule\n    labelSelector:\n      matchLabels:\n        app: <your-app-label>\n",
            ),
        ])]
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
    fn near_misses() {
        for text in [
            "failed tracking CSI volume limits for volume with unbound PVC, no storage class specified",
            "MountVolume.SetUp failed for volume \"config\" : configmap \"app\" not found",
        ] {
            assert!(ids(&check_only("KW212", text)).is_empty(), "{text}");
        }
    }
}
