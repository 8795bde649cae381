//! Resident memory and open file descriptors of a process, from `/proc`, and the bound
//! the soak holds them to.
//!
//! Under load RSS moves by tens of megabytes between two samples (a memory bomb in
//! flight, a Cranelift compile of a new component, malloc arenas that grow for it and
//! keep the pages for a while), and a single value, even one taken at rest, may land on
//! such a swing. So the bound compares medians of the samples under the same load: those
//! of a window right after the warm-up with those of a window as long at the end. A
//! leak moves every sample up, and so the median; a swing moves a few. Descriptors do
//! not swing: their bound compares the highest value of each window.

use std::time::Duration;

/// The median RSS of the last window may exceed that of the first window after the
/// warm-up by this fraction …
pub const RSS_GROWTH: f64 = 0.10;
/// … plus this much (allocator arenas and caches settle in steps of megabytes).
pub const RSS_SLACK: u64 = 8 << 20;
/// The most open file descriptors of the last window may exceed those of the first
/// window after the warm-up by this many.
pub const FD_SLACK: u64 = 8;

#[derive(Clone, Copy, Debug)]
pub struct Usage {
    pub rss_bytes: u64,
    pub fds: u64,
}

/// The usage of `/proc/<pid>` (`self` for this process); `None` once the process is gone.
pub fn usage(pid: &str) -> Option<Usage> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss_kib: u64 =
        status.lines().find_map(|line| line.strip_prefix("VmRSS:"))?.trim().strip_suffix("kB")?.trim().parse().ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count() as u64;
    Some(Usage { rss_bytes: rss_kib << 10, fds })
}

/// One measurement of both processes.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub at: Duration,
    pub server: Option<Usage>,
    pub soak: Usage,
}

/// One quantity of one process over the run.
pub struct Trend {
    pub what: &'static str,
    /// Before the first call.
    pub start: u64,
    /// The window right after the warm-up: the baseline (median RSS, most descriptors).
    pub after_warm_up: u64,
    /// The window at the end, read the same way.
    pub end: u64,
    /// The highest sample after the warm-up (shown, not bounded).
    pub peak: u64,
    /// The workers and the writer paused, right after the warm-up and after the end.
    pub rest_after_warm_up: u64,
    pub rest_at_end: u64,
    pub bound: u64,
}

impl Trend {
    pub fn holds(&self) -> bool {
        self.end <= self.bound
    }

    pub fn show(&self, value: u64) -> String {
        if self.what.ends_with("RSS") { mib(value) } else { value.to_string() }
    }
}

/// The windows a run's samples are compared in.
#[derive(Clone, Copy, Debug)]
pub struct Windows {
    /// The first window starts here (after the warm-up and the pause that follows it) …
    pub after_warm_up: Duration,
    /// … the last one ends here, and both are this long.
    pub end: Duration,
    pub length: Duration,
}

/// The RSS and descriptor trends of the server and of this process, from the samples
/// under load and the two taken at rest. `None` when the server was gone at some sample
/// or a window holds no sample.
pub fn trends(
    under_load: &[Sample],
    windows: Windows,
    rest_after_warm_up: Sample,
    rest_at_end: Sample,
) -> Option<Vec<Trend>> {
    type Read = fn(&Sample) -> Option<u64>;
    let readings: [(&str, Read, bool); 4] = [
        ("server RSS", |s| s.server.map(|u| u.rss_bytes), true),
        ("server fds", |s| s.server.map(|u| u.fds), false),
        ("soak RSS", |s| Some(s.soak.rss_bytes), true),
        ("soak fds", |s| Some(s.soak.fds), false),
    ];
    let first = windows.after_warm_up..=windows.after_warm_up + windows.length;
    let last = windows.end.saturating_sub(windows.length)..=windows.end;
    readings
        .into_iter()
        .map(|(what, read, is_rss)| {
            let values: Option<Vec<(Duration, u64)>> = under_load.iter().map(|s| read(s).map(|v| (s.at, v))).collect();
            let values = values?;
            let within = |window: &std::ops::RangeInclusive<Duration>| -> Vec<u64> {
                values.iter().filter(|(at, _)| window.contains(at)).map(|(_, v)| *v).collect()
            };
            let summarize = |window| if is_rss { median(within(window)) } else { within(window).into_iter().max() };
            let after_warm_up = summarize(&first)?;
            let bound = if is_rss {
                (after_warm_up as f64 * (1.0 + RSS_GROWTH)) as u64 + RSS_SLACK
            } else {
                after_warm_up + FD_SLACK
            };
            Some(Trend {
                what,
                start: values.first()?.1,
                after_warm_up,
                end: summarize(&last)?,
                peak: values.iter().filter(|(at, _)| *at >= windows.after_warm_up).map(|(_, v)| *v).max()?,
                rest_after_warm_up: read(&rest_after_warm_up)?,
                rest_at_end: read(&rest_at_end)?,
                bound,
            })
        })
        .collect()
}

fn median(mut values: Vec<u64>) -> Option<u64> {
    values.sort_unstable();
    values.get(values.len() / 2).copied()
}

pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}
