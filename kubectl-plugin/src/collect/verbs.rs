//! What each verb reads, and in which wave.

use std::collections::BTreeSet;

use futures::future::join_all;
use serde_json::Value;

use super::api::{
    Call, DAEMONSETS, DEPLOYMENTS, EC2NODECLASSES, EVENTS, JOBS, NODECLAIMS, NODEPOOLS, NODES,
    PDBS, PODS, PVCS, PVS, REPLICASETS, STATEFULSETS, STORAGECLASSES,
};
use super::fetch::Failure;
use super::{karpenter, CollectError, Cx, Subject};

/// `POD`: the pod and its events, then its node, owner chain, volumes and nominated NodeClaim.
pub async fn pod(cx: &Cx, namespace: &str, name: &str) -> Result<(), CollectError> {
    let subject = async {
        let pod_call = Call::get("the pod", &PODS, Some(namespace), name);
        let events_call = Call::list("the pod's events", &EVENTS, Some(namespace)).fields(format!(
            "involvedObject.kind=Pod,involvedObject.name={name}"
        ));
        let (pod, events) = futures::join!(cx.read(&pod_call), cx.read_or_note(&events_call));
        let pod = subject_object(cx, &pod_call, pod).await?;
        let nominated = nominations(&events);
        let mut nodes: BTreeSet<String> = nominated.nodes;
        for pointer in ["/spec/nodeName", "/status/nominatedNodeName"] {
            if let Some(node) = text(&pod, pointer) {
                nodes.insert(node);
            }
        }
        // The pod's sandbox fails in the VPC CNI (`failed to assign an IP address`): the log of
        // the aws-node pod on its node says why (subnet out of addresses, a denied ENI call).
        let cni_log = async {
            match text(&pod, "/spec/nodeName") {
                Some(node) if cni_sandbox_failure(&events) => node_cni_log(cx, &node).await,
                _ => {}
            }
        };
        futures::join!(
            join_all(nodes.iter().map(|node| node_and_events(cx, node))),
            join_all(
                nominated
                    .nodeclaims
                    .iter()
                    .map(|claim| cx.read_owned(nodeclaim_events(claim)))
            ),
            owner_chain(cx, namespace, &pod),
            volumes(cx, namespace, &pod),
            cni_log,
        );
        Ok(())
    };
    alongside_karpenter(cx, true, subject).await
}

/// Whether the pod's events show its sandbox failing in the VPC CNI.
fn cni_sandbox_failure(events: &[Value]) -> bool {
    events.iter().any(|event| {
        text(event, "/reason").as_deref() == Some("FailedCreatePodSandBox")
            && text(event, "/message").is_some_and(|m| m.contains("aws-cni"))
    })
}

/// The aws-node pod on `node` (label and field selector) and its aws-node container's log.
async fn node_cni_log(cx: &Cx, node: &str) {
    let call = Call::list("the VPC CNI pod on the node", &PODS, None)
        .fields(format!("spec.nodeName={node}"))
        .labels(CNI_SELECTOR);
    let pods = cx.read_or_note(&call).await;
    if let Some(pod) = pods.first() {
        cni_container_log(cx, pod).await;
    }
}

/// The `aws-node` container's log of the aws-node `pod`, and its previous instance's when
/// it restarted: ipamd that cannot reach the EC2 API exits, and says why before it does.
async fn cni_container_log(cx: &Cx, pod: &Value) {
    let Some(name) = text(pod, "/metadata/name") else {
        return;
    };
    let namespace = text(pod, "/metadata/namespace").unwrap_or_else(|| "kube-system".into());
    super::logs::collect(
        cx,
        super::logs::ContainerLog {
            source: "the VPC CNI's log",
            namespace: &namespace,
            pod: &name,
            container: CNI_CONTAINER,
            previous: super::logs::previous_instance(pod, CNI_CONTAINER),
        },
    )
    .await;
}

