//! What the fake serves: discovery, get and list (label and field selectors, `limit` /
//! `continue` paging, `Table` for kubectl), pod logs (`container`, `previous`, `sinceSeconds`,
//! `tailLines`, `limitBytes`) and `Status` error bodies, the way the Kubernetes API server writes them.

use serde_json::{json, Map, Value};

use super::selector::{FieldSelector, LabelSelector};
use super::Scenario;

/// A resource type the fake serves.
#[derive(Debug, Clone, Copy)]
pub struct ServedResource {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
    pub kind: &'static str,
    pub namespaced: bool,
    pub short_names: &'static [&'static str],
}

const fn resource(
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    kind: &'static str,
    namespaced: bool,
    short_names: &'static [&'static str],
) -> ServedResource {
    ServedResource {
        group,
        version,
        plural,
        kind,
        namespaced,
        short_names,
    }
}

/// Built-in resources (always served).
const BUILT_IN: &[ServedResource] = &[
    resource("", "v1", "pods", "Pod", true, &["po"]),
    resource("", "v1", "events", "Event", true, &["ev"]),
    resource("", "v1", "nodes", "Node", false, &["no"]),
    resource("", "v1", "namespaces", "Namespace", false, &["ns"]),
    resource(
        "",
        "v1",
        "persistentvolumeclaims",
        "PersistentVolumeClaim",
        true,
        &["pvc"],
    ),
    resource(
        "",
        "v1",
        "persistentvolumes",
        "PersistentVolume",
        false,
        &["pv"],
    ),
    resource("", "v1", "secrets", "Secret", true, &[]),
    resource("", "v1", "configmaps", "ConfigMap", true, &["cm"]),
    resource("apps", "v1", "deployments", "Deployment", true, &["deploy"]),
    resource("apps", "v1", "replicasets", "ReplicaSet", true, &["rs"]),
    resource("apps", "v1", "statefulsets", "StatefulSet", true, &["sts"]),
    resource("apps", "v1", "daemonsets", "DaemonSet", true, &["ds"]),
    resource("batch", "v1", "jobs", "Job", true, &[]),
    resource(
        "policy",
        "v1",
        "poddisruptionbudgets",
        "PodDisruptionBudget",
        true,
        &["pdb"],
    ),
    resource(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        "StorageClass",
        false,
        &["sc"],
    ),
];

/// Karpenter's CRDs, served in the versions the scenario installs.
const KARPENTER: &[(&str, &str, &str, &[&str])] = &[
    ("karpenter.sh", "nodeclaims", "NodeClaim", &[]),
    ("karpenter.sh", "nodepools", "NodePool", &[]),
    (
        "karpenter.k8s.aws",
        "ec2nodeclasses",
        "EC2NodeClass",
        &["ec2nc", "ec2ncs"],
    ),
];

/// Every resource the scenario serves.
pub fn served(scenario: &Scenario) -> Vec<ServedResource> {
    let mut out = BUILT_IN.to_vec();
    for (group, plural, kind, short) in KARPENTER {
        let versions = if *group == "karpenter.sh" {
            &scenario.karpenter_sh_versions
        } else {
            &scenario.karpenter_aws_versions
        };
        for version in versions {
            out.push(resource(group, version, plural, kind, false, short));
        }
    }
    out
}

/// A response before it is written: JSON, or a log as text chunks.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    /// Logs stream with chunked transfer encoding, as the API server sends them.
    pub chunked: bool,
}

impl Reply {
    pub fn json(status: u16, value: &Value) -> Reply {
        Reply {
            status,
            content_type: "application/json",
            body: serde_json::to_vec(value).expect("JSON serialises"),
            chunked: false,
        }
    }
}

/// The API server's error body.
pub fn status(code: u16, reason: &str, message: &str) -> Reply {
    Reply::json(
        code,
        &json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": reason,
            "details": {},
            "code": code,
        }),
    )
}

