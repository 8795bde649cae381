//! Calls waiting for an operator's answer at the console, in the store every replica shares.
//!
//! A call whose approval goes to the console ([`crate::policy::ApproveVia`]) puts its
//! question in the host's own bucket of the store (`toolhost:approvals`, which no guest
//! can name) and waits. Any replica on the same store lists the questions and takes an
//! operator's answer. The answer is written beside the question only if none is there
//! yet, in one step for every replica, so two operators, or one clicking twice, cannot
//! both answer. It is also handed straight to the call when the call waits in the same
//! process; a call on another replica finds it within [`POLL`]. A question leaves the
//! store when its call is answered, ends, or gives up after [`APPROVAL_WAIT`]; one left
//! by a killed replica is past its time, listed no more, and deleted by a later listing.
//! An answer stays until its question's time is past, so that no second answer is
//! taken for the same call after the first one ended it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::FutureExt;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::ToolHost;
use crate::policy::{APPROVAL_WAIT, Approval, ApprovalHook, ApprovalRequest, Caller};
use crate::storage::{BucketId, Write};
use crate::tool::Risk;

/// How often a waiting call looks in the store for an answer given on another replica.
pub const POLL: Duration = Duration::from_millis(200);
/// How much of a call's input the operator is shown; the rest is cut, saying how much.
const INPUT_SHOWN: usize = 8192;
/// The longest reason an operator may give, in bytes.
pub const MAX_REASON: usize = 1024;
/// The most calls of one process waiting for the console at once; past it, a call that
/// needs approval is denied at once.
pub const MAX_WAITING: usize = 256;
/// How far another replica's clock may be behind: its questions are not deleted as
/// expired until this long after their time here.
const CLOCK_SKEW_MS: u64 = 60_000;

fn bucket() -> BucketId {
    BucketId { owner: "toolhost".to_owned(), id: "toolhost:approvals".to_owned() }
}

fn question_key(id: &str) -> String {
    format!("q:{id}")
}

fn answer_key(id: &str) -> String {
    format!("a:{id}")
}

fn unix_ms(time: SystemTime) -> u64 {
    u64::try_from(time.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(u64::MAX)
}

/// A call waiting for an operator, as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitingApproval {
    /// Names the question in answers: 32 hex digits.
    pub id: String,
    /// Who asks to call.
    pub caller: Caller,
    /// The full name of the tool.
    pub tool: String,
    /// The input as JSON text, controls and bidi overrides escaped, cut past 8 KiB
    /// (saying how much is not shown).
    pub input: String,
    /// The tool's risk level.
    pub risk: Risk,
    /// Why the call needs approval.
    pub reason: String,
    /// When it was asked, in milliseconds since the Unix epoch.
    pub asked_ms: u64,
    /// When the call stops waiting.
    pub expires_ms: u64,
}

/// An operator's answer to a waiting call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperatorAnswer {
    /// Who answered (the operator's name in `toolhost.toml`).
    pub operator: String,
    /// Whether the call may run.
    pub approved: bool,
    /// The reason given, at most [`MAX_REASON`] bytes; it reaches the caller.
    pub reason: Option<String>,
}

impl OperatorAnswer {
    fn into_approval(self) -> Approval {
        Approval::ByOperator { operator: self.operator, approved: self.approved, reason: self.reason }
    }
}

/// An answer as the store keeps it: until its question's time is past.
#[derive(Serialize, Deserialize)]
struct StoredAnswer {
    answer: OperatorAnswer,
    expires_ms: u64,
}

/// Why an operator's answer was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// No call waits under that id: it was never asked, has ended or has expired.
    #[error("no call is waiting for approval under this id (it ended, expired or was answered elsewhere)")]
    NotWaiting,
    /// Someone answered first.
    #[error("this call was already answered")]
    AlreadyAnswered,
    /// The reason is longer than [`MAX_REASON`].
    #[error("the reason is longer than {MAX_REASON} bytes")]
    ReasonTooLong,
    /// The store could not be read or written.
    #[error("the approvals store cannot be reached: {0}")]
    Store(String),
}

