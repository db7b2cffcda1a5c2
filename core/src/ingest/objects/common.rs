//! Pieces every object kind shares: metadata, status conditions, requirements, taints,
//! selectors, containers and their settings.

use std::collections::BTreeMap;

use crate::facts::{
    Condition, Container, Facts, LabelSelector, Message, MessageOrigin, Meta, ObjectRef,
    Requirement, Setting, SettingSource, Taint, Toleration,
};

use super::tree::Node;
use super::Source;

pub fn text_of(node: Option<&Node>) -> Option<String> {
    node.and_then(Node::string)
}

pub fn int_of(node: Option<&Node>) -> Option<i64> {
    node.and_then(Node::int)
}

pub fn map_of(node: Option<&Node>) -> BTreeMap<String, String> {
    node.map(Node::string_map).unwrap_or_default()
}

/// A field kept as written, when present and not null.
pub fn json_of(node: Option<&Node>) -> Option<serde_json::Value> {
    node.filter(|n| !n.is_null()).map(Node::to_json)
}

pub fn meta(src: &Source<'_>, obj: &Node, api_version: Option<&str>) -> Meta {
    let metadata = obj.get("metadata");
    let field = |key: &str| metadata.and_then(|m| m.get(key));
    let namespace = text_of(field("namespace"));
    let owners = field("ownerReferences")
        .map(|refs| {
            // The controller first: rules read `owners.first()` as "who manages this". Two
            // lists in input order rather than a stable sort (one sort copy less in wasm).
            let mut owners: Vec<ObjectRef> = Vec::new();
            let mut others: Vec<ObjectRef> = Vec::new();
            for r in refs.items() {
                let (Some(kind), Some(name)) = (text_of(r.get("kind")), text_of(r.get("name")))
                else {
                    continue;
                };
                let controller = r.get("controller").and_then(Node::boolean) == Some(true);
                let owner = ObjectRef::new(&kind, namespace.as_deref(), &name);
                if controller {
                    owners.push(owner);
                } else {
                    others.push(owner);
                }
            }
            owners.append(&mut others);
            owners
        })
        .unwrap_or_default();
    Meta {
        name: text_of(field("name")).unwrap_or_default(),
        namespace,
        api_version: api_version.map(str::to_string),
        labels: map_of(field("labels")),
        annotations: map_of(field("annotations")),
        owners,
        evidence: Some(src.evidence(field("name").or(metadata).unwrap_or(obj))),
        creation_timestamp: text_of(field("creationTimestamp")),
        from_table: false,
        namespace_assumed: false,
        table_age: None,
        annotations_cut: false,
    }
}

pub fn message(
    origin: MessageOrigin,
    text: String,
    evidence: crate::document::Evidence,
    object: &ObjectRef,
) -> Message {
    Message {
        origin,
        text,
        evidence,
        object: Some(object.clone()),
        nodepool: None,
        reason: None,
        component: None,
        time: None,
    }
}

/// `status.conditions`, each also a `Condition` message (`Type=Status Reason: message`) about
/// `about`, with `nodepool` when the object belongs to one.
pub fn conditions(
    src: &Source<'_>,
    obj: &Node,
    about: &ObjectRef,
    nodepool: Option<&str>,
    facts: &mut Facts,
) -> Vec<Condition> {
    let Some(list) = obj.path(&["status", "conditions"]) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for item in list.items() {
        let Some(condition_type) = text_of(item.get("type")) else {
            continue;
        };
        let status = text_of(item.get("status")).unwrap_or_else(|| "Unknown".into());
        let reason = text_of(item.get("reason"));
        let text_message = text_of(item.get("message"));
        let anchor = match (&text_message, &reason) {
            (Some(_), _) => item.get("message"),
            (None, Some(_)) => item.get("reason"),
            (None, None) => item.get("type"),
        }
        .unwrap_or(item);
        // A one-line JSON condition quotes the whole condition, not just one member.
        let evidence = if item.span.is_some() && src.is_long_line(anchor.line) {
            src.evidence(item)
        } else {
            src.evidence(anchor)
        };
        let mut text = format!("{condition_type}={status}");
        if let Some(r) = &reason {
            text.push(' ');
            text.push_str(r);
        }
        if let Some(m) = &text_message {
            text.push_str(": ");
            text.push_str(m);
        }
        let mut msg = message(MessageOrigin::Condition, text, evidence.clone(), about);
        msg.nodepool = nodepool.map(str::to_string);
        msg.reason = reason.clone();
        msg.time = text_of(item.get("lastTransitionTime"));
        facts.messages.push(msg);
        out.push(Condition {
            condition_type,
            status,
            reason,
            message: text_message,
            evidence: Some(evidence),
        });
    }
    out
}

pub fn requirements(node: Option<&Node>) -> Vec<Requirement> {
    node.map(Node::items)
        .unwrap_or_default()
        .iter()
        .filter_map(|r| {
            Some(Requirement {
                key: text_of(r.get("key"))?,
                operator: text_of(r.get("operator")).unwrap_or_default(),
                values: r.get("values").map(Node::string_list).unwrap_or_default(),
                min_values: int_of(r.get("minValues")).and_then(|n| u64::try_from(n).ok()),
            })
        })
        .collect()
}

