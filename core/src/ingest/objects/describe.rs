//! kubectl's generic `describe` printout (custom resources: NodePool, NodeClaim,
//! EC2NodeClass...) back into the tree the YAML reader produces, so both share one object
//! mapper.
//!
//! How kubectl prints it (k8s.io/kubectl `pkg/describe/describe.go`, `genericDescriber`):
//! `Name:`, `Namespace:`, `Labels:` (`k=v`, one per line, aligned), `Annotations:` (`k: v`;
//! values longer than 140 characters or multi-line go on their own lines, two spaces deeper),
//! then `printUnstructuredContent` over the whole object minus those fields: map keys sorted,
//! each level indented two spaces, a map or list field as `Label:` with its content below, a
//! scalar as `Label:<tab>value` (tabwriter turns the tab into aligning spaces), list elements
//! that are maps printed one after another with no separator, scalar elements one per line.
//! Field names go through `smartLabelFor`: camelCase split into title-cased words with the
//! acronyms API, URL, UID, OSB, GUID upper-cased (`nodeClassRef` -> `Node Class Ref`,
//! `providerID` -> `Provider ID`, `ephemeral-storage` -> `Ephemeral - Storage`); names with
//! characters other than letters and `-` (`vpc.amazonaws.com/pod-eni`) are printed as they are.

use super::tree::{Node, Value, MAX_DEPTH};

/// One described object: its tree, the lines it spans, and the lines of a trailing `Events:`
/// table (not parsed here) if the text has one.
#[derive(Debug)]
pub struct Described {
    pub root: Node,
    pub first_line: usize,
    pub last_line: usize,
    pub events_lines: Option<(usize, usize)>,
}

/// The root labels of the generic printout; any other line at column 0 inside an object is the
/// continuation of a multi-line value (user data, a long message).
const ROOT_LABELS: &[&str] = &[
    "Name",
    "Namespace",
    "Labels",
    "Annotations",
    "API Version",
    "Kind",
    "Metadata",
    "Spec",
    "Status",
    "Events",
];

/// Fields whose value is a list of maps. kubectl prints consecutive maps with no separator;
/// since it sorts keys, a key not after the previous one starts the next element. Other fields
/// are split only on a repeated key, so that a map whose keys sort differently once
/// title-cased (tags `Name`, `env`) is not cut in two.
const LIST_FIELDS: &[&str] = &[
    "amiSelectorTerms",
    "amis",
    "blockDeviceMappings",
    "budgets",
    "capacityReservationSelectorTerms",
    "capacityReservations",
    "conditions",
    "containers",
    "env",
    "initContainers",
    "matchExpressions",
    "nodeSelectorTerms",
    "ownerReferences",
    "ports",
    "requirements",
    "securityGroupSelectorTerms",
    "securityGroups",
    "startupTaints",
    "subnetSelectorTerms",
    "subnets",
    "taints",
    "tolerations",
    "topologySpreadConstraints",
    "versions",
];

struct Line {
    index: usize,
    indent: usize,
    /// Text without the indentation; continuation lines joined with `\n`.
    content: String,
}

/// Every object of a generic describe printout (several when `kubectl describe nodeclaims`
/// printed more than one).
pub fn parse(text: &str) -> Vec<Described> {
    let lines = structural_lines(text);
    let mut starts: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.indent == 0 && label_of(&l.content) == Some("Name"))
        .map(|(i, _)| i)
        .collect();
    if starts.first() != Some(&0) && !lines.is_empty() {
        starts.insert(0, 0);
    }
    let mut objects = Vec::new();
    for (n, &start) in starts.iter().enumerate() {
        let end = starts.get(n + 1).copied().unwrap_or(lines.len());
        objects.push(parse_object(&lines[start..end]));
    }
    objects
}

/// Non-blank lines with their indentation; a column-0 line that is not a root label is glued to
/// the line before it (the rest of a multi-line value).
fn structural_lines(text: &str) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let mut in_events = false;
    for (index, raw) in text.lines().enumerate() {
        let raw = raw.trim_start_matches('\u{feff}');
        let content = raw.trim();
        // A `...` where the user cut the printout is no part of the value above it (glued,
        // `Kind:  NodeClaim` would read as the kind `NodeClaim\n...`).
        if content.is_empty() || crate::ingest::segment::is_cut_mark(content) {
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        if indent == 0 {
            match label_of(content) {
                Some(label) if ROOT_LABELS.contains(&label) => {
                    in_events = label == "Events";
                }
                _ if !in_events => {
                    if let Some(previous) = lines.last_mut() {
                        previous.content.push('\n');
                        previous.content.push_str(raw.trim_end());
                        continue;
                    }
                }
                _ => {}
            }
        }
        lines.push(Line {
            index,
            indent,
            content: content.to_string(),
        });
    }
    lines
}

