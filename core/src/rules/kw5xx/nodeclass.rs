//! What the KW5xx rules (and KW208) share: EC2NodeClass conditions however they reached the
//! input, the NodeClass a message is about, and the AWS commands that check selector terms.
//!
//! A condition reaches the input in four shapes:
//! - a typed condition of an EC2NodeClass object (`facts.nodeclasses[].conditions`);
//! - a condition message `<Type>=<Status> <Reason>: <message>` (ingest's form);
//! - the transition event `Status condition transitioned, Type: <T>, Status: <a> -> <b>,
//!   Reason: <r>[, Message: <m>]`;
//! - raw lines of YAML or describe output (`reason: SubnetsNotFound`, `Message: SubnetSelector
//!   did not match any Subnets`), and the `Ready` roll-up message listing the unhealthy
//!   dependents (`SubnetsReady=False, ValidationSucceeded=False`).
//!
//! The rules match the texts of each shape and read names from the typed objects.

use serde_json::Value;

use crate::facts::find_ignore_ascii_case;
use crate::facts::{Condition, Facts, Message, NodeClass};
use crate::rules::kw2xx::scheduling::record_of;
use crate::rules::kw4xx::disruption::unescaped;
use crate::rules::text::quoted_after;

/// One `Status condition transitioned` event, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    pub condition_type: String,
    pub to: String,
    pub reason: Option<String>,
    pub message: Option<String>,
}

/// `Status condition transitioned, Type: SubnetsReady, Status: True -> False, Reason:
/// SubnetsNotFound, Message: ...`.
pub fn transition(text: &str) -> Option<Transition> {
    let at = find_ignore_ascii_case(text, "status condition transitioned")?;
    let rest = &text[at..];
    let field = |name: &str| -> Option<String> {
        let i = find_ignore_ascii_case(rest, &format!("{name}: "))? + name.len() + 2;
        let value = &rest[i..];
        // The message is last and may hold commas; the other fields end at the next comma.
        let value = if name == "Message" {
            value
        } else {
            value.split(',').next().unwrap_or_default()
        };
        let value = value.trim();
        (!value.is_empty()).then(|| value.to_string())
    };
    let status = field("Status")?;
    let to = status
        .rsplit("->")
        .next()
        .map(str::trim)
        .unwrap_or(&status)
        .to_string();
    Some(Transition {
        condition_type: field("Type")?,
        to,
        reason: field("Reason"),
        message: field("Message"),
    })
}

/// Whether `message` is a condition transition away from True that the input shows undone:
/// the object's status has that condition True now, or a later transition of the same object
/// sets it True again (the describe of an object whose selector or reference was fixed keeps
/// the old events).
pub fn undone_transition(facts: &Facts, message: &Message) -> bool {
    let Some(tr) = transition(&unescaped(&message.text)) else {
        return false;
    };
    let Some(object) = &message.object else {
        return false;
    };
    if tr.to.eq_ignore_ascii_case("True") {
        return false;
    }
    let is_true = |c: &Condition| {
        c.condition_type.eq_ignore_ascii_case(&tr.condition_type) && c.status == "True"
    };
    let kind = object.kind.to_ascii_lowercase();
    let true_now = match kind.as_str() {
        "ec2nodeclass" | "nodeclass" => facts
            .nodeclass(&object.name)
            .is_some_and(|nc| nc.conditions.iter().any(is_true)),
        "nodepool" => facts
            .nodepool(&object.name)
            .is_some_and(|np| np.conditions.iter().any(is_true)),
        _ => false,
    };
    true_now
        || facts.messages.iter().any(|later| {
            later.object.as_ref() == Some(object)
                && later.evidence.source == message.evidence.source
                && later.evidence.line > message.evidence.line
                && transition(&unescaped(&later.text)).is_some_and(|t| {
                    t.condition_type.eq_ignore_ascii_case(&tr.condition_type)
                        && t.to.eq_ignore_ascii_case("True")
                })
        })
}

