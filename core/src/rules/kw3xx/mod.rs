//! KW3xx: launch and node readiness.

use super::Rule;

pub(crate) mod agents;
pub(crate) mod common;
pub(crate) mod interruption;
mod kw301_invalid_block_device_mapping;
mod kw302_launch_failed;
mod kw303_node_not_registered;
mod kw304_node_unauthorized;
mod kw305_node_cni_not_ready;
mod kw306_nodeclaim_not_initialized;
mod kw307_kms_key_denies_ebs;
mod kw308_nth_rebalance_loop;
mod kw309_spot_interrupted;
mod kw310_ami_incompatible_instance_types;
mod kw311_spot_rebalance_recommendation;

pub const RULES: &[Rule] = &[
    kw301_invalid_block_device_mapping::RULE,
    kw302_launch_failed::RULE,
    kw303_node_not_registered::RULE,
    kw304_node_unauthorized::RULE,
    kw305_node_cni_not_ready::RULE,
    kw306_nodeclaim_not_initialized::RULE,
    kw307_kms_key_denies_ebs::RULE,
    kw308_nth_rebalance_loop::RULE,
    kw309_spot_interrupted::RULE,
    kw310_ami_incompatible_instance_types::RULE,
    kw311_spot_rebalance_recommendation::RULE,
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
            assert!(m.id.starts_with("KW3") && m.id.len() == 5, "{}", m.id);
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
