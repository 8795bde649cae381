//! What every MCP session of a server shares: the host, the default caller, each caller's tool list (their schemas parsed once, in a pool shared by every list), and the approval key.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Instant;

use rmcp::model::{CallToolResult, ContentBlock, ErrorData, JsonObject, Tool};
use serde_json::{Value, json};

use super::approval::ApprovalKey;
use super::request::{SessionEvents, caller_of};
use crate::definitions::{self, ExportFormat};
use crate::error::CallError;
use crate::host::{CallOptions, ListingVersion, ToolHost, sweep_idle};
use crate::names;
use crate::policy::{ApproveVia, Caller};
use crate::tool::{OutputForm, ToolDescription, ToolFilter};

/// What every session shares: the host, who calls when no credentials say otherwise,
/// and each caller's tool list of the last snapshot and policy it was built for.
pub(crate) struct Shared {
    pub(super) host: ToolHost,
    caller: Caller,
    tools: Mutex<HashMap<Caller, ToolList>>,
    /// The schemas of the lists in `tools`, one parsed copy of each.
    schemas: Mutex<SchemaPool>,
    /// Seals the approval questions of 2026-07-28 calls ([`approval::seal`]).
    pub(super) approval_key: ApprovalKey,
    /// The transport's sessions, told when one is initialized and asked when it ends.
    pub(super) sessions: Option<Arc<dyn SessionEvents>>,
    /// Where approval questions go: the client, the operator's console, or both.
    pub(super) approve_via: ApproveVia,
}

/// The MCP tool definitions a caller saw at one [`ToolHost::listing_version`].
struct ToolList {
    version: ListingVersion,
    tools: Arc<Vec<Tool>>,
    /// When a listing last used it.
    used: Instant,
}

/// Callers whose lists are kept; past this the cache starts over (sessions end without
/// telling the handler).
const LISTS_KEPT: usize = 1024;

impl Shared {
    /// The shared state of a server, whose unused tool lists leave memory for as long
    /// as it lives.
    pub(crate) fn start(
        host: ToolHost,
        caller: Caller,
        approval_key: ApprovalKey,
        sessions: Option<Arc<dyn SessionEvents>>,
        approve_via: ApproveVia,
    ) -> Arc<Self> {
        let idle = host.idle_after();
        let tools = Mutex::new(HashMap::new());
        let schemas = Mutex::new(SchemaPool::default());
        let shared = Arc::new(Shared { host, caller, tools, schemas, approval_key, sessions, approve_via });
        sweep_idle(Arc::downgrade(&shared), idle, "tool lists no listing used", move |shared| {
            let mut lists = shared.lists();
            let kept = lists.len();
            lists.retain(|_, list| list.used.elapsed() < idle);
            kept - lists.len()
        });
        shared
    }

    /// Who makes a request (see [`caller_of`]).
    pub(super) fn caller_of(
        &self,
        extensions: &rmcp::model::Extensions,
        meta: &rmcp::model::RequestMetaObject,
    ) -> Result<Caller, rmcp::model::ErrorData> {
        caller_of(extensions, meta, &self.caller)
    }

    /// The tools `caller` may call, rebuilt only when the snapshot or the policy
    /// changed.
    pub(super) fn tools(&self, caller: &Caller) -> Arc<Vec<Tool>> {
        loop {
            let version = self.host.listing_version();
            if let Some(cached) = self.lists().get_mut(caller)
                && cached.version == version
            {
                cached.used = Instant::now();
                return cached.tools.clone();
            }
            let tools = self.build_list(caller);
            // A reload or a new policy while listing: the list may be of the newer
            // state; build again rather than cache it under the wrong version.
            if self.host.listing_version() != version {
                continue;
            }
            let tools = Arc::new(tools);
            let mut lists = self.lists();
            if lists.len() >= LISTS_KEPT {
                lists.clear();
            }
            lists.insert(caller.clone(), ToolList { version, tools: tools.clone(), used: Instant::now() });
            return tools;
        }
    }

    /// The MCP definitions of the tools `caller` may call, their schemas shared with
    /// every other list's.
    fn build_list(&self, caller: &Caller) -> Vec<Tool> {
        let mut schemas = self.schemas.lock().unwrap_or_else(|e| e.into_inner());
        schemas.forget_unused();
        let mut tools = Vec::new();
        self.host.for_each_listed(caller, &ToolFilter::default(), |description| {
            tools.extend(mcp_tool(&description, &mut schemas));
        });
        tools
    }

