//! KW200 karpenter-not-acting.

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, MessageOrigin, ObjectRef};
use crate::rules::kw2xx::kw209_pod_ignored_by_karpenter::{ignored_by_spec, UNBOUND_IMMEDIATE};
use crate::rules::kw2xx::scheduling::{pod_namespace, pod_ref, record_of, PodIndex};
use crate::rules::text::KarpenterPods;
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW200",
    slug: "karpenter-not-acting",
    title: "The pod is Pending and Karpenter shows no sign of acting on it",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The kube-scheduler cannot place the pod (`FailedScheduling`, `0/<n> nodes are available: ...`),
which is exactly when Karpenter should step in, but nothing from Karpenter answers: no
`FailedScheduling` or `Nominated` event from `karpenter` on the pod, no NodeClaim for it, no
Karpenter log line naming it.

Signal: the scheduler's `0/<n> nodes are available` (or, with no node at all, `no nodes available
to schedule pods`) on a Pending pod, with none of the above. Another autoscaler's answer
(Cluster Autoscaler's `TriggeredScaleUp` or `NotTriggerScaleUp`, any event from
`cluster-autoscaler`) also counts as an answer.
The scheduler's own reasons (`Insufficient cpu`, `had untolerated taint`, `didn't match Pod's
node affinity/selector`) are about existing nodes, not about what Karpenter could launch. Not
this rule: a pod Karpenter leaves alone by design (KW209): a DaemonSet's pod, a pod whose claim
is unbound and binds immediately (`pod has unbound immediate PersistentVolumeClaims`), a pod
requiring `karpenter.sh/nodepool DoesNotExist`; nor a pod when the provisioner logs that it has
no (ready) NodePool (KW208).

## Why it happens
In order of likelihood: Karpenter is not running or not the leader (its own pods Pending,
crash-looping, or a replica that lost the lease); Karpenter ignores the pod on purpose (KW209:
`karpenter.sh/nodepool DoesNotExist`, matchFields, PVC problems: at debug level it logs `ignoring
pod`); there is no NodePool, or none is ready (KW208).

## How to fix
Walk the checklist: `kubectl get pods -n <karpenter-ns> -l app.kubernetes.io/name=karpenter`
(running? ready?), `kubectl logs -n <karpenter-ns> -l app.kubernetes.io/name=karpenter` (errors,
the pod's name), `kubectl get nodepools` (any, Ready?), `kubectl get nodeclaims`. Karpenter's own
pods need capacity Karpenter does not manage (a managed node group or Fargate). A log with
`attempting to acquire leader lease` and no `successfully acquired lease` is a standby replica's
(`kubectl logs deploy/karpenter` picks any replica): the Lease's `holderIdentity` names the
leader, whose log is the one to read.
"#,
};

const SIGNALS: &[&str] = &[
    "nodes are available",
    "no nodes available to schedule pods",
    // Karpenter's INFO lines that show it found or provisioned for a pod.
    "found provisionable pod",
    "computed new nodeclaim",
    "computed new machine",
    "created nodeclaim",
    "launched nodeclaim",
    "created machine",
    "launched machine",
    // client-go's leader election: `attempting to acquire leader lease <ns>/<name>...` (newer:
    // `Attempting to acquire leader lease...` with a `lock` field), then `successfully acquired
    // lease <ns>/<name>` on the replica that leads.
    "acquire leader lease",
    "acquired lease",
];

/// The lease a replica waits for, when the Karpenter logs in the input come from a standby:
/// it tried for the leader lease and no line says it (or any replica shown) got it.
/// `Some(None)` when the line does not name the lease.
pub(crate) fn standby_lease(facts: &Facts) -> Option<Option<String>> {
    let attempt = facts
        .logs
        .iter()
        .find(|r| contains_ignore_ascii_case(&r.message, "acquire leader lease"))?;
    if facts
        .logs
        .iter()
        .any(|r| contains_ignore_ascii_case(&r.message, "acquired lease"))
    {
        return None;
    }
    let from_text = find_ignore_ascii_case(&attempt.message, "leader lease").and_then(|at| {
        let lock = attempt.message[at + "leader lease".len()..]
            .trim()
            .trim_end_matches('.')
            .trim();
        (lock.contains('/') && !lock.contains(' ')).then(|| lock.to_string())
    });
    let from_field = || {
        attempt
            .fields
            .get("lock")
            .and_then(|v| v.as_str())
            .filter(|l| l.contains('/'))
            .map(str::to_string)
    };
    Some(from_text.or_else(from_field))
}

/// A pod the scheduler could not place, with the messages saying so.
struct Candidate<'a> {
    pod: Option<ObjectRef>,
    messages: Vec<&'a Message>,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let index = PodIndex::of(facts);
    let mut candidates: Vec<Candidate> = Vec::new();
    // Where each pod's candidate is: thousands of pods would make a search quadratic.
    let mut position: BTreeMap<Option<ObjectRef>, usize> = BTreeMap::new();
    for m in facts
        .messages_containing_any(&["nodes are available", "no nodes available to schedule pods"])
    {
        if is_karpenter_text(&m.text)
            || contains_ignore_ascii_case(&m.text, "vpc.amazonaws.com/pod-eni")
            || contains_ignore_ascii_case(&m.text, UNBOUND_IMMEDIATE)
        {
            // KW210 explains a pod-eni shortage on a node Karpenter did launch; KW209 a pod
            // waiting for its claim to bind, which Karpenter ignores until then.
            continue;
        }
        let pod = scheduler_pod(facts, m);
        if pod
            .as_ref()
            .is_some_and(|p| !still_pending(&index, p) || scheduled_since(&index, p, m))
        {
            continue;
        }
        // A pod whose spec keeps Karpenter away is KW209's: Karpenter stays silent on purpose.
        let ignored = pod.as_ref().is_some_and(|p| {
            index
                .pods_named(&p.name)
                .iter()
                .filter(|fp| p.namespace.is_none() || fp.meta.namespace == p.namespace)
                .any(|fp| ignored_by_spec(fp).is_some())
        });
        if ignored {
            continue;
        }
        match position.get(&pod) {
            Some(&i) => candidates[i].messages.push(m),
            None => {
                position.insert(pod.clone(), candidates.len());
                candidates.push(Candidate {
                    pod,
                    messages: vec![m],
                });
            }
        }
    }
    if pod_got_scheduled(facts) {
        candidates.retain(|c| c.pod.is_some());
    }
    if candidates.is_empty() {
        return Vec::new();
    }
    // Gathered only now: it reads every Karpenter log line, needless without a candidate.
    let acted = KarpenterActs::of(facts);
    let silent: Vec<Candidate> = candidates
        .into_iter()
        .filter(|c| !acted.on(c.pod.as_ref()))
        .collect();
    // Only Karpenter's own pods wait, while it runs (another replica serves): they wait by
    // design (KW209), and nothing else shows Karpenter silent.
    let karpenter_pods = KarpenterPods::new(facts);
    let all_own = silent
        .iter()
        .all(|c| c.pod.as_ref().is_some_and(|p| karpenter_pods.contains(p)));
    if silent.is_empty() || (all_own && not_running(facts).is_none()) {
        return Vec::new();
    }
    vec![diagnose(facts, &silent)]
}

