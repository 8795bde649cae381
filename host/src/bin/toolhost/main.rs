//! The `toolhost` command line: list, inspect, export, call and serve tools, and start
//! new tool projects.
//!
//! Results are JSON on stdout. A failure is one line on stderr and an exit code that
//! names its kind ([`toolhost::exit`]), so scripts can tell "bad input" from "tool
//! crashed" without parsing text. Everything a command shows comes from the library:
//! this file only reads arguments and prints.

mod commands {
    pub mod storage;
}

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use toolhost::text::Escaped;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use serde_json::{Value, json};
use toolhost::upstream::{UpstreamServer, UpstreamState};
use toolhost::{
    CacheSetting, CallError, Caller, ExportFormat, HostConfig, LoadProgress, SourceKind, Tiering, ToolFilter, ToolHost,
    ToolHostBuilder, Violation, exit,
};

toolhost::use_host_allocator!();

#[derive(Parser)]
#[command(name = "toolhost", version, about = "Host for AI-agent tools written as WebAssembly components")]
struct Cli {
    /// Log level for the host's own log on stderr (error, warn, info, debug, trace),
    /// or a filter (`info,toolhost::guest=debug`).
    #[arg(long, global = true, default_value = "warn", env = "TOOLHOST_LOG")]
    log: String,

    /// How log lines look: `text` (colored only on a terminal) or `json` (one object
    /// per line).
    #[arg(long, global = true, default_value = "text", value_name = "FORMAT", value_parser = ["text", "json"])]
    log_format: String,

    /// Host configuration file [default: ./toolhost.toml when it exists].
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,

    /// A tools root; repeat for layers, highest precedence first. Replaces the
    /// configuration's layers [default: ./tools].
    #[arg(long = "root", global = true, value_name = "DIR")]
    roots: Vec<PathBuf>,

    /// A stdlib root below all others; its tools are also callable by bare name
    /// [default: $TOOLHOST_STDLIB].
    #[arg(long, global = true, value_name = "DIR", env = "TOOLHOST_STDLIB")]
    stdlib: Option<PathBuf>,

    /// Directory of the compile cache [default: the configuration's, else
    /// $TOOLHOST_CACHE_DIR, $XDG_CACHE_HOME/toolhost or ~/.cache/toolhost].
    #[arg(long, global = true, value_name = "DIR")]
    cache_dir: Option<PathBuf>,

