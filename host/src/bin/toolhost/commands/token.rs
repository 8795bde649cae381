//! `toolhost token new NAME`: a bearer token for the HTTP server (or an operator's for the console), and the entry that stores only its digest.

use std::process::ExitCode;

use crate::output::print_line;

#[derive(clap::Subcommand)]
pub enum Args {
    /// A new random token for an agent (a `[[token]]`), or with --operator for a person
    /// at the console (a `[[console.operator]]`).
    New {
        /// The agent (or the operator) the token stands for.
        name: String,
        /// The token is an operator's, for the console; never use it as an agent's.
        #[arg(long)]
        operator: bool,
    },
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Args::New { name, operator } = args;
    let (token, sha256) =
        toolhost::serve::new_token().map_err(|e| anyhow::anyhow!("no randomness from the OS: {e}"))?;
    print_line(&token);
    let name = toml::Value::String(name);
    let (table, key) = if operator { ("[[console.operator]]", "name") } else { ("[[token]]", "agent") };
    eprintln!(
        "# add to toolhost.toml (the token itself is stored nowhere):\n{table}\n{key} = {name}\nsha256 = \"{sha256}\""
    );
    Ok(ExitCode::SUCCESS)
}
