//! The call pipeline: one straight line from a name and an input to a validated output,
//! and the report of everything that happened on the way.
//!
//! ```text
//! resolve   the snapshot the call starts on, by any name form, as   NotFound (+ close matches it may see;
//!           the caller may see it (policy, session tool set)         a hidden tool is not found)
//! approve   the host's approval hook, else the call's approver      PermissionDenied
//! arguments an exported name's arguments to the tool's input       InputInvalid
//! nesting   at most MAX_INPUT_DEPTH levels of arrays and objects     InputInvalid
//! validate  input against the tool's input schema                  InputInvalid (+ JSON pointers)
//! run       a fresh sandbox, toolbox.call(tool, input-json)        Failed | Trap | Timeout | OutOfFuel | MemoryLimit | Host
//! check     output size, then output against the output schema    OutputTooLarge | OutputInvalid
//! commit    the call's storage writes, all together                 Failed (quota, lease) | Host
//! record    the audit record, success or not
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Value, json};
use tracing::Instrument;

use crate::contract::GuestToolError;
use crate::error::{CallError, Violation};
use crate::host::ToolHost;
use crate::host::audit::CallRecord;
use crate::names::NameForm;
use crate::policy::{Approval, ApprovalHook, ApprovalRequest, Caller};
use crate::progress::ProgressHook;
use crate::registry::{Snapshot, ToolEntry, ToolSource};
use crate::sandbox::keyvalue;
use crate::sandbox::outbound::DeniedRequest;
use crate::sandbox::output::CapturedOutput;
use crate::sandbox::{self, Operation, Returned, Services};
use crate::schema::{ArgumentShape, WRAPPED_INPUT};
use crate::sources::component::LoadedComponent;
use crate::sources::component::code::CodeKind;
use crate::sources::http::{HttpCallFailure, HttpTool};
use crate::sources::native::NativeTool;
use crate::storage::{CommitError, Transaction};
use crate::text::{Escaped, MAX_MESSAGE, bounded};
use crate::tool::OutputForm;
use crate::tool::SourceKind;
use crate::tool::ToolError;

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
}

impl std::fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallOptions")
            .field("call_id", &self.call_id)
            .field("approver", &self.approver.is_some())
            .field("progress", &self.progress.is_some())
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
}

impl CallReport {
    fn new(caller: Caller, call_id: Option<String>, requested: String) -> Self {
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
        })
        .serialize(serializer)
    }
}

impl ToolHost {
    /// Calls a tool as the local caller and returns its validated output.
    ///
    /// `name` may be a full name (`math/add`), a stdlib tool's bare name, or an exported
    /// name (`math__add`, `math.add`). Under an exported name the input is the
    /// arguments object a consumer of [`ToolHost::export`] sends: for a tool whose input
    /// travels wrapped ([`ArgumentShape::Wrapped`]), the tool gets its `input` property.
    pub async fn call(&self, name: &str, input: Value) -> Result<Value, CallError> {
        self.call_as(&Caller::local(), name, input).await
    }

    /// Calls a tool on behalf of `caller` and returns its validated output.
    pub async fn call_as(&self, caller: &Caller, name: &str, input: Value) -> Result<Value, CallError> {
        self.call_detailed_as(caller, None, name, input).await.outcome
    }

    /// Calls a tool as the local caller and reports everything about the call.
    pub async fn call_detailed(&self, name: &str, input: Value) -> CallReport {
        self.call_detailed_as(&Caller::local(), None, name, input).await
    }

    /// Calls a tool on behalf of `caller` and reports everything about the call. Every
    /// attempt, refused or failed, produces an audit record; so does a call whose future
    /// is dropped before it ends (kind `cancelled`): the guest stops at its next epoch
    /// tick and its instance slot is free at once.
    pub async fn call_detailed_as(
        &self,
        caller: &Caller,
        call_id: Option<&str>,
        name: &str,
        input: Value,
    ) -> CallReport {
        let options = CallOptions { call_id: call_id.map(str::to_owned), ..CallOptions::default() };
        self.call_with(caller, name, input, &options).await
    }

