//! KW101 spot-service-linked-role-missing.

use crate::document::Evidence;
use crate::facts::{contains_ignore_ascii_case, Facts, Message};
use crate::rules::text::{contains_any, nodeclaim_of};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW101",
    slug: "spot-service-linked-role-missing",
    title: "The account has no EC2 Spot service-linked role, so spot launches fail",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
EC2 refuses to launch spot instances because the account has no `AWSServiceRoleForEC2Spot`
service-linked role and the caller (Karpenter's controller role) may not create it.

Signals: the EC2 error `AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided
credentials do not have permission to create the service-linked role for EC2 Spot Instances`
(in `launching nodeclaim, creating instance, [with fleet error(s), | creating nodeclaim, ]...`
up to v1.4, in `creating instance, insufficient capacity, with fleet error(s), ...` from v1.5),
the NodeClaim `Launched` reason `SpotSLRCreationFailed` (`User does not have sufficient
permission to create the Spot ServiceLinkedRole to launch spot instances`, v1.2 to v1.4), and the
v1.5+ NodeClaim event `Attempted to launch a spot instance but failed due to
"AuthFailure.ServiceLinkedRoleCreationNotPermitted"`.

## Why it happens
The role is created automatically the first time someone launches a spot instance from the
console or with enough IAM rights; accounts that never did, and whose Karpenter role lacks
`iam:CreateServiceLinkedRole`, never get it. Up to v1.4 the launch fails and the NodeClaim is
retried. Since v1.5 Karpenter treats the error as insufficient capacity: it marks spot
unavailable and falls back to on-demand where the NodePool allows it, so spot is silently
skipped (and a spot-only NodePool launches nothing).

When a later line shows it resolved (a spot `launched nodeclaim`, `aws iam
create-service-linked-role` output naming AWSServiceRoleForEC2Spot, or the failed NodeClaim now
`Launched=True` on spot), the failure is told as past (severity warning). A NodeClaim that
launched on another capacity type instead is told as spot being skipped.

## How to fix
Create the role once per account:
`aws iam create-service-linked-role --aws-service-name spot.amazonaws.com`
(an error saying the role name "has been taken" means it already exists). Alternatively allow
`iam:CreateServiceLinkedRole` for `spot.amazonaws.com` in the controller policy.
"#,
};

const SIGNALS: &[&str] = &[
    "servicelinkedrolecreationnotpermitted",
    "spotslrcreationfailed",
    "create the spot servicelinkedrole",
    "attempted to launch a spot instance but failed",
    "service-linked role for ec2 spot",
];

