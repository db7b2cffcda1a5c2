//! KW307 kms-key-denies-ebs.

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::tail_after;
use crate::rules::kw3xx::common::{
    claim_kind, instance_id, join_names, named, nodeclaim_of, nodeclass_ref, nodepool_of_nodeclaim,
    push_unique,
};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW307",
    slug: "kms-key-denies-ebs",
    title: "Instances terminate at launch: the KMS key of their encrypted volumes is unusable",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
EC2 starts the instance and terminates it within seconds because it cannot create its encrypted
EBS volumes: the KMS key does not let EC2 use it on the account's behalf, or the key is disabled
or pending deletion. Karpenter sees the instance vanish before the node registers, deletes the
NodeClaim and launches again: a loop of short-lived NodeClaims.

Signals: the instance's state reason `Client.InternalError: Client error on launch` (state
transition reason `Server.InternalError`), `Client.InvalidKMSKey.InvalidState` (`The KMS key
provided is in an incorrect state`), also the code `Client.InternalError` alone, as pasted
`aws ec2 describe-instances` output prints them (JSON, `--output text` `STATEREASON` rows,
`--output table`, `--query` columns); the instance ID is read from that output (its
`InstanceId`, the `INSTANCES` row, or the command's `--instance-ids`). Not `Server.InternalError`
alone, nor the other state reasons (`Client.UserInitiatedShutdown`,
`Server.SpotInstanceTermination`...). Inferred (medium confidence): NodeClaims launched and then
garbage-collected or terminated before registering (`garbage collecting nodeclaim with no
cloudprovider representation`, interruption `instance_terminated`) while the EC2NodeClass
`blockDeviceMappings` set `encrypted: true` with a `kmsKeyID`. Before v0.32 the same holds for
Machines (`garbage collecting machine with no cloudprovider representation`) and an
AWSNodeTemplate's `blockDeviceMappings`. An AWSNodeTemplate with a custom launch template
(`launchTemplate: <name>`) hides the volumes and their key from Karpenter: short-lived Machines
with one are inferred with low confidence, and the fix reads the launch template.
A `kmsKeyID` that is an alias (`alias/<name>`, `arn:...:alias/<name>`) is resolved to the key it
names when the input shows it (`aws kms list-aliases` `TargetKeyId`, `aws kms describe-key
--key-id <alias>`, with its `KeyState`): key policies and `enable-key` take the key, not the alias.

## Why it happens
EBS calls KMS (`CreateGrant`, `GenerateDataKeyWithoutPlaintext`, `Decrypt`) through EC2 as the
principal that launched the instance. A customer-managed key whose policy names only some roles,
or lacks the `kms:ViaService` grant for EC2, refuses it; so does a disabled key. A custom AMI
whose snapshots are encrypted with such a key fails the same way.

## How to fix
Let the account use the key through EC2, as the EBS documentation recommends: a key policy
statement with `kms:Encrypt`, `kms:Decrypt`, `kms:ReEncrypt*`, `kms:GenerateDataKey*`,
`kms:CreateGrant`, `kms:DescribeKey` for principal `*` under the conditions `kms:ViaService` =
`ec2.<region>.amazonaws.com` and `kms:CallerAccount` = the account, rather than naming one role.
Re-enable the key (or cancel its deletion) if it is not `Enabled`. With a custom launch
template the key is in the template's block device mappings (`aws ec2
describe-launch-template-versions --launch-template-name <name>`): fix that key's policy, or
give the template a version with a key EC2 may use; Karpenter never edits it.
"#,
};

const SIGNALS: &[&str] = &[
    "client error on launch",
    "client.internalerror",
    "invalidkmskey",
    "the kms key provided is in an incorrect state",
    "garbage collecting nodeclaim with no cloudprovider representation",
    // Before v0.32 (v1alpha5 Machines).
    "garbage collecting machine with no cloudprovider representation",
    "kmskeyid",
    // A custom launch template (AWSNodeTemplate `launchTemplate:`, pre-v0.32).
    "launchtemplate",
    // Lifecycle lines read for the instance, the NodePool and whether the node registered.
    "created nodeclaim",
    "launched nodeclaim",
    "registered nodeclaim",
    "launched machine",
    "registered machine",
    "instance_terminated",
];

fn is_strong(text: &str) -> bool {
    contains_ignore_ascii_case(text, "Client error on launch")
        // The state reason code alone (`--query '...StateReason.Code'`, a table cell); its
        // `Server.InternalError` sibling is an AWS-side failure, not this.
        || contains_ignore_ascii_case(text, "Client.InternalError")
        || contains_ignore_ascii_case(text, "InvalidKMSKey")
        || contains_ignore_ascii_case(text, "The KMS key provided is in an incorrect state")
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let strong: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| is_strong(&m.text))
        .collect();
    let short_lived = short_lived_nodeclaims(facts);
    let keys = kms_keys(facts);
    let templates = launch_templates(facts);
    // The pasted `kmsKeyID:` lines: evidence for the inference.
    let key_lines: Vec<&Message> = if facts.nodeclasses.is_empty() {
        facts.messages_containing("kmsKeyID").collect()
    } else {
        Vec::new()
    };
    // The same line of an EC2NodeClass read as an object.
    let key_evidence: Vec<Evidence> = facts
        .nodeclasses
        .iter()
        .flat_map(|nc| &nc.block_device_mappings)
        .filter(|b| b.encrypted == Some(true))
        .filter_map(|b| b.kms_key_evidence.clone())
        .collect();
    let inferred =
        strong.is_empty() && !short_lived.is_empty() && (!keys.is_empty() || !templates.is_empty());
    if strong.is_empty() && !inferred {
        return Vec::new();
    }
    // The `State transition reason: Server.InternalError` line belongs with its message line.
    let companions: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| {
            contains_ignore_ascii_case(&m.text, "State transition reason")
                && contains_ignore_ascii_case(&m.text, "InternalError")
                && !is_strong(&m.text)
        })
        .collect();
    let mut nodeclaims: Vec<String> = short_lived.iter().map(|(n, _)| n.clone()).collect();
    for m in &strong {
        if let Some(n) = nodeclaim_of(facts, m) {
            push_unique(&mut nodeclaims, n);
        }
    }
    let mut instances: Vec<String> = Vec::new();
    // Where pasted `aws ec2 describe-instances` output names the instance a state reason
    // belongs to (its `InstanceId` above it, or the command's `--instance-ids`).
    let mut id_evidence: Vec<Evidence> = Vec::new();
    for m in &strong {
        if instance_id(&m.text).is_none() {
            if let Some((i, e)) = instance_above(facts, m) {
                push_unique(&mut instances, i);
                if !id_evidence.contains(&e) {
                    id_evidence.push(e);
                }
            }
        }
    }
    for m in strong
        .iter()
        .chain(short_lived.iter().flat_map(|(_, ms)| ms.iter()))
    {
        if let Some(i) = instance_id(&m.text) {
            push_unique(&mut instances, i);
        }
    }
    for r in &facts.logs {
        // v0.31 and earlier log a Machine as `"machine": "<name>"`.
        if ["NodeClaim", "machine", "Machine"]
            .iter()
            .any(|k| r.field_name(k).is_some_and(|n| nodeclaims.contains(&n)))
        {
            if let Some(i) = r
                .fields
                .get("provider-id")
                .and_then(|v| v.as_str())
                .and_then(instance_id)
            {
                push_unique(&mut instances, i);
            }
        }
    }
    // A NodeClaim the input shows (its provider ID) on one of those instances is the one lost.
    for c in &facts.nodeclaims {
        if c.provider_id
            .as_deref()
            .and_then(instance_id)
            .is_some_and(|i| instances.contains(&i))
        {
            push_unique(&mut nodeclaims, c.meta.name.clone());
        }
    }
    // A pasted `aws ec2 describe-instances` names the Karpenter objects in the instance's tags.
    let tagged = |key: &str| {
        strong
            .iter()
            .find_map(|m| described_tag(facts, &m.evidence.source, key))
    };
    if nodeclaims.is_empty() {
        if let Some(n) = tagged("karpenter.sh/nodeclaim") {
            nodeclaims.push(n);
        }
    }
    // The instance's tag, else the nodeClassRef of its NodeClaim.
    let tagged_nodeclass = tagged("karpenter.k8s.aws/ec2nodeclass").or_else(|| {
        nodeclaims
            .iter()
            .find_map(|n| crate::rules::kw3xx::common::nodeclass_of_nodeclaim(facts, n))
    });
    let nodepool = nodeclaims
        .iter()
        .find_map(|n| nodepool_of_nodeclaim(facts, n))
        .or_else(|| tagged("karpenter.sh/nodepool"))
        // A v0.31 `launched machine` line names its Provisioner.
        .or_else(|| {
            facts.logs.iter().find_map(|r| {
                let named = ["machine", "Machine"]
                    .iter()
                    .any(|k| r.field_name(k).is_some_and(|n| nodeclaims.contains(&n)));
                named.then(|| r.field_name("provisioner")).flatten()
            })
        });
    let key = keys.first().map(|(k, _)| k.clone());
    // An alias names a key; the key policy, enable-key and cancel-key-deletion take the key.
    let resolved = key.as_deref().and_then(|k| resolve_alias(facts, k));
    let unresolved_alias = key.as_deref().and_then(alias_name).is_some() && resolved.is_none();
    let key_label = |k: &str| match &resolved {
        Some(r) => format!("{k}, an alias of key {}", r.key),
        None => k.to_string(),
    };
    let unusable_state = resolved
        .as_ref()
        .and_then(|r| r.state.clone())
        .filter(|s| !s.eq_ignore_ascii_case("Enabled"));
    let nodeclass = keys.iter().find_map(|(_, nc)| nc.clone());
    // Before v0.32: Machines, Provisioners and AWSNodeTemplates (the only kind with a custom
    // launch template).
    let legacy = !templates.is_empty()
        || facts.nodeclaims.iter().any(|c| c.is_machine)
        || facts.nodeclasses.iter().any(|c| c.is_aws_node_template)
        || facts.nodepools.iter().any(|p| p.is_provisioner)
        || nodeclaims.iter().any(|n| claim_kind(facts, n) == "Machine")
        // A v0.31 log line names its machine and provisioner.
        || facts
            .logs
            .iter()
            .any(|r| r.fields.contains_key("machine") || r.fields.contains_key("provisioner"));
    let claim = match nodeclaims.first() {
        Some(n) => claim_kind(facts, n),
        None if legacy => "Machine",
        None => "NodeClaim",
    };
    let class_kind = if legacy {
        "AWSNodeTemplate"
    } else {
        "EC2NodeClass"
    };
    let class_label = |name: Option<&str>| match name {
        Some(n) => {
            let r = nodeclass_ref(facts, n);
            format!("{} {n}", if legacy { class_kind } else { r.kind.as_str() })
        }
        None => format!("the {class_kind}"),
    };
    let template = templates.first();
    let key_state = unusable_state.is_some()
        || strong.iter().any(|m| {
            contains_ignore_ascii_case(&m.text, "InvalidKMSKey")
                || contains_ignore_ascii_case(&m.text, "incorrect state")
        });
    let reason_code = strong.iter().find_map(|m| state_reason_code(&m.text));
    let mut summary = String::new();
    if inferred {
        summary.push_str(&format!(
            "Inferred from {} ending before {} node registered, while ",
            named(claim, &nodeclaims),
            if nodeclaims.len() > 1 { "their" } else { "its" },
        ));
        match (&key, template) {
            (Some(k), _) => summary.push_str(&format!(
                "{} encrypts its volumes with KMS key {}: ",
                class_label(nodeclass.as_deref()),
                key_label(k)
            )),
            (None, Some(t)) => summary.push_str(&format!(
                "{} launches with custom launch template {}, whose volumes and KMS key Karpenter cannot see: ",
                class_label(t.nodeclass.as_deref()),
                t.name
            )),
            (None, None) => {}
        }
    }
    summary.push_str(&format!(
        "EC2 terminates the instance{} right after launch because it cannot create {} encrypted EBS volumes{}",
        match instances.len() {
            0 => String::new(),
            1 => format!(" {}", instances[0]),
            _ => format!("s {}", join_names(&instances)),
        },
        if instances.len() > 1 { "their" } else { "its" },
        if key_state {
            format!(
                "{}: the KMS key is not in a usable state ({})",
                reason_code.map_or(String::new(), |c| format!(" ({c})")),
                unusable_state.as_deref().map_or_else(
                    || "disabled or pending deletion".to_string(),
                    |s| format!("describe-key shows KeyState {s}")
                )
            )
        } else if inferred && key.is_none() {
            ": if the launch template encrypts them with a customer-managed KMS key, that key's policy most likely does not let EC2 use it for the account".to_string()
        } else if inferred {
            ": the KMS key's policy most likely does not let EC2 use it for the account".to_string()
        } else {
            " (Client.InternalError: Client error on launch): the KMS key's policy does not let EC2 use it for the account".to_string()
        }
    ));
    if !nodeclaims.is_empty() && !inferred {
        summary.push_str(&format!(
            ". Karpenter loses {} before {} and launches again",
            named(claim, &nodeclaims),
            if nodeclaims.len() > 1 {
                "they register"
            } else {
                "it registers"
            }
        ));
    }
    if let (Some(k), false) = (&key, inferred) {
        summary.push_str(&format!(" (volumes encrypted with {})", key_label(k)));
    }
    summary.push('.');
    if let (Some(t), false) = (template, inferred) {
        summary.push_str(&format!(
            " {} launches with custom launch template {}: the volumes and their KMS key come from that template, which Karpenter neither creates nor reads.",
            capitalised_label(&class_label(t.nodeclass.as_deref())),
            t.name
        ));
    }
    let key_id = match (&resolved, unresolved_alias) {
        (Some(r), _) => r.key.clone(),
        // Set by the describe-key step below.
        (None, true) => "\"$KEY\"".to_string(),
        (None, false) => key
            .clone()
            .unwrap_or_else(|| "<kms-key-id-or-arn>".to_string()),
    };
    let key_arn = resolved.as_ref().map(|r| r.key.as_str()).or(key.as_deref());
    let region = region_of(facts, key_arn)
        .or_else(|| described_region(facts))
        .unwrap_or_else(|| "<region>".to_string());
    let account = key_arn
        .and_then(|k| k.split(':').nth(4).map(str::to_string))
        .filter(|a| a.len() == 12)
        .unwrap_or_else(|| "<account-id>".to_string());
    let mut steps = Vec::new();
    if !instances.is_empty() {
        steps.push(Remediation::command(
            format!(
                "Confirm on the terminated instance{} (EC2 keeps {} visible for about an hour):",
                if instances.len() > 1 { "s" } else { "" },
                if instances.len() > 1 { "them" } else { "it" },
            ),
            format!(
                "aws ec2 describe-instances --instance-ids {} --query 'Reservations[].Instances[].[InstanceId,StateReason.Code,StateReason.Message]' --output text",
                instances.join(" ")
            ),
        ));
    }
    if let Some(t) = template {
        steps.push(Remediation::command(
            format!(
                "The volumes come from launch template {}, which Karpenter does not read: find the key in its block device mappings (`Encrypted` True without a `KmsKeyId` means the account's default EBS key):",
                t.name
            ),
            format!(
                "aws ec2 describe-launch-template-versions --launch-template-name {} --versions '$Default' '$Latest' --query 'LaunchTemplateVersions[].[VersionNumber,LaunchTemplateData.BlockDeviceMappings[].[DeviceName,Ebs.Encrypted,Ebs.KmsKeyId]]' --output text; aws ec2 get-ebs-default-kms-key-id --query KmsKeyId --output text",
                t.name
            ),
        ));
    } else if key.is_none() && legacy {
        steps.push(Remediation::command(
            "Find the key: the blockDeviceMappings kmsKeyID of the AWSNodeTemplate the Provisioner's providerRef names, else the account's default EBS key (used for `encrypted: true` without a kmsKeyID):",
            "kubectl get provisioners -o jsonpath='{range .items[*]}{.metadata.name}: {.spec.providerRef.name}{\"\\n\"}{end}'; kubectl get awsnodetemplates -o jsonpath='{range .items[*]}{.metadata.name}: {.spec.blockDeviceMappings[*].ebs.kmsKeyID}{\"\\n\"}{end}'; aws ec2 get-ebs-default-kms-key-id --query KmsKeyId --output text",
        ));
    } else if let (None, Some(nc)) = (&key, &tagged_nodeclass) {
        steps.push(Remediation::command(
            format!("Find the key: EC2NodeClass {nc}'s blockDeviceMappings kmsKeyID, else the account's default EBS key (used for `encrypted: true` without a kmsKeyID):"),
            format!("kubectl get ec2nodeclass {nc} -o jsonpath='{{.spec.blockDeviceMappings[*].ebs.kmsKeyID}}{{\"\\n\"}}'; aws ec2 get-ebs-default-kms-key-id --query KmsKeyId --output text"),
        ));
    } else if key.is_none() {
        steps.push(Remediation::command(
            "Find the key: the EC2NodeClass's blockDeviceMappings kmsKeyID, else the account's default EBS key (used for `encrypted: true` without a kmsKeyID):",
            "kubectl get ec2nodeclasses -o jsonpath='{range .items[*]}{.metadata.name}: {.spec.blockDeviceMappings[*].ebs.kmsKeyID}{\"\\n\"}{end}'; aws ec2 get-ebs-default-kms-key-id --query KmsKeyId --output text",
        ));
    }
    match (&key, unresolved_alias) {
        (Some(alias), true) => steps.push(Remediation::command(
            format!("{alias} is an alias: the key policy and enable-key take the key it names, not the alias. Resolve it, then check the key's state and policy:"),
            format!("KEY=$(aws kms describe-key --key-id {alias} --query KeyMetadata.Arn --output text); aws kms describe-key --key-id {key_id} --query 'KeyMetadata.[KeyState,KeyManager]' --output text; aws kms get-key-policy --key-id {key_id} --policy-name default --output text"),
        )),
        _ => steps.push(Remediation::command(
            "Check the key's state and policy:",
            format!("aws kms describe-key --key-id {key_id} --query 'KeyMetadata.[KeyState,KeyManager]' --output text; aws kms get-key-policy --key-id {key_id} --policy-name default --output text"),
        )),
    }
    steps.push(Remediation::yaml(
        "Add this statement to the key's existing policy (put-key-policy replaces the whole policy: merge it into what get-key-policy printed, then `aws kms put-key-policy --key-id ... --policy-name default --policy file://policy.json`). It lets any principal of the account use the key through EC2, which is what EBS needs, instead of naming one role:",
        format!(
            "{{\n  \"Sid\": \"AllowEBSThroughEC2ForThisAccount\",\n  \"Effect\": \"Allow\",\n  \"Principal\": {{ \"AWS\": \"*\" }},\n  \"Action\": [\n    \"kms:Encrypt\",\n    \"kms:Decrypt\",\n    \"kms:ReEncrypt*\",\n    \"kms:GenerateDataKey*\",\n    \"kms:CreateGrant\",\n    \"kms:DescribeKey\"\n  ],\n  \"Resource\": \"*\",\n  \"Condition\": {{\n    \"StringEquals\": {{\n      \"kms:ViaService\": \"ec2.{region}.amazonaws.com\",\n      \"kms:CallerAccount\": \"{account}\"\n    }}\n  }}\n}}\n"
        ),
    ));
    if key_state {
        steps.push(Remediation::command(
            "Re-enable the key, or cancel its scheduled deletion:",
            format!("aws kms enable-key --key-id {key_id}; aws kms cancel-key-deletion --key-id {key_id}"),
        ));
    }
    if let Some(t) = template {
        steps.push(Remediation::text(format!(
            "To change the key rather than its policy, do it in launch template {}: a new version whose block device mappings name a key EC2 may use, made the version your instances launch with. Karpenter never edits a custom launch template, and the {} cannot override its volumes.",
            t.name, class_kind
        )));
    }
    steps.push(Remediation::text(format!(
        "If the {class_kind} uses a custom AMI whose snapshots are encrypted with a customer-managed key, that key needs the same statement."
    )));
    let objects: Vec<ObjectRef> = nodeclaims
        .iter()
        .map(|n| crate::rules::kw3xx::common::claim_ref(facts, n))
        .collect();
    let ended: Vec<(ObjectRef, &Message)> = short_lived
        .iter()
        .flat_map(|(n, ms)| {
            let o = crate::rules::kw3xx::common::claim_ref(facts, n);
            ms.iter().map(move |m| (o.clone(), *m))
        })
        .collect();
    let mut d = Diagnosis::new(&META, summary)
        .with_objects(&objects)
        .with_node_pool(nodepool.as_deref())
        .with_messages(strong.iter().copied())
        .with_messages(companions.iter().copied())
        // One line per NodeClaim (or Machine): their garbage-collection lines read the same.
        .with_messages_of(ended.iter().map(|(o, m)| (Some(o), *m)))
        .with_messages(key_lines.iter().copied())
        .with_evidence(key_evidence)
        .with_messages(templates.iter().filter_map(|t| t.message))
        .with_evidence(id_evidence)
        .with_messages(resolved.iter().flat_map(|r| r.messages.iter().copied()))
        .with_evidence(resolved.map(|r| r.evidence).unwrap_or_default())
        .with_related(&["KW302"])
        .with_remediation(steps);
    if inferred {
        // A custom launch template alone only says the volumes may be encrypted.
        d = d.with_confidence(if key.is_some() {
            Confidence::Medium
        } else {
            Confidence::Low
        });
    }
    vec![d]
}

