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
//! - the sequential rounds twice: client and servers pinned to one core, then to two
//!   (a round trip that wakes the other core pays for it twice, tens of microseconds on
//!   these VMs), since unpinned the kernel's placement of each process decides which of
//!   the two a server gets;
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
use toolhost_tests::wire::{self, HttpSession, StdioSession, percentile};
use toolhost_tests::{ToolsDir, component, fill_compile_cache, toolhost_bin, with_custom_section};

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
    // Every server answers from optimized code from its first call.
    fill_compile_cache(&toolhost, tools.path(), cache.path());
    let launcher = Servers { toolhost: &toolhost, tools: tools.path(), cache: cache.path() };

    // Sequential latency, in each placement. On these VMs a wake-up on the other core
    // costs tens of microseconds, so an unpinned round trip is fast or slow by where the
    // kernel happened to put each process, and a ratio of two servers measured that way
    // says more about their placement than about them (unpinned runs gave toolhost
    // 0.4x to 5.8x the floor). Pinned, each placement is measured as it is.
    for placement in Placement::ALL {
        let Some((_pinned, client_cpu)) = placement.pin() else {
            println!("serve/{:<44} skipped: this process may use one CPU only", placement.name());
            continue;
        };
        let mut running = launcher.start();
        set_affinity(&only(client_cpu));
        let sequential = running.sequential(&arguments);
        for (target, name) in TARGETS.iter().enumerate() {
            println!(
                "serve/{:<44} p50 {:>7.1} µs  p99 {:>7.1} µs  server CPU {:>6.1} µs/call",
                format!("{name}, {}", placement.name()),
                micros(sequential.p50[target]),
                micros(sequential.p99[target]),
                micros(sequential.cpu_per_call[target]),
            );
        }
        println!(
            "serve/{:<44} p50 stdio {:.2}x, http {:.2}x the floor's",
            format!("ratios, {}", placement.name()),
            sequential.p50[1].as_secs_f64() / sequential.p50[0].as_secs_f64(),
            sequential.p50[2].as_secs_f64() / sequential.p50[0].as_secs_f64(),
        );
    }

    // Throughput, on every core, the servers taking turns.
    let mut running = launcher.start();
    let mut rates: [Vec<f64>; 3] = Default::default();
    for _ in 0..THROUGHPUT_ROUNDS {
        rates[0].push(pipelined_rate(&mut running.floor, &arguments));
        rates[1].push(pipelined_rate(&mut running.stdio, &arguments));
        rates[2].push(http_sessions_rate(&running.address, &arguments));
    }
    let loads = ["8 in flight, raw pipelined client", "8 in flight, raw pipelined client", "8 keep-alive sessions"];
    for ((name, rates), load) in TARGETS.iter().zip(&mut rates).zip(loads) {
        rates.sort_by(f64::total_cmp);
        println!(
            "serve/{:<44} {:>7.0} calls/s ({:.0}-{:.0}; {load})",
            format!("{name}, all cores"),
            rates[rates.len() / 2],
            rates[0],
            rates[rates.len() - 1],
        );
    }
    println!(
        "serve/{:<44} {:.2}x the floor's calls/s",
        "stdio: toolhost / floor, all cores",
        rates[1][rates[1].len() / 2] / rates[0][rates[0].len() / 2]
    );
    drop(running);

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

/// The three servers, in the order their rows print.
const TARGETS: [&str; 3] = ["stdio responder (floor)", "stdio toolhost serve", "http toolhost serve --http"];

/// Where the client and the servers run for the sequential rounds.
#[derive(Clone, Copy)]
enum Placement {
    /// Client and servers on one CPU: a round trip switches between them on one core.
    SameCore,
    /// Client on one CPU, servers on another: every round trip wakes the other core twice.
    AcrossCores,
}

impl Placement {
    const ALL: [Placement; 2] = [Placement::SameCore, Placement::AcrossCores];

    fn name(self) -> &'static str {
        match self {
            Placement::SameCore => "same core",
            Placement::AcrossCores => "across cores",
        }
    }

    /// Pins this thread to the servers' CPU, so that the servers started next inherit
    /// it, and returns the client's CPU; `None` when this process may use one CPU only.
    /// The guard gives this thread back the CPUs it had.
    fn pin(self) -> Option<(Pinned, usize)> {
        let pinned = Pinned { allowed: affinity() };
        let cpus = cpus_in(&pinned.allowed);
        let (client, server) = match (self, cpus.as_slice()) {
            (Placement::SameCore, [first, ..]) => (*first, *first),
            (Placement::AcrossCores, [first, second, ..]) => (*first, *second),
            _ => return None,
        };
        set_affinity(&only(server));
        Some((pinned, client))
    }
}

/// The CPUs this thread had before it was pinned, given back when dropped.
struct Pinned {
    allowed: libc::cpu_set_t,
}

