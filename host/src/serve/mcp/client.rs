//! The MCP client behind a call, as a tool's [`Client`]: elicitation, sampling and log lines over the session's peer.
//!
//! The MCP client behind a call, as the [`Client`] a tool granted the client's powers
//! asks: `elicitation/create` and `sampling/createMessage` requests on the session's
//! peer, and its log lines as `notifications/message` at or above the level the client
//! set (`logging/setLevel`; [`DEFAULT_LOG_LEVEL`] until it does). A power the client did
//! not declare, or one no client can serve (2026-07-28 forbids requests to the client
//! during a call), answers `unsupported` at once: the tool never hangs on a client
//! that cannot answer. Log lines go out in order, and all of them before the answer.
#![allow(deprecated)] // Sampling and logging are deprecated by SEP-2577, and still what clients speak.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitationAction, ElicitationSchema, LoggingLevel,
    LoggingMessageNotificationParam, Role as McpRole, SamplingMessage, SamplingMessageContentBlock,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::Value;
use tokio::sync::mpsc;

use crate::client::{Client, ClientError, ClientHook, ElicitAnswer, LogLevel, Role, SamplingReply, SamplingRequest};
use crate::text::{Escaped, MAX_MESSAGE, bounded};

/// The level a session's log lines pass at until its client sets one.
pub(crate) const DEFAULT_LOG_LEVEL: LoggingLevel = LoggingLevel::Info;

/// The level a session's client set (`logging/setLevel`), shared by its calls.
#[derive(Clone, Default)]
pub(crate) struct SessionLogLevel(Arc<AtomicU8>);

impl SessionLogLevel {
    pub(crate) fn set(&self, level: LoggingLevel) {
        self.0.store(rank(level) + 1, Ordering::Relaxed);
    }

    fn passes(&self, level: LoggingLevel) -> bool {
        let minimum = match self.0.load(Ordering::Relaxed) {
            0 => rank(DEFAULT_LOG_LEVEL),
            set => set - 1,
        };
        rank(level) >= minimum
    }
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Trace | LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warn => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}

/// What the client of one call can do, read from its declared capabilities.
pub(crate) struct CallClient {
    peer: Peer<RoleServer>,
    /// Why it cannot ask the person, when it cannot.
    no_elicitation: Option<&'static str>,
    /// Why it cannot ask its model, when it cannot.
    no_sampling: Option<&'static str>,
    level: SessionLogLevel,
    lines: Arc<Lines>,
}

/// Why a client that did not declare elicitation is not asked.
const NO_ELICITATION: &str = "the client did not declare the elicitation capability (form mode)";
const NO_SAMPLING: &str = "the client did not declare the sampling capability";
const STATELESS: &str = "this call uses protocol 2026-07-28, which allows no request to the client during a call";

/// Log lines of one call waiting to be sent; past this a line is dropped (and counted).
const MAX_QUEUED_LINES: usize = 256;
/// How long an answer waits for the call's last log lines to be sent.
const LINES_FLUSH_WAIT: Duration = Duration::from_secs(5);

/// One call's log lines on their way to the client: a task started by the first line
/// that passes the level (a call that logs nothing costs nothing), a bounded queue, and
/// every queued line sent before the answer.
#[derive(Default)]
struct Lines {
    state: Mutex<LinesState>,
}

#[derive(Default)]
struct LinesState {
    queue: Option<mpsc::Sender<LoggingMessageNotificationParam>>,
    sender: Option<tokio::task::JoinHandle<()>>,
    /// The call answered: later lines (a native tool's task that outlived it) are dropped.
    finished: bool,
    dropped: u64,
}

impl Lines {
    fn lock(&self) -> std::sync::MutexGuard<'_, LinesState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send(&self, peer: &Peer<RoleServer>, line: LoggingMessageNotificationParam) {
        let mut state = self.lock();
        if state.finished {
            return;
        }
        if state.queue.is_none() {
            let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
            let (queue, mut received) = mpsc::channel::<LoggingMessageNotificationParam>(MAX_QUEUED_LINES);
            let peer = peer.clone();
            state.sender = Some(runtime.spawn(async move {
                while let Some(line) = received.recv().await {
                    if peer.notify_logging_message(line).await.is_err() {
                        return;
                    }
                }
            }));
            state.queue = Some(queue);
        }
        if state.queue.as_ref().is_some_and(|queue| queue.try_send(line).is_err()) {
            state.dropped += 1;
        }
    }
}

/// One call's log lines; [`LogRelay::finish`] before answering.
pub(crate) struct LogRelay {
    lines: Arc<Lines>,
}

impl CallClient {
    /// The client of a call on `peer`, which declared `elicitation` and `sampling` or
    /// not; `stateless` when the call may not ask the client anything.
    pub(crate) fn start(
        peer: Peer<RoleServer>,
        (elicitation, sampling, stateless): (bool, bool, bool),
        level: SessionLogLevel,
    ) -> (ClientHook, LogRelay) {
        let reason = |declared: bool, missing: &'static str| match (stateless, declared) {
            (true, _) => Some(STATELESS),
            (false, false) => Some(missing),
            (false, true) => None,
        };
        let lines = Arc::new(Lines::default());
        let client = CallClient {
            peer,
            no_elicitation: reason(elicitation, NO_ELICITATION),
            no_sampling: reason(sampling, NO_SAMPLING),
            level,
            lines: lines.clone(),
        };
        (Arc::new(client), LogRelay { lines })
    }
}

