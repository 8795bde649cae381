//! Every tool definition the host produces, checked against the consumer's own published
//! rules, not against toolhost's idea of them:
//!
//! - MCP: the specification's JSON Schema for revision 2025-11-25, vendored verbatim in
//!   `tests/mcp/spec/2025-11-25/schema.json` (`ListToolsResult`, `Tool`), and the tool
//!   name rule of that revision (`[A-Za-z0-9_.-]`, 1 to 128 characters).
//! - OpenAI: function names `^[a-zA-Z0-9_-]{1,64}$`; a tool marked `strict: true` must
//!   meet Structured Outputs' supported subset (checked here by an independent reading of
//!   those rules, see [`strict_mode_violations`]).
//! - Anthropic: names `^[a-zA-Z0-9_-]{1,64}$`; `input_schema` an object schema with no
//!   `oneOf`, `allOf` or `anyOf` at its top level (the API refuses those).
//!
//! The tools: the Rust examples (the `json` ones declare `"document": true`), the test
//! guests (`shapes` has a string input, an array input, a root `anyOf` and boolean
//! sub-schemas), the JavaScript, Python and C examples, plain components (every WIT
//! type's schema) and a native tool.

use serde_json::{Value, json};
use toolhost::{CallError, Caller, ExportFormat, ToolHost};
use toolhost_tests::ToolsDir;

async fn every_kind_of_tool() -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::with_examples();
    tools.install("hostile", "hostile", "hostile");
    tools.install("shapes", "shapes", "shapes");
    tools.install_polyglot("js_units", "units");
    tools.install_polyglot("py_dates", "dates");
    tools.install_polyglot("c_checksum", "checksum");
    tools.install("plain-types", "plain", "plain");
    tools.install("plain-geometry", "geometry", "geometry");
    let remember = toolhost::NativeTool::new(
        "agent/remember",
        "Keeps a note.",
        json!({ "type": "object", "properties": { "note": { "type": "string" } }, "required": ["note"], "additionalProperties": false }),
        json!({ "type": "object", "properties": { "notes": { "type": "integer" } }, "required": ["notes"], "additionalProperties": false }),
        |_| async { Ok(json!({ "notes": 1 })) },
    )
    .unwrap();
    let host = ToolHost::builder()
        .layer(toolhost::Layer::native("agent"))
        .layer(toolhost::Layer::directory("tools", tools.path()))
        .tool("agent", remember)
        .build()
        .await
        .expect("host builds");
    assert_eq!(host.load_errors(), vec![], "every component loads");
    (tools, host)
}

/// A validator for one definition of the vendored MCP specification schema.
fn mcp_validator(definition: &str) -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/spec/2025-11-25/schema.json");
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(&path).expect("the vendored MCP schema"))
        .expect("the MCP schema is JSON");
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$ref": format!("#/definitions/{definition}"),
        "definitions": spec["definitions"],
    });
    jsonschema::validator_for(&schema).expect("the MCP schema compiles")
}

fn violations(validator: &jsonschema::Validator, value: &Value) -> Vec<String> {
    validator.iter_errors(value).map(|e| format!("{}: {e}", e.instance_path())).collect()
}

fn function_name_ok(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn mcp_name_ok(name: &str) -> bool {
    (1..=128).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
}

#[tokio::test]
async fn mcp_definitions_satisfy_the_specification_schema() {
    let (_tools, host) = every_kind_of_tool().await;
    let listed = host.export(ExportFormat::Mcp, &Caller::local());
    assert_eq!(violations(&mcp_validator("ListToolsResult"), &listed), Vec::<String>::new());
    let tool_schema = mcp_validator("Tool");
    let tools = listed["tools"].as_array().unwrap();
    assert!(tools.len() > 20, "{} tools", tools.len());
    for tool in tools {
        let name = tool["name"].as_str().unwrap();
        assert_eq!(violations(&tool_schema, tool), Vec::<String>::new(), "{name}");
        assert!(mcp_name_ok(name), "{name}");
        // What the TypeScript SDK checks on top of the specification's own schema.
        for property in tool["inputSchema"]["properties"].as_object().into_iter().flat_map(|p| p.values()) {
            assert!(property.is_object(), "{name}: every property schema is an object: {property}");
        }
    }
    let by_name = |name: &str| tools.iter().find(|t| t["name"] == name).unwrap_or_else(|| panic!("{name} listed"));
    assert_eq!(by_name("json.patch")["inputSchema"]["properties"]["document"], json!({}), "`true` became `{{}}`");
    assert_eq!(by_name("shapes.keep")["inputSchema"]["properties"]["value"], json!({}));
    assert_eq!(by_name("shapes.shout")["inputSchema"]["properties"]["input"]["type"], "string");
    assert_eq!(by_name("shapes.shout").get("outputSchema"), None, "a string output has no outputSchema");
    assert_eq!(by_name("math.add")["outputSchema"]["type"], "object");
}

#[tokio::test]
async fn anthropic_definitions_follow_its_input_schema_rules() {
    let (_tools, host) = every_kind_of_tool().await;
    let tools = host.export(ExportFormat::Anthropic, &Caller::local());
    for tool in tools.as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        assert!(function_name_ok(name), "{name}");
        let keys: Vec<&String> = tool.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["description", "input_schema", "name"], "{name}");
        let schema = &tool["input_schema"];
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        for keyword in ["oneOf", "allOf", "anyOf", "$schema"] {
            assert!(schema.get(keyword).is_none(), "{name}: no top-level {keyword}: {schema}");
        }
    }
    let lookup = tools.as_array().unwrap().iter().find(|t| t["name"] == "shapes__lookup").unwrap();
    assert!(lookup["input_schema"]["properties"]["input"]["anyOf"].is_array(), "the union moved under `input`");
}

