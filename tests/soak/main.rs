//! The soak: `cargo xtask soak --minutes N`. No part of the test suite (`test = false`
//! keeps `cargo test` from building or running it); xtask runs it with
//! `cargo test --release --workspace --test soak -- --minutes N`.
//!
//! For N minutes two workers make a mix of calls (good ones, failing ones, hostile ones
//! hitting each limit, and calls of a churned tool) against two hosts of one tools
//! directory at once: the real `toolhost serve --http` binary on a loopback port and a
//! `ToolHost` in this process, both watching the directory. Meanwhile a writer replaces,
//! breaks, removes and re-adds the `churn` namespace's component and manifest every
//! second. Then it prints a summary and fails unless:
//!
//! - no call of a tool that exists throughout failed, on either host (an HTTP tool
//!   calling a loopback service among them), no call of the churned tool ended in
//!   anything but its answer or `not_found`, and no call of the upstream MCP server's
//!   tool in anything but its answer or, while the server is down after the crash a
//!   worker causes on each host every 15 s, an error naming the server;
//! - each host's upstream server answered, and came back after each crash;
//! - every answer of the churned tool named a version the writer wrote (and each host
//!   answered more than one: the reloads reached the callers);
//! - the RSS and open file descriptors of the server and of this process in the last
//!   window of the run stay within the bounds of [`resources`] of those in the window
//!   right after the warm-up;
//! - with no call in flight (the workers and the writer pause after the warm-up, and
//!   stop at the end) both hosts report zero instance slots in use;
//! - the server stops cleanly on SIGTERM.

mod churn;
mod fronts;
mod mix;
mod resources;
mod sources;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Child, Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use toolhost::{CacheSetting, ToolHost};
use toolhost_tests::{ToolsDir, component, spawn_http_server, toolhost_bin};

use churn::{Step, Versions, Writer};
use fronts::{Front, ServerClient, library_call, scrape, series};
use mix::{Answer, Kind};
use resources::{Sample, Trend, Windows, mib, usage};

const WORKERS: usize = 2;
/// How often RSS and file descriptors are read: enough samples that the median of a
/// window (as long as the warm-up) is not one swing of the allocator — a one-minute
/// run's 15-second windows held only three at every 5 s, and a single compile's arenas
/// moved their median by 20 MiB — and no more often than a second.
fn sample_every(warm_up: Duration) -> Duration {
    (warm_up / 15).clamp(Duration::from_secs(1), Duration::from_secs(5))
}
/// How often a progress line is printed.
const PROGRESS_EVERY: Duration = Duration::from_secs(30);
/// How long a freed instance slot may take to show as free once the calls are answered.
const SLOT_RELEASE_WAIT: Duration = Duration::from_secs(10);
/// How long the workers and the writer may take to finish the call or step at hand
/// (the slowest call ends at its 10 s timeout).
const PAUSE_WAIT: Duration = Duration::from_secs(60);
/// How long the background compiles of the last components written may take.
const COMPILE_WAIT: Duration = Duration::from_secs(60);
/// Left for the server's compiles, which it does not report, once the library's (of the
/// same files, started at the same moment) are done.
const SETTLE: Duration = Duration::from_secs(2);
/// How long the server may take to stop on SIGTERM.
const STOP_WAIT: Duration = Duration::from_secs(10);
/// Failed calls quoted in the summary (all are counted).
const QUOTED_FAILURES: usize = 20;
const SLOTS_IN_USE: &str = "toolhost_instance_slots_in_use";
/// Where each host's upstream server writes its events (`started`, …), in the work dir.
const SERVER_UPSTREAM_EVENTS: &str = "server-upstream.events";
const LIBRARY_UPSTREAM_EVENTS: &str = "library-upstream.events";
/// How often each host's upstream server is crashed: seldom enough that it is up most
/// of the run (its backoff stays short), often enough that a one-minute run sees it
/// come back several times.
const CRASH_EVERY: Duration = Duration::from_secs(15);

/// The stable hostile toolbox's limits: each misbehaviour hits one of them quickly.
const HOSTILE_MANIFEST: &str = "[limits]\nfuel = 20_000_000\nmemory = \"16 MiB\"\ntimeout = \"10s\"\n\
                                max_output = \"4 KiB\"\nmax_log = \"8 KiB\"\n";