fn parse_object(lines: &[Line]) -> Described {
    let first_line = lines.first().map_or(0, |l| l.index);
    let mut last_line = first_line;
    let mut metadata: Vec<(String, Node)> = Vec::new();
    let mut root: Vec<(String, Node)> = Vec::new();
    let mut events_lines = None;
    let mut parser = BlockParser { lines, pos: 0 };
    while let Some(line) = lines.get(parser.pos) {
        if line.indent > 0 {
            parser.pos += 1;
            continue;
        }
        let Some((label, value)) = key_line(&line.content) else {
            parser.pos += 1;
            continue;
        };
        let at = line.index;
        match label {
            "Name" | "Namespace" => {
                parser.pos += 1;
                if !value.is_empty() {
                    let key = if label == "Name" { "name" } else { "namespace" };
                    metadata.push((key.into(), Node::new(Value::Str(value), at)));
                }
            }
            "Labels" => {
                let entries = parser.pairs(&value, column_of_value(&line.content), '=');
                metadata.push(("labels".into(), map_node(entries, at)));
            }
            "Annotations" => {
                let entries = parser.pairs(&value, column_of_value(&line.content), ':');
                metadata.push(("annotations".into(), map_node(entries, at)));
            }
            "Events" => {
                let last = lines.last().map_or(at, |l| l.index);
                events_lines = Some((at, last));
                break;
            }
            _ => {
                let key = field_name(label);
                let node = parser.value(&key, value, 0, 0);
                match node.value {
                    Value::Map(entries) if key == "metadata" => metadata.extend(entries),
                    _ => root.push((key, node)),
                }
            }
        }
        last_line = lines
            .get(parser.pos.saturating_sub(1))
            .map_or(last_line, |l| l.index);
    }
    let metadata_line = metadata.first().map_or(first_line, |(_, n)| n.line);
    root.push(("metadata".into(), map_node(metadata, metadata_line)));
    Described {
        root: map_node(root, first_line),
        first_line,
        last_line,
        events_lines,
    }
}

fn map_node(entries: Vec<(String, Node)>, line: usize) -> Node {
    Node::new(Value::Map(entries), line)
}

struct BlockParser<'a> {
    lines: &'a [Line],
    pos: usize,
}

