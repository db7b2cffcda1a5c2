//! KW004 karpenter-debug-logging-on.

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, LogRecord, Message, Setting, SettingSource};
use crate::rules::text::{
    in_ranges, karpenter_namespace_or_placeholder, own_report_ranges, past_or_question_prose,
};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW004",
    slug: "karpenter-debug-logging-on",
    title: "Karpenter runs with debug logging",
    severity: Severity::Warning,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The Karpenter controller logs at debug level: the Deployment sets `LOG_LEVEL=debug` (or the
`--log-level=debug` flag; helm `logLevel: debug`), or the pasted logs hold debug lines
(`"level":"DEBUG"` in the JSON format, a `DEBUG` level column in the console format, or the
pre-v0.32 `Logging level set to: debug`), or the pre-v0.32 `config-logging` ConfigMap
(YAML, or `kubectl describe configmap`) sets `loglevel.controller` or its zap config's level to
debug. Before v0.32 the fix is that ConfigMap (there is no LOG_LEVEL env).

A `kubectl set env deployment/karpenter ... LOG_LEVEL=debug` prompt line counts too, unless a
later one sets another level.

A single DEBUG line and nothing else (a line grepped out of the logs) shows the level was debug
when that line was written, not that it still is, nor the volume: the diagnosis says so, with
medium confidence, and first asks to check the Deployment's current level.

Not: prose that tells of debug logging in the past (`we had LOG_LEVEL=debug but reverted it`)
or asks about it (`should I set logLevel: debug?`), nor karpenter-why's own report pasted back
(its advice says `LOG_LEVEL=debug`).

## Why it happens
Debug logging is the right tool while investigating (KW005 recommends it), and is often left on
afterwards. At debug level Karpenter logs every discovery, every scheduling simulation and every
excluded instance type: many times the info volume, and on EKS with Container Insights or
Fluent Bit to CloudWatch, a visible ingestion and storage cost.

## How to fix
Once the analysis is done, set the level back to info:
`kubectl set env deployment/karpenter -n <ns> LOG_LEVEL=info`, and make it stick in the helm
values (`--set logLevel=info`), or the next upgrade brings debug back.
"#,
};

const SIGNALS: &[&str] = &[
    "\"level\":\"debug\"",
    "\"level\": \"debug\"",
    "\tdebug\t",
    "logging level set to: debug",
    "log_level",
    "loglevel",
    "log-level",
];

