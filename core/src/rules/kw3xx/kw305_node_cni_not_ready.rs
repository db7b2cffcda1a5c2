//! KW305 node-cni-not-ready.

use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::{assigned_node, tail_after};
use crate::rules::kw3xx::cni_log::{cni_log_findings, CniLogCause};
use crate::rules::kw3xx::common::booting_nodes;
use crate::rules::kw3xx::common::{
    join_names, node_of, push_unique, registered_after, sole_raw_value,
};
use crate::rules::text::capitalised;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW305",
    slug: "node-cni-not-ready",
    title: "The node's network plugin (CNI) is not ready",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The kubelet runs and registered the Node, but reports it NotReady because the container network
is not up: no pod can start there, and Karpenter keeps the NodeClaim uninitialized (KW306), which
also blocks its disruption.

Signals: node condition `Ready=False` reason `KubeletNotReady` with `container runtime network
not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error:
cni plugin not initialized`, the same in the kubelet journal (`"Container runtime network not
ready"`), and `KubeletNotReady runtime network not ready`. The VPC CNI's own log (`kubectl logs
-n kube-system aws-node-xxxxx -c aws-node`, with `--previous` once the container restarted, or
ipamd's `/var/log/aws-routed-eni/ipamd.log` in the EKS log collector's bundle) says why it
cannot start, and is a signal alone: `Failed to call
ec2:DescribeNetworkInterfaces ...: UnauthorizedOperation` (its role lacks the policy),
`NoCredentialProviders` (IRSA not wired), `Unable to reach API Server` / `error communicating
with apiserver` (kube-proxy down, or security groups without the control plane), `Retrying
waiting for IPAM-D` (ipamd never started). A pod's `FailedCreatePodSandBox` whose CNI plugin
cannot reach ipamd on the node (`plugin type="aws-cni" ... add cmd: Error received from
AddNetwork gRPC call: rpc error: code = Unavailable desc = connection error: ... dial tcp
127.0.0.1:50051: connect: connection refused`) says the same from the pod's side, even while the
node still reports Ready: aws-node is not running there. On a node that joined seconds ago this
is aws-node still starting, and the pod gets its sandbox on a retry: once the pod's containers
are created or started, that failure is history. Not a kubelet that cannot register its Node
(`Unable to register node with API server`, never followed by `Successfully registered node`):
every kubelet reports its network not initialized until aws-node runs, and aws-node cannot run on a
Node that does not exist, so the registration failure is the problem (KW303, KW304).

## Why it happens
The CNI's DaemonSet pod has not come up on the node. With the Amazon VPC CNI (`aws-node`) this is
most often IAM: the `aws-node` service account's IRSA role (or the node role) lacks
`AmazonEKS_CNI_Policy`, so ipamd cannot attach ENIs or assign addresses. Other causes: the
DaemonSet does not tolerate the NodePool's taints, its image cannot be pulled (no route to ECR),
or the add-on version does not know the instance type.

## How to fix
Look at the `aws-node` pod on that node (`kubectl -n kube-system get pods -l k8s-app=aws-node -o
wide`) and its logs (`kubectl logs -n kube-system <aws-node pod> -c aws-node --previous` once it
has restarted: a crash's cause is in the instance that ended), then attach
`arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy` to the role it uses.
"#,
};

/// The kubelet's and the node's words first, then the VPC CNI's own log (see `cni_log`).
const SIGNALS: &[&str] = &[
    "networkpluginnotready",
    "cni plugin not initialized",
    "runtime network not ready",
    "network plugin returns error",
    "unable to reach api server",
    "error communicating with apiserver",
    "failed to communicate with k8s server",
    "retrying waiting for ipam-d",
    "failed to call ec2:",
    "nocredentialproviders",
    "error received from addnetwork grpc call",
];

/// What the kubelet and the node's condition say when the network is not ready.
const KUBELET_SIGNALS: &[&str] = SIGNALS.split_at(4).0;

/// What the kubelet and the node's events say once the node is Ready.
const READY_AGAIN: &[&str] = &["just became ready", "status is now: NodeReady"];

/// Whether the input shows the node of `m` Ready after it: its Node's Ready condition True
/// now, or a later line of the same paste (its kubelet's `just became ready`, the event
/// `status is now: NodeReady`). Every node's kubelet reports the CNI not initialized for its
/// first seconds, until aws-node starts.
fn ready_since(facts: &Facts, m: &Message) -> bool {
    let node = node_of(facts, m);
    let ready_now = node.as_deref().is_some_and(|name| {
        facts.nodes.iter().any(|n| {
            n.meta.name == name
                && n.conditions
                    .iter()
                    .any(|c| c.condition_type == "Ready" && c.status == "True")
        })
    });
    ready_now
        || facts.messages.iter().any(|later| {
            later.evidence.source == m.evidence.source
                && later.evidence.line > m.evidence.line
                && READY_AGAIN
                    .iter()
                    .any(|s| contains_ignore_ascii_case(&later.text, s))
                && node_of(facts, later).is_none_or(|n| node.as_deref().is_none_or(|o| o == n))
        })
}

/// Whether the kubelet of the node `m` is about fails to register it (`Unable to register node
/// with API server`, for any cause) and the input never shows it registered: there is no Node
/// for aws-node to run on, so its network stays "not initialized" as a consequence. The
/// registration failure is the problem (KW303, or KW304 when refused as Unauthorized).
fn never_registered(facts: &Facts, m: &Message) -> bool {
    let node = node_of(facts, m);
    facts.messages.iter().any(|r| {
        r.evidence.source == m.evidence.source
            && contains_ignore_ascii_case(&r.text, "Unable to register node")
            && node_of(facts, r).is_none_or(|n| node.as_deref().is_none_or(|o| o == n))
            && !registered_after(facts, r)
    })
}

