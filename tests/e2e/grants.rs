//! Capabilities are deny by default; each grant shows both the permission and the
//! denial, including the escapes (`..`, absolute paths, symlinks, unlisted hosts,
//! private addresses).

use std::path::Path;

use serde_json::{Value, json};
use toolhost::{CallError, Tiering, ToolHost};
use toolhost_tests::{HttpServer, SelfSignedTlsServer, TIERS, ToolsDir, builder_on};

/// A host of `tools` whose components run on the code of one compiler.
async fn host(tools: &ToolsDir, tiering: Tiering) -> ToolHost {
    let host = builder_on(tiering).root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![]);
    host
}

fn failed_message(result: Result<Value, CallError>) -> String {
    match result {
        Err(CallError::Failed { message, .. }) => message,
        other => panic!("expected the tool to fail, got {other:?}"),
    }
}

/// A tools dir with the hostile toolbox granted `data` (read-only) at `/data` and
/// `scratch` (read-write) at `/scratch`; `outside` holds a secret beside them.
fn files_setup() -> ToolsDir {
    let tools = ToolsDir::new();
    tools.install("hostile", "hostile", "hostile");
    let hostile_dir = tools.path().join("hostile");
    for dir in ["data", "scratch", "outside"] {
        std::fs::create_dir(hostile_dir.join(dir)).unwrap();
    }
    std::fs::write(hostile_dir.join("data/notes.txt"), "granted contents").unwrap();
    std::fs::write(hostile_dir.join("outside/secret.txt"), "the secret").unwrap();
    std::os::unix::fs::symlink(hostile_dir.join("outside/secret.txt"), hostile_dir.join("data/link-to-secret"))
        .unwrap();
    std::os::unix::fs::symlink(hostile_dir.join("outside"), hostile_dir.join("data/link-to-outside")).unwrap();
    tools.manifest(
        "hostile",
        "hostile",
        r#"[grants]
files = [
  { host = "data", guest = "/data", mode = "ro" },
  { host = "scratch", guest = "/scratch", mode = "rw" },
]
"#,
    );
    tools
}

#[tokio::test]
async fn a_read_only_grant_reads_and_refuses_writes() {
    for tiering in TIERS {
        let tools = files_setup();
        let host = host(&tools, tiering).await;
        let read = host.call("hostile/read_file", json!({ "path": "/data/notes.txt" })).await.unwrap();
        assert_eq!(read, json!({ "text": "granted contents" }));
        let listing = host.call("hostile/list_dir", json!({ "path": "/data" })).await.unwrap();
        assert_eq!(listing, json!(["link-to-outside", "link-to-secret", "notes.txt"]));

        let write = host.call("hostile/write_file", json!({ "path": "/data/new.txt", "contents": "x" })).await;
        failed_message(write);
        assert!(!tools.path().join("hostile/data/new.txt").exists(), "nothing was written to the read-only grant");
        let overwrite = host.call("hostile/write_file", json!({ "path": "/data/notes.txt", "contents": "x" })).await;
        failed_message(overwrite);
        assert_eq!(std::fs::read_to_string(tools.path().join("hostile/data/notes.txt")).unwrap(), "granted contents");
    }
}

#[tokio::test]
async fn a_read_write_grant_writes_inside_it() {
    for tiering in TIERS {
        let tools = files_setup();
        let host = host(&tools, tiering).await;
        host.call("hostile/write_file", json!({ "path": "/scratch/out.txt", "contents": "written by a guest" }))
            .await
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(tools.path().join("hostile/scratch/out.txt")).unwrap(),
            "written by a guest"
        );
    }
}

#[tokio::test]
async fn no_path_escapes_a_grant() {
    for tiering in TIERS {
        let tools = files_setup();
        let host = host(&tools, tiering).await;
        for path in [
            "/data/../outside/secret.txt",
            "/data/../../hostile/outside/secret.txt",
            "/scratch/../outside/secret.txt",
            "/data/link-to-secret",
            "/data/link-to-outside/secret.txt",
            "/etc/passwd",
            &format!("{}", tools.path().join("hostile/outside/secret.txt").display()),
            "outside/secret.txt",
        ] {
            let result = host.call("hostile/read_file", json!({ "path": path })).await;
            let message = failed_message(result);
            assert!(!message.contains("the secret"), "{path}: {message}");
        }
        let escape_write = host
            .call("hostile/write_file", json!({ "path": "/scratch/../outside/planted.txt", "contents": "x" }))
            .await;
        failed_message(escape_write);
        assert!(!tools.path().join("hostile/outside/planted.txt").exists());
        let through_link = host
            .call("hostile/write_file", json!({ "path": "/data/link-to-outside/planted.txt", "contents": "x" }))
            .await;
        failed_message(through_link);
        assert!(!tools.path().join("hostile/outside/planted.txt").exists());
    }
}

