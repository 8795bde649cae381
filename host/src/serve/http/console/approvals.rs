//! The console's approvals: the calls waiting for a person on every replica, and an operator's answer to one.

use std::sync::Arc;

use axum::extract::{Path, Request, State};
use axum::response::{IntoResponse, Response};
use http::StatusCode;
use serde_json::json;

use super::session::Operator;
use super::{Console, error, json_body};
use crate::host::{AnswerError, MAX_REASON, OperatorAnswer};
use crate::text::Escaped;

/// `GET /console/api/approvals`: the calls waiting for an operator, oldest first.
pub(super) async fn waiting(State(console): State<Arc<Console>>) -> Response {
    match console.host.waiting_approvals().await {
        Ok(approvals) => axum::Json(json!({ "approvals": approvals })).into_response(),
        Err(problem) => error(StatusCode::SERVICE_UNAVAILABLE, problem.to_string()),
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    approve: bool,
    #[serde(default)]
    reason: String,
}

/// `POST /console/api/approvals/{id}` with `{"approve": bool, "reason": "…"}`: the
/// answer, given once, with the operator's name, which the call's audit record keeps.
pub(super) async fn answer(
    State(console): State<Arc<Console>>,
    Path(id): Path<String>,
    axum::Extension(operator): axum::Extension<Operator>,
    request: Request,
) -> Response {
    let answer: Answer = match json_body(request.into_body(), &console.limits).await {
        Ok(answer) => answer,
        Err(refused) => return refused,
    };
    let reason = answer.reason.trim();
    if reason.len() > MAX_REASON {
        return error(StatusCode::BAD_REQUEST, format!("the reason is longer than {MAX_REASON} bytes"));
    }
    let reason = (!reason.is_empty()).then(|| reason.to_owned());
    let given = OperatorAnswer { operator: operator.name.clone(), approved: answer.approve, reason };
    match console.host.answer_approval(&id, given).await {
        Ok(()) => {
            tracing::info!(
                operator = %Escaped(&operator.name),
                id = %Escaped(&id),
                approved = answer.approve,
                "console: an approval was answered"
            );
            axum::Json(json!({ "answered": true })).into_response()
        }
        Err(problem @ AnswerError::NotWaiting) => error(StatusCode::NOT_FOUND, problem.to_string()),
        Err(problem @ AnswerError::AlreadyAnswered) => error(StatusCode::CONFLICT, problem.to_string()),
        Err(problem @ AnswerError::ReasonTooLong) => error(StatusCode::BAD_REQUEST, problem.to_string()),
        Err(problem @ AnswerError::Store(_)) => error(StatusCode::SERVICE_UNAVAILABLE, problem.to_string()),
    }
}