fn not_found_path() -> Reply {
    status(
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
}

/// Answers one GET.
pub fn handle(scenario: &Scenario, path: &str, query: &[(String, String)], accept: &str) -> Reply {
    let served = served(scenario);
    let segments: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match segments.as_slice() {
        ["version"] => Reply::json(
            200,
            &json!({
                "major": "1", "minor": "31", "gitVersion": scenario.server_version,
                "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
                "buildDate": "2025-01-01T00:00:00Z", "goVersion": "go1.22.8", "compiler": "gc",
                "platform": "linux/amd64"
            }),
        ),
        ["api"] => Reply::json(
            200,
            &json!({"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:443"}]}),
        ),
        ["apis"] => Reply::json(200, &group_list(&served)),
        ["api", "v1"] => Reply::json(200, &resource_list("v1", &served, "", "v1")),
        ["apis", group] => match group_document(&served, group) {
            Some(document) => Reply::json(200, &document),
            None => not_found_path(),
        },
        ["apis", group, version] => {
            if served
                .iter()
                .any(|r| r.group == *group && r.version == *version)
            {
                Reply::json(
                    200,
                    &resource_list(&format!("{group}/{version}"), &served, group, version),
                )
            } else {
                not_found_path()
            }
        }
        ["api", "v1", rest @ ..] => {
            resource_request(scenario, &served, "", "v1", rest, query, accept)
        }
        ["apis", group, version, rest @ ..] => {
            resource_request(scenario, &served, group, version, rest, query, accept)
        }
        _ => not_found_path(),
    }
}

fn group_list(served: &[ServedResource]) -> Value {
    let mut groups: Vec<&str> = served
        .iter()
        .map(|r| r.group)
        .filter(|g| !g.is_empty())
        .collect();
    groups.dedup();
    let groups: Vec<Value> = groups
        .iter()
        .filter_map(|g| group_document(served, g))
        .map(|mut g| {
            if let Some(map) = g.as_object_mut() {
                map.remove("kind");
                map.remove("apiVersion");
            }
            g
        })
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

fn group_document(served: &[ServedResource], group: &str) -> Option<Value> {
    let mut versions: Vec<&str> = served
        .iter()
        .filter(|r| r.group == group)
        .map(|r| r.version)
        .collect();
    if versions.is_empty() {
        return None;
    }
    versions.dedup();
    let versions: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    Some(json!({
        "kind": "APIGroup", "apiVersion": "v1", "name": group,
        "versions": versions, "preferredVersion": versions[0].clone()
    }))
}

fn resource_list(
    group_version: &str,
    served: &[ServedResource],
    group: &str,
    version: &str,
) -> Value {
    let mut resources = Vec::new();
    for r in served
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        resources.push(json!({
            "name": r.plural, "singularName": r.kind.to_ascii_lowercase(), "namespaced": r.namespaced,
            "kind": r.kind, "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
            "shortNames": r.short_names,
        }));
        if r.plural == "pods" {
            resources.push(json!({"name": "pods/log", "singularName": "", "namespaced": true, "kind": "Pod", "verbs": ["get"]}));
        }
    }
    json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources})
}

/// `[namespaces, NS,] PLURAL [, NAME [, log]]`.
fn resource_request(
    scenario: &Scenario,
    served: &[ServedResource],
    group: &str,
    version: &str,
    rest: &[&str],
    query: &[(String, String)],
    accept: &str,
) -> Reply {
    let (namespace, rest) = match rest {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some(*ns), rest),
        _ => (None, rest),
    };
    let Some(plural) = rest.first() else {
        return not_found_path();
    };
    let Some(resource) = served
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == *plural)
    else {
        return not_found_path();
    };
    if namespace.is_some() && !resource.namespaced {
        return not_found_path();
    }
    match rest {
        [_] => list(scenario, resource, namespace, query, accept),
        [_, name] => get(scenario, resource, namespace, name, accept),
        [_, name, "log"] if resource.kind == "Pod" => match namespace {
            Some(ns) => pod_log(scenario, ns, name, query),
            None => not_found_path(),
        },
        _ => not_found_path(),
    }
}

fn api_version(resource: &ServedResource) -> String {
    if resource.group.is_empty() {
        resource.version.to_string()
    } else {
        format!("{}/{}", resource.group, resource.version)
    }
}

fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(|v| v.as_str())
}

/// The scenario's objects of `resource` (in `namespace` when given).
fn objects<'a>(
    scenario: &'a Scenario,
    resource: &ServedResource,
    namespace: Option<&str>,
) -> Vec<&'a Value> {
    let api_version = api_version(resource);
    scenario
        .objects
        .iter()
        .filter(|o| {
            text(o, "/kind") == Some(resource.kind)
                && text(o, "/apiVersion") == Some(api_version.as_str())
        })
        .filter(|o| namespace.is_none() || text(o, "/metadata/namespace") == namespace)
        .collect()
}

