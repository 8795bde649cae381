//! Native tools: async Rust functions an embedder registers beside the sandboxed ones.
//!
//! A native tool is served like any other: it has a full name in a layer, it is listed,
//! exported and served over MCP, and its calls go through the same pipeline (policy,
//! approval, input validation, a timeout, the output size limit, output validation, the
//! audit record). It runs in the host process, so fuel, memory limits and grants do not
//! apply: only register code you trust as much as the host itself.
//!
//! ```no_run
//! # use toolhost::{NativeTool, ToolError};
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct City { name: String }
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Weather { celsius: f64 }
//!
//! let weather = NativeTool::typed("weather/now", "Current temperature in a city.", |city: City| async move {
//!     if city.name.is_empty() {
//!         return Err(ToolError::InvalidInput("the city has no name".into()));
//!     }
//!     Ok(Weather { celsius: 21.5 })
//! })
//! .expect("a valid name and schemas");
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::client::{ClientPowers, ClientSession};
use crate::error::{CallError, NativeToolError};
use crate::error::{ToolDefError, ToolProblem};
use crate::manifest::check_timeout;
use crate::names;
use crate::policy::Caller;
use crate::sources::{Produced, Ran, RunContext};
use crate::tool::{Ceilings, DeclaredOutput, Limits, Risk, ToolDef, ToolError, ToolHints};

type Handler = Arc<dyn Fn(Value, CallContext) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync>;

/// What a native tool learns of the call it answers, with [`NativeTool::new_with_context`].
#[derive(Clone)]
pub struct CallContext {
    /// Who is calling: the agent and the session it acts in.
    pub caller: Caller,
    /// The calling client's powers (the person, its model, its log), as the caller's
    /// policy allows them, and where the call's content blocks go.
    pub client: ClientSession,
}

/// A tool implemented by an async Rust function. Cheap to clone.
#[derive(Clone)]
pub struct NativeTool {
    pub(crate) namespace: String,
    pub(crate) def: Arc<ToolDef>,
    /// Its own time limit; the def's limits are the host's defaults with this over
    /// them once the tool is registered (only `timeout` and `max_output` apply to
    /// native code).
    timeout: Option<Duration>,
    /// Its own output size limit, likewise.
    max_output: Option<u64>,
    handler: Handler,
    /// The client's powers its function may use: all of them for one that gets the
    /// [`CallContext`], none for the others (which cannot reach the client).
    client_powers: ClientPowers,
}

impl std::fmt::Debug for NativeTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeTool").field("name", &self.full_name()).finish_non_exhaustive()
    }
}