impl LogRelay {
    /// Sends the call's queued log lines, within [`LINES_FLUSH_WAIT`]; later lines are
    /// dropped.
    pub(crate) async fn finish(self) {
        let (queue, sender, dropped) = {
            let mut state = self.lines.lock();
            state.finished = true;
            (state.queue.take(), state.sender.take(), state.dropped)
        };
        // The queue's end: the sender stops once it sent what is queued.
        drop(queue);
        if dropped > 0 {
            tracing::debug!(dropped, "log lines over the queue's bound were not sent to the client");
        }
        if let Some(mut sender) = sender
            && tokio::time::timeout(LINES_FLUSH_WAIT, &mut sender).await.is_err()
        {
            sender.abort();
        }
    }
}

impl Drop for LogRelay {
    /// A call that ends without an answer sends no more lines.
    fn drop(&mut self) {
        let mut state = self.lines.lock();
        state.finished = true;
        state.queue = None;
        if let Some(sender) = state.sender.take() {
            sender.abort();
        }
    }
}

impl Client for CallClient {
    fn elicit(&self, message: String, schema: Value) -> BoxFuture<'static, Result<ElicitAnswer, ClientError>> {
        if let Some(why) = self.no_elicitation {
            return futures::future::ready(Err(ClientError::Unsupported(why.to_owned()))).boxed();
        }
        let requested_schema = match serde_json::from_value::<ElicitationSchema>(schema) {
            Ok(schema) => schema,
            Err(e) => {
                let problem = format!("the form is not an elicitation schema: {e}");
                return futures::future::ready(Err(ClientError::Failed(problem))).boxed();
            }
        };
        let peer = self.peer.clone();
        async move {
            let request = ElicitRequestParams::FormElicitationParams { meta: None, message, requested_schema };
            // No timeout of its own: the call's time limit bounds the wait.
            let answer = peer.create_elicitation(request).await.map_err(client_failed)?;
            Ok(match answer.action {
                ElicitationAction::Accept => {
                    ElicitAnswer::Accept(answer.content.unwrap_or(Value::Object(Default::default())))
                }
                ElicitationAction::Decline => ElicitAnswer::Decline,
                ElicitationAction::Cancel => ElicitAnswer::Cancel,
                _ => {
                    return Err(ClientError::Failed(
                        "the client answered with an action this host does not know".into(),
                    ));
                }
            })
        }
        .boxed()
    }

    fn sample(&self, request: SamplingRequest) -> BoxFuture<'static, Result<SamplingReply, ClientError>> {
        if let Some(why) = self.no_sampling {
            return futures::future::ready(Err(ClientError::Unsupported(why.to_owned()))).boxed();
        }
        let peer = self.peer.clone();
        async move {
            let messages = request
                .messages
                .into_iter()
                .map(|(role, text)| {
                    let role = match role {
                        Role::User => McpRole::User,
                        Role::Assistant => McpRole::Assistant,
                    };
                    SamplingMessage::new(role, SamplingMessageContentBlock::Text(rmcp::model::TextContent::new(text)))
                })
                .collect();
            let mut params = CreateMessageRequestParams::new(messages, request.max_tokens);
            params.system_prompt = request.system_prompt;
            let answer = peer.create_message(params).await.map_err(client_failed)?;
            let text = match answer.message.content.first() {
                Some(SamplingMessageContentBlock::Text(text)) => text.text.clone(),
                Some(_) => return Err(ClientError::Failed("the model answered with content that is not text".into())),
                None => String::new(),
            };
            Ok(SamplingReply { text, model: answer.model, stop_reason: answer.stop_reason })
        }
        .boxed()
    }

    fn log(&self, level: LogLevel, logger: &str, message: &str) {
        let level = mcp_level(level);
        if self.level.passes(level) {
            let line = LoggingMessageNotificationParam::new(level, Value::from(message)).with_logger(logger);
            self.lines.send(&self.peer, line);
        }
    }
}

/// A client's failure to answer, in the guest's terms (the client's text is data:
/// bounded and escaped).
fn client_failed(error: rmcp::service::ServiceError) -> ClientError {
    ClientError::Failed(bounded(format!("the client did not answer: {}", Escaped(&error.to_string())), MAX_MESSAGE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_pass_at_or_above_the_level_the_client_set() {
        let level = SessionLogLevel::default();
        assert!(level.passes(LoggingLevel::Info) && !level.passes(LoggingLevel::Debug));
        level.set(LoggingLevel::Error);
        assert!(!level.passes(LoggingLevel::Warning) && level.passes(LoggingLevel::Critical));
        level.set(LoggingLevel::Debug);
        assert!(level.passes(LoggingLevel::Debug));
    }
}
