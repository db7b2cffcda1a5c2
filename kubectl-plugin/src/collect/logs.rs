//! Container logs: every Karpenter replica's containers, and the VPC CNI's on a node whose
//! aws-node pod is not ready, bounded by `--since` and a byte cap, streamed through core's log
//! scanner, which keeps only the lines ingest would parse (so memory follows the interesting
//! lines, not the log's size). A container that restarted also has its previous instance's log
//! read (`kubectl logs --previous`): a controller that died at start-up (no credentials, an
//! unreachable STS, OOMKilled) says why only there.

use karpenter_why_core::ingest::scan;
use serde_json::Value;

use super::api::Call;
use super::{Cx, MissingFact, LOG_RANK};

/// Lines read from the end of a previous instance's log. Its last lines say why it ended, so
/// the read is from the end (`tailLines`), unlike the current log's window from `--since`;
/// 10 000 lines of Karpenter's JSON (a few hundred bytes each) stay under the default cap, so
/// the cap rarely cuts the final lines off.
pub const PREVIOUS_TAIL_LINES: u64 = 10_000;

/// How a container's previous instance ended: its status's `lastState.terminated`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Termination {
    pub reason: Option<String>,
    pub exit_code: Option<i64>,
    pub finished_at: Option<String>,
}

impl Termination {
    /// `OOMKilled, exit code 137, at 2025-09-16T13:20:04Z`.
    pub fn describe(&self) -> String {
        let mut parts = vec![self
            .reason
            .clone()
            .unwrap_or_else(|| "no reason given".into())];
        if let Some(code) = self.exit_code {
            parts.push(format!("exit code {code}"));
        }
        if let Some(at) = &self.finished_at {
            parts.push(format!("at {at}"));
        }
        parts.join(", ")
    }
}

/// The previous instance of `container` in `pod` whose log is worth a `previous=true` read:
/// the status shows one that terminated (`lastState.terminated`) while the container has been
/// started again (running, or terminated itself). Not while it is waiting (CrashLoopBackOff):
/// the kubelet then answers the plain log read with the last terminated instance's log (its
/// `validateContainerLogStatus`), so a second read would return the same lines twice. `None`
/// too when the status does not say (no `containerStatuses`): a read would most likely be a
/// 400 and the note about it noise.
pub fn previous_instance(pod: &Value, container: &str) -> Option<Termination> {
    let status = pod
        .pointer("/status/containerStatuses")?
        .as_array()?
        .iter()
        .find(|s| s.get("name").and_then(Value::as_str) == Some(container))?;
    let terminated = status.pointer("/lastState/terminated")?;
    if !terminated.is_object() || status.pointer("/state/waiting").is_some() {
        return None;
    }
    let text = |key: &str| {
        terminated
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Some(Termination {
        reason: text("reason"),
        exit_code: terminated.get("exitCode").and_then(Value::as_i64),
        finished_at: text("finishedAt"),
    })
}

/// One container to read the log of: `source` names whose log it is for humans ("Karpenter
/// controller logs", "the VPC CNI's log").
pub struct ContainerLog<'a> {
    pub source: &'a str,
    pub namespace: &'a str,
    pub pod: &'a str,
    pub container: &'a str,
    /// The previous instance, when the container restarted (see `previous_instance`).
    pub previous: Option<Termination>,
}

/// Streams the container's current log into a document labelled
/// `namespace/pod/container.log` and, when it restarted, its previous instance's log into
/// `namespace/pod/container.previous.log`, both at once (no extra round trip).
pub async fn collect(cx: &Cx, log: ContainerLog<'_>) {
    let ContainerLog {
        source,
        namespace,
        pod,
        container,
        previous,
    } = log;
    let current = async {
        let call = Call::log(
            format!("{source} ({namespace}/{pod}, container {container})"),
            namespace,
            pod,
            container,
            cx.settings.since,
            cx.settings.log_limit_bytes,
        );
        let capped = format!(
            "the log of the last {} is larger than the {} MiB cap; the most recent lines were not read",
            super::api::format_duration(cx.settings.since),
            cx.settings.log_limit_bytes / (1024 * 1024)
        );
        stream(
            cx,
            &call,
            format!("{namespace}/{pod}/{container}.log"),
            capped,
            None,
        )
        .await;
    };
    let earlier = async {
        let Some(ended) = previous else {
            return;
        };
        let call = Call::previous_log(
            format!("{source} ({namespace}/{pod}, container {container}, previous instance)"),
            namespace,
            pod,
            container,
            PREVIOUS_TAIL_LINES,
            cx.settings.log_limit_bytes,
        );
        let capped = format!(
            "its last {PREVIOUS_TAIL_LINES} lines are larger than the {} MiB cap; the final lines, which say why it ended ({}), were not read",
            cx.settings.log_limit_bytes / (1024 * 1024),
            ended.describe()
        );
        stream(
            cx,
            &call,
            format!("{namespace}/{pod}/{container}.previous.log"),
            capped,
            Some(&ended),
        )
        .await;
    };
    futures::join!(current, earlier);
}

