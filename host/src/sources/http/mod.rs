//! Declarative HTTP tools: a file, `<ns>/<name>.http.toml`, whose tool answers each call with one HTTP request.
//!
//! Declarative HTTP tools: a tool defined by a file, `<ns>/<name>.http.toml`, that
//! answers each call with one HTTP request built from the input (see
//! `docs/http-tools.md` for the format).
//!
//! An HTTP tool is served like any other: listed, exported, hot-reloaded with its file,
//! and its calls go through the whole pipeline (caller policy, approval, input
//! validation, the timeout, the output size limit, output validation, the audit
//! record). Its request goes through the outgoing-HTTP rules of components
//! ([`crate::sandbox::outbound`]): the file's `network` allow-list, special-purpose
//! addresses refused unless an entry names the address itself, a connection to exactly
//! the address checked.
//!
//! - `definition`: the file, checked strictly at load (line-located errors);
//! - `template`: the URL template, filled and percent-encoded from the input;
//! - `request`: one call, from input to request and from response to output.

mod definition;
mod request;
mod template;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::error::{CallError, LoadError, LoadErrorKind};
use crate::sources::{Produced, Ran, RunContext, content_hash};
use crate::tool::{Ceilings, Limits, ToolDef, ToolError};
use request::{Answer, HttpCallFailure};

pub(crate) use definition::tool_name;

/// Whether `path` names a declarative HTTP tool (`<name>.http.toml`).
pub fn is_http_tool_file(path: &Path) -> bool {
    tool_name(path).is_some()
}

/// A loaded HTTP tool. Holds no secret: header values from the environment or files
/// are read at each call.
pub struct HttpTool {
    /// The definition file.
    pub path: PathBuf,
    /// BLAKE3 of the definition file, `blake3:<hex>`: which version answered a call.
    pub hash: String,
    /// The tool's definition.
    pub def: ToolDef,
    request: definition::RequestSpec,
}

impl std::fmt::Debug for HttpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpTool").field("path", &self.path).field("name", &self.def.name()).finish_non_exhaustive()
    }
}

/// How `toolhost inspect` shows an HTTP tool: its definition and the request it makes,
/// with where each header's value comes from (never a value read from the environment
/// or a file).
impl serde::Serialize for HttpTool {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let request = &self.request;
        let headers: serde_json::Map<String, Value> = request
            .headers
            .iter()
            .map(|(name, source)| {
                let shown = match source {
                    definition::HeaderSource::Plain(value) => json!(value.to_str().unwrap_or("(not text)")),
                    definition::HeaderSource::Env { variable, .. } => json!({ "env": variable }),
                    definition::HeaderSource::File { path, .. } => json!({ "file": path }),
                };
                (name.to_string(), shown)
            })
            .collect();
        let network: Vec<String> = request.network.iter().map(ToString::to_string).collect();
        json!({
            "file": self.path,
            "hash": self.hash,
            "contract": "http tool",
            "limits": self.def.limits,
            "policy": self.def.policy,
            "request": {
                "method": request.method.as_str(),
                "url": request.url.text,
                "network": network,
                "headers": headers,
                "body": request.body,
                "output": request.output,
                "max_response_bytes": request.max_response,
            },
            "tools": [{
                "name": self.def.name(),
                "description": self.def.description(),
                "input_schema": self.def.input_schema().json(),
                "output_schema": self.def.output_schema().json(),
            }],
        })
        .serialize(serializer)
    }
}

impl HttpTool {
    /// Reads and checks the definition at `path`, its limits over `defaults` within
    /// `ceilings`.
    pub(crate) fn load(path: &Path, defaults: Limits, ceilings: Ceilings) -> Result<HttpTool, LoadError> {
        let text = std::fs::read(path).map_err(|e| LoadError::new(path, LoadErrorKind::Io(e.to_string())))?;
        let hash = content_hash(&text);
        let text = String::from_utf8(text)
            .map_err(|_| LoadError::new(path, LoadErrorKind::Manifest { line: 1, problem: "not UTF-8 text".into() }))?;
        let (def, request) = definition::parse(path, &text, defaults, ceilings)?;
        Ok(HttpTool { path: path.to_owned(), hash, def, request })
    }

