//! The object ingest through its two entry points, on texts in the real formats (several from
//! the corpus), for every kind and every notation.

use super::*;
use crate::facts::{Condition, CrdVersion, Requirement, Taint};

fn structured(label: &str, text: &str) -> Facts {
    let doc = Document::new(label, text);
    let mut facts = Facts::default();
    ingest_structured(
        Segment {
            doc: &doc,
            first_index: 0,
            text: &doc.text,
        },
        &mut facts,
    );
    facts
}

fn described(text: &str) -> Facts {
    let doc = Document::new("paste", text);
    let mut facts = Facts::default();
    ingest_generic_describe(
        Segment {
            doc: &doc,
            first_index: 0,
            text: &doc.text,
        },
        &mut facts,
    );
    facts
}

fn messages(facts: &Facts, origin: MessageOrigin) -> Vec<&Message> {
    facts
        .messages
        .iter()
        .filter(|m| m.origin == origin)
        .collect()
}

/// The facts without any evidence, to compare what different notations of one object say.
fn without_evidence(facts: &Facts) -> String {
    let mut text = format!(
        "{:?}{:?}{:?}{:?}{:?}{:?}{:?}{:?}",
        facts.pods,
        facts.nodes,
        facts.nodeclaims,
        facts.nodepools,
        facts.nodeclasses,
        facts.pdbs,
        facts.workloads,
        facts.events
    );
    for m in &facts.messages {
        text.push_str(&format!(
            "{:?}{}{:?}{:?}",
            m.origin, m.text, m.reason, m.object
        ));
    }
    // Evidence is printed as `Evidence { source: .., line: .., text: .., ... }`: drop it.
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(start) = rest.find("Evidence {") {
        out.push_str(&rest[..start]);
        let mut depth = 0;
        let mut end = start;
        for (i, c) in rest[start..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = start + i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn req(key: &str, operator: &str, values: &[&str]) -> Requirement {
    Requirement {
        key: key.into(),
        operator: operator.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
        min_values: None,
    }
}

const NODECLAIM_NOT_INITIALIZED: &str =
    include_str!("../../../../tests/corpus/nodeclaim-not-initialized-a/input.yaml");

#[test]
fn nodeclaim_yaml() {
    let facts = structured("input.yaml", NODECLAIM_NOT_INITIALIZED);
    assert!(facts.input_errors.is_empty());
    let claim = &facts.nodeclaims[0];
    assert_eq!(claim.meta.name, "gpu-7c2lq");
    assert_eq!(claim.meta.api_version.as_deref(), Some("karpenter.sh/v1"));
    assert_eq!(claim.nodepool.as_deref(), Some("gpu"));
    assert_eq!(claim.nodeclass_ref.as_deref(), Some("gpu"));
    assert_eq!(claim.instance_type.as_deref(), Some("g5.xlarge"));
    assert_eq!(
        claim.zone.as_deref(),
        Some("us-east-1a"),
        "from the provider ID"
    );
    assert_eq!(
        claim.node_name.as_deref(),
        Some("ip-10-0-12-34.ec2.internal")
    );
    assert_eq!(
        claim.requests.get("nvidia.com/gpu").map(String::as_str),
        Some("1")
    );
    assert_eq!(
        claim.startup_taints,
        vec![Taint {
            key: "node.cilium.io/agent-not-ready".into(),
            value: Some("true".into()),
            effect: "NoExecute".into()
        }]
    );
    let initialized = claim.condition("Initialized").unwrap();
    assert_eq!(initialized.status, "Unknown");
    assert_eq!(initialized.reason.as_deref(), Some("ResourceNotRegistered"));
    let evidence = initialized.evidence.as_ref().unwrap();
    assert_eq!(evidence.line, 34);
    assert_eq!(
        evidence.text,
        "message: Resource \"nvidia.com/gpu\" was requested but not registered"
    );
    let conditions = messages(&facts, MessageOrigin::Condition);
    assert_eq!(conditions.len(), 4);
    let m = conditions
        .iter()
        .find(|m| m.reason.as_deref() == Some("ResourceNotRegistered"))
        .unwrap();
    assert_eq!(
        m.text,
        "Initialized=Unknown ResourceNotRegistered: Resource \"nvidia.com/gpu\" was requested but not registered"
    );
    assert_eq!(
        m.object,
        Some(ObjectRef::new("NodeClaim", None, "gpu-7c2lq"))
    );
    assert_eq!(m.nodepool.as_deref(), Some("gpu"));
    assert_eq!(
        conditions[0].text, "Launched=True Launched",
        "an empty message adds nothing"
    );
    assert!(facts.has(Collected::NodeClaims));
    assert!(messages(&facts, MessageOrigin::Unrecognised).is_empty());
}

#[test]
fn the_same_object_as_json_pretty_one_line_and_describe_gives_the_same_facts() {
    let from_yaml = structured("input.yaml", NODECLAIM_NOT_INITIALIZED);
    let (documents, _) = yaml::parse_documents(NODECLAIM_NOT_INITIALIZED, 0);
    let json = documents[0].to_json();
    let pretty = serde_json::to_string_pretty(&json).unwrap();
    let one_line = serde_json::to_string(&json).unwrap();
    let from_pretty = structured("input.json", &pretty);
    let from_line = structured("input.json", &one_line);
    assert_eq!(without_evidence(&from_yaml), without_evidence(&from_pretty));
    assert_eq!(without_evidence(&from_yaml), without_evidence(&from_line));

    let describe = "Name:         gpu-7c2lq
Namespace:
Labels:       karpenter.sh/nodepool=gpu
              node.kubernetes.io/instance-type=g5.xlarge
Annotations:  <none>
API Version:  karpenter.sh/v1
Kind:         NodeClaim
Spec:
  Node Class Ref:
    Group:  karpenter.k8s.aws
    Kind:   EC2NodeClass
    Name:   gpu
  Resources:
    Requests:
      Cpu:             1150m
      nvidia.com/gpu:  1
      Pods:            5
  Startup Taints:
    Effect:  NoExecute
    Key:     node.cilium.io/agent-not-ready
    Value:   true
Status:
  Conditions:
    Message:
    Reason:   Launched
    Status:   True
    Type:     Launched
    Message:
    Reason:   Registered
    Status:   True
    Type:     Registered
    Message:  Resource \"nvidia.com/gpu\" was requested but not registered
    Reason:   ResourceNotRegistered
    Status:   Unknown
    Type:     Initialized
    Message:  Initialized=Unknown
    Reason:   ReconcilingDependents
    Status:   Unknown
    Type:     Ready
  Node Name:    ip-10-0-12-34.ec2.internal
  Provider ID:  aws:///us-east-1a/i-0fedcba9876543210
";
    let from_describe = described(describe);
    let claim = &from_describe.nodeclaims[0];
    let yaml_claim = &from_yaml.nodeclaims[0];
    assert_eq!(claim.startup_taints, yaml_claim.startup_taints);
    assert_eq!(claim.requests, yaml_claim.requests);
    assert_eq!(claim.zone, yaml_claim.zone);
    assert_eq!(claim.nodepool, yaml_claim.nodepool);
    assert_eq!(claim.nodeclass_ref, yaml_claim.nodeclass_ref);
    let strip = |c: &[Condition]| -> Vec<(String, String, Option<String>, Option<String>)> {
        c.iter()
            .map(|c| {
                (
                    c.condition_type.clone(),
                    c.status.clone(),
                    c.reason.clone(),
                    c.message.clone(),
                )
            })
            .collect()
    };
    assert_eq!(strip(&claim.conditions), strip(&yaml_claim.conditions));
    let evidence = claim
        .condition("Initialized")
        .unwrap()
        .evidence
        .clone()
        .unwrap();
    assert_eq!(evidence.line, 32);
    assert_eq!(
        evidence.text,
        "Message:  Resource \"nvidia.com/gpu\" was requested but not registered"
    );
}

#[test]
fn one_line_json_quotes_the_condition_not_the_whole_line() {
    let (documents, _) = yaml::parse_documents(NODECLAIM_NOT_INITIALIZED, 0);
    let one_line = serde_json::to_string(&documents[0].to_json()).unwrap();
    let facts = structured("GET /apis/karpenter.sh/v1/nodeclaims/gpu-7c2lq", &one_line);
    let evidence = facts.nodeclaims[0]
        .condition("Initialized")
        .unwrap()
        .evidence
        .clone()
        .unwrap();
    assert_eq!(evidence.line, 1);
    assert_eq!(
        evidence.text,
        r#"{"message":"Resource \"nvidia.com/gpu\" was requested but not registered","reason":"ResourceNotRegistered","status":"Unknown","type":"Initialized"}"#
    );
    assert_eq!(
        facts.nodeclaims[0].meta.evidence.as_ref().unwrap().text,
        r#""name":"gpu-7c2lq""#
    );
}

#[test]
fn multi_document_nodeclass_and_nodepool() {
    let text = include_str!("../../../../tests/corpus/ec2nodeclass-subnets-not-ready-a/input.yaml");
    let facts = structured("input.yaml", text);
    assert!(facts.input_errors.is_empty());
    let class = &facts.nodeclasses[0];
    assert_eq!(class.meta.name, "default");
    assert_eq!(class.ami_family.as_deref(), Some("AL2023"));
    assert_eq!(class.ami_alias(), Some("al2023@latest"));
    assert_eq!(class.role.as_deref(), Some("KarpenterNodeRole-my-cluster"));
    assert_eq!(
        class.subnet_selector_terms,
        vec![serde_json::json!({"tags": {"karpenter.sh/discovery": "my-clusterr"}})]
    );
    assert_eq!(class.status_amis[0].id, "ami-0123456789abcdef0");
    assert_eq!(
        class.status_amis[0].requirements,
        vec![req("kubernetes.io/arch", "In", &["amd64"])]
    );
    assert_eq!(
        class.status_instance_profile.as_deref(),
        Some("my-cluster_1234567890123456789")
    );
    assert!(class.status_subnets.is_empty());
    assert_eq!(class.conditions.len(), 7);
    let pool = &facts.nodepools[0];
    assert_eq!(pool.nodeclass_ref.as_deref(), Some("default"));
    assert_eq!(
        pool.allowed_values("karpenter.sh/capacity-type"),
        Some(vec!["spot".to_string(), "on-demand".to_string()])
    );
    let ready = facts
        .messages
        .iter()
        .find(|m| m.text.starts_with("NodeClassReady=False"))
        .unwrap();
    assert_eq!(
        ready.text,
        "NodeClassReady=False UnhealthyDependents: SubnetsReady=False, ValidationSucceeded=False"
    );
    assert_eq!(ready.nodepool.as_deref(), Some("default"));
    assert_eq!(ready.evidence.line, 103);
    assert!(facts.has(Collected::NodeClasses) && facts.has(Collected::NodePools));
}

#[test]
fn a_shell_prompt_before_the_yaml_is_kept_and_skipped() {
    let text = "$ kubectl get nodepool batch-spot -o yaml\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: batch-spot\n";
    let facts = structured("input.txt", text);
    assert!(facts.input_errors.is_empty());
    assert_eq!(facts.nodepools[0].meta.name, "batch-spot");
    assert_eq!(facts.nodepools[0].meta.evidence.as_ref().unwrap().line, 5);
    let kept = messages(&facts, MessageOrigin::Unrecognised);
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].evidence.line, 1);
}

#[test]
fn nodepool_v1_spec() {
    let text = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: batch-spot
spec:
  disruption:
    budgets:
    - nodes: 10%
    - nodes: \"0\"
      schedule: \"0 9 * * mon-fri\"
      duration: 8h
      reasons: [Drifted]
    consolidateAfter: 1m
    consolidationPolicy: WhenEmpty
  limits:
    cpu: \"512\"
  weight: 10
  template:
    metadata:
      labels:
        workload: batch
    spec:
      expireAfter: 168h
      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: batch}
      requirements:
      - key: node.kubernetes.io/instance-type
        operator: In
        values: [c6i.8xlarge, c7i.8xlarge]
        minValues: 2
      taints:
      - {effect: NoSchedule, key: workload, value: batch}
status:
  resources:
    cpu: \"64\"
    nodes: \"2\"
";
    let facts = structured("input.yaml", text);
    let pool = &facts.nodepools[0];
    assert_eq!(
        pool.disruption.consolidation_policy.as_deref(),
        Some("WhenEmpty")
    );
    assert_eq!(pool.disruption.consolidate_after.as_deref(), Some("1m"));
    assert_eq!(pool.disruption.budgets.len(), 2);
    assert_eq!(pool.disruption.budgets[1]["nodes"], "0");
    assert_eq!(
        pool.disruption.budgets[1]["reasons"],
        serde_json::json!(["Drifted"])
    );
    assert_eq!(pool.disruption.evidence.as_ref().unwrap().line, 6);
    assert_eq!(pool.limits.get("cpu").map(String::as_str), Some("512"));
    assert_eq!(pool.usage.get("cpu").map(String::as_str), Some("64"));
    assert_eq!(pool.weight, Some(10));
    assert_eq!(pool.expire_after.as_deref(), Some("168h"));
    assert_eq!(
        pool.template_labels.get("workload").map(String::as_str),
        Some("batch")
    );
    assert_eq!(pool.requirements[0].min_values, Some(2));
    assert_eq!(pool.taints[0].display(), "workload=batch:NoSchedule");
    assert!(!pool.is_provisioner);
}

