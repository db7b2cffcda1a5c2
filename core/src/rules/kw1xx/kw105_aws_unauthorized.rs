//! KW105 aws-unauthorized.

use crate::document::Evidence;
use crate::facts::{Facts, Message};
use crate::rules::kw1xx::aws::{
    controller_role_from_env, decode_command, denied_action, deny_source, encoded_message,
    principal, resource, role_name, DenySource, EncodedMessage,
};
use crate::rules::kw1xx::credentials::{credential_failure, from_other_component};
use crate::rules::kw1xx::kw101_spot_service_linked_role_missing::is_spot_slr_text;
use crate::rules::kw2xx::scheduling::record_of;
use crate::rules::text::{aws_account, contains_any, nodeclaim_of};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW105",
    slug: "aws-unauthorized",
    title: "AWS denies a call the Karpenter controller makes",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
An AWS API call of the controller is denied, so the EC2NodeClass fails validation, a NodeClaim
cannot launch, or pricing and discovery fail.

Signals: `UnauthorizedOperation`, `AccessDenied` / `AccessDeniedException`, `is not authorized
to perform: <action>`, `Encoded authorization failure message: <blob>`; EC2NodeClass
`ValidationSucceeded=False` reasons `CreateFleetAuthCheckFailed`, `RunInstancesAuthCheckFailed`,
`CreateLaunchTemplateAuthCheckFailed` (`Controller isn't authorized to call ec2:<Action>`,
enriched from v1.13 with `: User is not authorized to perform this operation due to a service
control policy` and the like); the log `unauthorized to call ec2:<Action>`; NodeClaim `Launched`
reasons `Unauthorized` (`User is not authorized to perform this operation ...`) and
`AMIAuthorizationFailure` (`User is not authorized for AMI used in instance launch`); and the
EC2NodeClass `InstanceProfileReady=False` reason `NodeRoleAuthFailure` (`Failed to detect the
NodeRole`: creating the instance profile for `spec.role`, or passing that role, was denied).

## Why it happens
The controller's IAM policy lacks the action (`because no identity-based policy allows`), or
something above the policy denies it: a service control policy of AWS Organizations (`with an
explicit deny in a service control policy`), the role's permissions boundary, or an explicit deny
in another policy. For AMIs: the image is private to another account and not shared.

## How to fix
Decode the blob to see the exact action, resource and context:
`aws sts decode-authorization-message --encoded-message <blob> --query DecodedMessage --output
text | jq .`. Then add the action to the controller policy, or have the SCP or boundary changed
(an SCP cannot be overridden from the account). Karpenter re-validates an EC2NodeClass every few
minutes; from v1.7 changing any annotation re-runs the check at once.
"#,
};

const SIGNALS: &[&str] = &[
    "unauthorizedoperation",
    "accessdenied",
    "is not authorized to perform",
    "encoded authorization failure message",
    "authcheckfailed",
    "authorized to call ec2:",
    "unauthorized to call",
    "user is not authorized",
    "amiauthorizationfailure",
    "not authorized for images",
    "authfailure",
    "noderoleauthfailure",
];

fn is_hit(facts: &Facts, m: &Message) -> bool {
    let t = &m.text;
    if is_spot_slr_text(t) || credential_failure(t).is_some() || from_other_component(facts, m) {
        // KW101 and KW103 explain these.
        return false;
    }
    let reason_says = matches!(
        m.reason.as_deref(),
        Some(
            "CreateFleetAuthCheckFailed"
                | "RunInstancesAuthCheckFailed"
                | "CreateLaunchTemplateAuthCheckFailed"
                | "AMIAuthorizationFailure"
                | "NodeRoleAuthFailure"
        )
    ) || (m.reason.as_deref() == Some("Unauthorized")
        && contains_any(t, &["launched=", "user is not authorized"]));
    reason_says
        || contains_any(
            t,
            &[
                "UnauthorizedOperation",
                "AccessDenied",
                "is not authorized to perform:",
                "Encoded authorization failure message",
                "AuthCheckFailed",
                "authorized to call ec2:",
                "isn’t authorized to call ec2:",
                "unauthorized to call ec2:",
                "User is not authorized to perform this operation",
                "User is not authorized for AMI",
                "AMIAuthorizationFailure",
                "Not authorized for images",
                "AuthFailure:",
                "NodeRoleAuthFailure",
            ],
        )
}

