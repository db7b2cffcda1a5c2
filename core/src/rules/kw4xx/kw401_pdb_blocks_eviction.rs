//! KW401 pdb-blocks-eviction.

use std::collections::BTreeMap;

use crate::document::Evidence;
use crate::facts::{
    contains_ignore_ascii_case, Facts, Message, MessageOrigin, ObjectRef, Pdb, Pod,
};
use crate::rules::kw4xx::disruption::{
    lifted_after, messages_with, node_name, ns_flag, number_after, push_unique, same_subject,
    serrors_values, split_qualified, subject_nodepools, subject_of, subjects_label, unescaped,
    wholly_after, Endings, KubectlOutputs,
};
use crate::rules::text::{quoted_after, token_after};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW401",
    slug: "pdb-blocks-eviction",
    title: "A PodDisruptionBudget blocks the eviction Karpenter needs",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter removes a node by evicting its pods through the eviction API, which honours
PodDisruptionBudgets. A PDB that allows no disruption right now (`ALLOWED DISRUPTIONS 0`) makes
the eviction fail: consolidation, drift and expiry skip the node, and a node already being
terminated stays in its drain.

Signals: the `DisruptionBlocked` / `Unconsolidatable` texts `Cannot disrupt Node: PDB
"<ns>/<name>" prevents pod evictions` (before v1.0), `pdb "<ns>/<name>" prevents pod evictions`
(v1.0 to v1.1, after `Cannot disrupt Node: `), `Pdb "<ns>/<name>" prevents pod evictions`
(v1.2 to v1.4), `Pdb prevents pod evictions (PodDisruptionBudget=<ns>/<name>)` (v1.5 to v1.6;
`=[<ns>/<name>]` from v1.7), the docs' unquoted `pdb <ns>/<name> prevents pod evictions`,
`Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[...])` (v1.7+); the drain
events `Failed to drain node, evicting pod violates a PDB (Pod=<ns>/<pod>)` (v1.0: `evicting pod
<ns>/<pod> violates a PDB`), `... eviction does not support multiple PDBs (Pod=<ns>/<pod>)`,
`Failed to drain node, <n> pods are waiting to be evicted`; the v1.0 log `can't drain node, PDB
"<ns>/<name>" is blocking evictions`; the eviction API's own refusal that `kubectl drain`
prints (`Cannot evict pod as it would violate the pod's disruption budget.`); and, from objects, a PDB with `status.disruptionsAllowed:
0` selecting a pod that runs on a node.

A drain that names no budget (`<n> pods are waiting to be evicted`) is joined with the input's
PDBs at 0 allowed disruptions that cover a pod on the node (`kubectl get pdb -A` rows too), named
in the summary. On a node EC2 is reclaiming (`SpotInterrupted`, `TerminatingOnInterruption`,
`InstanceTerminating`) such a drain is the interruption's (KW309), not a block, unless such a
budget covers one of its pods. When the input later shows the budget (or the pod) deleted, or the
do-not-disrupt annotation that held the drain taken off, the block is past: said so, severity
info.

## Why it happens
The budget counts healthy pods. With `minAvailable` equal to the healthy count, no pod may go.
With `maxUnavailable`, allowed disruptions = maxUnavailable - unavailable pods (expected minus
healthy; a percentage is of the expected pods, rounded up): `maxUnavailable: 1` over 3 pods with
one not Ready allows 1 - 1 = 0, and more replicas do not change that, only a healthy pod or a
larger value does. The report shows this arithmetic with the budget's own numbers. The classic
case: 2 ingress-nginx replicas,
`minAvailable: 1`, and one replica unhealthy (an image it cannot pull, KW001): the PDB expects 2,
sees 1 healthy, needs 1, and allows 0 disruptions, so the healthy replica's node can never be
drained. A pod selected by two PDBs cannot be evicted at all (the eviction API refuses).

## How to fix
Make the unhealthy pods healthy (the budget then allows disruptions again and Karpenter
continues by itself), run more replicas than the budget must keep, or loosen the budget
(`maxUnavailable: 1`, a percentage; `unhealthyPodEvictionPolicy: AlwaysAllow` lets running but
not-ready pods be evicted). Give each pod at most one PDB. Do not delete pods to force the drain:
the budget is protecting the replicas that still serve.
"#,
};

const SIGNALS: &[&str] = &[
    "prevents pod evictions",
    API_REFUSAL,
    "does not support multiple pdbs",
    "violates a pdb",
    "pods are waiting to be evicted",
    "is blocking evictions",
];

/// The eviction API's HTTP 429 text, quoted by `kubectl drain` (`error when evicting
/// pods/"<pod>" -n "<ns>" (will retry after 5s): Cannot evict pod as it would violate the pod's
/// disruption budget.`) and API clients, sometimes with the cause `The disruption budget <name>
/// needs <n> healthy pods and has <m> currently`.
const API_REFUSAL: &str = "would violate the pod's disruption budget";

/// One budget problem: the PDB(s) named, or a drain that names none.
#[derive(Default)]
struct Group<'a> {
    pdbs: Vec<String>,
    multiple: bool,
    pods: Vec<String>,
    waiting: Option<u64>,
    subjects: Vec<ObjectRef>,
    messages: Vec<&'a Message>,
    /// From a PDB object alone (no event or log line names it).
    inferred: bool,
    /// Only the eviction API's own refusal (a `kubectl drain`), no Karpenter text.
    refused: bool,
    /// For a drain that names no budget: the input's PDBs allowing 0 disruptions that cover a
    /// pod on the node, with those pods.
    likely: Vec<(String, Vec<String>)>,
}

impl Group<'_> {
    fn key(&self) -> String {
        if self.pdbs.is_empty() {
            format!(
                "drain:{}:{}",
                subjects_label(&self.subjects),
                self.pods.join(" ")
            )
        } else {
            format!("pdb:{}:{}", self.multiple, self.pdbs.join(" "))
        }
    }
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let endings = Endings::new(facts);
    let mut groups: Vec<Group<'_>> = Vec::new();
    let mut group_of_key: BTreeMap<String, usize> = BTreeMap::new();
    for m in messages_with(facts, SIGNALS) {
        // A node gone afterwards was drained after all: the block is history.
        if subject_of(m).is_some_and(|s| endings.gone_after(m, &s).is_some()) {
            continue;
        }
        let t = unescaped(&m.text);
        let mut g = Group::default();
        if contains_ignore_ascii_case(&t, "does not support multiple pdbs") {
            g.multiple = true;
            g.pdbs = serrors_values(&t, "PodDisruptionBudget(s)").unwrap_or_default();
            g.pods = serrors_values(&t, "Pod").unwrap_or_default();
        } else if contains_ignore_ascii_case(&t, "prevents pod evictions")
            || contains_ignore_ascii_case(&t, "is blocking evictions")
        {
            g.pdbs = named_pdbs(&t);
        } else if contains_ignore_ascii_case(&t, API_REFUSAL) {
            g.refused = true;
            g.pods = refused_pod(&t).into_iter().collect();
            let ns = g.pods.first().and_then(|p| split_qualified(p).0);
            g.pdbs = token_after(&t, "The disruption budget ")
                .map(|n| vec![ns.map_or(n.clone(), |ns| format!("{ns}/{n}"))])
                .unwrap_or_default();
        } else if contains_ignore_ascii_case(&t, "violates a pdb") {
            g.pods = serrors_values(&t, "Pod")
                .or_else(|| token_after(&t, "evicting pod ").map(|p| vec![p]))
                .unwrap_or_default();
        } else {
            g.waiting = number_after(&t, "failed to drain node,");
        }
        if g.pdbs.is_empty() && !g.multiple {
            // A drain that names only the pod: the PDB covering it, when the facts have one.
            for pod in &g.pods {
                for pdb in pdbs_covering_pod(facts, pod) {
                    push_unique(&mut g.pdbs, pdb_name(pdb));
                }
            }
        }
        // Karpenter publishes its PDB-violation drain event on a stand-in Node named after the
        // pod (the eviction queue knows no node), so `node/<pod>` is no node at all.
        if let Some(s) = subject_of(m).filter(|s| {
            !(s.kind == "Node" && g.pods.iter().any(|p| split_qualified(p).1 == s.name))
        }) {
            g.subjects.push(s);
        }
        g.messages.push(m);
        merge(&mut groups, &mut group_of_key, g);
    }
    // `<n> pods are waiting to be evicted` names no budget: on a node whose drain another
    // message explains, it is the same problem.
    let mut i = 0;
    while i < groups.len() {
        let anonymous = groups[i].pdbs.is_empty() && groups[i].pods.is_empty();
        let target = anonymous
            .then(|| {
                groups.iter().position(|o| {
                    (!o.pdbs.is_empty() || !o.pods.is_empty())
                        && (o.subjects.iter().any(|s| groups[i].subjects.contains(s))
                            // Both about the one node a describe shows without naming it.
                            || (o.subjects.is_empty() && groups[i].subjects.is_empty()))
                })
            })
            .flatten();
        match target {
            Some(t) => {
                let g = groups.remove(i);
                let t = if t > i { t - 1 } else { t };
                groups[t].waiting = groups[t].waiting.or(g.waiting);
                groups[t].messages.splice(0..0, g.messages);
            }
            None => i += 1,
        }
    }
    // A drain that names no budget: the budgets at 0 allowed disruptions that cover a pod on
    // the node are the likely cause.
    for g in groups
        .iter_mut()
        .filter(|g| g.pdbs.is_empty() && g.pods.is_empty())
    {
        g.likely = likely_pdbs(facts, &g.subjects);
    }
    // A drain that names no budget, on a node EC2 is taking back (spot interruption, instance
    // terminating): Karpenter is evicting its pods within the notice and the instance goes
    // regardless, so with no budget at 0 in the input it is the interruption's drain (KW309),
    // not a block.
    groups.retain(|g| {
        let anonymous = g.pdbs.is_empty() && g.pods.is_empty() && g.likely.is_empty();
        !(anonymous
            && !g.subjects.is_empty()
            && g.subjects.iter().all(|s| interrupted(facts, g, s)))
    });
    // A PDB allowing no disruption that covers a scheduled pod blocks that pod's node even
    // when no event says so yet.
    for pdb in &facts.pdbs {
        if pdb.disruptions_allowed != Some(0) || pdb.expected_pods == Some(0) {
            continue;
        }
        let name = pdb_name(pdb);
        if groups.iter().any(|g| {
            g.pdbs
                .iter()
                .chain(g.likely.iter().map(|(n, _)| n))
                .any(|n| pdb_is(pdb, n))
        }) {
            continue;
        }
        let on_nodes: Vec<&Pod> = covered_pods(facts, pdb)
            .into_iter()
            .filter(|p| p.node_name.is_some())
            .collect();
        if on_nodes.is_empty() {
            continue;
        }
        let mut g = Group {
            pdbs: vec![name],
            inferred: true,
            ..Default::default()
        };
        for p in on_nodes {
            push_unique(&mut g.pods, p.object_ref().qualified_name());
            if let Some(n) = &p.node_name {
                push_unique(&mut g.subjects, ObjectRef::new("Node", None, n));
            }
        }
        groups.push(g);
    }
    // One image pull failure anywhere in the input is told in every group: found once.
    let pull = pull_failure(facts);
    let kubectl_outputs = KubectlOutputs::new(facts);
    groups
        .iter()
        .map(|g| diagnose(facts, &endings, &kubectl_outputs, pull.as_ref(), g))
        .collect()
}

