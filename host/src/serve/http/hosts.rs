//! Which `Host` and `Origin` a request may name: one check in front of every route that answers with data.
//!
//! A page on another site can make a browser send requests to a loopback server by
//! DNS rebinding: its own name, resolved to 127.0.0.1. Such a request names the other
//! site in `Host` (and in `Origin`), so a request naming a host that is not allowed,
//! or coming from a browser origin that is not, is refused with `403` before any route
//! runs — `/mcp` and `/metrics` alike. (`/health` and `/ready` say no names, only
//! counts, and load balancers reach them by addresses nobody lists; they are open.)

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::{StatusCode, header};

/// The hosts a request may name: `name` (any port) or `name:port` entries.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts {
    entries: Arc<Vec<(String, Option<u16>)>>,
}

impl AllowedHosts {
    /// From `name` and `name:port` entries (IPv6 addresses bare or in brackets).
    pub(crate) fn new(hosts: &[String]) -> AllowedHosts {
        AllowedHosts { entries: Arc::new(hosts.iter().filter_map(|host| authority(host)).collect()) }
    }

    /// Whether `authority` (`name` or `name:port`) is allowed.
    fn allows(&self, authority_text: &str) -> bool {
        let Some((name, port)) = authority(authority_text) else { return false };
        self.entries.iter().any(|(allowed, allowed_port)| {
            *allowed == name && allowed_port.is_none_or(|allowed_port| port == Some(allowed_port))
        })
    }

    /// Whether a browser `Origin` (`scheme://authority`) is allowed: http or https, to an
    /// allowed host. `null` (a sandboxed or file page) is not.
    fn allows_origin(&self, origin: &str) -> bool {
        let Some((scheme, authority)) = origin.split_once("://") else { return false };
        matches!(scheme, "http" | "https") && !authority.contains('/') && self.allows(authority)
    }
}

/// `name` or `name:port` as the lowercase name and the port; IPv6 addresses bare
/// (`::1`) or in brackets (`[::1]:8080`).
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix('[') {
        let (address, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port.parse().ok()?),
            None if after.is_empty() => None,
            None => return None,
        };
        return Some((address.to_ascii_lowercase(), port));
    }
    match text.split_once(':') {
        // More than one colon: a bare IPv6 address.
        Some((_, rest)) if rest.contains(':') => Some((text.to_ascii_lowercase(), None)),
        Some((name, port)) => Some((name.to_ascii_lowercase(), Some(port.parse().ok()?))),
        None if !text.is_empty() => Some((text.to_ascii_lowercase(), None)),
        None => None,
    }
}

/// Refuses with `403` a request whose `Host` is missing or not allowed, or whose
/// `Origin` (when it has one) is not.
pub(crate) async fn check_host_and_origin(
    State(allowed): State<AllowedHosts>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|host| host.to_str().ok());
    if !host.is_some_and(|host| allowed.allows(host)) {
        return (StatusCode::FORBIDDEN, "Forbidden: the Host header names a host this server does not serve\n")
            .into_response();
    }
    if let Some(origin) = headers.get(header::ORIGIN)
        && !origin.to_str().is_ok_and(|origin| allowed.allows_origin(origin))
    {
        return (StatusCode::FORBIDDEN, "Forbidden: requests from this origin are not allowed\n").into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins_match_names_and_ports() {
        let allowed = AllowedHosts::new(&["localhost".into(), "::1".into(), "tools.example:8443".into()]);
        for host in ["localhost", "LOCALHOST:3000", "[::1]:9000", "[::1]", "tools.example:8443"] {
            assert!(allowed.allows(host), "{host}");
        }
        for host in ["evil.example", "localhost.evil.example", "tools.example", "tools.example:443", "", "[::1"] {
            assert!(!allowed.allows(host), "{host}");
        }
        // Origins follow the allowed hosts: over http and https, any port unless the
        // host names one.
        for origin in
            ["http://localhost:5173", "https://localhost:1", "http://[::1]:9000", "https://tools.example:8443"]
        {
            assert!(allowed.allows_origin(origin), "{origin}");
        }
        for origin in ["null", "http://evil.example", "ftp://localhost", "http://localhost/x", "https://tools.example"]
        {
            assert!(!allowed.allows_origin(origin), "{origin}");
        }
    }
}
