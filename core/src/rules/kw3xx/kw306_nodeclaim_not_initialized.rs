//! KW306 nodeclaim-not-initialized.

use crate::document::Evidence;
use crate::facts::{
    contains_ignore_ascii_case, find_ignore_ascii_case, Facts, Message, MessageOrigin, ObjectRef,
};
use crate::rules::kw2xx::scheduling::tail_after;
use crate::rules::kw3xx::agents::{resource_owner, taint_key, taint_owner};
use crate::rules::kw3xx::common::{
    booting_nodes, claim_age, claim_ref, conditions, daemonset_presence, describe_block, named,
    node_of, nodeclaim_of, nodepool_of_nodeclaim, push_unique, raw_describe_subject,
    sole_raw_value, Api, Initialized, Presence,
};
use crate::rules::text::capitalised;
use crate::rules::{evidence_of, Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW306",
    slug: "nodeclaim-not-initialized",
    title: "The node registered but Karpenter never marks it initialized",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The node joined the cluster, but Karpenter does not consider it initialized: the NodeClaim's
`Initialized` condition is not True and the Node lacks the `karpenter.sh/initialized=true` label.
Karpenter needs all three: the Node is Ready; every resource EC2's DescribeInstanceTypes reports
for the type (GPUs, pod ENIs, Neuron cores...) is in `node.status.allocatable`; every NodePool
startup taint is gone. Until then pods that need what is missing stay Pending and Karpenter
will not disrupt the node (`Node isn't initialized`, KW404).

Signals: NodeClaim `Initialized=Unknown` with reason `NodeNotReady` (`Node status is NotReady`),
`StartupTaintsExist` (`StartupTaint "<taint>" still exists`), `KnownEphemeralTaintsExist`
(`KnownEphemeralTaint "<taint>" still exists`), `ResourceNotRegistered` (`Resource "<name>" was
requested but not registered`), `DRADriverPoolsNotPublished`; the pre-v0.32 `Expected resource
"<name>" didn't register on the node`; Karpenter's `Node isn't initialized`; a Node of
Karpenter's without `karpenter.sh/initialized=true` that is NotReady or still carries a startup
taint or a known ephemeral taint (`node.kubernetes.io/not-ready`, `.../unreachable`,
`node.cloudprovider.kubernetes.io/uninitialized`). The missing label alone on a Ready, untainted
Node is no evidence: a trimmed `kubectl get node -o yaml` often drops labels. When Karpenter says
only `isn't initialized`, a Ready node of an NVIDIA GPU type (`g5`, `p4d`...) or an
Inferentia/Trainium type whose shown allocatable lacks `nvidia.com/gpu` /
`aws.amazon.com/neuron` names the missing resource (medium confidence).

## Why it happens
Whatever should finish the node's setup is not running there: the CNI (node NotReady), the agent
that removes a startup taint (Cilium for `node.cilium.io/agent-not-ready`, the EBS CSI node plugin
for `ebs.csi.aws.com/agent-not-ready`, the EFS CSI node plugin for
`efs.csi.aws.com/agent-not-ready`, the Istio CNI for `cni.istio.io/not-ready`), or the device
plugin that advertises a resource (the NVIDIA device plugin for `nvidia.com/gpu`, Security Groups
for Pods on aws-node, `ENABLE_POD_ENI=true`, for `vpc.amazonaws.com/pod-eni`, the Neuron device
plugin for `aws.amazon.com/neuron`).

## How to fix
Install or repair the named DaemonSet (it must tolerate the NodePool's taints and startup
taints), or remove a startup taint nothing will ever remove from the NodePool's `startupTaints`.
For `vpc.amazonaws.com/pod-eni`, first read aws-node's `ENABLE_POD_ENI`: when it is already
`true`, Security Groups for Pods is on and the trunk-ENI race (KW210) is the cause; only when it
is unset or `false` does setting it help.
"#,
};

const SIGNALS: &[&str] = &[
    "node status is notready",
    "startuptaint \"",
    "knownephemeraltaint \"",
    "was requested but not registered",
    "didn't register on the node",
    "didn\u{2019}t register on the node",
    "has not published a complete resource pool",
    "isn't initialized",
    "isn\u{2019}t initialized",
    "status condition transitioned, type: initialized",
    // Read for the NodeClaim's NodePool.
    "created nodeclaim",
];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Cause {
    NodeNotReady,
    StartupTaint(String),
    EphemeralTaint(String),
    Resource(String),
    DraDriver(String),
    /// Karpenter says the node is not initialized, without saying why.
    Unstated,
}

struct Hit {
    cause: Cause,
    nodeclaim: Option<String>,
    node: Option<String>,
    evidence: Vec<Evidence>,
    /// Inferred from a Node's labels rather than stated by Karpenter.
    inferred: bool,
}

/// The quoted value after `marker` (`StartupTaint "` -> the taint), also where the message
/// sits JSON-escaped in a line kept as text (`"message": "StartupTaint \"<taint>\" ..."`, a
/// `jq` projection without `kind`).
fn quoted_after(text: &str, marker: &str) -> Option<String> {
    let escaped = marker.strip_suffix('"').map(|m| format!("{m}\\\""));
    let rest = tail_after(text, marker).or_else(|| tail_after(text, escaped.as_deref()?))?;
    let v: String = rest
        .chars()
        .take_while(|c| !matches!(c, '"' | '\\'))
        .collect();
    (!v.is_empty()).then_some(v)
}

/// The cause a condition reason and message (or a bare text) state.
fn cause_of(reason: &str, text: &str) -> Option<Cause> {
    if let Some(t) = quoted_after(text, "KnownEphemeralTaint \"") {
        return Some(Cause::EphemeralTaint(t));
    }
    if let Some(t) = quoted_after(text, "StartupTaint \"") {
        return Some(Cause::StartupTaint(t));
    }
    if contains_ignore_ascii_case(text, "was requested but not registered") {
        return quoted_after(text, "Resource \"").map(Cause::Resource);
    }
    if contains_ignore_ascii_case(text, "register on the node")
        && contains_ignore_ascii_case(text, "expected resource")
    {
        // `Expected resource "nvidia.com/gpu" didn't register` / `expected resource X didn't`.
        return quoted_after(text, "xpected resource \"")
            .map(Cause::Resource)
            .or_else(|| {
                tail_after(text, "xpected resource ")
                    .and_then(|r| r.split_whitespace().next().map(str::to_string))
                    .map(Cause::Resource)
            });
    }
    if let Some(d) = quoted_after(text, "DRA driver \"") {
        if contains_ignore_ascii_case(text, "has not published") {
            return Some(Cause::DraDriver(d));
        }
    }
    if reason == "NodeNotReady" || contains_ignore_ascii_case(text, "Node status is NotReady") {
        return Some(Cause::NodeNotReady);
    }
    match reason {
        "StartupTaintsExist" => Some(Cause::StartupTaint(String::new())),
        "KnownEphemeralTaintsExist" => Some(Cause::EphemeralTaint(String::new())),
        "ResourceNotRegistered" => Some(Cause::Resource(String::new())),
        _ => None,
    }
}

/// Karpenter's known ephemeral taints (`KnownEphemeralTaints`): Kubernetes sets them while a
/// node is not ready or not yet initialized by the cloud provider.
const KNOWN_EPHEMERAL: &[&str] = &[
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.cloudprovider.kubernetes.io/uninitialized",
];

/// Instance families whose accelerators Karpenter counts in the NodeClaim's capacity, and the
/// extended resource their device plugin registers (EC2 DescribeInstanceTypes: NVIDIA GPUs,
/// Inferentia and Trainium).
const ACCELERATOR_FAMILIES: &[(&str, &[&str])] = &[
    (
        "nvidia.com/gpu",
        &[
            "p2", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "g3", "g3s", "g4dn", "g5",
            "g5g", "g6", "g6e", "gr6",
        ],
    ),
    (
        "aws.amazon.com/neuron",
        &["inf1", "inf2", "trn1", "trn1n", "trn2"],
    ),
];

