//! The Karpenter version the input reveals, for advice that changed between releases
//! (KW402's duration value, KW406's policy names, KW502's validation cache, KW504's setting
//! names).

use crate::facts::Facts;

/// `(major, minor, patch)` of `facts.karpenter_version` (`1.7.2`, `v0.37.0`, `1.5`).
pub fn karpenter_version(facts: &Facts) -> Option<(u64, u64, u64)> {
    parse(facts.karpenter_version.as_deref()?)
}

/// Whether the input's Karpenter is at least `major.minor`; `None` when the version is unknown.
pub fn at_least(facts: &Facts, major: u64, minor: u64) -> Option<bool> {
    karpenter_version(facts).map(|(ma, mi, _)| (ma, mi) >= (major, minor))
}

/// `v1.7.2` as written for a sentence, when known.
pub fn version_label(facts: &Facts) -> Option<String> {
    karpenter_version(facts).map(|(a, b, c)| format!("v{a}.{b}.{c}"))
}

/// `(major, minor, patch)` of a version as written (`1.7.2`, `v0.37.0`, `1.5`).
pub fn parse(raw: &str) -> Option<(u64, u64, u64)> {
    let core = raw.trim().trim_start_matches(['v', 'V']);
    let core = core.split(['-', '+', ' ']).next()?;
    let mut parts = core.split('.').map(|p| p.parse::<u64>());
    let major = parts.next()?.ok()?;
    let minor = parts.next()?.ok()?;
    let patch = parts.next().and_then(Result::ok).unwrap_or(0);
    Some((major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_forms_ingest_writes() {
        assert_eq!(parse("1.7.2"), Some((1, 7, 2)));
        assert_eq!(parse("v0.37.0"), Some((0, 37, 0)));
        assert_eq!(parse("1.5"), Some((1, 5, 0)));
        assert_eq!(parse("1.12.0-rc.1"), Some((1, 12, 0)));
        assert_eq!(parse("latest"), None);
        let mut facts = Facts::default();
        assert_eq!(at_least(&facts, 1, 7), None);
        facts.karpenter_version = Some("1.6.3".into());
        assert_eq!(at_least(&facts, 1, 7), Some(false));
        assert_eq!(at_least(&facts, 1, 6), Some(true));
        assert_eq!(version_label(&facts).as_deref(), Some("v1.6.3"));
    }
}
