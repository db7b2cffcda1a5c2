//! KW102 sts-unreachable.

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, MessageOrigin, Pod};
use crate::rules::kw1xx::credentials::{
    credential_failure, from_other_component, CredentialFailure, NETWORK_MARKERS, STS_MARKERS,
};
use crate::rules::text::{
    aws_region, contains_any, karpenter_namespace_or_placeholder, region_in_text,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW102",
    slug: "sts-unreachable",
    title: "The Karpenter controller cannot reach AWS STS (or the EC2 API) for its credentials",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The controller exchanges its service-account token for AWS credentials at AWS STS
(`AssumeRoleWithWebIdentity`) and gets no answer, so every AWS call fails. At start-up Karpenter
checks EC2 connectivity and exits when it fails, so its pods crash-loop.

Signals: SDK v1 `WebIdentityErr: failed to retrieve credentials` ... `caused by: RequestError:
send request failed` ... `Post "https://sts.<region>.amazonaws.com/": dial tcp: lookup
sts.<region>.amazonaws.com: i/o timeout`; SDK v2 (Karpenter v1.1+) `get identity: get
credentials: failed to refresh cached credentials, failed to retrieve credentials, operation
error STS: AssumeRoleWithWebIdentity, ... request send failed, Post ... dial tcp ...: i/o
timeout`; usually inside `ec2 api connectivity check failed` (v0.3x: `Checking EC2 API
connectivity, ...`).

## Why it happens
Most often DNS: the Karpenter chart's default `dnsPolicy: ClusterFirst` sends lookups to
CoreDNS, and on a fresh cluster CoreDNS is Pending because there is no node yet, and the node
would come from Karpenter: chicken and egg. Otherwise the network path: private subnets without
a NAT gateway or an STS VPC endpoint, or a security group or proxy in the way (`proxyconnect
tcp: dial tcp <proxy>`: the HTTPS proxy the controller is configured with does not answer).
`no such host` is different: a resolver answered that the name does not exist, so DNS runs and
something shadows the name (a Route 53 private hosted zone associated with the VPC, a Resolver
forwarding rule, a custom CoreDNS forward); the report then points there, not at dnsPolicy.
When a later log line shows the controller reaching AWS again (a launch, a subnet or AMI
discovery; by time, or by position when a line has no time, like a panic), the outage was
transient and the diagnosis is a warning.

## How to fix
Let Karpenter resolve through the VPC resolver: `helm upgrade --install karpenter ... --set
dnsPolicy=Default`; or give CoreDNS capacity that does not depend on Karpenter (a small managed
node group or a Fargate profile). Without internet egress, create the interface endpoint
`com.amazonaws.<region>.sts` with private DNS.

The same start-up check failing on the EC2 endpoint itself (`ec2 api connectivity check
failed` ... `Post "https://ec2.<region>.amazonaws.com/": dial tcp: lookup ec2.<region>...: i/o
timeout`, no STS error: the credentials came from EKS Pod Identity) has the same causes and
fixes, with the endpoint `com.amazonaws.<region>.ec2`.
"#,
};

const SIGNALS: &[&str] = &[
    "webidentityerr",
    "assumerolewithwebidentity",
    "operation error sts",
    "https://sts.",
    "lookup sts.",
    "ec2 api connectivity check failed",
    "checking ec2 api connectivity",
];

/// The start-up connectivity check failing on the EC2 endpoint itself, with credentials
/// already in hand (EKS Pod Identity, or no STS call yet): the same DNS or network path
/// problem as STS, one endpoint further.
fn ec2_unreachable_at_start(text: &str) -> bool {
    contains_any(
        text,
        &[
            "ec2 api connectivity check failed",
            "checking ec2 api connectivity",
        ],
    ) && contains_any(text, NETWORK_MARKERS)
        && !contains_any(text, STS_MARKERS)
        && credential_failure(text).is_none()
}

