//! Kubernetes events in text form: the `Events:` table of `kubectl describe`
//! (`Type Reason Age From Message`, `(x3 over 10m)`, `<unknown>`, wrapped messages),
//! `kubectl get events` tables (default columns, `-A` with NAMESPACE, `-o wide`, the old
//! column set), rows pasted without their header, the `time=... type=... reason=...` form,
//! and events as JSON lines from event exporters. Event objects in YAML/JSON with `kind: Event`
//! belong to the objects module.

use serde_json::Value;

use crate::document::Evidence;
use crate::facts::{Collected, Event, Message, MessageOrigin, ObjectRef};
use crate::rules::time::age_seconds;

use super::segment::{self, object_ref};
use super::tables::{self, is_separator, split_gaps, Table};
use super::{Part, Sink};

/// An events table has TYPE, REASON and MESSAGE columns.
pub fn is_events_table(table: &Table) -> bool {
    table.has("TYPE") && table.has("REASON") && table.has("MESSAGE")
}

/// Adds an event and the message rules match on.
pub fn push_event(sink: &mut Sink, mut event: Event, time: Option<String>) {
    // `(x14 over 40m)` is fourteen occurrences: what a collapsed repeat counts, as an Event
    // object's `count` does.
    event.evidence.count = event.count.max(1);
    let object = event.object.clone();
    if object.as_ref().is_some_and(|o| o.kind == "Pod") {
        sink.collected(Collected::PodEvents);
    }
    let nodepool = object
        .as_ref()
        .filter(|o| o.kind == "NodePool" || o.kind == "Provisioner")
        .map(|o| o.name.clone());
    sink.message(Message {
        origin: MessageOrigin::Event,
        text: event.message.clone(),
        evidence: event.evidence.clone(),
        object,
        nodepool,
        reason: Some(event.reason.clone()).filter(|r| !r.is_empty()),
        component: Some(event.source.clone()).filter(|s| !s.is_empty()),
        time,
    });
    sink.facts.events.push(event);
}

/// An Event's last and first times, the same for every shape it comes in (an `Event` or
/// `events.k8s.io/v1` object, an exporter's JSON line): `field(path)` reads a string at a
/// path. A repeated event keeps both (`firstTimestamp` is when the series began, what ages
/// and counts over time are computed from); either one stands for the other when alone.
pub fn event_times(field: impl Fn(&[&str]) -> Option<String>) -> (Option<String>, Option<String>) {
    let first_of = |paths: &[&[&str]]| paths.iter().find_map(|p| field(p));
    let last = first_of(&[
        &["series", "lastObservedTime"],
        &["lastTimestamp"],
        &["deprecatedLastTimestamp"],
        &["eventTime"],
        &["firstTimestamp"],
        &["deprecatedFirstTimestamp"],
        &["metadata", "creationTimestamp"],
    ]);
    let first = first_of(&[
        &["firstTimestamp"],
        &["deprecatedFirstTimestamp"],
        &["eventTime"],
    ])
    .or_else(|| last.clone());
    (last, first)
}

/// An Event's occurrence count (`series.count`, `count`, `deprecatedCount`), at least 1.
pub fn event_count(field: impl Fn(&[&str]) -> Option<i64>) -> usize {
    [&["series", "count"][..], &["count"], &["deprecatedCount"]]
        .iter()
        .find_map(|p| field(p))
        .and_then(|n| usize::try_from(n).ok())
        .filter(|&n| n > 0)
        .unwrap_or(1)
}

/// `Events:` at `heading` with its indented table (or `<none>`) up to `end`, about `object`.
pub fn ingest_section(
    part: &Part<'_>,
    heading: usize,
    end: usize,
    object: Option<&ObjectRef>,
    sink: &mut Sink,
) {
    let first_line = part.lines[heading];
    if first_line.contains("<none>") {
        return;
    }
    let Some(header) = (heading + 1..end).find(|&k| !segment::is_blank(part.lines[k])) else {
        return;
    };
    match Table::from_any_header(part.lines[header]).filter(is_events_table) {
        Some(table) => ingest_described_rows(part, header, end, &table, object, sink),
        None => {
            sink.error(
                part,
                header,
                "an Events: section without its `Type  Reason  Age  From  Message` header; its lines were kept as text",
            );
            for k in header..end {
                if ingest_line(part, k, sink).is_none() {
                    sink.unrecognised(part, k);
                }
            }
        }
    }
}

