//! KW001 image-pull-public-registry.

use crate::facts::{contains_ignore_ascii_case, Facts, ObjectRef};
use crate::rules::kw0xx::image_pull::{
    classes_phrase, owner_workload, pull_failures, recovered_note, subject, ErrorClass, ImageRef,
    PullFailure, Verdict, SIGNALS,
};
use crate::rules::text::{aws_account, aws_region};
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW001",
    slug: "image-pull-public-registry",
    title: "A container image cannot be pulled from a public registry",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
A container is stuck in `ErrImagePull` / `ImagePullBackOff` because the public registry serving
its image (registry.k8s.io, k8s.gcr.io, gcr.io, `*.pkg.dev`, Docker Hub, quay.io, ghcr.io,
public.ecr.aws) could not be reached or refused to serve in time: an i/o timeout, a DNS lookup
failure, a refused or reset connection, a 5xx answer, `DeadlineExceeded`, or a `429` /
`toomanyrequests` rate limit.

Signals: the container state reasons `ErrImagePull` / `ImagePullBackOff`, the kubelet events
`Failed to pull image "<image>": <err>`, `Error: ErrImagePull`, `Back-off pulling image
"<image>"` (newer kubelets append `: ErrImagePull: <err>`), `Error: ImagePullBackOff`, and the
kubelet journal's `"Failed to pull image" err="..." image="..."`. When only the back-off is in
the evidence, the image is public and no cause is shown, this rule still applies and says the
cause was not seen.

## Why it happens
Every new node pulls every image again. With Karpenter replacing nodes (consolidation, drift,
expiry, spot interruptions), pods are restarted on fresh nodes far more often than on static node
groups, so a registry outage or a rate limit that a long-lived node never noticed blocks the
restart. The classic case: during a registry.k8s.io outage, ingress-nginx replicas moved by a
scale-down could not pull their image, and the remaining replica's PodDisruptionBudget then
blocked further disruption (KW401). registry.k8s.io redirects to `*.pkg.dev` (and, from AWS,
to S3 buckets), so an egress allow-list that names only registry.k8s.io fails the same way.

## How to fix
Do not depend on a public registry at pod start: mirror the image into a registry you run
(an ECR pull-through cache rule, or a one-off copy with `crane copy`) and point the workload at
the mirror (for the ingress-nginx chart: `controller.image.registry`, `.image`, `.digest`; for
Karpenter's own chart: `controller.image.repository`, `.tag`, `.digest`). If an egress allow-list is the cause, allow the redirect targets too. Failures a mirror would not fix
(wrong tag, credentials) are KW002.
"#,
};

fn check(facts: &Facts) -> Vec<Diagnosis> {
    pull_failures(facts)
        .iter()
        .filter(|f| f.verdict() == Verdict::PublicRegistryUnavailable)
        .filter_map(|f| diagnose(facts, f))
        .collect()
}

/// Upstreams an ECR pull-through cache rule can front, with the repository prefix used
/// here and whether the rule needs a Secrets Manager credential.
fn pull_through_upstream(registry: &str) -> Option<(&'static str, &'static str, bool)> {
    match registry {
        "registry.k8s.io" => Some(("k8s", "registry.k8s.io", false)),
        "quay.io" => Some(("quay", "quay.io", false)),
        "public.ecr.aws" => Some(("ecr-public", "public.ecr.aws", false)),
        "docker.io" => Some(("docker-hub", "registry-1.docker.io", true)),
        "ghcr.io" => Some(("github", "ghcr.io", true)),
        _ => None,
    }
}

