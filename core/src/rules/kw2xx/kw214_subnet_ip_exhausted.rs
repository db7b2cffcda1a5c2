//! KW214 subnet-ip-exhausted.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::{nodepool_of_node, nodepool_subnets};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW214",
    slug: "subnet-ip-exhausted",
    title: "The subnet has run out of IP addresses",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
A subnet the EC2NodeClass uses has (almost) no free IP address left: EC2 refuses to launch
instances in it, or the VPC CNI cannot give pods on the node an address.

Signals: the EC2 code `InsufficientFreeAddressesInSubnet` (`There are not enough free addresses
in subnet '<subnet>' to satisfy the requested number of instances`), the NodeClaim reason message
`There are not enough free IP addresses to launch an instance in this subnet`, or the CNI's
`failed to assign an IP address to container` while the subnets' `AvailableIpAddressCount` is
near zero.

## Why it happens
With the VPC CNI every pod takes a VPC address, and each node pre-allocates a warm pool of them;
small subnets (a /24 or less per zone) fill up quickly, most of all when pods pinned to one zone
(a StatefulSet with EBS volumes) all land in the same subnet.

## How to fix
Add address space: a secondary VPC CIDR (100.64.0.0/10 is common) with new subnets tagged for the
EC2NodeClass, or larger subnets; spread pods across zones (`topologySpreadConstraints` on
`topology.kubernetes.io/zone`) so that every subnet is used; consider IPv6 clusters; lower the
CNI's warm pool (`WARM_IP_TARGET`, `MINIMUM_IP_TARGET`).
"#,
};

const SIGNALS: &[&str] = &[
    "insufficientfreeaddressesinsubnet",
    "not enough free ip addresses to launch an instance",
    "not enough free addresses in subnet",
    "insufficient free addresses in that subnet",
    "failed to assign an ip address",
];

/// At or below this many free addresses a subnet counts as exhausted: a node needs one for
/// itself and the CNI keeps a warm pool of several more.
pub const NEAR_ZERO: u64 = 5;

/// One subnet's free-address count, as `aws ec2 describe-subnets` printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubnetFree {
    pub id: Option<String>,
    pub zone: Option<String>,
    pub available: u64,
}

/// The subnets whose `AvailableIpAddressCount` the input shows, in order. `describe-subnets`
/// prints one JSON object per subnet (one field a line, fields in any order), so the fields are
/// collected between braces, whether ingest keeps the document in one message or one a line.
pub fn subnet_counts(facts: &Facts) -> Vec<SubnetFree> {
    let mut out: Vec<SubnetFree> = Vec::new();
    let mut current = SubnetFree::default();
    let mut has_count = false;
    let mut flush = |current: &mut SubnetFree, has_count: &mut bool| {
        if *has_count {
            out.push(std::mem::take(current));
        } else {
            *current = SubnetFree::default();
        }
        *has_count = false;
    };
    for m in &facts.messages {
        for (i, segment) in m.text.split(['{', '}']).enumerate() {
            // Every split point is a brace: an object starts or ends there.
            if i > 0 {
                flush(&mut current, &mut has_count);
            }
            for (key, slot) in [
                ("SubnetId", 0),
                ("AvailabilityZone\"", 1),
                ("AvailabilityZone:", 1),
                ("AvailableIpAddressCount", 2),
            ] {
                let Some(at) = find_ignore_ascii_case(segment, key) else {
                    continue;
                };
                let value = field_value(&segment[at + key.len()..]);
                match slot {
                    0 => current.id = value.filter(|v| v.starts_with("subnet-")),
                    1 => current.zone = value,
                    _ => {
                        if let Some(n) = value.and_then(|v| v.parse().ok()) {
                            current.available = n;
                            has_count = true;
                        }
                    }
                }
            }
        }
    }
    flush(&mut current, &mut has_count);
    for m in &facts.messages {
        for line in m.text.lines() {
            if let Some(row) = query_row(line) {
                if !out.iter().any(|s| s.id == row.id) {
                    out.push(row);
                }
            }
        }
    }
    out
}

