//! The Streamable HTTP transport of the MCP server: an axum router around rmcp's
//! session service, with authentication and the protocol's error answers in front of
//! it ([`crate::serve::middleware`]), the `Host`/`Origin` checks against DNS
//! rebinding, health and readiness, and shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpStream;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use axum::middleware::{from_fn, from_fn_with_state};

use crate::ToolHost;
use crate::policy::Caller;
use crate::serve::auth::{SessionOwners, Tokens};
use crate::serve::mcp::{McpServer, Shared};
use crate::serve::middleware::{self, Authenticator};

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
    /// Bearer tokens and their agents. With any, every request needs one and calls as
    /// its agent; with none, every request calls as the server's caller.
    pub tokens: Tokens,
    /// Serve a non-loopback address without tokens (anyone who reaches it may call).
    pub insecure_no_auth: bool,
}

impl HttpOptions {
    /// Refuses to serve a non-loopback `addr` without credentials unless the options
    /// say so explicitly.
    pub fn check_exposure(&self, addr: SocketAddr) -> anyhow::Result<()> {
        if addr.ip().is_loopback() || !self.tokens.is_empty() {
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

    /// Browser origins accepted in an `Origin` header (requests without one pass): the
    /// allowed hosts over http and https, any port unless the host names one.
    fn allowed_origins(&self) -> Vec<String> {
        let mut origins = Vec::new();
        for host in self.allowed_hosts() {
            let host = if host.contains(':') && !host.starts_with('[') && host.matches(':').count() > 1 {
                format!("[{host}]") // a bare IPv6 address
            } else {
                host
            };
            let has_port = host.rsplit_once(':').is_some_and(|(_, port)| port.parse::<u16>().is_ok());
            for scheme in ["http", "https"] {
                origins.push(if has_port { format!("{scheme}://{host}") } else { format!("{scheme}://{host}:*") });
            }
        }
        origins
    }
}

/// Binds `addr` (`host:port`, or a bare port meaning `127.0.0.1:port`) for
/// [`serve_http_on`]. Port 0 picks a free port; the listener knows which.
pub async fn bind(addr: &str) -> anyhow::Result<tokio::net::TcpListener> {
    let listener = match addr.parse::<u16>() {
        Ok(port) => tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port)).await,
        Err(_) => tokio::net::TcpListener::bind(addr).await,
    };
    listener.map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))
}

/// Serves MCP over Streamable HTTP at `http://ADDR/mcp` until Ctrl-C or SIGTERM.
pub async fn serve_http(host: ToolHost, caller: Caller, addr: SocketAddr, options: HttpOptions) -> anyhow::Result<()> {
    let listener =
        tokio::net::TcpListener::bind(addr).await.map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))?;
    serve_http_on(host, caller, listener, options, shutdown_signal()).await
}

/// Serves MCP over Streamable HTTP on a bound listener until `shutdown` completes; open
/// sessions and their event streams are closed then.
pub async fn serve_http_on(
    host: ToolHost,
    caller: Caller,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let addr = listener.local_addr()?;
    options.check_exposure(addr)?;
    if !addr.ip().is_loopback() && options.tokens.is_empty() {
        tracing::warn!(%addr, "serving a non-loopback address without credentials (--insecure-no-auth)");
    }
    let (router, stop) = http_router(host, caller, options);
    axum::serve(without_delay(listener), router)
        .with_graceful_shutdown(async move {
            shutdown.await;
            stop();
        })
        .await?;
    Ok(())
}

/// The listener, its accepted connections sending without Nagle's delay: an answer goes
/// out in more than one segment, and a client that delays its acknowledgements (as
/// Linux clients do) would hold the second one back for ~40 ms on every call.
fn without_delay(listener: tokio::net::TcpListener) -> axum::serve::TapIo<tokio::net::TcpListener, fn(&mut TcpStream)> {
    use axum::serve::ListenerExt;
    fn no_delay(tcp: &mut TcpStream) {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::warn!("cannot turn off Nagle's algorithm on a connection: {e}");
        }
    }
    listener.tap_io(no_delay)
}

