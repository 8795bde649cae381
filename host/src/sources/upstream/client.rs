//! Connecting to an upstream server with rmcp's client, over either transport.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::mpsc;

use super::{UpstreamServer, UpstreamTransport};

/// A live connection.
pub(super) type Connection = RunningService<RoleClient, Listener>;

/// The client side's handler: it only passes on that the server's tools changed.
pub(super) struct Listener {
    changed: mpsc::Sender<()>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // One pending re-list covers any number of notifications.
        let _ = self.changed.try_send(());
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
    }
}

/// Starts or reaches `server` and completes MCP's initialization. `changed` hears of
/// every `notifications/tools/list_changed`. Errors say what failed without any secret.
pub(super) async fn connect(server: &UpstreamServer, changed: mpsc::Sender<()>) -> Result<Connection, String> {
    let listener = Listener { changed };
    match &server.transport {
        UpstreamTransport::Command { program, args, env, cwd } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args).env_clear();
            for (child_name, host_name) in env {
                if let Some(value) = std::env::var_os(host_name) {
                    command.env(child_name, value);
                }
            }
            if let Some(cwd) = cwd {
                command.current_dir(cwd);
            }
            // The server's stderr is its log, not ours to show: a guest's text is data.
            let (process, _) = TokioChildProcess::builder(command)
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot start `{program}`: {e}"))?;
            listener.serve(process).await.map_err(|e| format!("`{program}` did not initialize: {e}"))
        }
        UpstreamTransport::Http { url, headers } => {
            let mut custom_headers = HashMap::new();
            for (name, secret) in headers {
                let header = http::HeaderName::try_from(name.as_str())
                    .map_err(|_| format!("`{name}` is not a valid header name"))?;
                let value = secret.read().map_err(|problem| format!("header `{name}`: {problem}"))?;
                let mut value = http::HeaderValue::try_from(value)
                    .map_err(|_| format!("header `{name}`: its value is not a valid header value"))?;
                // Kept out of the HTTP stack's own debug output.
                value.set_sensitive(true);
                custom_headers.insert(header, value);
            }
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom_headers);
            let transport = StreamableHttpClientTransport::with_client(http_client()?, config);
            listener.serve(transport).await.map_err(|e| format!("{url} did not initialize: {e}"))
        }
    }
}

/// An HTTP client that writes small messages at once (`TCP_NODELAY`), verifies servers
/// against the webpki roots with the host's rustls provider, and follows no redirect:
/// the configured headers (credentials) go to the configured URL and nowhere else.
fn http_client() -> Result<reqwest::Client, String> {
    let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.to_vec() };
    let tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS configuration: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .tcp_nodelay(true)
        .redirect(reqwest::redirect::Policy::none())
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| format!("HTTP client: {e}"))
}
