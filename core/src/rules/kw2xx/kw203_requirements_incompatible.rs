//! KW203 requirements-incompatible.

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef, Pod};
use crate::rules::kw2xx::kw202_no_offering_in_zone::ZONE_KEYS;
use crate::rules::kw2xx::kw208_no_ready_nodepool::{not_ready, NotReady};
use crate::rules::kw2xx::scheduling::{
    group_nearest_note, hit_messages_of, hit_pods, in_values, message_nodepool, nodepool_label,
    pod_owner, pod_template_of, pods_label, pools_label, requirement_on, scheduling_errors,
    single_value, Cause, Clause, Hit, SchedulingError,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW203",
    slug: "requirements-incompatible",
    title: "The pod asks for a label value no NodePool offers",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The pod's `nodeSelector` or required node affinity asks for a label (or a label value) that the
NodePool's requirements and template labels cannot produce, so no node Karpenter launches from
that NodePool would match the pod.

Signals (inside `Failed to schedule pod, ...` and `could not schedule pod`):
`incompatible requirements, label "<k>" does not have known values[ (typo of "<wk>"?)]` and
`incompatible requirements, key <k>, <pod requirement> not in <NodePool requirement>`; older
releases print the key form without the prefix (`key kubernetes.io/hostname,
kubernetes.io/hostname DoesNotExist not in kubernetes.io/hostname In [hostname-placeholder-...]`).
One label (key and the pods' values) that fails on several pods and NodePools is one
diagnosis naming them all, with each pod's line as evidence.

## Why it happens
A typo in a label key (Karpenter suggests the well-known key it resembles: `typo of "..."`),
a label that only existed on the old managed node groups (`eks.amazonaws.com/nodegroup`,
`nodegroup`, `role`), a value the NodePool's requirement does not list, or a pod pinned to
NodePools (`karpenter.sh/nodepool In [a b]`: any of the listed ones) so that every other
NodePool reports this clause (normal: look at the pinned NodePool's own failure). When none of
the pinned NodePools has a clause of its own, Karpenter tried none of them: they do not exist
(a renamed or deleted NodePool) or they are not ready (KW208), most often because their
EC2NodeClass is not ready (KW501) or missing (KW503). Before v0.32 the pin is
`karpenter.sh/provisioner-name` and names a Provisioner.

## How to fix
Correct the pod's selector, or make the NodePool offer the label: add the value to its
requirement (keeping the values it lists: `kubectl edit` replaces the list), take it out of a
`NotIn` list, or put the label in `spec.template.metadata.labels`. A pool is never given a
`karpenter.sh/nodepool` requirement: Karpenter sets that label to the pool's own name. When the pods pin a NodePool
that exists but is not ready, make it ready: read its conditions (`kubectl get nodepool <np>
-o yaml`), then its EC2NodeClass's, and fix what KW501 / KW503 say.
"#,
};

const SIGNALS: &[&str] = &[
    "could not schedule pod",
    "failed to schedule pod",
    "incompatible requirements",
    "does not have known values",
];

/// The keys a pod pins NodePools (v1alpha5: Provisioners) with.
const PIN_KEYS: [&str; 2] = ["karpenter.sh/nodepool", "karpenter.sh/provisioner-name"];

/// What one KW203 diagnosis is about. Clauses with the same topic, from any number of pods
/// and NodePools, make one diagnosis that names them all.
#[derive(Debug, Clone, PartialEq)]
enum Topic {
    /// The pods pin NodePools (`<key> In [..]`) none of which Karpenter tried.
    UntriedPin { key: String, incoming: String },
    /// The pods pin NodePools one of which (`tried`) was tried: the other NodePools' clauses
    /// only repeat the pin.
    PinnedElsewhere { incoming: String, tried: String },
    /// The pods ask for label `key`; `wanted` is their requirement on it when the text (or
    /// the pod) says.
    Label { key: String, wanted: Option<String> },
}

fn topic(facts: &Facts, error: &SchedulingError, clause: &Clause) -> Option<Topic> {
    match &clause.cause {
        Cause::RequirementConflict { key, incoming, .. } if PIN_KEYS.contains(&key.as_str()) => {
            if let Some(tried) = pinned_to_other_pool(error, key, incoming) {
                return Some(Topic::PinnedElsewhere {
                    incoming: incoming.clone(),
                    tried,
                });
            }
            Some(match pinned_pools(key, incoming) {
                Some(_) => Topic::UntriedPin {
                    key: key.clone(),
                    incoming: incoming.clone(),
                },
                None => Topic::Label {
                    key: key.clone(),
                    wanted: Some(incoming.clone()),
                },
            })
        }
        Cause::RequirementConflict { key, incoming, .. } => Some(Topic::Label {
            key: key.clone(),
            wanted: Some(incoming.clone()),
        }),
        Cause::UnknownLabel { label, .. } => Some(Topic::Label {
            key: label.clone(),
            wanted: wanted_of(facts, error, label),
        }),
        _ => None,
    }
}

/// The pod's requirement on `label` when a NodePool's label-unknown clause does not say it:
/// another NodePool's conflict clause on the same key in the same error quotes it, or the
/// pod's own nodeSelector holds it.
fn wanted_of(facts: &Facts, error: &SchedulingError, label: &str) -> Option<String> {
    error
        .clauses
        .iter()
        .find_map(|c| match &c.cause {
            Cause::RequirementConflict { key, incoming, .. } if key == label => {
                Some(incoming.clone())
            }
            _ => None,
        })
        .or_else(|| {
            let pod = facts.pod(error.pod.as_ref()?)?;
            let value = pod.node_selector.get(label)?;
            Some(format!("{label} In [{value}]"))
        })
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let errors = scheduling_errors(facts);
    let mut groups: Vec<(Topic, Vec<Hit<'_, '_>>)> = Vec::new();
    for error in &errors {
        for clause in &error.clauses {
            let Some(t) = topic(facts, error, clause) else {
                continue;
            };
            let hit = Hit { error, clause };
            match groups.iter_mut().find(|(k, _)| *k == t) {
                Some((_, hits)) => hits.push(hit),
                None => groups.push((t, vec![hit])),
            }
        }
    }
    groups
        .iter()
        .map(|(t, hits)| match t {
            Topic::UntriedPin { key, incoming } => untried_pin(facts, hits, key, incoming),
            Topic::PinnedElsewhere { incoming, tried } => {
                pinned_elsewhere(facts, hits, incoming, tried)
            }
            Topic::Label { key, wanted } => label_diagnosis(facts, hits, key, wanted.as_deref()),
        })
        .collect()
}

/// The distinct NodePool clauses of a group: one per NodePool (or per reason, unnamed).
fn entries<'e>(hits: &[Hit<'e, '_>]) -> Vec<&'e Clause> {
    let mut out: Vec<&Clause> = Vec::new();
    for h in hits {
        if !out
            .iter()
            .any(|c| c.nodepool == h.clause.nodepool && c.reason == h.clause.reason)
        {
            out.push(h.clause);
        }
    }
    out
}

fn named_pools(entries: &[&Clause]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for np in entries.iter().filter_map(|c| c.nodepool.clone()) {
        if !out.contains(&np) {
            out.push(np);
        }
    }
    out
}

/// `and`-joined list: `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [first @ .., last] => format!("{} and {last}", first.join(", ")),
    }
}

