//! The stdio transport to a server's child: one JSON-RPC message a line, each read within a bound, and no answer lost on the way.
//!
//! The bound is [`MAX_MESSAGE`].
//!
//! rmcp's own stdio transport drops a line it cannot take (too long, too deeply
//! nested) and with it the request's id, so the request waits out its whole time
//! limit. Here such a line still answers its request, at once:
//! - a line past [`MAX_MESSAGE`] is skipped, not kept, while its top-level `id` is
//!   picked out of it ([`IdScanner`]), and the request fails as too large;
//! - a line that is JSON but not a message rmcp can read (its tool schemas nest past
//!   serde_json's depth limit) is read again leniently: a listing is served without
//!   the tools that cannot be read, each reported ([`Unreadable`]); any other answer
//!   fails its request saying why.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ErrorData, RequestId, ServerJsonRpcMessage, Tool};
use rmcp::transport::Transport;
use serde_json::value::RawValue;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use crate::error::{SchemaRole, ToolDefError};

mod id_scanner;

use id_scanner::IdScanner;

/// The longest message a server may send, as rmcp's own transports take.
pub(super) const MAX_MESSAGE: usize = 16 << 20;
/// The code of the error that stands for an answer past [`MAX_MESSAGE`]; its `data`
/// holds the answer's `size` in bytes.
pub(super) const TOO_LARGE: ErrorCode = ErrorCode(-32_099);

/// Tools a listing left out because they could not be read, each with the rule it
/// breaks.
pub(super) type Unreadable = Arc<Mutex<Vec<ToolDefError>>>;

/// The transport over a child's stdin and stdout.
pub(super) struct ChildStdio {
    read: BufReader<ChildStdout>,
    write: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    line: Vec<u8>,
    /// Set while the rest of a line past [`MAX_MESSAGE`] is skipped.
    skipping: Option<IdScanner>,
    unreadable: Unreadable,
}

impl ChildStdio {
    pub(super) fn new(stdin: ChildStdin, stdout: ChildStdout, unreadable: Unreadable) -> ChildStdio {
        ChildStdio {
            read: BufReader::with_capacity(64 << 10, stdout),
            write: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
            line: Vec::new(),
            skipping: None,
            unreadable,
        }
    }

    /// The next whole line, or the answer standing for a line past the bound; `None`
    /// at the end of the output. Cancel-safe: what was read stays in `self`.
    async fn next_line(&mut self) -> Option<Result<(), ServerJsonRpcMessage>> {
        loop {
            let available = match self.read.fill_buf().await {
                Ok([]) | Err(_) => return None,
                Ok(available) => available,
            };
            let newline = available.iter().position(|byte| *byte == b'\n');
            let take = newline.map_or(available.len(), |at| at + 1);
            let ended = newline.is_some();
            if let Some(scanner) = &mut self.skipping {
                scanner.feed(&available[..take]);
            } else if self.line.len() + take > MAX_MESSAGE {
                let mut scanner = IdScanner::default();
                scanner.feed(&self.line);
                scanner.feed(&available[..take]);
                self.line = Vec::new();
                self.skipping = Some(scanner);
            } else {
                self.line.extend_from_slice(&available[..take]);
            }
            self.read.consume(take);
            if !ended {
                continue;
            }
            match self.skipping.take() {
                None => return Some(Ok(())),
                Some(scanner) => match scanner.id() {
                    Some(id) => return Some(Err(too_large(id, scanner.size()))),
                    None => tracing::warn!(
                        "an upstream server sent a message past {} MiB without an id; skipped",
                        MAX_MESSAGE >> 20
                    ),
                },
            }
        }
    }
}