#[tokio::test]
async fn without_a_grant_there_is_no_file_system() {
    for tiering in TIERS {
        let tools = ToolsDir::new();
        tools.install("hostile", "hostile", "hostile");
        let host = host(&tools, tiering).await;
        for path in ["/", "/etc/passwd", ".", "/tmp"] {
            failed_message(host.call("hostile/read_file", json!({ "path": path })).await);
        }
        failed_message(host.call("hostile/list_dir", json!({ "path": "/" })).await);
    }
}

#[tokio::test]
async fn only_granted_environment_variables_are_visible() {
    for tiering in TIERS {
        // SAFETY: set before any host thread reads the environment; the names are unique to
        // this test.
        unsafe {
            std::env::set_var("TOOLHOST_TEST_GRANTED", "visible value");
            std::env::set_var("TOOLHOST_TEST_SECRET", "must not leak");
        }
        let tools = ToolsDir::new();
        tools.install("hostile", "hostile", "hostile");
        tools.manifest("hostile", "hostile", "[grants]\nenv = [\"TOOLHOST_TEST_GRANTED\"]\n");
        let host = host(&tools, tiering).await;
        assert_eq!(
            host.call("hostile/env_var", json!({ "name": "TOOLHOST_TEST_GRANTED" })).await.unwrap(),
            json!({ "value": "visible value" })
        );
        for name in ["TOOLHOST_TEST_SECRET", "HOME", "PATH"] {
            assert_eq!(
                host.call("hostile/env_var", json!({ "name": name })).await.unwrap(),
                json!({ "value": null }),
                "{name}"
            );
        }
    }
}

#[tokio::test]
async fn config_values_reach_only_their_component_and_never_the_log() {
    for tiering in TIERS {
        let tools = ToolsDir::new();
        tools.install("hostile", "hostile", "hostile");
        tools.install("hostile", "other", "hostile");
        tools.manifest(
            "hostile",
            "hostile",
            "[grants]\nconfig = { api_key = \"sk-very-secret\", units = \"metric\" }\n",
        );
        let host = host(&tools, tiering).await;
        let report = host.call_detailed("hostile/config", json!({ "name": "api_key" })).await;
        assert_eq!(report.outcome, Ok(json!({ "value": "sk-very-secret" })));
        assert_eq!(host.call("hostile/config", json!({ "name": "missing" })).await.unwrap(), json!({ "value": null }));
        assert_eq!(host.call("other/config", json!({ "name": "api_key" })).await.unwrap(), json!({ "value": null }));
        let component = host.snapshot().tools["hostile/config"].source.component().unwrap().clone();
        assert!(!format!("{component:?}").contains("sk-very-secret"), "Debug output must not show config values");
        assert!(!format!("{:?}", component.grants).contains("sk-very-secret"));
    }
}

/// The `http` example toolbox with the given network grants.
async fn http_host(network: &[&str], tiering: Tiering) -> (ToolsDir, ToolHost) {
    let tools = ToolsDir::new();
    tools.install("http", "http", "http");
    let list = network.iter().map(|p| format!("{p:?}")).collect::<Vec<_>>().join(", ");
    tools.manifest("http", "http", &format!("[grants]\nnetwork = [{list}]\n"));
    let host = host(&tools, tiering).await;
    (tools, host)
}

#[tokio::test]
async fn a_granted_host_is_reachable() {
    for tiering in TIERS {
        let server = HttpServer::start().await;
        let (_tools, host) = http_host(&[&server.addr.to_string()], tiering).await;
        let report = host.call_detailed("http/fetch", json!({ "url": server.url("/hello?x=1") })).await;
        let response = report.outcome.unwrap();
        assert_eq!(response["status"], 200);
        assert_eq!(response["body"], "GET /hello");
        assert_eq!(response["headers"]["x-served-by"], "toolhost-tests");
        assert!(report.denied_requests.is_empty());
        assert_eq!(server.request_count(), 1);
    }
}