/// At most this many debug lines are quoted; the summary gives the total.
const MAX_QUOTED_LINES: usize = 3;

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut settings: Vec<String> = Vec::new();
    let mut evidence: Vec<Evidence> = Vec::new();
    let mut setting_messages: Vec<&Message> = Vec::new();
    let mut pre_v032 = false;

    let deployment = facts.karpenter_deployment();
    let from_settings = facts
        .settings
        .iter()
        .any(|s| s.source != SettingSource::Values);
    if let Some(d) = deployment.filter(|_| !from_settings) {
        for c in &d.containers {
            if c.env
                .get("LOG_LEVEL")
                .is_some_and(|v| v.eq_ignore_ascii_case("debug"))
            {
                settings.push(format!(
                    "LOG_LEVEL=debug on Deployment {} (container {})",
                    d.meta.name, c.name
                ));
            }
            if debug_flag(&c.args) {
                settings.push(format!(
                    "--log-level=debug on Deployment {} (container {})",
                    d.meta.name, c.name
                ));
            }
        }
        if !settings.is_empty() {
            evidence.extend(d.meta.evidence.clone());
        }
    }

    // The helm values keys that set debug (`logLevel`, the pre-v0.32 `controller.logLevel`).
    let mut values_keys: Vec<String> = Vec::new();
    // Settings the object ingest read (env, args, ConfigMap data, helm values).
    for s in facts.settings_named(&[
        "LOG_LEVEL",
        "--log-level",
        "logLevel",
        "controller.logLevel",
        "loglevel.controller",
    ]) {
        if !s.value.eq_ignore_ascii_case("debug") || !is_karpenter_setting(facts, s) {
            continue;
        }
        let what = match (&s.source, &s.owner) {
            (SettingSource::Values, _) => {
                if !values_keys.contains(&s.key) {
                    values_keys.push(s.key.clone());
                }
                format!("helm value {}: debug", s.key)
            }
            (SettingSource::ConfigMap, _) => {
                pre_v032 = true;
                "loglevel.controller: debug (config-logging ConfigMap)".to_string()
            }
            (_, Some(owner)) => format!("{}=debug on {} {}", s.key, owner.kind, owner.name),
            (_, None) => format!("{}=debug", s.key),
        };
        if !settings.contains(&what) {
            settings.push(what);
        }
        evidence.push(s.evidence.clone());
    }
    // The pre-v0.32 `config-logging` ConfigMap's zap encoder config (`"level": "debug"`).
    let mut zap_config = false;
    for s in facts.settings_named(&["zap-logger-config"]) {
        let debug = serde_json::from_str::<serde_json::Value>(&s.value)
            .ok()
            .and_then(|v| v.get("level").and_then(|l| l.as_str()).map(str::to_string))
            .is_some_and(|l| l.eq_ignore_ascii_case("debug"));
        if debug && is_karpenter_setting(facts, s) {
            pre_v032 = true;
            zap_config = true;
            let what = "zap-logger-config level debug (config-logging ConfigMap)".to_string();
            if !settings.contains(&what) {
                settings.push(what);
            }
            evidence.push(s.evidence.clone());
        }
    }
    // `settings.aws.*` is the values layout before v0.32 (no LOG_LEVEL env then).
    let pre_v032_values = facts
        .settings
        .iter()
        .any(|s| s.source == SettingSource::Values && s.key.starts_with("settings.aws."));
    pre_v032 |= pre_v032_values && !values_keys.is_empty();
    let already = |m: &Message| {
        evidence
            .iter()
            .any(|e| e.source == m.evidence.source && e.line == m.evidence.line)
    };
    // The document mentions Karpenter, or the prompt line the text is the output of does
    // (`$ kubectl get deploy karpenter -o yaml | grep -A1 LOG_LEVEL`): a grepped env fragment
    // carries no other word of Karpenter, and the prompt line is a command, not a message.
    let about_karpenter = |m: &Message| {
        facts.messages.iter().any(|o| {
            o.evidence.source == m.evidence.source
                && contains_ignore_ascii_case(&o.text, "karpenter")
        }) || facts
            .commands
            .iter()
            .filter(|c| c.evidence.source == m.evidence.source && c.evidence.line < m.evidence.line)
            .max_by_key(|c| c.evidence.line)
            .is_some_and(|c| contains_ignore_ascii_case(&c.evidence.text, "karpenter"))
    };

    // Settings as text the ingest did not model: describe output, helm values, env as YAML
    // (name and value lines), in a document that is about Karpenter.
    // karpenter-why's own report pasted back (its advice says `LOG_LEVEL=debug`), and prose
    // that tells of debug logging in the past or asks about it, say nothing of the cluster now.
    let own = own_report_ranges(facts);
    let ours = |e: &Evidence| in_ranges(&own, &e.source, e.line);
    for (i, m) in facts.messages.iter().enumerate() {
        if already(m) || ours(&m.evidence) || past_or_question_prose(&m.text) {
            continue;
        }
        if let Some(what) = setting_in_text(&m.text).filter(|_| about_karpenter(m)) {
            pre_v032 |= what.contains("loglevel.controller");
            if !settings.contains(&what) {
                settings.push(what);
            }
            setting_messages.push(m);
        } else if let Some((what, value)) =
            described_debug(&facts.messages, i).filter(|_| about_karpenter(m))
        {
            pre_v032 = true;
            zap_config |= what.starts_with("zap");
            if !settings.contains(&what.to_string()) {
                settings.push(what.to_string());
            }
            setting_messages.push(m);
            setting_messages.push(value);
        } else if is_env_name_line(&m.text, "LOG_LEVEL") && about_karpenter(m) {
            if let Some(next) = facts.messages.get(i + 1).filter(|n| {
                n.evidence.source == m.evidence.source && n.evidence.line == m.evidence.line + 1
            }) {
                if is_value_line(&next.text, "debug") {
                    let what = "LOG_LEVEL=debug in the Deployment's env".to_string();
                    if !settings.contains(&what) {
                        settings.push(what);
                    }
                    setting_messages.push(m);
                    setting_messages.push(next);
                }
            }
        }
    }

    // A `kubectl set env deployment/karpenter ... LOG_LEVEL=debug` the user ran, not set back
    // by a later `LOG_LEVEL=<other>` on the same prompt history.
    let log_level_of = |text: &str| -> Option<String> {
        let at = text.find("LOG_LEVEL=")? + "LOG_LEVEL=".len();
        let v: String = text[at..]
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        (!v.is_empty()).then_some(v)
    };
    let set_env = |c: &crate::facts::ShellCommand| {
        c.tool == "kubectl"
            && contains_ignore_ascii_case(&c.evidence.text, "set env")
            && contains_ignore_ascii_case(&c.evidence.text, "karpenter")
    };
    for c in facts.commands.iter().filter(|c| set_env(c)) {
        if !log_level_of(&c.evidence.text).is_some_and(|v| v.eq_ignore_ascii_case("debug")) {
            continue;
        }
        let reverted = facts.commands.iter().any(|o| {
            set_env(o)
                && o.evidence.source == c.evidence.source
                && o.evidence.line > c.evidence.line
                && log_level_of(&o.evidence.text).is_some_and(|v| !v.eq_ignore_ascii_case("debug"))
        });
        if reverted || ours(&c.evidence) {
            continue;
        }
        let what = "LOG_LEVEL=debug set with kubectl set env".to_string();
        if !settings.contains(&what) {
            settings.push(what);
        }
        evidence.push(c.evidence.clone());
    }

    // Debug lines in the logs, unless the next `set env` below them sets another level: they
    // were written while the user had raised it, and the paste shows it set back.
    let set_back_later = |e: &Evidence| {
        facts
            .commands
            .iter()
            .filter(|c| set_env(c) && c.evidence.source == e.source && c.evidence.line > e.line)
            .min_by_key(|c| c.evidence.line)
            .and_then(|c| log_level_of(&c.evidence.text))
            .is_some_and(|v| !v.eq_ignore_ascii_case("debug"))
    };
    let parsed: Vec<&LogRecord> = facts
        .logs
        .iter()
        .filter(|r| r.level == "DEBUG" && is_karpenter_record(r) && !ours(&r.evidence))
        .filter(|r| !set_back_later(&r.evidence))
        .collect();
    let raw: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| raw_debug_line(&m.text) && !ours(&m.evidence) && !set_back_later(&m.evidence))
        .filter(|m| !parsed.iter().any(|r| r.evidence == m.evidence))
        .collect();
    let set_to_debug: Vec<&Message> = facts
        .messages_containing("Logging level set to: debug")
        .filter(|m| !ours(&m.evidence))
        .collect();
    pre_v032 |= !set_to_debug.is_empty();
    let debug_lines = parsed.len() + raw.len();

    if settings.is_empty() && debug_lines == 0 && set_to_debug.is_empty() {
        return Vec::new();
    }

    // A single DEBUG line (often grepped out of the logs) and nothing else proves the level
    // was debug when it was written, not that it still is, nor the volume.
    let single = settings.is_empty() && set_to_debug.is_empty() && debug_lines == 1;
    let summary = if single {
        let when = (parsed.first().and_then(|r| r.time.clone()))
            .or_else(|| raw.first().and_then(|m| m.time.clone()))
            .map(|t| format!(" (at {t})"))
            .unwrap_or_default();
        format!("One DEBUG line in the controller logs{when} shows Karpenter logged at debug level when it was written; the input holds no other debug line and no level setting, so it does not show that the level is still debug. If it is, debug logging multiplies the log volume (and the CloudWatch ingestion cost); set it back to info once the analysis is done.")
    } else {
        let mut found: Vec<String> = settings.clone();
        if debug_lines > 0 {
            found.push(format!(
                "{debug_lines} DEBUG line{} in the controller logs",
                if debug_lines == 1 { "" } else { "s" }
            ));
        }
        if !set_to_debug.is_empty() {
            found.push("the controller logged `Logging level set to: debug`".to_string());
        }
        format!(
            "The Karpenter controller logs at debug level: {}. Debug logging multiplies the log volume (and the CloudWatch ingestion cost); set it back to info once the analysis is done.",
            found.join("; ")
        )
    };

    // The Deployment that carries the setting names itself and its namespace best.
    let setting_owner = facts
        .settings_named(&["LOG_LEVEL", "--log-level"])
        .filter(|s| s.value.eq_ignore_ascii_case("debug") && is_karpenter_setting(facts, s))
        .find_map(|s| s.owner.clone())
        .filter(|o| o.kind == "Deployment");
    let config_map_ns = facts
        .settings
        .iter()
        .filter(|s| s.source == SettingSource::ConfigMap)
        .filter_map(|s| s.owner.as_ref())
        .find(|o| o.name == "config-logging")
        .and_then(|o| o.namespace.clone());
    let ns = setting_owner
        .as_ref()
        .and_then(|o| o.namespace.clone())
        .or(config_map_ns)
        .unwrap_or_else(|| karpenter_namespace_or_placeholder(facts));
    let name = setting_owner
        .map(|o| o.name)
        .or_else(|| deployment.map(|d| d.meta.name.clone()))
        .unwrap_or_else(|| "karpenter".to_string());
    let mut steps = vec![
        Remediation::command(
            "Set the level back to info (the Deployment rolls its pods):",
            format!("kubectl set env deployment/{name} -n {ns} LOG_LEVEL=info"),
        ),
        Remediation::command(
            "Make it stick in the helm release, or the next `helm upgrade` restores debug:",
            format!(
                "helm upgrade {name} oci://public.ecr.aws/karpenter/karpenter -n {ns} --reuse-values {}",
                if values_keys.is_empty() {
                    "--set logLevel=info".to_string()
                } else {
                    values_keys
                        .iter()
                        .map(|k| format!("--set {k}=info"))
                        .collect::<Vec<_>>()
                        .join(" ")
                }
            ),
        ),
    ];
    // Debug lines alone of an input dated before v0.32 (its loggers, its version): the level
    // is the ConfigMap's there too. That era had no LOG_LEVEL env, so its ConfigMap leads.
    let has_env = settings.iter().any(|s| s.contains("LOG_LEVEL"));
    let era =
        !has_env && (pre_v032 || pre_v032_values || crate::rules::version::before_v0_32(facts));
    let config_map = if zap_config {
        Remediation::command(
            "Before v0.32 the chart renders the level into the `config-logging` ConfigMap: set `\"level\": \"info\"` in its `zap-logger-config` (and `loglevel.controller: info` when present); Karpenter reloads it without a restart:",
            format!("kubectl edit configmap config-logging -n {ns}"),
        )
    } else {
        Remediation::command(
            "Before v0.32 the level lives in the `config-logging` ConfigMap; Karpenter reloads it without a restart:",
            format!(
                "kubectl patch configmap config-logging -n {ns} --type merge -p '{{\"data\":{{\"loglevel.controller\":\"info\"}}}}'"
            ),
        )
    };
    if let Some(first) = steps.first_mut().filter(|_| era) {
        *first = config_map;
    } else if pre_v032 {
        steps.push(config_map);
    }
    if single && !era {
        steps.insert(
            0,
            Remediation::command(
                "Check the level the Deployment runs with now (no LOG_LEVEL means info):",
                format!("kubectl set env deployment/{name} -n {ns} --list | grep LOG_LEVEL"),
            ),
        );
    }

    let quoted_logs = parsed
        .iter()
        .map(|r| r.evidence.clone())
        .chain(raw.iter().map(|m| m.evidence.clone()))
        .take(MAX_QUOTED_LINES);
    vec![Diagnosis::new(&META, summary)
        .with_evidence(evidence)
        .with_messages(setting_messages)
        .with_messages(set_to_debug)
        .with_evidence(quoted_logs)
        .with_remediation(steps)
        .with_confidence(if single {
            Confidence::Medium
        } else {
            Confidence::High
        })]
}

