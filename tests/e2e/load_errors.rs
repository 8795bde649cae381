//! Components that cannot be served get a LoadError naming the file and the problem,
//! and every other component is still served.

use serde_json::json;
use toolhost::{Contract, LoadErrorKind, ToolHost};
use toolhost_tests::{ToolsDir, component};

async fn load(tools: &ToolsDir) -> (ToolHost, Vec<toolhost::LoadError>) {
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    let errors = host.load_errors();
    assert_eq!(
        host.call("math/add", json!({ "numbers": [2, 2] })).await.expect("the good component is served"),
        json!({ "value": 4.0 })
    );
    (host, errors)
}

fn only_error(errors: Vec<toolhost::LoadError>) -> toolhost::LoadError {
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors.into_iter().next().unwrap()
}

#[tokio::test]
async fn a_truncated_component_is_refused_by_name() {
    let tools = ToolsDir::with_examples();
    let bytes = std::fs::read(component("text")).unwrap();
    let path = tools.write("broken", "half.wasm", &bytes[..bytes.len() / 2]);
    let (_host, errors) = load(&tools).await;
    let error = only_error(errors);
    assert_eq!(error.path, path);
    assert!(matches!(error.kind, LoadErrorKind::Invalid(_)), "{error}");
    assert!(error.to_string().starts_with(&path.display().to_string()), "{error}");
}

#[tokio::test]
async fn corrupt_bytes_after_a_valid_preamble_are_refused() {
    let tools = ToolsDir::with_examples();
    let mut bytes = std::fs::read(component("json")).unwrap();
    for byte in bytes.iter_mut().skip(8).step_by(7) {
        *byte ^= 0x5a;
    }
    let path = tools.write("broken", "scrambled.wasm", &bytes);
    let (_host, errors) = load(&tools).await;
    let error = only_error(errors);
    assert_eq!(error.path, path);
    assert!(matches!(error.kind, LoadErrorKind::Invalid(_)), "{error}");
}

#[tokio::test]
async fn files_that_are_not_components_say_what_they_are() {
    let tools = ToolsDir::with_examples();
    // The smallest valid core module: magic number and version 1.
    let module = tools.write("broken", "module.wasm", b"\0asm\x01\0\0\0");
    let script = tools.write("broken", "script.wasm", b"#!/bin/sh\necho not wasm\n");
    let (_host, errors) = load(&tools).await;
    assert_eq!(errors.len(), 2, "{errors:?}");
    let module_error = errors.iter().find(|e| e.path == module).expect("module error");
    assert!(
        matches!(&module_error.kind, LoadErrorKind::NotAComponent(m) if m.contains("core WebAssembly module")),
        "{module_error}"
    );
    let script_error = errors.iter().find(|e| e.path == script).expect("script error");
    assert!(
        matches!(&script_error.kind, LoadErrorKind::NotAComponent(m) if m.contains("not WebAssembly")),
        "{script_error}"
    );
}

/// 0.1.1 added `host.progress`; a component built against 0.1.0 (its WIT frozen in the
/// guest) links against the same host interface and answers, its imports included.
#[tokio::test]
async fn a_component_of_the_first_contract_keeps_loading_and_answering() {
    let tools = ToolsDir::new();
    tools.install("first-contract", "first", "first");
    tools.manifest("first", "first", "[grants]\nconfig = { greeting = \"hi\" }\n");
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![]);
    let snapshot = host.snapshot();
    let component = snapshot.tools["first/greet"].source.component().expect("a component");
    assert_eq!(component.contract, Contract::Toolbox { version: "0.1.0".into() });
    let report = host.call_detailed("first/greet", json!({ "name": "Ada" })).await;
    assert_eq!(report.outcome, Ok(json!({ "greeting": "hi, Ada" })));
    assert_eq!(report.captured.log.len(), 1, "its host.log import works: {:?}", report.captured);
}

#[tokio::test]
async fn a_component_of_another_contract_version_is_refused_with_the_supported_ones() {
    let tools = ToolsDir::with_examples();
    let path = tools.install("future-contract", "future", "future");
    let (host, errors) = load(&tools).await;
    let error = only_error(errors);
    assert_eq!(error.path, path);
    assert_eq!(
        error.kind,
        LoadErrorKind::IncompatibleContract {
            wanted: "toolhost:tool@0.2.0".into(),
            supported: vec!["toolhost:tool@0.1.x".into()],
        }
    );
    assert!(
        error
            .to_string()
            .contains("built against contract toolhost:tool@0.2.0, but this host supports toolhost:tool@0.1.x")
    );
    assert!(host.call("future/noop", json!({})).await.is_err());
}

#[tokio::test]
async fn bad_namespace_names_are_reported_and_skipped() {
    let tools = ToolsDir::with_examples();
    let bytes = std::fs::read(component("text")).unwrap();
    tools.write("Bad Name", "text.wasm", &bytes);
    let (_host, errors) = load(&tools).await;
    let error = only_error(errors);
    assert!(matches!(&error.kind, LoadErrorKind::BadName(m) if m.contains("namespace name `Bad Name`")), "{error}");
}

#[tokio::test]
async fn a_missing_root_serves_nothing_without_failing() {
    let host = ToolHost::builder().root("/nonexistent/toolhost/root").build().await.unwrap();
    assert!(host.snapshot().tools.is_empty());
    assert!(host.load_errors().is_empty());
}
