//! Prompts and resources a toolbox declares in its manifest, and completions of their
//! arguments: served over MCP to the official Python SDK, hidden from agents that may not
//! call the toolbox, read through the toolbox's own tool for templates (a call, audited),
//! updated on reload, and checked when the manifest loads.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use toolhost::{Body, CallOptions, Caller, CompletionTarget, LoadErrorKind, OfferError, Policy, PolicyRule, ToolHost};
use toolhost_tests::{ToolsDir, mcp_python, toolhost_bin};

/// The conformance toolbox under `conformance/` with its shipped manifest, which
/// declares the suite's prompts and resources.
fn offering_tools() -> ToolsDir {
    let tools = ToolsDir::new();
    tools.install_conformance(None);
    tools
}

#[test]
fn the_python_sdk_gets_prompts_reads_resources_and_hears_of_updates_over_stdio() {
    let tools = offering_tools();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/prompts_resources.py");
    let output = Command::new(mcp_python())
        .arg(&script)
        .args([toolhost_bin().as_os_str(), tools.path().as_os_str()])
        .output()
        .expect("run the Python MCP client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "prompts_resources.py failed ({}):\n{stderr}\n{stdout}", output.status);
    let seen: Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    let session = &seen["session"];

    let capabilities = &session["capabilities"];
    assert_eq!(capabilities["resources"], json!({ "subscribe": true, "listChanged": true }));
    assert_eq!(capabilities["prompts"], json!({ "listChanged": true }));
    assert_eq!(capabilities["completions"], json!({}));
    let prompts: Vec<&str> =
        session["prompts"]["prompts"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        prompts,
        [
            "conformance.test_prompt_with_arguments",
            "conformance.test_prompt_with_embedded_resource",
            "conformance.test_prompt_with_image",
            "conformance.test_simple_prompt"
        ]
    );
    // Arguments are substituted once: a value that looks like a placeholder stays as sent.
    let text = &session["prompt"]["messages"][0]["content"]["text"];
    assert_eq!(text, "Prompt with arguments: arg1='{{arg2}}', arg2='two'");
    let image = &session["image_prompt"]["messages"][0]["content"];
    assert_eq!((&image["type"], &image["mimeType"]), (&json!("image"), &json!("image/png")));
    assert!(image["data"].as_str().unwrap().starts_with("iVBORw0KGgo"), "{image}");
    assert_eq!(session["missing_argument"]["code"], -32602, "{}", session["missing_argument"]);
    assert!(session["missing_argument"]["message"].as_str().unwrap().contains("`arg1` is required"));
    assert_eq!(session["unknown_prompt"]["code"], -32602);
    assert_eq!(
        session["completed"]["completion"],
        json!({ "values": ["test", "testValue1"], "total": 2, "hasMore": false })
    );

    let uris: Vec<&str> =
        session["resources"]["resources"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    assert_eq!(uris, ["test://static-binary", "test://static-text", "test://watched-resource"]);
    assert_eq!(session["templates"]["resourceTemplates"][0]["uriTemplate"], "test://template/{id}/data");
    assert_eq!(session["text"]["contents"][0]["text"], "This is the content of the static text resource.");
    assert!(session["binary"]["contents"][0]["blob"].as_str().unwrap().starts_with("iVBORw0KGgo"));
    // The template's variable is percent-decoded into the tool's input.
    let read: Value = serde_json::from_str(session["template"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(read, json!({ "id": "a b", "templateTest": true, "data": "Data for ID: a b" }));
    assert_eq!(session["template"]["contents"][0]["mimeType"], "application/json");
    assert_eq!(session["unknown_resource"]["code"], -32002);
    assert_eq!(session["unknown_subscription"]["code"], -32002);

    // An edited manifest reaches the subscriber as an update of that resource, and as a
    // change of the list, which shows its size; no prompt changed.
    assert_eq!(session["notified"], json!(["notifications/resources/list_changed", "updated test://watched-resource"]));
    assert_eq!(session["watched"]["contents"][0]["text"], "Watched resource content, edited.");
    let stateless = &seen["stateless"];
    assert_eq!(stateless["protocol"], "2026-07-28");
    assert_eq!(stateless["events"], json!(["ResourceUpdated(uri='test://watched-resource')"]));
    assert_eq!(stateless["watched_after"]["contents"][0]["text"], "Watched resource content, edited twice.");
}

#[tokio::test]
async fn an_agent_sees_the_prompts_and_resources_of_the_namespaces_it_may_call_and_a_template_read_is_a_call() {
    let tools = offering_tools();
    let audit = tempfile::NamedTempFile::new().unwrap();
    let policy = Policy::new(vec![
        PolicyRule::for_agent("intern").allow(["math/*"]),
        PolicyRule::for_agent("reader").allow(["conformance/*"]).deny(["conformance/test_template_data"]),
        PolicyRule::for_agent("lead").allow(["*"]),
    ]);
    let host = ToolHost::builder().root(tools.path()).policy(policy).audit_jsonl(audit.path()).build().await.unwrap();
    let (intern, reader, lead) = (Caller::new("intern"), Caller::new("reader"), Caller::new("lead"));
    let options = CallOptions::default();

    // The intern may call nothing of `conformance`: none of its prompts or resources exist for it.
    assert!(host.prompts(&intern).is_empty() && host.resources(&intern).is_empty());
    assert!(host.resource_templates(&intern).is_empty());
    let hidden = host.get_prompt(&intern, "conformance.test_simple_prompt", &BTreeMap::new()).unwrap_err();
    assert!(matches!(hidden, OfferError::PromptNotFound { .. }), "{hidden}");
    let unread = host.read_resource(&intern, "test://static-text", &options).await.unwrap_err();
    assert!(matches!(unread, OfferError::ResourceNotFound { .. }), "{unread}");
    let target = CompletionTarget::Prompt("conformance/test_prompt_with_arguments".into());
    let uncompleted = host.complete(&intern, &target, "arg1", "t").unwrap_err();
    assert!(matches!(uncompleted, OfferError::PromptNotFound { .. }), "{uncompleted}");
    assert!(!host.may_read_resource(&intern, "test://template/1/data"));

    // The lead sees them all and reads a template through its tool, as a call on the record.
    assert_eq!(host.prompts(&lead).len(), 4);
    assert_eq!(host.complete(&lead, &target, "arg1", "oth").unwrap().values, ["other"]);
    let fixed = host.read_resource(&lead, "test://static-binary", &options).await.unwrap();
    assert!(matches!(&fixed[0].body, Body::Blob(bytes) if bytes.starts_with(b"\x89PNG")));
    let read = host.read_resource(&lead, "test://template/42/data", &options).await.unwrap();
    assert!(matches!(&read[0].body, Body::Text(text) if text.contains("Data for ID: 42")), "{read:?}");
    let records: Vec<Value> = std::fs::read_to_string(audit.path())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let call = records.iter().find(|r| r["tool"] == "conformance/test_template_data").expect("the read is audited");
    assert_eq!((&call["caller"]["agent"], &call["outcome"]), (&json!("lead"), &json!("ok")), "{call}");

    // The reader sees the namespace, but its policy keeps the template's tool from it:
    // the template is neither listed nor read (nor does its tool's name leak), and the
    // namespace's fixed resources still are.
    assert!(host.resource_templates(&reader).is_empty());
    let template = CompletionTarget::ResourceTemplate("test://template/{id}/data".into());
    let uncompleted = host.complete(&reader, &template, "id", "").unwrap_err();
    assert!(matches!(uncompleted, OfferError::ResourceNotFound { .. }), "{uncompleted}");
    assert_eq!(host.complete(&lead, &template, "id", "").unwrap().values, Vec::<String>::new());
    assert!(!host.may_read_resource(&reader, "test://template/42/data"));
    let refused = host.read_resource(&reader, "test://template/42/data", &options).await.unwrap_err();
    assert!(matches!(refused, OfferError::ResourceNotFound { .. }), "{refused}");
    assert!(!refused.to_string().contains("test_template_data"), "{refused}");
    assert!(host.read_resource(&reader, "test://static-text", &options).await.is_ok());
}

#[tokio::test]
async fn a_manifest_s_prompts_and_resources_are_checked_when_it_loads() {
    let secret = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(secret.path(), "not for agents").unwrap();
    let absolute = format!("[[resources]]\nuri = \"docs://x\"\nname = \"x\"\nfile = \"{}\"\n", secret.path().display());
    let cases: [(&str, &str); 8] = [
        ("[[resources]]\nuri = \"docs://x\"\nname = \"x\"\nfile = \"../outside.txt\"\n", "not a path inside"),
        (&absolute, "not a path inside"),
        ("[[resources]]\nuri = \"docs://x\"\nname = \"x\"\nfile = \"link\"\n", "leads outside"),
        (
            "[[prompts]]\nname = \"p\"\ndescription = \"P.\"\nmessages = [{ text = \"{{who}}\" }]\n",
            "`{{who}}` names no argument",
        ),
        ("[[prompts]]\nname = \"p\"\ndescription = \" \"\nmessages = [{ text = \"x\" }]\n", "the description is empty"),
        ("[[resources]]\nuri_template = \"docs://{id}\"\nname = \"t\"\ntool = \"no_such_tool\"\n", "no such tool"),
        ("[[resources]]\nuri = \"no scheme\"\nname = \"x\"\ntext = \"x\"\n", "no spaces"),
        (
            "[[resources]]\nuri = \"docs://x\"\nname = \"x\"\ntext = \"x\"\n[[resources]]\nuri = \"docs://x\"\nname = \"y\"\ntext = \"y\"\n",
            "two resources have the URI",
        ),
    ];
    for (manifest, problem) in cases {
        let tools = offering_tools();
        let path = tools.install_conformance(Some(manifest));
        std::os::unix::fs::symlink(secret.path(), tools.path().join("conformance/link")).unwrap();
        let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
        let errors = host.load_errors();
        assert_eq!(errors.len(), 1, "{manifest}: {errors:?}");
        // A template's missing tool is the component's problem; the rest, the manifest's.
        let blamed = if problem == "no such tool" { path.with_extension("wasm") } else { path };
        assert_eq!(errors[0].path, blamed, "{manifest}");
        let shown = errors[0].to_string();
        assert!(shown.contains(problem), "{manifest}: {shown}");
        assert!(!shown.contains("not for agents"), "{shown}");
        assert!(matches!(errors[0].kind, LoadErrorKind::Manifest { .. } | LoadErrorKind::BadTool { .. }), "{shown}");
    }
}

#[tokio::test]
async fn a_file_a_resource_serves_is_read_again_when_it_changes() {
    let tools = ToolsDir::new();
    tools.install_conformance(Some(
        "[[resources]]\nuri = \"docs://readme\"\nname = \"readme\"\nmime_type = \"text/markdown\"\nfile = \"README.md\"\n",
    ));
    let readme = tools.write("conformance", "README.md", b"# Old");
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    let read = |host: ToolHost| async move {
        let contents = host.read_resource(&Caller::local(), "docs://readme", &CallOptions::default()).await.unwrap();
        match &contents[0].body {
            Body::Text(text) => text.to_string(),
            Body::Blob(_) => panic!("a Markdown file is text"),
        }
    };
    assert_eq!(read(host.clone()).await, "# Old");
    assert!(host.reload().await.is_empty(), "nothing changed, nothing reloaded");

    std::fs::write(&readme, "# New, and longer").unwrap();
    let change = host.reload().await;
    assert_eq!(change.resources_updated, ["docs://readme"], "{change:?}");
    assert!(change.resources_changed, "the listing shows the size: {change:?}");
    assert!(!change.prompts_changed, "{change:?}");
    assert_eq!(read(host.clone()).await, "# New, and longer");
}
