//! The 8-step checklist of the Karpenter troubleshooting guide (CATALOGUE.md, "The
//! checklist"): for each step, what the input showed (`ok` / `problem` / `not collected`) and
//! the signal that decided it; and for each step not collected, the exact command that
//! collects it, filled in with the names the facts know.

use serde::Serialize;

use crate::facts::foreign_log_line;
use crate::facts::{contains_ignore_ascii_case, Condition, Event, Facts, MessageOrigin, ObjectRef};
use crate::report::Subject;
use crate::rules::kw1xx::credentials::from_other_component;
use crate::rules::kw5xx::nodeclass::{describe_command, Selected};
use crate::rules::version::before_v0_32;
use crate::rules::Diagnosis;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StepStatus {
    Ok,
    Problem,
    NotCollected,
}

impl StepStatus {
    /// The word every renderer prints.
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Ok => "ok",
            StepStatus::Problem => "problem",
            StepStatus::NotCollected => "not collected",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChecklistStep {
    pub step: u8,
    pub name: &'static str,
    pub status: StepStatus,
    pub signal: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Missing {
    pub what: String,
    /// Why it is missing, when a collection attempt failed (live mode: "forbidden (403): ...").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// One or more shell lines, ready to paste.
    pub command: String,
}

/// The longest signal quoted in a step; the full line is in the diagnoses' evidence.
const SIGNAL_CHARS: usize = 160;

/// Namespaces Karpenter is commonly installed in, tried in turn when the input does not say.
const COMMON_KARPENTER_NAMESPACES: &str = "kube-system karpenter";

const IAM_IDS: &[&str] = &["KW101", "KW102", "KW103", "KW105"];
const IAM_SIGNALS: &[&str] = &[
    "UnauthorizedOperation",
    "AccessDenied",
    "is not authorized to perform",
    "unauthorized to call",
    "Encoded authorization failure message",
    "NoCredentialProviders",
];
/// Log levels that mean something went wrong.
const BAD_LEVELS: &[&str] = &["ERROR", "WARN", "WARNING", "FATAL", "PANIC", "DPANIC"];
const NODECLASS_IDS: &[&str] = &["KW501", "KW502", "KW503"];
const NODEPOOL_IDS: &[&str] = &["KW205", "KW207", "KW208", "KW216"];
const NODECLASS_CONDITIONS: &[&str] = &[
    "SubnetsReady",
    "SecurityGroupsReady",
    "AMIsReady",
    "InstanceProfileReady",
    "ValidationSucceeded",
    "Ready",
];
const NODECLAIM_CONDITIONS: &[&str] = &["Launched", "Registered", "Initialized", "Ready"];

/// Step 2's name for an input from before v0.28, which had no Machines.
pub const PRE_MACHINE_STEP: &str = "Karpenter nodes";
/// The nodes a Provisioner launched before v0.28, when Karpenter created the Node itself.
const PRE_MACHINE_NODES: &str =
    "kubectl get nodes -l karpenter.sh/provisioner-name -L karpenter.sh/provisioner-name";
/// v0.28-v0.31: the Machines.
const MACHINES: &str = "kubectl describe machines.karpenter.sh";
/// A pre-v0.32 input that does not say whether it is older than v0.28: the Machines, else (the
/// resource type unknown to the cluster) the Provisioners' nodes.
const LEGACY_CLAIMS: &str = "kubectl describe machines.karpenter.sh || kubectl get nodes -l karpenter.sh/provisioner-name -L karpenter.sh/provisioner-name";

/// Walks the checklist; returns the steps and the missing facts.
pub fn walk(
    facts: &Facts,
    diagnoses: &[Diagnosis],
    subject: Option<&Subject>,
) -> (Vec<ChecklistStep>, Vec<Missing>) {
    let names = Names::gather(facts, diagnoses, subject);
    let ctx = Ctx {
        facts,
        diagnoses,
        legacy: names.legacy,
    };
    // Before v0.32 the steps are about the objects of that API, by their own names.
    let (claims_step, nodeclass_step, nodepool_step) = if names.pre_machine == Some(true) {
        (PRE_MACHINE_STEP, "AWSNodeTemplate", "Provisioner")
    } else if names.legacy {
        ("Machines", "AWSNodeTemplate", "Provisioner")
    } else {
        ("NodeClaims", "EC2NodeClass", "NodePool")
    };
    let (claims_what, claims_command, nodeclass_what, nodepool_what) = if names.legacy {
        // The Machine CRD arrived with v0.28: before it, `kubectl describe machines` fails and
        // the Provisioner's nodes (its label) are what Karpenter launched.
        let (what, command) = match names.pre_machine {
            Some(true) => (
                "Nodes Karpenter launched (before v0.28 there are no Machines; none listed means Karpenter launched no node)",
                PRE_MACHINE_NODES,
            ),
            Some(false) => (
                "Machines (none listed means Karpenter made no request)",
                MACHINES,
            ),
            None => (
                "Machines (none listed means Karpenter made no request; before v0.28 there are no Machines, so the command falls back to the Provisioners' nodes)",
                LEGACY_CLAIMS,
            ),
        };
        (
            what,
            command,
            "AWSNodeTemplate spec and status (subnetSelector, securityGroupSelector)",
            "Provisioner spec and status (capacity types, instance types, zones, limits)",
        )
    } else {
        (
            "NodeClaims (none listed means Karpenter made no request)",
            "kubectl describe nodeclaims",
            "EC2NodeClass spec and status (subnetSelectorTerms, securityGroupSelectorTerms, conditions)",
            "NodePool spec and status (capacity types, instance types, zones, limits)",
        )
    };
    let steps: [(&'static str, Seen, String, String); 8] = [
        (
            names.events_step(),
            ctx.pod_events(names.other_subject.as_ref(), names.events_kind),
            format!("Events of {}", names.target_label()),
            names.events_command(),
        ),
        (
            claims_step,
            if names.pre_machine == Some(true) {
                ctx.provisioner_nodes()
            } else {
                ctx.nodeclaims()
            },
            claims_what.to_string(),
            claims_command.to_string(),
        ),
        (
            "Karpenter logs",
            ctx.karpenter_logs(),
            "Karpenter controller logs".to_string(),
            names.logs_command(""),
        ),
        (
            "Debug logs",
            ctx.debug_logs(),
            if names.legacy {
                "Karpenter debug logs: raise the level, reproduce, collect the logs again, then revert with loglevel.controller: info (KW004)"
            } else {
                "Karpenter debug logs: raise the level, reproduce, collect the logs again, then revert with LOG_LEVEL=info (KW004)"
            }
            .to_string(),
            names.debug_command(),
        ),
        (
            nodeclass_step,
            ctx.nodeclass(),
            nodeclass_what.to_string(),
            names.nodeclass_yaml(),
        ),
        (
            "Real resource tags",
            ctx.resource_tags(),
            "The AWS subnets and security groups the selector terms should match".to_string(),
            names.tags_command(facts),
        ),
        (
            "IAM",
            ctx.iam(),
            "Authorization errors in the Karpenter logs (decode a blob with `aws sts decode-authorization-message`)".to_string(),
            names.logs_command(" | grep -iE 'unauthorized|accessdenied|not authorized'"),
        ),
        (
            nodepool_step,
            ctx.nodepool(),
            nodepool_what.to_string(),
            names.nodepool_yaml(),
        ),
    ];
    let mut checklist = Vec::new();
    let mut missing = Vec::new();
    for (i, (name, seen, what, command)) in steps.into_iter().enumerate() {
        // Its command is in the input, and nothing the step needs came out of it: asking
        // for the same output again would not help.
        let ran = seen.status == StepStatus::NotCollected && facts.ran(&command);
        let seen = if ran {
            Seen {
                signal: format!(
                    "{}, though `{command}` is in the input (it printed none)",
                    seen.signal
                ),
                ..seen
            }
        } else {
            seen
        };
        if seen.status == StepStatus::NotCollected && !ran {
            missing.push(Missing {
                what,
                reason: None,
                command,
            });
        }
        checklist.push(ChecklistStep {
            step: i as u8 + 1,
            name,
            status: seen.status,
            signal: seen.signal,
        });
    }
    (checklist, missing)
}

struct Seen {
    status: StepStatus,
    signal: String,
}

impl Seen {
    fn ok(signal: impl Into<String>) -> Self {
        Seen {
            status: StepStatus::Ok,
            signal: signal.into(),
        }
    }
    fn problem(signal: impl Into<String>) -> Self {
        Seen {
            status: StepStatus::Problem,
            signal: clip(&signal.into()),
        }
    }
    fn not_collected(signal: impl Into<String>) -> Self {
        Seen {
            status: StepStatus::NotCollected,
            signal: signal.into(),
        }
    }
}

/// One line, runs of spaces (table columns of a pasted describe) collapsed, at most
/// `SIGNAL_CHARS` characters.
fn clip(s: &str) -> String {
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match s.char_indices().nth(SIGNAL_CHARS) {
        Some((cut, _)) => format!("{}...", &s[..cut]),
        None => s,
    }
}

/// The kind an object is shown as: the v1alpha1 / v1alpha5 one for an object of that API.
fn class_kind(nc: &crate::facts::NodeClass) -> &'static str {
    if nc.is_aws_node_template {
        "AWSNodeTemplate"
    } else {
        "EC2NodeClass"
    }
}

fn pool_kind(np: &crate::facts::NodePool) -> &'static str {
    if np.is_provisioner {
        "Provisioner"
    } else {
        "NodePool"
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

fn failing(conditions: &[Condition], order: &[&str]) -> Option<String> {
    order.iter().find_map(|t| {
        conditions
            .iter()
            .find(|c| crate::facts::condition_type_is(&c.condition_type, t) && c.status != "True")
            .map(|c| {
                let mut s = format!("{}={}", c.condition_type, c.status);
                if let Some(r) = &c.reason {
                    s.push_str(&format!(" ({r})"));
                }
                if let Some(m) = c.message.as_deref().filter(|m| !m.is_empty()) {
                    s.push_str(&format!(": {m}"));
                }
                s
            })
    })
}

struct Ctx<'a> {
    facts: &'a Facts,
    diagnoses: &'a [Diagnosis],
    /// A cluster before v0.32 (Provisioner, Machine, AWSNodeTemplate).
    legacy: bool,
}

impl<'a> Ctx<'a> {
    /// Whether a diagnosis quotes the line of `evidence`.
    fn quoted(&self, evidence: &crate::document::Evidence) -> bool {
        self.diagnoses.iter().any(|d| {
            d.evidence
                .iter()
                .any(|q| q.source == evidence.source && q.line == evidence.line)
        })
    }

    fn diagnosis_among(&self, ids: &[&str]) -> Option<&Diagnosis> {
        self.diagnoses.iter().find(|d| ids.contains(&d.id))
    }

    /// Step 1 reads the events of pods, and of the Node / NodeClaim the report is about.
    fn pod_events(
        &self,
        other_subject: Option<&(String, Vec<String>)>,
        events_kind: Option<&'static str>,
    ) -> Seen {
        let f = self.facts;
        let scheduling_events = f.events.iter().filter(|e| e.reason == "FailedScheduling");
        // Karpenter's own FailedScheduling says more than the scheduler's.
        let failed = scheduling_events
            .clone()
            .find(|e| e.source == "karpenter")
            .or_else(|| scheduling_events.clone().next());
        let from_events = failed.map(|e| match e.source.as_str() {
            // `kubectl get events` prints no source column.
            "" => format!("FailedScheduling: {}", e.message),
            source => format!("FailedScheduling ({source}): {}", e.message),
        });
        let from_messages = || {
            let scheduling = f.messages.iter().filter(|m| {
                m.reason.as_deref() == Some("FailedScheduling")
                    || (m.origin == MessageOrigin::Unrecognised
                        && contains_ignore_ascii_case(&m.text, "FailedScheduling"))
            });
            scheduling
                .clone()
                .find(|m| {
                    m.component.as_deref() == Some("karpenter")
                        || contains_ignore_ascii_case(&m.text, "Failed to schedule pod")
                })
                .or_else(|| scheduling.clone().next())
                .map(|m| match (&m.reason, &m.component) {
                    (Some(_), Some(c)) => format!("FailedScheduling ({c}): {}", m.text),
                    (Some(_), None) => format!("FailedScheduling: {}", m.text),
                    _ => m.text.clone(),
                })
        };
        let scheduling = from_events.or_else(from_messages);
        let Some((kind, names)) = other_subject else {
            if let Some(signal) = scheduling {
                if let Some(scheduled) = failed.and_then(|e| self.scheduled_since(e)) {
                    let other_warning = f
                        .events
                        .iter()
                        .any(|e| e.event_type == "Warning" && e.reason != "FailedScheduling");
                    if !other_warning {
                        return Seen::ok(format!(
                            "scheduled since ({}); before: {signal}",
                            scheduled.message
                        ));
                    }
                }
                return Seen::problem(signal);
            }
            if let Some(kind) = events_kind {
                // Only events of that kind of object, whichever it is.
                return self.events_of(&|o| o.kind.eq_ignore_ascii_case(kind), kind, None, None);
            }
            return self.events_of(&|o| o.kind == "Pod", "pod", None, None);
        };
        // A Node (NodeClaim, Machine) subject: its own events, counted apart from the pods';
        // an event of unknown object (a table without its OBJECT column) may be its.
        let of_subject =
            |o: &ObjectRef| o.kind.eq_ignore_ascii_case(kind) && names.contains(&o.name);
        let scheduling =
            scheduling.filter(|_| failed.is_none_or(|e| self.scheduled_since(e).is_none()));
        self.events_of(
            &of_subject,
            kind,
            Some(&|o: &ObjectRef| o.kind == "Pod"),
            scheduling,
        )
    }

    /// The `Scheduled` event of the pod a `FailedScheduling` event is about (its object, or
    /// `Successfully assigned <ns>/<pod> to <node>`): the failure is history.
    fn scheduled_since(&self, failed: &Event) -> Option<&'a Event> {
        let pod = failed.object.as_ref().filter(|o| o.kind == "Pod")?;
        let assigned = format!(
            "Successfully assigned {}/{} to ",
            pod.namespace.as_deref().unwrap_or_default(),
            pod.name
        );
        self.facts.events.iter().find(|e| {
            e.reason == "Scheduled"
                && (e.object.as_ref() == Some(pod) || e.message.starts_with(&assigned))
        })
    }

    /// Step 1 over the events `of_subject` accepts (and those of unknown object), named
    /// `what` (`pod`, `node`) in the signal: a Warning among them is the problem, then a
    /// pod's `scheduling` failure, else their count. `also` counts other events apart (the
    /// pods' events beside a node's); a Warning among them is a problem after the others.
    fn events_of(
        &self,
        of_subject: &dyn Fn(&ObjectRef) -> bool,
        what: &str,
        also: Option<&dyn Fn(&ObjectRef) -> bool>,
        scheduling: Option<String>,
    ) -> Seen {
        use crate::facts::Collected;
        // `kubectl get events` shows an empty REASON for some Karpenter events.
        let warning = |w: &Event| {
            Seen::problem(if w.reason.is_empty() {
                format!("Warning: {}", w.message)
            } else {
                format!("Warning {}: {}", w.reason, w.message)
            })
        };
        let f = self.facts;
        let mine = |object: Option<&ObjectRef>| object.is_none_or(of_subject);
        let other = |object: Option<&ObjectRef>| {
            object.is_some_and(|o| !of_subject(o) && also.is_some_and(|a| a(o)))
        };
        let count = |accept: &dyn Fn(Option<&ObjectRef>) -> bool| -> (Vec<&Event>, usize) {
            let events: Vec<&Event> = f
                .events
                .iter()
                .filter(|e| accept(e.object.as_ref()))
                .collect();
            let messages = f
                .messages
                .iter()
                .filter(|m| m.origin == MessageOrigin::Event && accept(m.object.as_ref()))
                .count();
            (events, messages)
        };
        let (subject_events, subject_messages) = count(&mine);
        let (other_events, other_messages) = count(&other);
        let collected = f.has(Collected::PodEvents)
            || !subject_events.is_empty()
            || subject_messages > 0
            || !other_events.is_empty()
            || other_messages > 0;
        if !collected {
            let others = f.events.len();
            return Seen::not_collected(if others == 0 {
                "no events in the input".to_string()
            } else {
                format!(
                    "no {what} events in the input ({} of other objects)",
                    plural(others, "event", "events")
                )
            });
        }
        if let Some(w) = subject_events.iter().find(|e| e.event_type == "Warning") {
            return warning(w);
        }
        // Karpenter reports some causes as Normal events (DisruptionBlocked, Unconsolidatable):
        // one a diagnosis quotes is no "ok".
        if let Some(e) = subject_events.iter().find(|e| self.quoted(&e.evidence)) {
            return Seen::problem(format!("{}: {}", e.reason, e.message));
        }
        if let Some(signal) = scheduling {
            return Seen::problem(signal);
        }
        if let Some(w) = other_events.iter().find(|e| {
            e.event_type == "Warning"
                && !(e.reason == "FailedScheduling" && self.scheduled_since(e).is_some())
        }) {
            // Named: the step is about another object.
            let mut seen = warning(w);
            if let Some(o) = &w.object {
                seen.signal = clip(&format!(
                    "{} {}: {}",
                    o.kind.to_ascii_lowercase(),
                    o.name,
                    seen.signal
                ));
            }
            return seen;
        }
        let n = subject_events.len().max(subject_messages);
        if also.is_none() {
            return Seen::ok(format!(
                "{}, no FailedScheduling",
                plural(n, "event", "events")
            ));
        }
        let mut counts = plural(n, &format!("{what} event"), &format!("{what} events"));
        let others = other_events.len().max(other_messages);
        if others > 0 {
            counts.push_str(&format!(", {}", plural(others, "pod event", "pod events")));
        }
        Seen::ok(format!("{counts}, no Warning"))
    }

    fn nodeclaims(&self) -> Seen {
        use crate::facts::Collected;
        let f = self.facts;
        let claim = if self.legacy { "Machine" } else { "NodeClaim" };
        let empty = f.empty_lists.iter().find(|e| {
            e.resource
                .as_deref()
                .is_some_and(|r| r.contains("nodeclaim") || r.starts_with("machines"))
        });
        if let Some(e) = empty {
            return Seen::problem(format!(
                "`{}` ({}:{}): Karpenter created no {claim}",
                e.evidence.text, e.evidence.source, e.evidence.line
            ));
        }
        let mut outdated: Vec<String> = Vec::new();
        for nc in &f.nodeclaims {
            // A step the logs show done since the object was read is no longer failing.
            let current: Vec<Condition> = nc
                .conditions
                .iter()
                .filter(|c| {
                    !["Launched", "Registered", "Initialized"].iter().any(|t| {
                        crate::facts::condition_type_is(&c.condition_type, t)
                            && f.claim_step_logged(&nc.meta.name, t)
                    })
                })
                .cloned()
                .collect();
            for c in nc.conditions.iter().filter(|c| {
                c.status != "True" && !current.iter().any(|k| k.condition_type == c.condition_type)
            }) {
                outdated.push(format!("{}'s {}", nc.meta.name, c.condition_type));
            }
            if let Some(c) = failing(&current, NODECLAIM_CONDITIONS) {
                let kind = if nc.is_machine {
                    "Machine"
                } else {
                    "NodeClaim"
                };
                return Seen::problem(format!("{kind} {}: {c}", nc.meta.name));
            }
        }
        if !f.nodeclaims.is_empty() {
            let machines = f.nodeclaims.iter().all(|c| c.is_machine);
            let (one, many) = if machines {
                ("Machine", "Machines")
            } else {
                ("NodeClaim", "NodeClaims")
            };
            return Seen::ok(format!(
                "{}, {}",
                plural(f.nodeclaims.len(), one, many),
                if outdated.is_empty() {
                    "none with a False or Unknown condition".to_string()
                } else {
                    format!(
                        "none failing (the logs show {} reached since it was read)",
                        outdated.join(", ")
                    )
                }
            ));
        }
        if f.has(Collected::NodeClaims) {
            return Seen::ok(format!("{claim}s listed, none failing"));
        }
        Seen::not_collected(format!("no {claim} list or object in the input"))
    }

    /// Step 2 before v0.28: the nodes carrying a Provisioner's label, as Karpenter made no
    /// Machine then.
    fn provisioner_nodes(&self) -> Seen {
        use crate::facts::Collected;
        let f = self.facts;
        let ours: Vec<&str> = f
            .nodes
            .iter()
            .filter(|n| n.meta.label("karpenter.sh/provisioner-name").is_some())
            .map(|n| n.meta.name.as_str())
            .collect();
        match ours.as_slice() {
            [] if f.has(Collected::Nodes) => {
                Seen::ok("nodes listed, none with the karpenter.sh/provisioner-name label")
            }
            [] => Seen::not_collected("no Node with the karpenter.sh/provisioner-name label in the input (Karpenter before v0.28 made no Machines)"),
            [one] => Seen::ok(format!("node {one} of a Provisioner")),
            many => Seen::ok(format!("{} nodes of Provisioners", many.len())),
        }
    }

    /// Karpenter log lines at any of `levels` (all levels when empty): the ingest's counts,
    /// which include the noise lines the log prefilter never parsed, else the parsed records.
    fn log_lines(&self, levels: &[&str]) -> usize {
        let f = self.facts;
        let wanted = |level: &str| levels.is_empty() || levels.contains(&level);
        if f.log_lines_by_level.is_empty() {
            f.logs
                .iter()
                .filter(|l| wanted(&l.level) && !foreign_log_line(&l.evidence.text))
                .count()
        } else {
            f.log_lines_by_level
                .iter()
                .filter(|(level, _)| wanted(level))
                .map(|(_, n)| n)
                .sum()
        }
    }

    /// Lines of other components' logs (the VPC CNI's ipamd beside Karpenter's), which
    /// ingest counted apart from Karpenter's.
    fn foreign_log_lines(&self) -> usize {
        self.facts.other_component_log_lines
    }

    fn karpenter_logs(&self) -> Seen {
        use crate::facts::Collected;
        let f = self.facts;
        // Another component's JSON log pasted beside Karpenter's (the VPC CNI's ipamd, the
        // load balancer controller) is not Karpenter's: its errors are not this step's.
        let foreign = |l: &crate::facts::LogRecord| foreign_log_line(&l.evidence.text);
        let foreign_lines = self.foreign_log_lines();
        let own_lines = self.log_lines(&[]);
        if own_lines == 0 && (foreign_lines > 0 || !f.has(Collected::KarpenterLogs)) {
            return Seen::not_collected(if foreign_lines == 0 {
                "no Karpenter log lines in the input".to_string()
            } else {
                format!(
                    "no Karpenter log lines in the input ({} of other components)",
                    plural(foreign_lines, "log line", "log lines")
                )
            });
        }
        let total = plural(own_lines, "line", "lines");
        let bad =
            |l: &&crate::facts::LogRecord| BAD_LEVELS.contains(&l.level.as_str()) && !foreign(l);
        let first_bad = f.logs.iter().filter(bad).find(|l| !l.is_update_conflict());
        let conflicts = f.logs.iter().filter(bad).count();
        let own_bad = self.log_lines(BAD_LEVELS);
        match first_bad {
            None if conflicts > 0 && conflicts == own_bad => {
                let errors = if conflicts == 1 {
                    "1 ERROR, an update conflict".to_string()
                } else {
                    format!("{conflicts} ERRORs, all update conflicts")
                };
                Seen::ok(format!(
                    "{total}; {errors} (\"the object has been modified\") that Karpenter retries"
                ))
            }
            Some(first) => {
                let mut text = first.message.clone();
                if let Some(e) = &first.error {
                    text.push_str(": ");
                    text.push_str(e);
                }
                Seen::problem(format!(
                    "{} ERROR/WARN of {total}; first: {text}",
                    own_bad.max(1)
                ))
            }
            None => {
                // Karpenter logs some problems at INFO or DEBUG (client-go's warnings about an
                // unknown field, KW104): an error or warning read from its lines means they are
                // not ok. Not KW004, whose evidence is the lines' level, not what they say.
                let from_logs = self.diagnoses.iter().find(|d| {
                    d.severity != crate::rules::Severity::Info
                        && d.id != "KW004"
                        && d.evidence.iter().any(|e| {
                            f.log_record_at(&e.source, e.line)
                                .is_some_and(|r| !foreign(r))
                        })
                });
                match from_logs {
                    Some(d) => Seen::problem(format!(
                        "{total}, no ERROR or WARN, but {}: {}",
                        d.id, d.summary
                    )),
                    None => Seen::ok(format!("{total}, no ERROR or WARN")),
                }
            }
        }
    }

    fn debug_logs(&self) -> Seen {
        use crate::facts::Collected;
        let f = self.facts;
        let n = self.log_lines(&["DEBUG"]);
        if n > 0 {
            return Seen::ok(plural(n, "DEBUG line", "DEBUG lines"));
        }
        if f.has(Collected::DebugLogs) {
            return Seen::ok("Karpenter runs at debug level");
        }
        // `kubectl logs ... | grep -v DEBUG`: the paste would not show them even at debug level.
        let filtered = f.commands.iter().find(|c| {
            let line = c.evidence.text.to_ascii_lowercase();
            line.split('|').skip(1).any(|piece| {
                let mut words = piece.split_whitespace();
                words.next() == Some("grep")
                    && words
                        .clone()
                        .any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('v'))
                    && words.any(|w| w.contains("debug"))
            })
        });
        match filtered {
            Some(c) => Seen::not_collected(format!(
                "no DEBUG lines: the input's `{}` filters them out; needed when the info-level logs do not explain",
                c.evidence.text.trim().trim_start_matches('$').trim()
            )),
            None => {
                Seen::not_collected("no DEBUG lines: needed when the info-level logs do not explain")
            }
        }
    }

