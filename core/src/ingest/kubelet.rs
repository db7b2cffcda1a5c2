//! Node agent logs: journal lines (`Jan 02 15:04:05 ip-10-0-1-2 kubelet[1234]: ...`, also
//! `journalctl -o short-iso`) and klog lines (`E0102 15:04:05.123456 1234 file.go:42] "msg"
//! key="value"`), with or without the journal prefix.

use crate::facts::{Collected, Message, MessageOrigin, ObjectRef};

use super::logs::timestamp_len;
use super::{Part, Sink};

/// One node-agent line, decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeletLine {
    pub time: Option<String>,
    /// The journal's unit (`kubelet`, `containerd`, `nodeadm`...), when the line has one.
    pub unit: Option<String>,
    /// klog severity letter: `I`, `W`, `E`, `F`.
    pub severity: Option<char>,
    /// The message with klog's quoting removed, then its `key="value"` pairs decoded.
    pub text: String,
    /// The `node="..."` pair.
    pub node: Option<String>,
}

pub fn ingest(part: &Part<'_>, i: usize, sink: &mut Sink) -> Option<usize> {
    let parsed = parse(part.lines[i])?;
    if parsed.unit.as_deref().is_none_or(|u| u == "kubelet") {
        sink.collected(Collected::KubeletLogs);
    }
    sink.message(Message {
        origin: MessageOrigin::Kubelet,
        text: parsed.text,
        evidence: part.evidence(i),
        object: parsed
            .node
            .as_deref()
            .map(|n| ObjectRef::new("Node", None, n)),
        component: parsed.unit.or_else(|| Some("kubelet".to_string())),
        time: parsed.time,
        ..Message::default()
    });
    Some(i + 1)
}

pub fn parse(line: &str) -> Option<KubeletLine> {
    let line = line.trim();
    if let Some((time, unit, payload)) = journal_prefix(line) {
        let mut parsed = klog(payload).unwrap_or_else(|| KubeletLine {
            time: None,
            unit: None,
            severity: None,
            text: payload.trim().to_string(),
            node: None,
        });
        parsed.time = Some(time.to_string());
        parsed.unit = Some(unit.to_string());
        return Some(parsed);
    }
    klog(line)
}

/// `(time, unit, payload)` of a journal line.
fn journal_prefix(line: &str) -> Option<(&str, &str, &str)> {
    let time_len = syslog_time_len(line).or_else(|| timestamp_len(line))?;
    let rest = line.get(time_len..)?.strip_prefix(' ')?;
    let (host, rest) = rest.split_once(' ')?;
    if host.is_empty() {
        return None;
    }
    let (unit_pid, payload) = rest.split_once(": ")?;
    let unit = unit_pid.split('[').next().unwrap_or(unit_pid);
    let unit_ok = !unit.is_empty()
        && unit
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.@".contains(c))
        && (unit_pid == unit || unit_pid.ends_with(']'));
    unit_ok.then_some((&line[..time_len], unit, payload))
}

