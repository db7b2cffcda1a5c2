//! The Karpenter version the input reveals, for advice that changed between releases
//! (KW402's duration value, KW406's policy names, KW502's validation cache, KW504's setting
//! names).

use crate::facts::Facts;

/// `(major, minor, patch)` of `facts.karpenter_version` (`1.7.2`, `v0.37.0`, `1.5`).
pub fn karpenter_version(facts: &Facts) -> Option<(u64, u64, u64)> {
    parse(facts.karpenter_version.as_deref()?)
}

/// Whether the input's Karpenter is at least `major.minor`; `None` when the version is unknown.
pub fn at_least(facts: &Facts, major: u64, minor: u64) -> Option<bool> {
    karpenter_version(facts).map(|(ma, mi, _)| (ma, mi) >= (major, minor))
}

/// `v1.7.2` as written for a sentence, when known.
pub fn version_label(facts: &Facts) -> Option<String> {
    karpenter_version(facts).map(|(a, b, c)| format!("v{a}.{b}.{c}"))
}

/// `(major, minor, patch)` of a version as written (`1.7.2`, `v0.37.0`, `1.5`).
pub fn parse(raw: &str) -> Option<(u64, u64, u64)> {
    let core = raw.trim().trim_start_matches(['v', 'V']);
    let core = core.split(['-', '+', ' ']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>());
    let major = parts.next()?.ok()?;
    let minor = parts.next()?.ok()?;
    let patch = parts.next().and_then(Result::ok).unwrap_or(0);
    Some((major, minor, patch))
}

/// Whether the input is from a Karpenter before v0.32, whose API was the v1alpha5 Provisioner
/// and Machine and the v1alpha1 AWSNodeTemplate (`kubectl get provisioners`, `machines`,
/// `awsnodetemplates`) rather than NodePool, NodeClaim and EC2NodeClass. A known version
/// decides; otherwise the input must show the old API (those objects, their kinds or API
/// groups in messages, the `karpenter.sh/provisioner-name` label, a log field naming a
/// Provisioner or Machine) and nothing of the new one.
pub fn before_v0_32(facts: &Facts) -> bool {
    if let Some(version) = karpenter_version(facts) {
        return version < (0, 32, 0);
    }
    let old_objects = facts.nodepools.iter().any(|p| p.is_provisioner)
        || facts.nodeclasses.iter().any(|c| c.is_aws_node_template)
        || facts.nodeclaims.iter().any(|c| c.is_machine);
    let new_objects = facts.nodepools.iter().any(|p| !p.is_provisioner)
        || facts.nodeclasses.iter().any(|c| !c.is_aws_node_template)
        || facts.nodeclaims.iter().any(|c| !c.is_machine);
    if new_objects {
        return false;
    }
    if old_objects {
        return true;
    }
    let labels = |key: &str| {
        facts.pods.iter().any(|p| {
            p.node_selector.contains_key(key)
                || p.node_affinity.iter().flatten().any(|r| r.key == key)
        }) || facts.nodes.iter().any(|n| n.meta.label(key).is_some())
    };
    let kinds = |names: &[&str]| {
        facts.messages.iter().any(|m| {
            m.object
                .as_ref()
                .is_some_and(|o| names.contains(&o.kind.as_str()))
        })
    };
    let fields = |names: &[&str]| {
        facts.logs.iter().any(|r| {
            names
                .iter()
                .any(|k| r.field_name(k).is_some_and(|v| !v.contains('/')))
        })
    };
    let texts = |needles: &[&str]| facts.messages_containing_any(needles).next().is_some();
    let new = labels("karpenter.sh/nodepool")
        || kinds(&["NodePool", "NodeClaim", "EC2NodeClass"])
        || fields(&["NodePool", "NodeClaim", "nodepool", "nodeclaim"])
        || texts(&[
            "karpenter.sh/v1beta1",
            "karpenter.sh/v1/",
            "karpenter.k8s.aws/v1beta1",
        ]);
    if new {
        return false;
    }
    labels("karpenter.sh/provisioner-name")
        || kinds(&["Provisioner", "Machine", "AWSNodeTemplate"])
        || fields(&["Provisioner", "Machine", "provisioner", "machine"])
        || texts(&[
            "karpenter.sh/v1alpha5",
            "karpenter.k8s.aws/v1alpha1",
            "karpenter.sh/provisioner-name",
        ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_ingest_writes() {
        assert_eq!(parse("1.7.2"), Some((1, 7, 2)));
        assert_eq!(parse("v0.37.0"), Some((0, 37, 0)));
        assert_eq!(parse("1.5"), Some((1, 5, 0)));
        assert_eq!(parse("1.12.0-rc.1"), Some((1, 12, 0)));
        assert_eq!(parse("latest"), None);
        let mut facts = Facts::default();
        assert_eq!(at_least(&facts, 1, 7), None);
        facts.karpenter_version = Some("1.6.3".into());
        assert_eq!(at_least(&facts, 1, 7), Some(false));
        assert_eq!(at_least(&facts, 1, 6), Some(true));
        assert_eq!(version_label(&facts).as_deref(), Some("v1.6.3"));
    }
}
