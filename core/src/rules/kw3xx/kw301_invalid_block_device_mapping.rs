//! KW301 invalid-block-device-mapping.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, NodeClass};
use crate::rules::kw2xx::scheduling::{record_of, tail_after};
use crate::rules::kw3xx::common::{
    join_names, karpenter_namespace, named, nodeclaim_of, nodeclass_of_nodeclaim,
    parse_launch_error, push_unique, sole_nodeclass, Api,
};
use crate::rules::kw5xx::nodeclass::{reports_condition, transition};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW301",
    slug: "invalid-block-device-mapping",
    title: "EC2 rejects the EC2NodeClass block device mappings",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
EC2 refused to launch (or, in the EC2NodeClass's dry-run validation, would refuse to launch) an
instance because of its block device mappings: `InvalidBlockDeviceMapping`. No node comes up
until the mapping is fixed.

Signals: `InvalidBlockDeviceMapping: Invalid device name /dev/xvda`, `InvalidBlockDeviceMapping:
Volume of size <n>GB is smaller than snapshot '<snap>', expect size>= <m>GB`,
`InvalidBlockDeviceMapping: Snapshot <snap> is not available for use`,
`InvalidBlockDeviceMapping: The device '<name>' is used in more than one block-device mapping`,
in a CreateFleet error
(`launching nodeclaim, creating instance, [creating nodeclaim, ][with fleet error(s), ]...`,
pre-v0.32 `Could not launch node, launching instances, with fleet error(s), ...` and `launching
machine, creating cloud provider instance, ...`, v1.5+ with the `(aws-error-code=...)` suffix) or
in the EC2NodeClass validation (`validating ec2:RunInstances authorization, ... api error
InvalidBlockDeviceMapping: ...`, v1.3+), which leaves `ValidationSucceeded` not True and the
NodePool not Ready; a `ValidationSucceeded=False` condition (or its transition event) whose
reason or message is `InvalidBlockDeviceMapping` is the same failure, explained here rather than
as KW502.

## Why it happens
The `deviceName` does not match the AMI's root device (`/dev/xvda` for AL2 and AL2023; for
Bottlerocket `/dev/xvda` is the OS volume and `/dev/xvdb` the data volume; `/dev/sda1` for
Windows and Ubuntu), two mappings use the same `deviceName`, a `volumeSize` is smaller than the
snapshot the AMI's volume is created from, or the snapshot is still pending or was deleted.

## How to fix
Edit the EC2NodeClass `spec.blockDeviceMappings`: the device name of the AMI family, and a
`volumeSize` at least the snapshot's size (the error says `expect size>= <m>GB`). For a custom AMI
read its mappings with `aws ec2 describe-images --image-ids <ami> --query
'Images[].BlockDeviceMappings'`. Since v1.7 any annotation change on the EC2NodeClass re-runs the
validation at once.
"#,
};

