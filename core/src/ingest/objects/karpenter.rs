//! Karpenter's kinds across API generations: NodePool (v1, v1beta1) and Provisioner
//! (v1alpha5), NodeClaim (v1, v1beta1) and Machine (v1alpha5), EC2NodeClass (v1, v1beta1) and
//! AWSNodeTemplate (v1alpha1).

use crate::facts::{
    BlockDeviceMapping, CapacityReservation, Collected, DisruptionSpec, Facts, NodeClaim,
    NodeClass, NodePool, ObjectRef, ResolvedAmi,
};

use super::common::{conditions, int_of, json_of, map_of, meta, requirements, taints, text_of};
use super::tree::Node;
use super::Source;

/// Seconds as Karpenter's duration strings (`ttlSecondsAfterEmpty: 30` -> `30s`).
fn seconds(node: Option<&Node>) -> Option<String> {
    int_of(node).map(|s| format!("{s}s"))
}

pub fn nodepool(
    src: &Source<'_>,
    obj: &Node,
    kind: &str,
    api_version: Option<&str>,
    facts: &mut Facts,
) {
    let is_provisioner = kind == "Provisioner";
    let meta = meta(src, obj, api_version);
    let reference = ObjectRef::new(kind, None, &meta.name);
    let spec = obj.get("spec");
    let field = |path: &[&str]| spec.and_then(|s| s.path(path));
    let pool_conditions = conditions(src, obj, &reference, Some(&meta.name), facts);
    let pool = if is_provisioner {
        NodePool {
            nodeclass_ref: text_of(field(&["providerRef", "name"])),
            requirements: requirements(field(&["requirements"])),
            taints: taints(field(&["taints"])),
            startup_taints: taints(field(&["startupTaints"])),
            template_labels: map_of(field(&["labels"])),
            template_annotations: map_of(field(&["annotations"])),
            limits: map_of(field(&["limits", "resources"])),
            disruption: DisruptionSpec {
                consolidation_enabled: field(&["consolidation", "enabled"]).and_then(Node::boolean),
                consolidate_after: seconds(field(&["ttlSecondsAfterEmpty"])),
                evidence: field(&["consolidation"])
                    .or(field(&["ttlSecondsAfterEmpty"]))
                    .map(|n| src.evidence(n)),
                ..DisruptionSpec::default()
            },
            expire_after: seconds(field(&["ttlSecondsUntilExpired"])),
            kubelet: json_of(field(&["kubeletConfiguration"])),
            is_provisioner,
            ..NodePool::default()
        }
    } else {
        let template_spec = |path: &[&str]| field(&[&["template", "spec"], path].concat());
        let disruption = field(&["disruption"]);
        NodePool {
            nodeclass_ref: text_of(template_spec(&["nodeClassRef", "name"])),
            requirements: requirements(template_spec(&["requirements"])),
            taints: taints(template_spec(&["taints"])),
            startup_taints: taints(template_spec(&["startupTaints"])),
            template_labels: map_of(field(&["template", "metadata", "labels"])),
            template_annotations: map_of(field(&["template", "metadata", "annotations"])),
            limits: map_of(field(&["limits"])),
            disruption: DisruptionSpec {
                consolidation_policy: text_of(
                    disruption.and_then(|d| d.get("consolidationPolicy")),
                ),
                consolidate_after: text_of(disruption.and_then(|d| d.get("consolidateAfter"))),
                budgets: disruption
                    .and_then(|d| d.get("budgets"))
                    .map(|b| b.items().iter().map(Node::to_json).collect())
                    .unwrap_or_default(),
                evidence: disruption.map(|d| src.evidence(d)),
                ..DisruptionSpec::default()
            },
            // v1 moved expireAfter from the disruption block to the template spec.
            expire_after: text_of(template_spec(&["expireAfter"]))
                .or_else(|| text_of(disruption.and_then(|d| d.get("expireAfter")))),
            kubelet: json_of(template_spec(&["kubelet"])),
            termination_grace_period: text_of(template_spec(&["terminationGracePeriod"])),
            ..NodePool::default()
        }
    };
    facts.collected.insert(Collected::NodePools);
    facts.nodepools.push(NodePool {
        usage: map_of(obj.path(&["status", "resources"])),
        weight: int_of(field(&["weight"])),
        conditions: pool_conditions,
        meta,
        ..pool
    });
}

