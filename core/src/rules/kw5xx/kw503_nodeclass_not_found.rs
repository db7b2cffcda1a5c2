//! KW503 nodeclass-not-found.

use crate::document::Evidence;
use crate::facts::{Collected, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::message_nodepool;
use crate::rules::kw4xx::disruption::{subject_of, unescaped};
use crate::rules::kw5xx::nodeclass::{contains_word, undone_transition};
use crate::rules::names::closest;
use crate::rules::text::cluster_name_or_placeholder;
use crate::rules::text::{contains_any, quoted_after};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW503",
    slug: "nodeclass-not-found",
    title: "The NodePool references an EC2NodeClass that does not exist",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
A NodePool's `spec.template.spec.nodeClassRef` names an EC2NodeClass the cluster does not have
(or one being deleted). The NodePool is not ready (KW208) and Karpenter launches nothing from it.

Signals: NodePool condition `NodeClassReady=False` with reason `NodeClassNotFound` (`NodeClass
not found on cluster`) or `NodeClassTerminating` (`NodeClass is Terminating`), the warning
event `Failed resolving NodeClass` (`Failed resolving AWSNodeTemplate` before v0.32), the API
error `ec2nodeclasses.karpenter.k8s.aws "<name>" not found` in the logs, and a NodePool whose
`nodeClassRef` names an EC2NodeClass absent from input that lists the EC2NodeClasses (not
`kubectl get ec2nodeclass <name>` of another one, and not when the NodePool's own status shows
the reference resolving: `NodeClassReady` with another reason, or `Ready=True`).

## Why it happens
A typo in `nodeClassRef.name`, the EC2NodeClass not applied yet (or applied to another
cluster), deleted while NodePools still use it, or a chart or GitOps tool that renamed it.

## How to fix
Create the EC2NodeClass with that name, or point `nodeClassRef.name` at one that exists
(`kubectl get ec2nodeclasses`). When the input lists an EC2NodeClass whose name is a near match
of the reference (case, separators, a suffix, one or two letters), the reference is most likely
a typo: the report shows the patch pointing it there. A terminating one waits for its NodeClaims to go
(`WaitingOnNodeClaimTermination`): recreate it or move the NodePool to another.
"#,
};

const SIGNALS: &[&str] = &[
    "nodeclassnotfound",
    "nodeclass not found on cluster",
    "nodeclassterminating",
    "nodeclass is terminating",
    "failed resolving nodeclass",
    "failed resolving awsnodetemplate",
    "ec2nodeclasses.karpenter.k8s.aws",
    "ec2nodeclass.karpenter.k8s.aws",
];

struct Group<'a> {
    nodepool: Option<String>,
    nodeclass: Option<String>,
    terminating: bool,
    messages: Vec<&'a Message>,
    evidence: Vec<Evidence>,
    inferred: bool,
}

