//! Registry checks that need the repository around the code: each rule has positive and
//! negative fixtures and its own source file, `docs/rules.md` is the registry's current
//! rendering, and IDs, slugs and severities agree with the catalogue (CATALOGUE.md).
//! The metadata conventions themselves are checked in `core/src/rules/mod.rs`.

use std::fs;
use std::path::{Path, PathBuf};

use karpenter_why_core::render;
use karpenter_why_core::rules::{self, Severity};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_rule_has_a_positive_and_a_negative_fixture() {
    let mut missing = Vec::new();
    for rule in rules::all() {
        let dir = repo().join("tests/fixtures").join(rule.meta.id);
        let names: Vec<String> = fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        for kind in ["pos", "neg"] {
            if !names.iter().any(|n| n.contains(&format!(".{kind}."))) {
                missing.push(format!(
                    "{}: no tests/fixtures/{}/<name>.{kind}.<ext>",
                    rule.meta.id, rule.meta.id
                ));
            }
        }
    }
    assert!(missing.is_empty(), "\n{}", missing.join("\n"));
}

/// `core/src/rules/kw2xx/kw202_no_offering_in_zone.rs` for KW202 no-offering-in-zone.
#[test]
fn every_rule_lives_in_its_own_file() {
    let mut missing = Vec::new();
    for rule in rules::all() {
        let m = &rule.meta;
        let id = m.id.to_lowercase();
        let path = format!(
            "core/src/rules/{}xx/{id}_{}.rs",
            &id[..3],
            m.slug.replace('-', "_")
        );
        if !repo().join(&path).is_file() {
            missing.push(format!("{}: expected {path}", m.id));
        }
    }
    assert!(missing.is_empty(), "\n{}", missing.join("\n"));
}

#[test]
fn docs_rules_md_is_up_to_date() {
    let path = repo().join("docs/rules.md");
    let expected = render::markdown::rules(&rules::all());
    let current = fs::read_to_string(&path).unwrap_or_default();
    if current == expected {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, expected).unwrap();
        return;
    }
    panic!(
        "docs/rules.md is stale (the rule registry changed). Regenerate it with\n    cargo run -q -p kubectl-karpenter-why -- rules -o markdown > docs/rules.md\nor  UPDATE_DOCS=1 cargo test -p karpenter-why-tests --test registry"
    );
}

/// `- **KW215 insufficient-capacity** (warning; error when ...)` -> (slug, severity).
fn catalogue_entry<'a>(catalogue: &'a str, id: &str) -> Option<(&'a str, &'a str)> {
    let start = catalogue.find(&format!("**{id} "))? + id.len() + 3;
    let rest = &catalogue[start..];
    let slug_end = rest.find("**")?;
    let after = rest[slug_end + 2..].trim_start().strip_prefix('(')?;
    let severity_end = after.find([';', ')', ','])?;
    Some((rest[..slug_end].trim(), after[..severity_end].trim()))
}

#[test]
fn ids_slugs_and_severities_match_the_catalogue() {
    let path = repo().join("../shared/CATALOGUE.md");
    let Ok(catalogue) = fs::read_to_string(&path) else {
        println!("no ../shared/CATALOGUE.md beside the checkout; nothing to compare");
        return;
    };
    let mut mismatches = Vec::new();
    for rule in rules::all() {
        let m = &rule.meta;
        let Some((slug, severity)) = catalogue_entry(&catalogue, m.id) else {
            // Rules may be added beyond the catalogue (next free number in the range).
            continue;
        };
        if slug != m.slug {
            mismatches.push(format!(
                "{}: slug {:?}, catalogue says {slug:?}",
                m.id, m.slug
            ));
        }
        if severity != m.severity.as_str() {
            mismatches.push(format!(
                "{}: severity {:?}, catalogue says {severity:?}",
                m.id,
                m.severity.as_str()
            ));
        }
    }
    assert!(mismatches.is_empty(), "\n{}", mismatches.join("\n"));
}

#[test]
fn catalogue_entries_parse() {
    let text = "- **KW215 insufficient-capacity** (warning; error when no other offering remains).\n- **KW202 no-offering-in-zone** (error). Case B";
    assert_eq!(
        catalogue_entry(text, "KW215"),
        Some(("insufficient-capacity", "warning"))
    );
    assert_eq!(
        catalogue_entry(text, "KW202"),
        Some(("no-offering-in-zone", "error"))
    );
    assert_eq!(catalogue_entry(text, "KW201"), None);
    assert_eq!(Severity::Warning.as_str(), "warning");
}
