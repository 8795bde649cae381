//! A small blocking HTTP client over `wasi:http/outgoing-handler`, shared by the stdlib's
//! `http/fetch` and `web/search`.
//!
//! The host decides where a request may go (the manifest's `[grants] network`, with
//! non-public addresses refused unless granted by address); this client only says so in
//! words a model can act on. Bodies are read up to a limit, never further, so a large
//! response costs no more memory than the limit.

mod url;

use std::fmt;

use toolhost_guest::ToolError;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{ErrorCode, Fields, HeaderError, Method as WasiMethod, OutgoingBody, OutgoingRequest};
use wasip2::io::streams::StreamError;

pub use url::{Url, UrlError};

/// How much of a body is moved per read or write: big enough to keep host calls few,
/// small enough that the last read past a limit wastes little.
const CHUNK: usize = 16 << 10;

/// The request methods a tool may send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
}

impl Method {
    fn to_wasi(self) -> WasiMethod {
        match self {
            Method::Get => WasiMethod::Get,
            Method::Head => WasiMethod::Head,
            Method::Post => WasiMethod::Post,
            Method::Put => WasiMethod::Put,
            Method::Patch => WasiMethod::Patch,
            Method::Delete => WasiMethod::Delete,
            Method::Options => WasiMethod::Options,
        }
    }
}

/// One request.
pub struct Request<'a> {
    pub method: Method,
    pub url: &'a Url,
    /// Header names and values, sent in this order.
    pub headers: &'a [(String, String)],
    pub body: Option<&'a [u8]>,
    /// At most this many bytes of the response body are read.
    pub max_body_bytes: usize,
}

/// One response, its body cut at the request's limit.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    /// Header names (lower case, as `wasi:http` gives them) and values, in arrival order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The server sent more than `max_body_bytes`; the rest was not read.
    pub truncated: bool,
}

impl Response {
    /// The first value of header `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key.eq_ignore_ascii_case(name)).map(|(_, value)| value.as_str())
    }
}

/// Why a request got no response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FetchError {
    /// A header the caller asked for cannot be sent.
    Header { name: String, reason: &'static str },
    /// The host's network grant does not list the destination.
    NotGranted { destination: String },
    /// The destination resolves only to non-public addresses, which the host refuses
    /// unless the operator granted the address itself.
    NonPublicAddress { destination: String },
    /// The name does not resolve.
    NameNotFound { destination: String },
    /// The server could not be reached or broke off.
    Connection { destination: String, reason: String },
    /// The server took longer than the host allows.
    Timeout { destination: String },
    /// The HTTPS certificate does not verify for the name.
    Certificate { destination: String },
    /// Anything else the host or the server reported.
    Other { destination: String, reason: String },
}

impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FetchError::Header { name, reason } => write!(f, "header `{name}` cannot be sent: {reason}"),
            FetchError::NotGranted { destination } => write!(
                f,
                "{destination} is not in this tool's network grant, so the host refused the request; \
                 only the operator can grant it (`[grants] network` in the tool's manifest)"
            ),
            FetchError::NonPublicAddress { destination } => write!(
                f,
                "{destination} resolves only to private, loopback or other non-public addresses, which the \
                 host refuses; only the operator can allow one, by granting the address itself"
            ),
            FetchError::NameNotFound { destination } => write!(f, "{destination}: the host name does not resolve"),
            FetchError::Connection { destination, reason } => write!(f, "{destination}: {reason}"),
            FetchError::Timeout { destination } => {
                write!(f, "{destination} did not answer within the time this tool is allowed")
            }
            FetchError::Certificate { destination } => {
                write!(f, "{destination}: the server's TLS certificate does not verify for this name")
            }
            FetchError::Other { destination, reason } => write!(f, "{destination}: {reason}"),
        }
    }
}

impl std::error::Error for FetchError {}

impl From<FetchError> for ToolError {
    fn from(error: FetchError) -> ToolError {
        match error {
            FetchError::Header { .. } => ToolError::invalid_input(error),
            _ => ToolError::failed(error),
        }
    }
}

