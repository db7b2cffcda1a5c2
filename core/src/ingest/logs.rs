//! Karpenter controller log lines: v1 JSON lines (zap), the older console format
//! (`<time>\t<LEVEL>\t<logger>\t<message>\t{<fields>}`), the prefixes `kubectl logs --prefix`
//! (`[pod/karpenter-xxx/controller] `), `--timestamps` and stern (`karpenter-xxx controller `)
//! add, and exports that wrap each line (CloudWatch `@message`, Fluent Bit / Docker `log`,
//! Loki `line`, CSV with doubled quotes).

use serde_json::{Map, Value};

use crate::document::Evidence;
use crate::facts::{LogRecord, Message, MessageOrigin, ObjectRef};

/// Levels of the console encoder (and zap's level names).
const LEVELS: &[&str] = &[
    "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "DPANIC", "PANIC", "FATAL",
];

/// Fields exports wrap the original log line in (Datadog's log export nests the line as
/// `content.message`, its API as `attributes.message`, or the parsed fields as
/// `attributes.attributes` beside the message).
const WRAPPER_FIELDS: &[&str] = &[
    "@message",
    "content",
    "attributes",
    "log",
    "line",
    "message",
    "msg",
    "textPayload",
    "_source",
];

/// How a line reads as a log line.
#[derive(Debug, Clone, PartialEq)]
pub enum LogParse {
    Record(Box<LogRecord>),
    /// The line is meant to be a JSON log line (it starts like one) but does not parse.
    Malformed(String),
    NotLog,
}

/// Parses one line as a JSON log line (prefixed or wrapped) or a single-line console record.
pub fn parse_line(line: &str, evidence: Evidence) -> LogParse {
    match json_log(line) {
        JsonLog::Record(map) => return LogParse::Record(Box::new(record_from_map(map, evidence))),
        JsonLog::Malformed(why) => return LogParse::Malformed(why),
        JsonLog::NotLog => {}
    }
    match console_head(line) {
        Some(head) => {
            let (message, fields) = split_fields(head.rest);
            LogParse::Record(Box::new(console_record(
                &head,
                message.to_string(),
                fields,
                evidence,
            )))
        }
        None => LogParse::NotLog,
    }
}

enum JsonLog {
    Record(Map<String, Value>),
    Malformed(String),
    NotLog,
}

fn json_log(line: &str) -> JsonLog {
    let trimmed = line.trim();
    if let Some(csv) = csv_json_field(trimmed) {
        return match serde_json::from_str::<Value>(&csv) {
            Ok(Value::Object(map)) => match unwrap_log(map, 0) {
                Some(map) => JsonLog::Record(map),
                None => JsonLog::NotLog,
            },
            _ => JsonLog::Malformed("the JSON in this CSV field does not parse".to_string()),
        };
    }
    let Some(mut brace) = trimmed.find('{') else {
        return JsonLog::NotLog;
    };
    let prefix = &trimmed[..brace];
    if !is_log_prefix(prefix) {
        return JsonLog::NotLog;
    }
    let mut labels = None;
    if let Some((set, after)) = loki_label_set(&trimmed[brace..]) {
        let rest = after.trim_start();
        if rest.starts_with('{') {
            brace = trimmed.len() - rest.len();
            labels = Some(set);
        }
    }
    let mut json = &trimmed[brace..];
    // A Markdown table row (CloudWatch Logs Insights results copied as Markdown:
    // `| <@timestamp> | <@message> |`): the record ends where its cell does.
    if prefix.starts_with('|') {
        json = json.strip_suffix('|').map_or(json, str::trim_end);
    }
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(map)) => match unwrap_log(map, 0) {
            Some(mut map) => {
                if let Some(pod) = labels.as_ref().and_then(exporter_pod) {
                    map.entry(EXPORTER_POD_FIELD).or_insert(pod);
                }
                JsonLog::Record(map)
            }
            None => JsonLog::NotLog,
        },
        Ok(_) => JsonLog::NotLog,
        Err(e) => {
            // Only a line that is plainly a log record is an error; other text with a brace
            // (a multi-line object's first line, a Go struct dump) is for the segmenter.
            let looks_like_log = (json.contains("\"level\"") || json.contains("\\\"level\\\""))
                && (json.contains("\"message\"")
                    || json.contains("\"msg\"")
                    || json.contains("\\\"message\\\""));
            if looks_like_log {
                JsonLog::Malformed(json_error(&e, json))
            } else {
                JsonLog::NotLog
            }
        }
    }
}

