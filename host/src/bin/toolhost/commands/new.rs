//! `toolhost new NAME --lang LANG`: a tool project with one example tool, its build command and a README.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use toolhost::scaffold::Lang;

use crate::output::print_json;

#[derive(clap::Args)]
pub struct Args {
    /// The project's name, which is also its tools' namespace (`[a-z][a-z0-9]*` words
    /// joined by single `_` or `-`).
    name: String,
    /// rust, js, python, c or go.
    #[arg(long, default_value = "rust")]
    lang: Lang,
    /// Where to create it [default: ./NAME]; must be empty or missing.
    #[arg(long)]
    dir: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Args { name, lang, dir } = args;
    let dir = dir.unwrap_or_else(|| PathBuf::from(&name));
    let files = toolhost::scaffold::scaffold(&name, lang, &dir)?;
    print_json(&json!({
        "project": dir,
        "lang": lang.as_str(),
        "files": files,
        "build": lang.build_command(),
        "component": dir.join(lang.component_path(&name)),
    }));
    Ok(ExitCode::SUCCESS)
}
