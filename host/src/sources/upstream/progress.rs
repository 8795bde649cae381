//! An upstream server's progress notifications, on their way to the call that asked for them.
//!
//! The MCP client gives every request a progress token of its own; a call of an upstream
//! tool whose caller wants progress registers where the reports for its token go, and
//! the connection's handler passes each `notifications/progress` carrying that token on,
//! through the same [`ProgressReports`] a component's `host.progress` goes through
//! (only finite reports that move forward, messages bounded), with the server's own
//! numbers (fractions too). A report that arrives before its call registered (the
//! server answered faster than the call task ran on) waits among the last
//! [`EARLY_KEPT`]; a token nobody waits for (a call that ended, a made-up one) is
//! dropped.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};

use crate::progress::{ProgressHook, ProgressReports};

/// Reports for no registered call, kept in case their call registers next.
const EARLY_KEPT: usize = 32;

/// Where the progress of each call in flight on one connection goes, by its token.
#[derive(Clone, Default)]
pub(crate) struct ProgressRoutes {
    inner: Arc<Mutex<Routes>>,
}

#[derive(Default)]
struct Routes {
    calls: HashMap<ProgressToken, ProgressReports>,
    early: VecDeque<ProgressNotificationParam>,
}

/// One call's registration; the route goes when it is dropped.
pub(crate) struct Route {
    routes: ProgressRoutes,
    token: ProgressToken,
}

impl Drop for Route {
    fn drop(&mut self) {
        self.routes.lock().calls.remove(&self.token);
    }
}

impl ProgressRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends the reports carrying `token` to `hook` until the route is dropped.
    pub(crate) fn route(&self, token: ProgressToken, hook: ProgressHook) -> Route {
        let mut reports = ProgressReports::new(Some(hook));
        let mut routes = self.lock();
        let (early, others): (Vec<_>, Vec<_>) = routes.early.drain(..).partition(|n| n.progress_token == token);
        routes.early.extend(others);
        for notification in early {
            reports.report(notification.progress, notification.total, notification.message);
        }
        routes.calls.insert(token.clone(), reports);
        Route { routes: self.clone(), token }
    }

    /// Passes a notification on to the call whose token it carries.
    pub(crate) fn deliver(&self, notification: ProgressNotificationParam) {
        let mut routes = self.lock();
        match routes.calls.get_mut(&notification.progress_token) {
            Some(reports) => reports.report(notification.progress, notification.total, notification.message),
            None => {
                if routes.early.len() == EARLY_KEPT {
                    routes.early.pop_front();
                }
                routes.early.push_back(notification);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    #[test]
    fn a_report_reaches_its_call_only_while_the_call_runs() {
        let routes = ProgressRoutes::default();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let token = |n: i64| ProgressToken(NumberOrString::Number(n));
        let report = |token: ProgressToken, progress: f64| {
            let mut param = ProgressNotificationParam::new(token, progress);
            param.total = Some(10.0);
            routes.deliver(param);
        };
        // Early: before its call registered.
        report(token(7), 0.5);
        let route = routes.route(token(7), Arc::new(move |p| sink.lock().unwrap().push((p.done, p.total))));
        report(token(7), 1.0);
        report(token(7), 0.75);
        report(token(8), 5.0);
        report(token(7), 7.5);
        drop(route);
        report(token(7), 9.0);
        assert_eq!(seen.lock().unwrap().as_slice(), [(0.5, Some(10.0)), (1.0, Some(10.0)), (7.5, Some(10.0))]);
        for n in 0..100 {
            report(token(100 + n), 1.0);
        }
        assert_eq!(routes.lock().early.len(), EARLY_KEPT, "early reports are bounded");
    }
}
