//! Fake clusters built from the corpus: each one carries a failure the corpus shows (its exact
//! messages as events, logs or object status) inside an otherwise ordinary cluster.

use std::time::Duration;

use serde_json::{json, Value};

use super::objects::{self, corpus_input, event, log_lines, metadata, owner, pending_pod};
use super::{Fault, FaultAction, Matcher, Scenario};

/// The Karpenter version the fake clusters run (image tag).
pub const KARPENTER_VERSION: &str = "1.4.0";
/// The default namespace Karpenter runs in.
pub const KARPENTER_NAMESPACE: &str = "kube-system";
/// The replica that holds the leader lease and logs the provisioning decisions.
pub const LEADER: &str = "karpenter-6d8b7c9f4-2xk7p";
pub const FOLLOWER: &str = "karpenter-6d8b7c9f4-9qv5m";
/// The node every base cluster has.
pub const BASE_NODE: &str = "ip-10-0-41-17.eu-west-1.compute.internal";

/// An ordinary cluster: Karpenter (2 replicas) in `karpenter_namespace`, NodePool and
/// EC2NodeClass `default` (zones a and b), one node with its NodeClaim, and INFO-level logs.
pub fn base(karpenter_namespace: &str) -> Scenario {
    let mut scenario = Scenario::default();
    scenario.objects.extend(objects::karpenter(
        karpenter_namespace,
        KARPENTER_VERSION,
        2,
    ));
    scenario.objects.extend([
        objects::nodepool(
            "default",
            &["eu-west-1a", "eu-west-1b"],
            &["spot", "on-demand"],
            "default",
        ),
        objects::ec2nodeclass("default", "prod", &["eu-west-1a", "eu-west-1b"]),
        objects::node(BASE_NODE, "default", "eu-west-1a", "m7i.xlarge", "spot"),
        objects::nodeclaim(
            "default-7xk2p",
            "default",
            Some(BASE_NODE),
            &[
                ("Launched", "True", "Launched", ""),
                ("Registered", "True", "Registered", ""),
                ("Initialized", "True", "Initialized", ""),
                ("Ready", "True", "Ready", ""),
            ],
        ),
    ]);
    scenario
        .with_log(karpenter_namespace, LEADER, "controller", log_lines(&corpus_input("healthy-provisioning-log"), 1800))
        .with_log(
            karpenter_namespace,
            FOLLOWER,
            "controller",
            log_lines(
                "{\"level\":\"INFO\",\"time\":\"2025-09-16T08:00:03.120Z\",\"logger\":\"controller\",\"message\":\"attempting to acquire leader lease kube-system/karpenter-leader-election...\",\"commit\":\"8e1c4c4\"}",
                7200,
            ),
        )
}

/// Appends `text` (log lines) to the leader's log, the newest line `newest_age` seconds old.
pub fn leader_logs(
    scenario: Scenario,
    karpenter_namespace: &str,
    text: &str,
    newest_age: u64,
) -> Scenario {
    scenario.with_log(
        karpenter_namespace,
        LEADER,
        "controller",
        log_lines(text, newest_age),
    )
}

/// A StatefulSet `name` with `replicas` and its pod `<name>-0` Pending.
fn statefulset(namespace: &str, name: &str, replicas: u32) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": metadata("StatefulSet", Some(namespace), name),
        "spec": {"replicas": replicas, "serviceName": name, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "main", "image": "registry.example.com/app:1.4.2"}]}}},
        "status": {"replicas": replicas, "readyReplicas": replicas - 1, "currentReplicas": replicas}
    })
}

fn owned_pending_pod(
    namespace: &str,
    name: &str,
    owner_kind: &str,
    owner_name: &str,
    cpu: &str,
) -> Value {
    let mut pod = pending_pod(namespace, name, cpu, "8Gi");
    pod["metadata"]["labels"] = json!({"app": owner_name});
    pod["metadata"]["ownerReferences"] = owner("apps/v1", owner_kind, owner_name);
    pod
}

pub const ICE_POD: (&str, &str) = ("analytics", "trino-worker-0");

