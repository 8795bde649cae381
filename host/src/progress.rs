//! Progress a tool reports while it runs, on its way to whoever shows it.
//!
//! Progress a tool reports while it runs (`host.progress`, contract 0.1.1), on its way
//! to whoever shows it: an MCP client's `notifications/progress`, a library caller's
//! hook.

use std::sync::Arc;

/// One progress report of a running call.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Progress {
    /// Units done so far; above every earlier report of the same call. Whole units
    /// from a component (`host.progress`); an upstream server's own numbers, which MCP
    /// allows to be fractions.
    pub done: f64,
    /// Units in all, when the tool knows.
    pub total: Option<f64>,
    /// What the tool is doing, at most [`MAX_PROGRESS_MESSAGE`] bytes.
    pub message: Option<String>,
}

/// Receives a call's progress reports, on the thread running the guest: keep it cheap
/// (store or send, never block). See [`crate::CallOptions::progress`].
pub type ProgressHook = Arc<dyn Fn(Progress) + Send + Sync>;

/// Longest progress message passed on, in bytes; longer ones are cut at a character
/// boundary and end in `…`.
pub const MAX_PROGRESS_MESSAGE: usize = 512;

/// One call's reports as the guest makes them, passed on only when they move forward.
#[derive(Default)]
pub(crate) struct ProgressReports {
    hook: Option<ProgressHook>,
    last_done: Option<f64>,
}

impl ProgressReports {
    pub(crate) fn new(hook: Option<ProgressHook>) -> Self {
        ProgressReports { hook, last_done: None }
    }

    /// Passes a report on when `done` is above the last one passed on (MCP requires
    /// progress to increase) and every number is finite, with its message bounded.
    pub(crate) fn report(&mut self, done: f64, total: Option<f64>, message: Option<String>) {
        let Some(hook) = &self.hook else { return };
        if !done.is_finite() || total.is_some_and(|total| !total.is_finite()) {
            return;
        }
        if self.last_done.is_some_and(|last| done <= last) {
            return;
        }
        self.last_done = Some(done);
        hook(Progress { done, total, message: message.map(bounded) });
    }
}

fn bounded(mut message: String) -> String {
    if crate::text::truncate(&mut message, MAX_PROGRESS_MESSAGE - '…'.len_utf8()) > 0 {
        message.push('…');
    }
    message
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn collecting() -> (ProgressReports, Arc<Mutex<Vec<Progress>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        (ProgressReports::new(Some(Arc::new(move |p| sink.lock().unwrap().push(p)))), seen)
    }

    #[test]
    fn only_reports_that_move_forward_pass() {
        let (mut reports, seen) = collecting();
        for done in [1.0, 3.0, 3.0, 2.0, f64::NAN, 4.0] {
            reports.report(done, Some(4.0), None);
        }
        let done: Vec<f64> = seen.lock().unwrap().iter().map(|p| p.done).collect();
        assert_eq!(done, [1.0, 3.0, 4.0]);
    }

    #[test]
    fn long_messages_are_cut_at_a_character_boundary() {
        let (mut reports, seen) = collecting();
        reports.report(1.0, None, Some("é".repeat(1000)));
        let message = seen.lock().unwrap()[0].message.clone().unwrap();
        assert!(message.len() <= MAX_PROGRESS_MESSAGE && message.ends_with('…'), "{}", message.len());
        reports.report(2.0, None, Some("short".into()));
        assert_eq!(seen.lock().unwrap()[1].message.as_deref(), Some("short"));
    }
}
