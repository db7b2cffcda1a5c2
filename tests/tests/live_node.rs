//! `kubectl karpenter-why node NODE` and `nodeclaim NAME` against the fake API server.

mod live_common;

use std::time::Duration;

use karpenter_why_plugin::collect::{CollectError, Target};
use karpenter_why_tests::fake_api::scenarios;
use live_common::{assert_diagnosed, run};

/// Round mode's quiet time: a wave of concurrent requests is answered together once none
/// has arrived for this long, so the round count is exact even on a loaded machine.
const QUIET: Duration = Duration::from_millis(250);

fn node(name: &str) -> Target {
    Target::Node { name: name.into() }
}

fn nodeclaim(name: &str) -> Target {
    Target::NodeClaim { name: name.into() }
}

#[test]
fn node_blocked_by_a_pdb() {
    let run = run(
        scenarios::pdb_blocked_node().in_rounds(QUIET),
        node(scenarios::PDB_NODE),
    );
    run.assert_read_only_and_selective();
    assert_eq!(
        run.collection().subject,
        format!("Node {}", scenarios::PDB_NODE)
    );
    for label in [
        format!("GET /api/v1/nodes/{}", scenarios::PDB_NODE),
        format!("GET /api/v1/events?fieldSelector=involvedObject.kind=Node,involvedObject.name={}", scenarios::PDB_NODE),
        format!("GET /api/v1/pods?fieldSelector=spec.nodeName={}", scenarios::PDB_NODE),
        "GET /apis/policy/v1/poddisruptionbudgets".to_string(),
        "GET /apis/karpenter.sh/v1/nodeclaims".to_string(),
        "GET /api/v1/events?fieldSelector=involvedObject.kind=NodeClaim,involvedObject.name=default-m2x8c".to_string(),
    ] {
        assert!(run.has_document(&label), "no {label} in {:#?}", run.labels());
    }
    // Only the pods of this node, with their annotations; the PDB with its status.
    let pods = run.document(&format!(
        "GET /api/v1/pods?fieldSelector=spec.nodeName={}",
        scenarios::PDB_NODE
    ));
    assert!(pods.contains("ingress-nginx-controller-5c9f7d8b6-h4k2m"));
    assert!(!pods.contains("ingress-nginx-controller-5c9f7d8b6-x7p9q"));
    assert!(run
        .document("GET /apis/policy/v1/poddisruptionbudgets")
        .contains("\"disruptionsAllowed\": 0"));
    assert!(
        run.collection().missing.is_empty(),
        "{:#?}",
        run.collection().missing
    );
    assert_eq!(
        run.depth, 2,
        "the NodeClaim's events wait for the NodeClaim list"
    );
    assert_eq!(run.requests.len(), 16);
    assert_diagnosed(&run, &["KW401"]);
}

/// A node NotReady because its CNI cannot start: the node's own aws-node pod is not ready, so
/// its log is read, and it names the cause the node's condition does not.
#[test]
fn a_node_whose_cni_cannot_start_gets_its_aws_node_log_read() {
    let run = run(
        scenarios::cni_denied_node().in_rounds(QUIET),
        node(scenarios::CNI_NODE),
    );
    run.assert_read_only_and_selective();
    let log = run
        .labels()
        .into_iter()
        .find(|l| l.contains(scenarios::CNI_POD) && l.ends_with(".log"))
        .unwrap_or_else(|| {
            panic!(
                "no aws-node log read: {:#?} {:#?}",
                run.labels(),
                run.collection().missing
            )
        });
    assert_eq!(
        log,
        format!("kube-system/{}/aws-node.log", scenarios::CNI_POD)
    );
    assert!(run.document(&log).contains("UnauthorizedOperation"));
    // Waiting in CrashLoopBackOff, the plain read already returns the instance that ended: no
    // second read of the same lines.
    assert!(
        !run.requests.iter().any(|r| r.param("previous").is_some()),
        "{:#?}",
        run.requests
    );
    assert_diagnosed(&run, &["KW305"]);
    let report = run.report();
    let kw305 = report.diagnoses.iter().find(|d| d.id == "KW305").unwrap();
    assert!(
        kw305
            .summary
            .contains("AWS denies ipamd ec2:DescribeNetworkInterfaces"),
        "{}",
        kw305.summary
    );
}

