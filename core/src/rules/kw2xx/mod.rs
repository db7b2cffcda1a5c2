//! KW2xx: provisioning (the pod stays Pending).

use super::Rule;

pub(crate) mod eni_limits;
mod kw200_karpenter_not_acting;
mod kw201_no_instance_type_fits;
mod kw202_no_offering_in_zone;
mod kw203_requirements_incompatible;
mod kw204_taint_not_tolerated;
mod kw205_nodepool_limits_reached;
mod kw206_topology_spread_unsatisfiable;
mod kw207_nodepool_filtered_all_types;
mod kw209_pod_ignored_by_karpenter;
mod kw210_security_groups_for_pods_delay;
mod kw211_in_tree_ebs_plugin;
mod kw212_volume_attach_limit;
mod kw213_cni_ip_assignment_failed;
mod kw214_subnet_ip_exhausted;
mod kw215_insufficient_capacity;
mod kw217_hostport_conflict;
pub(crate) mod scheduling;

pub const RULES: &[Rule] = &[
    kw200_karpenter_not_acting::RULE,
    kw201_no_instance_type_fits::RULE,
    kw202_no_offering_in_zone::RULE,
    kw203_requirements_incompatible::RULE,
    kw204_taint_not_tolerated::RULE,
    kw205_nodepool_limits_reached::RULE,
    kw206_topology_spread_unsatisfiable::RULE,
    kw207_nodepool_filtered_all_types::RULE,
    kw209_pod_ignored_by_karpenter::RULE,
    kw210_security_groups_for_pods_delay::RULE,
    kw211_in_tree_ebs_plugin::RULE,
    kw212_volume_attach_limit::RULE,
    kw213_cni_ip_assignment_failed::RULE,
    kw214_subnet_ip_exhausted::RULE,
    kw215_insufficient_capacity::RULE,
    kw217_hostport_conflict::RULE,
];

#[cfg(test)]
mod tests {
    use super::RULES;

    /// The group's own contract: IDs in range, docs in the three sections, lower-case
    /// signals (the log prefilter matches lower-cased lines).
    #[test]
    fn metadata_is_well_formed() {
        for rule in RULES {
            let m = &rule.meta;
            assert!(m.id.starts_with("KW2") && m.id.len() == 5, "{}", m.id);
            assert!(
                m.slug
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                m.slug
            );
            let sections: Vec<&str> = m.docs.lines().filter(|l| l.starts_with("## ")).collect();
            assert_eq!(
                sections,
                ["## What it means", "## Why it happens", "## How to fix"],
                "{}",
                m.id
            );
            assert!(!m.signals.is_empty(), "{} has no signals", m.id);
            for s in m.signals {
                assert_eq!(
                    *s,
                    s.to_lowercase(),
                    "{}: signal {s:?} is not lower-case",
                    m.id
                );
            }
        }
    }
}
