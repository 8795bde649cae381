//! The Streamable HTTP transport of the MCP server: an axum router around the SDK's session service.
//!
//! The Streamable HTTP transport of the MCP server: an axum router around rmcp's
//! session service, with authentication and the protocol's error answers in front of
//! it ([`crate::serve::http::middleware`]), the `Host`/`Origin` checks against DNS
//! rebinding, health and readiness, and shutdown; served on connections bounded
//! against abusive clients ([`crate::serve::http::connections`], [`HttpLimits`]).

mod auth;
mod connections;
mod console;
mod direct;
mod door;
mod hosts;
mod limits;
mod middleware;
mod oauth;
mod sessions;

pub(crate) use auth::parse_digest;
pub use auth::{LiveTokens, Tokens, digest, new_token};
pub use connections::raise_open_file_limit;
pub use console::{CONSOLE_PATH, ConsoleOptions};
pub use limits::HttpLimits;
pub(crate) use limits::bounds;
pub(crate) use oauth::check_address;
pub use oauth::{OAuth, OAuthSettings};

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use axum::middleware::{from_fn, from_fn_with_state};

use crate::ToolHost;
use crate::policy::Caller;
use crate::serve::mcp::{ApprovalKey, McpServer, Shared};
use crate::upstream::UpstreamState;
use auth::SessionOwners;
use connections::{listen, serve_connections};
use direct::{DirectCalls, DirectSessions};
use door::Authenticator;
use hosts::AllowedHosts;
use middleware::BodyLimits;
use sessions::BoundedSessions;

/// The path the Streamable HTTP endpoint is mounted at.
pub const HTTP_PATH: &str = "/mcp";

/// Hosts accepted in the `Host` header when none are configured: loopback only, on any
/// port, so a page on another site cannot reach a local server by DNS rebinding.
pub const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Options of the Streamable HTTP server.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Hosts (`name` or `name:port`) accepted in the `Host` header, in addition to the
    /// loopback names. Requests naming any other host are refused with 403.
    pub extra_allowed_hosts: Vec<String>,
    /// Bearer tokens and their agents, replaceable while serving. With any, every
    /// request needs one and calls as its agent; with none, every request calls as the
    /// server's caller (only when the server started without tokens: one that started
    /// with tokens refuses every request while an edit has taken them all away).
    pub tokens: LiveTokens,
    /// Serve a non-loopback address without tokens (anyone who reaches it may call).
    pub insecure_no_auth: bool,
    /// How much of the server one client may take: connections, the size and pace of
    /// requests, sessions and their streams.
    pub limits: HttpLimits,
    /// Seals the approval questions of 2026-07-28 clients (and the console's sign-ins);
    /// replicas behind one balancer need the same key. `None`: a key of this process only.
    pub approval_key: Option<ApprovalKey>,
    /// The operator's console at [`CONSOLE_PATH`], when enabled.
    pub console: Option<ConsoleOptions>,
}

impl HttpOptions {
    /// Refuses to serve a non-loopback `addr` without credentials unless the options
    /// say so explicitly.
    pub fn check_exposure(&self, addr: SocketAddr) -> anyhow::Result<()> {
        if addr.ip().is_loopback() || !self.tokens.current().is_empty() {
            return Ok(());
        }
        if !self.insecure_no_auth {
            anyhow::bail!(
                "refusing to serve {addr} without credentials: anyone who can reach it could call tools. \
                 Configure bearer tokens ([[token]] in toolhost.toml, `toolhost token new AGENT`), listen on \
                 loopback, or pass --insecure-no-auth"
            );
        }
        Ok(())
    }

    fn allowed_hosts(&self) -> Vec<String> {
        LOOPBACK_HOSTS.iter().map(|h| (*h).to_owned()).chain(self.extra_allowed_hosts.iter().cloned()).collect()
    }
}

/// Binds `addr` (`host:port`, or a bare port meaning `127.0.0.1:port`) for
/// [`serve_http_on`]. Port 0 picks a free port; the listener knows which.
pub async fn bind(addr: &str) -> anyhow::Result<tokio::net::TcpListener> {
    let listener = match addr.parse::<u16>() {
        Ok(port) => listen((std::net::Ipv4Addr::LOCALHOST, port).into()),
        Err(_) => listen_on_any(addr).await,
    };
    listener.map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))
}

