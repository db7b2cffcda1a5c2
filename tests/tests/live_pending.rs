//! `kubectl karpenter-why pending [-A|-n NS]`: Pending pods through a field selector, paged.

mod live_common;

use karpenter_why_plugin::collect::Target;
use karpenter_why_tests::fake_api::scenarios;
use live_common::{assert_diagnosed, run};

#[test]
fn pending_pods_of_one_namespace_come_through_a_field_selector() {
    let run = run(
        scenarios::pending_ice(),
        Target::Pending {
            namespace: Some("analytics".into()),
            all: false,
        },
    );
    run.assert_read_only_and_selective();
    assert_eq!(run.collection().subject, "Pending pods in analytics");
    let list = run.requests_to("/api/v1/namespaces/analytics/pods");
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].param("fieldSelector"), Some("status.phase=Pending"));
    assert_eq!(list[0].param("limit"), Some("500"));
    let warnings = run.requests_to("/api/v1/namespaces/analytics/events");
    let selectors: Vec<&str> = warnings
        .iter()
        .filter_map(|r| r.param("fieldSelector"))
        .collect();
    assert!(
        selectors.contains(&"involvedObject.kind=Pod,type=Warning"),
        "{selectors:?}"
    );
    assert!(
        selectors.contains(&"involvedObject.kind=Pod,reason=Nominated"),
        "{selectors:?}"
    );
    assert!(run
        .document("GET /api/v1/namespaces/analytics/pods?fieldSelector=status.phase=Pending")
        .contains("trino-worker-0"));
    assert_diagnosed(&run, &["KW215"]);
}

#[test]
fn all_namespaces_page_through_limit_and_continue() {
    let run = run(
        scenarios::many_pending("batch", 1100),
        Target::Pending {
            namespace: None,
            all: true,
        },
    );
    run.assert_read_only_and_selective();
    assert_eq!(run.collection().subject, "Pending pods in all namespaces");
    let pages = run.requests_to("/api/v1/pods");
    let pending: Vec<_> = pages
        .iter()
        .filter(|r| r.param("fieldSelector") == Some("status.phase=Pending"))
        .collect();
    assert_eq!(pending.len(), 3, "1101 pods in pages of 500");
    assert_eq!(pending[0].param("continue"), None);
    assert!(pending[1].param("continue").is_some());
    let label = "GET /api/v1/pods?fieldSelector=status.phase=Pending";
    assert!(run.has_document(label));
    assert!(run.has_document(&format!("{label} (page 2)")));
    assert!(run.has_document(&format!("{label} (page 3)")));
    let items: usize = run
        .collection()
        .documents
        .iter()
        .filter(|d| d.label.starts_with(label))
        .map(|d| {
            serde_json::from_str::<serde_json::Value>(&d.text).unwrap()["items"]
                .as_array()
                .unwrap()
                .len()
        })
        .sum();
    assert_eq!(items, 1101);
}

#[test]
fn the_contexts_namespace_is_used_without_flags() {
    let run = run(
        scenarios::pending_ice(),
        Target::Pending {
            namespace: None,
            all: false,
        },
    );
    assert_eq!(run.collection().subject, "Pending pods in default");
    assert_eq!(run.requests_to("/api/v1/namespaces/default/pods").len(), 1);
}
