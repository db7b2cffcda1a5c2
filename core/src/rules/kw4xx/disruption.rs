//! What the KW4xx rules share: reading Karpenter's disruption messages.
//!
//! The `DisruptionBlocked` (Node, NodeClaim, NodePool) and `Unconsolidatable` (Node, NodeClaim)
//! event texts changed across versions:
//! - before v1.0: `Cannot disrupt Node: PDB "<ns>/<name>" prevents pod evictions`;
//! - v1.0 to v1.1: `Cannot disrupt Node: ` / `Cannot disrupt NodeClaim: ` then a lower-case
//!   sentence (`pdb "<ns>/<name>" prevents pod evictions`, `state node isn't initialized`);
//! - v1.2 to v1.4: the sentence alone, first letter upper-cased (`Pdb "<ns>/<name>" ...`);
//! - v1.5 and later: structured, the objects in a trailing `(<Key>=<value>, ...)`
//!   (`Pdb prevents pod evictions (PodDisruptionBudget=[<ns>/<name>])`, v1.5 to v1.6 without
//!   the brackets).
//!
//! The rules match substrings case-insensitively and read the objects with the helpers here.
//! Events exported as JSON and pasted as-is keep their quotes escaped (`\"`), so texts are
//! unescaped first.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, find_ignore_ascii_case};
use crate::facts::{Facts, Message, Meta, ObjectRef};
use crate::rules::text::{contains_any, is_unnumbered_mask, token_after};

/// `Some(true)` when the input is from a Karpenter before v1.0 (the v1beta1 NodePool of v0.32 to
/// v0.37, or the v1alpha5 Provisioner before it), `Some(false)` when it is from v1.0 or later,
/// `None` when it does not say. Advice whose names changed at v1.0 (KW406's
/// `WhenUnderutilized`, KW402's duration value) depends on it.
///
/// A known version decides. Then v1 proofs win over pre-v1 hints, because a paste may mix an
/// old log with new events: the v1 API (`karpenter.sh/v1` objects), texts only v1 emits
/// (`has non-empty consolidation disabled`, `WhenEmptyOrUnderutilized`), or a log record under
/// the flat `controller` logger with a `controller` field. Pre-v1 hints: the v1beta1 or
/// v1alpha5 API, the dotted loggers of v0.3x (`controller.disruption`,
/// `controller.provisioner`: v1 logs `"logger":"controller"` and names the controller in a
/// field), and the v0.32-v0.37 event wording `Cannot disrupt Node: Nominated for a pending
/// pod` / `Cannot disrupt Node: Pod "<ns>/<pod>" has ...` (v1.0 wrote these in lower case).
pub fn era_before_v1(facts: &Facts) -> Option<bool> {
    if let Some(version) = crate::rules::version::karpenter_version(facts) {
        return Some(version < (1, 0, 0));
    }
    let api = |suffix: &str| {
        facts
            .nodepools
            .iter()
            .filter_map(|p| p.meta.api_version.as_deref())
            .chain(
                facts
                    .nodeclasses
                    .iter()
                    .filter_map(|c| c.meta.api_version.as_deref()),
            )
            .any(|a| a.ends_with(suffix))
    };
    // controller-runtime's own lines (`Starting workers`, `Starting Controller`, `Starting
    // EventSource`) carry that logger and field in v0.3x too.
    let v1_logger = facts.logs.iter().any(|r| {
        r.logger
            .as_deref()
            .is_some_and(|l| l.eq_ignore_ascii_case("controller"))
            && r.controller.is_some()
            && !r.message.starts_with("Starting ")
            && !r.message.starts_with("All workers finished")
    });
    let v1_text = facts
        .messages_containing_any(&[
            "has non-empty consolidation disabled",
            "has consolidation policy WhenEmpty,",
            "WhenEmptyOrUnderutilized",
            "karpenter.sh/v1/",
        ])
        .next()
        .is_some();
    if api("/v1") || v1_logger || v1_text {
        return Some(false);
    }
    if crate::rules::version::era_before_v0_32(facts) == Some(true) {
        return Some(true);
    }
    let dotted_logger = facts.logs.iter().any(|r| {
        r.logger.as_deref().is_some_and(|l| {
            l.len() > "controller.".len()
                && l.as_bytes()[.."controller.".len()].eq_ignore_ascii_case(b"controller.")
        })
    });
    let old_text = facts.messages.iter().any(|m| {
        let t = unescaped(&m.text);
        // Case matters here: v1.0 and v1.1 wrote the same sentences in lower case.
        t.contains("Cannot disrupt Node: Nominated for a pending pod")
            || t.contains("Cannot disrupt Node: Pod \"")
            || t.contains("karpenter.sh/v1beta1")
            || t.contains("karpenter.k8s.aws/v1beta1")
    });
    (api("/v1beta1") || dotted_logger || old_text).then_some(true)
}

/// `[NAMESPACE] LAST SEEN TYPE REASON OBJECT ...`: the OBJECT column is at most the fifth word.
const OBJECT_COLUMN_WITHIN: usize = 5;

/// The message text with JSON-escaped quotes (`\"`) unescaped.
pub fn unescaped(text: &str) -> Cow<'_, str> {
    if text.contains("\\\"") {
        Cow::Owned(text.replace("\\\\\\\"", "\"").replace("\\\"", "\""))
    } else {
        Cow::Borrowed(text)
    }
}

/// Messages holding any of `needles` (case-insensitive, after unescaping).
pub fn messages_with<'a>(facts: &'a Facts, needles: &[&str]) -> Vec<&'a Message> {
    facts
        .messages
        .iter()
        .filter(|m| {
            let t = unescaped(&m.text);
            contains_any(&t, needles)
        })
        .collect()
}

/// The values of a structured-error key: `(<key>=<v>)`, `(<key>=[<v1> <v2>])`, also when the
/// key is not the first (`, <key>=`).
pub fn serrors_values(text: &str, key: &str) -> Option<Vec<String>> {
    let mut rest = text;
    loop {
        let i = find_ignore_ascii_case(rest, &format!("{key}="))?;
        let before = rest[..i].trim_end_matches(' ');
        let after = &rest[i + key.len() + 1..];
        if before.ends_with('(') || before.ends_with(',') {
            let value = if let Some(inner) = after.strip_prefix('[') {
                inner.split(']').next().unwrap_or_default()
            } else {
                after.split([')', ',']).next().unwrap_or_default()
            };
            let values: Vec<String> = value
                .split_whitespace()
                .map(|v| v.trim_matches('"').to_string())
                .filter(|v| !v.is_empty())
                .collect();
            return (!values.is_empty()).then_some(values);
        }
        rest = after;
    }
}