/// Whether `text` is the VPC CNI plugin failing a pod's sandbox because ipamd, the aws-node
/// daemon on the node, does not answer its gRPC port (`add cmd: Error received from AddNetwork
/// gRPC call: rpc error: code = Unavailable desc = connection error: ... dial tcp
/// 127.0.0.1:50051: connect: connection refused`; the plugin's own log says `... grpc call for
/// containerID <id>: ...`). aws-node is not running on that node: its CNI is not ready, even
/// when the kubelet still reports the node Ready. Not KW213's `failed to assign an IP address
/// to container`, which ipamd answers.
fn ipamd_unreachable(text: &str) -> bool {
    contains_ignore_ascii_case(text, "Error received from AddNetwork gRPC call")
        && [
            "code = Unavailable",
            "connection refused",
            "127.0.0.1:50051",
        ]
        .iter()
        .any(|s| contains_ignore_ascii_case(text, s))
}

/// The kubelet's event reasons of the steps after a pod's sandbox exists.
const SANDBOX_CREATED: &[&str] = &["Pulling", "Pulled", "Created", "Started"];

/// Whether pod `pod` got its sandbox after all: an event of its sandbox's next steps (image
/// pulled, container created or started) or the pod Running. On a node that joined seconds
/// ago the plugin is refused until aws-node starts, and the kubelet retries: that is history.
fn sandbox_created_since(facts: &Facts, pod: &ObjectRef) -> bool {
    let running = facts
        .pod(pod)
        .is_some_and(|p| p.phase.as_deref() == Some("Running"));
    running
        || facts.events.iter().any(|e| {
            let about_pod = match &e.object {
                Some(o) => o.kind.eq_ignore_ascii_case("pod") && o.name == pod.name,
                None => facts.pods.len() <= 1,
            };
            about_pod && SANDBOX_CREATED.contains(&e.reason.as_str())
        })
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let booting = booting_nodes(facts);
    let hits: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| {
            KUBELET_SIGNALS
                .iter()
                .any(|s| contains_ignore_ascii_case(&m.text, s))
                && !ready_since(facts, m)
                && !never_registered(facts, m)
                && !m
                    .object
                    .as_ref()
                    .is_some_and(|o| o.kind == "Node" && booting.contains(o.name.as_str()))
        })
        .collect();
    // A typed Node whose Ready condition says so, when the messages do not carry it.
    let node_conditions: Vec<(String, String)> = facts
        .nodes
        .iter()
        // A node the input shows in its first seconds is booting: the CNI starts after it.
        .filter(|n| !booting.contains(n.meta.name.as_str()))
        // A Conditions table pasted without the describe's `Name:` line makes a nameless Node:
        // its condition still counts, its empty name does not.
        .flat_map(|n| {
            n.conditions.iter().filter_map(move |c| {
                let msg = c.message.as_deref().unwrap_or_default();
                (c.condition_type == "Ready"
                    && c.status != "True"
                    && KUBELET_SIGNALS
                        .iter()
                        .any(|s| contains_ignore_ascii_case(msg, s)))
                .then(|| (n.meta.name.clone(), msg.to_string()))
            })
        })
        .collect();
    // Pod sandboxes the CNI plugin could not set up because ipamd refuses connections.
    let sandbox: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| ipamd_unreachable(&m.text))
        .filter(|m| match m.object.as_ref().filter(|o| o.kind == "Pod") {
            Some(o) => !sandbox_created_since(facts, o),
            // An Events section pasted without its pod: the rows below it in the same paste.
            None => !facts.events.iter().any(|e| {
                e.evidence.source == m.evidence.source
                    && e.evidence.line > m.evidence.line
                    && SANDBOX_CREATED.contains(&e.reason.as_str())
            }),
        })
        .collect();
    // The CNI's own log, which says why it is not up.
    let cni_findings = cni_log_findings(facts);
    if hits.is_empty()
        && node_conditions.is_empty()
        && cni_findings.is_empty()
        && sandbox.is_empty()
    {
        return Vec::new();
    }
    let mut nodes: Vec<String> = node_conditions
        .iter()
        .map(|(n, _)| n.clone())
        .filter(|n| !n.is_empty())
        .collect();
    // A pod's `NetworkNotReady` event names the pod, not its node.
    let mut pods: Vec<String> = Vec::new();
    // The pods whose sandbox ipamd refused, named in the summary.
    let mut refused_pods: Vec<String> = Vec::new();
    for m in hits.iter().chain(&sandbox) {
        let pod = m.object.as_ref().filter(|o| o.kind == "Pod");
        let qualified = pod.map(|o| match &o.namespace {
            Some(ns) => format!("{ns}/{}", o.name),
            None => o.name.clone(),
        });
        if let (Some(q), true) = (&qualified, ipamd_unreachable(&m.text)) {
            push_unique(&mut refused_pods, q.clone());
        }
        if let Some(n) = node_of(facts, m) {
            push_unique(&mut nodes, n);
        } else if let Some(o) = pod {
            // Its `Node:`, or its `Scheduled` event (`Successfully assigned <ns>/<pod> to <node>`).
            match assigned_node(facts, o) {
                Some(n) => push_unique(&mut nodes, n),
                None => push_unique(&mut pods, qualified.unwrap_or_default()),
            }
        }
    }
    if nodes.is_empty() && !cni_findings.is_empty() {
        // The node of the one aws-node pod the input lists (its log was pasted).
        let aws_node_nodes: Vec<&str> = facts
            .pods
            .iter()
            .filter(|p| is_aws_node_pod(&p.meta.name))
            .filter_map(|p| p.node_name.as_deref())
            .collect();
        if let [n] = aws_node_nodes.as_slice() {
            nodes.push(n.to_string());
        }
    }
    if nodes.is_empty() {
        // A describe node paste: its `Name:` is the node.
        if let Some(n) = sole_raw_value(facts, &["Name:"])
            .filter(|n| n.starts_with("ip-") || n.starts_with("i-"))
        {
            nodes.push(n);
        }
    }
    let node = nodes
        .first()
        .cloned()
        .unwrap_or_else(|| "<node-name>".to_string());
    // The sandbox error names the plugin, `aws-cni`: the VPC CNI is the pod network even when
    // another CNI's name shows (Calico for network policy beside it).
    let other_cni = if sandbox.is_empty() {
        other_cni(facts)
    } else {
        None
    };
    // What the runtime says: `Network plugin returns error: cni plugin not initialized`
    // (containerd), `docker: network plugin is not ready: cni config uninitialized` (dockershim).
    let detail = hits
        .iter()
        .map(|m| m.text.as_str())
        .chain(node_conditions.iter().map(|(_, msg)| msg.as_str()))
        .find_map(|t| tail_after(t, "NetworkPluginNotReady message:"))
        .map(|d| d.trim_end_matches(['"', ' ', ']']).to_string())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "cni plugin not initialized".to_string());
    let only_logs = hits.is_empty() && node_conditions.is_empty() && sandbox.is_empty();
    let mut summary = format!(
        "{} NotReady: the container network is not ready (NetworkPluginNotReady: {detail}), so no pod can start there.",
        if !nodes.is_empty() {
            format!("Node {} is", join_names(&nodes))
        } else if !pods.is_empty() {
            format!(
                "The node of pod{} {} is",
                if pods.len() > 1 { "s" } else { "" },
                join_names(&pods)
            )
        } else {
            "The node is".to_string()
        }
    );
    if hits.is_empty() && node_conditions.is_empty() && !sandbox.is_empty() {
        // Only pods' sandbox failures: the kubelet may still report the node Ready (the CNI's
        // config stays on disk when ipamd stops), the pods on it cannot start all the same.
        let place = if !nodes.is_empty() {
            format!("node {}", join_names(&nodes))
        } else {
            "its node".to_string()
        };
        summary = format!(
            "ipamd, the Amazon VPC CNI's daemon (aws-node), does not answer on {place} (AddNetwork gRPC to 127.0.0.1:50051 refused), so the sandbox of {} cannot get its network (FailedCreatePodSandBox) and stays in ContainerCreating: the node's CNI is not ready.",
            pods_phrase(&refused_pods)
        );
    } else if !sandbox.is_empty() {
        summary.push_str(&format!(
            " The sandbox of {} fails for the same reason: ipamd (127.0.0.1:50051) refuses the CNI plugin's connection.",
            pods_phrase(&refused_pods)
        ));
    }
    // The node's aws-node pod, when the input lists it (`kubectl get pods -o wide`): read its
    // own logs and status rather than every aws-node pod's.
    let aws_node_pod = facts
        .pods
        .iter()
        .find(|p| is_aws_node_pod(&p.meta.name) && p.node_name.as_deref() == Some(node.as_str()));
    let logged = cni_findings.first().map(|f| &f.cause);
    match (other_cni, aws_node_pod) {
        (None, pod) if logged.is_some() => {
            let who = match pod {
                Some(pod) => {
                    let status = crate::rules::kw3xx::common::pod_status(facts, pod)
                        .map(|s| format!(" ({s})"))
                        .unwrap_or_default();
                    format!("the Amazon VPC CNI pod {}{status}", pod.meta.name)
                }
                None => "the Amazon VPC CNI (aws-node)".to_string(),
            };
            let who = capitalised(&who);
            let mut cause = logged_cause(logged.unwrap_or(&CniLogCause::IpamdNotStarting));
            // The node's pod list (a describe node's Non-terminated Pods, `get pods -o wide`)
            // shows kube-proxy there: it is scheduled, so not "not running" but the other half.
            if let (Some(CniLogCause::ApiServerUnreachable), Some(proxy)) =
                (logged, kube_proxy_on(facts, &node))
            {
                cause = format!("ipamd cannot reach the Kubernetes API server. {proxy} is on the node, so either it is not serving yet (not Ready, or it cannot reach the API server itself) or the node's security groups do not let the node reach the control plane.");
            }
            summary = if only_logs {
                // The log alone: the node's condition is not in the input, its consequence is.
                let place = if nodes.is_empty() {
                    "its node".to_string()
                } else {
                    node.clone()
                };
                format!("{who} cannot start on {place}, so the node's container network is not ready and no pod can start there: {cause}")
            } else {
                format!("{summary} {who} cannot start: {cause}")
            };
        }
        (None, Some(pod)) => {
            let status = crate::rules::kw3xx::common::pod_status(facts, pod)
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            summary.push_str(&format!(
                " Its Amazon VPC CNI pod, {}, is not up{status}, most often because its role lacks AmazonEKS_CNI_Policy.",
                pod.meta.name
            ));
        }
        (Some(cni), _) => summary.push_str(&format!(
            " The cluster runs {} as its CNI: its agent pod on the node is not up.",
            capitalised(cni)
        )),
        (None, None) if !sandbox.is_empty() => summary.push_str(" The aws-node pod on that node is not running or not serving (starting, crash-looping, or not scheduled there); when it crash-loops, most often its role lacks AmazonEKS_CNI_Policy."),
        (None, None) => summary.push_str(" With the Amazon VPC CNI, the aws-node pod on the node is not up, most often because its role lacks AmazonEKS_CNI_Policy."),
    }
    let mut steps = vec![
        Remediation::command(
            format!("Find the CNI pod on {node} and read why it is not Ready (its aws-node container's log, and the one from before its last restart if it restarted):"),
            format!(
                "kubectl -n kube-system get pods -l k8s-app=aws-node -o wide --field-selector spec.nodeName={node}; {}",
                aws_node_logs_on(&node)
            ),
        ),
        match aws_node_role(facts) {
            Some(role) => Remediation::command(
                format!("aws-node uses the IRSA role {role}: attach the CNI policy to it (and check its trust policy names the cluster's OIDC provider and system:serviceaccount:kube-system:aws-node):"),
                format!("aws iam list-attached-role-policies --role-name {role}; aws iam attach-role-policy --role-name {role} --policy-arn arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"),
            ),
            None => Remediation::command(
                "Find the role aws-node uses (its IRSA annotation; empty means the node role) and attach the CNI policy to it:",
                "kubectl -n kube-system get serviceaccount aws-node -o jsonpath='{.metadata.annotations.eks\\.amazonaws\\.com/role-arn}{\"\\n\"}'; aws iam attach-role-policy --role-name <role-name> --policy-arn arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
            ),
        },
        Remediation::text(
            "If the pod is not scheduled on the node at all, the DaemonSet must tolerate the NodePool's taints (`kubectl -n kube-system get daemonset aws-node -o jsonpath='{.spec.template.spec.tolerations}'`); if its image pull fails, the subnet needs a route to ECR.",
        ),
    ];
    if let (None, Some(cause)) = (other_cni, logged) {
        steps = logged_cause_steps(facts, cause, &node);
    }
    if let (false, None, None) = (sandbox.is_empty(), aws_node_pod, logged) {
        // Without the node's name, the failing pod's spec says it.
        let (node_ref, lookup) = match (nodes.is_empty(), refused_pods.as_slice()) {
            (true, [one]) => {
                let (ns, name) = one.split_once('/').unwrap_or(("<namespace>", one));
                (
                    "$NODE".to_string(),
                    format!(
                        "NODE=$(kubectl -n {ns} get pod {name} -o jsonpath='{{.spec.nodeName}}'); "
                    ),
                )
            }
            _ => (node.clone(), String::new()),
        };
        let place = if lookup.is_empty() {
            node.clone()
        } else {
            format!("the node of pod {}", refused_pods.join(", "))
        };
        steps[0] = Remediation::command(
            format!("Find the aws-node pod on {place} and read why ipamd is not serving (its aws-node container's log, and the one from before its last restart if it restarted):"),
            format!(
                "{lookup}kubectl -n kube-system get pods -l k8s-app=aws-node -o wide --field-selector spec.nodeName={node_ref}; {}",
                aws_node_logs_on(&node_ref)
            ),
        );
    }
    if let (None, Some(pod), None) = (other_cni, aws_node_pod, logged) {
        let name = &pod.meta.name;
        let restarted = aws_node_restarted(facts, pod);
        let which = match restarted {
            Some(true) => "its aws-node container's log from before its last restart",
            Some(false) => "its aws-node container's log",
            None => "its aws-node container's log, and the one from before its last restart if it restarted",
        };
        steps[0] = Remediation::command(
            format!("Read why {name} on {node} is not Ready ({which}, then its events):"),
            format!(
                "{}; kubectl -n kube-system describe pod {name} | tail -20",
                aws_node_logs(name, restarted)
            ),
        );
    }
    if let Some(cni) = other_cni {
        // Cilium and others replace the VPC CNI, or chain to it (Cilium's chaining mode,
        // Calico for network policy only): the aws-node steps apply only when aws-node runs.
        if !aws_node_seen(facts) && logged.is_none() {
            for step in &mut steps {
                step.text = format!(
                    "If the Amazon VPC CNI (aws-node) runs beside {} (chaining mode, or policy only): {}",
                    capitalised(cni),
                    lower_first(&step.text)
                );
            }
        }
        let (label, container) = cni_agent(cni);
        steps.insert(
            0,
            Remediation::command(
                format!(
                    "The cluster runs {}: find its agent on {node} and read why it is not ready (the log from before its last restart too):",
                    capitalised(cni)
                ),
                format!(
                    "kubectl get pods -A -o wide --field-selector spec.nodeName={node} | grep -i {cni}; read -r NS AGENT <<< \"$(kubectl get pods -A -l {label} --field-selector spec.nodeName={node} -o jsonpath='{{.items[0].metadata.namespace}} {{.items[0].metadata.name}}')\"; kubectl logs -n $NS $AGENT -c {container} --tail=50; kubectl logs -n $NS $AGENT -c {container} --previous --tail=50"
                ),
            ),
        );
    }
    let object = nodes.first().map(|n| ObjectRef::new("Node", None, n));
    vec![Diagnosis::new(&META, summary)
        .with_object(object.as_ref())
        .with_messages_per_object(
            hits.iter()
                .copied()
                .chain(sandbox.iter().copied())
                .chain(cni_findings.iter().map(|f| f.message)),
            &|m: &Message| m.object.clone(),
        )
        .with_related(&["KW306"])
        .with_remediation(steps)]
}