/// A row of `describe-subnets --query 'Subnets[].[SubnetId,AvailabilityZone,
/// AvailableIpAddressCount]'` in `--output table` (`|  subnet-0a1b  |  us-east-1a  |  3  |`) or
/// `--output text` (tab-separated): one subnet ID, one count, and at most a zone, a CIDR and
/// a name beside them. Columns in any order; a row with two bare numbers is not read.
fn query_row(line: &str) -> Option<SubnetFree> {
    let cells: Vec<&str> = line
        .split(['|', '\t'])
        .flat_map(str::split_whitespace)
        .collect();
    if cells.len() < 2 || cells.len() > 5 {
        return None;
    }
    let ids: Vec<&&str> = cells.iter().filter(|c| c.starts_with("subnet-")).collect();
    let counts: Vec<u64> = cells.iter().filter_map(|c| c.parse().ok()).collect();
    let ([id], [count]) = (ids.as_slice(), counts.as_slice()) else {
        return None;
    };
    let zone = cells.iter().find(|c| {
        c.contains('-')
            && !c.starts_with("subnet-")
            && c.ends_with(|ch: char| ch.is_ascii_lowercase())
            && c[..c.len() - 1].ends_with(|ch: char| ch.is_ascii_digit())
    });
    Some(SubnetFree {
        id: Some(id.to_string()),
        zone: zone.map(|z| z.to_string()),
        available: *count,
    })
}

/// The value after a JSON/YAML key: skips `"`, `:` and spaces, stops at `"`, `,` or space.
fn field_value(after: &str) -> Option<String> {
    let v: String = after
        .trim_start_matches(['"', ':', ' ', '\t', '='])
        .chars()
        .take_while(|c| !matches!(c, '"' | ',' | ' ' | '\t' | '}'))
        .collect();
    (!v.is_empty()).then_some(v)
}

/// The subnets at or below [`NEAR_ZERO`] free addresses.
pub fn exhausted_subnets(facts: &Facts) -> Vec<SubnetFree> {
    subnet_counts(facts)
        .into_iter()
        .filter(|s| s.available <= NEAR_ZERO)
        .collect()
}

/// The zones of the nodes the pods of these CNI failures run on, where the input shows them
/// (the node's zone label, else the zone in its provider ID `aws:///<zone>/i-...`). One pass
/// over the pods, one over the nodes.
fn cni_node_zones<'a>(facts: &'a Facts, cni: &[&Message]) -> Vec<&'a str> {
    let failing: Vec<&ObjectRef> = cni.iter().filter_map(|m| m.object.as_ref()).collect();
    let nodes: Vec<&str> = facts
        .pods
        .iter()
        .filter(|p| {
            failing.iter().any(|r| {
                r.name == p.meta.name && (r.namespace.is_none() || r.namespace == p.meta.namespace)
            })
        })
        .filter_map(|p| p.node_name.as_deref())
        .collect();
    let mut zones: Vec<&str> = Vec::new();
    for n in facts
        .nodes
        .iter()
        .filter(|n| nodes.contains(&n.meta.name.as_str()))
    {
        let zone = n.meta.label("topology.kubernetes.io/zone").or_else(|| {
            n.provider_id
                .as_deref()?
                .strip_prefix("aws:///")?
                .split('/')
                .next()
        });
        if let Some(z) = zone.filter(|z| !z.is_empty() && !zones.contains(z)) {
            zones.push(z);
        }
    }
    zones
}

