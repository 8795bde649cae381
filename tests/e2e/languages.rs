//! Tools written in JavaScript (QuickJS and StarlingMonkey), Python (CPython), C and Go
//! against the same `wit/tool.wit` as the Rust ones, built from
//! `example-tools/{js-units,py-dates,c-checksum,go-cron}` by the build script. Through the
//! library each behaves like a Rust tool:
//! listed with its schemas, answering with output that fits them, refused by the host
//! before it runs when the input breaks its schema, refusing input that fits the schema
//! but makes no sense, and held to its output schema.

use serde_json::{Value, json};
use toolhost::{CallError, ToolHost};
use toolhost_tests::ToolsDir;

/// A host serving one polyglot component under `namespace`.
async fn host_with(component: &str, namespace: &str) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::new();
    tools.install_polyglot(component, namespace);
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![], "{component} loads");
    (tools, host)
}

/// The tools of `namespace` are exactly `expected`, each described, with an input schema
/// for an object that names its required fields and refuses unknown ones, and an output
/// schema.
fn assert_listed(host: &ToolHost, namespace: &str, expected: &[&str]) {
    let snapshot = host.snapshot();
    let mut listed: Vec<&str> =
        snapshot.tools.values().filter(|entry| entry.namespace == namespace).map(|entry| entry.def().name()).collect();
    listed.sort_unstable();
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    assert_eq!(listed, expected, "the tools of {namespace}");
    for name in expected {
        let def = snapshot.resolve(&format!("{namespace}/{name}")).expect("listed tool resolves").def();
        assert!(def.description().len() > 20, "{name} is described for an agent: {:?}", def.description());
        let input = def.input_schema().json();
        assert_eq!(input["type"], "object", "{name}: {input}");
        assert_eq!(input["additionalProperties"], false, "{name} refuses unknown fields: {input}");
        assert!(input["properties"].is_object(), "{name}: {input}");
        let output = def.output_schema().json();
        assert_eq!(output["type"], "object", "{name}: {output}");
        assert!(output["required"].as_array().is_some_and(|r| !r.is_empty()), "{name}: {output}");
    }
}

/// Calls a tool, expects success, and checks the output against the tool's own output
/// schema (the check the host has just made) before returning it.
async fn call_ok(host: &ToolHost, tool: &str, input: Value) -> Value {
    let report = host.call_detailed(tool, input.clone()).await;
    let output = report.outcome.unwrap_or_else(|e| panic!("{tool} {input}: {e}"));
    let snapshot = host.snapshot();
    let def = snapshot.resolve(tool).expect("tool resolves").def();
    assert_eq!(def.output_schema().check(&output), Ok(()), "{tool} answers within its output schema");
    assert!(report.fuel_consumed > 0, "{tool} ran");
    output
}

/// Input that breaks the schema is refused by the host with the violation's JSON pointer,
/// and the tool never runs (no fuel spent).
async fn assert_refused_by_schema(host: &ToolHost, tool: &str, input: Value, pointer: &str) {
    let report = host.call_detailed(tool, input.clone()).await;
    match &report.outcome {
        Err(CallError::InputInvalid { tool: name, violations }) => {
            assert_eq!(name, tool);
            let pointers: Vec<&str> = violations.iter().map(|v| v.pointer.as_str()).collect();
            assert!(
                pointers.contains(&pointer),
                "{tool} {input}: expected a violation at {pointer:?}, got {violations:?}"
            );
        }
        other => panic!("{tool} {input}: expected InputInvalid from the schema, got {other:?}"),
    }
    assert_eq!(report.fuel_consumed, 0, "{tool} {input}: the tool never ran");
}