/// NodeClaims the input shows ending before registering: garbage-collected with no cloud
/// provider representation, or terminated by an `instance_terminated` interruption, and never
/// `registered nodeclaim`. With the messages that show it.
fn short_lived_nodeclaims(facts: &Facts) -> Vec<(String, Vec<&Message>)> {
    let mut out: Vec<(String, Vec<&Message>)> = Vec::new();
    for m in &facts.messages {
        let t = &m.text;
        let ended = contains_ignore_ascii_case(
            t,
            "garbage collecting nodeclaim with no cloudprovider representation",
        ) || contains_ignore_ascii_case(
            t,
            "garbage collecting machine with no cloudprovider representation",
        ) || (contains_ignore_ascii_case(t, "interruption message")
            && crate::rules::kw2xx::scheduling::record_of(facts, m)
                .and_then(|r| {
                    r.fields
                        .get("messageKind")
                        .and_then(|v| v.as_str())
                        .map(str::to_string)
                })
                .is_some_and(|k| k == "instance_terminated"));
        if !ended {
            continue;
        }
        let Some(nc) = nodeclaim_of(facts, m) else {
            continue;
        };
        let registered = facts.logs.iter().any(|r| {
            (r.message.eq_ignore_ascii_case("registered nodeclaim") && r.names("NodeClaim", &nc))
                || (r.message.eq_ignore_ascii_case("registered machine")
                    && (r.names("machine", &nc) || r.names("Machine", &nc)))
        });
        if registered {
            continue;
        }
        match out.iter_mut().find(|(n, _)| *n == nc) {
            Some((_, ms)) => ms.push(m),
            None => out.push((nc, vec![m])),
        }
    }
    out
}

