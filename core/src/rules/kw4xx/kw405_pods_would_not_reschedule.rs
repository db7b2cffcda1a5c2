//! KW405 pods-would-not-reschedule.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::{parse_clause, Cause};
use crate::rules::kw4xx::disruption::{grouped_hits, subject_of, subjects_label};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW405",
    slug: "pods-would-not-reschedule",
    title: "A pod on the node would not schedule anywhere else",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
Before removing or replacing a node, Karpenter simulates rescheduling its pods. For at least one
pod the simulation failed, so the node stays (consolidation: `Unconsolidatable`; drift or
expiry: `DisruptionBlocked`).

Signal: `Not all pods would schedule, <ns>/<pod> => <error>[ and <n> other(s)]`, where
`<error>` is a scheduling error (the KW2xx texts) or `would schedule against uninitialized
nodeclaim/<name>`.

## Why it happens
Usually a constraint only this node satisfies: a required pod anti-affinity or topology spread
(the other domains are full), a volume bound to this node's zone, a node selector or toleration
no NodePool offers any more, or a replacement that is still initializing.

## How to fix
Relax the constraint the error names: `preferredDuringScheduling...` instead of required
anti-affinity, `whenUnsatisfiable: ScheduleAnyway` or a larger `maxSkew`, NodePool requirements
that include the pod's zone or labels. For `would schedule against uninitialized nodeclaim`,
wait for that node to initialize (KW404/KW306 if it never does).
"#,
};

const SIGNALS: &[&str] = &["not all pods would schedule"];

struct Blocked<'a> {
    pod: Option<String>,
    error: String,
    others: Option<String>,
    subjects: Vec<ObjectRef>,
    messages: Vec<&'a Message>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    grouped_hits(facts, |t| {
        let at = find_ignore_ascii_case(t, "not all pods would schedule")?;
        let rest = t[at + "not all pods would schedule".len()..].trim_start_matches([',', ' ']);
        let (pod, error) = match rest.split_once(" => ") {
            Some((pod, error)) => (Some(pod.trim().to_string()), error.trim().to_string()),
            None => (None, rest.trim().to_string()),
        };
        let (error, others) = split_others(&error);
        Some((pod, error, others))
    })
    .into_iter()
    .map(|((pod, error, others), hits)| {
        diagnose(&Blocked {
            pod,
            error,
            others,
            subjects: hits.subjects,
            messages: hits.messages,
        })
    })
    .collect()
}

/// `<error> and 3 other(s)` as (error, `3 other(s)`).
fn split_others(error: &str) -> (String, Option<String>) {
    if let Some(i) = error.rfind(" and ") {
        let tail = &error[i + 5..];
        if tail.ends_with("other(s)") || tail.ends_with("others") {
            return (error[..i].trim().to_string(), Some(tail.to_string()));
        }
    }
    (error.to_string(), None)
}

/// What the inner error means and what to relax, plus the KW2xx rule that explains it.
fn explain(error: &str) -> (String, &'static str, Option<&'static str>) {
    if contains_ignore_ascii_case(error, "would schedule against uninitialized nodeclaim") {
        return (
            "it would land on a NodeClaim that is not initialized yet, and Karpenter waits for that node first".to_string(),
            "Wait for the new node to initialize; if it never does, see KW404 and KW306.",
            Some("KW306"),
        );
    }
    let clause = parse_clause(error);
    match &clause.cause {
        Cause::Topology { constraint, key, .. } => (
            format!("its {constraint} constraint on {key} is satisfied only where it runs now"),
            if constraint == "topology spread" {
                "Relax the spread: a larger maxSkew, or whenUnsatisfiable: ScheduleAnyway, or more domains the NodePool may use."
            } else {
                "Use preferredDuringSchedulingIgnoredDuringExecution instead of required (anti-)affinity, or fewer replicas than domains."
            },
            Some("KW206"),
        ),
        Cause::RequirementConflict { key, .. } | Cause::VolumeConflict { key: Some(key), .. } => (
            format!("it requires a {key} value no other capacity offers (a node selector, an affinity, or a volume bound to one zone)"),
            "Let a NodePool offer that value (add the zone or label to its requirements), or relax the pod's selector.",
            Some("KW203"),
        ),
        Cause::UnknownLabel { label, .. } => (
            format!("it requires the label {label}, which no NodePool sets"),
            "Add the label to a NodePool's template labels or requirements, or drop it from the pod.",
            Some("KW203"),
        ),
        Cause::Taint(taint) => (
            format!("it does not tolerate the taint {taint} of the other capacity"),
            "Add the toleration to the pod, or offer untainted capacity.",
            Some("KW204"),
        ),
        Cause::InstanceTypes(_) | Cause::Limits | Cause::NodeLimits => (
            "no instance type the NodePools allow (within their limits) could hold it".to_string(),
            "Allow larger instance types or raise the NodePool's limits, or lower the pod's requests.",
            Some("KW201"),
        ),
        Cause::HostPort => (
            "its hostPort is taken on the other nodes".to_string(),
            "Drop the hostPort, or spread such pods one per node.",
            Some("KW217"),
        ),
        _ => (
            "the scheduling simulation found no other place for it".to_string(),
            "Relax the constraint the error names (selectors, affinity, spread, tolerations, requests).",
            None,
        ),
    }
}

