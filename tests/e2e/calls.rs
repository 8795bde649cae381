//! Calling tools through the library: valid calls, bad input, misbehaving tools, and the
//! host serving normally after each failure.

use serde_json::{Value, json};
use toolhost::{CallError, ToolHost};
use toolhost_tests::ToolsDir;

async fn host_with(tools: &ToolsDir) -> ToolHost {
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![], "every component loads");
    host
}

async fn examples_and_hostile() -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::with_examples();
    tools.install("hostile", "hostile", "hostile");
    let host = host_with(&tools).await;
    (tools, host)
}

/// A call every test makes after a failure, to show the host still serves.
async fn assert_still_serving(host: &ToolHost) {
    let sum = host.call("math/add", json!({ "numbers": [1, 2, 3] })).await.expect("math/add works");
    assert_eq!(sum, json!({ "value": 6.0 }));
}

fn violation_pointers(error: &CallError) -> Vec<&str> {
    match error {
        CallError::InputInvalid { violations, .. } | CallError::OutputInvalid { violations, .. } => {
            violations.iter().map(|v| v.pointer.as_str()).collect()
        }
        other => panic!("expected a schema error, got {other:?}"),
    }
}

#[tokio::test]
async fn example_tools_answer_with_schema_valid_output() {
    let (_tools, host) = examples_and_hostile().await;
    assert_still_serving(&host).await;
    assert_eq!(
        host.call("math/divide", json!({ "dividend": 7, "divisor": 2 })).await.unwrap(),
        json!({ "value": 3.5 })
    );
    assert_eq!(
        host.call("math/evaluate", json!({ "expression": "2 * (3 + 4) ^ 2 / sqrt(16)" })).await.unwrap(),
        json!({ "value": 24.5 })
    );
    assert_eq!(
        host.call("text/slugify", json!({ "text": "  Crème Brûlée: a HOW-TO!  " })).await.unwrap(),
        json!({ "slug": "creme-brulee-a-how-to" })
    );
    assert_eq!(
        host.call("text/word_count", json!({ "text": "one two\nthree" })).await.unwrap(),
        json!({ "words": 3, "characters": 13, "lines": 2, "bytes": 13 })
    );
    let found = host
        .call(
            "text/regex_find",
            json!({ "pattern": r"(\w+)@(\w+)\.com", "text": "a@b.com, c@d.com", "max_matches": 1 }),
        )
        .await
        .unwrap();
    assert_eq!(found["matches"][0]["groups"], json!(["a", "b"]));
    assert_eq!(found["truncated"], json!(true));
    assert_eq!(
        host.call("json/get", json!({ "document": { "a": [10, 20] }, "pointer": "/a/1" })).await.unwrap(),
        json!({ "found": true, "value": 20 })
    );
    assert_eq!(
        host.call(
            "json/patch",
            json!({ "document": { "a": 1 }, "patch": [{ "op": "add", "path": "/b", "value": 2 }] })
        )
        .await
        .unwrap(),
        json!({ "document": { "a": 1, "b": 2 } })
    );
    assert_eq!(
        host.call("json/merge", json!({ "document": { "a": 1, "b": 2 }, "merge": { "b": null } })).await.unwrap(),
        json!({ "document": { "a": 1 } })
    );
}

/// A guest that counts its calls in a global sees 1 on every call, one after another
/// and many at once: no state survives a call.
#[tokio::test]
async fn every_call_gets_a_fresh_instance_and_reports_fuel() {
    let (_tools, host) = examples_and_hostile().await;
    for _ in 0..5 {
        let report = host.call_detailed("hostile/count_calls", json!({})).await;
        assert_eq!(report.outcome.unwrap(), json!({ "calls": 1 }), "a fresh instance per call");
        assert!(report.fuel_consumed > 0, "fuel is reported");
        assert_eq!(report.tool.as_deref(), Some("hostile/count_calls"));
        assert_eq!(
            report.component_hash.as_ref().map(|hash| hash.starts_with("blake3:") && hash.len() == 71),
            Some(true)
        );
    }
    let concurrent = (0..32).map(|_| {
        let host = host.clone();
        tokio::spawn(async move { host.call("hostile/count_calls", json!({})).await })
    });
    for call in concurrent {
        assert_eq!(call.await.unwrap(), Ok(json!({ "calls": 1 })));
    }
}