/// KMS keys the EC2NodeClasses encrypt volumes with: typed `blockDeviceMappings[].ebs.kmsKeyID`
/// (with `encrypted: true`), else a `kmsKeyID:` line of a pasted EC2NodeClass.
fn kms_keys(facts: &Facts) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = Vec::new();
    for nc in &facts.nodeclasses {
        for bdm in &nc.block_device_mappings {
            if let (Some(true), Some(k)) = (bdm.encrypted, &bdm.kms_key_id) {
                if !out.iter().any(|(x, _)| x == k) {
                    out.push((k.clone(), Some(nc.meta.name.clone())));
                }
            }
        }
    }
    if out.is_empty() {
        for m in &facts.messages {
            let Some(rest) = tail_after(&m.text, "kmsKeyID") else {
                continue;
            };
            let v: String = rest
                .trim_start_matches(['"', ':', ' ', '='])
                .chars()
                .take_while(|c| !matches!(c, '"' | ',' | ' ' | '}' | '\''))
                .collect();
            if !v.is_empty() && !out.iter().any(|(x, _)| *x == v) {
                out.push((v, None));
            }
        }
    }
    out
}

/// A custom launch template Karpenter launches with: an AWSNodeTemplate's `launchTemplate`
/// (typed), else a pasted `launchTemplate: <name>` / `launchTemplateName: <name>` /
/// `Launch Template: <name>` line. Karpenter's own generated templates
/// (`karpenter.k8s.aws/...`) are not custom.
struct LaunchTemplate<'a> {
    name: String,
    nodeclass: Option<String>,
    message: Option<&'a Message>,
}

