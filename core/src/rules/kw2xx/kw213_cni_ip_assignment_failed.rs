//! KW213 cni-ip-assignment-failed.

use crate::facts::{Facts, Message, ObjectRef};
use crate::rules::kw2xx::eni_limits::{eni_limits, max_pods};
use crate::rules::kw2xx::kw214_subnet_ip_exhausted::{
    exhausted_subnets_for_cni, subnet_counts, NEAR_ZERO,
};
use crate::rules::kw2xx::scheduling::tail_after;
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW213",
    slug: "cni-ip-assignment-failed",
    title: "The VPC CNI cannot give the pod an IP address",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The pod was scheduled on a node, but its sandbox cannot start: the AWS VPC CNI has no IP
address to give it, so the pod stays in `ContainerCreating`.

Signal: the kubelet event `FailedCreatePodSandBox` with `plugin type="aws-cni" ... failed (add):
add cmd: failed to assign an IP address to container` (or `networkPlugin cni failed to set up
pod ... network: add cmd: failed to assign an IP address to container`). Not this rule: `add cmd:
Error received from AddNetwork gRPC call: ... dial tcp 127.0.0.1:50051: connect: connection
refused`, where no address was asked for because ipamd is not running on the node (KW305).

## Why it happens
Two causes, told apart by the facts:
- `maxPods` above what the node's ENIs can address: the EC2NodeClass's `spec.kubelet.maxPods`
  lets more pods onto the node than ENIs x (IPv4 addresses per ENI - 1) + 2 (without the
  EC2NodeClass, the node's allocatable `pods` against its instance type's ENIs says the same,
  unless aws-node shows prefix delegation on). Security Groups for Pods take one ENI for the
  trunk, which Karpenter does not subtract unless told.
- the subnet is out of addresses (KW214): the subnets' `AvailableIpAddressCount` is near zero.

## How to fix
Turn on VPC CNI prefix delegation (`ENABLE_PREFIX_DELEGATION=true`, 16 addresses per slot), lower
`maxPods` to what the instance types can address, tell Karpenter about the trunk ENI with
`RESERVED_ENIS=1` when using Security Groups for Pods; for an exhausted subnet, see KW214.
"#,
};

const SIGNALS: &[&str] = &["failed to assign an ip address"];

