//! `toolhost import-policy POLICY`: the manifest granting what a wassette `policy.yaml` grants, and what it could not map.

use std::path::PathBuf;
use std::process::ExitCode;

use toolhost::exit;
use toolhost::text::Escaped;

use crate::output::{fail, print_line};

#[derive(clap::Args)]
pub struct Args {
    /// wassette's permission file of a component (`policy.yaml`).
    policy: PathBuf,
    /// Write the manifest here (`<name>.toml` beside `<name>.wasm`) instead of stdout;
    /// an existing file is kept unless --force.
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Replace the --output file if it exists.
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let shown = args.policy.display().to_string();
    let text = match toolhost::text::read_file_bounded(&args.policy, toolhost::MAX_POLICY_BYTES as u64) {
        Ok(text) => text,
        Err(e) => return Ok(fail("policy", &format!("{shown}: {e}"), exit::HOST)),
    };
    let imported = match toolhost::import_wassette_policy(&text) {
        Ok(imported) => imported,
        Err(e) => return Ok(fail("policy", &format!("{shown} {e}"), exit::HOST)),
    };
    for note in &imported.notes {
        eprintln!("note: {}", Escaped(note));
    }
    let Some(output) = args.output else {
        print_line(imported.manifest.trim_end());
        return Ok(ExitCode::SUCCESS);
    };
    if output.exists() && !args.force {
        let message = format!("{} exists; pass --force to replace it", output.display());
        return Ok(fail("policy", &message, exit::HOST));
    }
    std::fs::write(&output, &imported.manifest).map_err(|e| anyhow::anyhow!("{}: {e}", output.display()))?;
    eprintln!("wrote {}", Escaped(&output.display().to_string()));
    Ok(ExitCode::SUCCESS)
}