#[test]
fn v1beta1_nodepool_and_nodeclass() {
    let text = "apiVersion: karpenter.sh/v1beta1
kind: NodePool
metadata:
  name: default
spec:
  disruption:
    consolidationPolicy: WhenUnderutilized
    expireAfter: 720h
  template:
    spec:
      kubelet:
        maxPods: 110
      nodeClassRef:
        apiVersion: karpenter.k8s.aws/v1beta1
        kind: EC2NodeClass
        name: default
---
apiVersion: karpenter.k8s.aws/v1beta1
kind: EC2NodeClass
metadata:
  name: default
spec:
  amiFamily: AL2
  role: KarpenterNodeRole
  subnetSelectorTerms:
  - tags:
      karpenter.sh/discovery: demo
  - id: subnet-0abc
  blockDeviceMappings:
  - deviceName: /dev/xvda
    ebs:
      volumeSize: 100Gi
      volumeType: gp3
      encrypted: true
      kmsKeyID: arn:aws:kms:us-west-2:111122223333:key/1234abcd
status:
  subnets:
  - id: subnet-0abc
    zone: us-west-2a
";
    let facts = structured("input.yaml", text);
    let pool = &facts.nodepools[0];
    assert_eq!(
        pool.meta.api_version.as_deref(),
        Some("karpenter.sh/v1beta1")
    );
    assert_eq!(pool.max_pods(), Some(110));
    assert_eq!(pool.expire_after.as_deref(), Some("720h"));
    assert_eq!(
        pool.disruption.consolidation_policy.as_deref(),
        Some("WhenUnderutilized")
    );
    assert_eq!(pool.nodeclass_ref.as_deref(), Some("default"));
    let class = &facts.nodeclasses[0];
    assert_eq!(class.subnet_selector_terms.len(), 2);
    assert_eq!(
        class.status_subnets,
        vec![("subnet-0abc".to_string(), "us-west-2a".to_string())]
    );
    let bdm = &class.block_device_mappings[0];
    assert_eq!(bdm.device_name.as_deref(), Some("/dev/xvda"));
    assert_eq!(bdm.volume_size.as_deref(), Some("100Gi"));
    assert_eq!(bdm.encrypted, Some(true));
    assert_eq!(
        bdm.kms_key_id.as_deref(),
        Some("arn:aws:kms:us-west-2:111122223333:key/1234abcd")
    );
    assert_eq!(
        bdm.evidence.as_ref().unwrap().text,
        "- deviceName: /dev/xvda"
    );
    assert!(class.max_pods().is_none());
}

