//! Counted, time-bounded GETs through kube-rs, and what can go wrong with one (`Failure`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::{AsyncBufRead, AsyncBufReadExt};

use super::api::Call;

/// Why one call returned no fact. Never fatal by itself: the verbs turn it into a `missing`
/// entry, except for the subject's own object (not found: exit 2; unreachable: exit 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The API server answered with an error `Status`.
    Api {
        code: u16,
        reason: String,
        message: String,
    },
    /// No complete answer within `--request-timeout`.
    Timeout(Duration),
    /// The body ended early or is not complete JSON.
    Truncated(String),
    /// The connection could not be made or broke (refused, DNS, TLS...).
    Transport(String),
    /// The kubeconfig's credentials could not be obtained (exec plugin, token file).
    Auth(String),
}

impl Failure {
    /// Failures that mean the cluster cannot be talked to at all, rather than one read failing.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self,
            Failure::Transport(_) | Failure::Auth(_) | Failure::Api { code: 401, .. }
        )
    }

    pub fn is_not_found(&self) -> bool {
        matches!(self, Failure::Api { code: 404, .. })
    }

    /// One line for the user.
    pub fn describe(&self) -> String {
        match self {
            Failure::Api {
                code,
                reason,
                message,
            } => {
                let reason = if reason.is_empty() {
                    String::new()
                } else {
                    format!(" {reason}")
                };
                format!("{code}{reason}: {message}")
            }
            Failure::Timeout(limit) => format!(
                "timed out after {} (--request-timeout)",
                human_duration(*limit)
            ),
            Failure::Truncated(detail) => format!("truncated response: {detail}"),
            Failure::Transport(detail) => format!("connection failed: {detail}"),
            Failure::Auth(detail) => format!("authentication failed: {detail}"),
        }
    }

    pub(crate) fn from_kube(error: kube::Error) -> Failure {
        match error {
            kube::Error::Api(status) => Failure::Api {
                code: status.code,
                reason: status.reason.clone(),
                message: status.message.clone(),
            },
            kube::Error::Auth(auth) => Failure::Auth(describe_auth_error(&auth)),
            kube::Error::FromUtf8(_) => Failure::Truncated("the body is not UTF-8".into()),
            other => {
                let chain = error_chain(&other);
                let lower = chain.to_ascii_lowercase();
                if lower.contains("end of file before message length")
                    || lower.contains("unexpected eof")
                    || lower.contains("incomplete")
                    || lower.contains("error reading a body")
                {
                    Failure::Truncated(chain)
                } else {
                    Failure::Transport(chain)
                }
            }
        }
    }
}

/// `1m30s`, or `250ms` below a second.
fn human_duration(limit: Duration) -> String {
    if limit.as_secs() == 0 {
        format!("{}ms", limit.as_millis())
    } else {
        super::api::format_duration(limit)
    }
}

/// The innermost messages of an error chain, joined: hyper's outer "client error (Connect)"
/// says little, its sources say "Connection refused".
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(e) = source {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = e.source();
    }
    parts.join(": ")
}

/// The exec plugin's own words (first stderr line) rather than a dump of `Output`.
pub(crate) fn describe_auth_error(error: &kube::client::AuthError) -> String {
    use kube::client::AuthError;
    match error {
        AuthError::AuthExecRun { cmd, out } => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let first = stderr.lines().map(str::trim).find(|l| !l.is_empty());
            let cmd = cmd.trim_matches('"').replace("\" \"", " ");
            match first {
                Some(line) => format!("exec plugin `{cmd}` failed ({}): {line}", out.status),
                None => format!("exec plugin `{cmd}` failed ({})", out.status),
            }
        }
        AuthError::AuthExecStart(e) => format!("exec plugin could not be started: {e}"),
        other => error_chain(other),
    }
}

/// The client plus the request count; clones share the count.
#[derive(Clone)]
pub struct Fetcher {
    client: kube::Client,
    timeout: Option<Duration>,
    requests: Arc<AtomicUsize>,
    finished: Arc<AtomicUsize>,
}

