//! KW5xx: NodeClass, NodePool and controller configuration.

use super::Rule;

pub const RULES: &[Rule] = &[];
