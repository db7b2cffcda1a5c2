//! Near matches between object names: a reference (`nodeClassRef.name`) that names nothing
//! while a similar name exists is most likely a typo. Shared by the rules that compare a
//! reference with the objects the input lists (KW208, KW503).

/// Whether two names are close enough that one is probably a misspelling of the other: equal
/// but for case or separators (`default_al2023`, `defaultal2023`, `Default`), one is the other
/// with a `-suffix` / `prefix-` (`default-al2023`), or at most two edits apart when both are
/// long enough for that to mean something (`defualt`; not `gpu` / `cpu`).
pub fn near_match(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    if a == b || without_separators(&a) == without_separators(&b) {
        return true;
    }
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    if short.len() >= 3
        && (long.starts_with(&format!("{short}-")) || long.ends_with(&format!("-{short}")))
    {
        return true;
    }
    short.len() >= 4 && edit_distance(&a, &b) <= 2
}

/// Of `candidates`, the nearest one `name` is a near match of (fewest edits, first on a tie),
/// never `name` itself.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    candidates
        .into_iter()
        .filter(|c| *c != name && near_match(name, c))
        .map(|c| (edit_distance(&lower, &c.to_ascii_lowercase()), c))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// The name with `-`, `_` and `.` dropped: `default_al2023` and `default-al2023` read the same.
fn without_separators(s: &str) -> String {
    s.chars()
        .filter(|c| !matches!(c, '-' | '_' | '.'))
        .collect()
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur.push((prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The Deployment a pod's name implies: `<deployment>-<pod-template-hash>-<suffix>`, for pods
/// the input lists without owner (a `kubectl get pods` row, a describe trimmed above
/// `Controlled By:`). Kubernetes draws both generated parts from a vowel-free alphabet, but
/// pastes often carry invented names (`-abcde`), so any lower-case alphanumerics count; the
/// hash must hold a digit or be vowel-free, which keeps `exporter` in `node-exporter-7xk2p` and `create` in a
/// Job's `ingress-nginx-admission-create-7xq2d` from passing for one.
pub fn deployment_of_pod(pod: &str) -> Option<&str> {
    let generated = |part: &str, lengths: std::ops::RangeInclusive<usize>| {
        lengths.contains(&part.len())
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    let mut parts = pod.rsplitn(3, '-');
    let (suffix, hash, base) = (parts.next()?, parts.next()?, parts.next()?);
    (generated(suffix, 5..=5)
        && generated(hash, 6..=10)
        && (hash.chars().any(|c| c.is_ascii_digit())
            || hash.chars().all(|c| "bcdfghjklmnpqrstvwxz".contains(c)))
        && !base.is_empty())
    .then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pods_name_implies_its_deployment() {
        assert_eq!(deployment_of_pod("web-7d9c6b8f5-xk2lp"), Some("web"));
        assert_eq!(
            deployment_of_pod("report-builder-6c8d9f-abcde"),
            Some("report-builder")
        );
        assert_eq!(deployment_of_pod("node-exporter-7xk2p"), None);
        assert_eq!(
            deployment_of_pod("ingress-nginx-admission-create-7xq2d"),
            None
        );
        assert_eq!(deployment_of_pod("api-bcdfghjkl-xk2lp"), Some("api"));
        assert_eq!(deployment_of_pod("kafka-0"), None);
        assert_eq!(deployment_of_pod("-7d9c6b8f5-xk2lp"), None);
    }

    #[test]
    fn near_match_names() {
        for (a, b, want) in [
            ("defualt", "default", true),
            ("default-al2023", "default", true),
            ("al2023-default", "default", true),
            ("Default", "default", true),
            ("default_al2023", "default-al2023", true),
            ("defaultal2023", "default-al2023", true),
            ("gpu", "cpu", false),
            ("general", "default", false),
            ("bottlerocket", "al2023", false),
            ("ab", "ab-c", false),
        ] {
            assert_eq!(near_match(a, b), want, "{a} {b}");
        }
    }

    #[test]
    fn closest_prefers_fewest_edits() {
        assert_eq!(
            closest("defualt", ["gpu", "default-al2023", "default"]),
            Some("default")
        );
        assert_eq!(closest("default", ["default"]), None);
        assert_eq!(closest("gpu", ["cpu", "general"]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