/// One line describing what is wrong with a JSON log line.
fn json_error(e: &serde_json::Error, json: &str) -> String {
    if e.is_eof() {
        format!(
            "truncated JSON log line (it ends after {} characters without closing)",
            json.chars().count()
        )
    } else {
        format!("malformed JSON log line: {e}")
    }
}

/// What may stand before the JSON object of a log line: nothing, a `kubectl logs --prefix`
/// tag, a timestamp, a stern `pod container` pair, CloudWatch/Loki columns.
fn is_log_prefix(prefix: &str) -> bool {
    if grep_line_number(prefix) {
        return true;
    }
    // A bare `[` opens a JSON array of records (a Datadog or Loki export on one line): the
    // JSON reader takes it as a whole, one record per item.
    prefix.len() <= 256
        && prefix.trim() != "["
        && !prefix.contains('"')
        && !prefix.contains(": ")
        && !prefix.trim_end().ends_with(':')
        && prefix.split_whitespace().count() <= 6
}

/// What `grep -n` (`123:`, a context line's `124-`) or `grep -rn` (`karpenter.log:123:`) puts
/// before a matching line. A prefix ending in `:` is otherwise a sentence (`the error was:`).
fn grep_line_number(prefix: &str) -> bool {
    let Some(head) = prefix.strip_suffix([':', '-']) else {
        return false;
    };
    let (file, number) = match head.rsplit_once(':') {
        Some((file, number)) => (Some(file), number),
        None => (None, head),
    };
    !number.is_empty()
        && number.len() <= 9
        && number.bytes().all(|b| b.is_ascii_digit())
        && file.is_none_or(|f| !f.is_empty() && f.len() <= 200 && !f.contains(char::is_whitespace))
}

/// Loki's label set as `logcli query` prints it before each line
/// (`{app="karpenter", namespace="kube-system", pod="karpenter-6d8f9c7b5-x2x9z"}`): the labels
/// as an export wrapper (`{"labels": {...}}`) and the text after the closing brace. Values are
/// Go-quoted strings.
fn loki_label_set(text: &str) -> Option<(Map<String, Value>, &str)> {
    let mut rest = text.strip_prefix('{')?;
    let mut labels = Map::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix('}') {
            if labels.is_empty() {
                return None;
            }
            let mut wrapper = Map::new();
            wrapper.insert("labels".to_string(), Value::Object(labels));
            return Some((wrapper, after));
        }
        let (key, after_key) = rest.split_once("=\"")?;
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return None;
        }
        let mut value = String::new();
        let mut chars = after_key.char_indices();
        let end = loop {
            match chars.next()? {
                (i, '"') => break i,
                (_, '\\') => value.push(chars.next()?.1),
                (_, c) => value.push(c),
            }
        };
        labels.insert(key.to_string(), Value::String(value));
        rest = after_key[end + 1..].trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest);
    }
}

/// A CSV export line holding a JSON object in a quoted field: `...,"{""level"":""INFO"",...}"`.
fn csv_json_field(line: &str) -> Option<String> {
    let start = line.find("\"{\"\"")?;
    let inner = &line[start + 1..];
    let end = inner.rfind("}\"")?;
    Some(inner[..=end].replace("\"\"", "\""))
}

