use super::*;
use crate::facts::ObjectRef;

fn corpus_inputs() -> Vec<(String, String)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let mut out = Vec::new();
    let mut cases: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    cases.sort_by_key(|e| e.file_name());
    for case in cases {
        if !case.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(case.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if name.starts_with("input.") {
                let text = String::from_utf8_lossy(&std::fs::read(f.path()).unwrap()).into_owned();
                out.push((
                    format!("{}/{}", case.file_name().to_string_lossy(), name),
                    text,
                ));
            }
        }
    }
    out
}

#[test]
fn corpus_inputs_raise_no_input_error() {
    let inputs = corpus_inputs();
    assert!(inputs.len() >= 100);
    for (name, text) in inputs {
        let facts = ingest(&[Document::new(name.clone(), text)]);
        assert!(
            facts.input_errors.is_empty(),
            "{name}: {:?}",
            facts.input_errors
        );
    }
}

/// The log records of an export, each as its message and the line its evidence quotes; the
/// export must read without input errors.
fn log_messages_and_lines(facts: &Facts) -> Vec<(&str, usize)> {
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    facts
        .logs
        .iter()
        .map(|r| (r.message.as_str(), r.evidence.line))
        .collect()
}

fn facts_of(text: &str) -> Facts {
    ingest(&[Document::new("paste", text)])
}

const DESCRIBE_POD: &str = r#"$ kubectl describe pod web-0 -n shop
Name:             web-0
Namespace:        shop
Priority:         0
Service Account:  web
Node:             ip-10-0-1-2.ec2.internal/10.0.1.2
Labels:           app=web
                  tier=frontend
Annotations:      karpenter.sh/do-not-disrupt: true
Status:           Pending
Reason:           Evicted
Message:          The node was low on resource: ephemeral-storage.
Controlled By:    StatefulSet/web
Containers:
  app:
    Image:      nginx:1.27
    Port:       8080/TCP
    Host Port:  8080/TCP
    State:      Waiting
      Reason:   ImagePullBackOff
    Ready:      False
    Requests:
      cpu:                        29
      memory:                     240Gi
      vpc.amazonaws.com/pod-eni:  1
    Environment:
      LOG_LEVEL:  debug
    Mounts:
      /data from data (rw)
Conditions:
  Type           Status
  PodScheduled   False
Volumes:
  data:
    Type:       PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)
    ClaimName:  data-web-0
    ReadOnly:   false
QoS Class:                   Burstable
Node-Selectors:              karpenter.sh/nodepool=default
                             kubernetes.io/os=linux
Tolerations:                 dedicated=spark:NoSchedule
                             node.kubernetes.io/not-ready:NoExecute op=Exists for 300s
Topology Spread Constraints: topology.kubernetes.io/zone:DoNotSchedule when max skew 1 is exceeded for selector app=web
Events:
  Type     Reason            Age                  From               Message
  ----     ------            ----                 ----               -------
  Warning  FailedScheduling  106s (x2 over 6m46s)  karpenter          Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"500m"},
                                                                       no instance type has enough resources
  Warning  FailedScheduling  <unknown>            default-scheduler  0/10 nodes are available: 10 Insufficient cpu.
"#;

#[test]
fn describe_pod_fields() {
    let facts = facts_of(DESCRIBE_POD);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    let pod = &facts.pods[0];
    assert_eq!(
        pod.object_ref(),
        ObjectRef::new("Pod", Some("shop"), "web-0")
    );
    assert_eq!(pod.phase.as_deref(), Some("Pending"));
    assert_eq!(pod.node_name.as_deref(), Some("ip-10-0-1-2.ec2.internal"));
    assert_eq!(
        pod.meta.labels.get("tier").map(String::as_str),
        Some("frontend")
    );
    assert_eq!(
        pod.meta
            .annotations
            .get("karpenter.sh/do-not-disrupt")
            .map(String::as_str),
        Some("true")
    );
    assert_eq!(
        pod.meta.owners,
        vec![ObjectRef::new("StatefulSet", Some("shop"), "web")]
    );
    assert_eq!(pod.service_account.as_deref(), Some("web"));
    assert_eq!(pod.qos_class.as_deref(), Some("Burstable"));
    assert_eq!(pod.host_ports, vec![8080]);
    assert_eq!(pod.pvc_names, vec!["data-web-0"]);
    assert_eq!(pod.node_selector.len(), 2);
    assert_eq!(pod.node_selector["kubernetes.io/os"], "linux");
    let c = &pod.containers[0];
    assert_eq!(c.name, "app");
    assert_eq!(c.image.as_deref(), Some("nginx:1.27"));
    assert_eq!(c.state.as_deref(), Some("waiting"));
    assert_eq!(c.reason.as_deref(), Some("ImagePullBackOff"));
    assert_eq!(c.ready, Some(false));
    assert_eq!(c.requests["cpu"], "29");
    assert_eq!(c.requests["vpc.amazonaws.com/pod-eni"], "1");
    assert_eq!(c.env["LOG_LEVEL"], "debug");
    assert_eq!(pod.conditions[0].condition_type, "PodScheduled");
    assert_eq!(pod.conditions[0].status, "False");
    assert_eq!(pod.tolerations.len(), 2);
    assert_eq!(pod.tolerations[0].key.as_deref(), Some("dedicated"));
    assert_eq!(pod.tolerations[0].value.as_deref(), Some("spark"));
    assert_eq!(pod.tolerations[0].effect.as_deref(), Some("NoSchedule"));
    assert_eq!(pod.tolerations[1].operator.as_deref(), Some("Exists"));
    assert_eq!(
        pod.topology_spread[0].topology_key,
        "topology.kubernetes.io/zone"
    );
    assert_eq!(pod.topology_spread[0].max_skew, Some(1));
    assert_eq!(
        pod.topology_spread[0].when_unsatisfiable.as_deref(),
        Some("DoNotSchedule")
    );
    // Events: object, count, wrapped message, `<unknown>` age, exact lines.
    assert_eq!(facts.events.len(), 2);
    let e = &facts.events[0];
    assert_eq!(e.object, Some(pod.object_ref()));
    assert_eq!(e.count, 2);
    assert_eq!(e.source, "karpenter");
    assert_eq!(e.evidence.line, 47);
    assert!(e
        .message
        .ends_with("daemonset overhead={\"cpu\":\"500m\"}, no instance type has enough resources"));
    assert_eq!(facts.events[1].age.as_deref(), Some("<unknown>"));
    assert_eq!(facts.events[1].evidence.line, 49);
    assert!(facts.has(Collected::PodEvents));
    let event_message = facts
        .messages
        .iter()
        .find(|m| m.origin == MessageOrigin::Event)
        .unwrap();
    assert!(event_message
        .text
        .starts_with("Failed to schedule pod, incompatible"));
    assert_eq!(event_message.reason.as_deref(), Some("FailedScheduling"));
    assert_eq!(event_message.component.as_deref(), Some("karpenter"));
    // Free-text fields become messages too.
    let fields: Vec<&str> = facts
        .messages
        .iter()
        .filter(|m| m.origin == MessageOrigin::ObjectField)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(
        fields,
        vec![
            "Evicted",
            "The node was low on resource: ephemeral-storage.",
            "ImagePullBackOff"
        ]
    );
    // No describe line leaks out as unrecognised text.
    assert!(facts
        .messages
        .iter()
        .all(|m| m.origin != MessageOrigin::Unrecognised));
}

const DESCRIBE_NODE: &str = "Name:               ip-10-0-71-41.ec2.internal
Roles:              <none>
Labels:             karpenter.sh/nodepool=default
                    topology.kubernetes.io/zone=us-east-1b
Annotations:        karpenter.sh/nodepool-hash: 9876543210987654321
Taints:             node.kubernetes.io/not-ready:NoSchedule
                    karpenter.sh/disrupted:NoSchedule
Unschedulable:      true
Conditions:
  Type             Status  LastHeartbeatTime                 LastTransitionTime                Reason                       Message
  ----             ------  -----------------                 ------------------                ------                       -------
  MemoryPressure   False   Mon, 12 May 2025 09:24:10 +0000   Mon, 12 May 2025 09:14:02 +0000   KubeletHasSufficientMemory   kubelet has sufficient memory available
  Ready            False   Mon, 12 May 2025 09:24:10 +0000   Mon, 12 May 2025 09:14:02 +0000   KubeletNotReady              container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized
Capacity:
  cpu:                2
  pods:               29
Allocatable:
  cpu:                1930m
  pods:               29
ProviderID:                   aws:///us-east-1b/i-0123456789abcdef0
Non-terminated Pods:          (2 in total)
  Namespace                   Name                   CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age
  ---------                   ----                   ------------  ----------  ---------------  -------------  ---
  kube-system                 aws-node-9wqkv         25m (1%)      0 (0%)      0 (0%)           0 (0%)         10m
  shop                        web-0                  1 (51%)       0 (0%)      0 (0%)           0 (0%)         10m
Events:
  Type    Reason             Age   From       Message
  ----    ------             ----  ----       -------
  Normal  DisruptionBlocked  9m    karpenter  Node isn't initialized
";

#[test]
fn describe_node_fields() {
    let facts = facts_of(DESCRIBE_NODE);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    let node = &facts.nodes[0];
    assert_eq!(node.meta.name, "ip-10-0-71-41.ec2.internal");
    assert_eq!(node.meta.labels["karpenter.sh/nodepool"], "default");
    assert_eq!(node.taints.len(), 2);
    assert_eq!(
        node.taints[0].display(),
        "node.kubernetes.io/not-ready:NoSchedule"
    );
    assert!(node.unschedulable);
    assert_eq!(node.capacity["cpu"], "2");
    assert_eq!(node.allocatable["cpu"], "1930m");
    assert_eq!(
        node.provider_id.as_deref(),
        Some("aws:///us-east-1b/i-0123456789abcdef0")
    );
    assert_eq!(
        node.pods,
        vec![
            ObjectRef::new("Pod", Some("kube-system"), "aws-node-9wqkv"),
            ObjectRef::new("Pod", Some("shop"), "web-0")
        ]
    );
    let ready = node
        .conditions
        .iter()
        .find(|c| c.condition_type == "Ready")
        .unwrap();
    assert_eq!(ready.status, "False");
    assert_eq!(ready.reason.as_deref(), Some("KubeletNotReady"));
    assert!(ready
        .message
        .as_deref()
        .unwrap()
        .ends_with("cni plugin not initialized"));
    let condition = facts
        .messages
        .iter()
        .find(|m| {
            m.origin == MessageOrigin::Condition && m.reason.as_deref() == Some("KubeletNotReady")
        })
        .unwrap();
    assert!(condition
        .text
        .starts_with("Ready=False KubeletNotReady: container runtime network not ready"));
    assert_eq!(condition.evidence.line, 13);
    assert_eq!(
        facts.events[0].object,
        Some(ObjectRef::new("Node", None, "ip-10-0-71-41.ec2.internal"))
    );
    assert_eq!(facts.events[0].evidence.line, 29);
    assert!(facts.has(Collected::Nodes));
}

#[test]
fn a_node_describe_cut_to_its_name_labels_and_events_is_a_node() {
    let events = "Events:
  Type    Reason             Age                From       Message
  ----    ------             ----               ----       -------
  Normal  DisruptionBlocked  2m (x12 over 60m)  karpenter  Cannot disrupt Node: state node is nominated for a pending pod
";
    // The name, a node label, or a node's event each tell it.
    for header in [
        "Name:  ip-10-0-45-12.ec2.internal\nLabels:  team=a\n",
        "Name:  worker-7\nLabels:  kubernetes.io/hostname=worker-7\n            team=a\n",
        "Name:  worker-7\nLabels:  team=a\n",
    ] {
        let facts = facts_of(&format!("{header}{events}"));
        assert_eq!(facts.nodes.len(), 1, "{header}");
        assert!(facts.pods.is_empty(), "{header}");
        assert_eq!(
            facts.events[0].object.as_ref().map(|o| o.kind.as_str()),
            Some("Node"),
            "{header}"
        );
    }
    // Namespaced, or nothing of a node's: not a node.
    let pod = "Name:  web-0\nNamespace:  shop\nLabels:  kubernetes.io/hostname=x\n";
    assert!(facts_of(&format!("{pod}{events}")).nodes.is_empty());
    let claim = "Name:  general-x7k2p\nLabels:  karpenter.sh/nodepool=general\n";
    let claim_events = events.replace("Cannot disrupt Node:", "Cannot disrupt NodeClaim:");
    assert!(facts_of(&format!("{claim}{claim_events}")).nodes.is_empty());
}

#[test]
fn a_pod_describe_cut_to_its_name_node_status_and_events_is_a_pod() {
    let header = "Name:             api-5f6d7c8b9-abcde\nNamespace:        shop\n";
    let events = "Events:
  Type     Reason            Age   From               Message
  ----     ------            ----  ----               -------
  Normal   Scheduled         18m   default-scheduler  Successfully assigned shop/api-5f6d7c8b9-abcde to ip-10-0-1-23.ec2.internal
";
    let bound =
        "Node:             ip-10-0-1-23.ec2.internal/10.0.1.23\nStatus:           Running\n";
    let pending = "Node:             <none>\nStatus:           Pending\n";
    let no_node = "Status:           Running\n";
    // A pod's `Node:` value, or a pod's event, each tell it.
    for (body, events, phase) in [
        (bound, events, "Running"),
        (pending, "", "Pending"),
        (no_node, events, "Running"),
    ] {
        let text = format!("{header}{body}{events}");
        let facts = facts_of(&text);
        assert!(
            facts.input_errors.is_empty(),
            "{text}: {:?}",
            facts.input_errors
        );
        assert_eq!(facts.pods.len(), 1, "{text}");
        let pod = &facts.pods[0];
        assert_eq!(pod.meta.name, "api-5f6d7c8b9-abcde");
        assert_eq!(pod.meta.namespace.as_deref(), Some("shop"));
        assert_eq!(pod.phase.as_deref(), Some(phase));
        assert!(facts.nodes.is_empty(), "{text}");
    }
    let facts = facts_of(&format!("{header}{bound}{events}"));
    assert_eq!(
        facts.pods[0].node_name.as_deref(),
        Some("ip-10-0-1-23.ec2.internal")
    );
    assert_eq!(facts.events[0].object, Some(facts.pods[0].object_ref()));
    assert!(facts.has(Collected::PodEvents));
    // Another namespaced kind cut the same way (a Deployment's events), a `Node:` that is no
    // pod's, or no namespace: not a pod.
    let deployment_events = "Events:
  Type    Reason             Age   From                   Message
  ----    ------             ----  ----                   -------
  Normal  ScalingReplicaSet  3m    deployment-controller  Scaled up replica set web-7d9f to 3
";
    for text in [
        format!("{header}Status:  Running\n{deployment_events}"),
        format!("{header}Node:  worker-7\nStatus:  Running\n"),
        "Name:  api-5f6d7c8b9-abcde\nNode:  <none>\nStatus:  Pending\n".to_string(),
    ] {
        assert!(facts_of(&text).pods.is_empty(), "{text}");
    }
}

#[test]
fn a_describe_events_table_without_its_heading_is_the_described_objects() {
    let table = "  Type     Reason            Age               From       Message
  ----     ------            ----              ----       -------
  Warning  FailedScheduling  19s (x4 over 3m)  karpenter  Failed to schedule pod, no instance type has enough resources
";
    let facts = facts_of(&format!(
        "$ kubectl describe pod -n ml train-job-4-abcde | tail -3\n{table}"
    ));
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    assert_eq!(facts.events.len(), 1);
    let event = &facts.events[0];
    assert_eq!(
        event.object,
        Some(ObjectRef::new("Pod", Some("ml"), "train-job-4-abcde"))
    );
    assert!(event.from_describe);
    assert_eq!(event.count, 4);
    assert!(facts.has(Collected::PodEvents));
    let claim = facts_of(&format!(
        "$ kubectl describe nodeclaim general-x7k2p | tail -3\n{}",
        table.trim_start()
    ));
    assert_eq!(
        claim.events[0].object,
        Some(ObjectRef::new("NodeClaim", None, "general-x7k2p"))
    );
    // No describe command (or one naming no object): the rows name nothing.
    for command in [
        "$ kubectl get pods -n ml\n",
        "$ kubectl describe pods -n ml\n",
        "",
    ] {
        let facts = facts_of(&format!("{command}{table}"));
        assert_eq!(facts.events.len(), 1, "{command}");
        assert_eq!(facts.events[0].object, None, "{command}");
    }
}

#[test]
fn text_no_format_claims_is_about_the_one_object_the_command_prints() {
    let slice = "status:
  conditions:
  - message: EC2NodeClass \"default\" not found
    reason: NodeClassNotFound
    status: \"False\"
    type: NodeClassReady
";
    let about = |command: &str| -> Vec<(Option<ObjectRef>, Option<String>)> {
        let facts = facts_of(&format!(
            "{command}\n{slice}\nStill NodeClassNotFound after the fix\n"
        ));
        // A slice names the object; it never becomes one (its other fields are not absent).
        assert!(facts.nodepools.is_empty(), "{command}");
        facts
            .messages
            .iter()
            .filter(|m| {
                m.origin == MessageOrigin::Unrecognised && m.text.contains("NodeClassNotFound")
            })
            .map(|m| (m.object.clone(), m.nodepool.clone()))
            .collect()
    };
    let nodepool = ObjectRef::new("NodePool", None, "default");
    let found = about("$ kubectl get nodepool default -o yaml | sed -n '/^status/,$p'");
    assert_eq!(found.len(), 2);
    assert_eq!(found[0], (Some(nodepool), Some("default".to_string())));
    // The text after the blank line is no longer the command's output.
    assert_eq!(found[1], (None, None));
    let pod = about("$ kubectl get pod -n shop web-0 -o yaml | yq .status");
    assert_eq!(
        pod[0],
        (Some(ObjectRef::new("Pod", Some("shop"), "web-0")), None)
    );
    // Several objects, or a command that prints no object: about nothing.
    for command in [
        "$ kubectl get nodepools -o yaml | grep -A6 conditions",
        "$ kubectl logs -n karpenter deploy/karpenter | grep NodeClassNotFound",
        "",
    ] {
        assert!(
            about(command).iter().all(|f| *f == (None, None)),
            "{command}"
        );
    }
}