const SIGNALS: &[&str] = &["invalidblockdevicemapping"];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<&Message> = facts
        .messages_containing("InvalidBlockDeviceMapping")
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    let mut nodeclasses: Vec<String> = Vec::new();
    let mut nodeclaims: Vec<String> = Vec::new();
    let mut problems: Vec<String> = Vec::new();
    let mut wrong_devices: Vec<String> = Vec::new();
    let mut duplicate_devices: Vec<String> = Vec::new();
    let mut min_size_gb: Option<u64> = None;
    let mut snapshots: Vec<String> = Vec::new();
    let mut validation = false;
    let mut launch = false;
    for m in &hits {
        if let Some(nc) = nodeclass_named(facts, m) {
            push_unique(&mut nodeclasses, nc);
        }
        if let Some(claim) = nodeclaim_of(facts, m) {
            if let Some(nc) = nodeclass_of_nodeclaim(facts, &claim) {
                push_unique(&mut nodeclasses, nc);
            }
            push_unique(&mut nodeclaims, claim);
        }
        // The dry run's own error, or the EC2NodeClass's ValidationSucceeded=False condition
        // (a condition, its transition event) carrying EC2's reason.
        if contains_ignore_ascii_case(&m.text, "validating ec2:RunInstances")
            || reports_condition(&m.text, "ValidationSucceeded", "False")
        {
            validation = true;
        } else {
            launch = true;
        }
        let detail = parse_launch_error(&m.text)
            .filter(|e| e.code.as_deref() == Some("InvalidBlockDeviceMapping"))
            .map(|e| e.detail)
            .or_else(|| tail_after(&m.text, "InvalidBlockDeviceMapping: "))
            // `Status condition transitioned, ..., Reason: InvalidBlockDeviceMapping, Message: ...`
            .or_else(|| {
                transition(&m.text)
                    .filter(|t| t.reason.as_deref() == Some("InvalidBlockDeviceMapping"))
                    .and_then(|t| t.message)
            })
            .unwrap_or_default();
        let detail = detail
            .split(['\t', ';'])
            .next()
            .unwrap_or_default()
            .trim()
            .trim_end_matches(['"', '}'])
            .to_string();
        if let Some(dev) = tail_after(&detail, "Invalid device name ") {
            let dev = dev
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            push_unique(&mut wrong_devices, dev);
        }
        // EC2 names the device without `/dev/`: `The device 'xvda' is used in more than one
        // block-device mapping`.
        if contains_ignore_ascii_case(&detail, "used in more than one block-device mapping") {
            if let Some(dev) = tail_after(&detail, "The device '")
                .and_then(|t| t.split('\'').next().map(str::to_string))
                .filter(|d| !d.is_empty())
            {
                let dev = if dev.starts_with('/') {
                    dev
                } else {
                    format!("/dev/{dev}")
                };
                push_unique(&mut duplicate_devices, dev);
            }
        }
        if let Some(n) = expected_size(&detail) {
            min_size_gb = Some(min_size_gb.map_or(n, |m| m.max(n)));
        }
        for word in detail.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
            if word.starts_with("snap-") && word.len() > 5 {
                push_unique(&mut snapshots, word);
            }
        }
        if !detail.is_empty() {
            push_unique(&mut problems, detail);
        }
    }
    if nodeclasses.is_empty() {
        if let Some(nc) = sole_nodeclass(facts) {
            nodeclasses.push(nc);
        }
    }
    let pre_v1 = hits
        .iter()
        .any(|m| parse_launch_error(&m.text).is_some_and(|e| e.grammar == "pre-v0.32"));
    // Before v0.32 the mappings are an AWSNodeTemplate's (`kubectl get ec2nodeclass` fails
    // there).
    let api = Api {
        legacy: pre_v1 || Api::of(facts, &nodeclaims).legacy,
    };
    let (class, class_res) = (api.class(), api.class_res());
    let nodeclass = nodeclasses
        .first()
        .cloned()
        .unwrap_or_else(|| format!("<{class_res}>"));
    // Named when known, else described: not `EC2NodeClass <ec2nodeclass>`.
    let class_named = if nodeclasses.is_empty() {
        format!("the {class}")
    } else {
        format!("{class} {nodeclass}")
    };
    let mut summary = if nodeclasses.is_empty() {
        format!(
            "EC2 rejects the block device mappings of {}",
            if api.legacy {
                "the AWSNodeTemplate (or custom launch template) of this pre-v0.32 Karpenter"
            } else {
                "the EC2NodeClass"
            }
        )
    } else {
        format!(
            "EC2 rejects the block device mappings of {class} {}",
            join_names(&nodeclasses)
        )
    };
    if !problems.is_empty() {
        summary.push_str(&format!(
            ": InvalidBlockDeviceMapping \"{}\"",
            problems.join("\"; \"")
        ));
    }
    summary.push('.');
    match (validation, launch) {
        (true, false) => summary.push_str(" The EC2NodeClass's dry-run validation fails, so ValidationSucceeded is not True and its NodePools launch nothing."),
        (_, true) if !nodeclaims.is_empty() => summary.push_str(&format!(
            " Every launch fails: {} could not be launched.",
            named(api.claim(), &nodeclaims)
        )),
        _ => summary.push_str(" Every launch with these mappings fails."),
    }
    let nodepool = nodeclaims
        .first()
        .and_then(|c| crate::rules::kw3xx::common::nodepool_of_nodeclaim(facts, c));
    let nodeclass_cmd = api.nodeclass_cmd(
        nodeclasses.first().map(String::as_str),
        nodeclaims.first().map(String::as_str),
        nodepool.as_deref(),
    );
    // `kubectl edit` the class by name, else through the NodeClaim that references it.
    let edit = format!("kubectl edit {class_res} {nodeclass_cmd}");
    let family = family_of(facts, &nodeclass);
    let mut steps = Vec::new();
    if !duplicate_devices.is_empty() {
        steps.push(Remediation::yaml(
            format!(
                "Device {} appears in more than one mapping of {class_named}: keep one `blockDeviceMappings` entry per `deviceName` (`{edit}`):",
                join_names(&duplicate_devices)
            ),
            mappings_yaml(family.as_deref(), None),
        ));
    }
    if !wrong_devices.is_empty() {
        steps.push(Remediation::yaml(
            format!(
                "EC2 does not know device {} for this AMI: use the AMI family's device names in {class_named} (`{edit}`){}:",
                join_names(&wrong_devices),
                family
                    .as_deref()
                    .map(|f| format!(", here {f}"))
                    .unwrap_or_else(|| device_names_hint(facts, api.legacy).to_string())
            ),
            pasted_sizes(
                mappings_yaml(family.as_deref(), None),
                facts.nodeclass(&nodeclass),
                &wrong_devices,
            ),
        ));
    }
    if let Some(n) = min_size_gb {
        steps.push(Remediation::yaml(
            format!("The volume is smaller than the snapshot it is created from: set `volumeSize` to at least {n}Gi on the mapping that uses it (`{edit}`):"),
            mappings_yaml(family.as_deref(), Some(n)),
        ));
    }
    if !snapshots.is_empty() && min_size_gb.is_none() {
        steps.push(Remediation::command(
            format!(
                "Check snapshot {}: it must be `completed` and exist in this region and account (a pending or deleted snapshot cannot back a volume):",
                join_names(&snapshots)
            ),
            format!(
                "aws ec2 describe-snapshots --snapshot-ids {} --query 'Snapshots[].[SnapshotId,State,VolumeSize]' --output table",
                snapshots.join(" ")
            ),
        ));
    }
    if steps.is_empty() {
        steps.push(Remediation::yaml(
            format!("Fix `spec.blockDeviceMappings` of {class_named} (`{edit}`):"),
            mappings_yaml(family.as_deref(), None),
        ));
    }
    steps.push(Remediation::command(
        "Compare with the AMI's own mappings (root device name and snapshot sizes):",
        format!(
            "kubectl get {class_res} {nodeclass_cmd} -o jsonpath='{{.spec.blockDeviceMappings}}{{\"\\n\"}}{{.status.amis[*].id}}{{\"\\n\"}}' && aws ec2 describe-images --image-ids <ami-id> --query 'Images[].[RootDeviceName,BlockDeviceMappings]'"
        ),
    ));
    if validation {
        steps.push(Remediation::command(
            "Then watch the validation pass (since v1.7 any annotation change re-runs it at once):",
            format!(
                "kubectl get ec2nodeclass {nodeclass} -o jsonpath='{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}} {{.message}}{{\"\\n\"}}{{end}}'; kubectl logs -n {} -l app.kubernetes.io/name=karpenter --since=10m | grep -i blockdevice",
                karpenter_namespace(facts)
            ),
        ));
    }
    let object = nodeclasses
        .first()
        .map(|n| crate::rules::kw3xx::common::nodeclass_ref(facts, n));
    vec![Diagnosis::new(&META, summary)
        .with_object(object.as_ref())
        .with_node_pool(nodepool.as_deref())
        .with_messages(hits.iter().copied())
        .with_related(if validation { &["KW208"] } else { &[] })
        .with_remediation(steps)]
}