/// The log record in `map`, looking through export wrappers (the record as a JSON string or
/// object in `@message`, `log`, `line`...).
fn unwrap_log(map: Map<String, Value>, depth: usize) -> Option<Map<String, Value>> {
    let is_record = (map.contains_key("level") || map.contains_key("severity"))
        && (map.get("message").is_some_and(|m| !is_json_text(m))
            || map.get("msg").is_some_and(|m| !is_json_text(m)));
    if is_record {
        return Some(map);
    }
    if depth >= 3 {
        return None;
    }
    for key in WRAPPER_FIELDS {
        let inner = match map.get(*key) {
            Some(Value::String(s)) => {
                let s = s.trim();
                let Some(brace) = s.find('{') else {
                    continue;
                };
                if !is_log_prefix(&s[..brace]) {
                    continue;
                }
                match serde_json::from_str::<Value>(&s[brace..]) {
                    Ok(Value::Object(inner)) => inner,
                    _ => continue,
                }
            }
            Some(Value::Object(inner)) => {
                let mut inner = inner.clone();
                // A log service that parsed the JSON line keeps its message beside the
                // other fields (Datadog: `message` next to `attributes`).
                if !inner.contains_key("message") && !inner.contains_key("msg") {
                    if let Some(m) = map
                        .get("message")
                        .filter(|m| m.is_string() && !is_json_text(m))
                    {
                        inner.insert("message".to_string(), m.clone());
                    }
                }
                inner
            }
            _ => continue,
        };
        let Some(mut inner) = unwrap_log(inner, depth + 1) else {
            continue;
        };
        if !inner.contains_key("time") && !inner.contains_key("ts") {
            if let Some(t) = map.get("@timestamp").or_else(|| map.get("timestamp")) {
                inner.insert("time".to_string(), t.clone());
            }
        }
        if let Some(pod) = exporter_pod(&map) {
            inner.entry(EXPORTER_POD_FIELD).or_insert(pod);
        }
        return Some(inner);
    }
    None
}

/// The field a log record gets for the pod an export says wrote it.
pub const EXPORTER_POD_FIELD: &str = "exportedFromPod";

/// The pod an export wrapper names, as `{"namespace":..,"name":..}`: Loki's `labels`
/// (`namespace`, `pod`), Fluent Bit's and CloudWatch Container Insights' `kubernetes`
/// (`namespace_name`, `pod_name`).
fn exporter_pod(wrapper: &Map<String, Value>) -> Option<Value> {
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    let (namespace, name) = if let Some(Value::Object(k)) = wrapper.get("kubernetes") {
        (text(k.get("namespace_name")), text(k.get("pod_name")))
    } else if let Some(Value::Object(l)) = wrapper.get("labels") {
        (text(l.get("namespace")), text(l.get("pod")))
    } else {
        return None;
    };
    let mut pod = Map::new();
    pod.insert("namespace".to_string(), Value::String(namespace?));
    pod.insert("name".to_string(), Value::String(name?));
    Some(Value::Object(pod))
}

fn is_json_text(v: &Value) -> bool {
    v.as_str().is_some_and(|s| s.trim_start().starts_with('{'))
}

fn string_of(v: Value) -> String {
    match v {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

fn record_from_map(mut map: Map<String, Value>, evidence: Evidence) -> LogRecord {
    let message = map
        .remove("message")
        .or_else(|| map.remove("msg"))
        .map(string_of)
        .unwrap_or_default();
    let level = map
        .remove("level")
        .or_else(|| map.remove("severity"))
        .map(|v| string_of(v).to_ascii_uppercase())
        .unwrap_or_default();
    let time = map
        .remove("time")
        .or_else(|| map.remove("ts"))
        .or_else(|| map.remove("timestamp"))
        .map(string_of);
    let text = |v: Option<Value>| v.map(string_of);
    let error_causes = match map.remove("errorCauses") {
        Some(Value::Array(causes)) => causes
            .into_iter()
            .filter_map(|c| match c {
                Value::Object(mut o) => o.remove("error").map(string_of),
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect(),
        Some(other) => {
            map.insert("errorCauses".to_string(), other);
            Vec::new()
        }
        None => Vec::new(),
    };
    LogRecord {
        level,
        time,
        logger: text(map.remove("logger")),
        controller: text(map.remove("controller")),
        message,
        error: text(map.remove("error")),
        error_causes,
        fields: map.into_iter().collect(),
        evidence,
    }
}

/// The start of a console-format record.
#[derive(Debug, Clone, PartialEq)]
pub struct ConsoleHead<'a> {
    pub time: Option<&'a str>,
    pub level: &'a str,
    pub logger: &'a str,
    /// Message, possibly followed by the JSON fields.
    pub rest: &'a str,
}

/// `[prefix] [time] LEVEL logger message...`: the console encoder's columns (tab-separated,
/// or spaces once pasted), optionally after a `kubectl logs --prefix` tag or a stern
/// `pod container` pair.
pub fn console_head(line: &str) -> Option<ConsoleHead<'_>> {
    let line = line.trim_end();
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let mut candidates: Vec<&str> = vec![line];
    if let Some(rest) = line.strip_prefix('[').and_then(|r| r.split_once("] ")) {
        candidates.push(rest.1);
    }
    let mut tokens = line.splitn(3, ' ');
    if let (Some(_), Some(_), Some(rest)) = (tokens.next(), tokens.next(), tokens.next()) {
        if starts_with_timestamp(rest) {
            candidates.push(rest);
        }
    }
    candidates.into_iter().find_map(console_columns)
}

fn console_columns(text: &str) -> Option<ConsoleHead<'_>> {
    let (time, after_time) = match timestamp_len(text) {
        Some(n) => (Some(&text[..n]), text[n..].trim_start()),
        None => (None, text),
    };
    let (level, after_level) = split_token(after_time)?;
    if !LEVELS.contains(&level) {
        return None;
    }
    let sep_ok = time.is_some() || after_level.starts_with('\t') || after_level.starts_with("  ");
    let (logger, rest) = split_token(after_level.trim_start())?;
    let logger_ok = logger
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase())
        && logger
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c));
    if !sep_ok || !logger_ok {
        return None;
    }
    Some(ConsoleHead {
        time,
        level,
        logger,
        rest: rest.trim_start(),
    })
}

