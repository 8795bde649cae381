//! The stdlib's `task/*` tools (`stdlib/task`), built from source and installed with their
//! shipped manifest, on a host keeping its state in a temporary SQLite file: normal use,
//! every `list` filter, ids that never repeat (after deletes, under concurrency, across
//! a restart), refusals (unknown ids, bad dates, unknown fields, no storage grant) and
//! limits (schema bounds, the storage quota).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde_json::{Value, json};
use tempfile::TempDir;
use toolhost::storage::StorageSetting;
use toolhost::{CallError, Tiering, ToolHost};

use toolhost_tests::{ToolsDir, builder_on, shipped_manifest};

/// `task/task.wasm` in a tools directory, with `manifest` beside it (none if `None`),
/// and a storage file of its own.
struct Fixture {
    tools: ToolsDir,
    state: TempDir,
}

impl Fixture {
    fn new(manifest: Option<&str>) -> Fixture {
        let tools = ToolsDir::new();
        tools.install("stdlib-task", "task", "task");
        if let Some(manifest) = manifest {
            tools.manifest("task", "task", manifest);
        }
        Fixture { tools, state: tempfile::tempdir().expect("temp dir") }
    }

    fn shipped() -> Fixture {
        Fixture::new(Some(&shipped_manifest("task")))
    }

    fn database(&self) -> PathBuf {
        self.state.path().join("state.sqlite3")
    }

    /// A host on this directory and storage file; a second one is a restart.
    async fn host(&self) -> ToolHost {
        let host = builder_on(Tiering::BaselineOnly)
            .root(self.tools.path())
            .storage(StorageSetting::File(self.database()))
            .build()
            .await
            .expect("host builds");
        assert_eq!(host.load_errors(), vec![], "task/* loads with its manifest");
        host
    }
}

async fn call(host: &ToolHost, tool: &str, input: Value) -> Value {
    host.call(&format!("task/{tool}"), input.clone()).await.unwrap_or_else(|e| panic!("task/{tool} {input}: {e}"))
}

