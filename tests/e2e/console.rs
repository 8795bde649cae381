//! The operator's console: its doors (sign-in, CSRF, Host and Origin, agents' tokens)
//! over raw HTTP, and the whole of it in Debian's Chromium driven by Playwright, while
//! the official Python SDK waits for the approvals given there.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_tests::{KilledOnDrop, ToolsDir, mcp_python, npm_package, spawn_http_server, toolhost_bin};

const AGENT_TOKEN: &str = "agent-token-of-lead-0123456789abcdef";
const OPERATOR_TOKEN: &str = "operator-token-of-alice-0123456789abcdef";

fn hex_digest(token: &str) -> String {
    toolhost::serve::digest(token).iter().map(|b| format!("{b:02x}")).collect()
}

/// A server of `math` (whose `evaluate` needs approval) with the console on, an agent
/// `lead` and an operator `alice`; its audit file and its own store in `dir`.
struct Console {
    tools: ToolsDir,
    dir: tempfile::TempDir,
    _server: KilledOnDrop,
    addr: String,
}

/// The approval key replicas share, which also seals the console's sign-ins.
const APPROVAL_KEY: &str = "the key every replica of this test shares, 32+ characters";

impl Console {
    fn start(console: &str) -> Console {
        let tools = ToolsDir::new();
        tools.install("math", "math", "math");
        tools.manifest("math", "math", "[tools.evaluate.policy]\nrequires_approval = true\nrisk = \"high\"\n");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("approval.key"), APPROVAL_KEY).unwrap();
        let config = format!(
            "[audit]\njsonl = \"audit.jsonl\"\n[storage]\npath = \"state.sqlite3\"\n\
             [http]\napproval_key = {{ file = \"approval.key\" }}\n\
             [[token]]\nagent = \"lead\"\nsha256 = \"{}\"\n{console}",
            hex_digest(AGENT_TOKEN)
        );
        std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
        let (server, addr) = serve(dir.path(), tools.path());
        Console { tools, dir, _server: server, addr }
    }

    /// Another server of the same configuration, store and tools: a replica.
    fn replica(&self) -> (KilledOnDrop, String) {
        serve(self.dir.path(), self.tools.path())
    }

    fn enabled() -> Console {
        Console::start(&format!(
            "[console]\nenabled = true\napprove_via = \"both\"\n\
             [[console.operator]]\nname = \"alice\"\nsha256 = \"{}\"\n",
            hex_digest(OPERATOR_TOKEN)
        ))
    }

    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        raw_request(&self.addr, method, path, headers, body)
    }

    /// Signs in as alice: the cookie, and the CSRF token of the sign-in.
    fn sign_in(&self) -> (String, String) {
        let form = [("Content-Type", "application/x-www-form-urlencoded")];
        let answer = self.request("POST", "/console/login", &form, &format!("token={OPERATOR_TOKEN}"));
        assert_eq!((answer.status, answer.header("location")), (303, Some("/console/tools")), "{answer:?}");
        let set_cookie = answer.header("set-cookie").expect("a cookie").to_owned();
        for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console"] {
            assert!(set_cookie.contains(attribute), "{set_cookie}");
        }
        let cookie = set_cookie.split(';').next().unwrap().to_owned();
        let session = self.request("GET", "/console/api/session", &[("Cookie", &cookie)], "");
        assert_eq!(session.status, 200, "{session:?}");
        assert_eq!(session.json()["operator"], "alice");
        (cookie, session.json()["csrf"].as_str().unwrap().to_owned())
    }

    fn audit(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.dir.path().join("audit.jsonl")).unwrap_or_default();
        text.lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }
}

fn serve(config_dir: &Path, tools: &Path) -> (KilledOnDrop, String) {
    let mut command = Command::new(toolhost_bin());
    command.arg("--config").arg(config_dir.join("toolhost.toml"));
    command.arg("serve").arg(tools).args(["--http", "127.0.0.1:0"]);
    let (child, addr) = spawn_http_server(command).expect("the server starts");
    (KilledOnDrop(child), addr)
}

#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// One HTTP/1.1 request on its own connection; `Host` is the server's unless given.
fn raw_request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("send");
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the answer");
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|line| line.split(' ').nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
        .collect();
    Answer { status, headers, body: body.to_owned() }
}