    fn lists(&self) -> std::sync::MutexGuard<'_, HashMap<Caller, ToolList>> {
        self.tools.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) async fn call(
        &self,
        caller: &Caller,
        name: &str,
        input: Value,
        options: &CallOptions,
    ) -> Result<CallToolResult, ErrorData> {
        let report = self.host.call_with(caller, name, input, options).await;
        match report.outcome {
            Ok(output) if report.output_form == OutputForm::McpContent => Ok(content_result(output)),
            Ok(output) if !report.content.is_empty() => Ok(with_blocks(&report.content, output)),
            Ok(output @ Value::Object(_)) => Ok(CallToolResult::structured(output)),
            // A string is text for the model (Markdown, a report), not a JSON string literal.
            Ok(Value::String(text)) => Ok(CallToolResult::success(vec![ContentBlock::text(text)])),
            Ok(output) => Ok(CallToolResult::success(vec![ContentBlock::text(output.to_string())])),
            Err(CallError::NotFound { name, suggestions }) => {
                tracing::debug!(caller = %caller, tool = %crate::text::Escaped(&name), "call of an unknown tool");
                Err(unknown_tool(&name, &suggestions))
            }
            Err(error @ CallError::QuotaExceeded { .. }) => Err(over_quota(&error)),
            Err(error) => Ok(CallToolResult::error(vec![ContentBlock::text(format!("{}: {error}", error.kind()))])),
        }
    }
}

/// JSON-RPC's code for errors of the server's own: here, a limit reached.
const OVER_A_LIMIT: i32 = -32000;

/// A call over its agent's quota: a JSON-RPC error, not a tool's failure (the tool never
/// ran), saying when to retry (`data.retry_after`, seconds).
fn over_quota(error: &CallError) -> ErrorData {
    let data = json!({ "kind": error.kind().as_str(), "retry_after": error.retry_after_secs().unwrap_or(1) });
    ErrorData::new(rmcp::model::ErrorCode(OVER_A_LIMIT), error.to_string(), Some(data))
}

/// A result of the blocks a tool showed, followed by its output as text (unless it is
/// `null`), and its output as structured content when it is an object.
fn with_blocks(blocks: &[crate::content::Content], output: Value) -> CallToolResult {
    let mut content: Vec<ContentBlock> =
        blocks.iter().filter_map(|block| serde_json::from_value(block.to_mcp()).ok()).collect();
    match &output {
        Value::Null => {}
        Value::String(text) => content.push(ContentBlock::text(text.clone())),
        other => content.push(ContentBlock::text(other.to_string())),
    }
    let mut result = CallToolResult::success(content);
    if output.is_object() {
        result.structured_content = Some(output);
    }
    result
}

/// The content blocks of an upstream tool's output (`{"content": [...]}`, checked
/// against its schema), passed on as the upstream server sent them.
fn content_result(mut output: Value) -> CallToolResult {
    match serde_json::from_value::<Vec<ContentBlock>>(output["content"].take()) {
        Ok(blocks) => CallToolResult::success(blocks),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
            "output_invalid: the tool's content blocks are not MCP content: {e}"
        ))]),
    }
}

/// A tool as `tools/list` shows it: the MCP definition of [`definitions`], in the SDK's
/// type, with its schemas taken from `schemas`.
fn mcp_tool(description: &ToolDescription, schemas: &mut SchemaPool) -> Option<Tool> {
    let mut definition = definitions::definition(description, ExportFormat::Mcp);
    let input = definition.get_mut("inputSchema").map(|schema| std::mem::replace(schema, json!({})));
    let output = definition.get_mut("outputSchema").map(|schema| std::mem::replace(schema, json!({})));
    let no_definition = |e: &dyn std::fmt::Display| {
        tracing::error!(tool = %description.name, "no MCP definition for the tool: {e}");
    };
    let mut tool: Tool = serde_json::from_value(definition).inspect_err(|e| no_definition(e)).ok()?;
    // The schema itself stays out of the log: it is the tool's text, and may be large.
    let object = |schema: Option<Value>| match schema {
        Some(Value::Object(schema)) => Ok(schema),
        Some(_) => Err("its schema is not a JSON object"),
        None => Err("it has no input schema"),
    };
    tool.input_schema = schemas.shared(object(input).inspect_err(|e| no_definition(e)).ok()?);
    if output.is_some() {
        tool.output_schema = Some(schemas.shared(object(output).inspect_err(|e| no_definition(e)).ok()?));
    }
    Some(tool)
}

/// One parsed copy of each distinct schema the server's tool lists hold, found by a hash
/// of its JSON. Parsed JSON takes about twelve times the memory of its text, and the same
/// schema is listed again and again: in every caller's list, by every copy of a
/// component, by tools of one shape; and a list is rebuilt after every reload.
#[derive(Default)]
struct SchemaPool(HashMap<blake3::Hash, Weak<JsonObject>>);

impl SchemaPool {
    /// The pool's copy of `schema`, which it holds from now on while a list does.
    fn shared(&mut self, schema: JsonObject) -> Arc<JsonObject> {
        let mut hasher = blake3::Hasher::new();
        // Writing JSON into a hasher cannot fail; if it did, the schema stays the list's own.
        if serde_json::to_writer(&mut hasher, &schema).is_err() {
            return Arc::new(schema);
        }
        let key = hasher.finalize();
        if let Some(pooled) = self.0.get(&key).and_then(Weak::upgrade) {
            return pooled;
        }
        let schema = Arc::new(schema);
        self.0.insert(key, Arc::downgrade(&schema));
        schema
    }

