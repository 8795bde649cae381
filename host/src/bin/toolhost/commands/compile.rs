//! `toolhost compile --into DIR`: every component's optimized code in a cache that replicas read as `[cache] precompiled`.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use toolhost::{HostConfig, exit};

use super::{HostOptions, Lifetime};
use crate::output::{fail, print_json};

#[derive(clap::Args)]
pub struct Args {
    /// A tools directory, as if given with --root.
    dir: Option<PathBuf>,
    /// The directory to fill (created when missing; entries already there are kept).
    #[arg(long, value_name = "DIR")]
    into: PathBuf,
}

/// A one-shot host (Cranelift only) whose compile cache is INTO and that reads no
/// precompiled cache, so every component's code ends up in INTO; upstream servers are
/// not started (they have no code to compile).
pub async fn run(options: &HostOptions, args: Args) -> anyhow::Result<ExitCode> {
    let config = HostConfig { precompiled: None, upstreams: Vec::new(), ..options.config()? };
    // INTO is the compile cache, whatever `--cache-dir` or `--no-cache` say: a one-shot
    // host with a cache compiles with Cranelift, whose code is what INTO must hold.
    let options = HostOptions { cache_dir: Some(args.into.clone()), no_cache: false, ..options.clone() };
    let host = options.builder_from(config, args.dir, Lifetime::OneShot).build().await?;
    let Some(engine_dir) = host.compile_cache_dir() else {
        anyhow::bail!("{} cannot hold a compile cache (the log says why; --log warn shows it)", args.into.display());
    };
    let snapshot = host.snapshot();
    let loaded = snapshot.components.iter().filter(|slot| slot.error.is_none()).filter_map(|slot| slot.loaded.as_ref());
    let components: Vec<serde_json::Value> = loaded
        .map(|component| {
            json!({
                "file": component.path,
                "hash": component.hash,
                "already_compiled": component.from_cache,
                "compile_ms": component.compile_time.as_secs_f64() * 1000.0,
                "written": host.compile_cache_holds(component),
            })
        })
        .collect();
    let errors = host.load_errors();
    let unwritten = components.iter().filter(|c| c["written"] != json!(true)).count();
    print_json(&json!({
        "into": engine_dir,
        "engine": engine_dir.file_name().map(|name| name.to_string_lossy()),
        "components": components,
        "errors": errors,
    }));
    if let Some(first) = errors.first() {
        let more = match errors.len() {
            1 => String::new(),
            n => format!(" (and {} more, listed in the output)", n - 1),
        };
        return Ok(fail("load", &format!("{first}{more}"), exit::LOAD));
    }
    if unwritten > 0 {
        let message = format!("{unwritten} components' code could not be written to {}", engine_dir.display());
        return Ok(fail("load", &message, exit::LOAD));
    }
    Ok(ExitCode::SUCCESS)
}