/// Whether the aws-node container of `pod` restarted: its status shows restarts or a previous
/// termination, or the pod is in CrashLoopBackOff; `Some(false)` when its status shows none;
/// `None` when the input does not say (a `kubectl get pods` table's row keeps no counts).
fn aws_node_restarted(facts: &Facts, pod: &crate::facts::Pod) -> Option<bool> {
    let container = pod.containers.iter().find(|c| c.name == "aws-node");
    if container.is_some_and(|c| {
        c.last_termination_reason.is_some() || c.restart_count.is_some_and(|n| n > 0)
    }) || crate::rules::kw3xx::common::pod_status(facts, pod).as_deref()
        == Some("CrashLoopBackOff")
    {
        return Some(true);
    }
    if let Some(n) = container.and_then(|c| c.restart_count) {
        return Some(n > 0);
    }
    // A `kubectl get pods` row counts the restarts of all the pod's containers (aws-node and
    // aws-eks-nodeagent): none says the current log is the only one; some do not say whose.
    pod.restarts.filter(|n| *n == 0).map(|_| false)
}

/// The commands that read the aws-node container's log of `pod` (a name, or a `$(...)` that
/// finds it): the instance that ended (`--previous`, where a crash's cause is once the
/// container runs again) when it restarted, the current one when it did not, both when the
/// restarts are not known.
fn aws_node_logs(pod: &str, restarted: Option<bool>) -> String {
    let current = format!("kubectl logs -n kube-system {pod} -c aws-node --tail=50");
    let previous = format!("kubectl logs -n kube-system {pod} -c aws-node --previous --tail=50");
    match restarted {
        Some(true) => previous,
        Some(false) => current,
        None => format!("{current}; {previous}"),
    }
}