/// Whether `text` reports condition `condition_type` as `status`: a condition message or a
/// roll-up (`<Type>=<Status>`), or a transition event to that status.
pub fn reports_condition(text: &str, condition_type: &str, status: &str) -> bool {
    if contains_word(text, &format!("{condition_type}={status}")) {
        return true;
    }
    transition(text).is_some_and(|t| {
        t.condition_type.eq_ignore_ascii_case(condition_type) && t.to.eq_ignore_ascii_case(status)
    })
}

/// `needle` in `text` (case-insensitive) not preceded by a letter, so that `Ready=False`
/// does not match inside `NodeClassReady=False`.
pub fn contains_word(text: &str, needle: &str) -> bool {
    let mut rest = text;
    while let Some(i) = find_ignore_ascii_case(rest, needle) {
        let before = rest[..i].chars().next_back();
        if !before.is_some_and(|c| c.is_ascii_alphanumeric()) {
            return true;
        }
        rest = &rest[i + needle.len()..];
    }
    false
}

/// The EC2NodeClass a message is about: its object, the log's `EC2NodeClass` (or
/// `nodeclass`) field, or a `nodeClassRef` quoted in the text.
pub fn message_nodeclass(facts: &Facts, message: &Message) -> Option<String> {
    if let Some(o) = &message.object {
        if o.kind.eq_ignore_ascii_case("EC2NodeClass") || o.kind.eq_ignore_ascii_case("NodeClass") {
            return Some(o.name.clone());
        }
    }
    if let Some(r) = record_of(facts, message) {
        for key in [
            "EC2NodeClass",
            "ec2nodeclass",
            "NodeClass",
            "nodeclass",
            "AWSNodeTemplate",
            "awsnodetemplate",
        ] {
            if let Some(n) = r.field_name(key) {
                return Some(n);
            }
        }
    }
    let t = unescaped(&message.text);
    quoted_after(&t, "ec2nodeclasses.karpenter.k8s.aws")
        .or_else(|| quoted_after(&t, "EC2NodeClass.karpenter.k8s.aws"))
        .or_else(|| referenced_by_nodepool(facts, message))
}

/// A NodePool's condition or event (its `NodeClassReady` copies the EC2NodeClass's Ready
/// message, `ValidationSucceeded=False`) is about the EC2NodeClass its nodeClassRef names.
fn referenced_by_nodepool(facts: &Facts, message: &Message) -> Option<String> {
    let nodepool = message
        .object
        .as_ref()
        .filter(|o| o.kind == "NodePool")
        .map(|o| o.name.as_str())
        .or(message.nodepool.as_deref())?;
    facts.nodepool(nodepool)?.nodeclass_ref.clone()
}

/// The EC2NodeClass to name when a message does not say: the only one in the facts, or the
/// one every NodePool references, or, with no object at all, the one every prompt line names.
pub fn sole_nodeclass(facts: &Facts) -> Option<String> {
    if let [only] = facts.nodeclasses.as_slice() {
        return Some(only.meta.name.clone());
    }
    let mut refs = facts
        .nodepools
        .iter()
        .filter_map(|p| p.nodeclass_ref.clone());
    if let Some(first) = refs.next() {
        return refs.all(|r| r == first).then_some(first);
    }
    // No object names it: the prompt lines may (`$ kubectl get awsnodetemplate jobs -o yaml |
    // grep -A3 subnetSelector`, `kubectl describe ec2nodeclass default`), when they all name
    // the same one.
    let mut named = facts.commands.iter().filter_map(|c| {
        let kind = c
            .kinds
            .iter()
            .any(|k| k == "EC2NodeClass" || k == "AWSNodeTemplate");
        (kind && c.tool == "kubectl")
            .then(|| c.name.clone())
            .flatten()
            .filter(|n| !n.is_empty())
    });
    let first = named.next().filter(|_| facts.nodeclasses.is_empty())?;
    named.all(|n| n == first).then_some(first)
}