/// The accelerator resource Node `n`'s instance type has and its shown allocatable lacks (or
/// holds as 0): only when the allocatable is shown at all.
fn accelerator_missing(n: &crate::facts::Node) -> Option<&'static str> {
    let family = n.instance_type()?.split('.').next()?;
    let (resource, _) = ACCELERATOR_FAMILIES
        .iter()
        .find(|(_, families)| families.contains(&family))?;
    let shown = n.allocatable.contains_key("cpu") || n.allocatable.contains_key("pods");
    let registered = n
        .allocatable
        .iter()
        .any(|(k, v)| k.starts_with(resource) && v.trim() != "0");
    (shown && !registered).then_some(*resource)
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let booting = booting_nodes(facts);
    let initialized = Initialized::new(facts);
    let mut hits: Vec<Hit> = Vec::new();
    for c in conditions(facts) {
        // A NodeClaim initialized later (its `initialized nodeclaim` line, a transition event
        // to True) only waited for that.
        if !c.is("Initialized") || !c.not_true() || initialized.shown(c.object.as_deref(), None) {
            continue;
        }
        let Some(cause) = cause_of(&c.reason, &c.message) else {
            continue;
        };
        hits.push(Hit {
            cause,
            nodeclaim: c.object.clone(),
            node: None,
            evidence: c.evidence.clone(),
            inferred: false,
        });
    }
    let covered: Vec<Evidence> = hits.iter().flat_map(|h| h.evidence.clone()).collect();
    for m in &facts.messages {
        if covered
            .iter()
            .any(|e| e.source == m.evidence.source && e.line == m.evidence.line)
        {
            continue;
        }
        // An event's reason is the event's own, not an Initialized condition's: the kubelet
        // and the node controller say `NodeNotReady` when any node boots or stops answering.
        let reason = match m.origin {
            MessageOrigin::Event => "",
            _ => m.reason.as_deref().unwrap_or_default(),
        };
        let cause = cause_of(reason, &m.text).or_else(|| {
            (contains_ignore_ascii_case(&m.text, "isn't initialized")
                || contains_ignore_ascii_case(&m.text, "isn\u{2019}t initialized"))
            .then_some(Cause::Unstated)
        });
        let Some(cause) = cause else { continue };
        // A grepped describe of several NodeClaims: the `Name:` above and `Node Name:` below.
        let (block, block_node) = describe_block(facts, m);
        let node_like = |n: &String| n.starts_with("ip-") || n.starts_with("i-");
        let nodeclaim = nodeclaim_of(facts, m).or_else(|| block.clone().filter(|n| !node_like(n)));
        let node = node_of(facts, m)
            .or(block_node)
            .or_else(|| block.filter(node_like));
        if initialized.shown(nodeclaim.as_deref(), node.as_deref())
            || node.as_deref().is_some_and(|n| booting.contains(n))
        {
            continue;
        }
        // Karpenter's bare `isn't initialized` is said in every node's first minute; a node it
        // weighed for disruption since (consolidation verdicts, nominations) had initialized.
        if matches!(cause, Cause::Unstated)
            && node.as_deref().is_some_and(|n| {
                weighed_for_disruption(facts, n, Some(m))
                    || crate::rules::kw4xx::disruption::launch_time_only(facts, m, n)
            })
        {
            continue;
        }
        hits.push(Hit {
            cause,
            nodeclaim,
            node,
            // An Event object's repeats carry their own first and last times (firstTimestamp,
            // lastTimestamp); the message's one time would overwrite the first.
            evidence: vec![if m.evidence.first_seen.is_some() {
                m.evidence.clone()
            } else {
                evidence_of(m)
            }],
            inferred: false,
        });
    }
    // Nodes Karpenter registered but never labelled initialized.
    for n in &facts.nodes {
        let karpenter = n.meta.labels.contains_key("karpenter.sh/nodepool")
            || n.meta
                .labels
                .get("karpenter.sh/registered")
                .map(String::as_str)
                == Some("true");
        let initialized = n
            .meta
            .labels
            .get("karpenter.sh/initialized")
            .map(String::as_str)
            == Some("true");
        // A `kubectl get nodes` row shows only the label columns asked for (`-L`): a missing
        // label there is unknown, not absent.
        let labels_known =
            !n.meta.from_table || n.meta.labels.contains_key("karpenter.sh/initialized");
        if !karpenter
            || initialized
            || !labels_known
            || booting.contains(n.meta.name.as_str())
            || weighed_for_disruption(facts, &n.meta.name, None)
        {
            continue;
        }
        let not_ready = n
            .conditions
            .iter()
            .find(|c| c.condition_type == "Ready" && c.status != "True");
        // The startup taints of its NodePool, or of its NodeClaim (a copy of them).
        let pool = n
            .meta
            .labels
            .get("karpenter.sh/nodepool")
            .and_then(|np| facts.nodepool(np))
            .map(|np| &np.startup_taints);
        let claim = facts
            .nodeclaims
            .iter()
            .find(|c| c.node_name.as_deref() == Some(n.meta.name.as_str()));
        let startup = n.taints.iter().find(|t| {
            pool.into_iter()
                .chain(claim.map(|c| &c.startup_taints))
                .flatten()
                .any(|s| s.key == t.key)
        });
        // Taints Kubernetes or an agent removes once the node is set up: a taint of an agent
        // the engine knows is a startup taint even when the NodePool is not in the input.
        let ephemeral = n
            .taints
            .iter()
            .find(|t| KNOWN_EPHEMERAL.contains(&t.key.as_str()));
        let agent = n.taints.iter().find(|t| taint_owner(&t.key).is_some());
        let cause = if not_ready.is_some() {
            Cause::NodeNotReady
        } else if let Some(t) = startup.or(agent) {
            Cause::StartupTaint(t.display())
        } else if let Some(t) = ephemeral {
            Cause::EphemeralTaint(t.display())
        } else {
            // A Ready node without a startup or ephemeral taint: the label alone is no
            // evidence. A trimmed `kubectl get node -o yaml` often drops labels, and an old,
            // healthy node simply was initialized; Karpenter's own `isn't initialized` or the
            // NodeClaim's condition would say otherwise, and are read above.
            continue;
        };
        hits.push(Hit {
            cause,
            nodeclaim: claim.map(|c| c.meta.name.clone()),
            node: Some(n.meta.name.clone()),
            // The Ready condition says more than the Node's name line.
            evidence: not_ready
                .and_then(|c| c.evidence.clone())
                .or_else(|| n.meta.evidence.clone())
                .into_iter()
                .collect(),
            inferred: true,
        });
    }
    // Karpenter said only `isn't initialized`; a node whose instance type carries an accelerator
    // the shown allocatable lacks says which resource it waits for.
    // A node NotReady or still tainted has that cause first: its device plugin cannot run yet.
    let explained: Vec<String> = hits
        .iter()
        .filter(|h| h.cause != Cause::Unstated)
        .filter_map(|h| h.node.clone())
        .collect();
    for h in hits.iter_mut().filter(|h| h.cause == Cause::Unstated) {
        if let Some(resource) = h
            .node
            .as_deref()
            .filter(|n| !explained.iter().any(|e| e == n))
            .and_then(|n| facts.nodes.iter().find(|x| x.meta.name == n))
            .filter(|x| x.condition("Ready").is_none_or(|c| c.status == "True"))
            .and_then(accelerator_missing)
        {
            h.cause = Cause::Resource(resource.to_string());
            h.inferred = true;
        }
    }
    if hits.is_empty() {
        return Vec::new();
    }
    // Karpenter's bare `isn't initialized` adds nothing where a reason is known.
    // Its evidence joins the hit of the same NodeClaim or node: with several NodeClaims, one's
    // event is no evidence about another.
    if hits.iter().any(|h| h.cause != Cause::Unstated) {
        let unstated: Vec<Hit> = hits
            .iter()
            .filter(|h| h.cause == Cause::Unstated)
            .map(|h| Hit {
                cause: Cause::Unstated,
                nodeclaim: h.nodeclaim.clone(),
                node: h.node.clone(),
                evidence: h.evidence.clone(),
                inferred: h.inferred,
            })
            .collect();
        hits.retain(|h| h.cause != Cause::Unstated);
        let mut kept: Vec<Hit> = Vec::new();
        for u in unstated {
            let same = |h: &Hit| {
                (u.nodeclaim.is_some() && h.nodeclaim == u.nodeclaim)
                    || (u.node.is_some() && h.node == u.node)
                    || u.nodeclaim.as_deref().is_some_and(|n| {
                        h.node.is_some()
                            && facts
                                .nodeclaims
                                .iter()
                                .any(|c| c.meta.name == n && c.node_name == h.node)
                    })
            };
            let anonymous = |h: &Hit| h.nodeclaim.is_none() && h.node.is_none();
            // Words about no object, or hits about no object: they may be the same one.
            let target = hits.iter().position(same).or_else(|| {
                (anonymous(&u))
                    .then_some(0)
                    .or_else(|| hits.iter().position(anonymous))
            });
            match target {
                Some(i) => hits[i].evidence.extend(u.evidence),
                // Another NodeClaim, which Karpenter says only is not initialized.
                None => kept.push(u),
            }
        }
        hits.extend(kept);
    }
    // One diagnosis per cause.
    let mut causes: Vec<Cause> = Vec::new();
    for h in &hits {
        let generic = matches!(&h.cause, Cause::StartupTaint(t) | Cause::EphemeralTaint(t) | Cause::Resource(t) if t.is_empty());
        if generic
            && hits.iter().any(|o| {
                std::mem::discriminant(&o.cause) == std::mem::discriminant(&h.cause)
                    && o.cause != h.cause
            })
        {
            continue;
        }
        if !causes.contains(&h.cause) {
            causes.push(h.cause.clone());
        }
    }
    causes
        .into_iter()
        .map(|cause| {
            let group: Vec<&Hit> = hits
                .iter()
                .filter(|h| {
                    h.cause == cause
                        || (std::mem::discriminant(&h.cause) == std::mem::discriminant(&cause)
                            && matches!(&h.cause, Cause::StartupTaint(t) | Cause::EphemeralTaint(t) | Cause::Resource(t) if t.is_empty()))
                })
                .collect();
            diagnose(facts, &cause, &group)
        })
        .collect()
}

