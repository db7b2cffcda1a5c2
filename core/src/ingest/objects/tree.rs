//! One tree for every object notation (YAML, JSON, the generic `kubectl describe` printout),
//! each node remembering where it was written so facts keep their evidence.

use std::collections::BTreeMap;

/// Deeper nesting is refused by every reader: no Kubernetes object comes near it, and the
/// bound keeps recursion over trees safe on small (wasm) stacks.
pub const MAX_DEPTH: usize = 128;

#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// The number as written (`110`, `1.5`, `1e3`), so nothing is lost to float rounding.
    Number(String),
    Str(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub value: Value,
    /// 0-based line in the segment where the node starts; for a mapping value, the line of its
    /// key (the line a user recognises: `message: ...`).
    pub line: usize,
    /// The last line of a scalar written over several lines (a long YAML string folded by
    /// kubectl, a block scalar, a multi-line describe value); `line` otherwise.
    pub last_line: usize,
    /// Byte range in the segment text, known for JSON only; for a mapping value it starts at
    /// the key. Lets a one-line JSON object quote just the part that matters.
    pub span: Option<(usize, usize)>,
}

impl Node {
    pub fn new(value: Value, line: usize) -> Self {
        Node {
            value,
            line,
            last_line: line,
            span: None,
        }
    }

    /// A plain scalar (YAML, or a describe value): null and numbers resolve, everything else,
    /// booleans included, stays text as written (`True` stays `True`; `boolean()` reads it).
    pub fn plain(text: &str, line: usize) -> Self {
        Node::new(resolve_plain(text), line)
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Value::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    /// A scalar's text (numbers and booleans as written); `None` for null and collections.
    pub fn text(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) | Value::Number(s) => Some(s),
            Value::Bool(true) => Some("true"),
            Value::Bool(false) => Some("false"),
            _ => None,
        }
    }

    /// A scalar's text when it is not empty.
    pub fn string(&self) -> Option<String> {
        self.text()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    }

    pub fn int(&self) -> Option<i64> {
        let text = self.text()?.trim();
        text.parse::<i64>().ok().or_else(|| {
            // `3.0` from a float-minded serializer.
            let f = super::number::parse_f64(text)?;
            (f.fract() == 0.0 && f.abs() < 9.0e15).then_some(f as i64)
        })
    }

    pub fn boolean(&self) -> Option<bool> {
        match &self.value {
            Value::Bool(b) => Some(*b),
            Value::Str(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Value::Str(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// The elements of a list. A single map or scalar counts as a one-element list: kubectl's
    /// describe printout cannot tell a one-element list of maps from a map, and being lenient
    /// about a wrong YAML type loses nothing.
    pub fn items(&self) -> &[Node] {
        match &self.value {
            Value::Seq(items) => items,
            Value::Null => &[],
            _ => std::slice::from_ref(self),
        }
    }

    pub fn entries(&self) -> &[(String, Node)] {
        match &self.value {
            Value::Map(entries) => entries,
            _ => &[],
        }
    }

    /// A map of scalars (labels, requests, nodeSelector...); null values read as empty.
    pub fn string_map(&self) -> BTreeMap<String, String> {
        // Inserts rather than `collect()`: the same map (a repeated key keeps its last value),
        // without a copy of the stable sort for this iterator in the wasm module.
        let mut map = BTreeMap::new();
        for (k, v) in self.entries() {
            let text = match &v.value {
                Value::Null => "",
                _ => match v.text() {
                    Some(t) => t,
                    None => continue,
                },
            };
            map.insert(k.clone(), text.to_string());
        }
        map
    }

    /// A list of scalars (requirement values, finalizers...).
    pub fn string_list(&self) -> Vec<String> {
        self.items()
            .iter()
            .filter_map(|n| n.text().map(str::to_string))
            .collect()
    }

    /// The node as JSON, for the fact fields kept "as written" (selector terms, budgets,
    /// kubelet settings).
    pub fn to_json(&self) -> serde_json::Value {
        match &self.value {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => n
                .parse::<i64>()
                .map(serde_json::Value::from)
                .ok()
                .or_else(|| {
                    super::number::parse_f64(n)
                        .and_then(serde_json::Number::from_f64)
                        .map(serde_json::Value::Number)
                })
                .unwrap_or_else(|| serde_json::Value::String(n.clone())),
            Value::Str(s) => serde_json::Value::String(s.clone()),
            Value::Seq(items) => items.iter().map(Node::to_json).collect(),
            Value::Map(entries) => {
                // Inserts, as in `string_map`.
                let mut map = serde_json::Map::new();
                for (k, v) in entries {
                    map.insert(k.clone(), v.to_json());
                }
                serde_json::Value::Object(map)
            }
        }
    }
}

/// YAML 1.2 core schema resolution of a plain scalar, except that booleans keep their text:
/// a condition's `Status: True` must read back as `True`, not `true`.
pub fn resolve_plain(text: &str) -> Value {
    let t = text.trim();
    match t {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        _ if is_number(t) => Value::Number(t.to_string()),
        _ => Value::Str(text.to_string()),
    }
}

fn is_number(t: &str) -> bool {
    let digits = t.strip_prefix(['-', '+']).unwrap_or(t);
    if digits.is_empty() {
        return false;
    }
    if let Some(hex) = digits.strip_prefix("0x") {
        return !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    let (mantissa, exponent) = match digits.find(['e', 'E']) {
        Some(i) => (&digits[..i], Some(&digits[i + 1..])),
        None => (digits, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = all_digits(int)
        && frac.is_none_or(all_digits)
        && !(int.is_empty() && frac.is_none_or(str::is_empty));
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && all_digits(e)
    });
    mantissa_ok && exponent_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_scalars_resolve_like_yaml_core_schema() {
        assert_eq!(resolve_plain("~"), Value::Null);
        assert_eq!(resolve_plain("True"), Value::Str("True".into()));
        assert_eq!(resolve_plain("110"), Value::Number("110".into()));
        assert_eq!(resolve_plain("-1.5e3"), Value::Number("-1.5e3".into()));
        assert_eq!(resolve_plain("0x1F"), Value::Number("0x1F".into()));
        for text in ["1930m", "10%", "1.0.8", "e3", ".", "-", "1e", "v1"] {
            assert_eq!(resolve_plain(text), Value::Str(text.into()), "{text}");
        }
    }

    #[test]
    fn accessors_are_lenient_about_types() {
        let map = Node::new(
            Value::Map(vec![
                ("maxPods".into(), Node::plain("110", 1)),
                ("flag".into(), Node::new(Value::Str("True".into()), 2)),
                ("f".into(), Node::plain("3.0", 3)),
            ]),
            0,
        );
        assert_eq!(map.get("maxPods").and_then(Node::int), Some(110));
        assert_eq!(map.get("flag").and_then(Node::boolean), Some(true));
        assert_eq!(map.get("f").and_then(Node::int), Some(3));
        assert_eq!(map.items().len(), 1, "a map is a one-element list");
        assert_eq!(
            map.to_json(),
            serde_json::json!({"maxPods": 110, "flag": "True", "f": 3.0})
        );
        assert!(Node::plain("", 0).items().is_empty());
    }
}
