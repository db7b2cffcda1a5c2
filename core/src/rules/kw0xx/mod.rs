//! KW0xx: workloads and cluster operations.

use super::Rule;

pub(crate) mod image_pull;
mod kw001_image_pull_public_registry;
mod kw002_image_pull_failed;
mod kw003_workload_without_pdb;
mod kw004_karpenter_debug_logging_on;
mod kw005_need_debug_logs;

pub const RULES: &[Rule] = &[
    kw001_image_pull_public_registry::RULE,
    kw002_image_pull_failed::RULE,
    kw003_workload_without_pdb::RULE,
    kw004_karpenter_debug_logging_on::RULE,
    kw005_need_debug_logs::RULE,
];