/// The EC2NodeClass a message names: the log's `EC2NodeClass` field, or the event's object.
fn nodeclass_named(facts: &Facts, m: &Message) -> Option<String> {
    if let Some(o) = &m.object {
        if o.kind.eq_ignore_ascii_case("ec2nodeclass") || o.kind.eq_ignore_ascii_case("nodeclass") {
            return Some(o.name.clone());
        }
    }
    let r = record_of(facts, m)?;
    ["EC2NodeClass", "ec2nodeclass", "NodeClass"]
        .iter()
        .find_map(|k| r.field_name(k))
}

/// `expect size>= 20GB` -> 20.
fn expected_size(detail: &str) -> Option<u64> {
    let at = find_ignore_ascii_case(detail, "expect size")?;
    let digits: String = detail[at..]
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(|c| c.is_ascii_digit())
        .collect();
    digits.parse().ok()
}

/// The device names of the AMI families the user's Karpenter has. The AL2023 family arrived
/// with v0.35 (v0.34's EC2NodeClass lists AL2, Bottlerocket, Ubuntu, Windows2019, Windows2022 and
/// Custom), so it is no answer for an AWSNodeTemplate or a known older release; Windows
/// families arrived with v0.29.
fn device_names_hint(facts: &Facts, legacy: bool) -> &'static str {
    use crate::rules::version::{at_least, era_before_v0_28};
    if legacy && era_before_v0_28(facts) == Some(true) {
        ": AL2 `/dev/xvda`; Bottlerocket `/dev/xvda` (OS) and `/dev/xvdb` (data); Ubuntu `/dev/sda1`"
    } else if legacy || at_least(facts, 0, 35) == Some(false) {
        ": AL2 `/dev/xvda`; Bottlerocket `/dev/xvda` (OS) and `/dev/xvdb` (data); Windows and Ubuntu `/dev/sda1`"
    } else {
        ": AL2/AL2023 `/dev/xvda`; Bottlerocket `/dev/xvda` (OS) and `/dev/xvdb` (data); Windows and Ubuntu `/dev/sda1`"
    }
}

