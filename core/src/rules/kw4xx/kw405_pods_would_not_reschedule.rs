//! KW405 pods-would-not-reschedule.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef, PersistentVolume};
use crate::rules::kw2xx::scheduling::{parse_clause, Cause};
use crate::rules::kw4xx::disruption::{grouped_hits, subject_of, subjects_label, Endings};
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
    /// Each pod the message names with its own error (Karpenter lists up to five:
    /// `ns/a => <err> ns/b => <err>`). No pod in the pre-v0.32 bare text.
    pods: Vec<(Option<String>, String)>,
    others: Option<String>,
    subjects: Vec<ObjectRef>,
    messages: Vec<&'a Message>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let endings = Endings::new(facts);
    grouped_hits(facts, |t| {
        let at = find_ignore_ascii_case(t, "not all pods would schedule")?;
        let rest = t[at + "not all pods would schedule".len()..].trim_start_matches([',', ' ']);
        let (rest, others) = split_others(rest.trim());
        Some((pod_errors(&rest), others))
    })
    .into_iter()
    .map(|(key, hits)| (key, endings.without_later_removal(hits)))
    .filter(|(_, hits)| !hits.is_empty())
    .map(|((pods, others), hits)| {
        diagnose(
            facts,
            &Blocked {
                pods,
                others,
                subjects: hits.subjects,
                messages: hits.messages,
            },
        )
    })
    .collect()
}

/// `ns/a => err a ns/b => err b` as [(ns/a, err a), (ns/b, err b)]: each error runs until the
/// next pod key (the last word before the next ` => `).
fn pod_errors(rest: &str) -> Vec<(Option<String>, String)> {
    let parts: Vec<&str> = rest.split(" => ").collect();
    if parts.len() < 2 {
        return vec![(None, rest.trim().to_string())];
    }
    let mut out: Vec<(Option<String>, String)> = Vec::new();
    let mut pod = parts[0].trim().to_string();
    for (i, part) in parts.iter().enumerate().skip(1) {
        let part = part.trim();
        let split = (i + 1 < parts.len())
            .then(|| part.rsplit_once(' '))
            .flatten()
            .filter(|(_, key)| is_pod_key(key));
        match split {
            Some((error, next)) => {
                out.push((Some(pod), error.trim().to_string()));
                pod = next.to_string();
            }
            None if i + 1 < parts.len() => {
                // Not a pod key: the error itself holds ` => `.
                pod = format!("{pod} => {part}");
            }
            None => out.push((Some(pod.clone()), part.to_string())),
        }
    }
    out
}

/// `<namespace>/<pod>`.
fn is_pod_key(word: &str) -> bool {
    let Some((ns, name)) = word.split_once('/') else {
        return false;
    };
    !ns.is_empty()
        && !name.is_empty()
        && !name.contains('/')
        && !matches!(ns, "node" | "nodeclaim" | "machine")
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-./".contains(c))
}

/// The PersistentVolumes of pod `<ns>/<name>`: bound to a claim the pod's spec mounts, or to
/// a claim of its namespace named `<template>-<pod>` (a StatefulSet's volumeClaimTemplates).
fn pod_volumes<'a>(facts: &'a Facts, pod: &str) -> Vec<&'a PersistentVolume> {
    let Some((ns, name)) = pod.split_once('/') else {
        return Vec::new();
    };
    let claims = facts
        .pods
        .iter()
        .find(|p| p.meta.name == name && p.meta.namespace.as_deref() == Some(ns))
        .map(|p| p.pvc_names.as_slice())
        .unwrap_or_default();
    let suffix = format!("-{name}");
    facts
        .persistent_volumes
        .iter()
        .filter(|pv| {
            pv.claim.as_ref().is_some_and(|c| {
                c.namespace.as_deref().is_none_or(|n| n == ns)
                    && (claims.contains(&c.name) || c.name.ends_with(&suffix))
            })
        })
        .take(2)
        .collect()
}

