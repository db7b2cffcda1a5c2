//! What the KW3xx rules share: NodeClaim and NodePool conditions from every form the input can
//! carry them in (typed objects, decoded condition messages, condition-transition events), the
//! objects a message names, and the launch-error grammar of every Karpenter version.

use std::collections::{BTreeMap, BTreeSet};

use crate::document::Evidence;
use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, MessageOrigin, ObjectRef};
use crate::rules::kw2xx::scheduling::{record_of, tail_after};

/// One status condition of a NodeClaim or NodePool, wherever the input showed it.
#[derive(Debug, Clone)]
pub struct SeenCondition {
    /// `NodeClaim` or `NodePool`, when known.
    pub kind: Option<String>,
    pub object: Option<String>,
    pub condition_type: String,
    pub status: String,
    pub reason: String,
    pub message: String,
    pub evidence: Vec<Evidence>,
}

impl SeenCondition {
    pub fn is(&self, condition_type: &str) -> bool {
        crate::facts::condition_type_is(&self.condition_type, condition_type)
    }

    pub fn not_true(&self) -> bool {
        !self.status.eq_ignore_ascii_case("true")
    }

    /// `Type=Status Reason: message`, the way the report quotes a condition.
    pub fn display(&self) -> String {
        let mut s = format!("{}={} {}", self.condition_type, self.status, self.reason);
        if !self.message.is_empty() {
            s.push_str(": ");
            s.push_str(&self.message);
        }
        s
    }
}

/// Every NodeClaim and NodePool condition the facts hold, each once.
pub fn conditions(facts: &Facts) -> Vec<SeenCondition> {
    let mut out: Vec<SeenCondition> = Vec::new();
    let mut push = |c: SeenCondition| {
        let dup = out.iter_mut().find(|o| {
            o.condition_type == c.condition_type
                && o.reason == c.reason
                && o.message == c.message
                && (o.object.is_none() || c.object.is_none() || o.object == c.object)
        });
        match dup {
            Some(o) => {
                if o.object.is_none() {
                    o.object = c.object.clone();
                    o.kind = c.kind.clone();
                }
                for e in c.evidence {
                    // The same line, whether a typed object's or a decoded message's.
                    if !o
                        .evidence
                        .iter()
                        .any(|x| x.source == e.source && x.line == e.line)
                    {
                        o.evidence.push(e);
                    }
                }
            }
            None => out.push(c),
        }
    };
    let typed = facts
        .nodeclaims
        .iter()
        .map(|c| ("NodeClaim", &c.meta, &c.conditions))
        .chain(
            facts
                .nodepools
                .iter()
                .map(|p| ("NodePool", &p.meta, &p.conditions)),
        );
    for (kind, meta, conds) in typed {
        for c in conds {
            let evidence = c
                .evidence
                .clone()
                .or_else(|| meta.evidence.clone())
                .into_iter()
                .collect();
            push(SeenCondition {
                kind: Some(kind.to_string()),
                object: Some(meta.name.clone()),
                condition_type: c.condition_type.clone(),
                status: c.status.clone(),
                reason: c.reason.clone().unwrap_or_default(),
                message: c.message.clone().unwrap_or_default(),
                evidence,
            });
        }
    }
    for m in &facts.messages {
        let parsed = if m.origin == MessageOrigin::Condition {
            parse_condition_text(&m.text, m.reason.as_deref())
        } else {
            parse_transition(&m.text)
        };
        if let Some(mut c) = parsed {
            if let Some(o) = &m.object {
                c.kind = Some(o.kind.clone());
                c.object = Some(o.name.clone());
            }
            c.evidence = vec![message_evidence(m)];
            push(c);
        }
    }
    out
}

fn message_evidence(m: &Message) -> Evidence {
    let mut e = m.evidence.clone();
    if e.first_seen.is_none() {
        e.first_seen = m.time.clone();
        e.last_seen = m.time.clone();
    }
    e
}

/// `Type=Status Reason: message` (the decoded form of a condition).
pub fn parse_condition_text(text: &str, reason: Option<&str>) -> Option<SeenCondition> {
    let (head, rest) = text.trim().split_once(' ').unwrap_or((text.trim(), ""));
    let (condition_type, status) = head.split_once('=')?;
    let (parsed_reason, message) = match rest.split_once(": ") {
        Some((r, m)) if !r.contains(' ') => (r.trim(), m.trim()),
        _ if !rest.contains(' ') => (rest.trim().trim_end_matches(':'), ""),
        _ => ("", rest.trim()),
    };
    Some(SeenCondition {
        kind: None,
        object: None,
        condition_type: condition_type.to_string(),
        status: status.to_string(),
        reason: reason.unwrap_or(parsed_reason).to_string(),
        message: message.to_string(),
        evidence: Vec::new(),
    })
}

/// `Status condition transitioned, Type: T, Status: A -> B, Reason: R[, Message: M]`: the
/// condition after the transition.
pub fn parse_transition(text: &str) -> Option<SeenCondition> {
    let rest = tail_after(text, "Status condition transitioned, Type: ")?;
    let (condition_type, rest) = rest.split_once(", Status: ")?;
    let (statuses, rest) = rest.split_once(", Reason: ").unwrap_or((rest, ""));
    let status = statuses.rsplit("-> ").next().unwrap_or(statuses).trim();
    let (reason, message) = rest.split_once(", Message: ").unwrap_or((rest, ""));
    Some(SeenCondition {
        kind: None,
        object: None,
        condition_type: condition_type.trim().to_string(),
        status: status.to_string(),
        reason: reason.trim().to_string(),
        message: message.trim().to_string(),
        evidence: Vec::new(),
    })
}

/// The NodeClaim a message is about: the event's object, the log's `NodeClaim` field (lower-case
/// `nodeclaim` / `machine` before v0.37), `nodeclaim/<name>` or `NodeClaim <name> event:`.
/// The log fields that name a claim: v1's `NodeClaim` object (`{"name": ...}`), the
/// interruption controller's `nodeClaim` string of some v1 releases (`"nodeClaim":
/// "spot-batch-9xw4q"` on `initiating delete from interruption message`), v0.32-v0.37's
/// `nodeclaim`, and the v0.28-v0.31 Machine's.
const CLAIM_KEYS: [&str; 5] = ["NodeClaim", "nodeClaim", "nodeclaim", "Machine", "machine"];

