//! Components written for other hosts (wassette, Spin, wasmCloud): their configuration
//! through `wasi:config/store` as the manifest grants it, an import toolhost lacks named
//! with what it has instead, and wassette's `policy.yaml` turned into a manifest.

use std::process::{Command, Output};

use serde_json::{Value, json};
use toolhost::ToolHost;
use toolhost_tests::{ToolsDir, toolhost_bin};

/// `toolhost ARGS…` over `tools`, with `env` set for the host process.
fn toolhost(tools: &ToolsDir, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(toolhost_bin());
    command.current_dir(tools.path()).args(args).arg("--root").arg(tools.path());
    command.env_remove("OPENWEATHER_API_KEY").envs(env.iter().copied());
    command.output().expect("run toolhost")
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
    })
}

#[tokio::test]
async fn configuration_reaches_wasi_config_only_as_granted() {
    let tools = ToolsDir::new();
    tools.install("plain_config", "cfg", "settings");
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    assert_eq!(host.load_errors(), vec![]);
    // Deny by default: no manifest, no configuration.
    assert_eq!(host.call("cfg/setting", json!({ "key": "units" })).await, Ok(Value::Null));
    assert_eq!(host.call("cfg/keys", json!({})).await, Ok(json!([])));

    std::fs::write(tools.path().join("api-key.txt"), "s3cr3t-key\n").unwrap();
    let manifest = "[grants]\nconfig = { units = \"metric\", retries = 3, api_key = { file = \"../api-key.txt\" } }\n";
    tools.manifest("cfg", "settings", manifest);
    host.reload().await;
    assert_eq!(host.load_errors(), vec![]);
    assert_eq!(host.call("cfg/setting", json!({ "key": "units" })).await, Ok(json!("metric")));
    assert_eq!(host.call("cfg/setting", json!({ "key": "retries" })).await, Ok(json!("3")));
    assert_eq!(host.call("cfg/setting", json!({ "key": "api_key" })).await, Ok(json!("s3cr3t-key")));
    assert_eq!(host.call("cfg/setting", json!({ "key": "other" })).await, Ok(Value::Null));
    // The release candidate's interface reads the same values.
    assert_eq!(host.call("cfg/setting-rc", json!({ "key": "units" })).await, Ok(json!("metric")));
    assert_eq!(host.call("cfg/keys", json!({})).await, Ok(json!(["api_key", "retries", "units"])));
    // What is listed names the keys, never a value.
    let listed = serde_json::to_string(&host.listing()).unwrap();
    assert!(!listed.contains("s3cr3t-key"), "{listed}");

    // A secret file that cannot be read keeps the component out, naming the file only.
    tools.manifest("cfg", "settings", "[grants]\nconfig = { api_key = { file = \"../missing.txt\" } }\n");
    host.reload().await;
    let errors = host.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].to_string().contains("missing.txt") && errors[0].to_string().contains("line 2"), "{}", errors[0]);
    assert!(!errors[0].to_string().contains("s3cr3t"), "{}", errors[0]);
}

