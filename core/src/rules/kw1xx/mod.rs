//! KW1xx: installation, credentials, IAM, CRDs.

use super::Rule;

mod aws;
pub(crate) mod credentials;
pub(crate) mod kw101_spot_service_linked_role_missing;
mod kw102_sts_unreachable;
mod kw103_irsa_credentials_denied;
mod kw104_crd_version_skew;
mod kw105_aws_unauthorized;

pub const RULES: &[Rule] = &[
    kw101_spot_service_linked_role_missing::RULE,
    kw102_sts_unreachable::RULE,
    kw103_irsa_credentials_denied::RULE,
    kw104_crd_version_skew::RULE,
    kw105_aws_unauthorized::RULE,
];