/// A setting of Karpenter's, not another application's: on the Karpenter Deployment or pods,
/// the `karpenter` helm release, the pre-v0.32 `config-logging` ConfigMap, or helm values
/// that also carry Karpenter's `settings.*` keys.
fn is_karpenter_setting(facts: &Facts, s: &Setting) -> bool {
    if let Some(owner) = &s.owner {
        if owner.name.contains("karpenter") || owner.name == "config-logging" {
            return true;
        }
    }
    s.source == SettingSource::Values
        && facts.settings.iter().any(|o| {
            o.evidence.source == s.evidence.source
                && o.source == SettingSource::Values
                && o.key.starts_with("settings.")
        })
}

fn debug_flag(args: &[String]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        a.eq_ignore_ascii_case("--log-level=debug")
            || (a == "--log-level"
                && args
                    .get(i + 1)
                    .is_some_and(|v| v.eq_ignore_ascii_case("debug")))
    })
}

/// A Karpenter controller record rather than another component's debug line: Karpenter's
/// loggers are `controller[.<name>]` and `webhook`, and every line carries `commit`.
fn is_karpenter_record(r: &LogRecord) -> bool {
    if r.fields.contains_key("commit") {
        return true;
    }
    if prefix_names_another_pod(&r.evidence.text) {
        return false;
    }
    // Karpenter's zap encoder renames the time and message keys (`time`, `message`); other
    // controllers that keep zap's defaults (`ts`, `msg`: the AWS Load Balancer Controller's
    // `controllers.ingress`, controller-runtime's own loggers) are not Karpenter.
    let zap_defaults = ["\"ts\":", "\\\"ts\\\":", "\"msg\":", "\\\"msg\\\":"];
    if zap_defaults.iter().any(|k| r.evidence.text.contains(k)) {
        return false;
    }
    r.logger.as_deref().is_some_and(|l| {
        l.starts_with("controller") || l.starts_with("webhook") || l.starts_with("karpenter")
    }) || r.controller.is_some()
}