impl BlockParser<'_> {
    /// The value of the key line just read (at `self.pos`): its scalar (with any deeper
    /// continuation lines), or the block below it.
    fn value(&mut self, key: &str, value: String, indent: usize, depth: usize) -> Node {
        let at = self.lines[self.pos].index;
        self.pos += 1;
        let next_deeper = self.lines.get(self.pos).filter(|l| l.indent > indent);
        if !value.is_empty() {
            let mut text = value;
            let mut multi_line = text.contains('\n');
            while let Some(more) = self.lines.get(self.pos).filter(|l| l.indent > indent) {
                text.push('\n');
                text.push_str(&more.content);
                multi_line = true;
                self.pos += 1;
            }
            return if multi_line {
                let mut node = Node::new(Value::Str(text), at);
                node.last_line = self.lines[self.pos - 1].index;
                node
            } else if text == "<nil>" {
                Node::new(Value::Null, at)
            } else {
                Node::plain(&text, at)
            };
        }
        match next_deeper {
            Some(child) if depth < MAX_DEPTH => {
                let child_indent = child.indent;
                // AWS tag keys are case-sensitive and mostly PascalCase (`Name`, `Tier`): kubectl
                // prints `Name` for both `Name` and `name`, and the printed case is the better
                // guess for a filter than describe's lower-cased field names.
                let keys_as_printed = key == "tags";
                let mut node = self.block(
                    child_indent,
                    LIST_FIELDS.contains(&key),
                    keys_as_printed,
                    depth + 1,
                );
                node.line = at;
                node
            }
            Some(_) => {
                while self.lines.get(self.pos).is_some_and(|l| l.indent > indent) {
                    self.pos += 1;
                }
                Node::new(Value::Null, at)
            }
            None => Node::new(Value::Null, at),
        }
    }

    /// The lines at `indent` (and their children): a map, a list of maps, or a list of scalars.
    fn block(
        &mut self,
        indent: usize,
        list_field: bool,
        keys_as_printed: bool,
        depth: usize,
    ) -> Node {
        let first = self.lines.get(self.pos).map_or(0, |l| l.index);
        let mut maps: Vec<(usize, Vec<(String, Node)>)> = vec![(first, Vec::new())];
        let mut scalars: Vec<Node> = Vec::new();
        while let Some(line) = self.lines.get(self.pos) {
            if line.indent < indent {
                break;
            }
            if line.indent > indent {
                // Deeper than any open field: the rest of a value printed over several lines.
                self.append_to_last_scalar(&mut maps, &mut scalars);
                continue;
            }
            match key_line(&line.content) {
                Some((label, value)) => {
                    let key = if keys_as_printed {
                        label.to_string()
                    } else {
                        field_name(label)
                    };
                    let (_, current) = maps.last().expect("maps is never empty");
                    let starts_element = current.iter().any(|(k, _)| *k == key)
                        || (list_field
                            && current
                                .last()
                                .is_some_and(|(previous, _)| key.as_str() <= previous.as_str()));
                    if starts_element {
                        maps.push((line.index, Vec::new()));
                    }
                    let node = self.value(&key, value, indent, depth);
                    let (start, current) = maps.last_mut().expect("maps is never empty");
                    if current.is_empty() {
                        *start = line.index;
                    }
                    current.push((key, node));
                }
                None if maps.iter().any(|(_, entries)| !entries.is_empty()) => {
                    // Not a field: inside a map it can only be the rest of a multi-line value.
                    self.append_to_last_scalar(&mut maps, &mut scalars);
                }
                None => {
                    scalars.push(Node::new(Value::Str(line.content.clone()), line.index));
                    self.pos += 1;
                }
            }
        }
        let maps: Vec<Node> = maps
            .into_iter()
            .filter(|(_, entries)| !entries.is_empty())
            .map(|(line, entries)| map_node(entries, line))
            .collect();
        match maps.len() {
            0 => Node::new(Value::Seq(scalars), first),
            1 if !list_field => maps.into_iter().next().expect("one map"),
            _ => Node::new(Value::Seq(maps), first),
        }
    }

    fn append_to_last_scalar(
        &mut self,
        maps: &mut [(usize, Vec<(String, Node)>)],
        scalars: &mut [Node],
    ) {
        let more = &self.lines[self.pos].content;
        let target = maps
            .last_mut()
            .and_then(|(_, entries)| entries.last_mut())
            .map(|(_, node)| node)
            .or_else(|| scalars.last_mut());
        if let Some(node) = target {
            if let Some(text) = node.text() {
                node.value = Value::Str(format!("{text}\n{more}"));
            }
        }
        self.pos += 1;
    }

    /// `Labels:` (`k=v`) or `Annotations:` (`k: v`) entries: the first on the header line,
    /// the others aligned under it; deeper lines continue the previous value.
    fn pairs(
        &mut self,
        header_value: &str,
        value_column: usize,
        separator: char,
    ) -> Vec<(String, Node)> {
        let header = &self.lines[self.pos];
        let mut entries: Vec<(String, Node)> = Vec::new();
        let push = |text: &str, line: usize, entries: &mut Vec<(String, Node)>| {
            if text == "<none>" {
                return;
            }
            let (k, v) = match separator {
                '=' => text.split_once('=').unwrap_or((text, "")),
                _ => match text.split_once(':') {
                    Some((k, v)) => (k, v.trim_start()),
                    None => (text, ""),
                },
            };
            entries.push((
                k.trim().to_string(),
                Node::new(Value::Str(v.to_string()), line),
            ));
        };
        if !header_value.is_empty() {
            push(header_value, header.index, &mut entries);
        }
        self.pos += 1;
        let mut entry_column = (!header_value.is_empty()).then_some(value_column);
        while let Some(line) = self.lines.get(self.pos).filter(|l| l.indent > 0) {
            let column = *entry_column.get_or_insert(line.indent);
            if line.indent > column {
                if let Some((_, node)) = entries.last_mut() {
                    let joined = match node.text() {
                        Some("") | None => line.content.clone(),
                        Some(text) => format!("{text}\n{}", line.content),
                    };
                    node.value = Value::Str(joined);
                }
            } else {
                push(&line.content, line.index, &mut entries);
            }
            self.pos += 1;
        }
        entries
    }
}