/// Karpenter's interruption events: EC2 reclaims the instance whatever its pods' budgets say.
const INTERRUPTION_REASONS: &[&str] = &[
    "SpotInterrupted",
    "TerminatingOnInterruption",
    "InstanceTerminating",
    "InstanceStopping",
    "CapacityReservationInstanceInterrupted",
];

/// Whether the input shows an interruption event for `subject` of the drain `g` (the object
/// itself: a Node and its NodeClaim carry different names).
fn interrupted(facts: &Facts, g: &Group<'_>, subject: &ObjectRef) -> bool {
    facts.messages.iter().any(|m| {
        m.reason
            .as_deref()
            .is_some_and(|r| INTERRUPTION_REASONS.contains(&r))
            && subject_of(m).is_some_and(|o| o.kind == subject.kind && o.name == subject.name)
            && g.messages
                .iter()
                .all(|d| same_subject(facts, d, m, subject))
    })
}

/// `<ns>/<pod>` of a `kubectl drain` refusal: `evicting pods/"<pod>" -n "<ns>"` (kubectl
/// 1.19+) or `evicting pod "<pod>"` (older, namespace unknown).
fn refused_pod(text: &str) -> Option<String> {
    let pod =
        quoted_after(text, "evicting pods/").or_else(|| quoted_after(text, "evicting pod "))?;
    Some(match quoted_after(text, " -n ") {
        Some(ns) => format!("{ns}/{pod}"),
        None => pod,
    })
}

/// Adds `g` to the group of its key (`group_of_key`: key -> index in `groups`; a merge keeps
/// the key, since the members it adds are the ones the key names).
fn merge<'a>(
    groups: &mut Vec<Group<'a>>,
    group_of_key: &mut BTreeMap<String, usize>,
    g: Group<'a>,
) {
    match group_of_key.get(&g.key()).map(|&i| &mut groups[i]) {
        Some(existing) => {
            for s in g.subjects {
                push_unique(&mut existing.subjects, s);
            }
            for p in g.pods {
                push_unique(&mut existing.pods, p);
            }
            existing.waiting = existing.waiting.or(g.waiting);
            existing.messages.extend(g.messages);
        }
        None => {
            group_of_key.insert(g.key(), groups.len());
            groups.push(g);
        }
    }
}

/// The PDB names of a `prevents pod evictions` / `is blocking evictions` text, in every
/// grammar.
fn named_pdbs(text: &str) -> Vec<String> {
    if let Some(v) = serrors_values(text, "PodDisruptionBudget") {
        return v;
    }
    if let Some(q) = quoted_after(text, "pdb ") {
        return vec![q];
    }
    // The docs' unquoted `pdb <ns>/<name> prevents pod evictions`.
    token_after(text, "pdb ")
        .filter(|w| w.contains('/'))
        .map(|w| vec![w])
        .unwrap_or_default()
}

/// `ns/name` of a PDB.
fn pdb_name(pdb: &Pdb) -> String {
    match &pdb.meta.namespace {
        Some(ns) if !pdb.meta.namespace_assumed => format!("{ns}/{}", pdb.meta.name),
        _ => pdb.meta.name.clone(),
    }
}

/// Whether `pdb` is the budget `qualified` (`<ns>/<name>`) names. A `kubectl get pdb -n <ns>`
/// table pasted without its command does not say its namespace: the name alone then decides.
fn pdb_is(pdb: &Pdb, qualified: &str) -> bool {
    pdb_name(pdb) == qualified
        || ((pdb.meta.namespace.is_none() || pdb.meta.namespace_assumed)
            && split_qualified(qualified).1 == pdb.meta.name)
}

/// Pods the PDB selects: by labels when the pod's and the PDB's selector are known; a pod
/// listed without labels (`kubectl get pods` rows), or a PDB listed without its selector
/// (`kubectl get pdb` rows), counts when the pod's name starts with the PDB's, the way charts
/// name both after the workload.
fn covered_pods<'a>(facts: &'a Facts, pdb: &Pdb) -> Vec<&'a Pod> {
    facts
        .pods
        .iter()
        .filter(|p| p.meta.namespace == pdb.meta.namespace || p.meta.namespace.is_none())
        .filter(|p| {
            if p.meta.labels.is_empty() || pdb.meta.from_table {
                p.meta.name.starts_with(&format!("{}-", pdb.meta.name))
            } else {
                pdb.selector.matches(&p.meta.labels)
            }
        })
        .collect()
}

/// The pods on these nodes (`ns/name`): the describe's Non-terminated Pods, and pods whose
/// `spec.nodeName` is one of them.
fn pods_on(facts: &Facts, subjects: &[ObjectRef]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in subjects.iter().filter(|s| s.kind == "Node") {
        for n in facts.nodes.iter().filter(|n| n.meta.name == s.name) {
            for p in &n.pods {
                push_unique(&mut out, p.qualified_name());
            }
        }
        for p in facts
            .pods
            .iter()
            .filter(|p| p.node_name.as_deref() == Some(s.name.as_str()))
        {
            push_unique(&mut out, p.object_ref().qualified_name());
        }
    }
    out
}

/// The PDBs at 0 allowed disruptions that cover a pod on these nodes, each with those pods.
fn likely_pdbs(facts: &Facts, subjects: &[ObjectRef]) -> Vec<(String, Vec<String>)> {
    let on_node = pods_on(facts, subjects);
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for pod in &on_node {
        for pdb in pdbs_covering_pod(facts, pod) {
            if pdb.disruptions_allowed != Some(0) {
                continue;
            }
            let name = pdb_name(pdb);
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some((_, pods)) => push_unique(pods, pod.clone()),
                None => out.push((name, vec![pod.clone()])),
            }
        }
    }
    out
}

fn pdbs_covering_pod<'a>(facts: &'a Facts, qualified_pod: &str) -> Vec<&'a Pdb> {
    let (ns, name) = split_qualified(qualified_pod);
    facts
        .pdbs
        .iter()
        .filter(|pdb| pdb.meta.namespace.as_deref() == ns)
        .filter(|pdb| {
            match facts
                .pods
                .iter()
                .find(|p| p.meta.name == name && p.meta.namespace.as_deref() == ns)
            {
                Some(p) if !p.meta.labels.is_empty() => pdb.selector.matches(&p.meta.labels),
                _ => name.starts_with(&format!("{}-", pdb.meta.name)),
            }
        })
        .collect()
}

/// Why a pod does not count as healthy, if it does not: a container's waiting reason, the
/// STATUS a `kubectl get pods` row showed, not Ready, or its phase.
fn unhealthy_reason(facts: &Facts, pod: &Pod) -> Option<String> {
    if let Some(reason) = pod
        .all_containers()
        .find_map(|c| c.reason.clone().filter(|r| r != "Completed"))
    {
        return Some(reason);
    }
    let me = pod.object_ref();
    if let Some(status) = facts.messages.iter().find_map(|m| {
        (m.origin == MessageOrigin::ObjectField && m.object.as_ref() == Some(&me))
            .then(|| m.reason.clone())
            .flatten()
    }) {
        return Some(status);
    }
    if pod.containers.iter().any(|c| c.ready == Some(false)) {
        return Some("not Ready".to_string());
    }
    if let Some(c) = pod
        .conditions
        .iter()
        .find(|c| c.condition_type == "Ready" && c.status == "False")
    {
        return Some(match &c.message {
            Some(m) => format!("not Ready: {m}"),
            None => "not Ready".to_string(),
        });
    }
    match pod.phase.as_deref() {
        Some("Running") | Some("Succeeded") | None => None,
        Some(other) => Some(other.to_string()),
    }
}

