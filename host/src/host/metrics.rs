//! Numbers for the operator in the Prometheus text format: calls, latency, fuel, slots, loads and reloads.
//!
//! Numbers for the operator, in the Prometheus text exposition format (0.0.4): calls by
//! tool and outcome, their latency, the fuel they burned, instance slots in use, loads,
//! load errors and reloads. Kept in memory by the host when
//! [`ToolHostBuilder::metrics`](crate::ToolHostBuilder::metrics) is on; the HTTP server
//! serves them at `GET /metrics`.
//!
//! One uncontended lock per call; label sets are bounded by the tools served (a call
//! of a name that is not found, or of a tool hidden from its caller, counts under
//! `tool=""`).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::report::CallReport;

/// Upper bounds of the latency histogram's buckets, in seconds: 50 µs to 30 s.
const LATENCY_BUCKETS: [f64; 16] =
    [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 30.0];

/// What the host counts while it serves.
#[derive(Default)]
pub(crate) struct Metrics {
    tools: Mutex<BTreeMap<String, ToolStats>>,
    component_loads: AtomicU64,
    load_errors: AtomicU64,
    reloads: AtomicU64,
}

#[derive(Default)]
struct ToolStats {
    outcomes: BTreeMap<&'static str, u64>,
    /// Calls per latency bucket (not cumulative), the last being `+Inf`.
    buckets: [u64; LATENCY_BUCKETS.len() + 1],
    seconds: f64,
    fuel: u64,
}

/// What is read at scrape time rather than counted.
pub(crate) struct Gauges {
    pub slots_in_use: usize,
    pub slots: usize,
    pub tools: usize,
    pub load_errors: usize,
    /// Upstream MCP servers whose tools are served now.
    pub upstreams_serving: usize,
    /// Upstream MCP servers that cannot be reached now (retried with backoff).
    pub upstreams_failed: usize,
}

impl Metrics {
    pub(crate) fn record_call(&self, report: &CallReport) {
        let outcome = match &report.outcome {
            Ok(_) => "ok",
            Err(error) => error.kind().as_str(),
        };
        let seconds = report.duration.as_secs_f64();
        let bucket = LATENCY_BUCKETS.iter().position(|&bound| seconds <= bound).unwrap_or(LATENCY_BUCKETS.len());
        let mut tools = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        // A tool hidden from its caller is counted like an unknown one: any agent may
        // read these numbers.
        let tool = if report.hidden_because.is_some() { "" } else { report.tool.as_deref().unwrap_or_default() };
        let stats = match tools.get_mut(tool) {
            Some(stats) => stats,
            None => tools.entry(tool.to_owned()).or_default(),
        };
        *stats.outcomes.entry(outcome).or_default() += 1;
        stats.buckets[bucket] += 1;
        stats.seconds += seconds;
        stats.fuel += report.fuel_consumed;
    }

    /// A published reload: `loaded` components compiled or restored, `errors` new load
    /// errors.
    pub(crate) fn record_reload(&self, loaded: usize, errors: usize) {
        self.reloads.fetch_add(1, Ordering::Relaxed);
        self.component_loads.fetch_add(loaded as u64, Ordering::Relaxed);
        self.load_errors.fetch_add(errors as u64, Ordering::Relaxed);
    }

    /// Everything, in the Prometheus text format; of the tools, those `shown` keeps.
    pub(crate) fn render(&self, gauges: &Gauges, shown: impl Fn(&str) -> bool) -> String {
        let mut out = String::new();
        let all = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        let tools: Vec<(&String, &ToolStats)> = all.iter().filter(|(tool, _)| shown(tool)).collect();
        family(&mut out, "toolhost_calls_total", "counter", "Tool calls, by tool and outcome (ok or the error kind).");
        for (tool, stats) in &tools {
            for (outcome, count) in &stats.outcomes {
                let _ = writeln!(out, "toolhost_calls_total{{tool=\"{}\",outcome=\"{outcome}\"}} {count}", label(tool));
            }
        }
        family(&mut out, "toolhost_call_duration_seconds", "histogram", "Time from call to answer, refusals included.");
        for (tool, stats) in &tools {
            let tool = label(tool);
            let mut cumulative = 0;
            for (i, count) in stats.buckets.iter().enumerate() {
                cumulative += count;
                let le = LATENCY_BUCKETS.get(i).map_or("+Inf".to_owned(), f64::to_string);
                let _ =
                    writeln!(out, "toolhost_call_duration_seconds_bucket{{tool=\"{tool}\",le=\"{le}\"}} {cumulative}");
            }
            let _ = writeln!(out, "toolhost_call_duration_seconds_sum{{tool=\"{tool}\"}} {}", stats.seconds);
            let _ = writeln!(out, "toolhost_call_duration_seconds_count{{tool=\"{tool}\"}} {cumulative}");
        }
        family(&mut out, "toolhost_fuel_consumed_total", "counter", "Fuel burned by guests, by tool.");
        for (tool, stats) in &tools {
            let _ = writeln!(out, "toolhost_fuel_consumed_total{{tool=\"{}\"}} {}", label(tool), stats.fuel);
        }
        drop(tools);
        drop(all);
        let scalars = [
            ("toolhost_instance_slots_in_use", "gauge", "Calls holding an instance slot now.", gauges.slots_in_use),
            ("toolhost_instance_slots", "gauge", "Calls that may hold an instance slot at once.", gauges.slots),
            ("toolhost_tools", "gauge", "Tools served now.", gauges.tools),
            ("toolhost_failing_files", "gauge", "Files that do not load now.", gauges.load_errors),
        ];
        for (name, kind, help, value) in scalars {
            family(&mut out, name, kind, help);
            let _ = writeln!(out, "{name} {value}");
        }
        let upstreams = "toolhost_upstream_servers";
        family(&mut out, upstreams, "gauge", "Upstream MCP servers by state: serving tools, or failed (retried).");
        let _ = writeln!(out, "{upstreams}{{state=\"serving\"}} {}", gauges.upstreams_serving);
        let _ = writeln!(out, "{upstreams}{{state=\"failed\"}} {}", gauges.upstreams_failed);
        let counters = [
            (
                "toolhost_component_loads_total",
                "Components compiled or restored from the cache.",
                &self.component_loads,
            ),
            ("toolhost_load_errors_total", "Load errors, as reloads found them.", &self.load_errors),
            ("toolhost_reloads_total", "Registry snapshots published (the first load included).", &self.reloads),
        ];
        for (name, help, value) in counters {
            family(&mut out, name, "counter", help);
            let _ = writeln!(out, "{name} {}", value.load(Ordering::Relaxed));
        }
        out
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A label value as the format wants it: backslash, quote and newline escaped.
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
