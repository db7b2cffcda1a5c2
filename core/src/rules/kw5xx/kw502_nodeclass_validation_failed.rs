//! KW502 nodeclass-validation-failed.

use crate::document::Evidence;
use crate::facts::{Facts, Message};
use crate::rules::kw4xx::disruption::{push_unique, unescaped};
use crate::rules::kw5xx::nodeclass::{
    contains_word, message_nodeclass, reports_condition, sole_nodeclass, transition,
    undone_transition,
};
use crate::rules::text::karpenter_namespace_or_placeholder;
use crate::rules::text::{contains_any, quoted_after};
use crate::rules::version::{at_least, version_label};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW502",
    slug: "nodeclass-validation-failed",
    title: "The EC2NodeClass failed validation",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter validates every EC2NodeClass (v1.2+) before using it: its tags, the cluster CIDR
AL2023 nodes need, the instance profile it names, its kubelet configuration, and (KW105) that
the controller may launch with it. `ValidationSucceeded=False` makes the EC2NodeClass, and every
NodePool that uses it, not ready: nothing launches.

Signals: `ValidationSucceeded=False` with reasons `TagValidationFailed` (v1.2: `"<key>" tag does
not pass tag validation requirements`; v1.3+: `tags failed validation requirements
(tags=...)`), `ClusterCIDRResolutionFailed` (`Failed to detect the cluster CIDR`; v1.0 to v1.6
set `Ready=False` reason `NodeClassNotReady` instead), `InstanceProfileNotFound` (`Instance
profile "<name>" not found`), `DependenciesNotReady` (`Awaiting AMI, Instance Profile, Security
Group, and Subnet resolution`: see KW501), the kubelet reasons (`InvalidKubeletConfiguration`,
`KubeletExpressionInvalid`, `KubeletExpressionEvaluationFailed`, `KubeletExpressionsDisabled`,
`UnsupportedKubeletConfiguration`), `UserDataSizeLimitExceeded`; and a bare
`ValidationSucceeded=False` (`NodeClassRef not ready, ValidationSucceeded=False`) when the input
shows no reason. The authorization reasons (`...AuthCheckFailed`) are KW105, and EC2 rejecting
the block device mappings in the dry run (`InvalidBlockDeviceMapping`) is KW301.
Not the same reason names on another condition: `InstanceProfileReady=False` reason
`InstanceProfileNotFound` (`Failed to detect the Instance Profile`) is KW501, and
`ValidationSucceeded=Unknown` `DependenciesNotReady` is a validation still waiting on it.

## Why it happens
A reserved tag key in `spec.tags` (`kubernetes.io/cluster/...`, `karpenter.sh/nodepool`,
`karpenter.sh/nodeclaim`, `karpenter.k8s.aws/ec2nodeclass`), no `eks:DescribeCluster` for the
controller, an instance profile that does not exist, a kubelet setting the version rejects, user
data over 16 KB, or a dependency (subnets, security groups, AMIs) that did not resolve.

## How to fix
Fix the cause the reason names. Karpenter caches the result and re-validates every 10 minutes.
The widespread advice to annotate `karpenter.sh/force-refresh` is only half true: no such key
exists in Karpenter, but from v1.7 a change to any annotation invalidates the validation cache,
so `kubectl annotate ec2nodeclass <name> karpenter.sh/force-refresh="$(date +%s)" --overwrite`
works on v1.7 and later; before v1.7 it does nothing: restart the controller (`kubectl rollout
restart deployment/karpenter -n <namespace>`) or wait.
"#,
};

const SIGNALS: &[&str] = &[
    "validationsucceeded",
    "tagvalidationfailed",
    "clustercidrresolutionfailed",
    "instanceprofilenotfound",
    "dependenciesnotready",
    "kubeletconfiguration",
    "kubeletexpression",
    "nodeclassnotready",
    "failed to detect the cluster cidr",
    "tag validation requirements",
    "tags failed validation requirements",
    "awaiting ami, instance profile, security group, and subnet resolution",
    "nodeclasscel feature gate is disabled",
    "rejected the rendered user data as too large",
    "status condition transitioned",
];

/// A validation failure reason this rule owns, what it means and what to do.
#[derive(PartialEq)]
struct Reason {
    name: &'static str,
    /// Texts of its condition message, for inputs that show the message without the reason.
    messages: &'static [&'static str],
    meaning: &'static str,
    fix: &'static str,
}