    fn nodeclass(&self) -> Seen {
        use crate::facts::Collected;
        let f = self.facts;
        for nc in &f.nodeclasses {
            if let Some(c) = failing(&nc.conditions, NODECLASS_CONDITIONS) {
                return Seen::problem(format!("{} {}: {c}", class_kind(nc), nc.meta.name));
            }
        }
        if let Some(d) = self.diagnosis_among(NODECLASS_IDS) {
            return Seen::problem(format!("{}: {}", d.id, d.summary));
        }
        match f.nodeclasses.first() {
            // A v1alpha1 AWSNodeTemplate has one selector map per resource, not terms.
            Some(nc) if f.nodeclasses.len() == 1 && nc.is_aws_node_template => {
                let set =
                    |terms: &[serde_json::Value]| if terms.is_empty() { "unset" } else { "set" };
                Seen::ok(format!(
                    "AWSNodeTemplate {}: subnetSelector {}, securityGroupSelector {}, no failing condition",
                    nc.meta.name,
                    set(&nc.subnet_selector_terms),
                    set(&nc.security_group_selector_terms)
                ))
            }
            // A `kubectl get` row or a piece of its status shows no selector terms: "0 subnet
            // selector terms" would be a guess.
            Some(nc) if f.nodeclasses.len() == 1 && nc.meta.from_table => Seen::ok(format!(
                "{} {}: no failing condition, seen without its selector terms (a table row or part of its status)",
                class_kind(nc),
                nc.meta.name
            )),
            Some(nc) if f.nodeclasses.len() == 1 => Seen::ok(format!(
                "{} {}: {} and {}, no failing condition",
                class_kind(nc),
                nc.meta.name,
                plural(
                    nc.subnet_selector_terms.len(),
                    "subnet selector term",
                    "subnet selector terms"
                ),
                plural(
                    nc.security_group_selector_terms.len(),
                    "security group selector term",
                    "security group selector terms"
                )
            )),
            Some(_) => Seen::ok(format!(
                "{} {}, no failing condition",
                f.nodeclasses.len(),
                if self.legacy {
                    "AWSNodeTemplates"
                } else {
                    "EC2NodeClasses"
                }
            )),
            None if f.has(Collected::NodeClasses) && self.legacy => {
                Seen::ok("AWSNodeTemplates listed")
            }
            None if f.has(Collected::NodeClasses) => Seen::ok("EC2NodeClasses listed"),
            None if self.legacy => Seen::not_collected("no AWSNodeTemplate in the input"),
            None => Seen::not_collected("no EC2NodeClass in the input"),
        }
    }