pub fn nodeclaim_of(facts: &Facts, m: &Message) -> Option<String> {
    if let Some(o) = &m.object {
        if o.kind.eq_ignore_ascii_case("nodeclaim") || o.kind.eq_ignore_ascii_case("machine") {
            return Some(o.name.clone());
        }
    }
    if let Some(r) = record_of(facts, m) {
        for key in CLAIM_KEYS {
            if let Some(n) = r.field_name(key).filter(|n| !n.is_empty()) {
                return Some(n);
            }
        }
    }
    name_after(&m.text, "nodeclaim/")
        .or_else(|| {
            let n = name_after(&m.text, "NodeClaim ")?;
            contains_ignore_ascii_case(&m.text, &format!("NodeClaim {n} event:")).then_some(n)
        })
        // The JSON tail of a pre-v0.37 console log line.
        .or_else(|| json_field_in_text(&m.text, "nodeclaim"))
        .or_else(|| json_field_in_text(&m.text, "machine"))
}

/// A grepped `kubectl describe` of several objects (`kubectl describe nodeclaims | grep -E
/// 'Name:|Reason:|Message:'`) that no describe parser took apart: raw line `m` belongs to the
/// nearest unindented `Name:` above it, and that object's `Node Name:` is the first one after
/// `m` before the next `Name:`. Returns (the object's name, its node's name).
pub fn describe_block(facts: &Facts, m: &Message) -> (Option<String>, Option<String>) {
    if m.origin != MessageOrigin::Unrecognised {
        return (None, None);
    }
    let value = |x: &Message, key: &str| -> Option<String> {
        let v = x.text.trim().strip_prefix(key)?.trim();
        (!v.is_empty() && !v.contains(char::is_whitespace)).then(|| v.to_string())
    };
    // The object's own `Name:` starts its line; a reference's (`Node Class Ref: Name:`) is
    // indented.
    let own_name = |x: &Message| -> Option<String> {
        if x.evidence.text.starts_with("Name:") {
            value(x, "Name:")
        } else {
            None
        }
    };
    let mut lines: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|x| {
            x.origin == MessageOrigin::Unrecognised && x.evidence.source == m.evidence.source
        })
        .collect();
    lines.sort_by_key(|x| x.evidence.line);
    let name = lines
        .iter()
        .rev()
        .filter(|x| x.evidence.line < m.evidence.line)
        .find_map(|x| own_name(x));
    let node = lines
        .iter()
        .filter(|x| x.evidence.line > m.evidence.line)
        .take_while(|x| own_name(x).is_none())
        .find_map(|x| value(x, "Node Name:"));
    (name, node)
}

/// Whether a log record is about NodeClaim `name`: its `NodeClaim` field, or before v0.32 its
/// `Machine` / `machine` field (`{"machine": "default-r9k2x"}` of a v0.2x console line).
pub fn record_names_claim(r: &crate::facts::LogRecord, name: &str) -> bool {
    CLAIM_KEYS.iter().any(|k| r.names(k, name))
}

/// Whether the objects show the NodeClaim or the Node initialized now: the NodeClaim's
/// `Initialized` condition True, Karpenter's `initialized nodeclaim` line, or the Node's
/// `karpenter.sh/initialized=true` label (each also through the other's name). Karpenter says
/// `Node isn't initialized` in the first minute of every node; against such a state that
/// message is history, not a problem. The messages are read once ([`Initialized::new`]): the
/// rules ask this of every `isn't initialized` message, and reading them all per question made
/// those rules quadratic on a cluster-wide `kubectl get events -A`.
pub struct Initialized<'a> {
    facts: &'a Facts,
    /// NodeClaims whose `initialized nodeclaim` line or transition to `Initialized: True` the
    /// input shows (Initialized never turns back).
    logged: BTreeSet<String>,
}

impl<'a> Initialized<'a> {
    pub fn new(facts: &'a Facts) -> Self {
        let logged = facts
            .messages
            .iter()
            .filter(|m| {
                m.origin == MessageOrigin::KarpenterLog
                    && contains_ignore_ascii_case(&m.text, "initialized nodeclaim")
                    || parse_transition(&m.text).is_some_and(|c| {
                        c.is("Initialized") && c.status.eq_ignore_ascii_case("true")
                    })
            })
            .filter_map(|m| nodeclaim_of(facts, m))
            .collect();
        Initialized { facts, logged }
    }

    pub fn shown(&self, nodeclaim: Option<&str>, node: Option<&str>) -> bool {
        let facts = self.facts;
        let claims = facts.nodeclaims.iter().filter(|c| {
            nodeclaim.is_some_and(|n| c.meta.name == n)
                || (node.is_some() && c.node_name.as_deref() == node)
        });
        let mut nodes: Vec<&str> = node.into_iter().collect();
        for c in claims {
            if c.conditions.iter().any(|k| {
                crate::facts::condition_type_is(&k.condition_type, "Initialized")
                    && k.status == "True"
            }) {
                return true;
            }
            nodes.extend(c.node_name.as_deref());
        }
        nodeclaim.is_some_and(|name| self.logged.contains(name))
            || facts.nodes.iter().any(|n| {
                nodes.contains(&n.meta.name.as_str())
                    && n.meta
                        .labels
                        .get("karpenter.sh/initialized")
                        .map(String::as_str)
                        == Some("true")
            })
    }
}

/// The Node a message is about: the event's object, the log's `Node` field, `node/<name>`,
/// the kubelet's `node="<name>"`, or the host of a journal line (`Mon DD HH:MM:SS <host> kubelet[`).
pub fn node_of(facts: &Facts, m: &Message) -> Option<String> {
    if let Some(o) = &m.object {
        // A describe section pasted without its `Name:` line leaves the object nameless.
        if o.kind.eq_ignore_ascii_case("node") && !o.name.is_empty() {
            return Some(o.name.clone());
        }
    }
    if let Some(r) = record_of(facts, m) {
        for key in ["Node", "node"] {
            if let Some(n) = r.field_name(key).filter(|n| !n.is_empty()) {
                return Some(n);
            }
        }
    }
    if let Some(n) = name_after(&m.text, "node/") {
        return Some(n);
    }
    if let Some(at) = find_ignore_ascii_case(&m.text, " node=\"") {
        let rest = &m.text[at + " node=\"".len()..];
        let name: String = rest.chars().take_while(|c| *c != '"').collect();
        if !name.is_empty() {
            return Some(name);
        }
    }
    journal_host(&m.text)
        // Ingest strips the journal prefix from a kubelet message; the evidence keeps it.
        .or_else(|| journal_host(&m.evidence.text))
        .or_else(|| json_field_in_text(&m.text, "node"))
}

