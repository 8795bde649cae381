//! A call's progress reports on their way to the MCP client as `notifications/progress`
//! (only when the request carried a `progressToken`): the first at once, then at most one
//! per [`PROGRESS_INTERVAL`] (a newer report replaces one held back), and the last one
//! held back just before the answer. One task sends them in order, and the answer waits
//! for it, so no report arrives after the result.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::mpsc;

use crate::progress::{Progress, ProgressHook};

/// The least time between two progress notifications of one call.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// One call's relay; [`ProgressRelay::finish`] it before answering.
pub(super) struct ProgressRelay {
    gate: Arc<Mutex<Gate>>,
    sender: tokio::task::JoinHandle<()>,
}

/// What the reports of one call have sent and held back.
struct Gate {
    /// `None` once the call finished.
    queue: Option<mpsc::UnboundedSender<Progress>>,
    held_back: Option<Progress>,
    last_sent: Option<Instant>,
}

impl Gate {
    fn offer(&mut self, progress: Progress) {
        let now = Instant::now();
        if self.last_sent.is_some_and(|last| now.duration_since(last) < PROGRESS_INTERVAL) {
            self.held_back = Some(progress);
            return;
        }
        if let Some(queue) = &self.queue {
            let _ = queue.send(progress);
            self.held_back = None;
            self.last_sent = Some(now);
        }
    }
}

impl ProgressRelay {
    pub(super) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (queue, mut reports) = mpsc::unbounded_channel::<Progress>();
        let sender = tokio::spawn(async move {
            while let Some(report) = reports.recv().await {
                let mut param = ProgressNotificationParam::new(token.clone(), report.done as f64);
                param.total = report.total.map(|total| total as f64);
                param.message = report.message;
                if peer.notify_progress(param).await.is_err() {
                    return;
                }
            }
        });
        let gate = Gate { queue: Some(queue), held_back: None, last_sent: None };
        ProgressRelay { gate: Arc::new(Mutex::new(gate)), sender }
    }

    /// Where the call's reports go (cheap: a lock and, at most every interval, a send).
    pub(super) fn hook(&self) -> ProgressHook {
        let gate = self.gate.clone();
        Arc::new(move |progress| gate.lock().unwrap_or_else(|e| e.into_inner()).offer(progress))
    }

    /// Sends the report held back, if any, and waits until every report is out.
    pub(super) async fn finish(self) {
        {
            let mut gate = self.gate.lock().unwrap_or_else(|e| e.into_inner());
            if let (Some(held_back), Some(queue)) = (gate.held_back.take(), &gate.queue) {
                let _ = queue.send(held_back);
            }
            gate.queue = None;
        }
        let _ = self.sender.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(done: u64) -> Progress {
        Progress { done, total: Some(10), message: None }
    }

    #[test]
    fn reports_within_the_interval_are_held_back_the_newest_winning() {
        let (queue, mut sent) = mpsc::unbounded_channel();
        let mut gate = Gate { queue: Some(queue), held_back: None, last_sent: None };
        for done in 1..=5 {
            gate.offer(report(done));
        }
        assert_eq!(sent.try_recv().unwrap().done, 1);
        assert!(sent.try_recv().is_err());
        assert_eq!(gate.held_back.as_ref().map(|p| p.done), Some(5));
        gate.last_sent = Some(Instant::now() - PROGRESS_INTERVAL);
        gate.offer(report(6));
        assert_eq!(sent.try_recv().unwrap().done, 6);
        assert!(gate.held_back.is_none());
    }
}
