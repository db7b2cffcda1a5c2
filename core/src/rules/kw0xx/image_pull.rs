//! Image pull failures, shared by KW001 (a public registry was unavailable: a mirror prevents
//! it) and KW002 (anything a mirror would not fix, and every private-registry failure).
//!
//! One `PullFailure` per image: the kubelet events (`Failed to pull image "<image>": <err>`,
//! `Error: ErrImagePull`, `Back-off pulling image "<image>"[: ErrImagePull: <err>]`,
//! `Error: ImagePullBackOff`), kubelet journal lines, `kubectl get pods` rows and container
//! states of pod objects are gathered by image, the error is classified, and `verdict` says
//! which of the two rules owns the failure, so exactly one of them fires for it.

use crate::document::Evidence;
use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, MessageOrigin, ObjectRef};
use crate::rules::text::{contains_any, quoted_after};

/// Lower-case texts that mark a line as part of an image pull failure.
pub const SIGNALS: &[&str] = &[
    "failed to pull image",
    "back-off pulling image",
    "errimagepull",
    "imagepullbackoff",
    "pullimage from image service failed",
    "because the registry is unavailable",
    "failed to apply default image tag",
    "invalidimagename",
    "errimageneverpull",
    "is not present with pull policy of never",
    // A later successful pull of the same image: the failure is over for now.
    "successfully pulled image",
];

/// A parsed image reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageRef {
    /// As written in the pod spec / the event.
    pub raw: String,
    /// Registry host, `docker.io` for Docker Hub however written (no host, `index.docker.io`,
    /// `registry-1.docker.io`).
    pub registry: String,
    /// Repository path without the host (`library/nginx` for `nginx`).
    pub repository: String,
    pub tag: Option<String>,
    pub digest: Option<String>,
}

impl ImageRef {
    /// Parses `[host[:port]/]path[:tag][@digest]` the way container runtimes do: the first
    /// component is a host only when it has a `.` or a `:` or is `localhost`; otherwise the
    /// image is on Docker Hub (`library/` for single-component names).
    pub fn parse(raw: &str) -> Option<ImageRef> {
        let raw = raw.trim().trim_matches(['"', '\'', '\\']);
        if raw.is_empty() || raw.contains(char::is_whitespace) {
            return None;
        }
        let (name, digest) = match raw.split_once('@') {
            Some((n, d)) => (n, Some(d.to_string())),
            None => (raw, None),
        };
        let (registry, path) = match name.split_once('/') {
            Some((first, rest))
                if first.contains('.') || first.contains(':') || first == "localhost" =>
            {
                (first.to_ascii_lowercase(), rest.to_string())
            }
            _ => ("docker.io".to_string(), name.to_string()),
        };
        let registry = match registry.as_str() {
            "index.docker.io" | "registry-1.docker.io" | "registry.hub.docker.com" => {
                "docker.io".to_string()
            }
            _ => registry,
        };
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repo, tag)) if !tag.contains('/') => (repo.to_string(), Some(tag.to_string())),
            _ => (path.clone(), None),
        };
        if repository.is_empty() {
            return None;
        }
        let repository = if registry == "docker.io" && !repository.contains('/') {
            format!("library/{repository}")
        } else {
            repository
        };
        Some(ImageRef {
            raw: raw.to_string(),
            registry,
            repository,
            tag,
            digest,
        })
    }

    /// Fully qualified, for comparing references written differently.
    pub fn normalized(&self) -> String {
        let mut s = format!("{}/{}", self.registry, self.repository);
        if let Some(t) = &self.tag {
            s.push(':');
            s.push_str(t);
        }
        if let Some(d) = &self.digest {
            s.push('@');
            s.push_str(d);
        }
        s
    }

    pub fn kind(&self) -> RegistryKind {
        registry_kind(&self.registry)
    }

    /// `<repository>:<tag>` (or `@digest`), the part a mirror keeps.
    pub fn path_and_version(&self) -> String {
        let mut s = self.repository.clone();
        if let Some(t) = &self.tag {
            s.push(':');
            s.push_str(t);
        }
        if let Some(d) = &self.digest {
            s.push('@');
            s.push_str(d);
        }
        s
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryKind {
    /// A public registry anyone can pull from anonymously.
    Public,
    /// A private Amazon ECR registry.
    EcrPrivate { account: String, region: String },
    /// Any other registry: private as far as we know.
    Private,
}

/// Public registries per the catalogue. `*.pkg.dev` is where registry.k8s.io redirects.
pub fn registry_kind(host: &str) -> RegistryKind {
    let host = host.to_ascii_lowercase();
    let public = matches!(
        host.as_str(),
        "registry.k8s.io"
            | "k8s.gcr.io"
            | "gcr.io"
            | "docker.io"
            | "quay.io"
            | "ghcr.io"
            | "public.ecr.aws"
            | "mcr.microsoft.com"
    ) || host.ends_with(".gcr.io")
        || host.ends_with(".pkg.dev");
    if public {
        return RegistryKind::Public;
    }
    // <account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]
    let labels: Vec<&str> = host.split('.').collect();
    if labels.len() >= 6
        && labels[0].len() == 12
        && labels[0].chars().all(|c| c.is_ascii_digit())
        && labels[1] == "dkr"
        && labels[2].starts_with("ecr")
        && labels[4] == "amazonaws"
    {
        return RegistryKind::EcrPrivate {
            account: labels[0].to_string(),
            region: labels[3].to_string(),
        };
    }
    RegistryKind::Private
}

/// Why a pull failed, as far as the error text says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorClass {
    // Not fixable by a mirror.
    InvalidReference,
    /// `ErrImageNeverPull`: the pull policy forbids pulling and the image is not on the node.
    NeverPull,
    /// The registry's TLS certificate is not trusted (`x509: certificate signed by unknown
    /// authority`): a TLS-inspecting proxy, or a private CA the node does not know.
    Certificate,
    AccessDenied,
    Unauthorized,
    NotFound,
    // Availability: a mirror prevents them.
    RateLimited,
    Dns,
    ConnectionRefused,
    ConnectionReset,
    ServerError,
    Timeout,
    /// The runtime gave up on a pull that made no progress (containerd's
    /// `image_pull_progress_timeout`, 5 minutes by default): the kubelet reports only
    /// `code = Canceled` / `context canceled`.
    Canceled,
    RegistryUnavailable,
    /// An error text that matches no known class.
    Unclassified,
}