const REASONS: &[Reason] = &[
    Reason {
        name: "TagValidationFailed",
        messages: &["does not pass tag validation requirements", "tags failed validation requirements"],
        meaning: "spec.tags holds a key Karpenter reserves for itself",
        fix: "Remove the reserved keys from spec.tags: kubernetes.io/cluster/<cluster>, karpenter.sh/nodepool, karpenter.sh/nodeclaim, karpenter.k8s.aws/ec2nodeclass, eks:eks-cluster-name (Karpenter sets them on what it launches).",
    },
    Reason {
        name: "ClusterCIDRResolutionFailed",
        messages: &["Failed to detect the cluster CIDR"],
        meaning: "Karpenter could not read the cluster's service CIDR, which AL2023 nodes need",
        fix: "Allow eks:DescribeCluster on the Karpenter controller role (Karpenter reads the service CIDR with it), then let it re-validate.",
    },
    Reason {
        name: "InstanceProfileNotFound",
        messages: &[],
        meaning: "the instance profile named in spec.instanceProfile does not exist",
        fix: "Create the instance profile (with the node role in it), correct spec.instanceProfile, or use spec.role and let Karpenter manage the profile. Check that it exists:",
    },
    Reason {
        name: "DependenciesNotReady",
        messages: &["Awaiting AMI, Instance Profile, Security Group, and Subnet resolution"],
        meaning: "validation waits for the subnets, security groups, AMIs or instance profile to resolve",
        fix: "Fix the dependency that is not ready first (KW501: SubnetsReady, SecurityGroupsReady, AMIsReady, InstanceProfileReady); validation follows.",
    },
    Reason {
        name: "InvalidKubeletConfiguration",
        messages: &[],
        meaning: "spec.kubelet holds an invalid setting",
        fix: "Correct spec.kubelet (the condition message names the field).",
    },
    Reason {
        name: "KubeletExpressionInvalid",
        messages: &[],
        meaning: "a CEL expression in spec.kubelet does not compile",
        fix: "Correct the CEL expression in spec.kubelet.",
    },
    Reason {
        name: "KubeletExpressionEvaluationFailed",
        messages: &[],
        meaning: "a CEL expression in spec.kubelet failed to evaluate",
        fix: "Correct the CEL expression in spec.kubelet.",
    },
    Reason {
        name: "KubeletExpressionsDisabled",
        messages: &["NodeClassCEL feature gate is disabled"],
        meaning: "spec.kubelet uses a CEL expression but the NodeClassCEL feature gate is off",
        fix: "Enable the NodeClassCEL feature gate, or replace the expression with plain values.",
    },
    Reason {
        name: "UnsupportedKubeletConfiguration",
        messages: &[],
        meaning: "spec.kubelet sets something the AMI family does not support",
        fix: "Remove the unsupported kubelet setting for this AMI family.",
    },
    Reason {
        name: "UserDataSizeLimitExceeded",
        messages: &["rejected the rendered user data as too large"],
        meaning: "the rendered user data is over EC2's 16 KB limit",
        fix: "Shrink spec.userData (move scripts to S3 or an image) below 16 KB once rendered.",
    },
];

/// Reasons that are not this rule's: the controller's authorization checks (KW105), a
/// NodePool's own validation, and EC2 rejecting the block device mappings in the dry run
/// (KW301 names the mapping to fix; a bare `ValidationSucceeded=False` beside it is that
/// failure, not a second one).
const NOT_OURS: &[&str] = &[
    "CreateLaunchTemplateAuthCheckFailed",
    "CreateFleetAuthCheckFailed",
    "RunInstancesAuthCheckFailed",
    "Controller isn't authorized to call",
    "NodePoolValidationFailed",
    "InvalidBlockDeviceMapping",
];

/// The reasons a message reports. `UserDataSizeLimitExceeded` is also a NodeClaim launch
/// reason, so alone it counts only from a ValidationSucceeded transition or condition.
fn reasons_in(text: &str) -> Vec<&'static Reason> {
    if other_condition(text) {
        return Vec::new();
    }
    let tr = transition(text);
    let validation_context = tr
        .as_ref()
        .is_some_and(|t| t.condition_type.eq_ignore_ascii_case("ValidationSucceeded"))
        || contains_word(text, "ValidationSucceeded=False");
    REASONS
        .iter()
        .filter(|r| {
            let by_name = contains_word(text, r.name)
                && (r.name != "UserDataSizeLimitExceeded" || validation_context);
            by_name || contains_any(text, r.messages)
        })
        .collect()
}