    /// Calls a tool on behalf of `caller` with a call's own approver and progress sink,
    /// and reports everything about the call (see [`ToolHost::call_detailed_as`]).
    pub async fn call_with(&self, caller: &Caller, name: &str, input: Value, options: &CallOptions) -> CallReport {
        let span = tracing::info_span!(
            "tool_call",
            agent = %caller.agent,
            session = caller.session.as_deref(),
            tool = name,
            request_id = options.call_id.as_deref(),
            outcome = tracing::field::Empty,
        );
        let mut recorder = Recorder {
            host: self,
            span: span.clone(),
            started_at: SystemTime::now(),
            started: Instant::now(),
            report: Some(CallReport::new(caller.clone(), options.call_id.clone(), name.to_owned())),
        };
        // While a server starts, a tool not loaded yet is waited for, not "not found".
        self.first_load.wait_for(name).await;
        let snapshot = self.snapshot.load_full();
        let report = recorder.report.as_mut().expect("the report is taken only when the call ends");
        report.outcome = self.run_call(&snapshot, caller, name, input, options, report).instrument(span).await;
        recorder.finish()
    }

    /// Runs calls concurrently (bounded by the host's concurrency limit) and returns one
    /// result per call, in order. Never fails as a whole: each report holds its own
    /// success or error.
    pub async fn call_many(&self, caller: &Caller, calls: Vec<ToolCall>) -> Vec<CallReport> {
        use futures::StreamExt;
        let limit = self.call_slots.available_permits().max(1);
        futures::stream::iter(calls)
            .map(|call| async move { self.call_detailed_as(caller, Some(&call.id), &call.name, call.input).await })
            .buffered(limit)
            .collect()
            .await
    }

    async fn run_call(
        &self,
        snapshot: &Snapshot,
        caller: &Caller,
        name: &str,
        input: Value,
        options: &CallOptions,
        report: &mut CallReport,
    ) -> Result<Value, CallError> {
        let (entry, form, permit) = self.resolve_for(snapshot, caller, name).map_err(|unseen| {
            if let Some((tool, reason)) = unseen.hidden {
                report.tool = Some(tool);
                report.hidden_because = Some(reason);
            }
            unseen.error
        })?;
        report.tool = Some(entry.full_name.clone());
        report.component_hash = entry.source.hash().map(str::to_owned);
        report.source = Some(entry.source.kind());
        report.upstream = entry.source.upstream().map(str::to_owned);
        let def = entry.def();
        report.output_form = def.output_form;
        let input = tool_input(entry, form, input)?;
        if let Some(violation) = crate::schema::nesting_violation(&input) {
            return Err(CallError::InputInvalid { tool: entry.full_name.clone(), violations: vec![violation] });
        }
        if let Some(reason) = permit.approval {
            self.check_approval(caller, entry, &input, reason, options.approver.as_ref()).await?;
        }
        def.input_schema
            .check(&input)
            .map_err(|violations| CallError::InputInvalid { tool: entry.full_name.clone(), violations })?;
        let _slot = self.call_slots.acquire().await.map_err(|_| CallError::Host {
            tool: entry.full_name.clone(),
            message: "the host is shutting down".into(),
        })?;
        let (produced, pending) = match &entry.source {
            ToolSource::Component { component, index } => {
                self.run_component(entry, component, *index, &input, options.progress.as_ref(), report).await?
            }
            ToolSource::Native(tool) => (run_native(entry, tool, input, report).await?, None),
            ToolSource::Http(tool) => (self.run_http(entry, tool, &input, report).await?, None),
        };
        let output = check_output(entry, produced, report)?;
        if let (Some(transaction), ToolSource::Component { component, .. }) = (pending, &entry.source) {
            commit(entry, component, transaction).await?;
        }
        Ok(output)
    }

    /// A call that needs approval runs only when its approver says so: the host's
    /// approval hook, else the call's own approver; without either it never runs.
    async fn check_approval(
        &self,
        caller: &Caller,
        entry: &ToolEntry,
        input: &Value,
        reason: String,
        call_approver: Option<&ApprovalHook>,
    ) -> Result<(), CallError> {
        let Some(approve) = self.approver(call_approver) else {
            return Err(denied(caller, entry, format!("{reason}, and no approval hook is configured")));
        };
        match approve(approval_request(caller, entry, input.clone(), reason)).await {
            Approval::Approved => Ok(()),
            Approval::Denied { reason } => Err(denied(caller, entry, format!("approval denied: {reason}"))),
        }
    }