impl Fetcher {
    pub fn new(client: kube::Client, timeout: Option<Duration>) -> Fetcher {
        Fetcher {
            client,
            timeout,
            requests: Arc::new(AtomicUsize::new(0)),
            finished: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// (requests started, requests finished), for the progress line and the stats.
    pub fn counts(&self) -> (usize, usize) {
        (
            self.requests.load(Ordering::Relaxed),
            self.finished.load(Ordering::Relaxed),
        )
    }

    /// GETs `uri` and returns the whole body.
    pub async fn text(&self, uri: &str) -> Result<String, Failure> {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let request = http::Request::get(uri)
            .body(Vec::new())
            .expect("a path is a valid URI");
        let result = self.bounded(self.client.request_text(request)).await;
        self.finished.fetch_add(1, Ordering::Relaxed);
        result?.map_err(Failure::from_kube)
    }

    /// GETs a list (every page) or one object; returns each page's body and the items (or the
    /// object). A failure after the first page keeps the pages read so far.
    pub async fn json(
        &self,
        call: &Call,
    ) -> (
        Vec<serde_json::Value>,
        Vec<serde_json::Value>,
        Option<Failure>,
    ) {
        let mut pages = Vec::new();
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let body = match self.text(&call.uri(token.as_deref())).await {
                Ok(body) => body,
                Err(failure) => return (pages, items, Some(failure)),
            };
            let value: serde_json::Value = match serde_json::from_str(&body) {
                Ok(value) => value,
                Err(e) => {
                    return (
                        pages,
                        items,
                        Some(Failure::Truncated(format!(
                            "the body is not complete JSON ({e})"
                        ))),
                    )
                }
            };
            token = value
                .pointer("/metadata/continue")
                .and_then(|v| v.as_str())
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            match value.get("items").and_then(|v| v.as_array()) {
                Some(list) if call.name.is_none() => items.extend(list.iter().cloned()),
                _ => items.push(value.clone()),
            }
            pages.push(value);
            if token.is_none() || call.name.is_some() {
                return (pages, items, None);
            }
        }
    }

    /// Streams a log, handing the bytes to `chunk` as they arrive (whole lines only once the
    /// cap is near), until the end, the byte cap, or the timeout. Returns the bytes read, why
    /// it stopped early if it did, and whether the cap was reached.
    pub async fn stream(
        &self,
        call: &Call,
        cap: u64,
        mut chunk: impl FnMut(&[u8]),
    ) -> (u64, Option<Failure>, bool) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let request = http::Request::get(call.uri(None))
            .body(Vec::new())
            .expect("a path is a valid URI");
        let mut read: u64 = 0;
        let mut capped = false;
        let stream = async {
            let reader = self
                .client
                .request_stream(request)
                .await
                .map_err(Failure::from_kube)?;
            let mut reader: std::pin::Pin<Box<dyn AsyncBufRead + Send>> = Box::pin(reader);
            loop {
                let buffer = reader.fill_buf().await.map_err(|e| {
                    Failure::Truncated(format!("the log stream broke: {}", error_chain(&e)))
                })?;
                if buffer.is_empty() {
                    return Ok(());
                }
                let room = cap.saturating_sub(read);
                if buffer.len() as u64 > room {
                    // Stop at the last whole line that fits.
                    let part = &buffer[..room as usize];
                    let end = part.iter().rposition(|b| *b == b'\n').map_or(0, |p| p + 1);
                    chunk(&part[..end]);
                    read += end as u64;
                    capped = true;
                    return Ok(());
                }
                let n = buffer.len();
                chunk(buffer);
                read += n as u64;
                reader.as_mut().consume(n);
            }
        };
        let outcome = self.bounded(stream).await;
        self.finished.fetch_add(1, Ordering::Relaxed);
        let failure = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(failure)) | Err(failure) => Some(failure),
        };
        (read, failure, capped)
    }

    async fn bounded<T>(&self, future: impl std::future::Future<Output = T>) -> Result<T, Failure> {
        match self.timeout {
            Some(limit) => tokio::time::timeout(limit, future)
                .await
                .map_err(|_| Failure::Timeout(limit)),
            None => Ok(future.await),
        }
    }
}
