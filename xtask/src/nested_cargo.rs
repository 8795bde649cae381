//! Cargo started from inside a cargo-run process (xtask, a test, a build script).
//!
//! Cargo gives the processes it runs their package's variables (`CARGO_PKG_NAME`,
//! `CARGO_MANIFEST_DIR`, …). A cargo started from there would pass them on to build
//! scripts that read them, and ring's build script asks to be rerun when they change:
//! every nested build would then rebuild ring and all that depends on it (rustls,
//! reqwest, rmcp, the host) and the next plain build would rebuild them back. Shared by
//! xtask and the test suite (`tests/support.rs` includes this file).

use std::process::Command;

/// Variables cargo sets for the process it runs, which no nested build should see.
const PACKAGE_VARIABLES: [&str; 10] = [
    "CARGO_MANIFEST_DIR",
    "CARGO_MANIFEST_PATH",
    "CARGO_MANIFEST_LINKS",
    "CARGO_CRATE_NAME",
    "CARGO_BIN_NAME",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "CARGO_RUSTC_CURRENT_DIR",
    "OUT_DIR",
    "CARGO_MAKEFLAGS",
];

/// `cargo` (the one that runs this process, else the one on the PATH) with the
/// environment of a shell: the variables of the package this process belongs to removed.
pub fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if name.starts_with("CARGO_PKG_") || name.starts_with("CARGO_BIN_EXE_") || PACKAGE_VARIABLES.contains(&name) {
            command.env_remove(name);
        }
    }
    command
}
