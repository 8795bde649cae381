//! `http/fetch`: one HTTP request to a destination the operator granted, its answer in
//! the form a model reads best: JSON parsed, HTML reduced to text, other text as text and
//! binary bodies as base64. The host enforces the network grant; this tool follows
//! redirects (each one checked by the host again) and bounds what it reads.

mod body;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use stdlib_httpclient::{Method, Request, Url};
use toolhost_guest::{ToolError, toolbox};

/// The default and the largest response body read, in bytes.
const DEFAULT_MAX_BYTES: u32 = 256 << 10;
const MAX_BYTES: u32 = 1 << 20;
/// Redirects followed before giving up: browsers allow about 20, a tool needs few.
const MAX_REDIRECTS: usize = 5;
const USER_AGENT: &str = concat!("toolhost-stdlib-http/", env!("CARGO_PKG_VERSION"));

#[derive(Deserialize, JsonSchema, Clone, Copy, Default)]
#[serde(rename_all = "UPPERCASE")]
enum MethodName {
    #[default]
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
}

impl From<MethodName> for Method {
    fn from(name: MethodName) -> Method {
        match name {
            MethodName::Get => Method::Get,
            MethodName::Head => Method::Head,
            MethodName::Post => Method::Post,
            MethodName::Put => Method::Put,
            MethodName::Patch => Method::Patch,
            MethodName::Delete => Method::Delete,
            MethodName::Options => Method::Options,
        }
    }
}

/// How the response body is returned.
#[derive(Deserialize, JsonSchema, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum ResponseFormat {
    /// By content type: JSON parsed, HTML reduced to readable text, other text as text,
    /// anything else base64.
    #[default]
    Auto,
    /// The body as text, exactly as sent (invalid UTF-8 replaced), HTML and JSON unparsed.
    Text,
    /// The body's bytes, base64-encoded.
    Base64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FetchInput {
    /// The absolute `http://` or `https://` URL to request. Characters a URL may not hold
    /// (spaces, non-ASCII) are percent-encoded; a fragment (`#…`) is not sent.
    #[schemars(length(min = 8, max = 8192))]
    url: String,
    /// The request method.
    #[serde(default)]
    method: MethodName,
    /// Request headers by name, e.g. `{"accept": "application/json"}`. `host`,
    /// `connection` and other hop-by-hop headers are set by the host and refused here.
    #[serde(default)]
    #[schemars(extend("maxProperties" = 64))]
    headers: BTreeMap<String, String>,
    /// A request body, sent as UTF-8 text. Set a `content-type` header to match (e.g.
    /// `application/json`).
    #[serde(default)]
    #[schemars(length(max = 1048576))]
    body: Option<String>,
    /// How the response body is returned (`auto` unless the raw text or bytes are needed).
    #[serde(default)]
    response_format: ResponseFormat,
    /// At most this many bytes of the response body are read; the rest is not
    /// downloaded and `truncated` says so.
    #[serde(default = "default_max_bytes")]
    #[schemars(range(min = 1, max = 1048576))]
    max_bytes: u32,
    /// Follow redirects (301, 302, 303, 307, 308), at most 5, each to a destination the
    /// host allows. With `false` the redirect itself is returned.
    #[serde(default = "follow_by_default")]
    follow_redirects: bool,
}

fn default_max_bytes() -> u32 {
    DEFAULT_MAX_BYTES
}

fn follow_by_default() -> bool {
    true
}

/// What the body holds after decoding.
#[derive(Serialize, JsonSchema, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum BodyFormat {
    /// `body` is the parsed JSON value.
    Json,
    /// `body` is the readable text of an HTML page (links listed as numbered references).
    HtmlText,
    /// `body` is the text as sent.
    Text,
    /// `body` is the bytes, base64-encoded.
    Base64,
    /// There was no body (`body` is "").
    Empty,
}

