//! toolhost beside its closest peer, wassette, in one run on the same machine, client and
//! component (`../shared/peers/README.md` says how to build wassette here; point
//! `WASSETTE_BIN` at the binary). Without `WASSETTE_BIN` the rows print toolhost alone.
//!
//! The component is a plain one (typed WIT exports, written for any host): both serve
//! its `add` as a tool. The client is the raw one of the `serve` bench, and a trivial
//! stdio responder (`tests/bench/trivial_responder.py`) is the transport's floor.
//!
//! - stdio: sequential p50 and p99, the servers taking turns round after round; calls/s
//!   with 8 calls in flight;
//! - Streamable HTTP (wassette listens on its fixed `127.0.0.1:9001`): sequential p50 and
//!   p99 with a keep-alive client, and calls/s of 8 sessions at once;
//! - start → tools listed over stdio, with 1 and 100 distinct components (toolhost from
//!   a warm compile cache, as it starts in production; wassette has no cache);
//! - RSS 0.5 s after listing 1, 10 and 100 components.
//!
//! wassette logs at `warn` (`RUST_LOG=warn`) so that its log costs nothing.
//!
//! Run with `WASSETTE_BIN=… cargo xtask bench --bench peer`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost_tests::wire::{self, HttpSession, StdioSession, percentile};
use toolhost_tests::{KilledOnDrop, ToolsDir, component, fill_compile_cache, toolhost_bin, with_custom_section};

const ROUNDS: usize = 10;
const CALLS_PER_ROUND: usize = 150;
const THROUGHPUT_ROUNDS: usize = 3;
const PIPELINED_CALLS: u64 = 5_000;
const IN_FLIGHT: u64 = 8;
const HTTP_SESSIONS: usize = 8;
const HTTP_CALLS_PER_SESSION: usize = 500;
/// wassette's fixed Streamable HTTP address.
const WASSETTE_HTTP: &str = "127.0.0.1:9001";
/// The component both serve, its namespace for toolhost, and the tool's name at each.
const COMPONENT: &str = "plain-types";
const TOOLHOST_TOOL: &str = "plain.add";

fn main() {
    let wassette = std::env::var_os("WASSETTE_BIN").map(PathBuf::from).filter(|path| path.is_file());
    if wassette.is_none() {
        println!("peer/wassette: WASSETTE_BIN is not set to a built wassette; toolhost and the floor alone");
    }
    let toolhost = toolhost_bin();
    let cache = tempfile::tempdir().expect("cache dir");
    let one = Toolset::new(1);
    fill_compile_cache(&toolhost, one.path(), cache.path());
    let servers = Servers { toolhost: &toolhost, wassette: wassette.as_deref(), cache: cache.path() };
    let wassette_tool = wassette.as_deref().map(|bin| wassette_tool_name(bin, &one));
    let arguments = json!({ "a": 2, "b": 3 });

    let mut stdio = servers.stdio(&one);
    let names: Vec<&str> = stdio.iter().map(|(name, _)| *name).collect();
    let tool_of = |name: &str| match name {
        "wassette" => wassette_tool.clone().expect("wassette's tool"),
        _ => TOOLHOST_TOOL.to_owned(),
    };
    sequential_rows("stdio", &mut stdio, |session, tool| session.call(tool, &arguments), &tool_of);
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); stdio.len()];
    for _ in 0..THROUGHPUT_ROUNDS {
        for (index, (name, session)) in stdio.iter_mut().enumerate() {
            let tool = tool_of(name);
            let took = session.pipelined(&tool, &arguments, PIPELINED_CALLS, IN_FLIGHT);
            rates[index].push(PIPELINED_CALLS as f64 / took.as_secs_f64());
        }
    }
    for (name, rates) in names.iter().zip(&mut rates) {
        print_rate(&format!("stdio 8 in flight, {name}"), rates);
    }
    drop(stdio);

    http_rows(&servers, &one, &tool_of, &arguments);
    start_rows(&servers);
}