fn is_signal(m: &Message) -> bool {
    contains_any(&m.text, SIGNALS) || m.reason.as_deref() == Some("SpotSLRCreationFailed")
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<&Message> = facts.messages.iter().filter(|m| is_signal(m)).collect();
    // NodeClaim objects whose Launched condition says so, when no message already quotes it.
    let conditions: Vec<(String, Evidence)> = facts
        .nodeclaims
        .iter()
        .flat_map(|nc| {
            nc.conditions
                .iter()
                .filter(|c| c.reason.as_deref() == Some("SpotSLRCreationFailed"))
                .map(move |c| (nc.meta.name.clone(), c.evidence.clone().unwrap_or_default()))
        })
        .filter(|(_, e)| {
            !hits
                .iter()
                .any(|m| m.evidence.source == e.source && m.evidence.line == e.line)
        })
        .collect();
    if hits.is_empty() && conditions.is_empty() {
        return Vec::new();
    }
    let mut nodeclaims: Vec<String> = Vec::new();
    for name in hits
        .iter()
        .filter_map(|m| nodeclaim_of(facts, m))
        .chain(conditions.iter().map(|(n, _)| n.clone()))
    {
        if !nodeclaims.contains(&name) {
            nodeclaims.push(name);
        }
    }
    let treated_as_ice = hits.iter().any(|m| {
        contains_any(
            &m.text,
            &[
                "insufficient capacity",
                "aws-error-code=unfulfillablecapacity",
                "attempted to launch a spot instance",
            ],
        )
    }) || crate::rules::version::at_least(facts, 1, 5) == Some(true);

    // A NodeClaim of the failure whose Launched condition is True now: it got an instance after
    // all, on spot (the role exists now) or on another capacity type (spot was skipped).
    let launched_now = facts
        .nodeclaims
        .iter()
        .filter(|c| nodeclaims.contains(&c.meta.name))
        .find_map(|c| Some((c, c.condition("Launched").filter(|l| l.status == "True")?)));
    let mut summary = String::from(
        "EC2 refuses spot launches: the account has no EC2 Spot service-linked role (AWSServiceRoleForEC2Spot) and Karpenter's role may not create it (AuthFailure.ServiceLinkedRoleCreationNotPermitted)",
    );
    // Before v0.32 the log names a Machine (`"machine": "<name>"`).
    let legacy = crate::rules::version::before_v0_32(facts);
    let claim = if legacy { "Machine" } else { "NodeClaim" };
    match nodeclaims.as_slice() {
        [] => summary.push('.'),
        [one] => summary.push_str(&format!(", for {claim} {one}.")),
        many => summary.push_str(&format!(", for {claim}s {}.", many.join(", "))),
    }
    let spot_only = spot_only_nodepools(facts, &nodeclaims);
    if treated_as_ice {
        summary.push_str(" Since v1.5 Karpenter treats this as insufficient capacity: it marks spot unavailable and falls back to on-demand, so spot is being skipped silently");
        // A NodeClaim's requirements are the NodePool's narrowed by the pods: one that allows
        // only spot has nothing to fall back to, whatever the NodePool allows.
        let spot_only_claims: Vec<&str> = facts
            .nodeclaims
            .iter()
            .filter(|c| nodeclaims.contains(&c.meta.name))
            .filter(|c| {
                c.requirements.iter().any(|r| {
                    r.key == "karpenter.sh/capacity-type"
                        && r.operator == "In"
                        && !r.values.is_empty()
                        && r.values.iter().all(|v| v == "spot")
                })
            })
            .map(|c| c.meta.name.as_str())
            .collect();
        if spot_only.is_empty() && !spot_only_claims.is_empty() {
            summary.push_str(&format!(
                "; but NodeClaim{} {} allow{} only spot (karpenter.sh/capacity-type In [spot]), so {} nothing to fall back to and launch{} nothing.",
                if spot_only_claims.len() > 1 { "s" } else { "" },
                spot_only_claims.join(", "),
                if spot_only_claims.len() > 1 { "" } else { "s" },
                if spot_only_claims.len() > 1 { "they have" } else { "it has" },
                if spot_only_claims.len() > 1 { "" } else { "es" },
            ));
        } else if spot_only.is_empty() {
            summary.push('.');
        } else {
            summary.push_str(&format!(
                "; NodePool {} allows only spot, so it launches nothing.",
                spot_only.join(", ")
            ));
        }
    } else {
        // Before v0.32 there were no NodeClaims: the provisioner (machine) retried.
        let pre_nodeclaim = legacy
            || nodeclaims.is_empty()
                && hits.iter().any(|m| {
                    contains_any(
                        &m.text,
                        &["launching node", "launching machine", "launching instances"],
                    )
                });
        // Quote the Launched condition only as the input shows it: a log-only paste has none.
        let launched = facts
            .nodeclaims
            .iter()
            .filter(|c| !pre_nodeclaim && nodeclaims.contains(&c.meta.name))
            .find_map(|c| Some((&c.meta.name, c.condition("Launched")?)))
            .filter(|(_, c)| c.status != "True")
            .map(
                |(name, c)| match c.reason.as_deref().filter(|r| !r.is_empty()) {
                    Some(r) => format!(" (NodeClaim {name} Launched={}, reason {r})", c.status),
                    None => format!(" (NodeClaim {name} Launched={})", c.status),
                },
            )
            .unwrap_or_default();
        match launched_now.filter(|(c, _)| c.capacity_type.as_deref() != Some("spot")) {
            Some((c, _)) => summary.push_str(&format!(
                " NodeClaim {} launched on {} instead (Launched=True): spot is being skipped.",
                c.meta.name,
                c.capacity_type.as_deref().unwrap_or("another capacity type")
            )),
            None => summary.push_str(&format!(
                " The launch fails and Karpenter retries it{launched}: no node comes up while spot is requested."
            )),
        }
    }
    let mut steps = vec![
        Remediation::command(
            "Create the service-linked role once for the account (needs iam:CreateServiceLinkedRole; an error saying the role name has been taken means it already exists):",
            "aws iam create-service-linked-role --aws-service-name spot.amazonaws.com",
        ),
        Remediation::command(
            "Check it exists:",
            "aws iam get-role --role-name AWSServiceRoleForEC2Spot --query Role.Arn --output text",
        ),
    ];
    if treated_as_ice {
        steps.push(Remediation::text(
            "Karpenter keeps spot marked unavailable only for a few minutes; once the role exists, the next launches use spot again without a restart.",
        ));
    }
    let mut related: Vec<&'static str> = Vec::new();
    if !spot_only.is_empty() {
        related.push("KW216");
    }
    let condition_evidence = conditions.into_iter().map(|(_, e)| e);
    let resolved = resolved_after(facts, &hits);
    let launched_spot = launched_now
        .filter(|(c, _)| resolved.is_none() && c.capacity_type.as_deref() == Some("spot"));
    if resolved.is_some() || launched_spot.is_some() {
        // Told in the past tense: the role exists now, or a spot launch went through.
        for (now, then) in [
            ("EC2 refuses spot launches", "EC2 refused spot launches"),
            ("the account has no", "the account had no"),
            ("may not create it", "might not create it"),
            (
                "The launch fails and Karpenter retries it",
                "The launch failed and Karpenter retried it",
            ),
            ("no node comes up", "no node came up"),
            ("spot is requested", "spot was requested"),
            ("treats this as", "treated this as"),
            ("is being skipped", "was skipped"),
        ] {
            summary = summary.replace(now, then);
        }
    }
    if let Some((c, _)) = launched_spot {
        summary.push_str(&format!(
            " NodeClaim {} has since launched on spot (Launched=True): this failure is past.",
            c.meta.name
        ));
    }
    if let Some(m) = resolved {
        let quote = if m.origin == crate::facts::MessageOrigin::KarpenterLog {
            m.text
                .split(':')
                .next()
                .unwrap_or(&m.text)
                .trim()
                .to_string()
        } else {
            m.evidence.text.trim().chars().take(100).collect()
        };
        summary.push_str(&format!(
            " The input then shows it resolved (`{quote}`, line {}): this failure is past.",
            m.evidence.line
        ));
    }
    // The fix already tried and refused: the identity that ran it lacks the permission too.
    let refused_creation = facts.messages.iter().find(|m| {
        contains_any(&m.text, &["CreateServiceLinkedRole"])
            && contains_any(&m.text, &["AccessDenied", "not authorized"])
    });
    if let (Some(m), None) = (refused_creation, resolved) {
        summary.push_str(&format!(
            " Creating the role was tried and refused too (line {}, AccessDenied on iam:CreateServiceLinkedRole): run the command below as an identity allowed iam:CreateServiceLinkedRole for spot.amazonaws.com (an account administrator).",
            m.evidence.line
        ));
    }
    vec![Diagnosis::new(&META, summary)
        .with_messages(hits.iter().copied())
        .with_messages(resolved)
        .with_messages(refused_creation.filter(|_| resolved.is_none()))
        .with_evidence(condition_evidence)
        .with_evidence(launched_spot.and_then(|(_, l)| l.evidence.clone()))
        .with_remediation(steps)
        .with_related(&related)
        .with_severity(if resolved.is_some() || launched_spot.is_some() {
            Severity::Warning
        } else {
            Severity::Error
        })]
}