fn launch_templates(facts: &Facts) -> Vec<LaunchTemplate<'_>> {
    let custom = |name: &str| {
        !name.is_empty()
            && !name.starts_with("karpenter.k8s.aws/")
            && !name.starts_with('{')
            && !name.starts_with('[')
    };
    let mut out: Vec<LaunchTemplate<'_>> = Vec::new();
    for nc in &facts.nodeclasses {
        if let Some(name) = nc.launch_template.as_deref().filter(|n| custom(n)) {
            out.push(LaunchTemplate {
                name: name.to_string(),
                nodeclass: Some(nc.meta.name.clone()),
                message: None,
            });
        }
    }
    if !out.is_empty() {
        return out;
    }
    for m in &facts.messages {
        let line = m.text.trim().trim_start_matches('"');
        let Some(rest) = ["launchTemplateName", "launchTemplate", "Launch Template"]
            .iter()
            .find_map(|k| line.strip_prefix(k))
        else {
            continue;
        };
        let Some(value) = rest.trim_start_matches('"').trim_start().strip_prefix(':') else {
            continue;
        };
        let name = value
            .trim()
            .trim_end_matches(',')
            .trim_matches(|c| c == '"' || c == '\'');
        if custom(name) && !out.iter().any(|t| t.name == name) {
            out.push(LaunchTemplate {
                name: name.to_string(),
                nodeclass: None,
                message: Some(m),
            });
        }
    }
    out
}

