//! The MCP server as clients meet it, measured against the transport's floor in the same
//! run (percentiles of whole-process round trips, so not criterion):
//!
//! - `stdio`: `toolhost serve` over pipes against `tests/bench/trivial_responder.py`, an
//!   MCP "server" that answers every call with a fixed result: sequential p50/p99, and
//!   calls/s with 8 requests in flight (a raw pipelined client: an SDK client costs more
//!   than either server);
//! - `http`: `toolhost serve --http` with an ordinary keep-alive client (one request per
//!   write, the OS's default socket options, so delayed ACKs): sequential p50/p99, and
//!   calls/s with 8 sessions calling at once;
//! - the CPU time each server spent per sequential call, which moves far less than the
//!   round trip between quiet and busy minutes;
//! - `idle RSS`: the server's resident memory after it loaded and listed 1, 10 and 100
//!   distinct components from a warm compile cache, and again once it was idle long
//!   enough for their code to leave memory.
//!
//! The servers take turns, round after round, so that each meets the same machine: on a
//! small VM the floor alone moves by several times between quiet and busy minutes.
//!
//! Run with `cargo xtask bench` (or `cargo xtask bench --bench serve`).

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::EngineSettings;
use toolhost_tests::wire::{HttpSession, StdioSession, percentile};
use toolhost_tests::{ToolsDir, component, toolhost_bin, with_custom_section};

/// Sequential calls: rounds of this many calls per server, after one round of warm-up.
const ROUNDS: usize = 20;
const CALLS_PER_ROUND: usize = 150;
/// Throughput: rounds per server, each of this many calls.
const THROUGHPUT_ROUNDS: usize = 5;
const PIPELINED_CALLS: u64 = 10_000;
const IN_FLIGHT: u64 = 8;
const HTTP_SESSIONS: usize = 8;
const HTTP_CALLS_PER_SESSION: usize = 1250;

fn main() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let cache = tempfile::tempdir().expect("cache dir");
    let toolhost = toolhost_bin();
    let arguments = json!({ "numbers": [1, 2] });

    let mut floor_command = Command::new("python3");
    floor_command.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/trivial_responder.py"));
    let mut floor = StdioSession::start(floor_command);
    let mut stdio_command = Command::new(&toolhost);
    stdio_command.args(["--cache-dir"]).arg(cache.path()).arg("serve").arg(tools.path());
    let mut stdio = StdioSession::start(stdio_command);
    let (http_server, address) = start_http(&toolhost, tools.path(), cache.path());
    let mut http = HttpSession::start(&address, "/mcp", None);

    // Sequential latency, the three servers taking turns in rounds so that all of them
    // meet the same machine (CPU frequency, other load).
    let mut samples: [Vec<Duration>; 3] = Default::default();
    let pids = [floor.pid(), stdio.pid(), http_server.0.id()];
    let mut cpu = [Duration::ZERO; 3];
    for round in 0..=ROUNDS {
        for (target, samples) in samples.iter_mut().enumerate() {
            let cpu_before = cpu_time(pids[target]);
            for _ in 0..CALLS_PER_ROUND {
                let started = Instant::now();
                let response = match target {
                    0 => floor.call("math.add", &arguments),
                    1 => stdio.call("math.add", &arguments),
                    _ => http.call("math.add", &arguments),
                };
                let elapsed = started.elapsed();
                assert!(response.get("result").is_some(), "{response}");
                // The first round warms up.
                if round > 0 {
                    samples.push(elapsed);
                }
            }
            if round > 0 {
                cpu[target] += cpu_time(pids[target]).saturating_sub(cpu_before);
            }
        }
    }
    let cpu_per_call = cpu.map(|total| total / (ROUNDS * CALLS_PER_ROUND) as u32);
    // Throughput, in turns as well.
    let mut rates: [Vec<f64>; 3] = Default::default();
    let pipelined = |session: &mut StdioSession| {
        PIPELINED_CALLS as f64 / session.pipelined("math.add", &arguments, PIPELINED_CALLS, IN_FLIGHT).as_secs_f64()
    };
    for _ in 0..THROUGHPUT_ROUNDS {
        rates[0].push(pipelined(&mut floor));
        rates[1].push(pipelined(&mut stdio));
        rates[2].push(http_sessions_rate(&address, &arguments));
    }
    let [floor, stdio, http] = [0, 1, 2].map(|i| Latency::of(&mut samples[i], &mut rates[i]));
    row("stdio trivial responder (floor)", &floor, "8 in flight, raw pipelined client");
    row("stdio toolhost serve", &stdio, "8 in flight, raw pipelined client");
    row("http toolhost serve --http", &http, "8 keep-alive sessions");
    println!(
        "serve/{:<44} p50 {:.2}x the floor, {:.2}x its calls/s",
        "stdio: toolhost / floor",
        stdio.p50.as_secs_f64() / floor.p50.as_secs_f64(),
        stdio.calls_per_second / floor.calls_per_second
    );
    println!(
        "serve/{:<44} p50 {:.2}x the stdio floor",
        "http: toolhost / stdio floor",
        http.p50.as_secs_f64() / floor.p50.as_secs_f64()
    );
    // The server's own CPU per sequential call: on a VM the round trip's wall time
    // moves by several times with the wake-ups between CPUs, the work far less.
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    println!(
        "serve/{:<44} floor {:.1} µs, stdio {:.1} µs ({:.2}x), http {:.1} µs",
        "server CPU per sequential call",
        micros(cpu_per_call[0]),
        micros(cpu_per_call[1]),
        cpu_per_call[1].as_secs_f64() / cpu_per_call[0].as_secs_f64(),
        micros(cpu_per_call[2]),
    );

    // Memory: three servers side by side, measured once loaded and again once their
    // code went idle (the default `drop_idle_code_after`, which the host checks every
    // twelfth of, plus a margin).
    let servers: Vec<(usize, Server, ToolsDir)> =
        [1, 10, 100].into_iter().map(|count| start_with_components(&toolhost, count, cache.path())).collect();
    std::thread::sleep(Duration::from_secs(2));
    let loaded: Vec<Rss> = servers.iter().map(|(_, server, _)| read_rss(server.0.id())).collect();
    let idle_after = EngineSettings::default().drop_idle_code_after;
    std::thread::sleep(idle_after + idle_after / 12 + Duration::from_secs(3));
    for ((count, server, _), loaded) in servers.iter().zip(loaded) {
        let idle = read_rss(server.0.id());
        println!(
            "serve/{:<44} {:>6.1} MB  (anon {:.1}, file {:.1}; {:.1} MB right after loading)",
            format!("idle RSS, {count} components"),
            idle.total as f64 / 1e6,
            idle.anon as f64 / 1e6,
            idle.file as f64 / 1e6,
            loaded.total as f64 / 1e6,
        );
    }
}

