//! The client's powers inside a tool (contract 0.1.3): content blocks, asking the person,
//! asking the client's model, log lines to the client — granted per component, narrowed
//! by policy, recorded, and held to the same rules for native tools.

use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use toolhost::{
    CallOptions, Caller, Client, ClientError, ClientPower, Content, ElicitAnswer, Layer, LogLevel, NativeTool, Policy,
    PolicyRule, SamplingReply, SamplingRequest, ToolHost,
};
use toolhost_tests::{ToolsDir, mcp_python, toolhost_bin};

/// The conformance toolbox under `conformance/`, with its manifest (`grants`), else none.
fn conformance_tools(manifest: Option<&str>) -> ToolsDir {
    let tools = ToolsDir::new();
    tools.install_conformance(manifest);
    tools
}

fn run_client(transport: &str, tools: &ToolsDir) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/client_powers.py");
    let output = Command::new(mcp_python())
        .arg(&script)
        .args([transport.as_ref(), toolhost_bin().as_os_str(), tools.path().as_os_str()])
        .output()
        .expect("run the Python MCP client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "client_powers.py {transport} failed ({}):\n{stderr}\n{stdout}", output.status);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("client_powers.py printed no JSON ({e}): {stdout}"))
}

/// What the official Python SDK must see on either transport.
fn assert_client_powers(seen: &Value) {
    let kinds = |key: &str| -> Vec<String> {
        seen[key]["blocks"].as_array().unwrap().iter().map(|b| b["type"].as_str().unwrap().to_owned()).collect()
    };
    assert_eq!(kinds("mixed"), ["text", "image", "resource"], "{}", seen["mixed"]);
    let image = &seen["mixed"]["blocks"][1];
    assert_eq!(image["mimeType"], "image/png");
    assert!(image["data"].as_str().unwrap().starts_with("iVBORw0KGgo"), "PNG bytes in base64: {image}");
    assert_eq!(seen["mixed"]["blocks"][2]["resource"]["text"], r#"{"test":"data","value":123}"#);
    assert_eq!(seen["audio"]["blocks"][0]["mimeType"], "audio/wav");

    // Sampling: the tool's prompt reached the model, its answer the tool.
    assert_eq!(seen["sampled"]["text"], "LLM response: the answer is four", "{}", seen["sampled"]);
    let sampled = &seen["answering"]["sampled"][0];
    assert_eq!(sampled["messages"][0]["content"]["text"], "what is 2+2?");
    assert_eq!(sampled["maxTokens"], 100);

    // Elicitation: the person saw the tool's question and form; accept, decline and a
    // client that cannot ask each reach the tool as such.
    let asked = &seen["answering"]["asked"][0];
    assert_eq!(asked["message"], "who are you?");
    assert_eq!(asked["schema"]["required"], json!(["username", "email"]));
    assert_eq!(
        seen["elicited"]["text"],
        r#"User response: action=accept, content={"email":"ada@example.com","username":"ada"}"#
    );
    assert_eq!(seen["declined"]["text"], "User response: action=decline", "{}", seen["declined"]);
    for (key, why) in [
        ("no_sampling", "unsupported: the client did not declare the sampling capability"),
        ("no_elicitation", "unsupported: the client did not declare the elicitation capability"),
    ] {
        assert_eq!(seen[key]["is_error"], true, "{key}: {}", seen[key]);
        assert!(seen[key]["text"].as_str().unwrap().contains(why), "{key}: {}", seen[key]);
    }

    // Log lines: the three of the tool, at the default level; none under `error`.
    let logged = seen["answering"]["logged"].as_array().unwrap();
    let lines: Vec<&str> = logged.iter().map(|l| l["data"].as_str().unwrap()).collect();
    assert_eq!(lines, ["Tool execution started", "Tool processing data", "Tool execution completed"]);
    assert!(logged.iter().all(|l| l["level"] == "info" && l["logger"] == "conformance/test_tool_with_logging"));
    assert_eq!(seen["quiet_logging"]["is_error"], false);
    assert_eq!(seen["declining"]["logged"], json!([]), "the client set `error`: no info lines");
}

#[test]
fn the_python_sdk_answers_and_declines_a_tools_questions_over_stdio() {
    let tools = conformance_tools(None);
    assert_client_powers(&run_client("stdio", &tools));
}

#[test]
fn the_python_sdk_answers_and_declines_a_tools_questions_in_an_http_session() {
    let tools = conformance_tools(None);
    assert_client_powers(&run_client("http", &tools));
}

/// The official TypeScript SDK over stdio: a client that declines the question,
/// answers the sampling request, gets the tool's log lines before its result and, once
/// it set its level to `warning`, no `info` line; a client that declared nothing gets
/// `unsupported`.
#[test]
fn the_typescript_sdk_declines_a_question_and_answers_sampling_over_stdio() {
    let tools = conformance_tools(None);
    let client = toolhost_tests::mcp_typescript_client();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/client_powers.mjs");
    std::fs::copy(&script, client.join("client_powers.mjs")).expect("copy client_powers.mjs");
    let output = Command::new("node")
        .arg(client.join("client_powers.mjs"))
        .arg(toolhost_bin())
        .arg(tools.path())
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client_powers.mjs failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.trim()).expect("client_powers.mjs prints JSON");
    assert_eq!(seen["asked"], json!(["name?"]));
    assert_eq!(seen["declined"]["text"], "User response: action=decline");
    assert_eq!(seen["sampled"], json!(["2+2?"]));
    assert_eq!(seen["sampled_result"]["text"], "LLM response: four");
    assert_eq!(seen["mixed"]["types"], json!(["text", "image", "resource"]));
    assert_eq!(seen["quiet"]["is_error"], false);
    let lines = json!(["Tool execution started", "Tool processing data", "Tool execution completed"]);
    assert_eq!(seen["lines_before_result"], lines, "over stdio every line arrives before the result");
    assert_eq!(seen["logged"], json!([]), "info lines stay below the client's `warning`");
    assert_eq!(seen["no_sampling"]["is_error"], true);
    assert!(seen["no_sampling"]["text"].as_str().unwrap().contains("did not declare the sampling capability"));
}

