//! Reading AWS error texts (SDK v1 and v2, Karpenter's wrappers): which action was denied,
//! to whom, by what kind of policy, and the encoded authorization message.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts};
use crate::rules::text::{contains_any, token_after};

/// The IAM action a denial names: `is not authorized to perform: ec2:RunInstances`, `Not
/// authorized to perform sts:AssumeRoleWithWebIdentity`, `isn't authorized to call
/// ec2:CreateFleet`, `unauthorized to call ec2:RunInstances`, `no identity-based policy allows
/// the ec2:RunInstances action`, SDK v2 `operation error EC2: RunInstances`, the v1.5+ suffix
/// `aws-operation-name=CreateFleet ... aws-service-name=EC2`, or an EC2NodeClass reason
/// `RunInstancesAuthCheckFailed`.
pub fn denied_action(text: &str) -> Option<String> {
    for marker in [
        "is not authorized to perform: ",
        "not authorized to perform ",
        "isn't authorized to call ",
        "isn’t authorized to call ",
        "unauthorized to call ",
        "no identity-based policy allows the ",
    ] {
        if let Some(action) = token_after(text, marker).filter(|a| is_action(a)) {
            return Some(action);
        }
    }
    if let Some(op) = token_after(text, "operation error ") {
        // `operation error EC2: RunInstances, https response error ...`
        let service = op.trim_end_matches(':');
        let rest = find_ignore_ascii_case(text, "operation error ")
            .map(|i| &text[i + "operation error ".len() + op.len()..])
            .unwrap_or("");
        let name: String = rest
            .trim_start_matches(':')
            .trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect();
        if !name.is_empty() && !service.is_empty() {
            return Some(format!("{}:{name}", iam_prefix(service)));
        }
    }
    if let (Some(op), Some(service)) = (
        token_after(text, "aws-operation-name="),
        token_after(text, "aws-service-name="),
    ) {
        return Some(format!("{}:{op}", iam_prefix(&service)));
    }
    if let Some(action) = action_from_context(text) {
        return Some(action.to_string());
    }
    for (reason, action) in [
        ("CreateFleetAuthCheckFailed", "ec2:CreateFleet"),
        ("RunInstancesAuthCheckFailed", "ec2:RunInstances"),
        (
            "CreateLaunchTemplateAuthCheckFailed",
            "ec2:CreateLaunchTemplate",
        ),
    ] {
        if text.contains(reason) {
            return Some(action.to_string());
        }
    }
    None
}

/// Karpenter's own wrapping of the failed call (`getting amis, describing images [...],
/// UnauthorizedOperation: ...`), for SDK v1 errors that name neither operation nor action:
/// the last such phrase before the denial. (`creating fleet` is left to the launch rule: a
/// fleet denial may be CreateFleet or the RunInstances it makes.)
fn action_from_context(text: &str) -> Option<&'static str> {
    const PHRASES: &[(&str, &str)] = &[
        ("describing images", "ec2:DescribeImages"),
        ("getting amis", "ec2:DescribeImages"),
        ("describing subnets", "ec2:DescribeSubnets"),
        ("getting subnets", "ec2:DescribeSubnets"),
        ("describing security groups", "ec2:DescribeSecurityGroups"),
        ("getting security groups", "ec2:DescribeSecurityGroups"),
        ("describing instance types", "ec2:DescribeInstanceTypes"),
        ("fetching instance types", "ec2:DescribeInstanceTypes"),
        ("getting instance types", "ec2:DescribeInstanceTypes"),
        (
            "describing instance type offerings",
            "ec2:DescribeInstanceTypeOfferings",
        ),
        (
            "getting instance type offerings",
            "ec2:DescribeInstanceTypeOfferings",
        ),
        (
            "describing availability zones",
            "ec2:DescribeAvailabilityZones",
        ),
        ("getting zones", "ec2:DescribeAvailabilityZones"),
        ("describing launch templates", "ec2:DescribeLaunchTemplates"),
        ("creating launch template", "ec2:CreateLaunchTemplate"),
        ("deleting launch template", "ec2:DeleteLaunchTemplate"),
        ("terminating instance", "ec2:TerminateInstances"),
        (
            "describing spot price history",
            "ec2:DescribeSpotPriceHistory",
        ),
        ("getting ssm parameter", "ssm:GetParameter"),
        ("resolving ssm parameter", "ssm:GetParameter"),
        ("getting queue url", "sqs:GetQueueUrl"),
        ("receiving sqs messages", "sqs:ReceiveMessage"),
        ("on-demand pricing", "pricing:GetProducts"),
    ];
    let end = ["unauthorizedoperation", "accessdenied", "not authorized"]
        .iter()
        .filter_map(|m| find_ignore_ascii_case(text, m))
        .min()?;
    let before = &text[..end];
    PHRASES
        .iter()
        .filter_map(|(phrase, action)| {
            let mut at = None;
            let mut from = 0;
            while let Some(i) = find_ignore_ascii_case(&before[from..], phrase) {
                at = Some(from + i);
                from += i + phrase.len();
            }
            at.map(|i| (i, *action))
        })
        .max_by_key(|(i, _)| *i)
        .map(|(_, action)| action)
}