#[test]
fn a_row_shifted_by_hand_still_reads_into_its_columns() {
    // `team-a-8xk2m` was one character longer in the real output: the rest of the row moved
    // left by one, and the empty NODE cell hides the gaps.
    let facts = facts_of(
        "$ kubectl get nodeclaims
NAME            TYPE        CAPACITY    ZONE         NODE   READY     AGE
team-a-8xk2m   m5.xlarge   on-demand   us-east-1b          Unknown   25m
",
    );
    let claim = &facts.nodeclaims[0];
    assert_eq!(claim.meta.name, "team-a-8xk2m");
    assert_eq!(claim.instance_type.as_deref(), Some("m5.xlarge"));
    assert_eq!(claim.node_name, None);
    // A row far off every column is not forced into one.
    let facts = facts_of(
        "$ kubectl get nodeclaims
NAME            TYPE        CAPACITY    ZONE         NODE   READY     AGE
team-a-8xk2m                                   m5.xlarge                 Unknown   25m
",
    );
    assert!(facts
        .nodeclaims
        .iter()
        .all(|c| c.instance_type.as_deref() != Some("m5.xlarge")));
}

/// An anonymiser shortened the OBJECT cell so much that the header's MESSAGE position falls
/// on a space inside the gap: cut at the positions, OBJECT would hold the message's first
/// words. A run of two spaces inside a cell other than the last gives the shift away.
#[test]
fn a_row_whose_cell_holds_a_gap_is_cut_at_its_gaps() {
    let facts = facts_of(
        "NAMESPACE   LAST SEEN   TYPE     REASON              OBJECT                              MESSAGE
default     3m          Normal   DisruptionBlocked   node/<redacted>     Node is drifted but cannot be disrupted
",
    );
    let event = &facts.events[0];
    assert_eq!(event.message, "Node is drifted but cannot be disrupted");
    assert_eq!(
        event.object.as_ref().map(|o| o.name.as_str()),
        Some("<redacted>")
    );
}

#[test]
fn a_log_line_right_under_an_events_table_is_not_a_wrapped_message() {
    for header_and_row in [
        "NAMESPACE   LAST SEEN   TYPE     REASON           OBJECT                         MESSAGE\ndefault     5m          Normal   CordonAndDrain   node/ip-10-9-77-2.ec2.internal Node successfully cordoned and drained\n",
        "LAST SEEN   TYPE     REASON           OBJECT                         MESSAGE\n5m          Normal   CordonAndDrain   node/ip-10-9-77-2.ec2.internal Node successfully cordoned and drained\n",
    ] {
        for log in [
            "2026/11/18 04:12:41 INF Node successfully cordoned and drained node_name=ip-10-44-19-201.ec2.internal",
            "2026-11-18T04:12:41.000Z\tINFO\tcontroller\tdeleted node\t{\"commit\": \"a1b2c3d\"}",
        ] {
            let facts = facts_of(&format!("{header_and_row}{log}\n"));
            assert_eq!(facts.events.len(), 1, "{log}");
            assert_eq!(
                facts.events[0].message, "Node successfully cordoned and drained",
                "{log}"
            );
        }
    }
    // A message wrapped by the terminal still continues its row.
    let facts = facts_of("LAST SEEN   TYPE     REASON           OBJECT                         MESSAGE\n5m          Normal   CordonAndDrain   node/ip-10-9-77-2.ec2.internal Node successfully cordoned\n  and drained\n");
    assert_eq!(
        facts.events[0].message,
        "Node successfully cordoned and drained"
    );
}

#[test]
fn get_events_tables() {
    let text = "$ kubectl get events -A
NAMESPACE   LAST SEEN   TYPE      REASON                      OBJECT                    MESSAGE
default     12s         Warning                               nodeclaim/default-7xk2p   Attempted to launch a spot instance but failed due to \"AuthFailure.ServiceLinkedRoleCreationNotPermitted\"
shop        2m          Warning   FailedScheduling            pod/web-0                 0/3 nodes are available: 3 Insufficient cpu.
default     1m          Normal    DisruptionBlocked           nodepool/default          No allowed disruptions due to blocking budget

$ kubectl get events -n checkout
LAST SEEN   TYPE      REASON                   OBJECT                         MESSAGE
41s         Warning   FailedCreatePodSandBox   pod/cart-api-6f4d8b7c9-2xkpl   Failed to create pod sandbox: add cmd: failed to assign an IP address to container
";
    let facts = facts_of(text);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    let e = &facts.events;
    assert_eq!(e.len(), 4);
    assert_eq!(e[0].reason, "");
    assert_eq!(
        e[0].object,
        Some(ObjectRef::new("NodeClaim", None, "default-7xk2p"))
    );
    assert_eq!(e[0].evidence.line, 3);
    assert_eq!(
        e[1].object,
        Some(ObjectRef::new("Pod", Some("shop"), "web-0"))
    );
    assert_eq!(e[1].age.as_deref(), Some("2m"));
    let nodepool_message = facts
        .messages
        .iter()
        .find(|m| m.text.starts_with("No allowed disruptions"))
        .unwrap();
    assert_eq!(nodepool_message.nodepool.as_deref(), Some("default"));
    // The namespace comes from the command when the table has no NAMESPACE column.
    assert_eq!(
        e[3].object,
        Some(ObjectRef::new(
            "Pod",
            Some("checkout"),
            "cart-api-6f4d8b7c9-2xkpl"
        ))
    );
    assert_eq!(e[3].evidence.line, 9);
    assert!(facts.has(Collected::PodEvents));
}

#[test]
fn a_yaml_document_right_after_a_table_is_yaml() {
    // Pastes join outputs with `---` and no blank line: the table ends there.
    for separator in ["---\n", ""] {
        let text = format!("LAST SEEN   TYPE      REASON                   OBJECT           MESSAGE
30s         Warning   FailedCreatePodSandBox   pod/web-7d9f-a   Failed to create pod sandbox: add cmd: failed to assign an IP address to container
{separator}apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  kubelet:
    maxPods: 110
");
        let facts = facts_of(&text);
        assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
        assert_eq!(facts.events.len(), 1);
        assert_eq!(facts.nodeclasses.len(), 1, "{separator:?}");
        assert_eq!(facts.nodeclasses[0].max_pods(), Some(110));
    }
}

#[test]
fn wide_and_old_event_columns_and_loose_rows() {
    let text = "LAST SEEN   TYPE      REASON             OBJECT           SUBOBJECT   SOURCE      MESSAGE                         FIRST SEEN   COUNT   NAME
5m          Warning   FailedScheduling   pod/web-0                    karpenter   Failed to schedule pod, x       1h           7       web-0.17f
";
    let facts = facts_of(text);
    assert_eq!(facts.events[0].count, 7);
    assert_eq!(facts.events[0].source, "karpenter");
    assert_eq!(facts.events[0].message, "Failed to schedule pod, x");

    let text = "time=2023-06-12T19:18:15Z type=Warning reason=FailedCreatePodSandBox from=kubelet message=Failed to create pod sandbox: x
Warning   FailedAttachVolume    pod/example-pod                      AttachVolume.Attach failed for volume \"v\"
  Warning  FailedMount  3m (x4 over 9m)  kubelet  Unable to attach or mount volumes
";
    let facts = facts_of(text);
    assert!(facts.input_errors.is_empty());
    let e = &facts.events;
    assert_eq!(e.len(), 3);
    assert_eq!(e[0].reason, "FailedCreatePodSandBox");
    assert_eq!(e[0].source, "kubelet");
    assert_eq!(e[0].message, "Failed to create pod sandbox: x");
    assert_eq!(
        facts.messages[0].time.as_deref(),
        Some("2023-06-12T19:18:15Z")
    );
    assert_eq!(
        e[1].object,
        Some(ObjectRef::new("Pod", None, "example-pod"))
    );
    assert_eq!(e[1].message, "AttachVolume.Attach failed for volume \"v\"");
    assert_eq!(e[2].count, 4);
    assert_eq!(e[2].source, "kubelet");
}

#[test]
fn standalone_events_take_the_object_from_the_command() {
    let text = "$ kubectl describe node ip-10-0-18-77.ec2.internal
...
Events:
  Type    Reason             Age   From       Message
  ----    ------             ----  ----       -------
  Normal  DisruptionBlocked  40s   karpenter  Pdb prevents pod evictions (PodDisruptionBudget=[ingress-nginx/ingress-nginx-controller])
";
    let facts = facts_of(text);
    assert_eq!(
        facts.events[0].object,
        Some(ObjectRef::new("Node", None, "ip-10-0-18-77.ec2.internal"))
    );
    assert_eq!(facts.events[0].evidence.line, 6);
    let text = "Events:\n  Type  Reason\n";
    let facts = facts_of(text);
    assert!(facts.events.is_empty());
}

#[test]
fn json_log_lines_and_decoded_text() {
    let text = r#"{"level":"INFO","time":"2025-08-18T03:12:44.101Z","logger":"controller","message":"found provisionable pod(s)","commit":"1c39126","controller":"provisioner","Pods":"coder/w-1","duration":"38ms"}
{"level":"ERROR","time":"2025-08-18T03:12:44.139Z","logger":"controller","message":"could not schedule pod","commit":"1c39126","controller":"provisioner","Pod":{"name":"w-1","namespace":"coder"},"error":"incompatible requirements, label \"karpenter.sh/nodepol\" does not have known values (typo of \"karpenter.sh/nodepool\"?)"}
"#;
    let facts = facts_of(text);
    assert_eq!(facts.logs.len(), 2);
    let m = &facts.messages[1];
    assert_eq!(m.origin, MessageOrigin::KarpenterLog);
    assert_eq!(
        m.text,
        "could not schedule pod: incompatible requirements, label \"karpenter.sh/nodepol\" does not have known values (typo of \"karpenter.sh/nodepool\"?)"
    );
    assert_eq!(m.object, Some(ObjectRef::new("Pod", Some("coder"), "w-1")));
    assert_eq!(m.evidence.line, 2);
    assert_eq!(m.time.as_deref(), Some("2025-08-18T03:12:44.139Z"));
    assert_eq!(facts.logs[0].fields["commit"], "1c39126");
    assert_eq!(facts.log_lines_by_level["INFO"], 1);
    assert_eq!(facts.log_lines_by_level["ERROR"], 1);
    assert!(facts.has(Collected::KarpenterLogs));
    assert!(!facts.has(Collected::DebugLogs));
}

#[test]
fn console_record_spanning_lines() {
    let text = "ERROR   controller.aws.pricing  updating on-demand pricing, RequestError: send request failed
caused by: Post \"https://api.pricing.us-east-1.amazonaws.com/\": dial tcp 52.94.231.236:443: i/o timeout, using existing pricing data from 2022-08-17T00:19:52Z  {\"commit\": \"4b5f953\"}
next line of text
";
    let facts = facts_of(text);
    assert_eq!(facts.logs.len(), 1);
    let r = &facts.logs[0];
    assert_eq!(r.level, "ERROR");
    assert_eq!(r.controller.as_deref(), Some("aws.pricing"));
    assert!(r.message.contains("send request failed\ncaused by: Post"));
    assert!(r
        .message
        .ends_with("using existing pricing data from 2022-08-17T00:19:52Z"));
    assert_eq!(r.fields["commit"], "4b5f953");
    assert_eq!(facts.messages[1].text, "next line of text");
    assert_eq!(facts.messages[1].evidence.line, 3);
}

#[test]
fn truncated_log_line_is_an_error_and_still_scanned() {
    let text = "{\"level\":\"INFO\",\"message\":\"starting\"}\n{\"level\":\"ERROR\",\"time\":\"2025\",\"message\":\"could not schedule pod\",\"error\":\"did not tolerate taint (taint=a=b:NoSchedule\n{\"level\":\"INFO\",\"message\":\"found provisionable pod(s)\"}\n";
    let facts = facts_of(text);
    assert_eq!(facts.input_errors.len(), 1);
    let error = &facts.input_errors[0];
    assert_eq!((error.source.as_str(), error.line), ("paste", 2));
    assert!(
        error.message.starts_with("truncated JSON log line"),
        "{}",
        error.message
    );
    assert!(facts
        .messages
        .iter()
        .any(|m| m.origin == MessageOrigin::Unrecognised
            && m.text.contains("did not tolerate taint")));
}

#[test]
fn kubelet_journal_lines() {
    let text = "Jan 27 21:23:58 ip-172-31-9-51.eu-west-1.compute.internal kubelet[3130]: E0127 21:23:58.112233    3130 kubelet_node_status.go:92] \"Unable to register node with API server\" err=\"Unauthorized\" node=\"ip-172-31-9-51.eu-west-1.compute.internal\"\n";
    let facts = facts_of(text);
    let m = &facts.messages[0];
    assert_eq!(m.origin, MessageOrigin::Kubelet);
    assert_eq!(
        m.text,
        "Unable to register node with API server err=\"Unauthorized\" node=\"ip-172-31-9-51.eu-west-1.compute.internal\""
    );
    assert_eq!(
        m.object,
        Some(ObjectRef::new(
            "Node",
            None,
            "ip-172-31-9-51.eu-west-1.compute.internal"
        ))
    );
    assert_eq!(m.time.as_deref(), Some("Jan 27 21:23:58"));
    assert!(facts.has(Collected::KubeletLogs));
}

#[test]
fn get_tables_and_empty_lists() {
    let text = "$ kubectl get nodeclaims
No resources found

$ kubectl get pods -n karpenter
No resources found in karpenter namespace.

$ kubectl get nodepools
NAME              NODECLASS   NODES   READY   AGE
general-purpose   default     0       True    6d

$ kubectl get pdb -A
NAMESPACE       NAME                       MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE
ingress-nginx   ingress-nginx-controller   1               N/A               0                     41d

$ kubectl get deploy,pods -n kube-system -o wide
NAME                        READY   UP-TO-DATE   AVAILABLE   AGE    CONTAINERS   IMAGES                                                 SELECTOR
deployment.apps/karpenter   0/2     2            0           214d   controller   public.ecr.aws/karpenter/controller:1.6.3@sha256:9f2   app.kubernetes.io/name=karpenter

NAME                             READY   STATUS             RESTARTS   AGE   IP       NODE     NOMINATED NODE   READINESS GATES
pod/karpenter-6b9d7c8f45-m4xkw   0/1     Pending            0          38m   <none>   <none>   <none>           <none>
pod/web-1                        0/1     ImagePullBackOff   0          38m   <none>   ip-1     <none>           <none>

$ kubectl get nodeclaims -o wide
NAME            TYPE         CAPACITY   ZONE         NODE   READY     AGE   IMAGEID   ID   NODEPOOL   NODECLASS   DRIFTED
default-abc12   m5.large     spot       us-east-1a          Unknown   3m                   default    default
";
    let facts = facts_of(text);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    assert_eq!(facts.empty_lists.len(), 2);
    assert_eq!(facts.empty_lists[0].resource.as_deref(), Some("nodeclaims"));
    assert_eq!(facts.empty_lists[0].namespace, None);
    assert_eq!(facts.empty_lists[0].evidence.line, 2);
    assert_eq!(facts.empty_lists[1].resource.as_deref(), Some("pods"));
    assert_eq!(facts.empty_lists[1].namespace.as_deref(), Some("karpenter"));
    assert!(facts.has(Collected::NodeClaims));
    assert!(facts.has(Collected::NodePools));
    assert!(facts.has(Collected::Pdbs));
    let pool = &facts.nodepools[0];
    assert_eq!(pool.meta.name, "general-purpose");
    assert!(pool.meta.from_table);
    assert_eq!(pool.nodeclass_ref.as_deref(), Some("default"));
    assert_eq!(pool.conditions[0].status, "True");
    let pdb = &facts.pdbs[0];
    assert_eq!(pdb.meta.namespace.as_deref(), Some("ingress-nginx"));
    assert_eq!(pdb.min_available.as_deref(), Some("1"));
    assert_eq!(pdb.max_unavailable, None);
    assert_eq!(pdb.disruptions_allowed, Some(0));
    let deploy = &facts.workloads[0];
    assert_eq!(
        (deploy.kind.as_str(), deploy.replicas, deploy.ready_replicas),
        ("Deployment", Some(2), Some(0))
    );
    assert_eq!(deploy.meta.namespace.as_deref(), Some("kube-system"));
    assert!(facts.has(Collected::KarpenterDeployment));
    assert_eq!(facts.karpenter_version.as_deref(), Some("1.6.3"));
    assert_eq!(facts.pods.len(), 2);
    assert_eq!(facts.pods[0].phase.as_deref(), Some("Pending"));
    assert_eq!(facts.pods[1].node_name.as_deref(), Some("ip-1"));
    assert!(facts.messages.iter().any(|m| m.text == "ImagePullBackOff"
        && m.object == Some(ObjectRef::new("Pod", Some("kube-system"), "web-1"))));
    let claim = &facts.nodeclaims[0];
    assert_eq!(claim.instance_type.as_deref(), Some("m5.large"));
    assert_eq!(claim.node_name, None);
    assert_eq!(claim.nodepool.as_deref(), Some("default"));
    assert_eq!(claim.conditions[0].status, "Unknown");
}

#[test]
fn table_rows_never_replace_a_description() {
    let text = format!("{DESCRIBE_POD}\n$ kubectl get pods -n shop\nNAME    READY   STATUS    RESTARTS   AGE\nweb-0   0/1     Pending   0          5m\n");
    let facts = facts_of(&text);
    assert_eq!(facts.pods.len(), 1);
    assert!(!facts.pods[0].meta.from_table);
}

#[test]
fn a_table_of_the_context_namespace_joins_the_description_of_the_same_pod() {
    // No `-n`, no NAMESPACE column: the rows list whatever namespace the context points at.
    let text = format!("$ kubectl get pods\nNAME    READY   STATUS    RESTARTS   AGE\nweb-0   0/1     Pending   0          5m\napi-1   1/1     Running   0          2d\n\n{DESCRIBE_POD}");
    let facts = facts_of(&text);
    let names: Vec<_> = facts
        .pods
        .iter()
        .map(|p| {
            (
                p.meta.namespace.as_deref().unwrap_or(""),
                p.meta.name.as_str(),
            )
        })
        .collect();
    assert_eq!(names, [("shop", "web-0"), ("default", "api-1")]);
    // An explicit namespace is a fact: that table lists another pod of the same name.
    let text = format!("$ kubectl get pods -n default\nNAME    READY   STATUS    RESTARTS   AGE\nweb-0   0/1     Pending   0          5m\n\n{DESCRIBE_POD}");
    assert_eq!(facts_of(&text).pods.len(), 2);
}

#[test]
fn helm_list_tells_the_namespace_of_the_karpenter_release() {
    let text = "$ helm list -A\n\
NAME          NAMESPACE       REVISION  UPDATED                                  STATUS    CHART                APP VERSION\n\
karpenter-crd platform-crds   7         2025-10-01 08:00:00.111111 +0000 UTC     deployed  karpenter-crd-1.6.3  1.6.3\n\
karpenter     karpenter-sys   7         2025-10-01 08:00:01.654321 +0000 UTC     deployed  karpenter-1.6.3      1.6.3\n";
    let facts = facts_of(text);
    assert_eq!(facts.karpenter_namespace.as_deref(), Some("karpenter-sys"));
    assert_eq!(facts.karpenter_version.as_deref(), Some("1.6.3"));
    // Only the CRD chart: the controller's namespace is still unknown.
    let crds_only = text.lines().take(3).collect::<Vec<_>>().join("\n");
    assert_eq!(facts_of(&crds_only).karpenter_namespace, None);
}

#[test]
fn file_headers_switch_the_label_and_restart_line_numbers() {
    let text = "intro text\n==> pod.txt <==\nEvents:\n  Type     Reason   Age  From     Message\n  Warning  Failed   1m   kubelet  Error: ImagePullBackOff\n\n==> karpenter.log <==\n{\"level\":\"ERROR\",\"message\":\"could not schedule pod\"}\n";
    let facts = facts_of(text);
    let sources: Vec<(String, usize, MessageOrigin)> = facts
        .messages
        .iter()
        .map(|m| (m.evidence.source.clone(), m.evidence.line, m.origin))
        .collect();
    assert_eq!(
        sources,
        vec![
            ("paste".to_string(), 1, MessageOrigin::Unrecognised),
            ("pod.txt".to_string(), 3, MessageOrigin::Event),
            ("karpenter.log".to_string(), 1, MessageOrigin::KarpenterLog),
        ]
    );
}

#[test]
fn a_hard_wrapped_json_log_line_is_joined_back() {
    let line = r#"{"level":"ERROR","time":"2025-05-27T14:03:19.877Z","logger":"controller","message":"could not schedule pod","controller":"provisioner","Pod":{"name":"es-0","namespace":"search"},"error":"unsatisfiable topology constraint for topology spread, key=topology.kubernetes.io/zone"}"#;
    let wrapped: Vec<&str> = (0..line.len())
        .step_by(50)
        .map(|at| &line[at..(at + 50).min(line.len())])
        .collect();
    let facts = facts_of(&format!("{}\n", wrapped.join("\n")));
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    assert_eq!(facts.logs.len(), 1);
    assert_eq!(facts.logs[0].evidence.line, 1);
    assert_eq!(facts.logs[0].evidence.text, line);
    assert_eq!(facts.logs[0].error, facts_of(line).logs[0].error);
    // The line whole after its wrapped copy is the same record read twice.
    let both = facts_of(&format!("{}\n{line}\n", wrapped.join("\n")));
    assert_eq!(both.logs.len(), 1);
    assert_eq!(both.messages.len(), 1);
}

#[test]
fn an_archive_is_named_by_its_magic_bytes() {
    let gzip = [
        0x1f, 0x8b, 0x08, 0x08, 0x9a, 0x3c, 0x00, 0x00, 0x00, 0x03, b'k', 0x00, 0x85,
    ];
    let zip = [b'P', b'K', 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00];
    let png = [
        0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, b'I', b'H',
    ];
    let jpeg = [
        0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, b'J', b'F', b'I', b'F', 0x00, 0x01, 0x01,
    ];
    let gif = [
        b'G', b'I', b'F', b'8', b'9', b'a', 0x10, 0x00, 0x10, 0x00, 0x80, 0x00,
    ];
    for (bytes, start) in [
        (&gzip[..], "a gzip-compressed file"),
        (&zip[..], "a zip archive"),
        (
            &png[..],
            "a PNG image, not text: a screenshot cannot be read",
        ),
        (&jpeg[..], "a JPEG image"),
        (&gif[..], "a GIF image"),
    ] {
        let facts = facts_of(&String::from_utf8_lossy(bytes));
        assert_eq!(facts.input_errors.len(), 1);
        assert!(
            facts.input_errors[0].message.starts_with(start),
            "{}",
            facts.input_errors[0].message
        );
    }
}

#[test]
fn binary_garbage_is_one_error_and_the_rest_is_read() {
    let text = "\u{0}\u{1}\u{2}ELF\u{0}\u{0}\n\u{0}\u{0}\u{0}\u{0}\n\u{FFFD}\u{FFFD}\u{FFFD}x\nWarning  FailedScheduling  pod/web-0  0/3 nodes are available\n";
    let facts = facts_of(text);
    assert_eq!(facts.input_errors.len(), 1);
    assert_eq!(facts.input_errors[0].line, 1);
    assert!(facts.input_errors[0]
        .message
        .starts_with("3 lines of binary data"));
    assert_eq!(facts.events.len(), 1);
}

#[test]
fn describe_cut_in_the_middle_is_reported() {
    let text = "Name:         web-0\nNamespace:    shop\nStatus:       Pending\nContainers:\n";
    let facts = facts_of(text);
    assert_eq!(facts.pods.len(), 1);
    assert_eq!(facts.input_errors.len(), 1);
    assert_eq!(facts.input_errors[0].line, 4);
    assert!(facts.input_errors[0].message.contains("`Containers:`"));
}

#[test]
fn aws_cli_cloudwatch_outputs_are_log_records() {
    let text = r#"$ aws logs filter-log-events --log-group-name /aws/containerinsights/prod/application --filter-pattern '"could not schedule pod"'
{
    "events": [
        {
            "logStreamName": "karpenter-6d-abc_karpenter_controller-0123",
            "timestamp": 1756728000000,
            "message": "{\"level\":\"ERROR\",\"message\":\"could not schedule pod\",\"Pod\":{\"name\":\"etl-7\",\"namespace\":\"data\"},\"error\":\"all available instance types exceed limits for nodepool (NodePool=etl)\"}",
            "ingestionTime": 1756728001000
        },
        {
            "timestamp": 1756728001000,
            "message": "{\"level\":\"INFO\",\"message\":\"created nodeclaim\"}"
        }
    ],
    "searchedLogStreams": []
}
$ aws logs get-query-results --query-id 1234
{
    "results": [
        [
            {"field": "@timestamp", "value": "2025-09-01 12:00:00.000"},
            {"field": "@message", "value": "{\"level\":\"ERROR\",\"message\":\"failed launching nodeclaim\",\"error\":\"InsufficientInstanceCapacity: x\"}"}
        ]
    ],
    "statistics": {"recordsMatched": 1.0},
    "status": "Complete"
}
"#;
    let facts = facts_of(text);
    let messages = log_messages_and_lines(&facts);
    assert_eq!(
        messages,
        [
            // Each record's evidence is its `message` line, not the `{` of its item.
            ("could not schedule pod", 7),
            ("created nodeclaim", 12),
            ("failed launching nodeclaim", 22)
        ]
    );
    assert_eq!(
        facts.logs[0].field_name("Pod").as_deref(),
        Some("data/etl-7")
    );
}

#[test]
fn json_values_are_routed_by_shape() {
    let text = r#"{"eventNamespace":"default","involvedObject":{"kind":"Node","name":"ip-1"},"reason":"DisruptionBlocked","eventMessage":"Cannot disrupt Node: PDB \"a/b\" prevents pod evictions","source":{"component":"karpenter"},"lastTimestamp":"2024-02-26T16:41:54Z","count":3,"type":"Normal"}
[
    {
        "SubnetId": "subnet-0b5e2c8d71f4a9e36",
        "AvailableIpAddressCount": 0
    }
]
[
  {"@timestamp": "2025-01-01 00:00:00.000", "@message": "{\"level\":\"ERROR\",\"message\":\"failed launching nodeclaim\",\"error\":\"InsufficientInstanceCapacity: x\"}"},
  {"@timestamp": "2025-01-01 00:00:01.000", "@message": "{\"level\":\"INFO\",\"message\":\"created nodeclaim\"}"}
]
"#;
    let facts = facts_of(text);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    assert_eq!(facts.events.len(), 1);
    assert_eq!(facts.events[0].count, 3);
    assert_eq!(
        facts.events[0].message,
        "Cannot disrupt Node: PDB \"a/b\" prevents pod evictions"
    );
    assert_eq!(
        facts.events[0].object,
        Some(ObjectRef::new("Node", None, "ip-1"))
    );
    assert!(facts
        .messages
        .iter()
        .any(|m| m.origin == MessageOrigin::Unrecognised
            && m.text == "\"AvailableIpAddressCount\": 0"
            && m.evidence.line == 5));
    assert_eq!(facts.logs.len(), 2);
    assert_eq!(facts.logs[0].evidence.line, 9);
    assert_eq!(facts.logs[1].evidence.line, 10);
    assert_eq!(
        facts.logs[0].time.as_deref(),
        Some("2025-01-01 00:00:00.000")
    );
}

#[test]
fn aws_logs_cli_output_is_a_log_export() {
    // `aws logs filter-log-events` (and `get-log-events`) print the records under `events`,
    // each line JSON-escaped in `message`.
    let text = r#"{
    "events": [
        {
            "logStreamName": "karpenter-6b8f7c9d4-q2w7z",
            "timestamp": 1748772000000,
            "message": "{\"level\":\"ERROR\",\"message\":\"Reconciler error\",\"NodeClaim\":{\"name\":\"checkout-m4v9t\"},\"error\":\"launching nodeclaim, creating instance, creating nodeclaim, InvalidLaunchTemplateId.NotFound: x\"}",
            "ingestionTime": 1748772001000,
            "eventId": "1"
        },
        {
            "logStreamName": "karpenter-6b8f7c9d4-q2w7z",
            "timestamp": 1748772001000,
            "message": "{\"level\":\"INFO\",\"message\":\"created nodeclaim\"}",
            "ingestionTime": 1748772002000,
            "eventId": "2"
        }
    ],
    "searchedLogStreams": []
}
"#;
    let facts = facts_of(text);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    assert_eq!(facts.logs.len(), 2);
    assert_eq!(facts.logs[0].message, "Reconciler error");
    assert_eq!(
        facts.logs[0].error.as_deref(),
        Some("launching nodeclaim, creating instance, creating nodeclaim, InvalidLaunchTemplateId.NotFound: x")
    );
    assert_eq!(facts.logs[0].evidence.line, 6);
    assert_eq!(facts.logs[1].evidence.line, 13);
    assert!(!facts
        .messages
        .iter()
        .any(|m| m.origin == MessageOrigin::Unrecognised
            && m.text.contains("InvalidLaunchTemplateId")));
}

