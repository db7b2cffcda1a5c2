//! KW4xx: disruption (the node is not removed or consolidated).

use super::Rule;

pub(crate) mod disruption;
mod kw401_pdb_blocks_eviction;
mod kw402_do_not_disrupt_pod;
mod kw403_do_not_disrupt_node;
mod kw404_not_initialized_blocks_disruption;
mod kw405_pods_would_not_reschedule;
mod kw406_consolidation_policy_prevents;
mod kw407_disruption_budget_blocks;
mod kw408_no_cheaper_replacement;
mod kw409_nominated_for_pending_pod;
mod kw410_consolidation_needs_replacements;
mod kw411_nodeclaim_without_node;

pub const RULES: &[Rule] = &[
    kw401_pdb_blocks_eviction::RULE,
    kw402_do_not_disrupt_pod::RULE,
    kw403_do_not_disrupt_node::RULE,
    kw404_not_initialized_blocks_disruption::RULE,
    kw405_pods_would_not_reschedule::RULE,
    kw406_consolidation_policy_prevents::RULE,
    kw407_disruption_budget_blocks::RULE,
    kw408_no_cheaper_replacement::RULE,
    kw409_nominated_for_pending_pod::RULE,
    kw410_consolidation_needs_replacements::RULE,
    kw411_nodeclaim_without_node::RULE,
];

/// A rule group's metadata contract: IDs in range, slugs in kebab case, docs in the three
/// sections, lower-case signals (the log prefilter matches lower-cased lines). KW5xx, KW005,
/// KW208 and KW216 use it too.
#[cfg(test)]
pub(crate) fn check_meta(m: &crate::rules::RuleMeta, prefix: &str) {
    assert!(m.id.starts_with(prefix) && m.id.len() == 5, "{}", m.id);
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

#[cfg(test)]
mod tests {
    use super::{check_meta, RULES};

    #[test]
    fn metadata_is_well_formed() {
        for rule in RULES {
            check_meta(&rule.meta, "KW4");
        }
    }
}