/// The rows under a describe's events `header` (up to `end`), about `object`.
fn ingest_described_rows(
    part: &Part<'_>,
    header: usize,
    end: usize,
    table: &Table,
    object: Option<&ObjectRef>,
    sink: &mut Sink,
) {
    let namespace = object.and_then(|o| o.namespace.clone());
    let first_event = sink.facts.events.len();
    ingest_rows(
        part,
        header + 1,
        end,
        table,
        namespace.as_deref(),
        object,
        sink,
    );
    for event in sink.facts.events.iter_mut().skip(first_event) {
        event.from_describe = true;
    }
}

/// A describe's `Type  Reason  Age  From  Message` table at `header` that lost its `Events:`
/// line (`kubectl describe pod x | tail -4`, or `grep -A5 Type`), right after the `kubectl
/// describe` command that names `object`: its rows are that object's events. Returns the
/// index after the table, which ends at a blank line or a prompt.
pub fn ingest_headingless(
    part: &Part<'_>,
    header: usize,
    object: &ObjectRef,
    sink: &mut Sink,
) -> Option<usize> {
    // Describe's own columns, in its mixed case: `kubectl get events` prints OBJECT and
    // upper-case names, and is read as a `kubectl get` table. (The cheap test first: this
    // runs on every line after a describe command.)
    if !part.lines[header].trim_start().starts_with("Type ") {
        return None;
    }
    let table = Table::from_any_header(part.lines[header])?;
    let describe_columns = table.columns.len() == 5
        && table.has("AGE")
        && table.has("FROM")
        && is_events_table(&table);
    if !describe_columns {
        return None;
    }
    let end = (header + 1..part.lines.len())
        .find(|&k| {
            segment::is_blank(part.lines[k]) || segment::command_line(part.lines[k]).is_some()
        })
        .unwrap_or(part.lines.len());
    ingest_described_rows(part, header, end, &table, Some(object), sink);
    Some(end)
}

/// The rows of an events table (`start..end`, after the header). Rows that do not fill the
/// TYPE column continue the previous row's message (a wrapped line).
#[allow(clippy::too_many_arguments)]
pub fn ingest_rows(
    part: &Part<'_>,
    start: usize,
    end: usize,
    table: &Table,
    namespace: Option<&str>,
    object: Option<&ObjectRef>,
    sink: &mut Sink,
) {
    let mut pending: Vec<(Event, Option<String>)> = Vec::new();
    for k in start..end {
        let line = part.lines[k];
        if segment::is_blank(line) || is_separator(line) || segment::is_cut_mark(line) {
            continue;
        }
        // A Markdown fence (```, ```text, ~~~): a table pasted in a chat code block. The
        // fence after the rows closes the block, so what follows is the user's prose, not a
        // wrapped message; one before the first row only opens it.
        if is_fence(line) {
            if pending.is_empty() {
                continue;
            }
            break;
        }
        let cells = cut_row(table, line);
        let is_row = cells
            .as_ref()
            .and_then(|c| table.cell(c, "TYPE"))
            .is_some_and(is_event_type);
        match cells.filter(|_| is_row) {
            Some(cells) => {
                pending.push(row_event(part, k, table, &cells, namespace, object));
            }
            _ => {
                let row_like = split_gaps(line.trim())
                    .iter()
                    .take(3)
                    .any(|c| is_event_type(c));
                if !pending.is_empty() && !row_like && is_prose_after(part.lines[k - 1], line) {
                    sink.unrecognised(part, k);
                    continue;
                }
                match pending.last_mut() {
                    Some((event, _)) if !row_like => {
                        let more = line.trim();
                        // A terminal's hard wrap cuts anywhere, even inside a word; a cut
                        // at a space leaves the space at the end of the line above.
                        let prev = part.lines[k - 1];
                        if !segment::hard_wrapped(prev, line) || prev.ends_with([' ', '\t']) {
                            event.message.push(' ');
                            event.evidence.text.push(' ');
                        }
                        event.message.push_str(more);
                        event.evidence.text.push_str(more);
                    }
                    _ => match headerless_row(part, k, line.trim()) {
                        Some((mut event, time)) => {
                            if event.object.is_none() {
                                event.object = object.cloned();
                            }
                            pending.push((event, time));
                        }
                        None => {
                            sink.error(
                                part,
                                k,
                                "an events table row that does not match its header; kept as text",
                            );
                            sink.unrecognised(part, k);
                        }
                    },
                }
            }
        }
    }
    for (event, time) in pending {
        push_event(sink, event, time);
    }
}

