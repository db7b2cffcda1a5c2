//! What the Amazon VPC CNI's own log says keeps it from starting: the `aws-node` container's
//! output (`kubectl logs aws-node-xxxxx -c aws-node`) and ipamd's file
//! (`/var/log/aws-routed-eni/ipamd.log`, in the EKS log collector's bundle). Both are zap's
//! default JSON (`"level":"error","ts":...,"caller":"ipamd/ipamd.go:444","msg":...`); before
//! v1.6 ipamd wrote `2019-08-07T02:24:04.835Z [ERROR] ...` lines.

use crate::facts::{contains_ignore_ascii_case, Facts, Message};
use crate::rules::text::contains_any;

/// Why the CNI cannot start, as its log says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CniLogCause {
    /// An EC2 call of ipamd is denied (`Failed to call ec2:DescribeNetworkInterfaces for
    /// [eni-...]: UnauthorizedOperation`): the role aws-node uses lacks AmazonEKS_CNI_Policy.
    Denied { action: Option<String> },
    /// ipamd finds no AWS credentials (`NoCredentialProviders`): IRSA not wired.
    NoCredentials,
    /// ipamd cannot reach the API server (`Unable to reach API Server`, `error communicating
    /// with apiserver ... i/o timeout`): kube-proxy is not up on the node, or the node's
    /// security groups do not let it reach the control plane.
    ApiServerUnreachable,
    /// aws-node's entrypoint waits for ipamd forever (`Retrying waiting for IPAM-D`): ipamd
    /// failed to start; its own log says why.
    IpamdNotStarting,
}

/// One line of the CNI's log that names a cause.
#[derive(Debug, Clone)]
pub struct CniLogFinding<'a> {
    pub message: &'a Message,
    pub cause: CniLogCause,
}

/// The `caller` prefixes of the VPC CNI's Go packages (aws-k8s-agent is ipamd's `main`).
const CNI_CALLERS: &[&str] = &[
    "\"caller\":\"ipamd/",
    "\"caller\":\"aws-k8s-agent/",
    "\"caller\":\"awsutils/",
    "\"caller\":\"entrypoint.sh\"",
    "\"caller\":\"datastore/",
    "\"caller\":\"eniconfig/",
    "\"caller\":\"k8sapi/",
];

/// Whether a message is a line of the VPC CNI's log: its caller is one of the CNI's packages,
/// or its text is one only ipamd writes.
pub fn is_cni_line(m: &Message) -> bool {
    let raw = &m.evidence.text;
    contains_any(raw, CNI_CALLERS)
        || contains_any(&m.text, &["L-IPAMD", "IPAM-D", "Failed to call ec2:"])
        || contains_ignore_ascii_case(&m.evidence.source, "aws-routed-eni")
        || contains_ignore_ascii_case(&m.evidence.source, "ipamd")
        || contains_ignore_ascii_case(&m.evidence.source, "aws-node")
}

fn cause_of(text: &str) -> Option<CniLogCause> {
    // Denied while starting (describing its own ENIs, initializing). A denial to grow the pool
    // (`Failed to increase pool size ... AttachNetworkInterface`) comes from a running ipamd:
    // the node works, new pods may wait for an IP.
    let starting = contains_any(
        text,
        &[
            "Failed to call ec2:Describe",
            "Initialization failure",
            "ipamd init",
            "failed to retrieve attached ENIs",
        ],
    );
    if starting
        && contains_any(
            text,
            &[
                "UnauthorizedOperation",
                "AccessDenied",
                "is not authorized to perform",
            ],
        )
    {
        let action = text
            .find("ec2:")
            .map(|at| {
                text[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == ':')
                    .collect::<String>()
            })
            .filter(|a| a.len() > "ec2:".len());
        return Some(CniLogCause::Denied { action });
    }
    if contains_any(text, &["NoCredentialProviders"]) {
        return Some(CniLogCause::NoCredentials);
    }
    if contains_any(
        text,
        &[
            "Unable to reach API Server",
            "error communicating with apiserver",
            "Failed to communicate with K8S Server",
        ],
    ) {
        return Some(CniLogCause::ApiServerUnreachable);
    }
    if contains_any(text, &["Retrying waiting for IPAM-D"]) {
        return Some(CniLogCause::IpamdNotStarting);
    }
    None
}

