//! KW402 do-not-disrupt-pod.

use crate::document::Evidence;
use std::collections::BTreeMap;

use crate::facts::{Facts, Message, ObjectRef, Pod, Workload};
use crate::ingest::objects::number::is_f64;
use crate::rules::kw4xx::disruption::{
    annotated_by_command, era_before_v1, grouped_hits, lifted_after, push_unique, serrors_values,
    split_qualified, subject_of, subjects_label, KubectlOutputs,
};
use crate::rules::text::{contains_any, quoted_after, token_after};
use crate::rules::version::{at_least, version_label};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW402",
    slug: "do-not-disrupt-pod",
    title: "A pod's karpenter.sh/do-not-disrupt annotation keeps its node",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
A pod on the node carries `karpenter.sh/do-not-disrupt`, so Karpenter will not voluntarily
disrupt the node (consolidation, drift; expiry waits for the NodePool's
`terminationGracePeriod`).

Signals: the `DisruptionBlocked` texts `pod "<ns>/<pod>" has "karpenter.sh/do-not-disrupt"
annotation` (v1.0 to v1.1, after `Cannot disrupt Node: `), `Pod "<ns>/<pod>" has
"karpenter.sh/do-not-disrupt" annotation` (v1.2 to v1.4, and before v1.0 after `Cannot disrupt
Node: `), `Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=<ns>/<pod>)` (v1.5+); the
pre-v0.32 `pod <pod> has do-not-evict annotation` (annotation `karpenter.sh/do-not-evict`); and
a pod on a node whose annotation is `"true"` or a duration; a Deployment, StatefulSet or
DaemonSet whose pod template sets it (every pod it creates holds its node). An invalid value
(`InvalidDoNotDisruptAnnotation`) is ignored by Karpenter and blocks nothing.

When the input later shows the pod deleted (`kubectl delete pod`, `pod "<pod>" deleted`) or the
annotation taken off it (`kubectl annotate pod <pod> karpenter.sh/do-not-disrupt-`), the block is
past: said so, severity info.

## Why it happens
The annotation is set on purpose for pods that must run to completion (batch jobs, builds,
stateful leaders), often through the workload's pod template, and then forgotten: every new pod
carries it again, and the node stays however empty it becomes.

## How to fix
Remove it from the running pod (`kubectl annotate pod <pod> -n <ns>
karpenter.sh/do-not-disrupt-`) and from the workload's pod template. Where the Karpenter
version supports it (v1.12 and later), give it a duration instead of `"true"` (`"4h"`): the pod
is protected for that long after it starts.
"#,
};

const SIGNALS: &[&str] = &[
    "karpenter.sh/do-not-disrupt",
    "do-not-evict annotation",
    "do not evict annotation",
    "karpenter.sh/do-not-evict",
];

const ANNOTATION: &str = "karpenter.sh/do-not-disrupt";
const LEGACY_ANNOTATION: &str = "karpenter.sh/do-not-evict";

/// A pod-level do-not-disrupt text: the annotation named with `has`.
fn is_signal(text: &str) -> bool {
    contains_any(
        text,
        &[
            "has \"karpenter.sh/do-not-disrupt\" annotation",
            "has do-not-evict annotation",
            "has do not evict annotation",
            "has \"karpenter.sh/do-not-evict\" annotation",
        ],
    )
}

/// Which annotation a signal text means. Before v0.32 `do not evict` named
/// karpenter.sh/do-not-evict; v0.32 (the first `Cannot disrupt` events) kept that wording for
/// both annotations, so there it may be either.
fn annotation_of(text: &str) -> Which {
    if !contains_any(text, &["do-not-evict", "do not evict"]) {
        Which::DoNotDisrupt
    } else if contains_any(text, &["cannot disrupt"]) && !contains_any(text, &[LEGACY_ANNOTATION]) {
        Which::Either
    } else {
        Which::DoNotEvict
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Which {
    DoNotDisrupt,
    DoNotEvict,
    Either,
}

impl Which {
    fn label(self) -> &'static str {
        match self {
            Which::DoNotDisrupt => "the karpenter.sh/do-not-disrupt annotation",
            Which::DoNotEvict => "the karpenter.sh/do-not-evict annotation",
            Which::Either => {
                "the karpenter.sh/do-not-disrupt (or the older karpenter.sh/do-not-evict) annotation"
            }
        }
    }

    /// The annotation a pod template sets (`Either` only comes from an event text).
    fn annotation(self) -> &'static str {
        match self {
            Which::DoNotEvict => LEGACY_ANNOTATION,
            _ => ANNOTATION,
        }
    }

    /// The `kubectl annotate` removals.
    fn removals(self) -> String {
        match self {
            Which::DoNotDisrupt => format!("{ANNOTATION}-"),
            Which::DoNotEvict => format!("{LEGACY_ANNOTATION}-"),
            Which::Either => format!("{ANNOTATION}- {LEGACY_ANNOTATION}-"),
        }
    }
}