/// A number right after `marker` (`Failed to drain node, 3 pods`, `creating 2 candidates`).
pub fn number_after(text: &str, marker: &str) -> Option<u64> {
    token_after(text, marker)?.parse().ok()
}

/// The object an event or log line is about: the message's own object (event involved
/// object, describe header), else a `node/<name>`, `nodeclaim/<name>`, `machine/<name>` or
/// `nodepool/<name>`
/// OBJECT column of a `kubectl get events` row (one of the first columns, never the message,
/// which may name other objects).
pub fn subject_of(message: &Message) -> Option<ObjectRef> {
    if let Some(o) = &message.object {
        return Some(o.clone());
    }
    let words: Vec<&str> = message
        .text
        .split_whitespace()
        .take(OBJECT_COLUMN_WITHIN + 1)
        .collect();
    // `-o custom-columns=...KIND:.involvedObject.kind,NAME:.involvedObject.name`: the kind and
    // the name in two columns, the kind as the API spells it.
    for pair in words.windows(2) {
        let kind = match pair[0] {
            "Node" | "NodeClaim" | "Machine" | "NodePool" => pair[0],
            _ => continue,
        };
        // Generated names hold a dash, dot or digit; `Node is nominated ...` names nothing.
        let name = pair[1];
        if name
            .bytes()
            .any(|b| b == b'-' || b == b'.' || b.is_ascii_digit())
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
            && name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphanumeric())
        {
            return Some(ObjectRef::new(kind, None, name));
        }
    }
    for word in words.iter().take(OBJECT_COLUMN_WITHIN) {
        let Some((kind, name)) = word.split_once('/') else {
            continue;
        };
        let kind = match kind.to_ascii_lowercase().as_str() {
            "node" => "Node",
            "nodeclaim" => "NodeClaim",
            // Before v0.32 a NodeClaim was a v1alpha5 Machine.
            "machine" => "Machine",
            "nodepool" => "NodePool",
            _ => continue,
        };
        if !name.is_empty() && !name.contains('/') && !name.ends_with(',') {
            return Some(ObjectRef::new(kind, None, name));
        }
    }
    None
}

/// The Node or NodeClaim (Machine) the input shows for `s`: its metadata and NodePool (the
/// node's `karpenter.sh/nodepool` label, the claim's NodePool).
pub fn node_or_claim<'a>(facts: &'a Facts, s: &ObjectRef) -> Option<(&'a Meta, Option<&'a str>)> {
    if s.kind == "Node" {
        let n = facts.nodes.iter().find(|n| n.meta.name == s.name)?;
        Some((&n.meta, n.nodepool()))
    } else {
        let c = facts.nodeclaims.iter().find(|c| c.meta.name == s.name)?;
        Some((&c.meta, c.nodepool.as_deref()))
    }
}

/// Whether two messages about `subject` are about one object. By name, except for a masked
/// name: then only events of one `kubectl describe` Events section (which lists its own
/// object's events), or of a `kubectl get events` that selects one object by name
/// (`--field-selector involvedObject.name=...`), are known to share it.
pub fn same_subject(facts: &Facts, a: &Message, b: &Message, subject: &ObjectRef) -> bool {
    if !is_unnumbered_mask(&subject.name) {
        return true;
    }
    if a.evidence.source != b.evidence.source {
        return false;
    }
    let one_object_listed = facts.commands.iter().any(|c| {
        c.evidence.source == a.evidence.source
            && find_ignore_ascii_case(&c.evidence.text, "involvedObject.name=").is_some()
    });
    one_object_listed || (described_event(facts, a) && described_event(facts, b))
}

/// Whether `m` is an event listed in a `kubectl describe` Events section: about the object
/// that describe shows.
pub fn described_event(facts: &Facts, m: &Message) -> bool {
    facts
        .events
        .iter()
        .any(|e| e.from_describe && e.evidence == m.evidence)
}

/// Adds `item` to `list` unless it is already there (keeps first-appearance order).
pub fn push_unique<T: PartialEq>(list: &mut Vec<T>, item: T) {
    if !list.contains(&item) {
        list.push(item);
    }
}

