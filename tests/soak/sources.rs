//! The tool sources of the soak beside components: an upstream MCP server that crashes
//! and comes back, and an HTTP tool calling a loopback service.
//!
//! The upstream server is the official Python SDK's (`tests/mcp/upstream_server.py`)
//! on stdio, as the namespace `up`; its `crash` tool ends its process, and the host
//! starts it again after its backoff. The HTTP tool `web/echo` calls [`EchoService`],
//! which answers `{"data": {"n": N}}` for `/echo/N`.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;

use toolhost::upstream::UpstreamServer;
use toolhost_tests::{ToolsDir, mcp_python, python_sandbox, python_upstream};

/// The upstream server's namespace.
pub const UPSTREAM: &str = "up";

/// The upstream server, for the library host (its events in `events`).
pub fn upstream_server(events: &Path) -> UpstreamServer {
    let writes = [events.parent().expect("the events' directory")];
    python_upstream(UPSTREAM, "upstream_server.py", &["stdio".into(), events.display().to_string()], &writes)
}

/// The same server in `toolhost.toml`, for the HTTP server.
pub fn upstream_toml(events: &Path) -> String {
    format!(
        "[[upstream]]\nname = {UPSTREAM:?}\ncommand = {:?}\nargs = [{:?}, \"stdio\", {:?}]\nenv = [\"HOME\"]\n{}",
        mcp_python().display().to_string(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/upstream_server.py").display().to_string(),
        events.display().to_string(),
        python_sandbox(&[events.parent().expect("the events' directory")]),
    )
}

/// A loopback HTTP service answering `/echo/N` with `{"data": {"n": N}}`, one thread
/// per connection, for as long as the process runs.
pub struct EchoService {
    pub addr: SocketAddr,
}

impl EchoService {
    pub fn start() -> EchoService {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("its address");
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                std::thread::spawn(move || answer(stream));
            }
        });
        EchoService { addr }
    }

    /// `web/echo.http.toml` in `tools`, calling this service.
    pub fn install_tool(&self, tools: &ToolsDir) {
        let definition = format!(
            "description = \"Echoes a number through a loopback HTTP service.\"\n\
             url = \"http://{addr}/echo/{{n}}\"\nnetwork = [\"{addr}\"]\noutput = \"/data\"\n\n\
             [input_schema]\ntype = \"object\"\nrequired = [\"n\"]\n\
             properties = {{ n = {{ type = \"integer\" }} }}\n",
            addr = self.addr
        );
        tools.write("web", "echo.http.toml", definition.as_bytes());
    }
}

/// Answers the requests of one connection until it closes.
fn answer(stream: std::net::TcpStream) {
    let Ok(reader) = stream.try_clone() else { return };
    let (mut reader, mut writer) = (BufReader::new(reader), stream);
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                break;
            }
        }
        let path = request_line.split_whitespace().nth(1).unwrap_or_default();
        let n = path.strip_prefix("/echo/").and_then(|n| n.parse::<i64>().ok());
        let (status, body) = match n {
            Some(n) => ("200 OK", serde_json::json!({ "data": { "n": n } }).to_string()),
            None => ("404 Not Found", "{}".to_owned()),
        };
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}