fn is_signal(text: &str) -> bool {
    contains_word(text, "NodeClassNotFound")
        || contains_word(text, "NodeClassTerminating")
        || contains_any(
            text,
            &[
                "NodeClass not found on cluster",
                "NodeClass is Terminating",
                "Failed resolving NodeClass",
                "Failed resolving AWSNodeTemplate",
            ],
        )
        || (contains_any(
            text,
            &[
                "ec2nodeclasses.karpenter.k8s.aws \"",
                "EC2NodeClass.karpenter.k8s.aws \"",
                "awsnodetemplates.karpenter.k8s.aws \"",
            ],
        ) && contains_any(text, &["not found"]))
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut groups: Vec<Group<'_>> = Vec::new();
    for m in &facts.messages {
        let t = unescaped(&m.text);
        if !is_signal(&t) || undone_transition(facts, m) {
            continue;
        }
        let nodepool = message_nodepool(facts, m);
        let named = quoted_after(&t, "ec2nodeclasses.karpenter.k8s.aws")
            .or_else(|| quoted_after(&t, "EC2NodeClass.karpenter.k8s.aws"))
            .or_else(|| quoted_after(&t, "awsnodetemplates.karpenter.k8s.aws"));
        let nodeclass = named.or_else(|| {
            nodepool
                .as_deref()
                .and_then(|np| facts.nodepool(np))
                .and_then(|p| p.nodeclass_ref.clone())
        });
        let terminating = contains_any(&t, &["Terminating"]);
        let i = match groups
            .iter()
            .position(|g| g.nodepool == nodepool && g.nodeclass == nodeclass)
        {
            Some(i) => i,
            None => {
                groups.push(Group {
                    nodepool,
                    nodeclass,
                    terminating,
                    messages: Vec::new(),
                    evidence: Vec::new(),
                    inferred: false,
                });
                groups.len() - 1
            }
        };
        groups[i].terminating |= terminating;
        groups[i].messages.push(m);
    }
    // Typed NodePools: the condition itself, or a reference the listed EC2NodeClasses lack.
    let classes_listed = classes_listed(facts);
    for np in &facts.nodepools {
        let cond = np.conditions.iter().find(|c| {
            c.condition_type == "NodeClassReady"
                && c.status == "False"
                && matches!(
                    c.reason.as_deref(),
                    Some("NodeClassNotFound") | Some("NodeClassTerminating")
                )
        });
        // The NodePool's own status says its reference resolves: NodeClassReady copies the
        // EC2NodeClass's readiness (any reason but NotFound / Terminating means it exists),
        // and a Ready NodePool has a ready EC2NodeClass.
        let resolves = np.conditions.iter().any(|c| {
            (c.condition_type == "NodeClassReady"
                && !matches!(
                    c.reason.as_deref(),
                    Some("NodeClassNotFound") | Some("NodeClassTerminating")
                )
                && (c.status == "True" || c.status == "False"))
                || (c.condition_type == "Ready" && c.status == "True")
        });
        let missing = classes_listed
            && !resolves
            && np
                .nodeclass_ref
                .as_deref()
                .is_some_and(|r| facts.nodeclass(r).is_none());
        if cond.is_none() && !missing {
            continue;
        }
        let name = Some(np.meta.name.clone());
        let i = match groups
            .iter()
            .position(|g| g.nodepool == name || (g.nodepool.is_none() && groups.len() == 1))
        {
            Some(i) => i,
            None => {
                groups.push(Group {
                    nodepool: name.clone(),
                    nodeclass: None,
                    terminating: false,
                    messages: Vec::new(),
                    evidence: Vec::new(),
                    inferred: cond.is_none(),
                });
                groups.len() - 1
            }
        };
        let g = &mut groups[i];
        g.nodepool = name;
        if g.nodeclass.is_none() {
            g.nodeclass = np.nodeclass_ref.clone();
        }
        if let Some(c) = cond {
            g.terminating |= c.reason.as_deref() == Some("NodeClassTerminating");
            g.evidence.extend(c.evidence.clone());
        }
        g.evidence.extend(np.meta.evidence.clone());
    }
    // `Failed resolving NodeClass` names nothing: it belongs with the one named problem the
    // input shows, not beside it.
    if groups.len() > 1 {
        if let Some(i) = groups
            .iter()
            .position(|g| g.nodepool.is_none() && g.nodeclass.is_none())
        {
            let anonymous = groups.remove(i);
            if groups.len() == 1 {
                groups[0].messages.splice(0..0, anonymous.messages);
                groups[0].terminating |= anonymous.terminating;
            } else {
                groups.insert(i, anonymous);
            }
        }
    }
    groups.iter().map(|g| diagnose(facts, g)).collect()
}

/// Whether the input lists the cluster's EC2NodeClasses (a list, or `No resources found`), so
/// that a reference it lacks is missing.
fn classes_listed(facts: &Facts) -> bool {
    let listed_empty = facts.empty_lists.iter().any(|e| {
        e.resource
            .as_deref()
            .is_some_and(|r| r.starts_with("ec2nodeclass"))
    });
    // `kubectl get ec2nodeclass <name>` shows that one, not every EC2NodeClass: a reference to
    // another one is not missing because the paste lacks it.
    let class_commands: Vec<_> = facts
        .commands
        .iter()
        .filter(|c| {
            c.tool == "kubectl"
                && c.kinds
                    .iter()
                    .any(|k| k == "EC2NodeClass" || k == "AWSNodeTemplate")
        })
        .collect();
    let only_named_fetches =
        !class_commands.is_empty() && class_commands.iter().all(|c| c.name.is_some());
    listed_empty
        || ((!facts.nodeclasses.is_empty() || facts.has(Collected::NodeClasses))
            && !only_named_fetches)
}

/// Before v0.32 a Provisioner's `spec.providerRef` named an AWSNodeTemplate.
fn is_legacy(facts: &Facts, g: &Group<'_>) -> bool {
    g.messages
        .iter()
        .any(|m| contains_any(&unescaped(&m.text), &["AWSNodeTemplate"]))
        || (g.nodeclass.is_none()
            && !facts.nodeclasses.is_empty()
            && facts.nodeclasses.iter().all(|c| c.is_aws_node_template))
}