/// A decoded condition (`Type=Status Reason: message`) or a condition transition that is not
/// `ValidationSucceeded=False`: `InstanceProfileReady=False InstanceProfileNotFound` is the
/// instance profile missing (KW501), and `ValidationSucceeded=Unknown DependenciesNotReady` a
/// validation still waiting on it; the same reason names there are not a failed validation.
fn other_condition(text: &str) -> bool {
    if let Some(tr) = transition(text) {
        return !(tr
            .condition_type
            .eq_ignore_ascii_case("ValidationSucceeded")
            && tr.to.eq_ignore_ascii_case("False"));
    }
    let Some((ty, status)) = text
        .split_whitespace()
        .next()
        .and_then(|w| w.trim_end_matches(',').split_once('='))
    else {
        return false;
    };
    let is_condition = !ty.is_empty()
        && ty.chars().all(|c| c.is_ascii_alphabetic())
        && ["True", "False", "Unknown"].contains(&status);
    is_condition && !(ty == "ValidationSucceeded" && status == "False")
}

/// `NodeClassNotReady` with the cluster CIDR message (v1.0 to v1.6).
fn is_old_cidr(text: &str) -> bool {
    contains_word(text, "NodeClassNotReady") && contains_any(text, &["cluster CIDR"])
}

struct Group<'a> {
    nodeclass: Option<String>,
    reasons: Vec<&'static Reason>,
    bare: bool,
    messages: Vec<&'a Message>,
    evidence: Vec<Evidence>,
    details: Vec<String>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let not_ours_present = facts
        .messages
        .iter()
        .any(|m| contains_any(&m.text, NOT_OURS))
        || facts.nodeclasses.iter().any(|nc| {
            nc.conditions.iter().any(|c| {
                c.reason
                    .as_deref()
                    .is_some_and(|r| contains_any(r, NOT_OURS))
            })
        });
    let default_nc = sole_nodeclass(facts);
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut add = |nc: Option<String>| -> usize {
        match groups.iter().position(|g| g.nodeclass == nc) {
            Some(i) => i,
            None => {
                groups.push(Group {
                    nodeclass: nc,
                    reasons: Vec::new(),
                    bare: false,
                    messages: Vec::new(),
                    evidence: Vec::new(),
                    details: Vec::new(),
                });
                groups.len() - 1
            }
        }
    };
    let mut indices: Vec<(usize, &Message, Vec<&'static Reason>, bool)> = Vec::new();
    for m in &facts.messages {
        let t = unescaped(&m.text);
        let mut reasons = reasons_in(&t);
        if is_old_cidr(&t) {
            push_unique(&mut reasons, &REASONS[1]);
        }
        let bare = reports_condition(&t, "ValidationSucceeded", "False");
        if (reasons.is_empty() && !bare) || undone_transition(facts, m) {
            continue;
        }
        let nc = message_nodeclass(facts, m).or_else(|| default_nc.clone());
        indices.push((add(nc), m, reasons, bare));
    }
    let mut typed: Vec<(usize, Option<Evidence>, String, Vec<&'static Reason>)> = Vec::new();
    for nc in &facts.nodeclasses {
        for c in &nc.conditions {
            let reason = c.reason.as_deref().unwrap_or_default();
            let is_validation = c.condition_type == "ValidationSucceeded" && c.status == "False";
            let is_old = c.condition_type == "Ready"
                && reason == "NodeClassNotReady"
                && c.message
                    .as_deref()
                    .is_some_and(|m| m.contains("cluster CIDR"));
            if !is_validation && !is_old {
                continue;
            }
            if contains_any(reason, NOT_OURS) {
                continue;
            }
            let reasons: Vec<&'static Reason> = if is_old {
                vec![&REASONS[1]]
            } else {
                REASONS.iter().filter(|r| r.name == reason).collect()
            };
            let detail = match &c.message {
                Some(msg) if !msg.is_empty() => {
                    format!("{}=False ({reason}: {msg})", c.condition_type)
                }
                _ => format!("{}=False ({reason})", c.condition_type),
            };
            let i = add(Some(nc.meta.name.clone()));
            typed.push((
                i,
                c.evidence.clone().or_else(|| nc.meta.evidence.clone()),
                detail,
                reasons,
            ));
        }
    }
    for (i, m, reasons, bare) in indices {
        let g = &mut groups[i];
        // A transition event carries the reason's message too.
        if let Some(tr) = transition(&unescaped(&m.text)).filter(|tr| {
            tr.condition_type
                .eq_ignore_ascii_case("ValidationSucceeded")
        }) {
            if let (Some(r), Some(msg)) = (&tr.reason, &tr.message) {
                push_unique(
                    &mut g.details,
                    format!("ValidationSucceeded={} ({r}: {msg})", tr.to),
                );
            }
        }
        for r in reasons {
            push_unique(&mut g.reasons, r);
        }
        g.bare |= bare;
        g.messages.push(m);
    }
    for (i, e, detail, reasons) in typed {
        let g = &mut groups[i];
        g.evidence.extend(e);
        push_unique(&mut g.details, detail);
        if reasons.is_empty() {
            g.bare = true;
        }
        for r in reasons {
            push_unique(&mut g.reasons, r);
        }
    }
    groups
        .iter()
        .filter(|g| !g.reasons.is_empty() || (g.bare && !not_ours_present))
        .map(|g| diagnose(facts, g))
        .collect()
}