/// The pod a signal names.
fn pod_named(text: &str) -> Option<String> {
    serrors_values(text, "Pod")
        .and_then(|v| v.into_iter().next())
        .or_else(|| quoted_after(text, "pod "))
        .or_else(|| {
            // Pre-v0.32 `Unable to drain node, pod <pod> has do-not-evict annotation`.
            token_after(text, "pod ").filter(|w| w != "has" && w != "\"")
        })
}

struct Group<'a> {
    pod: Option<String>,
    which: Which,
    subjects: Vec<ObjectRef>,
    messages: Vec<&'a Message>,
    from_object: bool,
    /// The `kubectl annotate pod ... =true` line that put the annotation on, when only a
    /// command shows it.
    from_command: Option<Evidence>,
    /// The input's workload whose pod template sets the annotation (the pod's owner, or on
    /// its own when no pod of it is in the input).
    workload: Option<&'a Workload>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let kubectl_outputs = KubectlOutputs::new(facts);
    let mut groups: Vec<Group<'_>> = grouped_hits(facts, |t| {
        is_signal(t).then(|| (pod_named(t), annotation_of(t)))
    })
    .into_iter()
    .map(|((pod, which), hits)| Group {
        pod,
        which,
        subjects: hits.subjects,
        messages: hits.messages,
        from_object: false,
        from_command: None,
        workload: None,
    })
    .collect();
    // The pre-v0.32 text names the pod without its namespace: a pod of that name the input
    // shows elsewhere (one only) lends it.
    for g in &mut groups {
        if let Some(name) = g.pod.clone().filter(|p| !p.contains('/')) {
            let mut same = facts.pods.iter().filter(|p| p.meta.name == name);
            if let (Some(p), None) = (same.next(), same.next()) {
                if p.meta.namespace.is_some() {
                    g.pod = Some(p.object_ref().qualified_name());
                }
            }
        }
    }
    groups.retain(|g| !g.pod.as_deref().is_some_and(|name| released(facts, name)));
    for pod in &facts.pods {
        let Some(node) = &pod.node_name else {
            continue;
        };
        // A pod listed in a table (or a describe cut before its annotations) shows no
        // annotations: a `kubectl annotate pod <pod> karpenter.sh/do-not-disrupt=true` in the
        // input, not taken off later, does.
        let command = (!pod.meta.annotations_known())
            .then(|| annotated_by_command(facts, "Pod", ANNOTATION))
            .into_iter()
            .flatten()
            .find(|(name, at, ns)| {
                *name == pod.meta.name
                    && (ns.is_none() || *ns == pod.meta.namespace)
                    && lifted_after(
                        &kubectl_outputs,
                        "Pod",
                        pod.meta.namespace.as_deref(),
                        name,
                        Some(ANNOTATION),
                        at,
                    )
                    .is_none()
            })
            .map(|(_, at, _)| at);
        let Some(which) =
            blocking_annotation(pod).or(command.as_ref().map(|_| Which::DoNotDisrupt))
        else {
            continue;
        };
        if finished(pod) {
            continue;
        }
        let name = pod.object_ref().qualified_name();
        let held = ObjectRef::new("Node", None, node);
        // A signal that names no pod (`Pod has "karpenter.sh/do-not-disrupt" annotation` cut
        // before its `(Pod=...)`) about this node: this pod is the one it means.
        let unnamed = || {
            groups
                .iter()
                .position(|g| g.pod.is_none() && g.subjects.contains(&held))
        };
        if let Some(i) =
            unnamed().filter(|_| !groups.iter().any(|g| g.pod.as_deref() == Some(&name)))
        {
            groups[i].pod = Some(name);
            continue;
        }
        match groups.iter_mut().find(|g| g.pod.as_deref() == Some(&name)) {
            Some(g) => push_unique(&mut g.subjects, held),
            None => groups.push(Group {
                pod: Some(name),
                which,
                subjects: vec![held],
                messages: Vec::new(),
                from_object: true,
                from_command: command,
                workload: None,
            }),
        }
    }
    // A pod template that sets the annotation: every pod the workload creates holds its node.
    for w in facts
        .workloads
        .iter()
        // A Job's template is immutable and a CronJob's sits elsewhere: the controllers whose
        // template a patch can change, with pods to run.
        .filter(|w| matches!(w.kind.as_str(), "Deployment" | "StatefulSet" | "DaemonSet"))
        .filter(|w| w.replicas != Some(0) && blocking_in(&w.template_annotations).is_some())
    {
        let owned = |g: &Group<'_>| {
            g.pod
                .as_deref()
                .is_some_and(|q| owns(w, split_qualified(q).0, split_qualified(q).1))
        };
        if groups.iter().any(owned) {
            for g in groups.iter_mut().filter(|g| owned(g)) {
                g.workload = Some(w);
            }
        } else {
            groups.push(Group {
                pod: None,
                which: blocking_in(&w.template_annotations).unwrap_or(Which::DoNotDisrupt),
                subjects: Vec::new(),
                messages: Vec::new(),
                from_object: true,
                from_command: None,
                workload: Some(w),
            });
        }
    }
    groups
        .iter()
        .map(|g| diagnose(facts, &kubectl_outputs, g))
        .collect()
}

