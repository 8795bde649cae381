//! The `toolhost` command line: list, inspect and call tools.
//!
//! Results are JSON on stdout. A failure is one line on stderr and an exit code that
//! names its kind (see [`exit_code`]), so scripts can tell "bad input" from "tool
//! crashed" without parsing text.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use serde_json::{Value, json};
use toolhost::{CallError, ErrorKind, LoadedComponent, ToolHost};

#[derive(Parser)]
#[command(name = "toolhost", version, about = "Host for AI-agent tools written as WebAssembly components")]
#[command(after_help = "Exit codes: 0 ok, 1 usage or host error, 3 not found, 4 permission denied, \
5 invalid input, 6 invalid output, 7 tool failed, 8 trap, 9 out of fuel, 10 timeout, \
11 memory limit, 12 output too large, 13 host could not run the call, 14 component failed to load.")]
struct Cli {
    /// Log level for the host's own log on stderr (error, warn, info, debug, trace).
    #[arg(long, global = true, default_value = "warn", env = "TOOLHOST_LOG")]
    log: String,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List the tools of a tools directory (`<namespace>/<component>.wasm`).
    List {
        /// The tools directory.
        #[arg(default_value = "tools")]
        dir: PathBuf,
    },
    /// Show what a component offers and what it imports.
    Inspect {
        /// A component file (`.wasm`).
        file: PathBuf,
    },
    /// Call a tool with JSON input and print its JSON output.
    Call {
        /// The tools directory.
        dir: PathBuf,
        /// The tool's full name, `namespace/tool`.
        name: String,
        /// The input as JSON text; read from stdin when absent.
        #[arg(long, short)]
        input: Option<String>,
        /// Print the full call report (fuel, duration, captured output) instead of only
        /// the output.
        #[arg(long)]
        report: bool,
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
    match runtime.block_on(run(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

async fn run(command: Command) -> anyhow::Result<ExitCode> {
    match command {
        Command::List { dir } => {
            let host = ToolHost::builder().root(&dir).build().await?;
            print_json(&list_json(&host));
            Ok(ExitCode::SUCCESS)
        }
        Command::Inspect { file } => {
            let host = ToolHost::builder().build().await?;
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
        Command::Call { dir, name, input, report } => {
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
            let host = ToolHost::builder().root(&dir).build().await?;
            for error in host.load_errors() {
                eprintln!("warning: {error}");
            }
            let call = host.call_detailed(&name, input).await;
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
                Err(error) => Ok(report_error(&error)),
            }
        }
    }
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
    let errors: Vec<Value> =
        snapshot.load_errors().map(|e| json!({ "file": e.path, "error": e.kind.to_string() })).collect();
    json!({ "tools": tools, "conflicts": snapshot.conflicts, "errors": errors })
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
        "contract": format!("{}@{}", toolhost::contract::PACKAGE, component.contract_version),
        "imports": component.imports,
        "tools": tools,
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
    })
}
