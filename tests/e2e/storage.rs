//! `wasi:keyvalue` on both real databases: every test runs against an SQLite file and
//! against a `redis-server` started for it on loopback. Grants and isolation, a call's
//! writes all or nothing, atomic operations under concurrency, quotas as the interface's
//! errors, a component written for other hosts, restarts and `kill -9`, and the
//! operator's `toolhost storage`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use toolhost::ToolHost;
use toolhost::storage::StorageSetting;

use toolhost_tests::{RedisServer, ToolsDir, toolhost_bin};

/// Where a test's state lives.
struct Store {
    setting: StorageSetting,
    dir: TempDir,
    _redis: Option<RedisServer>,
}

impl Store {
    fn sqlite() -> Store {
        let dir = tempfile::tempdir().expect("temp dir");
        Store { setting: StorageSetting::File(dir.path().join("state.sqlite3")), dir, _redis: None }
    }

    fn redis() -> Store {
        let redis = RedisServer::start();
        Store {
            setting: StorageSetting::Redis(redis.url.clone()),
            dir: tempfile::tempdir().expect("temp dir"),
            _redis: Some(redis),
        }
    }

    /// `toolhost.toml` pointing at this store.
    fn config(&self) -> PathBuf {
        let line = match &self.setting {
            StorageSetting::File(path) => format!("path = {:?}", path.display().to_string()),
            StorageSetting::Redis(url) => format!("url = {url:?}"),
            StorageSetting::Default => unreachable!("tests use their own store"),
        };
        let path = self.dir.path().join("toolhost.toml");
        std::fs::write(&path, format!("[storage]\n{line}\n")).expect("write toolhost.toml");
        path
    }
}

/// The `kv` test guest as `app/kv` (bucket `default`, shared `team`) and as `other/kv`
/// (bucket `default`, shared `team`), and one without any grant as `none/kv`.
fn tools(app_manifest: &str) -> ToolsDir {
    let tools = ToolsDir::new();
    tools.install("kv", "app", "kv");
    tools.manifest("app", "kv", app_manifest);
    tools.install("kv", "other", "kv");
    tools.manifest("other", "kv", "[grants.storage]\nbuckets = [\"default\"]\nshared = [\"team\"]\n");
    tools.install("kv", "none", "kv");
    tools
}

const APP: &str = "[limits]\ntimeout = \"2s\"\n[grants.storage]\nbuckets = [\"default\"]\nshared = [\"team\"]\n";

async fn host(tools: &ToolsDir, store: &Store) -> ToolHost {
    ToolHost::builder().root(tools.path()).storage(store.setting.clone()).build().await.expect("host builds")
}

async fn run_ok(host: &ToolHost, tool: &str, ops: Value) -> Vec<Value> {
    let output = host.call(tool, json!({ "ops": ops })).await.unwrap_or_else(|e| panic!("{tool}: {e}"));
    output["results"].as_array().expect("results").clone()
}

async fn get(host: &ToolHost, tool: &str, bucket: &str, key: &str) -> Value {
    run_ok(host, tool, json!([{ "op": "get", "bucket": bucket, "key": key }])).await[0]["ok"].clone()
}

macro_rules! on_both_databases {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(super::Store::sqlite()).await
                }
            )*
        }
        mod redis {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $name() {
                    super::$name(super::Store::redis()).await
                }
            )*
        }
    };
}

on_both_databases!(
    only_granted_buckets_open,
    a_call_reads_its_own_writes_and_the_next_call_sees_them,
    writes_of_a_call_that_does_not_succeed_are_discarded,
    an_output_refused_at_the_boundary_discards_the_calls_writes,
    concurrent_calls_never_see_each_others_staged_writes,
    compare_and_swap_fails_only_on_the_calls_own_write,
    concurrent_increments_of_one_key_are_exact_and_never_repeat,
    compare_and_swap_never_loses_an_update,
    components_see_only_their_own_and_shared_buckets,
    each_agent_sees_its_own_contents_unless_the_bucket_is_for_all_agents,
    quotas_answer_with_the_interfaces_error,
    a_component_written_for_other_hosts_runs_unchanged,
    a_component_written_for_the_first_draft_runs_unchanged_on_the_same_data,
    state_survives_a_new_host,
    keys_are_listed_in_pages_with_the_calls_own_writes,
    batches_read_and_write_many_keys_with_the_calls_own_writes,
    the_operator_reads_changes_exports_and_imports,
);

async fn only_granted_buckets_open(store: Store) {
    let tools = tools(APP);
    let host = host(&tools, &store).await;
    let opened = run_ok(
        &host,
        "app/run",
        json!([
            { "op": "open", "bucket": "default" },
            { "op": "open", "bucket": "team" },
            { "op": "open", "bucket": "secrets" },
        ]),
    )
    .await;
    assert_eq!(opened[0], json!({ "ok": null }));
    assert_eq!(opened[1], json!({ "ok": null }));
    assert_eq!(opened[2], json!({ "error": "bucket `secrets` is not granted to this tool" }));
    let ungranted = run_ok(&host, "none/run", json!([{ "op": "open", "bucket": "default" }])).await;
    assert_eq!(ungranted[0], json!({ "error": "bucket `default` is not granted to this tool" }));
}