#[test]
fn v1alpha5_provisioner_machine_and_aws_node_template() {
    let text = "apiVersion: karpenter.sh/v1alpha5
kind: Provisioner
metadata:
  name: default
spec:
  requirements:
  - key: karpenter.sh/capacity-type
    operator: In
    values: [spot]
  limits:
    resources:
      cpu: 1000
  providerRef:
    name: default
  kubeletConfiguration:
    maxPods: 58
  consolidation:
    enabled: true
  ttlSecondsUntilExpired: 2592000
  labels:
    team: a
---
apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: default
spec:
  subnetSelector:
    karpenter.sh/discovery: demo
  securityGroupSelector:
    aws-ids: sg-1, sg-2
  amiSelector:
    aws::name: my-ami
---
apiVersion: karpenter.sh/v1alpha5
kind: Machine
metadata:
  name: default-abcde
  labels:
    karpenter.sh/provisioner-name: default
spec:
  machineTemplateRef:
    name: default
status:
  providerID: aws:///eu-west-1b/i-0123
  conditions:
  - type: MachineInitialized
    status: \"False\"
    reason: NodeNotReady
";
    let facts = structured("input.yaml", text);
    let pool = &facts.nodepools[0];
    assert!(pool.is_provisioner);
    assert_eq!(pool.nodeclass_ref.as_deref(), Some("default"));
    assert_eq!(pool.limits.get("cpu").map(String::as_str), Some("1000"));
    assert_eq!(pool.max_pods(), Some(58));
    assert_eq!(pool.disruption.consolidation_enabled, Some(true));
    assert_eq!(pool.expire_after.as_deref(), Some("2592000s"));
    assert_eq!(
        pool.template_labels.get("team").map(String::as_str),
        Some("a")
    );
    let template = &facts.nodeclasses[0];
    assert!(template.is_aws_node_template);
    assert_eq!(
        template.subnet_selector_terms,
        vec![serde_json::json!({"tags": {"karpenter.sh/discovery": "demo"}})]
    );
    assert_eq!(
        template.security_group_selector_terms,
        vec![
            serde_json::json!({"id": "sg-1"}),
            serde_json::json!({"id": "sg-2"})
        ]
    );
    assert_eq!(
        template.ami_selector_terms,
        vec![serde_json::json!({"name": "my-ami"})]
    );
    let machine = &facts.nodeclaims[0];
    assert!(machine.is_machine);
    assert_eq!(machine.nodepool.as_deref(), Some("default"));
    assert_eq!(machine.nodeclass_ref.as_deref(), Some("default"));
    assert_eq!(machine.zone.as_deref(), Some("eu-west-1b"));
    assert_eq!(
        facts
            .messages
            .iter()
            .find(|m| m.origin == MessageOrigin::Condition)
            .unwrap()
            .text,
        "MachineInitialized=False NodeNotReady"
    );
}

const KARPENTER_DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: karpenter
  namespace: kube-system
  labels:
    app.kubernetes.io/name: karpenter
    app.kubernetes.io/version: 1.0.8
    helm.sh/chart: karpenter-1.0.8
spec:
  replicas: 2
  selector:
    matchLabels:
      app.kubernetes.io/name: karpenter
  template:
    metadata:
      labels:
        app.kubernetes.io/name: karpenter
    spec:
      dnsPolicy: ClusterFirst
      containers:
      - name: controller
        image: public.ecr.aws/karpenter/controller:1.0.8@sha256:1b2d3f4a5e6c7b8a9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c
        args:
        - --log-level
        - debug
        - --isolated-vpc=true
        env:
        - name: LOG_LEVEL
          value: debug
        - name: CLUSTER_NAME
          value: demo
        - name: AWS_REGION
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
status:
  readyReplicas: 0
  replicas: 2
  conditions:
  - type: Available
    status: \"False\"
    reason: MinimumReplicasUnavailable
    message: Deployment does not have minimum availability.
";

#[test]
fn karpenter_deployment_version_namespace_and_settings() {
    let facts = structured("input.yaml", KARPENTER_DEPLOYMENT);
    assert_eq!(facts.karpenter_version.as_deref(), Some("1.0.8"));
    assert_eq!(facts.karpenter_namespace.as_deref(), Some("kube-system"));
    assert!(facts.has(Collected::KarpenterDeployment));
    let deployment = facts.karpenter_deployment().unwrap();
    assert_eq!(deployment.dns_policy.as_deref(), Some("ClusterFirst"));
    assert_eq!(
        (deployment.replicas, deployment.ready_replicas),
        (Some(2), Some(0))
    );
    assert_eq!(deployment.containers[0].image_tag(), Some("1.0.8"));
    assert_eq!(
        deployment.containers[0]
            .env
            .get("AWS_REGION")
            .map(String::as_str),
        Some("")
    );
    let log_level: Vec<&Setting> = facts
        .settings_named(&["LOG_LEVEL", "--log-level"])
        .collect();
    assert_eq!(log_level.len(), 2);
    assert_eq!(log_level[0].source, SettingSource::Env);
    assert_eq!(log_level[0].value, "debug");
    assert_eq!(log_level[0].evidence.text, "value: debug");
    assert_eq!(log_level[0].evidence.line, 30);
    assert_eq!(
        log_level[0].owner,
        Some(ObjectRef::new(
            "Deployment",
            Some("kube-system"),
            "karpenter"
        ))
    );
    assert_eq!(log_level[0].container.as_deref(), Some("controller"));
    assert_eq!(log_level[1].source, SettingSource::Arg);
    assert_eq!(log_level[1].value, "debug");
    let isolated = facts.settings_named(&["--isolated-vpc"]).next().unwrap();
    assert_eq!(isolated.value, "true");
    assert!(
        facts.settings_named(&["AWS_REGION"]).next().is_none(),
        "valueFrom is not a literal setting"
    );
    let available = messages(&facts, MessageOrigin::Condition);
    assert_eq!(
        available[0].text,
        "Available=False MinimumReplicasUnavailable: Deployment does not have minimum availability."
    );
}

#[test]
fn karpenter_version_from_chart_label_or_old_tag() {
    let text = "apiVersion: v1
kind: Pod
metadata:
  name: karpenter-5d8f9c7b6-x2x9k
  namespace: karpenter
  labels:
    app.kubernetes.io/name: karpenter
    helm.sh/chart: karpenter-v0.31.4
spec:
  containers:
  - name: controller
    image: 123456789012.dkr.ecr.us-east-1.amazonaws.com/mirror/karpenter/controller:v0.31.4
";
    let facts = structured("input.yaml", text);
    assert_eq!(facts.karpenter_version.as_deref(), Some("0.31.4"));
    assert_eq!(facts.karpenter_namespace.as_deref(), Some("karpenter"));
    assert!(
        !facts.has(Collected::KarpenterDeployment),
        "a pod is not the deployment"
    );

    let labels_only = "kind: Deployment\nmetadata:\n  name: karpenter\n  namespace: karpenter\n  labels:\n    helm.sh/chart: karpenter-1.6.2\n";
    assert_eq!(
        structured("x", labels_only).karpenter_version.as_deref(),
        Some("1.6.2")
    );
    let other = "kind: Deployment\nmetadata:\n  name: aws-node-termination-handler\n  labels:\n    app.kubernetes.io/version: 1.25.0\n";
    assert_eq!(structured("x", other).karpenter_version, None);
}

