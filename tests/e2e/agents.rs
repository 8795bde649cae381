//! The agent-facing surface: caller policy, approval, batch calls and audit records
//! (function-calling exports are in `definitions.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::FutureExt;
use serde_json::{Value, json};
use toolhost::{Approval, ApprovalHook, CallError, Caller, Policy, PolicyRule, ToolCall, ToolHost};
use toolhost_tests::ToolsDir;

fn planner_policy() -> Policy {
    Policy::new(vec![PolicyRule {
        agent: "planner".into(),
        allow: vec!["math/*".into(), "text/slugify".into()],
        deny: vec!["math/divide".into()],
    }])
}

async fn examples_host(policy: Policy) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::with_examples();
    let host = ToolHost::builder().root(tools.path()).policy(policy).build().await.unwrap();
    (tools, host)
}

#[tokio::test]
async fn the_policy_refuses_before_any_validation_or_execution() {
    let (_tools, host) = examples_host(planner_policy()).await;
    let planner = Caller::new("planner").with_session("s-1");
    assert_eq!(
        host.call_as(&planner, "math/add", json!({ "numbers": [1, 2] })).await.unwrap(),
        json!({ "value": 3.0 })
    );
    assert!(host.call_as(&planner, "text/slugify", json!({ "text": "a" })).await.is_ok());

    // Denied by a deny glob, with input that would also fail validation: the policy
    // answers first, and nothing runs.
    let report = host.call_detailed_as(&planner, None, "math/divide", json!({ "nonsense": true })).await;
    let Err(CallError::PermissionDenied { caller, tool, reason }) = &report.outcome else {
        panic!("{:?}", report.outcome)
    };
    assert_eq!((caller.as_str(), tool.as_str()), ("planner (session s-1)", "math/divide"));
    assert!(reason.contains("deny `math/divide`"), "{reason}");
    assert_eq!(report.fuel_consumed, 0);

    let outside = host.call_as(&planner, "json/get", json!({ "document": {}, "pointer": "" })).await.unwrap_err();
    assert!(
        matches!(&outside, CallError::PermissionDenied { reason, .. } if reason.contains("not in the allow list")),
        "{outside:?}"
    );
    let stranger = host.call_as(&Caller::new("stranger"), "math/add", json!({ "numbers": [] })).await.unwrap_err();
    assert!(
        matches!(&stranger, CallError::PermissionDenied { reason, .. } if reason.contains("no policy rule")),
        "{stranger:?}"
    );

    // The policy also filters what a caller sees.
    let visible: Vec<String> = host.list(&planner).into_iter().map(|t| t.name).collect();
    assert_eq!(visible, ["math/add", "math/evaluate", "text/slugify"]);
    assert!(matches!(host.describe(&planner, "json/get"), Err(CallError::PermissionDenied { .. })));
    assert_eq!(host.describe(&planner, "math.add").unwrap().name, "math/add");

    // Policies can change at run time.
    host.set_policy(Policy::allow_all());
    assert!(host.call_as(&Caller::new("stranger"), "math/add", json!({ "numbers": [] })).await.is_ok());
}

async fn approval_host(hook: Option<ApprovalHook>) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::with_examples();
    tools.manifest("math", "math", "[policy]\nrequires_approval = true\n");
    let mut builder = ToolHost::builder().root(tools.path());
    if let Some(hook) = hook {
        builder = builder.approval_hook(hook);
    }
    let host = builder.build().await.unwrap();
    assert!(host.load_errors().is_empty());
    (tools, host)
}

#[tokio::test]
async fn tools_that_require_approval_are_denied_without_a_hook() {
    let (_tools, host) = approval_host(None).await;
    let error = host.call("math/add", json!({ "numbers": [1] })).await.unwrap_err();
    assert!(
        matches!(&error, CallError::PermissionDenied { reason, .. } if reason.contains("requires approval and no approval hook")),
        "{error:?}"
    );
    assert!(host.call("text/slugify", json!({ "text": "x" })).await.is_ok(), "other tools need no approval");
}