async fn a_call_reads_its_own_writes_and_the_next_call_sees_them(store: Store) {
    let tools = tools(APP);
    let host = host(&tools, &store).await;
    let results = run_ok(
        &host,
        "app/run",
        json!([
            { "op": "get", "bucket": "default", "key": "greeting" },
            { "op": "set", "bucket": "default", "key": "greeting", "value": "hello" },
            { "op": "get", "bucket": "default", "key": "greeting" },
            { "op": "exists", "bucket": "default", "key": "greeting" },
            { "op": "set", "bucket": "default", "key": "gone", "value": 1 },
            { "op": "delete", "bucket": "default", "key": "gone" },
            { "op": "exists", "bucket": "default", "key": "gone" },
        ]),
    )
    .await;
    assert_eq!(results[0], json!({ "ok": null }));
    assert_eq!(results[2], json!({ "ok": "hello" }));
    assert_eq!(results[3], json!({ "ok": true }));
    assert_eq!(results[6], json!({ "ok": false }));
    assert_eq!(get(&host, "app/run", "default", "greeting").await, json!("hello"));
    assert_eq!(get(&host, "app/run", "default", "gone").await, Value::Null);
}

async fn writes_of_a_call_that_does_not_succeed_are_discarded(store: Store) {
    let tools = tools(APP);
    let host = host(&tools, &store).await;
    run_ok(&host, "app/run", json!([{ "op": "set", "bucket": "default", "key": "k", "value": "committed" }])).await;
    // How each ends: a trap, fuel (spinning), the time limit (sleeping past it), a tool error.
    let endings = [("trap", 0, "trap"), ("spin", 0, "out_of_fuel"), ("return", 2500, "timeout"), ("fail", 0, "failed")];
    for (then, sleep_ms, expected) in endings {
        let script = json!({
            "ops": [
                { "op": "set", "bucket": "default", "key": "k", "value": then },
                { "op": "set", "bucket": "default", "key": format!("new-{then}"), "value": then },
                { "op": "increment", "bucket": "default", "key": "counter", "delta": 5 },
                { "op": "sleep", "ms": sleep_ms },
            ],
            "then": then,
        });
        let outcome = host.call("app/run", script).await;
        let error = outcome.expect_err("the call fails");
        assert_eq!(error.kind().as_str(), expected, "{error}");
        assert_eq!(get(&host, "app/run", "default", "k").await, json!("committed"), "after a {then}");
        assert_eq!(get(&host, "app/run", "default", &format!("new-{then}")).await, Value::Null);
    }
    // The increments' leases ended with their calls: the key is free at once.
    let started = Instant::now();
    let counted =
        run_ok(&host, "app/run", json!([{ "op": "increment", "bucket": "default", "key": "counter", "delta": 1 }]))
            .await;
    assert_eq!(counted[0], json!({ "ok": 1 }));
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "waited {:?} for the lease of a failed call",
        started.elapsed()
    );
    // The memory limit stops a call the same way.
    let script = json!({ "ops": [
        { "op": "set", "bucket": "default", "key": "k", "value": "memory" },
        { "op": "allocate", "bytes": 256u64 << 20 },
    ]});
    let error = host.call("app/run", script).await.expect_err("past the memory limit");
    assert_eq!(error.kind().as_str(), "memory_limit", "{error}");
    assert_eq!(get(&host, "app/run", "default", "k").await, json!("committed"), "after the memory limit");
    // A call cancelled by its caller (its future dropped) leaves nothing either.
    let slow = host.call(
        "app/run",
        json!({ "ops": [
            { "op": "set", "bucket": "default", "key": "cancelled", "value": true },
            { "op": "sleep", "ms": 1500 },
        ]}),
    );
    assert!(tokio::time::timeout(Duration::from_millis(300), slow).await.is_err());
    assert_eq!(get(&host, "app/run", "default", "cancelled").await, Value::Null);
}

async fn an_output_refused_at_the_boundary_discards_the_calls_writes(store: Store) {
    let tools =
        tools("[limits]\ntimeout = \"2s\"\nmax_output = \"1 KiB\"\n[grants.storage]\nbuckets = [\"default\"]\n");
    let host = host(&tools, &store).await;
    let big = "x".repeat(2000);
    let script = json!({ "ops": [
        { "op": "set", "bucket": "default", "key": "big", "value": big },
        { "op": "get", "bucket": "default", "key": "big" },
    ]});
    let error = host.call("app/run", script).await.expect_err("the output is over 1 KiB");
    assert_eq!(error.kind().as_str(), "output_too_large", "{error}");
    let exists = run_ok(&host, "app/run", json!([{ "op": "exists", "bucket": "default", "key": "big" }])).await;
    assert_eq!(exists[0]["ok"], json!(false), "the refused call's write was dropped");
}