    /// Compile every component, reading and writing no compile cache.
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
    List {
        /// A tools directory (`<namespace>/<component>.wasm`), as if given with --root.
        dir: Option<PathBuf>,
        #[command(flatten)]
        filter: ListFilter,
    },
    /// Show what a component offers, what it imports and what it is granted; what an
    /// HTTP tool offers and the request it makes; or an upstream MCP server's
    /// declaration, connection and tools.
    Inspect {
        /// A component file (`.wasm`), an HTTP tool (`.http.toml`), or the name of an
        /// `[[upstream]]` server of toolhost.toml (when no file has that name).
        file: PathBuf,
    },
    /// Print the tools the agent may call in a function-calling format.
    Export {
        /// `openai` (tools array), `anthropic` (tools array) or `mcp` (tools/list result).
        #[arg(long, short)]
        format: ExportFormat,
        /// A tools directory, as if given with --root.
        dir: Option<PathBuf>,
    },
    /// Call a tool with JSON input and print its JSON output. Accepts full names
    /// (`math/add`), exported names (`math__add`, `math.add`) and stdlib bare names.
    Call {
        /// `[DIR] NAME`: an optional tools directory (as if given with --root), then the
        /// tool's full name `namespace/tool` (or a stdlib tool's bare name).
        #[arg(num_args = 1..=2, required = true, value_name = "DIR] [NAME")]
        target: Vec<String>,
        /// The input as JSON text; read from stdin when absent.
        #[arg(long, short)]
        input: Option<String>,
        /// Print the full call report (fuel, duration, captured output) instead of only
        /// the output.
        #[arg(long)]
        report: bool,
    },
    /// Serve the tools the agent may call as an MCP server: over stdio (stdout carries
    /// only protocol messages), or Streamable HTTP at http://ADDR/mcp with --http.
    /// Component files are watched; clients get notifications/tools/list_changed.
    Serve {
        /// A tools directory, as if given with --root.
        dir: Option<PathBuf>,
        /// Serve Streamable HTTP on ADDR (`127.0.0.1:8080`, or a port for 127.0.0.1;
        /// port 0 picks one). The bound address is printed to stderr.
        #[arg(long, value_name = "ADDR")]
        http: Option<String>,
        /// With --http: a host name (or `name:port`) accepted in the Host header besides
        /// the loopback names; repeat for more. Others are refused (DNS rebinding).
        #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
        allow_hosts: Vec<String>,
        /// With --http: serve a non-loopback address although no [[token]] is
        /// configured, so that anyone who reaches it may call tools.
        #[arg(long, requires = "http")]
        insecure_no_auth: bool,
    },
    /// Compile every component of the layers (or of DIR) with the optimizing compiler
    /// into INTO, for replicas that read it as their `[cache] precompiled` (it may be
    /// mounted read-only). The code is for this host's engine configuration (this
    /// toolhost's version and the configuration's [engine] settings); prints the engine
    /// key and each component.
    Compile {
        /// A tools directory, as if given with --root.
        dir: Option<PathBuf>,
        /// The directory to fill (created when missing; entries already there are kept).
        #[arg(long, value_name = "DIR")]
        into: PathBuf,
    },
    /// Fetch the components toolhost.toml names by OCI reference (`[layer.oci.NS]`),
    /// check their digests, write them into their layers' roots and pin them in
    /// toolhost.lock. Components in the lock are fetched by their pinned digest.
    Pull {
        /// Resolve every tag again and move the pins to what the tags name now.
        #[arg(long, conflicts_with = "locked")]
        update: bool,
        /// Fetch exactly what toolhost.lock pins and never write it; a component it
        /// does not pin is an error (for replicas: every one runs the same bytes).
        #[arg(long)]
        locked: bool,
    },
    /// Publish a component to an OCI registry (`oci://registry/repository:tag`) in the
    /// CNCF Wasm OCI layout; prints the manifest's and the component's digests.
    Push {
        /// The component file.
        file: PathBuf,
        /// Where: `oci://registry[:port]/repository[:tag]`.
        reference: String,
    },
    /// Make a bearer token for the HTTP server: prints the token on stdout and the
    /// `[[token]]` entry for toolhost.toml (its SHA-256, no secret) on stderr.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Read and change the data components keep (`wasi:keyvalue` buckets), and back it
    /// up as JSON.
    Storage {
        #[command(subcommand)]
        command: commands::storage::StorageCommand,
    },
    /// Print where the host keeps things by default: the compile cache, the data
    /// directory, the stdlib layer and the storage.
    Paths,
    /// Create a tool project: one example tool (`NAME/greet`), its build command and a
    /// README on building, installing and calling it.
    New {
        /// The project's name, which is also its tools' namespace (`[a-z][a-z0-9]*`
        /// words joined by single `_` or `-`).
        name: String,
        /// rust, js, python, c or go.
        #[arg(long, default_value = "rust")]
        lang: toolhost::scaffold::Lang,
        /// Where to create it [default: ./NAME]; must be empty or missing.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum TokenCommand {
    /// A new random token for AGENT.
    New {
        /// The agent the token stands for.
        agent: String,
    },
}

/// `toolhost list` keeps only the tools that pass every filter given.
#[derive(clap::Args)]
struct ListFilter {
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

impl ListFilter {
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

fn main() -> ExitCode {
    let cli = parse_cli();
    init_log(&cli.log, &cli.log_format);
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(exit::HOST);
        }
    };
    let host = HostOptions {
        config: cli.config,
        roots: cli.roots,
        stdlib: cli.stdlib,
        cache_dir: cli.cache_dir,
        no_cache: cli.no_cache,
        caller: Caller::new(cli.agent),
    };
    let outcome = runtime.block_on(async move {
        match cli.command {
            Command::New { name, lang, dir } => new_project(&name, lang, dir),
            Command::List { dir, filter } => list(&host, dir, filter.filter()).await,
            Command::Inspect { file } => inspect(&host, file).await,
            Command::Export { format, dir } => export(&host, format, dir).await,
            Command::Call { target, input, report } => call(&host, target, input, report).await,
            Command::Serve { dir, http, allow_hosts, insecure_no_auth } => {
                let http = http.map(|addr| HttpServe { addr, allow_hosts, insecure_no_auth });
                serve(host, dir, http).await
            }
            Command::Compile { dir, into } => compile(&host, dir, into).await,
            Command::Pull { update, locked } => {
                let mode = match (update, locked) {
                    (true, _) => toolhost::oci::PullMode::Update,
                    (_, true) => toolhost::oci::PullMode::Locked,
                    _ => toolhost::oci::PullMode::Pin,
                };
                pull(&host, mode).await
            }
            Command::Push { file, reference } => push(&host, &file, &reference).await,
            Command::Token { command: TokenCommand::New { agent } } => new_token(&agent),
            Command::Storage { command } => {
                let storage = toolhost::storage::Storage::new(host.config()?.storage);
                commands::storage::run(storage, command).await
            }
            Command::Paths => paths(&host),
        }
    });
    outcome.unwrap_or_else(|e| {
        eprintln!("error: {}", Escaped(&format!("{e:#}")));
        ExitCode::from(exit::HOST)
    })
}

/// `toolhost paths`: one `what path` line each; a path not known is printed as `-`.
fn paths(host: &HostOptions) -> anyhow::Result<ExitCode> {
    let shown = |path: Option<PathBuf>| path.map_or_else(|| "-".to_owned(), |path| path.display().to_string());
    print_line(&format!("cache {}", shown(toolhost::paths::cache_dir())));
    print_line(&format!("data {}", shown(toolhost::paths::data_dir())));
    print_line(&format!("stdlib {}", shown(toolhost::paths::stdlib_dir())));
    print_line(&format!("storage {}", toolhost::storage::Storage::new(host.config()?.storage).location()));
    Ok(ExitCode::SUCCESS)
}

/// The host's log on stderr. Colors only on a terminal; the MCP SDK's warning about each
/// error answer it sends (an unknown tool, a refused request) is left out unless the
/// filter names a more detailed level, since those answers are the client's business.
fn init_log(filter: &str, format: &str) {
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

/// The arguments, with the exit-code table of `--help` taken from the library.
fn parse_cli() -> Cli {
    let codes: Vec<String> = exit::table().iter().map(|(code, meaning)| format!("{code} {meaning}")).collect();
    let command = Cli::command().after_help(format!("Exit codes: {}.", codes.join(", ")));
    Cli::from_arg_matches(&command.get_matches()).unwrap_or_else(|e| e.exit())
}

/// The host's layers and settings: the configuration file, then the command line.
struct HostOptions {
    config: Option<PathBuf>,
    roots: Vec<PathBuf>,
    stdlib: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    no_cache: bool,
    caller: Caller,
}

/// How long a host lives: one command, or serving until stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lifetime {
    /// Exits after one answer: compiling with Cranelift at once fills the compile cache
    /// for the next run, where a background compile would be cut short.
    OneShot,
    /// Serves until stopped: the configuration's tiering.
    Serving,
}

impl HostOptions {
    /// The configuration file's settings, or the defaults without one.
    fn config(&self) -> anyhow::Result<HostConfig> {
        Ok(HostConfig::find(self.config.as_deref())?.unwrap_or_default())
    }