/// An image pull failure anywhere in the input: the image and whether it looks like an
/// availability failure (KW001) or a wrong name / credentials (KW002).
struct PullFailure<'a> {
    image: Option<String>,
    related: &'static str,
    messages: Vec<&'a Message>,
}

fn pull_failure(facts: &Facts) -> Option<PullFailure<'_>> {
    let messages = messages_with(
        facts,
        &[
            "failed to pull image",
            "back-off pulling image",
            "errimagepull",
            "imagepullbackoff",
        ],
    );
    let from_pods = facts
        .pods
        .iter()
        .flat_map(|p| p.containers.iter())
        .find(|c| {
            matches!(
                c.reason.as_deref(),
                Some("ErrImagePull") | Some("ImagePullBackOff")
            )
        });
    if messages.is_empty() && from_pods.is_none() {
        return None;
    }
    let image = messages
        .iter()
        .find_map(|m| {
            let t = unescaped(&m.text);
            quoted_after(&t, "pull image").or_else(|| quoted_after(&t, "pulling image"))
        })
        .or_else(|| from_pods.and_then(|c| c.image.clone()));
    let not_availability = [
        "manifest unknown",
        "not found",
        "unauthorized",
        "no basic auth credentials",
        "403 forbidden",
        "pull access denied",
    ];
    let related = if messages.iter().any(|m| {
        not_availability
            .iter()
            .any(|n| contains_ignore_ascii_case(&m.text, n))
    }) {
        "KW002"
    } else {
        "KW001"
    };
    Some(PullFailure {
        image,
        related,
        messages,
    })
}

fn diagnose(
    facts: &Facts,
    endings: &Endings<'_>,
    kubectl_outputs: &KubectlOutputs<'_>,
    pull: Option<&PullFailure<'_>>,
    g: &Group<'_>,
) -> Diagnosis {
    let on = subjects_label(&g.subjects);
    let pdb_objects: Vec<&Pdb> = g
        .pdbs
        .iter()
        .chain(g.likely.iter().map(|(n, _)| n))
        .filter_map(|n| {
            facts
                .pdbs
                .iter()
                .find(|p| &pdb_name(p) == n)
                .or_else(|| facts.pdbs.iter().find(|p| pdb_is(p, n)))
        })
        .collect();
    let mut summary = if g.multiple && g.pdbs.is_empty() && !g.pods.is_empty() {
        // The drain event names the pod, not the budgets.
        format!(
            "Pod {} is selected by more than one PodDisruptionBudget and cannot be evicted: the eviction API refuses pods with several PDBs, so Karpenter cannot drain {on}.",
            g.pods.join(", ")
        )
    } else if g.multiple {
        format!(
            "Pods selected by more than one PodDisruptionBudget ({}) cannot be evicted: the eviction API refuses pods with several PDBs, so Karpenter cannot drain {on}.",
            g.pdbs.join(", ")
        )
    } else if g.inferred {
        format!(
            "PodDisruptionBudget {} allows 0 disruptions and covers {} on {on}: Karpenter cannot drain {} (inferred from the PDB's status; no event in the input says so yet).",
            g.pdbs.join(", "),
            g.pods.join(", "),
            if g.subjects.len() > 1 { "those nodes" } else { "that node" }
        )
    } else if g.refused {
        format!(
            "The eviction API refuses to evict {} (HTTP 429): {} allows no disruption now, so no drain of {on} (`kubectl drain` or Karpenter's) can finish.",
            if g.pods.is_empty() {
                "a pod".to_string()
            } else {
                format!("pod {}", g.pods.join(", "))
            },
            if g.pdbs.is_empty() {
                "its PodDisruptionBudget".to_string()
            } else {
                format!("PodDisruptionBudget {}", g.pdbs.join(", "))
            }
        )
    } else if block_passed(g, &pdb_objects) {
        format!(
            "PodDisruptionBudget {} prevented pod evictions, so Karpenter could not disrupt {on}.",
            g.pdbs.join(", ")
        )
    } else if !g.pdbs.is_empty() {
        format!(
            "PodDisruptionBudget {} prevents pod evictions, so Karpenter cannot disrupt {on}.",
            g.pdbs.join(", ")
        )
    } else {
        format!("Karpenter cannot finish draining {on}.")
    };
    if !g.pods.is_empty() && !g.inferred && !g.multiple && !g.refused {
        summary.push_str(&format!(
            " Evicting pod {} violates its budget.",
            g.pods.join(", ")
        ));
    }
    if let Some(n) = g.waiting {
        summary.push_str(&format!(" {n} pods are waiting to be evicted."));
    }
    if !g.likely.is_empty() {
        let list: Vec<String> = g
            .likely
            .iter()
            .map(|(n, pods)| format!("{n} (pod {})", pods.join(", ")))
            .collect();
        summary.push_str(&format!(
            " The event names no budget; the input's PodDisruptionBudgets at 0 allowed disruptions that cover pods on the node: {}.",
            list.join(", ")
        ));
    }
    let mut evidence: Vec<Evidence> = Vec::new();
    let mut unhealthy: Vec<(String, String)> = Vec::new();
    for pdb in &pdb_objects {
        summary.push(' ');
        summary.push_str(&budget_sentence(pdb));
        if let Some(e) = &pdb.meta.evidence {
            evidence.push(e.clone());
        }
        for p in covered_pods(facts, pdb) {
            if let Some(reason) = unhealthy_reason(facts, p) {
                let name = p.object_ref().qualified_name();
                if !unhealthy.iter().any(|(n, _)| n == &name) {
                    unhealthy.push((name, reason));
                    if let Some(e) = &p.meta.evidence {
                        evidence.push(e.clone());
                    }
                }
            }
        }
    }
    // A budget known only by name: the Warning events of its pods (named after it) tell which
    // replica is unhealthy and keeps the allowed disruptions at 0.
    if let ([pdb], true) = (g.pdbs.as_slice(), pdb_objects.is_empty() && !g.multiple) {
        for (pod, e) in warned_pods_named_like(facts, pdb) {
            if !unhealthy.iter().any(|(n, _)| *n == pod) {
                // The message's head (`Readiness probe failed`), not a `:` inside an image tag;
                // the kubelet's `Error: ErrImagePull` is headed by its class.
                let message = e.message.strip_prefix("Error: ").unwrap_or(&e.message);
                let first = message.split(": ").next().unwrap_or_default().trim();
                unhealthy.push((pod, format!("{}: {first}", e.reason)));
                evidence.push(e.evidence.clone());
            }
        }
    }
    if !unhealthy.is_empty() {
        let list: Vec<String> = unhealthy
            .iter()
            .map(|(n, r)| format!("{n} ({r})"))
            .collect();
        summary.push_str(&format!(
            " Not healthy: {}; while it stays so, evicting a healthy replica would break the budget.",
            list.join(", ")
        ));
    }
    let mut related: Vec<&'static str> = Vec::new();
    if let Some(p) = pull {
        let image = p
            .image
            .as_deref()
            .map(|i| format!(" of {i}"))
            .unwrap_or_default();
        summary.push_str(&format!(
            " The input also shows an image pull failure{image}: a replica that cannot start stays unhealthy and keeps the budget at 0 allowed disruptions ({}).",
            p.related
        ));
        related.push(p.related);
    }
    // No real node known (a drain event on the stand-in node): the report is about the pod.
    let pod = g.pods.first().map(|p| {
        let (ns, name) = split_qualified(p);
        ObjectRef::new("Pod", ns, name)
    });
    // Every node the budget holds (or NodeClaim, when the input names no node: a Node and
    // its NodeClaim are one machine), and their NodePools.
    let any_node = g.subjects.iter().any(|s| s.kind == "Node");
    let objects: Vec<&ObjectRef> = if g.subjects.is_empty() {
        pod.iter().collect()
    } else {
        g.subjects
            .iter()
            .filter(|s| !any_node || s.kind == "Node")
            .collect()
    };
    let mut d = Diagnosis::new(&META, summary)
        .with_objects(objects)
        .with_node_pools(&subject_nodepools(facts, &g.subjects))
        .with_messages_per_object(g.messages.iter().copied(), &subject_of)
        .with_evidence(evidence)
        .with_related(&related)
        .with_remediation(remediation(facts, g, &pdb_objects, &unhealthy));
    if let Some(p) = pull {
        d = d.with_messages(p.messages.iter().copied());
    }
    if let Some(lifted) = lifted_later(facts, kubectl_outputs, g) {
        // Told in the past tense: the block is over.
        for (now, then) in [
            ("prevents pod evictions", "prevented pod evictions"),
            ("Karpenter cannot", "Karpenter could not"),
            ("pods are waiting", "pods were waiting"),
            ("violates its budget", "violated its budget"),
        ] {
            d.summary = d.summary.replace(now, then);
        }
        d.summary.push_str(
            " The input then shows what blocked the drain removed (the budget or pod deleted, or the annotation taken off): that block is past, and a drain failure reported before it is not current.",
        );
        d = d.with_evidence(lifted).with_severity(Severity::Info);
    } else if g.inferred {
        d = d
            .with_severity(Severity::Warning)
            .with_confidence(Confidence::Medium);
    } else if let Some((verdict, disrupted)) = weighed_after(endings, g) {
        for (now, then) in [
            ("prevents pod evictions", "prevented pod evictions"),
            ("Karpenter cannot", "Karpenter could not"),
        ] {
            d.summary = d.summary.replace(now, then);
        }
        d.summary.push_str(if disrupted {
            " Karpenter went on to disrupt the node after that, which it does only once no budget blocks its pods' eviction: that block has passed (the drain still evicts within the budgets; a drain failure would say so)."
        } else {
            " Karpenter weighed the node for consolidation after that, which it does only once no budget blocks its pods' eviction: that block has passed."
        });
        d = d
            .with_evidence(vec![if verdict.evidence.first_seen.is_some() {
                verdict.evidence.clone()
            } else {
                crate::rules::evidence_of(verdict)
            }])
            .with_severity(Severity::Info);
        d.remediation = passed_remediation(g);
    } else if block_passed(g, &pdb_objects) {
        d.summary.push_str(
            " Every budget it names allows a disruption now, so that block has passed: the events are older than the budget's status, and Karpenter goes on at its next pass.",
        );
        d = d.with_severity(Severity::Info);
        d.remediation = passed_remediation(g);
    } else if g.pdbs.is_empty() && g.pods.is_empty() {
        // Pods waiting to be evicted: a PDB is the usual reason, not the only one.
        d = d.with_confidence(Confidence::Medium);
    }
    d
}