async fn concurrent_calls_never_see_each_others_staged_writes(store: Store) {
    let tools = tools("[limits]\ntimeout = \"10s\"\n[grants.storage]\nbuckets = [\"default\"]\n");
    let host = host(&tools, &store).await;
    let writer = async {
        let written = host
            .call(
                "app/run",
                json!({ "ops": [
                    { "op": "set", "bucket": "default", "key": "staged", "value": "from the writer" },
                    { "op": "sleep", "ms": 1500 },
                ]}),
            )
            .await;
        (written, Instant::now())
    };
    // Readers all through the writer's call: the early ones may come before its `set`,
    // the later ones come after it, and none sees it.
    let readers = async {
        let mut seen = Vec::new();
        tokio::time::sleep(Duration::from_millis(200)).await;
        for _ in 0..8 {
            let read = run_ok(
                &host,
                "app/run",
                json!([
                    { "op": "get", "bucket": "default", "key": "staged" },
                    { "op": "exists", "bucket": "default", "key": "staged" },
                    { "op": "keys", "bucket": "default" },
                    { "op": "get_many", "bucket": "default", "keys": ["staged"] },
                ]),
            )
            .await;
            seen.push(read);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        (seen, Instant::now())
    };
    let ((written, written_at), (seen, last_read_at)) = tokio::join!(writer, readers);
    written.expect("the writer returns");
    assert!(last_read_at < written_at, "every read ran while the writer's call did");
    for read in seen {
        assert_eq!(read[0]["ok"], Value::Null, "{read:?}");
        assert_eq!(read[1]["ok"], json!(false), "{read:?}");
        assert_eq!(read[2]["ok"], json!([]), "{read:?}");
        assert_eq!(read[3]["ok"], json!([["staged", null]]), "{read:?}");
    }
    assert_eq!(get(&host, "app/run", "default", "staged").await, json!("from the writer"));
}

async fn compare_and_swap_fails_only_on_the_calls_own_write(store: Store) {
    let tools = tools("[limits]\ntimeout = \"10s\"\n[grants.storage]\nbuckets = [\"default\"]\n");
    let host = host(&tools, &store).await;
    // The call itself changed the key after reading it: the swap fails.
    let own = run_ok(
        &host,
        "app/run",
        json!([
            { "op": "set", "bucket": "default", "key": "c", "value": "before" },
            { "op": "swap_after_own_write", "bucket": "default", "key": "c" },
        ]),
    )
    .await;
    assert_eq!(own[1]["ok"], json!("cas-failed"), "{own:?}");
    assert_eq!(get(&host, "app/run", "default", "c").await, json!("written by the call itself"));
    // Another call's plain set cannot slip in between read and swap: its commit waits
    // until the swapping call has ended, and then wins as the later commit.
    let swapper = run_ok(
        &host,
        "app/run",
        json!([{ "op": "slow_swap", "bucket": "default", "key": "c", "value": "swapped", "ms": 1500 }]),
    );
    let setter = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        let started = Instant::now();
        run_ok(&host, "app/run", json!([{ "op": "set", "bucket": "default", "key": "c", "value": "set meanwhile" }]))
            .await;
        started.elapsed()
    };
    let (swapped, waited) = tokio::join!(swapper, setter);
    assert_eq!(swapped[0]["ok"], json!("written by the call itself"), "the swap read and replaced it: {swapped:?}");
    assert!(waited >= Duration::from_millis(600), "the set committed after {waited:?}, inside the swap's call");
    assert_eq!(get(&host, "app/run", "default", "c").await, json!("set meanwhile"));
}

async fn concurrent_increments_of_one_key_are_exact_and_never_repeat(store: Store) {
    let tools = tools(APP);
    let host = host(&tools, &store).await;
    const CALLS: i64 = 24;
    let calls = (0..CALLS).map(|_| {
        run_ok(
            &host,
            "app/run",
            json!([
                { "op": "increment", "bucket": "default", "key": "hits", "delta": 1 },
                { "op": "sleep", "ms": 2 },
            ]),
        )
    });
    let mut returned: Vec<i64> =
        futures::future::join_all(calls).await.iter().map(|r| r[0]["ok"].as_i64().expect("a count")).collect();
    returned.sort_unstable();
    assert_eq!(returned, (1..=CALLS).collect::<Vec<_>>(), "every call got its own value");
    assert_eq!(get(&host, "app/run", "default", "hits").await, json!(CALLS));
}

async fn compare_and_swap_never_loses_an_update(store: Store) {
    let tools = tools(APP);
    let host = host(&tools, &store).await;
    let calls = (0..8).map(|i| {
        let host = &host;
        async move {
            run_ok(
                host,
                "app/run",
                json!([{ "op": "append", "bucket": "default", "key": "log", "text": i.to_string() }]),
            )
            .await
        }
    });
    for result in futures::future::join_all(calls).await {
        assert!(result[0]["ok"].is_string(), "{result:?}");
    }
    let log = get(&host, "app/run", "default", "log").await;
    let mut digits: Vec<char> = log.as_str().expect("a string").chars().collect();
    digits.sort_unstable();
    assert_eq!(digits.into_iter().collect::<String>(), "01234567");
}

