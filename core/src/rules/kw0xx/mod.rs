//! KW0xx: workloads and cluster operations.

use super::Rule;

pub const RULES: &[Rule] = &[];
