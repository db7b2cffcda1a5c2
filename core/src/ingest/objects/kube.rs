//! Kubernetes' own kinds: Pod, the workload controllers, Node, PodDisruptionBudget, Event,
//! storage, CustomResourceDefinition, ConfigMap, ServiceAccount, SecurityGroupPolicy.

use crate::facts::{
    AwsAuth, Collected, Container, Crd, CrdVersion, Event, Facts, MapRole, Message, MessageOrigin,
    Meta, Node as NodeFact, ObjectRef, Pdb, PersistentVolume, PersistentVolumeClaim, Pod,
    SecurityGroupPolicy, ServiceAccount, SettingSource, StorageClass, TopologySpread, Workload,
};
use crate::InputError;

use super::common::{
    conditions, container, int_of, label_selector, map_of, message, meta, requirements, setting,
    taints, text_of, tolerations,
};
use super::tree::Node;
use super::{yaml, Source};

/// What a pod template or pod spec says; shared by Pod and the workload controllers.
struct PodSpec {
    containers: Vec<Container>,
    init_containers: Vec<Container>,
    node_selector: std::collections::BTreeMap<String, String>,
    tolerations: Vec<crate::facts::Toleration>,
    dns_policy: Option<String>,
    service_account: Option<String>,
}

fn pod_spec(
    src: &Source<'_>,
    spec: Option<&Node>,
    status: Option<&Node>,
    owner: &ObjectRef,
    facts: &mut Facts,
) -> PodSpec {
    let field = |key: &str| spec.and_then(|s| s.get(key));
    let containers_of = |key: &str, status_key: &str, facts: &mut Facts| -> Vec<Container> {
        let statuses = status.and_then(|s| s.get(status_key));
        field(key)
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .map(|c| container(src, c, statuses, owner, facts))
            .collect()
    };
    let init_containers = containers_of("initContainers", "initContainerStatuses", facts);
    let containers = containers_of("containers", "containerStatuses", facts);
    PodSpec {
        containers,
        init_containers,
        node_selector: map_of(field("nodeSelector")),
        tolerations: tolerations(field("tolerations")),
        dns_policy: text_of(field("dnsPolicy")),
        service_account: text_of(field("serviceAccountName"))
            .or_else(|| text_of(field("serviceAccount"))),
    }
}