#[test]
fn generic_describe_events_attach_to_the_custom_resource() {
    let text = "Name:         default\nNamespace:\nAPI Version:  karpenter.sh/v1\nKind:         NodePool\nSpec:\n  Weight:  10\nEvents:\n  Type    Reason             Age   From       Message\n  ----    ------             ----  ----       -------\n  Normal  DisruptionBlocked  30s   karpenter  No allowed disruptions due to blocking budget\n";
    let facts = facts_of(text);
    assert_eq!(
        facts.events[0].object,
        Some(ObjectRef::new("NodePool", None, "default"))
    );
    let m = facts
        .messages
        .iter()
        .find(|m| m.origin == MessageOrigin::Event)
        .unwrap();
    assert_eq!(m.nodepool.as_deref(), Some("default"));
    // The objects module got the block without its Events table.
    assert!(!facts
        .messages
        .iter()
        .any(|m| m.origin != MessageOrigin::Event && m.text.contains("blocking budget")));
}

#[test]
fn describe_pdb_and_deployment() {
    let text = "Name:           ingress-nginx-controller
Namespace:      ingress-nginx
Min available:  1
Selector:       app.kubernetes.io/component=controller,app.kubernetes.io/name=ingress-nginx
Status:
    Allowed disruptions:  0
    Current:              1
    Desired:              1
    Total:                2
Events:                   <none>

Name:                   karpenter
Namespace:              kube-system
Labels:                 app.kubernetes.io/name=karpenter
Selector:               app.kubernetes.io/name=karpenter
Replicas:               2 desired | 2 updated | 2 total | 1 available | 1 unavailable
StrategyType:           RollingUpdate
Pod Template:
  Labels:           app.kubernetes.io/name=karpenter
  Service Account:  karpenter
  Containers:
   controller:
    Image:      public.ecr.aws/karpenter/controller:1.2.0
    Environment:
      LOG_LEVEL:  debug
Events:          <none>
";
    let facts = facts_of(text);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    let pdb = &facts.pdbs[0];
    assert_eq!(pdb.min_available.as_deref(), Some("1"));
    assert_eq!(pdb.disruptions_allowed, Some(0));
    assert_eq!(
        (pdb.current_healthy, pdb.desired_healthy, pdb.expected_pods),
        (Some(1), Some(1), Some(2))
    );
    assert_eq!(
        pdb.selector.match_labels["app.kubernetes.io/component"],
        "controller"
    );
    let w = &facts.workloads[0];
    assert_eq!(
        (w.kind.as_str(), w.replicas, w.ready_replicas),
        ("Deployment", Some(2), Some(1))
    );
    assert_eq!(w.template_labels["app.kubernetes.io/name"], "karpenter");
    assert_eq!(w.containers[0].env["LOG_LEVEL"], "debug");
    assert!(facts.has(Collected::KarpenterDeployment));
    assert_eq!(facts.karpenter_version.as_deref(), Some("1.2.0"));
}

/// What must not depend on how the input reached ingest (streamed or whole, in which order).
fn signature(facts: &Facts) -> Vec<String> {
    let mut out: Vec<String> = facts
        .messages
        .iter()
        .map(|m| format!("{:?} {} {:?} {:?}", m.origin, m.text, m.object, m.reason))
        .collect();
    out.extend(
        facts
            .events
            .iter()
            .map(|e| format!("event {} {}", e.reason, e.message)),
    );
    out.extend(
        facts
            .pods
            .iter()
            .map(|p| format!("pod {:?} {:?}", p.meta.name, p.phase)),
    );
    out.extend(facts.nodes.iter().map(|n| format!("node {}", n.meta.name)));
    out.extend(
        facts
            .empty_lists
            .iter()
            .map(|e| format!("empty {:?}", e.resource)),
    );
    out.push(format!("{:?}", facts.collected));
    out.sort();
    out
}

#[test]
fn streamed_input_gives_the_same_facts() {
    // A node's bundle: the VPC CNI's zap-default records (counted apart) among Karpenter's.
    let mut bundle = String::new();
    for i in 0..40 {
        bundle.push_str(&format!("{{\"level\":\"info\",\"ts\":\"2026-12-06T20:42:0{}.000Z\",\"caller\":\"ipamd/ipamd.go:455\",\"msg\":\"Reconcile ENI pool {i}\"}}\n", i % 10));
        bundle.push_str(&format!("{{\"level\":\"INFO\",\"time\":\"2026-12-06T20:42:0{}.000Z\",\"logger\":\"controller\",\"message\":\"found provisionable pod(s)\",\"Pods\":\"shop/web-{i}\"}}\n", i % 10));
        // Each line its own time: the same line with the same time is one line read twice.
        bundle.push_str(&format!("{{\"level\":\"debug\",\"ts\":\"2026-12-06T20:42:03.4{i:02}Z\",\"caller\":\"ipamd/ipamd.go:455\",\"msg\":\"Failed to call ec2:DescribeNetworkInterfaces: UnauthorizedOperation\"}}\n"));
    }
    let inputs = corpus_inputs()
        .into_iter()
        .chain([("bundle".to_string(), bundle)]);
    for (name, text) in inputs {
        let whole = ingest(&[Document::new(name.clone(), text.clone())]);
        let mut scanner = scan::stream_scanner(name.clone());
        for chunk in text.as_bytes().chunks(97) {
            scanner.feed(chunk);
        }
        let streamed = ingest(&[scanner.finish().document]);
        assert_eq!(signature(&whole), signature(&streamed), "{name}");
        assert_eq!(
            whole.log_lines_by_level, streamed.log_lines_by_level,
            "{name}"
        );
        assert_eq!(
            whole.other_component_log_lines, streamed.other_component_log_lines,
            "{name}"
        );
        if name == "bundle" {
            assert_eq!(whole.log_lines_by_level.values().sum::<usize>(), 40);
            assert_eq!(whole.other_component_log_lines, 80);
        }
        let lines = |f: &Facts| {
            f.messages
                .iter()
                .map(|m| m.evidence.line)
                .collect::<Vec<_>>()
        };
        assert_eq!(lines(&whole), lines(&streamed), "{name}");
    }
}