/// Whether the kubelet of the node `m` is about registered its Node after `m`: a later line of
/// the same paste says `Successfully registered node` for that node (or names no node). A
/// refusal or a timeout the kubelet got over on its next try is boot history, not why the node
/// is missing now.
pub fn registered_after(facts: &Facts, m: &Message) -> bool {
    let node = node_of(facts, m);
    facts.messages.iter().any(|later| {
        later.evidence.source == m.evidence.source
            && later.evidence.line > m.evidence.line
            && contains_ignore_ascii_case(&later.text, "Successfully registered node")
            && node_of(facts, later).is_none_or(|n| node.as_deref().is_none_or(|o| o == n))
    })
}

/// The host of a journal line: `Apr 16 22:26:30 <host> kubelet[10125]: ...`.
pub fn journal_host(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    let month = words.next()?;
    let day = words.next()?;
    let time = words.next()?;
    let host = words.next()?;
    let unit = words.next()?;
    let looks_like_journal = month.len() == 3
        && month.chars().all(|c| c.is_ascii_alphabetic())
        && day.chars().all(|c| c.is_ascii_digit())
        && time.matches(':').count() == 2
        && unit.contains('[');
    looks_like_journal.then(|| host.to_string())
}

/// A Kubernetes object name right after `marker` (`nodeclaim/`, `node/`).
pub fn name_after(text: &str, marker: &str) -> Option<String> {
    let rest = tail_after(text, marker)?;
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        .collect();
    let name = name.trim_end_matches('.').to_string();
    (!name.is_empty()).then_some(name)
}

/// The NodePool of a NodeClaim: the typed object, or the `created nodeclaim` log line naming
/// both.
pub fn nodepool_of_nodeclaim(facts: &Facts, nodeclaim: &str) -> Option<String> {
    facts
        .nodeclaims
        .iter()
        .find(|c| c.meta.name == nodeclaim)
        .and_then(|c| {
            c.nodepool
                .clone()
                .or_else(|| c.meta.labels.get("karpenter.sh/nodepool").cloned())
                .or_else(|| c.meta.labels.get("karpenter.sh/provisioner-name").cloned())
        })
        .or_else(|| facts.nodepool_of_claim_in_logs(nodeclaim))
}

/// The kind to name a NodeClaim by: `Machine` when the input shows it as a v1alpha5 Machine
/// (Karpenter before v0.32: a typed Machine, an event about `machine/<name>`, a log line's
/// `machine` field), else `NodeClaim`.
/// How long ago a NodeClaim (or Machine) was created, by `rules::age_of`: the ages kubectl
/// printed for its events, else its creationTimestamp or first own message against "now",
/// else the AGE of its `kubectl get nodeclaims` row.
pub fn claim_age(facts: &Facts, nodeclaim: &str) -> Option<crate::rules::Age> {
    let is_it = |o: &ObjectRef| {
        o.name == nodeclaim
            && (o.kind.eq_ignore_ascii_case("NodeClaim") || o.kind.eq_ignore_ascii_case("Machine"))
    };
    let own = |m: &Message| {
        m.object.as_ref().is_some_and(is_it) || nodeclaim_of(facts, m).as_deref() == Some(nodeclaim)
    };
    let claim = facts.nodeclaims.iter().find(|c| c.meta.name == nodeclaim);
    let created = claim.and_then(|c| {
        c.meta
            .creation_timestamp
            .as_deref()
            .filter(|t| crate::rules::time::epoch_seconds(t).is_some())
    });
    // A `kubectl get nodeclaims` row: the AGE kubectl printed.
    let row = claim
        .and_then(|c| c.meta.table_age.as_deref())
        .and_then(crate::rules::time::age_seconds)
        .map(|seconds| crate::rules::Age {
            seconds,
            base: crate::rules::AgeBase::Kubectl,
        });
    match (crate::rules::age_of(facts, &is_it, &own, created), row) {
        // Its events only bound the age from below (the older ones expire after an hour, a
        // recent DisruptionBlocked is all that may be left): an older row AGE is the better figure.
        (Some(events), Some(row))
            if events.base == crate::rules::AgeBase::EventsAtLeast
                && row.seconds > events.seconds =>
        {
            Some(row)
        }
        // Only its creationTimestamp against the caller's "now" is as exact as the AGE kubectl
        // printed when the paste was collected. From its first log line, or against the
        // latest time of other lines, the age is a guess (the logs may start later, the latest
        // line may be older than the paste): the row's AGE wins.
        (Some(age), Some(_))
            if age.base == crate::rules::AgeBase::Now && created.is_some()
                || age.base == crate::rules::AgeBase::EventsAtLeast =>
        {
            Some(age)
        }
        (_, Some(row)) => Some(row),
        (age, None) => age,
    }
}

/// The status of a NodeClaim's `Launched` condition when the input shows it (`True`,
/// `Unknown`, `False`).
pub fn launched_status(facts: &Facts, nodeclaim: &str) -> Option<String> {
    let typed = facts
        .nodeclaims
        .iter()
        .filter(|c| c.meta.name == nodeclaim)
        .flat_map(|c| c.conditions.iter())
        .find(|c| c.condition_type == "Launched")
        .map(|c| c.status.clone());
    typed.or_else(|| {
        conditions(facts)
            .into_iter()
            .find(|c| c.is("Launched") && c.object.as_deref() == Some(nodeclaim))
            .map(|c| c.status)
    })
}

pub fn claim_kind(facts: &Facts, nodeclaim: &str) -> &'static str {
    let machine = facts
        .nodeclaims
        .iter()
        .any(|c| c.is_machine && c.meta.name == nodeclaim)
        || facts
            .messages
            .iter()
            .filter_map(|m| m.object.as_ref())
            .any(|o| o.kind.eq_ignore_ascii_case("machine") && o.name == nodeclaim)
        || facts
            .logs
            .iter()
            .any(|r| r.names("machine", nodeclaim) || r.names("Machine", nodeclaim));
    if machine {
        "Machine"
    } else {
        "NodeClaim"
    }
}

/// The words and kubectl resources of the user's Karpenter API: before v0.32 the v1alpha5
/// Machine and Provisioner and the v1alpha1 AWSNodeTemplate, whose commands and fields differ
/// from NodeClaim, NodePool and EC2NodeClass (`kubectl get ec2nodeclass` fails on a v0.31
/// cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Api {
    pub legacy: bool,
}

