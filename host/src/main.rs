//! The `toolhost` command line: list, inspect and call tools.
//!
//! Results are JSON on stdout. A failure is one line on stderr and an exit code that
//! names its kind (see [`exit_code`]), so scripts can tell "bad input" from "tool
//! crashed" without parsing text.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use serde_json::{Value, json};
use toolhost::{
    CacheSetting, CallError, Caller, ErrorKind, ExportFormat, HostConfig, Layer, LoadProgress, LoadedComponent,
    ToolHost, ToolHostBuilder,
};

#[derive(Parser)]
#[command(name = "toolhost", version, about = "Host for AI-agent tools written as WebAssembly components")]
#[command(
    after_help = "Exit codes: 0 ok, 1 host error (configuration, I/O), 2 usage error, 3 not found, 4 permission denied, \
5 invalid input, 6 invalid output, 7 tool failed, 8 trap, 9 out of fuel, 10 timeout, \
11 memory limit, 12 output too large, 13 host could not run the call, 14 component failed to load."
)]
struct Cli {
    /// Log level for the host's own log on stderr (error, warn, info, debug, trace).
    #[arg(long, global = true, default_value = "warn", env = "TOOLHOST_LOG")]
    log: String,

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
    /// List the tools of the layers (or of DIR): layer, file, content hash, what each
    /// overrides, same-layer conflicts and load errors.
    List {
        /// A tools directory (`<namespace>/<component>.wasm`), as if given with --root.
        dir: Option<PathBuf>,
    },
    /// Show what a component offers and what it imports.
    Inspect {
        /// A component file (`.wasm`).
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
    },
    /// Create a tool project: one example tool (`NAME/greet`), its build command and a
    /// README on building, installing and calling it.
    New {
        /// The project's name, which is also its tools' namespace (`[a-z][a-z0-9]*`
        /// words joined by single `_` or `-`).
        name: String,
        /// rust, js, python or c.
        #[arg(long, default_value = "rust")]
        lang: toolhost::scaffold::Lang,
        /// Where to create it [default: ./NAME]; must be empty or missing.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

/// The process exit code for a call error; stable, documented in `--help`.
fn exit_code(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::NotFound => 3,
        ErrorKind::PermissionDenied => 4,
        ErrorKind::InputInvalid => 5,
        ErrorKind::OutputInvalid => 6,
        ErrorKind::Failed => 7,
        ErrorKind::Trap => 8,
        ErrorKind::OutOfFuel => 9,
        ErrorKind::Timeout => 10,
        ErrorKind::MemoryLimit => 11,
        ErrorKind::OutputTooLarge => 12,
        ErrorKind::Host => 13,
    }
}

const EXIT_LOAD_ERROR: u8 = 14;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(tracing_subscriber::EnvFilter::try_new(&cli.log).unwrap_or_else(|_| "warn".into()))
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let options = HostOptions {
        config: cli.config,
        roots: cli.roots,
        stdlib: cli.stdlib,
        cache_dir: cli.cache_dir,
        no_cache: cli.no_cache,
        caller: Caller::new(cli.agent),
    };
    match runtime.block_on(run(options, cli.command)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
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

impl HostOptions {
    fn config(&self) -> anyhow::Result<Option<HostConfig>> {
        Ok(match &self.config {
            Some(path) => Some(HostConfig::load(path)?),
            None if Path::new("toolhost.toml").is_file() => Some(HostConfig::load(Path::new("toolhost.toml"))?),
            None => None,
        })
    }

    /// A host serving the configured layers, or `dir` (and `--root`s) in their place.
    fn builder(&self, dir: Option<PathBuf>) -> anyhow::Result<ToolHostBuilder> {
        let config = self.config()?;
        let mut layers: Vec<Layer> = config.as_ref().map(|c| c.layers.clone()).unwrap_or_default();
        let roots: Vec<PathBuf> = dir.into_iter().chain(self.roots.iter().cloned()).collect();
        if !roots.is_empty() {
            layers = roots
                .into_iter()
                .enumerate()
                .map(|(i, root)| Layer {
                    name: if i == 0 { "project".into() } else { format!("layer{i}") },
                    root,
                    stdlib: false,
                })
                .collect();
        } else if layers.is_empty() {
            layers.push(Layer { name: "project".into(), root: PathBuf::from("tools"), stdlib: false });
        }
        if let Some(stdlib) = &self.stdlib {
            layers.retain(|layer| !layer.stdlib);
            layers.push(Layer { name: "stdlib".into(), root: stdlib.clone(), stdlib: true });
        }
        let mut builder = self.settings(config.as_ref());
        for layer in layers {
            builder = builder.layer(layer);
        }
        Ok(builder)
    }

    /// A host with the configuration's settings (limits, engine, cache) and no layers:
    /// inspecting one file loads nothing else.
    fn builder_without_layers(&self) -> anyhow::Result<ToolHostBuilder> {
        Ok(self.settings(self.config()?.as_ref()))
    }

    fn settings(&self, config: Option<&HostConfig>) -> ToolHostBuilder {
        let mut builder = match config {
            Some(config) => HostConfig { layers: Vec::new(), ..config.clone() }.builder(),
            None => ToolHost::builder(),
        };
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
        eprintln!("compiled {done}/{total}: {}", path.display());
    }
}

async fn run(options: HostOptions, command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::New { name, lang, dir } => {
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
        Command::List { dir } => {
            let host = options.builder(dir)?.build().await?;
            print_json(&list_json(&host));
            Ok(ExitCode::SUCCESS)
        }
        Command::Export { format, dir } => {
            let host = options.builder(dir)?.build().await?;
            print_json(&host.export(format, &options.caller));
            Ok(ExitCode::SUCCESS)
        }
        Command::Inspect { file } => {
            let host = options.builder_without_layers()?.build().await?;
            match host.inspect_file(&file).await {
                Ok(component) => {
                    print_json(&inspect_json(&component));
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    eprintln!("error[load]: {e}");
                    Ok(ExitCode::from(EXIT_LOAD_ERROR))
                }
            }
        }
        Command::Call { target, input, report } => {
            let (dir, name) = match <[String; 2]>::try_from(target) {
                Ok([dir, name]) => (Some(PathBuf::from(dir)), name),
                Err(mut target) => (None, target.pop().unwrap_or_default()),
            };
            let input_text = match input {
                Some(text) => text,
                None => {
                    let mut text = String::new();
                    std::io::stdin().read_to_string(&mut text).context("reading the input from stdin")?;
                    text
                }
            };
            let input: Value = match serde_json::from_str(&input_text) {
                Ok(input) => input,
                Err(e) => {
                    let error = CallError::InputInvalid {
                        tool: name.clone(),
                        violations: vec![toolhost::Violation {
                            pointer: String::new(),
                            reason: format!("input is not JSON: {e}"),
                        }],
                    };
                    return Ok(report_error(&error));
                }
            };
            let host = options.builder(dir)?.build().await?;
            for error in host.load_errors() {
                eprintln!("warning: {error}");
            }
            let call = host.call_detailed_as(&options.caller, None, &name, input).await;
            if report {
                print_json(&report_json(&call));
            }
            match call.outcome {
                Ok(output) => {
                    if !report {
                        print_json(&output);
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(error @ CallError::NotFound { .. }) => match failed_load_in_namespace(&host, &name) {
                    // The tool may well be in a file that did not load: say so, rather
                    // than "no such tool".
                    Some(load_error) => {
                        eprintln!("error[load]: no tool named `{name}` is served; {load_error}");
                        Ok(ExitCode::from(EXIT_LOAD_ERROR))
                    }
                    None => Ok(report_error(&error)),
                },
                Err(error) => Ok(report_error(&error)),
            }
        }
        Command::Serve { dir, http, allow_hosts } => {
            let host = options.builder(dir)?.build().await?;
            for error in host.load_errors() {
                eprintln!("warning: {error}");
            }
            let _watch = host.watch(Duration::from_millis(100))?;
            match http {
                None => toolhost::serve::mcp::serve_stdio(host, options.caller).await?,
                Some(addr) => {
                    let listener = toolhost::serve::http::bind(&addr).await?;
                    eprintln!("serving MCP on http://{}{}", listener.local_addr()?, toolhost::serve::http::HTTP_PATH);
                    let http_options = toolhost::serve::http::HttpOptions { extra_allowed_hosts: allow_hosts };
                    toolhost::serve::http::serve_http_on(
                        host,
                        options.caller,
                        listener,
                        http_options,
                        toolhost::serve::http::shutdown_signal(),
                    )
                    .await?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A load error of a component in the namespace of `name` (`ns/tool`, `ns__tool` or
/// `ns.tool`), which may be the component that would have served it.
fn failed_load_in_namespace(host: &ToolHost, name: &str) -> Option<toolhost::LoadError> {
    let full_name = if name.contains('/') { name.to_owned() } else { toolhost::serve::definitions::unmap(name)? };
    let (namespace, _tool) = toolhost::names::split(&full_name)?;
    host.load_errors()
        .into_iter()
        .find(|error| error.path.parent().and_then(|dir| dir.file_name()).is_some_and(|dir| dir == namespace))
}

fn report_error(error: &CallError) -> ExitCode {
    eprintln!("error[{}]: {error}", error.kind());
    ExitCode::from(exit_code(error.kind()))
}

fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string()));
}

fn list_json(host: &ToolHost) -> Value {
    let snapshot = host.snapshot();
    let tools: Vec<Value> = snapshot
        .tools
        .values()
        .map(|entry| {
            let def = entry.def();
            json!({
                "name": entry.full_name,
                "description": def.description,
                "layer": snapshot.layers[entry.layer].name,
                "file": entry.component.path,
                "hash": entry.component.hash,
                "overrides": entry.overrides,
            })
        })
        .collect();
    let errors: Vec<&toolhost::LoadError> = snapshot.load_errors().collect();
    json!({ "layers": snapshot.layers, "tools": tools, "conflicts": snapshot.conflicts, "errors": errors })
}

fn inspect_json(component: &LoadedComponent) -> Value {
    let tools: Vec<Value> = component
        .tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.input_schema.json(),
                "output_schema": tool.output_schema.json(),
            })
        })
        .collect();
    json!({
        "file": component.path,
        "hash": component.hash,
        "size_bytes": component.size,
        "compile_ms": component.compile_time.as_secs_f64() * 1000.0,
        "from_compile_cache": component.from_cache,
        "contract": format!("{}@{}", toolhost::contract::PACKAGE, component.contract_version),
        "manifest": component.manifest,
        "limits": component.limits,
        "requires_approval": component.requires_approval,
        "capabilities": capabilities_json(component),
        "imports": component.imports,
        "tools": tools,
    })
}

/// For each capability: whether the component imports the interfaces to ask for it, and
/// what its manifest grants. Config values are never shown, only their keys.
fn capabilities_json(component: &LoadedComponent) -> Value {
    let imports = |prefix: &str| component.imports.iter().any(|import| import.starts_with(prefix));
    let grants = &component.grants;
    json!({
        "filesystem": {
            "imported": imports("wasi:filesystem/"),
            "granted": grants.files.iter().map(|f| json!({
                "guest": f.guest,
                "host": f.host,
                "mode": if f.writable { "rw" } else { "ro" },
            })).collect::<Vec<_>>(),
        },
        "http": {
            "imported": imports("wasi:http/"),
            "granted": grants.network.iter().map(ToString::to_string).collect::<Vec<_>>(),
        },
        "environment": {
            "imported": imports("wasi:cli/environment"),
            "granted": grants.env.iter().map(|(name, _)| name).collect::<Vec<_>>(),
        },
        "config": {
            "imported": imports("toolhost:tool/host"),
            "granted": grants.config_keys().collect::<Vec<_>>(),
        },
        "sockets": {
            "imported": imports("wasi:sockets/"),
            "granted": "never: raw sockets are not granted in this version",
        },
    })
}

fn report_json(call: &toolhost::CallReport) -> Value {
    let (output, error) = match &call.outcome {
        Ok(output) => (output.clone(), Value::Null),
        Err(e) => (Value::Null, json!({ "kind": e.kind(), "message": e.to_string() })),
    };
    json!({
        "tool": call.tool,
        "component_hash": call.component_hash,
        "output": output,
        "error": error,
        "fuel_consumed": call.fuel_consumed,
        "duration_us": call.duration.as_micros() as u64,
        "input_bytes": call.input_bytes,
        "output_bytes": call.output_bytes,
        "captured": call.captured,
        "denied_requests": call.denied_requests,
    })
}
