//! The API calls collection makes, described once: the URL path and query, the document label
//! (`GET /api/v1/namespaces/shop/pods/web-0`), the kubectl command a user would run instead, and
//! the RBAC rule that allows it (for 403s and `docs/rbac.yaml`).

use std::time::Duration;

/// A resource type collection reads. Only what DESIGN.md's "Live collection" lists: never
/// Secrets.
#[derive(Debug, PartialEq, Eq)]
pub struct Resource {
    /// API group, `""` for the core group.
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
}

macro_rules! resource {
    ($name:ident, $group:literal, $version:literal, $plural:literal, $kind:literal, $namespaced:literal) => {
        pub const $name: Resource = Resource {
            group: $group,
            version: $version,
            plural: $plural,
            kind: $kind,
            namespaced: $namespaced,
        };
    };
}

resource!(PODS, "", "v1", "pods", "Pod", true);
resource!(EVENTS, "", "v1", "events", "Event", true);
resource!(NODES, "", "v1", "nodes", "Node", false);
resource!(
    PVCS,
    "",
    "v1",
    "persistentvolumeclaims",
    "PersistentVolumeClaim",
    true
);
resource!(
    PVS,
    "",
    "v1",
    "persistentvolumes",
    "PersistentVolume",
    false
);
resource!(DEPLOYMENTS, "apps", "v1", "deployments", "Deployment", true);
resource!(REPLICASETS, "apps", "v1", "replicasets", "ReplicaSet", true);
resource!(
    STATEFULSETS,
    "apps",
    "v1",
    "statefulsets",
    "StatefulSet",
    true
);
resource!(DAEMONSETS, "apps", "v1", "daemonsets", "DaemonSet", true);
resource!(JOBS, "batch", "v1", "jobs", "Job", true);
resource!(
    PDBS,
    "policy",
    "v1",
    "poddisruptionbudgets",
    "PodDisruptionBudget",
    true
);
resource!(
    STORAGECLASSES,
    "storage.k8s.io",
    "v1",
    "storageclasses",
    "StorageClass",
    false
);
resource!(
    NODECLAIMS,
    "karpenter.sh",
    "v1",
    "nodeclaims",
    "NodeClaim",
    false
);
resource!(
    NODEPOOLS,
    "karpenter.sh",
    "v1",
    "nodepools",
    "NodePool",
    false
);
resource!(
    EC2NODECLASSES,
    "karpenter.k8s.aws",
    "v1",
    "ec2nodeclasses",
    "EC2NodeClass",
    false
);

/// Every resource collection reads, for `docs/rbac.yaml` and its test.
pub const ALL_RESOURCES: &[&Resource] = &[
    &PODS,
    &EVENTS,
    &NODES,
    &PVCS,
    &PVS,
    &DEPLOYMENTS,
    &REPLICASETS,
    &STATEFULSETS,
    &DAEMONSETS,
    &JOBS,
    &PDBS,
    &STORAGECLASSES,
    &NODECLAIMS,
    &NODEPOOLS,
    &EC2NODECLASSES,
];

impl Resource {
    /// `/api/v1` or `/apis/<group>/<version>`.
    pub fn group_version_path(&self) -> String {
        if self.group.is_empty() {
            format!("/api/{}", self.version)
        } else {
            format!("/apis/{}/{}", self.group, self.version)
        }
    }