/// The axum router serving MCP at [`HTTP_PATH`] (and health and readiness), and a
/// function that closes its sessions and event streams (the SDK's cancellation token,
/// without naming its type).
fn http_router(host: ToolHost, caller: Caller, options: HttpOptions) -> (axum::Router, Box<dyn Fn() + Send + Sync>) {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts())
        .with_allowed_origins(options.allowed_origins());
    let stop = config.cancellation_token.clone();
    let sessions = Arc::new(LocalSessionManager::default());
    let shared = Arc::new(Shared::new(host.clone(), caller));
    // One handler per session (and per stateless request): each session's handler
    // forwards registry changes to its own client.
    let service = StreamableHttpService::new(move || Ok(McpServer::new(shared.clone())), sessions.clone(), config);
    // The layer added last runs first: authentication, then the protocol's answers.
    let mut mcp = axum::Router::new()
        .route_service(HTTP_PATH, service)
        .route_layer(from_fn(middleware::cancel_on_disconnect))
        .route_layer(from_fn(middleware::no_content_on_delete))
        .route_layer(from_fn(middleware::json_rpc_errors));
    let mut metrics = axum::Router::new().route("/metrics", axum::routing::get(metrics_text).with_state(host.clone()));
    if !options.tokens.is_empty() {
        let auth = Arc::new(Authenticator { tokens: options.tokens, owners: SessionOwners::default(), sessions });
        mcp = mcp.route_layer(from_fn_with_state(auth.clone(), middleware::authenticate));
        metrics = metrics.route_layer(from_fn_with_state(auth, middleware::authenticate));
    }
    let router = mcp.merge(metrics).merge(probes(host));
    (router, Box::new(move || stop.cancel()))
}

/// `GET /health` (the process answers) and `GET /ready` (the first load finished and
/// the registry serves): for load balancers and orchestrators, without credentials.
/// They say how many tools and load errors there are, never which.
fn probes(host: ToolHost) -> axum::Router {
    use axum::routing::get;
    let ready = move || {
        let host = host.clone();
        async move {
            let snapshot = host.snapshot();
            let body = serde_json::json!({
                "status": "ready",
                "tools": snapshot.tools.len(),
                "load_errors": snapshot.load_errors().count(),
                "generation": snapshot.generation,
            });
            axum::Json(body)
        }
    };
    axum::Router::new()
        .route("/health", get(|| async { axum::Json(serde_json::json!({ "status": "ok" })) }))
        .route("/ready", get(ready))
}

/// `GET /metrics`: the host's numbers in the Prometheus text format (with credentials
/// when the server has tokens: any agent's); 404 when the host counts nothing.
async fn metrics_text(axum::extract::State(host): axum::extract::State<ToolHost>) -> axum::response::Response {
    use axum::response::IntoResponse;
    match host.metrics_text() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_connections_send_without_delay() {
        use axum::serve::Listener;
        let mut listener = without_delay(tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap());
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(tokio::net::TcpStream::connect(addr));
        let (accepted, _) = listener.accept().await;
        assert!(accepted.nodelay().unwrap(), "TCP_NODELAY on the accepted socket");
        let client = client.await.unwrap().unwrap();
        assert!(!client.nodelay().unwrap(), "and only there: the client's socket keeps its default");
    }

    #[test]
    fn origins_follow_the_allowed_hosts() {
        let options = HttpOptions { extra_allowed_hosts: vec!["tools.example:8443".into()], ..HttpOptions::default() };
        let origins = options.allowed_origins();
        assert!(origins.contains(&"http://localhost:*".to_owned()));
        assert!(origins.contains(&"http://[::1]:*".to_owned()));
        assert!(origins.contains(&"https://tools.example:8443".to_owned()));
    }
}
