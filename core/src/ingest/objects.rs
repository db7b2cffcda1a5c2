//! Kubernetes objects: YAML or JSON text (one object, `---` multi-document streams, `kind: List`
//! and `*List` kinds, Event lists, helm values) and the generic `kubectl describe` printout of
//! custom resources (NodePool, NodeClaim, EC2NodeClass, ...), turned into typed facts.
//!
//! The segmenter in `ingest/mod.rs` decides which lines are such a segment and hands them here;
//! this module owns what the objects mean. Every notation is read into one tree (`tree.rs`)
//! whose nodes keep their line, and one mapper turns trees into facts, so an object pasted as
//! YAML, as JSON or as a describe printout gives the same facts. Broken input becomes an input
//! error with its line, and its lines are still kept as messages for the signal scan.

use crate::document::{Document, Evidence, InputError};
use crate::facts::{
    Collected, EmptyList, Facts, Message, MessageOrigin, ObjectRef, Setting, SettingSource,
};

mod common;
mod describe;
mod json;
mod karpenter;
mod kube;
pub(crate) mod number;
mod tree;
mod yaml;

use tree::{Node, Value};

/// A run of lines of one document: `text` starts at 0-based line `first_index` of `doc.text`.
#[derive(Debug, Clone, Copy)]
pub struct Segment<'a> {
    pub doc: &'a Document,
    pub first_index: usize,
    pub text: &'a str,
}

impl Segment<'_> {
    /// Evidence for the segment's line at 0-based `offset`, with its original line number.
    pub fn evidence(&self, offset: usize, text: &str) -> Evidence {
        Evidence::new(
            &self.doc.label,
            self.doc.original_line(self.first_index + offset),
            text.trim(),
        )
    }
}

/// A YAML or JSON segment holding Kubernetes objects (or a document without `kind`, such as
/// helm values).
pub fn ingest_structured(segment: Segment<'_>, facts: &mut Facts) {
    let src = Source::new(segment);
    let first = segment
        .text
        .trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    if first.starts_with(['{', '[']) {
        ingest_json(&src, facts);
    } else {
        ingest_yaml(&src, facts);
    }
}

/// The generic `kubectl describe` printout of a custom resource (`Name:`, `API Version:`,
/// `Kind:`, `Spec:` ... indented `Key:  value` lines). The segmenter parses the `Events:`
/// table itself; should one still be here, its lines are kept as messages.
pub fn ingest_generic_describe(segment: Segment<'_>, facts: &mut Facts) {
    ingest_describe(segment, None, facts);
}

/// A generic describe printout that lost its header (`Name:` ... `Kind:`), of the `kind` its
/// content or command shows: read as that kind, named `name` (the command's object or a
/// placeholder).
pub fn ingest_describe_as(segment: Segment<'_>, kind: &str, name: &str, facts: &mut Facts) {
    ingest_describe(segment, Some((kind, name)), facts);
}

fn ingest_describe(segment: Segment<'_>, assumed: Option<(&str, &str)>, facts: &mut Facts) {
    let src = Source::new(segment);
    for mut object in describe::parse(segment.text) {
        if let (Some((kind, name)), Value::Map(root)) = (assumed, &mut object.root.value) {
            assume_kind_and_name(root, kind, name, object.first_line);
        }
        let kind = object.root.get("kind").and_then(Node::string);
        let api_version = object.root.get("apiVersion").and_then(Node::string);
        let modelled = kind
            .as_deref()
            .is_some_and(|k| map_object(&src, &object.root, k, api_version.as_deref(), facts));
        if !modelled {
            src.keep_lines(object.first_line, object.last_line, facts);
        }
        if let Some((first, last)) = object.events_lines {
            src.keep_lines(first, last, facts);
        }
    }
}

