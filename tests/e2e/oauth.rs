//! OAuth 2.1 at the HTTP server's door, against a real authorization server (panva's
//! `oidc-provider`, from npm, run by `tests/mcp/oauth_server.mjs`): the official Python
//! SDK client signs in and acts as its account's agent; tokens that are expired, for
//! another resource, signed by another key, unsigned or short of a scope are refused
//! with the challenge that says why; the issuer's keys rotate; `[oauth]` reloads.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost_tests::wire::{HttpSession, initialize_request};
use toolhost_tests::{
    KilledOnDrop, ToolsDir, free_loopback_port, mcp_python, npm_package, spawn_http_server, toolhost_bin,
};

const CAROL_TOKEN: &str = "carol-token-0123456789abcdef";

/// A directory with `oidc-provider` under `node_modules` and the server script beside it.
fn authorization_server_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = npm_package(&toolhost_tests::test_programs::OAUTH_SERVER);
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/oauth_server.mjs");
        std::fs::copy(script, dir.join("oauth_server.mjs")).expect("copy oauth_server.mjs");
        dir
    })
    .clone()
}

/// `tests/mcp/oauth_server.mjs`; stopped when dropped (its stdin closes).
struct AuthorizationServer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    issuer: String,
    authority: String,
}

impl AuthorizationServer {
    fn start(args: &[&str]) -> AuthorizationServer {
        let dir = authorization_server_dir();
        let mut child = Command::new("node")
            .arg(dir.join("oauth_server.mjs"))
            .args(["--port", "0"])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run node");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let started = read_json_line(&mut stdout);
        let issuer = started["issuer"].as_str().unwrap_or_else(|| panic!("{started}")).to_owned();
        let authority = started["url"].as_str().unwrap().trim_start_matches("http://").to_owned();
        AuthorizationServer { child, stdin, stdout, issuer, authority }
    }

    /// An access token of the client credentials grant, for `client` (`test-client`, or
    /// `short-client`, whose tokens live a second).
    fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let secret = client.replace("-client", "-secret");
        let form = format!(
            "grant_type=client_credentials&client_id={client}&client_secret={secret}&resource={}&scope={}",
            encode(resource),
            encode(scope)
        );
        let answer = post_form(&self.authority, "/token", &form);
        answer["access_token"].as_str().unwrap_or_else(|| panic!("no token: {answer}")).to_owned()
    }

    /// Signs with a new key from now on and publishes only it; returns its id.
    fn rotate(&mut self) -> String {
        let stdin = self.stdin.as_mut().expect("stdin");
        stdin.write_all(b"rotate\n").and_then(|_| stdin.flush()).expect("ask for a rotation");
        read_json_line(&mut self.stdout)["rotated"].as_str().expect("the new key's id").to_owned()
    }
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_json_line(stdout: &mut BufReader<ChildStdout>) -> Value {
    let mut line = String::new();
    stdout.read_line(&mut line).expect("read the authorization server's stdout");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not a JSON line ({e}): {line:?}"))
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// POSTs a form on a connection of its own and returns the JSON answer.
fn post_form(authority: &str, path: &str, form: &str) -> Value {
    let mut stream = TcpStream::connect(authority).expect("connect to the authorization server");
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: {authority}\r\ncontent-type: application/x-www-form-urlencoded\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{form}",
        form.len()
    );
    stream.write_all(request.as_bytes()).expect("send the form");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("read the answer");
    let body = answer.split_once("\r\n\r\n").map(|(_, body)| body).unwrap_or_default();
    serde_json::from_str(body).unwrap_or_else(|e| panic!("no JSON ({e}): {answer}"))
}

/// The stdlib task list and a `who` tool that tells its caller, served with `[oauth]`
/// for `issuer`, beside a static token for carol; one policy rule per agent.
fn serve_with_oauth(issuer: &str, port: u16) -> (ToolsDir, tempfile::TempDir, PathBuf, KilledOnDrop, String) {
    let tools = ToolsDir::new();
    tools.install("stdlib-task", "task", "task");
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../stdlib/task/manifest.toml");
    tools.manifest("task", "task", &std::fs::read_to_string(shipped).unwrap());
    tools.install("kv", "who", "kv");
    tools.manifest("who", "kv", "[grants]\ncaller = true\n");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, oauth_config(issuer, port, "mcp:tools")).unwrap();
    let mut command = Command::new(toolhost_bin());
    command.arg("--config").arg(&config).arg("serve").arg(tools.path());
    command.args(["--http", &format!("127.0.0.1:{port}")]);
    let (server, addr) = spawn_http_server(command).expect("toolhost serves");
    let server = KilledOnDrop(server);
    HttpSession::wait_until_ready(&addr, None, Duration::from_secs(60));
    (tools, dir, config, server, addr)
}