fn diagnose_legacy(g: &Group<'_>) -> Diagnosis {
    let p = g.nodepool.as_deref().unwrap_or("<provisioner>");
    let target = match g.nodeclass.as_deref() {
        Some(n) => format!("AWSNodeTemplate {n}"),
        None => "an AWSNodeTemplate".to_string(),
    };
    let summary = format!(
        "Provisioner {p} references {target} (spec.providerRef) that Karpenter cannot find, so it launches nothing from that Provisioner (Karpenter before v0.32)."
    );
    let t = g.nodeclass.as_deref().unwrap_or("<awsnodetemplate>");
    let steps = vec![
        Remediation::command(
            "List the AWSNodeTemplates that exist and the reference the Provisioner holds:",
            format!(
                "kubectl get awsnodetemplates && kubectl get provisioner {p} -o jsonpath='{{.spec.providerRef}}{{\"\\n\"}}'"
            ),
        ),
        Remediation::command(
            "Point the Provisioner at an existing AWSNodeTemplate:",
            format!(
                "kubectl patch provisioner {p} --type merge -p '{{\"spec\":{{\"providerRef\":{{\"name\":\"<existing-awsnodetemplate>\"}}}}}}'"
            ),
        ),
        Remediation::yaml(
            format!("Or create AWSNodeTemplate {t}:"),
            format!(
                "apiVersion: karpenter.k8s.aws/v1alpha1\nkind: AWSNodeTemplate\nmetadata:\n  name: {t}\nspec:\n  subnetSelector:\n    karpenter.sh/discovery: <cluster-name>\n  securityGroupSelector:\n    karpenter.sh/discovery: <cluster-name>\n"
            ),
        ),
    ];
    let mut d = Diagnosis::new(&META, summary)
        .with_messages(g.messages.iter().copied())
        .with_evidence(g.evidence.clone())
        .with_related(&["KW208"])
        .with_remediation(steps);
    if let Some(n) = &g.nodepool {
        d = d.with_object(Some(&ObjectRef::new("Provisioner", None, n)));
    }
    d
}

