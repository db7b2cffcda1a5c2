//! The report: what was asked about (the subject), the diagnoses, the same diagnoses grouped by
//! cause when the input concerns several pods, the 8-step checklist, the missing facts (each
//! with the command that collects it) and the input errors. Serialises to the JSON schema of
//! DESIGN.md (`schemaVersion` 1); fields beyond that schema are additive.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::document::InputError;
use crate::facts::{Facts, ObjectRef};
use crate::rules::{Diagnosis, NodePoolKind, SerializedRef, Severity};

mod checklist;
pub(crate) use checklist::PRE_MACHINE_STEP;

pub use checklist::{ChecklistStep, Missing, StepStatus};

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema_version: u32,
    pub tool: Tool,
    /// `null` when the input names no pod, node, NodeClaim, NodePool or EC2NodeClass.
    pub subject: Option<Subject>,
    /// Sorted by severity, then confidence, then ID.
    pub diagnoses: Vec<Diagnosis>,
    /// Only when the subject is several pods: diagnoses with the same ID and cause merged
    /// into one group listing the pods.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<DiagnosisGroup>,
    pub checklist: Vec<ChecklistStep>,
    pub missing: Vec<Missing>,
    pub input_errors: Vec<InputError>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tool {
    pub name: &'static str,
    pub version: &'static str,
}

/// What the input is about. For several objects of one kind the kind is plural (`Pods`), the
/// name lists them and `objects` holds each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Subject {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    pub name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<SerializedRef>,
}

impl Subject {
    /// `Pod shop/web-0`, `Node ip-10-0-1-2`, `3 Pods in shop: web-0, web-1, web-2`.
    pub fn describe(&self) -> String {
        if self.objects.len() > 1 {
            let place = match &self.namespace {
                Some(ns) => format!(" in {ns}"),
                None => String::new(),
            };
            return format!("{} {}{place}: {}", self.objects.len(), self.kind, self.name);
        }
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }

    pub fn is_several_pods(&self) -> bool {
        self.kind == "Pods"
    }
}

/// Diagnoses with one ID and one cause across several pods.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosisGroup {
    pub id: &'static str,
    pub title: &'static str,
    pub severity: Severity,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    /// `NodePool` or `Provisioner` (v1alpha5), as the diagnoses say, when a pool is named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_pool_kind: Option<NodePoolKind>,
    /// The first diagnosis's summary (it names its own pod).
    pub summary: String,
    /// The pods with this cause (empty when the diagnosis names no pod).
    pub pods: Vec<SerializedRef>,
    /// Number of pods.
    pub count: usize,
    /// Evidence lines across the group, repeats included.
    pub occurrences: usize,
    /// Indices into `Report::diagnoses`.
    pub diagnoses: Vec<usize>,
}

impl Report {
    pub fn build(facts: &Facts, diagnoses: Vec<Diagnosis>) -> Report {
        Report::build_about(facts, diagnoses, None)
    }

    /// `build`, around a subject the caller already knows (live mode: the object it was asked
    /// about) instead of one inferred from the facts.
    pub fn build_about(
        facts: &Facts,
        mut diagnoses: Vec<Diagnosis>,
        subject: Option<Subject>,
    ) -> Report {
        // Most severe first, then most certain; stable, so a rule's own order survives.
        diagnoses.sort_by_key(|d| (d.severity, d.confidence));
        let subject = subject.or_else(|| infer_subject(facts, &diagnoses));
        let groups = match &subject {
            Some(s) if s.is_several_pods() => group_by_cause(&diagnoses),
            _ => Vec::new(),
        };
        let (checklist, missing) = checklist::walk(facts, &diagnoses, subject.as_ref());
        Report {
            schema_version: SCHEMA_VERSION,
            tool: Tool {
                name: "karpenter-why",
                version: env!("CARGO_PKG_VERSION"),
            },
            subject,
            diagnoses,
            groups,
            checklist,
            missing,
            input_errors: facts.input_errors.clone(),
        }
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("report serialises")
    }