/// The NodePools an inner scheduling error names (`incompatible with nodepool "gpu", ...`), in
/// order, once each.
fn nodepools_named(error: &str) -> Vec<String> {
    const KEY: &str = "nodepool \"";
    let mut out: Vec<String> = Vec::new();
    let mut rest = error;
    while let Some(at) = find_ignore_ascii_case(rest, KEY) {
        rest = &rest[at + KEY.len()..];
        let Some(end) = rest.find('"') else { break };
        let name = &rest[..end];
        if !name.is_empty() && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
        rest = &rest[end..];
    }
    out
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
/// The explanation of the most telling clause of an inner error. Karpenter joins the reasons
/// each NodePool refused the pod with `; ` (`incompatible with nodepool "general", ... zone
/// ...; incompatible with nodepool "spot", ... did not tolerate taint ...`): a dedicated pool's
/// taint is usually meant, so a requirement, topology or size clause explains more.
fn explain_clauses(error: &str) -> (String, &'static str, Option<&'static str>) {
    // Lower ranks explain more.
    let rank = |related: Option<&str>| match related {
        Some("KW306") => 0,
        Some("KW206") => 1,
        Some("KW203") => 2,
        Some("KW201") => 3,
        Some("KW217") => 4,
        Some("KW204") => 5,
        _ => 6,
    };
    let clauses: Vec<&str> = error
        .split("; ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    if clauses.len() < 2 {
        return explain(error);
    }
    clauses
        .iter()
        .map(|c| explain(c))
        .min_by_key(|(_, _, related)| rank(*related))
        .unwrap_or_else(|| explain(error))
}

fn explain(error: &str) -> (String, &'static str, Option<&'static str>) {
    if contains_ignore_ascii_case(error, "would schedule against uninitialized nodeclaim")
        || contains_ignore_ascii_case(error, "would schedule against a non-initialized node")
    {
        return (
            "it would land on a new node (NodeClaim) that is not initialized yet, and Karpenter waits for that node first".to_string(),
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
        Cause::RequirementConflict { key, incoming, .. } => (
            format!(
                "it requires a {key} value no other capacity offers{} (a node selector, an affinity, or a volume bound to one zone)",
                if incoming.is_empty() { String::new() } else { format!(": {incoming}") }
            ),
            "Let a NodePool offer that value (add the zone or label to its requirements), or relax the pod's selector.",
            Some("KW203"),
        ),
        Cause::VolumeConflict { key: Some(key), .. } => (
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

fn diagnose(facts: &Facts, g: &Blocked<'_>) -> Diagnosis {
    let (first_pod, first_error) = g
        .pods
        .first()
        .map(|(p, e)| (p.as_deref(), e.as_str()))
        .unwrap_or((None, ""));
    let (why, fix, related) = explain_clauses(first_error);
    let others = g
        .others
        .as_deref()
        .map(|o| format!(" ({o} as well)"))
        .unwrap_or_default();
    let on = subjects_label(&g.subjects);
    let summary = match (g.pods.as_slice(), first_pod) {
        ([_], Some(pod)) => format!(
            "Karpenter keeps {on}: pod {pod}{others} would not schedule anywhere else, because {why}. Inner error: {first_error}"
        ),
        ([_], None) if first_error.is_empty() => format!(
            "Karpenter keeps {on}: not all of its pods would schedule anywhere else (this Karpenter version does not say which; its pods' anti-affinity, topology spread, selectors and volumes are where to look)."
        ),
        ([_], None) => format!(
            "Karpenter keeps {on}: a pod{others} would not schedule anywhere else, because {why}. Inner error: {first_error}"
        ),
        _ => {
            let names: Vec<String> = g
                .pods
                .iter()
                .filter_map(|(p, _)| p.clone())
                .collect();
            let errors: Vec<String> = g
                .pods
                .iter()
                .map(|(p, e)| format!("{} => {e}", p.as_deref().unwrap_or("?")))
                .collect();
            format!(
                "Karpenter keeps {on}: pods {}{others} would not schedule anywhere else; for {}, because {why}. Inner errors: {}",
                crate::rules::kw3xx::common::join_names(&names),
                first_pod.unwrap_or("the first"),
                errors.join("; ")
            )
        }
    };
    let bare = g.pods.iter().all(|(p, e)| p.is_none() && e.is_empty());
    // A zone pin is most often the pod's EBS volume: name it, and its zone when shown.
    let zone_pin = related == Some("KW203") && contains_ignore_ascii_case(first_error, "zone");
    let volumes: Vec<&PersistentVolume> = match first_pod {
        Some(pod) if zone_pin => pod_volumes(facts, pod),
        _ => Vec::new(),
    };
    let mut summary = summary;
    if !volumes.is_empty() && !summary.ends_with('.') {
        summary.push('.');
    }
    for pv in &volumes {
        let claim = pv
            .claim
            .as_ref()
            .map(|c| format!(" (claim {})", c.name))
            .unwrap_or_default();
        summary.push_str(&match pv.zones.as_slice() {
            [] => format!(" Its volume {}{claim} may be what pins it: an EBS volume stays in the zone it was created in.", pv.meta.name),
            zones => format!(
                " Its volume {}{claim} is in {}: an EBS volume stays in its zone, so the pod can only run there, and a NodePool must offer that zone.",
                pv.meta.name,
                zones.join(", ")
            ),
        });
    }
    let mut steps = if bare {
        let node = g
            .subjects
            .iter()
            .find(|s| s.kind == "Node")
            .map(|s| s.name.as_str())
            .unwrap_or("<node>");
        vec![Remediation::command(
            "List the node's pods and read their constraints (required anti-affinity, topology spread, node selectors, zonal volumes); newer Karpenter versions name the pod and its error:",
            format!("kubectl get pods -A -o wide --field-selector spec.nodeName={node}"),
        )]
    } else {
        let pinned: Vec<&str> = volumes
            .iter()
            .flat_map(|pv| pv.zones.iter().map(String::as_str))
            .collect();
        if pinned.is_empty() {
            vec![Remediation::text(fix)]
        } else {
            vec![Remediation::text(format!(
                "Let the NodePool offer {}, where the volume is (its topology.kubernetes.io/zone requirement), so a replacement can be made there; or move the data to an allowed zone (snapshot the volume, restore it there).",
                pinned.join(", ")
            ))]
        }
    };
    if related == Some("KW201") {
        // The inner error names the NodePools it tried (`incompatible with nodepool "x", ...`):
        // show what each allows and how much of its limits is used, by name.
        for np in nodepools_named(first_error).into_iter().take(3) {
            steps.push(Remediation::command(
                format!("See what NodePool {np} allows and how much of its limits is used:"),
                format!(
                    "kubectl get nodepool {np} -o jsonpath='{{.spec.template.spec.requirements}}{{\"\\n\"}}{{.spec.limits}}{{\"\\n\"}}{{.status.resources}}{{\"\\n\"}}'"
                ),
            ));
        }
    }
    for pv in volumes.iter().filter(|pv| pv.zones.is_empty()).take(2) {
        steps.push(Remediation::command(
            format!(
                "Read the zone PersistentVolume {} is pinned to:",
                pv.meta.name
            ),
            format!(
                "kubectl get pv {} -o jsonpath='{{.spec.nodeAffinity.required}}{{\"\\n\"}}'",
                pv.meta.name
            ),
        ));
    }
    for (ns, name) in g
        .pods
        .iter()
        .filter_map(|(p, _)| p.as_deref().and_then(|p| p.split_once('/')))
        .take(3)
    {
        steps.push(Remediation::command(
            format!("Read the scheduling constraints of pod {ns}/{name}:"),
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
    fn names_the_nodepools_the_inner_error_tried() {
        assert_eq!(
            super::nodepools_named(
                r#"incompatible with nodepool "gpu", daemonset overhead={}, incompatible with nodepool "default", no instance type; incompatible with nodepool "gpu""#
            ),
            ["gpu", "default"]
        );
        assert!(super::nodepools_named("no instance type satisfied resources").is_empty());
        assert!(super::nodepools_named(r#"incompatible with nodepool "unterminated"#).is_empty());
    }

    #[test]
    fn a_requirement_clause_explains_more_than_a_dedicated_pools_taint() {
        let (s, related) = summary(
            r#"Normal  Unconsolidatable  3m  karpenter  Not all pods would schedule, kafka/kafka-broker-2 => incompatible with nodepool "general", daemonset overhead={"cpu":"480m"}, incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-west-1b] not in topology.kubernetes.io/zone In [eu-west-1a eu-west-1c]; incompatible with nodepool "spot", daemonset overhead={"cpu":"480m"}, did not tolerate taint workload=spot:NoSchedule"#,
        );
        assert!(s.contains("In [eu-west-1b]"), "{s}");
        assert!(!s.contains("because it does not tolerate"), "{s}");
        assert_eq!(related, ["KW203"]);
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
    fn every_pod_of_one_message() {
        let pods = super::pod_errors("kube-ops/a-1 => would schedule against uninitialized nodeclaim/x, node/ip-1 ca/b-2 => incompatible requirements, key k, k In [a] not in k In [b]");
        assert_eq!(
            pods,
            [
                (
                    Some("kube-ops/a-1".to_string()),
                    "would schedule against uninitialized nodeclaim/x, node/ip-1".to_string()
                ),
                (
                    Some("ca/b-2".to_string()),
                    "incompatible requirements, key k, k In [a] not in k In [b]".to_string()
                ),
            ]
        );
        assert_eq!(super::pod_errors(""), [(None, String::new())]);
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