/// Karpenter's own texts never say `nodes are available`; guard anyway against a Karpenter
/// message quoting the scheduler.
fn is_karpenter_text(text: &str) -> bool {
    contains_ignore_ascii_case(text, "failed to schedule pod")
        || contains_ignore_ascii_case(text, "could not schedule pod")
}

/// The pod a scheduler message is about: the event's object, a `pod/<name>` in an events
/// table row, or the only pod the input describes.
fn scheduler_pod(facts: &Facts, m: &Message) -> Option<ObjectRef> {
    if let Some(o) = m
        .object
        .as_ref()
        .filter(|o| o.kind.eq_ignore_ascii_case("pod"))
    {
        return Some(o.clone());
    }
    if let Some(i) = find_ignore_ascii_case(&m.text, "pod/") {
        let name: String = m.text[i + 4..]
            .chars()
            .take_while(|c| !c.is_whitespace())
            .collect();
        if !name.is_empty() {
            return Some(pod_ref(&name));
        }
    }
    match facts.pods.as_slice() {
        [only] => Some(only.object_ref()),
        _ => None,
    }
}

fn still_pending(index: &PodIndex<'_>, pod: &ObjectRef) -> bool {
    index
        .pods_named(&pod.name)
        .first()
        .is_none_or(|p| p.phase.is_none() || (p.is_pending() && p.node_name.is_none()))
}

/// The scheduler's `Scheduled` event (`Successfully assigned <ns>/<pod> to <node>`) on `pod`,
/// no older than `complaint`: the pod left Pending (a `kubectl get events` table has no pod
/// status to say so). An older one belongs to an earlier pod of the same name (a StatefulSet
/// pod recreated after a drain), which says nothing about this one.
fn scheduled_since(index: &PodIndex<'_>, pod: &ObjectRef, complaint: &Message) -> bool {
    let last_seen = |age: Option<&str>| {
        age.and_then(|a| crate::rules::time::age_seconds(a.split(" (").next().unwrap_or(a)))
    };
    let complaint_age = index
        .event_at(&complaint.evidence)
        .and_then(|e| last_seen(e.age.as_deref()));
    // The events naming the pod: its own, and Scheduled events assigning it.
    index.events_about(&pod.name).iter().any(|e| {
        let names_pod = e.object.as_ref().is_some_and(|o| {
            o.name == pod.name
                && (o.namespace.is_none()
                    || pod.namespace.is_none()
                    || o.namespace == pod.namespace)
        }) || contains_ignore_ascii_case(&e.message, &format!("/{} to ", pod.name));
        names_pod
            && (e.reason == "Scheduled"
                || contains_ignore_ascii_case(&e.message, "successfully assigned"))
            && match (last_seen(e.age.as_deref()), complaint_age) {
                (Some(scheduled), Some(failed)) => scheduled <= failed,
                _ => true,
            }
    })
}

/// `Successfully assigned <ns>/<pod> to <node>`: the pod left Pending after the scheduler's
/// complaint (the healthy path).
fn pod_got_scheduled(facts: &Facts) -> bool {
    facts
        .messages_containing("successfully assigned")
        .next()
        .is_some()
        || facts
            .pods
            .iter()
            .any(|p| p.phase.as_deref() == Some("Running"))
}

/// The signs that Karpenter looked at a pod, gathered once: asked for each of thousands of
/// pods (a big cluster's `kubectl get events -A`), scanning every event and log line each
/// time would be quadratic.
struct KarpenterActs {
    /// Karpenter's (or another autoscaler's) events and texts about a pod, by pod name.
    answered: BTreeSet<String>,
    /// Such an event or text about no named pod: it may be about any.
    answered_unnamed: bool,
    /// The name-like words of Karpenter's log lines and their fields.
    log_words: BTreeSet<String>,
    /// A Karpenter log line about provisioning pods, whichever.
    provisioning_logged: bool,
    /// Signs that do not depend on the pod.
    at_work: bool,
    /// `found provisionable pod(s)` cut short (`and 4 other(s)`).
    truncated_list: bool,
}