    fn resource_tags(&self) -> Seen {
        let f = self.facts;
        for nc in &f.nodeclasses {
            if let Some(c) = failing(&nc.conditions, &["SubnetsReady", "SecurityGroupsReady"]) {
                return Seen::problem(format!("{} {}: {c}", class_kind(nc), nc.meta.name));
            }
        }
        if let Some(d) = self.diagnosis_among(&["KW501"]) {
            return Seen::problem(format!("{}: {}", d.id, d.summary));
        }
        if let Some(nc) = f
            .nodeclasses
            .iter()
            .find(|nc| !nc.status_subnets.is_empty())
        {
            let mut zones: Vec<&str> = nc.status_subnets.iter().map(|(_, z)| z.as_str()).collect();
            zones.sort();
            zones.dedup();
            return Seen::ok(format!(
                "{} {} resolved {} in {}",
                class_kind(nc),
                nc.meta.name,
                plural(nc.status_subnets.len(), "subnet", "subnets"),
                zones.join(", ")
            ));
        }
        Seen::not_collected(format!(
            "no {} status.subnets and no AWS describe output",
            if self.legacy {
                "AWSNodeTemplate"
            } else {
                "EC2NodeClass"
            }
        ))
    }

    fn iam(&self) -> Seen {
        let f = self.facts;
        if let Some(d) = self.diagnosis_among(IAM_IDS) {
            return Seen::problem(format!("{}: {}", d.id, d.summary));
        }
        // The step is about the controller's role: another caller's denial (the VPC CNI, a
        // CSI driver, the user's own AWS CLI) is not its.
        if let Some(m) = f.messages.iter().find(|m| {
            IAM_SIGNALS
                .iter()
                .any(|s| contains_ignore_ascii_case(&m.text, s))
                && !from_other_component(f, m)
        }) {
            return Seen::problem(format!(
                "{}:{}: {}",
                m.evidence.source, m.evidence.line, m.text
            ));
        }
        if self.log_lines(&[]) > 0 {
            return Seen::ok(format!(
                "no authorization error in {}",
                plural(
                    self.log_lines(&[]),
                    "Karpenter log line",
                    "Karpenter log lines"
                )
            ));
        }
        Seen::not_collected("no Karpenter logs to look for authorization errors in")
    }