#[test]
fn mixed_pastes_in_any_order_give_the_facts_of_the_parts() {
    let parts = [
        DESCRIBE_POD.to_string(),
        DESCRIBE_NODE.to_string(),
        "$ kubectl get nodeclaims\nNo resources found\n".to_string(),
        "Jan 27 21:23:58 ip-1 kubelet[3130]: E0127 21:23:58.112233    3130 x.go:92] \"Unable to register node with API server\" err=\"Unauthorized\"\n".to_string(),
        "{\"level\":\"ERROR\",\"message\":\"could not schedule pod\",\"error\":\"did not tolerate taint (taint=a=b:NoSchedule)\"}\n".to_string(),
        "LAST SEEN   TYPE      REASON             OBJECT        MESSAGE\n2m          Warning   FailedScheduling   pod/web-0     0/3 nodes are available: 3 Insufficient cpu.\n".to_string(),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n".to_string(),
    ];
    let mut alone: Vec<String> = parts
        .iter()
        .flat_map(|p| signature(&facts_of(p)))
        .filter(|s| !s.starts_with('{'))
        .collect();
    alone.sort();
    for rotation in 0..parts.len() {
        let mut order: Vec<&String> = parts.iter().collect();
        order.rotate_left(rotation);
        if rotation % 2 == 1 {
            order.reverse();
        }
        let pasted = order
            .iter()
            .map(|p| p.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let facts = facts_of(&pasted);
        assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
        let together: Vec<String> = signature(&facts)
            .into_iter()
            .filter(|s| !s.starts_with('{'))
            .collect();
        assert_eq!(together, alone, "rotation {rotation}");
    }
}

#[test]
fn prompt_lines_are_recorded_as_commands() {
    let facts = facts_of(
        "$ kubectl logs -n karpenter -l app.kubernetes.io/name=karpenter --prefix\n\
         {\"level\":\"INFO\",\"message\":\"x\"}\n\
         \n\
         $ kubectl get pdb,deploy -A\n\
         No resources found\n\
         \n\
         user@bastion:~$ k get pod/web-0 -n shop -o yaml | grep image\n\
         $ helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.3.1 --namespace kube-system --set settings.clusterName=prod\n\
         $ stern karpenter -n karpenter -c controller\n\
         $ journalctl -u kubelet -n 200\n",
    );
    let c = &facts.commands;
    assert_eq!(c.len(), 6, "{c:#?}");
    assert_eq!(
        (c[5].tool.as_str(), c[5].namespace.as_deref()),
        ("journalctl", None),
        "journalctl's -n is a line count"
    );
    assert_eq!(
        (
            c[0].tool.as_str(),
            c[0].verb.as_deref(),
            c[0].namespace.as_deref()
        ),
        ("kubectl", Some("logs"), Some("karpenter"))
    );
    assert_eq!(
        c[0].selector.as_deref(),
        Some("app.kubernetes.io/name=karpenter")
    );
    assert_eq!(c[0].evidence.line, 1);
    assert!(c[1].all_namespaces);
    assert_eq!(c[1].kinds, ["PodDisruptionBudget", "Deployment"]);
    assert!(c[1].is("get", "PodDisruptionBudget"));
    assert_eq!(
        (
            c[2].kinds.as_slice(),
            c[2].name.as_deref(),
            c[2].namespace.as_deref()
        ),
        (&["Pod".to_string()][..], Some("web-0"), Some("shop"))
    );
    assert_eq!(
        (
            c[3].tool.as_str(),
            c[3].verb.as_deref(),
            c[3].resource.as_deref()
        ),
        ("helm", Some("upgrade"), Some("karpenter"))
    );
    assert_eq!(c[3].namespace.as_deref(), Some("kube-system"));
    assert_eq!(
        (c[4].tool.as_str(), c[4].resource.as_deref()),
        ("stern", Some("karpenter"))
    );
    assert_eq!(
        facts.karpenter_namespace.as_deref(),
        Some("karpenter"),
        "the first command about Karpenter names its namespace"
    );
    let helm_only =
        facts_of("$ helm get values karpenter -n platform\nsettings:\n  clusterName: prod\n");
    assert_eq!(helm_only.karpenter_namespace.as_deref(), Some("platform"));
    let unrelated = facts_of("$ kubectl get pods -n shop\nNo resources found in shop namespace.\n");
    assert_eq!(unrelated.karpenter_namespace, None);
}

#[test]
fn shell_continuation_lines_belong_to_the_command() {
    let facts = facts_of(
        "$ helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.3.3 \\\n    --namespace platform \\\n    --set logLevel=debug\nRelease \"karpenter\" has been upgraded. Happy Helming!\n",
    );
    assert_eq!(facts.commands.len(), 1);
    assert_eq!(facts.commands[0].namespace.as_deref(), Some("platform"));
    assert_eq!(facts.commands[0].evidence.line, 1);
    assert_eq!(facts.karpenter_namespace.as_deref(), Some("platform"));
    // The continuation lines are still read on their own.
    assert!(facts
        .messages
        .iter()
        .any(|m| m.text.contains("--set logLevel=debug")));
}

#[test]
fn unclosed_or_broken_json_is_reported_only_when_json_shaped() {
    let facts = facts_of("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n");
    assert_eq!(facts.input_errors.len(), 1);
    assert_eq!(facts.input_errors[0].line, 1);
    assert!(facts.input_errors[0].message.contains("never closed"));
    let facts = facts_of("{\"a\": 1,,}\n");
    assert!(facts.input_errors[0].message.starts_with("malformed JSON"));
    let facts = facts_of("{Type:Ready Status:False Reason:KubeletNotReady}\n");
    assert!(facts.input_errors.is_empty());
    assert_eq!(
        facts.messages[0].text,
        "{Type:Ready Status:False Reason:KubeletNotReady}"
    );
}

#[test]
fn frequent_signal_lines_are_kept_recent_first_as_when_streamed() {
    let mut text = String::new();
    for i in 0..(scan::RECENT_PER_SIGNAL + 300) {
        text.push_str(&format!(
            "{{\"level\":\"INFO\",\"message\":\"created nodeclaim\",\"NodeClaim\":{{\"name\":\"c-{i}\"}}}}\n"
        ));
    }
    let whole = facts_of(&text);
    let streamed = ingest(&[scan::scan_bytes("paste", text.as_bytes()).document]);
    let lines = |f: &Facts| f.logs.iter().map(|r| r.evidence.line).collect::<Vec<_>>();
    assert_eq!(lines(&whole), lines(&streamed));
    assert_eq!(whole.log_lines_by_level, streamed.log_lines_by_level);
    assert_eq!(
        whole.log_lines_by_level["INFO"],
        scan::RECENT_PER_SIGNAL + 300
    );
    // Whether `created nodeclaim` is a signal depends on the registered rules; when it is,
    // the first line and the last RECENT_PER_SIGNAL are parsed.
    if scan::rule_matcher().is_match(b"created nodeclaim") {
        assert_eq!(whole.logs.len(), 1 + scan::RECENT_PER_SIGNAL);
        assert_eq!(whole.logs[1].evidence.line, 301);
    }
}

#[test]
fn shell_prompts_of_a_node_are_commands_not_json() {
    let facts = facts_of(
        "[root@ip-10-0-12-34 ~]# journalctl -u kubelet --no-pager | tail -20\n\
         Mar 04 10:15:02 ip-10-0-12-34.us-west-2.compute.internal kubelet[2841]: E0304 10:15:02.130551    2841 kubelet_node_status.go:94] \"Unable to register node with API server\" err=\"Unauthorized\" node=\"ip-10-0-12-34.us-west-2.compute.internal\"\n\
         [ec2-user@ip-10-0-12-34 ~]$ kubectl get nodes\n\
         sh-4.2# journalctl -u kubelet\n",
    );
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    assert!(
        facts
            .messages
            .iter()
            .all(|m| !m.text.contains("journalctl") && !m.text.contains("get nodes")),
        "prompt lines kept as text: {:?}",
        facts.messages
    );
    assert!(facts
        .messages_containing("Unable to register node")
        .next()
        .is_some());
}

#[test]
fn chart_versions_with_and_without_the_v_prefix() {
    for (text, version) in [
        ("karpenter-1.6.2", Some("1.6.2")),
        ("deployed\tkarpenter-v0.31.3\t0.31.3", Some("0.31.3")),
        ("helm.sh/chart: karpenter-v0.27.5", Some("0.27.5")),
        ("karpenter-crd-1.0.8", None),
        ("karpenter-vpc", None),
    ] {
        assert_eq!(
            segment::karpenter_version_in(text).as_deref(),
            version,
            "{text}"
        );
    }
}

#[test]
fn log_exports_name_the_karpenter_namespace() {
    let loki = r#"{"line": "{\"level\":\"ERROR\",\"time\":\"2025-02-11T14:03:09.118Z\",\"logger\":\"controller\",\"message\":\"ec2 api connectivity check failed\",\"commit\":\"901a5dc\"}", "labels": {"namespace": "platform-karpenter", "pod": "karpenter-7bb6d6c9d-k5v4n"}}"#;
    assert_eq!(
        facts_of(loki).karpenter_namespace.as_deref(),
        Some("platform-karpenter")
    );
    let fluent_bit = r#"{"log": "{\"level\":\"INFO\",\"time\":\"2025-02-11T14:03:09.118Z\",\"logger\":\"controller\",\"message\":\"Starting workers\",\"commit\":\"901a5dc\"}", "kubernetes": {"namespace_name": "autoscaling", "pod_name": "karpenter-5d8f7-x2x9q"}}"#;
    assert_eq!(
        facts_of(fluent_bit).karpenter_namespace.as_deref(),
        Some("autoscaling")
    );
    let other_pod = fluent_bit.replace("karpenter-5d8f7-x2x9q", "web-5d8f7-x2x9q");
    assert_eq!(facts_of(&other_pod).karpenter_namespace, None);
}

#[test]
fn show_labels_tables_lend_labels_to_known_rows() {
    let facts = facts_of(
        "$ kubectl get pods -n payments -o wide\nNAME                  READY   STATUS    RESTARTS   AGE   IP            NODE     NOMINATED NODE   READINESS GATES\napi-7b9c6d5f4-8tqk2   1/1     Running   0          3m    10.11.92.77   node-a   <none>           <none>\n$ kubectl get pods -n payments --show-labels\nNAME                  READY   STATUS    RESTARTS   AGE   LABELS\napi-7b9c6d5f4-8tqk2   1/1     Running   0          3m    app=api,pod-template-hash=7b9c6d5f4,canary\n",
    );
    assert_eq!(facts.pods.len(), 1);
    let pod = &facts.pods[0];
    assert_eq!(pod.node_name.as_deref(), Some("node-a"));
    assert_eq!(pod.meta.label("app"), Some("api"));
    assert_eq!(pod.meta.label("canary"), Some(""));
}

#[test]
fn helm_list_tells_the_crd_release_from_the_controller() {
    let facts = facts_of(
        "$ helm list -n kube-system\nNAME         \tNAMESPACE  \tREVISION\tUPDATED                                \tSTATUS  \tCHART               \tAPP VERSION\nkarpenter    \tkube-system\t31      \t2025-01-14 10:02:55.123 +0100 CET      \tdeployed\tkarpenter-1.1.1     \t1.1.1\nkarpenter-crd\tkube-system\t6       \t2024-09-02 16:40:12.871 +0200 CEST     \tdeployed\tkarpenter-crd-0.37.6\t0.37.6\n",
    );
    assert_eq!(facts.karpenter_version.as_deref(), Some("1.1.1"));
    assert_eq!(facts.crd_chart_version.as_deref(), Some("0.37.6"));
}

#[test]
fn workload_templates_keep_their_required_node_affinity() {
    let facts = facts_of(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: gateway\n  namespace: edge\nspec:\n  replicas: 4\n  template:\n    spec:\n      affinity:\n        nodeAffinity:\n          requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms:\n            - matchExpressions:\n              - key: karpenter.sh/nodepool\n                operator: In\n                values: [\"edge\"]\n      containers:\n      - name: envoy\n        image: envoyproxy/envoy:v1.31.2\n",
    );
    let w = &facts.workloads[0];
    assert_eq!(w.node_affinity.len(), 1);
    assert_eq!(w.node_affinity[0][0].key, "karpenter.sh/nodepool");
    assert_eq!(w.node_affinity[0][0].values, ["edge"]);
}

#[test]
fn described_service_accounts_keep_their_irsa_annotation() {
    let facts = facts_of(
        "$ kubectl describe sa karpenter -n kube-system\nName:                karpenter\nNamespace:           kube-system\nLabels:              app.kubernetes.io/name=karpenter\nAnnotations:         eks.amazonaws.com/role-arn: arn:aws:iam::731942180466:role/karpenter-irsa-analytics\n                     meta.helm.sh/release-name: karpenter\nImage pull secrets:  <none>\nMountable secrets:   <none>\nTokens:              <none>\nEvents:              <none>\n",
    );
    let account = &facts.service_accounts[0];
    assert_eq!(account.meta.name, "karpenter");
    assert_eq!(account.meta.namespace.as_deref(), Some("kube-system"));
    assert_eq!(
        account.role_arn(),
        Some("arn:aws:iam::731942180466:role/karpenter-irsa-analytics")
    );
}

#[test]
fn wide_event_rows_that_lost_their_alignment() {
    // `kubectl get events -o wide` (-A adds NAMESPACE), the columns after MESSAGE included,
    // pasted with its spacing collapsed: SOURCE, FIRST SEEN, COUNT and NAME are cells, never
    // part of the message; an empty SUBOBJECT leaves no gap of its own.
    let text = "LAST SEEN  TYPE  REASON  OBJECT  SUBOBJECT  SOURCE  MESSAGE  FIRST SEEN  COUNT  NAME
47s  Warning  FailedScheduling  pod/web-0  karpenter  Failed to schedule pod, x  12m  9  web-0.17d9a1c0e4f5a6b7
2m3s  Normal  Pulled  pod/web-0  spec.containers{app}  kubelet, ip-10-0-3-17.ec2.internal  Container image \"nginx\"  already present  2m3s  1  web-0.17d9a1c0e4f5a6b8
";
    let facts = facts_of(text);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    let e = &facts.events;
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].source, "karpenter");
    assert_eq!(e[0].message, "Failed to schedule pod, x");
    assert_eq!(e[0].count, 9);
    assert_eq!(e[0].evidence.first_seen.as_deref(), Some("12m ago"));
    assert_eq!(e[0].evidence.last_seen.as_deref(), Some("47s ago"));
    assert_eq!(e[1].source, "kubelet");
    assert_eq!(e[1].message, "Container image \"nginx\"  already present");

    let text = "NAMESPACE  LAST SEEN  TYPE  REASON  OBJECT  SUBOBJECT  SOURCE  MESSAGE  FIRST SEEN  COUNT  NAME
ml  31s  Warning  FailedScheduling  pod/trainer-0  karpenter  Failed to schedule pod, y  5m2s  4  trainer-0.17d9a1c0e4f5a6b7
";
    let facts = facts_of(text);
    let e = &facts.events[0];
    assert_eq!(
        e.object.as_ref().and_then(|o| o.namespace.as_deref()),
        Some("ml")
    );
    assert_eq!(
        (e.source.as_str(), e.message.as_str(), e.count),
        ("karpenter", "Failed to schedule pod, y", 4)
    );
    assert_eq!(e.evidence.first_seen.as_deref(), Some("5m2s ago"));

    // The same row without its header: the trailing FIRST SEEN, COUNT and NAME (the object's
    // name and a suffix) mark it as a wide row.
    let facts = facts_of("47s   Warning   FailedScheduling   pod/web-0   karpenter   Failed to schedule pod, x   12m   9   web-0.17d9a1c0e4f5a6b7\n");
    let e = &facts.events[0];
    assert_eq!(
        (e.source.as_str(), e.message.as_str(), e.count),
        ("karpenter", "Failed to schedule pod, x", 9)
    );
    assert_eq!(e.evidence.first_seen.as_deref(), Some("12m ago"));
    // Near miss: a default row whose message merely ends like one keeps its whole message.
    let facts = facts_of("47s   Warning   FailedScheduling   pod/web-0   Failed to schedule pod, x   12m   9   other.17d9\n");
    let e = &facts.events[0];
    assert_eq!(e.message, "Failed to schedule pod, x  12m  9  other.17d9");
    assert_eq!(e.source, "");
}

#[test]
fn event_ages_are_ages_not_times() {
    let text = "LAST SEEN   TYPE      REASON             OBJECT      MESSAGE
31s         Warning   FailedScheduling   pod/web-0   Failed to schedule pod, x
<unknown>   Warning   FailedScheduling   pod/web-1   Failed to schedule pod, y
";
    let facts = facts_of(text);
    let e = &facts.events;
    assert_eq!(e[0].evidence.last_seen.as_deref(), Some("31s ago"));
    assert_eq!(e[0].evidence.first_seen.as_deref(), Some("31s ago"));
    // The raw age stays for the rules that compute with it.
    assert_eq!(e[0].age.as_deref(), Some("31s"));
    assert_eq!(e[1].evidence.last_seen, None);
    // `3m (x4 over 9m)`: last seen 3m ago, first 9m ago.
    let facts = facts_of(
        "  Warning  FailedMount  3m (x4 over 9m)  kubelet  Unable to attach or mount volumes\n",
    );
    let e = &facts.events[0];
    assert_eq!(e.count, 4);
    assert_eq!(e.evidence.last_seen.as_deref(), Some("3m ago"));
    assert_eq!(e.evidence.first_seen.as_deref(), Some("9m ago"));
}