fn get(
    scenario: &Scenario,
    resource: &ServedResource,
    namespace: Option<&str>,
    name: &str,
    accept: &str,
) -> Reply {
    let found = objects(scenario, resource, namespace)
        .into_iter()
        .find(|o| text(o, "/metadata/name") == Some(name));
    match found {
        Some(object) if wants_table(accept) => Reply::json(200, &table(resource, &[object])),
        Some(object) => Reply::json(200, object),
        None => {
            let qualified = if resource.group.is_empty() {
                resource.plural.to_string()
            } else {
                format!("{}.{}", resource.plural, resource.group)
            };
            let mut reply = status(
                404,
                "NotFound",
                &format!("{qualified} \"{name}\" not found"),
            );
            if let Ok(mut body) = serde_json::from_slice::<Value>(&reply.body) {
                body["details"] =
                    json!({"name": name, "group": resource.group, "kind": resource.plural});
                reply = Reply::json(404, &body);
            }
            reply
        }
    }
}

fn param<'a>(query: &'a [(String, String)], key: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

fn list(
    scenario: &Scenario,
    resource: &ServedResource,
    namespace: Option<&str>,
    query: &[(String, String)],
    accept: &str,
) -> Reply {
    let labels = match LabelSelector::parse(param(query, "labelSelector").unwrap_or("")) {
        Ok(selector) => selector,
        Err(message) => return status(400, "BadRequest", &message),
    };
    let fields =
        match FieldSelector::parse(param(query, "fieldSelector").unwrap_or(""), resource.kind) {
            Ok(selector) => selector,
            Err(message) => return status(400, "BadRequest", &message),
        };
    let mut matching: Vec<&Value> = objects(scenario, resource, namespace)
        .into_iter()
        .filter(|o| labels.matches(o.pointer("/metadata/labels")) && fields.matches(o))
        .collect();
    matching.sort_by_key(|o| {
        (
            text(o, "/metadata/namespace").unwrap_or(""),
            text(o, "/metadata/name").unwrap_or(""),
        )
    });
    let start = match param(query, "continue") {
        Some(token) => match decode_continue(token) {
            Some(start) => start,
            None => return status(
                410,
                "Expired",
                "The provided continue parameter is too old to display a consistent list result.",
            ),
        },
        None => 0,
    };
    let limit = param(query, "limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0);
    let end = limit.map_or(matching.len(), |l| (start + l).min(matching.len()));
    let page: Vec<&Value> = matching.get(start..end).unwrap_or_default().to_vec();
    let mut metadata = Map::new();
    metadata.insert("resourceVersion".into(), json!("4711"));
    if end < matching.len() {
        metadata.insert("continue".into(), json!(encode_continue(end)));
        metadata.insert("remainingItemCount".into(), json!(matching.len() - end));
    }
    if wants_table(accept) {
        let mut table = table(resource, &page);
        table["metadata"] = Value::Object(metadata);
        return Reply::json(200, &table);
    }
    // Items of a list carry no kind/apiVersion on the wire.
    let items: Vec<Value> = page
        .into_iter()
        .map(|o| {
            let mut o = o.clone();
            if let Some(map) = o.as_object_mut() {
                map.remove("kind");
                map.remove("apiVersion");
            }
            o
        })
        .collect();
    Reply::json(
        200,
        &json!({"kind": format!("{}List", resource.kind), "apiVersion": api_version(resource), "metadata": metadata, "items": items}),
    )
}

fn encode_continue(offset: usize) -> String {
    format!("eyJvIjo{offset:x}")
}

fn decode_continue(token: &str) -> Option<usize> {
    usize::from_str_radix(token.strip_prefix("eyJvIjo")?, 16).ok()
}

fn wants_table(accept: &str) -> bool {
    accept.contains("as=Table")
}

/// The `meta.k8s.io/v1` Table kubectl asks for: NAME (and STATUS for pods) and AGE.
fn table(resource: &ServedResource, objects: &[&Value]) -> Value {
    let mut columns = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0}),
    ];
    if resource.kind == "Pod" {
        columns.push(json!({"name": "Status", "type": "string", "format": "", "description": "Phase", "priority": 0}));
    }
    columns.push(
        json!({"name": "Age", "type": "string", "format": "", "description": "Age", "priority": 0}),
    );
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let mut cells = vec![json!(text(o, "/metadata/name").unwrap_or(""))];
            if resource.kind == "Pod" {
                cells.push(json!(text(o, "/status/phase").unwrap_or("Unknown")));
            }
            cells.push(json!("10m"));
            json!({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata").cloned().unwrap_or(json!({}))}})
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "4711"}, "columnDefinitions": columns, "rows": rows})
}

