//! Where segments start and end, and the small vocabulary the segmenter shares with the
//! format modules: shell prompts, Kubernetes kind names, indentation.

use crate::facts::{ObjectRef, ShellCommand};

use super::{Context, Part};

/// Leading spaces (a tab counts as one).
pub fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

pub fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// A line of binary data: NUL bytes, other control characters, or the replacement characters
/// the reader put in place of invalid UTF-8.
pub fn is_garbage(line: &str) -> bool {
    if line.contains('\0') {
        return true;
    }
    let mut total = 0usize;
    let mut bad = 0usize;
    for c in line.chars() {
        total += 1;
        if (c.is_control() && c != '\t' && c != '\r') || c == '\u{FFFD}' {
            bad += 1;
        }
    }
    bad > 0 && bad * 4 >= total.max(1)
}

/// `...`, `…`, `[...]`, `<snip>`: where the user cut output short.
pub fn is_cut_mark(line: &str) -> bool {
    matches!(
        line.trim(),
        "..." | "…" | "[...]" | "(...)" | "<snip>" | "[snip]" | "<...>" | "---snip---"
    )
}

/// A shell command the paste shows, when it is a `kubectl` (or `k`, `oc`) command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    /// `get`, `describe`, `logs`...
    pub verb: Option<String>,
    /// The resource as typed, lower-case (`nodeclaims`, `pod`, `deploy,pods`, `nodeclaim/x`).
    pub resource: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub all_namespaces: bool,
    /// `-L a,b` label columns.
    pub label_columns: Vec<String>,
    /// The tool as typed, `kubectl` for `k` and `oc`.
    pub tool: String,
    /// `-l` / `--selector`.
    pub selector: Option<String>,
    /// `-n` of helm and stern (kept apart from `namespace`, which means kubectl's).
    pub tool_namespace: Option<String>,
    /// Positional words after the tool (helm's verb and release, stern's query).
    pub positional: Vec<String>,
    /// `-o` / `--output` as typed (`wide`, `yaml`, `jsonpath=...`).
    pub output: Option<String>,
    /// `--show-labels` (a LABELS column last).
    pub show_labels: bool,
    /// Piped through a line filter (`| grep Pending`, `| head -5`, `| tail`): the table's
    /// header may be gone.
    pub filtered: bool,
}

impl Command {
    /// The object a `kubectl describe <kind> <name>` command is about.
    pub fn described_object(&self) -> Option<ObjectRef> {
        if self.verb.as_deref() != Some("describe") {
            return None;
        }
        self.named_object()
    }

    /// The one object a `kubectl get` or `kubectl describe <kind> <name>` command prints,
    /// whatever it is piped through (`| yq .status`, `| sed -n '/^status/,$p'`).
    pub fn printed_object(&self) -> Option<ObjectRef> {
        if !matches!(self.verb.as_deref(), Some("get" | "describe")) {
            return None;
        }
        self.named_object()
    }

    fn named_object(&self) -> Option<ObjectRef> {
        let resource = self.resource.as_deref()?;
        let (resource, name) = match resource.split_once('/') {
            Some((r, n)) => (r, Some(n.to_string())),
            None => (resource, self.name.clone()),
        };
        let kind = canonical_kind(resource)?;
        let namespace = if is_namespaced(kind) {
            Some(
                self.namespace
                    .clone()
                    .unwrap_or_else(|| "default".to_string()),
            )
        } else {
            None
        };
        Some(ObjectRef::new(kind, namespace.as_deref(), &name?))
    }

    /// `kubectl get events` / `kubectl events`.
    pub fn lists_events(&self) -> bool {
        match self.verb.as_deref() {
            Some("events") => true,
            Some("get") => self
                .resource
                .as_deref()
                .and_then(canonical_kind)
                .is_some_and(|k| k == "Event"),
            _ => false,
        }
    }

