//! Threads a client names in `_meta` (`toolhost/thread`): policy per thread over stdio,
//! over HTTP sessions and over stateless (2026-07-28) HTTP requests, the thread in the
//! audit record, and a thread named badly refused.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost_tests::wire::{HttpSession, StdioSession};
use toolhost_tests::{KilledOnDrop, ToolsDir, spawn_http_server, toolhost_bin};

const TOKEN: &str = "planner-thread-token-0123456789";

/// math and text tools; the planner may call math and text tools, but in a thread named
/// `review-*` only `math/add`.
fn threads_config() -> (ToolsDir, tempfile::TempDir, PathBuf) {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.install("text", "text", "text");
    let dir = tempfile::tempdir().unwrap();
    let digest: String = toolhost::serve::digest(TOKEN).iter().map(|b| format!("{b:02x}")).collect();
    let text = format!(
        "[audit]\njsonl = \"audit.jsonl\"\n\n\
         [[policy]]\nagent = \"planner\"\nsession = \"review-*\"\nallow = [\"math/add\"]\n\n\
         [[policy]]\nagent = \"planner\"\nallow = [\"math/*\", \"text/*\"]\n\n\
         [[token]]\nagent = \"planner\"\nsha256 = \"{digest}\"\n"
    );
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, text).unwrap();
    (tools, dir, config)
}

fn in_thread(thread: &str) -> Value {
    json!({ "toolhost/thread": thread })
}

fn names(listed: &Value) -> Vec<String> {
    let tools = listed["result"]["tools"].as_array().unwrap_or_else(|| panic!("{listed}"));
    let mut names: Vec<String> = tools.iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

#[test]
fn a_thread_named_in_meta_gets_its_policy_over_stdio() {
    let (tools, dir, config) = threads_config();
    let mut command = Command::new(toolhost_bin());
    command.arg("--config").arg(&config).args(["--agent", "planner", "serve"]).arg(tools.path());
    let mut session = StdioSession::start(command);
    let everything = names(&session.request("tools/list", json!({})));
    assert!(everything.contains(&"text.slugify".to_owned()) && everything.len() > 2, "{everything:?}");
    let review = names(&session.request("tools/list", json!({ "_meta": in_thread("review-7") })));
    assert_eq!(review, ["math.add"]);

    let params = |name: &str, arguments: Value, thread: &str| json!({ "name": name, "arguments": arguments, "_meta": in_thread(thread) });
    let added = session.request("tools/call", params("math.add", json!({ "numbers": [1, 2] }), "review-7"));
    assert_eq!(added["result"]["structuredContent"]["value"], 3.0, "{added}");
    let refused = session.request("tools/call", params("text.slugify", json!({ "text": "a b" }), "review-7"));
    assert_eq!(refused["error"]["message"], "unknown tool `text.slugify`", "{refused}");
    let served = session.request("tools/call", params("text.slugify", json!({ "text": "a b" }), "draft-1"));
    assert_eq!(served["result"]["structuredContent"]["slug"], "a-b", "{served}");

    for bad in [json!(7), json!(""), json!("a\nb"), json!("x".repeat(129))] {
        let refused = session.request("tools/list", json!({ "_meta": { "toolhost/thread": bad } }));
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains("toolhost/thread"), "{refused}");
    }

    // The audit record names the thread the call was made in.
    let started = Instant::now();
    let sessions_of_add = || {
        let text = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap_or_default();
        text.lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|record| record["requested"] == "math.add")
            .map(|record| record["caller"]["thread"].clone())
            .collect::<Vec<_>>()
    };
    while sessions_of_add() != [json!("review-7")] {
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", sessions_of_add());
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_thread_named_in_meta_gets_its_policy_in_http_sessions_and_stateless_requests() {
    let (tools, _dir, config) = threads_config();
    let mut command = Command::new(toolhost_bin());
    command.arg("--config").arg(&config).arg("serve").arg(tools.path()).args(["--http", "0"]);
    let (server, addr) = spawn_http_server(command).expect("toolhost serves");
    let _server = KilledOnDrop(server);
    HttpSession::wait_until_ready(&addr, None, Duration::from_secs(60));

    let list = |session: &mut HttpSession, params: Value, extra: &[(&str, &str)]| {
        let body = json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": params }).to_string();
        let response = session.request("POST", Some(body.as_bytes()), extra);
        response.messages().into_iter().find(|m| m["id"] == 5).unwrap_or_else(|| panic!("{response:?}"))
    };
    let mut session = HttpSession::start(&addr, "/mcp", Some(&format!("Bearer {TOKEN}")));
    assert!(names(&list(&mut session, json!({}), &[])).len() > 2);
    assert_eq!(names(&list(&mut session, json!({ "_meta": in_thread("review-9") }), &[])), ["math.add"]);

    // 2026-07-28: no session, each request carries its context, the thread among it.
    let mut stateless = HttpSession::connect(&addr, "/mcp");
    stateless.authorization = Some(format!("Bearer {TOKEN}"));
    let version = [("mcp-protocol-version", "2026-07-28"), ("mcp-method", "tools/list")];
    let meta = |thread: Option<&str>| {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "0" },
        });
        if let Some(thread) = thread {
            meta["toolhost/thread"] = json!(thread);
        }
        json!({ "_meta": meta })
    };
    assert_eq!(names(&list(&mut stateless, meta(Some("review-1")), &version)), ["math.add"]);
    assert!(names(&list(&mut stateless, meta(None), &version)).contains(&"text.slugify".to_owned()));
}