    /// A host serving the configured layers, or `dir` (and `--root`s) in their place.
    async fn build(&self, dir: Option<PathBuf>, lifetime: Lifetime) -> anyhow::Result<ToolHost> {
        self.build_from(self.config()?, dir, lifetime).await
    }

    /// [`HostOptions::build`] with a configuration already read.
    async fn build_from(
        &self,
        config: HostConfig,
        dir: Option<PathBuf>,
        lifetime: Lifetime,
    ) -> anyhow::Result<ToolHost> {
        Ok(self.builder_from(config, dir, lifetime).build().await?)
    }

    /// A one-shot host that loads only `namespace` (every layer of it), when the name
    /// says which: a call waits for no other component.
    async fn build_for(&self, dir: Option<PathBuf>, namespace: Option<&str>) -> anyhow::Result<ToolHost> {
        let mut builder = self.builder_from(self.config()?, dir, Lifetime::OneShot);
        if let Some(namespace) = namespace {
            builder = builder.only_namespaces([namespace]);
        }
        Ok(builder.build().await?)
    }

    fn builder_from(&self, config: HostConfig, dir: Option<PathBuf>, lifetime: Lifetime) -> ToolHostBuilder {
        let roots: Vec<PathBuf> = dir.into_iter().chain(self.roots.iter().cloned()).collect();
        let layers = config.layers_with(&roots, self.stdlib.as_deref());
        self.settings(HostConfig { layers, ..config }, lifetime)
    }

