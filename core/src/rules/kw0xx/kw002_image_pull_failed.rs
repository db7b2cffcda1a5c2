//! KW002 image-pull-failed.

use crate::facts::Facts;
use crate::rules::kw0xx::image_pull::{
    classes_phrase, pull_failures, recovered_note, subject, ErrorClass, ImageRef, PullFailure,
    RegistryKind, Verdict, SIGNALS,
};
use crate::rules::text::aws_region;
use crate::rules::{Confidence, Diagnosis, Remediation, Rule, RuleMeta, Severity};

pub const RULE: Rule = Rule { meta: META, check };

const META: RuleMeta = RuleMeta {
    id: "KW002",
    slug: "image-pull-failed",
    title: "A container image cannot be pulled",
    severity: Severity::Error,
    superseded_by: &[],
    signals: SIGNALS,
    docs: r#"## What it means
A container is stuck in `ErrImagePull` / `ImagePullBackOff` for a reason a registry mirror would
not fix: the tag or digest does not exist (`manifest unknown`, `not found`), the node has no or
wrong credentials (`unauthorized`, `no basic auth credentials`), or the registry refuses
(`403 Forbidden`, `pull access denied`); or the image lives in a private registry (ECR and the
like), whatever the error.

Signals: the same kubelet texts as KW001 (`Failed to pull image "<image>": <err>`, `Error:
ErrImagePull`, `Back-off pulling image "<image>"`, `Error: ImagePullBackOff`, container state
reasons). Exactly one of KW001 and KW002 is reported for one image.

## Why it happens
- Wrong tag or digest: a typo, a tag that was never pushed, a digest pinned from another
  architecture or registry.
- Credentials: a private repository without `imagePullSecrets`; for ECR, a node role without
  `ecr:GetAuthorizationToken` / `ecr:BatchGetImage` / `ecr:GetDownloadUrlForLayer`, a
  cross-account repository whose policy does not allow the node role, or a pull-through cache
  prefix with no rule behind it.
- Network to a private registry: ECR without NAT or VPC endpoints (`ecr.api`, `ecr.dkr`, S3).

## How to fix
Check the reference exists (`docker manifest inspect <image>`, `crane ls <repository>`, for ECR
`aws ecr describe-images`), fix credentials (`imagePullSecrets`, or the node role's ECR
permissions: `AmazonEC2ContainerRegistryReadOnly`), or open the network path.
"#,
};

fn check(facts: &Facts) -> Vec<Diagnosis> {
    pull_failures(facts)
        .iter()
        .filter(|f| f.verdict() == Verdict::PullFailed)
        .map(|f| diagnose(facts, f))
        .collect()
}