/// A client an embedder gives a call: it answers and remembers what it was asked.
#[derive(Default)]
struct RecordingClient {
    asked: Mutex<Vec<String>>,
    logged: Mutex<Vec<(LogLevel, String, String)>>,
}

impl Client for RecordingClient {
    fn elicit(&self, message: String, _schema: Value) -> BoxFuture<'static, Result<ElicitAnswer, ClientError>> {
        self.asked.lock().unwrap().push(message);
        futures::future::ready(Ok(ElicitAnswer::Accept(json!({"username": "bo", "email": "b@o"})))).boxed()
    }

    fn sample(&self, request: SamplingRequest) -> BoxFuture<'static, Result<SamplingReply, ClientError>> {
        self.asked.lock().unwrap().push(request.messages[0].1.clone());
        let reply = SamplingReply { text: "42".into(), model: "m".into(), stop_reason: None };
        futures::future::ready(Ok(reply)).boxed()
    }

    fn log(&self, level: LogLevel, logger: &str, message: &str) {
        self.logged.lock().unwrap().push((level, logger.to_owned(), message.to_owned()));
    }
}

async fn host_with(tools: &ToolsDir, policy: Policy) -> ToolHost {
    ToolHost::builder().root(tools.path()).policy(policy).build().await.expect("host")
}

fn with_client(client: &Arc<RecordingClient>) -> CallOptions {
    CallOptions { client: Some(client.clone()), ..CallOptions::default() }
}

