//! An agent loop over toolhost, as an agent framework would embed it.
//!
//! 1. Start a host on a tools directory and the stdlib (for its `task/*` to-do list),
//!    plus one native Rust tool of the agent's own (`agent/remember`, in a layer above
//!    the directory's), and export every tool in OpenAI's function-calling format (what
//!    goes into the model request's `tools`).
//! 2. Take the model's reply. No model is reachable here, so the replies are scripted,
//!    in exactly the shape OpenAI's chat completions API returns `tool_calls`.
//! 3. Execute every tool call of a turn at once with `call_many`, on behalf of the
//!    agent and session, and turn each result (success or error) into a `tool` message
//!    for the next model request.
//! 4. Stop the host, start a new one, and open a new conversation: the to-do list the
//!    first conversation added to is still there, in the host's storage database
//!    (`toolhost paths` prints where), while the native tool's notes, kept in this
//!    process's memory, are gone. Run the example twice and the first `task__list` of
//!    the second run finds the first run's task.
//!
//! Run: `cargo xtask install-examples tools && cargo xtask stdlib && cargo run --release
//! -p toolhost --example agent_loop -- tools [STDLIB]` (STDLIB: the directory
//! `cargo xtask stdlib` installed into, by default the one `toolhost paths` prints).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolhost::{Caller, ExportFormat, Layer, NativeTool, ToolCall, ToolError, ToolHost};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Note {
    /// What to remember for the rest of the conversation.
    note: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Remembered {
    /// How many notes are kept now.
    notes: usize,
}

/// A native tool: plain Rust in the agent's process, under the host's policy,
/// validation, timeout and audit like the sandboxed tools.
fn remember_tool(notes: Arc<Mutex<Vec<String>>>) -> anyhow::Result<NativeTool> {
    let tool =
        NativeTool::typed("agent/remember", "Keeps a note for the rest of the conversation.", move |input: Note| {
            let notes = notes.clone();
            async move {
                if input.note.trim().is_empty() {
                    return Err(ToolError::InvalidInput("the note is empty".into()));
                }
                let mut notes = notes.lock().map_err(|_| ToolError::Failed("the notes are unavailable".into()))?;
                notes.push(input.note);
                Ok(Remembered { notes: notes.len() })
            }
        })?;
    Ok(tool)
}

/// What a model answered in the first conversation, turn by turn: the `message` of a
/// chat completion choice.
fn first_conversation() -> Vec<Value> {
    vec![
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                { "id": "call_0", "type": "function",
                  "function": { "name": "task__list", "arguments": "{}" } },
                { "id": "call_1", "type": "function",
                  "function": { "name": "math__evaluate", "arguments": "{\"expression\": \"(1200 * 1.08) - 96\"}" } },
                { "id": "call_2", "type": "function",
                  "function": { "name": "text__slugify", "arguments": "{\"text\": \"Quarterly Report: Q3 2026\"}" } },
                { "id": "call_5", "type": "function",
                  "function": { "name": "agent__remember", "arguments": "{\"note\": \"the report slug is for Q3\"}" } },
            ]
        }),
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                // A model mistake: a string where the schema wants numbers. The host
                // answers with a precise error the model can correct.
                { "id": "call_3", "type": "function",
                  "function": { "name": "math__add", "arguments": "{\"numbers\": \"1, 2, 3\"}" } },
                { "id": "call_4", "type": "function",
                  "function": { "name": "math__add", "arguments": "{\"numbers\": [1, 2, 3]}" } },
                { "id": "call_6", "type": "function",
                  "function": { "name": "task__create", "arguments":
                    "{\"title\": \"Publish the Q3 report\", \"due\": \"2026-12-01\", \"tags\": [\"report\"]}" } },
            ]
        }),
        json!({ "role": "assistant", "content": "The total is 1200, the slug is quarterly-report-q3-2026, \
            and publishing the report is on your to-do list for December 1." }),
    ]
}

/// The second conversation, on a new host: what is still to do?
fn second_conversation() -> Vec<Value> {
    vec![
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                { "id": "call_7", "type": "function",
                  "function": { "name": "task__list", "arguments": "{\"tag\": \"report\"}" } },
            ]
        }),
        json!({ "role": "assistant", "content": "Publishing the Q3 report is still open, due December 1." }),
    ]
}