/// Which instance of a container a log read returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Instance {
    Current,
    Previous,
}

/// The kubelet's choice of instance (`validateContainerLogStatus`), from the container's
/// status: `previous` needs a `lastState.terminated` with a `containerID`; otherwise a running
/// (or terminated) container's own log, else the last terminated one's (a crash loop waiting
/// to restart), else the kubelet's error sentence. A container without a status is served its
/// current log (the fake's pods that never restart carry no more than they need).
fn log_instance(
    pod: &Value,
    name: &str,
    container: &str,
    previous: bool,
) -> Result<Instance, String> {
    let status = pod
        .pointer("/status/containerStatuses")
        .and_then(Value::as_array)
        .and_then(|statuses| {
            statuses
                .iter()
                .find(|s| text(s, "/name") == Some(container))
        });
    let Some(status) = status else {
        return if previous {
            Err(format!(
                "previous terminated container \"{container}\" in pod \"{name}\" not found"
            ))
        } else {
            Ok(Instance::Current)
        };
    };
    let last_id = text(status, "/lastState/terminated/containerID").filter(|id| !id.is_empty());
    if previous {
        return match last_id {
            Some(_) => Ok(Instance::Previous),
            None => Err(format!(
                "previous terminated container \"{container}\" in pod \"{name}\" not found"
            )),
        };
    }
    if status.pointer("/state/running").is_some() || status.pointer("/state/terminated").is_some() {
        return Ok(Instance::Current);
    }
    if status.pointer("/lastState/terminated").is_some() {
        return match last_id {
            Some(_) => Ok(Instance::Previous),
            None => Err(format!(
                "container \"{container}\" in pod \"{name}\" is terminated"
            )),
        };
    }
    match text(status, "/state/waiting/reason") {
        Some("ErrImagePull") => Err(format!("container \"{container}\" in pod \"{name}\" is waiting to start: image can't be pulled")),
        Some("ImagePullBackOff") => Err(format!("container \"{container}\" in pod \"{name}\" is waiting to start: trying and failing to pull image")),
        Some(reason) => Err(format!("container \"{container}\" in pod \"{name}\" is waiting to start: {reason}")),
        None => Ok(Instance::Current),
    }
}

/// The API server's answer when the kubelet refuses a log read: the kubelet's sentence as a
/// `BadRequest` Status (`errors.NewBadRequest`, which sets no `details`).
fn bad_request(message: &str) -> Reply {
    Reply::json(
        400,
        &json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": "BadRequest",
            "code": 400,
        }),
    )
}