/// Listens on the first address `addr` resolves to that can be bound.
async fn listen_on_any(addr: &str) -> std::io::Result<tokio::net::TcpListener> {
    let mut failure = None;
    for candidate in tokio::net::lookup_host(addr).await? {
        match listen(candidate) {
            Ok(listener) => return Ok(listener),
            Err(e) => failure = Some(e),
        }
    }
    Err(failure.unwrap_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address to listen on")))
}

/// Serves MCP over Streamable HTTP at `http://ADDR/mcp` until Ctrl-C or SIGTERM.
pub async fn serve_http(host: ToolHost, caller: Caller, addr: SocketAddr, options: HttpOptions) -> anyhow::Result<()> {
    let listener = listen(addr).map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    serve_http_on(host, caller, listener, options, shutdown_signal()).await
}

/// Serves MCP over Streamable HTTP on a bound listener until `shutdown` completes; open
/// sessions and their event streams are closed then, and the server returns when every
/// connection has closed. Raises the process's soft limit on open files to its hard
/// limit (a connection is a file).
pub async fn serve_http_on(
    host: ToolHost,
    caller: Caller,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let addr = listener.local_addr()?;
    options.check_exposure(addr)?;
    if !addr.ip().is_loopback() && options.tokens.current().is_empty() {
        tracing::warn!(%addr, "serving a non-loopback address without credentials (--insecure-no-auth)");
    }
    let limits = options.limits.clone();
    let approval_key = match options.approval_key.clone() {
        Some(shared) => shared,
        None => ApprovalKey::random().map_err(|e| anyhow::anyhow!("no randomness for the approval key: {e}"))?,
    };
    let (router, stop) = http_router(host, caller, options, approval_key);
    serve_connections(listener, router, &limits, shutdown, move || stop.cancel()).await;
    Ok(())
}

/// The axum router serving MCP at [`HTTP_PATH`] (and health and readiness), and the
/// token that closes its sessions and event streams.
fn http_router(
    host: ToolHost,
    caller: Caller,
    options: HttpOptions,
    approval_key: ApprovalKey,
) -> (axum::Router, tokio_util::sync::CancellationToken) {
    let limits = &options.limits;
    let config = StreamableHttpServerConfig::default()
        // The Host and Origin checks are `hosts::check_host_and_origin`, in front of
        // every route that answers with data, this one included.
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(limits.max_body_size);
    let stop = config.cancellation_token.clone();
    let direct_sessions = Arc::new(DirectSessions::default());
    let shared_caller = caller.clone();
    let approve_via = options.console.as_ref().map(|console| console.approve_via).unwrap_or_default();
    let console = console_router(&host, &caller, &options, &approval_key, stop.child_token());
    let shared = Shared::start(host.clone(), caller, approval_key, Some(direct_sessions.clone()), approve_via);
    let sessions = BoundedSessions::new(limits, DirectCalls::new(McpServer::new(shared.clone()), direct_sessions));
    tokio::spawn(sessions.clone().close_idle(stop.child_token()));
    // One handler per session (and per stateless request): each session's handler
    // forwards registry changes to its own client.
    let service = StreamableHttpService::new(move || Ok(McpServer::new(shared.clone())), sessions.clone(), config);
    let body_limits = BodyLimits { max_size: limits.max_body_size, timeout: limits.body_timeout };
    // The layer added last runs first: authentication, then the body (its size and
    // pace), the agent's quota, the session's streams, and the protocol's answers.
    let mut mcp = axum::Router::new()
        .route_service(HTTP_PATH, service)
        .route_layer(from_fn(middleware::cancel_on_disconnect))
        .route_layer(from_fn(middleware::no_content_on_delete))
        .route_layer(from_fn_with_state(sessions.clone(), middleware::limit_streams))
        .route_layer(from_fn_with_state((host.clone(), shared_caller.clone()), middleware::quotas))
        .route_layer(from_fn_with_state(body_limits, middleware::json_rpc_errors));
    let allowed = AllowedHosts::new(&options.allowed_hosts());
    let metrics_state = (host.clone(), shared_caller);
    let mut metrics = axum::Router::new().route("/metrics", axum::routing::get(metrics_text).with_state(metrics_state));
    let open_without_tokens = options.tokens.current().is_empty();
    let owners = SessionOwners::default();
    let metadata = resource_metadata(options.tokens.clone());
    let auth = Arc::new(Authenticator { tokens: options.tokens, open_without_tokens, owners, sessions });
    mcp = mcp.route_layer(from_fn_with_state(auth.clone(), door::authenticate));
    metrics = metrics.route_layer(from_fn_with_state(auth, door::authenticate));
    // Before anything else: a request for another site's name (DNS rebinding) or from
    // another site's page reaches no route that answers with data.
    mcp = mcp.route_layer(from_fn_with_state(allowed.clone(), hosts::check_host_and_origin));
    metrics = metrics.route_layer(from_fn_with_state(allowed, hosts::check_host_and_origin));
    let mut router = mcp.merge(metrics).merge(probes(host)).merge(metadata);
    if let Some(console) = console {
        router = router.merge(console);
    }
    (router, stop)
}

/// The operator's console, when the options enable it.
fn console_router(
    host: &ToolHost,
    caller: &Caller,
    options: &HttpOptions,
    approval_key: &ApprovalKey,
    stop: tokio_util::sync::CancellationToken,
) -> Option<axum::Router> {
    let parts = console::ConsoleParts {
        host: host.clone(),
        approval_key,
        agents: options.tokens.clone(),
        default_caller: caller.clone(),
        limits: options.limits.clone(),
        allowed: AllowedHosts::new(&options.allowed_hosts()),
        stop,
    };
    Some(console::router(options.console.clone()?, parts))
}

/// The Protected Resource Metadata of OAuth, at its well-known path with and without
/// the resource's path after it (RFC 9728 puts `/mcp` there), without credentials.
fn resource_metadata(tokens: LiveTokens) -> axum::Router {
    use axum::routing::get;
    let path_after = format!("{}/{{*resource}}", oauth::METADATA_PATH);
    axum::Router::new()
        .route(oauth::METADATA_PATH, get(door::resource_metadata))
        .route(&path_after, get(door::resource_metadata))
        .with_state(tokens)
}

/// `GET /health` (the process answers) and `GET /ready` (the first load finished and
/// the registry serves; 503 `loading` until then): for load balancers and orchestrators, without credentials.
/// They say how many tools, load errors and upstream servers in each state
/// (`connecting`, `connected`, `failed`) there are, never which.
fn probes(host: ToolHost) -> axum::Router {
    use axum::routing::get;
    let ready = move || {
        let host = host.clone();
        async move {
            let snapshot = host.snapshot();
            // While the first load runs, the server answers what is loaded, but a
            // balancer should send its traffic to replicas that serve everything.
            let (status, code) = match host.is_loaded() {
                true => ("ready", http::StatusCode::OK),
                false => ("loading", http::StatusCode::SERVICE_UNAVAILABLE),
            };
            let mut upstreams: std::collections::BTreeMap<&str, usize> = Default::default();
            for status in host.upstreams().await {
                let state = match status.state {
                    UpstreamState::Connecting => "connecting",
                    UpstreamState::Connected { .. } => "connected",
                    UpstreamState::Failed { .. } => "failed",
                };
                *upstreams.entry(state).or_default() += 1;
            }
            let body = serde_json::json!({
                "status": status,
                "tools": snapshot.tools.len(),
                "load_errors": snapshot.load_errors().count(),
                "upstream_servers": upstreams,
                "generation": snapshot.generation,
            });
            (code, axum::Json(body))
        }
    };
    axum::Router::new()
        .route("/health", get(|| async { axum::Json(serde_json::json!({ "status": "ok" })) }))
        .route("/ready", get(ready))
}

/// `GET /metrics`: the host's numbers in the Prometheus text format, with the series
/// of the tools the caller may see (the token's agent when the server has tokens, else
/// the server's caller); 404 when the host counts nothing.
async fn metrics_text(
    axum::extract::State((host, caller)): axum::extract::State<(ToolHost, Caller)>,
    authenticated: Option<axum::Extension<crate::serve::mcp::Authenticated>>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let caller = match authenticated {
        Some(axum::Extension(authenticated)) => Caller::new(authenticated.agent),
        None => caller,
    };
    match host.metrics_text_for(&caller) {
        Some(text) => {
            ([(http::header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")], text).into_response()
        }
        None => (http::StatusCode::NOT_FOUND, "this host keeps no metrics\n").into_response(),
    }
}

/// Completes on Ctrl-C or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