fn split_token(s: &str) -> Option<(&str, &str)> {
    let end = s.find(char::is_whitespace)?;
    Some((&s[..end], &s[end..]))
}

fn starts_with_timestamp(s: &str) -> bool {
    timestamp_len(s).is_some()
}

/// Whether `line` starts with a log line's timestamp: ISO 8601, or Go's `log` package
/// (`2026/11/18 04:12:41`, aws-node-termination-handler's console format).
pub fn starts_with_log_time(line: &str) -> bool {
    let b = line.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    let go_log = digits(0..4)
        && b.get(4) == Some(&b'/')
        && digits(5..7)
        && b.get(7) == Some(&b'/')
        && digits(8..10)
        && b.get(10) == Some(&b' ')
        && digits(11..13)
        && b.get(13) == Some(&b':');
    go_log || starts_with_timestamp(line)
}

/// Length of an ISO 8601 timestamp at the start of `s` (`2023-04-05T23:56:53.363Z`, with
/// optional fraction and zone).
pub fn timestamp_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    if !(digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10)
        && matches!(b.get(10), Some(b'T') | Some(b' '))
        && digits(11..13)
        && b.get(13) == Some(&b':')
        && digits(14..16)
        && b.get(16) == Some(&b':')
        && digits(17..19))
    {
        return None;
    }
    let mut n = 19;
    if b.get(n) == Some(&b'.') {
        n += 1;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
    }
    match b.get(n) {
        Some(b'Z') => n += 1,
        Some(b'+') | Some(b'-') if digits(n + 1..n + 3) => {
            n += 3;
            if b.get(n) == Some(&b':') {
                n += 1;
            }
            if digits(n..n + 2) {
                n += 2;
            }
        }
        _ => {}
    }
    Some(n)
}

/// Splits a console record's text into the message and its trailing JSON fields object.
pub fn split_fields(text: &str) -> (&str, Option<Map<String, Value>>) {
    let trimmed = text.trim_end();
    if !trimmed.ends_with('}') {
        return (trimmed, None);
    }
    let mut search_end = trimmed.len();
    while let Some(pos) = trimmed[..search_end].rfind('{') {
        let before = &trimmed[..pos];
        if before.is_empty() || before.ends_with(char::is_whitespace) {
            if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&trimmed[pos..]) {
                return (before.trim_end(), Some(map));
            }
        }
        search_end = pos;
    }
    (trimmed, None)
}

/// A record from a console head, its (possibly multi-line) message and fields.
pub fn console_record(
    head: &ConsoleHead<'_>,
    message: String,
    fields: Option<Map<String, Value>>,
    evidence: Evidence,
) -> LogRecord {
    let mut fields = fields.unwrap_or_default();
    let error = fields.remove("error").map(string_of);
    let logger = head.logger.to_string();
    // Before v0.37 the controller was part of the logger name (`controller.provisioning`).
    let controller = fields
        .remove("controller")
        .map(string_of)
        .or_else(|| logger.strip_prefix("controller.").map(str::to_string));
    LogRecord {
        level: head.level.to_ascii_uppercase(),
        time: head.time.map(str::to_string),
        logger: Some(logger),
        controller,
        message,
        error,
        error_causes: Vec::new(),
        fields: fields.into_iter().collect(),
        evidence,
    }
}