#[test]
fn pod_spec_and_status() {
    let text = "apiVersion: v1
kind: Pod
metadata:
  name: web-7d9c6b5f4-abcde
  namespace: shop
  labels:
    app: web
    pod-template-hash: 7d9c6b5f4
  annotations:
    karpenter.sh/do-not-disrupt: \"true\"
  ownerReferences:
  - apiVersion: apps/v1
    kind: ReplicaSet
    name: web-7d9c6b5f4
    controller: true
spec:
  nodeSelector:
    karpenter.sh/capacity-type: spot
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - key: topology.kubernetes.io/zone
            operator: In
            values: [us-east-1a]
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
  tolerations:
  - key: workload
    operator: Equal
    value: batch
    effect: NoSchedule
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: DoNotSchedule
    labelSelector:
      matchLabels:
        app: web
  initContainers:
  - name: init
    image: busybox
  containers:
  - name: web
    image: registry.k8s.io/ingress-nginx/controller:v1.11.2
    ports:
    - containerPort: 80
      hostPort: 8080
    resources:
      requests:
        cpu: 500m
        memory: 1Gi
  volumes:
  - name: data
    persistentVolumeClaim:
      claimName: data-web-0
  - name: scratch
    ephemeral:
      volumeClaimTemplate:
        spec: {}
  dnsPolicy: ClusterFirst
  serviceAccountName: web
status:
  phase: Pending
  qosClass: Burstable
  nominatedNodeName: ip-10-0-1-2.ec2.internal
  conditions:
  - type: PodScheduled
    status: \"False\"
    reason: Unschedulable
    message: '0/3 nodes are available: 3 node(s) didn''t match Pod''s node affinity/selector.'
  containerStatuses:
  - name: web
    ready: false
    restartCount: 3
    lastState:
      terminated:
        reason: OOMKilled
        exitCode: 137
    state:
      waiting:
        reason: ImagePullBackOff
        message: Back-off pulling image \"registry.k8s.io/ingress-nginx/controller:v1.11.2\"
";
    let facts = structured("input.yaml", text);
    let pod = &facts.pods[0];
    assert!(pod.is_pending());
    assert_eq!(pod.qos_class.as_deref(), Some("Burstable"));
    assert_eq!(
        pod.nominated_node.as_deref(),
        Some("ip-10-0-1-2.ec2.internal")
    );
    assert_eq!(
        pod.node_selector
            .get("karpenter.sh/capacity-type")
            .map(String::as_str),
        Some("spot")
    );
    assert_eq!(
        pod.node_affinity,
        vec![vec![req(
            "topology.kubernetes.io/zone",
            "In",
            &["us-east-1a"]
        )]]
    );
    assert!(!pod.node_affinity_match_fields);
    assert!(pod.has_pod_anti_affinity && !pod.has_pod_affinity);
    assert_eq!(pod.tolerations[0].value.as_deref(), Some("batch"));
    let spread = &pod.topology_spread[0];
    assert_eq!(spread.max_skew, Some(1));
    assert_eq!(
        spread
            .label_selector
            .as_ref()
            .unwrap()
            .match_labels
            .get("app")
            .map(String::as_str),
        Some("web")
    );
    assert_eq!(pod.host_ports, vec![8080]);
    assert_eq!(
        pod.pvc_names,
        vec!["data-web-0", "web-7d9c6b5f4-abcde-scratch"]
    );
    assert_eq!(pod.dns_policy.as_deref(), Some("ClusterFirst"));
    assert_eq!(pod.service_account.as_deref(), Some("web"));
    assert_eq!(pod.init_containers[0].name, "init");
    let web = &pod.containers[0];
    assert_eq!(web.state.as_deref(), Some("waiting"));
    assert_eq!(web.reason.as_deref(), Some("ImagePullBackOff"));
    assert_eq!(web.ready, Some(false));
    assert_eq!(web.restart_count, Some(3));
    assert_eq!(web.last_termination_reason.as_deref(), Some("OOMKilled"));
    assert_eq!(web.requests.get("cpu").map(String::as_str), Some("500m"));
    assert_eq!(
        pod.meta.annotation("karpenter.sh/do-not-disrupt"),
        Some("true")
    );
    let fields = messages(&facts, MessageOrigin::ObjectField);
    assert_eq!(fields.len(), 2);
    assert_eq!(
        fields[0].text,
        "ImagePullBackOff: Back-off pulling image \"registry.k8s.io/ingress-nginx/controller:v1.11.2\""
    );
    assert_eq!(fields[0].reason.as_deref(), Some("ImagePullBackOff"));
    assert_eq!(fields[0].evidence.line, 87);
    assert_eq!(fields[1].text, "OOMKilled");
    let scheduled = messages(&facts, MessageOrigin::Condition)[0];
    assert_eq!(
        scheduled.text,
        "PodScheduled=False Unschedulable: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
    );
    assert_eq!(
        facts.controller_of(pod),
        Some(ObjectRef::new("Deployment", Some("shop"), "web"))
    );
}

#[test]
fn workloads_pdbs_and_selection() {
    let text = include_str!("../../../../tests/corpus/workload-without-pdb-b/input.yaml");
    let facts = structured("input.yaml", text);
    assert!(facts.input_errors.is_empty());
    let deployment = &facts.workloads[0];
    assert_eq!(
        (deployment.kind.as_str(), deployment.replicas),
        ("Deployment", Some(2))
    );
    assert_eq!(
        deployment
            .selector
            .match_labels
            .get("app.kubernetes.io/component")
            .map(String::as_str),
        Some("app")
    );
    assert_eq!(
        deployment.containers[0]
            .env
            .get("KONG_ROLE")
            .map(String::as_str),
        Some("data_plane")
    );
    let pdb = &facts.pdbs[0];
    assert_eq!(pdb.max_unavailable.as_deref(), Some("1"));
    assert_eq!(
        (
            pdb.disruptions_allowed,
            pdb.current_healthy,
            pdb.desired_healthy,
            pdb.expected_pods
        ),
        (Some(1), Some(1), Some(0), Some(1))
    );
    assert!(facts.has(Collected::Pdbs));
    assert!(!facts.pods.is_empty());
    for pod in &facts.pods {
        assert_eq!(
            facts.pdbs_covering(pod).count(),
            0,
            "the PDB selects the controller, not the app"
        );
        assert!(deployment.selector.matches(&pod.meta.labels));
    }
}

#[test]
fn daemonset_and_replicaset() {
    let text = "apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: aws-node-termination-handler
  namespace: kube-system
spec:
  template:
    spec:
      containers:
      - name: aws-node-termination-handler
        image: public.ecr.aws/aws-ec2/aws-node-termination-handler:v1.25.0
        env:
        - name: ENABLE_REBALANCE_DRAINING
          value: \"true\"
status:
  desiredNumberScheduled: 3
  numberReady: 3
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-7d9c6b5f4
  namespace: shop
  ownerReferences:
  - {apiVersion: apps/v1, kind: Deployment, name: web, controller: true}
spec:
  replicas: 2
";
    let facts = structured("input.yaml", text);
    let ds = &facts.workloads[0];
    assert_eq!((ds.replicas, ds.ready_replicas), (Some(3), Some(3)));
    let setting = facts
        .settings_named(&["ENABLE_REBALANCE_DRAINING"])
        .next()
        .unwrap();
    assert_eq!(setting.value, "true");
    assert_eq!(setting.owner.as_ref().unwrap().kind, "DaemonSet");
    let rs = &facts.workloads[1];
    assert_eq!(
        rs.meta.owners,
        vec![ObjectRef::new("Deployment", Some("shop"), "web")]
    );
    assert_eq!(facts.karpenter_version, None);
}

