//! KW303 node-not-registered.

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, ObjectRef};
use crate::rules::kw2xx::scheduling::tail_after;
use crate::rules::kw3xx::common::{
    claim_age, claim_kind, claim_ref, conditions, instance_id, launched_status, name_after, named,
    nodeclaim_of, nodepool_of_nodeclaim, push_unique, raw_describe_subject, record_names_claim,
    registered_after, sole_raw_value, Api,
};
use crate::rules::text::contains_any;
use crate::rules::time::age_seconds;
use crate::rules::{
    evidence_of, Age, Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity,
};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW303",
    slug: "node-not-registered",
    title: "The instance runs but its node never joined the cluster",
    severity: Severity::Error,
    superseded_by: &["KW304", "KW305"],
    signals: SIGNALS,
    docs: r#"## What it means
EC2 launched the NodeClaim's instance, but no Node object for it ever appeared: the kubelet on
the instance never registered. After 15 minutes Karpenter deletes the NodeClaim and tries again,
so the pods stay Pending through a loop of launches.

Signals: NodeClaim `Registered=Unknown` reason `NodeNotFound` (`Node not registered with
cluster`); in v1.0.x the same reason and message on `Initialized` while `Launched` is True; the
liveness log `terminating due to timeout` with `reason: registration_timeout` (older: `terminating
due to registration ttl`); NodePool `NodeRegistrationHealthy=False` reason `RegistrationFailed`
(`Failed to register node`); a `kubectl get nodeclaims` row with a TYPE but no NODE, not Ready,
and an AGE past the 15-minute registration timeout; the kubelet's own `Unable to register node
with API server` (before Kubernetes 1.20 `Unable to register node "<name>" with API server:
<cause>`) with a cause other than Unauthorized (an i/o timeout says the network path).

## Why it happens
The kubelet cannot reach or authenticate to the API server: the node IAM role is missing from
`aws-auth` or has no EKS access entry; security groups block the API server (443) or the control
plane's calls to the kubelet (10250); a private subnet has no route to the API endpoint or to the
AWS services bootstrap needs (NAT gateway or VPC endpoints for EC2, ECR, S3, STS); or custom user
data broke bootstrap.

## How to fix
Read the kubelet log on the instance (SSM `journalctl -u kubelet`, or the EC2 console output):
its errors name the cause, and then KW304 (Unauthorized) or KW305 (CNI not ready) replaces this
diagnosis. Check the node role's access entry or `aws-auth` mapping, the cluster and node
security groups, and the subnet's routes.
"#,
};

const SIGNALS: &[&str] = &[
    "node not registered with cluster",
    "unable to register node with api server",
    "unable to register node \"",
    "registration_timeout",
    // v0.31+ `terminating due to registration ttl`; v0.27-v0.30 `deprovisioning machine due to
    // registration ttl`.
    "due to registration ttl",
    "failed to register node",
    "registrationfailed",
    // Lifecycle lines read for the NodeClaim's NodePool, instance, and later registration.
    "created nodeclaim",
    "launched nodeclaim",
    "registered nodeclaim",
];

/// Below this age an unregistered NodeClaim is most likely still booting.
const STILL_REGISTERING_SECONDS: i64 = 180;

/// Karpenter's registration timeout (15 minutes): a NodeClaim older than this without a Node
/// did not register.
const REGISTRATION_TIMEOUT_SECONDS: i64 = 900;

