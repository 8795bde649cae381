//! Connecting to an upstream server with rmcp's client, over either transport.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use tokio::sync::mpsc;

use super::children::{self, ChildGroup};
use super::progress::ProgressRoutes;
use super::sandbox::{self, ChildSandbox};
use super::stdio::{ChildStdio, Unreadable};
use super::{UpstreamServer, UpstreamTransport};
use crate::redact::Redactor;

/// A live connection.
pub(super) type Connection = RunningService<RoleClient, Listener>;

/// The client side's handler: it passes on that the server's tools changed, and its
/// progress notifications to the calls they are for.
pub(super) struct Listener {
    changed: mpsc::Sender<()>,
    pub(super) progress: ProgressRoutes,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        // One pending re-list covers any number of notifications.
        let _ = self.changed.try_send(());
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.deliver(params);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("toolhost", env!("CARGO_PKG_VERSION")))
    }
}

/// A live connection, and what goes with it.
pub(super) struct Connected {
    pub(super) connection: Connection,
    /// A child's process group: ended when this is dropped, so kept as long as the
    /// connection.
    pub(super) child_group: Option<ChildGroup>,
    /// Blanks the credentials sent to the server out of everything it answers.
    pub(super) redactor: Arc<Redactor>,
    /// The tools its listings left out because they could not be read.
    pub(super) unreadable: Unreadable,
}

/// Starts a server's child, confined by `sandbox` (when it is), its stderr logged:
/// the transport over its stdin and stdout, and its process group.
fn start(
    server: &str,
    mut command: tokio::process::Command,
    sandbox: Option<&ChildSandbox>,
    unreadable: Unreadable,
) -> Result<(ChildStdio, ChildGroup), String> {
    let program = command.as_std().get_program().to_string_lossy().into_owned();
    let prepared = sandbox.map(|sandbox| sandbox::prepare(server, sandbox)).transpose()?;
    children::lead_own_group(&mut command);
    let pids = prepared.and_then(|prepared| prepared.apply(&mut command));
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let spawned = command.spawn();
    // The ruleset and the cgroup's file are the child's now.
    drop(command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            let confined = if sandbox.is_some() { " in its sandbox" } else { "" };
            ChildGroup::led_by(None, pids);
            return Err(format!("cannot start `{program}`{confined}: {e}"));
        }
    };
    let group = ChildGroup::led_by(child.id(), pids);
    if let Some(stderr) = child.stderr.take() {
        tokio::spawn(log_stderr(server.to_owned(), stderr));
    }
    let (Some(stdin), Some(stdout), Some(group)) = (child.stdin.take(), child.stdout.take(), group) else {
        return Err(format!("`{program}` exited as it started"));
    };
    // The child is reaped by the runtime once it exits; its group ends it.
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Ok((ChildStdio::new(stdin, stdout, unreadable), group))
}

/// Starts or reaches `server` and completes MCP's initialization. `changed` hears of
/// every `notifications/tools/list_changed`. Errors say what failed without any secret.
pub(super) async fn connect(server: &UpstreamServer, changed: mpsc::Sender<()>) -> Result<Connected, String> {
    let listener = Listener { changed, progress: ProgressRoutes::default() };
    match &server.transport {
        UpstreamTransport::Command { program, args, env, cwd, sandbox } => {
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
            let unreadable = Unreadable::default();
            let (transport, child_group) = start(&server.name, command, sandbox.as_ref(), unreadable.clone())?;
            let connection = listener
                .serve(transport)
                .await
                .map_err(|e| format!("`{program}` did not initialize: {}", problem(&e)))?;
            Ok(Connected { connection, child_group: Some(child_group), redactor: Arc::default(), unreadable })
        }
        UpstreamTransport::Http { url, headers } => {
            let (mut custom_headers, mut secrets) = (HashMap::new(), Vec::new());
            for (name, secret) in headers {
                let header = http::HeaderName::try_from(name.as_str())
                    .map_err(|_| format!("`{name}` is not a valid header name"))?;
                let value = secret.read().map_err(|problem| format!("header `{name}`: {problem}"))?;
                if !matches!(secret, super::Secret::Plain(_)) || is_credential(&header) {
                    secrets.extend(secret.value_without_prefix(&value).map(str::to_owned));
                    // `Bearer TOKEN`, `Basic CREDENTIALS`: the part after the scheme too.
                    secrets.extend(value.split_once(' ').map(|(_, credentials)| credentials.trim().to_owned()));
                    secrets.push(value.clone());
                }
                let mut value = http::HeaderValue::try_from(value)
                    .map_err(|_| format!("header `{name}`: its value is not a valid header value"))?;
                // Kept out of the HTTP stack's own debug output.
                value.set_sensitive(true);
                custom_headers.insert(header, value);
            }
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom_headers);
            let transport = StreamableHttpClientTransport::with_client(crate::tls::http_client()?, config);
            let redactor = Arc::new(Redactor::new(secrets.iter().map(String::as_str)));
            let connection = listener
                .serve(transport)
                .await
                .map_err(|e| redactor.text(&format!("{url} did not initialize: {}", problem(&e))).into_owned())?;
            Ok(Connected { connection, child_group: None, redactor, unreadable: Unreadable::default() })
        }
    }
}