/// The exhausted subnets that can explain `failed to assign an IP address`: a node's ENIs take
/// addresses from subnets of its own zone, so when the failing pods' nodes show their zones, an
/// exhausted subnet elsewhere is not the cause. Without zones every exhausted subnet counts.
pub fn exhausted_subnets_for_cni(facts: &Facts, cni: &[&Message]) -> Vec<SubnetFree> {
    let mut exhausted = exhausted_subnets(facts);
    let zones = cni_node_zones(facts, cni);
    if !zones.is_empty() {
        exhausted.retain(|s| s.zone.as_deref().is_none_or(|z| zones.contains(&z)));
    }
    exhausted
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let ec2: Vec<&Message> = facts
        .messages_containing_any(&[
            "insufficientfreeaddressesinsubnet",
            "not enough free ip addresses to launch an instance",
            "not enough free addresses in subnet",
            "insufficient free addresses in that subnet",
        ])
        .collect();
    let cni: Vec<&Message> = facts
        .messages_containing("failed to assign an ip address")
        .collect();
    let exhausted = exhausted_subnets_for_cni(facts, &cni);
    let cni_with_counts = !cni.is_empty() && !exhausted.is_empty();
    if ec2.is_empty() && !cni_with_counts {
        return Vec::new();
    }
    let mut subnets: Vec<String> = Vec::new();
    for m in &ec2 {
        for token in m
            .text
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        {
            if token.starts_with("subnet-")
                && token.len() > 7
                && !subnets.iter().any(|s| s == token)
            {
                subnets.push(token.to_string());
            }
        }
    }
    let zone_of = |id: &str| -> Option<String> {
        facts
            .nodeclasses
            .iter()
            .flat_map(|c| c.status_subnets.iter())
            .find(|(sid, _)| sid == id)
            .map(|(_, z)| z.clone())
            .or_else(|| {
                exhausted
                    .iter()
                    .find(|s| s.id.as_deref() == Some(id))
                    .and_then(|s| s.zone.clone())
            })
    };
    let nodepool = ec2
        .iter()
        .find_map(|m| m.nodepool.clone())
        .or_else(|| {
            ec2.iter().find_map(|m| {
                let nc = m.object.as_ref()?;
                facts
                    .nodeclaims
                    .iter()
                    .find(|c| c.meta.name == nc.name)
                    .and_then(|c| c.nodepool.clone())
            })
        })
        // The CNI's failure is about a pod: the NodePool of the node it was placed on.
        .or_else(|| {
            cni.iter().find_map(|m| {
                let node = facts.pod(m.object.as_ref()?)?.node_name.clone()?;
                nodepool_of_node(facts, &node)
            })
        });
    let mut summary = String::new();
    if !ec2.is_empty() {
        let names: Vec<String> = subnets
            .iter()
            .map(|s| match zone_of(s) {
                Some(z) => format!("{s} ({z})"),
                None => s.clone(),
            })
            .collect();
        let mut nodeclaims: Vec<String> = Vec::new();
        for m in &ec2 {
            if let Some(n) = crate::rules::kw3xx::common::nodeclaim_of(facts, m) {
                if !nodeclaims.contains(&n) {
                    nodeclaims.push(n);
                }
            }
        }
        // Before v0.32 the pool was a v1alpha5 Provisioner and the claim a Machine.
        let (pool_kind, claim_kind) = if crate::rules::version::before_v0_32(facts) {
            ("Provisioner", "Machine")
        } else {
            ("NodePool", "NodeClaim")
        };
        let whose = match (nodepool.as_deref(), nodeclaims.is_empty()) {
            (Some(n), true) => format!(" for {pool_kind} {n}"),
            (Some(n), false) => format!(
                " for {pool_kind} {n} ({claim_kind} {})",
                nodeclaims.join(", ")
            ),
            (None, false) => format!(" for {claim_kind} {}", nodeclaims.join(", ")),
            (None, true) => String::new(),
        };
        let subnet = if names.is_empty() {
            "the subnet is".to_string()
        } else {
            format!("subnet {} is", names.join(", "))
        };
        // ipamd's `Failed to increase pool size ... CreateNetworkInterface:
        // InsufficientFreeAddressesInSubnet`: the node runs, its pods wait for an address.
        let from_cni = ec2
            .iter()
            .all(|m| crate::rules::kw3xx::cni_log::is_cni_line(m));
        if from_cni {
            summary.push_str(&format!(
                "The VPC CNI cannot create network interfaces for pod IPs: {subnet} out of free IP addresses (InsufficientFreeAddressesInSubnet), so new pods on the node wait for an address (`failed to assign an IP address to container`)."
            ));
        } else {
            summary.push_str(&format!(
                "EC2 cannot launch instances{whose}: {subnet} out of free IP addresses (InsufficientFreeAddressesInSubnet)."
            ));
        }
    }
    if !exhausted.is_empty() {
        let list: Vec<String> = exhausted
            .iter()
            .map(|s| {
                format!(
                    "{}{}: {} free",
                    s.id.as_deref().unwrap_or("a subnet"),
                    s.zone
                        .as_deref()
                        .map(|z| format!(" ({z})"))
                        .unwrap_or_default(),
                    s.available
                )
            })
            .collect();
        if !summary.is_empty() {
            summary.push(' ');
        }
        if cni.is_empty() {
            summary.push_str(&format!("Subnets near exhaustion: {}.", list.join(", ")));
        } else {
            summary.push_str(&format!(
                "The VPC CNI fails to assign pod IPs (`failed to assign an IP address to container`) and the subnets are nearly empty: {}.",
                list.join(", ")
            ));
        }
    }
    let ids = if subnets.is_empty() {
        exhausted
            .iter()
            .filter_map(|s| s.id.clone())
            .collect::<Vec<_>>()
    } else {
        subnets.clone()
    };
    let id_list = if ids.is_empty() {
        "<subnet-id>".to_string()
    } else {
        ids.join(" ")
    };
    let mut d = Diagnosis::new(&META, summary)
        .with_node_pool(nodepool.as_deref())
        .with_messages(ec2.iter().copied());
    if cni_with_counts {
        d = d
            .with_messages(cni.iter().copied())
            .with_related(&["KW213"]);
    }
    let count_messages: Vec<&Message> = facts
        .messages_containing("AvailableIpAddressCount")
        .filter(|m| {
            field_value(
                &m.text[find_ignore_ascii_case(&m.text, "AvailableIpAddressCount").unwrap_or(0)
                    + "AvailableIpAddressCount".len()..],
            )
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|n| n <= NEAR_ZERO)
        })
        .collect();
    d = d.with_messages(count_messages.iter().copied());
    let legacy = crate::rules::version::before_v0_32(facts);
    let (class_kind, class_res) = if legacy {
        ("AWSNodeTemplate", "awsnodetemplate")
    } else {
        ("EC2NodeClass", "ec2nodeclass")
    };
    // The node class whose subnets ran out: the NodePool's, the NodeClaim's, or the only one.
    let subnets_of_pool = nodepool.as_deref().and_then(|n| nodepool_subnets(facts, n));
    let nodeclass = subnets_of_pool
        .as_ref()
        .map(|s| s.nodeclass.clone())
        .or_else(|| {
            facts
                .nodeclaims
                .iter()
                .filter(|c| nodepool.is_none() || c.nodepool == nodepool)
                .find_map(|c| c.nodeclass_ref.clone())
        })
        .or_else(|| match facts.nodeclasses.as_slice() {
            [only] => Some(only.meta.name.clone()),
            _ => None,
        });
    let tag = subnets_of_pool.and_then(|s| s.tag).or_else(|| {
        let nc = facts.nodeclass(nodeclass.as_deref()?)?;
        nc.subnet_selector_terms.iter().find_map(|t| {
            let (k, v) = t.get("tags")?.as_object()?.iter().next()?;
            Some((k.clone(), v.as_str().unwrap_or("*").to_string()))
        })
    });
    let (tag_key, tag_value) = tag.unwrap_or_else(|| {
        (
            "karpenter.sh/discovery".into(),
            crate::rules::text::cluster_name_or_placeholder(facts),
        )
    });
    let zone = ids
        .iter()
        .find_map(|id| zone_of(id))
        .or_else(|| exhausted.iter().find_map(|s| s.zone.clone()))
        .unwrap_or_else(|| "<zone>".to_string());
    let vpc = match ids.first() {
        Some(id) => format!(
            "VPC=$(aws ec2 describe-subnets --subnet-ids {id} --query 'Subnets[0].VpcId' --output text)\n"
        ),
        None => "VPC=<vpc-id>\n".to_string(),
    };
    let class_named = match &nodeclass {
        Some(nc) => format!("{class_kind} {nc}"),
        None => format!("the {class_kind}"),
    };
    let mut steps = vec![Remediation::command(
        "See how many addresses each subnet has left:",
        format!("aws ec2 describe-subnets --subnet-ids {id_list} --query 'Subnets[].[SubnetId,AvailabilityZone,CidrBlock,AvailableIpAddressCount]' --output table"),
    )];
    if let Some(nc) = &nodeclass {
        let selector = if legacy {
            ".spec.subnetSelector"
        } else {
            ".spec.subnetSelectorTerms"
        };
        steps.push(Remediation::command(
            format!("See the subnets {class_named} selects and those it resolved:"),
            format!("kubectl get {class_res} {nc} -o jsonpath='{{{selector}}}{{\"\\n\"}}{{.status.subnets}}{{\"\\n\"}}'"),
        ));
    }
    steps.push(Remediation::command(
        format!("Add address space: a secondary CIDR on the VPC and a subnet in it in {zone}, tagged {tag_key}={tag_value} so that {class_named} selects it (pick a free CIDR):"),
        format!(
            "{vpc}aws ec2 associate-vpc-cidr-block --vpc-id \"$VPC\" --cidr-block 100.64.0.0/16\naws ec2 create-subnet --vpc-id \"$VPC\" --availability-zone {zone} --cidr-block 100.64.0.0/19 --tag-specifications 'ResourceType=subnet,Tags=[{{Key={tag_key},Value={tag_value}}}]'"
        ),
    ));
    vec![d.with_remediation(steps.into_iter().chain([
        Remediation::yaml(
            "Spread pods across zones so that every subnet is used (pod template):",
            "topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: topology.kubernetes.io/zone\n    whenUnsatisfiable: ScheduleAnyway\n    labelSelector:\n      matchLabels:\n        app: <your-app-label>\n",
        ),
        Remediation::command(
            "Shrink the CNI's warm pool of addresses per node (or move to an IPv6 cluster):",
            "kubectl set env daemonset aws-node -n kube-system WARM_IP_TARGET=2 MINIMUM_IP_TARGET=10",
        ),
    ]))]
}

