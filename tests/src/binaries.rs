//! The programs the end-to-end tests run: the plugin binary (another package of the workspace,
//! so Cargo does not hand the tests its path: it is built once with the same cargo, profile and
//! target directory) and the system's kubectl.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `kubectl-karpenter_why`, built for the profile of the running test.
pub fn plugin_binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        // target/<profile>/deps/<test>-<hash>: the binary goes to target/<profile>.
        let exe = std::env::current_exe().expect("test executable path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile>")
            .to_path_buf();
        let mut build = Command::new(env!("CARGO"));
        build
            .args(["build", "--quiet", "-p", "kubectl-karpenter-why"])
            .current_dir(repo());
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "building the plugin failed");
        let path = profile_dir.join(format!(
            "kubectl-karpenter_why{}",
            std::env::consts::EXE_SUFFIX
        ));
        assert!(path.is_file(), "{} missing after build", path.display());
        path
    })
}

/// The system's kubectl, if there is one (`/usr/bin/kubectl`, else on PATH).
pub fn kubectl() -> Option<PathBuf> {
    let fixed = PathBuf::from("/usr/bin/kubectl");
    if fixed.is_file() {
        return Some(fixed);
    }
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| Path::new(dir).join("kubectl"))
        .find(|p| p.is_file())
}