impl Api {
    /// The API of the input: the old one when the input is from before v0.32 or names a
    /// Machine.
    pub fn of(facts: &Facts, nodeclaims: &[String]) -> Api {
        Api {
            legacy: crate::rules::version::before_v0_32(facts)
                || nodeclaims.iter().any(|n| claim_kind(facts, n) == "Machine"),
        }
    }
    pub fn claim(self) -> &'static str {
        if self.legacy {
            "Machine"
        } else {
            "NodeClaim"
        }
    }
    pub fn pool(self) -> &'static str {
        if self.legacy {
            "Provisioner"
        } else {
            "NodePool"
        }
    }
    pub fn class(self) -> &'static str {
        if self.legacy {
            "AWSNodeTemplate"
        } else {
            "EC2NodeClass"
        }
    }
    /// `machine`, `provisioner`, `awsnodetemplate` as kubectl resources.
    pub fn claim_res(self) -> &'static str {
        if self.legacy {
            "machine"
        } else {
            "nodeclaim"
        }
    }
    /// The claim as a kubectl resource of a printed command: before v0.32 group-qualified
    /// (`machines.karpenter.sh`), since a bare `machine` may name Cluster API's
    /// `machines.cluster.x-k8s.io` on a cluster that has both.
    pub fn claim_kubectl(self) -> &'static str {
        if self.legacy {
            crate::rules::version::MACHINES_RESOURCE
        } else {
            "nodeclaim"
        }
    }
    pub fn pool_res(self) -> &'static str {
        if self.legacy {
            "provisioner"
        } else {
            "nodepool"
        }
    }
    pub fn class_res(self) -> &'static str {
        if self.legacy {
            "awsnodetemplate"
        } else {
            "ec2nodeclass"
        }
    }
    /// A NodeClass name for commands when the input does not show it: a lookup through the
    /// NodePool (a Provisioner's `providerRef`), else through the NodeClaim (a Machine's
    /// `machineTemplateRef`), else a placeholder. The NodePool first: Karpenter deletes a
    /// NodeClaim whose launch failed, so by the time the command runs it is often gone.
    pub fn nodeclass_cmd(
        self,
        nodeclass: Option<&str>,
        claim: Option<&str>,
        pool: Option<&str>,
    ) -> String {
        if let Some(n) = nodeclass {
            return n.to_string();
        }
        let (claim_path, pool_path) = if self.legacy {
            (".spec.machineTemplateRef.name", ".spec.providerRef.name")
        } else {
            (
                ".spec.nodeClassRef.name",
                ".spec.template.spec.nodeClassRef.name",
            )
        };
        match (claim, pool) {
            (_, Some(p)) => format!(
                "\"$(kubectl get {} {p} -o jsonpath='{{{pool_path}}}')\"",
                self.pool_res()
            ),
            (Some(c), None) => format!(
                "\"$(kubectl get {} {c} -o jsonpath='{{{claim_path}}}')\"",
                self.claim_kubectl()
            ),
            (None, None) => format!("<{}>", self.class_res()),
        }
    }
}

/// The pods waiting on failed launches: the failure messages' own pods (a scheduling error
/// names one), then the pods the failing NodeClaims `claims` were made for
/// ([`pods_of_claims`]), each once.
pub fn pods_waiting_on<'m>(
    facts: &Facts,
    failures: impl IntoIterator<Item = &'m Message>,
    claims: &[String],
) -> Vec<ObjectRef> {
    let mut waiting: Vec<ObjectRef> = failures
        .into_iter()
        .filter_map(|m| m.object.clone().filter(|o| o.kind == "Pod"))
        .collect();
    for pod in pods_of_claims(facts, claims) {
        if !waiting.contains(&pod) {
            waiting.push(pod);
        }
    }
    waiting
}

/// The pods NodeClaims `claims` were made for, as the input shows them, minus those it shows
/// placed: each pod's `Nominated` event (`Pod should schedule on: nodeclaim/<claim>`, a
/// `machine/<claim>` before v0.32), and Karpenter's provisioning batch (`found provisionable
/// pod(s)` naming the pods, then the `created nodeclaim` lines of the same reconcile) when the
/// batch created no NodeClaim outside `claims`: a batch spreads its pods over its NodeClaims,
/// so the pods of a batch that also created a healthy one are not all this failure's.
pub fn pods_of_claims(facts: &Facts, claims: &[String]) -> Vec<ObjectRef> {
    let mut pods: Vec<ObjectRef> = Vec::new();
    let mut add = |pod: ObjectRef| {
        if !pods.contains(&pod) {
            pods.push(pod);
        }
    };
    // A pod nominated for another NodeClaim too has moved on: Karpenter retried it elsewhere.
    let mut moved_on: Vec<&ObjectRef> = Vec::new();
    for m in &facts.messages {
        let Some(pod) = m.object.as_ref().filter(|o| o.kind == "Pod") else {
            continue;
        };
        let claim = name_after(&m.text, "should schedule on: nodeclaim/")
            .or_else(|| name_after(&m.text, "should schedule on: machine/"));
        match claim {
            Some(c) if claims.contains(&c) => add(pod.clone()),
            Some(_) => moved_on.push(pod),
            None => {}
        }
    }
    // One batch: its source, its reconcileID (v1), the pods it found, the claims it created.
    struct Batch<'a> {
        source: &'a str,
        reconcile: Option<&'a str>,
        pods: Vec<&'a str>,
        created: Vec<String>,
    }
    let mut batches: Vec<Batch<'_>> = Vec::new();
    for r in &facts.logs {
        let reconcile = r.fields.get("reconcileID").and_then(|v| v.as_str());
        if r.message == "found provisionable pod(s)" {
            let list = ["Pods", "pods"]
                .iter()
                .find_map(|k| r.fields.get(*k).and_then(|v| v.as_str()))
                .unwrap_or("");
            // `pretty.Slice(pods, 5)`: `a, b, c, d, e and 12 other(s)`.
            let pods = list
                .split(", ")
                .map(|p| p.split(" and ").next().unwrap_or(p).trim())
                .filter(|p| !p.is_empty())
                .collect();
            batches.push(Batch {
                source: &r.evidence.source,
                reconcile,
                pods,
                created: Vec::new(),
            });
        } else if matches!(
            r.message.as_str(),
            "created nodeclaim" | "created machine" | "launched machine"
        ) {
            let batch = batches.iter_mut().rev().find(|b| {
                b.source == r.evidence.source
                    && (b.reconcile.is_none() || reconcile.is_none() || b.reconcile == reconcile)
            });
            let claim = CLAIM_KEYS.iter().find_map(|k| r.field_name(k));
            if let (Some(batch), Some(claim)) = (batch, claim) {
                batch.created.push(claim);
            }
        }
    }
    // A pod a later batch took to a NodeClaim outside `claims` was retried there.
    let retried: Vec<&str> = batches
        .iter()
        .filter(|b| b.created.iter().any(|c| !claims.contains(c)))
        .flat_map(|b| b.pods.iter().copied())
        .collect();
    for b in &batches {
        if b.created.is_empty() || !b.created.iter().all(|c| claims.contains(c)) {
            continue;
        }
        for &p in b.pods.iter().filter(|p| !retried.contains(p)) {
            let (namespace, name) = match p.split_once('/') {
                Some((ns, name)) => (Some(ns), name),
                None => (None, p),
            };
            add(ObjectRef::new("Pod", namespace, name));
        }
    }
    // A pod the input shows scheduled or running since is no longer waiting for the claim.
    let same = |a: &ObjectRef, name: &str, namespace: Option<&str>| {
        a.name == name
            && (a.namespace.is_none() || namespace.is_none() || a.namespace.as_deref() == namespace)
    };
    pods.retain(|r| {
        let waiting = facts
            .pods
            .iter()
            .filter(|p| same(r, &p.meta.name, p.meta.namespace.as_deref()))
            .all(|p| p.phase.as_deref().is_none_or(|phase| phase == "Pending"));
        let scheduled = facts.events.iter().any(|e| {
            e.reason == "Scheduled"
                && e.object
                    .as_ref()
                    .is_some_and(|o| same(r, &o.name, o.namespace.as_deref()))
        });
        waiting && !scheduled && !moved_on.contains(&r)
    });
    pods
}