pub fn pod(src: &Source<'_>, obj: &Node, api_version: Option<&str>, facts: &mut Facts) {
    let meta = meta(src, obj, api_version);
    let reference = ObjectRef::new("Pod", meta.namespace.as_deref(), &meta.name);
    let spec = obj.get("spec");
    let status = obj.get("status");
    let template = pod_spec(src, spec, status, &reference, facts);
    let field = |key: &str| spec.and_then(|s| s.get(key));
    let affinity = field("affinity");
    let terms = affinity
        .and_then(|a| {
            a.path(&[
                "nodeAffinity",
                "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms",
            ])
        })
        .map(Node::items)
        .unwrap_or_default();
    let has_terms = |kind: &str| {
        affinity.and_then(|a| a.get(kind)).is_some_and(|a| {
            a.entries()
                .iter()
                .any(|(_, terms)| !terms.items().is_empty())
        })
    };
    let host_ports = field("containers")
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .flat_map(|c| c.get("ports").map(Node::items).unwrap_or_default())
        .filter_map(|p| int_of(p.get("hostPort")).and_then(|n| u32::try_from(n).ok()))
        .filter(|&p| p != 0)
        .collect();
    let pvc_names = field("volumes")
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .filter_map(|v| {
            text_of(v.path(&["persistentVolumeClaim", "claimName"])).or_else(|| {
                // A generic ephemeral volume's claim is named `<pod>-<volume>`.
                v.get("ephemeral")?;
                Some(format!("{}-{}", meta.name, text_of(v.get("name"))?))
            })
        })
        .collect();
    let pod_conditions = conditions(src, obj, &reference, None, facts);
    status_message(src, status, &reference, facts);
    note_karpenter(&meta, "Pod", &template.containers, facts);
    facts.pods.push(Pod {
        phase: text_of(status.and_then(|s| s.get("phase"))),
        node_name: text_of(field("nodeName")),
        nominated_node: text_of(status.and_then(|s| s.get("nominatedNodeName"))),
        node_selector: template.node_selector,
        node_affinity: terms
            .iter()
            .map(|t| requirements(t.get("matchExpressions")))
            .collect(),
        node_affinity_match_fields: terms.iter().any(|t| {
            !t.get("matchFields")
                .map(Node::items)
                .unwrap_or_default()
                .is_empty()
        }),
        tolerations: template.tolerations,
        topology_spread: field("topologySpreadConstraints")
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .filter_map(|t| {
                Some(TopologySpread {
                    topology_key: text_of(t.get("topologyKey"))?,
                    max_skew: int_of(t.get("maxSkew")),
                    when_unsatisfiable: text_of(t.get("whenUnsatisfiable")),
                    label_selector: t.get("labelSelector").map(|s| label_selector(Some(s))),
                })
            })
            .collect(),
        has_pod_anti_affinity: has_terms("podAntiAffinity"),
        has_pod_affinity: has_terms("podAffinity"),
        containers: template.containers,
        init_containers: template.init_containers,
        pvc_names,
        host_ports,
        dns_policy: template.dns_policy,
        conditions: pod_conditions,
        service_account: template.service_account,
        scheduler_name: text_of(field("schedulerName")),
        qos_class: text_of(status.and_then(|s| s.get("qosClass"))),
        // Each container's `restartCount` is on the container.
        restarts: None,
        termination_grace_period_seconds: int_of(field("terminationGracePeriodSeconds")),
        meta,
    });
}

/// A pod's own `status.reason` / `status.message` (`Evicted: The node was low on resource...`).
fn status_message(src: &Source<'_>, status: Option<&Node>, about: &ObjectRef, facts: &mut Facts) {
    let Some(status) = status else { return };
    let reason = text_of(status.get("reason"));
    let Some(text) = text_of(status.get("message")) else {
        return;
    };
    let anchor = status.get("message").unwrap_or(status);
    let text = match &reason {
        Some(r) => format!("{r}: {text}"),
        None => text,
    };
    let mut msg = message(
        MessageOrigin::ObjectField,
        text,
        src.evidence(anchor),
        about,
    );
    msg.reason = reason;
    facts.messages.push(msg);
}

pub fn workload(
    src: &Source<'_>,
    obj: &Node,
    kind: &str,
    api_version: Option<&str>,
    facts: &mut Facts,
) {
    let meta = meta(src, obj, api_version);
    let reference = ObjectRef::new(kind, meta.namespace.as_deref(), &meta.name);
    let spec = obj.get("spec");
    let status = obj.get("status");
    let template = spec.and_then(|s| s.get("template"));
    let pod = pod_spec(
        src,
        template.and_then(|t| t.get("spec")),
        None,
        &reference,
        facts,
    );
    let status_field = |key: &str| int_of(status.and_then(|s| s.get(key)));
    let (replicas, ready_replicas) = if kind == "DaemonSet" {
        (
            status_field("desiredNumberScheduled"),
            status_field("numberReady"),
        )
    } else {
        (
            int_of(spec.and_then(|s| s.get("replicas"))),
            status_field("readyReplicas"),
        )
    };
    let workload_conditions = conditions(src, obj, &reference, None, facts);
    note_karpenter(&meta, kind, &pod.containers, facts);
    if kind == "Deployment" && is_karpenter(&meta, kind, &pod.containers) {
        facts.collected.insert(Collected::KarpenterDeployment);
    }
    facts.workloads.push(Workload {
        kind: kind.to_string(),
        replicas,
        ready_replicas,
        selector: label_selector(spec.and_then(|s| s.get("selector"))),
        template_labels: map_of(template.and_then(|t| t.path(&["metadata", "labels"]))),
        template_annotations: map_of(template.and_then(|t| t.path(&["metadata", "annotations"]))),
        containers: pod.containers,
        init_containers: pod.init_containers,
        node_selector: pod.node_selector,
        node_affinity: template
            .and_then(|t| {
                t.path(&[
                    "spec",
                    "affinity",
                    "nodeAffinity",
                    "requiredDuringSchedulingIgnoredDuringExecution",
                    "nodeSelectorTerms",
                ])
            })
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .map(|t| requirements(t.get("matchExpressions")))
            .collect(),
        tolerations: pod.tolerations,
        dns_policy: pod.dns_policy,
        service_account: pod.service_account,
        conditions: workload_conditions,
        meta,
    });
}