/// The profile an `Instance profile "<name>" not found` message names, else the
/// EC2NodeClass's spec.instanceProfile.
fn instance_profile_named(facts: &Facts, g: &Group<'_>) -> Option<String> {
    g.details
        .iter()
        .cloned()
        .chain(g.messages.iter().map(|m| unescaped(&m.text).into_owned()))
        .find_map(|t| quoted_after(&t, "instance profile "))
        .or_else(|| {
            g.nodeclass
                .as_deref()
                .and_then(|n| facts.nodeclass(n))
                .and_then(|nc| nc.instance_profile.clone())
        })
}

/// Whether a tag key is one Karpenter reserves (its RestrictedTagPatterns, v1).
fn is_reserved_tag(key: &str) -> bool {
    key.strip_prefix("kubernetes.io/cluster/")
        .is_some_and(|cluster| !cluster.is_empty() && !cluster.contains('/'))
        || matches!(
            key,
            "karpenter.sh/nodepool"
                | "karpenter.sh/nodeclaim"
                | "karpenter.k8s.aws/ec2nodeclass"
                | "eks:eks-cluster-name"
        )
}

/// The reserved keys a TagValidationFailed message names: v1.2 `"<key>" tag does not pass
/// ...`, v1.3+ `tags failed validation requirements (tags="<key>", "<key>")`. Only quoted
/// values that are reserved keys count, so a quoted object name is never taken for a tag.
fn reserved_tags_named(g: &Group<'_>) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    let texts = g
        .details
        .iter()
        .cloned()
        .chain(g.messages.iter().map(|m| unescaped(&m.text).into_owned()));
    for text in texts {
        for (i, part) in text.split('"').enumerate() {
            // Odd pieces of a split on `"` are the quoted values.
            if i % 2 == 1 && is_reserved_tag(part) && !keys.iter().any(|k| k == part) {
                keys.push(part.to_string());
            }
        }
    }
    keys
}

