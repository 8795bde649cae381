//! Declarative HTTP tools (`<ns>/<name>.http.toml`) against a real HTTP server on
//! loopback: the request built from the input, the output picked from the response,
//! and everything the call pipeline and the outgoing-HTTP rules promise for them.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use toolhost::{CallError, Caller, Policy, PolicyRule, ToolHost};
use toolhost_tests::{ToolsDir, toolhost_bin};

/// A request the service saw.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path_and_query: String,
    headers: BTreeMap<String, String>,
}

/// A real HTTP/1.1 JSON service on 127.0.0.1. `/echo/...` answers `{"data": the
/// request}`; `/status/N` answers status N quoting the request's `authorization`
/// header back (as careless services do); `/wrong` answers data that breaks the tools'
/// output schema; `/text` is not JSON; `/big` is 64 KiB; `/slow` answers after 10 s;
/// `/chart` is a PNG (`image/png; charset=binary`) and `/beep` a WAV (`audio/wav`).
struct Service {
    addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Service {
    async fn start() -> Service {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else { return };
                let record = record.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| answer(request, record.clone()));
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Service { addr, seen, task }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn response(status: u16, body: impl Into<Bytes>) -> hyper::Response<Full<Bytes>> {
    let mut response = hyper::Response::new(Full::new(body.into()));
    *response.status_mut() = hyper::StatusCode::from_u16(status).unwrap();
    response
}

async fn answer(
    request: hyper::Request<hyper::body::Incoming>,
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
    let body = request.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Ok(match path.as_str() {
        "/wrong" => response(200, json!({ "data": { "celsius": "warm" } }).to_string()),
        "/text" => response(200, "<html>not json</html>"),
        "/badge" => {
            let echoed = headers.get("authorization").cloned().unwrap_or_default();
            let mut answer = response(200, format!("<svg><text>{echoed}</text></svg>"));
            answer.headers_mut().insert("content-type", "image/svg+xml".parse().unwrap());
            answer
        }
        "/chart" | "/beep" => {
            let (bytes, mime): (&[u8], &str) = match path.as_str() {
                "/chart" => (b"\x89PNG\r\n\x1a\nnot really a chart", "image/png; charset=binary"),
                _ => (b"RIFF\x24\x00\x00\x00WAVEfmt ", "audio/wav"),
            };
            let mut answer = response(200, Bytes::from_static(bytes));
            answer.headers_mut().insert("content-type", mime.parse().unwrap());
            answer
        }
        "/big" => response(200, json!({ "data": { "celsius": 1, "pad": "x".repeat(64 << 10) } }).to_string()),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(10)).await;
            response(200, "{}")
        }
        _ if path.starts_with("/status/") => {
            let status = path["/status/".len()..].parse().unwrap_or(500);
            // Each form a service may quote a header in: as it is, JSON-escaped (with
            // `\/`), percent-encoded, and the base64 of the whole header line.
            let echoed = headers.get("authorization").cloned().unwrap_or_default();
            let json_escaped = serde_json::to_string(&echoed).unwrap().replace('/', "\\/");
            let percent: String = echoed
                .bytes()
                .map(|b| if b.is_ascii_alphanumeric() { char::from(b).to_string() } else { format!("%{b:02X}") })
                .collect();
            use base64::Engine as _;
            let line = base64::engine::general_purpose::STANDARD.encode(format!("Authorization: {echoed}\r\n"));
            response(
                status,
                format!(
                    "no such city; you sent authorization {echoed} {json_escaped} {percent} {line}; {}",
                    "z".repeat(4000)
                ),
            )
        }
        _ => response(
            200,
            json!({ "data": { "celsius": 21.5, "method": method, "path_and_query": path_and_query, "headers": headers, "body": body } })
                .to_string(),
        ),
    })
}

/// A definition of `weather/<name>` calling `url` on `service`, allowed by its address
/// (the way an operator allows an internal service explicitly), with `extra` lines.
fn definition(service: &Service, url_path: &str, extra: &str) -> String {
    format!(
        r#"description = "Weather for a city, from the test service."
url = "http://{addr}{url_path}"
network = ["{addr}"]
output = "/data"
{extra}
[input_schema]
type = "object"
required = ["city"]
properties = {{ city = {{ type = "string" }}, days = {{ type = "integer" }}, payload = {{ type = "object" }} }}
additionalProperties = false

[output_schema]
type = "object"
required = ["celsius"]
properties = {{ celsius = {{ type = "number" }} }}
"#,
        addr = service.addr
    )
}

