//! Approval of a call by someone other than the caller: a person, a second model, a rules engine.
//!
//! Approval of a call by someone other than the caller: a person, a second model, a
//! rules engine.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;

use crate::policy::Caller;

use crate::tool::Risk;

/// How long a person may take to answer an approval question, wherever it is asked.
pub const APPROVAL_WAIT: Duration = Duration::from_secs(600);

/// What an approval hook is asked.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ApprovalRequest {
    /// Who asks to call.
    pub caller: Caller,
    /// The full name of the tool.
    pub tool: String,
    /// The input the tool would get.
    pub input: Value,
    /// The tool's risk level.
    pub risk: Risk,
    /// Why the call needs approval (the tool requires it, or its risk is above what
    /// the caller's policy lets through unasked).
    pub reason: String,
}

impl ApprovalRequest {
    /// The question a person is asked, the same on every front end: who asks to run
    /// what, at which risk, why it needs approval, and the input — escaped (controls,
    /// bidi overrides), and past `input_shown` bytes cut with `NOT SHOWN: N more bytes`,
    /// never silently.
    pub fn question(&self, input_shown: usize) -> String {
        let input = self.input_shown(input_shown);
        format!(
            "{} asks to run {} (risk: {}): {}.\nInput: {input}",
            crate::text::for_terminal(&self.caller.to_string()),
            self.tool,
            self.risk,
            crate::text::for_terminal(&self.reason),
        )
    }

    /// The input as the person asked sees it: JSON text, escaped (controls, bidi
    /// overrides), past `input_shown` bytes cut with `NOT SHOWN: N more bytes`.
    pub fn input_shown(&self, input_shown: usize) -> String {
        let input = crate::text::for_terminal(&self.input.to_string()).into_owned();
        crate::text::bounded(input, input_shown).replace(" … (", " … (NOT SHOWN: ")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
/// The answer of an approval hook.
pub enum Approval {
    /// The call may run.
    Approved,
    /// The call is refused; `reason` reaches the caller.
    #[allow(missing_docs)]
    Denied { reason: String },
    /// An operator answered at the console: who, whether the call may run, and the
    /// reason they gave (which reaches the caller on a denial).
    #[allow(missing_docs)]
    ByOperator { operator: String, approved: bool, reason: Option<String> },
}

/// Where a call's approval question goes when no operator hook decides it
/// (`[console] approve_via`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApproveVia {
    /// The person behind the calling MCP client, through an elicitation form; a client
    /// that cannot show one is denied.
    #[default]
    Client,
    /// The operator's console: approval no longer depends on what the client can do.
    Console,
    /// Both at once: the first answer decides, and the other question is withdrawn.
    Both,
}

/// Decides calls that need approval: of tools whose manifest sets `requires_approval`,
/// or above the risk a policy rule's `approve_above` lets through (a human in the loop,
/// a second model, a rules engine…).
pub type ApprovalHook = Arc<dyn Fn(ApprovalRequest) -> BoxFuture<'static, Approval> + Send + Sync>;

/// Who answered a call's approval question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Approver {
    /// The host's own approval hook: the operator's decision.
    Operator,
    /// The call's own approver: the person behind the caller's client (an MCP
    /// elicitation) or at the terminal.
    Caller,
    /// An operator at the console ([`ApprovalRecord::operator`] says who).
    Console,
    /// No one could be asked: the call was refused for it.
    Nobody,
}

/// How a call's approval went, for the audit record: why it was asked, who answered, and
/// the answer (with the denial's reason).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ApprovalRecord {
    /// Why the call needed approval.
    pub asked_because: String,
    /// Who answered.
    pub answered_by: Approver,
    /// Whether the call was let through.
    pub approved: bool,
    /// The operator who answered at the console.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// The reason of a denial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub denied_because: Option<String>,
}
