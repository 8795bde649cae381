//! `toolhost token new AGENT`: a bearer token for the HTTP server, and the `[[token]]` entry that stores only its digest.

use std::process::ExitCode;

use crate::output::print_line;

#[derive(clap::Subcommand)]
pub enum Args {
    /// A new random token for AGENT.
    New {
        /// The agent the token stands for.
        agent: String,
    },
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Args::New { agent } = args;
    let (token, sha256) =
        toolhost::serve::new_token().map_err(|e| anyhow::anyhow!("no randomness from the OS: {e}"))?;
    print_line(&token);
    let agent = toml::Value::String(agent);
    eprintln!(
        "# add to toolhost.toml (the token itself is stored nowhere):\n[[token]]\nagent = {agent}\nsha256 = \"{sha256}\""
    );
    Ok(ExitCode::SUCCESS)
}