fn diagnose(facts: &Facts, g: &Group<'_>) -> Diagnosis {
    if is_legacy(facts, g) {
        return diagnose_legacy(g);
    }
    let claim = g.messages.iter().find_map(|m| {
        subject_of(m)
            .filter(|s| s.kind == "NodeClaim")
            .map(|s| s.name)
    });
    let np_label = g
        .nodepool
        .as_deref()
        .map(|n| format!("NodePool {n}"))
        .unwrap_or_else(|| "A NodePool".to_string());
    let nc = g.nodeclass.as_deref();
    let state = if g.terminating {
        "is being deleted (NodeClassTerminating)"
    } else {
        "does not exist on the cluster"
    };
    let target = match nc {
        Some(n) => format!("EC2NodeClass {n}, which {state}"),
        None => format!("an EC2NodeClass that {state}"),
    };
    let mut summary = format!(
        "{np_label} references {target}: the NodePool is not ready (KW208) and Karpenter launches nothing from it."
    );
    let typo = typo_for(facts, g);
    let listed = classes_listed(facts);
    let existing: Vec<&str> = facts
        .nodeclasses
        .iter()
        .filter(|c| !c.is_aws_node_template)
        .map(|c| c.meta.name.as_str())
        .collect();
    if let (Some(near), Some(n)) = (typo, nc) {
        summary.push_str(&format!(
            " The input has EC2NodeClass {near}, a near match: {n} is probably a typo for {near} in the nodeClassRef."
        ));
    } else if g.inferred {
        let list = if existing.is_empty() {
            "none".to_string()
        } else {
            existing.join(", ")
        };
        summary.push_str(&format!(
            " Inferred from the input's EC2NodeClasses ({list}), which lack it."
        ));
    } else if listed && !existing.is_empty() {
        summary.push_str(&format!(
            " The input's EC2NodeClasses are {}.",
            existing.join(", ")
        ));
    }
    // `kubectl get ec2nodeclasses` said `No resources found`: there is none to point at.
    let empty_list = facts.nodeclasses.is_empty().then(|| {
        facts.empty_lists.iter().find(|e| {
            e.resource
                .as_deref()
                .is_some_and(|r| r.starts_with("ec2nodeclass"))
        })
    });
    let empty_list = empty_list.flatten();
    if empty_list.is_some() && typo.is_none() {
        summary.push_str(" The cluster has no EC2NodeClass at all: create one.");
    }
    let np = g.nodepool.as_deref().unwrap_or("<nodepool>");
    let nc_name = nc.unwrap_or("<ec2nodeclass>");
    let mut steps = Vec::new();
    if let (None, Some(c)) = (&g.nodepool, &claim) {
        steps.push(Remediation::command(
            format!("Find the NodePool that created NodeClaim {c}:"),
            format!("kubectl get nodeclaim {c} -o jsonpath='{{.metadata.labels.karpenter\\.sh/nodepool}}{{\"\\n\"}}'"),
        ));
    }
    if let Some(near) = typo {
        steps.extend([
            Remediation::command(
                format!("Point the NodePool's nodeClassRef at {near} (a merge patch: group and kind stay as they are):"),
                format!(
                    "kubectl patch nodepool {np} --type merge -p '{{\"spec\":{{\"template\":{{\"spec\":{{\"nodeClassRef\":{{\"name\":\"{near}\"}}}}}}}}}}'"
                ),
            ),
            Remediation::command(
                "Then check the reference and that the NodePool turns ready:",
                format!(
                    "kubectl get nodepool {np} -o jsonpath='{{.spec.template.spec.nodeClassRef}}{{\"\\n\"}}' && kubectl get nodepool {np}"
                ),
            ),
        ]);
        return finish(facts, g, claim.as_deref(), summary, steps, None);
    }
    if empty_list.is_none() {
        // The list and the reference are what the input already shows when it lists the
        // EC2NodeClasses beside the NodePool's spec: ask only for what it lacks.
        let shown = listed
            && g.nodepool
                .as_deref()
                .and_then(|n| facts.nodepool(n))
                .is_some_and(|p| p.nodeclass_ref.is_some());
        let [list, patch] = point_at_existing(np, if listed { &existing } else { &[] });
        if !shown {
            steps.push(list);
        }
        steps.push(patch);
    }
    let cluster = cluster_name_or_placeholder(facts);
    let create = if empty_list.is_some() {
        format!("Create EC2NodeClass {nc_name} (fill in the node role and the discovery tag of your subnets and security groups):")
    } else {
        format!("Or create EC2NodeClass {nc_name} (fill in the node role and the discovery tag of your subnets and security groups):")
    };
    if g.terminating {
        // The object still exists (its finalizer holds it), so a skeleton to create it would
        // be refused; and a deletion cannot be cancelled. What the operator can do is restore
        // it from its source once it is gone.
        steps.push(Remediation::text(format!(
            "A deletion cannot be cancelled. If EC2NodeClass {nc_name} was deleted by mistake, re-apply it from its source (git, helm chart, Terraform) once the deletion completes; the NodePool becomes ready again by itself. Until then only another EC2NodeClass (above) lets the NodePool launch."
        )));
    } else {
        steps.push(Remediation::yaml(
            create,
            format!(
                "apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: {nc_name}\nspec:\n  role: <node-role-name>\n  amiSelectorTerms:\n    - alias: al2023@latest\n  subnetSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: {cluster}\n  securityGroupSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: {cluster}\n"
            ),
        ));
    }
    if g.terminating {
        steps.push(Remediation::command(
            "A terminating EC2NodeClass waits for its NodeClaims to go (WaitingOnNodeClaimTermination); see which remain:",
            format!("kubectl get nodeclaims -l karpenter.k8s.aws/ec2nodeclass={nc_name}"),
        ));
    }
    let empty_evidence = empty_list.map(|e| e.evidence.clone());
    finish(facts, g, claim.as_deref(), summary, steps, empty_evidence)
}

/// List what exists, then repoint the NodePool at one of them.
fn point_at_existing(np: &str, existing: &[&str]) -> [Remediation; 2] {
    // The only EC2NodeClass a listing shows is the one to point at.
    let (target, text) = match existing {
        [only] => (
            *only,
            format!("Point the NodePool at {only}, the only EC2NodeClass listed:"),
        ),
        _ => (
            "<existing-ec2nodeclass>",
            "Point the NodePool at an existing EC2NodeClass:".to_string(),
        ),
    };
    [
        Remediation::command(
            "List the EC2NodeClasses that exist and the reference the NodePool holds:",
            format!(
                "kubectl get ec2nodeclasses && kubectl get nodepool {np} -o jsonpath='{{.spec.template.spec.nodeClassRef}}{{\"\\n\"}}'"
            ),
        ),
        Remediation::command(
            text,
            format!(
                "kubectl patch nodepool {np} --type merge -p '{{\"spec\":{{\"template\":{{\"spec\":{{\"nodeClassRef\":{{\"group\":\"karpenter.k8s.aws\",\"kind\":\"EC2NodeClass\",\"name\":\"{target}\"}}}}}}}}}}'"
            ),
        ),
    ]
}