/// How long a node may take to boot before NotReady (the CNI not initialized yet) or the
/// missing `karpenter.sh/initialized` label means something: the kubelet registers first, the
/// CNI's DaemonSet pod starts after.
const BOOT_SECONDS: i64 = 90;

/// The nodes the input shows booting: a node's describe events include the kubelet's
/// `Starting`, and every event of the node was first seen less than `BOOT_SECONDS` ago
/// (kubectl ages). Their NotReady is the boot, not a fault. One pass over the events, so a
/// rule asks once for all its nodes.
pub fn booting_nodes(facts: &Facts) -> BTreeSet<&str> {
    // Per node: whether the kubelet's `Starting` is there, whether every event is young.
    let mut seen: BTreeMap<&str, (bool, bool)> = BTreeMap::new();
    for e in &facts.events {
        let Some(node) = e
            .object
            .as_ref()
            .filter(|o| e.from_describe && o.kind == "Node")
        else {
            continue;
        };
        // `20s`, or `2m (x3 over 10m)`: first seen 10 minutes ago.
        let young = e
            .age
            .as_deref()
            .and_then(crate::rules::time::age_seconds)
            .is_some_and(|a| a < BOOT_SECONDS);
        let entry = seen.entry(node.name.as_str()).or_insert((false, true));
        entry.0 |= e.source == "kubelet" && e.reason == "Starting";
        entry.1 &= young;
    }
    seen.into_iter()
        .filter(|(_, (starting, all_young))| *starting && *all_young)
        .map(|(node, _)| node)
        .collect()
}

/// The object a NodeClaim name refers to, of the kind `claim_kind` says.
pub fn claim_ref(facts: &Facts, nodeclaim: &str) -> ObjectRef {
    ObjectRef::new(claim_kind(facts, nodeclaim), None, nodeclaim)
}

/// The object an EC2NodeClass name refers to: an `AWSNodeTemplate` when the input shows it as
/// one (pre-v0.32), else an `EC2NodeClass`.
pub fn nodeclass_ref(facts: &Facts, name: &str) -> ObjectRef {
    let template = facts
        .nodeclasses
        .iter()
        .any(|c| c.is_aws_node_template && c.meta.name == name);
    let kind = if template {
        "AWSNodeTemplate"
    } else {
        "EC2NodeClass"
    };
    ObjectRef::new(kind, None, name)
}

/// The EC2NodeClass of a NodeClaim or of its NodePool.
pub fn nodeclass_of_nodeclaim(facts: &Facts, nodeclaim: &str) -> Option<String> {
    facts
        .nodeclaims
        .iter()
        .find(|c| c.meta.name == nodeclaim)
        .and_then(|c| {
            c.nodeclass_ref
                .clone()
                .or_else(|| c.meta.labels.get("karpenter.k8s.aws/ec2nodeclass").cloned())
        })
        .or_else(|| {
            let np = nodepool_of_nodeclaim(facts, nodeclaim)?;
            facts.nodepool(&np)?.nodeclass_ref.clone()
        })
}

/// The only EC2NodeClass, or the only one the NodePools reference, when the input shows just one.
pub fn sole_nodeclass(facts: &Facts) -> Option<String> {
    let mut names: Vec<String> = facts
        .nodeclasses
        .iter()
        .map(|c| c.meta.name.clone())
        .chain(
            facts
                .nodepools
                .iter()
                .filter_map(|p| p.nodeclass_ref.clone()),
        )
        .collect();
    names.sort();
    names.dedup();
    (names.len() == 1).then(|| names.remove(0))
}

/// The namespace Karpenter runs in, as a shell expression that works when the facts do not say
/// (the Karpenter docs' own `KARPENTER_NAMESPACE` convention, defaulting to `kube-system`).
pub fn karpenter_namespace(facts: &Facts) -> String {
    crate::rules::text::karpenter_namespace(facts)
        .unwrap_or_else(|| "${KARPENTER_NAMESPACE:-kube-system}".to_string())
}

/// Adds `item` to `list` unless it is already there.
pub fn push_unique(list: &mut Vec<String>, item: impl Into<String>) {
    let item = item.into();
    if !list.contains(&item) {
        list.push(item);
    }
}

/// `NodeClaim a`, `NodeClaims a and b`.
pub fn named(kind: &str, names: &[String]) -> String {
    format!(
        "{kind}{} {}",
        if names.len() > 1 { "s" } else { "" },
        join_names(names)
    )
}