/// `node ip-1, NodeClaim default-x` for the summary; `the node` when nothing is known.
pub fn subjects_label(subjects: &[ObjectRef]) -> String {
    if subjects.is_empty() {
        return "the node".to_string();
    }
    subjects
        .iter()
        .map(|s| match s.kind.as_str() {
            "Node" => format!("node {}", s.name),
            other => format!("{other} {}", s.qualified_name()),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The node to name in a command: a Node subject, else a NodeClaim's node from the facts.
pub fn node_name(facts: &Facts, subjects: &[ObjectRef]) -> Option<String> {
    if let Some(n) = subjects.iter().find(|s| s.kind == "Node") {
        return Some(n.name.clone());
    }
    subjects
        .iter()
        .find(|s| s.kind == "NodeClaim" || s.kind == "Machine")
        .and_then(|s| {
            facts
                .nodeclaims
                .iter()
                .find(|c| c.meta.name == s.name)
                .and_then(|c| c.node_name.clone())
        })
}

/// The NodePools (v1alpha5 Provisioners) of the nodes and NodeClaims a disruption text is
/// about, in subject order, repeats dropped. For each subject the first source that knows:
/// the Node's `karpenter.sh/nodepool` (`karpenter.sh/provisioner-name` before v0.32) label, the
/// NodeClaim naming that node, the NodeClaim itself (its NodePool, labels, or a log line naming
/// both), and last the NodeClaim's name, which Karpenter generates as `<nodepool>-<5 random
/// characters>`.
pub fn subject_nodepools(facts: &Facts, subjects: &[ObjectRef]) -> Vec<String> {
    let mut out = Vec::new();
    for s in subjects {
        let found = match s.kind.as_str() {
            "Node" => node_nodepool(facts, &s.name),
            "NodeClaim" | "Machine" => nodeclaim_nodepool(facts, &s.name),
            "NodePool" | "Provisioner" => Some(s.name.clone()),
            _ => None,
        };
        if let Some(np) = found {
            push_unique(&mut out, np);
        }
    }
    out
}

/// The NodePool of Node `node`: its label, else the NodeClaim (Machine) naming it.
fn node_nodepool(facts: &Facts, node: &str) -> Option<String> {
    let labelled = facts
        .nodes
        .iter()
        .find(|n| n.meta.name == node)
        .and_then(|n| {
            n.nodepool()
                .or_else(|| n.meta.label("karpenter.sh/provisioner-name"))
                .map(str::to_string)
        });
    labelled.or_else(|| {
        facts
            .nodeclaims
            .iter()
            .find(|c| c.node_name.as_deref() == Some(node))
            .and_then(|c| nodeclaim_nodepool(facts, &c.meta.name))
    })
}

/// The NodePool of NodeClaim (Machine) `claim`: the object or the logs, else its name.
fn nodeclaim_nodepool(facts: &Facts, claim: &str) -> Option<String> {
    crate::rules::kw3xx::common::nodepool_of_nodeclaim(facts, claim)
        .or_else(|| nodepool_in_generated_name(facts, claim))
}

/// `web-general` from NodeClaim `web-general-4hq8d`: Karpenter names a NodeClaim with the
/// NodePool's name as generateName, and the API server appends five characters of its
/// random-suffix alphabet (no vowels, no 0, 1 or 3). When the input lists NodePools, the prefix
/// must be one of them.
pub fn nodepool_in_generated_name(facts: &Facts, claim: &str) -> Option<String> {
    const SUFFIX_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";
    let (prefix, suffix) = claim.rsplit_once('-')?;
    let generated = suffix.len() == 5 && suffix.chars().all(|c| SUFFIX_ALPHABET.contains(c));
    if !generated || prefix.is_empty() {
        return None;
    }
    if facts.nodepools.is_empty() || facts.nodepool(prefix).is_some() {
        Some(prefix.to_string())
    } else {
        None
    }
}

/// A command that prints the NodePool of the subjects when the input does not show it: the
/// `karpenter.sh/nodepool` label of the node (or NodeClaim) named, else of every node.
pub fn nodepool_lookup_command(facts: &Facts, subjects: &[ObjectRef]) -> String {
    // Before v0.32 the label was the Provisioner's.
    let label = if crate::rules::version::before_v0_32(facts)
        || subjects.iter().any(|s| s.kind == "Machine")
    {
        "karpenter.sh/provisioner-name"
    } else {
        "karpenter.sh/nodepool"
    };
    match node_name(facts, subjects) {
        Some(node) => format!("kubectl get node {node} -L {label}"),
        None => match subjects
            .iter()
            .find(|s| s.kind == "NodeClaim" || s.kind == "Machine")
        {
            Some(c) if c.kind == "Machine" => format!(
                "kubectl get {} {} -L karpenter.sh/provisioner-name",
                crate::rules::version::MACHINES_RESOURCE,
                c.name
            ),
            Some(c) => format!("kubectl get nodeclaim {} -L karpenter.sh/nodepool", c.name),
            None => format!("kubectl get nodes -L {label}"),
        },
    }
}

/// The messages a rule matched and the objects they concern, in input order.
#[derive(Debug, Default)]
pub struct Hits<'a> {
    pub messages: Vec<&'a Message>,
    pub subjects: Vec<ObjectRef>,
}

impl Hits<'_> {
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

/// Messages whose unescaped text satisfies `pred`, with their subjects.
pub fn hits<'a>(facts: &'a Facts, pred: impl Fn(&str) -> bool) -> Hits<'a> {
    grouped_hits(facts, |t| pred(t).then_some(()))
        .pop()
        .map(|(_, h)| h)
        .unwrap_or_default()
}

/// The messages `key_of` recognises (it returns the group key of an unescaped text), grouped by
/// key in first-appearance order, so that one cause repeated on a Node and its NodeClaim, or
/// logged again and again, makes one diagnosis.
pub fn grouped_hits<'a, K: PartialEq>(
    facts: &'a Facts,
    key_of: impl Fn(&str) -> Option<K>,
) -> Vec<(K, Hits<'a>)> {
    let mut out: Vec<(K, Hits<'a>)> = Vec::new();
    for m in &facts.messages {
        let Some(key) = key_of(&unescaped(&m.text)) else {
            continue;
        };
        let i = match out.iter().position(|(k, _)| *k == key) {
            Some(i) => i,
            None => {
                out.push((key, Hits::default()));
                out.len() - 1
            }
        };
        let group = &mut out[i].1;
        if let Some(s) = subject_of(m) {
            push_unique(&mut group.subjects, s);
        }
        group.messages.push(m);
    }
    out
}

/// How a message ends a Node or NodeClaim, for [`Endings`].
#[derive(Clone, Copy, PartialEq)]
enum Ending {
    /// The Node went away: the node lifecycle controller's `RemovingNode`, Karpenter's
    /// `InstanceTerminating` from the EC2 state-change notice, a `deleted node` log line.
    Gone,
    /// Karpenter is disrupting it: the `DisruptionTerminating` event (`Disrupting Node:
    /// Underutilized/Delete`).
    Disrupting,
}

/// The messages that end a Node or NodeClaim (it went away, or Karpenter disrupted it), found
/// in one pass and kept by the name they are about, with each node's NodeClaim: the KW4xx
/// rules ask "did this node go later?" of every verdict, and asking it of every message made
/// them quadratic on a cluster-wide `kubectl get events -A`. Build one per rule run.
pub struct Endings<'a> {
    /// Per Node / NodeClaim / Machine name: the messages about it that end it, with their
    /// index in `facts.messages` (the answer is the first in input order).
    about: BTreeMap<&'a str, Vec<(usize, Ending)>>,
    /// Controller log lines disrupting nodes (`disrupting node(s)` of v1, `disrupting via ...`
    /// of v0.32 to v0.37, `deprovisioning via ...` before): they name their nodes in the text.
    disrupting_logs: Vec<usize>,
    /// Node name -> its NodeClaim, as [`Facts::claim_of_node`] says, for every node at once.
    claim_of_node: BTreeMap<String, String>,
    /// NodeClaim name -> the nodes its objects name.
    nodes_of_claim: BTreeMap<&'a str, Vec<&'a str>>,
    /// Karpenter's consolidation verdicts (`Unconsolidatable` events) by the object they are
    /// about, in input order: a verdict after a block says the block had passed.
    verdicts: BTreeMap<ObjectRef, Vec<usize>>,
    facts: &'a Facts,
}

