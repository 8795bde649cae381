//! What a tool may ask of the calling MCP client: the person (elicitation), its model (sampling), its log.
//!
//! The MCP client behind a call can do three things for a tool: ask the person a
//! question (elicitation), ask its model for a completion (sampling) and show the tool's
//! log lines. Each is a *power* the operator grants a component in its manifest
//! (`[grants] client = ["elicit", "sample", "log"]`; denied by default), that the
//! caller's policy may narrow (`[[policy]] client = [...]`), and that only a client
//! which declared the capability can serve. A call's [`ClientSession`] holds what was
//! granted and the way to the client ([`Client`], given by the MCP server through
//! [`CallOptions::client`](crate::CallOptions::client)); every request through it is
//! timed and recorded for the audit record ([`ClientRequest`]).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use futures::future::BoxFuture;
use serde_json::Value;

mod checks;
mod powers;

pub use checks::{MAX_FORM_BYTES, MAX_REQUESTS_PER_CALL, MAX_SAMPLING_BYTES};
use checks::{check_answer, check_form, check_reply, check_sampling};
pub use powers::{ClientPower, ClientPowers};

use crate::content::{Content, ContentBlocks};
use crate::text::{Escaped, MAX_MESSAGE, bounded};

/// Why a request to the client got no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// The operator did not grant the power, or the caller's policy does not allow it.
    #[error("not granted: {0}")]
    NotGranted(String),
    /// No client can answer: it did not declare the capability, or there is no client.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The client answered with an error or an invalid answer, or the request was not
    /// valid.
    #[error("failed: {0}")]
    Failed(String),
}

/// How the person answered a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElicitAnswer {
    /// They submitted the form: its values.
    Accept(Value),
    /// They said no.
    Decline,
    /// They dismissed the question.
    Cancel,
}

impl ElicitAnswer {
    fn outcome(&self) -> &'static str {
        match self {
            ElicitAnswer::Accept(_) => "accept",
            ElicitAnswer::Decline => "decline",
            ElicitAnswer::Cancel => "cancel",
        }
    }
}

/// Who speaks a message: of a sampling conversation, or of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person.
    User,
    /// The model.
    Assistant,
}

/// What to ask the client's model: a conversation of text messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingRequest {
    /// The conversation so far.
    pub messages: Vec<(Role, String)>,
    /// The system prompt, when the tool has one.
    pub system_prompt: Option<String>,
    /// The most tokens the model may answer with.
    pub max_tokens: u32,
}

/// The client's model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SamplingReply {
    /// What it answered.
    pub text: String,
    /// The model, as the client names it.
    pub model: String,
    /// Why it stopped, when the client says.
    pub stop_reason: Option<String>,
}

/// A log line's level, as the contract names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Finer than debug.
    Trace,
    /// For developers.
    Debug,
    /// Normal operation.
    Info,
    /// Something is off.
    Warn,
    /// Something failed.
    Error,
}

/// The way to the client behind a call, as the MCP server gives it. Every method is
/// called only for a power the call was granted; a method for a capability the client
/// did not declare answers [`ClientError::Unsupported`] at once.
pub trait Client: Send + Sync {
    /// Asks the person `message` with the form `schema`.
    fn elicit(&self, message: String, schema: Value) -> BoxFuture<'static, Result<ElicitAnswer, ClientError>>;
    /// Asks the client's model.
    fn sample(&self, request: SamplingRequest) -> BoxFuture<'static, Result<SamplingReply, ClientError>>;
    /// Sends a log line of the tool `logger`, when the client asked for lines of this
    /// level; never blocks.
    fn log(&self, level: LogLevel, logger: &str, message: &str);
}

/// The client of a call, shared with the tool.
pub type ClientHook = Arc<dyn Client>;