/// The AWS endpoint a request went to: `lookup <host>` or `https://<host>/`.
fn endpoint_host(text: &str) -> Option<String> {
    ["lookup ", "https://"].iter().find_map(|marker| {
        let i = find_ignore_ascii_case(text, marker)?;
        let host: String = text[i + marker.len()..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
            .collect();
        host.ends_with(".amazonaws.com").then_some(host)
    })
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<&Message> = facts
        .messages
        .iter()
        .filter(|m| {
            credential_failure(&m.text) == Some(CredentialFailure::StsUnreachable)
                || ec2_unreachable_at_start(&m.text)
        })
        .filter(|m| !from_other_component(facts, m))
        .collect();
    if hits.is_empty() {
        return Vec::new();
    }
    // STS when any text shows the token exchange failing; else the EC2 endpoint.
    let sts = hits.iter().any(|m| !ec2_unreachable_at_start(&m.text));
    let service = if sts { "sts" } else { "ec2" };
    let text_of = |needles: &[&str]| hits.iter().any(|m| contains_any(&m.text, needles));
    // `proxyconnect tcp: dial tcp 10.0.0.10:3128: ...`: the request went to an HTTPS proxy
    // (HTTPS_PROXY on the controller), and the proxy is what does not answer.
    let proxy = hits.iter().find_map(|m| proxy_address(&m.text));
    let dns_failure = proxy.is_none() && text_of(&["lookup sts", "lookup ec2", "no such host"]);
    // `no such host`: a resolver answered that the name does not exist, so DNS runs (a dead
    // CoreDNS gives `i/o timeout` or `connection refused`); the name is shadowed somewhere.
    let nxdomain = dns_failure && text_of(&["no such host"]);
    let dialled_ip = proxy.is_none() && hits.iter().any(|m| dialled_an_ip(&m.text));
    let at_start = text_of(&[
        "ec2 api connectivity check failed",
        "checking ec2 api connectivity",
    ]);
    let region = hits
        .iter()
        .find_map(|m| {
            if sts {
                sts_region(&m.text)
            } else {
                endpoint_host(&m.text).and_then(|h| region_in_text(&h))
            }
        })
        .or_else(|| aws_region(facts))
        .unwrap_or_else(|| "<region>".to_string());
    let ns = karpenter_namespace_or_placeholder(facts);
    // `https://sts.amazonaws.com/`: the SDK called the global endpoint (aws-sdk-go v1's legacy
    // default when AWS_STS_REGIONAL_ENDPOINTS is unset). An STS interface VPC endpoint with
    // private DNS answers only the regional name, so it does not help until the controller
    // uses the regional endpoint.
    let global_sts = sts
        && hits
            .iter()
            .any(|m| endpoint_host(&m.text).as_deref() == Some("sts.amazonaws.com"));

    let dns_policy = karpenter_dns_policy(facts);
    let cluster_first = dns_policy.as_deref().is_none_or(|p| p == "ClusterFirst");
    let coredns: Vec<&Pod> = facts.pods.iter().filter(|p| is_coredns(p)).collect();
    let coredns_down: Vec<String> = coredns
        .iter()
        .filter(|p| p.phase.as_deref() != Some("Running"))
        .map(|p| {
            format!(
                "{} {}",
                p.meta.name,
                p.phase.as_deref().unwrap_or("not running")
            )
        })
        .collect();

    let mut summary = if sts {
        let host = if global_sts {
            "sts.amazonaws.com, the global endpoint".to_string()
        } else {
            format!("sts.{region}.amazonaws.com")
        };
        format!(
            "The Karpenter controller cannot reach AWS STS ({host}) to exchange its service-account token for credentials"
        )
    } else {
        let host = hits
            .iter()
            .find_map(|m| endpoint_host(&m.text))
            .unwrap_or_else(|| format!("ec2.{region}.amazonaws.com"));
        format!(
            "The Karpenter controller cannot reach the AWS EC2 API ({host}); it has credentials (no STS error){}",
            if proxy.is_none() {
                ", the endpoint itself does not answer"
            } else {
                ""
            }
        )
    };
    let endpoint = if sts { "STS" } else { "EC2" };
    summary.push_str(&if let Some(addr) = &proxy {
        format!(
            ": the HTTPS proxy {addr} the controller sends its requests through does not answer"
        )
    } else if nxdomain {
        format!(": the DNS server answers that the {endpoint} endpoint's name does not exist (no such host)")
    } else if dns_failure {
        format!(": the DNS lookup of the {endpoint} endpoint fails")
    } else if dialled_ip {
        format!(": the connection to the {endpoint} endpoint times out")
    } else {
        ": the request gets no answer".to_string()
    });
    let recovered = recovered_after(facts, &hits);
    let crashing: Vec<String> = facts
        .pods
        .iter()
        .filter(|p| p.meta.name.starts_with("karpenter-"))
        .filter(|p| {
            p.containers
                .iter()
                .any(|c| c.reason.as_deref() == Some("CrashLoopBackOff"))
        })
        .map(|p| p.object_ref().qualified_name())
        .collect();
    if at_start {
        // v0.3x and earlier word the check `Checking EC2 API connectivity, <error>`.
        let check = if text_of(&["ec2 api connectivity check failed"]) {
            "ec2 api connectivity check failed"
        } else {
            "Checking EC2 API connectivity"
        };
        if recovered.is_some() {
            summary.push_str(&format!(
                ", so AWS calls failed for a while and the controller exited at start-up ({check})"
            ));
        } else {
            summary.push_str(&format!(
                ", so every AWS call fails and the controller exits at start-up ({check})"
            ));
            if crashing.is_empty() {
                summary.push_str(", its pods crash-looping");
            }
        }
    } else if recovered.is_some() {
        summary.push_str(", so AWS calls failed for a while");
    } else {
        summary.push_str(", so every AWS call fails");
    }
    if let Some(m) = recovered {
        summary.push_str(&format!(
            "; it recovered: later the controller reached AWS again (`{}`, line {}), so this was transient",
            m.text.split(':').next().unwrap_or(&m.text),
            m.evidence.line
        ));
    }
    if !crashing.is_empty() {
        summary.push_str(&format!(
            "; pod{} {} in CrashLoopBackOff",
            if crashing.len() == 1 { "" } else { "s" },
            crashing.join(", ")
        ));
    }
    summary.push('.');
    if nxdomain {
        summary.push_str(&format!(" DNS is running, so something in its path does not know the name: a Route 53 private hosted zone for amazonaws.com or {service}.{region}.amazonaws.com associated with the VPC without this record (often left by a VPC endpoint of another VPC), a Route 53 Resolver forwarding rule, or a custom CoreDNS forward or stub zone."));
    } else if proxy.is_none() && (dns_failure || !dialled_ip) {
        let policy = match &dns_policy {
            Some(p) => format!("dnsPolicy: {p}"),
            None => "the chart's default dnsPolicy: ClusterFirst".to_string(),
        };
        if cluster_first {
            summary.push_str(&format!(
                " With {policy} Karpenter resolves through cluster DNS (CoreDNS)"
            ));
            if coredns_down.is_empty() {
                summary.push_str(", which on a fresh cluster is not running yet: CoreDNS waits for a node, and the node would come from Karpenter.");
            } else {
                summary.push_str(&format!(
                    ", and CoreDNS is not running ({}): it waits for a node that Karpenter cannot launch.",
                    coredns_down.join(", ")
                ));
            }
        }
    }
    if dialled_ip {
        summary.push_str(&format!(" The name resolved but the connection timed out: no route from the controller's subnet to {endpoint} (no NAT gateway or {endpoint} VPC endpoint, or a security group or proxy in the way)."));
    }

    let mut steps: Vec<Remediation> = Vec::new();
    if let Some(addr) = &proxy {
        summary.push_str(&format!(
            " Check that the proxy at {addr} runs and accepts the controller's subnet, or let AWS endpoints bypass it."
        ));
        steps.push(Remediation::command(
            format!("See the proxy settings of the controller (HTTPS_PROXY / NO_PROXY, helm values `controller.env`); the proxy at {addr} must answer, or NO_PROXY must list the AWS endpoints reached through VPC endpoints (and the cluster's service CIDR):"),
            format!(
                "kubectl set env deployment/karpenter -n {ns} --list | grep -i proxy\nkubectl set env deployment/karpenter -n {ns} NO_PROXY=169.254.169.254,.svc,.cluster.local,{service}.{region}.amazonaws.com"
            ),
        ));
    }
    if nxdomain {
        steps.push(Remediation::command(
            "Find what answers for the name: the private hosted zones of the cluster VPC, and CoreDNS's forwarding configuration:",
            format!(
                "aws route53 list-hosted-zones-by-vpc --vpc-id <vpc-id> --vpc-region {region} --query 'HostedZoneSummaries[].[Name,HostedZoneId]' --output table\nkubectl get configmap coredns -n kube-system -o jsonpath='{{.data.Corefile}}'"
            ),
        ));
    } else if proxy.is_none() && (dns_failure || !dialled_ip) && cluster_first {
        steps.push(Remediation::command(
            "Let Karpenter resolve through the VPC resolver instead of CoreDNS (the chart value dnsPolicy):",
            format!(
                "helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter -n {ns} --reuse-values --set dnsPolicy=Default"
            ),
        ));
        steps.push(Remediation::command(
            "Or give CoreDNS capacity that does not depend on Karpenter (a small managed node group, or a Fargate profile for kube-system with k8s-app=kube-dns); check where it stands:",
            "kubectl get pods -n kube-system -l k8s-app=kube-dns -o wide",
        ));
    }
    if global_sts {
        summary.push_str(&format!(" The controller calls the global STS endpoint sts.amazonaws.com, not sts.{region}.amazonaws.com: an STS VPC endpoint only answers the regional name, and the global one is reached over the internet."));
        steps.push(Remediation::command(
            format!("Make the controller use the regional STS endpoint (helm values `controller.env`: AWS_STS_REGIONAL_ENDPOINTS=regional, AWS_REGION={region}; `kubectl set env` lasts until the next helm upgrade):"),
            format!(
                "kubectl set env deployment/karpenter -n {ns} AWS_STS_REGIONAL_ENDPOINTS=regional AWS_REGION={region}"
            ),
        ));
    }
    steps.push(Remediation::command(
        format!("Without internet egress from the controller's subnets, create the {endpoint} interface endpoint (private DNS on) in the cluster VPC:"),
        format!(
            "aws ec2 create-vpc-endpoint --region {region} --vpc-id <vpc-id> --vpc-endpoint-type Interface --service-name com.amazonaws.{region}.{service} --subnet-ids <subnet-ids> --security-group-ids <sg-allowing-443-from-nodes> --private-dns-enabled"
        ),
    ));
    steps.push(Remediation::command(
        "Then restart the controller and watch it start:",
        format!(
            "kubectl rollout restart deployment/karpenter -n {ns}\nkubectl logs -n {ns} -l app.kubernetes.io/name=karpenter -f"
        ),
    ));
    let mut related: Vec<&'static str> = Vec::new();
    if contains_ignore_ascii_case(&summary, "fresh cluster") || !coredns_down.is_empty() {
        related.push("KW200");
    }
    let severity = if recovered.is_some() {
        summary = summary.replacen("cannot reach", "could not reach", 1);
        Severity::Warning
    } else {
        Severity::Error
    };
    vec![Diagnosis::new(&META, summary)
        .with_severity(severity)
        .with_messages(hits.iter().copied())
        .with_remediation(steps)
        .with_related(&related)]
}

/// A Karpenter log line, later than every failure, that only a controller with working AWS
/// credentials and connectivity writes (a launch, a discovery): the outage was transient.
fn recovered_after<'a>(facts: &'a Facts, hits: &[&Message]) -> Option<&'a Message> {
    let after_every_failure = |m: &Message| crate::rules::time::later_than_all(m, hits);
    facts.messages.iter().find(|m| {
        m.origin == MessageOrigin::KarpenterLog
            && contains_any(
                &m.text,
                &[
                    "launched nodeclaim",
                    "launched machine",
                    "launched instance",
                    "discovered subnets",
                    "discovered security groups",
                    "discovered amis",
                    "created launch template",
                ],
            )
            && after_every_failure(m)
    })
}