    /// The kind a `kubectl get <resource>` lists, when one.
    pub fn listed_kind(&self) -> Option<&'static str> {
        if self.verb.as_deref() != Some("get") {
            return None;
        }
        let resource = self.resource.as_deref()?;
        if resource.contains(',') {
            return None;
        }
        canonical_kind(resource.split('/').next().unwrap_or(resource))
    }
}

/// The command a line shows, the one answer to "is this line a command" for the segmenter and
/// the format modules: after a shell prompt ([`prompt`]), or copied without it (`kubectl get
/// nodeclaim x -o jsonpath='{.status.conditions}'` on a line of its own, the output under it).
/// A bare line counts only as a kubectl command (`k`, `oc`) that reads (`get`, `describe`,
/// `logs`, `events`, `top`) or a helm one (`list`, `get`, `status`, `history`), with no more
/// words than those take and a name kubectl accepts, so that a sentence that starts with
/// "kubectl" ("run kubectl get pods to see.") stays text.
pub fn command_line(line: &str) -> Option<Command> {
    if let Some(command) = prompt(line) {
        return Some(command);
    }
    let tool = line.split_whitespace().next()?;
    if line.starts_with(char::is_whitespace)
        || !matches!(tool, "kubectl" | "k" | "oc" | "helm")
        || line.trim_end().ends_with(['.', '?', '!', ':'])
    {
        return None;
    }
    let command = command_after_prompt(line)?;
    let verb = command.positional.first().map(String::as_str);
    let reads = if command.tool == "kubectl" {
        matches!(verb, Some("get" | "describe" | "logs" | "events" | "top"))
            && command.positional.len() <= 3
    } else {
        matches!(verb, Some("list" | "ls" | "get" | "status" | "history"))
            && command.positional.len() <= 4
    };
    let name_ok = command.name.as_deref().is_none_or(|n| {
        n.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-./".contains(&b))
    });
    (reads && name_ok).then_some(command)
}

/// Splits a command line into words at whitespace outside quotes, keeping the quotes: a
/// jsonpath or custom-columns argument with spaces (`-o jsonpath='{range .items[*]}...'`) is
/// one word. `|` outside quotes is a word of its own, so pipes can be found.
fn shell_words(line: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start: Option<usize> = None;
    let mut quote: Option<char> = None;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                start.get_or_insert(i);
            }
            None if c.is_whitespace() || c == '|' => {
                if let Some(s) = start.take() {
                    words.push(&line[s..i]);
                }
                if c == '|' {
                    words.push(&line[i..i + 1]);
                }
            }
            None => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(s) = start {
        words.push(&line[s..]);
    }
    words
}

/// The command of a prompt line (`$ kubectl get nodeclaims`, `user@host:~$ k describe pod x`,
/// `% ...`, `❯ ...`), up to the first pipe. Only [`command_line`] and the unwrapper (for
/// which a prompt's marker matters) ask this directly.
pub(super) fn prompt(line: &str) -> Option<Command> {
    let trimmed = line.trim_start();
    let after = ["$ ", "% ", "❯ ", "> ", "# "]
        .iter()
        .find_map(|p| trimmed.strip_prefix(p))
        .or_else(|| {
            // `user@host:~/dir$ cmd`, root's `sh-4.2# cmd`, and the bracketed prompts of Amazon
            // Linux / RHEL shells on a node (`[root@ip-10-0-1-2 ~]# cmd`).
            ["$ ", "# "].iter().find_map(|sep| {
                let (head, rest) = trimmed.split_once(sep)?;
                let bracketed = head.starts_with('[') && head.ends_with(']');
                (!head.is_empty() && (bracketed || !head.contains(char::is_whitespace)))
                    .then_some(rest)
            })
        })
        .or_else(|| {
            // A line of `history`: `  502  kubectl annotate node x ...` (kubectl only: other
            // numbered lines are too common).
            let (number, rest) = trimmed.split_once(char::is_whitespace)?;
            let rest = rest.trim_start();
            let tool = rest.split_whitespace().next()?;
            (!number.is_empty()
                && number.len() <= 6
                && number.bytes().all(|b| b.is_ascii_digit())
                && matches!(tool, "kubectl" | "oc"))
            .then_some(rest)
        })
        .or_else(|| {
            // PowerShell, as Azure Cloud Shell and Windows terminals print it:
            // `PS C:\Users\me> kubectl describe pod x`, `PS /home/me> k get pods`.
            let rest = trimmed.strip_prefix("PS ")?;
            let (path, cmd) = rest.split_once("> ")?;
            (!path.is_empty() && !path.contains(char::is_whitespace)).then_some(cmd)
        })?;
    command_after_prompt(after)
}