#[test]
fn node_object() {
    let text = r#"{
    "apiVersion": "v1",
    "kind": "Node",
    "metadata": {
        "name": "ip-10-0-12-34.ec2.internal",
        "labels": {
            "karpenter.sh/nodepool": "gpu",
            "karpenter.sh/capacity-type": "spot",
            "node.kubernetes.io/instance-type": "g5.xlarge"
        }
    },
    "spec": {
        "providerID": "aws:///us-east-1a/i-0fedcba9876543210",
        "unschedulable": true,
        "taints": [
            {"key": "node.cilium.io/agent-not-ready", "value": "true", "effect": "NoExecute"}
        ]
    },
    "status": {
        "allocatable": {"cpu": "3920m", "nvidia.com/gpu": "0"},
        "capacity": {"cpu": "4"},
        "conditions": [
            {
                "type": "Ready",
                "status": "False",
                "reason": "KubeletNotReady",
                "message": "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized"
            }
        ]
    }
}"#;
    let facts = structured("node.json", text);
    let node = &facts.nodes[0];
    assert!(node.unschedulable);
    assert!(!node.karpenter_initialized());
    assert_eq!(node.nodepool(), Some("gpu"));
    assert_eq!(node.capacity_type(), Some("spot"));
    assert_eq!(node.instance_type(), Some("g5.xlarge"));
    assert_eq!(
        node.taints[0].display(),
        "node.cilium.io/agent-not-ready=true:NoExecute"
    );
    assert_eq!(
        node.allocatable.get("nvidia.com/gpu").map(String::as_str),
        Some("0")
    );
    let ready = node.condition("Ready").unwrap();
    assert_eq!(ready.reason.as_deref(), Some("KubeletNotReady"));
    let evidence = ready.evidence.as_ref().unwrap();
    assert_eq!(evidence.line, 27);
    assert!(evidence
        .text
        .starts_with("\"message\": \"container runtime network not ready"));
    assert!(facts.has(Collected::Nodes));
}

#[test]
fn core_v1_event_list_yaml() {
    let text = "apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Event
  count: 4
  firstTimestamp: \"2025-02-11T09:41:27Z\"
  lastTimestamp: \"2025-02-11T09:51:27Z\"
  involvedObject:
    apiVersion: v1
    kind: Pod
    name: web-0
    namespace: shop
  message: 'Failed to schedule pod, incompatible with nodepool \"default\", daemonset
    overhead={\"cpu\":\"180m\"}, did not tolerate workload=batch:NoSchedule'
  metadata:
    name: web-0.17a
    namespace: shop
  reason: FailedScheduling
  reportingComponent: karpenter
  source:
    component: karpenter
  type: Warning
- apiVersion: v1
  kind: Event
  involvedObject: {kind: NodePool, name: default}
  # kubectl folds long strings; a block scalar reads the same
  message: >-
    NodePool requirements filtered out all compatible available instance types
  reason: NoCompatibleInstanceTypes
  reportingComponent: karpenter
  source: {}
  type: Warning
  eventTime: \"2025-02-11T09:50:00.000000Z\"
metadata:
  resourceVersion: \"\"
";
    let facts = structured("events.yaml", text);
    assert_eq!(facts.events.len(), 2);
    let first = &facts.events[0];
    assert_eq!(first.event_type, "Warning");
    assert_eq!(first.reason, "FailedScheduling");
    assert_eq!(first.source, "karpenter");
    assert_eq!(first.count, 4);
    assert_eq!(
        first.object,
        Some(ObjectRef::new("Pod", Some("shop"), "web-0"))
    );
    assert_eq!(first.age.as_deref(), Some("2025-02-11T09:51:27Z"));
    assert!(first
        .message
        .starts_with("Failed to schedule pod, incompatible with nodepool \"default\""));
    assert_eq!(first.evidence.count, 4);
    assert_eq!(
        first.evidence.first_seen.as_deref(),
        Some("2025-02-11T09:41:27Z")
    );
    assert_eq!(first.evidence.line, 14);
    assert_eq!(
        first.evidence.text,
        r#"message: 'Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"180m"}, did not tolerate workload=batch:NoSchedule'"#,
        "a folded string is quoted whole"
    );
    assert_eq!(
        first.message,
        r#"Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"180m"}, did not tolerate workload=batch:NoSchedule"#
    );
    let events = messages(&facts, MessageOrigin::Event);
    assert_eq!(events[0].text, first.message);
    assert_eq!(events[0].component.as_deref(), Some("karpenter"));
    assert_eq!(events[0].time.as_deref(), Some("2025-02-11T09:51:27Z"));
    assert_eq!(events[1].nodepool.as_deref(), Some("default"));
    assert_eq!(
        events[1].evidence.text,
        "message: >- NodePool requirements filtered out all compatible available instance types"
    );
    assert_eq!(
        events[1].component.as_deref(),
        Some("karpenter"),
        "empty source falls back to reportingComponent"
    );
    assert_eq!(facts.events[1].count, 1);
    assert_eq!(
        facts.events[1].age.as_deref(),
        Some("2025-02-11T09:50:00.000000Z")
    );
    assert!(facts.has(Collected::PodEvents));
}

#[test]
fn events_k8s_io_v1_one_line_json_list() {
    let text = r#"{"kind":"EventList","apiVersion":"events.k8s.io/v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"n1.17b","namespace":"default"},"eventTime":null,"reportingController":"karpenter","reportingInstance":"","reason":"DisruptionBlocked","regarding":{"kind":"Node","name":"ip-10-0-1-2.ec2.internal"},"note":"Pdb \"ingress-nginx/ingress-nginx-controller\" prevents pod evictions","type":"Normal","series":{"count":7,"lastObservedTime":"2025-03-01T10:00:00.000000Z"},"deprecatedSource":{},"deprecatedFirstTimestamp":"2025-03-01T09:00:00Z","deprecatedLastTimestamp":"2025-03-01T09:30:00Z","deprecatedCount":3}]}"#;
    let facts = structured("GET /apis/events.k8s.io/v1/events", text);
    let event = &facts.events[0];
    assert_eq!(event.reason, "DisruptionBlocked");
    assert_eq!(event.source, "karpenter");
    assert_eq!(event.count, 7, "series.count wins");
    assert_eq!(event.age.as_deref(), Some("2025-03-01T10:00:00.000000Z"));
    assert_eq!(
        event.object,
        Some(ObjectRef::new("Node", None, "ip-10-0-1-2.ec2.internal"))
    );
    assert_eq!(
        event.message,
        "Pdb \"ingress-nginx/ingress-nginx-controller\" prevents pod evictions"
    );
    assert_eq!(
        event.evidence.text,
        r#""note":"Pdb \"ingress-nginx/ingress-nginx-controller\" prevents pod evictions""#
    );
    assert!(!facts.has(Collected::PodEvents));
}

#[test]
fn storage_objects() {
    let text = "apiVersion: v1
kind: PersistentVolume
metadata:
  name: pvc-1234
spec:
  awsElasticBlockStore:
    volumeID: aws://us-east-1a/vol-0abc
  claimRef:
    kind: PersistentVolumeClaim
    name: data-db-0
    namespace: shop
  storageClassName: gp2
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions:
        - key: topology.kubernetes.io/zone
          operator: In
          values: [us-east-1a]
status:
  phase: Bound
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: pvc-5678
  labels:
    topology.kubernetes.io/zone: us-east-1c
spec:
  csi:
    driver: ebs.csi.aws.com
    volumeHandle: vol-0def
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data-db-0
  namespace: shop
  annotations:
    volume.kubernetes.io/selected-node: ip-10-0-1-2.ec2.internal
spec:
  storageClassName: gp2
  volumeName: pvc-1234
status:
  phase: Bound
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: gp2
provisioner: kubernetes.io/aws-ebs
volumeBindingMode: WaitForFirstConsumer
allowedTopologies:
- matchLabelExpressions:
  - key: topology.ebs.csi.aws.com/zone
    values: [us-east-1a, us-east-1b]
";
    let facts = structured("input.yaml", text);
    let pv = &facts.persistent_volumes[0];
    assert!(pv.in_tree_ebs);
    assert_eq!(pv.volume_id.as_deref(), Some("aws://us-east-1a/vol-0abc"));
    assert_eq!(pv.zones, vec!["us-east-1a"]);
    assert_eq!(
        pv.claim,
        Some(ObjectRef::new(
            "PersistentVolumeClaim",
            Some("shop"),
            "data-db-0"
        ))
    );
    assert_eq!(pv.phase.as_deref(), Some("Bound"));
    let csi = &facts.persistent_volumes[1];
    assert_eq!(csi.csi_driver.as_deref(), Some("ebs.csi.aws.com"));
    assert_eq!(csi.zones, vec!["us-east-1c"], "from the legacy zone label");
    let pvc = &facts.pvcs[0];
    assert_eq!(
        (pvc.storage_class.as_deref(), pvc.volume_name.as_deref()),
        (Some("gp2"), Some("pvc-1234"))
    );
    let sc = &facts.storage_classes[0];
    assert_eq!(sc.provisioner.as_deref(), Some("kubernetes.io/aws-ebs"));
    assert_eq!(
        sc.volume_binding_mode.as_deref(),
        Some("WaitForFirstConsumer")
    );
    assert_eq!(sc.allowed_zones, vec!["us-east-1a", "us-east-1b"]);
}

#[test]
fn crd_aws_auth_security_group_policy_service_account() {
    let text = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: nodepools.karpenter.sh
spec:
  group: karpenter.sh
  names:
    kind: NodePool
  conversion:
    strategy: Webhook
  versions:
  - name: v1
    served: true
    storage: true
  - name: v1beta1
    served: true
    storage: false
status:
  storedVersions: [v1beta1, v1]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: aws-auth
  namespace: kube-system
data:
  mapRoles: |
    - rolearn: arn:aws:iam::111122223333:role/eks-nodes
      username: system:node:{{EC2PrivateDNSName}}
      groups:
        - system:bootstrappers
        - system:nodes
    - rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo
      username: system:node:{{EC2PrivateDNSName}}
      groups: [system:nodes]
---
apiVersion: vpcresources.k8s.aws/v1beta1
kind: SecurityGroupPolicy
metadata:
  name: web
  namespace: shop
spec:
  podSelector:
    matchLabels:
      app: web
  securityGroups:
    groupIds: [sg-0123]
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: karpenter
  namespace: kube-system
  annotations:
    eks.amazonaws.com/role-arn: arn:aws:iam::111122223333:role/KarpenterController
";
    let facts = structured("input.yaml", text);
    let crd = &facts.crds[0];
    assert_eq!(
        (crd.group.as_str(), crd.kind.as_str()),
        ("karpenter.sh", "NodePool")
    );
    assert_eq!(crd.conversion_strategy.as_deref(), Some("Webhook"));
    assert_eq!(
        crd.versions[1],
        CrdVersion {
            name: "v1beta1".into(),
            served: true,
            storage: false
        }
    );
    assert_eq!(crd.stored_versions, vec!["v1beta1", "v1"]);
    let auth = facts.aws_auth.as_ref().unwrap();
    assert_eq!(auth.map_roles.len(), 2);
    let karpenter = &auth.map_roles[1];
    assert_eq!(
        karpenter.role_arn,
        "arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
    );
    assert_eq!(karpenter.groups, vec!["system:nodes"]);
    assert_eq!(
        karpenter.username.as_deref(),
        Some("system:node:{{EC2PrivateDNSName}}")
    );
    let evidence = karpenter.evidence.as_ref().unwrap();
    assert_eq!(evidence.line, 33);
    assert_eq!(
        evidence.text,
        "- rolearn: arn:aws:iam::111122223333:role/KarpenterNodeRole-demo"
    );
    let sgp = &facts.security_group_policies[0];
    assert_eq!(sgp.group_ids, vec!["sg-0123"]);
    assert!(sgp
        .pod_selector
        .as_ref()
        .unwrap()
        .matches(&[("app".to_string(), "web".to_string())].into()));
    assert_eq!(
        facts.service_accounts[0].role_arn(),
        Some("arn:aws:iam::111122223333:role/KarpenterController")
    );
    assert!(facts.settings.is_empty(), "aws-auth data is not a setting");
}

#[test]
fn config_map_data_and_broken_map_roles() {
    let text = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"karpenter-global-settings","namespace":"karpenter"},"data":{"aws.isolatedVPC":"true","aws.clusterName":"demo"}}
{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"aws-auth","namespace":"kube-system"},"data":{"mapRoles":"- rolearn: [unclosed\n"}}
"#;
    let facts = structured("cm.json", text);
    let isolated = facts.settings_named(&["aws.isolatedVPC"]).next().unwrap();
    assert_eq!(isolated.source, SettingSource::ConfigMap);
    assert_eq!(isolated.value, "true");
    assert_eq!(
        isolated.evidence.text,
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"karpenter-global-settings","namespace":"karpenter"},"data":{"aws.isolatedVPC":"true","aws.clusterName":"demo"}}"#
    );
    assert_eq!(facts.input_errors.len(), 1);
    assert_eq!(facts.input_errors[0].line, 2);
    assert!(facts.input_errors[0]
        .message
        .starts_with("aws-auth mapRoles is not a valid YAML list: invalid YAML: "));
}

