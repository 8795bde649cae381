//! Components this project did not write for itself: plain components written the way
//! other hosts' examples are (a fetch tool over `wasi:http`, a geometry toolbox of
//! records and variants in Rust, a time tool in JavaScript with componentize-js, a
//! statistics tool in Python with componentize-py), each loaded unchanged and called
//! through the library, the CLI and MCP.

use serde_json::{Value, json};
use toolhost::{CallError, Caller, Contract, ToolHost};
use toolhost_tests::{HttpServer, ToolsDir, cli_call, mcp_calls, toolhost_bin};

/// A tools directory holding the four foreign components under their namespaces.
fn foreign_tools() -> ToolsDir {
    let tools = ToolsDir::new();
    tools.install("plain-fetch", "fetch", "fetch");
    tools.install("plain-geometry", "geometry", "geometry");
    tools.install_polyglot("js_plain_time", "time");
    tools.install_polyglot("py_plain_stats", "stats");
    tools
}

async fn host(tools: &ToolsDir) -> ToolHost {
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![], "every foreign component loads");
    host
}

#[tokio::test]
async fn each_is_served_as_plain_exports_with_its_wit_signatures() {
    let tools = foreign_tools();
    let host = host(&tools).await;
    let names: Vec<String> = host.list(&Caller::local()).into_iter().map(|t| t.name).collect();
    assert_eq!(
        names,
        [
            "fetch/fetch",
            "geometry/bounding-box",
            "geometry/convert",
            "geometry/measure",
            "stats/summarize",
            "time/day-of-week",
            "time/get-current-time"
        ]
    );
    let snapshot = host.snapshot();
    for entry in snapshot.tools.values() {
        let component = entry.source.component().unwrap();
        assert!(matches!(component.contract, Contract::Plain { .. }), "{}", entry.full_name);
    }
    let measure = snapshot.tools["geometry/measure"].source.plain_function().unwrap().signature.clone();
    assert!(
        measure.starts_with("measure: func(shape: variant { circle(tuple<record { x: f64, y: f64 }, f64>)"),
        "{measure}"
    );
}

#[tokio::test]
async fn records_and_variants_travel_both_ways() {
    let tools = foreign_tools();
    let host = host(&tools).await;
    let circle = json!({ "shape": { "circle": [{ "x": 1.0, "y": 2.0 }, 1.0] } });
    let measured = host.call("geometry/measure", circle).await.unwrap();
    assert_eq!(measured["centroid"], json!({ "x": 1.0, "y": 2.0 }));
    assert!((measured["area"].as_f64().unwrap() - std::f64::consts::PI).abs() < 1e-12, "{measured}");
    let line = json!({ "shape": { "polygon": [{ "x": 0.0, "y": 0.0 }, { "x": 1.0, "y": 0.0 }] } });
    let flat = host.call("geometry/measure", line).await.unwrap();
    assert_eq!(flat.get("centroid"), None, "a none option is left out: {flat}");
    let rectangle = json!({ "corner": { "x": 0.0, "y": 0.0 }, "width": 2.0, "height": 1.0 });
    let shapes = json!({ "shapes": [{ "rectangle": rectangle }, { "circle": [{ "x": 5.0, "y": 5.0 }, 1.0] }] });
    assert_eq!(
        host.call("geometry/bounding-box", shapes).await,
        Ok(json!({ "corner": { "x": 0.0, "y": 0.0 }, "width": 6.0, "height": 6.0 }))
    );
    assert_eq!(host.call("geometry/bounding-box", json!({ "shapes": [] })).await, Ok(Value::Null));
    let feet = host.call("geometry/convert", json!({ "length": 1.0, "from": "metres", "to": "feet" })).await.unwrap();
    assert!((feet.as_f64().unwrap() - 3.280839895013123).abs() < 1e-12);
    let failed = host.call("geometry/convert", json!({ "length": "Infinity", "from": "feet", "to": "metres" })).await;
    assert_eq!(
        failed,
        Err(CallError::Failed { tool: "geometry/convert".into(), message: "inf is not a length".into() })
    );
}

