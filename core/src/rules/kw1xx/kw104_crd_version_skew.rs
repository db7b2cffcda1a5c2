//! KW104 crd-version-skew.

use crate::facts::{Facts, Message};
use crate::rules::text::{
    all_quoted_after, contains_any, karpenter_namespace_or_placeholder, quoted_after,
};
use crate::rules::{Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW104",
    slug: "crd-version-skew",
    title: "The Karpenter CRDs do not match the controller or the manifest",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
The API server rejects or drops fields of Karpenter objects because the installed
CustomResourceDefinitions are older (or newer) than the controller or the manifest being
applied.

Signals: `strict decoding error: unknown field "<field>"` (e.g. `NodePool in version "v1"
cannot be handled as a NodePool: strict decoding error: unknown field
"spec.template.spec.nodeClassRef.foo"`), kubectl's client-side `ValidationError(NodePool...):
unknown field "<field>"`, the controller's `unknown field "status.nodeClassObservedGeneration"`,
`custom resource nodepools.karpenter.sh isn't configured for webhook conversion`, `no matches for
kind "NodePool" in version "karpenter.sh/v1"`, and CEL rejections after an API-version migration
(`EC2NodeClass.karpenter.k8s.aws "<name>" is invalid: spec.amiSelectorTerms: Invalid value:
"array": expected at least one, got none`).

## Why it happens
`helm upgrade` never upgrades CRDs in a chart's `crds/` directory, so upgrading the `karpenter`
chart alone leaves the old CRDs behind; the controller then writes status fields the CRD does
not know, and v1 manifests meet v1beta1 schemas. The reverse happens when a manifest written for
an older API (`v1beta1` fields such as `spec.kubeletConfiguration`) is applied to new CRDs, or
when the field is simply misspelt.

## How to fix
Upgrade the CRDs first, to the controller's version, then the controller (the Karpenter upgrade
guide): `helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd
--version <controller version> -n <ns>`. If the field is not in the new CRD either, it is a typo
or a field that moved (v1 moved `kubelet` from the NodePool to the EC2NodeClass and `expireAfter`
into `spec.template.spec`).
"#,
};

const SIGNALS: &[&str] = &[
    "strict decoding error",
    "unknown field",
    "isn't configured for webhook conversion",
    "no matches for kind",
    "is invalid: spec.",
    "in body should be at least",
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
        "\"budgets\"",
        "`spec.disruption.budgets` needs NodePool CRDs from v0.34 or later",
    ),
];

fn is_skew(text: &str) -> bool {
    let karpenter = contains_any(text, KARPENTER_MARKERS);
    if contains_any(text, &["isn't configured for webhook conversion"]) {
        return karpenter;
    }
    if contains_any(text, &["no matches for kind"]) {
        return karpenter;
    }
    if contains_any(text, &["strict decoding error", "unknown field"]) {
        // A strict decoding error names its kind (`<Kind> in version "v1" cannot be handled
        // as a <Kind>`); another kind's is not Karpenter's business. Without a kind (a
        // shortened paste), a Karpenter status field or any Karpenter word decides.
        let names_kind = contains_any(text, &["cannot be handled as a", "ValidationError("]);
        return if names_kind {
            karpenter
        } else {
            contains_any(text, &["strict decoding error"])
                || karpenter
                || contains_any(text, &["nodeClassObservedGeneration"])
        };
    }
    if contains_any(
        text,
        &[
            "ec2nodeclass.karpenter.k8s.aws \"",
            "nodepool.karpenter.sh \"",
            "nodeclaim.karpenter.sh \"",
        ],
    ) && contains_any(text, &["is invalid:"])
    {
        return true;
    }
    // The v0.37-era status rejection: `conditions[1].reason in body should be at least 1
    // chars long` on a Karpenter object.
    contains_any(text, &["in body should be at least"]) && karpenter
}