/// The value a `kubectl get <kind> <name> -o jsonpath='{.spec.disruption}'` printed: one
/// JSON value (a map or a list) or one bare scalar, read as the object holding it at `path`
/// and nothing else. False when it is not one value.
pub fn ingest_fragment(
    segment: Segment<'_>,
    object: &ObjectRef,
    path: &[String],
    facts: &mut Facts,
) -> bool {
    let src = Source::new(segment);
    let text = segment.text.trim();
    let value = if text.starts_with(['{', '[']) {
        match json::parse_stream(segment.text).as_slice() {
            [json::Item::Value(node)] => node.clone(),
            _ => return false,
        }
    } else if !text.is_empty() && !text.contains(char::is_whitespace) {
        Node::plain(text, 0)
    } else {
        return false;
    };
    let mut root = value;
    for key in path.iter().rev() {
        root = Node::new(Value::Map(vec![(key.clone(), root)]), 0);
    }
    let Value::Map(entries) = &mut root.value else {
        return false;
    };
    entries.push(("kind".into(), Node::new(Value::Str(object.kind.clone()), 0)));
    let mut metadata = vec![("name".into(), Node::new(Value::Str(object.name.clone()), 0))];
    if let Some(namespace) = &object.namespace {
        metadata.push((
            "namespace".into(),
            Node::new(Value::Str(namespace.clone()), 0),
        ));
    }
    // `{.metadata.annotations}` printed the value inside the metadata.
    match entries.iter_mut().find(|(k, _)| k == "metadata") {
        Some((
            _,
            Node {
                value: Value::Map(known),
                ..
            },
        )) => known.extend(metadata),
        _ => entries.push(("metadata".into(), Node::new(Value::Map(metadata), 0))),
    }
    map_object(&src, &root, &object.kind, None, facts)
}

/// The piece of an object's YAML that `kubectl get <kind> <name> -o yaml | grep -A10 status`
/// printed: `status:` and what follows, or a key cut out of it (`  conditions:`), indented as
/// in the object. Read as the object `kind`/`name` holding what the piece shows; the keys of a
/// cut-out piece are the status's when one is (conditions, the subnets, security groups and
/// AMIs Karpenter resolved), else the spec's. False when it is not YAML of one map.
pub fn ingest_yaml_piece(segment: Segment<'_>, kind: &str, name: &str, facts: &mut Facts) -> bool {
    const STATUS_KEYS: &[&str] = &[
        "conditions",
        "subnets",
        "securityGroups",
        "amis",
        "capacityReservations",
    ];
    let src = Source::new(segment);
    let (documents, error) = yaml::parse_documents(segment.text, 0);
    let ([root], None) = (documents.as_slice(), error) else {
        return false;
    };
    let mut root = root.clone();
    let Value::Map(entries) = &mut root.value else {
        return false;
    };
    if entries
        .iter()
        .any(|(k, _)| k == "kind" || k == "apiVersion")
    {
        return false;
    }
    if !entries.iter().any(|(k, _)| k == "status" || k == "spec") {
        // Keys cut out of one of them: the status's when one is a status key, else the spec's
        // (`sed -n '/blockDeviceMappings/,/role/p'`).
        let status = entries
            .iter()
            .any(|(k, _)| STATUS_KEYS.contains(&k.as_str()));
        let keys = std::mem::take(entries);
        let line = keys.first().map_or(root.line, |(_, n)| n.line);
        let parent = if status { "status" } else { "spec" };
        // A NodePool's requirements and taints sit in spec.template.spec
        // (`sed -n '/requirements:/,$p'`).
        let template = kind == "NodePool"
            && keys.first().is_some_and(|(k, _)| {
                matches!(
                    k.as_str(),
                    "requirements" | "taints" | "startupTaints" | "nodeClassRef"
                )
            });
        let value = if template {
            let inner = vec![("spec".to_string(), Node::new(Value::Map(keys), line))];
            Value::Map(vec![(
                "template".into(),
                Node::new(Value::Map(inner), line),
            )])
        } else {
            Value::Map(keys)
        };
        entries.push((parent.into(), Node::new(value, line)));
    }
    if !entries.iter().any(|(k, _)| k == "metadata") {
        entries.push((
            "metadata".into(),
            Node::new(Value::Map(Vec::new()), root.line),
        ));
    }
    let line = root.line;
    if let Value::Map(entries) = &mut root.value {
        assume_kind_and_name(entries, kind, name, line);
    }
    map_object(&src, &root, kind, None, facts)
}

