//! `toolhost call`: one call of a tool, its output on stdout (or its full report), its failure as one line.

use std::io::{IsTerminal, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use futures::FutureExt;
use serde_json::{Value, json};
use toolhost::text::Escaped;
use toolhost::{
    Approval, ApprovalHook, ApprovalRequest, CallError, CallOptions, CallReport, Content, ResourceContents, ToolHost,
    Violation, exit,
};

use super::{HostOptions, Lifetime};
use crate::output::{fail, print_json};

#[derive(clap::Args)]
pub struct Args {
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
    /// Write the content blocks the tool shows (images, audio, text, resources) into
    /// this directory, one file each (`content-1.png`, …); without it they are only
    /// named on stderr, and stdout holds the output alone.
    #[arg(long, value_name = "DIR")]
    content_dir: Option<PathBuf>,
}

pub async fn run(options: &HostOptions, args: Args) -> anyhow::Result<ExitCode> {
    let (dir, name) = match <[String; 2]>::try_from(args.target) {
        Ok([dir, name]) => (Some(PathBuf::from(dir)), name),
        Err(mut target) => (None, target.pop().unwrap_or_default()),
    };
    let stdin_is_input = args.input.is_none();
    let (input, input_bytes) = read_input(args.input)?;
    let input = match input {
        Ok(input) => input,
        Err(reason) => {
            let violations = vec![Violation { pointer: String::new(), reason }];
            let error = CallError::InputInvalid { tool: name.clone(), violations };
            let call = CallReport::refused(options.caller.clone(), name, input_bytes, error.clone());
            return Ok(finish(args.report.then_some(&call), Err(Failure::Call(error))));
        }
    };
    let full_name = toolhost::names::unmap(&name).unwrap_or_else(|| name.clone());
    let split = toolhost::names::split(&full_name);
    let host = build_for(options, dir.clone(), split).await?;
    let namespace = split.map(|(namespace, _)| namespace.to_owned());
    let call_options = CallOptions { approver: Some(terminal_approver(stdin_is_input)), ..Default::default() };
    let call = host.call_with(&options.caller, &name, input, &call_options).await;
    if call.outcome.is_ok() && !call.content.is_empty() {
        show_content(&call.content, args.content_dir.as_deref())?;
    }
    let outcome = match (&call.outcome, &call.hidden_because) {
        (Ok(output), _) => Ok(output),
        // The operator at the terminal is told why the agent was told "not found".
        (Err(error), Some(reason)) => {
            Err(Failure::Hidden(error.clone(), format!("it is hidden from {}: {reason}", options.caller)))
        }
        (Err(error @ CallError::NotFound { .. }), None) => {
            Err(not_found(options, &host, (dir, namespace.is_some()), &name, error).await?)
        }
        (Err(error), None) => Err(Failure::Call(error.clone())),
    };
    Ok(finish(args.report.then_some(&call), outcome))
}

/// A one-shot host that loads only what the call needs, when the name says its
/// namespace: the files of that namespace (every layer of it) that may offer the tool.
/// A call waits for no other component.
async fn build_for(
    options: &HostOptions,
    dir: Option<PathBuf>,
    name: Option<(&str, &str)>,
) -> anyhow::Result<ToolHost> {
    let mut builder = options.builder_from(options.config()?, dir, Lifetime::OneShot);
    if let Some((namespace, tool)) = name {
        builder = builder.only_tool(namespace, tool);
    }
    Ok(builder.build().await?)
}

/// Why a name is not found: the file that would hold the tool did not load, or there is
/// no such tool (with the close matches among all the tools, when only the name's
/// namespace was loaded).
async fn not_found(
    options: &HostOptions,
    host: &ToolHost,
    (dir, one_namespace): (Option<PathBuf>, bool),
    name: &str,
    error: &CallError,
) -> anyhow::Result<Failure> {
    if let Some(load_error) = host.snapshot().load_error_in_namespace_of(name) {
        return Ok(Failure::Load(format!("no tool named `{name}` is served; {load_error}")));
    }
    if !one_namespace {
        return Ok(Failure::Call(error.clone()));
    }
    let everything = options.build(dir, Lifetime::OneShot).await?;
    Ok(Failure::Call(everything.describe(&options.caller, name).err().unwrap_or_else(|| error.clone())))
}

/// Why `toolhost call` failed. Its kind is said once and agrees everywhere: the
/// `error[KIND]` line, the exit code and the `--report` JSON's `error.kind`.
enum Failure {
    /// The call's own error.
    Call(CallError),
    /// The tool is hidden from the caller, who is told it does not exist; the operator
    /// is told why.
    Hidden(CallError, String),
    /// No such tool is served because the file that would hold it did not load.
    Load(String),
}

impl Failure {
    fn kind(&self) -> &'static str {
        match self {
            Failure::Call(error) | Failure::Hidden(error, _) => error.kind().as_str(),
            Failure::Load(_) => "load",
        }
    }

    fn message(&self) -> String {
        match self {
            Failure::Call(error) => error.to_string(),
            Failure::Hidden(error, why) => format!("{error} ({why})"),
            Failure::Load(message) => message.clone(),
        }
    }

    fn exit_code(&self) -> u8 {
        match self {
            Failure::Call(error) | Failure::Hidden(error, _) => error.kind().exit_code(),
            Failure::Load(_) => exit::LOAD,
        }
    }
}