impl ErrorClass {
    /// The registry (or the way to it) was unavailable: the failures a private mirror
    /// prevents.
    pub fn is_availability(self) -> bool {
        matches!(
            self,
            ErrorClass::RateLimited
                | ErrorClass::Dns
                | ErrorClass::ConnectionRefused
                | ErrorClass::ConnectionReset
                | ErrorClass::ServerError
                | ErrorClass::Timeout
                | ErrorClass::Canceled
                | ErrorClass::RegistryUnavailable
        )
    }

    pub fn describe(self) -> &'static str {
        match self {
            ErrorClass::InvalidReference => "invalid image reference",
            ErrorClass::NeverPull => "not on the node and imagePullPolicy is Never",
            ErrorClass::Certificate => "TLS certificate not trusted (x509)",
            ErrorClass::AccessDenied => "access denied (403 / pull access denied)",
            ErrorClass::Unauthorized => "unauthorized (no or wrong registry credentials)",
            ErrorClass::NotFound => "not found (wrong tag, digest or repository)",
            ErrorClass::RateLimited => "rate limited (429 / toomanyrequests)",
            ErrorClass::Dns => "DNS lookup failure",
            ErrorClass::ConnectionRefused => "connection refused",
            ErrorClass::ConnectionReset => "connection reset",
            ErrorClass::ServerError => "registry server error (5xx)",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Canceled => {
                "pull cancelled (a download that stalled: a slow or unreachable registry)"
            }
            ErrorClass::RegistryUnavailable => "registry unavailable",
            ErrorClass::Unclassified => "unclassified error",
        }
    }
}

/// Classifies a pull error text. Definitive refusals are checked before network symptoms:
/// a `403` that arrived over a slow link is still a refusal.
pub fn classify(error: &str) -> ErrorClass {
    let has = |needles: &[&str]| contains_any(error, needles);
    if has(&["toomanyrequests", "too many requests", "pull rate limit"])
        || status_code(error, '4') == Some(429)
    {
        return ErrorClass::RateLimited;
    }
    if has(&[
        "invalid reference format",
        "couldn't parse image reference",
        "failed to apply default image tag",
        "invalidimagename",
    ]) {
        return ErrorClass::InvalidReference;
    }
    if has(&[
        "is not present with pull policy of never",
        "errimageneverpull",
    ]) {
        return ErrorClass::NeverPull;
    }
    // The registry answered, but the node does not trust the certificate it presented (a
    // TLS-inspecting proxy or a private CA): trusting the CA fixes it, a mirror would not.
    if has(&[
        "x509:",
        "failed to verify certificate",
        "certificate signed by unknown authority",
        "certificate has expired",
        "certificate is not valid for",
    ]) {
        return ErrorClass::Certificate;
    }
    if has(&[
        "pull access denied",
        "403 forbidden",
        "denied: requested access",
        "requested access to the resource is denied",
        "insufficient_scope",
        "access denied",
        "accessdenied",
        "denied:",
    ]) || status_code(error, '4') == Some(403)
    {
        return ErrorClass::AccessDenied;
    }
    if has(&[
        "unauthorized",
        "no basic auth credentials",
        "authentication required",
    ]) || status_code(error, '4') == Some(401)
    {
        return ErrorClass::Unauthorized;
    }
    if has(&[
        "manifest unknown",
        "not found",
        "name unknown",
        "repository does not exist",
        "notfound",
    ]) {
        return ErrorClass::NotFound;
    }
    if has(&[
        "no such host",
        "server misbehaving",
        "temporary failure in name resolution",
    ]) || (has(&["lookup "]) && has(&["i/o timeout", "timeout"]))
        // Go prints `dial tcp: lookup <host>...` only when resolving the host failed, whatever
        // the resolver's own error (`connect: network is unreachable`, `connection refused`
        // from the DNS server).
        || has(&["dial tcp: lookup ", "dial tcp4: lookup ", "dial tcp6: lookup "])
    {
        return ErrorClass::Dns;
    }
    if has(&["connection refused"]) {
        return ErrorClass::ConnectionRefused;
    }
    if has(&["connection reset", "broken pipe", "unexpected eof"]) {
        return ErrorClass::ConnectionReset;
    }
    if has(&[
        "internal server error",
        "bad gateway",
        "service unavailable",
        "gateway timeout",
    ]) || status_code(error, '5').is_some()
    {
        return ErrorClass::ServerError;
    }
    if has(&[
        "i/o timeout",
        "deadlineexceeded",
        "deadline exceeded",
        "tls handshake timeout",
        "client.timeout exceeded",
        "request canceled while waiting for connection",
        "timeout awaiting response headers",
        "timed out",
    ]) {
        return ErrorClass::Timeout;
    }
    if has(&["because the registry is unavailable"]) {
        return ErrorClass::RegistryUnavailable;
    }
    // Checked last: a refusal or a network error in the same text says more. containerd
    // cancels a pull whose download makes no progress and the kubelet sees only the
    // cancellation, so this is the mark of a registry too slow or unreachable to serve it.
    if has(&[
        "code = canceled",
        "context canceled",
        "because of no progress",
    ]) {
        return ErrorClass::Canceled;
    }
    ErrorClass::Unclassified
}

/// An HTTP status starting with `first` after `status` / `status code` in the text
/// (`unexpected status: 503 Service Unavailable`, `unexpected status code 429`).
fn status_code(text: &str, first: char) -> Option<u16> {
    let mut rest = text;
    while let Some(i) = find_ignore_ascii_case(rest, "status") {
        let after = &rest[i + 6..];
        let window: String = after.chars().take(28).collect();
        let code = window
            .split(|c: char| !c.is_ascii_digit())
            .find(|run| run.len() == 3);
        if let Some(code) = code.filter(|c| c.starts_with(first)) {
            return code.parse().ok();
        }
        rest = after;
    }
    None
}

