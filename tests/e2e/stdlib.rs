//! The standard library (`stdlib/`): `file/*`, `http/fetch` and `web/search`, built from
//! source, installed the way `cargo xtask stdlib` installs them (each component beside its
//! shipped manifest) and served as the stdlib layer. For every tool: its normal use, its
//! refusals (no grant, outside the grant, a host not granted, a private address, no API
//! key) and its limits (sizes, ranges, redirects, time).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use tempfile::TempDir;
use toolhost::{CallError, Layer, Tiering, ToolHost};
use toolhost_tests::{ToolsDir, builder_on, toolhost_bin};

/// The repository's `stdlib/`, where the shipped manifests are.
fn stdlib_sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the repository").join("stdlib")
}

/// The shipped manifest of a stdlib crate, with `grants` lines put into its `[grants]`
/// table in place of any shipped line for the same key: what an operator's edit does.
fn manifest_with_grants(crate_dir: &str, grants: &str) -> String {
    let shipped = std::fs::read_to_string(stdlib_sources().join(crate_dir).join("manifest.toml"))
        .expect("every stdlib crate ships a manifest.toml");
    let granted_keys: Vec<&str> =
        grants.lines().filter_map(|line| line.split_once('=')).map(|(k, _)| k.trim()).collect();
    let mut manifest = String::new();
    let mut in_grants = false;
    for line in shipped.lines() {
        if line.starts_with('[') {
            in_grants = line.trim() == "[grants]";
        }
        let key = line.split_once('=').map(|(key, _)| key.trim());
        if in_grants && key.is_some_and(|key| granted_keys.contains(&key)) {
            continue;
        }
        manifest.push_str(line);
        manifest.push('\n');
        if in_grants && line.trim() == "[grants]" {
            manifest.push_str(grants);
            manifest.push('\n');
        }
    }
    manifest
}

/// A stdlib directory holding one component as `cargo xtask stdlib` installs it.
fn install(tools: &ToolsDir, crate_dir: &str, grants: &str) {
    let namespace = crate_dir;
    tools.install(&format!("stdlib-{crate_dir}"), namespace, namespace);
    tools.manifest(namespace, namespace, &manifest_with_grants(crate_dir, grants));
}

/// A host serving `tools` as its stdlib layer, every component loaded.
async fn stdlib_host(tools: &ToolsDir) -> ToolHost {
    let host = builder_on(Tiering::BaselineOnly)
        .layer(Layer::stdlib(tools.path().to_owned()))
        .build()
        .await
        .expect("host builds");
    assert_eq!(host.load_errors(), vec![], "the stdlib loads with its shipped manifests");
    host
}