/// The pods ask for a label (value) the NodePools do not offer.
fn label_diagnosis(
    facts: &Facts,
    hits: &[Hit<'_, '_>],
    key: &str,
    wanted: Option<&str>,
) -> Diagnosis {
    let pods = hit_pods(hits);
    let several_pods = pods.len() > 1;
    let who = pods_label(&pods);
    let (asks, requires) = if several_pods {
        ("ask", "require")
    } else {
        ("asks", "requires")
    };
    let entries = entries(hits);
    let fact_pod = pods.first().and_then(|p| facts.pod(p));
    let value = wanted
        .and_then(|w| single_value(w, key))
        .or_else(|| fact_pod.and_then(|p| p.node_selector.get(key).cloned()));
    let typo = entries.iter().find_map(|c| match &c.cause {
        Cause::UnknownLabel {
            typo_of: Some(wk), ..
        } => Some(wk.clone()),
        _ => None,
    });
    let launches = if entries.len() > 1 {
        "they launch"
    } else {
        "it launches"
    };
    let pools_text = || -> String {
        let named = named_pools(&entries);
        let kind = if entries.iter().any(|c| c.provisioner) {
            "Provisioner"
        } else {
            "NodePool"
        };
        if named.len() == entries.len() {
            pools_label(kind, &named)
        } else if entries.len() == 1 {
            format!("a {kind}")
        } else {
            format!("the {} {kind}s tried", entries.len())
        }
    };
    let mut summary = match (&typo, entries.as_slice()) {
        (Some(wk), _) => format!(
            "Label \"{key}\" looks like a typo of \"{wk}\": {who} {asks} for it and {} {} no known values for it, so no node {launches} would match.",
            pools_text(),
            if entries.len() > 1 { "have" } else { "has" }
        ),
        (None, [one]) => match &one.cause {
            Cause::RequirementConflict {
                incoming, existing, ..
            } => format!(
                "{who} {requires} `{incoming}`, but {} offers `{existing}`: no node it launches would match.",
                nodepool_label(one)
            ),
            _ => format!(
                "{who} {asks} for label \"{key}\"{}, which {} neither requires nor sets: no node it launches would carry it.",
                value.as_deref().map(|v| format!("={v}")).unwrap_or_default(),
                nodepool_label(one)
            ),
        },
        (None, several) => {
            let what = match wanted {
                Some(w) => format!("{who} {requires} `{w}`"),
                None => format!("{who} {asks} for label \"{key}\""),
            };
            // Unnamed NodePools (v1.5+ names none) read `one NodePool`, `another NodePool`.
            let mut unnamed = 0;
            let each: Vec<String> = several
                .iter()
                .map(|c| {
                    let pool = match &c.nodepool {
                        Some(_) => nodepool_label(c),
                        None => {
                            unnamed += 1;
                            let kind = if c.provisioner { "Provisioner" } else { "NodePool" };
                            if unnamed == 1 {
                                format!("one {kind}")
                            } else {
                                format!("another {kind}")
                            }
                        }
                    };
                    match &c.cause {
                        Cause::RequirementConflict { existing, .. } => {
                            format!("{pool} offers `{existing}`")
                        }
                        _ => format!("{pool} neither requires nor sets {key}"),
                    }
                })
                .collect();
            format!(
                "{what}, but {}: no node they launch would match.",
                and_list(&each)
            )
        }
    };
    let conflict = entries
        .iter()
        .find(|c| matches!(c.cause, Cause::RequirementConflict { .. }));
    let from_volume = match conflict {
        Some(_) if ZONE_KEYS.contains(&key) => {
            if pods.is_empty() {
                zone_from_volume(facts, None, None)
            } else {
                pods.iter()
                    .find_map(|p| zone_from_volume(facts, Some(p), facts.pod(p)))
            }
        }
        _ => None,
    };
    if let Some(why) = &from_volume {
        summary.push_str(&format!(" {why}"));
    }
    summary.push_str(&group_nearest_note(hits));
    // The pods' side first (a typo, a wrong value), then each NodePool that could offer it.
    let fix_for = |c: &Clause| -> Vec<Remediation> {
        match (&c.cause, &from_volume) {
            (
                Cause::RequirementConflict {
                    incoming, existing, ..
                },
                Some(_),
            ) => volume_zone_fix(facts, c, key, incoming, existing, (pods.first(), fact_pod)),
            (
                Cause::RequirementConflict {
                    incoming, existing, ..
                },
                None,
            ) if typo.is_none() => conflict_fix(facts, c, key, incoming, existing, pods.first()),
            _ => unknown_label_fix(
                facts,
                c,
                key,
                typo.as_deref(),
                value.as_deref(),
                pods.first(),
            ),
        }
    };
    let mut remediation: Vec<Remediation> = Vec::new();
    let lead = match (&typo, conflict) {
        (Some(_), _) => entries[0],
        (None, Some(c)) => c,
        (None, None) => entries[0],
    };
    remediation.extend(fix_for(lead));
    // A typo is fixed on the pods' side; otherwise each other NodePool could offer the label
    // (its own step; the first step of each fix is the pods' own, already given).
    if from_volume.is_none() && typo.is_none() {
        for c in entries
            .iter()
            .filter(|c| !std::ptr::eq(**c, lead) && c.nodepool.is_some())
            .take(2)
        {
            remediation.extend(fix_for(c).into_iter().skip(1));
        }
    }
    Diagnosis::new(&META, summary)
        .with_objects(pods.iter())
        .with_node_pools(&named_pools(&entries))
        .with_messages_of(hit_messages_of(hits))
        .with_remediation(remediation)
}

/// The pods pin a NodePool that was tried: the other NodePools' clauses only repeat the pin.
fn pinned_elsewhere(facts: &Facts, hits: &[Hit<'_, '_>], incoming: &str, tried: &str) -> Diagnosis {
    let pods = hit_pods(hits);
    let entries = entries(hits);
    let (key, existing) = match &entries[0].cause {
        Cause::RequirementConflict { key, existing, .. } => (key.as_str(), existing.as_str()),
        _ => (PIN_KEYS[0], ""),
    };
    let pinned = pinned_label(key, &pinned_pools(key, incoming).unwrap_or_default());
    let is = if pods.len() > 1 { "are" } else { "is" };
    let summary = match entries.as_slice() {
        [one] => {
            format!(
                "{} {is} pinned to {pinned} (`{incoming}`), so {} (`{existing}`) is not a candidate; this clause is expected, see {} \"{tried}\"'s own failure.",
                pods_label(&pods),
                nodepool_label(one),
                pin_kind(key)
            )
        }
        several => format!(
            "{} {is} pinned to {pinned} (`{incoming}`), so {} are not candidates; these clauses are expected, see {} \"{tried}\"'s own failure.",
            pods_label(&pods),
            pools_label(pin_kind(key), &named_pools(several)),
            pin_kind(key)
        ),
    };
    let summary = format!("{summary}{}", group_nearest_note(hits));
    Diagnosis::new(&META, summary)
        .with_severity(Severity::Info)
        .with_objects(pods.iter())
        .with_node_pools(&named_pools(&entries))
        .with_messages_of(hit_messages_of(hits))
        .with_remediation(conflict_fix(
            facts,
            entries[0],
            key,
            incoming,
            existing,
            pods.first(),
        ))
}

/// `NodePool` or, for the v1alpha5 `karpenter.sh/provisioner-name` pin, `Provisioner`.
fn pin_kind(key: &str) -> &'static str {
    if key == "karpenter.sh/provisioner-name" {
        "Provisioner"
    } else {
        "NodePool"
    }
}

/// The NodePools a `karpenter.sh/nodepool In [a b]` pin lists (or the Provisioners of a
/// `karpenter.sh/provisioner-name` one): the pod may land on any of them (Karpenter prints a
/// requirement's values space-separated, at most five of them).
fn pinned_pools(key: &str, incoming: &str) -> Option<Vec<String>> {
    if !PIN_KEYS.contains(&key) {
        return None;
    }
    in_values(incoming, key).filter(|v| !v.is_empty())
}

/// `NodePool "a"`, `NodePools "a" or "b"`.
fn pinned_label(key: &str, pools: &[String]) -> String {
    let kind = pin_kind(key);
    let quoted: Vec<String> = pools.iter().map(|p| format!("\"{p}\"")).collect();
    match quoted.as_slice() {
        [] => format!("a {kind}"),
        [one] => format!("{kind} {one}"),
        [rest @ .., last] => format!("{kind}s {} or {last}", rest.join(", ")),
    }
}

/// A NodePool the pod pins itself to with `karpenter.sh/nodepool In [x y]`, when one of the
/// listed NodePools was tried too (it then has a clause of its own in the same error).
fn pinned_to_other_pool(error: &SchedulingError, key: &str, incoming: &str) -> Option<String> {
    pinned_pools(key, incoming)?.into_iter().find(|w| {
        error
            .clauses
            .iter()
            .any(|c| c.nodepool.as_deref() == Some(w))
    })
}