/// Karpenter's own words in the evidence: `Node isn't initialized` (v1.2+), `state node isn't
/// initialized` (v1.0 to v1.1, after `Cannot disrupt Node: `), quoted as the input has them.
fn said_not_initialized(group: &[&Hit]) -> String {
    group
        .iter()
        .flat_map(|h| &h.evidence)
        .find_map(|e| {
            // A single-quoted YAML scalar doubles the apostrophe (`isn''t`).
            let text = e.text.replace("''", "'");
            let (begin, end) = ["isn't initialized", "isn\u{2019}t initialized"]
                .iter()
                .find_map(|m| find_ignore_ascii_case(&text, m).map(|at| (at, at + m.len())))?;
            // The clause starts after the event's `Cannot disrupt Node: `, a quote or the wide
            // gap before a table's MESSAGE column.
            let head = &text[..begin];
            let start = [": ", "\"", "'", "  ", "\t"]
                .iter()
                .filter_map(|sep| head.rfind(sep).map(|at| at + sep.len()))
                .max()
                .unwrap_or(0);
            let clause = text[start..end].trim();
            Some(format!("\"{clause}\""))
        })
        .unwrap_or_else(|| "\"Node isn't initialized\"".to_string())
}

fn diagnose(facts: &Facts, cause: &Cause, group: &[&Hit]) -> Diagnosis {
    let mut nodeclaims: Vec<String> = Vec::new();
    let mut nodes: Vec<String> = Vec::new();
    for h in group {
        if let Some(n) = &h.nodeclaim {
            push_unique(&mut nodeclaims, n.clone());
        }
        if let Some(n) = &h.node {
            push_unique(&mut nodes, n.clone());
        }
    }
    for nc in &nodeclaims {
        if let Some(node) = facts
            .nodeclaims
            .iter()
            .find(|c| &c.meta.name == nc)
            .and_then(|c| c.node_name.clone())
        {
            push_unique(&mut nodes, node);
        }
    }
    if nodes.is_empty() {
        if let Some(n) = sole_raw_value(facts, &["nodeName:", "Node Name:"]) {
            nodes.push(n);
        }
    }
    match raw_describe_subject(facts) {
        Some(o) if o.kind == "Node" && nodes.is_empty() && nodeclaims.is_empty() => {
            nodes.push(o.name)
        }
        Some(o) if o.kind == "NodeClaim" && nodeclaims.is_empty() => nodeclaims.push(o.name),
        _ => {}
    }
    // The NodeClaim's own describe cut by grep before `Node Name:`: the node the input shows
    // of its NodePool, not initialized either, when there is exactly one such node.
    if nodes.is_empty() {
        let claim_pool = nodeclaims.iter().find_map(|n| {
            nodepool_of_nodeclaim(facts, n)
                .or_else(|| crate::rules::kw4xx::disruption::nodepool_in_generated_name(facts, n))
        });
        let claimed_by_other = |node: &str| {
            facts
                .nodeclaims
                .iter()
                .any(|c| !nodeclaims.contains(&c.meta.name) && c.node_name.as_deref() == Some(node))
        };
        let candidates: Vec<&String> = facts
            .nodes
            .iter()
            .filter(|n| !n.karpenter_initialized() && !claimed_by_other(&n.meta.name))
            .filter(|n| match (n.nodepool(), &claim_pool) {
                (Some(pool), Some(wanted)) => pool == wanted,
                (Some(_), None) => true,
                (None, _) => false,
            })
            .map(|n| &n.meta.name)
            .collect();
        if let [only] = candidates.as_slice() {
            nodes.push((*only).clone());
        }
    }
    let nodepool = nodeclaims
        .iter()
        .find_map(|n| nodepool_of_nodeclaim(facts, n))
        .or_else(|| {
            nodes.iter().find_map(|n| {
                facts
                    .nodes
                    .iter()
                    .find(|x| &x.meta.name == n)
                    .and_then(|x| {
                        x.meta
                            .labels
                            .get("karpenter.sh/nodepool")
                            .or_else(|| x.meta.labels.get("karpenter.sh/provisioner-name"))
                            .cloned()
                    })
            })
        })
        .or_else(|| {
            sole_raw_value(
                facts,
                &[
                    "karpenter.sh/nodepool:",
                    "karpenter.sh/nodepool=",
                    "karpenter.sh/provisioner-name:",
                    "karpenter.sh/provisioner-name=",
                ],
            )
        })
        // Karpenter names a NodeClaim `<nodepool>-<5 characters>`.
        .or_else(|| {
            nodeclaims
                .iter()
                .find_map(|n| crate::rules::kw4xx::disruption::nodepool_in_generated_name(facts, n))
        });
    // Before v0.32: a Machine of a Provisioner, whose startup taints sit in its spec.
    let api = Api::of(facts, &nodeclaims);
    let mut subject = match (nodeclaims.is_empty(), nodes.is_empty()) {
        (false, false) => format!(
            "{} ({})",
            named(api.claim(), &nodeclaims),
            named("node", &nodes)
        ),
        (false, true) => named(api.claim(), &nodeclaims),
        (true, false) => named("Node", &nodes),
        (true, true) => format!("The {}", api.claim()),
    };
    if let Some(np) = &nodepool {
        subject.push_str(&format!(" of {} {np}", api.pool()));
    }
    let node = nodes
        .first()
        .cloned()
        .unwrap_or_else(|| "<node-name>".to_string());
    let np_name = nodepool
        .clone()
        .unwrap_or_else(|| format!("<{}>", api.pool_res()));
    let mut related: Vec<&'static str> = vec!["KW404"];
    let mut confidence = Confidence::High;
    let (summary, steps) = match cause {
        Cause::NodeNotReady => {
            let cni = cni_evidence(facts);
            if cni {
                related.push("KW305");
            }
            (
                format!(
                    "{subject} registered but is not initialized: the Node is NotReady ({}){}.",
                    if group.iter().all(|h| h.inferred) {
                        "its Ready condition is not True"
                    } else {
                        "Node status is NotReady"
                    },
                    if cni {
                        ", because its container network is not ready (cni plugin not initialized, KW305)".to_string()
                    } else {
                        match ready_message(facts, &nodes) {
                            Some(msg) => format!("; the kubelet says: \"{msg}\""),
                            None => "; the Node's Ready condition says why".to_string(),
                        }
                    }
                ),
                vec![Remediation::command(
                    format!("Read {node}'s conditions (the Ready message names the cause: CNI, kubelet, disk, PIDs):"),
                    format!("kubectl get node {node} -o jsonpath='{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}} {{.message}}{{\"\\n\"}}{{end}}'; kubectl describe node {node} | tail -20"),
                )],
            )
        }
        Cause::StartupTaint(taint) => {
            startup_taint(facts, api, &subject, taint, &node, &np_name)
        }
        Cause::EphemeralTaint(taint) => ephemeral_taint(facts, &subject, taint, &node, &mut related),
        Cause::Resource(resource) => {
            // With Security Groups for Pods shown off there is no trunk-ENI race (KW210).
            if resource == "vpc.amazonaws.com/pod-eni"
                && aws_node_pod_eni(facts).is_none_or(|v| v == "true")
            {
                related.push("KW210");
            }
            let (mut summary, steps) =
                resource_not_registered(facts, api, &subject, resource, &node, &np_name);
            if group.iter().all(|h| h.inferred) {
                // Karpenter did not name the resource: the instance type and the allocatable did.
                confidence = Confidence::Medium;
                let instance_type = facts
                    .nodes
                    .iter()
                    .find(|n| n.meta.name == node)
                    .and_then(|n| n.instance_type())
                    .unwrap_or("accelerated instance");
                summary = summary.replacen(
                    &format!("resource {resource} was requested but the node never advertised it in its allocatable"),
                    &format!("Karpenter says only that it isn't initialized, but the node is a {instance_type}, whose accelerators register as {resource}, and its allocatable has no {resource}"),
                    1,
                );
            }
            (summary, steps)
        }
        Cause::DraDriver(driver) => (
            format!("{subject} is not initialized: DRA driver \"{driver}\" has not published a complete ResourceSlice pool for the node."),
            vec![Remediation::command(
                format!("Check the DRA driver's kubelet plugin on {node} and the slices it published:"),
                format!("kubectl get resourceslices --field-selector spec.nodeName={node}; kubectl get pods -A -o wide --field-selector spec.nodeName={node} | grep -i {}", driver.split('.').next().unwrap_or(driver)),
            )],
        ),
        Cause::Unstated if cni_evidence(facts) => {
            related.push("KW305");
            (
                format!("{subject} is not initialized (Karpenter: {}): the Node is NotReady because its container network is not ready (cni plugin not initialized, KW305), and Karpenter only initializes a Ready node.", said_not_initialized(group)),
                vec![Remediation::command(
                    format!("Fix the CNI on {node} (KW305); then the Node turns Ready and Karpenter initializes it. Its conditions:"),
                    format!("kubectl get node {node} -o jsonpath='{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}} {{.message}}{{\"\\n\"}}{{end}}'"),
                )],
            )
        }
        Cause::Unstated => {
            if group.iter().any(|h| h.inferred) {
                confidence = Confidence::Medium;
            }
            (
                format!(
                    "{subject} is not initialized{}. Karpenter waits for three things: the Node Ready, every expected resource (GPUs, pod ENIs...) in its allocatable, and every startup taint removed; the input does not say which one is missing.",
                    if group.iter().any(|h| h.inferred) {
                        " (inferred: the Node has Karpenter's labels but not karpenter.sh/initialized=true)".to_string()
                    } else {
                        format!(" (Karpenter: {})", said_not_initialized(group))
                    }
                ),
                vec![match crate::rules::version::era_before_v0_28(facts) {
                    // No Machine before v0.28: the Node and Karpenter's log are all there is.
                    Some(true) if api.legacy && nodeclaims.is_empty() => Remediation::command(
                        "Before v0.28 Karpenter had no Machine: read the Node's conditions, its taints and allocatable, and what Karpenter logged about it:",
                        format!("kubectl get node {node} -o jsonpath='{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}}: {{.message}}{{\"\\n\"}}{{end}}{{.spec.taints}}{{\"\\n\"}}{{.status.allocatable}}{{\"\\n\"}}'; kubectl logs -n {} -l app.kubernetes.io/name=karpenter --since=1h | grep '{node}'", crate::rules::kw3xx::common::karpenter_namespace(facts)),
                    ),
                    era => Remediation::command(
                    match (api.legacy, era) {
                        (true, Some(false)) => "Read the Machine's MachineInitialized condition: its reason and message name what is missing:",
                        (true, _) => "Read the Machine's MachineInitialized condition: its reason and message name what is missing (Machines exist from v0.28; before that only the Node part of the command answers):",
                        _ => "Read the NodeClaim's Initialized condition: its reason and message name what is missing:",
                    },
                    format!("kubectl get {all} -o wide; kubectl get {one} -o jsonpath='{{range .items[?(@.status.nodeName==\"{node}\")]}}{{.metadata.name}}{{\"\\n\"}}{{range .status.conditions[*]}}  {{.type}}={{.status}} {{.reason}}: {{.message}}{{\"\\n\"}}{{end}}{{end}}'; kubectl get node {node} -o jsonpath='{{.spec.taints}}{{\"\\n\"}}{{.status.allocatable}}{{\"\\n\"}}'", all = if api.legacy { api.claim_kubectl() } else { "nodeclaims" }, one = api.claim_kubectl()),
                ),
                }],
            )
        }
    };
    let objects: Vec<ObjectRef> = if nodeclaims.is_empty() {
        nodes
            .iter()
            .map(|n| ObjectRef::new("Node", None, n))
            .collect()
    } else {
        nodeclaims.iter().map(|n| claim_ref(facts, n)).collect()
    };
    // Several NodeClaims (or nodes) take a plural verb.
    let mut summary = if objects.len() > 1 {
        plural_verb(summary, &subject)
    } else {
        summary
    };
    // How long it has waited, by the same reading of ages as KW303 (`rules::age_of`).
    let oldest = nodeclaims
        .iter()
        .filter_map(|n| claim_age(facts, n))
        .max_by_key(|a| a.seconds);
    if let Some(age) = oldest {
        let who = if nodeclaims.len() > 1 {
            "The oldest"
        } else {
            "The"
        };
        summary.push_str(&format!(
            " {who} {} was created {}.",
            api.claim(),
            age.ago()
        ));
    }
    Diagnosis::new(&META, summary)
        .with_confidence(confidence)
        .with_objects(&objects)
        .with_node_pool(nodepool.as_deref())
        // One line per NodeClaim (or node) even when their texts read the same.
        .with_evidence_per_object(group.iter().flat_map(|h| {
            let who = h.nodeclaim.clone().or_else(|| h.node.clone());
            h.evidence.iter().map(move |e| (who.clone(), e.clone()))
        }))
        .with_related(&related)
        .with_remediation(steps)
}