    /// At least one error-severity diagnosis (the CLI's exit code 1).
    pub fn has_errors(&self) -> bool {
        self.diagnoses.iter().any(|d| d.severity == Severity::Error)
    }

    /// Number of diagnoses of each severity, most severe first.
    pub fn counts(&self) -> [(Severity, usize); 3] {
        [Severity::Error, Severity::Warning, Severity::Info]
            .map(|s| (s, self.diagnoses.iter().filter(|d| d.severity == s).count()))
    }
}

/// Kinds a subject can be, in tie-break order: a node or NodeClaim described next to the pods
/// on it is what the user asked about; a NodePool or EC2NodeClass is usually context.
const SUBJECT_KINDS: &[(&str, &str)] = &[
    ("Node", "Nodes"),
    ("NodeClaim", "NodeClaims"),
    // Before v0.32: a v1alpha5 Machine, a Provisioner, a v1alpha1 AWSNodeTemplate.
    ("Machine", "Machines"),
    ("Pod", "Pods"),
    ("Deployment", "Deployments"),
    ("StatefulSet", "StatefulSets"),
    ("DaemonSet", "DaemonSets"),
    ("NodePool", "NodePools"),
    ("Provisioner", "Provisioners"),
    ("EC2NodeClass", "EC2NodeClasses"),
    ("AWSNodeTemplate", "AWSNodeTemplates"),
];

#[derive(Default)]
struct Candidate {
    score: u32,
    /// Present as a typed object (a describe or YAML of it).
    typed: bool,
    named_by_diagnosis: bool,
    pending: bool,
}

impl Candidate {
    fn of_interest(&self) -> bool {
        self.named_by_diagnosis || self.pending
    }
}