/// Pending pod with insufficient capacity: Karpenter nominated a NodeClaim whose launch keeps
/// failing with `InsufficientInstanceCapacity` (corpus `events-nodeclaim-insufficient-capacity`
/// and `karpenter-log-insufficient-capacity`).
pub fn pending_ice() -> Scenario {
    with_ice(base(KARPENTER_NAMESPACE))
}

/// Adds `pending_ice`'s pod, NodePool, NodeClaim, events and logs to a cluster.
fn with_ice(cluster: Scenario) -> Scenario {
    let (ns, pod) = ICE_POD;
    let ice_event = corpus_input("events-nodeclaim-insufficient-capacity")
        .lines()
        .find(|l| l.contains("InsufficientCapacityError"))
        .and_then(|l| l.split_once("nodeclaim/trino-m7g-4kq8r"))
        .map(|(_, message)| message.trim().to_string())
        .expect("the corpus case has the ICE event");
    let claim = "trino-m7g-4kq8r";
    let mut scenario = cluster
        .with(statefulset(ns, "trino-worker", 3))
        .with(owned_pending_pod(ns, pod, "StatefulSet", "trino-worker", "15"))
        .with(objects::nodepool("trino-m7g", &["eu-west-1a", "eu-west-1b", "eu-west-1c"], &["spot", "on-demand"], "default"))
        .with(objects::nodeclaim(
            claim,
            "trino-m7g",
            None,
            &[("Launched", "Unknown", "AwaitingReconciliation", "object is awaiting reconciliation"), ("Ready", "Unknown", "ReconcilingDependents", "Launched=Unknown")],
        ))
        .with(event(("Pod", Some(ns), pod), "Warning", "FailedScheduling", "default-scheduler",
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.", 14))
        .with(event(("Pod", Some(ns), pod), "Normal", "Nominated", "karpenter", &format!("Pod should schedule on: nodeclaim/{claim}"), 6))
        .with(event(("NodeClaim", None, claim), "Warning", "InsufficientCapacityError", "karpenter", &ice_event, 4));
    scenario = leader_logs(
        scenario,
        KARPENTER_NAMESPACE,
        &corpus_input("karpenter-log-insufficient-capacity"),
        120,
    );
    scenario
}

pub const ZONE_POD: (&str, &str) = ("payments", "ledger-0");

/// A StatefulSet pod whose EBS volume lives in eu-west-1c while the only NodePool allows
/// eu-west-1a and eu-west-1b: Karpenter finds no offering (the v1.3-1.4 grammar of
/// `examples/pending-zone.txt`), the scheduler reports the volume node affinity conflict.
pub fn zone_offering() -> Scenario {
    let (ns, pod) = ZONE_POD;
    let mut ledger = owned_pending_pod(ns, pod, "StatefulSet", "ledger", "2");
    ledger["spec"]["volumes"] =
        json!([{"name": "data", "persistentVolumeClaim": {"claimName": "data-ledger-0"}}]);
    ledger["status"]["conditions"][0]["message"] =
        json!("0/4 nodes are available: 4 node(s) had volume node affinity conflict. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.");
    let error = "incompatible with nodepool \"default\", daemonset overhead={\"cpu\":\"180m\",\"memory\":\"120Mi\",\"pods\":\"5\"}, no instance type met the scheduling requirements or had a required offering, requirements=karpenter.k8s.aws/ec2nodeclass In [default], karpenter.k8s.aws/instance-category In [c m r], karpenter.sh/capacity-type In [on-demand spot], karpenter.sh/nodepool In [default], kubernetes.io/arch In [amd64], topology.kubernetes.io/zone In [eu-west-1c], resources={\"cpu\":\"2180m\",\"memory\":\"8312Mi\",\"pods\":\"6\"}";
    let log = json!({"level": "ERROR", "time": "2025-09-16T13:58:41.311Z", "logger": "controller", "message": "could not schedule pod",
        "commit": "a2b5c6e", "controller": "provisioner", "namespace": "", "name": "", "reconcileID": "7c1d9e2f-3a4b-4c5d-8e6f-0a1b2c3d4e5f",
        "Pod": {"name": pod, "namespace": ns}, "error": error});
    let scenario = base(KARPENTER_NAMESPACE)
        .with(statefulset(ns, "ledger", 3))
        .with(ledger)
        .with(json!({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": metadata("PersistentVolumeClaim", Some(ns), "data-ledger-0"),
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "100Gi"}}, "storageClassName": "gp3",
                     "volumeName": "pvc-3f1c2a9e-7b4d-4e8a-9c1f-5d2e6a7b8c90"},
            "status": {"phase": "Bound"}
        }))
        .with(json!({
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": metadata("PersistentVolume", None, "pvc-3f1c2a9e-7b4d-4e8a-9c1f-5d2e6a7b8c90"),
            "spec": {"capacity": {"storage": "100Gi"}, "storageClassName": "gp3", "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-0a1b2c3d4e5f67890", "fsType": "ext4"},
                     "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["eu-west-1c"]}]}]}}},
            "status": {"phase": "Bound"}
        }))
        .with(json!({
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": metadata("StorageClass", None, "gp3"),
            "provisioner": "ebs.csi.aws.com", "volumeBindingMode": "WaitForFirstConsumer", "parameters": {"type": "gp3"}
        }))
        .with(event(("Pod", Some(ns), pod), "Warning", "FailedScheduling", "default-scheduler",
            "0/4 nodes are available: 4 node(s) had volume node affinity conflict. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.", 9))
        .with(event(("Pod", Some(ns), pod), "Warning", "FailedScheduling", "karpenter", &format!("Failed to schedule pod, {error}"), 9));
    leader_logs(scenario, KARPENTER_NAMESPACE, &log.to_string(), 60)
}

