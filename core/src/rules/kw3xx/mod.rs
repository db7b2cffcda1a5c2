//! KW3xx: launch and node readiness.

use super::Rule;

pub(crate) mod agents;
pub(crate) mod common;
mod kw301_invalid_block_device_mapping;
mod kw302_launch_failed;

pub const RULES: &[Rule] = &[
    kw301_invalid_block_device_mapping::RULE,
    kw302_launch_failed::RULE,
];