    fn nodepool(&self) -> Seen {
        use crate::facts::Collected;
        let f = self.facts;
        for np in &f.nodepools {
            if let Some(c) = failing(&np.conditions, &["NodeClassReady", "Ready"]) {
                return Seen::problem(format!("{} {}: {c}", pool_kind(np), np.meta.name));
            }
            if np
                .allowed_values("karpenter.sh/capacity-type")
                .is_some_and(|v| v == ["spot"])
            {
                return Seen::problem(format!(
                    "{} {} allows only spot (karpenter.sh/capacity-type In [spot])",
                    pool_kind(np),
                    np.meta.name
                ));
            }
        }
        if let Some(d) = self.diagnosis_among(NODEPOOL_IDS) {
            return Seen::problem(format!("{}: {}", d.id, d.summary));
        }
        match f.nodepools.as_slice() {
            // A `kubectl get` row or one jsonpath field shows no requirements: "zones [any]"
            // would be a guess.
            [np] if np.meta.from_table => Seen::ok(format!(
                "{} {} seen without its requirements (a table row or one printed field)",
                pool_kind(np),
                np.meta.name
            )),
            [np] => {
                let values = |key: &str| {
                    np.allowed_values(key)
                        .map(|v| v.join(" "))
                        .unwrap_or_else(|| "any".to_string())
                };
                Seen::ok(format!(
                    "{} {}: zones [{}], capacity types [{}], {}",
                    pool_kind(np),
                    np.meta.name,
                    values("topology.kubernetes.io/zone"),
                    values("karpenter.sh/capacity-type"),
                    plural(np.requirements.len(), "requirement", "requirements")
                ))
            }
            // Listed, and the list came back empty (`No resources found`).
            [] if f.has(Collected::NodePools) => Seen::ok(format!(
                "the {} list is empty: nothing for Karpenter to launch from",
                if self.legacy {
                    "Provisioner"
                } else {
                    "NodePool"
                }
            )),
            [] if self.legacy => Seen::not_collected("no Provisioner in the input"),
            [] => Seen::not_collected("no NodePool in the input"),
            many => Seen::ok(format!(
                "{} {}, none failing",
                many.len(),
                if many.iter().all(|p| p.is_provisioner) {
                    "Provisioners"
                } else {
                    "NodePools"
                }
            )),
        }
    }
}

/// The names commands are filled in with.
struct Names {
    /// (namespace, name) of the pod the report is about.
    pod: Option<(Option<String>, String)>,
    /// The kind (`node`, `nodeclaim`, `machine`) and names of the Node / NodeClaim / Machine
    /// subject, when the report is about one or several of them.
    other_subject: Option<(String, Vec<String>)>,
    karpenter_namespace: Option<String>,
    nodepools: Vec<String>,
    nodeclasses: Vec<String>,
    /// A cluster before v0.32: commands name machines, provisioners and awsnodetemplates.
    legacy: bool,
    /// Whether that cluster is older than v0.28, which had no Machines (see
    /// `era_before_v0_28`).
    pre_machine: Option<bool>,
    /// With no subject at all: the kind every event is about, when the events say (a bare
    /// `Events:` block copied from `kubectl describe node` holds Karpenter's "Cannot disrupt
    /// Node" and the node controller's events, and names nothing).
    events_kind: Option<&'static str>,
}

fn push_unique(list: &mut Vec<String>, name: &str) {
    if !name.is_empty() && !list.iter().any(|n| n == name) {
        list.push(name.to_string());
    }
}

/// The kind (`node`, `nodeclaim`) of object every event is about, read from the events
/// themselves; `None` when any could be a pod's or none says.
fn events_kind(events: &[Event]) -> Option<&'static str> {
    let kind_of = |e: &Event| -> Option<&'static str> {
        match e.object.as_ref().map(|o| o.kind.as_str()) {
            Some("Node") => return Some("node"),
            Some("NodeClaim") => return Some("nodeclaim"),
            Some(_) => return None,
            None => {}
        }
        let message = e.message.as_str();
        if message.starts_with("Cannot disrupt NodeClaim") {
            Some("nodeclaim")
        } else if message.starts_with("Cannot disrupt Node")
            || message.starts_with("Node ")
            || crate::facts::NODE_EVENT_REASONS.contains(&e.reason.as_str())
            || e.source == "node-controller"
        {
            Some("node")
        } else {
            None
        }
    };
    let first = kind_of(events.first()?)?;
    events
        .iter()
        .all(|e| kind_of(e) == Some(first))
        .then_some(first)
}

impl Names {
    fn gather(facts: &Facts, diagnoses: &[Diagnosis], subject: Option<&Subject>) -> Self {
        let subject_pod = subject.and_then(|s| match s.kind.as_str() {
            "Pod" => Some((s.namespace.clone(), s.name.clone())),
            "Pods" => s
                .objects
                .first()
                .map(|o| (o.namespace.clone(), o.name.clone())),
            _ => None,
        });
        let pod = subject_pod
            .or_else(|| {
                diagnoses
                    .iter()
                    .filter_map(|d| d.object.as_ref())
                    .find(|o| o.kind == "Pod")
                    .map(|o| (o.namespace.clone(), o.name.clone()))
            })
            .or_else(|| {
                let p = facts.pending_pods().next().or(facts.pods.first())?;
                Some((p.meta.namespace.clone(), p.meta.name.clone()))
            });
        let other_subject = subject.and_then(|s| {
            let kind = match s.kind.as_str() {
                "Node" | "Nodes" => "node",
                "NodeClaim" | "NodeClaims" => "nodeclaim",
                "Machine" | "Machines" => "machine",
                _ => return None,
            };
            let names = if s.objects.is_empty() {
                vec![s.name.clone()]
            } else {
                s.objects.iter().map(|o| o.name.clone()).collect()
            };
            Some((kind.to_string(), names))
        });
        let mut nodepools = Vec::new();
        for np in &facts.nodepools {
            push_unique(&mut nodepools, &np.meta.name);
        }
        for d in diagnoses {
            for np in d.node_pool.iter().chain(&d.node_pools) {
                push_unique(&mut nodepools, np);
            }
        }
        for nc in &facts.nodeclaims {
            if let Some(np) = &nc.nodepool {
                push_unique(&mut nodepools, np);
            }
        }
        for p in &facts.pods {
            for key in ["karpenter.sh/nodepool", "karpenter.sh/provisioner-name"] {
                if let Some(np) = p.node_selector.get(key) {
                    push_unique(&mut nodepools, np);
                }
            }
        }
        let mut nodeclasses = Vec::new();
        for nc in &facts.nodeclasses {
            push_unique(&mut nodeclasses, &nc.meta.name);
        }
        let refs = facts
            .nodepools
            .iter()
            .filter_map(|np| np.nodeclass_ref.as_deref())
            .chain(
                facts
                    .nodeclaims
                    .iter()
                    .filter_map(|nc| nc.nodeclass_ref.as_deref()),
            );
        for r in refs {
            push_unique(&mut nodeclasses, r);
        }
        let events_kind = if pod.is_none() && other_subject.is_none() {
            events_kind(&facts.events)
        } else {
            None
        };
        Names {
            pod,
            other_subject,
            karpenter_namespace: crate::rules::text::karpenter_namespace(facts),
            nodepools,
            nodeclasses,
            legacy: before_v0_32(facts),
            pre_machine: crate::rules::version::era_before_v0_28(facts),
            events_kind,
        }
    }

