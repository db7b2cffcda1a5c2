//! KW5xx: NodeClass, NodePool and controller configuration.

use super::Rule;

mod kw501_nodeclass_not_ready;
mod kw502_nodeclass_validation_failed;
mod kw503_nodeclass_not_found;
pub(crate) mod kw504_pricing_unreachable;
pub(crate) mod nodeclass;

pub const RULES: &[Rule] = &[
    kw501_nodeclass_not_ready::RULE,
    kw502_nodeclass_validation_failed::RULE,
    kw503_nodeclass_not_found::RULE,
    kw504_pricing_unreachable::RULE,
];

#[cfg(test)]
mod tests {
    use super::RULES;

    #[test]
    fn metadata_is_well_formed() {
        for rule in RULES {
            crate::rules::kw4xx::check_meta(&rule.meta, "KW5");
        }
    }
}