pub const PDB_NODE: &str = "ip-10-0-77-201.eu-west-1.compute.internal";

/// A node Karpenter wants to consolidate, blocked by the ingress-nginx PDB (`minAvailable: 1`,
/// one of two replicas in ImagePullBackOff elsewhere, so 0 disruptions allowed); the v1.2-1.4
/// `DisruptionBlocked` wording of the corpus `events-disruption-blocked-pdb-*` cases.
pub fn pdb_blocked_node() -> Scenario {
    let claim = "default-m2x8c";
    let labels = json!({"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller"});
    let mut running = objects::running_pod(
        "ingress",
        "ingress-nginx-controller-5c9f7d8b6-h4k2m",
        PDB_NODE,
        labels.clone(),
    );
    running["metadata"]["ownerReferences"] = owner(
        "apps/v1",
        "ReplicaSet",
        "ingress-nginx-controller-5c9f7d8b6",
    );
    let mut broken = objects::running_pod(
        "ingress",
        "ingress-nginx-controller-5c9f7d8b6-x7p9q",
        BASE_NODE,
        labels.clone(),
    );
    broken["status"]["containerStatuses"][0] = json!({"name": "main", "ready": false, "restartCount": 0,
        "image": "registry.k8s.io/ingress-nginx/controller:v1.11.2",
        "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image \"registry.k8s.io/ingress-nginx/controller:v1.11.2\""}}});
    let message = "Pdb \"ingress/ingress-nginx-controller\" prevents pod evictions";
    base(KARPENTER_NAMESPACE)
        .with(objects::node(PDB_NODE, "default", "eu-west-1b", "m7i.2xlarge", "on-demand"))
        .with(objects::nodeclaim(
            claim,
            "default",
            Some(PDB_NODE),
            &[("Launched", "True", "Launched", ""), ("Registered", "True", "Registered", ""), ("Initialized", "True", "Initialized", ""), ("Consolidatable", "True", "Consolidatable", ""), ("Ready", "True", "Ready", "")],
        ))
        .with(running)
        .with(broken)
        .with(json!({
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": metadata("PodDisruptionBudget", Some("ingress"), "ingress-nginx-controller"),
            "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}},
            "status": {"currentHealthy": 1, "desiredHealthy": 1, "disruptionsAllowed": 0, "expectedPods": 2, "observedGeneration": 1}
        }))
        .with(event(("Node", None, PDB_NODE), "Normal", "DisruptionBlocked", "karpenter", message, 12))
        .with(event(("NodeClaim", None, claim), "Normal", "DisruptionBlocked", "karpenter", message, 12))
}