/// `node NODE`: the node, its events, its pods (field selector) and the PDBs, then its
/// NodeClaim's events.
pub async fn node(cx: &Cx, name: &str) -> Result<(), CollectError> {
    let subject = async {
        let node_call = Call::get("the node", &NODES, None, name);
        let claims_call = Call::list("the NodeClaims", &NODECLAIMS, None);
        let pods_call =
            Call::list("the pods on the node", &PODS, None).fields(format!("spec.nodeName={name}"));
        let (node, _, pods, claims) = futures::join!(
            cx.read(&node_call),
            cx.read_owned(node_events(name)),
            cx.read_or_note(&pods_call),
            cx.read_or_note(&claims_call),
        );
        // The VPC CNI's pod on the node, not ready: its log says why the network is not up
        // (KW305), which the node's condition does not.
        let cni_log = async {
            if let Some(pod) = unready_cni_pod(&pods) {
                cni_container_log(cx, pod).await;
            }
        };
        let node = subject_object(cx, &node_call, node).await?;
        let provider_id = text(&node, "/spec/providerID");
        let own_claims: Vec<String> = claims
            .iter()
            .filter(|claim| {
                text(claim, "/status/nodeName").as_deref() == Some(name)
                    || (provider_id.is_some() && text(claim, "/status/providerID") == provider_id)
            })
            .filter_map(|claim| text(claim, "/metadata/name"))
            .collect();
        futures::join!(
            join_all(
                own_claims
                    .iter()
                    .map(|claim| cx.read_owned(nodeclaim_events(claim))),
            ),
            cni_log,
        );
        Ok(())
    };
    alongside_karpenter(cx, false, subject).await
}

/// The VPC CNI's container in its `aws-node` DaemonSet pods, and their label.
const CNI_CONTAINER: &str = "aws-node";
const CNI_SELECTOR: &str = "k8s-app=aws-node";

/// The `aws-node` pod among `pods` whose `aws-node` container is not ready.
fn unready_cni_pod(pods: &[Value]) -> Option<&Value> {
    pods.iter().find(|pod| {
        let Some(name) = text(pod, "/metadata/name") else {
            return false;
        };
        if !name.starts_with("aws-node-") || name.starts_with("aws-node-termination-handler") {
            return false;
        }
        let ready = pod
            .pointer("/status/containerStatuses")
            .and_then(Value::as_array)
            .and_then(|statuses| {
                statuses
                    .iter()
                    .find(|s| s.get("name").and_then(Value::as_str) == Some(CNI_CONTAINER))
            })
            .and_then(|s| s.get("ready"))
            .and_then(Value::as_bool);
        ready != Some(true)
    })
}

/// `nodeclaim NAME`: the NodeClaim and its events, then its node and the node's events.
pub async fn nodeclaim(cx: &Cx, name: &str) -> Result<(), CollectError> {
    let subject = async {
        let claim_call = Call::get("the NodeClaim", &NODECLAIMS, None, name);
        let (claim, _) =
            futures::join!(cx.read(&claim_call), cx.read_owned(nodeclaim_events(name)));
        let claim = subject_object(cx, &claim_call, claim).await?;
        if let Some(node) = text(&claim, "/status/nodeName") {
            node_and_events(cx, &node).await;
        }
        Ok(())
    };
    alongside_karpenter(cx, false, subject).await
}

/// `pending`: the Pending pods (field selector, paginated), their warning and `Nominated`
/// events, and the Karpenter side. One wave, plus the logs. Returns the pods found.
pub async fn pending(cx: &Cx, namespace: Option<&str>) -> Result<Vec<Subject>, CollectError> {
    let pods_call = Call::list("the Pending pods", &PODS, namespace).fields("status.phase=Pending");
    let warnings = Call::list("the warning events of pods", &EVENTS, namespace)
        .fields("involvedObject.kind=Pod,type=Warning");
    let nominated = Call::list("the Nominated events of pods", &EVENTS, namespace)
        .fields("involvedObject.kind=Pod,reason=Nominated");
    let (pods, _, _, _, _) = futures::join!(
        cx.read(&pods_call),
        cx.read_or_note(&warnings),
        cx.read_or_note(&nominated),
        karpenter_objects(cx, true),
        karpenter::collect(cx),
    );
    match pods {
        Ok(pods) => Ok(pods
            .iter()
            .filter_map(|pod| {
                Some(Subject {
                    kind: "Pod",
                    namespace: text(pod, "/metadata/namespace"),
                    name: text(pod, "/metadata/name")?,
                })
            })
            .collect()),
        Err(failure) if failure.is_unreachable() => Err(unreachable(cx, &failure)),
        Err(failure) => {
            cx.note_failure(&pods_call, &failure).await;
            Ok(Vec::new())
        }
    }
}

/// The subject's own object from its read; when the read failed without stopping collection,
/// `Null` (and a missing fact).
async fn subject_object(
    cx: &Cx,
    call: &Call,
    read: Result<Vec<Value>, Failure>,
) -> Result<Value, CollectError> {
    match read {
        Ok(mut items) => Ok(items.pop().unwrap_or(Value::Null)),
        Err(failure) => {
            subject_failure(cx, call, &failure).await?;
            Ok(Value::Null)
        }
    }
}