/// `aws_node_logs` of the aws-node pod on `node` (a name or `$NODE`), found by label and field
/// selector; whether it restarted is not known.
fn aws_node_logs_on(node: &str) -> String {
    format!(
        "AWS_NODE=$(kubectl -n kube-system get pods -l k8s-app=aws-node --field-selector spec.nodeName={node} -o name); {}",
        aws_node_logs("$AWS_NODE", None)
    )
}

/// `pod ns/a`, `pods ns/a and ns/b`, or `the pod` when none is known.
fn pods_phrase(pods: &[String]) -> String {
    match pods {
        [] => "the pod".to_string(),
        [one] => format!("pod {one}"),
        many => format!("pods {}", join_names(many)),
    }
}

/// The kube-proxy pod the input lists on `node` (`kube-proxy-x2k9q`), with its status.
fn kube_proxy_on(facts: &Facts, node: &str) -> Option<String> {
    let is_proxy = |name: &str| name.starts_with("kube-proxy-");
    let listed = facts
        .nodes
        .iter()
        .filter(|n| n.meta.name == node)
        .flat_map(|n| n.pods.iter())
        .find(|p| is_proxy(&p.name))
        .map(|p| p.name.clone());
    let pod = facts
        .pods
        .iter()
        .find(|p| is_proxy(&p.meta.name) && p.node_name.as_deref() == Some(node));
    match (pod, listed) {
        (Some(pod), _) => {
            let status = crate::rules::kw3xx::common::pod_status(facts, pod)
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            Some(format!("kube-proxy ({}{status})", pod.meta.name))
        }
        (None, Some(name)) => Some(format!("kube-proxy ({name})")),
        (None, None) => None,
    }
}