#[tokio::test]
async fn https_goes_to_the_checked_address_and_verifies_the_certificate() {
    for tiering in TIERS {
        use std::sync::atomic::Ordering;
        let server = SelfSignedTlsServer::start().await;
        let (_tools, host) = http_host(&[&server.addr.to_string()], tiering).await;
        let report = host.call_detailed("http/fetch", json!({ "url": format!("https://{}/", server.addr) })).await;
        let message = failed_message(report.outcome.clone());
        // The allow-list let it through: the TLS client reached the granted address...
        assert!(report.denied_requests.is_empty(), "{:?}", report.denied_requests);
        assert_eq!(server.connections.load(Ordering::SeqCst), 1);
        // ...and refused a certificate no public root vouches for, so no request was sent.
        assert!(message.contains("TlsCertificateError"), "{message}");
        assert_eq!(server.handshakes.load(Ordering::SeqCst), 0, "{message}");
    }
}

#[tokio::test]
async fn ungranted_hosts_and_private_addresses_are_refused_and_recorded() {
    for tiering in TIERS {
        let server = HttpServer::start().await;
        let port = server.addr.port();
        let (_tools, host) = http_host(&["api.example.com:443"], tiering).await;
        for url in [
            format!("http://127.0.0.1:{port}/"),
            "http://10.0.0.1/".to_owned(),
            "http://169.254.169.254/latest/meta-data/".to_owned(),
            "https://evil.example.net/".to_owned(),
            format!("http://localhost:{port}/"),
        ] {
            let report = host.call_detailed("http/fetch", json!({ "url": url })).await;
            let message = failed_message(report.outcome.clone());
            assert!(message.contains("refused"), "{url}: {message}");
            assert_eq!(report.denied_requests.len(), 1, "{url}: {:?}", report.denied_requests);
            assert!(report.denied_requests[0].reason.contains("not in the allow-list"), "{:?}", report.denied_requests);
        }
        assert_eq!(server.request_count(), 0, "no request reached the server");
    }
}

#[tokio::test]
async fn granting_a_name_does_not_grant_the_private_address_it_resolves_to() {
    for tiering in TIERS {
        let server = HttpServer::start().await;
        let port = server.addr.port();
        let (_tools, host) = http_host(&[&format!("localhost:{port}")], tiering).await;
        let report = host.call_detailed("http/fetch", json!({ "url": format!("http://localhost:{port}/") })).await;
        assert!(failed_message(report.outcome.clone()).contains("non-public address"));
        assert_eq!(report.denied_requests[0].destination, format!("localhost:{port}"));
        assert!(report.denied_requests[0].reason.contains("127.0.0.1"), "{:?}", report.denied_requests);
        assert_eq!(server.request_count(), 0);
    }
}

/// A resolver with one fixed answer for every name, as a split-horizon or poisoned DNS
/// would give.
struct FixedAnswer(Vec<std::net::IpAddr>);

impl toolhost::Resolve for FixedAnswer {
    fn resolve(
        &self,
        _host: &str,
        port: u16,
    ) -> futures::future::BoxFuture<'static, std::io::Result<Vec<std::net::SocketAddr>>> {
        let answer = self.0.iter().map(|ip| std::net::SocketAddr::new(*ip, port)).collect();
        Box::pin(async move { Ok(answer) })
    }
}

