//! Per-call limits (fuel, time, memory, stack, output, logs): each hostile guest gets its
//! exact typed error, and a normal call right after it succeeds, on the code of either
//! compiler (Winch's baseline code and Cranelift's optimized code).

use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::{CallError, MemoryResource, Tier, Tiering, ToolHost};
use toolhost_tests::{TIERS, ToolsDir, builder_on};

/// A host with the examples and the hostile toolbox under `manifest`, on the code of
/// one compiler.
async fn hostile_host(manifest: &str, tiering: Tiering) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::with_examples();
    tools.install("hostile", "hostile", "hostile");
    tools.manifest("hostile", "hostile", manifest);
    let host = builder_on(tiering).root(tools.path()).build().await.expect("host builds");
    let tier = host.snapshot().tools["hostile/spin"].source.component().unwrap().tier();
    let expected = if tiering == Tiering::BaselineOnly { Tier::Baseline } else { Tier::Optimized };
    assert_eq!(tier, Some(expected), "{tiering:?}");
    assert_eq!(host.load_errors(), vec![]);
    (tools, host)
}

async fn assert_still_serving(host: &ToolHost) {
    assert_eq!(host.call("math/add", json!({ "numbers": [20, 22] })).await.unwrap(), json!({ "value": 42.0 }));
    assert_eq!(host.call("hostile/echo", json!({ "ok": true })).await.unwrap(), json!({ "ok": true }));
}

#[tokio::test]
async fn an_endless_loop_runs_out_of_fuel_and_reports_what_it_burned() {
    for tiering in TIERS {
        let (_tools, host) = hostile_host("[limits]\nfuel = 20_000_000\ntimeout = \"30s\"\n", tiering).await;
        let report = host.call_detailed("hostile/spin", json!({})).await;
        assert_eq!(report.outcome, Err(CallError::OutOfFuel { tool: "hostile/spin".into(), limit: 20_000_000 }));
        assert_eq!(report.fuel_consumed, 20_000_000, "the whole budget was burned");
        let ok = host.call_detailed("hostile/echo", json!({})).await;
        assert!(
            ok.fuel_consumed > 0 && ok.fuel_consumed < 20_000_000,
            "fuel reported on success: {}",
            ok.fuel_consumed
        );
        assert_still_serving(&host).await;
    }
}

#[tokio::test]
async fn an_endless_loop_with_fuel_to_burn_is_stopped_by_the_clock() {
    for tiering in TIERS {
        let (_tools, host) =
            hostile_host("[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"300ms\"\n", tiering).await;
        let started = Instant::now();
        let error = host.call("hostile/spin", json!({})).await.unwrap_err();
        let elapsed = started.elapsed();
        assert_eq!(error, CallError::Timeout { tool: "hostile/spin".into(), limit: Duration::from_millis(300) });
        assert!(elapsed >= Duration::from_millis(300), "stopped at the deadline, not before: {elapsed:?}");
        assert_still_serving(&host).await;
    }
}

#[tokio::test]
async fn a_memory_bomb_hits_the_memory_limit() {
    for tiering in TIERS {
        let (_tools, host) = hostile_host("[limits]\nmemory = \"16 MiB\"\n", tiering).await;
        let error = host.call("hostile/memory_bomb", json!({})).await.unwrap_err();
        assert_eq!(
            error,
            CallError::MemoryLimit {
                tool: "hostile/memory_bomb".into(),
                resource: MemoryResource::LinearMemory,
                limit: 16 << 20
            }
        );
        assert_still_serving(&host).await;
    }
}

#[tokio::test]
async fn unbounded_recursion_is_a_trap_not_a_crash() {
    for tiering in TIERS {
        let (_tools, host) = hostile_host("", tiering).await;
        let error = host.call("hostile/recurse", json!({})).await.unwrap_err();
        assert!(matches!(&error, CallError::Trap { tool, .. } if tool == "hostile/recurse"), "{error:?}");
        assert_still_serving(&host).await;
    }
}

#[tokio::test]
async fn output_over_the_limit_is_refused() {
    for tiering in TIERS {
        let (_tools, host) = hostile_host("[limits]\nmax_output = \"4 KiB\"\n", tiering).await;
        let fits = host.call("hostile/huge_output", json!({ "bytes": 1000 })).await.unwrap();
        assert_eq!(fits["text"].as_str().unwrap().len(), 1000);
        let error = host.call("hostile/huge_output", json!({ "bytes": 100_000 })).await.unwrap_err();
        assert_eq!(error, CallError::OutputTooLarge { tool: "hostile/huge_output".into(), size: 100_011, limit: 4096 });
        assert_still_serving(&host).await;
    }
}

