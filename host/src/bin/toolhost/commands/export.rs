//! `toolhost export`: the tools the agent may call, in a function-calling format.

use std::path::PathBuf;
use std::process::ExitCode;

use toolhost::ExportFormat;

use super::{HostOptions, Lifetime};
use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
    /// `openai` (tools array), `anthropic` (tools array) or `mcp` (tools/list result).
    #[arg(long, short)]
    format: ExportFormat,
    /// A tools directory, as if given with --root.
    dir: Option<PathBuf>,
}

pub async fn run(options: &HostOptions, args: Args) -> anyhow::Result<ExitCode> {
    let host = options.build(args.dir, Lifetime::OneShot).await?;
    print_json(&host.export(args.format, &options.caller));
    Ok(ExitCode::SUCCESS)
}