fn diagnose(g: &Blocked<'_>) -> Diagnosis {
    let pod = g.pod.as_deref().unwrap_or("a pod");
    let (why, fix, related) = explain(&g.error);
    let others = g
        .others
        .as_deref()
        .map(|o| format!(" ({o} as well)"))
        .unwrap_or_default();
    let summary = format!(
        "Karpenter keeps {}: pod {pod}{others} would not schedule anywhere else, because {why}. Inner error: {}",
        subjects_label(&g.subjects),
        g.error
    );
    let mut steps = vec![Remediation::text(fix)];
    if let Some((ns, name)) = g.pod.as_deref().and_then(|p| p.split_once('/')) {
        steps.push(Remediation::command(
            "Read the pod's scheduling constraints:",
            format!(
                "kubectl get pod {name} -n {ns} -o jsonpath='{{.spec.affinity}}{{\"\\n\"}}{{.spec.topologySpreadConstraints}}{{\"\\n\"}}{{.spec.nodeSelector}}{{\"\\n\"}}'"
            ),
        ));
    }
    let mut d = Diagnosis::new(&META, summary)
        .with_object(g.subjects.first())
        .with_messages_per_object(g.messages.iter().copied(), &subject_of)
        .with_remediation(steps);
    if let Some(r) = related {
        d = d.with_related(&[r]);
    }
    d
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    fn summary(text: &str) -> (String, Vec<&'static str>) {
        let report = check_only("KW405", text);
        assert_eq!(ids(&report), ["KW405"], "{text}");
        let d = &report.diagnoses[0];
        (d.summary.clone(), d.related.clone())
    }

    #[test]
    fn names_pod_and_inner_reason() {
        let (s, related) = summary(
            "Normal  Unconsolidatable  5m  karpenter  Not all pods would schedule, kafka/zookeeper-1 => unsatisfiable topology constraint for pod anti-affinity, key=kubernetes.io/hostname (counts = ip-10-0-1-10.ec2.internal: 1, podDomains = kubernetes.io/hostname Exists, nodeDomains = kubernetes.io/hostname In [ip-10-0-1-10.ec2.internal]",
        );
        assert!(s.contains("pod kafka/zookeeper-1"), "{s}");
        assert!(
            s.contains("pod anti-affinity constraint on kubernetes.io/hostname"),
            "{s}"
        );
        assert_eq!(related, ["KW206"]);
        let (s, related) = summary(
            "default 1m Normal DisruptionBlocked nodeclaim/default-p4m8z Not all pods would schedule, default/redis-0 => incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-east-1a] not in topology.kubernetes.io/zone In [us-east-1b us-east-1c]",
        );
        assert!(s.contains("NodeClaim default-p4m8z"), "{s}");
        assert!(
            s.contains("requires a topology.kubernetes.io/zone value"),
            "{s}"
        );
        assert_eq!(related, ["KW203"]);
        let (s, related) = summary(
            "Not all pods would schedule, shop/web-7 => would schedule against uninitialized nodeclaim/default-abcde, node/ip-10-0-1-2 and 2 other(s)",
        );
        assert!(s.contains("not initialized yet"), "{s}");
        assert!(s.contains("(2 other(s) as well)"), "{s}");
        assert_eq!(related, ["KW306"]);
        let (s, _) = summary(
            "Cannot disrupt Node: not all pods would schedule, a/b => did not tolerate dedicated=gpu:NoSchedule",
        );
        assert!(s.contains("taint dedicated=gpu:NoSchedule"), "{s}");
    }

    #[test]
    fn near_miss() {
        assert!(ids(&check_only(
            "KW405",
            "Failed to schedule pod, incompatible requirements"
        ))
        .is_empty());
    }
}
