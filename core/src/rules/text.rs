//! Text and naming helpers shared by rules of several groups: pulling a quoted value or a
//! token out of a message, and the names a remediation needs that the facts only imply (the
//! Karpenter namespace, the AWS region and account, the cluster name).

use crate::facts::find_ignore_ascii_case;
use crate::facts::{contains_ignore_ascii_case, Facts, Message, MessageOrigin, ObjectRef};
use crate::rules::kw2xx::scheduling::record_of;

/// Whether `text` contains any of `needles`, ASCII-case-insensitively.
pub fn contains_any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| contains_ignore_ascii_case(text, n))
}

/// An anonymiser's mask standing for a name: `<redacted>`, `[REDACTED]`, `<nodeclaim-1>`,
/// `REDACTED-1`, `***`, `xxxxx`. It says nothing of what the name was (which NodePool a
/// NodeClaim's name starts with).
pub fn is_mask(name: &str) -> bool {
    let n = name.trim();
    let bracketed = n
        .strip_prefix('<')
        .and_then(|r| r.strip_suffix('>'))
        .or_else(|| n.strip_prefix('[').and_then(|r| r.strip_suffix(']')));
    bracketed.is_some_and(|inner| !inner.is_empty())
        || (!n.is_empty() && n.chars().all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '-')))
        || contains_ignore_ascii_case(n, "redacted")
}

/// A mask that every masked object shares ([`is_mask`] without a number): it cannot tell
/// objects apart. A numbered mask (`<node-1>`, as `karpenter-why --redact` writes) can.
pub fn is_unnumbered_mask(name: &str) -> bool {
    is_mask(name) && !name.chars().any(|c| c.is_ascii_digit())
}

/// `s` with its first letter upper-cased. ASCII only: the texts it starts (subject labels,
/// agent names) begin with a word of ours or a Kubernetes kind, and leaving out Unicode case
/// mapping keeps its tables (12 KB gzipped) out of the web page's module.
pub fn capitalised(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_ascii_uppercase().to_string() + chars.as_str(),
        None => String::new(),
    }
}

/// The double-quoted value right after `marker` (case-insensitive), tolerating the backslash
/// escapes a value picks up when a log line quotes it once or twice (`\"x\"`, `\\\"x\\\"`).
/// `None` when no quote follows or the value is empty.
pub fn quoted_after(text: &str, marker: &str) -> Option<String> {
    let start = find_ignore_ascii_case(text, marker)? + marker.len();
    quoted_at(&text[start..])
}