/// What the input is about. A kind scores +2 when the input holds exactly one object of it
/// (a describe or a YAML is the focus, or the one workload diagnoses name) and +1 when it
/// holds several (a `kubectl get` list is
/// context); each object then adds +1 when it is a Pending pod, +3 / +2 / +1 for every error
/// / warning / info diagnosis naming it, +1 when events or log lines are about it. The kind
/// with the highest total wins (ties: `SUBJECT_KINDS` order), except that a Pending pod the
/// input describes (its describe, its YAML, or only its describe's events) makes the pods
/// the subject outright: the NodePool or NodeClaim pasted next to it is there to explain
/// it, and scores more only because diagnoses name it. Within the kind, the objects of
/// interest (named by a diagnosis, or Pending) are the subject, preferring the one object
/// the input holds when there is exactly one; several objects make a plural subject.
pub fn infer_subject(facts: &Facts, diagnoses: &[Diagnosis]) -> Option<Subject> {
    let mut candidates: BTreeMap<ObjectRef, Candidate> = BTreeMap::new();
    let mut typed = |r: ObjectRef, pending: bool| {
        let c = candidates.entry(r).or_default();
        c.score += u32::from(pending);
        c.typed = true;
        c.pending |= pending;
    };
    for p in &facts.pods {
        typed(p.object_ref(), p.is_pending());
    }
    let events_only = pods_pending_by_their_describe_events(facts);
    for r in &events_only {
        typed(r.clone(), true);
    }
    for w in &facts.workloads {
        typed(
            ObjectRef::new(&w.kind, w.meta.namespace.as_deref(), &w.meta.name),
            false,
        );
    }
    for n in &facts.nodes {
        typed(ObjectRef::new("Node", None, &n.meta.name), false);
    }
    for n in &facts.nodeclaims {
        let kind = if n.is_machine { "Machine" } else { "NodeClaim" };
        typed(ObjectRef::new(kind, None, &n.meta.name), false);
    }
    for n in &facts.nodepools {
        let kind = if n.is_provisioner {
            "Provisioner"
        } else {
            "NodePool"
        };
        typed(ObjectRef::new(kind, None, &n.meta.name), false);
    }
    for n in &facts.nodeclasses {
        let kind = if n.is_aws_node_template {
            "AWSNodeTemplate"
        } else {
            "EC2NodeClass"
        };
        typed(ObjectRef::new(kind, None, &n.meta.name), false);
    }
    for d in diagnoses {
        let named = match d.objects.as_slice() {
            [] => d.object.as_slice(),
            several => several,
        };
        for o in named {
            let c = candidates
                .entry(ObjectRef::new(&o.kind, o.namespace.as_deref(), &o.name))
                .or_default();
            c.score += match d.severity {
                Severity::Error => 3,
                Severity::Warning => 2,
                Severity::Info => 1,
            };
            c.named_by_diagnosis = true;
        }
    }
    let mentioned: std::collections::BTreeSet<&ObjectRef> = facts
        .events
        .iter()
        .filter_map(|e| e.object.as_ref())
        .chain(facts.messages.iter().filter_map(|m| m.object.as_ref()))
        .collect();
    for r in mentioned {
        candidates.entry(r.clone()).or_default().score += 1;
    }
    let kind_score = |kind: &str| -> u32 {
        let of_kind = || candidates.iter().filter(|(r, _)| r.kind == kind);
        // A workload a diagnosis names stands for its pods in the input even when only
        // inferred from their names (KW003): it is what the report is about.
        let workload = matches!(kind, "Deployment" | "StatefulSet" | "DaemonSet");
        let presence = match of_kind()
            .filter(|(_, c)| c.typed || (workload && c.named_by_diagnosis))
            .count()
        {
            0 => 0,
            1 => 2,
            _ => 1,
        };
        presence + of_kind().map(|(_, c)| c.score).sum::<u32>()
    };
    // A Pending pod described in the input is what the user asks about, whatever the
    // NodePool, NodeClaim or node pasted next to it to explain it scores. A table row of one
    // counts only when a diagnosis names it: a DaemonSet's pod stuck in Init on the node a
    // NodeClaim diagnosis is about is evidence, not the question.
    // Sets, not scans per candidate: `kubectl get pods -A` of a big cluster lists thousands.
    let table_pods: std::collections::BTreeSet<ObjectRef> = facts
        .pods
        .iter()
        .filter(|p| p.meta.from_table)
        .map(|p| p.object_ref())
        .collect();
    let listed_only = |r: &ObjectRef| table_pods.contains(r);
    let described_pending = candidates.iter().any(|(r, c)| {
        r.kind == "Pod" && c.typed && c.pending && (c.named_by_diagnosis || !listed_only(r))
    });
    let typed_kind = |kind: &str| candidates.iter().any(|(r, c)| r.kind == kind && c.typed);
    let (kind, plural) = SUBJECT_KINDS
        .iter()
        .copied()
        .filter(|(k, _)| kind_score(k) > 0)
        .filter(|(k, _)| !described_pending || *k == "Pod")
        .fold(None::<(&str, &str, u32)>, |best, (k, p)| {
            let s = kind_score(k);
            match best {
                // Neither pasted, only mentioned by events or log lines: a pod's events next to
                // those of the NodeClaim Karpenter made for it answer a question about the pod.
                // (A node's are different: its pods' events are evidence about the node.)
                Some((bk, _, bs))
                    if bs == s
                        && k == "Pod"
                        && matches!(bk, "NodeClaim" | "Machine")
                        && !typed_kind(bk) =>
                {
                    Some((k, p, s))
                }
                Some((_, _, bs)) if bs >= s => best,
                _ => Some((k, p, s)),
            }
        })
        .map(|(k, p, _)| (k, p))?;
    let of_kind: Vec<(&ObjectRef, &Candidate)> =
        candidates.iter().filter(|(r, _)| r.kind == kind).collect();
    let typed_of_interest: Vec<&ObjectRef> = of_kind
        .iter()
        .filter(|(_, c)| c.typed && c.of_interest())
        .map(|(r, _)| *r)
        .collect();
    // Several objects of the kind the input describes (an object, or its describe's events)
    // and diagnoses name (two pods described, each with its own failure): the report is about
    // all of them, not the one the input happens to list in a table too.
    let described_events: std::collections::BTreeSet<&ObjectRef> = facts
        .events
        .iter()
        .filter(|e| e.from_describe)
        .filter_map(|e| e.object.as_ref())
        .collect();
    let described = |r: &ObjectRef| {
        described_events.contains(r)
            || facts.commands.iter().any(|c| {
                c.is("describe", &r.kind)
                    && c.name.as_deref() == Some(r.name.as_str())
                    && (r.namespace.is_none() || c.namespace == r.namespace)
            })
    };
    let diagnosed: Vec<&ObjectRef> = of_kind
        .iter()
        .filter(|(r, c)| c.named_by_diagnosis && (c.typed || described(r)))
        .map(|(r, _)| *r)
        .collect();
    let chosen: Vec<&ObjectRef> = if diagnosed.len() > 1 {
        diagnosed
    } else if typed_of_interest.len() == 1 {
        typed_of_interest
    } else {
        let interesting: Vec<&ObjectRef> = of_kind
            .iter()
            .filter(|(_, c)| c.of_interest())
            .map(|(r, _)| *r)
            .collect();
        let typed_only: Vec<&ObjectRef> = of_kind
            .iter()
            .filter(|(_, c)| c.typed)
            .map(|(r, _)| *r)
            .collect();
        if !interesting.is_empty() {
            interesting
        } else if !typed_only.is_empty() {
            typed_only
        } else {
            of_kind.iter().map(|(r, _)| *r).collect()
        }
    };
    // Karpenter's own Pending pods listed next to the pods it should serve explain its
    // silence; the others are what the user asks about.
    let karpenter_pods = crate::rules::text::KarpenterPods::new(facts);
    let chosen: Vec<&ObjectRef> =
        if kind == "Pod" && chosen.iter().any(|r| !karpenter_pods.contains(r)) {
            chosen
                .into_iter()
                .filter(|r| !karpenter_pods.contains(r))
                .collect()
        } else {
            chosen
        };
    Some(subject_of(kind, plural, &chosen))
}