fn is_karpenter(meta: &Meta, kind: &str, containers: &[Container]) -> bool {
    meta.label("app.kubernetes.io/name") == Some("karpenter")
        || (kind == "Deployment" && meta.name == "karpenter")
        || containers.iter().any(is_karpenter_controller)
}

fn is_karpenter_controller(c: &Container) -> bool {
    c.image.as_deref().is_some_and(|image| {
        let repository = image.split('@').next().unwrap_or(image);
        let repository = match repository.rsplit_once(':') {
            Some((repo, tag)) if !tag.contains('/') => repo,
            _ => repository,
        };
        repository.ends_with("karpenter/controller")
    })
}

/// Karpenter's own Deployment, ReplicaSet or Pod tells its namespace and version: the
/// controller image tag first, then the `app.kubernetes.io/version` and `helm.sh/chart` labels.
fn note_karpenter(meta: &Meta, kind: &str, containers: &[Container], facts: &mut Facts) {
    if !is_karpenter(meta, kind, containers) {
        return;
    }
    if facts.karpenter_namespace.is_none() {
        facts.karpenter_namespace = meta.namespace.clone();
    }
    let from_image = containers
        .iter()
        .filter(|c| is_karpenter_controller(c))
        .find_map(Container::image_tag);
    let from_labels = meta
        .label("app.kubernetes.io/version")
        .or_else(|| meta.label("helm.sh/chart")?.strip_prefix("karpenter-"));
    let version = from_image
        .into_iter()
        .chain(from_labels)
        .map(|v| v.trim_start_matches('v'))
        .find(|v| v.starts_with(|c: char| c.is_ascii_digit()));
    if let (None, Some(v)) = (&facts.karpenter_version, version) {
        facts.karpenter_version = Some(v.to_string());
    }
}

pub fn node(src: &Source<'_>, obj: &Node, api_version: Option<&str>, facts: &mut Facts) {
    let meta = meta(src, obj, api_version);
    let reference = ObjectRef::new("Node", None, &meta.name);
    let spec = obj.get("spec");
    let status = obj.get("status");
    let node_conditions = conditions(
        src,
        obj,
        &reference,
        meta.label("karpenter.sh/nodepool"),
        facts,
    );
    facts.collected.insert(Collected::Nodes);
    facts.nodes.push(NodeFact {
        taints: taints(spec.and_then(|s| s.get("taints"))),
        unschedulable: spec
            .and_then(|s| s.get("unschedulable"))
            .and_then(Node::boolean)
            == Some(true),
        conditions: node_conditions,
        allocatable: map_of(status.and_then(|s| s.get("allocatable"))),
        capacity: map_of(status.and_then(|s| s.get("capacity"))),
        provider_id: text_of(spec.and_then(|s| s.get("providerID"))),
        // A Node object does not list its pods; pods name their node instead.
        pods: Vec::new(),
        meta,
    });
}