/// `a`, `a and b`, `a, b and c`.
pub fn join_names(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// `"key": "value"` / `"key":"value"` inside a text (the JSON fields a console log line ends with).
pub fn json_field_in_text(text: &str, key: &str) -> Option<String> {
    let needle = format!("\"{key}\"");
    let at = find_ignore_ascii_case(text, &needle)? + needle.len();
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let v: String = rest.chars().take_while(|c| *c != '"').collect();
    (!v.is_empty()).then_some(v)
}

/// The value of a `key: value` line (YAML `nodeName:`, describe `Node Name:`) when the input
/// holds exactly one distinct value for it: a raw paste of one object, before object ingest.
pub fn sole_raw_value(facts: &Facts, keys: &[&str]) -> Option<String> {
    let mut values: Vec<String> = Vec::new();
    for m in &facts.messages {
        let t = m.text.trim().trim_start_matches("- ");
        for k in keys {
            if let Some(rest) = t.strip_prefix(k) {
                let v = rest.trim().trim_matches(['"', '\'']).to_string();
                if !v.is_empty() {
                    push_unique(&mut values, v);
                }
            }
        }
    }
    (values.len() == 1).then(|| values.remove(0))
}

/// The object a raw `kubectl describe` or YAML paste of one object is about, when the input
/// holds exactly one: before object ingest, the only way to name it. Describe: its `Name:` and
/// `Kind:` lines (or a Node name). YAML: the `kind:` right after `apiVersion:` and the first
/// `name:` under `metadata:`.
pub fn raw_describe_subject(facts: &Facts) -> Option<ObjectRef> {
    if let Some(name) = sole_raw_value(facts, &["Name:"]) {
        // `Kind:` also appears in references (`Node Class Ref: Kind: EC2NodeClass`): the
        // object's own kind is the one that references others.
        let kinds: Vec<String> = facts
            .messages
            .iter()
            .filter_map(|m| {
                m.text
                    .trim()
                    .strip_prefix("Kind:")
                    .map(|k| k.trim().to_string())
            })
            .collect();
        let kind = ["NodeClaim", "NodePool", "Node", "EC2NodeClass"]
            .into_iter()
            .find(|k| kinds.iter().any(|x| x == k));
        return match kind {
            Some(k) => Some(ObjectRef::new(k, None, &name)),
            None if name.starts_with("ip-") || name.starts_with("i-") => {
                Some(ObjectRef::new("Node", None, &name))
            }
            None => None,
        };
    }
    let mut found: Vec<ObjectRef> = Vec::new();
    let texts: Vec<&str> = facts.messages.iter().map(|m| m.text.trim()).collect();
    for (i, t) in texts.iter().enumerate() {
        if !t.starts_with("apiVersion:") {
            continue;
        }
        let Some(kind) = texts.get(i + 1).and_then(|k| k.strip_prefix("kind:")) else {
            continue;
        };
        let name = texts[i + 1..]
            .iter()
            .skip_while(|l| **l != "metadata:")
            .take_while(|l| **l != "spec:" && **l != "status:" && !l.starts_with("apiVersion:"))
            .find_map(|l| l.strip_prefix("name:"));
        if let Some(name) = name {
            let name = name.trim().trim_matches(['"', '\'']);
            found.push(ObjectRef::new(kind.trim(), None, name));
        }
    }
    (found.len() == 1).then(|| found.remove(0))
}

/// The EC2 instance ID in a provider ID (`aws:///us-east-1a/i-0abc`) or any text.
pub fn instance_id(text: &str) -> Option<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .find(|w| {
            w.len() >= 10 && w.starts_with("i-") && w[2..].chars().all(|c| c.is_ascii_hexdigit())
        })
        .map(str::to_string)
}

/// The AWS account ID an ARN in the input shows (`arn:aws:iam::<id>:` / `arn:aws:sts::<id>:`).
pub fn account_id(facts: &Facts) -> Option<String> {
    facts.messages.iter().find_map(|m| {
        let at = find_ignore_ascii_case(&m.text, "::")?;
        let prefix = &m.text[..at];
        if !(prefix.ends_with(":iam") || prefix.ends_with(":sts")) {
            return None;
        }
        let id: String = m.text[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        (id.len() == 12).then_some(id)
    })
}

/// Whether the input shows a DaemonSet (or its pods) whose name contains one of `names`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presence {
    /// Seen: the name, and `ready/desired` when known.
    Present(String, Option<String>),
    /// Only one of its pods is seen (a `kubectl get pods` row): the pod, and its STATUS
    /// (`Init:CrashLoopBackOff`) when it is not plainly running.
    Pod(String, Option<String>),
    /// The input lists DaemonSets (this many) and none matches.
    Absent(usize),
    /// The input has no DaemonSet list.
    Unknown,
}

pub fn daemonset_presence(facts: &Facts, names: &[&str]) -> Presence {
    let daemonsets: Vec<_> = facts
        .workloads
        .iter()
        .filter(|w| w.kind == "DaemonSet")
        .collect();
    if let Some(w) = daemonsets
        .iter()
        .find(|w| names.iter().any(|n| w.meta.name.contains(n)))
    {
        let ready = match (w.ready_replicas, w.replicas) {
            (Some(r), Some(d)) => Some(format!("{r}/{d} ready")),
            _ => None,
        };
        return Presence::Present(w.meta.name.clone(), ready);
    }
    // A pod of it among the input's pods (a `kubectl get pods -o wide | grep cilium` row).
    if let Some(pod) = facts.pods.iter().find(|p| {
        names.iter().any(|n| {
            p.meta
                .name
                .strip_prefix(n)
                .and_then(|rest| rest.strip_prefix('-'))
                .is_some_and(|suffix| !suffix.contains('-') && has_generated_suffix(&p.meta.name))
        })
    }) {
        return Presence::Pod(
            pod.meta.name.clone(),
            pod_status(facts, pod).filter(|s| s != "Running"),
        );
    }
    // A `kubectl get ds` / `get pods` line naming it.
    for m in &facts.messages {
        for word in m.text.split_whitespace() {
            let word = word
                .trim_start_matches("daemonset.apps/")
                .trim_start_matches("daemonset/")
                .trim_start_matches("pod/");
            if names.iter().any(|n| {
                word == *n
                    || (word.starts_with(n)
                        && word[n.len()..].starts_with('-')
                        && !word.contains('/'))
            }) {
                // A pod row names a pod, not the DaemonSet: a pod object, or a name with the
                // five-character suffix the API server generates (`cilium-8r4tq`).
                if let Some(pod) = facts.pods.iter().find(|p| p.meta.name == word) {
                    return Presence::Pod(
                        word.to_string(),
                        pod_status(facts, pod).filter(|s| s != "Running"),
                    );
                }
                if has_generated_suffix(word) {
                    // `NAME READY STATUS ...` (a grepped `kubectl get pods` line).
                    let words: Vec<&str> = m.text.split_whitespace().collect();
                    let status = match words.as_slice() {
                        [name, ready, status, ..]
                            if name.trim_start_matches("pod/") == word && ready.contains('/') =>
                        {
                            Some(status.to_string()).filter(|s| s != "Running")
                        }
                        _ => None,
                    };
                    return Presence::Pod(word.to_string(), status);
                }
                return Presence::Present(word.to_string(), None);
            }
        }
    }
    let listed_table = facts.messages.iter().any(|m| {
        let t = &m.text;
        t.contains("DESIRED") && t.contains("CURRENT") && t.contains("NODE SELECTOR")
    });
    if !daemonsets.is_empty() {
        Presence::Absent(daemonsets.len())
    } else if listed_table {
        Presence::Absent(0)
    } else {
        Presence::Unknown
    }
}