/// Pods the input shows only by their describe's events (`kubectl describe pod x | sed -n
/// '/Events/,$p'`), whose events say they are still Pending: Karpenter or the scheduler
/// failed or nominated them and nothing shows them scheduled since (no `Scheduled` event,
/// no kubelet event). A pod object in the input decides on its own.
fn pods_pending_by_their_describe_events(facts: &Facts) -> Vec<ObjectRef> {
    let mut waiting: std::collections::BTreeSet<&ObjectRef> = Default::default();
    let mut placed: std::collections::BTreeSet<&ObjectRef> = Default::default();
    let objects: std::collections::BTreeSet<ObjectRef> =
        facts.pods.iter().map(|p| p.object_ref()).collect();
    for e in &facts.events {
        let Some(pod) = e.object.as_ref().filter(|o| o.kind == "Pod") else {
            continue;
        };
        if !e.from_describe || objects.contains(pod) {
            continue;
        }
        if e.reason == "Scheduled" || e.source == "kubelet" {
            placed.insert(pod);
        } else if matches!(e.reason.as_str(), "FailedScheduling" | "Nominated") {
            waiting.insert(pod);
        }
    }
    waiting.difference(&placed).map(|r| (*r).clone()).collect()
}

fn subject_of(kind: &str, plural: &str, objects: &[&ObjectRef]) -> Subject {
    if let [one] = objects {
        return Subject {
            kind: kind.to_string(),
            namespace: one.namespace.clone(),
            name: one.name.clone(),
            objects: Vec::new(),
        };
    }
    let first_ns = objects.first().and_then(|o| o.namespace.clone());
    let common_ns = first_ns.filter(|ns| {
        objects
            .iter()
            .all(|o| o.namespace.as_deref() == Some(ns.as_str()))
    });
    let names: Vec<String> = objects
        .iter()
        .map(|o| match common_ns {
            Some(_) => o.name.clone(),
            None => o.qualified_name(),
        })
        .collect();
    Subject {
        kind: plural.to_string(),
        namespace: common_ns,
        name: names.join(", "),
        objects: objects.iter().map(|o| SerializedRef::from(*o)).collect(),
    }
}

