//! Failed reads as `missing` entries: what is missing, why (for a 403 the verb, the resource and
//! the RBAC rule that would allow it), and the kubectl command that collects it by hand.

use super::api::Call;
use super::fetch::Failure;
use super::MissingFact;

/// The missing entry for `call` failing with `failure`. `kept` is the number of items kept
/// when a list failed after its first page.
pub fn for_failure(call: &Call, failure: &Failure, kept: Option<usize>) -> MissingFact {
    let mut reason = match failure {
        Failure::Api { code: 403, message, .. } => format!(
            "forbidden (403): {} {} {} was refused ({message}); a ClusterRole rule {} allows it (see docs/rbac.yaml)",
            call.verb.rbac(),
            resource_name(call),
            call.scope(),
            call.rbac_rule()
        ),
        Failure::Api { code: 404, message, .. } => format!("not found (404): {message}"),
        Failure::Api { code, message, .. } if *code >= 500 => {
            format!("the API server failed ({code}): {message}")
        }
        other => other.describe(),
    };
    if let Some(kept) = kept {
        reason.push_str(&format!(
            " (after the first {kept} items; the rest were not read)"
        ));
    }
    MissingFact {
        what: call.what.clone(),
        reason,
        command: call.kubectl_command(),
    }
}

/// `pods/log`, `nodeclaims.karpenter.sh`.
fn resource_name(call: &Call) -> String {
    match call.verb {
        super::api::Verb::Log => "pods/log".to_string(),
        _ => call.resource.kubectl_name(),
    }
}

/// Why a Karpenter API group answered 404, from the discovery GET of `/apis/<group>`.
pub fn describe_group(group: &str, discovery: Result<String, Failure>) -> String {
    match discovery {
        Err(failure) if failure.is_not_found() => format!(
            "not found (404): the API group {group} is not served: Karpenter (its CRDs) is not installed in this cluster"
        ),
        Err(failure) => format!(
            "not found (404), and the discovery of {group} failed too ({})",
            failure.describe()
        ),
        Ok(body) => {
            let versions: Vec<String> = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v.get("versions").and_then(|v| v.as_array()).cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|v| v.get("version").and_then(|v| v.as_str()).map(str::to_string))
                .collect();
            if versions.iter().any(|v| v == "v1") {
                format!("not found (404) although {group}/v1 is served: the CRD may be terminating or not yet established")
            } else if versions.is_empty() {
                format!("not found (404): the API group {group} serves no version")
            } else {
                let served = versions.iter().map(|v| format!("{group}/{v}")).collect::<Vec<_>>().join(", ");
                format!(
                    "not found (404): only {served} is served, not {group}/v1: Karpenter is older than v1.0 (pre-v1 CRDs); upgrade Karpenter and its CRDs to v1 (karpenter-why reads the v1 APIs)"
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collect::api::{Call, EVENTS, PODS};
    use std::time::Duration;

    #[test]
    fn forbidden_names_verb_resource_scope_and_rule() {
        let call = Call::log(
            "Karpenter logs",
            "karpenter",
            "karpenter-abc",
            "controller",
            Duration::from_secs(600),
            10,
        );
        let failure = Failure::Api {
            code: 403,
            reason: "Forbidden".into(),
            message:
                "pods \"karpenter-abc\" is forbidden: User \"dev\" cannot get resource \"pods/log\""
                    .into(),
        };
        let fact = for_failure(&call, &failure, None);
        assert_eq!(fact.what, "Karpenter logs");
        assert!(fact
            .reason
            .starts_with("forbidden (403): get pods/log in namespace karpenter was refused"));
        assert!(fact
            .reason
            .contains(r#"{apiGroups: [""], resources: ["pods/log"], verbs: ["get"]}"#));
        assert_eq!(
            fact.command,
            "kubectl logs karpenter-abc -n karpenter -c controller --since=10m"
        );
    }

    #[test]
    fn server_errors_timeouts_and_partial_lists() {
        let call = Call::list("events", &EVENTS, None);
        let failure = Failure::Api {
            code: 503,
            reason: "ServiceUnavailable".into(),
            message: "etcd down".into(),
        };
        assert_eq!(
            for_failure(&call, &failure, None).reason,
            "the API server failed (503): etcd down"
        );
        let timeout = for_failure(
            &call,
            &Failure::Timeout(Duration::from_millis(500)),
            Some(500),
        );
        assert_eq!(
            timeout.reason,
            "timed out after 500ms (--request-timeout) (after the first 500 items; the rest were not read)"
        );
        let pods = Call::list("pods", &PODS, Some("shop"));
        let truncated = for_failure(&pods, &Failure::Truncated("end of file".into()), None);
        assert_eq!(truncated.reason, "truncated response: end of file");
        assert_eq!(truncated.command, "kubectl get pods -n shop -o yaml");
    }

    #[test]
    fn karpenter_group_discovery_tells_absent_from_old() {
        let absent = describe_group(
            "karpenter.sh",
            Err(Failure::Api {
                code: 404,
                reason: "NotFound".into(),
                message: "404 page not found".into(),
            }),
        );
        assert!(
            absent.contains("Karpenter (its CRDs) is not installed"),
            "{absent}"
        );
        let old = describe_group(
            "karpenter.sh",
            Ok(r#"{"kind":"APIGroup","name":"karpenter.sh","versions":[{"groupVersion":"karpenter.sh/v1beta1","version":"v1beta1"}]}"#.into()),
        );
        assert!(old.contains("only karpenter.sh/v1beta1 is served"), "{old}");
        assert!(old.contains("older than v1.0"), "{old}");
    }
}