/// Sequential round trips and 8 sessions' calls/s over Streamable HTTP.
fn http_rows(servers: &Servers, one: &Toolset, tool_of: &dyn Fn(&str) -> String, arguments: &serde_json::Value) {
    let mut running: Vec<(&str, KilledOnDrop, String)> = Vec::new();
    let (toolhost, address) = start_toolhost_http(servers.toolhost, one.path(), servers.cache);
    running.push(("toolhost", toolhost, address));
    if let Some(wassette) = servers.wassette {
        running.push(("wassette", start_wassette_http(wassette, one), WASSETTE_HTTP.to_owned()));
    }
    let sessions = running.iter().map(|(_, _, address)| HttpSession::start(address, "/mcp", None));
    let mut named: Vec<(&str, HttpSession)> = running.iter().map(|(name, _, _)| *name).zip(sessions).collect();
    sequential_rows("http", &mut named, |session, tool| session.call(tool, arguments), tool_of);
    drop(named);
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); running.len()];
    for _ in 0..THROUGHPUT_ROUNDS {
        for (index, (name, _, address)) in running.iter().enumerate() {
            rates[index].push(wire::http_sessions_rate(
                address,
                HTTP_SESSIONS,
                HTTP_CALLS_PER_SESSION,
                &tool_of(name),
                arguments,
            ));
        }
    }
    for ((name, _, _), rates) in running.iter().zip(&mut rates) {
        print_rate(&format!("http 8 sessions, {name}"), rates);
    }
}

/// Start → tools listed with 1 and 100 components, and RSS 0.5 s after listing 1, 10 and
/// 100 components, each server started fresh.
fn start_rows(servers: &Servers) {
    for count in [1, 10, 100] {
        let toolset = Toolset::new(count);
        fill_compile_cache(servers.toolhost, toolset.path(), servers.cache);
        let mut commands: Vec<(&str, Command)> = vec![("toolhost", servers.toolhost_stdio(&toolset))];
        if let Some(wassette) = servers.wassette {
            commands.push(("wassette", wassette_stdio(wassette, &toolset)));
        }
        for (name, command) in commands {
            let started = Instant::now();
            let mut session = StdioSession::start(command);
            let listed = session.request("tools/list", json!({}));
            let took = started.elapsed();
            let tools = listed["result"]["tools"].as_array().map_or(0, Vec::len);
            // wassette serves one tool per function name: its copies' tools coincide.
            let expected = if name == "toolhost" { count } else { 1 };
            assert!(tools >= expected, "{name} listed {tools} tools of {count} components: {listed}");
            std::thread::sleep(Duration::from_millis(500));
            let rss = rss_mb(session.pid());
            println!(
                "peer/{:<40} start → listed {:>7.1} ms  RSS 0.5 s after {:>6.1} MB",
                format!("{count} components, {name}"),
                took.as_secs_f64() * 1e3,
                rss
            );
        }
    }
}

/// Sequential calls, the servers taking turns round after round (the first round warms
/// up), and each server's p50 and p99 printed as a row of `transport`.
fn sequential_rows<S>(
    transport: &str,
    sessions: &mut [(&str, S)],
    call: impl Fn(&mut S, &str) -> serde_json::Value,
    tool_of: &dyn Fn(&str) -> String,
) {
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); sessions.len()];
    for round in 0..=ROUNDS {
        for ((name, session), samples) in sessions.iter_mut().zip(&mut samples) {
            let tool = tool_of(name);
            for _ in 0..CALLS_PER_ROUND {
                let started = Instant::now();
                let response = call(session, &tool);
                let elapsed = started.elapsed();
                assert!(response.get("result").is_some(), "{name}: {response}");
                if round > 0 {
                    samples.push(elapsed);
                }
            }
        }
    }
    for ((name, _), samples) in sessions.iter().zip(&mut samples) {
        samples.sort();
        let (p50, p99) = (percentile(samples, 50.0), percentile(samples, 99.0));
        println!(
            "peer/{:<40} p50 {:>7.1} µs  p99 {:>7.1} µs",
            format!("{transport} sequential, {name}"),
            micros(p50),
            micros(p99)
        );
    }
}

