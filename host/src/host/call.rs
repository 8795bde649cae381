//! The call pipeline: one straight line from a name and an input to a validated output, the same for every source.
//!
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
//!
//! The run is the tool's source's ([`ToolSource`](crate::ToolSource)`::run`); everything before and after
//! it is the same for every kind of source.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, LazyLock};

use serde_json::Value;
use tracing::Instrument;

use super::ToolHost;
use super::report::{CallOptions, CallReport, Recorder, ToolCall, Usage};
use crate::client::ClientSession;
use crate::error::{CallError, Violation};
use crate::names::NameForm;
use crate::policy::{ApprovalRecord, Caller, Permit};
use crate::registry::ToolEntry;
use crate::sandbox::DeniedRequest;
use crate::schema::{ArgumentShape, WRAPPED_INPUT, nesting_violation};
use crate::sources::{Produced, RunContext};

/// [`Caller::local`], made once rather than on every call.
static LOCAL: LazyLock<Caller> = LazyLock::new(Caller::local);

impl ToolHost {
    /// Calls a tool as the local caller and returns its validated output.
    ///
    /// `name` may be a full name (`math/add`), a stdlib tool's bare name, or an exported
    /// name (`math__add`, `math.add`). Under an exported name the input is the
    /// arguments object a consumer of [`ToolHost::export`] sends: for a tool whose input
    /// travels wrapped ([`ArgumentShape::Wrapped`]), the tool gets its `input` property.
    // Each entry point goes straight to `call_recorded`: every `async` layer between
    // them would copy the call's future once more.
    pub async fn call(&self, name: &str, input: Value) -> Result<Value, CallError> {
        self.call_recorded(&LOCAL, name, input, &CallOptions::default(), outcome_only).await
    }

    /// Calls a tool on behalf of `caller` and returns its validated output.
    pub async fn call_as(&self, caller: &Caller, name: &str, input: Value) -> Result<Value, CallError> {
        self.call_recorded(caller, name, input, &CallOptions::default(), outcome_only).await
    }

    /// Calls a tool as the local caller and reports everything about the call.
    pub async fn call_detailed(&self, name: &str, input: Value) -> CallReport {
        self.call_with(&LOCAL, name, input, &CallOptions::default()).await
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
        self.call_recorded(caller, name, input, options, |recorder, outcome, usage| recorder.finish(outcome, usage))
            .await
    }