/// Every double-quoted value that follows an occurrence of `marker`, in order.
pub fn all_quoted_after(text: &str, marker: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = find_ignore_ascii_case(rest, marker) {
        rest = &rest[i + marker.len()..];
        if let Some(v) = quoted_at(rest) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// The quoted value at the start of `rest` (after optional spaces and backslashes).
fn quoted_at(rest: &str) -> Option<String> {
    let rest = rest.trim_start_matches([' ', '\\']);
    let rest = rest.strip_prefix('"')?;
    // A space right after the quote means this quote closed something else.
    if rest.starts_with(char::is_whitespace) {
        return None;
    }
    let value: String = rest
        .chars()
        .take_while(|c| *c != '"' && *c != '\\')
        .collect();
    (!value.is_empty()).then_some(value)
}

/// The whitespace-delimited token right after `marker` (case-insensitive), without trailing
/// punctuation (`.,;:)"`).
pub fn token_after(text: &str, marker: &str) -> Option<String> {
    let start = find_ignore_ascii_case(text, marker)? + marker.len();
    let token: String = text[start..]
        .trim_start()
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '"' && *c != '\\' && *c != ',')
        .collect();
    let token = token
        .trim_end_matches(['.', ',', ';', ':', ')'])
        .to_string();
    (!token.is_empty()).then_some(token)
}

/// The namespace Karpenter runs in, when the input reveals it: the facts' own value, the
/// Karpenter Deployment, a Karpenter pod, or a `kubectl ... -n <ns>` command that reads
/// Karpenter's logs or Deployment.
pub fn karpenter_namespace(facts: &Facts) -> Option<String> {
    if let Some(ns) = &facts.karpenter_namespace {
        return Some(ns.clone());
    }
    if let Some(ns) = facts
        .karpenter_deployment()
        .and_then(|d| d.meta.namespace.clone())
    {
        return Some(ns);
    }
    if let Some(ns) = facts
        .pods
        .iter()
        .filter(|p| p.meta.name.starts_with("karpenter-"))
        .find_map(|p| p.meta.namespace.clone())
    {
        return Some(ns);
    }
    // An event about one of its pods (`kubectl get events -A`: `kube-system   pod/karpenter-...`).
    if let Some(ns) = facts
        .events
        .iter()
        .filter_map(|e| e.object.as_ref())
        .filter(|o| o.kind == "Pod" && controller_pod_name(&o.name))
        .find_map(|o| o.namespace.clone())
    {
        return Some(ns);
    }
    // `<ns>/<pod>` in a text: `Successfully assigned karpenter/karpenter-6d9c7b8f5d-4xq2m to
    // ...`, a log exporter's `kube-system/karpenter-6d9c7b8f5d-4xq2m`.
    if let Some(ns) = facts
        .messages_containing_any(&["/karpenter-"])
        .find_map(|m| namespace_before_controller_pod(&m.text))
    {
        return Some(ns);
    }
    // A prompt line about Karpenter itself (`$ helm list -n kube-system | grep karpenter`,
    // `kubectl logs -n karpenter deploy/karpenter`), not one that only names its labels or
    // annotations (`kubectl annotate pod x -n shop karpenter.sh/do-not-disrupt-`).
    if let Some(ns) = facts
        .commands
        .iter()
        .filter(|c| c.tool == "kubectl" || c.tool == "helm")
        .filter(|c| names_karpenter_itself(&c.evidence.text))
        .find_map(|c| c.namespace.clone())
    {
        return Some(ns);
    }
    facts.messages.iter().find_map(|m| {
        let t = m.text.trim_start_matches(['$', ' ']);
        let command = t.starts_with("kubectl ") || t.starts_with("helm ");
        if !command || !names_karpenter_itself(t) {
            return None;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        words.iter().enumerate().find_map(|(i, w)| {
            if *w == "-n" || *w == "--namespace" {
                words.get(i + 1).map(|s| s.to_string())
            } else {
                w.strip_prefix("--namespace=")
                    .or_else(|| w.strip_prefix("-n="))
                    .map(str::to_string)
            }
        })
    })
}

/// Karpenter's own controller pods among the facts: labelled
/// `app.kubernetes.io/name=karpenter`, or named `karpenter-<hash>-<id>` in Karpenter's
/// namespace (`karpenter`, `kube-system`, or the one the input shows). A Pending one is the
/// reason Karpenter is silent, not one more pod it ignores: it never provisions for itself.
///
/// The labelled pods are found once, in [`KarpenterPods::new`], so a `kubectl get pods -A`
/// of thousands is not searched once per pod.
pub struct KarpenterPods<'f> {
    facts: &'f Facts,
    /// `(namespace, name)` of the pods labelled `app.kubernetes.io/name=karpenter`.
    labelled: std::collections::BTreeSet<(Option<&'f str>, &'f str)>,
}

impl<'f> KarpenterPods<'f> {
    pub fn new(facts: &'f Facts) -> Self {
        let labelled = facts
            .pods
            .iter()
            .filter(|p| p.meta.label("app.kubernetes.io/name") == Some("karpenter"))
            .map(|p| (p.meta.namespace.as_deref(), p.meta.name.as_str()))
            .collect();
        KarpenterPods { facts, labelled }
    }

    pub fn contains(&self, pod: &ObjectRef) -> bool {
        let labelled = match pod.namespace.as_deref() {
            Some(ns) => self.labelled.contains(&(Some(ns), pod.name.as_str())),
            None => self.labelled.iter().any(|(_, name)| *name == pod.name),
        };
        if labelled {
            return true;
        }
        if !controller_pod_name(&pod.name) {
            return false;
        }
        let namespace = pod.namespace.clone().or_else(|| {
            self.facts
                .pods
                .iter()
                .find(|p| p.meta.name == pod.name)
                .and_then(|p| p.meta.namespace.clone())
        });
        namespace.is_none_or(|ns| {
            matches!(ns.as_str(), "karpenter" | "kube-system")
                || self.facts.karpenter_namespace.as_deref() == Some(ns.as_str())
        })
    }
}

/// A Karpenter controller pod's name: `karpenter-<ReplicaSet hash>-<5 characters>`.
fn controller_pod_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("karpenter-") else {
        return false;
    };
    let alnum = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    };
    matches!(rest.split_once('-'), Some((hash, pod)) if (6..=10).contains(&hash.len()) && alnum(hash) && pod.len() == 5 && alnum(pod))
}

