//! `http`: fetch a URL over the host's `wasi:http`, only to destinations the operator
//! granted in the manifest (`[grants] network`). A refused destination comes back as a
//! `failed` error naming the refusal, and the host records it with the call.

mod client;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_guest::{ToolError, toolbox};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Fetch {
    /// An absolute `http://` or `https://` URL.
    #[schemars(length(min = 8, max = 8192))]
    url: String,
    /// GET (default), POST, PUT, PATCH, DELETE or HEAD.
    #[serde(default = "default_method")]
    method: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// A request body, sent as is.
    #[serde(default)]
    body: Option<String>,
    /// At most this many bytes of the response body are returned (default 64 KiB).
    #[serde(default = "default_max_bytes")]
    #[schemars(range(min = 1, max = 1048576))]
    max_bytes: u32,
}

fn default_method() -> String {
    "GET".into()
}

fn default_max_bytes() -> u32 {
    64 << 10
}

#[derive(Serialize, JsonSchema)]
struct Response {
    status: u16,
    headers: BTreeMap<String, String>,
    /// The body as text (invalid UTF-8 replaced).
    body: String,
    /// True when the body was longer than `max_bytes`.
    truncated: bool,
}

toolbox! {
    /// Fetches a URL and returns the status, headers and (up to `max_bytes` of) the body.
    fn fetch(input: Fetch) -> Result<Response, ToolError> {
        let request = client::Request {
            url: &input.url,
            method: &input.method,
            headers: &input.headers,
            body: input.body.as_deref(),
            max_bytes: input.max_bytes as usize,
        };
        let response = client::send(request)?;
        Ok(Response {
            status: response.status,
            headers: response.headers,
            body: String::from_utf8_lossy(&response.body).into_owned(),
            truncated: response.truncated,
        })
    }
}