fn classify(error: ErrorCode, destination: &str) -> FetchError {
    let destination = destination.to_owned();
    let connection = |reason: &str| FetchError::Connection { destination: destination.clone(), reason: reason.into() };
    match error {
        ErrorCode::HttpRequestDenied => FetchError::NotGranted { destination },
        ErrorCode::DestinationIpProhibited | ErrorCode::DestinationIpUnroutable => {
            FetchError::NonPublicAddress { destination }
        }
        ErrorCode::DestinationNotFound | ErrorCode::DnsError(_) | ErrorCode::DnsTimeout => {
            FetchError::NameNotFound { destination }
        }
        ErrorCode::ConnectionRefused => connection("the connection was refused"),
        ErrorCode::DestinationUnavailable => connection("the server is unavailable"),
        ErrorCode::ConnectionTerminated | ErrorCode::HttpResponseIncomplete => {
            connection("the server closed the connection before a complete response")
        }
        ErrorCode::ConnectionTimeout
        | ErrorCode::ConnectionReadTimeout
        | ErrorCode::ConnectionWriteTimeout
        | ErrorCode::HttpResponseTimeout => FetchError::Timeout { destination },
        ErrorCode::TlsCertificateError => FetchError::Certificate { destination },
        ErrorCode::TlsProtocolError | ErrorCode::TlsAlertReceived(_) => connection("the TLS handshake failed"),
        ErrorCode::HttpProtocolError => connection("the server's answer is not valid HTTP"),
        other => FetchError::Other { destination, reason: format!("{other:?}") },
    }
}

/// Sends one request and reads its response, the body up to the request's limit.
/// Redirects are answers like any other: following one is the caller's decision.
pub fn send(request: &Request<'_>) -> Result<Response, FetchError> {
    let destination = request.url.origin();
    let headers = Fields::new();
    for (name, value) in request.headers {
        headers.append(name, value.as_bytes()).map_err(|error| FetchError::Header {
            name: name.clone(),
            reason: match error {
                HeaderError::Forbidden => "the host sets it itself",
                HeaderError::InvalidSyntax => "not a valid header name or value",
                HeaderError::Immutable => "the header list is already sent",
            },
        })?;
    }
    let outgoing = OutgoingRequest::new(headers);
    let invalid = |part: &str| FetchError::Other {
        destination: destination.clone(),
        reason: format!("the host refused the request's {part}"),
    };
    outgoing.set_method(&request.method.to_wasi()).map_err(|()| invalid("method"))?;
    outgoing.set_scheme(Some(&request.url.wasi_scheme())).map_err(|()| invalid("scheme"))?;
    outgoing.set_authority(Some(&request.url.authority())).map_err(|()| invalid("host"))?;
    outgoing.set_path_with_query(Some(request.url.path_and_query())).map_err(|()| invalid("path"))?;

    let body = outgoing.body().map_err(|()| invalid("body"))?;
    // The body is written after `handle`: before it nothing drains the body's pipe, and
    // a body larger than the pipe would block for ever.
    let pending = outgoing_handler::handle(outgoing, None).map_err(|e| classify(e, &destination))?;
    {
        let stream = body.write().map_err(|()| invalid("body"))?;
        for chunk in request.body.unwrap_or_default().chunks(CHUNK) {
            stream.blocking_write_and_flush(chunk).map_err(|e| FetchError::Connection {
                destination: destination.clone(),
                reason: format!("sending the request body failed: {}", stream_error_text(e)),
            })?;
        }
        // The stream is a child of the body: it must be gone before `finish`.
    }
    OutgoingBody::finish(body, None).map_err(|e| classify(e, &destination))?;

    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(error))) => return Err(classify(error, &destination)),
        Some(Err(())) | None => return Err(invalid("response")),
    };
    let status = response.status();
    let headers = response
        .headers()
        .entries()
        .into_iter()
        .map(|(name, value)| (name, String::from_utf8_lossy(&value).into_owned()))
        .collect();
    let incoming = response.consume().map_err(|()| invalid("response body"))?;
    let (body, truncated) = {
        let stream = incoming.stream().map_err(|()| invalid("response body"))?;
        read_limited(&stream, request.max_body_bytes).map_err(|reason| FetchError::Connection {
            destination: destination.clone(),
            reason: format!("reading the response failed: {reason}"),
        })?
    };
    Ok(Response { status, headers, body, truncated })
}

/// Reads up to `limit` bytes; `true` when the stream had more.
fn read_limited(stream: &wasip2::io::streams::InputStream, limit: usize) -> Result<(Vec<u8>, bool), String> {
    let mut body = Vec::new();
    loop {
        // One byte past the limit tells a body of exactly `limit` bytes from a longer one.
        let wanted = (limit + 1 - body.len()).min(CHUNK);
        match stream.blocking_read(wanted as u64) {
            Ok(chunk) => {
                body.extend_from_slice(&chunk);
                if body.len() > limit {
                    body.truncate(limit);
                    return Ok((body, true));
                }
            }
            Err(StreamError::Closed) => return Ok((body, false)),
            Err(error) => return Err(stream_error_text(error)),
        }
    }
}

fn stream_error_text(error: StreamError) -> String {
    match error {
        StreamError::Closed => "the stream closed".into(),
        StreamError::LastOperationFailed(error) => error.to_debug_string(),
    }
}
