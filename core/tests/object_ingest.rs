//! Objects (YAML, JSON, describe printouts of Karpenter resources) through the whole engine:
//! the segmenter routes them, the object ingest types them, the rules diagnose from them.

use karpenter_why_core::facts::{Collected, MessageOrigin};
use karpenter_why_core::{analyze, ingest, Document, Options, Report};

fn ids(report: &Report) -> Vec<&'static str> {
    let mut ids: Vec<&'static str> = report.diagnoses.iter().map(|d| d.id).collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

const NODEPOOL_YAML: &str = "apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    spec:
      nodeClassRef:
        group: karpenter.k8s.aws
        kind: EC2NodeClass
        name: default
      requirements:
      - key: karpenter.sh/capacity-type
        operator: In
        values: [spot]
status:
  conditions:
  - type: NodeClassReady
    status: \"False\"
    reason: UnhealthyDependents
    message: SubnetsReady=False
";

const NODECLASS_JSON: &str = r#"{
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {
        "name": "default"
    },
    "spec": {
        "amiSelectorTerms": [{"alias": "al2023@latest"}],
        "role": "KarpenterNodeRole-demo",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo-typo"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "demo"}}]
    },
    "status": {
        "conditions": [
            {
                "type": "SubnetsReady",
                "status": "False",
                "reason": "SubnetsNotFound",
                "message": "SubnetSelector did not match any Subnets"
            },
            {
                "type": "Ready",
                "status": "False",
                "reason": "UnhealthyDependents",
                "message": "SubnetsReady=False"
            }
        ]
    }
}
"#;

const NODECLAIM_DESCRIBE: &str = "Name:         default-x9k2m
Namespace:
Labels:       karpenter.k8s.aws/ec2nodeclass=default
              karpenter.sh/nodepool=default
Annotations:  <none>
API Version:  karpenter.sh/v1
Kind:         NodeClaim
Spec:
  Node Class Ref:
    Group:  karpenter.k8s.aws
    Kind:   EC2NodeClass
    Name:   default
Status:
  Conditions:
    Last Transition Time:  2025-06-03T07:11:58Z
    Message:               object is awaiting reconciliation
    Reason:                AwaitingReconciliation
    Status:                Unknown
    Type:                  Launched
Events:
  Type    Reason             Age   From       Message
  ----    ------             ----  ----       -------
  Normal  DisruptionBlocked  14m   karpenter  Cannot disrupt NodeClaim: state node doesn't contain both a node and a nodeclaim
";

const EVENTS_JSON: &str = r#"{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Event","metadata":{"name":"ip-10-0-1-2.17b","namespace":"default"},"involvedObject":{"kind":"Node","name":"ip-10-0-1-2.ec2.internal"},"reason":"DisruptionBlocked","message":"Pdb \"ingress-nginx/ingress-nginx-controller\" prevents pod evictions","source":{"component":"karpenter"},"type":"Normal","count":3,"lastTimestamp":"2025-03-01T10:00:00Z"}]}
"#;

fn parts() -> Vec<(&'static str, &'static str)> {
    vec![
        ("nodepool.yaml", NODEPOOL_YAML),
        ("ec2nodeclass.json", NODECLASS_JSON),
        ("describe-nodeclaim.txt", NODECLAIM_DESCRIBE),
        ("events.json", EVENTS_JSON),
    ]
}

#[test]
fn every_notation_is_routed_and_typed() {
    let documents: Vec<Document> = parts()
        .into_iter()
        .map(|(label, text)| Document::new(label, text))
        .collect();
    let facts = ingest::ingest(&documents);
    assert!(facts.input_errors.is_empty(), "{:?}", facts.input_errors);
    assert_eq!(facts.nodepools[0].nodeclass_ref.as_deref(), Some("default"));
    assert_eq!(facts.nodeclasses[0].ami_alias(), Some("al2023@latest"));
    assert_eq!(facts.nodeclaims[0].nodepool.as_deref(), Some("default"));
    assert_eq!(
        facts.events.len(),
        2,
        "the JSON event and the describe Events row"
    );
    for kind in [
        Collected::NodePools,
        Collected::NodeClasses,
        Collected::NodeClaims,
    ] {
        assert!(facts.has(kind), "{kind:?}");
    }
    let subnets = facts
        .messages
        .iter()
        .find(|m| m.reason.as_deref() == Some("SubnetsNotFound"))
        .unwrap();
    assert_eq!(subnets.origin, MessageOrigin::Condition);
    assert_eq!(subnets.evidence.source, "ec2nodeclass.json");
    assert_eq!(subnets.evidence.line, 19);
    assert!(!facts
        .messages
        .iter()
        .any(|m| m.origin == MessageOrigin::Unrecognised
            && m.evidence.source != "describe-nodeclaim.txt"));
}

#[test]
fn objects_drive_the_rules() {
    let documents: Vec<Document> = parts()
        .into_iter()
        .map(|(label, text)| Document::new(label, text))
        .collect();
    let report = analyze(&documents, &Options::default());
    let found = ids(&report);
    for id in ["KW401", "KW501", "KW411"] {
        assert!(found.contains(&id), "{id} missing from {found:?}");
    }
    let kw501 = report.diagnoses.iter().find(|d| d.id == "KW501").unwrap();
    assert!(kw501.summary.contains("default"), "{}", kw501.summary);
    assert!(kw501
        .evidence
        .iter()
        .any(|e| e.source == "ec2nodeclass.json" && e.line == 19));
    let kw401 = report.diagnoses.iter().find(|d| d.id == "KW401").unwrap();
    assert!(kw401
        .evidence
        .iter()
        .any(|e| e.source == "events.json" && e.count == 3));
}

#[test]
fn one_mixed_paste_gives_what_the_separate_files_give() {
    let separate: Vec<Document> = parts()
        .into_iter()
        .map(|(label, text)| Document::new(label, text))
        .collect();
    let mut pasted = String::new();
    for (label, text) in parts() {
        pasted.push_str(&format!("$ cat {label}\n{text}\n"));
    }
    let alone = analyze(&separate, &Options::default());
    let mixed = analyze(&[Document::new("paste", pasted)], &Options::default());
    assert!(mixed.input_errors.is_empty(), "{:?}", mixed.input_errors);
    assert_eq!(ids(&alone), ids(&mixed));
    let summaries = |r: &Report| -> Vec<String> {
        let mut s: Vec<String> = r
            .diagnoses
            .iter()
            .map(|d| format!("{} {}", d.id, d.summary))
            .collect();
        s.sort();
        s
    };
    assert_eq!(summaries(&alone), summaries(&mixed));
}

#[test]
fn a_broken_document_is_an_input_error_and_the_rest_is_diagnosed() {
    let yaml = format!("{NODEPOOL_YAML}---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: [unclosed\n");
    let report = analyze(&[Document::new("broken.yaml", yaml)], &Options::default());
    assert_eq!(report.input_errors.len(), 1, "{:?}", report.input_errors);
    let error = &report.input_errors[0];
    assert_eq!(error.source, "broken.yaml");
    assert!(error.line >= 26, "{error:?}");
    assert!(
        error.message.starts_with("invalid YAML document 2 of 2"),
        "{}",
        error.message
    );
    assert!(
        !report.diagnoses.is_empty(),
        "the NodePool is still diagnosed"
    );
}
