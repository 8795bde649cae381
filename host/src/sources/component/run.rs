//! One call of a component's tool: a fresh sandbox with the tool's limits and the component's grants.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use wasmtime::component::Val;

use super::code::CodeKind;
use super::plain::PlainCall;
use super::{Components, LoadedComponent};
use crate::error::CallError;
use crate::sandbox::{CapturedOutput, Run, Sandbox, Services};
use crate::sources::{Produced, Ran, RunContext};
use crate::storage::{CommitError, Transaction};
use crate::text::Escaped;
use crate::tool::ToolError;

/// A call's storage writes, made visible once its output passed its checks.
pub(crate) struct Writes {
    transaction: Transaction,
    component: Arc<LoadedComponent>,
    /// The calling agent, whose quotas the writes count against.
    agent: String,
}

impl Writes {
    fn new(transaction: Transaction, component: &Arc<LoadedComponent>, context: &RunContext<'_>) -> Writes {
        Writes { transaction, component: component.clone(), agent: context.caller.agent.clone() }
    }

    /// Commits the writes, all together, before the answer goes out: an answered call is
    /// never lost. A quota or a lease refusing them is the tool's failure.
    pub async fn commit(self, tool: &str) -> Result<(), CallError> {
        let quotas = self.component.grants.storage.quotas(&self.agent);
        self.transaction.commit(&quotas).await.map_err(|e| match e {
            CommitError::Storage(e) => CallError::Host {
                tool: tool.to_owned(),
                message: format!("its storage writes were not committed: {e}"),
            },
            refused @ (CommitError::Leased { .. } | CommitError::Quota { .. }) => CallError::Failed {
                tool: tool.to_owned(),
                message: format!("its storage writes were not committed: {refused}"),
            },
        })
    }
}

impl Components {
    /// Runs tool `index` of `component` in a fresh sandbox: the output it produced, or
    /// its failure in the caller's terms, and what it consumed.
    pub(crate) async fn run(
        &self,
        component: &Arc<LoadedComponent>,
        index: usize,
        (tool, input): (&str, &Value),
        context: &RunContext<'_>,
    ) -> Ran {
        let code = match component.resident.code(|| self.restore(component)).await {
            Ok(code) => code,
            Err(reason) => {
                let message = format!("its code cannot be loaded: {reason}");
                return Ran::refused(CallError::Host { tool: tool.to_owned(), message });
            }
        };
        let def = &component.tools[index];
        let sandbox = Sandbox {
            engine: &code.engine,
            label: context.client.tool().clone(),
            limits: &def.limits,
            grants: component.grants.clone(),
            services: self.services_for(context, &component.grants),
        };
        let measured = |bytes: usize| context.input_bytes.store(bytes as u64, Ordering::Relaxed);
        let (produced, consumed) = match &code.kind {
            CodeKind::Toolbox(pre) => {
                let input_text = match input_text(tool, input) {
                    Ok(text) => text,
                    Err(error) => return Ran::refused(error),
                };
                measured(input_text.len());
                let progress = context.progress.cloned();
                let Run { result, consumed } = sandbox.call_tool(pre, def.name(), &input_text, progress).await;
                let produced = match result {
                    Ok(Ok(text)) => Ok(Produced::Text(text)),
                    Ok(Err(failure)) => Err(ToolError::from(failure).for_call(tool)),
                    Err(error) => Err(error),
                };
                (produced, consumed)
            }
            CodeKind::Plain { pre, calls } => {
                measured(serde_json::to_vec(input).map_or(0, |bytes| bytes.len()));
                let call = &calls[index];
                let params = match call.params(tool, input) {
                    Ok(params) => params,
                    Err(error) => return Ran::refused(error),
                };
                let Run { result, consumed } = sandbox.invoke(pre, &call.export, params, call.result_count()).await;
                let produced = result.and_then(|values| plain_output(call, tool, &values, context));
                (produced, consumed)
            }
        };
        log_captured(tool, &consumed.output);
        Ran {
            produced,
            fuel_consumed: consumed.fuel,
            captured: consumed.output,
            denied_requests: consumed.denied_requests,
            writes: consumed.transaction.map(|transaction| Writes::new(transaction, component, context)),
        }
    }
}

impl Components {
    /// What the host lends one call: its resolver (to a component granted the network),
    /// the store (to one granted buckets), and who is calling (to one that may learn it
    /// or keeps state per agent). What a component cannot use is not lent: each would
    /// cost every call a reference count that every core writes, or a copy.
    fn services_for(&self, context: &RunContext<'_>, grants: &crate::sandbox::Grants) -> Services {
        let stores = grants.storage.grants_any();
        Services {
            resolver: (!grants.network.is_empty()).then(|| self.resolver.clone()),
            storage: stores.then(|| context.storage.clone()),
            caller: (grants.caller || stores).then(|| context.caller.clone()),
            client: Some(context.client.clone()),
        }
    }
}

/// The input as the JSON text `toolbox.call` takes, written straight to bytes (`Display`
/// would write it through a formatter).
fn input_text(tool: &str, input: &Value) -> Result<String, CallError> {
    serde_json::to_string(input).map_err(|e| CallError::Host {
        tool: tool.to_owned(),
        message: format!("its input cannot be written as JSON: {e}"),
    })
}

/// A plain function's output, its media shown as a content block within the tool's
/// output limit.
fn plain_output(call: &PlainCall, tool: &str, values: &[Val], context: &RunContext<'_>) -> Result<Produced, CallError> {
    let (output, media) = call.output(tool, values)?;
    match media.map(|media| context.client.add_content(media)) {
        Some(Err(over)) => Err(ToolError::Failed(over).for_call(tool)),
        _ => Ok(Produced::Value(output)),
    }
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
