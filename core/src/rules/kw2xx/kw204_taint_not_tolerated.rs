//! KW204 taint-not-tolerated.

use crate::facts::{Facts, Message, ObjectRef, Taint, Toleration};
use crate::rules::kw2xx::scheduling::{
    group_hits_across_pods, group_nearest_note, hit_messages_of, hit_pods, parse_taint,
    pod_template_of, pods_label, pools_label, same_taint, scheduling_errors, shared_owner, Cause,
    Hit,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW204",
    slug: "taint-not-tolerated",
    title: "The pod does not tolerate the NodePool's taint",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The NodePool puts a taint on every node it launches, and the pod has no toleration for it, so
Karpenter will not launch a node from that NodePool for the pod.

Signals (inside `Failed to schedule pod, ...` and `could not schedule pod`), in the three forms
Karpenter used: `did not tolerate <k>=<v>:<Effect>` (v1.0 to v1.1, `k=:E` for an empty value),
`did not tolerate <k>[=<v>]:<Effect>` (v1.2 to v1.4) and `did not tolerate taint
(taint=<k>[=<v>]:<Effect>)` (v1.5+); before v1 (v0.32 to v0.37) the first form. One taint
that several pods do not tolerate, on one NodePool or several, is one diagnosis naming them
all, with each pod's line as evidence. When every NodePool tried fails on a taint and
nothing else, the pods' taints are one diagnosis: the fix is the toleration of the one NodePool
the pods are meant for, and each taint's toleration is given for that choice. The scheduler's `had untolerated taint {...}` is about
existing nodes, not Karpenter's NodePools, and is not this rule.

## Why it happens
Dedicated NodePools (GPU, batch, system add-ons with `CriticalAddonsOnly`) are tainted so that
only workloads that opt in land there. A pod meant for such a NodePool lacks the toleration;
a pod not meant for it should match another NodePool, and the other clauses of the same message
say why it does not.

When the pod is in the input and has a toleration for the taint's key that still does not match
(another value with operator `Equal`, another effect, a value against a taint without one, the
key in another case), the diagnosis names the difference: the fix is to correct that toleration.

An agent's readiness taint (`node.cilium.io/agent-not-ready`, `ebs.csi.aws.com/agent-not-ready`,
`efs.csi.aws.com/agent-not-ready`) listed under the NodePool's `taints` instead of its
`startupTaints` blocks every pod: Karpenter expects pods to tolerate `taints`, while the agent
removes a startup taint once it runs.

## How to fix
Add the toleration to the pod template (YAML filled in with the taint), or let the pod use a
NodePool without the taint (look at the nearest NodePool's own failure). A readiness taint moves
to `startupTaints` instead: tolerating it would start pods before the agent is ready.
"#,
};

const SIGNALS: &[&str] = &[
    "could not schedule pod",
    "failed to schedule pod",
    "did not tolerate",
];