#[test]
fn the_console_lets_in_only_a_signed_in_operator_from_its_own_pages() {
    let console = Console::enabled();
    // Nobody signed in: a page sends to the sign-in page, the API says 401.
    let page = console.request("GET", "/console/tools", &[], "");
    assert_eq!((page.status, page.header("location")), (303, Some("/console/login")), "{page:?}");
    assert_eq!(console.request("GET", "/console/api/tools", &[], "").status, 401);
    // An agent's token is not an operator's, neither as a bearer token nor at sign-in.
    let bearer = format!("Bearer {AGENT_TOKEN}");
    assert_eq!(console.request("GET", "/console/api/tools", &[("Authorization", &bearer)], "").status, 401);
    let form = [("Content-Type", "application/x-www-form-urlencoded")];
    let refused = console.request("POST", "/console/login", &form, &format!("token={AGENT_TOKEN}"));
    assert_eq!((refused.status, refused.header("location")), (303, Some("/console/login?failed=1")));
    assert!(refused.header("set-cookie").is_none(), "{refused:?}");
    // Nor is an operator's token an agent's at the MCP endpoint.
    let operator_bearer = format!("Bearer {OPERATOR_TOKEN}");
    let mcp = console.request("POST", "/mcp", &[("Authorization", &operator_bearer)], "{}");
    assert_eq!(mcp.status, 401, "{mcp:?}");

    let (cookie, csrf) = console.sign_in();
    let tools = console.request("GET", "/console/api/tools", &[("Cookie", &cookie)], "");
    assert_eq!(tools.status, 200);
    let listed = tools.json();
    let names: Vec<&str> = listed["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"math/evaluate") && names.contains(&"math/divide"), "{names:?}");
    let csp = tools.header("content-security-policy").expect("a CSP");
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"), "{csp}");
    assert_eq!(tools.header("x-frame-options"), Some("DENY"));

    // Changing anything needs the sign-in's CSRF token, and a page of the console's own.
    let call = json!({ "tool": "math/divide", "agent": "lead", "input": { "dividend": 7, "divisor": 2 } }).to_string();
    let json_type = ("Content-Type", "application/json");
    let wrong_csrf = "0".repeat(64);
    for (headers, why) in [
        (vec![("Cookie", cookie.as_str()), json_type], "no CSRF token"),
        (vec![("Cookie", cookie.as_str()), json_type, ("X-CSRF-Token", wrong_csrf.as_str())], "a wrong CSRF token"),
        (vec![json_type, ("X-CSRF-Token", csrf.as_str())], "no sign-in"),
        (
            vec![
                ("Cookie", cookie.as_str()),
                json_type,
                ("X-CSRF-Token", csrf.as_str()),
                ("Origin", "http://evil.example"),
            ],
            "a foreign Origin",
        ),
        (
            vec![("Cookie", cookie.as_str()), json_type, ("X-CSRF-Token", csrf.as_str()), ("Host", "evil.example")],
            "a foreign Host",
        ),
    ] {
        let refused = console.request("POST", "/console/api/call", &headers, &call);
        assert!(matches!(refused.status, 401 | 403), "{why}: {refused:?}");
    }
    assert!(console.audit().is_empty(), "no refused request reached a tool: {:?}", console.audit());
    let origin = format!("http://{}", console.addr);
    let headers =
        [("Cookie", cookie.as_str()), json_type, ("X-CSRF-Token", csrf.as_str()), ("Origin", origin.as_str())];
    let tried = console.request("POST", "/console/api/call", &headers, &call);
    assert_eq!(tried.status, 200, "{tried:?}");
    assert_eq!(tried.json()["output"], json!({ "value": 3.5 }), "{}", tried.body);
    assert_eq!(tried.json()["caller"]["agent"], "lead");
    let record = console.audit().pop().expect("the tried call is on record");
    assert_eq!(
        (record["tool"].as_str(), record["caller"]["session"].as_str()),
        (Some("math/divide"), Some("console:alice"))
    );

    // A sign-out forgets the cookie in the browser; a forged cookie never opened.
    let forged = format!("{}x", cookie);
    assert_eq!(console.request("GET", "/console/api/tools", &[("Cookie", &forged)], "").status, 401);
    let kept = console.request("POST", "/console/logout", &[("Cookie", cookie.as_str())], "");
    assert_eq!(kept.status, 403, "signing out needs the CSRF token too: {kept:?}");
    let out =
        console.request("POST", "/console/logout", &[("Cookie", cookie.as_str()), ("X-CSRF-Token", csrf.as_str())], "");
    assert_eq!(out.status, 204);
    assert!(out.header("set-cookie").is_some_and(|c| c.contains("Max-Age=0")), "{out:?}");
}

/// Runs `waiting_calls.py` (the official Python SDK, no elicitation) against `addr` in
/// the background: its calls wait for the console.
fn waiting_calls(addr: &str, calls: Value) -> std::thread::JoinHandle<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("console/waiting_calls.py");
    let mut command = Command::new(mcp_python());
    command.arg(&script).arg(format!("http://{addr}/mcp")).arg(AGENT_TOKEN).arg(calls.to_string());
    std::thread::spawn(move || {
        let output = command.output().expect("run the Python client");
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!("{e}: {}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
        })
    })
}