/// Whether the workload created the pod: same namespace and the controller's name prefix
/// (`<deployment>-<hash>-<id>`, `<statefulset>-<n>`, `<job>-<id>`).
fn owns(w: &Workload, ns: Option<&str>, pod: &str) -> bool {
    (ns.is_none() || w.meta.namespace.as_deref() == ns)
        && pod.starts_with(&format!("{}-", w.meta.name))
}

/// Karpenter does not count a pod that has finished (`Succeeded`, `Failed`): a Job's pod
/// done with its work holds no node, whatever its annotations.
fn finished(pod: &Pod) -> bool {
    matches!(pod.phase.as_deref(), Some("Succeeded" | "Failed"))
}

/// Whether the input shows the pod an event names no longer holding its node: its object
/// (annotations shown) without the annotation now, or finished.
fn released(facts: &Facts, name: &str) -> bool {
    facts
        .pods
        .iter()
        .find(|p| p.object_ref().qualified_name() == name)
        .is_some_and(|p| {
            !p.meta.from_table
                && (finished(p) || (p.meta.annotations_known() && blocking_annotation(p).is_none()))
        })
}

/// The annotation that makes Karpenter keep the pod's node: karpenter.sh/do-not-disrupt
/// `"true"` or a Go duration (Karpenter versions without duration support ignore other
/// values, as do later ones for anything unparsable), or the pre-v1 karpenter.sh/do-not-evict
/// `"true"`.
fn blocking_annotation(pod: &Pod) -> Option<Which> {
    blocking_in(&pod.meta.annotations)
}

/// [`blocking_annotation`] of a pod's or a pod template's annotations.
fn blocking_in(a: &BTreeMap<String, String>) -> Option<Which> {
    if a.get(ANNOTATION)
        .is_some_and(|v| v == "true" || is_go_duration(v))
    {
        Some(Which::DoNotDisrupt)
    } else if a.get(LEGACY_ANNOTATION).is_some_and(|v| v == "true") {
        Some(Which::DoNotEvict)
    } else {
        None
    }
}