/// A line later than every failure that shows spot launches work now: a spot `launched
/// nodeclaim` (or machine), or `aws iam create-service-linked-role` output naming
/// AWSServiceRoleForEC2Spot (created, or `has been taken`: it exists).
fn resolved_after<'a>(facts: &'a Facts, hits: &[&Message]) -> Option<&'a Message> {
    let after_every_failure = |m: &Message| crate::rules::time::later_than_all(m, hits);
    facts.messages.iter().find(|m| {
        let spot_launch = contains_any(&m.text, &["launched nodeclaim", "launched machine"])
            && (crate::rules::kw2xx::scheduling::record_of(facts, m)
                .and_then(|r| {
                    r.fields
                        .get("capacity-type")
                        .and_then(|v| v.as_str())
                        .map(str::to_string)
                })
                .is_some_and(|c| c == "spot")
                || contains_any(
                    &m.text,
                    &["\"capacity-type\":\"spot\"", "\"capacity-type\": \"spot\""],
                ));
        // A refused creation names the role too (`An error occurred (AccessDenied) when
        // calling the CreateServiceLinkedRole operation: ... is not authorized to perform:
        // iam:CreateServiceLinkedRole on resource: arn:...:role/aws-service-role/
        // spot.amazonaws.com/AWSServiceRoleForEC2Spot`): that is the failure going on, not its
        // end. `has been taken` is an error too, but says the role exists.
        let refused = contains_any(
            &m.text,
            &["AccessDenied", "not authorized", "UnauthorizedOperation"],
        );
        let role = contains_any(&m.text, &["AWSServiceRoleForEC2Spot"])
            && contains_any(
                &m.text,
                &["\"RoleName\"", "has been taken", "ROLE\t", "Arn"],
            )
            && !refused;
        (spot_launch || role) && after_every_failure(m)
    })
}