fn diagnose(facts: &Facts, g: &Group<'_>) -> Diagnosis {
    let name = g.nodeclass.as_deref().unwrap_or("<ec2nodeclass>");
    let label = g
        .nodeclass
        .as_deref()
        .map(|n| format!("EC2NodeClass {n}"))
        .unwrap_or_else(|| "The EC2NodeClass".to_string());
    let mut summary = if g.reasons.is_empty() {
        format!(
            "{label} failed validation (ValidationSucceeded=False); the input does not show the reason."
        )
    } else {
        let shown: Vec<String> = if g.details.is_empty() {
            g.reasons.iter().map(|r| r.name.to_string()).collect()
        } else {
            g.details.clone()
        };
        let meanings: Vec<&str> = g.reasons.iter().map(|r| r.meaning).collect();
        format!(
            "{label} failed validation ({}): {}.",
            shown.join(", "),
            meanings.join("; ")
        )
    };
    summary.push_str(
        " It is not ready, nor is any NodePool that uses it (KW208): Karpenter launches nothing from them.",
    );
    let mut steps = Vec::new();
    if g.reasons.is_empty() {
        steps.push(Remediation::command(
            "Read the reason and message of the ValidationSucceeded condition:",
            format!(
                "kubectl get ec2nodeclass {name} -o jsonpath='{{range .status.conditions[?(@.type==\"ValidationSucceeded\")]}}{{.reason}}: {{.message}}{{\"\\n\"}}{{end}}'"
            ),
        ));
    }
    for r in &g.reasons {
        if r.name == "InstanceProfileNotFound" {
            let profile = instance_profile_named(facts, g);
            steps.push(Remediation::command(
                format!("{}: {}", r.name, r.fix),
                format!(
                    "aws iam get-instance-profile --instance-profile-name {}",
                    profile.as_deref().unwrap_or("<instance-profile>")
                ),
            ));
            continue;
        }
        if r.name == "TagValidationFailed" {
            let keys = reserved_tags_named(g);
            if !keys.is_empty() {
                // JSON-pointer escaping: `~` is `~0`, `/` is `~1`.
                let ops: Vec<String> = keys
                    .iter()
                    .map(|k| {
                        let pointer = k.replace('~', "~0").replace('/', "~1");
                        format!("{{\"op\":\"remove\",\"path\":\"/spec/tags/{pointer}\"}}")
                    })
                    .collect();
                steps.push(Remediation::command(
                    format!(
                        "{}: remove {} from spec.tags of EC2NodeClass {name} (Karpenter sets reserved keys itself on what it launches):",
                        r.name,
                        keys.join(", ")
                    ),
                    format!(
                        "kubectl patch ec2nodeclass {name} --type json -p '[{}]'",
                        ops.join(",")
                    ),
                ));
                continue;
            }
        }
        steps.push(Remediation::text(format!("{}: {}", r.name, r.fix)));
    }
    steps.extend(refresh_steps(facts, name));
    let mut related: Vec<&'static str> = vec!["KW208"];
    if g.reasons.iter().any(|r| r.name == "DependenciesNotReady") {
        related.insert(0, "KW501");
    }
    let mut d = Diagnosis::new(&META, summary)
        .with_messages(g.messages.iter().copied())
        .with_evidence(g.evidence.clone())
        .with_related(&related)
        .with_remediation(steps);
    if let Some(n) = &g.nodeclass {
        d = d.with_object(Some(&crate::rules::kw3xx::common::nodeclass_ref(facts, n)));
    }
    if g.reasons.is_empty() {
        d = d.with_confidence(Confidence::Medium);
    }
    d
}