/// What the input says of a pinned NodePool that exists but was not tried.
fn readiness(nr: &Option<NotReady>) -> String {
    match nr {
        Some(nr) if nr.cause_known => format!(
            "exists but is not ready, so Karpenter skips it (KW208): {}",
            nr.because
        ),
        Some(_) => "exists but is not ready, so Karpenter skips it (KW208)".to_string(),
        None => "exists but Karpenter skipped it, so it is not ready (KW208)".to_string(),
    }
}

/// `kubectl get nodepool <np> -o jsonpath=...`: one condition a line.
fn conditions_command(kind: &str, name: &str) -> String {
    format!("kubectl get {kind} {name} -o jsonpath='{{range .status.conditions[*]}}{{.type}}={{.status}} {{.reason}}: {{.message}}{{\"\\n\"}}{{end}}'")
}

/// What to do about the EC2NodeClass behind a NodePool that is not ready, per the rule that
/// explains it.
fn nodeclass_step(np: &str, nc: Option<&str>, related: Option<&str>) -> Remediation {
    let target = match nc {
        Some(nc) => nc.to_string(),
        None => format!(
            "\"$(kubectl get nodepool {np} -o jsonpath='{{.spec.template.spec.nodeClassRef.name}}')\""
        ),
    };
    let label = nc
        .map(|n| format!("EC2NodeClass {n}"))
        .unwrap_or_else(|| format!("the EC2NodeClass of NodePool {np}"));
    let what = match related {
        Some("KW501") => "a selector matched no subnet, security group or AMI: tag the resources or correct the selector terms (KW501)".to_string(),
        Some("KW503") => format!("it does not exist: create it, or point NodePool {np}'s nodeClassRef at one that exists (KW503)"),
        Some("KW502") => "its validation failed (KW502)".to_string(),
        Some("KW105") => "an authorization check failed: the controller's IAM policy (KW105)".to_string(),
        _ => "NodeClassReady copies its Ready; fix what its conditions say (KW501 for selectors, KW503 when it is missing)".to_string(),
    };
    Remediation::command(
        format!("Then read the conditions of {label}: {what}."),
        conditions_command("ec2nodeclass", &target),
    )
}

/// The pods pin `karpenter.sh/nodepool In [<np>...]` (or the v1alpha5
/// `karpenter.sh/provisioner-name`) to NodePools none of which has a clause of its own in the
/// error: Karpenter tried none of them (they do not exist, or are not ready), and every other
/// NodePool's clause only repeats the pin. One diagnosis per pin, however many pods share it,
/// naming the missing or unready NodePools rather than blaming each one that was tried.
fn untried_pin(facts: &Facts, hits: &[Hit<'_, '_>], key: &str, incoming: &str) -> Diagnosis {
    let wanted = pinned_pools(key, incoming).unwrap_or_default();
    let kind = pin_kind(key);
    let provisioner = kind == "Provisioner";
    let pods = hit_pods(hits);
    let several = wanted.len() > 1;
    let mut tried: Vec<String> = Vec::new();
    for h in hits {
        for np in h.error.clauses.iter().filter_map(|c| c.nodepool.clone()) {
            if !tried.contains(&np) {
                tried.push(np);
            }
        }
    }
    let mut summary = format!(
        "{} {} pinned to {} (`{incoming}`), {} among the {kind}s Karpenter tried{}",
        pods_label(&pods),
        if pods.len() > 1 { "are" } else { "is" },
        pinned_label(key, &wanted),
        if several {
            "none of which is"
        } else {
            "which is not"
        },
        if tried.is_empty() {
            String::new()
        } else {
            format!(" ({})", tried.join(", "))
        }
    );
    let known: Vec<&str> = facts
        .nodepools
        .iter()
        .filter(|n| n.is_provisioner == provisioner)
        .map(|n| n.meta.name.as_str())
        .collect();
    let existing: Vec<String> = wanted
        .iter()
        .filter(|w| known.contains(&w.as_str()))
        .cloned()
        .collect();
    let unready: Vec<(String, Option<NotReady>)> = existing
        .iter()
        .map(|np| {
            (
                np.clone(),
                (!provisioner).then(|| not_ready(facts, np)).flatten(),
            )
        })
        .collect();
    // `and <n> others`: Karpenter printed only the first five names of the pin.
    let truncated = incoming.contains(" others]");
    // The one pinned NodePool was skipped for a reason the input states: its requirements (or
    // minValues) leave no instance type (KW207). It exists and may well be Ready.
    let filtered: Vec<&Message> = match wanted.as_slice() {
        [one] if !provisioner => filtered_out_messages(facts, one),
        _ => Vec::new(),
    };
    let min_values = filtered
        .iter()
        .any(|m| contains_ignore_ascii_case(&m.text, "minvalues"));
    match existing.as_slice() {
        _ if !filtered.is_empty() => summary.push_str(if min_values {
            ": Karpenter skips it because it cannot meet its minValues with the instance types its requirements leave (KW207)."
        } else {
            ": Karpenter skips it because its requirements filter out every available instance type (KW207)."
        }),
        _ if known.is_empty() && provisioner => summary.push_str(if several {
            ": they do not exist (renamed or deleted)."
        } else {
            ": it does not exist (renamed or deleted)."
        }),
        _ if known.is_empty() => summary.push_str(if several {
            ": they do not exist, or they are not ready (KW208)."
        } else {
            ": it does not exist, or it is not ready (KW208)."
        }),
        [] => summary.push_str(&format!(
            ": {} (the input lists {}).",
            match (several, truncated) {
                (_, true) => format!("no {kind} of the names shown exists"),
                (true, false) => format!("no {kind} of those names exists"),
                (false, false) => format!("no {kind} of that name exists"),
            },
            known.join(", ")
        )),
        _ if provisioner => summary.push_str(&format!(
            ": {} {} but Karpenter did not try {}.",
            pinned_label(key, &existing),
            if existing.len() > 1 {
                "exist"
            } else {
                "exists"
            },
            if existing.len() > 1 { "them" } else { "it" },
        )),
        [_] if !several => summary.push_str(&format!(": it {}.", readiness(&unready[0].1))),
        _ => {
            let each: Vec<String> = unready
                .iter()
                .map(|(np, nr)| format!("NodePool \"{np}\" {}", readiness(nr)))
                .collect();
            summary.push_str(&format!(": {}.", each.join("; ")));
        }
    }
    summary.push_str(&format!(
        " The other {kind}s are rejected only because of this pin."
    ));
    let resource = if provisioner {
        "provisioner"
    } else {
        "nodepool"
    };
    let mut steps = Vec::new();
    if let (false, [np]) = (filtered.is_empty(), wanted.as_slice()) {
        // The pin is right; the NodePool's own requirements are what to loosen.
        steps.push(Remediation::command(
            format!("Read NodePool {np}'s requirements (and minValues) and find the one that removes every instance type (KW207):"),
            format!("kubectl get nodepool {np} -o jsonpath='{{range .spec.template.spec.requirements[*]}}{{.key}} {{.operator}} {{.values}} {{.minValues}}{{\"\\n\"}}{{end}}'"),
        ));
    } else if !existing.is_empty() && !provisioner {
        // The pinned NodePool is there: make it ready rather than loosen the pods.
        for (np, nr) in unready.iter().take(2) {
            let nc = nr
                .as_ref()
                .and_then(|n| n.nodeclass.clone())
                .or_else(|| facts.nodepool(np).and_then(|p| p.nodeclass_ref.clone()));
            steps.push(Remediation::command(
                format!("NodePool {np} is not ready, so Karpenter skips it (KW208): read its conditions (NodeClassReady copies its EC2NodeClass's Ready):"),
                conditions_command("nodepool", np),
            ));
            steps.push(nodeclass_step(
                np,
                nc.as_deref(),
                nr.as_ref().and_then(|n| n.related),
            ));
        }
    } else {
        steps.push(Remediation::command(
            format!(
                "Check the {kind}{} the {} asks for {}:",
                if several { "s" } else { "" },
                if pods.len() > 1 { "pods" } else { "pod" },
                match (several, provisioner) {
                    (true, false) => "exist and are Ready",
                    (false, false) => "exists and is Ready",
                    (true, true) => "exist",
                    (false, true) => "exists",
                }
            ),
            format!(
                "kubectl get {resource}s\nkubectl describe {resource} {}",
                wanted.join(" ")
            ),
        ));
        if known.is_empty() && !provisioner {
            if let Some(first) = wanted.first() {
                steps.push(nodeclass_step(first, None, None));
            }
        }
        // A NodePool that exists: one the input lists, else one Karpenter tried.
        let target = known
            .first()
            .copied()
            .or_else(|| tried.first().map(String::as_str));
        steps.push(Remediation::yaml(
            format!(
                "Point the pod template's nodeSelector (or node affinity) at an existing {kind}{}:",
                target.map(|k| format!(" (e.g. {k})")).unwrap_or_default()
            ),
            format!(
                "nodeSelector:\n  {key}: \"{}\"\n",
                target.unwrap_or(if provisioner {
                    "<provisioner>"
                } else {
                    "<nodepool>"
                })
            ),
        ));
    }
    // The one NodePool concerned: the only one pinned, else the only pinned one that exists.
    let concerned = match (wanted.as_slice(), existing.as_slice()) {
        ([one], _) | (_, [one]) => Some(one.as_str()),
        _ => None,
    };
    let mut related = vec!["KW208"];
    related.extend(unready.iter().filter_map(|(_, nr)| nr.as_ref()?.related));
    if provisioner {
        related.clear();
    }
    if !filtered.is_empty() {
        related = vec!["KW207"];
    }
    let evidence: Vec<Evidence> = unready
        .iter()
        .filter_map(|(_, nr)| nr.as_ref())
        .flat_map(|nr| nr.evidence.iter().cloned())
        .collect();
    Diagnosis::new(&META, summary)
        .with_objects(pods.iter())
        .with_node_pool(concerned)
        .with_related(&related)
        .with_messages_of(hit_messages_of(hits))
        .with_messages(filtered.iter().copied())
        .with_evidence(evidence)
        .with_remediation(
            steps
                .into_iter()
                .filter(|s| !super::reads_only_shown(facts, s)),
        )
}