impl KarpenterActs {
    fn of(facts: &Facts) -> Self {
        let mut acts = KarpenterActs {
            answered: BTreeSet::new(),
            answered_unnamed: false,
            log_words: BTreeSet::new(),
            provisioning_logged: false,
            at_work: false,
            truncated_list: false,
        };
        let mut answer = |object: Option<&ObjectRef>| match object {
            Some(o) => {
                acts.answered.insert(o.name.clone());
            }
            None => acts.answered_unnamed = true,
        };
        for e in &facts.events {
            // Cluster Autoscaler's `TriggeredScaleUp` (`pod triggered scale-up: [...]`) or
            // `NotTriggerScaleUp` (`pod didn't trigger scale-up: ...`, max node group size,
            // no matching group): another autoscaler answered the pod, so the cluster scales
            // with it and Karpenter's silence is expected; its reasons are not Karpenter's.
            if e.source.eq_ignore_ascii_case("karpenter")
                && matches!(e.reason.as_str(), "FailedScheduling" | "Nominated")
                || matches!(e.reason.as_str(), "TriggeredScaleUp" | "NotTriggerScaleUp")
                || e.source.eq_ignore_ascii_case("cluster-autoscaler")
                || contains_ignore_ascii_case(&e.message, "pod triggered scale-up")
                || contains_ignore_ascii_case(&e.message, "pod didn't trigger scale-up")
            {
                answer(e.object.as_ref());
            }
        }
        for m in
            facts.messages_containing_any(&["failed to schedule pod", "pod should schedule on"])
        {
            answer(m.object.as_ref());
        }
        let name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
        let mut words = |text: &str| {
            for word in text.split(|c: char| !name_char(c)) {
                let word = word.trim_matches('.');
                if !word.is_empty() {
                    acts.log_words.insert(word.to_ascii_lowercase());
                }
            }
        };
        for m in facts
            .messages
            .iter()
            .filter(|m| m.origin == MessageOrigin::KarpenterLog)
        {
            words(&m.text);
            if let Some(r) = record_of(facts, m) {
                for v in r.fields.values() {
                    words(&v.to_string());
                }
            }
            acts.provisioning_logged |= [
                "provisionable pod",
                "schedule pod",
                "created nodeclaim",
                "computed new nodeclaim",
            ]
            .iter()
            .any(|s| contains_ignore_ascii_case(&m.text, s));
        }
        // `found provisionable pod(s)` lists five pods, then `and <n> other(s)`: the pod may
        // be one of the others, so the list is no proof Karpenter passed it over.
        acts.truncated_list = facts.logs.iter().any(|r| {
            ["Pods", "pods"].iter().any(|k| {
                r.fields
                    .get(*k)
                    .and_then(|v| v.as_str())
                    .is_some_and(lists_others)
            })
        });
        // A NodeClaim still on its way (not Ready yet) is Karpenter at work.
        let launching = facts.nodeclaims.iter().any(|c| {
            !c.conditions
                .iter()
                .any(|x| x.condition_type == "Ready" && x.status == "True")
        });
        acts.at_work = launching
            || (!names_any_pod(facts) && provisioning(facts))
            || no_nodepool_answer(facts);
        acts
    }

    /// Any sign that Karpenter looked at `pod` (or, when the pod is unknown, at any pod).
    fn on(&self, pod: Option<&ObjectRef>) -> bool {
        let named = match pod {
            Some(p) => {
                self.answered_unnamed
                    || self.answered.contains(&p.name)
                    || self.log_words.contains(&p.name.to_ascii_lowercase())
                    || self.truncated_list
            }
            None => self.answered_unnamed || !self.answered.is_empty() || self.provisioning_logged,
        };
        named || self.at_work
    }
}

/// A pod list Karpenter cut short: `ns/a, ns/b, ... and 4 other(s)`.
fn lists_others(list: &str) -> bool {
    let Some(i) = list.rfind(" and ") else {
        return false;
    };
    let tail = &list[i + 5..];
    tail.ends_with(" other(s)")
        && tail
            .trim_end_matches(" other(s)")
            .chars()
            .all(|c| c.is_ascii_digit())
}

/// The provisioner's own answer that it has no NodePool to launch from (`no nodepools found`,
/// v1.9+ `no dynamic nodepools found`, v1alpha5 `no provisioners found`) or that it skips a
/// NodePool as not ready (`nodePool not ready`, `ignoring nodepool, not ready`). Karpenter logs
/// these only while it runs a scheduling loop for Pending pods: it is running and acting, and
/// the pod's silence is KW208's, not KW200's.
fn no_nodepool_answer(facts: &Facts) -> bool {
    facts
        .messages
        .iter()
        .filter(|m| m.origin == MessageOrigin::KarpenterLog)
        .any(|m| {
            [
                "no nodepools found",
                "no dynamic nodepools found",
                "no provisioners found",
                "nodepool not ready",
                "ignoring nodepool, not ready",
            ]
            .iter()
            .any(|s| contains_ignore_ascii_case(&m.text, s))
        })
}

/// Whether any Karpenter event or log line in the input names a pod: then a pod it does not
/// name was passed over, and provisioning for others does not count for it.
fn names_any_pod(facts: &Facts) -> bool {
    facts
        .events
        .iter()
        .any(|e| karpenter_pod_event(e).is_some())
        || facts.logs.iter().any(|r| {
            ["Pod", "pod", "Pods", "pods"]
                .iter()
                .any(|k| r.fields.get(*k).is_some_and(|v| !v.is_number()))
        })
}

/// The pod a Karpenter event is about. `kubectl get events` prints no source: Karpenter's pod
/// events are known by their text too.
fn karpenter_pod_event(e: &crate::facts::Event) -> Option<&ObjectRef> {
    let karpenter = e.source.eq_ignore_ascii_case("karpenter")
        || contains_ignore_ascii_case(&e.message, "failed to schedule pod")
        || contains_ignore_ascii_case(&e.message, "pod should schedule on");
    e.object.as_ref().filter(|o| karpenter && o.kind == "Pod")
}

/// The pods Karpenter's events in the input answer (`pod a, pod b`), when any.
fn answered_pods(facts: &Facts) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for o in facts.events.iter().filter_map(karpenter_pod_event) {
        let name = o.qualified_name();
        if !names.contains(&name) {
            names.push(name);
        }
    }
    match names.as_slice() {
        [] => None,
        [one] => Some(format!("pod {one}")),
        [first, rest @ ..] => Some(format!("pod {first} and {} more", rest.len())),
    }
}

/// Karpenter creating or launching NodeClaims (events on NodeClaims, lifecycle log lines): it
/// runs and provisions, even when the input does not say for which pod.
fn provisioning(facts: &Facts) -> bool {
    // Only Karpenter writes events on NodeClaims, whatever the source column says.
    let nodeclaim_event = facts.events.iter().any(|e| {
        e.object.as_ref().is_some_and(|o| {
            o.kind.eq_ignore_ascii_case("NodeClaim") || o.kind.eq_ignore_ascii_case("Machine")
        }) && (matches!(
            e.reason.as_str(),
            "InsufficientCapacityError" | "Launched" | "Registered" | "Initialized"
        ) || contains_ignore_ascii_case(&e.message, "creating instance"))
    });
    nodeclaim_event
        || facts
            .messages_containing_any(&[
                "computed new nodeclaim",
                "computed new machine",
                "created nodeclaim",
                "launched nodeclaim",
                "created machine",
                "launched machine",
                "failed launching nodeclaim",
                "launching nodeclaim, ",
                "launching machine, ",
            ])
            .any(|m| m.origin == MessageOrigin::KarpenterLog)
}

