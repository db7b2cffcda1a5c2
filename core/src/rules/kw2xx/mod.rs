//! KW2xx: provisioning (the pod stays Pending).

use super::Rule;

mod kw217_hostport_conflict;

pub const RULES: &[Rule] = &[kw217_hostport_conflict::RULE];