pub const CNI_NODE: &str = "ip-10-8-14-201.us-west-2.compute.internal";
pub const CNI_POD: &str = "aws-node-7hx2q";

/// A fresh node NotReady (`cni plugin not initialized`): its aws-node pod crash-loops because
/// ipamd is denied `ec2:DescribeNetworkInterfaces` (the node role lacks AmazonEKS_CNI_Policy,
/// the Karpenter getting-started setup of aws/karpenter-provider-aws#1185).
pub fn cni_denied_node() -> Scenario {
    let mut node = objects::node(CNI_NODE, "default", "us-west-2a", "m6i.large", "on-demand");
    node["status"]["conditions"][1] = json!({"type": "Ready", "status": "False", "reason": "KubeletNotReady",
        "message": "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"});
    node["spec"]["taints"] =
        json!([{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]);
    let mut cni = objects::running_pod(
        "kube-system",
        CNI_POD,
        CNI_NODE,
        json!({"k8s-app": "aws-node"}),
    );
    cni["metadata"]["ownerReferences"] = owner("apps/v1", "DaemonSet", "aws-node");
    cni["spec"]["containers"][0]["name"] = json!("aws-node");
    cni["spec"]["containers"][0]["image"] =
        json!("602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.19.2-eksbuild.1");
    cni["spec"]["serviceAccountName"] = json!("aws-node");
    cni["status"]["conditions"][0]["status"] = json!("False");
    // Waiting to restart: the kubelet answers the plain log read with the instance that
    // ended, so its log is recorded as the previous instance's.
    cni["status"]["containerStatuses"] = json!([{"name": "aws-node", "ready": false, "restartCount": 6,
        "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 2m40s restarting failed container=aws-node"}},
        "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "2025-09-16T13:40:01Z", "finishedAt": "2025-09-16T13:40:34Z",
                      "containerID": "containerd://4b9e1c7a2d3f5e6081a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708"}}}]);
    let ipamd = [
        r#"{"level":"info","ts":"2025-09-16T13:40:01.123Z","caller":"entrypoint.sh","msg":"Validating env variables ..."}"#,
        r#"{"level":"info","ts":"2025-09-16T13:40:01.160Z","caller":"entrypoint.sh","msg":"Starting IPAM daemon in the background ... "}"#,
        r#"{"level":"info","ts":"2025-09-16T13:40:01.170Z","caller":"entrypoint.sh","msg":"Checking for IPAM connectivity ... "}"#,
        r#"{"level":"error","ts":"2025-09-16T13:40:03.412Z","caller":"ipamd/ipamd.go:455","msg":"Failed to call ec2:DescribeNetworkInterfaces for [eni-0123456789abcdef0]: UnauthorizedOperation: You are not authorized to perform this operation.\n\tstatus code: 403, request id: 5c1d4e3f-2a1b-4c8d-9e0f-1a2b3c4d5e6f"}"#,
    ]
    .join("\n");
    base(KARPENTER_NAMESPACE)
        .with(node)
        .with(cni)
        .with_previous_log("kube-system", CNI_POD, "aws-node", log_lines(&ipamd, 30))
}

/// `cni_denied_node` caught between two crashes: aws-node has been started again (running, not
/// ready while ipamd retries), so its current log holds only the start-up lines and the denied
/// `ec2:DescribeNetworkInterfaces` is in the previous instance's log alone.
pub fn cni_restarted_node() -> Scenario {
    let mut scenario = cni_denied_node();
    let key = (
        "kube-system".to_string(),
        CNI_POD.to_string(),
        "aws-node".to_string(),
    );
    let ended = scenario
        .previous_logs
        .get(&key)
        .cloned()
        .unwrap_or_default();
    let cni = scenario
        .objects
        .iter_mut()
        .find(|o| o["kind"] == "Pod" && o["metadata"]["name"] == CNI_POD)
        .expect("cni_denied_node has the aws-node pod");
    let status = &mut cni["status"]["containerStatuses"][0];
    status["restartCount"] = json!(7);
    status["state"] = json!({"running": {"startedAt": "2025-09-16T13:43:15Z"}});
    // The start-up lines the new instance has logged so far, before ipamd's EC2 call fails.
    let started: Vec<super::LogLine> = ended
        .iter()
        .filter(|line| !line.text.contains("\"level\":\"error\""))
        .map(|line| super::LogLine {
            age_seconds: line.age_seconds.saturating_sub(25),
            text: line.text.replace("13:40:", "13:43:"),
        })
        .collect();
    scenario.with_log("kube-system", CNI_POD, "aws-node", started)
}