/// The proxy address of `proxyconnect tcp: dial tcp 10.0.0.10:3128: connect: connection refused`.
fn proxy_address(text: &str) -> Option<String> {
    let i = find_ignore_ascii_case(text, "proxyconnect tcp: dial tcp ")?;
    let addr: String = text[i + "proxyconnect tcp: dial tcp ".len()..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '[' | ']' | '-'))
        .collect();
    let addr = addr.trim_end_matches(':').to_string();
    (!addr.is_empty()).then_some(addr)
}

/// `dial tcp 52.94.0.1:443: i/o timeout`: the name resolved, the connection did not.
fn dialled_an_ip(text: &str) -> bool {
    let Some(i) = find_ignore_ascii_case(text, "dial tcp ") else {
        return false;
    };
    text[i + "dial tcp ".len()..].starts_with(|c: char| c.is_ascii_digit() || c == '[')
}

fn sts_region(text: &str) -> Option<String> {
    let i = find_ignore_ascii_case(text, "sts.")?;
    region_in_text(&text[i..])
}

/// The Karpenter Deployment's dnsPolicy, or its pods'.
fn karpenter_dns_policy(facts: &Facts) -> Option<String> {
    facts
        .karpenter_deployment()
        .and_then(|d| d.dns_policy.clone())
        .or_else(|| {
            facts
                .pods
                .iter()
                .filter(|p| {
                    p.meta.name.starts_with("karpenter-")
                        || p.meta
                            .labels
                            .get("app.kubernetes.io/name")
                            .map(String::as_str)
                            == Some("karpenter")
                })
                .find_map(|p| p.dns_policy.clone())
        })
}

