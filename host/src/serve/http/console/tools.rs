//! The console's tools: everything served and what failed, one tool's definition and limits, and trying it as an agent.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::{Value, json};

use super::session::Operator;
use super::{Console, error, json_body, query_param};
use crate::host::CallOptions;
use crate::policy::Caller;
use crate::registry::Listing;
use crate::text::Escaped;
use crate::upstream::UpstreamState;

/// The longest agent name a tool may be tried as.
const MAX_AGENT: usize = 128;

/// `GET /console/api/tools`: every served tool, the layers, conflicts, load errors and
/// the upstream servers' states.
pub(super) async fn list(State(console): State<Arc<Console>>) -> Response {
    let snapshot = console.host.snapshot();
    let listing = Listing::of(&snapshot);
    let upstreams: Vec<Value> = console
        .host
        .upstreams()
        .await
        .into_iter()
        .map(|status| {
            let mut shown = json!({ "name": status.server.name, "layer": status.server.layer });
            match status.state {
                UpstreamState::Connecting => shown["state"] = "connecting".into(),
                UpstreamState::Connected { tools_served, .. } => {
                    shown["state"] = "connected".into();
                    shown["tools"] = tools_served.into();
                }
                UpstreamState::Failed { problem } => {
                    shown["state"] = "failed".into();
                    shown["error"] = problem.into();
                }
            }
            shown
        })
        .collect();
    let mut body = serde_json::to_value(&listing).unwrap_or_else(|_| json!({}));
    body["upstreams"] = Value::Array(upstreams);
    body["generation"] = snapshot.generation.into();
    axum::Json(body).into_response()
}

/// `GET /console/api/tool?name=NS/TOOL`: one tool as listed, its limits, and the agents
/// it may be tried as.
pub(super) async fn describe(State(console): State<Arc<Console>>, request: Request) -> Response {
    let Some(name) = query_param(request.uri(), "name") else {
        return error(StatusCode::BAD_REQUEST, "name the tool: ?name=NAMESPACE/TOOL");
    };
    let snapshot = console.host.snapshot();
    let Some((entry, _)) = snapshot.find(&name) else {
        return error(StatusCode::NOT_FOUND, "no tool of that name is served");
    };
    axum::Json(json!({
        "tool": snapshot.describe(entry),
        "limits": entry.def().limits,
        "agents": known_agents(&console),
    }))
    .into_response()
}

/// The agents a tool may be tried as: those with tokens, the server's own caller, and
/// those seen calling lately.
fn known_agents(console: &Console) -> Vec<String> {
    let mut agents: Vec<String> = console.agents.current().owners().into_iter().map(str::to_owned).collect();
    for agent in std::iter::once(console.default_caller.agent.clone()).chain(console.calls.agents()) {
        if !agents.contains(&agent) {
            agents.push(agent);
        }
    }
    agents
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TryCall {
    tool: String,
    agent: String,
    #[serde(default)]
    input: Value,
}

/// `POST /console/api/call`: calls a tool as an agent, under that agent's policy and
/// quotas, and answers with the full report. The call's session names the operator, so
/// its audit record says who tried it; an approval it needs is asked at the console.
pub(super) async fn try_call(
    State(console): State<Arc<Console>>,
    axum::Extension(operator): axum::Extension<Operator>,
    request: Request,
) -> Response {
    let call: TryCall = match json_body(request.into_body(), &console.limits).await {
        Ok(call) => call,
        Err(refused) => return refused,
    };
    let agent = call.agent.trim();
    if agent.is_empty() || agent.len() > MAX_AGENT || agent.chars().any(char::is_control) {
        return error(StatusCode::BAD_REQUEST, format!("name an agent: 1 to {MAX_AGENT} bytes, no control characters"));
    }
    let caller = Caller::new(agent).with_session(format!("console:{}", operator.name));
    tracing::info!(
        operator = %Escaped(&operator.name),
        agent = %Escaped(agent),
        tool = %Escaped(&call.tool),
        "console: a tool is tried"
    );
    let options = CallOptions { approver: Some(console.host.operator_approver()), ..CallOptions::default() };
    let report = console.host.call_with(&caller, &call.tool, call.input, &options).await;
    let mut shown = serde_json::to_value(&report).unwrap_or_else(|_| json!({}));
    shown["caller"] = serde_json::to_value(&report.caller).unwrap_or_default();
    shown["approval"] = serde_json::to_value(&report.approval).unwrap_or_default();
    // The agent was told the tool does not exist; the operator may know why.
    shown["hidden_because"] = report.hidden_because.clone().into();
    axum::Json(shown).into_response()
}