#[test]
fn helm_values_become_dotted_settings() {
    let text = include_str!("../../../../tests/corpus/nth-rebalance-draining-loop/input.txt");
    let start = text.find("USER-SUPPLIED VALUES:").unwrap();
    let end = text[start..].find("\n\n").unwrap() + start + 1;
    let doc = Document::new("input.txt", text);
    let first_index = text[..start].lines().count();
    let mut facts = Facts::default();
    ingest_structured(
        Segment {
            doc: &doc,
            first_index,
            text: &text[start..end],
        },
        &mut facts,
    );
    let owner = Some(ObjectRef::new(
        "HelmRelease",
        None,
        "aws-node-termination-handler",
    ));
    let rebalance = facts
        .settings_named(&["enableRebalanceDraining"])
        .next()
        .unwrap();
    assert_eq!(
        (rebalance.value.as_str(), &rebalance.owner),
        ("true", &owner)
    );
    assert_eq!(rebalance.source, SettingSource::Values);
    assert_eq!(rebalance.evidence.line, 9);
    assert_eq!(rebalance.evidence.text, "enableRebalanceDraining: true");
    let selector = facts
        .settings_named(&["nodeSelector.karpenter.sh/capacity-type"])
        .next()
        .unwrap();
    assert_eq!(selector.value, "spot");
    assert!(facts
        .settings_named(&["USER-SUPPLIED VALUES"])
        .next()
        .is_none());
    assert_eq!(
        messages(&facts, MessageOrigin::Unrecognised).len(),
        12,
        "a document without kind is also kept for the signal scan"
    );

    let karpenter = "logLevel: debug\nsettings:\n  isolatedVPC: true\ntolerations:\n- key: CriticalAddonsOnly\n  operator: Exists\n";
    let facts = structured("values.yaml", karpenter);
    let keys: Vec<(&str, &str)> = facts
        .settings
        .iter()
        .map(|s| (s.key.as_str(), s.value.as_str()))
        .collect();
    assert_eq!(
        keys,
        vec![
            ("logLevel", "debug"),
            ("settings.isolatedVPC", "true"),
            ("tolerations[0].key", "CriticalAddonsOnly"),
            ("tolerations[0].operator", "Exists")
        ]
    );
    assert_eq!(facts.settings[0].owner, None);
}

#[test]
fn byte_order_mark_and_windows_line_ends() {
    let facts = structured(
        "x",
        "\u{feff}{\"kind\":\"NodePool\",\"metadata\":{\"name\":\"a\"}}",
    );
    assert_eq!(facts.nodepools[0].meta.name, "a");
    let facts = structured("x", "\u{feff}kind: NodePool\r\nmetadata:\r\n  name: b\r\n");
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    assert_eq!(facts.nodepools[0].meta.name, "b");
    assert_eq!(
        facts.nodepools[0].meta.evidence.as_ref().unwrap().text,
        "name: b"
    );
}