/// `5m`, `2h30m`, `1.5h`, `90s`: Go's `time.ParseDuration` grammar (a sign and `0` aside).
fn is_go_duration(value: &str) -> bool {
    let mut rest = value.trim();
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_len == 0 || !is_f64(&rest[..number_len]) {
            return false;
        }
        rest = &rest[number_len..];
        let unit = ["ns", "us", "µs", "ms", "s", "m", "h"]
            .into_iter()
            .filter(|u| rest.starts_with(u))
            .max_by_key(|u| u.len());
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

/// The nodes a pod holds, for a sentence: an event filed on the pod itself (`kubectl describe
/// pod`) makes the pod a subject, but it is not what Karpenter cannot disrupt.
fn held_label(subjects: &[ObjectRef]) -> String {
    let held: Vec<ObjectRef> = subjects
        .iter()
        .filter(|s| s.kind != "Pod")
        .cloned()
        .collect();
    subjects_label(&held)
}

fn diagnose(facts: &Facts, kubectl_outputs: &KubectlOutputs<'_>, g: &Group<'_>) -> Diagnosis {
    let workload = g
        .workload
        .map(|w| format!("{} {}", w.kind, w.object_ref().qualified_name()));
    let pod_label = match (&g.pod, &workload) {
        (Some(p), _) => format!("Pod {p}"),
        (None, Some(w)) => format!("Every pod of {w}"),
        (None, None) => "A pod".to_string(),
    };
    let mut summary = if g.pod.is_none() && g.subjects.is_empty() && workload.is_some() {
        format!(
            "{pod_label} carries {} (its pod template sets it), so Karpenter will not voluntarily disrupt the nodes they run on while they run.",
            g.which.label()
        )
    } else {
        format!(
            "{pod_label} carries {}, so Karpenter will not voluntarily disrupt {}.",
            g.which.label(),
            held_label(&g.subjects)
        )
    };
    let value = g.pod.as_deref().and_then(|q| {
        let (ns, name) = split_qualified(q);
        facts
            .pods
            .iter()
            .find(|p| p.meta.name == name && p.meta.namespace.as_deref() == ns)
            .and_then(|p| {
                p.meta
                    .annotations
                    .get(ANNOTATION)
                    .or_else(|| p.meta.annotations.get(LEGACY_ANNOTATION))
                    .cloned()
            })
    });
    if let Some(v) = &value {
        summary.push_str(&format!(" Its value is \"{v}\"."));
    }
    if g.from_command.is_some() {
        summary.push_str(
            " (Inferred from the `kubectl annotate` command in the input; no event in the input names it.)",
        );
    } else if g.from_object && g.pod.is_none() {
        summary
            .push_str(" (Inferred from the pod template; no event or pod in the input shows it.)");
    } else if g.from_object {
        summary.push_str(" (Inferred from the pod's annotation; no event in the input names it.)");
    }
    // The pod deleted, or the annotation taken off it, later in the input: the block is past.
    let lifted = g.pod.as_deref().and_then(|q| {
        let (ns, name) = split_qualified(q);
        let last = g
            .messages
            .iter()
            .map(|m| &m.evidence)
            .max_by_key(|e| e.line)?;
        [ANNOTATION, LEGACY_ANNOTATION]
            .iter()
            .find_map(|a| lifted_after(kubectl_outputs, "Pod", ns, name, Some(a), last))
    });
    if let Some(e) = &lifted {
        let how = if e.text.contains(" annotate") || e.text.trim_end().ends_with("annotated") {
            "the annotation taken off it"
        } else {
            "the pod deleted"
        };
        summary = format!(
            "{pod_label} carried {}, which kept Karpenter from disrupting {}. The input then shows {how}: that block is past, and Karpenter can disrupt the node at its next pass.",
            g.which.label(),
            held_label(&g.subjects)
        );
    }
    let (ns, name) = match g.pod.as_deref() {
        Some(q) => match split_qualified(q) {
            (Some(ns), name) => (ns.to_string(), name.to_string()),
            (None, name) => ("<namespace>".to_string(), name.to_string()),
        },
        None => ("<namespace>".to_string(), "<pod>".to_string()),
    };
    let mut steps = vec![
        Remediation::command(
            "Remove the annotation from the running pod once it may move:",
            format!("kubectl annotate pod {name} -n {ns} {}", g.which.removals()),
        ),
        Remediation::command(
            "If the workload's pod template sets it, remove it there too, or every new pod blocks again. Find the owner:",
            format!(
                "kubectl get pod {name} -n {ns} -o jsonpath='{{.metadata.ownerReferences[*].kind}}/{{.metadata.ownerReferences[*].name}}{{\"\\n\"}}'"
            ),
        ),
    ];
    if let Some(w) = g.workload {
        let wns = w.meta.namespace.as_deref().unwrap_or("<namespace>");
        let template = Remediation::command(
            format!(
                "Remove it from the pod template of {} {}, or every new pod blocks again (this rolls the pods):",
                w.kind,
                w.object_ref().qualified_name()
            ),
            format!(
                r#"kubectl patch {} {} -n {wns} --type json -p '[{{"op":"remove","path":"/spec/template/metadata/annotations/{}"}}]'"#,
                w.kind.to_ascii_lowercase(),
                w.meta.name,
                g.which.annotation().replace('/', "~1")
            ),
        );
        if g.pod.is_some() {
            steps[1] = template;
        } else {
            steps = vec![template];
        }
    }
    if g.which != Which::DoNotDisrupt {
        steps.push(Remediation::text(
            "karpenter.sh/do-not-evict is the pre-v0.32 name; v0.32 replaced it with karpenter.sh/do-not-disrupt and v1.0 removed it.",
        ));
    }
    if g.which != Which::DoNotEvict {
        let duration = match at_least(facts, 1, 12) {
            Some(true) => format!(
                "Karpenter {} accepts a duration instead of \"true\": the pod is protected for that long after it starts.",
                version_label(facts).unwrap_or_default()
            ),
            Some(false) => format!(
                "Karpenter {} only honours \"true\"; a duration value needs v1.12 or later (earlier versions ignore it).",
                version_label(facts).unwrap_or_default()
            ),
            // No version, but the wording dates the input before v1.0: say it for this input.
            None if era_before_v1(facts) == Some(true) => "This input is from a Karpenter before v1.0, which honours only \"true\"; a duration value needs v1.12 or later (earlier versions ignore it).".to_string(),
            None => "From Karpenter v1.12 the value may be a duration instead of \"true\" (protected for that long after the pod starts); earlier versions honour only \"true\".".to_string(),
        };
        steps.push(Remediation::yaml(
            duration,
            format!("metadata:\n  annotations:\n    {ANNOTATION}: \"4h\"\n"),
        ));
    }
    if lifted.is_some() {
        steps = vec![Remediation::text(
            "Nothing to undo for this pod. If its workload's pod template sets the annotation, the pods it creates block again: remove it there.",
        )];
    }
    // No node known: the report is about the pod the message names.
    let pod = g.pod.as_deref().map(|p| {
        let (ns, name) = split_qualified(p);
        ObjectRef::new("Pod", ns, name)
    });
    let d = Diagnosis::new(&META, summary)
        .with_object(g.subjects.first().or(pod.as_ref()))
        .with_confidence(if g.from_object {
            Confidence::Medium
        } else {
            Confidence::High
        })
        .with_messages_per_object(g.messages.iter().copied(), &subject_of)
        .with_evidence(
            g.pod
                .as_deref()
                .and_then(|q| {
                    let (ns, name) = split_qualified(q);
                    facts
                        .pods
                        .iter()
                        .find(|p| p.meta.name == name && p.meta.namespace.as_deref() == ns)
                })
                .filter(|_| g.from_object)
                .and_then(|p| p.meta.evidence.clone()),
        )
        .with_evidence(g.workload.and_then(|w| w.meta.evidence.clone()))
        .with_evidence(g.from_command.clone())
        .with_evidence(lifted.clone())
        .with_remediation(steps);
    if lifted.is_some() {
        d.with_severity(Severity::Info)
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::Meta;
    use crate::testing::{check_only, ids};

    #[test]
    fn a_finished_or_unannotated_pod_holds_no_node() {
        let pod = |annotations: &str, phase: &str| {
            format!(
                "apiVersion: v1
kind: Pod
metadata:
  name: etl-28999
  namespace: batch
  annotations: {annotations}
spec:
  nodeName: ip-10-0-7-7.ec2.internal
  containers: [{{name: c, image: 111122223333.dkr.ecr.us-east-1.amazonaws.com/etl:1}}]
status:
  phase: {phase}
---
LAST SEEN   TYPE     REASON              OBJECT                          MESSAGE
40m         Normal   DisruptionBlocked   node/ip-10-0-7-7.ec2.internal   Pod has \"karpenter.sh/do-not-disrupt\" annotation (Pod=batch/etl-28999)
"
            )
        };
        let dnd = "{karpenter.sh/do-not-disrupt: \"true\"}";
        assert_eq!(ids(&check_only("KW402", &pod(dnd, "Running"))), ["KW402"]);
        assert_eq!(
            ids(&check_only("KW402", &pod(dnd, "Succeeded"))),
            [] as [&str; 0]
        );
        assert_eq!(
            ids(&check_only("KW402", &pod("{}", "Running"))),
            [] as [&str; 0]
        );
    }

    #[test]
    fn every_grammar_names_the_pod() {
        for text in [
            r#"{"involvedObject":{"kind":"Node","name":"ip-1"},"reason":"DisruptionBlocked","eventMessage":"Cannot disrupt Node: Pod \"default/batch-job-2ekrbha7\" has \"karpenter.sh/do-not-disrupt\" annotation"}"#,
            r#"Cannot disrupt NodeClaim: pod "default/batch-job-2ekrbha7" has "karpenter.sh/do-not-disrupt" annotation"#,
            r#"Normal  DisruptionBlocked  3m  karpenter  Pod "default/batch-job-2ekrbha7" has "karpenter.sh/do-not-disrupt" annotation"#,
            r#"Normal  DisruptionBlocked  3m  karpenter  Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/batch-job-2ekrbha7)"#,
        ] {
            let report = check_only("KW402", text);
            assert_eq!(ids(&report), ["KW402"], "{text}");
            let d = &report.diagnoses[0];
            assert!(
                d.summary.contains("Pod default/batch-job-2ekrbha7"),
                "{}",
                d.summary
            );
            assert_eq!(
                d.remediation[0].command.as_deref(),
                Some("kubectl annotate pod batch-job-2ekrbha7 -n default karpenter.sh/do-not-disrupt-")
            );
        }
    }

    #[test]
    fn an_event_filed_on_the_pod_does_not_make_the_pod_the_held_object() {
        let text = "$ kubectl describe pod web-0 -n shop\nEvents:\n  Type    Reason             Age   From       Message\n  ----    ------             ----  ----       -------\n  Normal  DisruptionBlocked  3m    karpenter  Cannot disrupt Node: pod shop/web-0 has \"karpenter.sh/do-not-disrupt\" annotation\n";
        let report = check_only("KW402", text);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("will not voluntarily disrupt the node"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("disrupt Pod"), "{}", d.summary);
    }

    #[test]
    fn a_pod_named_without_namespace_takes_it_from_the_pod_list() {
        let text = "$ kubectl get pods -A\nNAMESPACE   NAME           READY   STATUS    RESTARTS   AGE\nci          runner-7x2kd   1/1     Running   0          3h\n2023-05-02T10:11:12.000Z\tDEBUG\tcontroller.termination\tUnable to drain node, pod runner-7x2kd has do-not-evict annotation\t{\"commit\": \"5a7faa0\"}\n";
        let report = check_only("KW402", text);
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("Pod ci/runner-7x2kd"), "{}", d.summary);
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("kubectl annotate pod runner-7x2kd -n ci karpenter.sh/do-not-evict-")
        );
    }

    #[test]
    fn a_listed_pod_annotated_by_a_command() {
        let table = "$ kubectl get pods -n ci -o wide\nNAME           READY   STATUS    RESTARTS   AGE   IP           NODE                          NOMINATED NODE   READINESS GATES\nrunner-7x2kd   1/1     Running   0          3h    10.0.4.17    ip-10-0-4-9.ec2.internal      <none>           <none>\n";
        let annotate = "$ kubectl annotate --overwrite -n ci pods/runner-7x2kd karpenter.sh/do-not-disrupt=true\n";
        let report = check_only("KW402", &format!("{table}{annotate}"));
        assert_eq!(ids(&report), ["KW402"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("Pod ci/runner-7x2kd carries"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("node ip-10-0-4-9.ec2.internal"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("`kubectl annotate` command"),
            "{}",
            d.summary
        );
        // Taken off again, or set on a pod of another namespace: nothing holds the node.
        let removed = format!("{table}{annotate}$ kubectl annotate pod runner-7x2kd -n ci karpenter.sh/do-not-disrupt- --overwrite\n");
        assert!(ids(&check_only("KW402", &removed)).is_empty());
        let elsewhere = format!("{table}$ kubectl annotate pod runner-7x2kd -n build karpenter.sh/do-not-disrupt=true\n");
        assert!(ids(&check_only("KW402", &elsewhere)).is_empty());
    }

    #[test]
    fn legacy_do_not_evict() {
        let report = check_only(
            "KW402",
            "DEBUG controller.termination Unable to drain node, pod build-7 has do-not-evict annotation",
        );
        assert_eq!(ids(&report), ["KW402"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("karpenter.sh/do-not-evict"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.contains("build-7") && c.ends_with("karpenter.sh/do-not-evict-")));
    }

    #[test]
    fn near_misses() {
        for text in [
            r#"Warning InvalidDoNotDisruptAnnotation pod/batch-job-2ekrbha7 Invalid karpenter.sh/do-not-disrupt annotation: failed to parse "forever" as a duration: time: invalid duration "forever", ignoring annotation"#,
            r#"Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation"#,
            "Deleting the pod to accommodate the terminationTime. This bypasses the PDB of the pod and the do-not-disrupt annotation.",
        ] {
            assert!(ids(&check_only("KW402", text)).is_empty(), "{text}");
        }
    }

    /// The duration advice follows the input's era when its wording dates it: a v0.3x console
    /// log says the value must be "true" there, instead of the generic "from v1.12".
    #[test]
    fn duration_advice_for_a_pre_v1_input() {
        let event = "default 3m Normal DisruptionBlocked node/ip-192-168-17-44.ec2.internal Cannot disrupt Node: pod \"default/batch-0\" has \"karpenter.sh/do-not-disrupt\" annotation";
        let advice = |text: &str| {
            check_only("KW402", text).diagnoses[0]
                .remediation
                .last()
                .map(|r| r.text.clone())
                .unwrap_or_default()
        };
        assert!(advice(event).starts_with("From Karpenter v1.12"));
        let old = format!("2024-02-14T09:55:03.117Z\tINFO\tcontroller.disruption\tdisrupting via consolidation delete, terminating 1 candidates ip-1/m5.xlarge/spot\t{{\"commit\": \"2c8f2a5\"}}\n{event}");
        let text = advice(&old);
        assert!(
            text.starts_with("This input is from a Karpenter before v1.0"),
            "{text}"
        );
    }

    #[test]
    fn durations() {
        for ok in ["5m", "2h30m", "1.5h", "90s", "1h30m45s", "300ms"] {
            assert!(is_go_duration(ok), "{ok}");
        }
        for bad in ["forever", "", "true", "5", "h", "5 m", "1d"] {
            assert!(!is_go_duration(bad), "{bad}");
        }
    }

    fn pod_with(value: &str, node: Option<&str>) -> Pod {
        Pod {
            meta: Meta {
                name: "etl-0".into(),
                namespace: Some("data".into()),
                annotations: [(ANNOTATION.to_string(), value.to_string())].into(),
                ..Default::default()
            },
            node_name: node.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn annotated_pod_on_a_node() {
        let mut facts = Facts::default();
        facts.pods.push(pod_with("true", Some("ip-10-0-1-1")));
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].confidence, Confidence::Medium);
        assert!(d[0].summary.contains("Pod data/etl-0"));
        assert!(d[0].summary.contains("node ip-10-0-1-1"));
        assert!(d[0].summary.contains("Its value is \"true\""));
        facts.karpenter_version = Some("1.6.0".into());
        let d = check(&facts);
        assert!(d[0].remediation[2].text.contains("v1.6.0 only honours"));
        for (value, node) in [
            ("forever", Some("ip-1")),
            ("false", Some("ip-1")),
            ("true", None),
        ] {
            let mut f = Facts::default();
            f.pods.push(pod_with(value, node));
            assert!(check(&f).is_empty(), "{value} {node:?}");
        }
        let mut f = Facts::default();
        f.pods.push(pod_with("30m", Some("ip-1")));
        assert_eq!(check(&f).len(), 1);
    }
}