/// `<subject> is not initialized...` -> `<subject> are not initialized...` (also `registered
/// but is not`), for a subject naming several NodeClaims.
fn plural_verb(summary: String, subject: &str) -> String {
    let Some(rest) = summary.strip_prefix(subject) else {
        return summary;
    };
    for (one, many) in [
        (
            " registered but is not initialized",
            " registered but are not initialized",
        ),
        (" is not initialized", " are not initialized"),
    ] {
        if let Some(tail) = rest.strip_prefix(one) {
            return format!("{subject}{many}{tail}");
        }
    }
    summary
}

/// The message of the first listed Node's Ready condition, when not True.
fn ready_message(facts: &Facts, nodes: &[String]) -> Option<String> {
    facts
        .nodes
        .iter()
        .filter(|n| nodes.contains(&n.meta.name))
        .filter_map(|n| n.condition("Ready"))
        .find(|c| c.status != "True")
        .and_then(|c| c.message.clone())
        .filter(|m| !m.is_empty())
}

/// The input shows the node's network plugin not ready (KW305's signals).
fn cni_evidence(facts: &Facts) -> bool {
    facts.messages.iter().any(|m| {
        [
            "networkpluginnotready",
            "cni plugin not initialized",
            "runtime network not ready",
        ]
        .iter()
        .any(|s| contains_ignore_ascii_case(&m.text, s))
    })
}

/// What the input says about the agent's DaemonSet, as a clause.
fn presence_words(p: &Presence) -> String {
    match p {
        Presence::Present(name, Some(ready)) => {
            format!("its DaemonSet {name} is in the input ({ready})")
        }
        Presence::Present(name, None) => format!("its DaemonSet {name} is in the input"),
        Presence::Pod(pod, Some(status)) => format!("its pod {pod} is {status}"),
        Presence::Pod(pod, None) => format!("its pod {pod} is in the input"),
        Presence::Absent(n) if *n > 0 => {
            format!("its DaemonSet is not among the {n} DaemonSets in the input")
        }
        Presence::Absent(_) => "its DaemonSet is not in the input's DaemonSet list".to_string(),
        Presence::Unknown => {
            "the input does not show whether its DaemonSet is installed".to_string()
        }
    }
}

fn startup_taint(
    facts: &Facts,
    api: Api,
    subject: &str,
    taint: &str,
    node: &str,
    nodepool: &str,
) -> (String, Vec<Remediation>) {
    let key = taint_key(taint);
    let shown = if taint.is_empty() {
        "a startup taint".to_string()
    } else {
        format!("startup taint {taint}")
    };
    match taint_owner(taint) {
        Some(owner) => {
            let presence = daemonset_presence(facts, owner.daemonsets);
            let summary = format!(
                "{subject} is not initialized: {shown} is still on the node. {} removes it once it runs there; {}.",
                capitalised(owner.agent),
                presence_words(&presence)
            );
            let mut steps = vec![Remediation::command(
                format!("Check {} on {node}: {}.", owner.agent, owner.note),
                format!(
                    "kubectl get daemonsets -A | grep -E '{}'; kubectl -n {} get pods -l {} -o wide --field-selector spec.nodeName={node}",
                    owner.daemonsets.join("|"),
                    owner.namespace,
                    owner.pod_selector
                ),
            )];
            if matches!(presence, Presence::Absent(_) | Presence::Unknown) {
                steps.push(Remediation::yaml(
                    format!("If {} is not installed, remove the taint from {} {nodepool}'s startupTaints (`kubectl edit {} {nodepool}`); if it is, its pods must tolerate the taint:", owner.agent, api.pool(), api.pool_res()),
                    format!("{}---\n# the agent's DaemonSet pod spec\ntolerations:\n  - key: {key}\n    operator: Exists\n", startup_taints_without(facts, api, nodepool, key)),
                ));
            }
            (summary, steps)
        }
        None => {
            let summary = format!(
                "{subject} is not initialized: {shown} is still on the node and no agent this tool knows removes {}: whatever you run to remove it has not, so Karpenter waits for ever.",
                if key.is_empty() { "it".to_string() } else { key.to_string() }
            );
            let steps = vec![
                Remediation::command(
                    format!("See the node's taints and what runs on {node}:"),
                    format!("kubectl get node {node} -o jsonpath='{{.spec.taints}}{{\"\\n\"}}'; kubectl get pods -A -o wide --field-selector spec.nodeName={node}"),
                ),
                Remediation::yaml(
                    format!("A startup taint must be removed by an agent on the node; if nothing does, drop it from {} {nodepool} (`kubectl edit {} {nodepool}`):", api.pool(), api.pool_res()),
                    startup_taints_without(facts, api, nodepool, if key.is_empty() { "<taint-key>" } else { key }),
                ),
            ];
            (summary, steps)
        }
    }
}

