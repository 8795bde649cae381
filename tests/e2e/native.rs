//! Native Rust tools registered by an embedder: served beside component tools, in a
//! layer of the embedder's choosing, through the same pipeline (policy, approval, input
//! and output validation, timeout, audit), added, replaced and removed at run time.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::FutureExt;
use serde_json::{Value, json};
use toolhost::{
    Approval, ApprovalHook, CallError, Caller, ExportFormat, Layer, NativeTool, NativeToolError, Policy, PolicyRule,
    SourceKind, ToolDefError, ToolError, ToolHost, ToolProblem,
};
use toolhost_tests::{ToolsDir, next_change};

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct City {
    name: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Weather {
    city: String,
    celsius: f64,
}

/// `weather/now`, counting the calls that reach its body.
fn weather(calls: Arc<AtomicUsize>) -> NativeTool {
    NativeTool::typed("weather/now", "Current temperature in a city.", move |city: City| {
        calls.fetch_add(1, Ordering::SeqCst);
        async move {
            match city.name.as_str() {
                "" => Err(ToolError::InvalidInput("the city has no name".into())),
                "Atlantis" => Err(ToolError::Failed("no station under water".into())),
                _ => Ok(Weather { city: city.name, celsius: 21.5 }),
            }
        }
    })
    .expect("a valid native tool")
}

/// A raw-schema tool whose body does whatever the input says.
fn misbehaving() -> NativeTool {
    let input = json!({ "type": "object", "properties": { "do": { "enum": ["sleep", "panic", "lie", "big"] } },
                        "required": ["do"], "additionalProperties": false });
    let output = json!({ "type": "object", "properties": { "ok": { "type": "boolean" } }, "required": ["ok"] });
    NativeTool::new(
        "weather/misbehave",
        "Sleeps, panics, lies about its output or answers too much.",
        input,
        output,
        |input: Value| async move {
            match input["do"].as_str() {
                Some("sleep") => {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    Ok(json!({ "ok": true }))
                }
                Some("panic") => panic!("a bug in the embedder's tool"),
                Some("lie") => Ok(json!({ "ok": "yes" })),
                _ => Ok(json!({ "ok": true, "padding": "x".repeat(2 << 20) })),
            }
        },
    )
    .expect("a valid native tool")
    .with_timeout(Duration::from_millis(300))
}

/// A host with a native layer above a directory of the example tools.
async fn host_with_natives(calls: Arc<AtomicUsize>) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::with_examples();
    let host = ToolHost::builder()
        .layer(Layer::native("app"))
        .layer(Layer::directory("tools", tools.path()))
        .tool("app", weather(calls))
        .tool("app", misbehaving())
        .build()
        .await
        .expect("host builds");
    (tools, host)
}