/// The same toolbox with fuel to burn: a spin is stopped by the clock.
const SLOW_MANIFEST: &str = "[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"250ms\"\n";

fn main() -> ExitCode {
    let duration = match requested_duration() {
        Ok(duration) => duration,
        Err(message) => {
            eprintln!("soak: {message}\nusage: cargo xtask soak --minutes N (or TOOLHOST_SOAK_MINUTES=N)");
            return ExitCode::from(2);
        }
    };
    if usage("self").is_none() {
        eprintln!("soak: RSS and file descriptors are read from /proc, so the soak runs on Linux only");
        return ExitCode::FAILURE;
    }
    let summary = soak(duration);
    summary.print();
    if summary.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// `--minutes N` (fractions allowed) or `$TOOLHOST_SOAK_MINUTES`.
fn requested_duration() -> Result<Duration, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let minutes = match args.as_slice() {
        [flag, minutes] if flag == "--minutes" => minutes.clone(),
        [] => std::env::var("TOOLHOST_SOAK_MINUTES").map_err(|_| "no duration given".to_owned())?,
        _ => return Err(format!("unexpected arguments {args:?}")),
    };
    match minutes.parse::<f64>() {
        Ok(minutes) if minutes > 0.0 && minutes.is_finite() => Ok(Duration::from_secs_f64(minutes * 60.0)),
        _ => Err(format!("`{minutes}` is not a positive number of minutes")),
    }
}

/// Long enough for caches, pools and allocator arenas to reach their working size: a
/// fifth of the run, between 15 s and 2 min (and at most half of a very short run).
fn warm_up_of(duration: Duration) -> Duration {
    (duration / 5).clamp(Duration::from_secs(15), Duration::from_secs(120)).min(duration / 2)
}

/// `toolhost serve --http` on a loopback port; killed when dropped, unless it stopped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(tools: &Path, work: &Path) -> Server {
        let config = work.join("toolhost.toml");
        let upstream = sources::upstream_toml(&work.join(SERVER_UPSTREAM_EVENTS));
        std::fs::write(&config, upstream).expect("write the configuration");
        let mut command = Command::new(toolhost_bin());
        command
            .arg("--config")
            .arg(&config)
            .arg("--cache-dir")
            .arg(work.join("server-cache"))
            .arg("serve")
            .arg(tools)
            .args(["--http", "127.0.0.1:0"]);
        let (child, addr) = spawn_http_server(command).unwrap_or_else(|e| panic!("the server did not start: {e}"));
        Server { child, addr }
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// SIGTERM, then waits; `Err` says why the stop was not clean.
    fn stop(&mut self) -> Result<Duration, String> {
        let asked = Instant::now();
        let status = Command::new("kill").args(["-TERM", &self.pid()]).status();
        if !status.is_ok_and(|status| status.success()) {
            return Err("could not send SIGTERM".into());
        }
        while asked.elapsed() < STOP_WAIT {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(asked.elapsed()),
                Ok(Some(status)) => return Err(format!("exited with {status} on SIGTERM")),
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => return Err(format!("cannot wait for the server: {e}")),
            }
        }
        Err(format!("still running {STOP_WAIT:?} after SIGTERM"))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Holds the workers and the writer between two of their calls or steps, so that the
/// processes can be measured at rest.
#[derive(Default)]
pub struct Pause {
    requested: AtomicBool,
    holding: AtomicUsize,
}

impl Pause {
    /// Called between two calls or steps: waits while a pause is requested.
    pub fn wait_while_requested(&self) {
        if !self.requested.load(Ordering::SeqCst) {
            return;
        }
        self.holding.fetch_add(1, Ordering::SeqCst);
        while self.requested.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.holding.fetch_sub(1, Ordering::SeqCst);
    }