/// Fill in the `kind` and `metadata.name` a header-less printout does not show.
fn assume_kind_and_name(root: &mut Vec<(String, Node)>, kind: &str, name: &str, line: usize) {
    // Copied from `Conditions:` on: they are the status's.
    if !root.iter().any(|(k, _)| k == "status") {
        if let Some(at) = root.iter().position(|(k, _)| k == "conditions") {
            let (key, conditions) = root.remove(at);
            let status_line = conditions.line;
            root.push((
                "status".into(),
                Node::new(Value::Map(vec![(key, conditions)]), status_line),
            ));
        }
    }
    if !root.iter().any(|(k, _)| k == "kind") {
        root.push(("kind".into(), Node::new(Value::Str(kind.into()), line)));
    }
    let Some((_, metadata)) = root.iter_mut().find(|(k, _)| k == "metadata") else {
        return;
    };
    if let Value::Map(entries) = &mut metadata.value {
        if !entries.iter().any(|(k, _)| k == "name") {
            entries.push(("name".into(), Node::new(Value::Str(name.into()), line)));
        }
    }
}

/// The segment's text with line and evidence lookups.
struct Source<'a> {
    segment: Segment<'a>,
    /// Byte offset of each line start in `segment.text`.
    line_starts: Vec<usize>,
}

/// Lines longer than this are quoted by the part that matters (one-line JSON), not in full.
const LONG_LINE: usize = 200;

/// A value written over more lines (a script in user data) is quoted by its first lines.
const MAX_QUOTED_LINES: usize = 8;

impl<'a> Source<'a> {
    fn new(segment: Segment<'a>) -> Self {
        let line_starts = std::iter::once(0)
            .chain(segment.text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < segment.text.len() || i == 0)
            .collect();
        Source {
            segment,
            line_starts,
        }
    }

    fn label(&self) -> &str {
        &self.segment.doc.label
    }

    fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    fn line(&self, index: usize) -> Option<&'a str> {
        let start = *self.line_starts.get(index)?;
        let end = self
            .line_starts
            .get(index + 1)
            .map_or(self.segment.text.len(), |next| next - 1);
        let line = &self.segment.text[start..end];
        Some(line.strip_suffix('\r').unwrap_or(line))
    }

    /// The 0-based segment line a byte offset is on.
    fn line_of_offset(&self, offset: usize) -> usize {
        self.line_starts
            .partition_point(|&start| start <= offset)
            .saturating_sub(1)
    }

    fn original_line(&self, index: usize) -> usize {
        self.segment
            .doc
            .original_line(self.segment.first_index + index)
    }

    fn is_long_line(&self, index: usize) -> bool {
        self.line(index).is_some_and(|l| l.trim().len() > LONG_LINE)
    }

    fn evidence_at(&self, index: usize) -> Evidence {
        self.segment
            .evidence(index, self.line(index).unwrap_or_default())
    }

    /// The line a node was written on; on a long line (one-line JSON) just the node's text;
    /// for a scalar written over several lines, those lines joined, so the quote is whole.
    fn evidence(&self, node: &Node) -> Evidence {
        match node.span {
            Some((start, end)) if self.is_long_line(node.line) => self
                .segment
                .evidence(node.line, &self.segment.text[start..end]),
            _ if node.last_line > node.line => {
                let last = node.last_line.min(node.line + MAX_QUOTED_LINES - 1);
                let text: Vec<&str> = (node.line..=last)
                    .filter_map(|i| self.line(i))
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .collect();
                self.segment.evidence(node.line, &text.join(" "))
            }
            _ => self.evidence_at(node.line),
        }
    }

    /// Lines nothing here models are still messages, so catalogue signals in them count.
    fn keep_lines(&self, first: usize, last: usize, facts: &mut Facts) {
        for index in first..=last.min(self.line_count().saturating_sub(1)) {
            let Some(line) = self.line(index) else { break };
            let text = line.trim();
            if text.chars().any(char::is_alphanumeric) {
                facts
                    .messages
                    .push(unrecognised(text, self.segment.evidence(index, text)));
            }
        }
    }

    /// Keeps a node's text: its lines, or its own text when it shares a line with others.
    fn keep_node(&self, node: &Node, last_line: usize, facts: &mut Facts) {
        match node.span {
            Some((start, end)) if self.line_of_offset(end.saturating_sub(1)) == node.line => {
                let text = self.segment.text[start..end].trim();
                facts
                    .messages
                    .push(unrecognised(text, self.segment.evidence(node.line, text)));
            }
            _ => self.keep_lines(node.line, last_line, facts),
        }
    }

    fn error(&self, line: usize, message: String) -> InputError {
        InputError {
            source: self.label().to_string(),
            line: self.original_line(line),
            message,
        }
    }
}