/// One taint as a grouping key: `key=value:Effect`, an empty value being no value (v1.0's
/// `k=:E` and v1.2's `k:E` are the same taint).
fn taint_key(t: &Taint) -> String {
    format!(
        "{}={}:{}",
        t.key,
        t.value.as_deref().unwrap_or_default(),
        t.effect
    )
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let errors = scheduling_errors(facts);
    // One diagnosis per taint, whatever the number of pods and NodePools that carry it.
    let groups = group_hits_across_pods(
        &errors,
        |c| matches!(c.cause, Cause::Taint(_)),
        |c| match &c.cause {
            Cause::Taint(text) => taint_key(&parse_taint(text)),
            _ => String::new(),
        },
    );
    let mut out = Vec::new();
    // Plain taint groups whose messages fail on taints alone: when several cover the same pods
    // through the same messages, every NodePool tried is tainted and they become one diagnosis.
    let mut plain: Vec<PlainTaint> = Vec::new();
    for hits in groups {
        let first = hits[0];
        let Cause::Taint(text) = &first.clause.cause else {
            continue;
        };
        let taint = parse_taint(text);
        // Before v0.32 the tainted pool is a Provisioner.
        let pw = if hits.iter().any(|h| h.clause.provisioner)
            || crate::rules::version::before_v0_32(facts)
        {
            "Provisioner"
        } else {
            "NodePool"
        };
        let pods = hit_pods(&hits);
        let mut pools: Vec<String> = Vec::new();
        let mut unnamed = false;
        for h in &hits {
            match &h.clause.nodepool {
                Some(np) if !pools.contains(np) => pools.push(np.clone()),
                Some(_) => {}
                None => unnamed = true,
            }
        }
        // v1.5+ names no NodePool for a taint clause: the scheduling parser names it from the
        // NodePools of the input when only one carries the taint; several that carry it are
        // named here as the candidates.
        let carriers: Vec<String> = facts
            .nodepools
            .iter()
            .filter(|p| p.taints.iter().any(|t| same_taint(t, &taint)))
            .map(|p| p.meta.name.clone())
            .collect();
        let pool = match (pools.as_slice(), unnamed) {
            ([], _) if carriers.len() > 1 => {
                format!("a {pw} ({} carry it)", pools_label(pw, &carriers))
            }
            ([], _) => format!("a {pw}"),
            (named, false) => pools_label(pw, named),
            (named, true) => format!("{} and another {pw}", pools_label(pw, named)),
        };
        let verb = if pods.len() > 1 { "do" } else { "does" };
        let mut summary = format!(
            "{} {verb} not tolerate taint {text} of {pool}.",
            pods_label(&pods)
        );
        let system = taint.key == "CriticalAddonsOnly";
        if system {
            summary.push_str(&format!(" CriticalAddonsOnly reserves that {pw} for cluster add-ons: a workload pod usually belongs on another {pw}."));
        }
        let agent = readiness_agent(&taint.key);
        if let Some(agent) = agent {
            summary.push_str(&format!(
                " {} is a readiness taint that {agent} removes once its agent runs on the node: it belongs in the {pw}'s startupTaints, which pods need not tolerate; listed under taints it keeps every pod without the toleration off the {pw}.",
                taint.key
            ));
        }
        let mismatches = mismatched_tolerations(facts, &pods, &taint);
        for (pod, why) in &mismatches {
            summary.push_str(&format!(
                " Pod {} does have a toleration for key {}, but {why}: a toleration matches only when key, effect (empty means all) and, with operator Equal, value all match.",
                pod.qualified_name(),
                taint.key
            ));
        }
        summary.push_str(&group_nearest_note(&hits));
        // A NodePool the message names for this taint carries it, whatever the input shows
        // of its spec (a `kubectl get nodepools` table lists no taints).
        let untainted: Vec<&str> = facts
            .nodepools
            .iter()
            .filter(|p| p.taints.is_empty() && !pools.contains(&p.meta.name))
            .map(|p| p.meta.name.as_str())
            .collect();
        // The workload to edit, when every pod comes from the same one.
        let template = match shared_owner(facts, &pods) {
            Some(o) => pod_template_of(&o, "<namespace>"),
            None => "the pod template (spec.template.spec of its Deployment/StatefulSet/Job)"
                .to_string(),
        };
        let toleration = Remediation::yaml(
            if mismatches.is_empty() {
                format!("Add a toleration for {text} to {template}:")
            } else {
                format!(
                    "Correct the toleration for {} in {template} to match {text}:",
                    taint.key
                )
            },
            toleration_yaml(&taint),
        );
        let other = Remediation::text(if untainted.is_empty() {
            format!("Or let the pod use a {pw} without this taint: fix what keeps it off the nearest such {pw} (the other clauses of the same message).")
        } else {
            format!(
                "Or let the pod use a {pw} without this taint ({}): fix what keeps it off that {pw} (the other clauses of the same message).",
                untainted.join(", ")
            )
        });
        let steps = if agent.is_some() {
            // A toleration would let pods start before the agent (the CNI, the CSI node
            // plugin) is ready: the taint is misplaced, not the pods.
            let np = pools.first().map_or("<nodepool>", String::as_str);
            let (path, indent, resource) = if pw == "Provisioner" {
                ("spec:\n  startupTaints:\n", "    ", "provisioner")
            } else {
                (
                    "spec:\n  template:\n    spec:\n      startupTaints:\n",
                    "        ",
                    "nodepool",
                )
            };
            let value = taint
                .value
                .as_deref()
                .map_or(String::new(), |v| format!("{indent}  value: \"{v}\"\n"));
            vec![Remediation::yaml(
                format!("Move the taint from `taints` to `startupTaints` in {pw} {np} (`kubectl edit {resource} {np}`):"),
                format!(
                    "{path}{indent}- key: {}\n{value}{indent}  effect: {}\n",
                    taint.key, taint.effect
                ),
            )]
        } else if system {
            vec![other, toleration]
        } else {
            vec![toleration, other]
        };
        if pools.is_empty() {
            pools = match carriers.as_slice() {
                [_, _, ..] => carriers.clone(),
                _ => Vec::new(),
            };
        }
        let taints_only = hits.iter().all(|h| {
            h.error
                .clauses
                .iter()
                .all(|c| matches!(c.cause, Cause::Taint(_)))
        });
        if taints_only && mismatches.is_empty() && agent.is_none() && !system {
            let messages = hits
                .iter()
                .map(|h| h.error.message as *const Message as usize)
                .collect();
            plain.push(PlainTaint {
                pods,
                messages,
                text: text.clone(),
                taint,
                pool,
                pools,
                pw,
                template,
                hits,
                single: Diagnosis::new(&META, summary).with_remediation(steps),
            });
            continue;
        }
        out.push(
            Diagnosis::new(&META, summary)
                .with_objects(pods.iter())
                .with_node_pools(&pools)
                .with_messages_of(hit_messages_of(&hits))
                .with_remediation(steps),
        );
    }
    while !plain.is_empty() {
        let first = plain.remove(0);
        let (same, rest): (Vec<_>, Vec<_>) = plain
            .into_iter()
            .partition(|p| p.pods == first.pods && p.messages == first.messages);
        plain = rest;
        if same.is_empty() {
            let PlainTaint {
                pods,
                pools,
                hits,
                single,
                ..
            } = first;
            out.push(
                single
                    .with_objects(pods.iter())
                    .with_node_pools(&pools)
                    .with_messages_of(hit_messages_of(&hits)),
            );
            continue;
        }
        out.push(every_pool_tainted(first, same));
    }
    out
}