struct Hit {
    nodeclaim: Option<String>,
    nodepool: Option<String>,
    evidence: Vec<Evidence>,
    /// The registration timeout expired (or the NodePool counts a failed registration).
    timeout: bool,
    /// A `kubectl get nodeclaims` row: no NODE past the registration timeout.
    table: bool,
    /// The kubelet's own `Unable to register node with API server` (not Unauthorized: KW304).
    kubelet: bool,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut hits: Vec<Hit> = Vec::new();
    for c in conditions(facts) {
        let nodeclaim_not_found = (c.is("Registered") || c.is("Initialized"))
            && c.not_true()
            && c.reason == "NodeNotFound";
        let pool_failed = c.is("NodeRegistrationHealthy")
            && c.status.eq_ignore_ascii_case("false")
            && (c.reason == "RegistrationFailed"
                || contains_ignore_ascii_case(&c.message, "Failed to register node"));
        if nodeclaim_not_found || pool_failed {
            let is_pool = c.kind.as_deref() == Some("NodePool") || pool_failed;
            hits.push(Hit {
                nodeclaim: (!is_pool).then(|| c.object.clone()).flatten(),
                nodepool: is_pool.then(|| c.object.clone()).flatten(),
                evidence: c.evidence.clone(),
                timeout: pool_failed,
                table: false,
                kubelet: false,
            });
        }
    }
    // A `kubectl get nodeclaims` row with an instance type (so it launched) but no NODE, not
    // Ready, and older than the registration timeout.
    for c in &facts.nodeclaims {
        let no_node = c
            .node_name
            .as_deref()
            .is_none_or(|n| n.is_empty() || n == "<none>");
        let ready = c
            .condition("Ready")
            .is_some_and(|r| r.status.eq_ignore_ascii_case("true"));
        let old_enough = c
            .meta
            .table_age
            .as_deref()
            .and_then(age_seconds)
            .is_some_and(|a| a >= REGISTRATION_TIMEOUT_SECONDS);
        if c.meta.from_table && no_node && !ready && c.instance_type.is_some() && old_enough {
            hits.push(Hit {
                nodeclaim: Some(c.meta.name.clone()),
                nodepool: c.nodepool.clone(),
                evidence: c.meta.evidence.clone().into_iter().collect(),
                timeout: false,
                table: true,
                kubelet: false,
            });
        }
    }
    let covered: Vec<Evidence> = hits.iter().flat_map(|h| h.evidence.clone()).collect();
    for m in &facts.messages {
        if covered.contains(&m.evidence) || !is_signal(facts, m) {
            continue;
        }
        // The kubelet registered on a later try: its earlier refusal is not why a node is missing.
        if kubelet_refused(m) && registered_after(facts, m) {
            continue;
        }
        let nodeclaim = nodeclaim_of(facts, m);
        hits.push(Hit {
            nodepool: m
                .nodepool
                .clone()
                .or_else(|| name_after(&m.text, "nodepool/")),
            nodeclaim,
            evidence: vec![evidence_of(m)],
            timeout: !contains_ignore_ascii_case(&m.text, "Node not registered with cluster")
                && !kubelet_refused(m),
            table: false,
            kubelet: kubelet_refused(m),
        });
    }
    // A NodeClaim the same input shows registered afterwards was only caught early.
    hits.retain(|h| {
        h.nodeclaim
            .as_ref()
            .is_none_or(|n| !registered_later(facts, n))
    });
    // An instance EC2 terminated at launch (KW307: its volumes' KMS key) has no kubelet that
    // could register: its NodeClaim's missing Node is that termination, not a join failure.
    let (kms_evidence, kms_claims) = kms_terminated(facts);
    hits.retain(|h| {
        h.nodeclaim.as_ref().is_none_or(|n| {
            !kms_claims.contains(n)
                && instance_of(facts, Some(n)).is_none_or(|i| !kms_evidence.contains(&i))
        })
    });
    if hits.is_empty() {
        return Vec::new();
    }
    let mut nodeclaims: Vec<String> = Vec::new();
    if hits
        .iter()
        .all(|h| h.nodeclaim.is_none() && h.nodepool.is_none())
    {
        if let Some(o) = raw_describe_subject(facts).filter(|o| o.kind == "NodeClaim") {
            nodeclaims.push(o.name);
        }
    }
    let mut nodepools: Vec<String> = Vec::new();
    for h in &hits {
        if let Some(n) = &h.nodeclaim {
            push_unique(&mut nodeclaims, n.clone());
            if let Some(np) = nodepool_of_nodeclaim(facts, n) {
                push_unique(&mut nodepools, np);
            }
        }
        if let Some(np) = &h.nodepool {
            push_unique(&mut nodepools, np.clone());
        }
    }
    let instance = instance_of(facts, nodeclaims.first().map(String::as_str));
    // Only the kubelet's log: the node it tries to register names the instance.
    let kubelet_node = hits
        .iter()
        .filter(|h| h.kubelet)
        .flat_map(|h| &h.evidence)
        .find_map(|e| {
            // Structured `node="<name>"`; before Kubernetes 1.20 `Unable to register node
            // "<name>" with API server`.
            let v: String = tail_after(&e.text, "node=\"")
                .or_else(|| tail_after(&e.text, "register node \""))?
                .chars()
                .take_while(|c| *c != '"')
                .collect();
            (!v.is_empty()).then_some(v)
        })
        .filter(|_| nodeclaims.is_empty() && instance.is_none());
    // Before v0.32 the claim is a Machine of a Provisioner, even when the input does not name it.
    let api = Api::of(facts, &nodeclaims);
    let kind = nodeclaims
        .first()
        .map_or(api.claim(), |n| claim_kind(facts, n));
    let kind = if api.legacy { "Machine" } else { kind };
    let several = nodeclaims.len() > 1;
    let mut summary = if let Some(node) = &kubelet_node {
        format!("The instance of node {node}")
    } else if nodeclaims.is_empty() {
        format!("A {kind}")
    } else {
        named(kind, &nodeclaims)
    };
    // One instance ID names one claim; with several it would name only the first.
    if let Some(i) = instance.as_ref().filter(|_| !several) {
        summary.push_str(&format!(" (instance {i})"));
    }
    if !nodepools.is_empty() {
        let pool_kind = if kind == "Machine" {
            "Provisioner"
        } else {
            "NodePool"
        };
        summary.push_str(&format!(" of {}", named(pool_kind, &nodepools)));
    }
    // A NodeClaim seconds old has simply not registered yet; only a known age says so, and a
    // registration timeout or a NodePool's RegistrationFailed says it is not that.
    let timed_out = hits.iter().any(|h| h.timeout);
    let ages: Vec<Option<Age>> = nodeclaims.iter().map(|n| claim_age(facts, n)).collect();
    let youngest_known = ages.iter().flatten().min_by_key(|a| a.seconds).copied();
    let young = !timed_out
        && !ages.is_empty()
        && ages
            .iter()
            .all(|a| a.is_some_and(|a| a.seconds < STILL_REGISTERING_SECONDS));
    // Registration follows the launch: a NodeClaim whose Launched condition is not True has
    // no instance to register yet, and its age is since its creation, not a launch.
    let unlaunched: Vec<(String, String)> = nodeclaims
        .iter()
        .filter_map(|n| {
            launched_status(facts, n)
                .filter(|s| !s.eq_ignore_ascii_case("true"))
                .map(|s| (n.clone(), s))
        })
        .collect();
    let launched_state = match unlaunched.as_slice() {
        [] => None,
        [(_, status)] if !several => Some(format!("Launched={status}")),
        some => Some(format!(
            "{} not launched: {}",
            if some.len() == 1 {
                "one is"
            } else {
                "some are"
            },
            some.iter()
                .map(|(n, s)| format!("{n} Launched={s}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    };
    let (has, its_kubelet, waits) = if several {
        ("have", "their kubelets", "The oldest has been waiting")
    } else {
        ("has", "its kubelet", "It has been waiting")
    };
    if young {
        let age = youngest_known.map(|a| a.ago()).unwrap_or_default();
        let failed = unlaunched
            .iter()
            .any(|(_, s)| s.eq_ignore_ascii_case("false"));
        let sentence = match (&launched_state, several) {
            (Some(state), false) if failed => format!(
                "was created {age} and its launch failed ({state}), so no instance will register: the launch error says why (KW302)."
            ),
            (Some(state), false) => format!(
                "was created {age} and has not launched yet ({state}): its instance is still being created, so it cannot have a Node yet. Look again in a few minutes (a launch that fails turns Launched False, KW302)."
            ),
            (Some(state), true) => format!(
                "were created (the latest {age}; {state}) and {has} no Node yet. A kubelet usually registers within a minute or two of the launch, so they may still be registering: look again in a few minutes."
            ),
            (None, several) => format!(
                "{} and {has} no Node yet. A kubelet usually registers within a minute or two, so it may still be registering: look again in a few minutes.",
                if several {
                    format!("were launched (the latest {age})")
                } else {
                    format!("launched {age}")
                }
            ),
        };
        summary.push_str(&format!(
            " {sentence} Karpenter deletes a {kind} that has not registered after 15 minutes and launches again."
        ));
    } else {
        let seen = if let Some(h) = hits.iter().find(|h| h.kubelet) {
            let cause = h
                .evidence
                .first()
                .map(|e| e.text.as_str())
                .and_then(|t| {
                    t.split_once("err=")
                        .or_else(|| t.split_once("with API server: "))
                        .map(|(_, e)| e.trim())
                })
                .unwrap_or("");
            if contains_any(
                cause,
                &["timeout", "no route", "connection refused", "dial tcp"],
            ) {
                "its kubelet logs Unable to register node with API server: it cannot reach the API server, so look at the security groups (443 to the cluster), the subnet's routes and the endpoint access first"
            } else {
                "its kubelet logs Unable to register node with API server"
            }
        } else if hits.iter().all(|h| h.table) {
            // The table the user pasted: machines before v0.32, nodeclaims since.
            if kind == "Machine" {
                "kubectl get machines shows no NODE past the 15-minute registration timeout"
            } else {
                "kubectl get nodeclaims shows no NODE past the 15-minute registration timeout"
            }
        } else if hits.iter().any(|h| !h.timeout && !h.table) {
            "Node not registered with cluster"
        } else if hits
            .iter()
            .any(|h| h.nodeclaim.is_none() && h.nodepool.is_some())
        {
            "the NodePool's NodeRegistrationHealthy=False: Failed to register node"
        } else {
            "the registration timeout expired"
        };
        let node = if several { "Nodes" } else { "a Node" };
        match &launched_state {
            Some(state) if !several => summary.push_str(&format!(
                " has no Node ({seen}), and it has not launched ({state}): no instance is running to register, so look at the launch first (KW302)."
            )),
            Some(state) => summary.push_str(&format!(
                " have no Nodes ({seen}; {state}): {its_kubelet} never registered, and a {kind} not launched has no instance to register (KW302)."
            )),
            None => summary.push_str(&format!(
                " launched, but {its_kubelet} never registered {node} with the cluster ({seen})."
            )),
        }
        if let Some(age) = ages
            .iter()
            .flatten()
            .max_by_key(|a| a.seconds)
            .filter(|_| !timed_out)
        {
            summary.push_str(&format!(" {waits} for {}.", age.span()));
        }
        let which = if several { "a" } else { "the" };
        let oldest = ages.iter().flatten().map(|a| a.seconds).max();
        if oldest.is_some_and(|s| s > REGISTRATION_TIMEOUT_SECONDS) && !timed_out {
            summary.push_str(&format!(
                " That is past the 15-minute registration timeout, after which Karpenter deletes {which} {kind} and launches again: if it is still there, the controller's logs say why (look for `registration_timeout`)."
            ));
        } else {
            summary.push_str(&format!(
                " Karpenter deletes {which} {kind} after the 15-minute registration timeout and launches again."
            ));
        }
        if (launched_state.is_none() || several) && !hits.iter().any(|h| h.kubelet) {
            summary.push_str(
                " The input has no kubelet log, so the cause is not known yet: the kubelet's log names it.",
            );
        }
    }
    let cluster = crate::rules::text::cluster_name_or_placeholder(facts);
    let target = match (&instance, &kubelet_node) {
        (Some(i), _) => i.clone(),
        // A resource-name hostname starts with the instance ID; an IP name is its private DNS.
        (None, Some(node)) => match node.split('.').next().filter(|h| h.starts_with("i-")) {
            Some(i) => i.to_string(),
            None => format!(
                "\"$(aws ec2 describe-instances --filters Name=private-dns-name,Values={node} --query 'Reservations[].Instances[].InstanceId' --output text)\""
            ),
        },
        // One NodeClaim the input names: its provider ID (`aws:///<zone>/<instance-id>`) says,
        // while it exists (the registration timeout deletes it).
        (None, None) if nodeclaims.len() == 1 && !timed_out && unlaunched.is_empty() => format!(
            "\"$(kubectl get {} {} -o jsonpath='{{.status.providerID}}' | cut -d/ -f5)\"",
            api.claim_kubectl(),
            nodeclaims[0]
        ),
        (None, None) => "<instance-id>".to_string(),
    };
    let steps = vec![
        Remediation::command(
            if hits.iter().any(|h| h.kubelet) {
                "Read the rest of the kubelet log on the instance (SSM), or the console output when SSM is not reachable, for the lines around that error:"
            } else {
                "Read the kubelet log on the instance (SSM), or the console output when SSM is not reachable; paste it here and the diagnosis becomes specific (KW304 Unauthorized, KW305 CNI not ready):"
            },
            format!(
                "aws ssm start-session --target {target} --document-name AWS-StartInteractiveCommand --parameters command='sudo journalctl -u kubelet --no-pager | tail -100'; aws ec2 get-console-output --instance-id {target} --latest --output text | tail -100"
            ),
        ),
        Remediation::command(
            "Check that the node role may join: an EKS access entry of type EC2_LINUX, or a `mapRoles` entry in aws-auth:",
            format!(
                "aws eks list-access-entries --cluster-name {cluster}; kubectl get configmap aws-auth -n kube-system -o yaml"
            ),
        ),
        Remediation::command(
            "Check the network path: the instance's security groups must reach the API server on 443 and let the cluster security group reach the kubelet on 10250; a private subnet needs a NAT gateway or VPC endpoints (ec2, ecr.api, ecr.dkr, s3, sts):",
            format!(
                "aws eks describe-cluster --name {cluster} --query 'cluster.resourcesVpcConfig.[clusterSecurityGroupId,endpointPublicAccess,endpointPrivateAccess]' && aws ec2 describe-instances --instance-ids {target} --query 'Reservations[].Instances[].[SubnetId,SecurityGroups]'"
            ),
        ),
        Remediation::text(if api.legacy {
            "If the AWSNodeTemplate has custom `spec.userData`, check it does not break bootstrap (AL2 takes a MIME multi-part shell script Karpenter merges with its bootstrap; Bottlerocket takes TOML settings)."
        } else {
            "If the EC2NodeClass has custom `spec.userData`, check it does not break bootstrap (AL2023 takes a NodeConfig MIME part; Bottlerocket takes TOML settings)."
        }),
    ];
    let objects: Vec<ObjectRef> = nodeclaims.iter().map(|n| claim_ref(facts, n)).collect();
    let diagnosis = Diagnosis::new(&META, summary);
    let diagnosis = if young {
        diagnosis
            .with_severity(Severity::Info)
            .with_confidence(Confidence::Low)
    } else {
        diagnosis
    };
    vec![diagnosis
        .with_objects(&objects)
        .with_node_pool(nodepools.first().map(String::as_str))
        // One line per NodeClaim: three describes each saying `Node not registered with
        // cluster` are three rows, not one "seen 3 times".
        .with_evidence_per_object(hits.into_iter().flat_map(|h| {
            let who = h.nodeclaim.or(h.nodepool);
            h.evidence.into_iter().map(move |e| (who.clone(), e))
        }))
        .with_related(&["KW304", "KW305"])
        .with_related(if unlaunched.is_empty() {
            &[]
        } else {
            &["KW302"]
        })
        .with_remediation(steps)]
}

/// A message carrying a registration failure: the NodeClaim condition message, the liveness
/// log's registration timeout, or the NodePool's `Failed to register node`.
/// The kubelet's `Unable to register node with API server" err=...` (klog structured,
/// Kubernetes 1.20+; before: `Unable to register node "<name>" with API server: ...`) for another
/// cause than Unauthorized (that one is KW304's).
fn kubelet_refused(m: &Message) -> bool {
    (contains_ignore_ascii_case(&m.text, "Unable to register node with API server")
        || (contains_ignore_ascii_case(&m.text, "Unable to register node \"")
            && contains_ignore_ascii_case(&m.text, "with API server")))
        && !contains_ignore_ascii_case(&m.text, "Unauthorized")
}

fn is_signal(facts: &Facts, m: &Message) -> bool {
    let t = &m.text;
    if kubelet_refused(m)
        || contains_ignore_ascii_case(t, "Node not registered with cluster")
        || contains_ignore_ascii_case(t, "due to registration ttl")
        || contains_ignore_ascii_case(t, "Failed to register node")
    {
        return true;
    }
    if contains_ignore_ascii_case(t, "terminating due to timeout") {
        let reason_field = crate::rules::kw2xx::scheduling::record_of(facts, m)
            .and_then(|r| r.fields.get("reason").and_then(|v| v.as_str()))
            == Some("registration_timeout");
        return reason_field || contains_ignore_ascii_case(t, "registration_timeout");
    }
    // A describe/YAML `Reason: RegistrationFailed` line.
    let line = t.trim().trim_start_matches("- ");
    line.split_once(':').is_some_and(|(k, v)| {
        k.trim().eq_ignore_ascii_case("reason")
            && v.trim().trim_matches(['"', '\'']) == "RegistrationFailed"
    })
}

/// The input shows the NodeClaim registered after all (log `registered nodeclaim`, or its
/// `Registered` condition True).
fn registered_later(facts: &Facts, nodeclaim: &str) -> bool {
    // An anonymiser's `<redacted>` stands for every NodeClaim alike: another one registering
    // says nothing about this one.
    if crate::rules::text::is_unnumbered_mask(nodeclaim) {
        return false;
    }
    let logged = facts.logs.iter().any(|r| {
        (r.message.eq_ignore_ascii_case("registered nodeclaim")
            || r.message.eq_ignore_ascii_case("registered machine"))
            && record_names_claim(r, nodeclaim)
    });
    let condition = facts
        .nodeclaims
        .iter()
        .filter(|c| c.meta.name == nodeclaim)
        .flat_map(|c| c.conditions.iter())
        .any(|c| {
            crate::facts::condition_type_is(&c.condition_type, "Registered") && c.status == "True"
        });
    // A `Status condition transitioned, Type: Registered, Status: Unknown -> True` event (v1):
    // Registered never turns back.
    let transitioned = || {
        conditions(facts).iter().any(|c| {
            c.is("Registered")
                && c.status.eq_ignore_ascii_case("true")
                && c.object.as_deref() == Some(nodeclaim)
        })
    };
    logged || condition || transitioned()
}

/// What KW307 explains: the text of its evidence (which names the terminated instances) and
/// the NodeClaims it names.
fn kms_terminated(facts: &Facts) -> (String, Vec<String>) {
    let mut text = String::new();
    let mut claims = Vec::new();
    for d in (super::kw307_kms_key_denies_ebs::RULE.check)(facts) {
        for e in &d.evidence {
            text.push_str(&e.text);
            text.push('\n');
        }
        claims.extend(d.object.into_iter().chain(d.objects).map(|o| o.name));
    }
    (text, claims)
}

/// The instance behind a NodeClaim: its provider ID, the `launched nodeclaim` log line, or the
/// only provider ID in a raw paste.
fn instance_of(facts: &Facts, nodeclaim: Option<&str>) -> Option<String> {
    if let Some(n) = nodeclaim {
        let typed = facts
            .nodeclaims
            .iter()
            .find(|c| c.meta.name == n)
            .and_then(|c| c.provider_id.as_deref().and_then(instance_id));
        if typed.is_some() {
            return typed;
        }
        let logged = facts.logs.iter().find_map(|r| {
            record_names_claim(r, n)
                .then(|| r.fields.get("provider-id")?.as_str().and_then(instance_id))
                .flatten()
        });
        if logged.is_some() {
            return logged;
        }
    }
    sole_raw_value(facts, &["providerID:", "Provider ID:"]).and_then(|p| instance_id(&p))
}

#[cfg(test)]
mod tests {
    use crate::rules::{Confidence, Severity};
    use crate::testing::{check_only, ids};
    use crate::{analyze_text, Options};

    const YOUNG: &str = "apiVersion: karpenter.sh/v1
kind: NodeClaim
metadata:
  creationTimestamp: \"2025-06-03T09:31:02Z\"
  labels:
    karpenter.sh/nodepool: default
  name: default-7hq2x
status:
  conditions:
  - lastTransitionTime: \"2025-06-03T09:31:05Z\"
    message: Node not registered with cluster
    reason: NodeNotFound
    status: Unknown
    type: Registered
";

    fn at(now: Option<&str>, text: &str) -> crate::Report {
        analyze_text(
            "fixture",
            text,
            &Options {
                now: now.map(str::to_string),
                only: Some(vec!["KW303".into()]),
            },
        )
    }

    #[test]
    fn a_nodeclaim_seconds_old_may_still_be_registering() {
        let d = &at(Some("2025-06-03T09:31:40Z"), YOUNG).diagnoses[0];
        assert_eq!(
            (d.severity, d.confidence),
            (Severity::Info, Confidence::Low)
        );
        assert!(d.summary.contains("launched 38s ago"), "{}", d.summary);
        assert!(
            d.summary.contains("may still be registering"),
            "{}",
            d.summary
        );
        // A later log line of another object dates the paste when no time is given.
        let with_log = format!("{YOUNG}\n{{\"level\":\"INFO\",\"time\":\"2025-06-03T09:32:00.000Z\",\"message\":\"found provisionable pod(s)\",\"Pods\":\"a/b\"}}\n");
        let d = &at(None, &with_log).diagnoses[0];
        assert!(
            d.summary.contains("58s before the latest time"),
            "{}",
            d.summary
        );
    }

    /// Not launched: never "launched 38s ago"; its age is since its creation.
    #[test]
    fn a_nodeclaim_not_launched_is_not_said_launched() {
        for (status, want) in [
            ("Unknown", "has not launched yet (Launched=Unknown)"),
            ("False", "its launch failed (Launched=False)"),
        ] {
            let text = format!(
                "{YOUNG}  - lastTransitionTime: \"2025-06-03T09:31:03Z\"\n    message: \"\"\n    reason: x\n    status: \"{status}\"\n    type: Launched\n"
            );
            let d = &at(Some("2025-06-03T09:31:40Z"), &text).diagnoses[0];
            assert!(!d.summary.contains("launched 38s"), "{}", d.summary);
            assert!(d.summary.contains("was created 38s ago"), "{}", d.summary);
            assert!(d.summary.contains(want), "{}", d.summary);
            assert!(d.related.contains(&"KW302"));
            let d = &at(Some("2025-06-03T09:51:02Z"), &text).diagnoses[0];
            assert!(
                d.summary
                    .contains(&format!("has not launched (Launched={status})")),
                "{}",
                d.summary
            );
            assert!(!d.summary.contains(" launched, but"), "{}", d.summary);
        }
    }

    #[test]
    fn an_old_or_undated_nodeclaim_is_an_error() {
        let d = &at(Some("2025-06-03T09:51:02Z"), YOUNG).diagnoses[0];
        assert_eq!(
            (d.severity, d.confidence),
            (Severity::Error, Confidence::High)
        );
        assert!(d.summary.contains("waiting for 20m"), "{}", d.summary);
        // Its own times alone do not date the paste.
        let d = &at(None, YOUNG).diagnoses[0];
        assert_eq!(d.severity, Severity::Error);
        // The age kubectl printed for its events wins over timestamps.
        let described = "Name:         default-4xq7m\nAPI Version:  karpenter.sh/v1\nKind:         NodeClaim\nStatus:\n  Conditions:\n    Last Transition Time:  2025-06-03T09:31:05Z\n    Message:               Node not registered with cluster\n    Reason:                NodeNotFound\n    Status:                Unknown\n    Type:                  Registered\nEvents:\n  Type    Reason    Age   From       Message\n  ----    ------    ----  ----       -------\n  Normal  Launched  12m   karpenter  Status condition transitioned, Type: Launched, Status: Unknown -> True, Reason: Launched\n";
        let d = &at(Some("2025-06-03T09:31:40Z"), described).diagnoses[0];
        assert_eq!(d.severity, Severity::Error, "{}", d.summary);
        assert!(d.summary.contains("waiting for 12m"), "{}", d.summary);
    }

    #[test]
    fn every_form() {
        for text in [
            "    Message:               Node not registered with cluster\n    Reason:                NodeNotFound",
            "  - type: Registered\n    status: \"Unknown\"\n    reason: NodeNotFound\n    message: Node not registered with cluster",
            r#"{"level":"DEBUG","message":"terminating due to timeout","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-4xq7m"},"reason":"registration_timeout","timeout":"15m0s"}"#,
            r#"{"level":"DEBUG","message":"terminating due to registration ttl","NodeClaim":{"name":"default-4xq7m"},"ttl":"15m0s"}"#,
            "  Normal  NodeRegistrationHealthy  2m  karpenter  Status condition transitioned, Type: NodeRegistrationHealthy, Status: Unknown -> False, Reason: RegistrationFailed, Message: Failed to register node",
            "      message: Failed to register node\n      reason: RegistrationFailed",
        ] {
            assert_eq!(ids(&check_only("KW303", text)), ["KW303"], "{text}");
        }
    }

    #[test]
    fn names_nodeclaim_and_instance() {
        let report = check_only(
            "KW303",
            "Name:         default-4xq7m\n    Message:               Node not registered with cluster\n  Provider ID:  aws:///ap-northeast-2a/i-0123456789abcdef0\n{\"level\":\"DEBUG\",\"message\":\"terminating due to timeout\",\"NodeClaim\":{\"name\":\"default-4xq7m\"},\"reason\":\"registration_timeout\"}",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("NodeClaim default-4xq7m"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("i-0123456789abcdef0"), "{}", d.summary);
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("--target i-0123456789abcdef0"));
    }

    #[test]
    fn near_misses() {
        for text in [
            r#"{"level":"DEBUG","message":"terminating due to timeout","NodeClaim":{"name":"a"},"reason":"launch_timeout"}"#,
            "    message: object is awaiting reconciliation\n    reason: AwaitingReconciliation\n    type: NodeRegistrationHealthy",
            r#"{"level":"INFO","message":"registered nodeclaim","NodeClaim":{"name":"a"},"Node":{"name":"ip-1"}}"#,
            // Registered later in the same input.
            "{\"level\":\"ERROR\",\"message\":\"x\",\"NodeClaim\":{\"name\":\"a\"},\"error\":\"Node not registered with cluster\"}\n{\"level\":\"INFO\",\"message\":\"registered nodeclaim\",\"NodeClaim\":{\"name\":\"a\"}}",
        ] {
            assert!(ids(&check_only("KW303", text)).is_empty(), "{text}");
        }
    }
}