fn unrecognised(text: &str, evidence: Evidence) -> Message {
    Message {
        origin: MessageOrigin::Unrecognised,
        text: text.to_string(),
        evidence,
        object: None,
        nodepool: None,
        reason: None,
        component: None,
        time: None,
    }
}

fn ingest_json(src: &Source<'_>, facts: &mut Facts) {
    for item in json::parse_stream(src.segment.text) {
        match item {
            json::Item::Value(root) => {
                let last = root.span.map_or(root.line, |(_, end)| {
                    src.line_of_offset(end.saturating_sub(1))
                });
                ingest_root(src, &root, last, None, facts);
            }
            json::Item::Error(error) => {
                facts
                    .input_errors
                    .push(src.error(error.line, error.message));
                let last = error
                    .resume_line
                    .map_or(src.line_count().saturating_sub(1), |l| l.saturating_sub(1));
                src.keep_lines(error.first_line, last, facts);
            }
        }
    }
}

fn ingest_yaml(src: &Source<'_>, facts: &mut Facts) {
    let chunks = document_chunks(src);
    let count = chunks.len();
    for (n, (first, last)) in chunks.into_iter().enumerate() {
        // A shell prompt line (`$ kubectl get nodepool -o yaml`) before the YAML is not YAML.
        let mut start = first;
        while start <= last
            && src
                .line(start)
                .is_some_and(|l| l.trim_start().starts_with("$ "))
        {
            src.keep_lines(start, start, facts);
            start += 1;
        }
        if start > last {
            continue;
        }
        let mut begin = src.line_starts[start];
        if src.segment.text[begin..].starts_with('\u{feff}') {
            begin += '\u{feff}'.len_utf8();
        }
        let end = src
            .line_starts
            .get(last + 1)
            .copied()
            .unwrap_or(src.segment.text.len());
        let (documents, error) = yaml::parse_documents(&src.segment.text[begin..end], start);
        if let Some(error) = error {
            let which = if count > 1 {
                format!("YAML document {} of {count}", n + 1)
            } else {
                "YAML".to_string()
            };
            let message = error.message.replacen("YAML", &which, 1);
            facts.input_errors.push(src.error(error.line, message));
            src.keep_lines(start, last, facts);
            continue;
        }
        for root in &documents {
            ingest_root(src, root, last, Some(start), facts);
        }
    }
}

/// The line ranges of the documents of a `---` stream.
fn document_chunks(src: &Source<'_>) -> Vec<(usize, usize)> {
    let mut chunks = Vec::new();
    let mut start = 0;
    for index in 0..src.line_count() {
        let line = src.line(index).unwrap_or_default();
        let is_marker = line
            .strip_prefix("---")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']));
        if is_marker && index > start {
            chunks.push((start, index - 1));
            start = index;
        }
    }
    if start < src.line_count() {
        chunks.push((start, src.line_count() - 1));
    }
    chunks
}