fn oauth_config(issuer: &str, port: u16, required_scope: &str) -> String {
    let carol: String = toolhost::serve::digest(CAROL_TOKEN).iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "[storage]\npath = \"state.sqlite3\"\n\n\
         [[policy]]\nagent = \"alice\"\nallow = [\"task/*\", \"who/*\"]\n\n\
         [[policy]]\nagent = \"bob\"\nallow = [\"task/*\"]\n\n\
         [[policy]]\nagent = \"*\"\nallow = [\"who/*\"]\n\n\
         [[token]]\nagent = \"carol\"\nsha256 = \"{carol}\"\n\n\
         [oauth]\nissuer = \"{issuer}\"\nresource = \"http://127.0.0.1:{port}/mcp\"\n\
         scopes = [\"{required_scope}\"]\nclock_skew = \"1s\"\n\
         scope_agents = [{{ scope = \"tools:ops\", agent = \"ops\" }}]\n"
    )
}

/// Runs `tests/mcp/oauth_client.py` as `account` against `url` with `calls`.
fn python_oauth_client(url: &str, account: &str, calls: Value) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/oauth_client.py");
    let output = Command::new(mcp_python()).arg(script).args([url, account]).arg(calls.to_string()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let printed: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("oauth_client.py printed no JSON ({e}): {stdout}\n{}", stderr_of(&output)));
    assert!(output.status.success(), "oauth_client.py failed: {printed}\n{}", stderr_of(&output));
    printed
}

fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The status and `WWW-Authenticate` of an `initialize` with `token`.
fn initialize_with(addr: &str, token: Option<&str>) -> (u16, String) {
    let mut session = HttpSession::connect(addr, "/mcp");
    session.authorization = token.map(|token| format!("Bearer {token}"));
    let response = session.post(&initialize_request());
    (response.status, response.header("www-authenticate").unwrap_or_default().to_owned())
}

/// Whom `token` acts as, as the `who` tool learns it.
fn agent_of(addr: &str, token: &str) -> Value {
    let mut session = HttpSession::start(addr, "/mcp", Some(&format!("Bearer {token}")));
    let answer = session.call("who.run", &json!({ "ops": [{ "op": "caller" }] }));
    answer["result"]["structuredContent"]["results"][0]["ok"]["agent"].clone()
}