/// A pod of the VPC CNI's DaemonSet (not the termination handler's).
fn is_aws_node_pod(name: &str) -> bool {
    name.starts_with("aws-node-") && !name.starts_with("aws-node-termination-handler")
}

/// What the CNI's log says stops it, as the summary's last sentence.
fn logged_cause(cause: &CniLogCause) -> String {
    match cause {
        CniLogCause::Denied { action } => format!(
            "AWS denies ipamd {} (UnauthorizedOperation): the role aws-node uses (its IRSA role, else the node role) lacks AmazonEKS_CNI_Policy.",
            action.as_deref().unwrap_or("an EC2 call")
        ),
        CniLogCause::NoCredentials => "ipamd finds no AWS credentials (NoCredentialProviders): the aws-node service account's IRSA role is not wired.".to_string(),
        CniLogCause::ApiServerUnreachable => "ipamd cannot reach the Kubernetes API server: kube-proxy is not running on the node, or the node's security groups do not let it reach the control plane.".to_string(),
        CniLogCause::IpamdNotStarting => "aws-node keeps waiting for ipamd (Retrying waiting for IPAM-D); ipamd's own log on the node says why.".to_string(),
    }
}

/// The first steps for a cause the CNI's log names (they replace the generic two).
fn logged_cause_steps(facts: &Facts, cause: &CniLogCause, node: &str) -> Vec<Remediation> {
    let restart = "kubectl -n kube-system rollout restart daemonset aws-node";
    match cause {
        CniLogCause::Denied { .. } | CniLogCause::NoCredentials => {
            let attach = match aws_node_role(facts) {
                Some(role) => Remediation::command(
                    format!("aws-node uses the IRSA role {role}: attach the CNI policy to it, then restart aws-node so it takes the role's new permissions:"),
                    format!("aws iam attach-role-policy --role-name {role} --policy-arn arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy; {restart}"),
                ),
                None => Remediation::command(
                    "Find the role aws-node uses (its IRSA annotation; empty means the node role: with Karpenter, the EC2NodeClass's spec.role), attach the CNI policy to it, then restart aws-node:",
                    format!("kubectl -n kube-system get serviceaccount aws-node -o jsonpath='{{.metadata.annotations.eks\\.amazonaws\\.com/role-arn}}{{\"\\n\"}}'; aws iam attach-role-policy --role-name <role-name> --policy-arn arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy; {restart}"),
                ),
            };
            let mut steps = vec![attach];
            if matches!(cause, CniLogCause::NoCredentials) {
                steps.push(Remediation::text(
                    "With IRSA, the role's trust policy must name the cluster's OIDC provider and `system:serviceaccount:kube-system:aws-node`; with EKS Pod Identity, the association must exist for that service account.",
                ));
            }
            steps
        }
        CniLogCause::ApiServerUnreachable => vec![
            Remediation::command(
                format!("Check that kube-proxy runs on {node} (ipamd reaches the API server through the kubernetes Service):"),
                format!("kubectl -n kube-system get pods -l k8s-app=kube-proxy -o wide --field-selector spec.nodeName={node}"),
            ),
            Remediation::command(
                "Check that the EC2NodeClass's security groups include the cluster security group (or allow 443 to the control plane):",
                "kubectl get ec2nodeclasses -o jsonpath='{range .items[*]}{.metadata.name}: {.spec.securityGroupSelectorTerms}{\"\\n\"}{end}'; aws eks describe-cluster --name <cluster-name> --query cluster.resourcesVpcConfig.clusterSecurityGroupId --output text",
            ),
        ],
        CniLogCause::IpamdNotStarting => vec![Remediation::command(
            format!("Read ipamd's own log on {node} (/var/log/aws-routed-eni/ipamd.log; the EKS log collector bundles it), from the aws-node container:"),
            "kubectl -n kube-system exec <aws-node-pod> -c aws-node -- tail -50 /host/var/log/aws-routed-eni/ipamd.log",
        )],
    }
}