/// The `<ns>` of the first `<ns>/karpenter-<hash>-<id>` in `text`. A path or URL
/// (`github.com/aws/karpenter-provider-aws`) names no pod.
fn namespace_before_controller_pod(text: &str) -> Option<String> {
    let label = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    text.match_indices("/karpenter-").find_map(|(at, _)| {
        let pod: String = text[at + 1..].chars().take_while(|c| label(*c)).collect();
        let head = &text[..at];
        let ns_start = head.rfind(|c: char| !label(c)).map_or(0, |i| i + 1);
        let ns = &head[ns_start..];
        let before = head[..ns_start].chars().last();
        // `pod/karpenter-...` is kubectl's kind prefix (`kubectl logs --prefix` writes
        // `[pod/<pod>/<container>]`, events print `pod/<pod>`), not a namespace.
        let kind = matches!(ns, "pod" | "pods");
        (controller_pod_name(&pod)
            && !ns.is_empty()
            && !kind
            && !matches!(before, Some('/' | '.' | ':')))
        .then(|| ns.to_string())
    })
}

/// Whether `text` names Karpenter itself (its Deployment, pods, release, label value): a
/// `karpenter` not followed by `.` (`karpenter.sh/...`, `karpenter.k8s.aws/...` are API groups
/// and label keys on anyone's objects).
fn names_karpenter_itself(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower
        .match_indices("karpenter")
        .any(|(at, word)| !lower[at + word.len()..].starts_with('.'))
}

/// `karpenter_namespace`, or a placeholder that says where to look.
pub fn karpenter_namespace_or_placeholder(facts: &Facts) -> String {
    karpenter_namespace(facts).unwrap_or_else(|| "<karpenter-namespace>".to_string())
}

/// The AWS region, from the zones and provider IDs of nodes and NodeClaims, node region
/// labels, EC2 host names, or AWS endpoints quoted in messages.
pub fn aws_region(facts: &Facts) -> Option<String> {
    let from_zone = |zone: &str| {
        let z = zone.trim();
        let last = z.chars().last()?;
        (last.is_ascii_lowercase() && z.len() > 1 && z[..z.len() - 1].ends_with(char::is_numeric))
            .then(|| z[..z.len() - 1].to_string())
    };
    let from_provider_id = |id: &str| {
        // aws:///us-east-1b/i-0123
        let zone = id.strip_prefix("aws:///")?.split('/').next()?;
        from_zone(zone)
    };
    for n in &facts.nodes {
        if let Some(r) = n.meta.labels.get("topology.kubernetes.io/region") {
            return Some(r.clone());
        }
        if let Some(r) = n.provider_id.as_deref().and_then(from_provider_id) {
            return Some(r);
        }
    }
    for c in &facts.nodeclaims {
        if let Some(r) = c.zone.as_deref().and_then(from_zone) {
            return Some(r);
        }
        if let Some(r) = c.provider_id.as_deref().and_then(from_provider_id) {
            return Some(r);
        }
    }
    for m in &facts.messages {
        if let Some(r) = region_in_text(&m.text) {
            return Some(r);
        }
    }
    None
}

/// A region named by an AWS endpoint (`sts.us-east-1.amazonaws.com`,
/// `<acct>.dkr.ecr.eu-west-1.amazonaws.com`), an ARN, an EC2 host name
/// (`ip-10-0-1-2.eu-west-1.compute.internal`; `.ec2.internal` is us-east-1) or a provider ID.
pub fn region_in_text(text: &str) -> Option<String> {
    if let Some(i) = find_ignore_ascii_case(text, "aws:///") {
        let zone: String = text[i + 7..].chars().take_while(|c| *c != '/').collect();
        if zone.len() > 1 {
            return Some(zone[..zone.len() - 1].to_string());
        }
    }
    for word in text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '.')) {
        let parts: Vec<&str> = word.split('.').collect();
        for (i, p) in parts.iter().enumerate() {
            if is_region(p) {
                let next = parts.get(i + 1).copied().unwrap_or("");
                if next == "amazonaws" || next == "compute" {
                    return Some(p.to_string());
                }
            }
        }
        if word.ends_with(".ec2.internal") {
            return Some("us-east-1".to_string());
        }
    }
    None
}