/// The EC2NodeClass the input has whose name is a near match of the missing reference (see
/// `names::near_match`): the reference is then most likely a typo. Never for a terminating
/// class (it exists) nor for an AWSNodeTemplate (a NodePool cannot use one).
fn typo_for<'a>(facts: &'a Facts, g: &Group<'_>) -> Option<&'a str> {
    let name = g.nodeclass.as_deref()?;
    if g.terminating || facts.nodeclass(name).is_some() {
        return None;
    }
    closest(
        name,
        facts
            .nodeclasses
            .iter()
            .filter(|c| !c.is_aws_node_template)
            .map(|c| c.meta.name.as_str()),
    )
}

fn finish(
    facts: &Facts,
    g: &Group<'_>,
    claim: Option<&str>,
    summary: String,
    steps: Vec<Remediation>,
    empty_list: Option<Evidence>,
) -> Diagnosis {
    let mut d = Diagnosis::new(&META, summary)
        .with_node_pool(g.nodepool.as_deref())
        .with_messages(g.messages.iter().copied())
        .with_evidence(g.evidence.iter().cloned().chain(empty_list))
        .with_related(&["KW208"])
        .with_remediation(steps);
    if let Some(n) = &g.nodepool {
        d = d.with_object(Some(&ObjectRef::new("NodePool", None, n)));
    } else if let Some(c) = claim {
        d = d.with_object(Some(&crate::rules::kw3xx::common::claim_ref(facts, c)));
    }
    if g.inferred && g.messages.is_empty() {
        d = d.with_confidence(Confidence::Medium);
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Condition, Meta, NodeClass, NodePool};
    use crate::testing::{check_only, ids};

    #[test]
    fn awsnodetemplate_is_named_as_such() {
        let report = crate::testing::check_only(
            "KW503",
            "NAMESPACE   LAST SEEN   TYPE      REASON   OBJECT                  MESSAGE\ndefault     2m          Warning            provisioner/default     Failed resolving AWSNodeTemplate",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.starts_with("Provisioner default"),
            "{}",
            d.summary
        );
        assert!(d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.starts_with("kubectl get awsnodetemplates"))));
    }

    #[test]
    fn every_signal_form() {
        for text in [
            "NodeClassReady=False NodeClassNotFound: NodeClass not found on cluster",
            "      message: NodeClass not found on cluster",
            "      reason: NodeClassNotFound",
            "Normal  NodeClassReady  2m27s  karpenter  Status condition transitioned, Type: NodeClassReady, Status: Unknown -> False, Reason: NodeClassNotFound, Message: NodeClass not found on cluster",
            "Warning    20s    karpenter  Failed resolving NodeClass",
            "NodeClassReady=False NodeClassTerminating: NodeClass is Terminating",
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclaim.lifecycle","error":"launching nodeclaim, resolving node class, ec2nodeclasses.karpenter.k8s.aws \"default-v2\" not found"}"#,
            "Failed resolving AWSNodeTemplate",
            // Karpenter wraps the missing NodeClass in an InsufficientCapacityError (KW215 yields).
            r#"{"level":"ERROR","message":"failed launching nodeclaim","error":"launching nodeclaim, creating instance, insufficient capacity, resolving nodeclass, ec2nodeclasses.karpenter.k8s.aws \"batch\" not found"}"#,
        ] {
            assert_eq!(ids(&check_only("KW503", text)), ["KW503"], "{text}");
        }
        let d = &check_only(
            "KW503",
            r#"{"level":"ERROR","message":"Reconciler error","error":"resolving node class, ec2nodeclasses.karpenter.k8s.aws \"default-v2\" not found"}"#,
        )
        .diagnoses[0];
        assert!(
            d.summary.contains("EC2NodeClass default-v2"),
            "{}",
            d.summary
        );
        let t = &check_only(
            "KW503",
            "NodeClassReady=False NodeClassTerminating: NodeClass is Terminating",
        )
        .diagnoses[0];
        assert!(t.summary.contains("being deleted"));
        // It still exists: no skeleton to create it, the restore-from-source step instead.
        assert!(
            t.remediation.iter().all(|r| r.yaml.is_none()),
            "{:?}",
            t.remediation
        );
        assert!(t
            .remediation
            .iter()
            .any(|r| r.text.contains("cannot be cancelled")));
    }

    #[test]
    fn near_misses() {
        for text in [
            "NodeClassReady=False UnhealthyDependents: SubnetsReady=False",
            "Error from server (BadRequest): error when creating \"STDIN\": NodePool in version \"v1\" cannot be handled as a NodePool: strict decoding error: unknown field \"spec.template.spec.nodeClassRef.foo\"",
            "reason: NodeClassReady",
            "pods \"web-1\" not found",
        ] {
            assert!(ids(&check_only("KW503", text)).is_empty(), "{text}");
        }
    }

    fn nodepool(name: &str, nc: &str) -> NodePool {
        NodePool {
            meta: Meta {
                name: name.into(),
                ..Default::default()
            },
            nodeclass_ref: Some(nc.into()),
            ..Default::default()
        }
    }

    #[test]
    fn reference_missing_from_listed_nodeclasses() {
        let mut facts = Facts::default();
        facts.nodepools.push(nodepool("general", "defualt"));
        // Without EC2NodeClasses in the input nothing can be said.
        assert!(check(&facts).is_empty());
        facts.nodeclasses.push(NodeClass {
            meta: Meta {
                name: "default".into(),
                ..Default::default()
            },
            subnet_selector_terms: vec![
                serde_json::json!({"tags": {"karpenter.sh/discovery": "prod"}}),
            ],
            ..Default::default()
        });
        let d = check(&facts);
        assert_eq!(d.len(), 1);
        assert!(d[0]
            .summary
            .contains("NodePool general references EC2NodeClass defualt"));
        // A near match: a typo, fixed by pointing the reference at it.
        assert!(
            d[0].summary
                .contains("defualt is probably a typo for default"),
            "{}",
            d[0].summary
        );
        assert_eq!(d[0].confidence, Confidence::Medium);
        assert!(d[0].remediation[0]
            .command
            .as_deref()
            .is_some_and(|c| c.starts_with("kubectl patch nodepool general")
                && c.contains(r#""nodeClassRef":{"name":"default"}"#)));
        assert!(d[0].remediation.iter().all(|r| r.yaml.is_none()));
        // No near match: the generic fix, creating the class among the options.
        facts.nodepools[0].nodeclass_ref = Some("bottlerocket".into());
        let d = check(&facts);
        assert!(d[0].summary.contains("(default)"), "{}", d[0].summary);
        assert!(!d[0].summary.contains("typo"));
        // The facts show the list and the reference: no step asks for them again.
        assert!(d[0].remediation.iter().all(|r| !r
            .command
            .as_deref()
            .is_some_and(|c| c.starts_with("kubectl get ec2nodeclasses"))));
        assert!(d[0]
            .remediation
            .iter()
            .any(|r| r
                .yaml
                .as_deref()
                .is_some_and(|y| y.contains("name: bottlerocket")
                    && y.contains("karpenter.sh/discovery: prod"))));
        // An AWSNodeTemplate of a near name is no EC2NodeClass to point at.
        facts.nodepools[0].nodeclass_ref = Some("defualt".into());
        facts.nodeclasses[0].is_aws_node_template = true;
        assert!(check(&facts).iter().all(|d| !d.summary.contains("typo")));
        facts.nodeclasses[0].is_aws_node_template = false;
        facts.nodepools[0].nodeclass_ref = Some("default".into());
        assert!(check(&facts).is_empty());
    }

    #[test]
    fn typed_condition_names_both() {
        let mut facts = Facts::default();
        let mut np = nodepool("default", "default");
        np.conditions.push(Condition {
            condition_type: "NodeClassReady".into(),
            status: "False".into(),
            reason: Some("NodeClassNotFound".into()),
            message: Some("NodeClass not found on cluster".into()),
            evidence: None,
        });
        facts.nodepools.push(np);
        facts.messages.push(Message {
            text: "NodeClassReady=False NodeClassNotFound: NodeClass not found on cluster".into(),
            object: Some(ObjectRef::new("NodePool", None, "default")),
            ..Default::default()
        });
        let d = check(&facts);
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(d[0]
            .summary
            .starts_with("NodePool default references EC2NodeClass default, which does not exist"));
        assert_eq!(d[0].confidence, Confidence::High);
    }
}
