//! The man page, rendered from the same clap definitions as `--help` and the completions, and
//! committed as `docs/kubectl-karpenter_why.1` (the release archives ship it; a test keeps it
//! current).

use clap::CommandFactory;

use crate::cli::Cli;

/// The roff source of `kubectl-karpenter_why(1)`.
pub fn render() -> String {
    let command = Cli::command();
    let man = clap_mangen::Man::new(command)
        .title("KUBECTL-KARPENTER_WHY")
        .section("1")
        .manual("karpenter-why")
        .source(concat!("karpenter-why ", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    man.render(&mut out)
        .expect("rendering into memory cannot fail");
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// The committed man page is what the definitions render; `UPDATE_DOCS=1` rewrites it.
    #[test]
    fn committed_man_page_is_current() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/kubectl-karpenter_why.1");
        let rendered = super::render();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &rendered).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == rendered,
            "docs/kubectl-karpenter_why.1 is stale: run `UPDATE_DOCS=1 cargo test -p kubectl-karpenter-why manpage`"
        );
        for verb in [
            "analyze",
            "explain",
            "rules",
            "node",
            "nodeclaim",
            "pending",
            "collect",
            "completion",
        ] {
            assert!(rendered.contains(verb), "{verb} missing from the man page");
        }
    }
}