/// A CNI other than the VPC CNI that the input shows installed: its DaemonSet, one of its pods
/// (a describe node's pod table too), or its startup taint on a node or in a NodePool
/// (`node.cilium.io/agent-not-ready`).
fn other_cni(facts: &Facts) -> Option<&'static str> {
    let daemonsets = facts
        .workloads
        .iter()
        .filter(|w| w.kind == "DaemonSet")
        .map(|w| w.meta.name.as_str());
    let pods = facts.pods.iter().map(|p| p.meta.name.as_str()).chain(
        facts
            .nodes
            .iter()
            .flat_map(|n| n.pods.iter().map(|p| p.name.as_str())),
    );
    let taints = facts
        .nodes
        .iter()
        .flat_map(|n| n.taints.iter())
        .chain(facts.nodepools.iter().flat_map(|p| p.startup_taints.iter()))
        .chain(
            facts
                .nodeclaims
                .iter()
                .flat_map(|c| c.startup_taints.iter()),
        )
        .map(|t| t.key.as_str());
    let names: Vec<&str> = daemonsets.chain(pods).chain(taints).collect();
    ["cilium", "calico", "antrea", "weave"]
        .into_iter()
        .find(|cni| names.iter().any(|n| n.contains(cni)))
}

/// The pod label and agent container of another CNI's node agent, as their charts install it.
fn cni_agent(cni: &str) -> (&'static str, &'static str) {
    match cni {
        "calico" => ("k8s-app=calico-node", "calico-node"),
        "antrea" => ("component=antrea-agent", "antrea-agent"),
        "weave" => ("name=weave-net", "weave"),
        _ => ("k8s-app=cilium", "cilium-agent"),
    }
}

/// Whether the input shows the VPC CNI installed: an aws-node pod or DaemonSet.
fn aws_node_seen(facts: &Facts) -> bool {
    facts.pods.iter().any(|p| is_aws_node_pod(&p.meta.name))
        || facts
            .nodes
            .iter()
            .flat_map(|n| &n.pods)
            .any(|p| is_aws_node_pod(&p.name))
        || facts
            .workloads
            .iter()
            .any(|w| w.kind == "DaemonSet" && w.meta.name == "aws-node")
}

/// `text` with its first letter lower-cased (the step texts start with a verb of ours).
fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// The role name of the `aws-node` service account's IRSA annotation, when the input has it.
fn aws_node_role(facts: &Facts) -> Option<String> {
    facts
        .service_accounts
        .iter()
        .find(|s| s.meta.name == "aws-node")
        .and_then(|s| s.role_arn())
        .and_then(|arn| arn.rsplit('/').next())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    /// A node whose describe shows its first seconds (the kubelet's `Starting`, every event
    /// under a minute and a half) is booting: the CNI starts after the kubelet registers.
    #[test]
    fn a_node_in_its_first_seconds_is_booting() {
        let describe = |age: &str| {
            format!("Name:               ip-10-30-5-91.us-east-2.compute.internal\nLabels:             karpenter.sh/nodepool=arm\nConditions:\n  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message\n  ----             ------  -----------------                 ------------------                ------                       -------\n  Ready            False   Wed, 12 Nov 2025 16:40:19 +0000   Wed, 12 Nov 2025 16:40:02 +0000   KubeletNotReady              container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\nEvents:\n  Type    Reason                   Age   From                   Message\n  ----    ------                   ----  ----                   -------\n  Normal  Starting                 {age}   kubelet                Starting kubelet.\n  Normal  RegisteredNode           {age}   node-controller        Node ip-10-30-5-91.us-east-2.compute.internal event: Registered Node ip-10-30-5-91.us-east-2.compute.internal in Controller\n")
        };
        assert!(ids(&check_only("KW305", &describe("20s"))).is_empty());
        assert_eq!(ids(&check_only("KW305", &describe("6m"))), ["KW305"]);
    }

    #[test]
    fn a_conditions_section_without_its_name_line_names_no_empty_node() {
        let text = "$ kubectl describe node ip-172-20-51-9.eu-central-1.compute.internal | sed -n '/Conditions/,/Addresses/p'
Conditions:
  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message
  ----             ------  -----------------                 ------------------                ------                       -------
  Ready            False   Sun, 06 Dec 2026 21:25:51 +0000   Sun, 06 Dec 2026 21:02:39 +0000   KubeletNotReady              container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized
Addresses:

Dec 06 21:25:43 ip-172-20-51-9.eu-central-1.compute.internal kubelet[2291]: E1206 21:25:43.552101    2291 kubelet.go:2912] \"Container runtime network not ready\" networkReady=\"NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\"
";
        let d = &check_only("KW305", text).diagnoses[0];
        assert!(
            d.summary
                .starts_with("Node ip-172-20-51-9.eu-central-1.compute.internal is NotReady"),
            "{}",
            d.summary
        );
    }

    /// Cilium's taint and no aws-node anywhere: Cilium's agent first, the VPC CNI steps only
    /// as the chaining case; with aws-node's pod in the input they stand as they are.
    #[test]
    fn another_cni_without_aws_node_gets_its_agent_steps() {
        let node = "Name:               ip-10-0-3-77.ec2.internal
Taints:             node.cilium.io/agent-not-ready:NoExecute
Conditions:
  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message
  ----             ------  -----------------                 ------------------                ------                       -------
  Ready            False   Tue, 03 Dec 2024 10:10:00 +0000   Tue, 03 Dec 2024 10:01:00 +0000   KubeletNotReady              container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized
";
        let d = &check_only("KW305", node).diagnoses[0];
        assert!(d.remediation[0].text.starts_with("The cluster runs Cilium"));
        assert!(d.remediation[0].command.as_deref().is_some_and(|c| c
            .contains("-l k8s-app=cilium")
            && c.contains("-c cilium-agent --previous")));
        assert!(d.remediation[1..].iter().all(|r| r
            .text
            .starts_with("If the Amazon VPC CNI (aws-node) runs beside Cilium")));
        let with_aws_node = format!("{node}\n$ kubectl get pods -n kube-system -o wide\nNAME             READY   STATUS             RESTARTS       AGE   IP          NODE                        NOMINATED NODE   READINESS GATES\naws-node-5sd7v   1/2     CrashLoopBackOff   9 (2m ago)     23m   10.0.3.77   ip-10-0-3-77.ec2.internal   <none>           <none>\n");
        let d = &check_only("KW305", &with_aws_node).diagnoses[0];
        assert!(d.remediation[0].text.starts_with("The cluster runs Cilium"));
        assert!(
            d.remediation[1..]
                .iter()
                .all(|r| !r.text.starts_with("If the Amazon VPC CNI")),
            "{:#?}",
            d.remediation
        );
    }

    /// A `kubectl get pods` row's RESTARTS: `0` means there is no previous log to read; a count
    /// does not say which of the pod's two containers restarted, so both reads stay.
    #[test]
    fn a_rows_restart_count_decides_the_previous_log_read() {
        let row = |restarts: &str| {
            format!("Dec 06 21:25:43 ip-172-20-51-9.eu-central-1.compute.internal kubelet[2291]: E1206 21:25:43.552101    2291 kubelet.go:2912] \"Container runtime network not ready\" networkReady=\"NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\"
$ kubectl get pods -n kube-system -o wide
NAME             READY   STATUS    RESTARTS     AGE   IP            NODE                                           NOMINATED NODE   READINESS GATES
aws-node-5sd7v   1/2     Running   {restarts}   23m   172.20.51.9   ip-172-20-51-9.eu-central-1.compute.internal   <none>           <none>
")
        };
        let command = |restarts: &str| {
            check_only("KW305", &row(restarts)).diagnoses[0].remediation[0]
                .command
                .clone()
                .unwrap_or_default()
        };
        let never = command("0         ");
        assert!(
            never.contains("-c aws-node --tail=50") && !never.contains("--previous"),
            "{never}"
        );
        let some = command("4 (1m ago)");
        assert!(
            some.contains("-c aws-node --tail=50") && some.contains("--previous"),
            "{some}"
        );
    }

    #[test]
    fn the_nodes_own_aws_node_pod_is_named() {
        let text = "Dec 06 21:25:43 ip-172-20-51-9.eu-central-1.compute.internal kubelet[2291]: E1206 21:25:43.552101    2291 kubelet.go:2912] \"Container runtime network not ready\" networkReady=\"NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\"
$ kubectl get pods -n kube-system -o wide
NAME             READY   STATUS             RESTARTS       AGE   IP            NODE                                           NOMINATED NODE   READINESS GATES
aws-node-5sd7v   1/2     CrashLoopBackOff   9 (2m ago)     23m   172.20.51.9   ip-172-20-51-9.eu-central-1.compute.internal   <none>           <none>
aws-node-k2j9x   2/2     Running            0              9d    172.20.8.14   ip-172-20-8-14.eu-central-1.compute.internal   <none>           <none>
";
        let d = &check_only("KW305", text).diagnoses[0];
        assert!(
            d.summary
                .contains("Its Amazon VPC CNI pod, aws-node-5sd7v, is not up (CrashLoopBackOff)"),
            "{}",
            d.summary
        );
        // CrashLoopBackOff: the cause is in the instance that ended.
        assert!(
            d.remediation[0]
                .command
                .as_deref()
                .is_some_and(|c| c.starts_with(
                    "kubectl logs -n kube-system aws-node-5sd7v -c aws-node --previous --tail=50; "
                )),
            "{:?}",
            d.remediation[0].command
        );
    }

    #[test]
    fn the_aws_node_log_read_follows_what_the_input_says_of_restarts() {
        let journal = "Dec 06 21:25:43 ip-172-20-51-9.eu-central-1.compute.internal kubelet[2291]: E1206 21:25:43.552101    2291 kubelet.go:2912] \"Container runtime network not ready\" networkReady=\"NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized\"\n";
        let pod = |restarts: u32, last_state: &str| {
            format!(
                r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "aws-node-5sd7v", "namespace": "kube-system"}},
  "spec": {{"nodeName": "ip-172-20-51-9.eu-central-1.compute.internal", "containers": [{{"name": "aws-node"}}]}},
  "status": {{"phase": "Running", "containerStatuses": [{{"name": "aws-node", "ready": false, "restartCount": {restarts},
    "state": {{"running": {{"startedAt": "2026-12-06T21:20:00Z"}}}}, "lastState": {{{last_state}}}}}]}}}}