/// Karpenter's lines saying NodePool `np`'s requirements (or minValues) leave no instance type:
/// the NodePool event `NoCompatibleInstanceTypes` and the provisioner's `nodepool requirements
/// filtered out all available instance types`, when they name `np`.
fn filtered_out_messages<'a>(facts: &'a Facts, np: &str) -> Vec<&'a Message> {
    facts
        .messages_containing_any(&[
            "filtered out all available instance types",
            "filtered out all compatible available instance types",
            "filtered out all instance types",
        ])
        .filter(|m| message_nodepool(facts, m).as_deref() == Some(np))
        .collect()
}

/// The kind, kubectl resource and placeholder of the clause's pool: a v1alpha5 Provisioner
/// (before v0.32) or a NodePool.
fn pool_words(clause: &Clause) -> (&'static str, &'static str, &'static str) {
    if clause.provisioner {
        ("Provisioner", "provisioner", "<provisioner>")
    } else {
        ("NodePool", "nodepool", "<nodepool>")
    }
}

/// A requirement as YAML for the pool: a Provisioner has its requirements at the top of its
/// spec, a NodePool in its template.
fn requirement_yaml(clause: &Clause, key: &str, values: &str) -> String {
    if clause.provisioner {
        format!("spec:\n  requirements:\n    - key: {key}\n      operator: In\n      values: [{values}]\n")
    } else {
        format!(
            "spec:\n  template:\n    spec:\n      requirements:\n        - key: {key}\n          operator: In\n          values: [{values}]\n"
        )
    }
}

fn unknown_label_fix(
    facts: &Facts,
    clause: &Clause,
    label: &str,
    typo_of: Option<&str>,
    value: Option<&str>,
    pod: Option<&ObjectRef>,
) -> Vec<Remediation> {
    let (kind, res, placeholder) = pool_words(clause);
    // From v1.5 the message names no NodePool: take the one the input lists whose name is the
    // value the pod asks for (`workload-type=spark` and NodePool spark), or the only one listed;
    // otherwise name the candidates.
    let listed: Vec<&str> = facts
        .nodepools
        .iter()
        .filter(|n| n.is_provisioner == clause.provisioner)
        .map(|n| n.meta.name.as_str())
        .collect();
    let guessed = match (&clause.nodepool, listed.as_slice()) {
        (Some(_), _) => None,
        (None, [only]) => Some(*only),
        (None, _) => value.and_then(|v| listed.iter().copied().find(|n| *n == v)),
    };
    let np = clause
        .nodepool
        .as_deref()
        .or(guessed)
        .unwrap_or(placeholder);
    let candidates = if clause.nodepool.is_none() && guessed.is_none() && listed.len() > 1 {
        format!(" (the one meant for these pods: {})", listed.join(", "))
    } else {
        String::new()
    };
    let value = value.unwrap_or("<value>");
    let mut steps = Vec::new();
    if let Some(wk) = typo_of {
        let template = match pod_owner(facts, pod) {
            Some(o) => pod_template_of(&o, "<namespace>"),
            None => "the pod template".to_string(),
        };
        steps.push(Remediation::yaml(
            format!("Correct the key in the nodeSelector (or node affinity) of {template}: \"{label}\" -> \"{wk}\"."),
            format!("nodeSelector:\n  {wk}: \"{value}\"\n"),
        ));
    } else {
        steps.push(pod_side(
            facts,
            format!(
                "If \"{label}\" is a leftover from managed node groups, drop it from the pod template's nodeSelector / node affinity."
            ),
            pod,
        ));
    }
    if let Some(domain) = restricted_domain(label) {
        // Karpenter's validation rejects template labels in its restricted domains, so the
        // NodePool-side fix would not apply.
        steps.push(Remediation::text(format!(
            "A {kind} cannot set \"{label}\": Karpenter reserves the {domain} label domain. To steer pods to some {kind}s, label them with a key of your own domain."
        )));
        return steps;
    }
    steps.push(Remediation::yaml(
        format!("Or make {kind} {np}{candidates} set the label on its nodes (`kubectl edit {res} {np}`):"),
        if clause.provisioner {
            format!("spec:\n  labels:\n    {label}: \"{value}\"\n")
        } else {
            format!(
                "spec:\n  template:\n    metadata:\n      labels:\n        {label}: \"{value}\"\n"
            )
        },
    ));
    steps
}

/// The restricted label domain `label` falls in (Karpenter's `RestrictedLabelDomains`, AWS
/// provider included), unless its domain is one of the exceptions nodes may carry.
fn restricted_domain(label: &str) -> Option<&'static str> {
    let (domain, _) = label.split_once('/')?;
    let within = |d: &str| domain == d || domain.ends_with(&format!(".{d}"));
    if [
        "kops.k8s.io",
        "node.kubernetes.io",
        "node-restriction.kubernetes.io",
    ]
    .into_iter()
    .any(within)
    {
        return None;
    }
    [
        "kubernetes.io",
        "k8s.io",
        "karpenter.sh",
        "karpenter.k8s.aws",
    ]
    .into_iter()
    .find(|d| within(d))
}

/// Why the pod's zone requirement is its volume's, when the input says so: the pod asks for no
/// zone itself but mounts claims, or the scheduler reports `volume node affinity conflict` for
/// it. An EBS volume lives in one zone and takes its pods there.
fn zone_from_volume(
    facts: &Facts,
    pod: Option<&ObjectRef>,
    fact_pod: Option<&Pod>,
) -> Option<String> {
    if let Some(p) = fact_pod {
        let asks_zone = p
            .node_selector
            .keys()
            .any(|k| ZONE_KEYS.contains(&k.as_str()))
            || p.node_affinity
                .iter()
                .flatten()
                .any(|r| ZONE_KEYS.contains(&r.key.as_str()));
        if asks_zone {
            return None;
        }
    }
    let scheduler_says = facts
        .messages_containing("volume node affinity conflict")
        .any(|m| match (&m.object, pod) {
            (Some(o), Some(p)) => o.name == p.name,
            _ => true,
        });
    let claims = fact_pod.map(|p| p.pvc_names.as_slice()).unwrap_or_default();
    match (scheduler_says, claims) {
        (true, _) => Some(
            "The zone comes from the pod's volume: the scheduler reports `volume node affinity conflict`, and an EBS volume lives in one zone and takes its pods there.".to_string(),
        ),
        (false, [first, ..]) => Some(format!(
            "The pod asks for no zone itself, so the requirement comes from its volume (claim {first}): an EBS volume lives in one zone and takes its pods there."
        )),
        (false, []) => None,
    }
}

