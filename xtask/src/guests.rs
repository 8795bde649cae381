//! Building guest components from source. Shared by `cargo xtask` and the test suite's
//! build script (which includes this file by path), so both build guests the same way.

use std::path::{Path, PathBuf};
use std::process::Command;

pub const WASM_TARGET: &str = "wasm32-wasip2";

/// Installs the `wasm32-wasip2` standard library through rustup when it is missing.
pub fn ensure_wasm_target() -> Result<(), String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let sysroot =
        Command::new(&rustc).args(["--print", "sysroot"]).output().map_err(|e| format!("cannot run {rustc}: {e}"))?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if sysroot.join("lib/rustlib").join(WASM_TARGET).exists() {
        return Ok(());
    }
    let status = Command::new("rustup")
        .args(["target", "add", WASM_TARGET])
        .status()
        .map_err(|e| format!("the {WASM_TARGET} target is missing and rustup cannot run: {e}"))?;
    if !status.success() {
        return Err(format!("`rustup target add {WASM_TARGET}` failed ({status})"));
    }
    Ok(())
}

/// Builds every cdylib of a guest workspace for `wasm32-wasip2` in release mode and
/// returns the directory that holds the components.
pub fn build_workspace(manifest: &Path, target_dir: &Path) -> Result<PathBuf, String> {
    let mut command = crate::nested_cargo::cargo();
    command
        .args(["build", "--release", "--quiet", "--target", WASM_TARGET, "--workspace"])
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(target_dir);
    // Flags and settings meant for the outer (native) build must not leak into the
    // guest build.
    for var in
        ["CARGO_ENCODED_RUSTFLAGS", "RUSTFLAGS", "CARGO_TARGET_DIR", "CARGO_BUILD_TARGET", "RUSTC_WORKSPACE_WRAPPER"]
    {
        command.env_remove(var);
    }
    let status = command.status().map_err(|e| format!("cannot run cargo: {e}"))?;
    if !status.success() {
        return Err(format!("building the guests of {} failed ({status})", manifest.display()));
    }
    Ok(target_dir.join(WASM_TARGET).join("release"))
}

#[allow(dead_code)] // used by xtask, not by the test build script
/// Copies a built component into a tools directory as `<namespace>/<name>.wasm`.
pub fn install(built: &Path, crate_name: &str, tools_dir: &Path, namespace: &str) -> Result<PathBuf, String> {
    let source = built.join(format!("{}.wasm", crate_name.replace('-', "_")));
    let dir = tools_dir.join(namespace);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let destination = dir.join(format!("{namespace}.wasm"));
    std::fs::copy(&source, &destination)
        .map_err(|e| format!("cannot copy {} to {}: {e}", source.display(), destination.display()))?;
    Ok(destination)
}