    /// A host with the configuration's settings (limits, engine, cache) and no layers
    /// nor upstream servers: inspecting one file loads nothing else.
    async fn build_without_layers(&self) -> anyhow::Result<ToolHost> {
        let config = HostConfig::find(self.config.as_deref())?.unwrap_or_default();
        let bare = HostConfig { layers: Vec::new(), upstreams: Vec::new(), ..config };
        Ok(self.settings(bare, Lifetime::OneShot).build().await?)
    }

    fn settings(&self, mut config: HostConfig, lifetime: Lifetime) -> ToolHostBuilder {
        if lifetime == Lifetime::OneShot {
            config.engine.tiering = Tiering::OptimizedOnly;
        }
        // A server keeps numbers for `GET /metrics` (a one-shot command has no one to
        // show them to), and answers while slow components are still loading.
        let serving = lifetime == Lifetime::Serving;
        let mut builder = config.builder().metrics(serving).serve_while_loading(serving);
        if self.no_cache {
            builder = builder.compile_cache(CacheSetting::Disabled);
        } else if let Some(dir) = &self.cache_dir {
            builder = builder.compile_cache(CacheSetting::Dir(dir.clone()));
        }
        if std::io::stderr().is_terminal() {
            builder = builder.on_progress(print_progress);
        }
        builder
    }
}

/// Shows compilation progress on a terminal; cached loads are too quick to mention.
fn print_progress(progress: LoadProgress) {
    if let LoadProgress::Loaded { done, total, path, from_cache: false } = progress {
        eprintln!("compiled {done}/{total}: {}", Escaped(&path.display().to_string()));
    }
}

fn new_project(name: &str, lang: toolhost::scaffold::Lang, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let dir = dir.unwrap_or_else(|| PathBuf::from(name));
    let files = toolhost::scaffold::scaffold(name, lang, &dir)?;
    print_json(&json!({
        "project": dir,
        "lang": lang.as_str(),
        "files": files,
        "build": lang.build_command(),
        "component": dir.join(lang.component_path(name)),
    }));
    Ok(ExitCode::SUCCESS)
}

async fn list(options: &HostOptions, dir: Option<PathBuf>, filter: ToolFilter) -> anyhow::Result<ExitCode> {
    let host = options.build(dir, Lifetime::OneShot).await?;
    let mut listing = host.listing();
    listing.tools.retain(|tool| filter.keeps(&tool.policy()));
    print_json(&serde_json::to_value(listing)?);
    Ok(ExitCode::SUCCESS)
}

/// `toolhost compile`: a one-shot host (Cranelift only) whose compile cache is INTO and
/// that reads no precompiled cache, so every component's code ends up in INTO; upstream
/// servers are not started (they have no code to compile).
async fn compile(options: &HostOptions, dir: Option<PathBuf>, into: PathBuf) -> anyhow::Result<ExitCode> {
    let config = HostConfig { precompiled: None, upstreams: Vec::new(), ..options.config()? };
    let host = options
        .builder_from(config, dir, Lifetime::OneShot)
        .compile_cache(CacheSetting::Dir(into.clone()))
        .build()
        .await?;
    let Some(engine_dir) = host.compile_cache_dir() else {
        anyhow::bail!("{} cannot hold a compile cache (the warning above says why)", into.display());
    };
    let snapshot = host.snapshot();
    let components: Vec<serde_json::Value> = snapshot
        .components
        .iter()
        .filter(|slot| slot.error.is_none())
        .filter_map(|slot| slot.loaded.as_ref())
        .map(|component| {
            let entry = engine_dir.join(format!("{}.cwasm", component.hash));
            json!({
                "file": component.path,
                "hash": component.hash,
                "already_compiled": component.from_cache,
                "compile_ms": component.compile_time.as_secs_f64() * 1000.0,
                "written": entry.is_file(),
            })
        })
        .collect();
    let errors = host.load_errors();
    let unwritten = components.iter().filter(|c| c["written"] != json!(true)).count();
    print_json(&json!({
        "into": engine_dir,
        "engine": engine_dir.file_name().map(|name| name.to_string_lossy()),
        "components": components,
        "errors": errors,
    }));
    if !errors.is_empty() || unwritten > 0 {
        for error in &errors {
            eprintln!("error[load]: {}", Escaped(&error.to_string()));
        }
        if unwritten > 0 {
            eprintln!("error: {unwritten} components' code could not be written to {}", engine_dir.display());
        }
        return Ok(ExitCode::from(exit::LOAD));
    }
    Ok(ExitCode::SUCCESS)
}

/// `toolhost pull`: the configuration's OCI components into their roots, pinned in the
/// lock beside the configuration file.
async fn pull(options: &HostOptions, mode: toolhost::oci::PullMode) -> anyhow::Result<ExitCode> {
    let Some(path) = HostConfig::locate(options.config.as_deref()) else {
        anyhow::bail!("no toolhost.toml here (or --config): it names what to pull and where the lock goes");
    };
    let config = HostConfig::load(&path)?;
    // A replica's `pull --locked` before it serves has nothing to do for a toolset
    // without OCI components; asked by hand, a pull of nothing is a mistake.
    if config.oci.is_empty() && mode != toolhost::oci::PullMode::Locked {
        anyhow::bail!("{} names no component by OCI reference ([layer.oci.NAMESPACE])", path.display());
    }
    let lock_path = toolhost::oci::Lock::path_for(&path);
    match toolhost::oci::pull(&config.oci, &config.layers, &config.oci_settings, &lock_path, mode).await {
        Ok(pulled) => {
            print_json(&json!({ "lock": lock_path, "components": pulled }));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error[oci]: {}", Escaped(&e.to_string()));
            Ok(ExitCode::from(exit::LOAD))
        }
    }
}

/// `toolhost push FILE REFERENCE`.
async fn push(options: &HostOptions, file: &std::path::Path, reference: &str) -> anyhow::Result<ExitCode> {
    let settings = options.config()?.oci_settings;
    let reference = toolhost::oci::OciReference::parse(reference).map_err(anyhow::Error::msg)?;
    match toolhost::oci::push(file, &reference, &settings).await {
        Ok(pushed) => {
            print_json(&serde_json::to_value(pushed)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error[oci]: {}", Escaped(&e.to_string()));
            Ok(ExitCode::from(exit::LOAD))
        }
    }
}

fn new_token(agent: &str) -> anyhow::Result<ExitCode> {
    let (token, sha256) =
        toolhost::serve::new_token().map_err(|e| anyhow::anyhow!("no randomness from the OS: {e}"))?;
    print_line(&token);
    let agent = toml::Value::String(agent.to_owned());
    eprintln!(
        "# add to toolhost.toml (the token itself is stored nowhere):\n[[token]]\nagent = {agent}\nsha256 = \"{sha256}\""
    );
    Ok(ExitCode::SUCCESS)
}

async fn inspect(options: &HostOptions, file: PathBuf) -> anyhow::Result<ExitCode> {
    if !file.exists() {
        let config = options.config()?;
        let declared = file.to_str().and_then(|name| config.upstreams.iter().find(|server| server.name == name));
        if let Some(server) = declared.cloned() {
            return inspect_upstream(options, config, server).await;
        }
    }
    let host = options.build_without_layers().await?;
    let inspected = if toolhost::is_http_tool_file(&file) {
        host.inspect_http_tool(&file).map(|tool| serde_json::to_value(&tool))
    } else {
        host.inspect_file(&file).await.map(|component| serde_json::to_value(&component))
    };
    match inspected {
        Ok(shown) => {
            print_json(&shown?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("error[load]: {}", Escaped(&e.to_string()));
            Ok(ExitCode::from(exit::LOAD))
        }
    }
}

/// Connects to the upstream server `server` (and loads nothing else of its namespace's
/// layers) and shows its declaration, its connection and the tools it serves; exits
/// with the load error's code when it cannot be reached.
async fn inspect_upstream(
    options: &HostOptions,
    config: HostConfig,
    server: UpstreamServer,
) -> anyhow::Result<ExitCode> {
    let host =
        options.builder_from(config, None, Lifetime::OneShot).only_namespaces([server.name.as_str()]).build().await?;
    let Some(status) = host.upstreams().await.into_iter().find(|status| status.server.name == server.name) else {
        anyhow::bail!("the upstream server `{}` was not started", server.name);
    };
    let tools: Vec<toolhost::ToolDescription> = host
        .listing()
        .tools
        .into_iter()
        .filter(|tool| {
            tool.source == SourceKind::McpServer
                && toolhost::names::split(&tool.name).is_some_and(|(namespace, _)| namespace == server.name)
        })
        .collect();
    let mut shown = serde_json::to_value(&status)?;
    shown["contract"] = json!("mcp server");
    shown["tools"] = serde_json::to_value(tools)?;
    print_json(&shown);
    match status.state {
        UpstreamState::Failed { problem } => {
            eprintln!("error[load]: upstream `{}`: {}", Escaped(&server.name), Escaped(&problem));
            Ok(ExitCode::from(exit::LOAD))
        }
        UpstreamState::Connecting | UpstreamState::Connected { .. } => Ok(ExitCode::SUCCESS),
    }
}

async fn export(options: &HostOptions, format: ExportFormat, dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let host = options.build(dir, Lifetime::OneShot).await?;
    print_json(&host.export(format, &options.caller));
    Ok(ExitCode::SUCCESS)
}

async fn call(
    options: &HostOptions,
    target: Vec<String>,
    input: Option<String>,
    report: bool,
) -> anyhow::Result<ExitCode> {
    let (dir, name) = match <[String; 2]>::try_from(target) {
        Ok([dir, name]) => (Some(PathBuf::from(dir)), name),
        Err(mut target) => (None, target.pop().unwrap_or_default()),
    };
    let stdin_is_input = input.is_none();
    let (input, input_bytes) = read_input(input)?;
    let input = match input {
        Ok(input) => input,
        Err(reason) => {
            let violations = vec![Violation { pointer: String::new(), reason }];
            let error = CallError::InputInvalid { tool: name.clone(), violations };
            let call = toolhost::CallReport::refused(options.caller.clone(), name, input_bytes, error.clone());
            return Ok(finish_call(report.then_some(&call), Err(CallFailure::Call(error))));
        }
    };
    let namespace = toolhost::names::unmap(&name).unwrap_or_else(|| name.clone());
    let namespace = toolhost::names::split(&namespace).map(|(namespace, _)| namespace.to_owned());
    let host = options.build_for(dir.clone(), namespace.as_deref()).await?;
    for error in host.load_errors() {
        eprintln!("warning: {}", Escaped(&error.to_string()));
    }
    let approver = terminal_approver(stdin_is_input);
    let call_options = toolhost::CallOptions { approver: Some(approver), ..Default::default() };
    let call = host.call_with(&options.caller, &name, input, &call_options).await;
    if let Some(reason) = &call.hidden_because {
        eprintln!("note: the tool is hidden from {}: {}", Escaped(&options.caller.to_string()), Escaped(reason));
    }
    let outcome = match &call.outcome {
        Ok(output) => Ok(output),
        // The tool may well be in a file that did not load: say so, rather than "no
        // such tool".
        Err(error @ CallError::NotFound { .. }) => Err(match host.snapshot().load_error_in_namespace_of(&name) {
            Some(load_error) => CallFailure::Load(format!("no tool named `{name}` is served; {load_error}")),
            // Only the name's namespace was loaded: find the close matches among all.
            None if namespace.is_some() => {
                let everything = options.build(dir, Lifetime::OneShot).await?;
                CallFailure::Call(everything.describe(&options.caller, &name).err().unwrap_or_else(|| error.clone()))
            }
            None => CallFailure::Call(error.clone()),
        }),
        Err(error) => Err(CallFailure::Call(error.clone())),
    };
    Ok(finish_call(report.then_some(&call), outcome))
}

/// Why `toolhost call` failed. Its kind is said once and agrees everywhere: the
/// `error[KIND]` line, the exit code and the `--report` JSON's `error.kind`.
enum CallFailure {
    /// The call's own error.
    Call(CallError),
    /// No such tool is served because the file that would hold it did not load.
    Load(String),
}

impl CallFailure {
    fn kind(&self) -> &'static str {
        match self {
            CallFailure::Call(error) => error.kind().as_str(),
            CallFailure::Load(_) => "load",
        }
    }

    fn message(&self) -> String {
        match self {
            CallFailure::Call(error) => error.to_string(),
            CallFailure::Load(message) => message.clone(),
        }
    }

    fn exit_code(&self) -> u8 {
        match self {
            CallFailure::Call(error) => error.kind().exit_code(),
            CallFailure::Load(_) => exit::LOAD,
        }
    }
}

/// Prints how a call ended — the report when asked for, else the output — and the
/// failure's line, and returns its exit code.
fn finish_call(report: Option<&toolhost::CallReport>, outcome: Result<&Value, CallFailure>) -> ExitCode {
    if let Some(call) = report {
        let mut json = serde_json::to_value(call).unwrap_or_else(|e| json!({ "report": e.to_string() }));
        if let Err(failure) = &outcome {
            json["error"] = json!({ "kind": failure.kind(), "message": failure.message() });
        }
        print_json(&json);
    }
    match outcome {
        Ok(output) => {
            if report.is_none() {
                print_json(output);
            }
            ExitCode::SUCCESS
        }
        Err(failure) => {
            eprintln!("error[{}]: {}", failure.kind(), Escaped(&failure.message()));
            ExitCode::from(failure.exit_code())
        }
    }
}

/// The call's input — the `--input` text, else stdin — or why it is not JSON, and its
/// size in bytes.
fn read_input(input: Option<String>) -> anyhow::Result<(Result<Value, String>, u64)> {
    let text = match input {
        Some(text) => text,
        None => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).context("reading the input from stdin")?;
            text
        }
    };
    // The parser stops at 128 levels, past the host's limit on nesting: such an input is
    // refused for its depth, as every front end refuses it.
    let parsed = serde_json::from_str(&text).map_err(|e| match e.to_string().starts_with("recursion limit exceeded") {
        true => toolhost::too_deep_reason(),
        false => format!("input is not JSON: {e}"),
    });
    Ok((parsed, text.len() as u64))
}