    /// Requests a pause and waits until `participants` hold; `false` if they did not
    /// within [`PAUSE_WAIT`].
    fn hold(&self, participants: usize) -> bool {
        self.requested.store(true, Ordering::SeqCst);
        let asked = Instant::now();
        while self.holding.load(Ordering::SeqCst) < participants {
            if asked.elapsed() >= PAUSE_WAIT {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        true
    }

    fn release(&self) {
        self.requested.store(false, Ordering::SeqCst);
    }
}

/// What the workers share.
struct Shared {
    deadline: Instant,
    started: Instant,
    addr: String,
    host: ToolHost,
    runtime: tokio::runtime::Handle,
    versions: Arc<Versions>,
    calls: AtomicU64,
    pause: Pause,
    /// When each host's upstream server was last crashed.
    crashed: std::sync::Mutex<BTreeMap<Front, Instant>>,
}

impl Shared {
    /// Whether `front`'s upstream server is due a crash; if so, it is counted as done.
    fn crash_due(&self, front: Front) -> bool {
        let mut crashed = self.crashed.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if crashed.get(&front).is_some_and(|at| at.elapsed() < CRASH_EVERY) {
            return false;
        }
        crashed.insert(front, Instant::now());
        true
    }
}

/// What one worker saw.
#[derive(Default)]
struct Tally {
    outcomes: BTreeMap<(Kind, Front), BTreeMap<String, u64>>,
    stable_failures: u64,
    churned_failures: u64,
    quoted: Vec<String>,
    versions_seen: BTreeMap<Front, BTreeSet<u64>>,
}

impl Tally {
    fn record(&mut self, shared: &Shared, front: Front, kind: Kind, input: &Value, answer: &Answer) {
        *self.outcomes.entry((kind, front)).or_default().entry(answer.outcome.clone()).or_default() += 1;
        match mix::judge(kind, input, answer, &shared.versions) {
            Ok(Some(version)) => {
                self.versions_seen.entry(front).or_default().insert(version);
            }
            Ok(None) => {}
            Err(why) => {
                if kind.is_churned() {
                    self.churned_failures += 1;
                } else {
                    self.stable_failures += 1;
                }
                if self.quoted.len() < QUOTED_FAILURES {
                    let at = shared.started.elapsed().as_secs_f64();
                    self.quoted.push(format!("{at:7.1}s {} {} ({}): {why}", front.label(), kind.tool(), kind.label()));
                }
            }
        }
    }

    fn merge(&mut self, other: Tally) {
        for (key, outcomes) in other.outcomes {
            let mine = self.outcomes.entry(key).or_default();
            for (outcome, count) in outcomes {
                *mine.entry(outcome).or_default() += count;
            }
        }
        self.stable_failures += other.stable_failures;
        self.churned_failures += other.churned_failures;
        self.quoted.extend(other.quoted);
        self.quoted.truncate(QUOTED_FAILURES);
        for (front, versions) in other.versions_seen {
            self.versions_seen.entry(front).or_default().extend(versions);
        }
    }

    fn calls(&self, front: Option<Front>) -> u64 {
        self.outcomes
            .iter()
            .filter(|((_, f), _)| front.is_none_or(|front| *f == front))
            .flat_map(|(_, outcomes)| outcomes.values())
            .sum()
    }
}

/// A worker: whole rounds of the mix, alternating between the server and the library
/// (the two workers start on different ones), until the deadline.
fn work(worker: usize, shared: &Shared) -> Tally {
    let mut tally = Tally::default();
    let mut server = ServerClient::new(&shared.addr);
    let round = mix::round();
    let mut serial = 0;
    for round_number in 0.. {
        let front = if (round_number + worker).is_multiple_of(2) { Front::Server } else { Front::Library };
        for &kind in &round {
            if kind == Kind::UpstreamCrash && !shared.crash_due(front) {
                continue;
            }
            shared.pause.wait_while_requested();
            if Instant::now() >= shared.deadline {
                return tally;
            }
            serial += 1;
            let input = kind.input(serial);
            let answer = match front {
                Front::Server => server.call(kind.tool(), &input),
                Front::Library => library_call(&shared.runtime, &shared.host, kind.tool(), input.clone()),
            };
            shared.calls.fetch_add(1, Ordering::Relaxed);
            tally.record(shared, front, kind, &input, &answer);
        }
    }
    tally
}

/// Slots in use on each host at one moment of rest.
type Slots = [(Front, Option<f64>); 2];

/// The processes measured with no call in flight.
struct Rest {
    sample: Sample,
    slots: Slots,
}

/// Everything the summary prints, and what failed.
struct Summary {
    duration: Duration,
    warm_up: Duration,
    server_addr: String,
    server_pid: String,
    tally: Tally,
    versions_written: u64,
    steps: BTreeMap<Step, u64>,
    library_changes: u64,
    library_metrics: Option<String>,
    server_metrics: Option<String>,
    /// `None` when the workers and the writer could not be paused after the warm-up.
    rest_after_warm_up: Option<Rest>,
    rest_at_end: Rest,
    /// `None` when the server was gone at some sample.
    trends: Option<Vec<Trend>>,
    samples: usize,
    server_stop: Result<Duration, String>,
    /// How many times each host's upstream server started: the server's, the library's.
    upstream_starts: [usize; 2],
    problems: Vec<String>,
}

fn soak(duration: Duration) -> Summary {
    let warm_up = warm_up_of(duration);
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.install("hostile", "hostile", "hostile");
    tools.manifest("hostile", "hostile", HOSTILE_MANIFEST);
    tools.install("hostile", "slow", "hostile");
    tools.manifest("slow", "hostile", SLOW_MANIFEST);
    let echo = sources::EchoService::start();
    echo.install_tool(&tools);
    let versions = Arc::new(Versions::default());
    let hostile = std::fs::read(component("hostile")).expect("read the hostile component");
    let writer = Writer::start(tools.path(), hostile, versions.clone());

    let work_dir = tempfile::Builder::new().prefix("toolhost-soak-").tempdir().expect("temp dir");
    let mut server = Server::start(tools.path(), work_dir.path());
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let _entered = runtime.enter();
    let host = runtime
        .block_on(
            ToolHost::builder()
                .root(tools.path())
                .metrics(true)
                .compile_cache(CacheSetting::Dir(work_dir.path().join("library-cache")))
                .upstream(sources::upstream_server(&work_dir.path().join(LIBRARY_UPSTREAM_EVENTS)))
                .build(),
        )
        .expect("the library host builds");
    let _watch = host.watch(Duration::from_millis(100)).expect("watch the tools directory");
    let library_changes = Arc::new(AtomicU64::new(0));
    let mut changes = host.subscribe();
    let counted = library_changes.clone();
    runtime.spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            match changes.recv().await {
                Ok(_) => counted.fetch_add(1, Ordering::Relaxed),
                Err(RecvError::Lagged(missed)) => counted.fetch_add(missed, Ordering::Relaxed),
                Err(RecvError::Closed) => return,
            };
        }
    });

    println!(
        "soak: {} with {WORKERS} workers against `toolhost serve --http {}` (pid {}) and an in-process ToolHost; \
         the writer churns `{}/` every {:?}",
        clock(duration),
        server.addr,
        server.pid(),
        churn::NAMESPACE,
        churn::STEP_EVERY
    );
    wait_for_upstream(&server.addr);
    let started = Instant::now();
    let shared = Shared {
        deadline: started + duration,
        started,
        addr: server.addr.clone(),
        host: host.clone(),
        runtime: runtime.handle().clone(),
        versions: versions.clone(),
        calls: AtomicU64::new(0),
        pause: Pause::default(),
        crashed: std::sync::Mutex::default(),
    };
    let server_pid = server.pid();
    let sample = || Sample {
        at: started.elapsed(),
        server: usage(&server_pid),
        soak: usage("self").expect("this process's usage"),
    };
    let at_rest = || Rest { slots: settle(&server.addr, &host), sample: sample() };
    let (tally, steps, samples, rest_after_warm_up) = std::thread::scope(|scope| {
        let shared = &shared;
        let writer = scope.spawn(move || writer.run_until(shared.deadline, &shared.pause));
        let workers: Vec<_> = (0..WORKERS).map(|worker| scope.spawn(move || work(worker, shared))).collect();
        let mut samples = vec![sample()];
        let mut rest_after_warm_up = None;
        let mut next_progress = PROGRESS_EVERY;
        while Instant::now() < shared.deadline {
            std::thread::sleep(sample_every(warm_up).min(shared.deadline.saturating_duration_since(Instant::now())));
            if started.elapsed() >= warm_up && rest_after_warm_up.is_none() {
                let held = shared.pause.hold(WORKERS + 1);
                rest_after_warm_up = Some(held.then(at_rest));
                shared.pause.release();
                if let Some(Some(rest)) = &rest_after_warm_up {
                    println!("[{}] at rest after the warm-up: {}", clock(rest.sample.at), usage_line(&rest.sample));
                }
                continue;
            }
            let taken = sample();
            if taken.at >= next_progress {
                next_progress += PROGRESS_EVERY;
                println!(
                    "[{}] {} calls; {}",
                    clock(taken.at),
                    shared.calls.load(Ordering::Relaxed),
                    usage_line(&taken)
                );
            }
            samples.push(taken);
        }
        let mut tally = Tally::default();
        for worker in workers {
            tally.merge(worker.join().expect("a worker panicked"));
        }
        (tally, writer.join().expect("the writer panicked"), samples, rest_after_warm_up.flatten())
    });
    let ran_for = started.elapsed();
    let rest_at_end = at_rest();
    let server_metrics = scrape(&server.addr).ok();
    let library_metrics = host.metrics_text();
    let server_stop = server.stop();
    let upstream_starts = [SERVER_UPSTREAM_EVENTS, LIBRARY_UPSTREAM_EVENTS].map(|events| {
        std::fs::read_to_string(work_dir.path().join(events)).unwrap_or_default().matches("started").count()
    });
    let trends = rest_after_warm_up.as_ref().and_then(|rest| {
        let windows = Windows { after_warm_up: rest.sample.at, end: ran_for, length: warm_up };
        resources::trends(&samples, windows, rest.sample, rest_at_end.sample)
    });

    let mut summary = Summary {
        duration: ran_for,
        warm_up,
        server_addr: server.addr.clone(),
        server_pid,
        tally,
        versions_written: versions.last(),
        steps,
        library_changes: library_changes.load(Ordering::Relaxed),
        library_metrics,
        server_metrics,
        rest_after_warm_up,
        rest_at_end,
        trends,
        samples: samples.len(),
        server_stop,
        upstream_starts,
        problems: Vec::new(),
    };
    summary.problems = summary.judge();
    summary
}