#[test]
fn terminating_claims_from_kubectl_get_and_describe() {
    // kubectl prints `Terminating` instead of the phase for a claim with a deletionTimestamp.
    let text = "$ kubectl get pvc -n streaming
NAME           STATUS        VOLUME      CAPACITY   ACCESS MODES   STORAGECLASS   VOLUMEATTRIBUTESCLASS   AGE
data-kafka-1   Bound         pvc-2d3e    200Gi      RWO            gp3            <unset>                 146d
data-kafka-2   Terminating   pvc-5b2f    200Gi      RWO            gp3            <unset>                 146d
";
    let facts = facts_of(text);
    let pvcs = &facts.pvcs;
    assert_eq!(pvcs.len(), 2);
    assert!(!pvcs[0].is_terminating());
    assert_eq!(pvcs[0].phase.as_deref(), Some("Bound"));
    assert!(pvcs[1].is_terminating());
    assert_eq!(pvcs[1].phase, None);
    assert_eq!(pvcs[1].meta.namespace.as_deref(), Some("streaming"));
    assert_eq!(pvcs[1].volume_name.as_deref(), Some("pvc-5b2f"));

    let text = "$ kubectl describe pvc data-kafka-2 -n streaming
Name:          data-kafka-2
Namespace:     streaming
StorageClass:  gp3
Status:        Terminating (lasts 3h12m)
Volume:        pvc-5b2f
Labels:        app=kafka
Annotations:   pv.kubernetes.io/bind-completed: yes
Finalizers:    [kubernetes.io/pvc-protection velero.io/pvc-backup]
Capacity:      200Gi
Access Modes:  RWO
VolumeMode:    Filesystem
Used By:       kafka-2
Events:        <none>
";
    let facts = facts_of(text);
    let c = &facts.pvcs[0];
    assert!(c.is_terminating());
    assert_eq!(c.terminating_for.as_deref(), Some("3h12m"));
    assert_eq!(
        c.finalizers,
        ["kubernetes.io/pvc-protection", "velero.io/pvc-backup"]
    );
    assert_eq!(c.meta.evidence.as_ref().map(|e| e.line), Some(5));
    // A Bound claim, and a PersistentVolume (its table has CLAIM, not VOLUME) in Terminating.
    let facts = facts_of(&text.replace("Terminating (lasts 3h12m)", "Bound"));
    assert!(!facts.pvcs[0].is_terminating());
    assert_eq!(facts.pvcs[0].phase.as_deref(), Some("Bound"));
    let facts = facts_of("$ kubectl get pv
NAME       CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS        CLAIM                    STORAGECLASS   REASON   AGE
pvc-5b2f   200Gi      RWO            Delete           Terminating   streaming/data-kafka-2   gp3                     146d
");
    assert!(facts.pvcs.is_empty());
}

#[test]
fn a_pod_describe_copied_from_the_middle_is_still_a_pod() {
    // Starts at `Status:` (the `Name:` line and the labels above it were not copied).
    let text = "                  pod-template-hash=6b8f9d7c5d\nStatus:           Pending\nIP:\nIPs:              <none>\nControlled By:    ReplicaSet/trino-6b8f9d7c5d\nNode-Selectors:   karpenter.sh/nodepool=default\nTolerations:      dedicated=gpu:NoSchedule\nEvents:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  2m    default-scheduler  0/3 nodes are available: 3 Insufficient cpu.\n";
    let facts = facts_of(text);
    assert_eq!(facts.pods.len(), 1);
    let pod = &facts.pods[0];
    assert_eq!(pod.meta.name, "<pod>");
    assert_eq!(pod.meta.namespace.as_deref(), Some("<namespace>"));
    assert_eq!(pod.phase.as_deref(), Some("Pending"));
    assert_eq!(
        pod.node_selector
            .get("karpenter.sh/nodepool")
            .map(String::as_str),
        Some("default")
    );
    assert_eq!(pod.tolerations.len(), 1);
    assert_eq!(facts.events.len(), 1);
    assert_eq!(
        facts.events[0].object.as_ref().map(|o| o.kind.as_str()),
        Some("Pod")
    );
    assert!(facts
        .input_errors
        .iter()
        .any(|e| e.line == 2 && e.message.contains("without its `Name:` line")));
}

#[test]
fn a_pod_describe_cut_before_its_events_is_still_a_pod() {
    // No `Containers:`, `QoS Class:` or `IP:`: the pod-only keys decide.
    let text = "Name:             trino-0\nNamespace:        analytics\nPriority:         0\nService Account:  trino\nNode:             <none>\nStatus:           Pending\n";
    let facts = facts_of(text);
    assert_eq!(facts.pods.len(), 1);
    assert_eq!(facts.pods[0].meta.name, "trino-0");
    assert_eq!(facts.pods[0].service_account.as_deref(), Some("trino"));
}

#[test]
fn a_headless_describe_takes_its_name_from_the_command_or_the_scheduler() {
    // Azure Cloud Shell / Windows PowerShell prompt, then a describe without `Name:`.
    let text = "PS /home/dev> kubectl describe pod api-7c9d8-xk2lp -n web\nPriority:         0\nService Account:  default\nStatus:           Pending\n";
    let facts = facts_of(text);
    assert_eq!(facts.pods.len(), 1);
    assert_eq!(facts.pods[0].meta.name, "api-7c9d8-xk2lp");
    assert_eq!(facts.pods[0].meta.namespace.as_deref(), Some("web"));
    let text = "Priority:         0\nStart Time:       Tue, 02 Dec 2025 10:04:11 +0000\nStatus:           Running\nEvents:\n  Type    Reason     Age  From               Message\n  ----    ------     ---- ----               -------\n  Normal  Scheduled  2m   default-scheduler  Successfully assigned shop/cart-5d8f7-q2w9x to ip-10-0-12-7\n";
    let facts = facts_of(text);
    assert_eq!(facts.pods[0].meta.name, "cart-5d8f7-q2w9x");
    assert_eq!(facts.pods[0].meta.namespace.as_deref(), Some("shop"));
}

#[test]
fn a_trimmed_pod_describe_is_a_pod_by_its_node_and_volumes() {
    // Containers, IP and QoS Class cut from the paste: `Node: <none>` and `Volumes:` remain.
    let text = "Name:         ingest-worker-0\nNamespace:    streaming\nNode:         <none>\nStatus:       Pending\nControlled By:  StatefulSet/ingest-worker\nVolumes:\n  data:\n    Type:       PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)\n    ClaimName:  data-ingest-worker-0\n";
    let facts = facts_of(text);
    assert_eq!(facts.pods.len(), 1, "{:?}", facts.input_errors);
    assert_eq!(facts.pods[0].meta.name, "ingest-worker-0");
    assert_eq!(facts.pods[0].meta.namespace.as_deref(), Some("streaming"));
    // A node's describe prints neither key at column 0.
    let text = "Name:               ip-10-0-1-2.ec2.internal\nRoles:              <none>\nTaints:             <none>\nUnschedulable:      false\n";
    let facts = facts_of(text);
    assert!(facts.pods.is_empty());
    assert_eq!(facts.nodes.len(), 1);
}

#[test]
fn key_value_text_that_is_no_describe_stays_unrecognised() {
    for text in [
        // helm status
        "NAME: karpenter\nLAST DEPLOYED: Tue Dec  2 10:00:00 2025\nNAMESPACE: kube-system\nSTATUS: deployed\nREVISION: 4\n",
        // One pod-looking key alone.
        "Status: Pending\n",
        // Prose with colons.
        "Summary: the pods are pending\nCause: unknown\n",
    ] {
        let facts = facts_of(text);
        assert!(facts.pods.is_empty(), "{text}");
        assert!(facts.input_errors.is_empty(), "{text}: {:?}", facts.input_errors);
    }
    // A ReplicaSet describe keeps its kind (its pod template is indented).
    let text = "Name:         cart-5d8f7\nNamespace:    shop\nControlled By:  Deployment/cart\nReplicas:     2 current / 2 desired\nPods Status:  2 Running / 0 Waiting / 0 Succeeded / 0 Failed\nPod Template:\n  Labels:  app=cart\n  Containers:\n   cart:\n    Image:  x\n  Node-Selectors:  <none>\n  Tolerations:     <none>\n";
    let facts = facts_of(text);
    assert!(facts.pods.is_empty());
    assert_eq!(facts.workloads.len(), 1);
}

const HEADLESS_NODECLAIM_STATUS: &str = "Status:\n  Conditions:\n    Last Transition Time:  2025-03-18T14:22:09Z\n    Message:               There are not enough free IP addresses to launch an instance in this subnet\n    Reason:                InsufficientFreeAddressesInSubnet\n    Status:                Unknown\n    Type:                  Launched\n";

#[test]
fn a_status_only_nodeclaim_describe_is_read_as_a_nodeclaim() {
    let facts = facts_of(HEADLESS_NODECLAIM_STATUS);
    assert_eq!(facts.nodeclaims.len(), 1);
    let claim = &facts.nodeclaims[0];
    assert_eq!(claim.meta.name, "<nodeclaim>");
    assert_eq!(claim.conditions.len(), 1);
    assert_eq!(claim.conditions[0].condition_type, "Launched");
    assert_eq!(claim.conditions[0].status, "Unknown");
    assert!(facts
        .input_errors
        .iter()
        .any(|e| e.message.contains("read as a NodeClaim describe")));
    // The command before it names it; the Events table is attached to it.
    let text = format!(
        "$ kubectl describe nodeclaim default-z9x2k\n{HEADLESS_NODECLAIM_STATUS}  Provider ID:  aws:///us-east-1a/i-0abc\nEvents:\n  Type     Reason  Age  From       Message\n  ----     ------  ---  ----       -------\n  Normal   Launched  2m  karpenter  Status condition transitioned, Type: Launched, Status: Unknown -> True\n"
    );
    let facts = facts_of(&text);
    assert_eq!(facts.nodeclaims.len(), 1);
    assert_eq!(facts.nodeclaims[0].meta.name, "default-z9x2k");
    assert_eq!(facts.nodeclaims[0].zone.as_deref(), Some("us-east-1a"));
    // Cut on purpose by the command: nothing to warn about.
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
}

#[test]
fn a_status_only_nodeclass_or_nodepool_describe_is_read_by_its_conditions() {
    let text = "Status:\n  Conditions:\n    Last Transition Time:  2025-03-18T14:22:09Z\n    Message:               SubnetSelector did not match any Subnets\n    Reason:                SubnetsNotFound\n    Status:                False\n    Type:                  SubnetsReady\n    Last Transition Time:  2025-03-18T14:22:09Z\n    Message:               \n    Reason:                ValidationSucceeded\n    Status:                True\n    Type:                  ValidationSucceeded\n";
    let facts = facts_of(text);
    assert_eq!(facts.nodeclasses.len(), 1, "{:?}", facts.nodeclasses);
    assert!(facts.nodeclaims.is_empty() && facts.nodepools.is_empty());
    let text = "$ kubectl describe nodepool general\nStatus:\n  Conditions:\n    Last Transition Time:  2025-03-18T14:22:09Z\n    Message:               EC2NodeClass \"default\" not found\n    Reason:                NodeClassNotFound\n    Status:                False\n    Type:                  NodeClassReady\n  Resources:\n    Cpu:  0\n";
    let facts = facts_of(text);
    assert_eq!(facts.nodepools.len(), 1);
    assert_eq!(facts.nodepools[0].meta.name, "general");
    // Copied from `Conditions:` on, dedented.
    let text = "Conditions:\n  Last Transition Time:  2025-03-18T14:22:09Z\n  Message:               Node not registered with cluster\n  Reason:                NodeNotFound\n  Status:                Unknown\n  Type:                  Registered\n";
    let facts = facts_of(text);
    assert_eq!(facts.nodeclaims.len(), 1);
    assert_eq!(
        facts.nodeclaims[0].conditions[0].condition_type,
        "Registered"
    );
    // A pod's conditions table is no NodeClaim.
    let text = "Conditions:\n  Type           Status\n  PodScheduled   False\nQoS Class:       Burstable\n";
    assert!(facts_of(text).nodeclaims.is_empty());
    // A NodePool spec holds `Node Class Ref` too (under `Template`): still a NodePool.
    let text = "Spec:\n  Disruption:\n    Consolidation Policy:  WhenEmptyOrUnderutilized\n  Template:\n    Spec:\n      Node Class Ref:\n        Name:  default\nStatus:\n  Resources:\n    Cpu:  0\n";
    let facts = facts_of(text);
    assert_eq!(facts.nodepools.len(), 1);
    assert!(facts.nodeclaims.is_empty());
}

#[test]
fn a_status_block_that_proves_no_karpenter_kind_is_not_read_as_one() {
    for text in [
        // Shared condition types only.
        "Status:\n  Conditions:\n    Status:  True\n    Type:    Ready\n",
        // Kinds that disagree.
        "Status:\n  Conditions:\n    Type:  Launched\n    Type:  SubnetsReady\n",
        // A pod's one-line status.
        "Status:  Pending\n",
        // `Type: Launched` outside Status/Spec.
        "Summary:\n  Type:  Launched\n",
        // A condition type spelled inside a longer value.
        "Status:\n  Message:  waiting until Launched\n",
    ] {
        let facts = facts_of(text);
        assert!(
            facts.nodeclaims.is_empty()
                && facts.nodeclasses.is_empty()
                && facts.nodepools.is_empty(),
            "{text}"
        );
        assert!(facts.pods.is_empty() && facts.nodes.is_empty(), "{text}");
    }
}

#[test]
fn long_runs_of_key_lines_and_status_blocks_read_as_one_nodeclaim() {
    // Each refused block is skipped whole, and an accepted one is consumed. Whether that stays
    // linear is measured by `cargo bench --bench large_inputs` ("describe key runs"), not timed
    // here: a loaded machine makes a timed assertion flaky.
    let mut text = "Key: value\n".repeat(6_000);
    text.push_str(&"Status:\n  Conditions:\n    Type:  Ready\n".repeat(2_000));
    text.push_str(&"Status:\n  Conditions:\n    Type:  Launched\n".repeat(2_000));
    let facts = facts_of(&text);
    assert_eq!(facts.nodeclaims.len(), 1);
}

#[test]
fn a_kind_slash_name_resource_takes_no_second_name() {
    let facts = facts_of(
        "$ kubectl annotate --overwrite nodes/ip-10-0-1-2 karpenter.sh/do-not-disrupt=true\n$ kubectl annotate node ip-10-0-1-3 --overwrite karpenter.sh/do-not-disrupt-\n",
    );
    let c = &facts.commands;
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].name.as_deref(), Some("ip-10-0-1-2"));
    assert_eq!(c[0].kinds, ["Node"]);
    assert_eq!(c[1].name.as_deref(), Some("ip-10-0-1-3"));
}

#[test]
fn history_lines_of_kubectl_are_commands() {
    let facts = facts_of(
        "  502  kubectl annotate --overwrite node ip-10-0-1-2 karpenter.sh/do-not-disrupt=true\n 1203  oc get pods -n shop\n  17  pods were pending\n3 k get pods\n",
    );
    let c = &facts.commands;
    assert_eq!(c.len(), 2, "{c:#?}");
    assert_eq!(c[0].verb.as_deref(), Some("annotate"));
    assert_eq!(c[0].name.as_deref(), Some("ip-10-0-1-2"));
    assert_eq!(c[1].namespace.as_deref(), Some("shop"));
}

#[test]
fn a_header_less_karpenter_describe_is_named_by_its_own_events() {
    let events = |message: &str| {
        format!("{HEADLESS_NODECLAIM_STATUS}Events:\n  Type     Reason  Age  From       Message\n  ----     ------  ---  ----       -------\n  Warning  InsufficientCapacityError  2m  karpenter  {message}\n")
    };
    for (message, name) in [
        (
            "NodeClaim default-x7k2p event: creating instance, insufficient capacity",
            "default-x7k2p",
        ),
        (
            "Failed to resolve NodeClass for NodeClaim default-x7k2p",
            "default-x7k2p",
        ),
        (
            "NodeClaim default-x7k2p failed validation: label domain not allowed",
            "default-x7k2p",
        ),
        ("launch failed for nodeclaim/default-x7k2p", "default-x7k2p"),
        // Mentions that name nothing, or another object.
        (
            "Cannot disrupt NodeClaim: state node is nominated",
            "<nodeclaim>",
        ),
        (
            "Pod should schedule on: nodeclaim/default-x7k2p",
            "default-x7k2p",
        ),
        (
            "Pod should schedule on: ec2nodeclass/default",
            "<nodeclaim>",
        ),
        ("NodeClaim is not ready", "<nodeclaim>"),
    ] {
        let facts = facts_of(&events(message));
        assert_eq!(facts.nodeclaims.len(), 1, "{message}");
        assert_eq!(facts.nodeclaims[0].meta.name, name, "{message}");
        assert_eq!(
            facts.events[0].object.as_ref().map(|o| o.name.as_str()),
            Some(name),
            "{message}"
        );
    }
    // Two names: the table does not say which is this one.
    let text = format!(
        "{}  Warning  FailedValidation  1m  karpenter  NodeClaim other-4kq9d failed validation: x\n",
        events("NodeClaim default-x7k2p event: insufficient capacity")
    );
    assert_eq!(facts_of(&text).nodeclaims[0].meta.name, "<nodeclaim>");
    // A NodePool's status, named by its event.
    let text = "Status:\n  Conditions:\n    Last Transition Time:  2025-03-18T14:22:09Z\n    Message:               EC2NodeClass \"default\" not found\n    Reason:                NodeClassNotFound\n    Status:                False\n    Type:                  NodeClassReady\nEvents:\n  Type     Reason                    Age  From       Message\n  ----     ------                    ---  ----       -------\n  Warning  FailedToResolveNodeClass  1m   karpenter  Failed to resolve NodeClass for NodePool general\n";
    let facts = facts_of(text);
    assert_eq!(facts.nodepools.len(), 1);
    assert_eq!(facts.nodepools[0].meta.name, "general");
}

const HEADLESS_LAUNCHED_CLAIM: &str = "Status:\n  Conditions:\n    Last Transition Time:  2025-03-18T14:22:09Z\n    Message:               Node not registered with cluster\n    Reason:                NodeNotFound\n    Status:                Unknown\n    Type:                  Registered\n  Image ID:     ami-0123456789abcdef0\n  Node Name:    ip-10-0-12-34.ec2.internal\n  Provider ID:  aws:///us-east-1a/i-0abc123def4567890\nEvents:\n  Type     Reason  Age  From       Message\n  ----     ------  ---  ----       -------\n  Normal   Launched  2m  karpenter  Status condition transitioned, Type: Launched, Status: Unknown -> True\n";