struct Latency {
    p50: Duration,
    p99: Duration,
    /// Median of the throughput rounds.
    calls_per_second: f64,
    /// Lowest and highest of the throughput rounds.
    rate_spread: (f64, f64),
}

impl Latency {
    fn of(samples: &mut [Duration], rates: &mut [f64]) -> Latency {
        samples.sort();
        rates.sort_by(f64::total_cmp);
        Latency {
            p50: percentile(samples, 50.0),
            p99: percentile(samples, 99.0),
            calls_per_second: rates[rates.len() / 2],
            rate_spread: (rates[0], rates[rates.len() - 1]),
        }
    }
}

fn row(name: &str, latency: &Latency, load: &str) {
    println!(
        "serve/{name:<44} p50 {:>7.1} µs  p99 {:>7.1} µs  {:>7.0} calls/s ({:.0}-{:.0}; {load})",
        latency.p50.as_secs_f64() * 1e6,
        latency.p99.as_secs_f64() * 1e6,
        latency.calls_per_second,
        latency.rate_spread.0,
        latency.rate_spread.1,
    );
}

/// Calls/s of `HTTP_SESSIONS` sessions calling at once, each on its own connection.
fn http_sessions_rate(address: &str, arguments: &serde_json::Value) -> f64 {
    let mut sessions: Vec<HttpSession> =
        (0..HTTP_SESSIONS).map(|_| HttpSession::start(address, "/mcp", None)).collect();
    let started = Instant::now();
    std::thread::scope(|scope| {
        for session in &mut sessions {
            scope.spawn(move || {
                for _ in 0..HTTP_CALLS_PER_SESSION {
                    session.call("math.add", arguments);
                }
            });
        }
    });
    (HTTP_SESSIONS * HTTP_CALLS_PER_SESSION) as f64 / started.elapsed().as_secs_f64()
}

/// `toolhost serve --http 127.0.0.1:0` on `tools`, and the address it printed.
fn start_http(toolhost: &Path, tools: &Path, cache: &Path) -> (Server, String) {
    let mut child = Command::new(toolhost)
        .args(["--cache-dir"])
        .arg(cache)
        .arg("serve")
        .arg(tools)
        .args(["--http", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start toolhost serve --http");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(stderr));
    let address = loop {
        let line = lines.next().expect("the server printed its address").expect("stderr line");
        if let Some(rest) = line.strip_prefix("serving MCP on http://") {
            break rest.trim_end_matches("/mcp").to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    (Server(child), address)
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

struct Rss {
    total: u64,
    anon: u64,
    file: u64,
}

/// A server of `count` distinct copies of the math component, loaded from the compile
/// cache (filled by a one-shot command first) and listed once.
fn start_with_components(toolhost: &Path, count: usize, cache: &Path) -> (usize, Server, ToolsDir) {
    let tools = ToolsDir::new();
    let math = std::fs::read(component("math")).expect("math component");
    for i in 0..count {
        tools.write(&format!("ns{i}"), "math.wasm", &with_custom_section(&math, "rss", i.to_string().as_bytes()));
    }
    let filled = Command::new(toolhost)
        .arg("--cache-dir")
        .arg(cache)
        .arg("list")
        .arg(tools.path())
        .stdout(Stdio::null())
        .status()
        .expect("toolhost list");
    assert!(filled.success());
    let (server, address) = start_http(toolhost, tools.path(), cache);
    let mut session = HttpSession::start(&address, "/mcp", None);
    let listed = session.post(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }));
    assert_eq!(listed.status, 200);
    (count, server, tools)
}

/// The CPU time process `pid` has used so far, in all its threads that still run
/// (`/proc/PID/task/*/schedstat`, in nanoseconds; a thread that ends takes its time away).
fn cpu_time(pid: u32) -> Duration {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("read /proc/PID/task");
    let nanos: u64 = tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(nanos)
}

fn read_rss(pid: u32) -> Rss {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/PID/status");
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    Rss { total: field("VmRSS:"), anon: field("RssAnon:"), file: field("RssFile:") + field("RssShmem:") }
}
