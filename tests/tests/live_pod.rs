//! `kubectl karpenter-why POD` against the fake API server: what is read, in how many round
//! trips, what is missing and why, and what the engine concludes from it.

mod live_common;

use std::time::Duration;

use karpenter_why_plugin::collect::CollectError;
use karpenter_why_tests::fake_api::{scenarios, Fault, FaultAction, Matcher, Scenario};
use live_common::{assert_diagnosed, assert_not_diagnosed, pod, run, run_with};

/// Round mode's quiet time: a wave of concurrent requests is answered together once none
/// has arrived for this long, so the round count is exact even on a loaded machine.
const QUIET: Duration = Duration::from_millis(250);

#[test]
fn pending_pod_with_insufficient_capacity() {
    let (ns, name) = scenarios::ICE_POD;
    let run = run(scenarios::pending_ice().in_rounds(QUIET), pod(ns, name));
    run.assert_read_only_and_selective();
    assert_diagnosed(&run, &["KW215"]);
    assert_not_diagnosed(&run, &["KW200"]);
    assert!(
        run.collection().missing.is_empty(),
        "{:#?}",
        run.collection().missing
    );
    assert_eq!(run.collection().subject, "Pod analytics/trino-worker-0");
    for label in [
        "GET /api/v1/namespaces/analytics/pods/trino-worker-0",
        "GET /api/v1/namespaces/analytics/events?fieldSelector=involvedObject.kind=Pod,involvedObject.name=trino-worker-0",
        "GET /apis/karpenter.sh/v1/nodeclaims",
        "GET /apis/karpenter.sh/v1/nodepools",
        "GET /apis/karpenter.k8s.aws/v1/ec2nodeclasses",
        "GET /apis/policy/v1/poddisruptionbudgets",
        "GET /api/v1/events?fieldSelector=involvedObject.kind=NodeClaim,involvedObject.name=trino-m7g-4kq8r",
        "GET /apis/apps/v1/namespaces/analytics/statefulsets/trino-worker",
        "GET /apis/apps/v1/deployments?labelSelector=app.kubernetes.io/name=karpenter",
        "GET /apis/apps/v1/daemonsets?labelSelector=app.kubernetes.io/name=aws-node-termination-handler",
        "kube-system/karpenter-6d8b7c9f4-2xk7p/controller.log",
        "kube-system/karpenter-6d8b7c9f4-9qv5m/controller.log",
    ] {
        assert!(run.has_document(label), "no {label} in {:#?}", run.labels());
    }
    // The pod's JSON is the API's, indented, and list items carry their kind as in
    // `kubectl get -o json`.
    assert!(run
        .document("GET /api/v1/namespaces/analytics/pods/trino-worker-0")
        .contains("\"phase\": \"Pending\""));
    assert!(run
        .document("GET /apis/karpenter.sh/v1/nodeclaims")
        .contains("\"kind\": \"NodeClaim\""));
    // Logs: both replicas, bounded by --since (the follower's only line is two hours old).
    let leader = run.document("kube-system/karpenter-6d8b7c9f4-2xk7p/controller.log");
    assert!(leader.contains("all requested instance types were unavailable during launch"));
    assert!(run
        .document("kube-system/karpenter-6d8b7c9f4-9qv5m/controller.log")
        .is_empty());
    let log = run
        .requests
        .iter()
        .find(|r| r.path.ends_with("karpenter-6d8b7c9f4-2xk7p/log"))
        .unwrap();
    assert_eq!(log.param("sinceSeconds"), Some("3600"));
    assert_eq!(log.param("container"), Some("controller"));
    assert!(log.param("limitBytes").is_some());
    // One wave for the pod, its events and the cluster-wide Karpenter facts (12 reads), then
    // the nominated NodeClaim's events, the owner and the two replicas' logs.
    assert_eq!(
        run.requests.len(),
        16,
        "{:#?}",
        run.requests.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
    assert_eq!(run.collection().requests, 16);
    assert_eq!(run.depth, 2);
}

/// A pod whose sandbox fails in the VPC CNI: the aws-node pod of its node (not another
/// node's) is found by label and field selector, and its log names the cause.
#[test]
fn a_cni_sandbox_failure_reads_the_aws_node_log_of_the_pods_node() {
    let (ns, name) = scenarios::SANDBOX_POD;
    let run = run(
        scenarios::sandbox_ip_exhausted().in_rounds(QUIET),
        pod(ns, name),
    );
    run.assert_read_only_and_selective();
    let label = format!(
        "GET /api/v1/pods?labelSelector=k8s-app=aws-node&fieldSelector=spec.nodeName={}",
        scenarios::SANDBOX_NODE
    );
    assert!(
        run.has_document(&label),
        "no {label} in {:#?}",
        run.labels()
    );
    assert!(
        run.has_document("kube-system/aws-node-4xk9z/aws-node.log"),
        "{:#?}",
        run.labels()
    );
    assert!(!run.labels().iter().any(|l| l.contains("aws-node-p8w2m")));
    assert_diagnosed(&run, &["KW213", "KW214"]);
    assert_not_diagnosed(&run, &["KW305"]);
}

/// Both Karpenter replicas crash at start-up (STS unreachable) and are caught running again:
/// only their previous instances' logs say why, and they are read in the same wave as the
/// current logs, from the end and without the `--since` window.
#[test]
fn a_restarted_karpenter_replica_has_its_previous_log_read() {
    let (ns, name) = scenarios::RESTARTED_POD;
    let run = run(
        scenarios::karpenter_restarted().in_rounds(QUIET),
        pod(ns, name),
    );
    run.assert_read_only_and_selective();
    assert_diagnosed(&run, &["KW102"]);
    for replica in [scenarios::LEADER, scenarios::FOLLOWER] {
        let current = run.document(&format!("kube-system/{replica}/controller.log"));
        assert!(!current.contains("connectivity check failed"), "{current}");
        let previous = run.document(&format!("kube-system/{replica}/controller.previous.log"));
        assert!(
            previous.contains("ec2 api connectivity check failed"),
            "{previous}"
        );
        let request = run
            .requests
            .iter()
            .find(|r| {
                r.path.ends_with(&format!("{replica}/log")) && r.param("previous") == Some("true")
            })
            .unwrap_or_else(|| panic!("no previous=true read of {replica}"));
        assert_eq!(request.param("container"), Some("controller"));
        assert_eq!(request.param("tailLines"), Some("10000"));
        assert_eq!(request.param("sinceSeconds"), None);
        assert!(request.param("limitBytes").is_some());
    }
    let report = run.report();
    let kw102 = report.diagnoses.iter().find(|d| d.id == "KW102").unwrap();
    assert!(
        kw102
            .evidence
            .iter()
            .all(|e| e.source.ends_with("controller.previous.log")),
        "{:#?}",
        kw102.evidence
    );
    assert!(
        run.collection().missing.is_empty(),
        "{:#?}",
        run.collection().missing
    );
    // Two more reads than without restarts, and no more round trips.
    assert_eq!(run.requests.len(), 17);
    assert_eq!(run.depth, 2);
}

/// Replicas that never restarted get no `previous=true` read (it could only answer 400).
#[test]
fn replicas_that_never_restarted_get_no_previous_read() {
    let (ns, name) = scenarios::ICE_POD;
    let run = run(scenarios::pending_ice(), pod(ns, name));
    assert!(
        !run.requests.iter().any(|r| r.param("previous").is_some()),
        "{:#?}",
        run.requests
    );
    assert!(!run.labels().iter().any(|l| l.ends_with(".previous.log")));
}

#[test]
fn zone_offering_mismatch_reads_the_volume_chain_in_three_round_trips() {
    let (ns, name) = scenarios::ZONE_POD;
    let run = run(scenarios::zone_offering().in_rounds(QUIET), pod(ns, name));
    run.assert_read_only_and_selective();
    assert_diagnosed(&run, &["KW202"]);
    assert_not_diagnosed(&run, &["KW200", "KW215"]);
    for label in [
        "GET /api/v1/namespaces/payments/persistentvolumeclaims/data-ledger-0",
        "GET /api/v1/persistentvolumes/pvc-3f1c2a9e-7b4d-4e8a-9c1f-5d2e6a7b8c90",
        "GET /apis/storage.k8s.io/v1/storageclasses/gp3",
        "GET /apis/apps/v1/namespaces/payments/statefulsets/ledger",
    ] {
        assert!(run.has_document(label), "no {label} in {:#?}", run.labels());
    }
    assert!(run
        .document("GET /api/v1/persistentvolumes/pvc-3f1c2a9e-7b4d-4e8a-9c1f-5d2e6a7b8c90")
        .contains("eu-west-1c"));
    assert_eq!(run.depth, 3, "pod -> PVC -> PV is the longest chain");
    assert_eq!(run.requests.len(), 18);
    assert!(
        run.collection().missing.is_empty(),
        "{:#?}",
        run.collection().missing
    );
}

#[test]
fn karpenter_is_found_by_label_in_a_namespace_of_its_own() {
    let (ns, name) = scenarios::ELSEWHERE_POD;
    let run = run(
        scenarios::karpenter_elsewhere().in_rounds(QUIET),
        pod(ns, name),
    );
    run.assert_read_only_and_selective();
    // The only explanation is in the log of the replica in platform-karpenter.
    assert_diagnosed(&run, &["KW202", "KW204"]);
    assert_not_diagnosed(&run, &["KW200"]);
    assert!(run
        .document("GET /apis/apps/v1/deployments?labelSelector=app.kubernetes.io/name=karpenter")
        .contains("platform-karpenter"));
    assert!(run
        .document("platform-karpenter/karpenter-6d8b7c9f4-2xk7p/controller.log")
        .contains("did not tolerate taint"));
    // The owner chain goes up to the Deployment: pod -> ReplicaSet -> Deployment.
    assert!(run.has_document("GET /apis/apps/v1/namespaces/coder/replicasets/workspace-7d9f8b6c5"));
    assert!(run.has_document("GET /apis/apps/v1/namespaces/coder/deployments/workspace"));
    assert_eq!(run.depth, 3);
    assert!(
        run.collection().missing.is_empty(),
        "{:#?}",
        run.collection().missing
    );
}

#[test]
fn karpenter_namespace_flag_scopes_the_lookup() {
    let (ns, name) = scenarios::ELSEWHERE_POD;
    let run = run_with(scenarios::karpenter_elsewhere(), pod(ns, name), |s| {
        s.karpenter_namespace = Some(scenarios::ELSEWHERE_NAMESPACE.into());
    });
    assert_eq!(
        run.requests_to("/apis/apps/v1/namespaces/platform-karpenter/deployments")
            .len(),
        1
    );
    assert_eq!(
        run.requests_to("/api/v1/namespaces/platform-karpenter/pods")
            .len(),
        1
    );
    assert!(run
        .requests_to("/apis/apps/v1/deployments")
        .iter()
        .all(|r| r
            .param("labelSelector")
            .unwrap()
            .contains("termination-handler")));
    assert_diagnosed(&run, &["KW204"]);

    // Looking in the wrong namespace says where it looked.
    let wrong = run_with(scenarios::karpenter_elsewhere(), pod(ns, name), |s| {
        s.karpenter_namespace = Some("karpenter".into());
    });
    let missing = wrong.missing("the Karpenter Deployment");
    assert!(
        missing.reason.contains("in namespace karpenter"),
        "{missing:?}"
    );
    assert_eq!(
        missing.command,
        "kubectl get deployments.apps -n karpenter -l app.kubernetes.io/name=karpenter -o yaml"
    );
    assert!(wrong
        .missing("Karpenter controller logs")
        .reason
        .contains("no Karpenter controller is running"));
}

#[test]
fn forbidden_logs_are_missing_with_the_rbac_rule_and_the_rest_is_diagnosed() {
    let (ns, name) = scenarios::ICE_POD;
    let run = run(scenarios::logs_forbidden(), pod(ns, name));
    run.assert_read_only_and_selective();
    let missing = &run.collection().missing;
    assert_eq!(missing.len(), 2, "one per replica: {missing:#?}");
    for fact in missing {
        assert!(
            fact.what
                .starts_with("Karpenter controller logs (kube-system/karpenter-6d8b7c9f4-"),
            "{fact:?}"
        );
        assert!(
            fact.reason
                .starts_with("forbidden (403): get pods/log in namespace kube-system was refused"),
            "{fact:?}"
        );
        assert!(
            fact.reason
                .contains(r#"{apiGroups: [""], resources: ["pods/log"], verbs: ["get"]}"#),
            "{fact:?}"
        );
        assert!(
            fact.command
                .starts_with("kubectl logs karpenter-6d8b7c9f4-"),
            "{fact:?}"
        );
        assert!(
            fact.command
                .ends_with(" -n kube-system -c controller --since=1h"),
            "{fact:?}"
        );
    }
    assert!(!run.labels().iter().any(|l| l.ends_with(".log")));
    // The NodeClaim's event still carries the insufficient-capacity error.
    assert_diagnosed(&run, &["KW215"]);
}

#[test]
fn a_hung_endpoint_times_out_alone() {
    let (ns, name) = scenarios::ICE_POD;
    let run = run_with(
        scenarios::endpoint_timeout(Duration::from_secs(60)),
        pod(ns, name),
        |s| {
            s.request_timeout = Some(Duration::from_secs(2));
        },
    );
    let missing = run.missing("the EC2NodeClasses");
    assert_eq!(missing.reason, "timed out after 2s (--request-timeout)");
    assert_eq!(
        missing.command,
        "kubectl get ec2nodeclasses.karpenter.k8s.aws -o yaml"
    );
    assert_eq!(run.collection().missing.len(), 1);
    assert!(
        run.elapsed < Duration::from_secs(30),
        "did not wait for the hung endpoint: {:?}",
        run.elapsed
    );
    assert_diagnosed(&run, &["KW215"]);
}

#[test]
fn server_errors_truncated_bodies_and_resets_become_missing_facts() {
    let (ns, name) = scenarios::ICE_POD;
    let scenario = scenarios::pending_ice()
        .with_fault(Fault::new(
            Matcher::Path("/apis/karpenter.sh/v1/nodepools".into()),
            FaultAction::Status {
                code: 500,
                reason: "InternalError".into(),
                message: "etcdserver: request timed out".into(),
            },
        ))
        .with_fault(Fault::new(
            Matcher::Path("/apis/karpenter.sh/v1/nodeclaims".into()),
            FaultAction::Truncate,
        ))
        .with_fault(Fault::new(
            Matcher::Prefix("/apis/policy/".into()),
            FaultAction::Reset,
        ));
    let run = run(scenario, pod(ns, name));
    assert_eq!(
        run.missing("the NodePools").reason,
        "the API server failed (500): etcdserver: request timed out"
    );
    assert!(
        run.missing("the NodeClaims")
            .reason
            .starts_with("truncated response: "),
        "{:?}",
        run.missing("the NodeClaims")
    );
    assert!(
        run.missing("the PodDisruptionBudgets")
            .reason
            .starts_with("connection failed: "),
        "{:?}",
        run.missing("the PodDisruptionBudgets")
    );
    assert_eq!(
        run.collection().missing.len(),
        3,
        "{:#?}",
        run.collection().missing
    );
    assert!(!run.has_document("GET /apis/karpenter.sh/v1/nodepools"));
    assert_diagnosed(&run, &["KW215"]);
}

#[test]
fn a_pod_that_does_not_exist_stops_with_the_apis_message() {
    let run = run(scenarios::pending_ice(), pod("analytics", "trino-worker-9"));
    match &run.result {
        Err(error @ CollectError::NotFound(message)) => {
            assert_eq!(
                message,
                "Error from server (NotFound): pods \"trino-worker-9\" not found"
            );
            assert_eq!(error.exit_code(), 2);
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[test]
fn the_contexts_namespace_is_the_default() {
    let target = karpenter_why_plugin::collect::Target::Pod {
        namespace: None,
        name: "checkout-7d4b9c6f8-k2xqp".into(),
    };
    // The kubeconfig written by the harness sets namespace `default`; the pod lives in `shop`.
    let run = run(scenarios::missing_crds(), target);
    assert!(
        matches!(&run.result, Err(CollectError::NotFound(m)) if m.contains("checkout-7d4b9c6f8-k2xqp")),
        "{:?}",
        run.result.as_ref().err()
    );
    assert_eq!(
        run.requests_to("/api/v1/namespaces/default/pods/checkout-7d4b9c6f8-k2xqp")
            .len(),
        1
    );
}

#[test]
fn without_karpenter_the_report_says_what_is_not_installed() {
    let (ns, name) = scenarios::SILENT_POD;
    let run = run(scenarios::missing_crds().in_rounds(QUIET), pod(ns, name));
    run.assert_read_only_and_selective();
    for what in ["the NodeClaims", "the NodePools"] {
        let fact = run.missing(what);
        assert!(
            fact.reason.contains(
                "the API group karpenter.sh is not served: Karpenter (its CRDs) is not installed"
            ),
            "{fact:?}"
        );
    }
    assert!(run
        .missing("the EC2NodeClasses")
        .reason
        .contains("karpenter.k8s.aws is not served"));
    assert!(run
        .missing("the Karpenter Deployment")
        .reason
        .contains("in any namespace"));
    assert!(run
        .missing("Karpenter controller logs")
        .reason
        .contains("no Karpenter controller is running"));
    // One discovery GET per group, however many lists needed it.
    assert_eq!(run.requests_to("/apis/karpenter.sh").len(), 1);
    assert_eq!(run.requests_to("/apis/karpenter.k8s.aws").len(), 1);
    assert!(run.depth <= 2);
    assert_diagnosed(&run, &["KW200"]);
}

#[test]
fn old_karpenter_apis_are_named() {
    let (ns, name) = scenarios::ICE_POD;
    let run = run(scenarios::v1beta1_only(), pod(ns, name));
    let fact = run.missing("the NodeClaims");
    assert!(
        fact.reason
            .contains("only karpenter.sh/v1beta1 is served, not karpenter.sh/v1"),
        "{fact:?}"
    );
    assert!(fact.reason.contains("older than v1.0"), "{fact:?}");
    assert!(run
        .missing("the EC2NodeClasses")
        .reason
        .contains("only karpenter.k8s.aws/v1beta1 is served"));
}

#[test]
fn an_unreachable_cluster_is_one_line_and_exit_3() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let run = run_with(Scenario::default(), pod("shop", "web-0"), |s| {
        let dir = s
            .kubeconfig
            .as_ref()
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf();
        let text = std::fs::read_to_string(s.kubeconfig.as_ref().unwrap()).unwrap();
        let rewritten: String = text
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("server:") {
                    format!("    server: http://127.0.0.1:{port}")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let path = dir.join("closed-kubeconfig");
        std::fs::write(&path, rewritten).unwrap();
        s.kubeconfig = Some(path);
    });
    match &run.result {
        Err(error @ CollectError::Unreachable(line)) => {
            assert_eq!(error.exit_code(), 3);
            assert!(
                line.starts_with(&format!(
                    "cannot reach the cluster at http://127.0.0.1:{port}: connection failed"
                )),
                "{line}"
            );
            assert!(!line.contains('\n'));
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[test]
fn a_failing_exec_plugin_is_one_line_and_exit_3() {
    let server = karpenter_why_tests::fake_api::FakeApi::start(Scenario::default());
    let dir = live_common::TempDir::new("exec");
    let plugin = dir.0.join("aws");
    std::fs::write(
        &plugin,
        "#!/bin/sh\necho 'Unable to locate credentials. You can configure credentials by running \"aws configure\".' >&2\nexit 255\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&plugin, std::fs::Permissions::from_mode(0o755)).unwrap();
    let kubeconfig = dir.0.join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: eks\n  cluster:\n    server: {}\ncontexts:\n- name: eks\n  context:\n    cluster: eks\n    user: eks\ncurrent-context: eks\nusers:\n- name: eks\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1beta1\n      command: {}\n      args: [eks, get-token, --cluster-name, prod]\n      interactiveMode: Never\n",
            server.url(),
            plugin.display()
        ),
    )
    .unwrap();
    let settings = karpenter_why_plugin::collect::Settings {
        kubeconfig: Some(kubeconfig),
        ..Default::default()
    };
    let result = karpenter_why_plugin::collect::collect(&settings, &pod("shop", "web-0"));
    match result {
        Err(error @ CollectError::Unreachable(_)) => {
            let line = error.to_string();
            assert_eq!(error.exit_code(), 3);
            assert!(
                line.starts_with(&format!(
                    "cannot authenticate to {}: exec plugin",
                    server.url()
                )),
                "{line}"
            );
            assert!(line.contains("eks get-token --cluster-name prod"), "{line}");
            assert!(line.ends_with("Unable to locate credentials. You can configure credentials by running \"aws configure\"."), "{line}");
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    assert!(
        server.requests().is_empty(),
        "nothing was sent without credentials"
    );
}

#[test]
fn node_termination_handler_is_found_beside_karpenter() {
    let (ns, name) = scenarios::ICE_POD;
    let run = run(scenarios::with_nth(scenarios::pending_ice()), pod(ns, name));
    let daemonsets = run.document(
        "GET /apis/apps/v1/daemonsets?labelSelector=app.kubernetes.io/name=aws-node-termination-handler",
    );
    assert!(
        daemonsets.contains("\"ENABLE_REBALANCE_DRAINING\""),
        "{daemonsets}"
    );
    // NTH draining on rebalance next to spot nodes.
    assert_diagnosed(&run, &["KW308", "KW215"]);
    let without = run_with(scenarios::pending_ice(), pod(ns, name), |_| {});
    assert_not_diagnosed(&without, &["KW308"]);
}