#[tokio::test]
async fn openai_definitions_follow_its_function_and_strict_mode_rules() {
    let (_tools, host) = every_kind_of_tool().await;
    let tools = host.export(ExportFormat::OpenAi, &Caller::local());
    let mut strict = Vec::new();
    for tool in tools.as_array().unwrap() {
        assert_eq!(tool["type"], "function");
        assert_eq!(tool.as_object().unwrap().len(), 2, "only type and function: {tool}");
        let function = &tool["function"];
        let name = function["name"].as_str().unwrap();
        assert!(function_name_ok(name), "{name}");
        assert!(function["description"].as_str().is_some_and(|d| !d.is_empty()), "{name}");
        let parameters = &function["parameters"];
        assert_eq!(parameters["type"], "object", "{name}");
        assert!(parameters.get("$schema").is_none(), "{name}");
        if function["strict"] == true {
            assert_eq!(strict_mode_violations(parameters, 0), Vec::<String>::new(), "{name}: {parameters}");
            strict.push(name.to_owned());
        } else {
            assert_eq!(function["strict"], false, "{name}");
        }
    }
    for expected in ["shapes__book", "math__add", "text__slugify"] {
        assert!(strict.iter().any(|n| n == expected), "{expected} qualifies for strict mode: {strict:?}");
    }
    for not_strict in ["shapes__keep", "json__get", "text__regex_find"] {
        assert!(!strict.iter().any(|n| n == not_strict), "{not_strict} does not qualify: {strict:?}");
    }
}