async fn components_see_only_their_own_and_shared_buckets(store: Store) {
    let tools = tools(APP);
    let host = host(&tools, &store).await;
    run_ok(
        &host,
        "app/run",
        json!([
            { "op": "set", "bucket": "default", "key": "mine", "value": "app" },
            { "op": "set", "bucket": "team", "key": "ours", "value": "app wrote this" },
        ]),
    )
    .await;
    assert_eq!(
        get(&host, "other/run", "default", "mine").await,
        Value::Null,
        "private buckets of the same name differ"
    );
    assert_eq!(get(&host, "other/run", "team", "ours").await, json!("app wrote this"));
    // A new version of the file keeps its data: the bucket belongs to `app/kv`, not to the bytes.
    let original = std::fs::read(tools.path().join("app/kv.wasm")).expect("read");
    let rebuilt = ToolsDir::new();
    rebuilt.write("app", "kv.wasm", &toolhost_tests::with_custom_section(&original, "version", b"2"));
    rebuilt.manifest("app", "kv", APP);
    let second = ToolHost::builder().root(rebuilt.path()).storage(store.setting.clone()).build().await.expect("host");
    assert_eq!(get(&second, "app/run", "default", "mine").await, json!("app"));
}

async fn run_as(host: &ToolHost, agent: &str, ops: Value) -> Vec<Value> {
    let caller = toolhost::Caller::new(agent);
    let output =
        host.call_as(&caller, "app/run", json!({ "ops": ops })).await.unwrap_or_else(|e| panic!("{agent}: {e}"));
    output["results"].as_array().expect("results").clone()
}

async fn each_agent_sees_its_own_contents_unless_the_bucket_is_for_all_agents(store: Store) {
    let manifest = "[grants.storage]\nbuckets = [\"default\", \"board\"]\nshared = [\"team\"]\nall_agents = [\"board\"]\nmax_keys = 2\n";
    let tools = tools(manifest);
    let host = host(&tools, &store).await;
    let write = |value: &str| {
        json!([
            { "op": "set", "bucket": "default", "key": "note", "value": value },
            { "op": "set", "bucket": "team", "key": "note", "value": value },
            { "op": "set", "bucket": "board", "key": "note", "value": value },
        ])
    };
    let read = json!([
        { "op": "get", "bucket": "default", "key": "note" },
        { "op": "get", "bucket": "team", "key": "note" },
        { "op": "get", "bucket": "board", "key": "note" },
        { "op": "keys", "bucket": "default" },
    ]);
    run_as(&host, "alice", write("alice's")).await;
    let bob = run_as(&host, "bob", read.clone()).await;
    assert_eq!(bob[0]["ok"], Value::Null, "bob never sees alice's private bucket: {bob:?}");
    assert_eq!(bob[1]["ok"], Value::Null, "nor her contents of a bucket shared between components");
    assert_eq!(bob[2]["ok"], json!("alice's"), "a bucket for all agents is one for every agent");
    assert_eq!(bob[3]["ok"], json!([]), "nor her keys");
    run_as(&host, "bob", write("bob's")).await;
    let alice = run_as(&host, "alice", read.clone()).await;
    assert_eq!((&alice[0]["ok"], &alice[1]["ok"]), (&json!("alice's"), &json!("alice's")), "bob overwrote nothing");
    assert_eq!(alice[2]["ok"], json!("bob's"));
    // An agent id is data: one spelled like another agent's key, or like another kind of
    // bucket, reaches its own contents only.
    for forger in ["alice:default", "alice@x", "%61lice", "shared", "app/kv"] {
        let seen = run_as(&host, forger, read.clone()).await;
        assert_eq!((&seen[0]["ok"], &seen[1]["ok"]), (&Value::Null, &Value::Null), "{forger}: {seen:?}");
    }
    // Quotas count per agent: alice's two keys leave bob room for his own two.
    run_as(&host, "alice", json!([{ "op": "set", "bucket": "default", "key": "second", "value": 1 }])).await;
    let third = run_as(&host, "alice", json!([{ "op": "set", "bucket": "default", "key": "third", "value": 1 }])).await;
    assert!(third[0]["error"].as_str().is_some_and(|e| e.contains("over the limit of 2")), "{third:?}");
    let bobs = run_as(&host, "bob", json!([{ "op": "set", "bucket": "default", "key": "second", "value": 1 }])).await;
    assert_eq!(bobs[0], json!({ "ok": null }), "{bobs:?}");
    // A bucket named for all agents that the manifest does not grant is a load error.
    let stray = self::tools("[grants.storage]\nbuckets = [\"default\"]\nall_agents = [\"board\"]\n");
    let refused = self::host(&stray, &store).await;
    let errors = refused.load_errors();
    assert!(errors.iter().any(|e| e.to_string().contains("`all_agents` names `board`")), "{errors:?}");
}