#[test]
fn the_python_sdk_signs_in_with_oauth_and_each_account_is_its_own_agent() {
    let port = free_loopback_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let issuer = AuthorizationServer::start(&["--resource", &resource]);
    let (_tools, _dir, _config, _server, addr) = serve_with_oauth(&issuer.issuer, port);

    let (status, challenge) = initialize_with(&addr, None);
    assert_eq!(status, 401);
    let metadata_url = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    assert!(challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")), "{challenge}");
    assert!(challenge.contains("scope=\"mcp:tools\""), "{challenge}");
    let mut probe = HttpSession::connect(&addr, "/.well-known/oauth-protected-resource/mcp");
    let metadata: Value = serde_json::from_slice(&probe.request("GET", None, &[]).body).unwrap();
    assert_eq!(metadata["resource"], resource.as_str());
    assert_eq!(metadata["authorization_servers"], json!([issuer.issuer]));

    let caller = json!({ "name": "who.run", "arguments": { "ops": [{ "op": "caller" }] } });
    let alice = python_oauth_client(
        &resource,
        "alice",
        json!([{ "name": "task.create", "arguments": { "title": "alice's errand" } }, caller]),
    );
    assert!(alice["tools"].as_array().unwrap().iter().any(|t| t == "who.run"), "{alice}");
    assert_eq!(alice["results"][0]["structured"]["id"], 1, "{alice}");
    assert_eq!(alice["results"][1]["structured"]["results"][0]["ok"]["agent"], "alice", "{alice}");

    let bob = python_oauth_client(&resource, "bob", json!([{ "name": "task.list", "arguments": {} }]));
    let bob_tools: Vec<&str> = bob["tools"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert!(bob_tools.iter().all(|t| t.starts_with("task.")), "bob's policy rule: {bob_tools:?}");
    assert_eq!(bob["results"][0]["structured"]["tasks"], json!([]), "alice's task is hers: {bob}");

    let alice_token = alice["access_token"].as_str().unwrap();
    assert_eq!(agent_of(&addr, alice_token), "alice", "the SDK's token acts as alice on any connection");
    assert_eq!(agent_of(&addr, CAROL_TOKEN), "carol", "the server's own tokens work beside OAuth");
}

#[test]
fn access_tokens_are_refused_unless_fresh_for_this_server_signed_by_the_issuer_and_scoped() {
    let port = free_loopback_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let other_resource = format!("http://127.0.0.1:{port}/other");
    let mut issuer = AuthorizationServer::start(&["--resource", &resource, "--resource", &other_resource]);
    let (_tools, _dir, config, _server, addr) = serve_with_oauth(&issuer.issuer, port);
    let refusal = |token: &str| initialize_with(&addr, Some(token));

    let good = issuer.token("test-client", &resource, "mcp:tools");
    assert_eq!(agent_of(&addr, &good), "test-client", "`sub` names the agent");
    let ops = issuer.token("test-client", &resource, "mcp:tools tools:ops");
    assert_eq!(agent_of(&addr, &ops), "ops", "a scope agent goes before `sub`");

    let (status, challenge) = refusal(&issuer.token("test-client", &resource, "tools:ops"));
    assert_eq!(status, 403, "{challenge}");
    assert!(challenge.contains("error=\"insufficient_scope\"") && challenge.contains("resource_metadata="));
    let refused_because = |token: &str, why: &str| {
        let (status, challenge) = refusal(token);
        assert_eq!(status, 401, "{why}: {challenge}");
        assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
        assert!(challenge.contains(&format!("error_description=\"{why}\"")), "{why}: {challenge}");
        assert!(!challenge.contains(token), "a refusal never repeats the token");
    };
    refused_because(&issuer.token("test-client", &other_resource, "mcp:tools"), "the token is for another resource");
    // It lives a second; the server allows a second of clock skew.
    let expired = issuer.token("short-client", &resource, "mcp:tools");
    std::thread::sleep(Duration::from_millis(3100));
    refused_because(&expired, "the token has expired");
    refused_because("not-a-jwt", "the token is not a signed JWT");
    let claims = json!({ "iss": issuer.issuer, "aud": resource, "sub": "mallory", "scope": "mcp:tools",
                         "exp": 4_000_000_000u64 });
    let unsigned = format!("{}.{}.", b64(&json!({ "alg": "none", "typ": "JWT" })), b64(&claims));
    refused_because(&unsigned, "the token is not a signed JWT");
    let body = good.split('.').nth(1).unwrap();
    let forged = format!("{}.{body}.{}", b64(&json!({ "alg": "HS256", "typ": "at+jwt" })), "c2ln");
    refused_because(&forged, "the token is signed with an algorithm this server does not accept");

    let impostor = AuthorizationServer::start(&["--resource", &resource, "--issuer", &issuer.issuer]);
    let foreign = impostor.token("test-client", &resource, "mcp:tools");
    refused_because(&foreign, "the token is signed by a key the issuer does not publish");

    // The issuer rotates its key: a token of the new key is taken (once the server's
    // pause between reads of the keys has passed), one of the retired key no longer.
    std::thread::sleep(Duration::from_millis(2100));
    issuer.rotate();
    let rotated = issuer.token("test-client", &resource, "mcp:tools");
    assert_eq!(agent_of(&addr, &rotated), "test-client");
    refused_because(&good, "the token is signed by a key the issuer does not publish");

    // `[oauth]` reloads: a required scope the tokens lack refuses them from then on.
    std::fs::write(&config, oauth_config(&issuer.issuer, port, "tools:ops")).unwrap();
    let started = Instant::now();
    while refusal(&rotated).0 != 403 {
        assert!(started.elapsed() < Duration::from_secs(15), "the new required scope did not take effect");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(agent_of(&addr, &issuer.token("test-client", &resource, "mcp:tools tools:ops")), "ops");
}

fn b64(value: &Value) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

/// While the issuer cannot be reached and none of its keys were ever read, a token can
/// be neither taken nor refused: `503` with `Retry-After`, not `401`, so that a client
/// keeps its token; the server's own tokens go on working.
#[test]
fn an_unreachable_issuer_makes_tokens_wait_not_fail() {
    let (port, dead) = (free_loopback_port(), free_loopback_port());
    let (_tools, _dir, _config, _server, addr) = serve_with_oauth(&format!("http://127.0.0.1:{dead}"), port);
    let claims = json!({ "iss": format!("http://127.0.0.1:{dead}"), "aud": format!("http://127.0.0.1:{port}/mcp"),
                         "sub": "alice", "scope": "mcp:tools", "exp": 4_000_000_000u64 });
    let token = format!("{}.{}.c2ln", b64(&json!({ "alg": "ES256", "kid": "k-1" })), b64(&claims));
    let mut session = HttpSession::connect(&addr, "/mcp");
    session.authorization = Some(format!("Bearer {token}"));
    let answer = session.post(&initialize_request());
    assert_eq!(answer.status, 503, "{answer:?}");
    assert_eq!(answer.header("retry-after"), Some("5"), "{answer:?}");
    assert!(answer.header("www-authenticate").is_some_and(|c| !c.contains("error=")), "{answer:?}");
    assert_eq!(agent_of(&addr, CAROL_TOKEN), "carol");
}
