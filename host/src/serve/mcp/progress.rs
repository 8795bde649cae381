//! A call's progress reports on their way to the MCP client as `notifications/progress`, paced.
//!
//! A call's progress reports on their way to the MCP client as `notifications/progress`
//! (only when the request carried a `progressToken`): the first at once, then at most one
//! per [`PROGRESS_INTERVAL`] — a report held back goes out when the interval is over,
//! unless a newer one replaced it — and the last one held back just before the answer.
//! One task sends them in order and the answer waits for it, so no report arrives after
//! the result; a call that ends without an answer (cancelled, client gone) stops the task.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::progress::{Progress, ProgressHook};

/// The least time between two progress notifications of one call.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(100);

/// One call's relay; [`ProgressRelay::finish`] it before answering.
pub(crate) struct ProgressRelay {
    reports: mpsc::UnboundedSender<Progress>,
    finished: Option<oneshot::Sender<()>>,
    sender: Option<tokio::task::JoinHandle<()>>,
}

impl ProgressRelay {
    pub(crate) fn start(peer: Peer<RoleServer>, token: ProgressToken) -> Self {
        let (reports, received) = mpsc::unbounded_channel::<Progress>();
        let (finished, finish) = oneshot::channel();
        let send = move |report: Progress| {
            let peer = peer.clone();
            let mut param = ProgressNotificationParam::new(token.clone(), report.done);
            param.total = report.total;
            param.message = report.message;
            async move { peer.notify_progress(param).await.is_ok() }
        };
        let sender = tokio::spawn(relay(received, finish, send));
        ProgressRelay { reports, finished: Some(finished), sender: Some(sender) }
    }

    /// Where the call's reports go (cheap: a channel send, on the guest's thread).
    pub(crate) fn hook(&self) -> ProgressHook {
        let reports = self.reports.clone();
        Arc::new(move |progress| {
            let _ = reports.send(progress);
        })
    }

    /// Sends the report held back, if any, and waits until every report is out.
    pub(crate) async fn finish(mut self) {
        if let Some(finished) = self.finished.take() {
            let _ = finished.send(());
        }
        if let Some(sender) = self.sender.take() {
            let _ = sender.await;
        }
    }
}

impl Drop for ProgressRelay {
    /// A call that ends without an answer sends no more progress.
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
            sender.abort();
        }
    }
}

/// Sends `received` reports through `send`, at most one per interval, the newest held
/// back winning; when `finish` fires, sends what is held back and ends.
async fn relay<Send, Sent>(
    mut received: mpsc::UnboundedReceiver<Progress>,
    mut finish: oneshot::Receiver<()>,
    send: Send,
) where
    Send: Fn(Progress) -> Sent,
    Sent: Future<Output = bool>,
{
    let mut held: Option<Progress> = None;
    let mut last_sent: Option<Instant> = None;
    loop {
        let due = last_sent.map_or_else(Instant::now, |sent| sent + PROGRESS_INTERVAL);
        tokio::select! {
            biased;
            _ = &mut finish => {
                while let Ok(report) = received.try_recv() {
                    held = Some(report);
                }
                if let Some(report) = held {
                    send(report).await;
                }
                return;
            }
            report = received.recv() => match report {
                Some(report) => held = Some(report),
                None => return,
            },
            () = tokio::time::sleep_until(due), if held.is_some() => {}
        }
        if held.is_some() && last_sent.is_none_or(|sent| sent.elapsed() >= PROGRESS_INTERVAL) {
            let report = held.take().expect("checked");
            if !send(report).await {
                return;
            }
            last_sent = Some(Instant::now());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn report(done: u32) -> Progress {
        Progress { done: f64::from(done), total: Some(10.0), message: None }
    }

    #[tokio::test(start_paused = true)]
    async fn the_first_goes_at_once_the_newest_after_each_interval_and_the_last_before_the_end() {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let log = sent.clone();
        let (reports, received) = mpsc::unbounded_channel();
        let (finished, finish) = oneshot::channel();
        let task = tokio::spawn(relay(received, finish, move |p: Progress| {
            log.lock().unwrap().push((p.done, Instant::now()));
            async { true }
        }));
        let start = Instant::now();
        for done in 1..=5 {
            reports.send(report(done)).unwrap();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        assert_eq!(sent.lock().unwrap().iter().map(|s| s.0).collect::<Vec<_>>(), [1.0], "1 at once, 2-5 held back");
        // Nothing new arrives, yet the report held back goes out when the interval ends.
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(sent.lock().unwrap().iter().map(|s| s.0).collect::<Vec<_>>(), [1.0, 5.0]);
        assert!(sent.lock().unwrap()[1].1 - start >= PROGRESS_INTERVAL);
        reports.send(report(6)).unwrap();
        reports.send(report(7)).unwrap();
        finished.send(()).unwrap();
        task.await.unwrap();
        let done: Vec<f64> = sent.lock().unwrap().iter().map(|s| s.0).collect();
        assert_eq!(done.last(), Some(&7.0), "the last report goes out before the end: {done:?}");
    }
}