fn write(tools: &ToolsDir, name: &str, text: &str) -> std::path::PathBuf {
    tools.write("weather", &format!("{name}.http.toml"), text.as_bytes())
}

async fn host_of(tools: &ToolsDir) -> ToolHost {
    ToolHost::builder().root(tools.path()).build().await.unwrap()
}

#[tokio::test]
async fn http_tools_call_a_loopback_service_the_definition_allows_by_address() {
    let service = Service::start().await;
    let tools = ToolsDir::new();
    let secret_dir = tempfile::tempdir().unwrap();
    let secret_file = secret_dir.path().join("token");
    std::fs::write(&secret_file, "file-secret-7731\n").unwrap();
    let headers = format!(
        "method = \"POST\"\nbody = \"/payload\"\n[headers]\nAuthorization = {{ file = {:?}, prefix = \"Bearer \" }}\nX-Plain = \"plain value\"\n",
        secret_file.display().to_string()
    );
    write(&tools, "forecast", &definition(&service, "/echo/v1/{city}?days={days}&units=metric", &headers));
    let host = host_of(&tools).await;

    let input = json!({ "city": "São Paulo/../admin?x=1#y", "days": 3, "payload": { "note": "a&b" } });
    let report = host.call_detailed("weather/forecast", input).await;
    let output = report.outcome.clone().unwrap();
    assert_eq!(output["celsius"], 21.5, "the output is the response's /data: {output}");
    assert_eq!(output["method"], "POST");
    assert_eq!(
        output["path_and_query"], "/echo/v1/S%C3%A3o%20Paulo%2F..%2Fadmin%3Fx%3D1%23y?days=3&units=metric",
        "one encoded path segment and query value, whatever the input holds"
    );
    assert_eq!(output["body"], json!({ "note": "a&b" }), "the body is the input's /payload");
    // The service got the secret; what it echoes back of it is blanked in the output.
    assert_eq!(service.seen()[0].headers["authorization"], "Bearer file-secret-7731");
    assert_eq!(output["headers"]["authorization"], "Bearer [secret]");
    assert_eq!(output["headers"]["x-plain"], "plain value");
    assert_eq!(output["headers"]["content-type"], "application/json");
    assert_eq!(output["headers"]["host"], service.addr.to_string());
    assert_eq!(report.tool.as_deref(), Some("weather/forecast"));
    assert_eq!(
        report.component_hash.as_ref().map(|hash| hash.starts_with("blake3:") && hash.len() == 71),
        Some(true),
        "the definition's hash is recorded"
    );

    let sent = &service.seen()[0];
    assert_eq!(sent.method, "POST");
    assert!(sent.path_and_query.starts_with("/echo/v1/S%C3%A3o%20Paulo%2F..%2Fadmin"), "{}", sent.path_and_query);

    // An absent optional query value drops its pair.
    let output = host.call("weather/forecast", json!({ "city": "Oslo", "payload": {} })).await.unwrap();
    assert_eq!(output["path_and_query"], "/echo/v1/Oslo?units=metric");
    assert_eq!(service.seen().len(), 2);

    // A rotated secret file is used by the next call, without a reload.
    std::fs::write(&secret_file, "file-secret-rotated").unwrap();
    let output = host.call("weather/forecast", json!({ "city": "Oslo", "payload": {} })).await.unwrap();
    assert_eq!(service.seen().last().unwrap().headers["authorization"], "Bearer file-secret-rotated");
    assert_eq!(output["headers"]["authorization"], "Bearer [secret]", "the rotated secret is redacted too");

    // The input is validated against the input schema before any request.
    let invalid = host.call("weather/forecast", json!({ "town": "Oslo" })).await;
    assert!(matches!(invalid, Err(CallError::InputInvalid { .. })), "{invalid:?}");
    assert_eq!(service.seen().len(), 3, "an invalid input sends nothing");

    // Listed like any tool; the listing never shows a header value.
    let listing = serde_json::to_string(&host.listing()).unwrap();
    assert!(listing.contains("weather/forecast") && listing.contains("forecast.http.toml"), "{listing}");
    assert!(!listing.contains("file-secret"), "{listing}");
    let listed = host.list(&Caller::local());
    let tool = listed.iter().find(|t| t.name == "weather/forecast").expect("listed");
    assert!(tool.description.contains("Weather for a city"));
}

