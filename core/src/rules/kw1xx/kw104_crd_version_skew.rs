//! KW104 crd-version-skew.

use crate::document::Evidence;
use crate::facts::find_ignore_ascii_case;
use crate::facts::{Crd, Facts, Message, MessageOrigin, Meta};
use crate::rules::kw3xx::common::join_names;
use crate::rules::text::{
    all_quoted_after, capitalised, contains_any, karpenter_namespace, quoted_after,
};
use crate::rules::version;
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW104",
    slug: "crd-version-skew",
    title: "The Karpenter CRDs do not match the controller or the manifest",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The API server rejects, drops or cannot convert Karpenter objects because the installed
CustomResourceDefinitions are older (or newer) than the controller or the manifest being
applied.

Signals: `strict decoding error: unknown field "<field>"` (e.g. `NodePool in version "v1"
cannot be handled as a NodePool: strict decoding error: unknown field
"spec.template.spec.nodeClassRef.foo"`), kubectl's client-side `ValidationError(NodePool...):
unknown field "<field>"`, server-side apply's `failed to create typed patch object (...,
Kind=NodePool): .spec.template.spec.kubelet: field not declared in schema`, and the `unknown
field "<field>"` warnings of kubectl and helm, the
controller's `unknown field "status.nodeClassObservedGeneration"` and `unknown field
"status.conditions[0].observedGeneration"` (a v0.37+ controller on v0.36 CRDs), status writes
rejected by the schema (`NodeClaim.karpenter.sh "<name>" is invalid:
status.conditions[0].observedGeneration: ...`, `conditions[1].reason in body should be at least
1 chars long`); conversion failures
(`custom resource nodepools.karpenter.sh isn't configured for webhook conversion`, `conversion
webhook for karpenter.sh/v1beta1, Kind=NodePool failed: ...`, `request to convert CR from an
invalid group/version: karpenter.sh/v1beta1`); a CRD upgrade refused because objects are still
stored in the dropped version (`status.storedVersions[0]: Invalid value: "v1beta1": must appear
in spec.versions`); `no matches for kind "NodePool" in version "karpenter.sh/v1"`; and schema
rejections typical of an API-version migration (`EC2NodeClass.karpenter.k8s.aws "<name>" is
invalid: spec.amiSelectorTerms: Invalid value: "array": expected at least one, got none`,
`spec.disruption.consolidateAfter: Required value`, `Unsupported value: "WhenUnderutilized"`),
also in kubectl's several-causes form (`The EC2NodeClass "<name>" is invalid: ` then one
`* <field>: <cause>` line each). With CRD objects in the input (`kubectl get crd nodepools.karpenter.sh -o yaml`), the served
versions, conversion strategy and stored versions are compared with the manifests and the
controller's version.

## Why it happens
`helm upgrade` never upgrades CRDs in a chart's `crds/` directory, so upgrading the `karpenter`
chart alone leaves the old CRDs behind; the controller then writes status fields the CRD does
not know, and v1 manifests meet v1beta1 schemas. The reverse happens when a manifest written for
an older API (`v1beta1` fields such as `spec.kubeletConfiguration`) is applied to new CRDs, or
when the field is simply misspelt. Around v1.0 the CRDs serve v1beta1 and v1 through a
conversion webhook that must point at the Karpenter service; v1.1 drops v1beta1 and the webhook,
so every object must be stored as v1 before the CRDs are upgraded past v1.0.

## How to fix
A manifest field one or two letters off a field of the v1 CRDs (`httpPutResponseHopLimt`) is
reported as a likely typo first, as a warning: the API server dropped it, so correct the name.
Otherwise, upgrade the CRDs first, to the controller's version, then the controller (the Karpenter upgrade
guide): `helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd
--version <controller version> -n <ns>`. If the field is not in the new CRD either, it is a typo,
a field of a newer release than the controller (upgrade both, CRDs first), or a field that moved
(v1 moved `kubelet` from the NodePool to the EC2NodeClass and `expireAfter`
into `spec.template.spec`). For fields a release added the report names that release, and the
controller's version when the input shows it: `spec.disruption.budgets` (v0.34), budget
`reasons`, `terminationGracePeriod` and `amiSelectorTerms[].alias` (v1.0),
`capacityReservationSelectorTerms` (v1.3, with the `ReservedCapacity` feature gate). When the
controller predates the field too, both go to that release: the CRDs first, then the
controller. Before leaving v1.0, let a v1.0.x controller migrate the stored
objects to v1 and check `status.storedVersions` lists only `v1`.
"#,
};

const SIGNALS: &[&str] = &[
    "strict decoding error",
    "unknown field",
    "field not declared in schema",
    "isn't configured for webhook conversion",
    "conversion webhook for",
    "request to convert cr from",
    "failed to convert pruned object",
    "storedversions",
    "no matches for kind",
    "isn't valid for cluster",
    "could not find the requested resource",
    "is invalid:",
    "was not valid:",
    "in body should be at least",
    "crd is installed",
    "failed calling webhook",
];

/// Kinds and group names that make a text about Karpenter.
const KARPENTER_MARKERS: &[&str] = &[
    "karpenter",
    "nodepool",
    "nodeclaim",
    "ec2nodeclass",
    "provisioner",
    "awsnodetemplate",
];

/// Karpenter's kinds, with the CRD name each is served under.
const KARPENTER_KINDS: &[(&str, &str)] = &[
    ("NodePool", "nodepools.karpenter.sh"),
    ("NodeClaim", "nodeclaims.karpenter.sh"),
    ("EC2NodeClass", "ec2nodeclasses.karpenter.k8s.aws"),
    ("Provisioner", "provisioners.karpenter.sh"),
    ("Machine", "machines.karpenter.sh"),
    ("AWSNodeTemplate", "awsnodetemplates.karpenter.k8s.aws"),
];

/// Field names only Karpenter objects have: an `unknown field` warning naming one (without
/// its kind, as kubectl and helm print warnings) is about a Karpenter manifest.
const KARPENTER_FIELDS: &[&str] = &[
    "nodeClassRef",
    "providerRef",
    "kubeletConfiguration",
    "kubelet",
    "expireAfter",
    "consolidationPolicy",
    "consolidateAfter",
    "consolidation",
    "budgets",
    "ttlSecondsAfterEmpty",
    "ttlSecondsUntilExpired",
    "startupTaints",
    "terminationGracePeriod",
    "minValues",
    "amiSelectorTerms",
    "amiSelector",
    "amiFamily",
    "subnetSelectorTerms",
    "subnetSelector",
    "securityGroupSelectorTerms",
    "securityGroupSelector",
    "capacityReservationSelectorTerms",
    "instanceProfile",
    "instanceStorePolicy",
    "blockDeviceMappings",
    "metadataOptions",
    "associatePublicIPAddress",
    "detailedMonitoring",
    "nodeClassObservedGeneration",
];

/// Fields that moved between API versions, with where they went.
const MOVED_FIELDS: &[(&str, &str)] = &[
    (
        "kubeletConfiguration",
        "`spec.kubeletConfiguration` is the v1alpha5 Provisioner's field (the v1beta1 NodePool had `spec.template.spec.kubelet`, v1 has the EC2NodeClass's `spec.kubelet`): the manifest is older than the CRDs",
    ),
    (
        "spec.template.spec.kubelet",
        "In v1 the kubelet settings moved from the NodePool to the EC2NodeClass's `spec.kubelet`",
    ),
    (
        "spec.disruption.expireAfter",
        "In v1 `expireAfter` moved to the NodePool's `spec.template.spec.expireAfter`",
    ),
    (
        "consolidateAfter: Required value",
        "v1 requires `spec.disruption.consolidateAfter` (v1beta1 allowed it only with `WhenEmpty`): the manifest is a v1beta1 NodePool",
    ),
    (
        "\"WhenUnderutilized\"",
        "`WhenUnderutilized` is the v1beta1 policy; v1 calls it `WhenEmptyOrUnderutilized`",
    ),
    (
        "nodeClassRef.group: Required value",
        "v1's `nodeClassRef` needs `group: karpenter.k8s.aws` and `kind: EC2NodeClass`: the manifest is a v1beta1 NodePool",
    ),
    (
        "amiSelectorTerms: Required value",
        "v1 requires `amiSelectorTerms` (v1beta1 derived the AMI from `amiFamily`): add e.g. `amiSelectorTerms: [{alias: al2023@latest}]`",
    ),
    (
        "].observedGeneration\"",
        OBSERVED_GENERATION_NOTE,
    ),
    (
        "unknown field \"observedGeneration\"",
        OBSERVED_GENERATION_NOTE,
    ),
    (
        "got none",
        "An `amiSelectorTerms` entry ended up empty: its only key (v1's `alias`) is unknown to the installed (older) CRD and was dropped",
    ),
];

/// A field added to Karpenter's API after the version it belongs to first shipped: an
/// `unknown field` naming it means CRDs (and maybe a controller) older than `since`.
struct DatedField {
    /// The last segment of the field's path, as the API server names it.
    name: &'static str,
    /// The object and path it lives under, for the summary.
    path: &'static str,
    /// The Karpenter release that introduced it.
    since: (u64, u64),
    /// What else the release needs for the field to take effect, if anything.
    also: Option<&'static str>,
    /// A helm value the controller needs to use the field.
    helm_set: Option<&'static str>,
}

/// Release notes and upgrade guides: disruption budgets came with v0.34; budgets by reason,
/// `terminationGracePeriod` and AMI aliases with the v1 API (v1.0); native On-Demand Capacity
/// Reservations with v1.3, behind the `ReservedCapacity` feature gate.
const DATED_FIELDS: &[DatedField] = &[
    DatedField {
        name: "budgets",
        path: "NodePool spec.disruption",
        since: (0, 34),
        also: None,
        helm_set: None,
    },
    DatedField {
        name: "reasons",
        path: "NodePool spec.disruption.budgets[]",
        since: (1, 0),
        also: None,
        helm_set: None,
    },
    DatedField {
        name: "terminationGracePeriod",
        path: "NodePool spec.template.spec",
        since: (1, 0),
        also: None,
        helm_set: None,
    },
    DatedField {
        name: "alias",
        path: "EC2NodeClass spec.amiSelectorTerms[]",
        since: (1, 0),
        also: None,
        helm_set: None,
    },
    DatedField {
        name: "capacityReservationSelectorTerms",
        path: "EC2NodeClass spec",
        since: (1, 3),
        also: Some("the controller must also run with the ReservedCapacity feature gate on"),
        helm_set: Some("settings.featureGates.reservedCapacity=true"),
    },
];

/// The dated field an `unknown field` path ends in (`spec.disruption.budgets[0].reasons`).
fn dated_field(path: &str) -> Option<&'static DatedField> {
    let last = path.rsplit('.').next()?;
    let last = last.split('[').next()?;
    DATED_FIELDS.iter().find(|f| f.name == last)
}

const OBSERVED_GENERATION_NOTE: &str = "Conditions carry `observedGeneration` from v0.37 on; the CRDs of v0.36 and earlier do not have that field";

/// Rejections of a Karpenter object that an API-version migration produces: v1 required
/// fields a v1beta1 manifest lacks, enum values that changed, fields an older CRD drops.
const MIGRATION_MARKERS: &[&str] = &[
    "expected at least one, got none",
    "unsupported value",
    "unknown field",
    "consolidateafter: required value",
    "nodeclassref.group: required value",
    "nodeclassref.kind: required value",
    "amiselectorterms: required value",
];

/// What a text shows about the CRDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Skew {
    /// The API server does not know a field the manifest or the controller writes.
    UnknownField,
    /// The controller's status updates are refused by an older schema.
    StatusRejected,
    /// Converting between the stored and the requested version fails.
    Conversion,
    /// A CRD upgrade is refused: objects are still stored in the version it drops.
    StoredVersions,
    /// The API server does not serve the kind or version used.
    NotServed,
    /// The schema's validation rejects an object written for the other API version.
    SchemaRejected,
    /// The API server still calls a validating or defaulting webhook of a pre-v1 Karpenter.
    StaleWebhook,
}

/// Admission webhooks the pre-v1 charts registered (v0.32 and earlier always; v0.33-v0.37 with
/// `webhook.enabled`); v1 validates with CEL rules in the CRDs and registers none.
const LEGACY_VALIDATING_WEBHOOKS: &[&str] = &[
    "validation.webhook.karpenter.sh",
    "validation.webhook.config.karpenter.sh",
    "validation.webhook.karpenter.k8s.aws",
];
const LEGACY_MUTATING_WEBHOOKS: &[&str] = &[
    "defaulting.webhook.karpenter.sh",
    "defaulting.webhook.karpenter.k8s.aws",
];

/// The Karpenter admission webhook a call failed on: `failed calling webhook
/// "validation.webhook.karpenter.sh"` (not the CRDs' conversion webhook).
fn failed_admission_webhook(text: &str) -> Option<String> {
    let name = quoted_after(text, "failed calling webhook ")?;
    (contains_any(&name, &["karpenter"])
        && (name.starts_with("validation.") || name.starts_with("defaulting.")))
    .then_some(name)
}

