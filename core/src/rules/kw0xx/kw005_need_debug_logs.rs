//! KW005 need-debug-logs.

use crate::facts::{
    contains_ignore_ascii_case, Collected, Facts, LogRecord, Message, NodeClaim, ObjectRef,
    Setting, SettingSource,
};
use crate::rules::text::{karpenter_namespace_or_placeholder, token_after};
use crate::rules::time::age_seconds;
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW005",
    slug: "need-debug-logs",
    title: "The info-level Karpenter logs do not explain the problem",
    severity: Severity::Info,
    // Any of these explains a Pending pod or a stuck NodeClaim: then the logs are not silent.
    superseded_by: &[
        "KW001", "KW002", "KW101", "KW102", "KW103", "KW104", "KW105", "KW201", "KW202", "KW203",
        "KW204", "KW205", "KW206", "KW207", "KW208", "KW209", "KW210", "KW211", "KW212", "KW213",
        "KW214", "KW215", "KW216", "KW217", "KW301", "KW302", "KW303", "KW304", "KW305", "KW306",
        "KW307", "KW309", "KW310", "KW501", "KW502", "KW503",
    ],
    signals: SIGNALS,
    docs: r#"## What it means
Something is wrong (a pod stays Pending, a NodeClaim never becomes ready) and the input has
Karpenter's logs, but only at info level and without a line that explains it: no ERROR, nothing
another rule recognises. Info-level logs record what Karpenter did (found pods, created and
launched NodeClaims), not why it decided what it did.

Signals: a Pending pod (its status, or `FailedScheduling` events) or a NodeClaim whose
Launched, Registered or Initialized condition is not True; Karpenter log lines in the input,
none at debug level (no `DEBUG` line, no `caller` field) and none at ERROR; and no other
diagnosis explaining the problem. Not when the input shows the level already set to debug
(KW004: the Deployment's env, helm values, a `kubectl set env` run): those logs predate the
change or were filtered.

Before v0.32 (and, deprecated, up to v0.36) the level is the `config-logging` ConfigMap's
`loglevel.controller` (or its `zap-logger-config` `level`), which the controller watches: the
advice then patches that ConfigMap instead of setting `LOG_LEVEL`, quotes its current level, and
says when the controller cannot read ConfigMaps (`failed to list *v1.ConfigMap: configmaps is
forbidden`, `configmap "config-logging" not found`), since a level set there then never applies.

## Why it happens
Karpenter logs its intermediate decisions at debug level only: pods it ignores, instance types
filtered out of a launch, subnet/security-group/AMI discovery, timeouts of a launch or a
registration, consolidation candidates.

## How to fix
Raise the log level for a while (`kubectl set env deployment/karpenter -n <namespace>
LOG_LEVEL=debug`, or helm `--set logLevel=debug`), reproduce, collect the logs, then set it back
to `info` (debug logging is voluminous: KW004).
"#,
};

/// The problem is found from objects and events; the logs are read whole.
const SIGNALS: &[&str] = &[
    "failedscheduling",
    "nodes are available",
    "should schedule on",
    "created nodeclaim",
    "launched nodeclaim",
    "registered nodeclaim",
];

/// A launch takes seconds and registration a minute or two: a NodeClaim launched but not
/// registered is still on its way while the nomination (or the NodeClaim) is this recent; the
/// launch timeout is as long.
const STILL_COMING_SECONDS: i64 = 5 * 60;

/// Levels at which Karpenter reports a failure it knows.
const FAILURE_LEVELS: &[&str] = &["ERROR", "WARN", "WARNING", "DPANIC", "PANIC", "FATAL"];

fn is_failure(record: &LogRecord) -> bool {
    FAILURE_LEVELS.contains(&record.level.as_str())
}

/// Pricing refreshes fail in isolated VPCs without touching provisioning (KW504).
fn is_pricing(record: &LogRecord) -> bool {
    [record.controller.as_deref(), record.logger.as_deref()]
        .into_iter()
        .flatten()
        .any(|c| contains_ignore_ascii_case(c, "pricing"))
}

