//! `toolhost paths`: where the host keeps things by default.

use std::path::PathBuf;
use std::process::ExitCode;

use super::HostOptions;
use crate::output::print_line;

/// One `what path` line each; a path not known is printed as `-`.
pub fn run(options: &HostOptions) -> anyhow::Result<ExitCode> {
    let shown = |path: Option<PathBuf>| path.map_or_else(|| "-".to_owned(), |path| path.display().to_string());
    print_line(&format!("cache {}", shown(toolhost::paths::cache_dir())));
    print_line(&format!("data {}", shown(toolhost::paths::data_dir())));
    print_line(&format!("stdlib {}", shown(toolhost::paths::stdlib_dir())));
    print_line(&format!("storage {}", toolhost::storage::Storage::new(options.config()?.storage).location()));
    Ok(ExitCode::SUCCESS)
}