/// The fix when a volume pins the zone: the data is in that zone, so the NodePool must go
/// there; recreating the volume elsewhere is the exception.
fn volume_zone_fix(
    facts: &Facts,
    clause: &Clause,
    key: &str,
    incoming: &str,
    existing: &str,
    (pod, fact_pod): (Option<&ObjectRef>, Option<&Pod>),
) -> Vec<Remediation> {
    let (kind, res, placeholder) = pool_words(clause);
    let np = clause.nodepool.as_deref().unwrap_or(placeholder);
    let class = if clause.provisioner {
        "AWSNodeTemplate"
    } else {
        "EC2NodeClass"
    };
    // The zones the NodePool allows stay: the YAML is its whole list with the volume's zone.
    let mut values = match pool_requirement(facts, clause, key, existing) {
        Some((op, values, false)) if op == "In" => values,
        _ => Vec::new(),
    };
    for zone in in_values(incoming, key).unwrap_or_default() {
        if !values.contains(&zone) {
            values.push(zone);
        }
    }
    let values = if values.is_empty() {
        "\"<value>\"".to_string()
    } else {
        values
            .iter()
            .map(|x| format!("\"{x}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // The message names the pod's namespace even when the input lacks the pod's spec.
    let ns = fact_pod
        .and_then(|p| p.meta.namespace.as_deref())
        .or_else(|| pod.and_then(|p| p.namespace.as_deref()))
        .unwrap_or("<namespace>");
    let claim = fact_pod.and_then(|p| p.pvc_names.first());
    // Without the pod's spec its claims are unknown, but its name is: the command lists them.
    let pod_name = fact_pod
        .map(|p| p.meta.name.as_str())
        .or_else(|| pod.map(|p| p.name.as_str()));
    let see_zone = match (claim, pod_name) {
        (Some(claim), _) => format!("kubectl get pv \"$(kubectl get pvc {claim} -n {ns} -o jsonpath='{{.spec.volumeName}}')\" -o jsonpath='{{.spec.nodeAffinity.required}}{{\"\\n\"}}'"),
        (None, Some(pod)) => format!("for pvc in $(kubectl get pod {pod} -n {ns} -o jsonpath='{{.spec.volumes[*].persistentVolumeClaim.claimName}}'); do echo \"$pvc: $(kubectl get pv \"$(kubectl get pvc \"$pvc\" -n {ns} -o jsonpath='{{.spec.volumeName}}')\" -o jsonpath='{{.spec.nodeAffinity.required}}')\"; done"),
        (None, None) => format!("kubectl get pv \"$(kubectl get pvc <pvc> -n {ns} -o jsonpath='{{.spec.volumeName}}')\" -o jsonpath='{{.spec.nodeAffinity.required}}{{\"\\n\"}}'"),
    };
    let claim_words = match (claim, pod_name) {
        (Some(claim), _) => format!("claim {claim}"),
        (None, Some(_)) => "the claim listed above".to_string(),
        (None, None) => "claim <pvc>".to_string(),
    };
    vec![
        Remediation::yaml(
            format!("Let {kind} {np} launch where the volume is: add the zone to its requirement on {key} (`kubectl edit {res} {np}`), and check that its {class} selects a subnet in that zone:"),
            requirement_yaml(clause, key, &values),
        ),
        Remediation::command(
            if claim.is_none() && pod_name.is_some() {
                "See the zone of each of the pod's volumes:"
            } else {
                "See the volume's zone:"
            },
            see_zone,
        ),
        Remediation::text(format!(
            "Or, only if the data can be recreated: delete {claim_words} (and the pod, so that a StatefulSet makes both again) and the new volume is provisioned in a zone {kind} {np} offers."
        )),
    ]
}

/// A step on the pods' side; with a known pod, the command that shows where its selector
/// and node affinity come from (the pod's owner template sets them).
fn pod_side(facts: &Facts, text: String, pod: Option<&ObjectRef>) -> Remediation {
    match pod {
        Some(p) => Remediation::command(
            match pod_owner(facts, Some(p)) {
                Some(o) => format!(
                    "{text} Edit it in {}; the pod's own selector and node affinity:",
                    pod_template_of(&o, "<namespace>")
                ),
                None => format!("{text} The pod's own selector and node affinity (its Deployment/StatefulSet/Job template sets them):"),
            },
            format!(
                "kubectl get pod {}{} -o jsonpath='{{.spec.nodeSelector}}{{\"\\n\"}}{{.spec.affinity.nodeAffinity}}{{\"\\n\"}}'",
                p.name,
                p.namespace.as_deref().map(|ns| format!(" -n {ns}")).unwrap_or_default()
            ),
        ),
        None => Remediation::text(text),
    }
}

fn conflict_fix(
    facts: &Facts,
    clause: &Clause,
    key: &str,
    incoming: &str,
    existing: &str,
    pod: Option<&ObjectRef>,
) -> Vec<Remediation> {
    let (kind, res, placeholder) = pool_words(clause);
    let np = clause.nodepool.as_deref().unwrap_or(placeholder);
    let pod_step = pod_side(
        facts,
        format!(
            "Correct the pod's nodeSelector / node affinity on {key} if `{incoming}` is not what it should ask for."
        ),
        pod,
    );
    // Karpenter labels each node with its own pool's name: a pool cannot be given a
    // requirement on the pin key (the pin is the pods' to change).
    if PIN_KEYS.contains(&key) {
        return vec![pod_step];
    }
    // Karpenter gives every new node a hostname of its own (`hostname-placeholder-<n>`): no
    // NodePool requirement is involved.
    if key == "kubernetes.io/hostname" {
        return vec![
            pod_step,
            Remediation::text(format!(
                "No {kind} setting changes this: Karpenter gives every new node its own {key} (`{existing}`), so a pod asking `{incoming}` fits no new node."
            )),
        ];
    }
    // `Exists`, `Gt`, `Lt` name no value to add: the NodePool's own requirement is what excludes.
    let Some(wanted) = in_values(incoming, key).filter(|v| !v.is_empty()) else {
        return vec![
            pod_step,
            Remediation::text(format!(
                "Or let {kind} {np} offer it: drop or loosen its `{existing}` requirement (`kubectl edit {res} {np}`)."
            )),
        ];
    };
    vec![
        pod_step,
        offer_values_step(facts, clause, key, &wanted, existing),
    ]
}

/// The pool's requirement on `key`: from its object when the input has it (complete, while
/// Karpenter prints at most five values), else parsed from the error's `existing` text.
/// `(operator, values, more)`, `more` when the printed list was cut (`and <n> others`).
fn pool_requirement(
    facts: &Facts,
    clause: &Clause,
    key: &str,
    existing: &str,
) -> Option<(String, Vec<String>, bool)> {
    let from_object = clause
        .nodepool
        .as_deref()
        .and_then(|n| facts.nodepool(n))
        .filter(|np| !np.meta.from_table)
        .and_then(|np| np.requirements.iter().find(|r| r.key == key))
        .map(|r| (r.operator.clone(), r.values.clone(), false));
    from_object.or_else(|| {
        let req = requirement_on(existing, key)?;
        let rest = req[key.len()..].trim();
        let (operator, list) = rest.split_once(' ').unwrap_or((rest, ""));
        let list = list.trim().trim_start_matches('[').trim_end_matches(']');
        let mut values: Vec<String> = list.split_whitespace().map(str::to_string).collect();
        let mut more = false;
        if let [.., and, count, others] = values.as_slice() {
            if and == "and" && others == "others" && count.parse::<u32>().is_ok() {
                values.truncate(values.len() - 3);
                more = true;
            }
        }
        Some((operator.to_string(), values, more))
    })
}

/// The step that makes the pool offer `wanted` on `key`, keeping what its requirement already
/// allows: an `In` list gains the values (the YAML is the whole merged list, as `kubectl edit`
/// needs it), a `NotIn` list loses them, a `DoesNotExist` goes.
fn offer_values_step(
    facts: &Facts,
    clause: &Clause,
    key: &str,
    wanted: &[String],
    existing: &str,
) -> Remediation {
    let (kind, res, placeholder) = pool_words(clause);
    let np = clause.nodepool.as_deref().unwrap_or(placeholder);
    let edit = format!("`kubectl edit {res} {np}`");
    let quote = |v: &[String]| {
        v.iter()
            .map(|x| format!("\"{x}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match pool_requirement(facts, clause, key, existing) {
        Some((op, mut values, more)) if op == "In" => {
            for w in wanted {
                if !values.contains(w) {
                    values.push(w.clone());
                }
            }
            let mut yaml = requirement_yaml(clause, key, &quote(&values));
            if more {
                // Karpenter printed only the first values: the user's list has more to keep.
                yaml = yaml.replacen(
                    "]\n",
                    "]  # and the other values it lists today\n",
                    1,
                );
            }
            Remediation::yaml(
                format!("Or let {kind} {np} offer it: add {} to its requirement on {key}, keeping the values it has ({edit}):", quote(wanted)),
                yaml,
            )
        }
        Some((op, values, more)) if op == "NotIn" => {
            let left: Vec<String> = values.into_iter().filter(|v| !wanted.contains(v)).collect();
            if left.is_empty() && !more {
                Remediation::text(format!(
                    "Or let {kind} {np} offer it: its requirement `{key} NotIn` excludes exactly {}; delete that requirement ({edit}).",
                    quote(wanted)
                ))
            } else {
                let mut yaml = requirement_yaml(clause, key, &quote(&left))
                    .replacen("operator: In\n", "operator: NotIn\n", 1);
                if more {
                    yaml = yaml.replacen(
                        "]\n",
                        "]  # and the other values it excludes today\n",
                        1,
                    );
                }
                Remediation::yaml(
                    format!("Or let {kind} {np} offer it: take {} out of its `{key} NotIn` list ({edit}):", quote(wanted)),
                    yaml,
                )
            }
        }
        Some((op, _, _)) if op == "DoesNotExist" => Remediation::text(format!(
            "Or let {kind} {np} offer it: delete its `{key} DoesNotExist` requirement{} ({edit}).",
            // Karpenter sets its own and the instance-type labels on every node it launches.
            if ["karpenter.k8s.aws/", "karpenter.sh/", "node.kubernetes.io/", "topology.kubernetes.io/", "kubernetes.io/"]
                .iter()
                .any(|p| key.starts_with(p))
            {
                " (Karpenter sets that label on its nodes itself)"
            } else {
                " and give its nodes the label (`spec.template.metadata.labels`)"
            }
        )),
        Some((op, _, _)) if op == "Gt" || op == "Lt" => Remediation::text(format!(
            "Or let {kind} {np} offer it: loosen its `{existing}` requirement so that it admits {} ({edit}).",
            quote(wanted)
        )),
        // Exists, or a requirement the text does not show: the pool needs the values listed.
        _ => Remediation::yaml(
            format!("Or let {kind} {np} offer it: add the values to its requirement on {key} ({edit}):"),
            requirement_yaml(clause, key, &quote(wanted)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::restricted_domain;
    use crate::rules::Severity;
    use crate::testing::{check_only, ids, remediation_text};

    const ZONE_CONFLICT: &str = r#"LAST SEEN   TYPE      REASON             OBJECT                  MESSAGE
2m          Warning   FailedScheduling   pod/postgres-1          Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"200m","memory":"300Mi","pods":"4"}, incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [eu-west-1a] not in topology.kubernetes.io/zone In [eu-west-1b eu-west-1c]
"#;

    /// A v1alpha5 Provisioner (before v0.32) is edited as one: `kubectl edit provisioner`, and
    /// its requirements sit at the top of its spec.
    #[test]
    fn a_provisioner_gets_provisioner_commands_and_yaml() {
        let line = "2023-02-08T15:04:41.118Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner \"default\", incompatible requirements, key topology.kubernetes.io/zone, topology.kubernetes.io/zone In [us-west-2d] not in topology.kubernetes.io/zone In [us-west-2a us-west-2b]\t{\"commit\": \"d7e22b1\", \"pod\": \"default/zonal-0\"}";
        let d = &check_only("KW203", line).diagnoses[0];
        let step = d.remediation.iter().find(|r| r.yaml.is_some()).unwrap();
        assert!(
            step.text.contains("Provisioner default")
                && step.text.contains("`kubectl edit provisioner default`"),
            "{}",
            step.text
        );
        assert_eq!(
            step.yaml.as_deref(),
            // The Provisioner's zones stay: `kubectl edit` replaces the list as written.
            Some("spec:\n  requirements:\n    - key: topology.kubernetes.io/zone\n      operator: In\n      values: [\"us-west-2a\", \"us-west-2b\", \"us-west-2d\"]\n")
        );
    }

    #[test]
    fn a_pin_to_an_untried_nodepool_is_one_diagnosis_naming_it() {
        let error = r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"trainer-0","namespace":"ml"},"error":"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-pool] not in karpenter.sh/nodepool In [default]; incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-pool] not in karpenter.sh/nodepool In [system]"}"#;
        let report = check_only("KW203", error);
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .starts_with("Pod ml/trainer-0 is pinned to NodePool \"gpu-pool\""),
            "{}",
            d.summary
        );
        assert!(
            d.summary
                .contains("tried (default, system): it does not exist, or it is not ready (KW208)"),
            "{}",
            d.summary
        );
        let listed = format!("{error}\n$ kubectl get nodepools\nNAME      NODECLASS   NODES   READY   AGE\ndefault   default     4       True    90d\nsystem    default     2       True    90d\n");
        let report = check_only("KW203", &listed);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("no NodePool of that name exists (the input lists default, system)"),
            "{}",
            d.summary
        );
        assert!(d.remediation[1]
            .yaml
            .as_deref()
            .unwrap()
            .contains("karpenter.sh/nodepool: \"default\""));
    }

    #[test]
    fn a_pin_listing_several_nodepools_names_each_of_them() {
        let error = r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"trainer-0","namespace":"ml"},"error":"incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-a gpu-b] not in karpenter.sh/nodepool In [default]; incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-a gpu-b] not in karpenter.sh/nodepool In [system]"}"#;
        let report = check_only("KW203", error);
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with(
                "Pod ml/trainer-0 is pinned to NodePools \"gpu-a\" or \"gpu-b\" (`karpenter.sh/nodepool In [gpu-a gpu-b]`), none of which is among the NodePools Karpenter tried (default, system): they do not exist, or they are not ready (KW208)."
            ),
            "{}",
            d.summary
        );
        assert_eq!(d.node_pool, None);
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .ends_with("kubectl describe nodepool gpu-a gpu-b"));
        // One listed NodePool exists: it is the one Karpenter skipped, not "no such name".
        let listed = format!("{error}\n$ kubectl get nodepools\nNAME      NODECLASS   NODES   READY   AGE\ndefault   default     4       True    90d\ngpu-b     gpu         0       False   2d\nsystem    default     2       True    90d\n");
        let report = check_only("KW203", &listed);
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains(
                ": NodePool \"gpu-b\" exists but is not ready, so Karpenter skips it (KW208)."
            ),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("no NodePool of"), "{}", d.summary);
        assert_eq!(d.node_pool.as_deref(), Some("gpu-b"));
        // None of them exists.
        let listed = format!("{error}\n$ kubectl get nodepools\nNAME      NODECLASS   NODES   READY   AGE\ndefault   default     4       True    90d\n");
        let d = &check_only("KW203", &listed).diagnoses[0];
        assert!(
            d.summary
                .contains(": no NodePool of those names exists (the input lists default)."),
            "{}",
            d.summary
        );
    }

    #[test]
    fn one_cause_across_pods_and_nodepools_is_one_diagnosis() {
        let line = |pod: &str| {
            format!(
                "1m  Warning  FailedScheduling  pod/{pod}  Failed to schedule pod, incompatible with nodepool \"general\", daemonset overhead={{}}, incompatible requirements, key tier, tier In [analytics] not in tier In [web]; incompatible with nodepool \"batch\", daemonset overhead={{}}, incompatible requirements, label \"tier\" does not have known values\n"
            )
        };
        let text = format!(
            "LAST SEEN  TYPE  REASON  OBJECT  MESSAGE\n{}{}{}",
            line("etl-a"),
            line("etl-b"),
            line("etl-c")
        );
        let report = check_only("KW203", &text);
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.objects.len(), 3);
        assert_eq!(d.node_pools, ["general", "batch"]);
        assert_eq!(d.node_pool, None);
        // Each pod keeps its own evidence line although the messages read the same.
        assert_eq!(d.evidence.len(), 3);
        assert!(
            d.summary.starts_with("Pods etl-a, etl-b and etl-c require `tier In [analytics]`, but NodePool \"general\" offers `tier In [web]` and NodePool \"batch\" neither requires nor sets tier"),
            "{}",
            d.summary
        );
        // The label-unknown NodePool's fix is filled in with the value the other clause quotes.
        assert!(d.remediation.iter().any(|r| r
            .yaml
            .as_deref()
            .is_some_and(|y| y.contains("tier: \"analytics\""))));
        // Another value is another cause.
        let other = text.replacen("tier In [analytics]", "tier In [ml]", 1);
        assert_eq!(ids(&check_only("KW203", &other)).len(), 2);
    }

    #[test]
    fn a_pin_to_a_nodepool_that_is_not_ready_follows_the_chain() {
        let text = r#"Warning  FailedScheduling  1m  karpenter  Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={}, incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu] not in karpenter.sh/nodepool In [default]
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: gpu-nodes
status:
  conditions:
    - type: NodeClassReady
      status: "False"
      reason: NodeClassNotFound
      message: NodeClass not found on cluster
    - type: Ready
      status: "False"
      reason: UnhealthyDependents
      message: NodeClassReady=False
"#;
        let report = check_only("KW203", text);
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("it exists but is not ready, so Karpenter skips it (KW208): EC2NodeClass gpu-nodes does not exist (KW503)"),
            "{}",
            d.summary
        );
        assert_eq!(d.related, ["KW208", "KW503"]);
        let commands: Vec<&str> = d
            .remediation
            .iter()
            .filter_map(|r| r.command.as_deref())
            .collect();
        // The NodePool's conditions are in the input: no step to read them again.
        assert!(!commands
            .iter()
            .any(|c| c.starts_with("kubectl get nodepool gpu")));
        assert!(commands[0].starts_with("kubectl get ec2nodeclass gpu-nodes -o jsonpath="));
        assert!(d.remediation[0].text.contains("(KW503)"));
        // No loosening of the pods' selector when the NodePool they want is there.
        assert!(!d.remediation.iter().any(|r| r.yaml.is_some()));
    }

    #[test]
    fn a_pin_to_a_nodepool_whose_requirements_filter_out_every_type_names_kw207() {
        let table = "LAST SEEN   TYPE      REASON                      OBJECT                 MESSAGE\n\
2m          Warning   FailedScheduling            pod/trainer-0          Failed to schedule pod, incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-train] not in karpenter.sh/nodepool In [default]\n";
        let event = "2m          Warning   NoCompatibleInstanceTypes   nodepool/gpu-train     NodePool requirements filtered out all compatible available instance types due to minValues incompatibility\n";
        let report = check_only("KW203", &format!("{table}{event}"));
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("cannot meet its minValues"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("does not exist"), "{}", d.summary);
        assert_eq!(d.related, ["KW207"]);
        // The pin is right: no step pointing the pod at another NodePool.
        assert!(!d.remediation.iter().any(|r| r.yaml.is_some()));
        // The same event about another NodePool says nothing of this pin.
        let other = event.replace("nodepool/gpu-train ", "nodepool/batch     ");
        let report = check_only("KW203", &format!("{table}{other}"));
        assert!(report.diagnoses[0].summary.contains("does not exist"));
        assert_eq!(report.diagnoses[0].related, ["KW208"]);
    }

    #[test]
    fn an_unprefixed_unknown_label_names_the_nodepool_from_the_list() {
        let event = r#"Name:             spark-driver-9f8e7
Namespace:        analytics
Node:             <none>
Status:           Pending
Node-Selectors:   workload-type=spark
Events:
  Type     Reason            Age   From       Message
  ----     ------            ----  ----       -------
  Warning  FailedScheduling  25s   karpenter  Failed to schedule pod, incompatible requirements, label "workload-type" does not have known values"#;
        let list = |second: &str| {
            format!("{event}\n\n$ kubectl get nodepools\nNAME       NODECLASS   NODES   READY   AGE\ndefault    default     3       True    41d\n{second}    {second}       0       True    2d\n")
        };
        let fix = |text: &str| {
            let report = check_only("KW203", text);
            assert_eq!(ids(&report), ["KW203"]);
            crate::testing::remediation_text(&report.diagnoses[0])
        };
        // The NodePool whose name is the value the pod asks for (`workload-type: spark`).
        let named = fix(&list("spark"));
        assert!(
            named.contains("Or make NodePool spark set the label"),
            "{named}"
        );
        // No such name: the candidates, not a guess.
        let listed = fix(&list("batch"));
        assert!(
            listed.contains("(the one meant for these pods: default, batch)"),
            "{listed}"
        );
    }

    #[test]
    fn a_provisioner_name_pin_is_a_pin_too() {
        let report = check_only(
            "KW203",
            r#"Failed to schedule pod, incompatible with provisioner "default", daemonset overhead={}, incompatible requirements, key karpenter.sh/provisioner-name, karpenter.sh/provisioner-name In [batch] not in karpenter.sh/provisioner-name In [default]"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("pinned to Provisioner \"batch\"")
                && d.summary.contains("it does not exist (renamed or deleted)"),
            "{}",
            d.summary
        );
        assert!(d.related.is_empty());
        let yaml = d.remediation.last().unwrap().yaml.as_deref().unwrap();
        assert!(
            yaml.contains("karpenter.sh/provisioner-name: \"default\""),
            "{yaml}"
        );
    }

    #[test]
    fn a_pin_listing_a_tried_nodepool_is_not_untried() {
        // `gpu-b` was tried (its own clause): the pin is fine, the other clauses are expected.
        let report = check_only(
            "KW203",
            r#"Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={}, incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu-a gpu-b] not in karpenter.sh/nodepool In [default]; incompatible with nodepool "gpu-b", daemonset overhead={}, no instance type has enough resources, requirements=karpenter.sh/nodepool In [gpu-b], resources={"cpu":"64"}"#,
        );
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert_eq!(d.severity, Severity::Info);
        assert!(
            d.summary
                .contains("is pinned to NodePools \"gpu-a\" or \"gpu-b\"")
                && d.summary.contains("see NodePool \"gpu-b\"'s own failure"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("not among"), "{}", d.summary);
    }

    fn offer_step(report: &crate::report::Report) -> &crate::rules::Remediation {
        report.diagnoses[0]
            .remediation
            .iter()
            .find(|r| r.text.starts_with("Or let NodePool"))
            .expect("a NodePool step")
    }

    #[test]
    fn a_not_in_requirement_loses_the_wanted_value_and_keeps_the_others() {
        let line = r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"render-0","namespace":"media"},"error":"incompatible with nodepool \"gpu\", daemonset overhead={}, incompatible requirements, key karpenter.k8s.aws/instance-family, karpenter.k8s.aws/instance-family In [g5] not in karpenter.k8s.aws/instance-family NotIn [g4dn g5]"}"#;
        let report = check_only("KW203", line);
        let yaml = offer_step(&report).yaml.as_deref().unwrap();
        assert!(yaml.contains("operator: NotIn"), "{yaml}");
        assert!(yaml.contains("values: [\"g4dn\"]"), "{yaml}");

        // Excluding only the wanted value: the requirement goes.
        let only = line.replace("NotIn [g4dn g5]", "NotIn [g5]");
        let report = check_only("KW203", &only);
        let step = offer_step(&report);
        assert!(step.yaml.is_none());
        assert!(
            step.text.contains("delete that requirement"),
            "{}",
            step.text
        );
    }

    #[test]
    fn a_cut_value_list_is_merged_from_the_nodepool_object_or_flagged() {
        let line = r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"api-0","namespace":"web"},"error":"incompatible with nodepool \"general\", daemonset overhead={}, incompatible requirements, key node.kubernetes.io/instance-type, node.kubernetes.io/instance-type In [m7i.2xlarge] not in node.kubernetes.io/instance-type In [m5.large m5.xlarge m6i.large m6i.xlarge m6i.2xlarge and 2 others]"}"#;
        let report = check_only("KW203", line);
        let yaml = offer_step(&report).yaml.as_deref().unwrap();
        assert!(
            yaml.contains(
                "\"m6i.2xlarge\", \"m7i.2xlarge\"]  # and the other values it lists today"
            ),
            "{yaml}"
        );

        let pool = "\n---\napiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: general\nspec:\n  template:\n    spec:\n      requirements:\n      - key: node.kubernetes.io/instance-type\n        operator: In\n        values: [m5.large, m5.xlarge, m6i.large, m6i.xlarge, m6i.2xlarge, r6i.large, r6i.xlarge]\n";
        let report = check_only("KW203", &format!("{line}{pool}"));
        let yaml = offer_step(&report).yaml.as_deref().unwrap();
        assert!(
            yaml.contains("\"r6i.xlarge\", \"m7i.2xlarge\"]\n"),
            "{yaml}"
        );
        assert!(!yaml.contains('#'), "{yaml}");
    }

    #[test]
    fn a_pin_gets_no_nodepool_requirement_step() {
        let text = r#"Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={}, incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu] not in karpenter.sh/nodepool In [default]; incompatible with nodepool "gpu", daemonset overhead={}, no instance type has enough resources, requirements=karpenter.sh/nodepool In [gpu], resources={"cpu":"64"}"#;
        let report = check_only("KW203", text);
        assert!(!report.diagnoses.is_empty());
        for d in &report.diagnoses {
            for r in &d.remediation {
                let yaml = r.yaml.as_deref().unwrap_or_default();
                assert!(
                    !(yaml.contains("requirements:") && yaml.contains("karpenter.sh/nodepool")),
                    "{yaml}"
                );
            }
        }
    }

    #[test]
    fn a_zone_the_volume_pins_sends_the_nodepool_there() {
        let scheduler = "4m          Warning   FailedScheduling   pod/postgres-1          0/7 nodes are available: 1 node(s) had volume node affinity conflict, 6 node(s) didn't match Pod's node affinity/selector. preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.\n";
        let report = check_only("KW203", &format!("{ZONE_CONFLICT}{scheduler}"));
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("comes from the pod's volume"),
            "{}",
            d.summary
        );
        let first = &d.remediation[0];
        assert!(first
            .text
            .starts_with("Let NodePool default launch where the volume is"));
        assert!(first.yaml.as_deref().is_some_and(
            |y| y.contains("values: [\"eu-west-1b\", \"eu-west-1c\", \"eu-west-1a\"]")
        ));
        assert!(!d
            .remediation
            .iter()
            .any(|r| r.text.contains("Correct the pod's nodeSelector")));

        // Without a word about volumes, the pod's own selector is the first suspect.
        let d = &check_only("KW203", ZONE_CONFLICT).diagnoses[0];
        assert!(!d.summary.contains("volume"));
        assert!(d.remediation[0]
            .text
            .contains("Correct the pod's nodeSelector"));
    }

    #[test]
    fn typo_suggestion_leads() {
        let report = check_only(
            "KW203",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"web","namespace":"shop"},"error":"incompatible with nodepool \"jobs\", daemonset overhead={\"cpu\":\"681m\"}, did not tolerate pool=jobs:NoSchedule; incompatible with nodepool \"stable\", daemonset overhead={\"cpu\":\"681m\"}, incompatible requirements, label \"node-role.example.io/stable\" does not have known values (typo of \"example.io/stage\"?)"}"#,
        );
        assert_eq!(ids(&report), ["KW203"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with(
                "Label \"node-role.example.io/stable\" looks like a typo of \"example.io/stage\""
            ),
            "{}",
            d.summary
        );
        assert_eq!(d.node_pool.as_deref(), Some("stable"));
    }

    #[test]
    fn restricted_label_is_not_offered_as_a_nodepool_label() {
        let report = check_only(
            "KW203",
            r#"Failed to schedule pod, incompatible requirements, label "node-role.kubernetes.io/worker" does not have known values"#,
        );
        let fix = remediation_text(&report.diagnoses[0]);
        assert!(
            fix.contains("reserves the kubernetes.io label domain"),
            "{fix}"
        );
        assert!(!fix.contains("set the label on its nodes"), "{fix}");
        assert_eq!(restricted_domain("node.kubernetes.io/lifecycle"), None);
        assert_eq!(restricted_domain("team.example.com/pool"), None);
        assert_eq!(
            restricted_domain("karpenter.k8s.aws/instance-familly"),
            Some("karpenter.k8s.aws")
        );
    }

    /// `Exists` names no value a NodePool could add: its own `DoesNotExist` is what excludes.
    #[test]
    fn an_exists_conflict_points_at_the_nodepool_requirement_not_at_values() {
        let report = check_only(
            "KW203",
            r#"Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={"cpu":"250m"}, incompatible requirements, key karpenter.k8s.aws/instance-gpu-count, karpenter.k8s.aws/instance-gpu-count Exists not in karpenter.k8s.aws/instance-gpu-count DoesNotExist"#,
        );
        let fix = remediation_text(&report.diagnoses[0]);
        assert!(
            fix.contains("drop or loosen its `karpenter.k8s.aws/instance-gpu-count DoesNotExist` requirement"),
            "{fix}"
        );
        assert!(!fix.contains("<value>"), "{fix}");
    }

    #[test]
    fn unknown_label_v1_5() {
        let report = check_only(
            "KW203",
            r#"Failed to schedule pod, incompatible requirements, label "nodegroup" does not have known values"#,
        );
        assert_eq!(ids(&report), ["KW203"]);
        assert!(report.diagnoses[0].summary.contains("\"nodegroup\""));
    }

    #[test]
    fn key_conflict_forms() {
        for text in [
            "Failed to schedule pod, incompatible requirements, key kubernetes.io/arch, kubernetes.io/arch In [arm64] not in kubernetes.io/arch In [amd64]",
            r#"Failed to schedule pod, incompatible with provisioner "default", key kubernetes.io/hostname, kubernetes.io/hostname DoesNotExist not in kubernetes.io/hostname In [hostname-placeholder-3245]"#,
        ] {
            let report = check_only("KW203", text);
            assert_eq!(ids(&report), ["KW203"], "{text}");
            assert_eq!(report.diagnoses[0].severity, Severity::Error);
        }
    }

    #[test]
    fn pinned_pod_makes_other_pools_info() {
        let report = check_only(
            "KW203",
            r#"Failed to schedule pod, incompatible requirements, key karpenter.sh/nodepool, karpenter.sh/nodepool In [gpu] not in karpenter.sh/nodepool In [default]; no instance type has enough resources, requirements=karpenter.sh/nodepool In [gpu], resources={"cpu":"64"}"#,
        );
        assert_eq!(ids(&report), ["KW203"]);
        assert_eq!(report.diagnoses[0].severity, Severity::Info);
        assert!(report.diagnoses[0]
            .summary
            .contains("pinned to NodePool \"gpu\""));
    }

    #[test]
    fn near_misses() {
        for text in [
            "0/5 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.",
            "Failed to schedule pod, no instance type has enough resources, requirements=karpenter.k8s.aws/instance-family In [g4ad] minValues 1, topology.kubernetes.io/zone DoesNotExist, resources={}",
            "Failed to schedule pod, incompatible with nodepool \"default\", daemonset overhead={}, unsatisfiable topology constraint for pod anti-affinity, key=kubernetes.io/hostname (counts = hostname-placeholder-0001: 1, podDomains = kubernetes.io/hostname Exists, nodeDomains = kubernetes.io/hostname In [hostname-placeholder-0001]",
        ] {
            assert!(ids(&check_only("KW203", text)).is_empty(), "{text}");
        }
    }
}