/// A `kubectl get nodeclaims` row not Ready after longer than a launch, registration and
/// initialization take (a few minutes): stuck, rather than still coming up.
fn table_row_stuck(claim: &NodeClaim) -> bool {
    const STUCK_AFTER_SECONDS: i64 = 10 * 60;
    claim.meta.from_table
        && claim.condition("Ready").is_some_and(|k| k.status != "True")
        && claim
            .meta
            .table_age
            .as_deref()
            .and_then(age_seconds)
            .is_some_and(|age| age >= STUCK_AFTER_SECONDS)
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let logs_present = facts.has(Collected::KarpenterLogs) || !facts.logs.is_empty();
    if !logs_present {
        // No logs at all is a missing fact (the checklist asks for them), not this.
        return Vec::new();
    }
    let debug = facts.has(Collected::DebugLogs)
        || facts
            .logs
            .iter()
            .filter(|r| !crate::facts::foreign_log_line(&r.evidence.text))
            .any(|r| r.level == "DEBUG" || r.fields.contains_key("caller"))
        || facts
            .log_lines_by_level
            .get("DEBUG")
            .is_some_and(|n| *n > 0);
    // The level is already debug (KW004: the Deployment's env, helm values, a `set env` the
    // user ran): the pasted info-only logs predate the change or were filtered, and advising
    // to raise the level would contradict KW004's "set it back to info".
    let level_is_debug =
        || !(super::kw004_karpenter_debug_logging_on::RULE.check)(facts).is_empty();
    if debug || level_is_debug() {
        return Vec::new();
    }
    // A standby replica's log (KW200 says so): the leader's info log is the one to read first,
    // debug lines from a replica that does nothing would not explain more.
    if crate::rules::kw2xx::standby_lease(facts).is_some() {
        return Vec::new();
    }
    let failures_parsed = facts.logs.iter().filter(|r| is_failure(r)).count();
    let failures_counted: usize = facts
        .log_lines_by_level
        .iter()
        .filter(|(level, _)| FAILURE_LEVELS.contains(&level.as_str()))
        .map(|(_, n)| *n)
        .sum();
    // An update conflict is retried at once: it explains no stuck pod or NodeClaim.
    let explained = facts
        .logs
        .iter()
        .any(|r| is_failure(r) && !is_pricing(r) && !r.is_update_conflict())
        || failures_counted > failures_parsed;
    if explained {
        return Vec::new();
    }
    // Karpenter never provisions for its own pods: its logs, debug or not, say nothing of them.
    let karpenter_pods = crate::rules::text::KarpenterPods::new(facts);
    let own = |o: &crate::facts::ObjectRef| karpenter_pods.contains(o);
    let mut pending: Vec<String> = facts
        .pending_pods()
        .filter(|p| !p.meta.name.is_empty() && !own(&p.object_ref()))
        .map(|p| p.object_ref().qualified_name())
        .collect();
    let mut evidence = Vec::new();
    for m in &facts.messages {
        let failed_scheduling = m.reason.as_deref() == Some("FailedScheduling")
            || (m.reason.is_none() && contains_ignore_ascii_case(&m.text, "FailedScheduling"));
        if !failed_scheduling || m.object.as_ref().is_some_and(own) {
            continue;
        }
        evidence.push(m);
        if let Some(o) = m.object.as_ref().filter(|o| o.kind == "Pod") {
            let name = o.qualified_name();
            if !pending.contains(&name) {
                pending.push(name);
            }
        }
    }
    // A NodeClaim younger than the launch timeout is still coming up, not stuck: only an age
    // measured against now (or printed by kubectl) says so; one bounded from below may be older.
    // kubectl's AGE column comes first: an age against the latest log time of the input says
    // nothing of how long the NodeClaim has existed.
    let coming_up = |name: &str| {
        let row_age = facts
            .nodeclaims
            .iter()
            .find(|c| c.meta.name == name)
            .and_then(|c| c.meta.table_age.as_deref())
            .and_then(age_seconds);
        if let Some(seconds) = row_age {
            return seconds < STILL_COMING_SECONDS;
        }
        crate::rules::kw3xx::common::claim_age(facts, name).is_some_and(|a| {
            matches!(
                a.base,
                crate::rules::AgeBase::Now | crate::rules::AgeBase::Kubectl
            ) && a.seconds < STILL_COMING_SECONDS
        })
    };
    let stuck: Vec<String> = facts
        .nodeclaims
        .iter()
        .filter(|c| {
            (["Launched", "Registered", "Initialized"].iter().any(|t| {
                c.condition(t).is_some_and(|k| k.status != "True")
                    && !facts.claim_step_logged(&c.meta.name, t)
            }) || table_row_stuck(c))
                && !coming_up(&c.meta.name)
        })
        .map(|c| c.meta.name.clone())
        .collect();
    if pending.is_empty() && evidence.is_empty() && stuck.is_empty() {
        return Vec::new();
    }
    // Provisioning under way: every Pending pod is nominated for a NodeClaim the logs show
    // launched, and no NodeClaim is stuck. The info logs explain it: the node is coming.
    let named_in = |message: &str, field: &str| -> Vec<String> {
        facts
            .logs
            .iter()
            .filter(|r| r.message == message)
            .filter_map(|r| r.field_name(field))
            .collect()
    };
    let named = |message: &str| named_in(message, "NodeClaim");
    let launched = named("launched nodeclaim");
    let registered = named("registered nodeclaim");
    let nominations: Vec<(String, String, Option<i64>)> = facts
        .messages
        .iter()
        .filter_map(|m| {
            let pod = m.object.as_ref().filter(|o| o.kind == "Pod")?;
            let claim = token_after(&m.text, "should schedule on: nodeclaim/")?;
            let age = m.time.as_deref().and_then(age_seconds);
            Some((pod.qualified_name(), claim, age))
        })
        .collect();
    // Without a Nominated event: the logs found the pod provisionable and every NodeClaim they
    // created has registered or is still coming up (kubectl's AGE, or the time against now).
    let created = named("created nodeclaim");
    let fresh_launch = !created.is_empty()
        && created
            .iter()
            .all(|c| registered.contains(c) || coming_up(c));
    let found = named_in("found provisionable pod(s)", "Pods");
    let on_its_way = |pod: &String| {
        nominations.iter().any(|(p, claim, age)| {
            p == pod
                && (registered.contains(claim)
                    || (launched.contains(claim) && age.is_some_and(|a| a < STILL_COMING_SECONDS))
                    || coming_up(claim))
        }) || (fresh_launch && found.iter().any(|pods| pods.split(", ").any(|p| p == pod)))
    };
    if stuck.is_empty() && !pending.is_empty() && pending.iter().all(on_its_way) {
        return Vec::new();
    }
    let mut problem: Vec<String> = Vec::new();
    match pending.as_slice() {
        [] if !evidence.is_empty() => problem.push("A pod is Pending".to_string()),
        [] => {}
        [one] => problem.push(format!("Pod {one} is Pending")),
        many => problem.push(format!("Pods {} are Pending", many.join(", "))),
    }
    // A v1alpha5 Machine (before v0.32) is named as one.
    let claim = if !stuck.is_empty()
        && facts
            .nodeclaims
            .iter()
            .filter(|c| stuck.contains(&c.meta.name))
            .all(|c| c.is_machine)
    {
        "Machine"
    } else {
        "NodeClaim"
    };
    match stuck.as_slice() {
        [] => {}
        [one] => problem.push(format!("{claim} {one} is not ready")),
        many => problem.push(format!("{claim}s {} are not ready", many.join(", "))),
    }
    let lines: usize = facts.log_lines_by_level.values().sum::<usize>().max(
        facts
            .logs
            .iter()
            .filter(|r| !crate::facts::foreign_log_line(&r.evidence.text))
            .count(),
    );
    // NodeClaims the logs show created but never launched: where the info logs go quiet.
    let mut unlaunched: Vec<String> = Vec::new();
    for name in named("created nodeclaim") {
        if !launched.contains(&name) && !unlaunched.contains(&name) {
            unlaunched.push(name);
        }
    }
    let trail = match unlaunched.as_slice() {
        [] => String::new(),
        [one] => format!(
            " The logs stop after `created nodeclaim` for NodeClaim {one}: no `launched nodeclaim` follows, so the launch is where to look."
        ),
        many => format!(
            " The logs stop after `created nodeclaim` for NodeClaims {}: no `launched nodeclaim` follows, so the launch is where to look.",
            many.join(", ")
        ),
    };
    let mut set_aside = Vec::new();
    if facts
        .logs
        .iter()
        .any(|r| is_failure(r) && r.is_update_conflict())
    {
        set_aside.push("update conflicts, which Karpenter retries");
    }
    if facts.logs.iter().any(|r| is_failure(r) && is_pricing(r)) {
        set_aside.push("pricing-refresh failures (KW504)");
    }
    let errors = if set_aside.is_empty() {
        "no error".to_string()
    } else {
        format!("no error but {}", set_aside.join(" and "))
    };
    let mut summary = format!(
        "{}, but the Karpenter logs in the input ({lines} line{}, info level, {errors}) hold no line that explains it.{trail} Info-level logs record what Karpenter did, not why: debug logs add the pods it ignores, the instance types filtered out of a launch, subnet and AMI discovery, launch and registration timeouts.",
        problem.join("; "),
        if lines == 1 { "" } else { "s" }
    );
    let ns = karpenter_namespace_or_placeholder(facts);
    // Before v0.32 (and, deprecated, to v0.36) the level lives in the `config-logging`
    // ConfigMap (`loglevel.controller`, `zap-logger-config`), which Karpenter watches: no
    // LOG_LEVEL env then.
    let configmap: Vec<&Setting> = facts
        .settings
        .iter()
        .filter(|s| {
            s.source == SettingSource::ConfigMap
                && (s.key == "loglevel.controller" || s.key == "zap-logger-config")
        })
        .collect();
    let config_logging = !configmap.is_empty() || crate::rules::version::before_v0_32(facts);
    if let Some(s) = configmap.iter().find(|s| s.key == "loglevel.controller") {
        summary.push_str(&format!(
            " The config-logging ConfigMap sets loglevel.controller: {}.",
            s.value
        ));
    }
    // The controller cannot read its config-logging ConfigMap: a level set there does not
    // take effect until it can.
    let unreadable: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| {
            contains_ignore_ascii_case(&m.text, "v1.ConfigMap")
                && (contains_ignore_ascii_case(&m.text, "is forbidden")
                    || contains_ignore_ascii_case(&m.text, "failed to list"))
                || contains_ignore_ascii_case(&m.text, "configmap \"config-logging\" not found")
                || contains_ignore_ascii_case(&m.text, "configmaps \"config-logging\" not found")
        })
        .collect();
    if !unreadable.is_empty() {
        summary.push_str(" The controller also fails to read ConfigMaps (its config-logging one among them): a level set there takes effect only once it can read it (RBAC on configmaps in its namespace, or the ConfigMap missing).");
    }
    let steps = if config_logging {
        vec![
            Remediation::command(
                "Raise Karpenter's log level for a while: before v0.32 it is the config-logging ConfigMap, which the controller watches (no restart):",
                format!("kubectl patch configmap config-logging -n {ns} --type merge -p '{{\"data\":{{\"loglevel.controller\":\"debug\"}}}}'"),
            ),
            Remediation::command(
                "Reproduce (wait for the pod to be retried, or recreate it), then collect the logs and analyse them with the rest of the input:",
                format!("kubectl logs -n {ns} -l app.kubernetes.io/name=karpenter --since=15m --prefix > karpenter-debug.log"),
            ),
            Remediation::command(
                "Set the level back afterwards: debug logging is voluminous (KW004):",
                format!("kubectl patch configmap config-logging -n {ns} --type merge -p '{{\"data\":{{\"loglevel.controller\":\"info\"}}}}'"),
            ),
        ]
    } else {
        vec![
        Remediation::command(
            "Raise Karpenter's log level for a while (helm: --set logLevel=debug on the release):",
            format!("kubectl set env deployment/karpenter -n {ns} LOG_LEVEL=debug"),
        ),
        Remediation::command(
            "Reproduce (wait for the pod to be retried, or recreate it), then collect the logs and analyse them with the rest of the input:",
            format!("kubectl logs -n {ns} -l app.kubernetes.io/name=karpenter --since=15m --prefix > karpenter-debug.log"),
        ),
        Remediation::command(
            "Set the level back afterwards: debug logging is voluminous (KW004):",
            format!("kubectl set env deployment/karpenter -n {ns} LOG_LEVEL=info"),
        ),
    ]
    };
    let subject = pending
        .first()
        .map(|p| match p.split_once('/') {
            Some((ns, name)) => ObjectRef::new("Pod", Some(ns), name),
            None => ObjectRef::new("Pod", None, p),
        })
        .or_else(|| {
            stuck
                .first()
                .map(|c| crate::rules::kw3xx::common::claim_ref(facts, c))
        });
    let stuck_rows = facts
        .nodeclaims
        .iter()
        .filter(|c| table_row_stuck(c))
        .filter_map(|c| c.meta.evidence.clone());
    vec![Diagnosis::new(&META, summary)
        .with_object(subject.as_ref())
        .with_messages(evidence)
        .with_messages(unreadable.iter().copied())
        .with_evidence(configmap.iter().map(|s| s.evidence.clone()))
        .with_evidence(stuck_rows)
        .with_related(&["KW004"])
        .with_remediation(steps)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_nodeclaim_created_but_never_launched() {
        let created = r#"{"level":"INFO","time":"t","logger":"controller","message":"created nodeclaim","commit":"c","NodeClaim":{"name":"gpu-h5tq8"}}"#;
        let launched = r#"{"level":"INFO","time":"t","logger":"controller","message":"launched nodeclaim","commit":"c","NodeClaim":{"name":"gpu-h5tq8"}}"#;
        let event = "  Warning  FailedScheduling  14m  default-scheduler  0/6 nodes are available: 6 Insufficient nvidia.com/gpu.";
        let report = crate::testing::check_only("KW005", &format!("{event}\n{created}\n"));
        assert!(report.diagnoses[0]
            .summary
            .contains("`created nodeclaim` for NodeClaim gpu-h5tq8"));
        let report =
            crate::testing::check_only("KW005", &format!("{event}\n{created}\n{launched}\n"));
        assert!(!report.diagnoses[0].summary.contains("created nodeclaim"));
    }

    /// A pasted NodeClaim or Machine not yet Registered (or Launched, Initialized) is not stuck
    /// when a log line shows that step done for it: the object was read before. A step the
    /// logs show for another claim, or a later step still missing, leaves it stuck.
    #[test]
    fn a_step_the_logs_show_done_outdates_the_pasted_condition() {
        let machine = "apiVersion: karpenter.sh/v1alpha5\nkind: Machine\nmetadata:\n  name: default-r9k2x\n  labels:\n    karpenter.sh/provisioner-name: default\nstatus:\n  conditions:\n  - {type: MachineLaunched, status: \"True\"}\n  - {type: MachineRegistered, status: Unknown, reason: NodeNotFound, message: Node not registered with cluster}\n---\n";
        let registered = |name: &str| {
            format!("2023-08-10T11:28:02.540Z\tINFO\tcontroller.machine.lifecycle\tregistered machine\t{{\"commit\": \"5a2fe84\", \"machine\": \"{name}\", \"provisioner\": \"default\", \"node\": \"ip-10-0-41-17.eu-west-1.compute.internal\"}}\n")
        };
        let fired = |text: &str| {
            !crate::testing::check_only("KW005", text)
                .diagnoses
                .is_empty()
        };
        assert!(!fired(&format!("{machine}{}", registered("default-r9k2x"))));
        assert!(fired(&format!("{machine}{}", registered("default-q7w2e"))));
        // Registered, but Initialized still Unknown and never logged: stuck there.
        let uninitialized = machine.replace(
            "message: Node not registered with cluster}\n",
            "message: Node not registered with cluster}\n  - {type: MachineInitialized, status: Unknown}\n",
        );
        assert!(fired(&format!(
            "{uninitialized}{}",
            registered("default-r9k2x")
        )));
        // v1: `registered nodeclaim` with a NodeClaim object field.
        let nodeclaim = "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: general-8wq4c\nstatus:\n  conditions:\n  - {type: Launched, status: \"True\"}\n  - {type: Registered, status: Unknown, reason: NodeNotFound}\n---\n";
        let log = r#"{"level":"INFO","time":"2025-06-03T12:02:40.101Z","logger":"controller","message":"registered nodeclaim","commit":"6174c75","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"general-8wq4c"},"Node":{"name":"ip-10-0-1-9.ec2.internal"}}"#;
        let launched = r#"{"level":"INFO","time":"2025-06-03T12:01:12.904Z","logger":"controller","message":"launched nodeclaim","commit":"6174c75","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"general-8wq4c"}}"#;
        assert!(fired(&format!("{nodeclaim}{launched}\n")));
        assert!(!fired(&format!("{nodeclaim}{launched}\n{log}\n")));
    }

    #[test]
    fn a_table_row_not_ready_for_long_is_stuck() {
        let text = "$ kubectl get nodeclaims\nNAME          TYPE          CAPACITY    ZONE         NODE   READY     AGE\nbatch-7c5wq   c6i.4xlarge   on-demand   us-east-1b          Unknown   14m\nfresh-2k9dd   c6i.4xlarge   on-demand   us-east-1b          Unknown   40s\n{\"level\":\"INFO\",\"time\":\"2025-06-03T12:01:12.904Z\",\"logger\":\"controller\",\"message\":\"launched nodeclaim\",\"commit\":\"6174c75\",\"NodeClaim\":{\"name\":\"batch-7c5wq\"}}\n";
        let report = crate::testing::check_only("KW005", text);
        assert_eq!(report.diagnoses.len(), 1);
        let summary = &report.diagnoses[0].summary;
        assert!(
            summary.contains("NodeClaim batch-7c5wq is not ready"),
            "{summary}"
        );
        assert!(!summary.contains("fresh-2k9dd"));
        let young = text.replace("14m", "3m");
        assert!(crate::testing::check_only("KW005", &young)
            .diagnoses
            .is_empty());
    }
    use crate::document::Evidence;
    use crate::facts::{Condition, Message, Meta, NodeClaim, Pod};

    fn info_log(message: &str) -> LogRecord {
        LogRecord {
            level: "INFO".into(),
            message: message.into(),
            evidence: Evidence::new("log", 1, message),
            ..Default::default()
        }
    }

    fn pending_facts() -> Facts {
        let mut facts = Facts::default();
        facts.pods.push(Pod {
            meta: Meta {
                name: "render-worker-5b9c7f6d4-xk2lp".into(),
                namespace: Some("media".into()),
                ..Default::default()
            },
            phase: Some("Pending".into()),
            ..Default::default()
        });
        facts.logs.push(info_log("found provisionable pod(s)"));
        facts.logs.push(info_log("launched nodeclaim"));
        facts.collected.insert(Collected::KarpenterLogs);
        facts
    }

    #[test]
    fn pending_pod_with_info_only_logs() {
        let mut facts = pending_facts();
        facts.karpenter_namespace = Some("karpenter".into());
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert!(d[0].summary.starts_with("Pod media/render-worker-5b9c7f6d4-xk2lp is Pending, but the Karpenter logs in the input (2 lines"), "{}", d[0].summary);
        assert_eq!(
            d[0].remediation[0].command.as_deref(),
            Some("kubectl set env deployment/karpenter -n karpenter LOG_LEVEL=debug")
        );
        assert_eq!(
            d[0].remediation[2].command.as_deref(),
            Some("kubectl set env deployment/karpenter -n karpenter LOG_LEVEL=info")
        );
        assert_eq!(d[0].severity, Severity::Info);
    }

    #[test]
    fn stuck_nodeclaim_and_failed_scheduling_events() {
        let mut facts = Facts::default();
        facts.logs.push(info_log("created nodeclaim"));
        facts.nodeclaims.push(NodeClaim {
            meta: Meta {
                name: "render-8fw6c".into(),
                ..Default::default()
            },
            conditions: vec![Condition {
                condition_type: "Registered".into(),
                status: "Unknown".into(),
                ..Default::default()
            }],
            ..Default::default()
        });
        facts.messages.push(Message {
            text: "0/5 nodes are available: 2 Insufficient cpu.".into(),
            reason: Some("FailedScheduling".into()),
            object: Some(ObjectRef::new("Pod", Some("media"), "render-1")),
            ..Default::default()
        });
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert!(
            d[0].summary
                .starts_with("Pod media/render-1 is Pending; NodeClaim render-8fw6c is not ready"),
            "{}",
            d[0].summary
        );
        assert_eq!(d[0].evidence.len(), 1);
        assert!(d[0].remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.contains("<karpenter-namespace>")));
        // Before v0.32 the claim is a Machine.
        facts.nodeclaims[0].is_machine = true;
        let d = check(&facts);
        assert!(
            d[0].summary
                .starts_with("Pod media/render-1 is Pending; Machine render-8fw6c is not ready"),
            "{}",
            d[0].summary
        );
    }

    /// Helm values (or the env) already at debug: no advice to raise the level.
    #[test]
    fn quiet_when_the_level_is_already_debug() {
        let pending = "$ kubectl describe pod web-0 -n shop\nName: web-0\nNamespace: shop\nStatus: Pending\nEvents:\n  Type     Reason            Age  From               Message\n  ----     ------            ---- ----               -------\n  Warning  FailedScheduling  4m   default-scheduler  0/3 nodes are available: 3 Insufficient memory.\n$ kubectl logs -n karpenter deploy/karpenter --tail=1\n{\"level\":\"INFO\",\"time\":\"2025-09-11T02:44:10.552Z\",\"logger\":\"controller\",\"message\":\"Starting workers\",\"commit\":\"6e9e6b8\",\"controller\":\"nodepool.counter\",\"worker count\":10}\n";
        let info = format!("$ helm get values karpenter -n karpenter\nUSER-SUPPLIED VALUES:\nlogLevel: info\n{pending}");
        assert_eq!(
            crate::testing::ids(&crate::testing::check_only("KW005", &info)),
            ["KW005"]
        );
        let debug = info.replace("logLevel: info", "logLevel: debug");
        assert!(crate::testing::ids(&crate::testing::check_only("KW005", &debug)).is_empty());
    }

    #[test]
    fn quiet_without_logs_with_debug_logs_or_with_an_error() {
        let mut no_logs = pending_facts();
        no_logs.logs.clear();
        no_logs.collected.clear();
        assert!(
            check(&no_logs).is_empty(),
            "missing logs are a missing step"
        );
        let mut debug = pending_facts();
        debug.collected.insert(Collected::DebugLogs);
        assert!(check(&debug).is_empty());
        let mut caller = pending_facts();
        caller.logs[0].fields.insert(
            "caller".into(),
            serde_json::json!("provisioning/provisioner.go:1"),
        );
        assert!(check(&caller).is_empty());
        let mut error = pending_facts();
        error.logs.push(LogRecord {
            level: "ERROR".into(),
            message: "could not schedule pod".into(),
            ..Default::default()
        });
        assert!(check(&error).is_empty());
        let mut omitted_error = pending_facts();
        omitted_error.log_lines_by_level.insert("ERROR".into(), 1);
        assert!(check(&omitted_error).is_empty());
        let mut healthy = pending_facts();
        healthy.pods[0].phase = Some("Running".into());
        assert!(check(&healthy).is_empty());
    }

    #[test]
    fn metadata_is_well_formed() {
        crate::rules::kw4xx::check_meta(&META, "KW0");
    }

    #[test]
    fn a_pricing_error_does_not_explain_a_pending_pod() {
        let mut facts = pending_facts();
        facts.logs.push(LogRecord {
            level: "ERROR".into(),
            controller: Some("providers.pricing".into()),
            message: "Reconciler error".into(),
            ..Default::default()
        });
        assert_eq!(check(&facts).len(), 1);
    }
}