#[tokio::test]
async fn native_tools_are_served_listed_and_exported_beside_component_tools() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (_tools, host) = host_with_natives(calls.clone()).await;
    let listed = host.list(&Caller::local());
    let weather = listed.iter().find(|t| t.name == "weather/now").expect("listed");
    assert_eq!(weather.source, SourceKind::Native);
    assert_eq!((weather.layer.as_str(), weather.file.as_ref(), weather.component_hash.as_ref()), ("app", None, None));
    assert_eq!(weather.input_schema["required"], json!(["name"]));
    assert!(listed.iter().any(|t| t.name == "math/add" && t.source == SourceKind::Component));

    let mcp = host.export(ExportFormat::Mcp, &Caller::local());
    assert!(mcp["tools"].as_array().unwrap().iter().any(|t| t["name"] == "weather.now"));
    assert_eq!(
        host.call("weather__now", json!({ "name": "Lisbon" })).await,
        Ok(json!({ "city": "Lisbon", "celsius": 21.5 }))
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn native_calls_go_through_validation_and_report_their_failures() {
    let calls = Arc::new(AtomicUsize::new(0));
    let (_tools, host) = host_with_natives(calls.clone()).await;
    let invalid = host.call("weather/now", json!({ "name": 7 })).await.unwrap_err();
    assert!(matches!(invalid, CallError::InputInvalid { .. }), "{invalid:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "input that breaks the schema never reaches the function");

    let refused = host.call("weather/now", json!({ "name": "" })).await.unwrap_err();
    assert_eq!(refused.to_string(), "invalid input for `weather/now`: at (root): the city has no name");
    let failed = host.call("weather/now", json!({ "name": "Atlantis" })).await.unwrap_err();
    assert_eq!(failed, CallError::Failed { tool: "weather/now".into(), message: "no station under water".into() });

    let lie = host.call("weather/misbehave", json!({ "do": "lie" })).await.unwrap_err();
    assert!(matches!(&lie, CallError::OutputInvalid { violations, .. } if violations[0].pointer == "/ok"), "{lie:?}");
    let big = host.call("weather/misbehave", json!({ "do": "big" })).await.unwrap_err();
    assert!(matches!(big, CallError::OutputTooLarge { limit, .. } if limit == 1 << 20), "{big:?}");
}

#[tokio::test]
async fn a_native_tool_is_held_to_its_timeout_and_a_panic_costs_only_its_call() {
    let (_tools, host) = host_with_natives(Arc::default()).await;
    let started = std::time::Instant::now();
    let slow = host.call("weather/misbehave", json!({ "do": "sleep" })).await.unwrap_err();
    assert_eq!(slow, CallError::Timeout { tool: "weather/misbehave".into(), limit: Duration::from_millis(300) });
    assert!(started.elapsed() < Duration::from_secs(5), "stopped at its limit: {:?}", started.elapsed());

    let panicked = host.call("weather/misbehave", json!({ "do": "panic" })).await.unwrap_err();
    assert!(matches!(panicked, CallError::Host { .. }), "{panicked:?}");
    assert_eq!(host.call("math/add", json!({ "numbers": [1, 2] })).await, Ok(json!({ "value": 3.0 })));
    assert!(host.call("weather/now", json!({ "name": "Oslo" })).await.is_ok(), "the host keeps serving");
}

#[tokio::test]
async fn policy_approval_and_audit_apply_to_native_tools() {
    let calls = Arc::new(AtomicUsize::new(0));
    let tools = ToolsDir::new();
    let approvals = Arc::new(AtomicUsize::new(0));
    let seen = approvals.clone();
    let hook: ApprovalHook = Arc::new(move |request| {
        seen.fetch_add(1, Ordering::SeqCst);
        let approved = request.input["name"] != "Moscow";
        async move { if approved { Approval::Approved } else { Approval::Denied { reason: "not there".into() } } }
            .boxed()
    });
    let host = ToolHost::builder()
        .layer(Layer::native("app"))
        .layer(Layer::directory("tools", tools.path()))
        .tool("app", weather(calls.clone()).requiring_approval())
        .policy(Policy::new(vec![PolicyRule::for_agent("planner").allow(["weather/*"]), PolicyRule::for_agent("*")]))
        .approval_hook(hook)
        .build()
        .await
        .unwrap();
    let mut records = host.subscribe_calls();
    let stranger = host.call_as(&Caller::new("stranger"), "weather/now", json!({ "name": "Rome" })).await;
    assert!(matches!(stranger, Err(CallError::NotFound { .. })), "hidden from the stranger: {stranger:?}");
    let planner = Caller::new("planner");
    assert!(host.call_as(&planner, "weather/now", json!({ "name": "Rome" })).await.is_ok());
    let denied = host.call_as(&planner, "weather/now", json!({ "name": "Moscow" })).await.unwrap_err();
    assert!(denied.to_string().contains("approval denied: not there"), "{denied}");
    assert_eq!((approvals.load(Ordering::SeqCst), calls.load(Ordering::SeqCst)), (2, 1));

    let outcomes: Vec<String> =
        (0..3).map(|_| records.try_recv().expect("a record per call").outcome.clone()).collect();
    assert_eq!(outcomes, ["permission_denied", "ok", "permission_denied"]);
}

#[tokio::test]
async fn tools_are_added_replaced_and_removed_at_run_time_and_subscribers_hear_of_it() {
    let tools = ToolsDir::with_examples();
    let host = ToolHost::builder()
        .layer(Layer::native("override"))
        .layer(Layer::directory("tools", tools.path()))
        .layer(Layer::native("fallback"))
        .build()
        .await
        .unwrap();
    let mut changes = host.subscribe();

    let change = host.add_tool("fallback", weather(Arc::default())).await.unwrap();
    assert_eq!(change.added, vec!["weather/now"]);
    assert_eq!(next_change(&mut changes, 5).await.added, vec!["weather/now"]);
    assert!(host.call("weather/now", json!({ "name": "Rome" })).await.is_ok());

    // A native tool in a higher layer shadows a component tool of the same name.
    let sum = NativeTool::new(
        "math/add",
        "Adds, natively.",
        json!({ "type": "object" }),
        json!({ "type": "object" }),
        |_input| async { Ok(json!({ "native": true })) },
    )
    .unwrap();
    let change = host.add_tool("override", sum).await.unwrap();
    assert_eq!(change.changed, vec!["math/add"]);
    assert_eq!(host.call("math/add", json!({ "numbers": [1] })).await, Ok(json!({ "native": true })));
    let entry = host.snapshot().tools["math/add"].clone();
    assert_eq!(entry.source.kind(), SourceKind::Native);
    assert_eq!(entry.overrides[0].layer, "tools");
    assert_eq!(entry.overrides[0].source, SourceKind::Component);

    // Replacing answers with the new function; removing brings the component back.
    let replacement = NativeTool::new("math/add", "Adds.", json!({}), json!({}), |_| async { Ok(json!(2)) }).unwrap();
    host.add_tool("override", replacement).await.unwrap();
    assert_eq!(host.call("math/add", json!({})).await, Ok(json!(2)));
    let change = host.remove_tool("override", "math/add").await.expect("it was there");
    assert_eq!(change.changed, vec!["math/add"]);
    assert_eq!(host.call("math/add", json!({ "numbers": [1, 2] })).await, Ok(json!({ "value": 3.0 })));
    assert!(host.remove_tool("override", "math/add").await.is_none(), "nothing left to remove");
    assert_eq!(
        host.add_tool("nowhere", weather(Arc::default())).await.unwrap_err(),
        NativeToolError::NoSuchLayer("nowhere".into())
    );
}

#[test]
fn bad_names_and_schemas_are_refused_when_the_tool_is_made() {
    let noop = |_: Value| async { Ok(Value::Null) };
    let error = NativeTool::new("no-namespace", "", json!({}), json!({}), noop).unwrap_err();
    assert!(error.to_string().contains("namespace/tool"), "{error}");
    let error = NativeTool::new("Bad/Name", "", json!({}), json!({}), noop).unwrap_err();
    assert!(
        matches!(error, NativeToolError::Definition(ToolDefError::Tool { problem: ToolProblem::Name(_), .. })),
        "{error}"
    );
    let error = NativeTool::new("ok/name", "", json!({ "type": 12 }), json!({}), noop).unwrap_err();
    assert!(error.to_string().contains("input schema"), "{error}");
}

/// Over MCP (the official TypeScript SDK on Streamable HTTP, served in this process):
/// a native tool is listed and called, and adding one at run time reaches the client as
/// `notifications/tools/list_changed`.
#[tokio::test]
async fn mcp_clients_see_native_tools_and_hear_when_one_is_added() {
    use std::io::BufRead;
    let (_tools, host) = host_with_natives(Arc::default()).await;
    let listener = toolhost::serve::bind("0").await.unwrap();
    let url = format!("http://{}{}", listener.local_addr().unwrap(), toolhost::serve::HTTP_PATH);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(toolhost::serve::serve_http_on(
        host.clone(),
        Caller::local(),
        listener,
        toolhost::serve::HttpOptions::default(),
        async move {
            let _ = stopped.await;
        },
    ));
    let client = toolhost_tests::mcp_typescript_client();
    let calls = json!([{ "name": "weather.now", "arguments": { "name": "Porto" } }]);
    let mut child = std::process::Command::new("node")
        .arg(client.join("client.mjs"))
        .args(["http", &url])
        .env("TOOLHOST_CALLS", calls.to_string())
        .env("TOOLHOST_AWAIT_LIST_CHANGED", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run node");
    let stderr = child.stderr.take().unwrap();
    let listening = tokio::task::spawn_blocking(move || {
        std::io::BufReader::new(stderr).lines().map_while(Result::ok).any(|line| line == "listening")
    });
    assert!(listening.await.unwrap(), "the client lists, calls, then listens");
    let added =
        NativeTool::new("weather/forecast", "Tomorrow.", json!({}), json!({}), |_| async { Ok(json!({})) }).unwrap();
    host.add_tool("app", added).await.unwrap();
    let output = tokio::task::spawn_blocking(move || child.wait_with_output()).await.unwrap().unwrap();
    assert!(output.status.success(), "client.mjs failed: {}", String::from_utf8_lossy(&output.stdout));
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(seen["tools"].as_array().unwrap().contains(&json!("weather.now")), "{seen}");
    assert_eq!(seen["results"][0]["structured"], json!({ "city": "Porto", "celsius": 21.5 }));
    assert!(seen["tools_after_change"].as_array().unwrap().contains(&json!("weather.forecast")), "{seen}");
    let _ = stop.send(());
    server.await.unwrap().unwrap();
}

/// A native tool made with `new_with_caller` learns the agent and session of each call;
/// one made with `new` cannot ask.
#[tokio::test]
async fn a_native_tool_with_the_caller_learns_who_calls() {
    let whoami = NativeTool::new_with_caller(
        "agent/whoami",
        "Who is calling.",
        json!({ "type": "object", "additionalProperties": false }),
        json!({ "type": "object" }),
        |_input, caller: Caller| async move { Ok(json!({ "agent": caller.agent, "session": caller.session })) },
    )
    .expect("a valid tool");
    let host = ToolHost::builder().layer(Layer::native("agent")).tool("agent", whoami).build().await.unwrap();
    let alice = Caller::new("alice").with_session("thread-7");
    assert_eq!(
        host.call_as(&alice, "agent/whoami", json!({})).await.unwrap(),
        json!({ "agent": "alice", "session": "thread-7" })
    );
    assert_eq!(host.call("agent/whoami", json!({})).await.unwrap(), json!({ "agent": "local", "session": null }));
}