/// `us-east-1`, `eu-central-2`, `ap-southeast-3`, `us-gov-west-1`, `cn-north-1`...
pub fn is_region(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    if parts.len() < 3 || parts.len() > 4 {
        return false;
    }
    let last = parts[parts.len() - 1];
    parts[0].len() == 2
        && parts[0].chars().all(|c| c.is_ascii_lowercase())
        && !last.is_empty()
        && last.chars().all(|c| c.is_ascii_digit())
        && parts[1..parts.len() - 1]
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase()))
}

/// The AWS account ID, from an ARN quoted in a message, a private ECR image, or a role ARN
/// of the objects in the facts.
pub fn aws_account(facts: &Facts) -> Option<String> {
    for m in &facts.messages {
        if let Some(a) = account_in_text(&m.text) {
            return Some(a);
        }
    }
    let images = facts
        .pods
        .iter()
        .flat_map(|p| p.containers.iter().chain(p.init_containers.iter()))
        .chain(facts.workloads.iter().flat_map(|w| w.containers.iter()))
        .filter_map(|c| c.image.as_deref());
    for image in images {
        if let Some(a) = ecr_account(image) {
            return Some(a);
        }
    }
    // Role ARNs the objects carry: IRSA annotations, aws-auth's mapRoles.
    facts
        .service_accounts
        .iter()
        .filter_map(|a| a.role_arn())
        .chain(
            facts
                .aws_auth
                .iter()
                .flat_map(|a| a.map_roles.iter().map(|r| r.role_arn.as_str())),
        )
        .find_map(account_in_text)
}

/// The account of an ARN (`arn:aws:iam::123456789012:role/x`, `arn:aws:sts::...`).
pub fn account_in_text(text: &str) -> Option<String> {
    let mut rest = text;
    while let Some(i) = rest.find("arn:aws") {
        rest = &rest[i..];
        // arn:partition:service:region:account:resource
        let fields: Vec<&str> = rest.splitn(6, ':').collect();
        if fields.len() == 6 {
            let account = fields[4];
            if account.len() == 12 && account.chars().all(|c| c.is_ascii_digit()) {
                return Some(account.to_string());
            }
        }
        rest = &rest[3..];
    }
    None
}

/// The account of a private ECR image (`123456789012.dkr.ecr.<region>.amazonaws.com/...`).
pub fn ecr_account(image: &str) -> Option<String> {
    let (account, rest) = image.split_once('.')?;
    (account.len() == 12
        && account.chars().all(|c| c.is_ascii_digit())
        && rest.starts_with("dkr.ecr"))
    .then(|| account.to_string())
}

/// [`cluster_name`], else the placeholder every command uses for it.
pub fn cluster_name_or_placeholder(facts: &Facts) -> String {
    cluster_name(facts).unwrap_or_else(|| "<cluster-name>".to_string())
}

/// The EKS cluster name: Karpenter's own setting (`CLUSTER_NAME` env, `--cluster-name`, helm
/// `settings.clusterName` / pre-v0.32 `settings.aws.clusterName`, the `aws.clusterName` of the
/// old `karpenter-global-settings` ConfigMap), else the usual `karpenter.sh/discovery`
/// selector tag of an EC2NodeClass.
pub fn cluster_name(facts: &Facts) -> Option<String> {
    const KEYS: &[&str] = &[
        "CLUSTER_NAME",
        "--cluster-name",
        "settings.clusterName",
        "settings.aws.clusterName",
        "aws.clusterName",
    ];
    // Container env and args are settings too; any controller's `--cluster-name` names the
    // same cluster.
    let setting = facts
        .settings_named(KEYS)
        .find(|s| !s.value.trim().is_empty())
        .map(|s| s.value.trim().to_string());
    // `helm upgrade ... --set settings.clusterName=prod` on a prompt line of the paste.
    let helm_set = || {
        facts
            .commands
            .iter()
            .filter(|c| c.tool == "helm")
            .flat_map(|c| c.evidence.text.split_whitespace())
            .find_map(|word| {
                word.split(',').find_map(|pair| {
                    let (key, value) = pair.split_once('=')?;
                    (KEYS.contains(&key) && !value.is_empty())
                        .then(|| value.trim_matches(['"', '\'']).to_string())
                })
            })
    };
    setting
        .or_else(helm_set)
        .or_else(|| {
            facts
                .nodeclasses
                .iter()
                .flat_map(|nc| {
                    (nc.subnet_selector_terms.iter()).chain(nc.security_group_selector_terms.iter())
                })
                .find_map(|t| {
                    t.get("tags")?
                        .get("karpenter.sh/discovery")?
                        .as_str()
                        .filter(|v| *v != "*")
                        .map(str::to_string)
                })
        })
        .or_else(|| {
            // `aws ec2 describe-subnets --filters Name=tag:karpenter.sh/discovery,Values=prod` on
            // a prompt line: the user looked the resources up by that tag.
            const FILTER: &str = "Name=tag:karpenter.sh/discovery,Values=";
            facts.commands.iter().find_map(|c| {
                let at = c.evidence.text.find(FILTER)? + FILTER.len();
                let value: String = c.evidence.text[at..]
                    .chars()
                    .take_while(|ch| !ch.is_whitespace() && !matches!(ch, ',' | '"' | '\'' | ' '))
                    .collect();
                (!value.is_empty() && value != "*" && !value.starts_with('<')).then_some(value)
            })
        })
}