/// One parsed document (or JSON value) spanning lines up to `last`; `yaml_start` is the first
/// line of a YAML document (where a helm command line may precede it).
fn ingest_root(
    src: &Source<'_>,
    root: &Node,
    last: usize,
    yaml_start: Option<usize>,
    facts: &mut Facts,
) {
    let kind = root.get("kind").and_then(Node::string);
    let api_version = root.get("apiVersion").and_then(Node::string);
    match (&root.value, kind, root.get("items")) {
        (Value::Map(_), Some(kind), Some(items)) if kind.ends_with("List") => {
            ingest_list(src, items, &kind, api_version.as_deref(), last, facts);
        }
        (Value::Map(_), Some(kind), _) => {
            if !map_object(src, root, &kind, api_version.as_deref(), facts) {
                src.keep_node(root, last, facts);
            }
        }
        // `kubectl get nodes -o json | jq '.items'`: a list's items without the list.
        (Value::Seq(items), None, _)
            if !items.is_empty()
                && items
                    .iter()
                    .all(|i| i.get("kind").is_some() && i.get("apiVersion").is_some()) =>
        {
            ingest_list(src, root, "List", None, last, facts);
        }
        (Value::Map(_) | Value::Seq(_), None, _) => {
            let release = yaml_start.and_then(|start| helm_release(src, start));
            let owner = release.map(|r| ObjectRef::new("HelmRelease", None, &r));
            flatten_settings(src, root, String::new(), owner.as_ref(), facts);
            src.keep_node(root, last, facts);
        }
        _ => src.keep_node(root, last, facts),
    }
}

/// `kind: List` (items carry their kind) or a typed list such as `EventList` or the API
/// server's `NodeClaimList` (items carry none).
fn ingest_list(
    src: &Source<'_>,
    items_node: &Node,
    kind: &str,
    api_version: Option<&str>,
    last: usize,
    facts: &mut Facts,
) {
    let items = items_node.items();
    let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
    if items.is_empty() {
        let resource = item_kind.map(plural);
        if let Some(collected) = item_kind.and_then(collected_by) {
            facts.collected.insert(collected);
        }
        facts.empty_lists.push(EmptyList {
            resource,
            namespace: None,
            evidence: src.evidence(items_node),
        });
        return;
    }
    for (i, item) in items.iter().enumerate() {
        let kind = item
            .get("kind")
            .and_then(Node::string)
            .or(item_kind.map(str::to_string));
        let version = item
            .get("apiVersion")
            .and_then(Node::string)
            .or(api_version.map(str::to_string));
        let modelled = kind
            .as_deref()
            .is_some_and(|k| map_object(src, item, k, version.as_deref(), facts));
        if !modelled {
            let item_last = items
                .get(i + 1)
                .map_or(last, |next| next.line.saturating_sub(1));
            src.keep_node(item, item_last.max(item.line), facts);
        }
    }
}