/// How much of a call's input the terminal question shows.
const QUESTION_INPUT_SHOWN: usize = 8192;

/// Who approves a call that needs approval, when no hook does: the person at the
/// terminal, asked on stderr and answering on stdin; nobody when stdin is not a terminal
/// (or carried the input), and then the call is denied.
fn terminal_approver(stdin_is_input: bool) -> toolhost::ApprovalHook {
    use futures::FutureExt;
    use toolhost::Approval;
    let at_terminal = !stdin_is_input && std::io::stdin().is_terminal();
    std::sync::Arc::new(move |request: toolhost::ApprovalRequest| {
        if !at_terminal {
            let reason = "nobody could be asked: stdin is not a terminal".to_owned();
            return futures::future::ready(Approval::Denied { reason }).boxed();
        }
        async move {
            let asked = tokio::task::spawn_blocking(move || {
                eprint!("{}\nRun it? [y/N] ", request.question(QUESTION_INPUT_SHOWN));
                let mut answer = String::new();
                std::io::stdin().read_line(&mut answer).map(|_| answer)
            })
            .await;
            match asked {
                Ok(Ok(answer)) if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") => {
                    Approval::Approved
                }
                _ => Approval::Denied { reason: "not approved at the terminal".into() },
            }
        }
        .boxed()
    })
}