"#
            )
        };
        let first_step = |text: String| {
            check_only("KW305", &text).diagnoses[0].remediation[0]
                .command
                .clone()
                .unwrap_or_default()
        };
        // Running again after a crash: the previous instance's log says why.
        let restarted = first_step(format!(
            "{journal}{}",
            pod(3, r#""terminated": {"exitCode": 1, "reason": "Error"}"#)
        ));
        assert!(
            restarted.starts_with(
                "kubectl logs -n kube-system aws-node-5sd7v -c aws-node --previous --tail=50; "
            ),
            "{restarted}"
        );
        // Never restarted: there is no previous instance to read.
        let fresh = first_step(format!("{journal}{}", pod(0, "")));
        assert!(
            fresh.starts_with("kubectl logs -n kube-system aws-node-5sd7v -c aws-node --tail=50; ")
                && !fresh.contains("--previous"),
            "{fresh}"
        );
        // A table row keeps no restart count: both reads.
        let table = first_step(format!(
            "{journal}$ kubectl get pods -n kube-system -o wide
NAME             READY   STATUS    RESTARTS   AGE   IP            NODE                                           NOMINATED NODE   READINESS GATES
aws-node-5sd7v   1/2     Running   4          23m   172.20.51.9   ip-172-20-51-9.eu-central-1.compute.internal   <none>           <none>
"
        ));
        assert!(
            table.starts_with("kubectl logs -n kube-system aws-node-5sd7v -c aws-node --tail=50; kubectl logs -n kube-system aws-node-5sd7v -c aws-node --previous --tail=50; "),
            "{table}"
        );
    }

    #[test]
    fn the_cni_of_a_node_ready_since_is_history() {
        // Every kubelet reports the CNI not initialized until aws-node starts on the node.
        let boot = r#"May 12 10:00:00 ip-10-0-1-9.ec2.internal kubelet[3101]: I0512 10:00:00.400000    3101 kubelet_node_status.go:76] "Successfully registered node" node="ip-10-0-1-9.ec2.internal"
May 12 10:00:01 ip-10-0-1-9.ec2.internal kubelet[3101]: E0512 10:00:01.774511    3101 kubelet.go:2874] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
May 12 10:00:11 ip-10-0-1-9.ec2.internal kubelet[3101]: I0512 10:00:11.201000    3101 kubelet_node_status.go:493] "Fast updating node status as it just became ready"
"#;
        assert_eq!(ids(&check_only("KW305", boot)), [] as [&str; 0]);
        // Still not ready at the end of the log: the problem stands.
        let stuck: String = boot.lines().take(2).map(|l| format!("{l}\n")).collect();
        assert_eq!(ids(&check_only("KW305", &stuck)), ["KW305"]);
        // The describe of the node, Ready now, with the events of its boot.
        let describe = "Name:               ip-10-0-1-9.ec2.internal