pub const SANDBOX_POD: (&str, &str) = ("shop", "web-5d8f7c6b9-k2x4p");
pub const SANDBOX_NODE: &str = "ip-10-0-36-12.us-west-2.compute.internal";

/// A pod scheduled on a Ready node, stuck in ContainerCreating: its sandbox fails in the VPC
/// CNI (`failed to assign an IP address to container`), and ipamd on the node cannot grow its
/// ENI pool, the subnet being out of addresses (`InsufficientFreeAddressesInSubnet`).
pub fn sandbox_ip_exhausted() -> Scenario {
    let (ns, name) = SANDBOX_POD;
    let mut pod = objects::running_pod(ns, name, SANDBOX_NODE, json!({"app": "web"}));
    pod["status"] = json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}, {"type": "Ready", "status": "False"}],
        "containerStatuses": [{"name": "main", "ready": false, "restartCount": 0, "state": {"waiting": {"reason": "ContainerCreating"}}}]});
    let mut cni = objects::running_pod(
        "kube-system",
        "aws-node-4xk9z",
        SANDBOX_NODE,
        json!({"k8s-app": "aws-node"}),
    );
    cni["spec"]["containers"][0]["name"] = json!("aws-node");
    cni["spec"]["containers"][0]["image"] =
        json!("602401143452.dkr.ecr.us-west-2.amazonaws.com/amazon-k8s-cni:v1.19.2-eksbuild.1");
    cni["status"]["containerStatuses"][0]["name"] = json!("aws-node");
    // Another node's aws-node pod: only the pod's own node's is read.
    let other = objects::running_pod(
        "kube-system",
        "aws-node-p8w2m",
        BASE_NODE,
        json!({"k8s-app": "aws-node"}),
    );
    let ipamd = [
        r#"{"level":"info","ts":"2025-09-16T13:58:36.220Z","caller":"ipamd/ipamd.go:1045","msg":"Trying to allocate 1 more ENI"}"#,
        r#"{"level":"error","ts":"2025-09-16T13:58:41.220Z","caller":"ipamd/ipamd.go:864","msg":"Failed to increase pool size due to not able to allocate ENI AllocENI: error creating ENI: CreateNetworkInterface: InsufficientFreeAddressesInSubnet: insufficient free address in subnet subnet-0a1b2c3d4e5f67890\n\tstatus code: 400, request id: 1b2c3d4e-5f6a-4b7c-8d9e-0f1a2b3c4d5e"}"#,
    ]
    .join("\n");
    base(KARPENTER_NAMESPACE)
        .with(objects::node(SANDBOX_NODE, "default", "us-west-2b", "m6i.large", "on-demand"))
        .with(pod)
        .with(cni)
        .with(other)
        .with(event(("Pod", Some(ns), name), "Warning", "FailedCreatePodSandBox", "kubelet",
            "Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"5b7c2a9e1f\": plugin type=\"aws-cni\" name=\"aws-cni\" failed (add): add cmd: failed to assign an IP address to container", 14))
        .with_log("kube-system", "aws-node-4xk9z", "aws-node", log_lines(&ipamd, 20))
}

pub const UNINITIALIZED_CLAIM: &str = "gpu-7c2lq";