/// Groups diagnoses by ID, NodePool and summary with the pod's own name taken out: pods of one
/// workload stuck for one reason collapse into one group; a different NodePool, taint or
/// request makes a different cause.
pub fn group_by_cause(diagnoses: &[Diagnosis]) -> Vec<DiagnosisGroup> {
    let mut groups: Vec<DiagnosisGroup> = Vec::new();
    let mut index: BTreeMap<(&str, Option<&str>, String), usize> = BTreeMap::new();
    for (i, d) in diagnoses.iter().enumerate() {
        let pod = d.object.as_ref().filter(|o| o.kind == "Pod");
        // A diagnosis naming several pods already speaks for them all.
        let pods: Vec<&SerializedRef> = match d.objects.as_slice() {
            [] => pod.into_iter().collect(),
            several => several.iter().filter(|o| o.kind == "Pod").collect(),
        };
        let cause = match pod {
            Some(p) if d.objects.is_empty() => without_pod_name(&d.summary, p),
            _ => d.summary.clone(),
        };
        let occurrences: usize = d.evidence.iter().map(|e| e.count).sum();
        let key = (d.id, d.node_pool.as_deref(), cause);
        match index.get(&key) {
            Some(&g) => {
                let group = &mut groups[g];
                for p in pods {
                    if !group.pods.contains(p) {
                        group.pods.push(p.clone());
                    }
                }
                group.count = group.pods.len();
                group.occurrences += occurrences;
                group.diagnoses.push(i);
            }
            None => {
                index.insert(key, groups.len());
                let pods: Vec<SerializedRef> = pods.into_iter().cloned().collect();
                groups.push(DiagnosisGroup {
                    id: d.id,
                    title: d.title,
                    severity: d.severity,
                    node_pool: d.node_pool.clone(),
                    node_pool_kind: d.node_pool.as_ref().and(d.node_pool_kind),
                    summary: d.summary.clone(),
                    count: pods.len(),
                    pods,
                    occurrences,
                    diagnoses: vec![i],
                });
            }
        }
    }
    groups
}