/// NodeClaims whose `Launched` condition carries an authorization reason, with the
/// condition's evidence.
fn launch_conditions(facts: &Facts) -> Vec<(String, Option<Evidence>, bool)> {
    facts
        .nodeclaims
        .iter()
        .flat_map(|nc| {
            nc.conditions
                .iter()
                .filter(|c| crate::facts::condition_type_is(&c.condition_type, "Launched"))
                .filter_map(move |c| {
                    let ami = c.reason.as_deref() == Some("AMIAuthorizationFailure");
                    (ami || c.reason.as_deref() == Some("Unauthorized"))
                        .then(|| (nc.meta.name.clone(), c.evidence.clone(), ami))
                })
        })
        .collect()
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<&Message> = facts.messages.iter().filter(|m| is_hit(facts, m)).collect();
    let conditions = launch_conditions(facts);
    if hits.is_empty() && conditions.is_empty() {
        return Vec::new();
    }
    let mut actions: Vec<String> = Vec::new();
    let mut sources: Vec<DenySource> = Vec::new();
    let mut roles: Vec<String> = Vec::new();
    let mut resources: Vec<String> = Vec::new();
    let mut nodeclaims: Vec<String> = Vec::new();
    let mut nodeclasses: Vec<String> = Vec::new();
    let mut blob: Option<String> = None;
    let mut truncated_blob = false;
    let mut short_blob: Option<String> = None;
    let mut ami = false;
    let mut validation = false;
    for m in &hits {
        let t = &m.text;
        push_new(&mut actions, denied_action(t));
        if let Some(s) = deny_source(t) {
            if !sources.contains(&s) {
                sources.push(s);
            }
        }
        push_new(&mut roles, principal(t).and_then(|p| role_name(&p)));
        push_new(&mut resources, resource(t));
        push_new(&mut nodeclaims, nodeclaim_of(facts, m));
        push_new(&mut nodeclasses, nodeclass_of(facts, m));
        match encoded_message(t) {
            Some(EncodedMessage::Whole(b)) if blob.is_none() => blob = Some(b),
            Some(EncodedMessage::CutOff) => truncated_blob = true,
            Some(EncodedMessage::Short(b)) if short_blob.is_none() => short_blob = Some(b),
            _ => {}
        }
        ami |= contains_any(
            t,
            &[
                "AMIAuthorizationFailure",
                "User is not authorized for AMI",
                "Not authorized for images",
            ],
        ) || m.reason.as_deref() == Some("AMIAuthorizationFailure");
        validation |= contains_any(
            t,
            &[
                "AuthCheckFailed",
                "authorized to call ec2:",
                "isn’t authorized to call ec2:",
            ],
        );
    }
    let mut launch = hits.iter().any(|m| {
        contains_any(
            &m.text,
            &[
                "User is not authorized to perform this operation",
                "launching nodeclaim",
                "launching machine",
                "launching node",
                "creating instance",
                "creating cloud provider instance",
                "creating fleet",
                "with fleet error(s)",
            ],
        )
    });
    for (name, _, is_ami) in &conditions {
        push_new(&mut nodeclaims, Some(name.clone()));
        ami |= *is_ami;
        launch = true;
    }
    // `InstanceProfileReady=False NodeRoleAuthFailure`: creating the EC2NodeClass's instance
    // profile for its `spec.role` was denied (v1.x, A `instanceprofile` reconciler).
    let node_role_auth = actions.is_empty()
        && hits
            .iter()
            .any(|m| contains_any(&m.text, &["NodeRoleAuthFailure"]));
    // A launch denied without the action named (the NodeClaim's `Launched` message): the
    // launch calls are CreateFleet and the RunInstances it makes on Karpenter's behalf.
    let launch_guess = actions.is_empty() && launch && !ami && !node_role_auth;
    // A principal whose session name is an instance ID is an EC2 instance role: the SDK fell
    // back to the node's instance profile (IMDS) because the controller's own IRSA / Pod
    // Identity credentials are not wired.
    let instance_role = hits.iter().find_map(|m| {
        let p = principal(&m.text)?;
        let session = p.rsplit('/').next()?;
        let is_instance = session
            .strip_prefix("i-")
            .is_some_and(|id| id.len() >= 8 && id.chars().all(|c| c.is_ascii_hexdigit()));
        is_instance.then(|| (role_name(&p).unwrap_or_default(), session.to_string()))
    });
    let role = roles
        .first()
        .cloned()
        .or_else(|| controller_role_from_env(facts));
    let account = aws_account(facts).unwrap_or_else(|| "<account-id>".to_string());

    // Summary: what, to whom, by what, with what effect.
    let what = match actions.as_slice() {
        [] if launch_guess => "the instance launch (ec2:CreateFleet, ec2:RunInstances)".to_string(),
        [] => "an AWS call".to_string(),
        [one] => one.clone(),
        many => many.join(", "),
    };
    let who = match (&instance_role, &role) {
        (Some((r, _)), _) => format!("the node instance role {r}"),
        (None, Some(r)) => format!("role {r}"),
        (None, None) => "the Karpenter controller".to_string(),
    };
    let node_role = nodeclasses
        .iter()
        .find_map(|n| facts.nodeclass(n).and_then(|c| c.role.clone()));
    let mut summary = if node_role_auth {
        let class = nodeclasses
            .first()
            .map(|n| format!("EC2NodeClass {n}"))
            .unwrap_or_else(|| "The EC2NodeClass".to_string());
        let node_role_text = node_role
            .as_deref()
            .map(|r| format!(" for node role {r}"))
            .unwrap_or_default();
        format!(
            "{class} cannot get its instance profile{node_role_text} (InstanceProfileReady=False, NodeRoleAuthFailure: Failed to detect the NodeRole): AWS denies {who} the instance-profile calls or iam:PassRole on the node role, so the EC2NodeClass is not Ready and its NodePools launch nothing"
        )
    } else if ami {
        format!("AWS refuses {who} the AMI of the launch (AMIAuthorizationFailure: not authorized for the image)")
    } else {
        format!("AWS denies {what} to {who}")
    };
    if let Some(r) = resources.first() {
        summary.push_str(&format!(" on {r}"));
    }
    match sources.as_slice() {
        [] => {}
        list => summary.push_str(&format!(
            ": {}",
            list.iter()
                .map(|s| s.describe())
                .collect::<Vec<_>>()
                .join("; ")
        )),
    }
    summary.push('.');
    if validation {
        let which = if nodeclasses.is_empty() {
            "The EC2NodeClass".to_string()
        } else {
            format!("EC2NodeClass {}", nodeclasses.join(", "))
        };
        summary.push_str(&format!(
            " {which} fails its authorization dry-run (ValidationSucceeded=False), so it is not Ready and its NodePools launch nothing."
        ));
    }
    if !validation && !node_role_auth && nodeclaims.is_empty() && !nodeclasses.is_empty() {
        // A denial in the EC2NodeClass's own reconciler (not its auth dry-run): the status
        // field the call resolves stays empty, so the class never turns Ready.
        let resolving: Vec<&str> = actions.iter().filter_map(|a| nodeclass_dependency(a)).fold(
            Vec::new(),
            |mut acc, d| {
                if !acc.contains(&d) {
                    acc.push(d);
                }
                acc
            },
        );
        if !resolving.is_empty() {
            summary.push_str(&format!(
                " EC2NodeClass {} cannot resolve its {} without it, so it does not turn Ready and its NodePools launch nothing.",
                nodeclasses.join(", "),
                resolving.join(" and ")
            ));
        }
    }
    if let Some((_, session)) = &instance_role {
        summary.push_str(&format!(
            " The caller is an EC2 instance role (session {session}): the controller is running on the node's instance profile credentials from IMDS instead of its own IAM role, so its IRSA annotation or EKS Pod Identity association is missing or not taking effect."
        ));
    }
    if !nodeclaims.is_empty() {
        // Before v0.32 the log names a Machine.
        let claim = crate::rules::kw3xx::common::claim_kind(facts, &nodeclaims[0]);
        let claim = if claim == "NodeClaim" && crate::rules::version::before_v0_32(facts) {
            "Machine"
        } else {
            claim
        };
        summary.push_str(&format!(
            " {claim}{} {} cannot launch.",
            if nodeclaims.len() == 1 { "" } else { "s" },
            nodeclaims.join(", ")
        ));
    }

    let role_ref = role
        .clone()
        .unwrap_or_else(|| "<karpenter-controller-role>".to_string());
    if launch_guess {
        actions = vec![
            "ec2:CreateFleet".to_string(),
            "ec2:RunInstances".to_string(),
        ];
    }
    let mut steps: Vec<Remediation> = Vec::new();
    if instance_role.is_some() {
        let ns = crate::rules::text::karpenter_namespace_or_placeholder(facts);
        steps.push(Remediation::command(
            "Give the controller its own credentials rather than widening the node role: check that Karpenter's service account carries the IRSA annotation (or has an EKS Pod Identity association) and that the pods were restarted after it was set; the injected AWS_ROLE_ARN / AWS_CONTAINER_CREDENTIALS_FULL_URI must show in the pod's environment:",
            format!(
                "kubectl get serviceaccount karpenter -n {ns} -o jsonpath='{{.metadata.annotations.eks\\.amazonaws\\.com/role-arn}}'\nkubectl get pods -n {ns} -l app.kubernetes.io/name=karpenter -o jsonpath='{{range .items[*].spec.containers[*].env[*]}}{{.name}}{{\"\\n\"}}{{end}}' | grep -E 'AWS_ROLE_ARN|AWS_CONTAINER_CREDENTIALS_FULL_URI'\nkubectl rollout restart deployment/karpenter -n {ns}"
            ),
        ));
    }
    if blob.is_some() || truncated_blob || short_blob.is_some() {
        // Only a `...` / `…` in the text says it was cut off; a short blob without one may be
        // a placeholder or shortened by hand.
        let text = match (&blob, &short_blob) {
            (Some(_), _) => "Decode the authorization failure message: it names the action, the resource and the policy context that denied it:".to_string(),
            (None, Some(b)) if !truncated_blob && b.is_empty() => "Decode the authorization failure message (the blob after `Encoded authorization failure message:` in the original error): it names the action, the resource and the policy context that denied it:".to_string(),
            (None, Some(b)) if !truncated_blob => format!("Decode the authorization failure message: it names the action, the resource and the policy context that denied it. The `{b}` in the evidence is shorter than an encoded message ever is (they run to hundreds of characters): use the whole blob from the original error:"),
            _ => "The encoded authorization message in the evidence is cut off (`...`): copy the whole blob from the original error and decode it:".to_string(),
        };
        steps.push(Remediation::command(text, decode_command(blob.as_deref())));
    }
    let scp = sources.iter().any(|s| s.is_organizations_policy());
    let boundary = sources.iter().any(|s| s.is_permissions_boundary());
    if scp {
        let (policy, filter) = if sources.contains(&DenySource::ResourceControlPolicy) {
            ("resource control policy", "RESOURCE_CONTROL_POLICY")
        } else {
            ("service control policy", "SERVICE_CONTROL_POLICY")
        };
        steps.push(Remediation::command(
            format!(
                "A {policy} blocks {what}: no change to the role can override it. Ask the AWS Organizations administrators to allow the action (or exempt the Karpenter role) for account {account}; from the management account, list the policies that apply:"
            ),
            format!("aws organizations list-policies-for-target --target-id {account} --filter {filter}"),
        ));
    }
    if boundary {
        steps.push(Remediation::command(
            format!("The permissions boundary of {role_ref} blocks {what}: allow it in the boundary policy (the role's own policy cannot exceed the boundary):"),
            format!("aws iam get-role --role-name {role_ref} --query Role.PermissionsBoundary"),
        ));
    }
    if sources.contains(&DenySource::IdentityPolicyExplicitDeny) {
        steps.push(Remediation::command(
            format!("An explicit Deny in a policy attached to {role_ref} wins over any Allow: find and narrow it:"),
            format!("aws iam list-attached-role-policies --role-name {role_ref}\naws iam list-role-policies --role-name {role_ref}"),
        ));
    }
    if ami {
        steps.push(Remediation::text(format!(
            "The AMI belongs to another account and is not shared with {account}: have its owner share it (`aws ec2 modify-image-attribute --image-id <ami-id> --launch-permission \"Add=[{{UserId={account}}}]\"`, and the KMS key of encrypted snapshots), or select AMIs your account owns in the EC2NodeClass `amiSelectorTerms` (`owner: self`)."
        )));
    }
    if node_role_auth {
        let node_role_arn = format!(
            "arn:aws:iam::{account}:role/{}",
            node_role.as_deref().unwrap_or("<node-role>")
        );
        actions = [
            "iam:GetInstanceProfile",
            "iam:CreateInstanceProfile",
            "iam:TagInstanceProfile",
            "iam:AddRoleToInstanceProfile",
            "iam:PassRole",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        steps.push(Remediation::yaml(
            format!(
                "Allow the instance-profile calls, and iam:PassRole on the node role, in the controller's policy (`aws iam put-role-policy --role-name {role_ref} --policy-name KarpenterInstanceProfile --policy-document file://policy.json`; the Karpenter CloudFormation template scopes them by the cluster's tags), policy.json:"
            ),
            format!(
                "{{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [\n    {{\n      \"Effect\": \"Allow\",\n      \"Action\": [\"iam:GetInstanceProfile\", \"iam:CreateInstanceProfile\", \"iam:TagInstanceProfile\", \"iam:AddRoleToInstanceProfile\"],\n      \"Resource\": \"arn:aws:iam::{account}:instance-profile/*\"\n    }},\n    {{\n      \"Effect\": \"Allow\",\n      \"Action\": \"iam:PassRole\",\n      \"Resource\": \"{node_role_arn}\",\n      \"Condition\": {{\"StringEquals\": {{\"iam:PassedToService\": \"ec2.amazonaws.com\"}}}}\n    }}\n  ]\n}}\n"
            ),
        ));
    }
    let action_list = if actions.is_empty() {
        "<service:Action>".to_string()
    } else {
        actions.join(" ")
    };
    if !scp && !boundary && !ami && instance_role.is_none() && !node_role_auth {
        let statement_actions: Vec<String> = if actions.is_empty() {
            vec!["\"<service:Action>\"".to_string()]
        } else {
            actions.iter().map(|a| format!("\"{a}\"")).collect()
        };
        // iam:PassRole is granted per role: scope it to the role the denial names.
        let statement_resource = match (actions.as_slice(), resources.as_slice()) {
            ([action], [resource]) if action == "iam:PassRole" => resource.clone(),
            _ => "*".to_string(),
        };
        steps.push(Remediation::yaml(
            format!(
                "Allow {what} in the controller's policy (`aws iam put-role-policy --role-name {role_ref} --policy-name KarpenterControllerExtra --policy-document file://policy.json`; or add it to the policy your Karpenter CloudFormation/Terraform module manages), policy.json:"
            ),
            format!(
                "{{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{{\n    \"Effect\": \"Allow\",\n    \"Action\": [{}],\n    \"Resource\": \"{statement_resource}\"\n  }}]\n}}\n",
                statement_actions.join(", ")
            ),
        ));
    }
    if instance_role.is_none() {
        steps.push(Remediation::command(
        "Check the result with the IAM policy simulator (it evaluates identity policies and the boundary; SCP denies only show in the decoded message):",
        format!(
            "aws iam simulate-principal-policy --policy-source-arn arn:aws:iam::{account}:role/{role_ref} --action-names {action_list} --query 'EvaluationResults[].[EvalActionName,EvalDecision]' --output table"
        ),
    ));
    }
    if validation {
        let name = nodeclasses
            .first()
            .cloned()
            .unwrap_or_else(|| "<ec2nodeclass>".to_string());
        let text = match crate::rules::version::at_least(facts, 1, 7) {
            Some(true) => "Karpenter caches the validation result; once the policy allows the action, change any annotation to re-run the check now (v1.7+: the cache key includes the annotations):".to_string(),
            Some(false) => "Karpenter caches the validation result and re-checks it periodically; before v1.7 an annotation change does not re-run it, restart the controller instead. On v1.7+ changing any annotation re-runs the check:".to_string(),
            None => "Karpenter caches the validation result and re-checks it periodically; on v1.7+ changing any annotation re-runs the check at once (earlier versions: restart the controller). An annotation alone fixes nothing until the policy allows the action:".to_string(),
        };
        steps.push(Remediation::command(
            text,
            format!("kubectl annotate ec2nodeclass {name} karpenter.sh/force-refresh=\"$(date +%s)\" --overwrite"),
        ));
    }
    let condition_evidence = conditions
        .into_iter()
        .filter_map(|(_, e, _)| e)
        .filter(|e| {
            !hits
                .iter()
                .any(|m| m.evidence.source == e.source && m.evidence.line == e.line)
        });
    let related: &[&'static str] = if instance_role.is_some() {
        &["KW103"]
    } else {
        &[]
    };
    vec![Diagnosis::new(&META, summary)
        .with_messages(hits.iter().copied())
        .with_evidence(condition_evidence)
        .with_remediation(steps)
        .with_related(related)]
}

fn push_new(list: &mut Vec<String>, value: Option<String>) {
    if let Some(v) = value {
        if !list.contains(&v) {
            list.push(v);
        }
    }
}

/// What an EC2NodeClass's reconciler resolves through a denied action: `ssm:GetParameter` (AMI
/// aliases are SSM parameters) and `ec2:DescribeImages` the AMIs, the instance-profile calls
/// the instance profile, the subnet and security-group lookups those, `eks:DescribeCluster`
/// the cluster CIDR.
fn nodeclass_dependency(action: &str) -> Option<&'static str> {
    let a = action.to_ascii_lowercase();
    if a == "ssm:getparameter" || a == "ec2:describeimages" {
        Some("AMIs")
    } else if a.starts_with("iam:") && (a.contains("instanceprofile") || a == "iam:passrole") {
        Some("instance profile")
    } else if a == "ec2:describesubnets" {
        Some("subnets")
    } else if a == "ec2:describesecuritygroups" {
        Some("security groups")
    } else if a == "eks:describecluster" {
        // AL2023 nodes need the service CIDR (ClusterCIDRResolutionFailed).
        Some("cluster CIDR")
    } else {
        None
    }
}