/// `NodeClaim` -> `nodeclaims`, `EC2NodeClass` -> `ec2nodeclasses`, as kubectl names them.
fn plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if lower.ends_with('s') {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y') {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

fn collected_by(kind: &str) -> Option<Collected> {
    Some(match kind {
        "NodeClaim" | "Machine" => Collected::NodeClaims,
        "NodePool" | "Provisioner" => Collected::NodePools,
        "EC2NodeClass" | "AWSNodeTemplate" => Collected::NodeClasses,
        "Node" => Collected::Nodes,
        "PodDisruptionBudget" => Collected::Pdbs,
        _ => return None,
    })
}

/// The typed facts of one object; `false` for a kind nothing models.
fn map_object(
    src: &Source<'_>,
    obj: &Node,
    kind: &str,
    api_version: Option<&str>,
    facts: &mut Facts,
) -> bool {
    match kind {
        "Pod" => kube::pod(src, obj, api_version, facts),
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => {
            kube::workload(src, obj, kind, api_version, facts)
        }
        "Node" => kube::node(src, obj, api_version, facts),
        "PodDisruptionBudget" => kube::pdb(src, obj, api_version, facts),
        "Event" => kube::event(src, obj, facts),
        "PersistentVolume" => kube::persistent_volume(src, obj, api_version, facts),
        "PersistentVolumeClaim" => kube::persistent_volume_claim(src, obj, api_version, facts),
        "StorageClass" => kube::storage_class(src, obj, api_version, facts),
        "SecurityGroupPolicy" => kube::security_group_policy(src, obj, api_version, facts),
        "ServiceAccount" => kube::service_account(src, obj, api_version, facts),
        "CustomResourceDefinition" => kube::crd(src, obj, api_version, facts),
        "ConfigMap" => kube::config_map(src, obj, api_version, facts),
        "NodePool" | "Provisioner" => karpenter::nodepool(src, obj, kind, api_version, facts),
        "NodeClaim" | "Machine" => karpenter::nodeclaim(src, obj, kind, api_version, facts),
        "EC2NodeClass" | "AWSNodeTemplate" => {
            karpenter::nodeclass(src, obj, kind, api_version, facts)
        }
        _ => return false,
    }
    true
}

/// Helm prints this header above the values; it is not a value.
const HELM_HEADERS: &[&str] = &["USER-SUPPLIED VALUES", "COMPUTED VALUES"];

/// Every scalar of a document without `kind` as a dotted-path setting
/// (`settings.isolatedVPC`, `tolerations[0].key`).
fn flatten_settings(
    src: &Source<'_>,
    node: &Node,
    path: String,
    owner: Option<&ObjectRef>,
    facts: &mut Facts,
) {
    match &node.value {
        Value::Map(entries) => {
            for (key, child) in entries {
                if path.is_empty() && HELM_HEADERS.contains(&key.as_str()) {
                    continue;
                }
                let child_path = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                flatten_settings(src, child, child_path, owner, facts);
            }
        }
        Value::Seq(items) => {
            for (i, child) in items.iter().enumerate() {
                flatten_settings(src, child, format!("{path}[{i}]"), owner, facts);
            }
        }
        Value::Null => {}
        _ => facts.settings.push(Setting {
            source: SettingSource::Values,
            owner: owner.cloned(),
            container: None,
            key: path,
            value: node.text().unwrap_or_default().to_string(),
            evidence: src.evidence(node),
        }),
    }
}

/// The helm release a values document belongs to, when the paste shows the command that
/// printed it (`$ helm get values aws-node-termination-handler -n kube-system`) on one of the
/// few lines before it.
fn helm_release(src: &Source<'_>, start: usize) -> Option<String> {
    let mut before: Vec<&str> = (0..start).rev().filter_map(|i| src.line(i)).collect();
    if before.len() < 2 {
        let doc_lines = src.segment.doc.text.lines().take(src.segment.first_index);
        before.extend(doc_lines.collect::<Vec<_>>().into_iter().rev());
    }
    before
        .into_iter()
        .filter(|l| !l.trim().is_empty())
        .take(2)
        .find_map(release_of_command)
}

/// `helm get values [flags] <release> [flags]` -> the release.
fn release_of_command(line: &str) -> Option<String> {
    let (_, args) = line.split_once("helm get values")?;
    let mut words = args.split_whitespace();
    while let Some(word) = words.next() {
        match word {
            "-n" | "--namespace" | "--revision" | "-o" | "--output" | "--kube-context" => {
                words.next();
            }
            w if w.starts_with('-') => {}
            w => return Some(w.to_string()),
        }
    }
    None
}

#[cfg(test)]
mod tests;