/// An error of the MCP client library in toolhost's words: its transport errors
/// without the transport's type name (`Transport [rmcp::…<reqwest::Client>] error: `).
pub(super) fn problem(error: &dyn std::fmt::Display) -> String {
    let mut text = error.to_string();
    while let Some(start) = text.find("Transport [") {
        let Some(end) = text[start..].find("] error: ") else { break };
        text.replace_range(start..start + end + "] error: ".len(), "");
    }
    text
}

/// Whether a header written in the configuration itself carries a credential.
fn is_credential(name: &http::HeaderName) -> bool {
    name == http::header::AUTHORIZATION || name == http::header::COOKIE || name == http::header::PROXY_AUTHORIZATION
}

/// The longest stderr line of a server logged; the rest of it is counted, not kept.
const MAX_STDERR_LINE: usize = 1024;
/// The most stderr lines of a server logged per second; the others are counted.
const MAX_STDERR_LINES_PER_SECOND: u32 = 20;

/// Logs a server's stderr at `info`, escaped, a line at most [`MAX_STDERR_LINE`] bytes
/// and at most [`MAX_STDERR_LINES_PER_SECOND`] lines a second, until it closes.
async fn log_stderr(server: String, stderr: tokio::process::ChildStderr) {
    let mut reader = tokio::io::BufReader::new(stderr);
    let (mut window, mut logged, mut dropped) = (std::time::Instant::now(), 0u32, 0u64);
    let mut line = Vec::with_capacity(MAX_STDERR_LINE);
    while let Ok((1.., cut)) = bounded_line(&mut reader, &mut line, MAX_STDERR_LINE).await {
        if window.elapsed() >= std::time::Duration::from_secs(1) {
            if dropped > 0 {
                tracing::info!(server = %server, "stderr: {dropped} lines not logged");
            }
            (window, logged, dropped) = (std::time::Instant::now(), 0, 0);
        }
        if logged < MAX_STDERR_LINES_PER_SECOND {
            logged += 1;
            let text = String::from_utf8_lossy(&line);
            let cut = if cut { " (line cut)" } else { "" };
            tracing::info!(server = %server, "stderr: {}{cut}", crate::text::Escaped(text.trim_end()));
        } else {
            dropped += 1;
        }
        line.clear();
    }
}

/// Reads one line into `line`, keeping at most `max` bytes of it and skipping the rest:
/// the bytes read (0 at the end) and whether the line was cut.
async fn bounded_line(
    reader: &mut (impl tokio::io::AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<(usize, bool)> {
    use tokio::io::AsyncBufReadExt;
    let (mut read, mut cut) = (0, false);
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok((read, cut));
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let take = newline.map_or(available.len(), |at| at + 1);
        let room = max.saturating_sub(line.len());
        line.extend_from_slice(&available[..take.min(room)]);
        cut |= take > room;
        reader.consume(take);
        read += take;
        if newline.is_some() {
            return Ok((read, cut));
        }
    }
}