pub fn nodeclaim(
    src: &Source<'_>,
    obj: &Node,
    kind: &str,
    api_version: Option<&str>,
    facts: &mut Facts,
) {
    let is_machine = kind == "Machine";
    let meta = meta(src, obj, api_version);
    let reference = ObjectRef::new(kind, None, &meta.name);
    let spec = obj.get("spec");
    let status = obj.get("status");
    let field = |path: &[&str]| spec.and_then(|s| s.path(path));
    let status_field = |key: &str| status.and_then(|s| s.get(key));
    let label = |key: &str| meta.label(key).map(str::to_string);
    let nodepool =
        label("karpenter.sh/nodepool").or_else(|| label("karpenter.sh/provisioner-name"));
    let provider_id = text_of(status_field("providerID"));
    let zone = label("topology.kubernetes.io/zone")
        .or_else(|| zone_of_provider_id(provider_id.as_deref()?));
    let claim_conditions = conditions(src, obj, &reference, nodepool.as_deref(), facts);
    let nodeclass_ref = if is_machine {
        text_of(field(&["machineTemplateRef", "name"]))
    } else {
        text_of(field(&["nodeClassRef", "name"]))
    };
    facts.collected.insert(Collected::NodeClaims);
    facts.nodeclaims.push(NodeClaim {
        nodepool,
        nodeclass_ref,
        requirements: requirements(field(&["requirements"])),
        taints: taints(field(&["taints"])),
        startup_taints: taints(field(&["startupTaints"])),
        node_name: text_of(status_field("nodeName")),
        provider_id,
        image_id: text_of(status_field("imageID")),
        instance_type: label("node.kubernetes.io/instance-type"),
        zone,
        capacity_type: label("karpenter.sh/capacity-type"),
        requests: map_of(field(&["resources", "requests"])),
        capacity: map_of(status_field("capacity")),
        allocatable: map_of(status_field("allocatable")),
        expire_after: text_of(field(&["expireAfter"])),
        kubelet: json_of(field(&["kubelet"])),
        conditions: claim_conditions,
        is_machine,
        termination_grace_period: text_of(field(&["terminationGracePeriod"])),
        meta,
    });
}

/// `aws:///us-east-1a/i-0123` -> `us-east-1a`.
fn zone_of_provider_id(provider_id: &str) -> Option<String> {
    let rest = provider_id.strip_prefix("aws:///")?;
    let (zone, _) = rest.split_once('/')?;
    (!zone.is_empty()).then(|| zone.to_string())
}

