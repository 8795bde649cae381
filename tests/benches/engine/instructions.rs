//! Instructions per call, counted by valgrind's callgrind: the comparison a busy 2-core
//! machine does not move. Time ratios from one run to the next moved by a tenth on this
//! machine while the code stood still; the count of the same binary's same calls does not
//! move with the load.
//!
//! The bench runs itself four times under callgrind, one side per run, once with
//! [`FEW`] and once with [`MANY`] calls after a warm-up call. Each run's total includes
//! its set-up (compiling the component, building the host); the difference between the
//! two runs of a side, over `MANY − FEW`, is what one call adds. valgrind runs a program
//! on one thread at a time, so two runs go side by side on two cores.
//!
//! Counts are not times: a `rep stosb` counts once per byte it writes, and a cache miss
//! counts nothing. They show where work was added or removed, not its cost in seconds.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Set in a run under callgrind: `toolhost:N` or `bare:N`, the side and its calls.
pub const SIDE_VAR: &str = "TOOLHOST_ENGINE_COUNT";

/// Calls of the shorter and the longer run of a side.
const FEW: u64 = 1000;
const MANY: u64 = 5000;

/// One of the two things compared.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    Toolhost,
    Bare,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Toolhost => "toolhost",
            Side::Bare => "bare",
        }
    }
}

/// The side and the number of calls this process was started to make, if it was started
/// as one of the runs under callgrind.
pub fn asked() -> Option<(Side, u64)> {
    let value = std::env::var(SIDE_VAR).ok()?;
    let (side, calls) = value.split_once(':')?;
    let side = match side {
        "toolhost" => Side::Toolhost,
        "bare" => Side::Bare,
        _ => panic!("{SIDE_VAR}={value}: the side is `toolhost` or `bare`"),
    };
    let calls = calls.parse().unwrap_or_else(|_| panic!("{SIDE_VAR}={value}: the calls are a number"));
    Some((side, calls))
}

/// The line that says how many instructions one call of each side takes, and their
/// ratio; or why they were not counted.
pub fn count() -> String {
    match count_both() {
        Ok((toolhost, bare)) => format!(
            "engine/instructions per call (callgrind, {MANY} − {FEW} calls): toolhost {toolhost}, \
             bare wasmtime {bare}, ratio {:.3}",
            toolhost as f64 / bare as f64
        ),
        Err(why) => format!("engine/instructions per call: not counted: {why}"),
    }
}

fn count_both() -> Result<(u64, u64), String> {
    if Command::new("valgrind").arg("--version").stdout(Stdio::null()).status().is_err() {
        return Err("valgrind is not installed (apt-get install valgrind)".into());
    }
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the bench's own binary: {e}"))?;
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let mut per_call = Vec::new();
    for side in [Side::Toolhost, Side::Bare] {
        let [few, many] = [FEW, MANY].map(|calls| start(&exe, dir.path(), side, calls));
        let (few, many) = (total(few?)?, total(many?)?);
        let added = many.checked_sub(few).ok_or_else(|| {
            format!("{} made more instructions in {FEW} calls ({few}) than in {MANY} ({many})", side.name())
        })?;
        per_call.push(added / (MANY - FEW));
    }
    Ok((per_call[0], per_call[1]))
}

/// A run of `side` under callgrind, started, and where it writes its counts.
fn start(exe: &Path, dir: &Path, side: Side, calls: u64) -> Result<(std::process::Child, PathBuf), String> {
    let out = dir.join(format!("{}-{calls}.callgrind", side.name()));
    let child = Command::new("valgrind")
        .args(["--tool=callgrind", "--quiet"])
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(exe)
        .env(SIDE_VAR, format!("{}:{calls}", side.name()))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start valgrind: {e}"))?;
    Ok((child, out))
}

/// The instructions a finished run counted, from the `totals:` line of its output.
fn total((child, out): (std::process::Child, PathBuf)) -> Result<u64, String> {
    let finished = child.wait_with_output().map_err(|e| format!("valgrind: {e}"))?;
    if !finished.status.success() {
        let stderr = String::from_utf8_lossy(&finished.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        return Err(format!("a run under valgrind ended with {}: {}", finished.status, tail.join(" | ")));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    text.lines()
        .find_map(|line| line.strip_prefix("totals:").or_else(|| line.strip_prefix("summary:")))
        .and_then(|count| count.trim().parse().ok())
        .ok_or_else(|| format!("{}: no `totals:` line", out.display()))
}