/// The truth about refreshing the cached validation result, for the version in the input.
fn refresh_steps(facts: &Facts, name: &str) -> Vec<Remediation> {
    let ns = karpenter_namespace_or_placeholder(facts);
    let annotate = format!(
        "kubectl annotate ec2nodeclass {name} karpenter.sh/force-refresh=\"$(date +%s)\" --overwrite"
    );
    let restart = format!("kubectl rollout restart deployment/karpenter -n {ns}");
    let version = version_label(facts).unwrap_or_default();
    match at_least(facts, 1, 7) {
        Some(true) => vec![Remediation::command(
            format!("After the fix, Karpenter {version} re-validates within 10 minutes, or at once when any annotation of the EC2NodeClass changes (karpenter.sh/force-refresh is not a key Karpenter defines; any key works):"),
            annotate,
        )],
        Some(false) => vec![Remediation::command(
            format!("After the fix, Karpenter {version} re-validates within 10 minutes. Annotating the EC2NodeClass (the karpenter.sh/force-refresh advice) does nothing before v1.7; to re-validate now, restart the controller:"),
            restart,
        )],
        None => vec![
            Remediation::command(
                "After the fix, Karpenter re-validates within 10 minutes. Karpenter v1.7 and later: any annotation change re-validates at once (karpenter.sh/force-refresh is not a key Karpenter defines; any key works):",
                annotate,
            ),
            Remediation::command(
                "Before v1.7: annotations do not refresh the cached result; restart the controller instead:",
                restart,
            ),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Condition, Meta, NodeClass};
    use crate::testing::{check_only, ids};

    fn first(text: &str) -> Diagnosis {
        let report = check_only("KW502", text);
        assert_eq!(ids(&report), ["KW502"], "{text}");
        report.diagnoses[0].clone()
    }

    #[test]
    fn other_conditions_with_the_same_reason_are_not_validation() {
        for text in [
            "InstanceProfileReady=False InstanceProfileNotFound: Failed to detect the Instance Profile",
            "ValidationSucceeded=Unknown DependenciesNotReady: Awaiting Instance Profile Resolution",
            "Status condition transitioned, Type: InstanceProfileReady, Status: Unknown -> False, Reason: InstanceProfileNotFound, Message: Failed to detect the Instance Profile",
        ] {
            assert!(reasons_in(text).is_empty(), "{text}");
        }
        assert!(!reasons_in(
            "ValidationSucceeded=False InstanceProfileNotFound: Instance profile \"x\" not found"
        )
        .is_empty());
    }

    #[test]
    fn a_nodepool_condition_names_its_nodeclass_ref() {
        // The NodePool's NodeClassReady copies the EC2NodeClass's Ready message; with NodePools
        // on different EC2NodeClasses only the nodeClassRef says which failed.
        let text = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: al2023}
status:
  conditions:
  - {type: NodeClassReady, status: \"False\", reason: UnhealthyDependents, message: \"ValidationSucceeded=False\"}
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: gpu}
";
        let report = check_only("KW502", text);
        assert_eq!(ids(&report), ["KW502"]);
        let summary = &report.diagnoses[0].summary;
        assert!(
            summary.starts_with("EC2NodeClass al2023 failed validation"),
            "{summary}"
        );
    }

    #[test]
    fn every_reason_form() {
        for (text, reason) in [
            ("ValidationSucceeded=False DependenciesNotReady: Awaiting AMI, Instance Profile, Security Group, and Subnet resolution", "DependenciesNotReady"),
            ("    reason: DependenciesNotReady", "DependenciesNotReady"),
            ("Status condition transitioned, Type: ValidationSucceeded, Status: True -> False, Reason: TagValidationFailed, Message: tags failed validation requirements (tags=\"karpenter.sh/nodepool\")", "TagValidationFailed"),
            ("\"kubernetes.io/cluster/prod\" tag does not pass tag validation requirements", "TagValidationFailed"),
            ("ValidationSucceeded=False ClusterCIDRResolutionFailed: Failed to detect the cluster CIDR", "ClusterCIDRResolutionFailed"),
            ("Ready=False NodeClassNotReady: Failed to detect the cluster CIDR", "ClusterCIDRResolutionFailed"),
            ("ValidationSucceeded=False InstanceProfileNotFound: Instance profile \"KarpenterNodeProfile\" not found", "InstanceProfileNotFound"),
            ("ValidationSucceeded=False KubeletExpressionsDisabled: spec.kubelet contains a CEL expression, but the NodeClassCEL feature gate is disabled", "KubeletExpressionsDisabled"),
            ("ValidationSucceeded=False UserDataSizeLimitExceeded: ec2:CreateLaunchTemplate rejected the rendered user data as too large", "UserDataSizeLimitExceeded"),
        ] {
            let d = first(text);
            assert!(d.summary.contains(reason), "{text}: {}", d.summary);
            assert_eq!(d.confidence, Confidence::High);
        }
        let dep = first("reason: DependenciesNotReady");
        assert_eq!(dep.related, ["KW501", "KW208"]);
    }

    #[test]
    fn bare_validation_failure_without_an_auth_reason() {
        let d = first(
            r#"{"level":"ERROR","message":"failed launching nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-n8v3c"},"error":"NodeClassRef not ready, ValidationSucceeded=False"}"#,
        );
        assert_eq!(d.confidence, Confidence::Medium);
        assert!(d.summary.contains("does not show the reason"));
        assert!(d.remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.contains("ValidationSucceeded")));
    }

    #[test]
    fn auth_checks_and_other_validations_are_not_ours() {
        for text in [
            "Normal  Ready  3m  karpenter  Status condition transitioned, Type: Ready, Status: True -> False, Reason: UnhealthyDependents, Message: ValidationSucceeded=False\nNormal  ValidationSucceeded  3m  karpenter  Status condition transitioned, Type: ValidationSucceeded, Status: True -> False, Reason: RunInstancesAuthCheckFailed, Message: Controller isn't authorized to call ec2:RunInstances",
            "    Message:  Controller isn't authorized to call ec2:CreateFleet\n    Reason:   CreateFleetAuthCheckFailed\n    Message:  ValidationSucceeded=False",
            "type: ValidationSucceeded\nstatus: \"True\"\nreason: ValidationSucceeded",
            "Launched=Unknown UserDataSizeLimitExceeded: Rendered user data exceeds the EC2 user data size limit",
            "ValidationSucceeded=False NodePoolValidationFailed: invalid requirements",
        ] {
            assert!(ids(&check_only("KW502", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn reserved_tag_keys() {
        for key in [
            "kubernetes.io/cluster/prod-eks",
            "karpenter.sh/nodepool",
            "karpenter.sh/nodeclaim",
            "karpenter.k8s.aws/ec2nodeclass",
            "eks:eks-cluster-name",
        ] {
            assert!(is_reserved_tag(key), "{key}");
        }
        for key in [
            "kubernetes.io/cluster/",
            "karpenter.sh/discovery",
            "team",
            "default",
        ] {
            assert!(!is_reserved_tag(key), "{key}");
        }
    }

    #[test]
    fn refresh_advice_follows_the_version() {
        let text =
            "ValidationSucceeded=False TagValidationFailed: tags failed validation requirements";
        let unknown = first(text);
        let cmds: Vec<&str> = unknown
            .remediation
            .iter()
            .filter_map(|r| r.command.as_deref())
            .collect();
        assert_eq!(cmds.len(), 2);
        assert!(unknown
            .remediation
            .iter()
            .any(|r| r.text.starts_with("Before v1.7")));
        let mut facts = Facts {
            karpenter_version: Some("1.8.1".into()),
            ..Default::default()
        };
        facts.nodeclasses.push(NodeClass {
            meta: Meta {
                name: "default".into(),
                ..Default::default()
            },
            conditions: vec![Condition {
                condition_type: "ValidationSucceeded".into(),
                status: "False".into(),
                reason: Some("TagValidationFailed".into()),
                message: Some(
                    "tags failed validation requirements (tags=\"karpenter.sh/nodepool\")".into(),
                ),
                evidence: None,
            }],
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert!(d.summary.starts_with("EC2NodeClass default failed validation (ValidationSucceeded=False (TagValidationFailed"), "{}", d.summary);
        let last = d.remediation.last().unwrap();
        assert_eq!(
            last.command.as_deref(),
            Some("kubectl annotate ec2nodeclass default karpenter.sh/force-refresh=\"$(date +%s)\" --overwrite")
        );
        assert!(last.text.contains("v1.8.1"));
        facts.karpenter_version = Some("1.6.2".into());
        facts.karpenter_namespace = Some("kube-system".into());
        let last = check(&facts)[0].remediation.last().unwrap().clone();
        assert_eq!(
            last.command.as_deref(),
            Some("kubectl rollout restart deployment/karpenter -n kube-system")
        );
        assert!(last.text.contains("does nothing before v1.7"));
    }

    /// EC2 rejecting the block device mappings in the dry run is KW301's: the bare
    /// `ValidationSucceeded=False` beside it, or a condition carrying that reason, is not a
    /// second diagnosis; a reason of this rule's still is.
    #[test]
    fn block_device_mapping_validation_is_kw301s() {
        let ibdm = r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclass","EC2NodeClass":{"name":"gpu"},"error":"validating ec2:RunInstances authorization, operation error EC2: RunInstances, https response error StatusCode: 400, RequestID: 9f, api error InvalidBlockDeviceMapping: Volume of size 2GB is smaller than snapshot 'snap-0a8454f13dc7cb861', expect size>= 20GB"}"#;
        for text in [
            format!("{ibdm}\nValidationSucceeded=False"),
            "Status condition transitioned, Type: ValidationSucceeded, Status: Unknown -> False, Reason: InvalidBlockDeviceMapping, Message: Invalid device name /dev/sdx".to_string(),
        ] {
            assert!(ids(&check_only("KW502", &text)).is_empty(), "{text}");
        }
        let own = format!("{ibdm}\nValidationSucceeded=False TagValidationFailed: \"kubernetes.io/cluster/prod\" tag does not pass tag validation requirements");
        assert_eq!(ids(&check_only("KW502", &own)), ["KW502"]);
    }
}
