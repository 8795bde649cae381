//! Shared helpers of the end-to-end tests: where the freshly built components are, and
//! throwaway tools directories laid out the way operators lay them out.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use tempfile::TempDir;

/// Directory holding every component built for this test run.
pub fn guest_dir() -> PathBuf {
    PathBuf::from(env!("TOOLHOST_GUEST_DIR"))
}

/// Path of a built component by crate name (`math`, `hostile`, `future-contract`).
pub fn component(crate_name: &str) -> PathBuf {
    let path = guest_dir().join(format!("{}.wasm", crate_name.replace('-', "_")));
    assert!(path.is_file(), "{} was not built", path.display());
    path
}

/// A temporary tools root.
pub struct ToolsDir {
    dir: TempDir,
}

impl ToolsDir {
    pub fn new() -> Self {
        ToolsDir { dir: tempfile::Builder::new().prefix("toolhost-tools-").tempdir().expect("temp dir") }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies a built component to `<namespace>/<file_stem>.wasm`.
    pub fn install(&self, crate_name: &str, namespace: &str, file_stem: &str) -> PathBuf {
        self.write(
            namespace,
            &format!("{file_stem}.wasm"),
            &std::fs::read(component(crate_name)).expect("read component"),
        )
    }

    /// Writes arbitrary bytes to `<namespace>/<file>`.
    pub fn write(&self, namespace: &str, file: &str, bytes: &[u8]) -> PathBuf {
        let dir = self.path().join(namespace);
        std::fs::create_dir_all(&dir).expect("create namespace dir");
        let path = dir.join(file);
        std::fs::write(&path, bytes).expect("write file");
        path
    }

    /// The three example toolboxes under their own namespaces.
    pub fn with_examples() -> Self {
        let tools = ToolsDir::new();
        for name in ["math", "text", "json"] {
            tools.install(name, name, name);
        }
        tools
    }
}

impl Default for ToolsDir {
    fn default() -> Self {
        Self::new()
    }
}

/// The `toolhost` binary of the same profile as this test, built (or found up to date)
/// by cargo once per test run: `cargo test` builds only the libraries a test links, and
/// a stale binary would test yesterday's code.
pub fn toolhost_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().expect("test exe path");
        // <target>/<profile>/deps/e2e-<hash>
        let profile_dir = exe.parent().and_then(Path::parent).expect("profile dir");
        let target_dir = profile_dir.parent().expect("target dir");
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args(["build", "--quiet", "-p", "toolhost", "--bin", "toolhost", "--target-dir"]).arg(target_dir);
        if profile_dir.file_name().is_some_and(|name| name == "release") {
            cargo.arg("--release");
        }
        let status = cargo.status().expect("run cargo");
        assert!(status.success(), "building the toolhost binary failed");
        profile_dir.join(format!("toolhost{}", std::env::consts::EXE_SUFFIX))
    })
    .clone()
}
