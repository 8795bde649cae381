//! The agents' quotas at the call's door: calls per clock minute and fuel per clock minute (shared on a Redis store), calls at once, and each upstream server's share.
//!
//! A call is admitted after the policy let its caller see the tool and before anything
//! else (approval, validation, the run): a call over a quota costs nobody's time. Calls
//! and fuel per minute are counted in the store when it is Redis, so replicas share
//! them, and in this process otherwise; calls at once, on the host and on each upstream
//! server, are counted on each replica. A store that cannot be reached does not stop
//! calls: the quota is then counted here, and the log says so. A component call's fuel
//! is reserved when it is admitted (its whole fuel limit, so that calls running at once
//! cannot all start on what is left) and what it did not burn is given back when it
//! ends; a call stopped before its end (cancelled, its client gone) keeps its whole
//! limit counted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::ToolHost;
use crate::error::CallError;
use crate::policy::{AgentQuota, Caller};
use crate::registry::ToolEntry;
use crate::sources::ToolSource;

/// The window calls and fuel per minute are counted in.
const WINDOW: Duration = Duration::from_secs(60);

/// Agents (and windows) counted here before those of past windows are forgotten.
const KEPT: usize = 10_000;

/// What this process counts of every agent's quota.
#[derive(Default)]
pub(crate) struct QuotaCounts {
    /// Calls running now, by agent; and by agent and upstream server.
    running: Mutex<HashMap<Place, u32>>,
    /// Calls started in a window, by agent: the window's number and the count.
    started: Mutex<HashMap<String, (u64, u64)>>,
    /// Fuel burned in a window, by agent: the window's number and the fuel.
    fuel: Mutex<HashMap<String, (u64, u64)>>,
}

/// Whose calls at once a count is: an agent's on the host, or on one upstream server.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Place {
    agent: String,
    upstream: Option<String>,
}

/// A call's places among its agent's running calls, given back when it ends, and the
/// fuel reserved for it in its window.
pub(crate) struct Admission {
    places: Vec<(Arc<QuotaCounts>, Place)>,
    fuel: Option<(u64, u64)>,
}

impl Admission {
    fn free() -> Admission {
        Admission { places: Vec::new(), fuel: None }
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        for (counts, place) in self.places.drain(..) {
            let mut running = counts.running.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(count) = running.get_mut(&place) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    running.remove(&place);
                }
            }
        }
    }
}

/// The current window's number, and the time left in it.
fn window_now() -> (u64, Duration) {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let window = now.as_secs() / WINDOW.as_secs();
    let ends = Duration::from_secs((window + 1) * WINDOW.as_secs());
    (window, ends.saturating_sub(now))
}

/// What is counted per agent in each window.
#[derive(Clone, Copy)]
enum Counter {
    /// Calls started.
    Calls,
    /// Fuel burned.
    Fuel,
}

impl Counter {
    /// The shared counter of what `agent` used in `window`. The window, a number, is
    /// always after the last `:`, so a key names one agent and one window.
    fn key(self, agent: &str, window: u64) -> String {
        let what = match self {
            Counter::Calls => "calls",
            Counter::Fuel => "fuel",
        };
        format!("{what}:{agent}:{window}")
    }
}

/// The upstream server that answers `entry`, if one does.
pub(crate) fn upstream_of(entry: &ToolEntry) -> Option<&str> {
    match &entry.source {
        ToolSource::Upstream(tool) => Some(tool.server.as_str()),
        _ => None,
    }
}

fn over(caller: &Caller, tool: &str, quota: String, retry_after: Duration) -> CallError {
    CallError::QuotaExceeded { tool: tool.to_owned(), agent: caller.agent.clone(), quota, retry_after }
}

impl ToolHost {
    /// Admits a call of `entry` by `caller` under its agent's quota, counting it; the
    /// refusal says which quota and when to retry.
    pub(crate) async fn admit(&self, caller: &Caller, entry: &ToolEntry) -> Result<Admission, CallError> {
        let Some(quota) = self.policy.load().quota_for(caller).cloned() else {
            return Ok(Admission::free());
        };
        // Boxed: the store's counting future is large, and every call's future would
        // carry it, quota or not.
        Box::pin(self.admit_under(caller, entry, quota)).await
    }