/// `serve --http`: where, and how open.
struct HttpServe {
    addr: String,
    allow_hosts: Vec<String>,
    insecure_no_auth: bool,
}

async fn serve(options: HostOptions, dir: Option<PathBuf>, http: Option<HttpServe>) -> anyhow::Result<ExitCode> {
    let config = options.config()?;
    let (tokens, limits, approval_key) = (config.tokens.clone(), config.http.clone(), config.approval_key.clone());
    let host = options.build_from(config.clone(), dir, Lifetime::Serving).await?;
    for error in host.load_errors() {
        eprintln!("warning: {}", Escaped(&error.to_string()));
    }
    let _watch = host.watch(Duration::from_millis(100))?;
    // Without a watcher for it, the configuration still serves; only its edits wait for
    // a restart.
    let _config_watch = HostConfig::locate(options.config.as_deref()).and_then(|path| {
        config
            .watch(&host, &path, Duration::from_millis(100))
            .inspect_err(|e| {
                eprintln!("warning: {}; edits of it take effect at the next start", Escaped(&e.to_string()))
            })
            .ok()
    });
    match http {
        None => toolhost::serve::serve_stdio(host, options.caller).await?,
        Some(http) => {
            let listener = toolhost::serve::bind(&http.addr).await?;
            let http_options = toolhost::serve::HttpOptions {
                extra_allowed_hosts: http.allow_hosts,
                tokens,
                insecure_no_auth: http.insecure_no_auth,
                limits,
                approval_key,
            };
            http_options.check_exposure(listener.local_addr()?)?;
            eprintln!("serving MCP on http://{}{}", listener.local_addr()?, toolhost::serve::HTTP_PATH);
            let shutdown = toolhost::serve::shutdown_signal();
            toolhost::serve::serve_http_on(host, options.caller, listener, http_options, shutdown).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_json(value: &Value) {
    let json = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
    print_line(&toolhost::text::json_for_terminal(&json));
}

/// Writes a line to stdout. A reader that went away (`toolhost list | head`) fails
/// nothing: the command ends as it would have, its output dropped.
fn print_line(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = writeln!(stdout, "{text}").and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("error: cannot write to stdout: {e}");
    }
}
