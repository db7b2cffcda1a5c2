//! `kubectl describe node` into a [`Node`]: labels, annotations, taints, unschedulable, the
//! Conditions table (each also a `Type=Status Reason: message` message), capacity,
//! allocatable, provider ID, and the pods of the Non-terminated Pods table.

use crate::facts::{Condition, Message, MessageOrigin, Meta, Node, ObjectRef};

use super::describe::{self, section, Section, Tree};
use super::tables::{is_separator, split_gaps};
use super::{Part, Sink};

pub fn read(part: &Part<'_>, sections: &[Section<'_>], sink: &mut Sink) -> Node {
    let value = |key: &str| {
        section(sections, key)
            .map(Section::value)
            .filter(|v| !v.is_empty() && *v != "<none>")
    };
    let name = value("Name").unwrap_or_default().to_string();
    let mut node = Node {
        meta: Meta {
            name: name.clone(),
            labels: describe::labels(section(sections, "Labels")),
            annotations: describe::annotations(section(sections, "Annotations")),
            annotations_cut: section(sections, "Annotations").is_none(),
            evidence: section(sections, "Name").map(|s| part.evidence(s.line)),
            ..Meta::default()
        },
        taints: section(sections, "Taints")
            .into_iter()
            .flat_map(|s| s.items())
            .filter_map(|(_, t)| describe::taint(t))
            .collect(),
        unschedulable: value("Unschedulable").is_some_and(|u| u.eq_ignore_ascii_case("true")),
        provider_id: value("ProviderID").map(str::to_string),
        ..Node::default()
    };
    let object = ObjectRef::new("Node", None, &name);
    for (key, map) in [
        ("Capacity", &mut node.capacity),
        ("Allocatable", &mut node.allocatable),
    ] {
        if let Some(s) = section(sections, key) {
            let tree = Tree::parse(part, s.body.clone());
            for &root in &tree.roots {
                let n = tree.node(root);
                if let Some(k) = n.key {
                    map.insert(k.to_string(), n.value.to_string());
                }
            }
        }
    }
    if let Some(s) = section(sections, "Conditions") {
        node.conditions = describe::conditions(part, s);
        for c in &node.conditions {
            condition_message(c, &object, sink);
        }
    }
    if let Some(s) = section(sections, "Non-terminated Pods") {
        node.pods = pods_table(part, s);
    }
    node
}

/// `Type=Status Reason: message`, the form rules match conditions on.
pub fn condition_text(c: &Condition) -> String {
    let mut text = format!("{}={}", c.condition_type, c.status);
    if let Some(reason) = &c.reason {
        text.push(' ');
        text.push_str(reason);
    }
    if let Some(message) = &c.message {
        text.push_str(": ");
        text.push_str(message);
    }
    text
}

fn condition_message(c: &Condition, object: &ObjectRef, sink: &mut Sink) {
    let Some(evidence) = c.evidence.clone() else {
        return;
    };
    if c.reason.is_none() && c.message.is_none() {
        return;
    }
    sink.message(Message {
        origin: MessageOrigin::Condition,
        text: condition_text(c),
        evidence,
        object: Some(object.clone()),
        reason: c.reason.clone(),
        ..Message::default()
    });
}

/// `Namespace  Name  CPU Requests ...` rows: the first two cells name the pod.
fn pods_table(part: &Part<'_>, s: &Section<'_>) -> Vec<ObjectRef> {
    s.body
        .clone()
        .skip(1)
        .filter(|&k| !is_separator(part.lines[k]))
        .filter_map(|k| {
            let cells = split_gaps(part.lines[k].trim());
            let (namespace, name) = (cells.first()?, cells.get(1)?);
            (!name.contains(' ')).then(|| ObjectRef::new("Pod", Some(namespace), name))
        })
        .collect()
}