async fn quotas_answer_with_the_interfaces_error(store: Store) {
    let tools = tools(
        "[grants.storage]\nbuckets = [\"default\"]\nmax_keys = 3\nmax_value = \"100 B\"\nmax_bytes = \"1 KiB\"\n",
    );
    let host = host(&tools, &store).await;
    let results = run_ok(
        &host,
        "app/run",
        json!([
            { "op": "fill", "bucket": "default", "prefix": "big", "count": 1, "size": 101 },
            { "op": "fill", "bucket": "default", "prefix": "k", "count": 3, "size": 10 },
            { "op": "fill", "bucket": "default", "prefix": "more", "count": 1, "size": 10 },
            { "op": "get", "bucket": "default", "key": "k0" },
        ]),
    )
    .await;
    assert_eq!(
        results[0]["error"],
        json!("storage: a value of 101 bytes is over this component's limit of 100 bytes per value")
    );
    assert_eq!(results[1], json!({ "ok": null }));
    assert_eq!(results[2]["error"], json!("storage: storage quota: this write would make 4 keys, over the limit of 3"));
    assert!(results[3]["ok"].is_null(), "k0 holds bytes, not JSON: {results:?}");
    // The call went on after the refusals and its accepted writes committed.
    let keys = run_ok(&host, "app/run", json!([{ "op": "keys", "bucket": "default" }])).await;
    assert_eq!(keys[0]["ok"], json!(["k0", "k1", "k2"]));
    // Bytes: 3 keys of 2 + 10 bytes = 36; values of 100 bytes fill the rest.
    let bytes = run_ok(
        &host,
        "app/run",
        json!([
            { "op": "delete", "bucket": "default", "key": "k0" },
            { "op": "fill", "bucket": "default", "prefix": "z", "count": 1, "size": 100 },
            { "op": "fill", "bucket": "default", "prefix": "y", "count": 1, "size": 100 },
        ]),
    )
    .await;
    assert_eq!(bytes[1], json!({ "ok": null }));
    assert_eq!(bytes[2]["error"], json!("storage: storage quota: this write would make 4 keys, over the limit of 3"));

    // The bytes quota (keys and values together), with room for keys, for a component
    // of its own (`bytes/kv`, nothing stored yet).
    let tools = ToolsDir::new();
    tools.install("kv", "bytes", "kv");
    tools.manifest(
        "bytes",
        "kv",
        "[limits]\ntimeout = \"10s\"\n[grants.storage]\nbuckets = [\"default\"]\nmax_keys = 100\n\
         max_value = \"1 KiB\"\nmax_bytes = \"1 KiB\"\n",
    );
    let host = self::host(&tools, &store).await;
    // Two calls that each fit alone stage 602 bytes at once: the commit checks again,
    // atomically, and only one passes.
    let racing = |prefix: &'static str| {
        host.call(
            "bytes/run",
            json!({ "ops": [
                { "op": "fill", "bucket": "default", "prefix": prefix, "count": 1, "size": 600 },
                { "op": "sleep", "ms": 1500 },
            ]}),
        )
    };
    let (first, second) = tokio::join!(racing("p"), racing("q"));
    let refused = match (first, second) {
        (Ok(_), Err(refused)) | (Err(refused), Ok(_)) => refused,
        other => panic!("exactly one racing call commits: {other:?}"),
    };
    assert_eq!(refused.kind().as_str(), "failed", "{refused}");
    assert!(refused.to_string().contains("storage quota"), "{refused}");
    let keys = run_ok(&host, "bytes/run", json!([{ "op": "keys", "bucket": "default" }])).await;
    assert!(keys[0]["ok"] == json!(["p0"]) || keys[0]["ok"] == json!(["q0"]), "{keys:?}");
    run_ok(&host, "bytes/run", json!([{ "op": "delete_many", "bucket": "default", "keys": ["p0", "q0"] }])).await;
    // 10 keys of 2 + 100 bytes make 1020 of 1024; 7 more are refused, 4 fit exactly.
    let filled = run_ok(
        &host,
        "bytes/run",
        json!([
            { "op": "fill", "bucket": "default", "prefix": "a", "count": 10, "size": 100 },
            { "op": "fill", "bucket": "default", "prefix": "b", "count": 1, "size": 5 },
            { "op": "fill", "bucket": "default", "prefix": "c", "count": 1, "size": 2 },
        ]),
    )
    .await;
    assert_eq!(filled[0], json!({ "ok": null }));
    assert_eq!(
        filled[1]["error"],
        json!("storage: storage quota: this write would make 1027 bytes, over the limit of 1024")
    );
    assert_eq!(filled[2], json!({ "ok": null }));
    // What was committed counts for the next call.
    let next = run_ok(
        &host,
        "bytes/run",
        json!([{ "op": "fill", "bucket": "default", "prefix": "d", "count": 1, "size": 1 }]),
    )
    .await;
    assert_eq!(
        next[0]["error"],
        json!("storage: storage quota: this write would make 1027 bytes, over the limit of 1024")
    );
}

async fn a_component_written_for_other_hosts_runs_unchanged(store: Store) {
    let tools = ToolsDir::new();
    tools.install("plain_counter", "pages", "counter");
    tools.manifest("pages", "counter", "[grants]\nstorage = [\"default\"]\n");
    let host = host(&tools, &store).await;
    for expected in 1..=3 {
        assert_eq!(host.call("pages/hit", json!({ "page": "/home" })).await.expect("hit"), json!(expected));
    }
    assert_eq!(host.call("pages/hit", json!({ "page": "/about" })).await.expect("hit"), json!(1));
    let ungranted = ToolsDir::new();
    ungranted.install("plain_counter", "pages", "counter");
    let host = ToolHost::builder().root(ungranted.path()).storage(store.setting.clone()).build().await.expect("host");
    let refused = host.call("pages/hit", json!({ "page": "/home" })).await.expect_err("no grant");
    assert!(refused.to_string().contains("AccessDenied"), "{refused}");
}