/// Input that fits the schema but makes no sense is refused by the tool itself: the host
/// reports it as InputInvalid at the root, with the tool's reason, after the tool ran.
async fn assert_refused_by_tool(host: &ToolHost, tool: &str, input: Value, reason: &str) {
    let report = host.call_detailed(tool, input.clone()).await;
    match &report.outcome {
        Err(CallError::InputInvalid { violations, .. }) => {
            assert_eq!(violations.len(), 1, "{violations:?}");
            assert_eq!(violations[0].pointer, "", "the tool's refusal has no pointer");
            assert!(violations[0].reason.contains(reason), "{tool} {input}: {:?}", violations[0].reason);
        }
        other => panic!("{tool} {input}: expected the tool to refuse, got {other:?}"),
    }
    assert!(report.fuel_consumed > 0, "{tool} {input}: the tool ran and refused");
}

/// The output schema the tool declared is the one the host enforces: a value of the
/// wrong shape is refused at `pointer`.
fn assert_output_checked(host: &ToolHost, tool: &str, wrong: Value, pointer: &str) {
    let snapshot = host.snapshot();
    let def = snapshot.resolve(tool).expect("tool resolves").def();
    let violations = def.output_schema().check(&wrong).expect_err("a wrong output is refused");
    assert!(violations.iter().any(|v| v.pointer == pointer), "{tool} {wrong}: {violations:?}");
}

#[tokio::test]
async fn javascript_units_tool_on_quickjs() {
    javascript_units_tool("js_units").await;
}

/// The same source, built with `@bytecodealliance/componentize-js` (StarlingMonkey).
#[tokio::test]
async fn javascript_units_tool_on_starlingmonkey() {
    javascript_units_tool("js_units_starlingmonkey").await;
}

async fn javascript_units_tool(component: &str) {
    let (_tools, host) = host_with(component, "units").await;
    assert_listed(&host, "units", &["convert", "list_units"]);

    assert_eq!(
        call_ok(&host, "units/convert", json!({ "value": 1, "from": "mi", "to": "km" })).await,
        json!({ "value": 1.609344, "from": "mi", "to": "km", "category": "length", "text": "1 mi = 1.609344 km" })
    );
    let fever = call_ok(&host, "units/convert", json!({ "value": 98.6, "from": "F", "to": "C" })).await;
    assert_eq!(fever["value"], json!(37));
    let memory = call_ok(&host, "units/convert", json!({ "value": 1, "from": "GiB", "to": "MB" })).await;
    assert_eq!(memory["value"], json!(1073.741824));
    let rounded =
        call_ok(&host, "units/convert", json!({ "value": 1, "from": "lb", "to": "kg", "significant_digits": 3 })).await;
    assert_eq!(rounded["value"], json!(0.454));
    let units = call_ok(&host, "units/list_units", json!({ "category": "temperature" })).await;
    let symbols: Vec<&Value> =
        units["categories"][0]["units"].as_array().unwrap().iter().map(|u| &u["symbol"]).collect();
    assert_eq!(symbols, [&json!("K"), &json!("C"), &json!("F"), &json!("R")]);

    assert_refused_by_schema(&host, "units/convert", json!({ "value": 1, "from": "miles", "to": "km" }), "/from").await;
    assert_refused_by_schema(&host, "units/convert", json!({ "value": "1", "from": "mi", "to": "km" }), "/value").await;
    assert_refused_by_schema(&host, "units/convert", json!({ "value": 1, "from": "mi" }), "").await;
    assert_refused_by_schema(&host, "units/convert", json!({ "value": 1, "from": "mi", "to": "km", "x": 1 }), "").await;

    assert_refused_by_tool(
        &host,
        "units/convert",
        json!({ "value": 1, "from": "m", "to": "kg" }),
        "cannot convert length (m) to mass (kg)",
    )
    .await;
    assert_refused_by_tool(
        &host,
        "units/convert",
        json!({ "value": -500, "from": "F", "to": "K" }),
        "below absolute zero",
    )
    .await;

    assert_output_checked(
        &host,
        "units/convert",
        json!({ "value": "1.6", "from": "mi", "to": "km", "category": "length", "text": "" }),
        "/value",
    );
}