/// Where the value starts on a `Label:   value` line (the column later entries align to).
fn column_of_value(content: &str) -> usize {
    let after = content.find(':').map_or(content.len(), |i| i + 1);
    let rest = &content[after..];
    after + (rest.len() - rest.trim_start().len())
}

/// The label of a `Label:` / `Label:  value` line.
fn label_of(content: &str) -> Option<&str> {
    key_line(content).map(|(label, _)| label)
}

/// Splits `Label:  value` at the first colon followed by whitespace or the end of the line.
/// The label is either kubectl's smart label (words of letters, `-`) or a key printed as it is
/// (no whitespace: `vpc.amazonaws.com/pod-eni`, `karpenter.sh/discovery`).
fn key_line(content: &str) -> Option<(&str, String)> {
    let first = content.lines().next()?;
    let colon = first
        .char_indices()
        .filter(|&(_, c)| c == ':')
        .map(|(i, _)| i)
        .find(|&i| {
            first[i + 1..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace)
        })?;
    let label = &first[..colon];
    let smart = label.starts_with(|c: char| c.is_alphabetic())
        && label
            .chars()
            .all(|c| c.is_alphabetic() || c == ' ' || c == '-')
        && !label.contains("  ");
    let raw = !label.is_empty() && !label.contains(char::is_whitespace);
    if !(smart || raw) {
        return None;
    }
    let mut value = first[colon + 1..].trim().to_string();
    for more in content.lines().skip(1) {
        value.push('\n');
        value.push_str(more);
    }
    Some((label, value))
}

