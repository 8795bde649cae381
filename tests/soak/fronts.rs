//! The two front ends every kind of call goes through: the real `toolhost serve --http`
//! binary, over MCP's Streamable HTTP on one keep-alive connection per worker, and a
//! `ToolHost` in this process. Both answers become one [`Answer`].

use std::panic::AssertUnwindSafe;

use serde_json::Value;
use toolhost::ToolHost;
use toolhost_tests::wire::{HttpSession, call_request};

use crate::mix::Answer;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Front {
    Server,
    Library,
}

impl Front {
    pub fn label(self) -> &'static str {
        match self {
            Front::Server => "server",
            Front::Library => "library",
        }
    }
}

/// One MCP session with the server. A connection that breaks (the wire helpers panic on
/// I/O errors) is an answer of its own, `transport`, and the next call opens a new one.
pub struct ServerClient {
    addr: String,
    session: Option<HttpSession>,
    next_id: u64,
}

impl ServerClient {
    pub fn new(addr: &str) -> ServerClient {
        ServerClient { addr: addr.to_owned(), session: None, next_id: 1 }
    }

    pub fn call(&mut self, tool: &str, input: &Value) -> Answer {
        let id = self.next_id;
        self.next_id += 1;
        let (addr, session) = (&self.addr, &mut self.session);
        let attempt = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let session = session.get_or_insert_with(|| HttpSession::start(addr, "/mcp", None));
            session.post(&call_request(id, &mcp_name(tool), input))
        }));
        let response = match attempt {
            Ok(response) => response,
            Err(panic) => {
                self.session = None;
                return Answer::error("transport", panic_text(&panic));
            }
        };
        if response.status != 200 {
            let body = String::from_utf8_lossy(&response.body).into_owned();
            return Answer::error(format!("http_{}", response.status), body);
        }
        match response.messages().into_iter().find(|message| message["id"] == id) {
            Some(message) => answer_of(&message),
            None => Answer::error("unanswered", format!("no answer to request {id}: {response:?}")),
        }
    }
}

/// MCP names a tool `namespace.tool`.
fn mcp_name(tool: &str) -> String {
    tool.replacen('/', ".", 1)
}

/// A `tools/call` response as toolhost's MCP server shapes it: an unknown tool is the
/// JSON-RPC error `-32602`, any other failure a result with `isError` and `kind:
/// message` text, and a success its structured content.
fn answer_of(message: &Value) -> Answer {
    if let Some(error) = message.get("error") {
        let text = error["message"].as_str().unwrap_or_default();
        return if error["code"] == -32602 && text.starts_with("unknown tool") {
            Answer::error("not_found", text)
        } else {
            Answer::error("rpc_error", error.to_string())
        };
    }
    let result = &message["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    if result["isError"] == true {
        let (kind, _) = text.split_once(':').unwrap_or(("unexplained_error", text));
        return Answer::error(kind, text);
    }
    match result.get("structuredContent") {
        Some(output) => Answer::ok(output.clone()),
        None => Answer::ok(serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        .unwrap_or_else(|| "the connection failed".to_owned())
}

/// A call of the in-process host, from a worker thread outside the runtime.
pub fn library_call(runtime: &tokio::runtime::Handle, host: &ToolHost, tool: &str, input: Value) -> Answer {
    match runtime.block_on(host.call(tool, input)) {
        Ok(output) => Answer::ok(output),
        Err(error) => Answer::error(error.kind().as_str(), error.to_string()),
    }
}

/// `GET /metrics` of the server, as text.
pub fn scrape(addr: &str) -> Result<String, String> {
    std::panic::catch_unwind(|| {
        let answer = HttpSession::connect(addr, "/metrics").request("GET", None, &[]);
        if answer.status == 200 {
            Ok(String::from_utf8_lossy(&answer.body).into_owned())
        } else {
            Err(format!("GET /metrics answered {}", answer.status))
        }
    })
    .unwrap_or_else(|panic| Err(panic_text(&panic)))
}

/// The value of an unlabelled series in Prometheus text.
pub fn series(metrics: &str, name: &str) -> Option<f64> {
    metrics.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}