#[tokio::test]
async fn python_dates_tool() {
    let (_tools, host) = host_with("py_dates", "dates").await;
    assert_listed(&host, "dates", &["add_days", "add_months", "days_between", "today", "weekday"]);

    assert_eq!(
        call_ok(&host, "dates/days_between", json!({ "start": "2024-01-15", "end": "2025-03-01" })).await,
        json!({ "days": 411, "business_days": 295, "calendar": { "years": 1, "months": 1, "days": 14 } })
    );
    assert_eq!(
        call_ok(&host, "dates/add_days", json!({ "date": "2024-05-31", "days": 1, "business_days": true })).await,
        json!({ "date": "2024-06-03", "weekday": "Monday" })
    );
    assert_eq!(
        call_ok(&host, "dates/add_months", json!({ "date": "2024-01-31", "months": 1 })).await,
        json!({ "date": "2024-02-29", "weekday": "Thursday", "clamped": true })
    );
    let info = call_ok(&host, "dates/weekday", json!({ "date": "2021-01-03" })).await;
    assert_eq!((&info["weekday"], &info["iso_week"], &info["iso_year"]), (&json!("Sunday"), &json!(53), &json!(2020)));
    let today = call_ok(&host, "dates/today", json!({})).await;
    assert!(today["iso_year"].as_i64().is_some_and(|year| year >= 2024), "the guest reads the real clock: {today}");

    assert_refused_by_schema(&host, "dates/weekday", json!({ "date": "tomorrow" }), "/date").await;
    assert_refused_by_schema(&host, "dates/add_days", json!({ "date": "2024-01-01", "days": 1.5 }), "/days").await;
    assert_refused_by_schema(&host, "dates/add_days", json!({ "date": "2024-01-01" }), "").await;

    assert_refused_by_tool(&host, "dates/weekday", json!({ "date": "2023-02-30" }), "is not a valid date").await;
    assert_refused_by_tool(&host, "dates/add_days", json!({ "date": "9999-12-31", "days": 1 }), "outside the years")
        .await;

    assert_output_checked(&host, "dates/add_days", json!({ "date": "2024-06-03", "weekday": "Caturday" }), "/weekday");
}

#[tokio::test]
async fn c_checksum_tool() {
    let (_tools, host) = host_with("c_checksum", "checksum").await;
    assert_listed(&host, "checksum", &["adler32", "crc32", "sha256"]);

    assert_eq!(
        call_ok(&host, "checksum/crc32", json!({ "data": "123456789" })).await,
        json!({ "value": 3_421_780_262_u32, "hex": "cbf43926", "bytes": 9 })
    );
    assert_eq!(
        call_ok(&host, "checksum/adler32", json!({ "data": "Wikipedia" })).await,
        json!({ "value": 300_286_872, "hex": "11e60398", "bytes": 9 })
    );
    let abc = json!({ "hex": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "bytes": 3 });
    assert_eq!(call_ok(&host, "checksum/sha256", json!({ "data": "abc" })).await, abc);
    assert_eq!(call_ok(&host, "checksum/sha256", json!({ "data": "616263", "encoding": "hex" })).await, abc);
    assert_eq!(call_ok(&host, "checksum/sha256", json!({ "data": "YWJj", "encoding": "base64" })).await, abc);
    // JSON escapes reach the C code as the UTF-8 bytes they stand for.
    let unicode = call_ok(&host, "checksum/crc32", json!({ "data": "h\u{e9}llo \u{1F600} \"q\"\n" })).await;
    assert_eq!(unicode["hex"], "9da65ff6");
    assert_eq!(unicode["bytes"], 16);

    assert_refused_by_schema(&host, "checksum/crc32", json!({ "data": 42 }), "/data").await;
    assert_refused_by_schema(&host, "checksum/crc32", json!({ "data": "x", "encoding": "rot13" }), "/encoding").await;
    assert_refused_by_schema(&host, "checksum/sha256", json!({}), "").await;

    assert_refused_by_tool(
        &host,
        "checksum/crc32",
        json!({ "data": "abc", "encoding": "hex" }),
        "even number of digits",
    )
    .await;
    assert_refused_by_tool(&host, "checksum/adler32", json!({ "data": "YW=Jj", "encoding": "base64" }), "stray").await;

    assert_output_checked(
        &host,
        "checksum/crc32",
        json!({ "value": 4_294_967_296_u64, "hex": "cbf43926", "bytes": 9 }),
        "/value",
    );
}