fn diagnose(facts: &Facts, f: &PullFailure<'_>) -> Diagnosis {
    let mut summary = subject(f);
    let classes = f.classes();
    let confidence = if f.image.is_none() {
        Confidence::Low
    } else if f.cause_unknown() {
        Confidence::Medium
    } else {
        Confidence::High
    };
    if f.cause_unknown() {
        summary.push_str(": the kubelet reports ErrImagePull / ImagePullBackOff and the cause was not in the evidence.");
    } else {
        summary.push_str(&format!(": {}.", classes_phrase(f)));
        let fixable_by_mirror = classes.iter().all(|c| c.is_availability());
        if !fixable_by_mirror {
            summary.push_str(" A registry mirror would not fix this.");
        }
    }
    let pod = f.pods.first();
    let ns = pod
        .and_then(|p| p.namespace.clone())
        .unwrap_or_else(|| "<namespace>".to_string());
    let pod_name = pod
        .map(|p| p.name.clone())
        .unwrap_or_else(|| "<pod>".to_string());
    let region = aws_region(facts).unwrap_or_else(|| "<region>".to_string());
    let mut steps: Vec<Remediation> = Vec::new();
    if f.cause_unknown() || classes.contains(&ErrorClass::Unclassified) {
        steps.push(Remediation::command(
            "Read the full pull error the kubelet reported:",
            format!("kubectl describe pod {pod_name} -n {ns}"),
        ));
    }
    let Some(image) = f.image.as_ref() else {
        return finish(summary, confidence, f, steps);
    };
    let ecr = match image.kind() {
        RegistryKind::EcrPrivate { account, region } => Some((account, region)),
        _ => None,
    };
    for class in &classes {
        match class {
            ErrorClass::NotFound => not_found_steps(&mut steps, image, ecr.as_ref(), &ns),
            ErrorClass::InvalidReference => steps.push(Remediation::text(format!(
                "`{}` is not a valid image reference: fix the image string in the pod template.",
                image.raw
            ))),
            ErrorClass::Unauthorized | ErrorClass::AccessDenied => credential_steps(
                &mut steps,
                facts,
                image,
                ecr.as_ref(),
                &ns,
                pod_name.as_str(),
            ),
            ErrorClass::Certificate => certificate_steps(&mut steps, image),
            ErrorClass::NeverPull => steps.push(Remediation::text(format!(
                "The pod's `imagePullPolicy: Never` forbids pulling and {} is not on the node: a Karpenter node starts from a clean AMI, so set `imagePullPolicy: IfNotPresent` (or bake the image into the AMI the EC2NodeClass selects).",
                image.raw
            ))),
            c if c.is_availability() => network_steps(&mut steps, image, ecr.as_ref(), &region),
            _ => {}
        }
    }
    if f.cause_unknown() && image.kind() != RegistryKind::Public {
        steps.push(Remediation::text(format!(
            "{} is a private registry: check that the tag exists, that the node (or the pod's imagePullSecrets) may pull from it, and that the nodes can reach it.",
            image.registry
        )));
    }
    finish(summary, confidence, f, steps)
}

fn finish(
    summary: String,
    confidence: Confidence,
    f: &PullFailure<'_>,
    steps: Vec<Remediation>,
) -> Diagnosis {
    let mut summary = summary;
    if let Some(note) = recovered_note(f) {
        summary.push_str(note);
    }
    let mut d = Diagnosis::new(&META, summary)
        .with_severity(if f.recovered.is_some() {
            Severity::Warning
        } else {
            Severity::Error
        })
        .with_confidence(confidence)
        .with_object(f.pods.first())
        .with_messages(f.messages.iter().copied())
        .with_messages(f.recovered)
        .with_evidence(f.states.iter().cloned())
        .with_remediation(steps);
    if f.verdict() == Verdict::PullFailed
        && f.image
            .as_ref()
            .is_some_and(|i| i.kind() == RegistryKind::Public)
        && f.classes().iter().any(|c| c.is_availability())
    {
        d = d.with_related(&["KW001"]);
    }
    d
}