fn check(facts: &Facts) -> Vec<Diagnosis> {
    let hits: Vec<&Message> = facts.messages.iter().filter(|m| is_skew(&m.text)).collect();
    if hits.is_empty() {
        return Vec::new();
    }
    let mut fields: Vec<String> = Vec::new();
    let mut kinds: Vec<String> = Vec::new();
    let mut notes: Vec<&str> = Vec::new();
    let mut webhook_conversion = false;
    let mut controller_side = false;
    let mut invalid_objects: Vec<String> = Vec::new();
    for m in &hits {
        for f in all_quoted_after(&m.text, "unknown field ") {
            if !fields.contains(&f) {
                fields.push(f);
            }
        }
        if let Some(kind) = kind_of(&m.text) {
            if !kinds.contains(&kind) {
                kinds.push(kind);
            }
        }
        for (field, note) in MOVED_FIELDS {
            if m.text.contains(field) && !notes.contains(note) {
                notes.push(note);
            }
        }
        webhook_conversion |= contains_any(&m.text, &["isn't configured for webhook conversion"]);
        controller_side |= contains_any(
            &m.text,
            &["nodeClassObservedGeneration", "in body should be at least"],
        );
        for marker in [
            "EC2NodeClass.karpenter.k8s.aws ",
            "NodePool.karpenter.sh ",
            "NodeClaim.karpenter.sh ",
        ] {
            if let Some(name) = quoted_after(&m.text, marker) {
                let kind = marker.split('.').next().unwrap_or_default();
                let obj = format!("{kind} {name}");
                if !invalid_objects.contains(&obj) {
                    invalid_objects.push(obj);
                }
            }
        }
    }
    let version = facts.karpenter_version.clone();
    let ns = karpenter_namespace_or_placeholder(facts);

    let manifest_side = hits.iter().any(|m| {
        contains_any(
            &m.text,
            &[
                "strict decoding error",
                "ValidationError(",
                "no matches for kind",
                "is invalid:",
            ],
        )
    });
    let mut summary = String::from(match (controller_side, manifest_side) {
        (true, true) => {
            "The installed Karpenter CRDs match neither the controller nor the manifests applied"
        }
        (true, false) => "The installed Karpenter CRDs do not match the controller",
        _ => "The installed Karpenter CRDs do not match the controller or the manifest",
    });
    if !fields.is_empty() {
        let list: Vec<String> = fields.iter().map(|f| format!("\"{f}\"")).collect();
        summary.push_str(&format!(
            ": the API server does not know field{} {}",
            if fields.len() == 1 { "" } else { "s" },
            list.join(", ")
        ));
        if !kinds.is_empty() {
            summary.push_str(&format!(" ({})", kinds.join(", ")));
        }
    }
    if webhook_conversion {
        summary.push_str(if fields.is_empty() { ": " } else { "; " });
        summary.push_str("a CRD still lists several versions without the conversion webhook that v1.0 needs (isn't configured for webhook conversion)");
    }
    if !invalid_objects.is_empty() {
        summary.push_str(if fields.is_empty() && !webhook_conversion {
            ": "
        } else {
            "; "
        });
        summary.push_str(&format!(
            "the new schema's validation rejects {}",
            invalid_objects.join(", ")
        ));
    }
    if fields.is_empty() && !webhook_conversion && invalid_objects.is_empty() {
        summary.push_str(": the API server does not serve the Karpenter kinds or versions the manifest or controller uses");
    }
    summary.push('.');
    if controller_side {
        summary.push_str(" The controller writes fields the CRDs lack: the CRDs are older than the controller (helm upgrade does not upgrade CRDs).");
    }
    for note in &notes {
        summary.push(' ');
        summary.push_str(note);
        summary.push('.');
    }

    let chart_version = version
        .clone()
        .unwrap_or_else(|| "<controller version>".to_string());
    let mut steps = vec![
        Remediation::command(
            "See which API versions the installed CRDs serve, and which controller runs:",
            format!(
                "kubectl get crd nodepools.karpenter.sh nodeclaims.karpenter.sh ec2nodeclasses.karpenter.k8s.aws -o custom-columns=NAME:.metadata.name,VERSIONS:.spec.versions[*].name,CHART:.metadata.labels.helm\\.sh/chart\nkubectl get deployment -n {ns} -l app.kubernetes.io/name=karpenter -o jsonpath='{{.items[*].spec.template.spec.containers[*].image}}'"
            ),
        ),
        Remediation::command(
            format!(
                "Upgrade the CRDs to the controller's version first{}, then the controller (the Karpenter upgrade guide's order):",
                if version.is_some() { "" } else { " (fill in the controller's version)" }
            ),
            format!(
                "helm upgrade --install karpenter-crd oci://public.ecr.aws/karpenter/karpenter-crd --version {chart_version} --namespace {ns} --create-namespace"
            ),
        ),
    ];
    if webhook_conversion {
        steps.push(Remediation::text(
            "On v1.0.x the CRDs carry v1beta1 and v1 and need the conversion webhook: install karpenter-crd with `--set webhook.enabled=true --set webhook.serviceName=karpenter --set webhook.serviceNamespace=<karpenter namespace>`; from v1.1 the webhook is gone, so migrate every object to v1 before upgrading past v1.0.",
        ));
    }
    if !fields.is_empty() && !controller_side {
        steps.push(Remediation::text(
            "If the field is not in the new CRD either, it is a typo or a field that moved between API versions: compare with `kubectl explain nodepool.spec --recursive` (or `ec2nodeclass.spec`).",
        ));
    }
    vec![Diagnosis::new(&META, summary)
        .with_messages(hits.iter().copied())
        .with_remediation(steps)]
}

/// The kind a rejection names: `NodePool in version "v1" cannot be handled as a NodePool`,
/// `ValidationError(NodePool.spec.disruption)`, `sh.karpenter.v1beta1.NodePool`.
fn kind_of(text: &str) -> Option<String> {
    for marker in ["cannot be handled as a ", "ValidationError("] {
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

#[cfg(test)]
mod tests {
    use crate::testing::{check_only, ids};

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
        ] {
            assert_eq!(ids(&check_only("KW104", text)), ["KW104"], "{text}");
        }
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
    fn near_misses() {
        for text in [
            r#"Error from server (BadRequest): error when creating "deploy.yaml": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].resource""#,
            r#"error: resource mapping not found for name: "x" namespace: "" from "x.yaml": no matches for kind "Certificate" in version "cert-manager.io/v1""#,
            r#"The Deployment "web" is invalid: spec.replicas: Invalid value: -1"#,
        ] {
            assert!(ids(&check_only("KW104", text)).is_empty(), "{text}");
        }
    }
}