/// The command of the text after a prompt (or of a line copied without one).
fn command_after_prompt(after: &str) -> Option<Command> {
    let words = shell_words(after);
    let mut stages = words.split(|w| *w == "|");
    let command_words = stages.next().unwrap_or(&[]);
    let filtered = stages.any(|stage| {
        matches!(
            stage.first().copied(),
            Some("grep" | "egrep" | "fgrep" | "rg" | "head" | "tail" | "awk" | "sed" | "findstr")
        )
    });
    let mut tokens = command_words.iter().copied().peekable();
    let tool = tokens.next()?;
    let known_tools = [
        "kubectl",
        "k",
        "oc",
        "stern",
        "aws",
        "helm",
        "journalctl",
        "eksctl",
        "cat",
        "grep",
        "jq",
        "kubectl-karpenter_why",
        "sudo",
        "tail",
        "head",
        "less",
    ];
    if !known_tools.contains(&tool) {
        return None;
    }
    let kubectl = matches!(tool, "kubectl" | "k" | "oc");
    let mut command = Command {
        tool: if kubectl { "kubectl" } else { tool }.to_string(),
        filtered,
        ..Command::default()
    };
    if !kubectl {
        command.verb = Some(tool.to_string());
        if matches!(tool, "helm" | "stern") {
            other_tool_args(&mut command, tokens);
        }
        return Some(command);
    }
    let mut positional = Vec::new();
    while let Some(token) = tokens.next() {
        let mut flag_value = |name_short: &str, name_long: &str| -> Option<String> {
            if token == name_short || token == name_long {
                return tokens.peek().map(|v| v.to_string());
            }
            token
                .strip_prefix(&format!("{name_long}="))
                .or_else(|| token.strip_prefix(&format!("{name_short}=")))
                .map(str::to_string)
        };
        if let Some(ns) = flag_value("-n", "--namespace") {
            if !token.contains('=') {
                tokens.next();
            }
            command.namespace = Some(ns);
            continue;
        }
        if let Some(cols) = flag_value("-L", "--label-columns") {
            if !token.contains('=') {
                tokens.next();
            }
            command
                .label_columns
                .extend(cols.split(',').map(str::to_string));
            continue;
        }
        if let Some(selector) = flag_value("-l", "--selector") {
            if token == "-l" || token == "--selector" {
                tokens.next();
            }
            command.selector = Some(selector);
            continue;
        }
        if let Some(output) = flag_value("-o", "--output") {
            if token == "-o" || token == "--output" {
                tokens.next();
            }
            command.output = Some(output);
            continue;
        }
        if let Some(output) = token.strip_prefix("-o").filter(|o| !o.is_empty()) {
            command.output = Some(output.to_string());
            continue;
        }
        if token == "--show-labels" {
            command.show_labels = true;
            continue;
        }
        let takes_value = [
            "--context",
            "--kubeconfig",
            "-c",
            "--container",
            "--since",
            "--tail",
            "--field-selector",
            "--sort-by",
            "--cluster",
            "--user",
            "--as",
            "--request-timeout",
            "--since-time",
            "--template",
        ];
        if takes_value.contains(&token) {
            tokens.next();
            continue;
        }
        if token == "-A" || token == "--all-namespaces" {
            command.all_namespaces = true;
            continue;
        }
        if token.starts_with('-') {
            continue;
        }
        positional.push(token.to_ascii_lowercase());
    }
    command.positional = positional.clone();
    let mut positional = positional.into_iter();
    command.verb = positional.next();
    command.resource = positional.next();
    // `kubectl annotate nodes/x k=v`: the name rides on the resource, the next word is none.
    if !command.resource.as_deref().is_some_and(|r| r.contains('/')) {
        command.name = positional.next();
    }
    Some(command)
}