/// `ns`: the namespace of the pod that failed to pull.
fn not_found_steps(
    steps: &mut Vec<Remediation>,
    image: &ImageRef,
    ecr: Option<&(String, String)>,
    ns: &str,
) {
    let repo_ref = format!(
        "{}/{}",
        if image.registry == "docker.io" {
            "docker.io"
        } else {
            image.registry.as_str()
        },
        image.repository
    );
    if let Some((_, region)) = ecr {
        let id = match (&image.digest, &image.tag) {
            (Some(d), _) => format!("imageDigest={d}"),
            (None, Some(t)) => format!("imageTag={t}"),
            (None, None) => "imageTag=latest".to_string(),
        };
        steps.push(Remediation::command(
            "The tag or digest is not in the ECR repository: check what is there.",
            format!(
                "aws ecr describe-images --repository-name {} --region {region} --image-ids {id}\naws ecr list-images --repository-name {} --region {region}",
                image.repository, image.repository
            ),
        ));
        if let Some(prefix) = image.repository.split('/').next().filter(|p| {
            matches!(
                *p,
                "docker-hub"
                    | "dockerhub"
                    | "k8s"
                    | "registry-k8s-io"
                    | "quay"
                    | "ecr-public"
                    | "github"
                    | "ghcr"
            )
        }) {
            steps.push(Remediation::command(
                format!("`{prefix}/` looks like a pull-through cache prefix: check that a rule exists for it (without one ECR answers not found), and that the node role may `ecr:BatchImportUpstreamImage` and `ecr:CreateRepository`."),
                format!("aws ecr describe-pull-through-cache-rules --region {region}"),
            ));
        }
        return;
    }
    // `v1.30.2-eksbuild.1`: EKS builds its add-on images (kube-proxy, CoreDNS, the VPC CNI)
    // into its own ECR registries only; the upstream registry has no such tag.
    if let Some(tag) = image.tag.as_deref().filter(|t| t.contains("-eksbuild.")) {
        steps.push(Remediation::command(
            format!("Tag {tag} is an EKS build: EKS publishes it only in its add-on ECR registry (account 602401143452 in most regions), never in {}. Point the image there, or let the EKS add-on manage the workload:", image.registry),
            format!(
                "kubectl set image <kind>/<name> <container>=602401143452.dkr.ecr.<region>.amazonaws.com/eks/{}:{tag} -n {ns}",
                image.repository.rsplit('/').next().unwrap_or(&image.repository)
            ),
        ));
        return;
    }
    match &image.digest {
        Some(digest) => steps.push(Remediation::command(
            format!(
                "The pinned digest {digest} is not in {repo_ref}: a digest copied from another registry, architecture or build. Compare it with the digest the tag resolves to, and fix the pin (or drop it and pin the tag)."
            ),
            match &image.tag {
                Some(tag) => format!("crane digest {repo_ref}:{tag}"),
                None => format!("crane ls {repo_ref}"),
            },
        )),
        None => steps.push(Remediation::command(
            format!(
                "The tag {} does not exist in {repo_ref}: list the tags and fix the reference in the pod template.",
                image.tag.as_deref().unwrap_or("latest")
            ),
            format!("crane ls {repo_ref}\ndocker manifest inspect {}", image.raw),
        )),
    }
    // Karpenter's own images and charts dropped the `v` from their tags at v0.35.0.
    let karpenter_image = image.registry == "public.ecr.aws"
        && image.repository.starts_with("karpenter/")
        && image.digest.is_none();
    if let Some(bare) = image
        .tag
        .as_deref()
        .filter(|_| karpenter_image)
        .and_then(|t| t.strip_prefix('v'))
        .filter(|t| t.starts_with(|c: char| c.is_ascii_digit()))
    {
        steps.push(Remediation::command(
            format!(
                "Karpenter's images and helm charts have no `v` prefix since v0.35.0: the tag is {bare}, not v{bare}. Fix the chart value `controller.image.tag` (or drop the override and let `--version` pick the image):"
            ),
            format!(
                "helm upgrade --install karpenter oci://public.ecr.aws/karpenter/karpenter --version {bare} -n {ns} --reuse-values --set controller.image.tag={bare}"
            ),
        ));
    }
}

fn credential_steps(
    steps: &mut Vec<Remediation>,
    facts: &Facts,
    image: &ImageRef,
    ecr: Option<&(String, String)>,
    ns: &str,
    pod: &str,
) {
    if let Some((account, region)) = ecr {
        let role = facts
            .nodeclasses
            .iter()
            .find_map(|nc| nc.role.clone())
            .unwrap_or_else(|| "<node-role-name>".to_string());
        steps.push(Remediation::command(
            format!(
                "The node role must be allowed to pull from ECR (`ecr:GetAuthorizationToken`, `ecr:BatchGetImage`, `ecr:GetDownloadUrlForLayer`): attach the managed read-only policy to the Karpenter node role {role}."
            ),
            format!(
                "aws iam attach-role-policy --role-name {role} --policy-arn arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"
            ),
        ));
        steps.push(Remediation::command(
            format!(
                "If the repository belongs to account {account} and the nodes run in another account, its repository policy must allow the node role:"
            ),
            format!(
                "aws ecr get-repository-policy --repository-name {} --region {region} --registry-id {account}",
                image.repository
            ),
        ));
        return;
    }
    if image.registry == "docker.io" {
        steps.push(Remediation::text(format!(
            "Docker Hub answers `pull access denied` both for a repository that does not exist and for a private one: check the spelling of `{}`; if it is private, add an imagePullSecret (below).",
            image.repository.trim_start_matches("library/")
        )));
    }
    steps.push(Remediation::command(
        format!(
            "Give the pod credentials for {}: create a pull secret and attach it to the pod's service account (or list it under `imagePullSecrets` in the pod template).",
            image.registry
        ),
        format!(
            "kubectl create secret docker-registry regcred -n {ns} --docker-server={} --docker-username=<user> --docker-password=<token>\nkubectl patch serviceaccount $(kubectl get pod {pod} -n {ns} -o jsonpath='{{.spec.serviceAccountName}}') -n {ns} -p '{{\"imagePullSecrets\":[{{\"name\":\"regcred\"}}]}}'",
            image.registry
        ),
    ));
}