fn is_coredns(p: &Pod) -> bool {
    p.meta.name.starts_with("coredns-")
        || p.meta.labels.get("k8s-app").map(String::as_str) == Some("kube-dns")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::{Meta, Workload};
    use crate::testing::{check_only, ids};

    const V1_FATAL: &str = r#"karpenter-6d9f7c8b5-zjlwr controller {"level":"FATAL","time":"2024-03-01T16:09:11.828Z","logger":"controller","message":"Checking EC2 API connectivity, WebIdentityErr: failed to retrieve credentials\ncaused by: RequestError: send request failed\ncaused by: Post \"https://sts.us-east-1.amazonaws.com/\": dial tcp: lookup sts.us-east-1.amazonaws.com: i/o timeout","commit":"596ea97"}"#;
    const V2: &str = r#"{"level":"ERROR","time":"2025-05-14T07:01:33.412Z","logger":"controller","message":"ec2 api connectivity check failed","commit":"ad71530","error":"operation error EC2: DescribeInstanceTypes, get identity: get credentials: failed to refresh cached credentials, failed to retrieve credentials, operation error STS: AssumeRoleWithWebIdentity, exceeded maximum number of attempts, 3, https response error StatusCode: 0, RequestID: , request send failed, Post \"https://sts.us-east-1.amazonaws.com/\": dial tcp: lookup sts.us-east-1.amazonaws.com: i/o timeout"}"#;
    const CONSOLE: &str = "2022-02-10T10:33:35.421Z\tERROR\tcontroller.controller.provisioning\tReconciler error\t{\"commit\": \"2346ed5\", \"error\": \"fetching instance types using ec2.DescribeInstanceTypes, WebIdentityErr: failed to retrieve credentials\\ncaused by: RequestError: send request failed\\ncaused by: Post \\\"https://sts.eu-west-1.amazonaws.com/\\\": dial tcp: i/o timeout\"}";

    #[test]
    fn the_global_sts_endpoint_is_named_and_the_regional_switch_offered() {
        let text = r#"{"level":"ERROR","time":"2023-11-20T14:02:11.220Z","logger":"controller","message":"Checking EC2 API connectivity, WebIdentityErr: failed to retrieve credentials\ncaused by: RequestError: send request failed\ncaused by: Post \"https://sts.amazonaws.com/\": dial tcp 54.239.29.25:443: i/o timeout","commit":"e9ed8d9"}"#;
        let report = check_only("KW102", text);
        let d = &report.diagnoses[0];
        assert!(d.summary.contains("global endpoint"), "{}", d.summary);
        assert!(
            !d.summary.contains("sts.<region>.amazonaws.com)"),
            "{}",
            d.summary
        );
        assert!(
            d.remediation.iter().any(|r| r
                .command
                .as_deref()
                .is_some_and(|c| c.contains("AWS_STS_REGIONAL_ENDPOINTS=regional"))),
            "{:?}",
            d.remediation
        );
        // A regional endpoint gets no such step.
        let regional = check_only("KW102", V2);
        assert!(!regional.diagnoses[0].remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("AWS_STS_REGIONAL_ENDPOINTS"))));
    }

    #[test]
    fn a_proxy_that_does_not_answer_is_named_instead_of_dns() {
        let text = r#"{"level":"ERROR","time":"t","logger":"controller","message":"ec2 api connectivity check failed","commit":"c","error":"operation error EC2: DescribeInstanceTypes, request send failed, Post \"https://ec2.eu-north-1.amazonaws.com/\": proxyconnect tcp: dial tcp 10.64.0.10:3128: connect: connection refused"}"#;
        let report = check_only("KW102", text);
        let summary = &report.diagnoses[0].summary;
        assert!(summary.contains("HTTPS proxy 10.64.0.10:3128"), "{summary}");
        assert!(!summary.contains("CoreDNS"), "{summary}");
    }

    #[test]
    fn sdk_v1_v2_and_console() {
        for text in [V1_FATAL, V2, CONSOLE] {
            assert_eq!(ids(&check_only("KW102", text)), ["KW102"], "{text}");
        }
    }

    #[test]
    fn dns_reasoning() {
        let d = &check_only("KW102", V2).diagnoses[0];
        assert!(
            d.summary.contains("sts.us-east-1.amazonaws.com"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("DNS lookup"), "{}", d.summary);
        assert!(
            d.summary.contains("dnsPolicy: ClusterFirst"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("crash-looping"), "{}", d.summary);
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("--set dnsPolicy=Default"));
        let d = &check_only("KW102", CONSOLE).diagnoses[0];
        assert!(
            d.summary.contains("sts.eu-west-1.amazonaws.com"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn facts_name_the_policy_and_coredns() {
        let mut facts = Facts::default();
        facts.messages.push(Message {
            text: "ec2 api connectivity check failed: operation error STS: AssumeRoleWithWebIdentity, request send failed, Post \"https://sts.eu-west-1.amazonaws.com/\": dial tcp: lookup sts.eu-west-1.amazonaws.com: i/o timeout".into(),
            ..Default::default()
        });
        facts.workloads.push(Workload {
            kind: "Deployment".into(),
            meta: Meta {
                name: "karpenter".into(),
                namespace: Some("karpenter".into()),
                ..Default::default()
            },
            dns_policy: Some("ClusterFirst".into()),
            ..Default::default()
        });
        facts.pods.push(Pod {
            meta: Meta {
                name: "coredns-5d78c9869d-abcde".into(),
                namespace: Some("kube-system".into()),
                ..Default::default()
            },
            phase: Some("Pending".into()),
            ..Default::default()
        });
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains("With dnsPolicy: ClusterFirst"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("coredns-5d78c9869d-abcde Pending"),
            "{}",
            d.summary
        );
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("-n karpenter"));
        // dnsPolicy Default already: the DNS advice does not apply.
        facts.workloads[0].dns_policy = Some("Default".into());
        let d = &check(&facts)[0];
        assert!(!d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("dnsPolicy"));
    }

    #[test]
    fn near_misses() {
        for text in [
            "ec2 api connectivity check failed: NoCredentialProviders: no valid providers in chain. Deprecated.",
            "WebIdentityErr: failed to retrieve credentials\ncaused by: AccessDenied: Not authorized to perform sts:AssumeRoleWithWebIdentity\n\tstatus code: 403",
            r#"updating on-demand pricing, RequestError: send request failed caused by: Post "https://api.pricing.us-east-1.amazonaws.com/": dial tcp 52.94.231.236:443: i/o timeout"#,
        ] {
            assert!(ids(&check_only("KW102", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_timeout_followed_by_a_launch_is_transient() {
        let failure = r#"{"level":"ERROR","time":"2025-01-10T08:00:05.123Z","logger":"controller","message":"Reconciler error","controller":"nodeclass","error":"operation error EC2: DescribeSubnets, get identity: get credentials: failed to refresh cached credentials, failed to retrieve credentials, operation error STS: AssumeRoleWithWebIdentity, https response error StatusCode: 0, RequestID: , request send failed, Post \"https://sts.us-east-1.amazonaws.com/\": dial tcp 52.94.241.129:443: i/o timeout"}"#;
        let launched = r#"{"level":"INFO","time":"2025-01-10T08:01:07.000Z","logger":"controller","message":"launched nodeclaim","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-abcde"}}"#;
        let report = check_only("KW102", &format!("{failure}\n{launched}"));
        let d = &report.diagnoses[0];
        assert_eq!(d.severity, Severity::Warning);
        assert!(
            d.summary.contains("could not reach AWS STS"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("this was transient"), "{}", d.summary);
        // A launch before the failure says nothing about after it.
        let report = check_only(
            "KW102",
            &format!("{launched}\n{}", failure.replace("08:00:05", "08:02:05")),
        );
        assert_eq!(report.diagnoses[0].severity, Severity::Error);
    }
}