/// The controller chart version the paste's last `helm upgrade|install ... karpenter
/// <repo>/karpenter --version <v>` prompt line installs (not the `karpenter-crd` chart): the
/// version the CRDs must be upgraded to when nothing else tells the controller's.
fn helm_controller_chart_version(facts: &Facts) -> Option<String> {
    facts
        .commands
        .iter()
        .filter(|c| {
            c.tool == "helm" && matches!(c.verb.as_deref(), Some("upgrade") | Some("install"))
        })
        .filter_map(|c| {
            let words: Vec<&str> = c.evidence.text.split_whitespace().collect();
            let controller_chart = words.iter().any(|w| {
                w.trim_end_matches('/').ends_with("/karpenter") && !w.contains("karpenter-crd")
            });
            let version = words.iter().enumerate().find_map(|(i, w)| {
                if *w == "--version" {
                    words.get(i + 1).copied()
                } else {
                    w.strip_prefix("--version=")
                }
            })?;
            let version = version.trim_matches(['"', '\'']).trim_start_matches('v');
            (controller_chart && version::parse(version).is_some()).then(|| version.to_string())
        })
        .next_back()
}

/// kubectl's form for several causes: `The EC2NodeClass "x" is invalid: ` alone on its line,
/// then one `* <field>: <cause>` line each. The header names the object, the causes say why:
/// read together, the header and its cause lines are hits of the skew they show.
fn listed_causes_skew(facts: &Facts, i: usize) -> Vec<(&Message, Skew)> {
    let header = &facts.messages[i];
    if !header.text.trim_end().ends_with("is invalid:") {
        return Vec::new();
    }
    let causes: Vec<&Message> = facts.messages[i + 1..]
        .iter()
        .enumerate()
        .take_while(|(k, m)| {
            m.evidence.source == header.evidence.source
                && m.evidence.line == header.evidence.line + k + 1
                && m.text.trim_start().starts_with("* ")
        })
        .map(|(_, m)| m)
        .collect();
    let joined = std::iter::once(header.text.trim_end())
        .chain(causes.iter().map(|m| m.text.trim()))
        .collect::<Vec<_>>()
        .join(" ");
    match skew_in(&joined, false) {
        Some(skew) if !causes.is_empty() => std::iter::once(header)
            .chain(causes)
            .map(|m| (m, skew))
            .collect(),
        _ => Vec::new(),
    }
}

/// The skew a message shows. A message about a Karpenter object, or logged by one of
/// Karpenter's controllers, is Karpenter's even when its text names no Karpenter kind (the
/// controller logs the API server's `unknown field "status.conditions[0].observedGeneration"`
/// warning bare). Any operator's JSON log reads as a log record, so that alone proves nothing.
fn skew_of_message(m: &Message) -> Option<Skew> {
    let about_karpenter = m
        .object
        .as_ref()
        .is_some_and(|o| is_karpenter_kind(&o.kind))
        || (m.origin == MessageOrigin::KarpenterLog
            && m.component
                .as_deref()
                .is_some_and(|c| contains_any(c, KARPENTER_MARKERS)));
    skew_in(&m.text, about_karpenter)
}