#[tokio::test]
async fn the_approval_hook_sees_the_call_and_decides() {
    let asked = Arc::new(AtomicUsize::new(0));
    let counter = asked.clone();
    let hook: ApprovalHook = Arc::new(move |request| {
        counter.fetch_add(1, Ordering::SeqCst);
        async move {
            assert_eq!(request.tool, "math/add");
            if request.input["numbers"].as_array().is_some_and(|n| n.len() <= 3) {
                Approval::Approved
            } else {
                Approval::Denied { reason: "too many numbers for a human to check".into() }
            }
        }
        .boxed()
    });
    let (_tools, host) = approval_host(Some(hook)).await;
    assert_eq!(host.call("math/add", json!({ "numbers": [1, 2] })).await.unwrap(), json!({ "value": 3.0 }));
    let error = host.call("math/add", json!({ "numbers": [1, 2, 3, 4] })).await.unwrap_err();
    assert!(
        matches!(&error, CallError::PermissionDenied { reason, .. } if reason.contains("too many numbers")),
        "{error:?}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn call_many_returns_one_result_per_call_in_order() {
    let tools = ToolsDir::with_examples();
    tools.install("hostile", "hostile", "hostile");
    tools.manifest("hostile", "hostile", "[limits]\nfuel = 1_000_000_000_000\ntimeout = \"300ms\"\n");
    let host = ToolHost::builder().root(tools.path()).max_concurrent_calls(4).build().await.unwrap();
    let calls = vec![
        ToolCall { id: "a".into(), name: "math/add".into(), input: json!({ "numbers": [1, 1] }) },
        ToolCall { id: "b".into(), name: "math/add".into(), input: json!({ "numbers": "x" }) },
        ToolCall { id: "c".into(), name: "no/such".into(), input: json!({}) },
        ToolCall { id: "d".into(), name: "hostile/spin".into(), input: json!({}) },
        ToolCall { id: "e".into(), name: "text__slugify".into(), input: json!({ "text": "Hi There" }) },
    ];
    let started = std::time::Instant::now();
    let reports = host.call_many(&Caller::new("batcher"), calls).await;
    let ids: Vec<&str> = reports.iter().map(|r| r.call_id.as_deref().unwrap()).collect();
    assert_eq!(ids, ["a", "b", "c", "d", "e"]);
    assert_eq!(reports[0].outcome, Ok(json!({ "value": 2.0 })));
    assert!(matches!(reports[1].outcome, Err(CallError::InputInvalid { .. })));
    assert!(matches!(reports[2].outcome, Err(CallError::NotFound { .. })));
    assert!(matches!(reports[3].outcome, Err(CallError::Timeout { .. })));
    assert_eq!(reports[4].outcome, Ok(json!({ "slug": "hi-there" })));
    assert!(started.elapsed() < Duration::from_secs(5));

    // Concurrency is bounded: 8 spinners with 4 slots take two rounds of the timeout.
    let spinners =
        (0..8).map(|i| ToolCall { id: i.to_string(), name: "hostile/spin".into(), input: json!({}) }).collect();
    let started = std::time::Instant::now();
    let reports = host.call_many(&Caller::new("batcher"), spinners).await;
    assert_eq!(reports.len(), 8);
    assert!(started.elapsed() >= Duration::from_millis(600), "8 calls of 300 ms on 4 slots: {:?}", started.elapsed());
}

#[tokio::test]
async fn every_attempt_is_audited_to_subscribers_and_jsonl_without_secrets() {
    let tools = ToolsDir::with_examples();
    tools.install("hostile", "hostile", "hostile");
    tools.manifest("hostile", "hostile", "[grants]\nconfig = { api_key = \"sk-audit-secret\" }\n");
    let log_dir = tempfile::tempdir().unwrap();
    let jsonl = log_dir.path().join("audit.jsonl");
    let host = ToolHost::builder()
        .root(tools.path())
        .policy(Policy::new(vec![PolicyRule {
            agent: "agent-1".into(),
            allow: vec!["math/*".into(), "hostile/*".into()],
            deny: vec![],
        }]))
        .audit_jsonl(&jsonl)
        .build()
        .await
        .unwrap();
    let mut records = host.subscribe_calls();
    let caller = Caller::new("agent-1").with_session("conversation-7");
    let _ = host.call_as(&caller, "math/add", json!({ "numbers": [1] })).await;
    let _ = host.call_as(&caller, "math/add", json!({ "numbers": "x" })).await;
    let _ = host.call_as(&caller, "text/slugify", json!({ "text": "x" })).await;
    let _ = host.call_as(&caller, "hostile/config", json!({ "name": "api_key" })).await;

    let mut outcomes = Vec::new();
    for _ in 0..4 {
        let record = tokio::time::timeout(Duration::from_secs(5), records.recv()).await.unwrap().unwrap();
        assert_eq!(record.caller, caller);
        outcomes.push((record.requested.clone(), record.outcome.clone()));
        if record.outcome == "ok" {
            assert_eq!(record.component_hash.as_ref().map(String::len), Some(64));
            assert!(record.fuel_consumed > 0 && record.input_bytes > 0 && record.output_bytes > 0);
        }
    }
    assert_eq!(
        outcomes,
        [
            ("math/add".to_owned(), "ok".to_owned()),
            ("math/add".to_owned(), "input_invalid".to_owned()),
            ("text/slugify".to_owned(), "permission_denied".to_owned()),
            ("hostile/config".to_owned(), "ok".to_owned()),
        ]
    );

    // The JSONL file gets the same records, one per line, and never a config value.
    let mut lines = Vec::new();
    for _ in 0..100 {
        lines = std::fs::read_to_string(&jsonl).unwrap_or_default().lines().map(str::to_owned).collect();
        if lines.len() == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(lines.len(), 4, "{lines:?}");
    let second: Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(second["outcome"], "input_invalid");
    assert_eq!(second["caller"], json!({ "agent": "agent-1", "session": "conversation-7" }));
    assert!(second["duration_us"].is_u64() && second["timestamp_ms"].as_u64().unwrap() > 1_700_000_000_000);
    assert!(!lines.join("\n").contains("sk-audit-secret"), "config values never reach the audit log");
}
