//! A small blocking HTTP client over `wasi:http/outgoing-handler`.

use std::collections::BTreeMap;

use toolhost_guest::ToolError;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{ErrorCode, Fields, Method, OutgoingBody, OutgoingRequest, Scheme};
use wasip2::io::streams::StreamError;

pub struct Request<'a> {
    pub url: &'a str,
    pub method: &'a str,
    pub headers: &'a BTreeMap<String, String>,
    pub body: Option<&'a str>,
    pub max_bytes: usize,
}

pub struct Response {
    pub status: u16,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
    pub truncated: bool,
}

fn split_url(url: &str) -> Result<(Scheme, &str, &str), ToolError> {
    let (scheme, rest) = if let Some(rest) = url.strip_prefix("https://") {
        (Scheme::Https, rest)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (Scheme::Http, rest)
    } else {
        return Err(ToolError::invalid_input(format!("`{url}` is not an http:// or https:// URL")));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(index) => rest.split_at(index),
        None => (rest, "/"),
    };
    if authority.is_empty() {
        return Err(ToolError::invalid_input(format!("`{url}` has no host")));
    }
    Ok((scheme, authority, path))
}

fn method(name: &str) -> Result<Method, ToolError> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "GET" => Method::Get,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "PATCH" => Method::Patch,
        "DELETE" => Method::Delete,
        "HEAD" => Method::Head,
        other => return Err(ToolError::invalid_input(format!("unsupported method `{other}`"))),
    })
}

fn refused(error: ErrorCode) -> ToolError {
    match error {
        ErrorCode::HttpRequestDenied => {
            ToolError::failed("the host refused this destination (not in the network grant)")
        }
        ErrorCode::DestinationIpProhibited => {
            ToolError::failed("the host refused this destination (non-public address)")
        }
        other => ToolError::failed(format!("request failed: {other:?}")),
    }
}

pub fn send(request: Request<'_>) -> Result<Response, ToolError> {
    let (scheme, authority, path) = split_url(request.url)?;
    let headers = Fields::new();
    for (name, value) in request.headers {
        headers
            .append(name, value.as_bytes())
            .map_err(|e| ToolError::invalid_input(format!("header `{name}`: {e:?}")))?;
    }
    let outgoing = OutgoingRequest::new(headers);
    let bad = |what: &str| ToolError::invalid_input(format!("invalid {what} in `{}`", request.url));
    outgoing.set_method(&method(request.method)?).map_err(|_| bad("method"))?;
    outgoing.set_scheme(Some(&scheme)).map_err(|_| bad("scheme"))?;
    outgoing.set_authority(Some(authority)).map_err(|_| bad("host"))?;
    outgoing.set_path_with_query(Some(path)).map_err(|_| bad("path"))?;

    let body = outgoing.body().map_err(|_| ToolError::failed("request body unavailable"))?;
    let pending = outgoing_handler::handle(outgoing, None).map_err(refused)?;
    if let Some(text) = request.body {
        let stream = body.write().map_err(|_| ToolError::failed("request body stream unavailable"))?;
        for chunk in text.as_bytes().chunks(4096) {
            stream
                .blocking_write_and_flush(chunk)
                .map_err(|e| ToolError::failed(format!("sending the body: {e:?}")))?;
        }
    }
    OutgoingBody::finish(body, None).map_err(refused)?;

    pending.subscribe().block();
    let response = match pending.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(error))) => return Err(refused(error)),
        Some(Err(())) | None => return Err(ToolError::failed("the response was already taken")),
    };
    let status = response.status();
    let mut headers = BTreeMap::new();
    for (name, value) in response.headers().entries() {
        headers.insert(name, String::from_utf8_lossy(&value).into_owned());
    }
    let incoming = response.consume().map_err(|_| ToolError::failed("response body unavailable"))?;
    let stream = incoming.stream().map_err(|_| ToolError::failed("response body stream unavailable"))?;
    let mut body = Vec::new();
    let mut truncated = false;
    loop {
        match stream.blocking_read(16 << 10) {
            Ok(chunk) => {
                body.extend_from_slice(&chunk);
                if body.len() > request.max_bytes {
                    body.truncate(request.max_bytes);
                    truncated = true;
                    break;
                }
            }
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(e)) => {
                return Err(ToolError::failed(format!("reading the response: {}", e.to_debug_string())));
            }
        }
    }
    Ok(Response { status, headers, body, truncated })
}