    /// Drops the entries of schemas no list holds any more.
    fn forget_unused(&mut self) {
        self.0.retain(|_, schema| schema.strong_count() > 0);
    }
}

/// The protocol error for a name that resolves to no tool (MCP: invalid params).
fn unknown_tool(name: &str, suggestions: &[String]) -> ErrorData {
    let suggestions: Vec<String> = suggestions.iter().map(|s| names::mcp_name(s)).collect();
    let mut message = format!("unknown tool `{name}`");
    if !suggestions.is_empty() {
        let quoted: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
        message.push_str(&format!(" (did you mean {}?)", quoted.join(", ")));
    }
    ErrorData::invalid_params(message, Some(json!({ "name": name, "suggestions": suggestions })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_tool_list_no_listing_used_for_the_idle_time_leaves_memory() {
        let tools = tempfile::tempdir().unwrap();
        // Long beside the 20 ms between listings: a test thread stalled for longer than
        // the idle time on a loaded machine would see the planner's list dropped too.
        let idle = Duration::from_secs(1);
        let host = ToolHost::builder()
            .root(tools.path())
            .engine_settings(crate::EngineSettings { drop_idle_code_after: idle, ..crate::EngineSettings::default() })
            .build()
            .await
            .unwrap();
        let shared = Shared::start(host, Caller::local(), ApprovalKey::random().unwrap(), None, ApproveVia::Client);
        let planner = Caller::new("planner");
        shared.tools(&Caller::local());
        shared.tools(&planner);
        assert_eq!(shared.lists().len(), 2);
        // Listed again and again, the planner's list stays; the other one leaves.
        let started = Instant::now();
        while shared.lists().len() == 2 {
            assert!(started.elapsed() < Duration::from_secs(10), "an unused list was never dropped");
            shared.tools(&planner);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let lists = shared.lists().keys().cloned().collect::<Vec<_>>();
        assert_eq!(lists, vec![planner.clone()]);
        assert!(started.elapsed() >= idle / 2, "dropped after {:?}, before it was idle", started.elapsed());
    }

    /// A native tool whose schemas are those of `shape`.
    fn native(name: &str, shape: &str) -> crate::NativeTool {
        let input = json!({ "type": "object", "properties": { shape: { "type": "string" } } });
        let output = json!({ "type": "object", "properties": { shape: { "type": "number" } } });
        crate::NativeTool::new(name, "A tool.", input, output, |_input: Value| async { Ok(json!({})) }).unwrap()
    }

    #[tokio::test]
    async fn every_list_holds_one_parsed_copy_of_each_distinct_schema() {
        let host = ToolHost::builder()
            .layer(crate::Layer::native("native"))
            .tool("native", native("one/copy", "a"))
            .tool("native", native("two/copy", "a"))
            .tool("native", native("one/other", "b"))
            .build()
            .await
            .unwrap();
        let shared = Shared::start(host, Caller::local(), ApprovalKey::random().unwrap(), None, ApproveVia::Client);
        let tool = |list: &[Tool], name: &str| list.iter().find(|tool| tool.name == name).cloned().unwrap();
        let (local, planner) = (shared.tools(&Caller::local()), shared.tools(&Caller::new("planner")));
        let (one, two, other) = (tool(&local, "one.copy"), tool(&local, "two.copy"), tool(&local, "one.other"));
        assert_eq!(one.input_schema.get("properties"), Some(&json!({ "a": { "type": "string" } })));
        assert!(Arc::ptr_eq(&one.input_schema, &two.input_schema), "two tools of one schema hold one copy");
        assert!(Arc::ptr_eq(one.output_schema.as_ref().unwrap(), two.output_schema.as_ref().unwrap()));
        assert!(!Arc::ptr_eq(&one.input_schema, &other.input_schema), "distinct schemas stay distinct");
        assert_eq!(other.input_schema.get("properties"), Some(&json!({ "b": { "type": "string" } })));
        assert!(!Arc::ptr_eq(&one.input_schema, one.output_schema.as_ref().unwrap()));
        let planners = tool(&planner, "one.copy");
        assert!(Arc::ptr_eq(&one.input_schema, &planners.input_schema), "two callers' lists hold one copy");
        // Once no list holds a schema, neither does the pool.
        drop((local, planner, one, two, other, planners));
        shared.lists().clear();
        let mut schemas = shared.schemas.lock().unwrap();
        schemas.forget_unused();
        assert!(schemas.0.is_empty());
    }

    #[test]
    fn unknown_tools_name_their_close_matches_in_mcp_form() {
        let error = unknown_tool("math.ad", &["math/add".into()]);
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(error.message, "unknown tool `math.ad` (did you mean `math.add`?)");
    }
}