/// Whether the words before a JSON log line (`kubectl logs --prefix`'s `[pod/<pod>/<container>]`,
/// stern's `<pod> <container>`) name a pod, none of them Karpenter's. Many controller-runtime
/// operators log `"logger":"controller"` with a `controller` field too; only the `commit` field
/// is Karpenter's own, so a line without it from an other pod is that operator's.
fn prefix_names_another_pod(text: &str) -> bool {
    let Some(brace) = text.find('{') else {
        return false;
    };
    // Timestamps (`--timestamps`, CloudWatch columns) start with a digit and name no pod.
    let words: Vec<&str> = text[..brace]
        .split(|c: char| c.is_whitespace() || c == '[' || c == ']' || c == '/')
        .filter(|w| !w.is_empty() && *w != "pod" && !w.starts_with(|c: char| c.is_ascii_digit()))
        .collect();
    !words.is_empty()
        && !words
            .iter()
            .any(|w| contains_ignore_ascii_case(w, "karpenter"))
}

/// A debug line the ingest did not parse into a record: a JSON line behind a prefix, or the
/// console format's `<time>\tDEBUG\tcontroller...` columns.
fn raw_debug_line(text: &str) -> bool {
    let json = (text.contains("\"level\":\"DEBUG\"") || text.contains("\"level\": \"DEBUG\""))
        && (text.contains("\"commit\"")
            || (contains_ignore_ascii_case(text, "\"logger\":\"controller")
                || contains_ignore_ascii_case(text, "\"logger\":\"webhook"))
                && !prefix_names_another_pod(text));
    if json {
        return true;
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    words.iter().enumerate().any(|(i, w)| {
        *w == "DEBUG"
            && i > 0
            && words[i - 1].starts_with(|c: char| c.is_ascii_digit())
            && words[i - 1].contains(':')
            && words.get(i + 1).is_some_and(|n| {
                n.starts_with("controller")
                    || n.starts_with("webhook")
                    || n.starts_with("karpenter")
            })
    })
}

/// A debug setting written on one line: `LOG_LEVEL=debug`, `LOG_LEVEL: debug` (describe),
/// `--log-level=debug`, helm `logLevel: debug` / `--set logLevel=debug` /
/// `"logLevel":"debug"`, and the pre-v0.32 ConfigMap key `loglevel.controller: debug`.
fn setting_in_text(text: &str) -> Option<String> {
    let t = text.trim().trim_start_matches('-').trim();
    if json_env_value(t, "LOG_LEVEL").is_some_and(|v| v.eq_ignore_ascii_case("debug")) {
        return Some("LOG_LEVEL=debug in the Deployment's env".to_string());
    }
    for (key, what) in [
        ("LOG_LEVEL", "LOG_LEVEL=debug"),
        ("--log-level", "--log-level=debug"),
        ("logLevel", "helm value logLevel: debug"),
        (
            "loglevel.controller",
            "loglevel.controller: debug (config-logging ConfigMap)",
        ),
    ] {
        let mut rest = t;
        while let Some(i) = rest.find(key) {
            let after = &rest[i + key.len()..];
            // Only a whole key: `logLevel` must not match inside `mylogLevel`.
            let whole = rest[..i]
                .chars()
                .last()
                .is_none_or(|c| !c.is_ascii_alphanumeric() && c != '_');
            let value = after
                .trim_start_matches(['"', '\''])
                .trim_start()
                .trim_start_matches(['=', ':'])
                .trim_start()
                .trim_start_matches(['"', '\'']);
            let sep_ok = after
                .trim_start_matches(['"', '\''])
                .trim_start()
                .starts_with(['=', ':']);
            if whole
                && sep_ok
                && value
                    .as_bytes()
                    .get(..5)
                    .is_some_and(|v| v.eq_ignore_ascii_case(b"debug"))
                && value.as_bytes()[5..]
                    .first()
                    .is_none_or(|c| !c.is_ascii_alphanumeric())
            {
                return Some(what.to_string());
            }
            rest = after;
        }
    }
    None
}

/// The value of env var `name` in a JSON env list (`kubectl get deploy -o
/// jsonpath='{...env}'`): `{"name":"LOG_LEVEL","value":"debug"}`.
fn json_env_value<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = text;
    while let Some(i) = rest.find(&format!("\"{name}\"")) {
        let before = rest[..i].trim_end().trim_end_matches(':').trim_end();
        let after = &rest[i + name.len() + 2..];
        if before.ends_with("\"name\"") {
            let entry = &after[..after.find('}').unwrap_or(after.len())];
            if let Some(j) = entry.find("\"value\"") {
                let value = entry[j + "\"value\"".len()..]
                    .trim_start()
                    .strip_prefix(':')?
                    .trim_start()
                    .strip_prefix('"')?;
                return value.split('"').next();
            }
        }
        rest = after;
    }
    None
}