/// aws-node caught running again between two crashes: its current log holds only start-up
/// lines, the denied EC2 call is in the previous instance's log, which is read beside it.
#[test]
fn an_aws_node_started_again_has_its_previous_log_read() {
    let run = run(
        scenarios::cni_restarted_node().in_rounds(QUIET),
        node(scenarios::CNI_NODE),
    );
    run.assert_read_only_and_selective();
    let current = run.document(&format!("kube-system/{}/aws-node.log", scenarios::CNI_POD));
    assert!(!current.contains("UnauthorizedOperation"), "{current}");
    let previous = run.document(&format!(
        "kube-system/{}/aws-node.previous.log",
        scenarios::CNI_POD
    ));
    assert!(previous.contains("UnauthorizedOperation"), "{previous}");
    assert_diagnosed(&run, &["KW305"]);
    let report = run.report();
    let kw305 = report.diagnoses.iter().find(|d| d.id == "KW305").unwrap();
    assert!(
        kw305
            .summary
            .contains("AWS denies ipamd ec2:DescribeNetworkInterfaces"),
        "{}",
        kw305.summary
    );
    assert!(
        kw305
            .evidence
            .iter()
            .any(|e| e.source.ends_with("aws-node.previous.log")),
        "{:#?}",
        kw305.evidence
    );
    assert!(
        run.collection().missing.is_empty(),
        "{:#?}",
        run.collection().missing
    );
    assert_eq!(
        run.depth, 2,
        "the previous log is read beside the current one"
    );
}

#[test]
fn nodeclaim_not_initialized() {
    let run = run(
        scenarios::nodeclaim_not_initialized().in_rounds(QUIET),
        nodeclaim(scenarios::UNINITIALIZED_CLAIM),
    );
    run.assert_read_only_and_selective();
    assert_eq!(run.collection().subject, "NodeClaim gpu-7c2lq");
    for label in [
        "GET /apis/karpenter.sh/v1/nodeclaims/gpu-7c2lq",
        "GET /api/v1/events?fieldSelector=involvedObject.kind=NodeClaim,involvedObject.name=gpu-7c2lq",
        "GET /api/v1/nodes/ip-10-0-12-34.ec2.internal",
        "GET /api/v1/events?fieldSelector=involvedObject.kind=Node,involvedObject.name=ip-10-0-12-34.ec2.internal",
        "GET /apis/karpenter.sh/v1/nodepools",
        "GET /apis/karpenter.k8s.aws/v1/ec2nodeclasses",
    ] {
        assert!(run.has_document(label), "no {label} in {:#?}", run.labels());
    }
    assert!(run
        .document("GET /apis/karpenter.sh/v1/nodeclaims/gpu-7c2lq")
        .contains("Resource \\\"nvidia.com/gpu\\\" was requested but not registered"));
    assert!(
        run.collection().missing.is_empty(),
        "{:#?}",
        run.collection().missing
    );
    assert_eq!(
        run.depth, 2,
        "the node waits for the NodeClaim's status.nodeName"
    );
    assert_diagnosed(&run, &["KW306"]);
}

#[test]
fn a_missing_node_or_nodeclaim_is_exit_2() {
    let missing_node = run(
        scenarios::pdb_blocked_node(),
        node("ip-10-9-9-9.eu-west-1.compute.internal"),
    );
    assert_eq!(
        missing_node.result.as_ref().err(),
        Some(&CollectError::NotFound("Error from server (NotFound): nodes \"ip-10-9-9-9.eu-west-1.compute.internal\" not found".into()))
    );
    let missing_claim = run(scenarios::pdb_blocked_node(), nodeclaim("default-zzzzz"));
    assert_eq!(
        missing_claim.result.as_ref().err(),
        Some(&CollectError::NotFound(
            "Error from server (NotFound): nodeclaims.karpenter.sh \"default-zzzzz\" not found"
                .into()
        ))
    );
    // Without Karpenter's CRDs the answer says so rather than "not found".
    let no_crds = run(scenarios::missing_crds(), nodeclaim("default-zzzzz"));
    match &no_crds.result {
        Err(error @ CollectError::NotFound(message)) => {
            assert_eq!(error.exit_code(), 2);
            assert!(
                message.contains("Karpenter (its CRDs) is not installed"),
                "{message}"
            );
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
}