fn pod_log(scenario: &Scenario, namespace: &str, name: &str, query: &[(String, String)]) -> Reply {
    let pod = scenario.objects.iter().find(|o| {
        text(o, "/kind") == Some("Pod")
            && text(o, "/metadata/namespace") == Some(namespace)
            && text(o, "/metadata/name") == Some(name)
    });
    let Some(pod) = pod else {
        return status(404, "NotFound", &format!("pods \"{name}\" not found"));
    };
    let containers: Vec<&str> = pod
        .pointer("/spec/containers")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|c| text(c, "/name"))
        .collect();
    let container = match param(query, "container") {
        Some(c) if containers.contains(&c) => c,
        Some(c) => {
            return status(
                400,
                "BadRequest",
                &format!("container {c} is not valid for pod {name}"),
            )
        }
        None if containers.len() == 1 => containers[0],
        None => {
            return status(
                400,
                "BadRequest",
                &format!(
                    "a container name must be specified for pod {name}, choose one of: [{}]",
                    containers.join(" ")
                ),
            )
        }
    };
    let key = (
        namespace.to_string(),
        name.to_string(),
        container.to_string(),
    );
    let instance = match log_instance(
        pod,
        name,
        container,
        param(query, "previous") == Some("true"),
    ) {
        Ok(instance) => instance,
        Err(message) => return bad_request(&message),
    };
    let logs = match instance {
        Instance::Current => &scenario.logs,
        Instance::Previous => &scenario.previous_logs,
    };
    let lines = logs.get(&key).cloned().unwrap_or_default();
    let since = param(query, "sinceSeconds").and_then(|s| s.parse::<u64>().ok());
    let mut lines: Vec<&super::LogLine> = lines
        .iter()
        .filter(|l| since.is_none_or(|s| l.age_seconds <= s))
        .collect::<Vec<_>>();
    if let Some(tail) = param(query, "tailLines").and_then(|s| s.parse::<usize>().ok()) {
        let skip = lines.len().saturating_sub(tail);
        lines.drain(..skip);
    }
    let mut body = Vec::new();
    for line in lines {
        body.extend_from_slice(line.text.as_bytes());
        body.push(b'\n');
    }
    if let Some(limit) = param(query, "limitBytes").and_then(|s| s.parse::<usize>().ok()) {
        body.truncate(limit);
    }
    Reply {
        status: 200,
        content_type: "text/plain",
        body,
        chunked: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_api::objects::{karpenter, log_lines};

    fn scenario() -> Scenario {
        let mut scenario = Scenario::default();
        scenario
            .objects
            .extend(karpenter("kube-system", "1.4.0", 2));
        scenario.with_log(
            "kube-system",
            "karpenter-6d8b7c9f4-2xk7p",
            "controller",
            log_lines("one\ntwo\nthree\nfour\n", 10),
        )
    }

    fn log(query: &[(&str, &str)]) -> Reply {
        let query: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        handle(
            &scenario(),
            "/api/v1/namespaces/kube-system/pods/karpenter-6d8b7c9f4-2xk7p/log",
            &query,
            "*/*",
        )
    }

    #[test]
    fn logs_honour_since_tail_and_limit_bytes() {
        assert_eq!(log(&[]).body, b"one\ntwo\nthree\nfour\n");
        assert!(log(&[]).chunked);
        // Ages are 13, 12, 11, 10 seconds.
        assert_eq!(log(&[("sinceSeconds", "11")]).body, b"three\nfour\n");
        assert_eq!(log(&[("tailLines", "1")]).body, b"four\n");
        assert_eq!(log(&[("limitBytes", "6")]).body, b"one\ntw");
        assert_eq!(
            log(&[
                ("container", "controller"),
                ("sinceSeconds", "12"),
                ("tailLines", "1")
            ])
            .body,
            b"four\n"
        );
        let wrong = log(&[("container", "webhook")]);
        assert_eq!(wrong.status, 400);
        assert!(String::from_utf8_lossy(&wrong.body).contains("container webhook is not valid"));
    }

    #[test]
    fn previous_logs_follow_the_kubelets_choice_of_instance() {
        let read = |scenario: &Scenario, pod: &str, container: &str, previous: bool| {
            let mut query = vec![("container".to_string(), container.to_string())];
            if previous {
                query.push(("previous".into(), "true".into()));
            }
            handle(
                scenario,
                &format!("/api/v1/namespaces/kube-system/pods/{pod}/log"),
                &query,
                "*/*",
            )
        };
        let body = |reply: Reply| String::from_utf8(reply.body).unwrap();
        // Running again after a crash: the plain read is the new instance, previous the old.
        let restarted = crate::fake_api::scenarios::karpenter_restarted();
        let leader = crate::fake_api::scenarios::LEADER;
        let current = body(read(&restarted, leader, "controller", false));
        assert!(current.contains("Starting workers") && !current.contains("ERROR"));
        let previous = body(read(&restarted, leader, "controller", true));
        assert!(previous.contains("ec2 api connectivity check failed"));
        // Waiting in CrashLoopBackOff: the plain read already returns the instance that ended.
        let looping = crate::fake_api::scenarios::cni_denied_node();
        let cni = crate::fake_api::scenarios::CNI_POD;
        assert_eq!(
            body(read(&looping, cni, "aws-node", false)),
            body(read(&looping, cni, "aws-node", true))
        );
        // Never restarted, or restarted without a containerID: the kubelet's 400 as a Status
        // without details, the way the API server relays it.
        for (scenario, pod, container) in [
            (scenario(), leader, "controller"),
            (
                crate::fake_api::scenarios::karpenter_previous_log_gone(),
                leader,
                "controller",
            ),
        ] {
            let refused = read(&scenario, pod, container, true);
            assert_eq!(refused.status, 400);
            let status: Value = serde_json::from_slice(&refused.body).unwrap();
            assert_eq!(
                status,
                json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                       "message": format!("previous terminated container \"{container}\" in pod \"{pod}\" not found"),
                       "reason": "BadRequest", "code": 400})
            );
        }
        // Waiting without a previous instance: the kubelet says why there is no log.
        let mut pulling = scenario();
        pulling.objects[2]["status"]["containerStatuses"][0]["state"] =
            json!({"waiting": {"reason": "ImagePullBackOff"}});
        let name = pulling.objects[2]["metadata"]["name"]
            .as_str()
            .unwrap()
            .to_string();
        let refused = read(&pulling, &name, "controller", false);
        assert_eq!(refused.status, 400);
        assert!(body(refused).contains(&format!(
            "container \\\"controller\\\" in pod \\\"{name}\\\" is waiting to start: trying and failing to pull image"
        )));
    }

    #[test]
    fn lists_page_and_select_and_errors_are_status_bodies() {
        let scenario = scenario();
        let query = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let page = handle(
            &scenario,
            "/api/v1/pods",
            &query(&[("limit", "1")]),
            "application/json",
        );
        let page: Value = serde_json::from_slice(&page.body).unwrap();
        assert_eq!(page["kind"], "PodList");
        assert_eq!(page["items"].as_array().unwrap().len(), 1);
        assert!(
            page["items"][0].get("kind").is_none(),
            "items carry no kind on the wire"
        );
        let token = page["metadata"]["continue"].as_str().unwrap().to_string();
        let rest = handle(
            &scenario,
            "/api/v1/pods",
            &query(&[("limit", "1"), ("continue", &token)]),
            "application/json",
        );
        let rest: Value = serde_json::from_slice(&rest.body).unwrap();
        assert_eq!(rest["items"].as_array().unwrap().len(), 1);
        assert_ne!(
            rest["items"][0]["metadata"]["name"],
            page["items"][0]["metadata"]["name"]
        );
        assert!(rest["metadata"].get("continue").is_none());

        let none = handle(
            &scenario,
            "/api/v1/pods",
            &query(&[("labelSelector", "app.kubernetes.io/name=other")]),
            "",
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&none.body).unwrap()["items"],
            json!([])
        );
        let bad = handle(
            &scenario,
            "/apis/apps/v1/deployments",
            &query(&[("fieldSelector", "status.phase=Running")]),
            "",
        );
        assert_eq!(bad.status, 400);
        let missing = handle(
            &scenario,
            "/api/v1/namespaces/kube-system/pods/nope",
            &[],
            "",
        );
        let status: Value = serde_json::from_slice(&missing.body).unwrap();
        assert_eq!(
            (
                status["kind"].as_str(),
                status["code"].as_u64(),
                status["reason"].as_str()
            ),
            (Some("Status"), Some(404), Some("NotFound"))
        );
        assert_eq!(status["message"], "pods \"nope\" not found");
        let table = handle(
            &scenario,
            "/api/v1/pods",
            &[],
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
        );
        assert_eq!(
            serde_json::from_slice::<Value>(&table.body).unwrap()["kind"],
            "Table"
        );
    }

    #[test]
    fn discovery_follows_the_installed_karpenter_versions() {
        let mut scenario = scenario();
        let groups: Value =
            serde_json::from_slice(&handle(&scenario, "/apis", &[], "").body).unwrap();
        let names: Vec<&str> = groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|g| g["name"].as_str())
            .collect();
        assert!(
            names.contains(&"karpenter.sh") && names.contains(&"karpenter.k8s.aws"),
            "{names:?}"
        );
        scenario.karpenter_sh_versions = vec!["v1beta1"];
        let group: Value =
            serde_json::from_slice(&handle(&scenario, "/apis/karpenter.sh", &[], "").body).unwrap();
        assert_eq!(group["versions"][0]["version"], "v1beta1");
        assert_eq!(
            handle(&scenario, "/apis/karpenter.sh/v1/nodeclaims", &[], "").status,
            404
        );
        scenario.karpenter_sh_versions.clear();
        assert_eq!(handle(&scenario, "/apis/karpenter.sh", &[], "").status, 404);
    }
}