/// A sentence typed under the table (`any idea why?`), not the wrapped tail of the message
/// above: that message ended a sentence, and the line reads as prose, one of its own rather
/// than the scheduler's second sentence (`preemption: ...`, which follows a period).
fn is_prose_after(prev: &str, line: &str) -> bool {
    let line = line.trim();
    prev.trim_end().ends_with(['.', '?', '!'])
        && line.contains(' ')
        && !line.contains("  ")
        && !line.starts_with("preemption:")
}

/// A Markdown code fence line: three backticks or tildes, maybe followed by a language.
fn is_fence(line: &str) -> bool {
    let t = line.trim();
    t.starts_with("```") || t.starts_with("~~~")
}

fn is_event_type(t: &str) -> bool {
    t.eq_ignore_ascii_case("Normal") || t.eq_ignore_ascii_case("Warning")
}

/// The cells of an events row. `kubectl get events -o wide` prints columns after MESSAGE
/// (`LAST SEEN TYPE REASON OBJECT SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME`): a row
/// that lost its alignment (pasted through a chat, tabs turned to spaces) is cut on its gaps
/// from both ends, so SOURCE, FIRST SEEN, COUNT and NAME never end up in the message.
fn cut_row(table: &Table, line: &str) -> Option<Vec<String>> {
    let Some(m) = table
        .index("MESSAGE")
        .filter(|&m| m + 1 < table.columns.len())
    else {
        return table.cut(line);
    };
    let aligned = if line.contains('\t') {
        table.cut(line)
    } else {
        table.cut_at_positions(line)
    };
    let aligned = aligned.filter(|cells| {
        table.cell(cells, "TYPE").is_some_and(is_event_type)
            && table.cell(cells, "MESSAGE").is_some()
            && table
                .cell(cells, "COUNT")
                .is_none_or(|c| c.chars().all(|ch| ch.is_ascii_digit()))
    });
    aligned.or_else(|| cut_wide_on_gaps(table, m, line))
}

/// A `-o wide` row cut on runs of spaces: the columns before MESSAGE from the left (an empty
/// SUBOBJECT leaves no gap of its own), the columns after it from the right.
fn cut_wide_on_gaps(table: &Table, m: usize, line: &str) -> Option<Vec<String>> {
    let parts = split_gaps(line.trim());
    let mut cells = vec![String::new(); table.columns.len()];
    let mut end = parts.len();
    for k in (m + 1..table.columns.len()).rev() {
        let part = *parts.get(end.checked_sub(1)?)?;
        let fits = match table.columns[k].name.as_str() {
            "COUNT" => part.chars().all(|c| c.is_ascii_digit()),
            "FIRST SEEN" | "LAST SEEN" => looks_like_age(part),
            _ => true,
        };
        if !fits {
            return None;
        }
        cells[k] = part.to_string();
        end -= 1;
    }
    let mut next = 0;
    for (k, cell) in cells.iter_mut().enumerate().take(m) {
        let part = *parts.get(next).filter(|_| next < end)?;
        if table.columns[k].name == "SUBOBJECT" && !is_field_path(part) {
            continue;
        }
        *cell = part.to_string();
        next += 1;
    }
    (next < end).then(|| {
        cells[m] = parts[next..end].join("  ");
        cells
    })
}