/// A consolidation verdict (`Unconsolidatable`) about every node or NodeClaim of a group of
/// `prevents pod evictions` blocks, later than each block about it: Karpenter checks the
/// budgets before it weighs a candidate for consolidation, so the budget no longer blocked
/// then. `None` for drain failures (a draining node is weighed for nothing) and for blocks
/// without a named subject.
fn weighed_after<'a>(endings: &Endings<'a>, g: &Group<'_>) -> Option<(&'a Message, bool)> {
    if g.pdbs.is_empty() || g.subjects.is_empty() || g.waiting.is_some() || !g.pods.is_empty() {
        return None;
    }
    let mut first = None;
    for s in &g.subjects {
        if crate::rules::text::is_unnumbered_mask(&s.name) {
            return None;
        }
        let blocks: Vec<&Message> = g
            .messages
            .iter()
            .copied()
            .filter(|m| subject_of(m).as_ref() == Some(s))
            .collect();
        if blocks
            .iter()
            .any(|m| !contains_ignore_ascii_case(&unescaped(&m.text), "prevents pod evictions"))
        {
            return None;
        }
        let verdict = endings
            .verdicts_about(s)
            .find(|v| blocks.iter().all(|b| wholly_after(v, b)));
        // Disrupting the node (`Disrupting Node: Drifted/Replace`) after every block: Karpenter
        // chose it as a candidate, which it does only with no budget in the way.
        let verdict = match verdict {
            Some(v) => (v, false),
            None => {
                let mut later = blocks.iter().map(|b| endings.removed_after(b, s));
                let first_later = later.next().flatten()?;
                if later.any(|l| l.is_none()) {
                    return None;
                }
                (first_later, true)
            }
        };
        first.get_or_insert(verdict);
    }
    first
}

/// Where the input shows, after the group's last message, every budget it names (or, for a
/// drain naming none, every likely one) deleted, or every pod it names deleted: the block was
/// lifted.
fn lifted_later(
    facts: &Facts,
    kubectl_outputs: &KubectlOutputs<'_>,
    g: &Group<'_>,
) -> Option<Vec<Evidence>> {
    let last = g
        .messages
        .iter()
        .map(|m| &m.evidence)
        .max_by_key(|e| e.line)?;
    let (kind, names): (&str, Vec<&String>) = if !g.pdbs.is_empty() {
        ("PodDisruptionBudget", g.pdbs.iter().collect())
    } else if !g.pods.is_empty() {
        ("Pod", g.pods.iter().collect())
    } else if !g.likely.is_empty() {
        (
            "PodDisruptionBudget",
            g.likely.iter().map(|(n, _)| n).collect(),
        )
    } else {
        return do_not_disrupt_lifted(facts, kubectl_outputs, g, last);
    };
    names
        .iter()
        .map(|q| {
            let (ns, name) = split_qualified(q);
            lifted_after(kubectl_outputs, kind, ns, name, None, last)
        })
        .collect()
}

/// A drain naming no budget on a node that a karpenter.sh/do-not-disrupt annotation blocked
/// (`Pod "<ns>/<pod>" has "karpenter.sh/do-not-disrupt" annotation`, or the node's own): the
/// input shows that pod deleted, or the annotation taken off, after the drain failure.
fn do_not_disrupt_lifted(
    facts: &Facts,
    kubectl_outputs: &KubectlOutputs<'_>,
    g: &Group<'_>,
    last: &Evidence,
) -> Option<Vec<Evidence>> {
    const ANNOTATION: &str = "karpenter.sh/do-not-disrupt";
    let mut out = Vec::new();
    for m in &facts.messages {
        if !contains_ignore_ascii_case(&m.text, ANNOTATION)
            || !subject_of(m).is_some_and(|s| g.subjects.contains(&s))
        {
            continue;
        }
        let t = unescaped(&m.text);
        let lifted = match quoted_after(&t, "pod ") {
            Some(q) => {
                let (ns, name) = split_qualified(&q);
                lifted_after(kubectl_outputs, "Pod", ns, name, Some(ANNOTATION), last)
            }
            None => g.subjects.iter().find_map(|s| {
                lifted_after(
                    kubectl_outputs,
                    &s.kind,
                    None,
                    &s.name,
                    Some(ANNOTATION),
                    last,
                )
            }),
        };
        out.push(lifted?);
    }
    (!out.is_empty()).then_some(out)
}

/// Karpenter reports a PDB only while it allows 0 disruptions: when the input shows every PDB
/// the events name allowing one now (`kubectl get pdb`), the events are history.
fn block_passed(g: &Group<'_>, pdb_objects: &[&Pdb]) -> bool {
    !g.multiple
        && !g.pdbs.is_empty()
        && g.pods.is_empty()
        && g.waiting.is_none()
        && pdb_objects.len() == g.pdbs.len()
        && pdb_objects
            .iter()
            .all(|p| p.disruptions_allowed.is_some_and(|n| n > 0))
}

/// Enough replicas for one to move: more than the budget's absolute `minAvailable` (or the
/// healthy count it needs), and never fewer than 3.
fn replicas_to_suggest(pdb: Option<&Pdb>) -> i64 {
    let needed = pdb.and_then(|p| {
        p.min_available
            .as_deref()
            .and_then(|m| m.parse::<i64>().ok())
            .or(p.desired_healthy)
    });
    needed.map_or(3, |n| n.saturating_add(1).max(3))
}

/// A `maxUnavailable` scaled to pods: an int as written, a percentage of the expected pods
/// rounded up (the disruption controller's `GetScaledValueFromIntOrPercent(..., true)`), with
/// how it was reached. `None` when a percentage's base is unknown or the value is not one.
fn scaled_max_unavailable(pdb: &Pdb) -> Option<(i64, String)> {
    let written = pdb.max_unavailable.as_deref()?.trim();
    match written.strip_suffix('%') {
        Some(percent) => {
            let percent: i64 = percent
                .trim()
                .parse()
                .ok()
                .filter(|p| (0..=100).contains(p))?;
            let expected = pdb.expected_pods.filter(|e| *e >= 0)?;
            let scaled = (percent * expected + 99) / 100;
            let rounded = if (percent * expected) % 100 == 0 {
                ""
            } else {
                ", rounded up"
            };
            Some((
                scaled,
                format!("{percent}% of {expected} pods is {scaled}{rounded}"),
            ))
        }
        None => written
            .parse::<i64>()
            .ok()
            .filter(|m| *m >= 0)
            .map(|m| (m, String::new())),
    }
}

/// How a `maxUnavailable` budget reaches its allowed disruptions: it lets `maxUnavailable` pods
/// be unavailable at once, the pods already unavailable (expected minus healthy) use that up,
/// and what is left is what eviction may take: `allowed = maxUnavailable - unhealthy`.
/// `None` for a `minAvailable` budget or when the numbers are not shown.
fn max_unavailable_sentence(pdb: &Pdb) -> Option<String> {
    if pdb.min_available.is_some() {
        return None;
    }
    let written = pdb.max_unavailable.as_deref()?.trim();
    let name = pdb_name(pdb);
    let Some((max, how)) = scaled_max_unavailable(pdb) else {
        // A percentage of a count not shown.
        return (written.ends_with('%') && pdb.disruptions_allowed == Some(0)).then(|| format!(
            "{name} requires maxUnavailable: {written}, a share of its expected pods rounded up (at least 1 pod when it has any); allowed disruptions = maxUnavailable - unavailable pods, so 0 allowed means pods already unavailable (not Ready, or not running) use it all up."
        ));
    };
    if max == 0 {
        return Some(format!(
            "{name} requires maxUnavailable: {written}, so no pod it selects may ever be evicted: 0 disruptions are allowed."
        ));
    }
    let how = if how.is_empty() {
        String::new()
    } else {
        format!(" ({how})")
    };
    let pods = |n: i64| format!("{n} pod{}", if n == 1 { "" } else { "s" });
    let unhealthy = match (pdb.expected_pods, pdb.current_healthy) {
        (Some(expected), Some(healthy)) if expected >= healthy => {
            let unhealthy = expected - healthy;
            let allowed = pdb
                .disruptions_allowed
                .unwrap_or_else(|| (max - unhealthy).max(0));
            return Some(format!(
                "{name} requires maxUnavailable: {written}{how}: it lets {} be unavailable at once, and {} of its {expected} already {} ({healthy} healthy), so {max} - {unhealthy} leaves {allowed} disruption{} allowed.",
                pods(max),
                unhealthy,
                if unhealthy == 1 { "is" } else { "are" },
                if allowed == 1 { "" } else { "s" },
            ));
        }
        _ => pdb
            .disruptions_allowed
            .map(|allowed| (max - allowed).max(0))?,
    };
    // Only the allowed count is shown (a `kubectl get pdb` row): what is used up follows.
    let allowed = pdb.disruptions_allowed?;
    Some(format!(
        "{name} requires maxUnavailable: {written}{how}: it lets {} be unavailable at once; allowed disruptions = maxUnavailable - unavailable pods, so {allowed} allowed means {}{unhealthy} of its pods {} already unavailable (not Ready, or not running).",
        pods(max),
        if allowed == 0 { "at least " } else { "" },
        if unhealthy == 1 { "is" } else { "are" },
    ))
}