fn ephemeral_taint(
    facts: &Facts,
    subject: &str,
    taint: &str,
    node: &str,
    related: &mut Vec<&'static str>,
) -> (String, Vec<Remediation>) {
    let key = taint_key(taint);
    let shown = if taint.is_empty() {
        "a known ephemeral taint".to_string()
    } else {
        format!("known ephemeral taint {taint}")
    };
    let why = match key {
        "node.kubernetes.io/not-ready" => {
            if cni_evidence(facts) {
                related.push("KW305");
                "the node controller sets it while the Node is NotReady, here because the container network is not ready (KW305)"
            } else {
                "the node controller sets it while the Node is NotReady: the Node's Ready condition says why"
            }
        }
        "node.kubernetes.io/unreachable" => "the node controller sets it when the kubelet stops reporting: the instance is gone, overloaded or cut off from the API server",
        "node.cloudprovider.kubernetes.io/uninitialized" => "the cloud controller manager removes it once it has initialized the node; on EKS that is part of the control plane, on a self-managed cluster the aws-cloud-controller-manager must run",
        "karpenter.sh/unregistered" => "Karpenter itself removes it when it registers the node; if it stays, look for registration errors in the Karpenter log",
        _ => "the component that sets it has not removed it",
    };
    (
        format!("{subject} is not initialized: {shown} is still on the node; {why}."),
        vec![Remediation::command(
            format!("Read {node}'s conditions and taints:"),
            format!("kubectl get node {node} -o jsonpath='{{.spec.taints}}{{\"\\n\"}}{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}} {{.message}}{{\"\\n\"}}{{end}}'"),
        )],
    )
}

fn resource_not_registered(
    facts: &Facts,
    api: Api,
    subject: &str,
    resource: &str,
    node: &str,
    nodepool: &str,
) -> (String, Vec<Remediation>) {
    let shown = if resource.is_empty() {
        "a requested resource".to_string()
    } else {
        format!("resource {resource}")
    };
    let Some(owner) = resource_owner(resource) else {
        return (
            format!("{subject} is not initialized: {shown} was requested but the node never advertised it in its allocatable: the device plugin that registers it is not running there."),
            vec![Remediation::command(
                format!("Check {node}'s allocatable and the device plugin pods on it:"),
                format!("kubectl get node {node} -o jsonpath='{{.status.allocatable}}{{\"\\n\"}}'; kubectl get pods -A -o wide --field-selector spec.nodeName={node}"),
            )],
        );
    };
    if resource == "vpc.amazonaws.com/pod-eni" {
        return pod_eni_not_registered(facts, api, subject, &shown, owner.install, node, nodepool);
    }
    let presence = daemonset_presence(facts, owner.daemonsets);
    // The notes speak of NodePools; before v0.32 the pool is a Provisioner.
    let note = owner
        .note
        .replace("the NodePool's", &format!("the {}'s", api.pool()));
    let summary = format!(
        "{subject} is not initialized: {shown} was requested but the node never advertised it in its allocatable; {} registers it, and {}.",
        owner.plugin,
        presence_words(&presence)
    );
    let mut steps = Vec::new();
    match presence {
        Presence::Pod(name, _) => steps.push(Remediation::command(
            format!("Its pod {name} is in the input: check that it runs on {node}. Note: {note}."),
            format!("kubectl get pods -A -o wide --field-selector spec.nodeName={node} | grep -E '{}'; kubectl get node {node} -o jsonpath='{{.status.allocatable}}{{\"\\n\"}}'", owner.daemonsets.join("|")),
        )),
        Presence::Present(name, _) => steps.push(Remediation::command(
            format!("The DaemonSet {name} exists: check that its pod runs on {node}. Note: {note}."),
            format!("kubectl get pods -A -o wide --field-selector spec.nodeName={node} | grep -E '{}'; kubectl get node {node} -o jsonpath='{{.status.allocatable}}{{\"\\n\"}}'", owner.daemonsets.join("|")),
        )),
        _ => {
            steps.push(Remediation::command(
                format!("Install {}. Note: {note}.", owner.plugin),
                owner.install,
            ));
            steps.push(Remediation::command(
                format!("Then check it runs on {node} and the resource appears:"),
                format!("kubectl get daemonsets -A | grep -E '{}'; kubectl get node {node} -o jsonpath='{{.status.allocatable}}{{\"\\n\"}}'", owner.daemonsets.join("|")),
            ));
        }
    }
    steps.push(Remediation::yaml(
        format!(
            "The plugin's pods must tolerate {} {nodepool}'s taints, e.g.:",
            api.pool()
        ),
        format!(
            "tolerations:\n  - key: {}\n    operator: Exists\n    effect: NoSchedule\n",
            resource.trim_end_matches('/')
        ),
    ));
    (summary, steps)
}

/// `vpc.amazonaws.com/pod-eni` not registered: Security Groups for Pods off on aws-node, or,
/// with it on, the trunk ENI not attached yet (the race KW210 explains, whose fix is the
/// `has-trunk-attached` label). What aws-node's `ENABLE_POD_ENI` is decides which; when the
/// input does not show it, checking it comes first, and turning it on only after.
fn pod_eni_not_registered(
    facts: &Facts,
    api: Api,
    subject: &str,
    shown: &str,
    enable: &str,
    node: &str,
    nodepool: &str,
) -> (String, Vec<Remediation>) {
    let env = aws_node_pod_eni(facts);
    let state = match env.as_deref() {
        Some("true") => "aws-node has ENABLE_POD_ENI=true, so Security Groups for Pods is on and the VPC resource controller has not attached the node's trunk ENI yet, or cannot for this instance type (KW210)".to_string(),
        Some(v) => format!("aws-node has ENABLE_POD_ENI={v}: Security Groups for Pods is off, so no trunk ENI is ever attached"),
        None => "either Security Groups for Pods is off on aws-node (ENABLE_POD_ENI not true) or, with it on, the VPC resource controller has not attached the node's trunk ENI yet (KW210); the input does not show which".to_string(),
    };
    let summary = format!(
        "{subject} is not initialized: {shown} was requested but the node never advertised it; {state}."
    );
    let trunk = || {
        Remediation::command(
            format!("Check the trunk ENI on {node} (the label turns true and pod-eni appears in allocatable once it is attached):"),
            format!("kubectl get node {node} -o jsonpath='{{.metadata.labels.vpc\\.amazonaws\\.com/has-trunk-attached}} {{.status.allocatable.vpc\\.amazonaws\\.com/pod-eni}}{{\"\\n\"}}'"),
        )
    };
    let race = format!(
        "the trunk-ENI race is the cause (KW210): label {} {nodepool}'s nodes `vpc.amazonaws.com/has-trunk-attached: \"false\"` and keep to instance types that support trunking",
        api.pool()
    );
    let turn_on = |text: &str| {
        Remediation::command(
            format!(
                "{text} (the cluster role also needs the AmazonEKSVPCResourceController policy):"
            ),
            enable,
        )
    };
    let steps = match env.as_deref() {
        Some("true") => vec![
            Remediation::text(format!("Security Groups for Pods is already on, so {race}.")),
            trunk(),
        ],
        Some(_) => vec![turn_on("Turn on Security Groups for Pods in the VPC CNI"), trunk()],
        None => vec![
            Remediation::command(
                format!("First check whether Security Groups for Pods is on: if this prints true, {race}."),
                "kubectl -n kube-system get daemonset aws-node -o jsonpath='{.spec.template.spec.containers[?(@.name==\"aws-node\")].env[?(@.name==\"ENABLE_POD_ENI\")].value}{\"\\n\"}'",
            ),
            turn_on("Only if it prints nothing or false, turn Security Groups for Pods on"),
            trunk(),
        ],
    };
    (summary, steps)
}

/// The NodePool's `startupTaints` without `key`: the others it has when the input shows the
/// NodePool, else a comment saying to keep them.
fn startup_taints_without(facts: &Facts, api: Api, nodepool: &str, key: &str) -> String {
    // A v1alpha5 Provisioner has `spec.startupTaints`; a NodePool its template's.
    let (head, pad) = if api.legacy {
        ("spec:\n", "")
    } else {
        ("spec:\n  template:\n    spec:\n", "    ")
    };
    match facts.nodepool(nodepool) {
        Some(np) => {
            let kept: Vec<String> = np
                .startup_taints
                .iter()
                .filter(|t| t.key != key)
                .map(|t| {
                    let value = t
                        .value
                        .as_deref()
                        .filter(|v| !v.is_empty())
                        .map(|v| format!("\n{pad}      value: \"{v}\""))
                        .unwrap_or_default();
                    format!(
                        "{pad}    - key: {}{value}\n{pad}      effect: {}\n",
                        t.key, t.effect
                    )
                })
                .collect();
            if kept.is_empty() {
                format!("{head}{pad}  startupTaints: []   # {key} removed\n")
            } else {
                format!(
                    "{head}{pad}  startupTaints:   # {key} removed\n{}",
                    kept.concat()
                )
            }
        }
        None => format!(
            "{head}{pad}  startupTaints:\n{pad}    # remove the entry with key {key}; keep the others\n"
        ),
    }
}