impl Transport<RoleClient> for ChildStdio {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), std::io::Error>> + Send + 'static {
        let write = self.write.clone();
        async move {
            let mut line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            line.push(b'\n');
            let mut write = write.lock().await;
            let stdin = write.as_mut().ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotConnected))?;
            stdin.write_all(&line).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            if let Err(answer) = self.next_line().await? {
                return Some(answer);
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match serde_json::from_slice::<ServerJsonRpcMessage>(text) {
                Ok(message) => return Some(message),
                Err(e) => {
                    if let Some(answer) = read_leniently(text, &e, &self.unreadable) {
                        return Some(answer);
                    }
                    tracing::debug!("an upstream server sent a line that is no message: {e}");
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), std::io::Error> {
        // The end of its input is a stdio server's sign to exit; its process group is
        // ended by the connection's owner.
        self.write.lock().await.take();
        Ok(())
    }
}

/// The error answering request `id`, whose answer took `size` bytes.
fn too_large(id: RequestId, size: u64) -> ServerJsonRpcMessage {
    let message =
        format!("the server's answer takes more than {} MiB, the most one message may take", MAX_MESSAGE >> 20);
    ServerJsonRpcMessage::error(ErrorData::new(TOO_LARGE, message, Some(serde_json::json!({ "size": size }))), Some(id))
}

/// An answer rmcp could not read (`error`), read again: a listing without the tools
/// that cannot be read (added to `unreadable`), or the error answering its request.
/// `None` when the line is no answer to a request.
fn read_leniently(text: &[u8], error: &serde_json::Error, unreadable: &Unreadable) -> Option<ServerJsonRpcMessage> {
    // Raw values are skipped without recursion, however deep they nest.
    type Fields = BTreeMap<String, Box<RawValue>>;
    let fields: Fields = serde_json::from_slice(text).ok()?;
    let id: RequestId = serde_json::from_str(fields.get("id")?.get()).ok()?;
    let failed = |why: &dyn std::fmt::Display| {
        let message = format!("the server's answer could not be read: {why}");
        Some(ServerJsonRpcMessage::error(ErrorData::new(ErrorCode::INTERNAL_ERROR, message, None), Some(id.clone())))
    };
    let Some(mut result) = fields.get("result").and_then(|result| serde_json::from_str::<Fields>(result.get()).ok())
    else {
        return failed(error);
    };
    let Some(tools) =
        result.get("tools").and_then(|tools| serde_json::from_str::<Vec<Box<RawValue>>>(tools.get()).ok())
    else {
        return failed(error);
    };
    let (mut kept, mut left_out) = (Vec::with_capacity(tools.len()), Vec::new());
    for tool in tools {
        match serde_json::from_str::<Tool>(tool.get()) {
            Ok(_) => kept.push(tool),
            Err(e) => left_out.push(refusal(&tool, &e)),
        }
    }
    if left_out.is_empty() {
        // The tools are not what could not be read.
        return failed(error);
    }
    result.insert("tools".to_owned(), serde_json::value::to_raw_value(&kept).ok()?);
    let rebuilt = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{}}}"#,
        serde_json::to_string(&id).ok()?,
        serde_json::to_string(&result).ok()?
    );
    match serde_json::from_str::<ServerJsonRpcMessage>(&rebuilt) {
        Ok(listing) => {
            unreadable.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).extend(left_out);
            Some(listing)
        }
        Err(e) => failed(&e),
    }
}

/// Why a tool that could not be read is refused, by the rules every tool obeys.
fn refusal(tool: &RawValue, error: &serde_json::Error) -> ToolDefError {
    #[derive(serde::Deserialize)]
    struct Parts<'a> {
        name: Option<String>,
        #[serde(rename = "inputSchema", borrow)]
        input: Option<&'a RawValue>,
        #[serde(rename = "outputSchema", borrow)]
        output: Option<&'a RawValue>,
    }
    let parts = serde_json::from_str::<Parts>(tool.get()).ok();
    let parts = parts.as_ref();
    let name = parts.and_then(|parts| parts.name.as_deref()).unwrap_or("(a tool without a name)");
    let schemas = [
        (SchemaRole::Input, parts.and_then(|parts| parts.input).map(RawValue::get)),
        (SchemaRole::Output, parts.and_then(|parts| parts.output).map(RawValue::get)),
    ];
    crate::tool::unreadable(name, schemas, &error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ToolProblem;

    fn unreadable() -> Unreadable {
        Arc::default()
    }

    fn deep(levels: usize) -> String {
        let mut schema = r#"{"type":"string"}"#.to_owned();
        for _ in 0..levels {
            schema = format!(r#"{{"type":"object","properties":{{"inner":{schema}}}}}"#);
        }
        schema
    }

    #[test]
    fn a_listing_with_a_tool_too_deep_to_read_is_served_without_it() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":3,"result":{{"tools":[{{"name":"plain","inputSchema":{{"type":"object"}}}},{{"name":"deep","inputSchema":{}}}],"nextCursor":"c"}}}}"#,
            deep(200)
        );
        let error = serde_json::from_str::<ServerJsonRpcMessage>(&line).unwrap_err();
        let left_out = unreadable();
        let answer = read_leniently(line.as_bytes(), &error, &left_out).expect("an answer");
        let answer = serde_json::to_value(answer).unwrap();
        assert_eq!(answer["id"], 3);
        assert_eq!(answer["result"]["tools"].as_array().map(Vec::len), Some(1), "{answer}");
        assert_eq!(answer["result"]["tools"][0]["name"], "plain");
        assert_eq!(answer["result"]["nextCursor"], "c");
        let left_out = left_out.lock().unwrap();
        assert_eq!(left_out.len(), 1);
        let expected = ToolProblem::SchemaDepth { role: SchemaRole::Input, limit: crate::tool::MAX_SCHEMA_DEPTH };
        assert_eq!(left_out[0], ToolDefError::of("deep", expected));
    }

    #[test]
    fn another_answer_too_deep_to_read_fails_its_request() {
        let line =
            format!(r#"{{"jsonrpc":"2.0","id":"r-7","result":{{"content":[],"structuredContent":{}}}}}"#, deep(200));
        let error = serde_json::from_str::<ServerJsonRpcMessage>(&line).unwrap_err();
        let answer = serde_json::to_value(read_leniently(line.as_bytes(), &error, &unreadable()).unwrap()).unwrap();
        assert_eq!(answer["id"], "r-7");
        assert!(answer["error"]["message"].as_str().unwrap().contains("could not be read"), "{answer}");
        // Neither a notification nor a line without an id is an answer.
        assert!(read_leniently(br#"{"jsonrpc":"2.0","method":"x"}"#, &error, &unreadable()).is_none());
        assert!(read_leniently(b"[1,2]", &error, &unreadable()).is_none());
    }
}