/// The node does not trust the certificate the registry (or something in between) presented.
fn certificate_steps(steps: &mut Vec<Remediation>, image: &ImageRef) {
    let host = &image.registry;
    let public = image.kind() == RegistryKind::Public;
    let who = if public {
        format!("{host} is public and its certificate is valid for everyone else, so something between the nodes and it presents its own: a TLS-inspecting proxy or firewall")
    } else {
        format!("{host} presents a certificate from a CA the nodes do not know (a private CA, or a TLS-inspecting proxy in the path)")
    };
    steps.push(Remediation::text(format!(
        "The node does not trust the TLS certificate it got when pulling: {who}. A registry mirror would not fix this; trusting the CA (or exempting the registry from inspection) does."
    )));
    steps.push(Remediation::yaml(
        "Add the CA to the nodes Karpenter launches: the EC2NodeClass's userData runs before the node joins (AL2023 shown; the proxy's or private CA's certificate in PEM). Karpenter rolls the nodes through drift.",
        format!(
            "spec:\n  userData: |\n    MIME-Version: 1.0\n    Content-Type: multipart/mixed; boundary=\"BOUNDARY\"\n\n    --BOUNDARY\n    Content-Type: text/x-shellscript; charset=\"us-ascii\"\n\n    #!/bin/bash\n    cat > /etc/pki/ca-trust/source/anchors/registry-ca.crt <<'EOF'\n    -----BEGIN CERTIFICATE-----\n    <the CA certificate that signed {host}'s certificate>\n    -----END CERTIFICATE-----\n    EOF\n    update-ca-trust extract\n    systemctl restart containerd\n    --BOUNDARY--\n"
        ),
    ));
}