Roles:              <none>
Labels:             karpenter.sh/nodepool=default
Annotations:        karpenter.sh/nodepool-hash: 1
Taints:             <none>
Conditions:
  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message
  ----             ------  -----------------                 ------------------                ------                       -------
  Ready            True    Mon, 12 May 2025 10:00:00 +0000   Mon, 12 May 2025 09:00:00 +0000   KubeletReady                 kubelet is posting ready status
Events:
  Type     Reason        Age   From     Message
  ----     ------        ----  ----     -------
  Warning  NetworkNotReady  12m   kubelet  network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized
";
        assert_eq!(ids(&check_only("KW305", describe)), [] as [&str; 0]);
    }

    #[test]
    fn every_form() {
        for text in [
            "KubeletNotReady runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
            "  Ready            False   Mon, 12 May 2025 09:24:10 +0000   Mon, 12 May 2025 09:14:02 +0000   KubeletNotReady              container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
            r#"Apr 16 22:26:30 ip-10-0-5-6.ec2.internal kubelet[10125]: E0416 22:26:30.150357   10125 kubelet.go:2373] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized""#,
        ] {
            assert_eq!(ids(&check_only("KW305", text)), ["KW305"], "{text}");
        }
    }

    #[test]
    fn names_the_node() {
        let report = check_only(
            "KW305",
            r#"Apr 16 22:26:30 ip-10-0-5-6.ec2.internal kubelet[10125]: E0416 22:26:30.150357   10125 kubelet.go:2373] "Container runtime network not ready" networkReady="NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized""#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("Node ip-10-0-5-6.ec2.internal"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("spec.nodeName=ip-10-0-5-6.ec2.internal"));
    }

    #[test]
    fn names_the_irsa_role() {
        use crate::facts::{Meta, ServiceAccount};
        let mut facts = crate::ingest::ingest(&[crate::Document::new(
            "journal",
            "KubeletNotReady runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
        )]);
        let mut annotations = std::collections::BTreeMap::new();
        annotations.insert(
            "eks.amazonaws.com/role-arn".to_string(),
            "arn:aws:iam::111122223333:role/prod-vpc-cni".to_string(),
        );
        facts.service_accounts.push(ServiceAccount {
            meta: Meta {
                name: "aws-node".into(),
                namespace: Some("kube-system".into()),
                annotations,
                ..Meta::default()
            },
        });
        let d = (crate::rules::find("KW305").unwrap().check)(&facts);
        assert!(d[0].remediation[1].command.as_deref().unwrap().contains(
            "--role-name prod-vpc-cni --policy-arn arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
        ));
    }

    /// The CNI plugin refused by ipamd on the node: the pod's sandbox event, its dockershim
    /// form, and the plugin's own log line; not ipamd answering "no address" (KW213), nor a
    /// pod whose containers started after the refusal (aws-node was still starting).
    #[test]
    fn sandbox_refused_by_ipamd() {
        let event = r#"LAST SEEN   TYPE      REASON                   OBJECT      MESSAGE
2m          Warning   FailedCreatePodSandBox   pod/web-0   Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "9a3e": plugin type="aws-cni" name="aws-cni" failed (add): add cmd: Error received from AddNetwork gRPC call: rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial tcp 127.0.0.1:50051: connect: connection refused""#;
        for text in [
            event,
            r#"networkPlugin cni failed to set up pod "web-0_default" network: add cmd: Error received from AddNetwork gRPC call: rpc error: code = Unavailable desc = all SubConns are in TransientFailure, latest connection error: connection error: desc = "transport: Error while dialing dial tcp 127.0.0.1:50051: connect: connection refused""#,
            r#"{"level":"error","ts":"2026-12-07T02:41:10.118Z","caller":"routed-eni-cni-plugin/cni.go:283","msg":"Error received from AddNetwork grpc call for containerID 9a3e0c1d7b5f: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:50051: connect: connection refused\""}"#,
        ] {
            assert_eq!(ids(&check_only("KW305", text)), ["KW305"], "{text}");
        }
        let d = &check_only("KW305", event).diagnoses[0];
        assert!(d.summary.contains("pod web-0"), "{}", d.summary);
        assert!(d.remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.starts_with(
                "NODE=$(kubectl -n <namespace> get pod web-0 -o jsonpath='{.spec.nodeName}');"
            )));
        let started = format!(
            "{event}\n1m          Normal    Started                  pod/web-0   Started container web\n"
        );
        assert!(ids(&check_only("KW305", &started)).is_empty());
        let answered = event.replace(
            "Error received from AddNetwork gRPC call: rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:50051: connect: connection refused\"",
            "failed to assign an IP address to container",
        );
        assert!(ids(&check_only("KW305", &answered)).is_empty());
    }

    #[test]
    fn near_misses() {
        for text in [
            "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"0f46\": plugin type=\"aws-cni\" name=\"aws-cni\" failed (add): add cmd: failed to assign an IP address to container",
            "No entry for c6i.xlarge in /etc/eks/eni-max-pods.txt",
            "Ready  True  KubeletReady  kubelet is posting ready status",
        ] {
            assert!(ids(&check_only("KW305", text)).is_empty(), "{text}");
        }
    }
}