/// helm's and stern's `-n` and `-l`, and their positional words.
fn other_tool_args<'a>(command: &mut Command, tokens: impl Iterator<Item = &'a str>) {
    let mut tokens = tokens.peekable();
    while let Some(token) = tokens.next() {
        let value = |short: &str, long: &str, tokens: &mut std::iter::Peekable<_>| {
            if token == short || token == long {
                return Iterator::next(tokens);
            }
            token
                .strip_prefix(&format!("{long}="))
                .map(|_| token.split_once('=').map_or("", |(_, v)| v))
        };
        if let Some(ns) = value("-n", "--namespace", &mut tokens) {
            command.tool_namespace = Some(ns.to_string());
        } else if let Some(selector) = value("-l", "--selector", &mut tokens) {
            command.selector = Some(selector.to_string());
        } else if !token.starts_with('-') {
            command.positional.push(token.to_ascii_lowercase());
        }
    }
}

/// The namespace Karpenter runs in, when a command says it: a kubectl, helm or stern command
/// about Karpenter (its pods' selector, `deploy/karpenter`, a `karpenter-*` pod, the
/// `karpenter` release or chart) with `-n <ns>`, or any command in a namespace named after it.
pub fn karpenter_namespace(commands: &[ShellCommand]) -> Option<String> {
    let mentions = |s: Option<&str>| s.is_some_and(|s| s.contains("karpenter"));
    let about = |c: &&ShellCommand| {
        mentions(c.selector.as_deref())
            || mentions(c.resource.as_deref())
            || mentions(c.name.as_deref())
    };
    let with_ns = || {
        commands
            .iter()
            .filter(|c| !c.all_namespaces && c.namespace.is_some())
    };
    with_ns()
        .find(about)
        .or_else(|| with_ns().find(|c| mentions(c.namespace.as_deref())))
        .and_then(|c| c.namespace.clone())
}

/// The record of a prompt line for `Facts::commands`.
pub fn shell_command(command: &Command, evidence: crate::document::Evidence) -> ShellCommand {
    let kubectl = command.tool == "kubectl";
    let (verb, resource, name) = if kubectl {
        (
            command.verb.clone(),
            command.resource.clone(),
            command.name.clone(),
        )
    } else if command.tool == "stern" {
        (None, command.positional.first().cloned(), None)
    } else {
        let mut words = command.positional.iter().cloned();
        (words.next(), words.next(), words.next())
    };
    let kinds = if kubectl {
        resource
            .as_deref()
            .unwrap_or_default()
            .split(',')
            .filter_map(|r| canonical_kind(r.split('/').next().unwrap_or(r)))
            .map(str::to_string)
            .collect()
    } else {
        Vec::new()
    };
    // `kubectl get pod/web-0`: the name rides on the resource.
    let name = name.or_else(|| {
        let r = resource.as_deref()?;
        (kubectl && !r.contains(','))
            .then(|| r.split_once('/').map(|(_, n)| n.to_string()))
            .flatten()
    });
    ShellCommand {
        tool: command.tool.clone(),
        verb,
        resource,
        kinds,
        name,
        namespace: command
            .namespace
            .clone()
            .or_else(|| command.tool_namespace.clone()),
        all_namespaces: command.all_namespaces,
        selector: command.selector.clone(),
        evidence,
    }
}

