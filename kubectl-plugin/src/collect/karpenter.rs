//! Finding Karpenter where it runs (by label, in whatever namespace), its Deployment (image tag =
//! version, env, args, dnsPolicy), every replica's logs, and AWS Node Termination Handler if it
//! runs beside it.

use futures::future::join_all;
use serde_json::Value;

use super::api::{Call, DAEMONSETS, DEPLOYMENTS, PODS};
use super::{logs, Cx, MissingFact};

/// The label the Karpenter chart puts on its Deployment and pods (all versions since v0.16).
pub const KARPENTER_SELECTOR: &str = "app.kubernetes.io/name=karpenter";
/// The label of the aws-node-termination-handler chart.
pub const NTH_SELECTOR: &str = "app.kubernetes.io/name=aws-node-termination-handler";

/// Karpenter's Deployment, pods and logs, and NTH: two waves (the label lists, then the logs).
pub async fn collect(cx: &Cx) {
    let namespace = cx.settings.karpenter_namespace.as_deref();
    let deployments =
        Call::list("the Karpenter Deployment", &DEPLOYMENTS, namespace).labels(KARPENTER_SELECTOR);
    let pods = Call::list("the Karpenter pods", &PODS, namespace).labels(KARPENTER_SELECTOR);
    let nth_daemonsets = Call::list("AWS Node Termination Handler DaemonSets", &DAEMONSETS, None)
        .labels(NTH_SELECTOR);
    let nth_deployments = Call::list(
        "AWS Node Termination Handler Deployments",
        &DEPLOYMENTS,
        None,
    )
    .labels(NTH_SELECTOR);
    let (found_deployments, found_pods, _, _) = futures::join!(
        cx.read(&deployments),
        async {
            let found = cx.read(&pods).await;
            if let Ok(items) = &found {
                join_all(containers(items).into_iter().map(
                    |(ns, pod, container, previous)| async move {
                        logs::collect(
                            cx,
                            logs::ContainerLog {
                                source: "Karpenter controller logs",
                                namespace: &ns,
                                pod: &pod,
                                container: &container,
                                previous,
                            },
                        )
                        .await
                    },
                ))
                .await;
            }
            found
        },
        cx.read_or_note(&nth_daemonsets),
        cx.read_or_note(&nth_deployments),
    );
    let place = match namespace {
        Some(ns) => format!("in namespace {ns}"),
        None => "in any namespace".to_string(),
    };
    match &found_deployments {
        Err(failure) => cx.note_failure(&deployments, failure).await,
        Ok(items) if items.is_empty() => cx.note_missing(MissingFact {
            what: deployments.what.clone(),
            reason: format!(
                "no Deployment labelled {KARPENTER_SELECTOR} {place}: Karpenter is not installed, or with other labels (name its namespace with --karpenter-namespace)"
            ),
            command: deployments.kubectl_command(),
        }),
        Ok(_) => {}
    }
    match &found_pods {
        Err(failure) => {
            cx.note_failure(&pods, failure).await;
            cx.note_missing(MissingFact {
                what: "Karpenter controller logs".into(),
                reason: "the Karpenter pods could not be listed, so their logs could not be read"
                    .into(),
                command: format!(
                    "kubectl logs {} -l {KARPENTER_SELECTOR} --all-containers --since={}",
                    namespace_flag(namespace),
                    super::api::format_duration(cx.settings.since)
                ),
            });
        }
        Ok(items) if items.is_empty() => cx.note_missing(MissingFact {
            what: "Karpenter controller logs".into(),
            reason: format!(
                "no pod labelled {KARPENTER_SELECTOR} {place}: no Karpenter controller is running"
            ),
            command: pods.kubectl_command(),
        }),
        Ok(_) => {}
    }
}

fn namespace_flag(namespace: Option<&str>) -> String {
    match namespace {
        Some(ns) => format!("-n {ns}"),
        None => "-n <karpenter namespace>".to_string(),
    }
}

/// (namespace, pod, container, previous instance if it restarted) for every container of
/// every Karpenter pod.
fn containers(pods: &[Value]) -> Vec<(String, String, String, Option<logs::Termination>)> {
    let mut out = Vec::new();
    for pod in pods {
        let text = |pointer: &str| {
            pod.pointer(pointer)
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        let (Some(ns), Some(name)) = (text("/metadata/namespace"), text("/metadata/name")) else {
            continue;
        };
        for container in pod
            .pointer("/spec/containers")
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(container) = container.get("name").and_then(|v| v.as_str()) {
                out.push((
                    ns.clone(),
                    name.clone(),
                    container.to_string(),
                    logs::previous_instance(pod, container),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::containers;

    #[test]
    fn every_container_of_every_replica() {
        let pods: Vec<serde_json::Value> = serde_json::from_str(
            r#"[{"metadata":{"namespace":"karpenter","name":"k-1"},"spec":{"containers":[{"name":"controller"}]},
                 "status":{"containerStatuses":[{"name":"controller","restartCount":1,"state":{"running":{}},"lastState":{"terminated":{"reason":"Error","exitCode":1}}}]}},
                {"metadata":{"namespace":"karpenter","name":"k-2"},"spec":{"containers":[{"name":"controller"},{"name":"webhook"}]}},
                {"metadata":{"name":"broken"}}]"#,
        )
        .unwrap();
        let names: Vec<String> = containers(&pods)
            .into_iter()
            .map(|(ns, p, c, previous)| {
                let ended = previous.map(|t| format!(" (restarted: {})", t.describe()));
                format!("{ns}/{p}/{c}{}", ended.unwrap_or_default())
            })
            .collect();
        assert_eq!(
            names,
            [
                "karpenter/k-1/controller (restarted: Error, exit code 1)",
                "karpenter/k-2/controller",
                "karpenter/k-2/webhook"
            ]
        );
    }
}