    async fn admit_under(&self, caller: &Caller, entry: &ToolEntry, quota: AgentQuota) -> Result<Admission, CallError> {
        let tool = entry.full_name.as_str();
        let mut admission = Admission::free();
        if let Some(limit) = quota.concurrent_calls {
            admission.places.push(self.take_place(caller, tool, None, limit)?);
        }
        if let (Some(limit), Some(server)) = (quota.upstream_calls, upstream_of(entry)) {
            admission.places.push(self.take_place(caller, tool, Some(server), limit)?);
        }
        let (window, left) = window_now();
        if let (Some(limit), ToolSource::Component { .. }) = (quota.fuel_per_minute, &entry.source) {
            // Reserved first, then checked: of the calls that reserve at once, only those
            // that found less than the quota burned run.
            let reserved = entry.def().limits.fuel.min(i64::MAX as u64);
            let burned = self.count(Counter::Fuel, &caller.agent, window, reserved as i64).await;
            if burned.saturating_sub(reserved) >= limit {
                self.count(Counter::Fuel, &caller.agent, window, -(reserved as i64)).await;
                return Err(over(caller, tool, format!("{limit} fuel per minute"), left));
            }
            admission.fuel = Some((window, reserved));
        }
        if let Some(limit) = quota.calls_per_minute {
            let count = self.count(Counter::Calls, &caller.agent, window, 1).await;
            if count > u64::from(limit) {
                return Err(over(caller, tool, format!("{limit} calls per minute"), left));
            }
        }
        Ok(admission)
    }

    /// Gives back the fuel reserved for a call admitted as `admission` that it did not
    /// burn (`burned`).
    pub(crate) async fn spend_fuel(&self, admission: &Admission, caller: &Caller, burned: u64) {
        if let Some((window, reserved)) = admission.fuel
            && reserved > burned
        {
            let unburned = i64::try_from(reserved - burned).unwrap_or(i64::MAX);
            Box::pin(self.count(Counter::Fuel, &caller.agent, window, -unburned)).await;
        }
    }

    /// Whether a call of `entry` by `caller` would be refused now, without counting it:
    /// for a front end that answers before the call is made (HTTP's `429`).
    pub(crate) async fn quota_refusal(&self, caller: &Caller, entry: &ToolEntry) -> Option<CallError> {
        let quota = self.policy.load().quota_for(caller).cloned()?;
        let tool = entry.full_name.as_str();
        let upstream = upstream_of(entry);
        for (limit, on) in
            [(quota.concurrent_calls, None), (quota.upstream_calls.filter(|_| upstream.is_some()), upstream)]
        {
            if let Some(limit) = limit
                && self.running(&caller.agent, on) >= limit
            {
                return Some(over(caller, tool, at_once(limit, on), Duration::from_secs(1)));
            }
        }
        let (window, left) = window_now();
        if let Some(limit) = quota.fuel_per_minute
            && self.counted(Counter::Fuel, &caller.agent, window).await >= limit
        {
            return Some(over(caller, tool, format!("{limit} fuel per minute"), left));
        }
        let limit = quota.calls_per_minute?;
        let counted = self.counted(Counter::Calls, &caller.agent, window).await;
        (counted >= u64::from(limit)).then(|| over(caller, tool, format!("{limit} calls per minute"), left))
    }

    fn running(&self, agent: &str, upstream: Option<&str>) -> u32 {
        let place = Place { agent: agent.to_owned(), upstream: upstream.map(str::to_owned) };
        self.quota_counts.running.lock().unwrap_or_else(|e| e.into_inner()).get(&place).copied().unwrap_or(0)
    }