/// Runs a verb's subject reads beside the cluster-wide Karpenter reads, all starting at once.
async fn alongside_karpenter(
    cx: &Cx,
    with_nodeclaims: bool,
    subject: impl std::future::Future<Output = Result<(), CollectError>>,
) -> Result<(), CollectError> {
    let (result, _, _) = futures::join!(
        subject,
        karpenter_objects(cx, with_nodeclaims),
        karpenter::collect(cx)
    );
    result
}

/// The subject's own read failed: a 404 stops with the API's message (exit 2), an unreachable
/// cluster with one line (exit 3); anything else (403, timeout...) is a missing fact and the
/// rest is still analysed.
async fn subject_failure(cx: &Cx, call: &Call, failure: &Failure) -> Result<(), CollectError> {
    if failure.is_unreachable() {
        return Err(unreachable(cx, failure));
    }
    if let Failure::Api {
        code: 404, message, ..
    } = failure
    {
        if call.resource.is_karpenter_crd() {
            let status = cx.karpenter_group_status(call.resource.group).await;
            if !status.contains(&format!("{}/v1 is served", call.resource.group)) {
                return Err(CollectError::NotFound(format!(
                    "Error from server (NotFound): {}: {status}",
                    call.resource.kubectl_name()
                )));
            }
        }
        return Err(CollectError::NotFound(format!(
            "Error from server (NotFound): {message}"
        )));
    }
    cx.note_failure(call, failure).await;
    Ok(())
}

fn unreachable(cx: &Cx, failure: &Failure) -> CollectError {
    let verb = match failure {
        Failure::Auth(_) | Failure::Api { code: 401, .. } => "cannot authenticate to",
        _ => "cannot reach",
    };
    CollectError::Unreachable(super::client::one_line(&format!(
        "{verb} the cluster at {}: {}",
        cx.server,
        failure.describe()
    )))
}

/// NodeClaims (all: they are few), NodePools, EC2NodeClasses, the events of NodePools and
/// EC2NodeClasses, and the PodDisruptionBudgets of every namespace: they are few too, the
/// pods in the documents (Karpenter's own included) live in several namespaces, and an empty
/// list says nothing of the namespace it was read from.
async fn karpenter_objects(cx: &Cx, with_nodeclaims: bool) {
    let mut calls = vec![
        Call::list("the NodePools", &NODEPOOLS, None),
        Call::list("the EC2NodeClasses", &EC2NODECLASSES, None),
        Call::list("the events of NodePools", &EVENTS, None).fields("involvedObject.kind=NodePool"),
        Call::list("the events of EC2NodeClasses", &EVENTS, None)
            .fields("involvedObject.kind=EC2NodeClass"),
        Call::list("the PodDisruptionBudgets", &PDBS, None),
    ];
    if with_nodeclaims {
        calls.insert(0, Call::list("the NodeClaims", &NODECLAIMS, None));
    }
    join_all(calls.iter().map(|call| cx.read_or_note(call))).await;
}

fn node_events(node: &str) -> Call {
    Call::list(format!("the events of node {node}"), &EVENTS, None).fields(format!(
        "involvedObject.kind=Node,involvedObject.name={node}"
    ))
}

fn nodeclaim_events(claim: &str) -> Call {
    Call::list(format!("the events of NodeClaim {claim}"), &EVENTS, None).fields(format!(
        "involvedObject.kind=NodeClaim,involvedObject.name={claim}"
    ))
}

async fn node_and_events(cx: &Cx, node: &str) {
    futures::join!(
        cx.read_owned(Call::get(format!("node {node}"), &NODES, None, node)),
        cx.read_owned(node_events(node)),
    );
}

/// The pod's controller up to the Deployment/StatefulSet that sets its replicas.
async fn owner_chain(cx: &Cx, namespace: &str, pod: &Value) {
    let Some((kind, name)) = controller(pod) else {
        return;
    };
    let resource = match kind.as_str() {
        "ReplicaSet" => &REPLICASETS,
        "StatefulSet" => &STATEFULSETS,
        "DaemonSet" => &DAEMONSETS,
        "Job" => &JOBS,
        _ => return,
    };
    let owner = cx
        .read_or_note(&Call::get(
            format!("the pod's {kind} {name}"),
            resource,
            Some(namespace),
            &name,
        ))
        .await;
    if kind == "ReplicaSet" {
        if let Some(("Deployment", deployment)) = owner
            .first()
            .and_then(controller)
            .as_ref()
            .map(|(k, n)| (k.as_str(), n))
        {
            cx.read_or_note(&Call::get(
                format!("the pod's Deployment {deployment}"),
                &DEPLOYMENTS,
                Some(namespace),
                deployment,
            ))
            .await;
        }
    }
}