impl NativeTool {
    /// A tool from JSON Schemas and a function of raw JSON. `name` is the full name,
    /// `namespace/tool`. The input reaching `handler` has passed `input_schema`.
    pub fn new<F, Fut>(
        name: &str,
        description: &str,
        input_schema: Value,
        output_schema: Value,
        handler: F,
    ) -> Result<NativeTool, NativeToolError>
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |input, _context| Box::pin(handler(input)));
        NativeTool::build(name, description, (input_schema, output_schema), handler)
    }

    /// Like [`NativeTool::new`], for a function that also learns who is calling: the
    /// agent and the session it acts in (a native tool runs with the host's trust, so
    /// this needs no grant).
    pub fn new_with_caller<F, Fut>(
        name: &str,
        description: &str,
        input_schema: Value,
        output_schema: Value,
        handler: F,
    ) -> Result<NativeTool, NativeToolError>
    where
        F: Fn(Value, Caller) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |input, context: CallContext| Box::pin(handler(input, context.caller)));
        NativeTool::build(name, description, (input_schema, output_schema), handler)
    }

    /// Like [`NativeTool::new`], for a function that learns the whole [`CallContext`]:
    /// who is calling, and the client's powers, with which it may ask the person a
    /// question, ask the client's model, log to the client and show content blocks (a
    /// native tool runs with the host's trust: every power is granted, narrowed only by
    /// the caller's policy).
    pub fn new_with_context<F, Fut>(
        name: &str,
        description: &str,
        input_schema: Value,
        output_schema: Value,
        handler: F,
    ) -> Result<NativeTool, NativeToolError>
    where
        F: Fn(Value, CallContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let handler: Handler = Arc::new(move |input, context| Box::pin(handler(input, context)));
        let mut tool = NativeTool::build(name, description, (input_schema, output_schema), handler)?;
        tool.client_powers = ClientPowers::all();
        Ok(tool)
    }

    /// The client's powers its function may use, before the caller's policy narrows
    /// them.
    pub(crate) fn client_powers(&self) -> ClientPowers {
        self.client_powers
    }

    fn build(
        name: &str,
        description: &str,
        (input_schema, output_schema): (Value, Value),
        handler: Handler,
    ) -> Result<NativeTool, NativeToolError> {
        let bad_name = |problem: String| ToolDefError::of(name, ToolProblem::Name(problem));
        let (namespace, tool) =
            names::split(name).ok_or_else(|| bad_name("a native tool's name is `namespace/tool`".into()))?;
        names::validate_namespace(namespace).map_err(bad_name)?;
        let output_schema = output_schema.to_string();
        // A native tool has no file to say where it is: its refusal quotes its full name.
        let def = ToolDef::new(tool, description, &input_schema.to_string(), DeclaredOutput::Json(&output_schema))
            .map_err(|refused| match refused {
                ToolDefError::Tool { problem, .. } => ToolDefError::of(name, problem),
                other => other,
            })?;
        Ok(NativeTool {
            namespace: namespace.to_owned(),
            def: Arc::new(def),
            timeout: None,
            max_output: None,
            handler,
            client_powers: ClientPowers::NONE,
        })
    }

    /// A tool from a typed function: its schemas are derived from `In` and `Out`
    /// (schemars), its input deserialized and its output serialized by serde.
    pub fn typed<In, Out, F, Fut>(name: &str, description: &str, handler: F) -> Result<NativeTool, NativeToolError>
    where
        In: DeserializeOwned + JsonSchema + Send + 'static,
        Out: Serialize + JsonSchema + 'static,
        F: Fn(In) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Out, ToolError>> + Send + 'static,
    {
        let input_schema = schemars::schema_for!(In).to_value();
        let output_schema = schemars::schema_for!(Out).to_value();
        let handler = Arc::new(handler);
        NativeTool::new(name, description, input_schema, output_schema, move |input: Value| {
            let handler = handler.clone();
            async move {
                let input: In = serde_json::from_value(input).map_err(|e| ToolError::InvalidInput(e.to_string()))?;
                let output = handler(input).await?;
                serde_json::to_value(output).map_err(|e| ToolError::Failed(format!("output is not JSON: {e}")))
            }
        })
    }

    /// Calls must pass the host's approval hook first.
    pub fn requiring_approval(mut self) -> NativeTool {
        Arc::make_mut(&mut self.def).policy.requires_approval = true;
        self
    }

    /// Its risk level (the default is medium).
    pub fn with_risk(mut self, risk: Risk) -> NativeTool {
        Arc::make_mut(&mut self.def).policy.risk = risk;
        self
    }

    /// How it behaves, for clients (MCP tool annotations) and listing filters.
    pub fn with_hints(mut self, hints: ToolHints) -> NativeTool {
        Arc::make_mut(&mut self.def).policy.hints = hints;
        self
    }

    /// Its output is MCP content blocks (`{"content": [...]}`), which MCP clients get
    /// as blocks rather than as structured content.
    pub fn with_mcp_content_output(mut self) -> NativeTool {
        self.def = Arc::new(self.def.as_ref().clone().with_mcp_content_output());
        self
    }

    /// Its own time limit instead of the host's default.
    pub fn with_timeout(mut self, timeout: Duration) -> NativeTool {
        self.timeout = Some(timeout);
        self
    }

    /// Its own output size limit (bytes of JSON) instead of the host's default.
    pub fn with_max_output(mut self, bytes: u64) -> NativeTool {
        self.max_output = Some(bytes);
        self
    }

    /// `namespace/tool`.
    pub fn full_name(&self) -> String {
        names::full_name(&self.namespace, self.def.name())
    }

    /// This tool as registered in a host whose default limits are `defaults`, its own
    /// time limit within the host's `ceilings`.
    pub(crate) fn registered(mut self, defaults: Limits, ceilings: Ceilings) -> Result<NativeTool, NativeToolError> {
        let timeout = self.timeout.unwrap_or(defaults.timeout);
        check_timeout(timeout, ceilings)
            .map_err(|problem| NativeToolError::Limit { tool: self.full_name(), problem })?;
        let max_output = self.max_output.unwrap_or(defaults.max_output);
        Arc::make_mut(&mut self.def).limits = Limits { timeout, max_output, ..defaults };
        Ok(self)
    }

    /// Runs a call under the tool's time limit. A panic in it is the host's failure to
    /// run the call, never the host's end.
    pub(crate) async fn run(&self, full_name: &str, input: Value, context: &RunContext<'_>) -> Ran {
        use futures::FutureExt;
        let limit = self.def.limits.timeout;
        let call_context = CallContext { caller: context.caller.clone(), client: context.client.clone() };
        let call = std::panic::AssertUnwindSafe((self.handler)(input, call_context)).catch_unwind();
        let tool = full_name.to_owned();
        let produced = match tokio::time::timeout(limit, call).await {
            Err(_elapsed) => Err(CallError::Timeout { tool, limit }),
            Ok(Err(_panic)) => Err(CallError::Host { tool, message: "the native tool panicked".into() }),
            Ok(Ok(Ok(output))) => Ok(Produced::Value(output)),
            Ok(Ok(Err(failure))) => Err(failure.for_call(&tool)),
        };
        Ran::produced(produced)
    }
}