    /// A place among `caller`'s running calls (on `upstream`, when named), if fewer
    /// than `limit` run.
    fn take_place(
        &self,
        caller: &Caller,
        tool: &str,
        upstream: Option<&str>,
        limit: u32,
    ) -> Result<(Arc<QuotaCounts>, Place), CallError> {
        let place = Place { agent: caller.agent.clone(), upstream: upstream.map(str::to_owned) };
        let mut running = self.quota_counts.running.lock().unwrap_or_else(|e| e.into_inner());
        let count = running.entry(place.clone()).or_default();
        if *count >= limit {
            return Err(over(caller, tool, at_once(limit, upstream), Duration::from_secs(1)));
        }
        *count += 1;
        Ok((self.quota_counts.clone(), place))
    }

    /// Adds `by` (a gift back when negative) to what `agent` used of `counter` in
    /// `window`: in the shared store when there is one, else (or when it cannot be
    /// reached) here; the new count.
    async fn count(&self, counter: Counter, agent: &str, window: u64, by: i64) -> u64 {
        match self.storage.count_shared(&counter.key(agent, window), by, WINDOW * 2).await {
            Ok(Some(count)) => return count,
            Ok(None) => {}
            Err(error) => {
                let error = crate::text::Escaped(&error.to_string()).to_string();
                tracing::warn!(agent = %agent, "quota counted on this replica only: {error}");
            }
        }
        let mut counts = self.local_counts(counter).lock().unwrap_or_else(|e| e.into_inner());
        if counts.len() > KEPT {
            counts.retain(|_, (counted_in, _)| *counted_in == window);
        }
        let entry = counts.entry(agent.to_owned()).or_insert((window, 0));
        if entry.0 != window {
            *entry = (window, 0);
        }
        entry.1 = entry.1.saturating_add_signed(by);
        entry.1
    }

    /// What `agent` used of `counter` in `window`, without counting.
    async fn counted(&self, counter: Counter, agent: &str, window: u64) -> u64 {
        if let Ok(Some(shared)) = self.storage.peek_shared(&counter.key(agent, window)).await {
            return shared;
        }
        let counts = self.local_counts(counter).lock().unwrap_or_else(|e| e.into_inner());
        counts.get(agent).filter(|(counted_in, _)| *counted_in == window).map_or(0, |(_, count)| *count)
    }

    fn local_counts(&self, counter: Counter) -> &Mutex<HashMap<String, (u64, u64)>> {
        match counter {
            Counter::Calls => &self.quota_counts.started,
            Counter::Fuel => &self.quota_counts.fuel,
        }
    }
}

/// How a quota of calls at once reads in a refusal.
fn at_once(limit: u32, upstream: Option<&str>) -> String {
    match upstream {
        Some(server) => format!("{limit} calls at once on upstream `{server}`"),
        None => format!("{limit} calls at once"),
    }
}

impl ToolHost {
    /// Whether `caller`'s agent has a quota (`[[quota]]`).
    pub fn has_quota(&self, caller: &Caller) -> bool {
        self.policy.load().quota_for(caller).is_some()
    }

    /// For a front end that answers before a call is made (HTTP's `429`): the refusal a
    /// call of `name` by `caller` would get now for its agent's quota, recorded like any
    /// refused call (audit record, metrics); `None` when it would be admitted, and then
    /// nothing is counted. A name the caller may not call is not refused here: the call
    /// answers for it.
    pub async fn refuse_over_quota(&self, caller: &Caller, name: &str) -> Option<CallError> {
        if !self.has_quota(caller) {
            return None;
        }
        let entry = {
            let snapshot = self.snapshot.load();
            let (entry, _, _) = self.resolve_for(&snapshot, caller, name).ok()?;
            entry.clone()
        };
        let error = self.quota_refusal(caller, &entry).await?;
        let span = tracing::info_span!(target: "toolhost::call", "tool_call", agent = %caller.agent, tool = name);
        let mut recorder = super::report::Recorder::start(self, span, caller, None, name);
        recorder.answered_by(&entry);
        recorder.finish(Err(error.clone()), super::report::Usage::default());
        Some(error)
    }
}
