//! Stateless replicas behind a load balancer: three `toolhost serve --http` processes
//! serving one OCI-pinned toolset from a real registry and one Redis, behind HAProxy
//! running `deploy/haproxy.cfg` as shipped, under a load of official-SDK clients while
//! one replica is killed and started again.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost_tests::wire::HttpSession;
use toolhost_tests::{OciRegistry, RedisServer, component, free_loopback_port, mcp_python, toolhost_bin};

const TOKEN: &str = "replica-test-token-0123456789abcdef";
const APPROVAL_SECRET: &str = "the approval key every replica shares, 32+ chars";

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the repository")
}

/// HAProxy from the Debian package (`.ci/run` installs it); Debian puts it in /usr/sbin,
/// which an unprivileged PATH may lack.
fn haproxy_bin() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|dir| dir.join("haproxy")).find(|bin| bin.is_file()));
    on_path.flatten().unwrap_or_else(|| {
        let debian = PathBuf::from("/usr/sbin/haproxy");
        assert!(debian.is_file(), "haproxy is not installed (the test setup installs the Debian package)");
        debian
    })
}

/// The CLI on `dir/toolhost.toml`, with the replica's own cache and data directories.
fn toolhost(dir: &Path) -> Command {
    let mut command = Command::new(toolhost_bin());
    command
        .arg("--config")
        .arg(dir.join("toolhost.toml"))
        .env("TOOLHOST_CACHE_DIR", dir.join("cache"))
        .env("TOOLHOST_DATA_DIR", dir.join("data"))
        .env("TOOLHOST_APPROVAL_KEY", APPROVAL_SECRET)
        .env("TOOLHOST_TOKEN_PLANNER", TOKEN)
        .env("DOCKER_CONFIG", dir.join("no-docker-config"))
        .env_remove("TOOLHOST_STDLIB_DIR");
    command
}

fn run(mut command: Command) -> Output {
    command.output().expect("run toolhost")
}

fn success(output: Output) -> Value {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap_or(Value::Null)
}

/// A replica's directory: the shared configuration, the operator's manifests beside
/// the components `toolhost pull` writes.
fn replica_dir(dir: &Path, registry: &str, redis: &str) {
    std::fs::create_dir_all(dir.join("org-tools/app")).unwrap();
    std::fs::create_dir_all(dir.join("org-tools/calc")).unwrap();
    let config = format!(
        "[[layer]]\nname = \"org\"\nroot = \"org-tools\"\n\n\
         [layer.oci.app]\nkv = \"oci://{registry}/tools/kv:1\"\n\n\
         [layer.oci.calc]\nmath = \"oci://{registry}/tools/math:1\"\n\n\
         [oci]\nplain_http = [\"{registry}\"]\nstore = \"oci-store\"\n\n\
         [storage]\nurl = \"{redis}\"\n\n\
         [http]\napproval_key = {{ env = \"TOOLHOST_APPROVAL_KEY\" }}\n\n\
         [[token]]\nagent = \"planner\"\nenv = \"TOOLHOST_TOKEN_PLANNER\"\n"
    );
    std::fs::write(dir.join("toolhost.toml"), config).unwrap();
    std::fs::write(
        dir.join("org-tools/app/kv.toml"),
        "[grants]\nstorage = [\"calls\"]\n\n[limits]\ntimeout = \"10s\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("org-tools/calc/math.toml"),
        "[tools.divide.policy]\nrequires_approval = true\nrisk = \"high\"\n",
    )
    .unwrap();
}

/// One `toolhost serve --http` replica on a port of its own, killed when dropped.
struct Replica {
    dir: PathBuf,
    port: u16,
    child: Child,
}

impl Replica {
    fn start(dir: &Path, port: u16) -> Replica {
        let mut command = toolhost(dir);
        command.args(["serve", "--http", &format!("127.0.0.1:{port}")]);
        let (child, addr) = toolhost_tests::spawn_http_server(command).expect("the replica starts");
        assert_eq!(addr, format!("127.0.0.1:{port}"));
        Replica { dir: dir.to_owned(), port, child }
    }

