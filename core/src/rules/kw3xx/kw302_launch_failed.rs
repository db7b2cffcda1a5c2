//! KW302 launch-failed: the fallback for launch failures no more specific rule explains.

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, MessageOrigin};
use crate::rules::kw2xx::scheduling::message_nodepool;
use crate::rules::kw3xx::common::{
    conditions, karpenter_namespace, launched_status, named, nodeclaim_of, nodeclass_of_nodeclaim,
    nodepool_of_nodeclaim, parse_launch_error, push_unique, raw_describe_subject, sole_nodeclass,
    Api, LaunchError,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW302",
    slug: "launch-failed",
    title: "Karpenter could not launch the NodeClaim's instance",
    severity: Severity::Error,
    superseded_by: &[
        "KW101", "KW105", "KW214", "KW215", "KW301", "KW310", "KW501",
    ],
    signals: SIGNALS,
    docs: r#"## What it means
Karpenter created a NodeClaim but its CreateFleet call failed with an error that is not
insufficient capacity: the NodeClaim keeps `Launched=Unknown` (or `False`) with a reason from
Karpenter's error mapping, the controller logs `Reconciler error` with `launching nodeclaim,
...`, and after the 5-minute launch timeout the NodeClaim is deleted and a new one tries again.
This is the fallback: when a more specific rule explains the failure (KW101 spot service-linked
role, KW102 / KW103 the controller's own credentials (`WebIdentityErr`), KW105 IAM, KW214 subnet exhausted, KW215 capacity, KW301 block device mappings, KW310 AMI
architecture, KW501 an EC2NodeClass whose subnets, security groups or AMIs resolve to nothing:
`no subnets matched selector`) only that one is reported.

Reasons (v1.2+): `LaunchTemplateNotFound`, `InvalidAMIID`, `AMINotFound`,
`SecurityGroupSubnetVPCMismatch`, `InstanceProfileNameInvalid`, `UserDataSizeLimitExceeded`,
`FreeTierIneligible`, `AccountPendingVerification`, `RequestLimitExceeded`, `InternalError`, and
the default `LaunchFailed` (`Instance launch failed`; v1.0 puts the truncated error in the
message, v1.1 `Error creating fleet`). Error grammars: v0.32-v1.0 `launching nodeclaim, creating
instance, with fleet error(s), <Code>: <Msg>`; v1.1-1.2 without `with fleet error(s)`; v1.3-1.4
with `creating nodeclaim, `; v1.5+ with the `(aws-error-code=..., aws-operation-name=...,
aws-service-name=...)` suffix; pre-v0.32 `Could not launch node, launching instances, ...`,
`Provisioning failed, launching node, creating cloud provider instance, ...` (v0.2x, with the
Provisioner in the line's `provisioner` field) and `launching machine, creating cloud provider
instance, ...`; v0.27-v0.31 `Reconciler error` with
`creating machine, creating instance, ...` and the Machine's `MachineLaunched=False` reason
`LaunchFailed` (a Machine's conditions carry the `Machine` prefix; it is deleted after the
15-minute registration timeout).

## Why it happens
Something in the launch request is wrong or refused: a launch template deleted behind
Karpenter's back, an AMI that is malformed, deregistered or not shared, security groups and
subnets from different VPCs, an instance profile that no longer exists, user data over EC2's
16 KB limit, a Free Tier or not yet verified account, EC2 API throttling or an internal EC2
error. A launch can also stop before EC2: `operation error SSM: GetParameter ... i/o timeout`
(the AMI alias lookup) says the controller cannot reach an AWS API, as in a VPC without
internet egress and without that service's interface endpoint.

## How to fix
Follow the step for the reason shown; the full EC2 error is in the Karpenter log (`kubectl logs
-n <ns> -l app.kubernetes.io/name=karpenter | grep <nodeclaim>`) and in CloudTrail (`CreateFleet`
events).
"#,
};

const SIGNALS: &[&str] = &[
    "launching nodeclaim, ",
    "could not launch node, ",
    "launching node, creating cloud provider instance",
    "launching machine, ",
    "creating machine, creating instance",
    "launchfailed",
    "instance launch failed",
    "error creating fleet",
    "error getting launch template configs",
    "launch template used for instance launch wasn't found",
    "ami used for instance launch",
    "security groups and subnets must be in the same vpc",
    "instance profile name used from ec2nodeclass status does not exist",
    "rendered user data exceeds the ec2 user data size limit",
    "not eligible for free tier",
    "still being verified",
    "request limit exceeded",
    "an internal error has occurred",
    "error getting subnets",
    "error resolving instance types",
    "status condition transitioned, type: launched",
    // Read for the NodeClaim's NodePool.
    "created nodeclaim",
];

/// Karpenter's error mapping (`ToReasonMessage`, A `pkg/errors/errors.go`), in its order: the
/// reason, the substrings of the AWS error that select it, and the NodeClaim message it writes.
struct LaunchReason {
    reason: &'static str,
    markers: &'static [&'static str],
    message: &'static str,
}

const REASONS: &[LaunchReason] = &[
    LaunchReason {
        reason: "SecurityGroupSubnetVPCMismatch",
        markers: &["belong to different networks"],
        message: "Security groups and subnets must be in the same VPC.",
    },
    LaunchReason {
        reason: "InstanceProfileNameInvalid",
        markers: &["iamInstanceProfile.name is invalid"],
        message: "Instance profile name used from EC2NodeClass status does not exist",
    },
    LaunchReason {
        reason: "LaunchTemplateNotFound",
        markers: &[
            "InvalidLaunchTemplateId.NotFound",
            "InvalidLaunchTemplateName.NotFound",
        ],
        message: "Launch template used for instance launch wasn't found",
    },
    LaunchReason {
        reason: "UserDataSizeLimitExceeded",
        markers: &["User data is limited to"],
        message: "Rendered user data exceeds the EC2 user data size limit",
    },
    LaunchReason {
        reason: "InvalidAMIID",
        markers: &["InvalidAMIID.Malformed"],
        message: "AMI used for instance launch is invalid",
    },
    LaunchReason {
        reason: "AMINotFound",
        markers: &["InvalidAMIID.NotFound"],
        message: "AMI used for instance launch either does not exist or you don't have permissions to use it",
    },
    LaunchReason {
        reason: "RequestLimitExceeded",
        markers: &["RequestLimitExceeded"],
        message: "Request limit exceeded",
    },
    LaunchReason {
        reason: "InternalError",
        markers: &["InternalError"],
        message: "An internal error has occurred",
    },
    LaunchReason {
        reason: "FreeTierIneligible",
        markers: &["not eligible for Free Tier"],
        message: "The specified instance type is not eligible for Free Tier",
    },
    LaunchReason {
        reason: "AccountPendingVerification",
        markers: &["PendingVerification"],
        message: "An instance launch was requested but the request for launching resources in this region is still being verified",
    },
    // Not `ToReasonMessage`: the cloud provider's own reasons for a launch that failed before
    // CreateFleet (A `pkg/cloudprovider/cloudprovider.go`).
    LaunchReason {
        reason: "SubnetResolutionFailed",
        markers: &["getting subnets, "],
        message: "Error getting subnets",
    },
    LaunchReason {
        reason: "InstanceTypeResolutionFailed",
        markers: &["resolving instance types, "],
        message: "Error resolving instance types",
    },
    LaunchReason {
        reason: "LaunchFailed",
        markers: &[],
        message: "Instance launch failed",
    },
];

/// Texts another rule explains (the specific rules KW302 yields to, plus NodeClass readiness,
/// which is the KW5xx rules' and KMS, which is KW307's).
const EXPLAINED_ELSEWHERE: &[&str] = &[
    // KW101
    "ServiceLinkedRoleCreationNotPermitted",
    "SpotSLRCreationFailed",
    "Spot ServiceLinkedRole",
    // KW105
    "UnauthorizedOperation",
    "AccessDenied",
    "AuthFailure",
    "is not authorized",
    "AMIAuthorizationFailure",
    "not authorized for images",
    // KW214
    "InsufficientFreeAddressesInSubnet",
    "not enough free ip addresses",
    "not enough free addresses in subnet",
    // KW215
    "insufficient capacity",
    "InsufficientInstanceCapacity",
    "MaxSpotInstanceCountExceeded",
    "VcpuLimitExceeded",
    "UnfulfillableCapacity:",
    "MaxFleetCountExceeded",
    "ReservationCapacityExceeded",
    "FleetQuotaExceeded",
    "SpotQuotaExceeded",
    "VCPULimitExceeded",
    // KW301
    "InvalidBlockDeviceMapping",
    // KW310
    "no instance types satisfy requirements of amis",
    // NodeClass readiness (KW5xx)
    "NodeClassRef not ready",
    "resolving nodeclass readiness",
    "NodeClassReadinessUnknown",
    "NodeClassNotReady",
    // KW307
    "InvalidKMSKey",
    // KW501: selector terms that resolved nothing, so CreateFleet was never called (a subnet
    // failure keeps its own SubnetResolutionFailed step list here)
    "no security groups exist given constraints",
    "no amis exist given constraints",
];

fn explained_elsewhere(text: &str) -> bool {
    EXPLAINED_ELSEWHERE
        .iter()
        .any(|s| contains_ignore_ascii_case(text, s))
        // The controller's own credentials failed before any EC2 call (`WebIdentityErr`,
        // `operation error STS: AssumeRoleWithWebIdentity`, Pod Identity): KW102 when STS
        // did not answer, KW103 when it refused. Nothing about this launch to fix.
        || crate::rules::kw1xx::credentials::credential_failure(text).is_some()
}

/// The NodeClaim messages of the mapping, as they appear in describe/YAML lines.
fn mapped_message_reason(text: &str) -> Option<&'static str> {
    if contains_ignore_ascii_case(text, "Error creating fleet")
        || contains_ignore_ascii_case(text, "Error getting launch template configs")
    {
        // `Error creating fleet request: <mapped message>` names its reason in the tail.
        return Some(
            REASONS
                .iter()
                .find(|r| {
                    r.reason != "LaunchFailed"
                        && contains_ignore_ascii_case(text, r.message.trim_end_matches('.'))
                })
                .map_or("LaunchFailed", |r| r.reason),
        );
    }
    REASONS
        .iter()
        .find(|r| contains_ignore_ascii_case(text, r.message.trim_end_matches('.')))
        .map(|r| r.reason)
}

/// A `Reason: LaunchFailed` / `reason: LaunchFailed` line of a describe or YAML condition.
fn raw_reason_line(text: &str) -> bool {
    let t = text.trim().trim_start_matches("- ");
    let Some((key, value)) = t.split_once(':') else {
        return false;
    };
    key.trim().eq_ignore_ascii_case("reason")
        && value.trim().trim_matches(['"', '\'']) == "LaunchFailed"
}

/// The reason Karpenter's mapping gives an AWS error text.
fn reason_of_error(text: &str) -> &'static str {
    REASONS
        .iter()
        .find(|r| {
            !r.markers.is_empty()
                && r.markers
                    .iter()
                    .any(|m| contains_ignore_ascii_case(text, m))
        })
        .map_or("LaunchFailed", |r| r.reason)
}

/// Whether the input shows NodeClaim `name` launched: its `Launched` condition True, or
/// Karpenter's `launched nodeclaim` line for it. Karpenter retries a launch that failed on a
/// transient error (RequestLimitExceeded, InternalError) and launches a NodeClaim once, so a
/// launch error of a NodeClaim that launched is history.
fn launched_after_all(facts: &Facts, name: &str) -> bool {
    let condition = facts.nodeclaims.iter().any(|c| {
        c.meta.name == name
            && c.conditions.iter().any(|k| {
                crate::facts::condition_type_is(&k.condition_type, "Launched") && k.status == "True"
            })
    });
    condition
        || facts.messages.iter().any(|m| {
            m.origin == MessageOrigin::KarpenterLog
                && (contains_ignore_ascii_case(&m.text, "launched nodeclaim")
                    || contains_ignore_ascii_case(&m.text, "launched machine"))
                && !contains_ignore_ascii_case(&m.text, "failed launching nodeclaim")
                && nodeclaim_of(facts, m).as_deref() == Some(name)
        })
}

struct Hit {
    nodeclaim: Option<String>,
    /// The NodePool whose NodeRegistrationHealthy copied the launch reason, or the NodePool
    /// (Provisioner) the log line names.
    nodepool: Option<String>,
    reason: &'static str,
    error: Option<LaunchError>,
    evidence: Vec<Evidence>,
    text: String,
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut hits: Vec<Hit> = Vec::new();
    // Launch errors in the controller log (and pasted log text).
    for m in &facts.messages {
        let t = &m.text;
        let is_error = contains_ignore_ascii_case(t, "launching nodeclaim, ")
            || contains_ignore_ascii_case(t, "could not launch node, ")
            || contains_ignore_ascii_case(t, "launching machine, ")
            // v0.2x: `Provisioning failed, launching node, creating cloud provider instance,
            // ...`. Its other `launching node, ` errors (Provisioner limits, creating the Node
            // object) are no instance launch.
            || contains_ignore_ascii_case(t, "launching node, creating cloud provider instance")
            // v0.27 to v0.31: `Reconciler error` with `creating machine, creating instance, ...`.
            || contains_ignore_ascii_case(t, "creating machine, creating instance");
        if !is_error || contains_ignore_ascii_case(t, "failed launching nodeclaim") {
            continue;
        }
        hits.push(Hit {
            nodeclaim: nodeclaim_of(facts, m),
            // Before v0.32 the line names the Provisioner (`{"provisioner": "default"}`), and
            // before v0.28 there is no Machine to find it through.
            nodepool: message_nodepool(facts, m),
            reason: reason_of_error(t),
            error: parse_launch_error(t),
            evidence: vec![evidence_of(m)],
            text: t.clone(),
        });
    }
    // Launched conditions with a mapped reason (and a NodePool's NodeRegistrationHealthy that
    // copies one).
    for c in conditions(facts) {
        let launched = c.is("Launched") || c.is("NodeRegistrationHealthy");
        let Some(reason) = REASONS
            .iter()
            .find(|r| r.reason == c.reason)
            .map(|r| r.reason)
        else {
            continue;
        };
        if !launched || !c.not_true() {
            continue;
        }
        // `LaunchFailed` with `Error creating fleet request: <mapped message>` names the real
        // reason in its message.
        // v1.0 to v1.1 say `LaunchFailed` for every error and v1.0 puts the EC2 error in the
        // message: the mapping of later versions names what it is.
        let reason = match reason {
            "LaunchFailed" => {
                mapped_message_reason(&c.message).unwrap_or_else(|| reason_of_error(&c.message))
            }
            _ => reason,
        };
        let of_nodepool = c.kind.as_deref() == Some("NodePool");
        hits.push(Hit {
            nodeclaim: (!of_nodepool).then(|| c.object.clone()).flatten(),
            nodepool: of_nodepool.then(|| c.object.clone()).flatten(),
            reason,
            error: parse_launch_error(&c.message),
            evidence: c.evidence.clone(),
            text: c.display(),
        });
    }
    // Describe / YAML lines the object ingest did not model, and custom-columns rows of
    // `kubectl get nodeclaims` (a Launched reason column), whose first cell names the claim.
    let listed: std::collections::BTreeSet<&str> = facts
        .nodeclaims
        .iter()
        .map(|c| c.meta.name.as_str())
        .collect();
    for m in facts
        .messages
        .iter()
        .filter(|m| m.origin == MessageOrigin::Unrecognised || m.origin == MessageOrigin::Event)
    {
        let reason = if raw_reason_line(&m.text) {
            Some("LaunchFailed")
        } else {
            mapped_message_reason(&m.text)
        };
        let Some(reason) = reason else { continue };
        if hits.iter().any(|h| h.evidence.contains(&m.evidence)) {
            continue;
        }
        let row_claim = || {
            let first = m.text.split_whitespace().next()?;
            listed.contains(first).then(|| first.to_string())
        };
        hits.push(Hit {
            nodeclaim: nodeclaim_of(facts, m).or_else(row_claim),
            nodepool: None,
            reason,
            error: None,
            evidence: vec![evidence_of(m)],
            text: m.text.clone(),
        });
    }
    // A NodeClaim whose failure another rule explains is explained, whatever else it shows.
    let explained_claims: Vec<String> = hits
        .iter()
        .filter(|h| explained_elsewhere(&h.text))
        .filter_map(|h| h.nodeclaim.clone())
        .chain(facts.messages.iter().filter_map(|m| {
            explained_elsewhere(&m.text)
                .then(|| nodeclaim_of(facts, m))
                .flatten()
        }))
        .collect();
    hits.retain(|h| {
        !explained_elsewhere(&h.text)
            && h.nodeclaim
                .as_ref()
                .is_none_or(|n| !explained_claims.contains(n))
    });
    // Lines without a NodeClaim (raw describe lines) are only kept when nothing in the input
    // explains a launch failure: they are then the same NodeClaim's.
    let any_explained = facts
        .messages
        .iter()
        .any(|m| explained_elsewhere(&m.text) && is_launch_context(&m.text));
    if any_explained {
        hits.retain(|h| h.nodeclaim.is_some());
    }
    hits.retain(|h| {
        !h.nodeclaim
            .as_deref()
            .is_some_and(|n| launched_after_all(facts, n))
    });
    if hits.is_empty() {
        return Vec::new();
    }
    let mut nodeclaims: Vec<String> = Vec::new();
    if hits.iter().all(|h| h.nodeclaim.is_none()) {
        if let Some(o) = raw_describe_subject(facts).filter(|o| o.kind == "NodeClaim") {
            nodeclaims.push(o.name);
        }
    }
    let mut reasons: Vec<&'static str> = Vec::new();
    let mut details: Vec<String> = Vec::new();
    let mut grammars: Vec<&'static str> = Vec::new();
    for h in &hits {
        if let Some(n) = &h.nodeclaim {
            push_unique(&mut nodeclaims, n.clone());
        }
        if !reasons.contains(&h.reason) {
            reasons.push(h.reason);
        }
        if let Some(e) = &h.error {
            let d = match &e.code {
                Some(c) => format!("{c}: {}", e.detail),
                None => e.detail.clone(),
            };
            if !d.is_empty() && !details.contains(&d) {
                details.push(d);
            }
            if !e.grammar.is_empty() && !grammars.contains(&e.grammar) {
                grammars.push(e.grammar);
            }
        }
    }
    // A specific reason makes the generic default redundant.
    if reasons.len() > 1 {
        reasons.retain(|r| *r != "LaunchFailed");
    }
    let nodepool = nodeclaims
        .iter()
        .find_map(|n| nodepool_of_nodeclaim(facts, n))
        .or_else(|| hits.iter().find_map(|h| h.nodepool.clone()));
    let nodeclass = nodeclaims
        .iter()
        .find_map(|n| nodeclass_of_nodeclaim(facts, n))
        .or_else(|| sole_nodeclass(facts));
    // Before v0.32 a Machine (of a Provisioner) with `MachineLaunched`.
    let api = Api {
        legacy: Api::of(facts, &nodeclaims).legacy
            || hits.iter().any(|h| {
                contains_ignore_ascii_case(&h.text, "creating machine, ")
                    || contains_ignore_ascii_case(&h.text, "launching machine, ")
                    || contains_ignore_ascii_case(&h.text, "could not launch node, ")
                    || contains_ignore_ascii_case(&h.text, "launching node, ")
                    || contains_ignore_ascii_case(&h.text, "MachineLaunched")
            }),
    };
    let legacy = api.legacy;
    let (claim, pool) = (api.claim(), api.pool());
    // Before v0.28 the Provisioner launched nodes itself, without a Machine (`Could not launch
    // node, ...`, `launching node, ...`): there is no Machine to describe.
    // v0.28-v0.31 still began with `Could not launch node, launching machine, ...`, which
    // the era reads as a Machine.
    let no_machine =
        nodeclaims.is_empty() && crate::rules::version::era_before_v0_28(facts) == Some(true);
    let mut summary = if no_machine {
        "Karpenter could not launch a node".to_string()
    } else if nodeclaims.is_empty() && nodepool.is_some() {
        format!("Karpenter could not launch the instances of the {pool}'s {claim}s")
    } else if nodeclaims.is_empty() {
        format!("Karpenter could not launch the {claim}'s instance")
    } else {
        format!("Karpenter could not launch {}", named(claim, &nodeclaims))
    };
    // NodeClaims of several NodePools name each one, not the first's for all.
    let mut nodepools: Vec<String> = Vec::new();
    for np in nodeclaims
        .iter()
        .filter_map(|n| nodepool_of_nodeclaim(facts, n))
    {
        push_unique(&mut nodepools, np);
    }
    if nodepools.len() > 1 {
        summary.push_str(&format!(" ({})", named(pool, &nodepools)));
    } else if let Some(np) = &nodepool {
        summary.push_str(&format!(" ({pool} {np})"));
    }
    let reason_words: Vec<String> = reasons
        .iter()
        .map(|r| {
            let msg = REASONS
                .iter()
                .find(|x| x.reason == *r)
                .map_or("", |x| x.message);
            // Before v0.32 there was no EC2NodeClass: the profile came from the AWSNodeTemplate
            // or the global settings.
            let msg = if legacy {
                msg.replace(" used from EC2NodeClass status", "")
            } else {
                msg.to_string()
            };
            format!("{r} ({})", msg.trim_end_matches('.'))
        })
        .collect();
    summary.push_str(&format!(": {}.", reason_words.join(", ")));
    let unreachable = hits.iter().find_map(|h| unreachable_api(&h.text));
    if let Some(api) = &unreachable {
        summary.push_str(&format!(
            " Karpenter could not reach the AWS {} API at {} ({}), so the launch could not go on.",
            api.service, api.host, api.failure
        ));
    } else if !details.is_empty() {
        summary.push_str(&format!(" EC2 said: \"{}\"", details.join("\"; \"")));
        if !grammars.is_empty() {
            summary.push_str(&format!(" (Karpenter {} wording)", grammars.join(", ")));
        }
        summary.push('.');
    }
    if no_machine {
        summary.push_str(
            " Karpenter retries the launch, so the pods stay Pending while this repeats.",
        );
    } else if legacy {
        summary.push_str(" The Machine stays MachineLaunched=False, Karpenter retries the launch and deletes the Machine after the 15-minute registration timeout, so the pods stay Pending while this repeats.");
    } else {
        // v1.1+ keep Launched Unknown; v0.32-v1.0 set it False: say what the input shows.
        let status = nodeclaims
            .iter()
            .filter_map(|n| launched_status(facts, n))
            .find(|s| s.eq_ignore_ascii_case("false"))
            .map_or("Unknown", |_| "False");
        summary.push_str(&if nodeclaims.len() > 1 {
            format!(" The NodeClaims stay Launched={status} and are replaced after the 5-minute launch timeout, so the pods stay Pending while this repeats.")
        } else {
            format!(" The NodeClaim stays Launched={status} and is replaced after the 5-minute launch timeout, so the pods stay Pending while this repeats.")
        });
    }
    let nodeclass_cmd = api.nodeclass_cmd(
        nodeclass.as_deref(),
        nodeclaims.first().map(String::as_str),
        nodepool.as_deref(),
    );
    let ctx = Ctx {
        api,
        no_machine,
        known_nodeclass: nodeclass.clone(),
        known_nodepool: nodepool.clone(),
        nodeclaim: nodeclaims
            .first()
            .cloned()
            .unwrap_or_else(|| format!("<{}>", api.claim_res())),
        nodeclass_cmd,
        nodepool: nodepool
            .clone()
            .unwrap_or_else(|| format!("<{}>", api.pool_res())),
        ns: karpenter_namespace(facts),
        ids: hits.iter().flat_map(|h| aws_ids(&h.text)).collect(),
        profile: hits.iter().find_map(|h| instance_profile(&h.text)),
    };
    let mut steps: Vec<Remediation> = match &unreachable {
        Some(api) => unreachable_steps(api),
        None => reasons.iter().flat_map(|r| steps_for(r, &ctx)).collect(),
    };
    if no_machine {
        steps.push(Remediation::command(
            "Read the whole error in the controller log:",
            format!(
                "kubectl logs -n {} -l app.kubernetes.io/name=karpenter --since=1h | grep -iE 'could not launch node|launching node, '",
                ctx.ns
            ),
        ));
    } else {
        steps.push(Remediation::command(
        format!("Read the whole error for the {claim} in the controller log:"),
        format!(
            "kubectl describe {} {} && kubectl logs -n {} -l app.kubernetes.io/name=karpenter --since=1h | grep '{}'",
            ctx.api.claim_kubectl(),
            ctx.nodeclaim,
            ctx.ns,
            ctx.nodeclaim
        ),
    ));
    }
    let mut related: Vec<&'static str> = Vec::new();
    if reasons.contains(&"InternalError") {
        related.push("KW307");
    }
    let object = nodeclaims
        .first()
        .map(|n| crate::rules::kw3xx::common::claim_ref(facts, n));
    vec![Diagnosis::new(&META, summary)
        .with_object(object.as_ref())
        .with_node_pool(nodepool.as_deref())
        .with_evidence(hits.into_iter().flat_map(|h| h.evidence))
        .with_related(&related)
        .with_remediation(steps)]
}