/// The field name a smart label was made from (`Node Class Ref` -> `nodeClassRef`,
/// `API Version` -> `apiVersion`, `Provider ID` -> `providerID`, `Ephemeral - Storage` ->
/// `ephemeral-storage`); labels kubectl printed as they are come back unchanged. Field names
/// are ASCII; a label with other letters (a map key such as a tag) also comes back unchanged,
/// which keeps Unicode case mapping (12 KB gzipped) out of the web page's module.
pub fn field_name(label: &str) -> String {
    if !label
        .bytes()
        .all(|b| b.is_ascii_alphabetic() || b == b' ' || b == b'-')
    {
        return label.to_string();
    }
    let mut name = String::with_capacity(label.len());
    let mut lower_next = true;
    for word in label.split(' ').filter(|w| !w.is_empty()) {
        if word == "-" {
            name.push('-');
            lower_next = true;
        } else if name.is_empty() {
            name.push_str(&word.to_ascii_lowercase());
            lower_next = false;
        } else if lower_next {
            let mut chars = word.chars();
            if let Some(c) = chars.next() {
                name.push(c.to_ascii_lowercase());
                name.push_str(chars.as_str());
            }
            lower_next = false;
        } else {
            name.push_str(word);
        }
    }
    name
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn keys(node: &Node) -> HashSet<&str> {
        node.entries().iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn smart_labels_map_back_to_field_names() {
        for (label, field) in [
            ("Node Class Ref", "nodeClassRef"),
            ("API Version", "apiVersion"),
            ("Provider ID", "providerID"),
            ("UID", "uid"),
            ("Kms Key ID", "kmsKeyID"),
            ("Ephemeral - Storage", "ephemeral-storage"),
            (
                "Image GC High Threshold Percent",
                "imageGCHighThresholdPercent",
            ),
            ("Last Transition Time", "lastTransitionTime"),
            ("vpc.amazonaws.com/pod-eni", "vpc.amazonaws.com/pod-eni"),
            ("Cpu", "cpu"),
            // Non-ASCII letters: a map key (a tag), kept as written.
            ("Équipe", "Équipe"),
            ("Cost Équipe", "Cost Équipe"),
        ] {
            assert_eq!(field_name(label), field, "{label}");
        }
    }

    #[test]
    fn key_lines_and_scalars_are_told_apart() {
        assert_eq!(
            key_line("Provider ID:  aws:///us-east-1a/i-0abc"),
            Some(("Provider ID", "aws:///us-east-1a/i-0abc".into()))
        );
        assert_eq!(key_line("Message:"), Some(("Message", String::new())));
        assert_eq!(
            key_line("karpenter.sh/discovery:  my-cluster"),
            Some(("karpenter.sh/discovery", "my-cluster".into()))
        );
        assert_eq!(key_line("on-demand"), None);
        assert_eq!(key_line("arn:aws:iam::123:role/x"), None);
        assert_eq!(
            key_line("Message:  Error getting launch template configs: Instance launch failed"),
            Some((
                "Message",
                "Error getting launch template configs: Instance launch failed".into()
            ))
        );
    }

    const NODECLAIM: &str = "Name:         default-9wq4t
Namespace:
Labels:       karpenter.k8s.aws/ec2nodeclass=default
              karpenter.sh/nodepool=default
Annotations:  karpenter.k8s.aws/ec2nodeclass-hash: 9382751064139250117
              kubectl.kubernetes.io/last-applied-configuration:
                {\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\"}
API Version:  karpenter.sh/v1
Kind:         NodeClaim
Metadata:
  Creation Timestamp:  2025-02-11T09:41:27Z
  Finalizers:
    karpenter.sh/termination
  Owner References:
    API Version:           karpenter.sh/v1
    Block Owner Deletion:  true
    Kind:                  NodePool
    Name:                  default
    UID:                   6ab86587-6597-45c6-8d66-72ae7a649e4b
Spec:
  Node Class Ref:
    Group:  karpenter.k8s.aws
    Kind:   EC2NodeClass
    Name:   default
  Requirements:
    Key:       karpenter.sh/capacity-type
    Operator:  In
    Values:
      on-demand
      spot
    Key:       kubernetes.io/arch
    Operator:  In
    Values:
      amd64
  Resources:
    Requests:
      Cpu:                        1150m
      vpc.amazonaws.com/pod-eni:  1
Status:
  Allocatable:
    Ephemeral - Storage:  17Gi
  Conditions:
    Last Transition Time:  2025-02-11T09:41:29Z
    Message:               User does not have sufficient permission
    Reason:                SpotSLRCreationFailed
    Status:                Unknown
    Type:                  Launched
    Last Transition Time:  2025-02-11T09:41:27Z
    Message:
    Reason:                Registered
    Status:                True
    Type:                  Registered
Events:                    <none>
";

    /// Selector tags keep their printed keys (`Name`, a filter on `tag:Name`), while the
    /// fields around them map back to field names.
    #[test]
    fn tag_keys_keep_their_printed_case() {
        let text = "Name:         gpu-workers
Kind:         EC2NodeClass
Spec:
  Subnet Selector Terms:
    Tags:
      Name:                    prod-eks-private-*
      karpenter.sh/discovery:  prod-eks
";
        let objects = parse(text);
        let terms = objects[0]
            .root
            .path(&["spec", "subnetSelectorTerms"])
            .unwrap();
        let tags = terms.items()[0].get("tags").unwrap();
        assert_eq!(
            tags.get("Name").and_then(Node::text),
            Some("prod-eks-private-*")
        );
        assert_eq!(
            tags.get("karpenter.sh/discovery").and_then(Node::text),
            Some("prod-eks")
        );
        assert!(tags.get("name").is_none());
    }

    #[test]
    fn nodeclaim_printout_becomes_the_yaml_tree() {
        let objects = parse(NODECLAIM);
        assert_eq!(objects.len(), 1);
        let root = &objects[0].root;
        assert_eq!(root.get("kind").unwrap().text(), Some("NodeClaim"));
        assert_eq!(
            root.get("apiVersion").unwrap().text(),
            Some("karpenter.sh/v1")
        );
        let meta = root.get("metadata").unwrap();
        assert_eq!(meta.get("name").unwrap().text(), Some("default-9wq4t"));
        assert!(meta.get("namespace").is_none());
        assert_eq!(
            meta.path(&["labels", "karpenter.sh/nodepool"])
                .unwrap()
                .text(),
            Some("default")
        );
        assert_eq!(
            meta.path(&[
                "annotations",
                "kubectl.kubernetes.io/last-applied-configuration"
            ])
            .unwrap()
            .text(),
            Some("{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\"}")
        );
        assert_eq!(
            meta.get("finalizers").unwrap().string_list(),
            vec!["karpenter.sh/termination"]
        );
        let owner = &meta.get("ownerReferences").unwrap().items()[0];
        assert_eq!(owner.get("kind").unwrap().text(), Some("NodePool"));
        assert_eq!(
            owner.get("blockOwnerDeletion").unwrap().boolean(),
            Some(true)
        );
        assert_eq!(
            root.path(&["spec", "nodeClassRef", "name"]).unwrap().text(),
            Some("default")
        );
        let requirements = root.path(&["spec", "requirements"]).unwrap().items();
        assert_eq!(requirements.len(), 2);
        assert_eq!(
            requirements[0].get("values").unwrap().string_list(),
            vec!["on-demand", "spot"]
        );
        assert_eq!(
            requirements[1].get("key").unwrap().text(),
            Some("kubernetes.io/arch")
        );
        let requests = root.path(&["spec", "resources", "requests"]).unwrap();
        assert_eq!(
            keys(requests),
            HashSet::from(["cpu", "vpc.amazonaws.com/pod-eni"])
        );
        assert_eq!(
            root.path(&["status", "allocatable", "ephemeral-storage"])
                .unwrap()
                .text(),
            Some("17Gi")
        );
        let conditions = root.path(&["status", "conditions"]).unwrap().items();
        assert_eq!(conditions.len(), 2);
        assert_eq!(
            conditions[0].get("reason").unwrap().text(),
            Some("SpotSLRCreationFailed")
        );
        assert_eq!(conditions[0].line, 42);
        assert_eq!(conditions[0].get("message").unwrap().line, 43);
        assert!(conditions[1].get("message").unwrap().is_null());
        assert_eq!(conditions[1].get("status").unwrap().text(), Some("True"));
        assert_eq!(objects[0].events_lines, Some((52, 52)));
        assert_eq!(objects[0].last_line, 51);
    }

    #[test]
    fn hand_trimmed_annotations_and_single_condition() {
        let text = "Name:         dev-node-class
Annotations:
  karpenter.k8s.aws/ec2nodeclass-hash: 103552976033223467624
  karpenter.sh/refres: false
API Version:  karpenter.k8s.aws/v1
Kind:         EC2NodeClass
Status:
  Conditions:
    Message:  Controller isn't authorized to call ec2:CreateFleet
    Reason:   CreateFleetAuthCheckFailed
    Status:   False
    Type:     ValidationSucceeded
";
        let root = &parse(text)[0].root;
        let annotations = root.path(&["metadata", "annotations"]).unwrap();
        assert_eq!(
            annotations.get("karpenter.sh/refres").unwrap().text(),
            Some("false")
        );
        let conditions = root.path(&["status", "conditions"]).unwrap();
        assert_eq!(
            conditions.items().len(),
            1,
            "a single condition is still a list"
        );
        assert_eq!(
            conditions.items()[0].get("type").unwrap().text(),
            Some("ValidationSucceeded")
        );
    }

    #[test]
    fn lists_of_maps_split_on_key_order_and_maps_on_repeats_only() {
        let text = "Name:  x
Kind:  EC2NodeClass
Spec:
  Subnet Selector Terms:
    Tags:
      karpenter.sh/discovery:  my-cluster
    ID:  subnet-0123
  Tags:
    Name:  nodes
    Env:   prod
  User Data:  MIME-Version: 1.0
Content-Type: multipart/mixed; boundary=\"//\"

--//
  [settings.kubernetes]
Status:
  Subnets:
    ID:       subnet-1
    Zone:     us-east-1a
    Zone ID:  use1-az1
    ID:       subnet-2
    Zone:     us-east-1b
";
        let root = &parse(text)[0].root;
        let terms = root.path(&["spec", "subnetSelectorTerms"]).unwrap().items();
        assert_eq!(terms.len(), 2);
        assert_eq!(terms[1].get("id").unwrap().text(), Some("subnet-0123"));
        let tags = root.path(&["spec", "tags"]).unwrap();
        assert_eq!(
            tags.entries().len(),
            2,
            "a map is not cut where title-cased keys unsort"
        );
        let user_data = root.path(&["spec", "userData"]).unwrap().text().unwrap();
        assert!(
            user_data.starts_with("MIME-Version: 1.0\nContent-Type"),
            "{user_data}"
        );
        assert!(user_data.ends_with("[settings.kubernetes]"), "{user_data}");
        let subnets = root.path(&["status", "subnets"]).unwrap().items();
        assert_eq!(subnets.len(), 2);
        assert_eq!(subnets[1].get("zone").unwrap().text(), Some("us-east-1b"));
    }

    #[test]
    fn several_objects_are_split_at_name() {
        let text = "Name:  a\nKind:  NodePool\nName:  b\nKind:  NodePool\n";
        let objects = parse(text);
        assert_eq!(objects.len(), 2);
        assert_eq!(objects[1].first_line, 2);
        assert_eq!(
            objects[1].root.path(&["metadata", "name"]).unwrap().text(),
            Some("b")
        );
    }
}