fn print_rate(row: &str, rates: &mut [f64]) {
    rates.sort_by(f64::total_cmp);
    println!("peer/{row:<40} {:>7.0} calls/s ({:.0}-{:.0})", rates[rates.len() / 2], rates[0], rates[rates.len() - 1]);
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// `count` distinct copies of the plain component (a custom section apiece, so that
/// nothing is shared by digest), one per namespace for toolhost; wassette reads the same
/// directories' files through its plugin directory of links.
struct Toolset {
    tools: ToolsDir,
    /// wassette's plugin directory: the same files, flat.
    plugins: tempfile::TempDir,
}

impl Toolset {
    fn new(count: usize) -> Toolset {
        let tools = ToolsDir::new();
        let plugins = tempfile::tempdir().expect("plugin dir");
        let bytes = std::fs::read(component(COMPONENT)).expect("the plain component");
        for i in 0..count {
            let copy = with_custom_section(&bytes, "copy", i.to_string().as_bytes());
            let namespace = if count == 1 { "plain".to_owned() } else { format!("plain{i}") };
            tools.write(&namespace, "plain.wasm", &copy);
            std::fs::write(plugins.path().join(format!("plain{i}.wasm")), &copy).expect("write a plugin");
        }
        Toolset { tools, plugins }
    }

    fn path(&self) -> &Path {
        self.tools.path()
    }
}

struct Servers<'a> {
    toolhost: &'a Path,
    wassette: Option<&'a Path>,
    cache: &'a Path,
}

impl Servers<'_> {
    fn toolhost_stdio(&self, toolset: &Toolset) -> Command {
        let mut command = Command::new(self.toolhost);
        command.arg("--cache-dir").arg(self.cache).arg("serve").arg(toolset.path()).stderr(Stdio::null());
        command
    }

    /// A stdio session with each server (the floor first), on `toolset`.
    fn stdio(&self, toolset: &Toolset) -> Vec<(&'static str, StdioSession)> {
        let mut floor = Command::new("python3");
        floor.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/trivial_responder.py"));
        let mut sessions = vec![
            ("floor", StdioSession::start(floor)),
            ("toolhost", StdioSession::start(self.toolhost_stdio(toolset))),
        ];
        if let Some(wassette) = self.wassette {
            sessions.push(("wassette", StdioSession::start(wassette_stdio(wassette, toolset))));
        }
        sessions
    }
}

fn wassette_stdio(wassette: &Path, toolset: &Toolset) -> Command {
    let mut command = Command::new(wassette);
    command.args(["serve", "--stdio", "--plugin-dir"]).arg(toolset.plugins.path());
    command.env("RUST_LOG", "warn").stderr(Stdio::null());
    command
}

/// The name wassette serves the component's `add` by.
fn wassette_tool_name(wassette: &Path, toolset: &Toolset) -> String {
    let mut session = StdioSession::start(wassette_stdio(wassette, toolset));
    let listed = session.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().cloned().unwrap_or_default();
    tools
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .find(|name| *name == "add" || name.ends_with("add") && !name.contains("echo-"))
        .unwrap_or_else(|| panic!("wassette lists no `add`: {listed}"))
        .to_owned()
}

fn start_toolhost_http(toolhost: &Path, tools: &Path, cache: &Path) -> (KilledOnDrop, String) {
    let mut command = Command::new(toolhost);
    command.arg("--cache-dir").arg(cache).arg("serve").arg(tools).args(["--http", "127.0.0.1:0"]);
    let (child, address) = toolhost_tests::spawn_http_server(command).expect("toolhost serve --http starts");
    (KilledOnDrop(child), address)
}

fn start_wassette_http(wassette: &Path, toolset: &Toolset) -> KilledOnDrop {
    assert!(
        std::net::TcpStream::connect(WASSETTE_HTTP).is_err(),
        "something already listens on {WASSETTE_HTTP}, wassette's fixed address"
    );
    let child = Command::new(wassette)
        .args(["serve", "--streamable-http", "--plugin-dir"])
        .arg(toolset.plugins.path())
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start wassette");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(WASSETTE_HTTP).is_err() {
        assert!(Instant::now() < deadline, "wassette did not listen on {WASSETTE_HTTP}");
        std::thread::sleep(Duration::from_millis(20));
    }
    KilledOnDrop(child)
}

fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/PID/status");
    let kb: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    kb * 1024.0 / 1e6
}
