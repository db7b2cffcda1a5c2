//! Karpenter controller log lines: v1 JSON lines, the older console format, and the prefixes
//! `kubectl logs --prefix` and stern add.

use crate::document::Evidence;
use crate::facts::LogRecord;

/// Parses one log line into a record, or `None` when the line is not a Karpenter log line.
pub fn parse_log_line(line: &str, evidence: Evidence) -> Option<LogRecord> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let mut map = match value {
        serde_json::Value::Object(map) => map,
        _ => return None,
    };
    let message = map.remove("message").or_else(|| map.remove("msg"))?;
    let level = map
        .remove("level")
        .and_then(|v| v.as_str().map(str::to_ascii_uppercase));
    let text = |v: Option<serde_json::Value>| v.and_then(|v| v.as_str().map(str::to_string));
    Some(LogRecord {
        level: level.unwrap_or_default(),
        time: text(map.remove("time").or_else(|| map.remove("ts"))),
        logger: text(map.remove("logger")),
        controller: text(map.remove("controller")),
        message: message
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| message.to_string()),
        error: text(map.remove("error")),
        error_causes: Vec::new(),
        fields: map.into_iter().collect(),
        evidence,
    })
}