/// The canonical kind of a resource name as typed (plural, singular, short name, with or
/// without its API group).
pub fn canonical_kind(resource: &str) -> Option<&'static str> {
    let lower = resource.to_ascii_lowercase();
    let base = lower.split('.').next().unwrap_or(&lower);
    Some(match base {
        "pod" | "pods" | "po" => "Pod",
        "node" | "nodes" | "no" => "Node",
        "nodeclaim" | "nodeclaims" => "NodeClaim",
        "nodepool" | "nodepools" => "NodePool",
        "ec2nodeclass" | "ec2nodeclasses" | "ec2nc" | "ec2ncs" => "EC2NodeClass",
        "machine" | "machines" => "Machine",
        "provisioner" | "provisioners" => "Provisioner",
        "awsnodetemplate" | "awsnodetemplates" => "AWSNodeTemplate",
        "deployment" | "deployments" | "deploy" => "Deployment",
        "statefulset" | "statefulsets" | "sts" => "StatefulSet",
        "daemonset" | "daemonsets" | "ds" => "DaemonSet",
        "replicaset" | "replicasets" | "rs" => "ReplicaSet",
        "job" | "jobs" => "Job",
        "cronjob" | "cronjobs" | "cj" => "CronJob",
        "poddisruptionbudget" | "poddisruptionbudgets" | "pdb" | "pdbs" => "PodDisruptionBudget",
        "persistentvolumeclaim" | "persistentvolumeclaims" | "pvc" | "pvcs" => {
            "PersistentVolumeClaim"
        }
        "persistentvolume" | "persistentvolumes" | "pv" | "pvs" => "PersistentVolume",
        "storageclass" | "storageclasses" | "sc" => "StorageClass",
        "event" | "events" | "ev" => "Event",
        "service" | "services" | "svc" => "Service",
        "configmap" | "configmaps" | "cm" => "ConfigMap",
        "namespace" | "namespaces" | "ns" => "Namespace",
        "serviceaccount" | "serviceaccounts" | "sa" => "ServiceAccount",
        "horizontalpodautoscaler" | "horizontalpodautoscalers" | "hpa" => "HorizontalPodAutoscaler",
        _ => return None,
    })
}

/// Cluster-scoped kinds have no namespace (their events are filed in `default`).
pub fn is_namespaced(kind: &str) -> bool {
    !matches!(
        kind,
        "Node"
            | "NodeClaim"
            | "NodePool"
            | "EC2NodeClass"
            | "Machine"
            | "Provisioner"
            | "AWSNodeTemplate"
            | "PersistentVolume"
            | "StorageClass"
            | "Namespace"
    )
}

/// `kind/name` (an events OBJECT column, a `kubectl get` NAME with its kind) as an object.
pub fn object_ref(kind_name: &str, namespace: Option<&str>) -> Option<ObjectRef> {
    let (kind, name) = kind_name.trim().split_once('/')?;
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let kind = canonical_kind(kind).map(str::to_string).or_else(|| {
        // An unknown kind keeps its spelling, capitalised.
        let mut chars = kind.chars();
        let first = chars.next()?;
        kind.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.')
            .then(|| first.to_ascii_uppercase().to_string() + chars.as_str())
    })?;
    let namespace = namespace.filter(|_| is_namespaced(&kind));
    Some(ObjectRef::new(&kind, namespace, name))
}

/// A key at column 0 as `kubectl describe` prints them: `Name:`, `QoS Class:`,
/// `Node-Selectors:`, `Non-terminated Pods:`...
pub fn is_describe_key_line(line: &str) -> bool {
    let Some((key, rest)) = line.split_once(':') else {
        return false;
    };
    (rest.is_empty() || rest.starts_with([' ', '\t']))
        && key.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && key.len() <= 60
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || " -()/._".contains(c))
}

pub fn starts_describe(line: &str) -> bool {
    line.starts_with("Name:") && is_describe_key_line(line)
}

/// A column-0 `Key:` line that may open a describe block whose `Name:` line was not copied
/// (the paste starts mid-way, or the tool that printed it has no header): the caller still
/// has to see a known kind in the keys that follow.
pub fn may_start_headless_describe(line: &str) -> bool {
    is_describe_key_line(line)
        && !starts_describe(line)
        && !is_events_heading(line)
        && !is_cut_mark(line)
}