/// `<name>-<5 characters>` of the alphabet the API server draws generateName suffixes from
/// (no vowels, no 0, 1 or 3): a DaemonSet's pod, not the DaemonSet.
pub fn has_generated_suffix(name: &str) -> bool {
    const SUFFIX_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";
    name.rsplit_once('-').is_some_and(|(prefix, suffix)| {
        !prefix.is_empty()
            && suffix.len() == 5
            && suffix.chars().all(|c| SUFFIX_ALPHABET.contains(c))
    })
}

/// What a pod row or object says of the pod's state: a container's waiting reason, or the
/// STATUS column of a `kubectl get pods` row (`CrashLoopBackOff`, `Init:CrashLoopBackOff`).
pub fn pod_status(facts: &Facts, pod: &crate::facts::Pod) -> Option<String> {
    if let Some(reason) = pod
        .all_containers()
        .find_map(|c| c.reason.clone().filter(|r| r != "Completed"))
    {
        return Some(reason);
    }
    let me = pod.object_ref();
    facts.messages.iter().find_map(|m| {
        (m.origin == crate::facts::MessageOrigin::ObjectField && m.object.as_ref() == Some(&me))
            .then(|| m.reason.clone())
            .flatten()
    })
}

/// A launch error taken apart: which grammar (Karpenter version) wrote it, the EC2 error code
/// and message, and the AWS SDK suffix fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchError {
    /// The EC2 code (`InvalidBlockDeviceMapping`), when the error carries one.
    pub code: Option<String>,
    /// What follows the code (or the whole innermost error when there is no code).
    pub detail: String,
    /// `aws-error-code=` of the v1.5+ suffix.
    pub aws_error_code: Option<String>,
    /// `aws-operation-name=` of the v1.5+ suffix.
    pub aws_operation: Option<String>,
    /// Which Karpenter versions write this grammar.
    pub grammar: &'static str,
}

/// The wrapping prefixes of launch errors across versions, innermost last.
const WRAPPERS: &[&str] = &[
    "could not launch node, ",
    "launching node, ",
    "launching instances, ",
    "launching machine, ",
    "creating cloud provider instance, ",
    "launching nodeclaim, ",
    "creating instance, ",
    "insufficient capacity, ",
    "creating nodeclaim, ",
    "with fleet error(s), ",
    "creating fleet request, ",
    "getting launch template configs, ",
    "getting launch templates, ",
    "validating ec2:runinstances authorization, ",
];

/// Takes a launch error apart (`launching nodeclaim, creating instance, [creating nodeclaim, ]
/// [with fleet error(s), ]<Code>: <Msg>[ (aws-error-code=...)]`, the pre-v1 `Could not launch
/// node, launching instances, ...` / `launching machine, creating cloud provider instance, ...`,
/// and the API-level `operation error EC2: <Op>, https response error ..., api error <Code>:
/// <msg>`). `None` when `text` holds no launch error.
pub fn parse_launch_error(text: &str) -> Option<LaunchError> {
    let lower = text.to_ascii_lowercase();
    let mut start = None;
    for w in WRAPPERS {
        if let Some(at) = lower.find(w) {
            let end = at + w.len();
            // The innermost wrapper ends last.
            if start.is_none_or(|s| end > s) {
                start = Some(end);
            }
        }
    }
    let api_error = lower.find("api error ").map(|at| at + "api error ".len());
    let start = match (start, api_error) {
        (Some(s), Some(a)) => s.max(a),
        (s, a) => s.or(a)?,
    };
    // A console log line ends with a tab and its JSON fields.
    let inner_text = text.get(start..)?.split('\t').next().unwrap_or_default();
    let mut inner = inner_text.trim().to_string();
    let mut aws_error_code = None;
    let mut aws_operation = None;
    if let Some(at) = find_ignore_ascii_case(&inner, " (aws-error-code=") {
        let suffix = inner[at + 2..].trim_end_matches(')').to_string();
        for part in suffix.split(", ") {
            if let Some(v) = part.strip_prefix("aws-error-code=") {
                aws_error_code = Some(v.to_string());
            } else if let Some(v) = part.strip_prefix("aws-operation-name=") {
                aws_operation = Some(v.to_string());
            }
        }
        inner.truncate(at);
    }
    let (code, detail) = match inner.split_once(": ") {
        Some((c, d)) if is_error_code(c) => (Some(c.to_string()), d.trim().to_string()),
        _ => (None, inner.clone()),
    };
    let grammar = if aws_error_code.is_some() {
        "v1.5+"
    } else if lower.contains("could not launch node, ")
        || lower.contains("launching node, ")
        || lower.contains("launching machine, ")
    {
        "pre-v0.32"
    } else if lower.contains("creating nodeclaim, ") {
        "v1.3-v1.4"
    } else if lower.contains("launching nodeclaim, ")
        && lower.contains("with fleet error(s), ")
        && !lower.contains("insufficient capacity, ")
    {
        "v0.32-v1.0"
    } else if lower.contains("launching nodeclaim, ") {
        "v1.1-v1.2"
    } else {
        ""
    };
    Some(LaunchError {
        code,
        detail,
        aws_error_code,
        aws_operation,
        grammar,
    })
}