/// The AMI family of an EC2NodeClass: `amiFamily`, or the family of its `alias` selector term.
fn family_of(facts: &Facts, nodeclass: &str) -> Option<String> {
    let nc = facts.nodeclass(nodeclass)?;
    if let Some(f) = &nc.ami_family {
        return Some(f.clone());
    }
    nc.ami_selector_terms.iter().find_map(|t| {
        let alias = t.get("alias")?.as_str()?;
        let family = alias.split('@').next()?.to_ascii_lowercase();
        Some(
            match family.as_str() {
                "al2" => "AL2",
                "al2023" => "AL2023",
                "bottlerocket" => "Bottlerocket",
                "windows2019" => "Windows2019",
                "windows2022" => "Windows2022",
                "windows2025" => "Windows2025",
                _ => return None,
            }
            .to_string(),
        )
    })
}

/// The family's mappings with the sizes of the pasted EC2NodeClass kept: the root device's
/// for the root (OS) volume, a wrongly named device's for the data volume (Bottlerocket's second
/// one), since renaming a device does not change what it must hold.
fn pasted_sizes(yaml: String, class: Option<&NodeClass>, wrong: &[String]) -> String {
    let Some(class) = class else { return yaml };
    let size = |pick: &dyn Fn(&str, Option<bool>) -> bool| {
        class
            .block_device_mappings
            .iter()
            .find(|m| pick(m.device_name.as_deref().unwrap_or_default(), m.root_volume))
            .and_then(|m| m.volume_size.clone())
    };
    let root = size(&|dev, root| root == Some(true) || dev == "/dev/xvda");
    let data = size(&|dev, _| dev != "/dev/xvda" && wrong.iter().any(|w| w == dev));
    let two = yaml.matches("volumeSize: ").count() > 1;
    // One volume: the root's size, else the renamed device's.
    let mut sizes = if two {
        vec![root, data]
    } else {
        vec![root.or(data)]
    }
    .into_iter();
    let mut out = String::new();
    for line in yaml.split_inclusive('\n') {
        match line.split_once("volumeSize: ") {
            Some((indent, _)) => match sizes.next().flatten() {
                Some(size) => out.push_str(&format!("{indent}volumeSize: {size}\n")),
                None => out.push_str(line),
            },
            None => out.push_str(line),
        }
    }
    out
}

