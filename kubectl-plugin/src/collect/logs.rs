//! Container logs: every Karpenter replica's containers, and the VPC CNI's on a node whose
//! aws-node pod is not ready, bounded by `--since` and a byte cap, streamed through core's log
//! scanner, which keeps only the lines ingest would parse (so memory follows the interesting
//! lines, not the log's size).

use karpenter_why_core::ingest::scan;

use super::api::Call;
use super::{Cx, MissingFact, LOG_RANK};

/// Streams one Karpenter container's log into a document labelled `namespace/pod/container.log`.
pub async fn collect_container_log(cx: &Cx, namespace: &str, pod: &str, container: &str) {
    collect_log(
        cx,
        format!("Karpenter controller logs ({namespace}/{pod}, container {container})"),
        namespace,
        pod,
        container,
    )
    .await;
}

/// Streams the log of a container `what` names into a document labelled
/// `namespace/pod/container.log`.
pub async fn collect_log(cx: &Cx, what: String, namespace: &str, pod: &str, container: &str) {
    let call = Call::log(
        what,
        namespace,
        pod,
        container,
        cx.settings.since,
        cx.settings.log_limit_bytes,
    );
    let mut scanner = scan::stream_scanner(format!("{namespace}/{pod}/{container}.log"));
    let (read, failure, capped) = cx
        .fetcher
        .stream(&call, cx.settings.log_limit_bytes, |bytes| {
            scanner.feed(bytes)
        })
        .await;
    match failure {
        Some(failure) if read == 0 => {
            cx.note_failure(&call, &failure).await;
            return;
        }
        Some(failure) => cx.note_missing(MissingFact {
            what: format!("the rest of {}", call.what),
            reason: format!(
                "{} after {read} bytes; the lines read so far are analysed",
                failure.describe()
            ),
            command: call.kubectl_command(),
        }),
        None => {}
    }
    if capped {
        cx.note_missing(MissingFact {
            what: format!("the later part of {}", call.what),
            reason: format!(
                "the log of the last {} is larger than the {} MiB cap; the most recent lines were not read",
                super::api::format_duration(cx.settings.since),
                cx.settings.log_limit_bytes / (1024 * 1024)
            ),
            command: call.kubectl_command(),
        });
    }
    cx.add_document(LOG_RANK, scanner.finish().document);
}