/// A `kubectl describe configmap config-logging` data entry at debug: the key line
/// (`loglevel.controller:`, `zap-logger-config:`), `----`, then the value (for the zap config,
/// JSON lines holding `"level": "debug"`). Returns what it sets and the value line.
fn described_debug(messages: &[Message], i: usize) -> Option<(&'static str, &Message)> {
    let m = messages.get(i)?;
    let next = |k: usize| {
        messages.get(i + k).filter(|n| {
            n.evidence.source == m.evidence.source && n.evidence.line == m.evidence.line + k
        })
    };
    if next(1)?.text.trim() != "----" {
        return None;
    }
    let is_debug = |v: &str| v.trim().trim_matches('"').eq_ignore_ascii_case("debug");
    match m.text.trim() {
        "loglevel.controller:" => next(2)
            .filter(|v| is_debug(&v.text))
            .map(|v| ("loglevel.controller: debug (config-logging ConfigMap)", v)),
        "zap-logger-config:" => (2..40)
            .map_while(next)
            .find_map(|v| {
                let level = v
                    .text
                    .trim()
                    .trim_end_matches(',')
                    .strip_prefix("\"level\"")?;
                Some((v, level.trim_start().strip_prefix(':')?.to_string()))
            })
            .filter(|(_, level)| is_debug(level))
            .map(|(v, _)| {
                (
                    "zap-logger-config level debug (config-logging ConfigMap)",
                    v,
                )
            }),
        _ => None,
    }
}