/// The first of `pods` the input shows requesting `vpc.amazonaws.com/pod-eni`.
fn security_groups_pod(facts: &Facts, pods: &[ObjectRef]) -> Option<String> {
    pods.iter()
        .find(|r| {
            facts.pod(r).is_some_and(|p| {
                p.containers
                    .iter()
                    .any(|c| c.requests.contains_key("vpc.amazonaws.com/pod-eni"))
            })
        })
        .map(ObjectRef::qualified_name)
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<&Message> = facts
        .messages_containing("failed to assign an ip address")
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    let pods: Vec<ObjectRef> = {
        let mut v: Vec<ObjectRef> = Vec::new();
        for m in &hits {
            if let Some(o) = m
                .object
                .as_ref()
                .filter(|o| o.kind.eq_ignore_ascii_case("pod"))
            {
                if !v.contains(o) {
                    v.push(o.clone());
                }
            } else if let Some(o) = pod_in_text(&m.text).or_else(|| {
                // A describe Events row has no object column: dockershim's text names the
                // pod, else the same Events section's Scheduled row does.
                crate::rules::kw2xx::scheduling::scheduled_pod_in_source(facts, m).map(|(p, _)| p)
            }) {
                if !v.iter().any(|p| p.name == o.name) {
                    v.push(o);
                }
            }
        }
        if v.is_empty() {
            if let [only] = facts.pods.as_slice() {
                v.push(only.object_ref());
            }
        }
        v
    };
    let exhausted = exhausted_subnets_for_cni(facts, &hits);
    // Subnets whose free addresses the input shows, when none is near exhausted: the subnet
    // side is then already checked.
    // An exhausted subnet of another zone than the failing nodes' is left out of both lists.
    let roomy = if exhausted.is_empty() {
        let mut counts = subnet_counts(facts);
        counts.retain(|s| s.available > NEAR_ZERO);
        counts
    } else {
        Vec::new()
    };
    let density = density_problem(facts, &pods);
    let mut summary = match pods.as_slice() {
        [] => "The VPC CNI cannot assign an IP address to the pod's sandbox (FailedCreatePodSandBox), so it stays in ContainerCreating.".to_string(),
        [one] => format!("The VPC CNI cannot assign an IP address to pod {} (FailedCreatePodSandBox), so it stays in ContainerCreating.", one.qualified_name()),
        many => format!(
            "The VPC CNI cannot assign IP addresses to {} pods ({}), so they stay in ContainerCreating.",
            many.len(),
            many.iter().map(ObjectRef::qualified_name).collect::<Vec<_>>().join(", ")
        ),
    };
    let mut related: Vec<&'static str> = Vec::new();
    let mut confidence = Confidence::High;
    if !exhausted.is_empty() {
        let list: Vec<String> = exhausted
            .iter()
            .map(|s| {
                format!(
                    "{}{} ({} free)",
                    s.id.as_deref().unwrap_or("a subnet"),
                    s.zone
                        .as_deref()
                        .map(|z| format!(" in {z}"))
                        .unwrap_or_default(),
                    s.available
                )
            })
            .collect();
        summary.push_str(&format!(
            " Cause: the subnet is out of addresses, not maxPods: {} (KW214).",
            list.join(", ")
        ));
        related.push("KW214");
    } else if let Some(d) = &density {
        summary.push_str(&format!(" Cause: {d}"));
    } else if !roomy.is_empty() {
        summary.push_str(&format!(
            " The subnets in the input have free addresses ({}), so a subnet out of addresses is unlikely: maxPods above what the node's ENIs can address is the likely cause.",
            roomy
                .iter()
                .map(|s| format!(
                    "{}{}: {} free",
                    s.id.as_deref().unwrap_or("a subnet"),
                    s.zone.as_deref().map(|z| format!(" in {z}")).unwrap_or_default(),
                    s.available
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        confidence = Confidence::Medium;
    } else if let Some(sgp) = security_groups_pod(facts, &pods) {
        // A Security Groups for Pods pod gets its address from a branch ENI of the node's trunk
        // ENI, which amazon-vpc-resource-controller allocates some time after the node joins.
        summary.push_str(&format!(
            " Pod {sgp} requests vpc.amazonaws.com/pod-eni (Security Groups for Pods): its address comes from a branch ENI that amazon-vpc-resource-controller allocates on the node's trunk ENI (KW210 explains that wait; a `ResourceAllocated` event says it is done), so check that first. Otherwise: maxPods above what the node's ENIs can address (the trunk ENI takes one), or a subnet out of addresses."
        ));
        related.push("KW210");
        confidence = Confidence::Medium;
    } else {
        summary.push_str(" The facts do not say which cause: maxPods above what the node's ENIs can address, or a subnet out of addresses (check `AvailableIpAddressCount`).");
        confidence = Confidence::Medium;
    }
    if !exhausted.is_empty() {
        // The subnet is the cause: the maxPods steps would not help, and prefix delegation needs
        // free contiguous /28 blocks the subnet no longer has.
        return vec![Diagnosis::new(&META, summary)
            .with_object(pods.first())
            .with_messages(hits.iter().copied())
            .with_related(&related)
            .with_remediation([Remediation::text(
                "Give the pods addresses where the subnet has none: KW214's steps (a secondary CIDR with new subnets, pods spread across zones, a smaller warm IP pool). Not prefix delegation: it needs free contiguous /28 blocks, which an exhausted subnet lacks.",
            )])];
    }
    let karpenter_ns = crate::rules::text::karpenter_namespace_or_placeholder(facts);
    let cluster = crate::rules::text::cluster_name_or_placeholder(facts);
    let mut steps = Vec::new();
    if roomy.is_empty() {
        steps.push(Remediation::command(
            "Check the subnets' free addresses first (the other cause):",
            format!("aws ec2 describe-subnets --filters Name=tag:karpenter.sh/discovery,Values={cluster} --query 'Subnets[].[SubnetId,AvailabilityZone,AvailableIpAddressCount]' --output table"),
        ));
    }
    steps.push(Remediation::command(
        "Turn on VPC CNI prefix delegation (each ENI slot then carries 16 addresses; Nitro instances only):",
        "kubectl set env daemonset aws-node -n kube-system ENABLE_PREFIX_DELEGATION=true WARM_PREFIX_TARGET=1",
    ));
    if facts.nodeclasses.iter().all(|c| c.max_pods().is_none()) {
        if let Some((node, _, _, _, _, limit)) = node_over_eni_limit(facts, &pods) {
            // The node's NodePool names its EC2NodeClass when the input holds the NodePool.
            let nodeclass = facts
                .nodes
                .iter()
                .find(|n| n.meta.name == node)
                .and_then(|n| n.nodepool())
                .and_then(|np| facts.nodepool(np))
                .and_then(|np| np.nodeclass_ref.clone())
                .unwrap_or_else(|| "<ec2nodeclass>".to_string());
            steps.push(Remediation::yaml(
                format!(
                    "Or set maxPods on the node's EC2NodeClass {nodeclass} to what its instance types can address (`kubectl edit ec2nodeclass {nodeclass}`; a custom user data or AMI may be what sets the kubelet's --max-pods):"
                ),
                format!("spec:\n  kubelet:\n    maxPods: {limit}\n"),
            ));
        }
    }
    if let Some(nc) = facts.nodeclasses.iter().find(|c| c.max_pods().is_some()) {
        steps.push(Remediation::yaml(
            format!(
                "Or lower maxPods on EC2NodeClass {} to what its instance types can address (`kubectl edit ec2nodeclass {}`):",
                nc.meta.name, nc.meta.name
            ),
            format!(
                "spec:\n  kubelet:\n    maxPods: {}\n",
                density_limit(facts, &pods).unwrap_or(58)
            ),
        ));
    }
    let max_pods_step = facts.nodeclasses.iter().any(|c| c.max_pods().is_some())
        || node_over_eni_limit(facts, &pods).is_some();
    if !max_pods_step {
        // Neither the EC2NodeClass nor the node is in the input: the numbers to compare.
        steps.push(Remediation::command(
            "Compare each node's pod limit with what its instance type's ENIs can address (ENIs x (IPv4 per ENI - 1) + 2); where it is higher, lower maxPods in the EC2NodeClass (spec.kubelet.maxPods):",
            "kubectl get nodes -l karpenter.sh/nodepool -o custom-columns='NAME:.metadata.name,TYPE:.metadata.labels.node\\.kubernetes\\.io/instance-type,MAXPODS:.status.allocatable.pods'\naws ec2 describe-instance-types --instance-types <type> --query 'InstanceTypes[].[InstanceType,NetworkInfo.MaximumNetworkInterfaces,NetworkInfo.Ipv4AddressesPerInterface]' --output table",
        ));
    }
    steps.push(Remediation::command(
        "With Security Groups for Pods, tell Karpenter one ENI is the trunk, so its max-pods computation leaves it out:",
        format!("kubectl set env deployment/karpenter -n {karpenter_ns} RESERVED_ENIS=1"),
    ));
    vec![Diagnosis::new(&META, summary)
        .with_confidence(confidence)
        .with_object(pods.first())
        .with_messages(hits.iter().copied())
        .with_related(&related)
        .with_remediation(steps)]
}

/// The pod dockershim's sandbox error names: `failed to set up pod "<name>_<ns>" network`
/// (with its namespace) or `network for pod "<name>"`.
fn pod_in_text(text: &str) -> Option<ObjectRef> {
    if let Some(tail) = tail_after(text, "failed to set up pod \"") {
        let quoted = tail.split('"').next()?;
        if let Some((name, ns)) = quoted.rsplit_once('_') {
            if !name.is_empty() && !ns.is_empty() {
                return Some(ObjectRef::new("Pod", Some(ns), name));
            }
        }
    }
    let tail = tail_after(text, "network for pod \"")?;
    let name = tail.split('"').next()?;
    (!name.is_empty()).then(|| ObjectRef::new("Pod", None, name))
}

/// The instance types of the failing pods' nodes (or of every node in the input).
fn instance_types<'a>(facts: &'a Facts, pods: &[ObjectRef]) -> Vec<&'a str> {
    let node_names: Vec<&str> = facts
        .pods
        .iter()
        .filter(|p| pods.iter().any(|r| r.name == p.meta.name))
        .filter_map(|p| p.node_name.as_deref())
        .collect();
    let mut types: Vec<&str> = facts
        .nodes
        .iter()
        .filter(|n| node_names.is_empty() || node_names.contains(&n.meta.name.as_str()))
        .filter_map(|n| n.instance_type())
        .collect();
    types.sort_unstable();
    types.dedup();
    types
}

/// The smallest pod limit the ENIs of the nodes' instance types allow.
fn density_limit(facts: &Facts, pods: &[ObjectRef]) -> Option<u32> {
    instance_types(facts, pods)
        .into_iter()
        .filter_map(|t| eni_limits(t).map(|(e, i)| max_pods(e, i)))
        .min()
}

/// The nodes the failing pods run on: their `Node:`, or the only node of the input when the
/// pods' nodes are not known.
fn failing_nodes<'a>(facts: &'a Facts, pods: &[ObjectRef]) -> Vec<&'a crate::facts::Node> {
    let node_names: Vec<&str> = facts
        .pods
        .iter()
        .filter(|p| pods.iter().any(|r| r.name == p.meta.name))
        .filter_map(|p| p.node_name.as_deref())
        .collect();
    if node_names.is_empty() {
        return match facts.nodes.as_slice() {
            [only] => vec![only],
            _ => Vec::new(),
        };
    }
    facts
        .nodes
        .iter()
        .filter(|n| node_names.contains(&n.meta.name.as_str()))
        .collect()
}

