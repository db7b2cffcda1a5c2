//! `kubectl describe pod` into a [`Pod`]: phase, node, labels, annotations, owner,
//! containers (image, state and reason, readiness, requests, ports and host ports,
//! environment, args), conditions, PVC claims, node selector, tolerations, topology spread
//! constraints and QoS class. Free-text fields (the pod's `Reason`/`Message`, container state
//! reasons and messages) also become messages.

use crate::facts::{
    Container, Meta, ObjectRef, Pod, Setting, SettingSource, Toleration, TopologySpread,
};

use super::describe::{self, section, Section, Tree};
use super::{Part, Sink};

pub fn read(part: &Part<'_>, sections: &[Section<'_>], sink: &mut Sink) -> Pod {
    let value = |key: &str| {
        section(sections, key)
            .map(Section::value)
            .filter(|v| !v.is_empty() && !matches!(*v, "<none>" | "<unset>"))
    };
    let name = value("Name").unwrap_or_default();
    let namespace = value("Namespace").unwrap_or("default");
    let mut pod = Pod {
        meta: Meta {
            name: name.to_string(),
            namespace: Some(namespace.to_string()),
            labels: describe::labels(section(sections, "Labels")),
            annotations: describe::annotations(section(sections, "Annotations")),
            annotations_cut: section(sections, "Annotations").is_none(),
            owners: value("Controlled By")
                .and_then(|o| super::segment::object_ref(o, Some(namespace)))
                .into_iter()
                .collect(),
            evidence: section(sections, "Name").map(|s| part.evidence(s.line)),
            ..Meta::default()
        },
        phase: value("Status")
            .and_then(|s| s.split_whitespace().next())
            .map(str::to_string),
        node_name: value("Node")
            .map(|n| n.split('/').next().unwrap_or(n).to_string())
            .filter(|n| !n.is_empty()),
        nominated_node: value("Nominated Node Name").map(str::to_string),
        node_selector: describe::labels(section(sections, "Node-Selectors")),
        service_account: value("Service Account").map(str::to_string),
        qos_class: value("QoS Class").map(str::to_string),
        ..Pod::default()
    };
    let object = pod.object_ref();
    for key in ["Reason", "Message"] {
        if let Some(s) = section(sections, key).filter(|s| !s.value().is_empty()) {
            let reason = (key == "Reason").then(|| s.value().to_string());
            describe::field_message(part, s.line, s.value().to_string(), reason, &object, sink);
        }
    }
    if let Some(s) = section(sections, "Tolerations") {
        pod.tolerations = s.items().filter_map(|(_, v)| toleration(v)).collect();
    }
    if let Some(s) = section(sections, "Topology Spread Constraints") {
        pod.topology_spread = s.items().filter_map(|(_, v)| topology_spread(v)).collect();
    }
    let mut host_ports = Vec::new();
    if let Some(s) = section(sections, "Containers") {
        for c in containers(part, s, &object, sink) {
            host_ports.extend(c.host_ports);
            pod.containers.push(c.container);
        }
    }
    if let Some(s) = section(sections, "Init Containers") {
        for c in containers(part, s, &object, sink) {
            host_ports.extend(c.host_ports);
            pod.init_containers.push(c.container);
        }
    }
    host_ports.sort_unstable();
    host_ports.dedup();
    pod.host_ports = host_ports;
    if let Some(s) = section(sections, "Conditions") {
        pod.conditions = describe::conditions(part, s);
    }
    if let Some(s) = section(sections, "Volumes") {
        let tree = Tree::parse(part, s.body.clone());
        for &root in &tree.roots {
            if let Some(claim) = tree.child(root, "ClaimName") {
                pod.pvc_names.push(tree.node(claim).value.to_string());
            }
        }
    }
    pod
}

fn containers(
    part: &Part<'_>,
    s: &Section<'_>,
    object: &ObjectRef,
    sink: &mut Sink,
) -> Vec<ContainerWithPorts> {
    let tree = Tree::parse(part, s.body.clone());
    tree.roots
        .iter()
        .filter_map(|&root| {
            let node = tree.node(root);
            let name = node.key?;
            Some(container(part, &tree, root, name, object, sink))
        })
        .collect()
}

/// `Container` plus its host ports.
pub struct ContainerWithPorts {
    pub container: Container,
    pub host_ports: Vec<u32>,
}