pub fn taints(node: Option<&Node>) -> Vec<Taint> {
    node.map(Node::items)
        .unwrap_or_default()
        .iter()
        .filter_map(|t| {
            Some(Taint {
                key: text_of(t.get("key"))?,
                value: text_of(t.get("value")),
                effect: text_of(t.get("effect")).unwrap_or_default(),
            })
        })
        .collect()
}

pub fn tolerations(node: Option<&Node>) -> Vec<Toleration> {
    node.map(Node::items)
        .unwrap_or_default()
        .iter()
        .map(|t| Toleration {
            key: text_of(t.get("key")),
            operator: text_of(t.get("operator")),
            value: text_of(t.get("value")),
            effect: text_of(t.get("effect")),
        })
        .collect()
}

pub fn label_selector(node: Option<&Node>) -> LabelSelector {
    LabelSelector {
        match_labels: map_of(node.and_then(|n| n.get("matchLabels"))),
        match_expressions: requirements(node.and_then(|n| n.get("matchExpressions"))),
    }
}

/// A container with its status (matched by name), its state message, and its env and args as
/// settings owned by `owner`.
pub fn container(
    src: &Source<'_>,
    spec: &Node,
    statuses: Option<&Node>,
    owner: &ObjectRef,
    facts: &mut Facts,
) -> Container {
    let name = text_of(spec.get("name")).unwrap_or_default();
    let status = statuses.and_then(|list| {
        list.items()
            .iter()
            .find(|s| text_of(s.get("name")).as_deref() == Some(name.as_str()))
    });
    let mut c = Container {
        name: name.clone(),
        image: text_of(spec.get("image")),
        requests: map_of(spec.path(&["resources", "requests"])),
        restart_policy: text_of(spec.get("restartPolicy")),
        ..Container::default()
    };
    for var in spec.get("env").map(Node::items).unwrap_or_default() {
        let Some(key) = text_of(var.get("name")) else {
            continue;
        };
        let value = text_of(var.get("value")).unwrap_or_default();
        c.env.insert(key.clone(), value.clone());
        if var.get("valueFrom").is_none() {
            let anchor = var.get("value").unwrap_or(var);
            facts.settings.push(setting(
                src,
                SettingSource::Env,
                owner,
                &name,
                key,
                value,
                anchor,
            ));
        }
    }
    let args = spec.get("args").map(Node::items).unwrap_or_default();
    for (i, arg) in args.iter().enumerate() {
        let Some(text) = arg.text() else { continue };
        c.args.push(text.to_string());
        let Some(flag) = text.strip_prefix('-') else {
            continue;
        };
        let (key, value) = match text.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => match args.get(i + 1).and_then(Node::text) {
                Some(next) if !next.starts_with('-') => (text.to_string(), next.to_string()),
                _ if !flag.is_empty() => (text.to_string(), "true".to_string()),
                _ => continue,
            },
        };
        facts.settings.push(setting(
            src,
            SettingSource::Arg,
            owner,
            &name,
            key,
            value,
            arg,
        ));
    }
    if let Some(status) = status {
        c.ready = status.get("ready").and_then(Node::boolean);
        c.restart_count = int_of(status.get("restartCount"));
        c.last_termination_reason = text_of(status.path(&["lastState", "terminated", "reason"]));
        if let Some((state, detail)) = status
            .get("state")
            .and_then(|s| s.entries().first())
            .map(|(k, v)| (k.clone(), v))
        {
            c.state = Some(state);
            c.reason = text_of(detail.get("reason"));
            c.message = text_of(detail.get("message"));
            state_message(src, detail, owner, facts);
        }
        if let Some(last) = status.path(&["lastState", "terminated"]) {
            state_message(src, last, owner, facts);
        }
    }
    c
}

/// A container state's `reason: message` as an `ObjectField` message about the pod.
fn state_message(src: &Source<'_>, detail: &Node, owner: &ObjectRef, facts: &mut Facts) {
    let reason = text_of(detail.get("reason"));
    let text_message = text_of(detail.get("message"));
    let text = match (&reason, &text_message) {
        (Some(r), Some(m)) => format!("{r}: {m}"),
        (Some(only), None) | (None, Some(only)) => only.clone(),
        (None, None) => return,
    };
    let anchor = detail
        .get("message")
        .or(detail.get("reason"))
        .unwrap_or(detail);
    let mut msg = message(
        MessageOrigin::ObjectField,
        text,
        src.evidence(anchor),
        owner,
    );
    msg.reason = reason;
    msg.time = text_of(detail.get("finishedAt")).or_else(|| text_of(detail.get("startedAt")));
    facts.messages.push(msg);
}

pub fn setting(
    src: &Source<'_>,
    source: SettingSource,
    owner: &ObjectRef,
    container: &str,
    key: String,
    value: String,
    anchor: &Node,
) -> Setting {
    Setting {
        source,
        owner: Some(owner.clone()),
        container: (!container.is_empty()).then(|| container.to_string()),
        key,
        value,
        evidence: src.evidence(anchor),
    }
}