/// A C tool that cannot allocate reports `failed` and the host passes its message on;
/// the component keeps serving.
#[tokio::test]
async fn a_c_tool_out_of_memory_fails_with_its_own_message() {
    let tools = ToolsDir::new();
    tools.install_polyglot("c_checksum", "checksum");
    // ~1 MiB of initial memory: a 1.5 MB input still arrives, its decoded copy does not fit.
    tools.manifest("checksum", "c_checksum", "[limits]\nmemory = \"4 MiB\"\n");
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![]);
    let error = host.call("checksum/crc32", json!({ "data": "a".repeat(1_500_000) })).await.unwrap_err();
    assert_eq!(error, CallError::Failed { tool: "checksum/crc32".into(), message: "out of memory".into() });
    assert_eq!(
        host.call("checksum/crc32", json!({ "data": "123456789" })).await.unwrap()["hex"],
        "cbf43926",
        "the next call gets a fresh instance"
    );
}

#[tokio::test]
async fn go_cron_tool() {
    let (_tools, host) = host_with("go_cron", "cron").await;
    assert_listed(&host, "cron", &["explain", "matches", "next_runs"]);

    let run = |time: &str, utc: &str, weekday: &str| json!({ "time": time, "utc": utc, "weekday": weekday });
    assert_eq!(
        call_ok(
            &host,
            "cron/next_runs",
            json!({ "expression": "*/15 9-17 * * MON-FRI", "after": "2026-11-27T17:31:10Z", "count": 3 })
        )
        .await,
        json!({
            "expression": "*/15 9-17 * * MON-FRI",
            "timezone": "UTC",
            "timezone_from": "default",
            "runs": [
                run("2026-11-27T17:45:00Z", "2026-11-27T17:45:00Z", "Friday"),
                run("2026-11-30T09:00:00Z", "2026-11-30T09:00:00Z", "Monday"),
                run("2026-11-30T09:15:00Z", "2026-11-30T09:15:00Z", "Monday"),
            ]
        })
    );
    // Daylight saving in the zone's tzdata, built into the component: 02:30 happens twice
    // in Berlin on 25 October 2026 and runs once.
    let berlin = call_ok(
        &host,
        "cron/next_runs",
        json!({ "expression": "30 2 * * *", "timezone": "Europe/Berlin", "after": "2026-10-24T12:00:00Z", "count": 2 }),
    )
    .await;
    assert_eq!(
        berlin["runs"],
        json!([
            run("2026-10-25T02:30:00+02:00", "2026-10-25T00:30:00Z", "Sunday"),
            run("2026-10-26T02:30:00+01:00", "2026-10-26T01:30:00Z", "Monday"),
        ])
    );
    assert_eq!((&berlin["timezone"], &berlin["timezone_from"]), (&json!("Europe/Berlin"), &json!("input")));
    let hourly = call_ok(&host, "cron/next_runs", json!({ "expression": "@hourly" })).await;
    assert_eq!(hourly["expression"], "0 * * * *");
    let runs = hourly["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 5, "five runs by default: {hourly}");
    let year: i32 = runs[0]["utc"].as_str().unwrap()[..4].parse().unwrap();
    assert!(year >= 2026, "the guest reads the real clock: {hourly}");

    assert_eq!(
        call_ok(&host, "cron/explain", json!({ "expression": "0 9,17 * * 1-5" })).await,
        json!({
            "expression": "0 9,17 * * 1-5",
            "description": "At 09:00 and 17:00, on Monday through Friday",
            "day_rule": "day_of_week",
            "fields": {
                "minute": [0],
                "hour": [9, 17],
                "day_of_month": (1..=31).collect::<Vec<_>>(),
                "month": (1..=12).collect::<Vec<_>>(),
                "day_of_week": [1, 2, 3, 4, 5],
            }
        })
    );
    assert_eq!(
        call_ok(&host, "cron/explain", json!({ "expression": "0 0 1 * MON" })).await["description"],
        "At 00:00, on day 1 of the month and on every Monday"
    );
    assert_eq!(
        call_ok(
            &host,
            "cron/matches",
            json!({ "expression": "0 9 * * MON-FRI", "time": "2026-11-23T08:00:42Z", "timezone": "Europe/Berlin" })
        )
        .await,
        json!({
            "matches": true,
            "time": "2026-11-23T09:00:42+01:00",
            "timezone": "Europe/Berlin",
            "timezone_from": "input",
        })
    );
    let sunday = json!({ "expression": "0 9 * * MON-FRI", "time": "2026-11-22T09:00:00Z" });
    assert_eq!(call_ok(&host, "cron/matches", sunday).await["matches"], false);

    assert_refused_by_schema(&host, "cron/next_runs", json!({ "expression": "* * * * *", "count": 0 }), "/count").await;
    assert_refused_by_schema(
        &host,
        "cron/next_runs",
        json!({ "expression": "* * * * *", "after": "tomorrow" }),
        "/after",
    )
    .await;
    assert_refused_by_schema(
        &host,
        "cron/matches",
        json!({ "expression": "* * * * *", "timezone": "UTC; rm" }),
        "/timezone",
    )
    .await;
    assert_refused_by_schema(&host, "cron/explain", json!({}), "").await;
    assert_refused_by_schema(&host, "cron/explain", json!({ "expression": "* * * * *", "zone": "UTC" }), "").await;

    assert_refused_by_tool(
        &host,
        "cron/next_runs",
        json!({ "expression": "61 * * * *" }),
        "minute field \"61\": 61 is out of range 0-59",
    )
    .await;
    assert_refused_by_tool(
        &host,
        "cron/explain",
        json!({ "expression": "0 0 30 2 *" }),
        "never runs: day 30 of the month does not occur in February",
    )
    .await;
    assert_refused_by_tool(
        &host,
        "cron/next_runs",
        json!({ "expression": "@daily", "timezone": "Mars/Olympus_Mons" }),
        "unknown time zone \"Mars/Olympus_Mons\"",
    )
    .await;
    assert_refused_by_tool(
        &host,
        "cron/matches",
        json!({ "expression": "@daily", "time": "2026-02-30T00:00:00Z" }),
        "time: \"2026-02-30T00:00:00Z\" is not a valid RFC 3339 time",
    )
    .await;

    assert_output_checked(
        &host,
        "cron/next_runs",
        json!({ "expression": "@daily", "timezone": "UTC", "timezone_from": "somewhere", "runs": [] }),
        "/timezone_from",
    );
}

/// The Go cron tool takes its default time zone from the operator's manifest
/// (`host.config`); a zone the operator got wrong is the tool failing (`failed`), not
/// the caller's input, and the component keeps serving.
#[tokio::test]
async fn a_go_tool_reads_the_operators_config_and_fails_on_a_broken_one() {
    let tools = ToolsDir::new();
    tools.install_polyglot("go_cron", "cron");
    tools.manifest("cron", "go_cron", "[grants]\nconfig = { timezone = \"America/New_York\" }\n");
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![]);
    let runs = host
        .call("cron/next_runs", json!({ "expression": "0 9 * * *", "after": "2026-07-01T00:00:00Z", "count": 1 }))
        .await
        .unwrap();
    assert_eq!((&runs["timezone"], &runs["timezone_from"]), (&json!("America/New_York"), &json!("config")));
    assert_eq!(runs["runs"][0]["utc"], "2026-07-01T13:00:00Z");

    let tools = ToolsDir::new();
    tools.install_polyglot("go_cron", "cron");
    tools.manifest("cron", "go_cron", "[grants]\nconfig = { timezone = \"Mars/Olympus_Mons\" }\n");
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![]);
    match host.call("cron/next_runs", json!({ "expression": "@daily" })).await {
        Err(CallError::Failed { tool, message }) => {
            assert_eq!(tool, "cron/next_runs");
            assert!(message.contains("configured time zone (config \"timezone\") is unusable"), "{message}");
            assert!(message.contains("Mars/Olympus_Mons"), "{message}");
        }
        other => panic!("a broken configured zone is the tool failing: {other:?}"),
    }
    let berlin = json!({ "expression": "@daily", "timezone": "Europe/Berlin", "count": 1 });
    assert_eq!(host.call("cron/next_runs", berlin).await.unwrap()["timezone_from"], "input", "the input's zone wins");
}

