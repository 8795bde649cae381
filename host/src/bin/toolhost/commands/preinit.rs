//! `toolhost preinit COMPONENT -o OUTPUT`: the component snapshotted after its initialization export ran once.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::{Preinit, exit};

use crate::output::{fail, print_json};

#[derive(clap::Args)]
pub struct Args {
    /// The component to initialize (`.wasm`).
    component: PathBuf,
    /// Where to write the snapshot (replaced whole, never half-written).
    #[arg(long, short)]
    output: PathBuf,
    /// The component-level export, of type `func()`, that initializes it.
    #[arg(long, default_value = toolhost::PREINIT_EXPORT)]
    init: String,
    /// How long the initialization may run.
    #[arg(long, default_value = "60s", value_parser = toolhost::parse_duration)]
    timeout: Duration,
    /// The most linear memory the initialization may grow to.
    #[arg(long, default_value = "1GiB", value_parser = toolhost::parse_size)]
    max_memory: u64,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let shown = args.component.display().to_string();
    let wasm = match read_bounded(&args.component) {
        Ok(wasm) => wasm,
        Err(e) => return Ok(fail("preinit", &format!("{shown}: {e}"), exit::HOST)),
    };
    let preinit = Preinit { init_export: args.init, timeout: args.timeout, max_memory: args.max_memory };
    let started = Instant::now();
    let snapshot = match toolhost::preinitialize(&wasm, &preinit).await {
        Ok(snapshot) => snapshot,
        Err(e) => return Ok(fail("preinit", &format!("{shown} {e}"), exit::LOAD)),
    };
    let took = started.elapsed();
    if let Err(e) = write_whole(&args.output, &snapshot) {
        return Ok(fail("preinit", &format!("{}: {e}", args.output.display()), exit::HOST));
    }
    print_json(&json!({
        "component": args.component,
        "output": args.output,
        "bytes_before": wasm.len(),
        "bytes_after": snapshot.len(),
        "took_ms": took.as_secs_f64() * 1000.0,
    }));
    Ok(ExitCode::SUCCESS)
}

fn read_bounded(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(toolhost::oci::MAX_COMPONENT_SIZE + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > toolhost::oci::MAX_COMPONENT_SIZE {
        return Err(std::io::Error::other(format!("larger than {} MiB", toolhost::oci::MAX_COMPONENT_SIZE >> 20)));
    }
    Ok(bytes)
}

/// Writes a temporary file beside `path` and renames it into place.
fn write_whole(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut file, bytes)?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}