    /// Makes the request `input` (valid for the input schema) asks for, under the tool's
    /// time limit: the part of the response that is the output (not yet checked against
    /// the output schema). A refused destination is recorded with the call like a
    /// component's.
    pub(crate) async fn run(&self, full_name: &str, input: &Value, context: &RunContext<'_>) -> Ran {
        let tool = full_name.to_owned();
        let limit = self.def.limits.timeout;
        let mut denied = Vec::new();
        let call = request::call(&self.request, input, context.resolver.as_ref(), &mut denied);
        let produced = match tokio::time::timeout(limit, call).await {
            Err(_elapsed) => Err(CallError::Timeout { tool, limit }),
            Ok(Ok(Answer::Output(output))) => Ok(Produced::Value(output)),
            // Shown as a content block, bounded by the tool's output limit like an output.
            Ok(Ok(Answer::Media(media))) => match context.client.add_content(media) {
                Ok(()) => Ok(Produced::Value(Value::Null)),
                Err(over) => Err(ToolError::Failed(over).for_call(&tool)),
            },
            Ok(Err(HttpCallFailure::Input(reason))) => Err(ToolError::InvalidInput(reason).for_call(&tool)),
            Ok(Err(HttpCallFailure::Failed(message))) => Err(ToolError::Failed(message).for_call(&tool)),
            Ok(Err(HttpCallFailure::Host(message))) => Err(CallError::Host { tool, message }),
        };
        Ran { denied_requests: denied, ..Ran::produced(produced) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(name: &str, text: &str) -> Result<HttpTool, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        HttpTool::load(
            &path,
            Limits::default(),
            Ceilings { memory: 1 << 30, timeout: std::time::Duration::from_secs(60) },
        )
        .map_err(|e| e.to_string())
    }

    const GOOD: &str = r#"
description = "Forecast for a city."
url = "https://api.example.com/v1/{city}?days={days}"
network = ["api.example.com:443"]
timeout = "3s"
[headers]
Accept = "application/json"
[input_schema]
type = "object"
required = ["city"]
properties = { city = { type = "string" }, days = { type = "integer" } }
"#;

    #[test]
    fn http_tool_definition_loads_with_its_limits_and_hints() {
        let tool = load_text("forecast.http.toml", GOOD).unwrap();
        assert_eq!(tool.def.name(), "forecast");
        assert_eq!(tool.def.limits.timeout, std::time::Duration::from_secs(3));
        assert_eq!(tool.def.policy.hints.open_world, Some(true));
        assert!(tool.hash.strip_prefix("blake3:").is_some_and(|hex| hex.len() == 64), "{}", tool.hash);
    }

    #[test]
    fn http_tool_definition_errors_name_the_line() {
        for (text, line, why) in [
            (GOOD.replace("timeout = \"3s\"", "timeout = \"3s\"\ncolour = 1"), 6, "unknown field `colour`"),
            (GOOD.replace("{city}?", "{town}?"), 3, "`{town}` is not a property"),
            (GOOD.replace("required = [\"city\"]", "required = []"), 3, "list it in [input_schema] `required`"),
            (
                GOOD.replace("network = [\"api.example.com:443\"]", "network = [\"other.example.com\"]"),
                3,
                "not in `network`",
            ),
            (GOOD.replace("type = \"object\"", "type = \"objekt\""), 8, "its input schema"),
            (
                GOOD.replace("Accept = \"application/json\"", "X-Key = { env = \"TOOLHOST_TEST_SURELY_UNSET\" }"),
                7,
                "`TOOLHOST_TEST_SURELY_UNSET` is not set",
            ),
            (GOOD.replace("Accept = \"application/json\"", "X-Key = { file = \"no-such-file\" }"), 7, "cannot be read"),
            (GOOD.replace("Accept = \"application/json\"", "Host = \"evil\""), 7, "written by the host"),
        ] {
            let error = load_text("forecast.http.toml", &text).unwrap_err();
            assert!(error.contains(&format!("line {line}:")) && error.contains(why), "{why}: {error}");
            assert!(error.contains("forecast.http.toml"), "the error names the file: {error}");
        }
        let error = load_text("Bad Name.http.toml", GOOD).unwrap_err();
        assert!(error.contains("Bad Name"), "{error}");
    }
}
