//! What one call brings and what it ends in: its options, its report, and the record written when it ends (or is dropped).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use super::ToolHost;
use super::audit::CallRecord;
use crate::client::{ClientHook, ClientRequest, ClientUse};
use crate::content::Content;
use crate::error::CallError;
use crate::policy::{ApprovalHook, ApprovalRecord, Caller};
use crate::progress::ProgressHook;
use crate::registry::ToolEntry;
use crate::sandbox::{CapturedOutput, DeniedRequest};
use crate::tool::{OutputForm, SourceKind};

/// One call of a batch.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The caller's id for this call, echoed in its result and audit record.
    pub id: String,
    /// The tool's name, in any accepted form.
    pub name: String,
    /// The tool's input (or, under an exported name, its arguments).
    pub input: Value,
}

/// What one call brings beyond its caller, name and input.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// The caller's id for this call (batch calls), echoed in its report and audit record.
    pub call_id: Option<String>,
    /// Who approves this call when it needs approval and the host has no
    /// [approval hook](crate::ToolHostBuilder::approval_hook) of its own: for an MCP call,
    /// the person behind the client. Without either, such a call is denied.
    pub approver: Option<ApprovalHook>,
    /// Where the tool's progress reports (`host.progress`) go; without it they are
    /// dropped.
    pub progress: Option<ProgressHook>,
    /// The client behind the call, which a tool granted its powers may ask (the person,
    /// its model) and log to; without it such requests answer `unsupported`.
    pub client: Option<ClientHook>,
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("call_id", &self.call_id)
            .field("approver", &self.approver.is_some())
            .field("progress", &self.progress.is_some())
            .field("client", &self.client.is_some())
            .finish()
    }
}

/// Everything known about one call, success or not. Serializes as the `--report` JSON
/// of `toolhost call`.
#[derive(Debug, Clone)]
pub struct CallReport {
    /// Who called.
    pub caller: Caller,
    /// The caller's id for this call (batch calls).
    pub call_id: Option<String>,
    /// The name the caller used.
    pub requested: String,
    /// The full name of the tool that answered, when one was found.
    pub tool: Option<String>,
    /// Content hash of the component that answered.
    pub component_hash: Option<String>,
    /// What kind of tool answered, when one was found.
    pub source: Option<SourceKind>,
    /// The upstream MCP server that answered, for its tools.
    pub upstream: Option<String>,
    /// The validated output, or why there is none.
    pub outcome: Result<Value, CallError>,
    /// What the output is: plain JSON, or content blocks an MCP client gets as they are.
    pub output_form: OutputForm,
    /// Fuel the guest burned (0 when it never ran).
    pub fuel_consumed: u64,
    /// Wall-clock time of the whole call, refusals included.
    pub duration: Duration,
    /// Bytes of input JSON handed to the tool.
    pub input_bytes: u64,
    /// Bytes of output JSON the tool returned.
    pub output_bytes: u64,
    /// What the guest printed and logged.
    pub captured: CapturedOutput,
    /// Outgoing HTTP requests the component's allow-list refused during the call.
    pub denied_requests: Vec<DeniedRequest>,
    /// Why the tool the name meant is hidden from the caller, who was told it does not
    /// exist (for the operator: the audit record says `permission_denied`).
    pub hidden_because: Option<String>,
    /// Why the call needed approval, who answered and what, when it needed it.
    pub approval: Option<ApprovalRecord>,
    /// Content blocks the tool showed beside its output, in order.
    pub content: Vec<Content>,
    /// What the tool asked of its client (elicitation, sampling), the first
    /// [`MAX_REQUESTS_PER_CALL`](crate::MAX_REQUESTS_PER_CALL).
    pub client_requests: Vec<ClientRequest>,
    /// Requests past those, refused without reaching the client.
    pub client_requests_over: u64,
    /// Log lines the tool sent to its client.
    pub client_log_lines: u64,
}

impl CallReport {
    /// The call's result as `provider` takes it back (OpenAI's tool message, Anthropic's
    /// `tool_result`, without the provider's call id); `None` for MCP, whose clients get
    /// the server's answer. See [`crate::definitions::tool_result`].
    pub fn tool_result(&self, provider: crate::ExportFormat) -> Option<Value> {
        crate::definitions::tool_result(provider, self.outcome.as_ref(), &self.content)
    }