/// The decoded text rules match on: message, error, then each cause, joined by `: `.
pub fn record_text(record: &LogRecord) -> String {
    let mut text = record.message.clone();
    for part in record.error.iter().chain(record.error_causes.iter()) {
        if part.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(part);
    }
    text
}

/// The object a record is about: its `Pod`, `NodeClaim`, `Node`, `NodePool` or `EC2NodeClass`
/// field (and the lower-case keys of pre-v0.37 logs).
fn record_object(record: &LogRecord) -> Option<ObjectRef> {
    const KINDS: &[(&str, &str, bool)] = &[
        ("Pod", "Pod", true),
        ("pod", "Pod", true),
        ("NodeClaim", "NodeClaim", false),
        ("nodeclaim", "NodeClaim", false),
        ("Machine", "Machine", false),
        ("machine", "Machine", false),
        ("Node", "Node", false),
        ("node", "Node", false),
        ("NodePool", "NodePool", false),
        ("nodepool", "NodePool", false),
        ("provisioner", "Provisioner", false),
        ("EC2NodeClass", "EC2NodeClass", false),
    ];
    KINDS.iter().find_map(|(key, kind, namespaced)| {
        let qualified = record.field_name(key)?;
        if qualified.is_empty() {
            return None;
        }
        match qualified.split_once('/') {
            Some((ns, name)) if *namespaced => Some(ObjectRef::new(kind, Some(ns), name)),
            // A cluster-scoped name has no slash: `"provisioner": "kubernetes.io/aws-ebs"` is a
            // StorageClass provisioner, not a Karpenter Provisioner.
            Some(_) => None,
            None => Some(ObjectRef::new(kind, None, &qualified)),
        }
    })
}

