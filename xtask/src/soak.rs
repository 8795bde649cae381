//! `cargo xtask soak --minutes N`: the soak in `tests/soak/`, built by the same release
//! build as the test suite (whose build script builds every guest from source), run for
//! N minutes. It prints its own summary and fails when one of its checks does.

use crate::{cargo, guests, run};

const USAGE: &str = "usage: cargo xtask soak --minutes N";

/// Parses `--minutes N` (fractions allowed, e.g. `0.5` for a quick look).
fn minutes(args: &[String]) -> Result<String, String> {
    match args {
        [flag, minutes] if flag == "--minutes" => match minutes.parse::<f64>() {
            Ok(value) if value > 0.0 && value.is_finite() => Ok(minutes.clone()),
            _ => Err(format!("`{minutes}` is not a positive number of minutes; {USAGE}")),
        },
        _ => Err(USAGE.into()),
    }
}

pub fn soak(args: &[String]) -> Result<(), String> {
    let minutes = minutes(args)?;
    guests::ensure_wasm_target()?;
    let mut command = cargo();
    // The workspace selected, as `cargo xtask test` selects it: the same features, so
    // the soak reuses what the suite built instead of compiling the host again.
    command.args(["test", "--release", "--workspace", "--test", "soak", "--", "--minutes", &minutes]);
    run(command)
}

/// Clippy over the soak, which `--all-targets` leaves out with the other `test = false`
/// targets.
pub fn lint() -> Result<(), String> {
    let mut clippy = cargo();
    clippy.args(["clippy", "--release", "--workspace", "--test", "soak", "--", "-D", "warnings"]);
    run(clippy)
}
