//! Builders for the API objects of fake clusters, shaped as the API server returns them (uids,
//! owner references, status conditions, events with their involved object and source).

use std::path::Path;

use serde_json::{json, Value};

use super::LogLine;

/// A stable fake uid for an object.
pub fn uid(kind: &str, name: &str) -> String {
    let mut hash: u64 = 0xcbf29ce484222325;
    for byte in kind.bytes().chain(name.bytes()) {
        hash = (hash ^ byte as u64).wrapping_mul(0x100000001b3);
    }
    format!(
        "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
        hash >> 32,
        (hash >> 16) & 0xffff,
        hash & 0xfff,
        (hash >> 20) & 0xfff,
        hash & 0xffff_ffff_ffff
    )
}

/// `metadata` with name, namespace, uid and a creation time.
pub fn metadata(kind: &str, namespace: Option<&str>, name: &str) -> Value {
    let mut meta = json!({
        "name": name,
        "uid": uid(kind, name),
        "resourceVersion": "4711",
        "creationTimestamp": "2025-09-16T13:40:00Z",
    });
    if let Some(ns) = namespace {
        meta["namespace"] = json!(ns);
    }
    meta
}

/// Sets `value` at a `/`-separated pointer, creating objects on the way.
pub fn set(object: &mut Value, pointer: &str, value: Value) {
    let mut current = object;
    let parts: Vec<&str> = pointer.trim_start_matches('/').split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        if i == parts.len() - 1 {
            current[*part] = value;
            return;
        }
        if current.get(*part).is_none() {
            current[*part] = json!({});
        }
        current = current.get_mut(*part).expect("just inserted");
    }
}

/// An owner reference with `controller: true`.
pub fn owner(api_version: &str, kind: &str, name: &str) -> Value {
    json!([{"apiVersion": api_version, "kind": kind, "name": name, "uid": uid(kind, name), "controller": true, "blockOwnerDeletion": true}])
}

/// A Pending pod (PodScheduled=False Unschedulable) with one container requesting `cpu` and
/// `memory`.
pub fn pending_pod(namespace: &str, name: &str, cpu: &str, memory: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata("Pod", Some(namespace), name),
        "spec": {
            "containers": [{"name": "main", "image": "registry.example.com/app:1.4.2",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
            "schedulerName": "default-scheduler",
            "restartPolicy": "Always",
            "serviceAccountName": "default",
            "tolerations": [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            ]
        },
        "status": {
            "phase": "Pending",
            "qosClass": "Burstable",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                            "lastTransitionTime": "2025-09-16T13:41:02Z",
                            "message": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."}]
        }
    })
}

/// A Running pod on `node`.
pub fn running_pod(namespace: &str, name: &str, node: &str, labels: Value) -> Value {
    let mut pod = pending_pod(namespace, name, "100m", "128Mi");
    pod["metadata"]["labels"] = labels;
    pod["spec"]["nodeName"] = json!(node);
    pod["status"] = json!({
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
        "containerStatuses": [{"name": "main", "ready": true, "restartCount": 0, "state": {"running": {"startedAt": "2025-09-16T13:42:00Z"}}}]
    });
    pod
}

/// A core/v1 Event about `(kind, namespace, name)`, from `component`.
#[allow(clippy::too_many_arguments)]
pub fn event(
    involved: (&str, Option<&str>, &str),
    event_type: &str,
    reason: &str,
    component: &str,
    message: &str,
    count: u32,
) -> Value {
    let (kind, namespace, name) = involved;
    let api_version = match kind {
        "NodeClaim" | "NodePool" => "karpenter.sh/v1",
        "EC2NodeClass" => "karpenter.k8s.aws/v1",
        _ => "v1",
    };
    let event_namespace = namespace.unwrap_or("default");
    let event_name = format!(
        "{name}.{:x}",
        uid(reason, message).len() * 7919 + message.len()
    );
    let mut involved_object =
        json!({"kind": kind, "name": name, "uid": uid(kind, name), "apiVersion": api_version});
    if let Some(ns) = namespace {
        involved_object["namespace"] = json!(ns);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": metadata("Event", Some(event_namespace), &event_name),
        "involvedObject": involved_object,
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": "2025-09-16T13:41:02Z",
        "lastTimestamp": "2025-09-16T13:58:40Z",
        "count": count,
        "type": event_type,
        "eventTime": null,
        "reportingComponent": component,
        "reportingInstance": ""
    })
}

