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
    let wasm = match toolhost::text::read_bytes_bounded(&args.component, toolhost::oci::MAX_COMPONENT_SIZE) {
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
    if let Err(e) = toolhost::oci::write_atomically(&args.output, &snapshot) {
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