/// Streams `call` into a log document `label`; `capped` says what the byte cap cut off.
/// `ended`: how the previous instance read ended, added to a failed read's note, since the
/// termination is then all that is known of that instance.
async fn stream(cx: &Cx, call: &Call, label: String, capped: String, ended: Option<&Termination>) {
    let mut scanner = scan::stream_scanner(label);
    let (read, failure, reached_cap) = cx
        .fetcher
        .stream(call, cx.settings.log_limit_bytes, |bytes| {
            scanner.feed(bytes)
        })
        .await;
    match (failure, ended) {
        (Some(failure), Some(ended)) if read == 0 => {
            let mut fact = super::missing::for_failure(call, &failure, None);
            fact.reason = match &failure {
                // The kubelet's answer when it no longer has the instance (its container was
                // removed: a node reboot, garbage collection, `ContainerStatusUnknown`).
                super::Failure::Api {
                    code: 400, message, ..
                } if message.starts_with("previous terminated container") => {
                    format!("the node no longer has the log of the instance that ended (400: {message})")
                }
                _ => fact.reason,
            };
            fact.reason
                .push_str(&format!("; that instance ended: {}", ended.describe()));
            cx.note_missing(fact);
            return;
        }
        (Some(failure), None) if read == 0 => {
            cx.note_failure(call, &failure).await;
            return;
        }
        (Some(failure), _) => cx.note_missing(MissingFact {
            what: format!("the rest of {}", call.what),
            reason: format!(
                "{} after {read} bytes; the lines read so far are analysed",
                failure.describe()
            ),
            command: call.kubectl_command(),
        }),
        (None, _) => {}
    }
    if reached_cap {
        cx.note_missing(MissingFact {
            what: format!("the later part of {}", call.what),
            reason: capped,
            command: call.kubectl_command(),
        });
    }
    cx.add_document(LOG_RANK, scanner.finish().document);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(statuses: &str) -> Value {
        serde_json::from_str(&format!(
            r#"{{"status":{{"containerStatuses":{statuses}}}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn a_restarted_running_container_has_a_previous_instance_to_read() {
        let restarted = pod(
            r#"[{"name":"controller","restartCount":2,"state":{"running":{"startedAt":"2025-09-16T13:21:00Z"}},
                "lastState":{"terminated":{"exitCode":137,"reason":"OOMKilled","finishedAt":"2025-09-16T13:20:58Z","containerID":"containerd://ab12"}}}]"#,
        );
        let ended = previous_instance(&restarted, "controller").unwrap();
        assert_eq!(
            ended.describe(),
            "OOMKilled, exit code 137, at 2025-09-16T13:20:58Z"
        );
        assert_eq!(previous_instance(&restarted, "webhook"), None);
    }

    #[test]
    fn no_previous_read_when_waiting_never_restarted_or_unknown() {
        // CrashLoopBackOff: the plain log read already returns the instance that ended.
        let crash_looping = pod(
            r#"[{"name":"aws-node","restartCount":6,"state":{"waiting":{"reason":"CrashLoopBackOff"}},
                "lastState":{"terminated":{"exitCode":1,"reason":"Error"}}}]"#,
        );
        assert_eq!(previous_instance(&crash_looping, "aws-node"), None);
        let fresh =
            pod(r#"[{"name":"aws-node","restartCount":0,"state":{"running":{}},"lastState":{}}]"#);
        assert_eq!(previous_instance(&fresh, "aws-node"), None);
        assert_eq!(
            previous_instance(&serde_json::json!({"status": {}}), "aws-node"),
            None
        );
        assert_eq!(previous_instance(&Value::Null, "aws-node"), None);
    }

    #[test]
    fn a_termination_without_details_still_reads() {
        let bare =
            pod(r#"[{"name":"controller","state":{"running":{}},"lastState":{"terminated":{}}}]"#);
        assert_eq!(
            previous_instance(&bare, "controller").unwrap().describe(),
            "no reason given"
        );
    }
}