/// Tools in different languages side by side in one tools directory. (Python is left out
/// only because each host compiles its 18 MB component again on a cold cache.)
#[tokio::test]
async fn every_language_serves_from_one_tools_directory() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.install_polyglot("js_units", "units");
    tools.install_polyglot("c_checksum", "checksum");
    tools.install_polyglot("go_cron", "cron");
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![]);
    let names: Vec<String> = host.snapshot().tools.keys().cloned().collect();
    for name in ["math/add", "units/convert", "checksum/crc32", "cron/next_runs"] {
        assert!(names.iter().any(|n| n == name), "{name} in {names:?}");
    }
    let km = host.call("units/convert", json!({ "value": 42.195, "from": "km", "to": "mi" })).await.unwrap();
    let sum = host.call("math/add", json!({ "numbers": [km["value"], 1] })).await.unwrap();
    assert!((sum["value"].as_f64().unwrap() - 27.218_757).abs() < 1e-6, "{sum}");
    let next = json!({ "expression": "@yearly", "after": "2026-06-01T00:00:00Z", "count": 1 });
    let run = host.call("cron/next_runs", next).await.unwrap();
    let crc = host.call("checksum/crc32", json!({ "data": run["runs"][0]["utc"] })).await.unwrap();
    assert_eq!(crc["bytes"], 20, "2027-01-01T00:00:00Z: {run}");
}

