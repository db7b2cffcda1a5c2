//! KW1xx: installation, credentials, IAM, CRDs.

use super::Rule;

pub const RULES: &[Rule] = &[];