impl<'a> Endings<'a> {
    pub fn new(facts: &'a Facts) -> Self {
        let mut about: BTreeMap<&'a str, Vec<(usize, Ending)>> = BTreeMap::new();
        let mut disrupting_logs = Vec::new();
        let mut verdicts: BTreeMap<ObjectRef, Vec<usize>> = BTreeMap::new();
        for (i, d) in facts.messages.iter().enumerate() {
            if d.reason.as_deref() == Some("Unconsolidatable") {
                if let Some(s) = subject_of(d) {
                    verdicts.entry(s).or_default().push(i);
                }
            }
            let text = unescaped(&d.text);
            let from_log = d.origin == crate::facts::MessageOrigin::KarpenterLog;
            let gone =
                matches!(
                    d.reason.as_deref(),
                    Some("RemovingNode") | Some("InstanceTerminating")
                ) || contains_any(&text, &["event: removing node ", "instance is terminating"])
                    || (from_log && contains_ignore_ascii_case(&text, "deleted node"));
            let disrupting = d.reason.as_deref() == Some("DisruptionTerminating")
                || contains_any(&text, &["disrupting node:", "disrupting nodeclaim:"]);
            if from_log
                && contains_any(
                    &text,
                    &[
                        "disrupting node(s)",
                        "disrupting via ",
                        "deprovisioning via ",
                    ],
                )
            {
                disrupting_logs.push(i);
            }
            if !gone && !disrupting {
                continue;
            }
            let Some(name) = machine_subject_name(d) else {
                continue;
            };
            let list = about.entry(name).or_default();
            if gone {
                list.push((i, Ending::Gone));
            }
            if disrupting {
                list.push((i, Ending::Disrupting));
            }
        }
        let mut nodes_of_claim: BTreeMap<&'a str, Vec<&'a str>> = BTreeMap::new();
        for c in &facts.nodeclaims {
            if let Some(node) = c.node_name.as_deref() {
                nodes_of_claim.entry(&c.meta.name).or_default().push(node);
            }
        }
        Endings {
            about,
            disrupting_logs,
            claim_of_node: facts.claims_of_nodes(),
            nodes_of_claim,
            verdicts,
            facts,
        }
    }

    /// The `Unconsolidatable` events about `subject`, in input order.
    pub fn verdicts_about(&self, subject: &ObjectRef) -> impl Iterator<Item = &'a Message> + '_ {
        let messages: &'a [Message] = &self.facts.messages;
        self.verdicts
            .get(subject)
            .into_iter()
            .flatten()
            .map(move |&i| &messages[i])
    }

    /// The names `subject` goes by: itself, and its NodeClaim or Node. `None` for other kinds
    /// and for masks that cannot tell objects apart.
    fn machine_names<'s>(&'s self, subject: &'s ObjectRef) -> Option<Vec<&'s str>> {
        if is_unnumbered_mask(&subject.name) {
            return None;
        }
        let mut names = vec![subject.name.as_str()];
        match subject.kind.as_str() {
            "Node" => names.extend(self.claim_of_node.get(&subject.name).map(String::as_str)),
            "NodeClaim" | "Machine" => names.extend(
                self.nodes_of_claim
                    .get(subject.name.as_str())
                    .into_iter()
                    .flatten()
                    .copied(),
            ),
            _ => return None,
        }
        Some(names)
    }

    /// The first message, in input order, ending one of `names` in one of the `wanted` ways
    /// (the controller's disrupting log lines count as [`Ending::Disrupting`]) that `accept`
    /// takes.
    fn first_ending(
        &self,
        names: &[&str],
        wanted: &[Ending],
        accept: impl Fn(&Message) -> bool,
    ) -> Option<&'a Message> {
        let messages = &self.facts.messages;
        let by_subject = names
            .iter()
            .filter_map(|n| self.about.get(n))
            .flatten()
            .filter(|(_, e)| wanted.contains(e))
            .map(|(i, _)| *i);
        let by_log = self
            .disrupting_logs
            .iter()
            .copied()
            .filter(|_| wanted.contains(&Ending::Disrupting))
            .filter(|&i| {
                names
                    .iter()
                    .any(|n| names_word(&messages[i].evidence.text, n))
            });
        by_subject
            .chain(by_log)
            .filter(|&i| accept(&messages[i]))
            .min()
            .map(|i| &messages[i])
    }

    fn ended_after(
        &self,
        before: &Message,
        subject: &ObjectRef,
        wanted: &[Ending],
    ) -> Option<&'a Message> {
        let names = self.machine_names(subject)?;
        self.first_ending(&names, wanted, |d| {
            d.evidence != before.evidence && wholly_after(d, before)
        })
    }

    /// A message saying Karpenter disrupted `subject` (or its Node / NodeClaim counterpart),
    /// or that the Node went away, later than `before`: the `DisruptionTerminating` event
    /// (`Disrupting Node: Underutilized/Delete`, `Disrupting NodeClaim: Drifted/Replace`), the
    /// node lifecycle controller's `RemovingNode`, a controller log line disrupting it
    /// (`disrupting node(s)` of v1 naming it in `disrupted-nodes`; `disrupting via ...` of
    /// v0.32 to v0.37; `deprovisioning via ...` before) or `deleted node`. Disruption can be
    /// rolled back (the replacement never initializes), so the removal must come after every
    /// occurrence of `before`, by time when both say when, else by line in the same source.
    pub fn removed_after(&self, before: &Message, subject: &ObjectRef) -> Option<&'a Message> {
        self.ended_after(before, subject, &[Ending::Gone, Ending::Disrupting])
    }

    /// Like [`Endings::removed_after`], but only the Node gone (`RemovingNode`,
    /// `InstanceTerminating`, a `deleted node` log line), not a disruption under way: a drain
    /// blocked by a budget is the story of a disruption started, and stays worth telling until
    /// the node is gone.
    pub fn gone_after(&self, before: &Message, subject: &ObjectRef) -> Option<&'a Message> {
        self.ended_after(before, subject, &[Ending::Gone])
    }

    /// A message before `after` (or at the same moment) saying Karpenter itself was
    /// disrupting `subject` (or its Node / NodeClaim counterpart): the `DisruptionTerminating`
    /// event or a controller log line disrupting it. An `InstanceTerminating` after it is the
    /// echo of Karpenter's own termination, not EC2 taking the instance.
    pub fn disrupted_before(&self, after: &Message, subject: &ObjectRef) -> Option<&'a Message> {
        let names = self.machine_names(subject)?;
        self.first_ending(&names, &[Ending::Disrupting], |d| {
            d.evidence != after.evidence && !later(d, after)
        })
    }

    /// `found` without the messages about a node or NodeClaim the input shows Karpenter
    /// disrupting or removing afterwards: a verdict that kept the node (`Can't replace with a
    /// cheaper node`, `Node is nominated for a pending pod`, `Not all pods would schedule,
    /// ...`) is history once the node went, and does not answer "why is it still here".
    /// Messages without a subject stay.
    pub fn without_later_removal<'b>(&self, found: Hits<'b>) -> Hits<'b> {
        let mut out = Hits::default();
        for m in found.messages {
            let subject = subject_of(m);
            if subject
                .as_ref()
                .is_some_and(|s| self.removed_after(m, s).is_some())
            {
                continue;
            }
            if let Some(s) = subject {
                push_unique(&mut out.subjects, s);
            }
            out.messages.push(m);
        }
        out
    }
}

