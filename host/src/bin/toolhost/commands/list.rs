//! `toolhost list`: the tools of the layers, where each comes from, what it overrides, and what failed to load.

use std::path::PathBuf;
use std::process::ExitCode;

use toolhost::ToolFilter;

use super::{HostOptions, Lifetime};
use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
    /// A tools directory (`<namespace>/<component>.wasm`), as if given with --root.
    dir: Option<PathBuf>,
    /// Only tools at or below this risk level (low, medium, high, critical).
    #[arg(long, value_name = "LEVEL")]
    max_risk: Option<toolhost::Risk>,
    /// Only read-only tools.
    #[arg(long)]
    read_only: bool,
    /// Only tools not marked (or defaulted) destructive.
    #[arg(long)]
    non_destructive: bool,
    /// Only idempotent tools.
    #[arg(long)]
    idempotent: bool,
    /// Only tools that reach nothing outside the host.
    #[arg(long)]
    closed_world: bool,
}

impl Args {
    /// What the listing keeps: the tools that pass every filter given.
    fn filter(&self) -> ToolFilter {
        ToolFilter {
            max_risk: self.max_risk,
            read_only: self.read_only.then_some(true),
            destructive: self.non_destructive.then_some(false),
            idempotent: self.idempotent.then_some(true),
            open_world: self.closed_world.then_some(false),
            requires_approval: None,
        }
    }
}

pub async fn run(options: &HostOptions, args: Args) -> anyhow::Result<ExitCode> {
    let filter = args.filter();
    let host = options.build(args.dir, Lifetime::OneShot).await?;
    let mut listing = host.listing();
    listing.tools.retain(|tool| filter.keeps(&tool.policy()));
    print_json(&serde_json::to_value(listing)?);
    Ok(ExitCode::SUCCESS)
}