/// `AWSNodeTemplate legacy`, `the AWSNodeTemplate` -> `The AWSNodeTemplate`.
fn capitalised_label(label: &str) -> String {
    match label.strip_prefix("the ") {
        Some(rest) => format!("The {rest}"),
        None => label.to_string(),
    }
}

/// The key a KMS alias names, when the input shows it: `aws kms list-aliases` (JSON
/// `"AliasName"`/`"AliasArn"` with the entry's `"TargetKeyId"`, or the text output's `ALIASES`
/// row) or `aws kms describe-key --key-id <alias>` (its `"Arn"` / `"KeyId"`, and `"KeyState"`).
struct ResolvedKey<'a> {
    /// The key ARN when the alias ARN or describe-key gives region and account, else its ID.
    key: String,
    /// `KeyState` as describe-key printed it (`Disabled`, `PendingDeletion`...).
    state: Option<String>,
    evidence: Vec<Evidence>,
    messages: Vec<&'a Message>,
}

/// `alias/<name>` of a key reference that is an alias (`alias/x`, `arn:...:alias/x`).
fn alias_name(key: &str) -> Option<&str> {
    let at = key.find("alias/")?;
    (at == 0 || key[..at].ends_with(':')).then(|| &key[at..])
}

/// A key ID (a UUID, or a multi-Region `mrk-` ID) in a word.
fn key_id_in(text: &str) -> Option<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .find(|w| {
            let uuid = w.len() == 36
                && w.split('-').map(str::len).eq([8, 4, 4, 4, 12])
                && w.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
            let mrk = w.len() == 36
                && w.starts_with("mrk-")
                && w[4..].chars().all(|c| c.is_ascii_hexdigit());
            uuid || mrk
        })
        .map(str::to_string)
}

/// Whether a text names the alias as a whole word (not `alias/ebs-prod-old` for `alias/ebs-prod`).
fn names_alias(text: &str, alias: &str) -> bool {
    let mut rest = text;
    while let Some(at) = rest.find(alias) {
        let after = rest[at + alias.len()..].chars().next();
        if !after.is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '/')) {
            return true;
        }
        rest = &rest[at + alias.len()..];
    }
    false
}

fn resolve_alias<'a>(facts: &'a Facts, key: &str) -> Option<ResolvedKey<'a>> {
    let alias = alias_name(key)?;
    let mut arn_prefix = key
        .strip_suffix(alias)
        .filter(|p| p.starts_with("arn:"))
        .map(str::to_string);
    let in_source = |source: &str| {
        let mut lines: Vec<&Message> = facts
            .messages
            .iter()
            .filter(|m| m.evidence.source == source)
            .collect();
        lines.sort_by_key(|m| m.evidence.line);
        lines
    };
    let mut found: Option<(String, Vec<&Message>, Vec<Evidence>)> = None;
    let mut state: Option<String> = None;
    // list-aliases, JSON: the entry's lines between two `AliasName` lines.
    for m in facts.messages.iter().filter(|m| {
        (contains_ignore_ascii_case(&m.text, "\"AliasName\"")
            || contains_ignore_ascii_case(&m.text, "\"AliasArn\""))
            && names_alias(&m.text, alias)
    }) {
        let lines = in_source(&m.evidence.source);
        let at = lines.iter().position(|o| std::ptr::eq(*o, m))?;
        let entry = |o: &&&Message| {
            !contains_ignore_ascii_case(&o.text, "\"AliasName\"") || std::ptr::eq(**o, m)
        };
        let after = lines[at..]
            .iter()
            .take(6)
            .take_while(|o| entry(o) && !o.text.trim_start().starts_with('}'));
        let before = lines[..at]
            .iter()
            .rev()
            .take(6)
            .take_while(|o| entry(o) && !o.text.trim_start().starts_with('{'));
        let entry: Vec<&&Message> = after.chain(before).collect();
        if let Some(t) = entry
            .iter()
            .find(|o| contains_ignore_ascii_case(&o.text, "\"TargetKeyId\""))
        {
            if let Some(id) = key_id_in(&t.text) {
                // The entry's `AliasArn` gives region and account for the key's ARN.
                if arn_prefix.is_none() {
                    arn_prefix = entry.iter().find_map(|o| {
                        let at = o.text.find("arn:")?;
                        let arn = &o.text[at..];
                        let end = arn.find(alias)?;
                        Some(arn[..end].to_string())
                    });
                }
                found = Some((id, vec![m, *t], Vec::new()));
                break;
            }
        }
    }
    // list-aliases, text: `ALIASES  <alias arn>  alias/<name>  <target key id>  ...`.
    if found.is_none() {
        if let Some((m, id)) = facts.messages.iter().find_map(|m| {
            let t = m.text.trim_start();
            (t.starts_with("ALIASES") && names_alias(t, alias))
                .then(|| key_id_in(t).map(|id| (m, id)))
                .flatten()
        }) {
            found = Some((id, vec![m], Vec::new()));
        }
    }
    // describe-key --key-id <alias>: the output below the command, up to the next prompt.
    let describe_lines = facts
        .commands
        .iter()
        .filter(|c| {
            c.tool == "aws"
                && contains_ignore_ascii_case(&c.evidence.text, "describe-key")
                && names_alias(&c.evidence.text, alias)
        })
        .map(|c| {
            (
                c.evidence.source.clone(),
                c.evidence.line,
                c.evidence.clone(),
            )
        });
    for (source, line, command) in describe_lines {
        // The output ends at the next prompt line.
        let next = facts
            .commands
            .iter()
            .filter(|c| c.evidence.source == source && c.evidence.line > line)
            .map(|c| c.evidence.line)
            .min()
            .unwrap_or(usize::MAX);
        let output: Vec<&Message> = in_source(&source)
            .into_iter()
            .filter(|o| o.evidence.line > line && o.evidence.line < next)
            .take(40)
            .collect();
        let arn = output.iter().find_map(|o| {
            (contains_ignore_ascii_case(&o.text, "\"Arn\"")
                || o.text.trim_start().starts_with("KEYMETADATA"))
            .then(|| {
                o.text
                    .split(|c: char| c == '"' || c.is_whitespace())
                    .find(|w| w.starts_with("arn:") && w.contains(":key/"))
                    .map(|w| (w.to_string(), *o))
            })
            .flatten()
        });
        let id = output.iter().find_map(|o| {
            contains_ignore_ascii_case(&o.text, "\"KeyId\"")
                .then(|| key_id_in(&o.text).map(|id| (id, *o)))
                .flatten()
        });
        state = output.iter().find_map(|o| {
            let rest = tail_after(&o.text, "\"KeyState\"")?;
            let v: String = rest
                .trim_start_matches([':', ' ', '"'])
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            (!v.is_empty()).then_some(v)
        });
        let state_line = output
            .iter()
            .find(|o| contains_ignore_ascii_case(&o.text, "\"KeyState\""))
            .copied();
        if let Some((k, o)) = arn.or(id) {
            let mut ms = vec![o];
            ms.extend(state_line);
            found = Some((k, ms, vec![command]));
            break;
        }
    }
    let (id, messages, evidence) = found?;
    let key = match (&arn_prefix, id.starts_with("arn:")) {
        (_, true) => id,
        (Some(p), false) => format!("{p}key/{id}"),
        (None, false) => id,
    };
    Some(ResolvedKey {
        key,
        state,
        evidence,
        messages,
    })
}