/// An involved object's field path (`spec.containers{app}`), the SUBOBJECT column.
fn is_field_path(s: &str) -> bool {
    s.starts_with("spec.") || s.contains('{')
}

fn row_event(
    part: &Part<'_>,
    k: usize,
    table: &Table,
    cells: &[String],
    namespace: Option<&str>,
    object: Option<&ObjectRef>,
) -> (Event, Option<String>) {
    let cell = |name: &str| table.cell(cells, name).map(str::to_string);
    let age = cell("AGE").or_else(|| cell("LAST SEEN"));
    let namespace = cell("NAMESPACE").or_else(|| namespace.map(str::to_string));
    let row_object = cell("OBJECT")
        .and_then(|o| object_ref(&o, namespace.as_deref()))
        .or_else(|| {
            let kind = cell("KIND")?;
            let name = cell("NAME")?;
            tables::kind_and_name(&kind, &name, namespace.as_deref())
        });
    let count = cell("COUNT")
        .and_then(|c| c.parse().ok())
        .or_else(|| age.as_deref().and_then(repeat_count))
        .unwrap_or(1);
    let source = cell("FROM").or_else(|| cell("SOURCE")).unwrap_or_default();
    let mut evidence = part.evidence(k);
    seen_ago(&mut evidence, age.as_deref(), cell("FIRST SEEN").as_deref());
    let event = Event {
        from_describe: false,
        event_type: cell("TYPE").unwrap_or_default(),
        reason: cell("REASON").unwrap_or_default(),
        source: component(&source),
        object: row_object.or_else(|| object.cloned()),
        message: cell("MESSAGE").unwrap_or_default(),
        count,
        age: age.clone(),
        evidence,
    };
    (event, age)
}

/// An event's ages as its evidence shows them: LAST SEEN `31s` is `31s ago`; `2m (x3 over
/// 10m)` was last seen 2m ago and first 10m ago; a FIRST SEEN column (`-o wide`) gives the
/// first. Ages are not times of day: they are never shown bare. `<unknown>` leaves both unset.
fn seen_ago(evidence: &mut Evidence, last_seen: Option<&str>, first_seen: Option<&str>) {
    let Some(last) = last_seen else {
        return;
    };
    let (last, over) = match last.split_once("(x") {
        Some((l, rest)) => (
            l.trim(),
            rest.split_once(" over ")
                .map(|(_, o)| o.trim_end_matches(')').trim()),
        ),
        None => (last.trim(), None),
    };
    let ago = |a: &str| age_seconds(a).map(|_| format!("{a} ago"));
    let Some(last) = ago(last) else {
        return;
    };
    evidence.first_seen = first_seen
        .or(over)
        .and_then(ago)
        .or_else(|| Some(last.clone()));
    evidence.last_seen = Some(last);
}