fn without_pod_name(summary: &str, pod: &SerializedRef) -> String {
    match &pod.namespace {
        Some(ns) => summary.replace(&format!("{ns}/{}", pod.name), "<pod>"),
        None => summary.replace(&format!("Pod {}", pod.name), "Pod <pod>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{Node, NodePool, Pod};
    use crate::rules::Confidence;

    use crate::testing::SAMPLE_META as META;

    fn pod(ns: &str, name: &str, phase: &str) -> Pod {
        let mut p = Pod::default();
        p.meta.name = name.into();
        p.meta.namespace = Some(ns.into());
        p.phase = Some(phase.into());
        p
    }

    fn diagnosis_on(kind: &str, ns: Option<&str>, name: &str, summary: &str) -> Diagnosis {
        let r = ObjectRef::new(kind, ns, name);
        Diagnosis::new(&META, summary).with_object(Some(&r))
    }

    #[test]
    fn nothing_named_means_no_subject() {
        assert_eq!(infer_subject(&Facts::default(), &[]), None);
    }

    #[test]
    fn one_described_pod_is_the_subject_even_when_logs_name_others() {
        let mut facts = Facts::default();
        facts.pods.push(pod("shop", "web-0", "Pending"));
        let d = [
            diagnosis_on("Pod", Some("shop"), "web-0", "Pod shop/web-0 x"),
            diagnosis_on("Pod", Some("shop"), "other-1", "Pod shop/other-1 x"),
        ];
        let s = infer_subject(&facts, &d).unwrap();
        assert_eq!((s.kind.as_str(), s.name.as_str()), ("Pod", "web-0"));
        assert_eq!(s.namespace.as_deref(), Some("shop"));
        assert_eq!(s.describe(), "Pod shop/web-0");
    }

    /// Two pods in the input, each with its own failure (image pulls): both are the subject,
    /// not the first one listed.
    #[test]
    fn two_described_pods_each_diagnosed_are_the_subject_together() {
        // One pod is an object (a `get pods` row); the other only its describe's rows under
        // `kubectl describe pod worker-0 -n billing | tail -4`.
        let mut facts = Facts::default();
        facts.pods.push(pod("ingress", "controller-0", "Pending"));
        facts.commands.push(crate::facts::ShellCommand {
            tool: "kubectl".into(),
            verb: Some("describe".into()),
            resource: Some("pod".into()),
            kinds: vec!["Pod".into()],
            name: Some("worker-0".into()),
            namespace: Some("billing".into()),
            ..Default::default()
        });
        let d = [
            diagnosis_on("Pod", Some("ingress"), "controller-0", "x"),
            diagnosis_on("Pod", Some("billing"), "worker-0", "y"),
        ];
        let s = infer_subject(&facts, &d).unwrap();
        assert_eq!(s.kind, "Pods");
        assert_eq!(s.objects.len(), 2);
    }

    #[test]
    fn several_pending_pods_make_a_plural_subject() {
        let mut facts = Facts::default();
        facts.pods.push(pod("shop", "web-0", "Pending"));
        facts.pods.push(pod("shop", "web-1", "Pending"));
        facts.pods.push(pod("shop", "healthy", "Running"));
        let s = infer_subject(&facts, &[]).unwrap();
        assert_eq!(s.kind, "Pods");
        assert_eq!(s.name, "web-0, web-1");
        assert_eq!(s.objects.len(), 2);
        assert_eq!(s.describe(), "2 Pods in shop: web-0, web-1");
    }

    #[test]
    fn pods_in_several_namespaces_are_qualified() {
        let d = [
            diagnosis_on("Pod", Some("a"), "x", "Pod a/x"),
            diagnosis_on("Pod", Some("b"), "y", "Pod b/y"),
        ];
        let s = infer_subject(&Facts::default(), &d).unwrap();
        assert_eq!(s.namespace, None);
        assert_eq!(s.name, "a/x, b/y");
    }

    #[test]
    fn a_described_node_beats_a_pod_named_by_a_warning() {
        let mut facts = Facts::default();
        let mut node = Node::default();
        node.meta.name = "ip-10-0-1-2".into();
        facts.nodes.push(node);
        let mut w = diagnosis_on("Pod", Some("a"), "x", "Pod a/x blocks");
        w.severity = Severity::Warning;
        let s = infer_subject(&facts, &[w.clone()]).unwrap();
        assert_eq!((s.kind.as_str(), s.name.as_str()), ("Node", "ip-10-0-1-2"));
        // Without the node, the pod is what the input is about.
        let s = infer_subject(&Facts::default(), &[w]).unwrap();
        assert_eq!(s.kind, "Pod");
    }

    #[test]
    fn a_described_workload_beats_lists_of_its_pods_and_nodes() {
        let mut facts = Facts::default();
        for i in 0..3 {
            facts
                .pods
                .push(pod("traefik", &format!("traefik-{i}"), "Running"));
        }
        for i in 0..4 {
            let mut node = Node::default();
            node.meta.name = format!("node-{i}");
            facts.nodes.push(node);
        }
        let mut w = crate::facts::Workload {
            kind: "Deployment".into(),
            ..Default::default()
        };
        w.meta.name = "traefik".into();
        w.meta.namespace = Some("traefik".into());
        facts.workloads.push(w);
        let s = infer_subject(&facts, &[]).unwrap();
        assert_eq!(s.describe(), "Deployment traefik/traefik");
        // A warning on two of the pods makes them the subject.
        let d: Vec<Diagnosis> = (0..2)
            .map(|i| {
                let name = format!("traefik-{i}");
                diagnosis_on("Pod", Some("traefik"), &name, "x").with_severity(Severity::Warning)
            })
            .collect();
        let s = infer_subject(&facts, &d).unwrap();
        assert_eq!(s.describe(), "2 Pods in traefik: traefik-0, traefik-1");
    }

    fn describe_event(pod: &ObjectRef, reason: &str, source: &str) -> crate::facts::Event {
        crate::facts::Event {
            reason: reason.into(),
            source: source.into(),
            object: Some(pod.clone()),
            from_describe: true,
            ..Default::default()
        }
    }

    /// A NodePool and a NodeClaim with their diagnoses, as pasted to explain a Pending pod.
    fn context_of_a_pending_pod() -> (Facts, Vec<Diagnosis>) {
        let mut facts = Facts::default();
        let mut np = NodePool::default();
        np.meta.name = "general".into();
        facts.nodepools.push(np);
        let mut claim = crate::facts::NodeClaim::default();
        claim.meta.name = "general-zr2qk".into();
        facts.nodeclaims.push(claim);
        let d = vec![
            diagnosis_on("NodePool", None, "general", "NodePool general x"),
            diagnosis_on(
                "NodeClaim",
                None,
                "general-zr2qk",
                "NodeClaim general-zr2qk x",
            )
            .with_severity(Severity::Warning),
        ];
        (facts, d)
    }

    #[test]
    fn a_described_pending_pod_beats_the_nodepool_and_nodeclaim_pasted_next_to_it() {
        let (mut facts, d) = context_of_a_pending_pod();
        assert_eq!(infer_subject(&facts, &d).unwrap().kind, "NodePool");
        facts.pods.push(pod("payments", "ledger-0", "Pending"));
        let s = infer_subject(&facts, &d).unwrap();
        assert_eq!(s.describe(), "Pod payments/ledger-0");
        // A Running pod is context: the NodePool stays the subject.
        facts.pods[0].phase = Some("Running".into());
        assert_eq!(infer_subject(&facts, &d).unwrap().kind, "NodePool");
    }

    #[test]
    fn a_pod_known_by_its_describe_events_is_pending_until_they_show_it_scheduled() {
        let (mut facts, d) = context_of_a_pending_pod();
        let runner = ObjectRef::new("Pod", Some("ci"), "runner-7qk2m");
        facts.events.push(describe_event(
            &runner,
            "FailedScheduling",
            "default-scheduler",
        ));
        facts
            .events
            .push(describe_event(&runner, "Nominated", "karpenter"));
        let s = infer_subject(&facts, &d).unwrap();
        assert_eq!(s.describe(), "Pod ci/runner-7qk2m");
        // Scheduled since (or the kubelet ran it): no longer Pending.
        for (reason, source) in [("Scheduled", "default-scheduler"), ("Pulled", "kubelet")] {
            let mut placed = facts.clone();
            placed.events.push(describe_event(&runner, reason, source));
            assert_eq!(
                infer_subject(&placed, &d).unwrap().kind,
                "NodePool",
                "{reason}"
            );
        }
        // The same events from `kubectl get events` (maybe filtered) prove nothing.
        let mut listed = facts.clone();
        listed
            .events
            .iter_mut()
            .for_each(|e| e.from_describe = false);
        assert_eq!(infer_subject(&listed, &d).unwrap().kind, "NodePool");
    }

    /// `kubectl get events` listing a pod's events and those of the NodeClaim made for it:
    /// the pod is the question, the NodeClaim the answer; a node's events are about the node.
    #[test]
    fn a_listed_pod_beats_a_listed_nodeclaim_of_equal_weight() {
        let listed = |kind: &str, ns: Option<&str>, name: &str| crate::facts::Event {
            object: Some(ObjectRef::new(kind, ns, name)),
            ..Default::default()
        };
        let mut facts = Facts::default();
        facts
            .events
            .push(listed("Pod", Some("checkout"), "cart-6f7d8"));
        facts
            .events
            .push(listed("NodeClaim", None, "default-7pk4d"));
        let s = infer_subject(&facts, &[]).unwrap();
        assert_eq!(s.describe(), "Pod checkout/cart-6f7d8");
        // The NodeClaim pasted as an object is what was asked about.
        let mut claim = crate::facts::NodeClaim::default();
        claim.meta.name = "default-7pk4d".into();
        facts.nodeclaims.push(claim);
        assert_eq!(infer_subject(&facts, &[]).unwrap().kind, "NodeClaim");
        facts.nodeclaims.clear();
        facts.events[1] = listed("Node", None, "ip-10-0-4-9.ec2.internal");
        assert_eq!(infer_subject(&facts, &[]).unwrap().kind, "Node");
    }

    #[test]
    fn a_nodepool_alone_is_the_subject() {
        let mut facts = Facts::default();
        let mut np = NodePool::default();
        np.meta.name = "default".into();
        facts.nodepools.push(np);
        let s = infer_subject(&facts, &[]).unwrap();
        assert_eq!((s.kind.as_str(), s.name.as_str()), ("NodePool", "default"));
    }

    #[test]
    fn groups_merge_pods_with_the_same_cause_only() {
        let mk = |name: &str, np: &str, zone: &str| {
            diagnosis_on(
                "Pod",
                Some("shop"),
                name,
                &format!("Pod shop/{name} cannot get a node from NodePool \"{np}\": zone {zone}"),
            )
            .with_node_pool(Some(np))
            .with_evidence([Evidence::new("log", 1, format!("line {name}"))])
        };
        let d = vec![
            mk("web-0", "default", "a"),
            mk("web-1", "default", "a"),
            mk("web-2", "default", "b"),
            mk("web-3", "other", "a"),
            mk("web-1", "default", "a"),
        ];
        let groups = group_by_cause(&d);
        assert_eq!(groups.len(), 3);
        assert_eq!(groups[0].count, 2);
        assert_eq!(groups[0].diagnoses, [0, 1, 4]);
        assert_eq!(groups[0].occurrences, 3);
        assert_eq!(groups[0].pods[1].name, "web-1");
        assert_eq!(groups[1].pods[0].name, "web-2");
        assert_eq!(groups[2].node_pool.as_deref(), Some("other"));
    }

    #[test]
    fn report_groups_only_for_several_pods() {
        let mut facts = Facts::default();
        facts.pods.push(pod("shop", "web-0", "Pending"));
        let d = vec![diagnosis_on("Pod", Some("shop"), "web-0", "Pod shop/web-0")];
        assert!(Report::build(&facts, d.clone()).groups.is_empty());
        facts.pods.push(pod("shop", "web-1", "Pending"));
        let report = Report::build(&facts, d);
        assert_eq!(report.groups.len(), 1);
        assert!(report.has_errors());
        assert_eq!(report.counts()[0], (Severity::Error, 1));
    }

    #[test]
    fn diagnoses_are_sorted_by_severity_then_confidence() {
        let mk = |summary: &str, severity: Severity, confidence: Confidence| {
            Diagnosis::new(&META, summary)
                .with_severity(severity)
                .with_confidence(confidence)
        };
        let report = Report::build(
            &Facts::default(),
            vec![
                mk("info", Severity::Info, Confidence::High),
                mk("error-low", Severity::Error, Confidence::Low),
                mk("warning", Severity::Warning, Confidence::High),
                mk("error-high", Severity::Error, Confidence::High),
            ],
        );
        let order: Vec<&str> = report
            .diagnoses
            .iter()
            .map(|d| d.summary.as_str())
            .collect();
        assert_eq!(order, ["error-high", "error-low", "warning", "info"]);
    }

    #[test]
    fn json_has_the_schema_fields() {
        let mut facts = Facts::default();
        facts.pods.push(pod("shop", "web-0", "Pending"));
        let d = diagnosis_on("Pod", Some("shop"), "web-0", "s").with_confidence(Confidence::Low);
        let v: serde_json::Value =
            serde_json::from_str(&Report::build(&facts, vec![d]).to_json()).unwrap();
        assert_eq!(v["schemaVersion"], 1);
        assert_eq!(v["tool"]["name"], "karpenter-why");
        assert_eq!(v["subject"]["kind"], "Pod");
        assert_eq!(v["diagnoses"][0]["id"], "KW999");
        assert_eq!(v["diagnoses"][0]["confidence"], "low");
        assert_eq!(v["checklist"].as_array().unwrap().len(), 8);
        assert!(v["missing"].is_array());
        assert!(v["inputErrors"].is_array());
        assert!(v.get("groups").is_none());
    }
}