/// The message of a call the tool refused or failed, with which of the two it was.
fn refusal(result: Result<Value, CallError>) -> (&'static str, String) {
    match result {
        Err(CallError::Failed { message, .. }) => ("failed", message),
        Err(CallError::InputInvalid { violations, .. }) => {
            ("invalid", violations.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn toml_string(path: &Path) -> String {
    format!("{:?}", path.to_str().expect("UTF-8 temp path"))
}

// ---------------------------------------------------------------------------------------
// file/*

/// Host directories granted to `file/*`: `data` read-only at `/data`, `work` read-write
/// at `/work`, and `outside` (holding a secret) granted to nobody.
struct FileGrants {
    dirs: TempDir,
    tools: ToolsDir,
}

impl FileGrants {
    fn new() -> FileGrants {
        let dirs = tempfile::Builder::new().prefix("toolhost-stdlib-files-").tempdir().unwrap();
        for dir in ["data", "work", "outside"] {
            std::fs::create_dir(dirs.path().join(dir)).unwrap();
        }
        std::fs::write(dirs.path().join("data/notes.md"), "# Notes\nremember the milk\n").unwrap();
        std::fs::write(dirs.path().join("outside/secret.txt"), "the secret").unwrap();
        std::os::unix::fs::symlink(dirs.path().join("outside/secret.txt"), dirs.path().join("data/link-out")).unwrap();
        let tools = ToolsDir::new();
        let grants = format!(
            "files = [{{ host = {}, guest = \"/data\", mode = \"ro\" }}, \
             {{ host = {}, guest = \"/work\", mode = \"rw\" }}]",
            toml_string(&dirs.path().join("data")),
            toml_string(&dirs.path().join("work")),
        );
        install(&tools, "file", &grants);
        FileGrants { dirs, tools }
    }

    fn host_path(&self, relative: &str) -> PathBuf {
        self.dirs.path().join(relative)
    }
}

#[tokio::test]
async fn file_tools_read_write_list_stat_and_delete_inside_their_grants() {
    let grants = FileGrants::new();
    let host = stdlib_host(&grants.tools).await;

    let granted = host.call("file/list", json!({})).await.unwrap();
    assert_eq!(granted["entries"][0]["name"], "/data");
    assert_eq!(granted["entries"][0]["access"], "read_only");
    assert_eq!(granted["entries"][1]["name"], "/work");
    assert_eq!(granted["entries"][1]["access"], "read_write");

    let read = host.call("file/read", json!({ "path": "/data/notes.md" })).await.unwrap();
    assert_eq!(read["content"], "# Notes\nremember the milk\n");
    assert_eq!(read["file_size"], 26);
    assert_eq!(read["bytes"], 26);
    assert!(read.get("next_offset").is_none(), "the whole file was read: {read}");

    let written = host
        .call(
            "file/write",
            json!({ "path": "/work/drafts/plan.txt", "content": "step one\n", "create_directories": true }),
        )
        .await
        .unwrap();
    assert_eq!(
        written,
        json!({ "path": "/work/drafts/plan.txt", "bytes_written": 9, "file_size": 9, "created": true })
    );
    let appended = host
        .call("file/write", json!({ "path": "/work/drafts/plan.txt", "content": "step two\n", "mode": "append" }))
        .await
        .unwrap();
    assert_eq!(appended["file_size"], 18);
    assert_eq!(appended["created"], false);
    assert_eq!(std::fs::read_to_string(grants.host_path("work/drafts/plan.txt")).unwrap(), "step one\nstep two\n");
    let replaced =
        host.call("file/write", json!({ "path": "/work/drafts/plan.txt", "content": "done\n" })).await.unwrap();
    assert_eq!(replaced["file_size"], 5);
    assert_eq!(std::fs::read_to_string(grants.host_path("work/drafts/plan.txt")).unwrap(), "done\n");
    let leftovers: Vec<_> = std::fs::read_dir(grants.host_path("work/drafts")).unwrap().flatten().collect();
    assert_eq!(leftovers.len(), 1, "an overwrite leaves no temporary file behind");

    let binary: Vec<u8> = (0..=255).collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&binary);
    host.call("file/write", json!({ "path": "/work/bytes.bin", "content": encoded, "encoding": "base64" }))
        .await
        .unwrap();
    assert_eq!(std::fs::read(grants.host_path("work/bytes.bin")).unwrap(), binary);
    let read_back = host
        .call("file/read", json!({ "path": "/work/bytes.bin", "encoding": "base64", "offset": 250 }))
        .await
        .unwrap();
    assert_eq!(read_back["content"], base64::engine::general_purpose::STANDARD.encode(&binary[250..]));
    assert_eq!(read_back["bytes"], 6);

    let stat = host.call("file/stat", json!({ "path": "/work/bytes.bin" })).await.unwrap();
    assert_eq!(stat["exists"], true);
    assert_eq!(stat["kind"], "file");
    assert_eq!(stat["size"], 256);
    assert_eq!(stat["writable"], true);
    let modified = stat["modified"].as_str().unwrap();
    assert!(modified.len() == 20 && modified.ends_with('Z') && modified.as_bytes()[10] == b'T', "{modified}");
    let link = host.call("file/stat", json!({ "path": "/data/link-out" })).await.unwrap();
    assert_eq!(link["kind"], "symlink");
    assert_eq!(link["writable"], false);
    let missing = host.call("file/stat", json!({ "path": "/work/nothing-here" })).await.unwrap();
    assert_eq!(missing, json!({ "path": "/work/nothing-here", "exists": false, "writable": true }));

    let listing = host.call("file/list", json!({ "path": "/work", "recursive": true })).await.unwrap();
    let names: Vec<&str> = listing["entries"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["bytes.bin", "drafts", "drafts/plan.txt"]);
    assert_eq!(listing["entries"][0]["size"], 256);
    assert_eq!(listing["entries"][1]["kind"], "directory");
    assert_eq!(listing["truncated"], false);

    let deleted = host.call("file/delete", json!({ "path": "/work/bytes.bin" })).await.unwrap();
    assert_eq!(deleted, json!({ "path": "/work/bytes.bin", "kind": "file", "entries_removed": 1 }));
    let tree = host.call("file/delete", json!({ "path": "/work/drafts", "recursive": true })).await.unwrap();
    assert_eq!(tree["entries_removed"], 2);
    assert_eq!(std::fs::read_dir(grants.host_path("work")).unwrap().count(), 0);
}

#[tokio::test]
async fn file_tools_refuse_every_call_without_a_granted_directory() {
    let tools = ToolsDir::new();
    install(&tools, "file", "");
    let host = stdlib_host(&tools).await;
    for (tool, input) in [
        ("file/read", json!({ "path": "/etc/passwd" })),
        ("file/write", json!({ "path": "/tmp/x", "content": "x" })),
        ("file/list", json!({})),
        ("file/list", json!({ "path": "/" })),
        ("file/stat", json!({ "path": "/" })),
        ("file/delete", json!({ "path": "/tmp/x" })),
    ] {
        let (kind, message) = refusal(host.call(tool, input).await);
        assert_eq!(kind, "failed", "{tool}: the operator's side, not the caller's");
        assert!(message.starts_with("no directory is granted to the file tools"), "{tool}: {message}");
        assert!(message.contains("[grants] files"), "{tool} tells what the operator grants: {message}");
    }
}

#[tokio::test]
async fn file_tools_refuse_paths_outside_their_grants() {
    let grants = FileGrants::new();
    let host = stdlib_host(&grants.tools).await;
    let secret = grants.host_path("outside/secret.txt");
    for path in ["/etc/passwd", "/data/../outside/secret.txt", "/datax/notes.md", secret.to_str().unwrap()] {
        let (kind, message) = refusal(host.call("file/read", json!({ "path": path })).await);
        assert_eq!(kind, "invalid", "{path}");
        assert!(message.contains("is outside the granted directories"), "{path}: {message}");
        assert!(message.contains("/data (read-only), /work (read-write)"), "{path} names the grants: {message}");
    }
    let (kind, message) = refusal(host.call("file/read", json!({ "path": "notes.md" })).await);
    assert_eq!(kind, "invalid");
    assert!(message.contains("relative path"), "{message}");

    // A link inside the grant leading out of it: the host refuses, the tool says so.
    let (kind, message) = refusal(host.call("file/read", json!({ "path": "/data/link-out" })).await);
    assert_eq!(kind, "failed");
    assert!(message.contains("refused access to `/data/link-out`"), "{message}");
    assert!(!message.contains("the secret"));

    let (_, message) = refusal(host.call("file/write", json!({ "path": "/work/../outside/x", "content": "x" })).await);
    assert!(message.contains("outside the granted directories"), "{message}");
    let (_, message) = refusal(host.call("file/delete", json!({ "path": secret.to_str().unwrap() })).await);
    assert!(message.contains("outside the granted directories"), "{message}");
    assert!(secret.exists(), "nothing outside a grant is deleted");
    assert_eq!(std::fs::read_dir(grants.host_path("outside")).unwrap().count(), 1, "nothing was written outside");
}

#[tokio::test]
async fn file_tools_refuse_changes_the_grants_do_not_allow() {
    let grants = FileGrants::new();
    let host = stdlib_host(&grants.tools).await;
    for (tool, input) in [
        ("file/write", json!({ "path": "/data/notes.md", "content": "overwritten" })),
        ("file/write", json!({ "path": "/data/new.md", "content": "new" })),
        ("file/delete", json!({ "path": "/data/notes.md" })),
    ] {
        let (kind, message) = refusal(host.call(tool, input).await);
        assert_eq!(kind, "failed", "{tool}");
        assert!(message.contains("`/data` is granted read-only"), "{tool}: {message}");
    }
    assert_eq!(std::fs::read_to_string(grants.host_path("data/notes.md")).unwrap(), "# Notes\nremember the milk\n");
    assert!(!grants.host_path("data/new.md").exists());

    let (_, message) = refusal(host.call("file/delete", json!({ "path": "/work" })).await);
    assert!(message.contains("is a granted directory itself"), "{message}");
    assert!(grants.host_path("work").is_dir());

    std::fs::create_dir(grants.host_path("work/full")).unwrap();
    std::fs::write(grants.host_path("work/full/keep.txt"), "keep").unwrap();
    let (_, message) = refusal(host.call("file/delete", json!({ "path": "/work/full" })).await);
    assert!(message.contains("not empty; set recursive to true"), "{message}");
    assert!(grants.host_path("work/full/keep.txt").exists());

    let (_, message) = refusal(
        host.call("file/write", json!({ "path": "/work/full/keep.txt", "content": "x", "mode": "create" })).await,
    );
    assert!(message.contains("already exists"), "{message}");
    assert_eq!(std::fs::read_to_string(grants.host_path("work/full/keep.txt")).unwrap(), "keep");
    let (_, message) =
        refusal(host.call("file/write", json!({ "path": "/work/no/such/dir.txt", "content": "x" })).await);
    assert!(message.contains("set create_directories to true"), "{message}");
    let (_, message) = refusal(host.call("file/read", json!({ "path": "/work/full" })).await);
    assert!(message.contains("is a directory, not a file"), "{message}");
    let (_, message) = refusal(host.call("file/read", json!({ "path": "/work/absent.txt" })).await);
    assert!(message.contains("`/work/absent.txt` does not exist"), "{message}");
    let (_, message) =
        refusal(host.call("file/write", json!({ "path": "/work/x", "content": "!", "encoding": "base64" })).await);
    assert!(message.contains("not valid base64"), "{message}");
    let extra = host.call("file/read", json!({ "path": "/data/notes.md", "follow": true })).await;
    assert!(matches!(extra, Err(CallError::InputInvalid { .. })), "the schema refuses unknown fields: {extra:?}");
}

#[tokio::test]
async fn file_reads_page_through_large_files_and_writes_are_bounded() {
    let grants = FileGrants::new();
    let host = stdlib_host(&grants.tools).await;
    const LIMIT: u64 = 256 << 10;

    // 600 KiB of text read in pages: each at most the limit, joined exactly.
    let text: String = (0..600 * 1024).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
    std::fs::write(grants.host_path("work/big.txt"), &text).unwrap();
    let mut joined = String::new();
    let mut offset = 0u64;
    let mut pages = 0;
    loop {
        let page = host.call("file/read", json!({ "path": "/work/big.txt", "offset": offset })).await.unwrap();
        assert!(page["bytes"].as_u64().unwrap() <= LIMIT);
        assert_eq!(page["file_size"], text.len());
        joined.push_str(page["content"].as_str().unwrap());
        pages += 1;
        match page.get("next_offset") {
            Some(next) => offset = next.as_u64().unwrap(),
            None => break,
        }
    }
    assert_eq!((pages, joined == text), (3, true));

    let range = host.call("file/read", json!({ "path": "/work/big.txt", "offset": 26, "length": 5 })).await.unwrap();
    assert_eq!(range["content"], "abcde");
    assert_eq!(range["next_offset"], 31);
    let at_end = host.call("file/read", json!({ "path": "/work/big.txt", "offset": text.len() })).await.unwrap();
    assert_eq!((at_end["content"].as_str(), at_end["bytes"].as_u64()), (Some(""), Some(0)));
    let (_, message) =
        refusal(host.call("file/read", json!({ "path": "/work/big.txt", "offset": text.len() + 1 })).await);
    assert!(message.contains("past the end"), "{message}");
    let too_long = host.call("file/read", json!({ "path": "/work/big.txt", "length": LIMIT + 1 })).await;
    assert!(matches!(too_long, Err(CallError::InputInvalid { .. })), "{too_long:?}");

    // Characters stay whole: a range ending inside one stops before it.
    std::fs::write(grants.host_path("work/accents.txt"), "ééé").unwrap();
    let cut = host.call("file/read", json!({ "path": "/work/accents.txt", "length": 3 })).await.unwrap();
    assert_eq!((cut["content"].as_str(), cut["next_offset"].as_u64()), (Some("é"), Some(2)));
    let (_, message) = refusal(host.call("file/read", json!({ "path": "/work/accents.txt", "offset": 1 })).await);
    assert!(message.contains("falls inside a UTF-8 character"), "{message}");
    std::fs::write(grants.host_path("work/image.bin"), [0x89, b'P', b'N', b'G', 0xff, 0xfe]).unwrap();
    let (_, message) = refusal(host.call("file/read", json!({ "path": "/work/image.bin" })).await);
    assert!(message.contains("not UTF-8 text (invalid byte at offset 0)") && message.contains("base64"), "{message}");

    // Writes: 1 MiB per call, appends for more.
    let megabyte = "x".repeat(1 << 20);
    host.call("file/write", json!({ "path": "/work/mb.txt", "content": megabyte })).await.unwrap();
    let appended = host
        .call("file/write", json!({ "path": "/work/mb.txt", "content": megabyte, "mode": "append" }))
        .await
        .unwrap();
    assert_eq!(appended["file_size"], 2 << 20);
    let (_, message) =
        refusal(host.call("file/write", json!({ "path": "/work/over.txt", "content": "é".repeat(600_000) })).await);
    assert!(message.contains("content is 1200000 bytes; the limit is 1048576 bytes per call"), "{message}");
    assert!(!grants.host_path("work/over.txt").exists());

    // Listings stop at max_entries and say so.
    for i in 0..5 {
        std::fs::write(grants.host_path(&format!("work/many-{i}")), "").unwrap();
    }
    let listing = host.call("file/list", json!({ "path": "/work", "max_entries": 3 })).await.unwrap();
    assert_eq!(listing["entries"].as_array().unwrap().len(), 3);
    assert_eq!(listing["truncated"], true);
    let too_many = host.call("file/list", json!({ "path": "/work", "max_entries": 10_001 })).await;
    assert!(matches!(too_many, Err(CallError::InputInvalid { .. })), "{too_many:?}");
}

// ---------------------------------------------------------------------------------------
// A web server on loopback for http/fetch and web/search

/// A request the test server saw.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path_and_query: String,
    headers: BTreeMap<String, String>,
}

/// A real HTTP/1.1 server on 127.0.0.1 (an OS-picked port) answering a few routes, and
/// speaking the Brave Search API's shape at `/res/v1/web/search`. Stops when dropped.
struct WebServer {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

const SEARCH_KEY: &str = "test-search-key";

impl WebServer {
    async fn start() -> WebServer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let record = record.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| answer(request, addr, record.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        WebServer { addr, seen, task }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn response(status: u16, content_type: &str, body: impl Into<Bytes>) -> hyper::Response<Full<Bytes>> {
    let mut response = hyper::Response::new(Full::new(body.into()));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
    if !content_type.is_empty() {
        response.headers_mut().insert("content-type", content_type.parse().unwrap());
    }
    response
}

fn redirect(status: u16, location: &str) -> hyper::Response<Full<Bytes>> {
    let mut response = response(status, "", "");
    response.headers_mut().insert("location", location.parse().unwrap());
    response
}

const PAGE: &str = "<!doctype html><html><head><title>The  Milk &amp; Honey\n Guide</title>\
    <style>body { color: red }</style><script>window.secret = 1;</script></head>\
    <body><nav><a href=\"/home\">Home</a></nav><h1>Milk</h1><p>Cold milk is <em>best</em> kept \
    in the <a href=\"https://example.org/fridge\">fridge</a>.</p><ul><li>whole</li><li>skimmed</li></ul></body></html>";

async fn answer(
    request: hyper::Request<hyper::body::Incoming>,
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let method = request.method().to_string();
    let path_and_query = request.uri().path_and_query().map(|p| p.to_string()).unwrap_or_default();
    let headers: BTreeMap<String, String> = request
        .headers()
        .iter()
        .map(|(name, value)| (name.to_string(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    seen.lock().unwrap().push(Seen {
        method: method.clone(),
        path_and_query: path_and_query.clone(),
        headers: headers.clone(),
    });
    let path = request.uri().path().to_owned();
    let query: BTreeMap<String, String> = request
        .uri()
        .query()
        .unwrap_or_default()
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(name, value)| (name.to_owned(), percent_decode(value)))
        .collect();
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    Ok(match path.as_str() {
        "/json" => response(200, "application/json; charset=utf-8", r#"{"answer": 42, "items": ["a", "b"]}"#),
        "/broken-json" => response(200, "application/json", "{\"answer\": "),
        "/page" => response(200, "text/html; charset=utf-8", PAGE),
        "/plain" => response(200, "text/plain", "just text"),
        "/bytes" => response(200, "application/octet-stream", (0..=255u8).collect::<Vec<u8>>()),
        "/big" => response(200, "text/plain", vec![b'x'; 3 << 20]),
        "/missing" => response(404, "text/plain", "no such page"),
        "/echo" => response(
            200,
            "application/json",
            json!({ "method": method, "headers": headers, "body": String::from_utf8_lossy(&body) }).to_string(),
        ),
        "/redirect" => redirect(302, "/json"),
        "/post-redirect" => redirect(303, "/echo"),
        "/loop" => redirect(302, "/loop"),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(10)).await;
            response(200, "text/plain", "too late")
        }
        "/res/v1/web/search" => search(&headers, &query, addr),
        _ => {
            // `/to/PORT/PATH`: a redirect to another server on loopback.
            match path.strip_prefix("/to/").and_then(|rest| rest.split_once('/')) {
                Some((port, rest)) => redirect(307, &format!("http://127.0.0.1:{port}/{rest}")),
                None => response(404, "text/plain", "unknown route"),
            }
        }
    })
}

fn percent_decode(value: &str) -> String {
    let bytes = value.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped =
            value.get(i + 1..i + 3).filter(|_| bytes[i] == b'%').and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                i += 3;
            }
            None => {
                decoded.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

/// The Brave Search API's answers: 422 for a bad token (as Brave does), 429 for the query
/// `rate limit`, else `count` results for the query.
fn search(
    headers: &BTreeMap<String, String>,
    query: &BTreeMap<String, String>,
    addr: SocketAddr,
) -> hyper::Response<Full<Bytes>> {
    if headers.get("x-subscription-token").map(String::as_str) != Some(SEARCH_KEY) {
        let error = json!({
            "type": "ErrorResponse",
            "error": {
                "status": 422,
                "code": "SUBSCRIPTION_TOKEN_INVALID",
                "detail": "The provided subscription token is invalid.",
            },
        });
        return response(422, "application/json", error.to_string());
    }
    let q = query.get("q").cloned().unwrap_or_default();
    if q == "rate limit" {
        let error = json!({
            "type": "ErrorResponse",
            "error": { "status": 429, "code": "RATE_LIMITED", "detail": "Request rate limit exceeded." },
        });
        return response(429, "application/json", error.to_string());
    }
    let count: usize = query.get("count").and_then(|c| c.parse().ok()).unwrap_or(20);
    let results: Vec<Value> = (0..count)
        .map(|i| {
            json!({
                "type": "search_result",
                "title": format!("Result {i} about <strong>{q}</strong>"),
                "url": format!("http://{addr}/page?n={i}"),
                "description": format!("All about <strong>{q}</strong> &amp; more &#x27;{i}&#x27;"),
                "age": "2 days ago",
                "language": "en",
            })
        })
        .collect();
    let answer = json!({
        "type": "search",
        "query": { "original": q, "more_results_available": true },
        "web": { "type": "search", "results": results },
    });
    response(200, "application/json", answer.to_string())
}

// ---------------------------------------------------------------------------------------
// http/fetch

/// `http/fetch` granted `network` (literal loopback addresses, the way an operator
/// allows an internal service), with `limits` put over the shipped ones.
async fn fetch_host(network: &[String], limits: Option<&str>) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::new();
    let list = network.iter().map(|p| format!("{p:?}")).collect::<Vec<_>>().join(", ");
    install(&tools, "http", &format!("network = [{list}]"));
    if let Some(limits) = limits {
        let manifest = tools.path().join("http/http.toml");
        let text = std::fs::read_to_string(&manifest).unwrap();
        let replaced = text.replace("timeout = \"30s\"", limits);
        assert_ne!(text, replaced, "the shipped manifest sets a timeout");
        std::fs::write(manifest, replaced).unwrap();
    }
    let host = stdlib_host(&tools).await;
    (tools, host)
}

#[tokio::test]
async fn http_fetch_parses_json_reduces_html_and_encodes_bytes() {
    let server = WebServer::start().await;
    let (_tools, host) = fetch_host(&[server.addr.to_string()], None).await;

    let json = host.call("http/fetch", json!({ "url": server.url("/json") })).await.unwrap();
    assert_eq!(json["status"], 200);
    assert_eq!(json["body_format"], "json");
    assert_eq!(json["body"], json!({ "answer": 42, "items": ["a", "b"] }));
    assert_eq!(json["headers"]["content-type"], "application/json; charset=utf-8");
    assert_eq!(json["url"], server.url("/json"));
    assert_eq!(json["truncated"], false);

    let page = host.call("http/fetch", json!({ "url": server.url("/page") })).await.unwrap();
    assert_eq!(page["body_format"], "html_text");
    assert_eq!(page["title"], "The Milk & Honey Guide");
    let text = page["body"].as_str().unwrap();
    assert!(text.contains("Milk") && text.contains("Cold milk is *best* kept in the [fridge][2]."), "{text}");
    assert!(
        text.contains("https://example.org/fridge") && text.contains("whole") && text.contains("skimmed"),
        "{text}"
    );
    assert!(!text.contains("window.secret") && !text.contains("color: red") && !text.contains('<'), "{text}");
    let raw = host.call("http/fetch", json!({ "url": server.url("/page"), "response_format": "text" })).await.unwrap();
    assert_eq!((raw["body_format"].as_str(), raw["body"].as_str()), (Some("text"), Some(PAGE)));

    let bytes = host.call("http/fetch", json!({ "url": server.url("/bytes") })).await.unwrap();
    assert_eq!(bytes["body_format"], "base64");
    let decoded = base64::engine::general_purpose::STANDARD.decode(bytes["body"].as_str().unwrap()).unwrap();
    assert_eq!(decoded, (0..=255u8).collect::<Vec<u8>>());
    let plain = host.call("http/fetch", json!({ "url": server.url("/plain") })).await.unwrap();
    assert_eq!((plain["body_format"].as_str(), plain["body"].as_str()), (Some("text"), Some("just text")));
    let broken = host.call("http/fetch", json!({ "url": server.url("/broken-json") })).await.unwrap();
    assert_eq!(broken["body_format"], "text");
    assert!(broken["note"].as_str().unwrap().contains("does not parse"), "{broken}");

    let missing = host.call("http/fetch", json!({ "url": server.url("/missing") })).await.unwrap();
    assert_eq!((missing["status"].as_u64(), missing["body"].as_str()), (Some(404), Some("no such page")));
    let head = host.call("http/fetch", json!({ "url": server.url("/plain"), "method": "HEAD" })).await.unwrap();
    assert_eq!((head["status"].as_u64(), head["body_format"].as_str()), (Some(200), Some("empty")));
}

#[tokio::test]
async fn http_fetch_sends_method_headers_and_body_and_follows_redirects() {
    let server = WebServer::start().await;
    let other = WebServer::start().await;
    let (_tools, host) = fetch_host(&[server.addr.to_string(), other.addr.to_string()], None).await;

    let echoed = host
        .call(
            "http/fetch",
            json!({
                "url": server.url("/echo?q=a b"),
                "method": "POST",
                "headers": { "content-type": "application/json", "x-request": "yes" },
                "body": "{\"name\": \"toolhost\"}",
            }),
        )
        .await
        .unwrap();
    assert_eq!(echoed["body"]["method"], "POST");
    assert_eq!(echoed["body"]["body"], "{\"name\": \"toolhost\"}");
    assert_eq!(echoed["body"]["headers"]["x-request"], "yes");
    assert_eq!(echoed["body"]["headers"]["content-type"], "application/json");
    assert!(echoed["body"]["headers"]["user-agent"].as_str().unwrap().starts_with("toolhost-stdlib-http/"));
    assert_eq!(server.seen().last().unwrap().path_and_query, "/echo?q=a%20b", "the space was encoded");

    let followed = host.call("http/fetch", json!({ "url": server.url("/redirect") })).await.unwrap();
    assert_eq!(followed["body"], json!({ "answer": 42, "items": ["a", "b"] }));
    assert_eq!(followed["url"], server.url("/json"));
    assert_eq!(followed["redirects"], json!([server.url("/redirect")]));
    let not_followed =
        host.call("http/fetch", json!({ "url": server.url("/redirect"), "follow_redirects": false })).await.unwrap();
    assert_eq!(not_followed["status"], 302);
    assert_eq!(not_followed["headers"]["location"], "/json");

    // 303 after a POST: the next request is a GET without the body.
    let see_other = host
        .call("http/fetch", json!({ "url": server.url("/post-redirect"), "method": "POST", "body": "form" }))
        .await
        .unwrap();
    assert_eq!(see_other["body"]["method"], "GET");
    assert_eq!(see_other["body"]["body"], "");

    // Credentials stay with the origin they were written for.
    let hop = format!("/to/{}/echo", other.addr.port());
    let crossed = host
        .call(
            "http/fetch",
            json!({ "url": server.url(&hop), "headers": { "authorization": "Bearer s3cret", "x-request": "kept" } }),
        )
        .await
        .unwrap();
    assert_eq!(crossed["url"], other.url("/echo"));
    assert_eq!(crossed["body"]["headers"]["x-request"], "kept");
    assert!(crossed["body"]["headers"].get("authorization").is_none(), "{crossed}");
    assert_eq!(server.seen().last().unwrap().headers.get("authorization").map(String::as_str), Some("Bearer s3cret"));
}

#[tokio::test]
async fn http_fetch_reaches_nothing_the_operator_did_not_grant() {
    let server = WebServer::start().await;
    let tools = ToolsDir::new();
    install(&tools, "http", "");
    let host = stdlib_host(&tools).await;
    let report = host.call_detailed("http/fetch", json!({ "url": server.url("/json") })).await;
    let (kind, message) = refusal(report.outcome);
    assert_eq!(kind, "failed");
    assert!(message.contains(&format!("{} is not in this tool's network grant", server.addr)), "{message}");
    assert!(message.contains("only the operator can grant it"), "{message}");
    assert_eq!(report.denied_requests.len(), 1);
    assert!(server.seen().is_empty(), "the request never left the host");

    // Granted another destination only: still refused, and a redirect to an ungranted
    // destination is refused the same way.
    let other = WebServer::start().await;
    let (_tools, host) = fetch_host(&[other.addr.to_string()], None).await;
    let (_, message) = refusal(host.call("http/fetch", json!({ "url": server.url("/json") })).await);
    assert!(message.contains("is not in this tool's network grant"), "{message}");
    let hop = format!("/to/{}/json", server.addr.port());
    let (_, message) = refusal(host.call("http/fetch", json!({ "url": other.url(&hop) })).await);
    assert!(message.contains(&format!("{} is not in this tool's network grant", server.addr)), "{message}");
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn http_fetch_refuses_private_addresses_reached_through_a_granted_name() {
    let server = WebServer::start().await;
    let port = server.addr.port();
    let (_tools, host) = fetch_host(&[format!("localhost:{port}")], None).await;
    let report = host.call_detailed("http/fetch", json!({ "url": format!("http://localhost:{port}/json") })).await;
    let (kind, message) = refusal(report.outcome);
    assert_eq!(kind, "failed");
    assert!(message.contains("non-public addresses") && message.contains("granting the address itself"), "{message}");
    assert!(report.denied_requests[0].reason.contains("non-public"), "{:?}", report.denied_requests);
    assert!(server.seen().is_empty());
}

#[tokio::test]
async fn http_fetch_bounds_bodies_redirects_time_and_input() {
    let server = WebServer::start().await;
    let (_tools, host) = fetch_host(&[server.addr.to_string()], Some("timeout = \"2s\"")).await;

    let cut = host.call("http/fetch", json!({ "url": server.url("/big"), "max_bytes": 1000 })).await.unwrap();
    assert_eq!((cut["truncated"].as_bool(), cut["body_bytes"].as_u64()), (Some(true), Some(1000)));
    assert_eq!(cut["body"].as_str().unwrap().len(), 1000);
    assert!(cut["note"].as_str().unwrap().contains("longer than max_bytes (1000)"), "{cut}");
    let default_limit = host.call("http/fetch", json!({ "url": server.url("/big") })).await.unwrap();
    assert_eq!(default_limit["body_bytes"], 256 << 10);
    let largest = host.call("http/fetch", json!({ "url": server.url("/big"), "max_bytes": 1 << 20 })).await.unwrap();
    assert_eq!((largest["body_bytes"].as_u64(), largest["truncated"].as_bool()), (Some(1 << 20), Some(true)));
    let over = host.call("http/fetch", json!({ "url": server.url("/big"), "max_bytes": (1 << 20) + 1 })).await;
    assert!(matches!(over, Err(CallError::InputInvalid { .. })), "{over:?}");
    let cut_json = host.call("http/fetch", json!({ "url": server.url("/json"), "max_bytes": 10 })).await.unwrap();
    assert_eq!(cut_json["body_format"], "text");
    assert!(cut_json["note"].as_str().unwrap().contains("cut short"), "{cut_json}");

    let (_, message) = refusal(host.call("http/fetch", json!({ "url": server.url("/loop") })).await);
    assert!(message.contains("more than 5 redirects"), "{message}");
    assert_eq!(server.seen().iter().filter(|s| s.path_and_query == "/loop").count(), 6);

    let started = std::time::Instant::now();
    let slow = host.call("http/fetch", json!({ "url": server.url("/slow") })).await;
    assert!(matches!(slow, Err(CallError::Timeout { .. })), "the manifest's timeout bounds the call: {slow:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());

    for (input, expected) in [
        (json!({ "url": "ftp://example.com/file" }), "only absolute http:// and https:// URLs"),
        (json!({ "url": "http://user:pw@example.com/" }), "credentials in the URL"),
        (json!({ "url": server.url("/json"), "headers": { "host": "evil.example" } }), "header `host` cannot be sent"),
        (json!({ "url": server.url("/json"), "headers": { "x-bad": "line\nbreak" } }), "not a valid header"),
    ] {
        let (kind, message) = refusal(host.call("http/fetch", input.clone()).await);
        assert_eq!(kind, "invalid", "{input}");
        assert!(message.contains(expected), "{input}: {message}");
    }
    let method = host.call("http/fetch", json!({ "url": server.url("/json"), "method": "CONNECT" })).await;
    assert!(matches!(method, Err(CallError::InputInvalid { .. })), "{method:?}");
}

// ---------------------------------------------------------------------------------------
// web/search

/// `web/search` pointed at `server` (granted by address), with `grants` lines added.
async fn search_host(server: &WebServer, grants: &str) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::new();
    let endpoint = server.url("/res/v1/web/search");
    let config = if grants.contains("api_key") {
        grants.replace("config = {", &format!("config = {{ endpoint = {endpoint:?},"))
    } else {
        format!("{grants}\nconfig = {{ endpoint = {endpoint:?} }}")
    };
    install(&tools, "web", &format!("network = [{:?}]\n{config}", server.addr.to_string()));
    let host = stdlib_host(&tools).await;
    (tools, host)
}

#[tokio::test]
async fn web_search_stays_unavailable_until_a_key_is_granted() {
    let server = WebServer::start().await;
    let (_tools, host) = search_host(&server, "").await;
    let (kind, message) = refusal(host.call("web/search", json!({ "query": "toolhost" })).await);
    assert_eq!(kind, "failed");
    assert!(message.starts_with("web search is not set up: no search API key is granted"), "{message}");
    assert!(message.contains("env = [\"BRAVE_SEARCH_API_KEY\"]") && message.contains("api_key"), "{message}");
    assert!(server.seen().is_empty(), "nothing is sent without a key");

    // The shipped manifest: only the API's host is granted, and no key.
    let tools = ToolsDir::new();
    install(&tools, "web", "");
    let host = stdlib_host(&tools).await;
    let component = host.snapshot().tools["web/search"].source.component().unwrap().clone();
    let network: Vec<String> = component.grants.network.iter().map(ToString::to_string).collect();
    assert_eq!(network, ["api.search.brave.com:443"]);
    assert!(component.grants.env.is_empty() && component.grants.config.is_empty());
    let (_, message) = refusal(host.call("search", json!({ "query": "toolhost" })).await);
    assert!(message.contains("not set up"), "{message}");
}

#[tokio::test]
async fn web_search_asks_the_api_with_the_granted_key() {
    let server = WebServer::start().await;
    let (_tools, host) = search_host(&server, &format!("config = {{ api_key = {SEARCH_KEY:?} }}")).await;
    let found = host
        .call(
            "web/search",
            json!({ "query": "wasm components & wasi", "count": 3, "page": 1, "country": "DE", "freshness": "week" }),
        )
        .await
        .unwrap();
    assert_eq!(found["query"], "wasm components & wasi");
    assert_eq!(found["more_results_available"], true);
    let results = found["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(results[0]["title"], "Result 0 about wasm components & wasi");
    assert_eq!(results[0]["description"], "All about wasm components & wasi & more '0'");
    assert_eq!(results[0]["url"], server.url("/page?n=0"));
    assert_eq!(results[0]["age"], "2 days ago");
    let request = server.seen().pop().unwrap();
    assert_eq!(request.method, "GET");
    assert_eq!(
        request.path_and_query,
        concat!(
            "/res/v1/web/search?q=wasm%20components%20%26%20wasi",
            "&count=3&offset=1&safesearch=moderate&country=de&freshness=pw"
        )
    );
    assert_eq!(request.headers["x-subscription-token"], SEARCH_KEY);
    assert_eq!(request.headers["accept"], "application/json");

    // The key may come from the host's environment instead.
    // SAFETY: set before the host below reads it; no other test grants this variable.
    unsafe { std::env::set_var("BRAVE_SEARCH_API_KEY", SEARCH_KEY) };
    let (_tools, host) = search_host(&server, "env = [\"BRAVE_SEARCH_API_KEY\"]").await;
    let found = host.call("search", json!({ "query": "bare name" })).await.unwrap();
    assert_eq!(found["results"].as_array().unwrap().len(), 10, "the default count");
}

#[tokio::test]
async fn web_search_reports_refused_keys_rate_limits_and_bounds() {
    let server = WebServer::start().await;
    let (_tools, host) = search_host(&server, "config = { api_key = \"wrong-key\" }").await;
    let (kind, message) = refusal(host.call("web/search", json!({ "query": "anything" })).await);
    assert_eq!(kind, "failed");
    assert!(
        message.contains("refused the granted API key") && message.contains("SUBSCRIPTION_TOKEN_INVALID"),
        "{message}"
    );

    let (_tools, host) = search_host(&server, &format!("config = {{ api_key = {SEARCH_KEY:?} }}")).await;
    let (_, message) = refusal(host.call("web/search", json!({ "query": "rate limit" })).await);
    assert!(message.contains("rate limit or quota is used up") && message.contains("status 429"), "{message}");
    for input in [
        json!({ "query": "" }),
        json!({ "query": "x".repeat(401) }),
        json!({ "query": "x", "count": 21 }),
        json!({ "query": "x", "page": 10 }),
        json!({ "query": "x", "country": "germany" }),
        json!({ "query": "x", "freshness": "decade" }),
        json!({ "query": "x", "engine": "other" }),
    ] {
        let result = host.call("web/search", input.clone()).await;
        assert!(matches!(result, Err(CallError::InputInvalid { .. })), "{input}: {result:?}");
    }
    let (kind, message) = refusal(host.call("web/search", json!({ "query": "   " })).await);
    assert_eq!((kind, message.contains("blank")), ("invalid", true), "{message}");
    let most = host.call("web/search", json!({ "query": "many", "count": 20 })).await.unwrap();
    assert_eq!(most["results"].as_array().unwrap().len(), 20);
}

// ---------------------------------------------------------------------------------------
// The stdlib as shipped

#[tokio::test]
async fn the_shipped_stdlib_grants_nothing_and_describes_its_tools() {
    let tools = ToolsDir::new();
    for crate_dir in ["file", "http", "web"] {
        install(&tools, crate_dir, "");
    }
    let host = stdlib_host(&tools).await;
    let listing = serde_json::to_value(host.listing()).unwrap();
    let tools_listed: BTreeMap<String, Value> = listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_owned(), t.clone()))
        .collect();
    let names: Vec<&str> = tools_listed.keys().map(String::as_str).collect();
    assert_eq!(names, ["file/delete", "file/list", "file/read", "file/stat", "file/write", "http/fetch", "web/search"]);
    for (name, risk, read_only, destructive, open_world) in [
        ("file/read", "low", true, None, false),
        ("file/list", "low", true, None, false),
        ("file/stat", "low", true, None, false),
        ("file/write", "medium", false, Some(true), false),
        ("file/delete", "high", false, Some(true), false),
        ("http/fetch", "medium", false, Some(true), true),
        ("web/search", "low", true, None, true),
    ] {
        let tool = &tools_listed[name];
        assert_eq!(tool["risk"], risk, "{name}");
        assert_eq!(tool["hints"]["read_only"], read_only, "{name}");
        assert_eq!(tool["hints"]["destructive"].as_bool(), destructive, "{name}");
        assert_eq!(tool["hints"]["open_world"], open_world, "{name}");
        assert!(tool["description"].as_str().unwrap().len() > 150, "{name} is described for a model");
        assert_eq!(tool["input_schema"]["additionalProperties"], false, "{name} refuses unknown fields");
    }
    let snapshot = host.snapshot();
    for name in ["file/read", "http/fetch"] {
        let grants = &snapshot.tools[name].source.component().unwrap().grants;
        assert!(grants.files.is_empty() && grants.network.is_empty() && grants.env.is_empty(), "{name}: {grants:?}");
    }
    // Bare names reach the stdlib layer.
    let (_, message) = refusal(host.call("stat", json!({ "path": "/x" })).await);
    assert!(message.starts_with("no directory is granted"), "{message}");
    let (_, message) = refusal(host.call("fetch", json!({ "url": "http://127.0.0.1:9/" })).await);
    assert!(message.contains("not in this tool's network grant"), "{message}");
}

#[test]
fn the_cli_serves_the_stdlib_by_bare_name() {
    let grants = FileGrants::new();
    let project = ToolsDir::new();
    let output = std::process::Command::new(toolhost_bin())
        .arg("--stdlib")
        .arg(grants.tools.path())
        .args(["--no-cache", "call"])
        .arg(project.path())
        .args(["read", "--input", r#"{"path": "/data/notes.md", "length": 7}"#])
        .output()
        .expect("run toolhost");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let read: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(read["content"], "# Notes");
    assert_eq!(read["next_offset"], 7);

    let outside = std::process::Command::new(toolhost_bin())
        .arg("--stdlib")
        .arg(grants.tools.path())
        .args(["--no-cache", "call"])
        .arg(project.path())
        .args(["file/read", "--input", r#"{"path": "/etc/passwd"}"#])
        .output()
        .expect("run toolhost");
    assert_eq!(outside.status.code(), Some(5), "a path outside the grants is invalid input");
    let stderr = String::from_utf8_lossy(&outside.stderr);
    assert!(stderr.contains("outside the granted directories"), "{stderr}");
}
