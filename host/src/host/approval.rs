//! Approval of a call that needs it: the operator's hook first, else the call's own approver (the person behind an MCP client, the terminal).

use serde_json::Value;

use super::ToolHost;
use crate::error::CallError;
use crate::policy::{Approval, ApprovalHook, ApprovalRecord, ApprovalRequest, Approver, Caller};
use crate::registry::ToolEntry;
use crate::tool::Risk;

impl ToolHost {
    /// A call that needs approval runs only when its approver says so: the host's
    /// approval hook, else the call's own approver; without either it never runs. The
    /// record says who answered what, for the audit log.
    pub(super) async fn check_approval(
        &self,
        caller: &Caller,
        entry: &ToolEntry,
        input: &Value,
        reason: String,
        call_approver: Option<&ApprovalHook>,
    ) -> (Result<(), CallError>, ApprovalRecord) {
        let asked_because = reason.clone();
        let mut record = ApprovalRecord {
            asked_because,
            answered_by: Approver::Nobody,
            approved: false,
            operator: None,
            denied_because: None,
        };
        let Some((approve, answered_by)) = self.approver_of(call_approver) else {
            let refusal = format!("{reason}, and no approval hook is configured");
            record.denied_because = Some("no one could be asked".to_owned());
            return (Err(denied(caller, entry, refusal)), record);
        };
        record.answered_by = answered_by;
        match approve(approval_request(caller, (entry, self.risk_of(entry)), input.clone(), reason)).await {
            Approval::Approved => {
                record.approved = true;
                (Ok(()), record)
            }
            Approval::Denied { reason } => {
                record.denied_because = Some(reason.clone());
                (Err(denied(caller, entry, format!("approval denied: {reason}"))), record)
            }
            Approval::ByOperator { operator, approved, reason } => {
                record.answered_by = Approver::Console;
                record.operator = Some(operator.clone());
                record.approved = approved;
                if approved {
                    return (Ok(()), record);
                }
                let why = match reason {
                    Some(reason) => format!("denied by the operator {operator}: {reason}"),
                    None => format!("denied by the operator {operator}"),
                };
                record.denied_because = Some(why.clone());
                (Err(denied(caller, entry, format!("approval {why}"))), record)
            }
        }
    }

    /// [`Self::approver`], and who that is.
    fn approver_of<'a>(&'a self, call_approver: Option<&'a ApprovalHook>) -> Option<(&'a ApprovalHook, Approver)> {
        match (&self.approval, call_approver) {
            (Some(operator), _) => Some((operator, Approver::Operator)),
            (None, Some(caller)) => Some((caller, Approver::Caller)),
            (None, None) => None,
        }
    }

    /// Who decides a call that needs approval: the operator's hook first, so that a
    /// client never approves what the operator decides.
    fn approver<'a>(&'a self, call_approver: Option<&'a ApprovalHook>) -> Option<&'a ApprovalHook> {
        self.approver_of(call_approver).map(|(hook, _)| hook)
    }

    /// What the call's own approver ([`CallOptions::approver`]) would be asked before a
    /// call of `name` with `input` by `caller` runs; `None` when it would not be asked
    /// (no approval needed, a host hook decides, or no such tool for the caller). Lets a
    /// front end ask ahead, as the stateless MCP revision must.
    pub fn pending_approval(&self, caller: &Caller, name: &str, input: &Value) -> Option<ApprovalRequest> {
        if self.approver(None).is_some() {
            return None;
        }
        let snapshot = self.snapshot.load();
        let (entry, form, permit) = self.resolve_for(&snapshot, caller, name).ok()?;
        let input = super::call::tool_input(entry, form, input.clone()).unwrap_or_else(|_| input.clone());
        Some(approval_request(caller, (entry, self.risk_of(entry)), input, permit.approval?))
    }

    /// The risk of `entry` that approvers are told: its source's, under the operator's
    /// `[[tool]]` entries.
    fn risk_of(&self, entry: &ToolEntry) -> Risk {
        self.policy.load().tool_policy(&entry.full_name, &entry.def().policy).risk
    }

    /// Whether a call of `name` by `caller` is known now to run without asking the
    /// call's own approver ([`CallOptions::approver`]): the tool resolves for the caller
    /// and its policy needs no approval (or the host's hook decides approvals), and the
    /// tool may use none of the client's powers ([`CallOptions::client`]). A tool not
    /// resolved (not loaded yet, hidden, unknown) is not known to.
    pub fn runs_without_call_approver(&self, caller: &Caller, name: &str) -> bool {
        let snapshot = self.snapshot.load();
        let Some((entry, _)) = snapshot.find(name) else { return false };
        let Ok(permit) = self.access(caller, entry) else { return false };
        let asks_client = !entry.source.client_powers().intersection(permit.client).is_empty();
        !asks_client && (permit.approval.is_none() || self.approver(None).is_some())
    }
}

fn approval_request(
    caller: &Caller,
    (entry, risk): (&ToolEntry, Risk),
    input: Value,
    reason: String,
) -> ApprovalRequest {
    ApprovalRequest { caller: caller.clone(), tool: entry.full_name.clone(), input, risk, reason }
}

fn denied(caller: &Caller, entry: &ToolEntry, reason: String) -> CallError {
    CallError::PermissionDenied { caller: caller.to_string(), tool: entry.full_name.clone(), reason }
}