/// The PVCs the pod mounts (claims and generic ephemeral volumes), then their PVs and
/// StorageClasses, each read once.
async fn volumes(cx: &Cx, namespace: &str, pod: &Value) {
    let pod_name = text(pod, "/metadata/name").unwrap_or_default();
    let mut claims = BTreeSet::new();
    for volume in pod
        .pointer("/spec/volumes")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
    {
        if let Some(claim) = text(volume, "/persistentVolumeClaim/claimName") {
            claims.insert(claim);
        } else if volume.get("ephemeral").is_some() {
            if let Some(volume_name) = text(volume, "/name") {
                claims.insert(format!("{pod_name}-{volume_name}"));
            }
        }
    }
    let pvcs = join_all(claims.iter().map(|claim| {
        cx.read_owned(Call::get(
            format!("the PersistentVolumeClaim {claim}"),
            &PVCS,
            Some(namespace),
            claim,
        ))
    }))
    .await;
    let mut volumes = BTreeSet::new();
    let mut classes = BTreeSet::new();
    for pvc in pvcs.iter().flatten() {
        volumes.extend(text(pvc, "/spec/volumeName"));
        classes.extend(text(pvc, "/spec/storageClassName"));
    }
    futures::join!(
        join_all(volumes.iter().map(|pv| cx.read_owned(Call::get(
            format!("the PersistentVolume {pv}"),
            &PVS,
            None,
            pv
        )))),
        join_all(classes.iter().map(|sc| {
            cx.read_owned(Call::get(
                format!("the StorageClass {sc}"),
                &STORAGECLASSES,
                None,
                sc,
            ))
        })),
    );
}

/// The controller owner reference: (kind, name).
fn controller(object: &Value) -> Option<(String, String)> {
    let owners = object.pointer("/metadata/ownerReferences")?.as_array()?;
    let owner = owners
        .iter()
        .find(|o| o.get("controller").and_then(|c| c.as_bool()) == Some(true))
        .or_else(|| owners.first())?;
    Some((text(owner, "/kind")?, text(owner, "/name")?))
}

/// NodeClaims and nodes named by Karpenter's `Nominated` events: `Pod should schedule on:
/// nodeclaim/<name>[, node/<node>]`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Nominations {
    nodeclaims: BTreeSet<String>,
    nodes: BTreeSet<String>,
}

fn nominations(events: &[Value]) -> Nominations {
    let mut found = Nominations::default();
    for event in events {
        if text(event, "/reason").as_deref() != Some("Nominated") {
            continue;
        }
        let message = text(event, "/message").unwrap_or_default();
        let Some((_, targets)) = message.split_once(':') else {
            continue;
        };
        for target in targets.split(',').map(str::trim) {
            if let Some(claim) = target.strip_prefix("nodeclaim/") {
                found.nodeclaims.insert(claim.to_string());
            } else if let Some(node) = target.strip_prefix("node/") {
                found.nodes.insert(node.to_string());
            }
        }
    }
    found
}

fn text(value: &Value, pointer: &str) -> Option<String> {
    value
        .pointer(pointer)
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nominated_events_name_the_nodeclaim_and_node() {
        let events: Vec<Value> = serde_json::from_str(
            r#"[{"reason":"Nominated","message":"Pod should schedule on: nodeclaim/default-cvkcv, node/ip-10-0-71-41.ec2.internal"},
                {"reason":"Nominated","message":"Pod should schedule on: nodeclaim/render-8fw6c"},
                {"reason":"FailedScheduling","message":"nodeclaim/ignored: no"}]"#,
        )
        .unwrap();
        let found = nominations(&events);
        assert_eq!(
            found.nodeclaims.into_iter().collect::<Vec<_>>(),
            ["default-cvkcv", "render-8fw6c"]
        );
        assert_eq!(
            found.nodes.into_iter().collect::<Vec<_>>(),
            ["ip-10-0-71-41.ec2.internal"]
        );
    }

    #[test]
    fn controller_owner_is_preferred() {
        let pod: Value = serde_json::from_str(
            r#"{"metadata":{"ownerReferences":[{"kind":"Node","name":"n"},{"kind":"ReplicaSet","name":"web-7d9","controller":true}]}}"#,
        )
        .unwrap();
        assert_eq!(
            controller(&pod),
            Some(("ReplicaSet".into(), "web-7d9".into()))
        );
        assert_eq!(controller(&Value::Null), None);
    }
}
