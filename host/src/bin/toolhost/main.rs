//! The `toolhost` command line: parses the arguments and hands each command to its file in `commands/`.
//!
//! Results are JSON on stdout. A failure is one line on stderr and an exit code that
//! names its kind ([`toolhost::exit`]), so scripts can tell "bad input" from "tool
//! crashed" without parsing text. The host's log goes to stderr at `--log`'s level:
//! `warn` for `serve`, `error` for one-shot commands, whose results already carry what
//! went wrong. Everything a command shows comes from the library.

mod commands;
mod output;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use toolhost::{Caller, exit};

use commands::{HostOptions, call, compile, export, import_policy, inspect, list, new, oci, serve, storage, token};

toolhost::use_host_allocator!();

#[derive(Parser)]
#[command(name = "toolhost", version, about = "Host for AI-agent tools written as WebAssembly components")]
struct Cli {
    /// Log level for the host's own log on stderr (error, warn, info, debug, trace), or
    /// a filter (`info,toolhost::guest=debug`) [default: warn for serve, else error].
    #[arg(long, global = true, env = "TOOLHOST_LOG")]
    log: Option<String>,
    /// How log lines look: `text` (colored only on a terminal) or `json` (one per line).
    #[arg(long, global = true, default_value = "text", value_name = "FORMAT", value_parser = ["text", "json"])]
    log_format: String,
    /// Host configuration file [default: ./toolhost.toml when it exists].
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    /// A tools root; repeat for layers, highest first. Replaces the configuration's [default: ./tools].
    #[arg(long = "root", global = true, value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// A stdlib root below all others; its tools are also callable by bare name
    /// [default: $TOOLHOST_STDLIB].
    #[arg(long, global = true, value_name = "DIR", env = "TOOLHOST_STDLIB")]
    stdlib: Option<PathBuf>,
    /// Compile cache directory [default: the configuration's, else $TOOLHOST_CACHE_DIR,
    /// $XDG_CACHE_HOME/toolhost or ~/.cache/toolhost].
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
    /// Compile every component, reading and writing no compile cache (one-shot commands: with Winch).
    #[arg(long, global = true)]
    no_cache: bool,
    /// The agent id calls are made as, checked against the configuration's policy.
    #[arg(long, global = true, default_value = "local", env = "TOOLHOST_AGENT")]
    agent: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the tools of the layers (or of DIR): layer, file, content hash, schemas,
    /// what each overrides, same-layer conflicts and load errors.
    List(list::Args),
    /// Show what a component offers, imports and is granted; what an HTTP tool offers
    /// and requests; or an upstream MCP server's declaration, connection and tools.
    Inspect(inspect::Args),
    /// Print the tools the agent may call in a function-calling format.
    Export(export::Args),
    /// Write the manifest granting what a wassette `policy.yaml` grants (hosts, paths,
    /// environment as configuration); stderr says what it could not map.
    ImportPolicy(import_policy::Args),
    /// Call a tool with JSON input and print its JSON output. Accepts full names
    /// (`math/add`), exported names (`math__add`, `math.add`) and stdlib bare names.
    Call(call::Args),
    /// Serve the tools the agent may call over MCP: stdio (stdout only protocol), or
    /// Streamable HTTP at http://ADDR/mcp with --http; tools/list_changed on reloads.
    Serve(serve::Args),
    /// Compile every component of the layers (or of DIR) optimized into INTO, for
    /// replicas that read it (maybe read-only) as `[cache] precompiled`: code for this
    /// toolhost and its [engine] settings. Prints the engine key and each component.
    Compile(compile::Args),
    /// Fetch the components toolhost.toml names by OCI reference (`[layer.oci.NS]`) into
    /// their layers, by the digests pinned in toolhost.lock, else pinning them there.
    Pull(oci::PullArgs),
    /// Publish a component to an OCI registry (`oci://registry/repository:tag`) in the
    /// CNCF Wasm OCI layout; prints the manifest's and the component's digests.
    Push(oci::PushArgs),
    /// Make a bearer token for the HTTP server: prints the token on stdout and the
    /// `[[token]]` entry for toolhost.toml (its SHA-256, no secret) on stderr.
    #[command(subcommand)]
    Token(token::Args),
    /// Read, change, move and back up the data components keep (`wasi:keyvalue` buckets).
    #[command(subcommand)]
    Storage(storage::StorageCommand),
    /// Print where the host keeps its compile cache, data, stdlib layer and storage by default.
    Paths,
    /// Say which `[[policy]]` rule decides what an agent may call, and why.
    #[command(subcommand)]
    Policy(commands::policy::PolicyCommand),
    /// Snapshot a component after its `wizer-initialize` export ran once, with no grants.
    Preinit(commands::preinit::Args),
    /// Create a tool project: an example tool (`NAME/greet`), its build command, a README.
    New(new::Args),
}

fn main() -> ExitCode {
    let cli = parse_cli();
    let default_log = if matches!(cli.command, Command::Serve(_)) { "warn" } else { "error" };
    output::init_log(cli.log.as_deref().unwrap_or(default_log), &cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => return output::fail("host", &format!("cannot start the async runtime: {e}"), exit::HOST),
    };
    let options = HostOptions {
        config: cli.config,
        roots: cli.roots,
        stdlib: cli.stdlib,
        cache_dir: cli.cache_dir,
        no_cache: cli.no_cache,
        caller: Caller::new(cli.agent),
    };
    let outcome = runtime.block_on(async move {
        match cli.command {
            Command::List(args) => list::run(&options, args).await,
            Command::Inspect(args) => inspect::run(&options, args).await,
            Command::Export(args) => export::run(&options, args).await,
            Command::Call(args) => call::run(&options, args).await,
            Command::Serve(args) => serve::run(options, args).await,
            Command::Compile(args) => compile::run(&options, args).await,
            Command::Pull(args) => oci::pull(&options, args).await,
            Command::Push(args) => oci::push(&options, args).await,
            Command::Token(args) => token::run(args),
            Command::ImportPolicy(args) => import_policy::run(args),
            Command::Storage(command) => storage::run(&options, command).await,
            Command::Paths => commands::paths::run(&options),
            Command::Policy(command) => commands::policy::run(&options, command).await,
            Command::Preinit(args) => commands::preinit::run(args).await,
            Command::New(args) => new::run(args),
        }
    });
    // Dropping the runtime drops the hosts' last tasks and with them the connections
    // to upstream servers, whose children are then given their grace period to exit.
    drop(runtime);
    toolhost::upstream::stop_children();
    outcome.unwrap_or_else(|e| output::fail("host", &format!("{e:#}"), exit::HOST))
}

/// The arguments, with the exit-code table of `--help` taken from the library.
fn parse_cli() -> Cli {
    let codes: Vec<String> = exit::table().iter().map(|(code, meaning)| format!("{code} {meaning}")).collect();
    let command = Cli::command().after_help(format!("Exit codes: {}.", codes.join(", ")));
    Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit())
}
