//! docs/rbac.yaml grants exactly what collection reads: every request of every verb in every
//! scenario is allowed by one of its rules, every rule is used, and nothing touches Secrets or
//! goes beyond get and list.

mod live_common;

use std::collections::BTreeSet;
use std::path::Path;

use karpenter_why_plugin::collect::Target;
use karpenter_why_tests::fake_api::{scenarios, RequestRecord};
use live_common::{pod, run};

/// (apiGroup, resource, verb), or ("nonResourceURL", path, verb).
type Permission = (String, String, String);

fn granted() -> BTreeSet<Permission> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rbac.yaml"))
            .unwrap();
    let docs = yaml_rust2::YamlLoader::load_from_str(&text).unwrap();
    let role = docs
        .iter()
        .find(|d| d["kind"].as_str() == Some("ClusterRole"))
        .expect("a ClusterRole");
    let strings = |y: &yaml_rust2::Yaml| -> Vec<String> {
        y.as_vec()
            .map(|v| {
                v.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = BTreeSet::new();
    for rule in role["rules"].as_vec().unwrap() {
        for verb in strings(&rule["verbs"]) {
            for url in strings(&rule["nonResourceURLs"]) {
                out.insert(("nonResourceURL".into(), url, verb.clone()));
            }
            for group in strings(&rule["apiGroups"]) {
                for resource in strings(&rule["resources"]) {
                    out.insert((group.clone(), resource, verb.clone()));
                }
            }
        }
    }
    out
}

/// The permission a request needs, the way the API server's authorizer sees it.
fn needed(request: &RequestRecord) -> Permission {
    let parts: Vec<&str> = request.path.trim_matches('/').split('/').collect();
    let (group, rest) = match parts.as_slice() {
        ["api", "v1", rest @ ..] => ("", rest),
        ["apis", group] => {
            return (
                "nonResourceURL".into(),
                format!("/apis/{group}"),
                "get".into(),
            )
        }
        ["apis", group, _version, rest @ ..] => (*group, rest),
        _ => panic!("unexpected request {request:?}"),
    };
    let rest = match rest {
        ["namespaces", _ns, rest @ ..] if !rest.is_empty() => rest,
        other => other,
    };
    match rest {
        [plural] => (group.into(), plural.to_string(), "list".into()),
        [plural, _name] => (group.into(), plural.to_string(), "get".into()),
        [plural, _name, sub] => (group.into(), format!("{plural}/{sub}"), "get".into()),
        _ => panic!("unexpected request {request:?}"),
    }
}

/// Pods owned by a DaemonSet and by a Job, the owner kinds the corpus scenarios lack.
fn owners() -> karpenter_why_tests::fake_api::Scenario {
    use karpenter_why_tests::fake_api::objects::{metadata, owner, pending_pod};
    let mut daemon_pod = pending_pod("kube-system", "aws-node-x7k2p", "25m", "64Mi");
    daemon_pod["metadata"]["ownerReferences"] = owner("apps/v1", "DaemonSet", "aws-node");
    let mut job_pod = pending_pod("analytics", "backfill-2q9wd", "2", "4Gi");
    job_pod["metadata"]["ownerReferences"] = owner("batch/v1", "Job", "backfill");
    scenarios::pending_ice()
        .with(daemon_pod)
        .with(job_pod)
        .with(serde_json::json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": metadata("DaemonSet", Some("kube-system"), "aws-node")}))
        .with(serde_json::json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata("Job", Some("analytics"), "backfill")}))
}

#[test]
fn the_example_role_grants_exactly_what_collection_reads() {
    let granted = granted();
    let runs = [
        run(
            scenarios::pending_ice(),
            pod(scenarios::ICE_POD.0, scenarios::ICE_POD.1),
        ),
        run(
            scenarios::zone_offering(),
            pod(scenarios::ZONE_POD.0, scenarios::ZONE_POD.1),
        ),
        run(
            scenarios::karpenter_elsewhere(),
            pod(scenarios::ELSEWHERE_POD.0, scenarios::ELSEWHERE_POD.1),
        ),
        run(
            scenarios::missing_crds(),
            pod(scenarios::SILENT_POD.0, scenarios::SILENT_POD.1),
        ),
        run(
            scenarios::pdb_blocked_node(),
            Target::Node {
                name: scenarios::PDB_NODE.into(),
            },
        ),
        run(
            scenarios::sandbox_ip_exhausted(),
            pod(scenarios::SANDBOX_POD.0, scenarios::SANDBOX_POD.1),
        ),
        run(
            scenarios::cni_denied_node(),
            Target::Node {
                name: scenarios::CNI_NODE.into(),
            },
        ),
        run(
            scenarios::nodeclaim_not_initialized(),
            Target::NodeClaim {
                name: scenarios::UNINITIALIZED_CLAIM.into(),
            },
        ),
        run(
            scenarios::pending_ice(),
            Target::Pending {
                namespace: None,
                all: true,
            },
        ),
        run(owners(), pod("kube-system", "aws-node-x7k2p")),
        run(owners(), pod("analytics", "backfill-2q9wd")),
    ];
    let mut used = BTreeSet::new();
    for run in &runs {
        for request in &run.requests {
            let permission = needed(request);
            assert!(
                granted.contains(&permission),
                "docs/rbac.yaml does not allow {permission:?} ({})",
                request.path
            );
            used.insert(permission);
        }
    }
    let unused: Vec<&Permission> = granted.difference(&used).collect();
    assert!(
        unused.is_empty(),
        "docs/rbac.yaml grants more than collection uses: {unused:?}"
    );
    for (_, resource, verb) in &granted {
        assert!(verb == "get" || verb == "list", "{verb} on {resource}");
        assert!(!resource.contains("secrets"), "{resource}");
    }
}