    pub(super) fn new(caller: Caller, call_id: Option<String>, requested: String) -> Self {
        CallReport {
            caller,
            call_id,
            requested,
            tool: None,
            component_hash: None,
            source: None,
            upstream: None,
            outcome: Ok(Value::Null),
            output_form: OutputForm::Json,
            fuel_consumed: 0,
            duration: Duration::ZERO,
            input_bytes: 0,
            output_bytes: 0,
            captured: CapturedOutput::default(),
            denied_requests: Vec::new(),
            hidden_because: None,
            approval: None,
            content: Vec::new(),
            client_requests: Vec::new(),
            client_requests_over: 0,
            client_log_lines: 0,
        }
    }

    /// The report of a call refused before it reached a host, e.g. by a front end
    /// whose input is not JSON.
    pub fn refused(caller: Caller, requested: String, input_bytes: u64, error: CallError) -> Self {
        CallReport { outcome: Err(error), input_bytes, ..CallReport::new(caller, None, requested) }
    }
}

impl serde::Serialize for CallReport {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (output, error) = match &self.outcome {
            Ok(output) => (output.clone(), Value::Null),
            Err(e) => (Value::Null, json!({ "kind": e.kind(), "message": e.to_string() })),
        };
        json!({
            "tool": self.tool,
            "component_hash": self.component_hash,
            "source": self.source,
            "upstream": self.upstream,
            "output": output,
            "error": error,
            "fuel_consumed": self.fuel_consumed,
            "duration_us": u64::try_from(self.duration.as_micros()).unwrap_or(u64::MAX),
            "input_bytes": self.input_bytes,
            "output_bytes": self.output_bytes,
            "captured": self.captured,
            "denied_requests": self.denied_requests,
            "content": self.content,
            "client_requests": self.client_requests,
        })
        .serialize(serializer)
    }
}

impl CallReport {
    /// The audit record of this call, which started at `started`.
    fn audit_record(&self, started: SystemTime) -> CallRecord {
        let report = self;
        let (outcome, error) = match (&report.outcome, &report.hidden_because) {
            (Err(_), Some(reason)) => {
                ("permission_denied".to_owned(), Some(format!("hidden from the caller: {reason}")))
            }
            (Ok(_), _) => ("ok".to_owned(), None),
            (Err(error), None) => (error.kind().to_string(), Some(error.to_string())),
        };
        CallRecord {
            timestamp_ms: started.duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0),
            call_id: report.call_id.clone(),
            caller: report.caller.clone(),
            requested: report.requested.clone(),
            tool: report.tool.clone(),
            component_hash: report.component_hash.clone(),
            source: report.source,
            upstream: report.upstream.clone(),
            duration_us: report.duration.as_micros() as u64,
            fuel_consumed: report.fuel_consumed,
            outcome,
            error,
            input_bytes: report.input_bytes,
            output_bytes: report.output_bytes,
            dropped_log_bytes: report.captured.dropped_bytes,
            denied_requests: report.denied_requests.clone(),
            approval: report.approval.clone(),
            content_blocks: report.content.len(),
            client_requests: report.client_requests.clone(),
            client_requests_over: report.client_requests_over,
        }
    }
}

/// What a call that reached its tool used, for its report.
#[derive(Default)]
pub(super) struct Usage {
    pub fuel_consumed: u64,
    pub output_bytes: u64,
    pub captured: CapturedOutput,
    pub denied_requests: Vec<DeniedRequest>,
    pub approval: Option<ApprovalRecord>,
    pub client: ClientUse,
}

/// Records the call when it ends, and also when its future is dropped first: in the
/// call's `tool_call` span, the metrics and the audit log.
///
/// It holds what the report is made of, borrowed, and makes the [`CallReport`] only
/// when the call ends and someone reads it: the caller that asked for it, the metrics
/// or the audit log. A call whose caller takes only the output, on a host that keeps
/// neither, makes none (`docs/performance.md`).
pub(super) struct Recorder<'c> {
    host: &'c ToolHost,
    span: tracing::Span,
    /// The call's one reading of the clock at its start: its wall-clock time, needed
    /// only by an audit record, is derived from it when one is written.
    started: Instant,
    caller: &'c Caller,
    call_id: Option<&'c str>,
    requested: &'c str,
    /// The tool that answers, once it is found.
    tool: Option<&'c ToolEntry>,
    /// The tool the name meant, hidden from the caller, and why.
    hidden: Option<(String, String)>,
    /// Set by the tool's source before it runs (`RunContext::input_bytes`).
    input_bytes: AtomicU64,
    ended: bool,
}