/// One image that could not be pulled, with everything the input says about it.
#[derive(Debug, Clone, Default)]
pub struct PullFailure<'a> {
    /// `None` when the evidence names no image (`Error: ErrImagePull` alone).
    pub image: Option<ImageRef>,
    pub pods: Vec<ObjectRef>,
    /// Container names that use the image, from pod objects.
    pub containers: Vec<String>,
    /// Classified errors with the text they came from, first appearance first.
    pub errors: Vec<(ErrorClass, String)>,
    pub messages: Vec<&'a Message>,
    /// Evidence from pod objects' container states.
    pub states: Vec<Evidence>,
    /// A later `Successfully pulled image "<image>"` for the same image: the failure is over
    /// for now (the pod runs), and comes back with the next pull.
    pub recovered: Option<&'a Message>,
}

/// Which rule owns a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// KW001: public registry, availability error (or no cause in the evidence).
    PublicRegistryUnavailable,
    /// KW002: everything else.
    PullFailed,
}

impl PullFailure<'_> {
    /// Distinct error classes, in first-appearance order.
    pub fn classes(&self) -> Vec<ErrorClass> {
        let mut out: Vec<ErrorClass> = Vec::new();
        for (c, _) in &self.errors {
            if !out.contains(c) {
                out.push(*c);
            }
        }
        out
    }

    /// Whether the evidence holds no cause: only back-off and status texts.
    pub fn cause_unknown(&self) -> bool {
        self.errors.is_empty()
    }

    pub fn verdict(&self) -> Verdict {
        let public = self
            .image
            .as_ref()
            .is_some_and(|i| i.kind() == RegistryKind::Public);
        let classes = self.classes();
        if public && classes.iter().all(|c| c.is_availability()) {
            Verdict::PublicRegistryUnavailable
        } else {
            Verdict::PullFailed
        }
    }

    /// The host the failing request went to when it differs from the image's registry
    /// (registry.k8s.io redirects to `*.pkg.dev` or S3), e.g. `us-west2-docker.pkg.dev`.
    pub fn redirected_host(&self) -> Option<String> {
        let registry = self.image.as_ref()?.registry.clone();
        self.errors.iter().find_map(|(_, text)| {
            let i = find_ignore_ascii_case(text, "https://")?;
            let host: String = text[i + 8..]
                .chars()
                .take_while(|c| *c != '/' && *c != '"' && *c != '\\' && !c.is_whitespace())
                .collect();
            let same = host == registry || (registry == "docker.io" && host.ends_with("docker.io"));
            (!host.is_empty() && !same).then_some(host)
        })
    }

    /// `pod ns/name` list for summaries.
    pub fn pod_names(&self) -> Vec<String> {
        self.pods.iter().map(ObjectRef::qualified_name).collect()
    }
}

/// Container state reasons of a pull failure (`kubectl get pods` STATUS, container states).
const PULL_FAILURE_REASONS: &[&str] = &[
    "ErrImagePull",
    "ImagePullBackOff",
    "InvalidImageName",
    "ErrImageNeverPull",
];

/// A pull failure reason, also of an init container as `kubectl get pods` prints it
/// (`Init:ImagePullBackOff`).
fn is_pull_reason(reason: &str) -> bool {
    PULL_FAILURE_REASONS.contains(&reason.strip_prefix("Init:").unwrap_or(reason))
}

/// Whether a message is about an image pull failure: its text, or the container state reason
/// ingest put on it (a `kubectl get pods` row whose STATUS is `ImagePullBackOff`).
fn is_pull_failure(m: &Message) -> bool {
    is_pull_failure_text(&m.text)
        || (m.origin == MessageOrigin::ObjectField
            && m.reason.as_deref().is_some_and(is_pull_reason))
}

/// Whether a text is about an image pull failure.
fn is_pull_failure_text(text: &str) -> bool {
    contains_any(
        text,
        &[
            "failed to pull image",
            "back-off pulling image",
            "pullimage from image service failed",
            "because the registry is unavailable",
            "failed to apply default image tag",
            "is not present with pull policy of never",
            "error: errimagepull",
            "error: imagepullbackoff",
            "error: invalidimagename",
            "error: errimageneverpull",
            "with errimagepull",
            "with imagepullbackoff",
            // `... start failed in pod x_ns(uid): ErrImagePull: <err>` (kubelet journal).
            "errimagepull: ",
        ],
    ) || status_row(text).is_some()
        || reason_line(text)
}

/// `Reason: ImagePullBackOff` / `reason: ErrImagePull` (a describe or YAML container state).
fn reason_line(text: &str) -> bool {
    let t = text.trim().trim_start_matches('-').trim();
    let Some((key, value)) = t.split_once(':') else {
        return false;
    };
    key.trim().eq_ignore_ascii_case("reason") && is_pull_reason(value.trim().trim_matches('"'))
}

/// A `kubectl get pods` row whose STATUS is a pull failure: `[ns] name 0/1 ImagePullBackOff
/// 0 4m`. Returns the pod.
fn status_row(text: &str) -> Option<ObjectRef> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let i = words.iter().position(|w| {
        w.split_once('/').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && a.chars().all(|c| c.is_ascii_digit())
                && b.chars().all(|c| c.is_ascii_digit())
        })
    })?;
    let status = words.get(i + 1)?;
    if !is_pull_reason(status) || i == 0 {
        return None;
    }
    let name = words[i - 1].trim_start_matches("pod/");
    let namespace = (i >= 2).then(|| words[i - 2]);
    Some(ObjectRef::new("Pod", namespace, name))
}

/// The image a message names: the quoted value after `pull image` / `pulling image`, or a
/// journal line's `image="..."`.
fn image_in(text: &str) -> Option<ImageRef> {
    [
        "pulling image",
        "pull image",
        "pulled image",
        "image pull failed for",
        "unpack image",
        "default image tag",
        "container image",
        "image=",
    ]
    .iter()
    .find_map(|marker| {
        if *marker == "image pull failed for" {
            let rest = crate::rules::text::token_after(text, marker)?;
            return ImageRef::parse(&rest);
        }
        quoted_after(text, marker).and_then(|v| ImageRef::parse(&v))
    })
}