/// The Node, NodeClaim or Machine name a message is about (see [`subject_of`]).
fn machine_subject_name(m: &Message) -> Option<&str> {
    if let Some(o) = &m.object {
        return matches!(o.kind.as_str(), "Node" | "NodeClaim" | "Machine")
            .then_some(o.name.as_str());
    }
    let s = subject_of(m)?;
    if !matches!(s.kind.as_str(), "Node" | "NodeClaim" | "Machine") {
        return None;
    }
    // A name read from the text: borrow it back from the text it came from.
    let at = m.text.find(s.name.as_str())?;
    Some(&m.text[at..at + s.name.len()])
}

/// Whether `said` (Karpenter's `isn't initialized` about Node `node`) is only the node's first
/// minutes: Karpenter says it on every pass while a new node boots. Seen once, at most three
/// minutes before the paste, and the node turned Ready after it (`NodeReady`, `Type: Ready,
/// Status: False -> True`): nothing shows initialization stuck yet.
pub fn launch_time_only(facts: &Facts, said: &Message, node: &str) -> bool {
    const YOUNG_SECONDS: i64 = 180;
    let e = &said.evidence;
    let once = e.count <= 1 && (e.first_seen.is_none() || e.first_seen == e.last_seen);
    let age = e.last_seen.as_deref().and_then(|v| {
        if let Some(ago) = v.trim().strip_suffix(" ago") {
            return crate::rules::time::age_seconds(ago);
        }
        let at = crate::rules::time::epoch_seconds(v)?;
        let now = crate::rules::time::now_seconds(facts, |_| false)?;
        Some(now - at)
    });
    let young = age.is_some_and(|a| (0..=YOUNG_SECONDS).contains(&a));
    if !once || !young {
        return false;
    }
    let subject = ObjectRef::new("Node", None, node);
    facts.messages.iter().any(|m| {
        let about = subject_of(m).is_some_and(|s| s.kind == "Node" && s.name == node)
            && same_subject(facts, said, m, &subject);
        let text = unescaped(&m.text);
        let ready = m.reason.as_deref() == Some("NodeReady")
            || contains_ignore_ascii_case(&text, "status is now: NodeReady")
            || (contains_ignore_ascii_case(&text, "Type: Ready,")
                && contains_ignore_ascii_case(&text, "-> True"));
        about && ready && later(m, said)
    })
}

/// Whether `text` holds `name` as a whole name: not inside a longer name (`ip-10-0-1-1` in
/// `ip-10-0-1-12`, or in `ip-10-0-1-1.ec2.internal` when the name is the short form).
fn names_word(text: &str, name: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    !name.is_empty()
        && text.match_indices(name).any(|(i, _)| {
            let before = text[..i].chars().next_back();
            let rest = &text[i + name.len()..];
            let mut after = rest.chars();
            let continues = match after.next() {
                Some('.') => after.next().is_some_and(|c| c.is_ascii_alphanumeric()),
                Some(c) => part(c),
                None => false,
            };
            !before.is_some_and(|c| part(c) || c == '.') && !continues
        })
}

/// Whether `a` happened after `b`: their latest occurrences when both say when in one way
/// (timestamps, or kubectl ages: `6m ago` is after `41m ago`), else `a` below `b` in the same
/// source.
pub fn later(a: &Message, b: &Message) -> bool {
    compare(a, a.evidence.last_seen.as_deref(), b)
}

/// Whether every occurrence of `a` came after every occurrence of `b`: `a`'s first after `b`'s
/// last (`2m (x12 over 3h)` is not wholly after `4m (x27 over 57m)`).
pub fn wholly_after(a: &Message, b: &Message) -> bool {
    compare(a, a.evidence.first_seen.as_deref(), b)
}

fn compare(a: &Message, a_seen: Option<&str>, b: &Message) -> bool {
    fn moment(value: Option<&str>, m: &Message) -> Option<(bool, i64)> {
        let value = value.or(m.time.as_deref())?;
        if let Some(t) = crate::rules::time::epoch_seconds(value) {
            return Some((true, t));
        }
        let age = value.trim().strip_suffix(" ago")?;
        crate::rules::time::age_seconds(age).map(|s| (false, -s))
    }
    match (
        moment(a_seen, a),
        moment(b.evidence.last_seen.as_deref(), b),
    ) {
        (Some((ka, ta)), Some((kb, tb))) if ka == kb => ta > tb,
        _ => a.evidence.source == b.evidence.source && a.evidence.line > b.evidence.line,
    }
}