#[tokio::test]
async fn a_log_flood_is_truncated_with_a_note_and_the_call_succeeds() {
    for tiering in TIERS {
        let (_tools, host) = hostile_host("[limits]\nmax_log = \"8 KiB\"\n", tiering).await;
        let report = host.call_detailed("hostile/log_flood", json!({ "bytes": 2_000_000 })).await;
        assert_eq!(report.outcome, Ok(json!({})));
        let captured = &report.captured;
        let kept =
            captured.stdout.len() + captured.stderr.len() + captured.log.iter().map(|l| l.message.len()).sum::<usize>();
        assert!(kept <= 8 << 10, "kept {kept} bytes");
        assert!(captured.dropped_bytes > 1_900_000, "dropped {}", captured.dropped_bytes);
        assert!(captured.stdout.starts_with("flood flood"), "{:?}", &captured.stdout[..20.min(captured.stdout.len())]);
        assert_still_serving(&host).await;
    }
}

/// Bytes kept of everything a call wrote besides its result.
fn kept_bytes(captured: &toolhost::CapturedOutput) -> u64 {
    let log: usize = captured.log.iter().map(|line| line.message.len()).sum();
    (captured.stdout.len() + captured.stderr.len() + log) as u64
}

#[tokio::test]
async fn kept_and_dropped_output_add_up_to_what_the_guest_wrote() {
    let (_tools, host) = hostile_host("[limits]\nmax_log = \"8 KiB\"\n", Tiering::OptimizedOnly).await;
    // Many short lines whose two-byte characters the budget cuts, then one huge line
    // that is dropped whole; and a few lines, then one huge line cut on a character.
    for (lines, line_bytes, huge) in [(1000, 101, 1_000_000), (3, 11, 30_000), (0, 0, 3_000_000), (10, 0, 0)] {
        let input = json!({ "lines": lines, "line_bytes": line_bytes, "huge": huge });
        let report = host.call_detailed("hostile/log_lines", input.clone()).await;
        let sent = report.outcome.as_ref().expect("the call succeeds")["bytes"].as_u64().unwrap();
        let captured = &report.captured;
        assert_eq!(kept_bytes(captured) + captured.dropped_bytes, sent, "{input}");
        assert!(kept_bytes(captured) <= 8 << 10, "{input}: kept {}", kept_bytes(captured));
    }
    let report = host.call_detailed("hostile/log_lines", json!({ "lines": 3, "line_bytes": 11, "huge": 30_000 })).await;
    let last = report.captured.log.last().expect("the huge line is kept in part");
    assert!(last.level == "warn" && last.message.starts_with("€€€") && last.message.len() < 8 << 10, "{last:?}");
    assert_still_serving(&host).await;
}

#[tokio::test]
async fn random_bytes_past_the_memory_limit_are_refused_before_the_host_allocates_them() {
    let (_tools, host) = hostile_host("[limits]\nmemory = \"4 MiB\"\n", Tiering::OptimizedOnly).await;
    let granted = host.call("hostile/random_bytes", json!({ "bytes": 1 << 20 })).await;
    assert_eq!(granted, Ok(json!({ "bytes": 1 << 20 })));
    // Without the bound the host would build 512 MiB of random bytes and only then find
    // the guest cannot take them (a memory-limit error).
    let error = host.call("hostile/random_bytes", json!({ "bytes": 512u64 << 20 })).await.unwrap_err();
    let CallError::Trap { message, .. } = &error else { panic!("expected a trap, got {error:?}") };
    assert!(message.contains("exceeds limit 4194304"), "{message}");
    assert_still_serving(&host).await;
}

#[tokio::test]
async fn ten_hostile_calls_at_once_do_not_starve_a_normal_call() {
    for tiering in TIERS {
        let (_tools, host) = hostile_host("[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"3s\"\n", tiering).await;
        let spinners: Vec<_> = (0..10)
            .map(|_| {
                let host = host.clone();
                tokio::spawn(async move { host.call("hostile/spin", json!({})).await })
            })
            .collect();
        // Let the spinners occupy every executor thread first.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = Instant::now();
        let normal = host.call("math/add", json!({ "numbers": [1, 1] })).await;
        let elapsed = started.elapsed();
        assert_eq!(normal, Ok(json!({ "value": 2.0 })));
        // math/add runs under the default 5 s limit; it must finish well inside it while
        // the spinners still run (they stop only at 3 s).
        assert!(elapsed < Duration::from_secs(2), "a normal call waited {elapsed:?} behind spinning guests");
        for spinner in spinners {
            assert!(matches!(spinner.await.unwrap(), Err(CallError::Timeout { .. })));
        }
        assert_still_serving(&host).await;
    }
}