/// `kubelet, ip-10-0-1-2` (older describe output) names the component and its host.
fn component(source: &str) -> String {
    source
        .split(',')
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// `3` from `2m (x3 over 10m)`.
fn repeat_count(age: &str) -> Option<usize> {
    let start = age.find("(x")? + 2;
    let digits: String = age[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// A one-line event outside any table: `time=... type=Warning reason=X from=kubelet
/// message=...`, or an events row pasted without its header (`Warning  FailedMount
/// pod/x  message`, `Warning  FailedMount  3m  kubelet  message`).
pub fn ingest_line(part: &Part<'_>, i: usize, sink: &mut Sink) -> Option<usize> {
    let line = part.lines[i].trim();
    let event = logfmt_event(part, i, line).or_else(|| headerless_row(part, i, line))?;
    let time = event.1;
    push_event(sink, event.0, time);
    Some(i + 1)
}

fn logfmt_event(part: &Part<'_>, i: usize, line: &str) -> Option<(Event, Option<String>)> {
    let (head, message) = line.split_once(" message=")?;
    let mut fields = std::collections::BTreeMap::new();
    for token in head.split_whitespace() {
        let (k, v) = token.split_once('=')?;
        fields.insert(k, v.trim_matches('"'));
    }
    let event_type = *fields.get("type")?;
    let reason = *fields.get("reason")?;
    if !is_event_type(event_type) {
        return None;
    }
    let time = fields.get("time").map(|t| t.to_string());
    let object = fields
        .get("object")
        .and_then(|o| object_ref(o, fields.get("namespace").copied()));
    Some((
        Event {
            from_describe: false,
            event_type: event_type.to_string(),
            reason: reason.to_string(),
            source: fields
                .get("from")
                .map(|f| f.to_string())
                .unwrap_or_default(),
            object,
            message: message.trim_matches('"').to_string(),
            count: 1,
            age: time.clone(),
            evidence: part.evidence(i),
        },
        time,
    ))
}

fn headerless_row(part: &Part<'_>, i: usize, line: &str) -> Option<(Event, Option<String>)> {
    let cells = split_gaps(line);
    let t = cells.iter().take(3).position(|c| is_event_type(c))?;
    let reason = *cells.get(t + 1)?;
    let reason_ok = reason
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase())
        && reason.chars().all(|c| c.is_ascii_alphanumeric());
    if !reason_ok {
        return None;
    }
    let before: Vec<&str> = cells[..t].to_vec();
    let rest = &cells[t + 2..];
    let mut first_seen = None;
    let mut wide_count = None;
    let (object, age, source, message) = match rest {
        [obj, message @ ..] if obj.contains('/') && !message.is_empty() => {
            let namespace = before.first().filter(|_| before.len() == 2).copied();
            let mut message = message;
            let mut source = String::new();
            // A `-o wide` row: [SUBOBJECT] SOURCE MESSAGE FIRST-SEEN COUNT NAME, the NAME
            // being the object's name and a suffix.
            let object_name = obj.rsplit('/').next().unwrap_or_default();
            if let [middle @ .., first, count, name] = message {
                let wide = middle.len() >= 2
                    && looks_like_age(first)
                    && count.chars().all(|c| c.is_ascii_digit())
                    && name.starts_with(&format!("{object_name}."));
                if wide {
                    first_seen = Some(first.to_string());
                    wide_count = count.parse().ok();
                    let middle = match middle {
                        [sub, more @ ..] if is_field_path(sub) && more.len() >= 2 => more,
                        _ => middle,
                    };
                    source = component(middle[0]);
                    message = &middle[1..];
                }
            }
            (
                object_ref(obj, namespace),
                before.last().map(|a| a.to_string()),
                source,
                message.join("  "),
            )
        }
        [age, from, message @ ..] if looks_like_age(age) && !message.is_empty() => (
            None,
            Some(age.to_string()),
            component(from),
            message.join("  "),
        ),
        _ => return None,
    };
    let mut evidence = part.evidence(i);
    seen_ago(&mut evidence, age.as_deref(), first_seen.as_deref());
    Some((
        Event {
            from_describe: false,
            event_type: cells[t].to_string(),
            reason: reason.to_string(),
            source,
            object,
            message,
            count: wide_count
                .or_else(|| age.as_deref().and_then(repeat_count))
                .unwrap_or(1),
            age: age.clone(),
            evidence,
        },
        age,
    ))
}

fn looks_like_age(s: &str) -> bool {
    s == "<unknown>"
        || s.chars().next().is_some_and(|c| c.is_ascii_digit())
            && s.split_whitespace()
                .next()
                .is_some_and(|a| a.chars().all(|c| c.is_ascii_alphanumeric()))
}

/// Events as JSON from an event exporter (`involvedObject`, `reason`, `message` or
/// `eventMessage`; one object or an array). True when `value` was such events.
pub fn ingest_json(part: &Part<'_>, i: usize, end: usize, value: &Value, sink: &mut Sink) -> bool {
    // eventrouter wraps each event: `{"verb":"ADDED","event":{...}}` (and the `old_event`
    // an update replaced, which says nothing new).
    fn unwrapped(v: &Value) -> &Value {
        match (v.get("verb"), v.get("event")) {
            (Some(Value::String(_)), Some(event)) if event.is_object() => event,
            _ => v,
        }
    }
    let items: Vec<&Value> = match value {
        Value::Array(items) => items.iter().map(unwrapped).collect(),
        other => vec![unwrapped(other)],
    };
    let is_event = |v: &Value| {
        v.get("involvedObject").is_some_and(Value::is_object)
            && v.get("reason").is_some()
            && (v.get("message").is_some()
                || v.get("eventMessage").is_some()
                || v.get("note").is_some())
    };
    if items.is_empty() || !items.iter().all(|v| is_event(v)) {
        return false;
    }
    let starts = segment::json_item_lines(&part.lines, i, end, value.is_array());
    for (n, item) in items.iter().enumerate() {
        let line = starts.get(n).copied().unwrap_or(i);
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
        let involved = &item["involvedObject"];
        let namespace = text(involved.get("namespace"))
            .or_else(|| text(item.get("eventNamespace")))
            .or_else(|| text(item.pointer("/metadata/namespace")));
        let object = match (text(involved.get("kind")), text(involved.get("name"))) {
            (Some(kind), Some(name)) => {
                let ns = namespace
                    .as_deref()
                    .filter(|_| segment::is_namespaced(&kind));
                Some(ObjectRef::new(&kind, ns, &name))
            }
            _ => None,
        };
        let at = |path: &[&str]| path.iter().try_fold(*item, |v, key| v.get(key));
        let (time, first_seen) = event_times(|path| text(at(path)));
        let count = event_count(|path| at(path).and_then(Value::as_i64));
        let source = text(item.pointer("/source/component"))
            .or_else(|| text(item.get("reportingComponent")))
            .or_else(|| text(item.get("reportingController")))
            .unwrap_or_default();
        let event = Event {
            from_describe: false,
            event_type: text(item.get("type")).unwrap_or_default(),
            reason: text(item.get("reason")).unwrap_or_default(),
            source,
            object,
            message: text(item.get("message"))
                .or_else(|| text(item.get("eventMessage")))
                .or_else(|| text(item.get("note")))
                .unwrap_or_default(),
            count,
            age: time.clone(),
            evidence: Evidence {
                first_seen,
                last_seen: time.clone(),
                ..part.evidence(line)
            },
        };
        push_event(sink, event, time);
    }
    true
}

#[cfg(test)]
mod tests {
    use crate::document::Document;
    use crate::ingest::ingest;

    #[test]
    fn a_table_in_a_chat_code_block_keeps_its_messages_clean() {
        for (open, close) in [("```", "```"), ("```console", "```"), ("~~~", "~~~")] {
            let text = format!(
                "the events:\n\n{open}\nLAST SEEN   TYPE     REASON              OBJECT             MESSAGE\n2m          Normal   DisruptionBlocked   nodepool/general   No allowed disruptions due to blocking budget\n{close}\nany idea?\n"
            );
            let facts = ingest(&[Document::new("paste", &text)]);
            assert_eq!(facts.events.len(), 1, "{open}");
            let event = &facts.events[0];
            assert_eq!(
                event.message, "No allowed disruptions due to blocking budget",
                "{open}"
            );
            assert!(!event.evidence.text.contains(close), "{open}");
            assert_eq!(event.evidence.line, 5);
        }
        // A describe's `Events:` fenced the same way.
        let describe = "```\nEvents:\n  Type     Reason            Age   From               Message\n  ----     ------            ----  ----               -------\n  Warning  FailedScheduling  2m    default-scheduler  0/3 nodes are available: 3 Insufficient cpu.\n```\n";
        let facts = ingest(&[Document::new("paste", describe)]);
        assert_eq!(facts.events.len(), 1);
        assert_eq!(
            facts.events[0].message,
            "0/3 nodes are available: 3 Insufficient cpu."
        );
    }
}