/// A text that is about launching (so that a specific rule's hit explains the launch failure).
fn is_launch_context(text: &str) -> bool {
    [
        "launching nodeclaim",
        "creating instance",
        "launch",
        "fleet",
        "nodeclaim",
        "SpotSLRCreationFailed",
        "Unauthorized",
        "User is not authorized",
    ]
    .iter()
    .any(|s| contains_ignore_ascii_case(text, s))
}

fn evidence_of(m: &Message) -> Evidence {
    let mut e = m.evidence.clone();
    if e.first_seen.is_none() {
        e.first_seen = m.time.clone();
        e.last_seen = m.time.clone();
    }
    e
}

/// AWS resource IDs an error names (`sg-`, `subnet-`, `ami-`, `lt-`).
fn aws_ids(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-')) {
        if ["sg-", "subnet-", "ami-", "lt-"]
            .iter()
            .any(|p| word.starts_with(p) && word.len() > p.len() + 3)
        {
            push_unique(&mut out, word);
        }
    }
    out
}

/// `Value (<profile>) for parameter iamInstanceProfile.name is invalid`: the profile's name.
fn instance_profile(text: &str) -> Option<String> {
    let end = text.find(") for parameter iamInstanceProfile")?;
    let start = text[..end].rfind("Value (")? + "Value (".len();
    let name = &text[start..end];
    (!name.is_empty() && !name.contains(char::is_whitespace)).then(|| name.to_string())
}