/// One request a call made of its client, for its audit record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ClientRequest {
    /// `elicit` or `sample`.
    pub power: ClientPower,
    /// `accept`, `decline`, `cancel` (elicit), `answered` (sample), or the error kind:
    /// `not_granted`, `unsupported`, `failed`.
    pub outcome: &'static str,
    /// How long the client took, in microseconds.
    pub duration_us: u64,
}

/// What one call may ask of its client, and what it asked: shared by the tool (a
/// component's host functions, a native tool) and the pipeline that records the call.
#[derive(Clone)]
pub struct ClientSession {
    inner: Arc<SessionState>,
}

struct SessionState {
    client: Option<ClientHook>,
    granted: ClientPowers,
    /// `namespace/tool`, the logger of its lines.
    tool: Arc<str>,
    /// Bound of the call's content blocks together, in bytes.
    max_content: u64,
    recorded: Mutex<Recorded>,
}

#[derive(Default)]
struct Recorded {
    requests: Vec<ClientRequest>,
    /// Requests past [`MAX_REQUESTS_PER_CALL`], refused.
    requests_over: u64,
    content: ContentBlocks,
    log_lines: u64,
}

/// What a call asked of its client and showed, once it ended.
#[derive(Debug, Default)]
pub struct ClientUse {
    /// Its elicitation and sampling requests.
    pub requests: Vec<ClientRequest>,
    /// The content blocks it added.
    pub content: Vec<Content>,
    /// Requests past [`MAX_REQUESTS_PER_CALL`], refused without reaching the client.
    pub requests_over: u64,
    /// Log lines sent to the client.
    pub log_lines: u64,
}

impl ClientSession {
    pub(crate) fn new(client: Option<ClientHook>, granted: ClientPowers, tool: Arc<str>, max_content: u64) -> Self {
        let state = SessionState { client, granted, tool, max_content, recorded: Mutex::default() };
        ClientSession { inner: Arc::new(state) }
    }

    fn recorded(&self) -> std::sync::MutexGuard<'_, Recorded> {
        self.inner.recorded.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The powers this call may use.
    pub fn granted(&self) -> ClientPowers {
        self.inner.granted
    }

    /// The tool's full name (shared: a call's sandbox labels its log lines with it).
    pub(crate) fn tool(&self) -> &Arc<str> {
        &self.inner.tool
    }

    fn client_for(&self, power: ClientPower) -> Result<&ClientHook, ClientError> {
        let mut recorded = self.recorded();
        if power != ClientPower::Log && recorded.requests.len() >= MAX_REQUESTS_PER_CALL {
            recorded.requests_over += 1;
            return Err(ClientError::Failed(format!(
                "this call made the {MAX_REQUESTS_PER_CALL} requests of its client a call may make"
            )));
        }
        drop(recorded);
        if !self.inner.granted.contains(power) {
            return Err(ClientError::NotGranted(format!(
                "`{power}` is not granted to {} for this caller (the manifest's `[grants] client`, narrowed by the policy's `client`)",
                self.inner.tool
            )));
        }
        self.inner.client.as_ref().ok_or_else(|| {
            ClientError::Unsupported("the call does not come from an MCP client that could answer".to_owned())
        })
    }

    fn record(&self, power: ClientPower, outcome: &'static str, started: Instant) {
        let duration_us = started.elapsed().as_micros().try_into().unwrap_or(u64::MAX);
        let mut recorded = self.recorded();
        if recorded.requests.len() < MAX_REQUESTS_PER_CALL {
            recorded.requests.push(ClientRequest { power, outcome, duration_us });
        }
    }

    /// A request the tool could not even make (its form is not JSON, or too large):
    /// recorded, and the error for the tool (a power not granted says so first).
    pub(crate) fn unreadable(&self, power: ClientPower, problem: String) -> ClientError {
        let error = match self.client_for(power) {
            Err(refused) => refused,
            Ok(_) => ClientError::Failed(problem),
        };
        self.record(power, error_outcome(&error), Instant::now());
        error
    }

