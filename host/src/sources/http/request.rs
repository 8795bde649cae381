//! One call of an HTTP tool: the request from the input, sent through the outgoing-HTTP rules, the output read.
//!
//! One call of an HTTP tool: the request from the input, sent through the outgoing-HTTP
//! rules of components (allow-list, special-purpose addresses, a connection to the
//! checked address), and the output from the response: its JSON, or, for a response
//! whose `Content-Type` is an image or audio, that media as a content block (the output
//! is then `null`).

use std::borrow::Cow;

use bytes::Bytes;
use http::header::{CONTENT_TYPE, HOST, USER_AGENT};
use http::{HeaderValue, Request};
use http_body_util::{BodyExt, Full, Limited};
use serde_json::Value;

use crate::content::{Content, is_media_type};
use crate::redact::Redactor;
use crate::sandbox::{DeniedRequest, Resolve, checked_address, send_pinned};
use crate::sources::http::definition::RequestSpec;
use crate::text::{Escaped, bounded};
use wasmtime_wasi_http::WasiBody;

/// Most bytes of an error response's body quoted in the failure.
pub(crate) const MAX_EXCERPT: usize = 512;

/// How a call fails, before the pipeline puts it in its terms.
#[derive(Debug)]
pub(crate) enum HttpCallFailure {
    /// The input cannot fill the request (a URL value, the body's part).
    Input(String),
    /// The service, or the way to it, failed.
    Failed(String),
    /// The host could not make the request (a secret that went away).
    Host(String),
}

/// What a service answered: the tool's output, or media to show.
pub(crate) enum Answer {
    Output(Value),
    Media(Content),
}

/// Sends the request `input` makes and returns the output. A refused destination is
/// recorded in `denied`.
pub(crate) async fn call(
    spec: &RequestSpec,
    input: &Value,
    resolver: &dyn Resolve,
    denied: &mut Vec<DeniedRequest>,
) -> Result<Answer, HttpCallFailure> {
    let Built { request, redactor } = build(spec, input)?;
    let destination = format!("{}:{}", spec.url.host, spec.url.port);
    let address = match checked_address(&spec.network, resolver, &spec.url.host, spec.url.port).await {
        Ok(address) => address,
        Err(refusal) => {
            tracing::info!(target: "toolhost::outbound", %destination, reason = %refusal.reason, "outgoing request refused");
            // The call pipeline adds why, as it does for every source (`host/call.rs`).
            let message = format!("the request to {destination} was refused");
            denied.push(DeniedRequest { destination, reason: refusal.reason });
            return Err(HttpCallFailure::Failed(message));
        }
    };
    let bare_host = spec.url.host.trim_start_matches('[').trim_end_matches(']');
    let use_tls = spec.url.scheme == "https";
    // No timeout per network phase: the call's time limit bounds the whole request, and
    // a phase limit equal to it would race it and turn a `timeout` into a `failed`.
    let (response, _connection) = send_pinned(request, None, address, use_tls, bare_host)
        .await
        .map_err(|e| HttpCallFailure::Failed(format!("the request to {destination} failed: {e}")))?;
    match read(spec, &destination, response, &redactor).await? {
        Read::Json(response) => output(spec, response, &redactor).map(Answer::Output),
        Read::Media(_) if spec.output.is_some() => Err(HttpCallFailure::Failed(
            "the response is an image or audio, not the JSON this tool's `output` points into".to_owned(),
        )),
        Read::Media(media) => Ok(Answer::Media(media)),
    }
}

/// A response's body as read.
enum Read {
    Json(Value),
    Media(Content),
}

/// The media a `Content-Type` names as content, when it is an image or audio.
fn media(content_type: Option<&HeaderValue>, body: &Bytes) -> Option<Content> {
    let essence = content_type?.to_str().ok()?.split(';').next()?.trim().to_ascii_lowercase();
    if !is_media_type(&essence) {
        return None;
    }
    match essence.split_once('/')?.0 {
        "image" => Some(Content::image(body.to_vec(), essence.clone())),
        "audio" => Some(Content::audio(body.to_vec(), essence.clone())),
        _ => None,
    }
}

/// A request ready to send, and what blanks the secrets its headers hold out of
/// anything the service answers (never to be shown).
struct Built {
    request: Request<WasiBody>,
    redactor: Redactor,
}