/// `It requires minAvailable: 1; 2 pods expected, 1 healthy (1 needed), so 0 disruptions are
/// allowed.`
fn budget_sentence(pdb: &Pdb) -> String {
    if let Some(s) = max_unavailable_sentence(pdb) {
        return s;
    }
    let rule = match (&pdb.min_available, &pdb.max_unavailable) {
        (Some(m), _) => format!("minAvailable: {m}"),
        (None, Some(m)) => format!("maxUnavailable: {m}"),
        (None, None) => "its default (no minAvailable or maxUnavailable)".to_string(),
    };
    let mut s = format!("{} requires {rule}", pdb_name(pdb));
    let counts: Vec<String> = [
        pdb.expected_pods.map(|n| format!("{n} pods expected")),
        pdb.current_healthy.map(|n| format!("{n} healthy")),
        pdb.desired_healthy.map(|n| format!("{n} needed")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !counts.is_empty() {
        s.push_str(&format!("; {}", counts.join(", ")));
    }
    if let Some(n) = pdb.disruptions_allowed {
        s.push_str(&format!(
            ", so {n} disruption{} {} allowed",
            if n == 1 { "" } else { "s" },
            if n == 1 { "is" } else { "are" }
        ));
    }
    s.push('.');
    s
}

/// The steps for a block that has passed: nothing to loosen now; only a block that keeps
/// coming back says the budget's pods keep becoming unavailable.
fn passed_remediation(g: &Group<'_>) -> Vec<Remediation> {
    let mut steps = Vec::new();
    for pdb in &g.pdbs {
        let (ns, name) = split_qualified(pdb);
        steps.push(Remediation::command(
            format!("Nothing to change now: the block by {name} has passed. If it keeps coming back, look at the pods the budget counts, then watch its ALLOWED DISRUPTIONS:"),
            format!(
                "kubectl get pods{ns_flag} -o wide; kubectl get pdb {name}{ns_flag} --watch",
                ns_flag = ns_flag(ns)
            ),
        ));
    }
    steps.push(Remediation::text(
        "A budget that falls to 0 again and again means its pods keep becoming unavailable (restarts, failing readiness probes, a replica that never becomes Ready): fix those pods rather than the budget.",
    ));
    steps
}

fn remediation(
    facts: &Facts,
    g: &Group<'_>,
    pdb_objects: &[&Pdb],
    unhealthy: &[(String, String)],
) -> Vec<Remediation> {
    let mut steps = Vec::new();
    if g.multiple {
        let (ns, _) = split_qualified(
            g.pdbs
                .first()
                .or(g.pods.first())
                .map(String::as_str)
                .unwrap_or(""),
        );
        let names: Vec<&str> = g.pdbs.iter().map(|p| split_qualified(p).1).collect();
        let which = match (names.is_empty(), ns) {
            (false, _) => format!(" {}", names.join(" ")),
            // The pod's namespace: its budgets are among the ones listed there.
            (true, Some(_)) => String::new(),
            (true, None) => " <pdb-a> <pdb-b>".to_string(),
        };
        steps.push(Remediation::command(
            "Compare the budgets' selectors: each pod must be selected by at most one PDB. Narrow one selector, or remove the budget that duplicates the other.",
            format!("kubectl get pdb{}{which} -o yaml", ns_flag(ns)),
        ));
    } else if let Some(first) = g.pdbs.first() {
        let (ns, name) = split_qualified(first);
        steps.push(Remediation::command(
            "See the budget and the pods it counts (ALLOWED DISRUPTIONS 0 blocks every eviction):",
            format!("kubectl describe pdb {name}{}", ns_flag(ns)),
        ));
    } else if let Some(pod) = g.pods.first() {
        let (ns, name) = split_qualified(pod);
        steps.push(Remediation::command(
            format!("Find the budget that selects pod {pod} (compare its labels with each PDB's selector; ALLOWED DISRUPTIONS 0 blocks every eviction):"),
            format!(
                "kubectl get pod {name}{0} --show-labels && kubectl get pdb{0} -o wide",
                ns_flag(ns)
            ),
        ));
    } else {
        let node = node_name(facts, &g.subjects).unwrap_or_else(|| "<node>".to_string());
        steps.push(Remediation::command(
            "List the pods still on the node and the budgets with no allowed disruption:",
            format!(
                "kubectl get pods -A --field-selector spec.nodeName={node} -o wide && kubectl get pdb -A"
            ),
        ));
    }
    // `maxUnavailable: 0` or `minAvailable: 100%` allows no eviction however healthy or
    // numerous the pods are: only changing the budget helps.
    let never = pdb_objects
        .first()
        .filter(|_| !g.multiple)
        .and_then(|p| never_allows(p));
    if let Some(setting) = &never {
        steps.push(Remediation::text(format!(
            "This budget ({setting}) allows no eviction at all, whatever the health or number of its pods: only changing the budget lets Karpenter drain the node."
        )));
    }
    let never_allows = never.is_some();
    // The budget the event names, or else the one budget inferred from the objects (a drain
    // that names none, beside a PDB at 0 covering a pod on the node).
    let the_pdb: Option<&str> = g
        .pdbs
        .first()
        .map(String::as_str)
        .or(match g.likely.as_slice() {
            [(only, _)] => Some(only.as_str()),
            _ => None,
        });
    if let Some(pdb) = the_pdb.filter(|_| !g.multiple && !never_allows) {
        let (ns, _) = split_qualified(pdb);
        let selector = pdb_objects
            .first()
            .map(|p| selector_flag(p))
            .unwrap_or_default();
        steps.push(Remediation::command(
            "Make the pods it counts healthy first: a healthy set restores the allowed disruptions and Karpenter continues on its own. Find the ones that are not Ready:",
            format!("kubectl get pods{}{selector} -o wide", ns_flag(ns)),
        ));
    }
    for (pod, reason) in unhealthy.iter().take(3) {
        let (ns, name) = split_qualified(pod);
        steps.push(Remediation::command(
            format!("Fix pod {pod} ({reason}) first:"),
            format!("kubectl describe pod {name}{}", ns_flag(ns)),
        ));
    }
    if !g.multiple {
        let (ns, name) = match (the_pdb, g.pods.first()) {
            (Some(q), _) => split_qualified(q),
            (None, Some(pod)) => (split_qualified(pod).0, "<pdb>"),
            (None, None) => (None, "<pdb>"),
        };
        let workload = pdb_objects
            .first()
            .and_then(|pdb| workload_of(facts, pdb))
            .or_else(|| {
                // The pods the drain named, by their names.
                g.pods.iter().find_map(|p| {
                    let pod = split_qualified(p).1;
                    controller_by_name(pod)
                        .map(|c| format!("{}/{}", c.kind.to_ascii_lowercase(), c.name))
                })
            })
            .or_else(|| {
                // The PDB's pods listed without owner or labels.
                pdb_objects.first().and_then(|pdb| {
                    covered_pods(facts, pdb).into_iter().find_map(|p| {
                        controller_by_name(&p.meta.name)
                            .map(|c| format!("{}/{}", c.kind.to_ascii_lowercase(), c.name))
                    })
                })
            })
            .or_else(|| the_pdb.and_then(|q| workload_named_like(facts, g, q)))
            .unwrap_or_else(|| "deployment/<workload>".to_string());
        // An absolute `maxUnavailable` allows the same number however many replicas run:
        // more replicas only help a `minAvailable` budget or a percentage.
        let absolute_max = pdb_objects.first().is_some_and(|p| {
            p.min_available.is_none()
                && p.max_unavailable
                    .as_deref()
                    .is_some_and(|m| m.trim().parse::<i64>().is_ok())
        });
        if !never_allows && !absolute_max {
            steps.push(Remediation::command(
                "Or run more replicas than the budget must keep available, so one can move:",
                format!(
                    "kubectl scale {workload}{} --replicas={}",
                    ns_flag(ns),
                    replicas_to_suggest(pdb_objects.first().copied())
                ),
            ));
        }
        let selector_yaml = pdb_objects
            .first()
            .map(|pdb| selector_yaml(pdb, &covered_pods(facts, pdb)))
            .unwrap_or_else(|| "    matchLabels:\n      <label>: <value>\n".to_string());
        let always_allow = pdb_objects
            .first()
            .and_then(|p| p.unhealthy_pod_eviction_policy.as_deref())
            == Some("AlwaysAllow");
        // A `maxUnavailable` budget already allows some: one more than it allows now.
        let current_max = pdb_objects
            .first()
            .filter(|p| p.min_available.is_none() && !never_allows)
            .and_then(|p| scaled_max_unavailable(p))
            .map(|(m, _)| m)
            .filter(|m| *m > 0);
        let max_unavailable = current_max.map_or(1, |m| m + 1);
        let allow = match current_max {
            Some(m) => format!(
                "Or let the budget tolerate one more unavailable pod (maxUnavailable comes to {m} now)"
            ),
            None => "Or let the budget allow one disruption at a time".to_string(),
        };
        let (text, policy) = if always_allow {
            (format!("{allow}:"), "")
        } else {
            (
                format!("{allow}; `unhealthyPodEvictionPolicy: AlwaysAllow` also lets running but not-ready pods be evicted:"),
                "  unhealthyPodEvictionPolicy: AlwaysAllow\n",
            )
        };
        steps.push(Remediation::yaml(
            text,
            format!(
                "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: {name}\n{}spec:\n  maxUnavailable: {max_unavailable}\n{policy}  selector:\n{selector_yaml}",
                ns.map(|n| format!("  namespace: {n}\n")).unwrap_or_default()
            ),
        ));
    }
    if g.waiting.is_some() || (!g.pods.is_empty() && !g.inferred) {
        // A NodePool that sets one already bounds the wait.
        let set = subject_nodepools(facts, &g.subjects)
            .into_iter()
            .find_map(|np| Some((facts.nodepool(&np)?.termination_grace_period.clone()?, np)));
        steps.push(Remediation::text(match set {
            Some((tgp, np)) => format!("NodePool {np} sets `terminationGracePeriod: {tgp}`: that long after the node's deletion began, Karpenter deletes the remaining pods despite their budgets."),
            None => "For a node that must go regardless, set the NodePool's `spec.template.spec.terminationGracePeriod` (Karpenter v1): after that period Karpenter deletes the remaining pods despite their budgets.".to_string(),
        }));
    }
    steps.push(Remediation::text(
        "Do not delete the pods to force the drain: the budget is protecting the replicas that still serve; deleting them bypasses it and can take the workload down.",
    ));
    steps
}

/// The setting of a budget that allows no voluntary eviction whatever the state of its pods.
fn never_allows(pdb: &Pdb) -> Option<String> {
    let max = pdb.max_unavailable.as_deref().map(str::trim);
    let min = pdb.min_available.as_deref().map(str::trim);
    match (max, min) {
        (Some(v @ ("0" | "0%")), _) => Some(format!("maxUnavailable: {v}")),
        (_, Some("100%")) => Some("minAvailable: 100%".to_string()),
        _ => None,
    }
}

/// ` -l k=v,k2=v2` from the PDB's matchLabels, empty when it has none.
fn selector_flag(pdb: &Pdb) -> String {
    if pdb.selector.match_labels.is_empty() {
        return String::new();
    }
    let pairs: Vec<String> = pdb
        .selector
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(" -l {}", pairs.join(","))
}

/// The PDB's matchLabels; when the input does not show them (a `kubectl get pdb` row), the
/// stable labels every pod it covers shares.
fn selector_yaml(pdb: &Pdb, covered: &[&Pod]) -> String {
    let mut labels = pdb.selector.match_labels.clone();
    if labels.is_empty() {
        let mut pods = covered.iter().map(|p| p.meta.stable_labels());
        labels = pods.next().unwrap_or_default();
        for other in pods {
            labels.retain(|k, v| other.get(k) == Some(v));
        }
    }
    if labels.is_empty() {
        return "    matchLabels:\n      <label>: <value>\n".to_string();
    }
    let mut s = "    matchLabels:\n".to_string();
    for (k, v) in &labels {
        s.push_str(&format!("      {k}: {v}\n"));
    }
    s
}

/// `deployment/<name>` of the workload whose pods the PDB selects: a workload object whose
/// template labels the selector matches, else a covered pod's controller.
fn workload_of(facts: &Facts, pdb: &Pdb) -> Option<String> {
    let from_objects = facts
        .workloads
        .iter()
        .filter(|w| w.kind == "Deployment" || w.kind == "StatefulSet")
        .find(|w| {
            w.meta.namespace == pdb.meta.namespace
                && !w.template_labels.is_empty()
                && pdb.selector.matches(&w.template_labels)
        })
        .map(|w| format!("{}/{}", w.kind.to_ascii_lowercase(), w.meta.name));
    from_objects.or_else(|| {
        covered_pods(facts, pdb).into_iter().find_map(|p| {
            let c = facts
                .controller_of(p)
                .or_else(|| deployment_by_name(&p.meta.name))?;
            matches!(c.kind.as_str(), "Deployment" | "StatefulSet")
                .then(|| format!("{}/{}", c.kind.to_ascii_lowercase(), c.name))
        })
    })
}

/// The workload of a PDB the input shows only by name (the event's `ns/name`): a pod on the
/// blocked node (its describe's pod list) or named by an event, in the PDB's namespace, whose
/// controller (by the pod's name) is named like the PDB: `ledger-writer` for PDB
/// `ledger-writer` or `ledger-writer-pdb`, and pod `ledger-writer-0`.
fn workload_named_like(facts: &Facts, g: &Group<'_>, qualified_pdb: &str) -> Option<String> {
    let (ns, pdb) = split_qualified(qualified_pdb);
    let ns = ns?;
    let base = pdb
        .strip_suffix("-pdb")
        .or_else(|| pdb.strip_prefix("pdb-"))
        .unwrap_or(pdb);
    let mut candidates = pods_on(facts, &g.subjects);
    for m in &facts.messages {
        if let Some(o) = m.object.as_ref().filter(|o| o.kind == "Pod") {
            push_unique(&mut candidates, o.qualified_name());
        }
    }
    candidates.iter().find_map(|p| {
        let (pod_ns, pod) = split_qualified(p);
        if pod_ns != Some(ns) {
            return None;
        }
        let c = controller_by_name(pod)?;
        (c.name == base).then(|| format!("{}/{}", c.kind.to_ascii_lowercase(), c.name))
    })
}

/// The pods of the PDB's namespace whose controller (by the pod's name) is named like the
/// PDB, with their latest Warning event (`Unhealthy`, `BackOff`), in input order.
fn warned_pods_named_like<'a>(
    facts: &'a Facts,
    qualified_pdb: &str,
) -> Vec<(String, &'a crate::facts::Event)> {
    let (Some(ns), pdb) = split_qualified(qualified_pdb) else {
        return Vec::new();
    };
    let base = pdb
        .strip_suffix("-pdb")
        .or_else(|| pdb.strip_prefix("pdb-"))
        .unwrap_or(pdb);
    let mut out: Vec<(String, &crate::facts::Event)> = Vec::new();
    for e in facts.events.iter().filter(|e| e.event_type == "Warning") {
        let Some(o) = e.object.as_ref().filter(|o| o.kind == "Pod") else {
            continue;
        };
        if o.namespace.as_deref() != Some(ns)
            || controller_by_name(&o.name).is_none_or(|c| c.name != base)
        {
            continue;
        }
        let pod = o.qualified_name();
        match out.iter_mut().find(|(p, _)| *p == pod) {
            Some(slot) => slot.1 = e,
            None => out.push((pod, e)),
        }
    }
    out
}

/// The Deployment or StatefulSet a pod's name implies (`deployment_by_name`, or a
/// StatefulSet's `<name>-<ordinal>`).
fn controller_by_name(pod: &str) -> Option<ObjectRef> {
    deployment_by_name(pod).or_else(|| {
        let (name, ordinal) = pod.rsplit_once('-')?;
        (!name.is_empty()
            && !ordinal.is_empty()
            && ordinal.len() <= 4
            && ordinal.chars().all(|c| c.is_ascii_digit()))
        .then(|| ObjectRef::new("StatefulSet", None, name))
    })
}

/// A Deployment's pod is named `<deployment>-<pod-template-hash>-<5 chars>`; a pod listed
/// without owner or labels (a `kubectl get pods` row) names its Deployment that way.
fn deployment_by_name(pod: &str) -> Option<ObjectRef> {
    crate::rules::names::deployment_of_pod(pod).map(|name| ObjectRef::new("Deployment", None, name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Container, LabelSelector, Meta};
    use crate::testing::{check_only, ids};
    use std::collections::BTreeMap;

    #[test]
    fn a_pdb_known_by_name_scales_the_workload_its_pods_are_named_after() {
        let scale = |text: &str| {
            check_only("KW401", text).diagnoses[0]
                .remediation
                .iter()
                .find_map(|r| r.command.clone().filter(|c| c.starts_with("kubectl scale")))
        };
        let table = |pdb: &str, pod_row: &str| {
            format!(
                "NAMESPACE   LAST SEEN   TYPE      REASON              OBJECT                           MESSAGE\n\
                 default     31m         Normal    DisruptionBlocked   node/ip-10-8-33-102.internal     {pdb}\n\
                 {pod_row}\n"
            )
        };
        // An event about one of its pods.
        let text = table(
            "Pdb prevents pod evictions (PodDisruptionBudget=[search/opensearch-data])",
            "search      2m          Warning   Unhealthy           pod/opensearch-data-2            Readiness probe failed: HTTP probe failed with statuscode: 503",
        );
        assert_eq!(
            scale(&text).as_deref(),
            Some("kubectl scale statefulset/opensearch-data -n search --replicas=3")
        );
        // Its Warning event names the unhealthy replica.
        let summary = check_only("KW401", &text).diagnoses[0].summary.clone();
        assert!(
            summary.contains(
                "Not healthy: search/opensearch-data-2 (Unhealthy: Readiness probe failed)"
            ),
            "{summary}"
        );
        // The kubelet's `Error: ErrImagePull` is headed by its class, not by `Error`.
        let text = table(
            "Pdb prevents pod evictions (PodDisruptionBudget=[search/opensearch-data])",
            "search      2m          Warning   Failed              pod/opensearch-data-2            Error: ErrImagePull",
        );
        let summary = check_only("KW401", &text).diagnoses[0].summary.clone();
        assert!(
            summary.contains("search/opensearch-data-2 (Failed: ErrImagePull)"),
            "{summary}"
        );
        // A `-pdb` suffix; a Deployment's pod.
        let text = table(
            "Pdb \"web/checkout-pdb\" prevents pod evictions",
            "web         2m          Warning   BackOff             pod/checkout-6d9f7b7c4-8kq2w     Back-off restarting failed container",
        );
        assert_eq!(
            scale(&text).as_deref(),
            Some("kubectl scale deployment/checkout -n web --replicas=3")
        );
        // A pod of another namespace or another workload says nothing.
        for other in [
            "other       2m          Warning   Unhealthy           pod/opensearch-data-2            Readiness probe failed",
            "search      2m          Warning   Unhealthy           pod/opensearch-master-0          Readiness probe failed",
        ] {
            let text = table(
                "Pdb prevents pod evictions (PodDisruptionBudget=[search/opensearch-data])",
                other,
            );
            assert_eq!(
                scale(&text).as_deref(),
                Some("kubectl scale deployment/<workload> -n search --replicas=3"),
                "{other}"
            );
            let summary = check_only("KW401", &text).diagnoses[0].summary.clone();
            assert!(!summary.contains("Not healthy"), "{summary}");
        }
    }

    #[test]
    fn the_drain_event_of_a_pod_with_several_budgets_names_the_pod() {
        let report = check_only(
            "KW401",
            "1m Warning FailedDraining node/ip-10-1-1-2.ec2.internal Failed to drain node, eviction does not support multiple PDBs (Pod=shop/web-7d9f-abc)",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with(
                "Pod shop/web-7d9f-abc is selected by more than one PodDisruptionBudget"
            ),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("()"), "{}", d.summary);
        assert!(!d.summary.contains("violates its budget"), "{}", d.summary);
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("kubectl get pdb -n shop -o yaml")
        );
    }

    #[test]
    fn a_budget_that_allows_a_disruption_now_ended_the_block() {
        let text = "Events:
  Type    Reason             Age               From       Message
  ----    ------             ----              ----       -------
  Normal  DisruptionBlocked  3h (x12 over 5h)  karpenter  Pdb prevents pod evictions (PodDisruptionBudget=[ingress-nginx/ingress-nginx-controller])
$ kubectl get pdb -n ingress-nginx
NAME                       MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE
ingress-nginx-controller   1               N/A               1                     41d
";
        let report = check_only("KW401", text);
        assert_eq!(ids(&report), ["KW401"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.severity, Severity::Info);
        assert!(d.summary.contains("block has passed"), "{}", d.summary);
        assert!(
            d.summary.contains("prevented pod evictions"),
            "{}",
            d.summary
        );
        // At 0 allowed the block stands.
        let blocked = text.replace(
            "1               N/A               1 ",
            "1               N/A               0 ",
        );
        let d = &check_only("KW401", &blocked).diagnoses[0];
        assert_eq!(d.severity, Severity::Error);
        assert!(!d.summary.contains("block has passed"), "{}", d.summary);
    }

    #[test]
    fn a_budget_that_never_allows_is_changed_not_waited_for() {
        let paste = |max: &str, min: &str| {
            format!(
                "default     2m          Normal   DisruptionBlocked   node/ip-10-1-33-7.us-east-2.compute.internal    Pdb \"payments/api-pdb\" prevents pod evictions
$ kubectl get pdb -n payments
NAME      MIN AVAILABLE   MAX UNAVAILABLE   ALLOWED DISRUPTIONS   AGE
api-pdb   {min}             {max}                 0                     41d
"
            )
        };
        let texts = |report: &crate::report::Report| -> Vec<String> {
            report.diagnoses[0]
                .remediation
                .iter()
                .map(|r| r.text.clone())
                .collect()
        };
        for (max, min, setting) in [
            ("0", "N/A", "maxUnavailable: 0"),
            ("N/A", "100%", "minAvailable: 100%"),
        ] {
            let report = check_only("KW401", &paste(max, min));
            assert_eq!(ids(&report), ["KW401"]);
            let steps = texts(&report);
            assert!(
                steps
                    .iter()
                    .any(|t| t.contains(&format!("({setting}) allows no eviction at all"))),
                "{steps:?}"
            );
            assert!(
                !steps
                    .iter()
                    .any(|t| t.contains("healthy first") || t.contains("more replicas")),
                "{steps:?}"
            );
        }
        // A budget that allows evictions once its pods are healthy keeps those steps.
        let steps = texts(&check_only("KW401", &paste("1", "N/A")));
        assert!(
            steps.iter().any(|t| t.contains("healthy first")),
            "{steps:?}"
        );
        assert!(!steps
            .iter()
            .any(|t| t.contains("allows no eviction at all")));
    }

    fn one(text: &str) -> Diagnosis {
        let report = check_only("KW401", text);
        assert_eq!(ids(&report), ["KW401"], "{text}");
        report.diagnoses[0].clone()
    }

    #[test]
    fn every_grammar_names_the_pdb() {
        for (text, pdb) in [
            (
                r#"50m Normal DisruptionBlocked node/ip-10-80-104-183 Cannot disrupt Node: PDB "kube-system/ebs-csi-controller" prevents pod evictions"#,
                "kube-system/ebs-csi-controller",
            ),
            (
                r#"Cannot disrupt NodeClaim: pdb "monitoring/prometheus-k8s" prevents pod evictions"#,
                "monitoring/prometheus-k8s",
            ),
            (
                r#"Normal  DisruptionBlocked  26s  karpenter  Pdb "default/nginx-test-pdb" prevents pod evictions"#,
                "default/nginx-test-pdb",
            ),
            (
                "Pdb prevents pod evictions (PodDisruptionBudget=default/nginx-test-pdb)",
                "default/nginx-test-pdb",
            ),
            (
                "Pdb prevents pod evictions (PodDisruptionBudget=[ingress-nginx/ingress-nginx-controller])",
                "ingress-nginx/ingress-nginx-controller",
            ),
            (
                "Normal Unconsolidatable 66s karpenter pdb default/inflate-pdb prevents pod evictions",
                "default/inflate-pdb",
            ),
            (
                r#"{"level":"ERROR","message":"consistency error","error":"can't drain node, PDB \"default/test\" is blocking evictions"}"#,
                "default/test",
            ),
            (
                r#"{"message":"Cannot disrupt Node: PDB \"kube-system/ebs-csi-controller\" prevents pod evictions","reason":"DisruptionBlocked"}"#,
                "kube-system/ebs-csi-controller",
            ),
        ] {
            let d = one(text);
            assert!(d.summary.contains(pdb), "{text}: {}", d.summary);
            assert_eq!(d.severity, Severity::Error);
            assert!(d
                .remediation
                .iter()
                .any(|r| r.command.as_deref().is_some_and(|c| c.starts_with("kubectl describe pdb"))));
        }
    }

    #[test]
    fn pods_waiting_join_the_budget_that_blocks_the_same_node() {
        let d = one(
            "Warning FailedDraining 30s node/ip-1 Failed to drain node, 2 pods are waiting to be evicted\nWarning FailedDraining 30s node/ip-1 Failed to drain node, evicting pod a/b-0 violates a PDB\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: b\n  namespace: a\nspec:\n  maxUnavailable: 1\nstatus:\n  disruptionsAllowed: 0\n",
        );
        assert!(
            d.summary.contains("PodDisruptionBudget a/b"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("2 pods are waiting"), "{}", d.summary);
        assert_eq!(d.evidence.len(), 3);
    }

    #[test]
    fn node_and_nodeclaim_events_for_one_pdb_make_one_diagnosis() {
        let d = one(
            "50m Normal DisruptionBlocked node/ip-1 Cannot disrupt Node: pdb \"a/b\" prevents pod evictions\n50m Normal DisruptionBlocked nodeclaim/np-x Cannot disrupt NodeClaim: pdb \"a/b\" prevents pod evictions",
        );
        assert_eq!(d.evidence.len(), 2);
        assert!(
            d.summary.contains("node ip-1, NodeClaim np-x"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn multiple_pdbs_and_drain_forms() {
        let d = one(
            "Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[default/app-pdb default/app-pdb-legacy])",
        );
        assert!(d
            .summary
            .contains("default/app-pdb, default/app-pdb-legacy"));
        assert!(d.remediation.iter().any(|r| r.command.as_deref()
            == Some("kubectl get pdb -n default app-pdb app-pdb-legacy -o yaml")));
        let drain = one(
            "Warning  FailedDraining  35s  karpenter  Failed to drain node, 3 pods are waiting to be evicted\nWarning  FailedDraining  5s  karpenter  Failed to drain node, evicting pod violates a PDB (Pod=ingress-nginx/ingress-nginx-controller-7c9f8d6b5-2xkqp)",
        );
        assert!(drain
            .summary
            .contains("ingress-nginx/ingress-nginx-controller-7c9f8d6b5-2xkqp"));
        assert!(drain.summary.contains("3 pods are waiting"));
        assert_eq!(drain.evidence.len(), 2);
        let v10 = one("Failed to drain node, evicting pod shop/web-1 violates a PDB");
        assert!(v10.summary.contains("shop/web-1"), "{}", v10.summary);
        let waiting = one("Failed to drain node, 12 pods are waiting to be evicted");
        assert_eq!(waiting.confidence, Confidence::Medium);
    }

    #[test]
    fn near_misses() {
        for text in [
            "Normal DisruptionBlocked 30s karpenter No allowed disruptions due to blocking budget",
            r#"Pod "default/x" has "karpenter.sh/do-not-disrupt" annotation"#,
            "Deleting the pod to accommodate the terminationTime. This bypasses the PDB of the pod and the do-not-disrupt annotation.",
            "ingress-nginx   ingress-nginx-controller   1   N/A   1   41d",
        ] {
            assert!(ids(&check_only("KW401", text)).is_empty(), "{text}");
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn ingress_facts() -> Facts {
        let sel = labels(&[("app.kubernetes.io/name", "ingress-nginx")]);
        let mut facts = Facts::default();
        facts.pdbs.push(Pdb {
            meta: Meta {
                name: "ingress-nginx-controller".into(),
                namespace: Some("ingress-nginx".into()),
                ..Default::default()
            },
            selector: LabelSelector {
                match_labels: sel.clone(),
                match_expressions: Vec::new(),
            },
            min_available: Some("1".into()),
            disruptions_allowed: Some(0),
            current_healthy: Some(1),
            desired_healthy: Some(1),
            expected_pods: Some(2),
            ..Default::default()
        });
        for (name, node, reason) in [
            (
                "ingress-nginx-controller-7c9f8d6b5-2xkqp",
                "ip-10-0-33-12",
                Some("ImagePullBackOff"),
            ),
            (
                "ingress-nginx-controller-7c9f8d6b5-m8q4d",
                "ip-10-0-18-77",
                None,
            ),
        ] {
            facts.pods.push(Pod {
                meta: Meta {
                    name: name.into(),
                    namespace: Some("ingress-nginx".into()),
                    labels: sel.clone(),
                    ..Default::default()
                },
                phase: Some(
                    if reason.is_some() {
                        "Pending"
                    } else {
                        "Running"
                    }
                    .into(),
                ),
                node_name: Some(node.into()),
                containers: vec![Container {
                    name: "controller".into(),
                    image: Some("registry.k8s.io/ingress-nginx/controller:v1.11.2".into()),
                    reason: reason.map(str::to_string),
                    ready: Some(reason.is_none()),
                    ..Default::default()
                }],
                ..Default::default()
            });
        }
        facts
    }

    #[test]
    fn ingress_nginx_story_end_to_end() {
        let mut facts = ingress_facts();
        facts.messages.push(Message {
            text: "Pdb prevents pod evictions (PodDisruptionBudget=[ingress-nginx/ingress-nginx-controller])".into(),
            object: Some(ObjectRef::new("Node", None, "ip-10-0-18-77")),
            reason: Some("DisruptionBlocked".into()),
            ..Default::default()
        });
        facts.messages.push(Message {
            text: "Back-off pulling image \"registry.k8s.io/ingress-nginx/controller:v1.11.2\""
                .into(),
            ..Default::default()
        });
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        let s = &d[0].summary;
        for part in [
            "ingress-nginx/ingress-nginx-controller prevents pod evictions",
            "node ip-10-0-18-77",
            "minAvailable: 1",
            "2 pods expected, 1 healthy, 1 needed, so 0 disruptions are allowed",
            "ingress-nginx/ingress-nginx-controller-7c9f8d6b5-2xkqp (ImagePullBackOff)",
            "registry.k8s.io/ingress-nginx/controller:v1.11.2",
        ] {
            assert!(s.contains(part), "{part}: {s}");
        }
        assert_eq!(d[0].related, ["KW001"]);
        assert!(d[0].remediation.iter().any(|r| r.command.as_deref()
            == Some(
                "kubectl get pods -n ingress-nginx -l app.kubernetes.io/name=ingress-nginx -o wide"
            )));
        assert!(d[0]
            .remediation
            .iter()
            .any(|r| r.text.starts_with("Do not delete the pods")));
        assert!(!d[0].remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("delete pod"))));
    }

    #[test]
    fn a_zero_budget_over_a_scheduled_pod_is_inferred() {
        let facts = ingress_facts();
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].severity, Severity::Warning);
        assert_eq!(d[0].confidence, Confidence::Medium);
        assert!(d[0].summary.contains("inferred"), "{}", d[0].summary);
        assert!(d[0]
            .summary
            .contains("node ip-10-0-33-12, node ip-10-0-18-77"));
        // A budget that allows a disruption, or one covering nothing, is fine.
        let mut ok = ingress_facts();
        ok.pdbs[0].disruptions_allowed = Some(1);
        assert!(check(&ok).is_empty());
        let mut empty = ingress_facts();
        empty.pdbs[0].expected_pods = Some(0);
        assert!(check(&empty).is_empty());
        let mut unrelated = ingress_facts();
        for p in &mut unrelated.pods {
            p.meta.labels = labels(&[("app", "other")]);
        }
        assert!(check(&unrelated).is_empty());
    }

    #[test]
    fn max_unavailable_shows_what_the_unavailable_pods_use_up() {
        let pdb =
            |max: &str, expected: Option<i64>, healthy: Option<i64>, allowed: Option<i64>| Pdb {
                meta: Meta {
                    name: "api".into(),
                    namespace: Some("payments".into()),
                    ..Default::default()
                },
                max_unavailable: Some(max.into()),
                expected_pods: expected,
                current_healthy: healthy,
                disruptions_allowed: allowed,
                ..Default::default()
            };
        assert_eq!(
            budget_sentence(&pdb("1", Some(3), Some(2), Some(0))),
            "payments/api requires maxUnavailable: 1: it lets 1 pod be unavailable at once, and 1 of its 3 already is (2 healthy), so 1 - 1 leaves 0 disruptions allowed."
        );
        // A percentage rounds up: 25% of 6 is 2.
        let s = budget_sentence(&pdb("25%", Some(6), Some(4), Some(0)));
        assert!(
            s.contains("maxUnavailable: 25% (25% of 6 pods is 2, rounded up)"),
            "{s}"
        );
        assert!(s.contains("2 - 2 leaves 0 disruptions"), "{s}");
        // A `kubectl get pdb` row: only the allowed count.
        let s = budget_sentence(&pdb("2", None, None, Some(0)));
        assert!(
            s.contains("0 allowed means at least 2 of its pods are already unavailable"),
            "{s}"
        );
        let s = budget_sentence(&pdb("10%", None, None, Some(0)));
        assert!(s.contains("a share of its expected pods rounded up"), "{s}");
        // minAvailable keeps its own sentence.
        let mut min = pdb("1", Some(2), Some(1), Some(0));
        min.min_available = Some("1".into());
        min.max_unavailable = None;
        assert!(budget_sentence(&min).starts_with("payments/api requires minAvailable: 1"));
        assert_eq!(
            scaled_max_unavailable(&pdb("x%", Some(3), None, None)),
            None
        );
        assert_eq!(scaled_max_unavailable(&pdb("-1", None, None, None)), None);
    }

    #[test]
    fn deployment_from_a_pod_name() {
        assert_eq!(
            deployment_by_name("ingress-nginx-controller-7c9f8d6b5-2xkqp"),
            Some(ObjectRef::new(
                "Deployment",
                None,
                "ingress-nginx-controller"
            ))
        );
        assert_eq!(deployment_by_name("redis-0"), None);
        assert_eq!(deployment_by_name("web-ABCDEFGHI-xxxxx"), None);
        let mut facts = ingress_facts();
        facts.pods[0].containers[0].reason = None;
        facts.messages.push(Message {
            origin: MessageOrigin::ObjectField,
            text: "ImagePullBackOff".into(),
            object: Some(facts.pods[0].object_ref()),
            reason: Some("ImagePullBackOff".into()),
            ..Default::default()
        });
        facts.messages.push(Message {
            text: "Pdb prevents pod evictions (PodDisruptionBudget=[ingress-nginx/ingress-nginx-controller])".into(),
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains("7c9f8d6b5-2xkqp (ImagePullBackOff)"),
            "{}",
            d.summary
        );
        assert!(d.remediation.iter().any(|r| r.command.as_deref()
            == Some(
                "kubectl scale deployment/ingress-nginx-controller -n ingress-nginx --replicas=3"
            )));
    }

    #[test]
    fn a_drain_pod_finds_its_budget_from_the_objects() {
        let mut facts = ingress_facts();
        facts.messages.push(Message {
            text: "Failed to drain node, evicting pod violates a PDB (Pod=ingress-nginx/ingress-nginx-controller-7c9f8d6b5-m8q4d)".into(),
            ..Default::default()
        });
        let d = check(&facts);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0]
            .summary
            .contains("PodDisruptionBudget ingress-nginx/ingress-nginx-controller"));
        assert_eq!(d[0].severity, Severity::Error);
    }
}