    /// Asks the person behind the client `message`, with the form `schema` (a flat
    /// object schema of primitive properties).
    pub async fn elicit(&self, message: &str, schema: Value) -> Result<ElicitAnswer, ClientError> {
        let started = Instant::now();
        let answer = match self.client_for(ClientPower::Elicit) {
            Ok(client) => match check_form(&schema) {
                Ok(form) => {
                    let answer = client.elicit(bounded(message.to_owned(), MAX_MESSAGE), schema).await;
                    answer.and_then(|answer| check_answer(&form, answer))
                }
                Err(problem) => Err(ClientError::Failed(problem)),
            },
            Err(refused) => Err(refused),
        };
        let outcome = answer.as_ref().map_or_else(error_outcome, ElicitAnswer::outcome);
        self.record(ClientPower::Elicit, outcome, started);
        answer
    }

    /// Asks the client's model for a completion.
    pub async fn sample(&self, request: SamplingRequest) -> Result<SamplingReply, ClientError> {
        let started = Instant::now();
        let reply = match self.client_for(ClientPower::Sample) {
            Err(refused) => Err(refused),
            Ok(client) => match check_sampling(&request) {
                Ok(()) => client.sample(request).await.and_then(check_reply),
                Err(problem) => Err(ClientError::Failed(problem)),
            },
        };
        let outcome = reply.as_ref().map_or_else(error_outcome, |_| "answered");
        self.record(ClientPower::Sample, outcome, started);
        reply
    }

    /// Sends a log line to the client, when the call may and the client listens.
    pub fn log(&self, level: LogLevel, message: &str) {
        let Ok(client) = self.client_for(ClientPower::Log) else { return };
        client.log(level, &self.inner.tool, &bounded(message.to_owned(), MAX_MESSAGE));
        self.recorded().log_lines += 1;
    }

    /// Adds a content block to what the call shows its caller; refused when the blocks
    /// together would pass the tool's output limit.
    pub fn add_content(&self, block: Content) -> Result<(), String> {
        let limit = self.inner.max_content;
        let added = self.recorded().content.add(block, limit);
        if let Err(refused) = &added {
            tracing::debug!(tool = %self.inner.tool, "content refused: {}", Escaped(refused));
        }
        added
    }

    /// What the call asked and showed, taken out of the session.
    pub(crate) fn finish(&self) -> ClientUse {
        let mut recorded = self.recorded();
        ClientUse {
            requests: std::mem::take(&mut recorded.requests),
            requests_over: std::mem::take(&mut recorded.requests_over),
            content: recorded.content.take(),
            log_lines: std::mem::take(&mut recorded.log_lines),
        }
    }
}

fn error_outcome(error: &ClientError) -> &'static str {
    match error {
        ClientError::NotGranted(_) => "not_granted",
        ClientError::Unsupported(_) => "unsupported",
        ClientError::Failed(_) => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_power_not_granted_is_refused_and_recorded_without_reaching_a_client() {
        let session = ClientSession::new(None, ClientPowers::NONE, Arc::from("t/x"), 100);
        let refused = futures::executor::block_on(session.elicit("hi", json!({"type": "object"}))).unwrap_err();
        assert!(matches!(refused, ClientError::NotGranted(_)), "{refused}");
        let granted = ClientSession::new(None, ClientPowers::all(), Arc::from("t/x"), 100);
        let unsupported = futures::executor::block_on(granted.sample(SamplingRequest {
            messages: vec![(Role::User, "hi".into())],
            system_prompt: None,
            max_tokens: 10,
        }))
        .unwrap_err();
        assert!(matches!(unsupported, ClientError::Unsupported(_)), "{unsupported}");
        let outcomes: Vec<_> = granted.finish().requests.iter().map(|r| (r.power, r.outcome)).collect();
        assert_eq!(outcomes, [(ClientPower::Sample, "unsupported")]);
        assert_eq!(session.finish().requests[0].outcome, "not_granted");
    }
}
