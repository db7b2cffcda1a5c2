//! The controller's AWS credential chain failing, shared by KW102 (STS cannot be reached) and
//! KW103 (credentials are missing or refused). One text is one or the other, never both: a
//! refusal means STS answered.

pub use crate::facts::foreign_log_line;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, MessageOrigin, ShellCommand};
use crate::rules::text::contains_any;

/// Texts of the credential chain reaching for STS (SDK v1 `WebIdentityErr`, SDK v2
/// `operation error STS: AssumeRoleWithWebIdentity`, the STS endpoint itself).
pub const STS_MARKERS: &[&str] = &[
    "webidentityerr",
    "assumerolewithwebidentity",
    "operation error sts",
    "https://sts.",
    "lookup sts.",
];

/// A request that got no answer.
pub const NETWORK_MARKERS: &[&str] = &[
    "i/o timeout",
    "dial tcp",
    "no such host",
    "connection refused",
    "connection reset",
    "context deadline exceeded",
    "tls handshake timeout",
    "send request failed",
    "request send failed",
    "request canceled",
    "network is unreachable",
];

/// Texts of AWS callers that are not the Karpenter controller: the EBS/EFS CSI drivers, the
/// load balancer controller, the kubelet pulling from ECR. Their credential and permission
/// errors read the same, but the fix is on their role, not Karpenter's.
const OTHER_CALLERS: &[&str] = &[
    "could not create volume",
    "could not attach volume",
    "could not detach volume",
    "could not delete volume",
    "operation error ec2: createvolume",
    "operation error ec2: attachvolume",
    "operation error ec2: detachvolume",
    "operation error ec2: createsnapshot",
    "ec2:createvolume",
    "ec2:attachvolume",
    "ebs.csi.aws.com",
    "efs.csi.aws.com",
    "elasticloadbalancing",
    "operation error elastic load balancing",
    "failed to pull image",
    "pullimage from image service failed",
    "ecr:getauthorizationtoken",
    "ecr:batchgetimage",
    "ecr:getdownloadurlforlayer",
    "ecr-credential-provider",
    "cluster-autoscaler",
    "external-dns",
    "route53:",
];

/// Whether a message comes from another AWS caller than the Karpenter controller: an event
/// another component reported, a kubelet/klog journal line, or a text naming another caller's
/// operation. Karpenter's own messages (its logs, its events) are never excluded by the source.
pub fn from_other_component(facts: &Facts, m: &Message) -> bool {
    if contains_any(&m.text, OTHER_CALLERS) || logfmt_line(&m.evidence.text) {
        return true;
    }
    // AWS CLI output (`An error occurred (AccessDenied) when calling the X operation: ...`):
    // the user's own shell session, not the controller's role.
    if contains_any(&m.text, &["an error occurred ("])
        && contains_any(&m.text, &["when calling the "])
    {
        return true;
    }
    if logs_command(facts, m).is_some_and(logs_of_another_workload) {
        return true;
    }
    let karpenter = |s: &str| contains_ignore_ascii_case(s, "karpenter");
    match m.origin {
        MessageOrigin::Event => m
            .component
            .as_deref()
            .is_some_and(|c| !c.is_empty() && !karpenter(c)),
        // klog/journal lines: the kubelet, CSI drivers, other controllers. Karpenter logs JSON
        // (or the console format), never klog.
        MessageOrigin::Kubelet => !karpenter(&m.text),
        MessageOrigin::KarpenterLog => foreign_log_line(&m.evidence.text),
        _ => false,
    }
}

/// A logfmt line (`time="..." level=error msg="..."`: external-dns, cluster-autoscaler's
/// older builds, logrus-based agents). Karpenter never writes logfmt.
fn logfmt_line(raw: &str) -> bool {
    let t = raw.trim_start();
    (t.starts_with("time=\"") || t.starts_with("ts=") || t.starts_with("level="))
        && t.contains("level=")
        && t.contains("msg=")
}