/// `Jan 02 15:04:05` / `Jan  2 15:04:05`.
fn syslog_time_len(line: &str) -> Option<usize> {
    const MONTHS: &[&str] = &[
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let b = line.as_bytes();
    if b.len() < 15 || !MONTHS.iter().any(|m| line.starts_with(m)) || b[3] != b' ' {
        return None;
    }
    let day_ok = (b[4] == b' ' || b[4].is_ascii_digit()) && b[5].is_ascii_digit();
    let time = &b[7..15];
    let time_ok = b[6] == b' '
        && time[2] == b':'
        && time[5] == b':'
        && [0, 1, 3, 4, 6, 7].iter().all(|&k| time[k].is_ascii_digit());
    (day_ok && time_ok).then_some(15)
}

/// `E0102 15:04:05.123456    1234 file.go:42] payload`.
fn klog(line: &str) -> Option<KubeletLine> {
    let b = line.as_bytes();
    let severity = *b.first()? as char;
    if !"IWEF".contains(severity) || b.len() < 22 || !b[1..5].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let (header, payload) = line.split_once("] ")?;
    let mut fields = header[5..].split_whitespace();
    let time = fields.next()?;
    let _pid = fields.next()?.parse::<u64>().ok()?;
    let location = fields.next()?;
    if !location.contains(':') || fields.next().is_some() || !time.contains(':') {
        return None;
    }
    let (text, node) = structured(payload);
    Some(KubeletLine {
        time: Some(format!("{} {time}", &header[1..5])),
        unit: None,
        severity: Some(severity),
        text,
        node,
    })
}

/// A structured klog payload (`"msg" key="value" key2=value2`) with its quoting resolved, and
/// the `node` pair; other payloads are returned as they are.
fn structured(payload: &str) -> (String, Option<String>) {
    let payload = payload.trim();
    let Some((message, rest)) = quoted(payload) else {
        return (payload.to_string(), None);
    };
    let mut text = message;
    let mut node = None;
    let mut rest = rest.trim_start();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            text.push(' ');
            text.push_str(rest);
            break;
        };
        let (value, quoted_value, after) = match quoted(after) {
            Some((v, a)) => (v, true, a),
            None => {
                let end = after.find(' ').unwrap_or(after.len());
                (after[..end].to_string(), false, &after[end..])
            }
        };
        if key == "node" {
            node = Some(value.clone());
        }
        text.push(' ');
        text.push_str(key);
        text.push('=');
        if quoted_value {
            text.push('"');
            text.push_str(&value);
            text.push('"');
        } else {
            text.push_str(&value);
        }
        rest = after.trim_start();
    }
    (text, node)
}

/// A Go-quoted string at the start of `s`: `(decoded, rest)`.
fn quoted(s: &str) -> Option<(String, &str)> {
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((k, c)) = chars.next() {
        match c {
            '"' => return Some((out, &body[k + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_with_structured_klog() {
        let l = parse(r#"Dec 10 12:37:43 ip-10-20-30-40.ec2.internal kubelet[2239]: E1210 12:37:43.000051    2239 kubelet_node_status.go:96] "Unable to register node with API server" err="nodes \"ip-10-20-30-40.ec2.internal\" is forbidden: node \"i-0ed67a34f87240f5c\" is not allowed to modify node \"ip-10-20-30-40.ec2.internal\"" node="ip-10-20-30-40.ec2.internal""#).unwrap();
        assert_eq!(l.unit.as_deref(), Some("kubelet"));
        assert_eq!(l.time.as_deref(), Some("Dec 10 12:37:43"));
        assert_eq!(l.severity, Some('E'));
        assert_eq!(l.node.as_deref(), Some("ip-10-20-30-40.ec2.internal"));
        assert_eq!(
            l.text,
            r#"Unable to register node with API server err="nodes "ip-10-20-30-40.ec2.internal" is forbidden: node "i-0ed67a34f87240f5c" is not allowed to modify node "ip-10-20-30-40.ec2.internal"" node="ip-10-20-30-40.ec2.internal""#
        );
    }

    #[test]
    fn klog_unstructured_and_bare() {
        let l = parse("W0127 21:24:02.311489    3130 reflector.go:569] k8s.io/client-go/informers/factory.go:160: failed to list *v1.CSIDriver: Unauthorized").unwrap();
        assert_eq!(
            l.text,
            "k8s.io/client-go/informers/factory.go:160: failed to list *v1.CSIDriver: Unauthorized"
        );
        assert_eq!(l.unit, None);
        let l = parse("2024-01-02T15:04:05+0000 ip-1 nodeadm[77]: configuring kubelet").unwrap();
        assert_eq!(l.unit.as_deref(), Some("nodeadm"));
        assert_eq!(l.text, "configuring kubelet");
        assert!(parse("Unable to register node with API server\" err=\"Unauthorized\"").is_none());
        assert!(parse("Error from server (BadRequest): x").is_none());
    }
}