pub fn pdb(src: &Source<'_>, obj: &Node, api_version: Option<&str>, facts: &mut Facts) {
    let meta = meta(src, obj, api_version);
    let reference = ObjectRef::new("PodDisruptionBudget", meta.namespace.as_deref(), &meta.name);
    let spec = obj.get("spec");
    let status = obj.get("status");
    let spec_field = |key: &str| text_of(spec.and_then(|s| s.get(key)));
    let status_field = |key: &str| int_of(status.and_then(|s| s.get(key)));
    let pdb_conditions = conditions(src, obj, &reference, None, facts);
    facts.collected.insert(Collected::Pdbs);
    facts.pdbs.push(Pdb {
        selector: label_selector(spec.and_then(|s| s.get("selector"))),
        min_available: spec_field("minAvailable"),
        max_unavailable: spec_field("maxUnavailable"),
        unhealthy_pod_eviction_policy: spec_field("unhealthyPodEvictionPolicy"),
        disruptions_allowed: status_field("disruptionsAllowed"),
        current_healthy: status_field("currentHealthy"),
        desired_healthy: status_field("desiredHealthy"),
        expected_pods: status_field("expectedPods"),
        conditions: pdb_conditions,
        meta,
    });
}

/// A core/v1 or events.k8s.io/v1 Event: a `facts.events` entry and an `Event` message.
pub fn event(src: &Source<'_>, obj: &Node, facts: &mut Facts) {
    let field = |key: &str| obj.get(key);
    let first_text = |keys: &[&[&str]]| keys.iter().find_map(|path| text_of(obj.path(path)));
    let involved = field("involvedObject").or(field("regarding"));
    let object = involved.and_then(|o| {
        Some(ObjectRef::new(
            &text_of(o.get("kind")).unwrap_or_default(),
            text_of(o.get("namespace")).as_deref(),
            &text_of(o.get("name"))?,
        ))
    });
    if let (Some(o), Some(path)) = (&object, involved.and_then(|o| text_of(o.get("fieldPath")))) {
        facts.event_field_paths.push((o.clone(), path));
    }
    let message_node = field("message").or(field("note"));
    let text = text_of(message_node).unwrap_or_default();
    let reason = text_of(field("reason"));
    let component = first_text(&[
        &["source", "component"],
        &["deprecatedSource", "component"],
        &["reportingComponent"],
        &["reportingController"],
    ]);
    let count = crate::ingest::events_table::event_count(|path| int_of(obj.path(path)));
    let (last, first) = crate::ingest::events_table::event_times(|path| text_of(obj.path(path)));
    let mut evidence = src.evidence(message_node.unwrap_or(obj));
    evidence.count = count;
    evidence.first_seen = first;
    evidence.last_seen = last.clone();
    if object.as_ref().is_some_and(|o| o.kind == "Pod") {
        facts.collected.insert(Collected::PodEvents);
    }
    let nodepool = object
        .as_ref()
        .filter(|o| o.kind == "NodePool")
        .map(|o| o.name.clone());
    facts.messages.push(Message {
        origin: MessageOrigin::Event,
        text: text.clone(),
        evidence: evidence.clone(),
        object: object.clone(),
        nodepool,
        reason: reason.clone(),
        component: component.clone(),
        time: last.clone(),
    });
    facts.events.push(Event {
        from_describe: false,
        event_type: text_of(field("type")).unwrap_or_default(),
        reason: reason.unwrap_or_default(),
        source: component.unwrap_or_default(),
        object,
        message: text,
        count,
        age: last,
        evidence,
    });
}