#[tokio::test]
async fn the_fetch_tool_goes_out_only_where_its_manifest_grants() {
    let server = HttpServer::start().await;
    let tools = foreign_tools();
    let host = host(&tools).await;
    let refused = host.call("fetch/fetch", json!({ "url": server.url("/page") })).await.unwrap_err();
    // The guest saw only `HttpRequestDenied`; the caller is told why, and where.
    let why = format!("(the host refused `{}`: no network access is granted to this component)", server.addr);
    assert!(
        matches!(&refused, CallError::Failed { message, .. } if message.contains("HttpRequestDenied") && message.ends_with(&why)),
        "{refused:?}"
    );
    tools.manifest("fetch", "fetch", "[grants]\nnetwork = [\"api.example.org:443\"]\n");
    host.reload().await;
    let refused = host.call("fetch/fetch", json!({ "url": server.url("/page") })).await.unwrap_err();
    let why = format!("(the host refused `{}`: not in the allow-list (api.example.org:443))", server.addr);
    assert!(matches!(&refused, CallError::Failed { message, .. } if message.ends_with(&why)), "{refused:?}");
    assert_eq!(server.request_count(), 0);
    tools.manifest("fetch", "fetch", &format!("[grants]\nnetwork = [\"{}\"]\n", server.addr));
    host.reload().await;
    assert_eq!(host.call("fetch/fetch", json!({ "url": server.url("/page") })).await, Ok(json!("GET /page")));
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn javascript_and_python_plain_components_answer() {
    let tools = foreign_tools();
    let host = host(&tools).await;
    let now = host.call("time/get-current-time", json!({})).await.unwrap();
    assert!(now.as_str().is_some_and(|t| t.len() == 24 && t.ends_with('Z')), "ISO 8601 UTC: {now}");
    assert_eq!(host.call("time/day-of-week", json!({ "date": "2026-11-23" })).await, Ok(json!("monday")));
    assert_eq!(host.call("time/day-of-week", json!({ "date": "someday" })).await, Ok(Value::Null));
    let summary = host.call("stats/summarize", json!({ "numbers": [1.0, 2.0, 4.0] })).await.unwrap();
    assert_eq!(summary["count"], 3);
    assert_eq!(summary["median"], 2.0);
    assert!((summary["mean"].as_f64().unwrap() - 7.0 / 3.0).abs() < 1e-12, "{summary}");
    assert!(summary["stdev"].as_f64().is_some(), "{summary}");
    let single = host.call("stats/summarize", json!({ "numbers": [5.0] })).await.unwrap();
    assert_eq!(single.get("stdev"), None, "{single}");
    let empty = host.call("stats/summarize", json!({ "numbers": [] })).await.unwrap_err();
    assert_eq!(
        empty,
        CallError::Failed { tool: "stats/summarize".into(), message: "there are no numbers to summarize".into() }
    );
}

#[test]
fn each_is_called_through_the_cli_and_mcp() {
    let tools = foreign_tools();
    let circle = json!({ "shape": { "circle": [{ "x": 0.0, "y": 0.0 }, 2.0] } });
    let (code, measured) = cli_call(tools.path(), "geometry/measure", &circle);
    assert_eq!(code, 0, "{measured}");
    assert_eq!(measured["centroid"], json!({ "x": 0.0, "y": 0.0 }));
    let (code, day) = cli_call(tools.path(), "time/day-of-week", &json!({ "date": "2000-01-01" }));
    assert_eq!((code, day), (0, json!("saturday")));
    let (code, _) = cli_call(tools.path(), "stats/summarize", &json!({ "numbers": [] }));
    assert_eq!(code, 7, "a tool failure's exit code");
    let refused = std::process::Command::new(toolhost_bin())
        .args(["call", "fetch/fetch", "--input", r#"{"url":"https://api.example.org/v1"}"#, "--root"])
        .arg(tools.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(7), "{stderr}");
    let why = "(the host refused `api.example.org:443`: no network access is granted to this component)";
    assert!(stderr.contains("HttpRequestDenied") && stderr.contains(why), "{stderr}");

    let seen = mcp_calls(
        tools.path(),
        &json!([
            { "name": "geometry.measure", "arguments": circle },
            { "name": "stats.summarize", "arguments": { "numbers": [2, 4] } },
            { "name": "time.day-of-week", "arguments": { "date": "2026-11-23" } },
            { "name": "stats.summarize", "arguments": { "numbers": [] } },
            { "name": "fetch.fetch", "arguments": { "url": "https://api.example.org/v1" } },
        ]),
    );
    let names: Vec<&str> = seen["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert!(names.contains(&"geometry.measure") && names.contains(&"fetch.fetch"), "{names:?}");
    let results = seen["results"].as_array().unwrap();
    assert_eq!(results[0]["structured"]["centroid"], json!({ "x": 0, "y": 0 }), "{}", results[0]);
    assert_eq!(results[1]["structured"]["mean"], 3, "{}", results[1]);
    assert_eq!(results[2]["text"], "monday", "a string output travels as its text: {}", results[2]);
    assert_eq!(results[3]["is_error"], true);
    assert!(results[3]["text"].as_str().unwrap().contains("no numbers"), "{}", results[3]);
    assert_eq!(results[4]["is_error"], true);
    let refused = results[4]["text"].as_str().unwrap();
    assert!(refused.contains("the host refused `api.example.org:443`: no network access is granted"), "{refused}");
}