/// `ENABLE_POD_ENI` of aws-node: the typed DaemonSet's env, or an `ENABLE_POD_ENI` line.
pub fn aws_node_pod_eni(facts: &Facts) -> Option<String> {
    let typed = facts
        .workloads
        .iter()
        .filter(|w| w.meta.name == "aws-node")
        .flat_map(|w| w.containers.iter())
        .find_map(|c| c.env.get("ENABLE_POD_ENI").cloned());
    typed.or_else(|| {
        facts.messages.iter().find_map(|m| {
            let rest = tail_after(&m.text, "ENABLE_POD_ENI")?;
            let v: String = rest
                .trim_start_matches(['=', ':', ' ', '"', '\t'])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            let v = v.to_ascii_lowercase();
            (v == "true" || v == "false").then_some(v)
        })
    })
}

/// Karpenter weighed the node for disruption and decided on other grounds (`Unconsolidatable`,
/// or `DisruptionBlocked` for a nomination, a PDB, an annotation): it only gets there for an
/// initialized node, so a missing `karpenter.sh/initialized` label is the paste's, not the
/// node's (a describe trimmed by hand).
///
/// With `said`, the message that reports the node not initialized: under a masked name
/// (`<redacted>`) only a message known to be about that same node counts.
fn weighed_for_disruption(facts: &Facts, node: &str, said: Option<&Message>) -> bool {
    // The checks Karpenter makes before the initialized one, and that one itself.
    const BEFORE_INITIALIZED: &[&str] = &[
        "initialized",
        "doesn't contain both",
        "managed by karpenter",
        "associated node",
    ];
    facts.messages.iter().any(|m| {
        let about_node = m
            .object
            .as_ref()
            .is_some_and(|o| o.kind.eq_ignore_ascii_case("Node") && o.name == node)
            && said.is_none_or(|s| {
                crate::rules::kw4xx::disruption::same_subject(
                    facts,
                    s,
                    m,
                    &ObjectRef::new("Node", None, node),
                )
            });
        let reason = m.reason.as_deref().unwrap_or("");
        // Karpenter disrupting the node (`Disrupting Node: Drift`, a log line naming it in
        // `disrupting via consolidation delete, terminating 1 nodes (... ip-10-0-1-2 ...)`)
        // also only happens once it is initialized.
        let disrupted = (about_node
            && (reason == "DisruptionTerminating"
                || contains_ignore_ascii_case(&m.text, "disrupting node")))
            || (m.origin == MessageOrigin::KarpenterLog
                && m.text.contains(node)
                && ["disrupting via", "deprovisioning via"]
                    .iter()
                    .any(|s| contains_ignore_ascii_case(&m.text, s)));
        disrupted
            || about_node
                && (reason == "Unconsolidatable"
                    || (reason == "DisruptionBlocked"
                        && !BEFORE_INITIALIZED
                            .iter()
                            .any(|s| contains_ignore_ascii_case(&m.text, s))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Condition, Meta, Node, NodeClaim, Workload};
    use crate::rules;
    use crate::testing::{check_only, ids, karpenter_node_describe, remediation_text};

    /// An event's age says the NodeClaim existed at least that long, not when it was made.
    #[test]
    fn an_age_from_events_is_a_lower_bound() {
        let text = "LAST SEEN   TYPE     REASON              OBJECT                  MESSAGE\n\
                    3m          Normal   DisruptionBlocked   nodeclaim/batch-9kq2x   Node isn't initialized\n";
        let report = check_only("KW306", text);
        let summary = &report.diagnoses[0].summary;
        assert!(
            summary.ends_with("The NodeClaim was created at least 3m ago."),
            "{summary}"
        );
    }

    /// Before v0.32: a Machine of a Provisioner, whose `spec.startupTaints` is top-level.
    #[test]
    fn a_machine_gets_provisioner_words_and_yaml() {
        let input = "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: default\nspec:\n  startupTaints:\n  - {key: example.com/warmup, effect: NoSchedule}\n  - {key: example.com/other, effect: NoSchedule}\n---\napiVersion: karpenter.sh/v1alpha5\nkind: Machine\nmetadata:\n  name: default-p4x8z\n  labels:\n    karpenter.sh/provisioner-name: default\nstatus:\n  nodeName: ip-10-0-12-34\n  conditions:\n  - {type: MachineInitialized, status: \"False\", reason: StartupTaintsExist, message: 'StartupTaint \"example.com/warmup:NoSchedule\" still exists'}\n";
        let report = check_only("KW306", input);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .starts_with("Machine default-p4x8z (node ip-10-0-12-34) of Provisioner default"),
            "{}",
            d.summary
        );
        let step = d.remediation.last().unwrap();
        assert!(
            step.text.contains("`kubectl edit provisioner default`"),
            "{}",
            step.text
        );
        assert_eq!(
            step.yaml.as_deref(),
            Some("spec:\n  startupTaints:   # example.com/warmup removed\n    - key: example.com/other\n      effect: NoSchedule\n")
        );
    }

    /// A v0.2x inflight-check line: the pool whose taints the plugin tolerates is a Provisioner.
    #[test]
    fn an_inflight_check_speaks_of_the_provisioner() {
        let line = "2023-04-21T06:05:00.044Z\tINFO\tcontroller.inflightchecks\tInflight check failed for node, Expected resource \"nvidia.com/gpu\" didn't register on the node\t{\"commit\": \"beb0a64-dirty\", \"node\": \"ip-172-24-37-21\"}";
        let d = &check_only("KW306", line).diagnoses[0];
        let all: String = d.remediation.iter().map(|r| r.text.clone()).collect();
        assert!(
            all.contains("tolerate the Provisioner's taints") && !all.contains("NodePool"),
            "{all}"
        );
    }

    #[test]
    fn a_node_karpenter_weighed_for_disruption_is_initialized() {
        let describe = |event: &str| karpenter_node_describe("on-demand", event);
        for event in [
            "Normal  DisruptionBlocked  3m (x40 over 3h)     karpenter  Cannot disrupt Node: state node is nominated for a pending pod",
            "Normal  Unconsolidatable   12m (x15 over 3h)    karpenter  Can't replace with a cheaper node",
            "Normal  DisruptionBlocked  3m (x40 over 3h)     karpenter  Node is nominated for a pending pod",
        ] {
            assert_eq!(ids(&check_only("KW306", &describe(event))), [] as [&str; 0], "{event}");
        }
        // Karpenter's own `isn't initialized` keeps the diagnosis.
        let blocked = describe(
            "Normal  DisruptionBlocked  3m (x40 over 3h)     karpenter  Cannot disrupt Node: node isn't initialized",
        );
        assert_eq!(ids(&check_only("KW306", &blocked)), ["KW306"]);
        // Without any disruption event the missing label alone is no evidence: the describe
        // shows no NotReady condition and no taint.
        let quiet = describe("Normal  Starting  3h  kubelet  Starting kubelet.");
        assert_eq!(ids(&check_only("KW306", &quiet)), [] as [&str; 0]);
        // A taint Kubernetes or an agent removes once the node is set up is.
        for taint in [
            "node.kubernetes.io/not-ready:NoSchedule",
            "node.cilium.io/agent-not-ready=true:NoExecute",
        ] {
            let tainted = quiet.replace(
                "Taints:             <none>",
                &format!("Taints:             {taint}"),
            );
            assert_eq!(ids(&check_only("KW306", &tainted)), ["KW306"], "{taint}");
        }
    }

    #[test]
    fn a_launch_time_message_about_a_node_now_initialized_is_history() {
        // The describe of an initialized node or NodeClaim keeps the `Node isn't initialized`
        // of its first minute.
        let node = karpenter_node_describe(
            "on-demand",
            "Normal  DisruptionBlocked  9m    karpenter  Node isn't initialized",
        )
        .replace(
            "Labels:             karpenter.sh/nodepool=general\n",
            "Labels:             karpenter.sh/nodepool=general\n                    karpenter.sh/initialized=true\n",
        );
        assert_eq!(ids(&check_only("KW306", &node)), [] as [&str; 0]);
        let claim = "apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: default-7vq2k
status:
  nodeName: ip-10-0-44-13.us-east-2.compute.internal
  conditions:
  - {type: Initialized, status: \"True\", reason: Initialized}
---
LAST SEEN   TYPE     REASON              OBJECT                                          MESSAGE
10m         Normal   DisruptionBlocked   nodeclaim/default-7vq2k                         Node isn't initialized
10m         Normal   DisruptionBlocked   node/ip-10-0-44-13.us-east-2.compute.internal   Node isn't initialized
";
        assert_eq!(ids(&check_only("KW306", claim)), [] as [&str; 0]);
        // Karpenter's own log line says it initialized.
        let logged = "LAST SEEN   TYPE     REASON              OBJECT                    MESSAGE
10m         Normal   DisruptionBlocked   nodeclaim/default-k2x9p   Node isn't initialized
{\"level\":\"INFO\",\"message\":\"initialized nodeclaim\",\"controller\":\"nodeclaim.lifecycle\",\"NodeClaim\":{\"name\":\"default-k2x9p\"},\"allocatable\":{\"cpu\":\"1930m\"}}
";
        assert_eq!(ids(&check_only("KW306", logged)), [] as [&str; 0]);
        // Another NodeClaim's message still counts.
        let other = format!(
            "{claim}10m         Normal   DisruptionBlocked   nodeclaim/default-k2x9p                         Node isn't initialized\n"
        );
        let report = check_only("KW306", &other);
        assert_eq!(ids(&report), ["KW306"]);
        assert!(
            report.diagnoses[0].summary.contains("default-k2x9p"),
            "{}",
            report.diagnoses[0].summary
        );
    }

    #[test]
    fn node_lifecycle_events_are_not_the_initialized_condition() {
        // Every node boots with the kubelet's NodeNotReady; the node controller says it when a
        // node stops answering (one being terminated). Neither is Initialized's NodeNotReady.
        let text = "NAMESPACE   LAST SEEN   TYPE     REASON         OBJECT                           MESSAGE
default     14m         Normal   NodeNotReady   node/ip-10-0-77-3.ec2.internal   Node ip-10-0-77-3.ec2.internal status is now: NodeNotReady
default     13m         Normal   NodeReady      node/ip-10-0-77-3.ec2.internal   Node ip-10-0-77-3.ec2.internal status is now: NodeReady
default     2m          Normal   NodeNotReady   node/ip-10-0-88-4.ec2.internal   Node ip-10-0-88-4.ec2.internal status is now: NodeNotReady
";
        assert_eq!(ids(&check_only("KW306", text)), [] as [&str; 0]);
        // Karpenter's own condition text still counts, in an event too.
        let transition = "LAST SEEN   TYPE     REASON        OBJECT                    MESSAGE
2m          Normal   Initialized   nodeclaim/default-k2x9p   Status condition transitioned, Type: Initialized, Status: True -> Unknown, Reason: NodeNotReady, Message: Node status is NotReady
";
        assert_eq!(ids(&check_only("KW306", transition)), ["KW306"]);
    }

    #[test]
    fn every_form() {
        for text in [
            "    message: Resource \"nvidia.com/gpu\" was requested but not registered",
            "    Message:               Resource \"vpc.amazonaws.com/pod-eni\" was requested but not registered",
            "    message: StartupTaint \"node.cilium.io/agent-not-ready=true:NoExecute\" still exists",
            "    message: KnownEphemeralTaint \"node.kubernetes.io/not-ready:NoSchedule\" still exists",
            "    message: Node status is NotReady",
            "2023-04-21T06:05:00.044Z\tINFO\tcontroller.inflightchecks\tInflight check failed for node, Expected resource \"nvidia.com/gpu\" didn't register on the node\t{\"commit\": \"beb0a64-dirty\", \"node\": \"ip-172-24-37-21.us-west-2.compute.internal\"}",
            "check failed, expected resource aws.amazon.com/neuron didn't register on the node",
            "  Normal  DisruptionBlocked        9m    karpenter              Node isn't initialized",
            "Cannot disrupt Node: state node isn't initialized",
            "    message: DRA driver \"gpu.example.com\" has not published a complete resource pool",
            // A `jq` projection of the conditions, without `kind`: the JSON-escaped quotes.
            "      \"message\": \"StartupTaint \\\"ebs.csi.aws.com/agent-not-ready=:NoExecute\\\" still exists\",",
        ] {
            assert_eq!(ids(&check_only("KW306", text)), ["KW306"], "{text}");
        }
    }

    #[test]
    fn names_the_agent_for_taints_and_resources() {
        let gpu = check_only(
            "KW306",
            "    message: Resource \"nvidia.com/gpu\" was requested but not registered",
        );
        assert!(
            gpu.diagnoses[0].summary.contains("NVIDIA device plugin"),
            "{}",
            gpu.diagnoses[0].summary
        );
        assert!(
            gpu.diagnoses[0].summary.contains("does not show whether"),
            "{}",
            gpu.diagnoses[0].summary
        );
        let cilium = check_only(
            "KW306",
            "    message: StartupTaint \"node.cilium.io/agent-not-ready=true:NoExecute\" still exists",
        );
        assert!(
            cilium.diagnoses[0].summary.contains("Cilium"),
            "{}",
            cilium.diagnoses[0].summary
        );
        let ebs = check_only(
            "KW306",
            "    message: StartupTaint \"ebs.csi.aws.com/agent-not-ready:NoExecute\" still exists\nkube-system   ebs-csi-node   3   3   3   3   3   kubernetes.io/os=linux   20d",
        );
        assert!(
            ebs.diagnoses[0]
                .summary
                .contains("its DaemonSet ebs-csi-node is in the input"),
            "{}",
            ebs.diagnoses[0].summary
        );
        let unknown = check_only(
            "KW306",
            "    message: StartupTaint \"example.com/warming:NoSchedule\" still exists",
        );
        assert!(
            unknown.diagnoses[0]
                .summary
                .contains("no agent this tool knows"),
            "{}",
            unknown.diagnoses[0].summary
        );
        let neuron = check_only(
            "KW306",
            "check failed, expected resource aws.amazon.com/neuron didn't register on the node",
        );
        assert!(neuron.diagnoses[0].summary.contains("Neuron device plugin"));
    }

    #[test]
    fn typed_nodeclaim_and_daemonsets() {
        let mut facts = Facts::default();
        facts.nodeclaims.push(NodeClaim {
            meta: Meta {
                name: "gpu-7c2lq".into(),
                ..Meta::default()
            },
            nodepool: Some("gpu".into()),
            node_name: Some("ip-10-0-12-34.ec2.internal".into()),
            conditions: vec![Condition {
                condition_type: "Initialized".into(),
                status: "Unknown".into(),
                reason: Some("ResourceNotRegistered".into()),
                message: Some(
                    "Resource \"nvidia.com/gpu\" was requested but not registered".into(),
                ),
                evidence: None,
            }],
            ..NodeClaim::default()
        });
        facts.workloads.push(Workload {
            kind: "DaemonSet".into(),
            meta: Meta {
                name: "kube-proxy".into(),
                ..Meta::default()
            },
            ..Workload::default()
        });
        let d = (rules::find("KW306").unwrap().check)(&facts);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].summary.starts_with(
                "NodeClaim gpu-7c2lq (node ip-10-0-12-34.ec2.internal) of NodePool gpu"
            ),
            "{}",
            d[0].summary
        );
        assert!(
            d[0].summary.contains("not among the 1 DaemonSets"),
            "{}",
            d[0].summary
        );
        assert!(d[0].remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("helm upgrade --install"));
    }

    #[test]
    fn node_without_initialized_label() {
        let mut facts = Facts::default();
        let mut labels = std::collections::BTreeMap::new();
        labels.insert("karpenter.sh/nodepool".to_string(), "default".to_string());
        labels.insert("karpenter.sh/registered".to_string(), "true".to_string());
        facts.nodes.push(Node {
            meta: Meta {
                name: "ip-10-0-71-41.ec2.internal".into(),
                labels,
                ..Meta::default()
            },
            conditions: vec![Condition {
                condition_type: "Ready".into(),
                status: "False".into(),
                reason: Some("KubeletNotReady".into()),
                message: Some("container runtime network not ready".into()),
                evidence: None,
            }],
            ..Node::default()
        });
        let d = (rules::find("KW306").unwrap().check)(&facts);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].summary
                .contains("Node ip-10-0-71-41.ec2.internal of NodePool default"),
            "{}",
            d[0].summary
        );
        assert!(d[0].summary.contains("NotReady"), "{}", d[0].summary);
        // Karpenter disrupting the node says it was initialized: the label was cut from the paste.
        for (origin, text, reason, object) in [
            (
                MessageOrigin::Event,
                "Disrupting Node: Drift",
                Some("DisruptionTerminating"),
                true,
            ),
            (
                MessageOrigin::KarpenterLog,
                "disrupting via consolidation delete, terminating 1 nodes (2 pods) ip-10-0-71-41.ec2.internal/m5.large/on-demand",
                None,
                false,
            ),
        ] {
            let mut facts = facts.clone();
            facts.messages.push(crate::facts::Message {
                origin,
                text: text.into(),
                reason: reason.map(str::to_string),
                object: object.then(|| ObjectRef::new("Node", None, "ip-10-0-71-41.ec2.internal")),
                ..Default::default()
            });
            assert!((rules::find("KW306").unwrap().check)(&facts).is_empty(), "{text}");
        }
    }

    /// A Provisioner's node that never got `karpenter.sh/initialized`: before v0.28 there is
    /// no Machine to read, and when the input does not say which side of v0.28 it is from, the
    /// Machine step says that only its Node part answers on an older cluster.
    #[test]
    fn a_provisioner_node_before_machines_reads_the_node() {
        let facts_for = |version: Option<&str>| {
            let mut facts = Facts {
                karpenter_version: version.map(str::to_string),
                ..Facts::default()
            };
            let mut labels = std::collections::BTreeMap::new();
            labels.insert(
                "karpenter.sh/provisioner-name".to_string(),
                "default".to_string(),
            );
            labels.insert("karpenter.sh/registered".to_string(), "true".to_string());
            facts.nodes.push(Node {
                meta: Meta {
                    name: "ip-10-0-71-41.ec2.internal".into(),
                    labels,
                    ..Meta::default()
                },
                conditions: vec![Condition {
                    condition_type: "Ready".into(),
                    status: "True".into(),
                    reason: Some("KubeletReady".into()),
                    message: None,
                    evidence: None,
                }],
                ..Node::default()
            });
            // The label alone is no evidence; Karpenter saying so is.
            facts.messages.push(crate::facts::Message {
                text: "Cannot disrupt Node: node isn't initialized".into(),
                origin: crate::facts::MessageOrigin::Event,
                object: Some(crate::facts::ObjectRef::new(
                    "Node",
                    None,
                    "ip-10-0-71-41.ec2.internal",
                )),
                ..Default::default()
            });
            facts
        };
        let step = |version: Option<&str>| {
            let d = (rules::find("KW306").unwrap().check)(&facts_for(version));
            assert_eq!(d.len(), 1, "{version:?}");
            d[0].remediation.last().unwrap().clone()
        };
        let old = step(Some("0.27.3"));
        let cmd = old.command.clone().unwrap_or_default();
        assert!(
            old.text
                .starts_with("Before v0.28 Karpenter had no Machine")
                && !cmd.contains("machine")
                && cmd.contains("kubectl get node ip-10-0-71-41.ec2.internal")
                && cmd.contains("grep 'ip-10-0-71-41.ec2.internal'"),
            "{old:?}"
        );
        let unknown = step(None);
        assert!(
            unknown.text.contains("Machines exist from v0.28")
                && unknown
                    .command
                    .as_deref()
                    .is_some_and(|c| c.starts_with("kubectl get machines.karpenter.sh -o wide;")),
            "{unknown:?}"
        );
        let machine_era = step(Some("0.30.1"));
        assert!(
            !machine_era.text.contains("v0.28")
                && machine_era
                    .command
                    .as_deref()
                    .is_some_and(|c| c.starts_with("kubectl get machines.karpenter.sh -o wide;")),
            "{machine_era:?}"
        );
    }

    #[test]
    fn a_get_nodes_row_shows_only_the_labels_asked_for() {
        let table = "$ kubectl get nodes -L karpenter.sh/nodepool\nNAME                        STATUS   ROLES    AGE   VERSION               NODEPOOL\nip-10-0-44-7.ec2.internal   Ready    <none>   7m    v1.31.4-eks-aeac579   burst\n";
        assert!(ids(&check_only("KW306", table)).is_empty());
    }

    #[test]
    fn pod_eni_reads_aws_node_env() {
        let report = check_only(
            "KW306",
            "    Message:               Resource \"vpc.amazonaws.com/pod-eni\" was requested but not registered\n      ENABLE_POD_ENI:  false",
        );
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("ENABLE_POD_ENI=false"), "{}", d.summary);
        assert!(!d.related.contains(&"KW210"));
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("kubectl set env daemonset aws-node -n kube-system ENABLE_POD_ENI=true")
        );
    }

    /// pod-eni not registered: with aws-node's ENABLE_POD_ENI unknown, checking it comes
    /// before turning it on; shown true, the advice is the trunk-ENI race (KW210), never
    /// to set it again.
    #[test]
    fn pod_eni_checks_before_it_sets() {
        let msg = "    Message:               Resource \"vpc.amazonaws.com/pod-eni\" was requested but not registered\n    Reason:                ResourceNotRegistered\n    Status:                Unknown\n    Type:                  Initialized";
        let commands = |text: &str| -> Vec<String> {
            check_only("KW306", text).diagnoses[0]
                .remediation
                .iter()
                .map(|r| format!("{} | {}", r.text, r.command.as_deref().unwrap_or("")))
                .collect()
        };
        let unknown = commands(msg);
        assert!(
            unknown[0].starts_with("First check whether Security Groups for Pods is on")
                && unknown[0].contains("KW210")
                && unknown[0].contains("get daemonset aws-node -o jsonpath=")
                && unknown[0].contains("ENABLE_POD_ENI"),
            "{unknown:?}"
        );
        assert!(
            unknown[1].starts_with("Only if it prints nothing or false")
                && unknown[1].ends_with("ENABLE_POD_ENI=true"),
            "{unknown:?}"
        );
        let on = commands(&format!(
            "{msg}\n      ENABLE_POD_ENI:                         true"
        ));
        assert!(on.iter().all(|s| !s.contains("set env")), "{on:?}");
        assert!(
            on[0].contains("already on") && on[0].contains("has-trunk-attached"),
            "{on:?}"
        );
    }

    #[test]
    fn an_accelerated_type_without_its_resource_names_it() {
        let node = |itype: &str, extra: &str| {
            format!(
                "Name:               ip-10-0-1-1.ec2.internal
Labels:             karpenter.sh/nodepool=gpu
                    karpenter.sh/registered=true
                    node.kubernetes.io/instance-type={itype}
Taints:             <none>
Allocatable:
  cpu:                3920m
{extra}  pods:               58
Events:
  Type    Reason             Age   From       Message
  ----    ------             ----  ----       -------
  Normal  DisruptionBlocked  2m    karpenter  Node isn't initialized
"
            )
        };
        let summary = |text: &str| check_only("KW306", text).diagnoses[0].summary.clone();
        assert!(summary(&node("g5.xlarge", "")).contains("has no nvidia.com/gpu"));
        assert!(summary(&node("inf2.xlarge", "")).contains("has no aws.amazon.com/neuron"));
        for (itype, extra) in [
            ("g5.xlarge", "  nvidia.com/gpu:     1\n"),
            ("inf2.xlarge", "  aws.amazon.com/neuron: 1\n"),
            ("m5.xlarge", ""),
        ] {
            let s = summary(&node(itype, extra));
            assert!(
                s.contains("does not say which one is missing"),
                "{itype}: {s}"
            );
        }
    }

    #[test]
    fn near_misses() {
        for text in [
            "    message: Node not registered with cluster\n    reason: NodeNotFound",
            "    message: object is awaiting reconciliation\n    reason: AwaitingReconciliation",
            r#"{"level":"INFO","message":"initialized nodeclaim","NodeClaim":{"name":"a"},"allocatable":{"vpc.amazonaws.com/pod-eni":"8"}}"#,
            "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
        ] {
            assert!(ids(&check_only("KW306", text)).is_empty(), "{text}");
        }
    }

    /// A NodeClaim describe grepped down to its conditions: the one not-initialized node of its
    /// NodePool the input describes is its node; two such nodes leave the placeholder.
    #[test]
    fn a_cut_nodeclaim_describe_reads_the_one_node_of_its_nodepool() {
        let claim = "$ kubectl describe nodeclaim gpu-x8k2q | grep -A6 Conditions\n  Conditions:\n    Last Transition Time:  2025-03-11T08:14:52Z\n    Message:               Resource \"nvidia.com/gpu\" was requested but not registered\n    Reason:                ResourceNotRegistered\n    Status:                False\n    Type:                  Initialized\n";
        let node = |name: &str, pool: &str| {
            format!("\n$ kubectl describe node {name}\nName:               {name}\nRoles:              <none>\nLabels:             karpenter.sh/nodepool={pool}\n                    node.kubernetes.io/instance-type=g5.2xlarge\nTaints:             nvidia.com/gpu=true:NoSchedule\nUnschedulable:      false\n")
        };
        let fix = |text: &str| remediation_text(&check_only("KW306", text).diagnoses[0]);
        let one = format!(
            "{claim}{}{}",
            node("ip-10-0-1-1.ec2.internal", "gpu"),
            node("ip-10-0-2-2.ec2.internal", "web")
        );
        assert!(
            fix(&one).contains("kubectl get node ip-10-0-1-1.ec2.internal"),
            "{}",
            fix(&one)
        );
        let two = format!(
            "{claim}{}{}",
            node("ip-10-0-1-1.ec2.internal", "gpu"),
            node("ip-10-0-3-3.ec2.internal", "gpu")
        );
        assert!(fix(&two).contains("<node-name>"), "{}", fix(&two));
    }

    #[test]
    fn several_nodeclaims_take_a_plural_verb() {
        assert_eq!(
            plural_verb(
                "NodeClaims a and b is not initialized: x.".to_string(),
                "NodeClaims a and b"
            ),
            "NodeClaims a and b are not initialized: x."
        );
        assert_eq!(
            plural_verb(
                "NodeClaims a and b registered but is not initialized: y.".to_string(),
                "NodeClaims a and b"
            ),
            "NodeClaims a and b registered but are not initialized: y."
        );
        assert_eq!(plural_verb("Other.".to_string(), "NodeClaims a"), "Other.");
    }
}