pub fn nodeclass(
    src: &Source<'_>,
    obj: &Node,
    kind: &str,
    api_version: Option<&str>,
    facts: &mut Facts,
) {
    let is_aws_node_template = kind == "AWSNodeTemplate";
    let meta = meta(src, obj, api_version);
    let reference = ObjectRef::new(kind, None, &meta.name);
    let spec = obj.get("spec");
    let status = obj.get("status");
    let field = |key: &str| spec.and_then(|s| s.get(key));
    let terms = |v1_key: &str, v1alpha1_key: &str| {
        if is_aws_node_template {
            field(v1alpha1_key).map(selector_terms).unwrap_or_default()
        } else {
            field(v1_key)
                .map(|t| t.items().iter().map(Node::to_json).collect())
                .unwrap_or_default()
        }
    };
    let class_conditions = conditions(src, obj, &reference, None, facts);
    facts.collected.insert(Collected::NodeClasses);
    facts.nodeclasses.push(NodeClass {
        ami_family: text_of(field("amiFamily")),
        subnet_selector_terms: terms("subnetSelectorTerms", "subnetSelector"),
        security_group_selector_terms: terms("securityGroupSelectorTerms", "securityGroupSelector"),
        ami_selector_terms: terms("amiSelectorTerms", "amiSelector"),
        role: text_of(field("role")),
        instance_profile: text_of(field("instanceProfile")),
        kubelet: json_of(field("kubelet")),
        block_device_mappings: field("blockDeviceMappings")
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .map(|m| block_device_mapping(src, m))
            .collect(),
        status_subnets: status
            .and_then(|s| s.get("subnets"))
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .filter_map(|s| {
                Some((
                    text_of(s.get("id"))?,
                    text_of(s.get("zone")).unwrap_or_default(),
                ))
            })
            .collect(),
        status_amis: status
            .and_then(|s| s.get("amis"))
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .filter_map(|a| {
                Some(ResolvedAmi {
                    id: text_of(a.get("id"))?,
                    name: text_of(a.get("name")),
                    requirements: requirements(a.get("requirements")),
                })
            })
            .collect(),
        status_instance_profile: text_of(status.and_then(|s| s.get("instanceProfile"))),
        capacity_reservation_selector_terms: terms(
            "capacityReservationSelectorTerms",
            "capacityReservationSelectorTerms",
        ),
        status_capacity_reservations: status
            .and_then(|s| s.get("capacityReservations"))
            .map(Node::items)
            .unwrap_or_default()
            .iter()
            .filter_map(|r| {
                Some(CapacityReservation {
                    id: text_of(r.get("id"))?,
                    reservation_type: text_of(r.get("reservationType")),
                    instance_type: text_of(r.get("instanceType")),
                    zone: text_of(r.get("availabilityZone")),
                    state: text_of(r.get("state")),
                    end_time: text_of(r.get("endTime")),
                    instance_match_criteria: text_of(r.get("instanceMatchCriteria")),
                })
            })
            .collect(),
        conditions: class_conditions,
        is_aws_node_template,
        launch_template: text_of(field("launchTemplate")),
        meta,
    });
}

/// A v1alpha1 selector map as v1 selector terms: `aws-ids` / `aws::ids` (comma-separated) one
/// `id` term each, `aws::name` / `aws::owners` a `name` / `owner` term, the rest one `tags` term.
fn selector_terms(selector: &Node) -> Vec<serde_json::Value> {
    let mut terms = Vec::new();
    let mut tags = serde_json::Map::new();
    for (key, value) in selector.entries() {
        let text = value.text().unwrap_or_default();
        match key.as_str() {
            "aws-ids" | "aws::ids" => terms.extend(
                text.split(',')
                    .map(str::trim)
                    .filter(|id| !id.is_empty())
                    .map(|id| serde_json::json!({ "id": id })),
            ),
            "aws::name" => terms.push(serde_json::json!({ "name": text })),
            "aws::owners" => terms.push(serde_json::json!({ "owner": text })),
            _ => {
                tags.insert(key.clone(), serde_json::Value::String(text.to_string()));
            }
        }
    }
    if !tags.is_empty() {
        terms.insert(0, serde_json::json!({ "tags": tags }));
    }
    terms
}

fn block_device_mapping(src: &Source<'_>, mapping: &Node) -> BlockDeviceMapping {
    let ebs = |key: &str| mapping.path(&["ebs", key]);
    BlockDeviceMapping {
        device_name: text_of(mapping.get("deviceName")),
        volume_size: text_of(ebs("volumeSize")),
        volume_type: text_of(ebs("volumeType")),
        encrypted: ebs("encrypted").and_then(Node::boolean),
        kms_key_id: text_of(ebs("kmsKeyID")),
        snapshot_id: text_of(ebs("snapshotID")),
        root_volume: mapping.get("rootVolume").and_then(Node::boolean),
        evidence: Some(src.evidence(mapping.get("deviceName").unwrap_or(mapping))),
        kms_key_evidence: ebs("kmsKeyID").map(|k| src.evidence(k)),
    }
}