/// The end (exclusive) of a `kubectl describe` block starting at `start`: indented lines and
/// column-0 `Key:` lines belong to it; a blank line ends it unless indented text follows (and
/// always after `Events:`, the last section: an indented line pasted further down is not one
/// of the object's events); a new `Name:` starts the next object.
pub fn describe_end(lines: &[&str], start: usize) -> usize {
    let mut i = start + 1;
    let mut in_events = false;
    while i < lines.len() {
        let line = lines[i];
        // A second `Events:` is another object's (a describe's tail, its blank line lost).
        if in_events && line.starts_with("Events:") {
            return i;
        }
        in_events |= line.starts_with("Events:");
        if is_blank(line) {
            let next = (i + 1..lines.len()).find(|&k| !is_blank(lines[k]));
            match next {
                Some(k)
                    if !in_events
                        && indent(lines[k]) > 0
                        && super::scan::quick_level(lines[k].as_bytes()).is_none() =>
                {
                    i = k;
                    continue;
                }
                _ => return i,
            }
        }
        if indent(line) > 0 {
            i += 1;
            continue;
        }
        if starts_describe(line) {
            return i;
        }
        // `Annotations:  kubectl.kubernetes.io/last-applied-configuration={...}` ends with a
        // newline, so kubectl prints the next annotation at column 0 after a comma
        // (`,storageclass.kubernetes.io/is-default-class=true`).
        if is_describe_key_line(line)
            || is_cut_mark(line)
            || line.starts_with(',')
            || (in_events && hard_wrapped(lines[i - 1], line))
        {
            i += 1;
            continue;
        }
        return i;
    }
    lines.len()
}

/// `Events:` alone at column 0 (a describe block cut before it), or `Events:  <none>`.
pub fn is_events_heading(line: &str) -> bool {
    line.strip_prefix("Events:")
        .is_some_and(|rest| rest.trim().is_empty() || rest.trim() == "<none>")
}

/// The end of a column-0 heading's indented body (`Events:  <none>` has none).
pub fn section_end(lines: &[&str], start: usize) -> usize {
    if lines[start].contains("<none>") {
        return start + 1;
    }
    let mut i = start + 1;
    while i < lines.len()
        && !is_blank(lines[i])
        && (indent(lines[i]) > 0 || hard_wrapped(lines[i - 1], lines[i]))
    {
        i += 1;
    }
    i
}

/// `line` continues `prev` cut by a terminal's hard wrap: it sits at column 0 right after a
/// line of at least 80 characters and starts nothing else (a describe key, a prompt, a
/// heading, a fence). A describe's rows are indented, so only a copy from a terminal that
/// wrapped them puts their tail at column 0; the cut may fall inside a word.
pub fn hard_wrapped(prev: &str, line: &str) -> bool {
    indent(line) == 0
        && !is_blank(line)
        // A terminal row is 80 to 200 columns; a longer line is whole, or one the unwrapper
        // joined already (the text after it is not its tail).
        && (80..=200).contains(&prev.len())
        && !is_blank(prev)
        && command_line(line).is_none()
        && !starts_describe(line)
        && !is_describe_key_line(line)
        && !is_events_heading(line)
        && !line.starts_with(['#', '$', '`', '>', '~'])
        && !line.starts_with("---")
}