/// A resolver that answers one fixed address for every name, as a split-horizon or
/// poisoned DNS would.
struct FixedAnswer(std::net::IpAddr);

impl toolhost::Resolve for FixedAnswer {
    fn resolve(&self, _host: &str, port: u16) -> futures::future::BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> {
        let answer = vec![SocketAddr::new(self.0, port)];
        Box::pin(async move { Ok(answer) })
    }
}

#[tokio::test]
async fn http_tools_never_reach_private_addresses_through_a_granted_name() {
    let service = Service::start().await;
    let port = service.addr.port();
    for (address, range) in [("127.0.0.1", "loopback"), ("10.1.2.3", "private-use 10.0.0.0/8")] {
        let tools = ToolsDir::new();
        let text = definition(&service, "/echo/{city}", "")
            .replace(&format!("http://{}", service.addr), &format!("http://inside.test:{port}"))
            .replace(&format!("[\"{}\"]", service.addr), &format!("[\"inside.test:{port}\"]"));
        write(&tools, "inside", &text);
        let resolver = Arc::new(FixedAnswer(address.parse().unwrap()));
        let host = ToolHost::builder().root(tools.path()).resolver(resolver).build().await.unwrap();
        assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
        let report = host.call_detailed("weather/inside", json!({ "city": "Oslo" })).await;
        let Err(CallError::Failed { message, .. }) = &report.outcome else { panic!("{:?}", report.outcome) };
        assert!(message.contains(&format!("inside.test:{port} was refused")), "{message}");
        assert!(message.contains("non-public addresses") && message.contains(range), "{message}");
        assert_eq!(report.denied_requests.len(), 1);
        assert_eq!(report.denied_requests[0].destination, format!("inside.test:{port}"));
    }
    assert!(service.seen().is_empty(), "nothing reached the service behind the name");
}