/// Turns a model message's `tool_calls` into host calls. Malformed `arguments` text
/// becomes a call with the raw text, which the host rejects as invalid input.
fn tool_calls(message: &Value) -> Vec<ToolCall> {
    let Some(calls) = message["tool_calls"].as_array() else { return Vec::new() };
    calls
        .iter()
        .map(|call| {
            let arguments = call["function"]["arguments"].as_str().unwrap_or("{}");
            ToolCall {
                id: call["id"].as_str().unwrap_or_default().to_owned(),
                name: call["function"]["name"].as_str().unwrap_or_default().to_owned(),
                input: serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_owned())),
            }
        })
        .collect()
}

/// A host on the tools directory and the stdlib, with the agent's native tool on top.
/// Its storage is the default: the database under the user's data directory.
async fn start_host(tools_dir: &Path, stdlib_dir: &Path, notes: Arc<Mutex<Vec<String>>>) -> anyhow::Result<ToolHost> {
    let host = ToolHost::builder()
        .layer(Layer::native("agent"))
        .layer(Layer::directory("tools", tools_dir))
        .layer(Layer::stdlib(stdlib_dir.to_owned()))
        .tool("agent", remember_tool(notes)?)
        .build()
        .await?;
    for error in host.load_errors() {
        eprintln!("warning: {error}");
    }
    if host.snapshot().find("task/create").is_none() {
        anyhow::bail!("no task/* tools in {}: install the stdlib with `cargo xtask stdlib`", stdlib_dir.display());
    }
    Ok(host)
}

/// Runs the model's turns: each turn's tool calls at once, their results appended to
/// the conversation as `tool` messages, until a turn calls no tool.
async fn converse(host: &ToolHost, agent: &Caller, user: &str, turns: Vec<Value>) -> Vec<Value> {
    let mut conversation = vec![json!({ "role": "user", "content": user })];
    println!("\nuser: {user}");
    for message in turns {
        println!("\nmodel: {}", message);
        conversation.push(message.clone());
        let calls = tool_calls(&message);
        if calls.is_empty() {
            break;
        }
        for report in host.call_many(agent, calls).await {
            let content = match &report.outcome {
                Ok(output) => output.to_string(),
                Err(error) => json!({ "error": error.kind(), "message": error.to_string() }).to_string(),
            };
            println!("tool {} ({}): {content}", report.call_id.as_deref().unwrap_or("?"), report.requested);
            conversation.push(json!({ "role": "tool", "tool_call_id": report.call_id, "content": content }));
        }
    }
    conversation
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let tools_dir = PathBuf::from(args.next().unwrap_or_else(|| "tools".into()));
    let stdlib_dir = match args.next() {
        Some(dir) => PathBuf::from(dir),
        None => toolhost::paths::stdlib_dir().ok_or_else(|| anyhow::anyhow!("no stdlib directory: pass one"))?,
    };

    let notes = Arc::new(Mutex::new(Vec::new()));
    let host = start_host(&tools_dir, &stdlib_dir, notes.clone()).await?;
    let agent = Caller::new("example-agent").with_session("session-1");
    let tools = host.export(ExportFormat::OpenAi, &agent);
    println!("exported {} tools for the model request", tools.as_array().map_or(0, Vec::len));
    let conversation = converse(
        &host,
        &agent,
        "Price 1200 with 8% tax minus 96, a slug for the report title, and remind me to publish it by December 1.",
        first_conversation(),
    )
    .await;
    println!("\n{} messages in the conversation", conversation.len());
    println!("notes kept by the native tool: {:?}", notes.lock().map(|notes| notes.clone()).unwrap_or_default());
    drop(host);

    println!("\n== the host stops; a new one starts");
    let notes = Arc::new(Mutex::new(Vec::new()));
    let host = start_host(&tools_dir, &stdlib_dir, notes.clone()).await?;
    let agent = Caller::new("example-agent").with_session("session-2");
    let conversation = converse(&host, &agent, "What is left to do for the report?", second_conversation()).await;
    println!("\n{} messages in the conversation", conversation.len());
    println!("notes kept by the native tool: {:?}", notes.lock().map(|notes| notes.clone()).unwrap_or_default());
    Ok(())
}