/// The part of a message that states the cause, if it states one: what follows the quoted
/// image (`Failed to pull image "x": <err>`, `Back-off pulling image "x": ErrImagePull:
/// <err>`), a journal line's `err="..."`, or the registry-unavailable sentence.
fn cause_in(text: &str, image: Option<&ImageRef>) -> Option<String> {
    if contains_any(
        text,
        &[
            "because the registry is unavailable",
            "is not present with pull policy of never",
        ],
    ) {
        return Some(text.to_string());
    }
    if let Some(i) = find_ignore_ascii_case(text, "err=") {
        let err = text[i + 4..].trim_start_matches(['"', '\\']);
        if !err.is_empty() {
            return Some(err.to_string());
        }
    }
    let image = image?;
    let at = find_ignore_ascii_case(text, &image.raw)? + image.raw.len();
    let rest = text[at..].trim_start_matches(['"', '\\']).trim_start();
    let rest = rest.strip_prefix(':')?.trim();
    // `Back-off pulling image "x": ErrImagePull: <err>` (newer kubelets).
    let rest = rest
        .strip_prefix("ErrImagePull:")
        .map(str::trim)
        .unwrap_or(rest);
    (!rest.is_empty() && !rest.eq_ignore_ascii_case("ErrImagePull")).then(|| rest.to_string())
}

/// The pod of the scheduler's `Scheduled` event: `Successfully assigned <ns>/<pod> to <node>`.
fn scheduled_pod(text: &str) -> Option<ObjectRef> {
    let at =
        find_ignore_ascii_case(text, "Successfully assigned ")? + "Successfully assigned ".len();
    let token = text[at..].split_whitespace().next()?;
    let (ns, name) = token.split_once('/')?;
    (!ns.is_empty() && !name.is_empty()).then(|| ObjectRef::new("Pod", Some(ns), name))
}

/// The pod a message is about: the event's object, or `pod/<name>` in an events table row.
fn pod_of(m: &Message) -> Option<ObjectRef> {
    if let Some(o) = m
        .object
        .as_ref()
        .filter(|o| o.kind.eq_ignore_ascii_case("pod"))
    {
        return Some(o.clone());
    }
    if let Some(p) = status_row(&m.text) {
        return Some(p);
    }
    if let Some(i) = find_ignore_ascii_case(&m.text, "pod/") {
        let name: String = m.text[i + 4..]
            .chars()
            .take_while(|c| !c.is_whitespace())
            .collect();
        if !name.is_empty() {
            return Some(ObjectRef::new("Pod", None, &name));
        }
    }
    // Kubelet journal: pod="ns/name".
    if let Some(q) = quoted_after(&m.text, "pod=") {
        return Some(match q.split_once('/') {
            Some((ns, name)) => ObjectRef::new("Pod", Some(ns), name),
            None => ObjectRef::new("Pod", None, &q),
        });
    }
    // Kubelet journal: `start failed in pod <name>_<namespace>(<uid>)`.
    let token = crate::rules::text::token_after(&m.text, "in pod ")?;
    let (name, rest) = token.split_once('_')?;
    let namespace = rest.split('(').next().filter(|ns| !ns.is_empty())?;
    (!name.is_empty()).then(|| ObjectRef::new("Pod", Some(namespace), name))
}

/// A container state row (`kubectl get pods` STATUS) rather than a kubelet text.
fn is_state_row(m: &Message) -> bool {
    m.origin == MessageOrigin::ObjectField && m.reason.as_deref().is_some_and(is_pull_reason)
        || status_row(&m.text).is_some()
}

/// Distinct images named by lines holding nothing but image references (jsonpath output).
/// Only references with a registry host or a tag count: a lone word is not an image.
fn bare_images(facts: &Facts) -> Vec<ImageRef> {
    let mut out: Vec<ImageRef> = Vec::new();
    for m in &facts.messages {
        if m.origin != MessageOrigin::Unrecognised {
            continue;
        }
        let tokens: Vec<&str> = m.text.split_whitespace().collect();
        let images: Option<Vec<ImageRef>> = tokens
            .iter()
            .map(|t| {
                let t = t.trim_matches(['\'', '"']);
                let qualified =
                    t.contains(':') || t.split('/').next().is_some_and(|h| h.contains('.'));
                let plain = t
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "./:-_@".contains(c));
                (qualified && plain && t.contains('/'))
                    .then(|| ImageRef::parse(t))
                    .flatten()
            })
            .collect();
        for image in images.unwrap_or_default() {
            if !out.iter().any(|i| i.normalized() == image.normalized()) {
                out.push(image);
            }
        }
    }
    out
}

fn same_pod(a: &ObjectRef, b: &ObjectRef) -> bool {
    a.name == b.name
        && (a.namespace.is_none() || b.namespace.is_none() || a.namespace == b.namespace)
}

fn add_pod(pods: &mut Vec<ObjectRef>, pod: ObjectRef) {
    if let Some(existing) = pods.iter_mut().find(|p| same_pod(p, &pod)) {
        if existing.namespace.is_none() {
            existing.namespace = pod.namespace;
        }
    } else {
        pods.push(pod);
    }
}

fn add_error(errors: &mut Vec<(ErrorClass, String)>, text: String) {
    if !errors.iter().any(|(_, t)| *t == text) {
        errors.push((classify(&text), text));
    }
}

/// Every image pull failure in the facts, one per image (plus at most one for pull failures
/// that name no image).
/// The prompt line (`$ kubectl ...`) whose output holds `line` of `source`: the nearest one
/// above it. A paste of several `kubectl describe pod` outputs is cut into sections by them.
fn prompt_above<'a>(
    facts: &'a Facts,
    source: &str,
    line: usize,
) -> Option<&'a crate::facts::ShellCommand> {
    facts
        .commands
        .iter()
        .filter(|c| c.evidence.source == source && c.evidence.line < line)
        .max_by_key(|c| c.evidence.line)
}

/// The first line of the section `line` is in (after its prompt line; 0 without one).
fn section_start(facts: &Facts, source: &str, line: usize) -> usize {
    prompt_above(facts, source, line).map_or(0, |c| c.evidence.line)
}