/// A granted name that resolves to a special-purpose address, in any of its IPv4 or
/// IPv6 forms, is refused before any connection, naming the range; the loopback canary
/// behind those that would reach it sees nothing. Granting the address itself lets the
/// same answer through, and the canary sees that one request.
#[tokio::test]
async fn a_granted_name_never_leads_to_a_special_purpose_address_in_any_form() {
    let canary = HttpServer::start().await;
    let port = canary.addr.port();
    let tools = ToolsDir::new();
    tools.install("http", "http", "http");
    let url = format!("http://inside.test:{port}/");
    let refused = [
        ("::ffff:127.0.0.1", "IPv4-mapped 127.0.0.1, loopback"),
        ("::127.0.0.1", "IPv4-compatible ::/96"),
        ("64:ff9b::7f00:1", "NAT64 of 127.0.0.1, loopback"),
        ("64:ff9b::a9fe:a9fe", "NAT64 of 169.254.169.254, link-local"),
        ("64:ff9b:1::7f00:1", "local-use IPv4/IPv6 translation"),
        ("2002:7f00:1::1", "6to4 2002::/16"),
        ("2001:0:7f00:1::1", "Teredo 2001::/32"),
        ("fec0::1", "site-local fec0::/10"),
        ("100::1", "discard-only 100::/64"),
        ("2001:db8::1", "documentation 2001:db8::/32"),
        ("0.0.0.0", "\"this network\" 0.0.0.0/8"),
        ("100.64.0.1", "shared address space"),
        ("192.0.0.8", "IETF protocol assignments"),
        ("192.0.2.1", "documentation 192.0.2.0/24"),
        ("198.18.0.1", "benchmarking"),
        ("224.0.0.1", "multicast"),
        ("255.255.255.255", "limited broadcast"),
    ];
    for (address, range) in refused {
        let ip: std::net::IpAddr = address.parse().unwrap();
        let answer = FixedAnswer(vec![ip]);
        tools.manifest("http", "http", &format!("[grants]\nnetwork = [\"inside.test:{port}\"]\n"));
        let host = ToolHost::builder().root(tools.path()).resolver(std::sync::Arc::new(answer)).build().await.unwrap();
        let report = host.call_detailed("http/fetch", json!({ "url": url })).await;
        assert!(failed_message(report.outcome.clone()).contains("refused"), "{address}: {:?}", report.outcome);
        let reason = &report.denied_requests[0].reason;
        assert!(reason.contains(&format!("{ip} ({range}")), "{address}: {reason}");
    }
    assert_eq!(canary.request_count(), 0, "nothing arrived at the loopback canary");

    // Granting that address for another destination changes nothing for the name...
    let answer = || std::sync::Arc::new(FixedAnswer(vec!["::ffff:127.0.0.1".parse().unwrap()]));
    let grants = format!("[grants]\nnetwork = [\"inside.test:{port}\", \"[::ffff:127.0.0.1]:{port}\"]\n");
    tools.manifest("http", "http", &grants);
    let host = ToolHost::builder().root(tools.path()).resolver(answer()).build().await.unwrap();
    let report = host.call_detailed("http/fetch", json!({ "url": url })).await;
    assert!(report.denied_requests[0].reason.contains("IPv4-mapped 127.0.0.1"), "{:?}", report.denied_requests);
    assert_eq!(canary.request_count(), 0);
    // ...while the address itself, named by the grant, is reached: the canary answers.
    let report = host.call_detailed("http/fetch", json!({ "url": format!("http://[::ffff:127.0.0.1]:{port}/") })).await;
    assert_eq!(report.outcome.as_ref().map(|r| r["status"].clone()), Ok(json!(200)), "{:?}", report.denied_requests);
    assert_eq!(canary.request_count(), 1, "the named address was reached");
    assert!(report.denied_requests.is_empty());
}

#[tokio::test]
async fn without_a_network_grant_nothing_goes_out() {
    for tiering in TIERS {
        let server = HttpServer::start().await;
        let tools = ToolsDir::new();
        tools.install("http", "http", "http");
        let host = host(&tools, tiering).await;
        let report = host.call_detailed("http/fetch", json!({ "url": server.url("/") })).await;
        failed_message(report.outcome.clone());
        assert!(report.denied_requests[0].reason.contains("no network access is granted"));
        assert_eq!(server.request_count(), 0);
    }
}

#[tokio::test]
async fn manifest_errors_name_the_file_and_line_and_other_tools_keep_serving() {
    let tools = ToolsDir::with_examples();
    tools.install("hostile", "hostile", "hostile");
    let manifest = tools.manifest("hostile", "hostile", "[limits]\nfuel = 10\nmemory = \"lots\"\n");
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    let errors = host.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0].to_string();
    assert!(message.starts_with(&format!("{}, line 3: `memory`", manifest.display())), "{message}");
    assert!(message.contains("`memory`"), "{message}");
    assert!(matches!(host.call("hostile/echo", json!({})).await, Err(CallError::NotFound { .. })));
    assert_eq!(host.call("math/add", json!({ "numbers": [1] })).await.unwrap(), json!({ "value": 1.0 }));
    assert!(Path::new(&manifest).exists());
}