#[test]
fn empty_lists_are_recorded() {
    let facts = structured("x", "apiVersion: karpenter.sh/v1\nkind: NodeClaimList\nitems: []\nmetadata:\n  continue: \"\"\n");
    assert_eq!(facts.empty_lists.len(), 1);
    assert_eq!(facts.empty_lists[0].resource.as_deref(), Some("nodeclaims"));
    assert_eq!(facts.empty_lists[0].evidence.line, 3);
    assert!(facts.has(Collected::NodeClaims));
    let facts = structured(
        "x",
        r#"{"apiVersion":"v1","items":[],"kind":"List","metadata":{"resourceVersion":""}}"#,
    );
    assert_eq!(facts.empty_lists[0].resource, None);
    let facts = structured("x", "kind: EC2NodeClassList\nitems: []\n");
    assert_eq!(
        facts.empty_lists[0].resource.as_deref(),
        Some("ec2nodeclasses")
    );
    assert!(facts.has(Collected::NodeClasses));
}

#[test]
fn api_server_lists_give_items_their_kind_and_unmodelled_kinds_stay_messages() {
    let text = r#"{"kind":"NodePoolList","apiVersion":"karpenter.sh/v1","items":[{"metadata":{"name":"a"},"spec":{}},{"metadata":{"name":"b"}}]}"#;
    let facts = structured("x", text);
    assert_eq!(facts.nodepools.len(), 2);
    assert_eq!(
        facts.nodepools[1].meta.api_version.as_deref(),
        Some("karpenter.sh/v1")
    );

    let text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: web\n  spec:\n    type: ClusterIP\n- apiVersion: v1\n  kind: ServiceAccount\n  metadata:\n    name: web\n";
    let facts = structured("x", text);
    let kept: Vec<(usize, &str)> = messages(&facts, MessageOrigin::Unrecognised)
        .iter()
        .map(|m| (m.evidence.line, m.text.as_str()))
        .collect();
    assert_eq!(
        kept,
        vec![
            (4, "- apiVersion: v1"),
            (5, "kind: Service"),
            (6, "metadata:"),
            (7, "name: web"),
            (8, "spec:"),
            (9, "type: ClusterIP")
        ]
    );
    assert_eq!(facts.service_accounts.len(), 1);

    let text = r#"{"kind":"List","items":[{"kind":"Service","metadata":{"name":"web"}},{"kind":"ServiceAccount","metadata":{"name":"web"}}]}"#;
    let facts = structured("x", text);
    let kept = messages(&facts, MessageOrigin::Unrecognised);
    assert_eq!(kept.len(), 1);
    assert_eq!(
        kept[0].text,
        r#"{"kind":"Service","metadata":{"name":"web"}}"#
    );
}