    /// The call, recorded as it ends by `finish`: with its report, or with its outcome
    /// alone ([`Recorder::finish_unreported`]).
    async fn call_recorded<T>(
        &self,
        caller: &Caller,
        name: &str,
        input: Value,
        options: &CallOptions,
        finish: impl for<'r> FnOnce(Recorder<'r>, Result<Value, CallError>, Usage) -> T,
    ) -> T {
        let span = call_span(caller, name, options.call_id.as_deref());
        // Declared before the recorder, which borrows the tool's entry from it: the
        // recorder, dropped first, records a call dropped while it runs.
        let snapshot;
        let mut recorder = Recorder::start(self, span.clone(), caller, options.call_id.as_deref(), name);
        // While a server starts, a tool not loaded yet is waited for, not "not found".
        self.first_load.wait_for(name).await;
        snapshot = self.snapshot.load_full();
        let resolved = match self.resolve_for(&snapshot, caller, name) {
            Ok(resolved) => resolved,
            Err(unseen) => {
                if let Some((tool, reason)) = unseen.hidden {
                    recorder.hidden(tool, reason);
                }
                return finish(recorder, Err(unseen.error), Usage::default());
            }
        };
        recorder.answered_by(resolved.0);
        // Boxed: the run's future is most of the call's, and each of the caller's `async`
        // layers would copy it whole (`ToolHost::call`'s future was 2,888 bytes; boxed
        // here, with the entry points calling this directly, it is 1,264).
        let (outcome, usage) =
            Box::pin(self.run_tool(caller, resolved, input, options, recorder.input_bytes()).instrument(span)).await;
        finish(recorder, outcome, usage)
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

    /// Runs a call of a tool the caller may call (as `resolve_for` found it), from its
    /// input's checks to its output's: the outcome, and what the call used.
    async fn run_tool(
        &self,
        caller: &Caller,
        (entry, form, permit): (&ToolEntry, NameForm, Permit),
        input: Value,
        options: &CallOptions,
        input_bytes: &AtomicU64,
    ) -> (Result<Value, CallError>, Usage) {
        let admission = match self.admit(caller, entry).await {
            Ok(admission) => admission,
            Err(error) => return (Err(error), Usage::default()),
        };
        let mut approval = None;
        let powers = entry.source.client_powers().intersection(permit.client);
        let input = match self.checked_input(caller, (entry, form, permit), input, options, &mut approval).await {
            Ok(input) => input,
            Err(error) => return (Err(error), Usage { approval, ..Usage::default() }),
        };
        let tool = Arc::from(entry.full_name.as_str());
        let client = ClientSession::new(options.client.clone(), powers, tool, entry.def().limits.max_output);
        let Some(_slot) = self.call_slot().await else {
            let error = CallError::Host { tool: entry.full_name.clone(), message: "the host is shutting down".into() };
            return (Err(error), Usage::default());
        };
        let context = RunContext {
            components: &self.loaders.components,
            resolver: &self.resolver,
            storage: &self.storage,
            caller,
            progress: options.progress.as_ref(),
            client: &client,
            input_bytes,
        };
        let ran = entry.source.run(&entry.full_name, input, &context).await;
        self.spend_fuel(&admission, caller, ran.fuel_consumed).await;
        let (output_bytes, output) = match ran.produced {
            Ok(produced) => check_output(entry, produced),
            Err(error) => (0, Err(error)),
        };
        let mut usage = Usage {
            fuel_consumed: ran.fuel_consumed,
            output_bytes,
            captured: ran.captured,
            denied_requests: ran.denied_requests,
            approval,
            client: client.finish(),
        };
        let outcome = match (output, ran.writes) {
            // Boxed, as the run's futures are: only a call that wrote carries a commit.
            (Ok(output), Some(writes)) => Box::pin(writes.commit(&entry.full_name)).await.map(|()| output),
            (outcome, _) => outcome,
        };
        // A failed call shows its error alone: what it showed before is not its answer.
        if outcome.is_err() {
            usage.client.content.clear();
        }
        (outcome.map_err(|error| with_refusals(error, &usage.denied_requests)), usage)
    }

    /// A place among the calls the host runs at once; `None` once it shuts down. Taken
    /// without a future when one is free, as it is for most calls: the semaphore's
    /// `acquire` future costs every call its polling and the runtime's budget, and a
    /// free permit means no call is queued for it (tokio hands released permits to the
    /// queue first).
    async fn call_slot(&self) -> Option<tokio::sync::SemaphorePermit<'_>> {
        match self.call_slots.try_acquire() {
            Ok(slot) => Some(slot),
            Err(tokio::sync::TryAcquireError::NoPermits) => self.call_slots.acquire().await.ok(),
            Err(tokio::sync::TryAcquireError::Closed) => None,
        }
    }

    /// The tool's input, once it passed every check before the run: its form, its
    /// depth, approval when the tool needs it, its schema.
    async fn checked_input(
        &self,
        caller: &Caller,
        (entry, form, permit): (&ToolEntry, NameForm, Permit),
        input: Value,
        options: &CallOptions,
        approval: &mut Option<ApprovalRecord>,
    ) -> Result<Value, CallError> {
        let input = tool_input(entry, form, input)?;
        if let Some(violation) = nesting_violation(&input) {
            return Err(CallError::InputInvalid { tool: entry.full_name.clone(), violations: vec![violation] });
        }
        if let Some(reason) = permit.approval {
            let (answer, record) = self.check_approval(caller, entry, &input, reason, options.approver.as_ref()).await;
            *approval = Some(record);
            answer?;
        }
        entry
            .def()
            .input_schema()
            .check(&input)
            .map_err(|violations| CallError::InputInvalid { tool: entry.full_name.clone(), violations })?;
        Ok(input)
    }
}