/// The state reason code in a text: `Client.InvalidKMSKey.InvalidState`, `Client.InternalError`.
fn state_reason_code(text: &str) -> Option<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .find(|w| {
            w.starts_with("Client.")
                && (w.contains("InvalidKMSKey") || *w == "Client.InternalError")
        })
        .map(|w| w.trim_end_matches('.').to_string())
}

/// The instance a pasted `aws ec2 describe-instances` output shows above a state reason: the
/// nearest `InstanceId` line (JSON `"InstanceId": "i-..."`, table `| InstanceId | i-... |`), the
/// text output's `INSTANCES` row, or the command's `--instance-ids i-...`, in the same source.
fn instance_above(facts: &Facts, m: &Message) -> Option<(String, Evidence)> {
    let source = &m.evidence.source;
    let line = m.evidence.line;
    let lines = facts
        .messages
        .iter()
        .filter(|o| &o.evidence.source == source && o.evidence.line < line)
        .filter(|o| {
            let t = o.text.trim_start_matches(['|', ' ', '"']);
            contains_ignore_ascii_case(&o.text, "InstanceId")
                || t.starts_with("INSTANCES")
                || contains_ignore_ascii_case(&o.text, "--instance-id")
        })
        .filter_map(|o| Some((o.evidence.line, instance_id(&o.text)?, o.evidence.clone())));
    let commands = facts
        .commands
        .iter()
        .filter(|c| {
            c.tool == "aws"
                && &c.evidence.source == source
                && c.evidence.line < line
                && contains_ignore_ascii_case(&c.evidence.text, "--instance-id")
        })
        .filter_map(|c| {
            Some((
                c.evidence.line,
                instance_id(&c.evidence.text)?,
                c.evidence.clone(),
            ))
        });
    lines
        .chain(commands)
        .max_by_key(|(l, _, _)| *l)
        .map(|(_, i, e)| (i, e))
}

/// The value of an instance tag in pasted `aws ec2 describe-instances` output, in one source:
/// JSON `{"Key": "<key>", "Value": "<v>"}` (on one line, or `"Value"` on the line after), the
/// text output's `TAGS <key> <v>`, or the table's `|  <key>  |  <v>  |`.
fn described_tag(facts: &Facts, source: &str, key: &str) -> Option<String> {
    let lines: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| m.evidence.source == source)
        .collect();
    let json_key = format!("\"Key\": \"{key}\"");
    let json_value = |t: &str| {
        let rest = tail_after(t, "\"Value\": \"")?;
        let v: String = rest.chars().take_while(|c| *c != '"').collect();
        (!v.is_empty()).then_some(v)
    };
    lines.iter().enumerate().find_map(|(i, m)| {
        let t = m.text.trim();
        if contains_ignore_ascii_case(t, &json_key) {
            return json_value(t).or_else(|| {
                lines
                    .get(i + 1)
                    .filter(|n| n.evidence.line == m.evidence.line + 1)
                    .and_then(|n| json_value(&n.text))
            });
        }
        let words: Vec<&str> = t
            .split(|c: char| c.is_whitespace() || c == '|')
            .filter(|w| !w.is_empty())
            .collect();
        match words.as_slice() {
            ["TAGS", k, v] | [k, v] if *k == key => Some(v.to_string()),
            _ => None,
        }
    })
}

/// The region of a zone a pasted describe output shows (`"AvailabilityZone": "eu-west-1a"`,
/// the text output's `PLACEMENT` row, tab-separated).
fn described_region(facts: &Facts) -> Option<String> {
    facts
        .messages_containing_any(&["AvailabilityZone", "PLACEMENT\t"])
        .find_map(|m| {
            m.text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .find_map(|w| {
                    let region = w.trim_end_matches(|c: char| c.is_ascii_lowercase());
                    let parts: Vec<&str> = region.split('-').collect();
                    (region.len() < w.len()
                        && parts.len() >= 3
                        && parts
                            .last()
                            .is_some_and(|p| p.chars().all(|c| c.is_ascii_digit())))
                    .then(|| region.to_string())
                })
        })
}