/// One taint group that needs nothing but a toleration: no near-miss toleration, no readiness
/// or add-on taint, and every clause of its messages a taint.
struct PlainTaint<'e, 'a> {
    pods: Vec<ObjectRef>,
    /// The messages of its hits, by address: groups from the same messages merge.
    messages: std::collections::BTreeSet<usize>,
    text: String,
    taint: Taint,
    /// The pool as the summary names it (`NodePool "gpu"`, `a NodePool`).
    pool: String,
    pools: Vec<String>,
    pw: &'static str,
    template: String,
    hits: Vec<Hit<'e, 'a>>,
    /// The diagnosis it makes on its own, without objects and evidence.
    single: Diagnosis,
}

/// The pods fail on a taint at every NodePool tried: one diagnosis naming every taint, since
/// the fix is the toleration of whichever NodePool the pods are meant for, not all of them.
fn every_pool_tainted(first: PlainTaint<'_, '_>, same: Vec<PlainTaint<'_, '_>>) -> Diagnosis {
    let pw = first.pw;
    let verb = if first.pods.len() > 1 { "do" } else { "does" };
    let all: Vec<&PlainTaint> = std::iter::once(&first).chain(same.iter()).collect();
    let taints: Vec<String> = all
        .iter()
        .map(|p| {
            if p.pool.starts_with("a ") {
                p.text.clone()
            } else {
                format!("{} ({})", p.text, p.pool)
            }
        })
        .collect();
    let unnamed = all.iter().all(|p| p.pools.is_empty());
    let (them, belong) = if first.pods.len() > 1 {
        ("them", "the pods belong")
    } else {
        ("it", "the pod belongs")
    };
    let mut summary = format!(
        "{} {verb} not tolerate the taint of any of the {} {pw}s tried: {}. Every {pw} tried carries a taint that keeps {them} off, so Karpenter has none to launch a node from.",
        pods_label(&first.pods),
        all.len(),
        taints.join("; "),
    );
    if unnamed {
        summary.push_str(&format!(
            " This Karpenter version does not name the {pw} of each taint: `kubectl get nodepools -o yaml` shows which carries which."
        ));
    }
    let mut steps = vec![Remediation::text(format!(
        "Decide which {pw} {belong} on and add only that {pw}'s toleration to {}; a toleration for every taint would let {them} land on all of these {pw}s.",
        first.template
    ))];
    for p in &all {
        let whose = if p.pool.starts_with("a ") {
            String::new()
        } else {
            format!(" ({})", p.pool)
        };
        steps.push(Remediation::yaml(
            format!("For {}{whose}:", p.text),
            toleration_yaml(&p.taint),
        ));
    }
    steps.push(Remediation::text(format!(
        "Or give general workloads a {pw} without a taint, if none of these is meant for {them}."
    )));
    let mut pools: Vec<String> = Vec::new();
    let mut hits: Vec<Hit<'_, '_>> = Vec::new();
    for p in &all {
        for np in &p.pools {
            if !pools.contains(np) {
                pools.push(np.clone());
            }
        }
        hits.extend(p.hits.iter().copied());
    }
    Diagnosis::new(&META, summary)
        .with_objects(first.pods.iter())
        .with_node_pools(&pools)
        .with_messages_of(hit_messages_of(&hits))
        .with_remediation(steps)
}