/// Deny by default: without `[grants] client` a component's questions never reach the
/// client; a policy narrows a grant; the audit record names every request.
#[tokio::test]
async fn each_power_is_granted_by_the_manifest_and_narrowed_by_the_policy() {
    let client = Arc::new(RecordingClient::default());
    let ungranted = conformance_tools(Some("[limits]\ntimeout = \"10s\"\n"));
    let host = host_with(&ungranted, Policy::allow_all()).await;
    let report = host
        .call_with(&Caller::local(), "conformance/test_sampling", json!({"prompt": "hi"}), &with_client(&client))
        .await;
    let error = report.outcome.unwrap_err().to_string();
    assert!(error.contains("not granted: `sample` is not granted to conformance/test_sampling"), "{error}");
    assert_eq!(report.client_requests[0].outcome, "not_granted");
    let report =
        host.call_with(&Caller::local(), "conformance/test_tool_with_logging", json!({}), &with_client(&client)).await;
    assert!(report.outcome.is_ok());
    assert!(client.logged.lock().unwrap().is_empty(), "log lines need the grant too");
    assert!(client.asked.lock().unwrap().is_empty(), "nothing reached the client");

    let granted = conformance_tools(None);
    let narrowed = PolicyRule { client: Some(vec![ClientPower::Log]), ..PolicyRule::for_agent("intern").allow(["*"]) };
    let host = host_with(&granted, Policy::new(vec![narrowed, PolicyRule::for_agent("*").allow(["*"])])).await;
    let intern = Caller::new("intern");
    let refused = host
        .call_with(&intern, "conformance/test_elicitation", json!({"message": "name?"}), &with_client(&client))
        .await;
    assert!(refused.outcome.unwrap_err().to_string().contains("not granted: `elicit`"));
    let logged = host.call_with(&intern, "conformance/test_tool_with_logging", json!({}), &with_client(&client)).await;
    assert!(logged.outcome.is_ok());
    assert_eq!(logged.client_log_lines, 3);
    assert_eq!(
        client.logged.lock().unwrap()[0],
        (LogLevel::Info, "conformance/test_tool_with_logging".into(), "Tool execution started".into())
    );

    let mut records = host.subscribe_calls();
    let answered = host
        .call_with(
            &Caller::new("lead"),
            "conformance/test_elicitation",
            json!({"message": "name?"}),
            &with_client(&client),
        )
        .await;
    assert_eq!(
        answered.outcome.unwrap(),
        json!(r#"User response: action=accept, content={"email":"b@o","username":"bo"}"#)
    );
    assert_eq!(client.asked.lock().unwrap().as_slice(), ["name?"]);
    let record = records.recv().await.expect("an audit record");
    let requests = serde_json::to_value(&record.client_requests).unwrap();
    assert_eq!(requests[0]["power"], "elicit");
    assert_eq!(requests[0]["outcome"], "accept");

    // Without a client (a library call, the CLI) a granted question is `unsupported`.
    let alone = host
        .call_with(&Caller::new("lead"), "conformance/test_sampling", json!({"prompt": "x"}), &CallOptions::default())
        .await;
    assert!(alone.outcome.unwrap_err().to_string().contains("unsupported: the call does not come from an MCP client"));
}

/// Content blocks are bounded like outputs: past the tool's output limit the block is
/// refused, and the tool learns it.
#[tokio::test]
async fn content_blocks_count_against_the_output_limit() {
    let tools = conformance_tools(Some("[limits]\nmax_output = \"200 B\"\n"));
    let host = host_with(&tools, Policy::allow_all()).await;
    let small = host.call_detailed("conformance/test_image_content", json!({})).await;
    assert!(small.outcome.is_ok(), "{:?}", small.outcome);
    assert_eq!(small.content.len(), 1);
    // Providers get the image as they take it back.
    let anthropic = small.tool_result(toolhost::ExportFormat::Anthropic).unwrap();
    assert_eq!(anthropic["content"][0]["source"]["media_type"], "image/png");
    let openai = small.tool_result(toolhost::ExportFormat::OpenAi).unwrap();
    assert_eq!(openai["content"], "[image image/png, 70 bytes, not shown]");
    let mixed = host.call_detailed("conformance/test_multiple_content_types", json!({})).await;
    let error = mixed.outcome.unwrap_err().to_string();
    assert!(
        error.contains("the image block of 169 bytes") && error.contains("over its output limit of 200"),
        "{error}"
    );
    assert!(mixed.content.is_empty(), "a failed call shows its error alone: {:?}", mixed.content);
}

/// A native tool has the same powers through its call context, and its content blocks
/// reach the report like a component's.
#[tokio::test]
async fn a_native_tool_asks_the_client_and_shows_content() {
    let tool = NativeTool::new_with_context(
        "native/confirm",
        "Asks the person to confirm, then shows a picture.",
        json!({"type": "object"}),
        json!({"type": "string"}),
        |_input, context| async move {
            let form = json!({"type": "object", "properties": {"username": {"type": "string"}}});
            let answer =
                context.client.elicit("sure?", form).await.map_err(|e| toolhost::ToolError::Failed(e.to_string()))?;
            context.client.log(LogLevel::Warn, "asked");
            context
                .client
                .add_content(Content::image(vec![1, 2, 3], "image/png"))
                .map_err(toolhost::ToolError::Failed)?;
            Ok(json!(format!("{} said {answer:?}", context.caller.agent)))
        },
    )
    .unwrap();
    let host = ToolHost::builder().layer(Layer::native("app")).tool("app", tool).build().await.unwrap();
    let client = Arc::new(RecordingClient::default());
    let report = host.call_with(&Caller::new("ada"), "native/confirm", json!({}), &with_client(&client)).await;
    let output = report.outcome.unwrap();
    assert!(output.as_str().unwrap().starts_with("ada said Accept("), "{output}");
    assert_eq!(report.content, vec![Content::image(vec![1, 2, 3], "image/png")]);
    assert_eq!(client.logged.lock().unwrap()[0].2, "asked");

    let narrowed = PolicyRule { client: Some(vec![]), ..PolicyRule::for_agent("*").allow(["*"]) };
    host.set_policy(Policy::new(vec![narrowed]));
    let refused = host.call_with(&Caller::new("ada"), "native/confirm", json!({}), &with_client(&client)).await;
    assert!(refused.outcome.unwrap_err().to_string().contains("not granted: `elicit`"));
}

/// `toolhost call` keeps stdout for the output and names the content blocks on stderr;
/// it writes them to files only when asked (`--content-dir`).
#[test]
fn the_cli_names_content_blocks_and_writes_them_only_when_asked() {
    let tools = conformance_tools(None);
    let call = |extra: &[&std::ffi::OsStr]| {
        let output = Command::new(toolhost_bin())
            .arg("call")
            .arg(tools.path())
            .args(["conformance/test_multiple_content_types", "--input", "{}"])
            .args(extra)
            .output()
            .expect("run toolhost call");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        (String::from_utf8_lossy(&output.stdout).into_owned(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (stdout, stderr) = call(&[]);
    assert_eq!(stdout.trim(), "null", "stdout holds the output alone");
    assert!(stderr.contains("content 2/3: image (image/png), 70 bytes (--content-dir DIR writes it)"), "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let (_, stderr) = call(&["--content-dir".as_ref(), dir.path().as_os_str()]);
    let png = std::fs::read(dir.path().join("content-2.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() == 70, "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("content-1.txt")).unwrap(), "Multiple content types test:");
    let resource = std::fs::read_to_string(dir.path().join("content-3.json")).unwrap();
    assert_eq!(resource, r#"{"test":"data","value":123}"#, "an embedded JSON resource keeps its type");
}

/// A tool that floods its client with requests is cut off: the first
/// `MAX_REQUESTS_PER_CALL` reach the client and the record, the rest fail at once and
/// are only counted; an answer that does not match the form is refused.
#[tokio::test]
async fn a_tool_cannot_flood_its_client_and_answers_are_checked_against_the_form() {
    let tool = NativeTool::new_with_context(
        "native/nag",
        "Asks again and again.",
        json!({"type": "object"}),
        json!({"type": "array"}),
        |_input, context| async move {
            let mut outcomes = Vec::new();
            for _ in 0..toolhost::MAX_REQUESTS_PER_CALL + 6 {
                let form = json!({"type": "object", "properties": {"username": {"type": "string"}}});
                outcomes.push(match context.client.elicit("again?", form).await {
                    Ok(_) => "answered".to_owned(),
                    Err(error) => error.to_string(),
                });
            }
            let strict = json!({"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]});
            outcomes.push(
                context.client.elicit("age?", strict).await.map_or_else(|e| e.to_string(), |_| "answered".into()),
            );
            Ok(json!(outcomes))
        },
    )
    .unwrap();
    let host = ToolHost::builder().layer(Layer::native("app")).tool("app", tool).build().await.unwrap();
    let client = Arc::new(RecordingClient::default());
    let report = host.call_with(&Caller::local(), "native/nag", json!({}), &with_client(&client)).await;
    let outcomes = report.outcome.unwrap();
    let outcomes: Vec<&str> = outcomes.as_array().unwrap().iter().map(|o| o.as_str().unwrap()).collect();
    let max = toolhost::MAX_REQUESTS_PER_CALL;
    assert!(outcomes[..max].iter().all(|o| *o == "answered"), "{outcomes:?}");
    assert!(outcomes[max..].iter().all(|o| o.contains("made the 64 requests of its client")), "{outcomes:?}");
    assert_eq!(client.asked.lock().unwrap().len(), max, "no request past the bound reached the client");
    assert_eq!((report.client_requests.len(), report.client_requests_over), (max, 7));

    // Within the bound, an answer that breaks the form is the client's failure.
    let tool = NativeTool::new_with_context(
        "native/age",
        "Asks an age.",
        json!({"type": "object"}),
        json!({"type": "string"}),
        |_input, context| async move {
            let strict = json!({"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]});
            Ok(json!(context.client.elicit("age?", strict).await.map_or_else(|e| e.to_string(), |_| "answered".into())))
        },
    )
    .unwrap();
    let host = ToolHost::builder().layer(Layer::native("app")).tool("app", tool).build().await.unwrap();
    let refused = host.call_with(&Caller::local(), "native/age", json!({}), &with_client(&client)).await;
    let refused = refused.outcome.unwrap();
    assert!(refused.as_str().unwrap().starts_with("failed: the client's answer does not match the form"), "{refused}");
}
