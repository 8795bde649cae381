//! JSON lines on stdin and stdout as the SDK's transport, with `tools/call` run by the task that read it.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::Duration;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, JsonRpcRequest, RequestId, ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RoleServer};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use super::message;
use crate::serve::mcp::{CallsInFlight, McpServer, cancelled_request, poll_call, start_inline};

/// The longest line accepted, in bytes.
pub const MAX_LINE: usize = 16 << 20;

/// How long calls still running at the end of input may take to answer: the SDK's grace
/// for its own handlers.
const CLOSING_GRACE: Duration = Duration::from_secs(5);

type Reader = BufReader<Pin<Box<dyn AsyncRead + Send>>>;
type Writer = Arc<tokio::sync::Mutex<Pin<Box<dyn AsyncWrite + Send>>>>;

/// JSON-RPC over newline-delimited lines.
pub(crate) struct JsonLines {
    reader: Reader,
    writer: Writer,
    /// The line read so far (reads may stop midway: `receive` is cancelled when the
    /// server has something else to do).
    line: Vec<u8>,
    /// The current line is over [`MAX_LINE`]: its rest is skipped.
    overlong: bool,
    /// Set once the session is initialized; until then every message goes to the SDK.
    inline: Arc<OnceLock<InlineCalls>>,
    calls: Arc<CallsInFlight>,
}

/// What a `tools/call` needs to run outside the SDK's service loop: the session's
/// handler, and its peer (for approvals asked of the client, and progress).
pub(crate) struct InlineCalls {
    pub handler: Arc<McpServer>,
    pub peer: Peer<RoleServer>,
}

/// Runs `work` on the current task until it first waits, and on a task of its own from
/// then on. Returns without waiting, so a caller that may be cancelled at its next
/// `.await` loses nothing. A panic ends only the work, as it would on its own task.
async fn run_here_first(mut work: CallWork) {
    let first = std::future::poll_fn(|context| Poll::Ready(poll_call(&mut work, context)));
    if first.await.is_pending() {
        tokio::spawn(work);
    }
}

impl JsonLines {
    /// This process's stdin and stdout.
    pub fn stdio() -> JsonLines {
        let (reader, writer) = stdio_streams();
        JsonLines::new(reader, writer)
    }

    pub fn new(reader: Pin<Box<dyn AsyncRead + Send>>, writer: Pin<Box<dyn AsyncWrite + Send>>) -> JsonLines {
        JsonLines {
            reader: BufReader::with_capacity(64 << 10, reader),
            writer: Arc::new(tokio::sync::Mutex::new(writer)),
            line: Vec::new(),
            overlong: false,
            inline: Arc::new(OnceLock::new()),
            calls: Arc::new(CallsInFlight::default()),
        }
    }

    /// Where the server puts the session's handler and peer once it is initialized;
    /// from then on this transport runs `tools/call` itself.
    pub fn inline_calls(&self) -> Arc<OnceLock<InlineCalls>> {
        self.inline.clone()
    }

    /// Whether the SDK handles `message` or this transport runs it.
    fn route(&self, message: ClientJsonRpcMessage) -> Route {
        let Some(inline) = self.inline.get() else {
            return Route::Sdk(Box::new(message));
        };
        if let Some(id) = cancelled_request(&message) {
            // Ours to stop; the notification goes on to the SDK, which stops its own.
            self.calls.cancel(id);
        }
        match message {
            JsonRpcMessage::Request(JsonRpcRequest {
                id,
                request: request @ ClientRequest::CallToolRequest(_),
                ..
            }) => Route::Here(self.call(inline, id, request)),
            message => Route::Sdk(Box::new(message)),
        }
    }

    /// A `tools/call` run as the SDK runs a request (`start_inline`), answered on
    /// this transport.
    fn call(&self, inline: &InlineCalls, id: RequestId, request: ClientRequest) -> CallWork {
        let (running, work) = start_inline(&self.calls, inline.handler.clone(), inline.peer.clone(), id, request);
        let writer = self.writer.clone();
        Box::pin(async move {
            // In flight until its answer is written: the end of input waits for that.
            let _running = running;
            let Some(answer) = work.await else { return };
            match serde_json::to_vec(&answer) {
                Ok(line) => {
                    if let Err(e) = write_line(&writer, line).await {
                        tracing::debug!("stdout failed: {e}");
                    }
                }
                Err(e) => tracing::error!("a call's answer is not JSON: {e}"),
            }
        })
    }