/// The pod a `kubectl describe pod <name> [-n <ns>]` prompt names.
fn described_pod(facts: &Facts, source: &str, line: usize) -> Option<ObjectRef> {
    let c = prompt_above(facts, source, line).filter(|c| c.is("describe", "Pod"))?;
    let name = c.name.as_deref().filter(|n| !n.is_empty())?;
    Some(ObjectRef::new("Pod", c.namespace.as_deref(), name))
}

pub fn pull_failures(facts: &Facts) -> Vec<PullFailure<'_>> {
    let mut failures: Vec<PullFailure> = Vec::new();
    let find = |failures: &mut Vec<PullFailure>, image: &ImageRef| -> usize {
        let key = image.normalized();
        match failures
            .iter()
            .position(|f| f.image.as_ref().is_some_and(|i| i.normalized() == key))
        {
            Some(i) => i,
            None => {
                failures.push(PullFailure {
                    image: Some(image.clone()),
                    ..Default::default()
                });
                failures.len() - 1
            }
        }
    };

    // Pod objects first: their container states name image, pod and container together.
    for pod in &facts.pods {
        for c in pod.containers.iter().chain(pod.init_containers.iter()) {
            let Some(reason) = c.reason.as_deref() else {
                continue;
            };
            if !is_pull_reason(reason) {
                continue;
            }
            let Some(image) = c.image.as_deref().and_then(ImageRef::parse) else {
                continue;
            };
            let i = find(&mut failures, &image);
            let f = &mut failures[i];
            add_pod(&mut f.pods, pod.object_ref());
            if !f.containers.contains(&c.name) {
                f.containers.push(c.name.clone());
            }
            if let Some(msg) = c.message.as_deref() {
                if let Some(cause) = cause_in(msg, Some(&image))
                    .or_else(|| (!is_pull_failure_text(msg)).then(|| msg.to_string()))
                {
                    add_error(&mut f.errors, cause);
                }
            }
            let mut e = pod.meta.evidence.clone().unwrap_or_default();
            e.text = format!(
                "container {}: {reason}{}",
                c.name,
                c.message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default()
            );
            e.count = 1;
            f.states.push(e);
        }
    }

    // Messages naming the image.
    let mut unattached: Vec<&Message> = Vec::new();
    for m in facts.messages.iter().filter(|m| is_pull_failure(m)) {
        if contains_ignore_ascii_case(&m.text, "successfully pulled") {
            continue;
        }
        match image_in(&m.text) {
            Some(image) => {
                let i = find(&mut failures, &image);
                let f = &mut failures[i];
                f.messages.push(m);
                if let Some(cause) = cause_in(&m.text, Some(&image)) {
                    add_error(&mut f.errors, cause);
                }
                if let Some(p) = pod_of(m) {
                    add_pod(&mut f.pods, p);
                }
            }
            None => unattached.push(m),
        }
    }

    // Messages without an image (`Error: ErrImagePull`, status rows, `Reason:` lines) join
    // the failure of their pod, or the only failure there is.
    for m in unattached {
        let pod = pod_of(m);
        let by_pod = pod.as_ref().and_then(|p| {
            failures
                .iter()
                .position(|f| f.pods.iter().any(|q| same_pod(q, p)))
                .or_else(|| {
                    // The pod object may name the image even when the line does not.
                    let obj = facts.pods.iter().find(|o| same_pod(&o.object_ref(), p))?;
                    let image = obj
                        .containers
                        .iter()
                        .find_map(|c| c.image.as_deref().and_then(ImageRef::parse))?;
                    Some(find(&mut failures, &image))
                })
        });
        // `Error: ErrImagePull` follows the kubelet's `Failed to pull image "<image>"` in the
        // same events table: the failure with the nearest message above it in its section.
        let start = section_start(facts, &m.evidence.source, m.evidence.line);
        let above = || {
            failures
                .iter()
                .enumerate()
                .filter_map(|(i, f)| {
                    let line = f
                        .messages
                        .iter()
                        .filter(|o| {
                            o.evidence.source == m.evidence.source
                                && o.evidence.line > start
                                && o.evidence.line < m.evidence.line
                        })
                        .map(|o| o.evidence.line)
                        .max()?;
                    Some((line, i))
                })
                .max()
                .map(|(_, i)| i)
        };
        let index = match by_pod {
            Some(i) => Some(i),
            None if failures.len() == 1 => Some(0),
            None if pod.is_none() && above().is_some() => above(),
            None => {
                // Only the explicit kubelet phrases start a failure of their own.
                let explicit = is_state_row(m)
                    || contains_any(
                        &m.text,
                        &[
                            "error: errimagepull",
                            "error: imagepullbackoff",
                            "error: invalidimagename",
                            "error: errimageneverpull",
                        ],
                    );
                if explicit {
                    match failures.iter().position(|f| f.image.is_none()) {
                        Some(i) => Some(i),
                        None => {
                            failures.push(PullFailure::default());
                            Some(failures.len() - 1)
                        }
                    }
                } else {
                    None
                }
            }
        };
        if let Some(i) = index {
            let f = &mut failures[i];
            f.messages.push(m);
            if let Some(p) = pod {
                add_pod(&mut f.pods, p);
            }
        }
    }

    // A failure that names no image: a `kubectl get pod -o jsonpath='{..image}'` line the
    // paste shows, when it names exactly one image.
    if let [only] = bare_images(facts).as_slice() {
        if let Some(f) = failures.iter_mut().find(|f| f.image.is_none()) {
            f.image = Some(only.clone());
        }
    }

    // A failure with no pod yet: the pod objects that use the image.
    for f in &mut failures {
        if !f.pods.is_empty() {
            continue;
        }
        let Some(image) = &f.image else { continue };
        let key = image.normalized();
        for pod in &facts.pods {
            let uses = pod
                .containers
                .iter()
                .chain(pod.init_containers.iter())
                .find(|c| {
                    c.image
                        .as_deref()
                        .and_then(ImageRef::parse)
                        .is_some_and(|i| i.normalized() == key)
                });
            if let Some(c) = uses {
                add_pod(&mut f.pods, pod.object_ref());
                if !f.containers.contains(&c.name) {
                    f.containers.push(c.name.clone());
                }
            }
        }
    }
    // A pull of the same image that succeeded after the last failure, in the same paste, while
    // no container state says it is still waiting on the pull.
    for f in &mut failures {
        let (Some(image), Some(last)) =
            (&f.image, f.messages.iter().max_by_key(|m| m.evidence.line))
        else {
            continue;
        };
        if !f.states.is_empty() {
            continue;
        }
        let key = image.normalized();
        f.recovered = facts.messages.iter().find(|m| {
            m.evidence.source == last.evidence.source
                && m.evidence.line > last.evidence.line
                && contains_ignore_ascii_case(&m.text, "successfully pulled image")
                && image_in(&m.text).is_some_and(|i| i.normalized() == key)
        });
    }
    // A pod named nowhere else (a describe's Events section pasted alone): the scheduler's
    // `Successfully assigned <ns>/<pod> to <node>` row above the failure, in the same source.
    for f in &mut failures {
        if !f.pods.is_empty() {
            continue;
        }
        let Some(first) = f.messages.iter().min_by_key(|m| m.evidence.line) else {
            continue;
        };
        // The `kubectl describe pod <name>` prompt the events are the output of names it.
        if let Some(pod) = described_pod(facts, &first.evidence.source, first.evidence.line) {
            f.pods.push(pod);
            continue;
        }
        // Only within the same command's output: an earlier describe's `Scheduled` row is
        // another pod's.
        let start = section_start(facts, &first.evidence.source, first.evidence.line);
        let assigned = facts
            .messages
            .iter()
            .filter(|m| {
                m.evidence.source == first.evidence.source
                    && m.evidence.line > start
                    && m.evidence.line < first.evidence.line
            })
            .filter_map(|m| Some((m.evidence.line, scheduled_pod(&m.text)?)))
            .max_by_key(|(l, _)| *l);
        if let Some((_, pod)) = assigned {
            f.pods.push(pod);
        }
    }
    // A pod named only by a status row still gets its namespace from the pod object.
    for f in &mut failures {
        crate::rules::sort_stable_by(&mut f.messages, |a, b| {
            (&a.evidence.source, a.evidence.line).cmp(&(&b.evidence.source, b.evidence.line))
        });
        // Else the `-n <ns>` of the prompt whose output the failure is in
        // (`kubectl get events -n jobs`: rows say `pod/<name>` only).
        let prompt_ns = f.messages.first().and_then(|m| {
            prompt_above(facts, &m.evidence.source, m.evidence.line)
                .filter(|c| c.tool == "kubectl" && !c.all_namespaces)
                .and_then(|c| c.namespace.clone())
        });
        for p in &mut f.pods {
            if p.namespace.is_none() {
                if let Some(obj) = facts.pods.iter().find(|o| o.meta.name == p.name) {
                    p.namespace = obj.meta.namespace.clone();
                }
            }
            if p.namespace.is_none() {
                p.namespace = prompt_ns.clone();
            }
        }
    }
    failures
}