async fn a_component_written_for_the_first_draft_runs_unchanged_on_the_same_data(store: Store) {
    let tools = ToolsDir::new();
    tools.install("plain_counter_draft", "pages", "counter");
    tools.manifest("pages", "counter", "[grants]\nstorage = [\"default\"]\n");
    let host = host(&tools, &store).await;
    for expected in 1..=3u64 {
        assert_eq!(host.call("pages/hit", json!({ "page": "/home" })).await.expect("hit"), json!(expected));
    }
    for page in ["/p0", "/p1", "/p2"] {
        host.call("pages/hit", json!({ "page": page })).await.expect("hit");
    }
    // More keys than one page of list-keys (whose cursor is a number in this draft).
    let fill = json!({ "ops": [
        { "op": "fill", "bucket": "default", "prefix": "/q", "count": 1200, "size": 1, "batch": true },
    ]});
    // The draft2 SDK guest under the same identity fills the same bucket.
    tools.install("kv", "pages", "counter");
    tools.manifest("pages", "counter", "[limits]\ntimeout = \"30s\"\n[grants]\nstorage = [\"default\"]\n");
    assert!(host.reload().await.errors.is_empty());
    host.call("pages/run", fill).await.expect("fill");
    run_ok(&host, "pages/run", json!([{ "op": "increment", "bucket": "default", "key": "/neg", "delta": -5 }])).await;
    tools.install("plain_counter_draft", "pages", "counter");
    assert!(host.reload().await.errors.is_empty());
    // The draft's numbers are unsigned: the increment fails, and a guest that ignores the
    // failure and returns commits nothing.
    let refused = host.call("pages/hit", json!({ "page": "/neg" })).await.expect_err("below 0");
    assert!(refused.to_string().contains("makes -4, below 0"), "{refused}");
    assert_eq!(host.call("pages/hit-quietly", json!({ "page": "/neg" })).await.expect("ignored"), json!(0));
    let pages = host.call("pages/pages", json!({})).await.expect("pages");
    let pages: Vec<String> = serde_json::from_value(pages).expect("a list");
    assert_eq!(pages.len(), 1 + 3 + 1 + 1200, "every key, over several pages");
    assert!(pages.windows(2).all(|w| w[0] < w[1]), "in key order, none twice");
    let counts = host.call("pages/counts", json!({ "pages": ["/home", "/p1", "/never"] })).await.expect("counts");
    assert_eq!(counts, json!([3, 1, 0]));
    tools.install("kv", "pages", "counter");
    assert!(host.reload().await.errors.is_empty());
    assert_eq!(get(&host, "pages/run", "default", "/neg").await, json!(-5), "the refused increments left it");
    let ungranted = ToolsDir::new();
    ungranted.install("plain_counter_draft", "pages", "counter");
    let host = ToolHost::builder().root(ungranted.path()).storage(store.setting.clone()).build().await.expect("host");
    let refused = host.call("pages/hit", json!({ "page": "/home" })).await.expect_err("no grant");
    assert!(refused.to_string().contains("AccessDenied"), "{refused}");
}

async fn state_survives_a_new_host(store: Store) {
    let tools = tools(APP);
    {
        let first = host(&tools, &store).await;
        run_ok(&first, "app/run", json!([{ "op": "set", "bucket": "default", "key": "kept", "value": [1, 2, 3] }]))
            .await;
    }
    let second = host(&tools, &store).await;
    assert_eq!(get(&second, "app/run", "default", "kept").await, json!([1, 2, 3]));
}

async fn keys_are_listed_in_pages_with_the_calls_own_writes(store: Store) {
    // Not a test of time limits: room for a slow machine to write 1500 keys one by one.
    let tools = tools("[limits]\ntimeout = \"60s\"\n[grants.storage]\nbuckets = [\"default\"]\n");
    let host = host(&tools, &store).await;
    run_ok(&host, "app/run", json!([{ "op": "fill", "bucket": "default", "prefix": "a", "count": 1000, "size": 1 }]))
        .await;
    run_ok(
        &host,
        "app/run",
        json!([{ "op": "fill", "bucket": "default", "prefix": "a", "count": 1500, "size": 1, "batch": true }]),
    )
    .await;
    let results = run_ok(
        &host,
        "app/run",
        json!([
            { "op": "delete", "bucket": "default", "key": "a0" },
            { "op": "set", "bucket": "default", "key": "b", "value": 1 },
            { "op": "keys", "bucket": "default" },
        ]),
    )
    .await;
    let keys: Vec<String> = serde_json::from_value(results[2]["ok"].clone()).expect("keys");
    assert_eq!(keys.len(), 1500, "1500 - a0 + b");
    assert!(!keys.contains(&"a0".to_owned()) && keys.contains(&"b".to_owned()) && keys.contains(&"a1499".to_owned()));
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "in key order across pages");
}