/// Whether the input shows VPC CNI prefix delegation on (aws-node's
/// `ENABLE_PREFIX_DELEGATION=true`): each ENI slot then holds a /28, and a node's pod count is
/// no longer bound by ENIs x IPs.
fn prefix_delegation_on(facts: &Facts) -> bool {
    let typed = facts
        .workloads
        .iter()
        .filter(|w| w.meta.name == "aws-node")
        .flat_map(|w| w.containers.iter())
        .find_map(|c| c.env.get("ENABLE_PREFIX_DELEGATION").cloned());
    typed.is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || facts.messages.iter().any(|m| {
            tail_after(&m.text, "ENABLE_PREFIX_DELEGATION").is_some_and(|rest| {
                rest.trim_start_matches(['=', ':', ' ', '"', '\t'])
                    .to_ascii_lowercase()
                    .starts_with("true")
            })
        })
}

/// A failing pod's node that accepts more pods (its `pods` allocatable, the kubelet's maxPods)
/// than its instance type's ENIs can address: `(node, type, pods, enis, ips, limit)`.
fn node_over_eni_limit<'a>(
    facts: &'a Facts,
    pods: &[ObjectRef],
) -> Option<(&'a str, &'a str, u64, u32, u32, u32)> {
    if prefix_delegation_on(facts) {
        return None;
    }
    failing_nodes(facts, pods).into_iter().find_map(|n| {
        let t = n.instance_type()?;
        let (enis, ips) = eni_limits(t)?;
        let limit = max_pods(enis, ips);
        let accepted: u64 = n
            .allocatable
            .get("pods")
            .or_else(|| n.capacity.get("pods"))?
            .trim()
            .parse()
            .ok()?;
        (accepted > u64::from(limit)).then_some((
            n.meta.name.as_str(),
            t,
            accepted,
            enis,
            ips,
            limit,
        ))
    })
}