/// The calls waiting at a console, once `count` are.
fn wait_for_approvals(addr: &str, cookie: &str, count: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let listed = raw_request(addr, "GET", "/console/api/approvals", &[("Cookie", cookie)], "");
        assert_eq!(listed.status, 200, "{listed:?}");
        let approvals = listed.json()["approvals"].as_array().unwrap().clone();
        if approvals.len() >= count {
            return approvals;
        }
        assert!(std::time::Instant::now() < deadline, "{count} calls did not come to wait: {approvals:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn an_answer_on_one_replica_reaches_the_call_waiting_on_another_once() {
    let console = Console::enabled();
    let (_other, other_addr) = console.replica();
    // One sign-in serves every replica of the key.
    let (cookie, csrf) = console.sign_in();
    let waiting =
        waiting_calls(&console.addr, json!([{ "name": "math.evaluate", "arguments": { "expression": "2 ^ 10" } }]));
    let approvals = wait_for_approvals(&other_addr, &cookie, 1);
    let question = &approvals[0];
    assert_eq!(
        (question["tool"].as_str(), question["caller"]["agent"].as_str()),
        (Some("math/evaluate"), Some("lead"))
    );
    assert!(question["input"].as_str().unwrap().contains("2 ^ 10"), "{question}");
    assert_eq!(question["risk"], "high");
    let path = format!("/console/api/approvals/{}", question["id"].as_str().unwrap());
    // Without the CSRF token, an answer is refused.
    let json_type = ("Content-Type", "application/json");
    let yes = json!({ "approve": true }).to_string();
    let no_csrf = raw_request(&other_addr, "POST", &path, &[("Cookie", cookie.as_str()), json_type], &yes);
    assert_eq!(no_csrf.status, 403, "{no_csrf:?}");
    // Two operators answer at once, one on each replica, while the call waits: one
    // answer is taken, the other refused.
    let headers = [("Cookie", cookie.as_str()), ("X-CSRF-Token", csrf.as_str()), json_type];
    let answers: Vec<u16> = std::thread::scope(|scope| {
        let answering: Vec<_> = [&console.addr, &other_addr]
            .into_iter()
            .map(|addr| scope.spawn(|| raw_request(addr, "POST", &path, &headers, &yes).status))
            .collect();
        answering.into_iter().map(|answer| answer.join().unwrap()).collect()
    });
    assert_eq!(answers.iter().filter(|status| **status == 200).count(), 1, "{answers:?}");
    assert!(answers.iter().all(|status| matches!(status, 200 | 404 | 409)), "{answers:?}");
    let seen = waiting.join().unwrap();
    assert_eq!(seen["results"][0]["structured"], json!({ "value": 1024.0 }), "{seen}");
    // The answer was used: on either replica, it is gone.
    for addr in [&console.addr, &other_addr] {
        let again = raw_request(addr, "POST", &path, &headers, &yes);
        assert!(matches!(again.status, 404 | 409), "{again:?}");
    }
    let listed = raw_request(&other_addr, "GET", "/console/api/approvals", &[("Cookie", &cookie)], "");
    assert_eq!(listed.json()["approvals"], json!([]));
}

#[test]
fn the_console_is_off_unless_configured() {
    let operator = format!("[[console.operator]]\nname = \"alice\"\nsha256 = \"{}\"\n", hex_digest(OPERATOR_TOKEN));
    for config in [String::new(), format!("[console]\nenabled = false\n{operator}")] {
        let console = Console::start(&config);
        assert_eq!(console.request("GET", "/console/tools", &[], "").status, 404, "{config}");
        let form = [("Content-Type", "application/x-www-form-urlencoded")];
        let sign_in = console.request("POST", "/console/login", &form, &format!("token={OPERATOR_TOKEN}"));
        assert_eq!(sign_in.status, 404, "{config}");
    }
}

/// Where the browser test puts its screenshots: `docs/console/` when
/// `TOOLHOST_CONSOLE_SCREENSHOTS=docs` (to refresh the documentation's), else the target dir.
fn screenshots_dir() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_owned();
    match std::env::var("TOOLHOST_CONSOLE_SCREENSHOTS").as_deref() {
        Ok("docs") => root.join("docs/console"),
        _ => root.join("target/tmp/console-screenshots"),
    }
}