/// A Ready node of a Karpenter NodePool.
pub fn node(
    name: &str,
    nodepool: &str,
    zone: &str,
    instance_type: &str,
    capacity_type: &str,
) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name, "uid": uid("Node", name), "resourceVersion": "4711", "creationTimestamp": "2025-09-16T12:00:00Z",
            "labels": {
                "karpenter.sh/nodepool": nodepool, "karpenter.sh/initialized": "true", "karpenter.sh/registered": "true",
                "karpenter.sh/capacity-type": capacity_type, "node.kubernetes.io/instance-type": instance_type,
                "topology.kubernetes.io/zone": zone, "kubernetes.io/arch": "amd64", "kubernetes.io/os": "linux",
                "kubernetes.io/hostname": name
            }
        },
        "spec": {"providerID": format!("aws:///{zone}/i-0{:016x}", name.len() * 977_331)},
        "status": {
            "allocatable": {"cpu": "3920m", "memory": "14162Mi", "pods": "58", "ephemeral-storage": "17Gi"},
            "capacity": {"cpu": "4", "memory": "15842Mi", "pods": "58", "ephemeral-storage": "20Gi"},
            "conditions": [
                {"type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory", "message": "kubelet has sufficient memory available"},
                {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}
            ],
            "nodeInfo": {"kubeletVersion": "v1.31.2-eks-94953ac", "containerRuntimeVersion": "containerd://1.7.22", "architecture": "amd64", "operatingSystem": "linux"}
        }
    })
}

/// A NodeClaim with the given conditions `(type, status, reason, message)`.
pub fn nodeclaim(
    name: &str,
    nodepool: &str,
    node: Option<&str>,
    conditions: &[(&str, &str, &str, &str)],
) -> Value {
    let conditions: Vec<Value> = conditions
        .iter()
        .map(|(t, s, r, m)| json!({"type": t, "status": s, "reason": r, "message": m, "lastTransitionTime": "2025-09-16T13:45:00Z"}))
        .collect();
    let mut claim = json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodeClaim",
        "metadata": {
            "name": name, "uid": uid("NodeClaim", name), "resourceVersion": "4711", "creationTimestamp": "2025-09-16T13:44:00Z",
            "labels": {"karpenter.sh/nodepool": nodepool},
            "ownerReferences": owner("karpenter.sh/v1", "NodePool", nodepool)
        },
        "spec": {
            "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
            "requirements": [{"key": "karpenter.sh/nodepool", "operator": "In", "values": [nodepool]}]
        },
        "status": {"conditions": conditions}
    });
    if let Some(node) = node {
        claim["status"]["nodeName"] = json!(node);
    }
    claim
}

/// A NodePool allowing `zones` and `capacity_types`, using EC2NodeClass `nodeclass`.
pub fn nodepool(name: &str, zones: &[&str], capacity_types: &[&str], nodeclass: &str) -> Value {
    json!({
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": name, "uid": uid("NodePool", name), "resourceVersion": "4711", "creationTimestamp": "2025-06-01T09:00:00Z"},
        "spec": {
            "template": {"spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": nodeclass},
                "requirements": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In", "values": zones},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": capacity_types},
                    {"key": "karpenter.k8s.aws/instance-category", "operator": "In", "values": ["c", "m", "r"]},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}
                ],
                "expireAfter": "720h"
            }},
            "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "1m", "budgets": [{"nodes": "10%"}]},
            "limits": {"cpu": "1000"}
        },
        "status": {
            "resources": {"cpu": "12", "memory": "48Gi", "nodes": "3", "pods": "174"},
            "conditions": [
                {"type": "NodeClassReady", "status": "True", "reason": "NodeClassReady", "message": ""},
                {"type": "ValidationSucceeded", "status": "True", "reason": "ValidationSucceeded", "message": ""},
                {"type": "Ready", "status": "True", "reason": "Ready", "message": ""}
            ]
        }
    })
}