/// A YAML key at column 0 the way Kubernetes and helm values write them.
fn is_yaml_key_line(line: &str) -> bool {
    let Some((key, rest)) = line.split_once(':') else {
        return false;
    };
    (rest.is_empty() || rest.starts_with(' '))
        && key.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

fn is_yaml_line(line: &str) -> bool {
    indent(line) > 0
        || line.starts_with("- ")
        || line == "-"
        || line.starts_with('#')
        || line.trim_end() == "---"
        || line.trim_end() == "..."
        || is_yaml_key_line(line)
}

/// A YAML segment at `i`: `(first YAML line, end)`. It starts at `apiVersion:` / `kind:` /
/// `---`, after a helm `USER-SUPPLIED VALUES:` / `COMPUTED VALUES:` heading, or (for helm values
/// files) at a block of lower-case keys with nested values when the document or the command
/// says YAML.
pub fn yaml_block(part: &Part<'_>, i: usize, cx: &Context) -> Option<(usize, usize)> {
    let lines = &part.lines;
    let line = lines[i];
    let heading = matches!(
        line.trim_end(),
        "USER-SUPPLIED VALUES:" | "COMPUTED VALUES:"
    );
    let start = if heading { i + 1 } else { i };
    let k8s =
        line.starts_with("apiVersion:") || line.starts_with("kind:") || line.trim_end() == "---";
    if !heading && !k8s {
        let says_yaml = part.doc.label.ends_with(".yaml")
            || part.doc.label.ends_with(".yml")
            || cx
                .command
                .as_ref()
                .is_some_and(|c| matches!(c.verb.as_deref(), Some("helm") | Some("cat")));
        if !is_yaml_key_line(line) {
            return None;
        }
        let end = yaml_end(lines, start);
        let nested = (start + 1..end).any(|k| indent(lines[k]) > 0 && !is_blank(lines[k]));
        let keys = (start..end).filter(|&k| is_yaml_key_line(lines[k])).count();
        if !(says_yaml && (nested || keys >= 2) || nested && end - start >= 3) {
            return None;
        }
        return Some((start, end));
    }
    Some((start, yaml_end(lines, start)))
}

fn yaml_end(lines: &[&str], start: usize) -> usize {
    let mut i = start;
    while i < lines.len() {
        let line = lines[i];
        if is_blank(line) {
            let next = (i + 1..lines.len()).find(|&k| !is_blank(lines[k]));
            match next {
                Some(k) if is_yaml_line(lines[k]) && !starts_other_format(lines[k]) => {
                    i = k;
                    continue;
                }
                _ => return i,
            }
        }
        if (i > start && (line.starts_with("apiVersion:") || line.trim_end() == "---"))
            || (is_yaml_line(line) && !starts_other_format(line))
            || i == start
        {
            i += 1;
            continue;
        }
        return i;
    }
    lines.len()
}

/// Lines that end a YAML block even though they are indented or key-shaped: a Markdown fence
/// indented with the block it closes (a chat paste quoted as an indented code block).
fn starts_other_format(line: &str) -> bool {
    let t = line.trim_start();
    t.starts_with("```")
        || t.starts_with("~~~")
        || command_line(line).is_some()
        || super::scan::quick_level(line.as_bytes()).is_some()
        || super::scan::header_label(line.as_bytes()).is_some()
}

/// Bracket depth of JSON text read line by line, outside strings.
#[derive(Default)]
struct JsonBrackets {
    depth: i64,
    in_string: bool,
    escaped: bool,
}

impl JsonBrackets {
    /// Feeds one line, calling `bracket(c, depth before it)` for each bracket outside strings;
    /// stops early when it returns true. Returns whether it stopped early.
    fn line(&mut self, line: &str, mut bracket: impl FnMut(char, i64) -> bool) -> bool {
        for c in line.chars() {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if c == '\\' {
                    self.escaped = true;
                } else if c == '"' {
                    self.in_string = false;
                }
                continue;
            }
            let before = self.depth;
            match c {
                '"' => self.in_string = true,
                '{' | '[' => self.depth += 1,
                '}' | ']' => self.depth -= 1,
                _ => continue,
            }
            if c != '"' && bracket(c, before) {
                return true;
            }
        }
        false
    }
}

/// The end (exclusive) of the JSON value opening at line `start`, by bracket matching outside
/// strings; `None` when it never closes.
pub fn json_end(lines: &[&str], start: usize) -> Option<usize> {
    let mut walk = JsonBrackets::default();
    for (k, line) in lines.iter().enumerate().skip(start) {
        if walk.line(line, |c, before| matches!(c, '}' | ']') && before <= 1) {
            return Some(k + 1);
        }
        // Strings do not span lines in JSON; an unterminated one means this is not JSON.
        if walk.in_string {
            return None;
        }
    }
    None
}

