//! KW210 security-groups-for-pods-delay.

use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::{assigned_node, nodepool_of_node, tail_after};
use crate::rules::kw3xx::common::has_generated_suffix;
use crate::rules::kw3xx::kw306_nodeclaim_not_initialized::aws_node_pod_eni;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW210",
    slug: "security-groups-for-pods-delay",
    title: "Security Groups for Pods: the pod waits for the node's trunk ENI",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The pod uses Security Groups for Pods (it requests `vpc.amazonaws.com/pod-eni`, usually through a
SecurityGroupPolicy) and sits on a fresh Karpenter node in `ContainerCreating` for minutes (up
to 30), or Karpenter's NodeClaim waits for the `vpc.amazonaws.com/pod-eni` resource, or the
scheduler says the new node has none.

Signals: NodeClaim `Initialized=Unknown ResourceNotRegistered` with `Resource
"vpc.amazonaws.com/pod-eni" was requested but not registered`, the pre-v0.32 `Expected resource
"vpc.amazonaws.com/pod-eni" didn't register on the node`, the scheduler's `Insufficient
vpc.amazonaws.com/pod-eni`, and a pod requesting `vpc.amazonaws.com/pod-eni` stuck in
`ContainerCreating` (or, when the paste cuts its requests, a pod the resource controller
announced security groups for, `SecurityGroupRequested`, that sits on its node without a branch
ENI allocated and not running). The VPC resource controller's `The instance type <type> is not
supported yet by the vpc resource controller` corroborates (that type gets no trunk ENI at all).

Not this rule: the same signals when aws-node shows `ENABLE_POD_ENI=false` (Security Groups for
Pods is off, no trunk ENI is ever attached: KW306 says to turn it on).

## Why it happens
Karpenter and amazon-vpc-resource-controller race over the node's trunk ENI: the controller
attaches it and advertises `vpc.amazonaws.com/pod-eni` only some time after the node joins, and
instance types it does not support never get one.

## How to fix
Label the NodePool's nodes `vpc.amazonaws.com/has-trunk-attached: "false"` (template label) so
the resource controller attaches the trunk ENI at once, and restrict the NodePool to instance
types that support trunking (newer families may not be supported yet).
"#,
};

const SIGNALS: &[&str] = &[
    "\"vpc.amazonaws.com/pod-eni\" was requested but not registered",
    "resource \"vpc.amazonaws.com/pod-eni\" didn't register",
    "insufficient vpc.amazonaws.com/pod-eni",
    "not supported yet by the vpc resource controller",
];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let strong: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| {
            let t = &m.text;
            contains_ignore_ascii_case(t, "vpc.amazonaws.com/pod-eni")
                && (contains_ignore_ascii_case(t, "was requested but not registered")
                    || contains_ignore_ascii_case(t, "didn't register")
                    || contains_ignore_ascii_case(t, "insufficient vpc.amazonaws.com/pod-eni"))
        })
        .collect();
    let unsupported: Vec<&Message> = facts
        .messages_containing("not supported yet by the vpc resource controller")
        .collect();
    // A pod that requests pod-eni and is still creating its sandbox: not one whose branch ENI
    // is allocated or whose images are being pulled (the sandbox, network included, exists).
    let sandbox_ready = |p: &crate::facts::Pod| {
        facts.events.iter().any(|e| {
            let about_pod = match &e.object {
                Some(o) => o.kind.eq_ignore_ascii_case("pod") && o.name == p.meta.name,
                None => facts.pods.len() == 1,
            };
            about_pod
                && [
                    "ResourceAllocated",
                    "Pulling",
                    "Pulled",
                    "Created",
                    "Started",
                ]
                .contains(&e.reason.as_str())
        })
    };
    // The VPC resource controller's `SecurityGroupRequested` event ("Pod will get the following
    // Security Groups [...]") says the pod is a Security Groups for Pods pod even when the paste
    // cuts the describe before its requests; a `BranchAllocationFailed` beside it is a resource
    // controller failure, not the wait for a trunk ENI.
    let vpc_rc_event = |p: &crate::facts::Pod, reason: &str| {
        facts.events.iter().any(|e| {
            let about_pod = match &e.object {
                Some(o) => o.kind.eq_ignore_ascii_case("pod") && o.name == p.meta.name,
                None => facts.pods.len() == 1,
            };
            about_pod && e.reason == reason
        })
    };
    let sgp_by_event = |p: &crate::facts::Pod| {
        vpc_rc_event(p, "SecurityGroupRequested") && !vpc_rc_event(p, "BranchAllocationFailed")
    };
    let waiting: Vec<ObjectRef> = facts
        .pods
        .iter()
        .filter(|p| {
            let creating = p
                .containers
                .iter()
                .any(|c| c.reason.as_deref() == Some("ContainerCreating"));
            let requests_eni = p
                .containers
                .iter()
                .any(|c| c.requests.contains_key("vpc.amazonaws.com/pod-eni"));
            // Scheduled to a node and not running: its sandbox is still being created (a
            // `kubectl get pods` table keeps only the phase of `ContainerCreating`).
            let scheduled_pending = p.node_name.is_some()
                && p.is_pending()
                && p.containers.iter().all(|c| c.reason.is_none());
            // The event scan last: thousands of pods would otherwise each scan every event.
            let sgp_waiting =
                (requests_eni && creating) || ((creating || scheduled_pending) && sgp_by_event(p));
            sgp_waiting && !sandbox_ready(p)
        })
        .map(|p| p.object_ref())
        .collect();
    let requested: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| {
            m.reason.as_deref() == Some("SecurityGroupRequested")
                && m.object.as_ref().map_or(waiting.len() == 1, |o| {
                    waiting.iter().any(|w| w.kind == o.kind && w.name == o.name)
                })
        })
        .collect();
    // aws-node shown with ENABLE_POD_ENI=false: Security Groups for Pods is off, no trunk ENI
    // is ever attached, and there is no race to label around (KW306 says to turn it on).
    if (strong.is_empty() && waiting.is_empty())
        || aws_node_pod_eni(facts).is_some_and(|v| v != "true")
    {
        return Vec::new();
    }
    let unsupported_type = unsupported.iter().find_map(|m| {
        tail_after(&m.text, "the instance type ")
            .and_then(|t| t.split_whitespace().next().map(str::to_string))
    });
    let pod = waiting.first().cloned().or_else(|| {
        strong.iter().find_map(|m| {
            m.object
                .clone()
                .filter(|o| o.kind.eq_ignore_ascii_case("pod"))
        })
    });
    let nodeclaim = strong.iter().find_map(|m| {
        m.object.clone().filter(|o| {
            o.kind.eq_ignore_ascii_case("nodeclaim") || o.kind.eq_ignore_ascii_case("machine")
        })
    });
    // Before v0.32: a Machine of a Provisioner, whose labels and requirements sit at the top
    // of its spec.
    let legacy = crate::rules::version::before_v0_32(facts)
        || nodeclaim
            .as_ref()
            .is_some_and(|o| o.kind.eq_ignore_ascii_case("machine"));
    let (pool, pool_res) = if legacy {
        ("Provisioner", "provisioner")
    } else {
        ("NodePool", "nodepool")
    };
    // The NodeClaim Karpenter nominated the waiting pod for (`Pod should schedule on:
    // nodeclaim/<name>`), and the pod's node.
    let nominated = pod.as_ref().and_then(|p| nominated_nodeclaim(facts, p));
    let pod_node = pod.as_ref().and_then(|p| assigned_node(facts, p));
    let nodepool = nodeclaim
        .as_ref()
        .and_then(|nc| facts.nodeclaims.iter().find(|c| c.meta.name == nc.name))
        .and_then(|c| c.nodepool.clone())
        .or_else(|| strong.iter().find_map(|m| m.nodepool.clone()))
        .or_else(|| {
            nominated
                .as_ref()
                .and_then(|n| facts.nodeclaims.iter().find(|c| &c.meta.name == n))
                .and_then(|c| c.nodepool.clone())
        })
        .or_else(|| pod_node.as_deref().and_then(|n| nodepool_of_node(facts, n)));
    // Without a NodeClaim or Node saying it, a generated NodeClaim name (`<nodepool>-<suffix>`)
    // hints at its NodePool: a guess, said as one.
    let guessed = nominated
        .as_deref()
        .filter(|_| nodepool.is_none())
        .filter(|n| has_generated_suffix(n))
        .and_then(|n| n.rsplit_once('-').map(|(prefix, _)| (n, prefix)));
    let mut summary = String::from("Security Groups for Pods: ");
    match (&pod, &nodeclaim) {
        (Some(p), _) => summary.push_str(&format!(
            "pod {} requests vpc.amazonaws.com/pod-eni and waits for the new node's trunk ENI",
            p.qualified_name()
        )),
        (None, Some(nc)) => summary.push_str(&format!(
            "{} {} waits for vpc.amazonaws.com/pod-eni, which the VPC resource controller has not registered yet",
            if legacy { "Machine" } else { "NodeClaim" },
            nc.name
        )),
        (None, None) => summary.push_str(
            "a pod requesting vpc.amazonaws.com/pod-eni waits for a node whose trunk ENI is attached",
        ),
    }
    summary.push_str(" (Karpenter and amazon-vpc-resource-controller race over the trunk ENI; this can last up to 30 minutes).");
    if let Some(t) = &unsupported_type {
        summary.push_str(&format!(
            " Instance type {t} is not supported by the VPC resource controller yet: nodes of that type never get a trunk ENI."
        ));
    }
    let placeholder = format!("<{pool_res}>");
    let np = nodepool.as_deref().unwrap_or(&placeholder);
    let labels = if legacy {
        "spec:\n  labels:\n    vpc.amazonaws.com/has-trunk-attached: \"false\"\n"
    } else {
        "spec:\n  template:\n    metadata:\n      labels:\n        vpc.amazonaws.com/has-trunk-attached: \"false\"\n"
    };
    let guess = match guessed {
        Some((claim, prefix)) if !legacy => format!(
            " (probably {prefix}: the pod was nominated for NodeClaim {claim}, named after its NodePool; `kubectl get nodeclaim {claim} -L karpenter.sh/nodepool` says)"
        ),
        _ => String::new(),
    };
    let mut steps = vec![Remediation::yaml(
        format!("Label the nodes of {pool} {np}{guess} so the resource controller attaches the trunk ENI at once (`kubectl edit {pool_res} {np}`):"),
        labels.to_string(),
    )];
    match &unsupported_type {
        Some(t) => steps.push(Remediation::yaml(
            match &nodepool {
                Some(n) => format!("Keep {t} (unsupported by the VPC resource controller) out of {pool} {n} (`kubectl edit {pool_res} {n}`):"),
                None => format!("Keep {t} (unsupported by the VPC resource controller) out of the {pool}:"),
            },
            if legacy {
                format!("spec:\n  requirements:\n    - key: node.kubernetes.io/instance-type\n      operator: NotIn\n      values: [\"{t}\"]\n")
            } else {
                format!("spec:\n  template:\n    spec:\n      requirements:\n        - key: node.kubernetes.io/instance-type\n          operator: NotIn\n          values: [\"{t}\"]\n")
            },
        )),
        None => steps.push(Remediation::text(format!(
            "Restrict the {pool} to instance types that support ENI trunking (see the VPC resource controller's list of supported types).",
        ))),
    }
    vec![Diagnosis::new(&META, summary)
        .with_object(pod.as_ref().or(nodeclaim.as_ref()))
        .with_node_pool(nodepool.as_deref())
        .with_messages(strong.iter().copied())
        .with_messages(requested.iter().copied())
        .with_messages(unsupported.iter().copied())
        .with_remediation(steps)]
}