#[tokio::test]
async fn schema_violations_name_the_pointer_and_never_reach_the_tool() {
    let (_tools, host) = examples_and_hostile().await;
    let missing = host.call("math/divide", json!({ "dividend": 1 })).await.unwrap_err();
    assert_eq!(violation_pointers(&missing), vec![""]);
    assert!(missing.to_string().contains("\"divisor\" is a required property"), "{missing}");

    let wrong_type = host.call("math/add", json!({ "numbers": [1, "two"] })).await.unwrap_err();
    assert_eq!(violation_pointers(&wrong_type), vec!["/numbers/1"]);

    let extra = host.call("math/add", json!({ "numbers": [], "verbose": true })).await.unwrap_err();
    assert!(matches!(&extra, CallError::InputInvalid { .. }));
    assert!(extra.to_string().contains("verbose"), "{extra}");

    let not_an_object = host.call("text/slugify", Value::String("hello".into())).await.unwrap_err();
    assert!(matches!(not_an_object, CallError::InputInvalid { .. }));

    // A report shows the tool never ran: no fuel was spent.
    let report = host.call_detailed("math/add", json!({ "numbers": "x" })).await;
    assert_eq!(report.fuel_consumed, 0);
    assert_still_serving(&host).await;
}

#[tokio::test]
async fn a_tool_may_refuse_input_that_fits_its_schema() {
    let (_tools, host) = examples_and_hostile().await;
    let error = host.call("math/divide", json!({ "dividend": 1, "divisor": 0 })).await.unwrap_err();
    assert_eq!(
        error,
        CallError::InputInvalid {
            tool: "math/divide".into(),
            violations: vec![toolhost::Violation { pointer: String::new(), reason: "division by zero".into() }],
        }
    );
    let error = host.call("text/regex_find", json!({ "pattern": "(", "text": "" })).await.unwrap_err();
    assert!(matches!(error, CallError::InputInvalid { .. }), "{error:?}");
}

#[tokio::test]
async fn unknown_tools_get_close_matches() {
    let (_tools, host) = examples_and_hostile().await;
    let error = host.call("math/ad", json!({})).await.unwrap_err();
    let CallError::NotFound { name, suggestions } = &error else { panic!("{error:?}") };
    assert_eq!(name, "math/ad");
    assert_eq!(suggestions.first().map(String::as_str), Some("math/add"));
    let error = host.call("nothing/like/this", json!({})).await.unwrap_err();
    assert!(matches!(error, CallError::NotFound { .. }));
    assert_still_serving(&host).await;
}

#[tokio::test]
async fn output_that_breaks_its_own_schema_is_refused() {
    let (_tools, host) = examples_and_hostile().await;
    let error = host.call("hostile/bad_output", json!({})).await.unwrap_err();
    assert_eq!(violation_pointers(&error), vec!["/value"]);
    assert!(matches!(error, CallError::OutputInvalid { .. }));
    assert_still_serving(&host).await;
}

#[tokio::test]
async fn a_failing_tool_reports_its_own_message() {
    let (_tools, host) = examples_and_hostile().await;
    let error = host.call("hostile/fail", json!({ "message": "the disk is on fire" })).await.unwrap_err();
    assert_eq!(error, CallError::Failed { tool: "hostile/fail".into(), message: "the disk is on fire".into() });
    assert_still_serving(&host).await;
}

#[tokio::test]
async fn a_panic_is_a_trap_carrying_the_panic_message_and_a_backtrace() {
    let (_tools, host) = examples_and_hostile().await;
    let error = host.call("hostile/panic", json!({ "message": "invariant broken" })).await.unwrap_err();
    let CallError::Trap { tool, message, backtrace } = &error else { panic!("{error:?}") };
    assert_eq!(tool, "hostile/panic");
    assert!(message.contains("unreachable"), "{message}");
    assert!(message.contains("invariant broken"), "the panic message is kept: {message}");
    assert!(!backtrace.is_empty(), "a wasm backtrace is attached");
    assert!(!message.contains('\n'), "one line: {message}");
    assert_still_serving(&host).await;

    let error = host.call("hostile/trap", json!({})).await.unwrap_err();
    assert!(matches!(error, CallError::Trap { .. }), "{error:?}");
    assert_still_serving(&host).await;
}

#[tokio::test]
async fn concurrent_calls_each_get_their_own_answer() {
    let (_tools, host) = examples_and_hostile().await;
    let calls = (0..64).map(|n| {
        let host = host.clone();
        tokio::spawn(async move { (n, host.call("hostile/echo", json!({ "n": n })).await) })
    });
    for call in calls {
        let (n, result) = call.await.unwrap();
        assert_eq!(result.unwrap(), json!({ "n": n }));
    }
}

/// A guest's failure message is bounded like its output: the first 4 KiB, and how much
/// more there was.
#[tokio::test]
async fn a_huge_failure_message_is_cut_and_the_rest_counted() {
    let tools = ToolsDir::new();
    tools.install("hostile", "hostile", "hostile");
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    let message = "é".repeat(50_000);
    let error = host.call("hostile/fail", json!({ "message": message })).await.unwrap_err();
    let CallError::Failed { message: kept, .. } = &error else { panic!("{error:?}") };
    assert!(kept.len() <= toolhost::text::MAX_MESSAGE + 40, "{}", kept.len());
    assert!(kept.ends_with(&format!(" … ({} more bytes)", 100_000 - 4096)), "{}", &kept[kept.len() - 40..]);
}
