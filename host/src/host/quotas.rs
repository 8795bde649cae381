//! The agents' quotas at the call's door: calls per clock minute (shared on a Redis store) and calls at once.
//!
//! A call is admitted after the policy let its caller see the tool and before anything
//! else (approval, validation, the run): a call over a quota costs nobody's time. Calls
//! per minute are counted in the store when it is Redis, so replicas share them, and in
//! this process otherwise; calls at once are counted on each replica. A store that cannot
//! be reached does not stop calls: the quota is then counted here, and the log says so.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::ToolHost;
use crate::error::CallError;
use crate::policy::{AgentQuota, Caller};

/// The window calls per minute are counted in.
const WINDOW: Duration = Duration::from_secs(60);

/// What this process counts of every agent's quota.
#[derive(Default)]
pub(crate) struct QuotaCounts {
    /// Calls running now, by agent.
    running: Mutex<HashMap<String, u32>>,
    /// Calls started in a window, by agent: the window's number and the count.
    started: Mutex<HashMap<String, (u64, u32)>>,
}

/// A call's place among its agent's running calls, given back when it ends.
pub(crate) struct Admission {
    counts: Option<(Arc<QuotaCounts>, String)>,
}

impl Drop for Admission {
    fn drop(&mut self) {
        if let Some((counts, agent)) = self.counts.take() {
            let mut running = counts.running.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(count) = running.get_mut(&agent) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    running.remove(&agent);
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

/// The shared counter of `agent`'s calls started in `window`. The window, a number, is
/// always after the last `:`, so a key names one agent and one window.
fn calls_key(agent: &str, window: u64) -> String {
    format!("calls:{agent}:{window}")
}

fn over(caller: &Caller, tool: &str, quota: String, retry_after: Duration) -> CallError {
    CallError::QuotaExceeded { tool: tool.to_owned(), agent: caller.agent.clone(), quota, retry_after }
}

impl ToolHost {
    /// Admits a call of `tool` by `caller` under its agent's quota, counting it; the
    /// refusal says which quota and when to retry.
    pub(crate) async fn admit(&self, caller: &Caller, tool: &str) -> Result<Admission, CallError> {
        let Some(quota) = self.policy.load().quota_for(caller).cloned() else {
            return Ok(Admission { counts: None });
        };
        // Boxed: the store's counting future is large, and every call's future would
        // carry it, quota or not.
        Box::pin(self.admit_under(caller, tool, quota)).await
    }

    async fn admit_under(&self, caller: &Caller, tool: &str, quota: AgentQuota) -> Result<Admission, CallError> {
        let admission = self.take_running_place(caller, tool, &quota)?;
        if let Some(limit) = quota.calls_per_minute {
            let (window, left) = window_now();
            let count = self.count_start(caller, window).await;
            if count > u64::from(limit) {
                return Err(over(caller, tool, format!("{limit} calls per minute"), left));
            }
        }
        Ok(admission)
    }

    /// Whether a call by `caller` would be refused now, without counting it: for a
    /// front end that answers before the call is made (HTTP's `429`).
    pub(crate) async fn quota_refusal(&self, caller: &Caller, tool: &str) -> Option<CallError> {
        let quota = self.policy.load().quota_for(caller).cloned()?;
        if let Some(limit) = quota.concurrent_calls {
            let running = self.quota_counts.running.lock().unwrap_or_else(|e| e.into_inner());
            if running.get(&caller.agent).copied().unwrap_or(0) >= limit {
                return Some(over(caller, tool, format!("{limit} calls at once"), Duration::from_secs(1)));
            }
        }
        let limit = quota.calls_per_minute?;
        let (window, left) = window_now();
        let key = calls_key(&caller.agent, window);
        let counted = match self.storage.peek_shared(&key).await {
            Ok(Some(shared)) => shared,
            _ => self.local_started(&caller.agent, window).into(),
        };
        (counted >= u64::from(limit)).then(|| over(caller, tool, format!("{limit} calls per minute"), left))
    }

    fn take_running_place(&self, caller: &Caller, tool: &str, quota: &AgentQuota) -> Result<Admission, CallError> {
        let Some(limit) = quota.concurrent_calls else { return Ok(Admission { counts: None }) };
        let mut running = self.quota_counts.running.lock().unwrap_or_else(|e| e.into_inner());
        let count = running.entry(caller.agent.clone()).or_default();
        if *count >= limit {
            return Err(over(caller, tool, format!("{limit} calls at once"), Duration::from_secs(1)));
        }
        *count += 1;
        Ok(Admission { counts: Some((self.quota_counts.clone(), caller.agent.clone())) })
    }

    /// Counts a call's start in `window`: in the shared store when there is one, else
    /// (or when it cannot be reached) here.
    async fn count_start(&self, caller: &Caller, window: u64) -> u64 {
        let key = calls_key(&caller.agent, window);
        match self.storage.count_shared(&key, WINDOW * 2).await {
            Ok(Some(count)) => return count,
            Ok(None) => {}
            Err(error) => {
                let error = crate::text::Escaped(&error.to_string()).to_string();
                tracing::warn!(agent = %caller.agent, "quota counted on this replica only: {error}");
            }
        }
        let mut started = self.quota_counts.started.lock().unwrap_or_else(|e| e.into_inner());
        if started.len() > 10_000 {
            started.retain(|_, (counted_in, _)| *counted_in == window);
        }
        let entry = started.entry(caller.agent.clone()).or_insert((window, 0));
        if entry.0 != window {
            *entry = (window, 0);
        }
        entry.1 += 1;
        u64::from(entry.1)
    }

    fn local_started(&self, agent: &str, window: u64) -> u32 {
        let started = self.quota_counts.started.lock().unwrap_or_else(|e| e.into_inner());
        started.get(agent).filter(|(counted_in, _)| *counted_in == window).map_or(0, |(_, count)| *count)
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
        let tool = {
            let snapshot = self.snapshot.load();
            let (entry, _, _) = self.resolve_for(&snapshot, caller, name).ok()?;
            entry.full_name.clone()
        };
        let error = self.quota_refusal(caller, &tool).await?;
        let span = tracing::info_span!(target: "toolhost::call", "tool_call", agent = %caller.agent, tool = name);
        let mut recorder = super::report::Recorder::start(self, span, caller, None, name);
        recorder.report().tool = Some(tool);
        recorder.report().outcome = Err(error.clone());
        recorder.finish();
        Some(error)
    }
}