/// What a selector selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selected {
    Subnets,
    SecurityGroups,
    Amis,
}

impl Selected {
    pub fn terms<'a>(&self, nc: &'a NodeClass) -> &'a [Value] {
        match self {
            Selected::Subnets => &nc.subnet_selector_terms,
            Selected::SecurityGroups => &nc.security_group_selector_terms,
            Selected::Amis => &nc.ami_selector_terms,
        }
    }

    pub fn field(&self) -> &'static str {
        match self {
            Selected::Subnets => "subnetSelectorTerms",
            Selected::SecurityGroups => "securityGroupSelectorTerms",
            Selected::Amis => "amiSelectorTerms",
        }
    }

    /// The v1alpha1 AWSNodeTemplate's field (before v0.32): one map, not a list of terms.
    pub fn legacy_field(&self) -> &'static str {
        match self {
            Selected::Subnets => "subnetSelector",
            Selected::SecurityGroups => "securityGroupSelector",
            Selected::Amis => "amiSelector",
        }
    }
}

/// Selector terms back as the v1alpha1 selector map they were read from (ingest turns an
/// AWSNodeTemplate's map into terms): tags as they are, `id` terms as one `aws-ids` entry,
/// `name` / `owner` as `aws::name` / `aws::owners`.
pub fn legacy_selector(terms: &[Value]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut ids: Vec<&str> = Vec::new();
    for term in terms {
        let Some(map) = term.as_object() else {
            continue;
        };
        for (k, v) in map {
            match (k.as_str(), v) {
                ("tags", Value::Object(tags)) => out.extend(
                    tags.iter()
                        .map(|(tk, tv)| (tk.clone(), tv.as_str().unwrap_or_default().to_string())),
                ),
                ("id", Value::String(id)) => ids.push(id),
                ("name", Value::String(n)) => out.push(("aws::name".to_string(), n.clone())),
                ("owner", Value::String(o)) => out.push(("aws::owners".to_string(), o.clone())),
                (other, v) => out.push((
                    other.to_string(),
                    v.as_str().map_or_else(|| v.to_string(), str::to_string),
                )),
            }
        }
    }
    if !ids.is_empty() {
        out.push(("aws-ids".to_string(), ids.join(",")));
    }
    out
}