/// The pods that carry a toleration for the taint's key that still does not tolerate it, with
/// what differs (value, effect, operator, or the key's case).
fn mismatched_tolerations(
    facts: &Facts,
    pods: &[ObjectRef],
    taint: &Taint,
) -> Vec<(ObjectRef, String)> {
    let mut out = Vec::new();
    for r in pods {
        let Some(pod) = facts.pod(r) else {
            continue;
        };
        if pod.tolerations.iter().any(|t| tolerates(t, taint)) {
            continue;
        }
        let why = pod.tolerations.iter().find_map(|t| mismatch(t, taint));
        if let Some(why) = why {
            out.push((r.clone(), why));
        }
    }
    out
}

/// Kubernetes' rule: an empty key with `Exists` tolerates everything; otherwise the keys are
/// equal, the effect is empty or equal, and `Exists` or an equal value.
fn tolerates(t: &Toleration, taint: &Taint) -> bool {
    let exists = t.operator.as_deref() == Some("Exists");
    let effect_ok = t
        .effect
        .as_deref()
        .is_none_or(|e| e.is_empty() || e == taint.effect);
    match t.key.as_deref().filter(|k| !k.is_empty()) {
        None => exists && effect_ok,
        Some(k) => {
            k == taint.key
                && effect_ok
                && (exists
                    || t.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or(""))
        }
    }
}

/// What keeps a toleration for the taint's key (or the same key in another case) from
/// tolerating it.
fn mismatch(t: &Toleration, taint: &Taint) -> Option<String> {
    let key = t.key.as_deref()?;
    if key != taint.key {
        return key
            .eq_ignore_ascii_case(&taint.key)
            .then(|| format!("its key is written `{key}`: keys are case-sensitive"));
    }
    let mut why: Vec<String> = Vec::new();
    let exists = t.operator.as_deref() == Some("Exists");
    let taint_value = taint.value.as_deref().unwrap_or("");
    if !exists {
        let value = t.value.as_deref().unwrap_or("");
        if value != taint_value {
            why.push(match (value.is_empty(), taint_value.is_empty()) {
                (true, false) => format!("it has operator Equal with no value while the taint's value is `{taint_value}` (use that value, or operator Exists)"),
                (false, true) => format!("it expects value `{value}` while the taint has none (use operator Exists)"),
                _ => format!("it expects value `{value}` while the taint's value is `{taint_value}`"),
            });
        }
    }
    if let Some(effect) = t
        .effect
        .as_deref()
        .filter(|e| !e.is_empty() && *e != taint.effect)
    {
        why.push(format!(
            "its effect is {effect} while the taint's is {}",
            taint.effect
        ));
    }
    (!why.is_empty()).then(|| why.join(", and "))
}