    /// Who decides a call that needs approval: the operator's hook first, so that a
    /// client never approves what the operator decides.
    fn approver<'a>(&'a self, call_approver: Option<&'a ApprovalHook>) -> Option<&'a ApprovalHook> {
        self.approval.as_ref().or(call_approver)
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
        let input = tool_input(entry, form, input.clone()).unwrap_or_else(|_| input.clone());
        Some(approval_request(caller, entry, input, permit.approval?))
    }

    /// Whether a call of `name` by `caller` is known now to run without asking the
    /// call's own approver ([`CallOptions::approver`]): the tool resolves for the caller
    /// and its policy needs no approval, or the host's hook decides approvals. A tool
    /// not resolved (not loaded yet, hidden, unknown) is not known to.
    pub fn runs_without_call_approver(&self, caller: &Caller, name: &str) -> bool {
        if self.approver(None).is_some() {
            return true;
        }
        let snapshot = self.snapshot.load();
        let permit = snapshot.find(name).and_then(|(entry, _)| self.access(caller, entry).ok());
        permit.is_some_and(|permit| permit.approval.is_none())
    }

    /// Runs a component's tool in a fresh sandbox and returns the output it produced,
    /// or its failure in the caller's terms.
    async fn run_component(
        &self,
        entry: &ToolEntry,
        component: &LoadedComponent,
        index: usize,
        input: &Value,
        progress: Option<&ProgressHook>,
        report: &mut CallReport,
    ) -> Result<(Produced, Option<Transaction>), CallError> {
        let tool = || entry.full_name.clone();
        let loader = self.core.loader();
        let code = component.resident.code(|| loader.restore(component)).await.map_err(|reason| CallError::Host {
            tool: tool(),
            message: format!("its code cannot be loaded: {reason}"),
        })?;
        let input_text;
        let operation = match &code.kind {
            CodeKind::Toolbox(pre) => {
                input_text = input.to_string();
                report.input_bytes = input_text.len() as u64;
                Operation::Call { pre, tool: &entry.def().name, input: &input_text, progress: progress.cloned() }
            }
            CodeKind::Plain { pre, calls } => {
                report.input_bytes = serde_json::to_vec(input).map_or(0, |bytes| bytes.len() as u64);
                let params = calls[index].params(&entry.full_name, input)?;
                Operation::Invoke { pre, export: &calls[index].export, params, results: calls[index].result_count() }
            }
        };
        let label: Arc<str> = Arc::from(entry.full_name.as_str());
        let grants = component.grants.clone();
        let services = Services { resolver: self.core.resolver.clone(), storage: Some(self.core.storage.clone()) };
        let run = sandbox::run(&code.engine, label, &entry.def().limits, grants, services, operation).await;
        report.fuel_consumed = run.fuel_consumed;
        log_captured(&entry.full_name, &run.output);
        report.captured = run.output;
        report.denied_requests = run.denied_requests;
        let pending = run.transaction;
        let produced = match run.result? {
            Returned::Call(Ok(text)) => Produced::Text(text),
            Returned::Call(Err(GuestToolError::InvalidInput(reason))) => {
                return Err(CallError::InputInvalid {
                    tool: tool(),
                    violations: vec![Violation { pointer: String::new(), reason: bounded(reason, MAX_MESSAGE) }],
                });
            }
            Returned::Call(Err(GuestToolError::Failed(message))) => {
                return Err(CallError::Failed { tool: tool(), message: bounded(message, MAX_MESSAGE) });
            }
            Returned::Values(values) => match &code.kind {
                CodeKind::Plain { calls, .. } => Produced::Value(calls[index].output(&entry.full_name, &values)?),
                CodeKind::Toolbox(_) => {
                    return Err(CallError::Host { tool: tool(), message: "values from a toolbox component".into() });
                }
            },
            Returned::Tools(_) => {
                return Err(CallError::Host {
                    tool: tool(),
                    message: "the guest answered a call with a tool list".into(),
                });
            }
        };
        Ok((produced, pending))
    }
}

