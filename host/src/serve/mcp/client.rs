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

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

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
    lines: mpsc::UnboundedSender<LoggingMessageNotificationParam>,
}

/// Why a client that did not declare elicitation is not asked.
const NO_ELICITATION: &str = "the client did not declare the elicitation capability (form mode)";
const NO_SAMPLING: &str = "the client did not declare the sampling capability";
const STATELESS: &str = "this call uses protocol 2026-07-28, which allows no request to the client during a call";

/// One call's client and the task sending its log lines; [`LogRelay::finish`] before
/// answering.
pub(crate) struct LogRelay {
    sender: Option<tokio::task::JoinHandle<()>>,
}

impl CallClient {
    /// The client of a call on `peer`, which declared `elicitation` and `sampling` or
    /// not; `stateless` when the call may not ask the client anything.
    pub(crate) fn start(
        peer: Peer<RoleServer>,
        (elicitation, sampling, stateless): (bool, bool, bool),
        level: SessionLogLevel,
    ) -> (ClientHook, LogRelay) {
        let (lines, mut received) = mpsc::unbounded_channel::<LoggingMessageNotificationParam>();
        let sender_peer = peer.clone();
        let sender = tokio::spawn(async move {
            while let Some(line) = received.recv().await {
                if sender_peer.notify_logging_message(line).await.is_err() {
                    return;
                }
            }
        });
        let reason = |declared: bool, missing: &'static str| match (stateless, declared) {
            (true, _) => Some(STATELESS),
            (false, false) => Some(missing),
            (false, true) => None,
        };
        let client = CallClient {
            peer,
            no_elicitation: reason(elicitation, NO_ELICITATION),
            no_sampling: reason(sampling, NO_SAMPLING),
            level,
            lines,
        };
        (Arc::new(client), LogRelay { sender: Some(sender) })
    }
}

impl LogRelay {
    /// Waits until every log line of the call is sent (the call's client, holding the
    /// other end, is gone once the call ended).
    pub(crate) async fn finish(mut self) {
        if let Some(sender) = self.sender.take() {
            let _ = sender.await;
        }
    }
}

impl Drop for LogRelay {
    /// A call that ends without an answer sends no more lines.
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
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
            let _ = self.lines.send(line);
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