struct Ctx {
    api: Api,
    /// Before v0.28: the Provisioner launched the node itself, with no Machine to name.
    no_machine: bool,
    known_nodeclass: Option<String>,
    known_nodepool: Option<String>,
    nodeclaim: String,
    /// The EC2NodeClass (AWSNodeTemplate) for commands: its name, or a lookup through the
    /// NodeClaim (Machine) or NodePool (Provisioner).
    nodeclass_cmd: String,
    nodepool: String,
    ns: String,
    ids: Vec<String>,
    /// The instance profile EC2 rejected, as its error names it.
    profile: Option<String>,
}

/// An AWS API the controller could not reach during the launch: `operation error SSM:
/// GetParameter, ... Post "https://ssm.us-east-1.amazonaws.com/": dial tcp 10.0.0.5:443: i/o
/// timeout` (the AMI alias lookup of an isolated VPC without the SSM endpoint).
struct UnreachableApi {
    /// The SDK's service name (`SSM`, `EC2`, `IAM`).
    service: String,
    host: String,
    /// `com.amazonaws.<region>.<service>` when the host names a region.
    endpoint_service: Option<String>,
    region: Option<String>,
    failure: &'static str,
}

fn unreachable_api(text: &str) -> Option<UnreachableApi> {
    const FAILURES: [(&str, &str); 6] = [
        ("i/o timeout", "i/o timeout"),
        ("no such host", "no such host: DNS"),
        ("connection refused", "connection refused"),
        ("connection reset", "connection reset"),
        ("tls handshake timeout", "TLS handshake timeout"),
        ("context deadline exceeded", "timed out"),
    ];
    let failure = FAILURES
        .iter()
        .find(|(needle, _)| contains_ignore_ascii_case(text, needle))
        .map(|(_, said)| *said)?;
    let at = crate::facts::find_ignore_ascii_case(text, "operation error ")?;
    let rest = &text[at + "operation error ".len()..];
    let service = rest.split(':').next()?.trim();
    if service.is_empty() || service.contains(' ') {
        return None;
    }
    let url = crate::facts::find_ignore_ascii_case(text, "https://")?;
    let host: String = text[url + "https://".len()..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
        .collect();
    if !host.ends_with(".amazonaws.com") && !host.ends_with(".amazonaws.com.cn") {
        return None;
    }
    let labels: Vec<&str> = host.split('.').collect();
    let region = labels
        .get(1)
        .filter(|r| r.matches('-').count() >= 2 && r.ends_with(|c: char| c.is_ascii_digit()))
        .map(|r| r.to_string());
    let endpoint_service = region
        .as_ref()
        .map(|r| format!("com.amazonaws.{r}.{}", labels[0]));
    Some(UnreachableApi {
        service: service.to_string(),
        host,
        endpoint_service,
        region,
        failure,
    })
}

fn unreachable_steps(api: &UnreachableApi) -> Vec<Remediation> {
    let mut steps = Vec::new();
    match (&api.endpoint_service, &api.region) {
        (Some(service), Some(region)) => {
            steps.push(Remediation::command(
                format!("Without internet egress from the controller's subnets, the VPC needs an interface endpoint for {} ({service}, private DNS on) whose security group allows 443 from the controller; check whether one exists:", api.service),
                format!("aws ec2 describe-vpc-endpoints --region {region} --filters Name=service-name,Values={service} --query 'VpcEndpoints[].[VpcEndpointId,VpcId,State,PrivateDnsEnabled]' --output table"),
            ));
            steps.push(Remediation::command(
                "Create it in the cluster's VPC, in the subnets the controller runs in:",
                format!("aws ec2 create-vpc-endpoint --region {region} --vpc-id <vpc-id> --vpc-endpoint-type Interface --service-name {service} --subnet-ids <subnet-ids> --security-group-ids <sg-allowing-443-from-nodes> --private-dns-enabled"),
            ));
        }
        _ => steps.push(Remediation::text(format!(
            "Give the controller a network path to {}: internet egress (a NAT gateway), or a proxy (HTTPS_PROXY and NO_PROXY on the Karpenter Deployment).",
            api.host
        ))),
    }
    if api.failure.starts_with("no such host") {
        steps.push(Remediation::text(format!(
            "`no such host` is a DNS answer: an endpoint without private DNS, or a resolver that cannot answer for {}, fails this way even where the route exists.",
            api.host
        )));
    }
    steps
}

impl Ctx {
    /// The NodePool to edit: its name, else the command that reads it from the NodeClaim's
    /// label (the Provisioner's, before v0.32), else the placeholder.
    fn nodepool_cmd(&self) -> String {
        if self.known_nodepool.is_some() || self.nodeclaim.starts_with('<') {
            return self.nodepool.clone();
        }
        format!(
            "\"$(kubectl get {} {} -o jsonpath='{{.metadata.labels.karpenter\\.sh/{}}}')\"",
            self.api.claim_kubectl(),
            self.nodeclaim,
            if self.api.legacy {
                "provisioner-name"
            } else {
                "nodepool"
            }
        )
    }

    /// The IDs with `prefix`, each once: a retried launch logs the same error again.
    fn ids_with(&self, prefix: &str) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        for i in self.ids.iter().filter(|i| i.starts_with(prefix)) {
            push_unique(&mut ids, i.clone());
        }
        ids
    }
}