#[derive(Serialize, JsonSchema)]
struct FetchOutput {
    /// The URL that answered, after any redirects.
    url: String,
    /// The HTTP status code.
    status: u16,
    /// Response headers, names in lower case; repeated headers joined with ", ".
    headers: BTreeMap<String, String>,
    /// What `body` holds.
    body_format: BodyFormat,
    /// The response body, as `body_format` says.
    body: serde_json::Value,
    /// The `<title>` of an HTML page.
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    /// Bytes of the body received, before decoding.
    body_bytes: u64,
    /// True when the body was longer than `max_bytes` and was cut there.
    truncated: bool,
    /// The URLs redirected through, in order, before `url` (empty without redirects).
    redirects: Vec<String>,
    /// Why the body is not in the form its content type promised, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

toolbox! {
    /// Sends an HTTP request and returns the response: status, headers and body. Use it to
    /// read a web page or call a web API. Only destinations the operator granted are
    /// reachable; others are refused with a message saying so (the tool cannot grant
    /// itself anything). JSON responses come back parsed (`body_format: "json"`), HTML
    /// pages reduced to readable text with their links listed (`"html_text"`), other text
    /// as text and binary data as base64. At most `max_bytes` of the body are read
    /// (default 256 KiB, at most 1 MiB): `truncated` tells when a body was cut. Redirects
    /// are followed unless `follow_redirects` is false. A status of 4xx or 5xx is a
    /// normal answer, not an error.
    fn fetch(input: FetchInput) -> Result<FetchOutput, ToolError> {
        fetch_following_redirects(input)
    }
}

fn fetch_following_redirects(input: FetchInput) -> Result<FetchOutput, ToolError> {
    let mut url = Url::parse(&input.url).map_err(|e| ToolError::invalid_input(format!("`{}`: {e}", input.url)))?;
    let mut method = Method::from(input.method);
    let mut body = input.body.map(String::into_bytes);
    let mut headers: Vec<(String, String)> = input.headers.into_iter().collect();
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("user-agent")) {
        headers.push(("user-agent".into(), USER_AGENT.into()));
    }
    let mut redirects = Vec::new();
    loop {
        let request = Request {
            method,
            url: &url,
            headers: &headers,
            body: body.as_deref(),
            max_body_bytes: input.max_bytes as usize,
        };
        let response = stdlib_httpclient::send(&request)?;
        let location = response.header("location").filter(|_| input.follow_redirects && is_redirect(response.status));
        if let Some(location) = location {
            if redirects.len() == MAX_REDIRECTS {
                return Err(ToolError::failed(format!(
                    "more than {MAX_REDIRECTS} redirects, the last to {location}; fetch it with follow_redirects \
                     false to see where it leads"
                )));
            }
            let next = url.join(location).map_err(|e| {
                ToolError::failed(format!("{url} redirected to `{location}`, which cannot be followed: {e}"))
            })?;
            // A browser turns these into a GET without a body; 307 and 308 keep both.
            if response.status == 303 || (matches!(response.status, 301 | 302) && method == Method::Post) {
                method = if method == Method::Head { Method::Head } else { Method::Get };
                body = None;
                headers.retain(|(name, _)| !is_content_header(name));
            }
            // Credentials go to the origin they were written for, never to another.
            if next.origin() != url.origin() || next.is_https() != url.is_https() {
                headers.retain(|(name, _)| !is_credential_header(name));
            }
            redirects.push(url.to_string());
            url = next;
            continue;
        }
        return Ok(answer(url, redirects, response, method, input.response_format, input.max_bytes));
    }
}

fn answer(
    url: Url,
    redirects: Vec<String>,
    response: stdlib_httpclient::Response,
    method: Method,
    format: ResponseFormat,
    max_bytes: u32,
) -> FetchOutput {
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in &response.headers {
        headers
            .entry(name.to_ascii_lowercase())
            .and_modify(|joined| {
                joined.push_str(", ");
                joined.push_str(value);
            })
            .or_insert_with(|| value.clone());
    }
    let content_type = response.header("content-type").unwrap_or_default();
    let decoded = if method == Method::Head {
        body::Decoded::empty()
    } else {
        body::decode(&response.body, content_type, format, response.truncated)
    };
    let mut note = decoded.note;
    if response.truncated {
        let cut = format!(
            "the body is longer than max_bytes ({max_bytes}) and was cut there; ask again with a larger max_bytes \
             (at most {MAX_BYTES}) or a narrower request"
        );
        note = Some(match note {
            Some(earlier) => format!("{cut}; {earlier}"),
            None => cut,
        });
    }
    FetchOutput {
        url: url.to_string(),
        status: response.status,
        headers,
        body_format: decoded.format,
        body: decoded.body,
        title: decoded.title,
        body_bytes: response.body.len() as u64,
        truncated: response.truncated,
        redirects,
        note,
    }
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

fn is_content_header(name: &str) -> bool {
    name.to_ascii_lowercase().starts_with("content-")
}

fn is_credential_header(name: &str) -> bool {
    ["authorization", "cookie", "proxy-authorization"].iter().any(|credential| name.eq_ignore_ascii_case(credential))
}