pub fn persistent_volume(
    src: &Source<'_>,
    obj: &Node,
    api_version: Option<&str>,
    facts: &mut Facts,
) {
    let meta = meta(src, obj, api_version);
    let spec = obj.get("spec");
    let field = |key: &str| spec.and_then(|s| s.get(key));
    let in_tree = field("awsElasticBlockStore");
    let zone_keys = crate::ingest::tables::PV_ZONE_LABELS;
    let mut zones: Vec<String> = field("nodeAffinity")
        .and_then(|a| a.path(&["required", "nodeSelectorTerms"]))
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .flat_map(|t| requirements(t.get("matchExpressions")))
        .filter(|r| zone_keys.contains(&r.key.as_str()) && r.operator == "In")
        .flat_map(|r| r.values)
        .collect();
    if zones.is_empty() {
        zones = zone_keys
            .iter()
            .filter_map(|k| meta.label(k))
            .map(str::to_string)
            .take(1)
            .collect();
    }
    let claim = field("claimRef").and_then(|c| {
        Some(ObjectRef::new(
            "PersistentVolumeClaim",
            text_of(c.get("namespace")).as_deref(),
            &text_of(c.get("name"))?,
        ))
    });
    facts.persistent_volumes.push(PersistentVolume {
        in_tree_ebs: in_tree.is_some(),
        csi_driver: text_of(field("csi").and_then(|c| c.get("driver"))),
        volume_id: text_of(in_tree.and_then(|e| e.get("volumeID")))
            .or_else(|| text_of(field("csi").and_then(|c| c.get("volumeHandle")))),
        storage_class: text_of(field("storageClassName")),
        zones,
        claim,
        phase: text_of(obj.path(&["status", "phase"])),
        meta,
    });
}

pub fn persistent_volume_claim(
    src: &Source<'_>,
    obj: &Node,
    api_version: Option<&str>,
    facts: &mut Facts,
) {
    let meta = meta(src, obj, api_version);
    let reference = ObjectRef::new(
        "PersistentVolumeClaim",
        meta.namespace.as_deref(),
        &meta.name,
    );
    conditions(src, obj, &reference, None, facts);
    facts.pvcs.push(PersistentVolumeClaim {
        storage_class: text_of(obj.path(&["spec", "storageClassName"])),
        volume_name: text_of(obj.path(&["spec", "volumeName"])),
        phase: text_of(obj.path(&["status", "phase"])),
        deletion_timestamp: text_of(obj.path(&["metadata", "deletionTimestamp"])),
        terminating: false,
        terminating_for: None,
        finalizers: obj
            .path(&["metadata", "finalizers"])
            .map(Node::string_list)
            .unwrap_or_default(),
        meta,
    });
}

pub fn storage_class(src: &Source<'_>, obj: &Node, api_version: Option<&str>, facts: &mut Facts) {
    let allowed_zones = obj
        .get("allowedTopologies")
        .map(Node::items)
        .unwrap_or_default()
        .iter()
        .flat_map(|t| {
            t.get("matchLabelExpressions")
                .map(Node::items)
                .unwrap_or_default()
        })
        .filter(|e| text_of(e.get("key")).is_some_and(|k| k.ends_with("/zone")))
        .flat_map(|e| e.get("values").map(Node::string_list).unwrap_or_default())
        .collect();
    let meta = meta(src, obj, api_version);
    let is_default = [
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ]
    .iter()
    .any(|a| meta.annotations.get(*a).is_some_and(|v| v == "true"));
    facts.storage_classes.push(StorageClass {
        meta,
        provisioner: text_of(obj.get("provisioner")),
        volume_binding_mode: text_of(obj.get("volumeBindingMode")),
        allowed_zones,
        is_default,
    });
}

pub fn security_group_policy(
    src: &Source<'_>,
    obj: &Node,
    api_version: Option<&str>,
    facts: &mut Facts,
) {
    let spec = obj.get("spec");
    facts.security_group_policies.push(SecurityGroupPolicy {
        meta: meta(src, obj, api_version),
        pod_selector: spec
            .and_then(|s| s.get("podSelector"))
            .map(|s| label_selector(Some(s))),
        service_account_selector: spec
            .and_then(|s| s.get("serviceAccountSelector"))
            .map(|s| label_selector(Some(s))),
        group_ids: spec
            .and_then(|s| s.path(&["securityGroups", "groupIds"]))
            .map(Node::string_list)
            .unwrap_or_default(),
    });
}