async fn batches_read_and_write_many_keys_with_the_calls_own_writes(store: Store) {
    let tools = tools("[grants.storage]\nbuckets = [\"default\"]\nmax_keys = 3\n");
    let host = host(&tools, &store).await;
    run_ok(&host, "app/run", json!([{ "op": "set", "bucket": "default", "key": "committed", "value": 0 }])).await;
    let results = run_ok(
        &host,
        "app/run",
        json!([
            { "op": "set_many", "bucket": "default", "values": [["a", 1], ["b", 2], ["a", 3]] },
            { "op": "get_many", "bucket": "default", "keys": ["a", "b", "committed", "missing"] },
            { "op": "delete_many", "bucket": "default", "keys": ["b", "committed", "missing"] },
            { "op": "get_many", "bucket": "default", "keys": ["b", "committed"] },
            // Three keys at most: `a` and two of these fit, the third is refused with
            // the interface's error and the call goes on.
            { "op": "set_many", "bucket": "default", "values": [["c", 4], ["d", 5], ["e", 6]] },
        ]),
    )
    .await;
    assert_eq!(results[0], json!({ "ok": null }));
    assert_eq!(results[1]["ok"], json!([["a", 3], ["b", 2], ["committed", 0], ["missing", null]]));
    assert_eq!(results[2], json!({ "ok": null }));
    assert_eq!(results[3]["ok"], json!([["b", null], ["committed", null]]));
    assert_eq!(results[4]["error"], json!("storage: storage quota: this write would make 4 keys, over the limit of 3"));
    let next = run_ok(
        &host,
        "app/run",
        json!([
            { "op": "get_many", "bucket": "default", "keys": ["a", "b", "c", "d", "e", "committed"] },
            { "op": "keys", "bucket": "default" },
        ]),
    )
    .await;
    assert_eq!(next[0]["ok"], json!([["a", 3], ["b", null], ["c", 4], ["d", 5], ["e", null], ["committed", null]]));
    assert_eq!(next[1]["ok"], json!(["a", "c", "d"]));
}

async fn the_operator_reads_changes_exports_and_imports(store: Store) {
    let tools = tools(APP);
    let host = host(&tools, &store).await;
    run_ok(
        &host,
        "app/run",
        json!([
            { "op": "set", "bucket": "default", "key": "note", "value": "hi" },
            { "op": "set", "bucket": "team", "key": "shared-note", "value": 7 },
        ]),
    )
    .await;
    let config = store.config();
    let toolhost = |args: &[&str], stdin: Option<&str>| {
        let mut command = Command::new(toolhost_bin());
        command.arg("--config").arg(&config).arg("storage").args(args);
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = command.spawn().expect("run toolhost");
        if let Some(input) = stdin {
            use std::io::Write;
            child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write stdin");
        }
        drop(child.stdin.take());
        let output = child.wait_with_output().expect("toolhost storage");
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (code, listed, _) = toolhost(&["list"], None);
    assert_eq!(code, Some(0));
    assert!(listed.contains("app/kv@local:default\t1 keys\t8 bytes"), "{listed}");
    assert!(listed.contains("shared@local:team\t1 keys\t12 bytes"), "{listed}");
    assert_eq!(toolhost(&["get", "app/kv@local:default", "note"], None).1, "\"hi\"");
    let (code, _, error) = toolhost(&["get", "app/kv@local:default", "absent"], None);
    assert_ne!(code, Some(0));
    assert!(error.contains("no key `absent`"), "{error}");
    let (code, _, error) = toolhost(&["get", "not a bucket", "k"], None);
    assert_ne!(code, Some(0));
    assert!(error.contains("is not a bucket"), "{error}");
    assert_eq!(toolhost(&["set", "app/kv@local:default", "note", "\"changed\""], None).0, Some(0));
    assert_eq!(get(&host, "app/run", "default", "note").await, json!("changed"));
    let (_, export, _) = toolhost(&["export", "app/kv"], None);
    let exported: Value = serde_json::from_str(&export).expect("export is JSON");
    assert_eq!(exported["buckets"], json!({ "app/kv@local:default": { "note": { "text": "\"changed\"" } } }));
    assert_eq!(toolhost(&["delete", "app/kv@local:default", "note"], None).0, Some(0));
    assert_eq!(get(&host, "app/run", "default", "note").await, Value::Null);
    let (code, _, _) = toolhost(&["import", "-"], Some(&export));
    assert_eq!(code, Some(0));
    assert_eq!(get(&host, "app/run", "default", "note").await, json!("changed"), "restored from the export");
    let (code, _, error) = toolhost(&["import", "-"], Some("{\"format\": \"other\"}"));
    assert_ne!(code, Some(0));
    assert!(error.contains("not a toolhost storage export"), "{error}");

    // Data kept before buckets were per agent is under the bucket every agent sees
    // (`app/kv:default`); `storage move` hands it to one agent.
    assert_eq!(toolhost(&["set", "app/kv:default", "legacy", "\"before\""], None).0, Some(0));
    assert_eq!(get(&host, "app/run", "default", "legacy").await, Value::Null, "not the agent's own");
    let (code, _, said) = toolhost(&["move", "app/kv:default", "app/kv@local:default"], None);
    assert_eq!(code, Some(0), "{said}");
    assert!(said.contains("app/kv:default -> app/kv@local:default: 1 keys"), "{said}");
    assert_eq!(get(&host, "app/run", "default", "legacy").await, json!("before"));
    assert_eq!(get(&host, "app/run", "default", "note").await, json!("changed"), "its own keys stay");
    assert_eq!(toolhost(&["keys", "app/kv:default"], None).1, "", "moved, not copied");

    // A value is data: piped, its bytes as stored; on a terminal (a pty by `script`),
    // its control characters escaped, so it cannot write the clipboard (OSC 52).
    let evil = "\u{1b}]52;c;aGVsbG8=\u{7}\u{1b}[2Jtext";
    assert_eq!(toolhost(&["set", "app/kv@local:default", "evil", evil], None).0, Some(0));
    assert_eq!(toolhost(&["get", "app/kv@local:default", "evil"], None).1, evil, "a pipe gets the bytes");
    let quote = |arg: &str| format!("'{}'", arg.replace('\'', "'\\''"));
    let line = [toolhost_bin().display().to_string(), "--config".into(), config.display().to_string()]
        .iter()
        .map(|arg| quote(arg))
        .chain(["storage", "get", "app/kv@local:default", "evil"].map(quote))
        .collect::<Vec<_>>()
        .join(" ");
    let on_terminal = Command::new("script").args(["-qec", &line, "/dev/null"]).output().expect("script");
    let shown = String::from_utf8_lossy(&on_terminal.stdout);
    assert!(on_terminal.status.success(), "{shown}");
    assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "raw control characters: {shown:?}");
    assert!(shown.contains("\\u{1b}]52;c;aGVsbG8=\\u{7}\\u{1b}[2Jtext"), "{shown:?}");
}