/// The EC2NodeClass a message is about: the event's or log's object, or a JSON field.
fn nodeclass_of(facts: &Facts, m: &Message) -> Option<String> {
    if let Some(o) = m
        .object
        .as_ref()
        .filter(|o| o.kind.eq_ignore_ascii_case("ec2nodeclass"))
    {
        return Some(o.name.clone());
    }
    if let Some(name) = record_of(facts, m).and_then(|r| r.field_name("EC2NodeClass")) {
        return Some(name);
    }
    crate::rules::text::quoted_after(&m.text, "\"EC2NodeClass\":{\"name\":")
}

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

    #[test]
    fn a_denial_in_the_nodeclass_reconciler_names_what_it_cannot_resolve() {
        let text = r#"{"level":"ERROR","time":"2025-02-10T10:00:00.000Z","logger":"controller","message":"Reconciler error","controller":"nodeclass","controllerGroup":"karpenter.k8s.aws","controllerKind":"EC2NodeClass","EC2NodeClass":{"name":"default"},"namespace":"","name":"default","error":"getting amis, resolving ssm parameter, operation error SSM: GetParameter, https response error StatusCode: 400, RequestID: 3c1b, api error AccessDeniedException: User: arn:aws:sts::111122223333:assumed-role/KarpenterController-blue/1739181600 is not authorized to perform: ssm:GetParameter on resource: arn:aws:ssm:eu-west-1::parameter/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id because no identity-based policy allows the ssm:GetParameter action"}"#;
        let d = &check_only("KW105", text).diagnoses[0];
        assert!(
            d.summary
                .contains("EC2NodeClass default cannot resolve its AMIs without it"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn every_variant() {
        for text in [
            r#"{"level":"ERROR","time":"2024-11-12T16:46:59.426Z","logger":"controller","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-w2zlj"},"error":"launching nodeclaim, creating instance, with fleet error(s), UnauthorizedOperation: You are not authorized to perform this operation. User: arn:aws:sts::111122223333:assumed-role/karpenter-controller-role/1731429849551905269 is not authorized to perform: ec2:RunInstances on resource: arn:aws:ec2:us-east-2:111122223333:instance/* with an explicit deny in a service control policy. Encoded authorization failure message: g4oZPBqZ4Bni8dE5dGjxYTnOZ..."}"#,
            "Normal  ValidationSucceeded  3m  karpenter  Status condition transitioned, Type: ValidationSucceeded, Status: True -> False, Reason: RunInstancesAuthCheckFailed, Message: Controller isn't authorized to call ec2:RunInstances",
            "Status condition transitioned, Type: ValidationSucceeded, Status: Unknown -> False, Reason: CreateFleetAuthCheckFailed, Message: Controller isn't authorized to call ec2:CreateFleet: User is not authorized to perform this operation due to a service control policy",
            "    Message:  Controller isn't authorized to call ec2:CreateLaunchTemplate",
            r#"{"level":"ERROR","logger":"controller","message":"unauthorized to call ec2:RunInstances","controller":"nodeclass","EC2NodeClass":{"name":"private-ng"},"error":"operation error EC2: RunInstances, https response error StatusCode: 403, api error UnauthorizedOperation: You are not authorized to perform this operation."}"#,
            "    message: User is not authorized to perform this operation due to a service control policy",
            "    message: User is not authorized to perform this operation due to a permission boundary",
            "    Message: User is not authorized for AMI used in instance launch",
            "AccessDeniedException: User: arn:aws:sts::111122223333:assumed-role/KarpenterController/1677 is not authorized to perform: pricing:GetProducts with an explicit deny in a service control policy",
            // Inside a launch the caller's credentials were accepted: a launch authorization.
            "launching nodeclaim, creating instance, with fleet error(s), AuthFailure: AWS was not able to validate the provided access credentials",
        ] {
            assert_eq!(ids(&check_only("KW105", text)), ["KW105"], "{text}");
        }
    }

    #[test]
    fn scp_action_role_and_truncated_blob() {
        let report = check_only(
            "KW105",
            r#"{"level":"ERROR","message":"Reconciler error","NodeClaim":{"name":"default-w2zlj"},"error":"launching nodeclaim, creating instance, with fleet error(s), UnauthorizedOperation: You are not authorized to perform this operation. User: arn:aws:sts::111122223333:assumed-role/karpenter-controller-role/1731 is not authorized to perform: ec2:RunInstances on resource: arn:aws:ec2:us-east-2:111122223333:instance/* with an explicit deny in a service control policy. Encoded authorization failure message: g4oZPBqZ4Bni8dE5dGjxYTnOZ..."}"#,
        );
        let d = &report.diagnoses[0];
        assert!(d.summary.starts_with("AWS denies ec2:RunInstances to role karpenter-controller-role on arn:aws:ec2:us-east-2:111122223333:instance/*: an explicit deny in a service control policy"), "{}", d.summary);
        assert!(
            d.summary.contains("NodeClaim default-w2zlj cannot launch"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0].text.contains("cut off"));
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("<encoded-message>"));
        assert!(d.remediation[1]
            .command
            .as_deref()
            .unwrap()
            .contains("--target-id 111122223333"));
    }

    /// Only a `...` / `…` says the blob was cut off; a short one without it is not called so.
    #[test]
    fn a_short_blob_is_not_said_to_be_cut_off() {
        for (tail, cut) in [
            ("AbCdEf123", false),
            ("AbCdEf123...", true),
            ("AbCdEf123…", true),
        ] {
            let report = check_only(
                "KW105",
                &format!("UnauthorizedOperation: You are not authorized to perform this operation. Encoded authorization failure message: {tail}"),
            );
            let step = &report.diagnoses[0].remediation[0];
            assert_eq!(step.text.contains("cut off"), cut, "{tail}: {}", step.text);
            assert!(
                step.command.as_deref().is_some_and(|c| c.starts_with(
                    "aws sts decode-authorization-message --encoded-message <encoded-message>"
                )),
                "{tail}: {:?}",
                step.command
            );
        }
    }

    #[test]
    fn full_blob_is_filled_in() {
        let blob = "xKx9Q3pVZr7mN2bT5cW8yL1dF4gH6jA0sE3uI9oP2qR5tY8wZ1vB4nM7kJ0hG3fD6";
        let report = check_only(
            "KW105",
            &format!("UnauthorizedOperation: You are not authorized to perform this operation. Encoded authorization failure message: {blob}"),
        );
        let cmd = report.diagnoses[0].remediation[0].command.clone().unwrap();
        assert_eq!(cmd, format!("aws sts decode-authorization-message --encoded-message {blob} --query DecodedMessage --output text | jq ."));
    }

    #[test]
    fn missing_allow_gets_a_policy_statement() {
        let report = check_only(
            "KW105",
            r#"{"level":"ERROR","message":"unauthorized to call ec2:RunInstances","EC2NodeClass":{"name":"private-ng"},"error":"api error UnauthorizedOperation: You are not authorized to perform this operation. User: arn:aws:sts::111122223333:assumed-role/KarpenterController/123 is not authorized to perform: ec2:RunInstances on resource: arn:aws:ec2:eu-west-1:111122223333:launch-template/lt-0aa because no identity-based policy allows the ec2:RunInstances action."}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("EC2NodeClass private-ng fails its authorization dry-run"),
            "{}",
            d.summary
        );
        let yaml = d
            .remediation
            .iter()
            .find_map(|r| r.yaml.as_deref())
            .unwrap();
        assert!(yaml.contains("\"ec2:RunInstances\""), "{yaml}");
        assert!(d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("kubectl annotate ec2nodeclass private-ng"))));
    }

    #[test]
    fn near_misses() {
        for text in [
            // KW101.
            "launching nodeclaim, creating instance, with fleet error(s), AuthFailure.ServiceLinkedRoleCreationNotPermitted: The provided credentials do not have permission to create the service-linked role for EC2 Spot Instances.",
            // KW103.
            "WebIdentityErr: failed to retrieve credentials caused by: AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity status code: 403",
            "User: arn:aws:sts::1:assumed-role/a/b is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::2:role/c",
            // KW103: credentials AWS does not recognise, not a missing permission.
            "ec2 api connectivity check failed: operation error EC2: DescribeInstanceTypes, https response error StatusCode: 401, RequestID: 1, api error AuthFailure: AWS was not able to validate the provided access credentials",
            // Kubernetes, not AWS (KW304).
            r#"E0312 kubelet_node_status.go:96] "Unable to register node with API server" err="Unauthorized" node="ip-10-0-1-2.ec2.internal""#,
            "Failed to contact API server when waiting for CSINode publishing: Unauthorized",
            // Not an authorization failure (KW301).
            "validating ec2:RunInstances authorization, operation error EC2: RunInstances, https response error StatusCode: 400, api error InvalidBlockDeviceMapping: Volume of size 2GB is smaller than snapshot",
        ] {
            assert!(ids(&check_only("KW105", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn implicit_denies_are_not_called_explicit() {
        let report = check_only(
            "KW105",
            r#"{"level":"ERROR","message":"failed to resolve AMIs","error":"operation error SSM: GetParameter, https response error StatusCode: 400, RequestID: abc, api error AccessDeniedException: User: arn:aws:sts::111122223333:assumed-role/KarpenterControllerRole-prod/1 is not authorized to perform: ssm:GetParameter on resource: arn:aws:ssm:us-east-1::parameter/aws/service/eks/optimized-ami/1.31/amazon-linux-2023/x86_64/standard/recommended/image_id because no permissions boundary allows the ssm:GetParameter action"}"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("the role's permissions boundary does not allow it"),
            "{}",
            d.summary
        );
        assert!(!d.summary.contains("explicit deny"), "{}", d.summary);
        assert!(d.remediation.iter().any(|r| r.text.starts_with(
            "The permissions boundary of KarpenterControllerRole-prod blocks ssm:GetParameter"
        )));
        let report = check_only(
            "KW105",
            "UnauthorizedOperation: You are not authorized to perform this operation. User: arn:aws:sts::111122223333:assumed-role/KarpenterControllerRole-prod/1 is not authorized to perform: ec2:RunInstances on resource: arn:aws:ec2:us-east-1:111122223333:instance/* with an explicit deny in a resource control policy",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("resource control policy (RCP)"),
            "{}",
            d.summary
        );
        assert!(d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.ends_with("--filter RESOURCE_CONTROL_POLICY"))));
    }
}