pub fn service_account(src: &Source<'_>, obj: &Node, api_version: Option<&str>, facts: &mut Facts) {
    facts.service_accounts.push(ServiceAccount {
        meta: meta(src, obj, api_version),
    });
}

pub fn crd(src: &Source<'_>, obj: &Node, api_version: Option<&str>, facts: &mut Facts) {
    let meta = meta(src, obj, api_version);
    let reference = ObjectRef::new("CustomResourceDefinition", None, &meta.name);
    let spec = obj.get("spec");
    let crd_conditions = conditions(src, obj, &reference, None, facts);
    facts.crds.push(Crd {
        group: text_of(spec.and_then(|s| s.get("group"))).unwrap_or_default(),
        kind: text_of(spec.and_then(|s| s.path(&["names", "kind"]))).unwrap_or_default(),
        versions: spec
            .and_then(|s| s.get("versions"))
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .filter_map(|v| {
                Some(CrdVersion {
                    name: text_of(v.get("name"))?,
                    served: v.get("served").and_then(Node::boolean) == Some(true),
                    storage: v.get("storage").and_then(Node::boolean) == Some(true),
                })
            })
            .collect(),
        conversion_strategy: text_of(spec.and_then(|s| s.path(&["conversion", "strategy"]))),
        stored_versions: obj
            .path(&["status", "storedVersions"])
            .map(Node::string_list)
            .unwrap_or_default(),
        conditions: crd_conditions,
        meta,
    });
}

/// `aws-auth` becomes the role mappings; any other ConfigMap's data becomes settings
/// (`karpenter-global-settings`' `aws.isolatedVPC`, `config-logging`'s `loglevel.controller`).
pub fn config_map(src: &Source<'_>, obj: &Node, api_version: Option<&str>, facts: &mut Facts) {
    let meta = meta(src, obj, api_version);
    let data = obj.get("data");
    if meta.name == "aws-auth" {
        let map_roles = data
            .and_then(|d| d.get("mapRoles"))
            .map(|roles| aws_auth_roles(src, roles, facts))
            .unwrap_or_default();
        facts.aws_auth = Some(AwsAuth { meta, map_roles });
        return;
    }
    let reference = ObjectRef::new("ConfigMap", meta.namespace.as_deref(), &meta.name);
    for (key, value) in data.map(Node::entries).unwrap_or_default() {
        let text = value.text().unwrap_or_default().to_string();
        facts.settings.push(setting(
            src,
            SettingSource::ConfigMap,
            &reference,
            "",
            key.clone(),
            text,
            value,
        ));
    }
}

/// The YAML list inside `mapRoles`. Its lines are found again in the segment when it was
/// written as a block (`mapRoles: |`); in JSON it is one escaped line.
fn aws_auth_roles(src: &Source<'_>, roles: &Node, facts: &mut Facts) -> Vec<MapRole> {
    let Some(text) = roles.text() else {
        return Vec::new();
    };
    let inner_line = |i: usize| {
        let candidate = roles.line + 1 + i;
        let expected = text.lines().nth(i).map(str::trim);
        (expected.is_some() && src.line(candidate).map(str::trim) == expected).then_some(candidate)
    };
    let (documents, error) = yaml::parse_documents(text, 0);
    if let Some(error) = error {
        facts.input_errors.push(InputError {
            source: src.label().to_string(),
            line: src.original_line(inner_line(error.line).unwrap_or(roles.line)),
            message: format!(
                "aws-auth mapRoles is not a valid YAML list: {}",
                error.message
            ),
        });
    }
    documents
        .iter()
        .flat_map(|d| d.items())
        .filter_map(|role| {
            let arn = role.get("rolearn")?;
            let line = inner_line(arn.line).unwrap_or(roles.line);
            Some(MapRole {
                role_arn: arn.string()?,
                username: text_of(role.get("username")),
                groups: role
                    .get("groups")
                    .map(Node::string_list)
                    .unwrap_or_default(),
                evidence: Some(src.evidence_at(line)),
            })
        })
        .collect()
}