/// The host holds a tool of every language to the output schema it declared, on a real
/// call: the contract guests (`tests/guests/polyglot/`) return a string where they
/// declared a number, and the caller gets `OutputInvalid` at `/value`; a valid output
/// passes, and the component keeps serving.
#[tokio::test]
async fn every_language_is_held_to_its_output_schema_through_a_real_call() {
    for component in ["js_contract", "py_contract", "c_contract", "go_contract"] {
        let (_tools, host) = host_with(component, "contract").await;
        assert_eq!(
            call_ok(&host, "contract/echo", json!({ "value": 2.5 })).await,
            json!({ "value": 2.5 }),
            "{component}"
        );
        let report = host.call_detailed("contract/breaks_its_schema", json!({ "value": 1 })).await;
        match &report.outcome {
            Err(CallError::OutputInvalid { tool, violations }) => {
                assert_eq!(tool, "contract/breaks_its_schema", "{component}");
                assert_eq!(violations[0].pointer, "/value", "{component}: {violations:?}");
            }
            other => panic!("{component}: expected OutputInvalid, got {other:?}"),
        }
        assert!(report.fuel_consumed > 0 && report.output_bytes > 0, "{component}: the tool ran and answered");
        assert_eq!(
            call_ok(&host, "contract/echo", json!({ "value": -1 })).await,
            json!({ "value": -1 }),
            "{component}"
        );
    }
}