/// The NodeClaim of the pod's `Nominated` event (`Pod should schedule on: nodeclaim/<name>`,
/// v1 adds `, node/<node>` once it has one).
fn nominated_nodeclaim(facts: &Facts, pod: &ObjectRef) -> Option<String> {
    facts
        .messages
        .iter()
        .filter(|m| {
            m.object.as_ref().map_or(facts.pods.len() <= 1, |o| {
                o.kind.eq_ignore_ascii_case("pod") && o.name == pod.name
            })
        })
        .filter_map(|m| tail_after(&m.text, "should schedule on: nodeclaim/"))
        .filter_map(|rest| {
            rest.split([',', ' '])
                .next()
                .filter(|n| !n.is_empty())
                .map(str::to_string)
        })
        .next_back()
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    /// Before v0.32 the label goes into a Provisioner's `spec.labels`.
    #[test]
    fn a_provisioner_gets_its_own_yaml() {
        let line = "2023-02-14T10:11:12.000Z\tINFO\tcontroller.inflightchecks\tInflight check failed for node, Expected resource \"vpc.amazonaws.com/pod-eni\" didn't register on the node\t{\"commit\": \"5d4ae35\", \"node\": \"ip-10-0-3-4.ec2.internal\"}";
        let d = &check_only("KW210", line).diagnoses[0];
        assert!(
            d.remediation[0]
                .text
                .contains("`kubectl edit provisioner <provisioner>`"),
            "{}",
            d.remediation[0].text
        );
        assert_eq!(
            d.remediation[0].yaml.as_deref(),
            Some("spec:\n  labels:\n    vpc.amazonaws.com/has-trunk-attached: \"false\"\n")
        );
    }

    /// The pod's `Nominated` event names its NodeClaim: the NodeClaim's own nodepool label
    /// when the input has it, else its generated name's prefix, said as a guess; a name
    /// without a generated suffix says nothing.
    #[test]
    fn the_nominated_nodeclaim_names_the_nodepool() {
        let text = |claim: &str| {
            format!("Name:             ledger-0\nNamespace:        payments\nNode:             ip-10-0-1-2.ec2.internal/10.0.1.2\nStatus:           Pending\nEvents:\n  Type    Reason                  Age   From                     Message\n  ----    ------                  ----  ----                     -------\n  Normal  Nominated               13m   karpenter                Pod should schedule on: nodeclaim/{claim}, node/ip-10-0-1-2.ec2.internal\n  Normal  Scheduled               12m   default-scheduler        Successfully assigned payments/ledger-0 to ip-10-0-1-2.ec2.internal\n  Normal  SecurityGroupRequested  12m   vpc-resource-controller  Pod will get the following Security Groups [sg-0a1b]\n")
        };
        let step = |text: &str| {
            check_only("KW210", text).diagnoses[0].remediation[0]
                .text
                .clone()
        };
        let guessed = step(&text("sgp-x7k2p"));
        assert!(
            guessed.starts_with("Label the nodes of NodePool <nodepool> (probably sgp: the pod was nominated for NodeClaim sgp-x7k2p"),
            "{guessed}"
        );
        let labelled = format!("{}---\napiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: sgp-x7k2p\n  labels:\n    karpenter.sh/nodepool: sgp\n", text("sgp-x7k2p"));
        assert!(
            step(&labelled).starts_with("Label the nodes of NodePool sgp so"),
            "{}",
            step(&labelled)
        );
        let plain = step(&text("imported-a"));
        assert!(
            plain.starts_with("Label the nodes of NodePool <nodepool> so"),
            "{plain}"
        );
    }

    #[test]
    fn every_signal() {
        for text in [
            "Message:               Resource \"vpc.amazonaws.com/pod-eni\" was requested but not registered",
            "Initialized=Unknown ResourceNotRegistered: Resource \"vpc.amazonaws.com/pod-eni\" was requested but not registered",
            "inflight check failed for node, Expected resource \"vpc.amazonaws.com/pod-eni\" didn't register on the node",
            "0/6 nodes are available: 2 node(s) had untolerated taint {CriticalAddonsOnly: true}, 4 Insufficient vpc.amazonaws.com/pod-eni.",
        ] {
            assert_eq!(ids(&check_only("KW210", text)), ["KW210"], "{text}");
        }
    }

    #[test]
    fn names_the_unsupported_type() {
        let report = check_only(
            "KW210",
            "default 6m Warning Unsupported node/ip-10-0-141-27.ec2.internal The instance type r8a.xlarge is not supported yet by the vpc resource controller\npayments 48s Warning FailedScheduling pod/ledger 0/6 nodes are available: 4 Insufficient vpc.amazonaws.com/pod-eni.",
        );
        assert_eq!(ids(&report), ["KW210"]);
        assert!(report.diagnoses[0].summary.contains("r8a.xlarge"));
    }

    /// ContainerCreating while the image is pulled, the branch ENI already allocated: the
    /// network is up, nothing waits for a trunk ENI.
    #[test]
    fn creating_after_eni_allocated_is_not_kw210() {
        let text = "Name:             api-0\nNamespace:        payments\nStatus:           Pending\nContainers:\n  api:\n    Image:          nginx\n    State:          Waiting\n      Reason:       ContainerCreating\n    Requests:\n      cpu:                        500m\n      vpc.amazonaws.com/pod-eni:  1\nEvents:\n  Type    Reason             Age   From                     Message\n  ----    ------             ----  ----                     -------\n  Normal  ResourceAllocated  8s    vpc-resource-controller  Allocated [{\"eniId\":\"eni-0a1b\"}] to the pod\n  Normal  Pulling            6s    kubelet                  Pulling image \"nginx\"\n";
        assert!(ids(&check_only("KW210", text)).is_empty());
        let waiting = text.split("  Normal  ResourceAllocated").next().unwrap();
        assert_eq!(ids(&check_only("KW210", waiting)), ["KW210"]);
    }

    /// A describe cut before the requests: the resource controller's `SecurityGroupRequested`
    /// event says the pod uses Security Groups for Pods; scheduled and not running, with no
    /// branch ENI allocated, it waits for the trunk ENI. A branch allocation failure or an
    /// image pull problem is something else.
    #[test]
    fn security_group_requested_pod_waiting_on_its_node() {
        let text = "Name:             ledger-0\nNamespace:        payments\nNode:             ip-10-0-1-2.ec2.internal/10.0.1.2\nStatus:           Pending\nEvents:\n  Type    Reason                  Age   From                     Message\n  ----    ------                  ----  ----                     -------\n  Normal  Scheduled               12m   default-scheduler        Successfully assigned payments/ledger-0 to ip-10-0-1-2.ec2.internal\n  Normal  SecurityGroupRequested  12m   vpc-resource-controller  Pod will get the following Security Groups [sg-0a1b]\n";
        let report = check_only("KW210", text);
        assert_eq!(ids(&report), ["KW210"]);
        assert!(report.diagnoses[0]
            .summary
            .contains("pod payments/ledger-0"));
        let branch_failed = format!("{text}  Warning BranchAllocationFailed  11m   vpc-resource-controller  failed to allocate branch ENI to pod: cannot create new eni entry already exist\n");
        assert!(ids(&check_only("KW210", &branch_failed)).is_empty());
        let unscheduled = text.replace(
            "Node:             ip-10-0-1-2.ec2.internal/10.0.1.2",
            "Node:             <none>",
        );
        assert!(ids(&check_only("KW210", &unscheduled)).is_empty());
        let pulling = text.replace(
            "Status:           Pending\n",
            "Status:           Pending\nContainers:\n  api:\n    Image:          nginx\n    State:          Waiting\n      Reason:       ImagePullBackOff\n",
        );
        assert!(ids(&check_only("KW210", &pulling)).is_empty());
    }

    #[test]
    fn pod_eni_in_allocatable_or_branch_failure_is_not_kw210() {
        for text in [
            r#"{"level":"INFO","message":"launched nodeclaim","allocatable":{"cpu":"3920m","pods":"58","vpc.amazonaws.com/pod-eni":"8"}}"#,
            "Warning  BranchAllocationFailed  2m40s  vpc-resource-controller  failed to allocate branch ENI to pod: cannot create new eni entry already exist",
            "Resource \"nvidia.com/gpu\" was requested but not registered",
        ] {
            assert!(ids(&check_only("KW210", text)).is_empty(), "{text}");
        }
    }
}