/// `service:Action` with a lower-case service prefix and an upper-case action start.
fn is_action(s: &str) -> bool {
    let Some((service, action)) = s.split_once(':') else {
        return false;
    };
    !service.is_empty()
        && service
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && action.starts_with(|c: char| c.is_ascii_uppercase() || c == '*')
}

/// The IAM prefix of an SDK service ID (`EC2` -> `ec2`, `Pricing` -> `pricing`).
fn iam_prefix(service: &str) -> String {
    match service {
        "Pricing" => "pricing".to_string(),
        "EventBridge" => "events".to_string(),
        other => other.to_ascii_lowercase(),
    }
}

/// The principal a denial names (`User: arn:aws:sts::...:assumed-role/<role>/<session>`).
pub fn principal(text: &str) -> Option<String> {
    token_after(text, "User: ").filter(|p| p.starts_with("arn:"))
}

/// The resource a denial names (`on resource: arn:aws:ec2:...:instance/*`; IAM also writes
/// `on resource: instance profile <name>` or `role <name>`).
pub fn resource(text: &str) -> Option<String> {
    let start = find_ignore_ascii_case(text, "on resource: ")? + "on resource: ".len();
    let rest = &text[start..];
    let token = token_after(text, "on resource: ")?;
    if token.starts_with("arn:") {
        return Some(token);
    }
    // A phrase up to the reason that follows it.
    let end = [
        " because ",
        " with an explicit",
        " with an implicit",
        "\n",
        "\\n",
        "\"",
        "\\\"",
    ]
    .iter()
    .filter_map(|m| rest.find(m))
    .min()
    .unwrap_or(rest.len());
    let phrase = rest[..end].trim().trim_end_matches('.').trim();
    (!phrase.is_empty()).then(|| phrase.to_string())
}

/// The IAM role name in an ARN: `assumed-role/<name>/<session>` or `role/[path/]<name>`.
pub fn role_name(arn: &str) -> Option<String> {
    if let Some(i) = arn.find(":assumed-role/") {
        return arn[i + ":assumed-role/".len()..]
            .split('/')
            .next()
            .filter(|s| !s.is_empty())
            .map(str::to_string);
    }
    let i = arn.find(":role/")?;
    arn[i + ":role/".len()..]
        .rsplit('/')
        .next()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// What kind of policy denied, when the text says. IAM words it two ways: `with an explicit
/// deny in a <policy>` (a Deny statement) and `because no <policy> allows the <action> action`
/// (an Allow is missing: the implicit deny).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DenySource {
    ServiceControlPolicy,
    /// `because no service control policy allows ...`.
    ServiceControlPolicyNoAllow,
    /// `with an explicit deny in a resource control policy` (AWS Organizations RCPs).
    ResourceControlPolicy,
    PermissionsBoundary,
    /// `because no permissions boundary allows ...`, or a boundary named without saying how.
    PermissionsBoundaryNoAllow,
    IdentityPolicyExplicitDeny,
    ResourcePolicy,
    SessionPolicy,
    /// `because no session policy allows ...`.
    SessionPolicyNoAllow,
    /// `because no identity-based policy allows ...`: an Allow is missing.
    NoAllow,
}

impl DenySource {
    pub fn describe(self) -> &'static str {
        match self {
            DenySource::ServiceControlPolicy => {
                "an explicit deny in a service control policy (SCP) of AWS Organizations"
            }
            DenySource::ServiceControlPolicyNoAllow => {
                "no service control policy (SCP) of AWS Organizations allows it"
            }
            DenySource::ResourceControlPolicy => {
                "an explicit deny in a resource control policy (RCP) of AWS Organizations"
            }
            DenySource::PermissionsBoundary => {
                "an explicit deny in the role's permissions boundary"
            }
            DenySource::PermissionsBoundaryNoAllow => {
                "the role's permissions boundary does not allow it"
            }
            DenySource::IdentityPolicyExplicitDeny => {
                "an explicit deny in an identity-based policy"
            }
            DenySource::ResourcePolicy => "an explicit deny in a resource-based policy",
            DenySource::SessionPolicy => "an explicit deny in a session policy",
            DenySource::SessionPolicyNoAllow => "no session policy allows it",
            DenySource::NoAllow => "no identity-based policy allows it",
        }
    }

    /// An AWS Organizations policy: no change to the role can lift it.
    pub fn is_organizations_policy(self) -> bool {
        matches!(
            self,
            DenySource::ServiceControlPolicy
                | DenySource::ServiceControlPolicyNoAllow
                | DenySource::ResourceControlPolicy
        )
    }

    pub fn is_permissions_boundary(self) -> bool {
        matches!(
            self,
            DenySource::PermissionsBoundary | DenySource::PermissionsBoundaryNoAllow
        )
    }
}