/// Whether the text says a subnet is out of addresses (for other rules' exclusions).
pub fn mentions_subnet_exhaustion(text: &str) -> bool {
    [
        "insufficientfreeaddressesinsubnet",
        "not enough free ip addresses",
        "not enough free addresses in subnet",
        "insufficient free addresses",
    ]
    .iter()
    .any(|s| contains_ignore_ascii_case(text, s))
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    /// A node's ENIs draw from its own zone's subnets: an empty subnet elsewhere does not
    /// explain the CNI failing on it.
    #[test]
    fn an_exhausted_subnet_of_another_zone_is_not_the_cni_cause() {
        let paste = |node_zone: &str| {
            format!(
                "$ kubectl get pods -n shop -o wide\n\
NAME    READY   STATUS              RESTARTS   AGE   IP       NODE                 NOMINATED NODE   READINESS GATES\n\
cart-0  0/1     ContainerCreating   0          9m    <none>   ip-10-3-33-9.x.int   <none>           <none>\n\n\
$ kubectl get events -n shop\n\
LAST SEEN   TYPE      REASON                   OBJECT       MESSAGE\n\
41s         Warning   FailedCreatePodSandBox   pod/cart-0   Failed to create pod sandbox: plugin type=\"aws-cni\" name=\"aws-cni\" failed (add): add cmd: failed to assign an IP address to container\n\n\
$ kubectl get nodes -L topology.kubernetes.io/zone\n\
NAME                 STATUS   ROLES    AGE   VERSION   ZONE\n\
ip-10-3-33-9.x.int   Ready    <none>   11m   v1.31.4   {node_zone}\n\n\
|  subnet-0b5e2c8d71f4a9e36 |  us-west-2a |  3870  |\n\
|  subnet-04a8f1e6c3d7b2905 |  us-west-2c |  0     |\n"
            )
        };
        assert!(ids(&check_only("KW214", &paste("us-west-2a"))).is_empty());
        assert_eq!(ids(&check_only("KW214", &paste("us-west-2c"))), ["KW214"]);
    }

    #[test]
    fn ec2_forms() {
        for text in [
            r#"{"level":"ERROR","message":"failed launching nodeclaim","NodeClaim":{"name":"search-k7v2n"},"error":"creating instance, insufficient capacity, with fleet error(s), InsufficientFreeAddressesInSubnet: There are not enough free addresses in subnet 'subnet-07d3a9c4e1b2f5a86' to satisfy the requested number of instances."}"#,
            "Launched=Unknown InsufficientFreeAddressesInSubnet: There are not enough free IP addresses to launch an instance in this subnet",
            "InsufficientFreeAddressesInSubnet: There are insufficient free addresses in that subnet to run instance",
        ] {
            assert_eq!(ids(&check_only("KW214", text)), ["KW214"], "{text}");
        }
        let report = check_only("KW214", "InsufficientFreeAddressesInSubnet: There are not enough free addresses in subnet 'subnet-07d3a9c4e1b2f5a86' to satisfy");
        assert!(report.diagnoses[0]
            .summary
            .contains("subnet-07d3a9c4e1b2f5a86"));
    }

    #[test]
    fn cni_failure_with_empty_subnets() {
        let text = r#"Warning   FailedCreatePodSandBox   pod/cart-1   Failed to create pod sandbox: plugin type="aws-cni" name="aws-cni" failed (add): add cmd: failed to assign an IP address to container
[
    {
        "SubnetId": "subnet-0b5e2c8d71f4a9e36",
        "AvailabilityZone": "us-west-2a",
        "AvailableIpAddressCount": 2
    },
    {
        "SubnetId": "subnet-0e91d4c7a2b36f158",
        "AvailabilityZone": "us-west-2b",
        "AvailableIpAddressCount": 180
    }
]"#;
        let report = check_only("KW214", text);
        assert_eq!(ids(&report), ["KW214"]);
        let s = &report.diagnoses[0].summary;
        assert!(
            s.contains("subnet-0b5e2c8d71f4a9e36 (us-west-2a): 2 free"),
            "{s}"
        );
        assert!(!s.contains("subnet-0e91d4c7a2b36f158"), "{s}");
    }

    #[test]
    fn cni_failure_alone_or_roomy_subnets_is_not_kw214() {
        for text in [
            "add cmd: failed to assign an IP address to container",
            "add cmd: failed to assign an IP address to container\n\"SubnetId\": \"subnet-0b5e2c8d71f4a9e36\",\n\"AvailableIpAddressCount\": 4000",
            "no subnets found",
        ] {
            assert!(ids(&check_only("KW214", text)).is_empty(), "{text}");
        }
    }
}