    fn authority(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn get(&self, path: &str) -> (u16, String) {
        let mut session = HttpSession::connect(&self.authority(), path);
        session.authorization = Some(format!("Bearer {TOKEN}"));
        let answer = session.request("GET", None, &[]);
        (answer.status, String::from_utf8_lossy(&answer.body).into_owned())
    }

    /// Waits for `/ready` to answer 200 and says how long that took.
    fn wait_until_ready(&self, within: Duration) -> Duration {
        HttpSession::wait_until_ready(&self.authority(), Some(&format!("Bearer {TOKEN}")), within)
    }

    /// `app/run` calls answered `ok`, from its `/metrics`.
    fn calls_answered(&self) -> u64 {
        let (status, text) = self.get("/metrics");
        assert_eq!(status, 200, "{text}");
        text.lines()
            .find(|line| line.starts_with("toolhost_calls_total{tool=\"app/run\",outcome=\"ok\"}"))
            .and_then(|line| line.rsplit(' ').next()?.parse().ok())
            .unwrap_or(0)
    }

    /// The tools it lists, as a client of its own session sees them.
    fn tools(&self) -> Value {
        let mut session = HttpSession::start(&self.authority(), "/mcp", Some(&format!("Bearer {TOKEN}")));
        let answer = session.post(&json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/list" }));
        let listed = answer.messages().into_iter().find(|m| m["id"] == 7).expect("a tools/list answer");
        listed["result"]["tools"].clone()
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// HAProxy on `deploy/haproxy.cfg`, unchanged, with the addresses in its environment.
struct Balancer {
    child: Child,
    port: u16,
}

impl Balancer {
    fn start(replicas: &[&Replica]) -> Balancer {
        let port = free_loopback_port();
        let mut command = Command::new(haproxy_bin());
        command
            .args(["-db", "-f"])
            .arg(repository().join("deploy/haproxy.cfg"))
            .env("TOOLHOST_LB_BIND", format!("127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (i, replica) in replicas.iter().enumerate() {
            command.env(format!("TOOLHOST_REPLICA_{i}"), replica.authority());
        }
        let child = command.spawn().expect("start haproxy");
        let balancer = Balancer { child, port };
        // Ready once its health checks found a replica that serves.
        let started = Instant::now();
        loop {
            let ready = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                && HttpSession::connect(&format!("127.0.0.1:{port}"), "/ready").request("GET", None, &[]).status == 200;
            if ready {
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(20), "haproxy never sent /ready to a replica");
            std::thread::sleep(Duration::from_millis(50));
        }
        balancer
    }
}

impl Drop for Balancer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The load script: its stdin (to stop it) and its output lines.
struct Load {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
}

impl Load {
    fn start(balancer: &Balancer, replicas: &[&Replica], workers: usize) -> Load {
        let mut command = Command::new(mcp_python());
        command
            .arg(repository().join("tests/replicas/load.py"))
            .arg(format!("http://127.0.0.1:{}/mcp", balancer.port))
            .arg(TOKEN)
            .arg(workers.to_string())
            .args(replicas.iter().map(|r| format!("http://{}/mcp", r.authority())))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("start the load script");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let value = serde_json::from_str(&line).unwrap_or_else(|_| json!({ "text": line }));
                if send.send(value).is_err() {
                    break;
                }
            }
        });
        Load { child, stdin, lines }
    }

    /// The next line that has `key`, skipping progress lines of other keys.
    fn next_with(&self, key: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line =
                self.lines.recv_timeout(left).unwrap_or_else(|e| panic!("no `{key}` line within {within:?}: {e}"));
            if let Some(value) = line.get(key) {
                return value.clone();
            }
            assert!(line.get("text").is_none(), "the load script printed {line}");
        }
    }

    /// Waits until `count` calls completed.
    fn wait_for_calls(&self, count: u64) {
        while self.next_with("progress", Duration::from_secs(60)).as_u64().unwrap() < count {}
    }

    fn stop(&mut self) -> Value {
        let mut stdin = self.stdin.take().expect("stopped once");
        stdin.write_all(b"stop\n").expect("tell the load to stop");
        drop(stdin);
        let summary = self.next_with("summary", Duration::from_secs(120));
        assert!(self.child.wait().expect("the load script ends").success());
        summary
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn three_replicas_behind_haproxy_serve_one_pinned_toolset_and_one_storage_through_a_replica_kill() {
    let registry = OciRegistry::start();
    let redis = RedisServer::start();
    let work = tempfile::tempdir().unwrap();
    let dirs: Vec<PathBuf> = (0..3).map(|i| work.path().join(format!("replica{i}"))).collect();
    for dir in &dirs {
        replica_dir(dir, &registry.addr, &redis.url);
    }

    // The toolset is decided once: pushed, pulled and pinned where it is decided.
    for (file, name) in [(component("kv"), "kv"), (component("math"), "math")] {
        let mut push = toolhost(&dirs[0]);
        push.arg("push").arg(&file).arg(format!("oci://{}/tools/{name}:1", registry.addr));
        success(run(push));
    }
    let mut pull = toolhost(&dirs[0]);
    pull.arg("pull");
    let pinned = success(run(pull));

    // A replica without the lock refuses to pull anything with --locked...
    let mut unpinned = toolhost(&dirs[1]);
    unpinned.args(["pull", "--locked"]);
    let refused = run(unpinned);
    assert_eq!(refused.status.code(), Some(14), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("is not pinned in") && said.contains("nothing was written"), "{said}");
    assert!(!dirs[1].join("org-tools/app/kv.wasm").exists() && !dirs[1].join("toolhost.lock").exists());
    // ...and with the lock every replica fetches exactly the pinned bytes.
    for dir in &dirs[1..] {
        std::fs::copy(dirs[0].join("toolhost.lock"), dir.join("toolhost.lock")).unwrap();
        let mut locked = toolhost(dir);
        locked.args(["pull", "--locked"]);
        let pulled = success(run(locked));
        let digests = |pulled: &Value| -> Vec<String> {
            pulled["components"].as_array().unwrap().iter().map(|c| c["sha256"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(digests(&pulled), digests(&pinned));
        assert_eq!(
            std::fs::read(dir.join("toolhost.lock")).unwrap(),
            std::fs::read(dirs[0].join("toolhost.lock")).unwrap()
        );
    }

    let ports: Vec<u16> = (0..3).map(|_| free_loopback_port()).collect();
    let mut replicas: Vec<Replica> = dirs.iter().zip(&ports).map(|(dir, port)| Replica::start(dir, *port)).collect();
    for replica in &replicas {
        replica.wait_until_ready(Duration::from_secs(120));
    }
    let balancer = Balancer::start(&replicas.iter().collect::<Vec<_>>());

    let mut load = Load::start(&balancer, &replicas.iter().collect::<Vec<_>>(), 8);
    // An approval asked by one replica is answered on another: they share the key.
    let approval = load.next_with("approval", Duration::from_secs(120));
    assert_eq!(approval["is_error"], false, "{approval}");
    assert_eq!(approval["structured"]["value"], json!(2.0), "{approval}");
    let answered_by: BTreeSet<&str> =
        approval["answered_by"].as_array().unwrap().iter().map(|r| r.as_str().unwrap()).collect();
    assert!(answered_by.len() >= 2, "the question and its answer went to different replicas: {approval}");
    // The answer approves that one call: its retry sent again is refused by every replica.
    let replays = approval["replays"].as_array().expect("replays");
    assert!(replays.len() >= 2, "{approval}");
    for replay in replays {
        let replay = replay.as_str().unwrap();
        assert!(replay.contains("already used") && !replay.contains("\"value\":2"), "{replay}");
    }

    load.wait_for_calls(300);
    let before_kill = replicas[1].calls_answered();
    assert!(before_kill > 0, "the balancer sent replica 1 its share");
    replicas[1].child.kill().expect("kill -9 replica 1");
    replicas[1].child.wait().unwrap();
    let killed = Instant::now();
    load.wait_for_calls(600);
    // Long enough down for the balancer's health checks to take it out (2 failed checks,
    // 1 s apart): the load goes on through the other two meanwhile.
    std::thread::sleep(Duration::from_secs(3).saturating_sub(killed.elapsed()));

    let restarted = Replica::start(&replicas[1].dir.clone(), ports[1]);
    let time_to_ready = restarted.wait_until_ready(Duration::from_secs(120));
    replicas[1] = restarted;
    let rejoined = Instant::now();
    while replicas[1].calls_answered() == 0 {
        assert!(rejoined.elapsed() < Duration::from_secs(60), "the restarted replica never got calls again");
        std::thread::sleep(Duration::from_millis(50));
    }
    let summary = load.stop();
    eprintln!(
        "replicas: {} calls in {} s ({:?}), retries {}, failed {:?}, exceptions {}, p50 {} ms, p99 {} ms, \
         max {} ms; killed replica ready {time_to_ready:?} after its restart",
        summary["keys"].as_array().unwrap().len(),
        summary["seconds"],
        summary["calls"],
        summary["retries"],
        summary["failed"],
        summary["exceptions"],
        summary["p50_ms"],
        summary["p99_ms"],
        summary["max_ms"],
    );
    assert_eq!(summary["failed"], json!([]), "every call a client retried succeeded: {summary}");
    assert_eq!(summary["error_answers"], json!([]), "no tool answered an error: {summary}");

    // Every write a client saw answered is in the shared storage, and nothing else but
    // writes whose retry the end of the load cut short.
    let keys = |field: &str| -> BTreeSet<String> {
        summary[field].as_array().unwrap().iter().map(|k| k.as_str().unwrap().to_owned()).collect()
    };
    let (answered, unsettled) = (keys("keys"), keys("unsettled"));
    assert!(answered.len() >= 600, "{}", answered.len());
    let mut list = toolhost(&dirs[2]);
    list.args(["storage", "keys", "app/kv@planner:calls"]);
    let listed = run(list);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let stored: BTreeSet<String> = String::from_utf8_lossy(&listed.stdout).lines().map(str::to_owned).collect();
    assert!(answered.is_subset(&stored), "missing: {:?}", answered.difference(&stored).collect::<Vec<_>>());
    let unanswered: Vec<&String> = stored.difference(&answered).filter(|key| !unsettled.contains(*key)).collect();
    assert!(unanswered.is_empty(), "stored without an answer: {unanswered:?}");

    // Every replica, the restarted one included, lists the same tools.
    let listings: Vec<Value> = replicas.iter().map(Replica::tools).collect();
    let names: BTreeSet<&str> = listings[0].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains("app.run") && names.contains("calc.divide"), "{names:?}");
    assert!(listings.iter().all(|listing| listing == &listings[0]), "{listings:?}");
}