/// The NodeClaim a message is about: the event's object, the log record's `NodeClaim` /
/// `nodeclaim` field, or `nodeclaim/<name>`, `NodeClaim <name> event:` and
/// `"NodeClaim":{"name":"<name>"}` in its text.
pub fn nodeclaim_of(facts: &Facts, m: &Message) -> Option<String> {
    if let Some(o) = m.object.as_ref().filter(|o| {
        o.kind.eq_ignore_ascii_case("nodeclaim") || o.kind.eq_ignore_ascii_case("machine")
    }) {
        return Some(o.name.clone());
    }
    if let Some(r) = record_of(facts, m) {
        // Before v0.32 a Machine: `"machine": "<name>"` (console) or `"Machine":{"name":...}`.
        if let Some(n) = ["NodeClaim", "nodeclaim", "Machine", "machine"]
            .iter()
            .find_map(|k| r.field_name(k).filter(|n| !n.is_empty()))
        {
            return Some(n);
        }
    }
    let name_from = |rest: &str| -> Option<String> {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '.')
            .collect();
        (!name.is_empty()).then_some(name)
    };
    if let Some(i) = find_ignore_ascii_case(&m.text, "nodeclaim/") {
        if let Some(n) = name_from(&m.text[i + "nodeclaim/".len()..]) {
            return Some(n);
        }
    }
    if let Some(q) = quoted_after(&m.text, "\"NodeClaim\":{\"name\":") {
        return Some(q);
    }
    let i = m.text.find("NodeClaim ")?;
    let rest = &m.text[i + "NodeClaim ".len()..];
    let name = name_from(rest)?;
    rest[name.len()..].starts_with(" event:").then_some(name)
}

/// The lines of karpenter-why's own report pasted back into the input (see
/// `Facts::own_report`): its advice and quotes are the tool's words, not facts of the cluster.
pub fn own_report_ranges(facts: &Facts) -> Vec<(String, usize, usize)> {
    facts.own_report.clone()
}

/// Whether a line lies in one of `ranges` (see [`own_report_ranges`]).
pub fn in_ranges(ranges: &[(String, usize, usize)], source: &str, line: usize) -> bool {
    ranges
        .iter()
        .any(|(s, a, b)| s == source && (*a..=*b).contains(&line))
}

/// The lower-cased words of `text`, trimmed of punctuation, and how many are plain words (two
/// or more letters) — `None` for a line that is a command, a setting, a YAML or JSON line or a
/// list item, or has fewer than four plain words: those are not prose.
fn sentence_words(text: &str) -> Option<Vec<String>> {
    let t = text.trim();
    let words: Vec<String> = t
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '\'')
                .to_ascii_lowercase()
        })
        .collect();
    let plain = words
        .iter()
        .filter(|w| w.len() > 1 && w.chars().all(|c| c.is_ascii_alphabetic() || c == '\''))
        .count();
    let command = t.starts_with(['$', '-', '#', '{', '"'])
        || ["kubectl ", "helm ", "export ", "k ", "oc "]
            .iter()
            .any(|c| t.starts_with(c));
    (!command && plain >= 4).then_some(words)
}