/// The maxPods-above-ENI-capacity explanation, when the facts show it.
fn density_problem(facts: &Facts, pods: &[ObjectRef]) -> Option<String> {
    let Some((nc, configured)) = facts
        .nodeclasses
        .iter()
        .find_map(|c| c.max_pods().map(|m| (c, m)))
    else {
        // No EC2NodeClass maxPods in the input: the node itself says how many pods its kubelet
        // accepts.
        let (node, t, accepted, enis, ips, limit) = node_over_eni_limit(facts, pods)?;
        return Some(format!(
            "node {node} ({t}) accepts {accepted} pods (its kubelet maxPods), but {t} has {enis} ENIs x ({ips} IPv4 addresses - 1) + 2 = {limit} pod addresses: pods beyond {limit} get no IP (unless VPC CNI prefix delegation is on, which the input does not show)."
        ));
    };
    for t in instance_types(facts, pods) {
        let Some((enis, ips)) = eni_limits(t) else {
            continue;
        };
        let limit = max_pods(enis, ips);
        if configured > u64::from(limit) {
            return Some(format!(
                "EC2NodeClass {} sets maxPods {configured}, but {t} has {enis} ENIs x ({ips} IPv4 addresses - 1) + 2 = {limit} pod addresses: pods beyond {limit} get no IP.",
                nc.meta.name
            ));
        }
    }
    Some(format!(
        "EC2NodeClass {} sets maxPods {configured}: if that is more than the node's instance type can address (ENIs x (IPv4 per ENI - 1) + 2), the extra pods get no IP.",
        nc.meta.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{MessageOrigin, Node, NodeClass, Pod};
    use crate::testing::{check_only, ids};

    const EVENT: &str = r#"Warning  FailedCreatePodSandBox  39s  kubelet  Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "0f46": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container"#;

    #[test]
    fn sandbox_forms() {
        for text in [
            EVENT,
            r#"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to set up sandbox container "2043" network for pod "queue-1": networkPlugin cni failed to set up pod "queue-1_prod" network: add cmd: failed to assign an IP address to container"#,
        ] {
            assert_eq!(ids(&check_only("KW213", text)), ["KW213"], "{text}");
        }
    }

    /// Without an EC2NodeClass maxPods, the failing pod's node says how many pods its kubelet
    /// accepts: above the ENI limit of its type, that is the cause; at the limit, or with
    /// prefix delegation on, it is not.
    #[test]
    fn node_allocatable_pods_above_the_eni_limit() {
        let paste = |pods: &str, extra: &str| {
            format!("Name:               ip-10-4-7-19.eu-west-1.compute.internal\nRoles:              <none>\nLabels:             karpenter.sh/nodepool=apps\n                    node.kubernetes.io/instance-type=t3.medium\nCapacity:\n  cpu:                2\n  pods:               {pods}\nAllocatable:\n  cpu:                1930m\n  pods:               {pods}\n{extra}---\nName:             queue-1\nNamespace:        apps\nNode:             ip-10-4-7-19.eu-west-1.compute.internal/10.4.7.19\nStatus:           Pending\nEvents:\n  Type     Reason                  Age   From     Message\n  ----     ------                  ----  ----     -------\n  {EVENT}\n")
        };
        let report = check_only("KW213", &paste("110", ""));
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("node ip-10-4-7-19.eu-west-1.compute.internal (t3.medium) accepts 110 pods (its kubelet maxPods), but t3.medium has 3 ENIs x (6 IPv4 addresses - 1) + 2 = 17 pod addresses"),
            "{}",
            d.summary
        );
        assert!(d
            .remediation
            .iter()
            .any(|r| r.yaml.as_deref() == Some("spec:\n  kubelet:\n    maxPods: 17\n")));
        for unexplained in [
            paste("17", ""),
            paste(
                "110",
                "$ kubectl set env ds aws-node -n kube-system --list | grep PREFIX\nENABLE_PREFIX_DELEGATION=true\n",
            ),
        ] {
            let report = check_only("KW213", &unexplained);
            assert!(
                report.diagnoses[0]
                    .summary
                    .contains("The facts do not say which cause"),
                "{}",
                report.diagnoses[0].summary
            );
        }
    }

    /// Subnet counts in the input, none near zero: the subnet side is checked, so the report
    /// leans to maxPods and does not ask to check the subnets again.
    #[test]
    fn roomy_subnets_point_at_max_pods() {
        let text = format!("{EVENT}\n|  subnet-0a1b2c3d4e5f60718 |  us-east-1a |  3870  |\n|  subnet-0b2c3d4e5f6071829 |  us-east-1b |  4012  |\n");
        let report = check_only("KW213", &text);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("subnet-0a1b2c3d4e5f60718 in us-east-1a: 3870 free")
                && d.summary
                    .contains("maxPods above what the node's ENIs can address is the likely cause"),
            "{}",
            d.summary
        );
        assert!(d.related.is_empty());
        let fix = crate::testing::remediation_text(d);
        assert!(!fix.contains("Check the subnets' free addresses"), "{fix}");
        assert!(fix.contains("allocatable.pods"), "{fix}");
    }

    #[test]
    fn subnet_cause_points_to_kw214() {
        let text = format!("{EVENT}\n{{\n\"SubnetId\": \"subnet-0e91\",\n\"AvailabilityZone\": \"us-west-2b\",\n\"AvailableIpAddressCount\": 0\n}}");
        let report = check_only("KW213", &text);
        let d = &report.diagnoses[0];
        assert_eq!(d.related, ["KW214"]);
        assert!(
            d.summary.contains("subnet-0e91 in us-west-2b (0 free)"),
            "{}",
            d.summary
        );
        // The maxPods-side steps contradict a known subnet cause.
        let fix = crate::testing::remediation_text(d);
        assert!(!fix.contains("ENABLE_PREFIX_DELEGATION=true"), "{fix}");
        assert!(fix.contains("KW214"), "{fix}");
    }

    #[test]
    fn max_pods_cause_names_both_numbers() {
        let mut facts = Facts::default();
        facts.messages.push(Message {
            origin: MessageOrigin::Event,
            text: EVENT.into(),
            evidence: Evidence::new("events", 1, EVENT),
            object: Some(ObjectRef::new("Pod", Some("shop"), "cart-1")),
            nodepool: None,
            reason: None,
            component: None,
            time: None,
        });
        let mut pod = Pod::default();
        pod.meta.name = "cart-1".into();
        pod.meta.namespace = Some("shop".into());
        pod.node_name = Some("ip-10-0-1-1".into());
        facts.pods.push(pod);
        let mut node = Node::default();
        node.meta.name = "ip-10-0-1-1".into();
        node.meta
            .labels
            .insert("node.kubernetes.io/instance-type".into(), "m5.large".into());
        facts.nodes.push(node);
        let mut nc = NodeClass::default();
        nc.meta.name = "default".into();
        nc.kubelet = Some(serde_json::json!({"maxPods": 110}));
        facts.nodeclasses.push(nc);
        let d = &check(&facts)[0];
        assert!(d.summary.contains("maxPods 110"), "{}", d.summary);
        assert!(
            d.summary
                .contains("m5.large has 3 ENIs x (10 IPv4 addresses - 1) + 2 = 29"),
            "{}",
            d.summary
        );
        assert!(d
            .remediation
            .iter()
            .any(|r| r.yaml.as_deref() == Some("spec:\n  kubelet:\n    maxPods: 29\n")));
    }

    #[test]
    fn other_sandbox_errors_are_not_kw213() {
        for text in [
            r#"Failed to create pod sandbox: plugin type="vpc-bridge" name="vpc" failed (add): failed to parse Kubernetes args: pod does not have label vpc.amazonaws.com/PrivateIPv4Address"#,
            "No entry for c6i.xlarge in /etc/eks/eni-max-pods.txt",
            "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
        ] {
            assert!(ids(&check_only("KW213", text)).is_empty(), "{text}");
        }
    }
}