/// The `kubectl logs` or `stern` command whose output holds the message: the last command
/// before it in the same paste.
fn logs_command<'a>(facts: &'a Facts, m: &Message) -> Option<&'a ShellCommand> {
    facts
        .commands
        .iter()
        .filter(|c| c.evidence.source == m.evidence.source && c.evidence.line < m.evidence.line)
        .max_by_key(|c| c.evidence.line)
        .filter(|c| (c.tool == "kubectl" && c.verb.as_deref() == Some("logs")) || c.tool == "stern")
}

/// A logs command that names a workload, pod or selector, none of them Karpenter's
/// (`kubectl logs -n kube-system deploy/external-dns`, `-l app.kubernetes.io/name=aws-node`).
fn logs_of_another_workload(c: &ShellCommand) -> bool {
    let named: Vec<&str> = [
        c.resource.as_deref(),
        c.name.as_deref(),
        c.selector.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect();
    !named.is_empty()
        && !named
            .iter()
            .any(|n| contains_ignore_ascii_case(n, "karpenter"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialFailure {
    /// STS could not be reached (KW102).
    StsUnreachable,
    /// No credentials in the chain at all: no IRSA / Pod Identity wiring (KW103).
    NoCredentials,
    /// STS refused the web identity: trust policy, OIDC provider, audience (KW103).
    WebIdentityRefused,
    /// The OIDC provider of the cluster is not registered in IAM (KW103).
    NoOidcProvider,
    /// Role chaining: the assumed role's trust policy does not allow the caller (KW103).
    AssumeRoleRefused,
    /// EKS Pod Identity: the agent on the node (169.254.170.23) does not answer (KW103).
    PodIdentityAgentUnreachable,
    /// EKS Pod Identity: the association exists but EKS may not assume its role: the role's
    /// trust policy lacks `pods.eks.amazonaws.com` with `sts:AssumeRole` and `sts:TagSession`
    /// (KW103).
    PodIdentityRefused,
    /// STS is deactivated in the region the SDK calls (KW103).
    StsRegionDisabled,
    /// STS finds the web identity token expired (a stale token file, or the node's clock)
    /// (KW103).
    TokenExpired,
    /// AWS does not recognise the credentials the controller signs with (`AuthFailure: AWS was
    /// not able to validate the provided access credentials`, `InvalidClientTokenId`): static
    /// keys that were deactivated, or a session token from the global STS endpoint used in an
    /// opt-in region (KW103).
    CredentialsInvalid,
}

impl CredentialFailure {
    pub fn is_refusal(self) -> bool {
        self != CredentialFailure::StsUnreachable
    }
}

pub fn credential_failure(text: &str) -> Option<CredentialFailure> {
    let has = |n: &[&str]| contains_any(text, n);
    // EKS Pod Identity: the SDK's container credentials provider asks the node's agent.
    if has(&[
        "eks does not have permissions to assume the associated role",
        "assumeroleforpodidentity",
    ]) && has(&[
        "unauthorized exception",
        "accessdenied",
        "eks does not have permissions",
        "statuscode: 400",
        "statuscode: 403",
    ]) {
        return Some(CredentialFailure::PodIdentityRefused);
    }
    if has(&["169.254.170.23", "[fd00:ec2::23]", "eks-pod-identity-agent"]) && has(NETWORK_MARKERS)
    {
        return Some(CredentialFailure::PodIdentityAgentUnreachable);
    }
    if has(&[
        "regiondisabledexception",
        "sts is not activated in this region",
    ]) {
        return Some(CredentialFailure::StsRegionDisabled);
    }
    if has(STS_MARKERS) && has(&["expiredtoken", "token expired"]) {
        return Some(CredentialFailure::TokenExpired);
    }
    // Inside a fleet error the call itself was authenticated: the failure is about a launch.
    if has(&[
        "was not able to validate the provided access credentials",
        "invalidclienttokenid",
        "the security token included in the request is invalid",
        "unrecognizedclientexception",
    ]) && !has(&["fleet error"])
    {
        return Some(CredentialFailure::CredentialsInvalid);
    }
    if has(&["invalididentitytoken", "no openidconnect provider"]) {
        return Some(if has(&["no openidconnect provider"]) {
            CredentialFailure::NoOidcProvider
        } else {
            CredentialFailure::WebIdentityRefused
        });
    }
    if has(&[
        "not authorized to perform sts:assumerolewithwebidentity",
        "is not authorized to perform: sts:assumerolewithwebidentity",
        "incorrect token audience",
    ]) {
        return Some(CredentialFailure::WebIdentityRefused);
    }
    if has(&["is not authorized to perform: sts:assumerole"]) {
        return Some(CredentialFailure::AssumeRoleRefused);
    }
    if has(&[
        "nocredentialproviders",
        "no valid providers in chain",
        "no ec2 imds role found",
        "eks.amazonaws.com/serviceaccount/token",
    ]) {
        return Some(CredentialFailure::NoCredentials);
    }
    // SDK v2: `operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode:
    // 403, ..., api error AccessDenied: ...`.
    if has(STS_MARKERS) && has(&["accessdenied", "statuscode: 403", "status code: 403"]) {
        return Some(CredentialFailure::WebIdentityRefused);
    }
    if has(STS_MARKERS) && has(NETWORK_MARKERS) {
        return Some(CredentialFailure::StsUnreachable);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_sdk_v1_and_v2_texts() {
        let cases = [
            (r#"Checking EC2 API connectivity, WebIdentityErr: failed to retrieve credentials\ncaused by: RequestError: send request failed\ncaused by: Post "https://sts.us-east-1.amazonaws.com/": dial tcp: lookup sts.us-east-1.amazonaws.com: i/o timeout"#, CredentialFailure::StsUnreachable),
            (r#"operation error EC2: DescribeInstanceTypes, get identity: get credentials: failed to refresh cached credentials, failed to retrieve credentials, operation error STS: AssumeRoleWithWebIdentity, exceeded maximum number of attempts, 3, https response error StatusCode: 0, RequestID: , request send failed, Post "https://sts.us-east-1.amazonaws.com/": dial tcp: lookup sts.us-east-1.amazonaws.com: i/o timeout"#, CredentialFailure::StsUnreachable),
            ("NoCredentialProviders: no valid providers in chain. Deprecated.", CredentialFailure::NoCredentials),
            ("WebIdentityErr: failed to retrieve credentials\ncaused by: AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity\n\tstatus code: 403", CredentialFailure::WebIdentityRefused),
            ("operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode: 403, RequestID: 1, api error AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity", CredentialFailure::WebIdentityRefused),
            ("InvalidIdentityToken: No OpenIDConnect provider found in your account for https://oidc.eks.eu-west-1.amazonaws.com/id/ABC", CredentialFailure::NoOidcProvider),
            ("User: arn:aws:sts::1:assumed-role/a/b is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::2:role/c", CredentialFailure::AssumeRoleRefused),
            ("get identity: get credentials: failed to refresh cached credentials, no EC2 IMDS role found, operation error ec2imds: GetMetadata, request canceled, context deadline exceeded", CredentialFailure::NoCredentials),
            (r#"operation error EC2: DescribeInstanceTypes, get identity: get credentials: failed to refresh cached credentials, failed to load credentials, exceeded maximum number of attempts, 3, request send failed, Get "http://169.254.170.23/v1/credentials": dial tcp 169.254.170.23:80: connect: connection refused"#, CredentialFailure::PodIdentityAgentUnreachable),
            ("get identity: get credentials: failed to refresh cached credentials, failed to load credentials, Unauthorized Exception! EKS does not have permissions to assume the associated role., fault: client", CredentialFailure::PodIdentityRefused),
            ("operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode: 400, RequestID: 1, api error ExpiredTokenException: Token expired: current date/time 1718000000 must be before the expiration date/time1717990000", CredentialFailure::TokenExpired),
            ("operation error EC2: DescribeInstanceTypes, https response error StatusCode: 401, RequestID: 1, api error AuthFailure: AWS was not able to validate the provided access credentials", CredentialFailure::CredentialsInvalid),
            ("InvalidClientTokenId: The security token included in the request is invalid.\n\tstatus code: 403", CredentialFailure::CredentialsInvalid),
            ("operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode: 403, RequestID: 1, api error RegionDisabledException: STS is not activated in this region for account:111122223333. Your account administrator can activate STS in this region using the IAM Console.", CredentialFailure::StsRegionDisabled),
        ];
        for (text, expected) in cases {
            assert_eq!(credential_failure(text), Some(expected), "{text}");
        }
        // A fleet's per-launch AuthFailure is not about the caller's credentials.
        assert_eq!(
            credential_failure("launching nodeclaim, creating instance, with fleet error(s), AuthFailure: AWS was not able to validate the provided access credentials"),
            None
        );
        // Pricing timeouts are not credential failures.
        assert_eq!(
            credential_failure(
                r#"updating on-demand pricing, RequestError: send request failed caused by: Post "https://api.pricing.us-east-1.amazonaws.com/": dial tcp 52.94.231.236:443: i/o timeout"#
            ),
            None
        );
    }

    #[test]
    fn other_controllers_log_lines() {
        let alb = r#"{"level":"error","ts":"2024-09-12T08:16:41Z","logger":"controller.ingress","msg":"Reconciler error","error":"WebIdentityErr: failed to retrieve credentials"}"#;
        assert!(foreign_log_line(alb));
        let karpenter = r#"{"level":"ERROR","time":"2025-01-22T03:11:54.201Z","logger":"controller","message":"ec2 api connectivity check failed","commit":"a2875e3"}"#;
        assert!(!foreign_log_line(karpenter));
        assert!(foreign_log_line(&format!(
            "[pod/aws-load-balancer-controller-7d8f9/aws-load-balancer-controller] {karpenter}"
        )));
        assert!(!foreign_log_line(&format!(
            "[pod/autoscaler-5c7d9f8b6-2wq9z/controller] {karpenter}"
        )));
        assert!(foreign_log_line(&format!(
            "ebs-csi-controller-6d9 ebs-plugin {karpenter}"
        )));
        assert!(!foreign_log_line(&format!(
            "karpenter-6d9c-x2 controller {karpenter}"
        )));
        assert!(!foreign_log_line(&format!(
            "2025-01-22T03:11:54.201Z {karpenter}"
        )));
    }

    #[test]
    fn logs_of_other_workloads_by_format_or_command() {
        assert!(logfmt_line(
            r#"time="2025-04-02T12:00:01Z" level=error msg="WebIdentityErr: failed to retrieve credentials""#
        ));
        assert!(!logfmt_line(
            r#"{"level":"ERROR","time":"t","logger":"controller","message":"m"}"#
        ));
        let facts = crate::ingest::ingest(&[crate::Document::new(
            "paste",
            "$ kubectl logs -n kube-system deploy/external-dns --tail=1\nWebIdentityErr: failed to retrieve credentials caused by: AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity\n$ kubectl logs -n platform deploy/karpenter --tail=1\nWebIdentityErr: failed to retrieve credentials caused by: AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity\n",
        )]);
        let hits: Vec<bool> = facts
            .messages
            .iter()
            .filter(|m| m.text.contains("WebIdentityErr"))
            .map(|m| from_other_component(&facts, m))
            .collect();
        assert_eq!(hits, [true, false]);
    }

    #[test]
    fn aws_cli_output_is_the_users_session() {
        let facts = Facts::default();
        let cli = Message {
            text: "An error occurred (InvalidClientTokenId) when calling the GetCallerIdentity operation: The security token included in the request is invalid.".to_string(),
            ..Message::default()
        };
        assert!(from_other_component(&facts, &cli));
        let controller = Message {
            text: "ec2 api connectivity check failed: api error AuthFailure: AWS was not able to validate the provided access credentials".to_string(),
            origin: MessageOrigin::KarpenterLog,
            ..Message::default()
        };
        assert!(!from_other_component(&facts, &controller));
    }
}