/// Waits until the server answers a call of its upstream server's tool (it serves
/// while the upstream server connects), at most a minute.
fn wait_for_upstream(addr: &str) {
    let mut client = ServerClient::new(addr);
    let asked = Instant::now();
    while client.call(Kind::UpstreamAdd.tool(), &Kind::UpstreamAdd.input(0)).outcome != "ok" {
        assert!(asked.elapsed() < Duration::from_secs(60), "the server's upstream server was not up within a minute");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Once no call is in flight: waits until both hosts report every slot free, and until
/// the compiles of the last components written are done; the slots in use it read.
fn settle(server_addr: &str, host: &ToolHost) -> Slots {
    let slots = [
        (Front::Server, wait_for_free_slots(|| scrape(server_addr).ok())),
        (Front::Library, wait_for_free_slots(|| host.metrics_text())),
    ];
    let asked = Instant::now();
    while host.optimizations_pending() > 0 && asked.elapsed() < COMPILE_WAIT {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(SETTLE);
    slots
}

/// Polls `metrics` until it reports no slot in use; the last value read.
fn wait_for_free_slots(metrics: impl Fn() -> Option<String>) -> Option<f64> {
    let started = Instant::now();
    loop {
        let in_use = metrics().and_then(|text| series(&text, SLOTS_IN_USE));
        if in_use == Some(0.0) || started.elapsed() >= SLOT_RELEASE_WAIT {
            return in_use;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn usage_line(sample: &Sample) -> String {
    let server = match sample.server {
        Some(server) => format!("RSS {} fds {}", mib(server.rss_bytes), server.fds),
        None => "GONE".to_owned(),
    };
    format!("server {server}; soak RSS {} fds {}", mib(sample.soak.rss_bytes), sample.soak.fds)
}

fn clock(duration: Duration) -> String {
    let seconds = duration.as_secs_f64();
    format!("{}m{:04.1}s", (seconds / 60.0).floor(), seconds % 60.0)
}

impl Summary {
    fn judge(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let tally = &self.tally;
        if tally.stable_failures > 0 {
            problems.push(format!("{} calls of tools that exist throughout failed", tally.stable_failures));
        }
        if tally.churned_failures > 0 {
            problems.push(format!(
                "{} calls of the churned tool ended in neither a written version nor not_found",
                tally.churned_failures
            ));
        }
        for (front, starts) in [Front::Server, Front::Library].into_iter().zip(self.upstream_starts) {
            let answered = tally.outcomes.get(&(Kind::UpstreamAdd, front)).and_then(|o| o.get("ok")).copied();
            if answered.unwrap_or(0) == 0 {
                problems.push(format!("the {}'s upstream server never answered", front.label()));
            }
            let crashed = tally.outcomes.keys().any(|(kind, f)| *kind == Kind::UpstreamCrash && *f == front);
            if crashed && starts < 2 {
                problems.push(format!("the {}'s upstream server crashed and did not come back", front.label()));
            }
            let echoed = tally.outcomes.get(&(Kind::HttpEcho, front)).and_then(|o| o.get("ok")).copied();
            if echoed.unwrap_or(0) == 0 {
                problems.push(format!("the {}'s HTTP tool never answered", front.label()));
            }
        }
        for front in [Front::Server, Front::Library] {
            let seen = tally.versions_seen.get(&front).map_or(0, BTreeSet::len);
            if seen < 2 {
                problems.push(format!(
                    "the {} answered {seen} distinct versions: the reloads did not reach it",
                    front.label()
                ));
            }
        }
        match (&self.rest_after_warm_up, &self.trends) {
            (None, _) => problems.push("the workers and the writer could not be paused after the warm-up".into()),
            (Some(_), None) => {
                problems.push("the server process was gone at a sample, or the run was too short to compare".into())
            }
            (Some(_), Some(trends)) => problems.extend(trends.iter().filter(|t| !t.holds()).map(|t| {
                format!(
                    "{} went from {} after the warm-up to {} at the end, past its bound {}",
                    t.what,
                    t.show(t.after_warm_up),
                    t.show(t.end),
                    t.show(t.bound)
                )
            })),
        }
        let rests = [("after the warm-up", self.rest_after_warm_up.as_ref()), ("at the end", Some(&self.rest_at_end))];
        for (when, rest) in rests {
            for (front, in_use) in rest.map_or(&[][..], |rest| &rest.slots[..]) {
                if *in_use != Some(0.0) {
                    problems.push(format!(
                        "the {} reports {} instance slots in use {when}, with no call in flight",
                        front.label(),
                        in_use.map_or("?".to_owned(), |v| v.to_string())
                    ));
                }
            }
        }
        if let Err(why) = &self.server_stop {
            problems.push(format!("the server did not stop cleanly: {why}"));
        }
        problems
    }

    fn print(&self) {
        let tally = &self.tally;
        let seconds = self.duration.as_secs_f64();
        println!("\n== soak summary ==");
        println!(
            "duration        {} (warm-up {}, then a pause to measure at rest; {} samples under load, every {:?})",
            clock(self.duration),
            clock(self.warm_up),
            self.samples,
            sample_every(self.warm_up)
        );
        println!(
            "hosts           server `toolhost serve --http {}` (pid {}); library ToolHost in this process; \
             {WORKERS} workers",
            self.server_addr, self.server_pid
        );
        println!(
            "calls           {} ({:.0}/s): server {}, library {}",
            tally.calls(None),
            tally.calls(None) as f64 / seconds,
            tally.calls(Some(Front::Server)),
            tally.calls(Some(Front::Library))
        );
        for ((kind, front), outcomes) in &tally.outcomes {
            let total: u64 = outcomes.values().sum();
            let outcomes: Vec<String> = outcomes.iter().map(|(outcome, count)| format!("{outcome} {count}")).collect();
            println!("  {:<18} {:<8} {total:>8}  {}", kind.label(), front.label(), outcomes.join(", "));
        }
        println!(
            "failures        {} (tools that exist throughout: {}; churned tools: {})",
            tally.stable_failures + tally.churned_failures,
            tally.stable_failures,
            tally.churned_failures
        );
        for quoted in &tally.quoted {
            println!("  {quoted}");
        }
        let seen = |front| tally.versions_seen.get(&front).map_or(0, BTreeSet::len);
        println!(
            "versions        written 1..={}; distinct answered: server {}, library {}; unwritten answered: {}",
            self.versions_written,
            seen(Front::Server),
            seen(Front::Library),
            tally.churned_failures
        );
        println!(
            "upstream        `up` started: server {} times, library {} times (one start, then one per crash)",
            self.upstream_starts[0], self.upstream_starts[1]
        );
        let steps: Vec<String> = self.steps.iter().map(|(step, count)| format!("{step:?} {count}")).collect();
        println!("writer          {} steps: {}", self.steps.values().sum::<u64>(), steps.join(", "));
        let counters = |metrics: &Option<String>| match metrics {
            Some(text) => {
                let read = |name| series(text, name).map_or("?".to_owned(), |v| v.to_string());
                format!(
                    "toolhost_reloads_total {}, toolhost_load_errors_total {}, toolhost_component_loads_total {}",
                    read("toolhost_reloads_total"),
                    read("toolhost_load_errors_total"),
                    read("toolhost_component_loads_total")
                )
            }
            None => "no metrics".to_owned(),
        };
        println!("reloads seen    server: {}", counters(&self.server_metrics));
        println!(
            "                library: {} registry changes received; {}",
            self.library_changes,
            counters(&self.library_metrics)
        );
        println!(
            "resources       under load, median RSS and most fds of the samples in the {} after the warm-up vs \
             in the last {}; bound: RSS end <= after warm-up x {:.2} + {}, fds end <= after warm-up + {}",
            clock(self.warm_up),
            clock(self.warm_up),
            1.0 + resources::RSS_GROWTH,
            mib(resources::RSS_SLACK),
            resources::FD_SLACK
        );
        match &self.trends {
            Some(trends) => {
                let header = ["start", "after w-up", "end", "bound", "", "peak", "rest w-up", "rest end"];
                println!(
                    "  {:<10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10} {:>10}",
                    "", header[0], header[1], header[2], header[3], header[4], header[5], header[6], header[7]
                );
                for trend in trends {
                    println!(
                        "  {:<10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>10} {:>10} {:>10}",
                        trend.what,
                        trend.show(trend.start),
                        trend.show(trend.after_warm_up),
                        trend.show(trend.end),
                        trend.show(trend.bound),
                        if trend.holds() { "ok" } else { "EXCEEDED" },
                        trend.show(trend.peak),
                        trend.show(trend.rest_after_warm_up),
                        trend.show(trend.rest_at_end),
                    );
                }
                println!(
                    "  (start: before the first call; peak: the highest sample after the warm-up; rest: the workers \
                     and the writer paused, slots free, compiles done; these three are shown, not bounded)"
                );
            }
            None => println!(
                "  no comparison: {}",
                if self.rest_after_warm_up.is_none() {
                    "no pause after the warm-up"
                } else {
                    "the server was gone, or a window held no sample"
                }
            ),
        }
        let slots = |rest: Option<&Rest>| match rest {
            Some(rest) => rest
                .slots
                .iter()
                .map(|(front, in_use)| {
                    format!("{} {}", front.label(), in_use.map_or("?".to_owned(), |v| v.to_string()))
                })
                .collect::<Vec<_>>()
                .join(", "),
            None => "not measured".to_owned(),
        };
        println!(
            "slots in use    after the warm-up: {}; at the end: {}",
            slots(self.rest_after_warm_up.as_ref()),
            slots(Some(&self.rest_at_end))
        );
        match &self.server_stop {
            Ok(after) => println!("server stop     exited 0 on SIGTERM after {after:.2?}"),
            Err(why) => println!("server stop     {why}"),
        }
        if self.problems.is_empty() {
            println!("SOAK PASSED");
        } else {
            println!("SOAK FAILED");
            for problem in &self.problems {
                println!("  - {problem}");
            }
        }
    }
}