#[test]
fn a_header_less_nodeclaim_is_named_by_what_else_shows_its_instance_or_node() {
    // A `kubectl get nodeclaims -o wide` row with the same instance: one claim, named.
    let text = format!(
        "{HEADLESS_LAUNCHED_CLAIM}\n$ kubectl get nodeclaims -o wide\nNAME            TYPE       CAPACITY    ZONE         NODE                         READY     AGE   ID                                      NODEPOOL   NODECLASS\ndefault-x7k2p   m5.large   on-demand   us-east-1a   ip-10-0-12-34.ec2.internal   Unknown   9m    aws:///us-east-1a/i-0abc123def4567890   default    default\nother-4kq9d     m5.large   on-demand   us-east-1b   ip-10-0-40-2.ec2.internal    True      1h    aws:///us-east-1b/i-0fff                default    default\n"
    );
    let facts = facts_of(&text);
    assert_eq!(facts.nodeclaims.len(), 2, "{:?}", facts.nodeclaims);
    let claim = &facts.nodeclaims[0];
    assert_eq!(claim.meta.name, "default-x7k2p", "{:?}", facts.nodeclaims);
    assert_eq!(claim.conditions[0].condition_type, "Registered");
    assert_eq!(
        facts.events[0].object,
        Some(ObjectRef::new("NodeClaim", None, "default-x7k2p"))
    );
    assert!(facts
        .messages
        .iter()
        .filter(|m| m.origin == MessageOrigin::Event)
        .all(|m| m.object.as_ref().is_some_and(|o| o.name == "default-x7k2p")));
    // Karpenter's log of the launch names it by its provider ID, or by its node.
    for log in [
        r#"{"level":"INFO","time":"2025-03-18T14:20:01.101Z","logger":"controller","message":"launched nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-x7k2p"},"provider-id":"aws:///us-east-1a/i-0abc123def4567890","instance-type":"m5.large"}"#,
        r#"{"level":"INFO","time":"2025-03-18T14:20:01.101Z","logger":"controller","message":"registered nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-x7k2p"},"Node":{"name":"ip-10-0-12-34.ec2.internal"}}"#,
    ] {
        let facts = facts_of(&format!("{HEADLESS_LAUNCHED_CLAIM}\n{log}\n"));
        assert_eq!(facts.nodeclaims.len(), 1);
        assert_eq!(facts.nodeclaims[0].meta.name, "default-x7k2p", "{log}");
    }
    // A log about another instance names nothing; two claims disagreeing neither.
    let other = r#"{"level":"INFO","time":"2025-03-18T14:20:01.101Z","logger":"controller","message":"launched nodeclaim","NodeClaim":{"name":"other-4kq9d"},"provider-id":"aws:///us-east-1b/i-0fff"}"#;
    let facts = facts_of(&format!("{HEADLESS_LAUNCHED_CLAIM}\n{other}\n"));
    assert_eq!(facts.nodeclaims[0].meta.name, "<nodeclaim>");
    let text = format!(
        "{HEADLESS_LAUNCHED_CLAIM}\n{}\n{}\n",
        r#"{"level":"INFO","message":"launched nodeclaim","NodeClaim":{"name":"a-1"},"provider-id":"aws:///us-east-1a/i-0abc123def4567890"}"#,
        r#"{"level":"INFO","message":"registered nodeclaim","NodeClaim":{"name":"b-2"},"Node":{"name":"ip-10-0-12-34.ec2.internal"}}"#
    );
    assert_eq!(facts_of(&text).nodeclaims[0].meta.name, "<nodeclaim>");
}

#[test]
fn elasticsearch_search_responses_are_log_exports() {
    // Kibana's "Inspect > Response" and `curl .../_search` print the records under
    // `hits.hits[]._source`, Fluent Bit's `kubernetes` block naming the pod that wrote them.
    let text = r#"{
  "took": 4,
  "hits": {
    "total": {"value": 2},
    "hits": [
      {
        "_index": "logs-2025.03.11",
        "_source": {
          "kubernetes": {"namespace_name": "karpenter", "pod_name": "karpenter-7f9c6d5b8-q4k2m"},
          "log": "{\"level\":\"ERROR\",\"message\":\"could not schedule pod\",\"Pod\":{\"name\":\"etl-7\",\"namespace\":\"data\"},\"error\":\"all available instance types exceed limits for nodepool: \\\"etl\\\"\"}"
        }
      },
      {
        "_index": "logs-2025.03.11",
        "_source": {"log": "{\"level\":\"INFO\",\"message\":\"created nodeclaim\"}"}
      }
    ]
  }
}
"#;
    let facts = facts_of(text);
    let messages = log_messages_and_lines(&facts);
    assert_eq!(
        messages,
        [("could not schedule pod", 10), ("created nodeclaim", 15)]
    );
    assert_eq!(facts.karpenter_namespace.as_deref(), Some("karpenter"));
}

/// A pod described and also printed as YAML (or one paste twice) is one pod: counted once,
/// with what each description shows (describe's phase, the YAML's affinity).
#[test]
fn a_pod_described_twice_is_one_pod() {
    let describe = "Name:             web-6b8f9d7c5d-9w2xq
Namespace:        shop
Node:             <none>
Labels:           app=web
                  pod-template-hash=6b8f9d7c5d
Annotations:      <none>
Status:           Pending
Controlled By:    ReplicaSet/web-6b8f9d7c5d
";
    let yaml = "apiVersion: v1
kind: Pod
metadata:
  name: web-6b8f9d7c5d-9w2xq
  namespace: shop
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: karpenter.sh/nodepool
            operator: In
            values: [batch]
  containers:
  - name: web
    image: web:1
";
    let facts = facts_of(&format!("{describe}---\n{yaml}"));
    assert_eq!(facts.pods.len(), 1, "{:#?}", facts.pods);
    let pod = &facts.pods[0];
    assert_eq!(pod.phase.as_deref(), Some("Pending"));
    assert!(pod.selects_on("karpenter.sh/nodepool"));
    assert_eq!(pod.meta.owners.len(), 1);
    let twice = facts_of(&format!("{describe}\n{describe}"));
    assert_eq!(twice.pods.len(), 1);
    // The same name in another namespace is another pod.
    let other = facts_of(&format!(
        "{describe}\n{}",
        describe.replace("Namespace:        shop", "Namespace:        web")
    ));
    assert_eq!(other.pods.len(), 2);
}