/// OpenAI Structured Outputs, "Supported schemas": types string, number, integer,
/// boolean, object, array, null, and `enum`/`const`/`anyOf`/`$ref`/`$defs`; for strings
/// `pattern` and `format` (date-time, time, date, duration, email, hostname, ipv4, ipv6,
/// uuid); for numbers `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
/// `multipleOf`; for arrays `items`, `minItems`, `maxItems`; every object has
/// `additionalProperties: false` and lists every property in `required`; the root is an
/// object, not `anyOf`; at most 10 levels of nesting.
fn strict_mode_violations(schema: &Value, depth: usize) -> Vec<String> {
    const ANNOTATIONS: &[&str] = &["title", "description"];
    const BY_TYPE: &[(&str, &[&str])] = &[
        ("string", &["pattern", "format"]),
        ("number", &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
        ("integer", &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"]),
        ("array", &["items", "minItems", "maxItems"]),
        ("object", &["properties", "required", "additionalProperties"]),
        ("boolean", &[]),
        ("null", &[]),
    ];
    const FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];
    let mut found = Vec::new();
    let Some(map) = schema.as_object() else { return vec![format!("not an object schema: {schema}")] };
    if depth > 10 {
        found.push("nested deeper than 10 levels".to_owned());
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ if map.contains_key("anyOf")
            || map.contains_key("$ref")
            || map.contains_key("enum")
            || map.contains_key("const") =>
        {
            vec![]
        }
        _ => {
            found.push(format!("a schema without a type: {schema}"));
            vec![]
        }
    };
    for key in map.keys() {
        let allowed = ANNOTATIONS.contains(&key.as_str())
            || ["type", "enum", "const", "anyOf", "$ref", "$defs"].contains(&key.as_str())
            || BY_TYPE.iter().any(|(t, keys)| types.contains(t) && keys.contains(&key.as_str()));
        if !allowed {
            found.push(format!("keyword `{key}` is not supported for {types:?}"));
        }
    }
    if let Some(format) = map.get("format").and_then(Value::as_str).filter(|f| !FORMATS.contains(f)) {
        found.push(format!("format `{format}` is not supported"));
    }
    if types.contains(&"object") {
        if map.get("additionalProperties") != Some(&json!(false)) {
            found.push(format!("an object without additionalProperties: false: {schema}"));
        }
        let required: Vec<&Value> =
            map.get("required").and_then(Value::as_array).map(|r| r.iter().collect()).unwrap_or_default();
        for (property, sub) in map.get("properties").and_then(Value::as_object).into_iter().flatten() {
            if !required.contains(&&json!(property)) {
                found.push(format!("property `{property}` is not required"));
            }
            found.extend(strict_mode_violations(sub, depth + 1));
        }
    }
    if depth == 0 && (types != ["object"]) {
        found.push("the root is not an object".to_owned());
    }
    let nested = map.get("items").into_iter().chain(map.get("anyOf").and_then(Value::as_array).into_iter().flatten());
    for sub in nested.chain(map.get("$defs").and_then(Value::as_object).into_iter().flat_map(|d| d.values())) {
        found.extend(strict_mode_violations(sub, depth + 1));
    }
    found
}

/// A consumer calls with the name and the arguments its definition gave it; a wrapped
/// input comes out of `input`, and the full name still takes the tool's own input.
#[tokio::test]
async fn consumers_call_wrapped_inputs_by_exported_names() {
    let (_tools, host) = every_kind_of_tool().await;
    assert_eq!(host.call("shapes__shout", json!({ "input": "hi" })).await, Ok(json!("HI")));
    assert_eq!(host.call("shapes.shout", json!({ "input": "mcp" })).await, Ok(json!("MCP")));
    assert_eq!(host.call("shapes/shout", json!("direct")).await, Ok(json!("DIRECT")));
    assert_eq!(host.call("shapes__count", json!({ "input": ["a", "b", "c"] })).await, Ok(json!(3)));
    assert_eq!(host.call("shapes.lookup", json!({ "input": { "id": 7 } })).await, Ok(json!({ "key": "id:7" })));
    assert_eq!(host.call("shapes/lookup", json!({ "name": "x" })).await, Ok(json!({ "key": "name:x" })));
    // An object tool is called with its arguments as they are, under every name.
    assert_eq!(
        host.call("shapes.keep", json!({ "value": [1, { "a": null }] })).await,
        Ok(json!({ "value": [1, { "a": null }] }))
    );

    let unwrapped = host.call("shapes__shout", json!("hi")).await.unwrap_err();
    let CallError::InputInvalid { violations, .. } = &unwrapped else { panic!("{unwrapped:?}") };
    assert!(violations[0].reason.contains("`input`"), "{unwrapped}");
    let extra = host.call("shapes.shout", json!({ "input": "hi", "also": 1 })).await.unwrap_err();
    assert!(matches!(extra, CallError::InputInvalid { .. }), "{extra:?}");
    // The tool's own schema still decides: a number is no string.
    let wrong = host.call("shapes__shout", json!({ "input": 42 })).await.unwrap_err();
    assert!(matches!(wrong, CallError::InputInvalid { .. }), "{wrong:?}");
}

#[tokio::test]
async fn exported_names_map_back_and_a_policy_narrows_exports() {
    let (_tools, host) = every_kind_of_tool().await;
    let caller = Caller::local();
    let openai = host.export(ExportFormat::OpenAi, &caller);
    let mcp = host.export(ExportFormat::Mcp, &caller);
    for (openai_tool, mcp_tool) in openai.as_array().unwrap().iter().zip(mcp["tools"].as_array().unwrap()) {
        let full_name = mcp_tool["title"].as_str().unwrap();
        assert_eq!(host.describe(&caller, openai_tool["function"]["name"].as_str().unwrap()).unwrap().name, full_name);
        assert_eq!(host.describe(&caller, mcp_tool["name"].as_str().unwrap()).unwrap().name, full_name);
    }
    host.set_policy(toolhost::Policy::new(vec![
        toolhost::PolicyRule::for_agent("planner").allow(["math/*", "text/slugify"]).deny(["math/divide"]),
    ]));
    let narrowed = host.export(ExportFormat::Anthropic, &Caller::new("planner"));
    let names: Vec<&str> = narrowed.as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["math__add", "math__count_primes", "math__evaluate", "text__slugify"]);
}