    /// The next complete line, or `None` at the end of input. Cancel safe: what was read
    /// stays in `self.line`.
    async fn next_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                // The last line may lack its newline.
                let last = std::mem::take(&mut self.line);
                return Ok((!last.is_empty() && !std::mem::take(&mut self.overlong)).then_some(last));
            }
            let (taken, complete) = match available.iter().position(|&byte| byte == b'\n') {
                Some(end) => (end + 1, true),
                None => (available.len(), false),
            };
            if !self.overlong {
                self.line.extend_from_slice(&available[..taken]);
                if self.line.len() > MAX_LINE + 1 {
                    self.overlong = true;
                    self.line = Vec::new();
                }
            }
            self.reader.consume(taken);
            if complete {
                return Ok(Some(if std::mem::take(&mut self.overlong) {
                    Vec::new() // an overlong line: refused below
                } else {
                    std::mem::take(&mut self.line)
                }));
            }
        }
    }

    /// Answers a line that is no message, without blocking the read loop: the write may
    /// outlive this `receive`, which can be cancelled.
    fn refuse(&self, id: Value, code: i64, message: &str) {
        let reply = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
        let writer = self.writer.clone();
        tokio::spawn(async move {
            let _ = write_line(&writer, reply.to_string().into_bytes()).await;
        });
    }
}

/// A line from which on the pages of its buffer go back to the system once it is written.
const LARGE_LINE: usize = 1 << 20;

async fn write_line(writer: &Writer, mut line: Vec<u8>) -> io::Result<()> {
    line.push(b'\n');
    let large = line.len() > LARGE_LINE;
    let mut guard = writer.lock().await;
    let written = async {
        guard.write_all(&line).await?;
        guard.flush().await
    }
    .await;
    drop(guard);
    drop(line);
    // Serializing a message of megabytes (a `tools/list` of a hundred components) freed
    // twice its size on the way, in buffers that outgrew one another: give those pages
    // back now, not a second later, so one listing does not lift the server's memory.
    if large {
        crate::allocator::purge_arenas();
    }
    written
}

impl Transport<RoleServer> for JsonLines {
    type Error = io::Error;

    fn send(&mut self, item: ServerJsonRpcMessage) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let writer = self.writer.clone();
        let line = serde_json::to_vec(&item).map_err(io::Error::other);
        async move { write_line(&writer, line?).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            let line = match self.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(e) => {
                    tracing::debug!("stdin failed: {e}");
                    return None;
                }
            };
            if line.is_empty() {
                self.refuse(Value::Null, -32600, &format!("Invalid Request: a line longer than {MAX_LINE} bytes"));
                continue;
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let error = match message::client_message(&line) {
                Ok(message) => match self.route(message) {
                    Route::Sdk(message) => return Some(*message),
                    // More requests already read: the client sends without waiting, so
                    // the call goes to a task of its own, where another core may take
                    // it, rather than hold the requests behind it. (Run here instead,
                    // trivial calls cost about 30 % less CPU each, for no more calls/s,
                    // and a tool of a few milliseconds would hold the other calls on
                    // one core.)
                    Route::Here(work) if !self.reader.buffer().is_empty() => {
                        tokio::spawn(work);
                        continue;
                    }
                    Route::Here(work) => {
                        run_here_first(work).await;
                        continue;
                    }
                },
                Err(error) => error,
            };
            // Not a message: JSON at all, and with an id to answer to?
            let Ok(value) = serde_json::from_slice::<Value>(&line) else {
                self.refuse(Value::Null, -32700, "Parse error: the line is not JSON");
                continue;
            };
            let id = value.get("id").filter(|id| id.is_string() || id.is_number());
            let is_notification = value.get("id").is_none() && value.get("method").is_some_and(Value::is_string);
            match id {
                Some(id) => self.refuse(id.clone(), -32600, &format!("Invalid Request: {error}")),
                // A notification the SDK does not know: notifications get no answer.
                None if is_notification => continue,
                // JSON that is no JSON-RPC message at all (`42`, `[]`, `{}`, an id
                // that is an object): answered, as nothing can be matched to it.
                None => self.refuse(Value::Null, -32600, &format!("Invalid Request: {error}")),
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        self.calls.close(CLOSING_GRACE).await;
        self.writer.lock().await.shutdown().await
    }
}

impl Drop for JsonLines {
    fn drop(&mut self) {
        self.calls.stop_all();
    }
}

/// A call run by this transport, until its answer is written.
type CallWork = Pin<Box<dyn Future<Output = ()> + Send>>;

enum Route {
    Sdk(Box<ClientJsonRpcMessage>),
    /// A call this transport runs: its work ends with the answer written.
    Here(CallWork),
}

type Input = Pin<Box<dyn AsyncRead + Send>>;
type Output = Pin<Box<dyn AsyncWrite + Send>>;

/// Stdin and stdout: on the reactor when they are pipes, through the blocking pool
/// otherwise.
fn stdio_streams() -> (Input, Output) {
    #[cfg(unix)]
    {
        let reader: Input = match pipe_end(0).and_then(|fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()) {
            Some(pipe) => Box::pin(pipe),
            None => Box::pin(tokio::io::stdin()),
        };
        // Stdout shares its open file with stderr when both go to one pipe (`2>&1`);
        // making it non-blocking would make the log's writes fail when the pipe is full.
        let writer: Output = match pipe_end(1)
            .filter(|_| !same_file(1, 2))
            .and_then(|fd| tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok())
        {
            Some(pipe) => Box::pin(pipe),
            None => Box::pin(tokio::io::stdout()),
        };
        (reader, writer)
    }
    #[cfg(not(unix))]
    {
        (Box::pin(tokio::io::stdin()), Box::pin(tokio::io::stdout()))
    }
}

/// A duplicate of descriptor `fd` when it is a pipe.
#[cfg(unix)]
fn pipe_end(fd: std::os::fd::RawFd) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::BorrowedFd;
    use std::os::unix::fs::FileTypeExt;
    // SAFETY: 0, 1 and 2 stay open for the life of the process; the borrow ends here.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let owned = borrowed.try_clone_to_owned().ok()?;
    let file = std::fs::File::from(owned);
    file.metadata().ok()?.file_type().is_fifo().then(|| file.into())
}

