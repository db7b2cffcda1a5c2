//! Karpenter controller logs: every replica's containers, bounded by `--since` and a byte cap,
//! read line by line as they stream in.

use karpenter_why_core::Document;

use super::api::Call;
use super::{Cx, MissingFact, LOG_RANK};

/// Streams one container's log into a document labelled `namespace/pod/container.log`.
pub async fn collect_container_log(cx: &Cx, namespace: &str, pod: &str, container: &str) {
    let call = Call::log(
        format!("Karpenter controller logs ({namespace}/{pod}, container {container})"),
        namespace,
        pod,
        container,
        cx.settings.since,
        cx.settings.log_limit_bytes,
    );
    let mut sink = LogSink::new(format!("{namespace}/{pod}/{container}.log"));
    let (read, failure, capped) = cx
        .fetcher
        .stream_lines(&call, cx.settings.log_limit_bytes, |line| sink.push(line))
        .await;
    match failure {
        Some(failure) if read == 0 && sink.is_empty() => {
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
    cx.add_document(LOG_RANK, sink.finish());
}

/// Collects streamed lines into a document, one line at a time (never the whole body as one
/// buffer first).
struct LogSink {
    label: String,
    text: String,
}

impl LogSink {
    fn new(label: String) -> LogSink {
        LogSink {
            label,
            text: String::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    fn push(&mut self, line: &[u8]) {
        self.text.push_str(&String::from_utf8_lossy(line));
        self.text.push('\n');
    }

    fn finish(self) -> Document {
        Document::new(self.label, self.text)
    }
}