#[test]
fn broken_yaml_document_is_reported_and_the_others_still_parse() {
    let text = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: a
---
apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  name: broken
status:
  conditions:
  - type: Launched
    message: \"Controller isn't authorized to call ec2:CreateFleet
    reason: [unclosed
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: c
";
    let facts = structured("paste", text);
    assert_eq!(facts.nodepools.len(), 2);
    assert!(facts.nodeclaims.is_empty());
    assert_eq!(facts.input_errors.len(), 1);
    let error = &facts.input_errors[0];
    assert_eq!(error.source, "paste");
    assert!(
        error.message.starts_with("invalid YAML document 2 of 3: "),
        "{}",
        error.message
    );
    assert!((13..=15).contains(&error.line), "line {}", error.line);
    let kept = messages(&facts, MessageOrigin::Unrecognised);
    assert_eq!(
        kept.first().unwrap().evidence.line,
        6,
        "the `---` line holds nothing"
    );
    assert!(kept.iter().any(|m| m
        .text
        .contains("Controller isn't authorized to call ec2:CreateFleet")));
}

#[test]
fn truncated_json_is_reported_with_its_line() {
    let text = "{\n    \"apiVersion\": \"v1\",\n    \"kind\": \"Pod\",\n    \"metadata\": {\n        \"name\": \"web-0\",\n        \"namespace\": \"shop\"\n    },\n    \"status\": {\n        \"message\": \"0/3 nodes are available: 3 Insufficient cpu.\",\n        \"phase\": \"Pend";
    let mut doc = Document::new("pod.json", text);
    // Lines 100.. of a larger input.
    doc.line_numbers = Some((100..110).collect());
    let mut facts = Facts::default();
    ingest_structured(
        Segment {
            doc: &doc,
            first_index: 0,
            text: &doc.text,
        },
        &mut facts,
    );
    assert_eq!(facts.input_errors.len(), 1);
    let error = &facts.input_errors[0];
    assert_eq!(error.line, 109);
    assert_eq!(
        error.message,
        "truncated JSON: the text ends inside the object opened at line 8"
    );
    assert!(facts.pods.is_empty());
    let kept = messages(&facts, MessageOrigin::Unrecognised);
    assert!(kept
        .iter()
        .any(|m| m.text.contains("Insufficient cpu") && m.evidence.line == 108));
}

#[test]
fn json_lines_with_one_broken_line() {
    let text = "{\"kind\":\"NodePool\",\"metadata\":{\"name\":\"a\"}}\n{\"kind\":\"NodePool\",\"metadata\":{\"name\":\"b\"\n{\"kind\":\"NodePool\",\"metadata\":{\"name\":\"c\"}}\n";
    let facts = structured("x", text);
    let names: Vec<&str> = facts
        .nodepools
        .iter()
        .map(|p| p.meta.name.as_str())
        .collect();
    assert_eq!(names, vec!["a", "c"]);
    assert_eq!(facts.input_errors[0].line, 2);
    assert_eq!(
        facts.input_errors[0].message,
        "truncated JSON: the object opened at line 2 is not closed before line 3"
    );
}

#[test]
fn describe_nodepool_from_the_corpus() {
    let text = include_str!("../../../../tests/corpus/nodepool-spot-only-spot-quota-b/input.txt");
    let start = text.find("Name:").unwrap();
    let end = text.find("Events:").unwrap();
    let doc = Document::new("input.txt", text);
    let mut facts = Facts::default();
    ingest_generic_describe(
        Segment {
            doc: &doc,
            first_index: text[..start].lines().count(),
            text: &text[start..end],
        },
        &mut facts,
    );
    let pool = &facts.nodepools[0];
    assert_eq!(pool.meta.name, "spot-workers");
    assert_eq!(
        pool.meta
            .labels
            .get("app.kubernetes.io/managed-by")
            .map(String::as_str),
        Some("argocd")
    );
    assert_eq!(
        pool.meta.annotation("karpenter.sh/nodepool-hash-version"),
        Some("v3")
    );
    assert_eq!(pool.nodeclass_ref.as_deref(), Some("al2023"));
    assert_eq!(
        pool.allowed_values("karpenter.sh/capacity-type"),
        Some(vec!["spot".to_string()])
    );
    assert_eq!(pool.requirements.len(), 4);
    assert_eq!(
        pool.requirements[2],
        req("karpenter.k8s.aws/instance-generation", "Gt", &["5"])
    );
    assert_eq!(
        pool.disruption.consolidation_policy.as_deref(),
        Some("WhenEmptyOrUnderutilized")
    );
    assert_eq!(
        pool.disruption.budgets,
        vec![serde_json::json!({"nodes": "10%"})]
    );
    assert_eq!(pool.limits.get("cpu").map(String::as_str), Some("1000"));
    assert_eq!(
        pool.usage.get("ephemeral-storage").map(String::as_str),
        Some("979868Mi")
    );
    assert_eq!(
        pool.template_labels.get("team").map(String::as_str),
        Some("platform")
    );
    assert_eq!(pool.expire_after.as_deref(), Some("720h"));
    assert_eq!(pool.conditions.len(), 4);
    assert!(pool.conditions.iter().all(|c| c.status == "True"));
    assert_eq!(pool.meta.evidence.as_ref().unwrap().line, 2);
    assert!(facts.input_errors.is_empty());
}

#[test]
fn describe_ec2nodeclass_and_unknown_kinds() {
    let text =
        include_str!("../../../../tests/corpus/ec2nodeclass-validation-failed-events-d/input.txt");
    let facts = described(text);
    let class = &facts.nodeclasses[0];
    assert_eq!(class.meta.name, "dev-node-class");
    assert_eq!(class.meta.annotation("karpenter.sh/refres"), Some("false"));
    let validation = &class.conditions[0];
    assert_eq!(
        validation.reason.as_deref(),
        Some("CreateFleetAuthCheckFailed")
    );
    let m = messages(&facts, MessageOrigin::Condition)[0];
    assert_eq!(
        m.text,
        "ValidationSucceeded=False CreateFleetAuthCheckFailed: Controller isn't authorized to call ec2:CreateFleet"
    );
    assert_eq!(m.evidence.line, 10);

    let other = described("Name:         x\nNamespace:\nAPI Version:  example.com/v1\nKind:         Widget\nSpec:\n  Size:  3\nEvents:\n  Type  Reason  Age  From  Message\n");
    let kept: Vec<usize> = messages(&other, MessageOrigin::Unrecognised)
        .iter()
        .map(|m| m.evidence.line)
        .collect();
    assert_eq!(kept, vec![1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn a_cut_mark_inside_a_describe_is_not_part_of_the_value_above() {
    let text = "Name:         general-4hx8c\nAPI Version:  karpenter.sh/v1\nKind:         NodeClaim\n...\nStatus:\n  Conditions:\n    Message:               Security group and subnet belong to different networks\n    Reason:                SecurityGroupSubnetVPCMismatch\n    Status:                Unknown\n    Type:                  Launched\n";
    let facts = described(text);
    assert_eq!(facts.nodeclaims.len(), 1);
    assert_eq!(facts.nodeclaims[0].meta.name, "general-4hx8c");
    assert_eq!(facts.nodeclaims[0].conditions.len(), 1);
}

#[test]
fn describe_nodeclaims_of_the_corpus() {
    for name in [
        "events-spot-slr-not-permitted-b",
        "nodeclaim-not-registered",
        "events-security-groups-for-pods-c",
    ] {
        let text = std::fs::read_to_string(format!(
            "{}/../tests/corpus/{name}/input.txt",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let end = text.find("\nEvents:").map_or(text.len(), |i| i + 1);
        let facts = described(&text[..end]);
        let claim = &facts.nodeclaims[0];
        assert_eq!(claim.nodeclass_ref.as_deref(), Some("default"), "{name}");
        assert_eq!(claim.conditions.len(), 4, "{name}");
        assert!(
            messages(&facts, MessageOrigin::Unrecognised).is_empty(),
            "{name}"
        );
    }
    let text = std::fs::read_to_string(format!(
        "{}/../tests/corpus/events-security-groups-for-pods-c/input.txt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let claim = &described(&text).nodeclaims[0];
    assert_eq!(
        claim
            .requests
            .get("vpc.amazonaws.com/pod-eni")
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        claim
            .allocatable
            .get("ephemeral-storage")
            .map(String::as_str),
        Some("17Gi")
    );
    assert_eq!(
        claim.node_name.as_deref(),
        Some("ip-10-0-152-9.ec2.internal")
    );
    assert_eq!(claim.zone.as_deref(), Some("us-east-1c"));
    assert_eq!(
        claim.condition("Initialized").unwrap().message.as_deref(),
        Some("Resource \"vpc.amazonaws.com/pod-eni\" was requested but not registered")
    );
}

/// Deterministic pseudo-random bytes (xorshift), so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn arbitrary_bytes_and_mangled_objects_never_panic_and_output_stays_bounded() {
    let seeds: Vec<String> = [
        NODECLAIM_NOT_INITIALIZED,
        KARPENTER_DEPLOYMENT,
        include_str!("../../../../tests/corpus/ec2nodeclass-subnets-not-ready-a/input.yaml"),
        include_str!("../../../../tests/corpus/nodepool-spot-only-spot-quota-b/input.txt"),
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(std::iter::once(
        serde_json::to_string_pretty(
            &yaml::parse_documents(NODECLAIM_NOT_INITIALIZED, 0).0[0].to_json(),
        )
        .unwrap(),
    ))
    .collect();
    let alphabet: &[u8] = b"{}[]:,-\"'\\ \n\t#&*!|>%@`?abcKind: \x00\xff";
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..3000 {
        let bytes: Vec<u8> = match round % 3 {
            0 => (0..rng.below(400)).map(|_| rng.next() as u8).collect(),
            1 => (0..rng.below(400))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect(),
            _ => {
                let mut b = seeds[rng.below(seeds.len())].clone().into_bytes();
                for _ in 0..1 + rng.below(8) {
                    let at = rng.below(b.len().max(1));
                    match rng.below(3) {
                        0 => b.truncate(at),
                        1 => b.insert(at.min(b.len()), alphabet[rng.below(alphabet.len())]),
                        _ => {
                            if at < b.len() {
                                b.remove(at);
                            }
                        }
                    }
                }
                b
            }
        };
        let text = String::from_utf8_lossy(&bytes);
        let lines = text.lines().count();
        for facts in [structured("fuzz", &text), described(&text)] {
            let messages = facts.messages.len();
            let conditions = facts
                .nodeclaims
                .iter()
                .map(|c| c.conditions.len())
                .sum::<usize>()
                + facts
                    .nodepools
                    .iter()
                    .map(|c| c.conditions.len())
                    .sum::<usize>();
            assert!(
                messages <= 2 * lines + conditions + 8,
                "{messages} messages from {lines} lines: {text:?}"
            );
            assert!(facts.input_errors.len() <= lines + 1);
        }
    }
}

/// The grace periods: a pod's `terminationGracePeriodSeconds`, a v1 NodePool's template
/// `terminationGracePeriod` and the NodeClaim's copy of it, from YAML and from a `List` as JSON.
#[test]
fn termination_grace_periods() {
    let facts = structured(
        "objects.yaml",
        "apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: shop
spec:
  containers:
  - image: nginx:1.25
    name: web
  terminationGracePeriodSeconds: 3600
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements: []
      terminationGracePeriod: 48h
",
    );
    assert_eq!(facts.pods[0].termination_grace_period_seconds, Some(3600));
    assert_eq!(
        facts.nodepools[0].termination_grace_period.as_deref(),
        Some("48h")
    );
    let facts = structured(
        "list.json",
        r#"{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "default-8kq2x"},
   "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"}, "requirements": [], "terminationGracePeriod": "24h"}},
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ip-10-0-33-7.eu-west-1.compute.internal", "annotations": {"karpenter.sh/do-not-disrupt": "true"}}}
]}"#,
    );
    assert_eq!(
        facts.nodeclaims[0].termination_grace_period.as_deref(),
        Some("24h")
    );
    assert_eq!(
        facts.nodes[0]
            .meta
            .annotation("karpenter.sh/do-not-disrupt"),
        Some("true")
    );
}

/// The items of a list printed without the list (`kubectl get nodes -o json | jq '.items'`)
/// are objects, not settings.
#[test]
fn a_bare_array_of_objects_is_a_list() {
    let facts = structured(
        "items.json",
        r#"[
  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "ip-10-0-33-7.eu-west-1.compute.internal", "annotations": {"karpenter.sh/do-not-disrupt": "true"}}},
  {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "default-x7k2p"}, "spec": {"requirements": []}}
]"#,
    );
    assert!(facts.settings.is_empty());
    assert_eq!(
        facts.nodes[0]
            .meta
            .annotation("karpenter.sh/do-not-disrupt"),
        Some("true")
    );
    assert_eq!(facts.nodeclaims[0].meta.name, "default-x7k2p");
}