pub fn deny_source(text: &str) -> Option<DenySource> {
    let has = |n: &[&str]| contains_any(text, n);
    if has(&["no service control policy allows"]) {
        Some(DenySource::ServiceControlPolicyNoAllow)
    } else if has(&["service control policy"]) {
        Some(DenySource::ServiceControlPolicy)
    } else if has(&["resource control policy"]) {
        Some(DenySource::ResourceControlPolicy)
    } else if has(&[
        "explicit deny in a permissions boundary",
        "explicit deny in the permissions boundary",
    ]) {
        Some(DenySource::PermissionsBoundary)
    } else if has(&["permissions boundary", "permission boundary"]) {
        Some(DenySource::PermissionsBoundaryNoAllow)
    } else if has(&["explicit deny in an identity-based policy"]) {
        Some(DenySource::IdentityPolicyExplicitDeny)
    } else if has(&["explicit deny in a resource-based policy"]) {
        Some(DenySource::ResourcePolicy)
    } else if has(&["explicit deny in a session policy"]) {
        Some(DenySource::SessionPolicy)
    } else if has(&["no session policy allows"]) {
        Some(DenySource::SessionPolicyNoAllow)
    } else if has(&["no identity-based policy allows"]) {
        Some(DenySource::NoAllow)
    } else {
        None
    }
}

/// The encoded authorization failure message as the evidence holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodedMessage {
    /// The blob, for `aws sts decode-authorization-message`.
    Whole(String),
    /// Cut off where the text says so (`...`, `…`): only the original error has the rest.
    CutOff,
    /// Too short to be a blob (they run to hundreds of characters), or nothing after the
    /// marker: shortened by hand or a placeholder, so the original error has the real one.
    Short(String),
}

/// The encoded authorization failure message after `Encoded authorization failure message:`.
pub fn encoded_message(text: &str) -> Option<EncodedMessage> {
    let marker = "Encoded authorization failure message: ";
    if !contains_ignore_ascii_case(text, marker.trim_end()) {
        return None;
    }
    let blob = token_after(text, marker.trim_end()).unwrap_or_default();
    let raw_end = find_ignore_ascii_case(text, marker.trim_end())
        .map(|i| &text[i + marker.trim_end().len()..])
        .unwrap_or("");
    let raw_token: String = raw_end
        .trim_start()
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\\')
        .collect();
    Some(if raw_token.ends_with("...") || raw_token.ends_with('…') {
        EncodedMessage::CutOff
    } else if blob.len() < 20 {
        EncodedMessage::Short(blob)
    } else {
        EncodedMessage::Whole(blob)
    })
}

/// `aws sts decode-authorization-message` filled in with the blob, or a placeholder.
pub fn decode_command(blob: Option<&str>) -> String {
    format!(
        "aws sts decode-authorization-message --encoded-message {} --query DecodedMessage --output text | jq .",
        blob.unwrap_or("<encoded-message>")
    )
}