/// `spec.blockDeviceMappings` for an AMI family, with the given minimum size.
fn mappings_yaml(family: Option<&str>, min_gb: Option<u64>) -> String {
    let family = family.unwrap_or("AL2023").to_ascii_lowercase();
    if family == "bottlerocket" {
        let data = min_gb.map_or(20, |n| n.max(20));
        let os = min_gb.map_or(4, |n| n.max(4));
        return format!(
            "spec:\n  blockDeviceMappings:\n    - deviceName: /dev/xvda   # Bottlerocket OS volume\n      ebs:\n        volumeSize: {os}Gi\n        volumeType: gp3\n        encrypted: true\n    - deviceName: /dev/xvdb   # Bottlerocket data volume (images, ephemeral storage)\n      ebs:\n        volumeSize: {data}Gi\n        volumeType: gp3\n        encrypted: true\n"
        );
    }
    let device = if family.starts_with("windows") || family == "ubuntu" {
        "/dev/sda1"
    } else {
        "/dev/xvda"
    };
    let size = min_gb.map_or(20, |n| n.max(20));
    format!(
        "spec:\n  blockDeviceMappings:\n    - deviceName: {device}   # root volume\n      ebs:\n        volumeSize: {size}Gi\n        volumeType: gp3\n        encrypted: true\n"
    )
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn the_nodeclass_is_looked_up_through_the_nodepool_the_failed_claim_is_deleted() {
        let log = r#"{"level":"INFO","time":"2026-12-06T23:01:02.161Z","logger":"controller","message":"created nodeclaim","controller":"provisioner","NodePool":{"name":"etl"},"NodeClaim":{"name":"etl-r5tzq"}}
{"level":"ERROR","time":"2026-12-06T23:01:03.377Z","logger":"controller","message":"failed launching nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"etl-r5tzq"},"error":"creating instance, with fleet error(s), InvalidBlockDeviceMapping: Volume of size 8GB is smaller than snapshot 'snap-0c1d2e3f4a5b6c7d8', expect size>= 20GB"}
"#;
        let d = &crate::testing::check_only("KW301", log).diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("etl"));
        assert!(
            d.remediation[0].text.contains(
                "kubectl edit ec2nodeclass \"$(kubectl get nodepool etl -o jsonpath='{.spec.template.spec.nodeClassRef.name}')\""
            ),
            "{}",
            d.remediation[0].text
        );
    }

    #[test]
    fn every_form() {
        for text in [
            "2022-01-19T18:22:23.366Z ERROR controller.provisioning Could not launch node, launching instances, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/xvda; ...",
            "karpenter-785fc5c56d-qp4vp controller 2023-02-17T18:07:57.495Z\tERROR\tcontroller.provisioner\tlaunching machine, creating cloud provider instance, creating instance, with fleet error(s), InvalidBlockDeviceMapping: Snapshot snap-0a91e509380d5a3bc is not available for use. Its current state is pending\t{\"commit\": \"8c27519-dirty\"}",
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-b8k2n"},"error":"launching nodeclaim, creating instance, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/xvda"}"#,
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"x-1"},"error":"launching nodeclaim, creating instance, creating nodeclaim, InvalidBlockDeviceMapping: Invalid device name /dev/sdx (aws-error-code=UnfulfillableCapacity, aws-operation-name=CreateFleet, aws-request-id=2, aws-service-name=EC2, aws-status-code=200)"}"#,
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclass","EC2NodeClass":{"name":"br"},"error":"validating ec2:RunInstances authorization, operation error EC2: RunInstances, https response error StatusCode: 400, RequestID: 4c, api error InvalidBlockDeviceMapping: Volume of size 2GB is smaller than snapshot 'snap-0f59de5aef3442431', expect size>= 4GB"}"#,
        ] {
            assert_eq!(ids(&check_only("KW301", text)), ["KW301"], "{text}");
        }
    }

    #[test]
    fn names_nodeclass_and_size() {
        let report = check_only(
            "KW301",
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclass","EC2NodeClass":{"name":"node-nvidia-gpu"},"error":"validating ec2:RunInstances authorization, operation error EC2: RunInstances, https response error StatusCode: 400, RequestID: 9f, api error InvalidBlockDeviceMapping: Volume of size 2GB is smaller than snapshot 'snap-0a8454f13dc7cb861', expect size\u003e= 20GB (aws-error-code=InvalidBlockDeviceMapping, aws-operation-name=RunInstances, aws-request-id=9f, aws-service-name=EC2, aws-status-code=400)"}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("EC2NodeClass node-nvidia-gpu"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("dry-run validation"), "{}", d.summary);
        assert!(
            d.summary
                .contains("Volume of size 2GB is smaller than snapshot"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("aws-error-code"), "{}", d.summary);
        assert!(d.remediation.iter().any(|r| r
            .yaml
            .as_deref()
            .is_some_and(|y| y.contains("volumeSize: 20Gi"))));
    }

    #[test]
    fn device_name_names_nodeclaim() {
        let report = check_only(
            "KW301",
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-b8k2n"},"error":"launching nodeclaim, creating instance, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/xvda"}"#,
        );
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("default-b8k2n"), "{}", d.summary);
        assert!(d.remediation[0].text.contains("/dev/xvda"));
    }

    /// A pre-v0.32 error: the mappings are the Machine's AWSNodeTemplate's, looked up through
    /// its `machineTemplateRef`.
    #[test]
    fn a_machine_gets_awsnodetemplate_commands() {
        let text = "2023-05-09T14:12:40.882Z\tERROR\tcontroller\tReconciler error\t{\"commit\": \"d7e22b1\", \"controller\": \"machine.lifecycle\", \"Machine\": {\"name\":\"default-5kq2w\"}, \"error\": \"creating machine, creating instance, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/sda1\"}";
        let report = check_only("KW301", text);
        let d = &report.diagnoses[0];
        let all: String = d
            .remediation
            .iter()
            .map(|r| format!("{} {}\n", r.text, r.command.as_deref().unwrap_or("")))
            .collect();
        assert!(
            !all.contains("ec2nodeclass") && !all.contains("EC2NodeClass"),
            "{all}"
        );
        assert!(
            all.contains("kubectl get awsnodetemplate \"$(kubectl get machines.karpenter.sh default-5kq2w -o jsonpath='{.spec.machineTemplateRef.name}')\""),
            "{all}"
        );
        assert!(d.summary.contains("Machine default-5kq2w"), "{}", d.summary);
    }

    /// The device-name hint lists only the AMI families the user's release had: no AL2023
    /// (v0.35+) for an AWSNodeTemplate, and no Windows (v0.29+) before Machines.
    #[test]
    fn device_name_hint_follows_the_era() {
        let hint = |text: &str| {
            let d = &check_only("KW301", text).diagnoses[0];
            d.remediation[0].text.clone()
        };
        let v02x = hint("2022-01-19T18:22:23.366Z ERROR controller.provisioning Could not launch node, launching instances, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/sdx");
        assert!(
            v02x.contains(": AL2 `/dev/xvda`;")
                && !v02x.contains("AL2023")
                && !v02x.contains("Windows"),
            "{v02x}"
        );
        let v031 = hint("2023-09-18T06:41:02.117Z\tERROR\tcontroller.provisioner\tlaunching machine, creating cloud provider instance, creating instance, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/sdx\t{\"commit\": \"322822a\", \"machine\": \"default-5kq2w\"}");
        assert!(
            !v031.contains("AL2023") && v031.contains("Windows and Ubuntu `/dev/sda1`"),
            "{v031}"
        );
        let v1 = hint(
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-b8k2n"},"error":"launching nodeclaim, creating instance, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/sdx"}"#,
        );
        assert!(v1.contains("AL2/AL2023 `/dev/xvda`"), "{v1}");
    }

    /// EC2's duplicate-device text names the device without `/dev/`; the step says what is
    /// wrong, and the edit goes through the NodeClaim when the class is not named.
    #[test]
    fn duplicate_device_is_named() {
        let d = &check_only(
            "KW301",
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"etl-5qz8w"},"error":"launching nodeclaim, creating instance, InvalidBlockDeviceMapping: The device 'xvda' is used in more than one block-device mapping (aws-error-code=InvalidBlockDeviceMapping, aws-operation-name=CreateFleet, aws-request-id=4c1d, aws-service-name=EC2, aws-status-code=400)"}"#,
        )
        .diagnoses[0];
        let first = &d.remediation[0].text;
        assert!(
            first.contains("Device /dev/xvda appears in more than one mapping"),
            "{first}"
        );
        assert!(
            first.contains("kubectl edit ec2nodeclass \"$(kubectl get nodeclaim etl-5qz8w"),
            "{first}"
        );
        assert!(!d.summary.contains("aws-error-code"), "{}", d.summary);
    }

    #[test]
    fn near_misses() {
        for text in [
            "launching nodeclaim, creating instance, with fleet error(s), InvalidParameterValue: Value (x) for parameter blockDeviceMapping is invalid",
            "blockDeviceMappings:\n  - deviceName: /dev/xvda",
        ] {
            assert!(ids(&check_only("KW301", text)).is_empty(), "{text}");
        }
    }
}
