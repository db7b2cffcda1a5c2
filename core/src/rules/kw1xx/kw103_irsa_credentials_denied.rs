//! KW103 irsa-credentials-denied.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{Facts, Message};
use crate::rules::kw1xx::aws::{controller_role_from_env, principal, resource, role_name};
use crate::rules::kw1xx::credentials::{
    credential_failure, from_other_component, CredentialFailure,
};
use crate::rules::kw5xx::kw504_pricing_unreachable::pricing_call;
use crate::rules::text::{
    aws_account, aws_region, cluster_name_or_placeholder, contains_any,
    karpenter_namespace_or_placeholder,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW103",
    slug: "irsa-credentials-denied",
    title: "The Karpenter controller's AWS credentials are missing or refused",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The controller reached AWS, but has no credentials or STS refused to issue them, so every AWS
call fails (and the controller exits at start-up after `ec2 api connectivity check failed`).

Signals: `AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity` (SDK v1, and
the SDK v2 `operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode:
403, ... api error AccessDenied`), `InvalidIdentityToken: No OpenIDConnect provider found in
your account`, `NoCredentialProviders: no valid providers in chain` (SDK v1) or `failed to
refresh cached credentials, no EC2 IMDS role found` (SDK v2): nothing configured; and `is not
authorized to perform: sts:AssumeRole` (role chaining: the assumed role's trust policy does not
allow the caller). Not this rule: `UnrecognizedClientException: The security token included in
the request is invalid` from the pricing call (`operation error Pricing: GetProducts`), which is
a partition without a Price List endpoint (GovCloud), not refused credentials (KW504).

## Why it happens
IRSA needs three things to agree: the service account's `eks.amazonaws.com/role-arn`
annotation, an IAM OIDC provider for the cluster's issuer, and the role's trust policy naming
that provider with `sub` = `system:serviceaccount:<namespace>:karpenter` and `aud` =
`sts.amazonaws.com`. A renamed namespace or service account, a recreated cluster (new issuer),
or a role created for another cluster breaks the chain. With EKS Pod Identity, the association
for the service account is missing.

## How to fix
Check the annotation, then the trust policy (`aws iam get-role --role-name <role> --query
Role.AssumeRolePolicyDocument`) against the cluster's issuer (`aws eks describe-cluster --name
<cluster> --query cluster.identity.oidc.issuer`); or create the Pod Identity association (not
offered for Karpenter before v0.32, which predates EKS Pod Identity). Restart the controller
afterwards.
"#,
};

const SIGNALS: &[&str] = &[
    "not authorized to perform sts:assumerole",
    "not authorized to perform: sts:assumerole",
    "nocredentialproviders",
    "no valid providers in chain",
    "invalididentitytoken",
    "no openidconnect provider",
    "incorrect token audience",
    "no ec2 imds role found",
    "eks.amazonaws.com/serviceaccount/token",
    "operation error sts",
    "webidentityerr",
    "169.254.170.23",
    "eks does not have permissions to assume",
    "assumeroleforpodidentity",
    "regiondisabledexception",
    "sts is not activated in this region",
    "expiredtokenexception",
    "was not able to validate the provided access credentials",
    "invalidclienttokenid",
    "the security token included in the request is invalid",
    "unrecognizedclientexception",
];

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let mut kinds: Vec<CredentialFailure> = Vec::new();
    let mut hits: Vec<&Message> = Vec::new();
    for m in facts
        .messages
        .iter()
        .filter(|m| !from_other_component(facts, m))
    {
        if let Some(kind) = credential_failure(&m.text)
            .filter(|k| k.is_refusal())
            .filter(|k| !(*k == CredentialFailure::CredentialsInvalid && pricing_call(m)))
        {
            hits.push(m);
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
    }
    if hits.is_empty() {
        return Vec::new();
    }
    let ns = karpenter_namespace_or_placeholder(facts);
    let sa = service_account(facts);
    let account = aws_account(facts).unwrap_or_else(|| "<account-id>".to_string());
    let region = aws_region(facts).unwrap_or_else(|| "<region>".to_string());
    let cluster = cluster_name_or_placeholder(facts);
    let issuer = hits
        .iter()
        .find_map(|m| oidc_issuer(&m.text))
        .unwrap_or_else(|| format!("oidc.eks.{region}.amazonaws.com/id/<OIDC-ID>"));
    let role =
        controller_role(facts, &hits).unwrap_or_else(|| "<karpenter-controller-role>".to_string());
    // The start-up check as this version words it (v0.3x and earlier: `Checking EC2 API
    // connectivity, <error>`).
    let at_start = [
        "ec2 api connectivity check failed",
        "Checking EC2 API connectivity",
    ]
    .into_iter()
    .find(|check| hits.iter().any(|m| contains_any(&m.text, &[check])));
    // EKS Pod Identity launched after v0.32: no older Karpenter can use it.
    let pod_identity = !crate::rules::version::before_v0_32(facts);

    let mut parts: Vec<String> = Vec::new();
    let mut steps: Vec<Remediation> = Vec::new();
    let trust_policy = |principal: &str| {
        format!(
            "{{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{{\n    \"Effect\": \"Allow\",\n    \"Principal\": {{\"Federated\": \"{principal}\"}},\n    \"Action\": \"sts:AssumeRoleWithWebIdentity\",\n    \"Condition\": {{\"StringEquals\": {{\n      \"{issuer}:aud\": \"sts.amazonaws.com\",\n      \"{issuer}:sub\": \"system:serviceaccount:{ns}:{sa}\"\n    }}}}\n  }}]\n}}\n"
        )
    };
    let provider_arn = format!("arn:aws:iam::{account}:oidc-provider/{issuer}");
    for kind in &kinds {
        match kind {
            CredentialFailure::NoCredentials => {
                let account_object = facts.service_accounts.iter().find(|a| a.meta.name == sa);
                if let Some(obj) = account_object.filter(|a| a.role_arn().is_none()) {
                    parts.push(format!(
                        "service account {}/{} has no eks.amazonaws.com/role-arn annotation",
                        obj.meta.namespace.as_deref().unwrap_or(&ns),
                        obj.meta.name
                    ));
                }
                let token_missing = hits
                    .iter()
                    .any(|m| contains_any(&m.text, &["eks.amazonaws.com/serviceaccount/token"]));
                if token_missing {
                    parts.push(format!(
                        "the IRSA web identity token file (/var/run/secrets/eks.amazonaws.com/serviceaccount/token) is not in the pod: AWS_ROLE_ARN is set but the token volume is not mounted, so service account {ns}/{sa} is not wired to its IAM role (the pod predates the annotation, or the EKS pod identity webhook did not mutate it)"
                    ));
                } else {
                    parts.push(format!(
                        "the SDK's credential chain found no credentials at all (NoCredentialProviders / no EC2 IMDS role found): service account {ns}/{sa} is not wired to an IAM role (no eks.amazonaws.com/role-arn annotation{})",
                        if pod_identity { ", or no EKS Pod Identity association" } else { "" }
                    ));
                }
                steps.push(Remediation::command(
                    format!("Check the IRSA annotation of service account {ns}/{sa} (empty output: not set), and set it:"),
                    format!(
                        "kubectl get serviceaccount {sa} -n {ns} -o jsonpath='{{.metadata.annotations.eks\\.amazonaws\\.com/role-arn}}'\nkubectl annotate serviceaccount {sa} -n {ns} eks.amazonaws.com/role-arn=arn:aws:iam::{account}:role/{role} --overwrite"
                    ),
                ));
                steps.extend(pod_identity.then(|| Remediation::command(
                    "Or, with EKS Pod Identity (the eks-pod-identity-agent add-on installed), associate the role with the service account:",
                    format!(
                        "aws eks list-pod-identity-associations --cluster-name {cluster} --namespace {ns}\naws eks create-pod-identity-association --cluster-name {cluster} --namespace {ns} --service-account {sa} --role-arn arn:aws:iam::{account}:role/{role}"
                    ),
                )));
            }
            CredentialFailure::WebIdentityRefused
                if hits
                    .iter()
                    .any(|m| contains_any(&m.text, &["incorrect token audience"])) =>
            {
                parts.push(format!(
                    "STS refuses the controller's web identity token (InvalidIdentityToken: Incorrect token audience): the cluster's IAM OIDC provider {issuer} does not list the audience sts.amazonaws.com"
                ));
                steps.push(Remediation::command(
                    "Add sts.amazonaws.com to the OIDC provider's audiences (client IDs):",
                    format!(
                        "aws iam get-open-id-connect-provider --open-id-connect-provider-arn {provider_arn} --query ClientIDList\naws iam add-client-id-to-open-id-connect-provider --open-id-connect-provider-arn {provider_arn} --client-id sts.amazonaws.com"
                    ),
                ));
            }
            CredentialFailure::WebIdentityRefused
                if hits
                    .iter()
                    .any(|m| contains_any(&m.text, &["retrieve verification key"])) =>
            {
                parts.push(format!(
                    "STS cannot fetch the signing keys of the identity provider that issued the controller's token (InvalidIdentityToken: Couldn't retrieve verification key from your identity provider): the IAM OIDC provider's URL does not match the cluster's issuer {issuer}, or the issuer's keys are not publicly reachable (a self-managed issuer)"
                ));
                steps.push(Remediation::command(
                    format!("Compare the OIDC providers registered in IAM with the cluster's issuer ({cluster}); register the issuer when it is missing:"),
                    format!(
                        "aws iam list-open-id-connect-providers\naws eks describe-cluster --name {cluster} --query cluster.identity.oidc.issuer --output text\neksctl utils associate-iam-oidc-provider --cluster {cluster} --region {region} --approve"
                    ),
                ));
            }
            CredentialFailure::WebIdentityRefused => {
                parts.push(format!(
                    "STS refuses the controller's web identity (AccessDenied on sts:AssumeRoleWithWebIdentity): the trust policy of role {role} does not accept the cluster's OIDC provider, the subject system:serviceaccount:{ns}:{sa} or the audience sts.amazonaws.com"
                ));
            }
            CredentialFailure::NoOidcProvider => {
                parts.push(format!(
                    "the cluster's OIDC issuer {issuer} is not registered as an IAM OIDC provider (InvalidIdentityToken)"
                ));
                steps.push(Remediation::command(
                    "Register the cluster's OIDC issuer as an IAM identity provider:",
                    format!("eksctl utils associate-iam-oidc-provider --cluster {cluster} --region {region} --approve"),
                ));
            }
            CredentialFailure::AssumeRoleRefused => {
                let (caller, target) = chain_roles(&hits);
                parts.push(format!(
                    "role chaining is refused: {} may not assume {} (sts:AssumeRole), the target role's trust policy does not allow the caller",
                    caller.as_deref().unwrap_or("the caller"),
                    target.as_deref().unwrap_or("the target role")
                ));
                let caller_arn = caller
                    .as_deref()
                    .map(|c| format!("arn:aws:iam::{account}:role/{c}"))
                    .unwrap_or_else(|| "<caller-role-arn>".to_string());
                let target = target.unwrap_or_else(|| "<target-role>".to_string());
                steps.push(Remediation::yaml(
                    format!("Allow the caller in the trust policy of {target} (`aws iam update-assume-role-policy --role-name {target} --policy-document file://trust.json`), trust.json:"),
                    format!(
                        "{{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{{\n    \"Effect\": \"Allow\",\n    \"Principal\": {{\"AWS\": \"{caller_arn}\"}},\n    \"Action\": \"sts:AssumeRole\"\n  }}]\n}}\n"
                    ),
                ));
            }
            CredentialFailure::PodIdentityAgentUnreachable => {
                parts.push(
                    "the EKS Pod Identity agent on the node (169.254.170.23) does not answer, so the SDK gets no credentials: the eks-pod-identity-agent add-on is missing, not yet running on the node, or blocked".to_string(),
                );
                steps.push(Remediation::command(
                    "Check the Pod Identity agent: it must run on the node Karpenter's pod is on (a DaemonSet in kube-system, from the eks-pod-identity-agent add-on); install the add-on when it is missing:",
                    format!(
                        "kubectl get daemonset eks-pod-identity-agent -n kube-system -o wide
aws eks describe-addon --cluster-name {cluster} --addon-name eks-pod-identity-agent --query addon.status
aws eks create-addon --cluster-name {cluster} --addon-name eks-pod-identity-agent"
                    ),
                ));
            }
            CredentialFailure::PodIdentityRefused => {
                parts.push(format!(
                    "EKS Pod Identity refuses the association of service account {ns}/{sa}: EKS may not assume role {role}, whose trust policy must allow the principal pods.eks.amazonaws.com to sts:AssumeRole and sts:TagSession"
                ));
                steps.push(Remediation::command(
                    format!("Check the association and the role it names ({cluster}):"),
                    format!(
                        "aws eks list-pod-identity-associations --cluster-name {cluster} --namespace {ns} --service-account {sa}
aws iam get-role --role-name {role} --query Role.AssumeRolePolicyDocument"
                    ),
                ));
                steps.push(Remediation::yaml(
                    format!("The trust policy role {role} needs for Pod Identity (`aws iam update-assume-role-policy --role-name {role} --policy-document file://trust.json`), trust.json:"),
                    "{\n  \"Version\": \"2012-10-17\",\n  \"Statement\": [{\n    \"Effect\": \"Allow\",\n    \"Principal\": {\"Service\": \"pods.eks.amazonaws.com\"},\n    \"Action\": [\"sts:AssumeRole\", \"sts:TagSession\"]\n  }]\n}\n",
                ));
            }
            CredentialFailure::StsRegionDisabled => {
                parts.push(format!(
                    "STS is not activated in region {region} for account {account} (RegionDisabledException), so the regional endpoint refuses the token exchange"
                ));
                steps.push(Remediation::text(format!(
                    "Activate STS in {region}: IAM console, Account settings, Security Token Service (STS) endpoints, Activate for {region}. The SDK uses the regional STS endpoint of the controller's region."
                )));
            }
            CredentialFailure::TokenExpired => {
                parts.push(
                    "STS finds the controller's web identity token expired (ExpiredTokenException): the kubelet did not refresh the projected service-account token, or the node's clock is off".to_string(),
                );
                steps.push(Remediation::command(
                    "Restart the controller pods for a fresh token, and check the clock of their node (chronyd) if it comes back:",
                    format!(
                        "kubectl get pods -n {ns} -l app.kubernetes.io/name=karpenter -o wide\nkubectl delete pods -n {ns} -l app.kubernetes.io/name=karpenter"
                    ),
                ));
            }
            CredentialFailure::CredentialsInvalid => {
                let opt_in = if region.starts_with('<') {
                    "an opt-in region (ap-east-1, me-south-1, af-south-1, ...)".to_string()
                } else {
                    format!("an opt-in region such as {region}")
                };
                parts.push(format!(
                    "AWS does not recognise the credentials the controller signs with (AuthFailure / InvalidClientTokenId): static AWS_ACCESS_KEY_ID keys that were deactivated or deleted, or a session token from the global STS endpoint (sts.amazonaws.com), which is not valid in {opt_in}"
                ));
                steps.push(Remediation::command(
                    "Look for static keys in the controller's environment (they win over IRSA and Pod Identity) and for the regional-endpoint setting IRSA needs in opt-in regions:",
                    format!(
                        "kubectl get deployment karpenter -n {ns} -o jsonpath='{{range .spec.template.spec.containers[*].env[*]}}{{.name}}={{.value}}{{\"\\n\"}}{{end}}' | grep -E 'AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|STS_REGIONAL_ENDPOINTS|ROLE_ARN|REGION)'"
                    ),
                ));
                steps.push(Remediation::command(
                    "Remove static keys (a Secret or env), and make the SDK use the regional STS endpoint:",
                    format!(
                        "kubectl set env deployment/karpenter -n {ns} AWS_ACCESS_KEY_ID- AWS_SECRET_ACCESS_KEY- AWS_STS_REGIONAL_ENDPOINTS=regional"
                    ),
                ));
            }
            CredentialFailure::StsUnreachable => {}
        }
    }
    if kinds.iter().any(|k| {
        matches!(
            k,
            CredentialFailure::WebIdentityRefused | CredentialFailure::NoOidcProvider
        )
    }) {
        steps.push(Remediation::command(
            format!("Compare the role's trust policy with the cluster's issuer ({cluster}):"),
            format!(
                "aws eks describe-cluster --name {cluster} --query cluster.identity.oidc.issuer --output text\naws iam get-role --role-name {role} --query Role.AssumeRolePolicyDocument"
            ),
        ));
        steps.push(Remediation::yaml(
            format!("The trust policy role {role} needs (`aws iam update-assume-role-policy --role-name {role} --policy-document file://trust.json`), trust.json:"),
            trust_policy(&provider_arn),
        ));
    }
    steps.push(Remediation::command(
        "Restart the controller so it picks up the credentials:",
        format!("kubectl rollout restart deployment/karpenter -n {ns}"),
    ));
    let mut summary = format!(
        "The Karpenter controller gets no AWS credentials: {}, so every AWS call fails",
        parts.join("; ")
    );
    if let Some(check) = at_start {
        summary.push_str(&format!(" and the controller exits at start-up ({check})"));
    }
    summary.push('.');
    vec![Diagnosis::new(&META, summary)
        .with_messages(hits.iter().copied())
        .with_remediation(steps)]
}