/// The end of a call whose caller takes its outcome alone (`call`, `call_as`): one
/// function for both, so that the pipeline is compiled once for them.
fn outcome_only(recorder: Recorder<'_>, outcome: Result<Value, CallError>, usage: Usage) -> Result<Value, CallError> {
    recorder.finish_unreported(outcome, usage)
}

/// The call's `tool_call` span, made only where a subscriber takes it. Without one,
/// `tracing`'s `log` feature (which `oci-client` switches on) would still hand the span
/// to the `log` crate as it is made, entered, left, recorded and dropped: several
/// hundred instructions a call that no one reads (`docs/performance.md`). The call's
/// `call finished` event reaches `log` either way.
fn call_span(caller: &Caller, name: &str, call_id: Option<&str>) -> tracing::Span {
    if !tracing::enabled!(target: "toolhost::call", tracing::Level::INFO) {
        return tracing::Span::none();
    }
    // The call's log target is named, not its module's path: operators filter on it.
    tracing::info_span!(
        target: "toolhost::call",
        "tool_call",
        agent = %caller.agent,
        session = caller.conversation(),
        tool = name,
        request_id = call_id,
        outcome = tracing::field::Empty,
    )
}

/// How many refused requests a failure names; the report holds them all.
const REFUSALS_NAMED: usize = 3;

/// The error of a tool that failed after the host refused one of its outgoing
/// requests, with why: the guest saw only `HttpRequestDenied` (or its language's
/// exception), and the caller needs the reason to grant the host or drop the call.
fn with_refusals(error: CallError, denied: &[DeniedRequest]) -> CallError {
    if denied.is_empty() {
        return error;
    }
    let mut named: Vec<String> =
        denied.iter().take(REFUSALS_NAMED).map(|d| format!("`{}`: {}", d.destination, d.reason)).collect();
    if denied.len() > REFUSALS_NAMED {
        named.push(format!("and {} more", denied.len() - REFUSALS_NAMED));
    }
    let refused = format!(" (the host refused {})", named.join("; "));
    match error {
        CallError::Failed { tool, message } => CallError::Failed { tool, message: message + &refused },
        CallError::Trap { tool, message, backtrace } => {
            CallError::Trap { tool, message: message + &refused, backtrace }
        }
        other => other,
    }
}

/// The tool's input from what the caller sent: under an exported name, a wrapped
/// input is the arguments' `input` property (see [`crate::definitions`]).
pub(super) fn tool_input(entry: &ToolEntry, form: NameForm, arguments: Value) -> Result<Value, CallError> {
    if form != NameForm::Exported || entry.def().input_schema().argument_shape() != ArgumentShape::Wrapped {
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

/// The size of the output, and the output as JSON within the tool's size limit and
/// output schema. Text is measured before it is parsed, so an oversized answer costs no
/// parsing.
fn check_output(entry: &ToolEntry, produced: Produced) -> (u64, Result<Value, CallError>) {
    let tool = || entry.full_name.clone();
    let size = match &produced {
        Produced::Text(text) => text.len() as u64,
        Produced::Value(value) => serde_json::to_vec(value).map_or(0, |bytes| bytes.len() as u64),
    };
    let limit = entry.def().limits.max_output;
    if size > limit {
        return (size, Err(CallError::OutputTooLarge { tool: tool(), size, limit }));
    }
    let output = match produced {
        Produced::Text(text) => serde_json::from_str(&text).map_err(|e| CallError::OutputInvalid {
            tool: tool(),
            violations: vec![Violation { pointer: String::new(), reason: format!("output is not JSON: {e}") }],
        }),
        Produced::Value(value) => Ok(value),
    };
    let checked = output.and_then(|output| {
        let schema = entry.def().output_schema();
        schema
            .check(&output)
            .map(|()| output)
            .map_err(|violations| CallError::OutputInvalid { tool: tool(), violations })
    });
    (size, checked)
}