/// NodePools of these NodeClaims (or all NodePools when none is known) whose capacity-type
/// requirement allows only spot.
fn spot_only_nodepools(facts: &Facts, nodeclaims: &[String]) -> Vec<String> {
    let pools: Vec<String> = facts
        .nodeclaims
        .iter()
        .filter(|c| nodeclaims.contains(&c.meta.name))
        .filter_map(|c| c.nodepool.clone())
        .collect();
    facts
        .nodepools
        .iter()
        .filter(|p| pools.is_empty() || pools.contains(&p.meta.name))
        .filter(|p| {
            p.allowed_values("karpenter.sh/capacity-type")
                .is_some_and(|v| !v.is_empty() && v.iter().all(|t| t == "spot"))
        })
        .map(|p| p.meta.name.clone())
        .collect()
}

/// Whether a text is the spot SLR error (for rules that must leave it to KW101).
pub fn is_spot_slr_text(text: &str) -> bool {
    contains_ignore_ascii_case(text, "ServiceLinkedRoleCreationNotPermitted")
        || contains_ignore_ascii_case(text, "SpotSLRCreationFailed")
        || contains_ignore_ascii_case(text, "create the Spot ServiceLinkedRole")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Condition, Meta, NodeClaim};
    use crate::testing::{check_only, ids};

    #[test]
    fn every_variant() {
        for text in [
            r#"{"level":"ERROR","time":"2024-09-05T15:34:02.997Z","logger":"controller","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-wdftd"},"error":"launching nodeclaim, creating instance, with fleet error(s), AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances."}"#,
            "launching nodeclaim, creating instance, creating nodeclaim, AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances.",
            "    Message:               User does not have sufficient permission to create the Spot ServiceLinkedRole to launch spot instances",
            "    Reason:                SpotSLRCreationFailed",
            r#"default     12s         Warning                               nodeclaim/default-7xk2p   Attempted to launch a spot instance but failed due to "AuthFailure.ServiceLinkedRoleCreationNotPermitted""#,
        ] {
            assert_eq!(ids(&check_only("KW101", text)), ["KW101"], "{text}");
        }
    }

    #[test]
    fn v1_5_says_spot_is_skipped() {
        let report = check_only(
            "KW101",
            r#"{"level":"ERROR","time":"2025-06-10T11:02:41.118Z","logger":"controller","message":"failed launching nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-7xk2p"},"error":"creating instance, insufficient capacity, with fleet error(s), AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances. (aws-error-code=UnfulfillableCapacity, aws-operation-name=CreateFleet, aws-request-id=0f3c, aws-service-name=EC2, aws-status-code=200)"}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("NodeClaim default-7xk2p"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("spot is being skipped"), "{}", d.summary);
        assert_eq!(
            d.remediation[0].command.as_deref(),
            Some("aws iam create-service-linked-role --aws-service-name spot.amazonaws.com")
        );
    }

    #[test]
    fn pre_v1_5_says_the_launch_fails() {
        let report = check_only(
            "KW101",
            "launching nodeclaim, creating instance, AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances.",
        );
        assert!(report.diagnoses[0].summary.contains("The launch fails"));
    }

    #[test]
    fn nodeclaim_condition_object() {
        let mut facts = Facts::default();
        facts.nodeclaims.push(NodeClaim {
            meta: Meta {
                name: "default-9wq4t".into(),
                ..Default::default()
            },
            conditions: vec![Condition {
                condition_type: "Launched".into(),
                status: "Unknown".into(),
                reason: Some("SpotSLRCreationFailed".into()),
                message: Some("User does not have sufficient permission to create the Spot ServiceLinkedRole to launch spot instances".into()),
                evidence: Some(Evidence::new("nc.yaml", 12, "reason: SpotSLRCreationFailed")),
            }],
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains("NodeClaim default-9wq4t"),
            "{}",
            d.summary
        );
        assert_eq!(d.evidence.len(), 1);
    }

    #[test]
    fn near_misses() {
        for text in [
            "AuthFailure: AWS was not able to validate the provided access credentials",
            "UnauthorizedOperation: You are not authorized to perform this operation.",
            "creating instance, insufficient capacity, with fleet error(s), InsufficientInstanceCapacity: We currently do not have sufficient m5.large capacity",
        ] {
            assert!(ids(&check_only("KW101", text)).is_empty(), "{text}");
        }
    }

    /// The operator's own `aws iam create-service-linked-role` refused (AccessDenied) names
    /// the role and an ARN, yet resolves nothing; `has been taken` does (the role exists).
    #[test]
    fn a_refused_creation_is_not_the_end() {
        let failure = r#"{"level":"ERROR","time":"2025-07-14T03:33:02.771Z","logger":"controller","message":"failed launching nodeclaim","NodeClaim":{"name":"spot-7hq2k"},"error":"creating instance, with fleet error(s), AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances."}"#;
        let denied = "$ aws iam create-service-linked-role --aws-service-name spot.amazonaws.com\nAn error occurred (AccessDenied) when calling the CreateServiceLinkedRole operation: User: arn:aws:sts::310987654321:assumed-role/AWSReservedSSO_Developer_1a2b/ops is not authorized to perform: iam:CreateServiceLinkedRole on resource: arn:aws:iam::310987654321:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot because no identity-based policy allows the iam:CreateServiceLinkedRole action";
        let d = &check_only("KW101", &format!("{failure}\n{denied}")).diagnoses[0];
        assert_eq!(d.severity, Severity::Error);
        assert!(!d.summary.contains("this failure is past"), "{}", d.summary);
        assert!(
            d.summary.contains("tried and refused too (line 3"),
            "{}",
            d.summary
        );
        let taken = "$ aws iam create-service-linked-role --aws-service-name spot.amazonaws.com\nAn error occurred (InvalidInput) when calling the CreateServiceLinkedRole operation: Service role name AWSServiceRoleForEC2Spot has been taken in this account, please try a different suffix.";
        let d = &check_only("KW101", &format!("{failure}\n{taken}")).diagnoses[0];
        assert_eq!(d.severity, Severity::Warning);
    }

    #[test]
    fn a_later_spot_launch_makes_it_past() {
        let failure = r#"{"level":"ERROR","time":"2025-03-11T09:02:41.118Z","logger":"controller","message":"Reconciler error","NodeClaim":{"name":"spot-4kq9d"},"error":"launching nodeclaim, creating instance, with fleet error(s), AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances."}"#;
        let launched = r#"{"level":"INFO","time":"2025-03-11T09:24:12.901Z","logger":"controller","message":"launched nodeclaim","NodeClaim":{"name":"spot-m2x7w"},"capacity-type":"spot"}"#;
        let on_demand = launched.replace("\"spot\"}", "\"on-demand\"}");
        let now = check_only("KW101", failure);
        assert_eq!(now.diagnoses[0].severity, Severity::Error);
        let past = check_only("KW101", &format!("{failure}\n{launched}"));
        assert_eq!(past.diagnoses[0].severity, Severity::Warning);
        assert!(past.diagnoses[0].summary.contains("this failure is past"));
        let still = check_only("KW101", &format!("{failure}\n{on_demand}"));
        assert_eq!(still.diagnoses[0].severity, Severity::Error);
    }
}