/// Karpenter's service account: its pods' `serviceAccountName`, else the chart default.
fn service_account(facts: &Facts) -> String {
    facts
        .pods
        .iter()
        .filter(|p| p.meta.name.starts_with("karpenter-"))
        .find_map(|p| p.service_account.clone())
        .unwrap_or_else(|| "karpenter".to_string())
}

/// The controller's role: the service account's IRSA annotation, IRSA's injected
/// `AWS_ROLE_ARN`, or a role ARN in the messages.
fn controller_role(facts: &Facts, hits: &[&Message]) -> Option<String> {
    let sa = service_account(facts);
    let annotated = facts
        .service_accounts
        .iter()
        .filter(|a| a.meta.name == sa)
        .find_map(|a| a.role_arn().and_then(role_name));
    annotated
        .or_else(|| controller_role_from_env(facts))
        .or_else(|| {
            hits.iter().find_map(|m| {
                let i = m.text.find(":role/")?;
                let start = m.text[..i].rfind("arn:aws")?;
                let arn: String = m.text[start..]
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\\' && *c != ',')
                    .collect();
                role_name(&arn)
            })
        })
}

/// `oidc.eks.<region>.amazonaws.com/id/<ID>` quoted in a message.
fn oidc_issuer(text: &str) -> Option<String> {
    let i = find_ignore_ascii_case(text, "oidc.eks.")?;
    let issuer: String = text[i..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-'))
        .collect();
    issuer.contains("/id/").then_some(issuer)
}

/// Caller and target role names of a refused `sts:AssumeRole`.
fn chain_roles(hits: &[&Message]) -> (Option<String>, Option<String>) {
    let m = hits
        .iter()
        .find(|m| contains_any(&m.text, &["is not authorized to perform: sts:assumerole"]));
    let Some(m) = m else {
        return (None, None);
    };
    (
        principal(&m.text).and_then(|p| role_name(&p)),
        resource(&m.text).and_then(|r| role_name(&r)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_only, ids};

    #[test]
    fn every_variant() {
        for text in [
            r#"{"level":"ERROR","time":"2024-09-06T16:17:07.120Z","logger":"controller","message":"ec2 api connectivity check failed","commit":"62a726c","error":"NoCredentialProviders: no valid providers in chain. Deprecated.\n\tFor verbose messaging see aws.Config.CredentialsChainVerboseErrors"}"#,
            "WebIdentityErr: failed to retrieve credentials caused by: AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity\tstatus code: 403, request id: 1",
            "operation error EC2: DescribeInstanceTypes, get identity: get credentials: failed to refresh cached credentials, failed to retrieve credentials, operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode: 403, RequestID: 7f, api error AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity",
            "operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode: 400, RequestID: 1, InvalidIdentityToken: No OpenIDConnect provider found in your account for https://oidc.eks.eu-west-1.amazonaws.com/id/0123456789ABCDEF",
            "get identity: get credentials: failed to refresh cached credentials, no EC2 IMDS role found, operation error ec2imds: GetMetadata, request canceled, context deadline exceeded",
            "User: arn:aws:sts::111122223333:assumed-role/KarpenterController/1 is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::444455556666:role/KarpenterCrossAccount",
        ] {
            assert_eq!(ids(&check_only("KW103", text)), ["KW103"], "{text}");
        }
    }

    #[test]
    fn no_credentials_points_at_the_annotation() {
        let mut facts = Facts::default();
        facts.messages.push(Message {
            text: "ec2 api connectivity check failed: NoCredentialProviders: no valid providers in chain. Deprecated.".into(),
            ..Default::default()
        });
        facts.karpenter_namespace = Some("kube-system".into());
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains("service account kube-system/karpenter"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("exits at start-up"), "{}", d.summary);
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("kubectl get serviceaccount karpenter -n kube-system"));
    }

    #[test]
    fn service_account_without_annotation_is_named() {
        use crate::facts::{Meta, ServiceAccount};
        let mut facts = Facts::default();
        facts.messages.push(Message {
            text: "ec2 api connectivity check failed: NoCredentialProviders: no valid providers in chain".into(),
            ..Default::default()
        });
        facts.service_accounts.push(ServiceAccount {
            meta: Meta {
                name: "karpenter".into(),
                namespace: Some("karpenter".into()),
                ..Default::default()
            },
        });
        facts.karpenter_namespace = Some("karpenter".into());
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains(
                "service account karpenter/karpenter has no eks.amazonaws.com/role-arn annotation"
            ),
            "{}",
            d.summary
        );
    }

    #[test]
    fn trust_policy_is_filled_in() {
        let report = check_only(
            "KW103",
            "InvalidIdentityToken: No OpenIDConnect provider found in your account for https://oidc.eks.eu-west-1.amazonaws.com/id/0123456789ABCDEF",
        );
        let d = &report.diagnoses[0];
        let yaml = d
            .remediation
            .iter()
            .find_map(|r| r.yaml.as_deref())
            .unwrap();
        assert!(
            yaml.contains("oidc.eks.eu-west-1.amazonaws.com/id/0123456789ABCDEF:sub"),
            "{yaml}"
        );
        assert!(
            yaml.contains("system:serviceaccount:<karpenter-namespace>:karpenter"),
            "{yaml}"
        );
    }

    #[test]
    fn role_chaining_names_both_roles() {
        let report = check_only(
            "KW103",
            "User: arn:aws:sts::111122223333:assumed-role/KarpenterController/1 is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::444455556666:role/KarpenterCrossAccount",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("KarpenterController may not assume KarpenterCrossAccount"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn unrecognized_client_outside_the_pricing_call_is_refused_credentials() {
        for text in [
            "operation error EC2: DescribeInstanceTypes, https response error StatusCode: 400, RequestID: 1, api error UnrecognizedClientException: The security token included in the request is invalid.",
            "operation error SSM: GetParameter, https response error StatusCode: 400, RequestID: 1, api error InvalidClientTokenId: The security token included in the request is invalid.",
        ] {
            assert_eq!(ids(&check_only("KW103", text)), ["KW103"], "{text}");
        }
    }

    #[test]
    fn pricing_call_refused_by_a_partition_without_price_list_is_not_credentials() {
        let govcloud = "updating pricing, retreiving on-demand pricing data, operation error Pricing: GetProducts, https response error StatusCode: 400, RequestID: 1, api error UnrecognizedClientException: The security token included in the request is invalid.";
        assert!(ids(&check_only("KW103", govcloud)).is_empty());
        assert_eq!(ids(&check_only("KW504", govcloud)), ["KW504"]);
        // The pricing controller named only by the log's controller field.
        let mut facts = Facts::default();
        facts.messages.push(Message {
            text: "Reconciler error: UnrecognizedClientException: The security token included in the request is invalid.".into(),
            component: Some("providers.pricing".into()),
            ..Default::default()
        });
        assert!(check(&facts).is_empty());
        // STS refusing the web identity is a credential failure whichever controller asked.
        let sts = "updating pricing, retreiving on-demand pricing data, operation error Pricing: GetProducts, get identity: get credentials: failed to refresh cached credentials, failed to retrieve credentials, operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode: 403, RequestID: 7f, api error AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity";
        assert_eq!(ids(&check_only("KW103", sts)), ["KW103"]);
    }

    #[test]
    fn near_misses() {
        for text in [
            r#"Checking EC2 API connectivity, WebIdentityErr: failed to retrieve credentials\ncaused by: RequestError: send request failed\ncaused by: Post "https://sts.us-east-1.amazonaws.com/": dial tcp: lookup sts.us-east-1.amazonaws.com: i/o timeout"#,
            "AccessDeniedException: User: arn:aws:sts::111122223333:assumed-role/KarpenterController/1677 is not authorized to perform: pricing:GetProducts with an explicit deny in a service control policy",
            "UnauthorizedOperation: You are not authorized to perform this operation.",
        ] {
            assert!(ids(&check_only("KW103", text)).is_empty(), "{text}");
        }
    }
}