/// `k=v, k2=v2` for a summary.
pub fn pairs_label(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An AWSNodeTemplate's selector map as YAML (`spec:\n  subnetSelector:\n    k: v`).
pub fn legacy_selector_yaml(selected: Selected, pairs: &[(String, String)]) -> Option<String> {
    if pairs.is_empty() {
        return None;
    }
    let mut out = format!("spec:\n  {}:\n", selected.legacy_field());
    for (k, v) in pairs {
        // `*` (any value), an empty value, or one YAML would read otherwise needs quotes.
        let plain = !v.is_empty()
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./,@".contains(c))
            && !v.starts_with(['-', '.', '@'])
            && !crate::ingest::objects::number::is_f64(v)
            && !matches!(
                v.to_ascii_lowercase().as_str(),
                "true" | "false" | "yes" | "no" | "on" | "off" | "null"
            );
        if plain {
            out.push_str(&format!("    {k}: {v}\n"));
        } else {
            out.push_str(&format!("    {k}: \"{v}\"\n"));
        }
    }
    Some(out)
}

/// A selector term as one phrase: `tags karpenter.sh/discovery=my-cluster`, `id subnet-1`,
/// `alias al2023@latest`.
pub fn term_label(term: &Value) -> String {
    let Some(map) = term.as_object() else {
        return term.to_string();
    };
    let mut parts = Vec::new();
    for (k, v) in map {
        match (k.as_str(), v) {
            ("tags", Value::Object(tags)) => {
                let pairs: Vec<String> = tags
                    .iter()
                    .map(|(tk, tv)| format!("{tk}={}", tv.as_str().unwrap_or_default()))
                    .collect();
                parts.push(format!("tags {}", pairs.join(",")));
            }
            (key, Value::String(s)) => parts.push(format!("{key} {s}")),
            (key, other) => parts.push(format!("{key} {other}")),
        }
    }
    parts.join(" ")
}

/// `"Name=tag:<k>,Values=<v>"` filters for a term's tags (`*` matches any value).
fn tag_filters(term: &Value) -> Vec<String> {
    term.get("tags")
        .and_then(Value::as_object)
        .map(|tags| {
            tags.iter()
                .map(|(k, v)| match v.as_str().unwrap_or_default() {
                    "*" | "" => format!("\"Name=tag-key,Values={k}\""),
                    value => format!("\"Name=tag:{k},Values={value}\""),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn string_field<'a>(term: &'a Value, key: &str) -> Option<&'a str> {
    term.get(key).and_then(Value::as_str)
}

/// The AWS CLI command that shows what one selector term matches.
pub fn describe_command(selected: Selected, term: &Value) -> String {
    let filters = tag_filters(term);
    match selected {
        Selected::Subnets => {
            let select = match string_field(term, "id") {
                Some(id) => format!("--subnet-ids {id}"),
                None => format!("--filters {}", filters.join(" ")),
            };
            format!("aws ec2 describe-subnets {select} --query 'Subnets[].[SubnetId,AvailabilityZone,VpcId,AvailableIpAddressCount]' --output table")
        }
        Selected::SecurityGroups => {
            let select = match (string_field(term, "id"), string_field(term, "name")) {
                (Some(id), _) => format!("--group-ids {id}"),
                (None, Some(name)) => {
                    let mut f = vec![format!("\"Name=group-name,Values={name}\"")];
                    f.extend(filters);
                    format!("--filters {}", f.join(" "))
                }
                (None, None) => format!("--filters {}", filters.join(" ")),
            };
            format!("aws ec2 describe-security-groups {select} --query 'SecurityGroups[].[GroupId,GroupName,VpcId]' --output table")
        }
        Selected::Amis => {
            if let Some(alias) = string_field(term, "alias") {
                return alias_command(alias);
            }
            if let Some(param) = string_field(term, "ssmParameter") {
                return format!(
                    "aws ssm get-parameter --name {param} --query Parameter.Value --output text"
                );
            }
            let query =
                "--query 'Images[].[ImageId,Name,CreationDate,Architecture]' --output table";
            if let Some(id) = string_field(term, "id") {
                return format!("aws ec2 describe-images --image-ids {id} {query}");
            }
            // Without an owner Karpenter searches the account's own images and Amazon's.
            let owners = string_field(term, "owner").unwrap_or("self amazon");
            let mut f = Vec::new();
            if let Some(name) = string_field(term, "name") {
                f.push(format!("\"Name=name,Values={name}\""));
            }
            f.extend(filters);
            format!(
                "aws ec2 describe-images --owners {owners} --filters {} {query}",
                f.join(" ")
            )
        }
    }
}

/// The SSM parameter an `amiSelectorTerms` alias resolves from (the x86_64 standard AMI of
/// the family; Karpenter reads the arm64 and GPU parameters alike). A pinned version has its
/// own parameter, named as Karpenter's `DescribeImageQuery` of each family names it: a version
/// that does not exist for the cluster's Kubernetes version is the usual `AMIsReady=False`.
fn alias_command(alias: &str) -> String {
    let (family, version) = alias.split_once('@').unwrap_or((alias, "latest"));
    let family = family.trim().to_ascii_lowercase();
    let version = version.trim();
    let latest = version.is_empty() || version.eq_ignore_ascii_case("latest");
    const EKS: &str = "/aws/service/eks/optimized-ami/<kubernetes-version>";
    let path = match family.as_str() {
        "al2023" if latest => format!("{EKS}/amazon-linux-2023/x86_64/standard/recommended/image_id"),
        "al2023" => format!("{EKS}/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-<kubernetes-version>-{version}/image_id"),
        "al2" if latest => format!("{EKS}/amazon-linux-2/recommended/image_id"),
        "al2" => format!("{EKS}/amazon-linux-2/amazon-eks-node-<kubernetes-version>-{version}/image_id"),
        // Bottlerocket's parameters drop the `v` its release names carry.
        "bottlerocket" => format!(
            "/aws/service/bottlerocket/aws-k8s-<kubernetes-version>/x86_64/{}/image_id",
            if latest { "latest" } else { version.trim_start_matches('v') }
        ),
        "windows2019" => "/aws/service/ami-windows-latest/Windows_Server-2019-English-Core-EKS_Optimized-<kubernetes-version>/image_id".to_string(),
        "windows2022" => "/aws/service/ami-windows-latest/Windows_Server-2022-English-Core-EKS_Optimized-<kubernetes-version>/image_id".to_string(),
        other => format!("<the SSM parameter of the {other} family for Kubernetes <kubernetes-version>>"),
    };
    format!("aws ssm get-parameter --name {path} --query Parameter.Value --output text")
}

/// The commands for every term of the NodeClass's selector, or the catalogue's default when
/// the NodeClass (or its terms) is not in the input; `fallback_tags` are tags a pre-v1 log
/// printed (`no subnets matched selector map[k:v]`).
pub fn describe_commands(
    selected: Selected,
    nodeclass: Option<&NodeClass>,
    fallback_tags: &[(String, String)],
) -> Vec<String> {
    if let Some(nc) = nodeclass {
        let terms = selected.terms(nc);
        if !terms.is_empty() {
            return terms
                .iter()
                .map(|t| describe_command(selected, t))
                .collect();
        }
    }
    let tags: Vec<(String, String)> = if fallback_tags.is_empty() {
        vec![(
            "karpenter.sh/discovery".to_string(),
            "<cluster-name>".to_string(),
        )]
    } else {
        fallback_tags.to_vec()
    };
    let map: serde_json::Map<String, Value> = tags
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect();
    let term = serde_json::json!({ "tags": map });
    vec![describe_command(selected, &term)]
}

/// The tags of a Go map printed in a pre-v1 message: `map[karpenter.sh/discovery:demo]`.
pub fn go_map_tags(text: &str) -> Vec<(String, String)> {
    let Some(start) = text.find("map[") else {
        return Vec::new();
    };
    let inner = text[start + 4..].split(']').next().unwrap_or_default();
    inner
        .split_whitespace()
        .filter_map(|pair| {
            // The key may hold `:` only in the unusual `aws:` prefix; split at the last one.
            let (k, v) = pair.rsplit_once(':')?;
            (!k.is_empty()).then(|| (k.to_string(), v.to_string()))
        })
        .collect()
}

/// The selector terms as the spec writes them, for a YAML remediation.
/// A string as a YAML scalar that reads back as the same string: a tag value `"1"`, `"true"`
/// or `""` quoted, since a bare `1` is an integer the CRD's string map rejects.
fn yaml_string(s: &str) -> String {
    let plain = !s.is_empty()
        && s.trim() == s
        && !crate::ingest::objects::number::is_f64(s)
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
        )
        && !s.starts_with([
            '*', '&', '!', '|', '>', '\'', '"', '%', '@', '`', '{', '[', '#', '-', '?',
        ])
        && !s.contains(": ")
        && !s.contains(" #");
    if plain {
        s.to_string()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

pub fn terms_yaml(selected: Selected, nc: &NodeClass) -> Option<String> {
    let terms = selected.terms(nc);
    if terms.is_empty() {
        return None;
    }
    let mut out = format!("spec:\n  {}:\n", selected.field());
    for term in terms {
        let Some(map) = term.as_object() else {
            continue;
        };
        let mut first = true;
        for (k, v) in map {
            let lead = if first { "    - " } else { "      " };
            first = false;
            match v {
                Value::Object(inner) => {
                    out.push_str(&format!("{lead}{k}:\n"));
                    for (ik, iv) in inner {
                        out.push_str(&format!(
                            "        {ik}: {}\n",
                            iv.as_str().map(yaml_string).unwrap_or(iv.to_string())
                        ));
                    }
                }
                Value::String(s) => out.push_str(&format!("{lead}{k}: {}\n", yaml_string(s))),
                other => out.push_str(&format!("{lead}{k}: {other}\n")),
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Meta;

    #[test]
    fn a_pinned_alias_reads_the_parameter_of_its_version() {
        let cmd =
            |alias: &str| describe_command(Selected::Amis, &serde_json::json!({ "alias": alias }));
        let eks = "/aws/service/eks/optimized-ami/<kubernetes-version>";
        for (alias, path) in [
            ("al2023@latest", format!("{eks}/amazon-linux-2023/x86_64/standard/recommended/image_id")),
            ("al2023@v20240807", format!("{eks}/amazon-linux-2023/x86_64/standard/amazon-eks-node-al2023-x86_64-standard-<kubernetes-version>-v20240807/image_id")),
            ("AL2@v20240807", format!("{eks}/amazon-linux-2/amazon-eks-node-<kubernetes-version>-v20240807/image_id")),
            ("al2", format!("{eks}/amazon-linux-2/recommended/image_id")),
            ("bottlerocket@v1.20.3", "/aws/service/bottlerocket/aws-k8s-<kubernetes-version>/x86_64/1.20.3/image_id".to_string()),
            ("bottlerocket@1.20.3", "/aws/service/bottlerocket/aws-k8s-<kubernetes-version>/x86_64/1.20.3/image_id".to_string()),
            ("bottlerocket@latest", "/aws/service/bottlerocket/aws-k8s-<kubernetes-version>/x86_64/latest/image_id".to_string()),
        ] {
            assert_eq!(
                cmd(alias),
                format!("aws ssm get-parameter --name {path} --query Parameter.Value --output text"),
                "{alias}"
            );
        }
    }

    #[test]
    fn yaml_strings_read_back_as_strings() {
        for (raw, shown) in [
            ("prod-eks", "prod-eks"),
            ("1", "\"1\""),
            ("true", "\"true\""),
            ("", "\"\""),
            ("0.5", "\"0.5\""),
            ("*", "\"*\""),
            ("a: b", "\"a: b\""),
            ("say \"hi\"", "say \"hi\""),
            ("-x", "\"-x\""),
        ] {
            assert_eq!(yaml_string(raw), shown, "{raw}");
        }
    }

    #[test]
    fn a_false_transition_undone_later_or_by_the_status_is_history() {
        let facts = crate::ingest::ingest(&[crate::document::Document::new(
            "paste",
            "LAST SEEN   TYPE     REASON         OBJECT                 MESSAGE
30m         Normal   SubnetsReady   ec2nodeclass/default   Status condition transitioned, Type: SubnetsReady, Status: True -> False, Reason: SubnetsNotFound, Message: SubnetSelector did not match any Subnets
20m         Normal   SubnetsReady   ec2nodeclass/default   Status condition transitioned, Type: SubnetsReady, Status: False -> True, Reason: SubnetsReady
10m         Normal   SubnetsReady   ec2nodeclass/default   Status condition transitioned, Type: SubnetsReady, Status: True -> False, Reason: SubnetsNotFound, Message: SubnetSelector did not match any Subnets
10m         Normal   AMIsReady      ec2nodeclass/gpu       Status condition transitioned, Type: AMIsReady, Status: True -> False, Reason: AMINotFound, Message: AMISelector did not match any AMIs
",
        )]);
        let undone: Vec<bool> = facts
            .messages
            .iter()
            .map(|m| undone_transition(&facts, m))
            .collect();
        // Undone by the next transition; the last one stands; another object's stands.
        assert_eq!(undone, [true, false, false, false]);
    }

    #[test]
    fn transitions() {
        let t = transition("Status condition transitioned, Type: SubnetsReady, Status: True -> False, Reason: SubnetsNotFound, Message: SubnetSelector did not match any Subnets").unwrap();
        assert_eq!(t.condition_type, "SubnetsReady");
        assert_eq!(t.to, "False");
        assert_eq!(t.reason.as_deref(), Some("SubnetsNotFound"));
        assert_eq!(
            t.message.as_deref(),
            Some("SubnetSelector did not match any Subnets")
        );
        let r = transition("Status condition transitioned, Type: Ready, Status: True -> False, Reason: UnhealthyDependents, Message: SubnetsReady=False, ValidationSucceeded=False").unwrap();
        assert_eq!(
            r.message.as_deref(),
            Some("SubnetsReady=False, ValidationSucceeded=False")
        );
        assert!(reports_condition(
            "Status condition transitioned, Type: NodeClassReady, Status: Unknown -> False, Reason: NodeClassNotFound",
            "NodeClassReady",
            "False"
        ));
        assert!(!reports_condition("NodeClassReady=False", "Ready", "False"));
        assert!(reports_condition("message: Ready=False", "Ready", "False"));
    }

    #[test]
    fn commands_from_terms() {
        let tags = serde_json::json!({"tags": {"karpenter.sh/discovery": "my-clusterr"}});
        assert_eq!(
            describe_command(Selected::Subnets, &tags),
            "aws ec2 describe-subnets --filters \"Name=tag:karpenter.sh/discovery,Values=my-clusterr\" --query 'Subnets[].[SubnetId,AvailabilityZone,VpcId,AvailableIpAddressCount]' --output table"
        );
        assert!(describe_command(
            Selected::SecurityGroups,
            &serde_json::json!({"tags": {"Name": "*"}})
        )
        .contains("\"Name=tag-key,Values=Name\""));
        assert!(
            describe_command(Selected::SecurityGroups, &serde_json::json!({"id": "sg-1"}))
                .contains("--group-ids sg-1")
        );
        assert!(describe_command(
            Selected::Amis,
            &serde_json::json!({"name": "my-ami-*", "owner": "123456789012"})
        )
        .contains("--owners 123456789012 --filters \"Name=name,Values=my-ami-*\""));
        assert!(describe_command(
            Selected::Amis,
            &serde_json::json!({"alias": "al2023@latest"})
        )
        .contains("amazon-linux-2023"));
        assert_eq!(term_label(&tags), "tags karpenter.sh/discovery=my-clusterr");
        let nc = NodeClass {
            meta: Meta {
                name: "default".into(),
                ..Default::default()
            },
            subnet_selector_terms: vec![tags, serde_json::json!({"id": "subnet-0abc"})],
            ..Default::default()
        };
        assert_eq!(
            describe_commands(Selected::Subnets, Some(&nc), &[]).len(),
            2
        );
        assert_eq!(
            terms_yaml(Selected::Subnets, &nc).as_deref(),
            Some("spec:\n  subnetSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: my-clusterr\n    - id: subnet-0abc\n")
        );
        assert!(describe_commands(Selected::SecurityGroups, None, &[])[0]
            .contains("Values=<cluster-name>"));
    }

    #[test]
    fn go_maps() {
        assert_eq!(
            go_map_tags(
                "no subnets matched selector map[karpenter.sh/discovery:demo Name:private]"
            ),
            vec![
                ("karpenter.sh/discovery".to_string(), "demo".to_string()),
                ("Name".to_string(), "private".to_string())
            ]
        );
        assert!(go_map_tags("no subnets found").is_empty());
    }
}