/// What the input says about Karpenter itself not running.
fn not_running(facts: &Facts) -> Option<String> {
    if let Some(d) = facts.karpenter_deployment() {
        if d.ready_replicas.unwrap_or(0) == 0 && d.replicas.unwrap_or(1) > 0 {
            return Some(format!(
                "the Karpenter Deployment {} has no ready replica ({}/{})",
                d.meta.name,
                d.ready_replicas.unwrap_or(0),
                d.replicas.unwrap_or(0)
            ));
        }
    }
    let own: Vec<&crate::facts::Pod> = facts
        .pods
        .iter()
        .filter(|p| p.meta.name.starts_with("karpenter-"))
        .collect();
    let down: Vec<String> = own.iter().filter_map(|p| pod_down(facts, p)).collect();
    if !own.is_empty() && down.len() == own.len() {
        return Some(format!(
            "Karpenter's own pods are not running ({})",
            down.join("; ")
        ));
    }
    // `kubectl get deploy,pods` rows: `deployment.apps/karpenter   0/2 ...`,
    // `pod/karpenter-6b9d7c8f45-m4xkw   0/1   Pending ...`.
    let mut reasons: Vec<String> = Vec::new();
    for m in &facts.messages {
        let mut words = m.text.split_whitespace();
        let (Some(name), Some(ready)) = (words.next(), words.next()) else {
            continue;
        };
        let name = name.rsplit('/').next().unwrap_or(name);
        let is_karpenter = name == "karpenter" || name.starts_with("karpenter-");
        if is_karpenter && ready.starts_with("0/") && ready.len() > 2 {
            let status = words.next().unwrap_or("");
            let reason = if status.chars().all(|c| c.is_ascii_digit()) {
                format!("the Karpenter Deployment has no ready replica ({ready})")
            } else {
                format!("pod {name} is {status} ({ready} ready)")
            };
            if !reasons.contains(&reason) {
                reasons.push(reason);
            }
        }
    }
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// `<name> <state>` when the pod is not serving: not Running, or Running (as `kubectl get pods`
/// shows a crash-looping pod) with a container waiting or the pod not ready.
fn pod_down(facts: &Facts, pod: &crate::facts::Pod) -> Option<String> {
    let waiting = pod
        .containers
        .iter()
        .find_map(|c| {
            c.reason
                .as_deref()
                .filter(|_| c.state.as_deref() == Some("waiting"))
        })
        .or_else(|| {
            // A `kubectl get pods` row's STATUS (`CrashLoopBackOff`, `Error`). Only for a pod
            // without container states: a status's `lastState.terminated` also leaves an
            // `Error` message, about the run before the one now running.
            if pod.containers.iter().any(|c| c.state.is_some()) {
                return None;
            }
            let me = pod.object_ref();
            facts
                .messages
                .iter()
                .filter(|m| {
                    m.origin == MessageOrigin::ObjectField && m.object.as_ref() == Some(&me)
                })
                .find_map(|m| m.reason.as_deref())
        });
    let not_ready = pod
        .conditions
        .iter()
        .any(|c| c.condition_type == "Ready" && c.status == "False")
        || pod.containers.iter().any(|c| c.ready == Some(false));
    let state = match (pod.phase.as_deref(), waiting) {
        (_, Some(reason)) => reason.to_string(),
        (Some("Running"), None) if not_ready => {
            let restarted = pod
                .containers
                .iter()
                .find(|c| c.restart_count.is_some_and(|n| n > 0));
            match restarted {
                Some(c) => format!(
                    "Running but not ready, restarted {} time{}{}",
                    c.restart_count.unwrap_or(0),
                    if c.restart_count == Some(1) { "" } else { "s" },
                    c.last_termination_reason
                        .as_deref()
                        .map(|r| format!(", the last run ended with {r}"))
                        .unwrap_or_default()
                ),
                None => "Running but not ready".to_string(),
            }
        }
        (Some("Running"), None) => return None,
        (phase, None) => phase.unwrap_or("?").to_string(),
    };
    Some(format!("{} {state}", pod.meta.name))
}

fn diagnose(facts: &Facts, silent: &[Candidate<'_>]) -> Diagnosis {
    // Karpenter's own Pending pods are why it is silent, not more pods it passed over: it
    // never provisions for itself (KW209), whether it runs or not.
    let karpenter_pods = KarpenterPods::new(facts);
    let own = |c: &&Candidate<'_>| c.pod.as_ref().is_some_and(|p| karpenter_pods.contains(p));
    let own_waiting: Vec<&ObjectRef> = silent
        .iter()
        .filter(own)
        .filter_map(|c| c.pod.as_ref())
        .collect();
    let victims: Vec<&ObjectRef> = silent
        .iter()
        .filter(|c| !own(c))
        .filter_map(|c| c.pod.as_ref())
        .collect();
    let names =
        |pods: &[&ObjectRef]| -> Vec<String> { pods.iter().map(|p| p.qualified_name()).collect() };
    let mut summary = match (victims.as_slice(), own_waiting.as_slice()) {
        ([], [_, ..]) => format!(
            "Karpenter's own {} Pending with only the kube-scheduler's FailedScheduling: Karpenter never provisions for its own pods (the chart keeps them off its nodes with `karpenter.sh/nodepool DoesNotExist`, KW209), so they need a managed node group or Fargate, and until one runs Karpenter acts on no pod.",
            match names(&own_waiting).as_slice() {
                [one] => format!("pod {one} is"),
                many => format!("pods {} are", many.join(", ")),
            }
        ),
        _ => {
            let who = match names(&victims).as_slice() {
                [] => "The pod is".to_string(),
                [one] => format!("Pod {one} is"),
                many => format!("Pods {} are", many.join(", ")),
            };
            format!(
                "{who} Pending with only the kube-scheduler's FailedScheduling: no Karpenter event, NodeClaim or log line answers."
            )
        }
    };
    // Also from Karpenter's own pods when the paste lists them (`kubectl get pods -A`).
    let ns = crate::rules::text::karpenter_namespace_or_placeholder(facts);
    let mut related: Vec<&'static str> = Vec::new();
    let stopped = not_running(facts);
    let standby = standby_lease(facts);
    if let Some(reason) = &stopped {
        summary.push_str(&format!(" Karpenter is not running: {reason}."));
        if !own_waiting.is_empty() {
            related.push("KW209");
        }
        if !victims.is_empty() && (!own_waiting.is_empty() || reason.contains("Pending")) {
            summary.push_str(" Its own pods cannot run on nodes it manages: they need a managed node group or Fargate.");
        }
    } else if !victims.is_empty() && !own_waiting.is_empty() {
        // Not shown down, but one of its pods waits: a replica may still run, or none does.
        summary.push_str(&format!(
            " Karpenter's own {} Pending too: it never provisions for its own pods (KW209), which need a managed node group or Fargate; if no replica runs, that is why nothing answers.",
            match names(&own_waiting).as_slice() {
                [one] => format!("pod {one} is"),
                many => format!("pods {} are", many.join(", ")),
            }
        ));
        related.extend(["KW209", "KW208"]);
    } else if let Some(answered) = answered_pods(facts) {
        // Karpenter runs: it passed over this pod only.
        summary.push_str(&format!(
            " Karpenter is running (it answered {answered} in the same input) but passed over this pod: check that the pod is not ignored by Karpenter (KW209) and that a ready NodePool could serve it (KW208)."
        ));
        related.extend(["KW209", "KW208"]);
    } else if let Some(lease) = &standby {
        summary.push_str(&format!(
            " The Karpenter log in the input comes from a replica waiting for the leader lease{} (`attempting to acquire leader lease`, and no `successfully acquired lease`): a standby neither acts nor logs decisions, so read the leader's log before concluding; then check that the pod is not ignored by Karpenter (KW209) and that a ready NodePool could serve it (KW208).",
            lease.as_deref().map(|l| format!(" {l}")).unwrap_or_default()
        ));
        related.extend(["KW209", "KW208"]);
    } else {
        summary.push_str(" Check in order: Karpenter running and leader, the pod not ignored by Karpenter (KW209), a ready NodePool (KW208).");
        related.extend(["KW209", "KW208"]);
    }
    // A describe's Events section lists every type: Warnings alone there are not a filter.
    if facts.events.len() > 1
        && facts
            .events
            .iter()
            .all(|e| e.event_type == "Warning" && !e.from_describe)
    {
        summary.push_str(" The events shown are all Warnings: Karpenter's `Nominated` answer is a Normal event, so look at the unfiltered list before concluding.");
    }
    // The scheduler's text read from the pod's own status (`kubectl get pod -o yaml`): no event
    // list was pasted, so Karpenter's answer may simply be missing from the input.
    if facts.events.is_empty()
        && facts.logs.is_empty()
        && silent
            .iter()
            .flat_map(|c| c.messages.iter())
            .all(|m| m.origin == MessageOrigin::Condition)
    {
        summary.push_str(" The input holds the pod's status, not its events or the Karpenter logs: Karpenter's answer (a `FailedScheduling` from `karpenter`, or `Nominated`) would be in `kubectl describe pod`, so look there before concluding.");
    }
    let ignored = silent.iter().filter_map(|c| c.pod.as_ref()).any(|p| {
        facts.pods.iter().any(|fp| {
            fp.meta.name == p.name
                && fp
                    .node_affinity
                    .iter()
                    .flatten()
                    .any(|r| r.key == "karpenter.sh/nodepool" && r.operator == "DoesNotExist")
        })
    });
    if ignored {
        summary.push_str(" The pod requires `karpenter.sh/nodepool DoesNotExist`: Karpenter ignores it on purpose (KW209).");
        if !related.contains(&"KW209") {
            related.push("KW209");
        }
    }
    let no_nodepool = facts.nodepools.is_empty()
        && facts.empty_lists.iter().any(|e| {
            e.resource
                .as_deref()
                .is_some_and(|r| r.starts_with("nodepool"))
        });
    if no_nodepool {
        summary.push_str(" There is no NodePool (`kubectl get nodepools`: No resources found): Karpenter has nothing to provision from (KW208).");
        if !related.contains(&"KW208") {
            related.push("KW208");
        }
    }
    let no_nodeclaims = facts.empty_lists.iter().any(|e| {
        e.resource
            .as_deref()
            .is_some_and(|r| r.starts_with("nodeclaim"))
    }) || facts.messages.iter().any(|m| {
        m.text.trim() == "No resources found"
            || contains_ignore_ascii_case(&m.text, "no resources found")
    });
    let confidence = if no_nodeclaims || stopped.is_some() {
        Confidence::High
    } else {
        Confidence::Medium
    };
    // A row of `kubectl get events -n <ns>` names its pod without the namespace: the command
    // it was printed under (or the one pod of that name) tells it, for `-n` in the commands.
    let concerned: &[&ObjectRef] = if victims.is_empty() {
        &own_waiting
    } else {
        &victims
    };
    let concerned_candidates = || {
        silent
            .iter()
            .filter(|c| c.pod.as_ref().is_some_and(|p| concerned.contains(&p)))
    };
    let pod_ns = concerned
        .iter()
        .find_map(|p| p.namespace.clone())
        .or_else(|| {
            concerned_candidates().find_map(|c| {
                let p = c.pod.as_ref()?;
                c.messages
                    .iter()
                    .find_map(|m| pod_namespace(facts, m, &p.name))
            })
        });
    let first_pod = concerned.first().copied();
    let mut steps = vec![
        Remediation::command(
            "Is Karpenter running and ready (and which replica is the leader)?",
            format!("kubectl get pods -n {ns} -l app.kubernetes.io/name=karpenter -o wide"),
        ),
        Remediation::command(
            "Do its logs mention the pod, or errors?",
            format!(
                "kubectl logs -n {ns} -l app.kubernetes.io/name=karpenter --since=1h{}",
                first_pod
                    .map(|p| format!(" | grep -E '{}|ERROR'", p.name))
                    .unwrap_or_default()
            ),
        ),
        Remediation::command(
            "Is there a ready NodePool, and did Karpenter create any NodeClaim?",
            "kubectl get nodepools,nodeclaims",
        ),
    ];
    if let (None, Some(lease)) = (&stopped, &standby) {
        let (lease_ns, lease_name) = lease
            .as_deref()
            .and_then(|l| l.split_once('/'))
            .unwrap_or((ns.as_str(), "karpenter-leader-election"));
        steps.insert(
            0,
            Remediation::command(
                "Find the leader (the Lease's holder, `<pod>_<id>`) and read its log:",
                format!(
                    "LEADER=$(kubectl get lease -n {lease_ns} {lease_name} -o jsonpath='{{.spec.holderIdentity}}' | cut -d_ -f1); kubectl logs -n {ns} $LEADER --since=1h{}",
                    first_pod
                        .map(|p| format!(" | grep -E '{}|ERROR'", p.name))
                        .unwrap_or_default()
                ),
            ),
        );
    }
    // Only Karpenter's own pods wait: no controller runs to log, create NodeClaims or send
    // events, so the steps about those ask for nothing.
    let only_own = victims.is_empty() && !own_waiting.is_empty();
    if only_own {
        steps = vec![Remediation::text(format!(
            "Give the controller capacity Karpenter does not manage: a managed node group its nodeSelector and affinity match (the chart keeps it off Karpenter's nodes with `karpenter.sh/nodepool DoesNotExist`), or a Fargate profile for namespace {}.",
            pod_ns.as_deref().unwrap_or(ns.as_str())
        ))];
    }
    if let Some(reason) = &stopped {
        steps.insert(
            0,
            Remediation::command(
                "Why are Karpenter's pods not running? (Pending: they need a managed node group or Fargate, never Karpenter nodes)",
                format!("kubectl describe pods -n {ns} -l app.kubernetes.io/name=karpenter"),
            ),
        );
        // A crash-looping controller says why in the log of its previous run.
        if ["CrashLoopBackOff", "Error", "OOMKilled"]
            .iter()
            .any(|state| reason.contains(state))
        {
            steps.insert(
                0,
                Remediation::command(
                    "The controller crashes: its previous run's last lines say why (AWS credentials, cluster endpoint, IAM, a bad setting):",
                    format!("kubectl logs -n {ns} -l app.kubernetes.io/name=karpenter --previous --tail=30"),
                ),
            );
        }
    }
    if let Some(p) = first_pod.filter(|_| !only_own) {
        steps.push(Remediation::command(
            "Look at the pod's full event list (Karpenter's own events come from `karpenter`):",
            format!(
                "kubectl describe pod {} -n {}",
                p.name,
                pod_ns.as_deref().unwrap_or("<namespace>")
            ),
        ));
    }
    Diagnosis::new(&META, summary)
        .with_confidence(confidence)
        .with_objects(concerned.iter().copied())
        .with_messages(silent.iter().flat_map(|c| c.messages.iter().copied()))
        .with_evidence(
            facts
                .logs
                .iter()
                .filter(|r| {
                    stopped.is_none()
                        && standby.is_some()
                        && contains_ignore_ascii_case(&r.message, "acquire leader lease")
                })
                .map(|r| r.evidence.clone()),
        )
        .with_related(&related)
        .with_remediation(steps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{Event, Pod, Workload};
    use crate::testing::{check_only, ids};

    const SCHEDULER: &str = "  Warning  FailedScheduling  3m5s (x9 over 22m)  default-scheduler  0/3 nodes are available: 1 node(s) had untolerated taint {CriticalAddonsOnly: true}, 2 Insufficient cpu.";

    /// Karpenter's own Pending pod is why it is silent, not one more pod it passed over; alone,
    /// with another replica Running, it waits by design (KW209) and shows nothing silent.
    #[test]
    fn karpenter_own_pending_pod_is_the_reason_not_a_victim() {
        let rows = |own: &str| {
            format!(
                "$ kubectl get pods -A\nNAMESPACE     NAME                         READY   STATUS    RESTARTS   AGE\n{own}web           shop-5f7d8c9b6-7hj2k         0/1     Pending   0          17m\n"
            )
        };
        let event = |pod: &str| {
            format!("LAST SEEN   TYPE      REASON             OBJECT     MESSAGE\n2m   Warning   FailedScheduling   pod/{pod}   0/2 nodes are available: 2 node(s) had untolerated taint {{node.kubernetes.io/unschedulable: }}.\n")
        };
        let pending =
            "karpenter     karpenter-6c8f9d7b5d-2kqpl   0/1     Pending   0          18m\n";
        let text = format!(
            "{}\n{}{}",
            rows(pending),
            event("karpenter-6c8f9d7b5d-2kqpl"),
            event("shop-5f7d8c9b6-7hj2k")
                .lines()
                .nth(1)
                .unwrap_or_default()
        );
        let report = check_only("KW200", &text);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with("Pod ") && d.summary.contains("shop-5f7d8c9b6-7hj2k is Pending"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("Karpenter's own pods are not running"));
        assert_eq!(
            d.object.as_ref().map(|o| o.name.as_str()),
            Some("shop-5f7d8c9b6-7hj2k")
        );
        assert!(d.objects.is_empty());
        assert!(d.related.contains(&"KW209"));
        // One replica Pending beside one Running: Karpenter runs, nothing is silent.
        let ha = format!(
            "{}karpenter     karpenter-6c8f9d7b5d-9xq4w   1/1     Running   0          3d\n\n{}",
            "NAMESPACE     NAME                         READY   STATUS    RESTARTS   AGE\nkarpenter     karpenter-6c8f9d7b5d-2kqpl   0/1     Pending   0          18m\n",
            event("karpenter-6c8f9d7b5d-2kqpl")
        );
        assert!(ids(&check_only("KW200", &ha)).is_empty());
    }

    #[test]
    fn scheduler_only() {
        let report = check_only(
            "KW200",
            &format!("{SCHEDULER}\n\n$ kubectl get nodeclaims\nNo resources found"),
        );
        assert_eq!(ids(&report), ["KW200"]);
        assert_eq!(report.diagnoses[0].confidence, Confidence::High);
    }

    #[test]
    fn a_crash_looping_controller_listed_as_running_is_down() {
        // `kubectl get pods` shows CrashLoopBackOff where the phase is Running.
        let text = "2m  Warning  FailedScheduling  pod/frontend-1  0/3 nodes are available: 3 Insufficient cpu.\n$ kubectl get pods -n karpenter\nNAME                         READY   STATUS             RESTARTS      AGE\nkarpenter-7d4b9c8f5d-2xk9p   0/1     CrashLoopBackOff   12 (2m ago)   40m\nkarpenter-7d4b9c8f5d-8qz4m   1/1     Running            0             40m\n";
        let report = check_only("KW200", text);
        let s = &report.diagnoses[0].summary;
        assert!(!s.contains("not running"), "one replica serves: {s}");
        let text = text.replace(
            "1/1     Running            0   ",
            "0/1     Running            9   ",
        );
        let report = check_only("KW200", &text);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("karpenter-7d4b9c8f5d-2xk9p CrashLoopBackOff; karpenter-7d4b9c8f5d-8qz4m Running but not ready"),
            "{}",
            d.summary
        );
        assert!(
            d.remediation[0]
                .command
                .as_deref()
                .is_some_and(|c| c.contains("--previous")),
            "{:?}",
            d.remediation[0]
        );
    }

    /// A container that crashed and runs again: its `lastState.terminated` (`Error`) is the run
    /// before, not the pod's state now.
    #[test]
    fn a_restarted_controller_is_described_by_its_current_run() {
        let pod = |ready: bool| {
            format!(
                r#"{{"apiVersion": "v1", "kind": "Pod", "metadata": {{"name": "karpenter-6d8b7c9f4-2xk7p", "namespace": "kube-system"}},
  "spec": {{"containers": [{{"name": "controller", "image": "public.ecr.aws/karpenter/controller:1.4.0"}}]}},
  "status": {{"phase": "Running", "containerStatuses": [{{"name": "controller", "ready": {ready}, "restartCount": 3,
    "state": {{"running": {{"startedAt": "2025-09-16T13:58:38Z"}}}},
    "lastState": {{"terminated": {{"exitCode": 1, "reason": "Error", "finishedAt": "2025-09-16T13:58:32Z"}}}}}}]}}}}"#
            )
        };
        const PENDING: &str = "2m  Warning  FailedScheduling  pod/frontend-1  0/3 nodes are available: 3 Insufficient cpu.";
        let report = check_only("KW200", &format!("{PENDING}\n\n{}\n", pod(false)));
        let s = &report.diagnoses[0].summary;
        assert!(
            s.contains("karpenter-6d8b7c9f4-2xk7p Running but not ready, restarted 3 times, the last run ended with Error"),
            "{s}"
        );
        let report = check_only("KW200", &format!("{PENDING}\n\n{}\n", pod(true)));
        let s = &report.diagnoses[0].summary;
        assert!(!s.contains("not running"), "it serves again: {s}");
    }

    /// `kubectl logs deploy/karpenter` picks one replica: a standby's log (it waits for the
    /// lease) says nothing about pods, and is no reason for debug logs (KW005).
    #[test]
    fn a_standby_replicas_log_points_to_the_leader() {
        let events = "LAST SEEN   TYPE      REASON             OBJECT                        MESSAGE\n4m2s        Warning   FailedScheduling   pod/cart-7f9c6d5b8d-q2w8x     0/4 nodes are available: 4 Insufficient memory.\n";
        let standby = r#"{"level":"INFO","time":"2025-10-02T08:11:03.221Z","logger":"controller","message":"attempting to acquire leader lease karpenter/karpenter-leader-election...","commit":"1c5a5f3"}"#;
        let newer = r#"{"level":"INFO","time":"2025-10-02T08:11:03.221Z","logger":"controller","message":"Attempting to acquire leader lease...","lock":"kube-system/karpenter-leader-election","commit":"1c5a5f3"}"#;
        let leader = r#"{"level":"INFO","time":"2025-10-02T08:11:04.001Z","logger":"controller","message":"successfully acquired lease karpenter/karpenter-leader-election","commit":"1c5a5f3"}"#;
        for (log, lease) in [
            (standby, "karpenter/karpenter-leader-election"),
            (newer, "kube-system/karpenter-leader-election"),
        ] {
            let report = crate::analyze(
                &[crate::Document::new("paste", format!("{events}\n{log}\n"))],
                &crate::Options::default(),
            );
            assert_eq!(ids(&report), ["KW200"], "no KW005 for a standby's log");
            let d = &report.diagnoses[0];
            assert!(
                d.summary
                    .contains(&format!("waiting for the leader lease {lease}")),
                "{}",
                d.summary
            );
            let (ns, name) = lease.split_once('/').unwrap();
            assert!(d.remediation[0]
                .command
                .as_deref()
                .is_some_and(|c| c.contains(&format!("get lease -n {ns} {name}"))));
            assert!(d.evidence.iter().any(|e| e.text.contains("leader lease")));
        }
        let report = check_only("KW200", &format!("{events}\n{standby}\n{leader}\n"));
        assert!(!report.diagnoses[0]
            .summary
            .contains("waiting for the leader lease"));
    }

    #[test]
    fn karpenter_answering_other_pods_is_running() {
        let text = "NAMESPACE     LAST SEEN   TYPE      REASON             OBJECT                  MESSAGE\nbatch         3m          Warning   FailedScheduling   pod/report-1            Failed to schedule pod, incompatible with nodepool \"default\", did not tolerate dedicated=batch:NoSchedule\nkube-system   9m          Warning   FailedScheduling   pod/coredns-5d78c-abcde  0/5 nodes are available: 5 node(s) had untolerated taint {node.kubernetes.io/unreachable: }.\n";
        let report = check_only("KW200", text);
        let s = &report.diagnoses[0].summary;
        assert!(s.contains("Pod kube-system/coredns-5d78c-abcde"), "{s}");
        assert!(
            s.contains("Karpenter is running (it answered pod batch/report-1 in the same input)"),
            "{s}"
        );
        assert!(s.contains("all Warnings"), "{s}");
    }

    #[test]
    fn karpenter_deployment_down_is_named() {
        let text = "2m47s  Warning  FailedScheduling  pod/orders-export-1  0/2 nodes are available: 2 Insufficient memory.\ndeployment.apps/karpenter   0/2     2            0           214d\npod/karpenter-6b9d7c8f45-m4xkw   0/1     Pending   0          38m";
        let report = check_only("KW200", text);
        assert_eq!(ids(&report), ["KW200"]);
        let s = &report.diagnoses[0].summary;
        assert!(s.contains("Pod orders-export-1"), "{s}");
        assert!(s.contains("Karpenter is not running"), "{s}");
    }

    #[test]
    fn any_karpenter_answer_means_it_acted() {
        for karpenter in [
            "  Normal   Nominated  108s  karpenter  Pod should schedule on: nodeclaim/default-cvkcv",
            "  Warning  FailedScheduling  12s  karpenter  Failed to schedule pod, node selector term with matchFields is not supported",
            r#"{"level":"INFO","message":"found provisionable pod(s)","Pods":"billing/tax-1"}"#,
        ] {
            let text = format!("{SCHEDULER}\n{karpenter}");
            assert!(ids(&check_only("KW200", &text)).is_empty(), "{karpenter}");
        }
        let scheduled = format!("{SCHEDULER}\n  Normal   Scheduled  77s  default-scheduler  Successfully assigned shop/checkout-1 to ip-10-0-87-142.ec2.internal");
        assert!(ids(&check_only("KW200", &scheduled)).is_empty());
    }

    #[test]
    fn a_truncated_provisionable_list_may_hold_the_pod() {
        let describe = "Name:             batch-worker-7\nNamespace:        jobs\nPriority:         0\nNode:             <none>\nStatus:           Pending\nEvents:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  48s   default-scheduler  0/5 nodes are available: 5 Insufficient cpu.\n";
        let log = |pods: &str| {
            format!(
                "{describe}\n{{\"level\":\"INFO\",\"message\":\"found provisionable pod(s)\",\"controller\":\"provisioner\",\"Pods\":\"{pods}\"}}\n"
            )
        };
        let cut = log("jobs/batch-worker-0, jobs/batch-worker-1, jobs/batch-worker-2, jobs/batch-worker-3, jobs/batch-worker-4 and 4 other(s)");
        assert!(ids(&check_only("KW200", &cut)).is_empty());
        // A complete list without the pod: Karpenter passed it over.
        let full = log("jobs/batch-worker-0, jobs/batch-worker-1");
        assert_eq!(ids(&check_only("KW200", &full)), ["KW200"]);
        assert!(lists_others("a/b and 12 other(s)"));
        assert!(!lists_others("a/b and c/d"));
    }

    #[test]
    fn the_provisioner_saying_it_has_no_nodepool_is_an_answer() {
        for line in [
            r#"{"level":"INFO","logger":"controller","message":"no nodepools found","controller":"provisioner"}"#,
            r#"{"level":"ERROR","logger":"controller","message":"nodePool not ready","controller":"provisioner","NodePool":{"name":"default"},"error":null}"#,
            r#"{"level":"INFO","message":"no dynamic nodepools found","controller":"provisioner"}"#,
        ] {
            let text =
                format!("{SCHEDULER}\n\n$ kubectl logs -n karpenter deploy/karpenter\n{line}");
            assert!(ids(&check_only("KW200", &text)).is_empty(), "{line}");
        }
        // The same words outside Karpenter's logs (someone's note) are no answer.
        let note = format!("{SCHEDULER}\n\n# no nodepools found?");
        assert_eq!(ids(&check_only("KW200", &note)), ["KW200"]);
    }

    #[test]
    fn a_named_pod_scheduled_since_is_not_pending() {
        // `kubectl get events` names the pod but prints no status: its Scheduled event says it.
        let table = "LAST SEEN   TYPE      REASON             OBJECT             MESSAGE\n\
4m          Warning   FailedScheduling   pod/etl-worker-0   0/6 nodes are available: 6 Insufficient memory. preemption: 0/6 nodes are available: 6 No preemption victims found for incoming pod.\n";
        let scheduled = format!("{table}2m          Normal    Scheduled          pod/etl-worker-0   Successfully assigned data/etl-worker-0 to ip-10-0-1-5.ec2.internal\n");
        assert!(ids(&check_only("KW200", &scheduled)).is_empty());
        // The Scheduled event of an earlier pod of that name (before a drain) is older.
        let earlier = format!("{table}3h          Normal    Scheduled          pod/etl-worker-0   Successfully assigned data/etl-worker-0 to ip-10-0-1-5.ec2.internal\n");
        assert_eq!(ids(&check_only("KW200", &earlier)), ["KW200"]);
        // Another pod's scheduling says nothing about this one.
        let other = format!("{table}2m          Normal    Scheduled          pod/etl-worker-1   Successfully assigned data/etl-worker-1 to ip-10-0-1-5.ec2.internal\n");
        assert_eq!(ids(&check_only("KW200", &other)), ["KW200"]);
    }

    #[test]
    fn typed_facts_link_pod_and_deployment() {
        let mut facts = Facts::default();
        let text = "0/2 nodes are available: 2 Insufficient memory.";
        let pod_ref = ObjectRef::new("Pod", Some("etl"), "job-1");
        facts.messages.push(Message {
            origin: MessageOrigin::Event,
            text: text.into(),
            evidence: Evidence::new("events", 5, text),
            object: Some(pod_ref.clone()),
            nodepool: None,
            reason: None,
            component: None,
            time: None,
        });
        facts.events.push(Event {
            event_type: "Warning".into(),
            reason: "FailedScheduling".into(),
            source: "default-scheduler".into(),
            object: Some(pod_ref.clone()),
            message: text.into(),
            count: 1,
            ..Default::default()
        });
        let mut pod = Pod::default();
        pod.meta.name = "job-1".into();
        pod.meta.namespace = Some("etl".into());
        pod.phase = Some("Pending".into());
        facts.pods.push(pod);
        let mut deploy = Workload {
            kind: "Deployment".into(),
            replicas: Some(2),
            ready_replicas: Some(0),
            ..Default::default()
        };
        deploy.meta.name = "karpenter".into();
        facts.workloads.push(deploy);
        facts.karpenter_namespace = Some("kube-system".into());
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .contains("Deployment karpenter has no ready replica (0/2)"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("-n kube-system"));
        // Another event, this time from Karpenter, on the same pod: it acted.
        facts.events.push(Event {
            event_type: "Normal".into(),
            reason: "Nominated".into(),
            source: "karpenter".into(),
            object: Some(pod_ref),
            message: "Pod should schedule on: nodeclaim/x".into(),
            count: 1,
            ..Default::default()
        });
        assert!(check(&facts).is_empty());
    }

    #[test]
    fn no_scheduler_message_no_kw200() {
        for text in [
            "Failed to schedule pod, no instance type has enough resources, requirements=a In [b], resources={}",
            "0/3 nodes are available: 3 Insufficient vpc.amazonaws.com/pod-eni.",
        ] {
            assert!(ids(&check_only("KW200", text)).is_empty(), "{text}");
        }
    }
}