/// A question: ends with `?` or opens with a question word.
fn question(t: &str, words: &[String]) -> bool {
    const QUESTION: &[&str] = &[
        "should", "can", "could", "would", "do", "does", "did", "is", "are", "how", "why", "what",
        "when", "shall", "may", "will",
    ];
    t.trim_end().ends_with('?')
        || words
            .first()
            .is_some_and(|w| QUESTION.contains(&w.as_str()))
}

/// A line of prose that mentions a setting only as history or as a question: it ends with `?`
/// or opens with a question word, or it tells of a past that is over (`we had`, `was`,
/// `reverted`, `switched back`...). A setting line (`LOG_LEVEL=debug`, YAML, a command) is not prose.
pub fn past_or_question_prose(text: &str) -> bool {
    let Some(words) = sentence_words(text) else {
        return false;
    };
    // Words that say the setting is over; not `yesterday` or `ago` (`we set it yesterday`
    // means it is on now).
    const PAST: &[&str] = &[
        "had",
        "was",
        "were",
        "previously",
        "formerly",
        "reverted",
        "removed",
        "disabled",
        "anymore",
    ];
    const OVER: &[&str] = &[
        "used to",
        "turned off",
        "turned it off",
        "switched back",
        "switched off",
        "set back",
        "set it back",
        "no longer",
    ];
    let lower = text.to_ascii_lowercase();
    question(text, &words)
        || words.iter().any(|w| PAST.contains(&w.as_str()))
        || OVER.iter().any(|p| lower.contains(p))
}

/// Whether a message is a person's sentence that quotes a signal rather than the signal
/// itself (a forum question, `I read in the docs that ...`): text no parser recognised as a
/// log line, event, condition or field, that opens with a letter, has no column gaps (tab or
/// double space: event rows, console logs), no `Key:` field name first, and ends with `?` or
/// speaks as a person (`I`, `we`, `our`, `you`...) or of the documentation. Karpenter and
/// Kubernetes messages never say `I` or `we`; a question word alone is not enough (`could not
/// schedule pod` opens a log message).
pub fn quoting_prose(m: &Message) -> bool {
    const PERSON: &[&str] = &[
        "i",
        "i'm",
        "i've",
        "we",
        "we're",
        "we've",
        "our",
        "us",
        "my",
        "me",
        "you",
        "your",
        "anyone",
        "someone",
        "docs",
        "documentation",
        "says",
        "means",
    ];
    let t = m.text.trim();
    let Some(words) = sentence_words(t) else {
        return false;
    };
    // "We see this error: <message>" reports what the cluster printed; "the docs say:" or a
    // question does not.
    let reports_after_colon = !t.ends_with('?')
        && t.split_once(": ").is_some_and(|(intro, _)| {
            !intro.split_whitespace().any(|w| {
                let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric());
                ["docs", "documentation", "says", "say", "read", "means"]
                    .iter()
                    .any(|k| w.eq_ignore_ascii_case(k))
            })
        });
    m.origin == MessageOrigin::Unrecognised
        && !reports_after_colon
        && t.starts_with(|c: char| c.is_ascii_alphabetic())
        && !t.contains('\t')
        && !t.contains("  ")
        && !t
            .split_whitespace()
            .next()
            .is_some_and(|w| w.ends_with(':'))
        && (t.ends_with('?') || words.iter().any(|w| PERSON.contains(&w.as_str())))
}

#[cfg(test)]
mod tests {
    #[test]
    fn karpenter_namespace_from_a_pod_reference_in_text() {
        assert_eq!(
            namespace_before_controller_pod("Successfully assigned kube-system/karpenter-6d9c7b8f5d-4xq2m to ip-10-0-3-7.ec2.internal").as_deref(),
            Some("kube-system")
        );
        assert_eq!(
            namespace_before_controller_pod("pod=\"karpenter/karpenter-7f6b5c4d9-abc12\"")
                .as_deref(),
            Some("karpenter")
        );
        // A repository path, a chart, a Deployment are no pod.
        for text in [
            "see https://github.com/aws/karpenter-provider-aws/issues/1",
            "oci://public.ecr.aws/karpenter/karpenter-crd",
            "deployment.apps/karpenter-controller",
        ] {
            assert_eq!(namespace_before_controller_pod(text), None, "{text}");
        }
    }

    use super::*;

