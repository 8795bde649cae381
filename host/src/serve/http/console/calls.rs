//! The console's calls: the last calls and each tool's counts and latency per minute over the last hour, and the live stream.
//!
//! What this replica's audit records say: a console behind a balancer shows the calls
//! of the replica it reached (the JSONL audit file of each replica has them all).

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use axum::extract::{Request, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::json;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::session::Operator;
use super::{Console, query_param};
use crate::host::{CallRecord, ToolHost};

/// How many of the last calls are kept for a page that opens.
const RECENT: usize = 500;
/// The minutes the charts cover.
const MINUTES: usize = 60;
const MINUTE_MS: u64 = 60_000;
/// The tools counted at most; calls of others are not drawn.
const MAX_TOOLS: usize = 1024;

/// One minute of one tool.
#[derive(Clone, Copy, Default)]
struct Minute {
    /// Which minute since the Unix epoch.
    index: u64,
    calls: u64,
    errors: u64,
    total_us: u64,
}

/// The last calls, and counts per tool and minute.
pub(super) struct CallLog {
    recent: Mutex<VecDeque<Arc<CallRecord>>>,
    minutes: Mutex<BTreeMap<String, [Minute; MINUTES]>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A poisoned lock only means a holder panicked; the counts are intact.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl CallLog {
    /// A log fed by `host`'s audit records until `stop`.
    pub(super) fn start(host: &ToolHost, stop: CancellationToken) -> Arc<CallLog> {
        let log = Arc::new(CallLog { recent: Mutex::default(), minutes: Mutex::default() });
        let mut records = host.subscribe_calls();
        let fed = Arc::downgrade(&log);
        tokio::spawn(async move {
            loop {
                let record = tokio::select! {
                    _ = stop.cancelled() => return,
                    record = records.recv() => record,
                };
                match (record, fed.upgrade()) {
                    (Ok(record), Some(log)) => log.add(record),
                    (Err(broadcast::error::RecvError::Lagged(_)), Some(_)) => continue,
                    _ => return,
                }
            }
        });
        log
    }

    fn add(&self, record: Arc<CallRecord>) {
        let index = record.timestamp_ms / MINUTE_MS;
        if let Some(tool) = &record.tool {
            let mut minutes = lock(&self.minutes);
            if minutes.len() < MAX_TOOLS || minutes.contains_key(tool) {
                let ring = minutes.entry(tool.clone()).or_insert([Minute::default(); MINUTES]);
                let minute = &mut ring[(index % MINUTES as u64) as usize];
                if minute.index != index {
                    *minute = Minute { index, ..Minute::default() };
                }
                minute.calls += 1;
                minute.errors += u64::from(record.outcome != "ok");
                minute.total_us = minute.total_us.saturating_add(record.duration_us);
            }
        }
        let mut recent = lock(&self.recent);
        if recent.len() == RECENT {
            recent.pop_front();
        }
        recent.push_back(record);
    }

    /// The agents of the last calls, once each.
    pub(super) fn agents(&self) -> Vec<String> {
        let mut agents: Vec<String> = Vec::new();
        for record in lock(&self.recent).iter() {
            if !agents.contains(&record.caller.agent) {
                agents.push(record.caller.agent.clone());
            }
        }
        agents
    }
}

/// Which calls a page wants: by agent and tool (a part of the name, any case) and
/// outcome (`ok`, `errors`, or one error kind).
#[derive(Clone, Default)]
struct Filter {
    agent: Option<String>,
    tool: Option<String>,
    outcome: Option<String>,
}

impl Filter {
    fn of(uri: &http::Uri) -> Filter {
        let param = |name| query_param(uri, name).map(|v| v.trim().to_lowercase()).filter(|v| !v.is_empty());
        Filter { agent: param("agent"), tool: param("tool"), outcome: param("outcome") }
    }

    fn admits(&self, record: &CallRecord) -> bool {
        let contains =
            |text: &str, part: &Option<String>| part.as_ref().is_none_or(|p| text.to_lowercase().contains(p));
        let tool = record.tool.as_deref().unwrap_or(&record.requested);
        let outcome = match self.outcome.as_deref() {
            None => true,
            Some("errors") => record.outcome != "ok",
            Some(kind) => record.outcome == kind,
        };
        outcome && contains(&record.caller.agent, &self.agent) && contains(tool, &self.tool)
    }
}

/// `GET /console/api/calls?agent=&tool=&outcome=`: the last calls that pass, oldest first.
pub(super) async fn recent(State(console): State<Arc<Console>>, request: Request) -> Response {
    let filter = Filter::of(request.uri());
    let calls: Vec<Arc<CallRecord>> =
        lock(&console.calls.recent).iter().filter(|record| filter.admits(record)).cloned().collect();
    axum::Json(json!({ "calls": calls })).into_response()
}

/// `GET /console/api/calls/stream?…`: each new call that passes, as a Server-Sent Event
/// `call`, until the page goes, the sign-in ends or the server stops.
pub(super) async fn stream(
    State(console): State<Arc<Console>>,
    axum::Extension(operator): axum::Extension<Operator>,
    request: Request,
) -> Response {
    let filter = Filter::of(request.uri());
    // The stream ends with the sign-in that opened it.
    let signed_in_for = operator.expires.duration_since(SystemTime::now()).unwrap_or_default();
    let records = console.host.subscribe_calls();
    let stop = console.stop.clone();
    let events = futures::stream::unfold(records, move |mut records| {
        let filter = filter.clone();
        async move {
            loop {
                match records.recv().await {
                    Ok(record) if filter.admits(&record) => {
                        let event = Event::default().event("call").json_data(&*record).unwrap_or_default();
                        return Some((Ok::<_, Infallible>(event), records));
                    }
                    Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return None,
                }
            }
        }
    });
    let events = events.take_until(async move {
        tokio::select! {
            _ = stop.cancelled() => {}
            _ = tokio::time::sleep(signed_in_for) => {}
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default()).into_response()
}

/// `GET /console/api/stats`: per tool, calls, errors and mean latency of each of the
/// last 60 minutes, oldest first.
pub(super) async fn stats(State(console): State<Arc<Console>>) -> Response {
    let now_ms =
        u64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(u64::MAX);
    let last = now_ms / MINUTE_MS;
    let minutes = lock(&console.calls.minutes);
    let tools: Vec<serde_json::Value> = minutes
        .iter()
        .filter_map(|(tool, ring)| {
            let series: Vec<Minute> = ((last + 1).saturating_sub(MINUTES as u64)..=last)
                .map(|index| {
                    Some(ring[(index % MINUTES as u64) as usize]).filter(|m| m.index == index).unwrap_or_default()
                })
                .collect();
            series.iter().any(|m| m.calls > 0).then(|| {
                json!({
                    "tool": tool,
                    "calls": series.iter().map(|m| m.calls).collect::<Vec<_>>(),
                    "errors": series.iter().map(|m| m.errors).collect::<Vec<_>>(),
                    "mean_us": series.iter().map(|m| m.total_us.checked_div(m.calls).unwrap_or(0)).collect::<Vec<_>>(),
                })
            })
        })
        .collect();
    axum::Json(json!({ "minute_ms": MINUTE_MS, "end_ms": (last + 1) * MINUTE_MS, "tools": tools })).into_response()
}