/// `kubectl get pods -A | grep Pending`: the filter dropped the header; the rows right under
/// the prompt are read with the columns kubectl prints for the resource and its flags.
#[test]
fn rows_a_filter_left_without_their_header_are_read() {
    let facts = facts_of(
        "$ kubectl get pods -A | grep Pending
ml          trainer-0                         0/1     Pending   0          14m
shop        web-6c9d8b7f5-2xk4p               0/1     Pending   0          14m
$ kubectl get nodes --show-labels | grep ip-10-8-44-201
ip-10-8-44-201.eu-west-2.compute.internal   Ready    <none>   2d    v1.31.2-eks-94953ac   karpenter.sh/nodepool=default,topology.kubernetes.io/zone=eu-west-2a
$ kubectl get nodeclaims -o wide | grep gpu
gpu-x8k2l   p4d.24xlarge   on-demand   us-east-1a   ip-10-0-1-2.ec2.internal   False   14m   aws:///us-east-1a/i-0abc   gpu   default
",
    );
    let pods: Vec<(Option<&str>, &str, Option<&str>)> = facts
        .pods
        .iter()
        .map(|p| {
            (
                p.meta.namespace.as_deref(),
                p.meta.name.as_str(),
                p.phase.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        pods,
        [
            (Some("ml"), "trainer-0", Some("Pending")),
            (Some("shop"), "web-6c9d8b7f5-2xk4p", Some("Pending"))
        ]
    );
    assert_eq!(
        facts.nodes[0].meta.label("karpenter.sh/nodepool"),
        Some("default")
    );
    let claim = &facts.nodeclaims[0];
    assert_eq!(claim.meta.name, "gpu-x8k2l");
    assert_eq!(claim.nodepool.as_deref(), Some("gpu"));
    // Not right under the prompt, another output format, or no filter: not a headerless row.
    for text in [
        "$ kubectl get pods -A | grep Pending\n\nml   trainer-0   0/1   Pending   0   14m\n",
        "$ kubectl get pods -A -o yaml | grep Pending\nml   trainer-0   0/1   Pending   0   14m\n",
        "$ kubectl get pods -A\nml   trainer-0   0/1   Pending   0   14m\n",
    ] {
        assert!(facts_of(text).pods.is_empty(), "{text}");
    }
}

/// A NodeClaim described and printed as YAML is one NodeClaim with what each shows: the
/// describe's Registered condition and provider ID, the YAML's instance-type label and
/// Launched condition. Each condition keeps the line it was read from.
#[test]
fn a_nodeclaim_described_and_printed_as_yaml_is_one_nodeclaim() {
    let describe = "$ kubectl describe nodeclaim default-z9x2k
Name:         default-z9x2k
Labels:       karpenter.sh/nodepool=default
API Version:  karpenter.sh/v1
Kind:         NodeClaim
Status:
  Conditions:
    Last Transition Time:  2025-03-18T14:22:09Z
    Message:               Node not registered with cluster
    Reason:                NodeNotFound
    Status:                Unknown
    Type:                  Registered
  Provider ID:  aws:///us-east-1a/i-0abc123def4567890
";
    let yaml = "$ kubectl get nodeclaim default-z9x2k -o yaml
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  labels:
    karpenter.sh/nodepool: default
    node.kubernetes.io/instance-type: m5.large
  name: default-z9x2k
status:
  conditions:
  - message: Node not registered with cluster
    reason: NodeNotFound
    status: Unknown
    type: Registered
  - reason: Launched
    status: \"True\"
    type: Launched
";
    let text = format!("{describe}\n{yaml}");
    let facts = facts_of(&text);
    assert_eq!(facts.nodeclaims.len(), 1, "{:#?}", facts.nodeclaims);
    let claim = &facts.nodeclaims[0];
    assert_eq!(claim.instance_type.as_deref(), Some("m5.large"));
    assert_eq!(
        claim.provider_id.as_deref(),
        Some("aws:///us-east-1a/i-0abc123def4567890")
    );
    assert_eq!(
        claim.meta.label("node.kubernetes.io/instance-type"),
        Some("m5.large")
    );
    let types: Vec<&str> = claim
        .conditions
        .iter()
        .map(|c| c.condition_type.as_str())
        .collect();
    assert_eq!(types, ["Registered", "Launched"]);
    let lines: Vec<&str> = text.lines().collect();
    for c in &claim.conditions {
        let e = c.evidence.as_ref().expect("condition evidence");
        assert!(lines[e.line - 1].contains(e.text.trim()), "{e:?}");
    }
    // The first description names the claim.
    assert_eq!(claim.meta.evidence.as_ref().map(|e| e.line), Some(2));
    // Each condition is one message, read where it was read first.
    let conditions: Vec<(&str, usize)> = facts
        .messages
        .iter()
        .filter(|m| m.origin == MessageOrigin::Condition)
        .map(|m| (m.text.as_str(), m.evidence.line))
        .collect();
    assert_eq!(
        conditions,
        [
            (
                "Registered=Unknown NodeNotFound: Node not registered with cluster",
                9
            ),
            ("Launched=True Launched", 29)
        ]
    );
}

/// Nodes, NodePools, EC2NodeClasses, PDBs and workloads shown twice are one object each; the
/// same name in another namespace, or another kind of workload, is another object.
#[test]
fn objects_shown_twice_are_one_object_each() {
    let node = "Name:               ip-10-12-40-7.eu-west-1.compute.internal
Roles:              <none>
Labels:             karpenter.sh/nodepool=batch
Taints:             node.kubernetes.io/not-ready:NoSchedule
Unschedulable:      false
";
    let facts = facts_of(&format!("{node}\n{node}"));
    assert_eq!(facts.nodes.len(), 1, "{:#?}", facts.nodes);
    assert_eq!(facts.nodes[0].taints.len(), 1);
    let objects = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: spot-batch
spec:
  template:
    spec:
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: [spot]
---
apiVersion: karpenter.k8s.aws/v1
kind: EC2NodeClass
metadata:
  name: default
spec:
  subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: prod
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: cart
  namespace: shop
spec:
  minAvailable: 1
  selector:
    matchLabels:
      app: cart
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: cart
  namespace: shop
spec:
  replicas: 2
";
    let facts = facts_of(&format!("{objects}---\n{objects}"));
    assert_eq!(facts.nodepools.len(), 1, "{:#?}", facts.nodepools);
    assert_eq!(facts.nodepools[0].requirements.len(), 1);
    assert_eq!(facts.nodeclasses.len(), 1);
    assert_eq!(facts.pdbs.len(), 1);
    assert_eq!(facts.workloads.len(), 1);
    let elsewhere = objects
        .replace("namespace: shop", "namespace: web")
        .replace("kind: Deployment", "kind: StatefulSet");
    let facts = facts_of(&format!("{objects}---\n{elsewhere}"));
    assert_eq!(facts.nodepools.len(), 1);
    assert_eq!(facts.pdbs.len(), 2);
    // A Provisioner and the NodePool migrated from it often share a name.
    let provisioner =
        "apiVersion: karpenter.sh/v1alpha5\nkind: Provisioner\nmetadata:\n  name: spot-batch\n";
    assert_eq!(facts.workloads.len(), 2);
    let facts = facts_of(&format!("{objects}---\n{provisioner}"));
    assert_eq!(facts.nodepools.len(), 2);
}

/// Objects whose names an anonymiser replaced by one mask cannot be told apart: they stay
/// apart. A numbered mask (`<nodepool-1>`) still names one object.
#[test]
fn objects_masked_alike_stay_apart() {
    let pool = |name: &str| {
        format!("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: {name}\n---\n")
    };
    let facts = facts_of(&format!("{}{}", pool("<redacted>"), pool("<redacted>")));
    assert_eq!(facts.nodepools.len(), 2);
    let facts = facts_of(&format!("{}{}", pool("<nodepool-1>"), pool("<nodepool-1>")));
    assert_eq!(facts.nodepools.len(), 1);
}

/// One `kubectl get ds -A` pasted twice lists each DaemonSet once.
#[test]
fn workload_rows_pasted_twice_are_one_workload_each() {
    let table = "$ kubectl get ds -A
NAMESPACE     NAME         DESIRED   CURRENT   READY   UP-TO-DATE   AVAILABLE   NODE SELECTOR   AGE
kube-system   aws-node     6         6         6       6            6           <none>          210d
kube-system   kube-proxy   6         6         6       6            6           <none>          210d
";
    let facts = facts_of(&format!("{table}\n{table}"));
    let names: Vec<&str> = facts
        .workloads
        .iter()
        .map(|w| w.meta.name.as_str())
        .collect();
    assert_eq!(names, ["aws-node", "kube-proxy"]);
}

/// `kubectl get nodeclaims | grep default` where a claim has no node yet: its blank NODE
/// (and READY, TYPE...) cells leave no gap to count, and each cell goes to the one column
/// whose values it looks like. A row that fits no assignment stays unrecognised.
#[test]
fn headerless_nodeclaim_rows_with_blank_cells_are_read() {
    let facts = facts_of(
        "$ kubectl get nodeclaims | grep default
default-x8d2k   m5.large    on-demand   us-east-1a                                Unknown   21m
default-q7w4n   m5.xlarge   spot        us-east-1b   ip-10-0-77-21.ec2.internal   True      2d
default-b2c3d                                                                               8s
",
    );
    /// Name, TYPE, ZONE, NODE, READY.
    type ClaimRow<'a> = (
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
    );
    let claims: Vec<ClaimRow> = facts
        .nodeclaims
        .iter()
        .map(|c| {
            (
                c.meta.name.as_str(),
                c.instance_type.as_deref(),
                c.zone.as_deref(),
                c.node_name.as_deref(),
                c.condition("Ready").map(|r| r.status.as_str()),
            )
        })
        .collect();
    assert_eq!(
        claims,
        [
            (
                "default-x8d2k",
                Some("m5.large"),
                Some("us-east-1a"),
                None,
                Some("Unknown")
            ),
            (
                "default-q7w4n",
                Some("m5.xlarge"),
                Some("us-east-1b"),
                Some("ip-10-0-77-21.ec2.internal"),
                Some("True")
            ),
            ("default-b2c3d", None, None, None, None),
        ]
    );
    assert_eq!(facts.nodeclaims[0].meta.table_age.as_deref(), Some("21m"));
    // `-o wide`: no provider ID yet, the NodePool and NodeClass still printed.
    let wide = facts_of(
        "$ kubectl get nodeclaims -o wide | grep gpu
gpu-x8k2l   p4d.24xlarge   on-demand   us-east-1a      Unknown   3m12s      gpu   default
",
    );
    let claim = &wide.nodeclaims[0];
    assert_eq!(claim.nodepool.as_deref(), Some("gpu"));
    assert_eq!(claim.nodeclass_ref.as_deref(), Some("default"));
    assert_eq!(claim.provider_id, None);
    // Cells out of column order, no age, or another kind's columns: not read.
    for text in [
        "$ kubectl get nodeclaims | grep default\ndefault-x8d2k   21m   m5.large\n",
        "$ kubectl get nodeclaims | grep default\ndefault-x8d2k   m5.large   us-east-1a\n",
        "$ kubectl get nodeclaims | grep default\ndefault-x8d2k   node-a   node-b   21m\n",
        "$ kubectl get pods | grep web\nweb-0   0/1   14m\n",
    ] {
        let facts = facts_of(text);
        assert!(
            facts.nodeclaims.is_empty() && facts.pods.is_empty(),
            "{text}"
        );
    }
}

/// `kubectl get nodepool <name> -o yaml | grep -A4 disruption` prints a piece of the spec: it
/// is read into that NodePool, whose other fields stay unknown.
#[test]
fn a_grepped_piece_of_a_nodepool_is_read_into_it() {
    let facts = facts_of(
        "$ kubectl get nodepool batch -o yaml | grep -A4 disruption
  disruption:
    budgets:
    - nodes: 10%
    consolidateAfter: 30s
    consolidationPolicy: WhenEmpty
",
    );
    assert_eq!(facts.nodepools.len(), 1, "{:#?}", facts.nodepools);
    let pool = &facts.nodepools[0];
    assert_eq!(pool.meta.name, "batch");
    assert_eq!(
        pool.disruption.consolidation_policy.as_deref(),
        Some("WhenEmpty")
    );
    assert_eq!(pool.disruption.budgets.len(), 1);
    assert!(pool.meta.from_table && !pool.meta.annotations_known());
}

/// `sed -n '/requirements:/,/status:/p'` of a NodePool: the requirements are its template's,
/// and the outdented `status:` that ends the range is past the piece.
#[test]
fn a_sed_piece_of_nodepool_requirements_is_read_into_its_template() {
    let facts = facts_of(
        "$ kubectl get nodepool spot -o yaml | sed -n '/requirements:/,/status:/p'
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values:
        - spot
status:
",
    );
    assert_eq!(facts.nodepools.len(), 1, "{:#?}", facts.nodepools);
    let pool = &facts.nodepools[0];
    assert_eq!(pool.requirements.len(), 1);
    assert_eq!(pool.requirements[0].values, ["spot"]);
    assert!(!pool.meta.from_table);
}

/// `kubectl get nodepool <name> -o jsonpath='{.spec.disruption}'` prints one field: it is read
/// into that NodePool, whose other fields stay unknown (its requirements are not shown).
#[test]
fn a_jsonpath_field_of_a_nodepool_is_read_into_it() {
    let facts = facts_of(
        "$ kubectl get nodepool general -o jsonpath='{.spec.disruption}'
{\"budgets\":[{\"nodes\":\"0\"}],\"consolidateAfter\":\"30s\",\"consolidationPolicy\":\"WhenEmpty\"}
",
    );
    assert_eq!(facts.nodepools.len(), 1, "{:#?}", facts.nodepools);
    let pool = &facts.nodepools[0];
    assert_eq!(pool.meta.name, "general");
    assert_eq!(
        pool.disruption.consolidation_policy.as_deref(),
        Some("WhenEmpty")
    );
    assert_eq!(pool.disruption.consolidate_after.as_deref(), Some("30s"));
    assert_eq!(pool.disruption.budgets.len(), 1);
    assert_eq!(pool.disruption.evidence.as_ref().map(|e| e.line), Some(2));
    assert!(pool.meta.from_table && !pool.meta.annotations_known());
    // One scalar field.
    let facts = facts_of(
        "$ kubectl get nodepool general -o jsonpath={.spec.disruption.consolidateAfter}\nNever\n",
    );
    assert_eq!(
        facts.nodepools[0].disruption.consolidate_after.as_deref(),
        Some("Never")
    );
    // The requirements themselves: known.
    let facts = facts_of(
        "$ kubectl get nodepool spot -o jsonpath='{.spec.template.spec.requirements}'
[{\"key\":\"karpenter.sh/capacity-type\",\"operator\":\"In\",\"values\":[\"spot\"]}]
",
    );
    assert!(!facts.nodepools[0].meta.from_table);
    assert_eq!(facts.nodepools[0].requirements.len(), 1);
    // With the NodePool's YAML too: one NodePool, from_table no more.
    let facts = facts_of(
        "$ kubectl get nodepool general -o jsonpath='{.spec.disruption}'
{\"consolidationPolicy\":\"WhenEmpty\"}
$ kubectl get nodepool general -o yaml
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: general
spec:
  template:
    spec:
      requirements: []
",
    );
    assert_eq!(facts.nodepools.len(), 1);
    assert!(!facts.nodepools[0].meta.from_table);
    assert_eq!(
        facts.nodepools[0]
            .disruption
            .consolidation_policy
            .as_deref(),
        Some("WhenEmpty")
    );
    // Several fields, a range, a filter, another kind: not one field of a NodePool.
    for text in [
        "$ kubectl get nodepool general -o jsonpath='{.spec.disruption}{.spec.limits}'\n{\"consolidationPolicy\":\"WhenEmpty\"}\n",
        "$ kubectl get nodepool general -o jsonpath='{.spec.disruption}' | jq .\n{\"consolidationPolicy\":\"WhenEmpty\"}\n",
        "$ kubectl get nodepools -o jsonpath='{.items[*].spec.disruption}'\n{\"consolidationPolicy\":\"WhenEmpty\"}\n",
        "$ kubectl get nodepool general -o jsonpath='{.spec.disruption.consolidationPolicy}'\nnot found\n",
    ] {
        let facts = facts_of(text);
        assert!(
            facts.nodepools.iter().all(|p| p.disruption.consolidation_policy.is_none())
                && facts.nodeclasses.is_empty(),
            "{text}"
        );
    }
}

/// `kubectl describe nodeclaim | sed -n '/^Status:/,$p'` pasted twice: both header-less
/// printouts show one instance, so they are one claim, and the launch log still names it.
/// Printouts of two instances stay two unnamed claims.
#[test]
fn header_less_claims_of_one_instance_are_one_claim() {
    let status = |instance: &str| {
        format!(
            "$ kubectl describe nodeclaim | sed -n '/^Status:/,$p'
Status:
  Conditions:
    Last Transition Time:  2025-04-07T10:01:58Z
    Message:               Node not registered with cluster
    Reason:                NodeNotFound
    Status:                Unknown
    Type:                  Registered
  Provider ID:  aws:///eu-west-1b/{instance}
"
        )
    };
    let log = r#"{"level":"INFO","time":"2025-04-07T10:02:13.482Z","logger":"controller","message":"launched nodeclaim","NodeClaim":{"name":"batch-r8v2n"},"provider-id":"aws:///eu-west-1b/i-07c4e2a9b1d3f5e86"}"#;
    let one = status("i-07c4e2a9b1d3f5e86");
    let facts = facts_of(&format!("{one}\n{one}\n{log}\n"));
    let names: Vec<&str> = facts
        .nodeclaims
        .iter()
        .map(|c| c.meta.name.as_str())
        .collect();
    assert_eq!(names, ["batch-r8v2n"]);
    let facts = facts_of(&format!("{one}\n{}\n", status("i-0ffffffffffffffff")));
    assert_eq!(facts.nodeclaims.len(), 2);
}

/// A describe pasted twice: each Events row and each condition is one event, one message.
#[test]
fn a_describe_pasted_twice_lists_each_event_once() {
    let describe = "$ kubectl describe nodeclaim default-z9x2k
Name:         default-z9x2k
Labels:       karpenter.sh/nodepool=default
API Version:  karpenter.sh/v1
Kind:         NodeClaim
Status:
  Conditions:
    Last Transition Time:  2025-03-18T14:22:09Z
    Message:               Node not registered with cluster
    Reason:                NodeNotFound
    Status:                Unknown
    Type:                  Registered
Events:
  Type     Reason            Age                  From       Message
  ----     ------            ----                 ----       -------
  Warning  FailedDraining    2m (x19 over 40m)    karpenter  Failed to drain node, 3 pods are waiting to be evicted
";
    let facts = facts_of(&format!("{describe}\n{describe}"));
    assert_eq!(facts.events.len(), 1, "{:#?}", facts.events);
    assert_eq!(facts.events[0].evidence.line, 16);
    let origins: Vec<MessageOrigin> = facts.messages.iter().map(|m| m.origin).collect();
    assert_eq!(origins, [MessageOrigin::Condition, MessageOrigin::Event]);
}

/// The facts of a paste with one output pasted twice are the facts of the paste: a repeated
/// block is taken back, a repeated log line is one record. (Log noise lines the prefilter
/// only counts are not told apart: `log_lines_by_level` may grow.)
#[test]
fn an_input_pasted_twice_gives_the_facts_of_one_copy() {
    let lines = |f: &Facts| {
        let mut out: Vec<(String, usize)> = f
            .messages
            .iter()
            .map(|m| (m.text.clone(), m.evidence.line))
            .collect();
        out.sort();
        out
    };
    for (name, text) in corpus_inputs() {
        let once = ingest(&[Document::new(name.clone(), text.clone())]);
        let text = if text.ends_with('\n') {
            text
        } else {
            format!("{text}\n")
        };
        let twice = ingest(&[Document::new(name.clone(), format!("{text}\n{text}"))]);
        assert_eq!(signature(&once), signature(&twice), "{name}");
        assert_eq!(lines(&once), lines(&twice), "{name}");
        assert_eq!(once.events.len(), twice.events.len(), "{name}");
        assert_eq!(once.logs.len(), twice.logs.len(), "{name}");
        assert_eq!(once.input_errors.len(), twice.input_errors.len(), "{name}");
    }
}

#[test]
fn aws_cli_output_pasted_again_without_its_prompt_is_read_once() {
    let subnets = "[\n    {\n        \"SubnetId\": \"subnet-0e91d4c7a2b36f158\",\n        \"AvailableIpAddressCount\": 0\n    }\n]\n";
    let text = format!(
        "$ aws ec2 describe-subnets --subnet-ids subnet-0e91d4c7a2b36f158\n{subnets}\n$ kubectl get nodes\nNAME   STATUS   ROLES   AGE   VERSION\nip-10-3-44-9.us-west-2.compute.internal   Ready   <none>   11m   v1.31.4\n\n{subnets}"
    );
    let facts = facts_of(&text);
    let counts: Vec<usize> = facts
        .messages
        .iter()
        .filter(|m| m.text.contains("AvailableIpAddressCount"))
        .map(|m| m.evidence.line)
        .collect();
    assert_eq!(counts, [5]);
    // The same text under another prompt is another command's output: both stay.
    let other = text.replacen(
        "\n\n[",
        "\n\n$ aws ec2 describe-subnets --subnet-ids subnet-0b5e2c8d71f4a9e36\n[",
        1,
    );
    let facts = facts_of(&other);
    assert_eq!(
        facts
            .messages
            .iter()
            .filter(|m| m.text.contains("AvailableIpAddressCount"))
            .count(),
        2
    );
}

/// `kubectl get ec2nodeclass <name> -o jsonpath='{.status.conditions}'` (several conditions on
/// one line) and `-o yaml | grep -A10 status` (or a key cut out of it, indented as in the
/// object): read into that EC2NodeClass, whose other fields stay unknown.
#[test]
fn a_printed_piece_of_an_ec2nodeclass_is_read_into_it() {
    let jsonpath = "$ kubectl get ec2nodeclass al2023 -o jsonpath='{.status.conditions}'\n[{\"lastTransitionTime\":\"2025-01-14T09:02:11Z\",\"message\":\"SecurityGroupSelector did not match any SecurityGroups\",\"reason\":\"SecurityGroupsNotFound\",\"status\":\"False\",\"type\":\"SecurityGroupsReady\"},{\"lastTransitionTime\":\"2025-01-14T09:02:11Z\",\"message\":\"SecurityGroupsReady=False\",\"reason\":\"UnhealthyDependents\",\"status\":\"False\",\"type\":\"Ready\"}]\n";
    let grep_status = "$ kubectl get ec2nodeclass al2023 -o yaml | grep -A9 status\nstatus:\n  conditions:\n  - lastTransitionTime: \"2025-01-14T09:02:11Z\"\n    message: SecurityGroupSelector did not match any SecurityGroups\n    reason: SecurityGroupsNotFound\n    status: \"False\"\n    type: SecurityGroupsReady\n  subnets:\n  - id: subnet-0a1b2c3d4e5f60718\n    zone: us-east-1a\n";
    let grep_conditions = "$ kubectl get ec2nodeclass al2023 -o yaml | grep -A5 conditions\n  conditions:\n  - lastTransitionTime: \"2025-01-14T09:02:11Z\"\n    message: SecurityGroupSelector did not match any SecurityGroups\n    reason: SecurityGroupsNotFound\n    status: \"False\"\n    type: SecurityGroupsReady\n";
    for text in [jsonpath, grep_status, grep_conditions] {
        let facts = facts_of(text);
        assert_eq!(facts.nodeclasses.len(), 1, "{text}");
        let class = &facts.nodeclasses[0];
        assert_eq!(class.meta.name, "al2023");
        assert!(class.meta.from_table, "{text}");
        let failing: Vec<(&str, &str)> = class
            .conditions
            .iter()
            .filter(|c| c.status == "False")
            .map(|c| (c.condition_type.as_str(), c.reason.as_deref().unwrap_or("")))
            .collect();
        assert!(
            failing.contains(&("SecurityGroupsReady", "SecurityGroupsNotFound")),
            "{text}: {failing:?}"
        );
    }
    let facts = facts_of(grep_status);
    assert_eq!(
        facts.nodeclasses[0].status_subnets,
        [(
            "subnet-0a1b2c3d4e5f60718".to_string(),
            "us-east-1a".to_string()
        )]
    );
    // A spec piece (`sed -n '/blockDeviceMappings/,/role/p'`) is the spec's.
    let facts = facts_of("$ kubectl get ec2nodeclass secure -o yaml | sed -n '/blockDeviceMappings/,/role/p'\n  blockDeviceMappings:\n  - deviceName: /dev/xvda\n    ebs:\n      encrypted: true\n  role: KarpenterNodeRole-prod\n");
    assert_eq!(
        facts.nodeclasses[0].role.as_deref(),
        Some("KarpenterNodeRole-prod")
    );
    assert_eq!(facts.nodeclasses[0].block_device_mappings.len(), 1);
    // Without a name on the prompt it stays text.
    let facts = facts_of(&jsonpath.replacen("al2023 ", "", 1));
    assert!(facts.nodeclasses.is_empty());
}

/// An indented event line pasted below a describe, after a blank line, is not one of the
/// described object's events: `Events:` is a describe's last section.
#[test]
fn an_event_line_below_a_describe_is_not_the_described_objects() {
    let describe = "Name:         web-0\nNamespace:    shop\nStatus:       Pending\nEvents:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  2m    default-scheduler  0/3 nodes are available: 3 Insufficient cpu.\n";
    let facts = facts_of(&format!(
        "{describe}\n  Normal  DisruptionBlocked  3m    karpenter  Pdb prevents pod evictions\n"
    ));
    let objects: Vec<Option<String>> = facts
        .events
        .iter()
        .map(|e| e.object.as_ref().map(|o| o.name.clone()))
        .collect();
    assert_eq!(objects, [Some("web-0".to_string()), None]);
}

/// The jsonpath the report itself proposes (`{.spec.disruption}{"\n"}`) is read like the bare one.
#[test]
fn a_jsonpath_field_with_a_newline_after_it_is_read() {
    let facts = facts_of("$ kubectl get nodepool batch -o jsonpath='{.spec.disruption}{\"\\n\"}'\n{\"consolidateAfter\":\"30s\",\"consolidationPolicy\":\"WhenEmpty\"}\n");
    assert_eq!(facts.nodepools.len(), 1);
    assert_eq!(
        facts.nodepools[0]
            .disruption
            .consolidation_policy
            .as_deref(),
        Some("WhenEmpty")
    );
}

/// A chat paste quoted as an indented code block keeps its Markdown fences indented: the fence
/// after a YAML object closes it instead of being read as one more YAML line.
#[test]
fn an_indented_fence_closes_the_yaml_above_it() {
    let text = "Output:\n\n    nodepool:\n    ```yaml\n    apiVersion: karpenter.sh/v1\n    kind: NodePool\n    metadata:\n      name: spark\n    spec:\n      template:\n        spec:\n          requirements:\n            - key: karpenter.sh/capacity-type\n              operator: In\n              values: [\"spot\"]\n    ```\n\n    thanks!\n";
    let facts = facts_of(text);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    assert_eq!(facts.nodepools.len(), 1);
    assert_eq!(
        facts.nodepools[0].allowed_values("karpenter.sh/capacity-type"),
        Some(vec!["spot".to_string()])
    );
}

/// A sentence typed right under a table is text, not a row: kubectl names have no blanks.
#[test]
fn a_sentence_under_a_table_is_not_a_row() {
    let facts = facts_of(
        "$ kubectl get nodes
NAME                                        STATUS                     ROLES    AGE   VERSION
ip-10-0-101-23.us-west-2.compute.internal   Ready                      <none>   12d   v1.29.3-eks-ae9a62a
ip-10-0-54-171.us-west-2.compute.internal   Ready,SchedulingDisabled   <none>   3d    v1.29.3-eks-ae9a62a
this node has been cordoned for 2 days and karpenter never removes it, any idea why?
$ kubectl get nodeclaims
NAME            TYPE          CAPACITY    ZONE         NODE   READY     AGE
default-w7d5n   c6a.2xlarge   spot        us-east-2a          Unknown   48m
stuck like this for an hour
",
    );
    let nodes: Vec<&str> = facts.nodes.iter().map(|n| n.meta.name.as_str()).collect();
    assert_eq!(
        nodes,
        [
            "ip-10-0-101-23.us-west-2.compute.internal",
            "ip-10-0-54-171.us-west-2.compute.internal"
        ]
    );
    assert_eq!(facts.nodeclaims.len(), 1);
    let text: Vec<&str> = facts
        .messages
        .iter()
        .filter(|m| m.origin == MessageOrigin::Unrecognised)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(
        text,
        [
            "this node has been cordoned for 2 days and karpenter never removes it, any idea why?",
            "stuck like this for an hour"
        ]
    );
}

/// `kubectl get pv` rows (kubectl 1.29+ adds VOLUMEATTRIBUTESCLASS; `-o wide` VOLUMEMODE):
/// the claim and class; the zone only from a zone label column.
#[test]
fn persistent_volume_rows_are_read() {
    let facts = facts_of(
        "$ kubectl get pv -L topology.kubernetes.io/zone
NAME                                       CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS      CLAIM                    STORAGECLASS   VOLUMEATTRIBUTESCLASS   REASON   AGE    ZONE
pvc-91aa7e0c-5d1b-4f5e-8a47-0c1d2e3f4a5b   50Gi       RWO            Delete           Bound       data/pgdata-postgres-1   gp3            <unset>                          118d   us-east-2c
pvc-3c1f00aa-1b2b-4c3c-9d4d-5e6f7a8b9c0d   10Gi       RWO            Retain           Available                            gp3            <unset>                          9d
$ kubectl get pv -o wide
NAME                                       CAPACITY   ACCESS MODES   RECLAIM POLICY   STATUS   CLAIM          STORAGECLASS   REASON   AGE   VOLUMEMODE
pvc-77aa7e0c-5d1b-4f5e-8a47-0c1d2e3f4a5b   8Gi        RWO            Delete           Bound    shop/cache-0   gp2                     3d    Filesystem
",
    );
    let pvs: Vec<_> = facts
        .persistent_volumes
        .iter()
        .map(|pv| {
            (
                pv.meta.name.as_str(),
                pv.claim
                    .as_ref()
                    .map(|c| format!("{}/{}", c.namespace.as_deref().unwrap_or("-"), c.name)),
                pv.storage_class.as_deref(),
                pv.phase.as_deref(),
                pv.zones.clone(),
            )
        })
        .collect();
    assert_eq!(
        pvs,
        [
            (
                "pvc-91aa7e0c-5d1b-4f5e-8a47-0c1d2e3f4a5b",
                Some("data/pgdata-postgres-1".to_string()),
                Some("gp3"),
                Some("Bound"),
                vec!["us-east-2c".to_string()]
            ),
            (
                "pvc-3c1f00aa-1b2b-4c3c-9d4d-5e6f7a8b9c0d",
                None,
                Some("gp3"),
                Some("Available"),
                vec![]
            ),
            (
                "pvc-77aa7e0c-5d1b-4f5e-8a47-0c1d2e3f4a5b",
                Some("shop/cache-0".to_string()),
                Some("gp2"),
                Some("Bound"),
                vec![]
            ),
        ]
    );
}

/// A command copied without its prompt still says what the lines under it are.
#[test]
fn a_command_copied_without_its_prompt_still_tells_its_output() {
    let facts = facts_of(
        "kubectl get nodeclaim default-x7k2p -o jsonpath='{.status.conditions}'
[{\"lastTransitionTime\":\"2024-11-02T10:29:03Z\",\"message\":\"Node not registered with cluster\",\"reason\":\"NodeNotFound\",\"status\":\"Unknown\",\"type\":\"Registered\"}]
",
    );
    assert_eq!(facts.nodeclaims.len(), 1);
    let claim = &facts.nodeclaims[0];
    assert_eq!(claim.meta.name, "default-x7k2p");
    assert!(claim.meta.from_table);
    assert_eq!(
        claim.condition("Registered").map(|c| c.status.as_str()),
        Some("Unknown")
    );
    // A sentence that starts with the tool's name stays text.
    for text in [
        "kubectl get nodes shows nothing wrong at all\n{\"a\":1}\n",
        "kubectl get nodeclaims says:\n{\"a\":1}\n",
        "kubectl delete node ip-10-0-1-2.ec2.internal\n",
    ] {
        let facts = facts_of(text);
        assert!(facts.commands.is_empty(), "{text}");
        assert!(
            facts.nodes.is_empty() && facts.nodeclaims.is_empty(),
            "{text}"
        );
    }
}

/// `{.metadata.annotations}` / `{.metadata.labels}` of a node or claim, `{.spec...}` of a pod,
/// printed by jsonpath: read into that object, whose other fields stay unknown.
#[test]
fn jsonpath_maps_of_nodes_claims_and_pods_are_read() {
    let facts = facts_of(
        "$ kubectl get node ip-10-0-33-7.eu-west-1.compute.internal -o jsonpath='{.metadata.annotations}'
{\"karpenter.sh/do-not-disrupt\":\"true\",\"node.alpha.kubernetes.io/ttl\":\"0\"}
$ kubectl get nodeclaim default-x7k2p -o jsonpath='{.metadata.labels}'
{\"karpenter.sh/nodepool\":\"default\",\"topology.kubernetes.io/zone\":\"eu-west-1b\"}
$ kubectl get pod web-0 -n shop -o jsonpath='{.spec.terminationGracePeriodSeconds}'
3600
",
    );
    let node = &facts.nodes[0];
    assert_eq!(node.meta.name, "ip-10-0-33-7.eu-west-1.compute.internal");
    assert_eq!(
        node.meta.annotation("karpenter.sh/do-not-disrupt"),
        Some("true")
    );
    assert!(node.meta.from_table && !node.meta.annotations_cut);
    let claim = &facts.nodeclaims[0];
    assert_eq!(claim.nodepool.as_deref(), Some("default"));
    assert!(claim.meta.annotations_cut);
    let pod = &facts.pods[0];
    assert_eq!(
        (pod.meta.namespace.as_deref(), pod.meta.name.as_str()),
        (Some("shop"), "web-0")
    );
    assert_eq!(pod.termination_grace_period_seconds, Some(3600));
    assert!(pod.meta.from_table);
}

/// `helm list -A | grep karpenter` and `kubectl get nodes --no-headers`: rows without their
/// header, read with the columns the command prints.
#[test]
fn helm_and_no_headers_rows_are_read() {
    let facts = facts_of(
        "$ helm list -A | grep karpenter
karpenter       \tkube-system\t14      \t2024-10-02 09:01:12.44 +0000 UTC \tdeployed\tkarpenter-1.0.6      \t1.0.6
karpenter-crd   \tkube-system\t2       \t2024-02-11 09:12:40.10 +0000 UTC \tdeployed\tkarpenter-crd-0.37.0 \t0.37.0
$ kubectl get nodes --no-headers
ip-10-0-33-7.eu-west-1.compute.internal    Ready                      <none>   5d    v1.30.2-eks-1552ad0
ip-10-0-90-12.eu-west-1.compute.internal   Ready,SchedulingDisabled   <none>   40d   v1.30.2-eks-1552ad0
",
    );
    assert_eq!(facts.karpenter_version.as_deref(), Some("1.0.6"));
    assert_eq!(facts.crd_chart_version.as_deref(), Some("0.37.0"));
    assert_eq!(facts.karpenter_namespace.as_deref(), Some("kube-system"));
    let nodes: Vec<(&str, bool)> = facts
        .nodes
        .iter()
        .map(|n| (n.meta.name.as_str(), n.unschedulable))
        .collect();
    assert_eq!(
        nodes,
        [
            ("ip-10-0-33-7.eu-west-1.compute.internal", false),
            ("ip-10-0-90-12.eu-west-1.compute.internal", true)
        ]
    );
}

/// `-o custom-columns`: the columns printing a label or an annotation fill the object's, and
/// a NAME-less header names its `.metadata.name` column.
#[test]
fn custom_columns_fill_labels_and_annotations() {
    let facts = facts_of(
        "$ kubectl get nodes -o custom-columns=NODE:.metadata.name,POOL:.metadata.labels.karpenter\\.sh/nodepool,DND:.metadata.annotations.karpenter\\.sh/do-not-disrupt
NODE                                       POOL      DND
ip-10-0-33-7.eu-west-1.compute.internal    default   true
ip-10-0-90-12.eu-west-1.compute.internal   <none>    <none>
",
    );
    let nodes: Vec<_> = facts
        .nodes
        .iter()
        .map(|n| {
            (
                n.meta.name.as_str(),
                n.meta.label("karpenter.sh/nodepool"),
                n.meta.annotation("karpenter.sh/do-not-disrupt"),
            )
        })
        .collect();
    assert_eq!(
        nodes,
        [
            (
                "ip-10-0-33-7.eu-west-1.compute.internal",
                Some("default"),
                Some("true")
            ),
            ("ip-10-0-90-12.eu-west-1.compute.internal", None, None),
        ]
    );
}

/// A condition's REASON / MESSAGE in custom columns: the row is a NodeClaim and also text the
/// rules scan (as the same line of a describe is).
#[test]
fn custom_columns_condition_reason_is_kept_as_text() {
    let facts = facts_of(
        "$ kubectl get nodeclaims -o custom-columns=NAME:.metadata.name,REASON:.status.conditions[?(@.type==\"Launched\")].reason
NAME            REASON
batch-7xq2p     InstanceProfileNameInvalid
",
    );
    assert_eq!(facts.nodeclaims.len(), 1);
    assert!(facts
        .messages
        .iter()
        .any(|m| m.text.contains("InstanceProfileNameInvalid")));
}

/// `kubectl get nodes,nodeclaims`: one table per kind, names prefixed by the kind.
#[test]
fn tables_of_several_kinds_are_read_by_their_prefixes() {
    let facts = facts_of(
        "$ kubectl get nodes,nodeclaims
NAME                                               STATUS   ROLES    AGE   VERSION
node/ip-192-168-12-40.us-east-2.compute.internal   Ready    <none>   41d   v1.30.4-eks-a737599

NAME                                           TYPE          CAPACITY    ZONE         NODE                                         READY   AGE
nodeclaim.karpenter.sh/general-purpose-8kq2x   m6i.xlarge    on-demand   us-east-2b   ip-192-168-77-3.us-east-2.compute.internal   True    6h
nodeclaim.karpenter.sh/general-purpose-w7d5n   c6a.2xlarge   spot        us-east-2a                                                False   18m
",
    );
    assert_eq!(
        facts.nodes[0].meta.name,
        "ip-192-168-12-40.us-east-2.compute.internal"
    );
    let claims: Vec<_> = facts
        .nodeclaims
        .iter()
        .map(|c| {
            (
                c.meta.name.as_str(),
                c.node_name.as_deref(),
                c.zone.as_deref(),
                c.condition("Ready").map(|r| r.status.as_str()),
            )
        })
        .collect();
    assert_eq!(
        claims,
        [
            (
                "general-purpose-8kq2x",
                Some("ip-192-168-77-3.us-east-2.compute.internal"),
                Some("us-east-2b"),
                Some("True")
            ),
            (
                "general-purpose-w7d5n",
                None,
                Some("us-east-2a"),
                Some("False")
            ),
        ]
    );
}

/// A word or a sentence typed under a table stays text: a lone first cell is no row, and a
/// sentence after an events row that ended its own is no wrapped tail of its message.
#[test]
fn a_remark_under_a_table_stays_text() {
    let facts = facts_of(
        "$ kubectl get nodes
NAME                                      STATUS     ROLES    AGE   VERSION
ip-10-0-12-8.us-west-2.compute.internal   NotReady   <none>   14m   v1.29.1-eks-61c0bbb
thanks
$ kubectl get events -n shop
LAST SEEN   TYPE      REASON             OBJECT            MESSAGE
2m          Warning   FailedScheduling   pod/web-7d9f-x2   0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.
Any idea? the nodepool gpu exists
",
    );
    assert_eq!(facts.nodes.len(), 1);
    assert!(facts.events[0]
        .message
        .ends_with("not helpful for scheduling."));
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    let text: Vec<&str> = facts
        .messages
        .iter()
        .filter(|m| m.origin == MessageOrigin::Unrecognised)
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(text, ["thanks", "Any idea? the nodepool gpu exists"]);
}

/// A table ends at a command copied without its prompt and at an `Events:` heading.
#[test]
fn a_table_ends_at_a_bare_command() {
    let facts = facts_of(
        "kubectl get pods -n shop
NAME          READY   STATUS    RESTARTS   AGE
web-7d9f-x2   0/1     Pending   0          12m
kubectl describe pod web-7d9f-x2 -n shop | tail -4
Events:
  Type     Reason            Age   From               Message
  ----     ------            ----  ----               -------
  Warning  FailedScheduling  2m    default-scheduler  0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}.
",
    );
    let pods: Vec<(Option<&str>, &str)> = facts
        .pods
        .iter()
        .map(|p| (p.meta.namespace.as_deref(), p.meta.name.as_str()))
        .collect();
    assert_eq!(pods, [(Some("shop"), "web-7d9f-x2")]);
    assert_eq!(facts.events.len(), 1);
    assert_eq!(
        facts.events[0].object.as_ref().map(|o| o.name.as_str()),
        Some("web-7d9f-x2")
    );
}

/// One function answers "is this line a command" for a prompted line and a bare one: `k` and
/// `oc` aliases, flags before the verb, and a quoted jsonpath with spaces are commands
/// without their prompt too; a sentence that starts with the tool's name is not.
#[test]
fn bare_commands_with_aliases_flags_and_quoted_spaces_are_commands() {
    for (line, verb, resource, name, namespace) in [
        ("k describe pod web-0 -n shop", "describe", "pod", Some("web-0"), Some("shop")),
        ("oc get nodes", "get", "nodes", None, None),
        ("kubectl -n karpenter logs deploy/karpenter", "logs", "deploy/karpenter", None, Some("karpenter")),
        ("kubectl --context prod describe node ip-10-0-1-2.ec2.internal", "describe", "node", Some("ip-10-0-1-2.ec2.internal"), None),
        ("kubectl --request-timeout 5s get nodeclaims", "get", "nodeclaims", None, None),
        (
            r#"kubectl get nodeclaims -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.status.nodeName}{"\n"}{end}'"#,
            "get", "nodeclaims", None, None,
        ),
        (
            "kubectl get nodes -o custom-columns='NAME:.metadata.name,POOL:.metadata.labels.karpenter\\.sh/nodepool' | grep gpu",
            "get", "nodes", None, None,
        ),
    ] {
        for text in [format!("{line}\n"), format!("$ {line}\n")] {
            let command = segment::command_line(text.trim_end()).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(command.verb.as_deref(), Some(verb), "{text}");
            assert_eq!(command.resource.as_deref(), Some(resource), "{text}");
            assert_eq!(command.name.as_deref(), name, "{text}");
            assert_eq!(command.namespace.as_deref(), namespace, "{text}");
            assert_eq!(facts_of(&text).commands.len(), 1, "{text}");
        }
    }
    for prose in [
        "run kubectl get pods to see.",
        "kubectl get pods to see what is going on",
        "k get pods shows them all Pending",
        "oc describe says nothing:",
        "  kubectl get nodes",
    ] {
        assert!(segment::command_line(prose).is_none(), "{prose}");
    }
}

/// A bare command ends the segment above it the way a prompted one does: it is no terminal
/// wrap's tail of a long event message, and the events under it belong to what it describes.
#[test]
fn a_bare_command_starts_a_segment_in_the_segmenter_too() {
    let long = "  Warning  FailedScheduling  2m    default-scheduler  0/3 nodes are available: 3 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/3 nodes are available.";
    for prefix in ["", "$ "] {
        let text = format!(
            "{prefix}kubectl describe pod web-0 -n shop | tail -3
Events:
  Type     Reason            Age   From               Message
  ----     ------            ----  ----               -------
{long}
{prefix}k describe pod api-1 -n shop | tail -3
  Type     Reason            Age   From               Message
  ----     ------            ----  ----               -------
{long}
"
        );
        let facts = facts_of(&text);
        assert_eq!(facts.commands.len(), 2, "{text}");
        let objects: Vec<&str> = facts
            .events
            .iter()
            .filter_map(|e| e.object.as_ref().map(|o| o.name.as_str()))
            .collect();
        assert_eq!(objects, ["web-0", "api-1"], "{text}");
        assert!(facts.events.iter().all(|e| !e.message.contains("describe")));
    }
}

/// An exporter's Event JSON line (kubernetes-event-exporter, eventrouter's `event`) keeps
/// `firstTimestamp` next to `lastTimestamp` and its count, as the same Event read as an
/// object does: ages and counts of a repeated event come from both.
#[test]
fn exporter_event_lines_keep_first_and_last_times_like_event_objects() {
    let fields = r#""involvedObject":{"kind":"Pod","namespace":"shop","name":"web-0"},"reason":"FailedScheduling","message":"0/3 nodes are available: 3 Insufficient cpu.","source":{"component":"default-scheduler"},"firstTimestamp":"2025-03-01T09:00:00Z","lastTimestamp":"2025-03-01T09:40:00Z","count":14,"type":"Warning""#;
    let exporter =
        format!("{{\"metadata\":{{\"name\":\"web-0.182\",\"namespace\":\"shop\"}},{fields}}}\n");
    let object = format!(
        "{{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{{\"name\":\"web-0.182\",\"namespace\":\"shop\"}},{fields}}}\n"
    );
    let seen = |text: &str| {
        let facts = facts_of(text);
        assert_eq!(facts.events.len(), 1, "{text}");
        let e = &facts.events[0];
        (
            e.count,
            e.evidence.count,
            e.evidence.first_seen.clone(),
            e.evidence.last_seen.clone(),
            e.age.clone(),
        )
    };
    let want = (
        14,
        14,
        Some("2025-03-01T09:00:00Z".to_string()),
        Some("2025-03-01T09:40:00Z".to_string()),
        Some("2025-03-01T09:40:00Z".to_string()),
    );
    assert_eq!(seen(&object), want);
    assert_eq!(seen(&exporter), want);
    let eventrouter = format!(
        "{{\"verb\":\"UPDATED\",\"event\":{}}}\n",
        exporter.trim_end()
    );
    assert_eq!(seen(&eventrouter), want);
}

/// `grep -n` and `grep -rn` put a line number (and a file) before each JSON log line; a
/// sentence ending in a colon before JSON stays text.
#[test]
fn grep_line_numbers_before_json_log_lines_are_prefixes() {
    let record = r#"{"level":"ERROR","time":"2025-02-03T14:21:07.118Z","logger":"controller","message":"could not schedule pod","Pod":{"name":"web-0","namespace":"shop"},"error":"x"}"#;
    for prefix in [
        "1187:",
        "1188-",
        "karpenter.log:1187:",
        "logs/karpenter-0.log:12:",
    ] {
        let facts = facts_of(&format!("{prefix}{record}\n"));
        assert_eq!(facts.logs.len(), 1, "{prefix}");
        assert_eq!(facts.logs[0].message, "could not schedule pod", "{prefix}");
    }
    for prefix in ["the error was:", "see 12 lines below:"] {
        assert!(
            facts_of(&format!("{prefix}{record}\n")).logs.is_empty(),
            "{prefix}"
        );
    }
}