/// The region: from the key's ARN, else from a zone the input names.
fn region_of(facts: &Facts, key: Option<&str>) -> Option<String> {
    if let Some(r) = key
        .and_then(|k| k.split(':').nth(3))
        .filter(|r| !r.is_empty())
    {
        return Some(r.to_string());
    }
    let region_of_zone = |zone: &str| {
        let region = zone.trim_end_matches(|c: char| c.is_ascii_lowercase());
        (!region.is_empty() && region.len() < zone.len()).then(|| region.to_string())
    };
    facts
        .logs
        .iter()
        .find_map(|r| region_of_zone(r.fields.get("zone")?.as_str()?))
        // A NodeClaim's provider ID: `aws:///<zone>/<instance>`.
        .or_else(|| {
            facts.nodeclaims.iter().find_map(|c| {
                let zone = c
                    .provider_id
                    .as_deref()?
                    .strip_prefix("aws:///")?
                    .split('/')
                    .next()?;
                region_of_zone(zone)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{BlockDeviceMapping, Meta, NodeClass};
    use crate::rules;
    use crate::testing::{check_only, ids};

    #[test]
    fn every_form() {
        for text in [
            "State transition reason: Server.InternalError\nState transition reason message: Client.InternalError: Client error on launch",
            "Client.InvalidKMSKey.InvalidState: The KMS key provided is in an incorrect state",
            "\"StateReason\": {\"Code\": \"Client.InternalError\", \"Message\": \"Client.InternalError: Client error on launch\"}",
        ] {
            assert_eq!(ids(&check_only("KW307", text)), ["KW307"], "{text}");
        }
    }

    #[test]
    fn names_instance_and_nodeclaim() {
        let report = check_only(
            "KW307",
            "State transition reason message: Client.InternalError: Client error on launch\n{\"level\":\"INFO\",\"message\":\"launched nodeclaim\",\"NodeClaim\":{\"name\":\"default-qbjzn\"},\"provider-id\":\"aws:///us-east-1b/i-0e3d5dafc712ed052\",\"zone\":\"us-east-1b\"}\n{\"level\":\"DEBUG\",\"message\":\"garbage collecting nodeclaim with no cloudprovider representation\",\"NodeClaim\":{\"name\":\"default-qbjzn\"},\"provider-id\":\"aws:///us-east-1b/i-0e3d5dafc712ed052\"}",
        );
        let d = &report.diagnoses[0];
        assert_eq!(d.confidence, Confidence::High);
        assert!(d.summary.contains("i-0e3d5dafc712ed052"), "{}", d.summary);
        assert!(d.summary.contains("default-qbjzn"), "{}", d.summary);
        let policy = d
            .remediation
            .iter()
            .find_map(|r| r.yaml.as_deref())
            .unwrap();
        assert!(policy.contains("ec2.us-east-1.amazonaws.com"), "{policy}");
    }

    #[test]
    fn inferred_from_encrypted_mappings_and_short_lived_nodeclaims() {
        let mut facts = crate::ingest::ingest(&[crate::Document::new(
            "karpenter.log",
            "{\"level\":\"DEBUG\",\"message\":\"garbage collecting nodeclaim with no cloudprovider representation\",\"NodeClaim\":{\"name\":\"web-1\"},\"provider-id\":\"aws:///eu-west-1a/i-0aaaaaaaaaaaaaaaa\"}",
        )]);
        facts.nodeclasses.push(NodeClass {
            meta: Meta {
                name: "secure".into(),
                ..Meta::default()
            },
            block_device_mappings: vec![BlockDeviceMapping {
                device_name: Some("/dev/xvda".into()),
                encrypted: Some(true),
                kms_key_id: Some(
                    "arn:aws:kms:eu-west-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"
                        .into(),
                ),
                ..BlockDeviceMapping::default()
            }],
            ..NodeClass::default()
        });
        let d = (rules::find("KW307").unwrap().check)(&facts);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].confidence, Confidence::Medium);
        assert!(
            d[0].summary.starts_with("Inferred from NodeClaim web-1"),
            "{}",
            d[0].summary
        );
        assert!(
            d[0].summary.contains("EC2NodeClass secure"),
            "{}",
            d[0].summary
        );
        let policy = d[0]
            .remediation
            .iter()
            .find_map(|r| r.yaml.as_deref())
            .unwrap();
        assert!(
            policy.contains("\"kms:CallerAccount\": \"111122223333\""),
            "{policy}"
        );
        assert!(policy.contains("ec2.eu-west-1.amazonaws.com"), "{policy}");
    }

    #[test]
    fn instance_and_state_reason_from_describe_instances() {
        let json = check_only(
            "KW307",
            "{\n  \"InstanceId\": \"i-0d1e2f3a4b5c6d7e8\",\n  \"Placement\": {\"AvailabilityZone\": \"eu-west-1c\"},\n  \"StateReason\": {\n    \"Code\": \"Client.InvalidKMSKey.InvalidState\",\n    \"Message\": \"Client.InvalidKMSKey.InvalidState: The KMS key provided is in an incorrect state\"\n  }\n}",
        );
        let d = &json.diagnoses[0];
        assert!(
            d.summary.contains("instance i-0d1e2f3a4b5c6d7e8")
                && d.summary.contains("(Client.InvalidKMSKey.InvalidState)"),
            "{}",
            d.summary
        );
        assert!(d
            .evidence
            .iter()
            .any(|e| e.text.contains("i-0d1e2f3a4b5c6d7e8")));
        assert!(d.remediation[0].command.as_deref().is_some_and(
            |c| c.starts_with("aws ec2 describe-instances --instance-ids i-0d1e2f3a4b5c6d7e8 ")
        ));
        let policy = d
            .remediation
            .iter()
            .find_map(|r| r.yaml.as_deref())
            .unwrap();
        assert!(policy.contains("ec2.eu-west-1.amazonaws.com"), "{policy}");
        // Text output: the INSTANCES row above each STATEREASON row; the code alone counts.
        let text = check_only(
            "KW307",
            "INSTANCES\t0\tx86_64\ttoken\tTrue\tTrue\txen\tami-0c1d2e3f4a5b6c7d8\ti-0a1b2c3d4e5f60789\tc6i.large\nSTATEREASON\tClient.InternalError\tClient.InternalError: Client error on launch\nINSTANCES\t0\tx86_64\ttoken\tTrue\tTrue\txen\tami-0c1d2e3f4a5b6c7d8\ti-0f9e8d7c6b5a40123\tc6i.large\nSTATEREASON\tClient.InternalError\tClient.InternalError: Client error on launch",
        );
        let d = &text.diagnoses[0];
        assert!(
            d.summary
                .contains("instances i-0a1b2c3d4e5f60789 and i-0f9e8d7c6b5a40123"),
            "{}",
            d.summary
        );
        assert!(
            d.remediation[0].command.as_deref().is_some_and(
                |c| c.contains("--instance-ids i-0a1b2c3d4e5f60789 i-0f9e8d7c6b5a40123 ")
            )
        );
        assert_eq!(
            ids(&check_only(
                "KW307",
                "i-0e1f2a3b4c5d6e7f8\tClient.InternalError"
            )),
            ["KW307"]
        );
        assert_eq!(
            state_reason_code("Code: Client.InvalidKMSKey.InvalidState."),
            Some("Client.InvalidKMSKey.InvalidState".to_string())
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            // Short-lived NodeClaims without encrypted volumes are not evidence of KMS.
            "{\"level\":\"DEBUG\",\"message\":\"garbage collecting nodeclaim with no cloudprovider representation\",\"NodeClaim\":{\"name\":\"web-1\"}}",
            // An encrypted mapping alone is normal.
            "        kmsKeyID: arn:aws:kms:us-east-1:111122223333:key/abc",
            "State transition reason: Server.InternalError",
            "i-0a1b2c3d4e5f60789\tServer.InternalError",
            "\"Code\": \"Client.UserInitiatedShutdown\",\n\"Message\": \"Client.UserInitiatedShutdown: User initiated shutdown\"",
            "STATEREASON\tClient.InstanceInitiatedShutdown\tClient.InstanceInitiatedShutdown: Instance initiated shutdown",
            "RequestLimitExceeded: Request limit exceeded.",
        ] {
            assert!(ids(&check_only("KW307", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn pre_v0_32_machines_and_aws_node_template() {
        let report = check_only(
            "KW307",
            "apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: default
spec:
  blockDeviceMappings:
    - deviceName: /dev/xvda
      ebs:
        encrypted: true
        kmsKeyID: arn:aws:kms:us-east-1:210987654321:key/7c9e2b1a-4d3f-4e8a-9b6c-1a2b3c4d5e6f
---
{\"level\":\"DEBUG\",\"message\":\"garbage collecting machine with no cloudprovider representation\",\"machine\":\"default-7x2kq\",\"provider-id\":\"aws:///us-east-1a/i-0b1c2d3e4f5a60718\"}",
        );
        let d = &report.diagnoses[0];
        assert_eq!(d.confidence, Confidence::Medium);
        assert!(
            d.summary.starts_with(
                "Inferred from Machine default-7x2kq ending before its node registered, while AWSNodeTemplate default encrypts"
            ),
            "{}",
            d.summary
        );
        assert_eq!(d.object.as_ref().map(|o| o.kind.as_str()), Some("Machine"));
        assert!(!d.summary.contains("NodeClaim"), "{}", d.summary);
        let last = &d.remediation.last().unwrap().text;
        assert!(last.contains("AWSNodeTemplate"), "{last}");
        // Key unknown before v0.32: the AWSNodeTemplate the Provisioner names.
        let d = &check_only(
            "KW307",
            "{\"level\":\"INFO\",\"message\":\"launched machine\",\"machine\":\"default-7x2kq\",\"provider-id\":\"aws:///us-east-1a/i-0b1c2d3e4f5a60718\"}\nState transition reason message: Client.InternalError: Client error on launch",
        )
        .diagnoses[0];
        let find = d
            .remediation
            .iter()
            .find_map(|r| r.command.as_deref().filter(|c| c.contains("providerRef")))
            .expect("a step reading the Provisioners' providerRef");
        assert!(find.contains("kubectl get awsnodetemplates"), "{find}");
    }

    #[test]
    fn custom_launch_template_points_at_its_block_device_mappings() {
        let report = check_only(
            "KW307",
            "apiVersion: karpenter.k8s.aws/v1alpha1
kind: AWSNodeTemplate
metadata:
  name: encrypted-lt
spec:
  launchTemplate: eks-nodes-cmk
---
i-0e4f5a6b7c8d90a1b\tClient.InternalError\tClient.InternalError: Client error on launch",
        );
        let d = &report.diagnoses[0];
        assert_eq!(d.confidence, Confidence::High);
        assert!(
            d.summary.contains(
                "AWSNodeTemplate encrypted-lt launches with custom launch template eks-nodes-cmk"
            ),
            "{}",
            d.summary
        );
        let lt = d
            .remediation
            .iter()
            .find_map(|r| {
                r.command
                    .as_deref()
                    .filter(|c| c.contains("launch-template"))
            })
            .expect("a step reading the launch template");
        assert!(
            lt.starts_with(
                "aws ec2 describe-launch-template-versions --launch-template-name eks-nodes-cmk "
            ),
            "{lt}"
        );
        assert!(!d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("ec2nodeclasses"))));
        assert!(d.remediation.iter().any(|r| r
            .text
            .contains("Karpenter never edits a custom launch template")));
        // Inferred from a short-lived Machine and the launch template alone: low confidence.
        let d = &check_only(
            "KW307",
            "  launchTemplate: eks-nodes-cmk\n{\"level\":\"DEBUG\",\"message\":\"garbage collecting machine with no cloudprovider representation\",\"machine\":\"payments-9kx2d\"}",
        )
        .diagnoses[0];
        assert_eq!(d.confidence, Confidence::Low);
        assert!(
            d.summary.contains("custom launch template eks-nodes-cmk, whose volumes and KMS key Karpenter cannot see"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn karpenter_generated_launch_templates_are_not_custom() {
        for text in [
            "launchTemplateName: karpenter.k8s.aws/15949964056112399691\n{\"level\":\"DEBUG\",\"message\":\"garbage collecting machine with no cloudprovider representation\",\"machine\":\"default-7x2kq\"}",
            "launchTemplate: {}\n{\"level\":\"DEBUG\",\"message\":\"garbage collecting machine with no cloudprovider representation\",\"machine\":\"default-7x2kq\"}",
            // A custom launch template whose Machine registered.
            "launchTemplate: eks-nodes-cmk\n{\"level\":\"DEBUG\",\"message\":\"garbage collecting machine with no cloudprovider representation\",\"machine\":\"default-7x2kq\"}\n{\"level\":\"INFO\",\"message\":\"registered machine\",\"machine\":\"default-7x2kq\"}",
        ] {
            assert!(ids(&check_only("KW307", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn alias_resolution() {
        assert_eq!(
            alias_name("arn:aws:kms:eu-west-1:1:alias/x"),
            Some("alias/x")
        );
        assert_eq!(alias_name("alias/x"), Some("alias/x"));
        assert_eq!(alias_name("arn:aws:kms:eu-west-1:1:key/notalias/x"), None);
        assert!(names_alias(
            "\"AliasName\": \"alias/team-ebs\",",
            "alias/team-ebs"
        ));
        assert!(!names_alias(
            "\"AliasName\": \"alias/team-ebs-old\",",
            "alias/team-ebs"
        ));
        // Unresolved: the commands resolve the alias first (key policies take no alias).
        let report = check_only(
            "KW307",
            "kmsKeyID: alias/team-ebs\nState transition reason message: Client.InternalError: Client error on launch",
        );
        let d = &report.diagnoses[0];
        assert!(!d.summary.contains("an alias of key"), "{}", d.summary);
        let check = d
            .remediation
            .iter()
            .filter_map(|r| r.command.as_deref())
            .find(|c| c.contains("get-key-policy"))
            .unwrap();
        assert!(
            check.starts_with("KEY=$(aws kms describe-key --key-id alias/team-ebs"),
            "{check}"
        );
        assert!(
            check.contains("get-key-policy --key-id \"$KEY\""),
            "{check}"
        );
        // Resolved by a text-output list-aliases row.
        let report = check_only(
            "KW307",
            "kmsKeyID: arn:aws:kms:us-east-2:111122223333:alias/team-ebs\nALIASES\tarn:aws:kms:us-east-2:111122223333:alias/team-ebs\talias/team-ebs\t9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d\nState transition reason message: Client.InternalError: Client error on launch",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("an alias of key arn:aws:kms:us-east-2:111122223333:key/9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d"),
            "{}",
            d.summary
        );
    }
}
