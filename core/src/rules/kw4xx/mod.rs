//! KW4xx: disruption (the node is not removed or consolidated).

use super::Rule;

pub const RULES: &[Rule] = &[];
