//! Label and field selectors as the API server parses them.

use serde_json::Value;

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed `labelSelector`: `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<LabelRequirement>);

impl LabelSelector {
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        let mut requirements = Vec::new();
        for term in split_top_level(text) {
            let term = term.trim();
            if term.is_empty() {
                continue;
            }
            requirements.push(parse_requirement(term)?);
        }
        Ok(LabelSelector(requirements))
    }

    pub fn matches(&self, labels: Option<&Value>) -> bool {
        let get = |key: &str| labels.and_then(|l| l.get(key)).and_then(|v| v.as_str());
        self.0.iter().all(|requirement| match requirement {
            LabelRequirement::Equals(k, v) => get(k) == Some(v.as_str()),
            LabelRequirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            LabelRequirement::In(k, values) => {
                get(k).is_some_and(|have| values.iter().any(|v| v == have))
            }
            LabelRequirement::NotIn(k, values) => {
                !get(k).is_some_and(|have| values.iter().any(|v| v == have))
            }
            LabelRequirement::Exists(k) => get(k).is_some(),
            LabelRequirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn parse_requirement(term: &str) -> Result<LabelRequirement, String> {
    if let Some(key) = term.strip_prefix('!') {
        return Ok(LabelRequirement::DoesNotExist(valid_key(key.trim())?));
    }
    if let Some((key, value)) = term.split_once("!=") {
        return Ok(LabelRequirement::NotEquals(
            valid_key(key.trim())?,
            value.trim().to_string(),
        ));
    }
    if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok(LabelRequirement::Equals(
            valid_key(key.trim())?,
            value.trim().to_string(),
        ));
    }
    for (operator, notin) in [(" notin ", true), (" in ", false)] {
        if let Some((key, values)) = term.split_once(operator) {
            let values = values.trim();
            let inner = values
                .strip_prefix('(')
                .and_then(|v| v.strip_suffix(')'))
                .ok_or_else(|| {
                    format!("unable to parse requirement: found '{values}', expected: '('")
                })?;
            let values = inner.split(',').map(|v| v.trim().to_string()).collect();
            let key = valid_key(key.trim())?;
            return Ok(if notin {
                LabelRequirement::NotIn(key, values)
            } else {
                LabelRequirement::In(key, values)
            });
        }
    }
    Ok(LabelRequirement::Exists(valid_key(term)?))
}

fn valid_key(key: &str) -> Result<String, String> {
    if key.is_empty() || key.contains(char::is_whitespace) {
        return Err(format!(
            "unable to parse requirement: invalid label key \"{key}\""
        ));
    }
    Ok(key.to_string())
}

/// A parsed `fieldSelector`: `a=b,c!=d` over the fields the resource supports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses and checks each field against what the resource (by kind) supports, with the
    /// API server's error text for an unsupported one.
    pub fn parse(text: &str, kind: &str) -> Result<FieldSelector, String> {
        let mut terms = Vec::new();
        for term in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let (field, equal, value) = if let Some((f, v)) = term.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
                (f, true, v)
            } else {
                return Err(format!(
                    "invalid selector: '{text}'; can't understand '{term}'"
                ));
            };
            let field = field.trim();
            if !supported_fields(kind).contains(&field) {
                return Err(format!("field label not supported: {field}"));
            }
            terms.push((field.to_string(), equal, value.trim().to_string()));
        }
        Ok(FieldSelector(terms))
    }

    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(field, equal, value)| {
            let pointer = format!("/{}", field.replace('.', "/"));
            let have = object.pointer(&pointer).map(|v| match v {
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                _ => String::new(),
            });
            let have = have.unwrap_or_default();
            (have == *value) == *equal
        })
    }
}

/// The field selectors the API server accepts per kind (`metadata.name` and
/// `metadata.namespace` everywhere).
fn supported_fields(kind: &str) -> Vec<&'static str> {
    let mut fields = vec!["metadata.name", "metadata.namespace"];
    match kind {
        "Pod" => fields.extend([
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.nominatedNodeName",
        ]),
        "Event" => fields.extend([
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ]),
        "Node" => fields.push("spec.unschedulable"),
        _ => {}
    }
    fields
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors_cover_every_operator() {
        let labels = json!({"app": "web", "tier": "front"});
        let yes = |s: &str| LabelSelector::parse(s).unwrap().matches(Some(&labels));
        assert!(yes("app=web"));
        assert!(yes("app==web,tier"));
        assert!(yes("app in (api,web),!missing"));
        assert!(yes("tier notin (back)"));
        assert!(yes("app!=api"));
        assert!(!yes("app=api"));
        assert!(!yes("missing"));
        assert!(!yes("app notin (web)"));
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("").unwrap().matches(None));
    }

    #[test]
    fn field_selectors_are_checked_per_kind() {
        let event = json!({"involvedObject": {"kind": "Pod", "name": "web-0"}, "type": "Warning"});
        let selector = FieldSelector::parse(
            "involvedObject.kind=Pod,involvedObject.name=web-0,type!=Normal",
            "Event",
        )
        .unwrap();
        assert!(selector.matches(&event));
        assert!(!FieldSelector::parse("involvedObject.name=web-1", "Event")
            .unwrap()
            .matches(&event));
        assert_eq!(
            FieldSelector::parse("status.phase=Pending", "Deployment").unwrap_err(),
            "field label not supported: status.phase"
        );
    }
}