    /// `pods`, `nodeclaims.karpenter.sh`: the name kubectl accepts without ambiguity.
    pub fn kubectl_name(&self) -> String {
        if self.group.is_empty() {
            self.plural.to_string()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// Whether this is one of Karpenter's own APIs (a 404 then means "not installed" or "other
    /// API version", not "object absent").
    pub fn is_karpenter_crd(&self) -> bool {
        self.group == "karpenter.sh" || self.group == "karpenter.k8s.aws"
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Get,
    List,
    /// The `log` subresource of a pod.
    Log,
}

impl Verb {
    /// The RBAC verb.
    pub fn rbac(self) -> &'static str {
        match self {
            Verb::Get | Verb::Log => "get",
            Verb::List => "list",
        }
    }
}

/// One read of the API. `what` names the fact for humans ("the pod's events").
#[derive(Debug, Clone)]
pub struct Call {
    pub what: String,
    pub resource: &'static Resource,
    pub verb: Verb,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    /// Log calls only.
    pub container: Option<String>,
    pub since: Option<Duration>,
    pub limit_bytes: Option<u64>,
    /// Log calls only: the log of the container's previous (last terminated) instance.
    pub previous: bool,
    /// Log calls only: read only the last lines.
    pub tail_lines: Option<u64>,
}

/// Page size of list calls: large enough that clusters of a few thousand objects need few
/// pages, small enough to bound one response.
pub const PAGE_SIZE: u32 = 500;

impl Call {
    pub fn get(
        what: impl Into<String>,
        resource: &'static Resource,
        namespace: Option<&str>,
        name: &str,
    ) -> Call {
        Call {
            what: what.into(),
            resource,
            verb: Verb::Get,
            namespace: namespace.map(str::to_string),
            name: Some(name.to_string()),
            label_selector: None,
            field_selector: None,
            container: None,
            since: None,
            limit_bytes: None,
            previous: false,
            tail_lines: None,
        }
    }

    /// A list in `namespace`, or across all namespaces (or of a cluster-scoped resource) with
    /// `None`.
    pub fn list(
        what: impl Into<String>,
        resource: &'static Resource,
        namespace: Option<&str>,
    ) -> Call {
        Call {
            verb: Verb::List,
            name: None,
            ..Call::get(what, resource, namespace, "")
        }
    }

    pub fn labels(mut self, selector: impl Into<String>) -> Call {
        self.label_selector = Some(selector.into());
        self
    }

    pub fn fields(mut self, selector: impl Into<String>) -> Call {
        self.field_selector = Some(selector.into());
        self
    }

    pub fn log(
        what: impl Into<String>,
        namespace: &str,
        pod: &str,
        container: &str,
        since: Duration,
        limit_bytes: u64,
    ) -> Call {
        Call {
            verb: Verb::Log,
            container: Some(container.to_string()),
            since: Some(since),
            limit_bytes: Some(limit_bytes),
            ..Call::get(what, &PODS, Some(namespace), pod)
        }
    }

    /// The log of the container's previous instance (`kubectl logs --previous`): its last
    /// `tail_lines` lines, at most `limit_bytes`. No `sinceSeconds`: the instance ended at some
    /// time before now, its last lines say why, and a window counted back from now would drop
    /// them when it ended longer ago than `--since` (kubectl too applies `--since` only when
    /// asked).
    pub fn previous_log(
        what: impl Into<String>,
        namespace: &str,
        pod: &str,
        container: &str,
        tail_lines: u64,
        limit_bytes: u64,
    ) -> Call {
        Call {
            verb: Verb::Log,
            container: Some(container.to_string()),
            previous: true,
            tail_lines: Some(tail_lines),
            limit_bytes: Some(limit_bytes),
            ..Call::get(what, &PODS, Some(namespace), pod)
        }
    }

    pub fn path(&self) -> String {
        let mut path = self.resource.group_version_path();
        if let Some(ns) = &self.namespace {
            if self.resource.namespaced {
                path.push_str("/namespaces/");
                path.push_str(ns);
            }
        }
        path.push('/');
        path.push_str(self.resource.plural);
        if let Some(name) = &self.name {
            path.push('/');
            path.push_str(name);
        }
        if self.verb == Verb::Log {
            path.push_str("/log");
        }
        path
    }

    /// Query parameters, unencoded; list calls page with `limit` (the `continue` token is
    /// added per page).
    pub fn query(&self) -> Vec<(&'static str, String)> {
        let mut query = Vec::new();
        if let Some(selector) = &self.label_selector {
            query.push(("labelSelector", selector.clone()));
        }
        if let Some(selector) = &self.field_selector {
            query.push(("fieldSelector", selector.clone()));
        }
        if self.verb == Verb::List {
            query.push(("limit", PAGE_SIZE.to_string()));
        }
        if let Some(container) = &self.container {
            query.push(("container", container.clone()));
        }
        if self.previous {
            query.push(("previous", "true".to_string()));
        }
        if let Some(tail) = self.tail_lines {
            query.push(("tailLines", tail.to_string()));
        }
        if let Some(since) = self.since {
            query.push(("sinceSeconds", since.as_secs().max(1).to_string()));
        }
        if let Some(limit) = self.limit_bytes {
            query.push(("limitBytes", limit.to_string()));
        }
        query
    }

    /// The request URI (path and percent-encoded query), with `continue` for later pages.
    pub fn uri(&self, continue_token: Option<&str>) -> String {
        let mut query = self.query();
        if let Some(token) = continue_token {
            query.push(("continue", token.to_string()));
        }
        let mut uri = self.path();
        for (i, (key, value)) in query.iter().enumerate() {
            uri.push(if i == 0 { '?' } else { '&' });
            uri.push_str(key);
            uri.push('=');
            uri.push_str(&percent_encode(value));
        }
        uri
    }

    /// The document label: the request as a reader would write it, unencoded and without
    /// the paging parameters.
    pub fn label(&self) -> String {
        let query: Vec<String> = self
            .query()
            .into_iter()
            .filter(|(key, _)| *key != "limit")
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        if query.is_empty() {
            format!("GET {}", self.path())
        } else {
            format!("GET {}?{}", self.path(), query.join("&"))
        }
    }

    /// The kubectl command that collects the same fact by hand.
    pub fn kubectl_command(&self) -> String {
        let mut parts = vec!["kubectl".to_string()];
        if self.verb == Verb::Log {
            parts.push("logs".into());
        } else {
            parts.push("get".into());
            parts.push(self.resource.kubectl_name());
        }
        if let Some(name) = &self.name {
            parts.push(name.clone());
        }
        match (&self.namespace, self.resource.namespaced) {
            (Some(ns), true) => {
                parts.push("-n".into());
                parts.push(ns.clone());
            }
            (None, true) if self.verb == Verb::List => parts.push("-A".into()),
            _ => {}
        }
        if let Some(selector) = &self.label_selector {
            parts.push("-l".into());
            parts.push(selector.clone());
        }
        if let Some(selector) = &self.field_selector {
            parts.push(format!("--field-selector={selector}"));
        }
        if let Some(container) = &self.container {
            parts.push("-c".into());
            parts.push(container.clone());
        }
        // `--previous` without `--tail`: by hand, the whole log of the instance that ended is
        // worth reading (the tail, like the byte cap, only bounds what is streamed here).
        if self.previous {
            parts.push("--previous".into());
        }
        if let Some(since) = self.since {
            parts.push(format!("--since={}", format_duration(since)));
        }
        if self.verb != Verb::Log {
            parts.push("-o".into());
            parts.push("yaml".into());
        }
        parts.join(" ")
    }

    /// The RBAC rule that allows this call, in the YAML flow form of a Role rule.
    pub fn rbac_rule(&self) -> String {
        let resource = if self.verb == Verb::Log {
            format!("{}/log", self.resource.plural)
        } else {
            self.resource.plural.to_string()
        };
        format!(
            "{{apiGroups: [\"{}\"], resources: [\"{resource}\"], verbs: [\"{}\"]}}",
            self.resource.group,
            self.verb.rbac()
        )
    }

    /// Where the call reads: `in namespace kube-system`, `in all namespaces`, `cluster-wide`.
    pub fn scope(&self) -> String {
        match (&self.namespace, self.resource.namespaced) {
            (Some(ns), true) => format!("in namespace {ns}"),
            (None, true) => "in all namespaces".to_string(),
            _ => "cluster-wide".to_string(),
        }
    }
}

/// Percent-encodes a query value (RFC 3986 unreserved characters stay as they are).
pub fn percent_encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `1h`, `30m`, `90s`, `1h30m`: the form kubectl's `--since` takes.
pub fn format_duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let mut out = String::new();
    if h > 0 {
        out.push_str(&format!("{h}h"));
    }
    if m > 0 {
        out.push_str(&format!("{m}m"));
    }
    if s > 0 || out.is_empty() {
        out.push_str(&format!("{s}s"));
    }
    out
}

/// Parses a kubectl-style duration: `90s`, `30m`, `1h`, `1h30m`, `2h0m5s`; a bare number is
/// seconds, `0` is zero.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty duration".into());
    }
    if let Ok(secs) = text.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut number = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            number.push(c);
            continue;
        }
        let unit = if c == 'm' && chars.peek() == Some(&'s') {
            chars.next();
            "ms"
        } else {
            match c {
                'h' => "h",
                'm' => "m",
                's' => "s",
                _ => return Err(format!("invalid duration {text:?}: unknown unit {c:?}")),
            }
        };
        let value: f64 = number
            .parse()
            .map_err(|_| format!("invalid duration {text:?}: a number must precede {unit:?}"))?;
        number.clear();
        let seconds = match unit {
            "h" => value * 3600.0,
            "m" => value * 60.0,
            "s" => value,
            _ => value / 1000.0,
        };
        total += Duration::from_secs_f64(seconds);
    }
    if !number.is_empty() {
        return Err(format!(
            "invalid duration {text:?}: missing unit after {number}"
        ));
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_api_layout() {
        let pod = Call::get("the pod", &PODS, Some("shop"), "web-0");
        assert_eq!(pod.path(), "/api/v1/namespaces/shop/pods/web-0");
        assert_eq!(pod.label(), "GET /api/v1/namespaces/shop/pods/web-0");
        let claims = Call::list("NodeClaims", &NODECLAIMS, None);
        assert_eq!(claims.path(), "/apis/karpenter.sh/v1/nodeclaims");
        assert_eq!(
            claims.uri(None),
            "/apis/karpenter.sh/v1/nodeclaims?limit=500"
        );
        assert_eq!(
            claims.uri(Some("abc=")),
            "/apis/karpenter.sh/v1/nodeclaims?limit=500&continue=abc%3D"
        );
        // A namespace given for a cluster-scoped resource does not enter the path.
        let node = Call::get("node", &NODES, Some("shop"), "ip-1");
        assert_eq!(node.path(), "/api/v1/nodes/ip-1");
    }

    #[test]
    fn selectors_are_encoded_in_the_uri_and_readable_in_the_label() {
        let events = Call::list("events", &EVENTS, Some("shop"))
            .fields("involvedObject.name=web-0,involvedObject.kind=Pod");
        assert_eq!(
            events.uri(None),
            "/api/v1/namespaces/shop/events?fieldSelector=involvedObject.name%3Dweb-0%2CinvolvedObject.kind%3DPod&limit=500"
        );
        assert_eq!(
            events.label(),
            "GET /api/v1/namespaces/shop/events?fieldSelector=involvedObject.name=web-0,involvedObject.kind=Pod"
        );
        assert_eq!(
            events.kubectl_command(),
            "kubectl get events -n shop --field-selector=involvedObject.name=web-0,involvedObject.kind=Pod -o yaml"
        );
    }

    #[test]
    fn log_calls_name_the_container_window_and_cap() {
        let log = Call::log(
            "logs",
            "karpenter",
            "karpenter-abc",
            "controller",
            Duration::from_secs(3600),
            1024,
        );
        assert_eq!(
            log.uri(None),
            "/api/v1/namespaces/karpenter/pods/karpenter-abc/log?container=controller&sinceSeconds=3600&limitBytes=1024"
        );
        assert_eq!(
            log.kubectl_command(),
            "kubectl logs karpenter-abc -n karpenter -c controller --since=1h"
        );
        assert_eq!(
            log.rbac_rule(),
            r#"{apiGroups: [""], resources: ["pods/log"], verbs: ["get"]}"#
        );
    }

    #[test]
    fn previous_log_calls_read_the_tail_of_the_ended_instance_without_a_window() {
        let log = Call::previous_log(
            "logs",
            "kube-system",
            "aws-node-7hx2q",
            "aws-node",
            10_000,
            1024,
        );
        assert_eq!(
            log.uri(None),
            "/api/v1/namespaces/kube-system/pods/aws-node-7hx2q/log?container=aws-node&previous=true&tailLines=10000&limitBytes=1024"
        );
        assert_eq!(
            log.kubectl_command(),
            "kubectl logs aws-node-7hx2q -n kube-system -c aws-node --previous"
        );
        assert_eq!(
            log.rbac_rule(),
            r#"{apiGroups: [""], resources: ["pods/log"], verbs: ["get"]}"#
        );
    }

    #[test]
    fn all_namespace_lists_say_so() {
        let deployments =
            Call::list("Karpenter", &DEPLOYMENTS, None).labels("app.kubernetes.io/name=karpenter");
        assert_eq!(deployments.path(), "/apis/apps/v1/deployments");
        assert_eq!(
            deployments.kubectl_command(),
            "kubectl get deployments.apps -A -l app.kubernetes.io/name=karpenter -o yaml"
        );
        assert_eq!(deployments.scope(), "in all namespaces");
        assert_eq!(
            deployments.rbac_rule(),
            r#"{apiGroups: ["apps"], resources: ["deployments"], verbs: ["list"]}"#
        );
    }

    #[test]
    fn durations_parse_like_kubectl() {
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(parse_duration("45s").unwrap(), Duration::from_secs(45));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("0").unwrap(), Duration::ZERO);
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("10h5").is_err());
        assert!(parse_duration("").is_err());
        assert_eq!(format_duration(Duration::from_secs(5400)), "1h30m");
        assert_eq!(format_duration(Duration::from_secs(0)), "0s");
    }
}