/// A Ready EC2NodeClass discovering subnets and security groups by `karpenter.sh/discovery`.
pub fn ec2nodeclass(name: &str, cluster: &str, subnet_zones: &[&str]) -> Value {
    let subnets: Vec<Value> = subnet_zones
        .iter()
        .enumerate()
        .map(|(i, zone)| json!({"id": format!("subnet-0a1b2c3d4e5f6{i:03}"), "zone": zone, "zoneID": format!("euw1-az{}", i + 1)}))
        .collect();
    json!({
        "apiVersion": "karpenter.k8s.aws/v1",
        "kind": "EC2NodeClass",
        "metadata": {"name": name, "uid": uid("EC2NodeClass", name), "resourceVersion": "4711", "creationTimestamp": "2025-06-01T09:00:00Z"},
        "spec": {
            "amiSelectorTerms": [{"alias": "al2023@latest"}],
            "role": format!("KarpenterNodeRole-{cluster}"),
            "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": cluster}}],
            "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": cluster}}]
        },
        "status": {
            "subnets": subnets,
            "securityGroups": [{"id": "sg-0f1e2d3c4b5a69788", "name": format!("eks-cluster-sg-{cluster}")}],
            "amis": [{"id": "ami-0c2f3e4d5a6b7c8d9", "name": "amazon-eks-node-al2023-x86_64-standard-1.31-v20250901"}],
            "instanceProfile": format!("{cluster}_1234567890"),
            "conditions": [
                {"type": "SubnetsReady", "status": "True", "reason": "SubnetsReady", "message": ""},
                {"type": "SecurityGroupsReady", "status": "True", "reason": "SecurityGroupsReady", "message": ""},
                {"type": "AMIsReady", "status": "True", "reason": "AMIsReady", "message": ""},
                {"type": "InstanceProfileReady", "status": "True", "reason": "InstanceProfileReady", "message": ""},
                {"type": "ValidationSucceeded", "status": "True", "reason": "ValidationSucceeded", "message": ""},
                {"type": "Ready", "status": "True", "reason": "Ready", "message": ""}
            ]
        }
    })
}

/// The Karpenter chart's Deployment, its PDB and its `replicas` pods in `namespace`, image tag
/// `version`.
pub fn karpenter(namespace: &str, version: &str, replicas: usize) -> Vec<Value> {
    let labels =
        json!({"app.kubernetes.io/name": "karpenter", "app.kubernetes.io/instance": "karpenter"});
    let container = json!({
        "name": "controller",
        "image": format!("public.ecr.aws/karpenter/controller:{version}@sha256:4f0ac9b3c7c3a6c1f4e1b7e2d8a9c0b1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7"),
        "env": [
            {"name": "KUBERNETES_MIN_VERSION", "value": "1.19.0-0"},
            {"name": "CLUSTER_NAME", "value": "prod"},
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "FEATURE_GATES", "value": "SpotToSpotConsolidation=false"},
            {"name": "INTERRUPTION_QUEUE", "value": "prod"}
        ],
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}
    });
    let replica_set = "karpenter-6d8b7c9f4";
    // The chart ships a PDB for the controller.
    let pdb = json!({
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": metadata("PodDisruptionBudget", Some(namespace), "karpenter"),
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}},
        "status": {"currentHealthy": replicas, "desiredHealthy": replicas.saturating_sub(1), "disruptionsAllowed": 1, "expectedPods": replicas}
    });
    let mut objects = vec![
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "karpenter", "namespace": namespace, "uid": uid("Deployment", "karpenter"), "labels": labels,
                         "annotations": {"meta.helm.sh/release-name": "karpenter"}, "resourceVersion": "4711",
                         "creationTimestamp": "2025-06-01T09:00:00Z"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": labels},
                "template": {"metadata": {"labels": labels}, "spec": {"dnsPolicy": "ClusterFirst", "containers": [container.clone()],
                              "serviceAccountName": "karpenter", "priorityClassName": "system-cluster-critical"}}
            },
            "status": {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas, "updatedReplicas": replicas}
        }),
        pdb,
    ];
    for i in 0..replicas {
        let name = format!("{replica_set}-{}", ["2xk7p", "9qv5m", "t4n8c"][i % 3]);
        let mut pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": metadata("Pod", Some(namespace), &name),
            "spec": {"containers": [container.clone()], "dnsPolicy": "ClusterFirst", "serviceAccountName": "karpenter",
                     "nodeName": "ip-10-0-3-21.eu-west-1.compute.internal"},
            "status": {"phase": "Running", "containerStatuses": [{"name": "controller", "ready": true, "restartCount": 0,
                       "state": {"running": {"startedAt": "2025-09-16T08:00:00Z"}}}]}
        });
        pod["metadata"]["labels"] = labels.clone();
        pod["metadata"]["ownerReferences"] = owner("apps/v1", "ReplicaSet", replica_set);
        objects.push(pod);
    }
    objects
}