/// Raw sockets are never granted, not even to a component whose `wasi:http` grant names
/// the very address: a TCP connect to a loopback listener, a UDP datagram to a loopback
/// socket and a name lookup are each refused, and nothing arrives.
#[tokio::test]
async fn raw_sockets_and_name_lookup_are_refused_even_to_a_granted_address() {
    for tiering in TIERS {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let udp = std::net::UdpSocket::bind(listener.local_addr().unwrap()).unwrap();
        udp.set_nonblocking(true).unwrap();
        let address = listener.local_addr().unwrap().to_string();
        let tools = ToolsDir::new();
        tools.install("hostile", "hostile", "hostile");
        for manifest in ["", &format!("[grants]\nnetwork = [\"{address}\"]\n")] {
            tools.manifest("hostile", "hostile", manifest);
            let host = host(&tools, tiering).await;
            let attempts = host.call("hostile/raw_sockets", json!({ "address": address })).await.unwrap();
            for (attempt, outcome) in attempts.as_object().unwrap() {
                let outcome = outcome.as_str().unwrap();
                assert!(outcome.starts_with("refused: "), "{attempt} with manifest {manifest:?}: {outcome}");
            }
            assert_eq!(
                listener.accept().map(|_| ()).map_err(|e| e.kind()),
                Err(std::io::ErrorKind::WouldBlock),
                "no TCP connection arrived"
            );
            let mut buffer = [0u8; 16];
            assert_eq!(
                udp.recv_from(&mut buffer).map(|_| ()).map_err(|e| e.kind()),
                Err(std::io::ErrorKind::WouldBlock),
                "no datagram arrived"
            );
        }
    }
}

/// The `fs` example, as an operator would install it: a manifest grants one directory
/// read-write; the tools work inside it and nowhere else.
#[tokio::test]
async fn the_fs_example_works_inside_its_granted_directory_only() {
    for tiering in TIERS {
        let tools = ToolsDir::new();
        tools.install("fs", "fs", "fs");
        let workspace = tools.path().join("fs/workspace");
        std::fs::create_dir(&workspace).unwrap();
        std::fs::write(workspace.join("notes.txt"), "first line\n").unwrap();
        std::fs::write(tools.path().join("fs/secret.txt"), "outside the grant").unwrap();
        tools.manifest("fs", "fs", "[grants]\nfiles = [{ host = \"workspace\", guest = \"/work\", mode = \"rw\" }]\n");
        let host = host(&tools, tiering).await;

        let read = host.call("fs/read", json!({ "path": "/work/notes.txt" })).await.unwrap();
        assert_eq!(read, json!({ "contents": "first line\n", "bytes": 11 }));
        let written =
            host.call("fs/write", json!({ "path": "/work/notes.txt", "contents": "second line\n", "append": true }));
        assert_eq!(written.await.unwrap(), json!({ "bytes": 12 }));
        assert_eq!(std::fs::read_to_string(workspace.join("notes.txt")).unwrap(), "first line\nsecond line\n");
        host.call("fs/write", json!({ "path": "/work/new.txt", "contents": "x" })).await.unwrap();
        let listed = host.call("fs/list", json!({ "path": "/work" })).await.unwrap();
        assert_eq!(
            listed,
            json!({ "entries": [
                { "name": "new.txt", "kind": "file", "bytes": 1 },
                { "name": "notes.txt", "kind": "file", "bytes": 23 },
            ] })
        );

        for escape in ["/work/../secret.txt", "/secret.txt", "../secret.txt", "/fs/secret.txt"] {
            let outcome = host.call("fs/read", json!({ "path": escape })).await;
            assert!(outcome.is_err(), "{escape} must not be readable: {outcome:?}");
        }
        let missing = host.call("fs/read", json!({ "path": "/work/nope.txt" })).await.unwrap_err();
        assert!(matches!(missing, CallError::InputInvalid { .. }), "{missing:?}");
    }
}
