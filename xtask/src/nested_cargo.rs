//! Cargo started from inside a cargo-run process (xtask, a test, a build script).
//!
//! Cargo gives the processes it runs their package's variables (`CARGO_PKG_NAME`,
//! `CARGO_MANIFEST_DIR`, …). A cargo started from there would pass them on to build
//! scripts that read them, and ring's build script asks to be rerun when they change:
//! every nested build would then rebuild ring and all that depends on it (rustls,
//! reqwest, rmcp, the host) and the next plain build would rebuild them back. Shared by
//! xtask and the test suite (`tests/support.rs` includes this file).

use std::process::Command;

/// Variables cargo sets for the process it runs (a build script's included), which no
/// nested build should see: cargo itself reads `CARGO_ENCODED_RUSTFLAGS`, and build
/// scripts read the others.
const PACKAGE_VARIABLES: [&str; 17] = [
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
    "CARGO_ENCODED_RUSTFLAGS",
    "TARGET",
    "HOST",
    "PROFILE",
    "OPT_LEVEL",
    "DEBUG",
    "NUM_JOBS",
];

/// Prefixes of the same: a package's metadata, binaries, features and target `cfg`s.
const PACKAGE_PREFIXES: [&str; 4] = ["CARGO_PKG_", "CARGO_BIN_EXE_", "CARGO_FEATURE_", "CARGO_CFG_"];

/// `cargo` (the one that runs this process, else the one on the PATH) with the
/// environment of a shell: the variables of the package this process belongs to removed.
pub fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if PACKAGE_PREFIXES.iter().any(|prefix| name.starts_with(prefix)) || PACKAGE_VARIABLES.contains(&name) {
            command.env_remove(name);
        }
    }
    command
}