/// The lines of `text` as log lines, the last one `newest_age` seconds old and each earlier
/// one a second older.
pub fn log_lines(text: &str, newest_age: u64) -> Vec<LogLine> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let count = lines.len() as u64;
    lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| LogLine {
            age_seconds: newest_age + (count - 1 - i as u64),
            text: line.to_string(),
        })
        .collect()
}

/// The input text of a corpus case (`tests/corpus/<case>/input.*`).
pub fn corpus_input(case: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(case);
    let input = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("corpus case {case}: {e}"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.file_stem().is_some_and(|s| s == "input"))
        .unwrap_or_else(|| panic!("corpus case {case} has an input file"));
    std::fs::read_to_string(input).expect("corpus input is text")
}

/// The YAML objects of a text as JSON (for corpus cases that are object YAML).
pub fn yaml_objects(text: &str) -> Vec<Value> {
    yaml_rust2::YamlLoader::load_from_str(text)
        .expect("corpus YAML parses")
        .iter()
        .map(yaml_to_json)
        .collect()
}

fn yaml_to_json(yaml: &yaml_rust2::Yaml) -> Value {
    use yaml_rust2::Yaml;
    match yaml {
        Yaml::Real(r) => r.parse::<f64>().map(|f| json!(f)).unwrap_or(json!(r)),
        Yaml::Integer(i) => json!(i),
        Yaml::String(s) => json!(s),
        Yaml::Boolean(b) => json!(b),
        Yaml::Array(items) => Value::Array(items.iter().map(yaml_to_json).collect()),
        Yaml::Hash(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = match k {
                        Yaml::String(s) => s.clone(),
                        Yaml::Integer(i) => i.to_string(),
                        Yaml::Boolean(b) => b.to_string(),
                        _ => String::new(),
                    };
                    (key, yaml_to_json(v))
                })
                .collect(),
        ),
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uids_are_stable_and_distinct() {
        assert_eq!(uid("Pod", "web-0"), uid("Pod", "web-0"));
        assert_ne!(uid("Pod", "web-0"), uid("Pod", "web-1"));
        assert_eq!(uid("Pod", "web-0").len(), 36);
    }

    #[test]
    fn log_lines_age_towards_now() {
        let lines = log_lines("a\n\nb\nc\n", 10);
        let ages: Vec<u64> = lines.iter().map(|l| l.age_seconds).collect();
        assert_eq!(ages, [12, 11, 10]);
    }

    #[test]
    fn corpus_yaml_becomes_json_objects() {
        let objects = yaml_objects(&corpus_input("nodeclaim-not-initialized-a"));
        assert_eq!(objects[0]["kind"], "NodeClaim");
        assert_eq!(
            objects[0]["status"]["conditions"][2]["reason"],
            "ResourceNotRegistered"
        );
    }
}