impl Drop for Pinned {
    fn drop(&mut self) {
        set_affinity(&self.allowed);
    }
}

/// The CPUs the calling thread may run on.
fn affinity() -> libc::cpu_set_t {
    // SAFETY: a zeroed cpu_set_t is an empty set, which sched_getaffinity fills.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        let read = libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set);
        assert_eq!(read, 0, "sched_getaffinity: {}", std::io::Error::last_os_error());
        set
    }
}

/// The CPUs in `set`, lowest first.
fn cpus_in(set: &libc::cpu_set_t) -> Vec<usize> {
    // SAFETY: CPU_ISSET reads the set passed by reference, at an index below its size.
    (0..libc::CPU_SETSIZE as usize).filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, set) }).collect()
}

/// The set of `cpu` alone.
fn only(cpu: usize) -> libc::cpu_set_t {
    // SAFETY: as in `affinity`; CPU_SET writes the set passed by reference.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        set
    }
}

/// Restricts the calling thread, and the processes it starts from now on, to `cpus`.
fn set_affinity(cpus: &libc::cpu_set_t) {
    // SAFETY: sched_setaffinity reads the set passed by reference.
    let set = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), cpus) };
    assert_eq!(set, 0, "sched_setaffinity: {}", std::io::Error::last_os_error());
}

/// How to start the three servers.
struct Servers<'a> {
    toolhost: &'a Path,
    tools: &'a Path,
    cache: &'a Path,
}

impl Servers<'_> {
    fn start(&self) -> Running {
        let mut floor_command = Command::new("python3");
        floor_command.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/trivial_responder.py"));
        let mut stdio_command = Command::new(self.toolhost);
        stdio_command.args(["--cache-dir"]).arg(self.cache).arg("serve").arg(self.tools);
        let (http_server, address) = start_http(self.toolhost, self.tools, self.cache);
        let http = HttpSession::start(&address, "/mcp", None);
        Running {
            floor: StdioSession::start(floor_command),
            stdio: StdioSession::start(stdio_command),
            http_server,
            http,
            address,
        }
    }
}

/// The floor, toolhost over stdio and toolhost over HTTP, each with a session.
struct Running {
    floor: StdioSession,
    stdio: StdioSession,
    http_server: Server,
    http: HttpSession,
    address: String,
}

/// Sequential round trips of the three servers.
struct Sequential {
    p50: [Duration; 3],
    p99: [Duration; 3],
    cpu_per_call: [Duration; 3],
}

impl Running {
    /// The servers take turns in rounds, so that all of them meet the same machine
    /// (CPU frequency, other load); the first round warms up.
    fn sequential(&mut self, arguments: &serde_json::Value) -> Sequential {
        let mut samples: [Vec<Duration>; 3] = Default::default();
        let pids = [self.floor.pid(), self.stdio.pid(), self.http_server.0.id()];
        let mut cpu = [Duration::ZERO; 3];
        for round in 0..=ROUNDS {
            for (target, samples) in samples.iter_mut().enumerate() {
                let cpu_before = cpu_time(pids[target]);
                for _ in 0..CALLS_PER_ROUND {
                    let started = Instant::now();
                    let response = match target {
                        0 => self.floor.call("math.add", arguments),
                        1 => self.stdio.call("math.add", arguments),
                        _ => self.http.call("math.add", arguments),
                    };
                    let elapsed = started.elapsed();
                    assert!(response.get("result").is_some(), "{response}");
                    if round > 0 {
                        samples.push(elapsed);
                    }
                }
                if round > 0 {
                    cpu[target] += cpu_time(pids[target]).saturating_sub(cpu_before);
                }
            }
        }
        for samples in &mut samples {
            samples.sort();
        }
        Sequential {
            p50: [0, 1, 2].map(|i| percentile(&samples[i], 50.0)),
            p99: [0, 1, 2].map(|i| percentile(&samples[i], 99.0)),
            // The server's own CPU per call: on a VM the round trip's wall time moves
            // by several times with the wake-ups between CPUs, the work far less.
            cpu_per_call: cpu.map(|total| total / (ROUNDS * CALLS_PER_ROUND) as u32),
        }
    }
}

/// Calls/s of one stdio session with `IN_FLIGHT` calls in flight.
fn pipelined_rate(session: &mut StdioSession, arguments: &serde_json::Value) -> f64 {
    PIPELINED_CALLS as f64 / session.pipelined("math.add", arguments, PIPELINED_CALLS, IN_FLIGHT).as_secs_f64()
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// Calls/s of `HTTP_SESSIONS` sessions calling at once, each on its own connection.
fn http_sessions_rate(address: &str, arguments: &serde_json::Value) -> f64 {
    wire::http_sessions_rate(address, HTTP_SESSIONS, HTTP_CALLS_PER_SESSION, "math.add", arguments)
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
    fill_compile_cache(toolhost, tools.path(), cache);
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