/// The message a record contributes.
pub fn record_message(record: &LogRecord) -> Message {
    let nodepool = ["NodePool", "nodepool", "provisioner"]
        .iter()
        .find_map(|k| record.field_name(k))
        .filter(|n| !n.is_empty() && !n.contains('/'));
    Message {
        origin: MessageOrigin::KarpenterLog,
        text: record_text(record),
        evidence: record.evidence.clone(),
        object: record_object(record),
        nodepool,
        reason: None,
        component: record.controller.clone().or_else(|| record.logger.clone()),
        time: record.time.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> LogParse {
        parse_line(line, Evidence::new("t", 1, line))
    }

    fn record(line: &str) -> LogRecord {
        match parse(line) {
            LogParse::Record(r) => *r,
            other => panic!("not a record: {other:?}"),
        }
    }

    #[test]
    fn v1_json_line_with_error_causes() {
        let r = record(
            r#"{"level":"ERROR","time":"2025-08-18T03:12:44.139Z","logger":"controller","message":"could not schedule pod","commit":"1c39126","controller":"provisioner","Pod":{"name":"w-0","namespace":"coder"},"NodePool":{"name":"gpu"},"error":"a; b","errorCauses":[{"error":"a"},{"error":"b"}]}"#,
        );
        assert_eq!(r.level, "ERROR");
        assert_eq!(r.controller.as_deref(), Some("provisioner"));
        assert_eq!(r.error_causes, vec!["a", "b"]);
        assert_eq!(r.fields["commit"], "1c39126");
        let m = record_message(&r);
        assert_eq!(m.text, "could not schedule pod: a; b: a: b");
        assert_eq!(m.object, Some(ObjectRef::new("Pod", Some("coder"), "w-0")));
        assert_eq!(m.nodepool.as_deref(), Some("gpu"));
        assert_eq!(m.component.as_deref(), Some("provisioner"));
    }

    #[test]
    fn escapes_are_decoded_and_apostrophes_kept() {
        let r = record(
            r#"{"level":"ERROR","message":"x","error":"pod didn’t schedule because NodePool couldn’t meet minValues requirements, label \"a\" \u003e b"}"#,
        );
        assert_eq!(
            r.error.as_deref(),
            Some("pod didn’t schedule because NodePool couldn’t meet minValues requirements, label \"a\" > b")
        );
    }

    #[test]
    fn prefixes_and_wrappers() {
        for line in [
            r#"[pod/karpenter-5c7d9f8b6-2wq9z/controller] {"level":"INFO","message":"found provisionable pod(s)"}"#,
            r#"karpenter-6d9f7c8b5-zjlwr controller {"level":"INFO","message":"found provisionable pod(s)"}"#,
            r#"2024-01-01T00:00:00.123456789Z {"level":"INFO","message":"found provisionable pod(s)"}"#,
            r#"{"@timestamp":"2024-01-01 00:00:00.000","@message":"{\"level\":\"INFO\",\"message\":\"found provisionable pod(s)\"}"}"#,
            r#"{"log":"{\"level\":\"INFO\",\"message\":\"found provisionable pod(s)\"}\n","stream":"stderr"}"#,
            r#"{"labels":{"app":"karpenter"},"line":"{\"level\":\"INFO\",\"message\":\"found provisionable pod(s)\"}","timestamp":"1"}"#,
            r#"2024-05-01 10:00:00.000,"{""level"":""INFO"",""message"":""found provisionable pod(s)""}""#,
            r#"2024-01-01T00:00:00Z {app="karpenter", container="controller"} {"level":"INFO","message":"found provisionable pod(s)"}"#,
            r#"| 2024-01-01 00:00:00.000 | {"level":"INFO","message":"found provisionable pod(s)"} |"#,
        ] {
            let r = record(line);
            assert_eq!(r.message, "found provisionable pod(s)", "{line}");
            assert_eq!(r.level, "INFO", "{line}");
        }
    }

    #[test]
    fn logcli_labels_name_the_pod_that_wrote_the_line() {
        let r = record(
            r#"2025-06-03T09:29:40Z {app="karpenter", namespace="kube-system", pod="karpenter-6d8f9c7b5-x2x9z", note="a \"quoted\" {brace}"} {"level":"ERROR","message":"could not schedule pod"}"#,
        );
        assert_eq!(r.message, "could not schedule pod");
        assert_eq!(
            r.field_name(EXPORTER_POD_FIELD).as_deref(),
            Some("kube-system/karpenter-6d8f9c7b5-x2x9z")
        );
        assert!(matches!(
            parse(r#"2025-06-03T09:29:40Z {app="karpenter"} plain text"#),
            LogParse::NotLog
        ));
    }

    #[test]
    fn console_format_variants() {
        let r = record(
            "2023-04-21T06:05:00.044Z\tINFO\tcontroller.inflightchecks\tInflight check failed for node, Expected resource \"nvidia.com/gpu\" didn't register on the node\t{\"commit\": \"beb0a64-dirty\", \"node\": \"ip-1\"}",
        );
        assert_eq!(r.level, "INFO");
        assert_eq!(r.controller.as_deref(), Some("inflightchecks"));
        assert!(r.message.ends_with("didn't register on the node"));
        assert_eq!(r.fields["commit"], "beb0a64-dirty");

        let r = record("karpenter-785fc5c56d-qp4vp controller 2023-02-17T18:07:57.495Z\tERROR\tcontroller.provisioner\tlaunching machine, InvalidBlockDeviceMapping: x\t{\"commit\": \"8c27519-dirty\"}");
        assert_eq!(r.message, "launching machine, InvalidBlockDeviceMapping: x");

        let r = record("2022-01-19T18:22:23.366Z ERROR controller.provisioning Could not launch node, launching instances");
        assert_eq!(r.message, "Could not launch node, launching instances");

        let r = record("2022-02-10T10:33:35.421Z\tERROR\tcontroller.controller.provisioning\tReconciler error\t{\"commit\": \"2346ed5\", \"error\": \"fetching instance types, WebIdentityErr: failed\"}");
        assert_eq!(
            record_text(&r),
            "Reconciler error: fetching instance types, WebIdentityErr: failed"
        );
    }

    #[test]
    fn not_logs_and_malformed() {
        assert_eq!(parse("Error from server (BadRequest): x"), LogParse::NotLog);
        assert_eq!(parse(r#"{"limits":{"memory":"24Gi"}}"#), LogParse::NotLog);
        assert_eq!(parse("ERROR something happened"), LogParse::NotLog);
        assert!(matches!(
            parse(r#"{"level":"ERROR","time":"2025","message":"could not sch"#),
            LogParse::Malformed(m) if m.starts_with("truncated JSON log line")
        ));
    }
}
