//! The Streamable HTTP transport of the MCP server: an axum router around rmcp's
//! session service, the `Host`/`Origin` checks against DNS rebinding, and shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpStream;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use crate::ToolHost;
use crate::policy::Caller;
use crate::serve::mcp::{McpServer, Shared};

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
}

impl HttpOptions {
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
    if !addr.ip().is_loopback() {
        tracing::warn!(%addr, "the MCP server listens on a non-loopback address: anyone who can reach it can call tools");
    }
    let (router, stop) = http_router(host, caller, &options);
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

/// The axum router serving MCP at [`HTTP_PATH`], and a function that closes its
/// sessions and event streams (the SDK's cancellation token, without naming its type).
fn http_router(host: ToolHost, caller: Caller, options: &HttpOptions) -> (axum::Router, Box<dyn Fn() + Send + Sync>) {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(options.allowed_hosts())
        .with_allowed_origins(options.allowed_origins());
    let stop = config.cancellation_token.clone();
    let shared = Arc::new(Shared::new(host, caller));
    // One handler per session (and per stateless request): each session's handler
    // forwards registry changes to its own client.
    let service = StreamableHttpService::new(
        move || Ok(McpServer::new(shared.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let router = axum::Router::new().route_service(HTTP_PATH, service);
    (router, Box::new(move || stop.cancel()))
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
        let options = HttpOptions { extra_allowed_hosts: vec!["tools.example:8443".into()] };
        let origins = options.allowed_origins();
        assert!(origins.contains(&"http://localhost:*".to_owned()));
        assert!(origins.contains(&"http://[::1]:*".to_owned()));
        assert!(origins.contains(&"https://tools.example:8443".to_owned()));
    }
}