fn diagnose(facts: &Facts, f: &PullFailure<'_>) -> Option<Diagnosis> {
    let image = f.image.as_ref()?;
    let mut summary = subject(f);
    let confidence;
    if f.cause_unknown() {
        confidence = Confidence::Medium;
        summary.push_str(
            ": the kubelet is backing off (ImagePullBackOff) and the cause was not in the evidence. A public registry that cannot be reached, or rate-limits, is the failure a private mirror prevents; read the pull error to confirm.",
        );
    } else {
        confidence = Confidence::High;
        summary.push_str(&format!(": {}", classes_phrase(f)));
        if let Some(host) = f.redirected_host() {
            summary.push_str(&format!(" reaching {host}"));
            if image.registry == "registry.k8s.io" {
                summary.push_str(" (registry.k8s.io redirects there)");
            }
        }
        if f.classes() == [ErrorClass::RateLimited] {
            summary.push_str(
                ". The registry refused to serve more anonymous pulls: a private mirror prevents this.",
            );
        } else {
            summary.push_str(
                ". The node could not get the image from the registry: a private mirror prevents this.",
            );
        }
    }
    let mut steps: Vec<Remediation> = Vec::new();
    let pod = f.pods.first();
    let ns = pod
        .and_then(|p| p.namespace.clone())
        .unwrap_or_else(|| "<namespace>".to_string());
    if f.cause_unknown() {
        let name = pod.map(|p| p.name.as_str()).unwrap_or("<pod>");
        steps.push(Remediation::command(
            "Read the pull error the kubelet reported before the back-off:",
            format!("kubectl get events -n {ns} --field-selector involvedObject.name={name} | grep -i 'failed to pull'"),
        ));
    }
    // The node a pod object is bound to names the region (`ip-10-0-7-9.eu-central-1.compute.internal`).
    let region = aws_region(facts)
        .or_else(|| {
            facts
                .pods
                .iter()
                .find_map(|p| crate::rules::text::region_in_text(p.node_name.as_deref()?))
        })
        .unwrap_or_else(|| "<region>".to_string());
    let account = aws_account(facts).unwrap_or_else(|| "<account-id>".to_string());
    let ecr = format!("{account}.dkr.ecr.{region}.amazonaws.com");
    let (mirror_registry, mirror_image) = mirror_steps(&mut steps, image, &ecr, &region, &account);
    point_workload(
        &mut steps,
        facts,
        f,
        image,
        pod,
        &ns,
        &mirror_registry,
        &mirror_image,
    );
    if image.registry == "registry.k8s.io" || image.registry == "k8s.gcr.io" {
        let seen = f
            .redirected_host()
            .map(|h| format!(" (this pull went to {h})"))
            .unwrap_or_default();
        steps.push(Remediation::text(format!(
            "If an egress allow-list or proxy sits between the nodes and the internet: registry.k8s.io redirects blob and manifest requests to `*.pkg.dev` and, from AWS, to `prod-registry-k8s-io-{region}.s3.dualstack.{region}.amazonaws.com`{seen}; allow those too, or rely on the mirror."
        )));
    }
    if f.classes().contains(&ErrorClass::RateLimited) && image.registry == "docker.io" {
        steps.push(Remediation::text(
            "Docker Hub limits anonymous pulls per source IP, and every node behind one NAT gateway shares the limit: the pull-through cache rule above pulls with your Docker Hub credentials once and serves every node.",
        ));
    }
    if let Some(note) = recovered_note(f) {
        summary.push_str(note);
    }
    let related: &[&'static str] = if pdb_blocked(facts, pod) {
        &["KW401"]
    } else {
        &[]
    };
    Some(
        Diagnosis::new(&META, summary)
            .with_severity(if f.recovered.is_some() {
                Severity::Warning
            } else {
                Severity::Error
            })
            .with_confidence(confidence)
            .with_object(pod)
            .with_messages(f.messages.iter().copied())
            .with_messages(f.recovered)
            .with_evidence(f.states.iter().cloned())
            .with_remediation(steps)
            .with_related(related),
    )
}