impl ToolHost {
    /// Runs an HTTP tool's request under the tool's time limit; a refused destination is
    /// recorded with the call like a component's.
    async fn run_http(
        &self,
        entry: &ToolEntry,
        tool: &HttpTool,
        input: &Value,
        report: &mut CallReport,
    ) -> Result<Produced, CallError> {
        let name = || entry.full_name.clone();
        report.input_bytes = serde_json::to_vec(input).map_or(0, |bytes| bytes.len() as u64);
        let limit = entry.def().limits.timeout;
        let mut denied = Vec::new();
        let outcome = tokio::time::timeout(limit, tool.call(input, self.core.resolver.as_ref(), &mut denied)).await;
        report.denied_requests = denied;
        match outcome {
            Err(_elapsed) => Err(CallError::Timeout { tool: name(), limit }),
            Ok(Ok(output)) => Ok(Produced::Value(output)),
            Ok(Err(HttpCallFailure::Input(reason))) => Err(CallError::InputInvalid {
                tool: name(),
                violations: vec![Violation { pointer: String::new(), reason: bounded(reason, MAX_MESSAGE) }],
            }),
            Ok(Err(HttpCallFailure::Failed(message))) => {
                Err(CallError::Failed { tool: name(), message: bounded(message, MAX_MESSAGE) })
            }
            Ok(Err(HttpCallFailure::Host(message))) => Err(CallError::Host { tool: name(), message }),
        }
    }
}

/// Records the call when it ends, and also when its future is dropped first: in the
/// audit log, the metrics and the call's `tool_call` span.
struct Recorder<'h> {
    host: &'h ToolHost,
    span: tracing::Span,
    started_at: SystemTime,
    started: Instant,
    /// Taken when the call ends.
    report: Option<CallReport>,
}

impl Recorder<'_> {
    fn finish(mut self) -> CallReport {
        let report = self.report.take().expect("a call ends once");
        self.record(report)
    }

    fn record(&self, mut report: CallReport) -> CallReport {
        report.duration = self.started.elapsed();
        let outcome = report.outcome.as_ref().map_or_else(|e| e.kind().as_str(), |_| "ok");
        self.span.record("outcome", outcome);
        tracing::info!(parent: &self.span, duration_us = report.duration.as_micros() as u64, fuel = report.fuel_consumed, "call finished");
        if let Some(metrics) = &self.host.metrics {
            metrics.record_call(&report);
        }
        if self.host.audit.is_active() {
            self.host.audit.record(CallRecord::from_report(&report, self.started_at));
        }
        report
    }
}

impl Drop for Recorder<'_> {
    fn drop(&mut self) {
        if let Some(mut report) = self.report.take() {
            let tool = report.tool.clone().unwrap_or_else(|| report.requested.clone());
            report.outcome = Err(CallError::Cancelled { tool });
            tracing::debug!(caller = %report.caller, tool = ?report.tool, "call cancelled");
            self.record(report);
        }
    }
}

/// What a tool produced, before the output checks.
enum Produced {
    /// JSON text, as a toolbox component returns it.
    Text(String),
    /// A JSON value, as a native function returns it.
    Value(Value),
}

/// Runs a native tool under its time limit. A panic in it is the host's failure to run
/// the call, never the host's end.
async fn run_native(
    entry: &ToolEntry,
    tool: &NativeTool,
    input: Value,
    report: &mut CallReport,
) -> Result<Produced, CallError> {
    use futures::FutureExt;
    let name = || entry.full_name.clone();
    report.input_bytes = serde_json::to_vec(&input).map_or(0, |bytes| bytes.len() as u64);
    let limit = entry.def().limits.timeout;
    let call = std::panic::AssertUnwindSafe(tool.call(input)).catch_unwind();
    match tokio::time::timeout(limit, call).await {
        Err(_elapsed) => Err(CallError::Timeout { tool: name(), limit }),
        Ok(Err(_panic)) => Err(CallError::Host { tool: name(), message: "the native tool panicked".into() }),
        Ok(Ok(Ok(output))) => Ok(Produced::Value(output)),
        Ok(Ok(Err(ToolError::InvalidInput(reason)))) => Err(CallError::InputInvalid {
            tool: name(),
            violations: vec![Violation { pointer: String::new(), reason }],
        }),
        Ok(Ok(Err(ToolError::Failed(message)))) => Err(CallError::Failed { tool: name(), message }),
    }
}

