//! `fetch(url) -> result<string, string>`, the way other hosts' examples write a fetch
//! tool: no toolhost SDK, one plain export over `wasi:http`.

wit_bindgen::generate!({ path: "wit", world: "fetch" });

use wasip2::http::outgoing_handler;
use wasip2::http::types::{Fields, Method, OutgoingBody, OutgoingRequest, Scheme};
use wasip2::io::streams::StreamError;

struct Component;

impl Guest for Component {
    fn fetch(url: String) -> Result<String, String> {
        let (scheme, rest) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
            (Some(rest), _) => (Scheme::Https, rest),
            (_, Some(rest)) => (Scheme::Http, rest),
            _ => return Err(format!("{url} is not an http(s) URL")),
        };
        let (authority, path) = rest.find('/').map_or((rest, "/"), |at| rest.split_at(at));
        let request = OutgoingRequest::new(Fields::new());
        request.set_method(&Method::Get).map_err(|()| "bad method")?;
        request.set_scheme(Some(&scheme)).map_err(|()| "bad scheme")?;
        request.set_authority(Some(authority)).map_err(|()| "bad host")?;
        request.set_path_with_query(Some(path)).map_err(|()| "bad path")?;
        let body = request.body().map_err(|()| "no request body")?;
        let pending = outgoing_handler::handle(request, None).map_err(|e| format!("refused: {e:?}"))?;
        OutgoingBody::finish(body, None).map_err(|e| format!("refused: {e:?}"))?;
        pending.subscribe().block();
        let response = match pending.get() {
            Some(Ok(Ok(response))) => response,
            Some(Ok(Err(error))) => return Err(format!("refused: {error:?}")),
            _ => return Err("no response".into()),
        };
        let incoming = response.consume().map_err(|()| "no response body")?;
        let stream = incoming.stream().map_err(|()| "no response body stream")?;
        let mut bytes = Vec::new();
        loop {
            match stream.blocking_read(16 << 10) {
                Ok(chunk) => bytes.extend_from_slice(&chunk),
                Err(StreamError::Closed) => break,
                Err(StreamError::LastOperationFailed(e)) => return Err(e.to_debug_string()),
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

export!(Component);