/// Adds the mirror steps; returns the mirror's registry prefix and the full mirror image.
fn mirror_steps(
    steps: &mut Vec<Remediation>,
    image: &ImageRef,
    ecr: &str,
    region: &str,
    account: &str,
) -> (String, String) {
    let registry = if image.registry == "k8s.gcr.io" {
        steps.push(Remediation::text(format!(
            "k8s.gcr.io is frozen and redirected to registry.k8s.io: use registry.k8s.io/{} (same path) and mirror that.",
            image.path_and_version()
        )));
        "registry.k8s.io"
    } else {
        image.registry.as_str()
    };
    match pull_through_upstream(registry) {
        Some((prefix, upstream, needs_credential)) => {
            let mut cmd = format!(
                "aws ecr create-pull-through-cache-rule --ecr-repository-prefix {prefix} --upstream-registry-url {upstream} --region {region}"
            );
            let mut text = format!(
                "Create an ECR pull-through cache rule for {registry} (once per account and region); the first pull through it copies the image into ECR, later pulls never leave AWS."
            );
            if needs_credential {
                cmd.push_str(&format!(
                    " --credential-arn arn:aws:secretsmanager:{region}:{account}:secret:ecr-pullthroughcache/{prefix}"
                ));
                text.push_str(&format!(
                    " {registry} needs credentials: store them first in Secrets Manager under a name starting with `ecr-pullthroughcache/`."
                ));
            }
            text.push_str(" The node role needs `ecr:BatchImportUpstreamImage` (and `ecr:CreateRepository`, unless the repositories exist) besides the usual ECR read permissions.");
            steps.push(Remediation::command(text, cmd));
            let mirror_registry = format!("{ecr}/{prefix}");
            let mirror_image = format!("{mirror_registry}/{}", image.path_and_version());
            (mirror_registry, mirror_image)
        }
        None => {
            let repo = image.repository.clone();
            let target_tag = image.tag.clone().unwrap_or_else(|| "latest".to_string());
            let source = if registry == image.registry {
                image.raw.clone()
            } else {
                format!("{registry}/{}", image.path_and_version())
            };
            steps.push(Remediation::command(
                format!(
                    "{registry} cannot be fronted by an ECR pull-through cache: copy the image into a private ECR repository (crane keeps the digest):"
                ),
                format!(
                    "aws ecr create-repository --repository-name {repo} --region {region}\ncrane copy {source} {ecr}/{repo}:{target_tag}"
                ),
            ));
            (ecr.to_string(), format!("{ecr}/{repo}:{target_tag}"))
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn point_workload(
    steps: &mut Vec<Remediation>,
    facts: &Facts,
    f: &PullFailure<'_>,
    image: &ImageRef,
    pod: Option<&ObjectRef>,
    ns: &str,
    mirror_registry: &str,
    mirror_image: &str,
) {
    // The sandbox (pause) image is the node's, not the workload's: containerd pulls it for
    // every pod from the node's own configuration.
    let sandbox = f
        .messages
        .iter()
        .any(|m| contains_ignore_ascii_case(&m.text, "failed to get sandbox image"));
    if sandbox {
        steps.push(Remediation::yaml(
            "The image is the node's sandbox (pause) image, pulled by containerd for every pod: no workload references it. Use an EKS-optimized AMI family in the EC2NodeClass (their sandbox image comes from ECR in the region), or point containerd at the mirror in the EC2NodeClass user data (AL2023 nodeadm, containerd 1.7 key shown; containerd 2 reads `sandbox` under `[plugins.\"io.containerd.cri.v1.images\".pinned_images]`; `kubectl edit ec2nodeclass <name>`):",
            format!(
                "spec:\n  userData: |\n    MIME-Version: 1.0\n    Content-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n    --BOUNDARY\n    Content-Type: application/node.eks.aws\n\n    apiVersion: node.eks.aws/v1alpha1\n    kind: NodeConfig\n    spec:\n      containerd:\n        config: |\n          [plugins.\"io.containerd.grpc.v1.cri\"]\n          sandbox_image = \"{mirror_image}\"\n    --BOUNDARY--\n"
            ),
        ));
        return;
    }
    // Charts whose values name the image: `kubectl set image` would be undone by the next
    // `helm upgrade`. A pull-through cache serves the same manifest, so the digest stays valid.
    let version_flags = || {
        let mut flags = String::new();
        if let Some(tag) = &image.tag {
            flags.push_str(&format!(" \\\n  --set controller.image.tag={tag}"));
        }
        if let Some(digest) = &image.digest {
            flags.push_str(&format!(" \\\n  --set controller.image.digest={digest}"));
        }
        flags
    };
    if image.repository.ends_with("ingress-nginx/controller") {
        let cmd = format!(
            "helm upgrade ingress-nginx ingress-nginx/ingress-nginx -n {ns} --reuse-values \\\n  --set controller.image.registry={mirror_registry} \\\n  --set controller.image.image={}{} \\\n  --set controller.admissionWebhooks.patch.image.registry={mirror_registry}",
            image.repository,
            version_flags()
        );
        steps.push(Remediation::command(
            "Point the ingress-nginx chart at the mirror (`controller.image.registry`, `.image`, `.digest`; the admission webhook's certgen image too). A pull-through cache serves the same manifest, so the upstream digest stays valid; if you re-push the image, set `controller.image.digest` to the mirror's digest or empty.",
            cmd,
        ));
        return;
    }
    if image.registry == "public.ecr.aws" && image.repository == "karpenter/controller" {
        let cmd = format!(
            "helm upgrade karpenter oci://public.ecr.aws/karpenter/karpenter -n {ns} --reuse-values \\\n  --set controller.image.repository={mirror_registry}/{}{}",
            image.repository,
            version_flags()
        );
        steps.push(Remediation::command(
            "Point the Karpenter chart at the mirror (`controller.image.repository`, `.tag`, `.digest`). A pull-through cache serves the same manifest, so the upstream digest stays valid; if you re-push the image, set `controller.image.digest` to the mirror's digest or empty.",
            cmd,
        ));
        return;
    }
    let owner = pod.and_then(|p| owner_workload(facts, p));
    // Without the pod object, a `kubectl get events -o wide` row names the container in its
    // SUBOBJECT column, an Event object in `involvedObject.fieldPath` (`spec.containers{<name>}`).
    let container_in = |text: &str| {
        let token = crate::rules::text::token_after(text, "containers{")?;
        Some(token.split('}').next()?.to_string()).filter(|n| !n.is_empty())
    };
    let container = f
        .containers
        .first()
        .cloned()
        .or_else(|| {
            f.messages.iter().find_map(|m| {
                container_in(&m.evidence.text).or_else(|| {
                    let object = m.object.as_ref()?;
                    facts
                        .event_field_paths
                        .iter()
                        .filter(|(o, _)| o == object)
                        .find_map(|(_, path)| container_in(path))
                })
            })
        })
        .unwrap_or_else(|| "<container>".to_string());
    // Without a known owner, the pod's name may still say it: `<daemonset>-<5 characters>`
    // (no ReplicaSet hash). A Job's pods are named the same way, so the step says how to tell.
    let (kind, name, check) = match (owner, pod) {
        (Some((kind, name)), _) => (kind, name, String::new()),
        (None, Some(p)) => {
            let lookup = format!(
                "kubectl get pod {} -n {ns} -o jsonpath='{{.metadata.ownerReferences[*].kind}}/{{.metadata.ownerReferences[*].name}}{{\"\\n\"}}'",
                p.name
            );
            match daemonset_of_pod(&p.name) {
                Some(ds) => (
                    "daemonset".to_string(),
                    ds.to_string(),
                    format!("The pod's name reads as a DaemonSet's (`{ds}-` and five characters, no ReplicaSet hash); a Job's pods are named the same way, so confirm its owner first (`{lookup}`). "),
                ),
                None => (
                    "<owner-kind>".to_string(),
                    "<workload>".to_string(),
                    format!("The input does not show the pod's owner: `{lookup}` names it. "),
                ),
            }
        }
        (None, None) => (
            "<owner-kind>".to_string(),
            "<workload>".to_string(),
            String::new(),
        ),
    };
    steps.push(Remediation::command(
        format!("{check}Point the workload at the mirror (or change the image in its chart values / manifest so the next deploy keeps it):"),
        format!("kubectl set image {kind}/{name} {container}={mirror_image} -n {ns}"),
    ));
}

/// `<base>` of a pod named `<base>-<5 lowercase letters or digits>` that no Deployment or
/// StatefulSet naming explains: a DaemonSet's (or a Job's) pod.
fn daemonset_of_pod(pod: &str) -> Option<&str> {
    let (base, suffix) = pod.rsplit_once('-')?;
    (!base.is_empty()
        && suffix.len() == 5
        && suffix
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && crate::rules::names::deployment_of_pod(pod).is_none())
    .then_some(base)
}

/// Whether a PodDisruptionBudget is blocking disruption, which the unpullable replica
/// probably causes (KW401 explains it).
fn pdb_blocked(facts: &Facts, pod: Option<&ObjectRef>) -> bool {
    let text_says = facts.messages.iter().any(|m| {
        contains_ignore_ascii_case(&m.text, "prevents pod evictions")
            || contains_ignore_ascii_case(&m.text, "violates a pdb")
    });
    let ns = pod.and_then(|p| p.namespace.as_deref());
    text_says
        || facts.pdbs.iter().any(|p| {
            p.disruptions_allowed == Some(0) && (ns.is_none() || p.meta.namespace.as_deref() == ns)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_only, ids};

    const REGISTRY_K8S_TIMEOUT: &str = r#"Events:
  Type     Reason     Age                   From               Message
  ----     ------     ----                  ----               -------
  Warning  Failed     92s (x4 over 3m39s)   kubelet            Failed to pull image "registry.k8s.io/ingress-nginx/controller:v1.11.2": rpc error: code = DeadlineExceeded desc = failed to pull and unpack image "registry.k8s.io/ingress-nginx/controller:v1.11.2": failed to resolve reference "registry.k8s.io/ingress-nginx/controller:v1.11.2": failed to do request: Head "https://us-west2-docker.pkg.dev/v2/k8s-artifacts-prod/images/ingress-nginx/controller/manifests/v1.11.2": dial tcp 74.125.203.82:443: i/o timeout
  Warning  Failed     92s (x4 over 3m39s)   kubelet            Error: ErrImagePull
  Normal   BackOff    15s (x9 over 3m38s)   kubelet            Back-off pulling image "registry.k8s.io/ingress-nginx/controller:v1.11.2"
  Warning  Failed     15s (x9 over 3m38s)   kubelet            Error: ImagePullBackOff"#;

    #[test]
    fn registry_k8s_io_timeout_names_everything() {
        let report = check_only("KW001", REGISTRY_K8S_TIMEOUT);
        assert_eq!(ids(&report), ["KW001"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("registry.k8s.io/ingress-nginx/controller:v1.11.2"),
            "{}",
            d.summary
        );
        assert!(
            d.summary.contains("public registry registry.k8s.io"),
            "{}",
            d.summary
        );
        assert!(
            d.summary
                .contains("timeout reaching us-west2-docker.pkg.dev"),
            "{}",
            d.summary
        );
        assert_eq!(d.evidence.len(), 4);
        assert_eq!(d.confidence, Confidence::High);
        let cmds: Vec<&str> = d
            .remediation
            .iter()
            .filter_map(|r| r.command.as_deref())
            .collect();
        assert!(
            cmds.iter().any(|c| c
                .contains("--ecr-repository-prefix k8s --upstream-registry-url registry.k8s.io")),
            "{cmds:?}"
        );
        assert!(
            cmds.iter().any(|c| c.contains("controller.image.registry=")
                && c.contains("controller.image.image=ingress-nginx/controller")),
            "{cmds:?}"
        );
        assert!(d.remediation.iter().any(|r| r.text.contains("*.pkg.dev")));
    }

    #[test]
    fn every_availability_class() {
        for err in [
            "dial tcp: lookup registry-1.docker.io on 10.0.0.2:53: no such host",
            "dial tcp 1.2.3.4:443: connect: connection refused",
            "read tcp 10.0.0.1:1->1.2.3.4:443: read: connection reset by peer",
            "unexpected status code 503 Service Unavailable",
            "429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.",
            "net/http: TLS handshake timeout",
            "context deadline exceeded",
        ] {
            let text = format!(r#"Warning  Failed  1m  kubelet  Failed to pull image "nginx:1.27": rpc error: code = Unknown desc = {err}"#);
            assert_eq!(ids(&check_only("KW001", &text)), ["KW001"], "{err}");
        }
    }

    #[test]
    fn back_off_only_says_the_cause_was_not_seen() {
        let report = check_only(
            "KW001",
            "Normal   BackOff    15s (x9 over 3m38s)   kubelet   Back-off pulling image \"quay.io/prometheus/node-exporter:v1.8.2\"\nWarning  Failed  15s  kubelet  Error: ImagePullBackOff",
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary.contains("cause was not in the evidence"),
            "{}",
            d.summary
        );
        assert_eq!(d.confidence, Confidence::Medium);
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("failed to pull"));
    }

    #[test]
    fn docker_hub_needs_a_credential() {
        let report = check_only(
            "KW001",
            r#"Failed to pull image "bitnami/redis:7.2": toomanyrequests: You have reached your pull rate limit."#,
        );
        let d = &report.diagnoses[0];
        let cmd = d.remediation[0].command.as_deref().unwrap();
        assert!(
            cmd.contains("registry-1.docker.io") && cmd.contains("ecr-pullthroughcache/docker-hub"),
            "{cmd}"
        );
        assert!(d.remediation.iter().any(|r| r
            .command
            .as_deref()
            .is_some_and(|c| c.contains("docker-hub/bitnami/redis:7.2"))));
    }

    #[test]
    fn gcr_is_copied_not_cached() {
        let report = check_only(
            "KW001",
            r#"Failed to pull image "gcr.io/distroless/static:nonroot": dial tcp 142.250.1.1:443: i/o timeout"#,
        );
        let cmd = report.diagnoses[0].remediation[0]
            .command
            .as_deref()
            .unwrap();
        assert!(
            cmd.contains("crane copy gcr.io/distroless/static:nonroot"),
            "{cmd}"
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            // Not mirror-fixable: KW002.
            r#"Failed to pull image "registry.k8s.io/ingress-nginx/controller:v1.11.1@sha256:e643": rpc error: code = Unknown desc = manifest unknown: Requested entity was not found."#,
            // Private registry: KW002 even for a timeout.
            r#"Failed to pull image "444455556666.dkr.ecr.us-west-2.amazonaws.com/media/render:2.8.0": dial tcp 1.2.3.4:443: i/o timeout"#,
            // A successful pull.
            r#"Successfully pulled image "ghcr.io/acme-shop/checkout:2.14.1" in 4.873s"#,
            r#"Pulling image "ghcr.io/acme-shop/checkout:2.14.1""#,
        ] {
            assert!(ids(&check_only("KW001", text)).is_empty(), "{text}");
        }
    }
}