/// `kill -9` of a server in the middle of a stream of calls, each adding a key: every
/// call that was answered is in the database afterwards.
#[test]
fn a_killed_server_loses_no_answered_call() {
    let store = Store::sqlite();
    let tools = tools(APP);
    let mut command = Command::new(toolhost_bin());
    command.arg("--config").arg(store.config()).arg("--no-cache").arg("serve").arg(tools.path());
    let mut session = toolhost_tests::wire::StdioSession::start(command);
    let mut answered = Vec::new();
    let writer_started = Instant::now();
    for i in 0..200 {
        let arguments = json!({ "ops": [{ "op": "set", "bucket": "default", "key": format!("k{i:03}"), "value": i }] });
        let answer = session.call("app/run", &arguments);
        assert!(answer["result"]["isError"] != json!(true), "{answer}");
        answered.push(format!("k{i:03}"));
        if i == 150 {
            // The next request goes out and the server dies while it may be committing.
            let next = json!({ "ops": [{ "op": "set", "bucket": "default", "key": "k151", "value": 151 }] });
            session.send(&toolhost_tests::wire::call_request(9999, "app/run", &next));
            let killed = Command::new("kill").args(["-9", &session.pid().to_string()]).status().expect("kill");
            assert!(killed.success());
            break;
        }
    }
    drop(session);
    assert!(writer_started.elapsed() < Duration::from_secs(60));
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let host = host(&tools, &store).await;
        let keys = run_ok(&host, "app/run", json!([{ "op": "keys", "bucket": "default" }])).await;
        let keys: Vec<String> = serde_json::from_value(keys[0]["ok"].clone()).expect("keys");
        for key in &answered {
            assert!(keys.contains(key), "answered write {key} lost; {} keys survive", keys.len());
        }
    });
}

/// `host.caller` answers only a component granted `[grants] caller = true`: the agent
/// and session of the call; `inspect` shows the grant.
#[tokio::test]
async fn the_caller_reaches_a_component_only_as_a_grant() {
    let tools = ToolsDir::new();
    tools.install("kv", "told", "kv");
    tools.manifest("told", "kv", "[grants]\ncaller = true\n");
    tools.install("kv", "untold", "kv");
    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    let alice = toolhost::Caller::new("alice").with_session("thread-7");
    let caller_of = |tool: &'static str| {
        let host = &host;
        let alice = &alice;
        async move {
            let output = host.call_as(alice, tool, json!({ "ops": [{ "op": "caller" }] })).await.expect(tool);
            output["results"][0]["ok"].clone()
        }
    };
    assert_eq!(caller_of("told/run").await, json!({ "agent": "alice", "session": "thread-7" }));
    assert_eq!(caller_of("untold/run").await, Value::Null, "deny by default");
    let inspected = Command::new(toolhost_bin())
        .arg("inspect")
        .arg(tools.path().join("told/kv.wasm"))
        .output()
        .expect("toolhost inspect");
    let shown: Value = serde_json::from_slice(&inspected.stdout).expect("inspect prints JSON");
    assert_eq!(shown["capabilities"]["caller"], json!({ "imported": true, "granted": true }), "{shown}");
}