/// The calls of this process waiting for an answer, each with where to hand it.
#[derive(Default)]
pub(super) struct Waiting {
    calls: Mutex<HashMap<String, oneshot::Sender<OperatorAnswer>>>,
}

impl Waiting {
    fn calls(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<OperatorAnswer>>> {
        // A poisoned lock only means a holder panicked; the map is intact.
        self.calls.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Takes a waiting call's question out of the store and this process when the call
/// stops waiting, however it stops (answered, timed out, or dropped with its call).
struct Withdraw {
    host: ToolHost,
    id: String,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        self.host.waiting.calls().remove(&self.id);
        let (host, id) = (self.host.clone(), std::mem::take(&mut self.id));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                // The answer stays until the question's time is past: while it is there,
                // no second answer can be taken for this call on any replica.
                let writes = vec![(question_key(&id), Write::Delete)];
                if let Err(problem) = host.storage.write(&bucket(), writes).await {
                    tracing::warn!(
                        "cannot withdraw an approval question: {}",
                        crate::text::Escaped(&problem.to_string())
                    );
                }
            });
        }
    }
}

impl ToolHost {
    /// The approver that asks an operator at the console and waits for the answer, at
    /// most [`APPROVAL_WAIT`].
    pub fn operator_approver(&self) -> ApprovalHook {
        let host = self.clone();
        Arc::new(move |request| {
            let host = host.clone();
            async move { host.ask_operator(request).await }.boxed()
        })
    }

    /// Puts `request` before the operators and waits for one to answer.
    pub async fn ask_operator(&self, request: ApprovalRequest) -> Approval {
        let mut id = [0u8; 16];
        if getrandom::fill(&mut id).is_err() {
            return Approval::Denied { reason: "the console cannot name the question (no randomness)".into() };
        }
        let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let asked = SystemTime::now();
        let question = waiting_approval(&id, &request, asked);
        let (answer_to, mut answered) = oneshot::channel();
        {
            let mut calls = self.waiting.calls();
            if calls.len() >= MAX_WAITING {
                return Approval::Denied {
                    reason: format!("{MAX_WAITING} calls already wait for the console; try again later"),
                };
            }
            calls.insert(id.clone(), answer_to);
        }
        let _withdraw = Withdraw { host: self.clone(), id: id.clone() };
        let stored = serde_json::to_vec(&question).unwrap_or_default();
        if let Err(problem) = self.storage.write(&bucket(), vec![(question_key(&id), Write::Set(stored))]).await {
            tracing::warn!("cannot put an approval question: {}", crate::text::Escaped(&problem.to_string()));
            return Approval::Denied {
                reason: "the console cannot hold the question: the store is not reachable".into(),
            };
        }
        let deadline = tokio::time::Instant::now() + APPROVAL_WAIT;
        loop {
            tokio::select! {
                answer = &mut answered => match answer {
                    Ok(answer) => return answer.into_approval(),
                    Err(_) => return Approval::Denied { reason: "the console's answer was lost".into() },
                },
                _ = tokio::time::sleep_until(deadline) => {
                    return Approval::Denied { reason: "no operator answered within 10 minutes".into() };
                }
                _ = tokio::time::sleep(POLL) => {
                    // An answer given in this process is handed over, and the one who
                    // took this call's sender is handing it: wait for that instead.
                    if let Some(answer) = self.answer_from_store(&id).await
                        && self.waiting.calls().remove(&id).is_some()
                    {
                        return answer.into_approval();
                    }
                }
            }
        }
    }

    async fn answer_from_store(&self, id: &str) -> Option<OperatorAnswer> {
        let stored = self.storage.get(&bucket(), &answer_key(id)).await.ok()??;
        serde_json::from_slice::<StoredAnswer>(&stored).ok().map(|stored| stored.answer)
    }