    /// Step 1's name: the events of what the report is about.
    fn events_step(&self) -> &'static str {
        let kind = self.other_subject.as_ref().map(|(kind, _)| kind.as_str());
        match kind.or(self.events_kind) {
            Some("node") => "Node events",
            Some("nodeclaim") => "NodeClaim events",
            Some("machine") => "Machine events",
            _ => "Pod events",
        }
    }

    fn target_label(&self) -> String {
        if let Some((kind, names)) = &self.other_subject {
            return match names.as_slice() {
                [one] => format!("{kind} {one}"),
                several => format!("{kind}s {}", several.join(", ")),
            };
        }
        match &self.pod {
            Some((Some(ns), name)) => format!("pod {ns}/{name}"),
            Some((None, name)) => format!("pod {name}"),
            None => "the Pending pods".to_string(),
        }
    }

    fn events_command(&self) -> String {
        if let Some((kind, names)) = &self.other_subject {
            let resource = match kind.as_str() {
                "machine" => crate::rules::version::MACHINES_RESOURCE,
                other => other,
            };
            return format!("kubectl describe {resource} {}", names.join(" "));
        }
        match &self.pod {
            Some((Some(ns), name)) => format!("kubectl describe pod {name} -n {ns}"),
            Some((None, name)) => format!("kubectl describe pod {name}"),
            None => "kubectl get events -A --field-selector reason=FailedScheduling".to_string(),
        }
    }

    /// `kubectl logs` of the Karpenter controller in its namespace, or in each common one
    /// when the input does not say which.
    fn logs_command(&self, pipe: &str) -> String {
        const LOGS: &str = "-l app.kubernetes.io/name=karpenter --since=1h --prefix";
        match &self.karpenter_namespace {
            Some(ns) => format!("kubectl logs -n {ns} {LOGS}{pipe}"),
            None => format!(
                "for ns in {COMMON_KARPENTER_NAMESPACES}; do kubectl logs -n \"$ns\" {LOGS}; done{pipe}"
            ),
        }
    }

    fn debug_command(&self) -> String {
        // Before v0.32 the level is the config-logging ConfigMap's, which the controller
        // watches; there is no LOG_LEVEL env (KW005 says the same).
        if self.legacy {
            let patch = "kubectl patch configmap config-logging --type merge -p '{\"data\":{\"loglevel.controller\":\"debug\"}}'";
            return match &self.karpenter_namespace {
                Some(ns) => patch.replace("config-logging ", &format!("config-logging -n {ns} ")),
                None => format!(
                    "for ns in {COMMON_KARPENTER_NAMESPACES}; do {}; done",
                    patch.replace("config-logging ", "config-logging -n \"$ns\" ")
                ),
            };
        }
        match &self.karpenter_namespace {
            Some(ns) => format!("kubectl set env deployment/karpenter -n {ns} LOG_LEVEL=debug"),
            None => format!(
                "for ns in {COMMON_KARPENTER_NAMESPACES}; do kubectl set env deployment/karpenter -n \"$ns\" LOG_LEVEL=debug; done"
            ),
        }
    }

    /// The EC2NodeClasses (before v0.32, the AWSNodeTemplates) as YAML.
    fn nodeclass_yaml(&self) -> String {
        if self.legacy {
            self.get_yaml("awsnodetemplate", "awsnodetemplates", &self.nodeclasses)
        } else {
            self.get_yaml("ec2nodeclass", "ec2nodeclasses", &self.nodeclasses)
        }
    }

    /// The NodePools (before v0.32, the Provisioners) as YAML.
    fn nodepool_yaml(&self) -> String {
        if self.legacy {
            self.get_yaml("provisioner", "provisioners", &self.nodepools)
        } else {
            self.get_yaml("nodepool", "nodepools", &self.nodepools)
        }
    }

    fn get_yaml(&self, one: &str, all: &str, names: &[String]) -> String {
        if names.is_empty() {
            format!("kubectl get {all} -o yaml")
        } else {
            format!("kubectl get {one} {} -o yaml", names.join(" "))
        }
    }

    /// `aws ec2 describe-subnets` / `describe-security-groups` with the EC2NodeClass's own
    /// selector terms when the input has them, else the getting-started guide's
    /// `karpenter.sh/discovery` convention with a placeholder.
    fn tags_command(&self, facts: &Facts) -> String {
        let mut lines = Vec::new();
        let known: Vec<_> = facts
            .nodeclasses
            .iter()
            .filter(|nc| self.nodeclasses.contains(&nc.meta.name))
            .collect();
        for nc in &known {
            let terms = (nc
                .subnet_selector_terms
                .iter()
                .map(|t| (Selected::Subnets, t)))
            .chain(
                (nc.security_group_selector_terms.iter()).map(|t| (Selected::SecurityGroups, t)),
            );
            for (selected, term) in terms {
                if selects_something(term) {
                    lines.push(describe_command(selected, term));
                }
            }
        }
        if lines.is_empty() {
            let source = match self.nodeclasses.first() {
                // The v1alpha1 AWSNodeTemplate has one selector map per resource, not terms.
                Some(nc) if self.legacy => format!("kubectl get awsnodetemplate {nc} -o jsonpath='{{.spec.subnetSelector}}{{\"\\n\"}}{{.spec.securityGroupSelector}}{{\"\\n\"}}'"),
                None if self.legacy => "kubectl get awsnodetemplates -o jsonpath='{range .items[*]}{.metadata.name}: {.spec.subnetSelector} {.spec.securityGroupSelector}{\"\\n\"}{end}'".to_string(),
                Some(nc) => format!("kubectl get ec2nodeclass {nc} -o jsonpath='{{.spec.subnetSelectorTerms}}{{\"\\n\"}}{{.spec.securityGroupSelectorTerms}}{{\"\\n\"}}'"),
                None => "kubectl get ec2nodeclasses -o jsonpath='{range .items[*]}{.metadata.name}: {.spec.subnetSelectorTerms} {.spec.securityGroupSelectorTerms}{\"\\n\"}{end}'".to_string(),
            };
            lines.push(source);
            let cluster = crate::rules::text::cluster_name(facts)
                .unwrap_or_else(|| "<cluster-name>".to_string());
            lines.push(format!("aws ec2 describe-subnets --filters \"Name=tag:karpenter.sh/discovery,Values={cluster}\" --query 'Subnets[].[SubnetId,AvailabilityZone,AvailableIpAddressCount]' --output table"));
            lines.push(format!("aws ec2 describe-security-groups --filters \"Name=tag:karpenter.sh/discovery,Values={cluster}\" --query 'SecurityGroups[].[GroupId,GroupName,VpcId]' --output table"));
        }
        lines.join("\n")
    }
}