/// Debian's Chromium: installed by `cargo xtask test` (and `.ci/run`).
fn chromium() -> PathBuf {
    let path = PathBuf::from("/usr/bin/chromium");
    assert!(path.exists(), "the browser test needs Debian's chromium: apt-get install chromium");
    path
}

#[test]
fn an_operator_finds_tries_watches_and_approves_in_a_browser() {
    let console = Console::enabled();
    let browser = chromium();
    let playwright = npm_package(&toolhost_tests::test_programs::PLAYWRIGHT);
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("console/console.mjs"), playwright.join("console.mjs"))
        .expect("copy the browser script");

    // The agent's client cannot ask a person: its calls wait for the console.
    let waiting = waiting_calls(
        &console.addr,
        json!([
            { "name": "math.evaluate", "arguments": { "expression": "6 * 7" } },
            { "name": "math.evaluate", "arguments": { "expression": "1 + 1" } },
        ]),
    );

    let shots = screenshots_dir();
    let output = Command::new("node")
        .arg("console.mjs")
        .current_dir(&playwright)
        .env("CONSOLE_URL", format!("http://{}", console.addr))
        .env("OPERATOR_TOKEN", OPERATOR_TOKEN)
        .env("CHROMIUM", &browser)
        .env("SCREENSHOTS", &shots)
        .env("TRY_TOOL", "math/divide")
        .env("TRY_AGENT", "lead")
        .env("TRY_INPUT", json!({ "dividend": 7, "divisor": 2 }).to_string())
        .env("TRY_OUTPUT", json!({ "value": 3.5 }).to_string())
        .env("APPROVE_TOOL", "math/evaluate")
        .env("APPROVE_MARK", "6 * 7")
        .env("DENY_MARK", "1 + 1")
        .env("DENY_REASON", "not during the freeze")
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stdout.contains("ALL STEPS PASSED"),
        "the browser script failed:\n{stdout}\n{stderr}"
    );

    let seen = waiting.join().unwrap();
    let results = seen["results"].as_array().unwrap_or_else(|| panic!("{seen}"));
    assert_eq!(results[0]["is_error"], false, "{seen}");
    assert_eq!(results[0]["structured"], json!({ "value": 42.0 }), "{seen}");
    let denied = results[1]["text"].as_str().unwrap();
    assert_eq!(results[1]["is_error"], true, "{seen}");
    assert!(denied.contains("denied by the operator alice: not during the freeze"), "{denied}");

    // Each answer is on record with who gave it.
    let audit = console.audit();
    let approvals: Vec<&Value> =
        audit.iter().filter(|r| r["tool"] == "math/evaluate").map(|r| &r["approval"]).collect();
    assert_eq!(approvals.len(), 2, "{audit:?}");
    for approval in &approvals {
        assert_eq!((approval["answered_by"].as_str(), approval["operator"].as_str()), (Some("console"), Some("alice")));
    }
    assert!(approvals.iter().any(|a| a["approved"] == true) && approvals.iter().any(|a| a["approved"] == false));
    for shot in ["login.png", "tools.png", "tool.png", "calls.png", "approvals.png"] {
        assert!(shots.join(shot).metadata().is_ok_and(|m| m.len() > 1000), "screenshot {shot}");
    }
}