/// The sentence shared by KW001 and KW002: who cannot pull what, from where.
pub fn subject(f: &PullFailure<'_>) -> String {
    let who = match f.pod_names().as_slice() {
        [] => "A pod".to_string(),
        [one] => format!("Pod {one}"),
        many => format!("Pods {}", many.join(", ")),
    };
    match &f.image {
        Some(image) => {
            let registry = match image.kind() {
                RegistryKind::Public => format!("the public registry {}", image.registry),
                RegistryKind::EcrPrivate { account, region } => {
                    format!("the private ECR registry of account {account} in {region}")
                }
                RegistryKind::Private => format!("the private registry {}", image.registry),
            };
            let verb = if f.recovered.is_some() {
                "failed to pull"
            } else {
                "cannot pull"
            };
            format!("{who} {verb} image {} from {registry}", image.raw)
        }
        None => format!("{who} cannot pull its image (the evidence does not name the image)"),
    }
}

/// The sentence that says the failure is over for now, when a later pull succeeded.
pub fn recovered_note(f: &PullFailure<'_>) -> Option<&'static str> {
    f.recovered.map(|_| {
        " A later pull of the same image succeeded, so the pod runs now: the failure comes back with the next pull (a restart on a new node, a reschedule after consolidation, a scale-up)."
    })
}

/// `timeout (DeadlineExceeded ...)`-style list of the error classes.
pub fn classes_phrase(f: &PullFailure<'_>) -> String {
    f.classes()
        .iter()
        .map(|c| c.describe())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The workload and container a `kubectl set image` needs, from the pod's owner, or from the
/// naming conventions `<deployment>-<pod-template-hash>-<suffix>` and `<statefulset>-<ordinal>`
/// when the input has no pod object.
pub fn owner_workload(facts: &Facts, pod: &ObjectRef) -> Option<(String, String)> {
    // `<statefulset>-<ordinal>`: generated suffixes (Jobs, DaemonSets) are five characters, so
    // a short all-digit one is an ordinal.
    let by_name = || {
        crate::rules::names::deployment_of_pod(&pod.name)
            .map(|name| ("deployment".to_string(), name.to_string()))
            .or_else(|| {
                let (base, ordinal) = pod.name.rsplit_once('-')?;
                (!base.is_empty()
                    && (1..=4).contains(&ordinal.len())
                    && ordinal.chars().all(|c| c.is_ascii_digit()))
                .then(|| ("statefulset".to_string(), base.to_string()))
            })
    };
    let Some(obj) = facts.pods.iter().find(|p| p.meta.name == pod.name) else {
        return by_name();
    };
    // A describe trimmed above `Controlled By:` leaves the pod without owners: the name
    // convention still holds.
    let Some(owner) = obj.meta.owners.first() else {
        return by_name();
    };
    match owner.kind.as_str() {
        "ReplicaSet" => {
            let hash = obj.meta.labels.get("pod-template-hash");
            let name = match hash {
                Some(h) => owner
                    .name
                    .strip_suffix(&format!("-{h}"))
                    .unwrap_or(&owner.name)
                    .to_string(),
                None => owner
                    .name
                    .rsplit_once('-')
                    .map(|(d, _)| d.to_string())
                    .unwrap_or_else(|| owner.name.clone()),
            };
            Some(("deployment".to_string(), name))
        }
        "StatefulSet" => Some(("statefulset".to_string(), owner.name.clone())),
        "DaemonSet" => Some(("daemonset".to_string(), owner.name.clone())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_references() {
        let r = ImageRef::parse("nginx:1.27").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str()),
            ("docker.io", "library/nginx")
        );
        assert_eq!(r.tag.as_deref(), Some("1.27"));
        let r = ImageRef::parse("bitnami/redis").unwrap();
        assert_eq!(
            (r.registry.as_str(), r.repository.as_str(), r.tag.as_deref()),
            ("docker.io", "bitnami/redis", None)
        );
        let r = ImageRef::parse("localhost/app:1").unwrap();
        assert_eq!(r.registry, "localhost");
        let r = ImageRef::parse("host.minikube.internal:5000/yatri-trips:1.1.0").unwrap();
        assert_eq!(r.registry, "host.minikube.internal:5000");
        assert_eq!(r.kind(), RegistryKind::Private);
        let r = ImageRef::parse("registry.k8s.io/ingress-nginx/controller:v1.11.1@sha256:e643")
            .unwrap();
        assert_eq!(r.repository, "ingress-nginx/controller");
        assert_eq!(r.digest.as_deref(), Some("sha256:e643"));
        assert_eq!(
            ImageRef::parse("docker.io/library/nginx:1.27")
                .unwrap()
                .normalized(),
            ImageRef::parse("nginx:1.27").unwrap().normalized()
        );
        assert_eq!(
            ImageRef::parse("registry-1.docker.io/library/busybox")
                .unwrap()
                .registry,
            "docker.io"
        );
        assert!(ImageRef::parse("").is_none());
    }

    #[test]
    fn registry_kinds() {
        for public in [
            "registry.k8s.io",
            "k8s.gcr.io",
            "gcr.io",
            "us.gcr.io",
            "us-west2-docker.pkg.dev",
            "docker.io",
            "quay.io",
            "ghcr.io",
            "public.ecr.aws",
        ] {
            assert_eq!(registry_kind(public), RegistryKind::Public, "{public}");
        }
        assert_eq!(
            registry_kind("444455556666.dkr.ecr.us-west-2.amazonaws.com"),
            RegistryKind::EcrPrivate {
                account: "444455556666".into(),
                region: "us-west-2".into()
            }
        );
        assert_eq!(registry_kind("harbor.example.com"), RegistryKind::Private);
    }

    #[test]
    fn classifies_errors() {
        let cases = [
            ("rpc error: code = DeadlineExceeded desc = failed to pull and unpack image: dial tcp 74.125.203.82:443: i/o timeout", ErrorClass::Timeout),
            ("dial tcp: lookup registry.k8s.io on 10.0.0.2:53: no such host", ErrorClass::Dns),
            ("dial tcp: lookup quay.io on 172.20.0.10:53: dial udp 172.20.0.10:53: connect: network is unreachable", ErrorClass::Dns),
            ("dial tcp: lookup registry-1.docker.io on 172.20.0.10:53: read udp 10.0.1.1:5353->172.20.0.10:53: i/o timeout", ErrorClass::Dns),
            ("dial tcp 74.125.20.82:443: connect: connection refused", ErrorClass::ConnectionRefused),
            ("read tcp 10.2.0.49:42728->23.20.95.219:443: read: connection reset by peer", ErrorClass::ConnectionReset),
            ("unexpected status from HEAD request to https://quay.io/v2/x/manifests/1: 503 Service Unavailable", ErrorClass::ServerError),
            ("failed to authorize: failed to fetch anonymous token: unexpected status: 502 Bad Gateway", ErrorClass::ServerError),
            ("429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.", ErrorClass::RateLimited),
            ("net/http: TLS handshake timeout", ErrorClass::Timeout),
            ("context deadline exceeded", ErrorClass::Timeout),
            ("Get https://registry-1.docker.io/v2/: net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)", ErrorClass::Timeout),
            ("manifest unknown: Requested entity was not found.", ErrorClass::NotFound),
            ("docker.io/library/client1:latest: not found", ErrorClass::NotFound),
            ("unexpected status code [manifests 5]: 401 Unauthorized", ErrorClass::Unauthorized),
            ("no basic auth credentials", ErrorClass::Unauthorized),
            ("unexpected status code 403 Forbidden", ErrorClass::AccessDenied),
            ("pull access denied for nginxs, repository does not exist or may require 'docker login': denied: requested access to the resource is denied", ErrorClass::AccessDenied),
            ("image pull failed for x because the registry is unavailable.", ErrorClass::RegistryUnavailable),
            ("rpc error: code = Canceled desc = failed to pull and unpack image \"registry.k8s.io/pause@sha256:1\": context canceled", ErrorClass::Canceled),
            ("rpc error: code = Canceled desc = failed to pull and unpack image: failed to resolve reference: pull access denied", ErrorClass::AccessDenied),
            ("failed to extract layer: no space left on device", ErrorClass::Unclassified),
        ];
        for (text, class) in cases {
            assert_eq!(classify(text), class, "{text}");
        }
    }

    fn message(text: &str) -> Message {
        Message {
            text: text.to_string(),
            ..Default::default()
        }
    }

    /// Two `kubectl describe pod` outputs in one paste: each failure belongs to the pod its
    /// prompt names (not to the earlier describe's `Scheduled` row), and the second pod's
    /// `Error: ErrImagePull` joins its own failure instead of starting an imageless one.
    #[test]
    fn each_describe_section_keeps_its_own_pod() {
        let text = r#"$ kubectl describe pod web-6d5f-abcde -n shop | tail -4
  Normal   Scheduled  7m  default-scheduler  Successfully assigned shop/web-6d5f-abcde to ip-10-0-1-2.ec2.internal
  Warning  Failed     5m  kubelet            Failed to pull image "registry.k8s.io/pause:3.9": rpc error: code = DeadlineExceeded desc = dial tcp 10.1.1.1:443: i/o timeout
  Warning  Failed     5m  kubelet            Error: ErrImagePull
$ kubectl describe pod worker-7c8d-p2x7m -n billing | tail -3
  Warning  Failed     3m  kubelet            Failed to pull image "111122223333.dkr.ecr.eu-central-1.amazonaws.com/billing/worker:2.14.0": rpc error: code = NotFound desc = not found
  Warning  Failed     3m  kubelet            Error: ErrImagePull
"#;
        let facts = crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        let failures = pull_failures(&facts);
        assert_eq!(failures.len(), 2, "{failures:?}");
        let pods: Vec<Vec<String>> = failures.iter().map(|f| f.pod_names()).collect();
        assert_eq!(pods[0], ["shop/web-6d5f-abcde"]);
        assert_eq!(pods[1], ["billing/worker-7c8d-p2x7m"]);
        assert_eq!(failures[1].pods[0].namespace.as_deref(), Some("billing"));
        assert_eq!(failures[1].messages.len(), 2);
    }

    /// `pod/<name>` rows of `kubectl get events -n <ns>` take the namespace of that prompt.
    #[test]
    fn event_rows_take_the_prompt_namespace() {
        let text = "$ kubectl get events -n jobs | grep -i pull\n12m   Warning   Failed    pod/etl-runner-5b7c9-xk2p4    Failed to pull image \"acme/etl:2.3.1\": rpc error: code = Unknown desc = pull access denied, repository does not exist or may require authorization\n";
        let facts = crate::ingest::ingest(&[crate::Document::new("paste", text)]);
        let failures = pull_failures(&facts);
        assert_eq!(failures[0].pods[0].namespace.as_deref(), Some("jobs"));
        let all = text.replace("-n jobs", "-A");
        let facts = crate::ingest::ingest(&[crate::Document::new("paste", &all)]);
        assert_eq!(pull_failures(&facts)[0].pods[0].namespace, None);
    }

    #[test]
    fn groups_by_image_and_attaches_status_lines() {
        let mut facts = Facts::default();
        for t in [
            r#"Warning  Failed  92s  kubelet  Failed to pull image "registry.k8s.io/ingress-nginx/controller:v1.11.2": rpc error: code = DeadlineExceeded desc = failed to do request: Head "https://us-west2-docker.pkg.dev/v2/x": dial tcp 74.125.203.82:443: i/o timeout"#,
            "Warning  Failed  92s  kubelet  Error: ErrImagePull",
            r#"Normal  BackOff  15s  kubelet  Back-off pulling image "registry.k8s.io/ingress-nginx/controller:v1.11.2""#,
            "ingress-nginx-controller-7c9f8d6b5-2xkqp    0/1     ImagePullBackOff   0          4m10s",
        ] {
            facts.messages.push(message(t));
        }
        let failures = pull_failures(&facts);
        assert_eq!(failures.len(), 1);
        let f = &failures[0];
        assert_eq!(f.messages.len(), 4);
        assert_eq!(f.classes(), [ErrorClass::Timeout]);
        assert_eq!(f.pod_names(), ["ingress-nginx-controller-7c9f8d6b5-2xkqp"]);
        assert_eq!(
            f.redirected_host().as_deref(),
            Some("us-west2-docker.pkg.dev")
        );
        assert_eq!(f.verdict(), Verdict::PublicRegistryUnavailable);
    }

    #[test]
    fn newer_kubelet_back_off_carries_the_cause() {
        let mut facts = Facts::default();
        facts.messages.push(message(
            r#"Back-off pulling image "nginxs": ErrImagePull: Error response from daemon: pull access denied for nginxs, repository does not exist"#,
        ));
        let f = &pull_failures(&facts)[0];
        assert_eq!(f.classes(), [ErrorClass::AccessDenied]);
        assert_eq!(f.verdict(), Verdict::PullFailed);
    }

    #[test]
    fn journal_lines() {
        let mut facts = Facts::default();
        facts.messages.push(message(
            r#"E0723 22:57:43.256904  197244 pod_workers.go:1301] "Error syncing pod, skipping" err="failed to \"StartContainer\" for \"redis\" with ImagePullBackOff: \"Back-off pulling image \\\"redis:alpine\\\": ErrImagePull: failed to do request: Head \\\"https://registry-1.docker.io/v2/library/redis/manifests/alpine\\\": dial tcp 162.220.12.226:443: connect: connection refused\"" pod="default/redis""#,
        ));
        facts.messages.push(message(
            r#"E0501 12:00:45.333 1234 kuberuntime_image.go:55] "Failed to pull image" err="rpc error: code = Unknown desc = quay.io/x/y:1: not found" image="quay.io/x/y:1""#,
        ));
        let failures = pull_failures(&facts);
        assert_eq!(failures.len(), 2);
        assert_eq!(
            failures[0].image.as_ref().unwrap().repository,
            "library/redis"
        );
        assert_eq!(failures[0].classes(), [ErrorClass::ConnectionRefused]);
        assert_eq!(failures[0].pod_names(), ["default/redis"]);
        assert_eq!(failures[1].classes(), [ErrorClass::NotFound]);
    }

    #[test]
    fn back_off_only_has_no_cause() {
        let mut facts = Facts::default();
        facts
            .messages
            .push(message(r#"Back-off pulling image "nginx:1.27""#));
        facts.messages.push(message("Error: ImagePullBackOff"));
        let f = &pull_failures(&facts)[0];
        assert!(f.cause_unknown());
        assert_eq!(f.messages.len(), 2);
        assert_eq!(f.verdict(), Verdict::PublicRegistryUnavailable);
    }

    #[test]
    fn near_misses_are_not_failures() {
        for t in [
            r#"Pulling image "nginx:1.27""#,
            r#"Successfully pulled image "nginx:1.27" in 4.873s"#,
            "ErrImagePull is a container state reason",
        ] {
            let mut facts = Facts::default();
            facts.messages.push(message(t));
            assert!(pull_failures(&facts).is_empty(), "{t}");
        }
    }
}