/// A GPU NodeClaim registered but never initialized: `nvidia.com/gpu` requested but not
/// registered (corpus `nodeclaim-not-initialized-a`), its node Ready without the resource.
pub fn nodeclaim_not_initialized() -> Scenario {
    let mut claim = objects::yaml_objects(&corpus_input("nodeclaim-not-initialized-a")).remove(0);
    claim["metadata"]["uid"] = json!(objects::uid("NodeClaim", UNINITIALIZED_CLAIM));
    claim["metadata"]["creationTimestamp"] = json!("2025-09-16T13:30:00Z");
    let node_name = claim["status"]["nodeName"]
        .as_str()
        .expect("the corpus NodeClaim names its node")
        .to_string();
    let mut node = objects::node(&node_name, "gpu", "us-east-1a", "g5.xlarge", "on-demand");
    node["metadata"]["labels"]
        .as_object_mut()
        .expect("labels")
        .remove("karpenter.sh/initialized");
    node["spec"]["taints"] =
        json!([{"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}]);
    base(KARPENTER_NAMESPACE)
        .with(claim)
        .with(node)
        .with(objects::nodepool("gpu", &["us-east-1a"], &["on-demand"], "gpu"))
        .with(objects::ec2nodeclass("gpu", "prod", &["us-east-1a"]))
        .with(event(("NodeClaim", None, UNINITIALIZED_CLAIM), "Normal", "Registered", "karpenter",
            "Status condition transitioned, Type: Registered, Status: Unknown -> True, Reason: Registered", 1))
}

pub const RESTARTED_POD: (&str, &str) = ("orders", "api-0");

/// A Pending pod nothing launches for, while both Karpenter replicas restart: each instance
/// runs the EC2 connectivity check at start-up, its STS call times out (cluster DNS not up yet,
/// the chicken-and-egg of `dnsPolicy: ClusterFirst`), and it exits. Caught between two crashes
/// the replicas are running again, their current logs hold only start-up lines, and the cause
/// (KW102, v1.1+ SDK v2 wording) is in the previous instances' logs alone.
pub fn karpenter_restarted() -> Scenario {
    let (ns, pod) = RESTARTED_POD;
    let started = |at: &str| {
        format!(
            "{{\"level\":\"INFO\",\"time\":\"2025-09-16T{at}.002Z\",\"logger\":\"controller\",\"message\":\"Starting workers\",\"commit\":\"a2b5c6e\",\"controller\":\"nodeclaim.podevents\",\"controllerGroup\":\"\",\"controllerKind\":\"Pod\",\"worker count\":1}}"
        )
    };
    let failed = |at: &str| {
        format!(
            "{}\n{{\"level\":\"ERROR\",\"time\":\"2025-09-16T{at}.021Z\",\"logger\":\"controller\",\"message\":\"ec2 api connectivity check failed\",\"commit\":\"a2b5c6e\",\"error\":\"operation error EC2: DescribeInstanceTypes, get identity: get credentials: failed to refresh cached credentials, failed to retrieve credentials, operation error STS: AssumeRoleWithWebIdentity, exceeded maximum number of attempts, 3, https response error StatusCode: 0, RequestID: , request send failed, Post \\\"https://sts.eu-west-1.amazonaws.com/\\\": dial tcp: lookup sts.eu-west-1.amazonaws.com on 172.20.0.10:53: read udp 10.0.3.21:41873->172.20.0.10:53: i/o timeout\"}}",
            started("13:58:02")
        )
    };
    let mut scenario = base(KARPENTER_NAMESPACE)
        .with(statefulset(ns, "api", 2))
        .with(owned_pending_pod(ns, pod, "StatefulSet", "api", "2"))
        .with(event(("Pod", Some(ns), pod), "Warning", "FailedScheduling", "default-scheduler",
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.", 11));
    // The replicas' current instances: the base cluster's logs give way to a fresh start.
    for replica in [LEADER, FOLLOWER] {
        scenario.logs.remove(&(
            KARPENTER_NAMESPACE.to_string(),
            replica.to_string(),
            "controller".to_string(),
        ));
        restart(
            &mut scenario,
            replica,
            "Error",
            1,
            Some("2025-09-16T13:58:32Z"),
        );
        scenario = scenario
            .with_log(
                KARPENTER_NAMESPACE,
                replica,
                "controller",
                log_lines(&started("13:58:40"), 12),
            )
            .with_previous_log(
                KARPENTER_NAMESPACE,
                replica,
                "controller",
                log_lines(&failed("13:58:32"), 20),
            );
    }
    scenario
}

/// `pending_ice` after the leader's node rebooted: its controller was started again and its
/// last instance is only known as `ContainerStatusUnknown` (no `containerID`), so the API
/// answers `previous=true` with the kubelet's 400.
pub fn karpenter_previous_log_gone() -> Scenario {
    let mut scenario = pending_ice();
    restart(&mut scenario, LEADER, "ContainerStatusUnknown", 137, None);
    scenario
}

/// Marks Karpenter replica `pod`'s controller as started again after an instance that ended
/// with `reason` and `exit_code`; `ended_at` with a `containerID` (its log kept), `None`
/// without one (the kubelet has lost it).
fn restart(
    scenario: &mut Scenario,
    pod: &str,
    reason: &str,
    exit_code: i64,
    ended_at: Option<&str>,
) {
    let replica = scenario
        .objects
        .iter_mut()
        .find(|o| o["kind"] == "Pod" && o["metadata"]["name"] == pod)
        .expect("a Karpenter replica");
    let mut terminated = json!({"exitCode": exit_code, "reason": reason,
        "startedAt": "2025-09-16T08:00:00Z", "finishedAt": ended_at.unwrap_or("2025-09-16T13:20:00Z")});
    match ended_at {
        Some(_) => {
            terminated["containerID"] = json!(format!(
                "containerd://{}",
                objects::uid("Container", pod).replace('-', "")
            ));
        }
        None => {
            terminated["message"] =
                json!("The container could not be located when the pod was terminated");
        }
    }
    replica["status"]["containerStatuses"][0] = json!({"name": "controller", "ready": false, "restartCount": 1,
        "state": {"running": {"startedAt": "2025-09-16T13:58:38Z"}}, "lastState": {"terminated": terminated}});
}

pub const ELSEWHERE_NAMESPACE: &str = "platform-karpenter";
pub const ELSEWHERE_POD: (&str, &str) = ("coder", "workspace-7d9f8b6c5-x2k4p");

/// Karpenter installed in a namespace of its own; the only explanation of the Pending pod is
/// in its log (corpus `karpenter-log-no-instance-type-met-a`: taint not tolerated, no offering).
pub fn karpenter_elsewhere() -> Scenario {
    let (ns, pod) = ELSEWHERE_POD;
    let scenario = base(ELSEWHERE_NAMESPACE)
        .with(owned_pending_pod(ns, pod, "ReplicaSet", "workspace-7d9f8b6c5", "4"))
        .with(json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
                "name": "workspace-7d9f8b6c5", "namespace": ns, "uid": objects::uid("ReplicaSet", "workspace-7d9f8b6c5"),
                "ownerReferences": owner("apps/v1", "Deployment", "workspace")},
            "spec": {"replicas": 1}, "status": {"replicas": 1}
        }))
        .with(json!({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata("Deployment", Some(ns), "workspace"),
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "workspace"}}}, "status": {"replicas": 1, "unavailableReplicas": 1}
        }))
        .with(event(("Pod", Some(ns), pod), "Warning", "FailedScheduling", "default-scheduler",
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.", 3));
    leader_logs(
        scenario,
        ELSEWHERE_NAMESPACE,
        &corpus_input("karpenter-log-no-instance-type-met-a"),
        30,
    )
}

pub const SILENT_POD: (&str, &str) = ("shop", "checkout-7d4b9c6f8-k2xqp");

/// No Karpenter at all (no CRDs, no Deployment): only the scheduler speaks.
pub fn missing_crds() -> Scenario {
    let (ns, pod) = SILENT_POD;
    let mut scenario = Scenario::default()
        .with(owned_pending_pod(ns, pod, "ReplicaSet", "checkout-7d4b9c6f8", "2"))
        .with(objects::node(BASE_NODE, "default", "eu-west-1a", "m7i.xlarge", "on-demand"))
        .with(event(("Pod", Some(ns), pod), "Warning", "FailedScheduling", "default-scheduler",
            "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.", 21));
    scenario.karpenter_sh_versions.clear();
    scenario.karpenter_aws_versions.clear();
    scenario
}

/// Karpenter's pre-v1 APIs only (`karpenter.sh/v1beta1`, `karpenter.k8s.aws/v1beta1`).
pub fn v1beta1_only() -> Scenario {
    let mut scenario = pending_ice();
    scenario.karpenter_sh_versions = vec!["v1beta1"];
    scenario.karpenter_aws_versions = vec!["v1beta1"];
    scenario
}

/// `pending_ice` for a user who may not read pod logs.
pub fn logs_forbidden() -> Scenario {
    pending_ice().with_fault(Fault::forbidden(
        Matcher::Suffix("/log".into()),
        "get",
        "pods/log",
    ))
}

/// `pending_ice` with the EC2NodeClass list hanging for `delay`.
pub fn endpoint_timeout(delay: Duration) -> Scenario {
    pending_ice().with_fault(Fault::new(
        Matcher::Path("/apis/karpenter.k8s.aws/v1/ec2nodeclasses".into()),
        FaultAction::Delay(delay),
    ))
}

/// Two Pending pods with different causes, in two namespaces: `zone_offering` and
/// `pending_ice` in one cluster (for `pending -A`).
pub fn pending_mix() -> Scenario {
    with_ice(zone_offering())
}

/// `count` Pending pods in `namespace` (for paging), each with the scheduler's event.
pub fn many_pending(namespace: &str, count: usize) -> Scenario {
    let mut scenario = pending_ice();
    for i in 0..count {
        let name = format!("batch-{i:04}");
        scenario.objects.push(owned_pending_pod(
            namespace,
            &name,
            "ReplicaSet",
            "batch-6f5d4c3b2",
            "1",
        ));
    }
    scenario
}

/// Scenario names for the `fake-api` binary and the benchmark.
pub const NAMES: &[&str] = &[
    "pending-ice",
    "zone-offering",
    "pdb-blocked-node",
    "cni-denied-node",
    "cni-restarted-node",
    "sandbox-ip-exhausted",
    "nodeclaim-not-initialized",
    "karpenter-elsewhere",
    "missing-crds",
    "v1beta1-only",
    "logs-forbidden",
    "pending-mix",
    "karpenter-restarted",
    "karpenter-previous-log-gone",
];

pub fn by_name(name: &str) -> Option<Scenario> {
    Some(match name {
        "pending-ice" => pending_ice(),
        "zone-offering" => zone_offering(),
        "pdb-blocked-node" => pdb_blocked_node(),
        "cni-denied-node" => cni_denied_node(),
        "cni-restarted-node" => cni_restarted_node(),
        "sandbox-ip-exhausted" => sandbox_ip_exhausted(),
        "nodeclaim-not-initialized" => nodeclaim_not_initialized(),
        "karpenter-elsewhere" => karpenter_elsewhere(),
        "missing-crds" => missing_crds(),
        "v1beta1-only" => v1beta1_only(),
        "logs-forbidden" => logs_forbidden(),
        "pending-mix" => pending_mix(),
        "karpenter-restarted" => karpenter_restarted(),
        "karpenter-previous-log-gone" => karpenter_previous_log_gone(),
        _ => return None,
    })
}

/// AWS Node Termination Handler (IMDS mode, a DaemonSet) draining on spot interruption and
/// rebalance recommendations, beside Karpenter: the KW308 setting (corpus
/// `nth-rebalance-draining-loop`).
pub fn with_nth(scenario: Scenario) -> Scenario {
    let labels = json!({"app.kubernetes.io/name": "aws-node-termination-handler", "app.kubernetes.io/instance": "aws-node-termination-handler"});
    scenario.with(json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "aws-node-termination-handler", "namespace": "kube-system", "labels": labels,
            "uid": objects::uid("DaemonSet", "aws-node-termination-handler"), "creationTimestamp": "2025-03-01T10:00:00Z"
        },
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{
                "name": "aws-node-termination-handler",
                "image": "public.ecr.aws/aws-ec2/aws-node-termination-handler:v1.22.0",
                "env": [
                    {"name": "ENABLE_SPOT_INTERRUPTION_DRAINING", "value": "true"},
                    {"name": "ENABLE_REBALANCE_DRAINING", "value": "true"},
                    {"name": "ENABLE_SCHEDULED_EVENT_DRAINING", "value": "true"}
                ]
            }]}}
        },
        "status": {"desiredNumberScheduled": 3, "numberReady": 3}
    }))
}
