//! What the command prints: JSON on stdout, one `error[KIND]` line on stderr, the host's log on stderr.

use std::io::IsTerminal;
use std::process::ExitCode;

use serde_json::Value;
use toolhost::LoadProgress;
use toolhost::text::Escaped;

/// Prints `value` as JSON on stdout, escaped for a terminal.
pub fn print_json(value: &Value) {
    let json = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    print_line(&toolhost::text::json_for_terminal(&json));
}

/// Writes a line to stdout. A reader that went away (`toolhost list | head`) fails
/// nothing: the command ends as it would have, its output dropped.
pub fn print_line(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{text}").and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("error[host]: cannot write to stdout: {e}");
    }
}

/// The one line a failure prints, `error[KIND]: message`, and its exit code.
pub fn fail(kind: &str, message: &str, code: u8) -> ExitCode {
    eprintln!("error[{kind}]: {}", Escaped(message));
    ExitCode::from(code)
}

/// The host's log on stderr, at `filter`'s level. Colors only on a terminal; the MCP
/// SDK's warning about each error answer it sends (an unknown tool, a refused request)
/// is left out unless the filter names a more detailed level, since those answers are
/// the client's business.
pub fn init_log(filter: &str, format: &str) {
    let filter = match filter {
        "error" | "warn" | "info" => format!("{filter},rmcp::service=error"),
        other => other.to_owned(),
    };
    let filter = tracing_subscriber::EnvFilter::try_new(&filter).unwrap_or_else(|_| "warn".into());
    let log = tracing_subscriber::fmt().with_writer(std::io::stderr).with_env_filter(filter);
    if format == "json" {
        log.json().init();
    } else {
        log.with_ansi(std::io::stderr().is_terminal()).init();
    }
}

/// How long loading may take before the terminal is told what is being compiled.
const QUIET_LOAD: std::time::Duration = std::time::Duration::from_secs(1);

/// The files of the load under way that have not finished.
static LOADING: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Shows compilation progress on a terminal: a load that takes over a second says which
/// files it is compiling, and whether a compile cache (`cached`) keeps the code for the
/// next start, then each compiled one as it finishes (cached loads are too quick to
/// mention).
pub fn print_progress(progress: LoadProgress, cached: bool) {
    let loading = || LOADING.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    match progress {
        LoadProgress::Started { paths, .. } if !paths.is_empty() => {
            *loading() = paths;
            std::thread::spawn(move || {
                std::thread::sleep(QUIET_LOAD);
                let pending = loading().clone();
                if !pending.is_empty() {
                    let names: Vec<String> =
                        pending.iter().map(|p| Escaped(&p.display().to_string()).to_string()).collect();
                    let why = match cached {
                        true => "first use; the compile cache keeps the code for the next start",
                        false => "no compile cache: every start compiles",
                    };
                    eprintln!("compiling {} ({why})", names.join(", "));
                }
            });
        }
        LoadProgress::Loaded { done, total, path, from_cache } => {
            loading().retain(|pending| *pending != path);
            if !from_cache {
                eprintln!("compiled {done}/{total}: {}", Escaped(&path.display().to_string()));
            }
        }
        LoadProgress::Started { .. } => {}
    }
}