/// The controller's IAM role from IRSA's injected `AWS_ROLE_ARN` env (Deployment or pods).
pub fn controller_role_from_env(facts: &Facts) -> Option<String> {
    facts
        .karpenter_deployment()
        .into_iter()
        .flat_map(|d| d.containers.iter())
        .chain(
            facts
                .pods
                .iter()
                .filter(|p| p.meta.name.starts_with("karpenter-"))
                .flat_map(|p| p.containers.iter()),
        )
        .find_map(|c| c.env.get("AWS_ROLE_ARN"))
        .and_then(|arn| role_name(arn))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_in_every_shape() {
        let cases = [
            ("User: arn:aws:sts::1:assumed-role/k/1 is not authorized to perform: ec2:RunInstances on resource: x", "ec2:RunInstances"),
            ("AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity\n\tstatus code: 403", "sts:AssumeRoleWithWebIdentity"),
            ("Controller isn't authorized to call ec2:CreateFleet: User is not authorized", "ec2:CreateFleet"),
            ("unauthorized to call ec2:RunInstances", "ec2:RunInstances"),
            ("operation error EC2: DescribeInstanceTypes, https response error StatusCode: 403, api error UnauthorizedOperation: You are not authorized to perform this operation.", "ec2:DescribeInstanceTypes"),
            ("UnauthorizedOperation: x (aws-error-code=UnauthorizedOperation, aws-operation-name=CreateFleet, aws-request-id=1, aws-service-name=EC2, aws-status-code=403)", "ec2:CreateFleet"),
            ("Status condition transitioned, Type: ValidationSucceeded, Status: True -> False, Reason: RunInstancesAuthCheckFailed", "ec2:RunInstances"),
            ("is not authorized to perform: pricing:GetProducts with an explicit deny", "pricing:GetProducts"),
        ];
        for (text, action) in cases {
            assert_eq!(denied_action(text).as_deref(), Some(action), "{text}");
        }
        assert_eq!(
            denied_action("You are not authorized to perform this operation."),
            None
        );
        assert_eq!(
            denied_action(r#"Could not schedule pod, getting instance types, getting amis, describing images [{"Name":"image-id"}], UnauthorizedOperation: You are not authorized to perform this operation."#).as_deref(),
            Some("ec2:DescribeImages")
        );
    }

    #[test]
    fn principals_and_roles() {
        let t = "User: arn:aws:sts::111122223333:assumed-role/karpenter-controller-role/1731 is not authorized to perform: ec2:RunInstances on resource: arn:aws:ec2:us-east-2:111122223333:instance/* with an explicit deny in a service control policy.";
        let p = principal(t).unwrap();
        assert_eq!(role_name(&p).as_deref(), Some("karpenter-controller-role"));
        assert_eq!(
            resource(t).as_deref(),
            Some("arn:aws:ec2:us-east-2:111122223333:instance/*")
        );
        assert_eq!(deny_source(t), Some(DenySource::ServiceControlPolicy));
        assert_eq!(
            resource("User: arn:aws:sts::1:assumed-role/k/1 is not authorized to perform: iam:GetInstanceProfile on resource: instance profile prod_123 because no identity-based policy allows the iam:GetInstanceProfile action").as_deref(),
            Some("instance profile prod_123")
        );
        assert_eq!(
            role_name("arn:aws:iam::1:role/path/KarpenterNode").as_deref(),
            Some("KarpenterNode")
        );
        assert_eq!(
            deny_source("due to a permission boundary"),
            Some(DenySource::PermissionsBoundaryNoAllow)
        );
        // The implicit forms say no Allow exists, not that a Deny matched.
        for (text, source) in [
            (
                "with an explicit deny in a permissions boundary",
                DenySource::PermissionsBoundary,
            ),
            (
                "because no permissions boundary allows the ssm:GetParameter action",
                DenySource::PermissionsBoundaryNoAllow,
            ),
            (
                "because no service control policy allows the ec2:RunInstances action",
                DenySource::ServiceControlPolicyNoAllow,
            ),
            (
                "with an explicit deny in a resource control policy",
                DenySource::ResourceControlPolicy,
            ),
            (
                "because no session policy allows the ec2:CreateFleet action",
                DenySource::SessionPolicyNoAllow,
            ),
        ] {
            assert_eq!(deny_source(text), Some(source), "{text}");
        }
        assert!(!DenySource::ServiceControlPolicyNoAllow
            .describe()
            .contains("explicit"));
        assert!(!DenySource::PermissionsBoundaryNoAllow
            .describe()
            .contains("explicit"));
    }

    #[test]
    fn encoded_messages() {
        assert_eq!(encoded_message("no blob here"), None);
        assert_eq!(
            encoded_message("Encoded authorization failure message: g4oZPBqZ4Bni8dE5dGjxYTnOZ..."),
            Some(EncodedMessage::CutOff)
        );
        assert_eq!(
            encoded_message("Encoded authorization failure message: g4oZPBqZ4Bni8dE5…"),
            Some(EncodedMessage::CutOff)
        );
        assert_eq!(
            encoded_message("Encoded authorization failure message: ..."),
            Some(EncodedMessage::CutOff)
        );
        // Short without a mark of truncation: not said to be cut off.
        assert_eq!(
            encoded_message("Encoded authorization failure message: AbCdEf123\tstatus code: 403"),
            Some(EncodedMessage::Short("AbCdEf123".into()))
        );
        let blob = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCd";
        assert_eq!(
            encoded_message(&format!(
                "x. Encoded authorization failure message: {blob}\n\tstatus code: 403"
            )),
            Some(EncodedMessage::Whole(blob.to_string()))
        );
    }
}
