//! KW3xx: launch and node readiness.

use super::Rule;

pub const RULES: &[Rule] = &[];