    /// The calls waiting for an operator on every replica of the store, oldest first.
    /// Questions past their time (left by a replica that died) are deleted on the way.
    pub async fn waiting_approvals(&self) -> Result<Vec<WaitingApproval>, AnswerError> {
        let entries = self.storage.entries(&bucket()).await.map_err(store_error)?;
        let now = unix_ms(SystemTime::now());
        let answered: std::collections::HashSet<&str> =
            entries.iter().filter_map(|(key, _)| key.strip_prefix("a:")).collect();
        // An answer is kept as long as its question could be answered, and a little more.
        let past = |expires_ms: u64| expires_ms.saturating_add(CLOCK_SKEW_MS) < now;
        let mut stale: Vec<String> = entries
            .iter()
            .filter(|(key, value)| {
                key.starts_with("a:")
                    && serde_json::from_slice::<StoredAnswer>(value).map_or(true, |stored| past(stored.expires_ms))
            })
            .map(|(key, _)| key.clone())
            .collect();
        let mut waiting = Vec::new();
        for (key, value) in &entries {
            let Some(id) = key.strip_prefix("q:") else { continue };
            match serde_json::from_slice::<WaitingApproval>(value) {
                Ok(question) if past(question.expires_ms) => stale.push(question_key(id)),
                Ok(question) if question.expires_ms < now => {}
                Ok(question) if !answered.contains(id) => waiting.push(question),
                Ok(_) => {}
                Err(_) => stale.push(question_key(id)),
            }
        }
        if !stale.is_empty() {
            let writes = stale.into_iter().map(|key| (key, Write::Delete)).collect();
            if let Err(problem) = self.storage.write(&bucket(), writes).await {
                tracing::warn!(
                    "cannot forget expired approval questions: {}",
                    crate::text::Escaped(&problem.to_string())
                );
            }
        }
        waiting.sort_by_key(|question| question.asked_ms);
        Ok(waiting)
    }

    /// Answers the waiting call `id`, once: whoever answers first, on any replica,
    /// decides; the answer reaches the call on whichever replica it waits.
    pub async fn answer_approval(&self, id: &str, answer: OperatorAnswer) -> Result<(), AnswerError> {
        if answer.reason.as_ref().is_some_and(|reason| reason.len() > MAX_REASON) {
            return Err(AnswerError::ReasonTooLong);
        }
        if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(AnswerError::NotWaiting);
        }
        let stored = self.storage.get(&bucket(), &question_key(id)).await.map_err(store_error)?;
        let question: WaitingApproval =
            stored.and_then(|stored| serde_json::from_slice(&stored).ok()).ok_or(AnswerError::NotWaiting)?;
        let expires = UNIX_EPOCH + Duration::from_millis(question.expires_ms);
        if expires < SystemTime::now() {
            return Err(AnswerError::NotWaiting);
        }
        // The answer is stored only where none is yet, in one step for every replica: it
        // is at once the claim that makes it the only answer and what the waiting
        // replica reads.
        let stored = StoredAnswer { answer: answer.clone(), expires_ms: question.expires_ms };
        let stored = serde_json::to_vec(&stored).unwrap_or_default();
        if !self.storage.set_if_absent(&bucket(), &answer_key(id), stored).await.map_err(store_error)? {
            return Err(AnswerError::AlreadyAnswered);
        }
        let local = self.waiting.calls().remove(id);
        if let Some(answer_to) = local {
            // The call ended a moment ago (answered by its client, say): no one was told.
            answer_to.send(answer).map_err(|_| AnswerError::NotWaiting)?;
        }
        Ok(())
    }
}

fn store_error(problem: impl std::fmt::Display) -> AnswerError {
    AnswerError::Store(problem.to_string())
}

fn waiting_approval(id: &str, request: &ApprovalRequest, asked: SystemTime) -> WaitingApproval {
    WaitingApproval {
        id: id.to_owned(),
        caller: request.caller.clone(),
        tool: request.tool.clone(),
        input: request.input_shown(INPUT_SHOWN),
        risk: request.risk,
        reason: request.reason.clone(),
        asked_ms: unix_ms(asked),
        expires_ms: unix_ms(asked + APPROVAL_WAIT),
    }
}