/// A selector term the AWS CLI can express: an ID, a name or tags.
fn selects_something(term: &serde_json::Value) -> bool {
    term.get("id").is_some_and(|v| v.is_string())
        || term.get("name").is_some_and(|v| v.is_string())
        || term
            .get("tags")
            .and_then(|v| v.as_object())
            .is_some_and(|tags| !tags.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::Evidence;
    use crate::facts::{
        Collected, EmptyList, Event, LogRecord, NodeClaim, NodeClass, NodePool, Requirement,
    };
    use crate::report::infer_subject;

    fn run(facts: &Facts) -> (Vec<ChecklistStep>, Vec<Missing>) {
        let subject = infer_subject(facts, &[]);
        walk(facts, &[], subject.as_ref())
    }

    fn status(steps: &[ChecklistStep]) -> Vec<&'static str> {
        steps.iter().map(|s| s.status.as_str()).collect()
    }

    fn log(level: &str, message: &str) -> LogRecord {
        LogRecord {
            level: level.into(),
            message: message.into(),
            ..Default::default()
        }
    }

    #[test]
    fn empty_input_collects_nothing_and_lists_every_command() {
        let (steps, missing) = run(&Facts::default());
        assert_eq!(steps.len(), 8);
        assert!(steps.iter().all(|s| s.status == StepStatus::NotCollected));
        assert_eq!(
            steps.iter().map(|s| s.step).collect::<Vec<_>>(),
            [1, 2, 3, 4, 5, 6, 7, 8]
        );
        assert_eq!(missing.len(), 8);
        assert!(missing[2]
            .command
            .starts_with("for ns in kube-system karpenter; do kubectl logs -n \"$ns\""));
        assert_eq!(missing[4].command, "kubectl get ec2nodeclasses -o yaml");
        assert_eq!(missing[7].command, "kubectl get nodepools -o yaml");
        assert!(missing[5].command.contains("<cluster-name>"));
    }

    #[test]
    fn commands_are_filled_with_known_names() {
        let mut facts = Facts::default();
        let mut pod = crate::facts::Pod::default();
        pod.meta.name = "web-0".into();
        pod.meta.namespace = Some("shop".into());
        pod.phase = Some("Pending".into());
        pod.node_selector
            .insert("karpenter.sh/nodepool".into(), "general".into());
        facts.pods.push(pod);
        facts.karpenter_namespace = Some("karpenter".into());
        let mut nc = NodeClaim::default();
        nc.meta.name = "general-abc".into();
        nc.nodeclass_ref = Some("al2023".into());
        facts.nodeclaims.push(nc);
        let (steps, missing) = run(&facts);
        let cmd = |what: &str| {
            missing
                .iter()
                .find(|m| m.what.starts_with(what))
                .map(|m| m.command.clone())
                .unwrap()
        };
        assert_eq!(
            cmd("Events of pod shop/web-0"),
            "kubectl describe pod web-0 -n shop"
        );
        assert_eq!(
            cmd("Karpenter controller logs"),
            "kubectl logs -n karpenter -l app.kubernetes.io/name=karpenter --since=1h --prefix"
        );
        assert_eq!(
            cmd("Karpenter debug logs"),
            "kubectl set env deployment/karpenter -n karpenter LOG_LEVEL=debug"
        );
        assert_eq!(
            cmd("EC2NodeClass"),
            "kubectl get ec2nodeclass al2023 -o yaml"
        );
        assert_eq!(cmd("NodePool"), "kubectl get nodepool general -o yaml");
        assert!(cmd("The AWS subnets").contains("kubectl get ec2nodeclass al2023"));
        assert_eq!(steps[1].status, StepStatus::Ok, "{:?}", steps[1]);
    }

    #[test]
    fn failed_scheduling_and_error_logs_are_problems() {
        let mut facts = Facts::default();
        facts.events.push(Event {
            event_type: "Warning".into(),
            reason: "FailedScheduling".into(),
            source: "default-scheduler".into(),
            message: "0/3 nodes are available".into(),
            ..Default::default()
        });
        facts.events.push(Event {
            event_type: "Warning".into(),
            reason: "FailedScheduling".into(),
            source: "karpenter".into(),
            message: "Failed to schedule pod, no instance type has the required offering".into(),
            ..Default::default()
        });
        facts.logs.push(log("INFO", "found provisionable pod(s)"));
        facts.logs.push(LogRecord {
            error: Some("no instance type has the required offering".into()),
            ..log("ERROR", "could not schedule pod")
        });
        let (steps, missing) = run(&facts);
        assert_eq!(
            status(&steps),
            [
                "problem",
                "not collected",
                "problem",
                "not collected",
                "not collected",
                "not collected",
                "ok",
                "not collected"
            ]
        );
        assert!(steps[0]
            .signal
            .starts_with("FailedScheduling (karpenter): Failed to schedule pod"));
        assert_eq!(
            steps[2].signal,
            "1 ERROR/WARN of 2 lines; first: could not schedule pod: no instance type has the required offering"
        );
        assert_eq!(
            steps[6].signal,
            "no authorization error in 2 Karpenter log lines"
        );
        assert_eq!(missing.len(), 5);
    }

    #[test]
    fn update_conflicts_alone_do_not_make_the_logs_a_problem() {
        let conflict = || {
            LogRecord {
            error: Some("Operation cannot be fulfilled on nodeclaims.karpenter.sh \"a\": the object has been modified; please apply your changes to the latest version and try again".into()),
            ..log("ERROR", "Reconciler error")
        }
        };
        let mut facts = Facts::default();
        facts.logs.push(log("INFO", "found provisionable pod(s)"));
        facts.logs.push(conflict());
        let (steps, _) = run(&facts);
        assert_eq!(steps[2].status.as_str(), "ok");
        assert_eq!(
            steps[2].signal,
            "2 lines; 1 ERROR, an update conflict (\"the object has been modified\") that Karpenter retries"
        );
        facts.logs.push(LogRecord {
            error: Some("no instance type has the required offering".into()),
            ..log("ERROR", "could not schedule pod")
        });
        let (steps, _) = run(&facts);
        assert_eq!(steps[2].status.as_str(), "problem");
        assert_eq!(
            steps[2].signal,
            "2 ERROR/WARN of 3 lines; first: could not schedule pod: no instance type has the required offering"
        );
    }

    /// A log command piped through `grep -v DEBUG` shows no DEBUG line at any level: the
    /// step says so rather than only asking for debug logs.
    #[test]
    fn debug_lines_filtered_out_by_the_pasted_command_are_named() {
        let command = |text: &str| crate::facts::ShellCommand {
            tool: "kubectl".into(),
            verb: Some("logs".into()),
            evidence: Evidence {
                text: text.into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut facts = Facts::default();
        facts.logs.push(log("INFO", "found provisionable pod(s)"));
        for line in [
            "$ kubectl logs -n karpenter deploy/karpenter | grep -v DEBUG",
            "kubectl logs deploy/karpenter -n kube-system | grep -vi '\"level\":\"debug\"'",
        ] {
            facts.commands = vec![command(line)];
            let (steps, _) = run(&facts);
            assert!(
                steps[3].signal.contains("filters them out"),
                "{line}: {}",
                steps[3].signal
            );
        }
        // A grep keeping the lines, or one about something else, filters nothing out.
        for line in [
            "kubectl logs deploy/karpenter -n karpenter | grep DEBUG",
            "kubectl logs deploy/karpenter -n karpenter | grep -v webhook",
            "kubectl logs deploy/karpenter -n karpenter --debug",
        ] {
            facts.commands = vec![command(line)];
            let (steps, _) = run(&facts);
            assert_eq!(
                steps[3].signal, "no DEBUG lines: needed when the info-level logs do not explain",
                "{line}"
            );
        }
    }

    #[test]
    fn log_counts_include_the_lines_the_prefilter_skipped() {
        let mut facts = Facts::default();
        facts.logs.push(LogRecord {
            error: Some("boom".into()),
            ..log("ERROR", "failed launching nodeclaim")
        });
        facts.log_lines_by_level.insert("INFO".into(), 1200);
        facts.log_lines_by_level.insert("ERROR".into(), 3);
        facts.log_lines_by_level.insert("DEBUG".into(), 40);
        let (steps, _) = run(&facts);
        assert_eq!(
            steps[2].signal,
            "3 ERROR/WARN of 1243 lines; first: failed launching nodeclaim: boom"
        );
        assert_eq!(steps[3].signal, "40 DEBUG lines");
        assert_eq!(
            steps[6].signal,
            "no authorization error in 1243 Karpenter log lines"
        );
    }

    /// A Machine read before it registered, with a later `registered machine` line: its step
    /// 2 is not a problem.
    #[test]
    fn a_condition_the_logs_outdate_is_not_a_problem() {
        let text = "apiVersion: karpenter.sh/v1alpha5\nkind: Machine\nmetadata:\n  name: default-r9k2x\nstatus:\n  conditions:\n  - {type: MachineLaunched, status: \"True\"}\n  - {type: MachineRegistered, status: Unknown, reason: NodeNotFound}\n---\n2023-08-10T11:28:02.540Z\tINFO\tcontroller.machine.lifecycle\tregistered machine\t{\"commit\": \"5a2fe84\", \"machine\": \"default-r9k2x\"}\n";
        let facts = crate::ingest::ingest(&[crate::document::Document::new("t", text)]);
        let (steps, _) = run(&facts);
        assert_eq!(steps[1].status, StepStatus::Ok, "{}", steps[1].signal);
        assert_eq!(
            steps[1].signal,
            "1 Machine, none failing (the logs show default-r9k2x's MachineRegistered reached since it was read)"
        );
        let other = text.replace(
            "\"machine\": \"default-r9k2x\"",
            "\"machine\": \"default-q7w2e\"",
        );
        let facts = crate::ingest::ingest(&[crate::document::Document::new("t", &other)]);
        assert_eq!(run(&facts).0[1].status, StepStatus::Problem);
    }

    #[test]
    fn unparsed_describe_lines_still_show_failed_scheduling() {
        let mut facts = Facts::default();
        for text in [
            "Warning  FailedScheduling  3m  default-scheduler  0/3 nodes are available",
            "Warning  FailedScheduling  2m  karpenter  Failed to schedule pod",
        ] {
            facts.messages.push(crate::facts::Message {
                text: text.into(),
                ..Default::default()
            });
        }
        let (steps, _) = run(&facts);
        assert_eq!(steps[0].status, StepStatus::Problem);
        assert_eq!(
            steps[0].signal,
            "Warning FailedScheduling 2m karpenter Failed to schedule pod"
        );
    }

    #[test]
    fn a_cluster_before_v0_32_gets_the_v1alpha5_commands() {
        // A Pending pod pinned by the v1alpha5 label, from a v0.31 install.
        let mut facts = Facts::default();
        let mut pod = crate::facts::Pod::default();
        pod.meta.name = "web-0".into();
        pod.meta.namespace = Some("shop".into());
        pod.phase = Some("Pending".into());
        pod.node_selector
            .insert("karpenter.sh/provisioner-name".into(), "general".into());
        facts.pods.push(pod);
        let (steps, missing) = run(&facts);
        let cmd = |what: &str| {
            missing
                .iter()
                .find(|m| m.what.starts_with(what))
                .map(|m| m.command.clone())
                .unwrap_or_else(|| panic!("{what}: {missing:?}"))
        };
        // v0.28-v0.31 or older is not said: the Machines, else the Provisioners' nodes. The
        // resource is group-qualified: `machines` alone may be Cluster API's.
        assert_eq!(
            cmd("Machines"),
            "kubectl describe machines.karpenter.sh || kubectl get nodes -l karpenter.sh/provisioner-name -L karpenter.sh/provisioner-name"
        );
        // Before v0.28 there is no Machine CRD: the step lists the Provisioners' nodes.
        facts.karpenter_version = Some("0.27.3".into());
        let (old_steps, old_missing) = run(&facts);
        assert_eq!(old_steps[1].name, "Karpenter nodes");
        let nodes = old_missing
            .iter()
            .find(|m| m.what.starts_with("Nodes Karpenter launched"))
            .unwrap_or_else(|| panic!("{old_missing:?}"));
        assert_eq!(
            nodes.command,
            "kubectl get nodes -l karpenter.sh/provisioner-name -L karpenter.sh/provisioner-name"
        );
        assert!(old_missing.iter().all(|m| !m.command.contains("machine")));
        facts.karpenter_version = Some("0.31.1".into());
        let v031 = run(&facts).1;
        assert!(
            v031.iter()
                .any(|m| m.command == "kubectl describe machines.karpenter.sh"),
            "{v031:?}"
        );
        // No LOG_LEVEL env before v0.32: the config-logging ConfigMap.
        let debug = old_missing
            .iter()
            .find(|m| m.what.starts_with("Karpenter debug logs"))
            .unwrap_or_else(|| panic!("{old_missing:?}"));
        assert!(
            debug.what.ends_with("revert with loglevel.controller: info (KW004)")
                && debug.command == "for ns in kube-system karpenter; do kubectl patch configmap config-logging -n \"$ns\" --type merge -p '{\"data\":{\"loglevel.controller\":\"debug\"}}'; done",
            "{debug:?}"
        );
        facts.karpenter_version = None;
        assert_eq!(
            cmd("AWSNodeTemplate"),
            "kubectl get awsnodetemplates -o yaml"
        );
        assert_eq!(
            cmd("Provisioner"),
            "kubectl get provisioner general -o yaml"
        );
        assert!(cmd("The AWS subnets").starts_with(
            "kubectl get awsnodetemplates -o jsonpath='{range .items[*]}{.metadata.name}: {.spec.subnetSelector} {.spec.securityGroupSelector}"
        ));
        assert!(missing.iter().all(|m| !m.command.contains("nodeclaim")
            && !m.command.contains("nodepool")
            && !m.command.contains("ec2nodeclass")));
        assert_eq!(steps[1].signal, "no Machine list or object in the input");
        // The steps are named for the v1alpha5 / v1alpha1 objects too.
        assert_eq!(
            [steps[1].name, steps[4].name, steps[7].name],
            ["Machines", "AWSNodeTemplate", "Provisioner"]
        );
        assert_eq!(
            steps[5].signal,
            "no AWSNodeTemplate status.subnets and no AWS describe output"
        );
        // An AWSNodeTemplate's selectors are maps, not terms.
        let mut template = NodeClass::default();
        template.meta.name = "default".into();
        template.is_aws_node_template = true;
        template
            .subnet_selector_terms
            .push(serde_json::json!({"tags": {"karpenter.sh/discovery": "demo"}}));
        facts.nodeclasses.push(template);
        let (steps, _) = run(&facts);
        assert_eq!(
            steps[4].signal,
            "AWSNodeTemplate default: subnetSelector set, securityGroupSelector unset, no failing condition"
        );
        facts.nodeclasses.clear();
        // A spot-only Provisioner is a Provisioner.
        let mut batch = NodePool::default();
        batch.meta.name = "batch".into();
        batch.is_provisioner = true;
        batch.requirements.push(Requirement {
            key: "karpenter.sh/capacity-type".into(),
            operator: "In".into(),
            values: vec!["spot".into()],
            ..Requirement::default()
        });
        facts.nodepools.push(batch);
        let (steps, _) = run(&facts);
        assert_eq!(
            steps[7].signal,
            "Provisioner batch allows only spot (karpenter.sh/capacity-type In [spot])"
        );

        // The objects say it too: an AWSNodeTemplate, and `kubectl get machines` empty.
        let mut facts = Facts::default();
        let mut template = NodeClass::default();
        template.meta.name = "bottlerocket".into();
        template.is_aws_node_template = true;
        facts.nodeclasses.push(template);
        facts.empty_lists.push(EmptyList {
            resource: Some("machines".into()),
            namespace: None,
            evidence: Evidence::new("paste", 3, "No resources found"),
        });
        let (steps, missing) = run(&facts);
        assert_eq!(
            steps[1].signal,
            "`No resources found` (paste:3): Karpenter created no Machine"
        );
        assert!(missing
            .iter()
            .any(|m| m.command == "kubectl get provisioners -o yaml"));
        assert!(missing.iter().any(|m| m.command.starts_with(
            "kubectl get awsnodetemplate bottlerocket -o jsonpath='{.spec.subnetSelector}"
        )));

        // A known version decides: the v0.31 chart.
        let facts = Facts {
            karpenter_version: Some("0.31.3".into()),
            ..Facts::default()
        };
        let (_, missing) = run(&facts);
        assert!(missing
            .iter()
            .any(|m| m.command == "kubectl get provisioners -o yaml"));
    }

    #[test]
    fn near_misses_keep_the_v1_commands() {
        // v0.32 and later, even with a leftover Provisioner object (v0.32 served both APIs).
        let mut facts = Facts {
            karpenter_version: Some("0.32.1".into()),
            ..Facts::default()
        };
        let mut provisioner = NodePool::default();
        provisioner.meta.name = "old".into();
        provisioner.is_provisioner = true;
        facts.nodepools.push(provisioner.clone());
        let (_, missing) = run(&facts);
        assert!(missing
            .iter()
            .any(|m| m.command == "kubectl describe nodeclaims"));
        assert!(missing
            .iter()
            .any(|m| m.command == "kubectl get ec2nodeclasses -o yaml"));
        let (steps, _) = run(&facts);
        assert_eq!(
            [steps[1].name, steps[4].name, steps[7].name],
            ["NodeClaims", "EC2NodeClass", "NodePool"]
        );
        // Version unknown, both APIs in the input: the NodePool wins.
        let mut facts = Facts::default();
        facts.nodepools.push(provisioner);
        let mut pool = NodePool::default();
        pool.meta.name = "default".into();
        facts.nodepools.push(pool);
        let (_, missing) = run(&facts);
        assert!(missing
            .iter()
            .any(|m| m.command == "kubectl describe nodeclaims"));
        // Nothing about the version at all: v1.
        let (_, missing) = run(&Facts::default());
        assert!(missing
            .iter()
            .any(|m| m.command == "kubectl describe nodeclaims"));
        assert!(missing
            .iter()
            .any(|m| m.command == "kubectl get nodepools -o yaml"));
    }

    #[test]
    fn no_resources_found_for_nodeclaims_is_a_problem() {
        let mut facts = Facts::default();
        facts.empty_lists.push(EmptyList {
            resource: Some("nodeclaims".into()),
            namespace: None,
            evidence: Evidence::new("paste", 3, "No resources found"),
        });
        let (steps, _) = run(&facts);
        assert_eq!(steps[1].status, StepStatus::Problem);
        assert_eq!(
            steps[1].signal,
            "`No resources found` (paste:3): Karpenter created no NodeClaim"
        );
    }

    #[test]
    fn nodeclass_and_nodepool_status() {
        let mut facts = Facts::default();
        let mut nc = NodeClass::default();
        nc.meta.name = "default".into();
        nc.subnet_selector_terms =
            vec![serde_json::json!({"tags": {"karpenter.sh/discovery": "prod"}})];
        nc.security_group_selector_terms = vec![serde_json::json!({"id": "sg-123"})];
        nc.conditions.push(Condition {
            condition_type: "SubnetsReady".into(),
            status: "False".into(),
            reason: Some("SubnetsNotFound".into()),
            message: Some("SubnetSelector did not match any Subnets".into()),
            evidence: None,
        });
        facts.nodeclasses.push(nc);
        let mut np = NodePool::default();
        np.meta.name = "spot".into();
        np.nodeclass_ref = Some("default".into());
        np.requirements.push(Requirement {
            key: "karpenter.sh/capacity-type".into(),
            operator: "In".into(),
            values: vec!["spot".into()],
            min_values: None,
        });
        facts.nodepools.push(np);
        facts.collected.insert(Collected::NodePools);
        let (steps, missing) = run(&facts);
        assert_eq!(steps[4].status, StepStatus::Problem);
        assert_eq!(
            steps[4].signal,
            "EC2NodeClass default: SubnetsReady=False (SubnetsNotFound): SubnetSelector did not match any Subnets"
        );
        assert_eq!(steps[5].status, StepStatus::Problem);
        assert_eq!(steps[7].status, StepStatus::Problem);
        assert!(steps[7].signal.contains("allows only spot"));
        assert!(!missing
            .iter()
            .any(|m| m.what.starts_with("The AWS subnets")));

        // Healthy: the resolved subnets prove the tags exist; the commands use the terms.
        facts.nodeclasses[0].conditions.clear();
        facts.nodeclasses[0].status_subnets = vec![
            ("subnet-1".into(), "eu-west-1a".into()),
            ("subnet-2".into(), "eu-west-1b".into()),
        ];
        facts.nodepools[0].requirements[0]
            .values
            .push("on-demand".into());
        let (steps, _) = run(&facts);
        assert_eq!(steps[4].status, StepStatus::Ok, "{:?}", steps[4]);
        assert_eq!(
            steps[5].signal,
            "EC2NodeClass default resolved 2 subnets in eu-west-1a, eu-west-1b"
        );
        assert_eq!(
            steps[7].signal,
            "NodePool spot: zones [any], capacity types [spot on-demand], 1 requirement"
        );

        facts.nodeclasses[0].status_subnets.clear();
        let (_, missing) = run(&facts);
        let tags = &missing
            .iter()
            .find(|m| m.what.starts_with("The AWS"))
            .unwrap()
            .command;
        assert!(
            tags.contains("--filters \"Name=tag:karpenter.sh/discovery,Values=prod\""),
            "{tags}"
        );
        assert!(
            tags.contains("describe-security-groups --group-ids sg-123"),
            "{tags}"
        );
    }

    #[test]
    fn long_signals_are_clipped() {
        let mut facts = Facts::default();
        facts.logs.push(log("ERROR", &"x".repeat(500)));
        let (steps, _) = run(&facts);
        assert!(steps[2].signal.chars().count() <= SIGNAL_CHARS + 3);
        assert!(steps[2].signal.ends_with("..."));
    }

    #[test]
    fn iam_signals_in_any_message() {
        let mut facts = Facts::default();
        facts.messages.push(crate::facts::Message {
            text: "creating instance, UnauthorizedOperation: You are not authorized".into(),
            evidence: Evidence::new("karpenter.log", 7, "..."),
            ..Default::default()
        });
        let (steps, _) = run(&facts);
        assert_eq!(steps[6].status, StepStatus::Problem);
        assert!(steps[6]
            .signal
            .starts_with("karpenter.log:7: creating instance"));
    }
}

#[cfg(test)]
mod subject_tests {
    use crate::{analyze, Document, Options};

    /// Events of every NodeClaim of a plural subject are step 1's events, and the command to
    /// collect more describes them all.
    #[test]
    fn events_of_several_nodeclaims_count_for_step_one() {
        let report = analyze(
            &[Document::new(
                "events.txt",
                "$ kubectl get events -A --field-selector reason=DisruptionBlocked
NAMESPACE   LAST SEEN   TYPE     REASON              OBJECT                      MESSAGE
default     3m          Normal   DisruptionBlocked   nodeclaim/batch-7kq2m       Nodeclaim does not have an associated node
default     2m          Normal   DisruptionBlocked   nodeclaim/batch-p4x9d       Nodeclaim does not have an associated node
default     1m          Normal   DisruptionBlocked   nodeclaim/spot-w2r8t        Nodeclaim does not have an associated node
",
            )],
            &Options {
                now: None,
                only: Some(vec!["KW411".into()]),
            },
        );
        let subject = report.subject.as_ref().unwrap();
        assert_eq!(subject.kind, "NodeClaims", "{subject:?}");
        let step = &report.checklist[0];
        assert_eq!(step.name, "NodeClaim events", "{step:?}");
        // KW411 quotes these Normal events: they are the problem, not "ok".
        assert_eq!(
            step.signal, "DisruptionBlocked: Nodeclaim does not have an associated node",
            "{step:?}"
        );
    }

    /// About a node, step 1 is named after it and counts its events apart from the pods';
    /// a pod's Warning is a problem only after the node's own, and says whose it is.
    #[test]
    fn node_subject_counts_node_events_apart() {
        let table = |pod_type: &str| {
            format!(
                "$ kubectl get events -A
NAMESPACE   LAST SEEN   TYPE     REASON              OBJECT                                          MESSAGE
default     3m          Normal   DisruptionBlocked   node/ip-10-0-1-2.eu-west-1.compute.internal     Cannot disrupt Node: state node isn't initialized
default     2m          Normal   Unconsolidatable    node/ip-10-0-1-2.eu-west-1.compute.internal     Can't remove without creating 2 candidates
shop        1m          {pod_type}   BackOff             pod/web-0                                       Back-off restarting failed container
"
            )
        };
        let subject = crate::report::Subject {
            kind: "Node".into(),
            namespace: None,
            name: "ip-10-0-1-2.eu-west-1.compute.internal".into(),
            objects: Vec::new(),
        };
        // KW001 reports none of these: the events are counted, none is quoted.
        let run = |text: String| {
            crate::analyze_about(
                &[Document::new("events.txt", text)],
                &Options {
                    now: None,
                    only: Some(vec!["KW001".into()]),
                },
                Some(subject.clone()),
            )
        };
        let report = run(table("Normal"));
        let step = &report.checklist[0];
        assert_eq!(step.name, "Node events", "{step:?}");
        assert_eq!(
            step.signal, "2 node events, 1 pod event, no Warning",
            "{step:?}"
        );
        let report = run(table("Warning"));
        let step = &report.checklist[0];
        assert_eq!(
            step.signal, "pod web-0: Warning BackOff: Back-off restarting failed container",
            "{step:?}"
        );
    }

    /// The VPC CNI's ipamd log pasted beside Karpenter's: its denied call is the CNI role's,
    /// not a Karpenter log error nor the controller's IAM problem.
    #[test]
    fn another_components_log_errors_are_not_karpenters() {
        let karpenter = r#"{"level":"INFO","time":"2026-12-06T20:41:00.000Z","logger":"controller","message":"found provisionable pod(s)","commit":"a1b2c3d","Pods":"shop/web-0"}
{"level":"INFO","time":"2026-12-06T20:41:01.000Z","logger":"controller","message":"created nodeclaim","commit":"a1b2c3d","NodePool":{"name":"default"}}
"#;
        let ipamd = r#"{"level":"error","ts":"2026-12-06T20:42:03.412Z","caller":"ipamd/ipamd.go:455","msg":"Failed to call ec2:DescribeNetworkInterfaces for [eni-0123456789abcdef0]: UnauthorizedOperation: You are not authorized to perform this operation. status code: 403"}
"#;
        let steps = |text: &str| {
            let report = crate::analyze_text("paste", text, &Options::default());
            let step = |name: &str| {
                let s = report.checklist.iter().find(|s| s.name == name).unwrap();
                (s.status.as_str().to_string(), s.signal.clone())
            };
            (step("Karpenter logs"), step("IAM"))
        };
        let (logs, iam) = steps(&format!("{karpenter}{ipamd}"));
        assert_eq!(logs, ("ok".into(), "2 lines, no ERROR or WARN".into()));
        assert_eq!(
            iam,
            (
                "ok".into(),
                "no authorization error in 2 Karpenter log lines".into()
            )
        );
        let (logs, iam) = steps(ipamd);
        assert_eq!(
            logs,
            (
                "not collected".into(),
                "no Karpenter log lines in the input (1 log line of other components)".into()
            )
        );
        assert_eq!(iam.0, "not collected");
        // Karpenter's own denial stays the step's problem.
        let own = karpenter.replace(
            r#""message":"created nodeclaim""#,
            r#""message":"creating nodeclaim, UnauthorizedOperation: You are not authorized to perform this operation""#,
        );
        assert_eq!(steps(&own).1 .0, "problem");
    }

    /// A pod that failed scheduling, then was scheduled: step 1 is ok, and says so; another
    /// pod's Scheduled event does not make a Pending pod's failure history.
    #[test]
    fn a_pod_scheduled_since_its_failure_is_no_problem() {
        let describe = |name: &str, scheduled: &str| -> String {
            format!(
                "Name:             {name}
Namespace:        shop
Priority:         0
Node:             <none>
Status:           Pending
Events:
  Type     Reason            Age                 From               Message
  ----     ------            ----                ----               -------
  Warning  FailedScheduling  25m (x3 over 31m)   default-scheduler  0/3 nodes are available: 3 Insufficient cpu.
  Normal   Scheduled         18m                 default-scheduler  Successfully assigned shop/{scheduled} to ip-10-0-1-23.ec2.internal
"
            )
        };
        let step = |text: String| {
            let report = crate::analyze_text("paste", &text, &Options::default());
            (
                report.checklist[0].status.as_str().to_string(),
                report.checklist[0].signal.clone(),
            )
        };
        let (status, signal) = step(describe("api-0", "api-0"));
        assert_eq!(status, "ok");
        assert!(
            signal.starts_with("scheduled since (Successfully assigned shop/api-0 to "),
            "{signal}"
        );
        let table = "LAST SEEN   TYPE      REASON             OBJECT        MESSAGE
25m         Warning   FailedScheduling   pod/api-0     0/3 nodes are available: 3 Insufficient cpu.
18m         Normal    Scheduled          pod/api-1     Successfully assigned shop/api-1 to ip-10-0-1-23.ec2.internal
";
        assert_eq!(step(table.to_string()).0, "problem");
    }

    /// The report is about NodeClaims (a `kubectl get nodeclaims` beside a pod's events): a
    /// pod's FailedScheduling followed by its Scheduled event is no problem there either.
    #[test]
    fn a_scheduled_pods_failure_is_no_problem_beside_nodeclaims() {
        let text = |scheduled: &str| {
            format!(
                "$ kubectl get nodeclaims
NAME            TYPE         CAPACITY   ZONE         NODE                          READY   AGE
default-q8x2m   c6a.xlarge   spot       us-east-1b   ip-10-0-83-17.ec2.internal    True    77m
default-kd8s2   m5.large     on-demand  us-east-1a   ip-10-0-12-201.ec2.internal   True    5d2h
$ kubectl describe pod web-2xk4p -n shop | tail -5
Events:
  Type     Reason            Age   From               Message
  ----     ------            ----  ----               -------
  Warning  FailedScheduling  78m   default-scheduler  0/2 nodes are available: 2 Insufficient cpu.
  Normal   Nominated         78m   karpenter          Pod should schedule on: nodeclaim/default-q8x2m
{scheduled}"
            )
        };
        let step = |text: String| {
            let report = crate::analyze_text("paste", &text, &Options::default());
            (
                report.checklist[0].name,
                report.checklist[0].status.as_str().to_string(),
                report.checklist[0].signal.clone(),
            )
        };
        let (name, status, signal) = step(text(
            "  Normal   Scheduled         77m   default-scheduler  Successfully assigned shop/web-2xk4p to ip-10-0-83-17.ec2.internal\n",
        ));
        assert_eq!(
            (name, status.as_str()),
            ("NodeClaim events", "ok"),
            "{signal}"
        );
        let (_, status, signal) = step(text(""));
        assert_eq!(status, "problem");
        assert!(signal.contains("Insufficient cpu"), "{signal}");
    }

    /// A bare `Events:` block names no object: the step is named after what its events are
    /// about, and a pod's event among them keeps it the pods' step.
    #[test]
    fn bare_node_events_make_a_node_events_step() {
        let events = |extra: &str| {
            format!(
                "Events:
  Type    Reason             Age   From             Message
  ----    ------             ----  ----             -------
  Normal  DisruptionBlocked  2m    karpenter        Cannot disrupt Node: state node is nominated for a pending pod
  Normal  NodeNotReady       5m    node-controller  Node ip-10-0-45-12.ec2.internal status is now: NodeNotReady
{extra}"
            )
        };
        let step = |text: String| {
            let report = crate::analyze_text("paste", &text, &Options::default());
            report.checklist[0].name
        };
        assert_eq!(step(events("")), "Node events");
        let claim = events("").replace("Cannot disrupt Node:", "Cannot disrupt NodeClaim:");
        assert_eq!(
            step(claim),
            "Pod events",
            "one node's and one claim's event"
        );
        let scheduled =
            "  Warning  FailedScheduling  1m  default-scheduler  0/3 nodes are available\n";
        assert_eq!(step(events(scheduled)), "Pod events");
    }

    /// DisruptionBlocked is a Normal event: the one KW401 quotes is the step's problem.
    #[test]
    fn a_normal_event_a_diagnosis_quotes_is_no_ok_step() {
        let text = "LAST SEEN   TYPE     REASON              OBJECT                MESSAGE\n\
                    50m         Normal   DisruptionBlocked   node/ip-10-0-1-2      Cannot disrupt Node: PDB \"kube-system/coredns\" prevents pod evictions\n";
        let report = crate::analyze_text("events.txt", text, &Options::default());
        assert!(report.diagnoses.iter().any(|d| d.id == "KW401"));
        let step = &report.checklist[0];
        assert_eq!(step.status.as_str(), "problem", "{step:?}");
        assert!(
            step.signal
                .starts_with("DisruptionBlocked: Cannot disrupt Node"),
            "{step:?}"
        );
        let quiet = "LAST SEEN   TYPE     REASON         OBJECT                MESSAGE\n\
                     50m         Normal   Unconsolidatable   node/ip-10-0-1-2   Can't replace with a cheaper node\n";
        let report = crate::analyze(
            &[Document::new("events.txt", quiet)],
            &Options {
                now: None,
                only: Some(vec!["KW401".into()]),
            },
        );
        assert_eq!(
            report.checklist[0].status.as_str(),
            "ok",
            "{:?}",
            report.checklist[0]
        );
    }

    /// client-go logs the API server's unknown-field warning at INFO: the logs are not ok when
    /// KW104 was read from that line, and are when nothing was.
    #[test]
    fn info_lines_a_diagnosis_was_read_from_are_no_ok_logs() {
        let line = r#"{"level":"INFO","time":"2025-10-31T19:27:14.289Z","logger":"controller","message":"unknown field \"status.nodeClassObservedGeneration\"","controller":"nodepool.registrationhealth","NodePool":{"name":"default"}}"#;
        let report = crate::analyze_text("logs.jsonl", line, &Options::default());
        let step = &report.checklist[2];
        assert_eq!(step.name, "Karpenter logs");
        assert_eq!(step.status.as_str(), "problem", "{step:?}");
        assert!(
            step.signal
                .starts_with("1 line, no ERROR or WARN, but KW104: "),
            "{step:?}"
        );
        let quiet = r#"{"level":"INFO","time":"2025-10-31T19:27:14.289Z","logger":"controller","message":"discovered ssm parameter","controller":"nodeclass"}"#;
        let report = crate::analyze_text("logs.jsonl", quiet, &Options::default());
        assert_eq!(report.checklist[2].status.as_str(), "ok");
    }
}