/// `- name: LOG_LEVEL` (a YAML env entry whose value is on the next line).
fn is_env_name_line(text: &str, name: &str) -> bool {
    let t = text.trim().trim_start_matches('-').trim();
    t.strip_prefix("name:")
        .is_some_and(|v| v.trim().trim_matches(['"', '\'']) == name)
}

fn is_value_line(text: &str, value: &str) -> bool {
    let t = text.trim().trim_start_matches('-').trim();
    t.strip_prefix("value:").is_some_and(|v| {
        v.trim()
            .trim_matches(['"', '\''])
            .eq_ignore_ascii_case(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Container, Meta, Workload};
    use crate::testing::{check_only, ids};

    /// A damaged paste can put a multi-byte character inside the value (found by the mutation
    /// search: `LOG_LEVEL=debu\u{fffd}g`): no panic, and no debug setting either.
    #[test]
    fn a_value_cut_by_a_multibyte_character_is_not_debug() {
        assert_eq!(setting_in_text("LOG_LEVEL=debu\u{fffd}g"), None);
        assert_eq!(setting_in_text("logLevel: d\u{e9}bug"), None);
        assert_eq!(
            setting_in_text("LOG_LEVEL=debug\u{fffd}").as_deref(),
            Some("LOG_LEVEL=debug")
        );
    }

    /// Debug lines of a v0.2x-v0.31 controller: no LOG_LEVEL env to set back, the ConfigMap.
    #[test]
    fn pre_v0_32_debug_lines_get_the_configmap_step() {
        let line = "2023-08-10T11:42:17.301Z\tDEBUG\tcontroller.awsnodetemplate\tdiscovered subnets []\t{\"commit\": \"5a2fe84\"}";
        let d = &check_only("KW004", line).diagnoses[0];
        let commands: Vec<&str> = d
            .remediation
            .iter()
            .filter_map(|r| r.command.as_deref())
            .collect();
        assert!(
            commands.iter().all(|c| !c.contains("LOG_LEVEL"))
                && commands
                    .iter()
                    .any(|c| c.starts_with("kubectl patch configmap config-logging")),
            "{commands:?}"
        );
    }

    #[test]
    fn every_log_form() {
        for text in [
            r#"{"level":"DEBUG","time":"2025-03-01T10:00:00.000Z","logger":"controller","caller":"scheduling/volumeusage.go:137","message":"failed tracking CSI volume limits","commit":"ad71530","controller":"provisioner"}"#,
            r#"[pod/karpenter-5c7d9f8b6-2wq9z/controller] {"level":"DEBUG","time":"2025-06-18T21:37:04.662Z","logger":"controller","message":"discovered subnets","commit":"3314206"}"#,
            "2022-02-10T10:33:35.421Z\tDEBUG\tcontroller.provisioning\tDiscovered 398 EC2 instance types\t{\"commit\": \"2346ed5\"}",
            "2022-02-10T10:33:35.421Z\tDEBUG\tSuccessfully created the logger.\n2022-02-10T10:33:35.422Z\tINFO\tLogging level set to: debug",
        ] {
            assert_eq!(ids(&check_only("KW004", text)), ["KW004"], "{text}");
        }
    }

    #[test]
    fn other_controllers_debug_lines_are_not_karpenter() {
        // zap's default keys (`ts`, `msg`, lower-case level): the AWS Load Balancer Controller
        // and controller-runtime loggers, whose logger names also start with `controller`.
        for text in [
            r#"{"level":"debug","ts":"2025-09-01T12:00:00.000Z","logger":"controllers.ingress","msg":"successfully built model"}"#,
            r#"{"level":"debug","ts":"2025-09-01T12:00:00.000Z","logger":"controller-runtime.webhook","msg":"received request"}"#,
        ] {
            assert!(ids(&check_only("KW004", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn another_pods_controller_logger_is_not_karpenter() {
        for text in [
            r#"api-6b7d9c8f5-qp2lm api {"level":"DEBUG","time":"2025-06-01T10:00:05.123Z","logger":"controller","message":"reconciling","controller":"orders"}"#,
            r#"[pod/orders-operator-5d9c/manager] {"level":"DEBUG","time":"2025-06-01T10:00:05.123Z","logger":"controller","message":"reconciling","controller":"orders"}"#,
        ] {
            assert!(ids(&check_only("KW004", text)).is_empty(), "{text}");
        }
        for text in [
            r#"karpenter-7c9d8f6b5-abcde controller {"level":"DEBUG","time":"2025-06-01T10:00:05.123Z","logger":"controller","message":"waiting on cluster sync","controller":"disruption"}"#,
            r#"2025-06-01T10:00:05.123456789Z {"level":"DEBUG","time":"2025-06-01T10:00:05.123Z","logger":"controller","message":"waiting on cluster sync","controller":"disruption"}"#,
            r#"[pod/autoscaler-5d9c/controller] {"level":"DEBUG","time":"t","logger":"controller","message":"m","commit":"3f1d5a2"}"#,
        ] {
            assert_eq!(ids(&check_only("KW004", text)), ["KW004"], "{text}");
        }
    }

    #[test]
    fn every_setting_form() {
        for text in [
            "      LOG_LEVEL:                 debug",
            "kubectl set env deployment/karpenter -n karpenter LOG_LEVEL=debug",
            "logLevel: debug",
            "helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --set logLevel=debug",
            "        - --log-level=debug",
            "  loglevel.controller: debug",
            "        - name: LOG_LEVEL\n          value: debug",
        ] {
            let text = format!("    image: public.ecr.aws/karpenter/controller:1.3.3\n{text}");
            assert_eq!(ids(&check_only("KW004", &text)), ["KW004"], "{text}");
        }
    }

    /// A grepped env fragment under the prompt that produced it: the prompt names the
    /// Karpenter Deployment, the fragment alone does not; another Deployment's prompt does not
    /// count.
    #[test]
    fn env_fragment_under_a_karpenter_prompt() {
        let fragment = "        - name: LOG_LEVEL\n          value: debug\n";
        let karpenter = format!("$ kubectl get deploy karpenter -n karpenter -o yaml | grep -B1 -A1 LOG_LEVEL\n{fragment}");
        assert_eq!(ids(&check_only("KW004", &karpenter)), ["KW004"]);
        let other = format!("$ kubectl get deploy payments-api -n shop -o yaml | grep -B1 -A1 LOG_LEVEL\n{fragment}");
        assert!(ids(&check_only("KW004", &other)).is_empty());
    }

    #[test]
    fn deployment_env_names_the_namespace() {
        let mut facts = Facts::default();
        facts.workloads.push(Workload {
            kind: "Deployment".into(),
            meta: Meta {
                name: "karpenter".into(),
                namespace: Some("kube-system".into()),
                ..Default::default()
            },
            containers: vec![Container {
                name: "controller".into(),
                env: [("LOG_LEVEL".to_string(), "debug".to_string())].into(),
                ..Default::default()
            }],
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .contains("LOG_LEVEL=debug on Deployment karpenter"),
            "{}",
            d.summary
        );
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("kubectl set env deployment/karpenter -n kube-system LOG_LEVEL=info")
        );
    }

    #[test]
    fn settings_of_karpenter_only() {
        use crate::facts::ObjectRef;
        let setting = |owner: &str, key: &str, source: SettingSource| Setting {
            source,
            owner: Some(ObjectRef::new("Deployment", Some("karpenter"), owner)),
            container: Some("controller".into()),
            key: key.into(),
            value: "debug".into(),
            evidence: Evidence::new("deploy.yaml", 30, "value: debug"),
        };
        let mut facts = Facts::default();
        facts
            .settings
            .push(setting("checkout", "LOG_LEVEL", SettingSource::Env));
        assert!(check(&facts).is_empty());
        facts
            .settings
            .push(setting("karpenter", "--log-level", SettingSource::Arg));
        let d = &check(&facts)[0];
        assert!(
            d.summary
                .contains("--log-level=debug on Deployment karpenter"),
            "{}",
            d.summary
        );
        assert_eq!(d.evidence[0].line, 30);
    }

    #[test]
    fn quotes_a_few_lines_and_counts_all() {
        let line =
            r#"{"level":"DEBUG","time":"t","logger":"controller","message":"m NUM","commit":"c"}"#;
        let text: Vec<String> = (0..10)
            .map(|i| line.replace("NUM", &i.to_string()))
            .collect();
        let report = check_only("KW004", &text.join("\n"));
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("10 DEBUG lines"), "{}", d.summary);
        assert_eq!(d.evidence.len(), MAX_QUOTED_LINES);
    }

    #[test]
    fn json_env_lists() {
        let line = r#"[{"name":"KARPENTER_SERVICE","value":"karpenter"},{"name":"LOG_LEVEL","value":"debug"},{"name":"METRICS_PORT","value":"8080"}]"#;
        assert_eq!(json_env_value(line, "LOG_LEVEL"), Some("debug"));
        assert_eq!(
            json_env_value(r#"[{"name": "LOG_LEVEL", "value": "info"}]"#, "LOG_LEVEL"),
            Some("info")
        );
        assert_eq!(
            json_env_value(r#"[{"name":"OTHER","value":"LOG_LEVEL"}]"#, "LOG_LEVEL"),
            None
        );
        assert_eq!(ids(&check_only("KW004", line)), ["KW004"]);
    }

    #[test]
    fn near_misses() {
        for text in [
            r#"{"level":"INFO","time":"t","logger":"controller","message":"found provisionable pod(s)","commit":"c"}"#,
            r#"{"level":"debug","ts":"2024-01-01T00:00:00Z","caller":"ipamd/ipamd.go:1","msg":"aws-node line"}"#,
            "LOG_LEVEL=info",
            "logLevel: debugger-sidecar-off",
            "kubectl set env deployment/karpenter -n karpenter LOG_LEVEL=info",
            "    Set LOG_LEVEL to debug when Karpenter logs are silent",
            // Another application's debug setting.
            "Name:  checkout-7d4b9c6f8-k2xqp\n    Environment:\n      LOG_LEVEL:  debug",
        ] {
            assert!(ids(&check_only("KW004", text)).is_empty(), "{text}");
        }
    }
}