/// Who removes a readiness taint (`<agent>/agent-not-ready`): Karpenter's docs list these
/// as NodePool startupTaints.
fn readiness_agent(key: &str) -> Option<&'static str> {
    if !key.ends_with("/agent-not-ready") {
        return None;
    }
    Some(match key {
        "node.cilium.io/agent-not-ready" => "Cilium",
        "ebs.csi.aws.com/agent-not-ready" => "the EBS CSI driver",
        "efs.csi.aws.com/agent-not-ready" => "the EFS CSI driver",
        _ => "its agent",
    })
}

fn toleration_yaml(t: &Taint) -> String {
    let effect = if t.effect.is_empty() {
        String::new()
    } else {
        format!("\n    effect: \"{}\"", t.effect)
    };
    match &t.value {
        Some(v) => format!(
            "tolerations:\n  - key: \"{}\"\n    operator: \"Equal\"\n    value: \"{v}\"{effect}\n",
            t.key
        ),
        None => format!(
            "tolerations:\n  - key: \"{}\"\n    operator: \"Exists\"{effect}\n",
            t.key
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{Message, MessageOrigin, NodePool};
    use crate::testing::{check_only, ids};

    /// Before v0.32 the tainted pool is a Provisioner: the summary and steps say so.
    #[test]
    fn a_provisioners_taint_is_the_provisioners() {
        let line = "2023-05-02T11:20:31.440Z\tERROR\tcontroller.provisioner\tCould not schedule pod, incompatible with provisioner \"gpu\", daemonset overhead={\"cpu\":\"300m\"}, did not tolerate nvidia.com/gpu=:NoSchedule\t{\"commit\": \"5a2fe84\", \"pod\": \"vision/detector-0\"}";
        let d = &check_only("KW204", line).diagnoses[0];
        assert!(
            d.summary.ends_with("of Provisioner \"gpu\"."),
            "{}",
            d.summary
        );
        assert!(
            d.remediation.iter().all(|r| !r.text.contains("NodePool")),
            "{:?}",
            d.remediation
        );
    }

    #[test]
    fn an_agent_readiness_taint_belongs_in_startup_taints() {
        let report = check_only(
            "KW204",
            r#"  Warning  FailedScheduling  14s  karpenter  Failed to schedule pod, incompatible with nodepool "default", daemonset overhead={}, did not tolerate taint (taint=ebs.csi.aws.com/agent-not-ready:NoExecute)"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("the EBS CSI driver removes"),
            "{}",
            d.summary
        );
        assert_eq!(
            d.remediation.len(),
            1,
            "no toleration advice: {:?}",
            d.remediation
        );
        let yaml = d.remediation[0].yaml.as_deref().unwrap_or_default();
        assert_eq!(
            yaml,
            "spec:\n  template:\n    spec:\n      startupTaints:\n        - key: ebs.csi.aws.com/agent-not-ready\n          effect: NoExecute\n"
        );
        assert_eq!(
            readiness_agent("example.com/agent-not-ready"),
            Some("its agent")
        );
        assert_eq!(readiness_agent("nvidia.com/gpu"), None);
    }

    #[test]
    fn v1_5_form_every_pool_tainted_is_one_diagnosis_with_a_toleration_per_taint() {
        let report = check_only(
            "KW204",
            r#"{"level":"ERROR","message":"could not schedule pod","Pod":{"name":"docdb-proxy-0","namespace":"storage"},"error":"did not tolerate taint (taint=example.io/tier=A400:NoSchedule); did not tolerate taint (taint=example.io/set=lowdisruption:NoSchedule)"}"#,
        );
        assert_eq!(ids(&report), ["KW204"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("any of the 2 NodePools tried"),
            "{}",
            d.summary
        );
        let yamls: Vec<&str> = d
            .remediation
            .iter()
            .filter_map(|r| r.yaml.as_deref())
            .collect();
        assert_eq!(yamls.len(), 2, "{:?}", d.remediation);
        assert!(
            yamls[0].contains("key: \"example.io/tier\""),
            "{}",
            yamls[0]
        );
        assert!(yamls[0].contains("value: \"A400\""), "{}", yamls[0]);
        assert!(
            yamls[1].contains("value: \"lowdisruption\""),
            "{}",
            yamls[1]
        );
    }

    /// A pod that also fails a NodePool on something else is not kept off by taints alone:
    /// each taint stays its own diagnosis beside the other rule's.
    #[test]
    fn a_taint_beside_another_cause_stays_per_taint() {
        let report = check_only(
            "KW204",
            r#"Failed to schedule pod, incompatible with nodepool "a", daemonset overhead={}, did not tolerate x=1:NoSchedule; incompatible with nodepool "b", daemonset overhead={}, did not tolerate y=2:NoSchedule; incompatible with nodepool "c", daemonset overhead={}, incompatible requirements, label "team" does not have known values"#,
        );
        assert_eq!(ids(&report), ["KW204", "KW204"]);
    }

    #[test]
    fn v1_0_and_v1_2_forms() {
        for (text, np) in [
            (
                r#"Failed to schedule pod, incompatible with nodepool "jobs", daemonset overhead={"cpu":"1"}, did not tolerate pool=jobs:NoSchedule"#,
                "jobs",
            ),
            (
                r#"Failed to schedule pod, incompatible with nodepool "system", daemonset overhead={}, did not tolerate CriticalAddonsOnly:NoSchedule"#,
                "system",
            ),
            (
                r#"Failed to schedule pod, incompatible with nodepool "gpu", daemonset overhead={}, did not tolerate nvidia.com/gpu=:NoSchedule"#,
                "gpu",
            ),
        ] {
            let report = check_only("KW204", text);
            assert_eq!(ids(&report), ["KW204"], "{text}");
            assert_eq!(report.diagnoses[0].node_pool.as_deref(), Some(np));
        }
    }

    #[test]
    fn nodepool_named_from_the_facts() {
        let mut facts = Facts::default();
        let text =
            "Failed to schedule pod, did not tolerate taint (taint=workload=batch:NoSchedule)";
        facts.messages.push(Message {
            origin: MessageOrigin::Event,
            text: text.into(),
            evidence: Evidence::new("events", 3, text),
            object: None,
            nodepool: None,
            reason: None,
            component: None,
            time: None,
        });
        let mut np = NodePool::default();
        np.meta.name = "batch-spot".into();
        np.taints = vec![parse_taint("workload=batch:NoSchedule")];
        facts.nodepools.push(np);
        let d = &check(&facts)[0];
        assert_eq!(d.node_pool.as_deref(), Some("batch-spot"));
    }

    #[test]
    fn one_taint_across_pods_and_nodepools_is_one_diagnosis() {
        let line = |pod: &str| {
            format!(
                "{{\"level\":\"ERROR\",\"message\":\"Could not schedule pod, incompatible with nodepool \\\"a\\\", daemonset overhead={{}}, did not tolerate gpu=:NoSchedule; incompatible with nodepool \\\"b\\\", daemonset overhead={{}}, did not tolerate gpu=:NoSchedule\",\"pod\":\"ml/{pod}\"}}\n"
            )
        };
        let text = format!("{}{}{}", line("p-0"), line("p-1"), line("p-2"));
        let report = check_only("KW204", &text);
        assert_eq!(ids(&report), ["KW204"], "{text}");
        let d = &report.diagnoses[0];
        assert_eq!(d.objects.len(), 3);
        assert_eq!(d.node_pools, ["a", "b"]);
        assert_eq!(d.evidence.len(), 3);
        assert!(
            d.summary.starts_with(
                "Pods ml/p-0, ml/p-1 and ml/p-2 do not tolerate taint gpu=:NoSchedule of NodePools \"a\" and \"b\"."
            ),
            "{}",
            d.summary
        );
        // A NodePool the message names for the taint is no taint-free alternative, even when
        // the input lists it without its spec.
        let listed = format!("{text}$ kubectl get nodepools\nNAME  NODECLASS  NODES  READY  AGE\na  default  1  True  9d\nb  default  1  True  9d\nplain  default  3  True  9d\n");
        let d = &check_only("KW204", &listed).diagnoses[0];
        assert!(
            d.remediation[1].text.contains("(plain)"),
            "{}",
            d.remediation[1].text
        );
        // The v1.2 `k:E` form of the same taint is the same cause.
        let mixed = format!(
            "{}Warning  FailedScheduling  1m  karpenter  Failed to schedule pod, incompatible with nodepool \"c\", daemonset overhead={{}}, did not tolerate gpu:NoSchedule\n",
            line("p-0")
        );
        let d = &check_only("KW204", &mixed).diagnoses[0];
        assert_eq!(d.node_pools, ["a", "b", "c"]);
    }

    #[test]
    fn scheduler_and_startup_taint_texts_are_not_kw204() {
        for text in [
            "0/3 nodes are available: 1 node(s) had untolerated taint {CriticalAddonsOnly: true}, 2 Insufficient cpu.",
            "Initialized=Unknown StartupTaintsExist: StartupTaint \"node.cilium.io/agent-not-ready=true:NoExecute\" still exists",
        ] {
            assert!(ids(&check_only("KW204", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn toleration_mismatches_are_named() {
        let taint = |k: &str, v: Option<&str>, e: &str| Taint {
            key: k.into(),
            value: v.map(str::to_string),
            effect: e.into(),
        };
        let tol = |k: &str, op: &str, v: Option<&str>, e: Option<&str>| Toleration {
            key: Some(k.into()),
            operator: Some(op.into()),
            value: v.map(str::to_string),
            effect: e.map(str::to_string),
        };
        let t = taint("dedicated", Some("gpu"), "NoSchedule");
        assert!(tolerates(&tol("dedicated", "Equal", Some("gpu"), None), &t));
        assert!(tolerates(
            &tol("dedicated", "Exists", None, Some("NoSchedule")),
            &t
        ));
        assert!(tolerates(
            &Toleration {
                operator: Some("Exists".into()),
                ..Toleration::default()
            },
            &t
        ));
        let why = mismatch(&tol("dedicated", "Equal", Some("batch"), None), &t).unwrap();
        assert!(why.contains("expects value `batch`"), "{why}");
        let why = mismatch(&tol("dedicated", "Equal", None, None), &t).unwrap();
        assert!(why.contains("operator Equal with no value"), "{why}");
        let why = mismatch(&tol("dedicated", "Exists", None, Some("NoExecute")), &t).unwrap();
        assert!(why.contains("effect is NoExecute"), "{why}");
        let why = mismatch(&tol("Dedicated", "Exists", None, None), &t).unwrap();
        assert!(why.contains("case-sensitive"), "{why}");
        let no_value = taint("CriticalAddonsOnly", None, "NoSchedule");
        let why = mismatch(
            &tol("CriticalAddonsOnly", "Equal", Some("true"), None),
            &no_value,
        )
        .unwrap();
        assert!(why.contains("use operator Exists"), "{why}");
        // Another key is no mismatch to explain.
        assert!(mismatch(&tol("team", "Equal", Some("a"), None), &t).is_none());
    }

    #[test]
    fn a_toleration_for_another_key_names_no_mismatch() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: batch-7\n  namespace: jobs\nspec:\n  tolerations:\n  - key: team\n    operator: Equal\n    value: data\n    effect: NoSchedule\n  containers:\n  - name: w\n    image: busybox\nstatus:\n  phase: Pending\n---\n{\"level\":\"ERROR\",\"message\":\"could not schedule pod\",\"Pod\":{\"name\":\"batch-7\",\"namespace\":\"jobs\"},\"error\":\"did not tolerate taint (taint=dedicated=batch:NoSchedule)\"}\n";
        let report = check_only("KW204", text);
        assert_eq!(ids(&report), ["KW204"]);
        let d = &report.diagnoses[0];
        assert!(
            !d.summary.contains("does have a toleration"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0].text.starts_with("Add a toleration"));
    }
}