/// Every line of the CNI's log in the input that names a cause, in input order.
pub fn cni_log_findings(facts: &Facts) -> Vec<CniLogFinding<'_>> {
    facts
        .messages
        .iter()
        .filter_map(|m| {
            let cause = cause_of(&m.text)?;
            // ipamd's own words need no caller; a denial or client-go's text might be anyone's.
            let ipamd_words = contains_any(
                &m.text,
                &[
                    "Unable to reach API Server",
                    "Failed to communicate with K8S Server",
                    "IPAM-D",
                ],
            );
            (ipamd_words || is_cni_line(m)).then_some(CniLogFinding { message: m, cause })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(text: &str) -> Vec<CniLogCause> {
        findings_in("paste", text)
    }

    fn findings_in(label: &str, text: &str) -> Vec<CniLogCause> {
        let facts = crate::ingest::ingest(&[crate::Document::new(label, text)]);
        cni_log_findings(&facts)
            .into_iter()
            .map(|f| f.cause)
            .collect()
    }

    #[test]
    fn the_causes_ipamd_and_aws_node_log() {
        let denied = r#"{"level":"error","ts":"2022-01-19T14:52:50.585Z","caller":"ipamd/ipamd.go:444","msg":"Failed to call ec2:DescribeNetworkInterfaces for [eni-0b70601dc9523f511]: UnauthorizedOperation: You are not authorized to perform this operation.\n\tstatus code: 403, request id: f4fab8d0-6cd2-411b-972f-2445b5ebff3b"}"#;
        assert_eq!(
            findings(denied),
            [CniLogCause::Denied {
                action: Some("ec2:DescribeNetworkInterfaces".into())
            }]
        );
        let unreachable = r#"{"level":"error","ts":"2025-03-24T06:01:41.092Z","caller":"wait/wait.go:109","msg":"Unable to reach API Server: Get \"https://10.100.0.1:443/version?timeout=5s\": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)"}"#;
        assert_eq!(findings(unreachable), [CniLogCause::ApiServerUnreachable]);
        // ipamd's pre-v1.6 text format.
        let old = "2019-08-07T02:24:04.835Z [ERROR]        Failed to create client: error communicating with apiserver: Get https://100.127.0.1:443/version?timeout=32s: dial tcp 100.127.0.1:443: i/o timeout";
        assert_eq!(
            findings_in("eks_i-0abc.tar.gz/var/log/aws-routed-eni/ipamd.log", old),
            [CniLogCause::ApiServerUnreachable]
        );
        assert!(findings(old).is_empty(), "client-go's words alone");
        let waiting = r#"{"level":"info","ts":"2022-09-01T10:00:00.000Z","caller":"entrypoint.sh","msg":"Retrying waiting for IPAM-D"}"#;
        assert_eq!(findings(waiting), [CniLogCause::IpamdNotStarting]);
    }

    #[test]
    fn other_components_and_healthy_lines_are_not_the_cnis() {
        for text in [
            // A running ipamd denied growing its pool: the node works.
            r#"{"level":"error","ts":"2025-11-04T08:58:41.220Z","caller":"ipamd/ipamd.go:864","msg":"Failed to increase pool size due to not able to allocate ENI AllocENI: error attaching ENI: attachENI: failed to attach ENI: UnauthorizedOperation: You are not authorized to perform this operation."}"#,
            // Karpenter's own denial (KW105's).
            r#"{"level":"ERROR","time":"2025-01-01T00:00:00Z","logger":"controller","message":"Reconciler error","error":"creating instance, UnauthorizedOperation: You are not authorized to perform this operation."}"#,
            // A healthy ipamd line, and aws-node's readiness probe timing out.
            r#"{"level":"info","ts":"2022-05-12T01:14:52.003Z","caller":"aws-k8s-agent/main.go:43","msg":"Testing communication with server"}"#,
            r#"Readiness probe failed: {"level":"info","ts":"2023-01-01T00:00:00.000Z","caller":"/root/sdk/go1.19/src/runtime/proc.go:250","msg":"timeout: failed to connect service \":50051\" within 5s"}"#,
        ] {
            assert!(findings(text).is_empty(), "{text}");
        }
    }
}