/// Prints how a call ended — the report when asked for, else the output — and the
/// failure's line, and returns its exit code.
fn finish(report: Option<&CallReport>, outcome: Result<&Value, Failure>) -> ExitCode {
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
        Err(failure) => fail(failure.kind(), &failure.message(), failure.exit_code()),
    }
}

/// Names each content block on stderr, and writes it to `dir` when given.
fn show_content(blocks: &[Content], dir: Option<&std::path::Path>) -> anyhow::Result<()> {
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    for (index, block) in blocks.iter().enumerate() {
        let (bytes, extension, what) = content_file(block);
        let shown = format!("content {}/{}: {what}, {} bytes", index + 1, blocks.len(), bytes.len());
        match dir {
            None => eprintln!("{} (--content-dir DIR writes it)", Escaped(&shown)),
            Some(dir) => {
                let path = dir.join(format!("content-{}.{extension}", index + 1));
                std::fs::write(&path, &bytes).with_context(|| format!("writing {}", path.display()))?;
                eprintln!("{} -> {}", Escaped(&shown), Escaped(&path.display().to_string()));
            }
        }
    }
    Ok(())
}

/// A block's bytes as a file holds them, the file's extension, and what it is.
fn content_file(block: &Content) -> (Vec<u8>, &'static str, String) {
    match block {
        Content::Text(text) => (text.clone().into_bytes(), "txt", "text".to_owned()),
        Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
            (data.clone(), extension(mime_type), format!("{} ({mime_type})", block.kind()))
        }
        Content::Resource { uri, mime_type, contents } => {
            let mime = mime_type.as_deref().unwrap_or("");
            let (bytes, fallback) = match contents {
                ResourceContents::Text(text) => (text.clone().into_bytes(), "txt"),
                ResourceContents::Blob(data) => (data.clone(), "bin"),
            };
            let extension = if mime.is_empty() { fallback } else { extension(mime) };
            (bytes, extension, format!("resource {uri}"))
        }
        Content::ResourceLink { uri, .. } => {
            (serde_json::to_vec_pretty(&block.to_mcp()).unwrap_or_default(), "json", format!("link to {uri}"))
        }
    }
}

/// The usual file extension of a media type; `bin` for one not known.
fn extension(mime_type: &str) -> &'static str {
    match mime_type.split(';').next().unwrap_or("").trim() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "text/plain" => "txt",
        "text/markdown" => "md",
        "text/html" => "html",
        "application/json" => "json",
        _ => "bin",
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
fn terminal_approver(stdin_is_input: bool) -> ApprovalHook {
    let at_terminal = !stdin_is_input && std::io::stdin().is_terminal();
    std::sync::Arc::new(move |request: ApprovalRequest| {
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