/// Which way a call was refused, and the message: a schema violation with the pointer to
/// the value at fault, the tool's own refusal (about the whole input) as the tool said it.
fn refusal(result: Result<Value, CallError>) -> (&'static str, String) {
    match result {
        Err(CallError::InputInvalid { violations, .. }) => {
            let message = |v: &toolhost::Violation| if v.pointer.is_empty() { v.reason.clone() } else { v.to_string() };
            ("invalid", violations.iter().map(message).collect::<Vec<_>>().join("; "))
        }
        Err(CallError::Failed { message, .. }) => ("failed", message),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

async fn refused(host: &ToolHost, tool: &str, input: Value) -> (&'static str, String) {
    refusal(host.call(&format!("task/{tool}"), input).await)
}

fn ids(listing: &Value) -> Vec<u64> {
    listing["tasks"].as_array().expect("tasks").iter().map(|t| t["id"].as_u64().expect("id")).collect()
}

/// Checks an RFC 3339 UTC timestamp of today's wall clock, roughly.
fn assert_recent_timestamp(value: &Value) {
    let text = value.as_str().unwrap_or_else(|| panic!("a timestamp, not {value}"));
    assert_eq!(text.len(), 20, "{text}");
    assert!(text.ends_with('Z') && &text[10..11] == "T", "{text}");
    let year: u32 = text[..4].parse().expect("a year");
    assert!((2025..2100).contains(&year), "{text}");
}

// ---------------------------------------------------------------------------------------
// Normal use

#[tokio::test]
async fn a_task_is_created_read_listed_updated_completed_and_deleted() {
    let fixture = Fixture::shipped();
    let host = fixture.host().await;

    let created = call(
        &host,
        "create",
        json!({ "title": "  Renew the passport ", "description": "Photos first", "due": "2025-06-30", "tags": ["admin", "Admin", " travel "] }),
    )
    .await;
    assert_eq!(created["id"], 1);
    assert_eq!(created["title"], "Renew the passport", "blanks around the title are dropped");
    assert_eq!(created["description"], "Photos first");
    assert_eq!(created["due"], "2025-06-30");
    assert_eq!(created["tags"], json!(["admin", "travel"]), "tags trimmed, repeats dropped ignoring case");
    assert_eq!(created["status"], "open");
    assert_recent_timestamp(&created["created"]);
    assert!(created.get("completed").is_none(), "{created}");

    assert_eq!(call(&host, "get", json!({ "id": 1 })).await, created);
    let listing = call(&host, "list", json!({})).await;
    assert_eq!(listing, json!({ "count": 1, "tasks": [created.clone()] }));

    let updated = call(
        &host,
        "update",
        json!({ "id": 1, "title": "Renew the passport at the town hall", "due": null, "tags": ["admin"] }),
    )
    .await;
    assert_eq!(updated["title"], "Renew the passport at the town hall");
    assert!(updated.get("due").is_none(), "`null` removes the due date: {updated}");
    assert_eq!(updated["description"], "Photos first", "fields left out stay");
    assert_eq!(updated["tags"], json!(["admin"]));
    assert_eq!(updated["created"], created["created"]);
    assert_eq!(call(&host, "get", json!({ "id": 1 })).await, updated, "the update was stored");

    let completed = call(&host, "complete", json!({ "id": 1 })).await;
    assert_eq!(completed["status"], "done");
    assert_recent_timestamp(&completed["completed"]);
    assert_eq!(call(&host, "complete", json!({ "id": 1 })).await, completed, "completing again changes nothing");
    assert_eq!(call(&host, "list", json!({})).await["count"], 0, "done tasks are not listed by default");
    assert_eq!(ids(&call(&host, "list", json!({ "status": "done" })).await), [1]);

    let reopened = call(&host, "update", json!({ "id": 1, "status": "open" })).await;
    assert_eq!(reopened["status"], "open");
    assert!(reopened.get("completed").is_none(), "reopening clears the completion: {reopened}");

    let deleted = call(&host, "delete", json!({ "id": 1 })).await;
    assert_eq!(deleted, json!({ "deleted": true, "task": reopened }));
    assert_eq!(refused(&host, "get", json!({ "id": 1 })).await, ("invalid", "no task 1".to_owned()));
    assert_eq!(call(&host, "list", json!({ "status": "any" })).await, json!({ "count": 0, "tasks": [] }));
}

#[tokio::test]
async fn list_filters_by_status_due_dates_text_and_tag_and_sorts_by_due_date_then_id() {
    let fixture = Fixture::shipped();
    let host = fixture.host().await;
    for task in [
        json!({ "title": "Pay the rent", "due": "2025-07-01", "tags": ["home"] }), // 1
        json!({ "title": "Call the plumber", "description": "The KITCHEN sink leaks", "tags": ["Home"] }), // 2
        json!({ "title": "Write the report", "due": "2025-06-15", "tags": ["work"] }), // 3
        json!({ "title": "Book flights", "due": "2025-07-01", "tags": ["travel", "work"] }), // 4
        json!({ "title": "Clean the kitchen", "due": "2025-05-01" }),              // 5
    ] {
        call(&host, "create", task).await;
    }
    call(&host, "complete", json!({ "id": 5 })).await;

    let listed = |filter: Value| {
        let host = &host;
        async move { ids(&call(host, "list", filter).await) }
    };
    // Soonest due first, equal dates by id, tasks without a due date last.
    assert_eq!(listed(json!({})).await, [3, 1, 4, 2]);
    assert_eq!(listed(json!({ "status": "open" })).await, [3, 1, 4, 2]);
    assert_eq!(listed(json!({ "status": "done" })).await, [5]);
    assert_eq!(listed(json!({ "status": "any" })).await, [5, 3, 1, 4, 2]);
    // Strictly before and after; tasks without a due date are left out.
    assert_eq!(listed(json!({ "due_before": "2025-07-01" })).await, [3]);
    assert_eq!(listed(json!({ "due_after": "2025-06-15" })).await, [1, 4]);
    assert_eq!(listed(json!({ "due_after": "2025-06-14", "due_before": "2025-06-16" })).await, [3]);
    assert_eq!(listed(json!({ "due_before": "2025-12-31", "status": "any" })).await, [5, 3, 1, 4]);
    // Text in the title or the description, ignoring case.
    assert_eq!(listed(json!({ "text": "kitchen", "status": "any" })).await, [5, 2]);
    assert_eq!(listed(json!({ "text": "THE R" })).await, [3, 1]);
    assert_eq!(listed(json!({ "text": "nothing like it" })).await, Vec::<u64>::new());
    // One tag, ignoring case.
    assert_eq!(listed(json!({ "tag": "HOME" })).await, [1, 2]);
    assert_eq!(listed(json!({ "tag": "work", "due_before": "2025-07-01" })).await, [3]);

    let limited = call(&host, "list", json!({ "status": "any", "limit": 2 })).await;
    assert_eq!(limited["count"], 5, "count counts every match");
    assert_eq!(ids(&limited), [5, 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_never_repeat_after_deletes_or_under_concurrent_creates() {
    let fixture = Fixture::shipped();
    let host = fixture.host().await;
    for expected in 1..=3 {
        assert_eq!(call(&host, "create", json!({ "title": format!("task {expected}") })).await["id"], expected);
    }
    call(&host, "delete", json!({ "id": 3 })).await;
    assert_eq!(call(&host, "create", json!({ "title": "after a delete" })).await["id"], 4, "a deleted id stays used");

    let creates = (0..8).map(|i| host.call("task/create", json!({ "title": format!("concurrent {i}") })));
    let created: Vec<Value> = futures::future::join_all(creates)
        .await
        .into_iter()
        .map(|r| r.expect("every concurrent create succeeds"))
        .collect();
    let concurrent_ids: BTreeSet<u64> = created.iter().map(|t| t["id"].as_u64().unwrap()).collect();
    assert_eq!(concurrent_ids, (5..=12).collect(), "eight distinct ids, none skipped");
    let stored: BTreeMap<u64, String> = call(&host, "list", json!({ "limit": 200 })).await["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_u64().unwrap(), t["title"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(stored.len(), 11, "every task stored under its own id: {stored:?}");
    for task in &created {
        assert_eq!(stored[&task["id"].as_u64().unwrap()], task["title"].as_str().unwrap());
    }

    // Two changes of one task at once both take effect: neither writes back a stale copy.
    let (title, tags) = futures::join!(
        host.call("task/update", json!({ "id": 4, "title": "renamed" })),
        host.call("task/update", json!({ "id": 4, "tags": ["tagged"] })),
    );
    title.expect("the title update");
    tags.expect("the tags update");
    let task = call(&host, "get", json!({ "id": 4 })).await;
    assert_eq!((&task["title"], &task["tags"]), (&json!("renamed"), &json!(["tagged"])));
}

#[tokio::test]
async fn tasks_and_the_id_counter_survive_a_restart_on_the_same_storage_file() {
    let fixture = Fixture::shipped();
    let first = fixture.host().await;
    let kept =
        call(&first, "create", json!({ "title": "Survive a restart", "due": "2030-01-01", "tags": ["ops"] })).await;
    call(&first, "create", json!({ "title": "Deleted before the restart" })).await;
    call(&first, "delete", json!({ "id": 2 })).await;
    drop(first);

    let second = fixture.host().await;
    assert_eq!(call(&second, "get", json!({ "id": 1 })).await, kept);
    assert_eq!(call(&second, "list", json!({ "status": "any" })).await, json!({ "count": 1, "tasks": [kept] }));
    assert_eq!(call(&second, "create", json!({ "title": "After the restart" })).await["id"], 3, "the counter survived");
}

// ---------------------------------------------------------------------------------------
// Refusals

#[tokio::test]
async fn unknown_ids_bad_dates_unknown_fields_and_empty_updates_are_refused() {
    let fixture = Fixture::shipped();
    let host = fixture.host().await;
    call(&host, "create", json!({ "title": "The only task" })).await;

    for tool in ["get", "complete", "delete"] {
        assert_eq!(refused(&host, tool, json!({ "id": 42 })).await, ("invalid", "no task 42".to_owned()), "{tool}");
    }
    assert_eq!(refused(&host, "update", json!({ "id": 42, "title": "x" })).await, ("invalid", "no task 42".to_owned()));

    // The schema checks a date's shape, the tool the calendar.
    let (kind, message) = refused(&host, "create", json!({ "title": "x", "due": "31/03/2025" })).await;
    assert_eq!(kind, "invalid", "{message}");
    assert!(message.contains("/due"), "{message}");
    for (date, why) in [("2025-02-29", "month 02 of 2025 has days 01 to 28"), ("2025-13-01", "the month is 01 to 12")] {
        let (kind, message) = refused(&host, "create", json!({ "title": "x", "due": date })).await;
        assert_eq!((kind, message.as_str()), ("invalid", format!("`{date}` is not a date: {why}").as_str()));
        let (kind, message) = refused(&host, "update", json!({ "id": 1, "due": date })).await;
        assert_eq!((kind, message.contains(why)), ("invalid", true), "{message}");
        let (kind, message) = refused(&host, "list", json!({ "due_before": date })).await;
        assert_eq!((kind, message.contains(why)), ("invalid", true), "{message}");
    }

    for (tool, input) in [
        ("create", json!({ "title": "x", "priority": "high" })),
        ("get", json!({ "id": 1, "verbose": true })),
        ("list", json!({ "sort": "title" })),
        ("update", json!({ "id": 1, "done": true })),
        ("complete", json!({ "task": 1 })),
    ] {
        let (kind, message) = refused(&host, tool, input).await;
        assert_eq!(kind, "invalid", "{tool}: {message}");
    }
    assert_eq!(refused(&host, "list", json!({ "status": "closed" })).await.0, "invalid");
    assert_eq!(refused(&host, "get", json!({ "id": 0 })).await.0, "invalid", "ids start at 1");

    let (kind, message) = refused(&host, "update", json!({ "id": 1 })).await;
    assert_eq!((kind, message.starts_with("nothing to change")), ("invalid", true), "{message}");
    let (kind, message) = refused(&host, "create", json!({ "title": "   " })).await;
    assert_eq!((kind, message.as_str()), ("invalid", "the title is blank"));

    // Nothing refused changed anything.
    let only = call(&host, "list", json!({ "status": "any" })).await;
    assert_eq!((only["count"].clone(), only["tasks"][0]["title"].clone()), (json!(1), json!("The only task")));
    assert!(only["tasks"][0].get("due").is_none());
}

#[tokio::test]
async fn without_a_storage_grant_every_tool_fails_saying_which_grant_is_missing() {
    for manifest in [None, Some("[policy]\nrisk = \"low\"\n"), Some("[grants.storage]\nbuckets = [\"other\"]\n")] {
        let fixture = Fixture::new(manifest);
        let host = fixture.host().await;
        for (tool, input) in [
            ("create", json!({ "title": "x" })),
            ("get", json!({ "id": 1 })),
            ("list", json!({})),
            ("update", json!({ "id": 1, "title": "y" })),
            ("complete", json!({ "id": 1 })),
            ("delete", json!({ "id": 1 })),
        ] {
            let (kind, message) = refused(&host, tool, input).await;
            assert_eq!(kind, "failed", "{manifest:?} {tool}: {message}");
            assert!(message.contains("storage bucket `tasks`"), "{message}");
            assert!(message.contains(r#"[grants] storage = ["tasks"]"#), "{message}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Limits

#[tokio::test]
async fn the_schemas_bound_lengths_counts_and_the_limit() {
    let fixture = Fixture::shipped();
    let host = fixture.host().await;
    let created = call(&host, "create", json!({ "title": "é".repeat(200), "tags": vec!["t"; 20] })).await;
    assert_eq!(created["title"].as_str().unwrap().chars().count(), 200, "200 characters fit, whatever their bytes");
    for (tool, input, path) in [
        ("create", json!({ "title": "x".repeat(201) }), "/title"),
        ("create", json!({ "title": "" }), "/title"),
        ("create", json!({ "title": "x", "description": "x".repeat(4001) }), "/description"),
        ("create", json!({ "title": "x", "tags": (0..21).map(|i| i.to_string()).collect::<Vec<_>>() }), "/tags"),
        ("create", json!({ "title": "x", "tags": ["x".repeat(41)] }), "/tags/0"),
        ("create", json!({ "title": "x", "tags": [""] }), "/tags/0"),
        ("update", json!({ "id": 1, "title": "x".repeat(201) }), "/title"),
        ("update", json!({ "id": 1, "description": "x".repeat(4001) }), "/description"),
        ("list", json!({ "limit": 201 }), "/limit"),
        ("list", json!({ "limit": 0 }), "/limit"),
        ("list", json!({ "text": "x".repeat(201) }), "/text"),
    ] {
        let (kind, message) = refused(&host, tool, input).await;
        assert_eq!(kind, "invalid", "{tool} {path}: {message}");
        assert!(message.contains(path), "{tool} names {path}: {message}");
    }
    assert_eq!(call(&host, "list", json!({ "status": "any" })).await["count"], 1, "nothing refused was stored");
}

#[tokio::test]
async fn at_the_storage_quota_create_fails_cleanly_and_the_earlier_tasks_stay() {
    let shipped = shipped_manifest("task");
    let small = shipped.replace(r#"max_bytes = "16 MiB""#, r#"max_bytes = "2 KiB""#);
    assert_ne!(small, shipped, "the shipped manifest sets max_bytes = \"16 MiB\"");
    let fixture = Fixture::new(Some(&small));
    let host = fixture.host().await;

    let description = "d".repeat(400);
    let mut stored = Vec::new();
    let message = loop {
        assert!(stored.len() < 10, "2 KiB holds fewer than ten tasks of 400 bytes");
        match host.call("task/create", json!({ "title": "filler", "description": description })).await {
            Ok(task) => stored.push(task),
            Err(error) => break refusal(Err(error)),
        }
    };
    assert!(!stored.is_empty(), "some tasks fit");
    assert_eq!(message.0, "failed");
    assert!(message.1.contains("quota"), "{}", message.1);

    let listing = call(&host, "list", json!({ "status": "any" })).await;
    assert_eq!(listing["tasks"], json!(stored), "the earlier tasks are intact");

    // Growing a task past the quota fails the same way and leaves it as it was.
    let (kind, message) = refused(&host, "update", json!({ "id": 1, "description": "d".repeat(1500) })).await;
    assert_eq!((kind, message.contains("quota")), ("failed", true), "{message}");
    assert_eq!(call(&host, "get", json!({ "id": 1 })).await, stored[0]);

    // Deleting a task makes room again; the failed creates used up no id.
    call(&host, "delete", json!({ "id": 1 })).await;
    let next = call(&host, "create", json!({ "title": "fits again" })).await;
    assert_eq!(next["id"], stored.len() as u64 + 1);
}

// ---------------------------------------------------------------------------------------
// As shipped

#[tokio::test]
async fn the_shipped_manifest_grants_the_bucket_and_hints_each_tool() {
    let fixture = Fixture::shipped();
    let host = fixture.host().await;
    let listing = serde_json::to_value(host.listing()).unwrap();
    let tools: BTreeMap<String, Value> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
        .collect();
    let names: Vec<&str> = tools.keys().map(String::as_str).collect();
    assert_eq!(names, ["task/complete", "task/create", "task/delete", "task/get", "task/list", "task/update"]);
    for (name, read_only, destructive, idempotent) in [
        ("task/create", false, false, false),
        ("task/get", true, false, true),
        ("task/list", true, false, true),
        ("task/update", false, false, true),
        ("task/complete", false, false, true),
        ("task/delete", false, true, true),
    ] {
        let tool = &tools[name];
        assert_eq!(tool["risk"], "low", "{name}");
        let hints = &tool["hints"];
        assert_eq!(
            (&hints["read_only"], &hints["destructive"], &hints["idempotent"], &hints["open_world"]),
            (&json!(read_only), &json!(destructive), &json!(idempotent), &json!(false)),
            "{name}: {tool}"
        );
        assert!(tool["description"].as_str().unwrap().len() > 40, "{name} is described for a model");
        assert_eq!(tool["input_schema"]["additionalProperties"], false, "{name} refuses unknown fields");
    }
    // `null` removes an update's description or due date; a value is checked as on create.
    let update = &tools["task/update"]["input_schema"]["properties"];
    assert_eq!(update["due"]["type"], json!(["string", "null"]), "{update}");
    assert_eq!(update["due"]["pattern"], tools["task/create"]["input_schema"]["properties"]["due"]["pattern"]);
    assert_eq!(update["description"]["maxLength"], 4000, "{update}");
}
