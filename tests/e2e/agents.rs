//! The agent-facing surface: caller policy, approval, batch calls and audit records
//! (function-calling exports are in `definitions.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::FutureExt;
use serde_json::{Value, json};
use toolhost::{
    Approval, ApprovalHook, CallError, Caller, ExportFormat, Policy, PolicyRule, Risk, SessionTools, ToolCall,
    ToolFilter, ToolHints, ToolHost,
};
use toolhost_tests::ToolsDir;

fn planner_policy() -> Policy {
    Policy::new(vec![PolicyRule::for_agent("planner").allow(["math/*", "text/slugify"]).deny(["math/divide"])])
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
    // answers first, nothing runs, and the caller learns nothing about the tool: it is
    // not found, exactly like a tool that does not exist. The report keeps the reason
    // for the operator.
    let report = host.call_detailed_as(&planner, None, "math/divide", json!({ "nonsense": true })).await;
    let Err(CallError::NotFound { name, suggestions }) = &report.outcome else { panic!("{:?}", report.outcome) };
    assert_eq!(name, "math/divide");
    assert!(!suggestions.contains(&"math/divide".to_owned()), "{suggestions:?}");
    assert!(report.hidden_because.as_deref().unwrap().contains("deny `math/divide`"), "{report:?}");
    assert_eq!(report.fuel_consumed, 0);
    let missing = host.call_as(&planner, "math/nonexistent", json!({})).await.unwrap_err();
    assert!(matches!(missing, CallError::NotFound { .. }));

    // Close names the caller may not see are never suggested; ones it may see are.
    let outside = host.call_as(&planner, "json/gt", json!({})).await.unwrap_err();
    assert_eq!(outside, CallError::NotFound { name: "json/gt".into(), suggestions: vec![] });
    let slug = host.call_as(&planner, "text/slugifyy", json!({})).await.unwrap_err();
    assert!(matches!(&slug, CallError::NotFound { suggestions, .. } if suggestions == &["text/slugify"]), "{slug:?}");
    let stranger = host.call_detailed_as(&Caller::new("stranger"), None, "math/add", json!({ "numbers": [] })).await;
    assert!(matches!(stranger.outcome, Err(CallError::NotFound { .. })));
    assert!(stranger.hidden_because.unwrap().contains("no policy rule"));

    // The policy also filters what a caller sees.
    let visible: Vec<String> = host.list(&planner).into_iter().map(|t| t.name).collect();
    assert_eq!(visible, ["math/add", "math/count_primes", "math/evaluate", "text/slugify"]);
    assert!(matches!(host.describe(&planner, "json/get"), Err(CallError::NotFound { .. })));
    assert_eq!(host.describe(&planner, "math.add").unwrap().name, "math/add");

    // Policies can change at run time.
    host.set_policy(Policy::allow_all());
    assert!(host.call_as(&Caller::new("stranger"), "math/add", json!({ "numbers": [] })).await.is_ok());
    let typo = host.call_as(&planner, "json/gt", json!({})).await.unwrap_err();
    assert!(
        matches!(&typo, CallError::NotFound { suggestions, .. } if suggestions.first().is_some_and(|s| s == "json/get")),
        "the same typo, now that the planner may see json/get: {typo:?}"
    );
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
        matches!(&error, CallError::PermissionDenied { reason, .. } if reason.contains("requires approval, and no approval hook")),
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

/// Every approval is in the call's report and audit record: why it was asked, who
/// answered (the operator's hook, the call's own approver, no one) and the answer.
#[tokio::test]
async fn approvals_and_denials_are_audited_with_who_answered() {
    let operator: ApprovalHook = Arc::new(|request| {
        async move {
            match request.input["numbers"].as_array().map(Vec::len) {
                Some(1) => Approval::Approved,
                _ => Approval::Denied { reason: "one number at a time".into() },
            }
        }
        .boxed()
    });
    let person: ApprovalHook = Arc::new(|_| async { Approval::Denied { reason: "not today".into() } }.boxed());
    let (_tools, hooked) = approval_host(Some(operator)).await;
    let (_tools2, open) = approval_host(None).await;
    let caller = Caller::new("planner");
    let with_person = toolhost::CallOptions { approver: Some(person.clone()), ..toolhost::CallOptions::default() };
    let mut records = hooked.subscribe_calls();
    let mut open_records = open.subscribe_calls();

    let approved =
        hooked.call_with(&caller, "math/add", json!({ "numbers": [1] }), &toolhost::CallOptions::default()).await;
    let denied = hooked.call_with(&caller, "math/add", json!({ "numbers": [1, 2] }), &with_person).await;
    let by_person = open.call_with(&caller, "math/add", json!({ "numbers": [1] }), &with_person).await;
    let by_nobody =
        open.call_with(&caller, "math/add", json!({ "numbers": [1] }), &toolhost::CallOptions::default()).await;
    let unasked =
        open.call_with(&caller, "text/slugify", json!({ "text": "x" }), &toolhost::CallOptions::default()).await;

    let shown = |report: &toolhost::CallReport| serde_json::to_value(&report.approval).unwrap();
    assert_eq!(
        shown(&approved),
        json!({ "asked_because": "the tool requires approval", "answered_by": "operator", "approved": true })
    );
    assert_eq!(
        shown(&denied),
        json!({ "asked_because": "the tool requires approval", "answered_by": "operator", "approved": false,
                "denied_because": "one number at a time" }),
        "the operator's hook decides before the caller's approver"
    );
    assert_eq!(shown(&by_person)["answered_by"], "caller");
    assert_eq!(shown(&by_person)["denied_because"], "not today");
    assert_eq!(shown(&by_nobody)["answered_by"], "nobody");
    assert_eq!(unasked.approval, None);
    let record = records.recv().await.unwrap();
    assert_eq!(serde_json::to_value(&record.approval).unwrap(), shown(&approved), "the audit record says the same");
    assert_eq!(records.recv().await.unwrap().outcome, "permission_denied");
    let _ = open_records.recv().await.unwrap();
    let _ = open_records.recv().await.unwrap();
    let last = open_records.recv().await.unwrap();
    assert!(last.approval.is_none() && last.requested == "text/slugify", "{last:?}");
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
        .policy(Policy::new(vec![PolicyRule::for_agent("agent-1").allow(["math/*", "hostile/*"])]))
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
            assert_eq!(
                record.component_hash.as_ref().map(|hash| hash.starts_with("blake3:") && hash.len() == 71),
                Some(true)
            );
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

#[tokio::test]
async fn a_session_narrows_its_agent_tools_at_run_time() {
    let (_tools, host) = examples_host(Policy::allow_all()).await;
    let thread = Caller::new("planner").with_session("thread-1");
    let other = Caller::new("planner").with_session("thread-2");
    let before = host.listing_version();
    host.set_session_tools("thread-1", SessionTools::only(["math/*"]));
    assert_ne!(host.listing_version(), before, "cached listings are stale");
    let names = |caller: &Caller| host.list(caller).into_iter().map(|t| t.name).collect::<Vec<_>>();
    assert!(names(&thread).iter().all(|n| n.starts_with("math/")), "{:?}", names(&thread));
    assert!(names(&other).contains(&"text/slugify".to_owned()), "other sessions keep every tool");
    let hidden = host.call_detailed_as(&thread, None, "text/slugify", json!({ "text": "a" })).await;
    assert!(matches!(hidden.outcome, Err(CallError::NotFound { .. })));
    assert!(hidden.hidden_because.unwrap().contains("not among the tools switched on"));
    assert!(host.call_as(&thread, "math/add", json!({ "numbers": [1] })).await.is_ok());

    host.set_session_tools("thread-1", SessionTools::without(["math/divide"]));
    assert!(host.call_as(&thread, "text/slugify", json!({ "text": "a" })).await.is_ok());
    assert!(matches!(host.describe(&thread, "math/divide"), Err(CallError::NotFound { .. })));
    host.clear_session_tools("thread-1");
    assert_eq!(host.session_tools("thread-1"), None);
    assert!(host.describe(&thread, "math/divide").is_ok());

    // A rule for some sessions of an agent.
    host.set_policy(Policy::new(vec![
        PolicyRule::for_agent("planner").in_sessions("review-*").allow(["text/*"]),
        PolicyRule::for_agent("planner").allow(["math/*"]),
    ]));
    let review = Caller::new("planner").with_session("review-9");
    assert!(names(&review).iter().all(|n| n.starts_with("text/")), "{:?}", names(&review));
    assert!(names(&thread).iter().all(|n| n.starts_with("math/")), "{:?}", names(&thread));
}

#[tokio::test]
async fn per_tool_manifest_settings_set_limits_risk_and_hints() {
    let tools = ToolsDir::with_examples();
    tools.manifest(
        "math",
        "math",
        "[policy]\nrisk = \"low\"\nread_only = true\nidempotent = true\nopen_world = false\n\n\
         [tools.evaluate.limits]\nfuel = 1000\n\n\
         [tools.divide.policy]\nrisk = \"critical\"\nread_only = false\ndestructive = true\n",
    );
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    let add = host.describe(&Caller::local(), "math/add").unwrap();
    assert_eq!(add.risk, Risk::Low);
    assert_eq!(
        add.hints,
        ToolHints { read_only: Some(true), destructive: None, idempotent: Some(true), open_world: Some(false) }
    );
    let divide = host.describe(&Caller::local(), "math/divide").unwrap();
    assert_eq!(
        (divide.risk, divide.hints.read_only, divide.hints.destructive),
        (Risk::Critical, Some(false), Some(true))
    );

    // One tool's limits, not its neighbours'.
    let starved = host.call("math/evaluate", json!({ "expression": "2^10 - 1" })).await.unwrap_err();
    assert!(matches!(starved, CallError::OutOfFuel { limit: 1000, .. }), "{starved:?}");
    assert!(host.call("math/add", json!({ "numbers": [1] })).await.is_ok());

    // MCP annotations and the risk in `_meta`.
    let mcp = host.export(ExportFormat::Mcp, &Caller::local());
    let definition = mcp["tools"].as_array().unwrap().iter().find(|t| t["title"] == "math/add").unwrap().clone();
    assert_eq!(
        definition["annotations"],
        json!({ "readOnlyHint": true, "idempotentHint": true, "openWorldHint": false })
    );
    assert_eq!(definition["_meta"]["toolhost/risk"], "low");
    let text = mcp["tools"].as_array().unwrap().iter().find(|t| t["title"] == "text/slugify").unwrap().clone();
    assert!(text.get("annotations").is_none(), "no hints, no annotations: {text}");

    // Filters and risk caps.
    let caller = Caller::local();
    let read_only = host.list_filtered(&caller, &ToolFilter { read_only: Some(true), ..ToolFilter::default() });
    assert!(read_only.iter().all(|t| t.name.starts_with("math/") && t.name != "math/divide"), "{read_only:?}");
    let low = host.list_filtered(&caller, &ToolFilter { max_risk: Some(Risk::Low), ..ToolFilter::default() });
    assert!(!low.is_empty() && low.iter().all(|t| t.risk == Risk::Low));
    host.set_policy(Policy::new(vec![PolicyRule::for_agent("*").allow(["*"]).max_risk(Risk::High)]));
    let capped = host.call_detailed_as(&caller, None, "math/divide", json!({ "dividend": 1, "divisor": 1 })).await;
    assert!(matches!(capped.outcome, Err(CallError::NotFound { .. })), "above the cap, the tool is hidden");
    assert!(capped.hidden_because.unwrap().contains("above the `high`"));
}

#[tokio::test]
async fn risk_above_a_rule_threshold_goes_to_the_approval_hook() {
    let tools = ToolsDir::with_examples();
    tools.manifest("math", "math", "[tools.divide.policy]\nrisk = \"high\"\n");
    let asked: Arc<std::sync::Mutex<Vec<(String, Risk, String)>>> = Arc::default();
    let seen = asked.clone();
    let hook: ApprovalHook = Arc::new(move |request| {
        seen.lock().unwrap().push((request.tool.clone(), request.risk, request.reason.clone()));
        async { Approval::Approved }.boxed()
    });
    let host = ToolHost::builder()
        .root(tools.path())
        .policy(Policy::new(vec![PolicyRule::for_agent("*").allow(["*"]).approve_above(Risk::Medium)]))
        .approval_hook(hook)
        .build()
        .await
        .unwrap();
    assert!(host.call("math/divide", json!({ "dividend": 6, "divisor": 3 })).await.is_ok());
    assert!(host.call("math/add", json!({ "numbers": [1] })).await.is_ok(), "medium: no approval asked");
    let asked = asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!((asked[0].0.as_str(), asked[0].1), ("math/divide", Risk::High));
    assert!(asked[0].2.contains("above `medium`"), "{asked:?}");
}

/// `[[tool]]` entries of the operator's policy set risk, approval and hints over what
/// the source says, everywhere a tool's policy counts: listings, exports, filters, the
/// policy's caps and thresholds, and what the approval hook is told; and they change
/// with the policy, without a reload of the tools.
#[tokio::test]
async fn the_operators_tool_entries_set_risk_approval_and_hints_over_the_source() {
    let tools = ToolsDir::with_examples();
    tools.manifest("math", "math", "[policy]\nrisk = \"low\"\nread_only = true\n");
    let asked: Arc<std::sync::Mutex<Vec<(String, Risk)>>> = Arc::default();
    let seen = asked.clone();
    let hook: ApprovalHook = Arc::new(move |request| {
        seen.lock().unwrap().push((request.tool.clone(), request.risk));
        async { Approval::Approved }.boxed()
    });
    let rules = vec![PolicyRule::for_agent("*").allow(["*"]).max_risk(Risk::High).approve_above(Risk::Medium)];
    let host = ToolHost::builder().root(tools.path()).approval_hook(hook).build().await.unwrap();
    let caller = Caller::new("anyone");
    host.set_policy(Policy::new(rules.clone()).with_tool_rules(vec![
            toolhost::ToolRule {
                read_only: Some(false),
                destructive: Some(true),
                ..toolhost::ToolRule::matching("math/divide")
            }
            .risk(Risk::High),
            toolhost::ToolRule::matching("math/count_primes").requires_approval(true),
            toolhost::ToolRule::matching("math/evaluate").risk(Risk::Critical),
            toolhost::ToolRule::matching("math/*").risk(Risk::Medium),
        ]));
    let divide = host.describe(&caller, "math/divide").unwrap();
    assert_eq!((divide.risk, divide.hints.read_only, divide.hints.destructive), (Risk::High, Some(false), Some(true)));
    let add = host.describe(&caller, "math/add").unwrap();
    assert_eq!((add.risk, add.hints.read_only), (Risk::Medium, Some(true)), "the manifest's hint stays");
    assert_eq!(host.describe(&caller, "math/count_primes").unwrap().risk, Risk::Low, "the first entry decides");
    let mcp = host.export(ExportFormat::Mcp, &caller);
    let exported = mcp["tools"].as_array().unwrap().iter().find(|t| t["title"] == "math/divide").unwrap().clone();
    assert_eq!(exported["annotations"]["destructiveHint"], true, "{exported}");
    assert_eq!(exported["_meta"]["toolhost/risk"], "high");
    let listing = host.listing();
    let listed = listing.tools.iter().find(|t| t.name == "math/divide").unwrap();
    assert_eq!(listed.risk, Risk::High, "the operator's listing says the same");
    let read_only = host.list_filtered(&caller, &ToolFilter { read_only: Some(true), ..ToolFilter::default() });
    assert!(!read_only.iter().any(|t| t.name == "math/divide"), "filters see the entry's hints");

    // Above `max_risk`: hidden. Above `approve_above`, or required: the hook is asked,
    // and told the risk the entry set.
    let evaluate = host.call_detailed_as(&caller, None, "math/evaluate", json!({ "expression": "1" })).await;
    assert!(matches!(evaluate.outcome, Err(CallError::NotFound { .. })), "{:?}", evaluate.outcome);
    host.call_as(&caller, "math/divide", json!({ "dividend": 6, "divisor": 3 })).await.unwrap();
    host.call_as(&caller, "math/count_primes", json!({ "below": 10 })).await.unwrap();
    host.call_as(&caller, "math/add", json!({ "numbers": [1] })).await.unwrap();
    assert_eq!(
        asked.lock().unwrap().clone(),
        [("math/divide".to_owned(), Risk::High), ("math/count_primes".to_owned(), Risk::Low)]
    );
    let explained = host.explain(&caller, Some("math/divide")).unwrap();
    assert!(explained[0].1.verdict.as_ref().unwrap().approval.as_ref().unwrap().contains("`high` is above `medium`"));

    // A new policy without the entries: the manifest's word again.
    host.set_policy(Policy::new(rules));
    assert_eq!(host.describe(&caller, "math/divide").unwrap().risk, Risk::Low);
}

#[tokio::test]
async fn a_dropped_call_stops_the_guest_and_is_recorded_as_cancelled() {
    let tools = ToolsDir::new();
    tools.install("hostile", "hostile", "hostile");
    tools.manifest("hostile", "hostile", "[limits]\nfuel = 1_000_000_000_000\ntimeout = \"60s\"\n");
    let host = ToolHost::builder().root(tools.path()).max_concurrent_calls(1).build().await.unwrap();
    let mut records = host.subscribe_calls();
    let spinning = host.call("hostile/busy", json!({ "iterations": 1_000_000_000_000u64 }));
    assert!(tokio::time::timeout(Duration::from_millis(300), spinning).await.is_err(), "still spinning");
    // Dropped by the timeout: the record says so, and the only call slot is free.
    let record = records.recv().await.unwrap();
    assert_eq!((record.requested.as_str(), record.outcome.as_str()), ("hostile/busy", "cancelled"));
    assert_eq!(record.input_bytes, r#"{"iterations":1000000000000}"#.len() as u64, "the input reached the guest");
    let started = std::time::Instant::now();
    assert_eq!(host.call("hostile/count_calls", json!({})).await, Ok(json!({ "calls": 1 })));
    assert!(started.elapsed() < Duration::from_secs(2), "the slot was free at once");
}

/// A host serving `tools` under `policy` on the shared store `redis`: one of the replicas
/// the quota tests count across.
async fn replica(tools: &ToolsDir, redis: &toolhost_tests::RedisServer, policy: &Policy) -> ToolHost {
    ToolHost::builder()
        .root(tools.path())
        .storage(toolhost::storage::StorageSetting::Redis(redis.url.clone()))
        .policy(policy.clone())
        .build()
        .await
        .unwrap()
}

/// Waits out the last seconds of a clock minute: quotas count calls per clock minute,
/// and a test's calls should fall in one.
pub(crate) fn clear_of_a_minute_boundary() {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
    let into_minute = now.as_secs() % 60;
    if into_minute >= 45 {
        std::thread::sleep(Duration::from_secs(61 - into_minute));
    }
}

/// Quotas per agent: calls at once and calls per minute, each refusal typed and saying
/// when to retry, another agent unslowed; counted per minute across hosts sharing a Redis
/// store; changed with the policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_over_its_quota_is_refused_and_another_is_not() {
    let tools = ToolsDir::new();
    tools.install("kv", "app", "kv");
    tools.manifest("app", "kv", "[limits]\ntimeout = \"10s\"\n");
    let redis = toolhost_tests::RedisServer::start();
    let quotas = vec![
        toolhost::AgentQuota::for_agent("slow-*").concurrent_calls(1),
        toolhost::AgentQuota::for_agent("ci").calls_per_minute(3),
    ];
    let policy = Policy::allow_all().with_quotas(quotas.clone());
    let (first, second) = (replica(&tools, &redis, &policy).await, replica(&tools, &redis, &policy).await);
    let sleep = |ms: u64| json!({ "ops": [{ "op": "sleep", "ms": ms }] });

    // One call at once: the second waits for nothing, it is refused at once.
    let slow = Caller::new("slow-agent");
    let running = tokio::spawn({
        let (host, slow) = (first.clone(), slow.clone());
        async move { host.call_as(&slow, "app/run", json!({ "ops": [{ "op": "sleep", "ms": 1500 }] })).await }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = first.call_as(&slow, "app/run", sleep(0)).await.unwrap_err();
    let CallError::QuotaExceeded { ref quota, retry_after, .. } = refused else { panic!("{refused:?}") };
    assert_eq!((quota.as_str(), retry_after), ("1 calls at once", Duration::from_secs(1)), "{refused}");
    assert_eq!(refused.kind().exit_code(), 16);
    assert!(first.call_as(&Caller::new("other"), "app/run", sleep(0)).await.is_ok(), "another agent is not slowed");
    running.await.unwrap().unwrap();
    assert!(first.call_as(&slow, "app/run", sleep(0)).await.is_ok(), "its place is given back when it ends");

    // Three calls per minute, counted in the shared store: two here, one on the other host.
    clear_of_a_minute_boundary();
    let ci = Caller::new("ci");
    first.call_as(&ci, "app/run", sleep(0)).await.unwrap();
    first.call_as(&ci, "app/run", sleep(0)).await.unwrap();
    second.call_as(&ci, "app/run", sleep(0)).await.unwrap();
    let over = second.call_as(&ci, "app/run", sleep(0)).await.unwrap_err();
    let CallError::QuotaExceeded { ref quota, retry_after, .. } = over else { panic!("{over:?}") };
    assert_eq!(quota, "3 calls per minute");
    assert!(retry_after <= Duration::from_secs(60) && retry_after > Duration::ZERO, "{retry_after:?}");
    assert!(first.call_as(&ci, "app/run", sleep(0)).await.is_err(), "the other replica counts the same");
    assert!(first.refuse_over_quota(&ci, "app/run").await.is_some(), "and says so before a call");
    assert!(first.refuse_over_quota(&Caller::new("other"), "app/run").await.is_none());

    // A new policy without the quota lets the agent call again at once.
    first.set_policy(Policy::allow_all());
    assert!(first.call_as(&ci, "app/run", sleep(0)).await.is_ok());
}

/// Fuel per minute: a call starts only while its agent burned less than its quota in the
/// clock minute, counted across hosts sharing a Redis store; another agent is not slowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_burned_its_fuel_for_the_minute_waits_for_the_next() {
    const FUEL: u64 = 10_000_000;
    let tools = ToolsDir::new();
    tools.install("hostile", "hostile", "hostile");
    let redis = toolhost_tests::RedisServer::start();
    let policy = Policy::allow_all().with_quotas(vec![toolhost::AgentQuota::for_agent("burner").fuel_per_minute(FUEL)]);
    let (first, second) = (replica(&tools, &redis, &policy).await, replica(&tools, &redis, &policy).await);
    clear_of_a_minute_boundary();
    let burner = Caller::new("burner");
    let busy = |iterations: u64| json!({ "iterations": iterations });
    let report = first.call_detailed_as(&burner, None, "hostile/busy", busy(20_000_000)).await;
    assert!(report.outcome.is_ok(), "a call starts while less is burned: {:?}", report.outcome);
    assert!(report.fuel_consumed > FUEL, "the call burned the minute's fuel: {}", report.fuel_consumed);

    let refused = second.call_as(&burner, "hostile/busy", busy(1)).await.unwrap_err();
    let CallError::QuotaExceeded { ref quota, retry_after, .. } = refused else { panic!("{refused:?}") };
    assert_eq!(quota, &format!("{FUEL} fuel per minute"), "the other replica counts the same: {refused}");
    assert!(retry_after <= Duration::from_secs(60) && retry_after > Duration::ZERO, "{retry_after:?}");
    assert!(first.refuse_over_quota(&burner, "hostile/busy").await.is_some(), "and says so before a call");
    let other = first.call_as(&Caller::new("other"), "hostile/busy", busy(20_000_000)).await;
    assert!(other.is_ok(), "another agent is not slowed: {other:?}");
    first.set_policy(Policy::allow_all());
    assert!(first.call_as(&burner, "hostile/busy", busy(1)).await.is_ok(), "without the quota it calls at once");
}