/// Whether descriptors `a` and `b` refer to the same file.
#[cfg(unix)]
fn same_file(a: std::os::fd::RawFd, b: std::os::fd::RawFd) -> bool {
    use std::os::fd::BorrowedFd;
    use std::os::unix::fs::MetadataExt;
    let metadata = |fd| {
        // SAFETY: as in `pipe_end`.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        std::fs::File::from(borrowed.try_clone_to_owned().ok()?).metadata().ok()
    };
    match (metadata(a), metadata(b)) {
        (Some(a), Some(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn answers(input: &str) -> (Vec<String>, Vec<Value>) {
        // Two one-way pipes, so that closing the client's input ends the server's.
        let (mut client_write, server_read) = tokio::io::duplex(32 << 20);
        let (server_write, mut client_read) = tokio::io::duplex(1 << 20);
        let mut transport = JsonLines::new(Box::pin(server_read), Box::pin(server_write));
        client_write.write_all(input.as_bytes()).await.unwrap();
        drop(client_write);
        let mut methods = Vec::new();
        while let Some(message) = transport.receive().await {
            methods.push(serde_json::to_value(&message).unwrap()["method"].as_str().unwrap_or_default().to_owned());
        }
        drop(transport);
        tokio::task::yield_now().await;
        let mut replies = String::new();
        let _ = tokio::time::timeout(
            std::time::Duration::from_millis(200),
            tokio::io::AsyncReadExt::read_to_string(&mut client_read, &mut replies),
        )
        .await;
        (methods, replies.lines().map(|line| serde_json::from_str(line).unwrap()).collect())
    }

    #[tokio::test]
    async fn bad_lines_get_json_rpc_errors_and_the_next_message_is_read() {
        let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let input =
            format!("{{oops\n\n{{\"id\": 3, \"foo\": 1}}\n{{\"jsonrpc\":\"2.0\",\"method\":\"x/y\"}}\n{ping}\n");
        let (methods, mut replies) = answers(&input).await;
        // `x/y` is a well-formed notification the server may not know: no answer.
        assert_eq!(methods, ["x/y", "ping"]);
        replies.sort_by_key(|reply| reply["error"]["code"].as_i64());
        assert_eq!(replies.len(), 2, "{replies:?}");
        assert_eq!(replies[0]["error"]["code"], -32700);
        assert_eq!(replies[0]["id"], Value::Null);
        assert_eq!(replies[1]["error"]["code"], -32600);
        assert_eq!(replies[1]["id"], 3);
    }

    #[tokio::test]
    async fn json_that_is_no_json_rpc_message_gets_invalid_request() {
        let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let input = format!("42\n[]\n{{\"foo\": 1}}\n{{\"id\": {{}}, \"method\": \"ping\"}}\n{ping}\n");
        let (methods, replies) = answers(&input).await;
        assert_eq!(methods, ["ping"]);
        let refused: Vec<&Value> = replies.iter().filter(|reply| reply["id"].is_null()).collect();
        assert_eq!(refused.len(), 4, "{replies:?}");
        assert!(refused.iter().all(|reply| reply["error"]["code"] == -32600), "{replies:?}");
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_without_being_kept() {
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let input = format!("{}\n{ping}\n", "x".repeat(MAX_LINE + 10));
        let (methods, replies) = answers(&input).await;
        assert_eq!(methods, ["ping"]);
        assert_eq!(replies.len(), 1);
        assert_eq!(replies[0]["error"]["code"], -32600);
        assert!(replies[0]["error"]["message"].as_str().unwrap().contains("longer than"));
    }
}