pub fn container(
    part: &Part<'_>,
    tree: &Tree<'_>,
    id: usize,
    name: &str,
    object: &ObjectRef,
    sink: &mut Sink,
) -> ContainerWithPorts {
    let field = |key: &str| {
        tree.child(id, key)
            .map(|c| tree.node(c).value)
            .filter(|v| !v.is_empty() && *v != "<none>")
    };
    let mut c = Container {
        name: name.to_string(),
        image: field("Image").map(str::to_string),
        ready: field("Ready").map(|r| r.eq_ignore_ascii_case("true")),
        restart_count: field("Restart Count").and_then(|n| n.parse().ok()),
        ..Container::default()
    };
    if let Some(state) = tree.child(id, "State") {
        let node = tree.node(state);
        c.state = Some(node.value.to_ascii_lowercase()).filter(|s| !s.is_empty());
        let (reason, message) = state_detail(part, tree, state, object, sink);
        c.reason = reason;
        c.message = message;
    }
    if let Some(last) = tree.child(id, "Last State") {
        let (reason, _) = state_detail(part, tree, last, object, sink);
        if tree.node(last).value.eq_ignore_ascii_case("terminated") {
            c.last_termination_reason = reason;
        }
    }
    if let Some(requests) = tree.child(id, "Requests") {
        c.requests = tree.map_of(requests);
    }
    if let Some(env) = tree.child(id, "Environment") {
        for var in tree.children(env) {
            let Some(key) = var.key else { continue };
            // `<set to the key 'k' in secret 's'>` and the like come from `valueFrom`.
            let from_ref = var.value.starts_with('<');
            let value = if from_ref { "" } else { var.value };
            c.env.insert(key.to_string(), value.to_string());
            if !from_ref {
                sink.facts.settings.push(Setting {
                    source: SettingSource::Env,
                    owner: Some(object.clone()),
                    container: Some(name.to_string()),
                    key: key.to_string(),
                    value: value.to_string(),
                    evidence: part.evidence(var.line),
                });
            }
        }
    }
    for key in ["Command", "Args"] {
        let Some(list) = tree.child(id, key) else {
            continue;
        };
        let items: Vec<(usize, &str)> = tree.children(list).map(|n| (n.line, n.raw)).collect();
        for (k, (line, text)) in items.iter().enumerate() {
            c.args.push(text.to_string());
            if key == "Command" {
                continue;
            }
            if let Some((flag, value)) = flag_setting(text, items.get(k + 1).map(|(_, t)| *t)) {
                sink.facts.settings.push(Setting {
                    source: SettingSource::Arg,
                    owner: Some(object.clone()),
                    container: Some(name.to_string()),
                    key: flag,
                    value,
                    evidence: part.evidence(*line),
                });
            }
        }
    }
    let host_ports = ["Host Port", "Host Ports"]
        .iter()
        .filter_map(|k| field(k))
        .flat_map(|v| v.split(','))
        .filter_map(|p| p.trim().split('/').next()?.parse::<u32>().ok())
        .filter(|p| *p != 0)
        .collect();
    ContainerWithPorts {
        container: c,
        host_ports,
    }
}

/// kubectl prints tolerations as `key[=value][:effect][ op=Exists][ for Ns]`.
pub fn toleration(text: &str) -> Option<Toleration> {
    let text = text.split(" for ").next().unwrap_or(text).trim();
    let (spec, exists) = match text.strip_suffix("op=Exists") {
        Some(spec) => (spec.trim(), true),
        None => (text, false),
    };
    let (kv, effect) = match spec.rsplit_once(':') {
        Some((kv, effect)) if matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") => {
            (kv, Some(effect.to_string()))
        }
        _ => (spec, None),
    };
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (Some(k.to_string()), Some(v.to_string())),
        None if kv.is_empty() => (None, None),
        None => (Some(kv.to_string()), None),
    };
    if key.is_none() && effect.is_none() && !exists {
        return None;
    }
    Some(Toleration {
        key,
        operator: Some(if exists { "Exists" } else { "Equal" }.to_string()),
        value,
        effect,
    })
}

/// `topology.kubernetes.io/zone:DoNotSchedule when max skew 1 is exceeded for selector app=x`.
fn topology_spread(text: &str) -> Option<TopologySpread> {
    let (head, rest) = text.split_once(' ').unwrap_or((text, ""));
    let (key, when) = head.rsplit_once(':')?;
    let max_skew = rest
        .split("max skew ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok());
    let label_selector = rest
        .split_once("for selector ")
        .map(|(_, sel)| super::tables::parse_selector(sel.trim()));
    Some(TopologySpread {
        topology_key: key.to_string(),
        max_skew,
        when_unsatisfiable: Some(when.to_string()),
        label_selector,
    })
}

/// A container state's `Reason` (and `Message`): kept, and an `ObjectField` message
/// `reason: message` about the pod.
fn state_detail(
    part: &Part<'_>,
    tree: &Tree<'_>,
    state: usize,
    object: &ObjectRef,
    sink: &mut Sink,
) -> (Option<String>, Option<String>) {
    let reason = tree.child(state, "Reason").map(|r| tree.node(r));
    let message = tree.child(state, "Message").map(|m| tree.node(m));
    let text = match (reason, message) {
        (Some(r), Some(m)) => format!("{}: {}", r.value, m.value),
        (Some(only), None) | (None, Some(only)) => only.value.to_string(),
        (None, None) => return (None, None),
    };
    let line = message.or(reason).map_or(tree.node(state).line, |n| n.line);
    describe::field_message(
        part,
        line,
        text,
        reason.map(|r| r.value.to_string()),
        object,
        sink,
    );
    (
        reason.map(|r| r.value.to_string()),
        message.map(|m| m.value.to_string()),
    )
}

/// `--flag=value`, `--flag value`, or a bare `--flag` (true).
fn flag_setting(text: &str, next: Option<&str>) -> Option<(String, String)> {
    let flag = text.strip_prefix('-')?;
    if flag.is_empty() {
        return None;
    }
    Some(match text.split_once('=') {
        Some((k, v)) => (k.to_string(), v.to_string()),
        None => match next {
            Some(next) if !next.starts_with('-') => (text.to_string(), next.to_string()),
            _ => (text.to_string(), "true".to_string()),
        },
    })
}