/// The reason of a `ConsolidationRejected` event (kubernetes-sigs/karpenter PR #2786,
/// `Consolidation rejected: <command>, reason: <reason> (savings: $<x>)`): the category
/// Karpenter's re-validation just before acting gave, one of `budget` (a pod was nominated to
/// the node, or the NodePool's disruption budget is used up), `scheduling`, `churn` or
/// `unknown`. Lower-cased; `None` for any other text.
pub fn consolidation_rejected_reason(text: &str) -> Option<String> {
    let start = find_ignore_ascii_case(text, "consolidation rejected:")?;
    let rest = &text[start..];
    let at = find_ignore_ascii_case(rest, ", reason: ")?;
    let reason: String = rest[at + ", reason: ".len()..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    (!reason.is_empty()).then(|| reason.to_ascii_lowercase())
}

/// The NodePool a consolidation command names (`nodepools=[<np>]`), when it names one only.
pub fn command_nodepool(text: &str) -> Option<String> {
    let at = find_ignore_ascii_case(text, "nodepools=[")?;
    let inner = text[at + "nodepools=[".len()..].split(']').next()?;
    match inner.split(',').map(str::trim).collect::<Vec<_>>()[..] {
        [one] if !one.is_empty() && !one.contains(' ') => Some(one.to_string()),
        _ => None,
    }
}

/// `ns/name` as (namespace, name); a bare name has no namespace.
pub fn split_qualified(qualified: &str) -> (Option<&str>, &str) {
    match qualified.split_once('/') {
        Some((ns, name)) => (Some(ns), name),
        None => (None, qualified),
    }
}

/// `-n <ns> ` for a command, empty without a namespace.
pub fn ns_flag(ns: Option<&str>) -> String {
    ns.map(|n| format!(" -n {n}")).unwrap_or_default()
}

/// The objects of `kind` a `kubectl annotate` prompt line of the input gives `annotation`
/// (`=true`, quoted or not), each with the line and the command's `-n`: `kubectl annotate
/// [--overwrite] node <a> [<b>] <annotation>=true`, `kubectl annotate nodes/<a> ...`, flags in
/// any place.
pub fn annotated_by_command(
    facts: &Facts,
    kind: &str,
    annotation: &str,
) -> Vec<(String, Evidence, Option<String>)> {
    const TAKES_VALUE: &[&str] = &[
        "-n",
        "--namespace",
        "--context",
        "--kubeconfig",
        "--cluster",
        "--user",
        "-l",
        "--selector",
        "--field-selector",
        "--resource-version",
        "-o",
        "--output",
        "--field-manager",
        "-f",
        "--filename",
    ];
    let mut out = Vec::new();
    for c in facts.commands.iter().filter(|c| {
        c.tool == "kubectl"
            && c.verb.as_deref() == Some("annotate")
            && c.kinds.iter().any(|k| k == kind)
    }) {
        let line = c.evidence.text.split('|').next().unwrap_or_default();
        let mut tokens = line
            .split_whitespace()
            .skip_while(|t| *t != "annotate")
            .skip(1);
        let mut resource_seen = false;
        let mut sets = false;
        let mut names: Vec<String> = Vec::new();
        while let Some(token) = tokens.next() {
            if token.starts_with('-') {
                if TAKES_VALUE.contains(&token) {
                    tokens.next();
                }
                continue;
            }
            if !resource_seen {
                resource_seen = true;
                if let Some((_, name)) = token.split_once('/') {
                    names.push(name.to_string());
                }
                continue;
            }
            if let Some((key, value)) = token.split_once('=') {
                let value = value.trim_matches(|ch| ch == '"' || ch == '\'');
                sets |= key == annotation && value.eq_ignore_ascii_case("true");
            } else if !token.ends_with('-') {
                names.push(token.to_string());
            }
        }
        if sets {
            for name in names {
                if !out
                    .iter()
                    .any(|(n, _, ns)| *n == name && *ns == c.namespace)
                {
                    out.push((name, c.evidence.clone(), c.namespace.clone()));
                }
            }
        }
    }
    out
}

/// kubectl's `deleted` / `annotated` output lines of the input, found once per rule run for
/// [`lifted_after`], which the KW4xx rules ask per blocked object: reading every message per
/// question made them quadratic on a cluster-wide `kubectl get events -A`.
pub struct KubectlOutputs<'a> {
    facts: &'a Facts,
    lines: Vec<&'a Message>,
}

impl<'a> KubectlOutputs<'a> {
    pub fn new(facts: &'a Facts) -> Self {
        let lines = facts
            .messages
            .iter()
            .filter(|m| {
                let t = m.text.trim_end();
                t.ends_with(" deleted") || t.ends_with(" annotated")
            })
            .collect();
        KubectlOutputs { facts, lines }
    }
}