#[test]
fn a_secret_from_the_environment_is_read_by_the_host_and_absent_when_unset() {
    let tools = ToolsDir::new();
    tools.install("plain_config", "cfg", "settings");
    tools.manifest(
        "cfg",
        "settings",
        "[grants]\nconfig = { OPENWEATHER_API_KEY = { env = \"OPENWEATHER_API_KEY\" } }\n",
    );
    let read = ["call", "cfg/setting", "--input", r#"{"key":"OPENWEATHER_API_KEY"}"#];
    let set = toolhost(&tools, &read, &[("OPENWEATHER_API_KEY", "k-123")]);
    assert_eq!(stdout_json(&set), json!("k-123"));
    let unset = toolhost(&tools, &read, &[]);
    assert_eq!(stdout_json(&unset), Value::Null, "an unset variable is an absent key");
    let inspected = toolhost(&tools, &["inspect", "cfg/settings.wasm"], &[("OPENWEATHER_API_KEY", "k-123")]);
    let shown = String::from_utf8_lossy(&inspected.stdout);
    assert!(shown.contains("OPENWEATHER_API_KEY") && !shown.contains("k-123"), "{shown}");
}

#[test]
fn an_import_toolhost_lacks_is_named_and_inspect_still_shows_the_component() {
    let tools = ToolsDir::new();
    tools.install("plain_unprovided", "greet", "greeter");
    tools.install("plain_config", "cfg", "settings");
    let listed = stdout_json(&toolhost(&tools, &["list"], &[]));
    let errors = listed["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{listed}");
    let error = errors[0]["error"].as_str().unwrap();
    assert_eq!(
        error,
        "cannot be instantiated: it imports `wasi:logging/logging@0.1.0-draft`, which toolhost does not provide \
         (it provides no interface of `wasi:logging`)"
    );
    assert_eq!(errors[0]["exports"], json!(["greet"]));
    assert!(errors[0]["imports"].as_array().unwrap().contains(&json!("wasi:config/store@0.2.0-draft")));
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"cfg/setting"), "the other component serves: {names:?}");

    let inspected = toolhost(&tools, &["inspect", "greet/greeter.wasm"], &[]);
    assert_eq!(inspected.status.code(), Some(toolhost::exit::LOAD as i32));
    let shown = stdout_json(&inspected);
    assert_eq!(shown["exports"], json!(["greet"]));
    assert!(shown["imports"].as_array().unwrap().contains(&json!("wasi:logging/logging@0.1.0-draft")), "{shown}");
    assert!(String::from_utf8_lossy(&inspected.stderr).contains("`wasi:logging/logging@0.1.0-draft`"));
}

/// wassette's own `examples/get-weather-js/policy.yaml`, as it ships.
const GET_WEATHER_POLICY: &str = r#"version: "1.0"
description: "Permission policy for wassette weather demo"
permissions:
  network:
    allow:
      - host: "api.openweathermap.org"
  environment:
    allow:
      - key: "OPENWEATHER_API_KEY"
"#;

#[test]
fn a_wassette_policy_becomes_the_manifest_that_grants_the_same() {
    let tools = ToolsDir::new();
    tools.install("plain_config", "cfg", "settings");
    let policy = tools.write("cfg", "policy.yaml", GET_WEATHER_POLICY.as_bytes());
    let policy = policy.to_str().unwrap();
    let imported = toolhost(&tools, &["import-policy", policy, "--output", "cfg/settings.toml"], &[]);
    assert!(imported.status.success(), "{}", String::from_utf8_lossy(&imported.stderr));
    let again = toolhost(&tools, &["import-policy", policy, "--output", "cfg/settings.toml"], &[]);
    assert_eq!(again.status.code(), Some(1), "an existing manifest is kept without --force");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));

    let read = ["call", "cfg/setting", "--input", r#"{"key":"OPENWEATHER_API_KEY"}"#];
    assert_eq!(stdout_json(&toolhost(&tools, &read, &[("OPENWEATHER_API_KEY", "k-9")])), json!("k-9"));
    let inspected =
        stdout_json(&toolhost(&tools, &["inspect", "cfg/settings.wasm"], &[("OPENWEATHER_API_KEY", "k-9")]));
    assert_eq!(inspected["capabilities"]["http"]["granted"], json!(["api.openweathermap.org"]), "{inspected}");
    assert_eq!(inspected["capabilities"]["config"], json!({ "imported": true, "granted": ["OPENWEATHER_API_KEY"] }));

    // What does not map is said on stderr and kept in the manifest as comments.
    let wider = "version: \"1.0\"\npermissions:\n  network:\n    allow:\n      - host: \"https://rss.nytimes.com/\"\n      - cidr: \"10.0.0.0/8\"\n";
    let policy = tools.write("cfg", "wider.yaml", wider.as_bytes());
    let printed = toolhost(&tools, &["import-policy", policy.to_str().unwrap()], &[]);
    let (manifest, notes) = (String::from_utf8_lossy(&printed.stdout), String::from_utf8_lossy(&printed.stderr));
    assert!(manifest.contains("network = [\"rss.nytimes.com:443\"]"), "{manifest}");
    assert!(notes.contains("note: network `10.0.0.0/8` is not granted"), "{notes}");
    assert!(manifest.contains("# Note: network `10.0.0.0/8` is not granted"), "{manifest}");
    let not_a_policy = tools.write("cfg", "list.yaml", b"- one\n- two\n");
    let refused = toolhost(&tools, &["import-policy", not_a_policy.to_str().unwrap()], &[]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("its top level is not a mapping"));
}