    #[test]
    fn masks_and_which_of_them_tell_objects_apart() {
        for mask in [
            "<redacted>",
            "[REDACTED]",
            "***",
            "xxxxx",
            "REDACTED-1",
            "<nodeclaim-1>",
        ] {
            assert!(is_mask(mask), "{mask}");
        }
        for name in ["general-5kx2p", "x-large-pool-abcde", "<>", ""] {
            assert!(!is_mask(name), "{name}");
        }
        assert!(is_unnumbered_mask("<redacted>") && is_unnumbered_mask("***"));
        assert!(!is_unnumbered_mask("<node-1>") && !is_unnumbered_mask("REDACTED-1"));
    }

    #[test]
    fn the_karpenter_namespace_comes_from_commands_about_karpenter_itself() {
        let ns = |text: &str| {
            karpenter_namespace(&crate::ingest::ingest(&[crate::Document::new(
                "paste", text,
            )]))
        };
        assert_eq!(
            ns("$ helm list -n kube-system | grep karpenter\nkarpenter  kube-system  4  deployed  karpenter-1.1.1  1.1.1\n").as_deref(),
            Some("kube-system")
        );
        assert_eq!(
            ns("$ kubectl logs -n karpenter deploy/karpenter --tail=5\n").as_deref(),
            Some("karpenter")
        );
        // Karpenter's annotation on someone else's pod says nothing of Karpenter's namespace.
        assert_eq!(
            ns("$ kubectl annotate pod web-0 -n shop karpenter.sh/do-not-disrupt-\npod/web-0 annotated\n"),
            None
        );
    }
    use crate::facts::{Message, NodeClaim};

    #[test]
    fn capitalised_upper_cases_an_ascii_first_letter() {
        assert_eq!(capitalised("node a, NodeClaim b"), "Node a, NodeClaim b");
        assert_eq!(capitalised("the node"), "The node");
        assert_eq!(capitalised("Cilium"), "Cilium");
        assert_eq!(capitalised(""), "");
    }

