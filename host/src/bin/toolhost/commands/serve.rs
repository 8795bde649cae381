//! `toolhost serve`: the tools the agent may call as an MCP server, over stdio or Streamable HTTP, reloading as files change.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use toolhost::HostConfig;
use toolhost::serve::{CONSOLE_PATH, HTTP_PATH, HttpOptions};
use toolhost::text::Escaped;

use super::{HostOptions, Lifetime};

#[derive(clap::Args)]
pub struct Args {
    /// A tools directory, as if given with --root.
    dir: Option<PathBuf>,
    /// Serve Streamable HTTP on ADDR (`127.0.0.1:8080`, or a port for 127.0.0.1; port 0
    /// picks one). The bound address is printed to stderr.
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http: a host name (or `name:port`) accepted in the Host header besides the
    /// loopback names; repeat for more. Others are refused (DNS rebinding).
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    allow_hosts: Vec<String>,
    /// With --http: serve a non-loopback address although no [[token]] is configured,
    /// so that anyone who reaches it may call tools.
    #[arg(long, requires = "http")]
    insecure_no_auth: bool,
}

/// How often the roots and the configuration are looked at for changes.
const WATCH_DEBOUNCE: Duration = Duration::from_millis(100);

pub async fn run(options: HostOptions, args: Args) -> anyhow::Result<ExitCode> {
    let config = options.config()?;
    let tokens = toolhost::serve::LiveTokens::new(config.tokens.clone());
    let (limits, approval_key, console) = (config.http.clone(), config.approval_key.clone(), config.console.clone());
    let host = options.builder_from(config.clone(), args.dir, Lifetime::Serving).build().await?;
    let _watch = host.watch(WATCH_DEBOUNCE)?;
    // Without a watcher for it, the configuration still serves; only its edits wait for
    // a restart.
    let _config_watch = HostConfig::locate(options.config.as_deref()).and_then(|path| {
        config
            .watch(&host, &path, WATCH_DEBOUNCE, Some(tokens.clone()))
            .inspect_err(|e| tracing::warn!("{}; edits of it take effect at the next start", Escaped(&e.to_string())))
            .ok()
    });
    let Some(addr) = args.http else {
        if console.is_some() {
            tracing::info!("[console] is served only with --http; over stdio, approvals go to the client");
        }
        toolhost::serve::serve_stdio(host, options.caller).await?;
        return Ok(ExitCode::SUCCESS);
    };
    let listener = toolhost::serve::bind(&addr).await?;
    let http_options = HttpOptions {
        extra_allowed_hosts: args.allow_hosts,
        tokens,
        insecure_no_auth: args.insecure_no_auth,
        limits,
        approval_key,
        console,
    };
    http_options.check_exposure(listener.local_addr()?)?;
    eprintln!("serving MCP on http://{}{HTTP_PATH}", listener.local_addr()?);
    if http_options.console.is_some() {
        eprintln!("serving the operator's console on http://{}{CONSOLE_PATH}", listener.local_addr()?);
    }
    let shutdown = toolhost::serve::shutdown_signal();
    toolhost::serve::serve_http_on(host, options.caller, listener, http_options, shutdown).await?;
    Ok(ExitCode::SUCCESS)
}
