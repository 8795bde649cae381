//! Who comes in over HTTP: a bearer token of the server's own or an OAuth access token, each standing for an agent.
//!
//! Every request to `/mcp` and `/metrics` passes here first (after the `Host` and
//! `Origin` checks). A token the server was configured with stands for its agent; when
//! OAuth is configured, any other token is checked as an access token of the issuer
//! ([`crate::serve::http::oauth`]). A request let in carries its agent
//! ([`Authenticated`]), and may use only sessions that agent opened: another agent's
//! session gets the answer of a session that does not exist. The Protected Resource
//! Metadata that tells clients where to get a token is served here as well, to anyone.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, Method, StatusCode, header};

use crate::serve::http::auth::{LiveTokens, SessionOwners, Tokens, digest};
use crate::serve::http::middleware::plain;
use crate::serve::http::oauth::{OAuth, Refusal};
use crate::serve::http::sessions::BoundedSessions;
use crate::serve::mcp::{Authenticated, SESSION_HEADER};

/// What authentication checks requests with.
pub(crate) struct Authenticator {
    pub(crate) tokens: LiveTokens,
    /// Whether the server may answer without credentials while it has no token: it
    /// started without any (on loopback, or told to). A server that started with tokens
    /// refuses every request once an edit takes all of them away.
    pub(crate) open_without_tokens: bool,
    pub(crate) owners: SessionOwners,
    pub(crate) sessions: Arc<BoundedSessions>,
}

/// Lets through requests with a valid token, marked with the agent it stands for, and
/// only into sessions that agent opened; answers the rest `401` with the
/// `WWW-Authenticate` challenge (`403` for an access token without a required scope,
/// `503` while the issuer's keys cannot be read), or as an unknown session.
pub(crate) async fn authenticate(State(auth): State<Arc<Authenticator>>, mut request: Request, next: Next) -> Response {
    let tokens = auth.tokens.current();
    if tokens.is_empty() && auth.open_without_tokens {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")))
        .map(|token| token.trim().to_owned());
    let agent = match agent_of(&tokens, presented.as_deref()).await {
        Ok(agent) => agent,
        Err(refusal) => return refusal,
    };
    let session = request.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let Some(session) = &session
        && !auth.owners.may_use(session, &agent)
    {
        tracing::info!(agent = %crate::text::Escaped(&agent), "refused a request into another agent's MCP session");
        return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
    }
    let closing = request.method() == Method::DELETE;
    request.extensions_mut().insert(Authenticated { agent: agent.clone() });
    let response = next.run(request).await;
    let opened = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok());
    match (&session, opened) {
        (None, Some(opened)) => {
            if auth.owners.needs_sweep() {
                auth.owners.keep_only(&auth.sessions.live_ids());
            }
            auth.owners.bind(opened, &agent);
        }
        (Some(session), _) if closing && response.status().is_success() => auth.owners.forget(session),
        _ => {}
    }
    response
}

/// The agent `presented` stands for: a configured token's, else an access token's.
async fn agent_of(tokens: &Tokens, presented: Option<&str>) -> Result<String, Response> {
    let Some(token) = presented else {
        return Err(refused(tokens.oauth(), None));
    };
    // One digest, for the server's own tokens and the verified access tokens alike.
    let digest = digest(token);
    if let Some(agent) = tokens.agent_for_digest(&digest) {
        return Ok(agent.to_owned());
    }
    let Some(oauth) = tokens.oauth() else {
        return Err(refused(None, Some(Refusal::Invalid("the token is not valid for this server"))));
    };
    oauth.agent_for(token, digest, |agent| tokens.stands_for(agent)).await.map_err(|refusal| {
        tracing::debug!(?refusal, "refused an OAuth access token");
        refused(Some(oauth), Some(refusal))
    })
}

/// The answer to a request let in by no token: `refusal` (`None`: none was presented),
/// with the challenge that tells the client what to do.
fn refused(oauth: Option<&OAuth>, refusal: Option<Refusal>) -> Response {
    let (status, text) = match refusal {
        Some(Refusal::InsufficientScope) => (StatusCode::FORBIDDEN, "Forbidden: the token lacks a required scope"),
        Some(Refusal::KeysUnavailable) => (
            StatusCode::SERVICE_UNAVAILABLE,
            "Service Unavailable: the token issuer's keys cannot be read; retry later",
        ),
        _ => (StatusCode::UNAUTHORIZED, "Unauthorized: a valid bearer token is required"),
    };
    let challenge = match (oauth, refusal) {
        (Some(oauth), _) => oauth.challenge(refusal),
        // RFC 6750: a request without credentials gets the bare challenge; one with a
        // bad token is told the token is invalid.
        (None, Some(Refusal::Invalid(_))) => HeaderValue::from_static(
            r#"Bearer realm="toolhost", error="invalid_token", error_description="the token is not valid for this server""#,
        ),
        (None, _) => HeaderValue::from_static(r#"Bearer realm="toolhost""#),
    };
    let mut response = plain(status, text);
    response.headers_mut().insert(header::WWW_AUTHENTICATE, challenge);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    }
    response
}

/// `GET /.well-known/oauth-protected-resource[/…]`: the Protected Resource Metadata,
/// to anyone and from any page (it is public by design); `404` without OAuth.
pub(crate) async fn resource_metadata(State(tokens): State<LiveTokens>) -> Response {
    let tokens = tokens.current();
    let Some(oauth) = tokens.oauth() else {
        return plain(StatusCode::NOT_FOUND, "Not Found: this server takes no OAuth access tokens");
    };
    let mut response = axum::Json(oauth.metadata()).into_response();
    response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}