    #[test]
    fn quoted_values_with_escapes() {
        assert_eq!(
            quoted_after(r#"Failed to pull image "nginx:1.27": x"#, "pull image").as_deref(),
            Some("nginx:1.27")
        );
        assert_eq!(
            quoted_after(
                r#"Back-off pulling image \\\"redis:alpine\\\": x"#,
                "pulling image"
            )
            .as_deref(),
            Some("redis:alpine")
        );
        assert_eq!(
            quoted_after(r#""Failed to pull image" err="x""#, "pull image"),
            None
        );
        assert_eq!(
            all_quoted_after(
                r#"unknown field "a.b", unknown field "c""#,
                "unknown field "
            ),
            ["a.b", "c"]
        );
    }

    #[test]
    fn tokens() {
        assert_eq!(
            token_after(
                "is not authorized to perform: ec2:RunInstances on resource",
                "perform:"
            )
            .as_deref(),
            Some("ec2:RunInstances")
        );
        assert_eq!(
            token_after("call ec2:CreateFleet.", "call ").as_deref(),
            Some("ec2:CreateFleet")
        );
        assert_eq!(token_after("perform:", "perform:"), None);
    }

    #[test]
    fn regions_and_accounts() {
        assert!(is_region("us-east-1") && is_region("us-gov-west-1") && !is_region("us-east"));
        assert_eq!(
            region_in_text(r#"Post "https://sts.eu-west-1.amazonaws.com/": dial tcp"#).as_deref(),
            Some("eu-west-1")
        );
        assert_eq!(
            region_in_text("assigned x to ip-10-0-33-12.ec2.internal").as_deref(),
            Some("us-east-1")
        );
        assert_eq!(region_in_text("i/o timeout"), None);
        assert_eq!(
            account_in_text("User: arn:aws:sts::111122223333:assumed-role/k/1 is not").as_deref(),
            Some("111122223333")
        );
        assert_eq!(
            ecr_account("444455556666.dkr.ecr.us-west-2.amazonaws.com/media/x:1").as_deref(),
            Some("444455556666")
        );
        let mut facts = Facts::default();
        facts.nodeclaims.push(NodeClaim {
            zone: Some("eu-north-1a".into()),
            ..Default::default()
        });
        assert_eq!(aws_region(&facts).as_deref(), Some("eu-north-1"));
    }

    #[test]
    fn karpenter_namespace_from_a_logs_command() {
        let mut facts = Facts::default();
        facts.messages.push(Message {
            text: "$ kubectl logs -n karpenter deploy/karpenter --since=20m".into(),
            ..Default::default()
        });
        assert_eq!(karpenter_namespace(&facts).as_deref(), Some("karpenter"));
        facts.karpenter_namespace = Some("kube-system".into());
        assert_eq!(karpenter_namespace(&facts).as_deref(), Some("kube-system"));
    }

    #[test]
    fn a_logs_prefix_names_no_namespace() {
        let prefix = "[pod/karpenter-7c9d8f6b5-kq2lm/controller] 2024-04-03T05:10:12.003Z\tERROR";
        assert_eq!(namespace_before_controller_pod(prefix), None);
        let assigned = "Successfully assigned karpenter/karpenter-6d9c7b8f5d-4xq2m to ip-10-0-1-2";
        assert_eq!(
            namespace_before_controller_pod(assigned).as_deref(),
            Some("karpenter")
        );
    }

    #[test]
    fn cluster_name_from_settings_helm_flags_or_discovery_tags() {
        let of =
            |text: &str| cluster_name(&crate::ingest::ingest(&[crate::Document::new("t", text)]));
        assert_eq!(
            of("$ aws ec2 describe-subnets --filters Name=tag:karpenter.sh/discovery,Values=prod-eks --output table\n").as_deref(),
            Some("prod-eks")
        );
        assert_eq!(
            of("$ aws ec2 describe-subnets --filters \"Name=tag:karpenter.sh/discovery,Values=<cluster-name>\"\n"),
            None
        );
        assert_eq!(
            of("$ helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter -n kube-system --set settings.clusterName=prod-eu,settings.interruptionQueue=prod-eu\n")
                .as_deref(),
            Some("prod-eu")
        );
        assert_eq!(
            of("settings:\n  clusterName: staging\n  interruptionQueue: staging\n").as_deref(),
            Some("staging")
        );
        assert_eq!(
            of("apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata:\n  name: default\nspec:\n  securityGroupSelectorTerms:\n    - tags:\n        karpenter.sh/discovery: blue\n").as_deref(),
            Some("blue")
        );
        assert_eq!(of("$ helm list -A\n"), None);
    }

    #[test]
    fn past_or_question_prose_reads_history_and_questions() {
        for t in [
            "We had LOG_LEVEL=debug on the karpenter deployment last week but reverted it.",
            "Should I set logLevel: debug in the karpenter helm values to see more?",
            "karpenter used to run with LOG_LEVEL=debug until the upgrade",
            "We switched back from LOG_LEVEL=debug to info this morning",
        ] {
            assert!(past_or_question_prose(t), "{t}");
        }
        for t in [
            "LOG_LEVEL=debug",
            "      LOG_LEVEL:  debug",
            "$ kubectl set env deployment/karpenter -n karpenter LOG_LEVEL=debug",
            "helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --set logLevel=debug",
            "We set LOG_LEVEL=debug on karpenter yesterday to chase this",
            "Karpenter currently runs with LOG_LEVEL=debug in production",
        ] {
            assert!(!past_or_question_prose(t), "{t}");
        }
    }

    #[test]
    fn quoting_prose_is_a_persons_sentence_not_a_pasted_line() {
        let msg = |text: &str, origin| Message {
            text: text.into(),
            origin,
            ..Default::default()
        };
        const SIGNAL: &str =
            "NodePool requirements filtered out all compatible available instance types";
        for t in [
            format!("I read in the docs that \"{SIGNAL}\" can happen, our cluster is fine."),
            format!("What does {SIGNAL} mean for a spot pool?"),
            format!("The docs say NoCompatibleInstanceTypes is emitted when {SIGNAL}."),
        ] {
            assert!(quoting_prose(&msg(&t, MessageOrigin::Unrecognised)), "{t}");
        }
        for (t, origin) in [
            (SIGNAL.to_string(), MessageOrigin::Unrecognised),
            (format!("Getting this error: {SIGNAL}"), MessageOrigin::Unrecognised),
            (format!("Warning  NoCompatibleInstanceTypes  karpenter  {SIGNAL}"), MessageOrigin::Unrecognised),
            (format!("Message:  {SIGNAL}"), MessageOrigin::Unrecognised),
            ("could not schedule pod, incompatible with nodepool \"a\", filtered out all instance types".to_string(), MessageOrigin::Unrecognised),
            (format!("we {SIGNAL}"), MessageOrigin::Event),
        ] {
            assert!(!quoting_prose(&msg(&t, origin)), "{t}");
        }
    }
}