/// A condition's `observedGeneration` (`status.conditions[0].observedGeneration`): v0.37 and
/// later write it, the v0.36 and older CRDs' knative-style conditions have no such field.
fn names_condition_observed_generation(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.match_indices("conditions[").any(|(i, _)| {
        let rest = &lower[i + "conditions[".len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        digits > 0 && rest[digits..].starts_with("].observedgeneration")
    })
}

fn skew_in(text: &str, about_karpenter: bool) -> Option<Skew> {
    let has = |n: &[&str]| contains_any(text, n);
    let karpenter = about_karpenter || has(KARPENTER_MARKERS);
    if has(&["storedversions"]) && has(&["must appear in spec.versions"]) {
        return karpenter.then_some(Skew::StoredVersions);
    }
    if has(&[
        "isn't configured for webhook conversion",
        "conversion webhook for",
        "request to convert cr from",
        "failed to convert pruned object",
    ]) {
        return karpenter.then_some(Skew::Conversion);
    }
    if failed_admission_webhook(text).is_some() {
        return Some(Skew::StaleWebhook);
    }
    if has(&[
        "no matches for kind",
        "isn't valid for cluster, check the apiversion",
        "the server could not find the requested resource",
        // Argo CD: `The Kubernetes API could not find karpenter.sh/NodePool for requested
        // resource /default. Make sure the "NodePool" CRD is installed on the destination
        // cluster.`
        "crd is installed on the destination cluster",
    ]) {
        return karpenter.then_some(Skew::NotServed);
    }
    if has(&["in body should be at least"]) {
        // The v0.37-era status rejection: `conditions[1].reason in body should be at least 1
        // chars long` on a Karpenter object.
        return (karpenter && has(&["conditions", "status"])).then_some(Skew::StatusRejected);
    }
    let rejected = has(&["is invalid:", "was not valid:", "dry-run failed (invalid)"]);
    if rejected
        && names_condition_observed_generation(text)
        && (names_karpenter_object(text) || about_karpenter)
        && !has(&["unknown field"])
    {
        // `NodeClaim.karpenter.sh "x" is invalid: status.conditions[0].observedGeneration:
        // Required value` / `Invalid value: ...`: status written by a controller of another
        // release than the schema.
        return Some(Skew::StatusRejected);
    }
    if rejected && names_karpenter_object(text) && has(MIGRATION_MARKERS) {
        return Some(Skew::SchemaRejected);
    }
    if has(&["field not declared in schema"]) {
        // Server-side apply: `failed to create typed patch object (/default; karpenter.sh/v1,
        // Kind=NodePool): .spec.template.spec.kubelet: field not declared in schema`.
        if let Some(kind) = kind_of(text) {
            return is_karpenter_kind(&kind).then_some(Skew::UnknownField);
        }
        return (karpenter
            || undeclared_fields(text)
                .iter()
                .any(|f| is_karpenter_field(f)))
        .then_some(Skew::UnknownField);
    }
    if has(&["unknown field"]) {
        // A rejection naming its kind (`<Kind> in version "v1" cannot be handled as a
        // <Kind>`, `ValidationError(<Kind>...)`) is decided by the kind: another kind's is not
        // Karpenter's business. Warnings name only the field.
        if let Some(kind) = kind_of(text) {
            return is_karpenter_kind(&kind).then_some(Skew::UnknownField);
        }
        let fields = all_quoted_after(text, "unknown field ");
        return (karpenter || fields.iter().any(|f| is_karpenter_field(f)))
            .then_some(Skew::UnknownField);
    }
    None
}

fn is_karpenter_kind(kind: &str) -> bool {
    KARPENTER_KINDS.iter().any(|(k, _)| *k == kind)
}

/// A field path holding a Karpenter-only field name (`spec.template.spec.kubelet`,
/// `spec.amiSelectorTerms[0].alias`).
fn is_karpenter_field(path: &str) -> bool {
    path.split('.')
        .map(|segment| segment.split('[').next().unwrap_or(segment))
        .any(|segment| KARPENTER_FIELDS.contains(&segment))
}

/// `The NodePool "x" is invalid`, `NodePool.karpenter.sh "x" is invalid`, `nodepools.karpenter.sh
/// "x" was not valid`, `NodePool/x dry-run failed`.
fn names_karpenter_object(text: &str) -> bool {
    KARPENTER_KINDS.iter().any(|(kind, crd)| {
        let group = crd.split_once('.').map_or("", |(_, g)| g);
        contains_any(
            text,
            &[
                &format!("the {kind} \""),
                &format!("{kind}.{group} \""),
                &format!("{crd} \""),
                &format!("{kind}/"),
            ],
        )
    })
}

/// The kind a rejection names: `NodePool in version "v1" cannot be handled as a NodePool`,
/// `ValidationError(NodePool.spec.disruption)`, server-side apply's `(/default; karpenter.sh/v1,
/// Kind=NodePool)`.
fn kind_of(text: &str) -> Option<String> {
    for marker in ["cannot be handled as a ", "ValidationError(", "Kind="] {
        if let Some(i) = text.find(marker) {
            let kind: String = text[i + marker.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if !kind.is_empty() {
                return Some(kind);
            }
        }
    }
    None
}

/// The fields server-side apply refuses: `.spec.template.spec.kubelet: field not declared in
/// schema` (one per line or `; `-separated when several), without the leading dot.
fn undeclared_fields(text: &str) -> Vec<String> {
    const MARKER: &str = ": field not declared in schema";
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(MARKER) {
        let path: String = rest[..i]
            .chars()
            .rev()
            .take_while(|c| !c.is_whitespace() && !matches!(c, ':' | '(' | ')' | ','))
            .collect::<Vec<char>>()
            .into_iter()
            .rev()
            .collect();
        let path = path.trim_start_matches('.');
        if !path.is_empty() && !out.iter().any(|f: &String| f == path) {
            out.push(path.to_string());
        }
        rest = &rest[i + MARKER.len()..];
    }
    out
}

/// The object path of kubectl's client-side `ValidationError(NodePool.spec.disruption)`:
/// `spec.disruption` (none for the object's root).
fn validation_error_path(text: &str) -> Option<String> {
    let i = text.find("ValidationError(")?;
    let inner: String = text[i + "ValidationError(".len()..]
        .chars()
        .take_while(|c| *c != ')')
        .collect();
    let (_, path) = inner.split_once('.')?;
    (!path.is_empty()).then(|| path.to_string())
}

/// Every Karpenter kind a text mentions (by kind name or CRD name).
fn kinds_in(text: &str) -> Vec<&'static str> {
    if let Some(kind) = kind_of(text) {
        if let Some((k, _)) = KARPENTER_KINDS.iter().find(|(k, _)| *k == kind) {
            return vec![k];
        }
    }
    KARPENTER_KINDS
        .iter()
        .filter(|(kind, crd)| {
            text.contains(kind) && !text.contains(&format!("EC2{kind}"))
                || contains_any(text, &[crd])
        })
        .map(|(kind, _)| *kind)
        .collect()
}

/// The Karpenter objects a rejection names: `NodePool general`.
fn rejected_objects(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (kind, crd) in KARPENTER_KINDS {
        let group = crd.split_once('.').map_or("", |(_, g)| g);
        for marker in [
            format!("The {kind} "),
            format!("{kind}.{group} "),
            format!("{crd} "),
        ] {
            if let Some(name) = quoted_after(text, &marker) {
                let obj = format!("{kind} {name}");
                if !out.contains(&obj) {
                    out.push(obj);
                }
            }
        }
    }
    out
}

/// The namespace of the service a conversion webhook URL points at
/// (`https://karpenter.kube-system.svc:8443/...`).
fn webhook_service_namespace(text: &str) -> Option<String> {
    let i = find_ignore_ascii_case(text, "https://karpenter.")?;
    let rest = &text[i + "https://karpenter.".len()..];
    let ns: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    rest[ns.len()..]
        .starts_with(".svc")
        .then_some(ns)
        .filter(|n| !n.is_empty())
}

/// What the CRD objects in the input say, with the lines that say it.
struct CrdFinding {
    sentence: String,
    evidence: Vec<Evidence>,
    /// A mismatch that breaks something now, rather than one that will break the next upgrade.
    certain: bool,
    /// `status.storedVersions` still lists v1beta1 where the CRD must drop it.
    stored_v1beta1: bool,
    /// The CRD's name.
    crd: String,
}

fn is_karpenter_crd(crd: &Crd) -> bool {
    crd.group == "karpenter.sh" || crd.group == "karpenter.k8s.aws"
}

fn served(crd: &Crd) -> Vec<&str> {
    crd.versions
        .iter()
        .filter(|v| v.served)
        .map(|v| v.name.as_str())
        .collect()
}

fn evidence_of(meta: &Meta) -> Option<Evidence> {
    meta.evidence.clone()
}

/// The version a CRD's chart labels name (`helm.sh/chart: karpenter-crd-1.0.6`,
/// `app.kubernetes.io/version: 1.0.6`).
fn crd_chart_version(crd: &Crd) -> Option<(u64, u64, u64)> {
    let chart = crd.meta.label("helm.sh/chart").and_then(|c| {
        c.strip_prefix("karpenter-crd-")
            .or_else(|| c.strip_prefix("karpenter-"))
    });
    chart
        .or_else(|| crd.meta.label("app.kubernetes.io/version"))
        .and_then(version::parse)
}

fn crd_findings(facts: &Facts) -> Vec<CrdFinding> {
    let mut out = Vec::new();
    let crds: Vec<&Crd> = facts.crds.iter().filter(|c| is_karpenter_crd(c)).collect();
    if crds.is_empty() {
        return out;
    }
    let crd_for = |kind: &str| crds.iter().find(|c| c.kind == kind).copied();

    // Manifests written for a version the installed CRD does not serve.
    let objects: Vec<(&str, &Meta)> = facts
        .nodepools
        .iter()
        .map(|p| ("NodePool", &p.meta))
        .chain(facts.nodeclasses.iter().map(|c| ("EC2NodeClass", &c.meta)))
        .chain(facts.nodeclaims.iter().map(|c| ("NodeClaim", &c.meta)))
        .collect();
    for (kind, meta) in objects {
        let Some(crd) = crd_for(kind) else { continue };
        let Some((group, version)) = meta.api_version.as_deref().and_then(|a| a.split_once('/'))
        else {
            continue;
        };
        let serves = served(crd);
        if group != crd.group || crd.versions.is_empty() || serves.contains(&version) {
            continue;
        }
        out.push(CrdFinding {
            sentence: format!(
                "{kind} {} is written for {group}/{version}, but CRD {} serves only {}",
                meta.name,
                crd.meta.name,
                if serves.is_empty() {
                    "no version".to_string()
                } else {
                    serves.join(", ")
                }
            ),
            evidence: evidence_of(meta)
                .into_iter()
                .chain(evidence_of(&crd.meta))
                .collect(),
            certain: true,
            stored_v1beta1: false,
            crd: crd.meta.name.clone(),
        });
    }

    // The controller's version against what the CRDs serve.
    let controller = version::karpenter_version(facts);
    for crd in &crds {
        let serves = served(crd);
        if crd.versions.is_empty() {
            continue;
        }
        let Some((major, minor, _)) = controller else {
            continue;
        };
        let label = format!("v{major}.{minor}");
        let needed = if major >= 1 {
            Some("v1")
        } else if minor >= 32 && crd.kind != "Provisioner" && crd.kind != "AWSNodeTemplate" {
            Some("v1beta1")
        } else {
            None
        };
        if let Some(needed) = needed.filter(|n| !serves.contains(n)) {
            out.push(CrdFinding {
                sentence: format!(
                    "controller {label} reads and writes {}/{needed}, but CRD {} serves only {}: the CRDs are from another release",
                    crd.group,
                    crd.meta.name,
                    serves.join(", ")
                ),
                evidence: evidence_of(&crd.meta).into_iter().collect(),
                certain: true,
                stored_v1beta1: false,
                crd: crd.meta.name.clone(),
            });
            continue;
        }
        if (major, minor) >= (1, 1) {
            let stale_webhook = crd.conversion_strategy.as_deref() == Some("Webhook");
            let old_version = serves.contains(&"v1beta1");
            if stale_webhook || old_version {
                let stored_v1beta1 = crd.stored_versions.iter().any(|v| v == "v1beta1");
                let stored = if stored_v1beta1 {
                    "; status.storedVersions still lists v1beta1, so upgrading this CRD is refused until the objects are migrated"
                } else {
                    ""
                };
                out.push(CrdFinding {
                    sentence: format!(
                        "controller {label} runs with CRD {} from v1.0 ({}){stored}",
                        crd.meta.name,
                        match (stale_webhook, old_version) {
                            (true, true) => "still serving v1beta1 through a conversion webhook v1.1 no longer runs",
                            (true, false) => "conversion strategy Webhook, a webhook v1.1 no longer runs",
                            _ => "still serving v1beta1, which v1.1 dropped",
                        }
                    ),
                    evidence: evidence_of(&crd.meta).into_iter().collect(),
                    certain: false,
                    stored_v1beta1,
                    crd: crd.meta.name.clone(),
                });
                continue;
            }
        }
        if let Some((cmaj, cmin, cpatch)) = crd_chart_version(crd) {
            if (cmaj, cmin) < (major, minor) {
                out.push(CrdFinding {
                    sentence: format!(
                        "CRD {} comes from chart v{cmaj}.{cmin}.{cpatch} while the controller is {label}: the CRDs were not upgraded with the controller",
                        crd.meta.name
                    ),
                    evidence: evidence_of(&crd.meta).into_iter().collect(),
                    certain: false,
                    stored_v1beta1: false,
                    crd: crd.meta.name.clone(),
                });
            }
        }
    }
    out
}

fn push_new<T: PartialEq>(list: &mut Vec<T>, value: T) {
    if !list.contains(&value) {
        list.push(value);
    }
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let pre_v1 = version::at_least(facts, 1, 0) == Some(false);
    let hits: Vec<(&Message, Skew)> = facts
        .messages
        .iter()
        .enumerate()
        .flat_map(|(i, m)| match skew_of_message(m) {
            Some(s) => vec![(m, s)],
            None => listed_causes_skew(facts, i),
        })
        // On a pre-v1 controller the webhooks are its own: one that does not answer means the
        // controller is down, unless its service is gone altogether.
        .filter(|(m, s)| {
            *s != Skew::StaleWebhook || !pre_v1 || contains_any(&m.text, &["not found"])
        })
        .collect();
    let findings = crd_findings(facts);
    // `helm list` alone can show the skew: the karpenter-crd release behind the controller's.
    let release_behind = facts
        .crd_chart_version
        .as_deref()
        .and_then(version::parse)
        .zip(version::karpenter_version(facts))
        .is_some_and(|(crd, controller)| (crd.0, crd.1) < (controller.0, controller.1));
    if hits.is_empty() && findings.is_empty() && !release_behind {
        return Vec::new();
    }
    let skews: Vec<Skew> = hits.iter().fold(Vec::new(), |mut acc, (_, s)| {
        push_new(&mut acc, *s);
        acc
    });
    let has = |s: Skew| skews.contains(&s);
    let texts_with = |needles: &[&str]| hits.iter().any(|(m, _)| contains_any(&m.text, needles));

    let mut fields: Vec<String> = Vec::new();
    let mut kinds: Vec<&str> = Vec::new();
    let mut notes: Vec<&str> = Vec::new();
    let mut invalid_objects: Vec<String> = Vec::new();
    let mut crd_names: Vec<&str> = Vec::new();
    let mut webhook_ns: Option<String> = None;
    for (m, skew) in &hits {
        if matches!(skew, Skew::UnknownField | Skew::SchemaRejected) {
            let parent = validation_error_path(&m.text);
            for f in all_quoted_after(&m.text, "unknown field ") {
                // kubectl's client-side `ValidationError(NodePool.spec.disruption): unknown
                // field "expireAfter"` names the parent apart: join them, so the field reads
                // (and matches MOVED_FIELDS) as the path the other forms print.
                let f = match &parent {
                    Some(p) if !f.contains('.') => format!("{p}.{f}"),
                    _ => f,
                };
                push_new(&mut fields, f);
            }
            for f in undeclared_fields(&m.text) {
                push_new(&mut fields, f);
            }
        }
        for k in kinds_in(&m.text) {
            push_new(&mut kinds, k);
        }
        for (field, note) in MOVED_FIELDS {
            if m.text.contains(field) || fields.iter().any(|f| f == field) {
                push_new(&mut notes, *note);
            }
        }
        for o in rejected_objects(&m.text) {
            push_new(&mut invalid_objects, o);
        }
        for (_, crd) in KARPENTER_KINDS {
            if contains_any(&m.text, &[crd]) {
                push_new(&mut crd_names, *crd);
            }
        }
        if webhook_ns.is_none() {
            webhook_ns = webhook_service_namespace(&m.text);
        }
    }
    let version = facts
        .karpenter_version
        .clone()
        .or_else(|| helm_controller_chart_version(facts));
    // A webhook that was reached but failed (no endpoints, refused) names the namespace its
    // service really lives in; `service "karpenter" not found` names a wrong one.
    let reached_ns = webhook_ns.clone().filter(|_| !texts_with(&["not found"]));
    let ns = karpenter_namespace(facts)
        .or(reached_ns)
        .unwrap_or_else(|| "<karpenter-namespace>".to_string());
    let controller_side = has(Skew::StatusRejected)
        || fields.iter().any(|f| f.starts_with("status."))
        || hits.iter().any(|(m, skew)| {
            m.origin == MessageOrigin::KarpenterLog && *skew == Skew::UnknownField
        });
    let manifest_side = has(Skew::NotServed)
        || has(Skew::SchemaRejected)
        || fields.iter().any(|f| !f.starts_with("status."));

    let mut parts: Vec<String> = Vec::new();
    if !fields.is_empty() {
        let list: Vec<String> = fields.iter().map(|f| format!("\"{f}\"")).collect();
        let mut part = format!(
            "the API server does not know field{} {}",
            if fields.len() == 1 { "" } else { "s" },
            list.join(", ")
        );
        if !kinds.is_empty() {
            part.push_str(&format!(" ({})", kinds.join(", ")));
        }
        parts.push(part);
    }
    if has(Skew::StatusRejected) && fields.is_empty() {
        parts.push("the controller's status updates are refused by the installed schema".into());
    }
    if has(Skew::SchemaRejected) && !invalid_objects.is_empty() {
        parts.push(format!(
            "the installed schema's validation rejects {}",
            invalid_objects.join(", ")
        ));
    } else if has(Skew::SchemaRejected) {
        parts.push("the installed schema's validation rejects the manifest".into());
    }
    if has(Skew::NotServed) {
        if kinds.is_empty() {
            parts.push("the API server does not serve the Karpenter kinds or versions the manifest or controller uses".into());
        } else {
            parts.push(format!(
                "the API server does not serve {} in the API version the manifest or controller uses (the CRDs are missing, or older or newer than the manifest)",
                kinds.join(", ")
            ));
        }
    }
    // A conversion failure is one of three: the stored version is no longer served, the CRD
    // has no webhook configured, or the configured webhook fails.
    let conversion_texts = || {
        hits.iter()
            .filter(|(_, s)| *s == Skew::Conversion)
            .map(|(m, _)| m.text.as_str())
    };
    let invalid_group = conversion_texts()
        .any(|t| contains_any(t, &["request to convert cr from an invalid group/version"]));
    let not_configured =
        conversion_texts().any(|t| contains_any(t, &["isn't configured for webhook conversion"]));
    let webhook_failed = conversion_texts().any(|t| {
        !contains_any(
            t,
            &[
                "request to convert cr from an invalid group/version",
                "isn't configured for webhook conversion",
            ],
        )
    });
    if has(Skew::Conversion) {
        let crds = if crd_names.is_empty() {
            "the Karpenter CRDs".to_string()
        } else {
            crd_names.join(", ")
        };
        if invalid_group {
            let objects = if kinds.is_empty() {
                "Karpenter objects".to_string()
            } else {
                format!("{} objects", kinds.join(", "))
            };
            parts.push(format!(
                "{objects} are still stored as v1beta1 but the installed CRDs no longer serve v1beta1 (request to convert CR from an invalid group/version): the CRDs were upgraded past v1.0 before the storage migration to v1 finished"
            ));
        }
        if not_configured {
            parts.push(format!(
                "{crds} serve{} several versions without the conversion webhook that v1.0 needs (isn't configured for webhook conversion)",
                if crd_names.len() == 1 { "s" } else { "" }
            ));
        }
        if webhook_failed {
            let why = if texts_with(&["not found"]) && webhook_ns.is_some() {
                let target = webhook_ns.clone().unwrap_or_default();
                match karpenter_namespace(facts).filter(|k| *k != target) {
                    Some(actual) => format!(
                        "it points at service karpenter in namespace {target}, which does not exist there: Karpenter runs in {actual}"
                    ),
                    None => format!("it points at service karpenter in namespace {target}, which does not exist"),
                }
            } else if texts_with(&["no endpoints available", "connection refused"]) {
                "the Karpenter service behind it has no ready endpoint".to_string()
            } else {
                "the webhook answered with an error".to_string()
            };
            parts.push(format!("the CRDs' conversion webhook fails: {why}"));
        }
    }
    if has(Skew::StoredVersions) {
        let crds = if crd_names.is_empty() {
            "the Karpenter CRDs".to_string()
        } else {
            crd_names.join(", ")
        };
        parts.push(format!(
            "upgrading {crds} is refused because status.storedVersions still lists v1beta1, which the new CRDs drop: objects were never migrated to v1 storage"
        ));
    }
    let stale_webhooks: Vec<String> = hits
        .iter()
        .filter_map(|(m, _)| failed_admission_webhook(&m.text))
        .fold(Vec::new(), |mut acc, w| {
            push_new(&mut acc, w);
            acc
        });
    if has(Skew::StaleWebhook) {
        let service = hits
            .iter()
            .filter(|(_, s)| *s == Skew::StaleWebhook)
            .find_map(|(m, _)| quoted_after(&m.text, "service "));
        let why = if texts_with(&["not found"]) {
            format!(
                "whose service {} does not exist",
                service.as_deref().unwrap_or("karpenter")
            )
        } else if texts_with(&["no endpoints available", "connection refused"]) {
            "whose service has no ready endpoint".to_string()
        } else {
            "which fails".to_string()
        };
        parts.push(format!(
            "the API server still calls Karpenter admission webhook{} {} {why}: a webhook configuration left behind by a pre-v1 Karpenter (v1 validates with CEL rules in the CRDs and registers no validating or defaulting webhook), so every create or update of a Karpenter object is refused",
            if stale_webhooks.len() == 1 { "" } else { "s" },
            stale_webhooks
                .iter()
                .map(|w| format!("\"{w}\""))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    for f in &findings {
        parts.push(f.sentence.clone());
    }
    let only_webhooks = skews == [Skew::StaleWebhook] && findings.is_empty();

    let head = match (controller_side, manifest_side) {
        _ if only_webhooks => "Karpenter's admission webhooks do not match the installed version",
        (true, true) => {
            "The installed Karpenter CRDs match neither the controller nor the manifests applied"
        }
        (true, false) => "The installed Karpenter CRDs do not match the controller",
        _ => "The installed Karpenter CRDs do not match the controller or the manifest",
    };
    if parts.is_empty() {
        parts.push("the karpenter-crd helm release is older than the controller's".into());
    }
    let mut summary = format!("{head}: {}.", parts.join("; "));
    if controller_side && !fields.is_empty() {
        summary.push_str(" The controller writes fields the CRDs lack: the CRDs are older than the controller (helm upgrade does not upgrade CRDs).");
    }
    for note in &notes {
        summary.push(' ');
        summary.push_str(note);
        summary.push('.');
    }
    // Fields a release added: which release, and whether the controller has it too.
    let controller = version::karpenter_version(facts);
    let dated: Vec<&DatedField> =
        fields
            .iter()
            .filter_map(|f| dated_field(f))
            .fold(Vec::new(), |mut acc, d| {
                if !acc.iter().any(|a: &&DatedField| a.name == d.name) {
                    acc.push(d);
                }
                acc
            });
    // The release the CRDs (and the controller) must reach for every dated field.
    let needed: Option<(u64, u64)> = dated.iter().map(|d| d.since).max();
    let controller_too = matches!((controller, needed), (Some(c), Some(n)) if (c.0, c.1) < n);
    // One sentence per release, naming its fields.
    let mut releases: Vec<(u64, u64)> = dated.iter().map(|d| d.since).collect();
    releases.sort_unstable();
    releases.dedup();
    let v1beta1_manifest = hits
        .iter()
        .any(|(m, _)| contains_any(&m.text, &["in version \"v1beta1\""]));
    for since in &releases {
        let (maj, min) = *since;
        let of_release: Vec<&&DatedField> = dated.iter().filter(|d| d.since == *since).collect();
        let names: Vec<String> = of_release
            .iter()
            .map(|d| format!("`{}` (in {})", d.name, d.path))
            .collect();
        let (it, them) = if names.len() == 1 {
            ("it", "it")
        } else {
            ("them", "they")
        };
        let also: String = of_release
            .iter()
            .filter_map(|d| d.also)
            .map(|a| format!("; {a}"))
            .collect();
        let whose = match controller {
            Some((cmaj, cmin, cpatch)) if (cmaj, cmin) < *since => format!(
                " The controller runs {cmaj}.{cmin}.{cpatch}, which predates {it} too: upgrade the CRDs to v{maj}.{min} or later first, then the controller to the same version{also}."
            ),
            Some((cmaj, cmin, cpatch)) => format!(
                " The controller ({cmaj}.{cmin}.{cpatch}) has {it}, so the CRDs are older than the controller: upgrade them to its version{also}."
            ),
            None => format!(
                " The installed CRDs are older than v{maj}.{min}: upgrade them to the controller's version if it is v{maj}.{min} or later, else both to v{maj}.{min} or later, the CRDs first{also}."
            ),
        };
        summary.push_str(&format!(
            " {} came with Karpenter v{maj}.{min}.{whose}",
            join_names(&names)
        ));
        if *since == (1, 0) && v1beta1_manifest {
            summary.push_str(&format!(
                " {} exist{} only in the v1 API: the manifest must also say apiVersion karpenter.sh/v1 (karpenter.k8s.aws/v1 for an EC2NodeClass), which a v1beta1 object cannot carry.",
                capitalised(them),
                if them == "it" { "s" } else { "" }
            ));
        }
    }
    let legacy_kinds: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| matches!(*k, "Provisioner" | "AWSNodeTemplate" | "Machine"))
        .collect();
    let legacy_manifest = has(Skew::NotServed)
        && !legacy_kinds.is_empty()
        && version::at_least(facts, 0, 33) != Some(false);
    if legacy_manifest {
        summary.push_str(&format!(
            " {} belong{} to the v1alpha5/v1alpha1 API that Karpenter removed at v0.33: the manifest predates NodePool and EC2NodeClass and must be rewritten, not the CRDs downgraded.",
            legacy_kinds.join(", "),
            if legacy_kinds.len() == 1 { "s" } else { "" }
        ));
    }
    // The `karpenter-crd` release left behind across v1.0 (helm list shows both releases).
    let crd_release = facts
        .crd_chart_version
        .as_deref()
        .and_then(version::parse)
        .zip(version::karpenter_version(facts));
    let crds_before_v1 =
        crd_release.is_some_and(|(crd, controller)| crd.0 == 0 && controller.0 >= 1);
    if let Some(((cmaj, cmin, cpatch), (maj, min, patch))) =
        crd_release.filter(|(crd, controller)| (crd.0, crd.1) < (controller.0, controller.1))
    {
        summary.push_str(&format!(
            " helm release karpenter-crd is still at chart {cmaj}.{cmin}.{cpatch} while the controller runs {maj}.{min}.{patch}: the CRDs were not upgraded with the controller."
        ));
        if crds_before_v1 {
            summary.push_str(" From a pre-v1.0 release every upgrade must stop at v1.0.x (CRDs serving v1beta1 and v1 through the conversion webhook) until the objects are stored as v1.");
        }
    }
    let certain = !hits.is_empty() || findings.iter().any(|f| f.certain);
    if !certain {
        let from = if findings.is_empty() {
            "the helm releases"
        } else {
            "the CRD objects"
        };
        summary.push_str(&format!(" Inferred from {from} and the controller's version: nothing in the input shows an error yet."));
    }

    // A field newer than the controller: both go to the release that added it.
    let chart_version = match needed {
        Some((maj, min)) if controller_too => format!("{maj}.{min}.0"),
        _ => version
            .clone()
            .unwrap_or_else(|| "<controller version>".to_string()),
    };
    let all_crds =
        "nodepools.karpenter.sh nodeclaims.karpenter.sh ec2nodeclasses.karpenter.k8s.aws";
    let stored_versions = format!(
        "kubectl get crd {all_crds} -o jsonpath='{{range .items[*]}}{{.metadata.name}}{{\": \"}}{{.status.storedVersions}}{{\"\\n\"}}{{end}}'"
    );
    let mut steps = vec![Remediation::command(
        "See which API versions the installed CRDs serve and store, and which controller runs:",
        format!(
            "kubectl get crd {all_crds} -o custom-columns=NAME:.metadata.name,SERVED:.spec.versions[*].name,STORED:.status.storedVersions,CONVERSION:.spec.conversion.strategy,CHART:.metadata.labels.helm\\.sh/chart\nkubectl get deployment -n {ns} -l app.kubernetes.io/name=karpenter -o jsonpath='{{.items[*].spec.template.spec.containers[*].image}}'"
        ),
    )];
    let stored_blocked = findings.iter().any(|f| f.stored_v1beta1);
    let migration = has(Skew::StoredVersions) || invalid_group || stored_blocked;
    if migration {
        let blocked_crds: Vec<&str> = findings
            .iter()
            .filter(|f| f.stored_v1beta1)
            .map(|f| f.crd.as_str())
            .collect();
        let stored: Vec<&str> = if !crd_names.is_empty() {
            crd_names.clone()
        } else if !blocked_crds.is_empty() {
            blocked_crds
        } else {
            all_crds.split(' ').collect()
        };
        if invalid_group {
            steps.push(Remediation::command(
                "The objects stored as v1beta1 cannot be read until a CRD serves v1beta1 again: reinstall the v1.0.x CRDs (v1beta1 and v1, converted by the v1.0.x controller's webhook) and run a v1.0.x controller while migrating:",
                format!(
                    "helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version 1.0.8 --namespace {ns} --set webhook.enabled=true --set webhook.serviceName=karpenter --set webhook.serviceNamespace={ns}"
                ),
            ));
        }
        steps.push(Remediation::command(
            "Rewrite every Karpenter object so the API server stores it as v1 (a no-op replace; the v1.0.x controller does the same on its own), then check the stored versions:",
            format!(
                "kubectl get nodepools,nodeclaims,ec2nodeclasses -o json | kubectl replace -f -\n{stored_versions}"
            ),
        ));
        steps.push(Remediation::command(
            "Only once every object was rewritten, drop v1beta1 from storedVersions, then upgrade the CRDs (and the controller) past v1.0:",
            stored
                .iter()
                .map(|c| {
                    format!(
                        "kubectl patch crd {c} --subresource=status --type=merge -p '{{\"status\":{{\"storedVersions\":[\"v1\"]}}}}'"
                    )
                })
                .chain(std::iter::once(format!(
                    "helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version {chart_version} --namespace {ns}"
                )))
                .collect::<Vec<_>>()
                .join("\n"),
        ));
    }
    let webhook_problem = webhook_failed || not_configured;
    if webhook_problem {
        let v1_1 = version::at_least(facts, 1, 1);
        if v1_1 != Some(true) {
            steps.push(Remediation::command(
                format!("On v1.0.x the CRDs serve v1beta1 and v1 through Karpenter's conversion webhook, which must point at the Karpenter service in {ns}: reinstall the CRD chart with the webhook values:"),
                format!(
                    "helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version {chart_version} --namespace {ns} --set webhook.enabled=true --set webhook.serviceName=karpenter --set webhook.serviceNamespace={ns} --set webhook.port=8443"
                ),
            ));
        }
        if v1_1 != Some(false) {
            steps.push(Remediation::text(
                "From v1.1 Karpenter serves only v1 and runs no conversion webhook: upgrade the CRDs to the controller's version (their conversion strategy is None), once every object is stored as v1.",
            ));
        }
    }
    if crds_before_v1 && !migration {
        steps.push(Remediation::command(
            "Go through v1.0 first: the v1.0.x CRDs serve v1beta1 and v1 and convert through the v1.0.x controller's webhook; run a v1.0.x controller until every object is stored as v1 (status.storedVersions lists only v1), then upgrade CRDs and controller together:",
            format!(
                "helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version 1.0.8 --namespace {ns} --set webhook.enabled=true --set webhook.serviceName=karpenter --set webhook.serviceNamespace={ns}\nhelm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.0.8 --namespace {ns} --reuse-values --set webhook.enabled=true\n{stored_versions}"
            ),
        ));
    }
    if legacy_manifest {
        steps.push(Remediation::command(
            "Convert the old manifests with karpenter-convert (Provisioner to NodePool, AWSNodeTemplate to EC2NodeClass, as v1beta1) and apply those instead; on a v1 controller, then apply the v1 migration guide's changes (`apiVersion: karpenter.sh/v1`, `nodeClassRef.group`/`kind`, `consolidateAfter`, `amiSelectorTerms`):",
            "go install github.com/aws/karpenter/tools/karpenter-convert/cmd/karpenter-convert@latest\nkarpenter-convert -f provisioner.yaml > nodepool.yaml\nkarpenter-convert -f nodetemplate.yaml > nodeclass.yaml",
        ));
    }
    if has(Skew::StaleWebhook) {
        steps.push(Remediation::command(
            "Delete the pre-v1 webhook configurations (v1 needs none; `--ignore-not-found` skips those already gone):",
            format!(
                "kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations | grep karpenter\nkubectl delete validatingwebhookconfiguration {} --ignore-not-found\nkubectl delete mutatingwebhookconfiguration {} --ignore-not-found",
                LEGACY_VALIDATING_WEBHOOKS.join(" "),
                LEGACY_MUTATING_WEBHOOKS.join(" ")
            ),
        ));
    }
    if let Some((maj, min)) = needed.filter(|_| {
        controller_too && !migration && !only_webhooks && !legacy_manifest && !crds_before_v1
    }) {
        let sets: String = dated
            .iter()
            .filter_map(|d| d.helm_set)
            .map(|s| format!(" --set {s}"))
            .collect();
        let through_v1 = if controller.is_some_and(|c| (c.0, c.1) < (1, 1)) && (maj, min) >= (1, 1)
        {
            " From a v1.0.x controller, first check that status.storedVersions lists only v1 (the CRDs past v1.0 drop v1beta1)."
        } else {
            ""
        };
        if controller.is_some_and(|c| c.0 == 0) && (maj, min) >= (1, 0) {
            // Leaving v0.x is the v1 migration, not a plain upgrade.
            steps.push(Remediation::command(
                format!(
                    "The field needs v{maj}.{min}, and leaving v0.x is the v1 migration (the v1 Migration guide): first the latest patch of the current minor release, then the v1.0.x CRDs (serving v1beta1 and v1 through the conversion webhook) and controller; rewrite the manifests as v1; go past v1.0 only once status.storedVersions lists only v1:"
                ),
                format!(
                    "helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version 1.0.8 --namespace {ns} --set webhook.enabled=true --set webhook.serviceName=karpenter --set webhook.serviceNamespace={ns}\nhelm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.0.8 --namespace {ns} --reuse-values --set webhook.enabled=true"
                ),
            ));
        } else {
            steps.push(Remediation::command(
                format!(
                    "Upgrade the CRDs first, to v{maj}.{min}.0 (the first release with the field; a later one works too), then the controller to the same version (the Karpenter upgrade guide's order; read its notes for each minor release in between).{through_v1}"
                ),
                format!(
                    "helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version {chart_version} --namespace {ns} --create-namespace\nhelm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --version {chart_version} --namespace {ns} --reuse-values{sets}"
                ),
            ));
        }
    } else if !migration && !only_webhooks && !legacy_manifest && !crds_before_v1 {
        steps.push(Remediation::command(
            format!(
                "Upgrade the CRDs to the controller's version first{}, then the controller (the Karpenter upgrade guide's order):",
                if version.is_some() { "" } else { " (fill in the controller's version)" }
            ),
            format!(
                "helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version {chart_version} --namespace {ns} --create-namespace"
            ),
        ));
    }
    // A controller that has the field may still need a feature gate for it.
    if !controller_too && version.is_some() {
        let sets: Vec<&str> = dated.iter().filter_map(|d| d.helm_set).collect();
        if !sets.is_empty() {
            steps.push(Remediation::command(
                "Then make sure the controller runs with the feature gate the field needs (the settings are kept otherwise):",
                format!(
                    "helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter --version {chart_version} --namespace {ns} --reuse-values{}",
                    sets.iter().map(|s| format!(" --set {s}")).collect::<String>()
                ),
            ));
        }
    }
    // A field the table dates is no typo: skip the guessing when every field is one.
    let all_dated = !fields.is_empty() && fields.iter().all(|f| dated_field(f).is_some());
    if (!fields.is_empty() && !controller_side && !all_dated) || has(Skew::SchemaRejected) {
        steps.push(Remediation::text(
            "If the field is not in the new CRD either, it is a typo, a field that moved between API versions, or a field of a newer Karpenter release than the controller (then upgrade the controller and its CRDs together, CRDs first): compare with `kubectl explain nodepool.spec --recursive` (or `ec2nodeclass.spec`), and rewrite a v1beta1 manifest for v1 per the v1 migration guide (`nodeClassRef.group`/`kind`, `consolidateAfter`, `WhenEmptyOrUnderutilized`, `expireAfter` under `spec.template.spec`, `kubelet` on the EC2NodeClass).",
        ));
    }
    // A manifest field one or two letters off a field Karpenter's v1 CRDs have is a typo
    // more likely than skew: the API server dropped it (a `Warning:` on a successful apply,
    // or strict decoding), so correcting the name comes first.
    let typos: Vec<(&String, String)> = fields
        .iter()
        .filter(|f| !f.starts_with("status."))
        .filter_map(|f| typo_of(f).map(|t| (f, t)))
        .collect();
    let all_typos = !typos.is_empty() && typos.len() == fields.len() && !controller_side;
    if all_typos {
        let list: Vec<String> = typos
            .iter()
            .map(|(f, t)| format!("\"{f}\" looks like a typo of \"{t}\""))
            .collect();
        summary = format!(
            "{}: the API server drops a field it does not know, so the setting never took effect. {summary}",
            list.join("; ")
        );
        let fixed: Vec<String> = typos
            .iter()
            .map(|(f, t)| {
                let parent = f.rsplit_once('.').map(|(p, _)| p).unwrap_or("");
                if parent.is_empty() {
                    t.clone()
                } else {
                    format!("{parent}.{t}")
                }
            })
            .collect();
        steps.insert(
            0,
            Remediation::text(format!(
                "Correct the field name in the manifest ({}) and apply it again; only if the name is right are the CRDs out of date.",
                fixed.join(", ")
            )),
        );
    }
    vec![Diagnosis::new(&META, summary)
        .with_severity(if all_typos {
            Severity::Warning
        } else {
            META.severity
        })
        .with_confidence(if certain {
            Confidence::High
        } else {
            Confidence::Medium
        })
        .with_messages(hits.iter().map(|(m, _)| *m))
        .with_evidence(findings.into_iter().flat_map(|f| f.evidence))
        .with_remediation(steps)]
}

/// Field names of Karpenter's v1 NodePool, NodeClaim and EC2NodeClass specs, for telling a
/// misspelt field from one the CRDs lack.
const KNOWN_FIELDS: &[&str] = &[
    "amiFamily",
    "amiSelectorTerms",
    "alias",
    "annotations",
    "associatePublicIPAddress",
    "blockDeviceMappings",
    "budgets",
    "capacityReservationSelectorTerms",
    "clusterDNS",
    "consolidateAfter",
    "consolidationPolicy",
    "context",
    "cpuCFSQuota",
    "deleteOnTermination",
    "detailedMonitoring",
    "deviceName",
    "disruption",
    "duration",
    "effect",
    "encrypted",
    "evictionHard",
    "evictionMaxPodGracePeriod",
    "evictionSoft",
    "evictionSoftGracePeriod",
    "expireAfter",
    "httpEndpoint",
    "httpProtocolIPv6",
    "httpPutResponseHopLimit",
    "httpTokens",
    "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent",
    "instanceProfile",
    "instanceStorePolicy",
    "iops",
    "kubeReserved",
    "kubelet",
    "kmsKeyID",
    "labels",
    "limits",
    "maxPods",
    "metadata",
    "metadataOptions",
    "minValues",
    "nodeClassRef",
    "nodes",
    "operator",
    "owner",
    "podsPerCore",
    "reasons",
    "requirements",
    "role",
    "rootVolume",
    "schedule",
    "securityGroupSelectorTerms",
    "snapshotID",
    "startupTaints",
    "subnetSelectorTerms",
    "systemReserved",
    "tags",
    "taints",
    "template",
    "terminationGracePeriod",
    "throughput",
    "userData",
    "values",
    "volumeSize",
    "volumeType",
    "weight",
];

/// The known field `field`'s last name is a misspelling of (one or two edits away), if any.
fn typo_of(field: &str) -> Option<String> {
    let last = field.rsplit('.').next()?;
    let last = last.split('[').next()?;
    if last.len() < 5 || KNOWN_FIELDS.contains(&last) {
        return None;
    }
    KNOWN_FIELDS
        .iter()
        .map(|k| {
            (
                crate::rules::names::edit_distance(
                    &last.to_ascii_lowercase(),
                    &k.to_ascii_lowercase(),
                ),
                k,
            )
        })
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The controller chart's version from the paste's helm prompt fills the CRD upgrade; the
    /// CRD chart's own prompt does not count.
    #[test]
    fn helm_prompt_gives_the_chart_version() {
        let reject = "Error from server (BadRequest): error when creating \"gpu.yaml\": NodePool in version \"v1\" cannot be handled as a NodePool: strict decoding error: unknown field \"spec.template.spec.foo\"\n";
        let upgrade = "$ helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version 1.3.3 -n karpenter --reuse-values\nRelease \"karpenter\" has been upgraded. Happy Helming!\n";
        let crd_step = |text: &str| {
            check_only("KW104", text).diagnoses[0]
                .remediation
                .iter()
                .filter_map(|r| r.command.clone())
                .find(|c| c.starts_with("helm upgrade --install karpenter-crd"))
                .unwrap_or_default()
        };
        assert!(crd_step(&format!("{upgrade}{reject}")).contains("--version 1.3.3 "));
        let crd_only = upgrade.replace("karpenter/karpenter ", "karpenter/karpenter-crd ");
        assert!(crd_step(&format!("{crd_only}{reject}")).contains("--version <controller version>"));
    }

    /// kubectl's several-causes form: the header line names the object, the `* ` lines the
    /// causes; another kind's header is not Karpenter's.
    #[test]
    fn a_header_with_listed_causes() {
        let text = "$ kubectl apply -f ec2nodeclass.yaml\nThe EC2NodeClass \"gpu\" is invalid: \n* spec.amiSelectorTerms: Invalid value: \"array\": expected at least one, got none\n* spec.role: Invalid value: \"string\": role cannot be empty\n";
        let report = check_only("KW104", text);
        assert_eq!(ids(&report), ["KW104"]);
        assert!(
            report.diagnoses[0].summary.contains("EC2NodeClass gpu"),
            "{}",
            report.diagnoses[0].summary
        );
        let other = text.replace("The EC2NodeClass", "The Deployment");
        assert!(ids(&check_only("KW104", &other)).is_empty());
        // The header alone (the causes cut off) says nothing.
        assert!(ids(&check_only(
            "KW104",
            "The EC2NodeClass \"gpu\" is invalid: \nError from server: something else\n"
        ))
        .is_empty());
    }

    #[test]
    fn a_misspelt_field_is_a_typo_first() {
        assert_eq!(
            typo_of("spec.metadataOptions.httpPutResponseHopLimt").as_deref(),
            Some("httpPutResponseHopLimit")
        );
        assert_eq!(
            typo_of("spec.template.spec.requirments[0]").as_deref(),
            Some("requirements")
        );
        // A real field, or one far from any: no guess.
        assert_eq!(typo_of("spec.capacityReservationSelectorTerms"), None);
        assert_eq!(typo_of("spec.template.spec.kubeletConfiguration"), None);
        let text = "$ kubectl apply -f ec2nodeclass.yaml\nWarning: unknown field \"spec.metadataOptions.httpPutResponseHopLimt\"\nec2nodeclass.karpenter.k8s.aws/default configured\n";
        let d = &crate::testing::check_only("KW104", text).diagnoses[0];
        assert_eq!(d.severity, Severity::Warning);
        assert!(d.summary.starts_with("\"spec.metadataOptions.httpPutResponseHopLimt\" looks like a typo of \"httpPutResponseHopLimit\""), "{}", d.summary);
        assert!(
            d.remediation[0]
                .text
                .contains("(spec.metadataOptions.httpPutResponseHopLimit)"),
            "{:?}",
            d.remediation[0]
        );
    }
    use crate::testing::{check_only, ids};

    #[test]
    fn server_side_apply_undeclared_field() {
        let text = "$ kubectl apply --server-side -f nodepool.yaml\nError from server: failed to create typed patch object (/default; karpenter.sh/v1, Kind=NodePool): .spec.template.spec.kubelet: field not declared in schema\n";
        let report = check_only("KW104", text);
        assert_eq!(ids(&report), ["KW104"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("\"spec.template.spec.kubelet\""),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("EC2NodeClass's `spec.kubelet`"),
            "{}",
            d.summary
        );
        // Another kind's undeclared field is not Karpenter's business.
        let other = "Error from server: failed to create typed patch object (/web; apps/v1, Kind=Deployment): .spec.template.spec.containers[name=\"web\"].resource: field not declared in schema";
        assert!(ids(&check_only("KW104", other)).is_empty());
        assert_eq!(
            undeclared_fields("errors:\n  .spec.a: field not declared in schema\n  .spec.b.c: field not declared in schema"),
            ["spec.a", "spec.b.c"]
        );
    }

    #[test]
    fn client_side_validation_error_joins_the_parent_path() {
        let text = r#"error validating data: ValidationError(NodePool.spec.disruption): unknown field "expireAfter" in sh.karpenter.v1.NodePool.spec.disruption"#;
        let d = &check_only("KW104", text).diagnoses[0];
        assert!(
            d.summary.contains("\"spec.disruption.expireAfter\""),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("`spec.template.spec.expireAfter`"),
            "{}",
            d.summary
        );
        assert_eq!(
            validation_error_path("ValidationError(EC2NodeClass): unknown field"),
            None
        );
    }

    #[test]
    fn every_variant() {
        for text in [
            r#"Error from server (BadRequest): error when creating "STDIN": NodePool in version "v1" cannot be handled as a NodePool: strict decoding error: unknown field "spec.template.spec.nodeClassRef.foo""#,
            r#"strict decoding error: unknown field "spec.kubeletConfiguration.maxPods", unknown field "spec.kubeletConfiguration.systemReserved""#,
            r#"ValidationError(NodePool.spec.disruption): unknown field "budgets" in sh.karpenter.v1beta1.NodePool.spec.disruption"#,
            r#"{"level":"INFO","time":"2025-10-31T19:27:14.289Z","logger":"controller","message":"unknown field \"status.nodeClassObservedGeneration\"","controller":"nodepool.registrationhealth","NodePool":{"name":"default"}}"#,
            "conversion webhook for karpenter.sh/v1beta1, Kind=NodePool failed: custom resource nodepools.karpenter.sh isn't configured for webhook conversion",
            r#"The EC2NodeClass "default" is invalid: EC2NodeClass.karpenter.k8s.aws "default" is invalid: spec.amiSelectorTerms: Invalid value: "array": expected at least one, got none"#,
            r#"error: resource mapping not found for name: "default" namespace: "" from "nodepool.yaml": no matches for kind "NodePool" in version "karpenter.sh/v1""#,
            r#"W0523 10:22:31.112233   41234 warnings.go:70] unknown field "spec.template.spec.kubelet""#,
            r#"Warning: unknown field "spec.disruption.expireAfter""#,
            r#"Error from server: conversion webhook for karpenter.sh/v1beta1, Kind=NodeClaim failed: Post "https://karpenter.kube-system.svc:8443/conversion/karpenter.sh?timeout=30s": service "karpenter" not found"#,
            "Error from server: request to convert CR from an invalid group/version: karpenter.sh/v1beta1",
            r#"The CustomResourceDefinition "nodeclaims.karpenter.sh" is invalid: status.storedVersions[0]: Invalid value: "v1beta1": must appear in spec.versions"#,
            r#"NodePool/general dry-run failed (Invalid): NodePool.karpenter.sh "general" is invalid: [spec.disruption.consolidateAfter: Required value, <nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]"#,
            r#"The NodePool "default" is invalid: spec.disruption.consolidationPolicy: Unsupported value: "WhenUnderutilized": supported values: "WhenEmpty", "WhenEmptyOrUnderutilized""#,
            "resource [karpenter.k8s.aws/v1beta1/EC2NodeClass] isn't valid for cluster, check the APIVersion and Kind fields are valid",
            "Error from server (NotFound): the server could not find the requested resource (get nodepools.karpenter.sh)",
        ] {
            assert_eq!(ids(&check_only("KW104", text)), ["KW104"], "{text}");
        }
    }

    #[test]
    fn dated_fields_by_their_last_segment() {
        for (path, name) in [
            (
                "spec.capacityReservationSelectorTerms",
                Some("capacityReservationSelectorTerms"),
            ),
            ("spec.disruption.budgets[0].reasons", Some("reasons")),
            ("spec.disruption.budgets", Some("budgets")),
            (
                "spec.template.spec.terminationGracePeriod",
                Some("terminationGracePeriod"),
            ),
            ("spec.amiSelectorTerms[0].alias", Some("alias")),
            ("spec.template.spec.nodeClassRef.foo", None),
            ("budgetsX", None),
            ("", None),
        ] {
            assert_eq!(dated_field(path).map(|d| d.name), name, "{path}");
        }
        // Newer than the controller: both go to the release that added the field.
        let report = check_only(
            "KW104",
            "$ kubectl apply -f x.yaml\nError from server (BadRequest): error when creating \"x.yaml\": EC2NodeClass in version \"v1\" cannot be handled as a EC2NodeClass: strict decoding error: unknown field \"spec.capacityReservationSelectorTerms\"\n$ kubectl get deployment -n karpenter karpenter -o jsonpath='{.spec.template.spec.containers[0].image}'\npublic.ecr.aws/karpenter/controller:1.1.2@sha256:3f0d2b1c9e8a7f6d5c4b3a291807f6e5d4c3b2a1908f7e6d5c4b3a2918f7e6d5\n",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains(
                "came with Karpenter v1.3. The controller runs 1.1.2, which predates it too"
            ),
            "{}",
            d.summary
        );
        assert!(
            d.remediation.iter().any(|r| r
                .command
                .as_deref()
                .is_some_and(|c| c.contains("karpenter-crd --version 1.3.0")
                    && c.contains("reservedCapacity=true"))),
            "{:?}",
            d.remediation
        );
    }

    #[test]
    fn names_fields_kind_and_fix() {
        let report = check_only(
            "KW104",
            r#"Error from server (BadRequest): error when creating "STDIN": NodePool in version "v1" cannot be handled as a NodePool: strict decoding error: unknown field "spec.template.spec.nodeClassRef.foo""#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("\"spec.template.spec.nodeClassRef.foo\" (NodePool)"),
            "{}",
            d.summary
        );
        assert!(d.remediation[1].command.as_deref().unwrap().starts_with("helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version <controller version>"));
    }

    #[test]
    fn controller_side_field_means_old_crds() {
        let report = check_only(
            "KW104",
            r#"{"level":"INFO","logger":"controller","message":"unknown field \"status.nodeClassObservedGeneration\"","controller":"nodepool.registrationhealth"}"#,
        );
        assert!(report.diagnoses[0]
            .summary
            .contains("older than the controller"));
    }

    #[test]
    fn conversion_webhook_in_the_wrong_namespace() {
        let mut facts = Facts::default();
        facts.messages.push(Message {
            text: r#"conversion webhook for karpenter.sh/v1beta1, Kind=NodeClaim failed: Post "https://karpenter.kube-system.svc:8443/conversion/karpenter.sh?timeout=30s": service "karpenter" not found"#.into(),
            ..Default::default()
        });
        facts.karpenter_namespace = Some("karpenter".into());
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains(
                "namespace kube-system, which does not exist there: Karpenter runs in karpenter"
            ),
            "{}",
            d.summary
        );
        assert!(d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("--set webhook.serviceNamespace=karpenter"))));
    }

    #[test]
    fn stored_versions_block_the_upgrade() {
        let report = check_only(
            "KW104",
            r#"Error: UPGRADE FAILED: cannot patch "nodepools.karpenter.sh" with kind CustomResourceDefinition: CustomResourceDefinition.apiextensions.k8s.io "nodepools.karpenter.sh" is invalid: status.storedVersions[0]: Invalid value: "v1beta1": must appear in spec.versions"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("storedVersions still lists v1beta1"),
            "{}",
            d.summary
        );
        assert!(d
            .remediation
            .iter()
            .any(|r| r.command.as_deref().is_some_and(
                |c| c.contains("kubectl patch crd nodepools.karpenter.sh --subresource=status")
            )));
    }

    #[test]
    fn crd_objects_against_manifests_and_controller() {
        use crate::facts::{CrdVersion, NodePool};
        let crd = |versions: &[(&str, bool)], strategy: Option<&str>, stored: &[&str]| Crd {
            meta: Meta {
                name: "nodepools.karpenter.sh".into(),
                ..Meta::default()
            },
            group: "karpenter.sh".into(),
            kind: "NodePool".into(),
            versions: versions
                .iter()
                .map(|(n, s)| CrdVersion {
                    name: n.to_string(),
                    served: *s,
                    storage: false,
                })
                .collect(),
            conversion_strategy: strategy.map(str::to_string),
            stored_versions: stored.iter().map(|s| s.to_string()).collect(),
            conditions: Vec::new(),
        };
        let mut facts = Facts::default();
        facts
            .crds
            .push(crd(&[("v1beta1", true)], None, &["v1beta1"]));
        facts.nodepools.push(NodePool {
            meta: Meta {
                name: "default".into(),
                api_version: Some("karpenter.sh/v1".into()),
                ..Meta::default()
            },
            ..NodePool::default()
        });
        let d = &check(&facts)[0];
        assert!(
            d.summary.contains("NodePool default is written for karpenter.sh/v1, but CRD nodepools.karpenter.sh serves only v1beta1"),
            "{}",
            d.summary
        );
        assert_eq!(d.confidence, Confidence::High);

        // v1.2 controller, CRD from v1.0: inferred, medium.
        let mut facts = Facts::default();
        facts.crds.push(crd(
            &[("v1", true), ("v1beta1", true)],
            Some("Webhook"),
            &["v1beta1", "v1"],
        ));
        facts.karpenter_version = Some("1.2.1".into());
        let d = &check(&facts)[0];
        assert!(d.summary.contains("from v1.0"), "{}", d.summary);
        assert!(
            d.summary.contains("storedVersions still lists v1beta1"),
            "{}",
            d.summary
        );
        assert_eq!(d.confidence, Confidence::Medium);

        // Healthy: v1 only, controller v1.3.
        let mut facts = Facts::default();
        facts.crds.push(crd(&[("v1", true)], Some("None"), &["v1"]));
        facts.karpenter_version = Some("1.3.0".into());
        assert!(check(&facts).is_empty());
    }

    #[test]
    fn near_misses() {
        for text in [
            r#"Error from server (BadRequest): error when creating "deploy.yaml": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].resource""#,
            r#"error: resource mapping not found for name: "x" namespace: "" from "x.yaml": no matches for kind "Certificate" in version "cert-manager.io/v1""#,
            r#"The Deployment "web" is invalid: spec.replicas: Invalid value: -1"#,
            r#"The NodePool "gpu" is invalid: spec.template.spec.requirements[0].key: Invalid value: "string": label domain "kubernetes.io" is restricted"#,
            r#"W0523 10:22:31.112233   41234 warnings.go:70] unknown field "spec.template.spec.containers[0].resource""#,
            // A pre-v0.32 cluster has no NodeClaims: not a skew of its CRDs.
            r#"error: the server doesn't have a resource type "nodeclaims""#,
            // Another operator's condition field, outside any Karpenter log.
            r#"{"level":"info","ts":"2025-07-09T04:56:08Z","logger":"KubeAPIWarningLogger","msg":"unknown field \"status.conditions[0].observedGeneration\""}"#,
            r#"The Certificate "web" is invalid: status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to 0"#,
        ] {
            assert!(ids(&check_only("KW104", text)).is_empty(), "{text}");
        }
    }

    #[test]
    fn condition_observed_generation_from_a_karpenter_controller() {
        for text in [
            // The controller logs the API server's warning bare: the log line is the context.
            r#"{"level":"INFO","time":"2024-08-20T10:00:00.000Z","logger":"controller","message":"unknown field \"status.conditions[0].observedGeneration\"","commit":"490ef94","controller":"nodeclaim.lifecycle","controllerGroup":"karpenter.sh","controllerKind":"NodeClaim","NodeClaim":{"name":"default-x7k2p"},"namespace":"","name":"default-x7k2p"}"#,
            r#"{"level":"INFO","time":"2026-01-10T12:56:36.750Z","logger":"controller","message":"unknown field \"status.nodes\"","commit":"c9c3a48","controller":"nodepool.counter","controllerGroup":"karpenter.sh","controllerKind":"NodePool","NodePool":{"name":"default"},"namespace":"","name":"default"}"#,
            // Rejected status writes naming the object.
            r#"{"level":"ERROR","time":"2024-08-20T10:00:00.000Z","logger":"controller","message":"Reconciler error","controller":"nodeclaim.lifecycle","NodeClaim":{"name":"default-x7k2p"},"error":"NodeClaim.karpenter.sh \"default-x7k2p\" is invalid: status.conditions[0].observedGeneration: Required value"}"#,
            r#"NodePool.karpenter.sh "default" is invalid: status.conditions[2].observedGeneration: Invalid value: -1: status.conditions[2].observedGeneration in body should be greater than or equal to 0"#,
            // kubectl's client-side validation.
            r#"error: error validating "nodeclaim.yaml": error validating data: ValidationError(NodeClaim.status.conditions[0]): unknown field "observedGeneration" in sh.karpenter.v1beta1.NodeClaim.status.conditions; if you choose to ignore these errors, turn validation off with --validate=false"#,
        ] {
            assert_eq!(ids(&check_only("KW104", text)), ["KW104"], "{text}");
        }
        let report = check_only(
            "KW104",
            r#"{"level":"INFO","time":"2024-08-20T10:00:00.000Z","logger":"controller","message":"unknown field \"status.conditions[0].observedGeneration\"","controller":"nodeclaim.lifecycle","controllerGroup":"karpenter.sh","controllerKind":"NodeClaim","NodeClaim":{"name":"default-x7k2p"}}"#,
        );
        let d = &report.diagnoses[0];
        let text = format!("{} {:?}", d.summary, d.remediation);
        assert!(
            text.contains("status.conditions[0].observedGeneration"),
            "{text}"
        );
        assert!(text.contains("v0.36"), "{text}");
        assert!(text.contains("karpenter-crd"), "{text}");
    }
}