/// The line of each top-level item of a JSON array spanning `start..end` (or of the single
/// object when it is not an array).
pub fn json_item_lines(lines: &[&str], start: usize, end: usize, array: bool) -> Vec<usize> {
    if !array {
        return vec![start];
    }
    json_lines_at_depth(lines, start, end, 1)
}

/// The first line of each value opened at bracket `depth` (1: the items of a top-level array,
/// 2: the items of an array held by a top-level object).
pub fn json_lines_at_depth(lines: &[&str], start: usize, end: usize, depth: i64) -> Vec<usize> {
    let mut out = Vec::new();
    let mut walk = JsonBrackets::default();
    for (k, line) in lines.iter().enumerate().take(end).skip(start) {
        walk.line(line, |c, before| {
            if matches!(c, '{' | '[') && before == depth {
                out.push(k);
            }
            false
        });
    }
    out
}

/// Whether a JSON value holds Kubernetes objects (`apiVersion`/`kind`, directly or in its
/// items).
pub fn is_kubernetes_json(value: &serde_json::Value) -> bool {
    let is_object = |v: &serde_json::Value| {
        v.get("apiVersion").is_some_and(|a| a.is_string())
            && v.get("kind").is_some_and(|k| k.is_string())
    };
    match value {
        serde_json::Value::Array(items) => items.iter().any(is_object),
        v => is_object(v),
    }
}

/// `1.6.3` from `v1.6.3`, `1.6.3`, `1.6.3-rc.1`.
pub fn version_number(s: &str) -> Option<String> {
    let s = s.trim().trim_start_matches('v');
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let number = &s[..end];
    let parts: Vec<&str> = number.split('.').collect();
    (parts.len() >= 2 && parts.iter().all(|p| !p.is_empty()))
        .then(|| number.trim_end_matches('.').to_string())
}

/// The Karpenter version a text names: the controller image tag
/// (`public.ecr.aws/karpenter/controller:1.6.3@sha256:...`) or the helm chart
/// (`karpenter-1.6.2`, `helm.sh/chart: karpenter-1.6.2`).
pub fn karpenter_version_in(text: &str) -> Option<String> {
    if let Some(pos) = text.find("karpenter/controller:") {
        return version_number(&text[pos + "karpenter/controller:".len()..]);
    }
    let mut search = 0;
    while let Some(pos) = text[search..].find("karpenter-") {
        let at = search + pos;
        let before_ok = at == 0
            || text[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_whitespace() || c == '\t' || c == ':');
        let after = &text[at + "karpenter-".len()..];
        // Charts before v0.35 carried a `v` (`karpenter-v0.31.3`).
        let after = after
            .strip_prefix('v')
            .filter(|a| a.starts_with(|c: char| c.is_ascii_digit()))
            .unwrap_or(after);
        if before_ok && after.starts_with(|c: char| c.is_ascii_digit()) {
            if let Some(version) = version_number(after) {
                return Some(version);
            }
        }
        search = at + 1;
    }
    None
}

#[cfg(test)]
mod hard_wrap_tests {
    use super::hard_wrapped;

    #[test]
    fn only_a_column_zero_tail_of_a_long_line() {
        let long = format!(
            "  Warning  FailedScheduling  2m  karpenter  {}",
            "x".repeat(80)
        );
        assert!(hard_wrapped(&long, "emonset overhead={\"cpu\":\"1\"}"));
        for next in [
            "  indented",
            "",
            "Name:  other",
            "Events:  <none>",
            "$ kubectl get pods",
            "```",
        ] {
            assert!(!hard_wrapped(&long, next), "{next}");
        }
        assert!(!hard_wrapped("  short row", "tail"));
    }
}