fn approval_request(caller: &Caller, entry: &ToolEntry, input: Value, reason: String) -> ApprovalRequest {
    ApprovalRequest {
        caller: caller.clone(),
        tool: entry.full_name.clone(),
        input,
        risk: entry.def().policy.risk,
        reason,
    }
}

fn denied(caller: &Caller, entry: &ToolEntry, reason: String) -> CallError {
    CallError::PermissionDenied { caller: caller.to_string(), tool: entry.full_name.clone(), reason }
}

/// The tool's input from what the caller sent: under an exported name, a wrapped
/// input is the arguments' `input` property (see [`crate::definitions`]).
fn tool_input(entry: &ToolEntry, form: NameForm, arguments: Value) -> Result<Value, CallError> {
    if form != NameForm::Exported || entry.def().input_schema.argument_shape() != ArgumentShape::Wrapped {
        return Ok(arguments);
    }
    match arguments {
        Value::Object(mut map) if map.len() == 1 && map.contains_key(WRAPPED_INPUT) => {
            Ok(map.remove(WRAPPED_INPUT).unwrap_or_default())
        }
        _ => Err(CallError::InputInvalid {
            tool: entry.full_name.clone(),
            violations: vec![Violation {
                pointer: String::new(),
                reason: format!(
                    "this tool's arguments are one property, `{WRAPPED_INPUT}`, holding its input (as its definition says)"
                ),
            }],
        }),
    }
}

/// The output as JSON, within the tool's size limit and output schema. Text is measured
/// before it is parsed, so an oversized answer costs no parsing.
fn check_output(entry: &ToolEntry, produced: Produced, report: &mut CallReport) -> Result<Value, CallError> {
    let tool = || entry.full_name.clone();
    let limit = entry.def().limits.max_output;
    let too_large = |size: u64| CallError::OutputTooLarge { tool: tool(), size, limit };
    let output = match produced {
        Produced::Text(text) => {
            report.output_bytes = text.len() as u64;
            if report.output_bytes > limit {
                return Err(too_large(report.output_bytes));
            }
            serde_json::from_str(&text).map_err(|e| CallError::OutputInvalid {
                tool: tool(),
                violations: vec![Violation { pointer: String::new(), reason: format!("output is not JSON: {e}") }],
            })?
        }
        Produced::Value(value) => {
            report.output_bytes = serde_json::to_vec(&value).map_or(0, |bytes| bytes.len() as u64);
            if report.output_bytes > limit {
                return Err(too_large(report.output_bytes));
            }
            value
        }
    };
    entry
        .def()
        .output_schema
        .check(&output)
        .map_err(|violations| CallError::OutputInvalid { tool: tool(), violations })?;
    Ok(output)
}

/// Makes the writes of a call that succeeded visible, all together, before its answer
/// goes out: an answered call is never lost.
async fn commit(entry: &ToolEntry, component: &LoadedComponent, transaction: Transaction) -> Result<(), CallError> {
    let tool = entry.full_name.clone();
    transaction.commit(&keyvalue::quotas(&component.grants.storage)).await.map_err(|e| match e {
        CommitError::Storage(e) => {
            CallError::Host { tool, message: format!("its storage writes were not committed: {e}") }
        }
        refused @ (CommitError::Leased { .. } | CommitError::Quota { .. }) => {
            CallError::Failed { tool, message: format!("its storage writes were not committed: {refused}") }
        }
    })
}

/// Sends a call's captured stdout and stderr to the host log, marking truncation.
fn log_captured(tool: &str, captured: &CapturedOutput) {
    for (stream, text) in [("stdout", &captured.stdout), ("stderr", &captured.stderr)] {
        if !text.is_empty() {
            tracing::debug!(target: "toolhost::guest", tool, stream, "{}", Escaped(text.trim_end()));
        }
    }
    if captured.dropped_bytes > 0 {
        tracing::info!(target: "toolhost::guest", tool, dropped_bytes = captured.dropped_bytes, "guest output over the per-call log budget was dropped");
    }
}