/// `InvalidBlockDeviceMapping`, `Client.InternalError`, `InvalidAMIID.NotFound`: one word of
/// letters and dots starting upper-case.
fn is_error_code(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && s.len() > 3
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
        && s.chars().any(|c| c.is_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pods a NodeClaim was made for: its batch's `found provisionable pod(s)` (the list
    /// truncated by `and N other(s)`) when the batch made no other NodeClaim, and `Nominated`
    /// events; not a pod nominated elsewhere since, nor one the input shows Running.
    #[test]
    fn the_pods_a_nodeclaim_was_made_for() {
        let facts = |text: &str| crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        let claims = ["spark-8fw2q".to_string()];
        let batch = |created: &str| {
            format!(
                "{{\"level\":\"INFO\",\"message\":\"found provisionable pod(s)\",\"reconcileID\":\"e1\",\"Pods\":\"spark/a, spark/b and 2 other(s)\"}}\n{created}"
            )
        };
        let created = |claim: &str| {
            format!("{{\"level\":\"INFO\",\"message\":\"created nodeclaim\",\"reconcileID\":\"e1\",\"NodePool\":{{\"name\":\"spark\"}},\"NodeClaim\":{{\"name\":\"{claim}\"}}}}\n")
        };
        let names = |f: &Facts| -> Vec<String> {
            pods_of_claims(f, &claims)
                .iter()
                .map(ObjectRef::qualified_name)
                .collect()
        };
        assert_eq!(
            names(&facts(&batch(&created("spark-8fw2q")))),
            ["spark/a", "spark/b"]
        );
        // The batch also made a NodeClaim that launched: its pods are spread over both.
        let two = format!("{}{}", created("spark-8fw2q"), created("spark-q2w3e"));
        assert!(names(&facts(&batch(&two))).is_empty());
        // A later batch took the pods to a NodeClaim that is not failing: retried there.
        let retry = format!(
            "{}{}",
            batch(&created("spark-8fw2q")),
            batch(&created("spark-q2w3e"))
        );
        assert!(names(&facts(&retry)).is_empty());
        let events = "LAST SEEN   TYPE     REASON      OBJECT       MESSAGE\n2m   Normal   Nominated   pod/web-1   Pod should schedule on: nodeclaim/spark-8fw2q\n2m   Normal   Nominated   pod/web-2   Pod should schedule on: nodeclaim/spark-8fw2q\n1m   Normal   Nominated   pod/web-2   Pod should schedule on: nodeclaim/spark-zz9x1\n";
        assert_eq!(names(&facts(events)), ["web-1"]);
    }

    #[test]
    fn a_grepped_pod_row_is_a_pod_not_the_daemonset() {
        let facts = |text: &str| crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        let row = "cilium-8r4tq                       0/1     Init:CrashLoopBackOff   11 (3m ago)   39m   10.30.77.9   ip-10-30-77-9.us-west-2.compute.internal   <none>   <none>";
        assert_eq!(
            daemonset_presence(&facts(row), &["cilium"]),
            Presence::Pod("cilium-8r4tq".into(), Some("Init:CrashLoopBackOff".into()))
        );
        assert_eq!(
            daemonset_presence(&facts("daemonset.apps/ebs-csi-node   3   3   3   3   3   kubernetes.io/os=linux   90d"), &["ebs-csi-node"]),
            Presence::Present("ebs-csi-node".into(), None)
        );
        assert!(!has_generated_suffix("cilium-operator"));
        assert!(has_generated_suffix("aws-node-5sd7v"));
    }

    #[test]
    fn launch_error_grammars() {
        let v10 = parse_launch_error("launching nodeclaim, creating instance, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/xvda").unwrap();
        assert_eq!(v10.code.as_deref(), Some("InvalidBlockDeviceMapping"));
        assert_eq!(v10.detail, "Invalid device name /dev/xvda");
        assert_eq!(v10.grammar, "v0.32-v1.0");
        let v11 = parse_launch_error(
            "launching nodeclaim, creating instance, InvalidAMIID.NotFound: The image id '[ami-1]' does not exist",
        )
        .unwrap();
        assert_eq!(v11.code.as_deref(), Some("InvalidAMIID.NotFound"));
        assert_eq!(v11.grammar, "v1.1-v1.2");
        let v13 = parse_launch_error(
            "launching nodeclaim, creating instance, creating nodeclaim, RequestLimitExceeded: Request limit exceeded.",
        )
        .unwrap();
        assert_eq!(v13.grammar, "v1.3-v1.4");
        let v15 = parse_launch_error("launching nodeclaim, creating instance, creating nodeclaim, InvalidParameter: Security group sg-1 and subnet subnet-2 belong to different networks. (aws-error-code=UnfulfillableCapacity, aws-operation-name=CreateFleet, aws-request-id=x, aws-service-name=EC2, aws-status-code=200)").unwrap();
        assert_eq!(v15.code.as_deref(), Some("InvalidParameter"));
        assert_eq!(
            v15.detail,
            "Security group sg-1 and subnet subnet-2 belong to different networks."
        );
        assert_eq!(v15.aws_operation.as_deref(), Some("CreateFleet"));
        assert_eq!(v15.grammar, "v1.5+");
        let pre = parse_launch_error("Could not launch node, launching instances, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/xvda; ...").unwrap();
        assert_eq!(pre.grammar, "pre-v0.32");
        let api = parse_launch_error("validating ec2:RunInstances authorization, operation error EC2: RunInstances, https response error StatusCode: 400, RequestID: 4c, api error InvalidBlockDeviceMapping: Volume of size 2GB is smaller than snapshot 'snap-1', expect size>= 4GB").unwrap();
        assert_eq!(api.code.as_deref(), Some("InvalidBlockDeviceMapping"));
        assert!(api.detail.starts_with("Volume of size 2GB"));
        let plain = parse_launch_error("launching nodeclaim, creating instance, with fleet error(s), too few instances returned: too few instances returned").unwrap();
        assert_eq!(plain.code, None);
        assert!(parse_launch_error("found provisionable pod(s)").is_none());
    }

    #[test]
    fn condition_forms() {
        let c = parse_condition_text(
            "Initialized=Unknown ResourceNotRegistered: Resource \"nvidia.com/gpu\" was requested but not registered",
            Some("ResourceNotRegistered"),
        )
        .unwrap();
        assert_eq!(c.condition_type, "Initialized");
        assert_eq!(c.status, "Unknown");
        assert_eq!(c.reason, "ResourceNotRegistered");
        assert!(c.message.starts_with("Resource"));
        let t = parse_transition("Status condition transitioned, Type: NodeRegistrationHealthy, Status: Unknown -> False, Reason: RegistrationFailed, Message: Failed to register node").unwrap();
        assert_eq!(t.condition_type, "NodeRegistrationHealthy");
        assert_eq!(t.status, "False");
        assert_eq!(t.reason, "RegistrationFailed");
        assert_eq!(t.message, "Failed to register node");
    }

    #[test]
    fn journal_hosts() {
        assert_eq!(
            journal_host("Apr 16 22:26:30 ip-10-0-5-6.ec2.internal kubelet[10125]: E0416")
                .as_deref(),
            Some("ip-10-0-5-6.ec2.internal")
        );
        assert_eq!(journal_host("Node not registered with cluster"), None);
    }
}