fn network_steps(
    steps: &mut Vec<Remediation>,
    image: &ImageRef,
    ecr: Option<&(String, String)>,
    fallback_region: &str,
) {
    if steps
        .iter()
        .any(|s| s.text.starts_with("The nodes cannot reach"))
    {
        return;
    }
    match ecr {
        Some((_, region)) => {
            let region = if region.is_empty() {
                fallback_region
            } else {
                region
            };
            steps.push(Remediation::command(
                format!(
                    "The nodes cannot reach ECR in {region}. Nodes in private subnets need a NAT gateway or the VPC endpoints com.amazonaws.{region}.ecr.api and com.amazonaws.{region}.ecr.dkr (interface) plus com.amazonaws.{region}.s3 (gateway, layers are served from S3); check they exist in the nodes' VPC and that their security groups allow 443 from the nodes."
                ),
                format!(
                    "aws ec2 describe-vpc-endpoints --region {region} --filters Name=service-name,Values=com.amazonaws.{region}.ecr.api,com.amazonaws.{region}.ecr.dkr,com.amazonaws.{region}.s3 --query 'VpcEndpoints[].[ServiceName,VpcId,State]' --output table"
                ),
            ));
        }
        None => steps.push(Remediation::text(format!(
            "The nodes cannot reach {} (or it is failing): check its status, DNS resolution from a node, and the route (NAT, proxy, firewall) from the nodes' subnets.",
            image.registry
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_only, ids};

    #[test]
    fn digest_not_found_on_a_public_registry() {
        let report = check_only(
            "KW002",
            r#"Warning  Failed  10s   kubelet  Failed to pull image "registry.k8s.io/ingress-nginx/controller:v1.11.1@sha256:e6439a12b52076965928e83b7b56aae6731231677b01e81818bce7fa5c60161a": rpc error: code = Unknown desc = reading manifest sha256:e6439a12b52076965928e83b7b56aae6731231677b01e81818bce7fa5c60161a in registry.k8s.io/ingress-nginx/controller: manifest unknown: Requested entity was not found.
Warning  Failed  10s   kubelet  Error: ErrImagePull"#,
        );
        assert_eq!(ids(&report), ["KW002"]);
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("not found (wrong tag, digest or repository)"),
            "{}",
            d.summary
        );
        assert!(d.summary.contains("would not fix"), "{}", d.summary);
        assert_eq!(d.evidence.len(), 2);
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .starts_with("crane digest registry.k8s.io/ingress-nginx/controller:v1.11.1"));
    }

    #[test]
    fn every_refusal_class() {
        for err in [
            "manifest unknown: manifest unknown",
            "docker.io/library/nginx:1.99: not found",
            "failed to authorize: failed to fetch oauth token: unexpected status: 401 Unauthorized",
            "no basic auth credentials",
            "unexpected status code 403 Forbidden",
            "pull access denied for nginxs, repository does not exist or may require 'docker login'",
        ] {
            let text = format!(r#"Failed to pull image "nginx:1.99": rpc error: code = Unknown desc = {err}"#);
            assert_eq!(ids(&check_only("KW002", &text)), ["KW002"], "{err}");
        }
    }

    #[test]
    fn private_ecr_timeout_points_at_vpc_endpoints() {
        let report = check_only(
            "KW002",
            r#"Failed to pull image "444455556666.dkr.ecr.us-west-2.amazonaws.com/media/render:2.8.0": rpc error: code = DeadlineExceeded desc = dial tcp 52.1.2.3:443: i/o timeout"#,
        );
        let d = &report.diagnoses[0];
        assert!(
            d.summary
                .contains("private ECR registry of account 444455556666 in us-west-2"),
            "{}",
            d.summary
        );
        assert!(d
            .remediation
            .iter()
            .any(|r| r.text.contains("com.amazonaws.us-west-2.ecr.dkr")));
    }

    #[test]
    fn ecr_credentials_name_the_node_role_policy() {
        let report = check_only(
            "KW002",
            r#"Failed to pull image "444455556666.dkr.ecr.us-west-2.amazonaws.com/media/render:2.8.0": rpc error: code = Unknown desc = failed to resolve reference: pulling from host 444455556666.dkr.ecr.us-west-2.amazonaws.com failed with status code [manifests 2.8.0]: 403 Forbidden"#,
        );
        let d = &report.diagnoses[0];
        assert!(d.remediation[0]
            .command
            .as_deref()
            .unwrap()
            .contains("AmazonEC2ContainerRegistryReadOnly"));
    }

    #[test]
    fn newer_kubelet_back_off_with_cause() {
        let report = check_only(
            "KW002",
            r#"Back-off pulling image "apache/storm:2.3.0": ErrImagePull: Error response from daemon: manifest for apache/storm:2.3.0 not found: manifest unknown: manifest unknown"#,
        );
        assert_eq!(ids(&report), ["KW002"]);
    }

    #[test]
    fn status_only_without_image() {
        let report = check_only(
            "KW002",
            "Warning  Failed  10s  kubelet  Error: ErrImagePull",
        );
        let d = &report.diagnoses[0];
        assert_eq!(d.confidence, Confidence::Low);
        assert!(
            d.summary.contains("does not name the image"),
            "{}",
            d.summary
        );
    }

    #[test]
    fn near_misses() {
        for text in [
            r#"Failed to pull image "registry.k8s.io/ingress-nginx/controller:v1.11.2": dial tcp 74.125.203.82:443: i/o timeout"#,
            r#"Back-off pulling image "nginx:1.27""#,
            r#"Successfully pulled image "nginx:1.27" in 2s"#,
        ] {
            assert!(ids(&check_only("KW002", text)).is_empty(), "{text}");
        }
    }
}
