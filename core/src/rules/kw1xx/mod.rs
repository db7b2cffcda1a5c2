//! KW1xx: installation, credentials, IAM, CRDs.

use super::Rule;

mod aws;
mod credentials;
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

#[cfg(test)]
mod tests {
    use super::super::kw0xx;
    use super::RULES;

    /// The contract of KW001-KW004 and KW1xx: IDs in range, slug shape, docs in the three
    /// sections, lower-case signals (the log prefilter matches lower-cased lines).
    #[test]
    fn metadata_is_well_formed() {
        let own_kw0 = kw0xx::RULES
            .iter()
            .filter(|r| matches!(r.meta.id, "KW001" | "KW002" | "KW003" | "KW004"));
        for rule in RULES.iter().chain(own_kw0) {
            let m = &rule.meta;
            assert!(
                (m.id.starts_with("KW1") || m.id.starts_with("KW0")) && m.id.len() == 5,
                "{}",
                m.id
            );
            assert!(
                m.slug
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{}",
                m.slug
            );
            let sections: Vec<&str> = m.docs.lines().filter(|l| l.starts_with("## ")).collect();
            assert_eq!(
                sections,
                ["## What it means", "## Why it happens", "## How to fix"],
                "{}",
                m.id
            );
            assert!(!m.signals.is_empty(), "{} has no signals", m.id);
            for s in m.signals {
                assert_eq!(
                    *s,
                    s.to_lowercase(),
                    "{}: signal {s:?} is not lower-case",
                    m.id
                );
            }
        }
    }
}