/// Where the input shows the object removed, or the annotation taken off it, after `after` (a
/// later line of the same source): a `kubectl delete <kind> <name>` or `kubectl annotate <kind>
/// <name> <annotation>-` prompt line, or kubectl's output `<kind>/<name> deleted`, `<kind>
/// "<name>" deleted`. `kind` is the canonical kind (`Pod`, `Node`); `annotation` `None` asks
/// for a delete only.
pub fn lifted_after(
    outputs: &KubectlOutputs<'_>,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
    annotation: Option<&str>,
    after: &Evidence,
) -> Option<Evidence> {
    let facts = outputs.facts;
    let later = |e: &Evidence| e.source == after.source && e.line > after.line;
    let ns_ok = |ns: Option<&str>| namespace.is_none() || ns.is_none() || ns == namespace;
    let command = facts.commands.iter().find(|c| {
        if !later(&c.evidence) || c.tool != "kubectl" || !ns_ok(c.namespace.as_deref()) {
            return false;
        }
        let names_it = c.kinds.iter().any(|k| k == kind)
            && (c.name.as_deref() == Some(name)
                || c.evidence
                    .text
                    .split_whitespace()
                    .any(|w| w == name || w.strip_suffix(name).is_some_and(|p| p.ends_with('/'))));
        let removes = match (c.verb.as_deref(), annotation) {
            (Some("delete"), _) => true,
            (Some("annotate"), Some(a)) => c
                .evidence
                .text
                .split_whitespace()
                .any(|w| w.strip_suffix('-') == Some(a)),
            _ => false,
        };
        names_it && removes
    });
    if let Some(c) = command {
        return Some(c.evidence.clone());
    }
    let lower = kind.to_ascii_lowercase();
    let deleted = [
        format!("{lower}/{name} deleted"),
        format!("{lower} \"{name}\" deleted"),
    ];
    let annotated = format!("{lower}/{name} annotated");
    outputs
        .lines
        .iter()
        .copied()
        .find(|m| {
            (deleted.iter().any(|o| m.text.trim() == o.as_str())
                || (annotation.is_some() && m.text.trim() == annotated
                        // `annotated` alone does not say which annotation: the prompt line
                        // above it must take this one off.
                        && facts.commands.iter().any(|c| {
                            c.evidence.source == m.evidence.source
                                && c.evidence.line < m.evidence.line
                                && annotation.is_some_and(|a| {
                                    c.evidence
                                        .text
                                        .split_whitespace()
                                        .any(|w| w.strip_suffix('-') == Some(a))
                                })
                        })))
                && later(&m.evidence)
        })
        .map(|m| m.evidence.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The era before v1.0 from the wording alone, and a v1-only text winning over an old hint
    /// in a mixed paste.
    #[test]
    fn era_before_v1_from_wording() {
        let era = |text: &str| {
            era_before_v1(&crate::ingest::ingest(&[crate::Document::new(
                "paste", text,
            )]))
        };
        for text in [
            "2024-05-02T03:11:40.118Z\tINFO\tcontroller.disruption\tdisrupting via consolidation delete, terminating 1 candidates ip-1/m5.large/on-demand\t{\"commit\": \"17dd42b\"}",
            r#"{"level":"INFO","time":"2024-05-02T03:11:40.118Z","logger":"controller.provisioner","message":"found provisionable pod(s)","commit":"17dd42b"}"#,
            "default  3m  Normal  DisruptionBlocked  node/ip-1  Cannot disrupt Node: Nominated for a pending pod",
            "default  3m  Normal  DisruptionBlocked  node/ip-1  Cannot disrupt Node: Pod \"ns/p\" has \"karpenter.sh/do-not-disrupt\" annotation",
        ] {
            assert_eq!(era(text), Some(true), "{text}");
        }
        for text in [
            r#"{"level":"INFO","time":"2025-05-02T03:11:40.118Z","logger":"controller","message":"found provisionable pod(s)","commit":"17dd42b","controller":"provisioner"}"#,
            "default  3m  Normal  DisruptionBlocked  node/ip-1  Cannot disrupt Node: state node is nominated for a pending pod\ndefault  3m  Normal  Unconsolidatable  node/ip-1  NodePool \"a\" has non-empty consolidation disabled",
        ] {
            assert_ne!(era(text), Some(true), "{text}");
        }
        assert_eq!(
            era("default 1m Normal DisruptionBlocked node/ip-1 Cannot disrupt Node: Nominated for a pending pod\ndefault 1m Normal Unconsolidatable node/ip-2 NodePool \"a\" has non-empty consolidation disabled"),
            Some(false)
        );
    }

    /// A v0.3x log record's controller-runtime `Starting workers` line carries the flat logger
    /// and a controller field too: no proof of v1.
    #[test]
    fn controller_runtime_lines_do_not_date_v1() {
        let facts = crate::ingest::ingest(&[crate::Document::new(
            "paste",
            r#"{"level":"INFO","time":"2024-02-29T15:08:40.101Z","logger":"controller","message":"Starting workers","commit":"596ea97","controller":"nodeclaim.lifecycle","worker count":1000}"#,
        )]);
        assert_ne!(era_before_v1(&facts), Some(false));
    }

    /// Custom columns put the kind and the name side by side; a sentence starting `Node is`
    /// names no node.
    #[test]
    fn subject_from_kind_and_name_columns() {
        let subject = |text: &str| {
            let facts = crate::ingest::ingest(&[crate::Document::new("paste", text)]);
            facts.messages.first().and_then(subject_of)
        };
        let s = subject("2026-12-07T08:01:10Z   NodeClaim   default-q8w2e   DisruptionBlocked   Pdb prevents pod evictions (PodDisruptionBudget=[a/b])");
        assert_eq!(
            s.map(|s| (s.kind, s.name)),
            Some(("NodeClaim".to_string(), "default-q8w2e".to_string()))
        );
        assert_eq!(subject("Node is nominated for a pending pod"), None);
    }

    #[test]
    fn nodepools_from_labels_claims_and_generated_names() {
        let facts = |text: &str| crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        let node = |n: &str| ObjectRef::new("Node", None, n);
        let claim = |n: &str| ObjectRef::new("NodeClaim", None, n);
        // The node's label.
        let described = facts(&crate::testing::karpenter_node_describe(
            "spot",
            "Normal  Unconsolidatable  2m  karpenter  Can't replace with a cheaper node",
        ));
        assert_eq!(
            subject_nodepools(
                &described,
                &[node("ip-10-0-12-34.eu-west-1.compute.internal")]
            ),
            ["general"]
        );
        // A generated NodeClaim name; a name Karpenter did not generate says nothing.
        let none = facts("");
        assert_eq!(
            subject_nodepools(&none, &[claim("batch-spot-x7k2p"), claim("gpu-4hq8d")]),
            ["batch-spot", "gpu"]
        );
        for not_generated in ["my-static-node", "web-general-abcde", "web-4hq8", "x7k2p"] {
            assert!(
                subject_nodepools(&none, &[claim(not_generated)]).is_empty(),
                "{not_generated}"
            );
        }
        // NodePools listed: the prefix must be one of them.
        let listed = facts("apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      nodeClassRef:\n        group: karpenter.k8s.aws\n        kind: EC2NodeClass\n        name: default\n");
        assert!(subject_nodepools(&listed, &[claim("batch-spot-x7k2p")]).is_empty());
        assert_eq!(subject_nodepools(&listed, &[claim("web-x7k2p")]), ["web"]);
        // Nothing known: a command that prints it.
        assert_eq!(
            nodepool_lookup_command(&none, &[node("ip-1")]),
            "kubectl get node ip-1 -L karpenter.sh/nodepool"
        );
        assert_eq!(
            nodepool_lookup_command(&none, &[claim("static-a")]),
            "kubectl get nodeclaim static-a -L karpenter.sh/nodepool"
        );
    }

    #[test]
    fn annotate_commands_in_every_argument_order() {
        let text = "$ kubectl annotate --overwrite node ip-10-0-1-1 karpenter.sh/do-not-disrupt=true
                    $ kubectl annotate nodes/ip-10-0-1-2 karpenter.sh/do-not-disrupt=\"true\" --overwrite
                    $ k --context prod annotate node ip-10-0-1-3 ip-10-0-1-4 --overwrite=true karpenter.sh/do-not-disrupt=true
                    $ kubectl annotate node ip-10-0-1-5 karpenter.sh/do-not-disrupt=false --overwrite
                    $ kubectl annotate node ip-10-0-1-6 karpenter.sh/do-not-disrupt-
                    $ kubectl annotate pod web-0 karpenter.sh/do-not-disrupt=true
";
        let facts = crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        let names: Vec<String> =
            annotated_by_command(&facts, "Node", "karpenter.sh/do-not-disrupt")
                .into_iter()
                .map(|(n, _, _)| n)
                .collect();
        assert_eq!(
            names,
            ["ip-10-0-1-1", "ip-10-0-1-2", "ip-10-0-1-3", "ip-10-0-1-4"]
        );
    }

    #[test]
    fn structured_values() {
        assert_eq!(
            serrors_values(
                "Pdb prevents pod evictions (PodDisruptionBudget=[a/b c/d])",
                "PodDisruptionBudget"
            ),
            Some(vec!["a/b".to_string(), "c/d".to_string()])
        );
        assert_eq!(
            serrors_values(
                "Pdb prevents pod evictions (PodDisruptionBudget=default/x)",
                "PodDisruptionBudget"
            ),
            Some(vec!["default/x".to_string()])
        );
        assert_eq!(
            serrors_values(
                "Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[a/b a/c])",
                "PodDisruptionBudget(s)"
            ),
            Some(vec!["a/b".to_string(), "a/c".to_string()])
        );
        assert_eq!(
            serrors_values("x (NodePool=legacy, Pod=ns/p)", "Pod"),
            Some(vec!["ns/p".to_string()])
        );
        // `Pod=` inside another key is not the key.
        assert_eq!(serrors_values("(PodDisruptionBudget=a/b)", "Pod"), None);
    }

    #[test]
    fn subjects_from_table_columns() {
        let m = Message {
            text: "50m Normal DisruptionBlocked nodeclaim/node-68kbk Cannot disrupt NodeClaim: x"
                .into(),
            ..Default::default()
        };
        assert_eq!(
            subject_of(&m),
            Some(ObjectRef::new("NodeClaim", None, "node-68kbk"))
        );
        let plain = Message {
            text: "Pdb \"a/b\" prevents pod evictions".into(),
            ..Default::default()
        };
        assert_eq!(subject_of(&plain), None);
    }

    #[test]
    fn rejection_reasons() {
        let r = |t: &str| consolidation_rejected_reason(t);
        assert_eq!(
            r("Consolidation rejected: delete: [ip-10-0-1-2.ec2.internal], reason: budget (savings: $0.11)")
                .as_deref(),
            Some("budget")
        );
        assert_eq!(
            r("Consolidation rejected: Underutilized/0b6c: replace: nodepools=[default]: [a] -> [1 replacement] (savings: $0.20), reason: Scheduling (savings: $0.20)").as_deref(),
            Some("scheduling")
        );
        assert_eq!(
            r("Consolidation candidate: delete: [a] (savings: $0.11)"),
            None
        );
        assert_eq!(r("reason: budget"), None);
        assert_eq!(
            command_nodepool("Underutilized/x: delete: nodepools=[batch]: [a] (savings: $1.00)")
                .as_deref(),
            Some("batch")
        );
        assert_eq!(command_nodepool("nodepools=[a,b]: [x]"), None);
        assert_eq!(command_nodepool("delete: [x]"), None);
    }

    #[test]
    fn a_verdict_before_the_node_went_is_history() {
        let facts = |text: &str| crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        let verdict = |f: &Facts| {
            f.messages
                .iter()
                .find(|m| m.text.contains("cheaper"))
                .cloned()
                .unwrap()
        };
        let node = ObjectRef::new("Node", None, "ip-10-0-1-1.ec2.internal");
        // Disrupted after the verdict: history. Before it (rolled back), or another node: not.
        let after = facts("LAST SEEN   TYPE     REASON                  OBJECT                          MESSAGE\n30m   Normal   Unconsolidatable   node/ip-10-0-1-1.ec2.internal   Can't replace with a cheaper node\n5m   Normal   DisruptionTerminating   node/ip-10-0-1-1.ec2.internal   Disrupting Node: Underutilized/Delete\n");
        assert!(Endings::new(&after)
            .removed_after(&verdict(&after), &node)
            .is_some());
        let before = facts("LAST SEEN   TYPE     REASON                  OBJECT                          MESSAGE\n5m   Normal   Unconsolidatable   node/ip-10-0-1-1.ec2.internal   Can't replace with a cheaper node\n30m   Normal   DisruptionTerminating   node/ip-10-0-1-1.ec2.internal   Disrupting Node: Drifted/Replace\n");
        assert!(Endings::new(&before)
            .removed_after(&verdict(&before), &node)
            .is_none());
        let other = facts("LAST SEEN   TYPE     REASON                  OBJECT                          MESSAGE\n30m   Normal   Unconsolidatable   node/ip-10-0-1-1.ec2.internal   Can't replace with a cheaper node\n5m   Normal   DisruptionTerminating   node/ip-10-0-1-12.ec2.internal   Disrupting Node: Underutilized/Delete\n");
        assert!(Endings::new(&other)
            .removed_after(&verdict(&other), &node)
            .is_none());
        assert!(names_word("[{\"Node\":{\"name\":\"ip-1-2\"}}]", "ip-1-2"));
        assert!(!names_word("ip-1-23 ip-1-2x", "ip-1-2"));
        assert!(!names_word("ip-1-2.ec2.internal", "ip-1-2"));
        assert!(names_word(
            "terminating 1 candidates ip-1-2/m5.large",
            "ip-1-2"
        ));
    }

    #[test]
    fn first_minute_not_initialized_then_ready() {
        let facts = |text: &str| crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        let node = "ip-10-1-2-3.ec2.internal";
        let said = |f: &Facts| {
            f.messages
                .iter()
                .find(|m| m.text.contains("isn't initialized"))
                .cloned()
                .unwrap()
        };
        let table = |blocked: &str, ready: &str| {
            format!("LAST SEEN   TYPE     REASON              OBJECT                         MESSAGE\n{blocked}   Normal   DisruptionBlocked   node/{node}   Node isn't initialized\n{ready}   Normal   NodeReady   node/{node}   Node {node} status is now: NodeReady\n")
        };
        let young = facts(&table("50s", "31s"));
        assert!(launch_time_only(&young, &said(&young), node));
        // Older than the first minutes, or Ready before the block: not only launch time.
        let old = facts(&table("12m", "11m"));
        assert!(!launch_time_only(&old, &said(&old), node));
        let ready_before = facts(&table("50s", "55s"));
        assert!(!launch_time_only(&ready_before, &said(&ready_before), node));
    }

    #[test]
    fn unescaping() {
        assert_eq!(
            unescaped(r#"Pod \"default/x\" has \"karpenter.sh/do-not-disrupt\" annotation"#),
            r#"Pod "default/x" has "karpenter.sh/do-not-disrupt" annotation"#
        );
    }
}