fn steps_for(reason: &str, ctx: &Ctx) -> Vec<Remediation> {
    let ncc = &ctx.nodeclass_cmd;
    let ns = &ctx.ns;
    let api = ctx.api;
    let (class, class_res, pool, pool_res) =
        (api.class(), api.class_res(), api.pool(), api.pool_res());
    let profile = ctx.profile.as_deref().unwrap_or("<profile>");
    // Named when the input shows them, else described: not `EC2NodeClass <ec2nodeclass>`.
    // Before v0.28 there is no Machine to name: what was launched is a node.
    let claim = if ctx.no_machine { "node" } else { api.claim() };
    let cn = match &ctx.known_nodeclass {
        Some(n) => format!("{class} {n}"),
        // Only the NodePool (Provisioner) is known when the line names it and no NodeClaim.
        None if ctx.nodeclaim.starts_with('<') && ctx.known_nodepool.is_some() => format!(
            "the {class} of {pool} {}",
            ctx.known_nodepool.as_deref().unwrap_or_default()
        ),
        None if ctx.no_machine => format!("the Provisioner's {class}"),
        None => format!("the {claim}'s {class}"),
    };
    let pn = match &ctx.known_nodepool {
        Some(n) => format!("{pool} {n}"),
        None if ctx.no_machine => format!("the {pool}"),
        None => format!("the {claim}'s {pool}"),
    };
    match reason {
        "LaunchTemplateNotFound" => vec![
            Remediation::command(
                "A launch template Karpenter created and cached was deleted outside Karpenter (a cleanup job, another tool). Karpenter recreates it when its cache entry expires; restart the controller to drop the cache now:",
                format!("kubectl rollout restart deployment karpenter -n {ns}"),
            ),
            Remediation::command(
                "Keep cleanup automation away from Karpenter's launch templates (tagged karpenter.k8s.aws/cluster):",
                "aws ec2 describe-launch-templates --filters Name=tag-key,Values=karpenter.k8s.aws/cluster --query 'LaunchTemplates[].[LaunchTemplateName,CreateTime]' --output table",
            ),
        ],
        // The v1alpha1 AWSNodeTemplate selects AMIs with an `amiSelector` map, not terms, and
        // has no aliases: without a selector it uses the EKS optimized AMI of `amiFamily`.
        "InvalidAMIID" if api.legacy => vec![Remediation::yaml(
            format!("An AMI ID in {cn} is malformed (`ami-` and 8 or 17 hex digits). Fix `spec.amiSelector` (`kubectl edit awsnodetemplate {ncc}`), or remove it so Karpenter uses the current EKS optimized AMI of `spec.amiFamily`:"),
            "spec:\n  amiFamily: AL2\n  amiSelector:\n    aws-ids: ami-0123456789abcdef0   # or remove amiSelector\n",
        )],
        "InvalidAMIID" => vec![Remediation::yaml(
            format!("An AMI ID in {cn} is malformed (`ami-` and 8 or 17 hex digits). Fix `spec.amiSelectorTerms` (`kubectl edit ec2nodeclass {ncc}`), or select by alias:"),
            "spec:\n  amiSelectorTerms:\n    - alias: al2023@latest   # or pin a version, e.g. al2023@v20250203\n",
        )],
        "AMINotFound" => {
            let amis = ctx.ids_with("ami-");
            let ami = amis.first().cloned().unwrap_or_else(|| "<ami-id>".to_string());
            let (selector, current) = if api.legacy {
                (
                    "{.spec.amiFamily} {.spec.amiSelector}",
                    "or remove `amiSelector` so Karpenter uses the current EKS optimized AMI of `amiFamily`",
                )
            } else {
                (
                    "{.spec.amiSelectorTerms}",
                    "or select a current AMI by alias (`alias: al2023@latest`)",
                )
            };
            vec![
                Remediation::command(
                    format!("The AMI does not exist in this region or the account may not use it (deregistered, another region, or a private AMI not shared). Check what {cn} resolved and whether EC2 knows it:"),
                    format!("kubectl get {class_res} {ncc} -o jsonpath='{selector}{{\"\\n\"}}{{.status.amis}}{{\"\\n\"}}' && aws ec2 describe-images --image-ids {ami} --query 'Images[].[ImageId,Name,State,Public,OwnerId]' --output table"),
                ),
                Remediation::command(
                    format!("For a private AMI, share it with this account from the owning account (and its snapshots' KMS key, if encrypted); {current}:"),
                    format!("aws ec2 modify-image-attribute --image-id {ami} --launch-permission \"Add=[{{UserId=<account-id>}}]\""),
                ),
            ]
        }
        "SecurityGroupSubnetVPCMismatch" => {
            let sgs = ctx.ids_with("sg-");
            let subnets = ctx.ids_with("subnet-");
            let mut v = vec![Remediation::command(
                format!("The selectors of {cn} pick security groups and subnets from different VPCs. List what it resolved, with each one's VPC:"),
                format!(
                    "kubectl get {class_res} {ncc} -o jsonpath='{{.status.securityGroups[*].id}}{{\"\\n\"}}{{.status.subnets[*].id}}{{\"\\n\"}}'; aws ec2 describe-security-groups --group-ids {} --query 'SecurityGroups[].[GroupId,VpcId]' --output table; aws ec2 describe-subnets --subnet-ids {} --query 'Subnets[].[SubnetId,VpcId]' --output table",
                    if sgs.is_empty() { "<sg-ids>".to_string() } else { sgs.join(" ") },
                    if subnets.is_empty() { "<subnet-ids>".to_string() } else { subnets.join(" ") },
                ),
            )];
            let yaml = if api.legacy {
                // v1alpha1 selectors are one map of tags each.
                "spec:\n  subnetSelector:\n    karpenter.sh/discovery: <cluster-name>\n  securityGroupSelector:\n    karpenter.sh/discovery: <cluster-name>\n"
            } else {
                "spec:\n  subnetSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: <cluster-name>\n  securityGroupSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: <cluster-name>\n"
            };
            v.push(Remediation::yaml(
                format!("Narrow both selectors to the cluster's VPC, e.g. by the discovery tag on the cluster's own subnets and node security group (`kubectl edit {class_res} {ncc}`):"),
                yaml,
            ));
            v
        }
        // Before v0.32 the profile is the AWSNodeTemplate's `spec.instanceProfile`, else the
        // `aws.defaultInstanceProfile` setting; Karpenter never creates it.
        "InstanceProfileNameInvalid" if api.legacy => vec![
            Remediation::command(
                format!("The instance profile Karpenter launches with no longer exists (deleted outside Karpenter, or renamed): `spec.instanceProfile` of {cn}, else the `aws.defaultInstanceProfile` setting (the karpenter-global-settings ConfigMap, or the chart's `settings.aws.defaultInstanceProfile`). Check both and ask IAM:"),
                format!("kubectl get awsnodetemplate {ncc} -o jsonpath='instanceProfile={{.spec.instanceProfile}}{{\"\\n\"}}'; kubectl get configmap karpenter-global-settings -n {ns} -o jsonpath='default={{.data.aws\\.defaultInstanceProfile}}{{\"\\n\"}}'; aws iam get-instance-profile --instance-profile-name {profile}"),
            ),
            Remediation::command(
                "If the name is mistyped, correct it in the template or the setting; if the profile really is gone, create it with the node role in it (or point the setting at an existing one):",
                format!("aws iam create-instance-profile --instance-profile-name {profile} && aws iam add-role-to-instance-profile --instance-profile-name {profile} --role-name <node-role>"),
            ),
        ],
        "InstanceProfileNameInvalid" => vec![
            Remediation::command(
                format!("The instance profile in {cn}'s status no longer exists (deleted outside Karpenter, or renamed). Compare spec and status with IAM:"),
                format!("kubectl get ec2nodeclass {ncc} -o jsonpath='role={{.spec.role}} instanceProfile={{.spec.instanceProfile}} status={{.status.instanceProfile}}{{\"\\n\"}}' && aws iam get-instance-profile --instance-profile-name \"$(kubectl get ec2nodeclass {ncc} -o jsonpath='{{.status.instanceProfile}}')\""),
            ),
            Remediation::command(
                "With `spec.role`, Karpenter creates the profile itself: restart the controller so it re-creates it. With `spec.instanceProfile`, first check the name for a typo (compare with `aws iam list-instance-profiles`); if the profile really is gone, create it and add the node role:",
                format!("aws iam create-instance-profile --instance-profile-name {profile} && aws iam add-role-to-instance-profile --instance-profile-name {profile} --role-name <node-role>"),
            ),
        ],
        "UserDataSizeLimitExceeded" => vec![Remediation::command(
            format!("EC2 allows 16 KB of user data and Karpenter adds its bootstrap to `spec.userData` of {cn}: shrink it (fetch large scripts from S3 or SSM at boot instead of inlining them). Its current size:"),
            format!("kubectl get {class_res} {ncc} -o jsonpath='{{.spec.userData}}' | wc -c"),
        )],
        "FreeTierIneligible" => {
            // A Provisioner's requirements are top-level in its spec.
            let yaml = if api.legacy {
                "spec:\n  requirements:\n    - key: node.kubernetes.io/instance-type\n      operator: In\n      values: [\"t3.micro\", \"t3.small\"]\n"
            } else {
                "spec:\n  template:\n    spec:\n      requirements:\n        - key: node.kubernetes.io/instance-type\n          operator: In\n          values: [\"t3.micro\", \"t3.small\"]\n"
            };
            vec![Remediation::yaml(
                format!("The account is limited to Free Tier instance types: upgrade the account plan, or restrict {pn} to the types the plan allows (`kubectl edit {pool_res} {}`):", ctx.nodepool_cmd()),
                yaml,
            )]
        }
        "AccountPendingVerification" => vec![Remediation::text(
            "AWS is still verifying the account for this region (new accounts and newly enabled regions): launches fail until it completes, usually within minutes and at most about four hours. Wait, or open a case with AWS Support if it lasts longer.",
        )],
        "RequestLimitExceeded" => vec![Remediation::command(
            "EC2 is throttling the account's API calls in this region; Karpenter retries with backoff. Find what else calls EC2 heavily (other autoscalers, scripts, monitoring) and reduce it, or ask AWS Support for a higher EC2 API rate limit:",
            "aws cloudtrail lookup-events --lookup-attributes AttributeKey=EventSource,AttributeValue=ec2.amazonaws.com --max-results 50 --query 'Events[].[EventTime,EventName,Username]' --output table",
        )],
        "InternalError" => vec![Remediation::text(format!(
            "EC2 returned an internal error: usually transient, and Karpenter retries with a new {claim}. If it persists for one instance type or zone, leave it out of {pn}; if {cn} encrypts volumes with a customer-managed KMS key, check the key policy (KW307).",
        ))],
        "SubnetResolutionFailed" => {
            let selector = if api.legacy {
                "{.spec.subnetSelector}"
            } else {
                "{.spec.subnetSelectorTerms}"
            };
            vec![Remediation::command(
                format!("Karpenter could not resolve the subnets of {cn} at launch (a DescribeSubnets error, or no subnet left in the {claim}'s zone). Check what it resolved and the controller's error:"),
                format!("kubectl get {class_res} {ncc} -o jsonpath='{selector}{{\"\\n\"}}{{.status.subnets}}{{\"\\n\"}}' && kubectl logs -n {ns} -l app.kubernetes.io/name=karpenter --since=1h | grep -i 'getting subnets'"),
            )]
        }
        "InstanceTypeResolutionFailed" => vec![Remediation::command(
            format!("Karpenter could not resolve the instance types of {pn} at launch (a DescribeInstanceTypes or pricing error). The controller's error says which call failed:"),
            format!("kubectl logs -n {ns} -l app.kubernetes.io/name=karpenter --since=1h | grep -iE 'resolving instance types|instance ?type'"),
        )],
        _ => vec![Remediation::command(
            "No specific reason: look for the CreateFleet error in CloudTrail (fleet-level errors are in the response's errorSet):",
            "aws cloudtrail lookup-events --lookup-attributes AttributeKey=EventName,AttributeValue=CreateFleet --max-results 10 --query 'Events[].CloudTrailEvent' --output text",
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_aws_api_is_named_with_its_endpoint() {
        let api = unreachable_api("launching nodeclaim, creating instance, getting launch template configs, operation error SSM: GetParameter, https response error StatusCode: 0, RequestID: , request send failed, Post \"https://ssm.eu-west-1.amazonaws.com/\": dial tcp 10.0.0.5:443: i/o timeout").unwrap();
        assert_eq!(api.service, "SSM");
        assert_eq!(api.host, "ssm.eu-west-1.amazonaws.com");
        assert_eq!(
            api.endpoint_service.as_deref(),
            Some("com.amazonaws.eu-west-1.ssm")
        );
        assert_eq!(api.failure, "i/o timeout");
        // An API error that is not the network: not this.
        assert!(unreachable_api("operation error EC2: CreateFleet, https response error StatusCode: 400, api error InvalidParameterValue").is_none());
        // IAM has no regional endpoint: no VPC endpoint to propose.
        let iam = unreachable_api("operation error IAM: GetInstanceProfile, exceeded maximum number of attempts, Post \"https://iam.amazonaws.com/\": dial tcp: lookup iam.amazonaws.com: no such host").unwrap();
        assert!(iam.endpoint_service.is_none());
        assert!(unreachable_steps(&iam)[0].text.contains("NAT gateway"));
    }

    #[test]
    fn the_rejected_instance_profile_is_named() {
        assert_eq!(
            instance_profile("InvalidParameterValue: Value (KarpenterNodeInstanceProfile-prod) for parameter iamInstanceProfile.name is invalid. Invalid IAM Instance Profile name").as_deref(),
            Some("KarpenterNodeInstanceProfile-prod")
        );
        assert_eq!(
            instance_profile("Value () for parameter iamInstanceProfile.name is invalid"),
            None
        );
        assert_eq!(instance_profile("Invalid IAM Instance Profile name"), None);
    }
    use crate::facts::{Condition, Meta, NodeClaim};
    use crate::rules;
    use crate::testing::{check_only, ids, remediation_text};

    #[test]
    fn a_nodepool_condition_names_the_nodepool() {
        let report = check_only(
            "KW302",
            "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata:\n  name: general\nspec:\n  template:\n    spec:\n      nodeClassRef: {group: karpenter.k8s.aws, kind: EC2NodeClass, name: general}\nstatus:\n  conditions:\n  - {type: NodeRegistrationHealthy, status: \"False\", reason: SecurityGroupSubnetVPCMismatch, message: Security groups and subnets must be in the same VPC.}\n",
        );
        let d = &report.diagnoses[0];
        assert_eq!(d.node_pool.as_deref(), Some("general"));
        assert!(d.summary.contains("(NodePool general)"), "{}", d.summary);
    }

    #[test]
    fn a_launch_error_of_a_nodeclaim_launched_since_is_history() {
        let error = r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"workers-x7k2p"},"error":"launching nodeclaim, creating instance, creating nodeclaim, RequestLimitExceeded: Request limit exceeded."}"#;
        let launched = r#"{"level":"INFO","message":"launched nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"workers-x7k2p"},"provider-id":"aws:///eu-west-1a/i-0abc","instance-type":"m6i.large"}"#;
        assert_eq!(ids(&check_only("KW302", error)), ["KW302"]);
        assert_eq!(
            ids(&check_only("KW302", &format!("{error}\n{launched}"))),
            [] as [&str; 0]
        );
        // Another NodeClaim's launch says nothing about this one.
        let other = launched.replace("workers-x7k2p", "workers-b8n3c");
        assert_eq!(
            ids(&check_only("KW302", &format!("{error}\n{other}"))),
            ["KW302"]
        );
        // The NodeClaim's own status says it launched.
        let status = "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: workers-x7k2p\nstatus:\n  conditions:\n  - {type: Launched, status: \"True\", reason: Launched}\n---\n";
        assert_eq!(
            ids(&check_only("KW302", &format!("{status}{error}"))),
            [] as [&str; 0]
        );
    }

    #[test]
    fn every_grammar() {
        for text in [
            r#"{"level":"ERROR","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"a-1"},"error":"launching nodeclaim, creating instance, with fleet error(s), too few instances returned: too few instances returned"}"#,
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"a-1"},"error":"launching nodeclaim, creating instance, InvalidAMIID.NotFound: The image id '[ami-0123456789abcdef0]' does not exist"}"#,
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"a-1"},"error":"launching nodeclaim, creating instance, creating nodeclaim, InvalidLaunchTemplateId.NotFound: The specified launch template, with template ID lt-0abc1234, does not exist."}"#,
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"a-1"},"error":"launching nodeclaim, creating instance, creating nodeclaim, InvalidParameter: Security group sg-0aa11 and subnet subnet-0bb22 belong to different networks. (aws-error-code=UnfulfillableCapacity, aws-operation-name=CreateFleet, aws-request-id=1, aws-service-name=EC2, aws-status-code=200)"}"#,
            "2023-01-01T00:00:00Z\tERROR\tcontroller.provisioner\tlaunching machine, creating cloud provider instance, creating instance, with fleet error(s), RequestLimitExceeded: Request limit exceeded.",
            "    Message:               Launch template used for instance launch wasn't found",
            "    message: Rendered user data exceeds the EC2 user data size limit",
            "    Message:               Error creating fleet",
            "    reason: LaunchFailed",
        ] {
            assert_eq!(ids(&check_only("KW302", text)), ["KW302"], "{text}");
        }
    }

    #[test]
    fn launch_failed_with_a_mapped_message_takes_its_reason() {
        let report = check_only(
            "KW302",
            "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: web-x1\nstatus:\n  conditions:\n  - type: Launched\n    status: Unknown\n    reason: LaunchFailed\n    message: 'Error creating fleet request: Request limit exceeded'\n",
        );
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("RequestLimitExceeded"), "{}", d.summary);
        // v1.0 says LaunchFailed for every error, with the EC2 error itself as the message.
        let report = check_only(
            "KW302",
            "apiVersion: karpenter.sh/v1\nkind: NodeClaim\nmetadata:\n  name: web-x2\nstatus:\n  conditions:\n  - type: Launched\n    status: Unknown\n    reason: LaunchFailed\n    message: 'creating instance, with fleet error(s), InvalidParameter: Security group sg-0abc and subnet subnet-0def belong to different networks.'\n",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("SecurityGroupSubnetVPCMismatch")
                && !d.summary.contains("LaunchFailed"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn one_remediation_per_reason() {
        for (reason, marker) in [
            ("LaunchTemplateNotFound", "rollout restart"),
            ("InvalidAMIID", "alias: al2023"),
            ("AMINotFound", "describe-images"),
            ("SecurityGroupSubnetVPCMismatch", "describe-security-groups"),
            ("InstanceProfileNameInvalid", "get-instance-profile"),
            ("UserDataSizeLimitExceeded", "wc -c"),
            ("FreeTierIneligible", "t3.micro"),
            ("AccountPendingVerification", "verifying the account"),
            ("RequestLimitExceeded", "cloudtrail"),
            ("InternalError", "KW307"),
            ("SubnetResolutionFailed", "getting subnets"),
            ("InstanceTypeResolutionFailed", "resolving instance types"),
            ("LaunchFailed", "CreateFleet"),
        ] {
            let mut facts = Facts::default();
            facts.nodeclaims.push(NodeClaim {
                meta: Meta {
                    name: "web-x1".into(),
                    ..Meta::default()
                },
                nodepool: Some("web".into()),
                nodeclass_ref: Some("web-class".into()),
                conditions: vec![Condition {
                    condition_type: "Launched".into(),
                    status: "Unknown".into(),
                    reason: Some(reason.into()),
                    message: Some("m".into()),
                    evidence: None,
                }],
                ..NodeClaim::default()
            });
            let rule = rules::find("KW302").unwrap();
            let d = (rule.check)(&facts);
            assert_eq!(d.len(), 1, "{reason}");
            assert!(d[0].summary.contains(reason), "{}", d[0].summary);
            assert!(d[0].summary.contains("NodeClaim web-x1 (NodePool web)"));
            let all = remediation_text(&d[0]);
            assert!(all.contains(marker), "{reason}: {all}");
        }
    }

    /// Before v0.32 every step is about the user's Machine, Provisioner and AWSNodeTemplate:
    /// `kubectl get ec2nodeclass` fails on such a cluster.
    #[test]
    fn a_machine_gets_awsnodetemplate_and_provisioner_commands() {
        for reason in REASONS.iter().map(|r| r.reason) {
            let mut facts = Facts::default();
            facts.nodeclaims.push(NodeClaim {
                meta: Meta {
                    name: "default-7qzrk".into(),
                    ..Meta::default()
                },
                is_machine: true,
                conditions: vec![Condition {
                    condition_type: "MachineLaunched".into(),
                    status: "False".into(),
                    reason: Some(reason.into()),
                    message: Some("m".into()),
                    evidence: None,
                }],
                ..NodeClaim::default()
            });
            let rule = rules::find("KW302").unwrap();
            let d = (rule.check)(&facts);
            assert_eq!(d.len(), 1, "{reason}");
            let all = remediation_text(&d[0]);
            let lower = all.to_ascii_lowercase();
            for new in [
                "ec2nodeclass",
                "nodeclaim",
                "nodepool",
                "selectorterms",
                "alias:",
            ] {
                assert!(!lower.contains(new), "{reason}: {new} in {all}");
            }
        }
        let text = "2023-06-02T09:00:01.111Z\tERROR\tcontroller.provisioner\tlaunching machine, creating cloud provider instance, creating instance, with fleet error(s), InvalidParameter: Security group sg-0aa11 and subnet subnet-0bb22 belong to different networks.\t{\"commit\": \"5a7faa0\", \"machine\": \"default-8xq2z\"}";
        let d = &check_only("KW302", text).diagnoses[0];
        let first = d.remediation[0].command.as_deref().unwrap();
        assert!(
            first.starts_with("kubectl get awsnodetemplate \"$(kubectl get machines.karpenter.sh default-8xq2z -o jsonpath='{.spec.machineTemplateRef.name}')\""),
            "{first}"
        );
        assert!(d.remediation[1]
            .yaml
            .as_deref()
            .unwrap()
            .contains("  subnetSelector:\n    karpenter.sh/discovery"));
        // `machine` alone may be Cluster API's Machine.
        let last = d.remediation.last().unwrap().command.as_deref().unwrap();
        assert!(
            last.starts_with("kubectl describe machines.karpenter.sh default-8xq2z && "),
            "{last}"
        );
    }

    #[test]
    fn before_machines_a_provisioner_launched_nodes_itself() {
        let text = "2022-11-03T08:12:44.551Z\tERROR\tcontroller.provisioning\tCould not launch node, launching instances, with fleet error(s), InvalidParameterValue: User data is limited to 16384 bytes\t{\"commit\": \"51becf8\", \"provisioner\": \"default\"}";
        let d = &check_only("KW302", text).diagnoses[0];
        assert!(
            d.summary.starts_with("Karpenter could not launch a node")
                && !d.summary.contains("Machine"),
            "{}",
            d.summary
        );
        let all: Vec<&str> = d
            .remediation
            .iter()
            .filter_map(|r| r.command.as_deref())
            .collect();
        assert!(
            all.iter()
                .all(|c| !c.contains("nodeclaim") && !c.contains("describe machine")),
            "{all:?}"
        );
        assert!(all[0].starts_with("kubectl get awsnodetemplate"), "{all:?}");
    }

    /// v0.2x logged `Provisioning failed, launching node, creating cloud provider instance,
    /// ...` with the Provisioner in the `provisioner` field: that is the launch failure, and
    /// the steps go through the Provisioner.
    #[test]
    fn v02x_provisioning_failed_names_the_provisioner() {
        let line = "2022-06-14T10:22:31.114Z\tERROR\tcontroller.provisioning\tProvisioning failed, launching node, creating cloud provider instance, with fleet error(s), InvalidParameterValue: User data is limited to 16384 bytes\t{\"commit\": \"3d87474\", \"provisioner\": \"batch\"}";
        let d = &check_only("KW302", line).diagnoses[0];
        assert!(
            d.summary.starts_with(
                "Karpenter could not launch a node (Provisioner batch): UserDataSizeLimitExceeded"
            ),
            "{}",
            d.summary
        );
        assert_eq!(d.node_pool.as_deref(), Some("batch"));
        let first = d.remediation[0].command.as_deref().unwrap();
        assert!(
            first.starts_with("kubectl get awsnodetemplate \"$(kubectl get provisioner batch -o jsonpath='{.spec.providerRef.name}')\""),
            "{first}"
        );
        assert!(
            d.remediation[0]
                .text
                .contains("the AWSNodeTemplate of Provisioner batch"),
            "{}",
            d.remediation[0].text
        );
        // The v0.2x provisioner's other `launching node, ` errors launched nothing.
        for other in [
            "launching node, getting current resource usage, provisioners.karpenter.sh \"batch\" not found",
            "launching node, creating node ip-10-0-1-2.ec2.internal, nodes \"ip-10-0-1-2.ec2.internal\" is forbidden",
        ] {
            let line = format!("2022-06-14T10:22:31.114Z\tERROR\tcontroller.provisioning\tProvisioning failed, {other}\t{{\"commit\": \"3d87474\", \"provisioner\": \"batch\"}}");
            assert!(ids(&check_only("KW302", &line)).is_empty(), "{line}");
        }
    }

    /// v0.28-v0.31 still wrote `Could not launch node, ` before `launching machine, `: that
    /// launch had a Machine, and v0.2x's `Provisioning failed, launching node, ...` had none.
    #[test]
    fn could_not_launch_node_with_a_machine_is_not_pre_machine() {
        let v029 = "2023-06-12T08:41:07.215Z\tERROR\tcontroller.provisioner\tCould not launch node, launching machine, creating cloud provider instance, with fleet error(s), InvalidParameterValue: User data is limited to 16384 bytes\t{\"commit\": \"5a2fe84\", \"provisioner\": \"default\"}";
        let d = &check_only("KW302", v029).diagnoses[0];
        assert!(
            d.summary.starts_with(
                "Karpenter could not launch the instances of the Provisioner's Machines (Provisioner default)"
            ),
            "{}",
            d.summary
        );
        let v027 = "2023-03-08T16:41:27.112Z\tERROR\tcontroller.provisioning\tCould not launch node, launching instances, with fleet error(s), InvalidParameterValue: User data is limited to 16384 bytes\t{\"commit\": \"7131be2\", \"provisioner\": \"default\"}\n2023-03-08T16:41:28.000Z\tINFO\tcontroller.provisioner\tProvisioning failed, launching node, creating cloud provider instance, with fleet error(s), InvalidParameterValue: User data is limited to 16384 bytes\t{\"commit\": \"7131be2\"}";
        let d = &check_only("KW302", v027).diagnoses[0];
        let last = d.remediation.last().unwrap();
        assert!(
            d.summary.starts_with("Karpenter could not launch a node")
                && last
                    .command
                    .as_deref()
                    .is_some_and(|c| !c.contains("machine")),
            "{} / {last:?}",
            d.summary
        );
    }

    /// Before v0.28 the steps describe the Provisioner's AWSNodeTemplate and the node's zone:
    /// there was no Machine.
    #[test]
    fn before_machines_the_steps_name_no_machine() {
        let line = "2023-04-11T09:12:33.104Z\tERROR\tcontroller.provisioner\tCould not launch node, launching instances, getting launch template configs, getting subnets, no subnets matched selector map[karpenter.sh/discovery:staging-eks]\t{\"commit\": \"7131be2\", \"provisioner\": \"default\"}";
        let steps = |line: &str| -> String {
            let d = &check_only("KW302", line).diagnoses[0];
            d.remediation.iter().map(|r| r.text.clone()).collect()
        };
        let text = steps(line);
        assert!(
            text.contains("the AWSNodeTemplate of Provisioner default")
                && text.contains("the node's zone")
                && !text.contains("Machine"),
            "{text}"
        );
        let text = steps(&line.replace(", \"provisioner\": \"default\"", ""));
        assert!(
            text.contains("the Provisioner's AWSNodeTemplate") && !text.contains("Machine"),
            "{text}"
        );
    }

    #[test]
    fn summary_names_error_and_version() {
        let report = check_only(
            "KW302",
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"graviton-9gvx2"},"error":"launching nodeclaim, creating instance, with fleet error(s), too few instances returned: too few instances returned"}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("NodeClaim graviton-9gvx2"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("too few instances returned"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("v0.32-v1.0 wording"), "{}", d.summary);
        assert!(d.summary.contains("LaunchFailed"), "{}", d.summary);
    }

    #[test]
    fn specific_errors_are_explained_elsewhere() {
        for text in [
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"a-1"},"error":"launching nodeclaim, creating instance, with fleet error(s), UnauthorizedOperation: You are not authorized to perform this operation."}"#,
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"a-1"},"error":"launching nodeclaim, creating instance, with fleet error(s), AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided credentials do not have permission"}"#,
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"a-1"},"error":"launching nodeclaim, creating instance, with fleet error(s), InvalidBlockDeviceMapping: Invalid device name /dev/xvda"}"#,
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"a-1"},"error":"launching nodeclaim, creating instance, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-1]"}"#,
            r#"{"level":"ERROR","message":"failed launching nodeclaim","NodeClaim":{"name":"a-1"},"error":"creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient m5.large capacity"}"#,
            r#"{"level":"ERROR","message":"failed launching nodeclaim","NodeClaim":{"name":"a-1"},"error":"NodeClassRef not ready, ValidationSucceeded=False"}"#,
            "    Message:               User is not authorized to perform this operation due to a service control policy",
            "    Reason:                SpotSLRCreationFailed",
            "State transition reason message: Client.InternalError: Client error on launch",
            "Node not registered with cluster",
        ] {
            assert!(ids(&check_only("KW302", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn generic_condition_of_an_explained_nodeclaim_is_explained() {
        let text = "    Message:               Error getting launch template configs: Instance launch failed\n    Reason:                LaunchFailed\n{\"level\":\"ERROR\",\"message\":\"Reconciler error\",\"NodeClaim\":{\"name\":\"arm-1\"},\"error\":\"launching nodeclaim, creating instance, getting launch template configs, getting launch templates, no instance types satisfy requirements of amis [ami-04c9]\"}";
        assert!(ids(&check_only("KW302", text)).is_empty());
    }
}