#[tokio::test]
async fn http_tool_failures_are_typed_bounded_and_keep_secrets_out() {
    let service = Service::start().await;
    let tools = ToolsDir::new();
    let secret_dir = tempfile::tempdir().unwrap();
    let secret_file = secret_dir.path().join("token");
    std::fs::write(&secret_file, "status/secret-5150").unwrap();
    let auth = format!("[headers]\nAuthorization = {{ file = {:?} }}\n", secret_file.display().to_string());
    write(&tools, "missing", &definition(&service, "/status/404", &auth));
    write(&tools, "wrong", &definition(&service, "/wrong", ""));
    write(&tools, "text", &definition(&service, "/text", ""));
    write(&tools, "big", &definition(&service, "/big", "max_response = \"16 KiB\""));
    write(
        &tools,
        "elsewhere",
        &definition(&service, "/echo/x", "").replace("output = \"/data\"", "output = \"/nope\""),
    );
    write(&tools, "slow", &definition(&service, "/slow", "timeout = \"1s\""));
    write(&tools, "echoing", &definition(&service, "/echo/x", &auth));
    let audit_dir = tempfile::tempdir().unwrap();
    let audit = audit_dir.path().join("audit.jsonl");
    let host = ToolHost::builder().root(tools.path()).audit_jsonl(&audit).build().await.unwrap();
    let city = json!({ "city": "Oslo" });

    let missing = host.call("weather/missing", city.clone()).await;
    let Err(CallError::Failed { message, .. }) = &missing else { panic!("{missing:?}") };
    assert!(message.contains("answered HTTP 404 Not Found: no such city"), "{message}");
    assert_eq!(message.matches("[secret]").count(), 4, "every form is redacted: {message}");
    assert!(!message.contains("secret-5150") && !message.contains("secret%2D5150"), "redacted: {message}");
    assert!(message.len() < 1000, "the body's excerpt is bounded: {}", message.len());
    assert_eq!(service.seen()[0].headers["authorization"], "status/secret-5150", "the secret was sent");

    // A service that echoes its request in a success puts no secret in the output.
    let echoing = host.call("weather/echoing", city.clone()).await.unwrap();
    assert_eq!(echoing["headers"]["authorization"], "[secret]", "{echoing}");

    let wrong = host.call("weather/wrong", city.clone()).await;
    let Err(CallError::OutputInvalid { violations, .. }) = &wrong else { panic!("{wrong:?}") };
    assert_eq!(violations[0].pointer, "/celsius");

    let text = host.call("weather/text", city.clone()).await;
    assert!(
        matches!(&text, Err(CallError::Failed { message, .. }) if message.contains("not JSON") && message.contains("<html>")),
        "{text:?}"
    );
    let big = host.call("weather/big", city.clone()).await;
    assert!(
        matches!(&big, Err(CallError::Failed { message, .. }) if message.contains("max_response (16384 bytes)")),
        "{big:?}"
    );
    let elsewhere = host.call("weather/elsewhere", city.clone()).await;
    assert!(
        matches!(&elsewhere, Err(CallError::Failed { message, .. }) if message.contains("nothing at `/nope`")),
        "{elsewhere:?}"
    );

    let started = std::time::Instant::now();
    let slow = host.call("weather/slow", city.clone()).await;
    assert!(matches!(slow, Err(CallError::Timeout { limit, .. }) if limit == Duration::from_secs(1)), "{slow:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());

    // Every attempt has its audit record, none with the secret.
    let mut lines = Vec::new();
    for _ in 0..200 {
        lines = std::fs::read_to_string(&audit).unwrap_or_default().lines().map(str::to_owned).collect();
        if lines.len() == 7 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let outcomes: Vec<String> = lines
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["outcome"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(outcomes, ["failed", "ok", "output_invalid", "failed", "failed", "failed", "timeout"]);
    assert!(!lines.join("\n").contains("secret-5150"), "no secret in the audit log");
}

#[tokio::test]
async fn http_tools_answer_to_caller_policy_and_approval() {
    let service = Service::start().await;
    let tools = ToolsDir::new();
    write(
        &tools,
        "forecast",
        &definition(&service, "/echo/{city}", "[policy]\nrequires_approval = true\nrisk = \"high\""),
    );
    let host = ToolHost::builder()
        .root(tools.path())
        .policy(Policy::new(vec![
            PolicyRule::for_agent("agent-1").allow(["weather/*"]),
            PolicyRule::for_agent("agent-2").allow(["math/*"]),
        ]))
        .build()
        .await
        .unwrap();
    let denied = host.call_as(&Caller::new("agent-2"), "weather/forecast", json!({ "city": "Oslo" })).await;
    assert!(matches!(denied, Err(CallError::NotFound { .. })), "hidden from a caller the policy refuses: {denied:?}");
    let unapproved = host.call_as(&Caller::new("agent-1"), "weather/forecast", json!({ "city": "Oslo" })).await;
    let Err(CallError::PermissionDenied { reason, .. }) = &unapproved else { panic!("{unapproved:?}") };
    assert!(reason.contains("no approval hook"), "{reason}");
    assert!(service.seen().is_empty(), "no request without approval");
    let entry = host.listing();
    let listed = serde_json::to_value(&entry).unwrap();
    let tool = listed["tools"].as_array().unwrap().iter().find(|t| t["name"] == "weather/forecast").unwrap().clone();
    assert_eq!(
        (&tool["risk"], &tool["source"], &tool["hints"]["open_world"]),
        (&json!("high"), &json!("http"), &json!(true)),
        "{tool}"
    );
}

#[tokio::test]
async fn http_tool_definitions_load_strictly_and_reload_like_components() {
    let service = Service::start().await;
    let tools = ToolsDir::new();
    write(&tools, "good", &definition(&service, "/echo/{city}", ""));
    let bad = write(&tools, "bad", &definition(&service, "/echo/{town}", ""));
    let host = host_of(&tools).await;
    assert!(host.call("weather/good", json!({ "city": "Oslo" })).await.is_ok(), "the good one serves");
    let errors: Vec<String> = host.load_errors().iter().map(ToString::to_string).collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("bad.http.toml") && errors[0].contains("line 2:"), "{}", errors[0]);
    assert!(errors[0].contains("`{town}` is not a property of [input_schema]"), "{}", errors[0]);

    // Fixed: served after a reload; broken again: the last good version keeps serving.
    std::fs::write(&bad, definition(&service, "/echo/{city}", "")).unwrap();
    let change = host.reload().await;
    assert_eq!(change.added, ["weather/bad"]);
    assert!(host.load_errors().is_empty());
    std::fs::write(&bad, definition(&service, "/echo/{city}", "surprise = 1")).unwrap();
    let change = host.reload().await;
    assert!(change.errors[0].to_string().contains("unknown field `surprise`"), "{:?}", change.errors);
    assert!(host.call("weather/bad", json!({ "city": "Oslo" })).await.is_ok(), "the last good version serves");

    // Changed: the new version answers; removed: gone.
    std::fs::write(&bad, definition(&service, "/echo/changed/{city}", "")).unwrap();
    let change = host.reload().await;
    assert_eq!(change.changed, ["weather/bad"]);
    let output = host.call("weather/bad", json!({ "city": "Oslo" })).await.unwrap();
    assert_eq!(output["path_and_query"], "/echo/changed/Oslo");
    std::fs::remove_file(&bad).unwrap();
    assert_eq!(host.reload().await.removed, ["weather/bad"]);

    // A secret that is not there, or a URL outside `network`, is refused at load.
    write(
        &tools,
        "nokey",
        &definition(&service, "/echo/{city}", "[headers]\nX-Key = { env = \"TOOLHOST_TEST_NO_SUCH_VAR\" }"),
    );
    write(
        &tools,
        "away",
        &definition(&service, "/echo/{city}", "").replacen(
            &format!("[\"{}\"]", service.addr),
            "[\"api.example.com\"]",
            1,
        ),
    );
    host.reload().await;
    let errors: Vec<String> = host.load_errors().iter().map(ToString::to_string).collect();
    assert!(
        errors.iter().any(|e| e.contains("nokey.http.toml")
            && e.contains("line 6:")
            && e.contains("TOOLHOST_TEST_NO_SUCH_VAR` is not set")),
        "{errors:?}"
    );
    assert!(errors.iter().any(|e| e.contains("away.http.toml") && e.contains("is not in `network`")), "{errors:?}");
}

/// Secrets from the environment and from files, through the CLI with its log at
/// `trace`: sent to the service, never in the log, the report or an error.
#[tokio::test]
async fn http_tool_secrets_never_appear_in_logs_reports_or_errors() {
    let service = Service::start().await;
    let tools = ToolsDir::new();
    let secret_dir = tempfile::tempdir().unwrap();
    let secret_file = secret_dir.path().join("token");
    std::fs::write(&secret_file, "file-secret-9902").unwrap();
    let headers = format!(
        "[headers]\nAuthorization = {{ env = \"WEATHER_TEST_TOKEN\", prefix = \"Bearer \" }}\nX-Other = {{ file = {:?} }}\n",
        secret_file.display().to_string()
    );
    write(&tools, "forecast", &definition(&service, "/echo/{city}", &headers));
    write(&tools, "missing", &definition(&service, "/status/401", &headers));
    let dir = tools.path().to_owned();
    let run = move |name: &'static str| {
        let dir = dir.clone();
        tokio::task::spawn_blocking(move || {
            std::process::Command::new(toolhost_bin())
                .args(["--log", "trace", "call"])
                .arg(&dir)
                .arg(name)
                .args(["--report", "--input", r#"{"city":"Oslo"}"#])
                .env("WEATHER_TEST_TOKEN", "env-secret-4417")
                .output()
                .unwrap()
        })
    };
    let ok = run("weather/forecast").await.unwrap();
    let failed = run("weather/missing").await.unwrap();
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
    assert!(!failed.status.success());
    let seen = service.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].headers["authorization"], "Bearer env-secret-4417", "the env secret was sent");
    assert_eq!(seen[0].headers["x-other"], "file-secret-9902", "the file secret was sent");
    let ok_report: Value = serde_json::from_slice(&ok.stdout).unwrap();
    assert_eq!(ok_report["output"]["celsius"], 21.5);
    let everything = [&ok.stdout, &ok.stderr, &failed.stdout, &failed.stderr]
        .iter()
        .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(everything.contains("weather/missing"), "the failure is reported: {everything}");
    assert!(everything.contains("HTTP 401"), "{everything}");
    // The echo route's output carries the headers the service received, as its answer
    // says; everything else (the trace log, the failed call's report and error, where
    // the service echoed the header back) must not hold a secret.
    for secret in ["env-secret-4417", "file-secret-9902"] {
        let shown = [&ok.stderr, &failed.stdout, &failed.stderr]
            .iter()
            .any(|bytes| String::from_utf8_lossy(bytes).contains(secret));
        assert!(!shown, "{secret} in a log, a report or an error: {everything}");
    }

    // `toolhost inspect` shows the definition and where each header comes from.
    let inspected = std::process::Command::new(toolhost_bin())
        .arg("inspect")
        .arg(tools.path().join("weather/forecast.http.toml"))
        .env("WEATHER_TEST_TOKEN", "env-secret-4417")
        .output()
        .unwrap();
    assert!(inspected.status.success(), "{}", String::from_utf8_lossy(&inspected.stderr));
    let shown = String::from_utf8_lossy(&inspected.stdout).into_owned();
    let inspected: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(inspected["contract"], "http tool");
    assert_eq!(inspected["tools"][0]["name"], "forecast");
    assert_eq!(inspected["tools"][0]["input_schema"]["required"], json!(["city"]));
    assert_eq!(inspected["request"]["method"], "GET");
    assert_eq!(inspected["request"]["url"], format!("http://{}/echo/{{city}}", service.addr));
    assert_eq!(inspected["request"]["network"], json!([service.addr.to_string()]));
    assert_eq!(inspected["request"]["headers"]["authorization"], json!({ "env": "WEATHER_TEST_TOKEN" }));
    assert_eq!(inspected["request"]["headers"]["x-other"], json!({ "file": secret_file }));
    assert_eq!(inspected["policy"]["open_world"], true, "{shown}");
    assert!(!shown.contains("env-secret-4417") && !shown.contains("file-secret-9902"), "{shown}");
}

/// A service that answers an image or audio: the tool shows it as a content block (its
/// output is `null`), read within its `max_response` (and shown within its output
/// limit); `output` pointing into JSON is an error for it.
#[tokio::test]
async fn an_image_or_audio_answer_is_a_content_block() {
    let service = Service::start().await;
    let tools = ToolsDir::new();
    let media = |path: &str, extra: &str| {
        format!(
            "description = \"A picture.\"\nurl = \"http://{addr}{path}\"\nnetwork = [\"{addr}\"]\n{extra}\n[input_schema]\ntype = \"object\"\n",
            addr = service.addr
        )
    };
    write(&tools, "chart", &media("/chart", ""));
    write(&tools, "beep", &media("/beep", ""));
    write(&tools, "tiny", &media("/chart", "max_response = \"10 B\""));
    write(&tools, "pointed", &media("/chart", "output = \"/data\""));
    let secret = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(secret.path(), "badge-secret-4471").unwrap();
    let auth = format!(
        "[headers]\nAuthorization = {{ file = {:?}, prefix = \"Bearer \" }}",
        secret.path().display().to_string()
    );
    write(&tools, "badge", &media("/badge", &auth));
    let host = host_of(&tools).await;

    let chart = host.call_detailed("weather/chart", json!({})).await;
    assert_eq!(chart.outcome.clone().unwrap(), Value::Null);
    assert_eq!(chart.content, vec![toolhost::Content::image(&b"\x89PNG\r\n\x1a\nnot really a chart"[..], "image/png")]);
    let beep = host.call_detailed("weather/beep", json!({})).await;
    assert_eq!(beep.content[0].to_mcp()["mimeType"], "audio/wav");
    assert_eq!(beep.content[0].kind(), "audio");

    let tiny = host.call_detailed("weather/tiny", json!({})).await;
    let error = tiny.outcome.unwrap_err().to_string();
    assert!(error.contains("over this tool's max_response (10 bytes)"), "{error}");
    assert!(tiny.content.is_empty());
    let pointed = host.call("weather/pointed", json!({})).await.unwrap_err().to_string();
    assert!(pointed.contains("not the JSON this tool's `output` points into"), "{pointed}");
    // Media that echoes the request's credential is not shown, nor is the credential.
    let badge = host.call_detailed("weather/badge", json!({})).await;
    let error = badge.outcome.unwrap_err().to_string();
    assert!(error.contains("holds a credential the request carried"), "{error}");
    assert!(!error.contains("badge-secret-4471") && badge.content.is_empty());
}