/// The request `input` makes: its URL filled, its headers (secrets read now), its body.
fn build(spec: &RequestSpec, input: &Value) -> Result<Built, HttpCallFailure> {
    let url = spec.url.fill(input).map_err(HttpCallFailure::Input)?;
    let mut secrets = Vec::new();
    let mut request = Request::builder().method(spec.method.clone()).uri(&url);
    let mut has_content_type = false;
    for (name, source) in &spec.headers {
        let value = source.value().map_err(|problem| HttpCallFailure::Host(format!("header `{name}`: {problem}")))?;
        if let Ok(Some(secret)) = source.secret() {
            secrets.push(secret);
        }
        has_content_type |= name == CONTENT_TYPE;
        request = request.header(name, value);
    }
    let authority = HeaderValue::from_str(&spec.url.authority)
        .map_err(|_| HttpCallFailure::Host("the URL's authority is not a Host header".into()))?;
    request = request.header(HOST, authority).header(USER_AGENT, concat!("toolhost/", env!("CARGO_PKG_VERSION")));
    let body = match &spec.body {
        None => Bytes::new(),
        Some(pointer) => {
            let part = input.pointer(pointer).ok_or_else(|| {
                HttpCallFailure::Input(format!("the request's body is the input's `{pointer}`, which is absent"))
            })?;
            if !has_content_type {
                request = request.header(CONTENT_TYPE, "application/json");
            }
            Bytes::from(part.to_string())
        }
    };
    let request = request
        .body(Full::new(body).map_err(|never| match never {}).boxed_unsync())
        .map_err(|e| HttpCallFailure::Input(format!("the URL `{}` is not valid: {e}", Escaped(&url))))?;
    let redactor = Redactor::new(secrets.iter().map(String::as_str));
    Ok(Built { request, redactor })
}

/// The response's JSON, or its image or audio, read within `max_response`; a status
/// other than success is the tool's failure, with an excerpt of the body.
async fn read(
    spec: &RequestSpec,
    destination: &str,
    response: http::Response<WasiBody>,
    redactor: &Redactor,
) -> Result<Read, HttpCallFailure> {
    let status = response.status();
    let content_type = response.headers().get(CONTENT_TYPE).cloned();
    let body = Limited::new(response.into_body(), usize::try_from(spec.max_response).unwrap_or(usize::MAX))
        .collect()
        .await
        .map(|collected| collected.to_bytes());
    if !status.is_success() {
        let excerpt = match &body {
            Ok(bytes) => excerpt(bytes, redactor),
            Err(_) => "(the body is over max_response)".to_owned(),
        };
        return Err(HttpCallFailure::Failed(format!("{destination} answered HTTP {status}: {excerpt}")));
    }
    let body = body.map_err(|e| {
        let over = e.downcast_ref::<http_body_util::LengthLimitError>().is_some();
        match over {
            true => HttpCallFailure::Failed(format!(
                "the response is over this tool's max_response ({} bytes)",
                spec.max_response
            )),
            false => HttpCallFailure::Failed(format!("the response from {destination} broke off: {e}")),
        }
    })?;
    if let Some(media) = media(content_type.as_ref(), &body) {
        // Bytes cannot be blanked out like text: media that echoes a credential the
        // request carried (an SVG quoting a header) is refused whole.
        if !redactor.is_empty() && matches!(redactor.text(&String::from_utf8_lossy(&body)), Cow::Owned(_)) {
            return Err(HttpCallFailure::Failed(
                "the response's media holds a credential the request carried, and is not shown".to_owned(),
            ));
        }
        return Ok(Read::Media(media));
    }
    serde_json::from_slice(&body).map(Read::Json).map_err(|e| {
        HttpCallFailure::Failed(format!("the response is not JSON ({e}); it begins: {}", excerpt(&body, redactor)))
    })
}

/// The part of the response that is the tool's output, with any secret the request
/// carried blanked out (a service that echoes its request's headers).
fn output(spec: &RequestSpec, response: Value, redactor: &Redactor) -> Result<Value, HttpCallFailure> {
    match &spec.output {
        None => Ok(redactor.value(response)),
        Some(pointer) => response.pointer(pointer).cloned().map(|part| redactor.value(part)).ok_or_else(|| {
            HttpCallFailure::Failed(format!(
                "the response has nothing at `{pointer}`; it begins: {}",
                excerpt(response.to_string().as_bytes(), redactor)
            ))
        }),
    }
}

/// The start of a body for an error message: bounded, with any secret the request
/// carried blanked out (a service may echo a header back), and control characters
/// escaped.
fn excerpt(body: &[u8], redactor: &Redactor) -> String {
    let text = redactor.text(&String::from_utf8_lossy(body)).into_owned();
    let text = bounded(text, MAX_EXCERPT);
    Escaped(&text).to_string()
}
