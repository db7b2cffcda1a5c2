//! KW3xx: launch and node readiness.

use super::Rule;

pub(crate) mod agents;
pub(crate) mod cni_log;
pub(crate) mod common;
pub(crate) mod interruption;
mod kw301_invalid_block_device_mapping;
mod kw302_launch_failed;
mod kw303_node_not_registered;
mod kw304_node_unauthorized;
mod kw305_node_cni_not_ready;
pub(crate) mod kw306_nodeclaim_not_initialized;
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