impl<'c> Recorder<'c> {
    /// The recorder of a call of `requested` by `caller`, started now.
    pub fn start(
        host: &'c ToolHost,
        span: tracing::Span,
        caller: &'c Caller,
        call_id: Option<&'c str>,
        requested: &'c str,
    ) -> Self {
        Recorder {
            host,
            span,
            started: Instant::now(),
            caller,
            call_id,
            requested,
            tool: None,
            hidden: None,
            input_bytes: AtomicU64::new(0),
            ended: false,
        }
    }

    /// Where the tool's source puts the size of the input it was handed.
    pub fn input_bytes(&self) -> &AtomicU64 {
        &self.input_bytes
    }

    /// The tool that answers the call.
    pub fn answered_by(&mut self, entry: &'c ToolEntry) {
        self.tool = Some(entry);
    }

    /// The tool the name meant is hidden from the caller, for `reason`.
    pub fn hidden(&mut self, tool: String, reason: String) {
        self.hidden = Some((tool, reason));
    }

    /// Records the call as it ended, and returns its report.
    pub fn finish(mut self, outcome: Result<Value, CallError>, usage: Usage) -> CallReport {
        let duration = self.end(&outcome, usage.fuel_consumed);
        let report = self.report(outcome, usage, duration);
        self.keep(&report);
        report
    }

    /// Records the call as it ended, and returns its outcome: its report is made only
    /// where the host keeps it.
    pub fn finish_unreported(mut self, outcome: Result<Value, CallError>, usage: Usage) -> Result<Value, CallError> {
        let duration = self.end(&outcome, usage.fuel_consumed);
        if !self.host.keeps_reports() {
            return outcome;
        }
        let report = self.report(outcome, usage, duration);
        self.keep(&report);
        report.outcome
    }

    /// The call's end in its span and the log; its duration.
    fn end(&mut self, outcome: &Result<Value, CallError>, fuel: u64) -> Duration {
        self.ended = true;
        let duration = self.started.elapsed();
        let kind = outcome.as_ref().map_or_else(|e| e.kind().as_str(), |_| "ok");
        self.span.record("outcome", kind);
        tracing::info!(target: "toolhost::call", parent: &self.span, duration_us = duration.as_micros() as u64, fuel, "call finished");
        duration
    }

    /// The report in the metrics and the audit log, where the host keeps them.
    fn keep(&self, report: &CallReport) {
        if let Some(metrics) = &self.host.metrics {
            metrics.record_call(report);
        }
        if self.host.audit.is_active() {
            let started_at = SystemTime::now().checked_sub(report.duration).unwrap_or(UNIX_EPOCH);
            self.host.audit.record(report.audit_record(started_at));
        }
    }

    /// The call's report: the parts held, the tool that answered, and how the call ended.
    fn report(&mut self, outcome: Result<Value, CallError>, usage: Usage, duration: Duration) -> CallReport {
        let mut report =
            CallReport::new(self.caller.clone(), self.call_id.map(str::to_owned), self.requested.to_owned());
        if let Some(entry) = self.tool {
            report.tool = Some(entry.full_name.clone());
            report.component_hash = entry.source.hash().map(str::to_owned);
            report.source = Some(entry.source.kind());
            report.upstream = entry.source.upstream().map(str::to_owned);
            report.output_form = entry.def().output_form();
        }
        if let Some((tool, reason)) = self.hidden.take() {
            report.tool = Some(tool);
            report.hidden_because = Some(reason);
        }
        report.outcome = outcome;
        report.duration = duration;
        report.input_bytes = self.input_bytes.load(Ordering::Relaxed);
        report.content = usage.client.content;
        report.client_requests = usage.client.requests;
        report.client_requests_over = usage.client.requests_over;
        report.client_log_lines = usage.client.log_lines;
        report.fuel_consumed = usage.fuel_consumed;
        report.output_bytes = usage.output_bytes;
        report.captured = usage.captured;
        report.denied_requests = usage.denied_requests;
        report.approval = usage.approval;
        report
    }
}

impl ToolHost {
    /// Whether anything keeps a call's report beyond its caller: the metrics, the audit
    /// log.
    fn keeps_reports(&self) -> bool {
        self.metrics.is_some() || self.audit.is_active()
    }
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        let tool = self.tool.map_or(self.requested, |entry| entry.full_name.as_str()).to_owned();
        tracing::debug!(target: "toolhost::call", caller = %self.caller, tool = ?tool, "call cancelled");
        let outcome = Err(CallError::Cancelled { tool });
        let duration = self.end(&outcome, 0);
        if self.host.keeps_reports() {
            let report = self.report(outcome, Usage::default(), duration);
            self.keep(&report);
        }
    }
}
