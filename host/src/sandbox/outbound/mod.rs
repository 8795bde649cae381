//! Outgoing HTTP for guests (`wasi:http/outgoing-handler`), through an allow-list.
//!
//! Every request passes one hook, [`OutboundHttp::send_request`]:
//! 1. the destination `host[:port]` must match a granted [`HostPattern`];
//! 2. the host is resolved once, and any address in a loopback, private, link-local,
//!    unique-local, unspecified or otherwise non-public range is refused unless a grant
//!    names that address literally (`127.0.0.1:8080`): granting a *name* never grants
//!    what it may resolve to inside the host's network (not even `localhost`);
//! 3. the request is sent over a connection to exactly the address that was checked,
//!    so a second DNS answer cannot redirect it ("DNS rebinding"); HTTPS still verifies
//!    the server's certificate against the *name* the guest asked for (webpki roots).
//!
//! Every refusal is recorded with the call (which host, why). Raw sockets
//! (`wasi:sockets`) stay denied: the WASI context never enables TCP, UDP or name lookup.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use http::uri::Scheme;
use rustls::pki_types::ServerName;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

/// One granted destination: `api.example.com`, `*.example.org:8443`, `127.0.0.1:8080`,
/// `[::1]:3000`. Without a port, the default ports 80 and 443 are allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPattern {
    host: HostMatch,
    port: Option<u16>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostMatch {
    Name(String),
    /// `*.example.org`: any name ending in `.example.org` (not `example.org` itself).
    Subdomains(String),
    Address(IpAddr),
}

impl HostPattern {
    pub fn parse(text: &str) -> Result<HostPattern, String> {
        let bad = |why: &str| format!("network grant `{text}` {why}");
        if text.contains("://") || text.contains('/') {
            return Err(bad("must be host[:port], not a URL"));
        }
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (address, after) = rest.split_once(']').ok_or_else(|| bad("has an unclosed `[`"))?;
            let port = match after {
                "" => None,
                after => Some(after.strip_prefix(':').ok_or_else(|| bad("has text after `]`"))?),
            };
            (address, port)
        } else {
            match text.rsplit_once(':') {
                Some((host, port)) if !host.contains(':') => (host, Some(port)),
                Some(_) => return Err(bad("is an IPv6 address without brackets; write `[addr]:port`")),
                None => (text, None),
            }
        };
        let port = match port {
            None => None,
            Some(port) => match port.parse::<u16>() {
                Ok(0) | Err(_) => return Err(bad("has an invalid port (1-65535)")),
                Ok(port) => Some(port),
            },
        };
        let host = if let Ok(address) = host.parse::<IpAddr>() {
            HostMatch::Address(address)
        } else if let Some(suffix) = host.strip_prefix("*.") {
            check_dns_name(suffix).map_err(|why| bad(&why))?;
            HostMatch::Subdomains(suffix.to_ascii_lowercase())
        } else {
            check_dns_name(host).map_err(|why| bad(&why))?;
            HostMatch::Name(host.to_ascii_lowercase())
        };
        Ok(HostPattern { host, port })
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            Some(granted) => granted == port,
            None => port == 80 || port == 443,
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let host_ok = match &self.host {
            HostMatch::Name(name) => host.eq_ignore_ascii_case(name),
            HostMatch::Subdomains(suffix) => {
                let host = host.to_ascii_lowercase();
                host.len() > suffix.len() + 1
                    && host.ends_with(suffix.as_str())
                    && host[..host.len() - suffix.len()].ends_with('.')
            }
            HostMatch::Address(address) => host.parse::<IpAddr>().is_ok_and(|ip| ip == *address),
        };
        port_ok && host_ok
    }

    /// Whether this grant names a non-public address on purpose: only an address
    /// literal does.
    fn names_restricted(&self, address: IpAddr) -> bool {
        matches!(&self.host, HostMatch::Address(granted) if *granted == address)
    }
}

impl std::fmt::Display for HostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            HostMatch::Name(name) => f.write_str(name)?,
            HostMatch::Subdomains(suffix) => write!(f, "*.{suffix}")?,
            HostMatch::Address(IpAddr::V6(address)) => write!(f, "[{address}]")?,
            HostMatch::Address(address) => write!(f, "{address}")?,
        }
        match self.port {
            Some(port) => write!(f, ":{port}"),
            None => Ok(()),
        }
    }
}

fn check_dns_name(name: &str) -> Result<(), String> {
    let label_ok = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Err("is not a valid host name (letters, digits, `-` and `.`; `*.` only as a prefix)".into());
    }
    Ok(())
}

/// Addresses a guest may reach only when a grant names them.
fn is_restricted(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => is_restricted_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_restricted_v4(v4);
            }
            let segments = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (segments[0] & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (segments[0] & 0xffc0) == 0xfe80 // link-local fe80::/10
                || (segments[0] == 0x2001 && segments[1] == 0x0db8) // documentation
                || v6 == Ipv6Addr::new(0, 0, 0, 0, 0, 0xffff, 0, 0)
        }
    }
}

fn is_restricted_v4(v4: Ipv4Addr) -> bool {
    let [a, b, ..] = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_unspecified()
        || v4.is_broadcast()
        || v4.is_multicast()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT 100.64.0.0/10
        || (a == 198 && (b == 18 || b == 19)) // benchmarking 198.18.0.0/15
        || a >= 240 // reserved
}

/// A refused outgoing request, recorded with the call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeniedRequest {
    /// `host:port` the guest asked for.
    pub destination: String,
    pub reason: String,
}

/// The per-call `wasi:http` hooks: the component's allow-list and the call's record of
/// refusals.
pub(crate) struct OutboundHttp {
    patterns: Arc<[HostPattern]>,
    denied: Arc<Mutex<Vec<DeniedRequest>>>,
}

impl OutboundHttp {
    pub fn new(patterns: Arc<[HostPattern]>) -> Self {
        OutboundHttp { patterns, denied: Arc::default() }
    }

    pub fn denied(&self) -> Vec<DeniedRequest> {
        self.denied.lock().map(|denied| denied.clone()).unwrap_or_default()
    }
}

fn deny(record: &Mutex<Vec<DeniedRequest>>, destination: String, reason: String, error: HttpError) -> HttpError {
    tracing::info!(target: "toolhost::outbound", %destination, %reason, "outgoing request refused");
    if let Ok(mut denied) = record.lock() {
        denied.push(DeniedRequest { destination, reason });
    }
    error
}

type SendFuture = Box<
    dyn Future<
            Output = Result<
                (http::Response<WasiBody>, Box<dyn Future<Output = Result<(), HttpError>> + Send>),
                HttpError,
            >,
        > + Send,
>;

impl WasiHttpHooks for OutboundHttp {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _response_errors: Box<dyn Future<Output = Result<(), HttpError>> + Send>,
    ) -> SendFuture {
        let patterns = self.patterns.clone();
        let denied = self.denied.clone();
        Box::new(async move {
            let uri = request.uri().clone();
            let use_tls = uri.scheme() == Some(&Scheme::HTTPS);
            let host = uri.host().unwrap_or_default().to_owned();
            let port = uri.port_u16().unwrap_or(if use_tls { 443 } else { 80 });
            let destination = format!("{host}:{port}");
            let granted: Vec<&HostPattern> = patterns.iter().filter(|p| p.matches(&host, port)).collect();
            if granted.is_empty() {
                let reason = if patterns.is_empty() {
                    "no network access is granted to this component".to_owned()
                } else {
                    format!(
                        "not in the allow-list ({})",
                        patterns.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
                    )
                };
                return Err(deny(&denied, destination, reason, HttpError::HttpRequestDenied));
            }

            let bare_host = host.trim_start_matches('[').trim_end_matches(']');
            let addresses: Vec<SocketAddr> = match bare_host.parse::<IpAddr>() {
                Ok(address) => vec![SocketAddr::new(address, port)],
                Err(_) => match tokio::net::lookup_host((bare_host, port)).await {
                    Ok(addresses) => addresses.collect(),
                    Err(e) => {
                        let reason = format!("name resolution failed: {e}");
                        return Err(deny(&denied, destination, reason, HttpError::DestinationNotFound));
                    }
                },
            };
            let Some(checked) = addresses.iter().copied().find(|address| {
                !is_restricted(address.ip()) || granted.iter().any(|p| p.names_restricted(address.ip()))
            }) else {
                let listed = addresses.iter().map(|a| a.ip().to_string()).collect::<Vec<_>>().join(", ");
                let reason =
                    format!("resolves only to non-public addresses ({listed}); grant the address itself to allow it");
                return Err(deny(&denied, destination, reason, HttpError::DestinationIpProhibited));
            };

            send_pinned(request, options, checked, use_tls, bare_host).await
        })
    }
}

/// Sends `request` over a new connection to `address` (already checked), with TLS
/// verified for `host` when `use_tls`. The shape of wasmtime-wasi-http's
/// `default_send_request`, whose only difference is that it resolves the name again.
async fn send_pinned(
    mut request: http::Request<WasiBody>,
    options: Option<RequestOptions>,
    address: SocketAddr,
    use_tls: bool,
    host: &str,
) -> Result<(http::Response<WasiBody>, Box<dyn Future<Output = Result<(), HttpError>> + Send>), HttpError> {
    use http_body_util::BodyExt;

    let timeout = |pick: fn(&RequestOptions) -> Option<Duration>| {
        options.as_ref().and_then(pick).unwrap_or(DEFAULT_NETWORK_TIMEOUT)
    };
    let connect_timeout = timeout(|o| o.connect_timeout);
    let first_byte_timeout = timeout(|o| o.first_byte_timeout);
    let between_bytes_timeout = timeout(|o| o.between_bytes_timeout).max(Duration::from_nanos(1));

    let tcp = tokio::time::timeout(connect_timeout, tokio::net::TcpStream::connect(address))
        .await
        .map_err(|_| HttpError::ConnectionTimeout)?
        .map_err(HttpError::Connect)?;
    let stream: Box<dyn Stream> = if use_tls {
        let server_name = match host.parse::<IpAddr>() {
            Ok(ip) => ServerName::from(ip),
            Err(_) => ServerName::try_from(host.to_owned())?,
        };
        let tls = tokio::time::timeout(connect_timeout, tls_connector().connect(server_name, tcp))
            .await
            .map_err(|_| HttpError::ConnectionTimeout)?
            .map_err(tls_error)?;
        Box::new(tls)
    } else {
        Box::new(tcp)
    };
    let (mut sender, connection) = tokio::time::timeout(
        connect_timeout,
        hyper::client::conn::http1::Builder::new().handshake(wasmtime_wasi_http::io::TokioIo::new(stream)),
    )
    .await
    .map_err(|_| HttpError::ConnectionTimeout)??;

    // The authority travels in the Host header; the request line carries only the path,
    // as for any request not addressed to a proxy.
    let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_owned();
    *request.uri_mut() =
        http::Uri::builder().path_and_query(path).build().map_err(|_| HttpError::HttpRequestUriInvalid)?;

    // Drive the connection beside the response: it must run for the response (and its
    // body) to arrive, and ends when the body is done.
    let connection = tokio::spawn(connection);
    let response = tokio::time::timeout(first_byte_timeout, sender.send_request(request))
        .await
        .map_err(|_| HttpError::ConnectionReadTimeout)??;
    let response = response.map(|incoming| {
        let mut idle = tokio::time::interval(between_bytes_timeout);
        idle.reset();
        IncomingBody { incoming, idle }.boxed_unsync()
    });
    let done = async move {
        match connection.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(error)) if error.is_timeout() => Err(HttpError::HttpResponseTimeout),
            Ok(Err(error)) => Err(error.into()),
            Err(_cancelled) => Err(HttpError::ConnectionTerminated),
        }
    };
    Ok((response, Box::new(done)))
}

/// A failed handshake in `wasi:http` terms, so the guest can tell a certificate it must
/// not trust from a broken connection.
fn tls_error(error: std::io::Error) -> HttpError {
    let rustls_error = error.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match rustls_error {
        Some(rustls::Error::InvalidCertificate(_)) => HttpError::TlsCertificateError,
        Some(rustls::Error::AlertReceived(alert)) => {
            HttpError::TlsAlertReceived { alert_id: Some(u8::from(*alert)), alert_message: Some(format!("{alert:?}")) }
        }
        _ => HttpError::Tls(error),
    }
}

/// The timeout of a network phase the guest set no option for.
const DEFAULT_NETWORK_TIMEOUT: Duration = Duration::from_secs(600);

trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Sync + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Sync + Unpin + 'static> Stream for T {}

/// One TLS client configuration for the process: webpki's root certificates.
fn tls_connector() -> tokio_rustls::TlsConnector {
    static CONFIG: std::sync::OnceLock<Arc<rustls::ClientConfig>> = std::sync::OnceLock::new();
    let config = CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore { roots: webpki_roots::TLS_SERVER_ROOTS.into() };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("ring supports the default protocol versions")
            .with_root_certificates(roots)
            .with_no_client_auth();
        Arc::new(config)
    });
    tokio_rustls::TlsConnector::from(config.clone())
}

/// A response body that fails when the server goes quiet for longer than the guest's
/// `between-bytes-timeout`.
struct IncomingBody {
    incoming: hyper::body::Incoming,
    idle: tokio::time::Interval,
}

impl http_body::Body for IncomingBody {
    type Data = bytes::Bytes;
    type Error = HttpError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<bytes::Bytes>, HttpError>>> {
        match Pin::new(&mut self.incoming).poll_frame(cx) {
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Ready(Some(Err(error))) if error.is_timeout() => {
                Poll::Ready(Some(Err(HttpError::HttpResponseTimeout)))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(error.into()))),
            Poll::Ready(Some(Ok(frame))) => {
                self.idle.reset();
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => {
                std::task::ready!(self.idle.poll_tick(cx));
                Poll::Ready(Some(Err(HttpError::ConnectionReadTimeout)))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.incoming.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.incoming.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_parse_and_match() {
        let exact = HostPattern::parse("api.example.com:443").unwrap();
        assert!(exact.matches("API.example.com", 443));
        assert!(!exact.matches("api.example.com", 80));
        assert!(!exact.matches("evil-api.example.com", 443));

        let default_ports = HostPattern::parse("example.com").unwrap();
        assert!(default_ports.matches("example.com", 80) && default_ports.matches("example.com", 443));
        assert!(!default_ports.matches("example.com", 8080));

        let wildcard = HostPattern::parse("*.example.org").unwrap();
        assert!(wildcard.matches("a.example.org", 443));
        assert!(wildcard.matches("a.b.example.org", 443));
        assert!(!wildcard.matches("example.org", 443));
        assert!(!wildcard.matches("badexample.org", 443));

        let loopback = HostPattern::parse("127.0.0.1:8080").unwrap();
        assert!(loopback.matches("127.0.0.1", 8080));
        assert!(loopback.names_restricted("127.0.0.1".parse().unwrap()));
        let v6 = HostPattern::parse("[::1]:3000").unwrap();
        assert!(v6.matches("[::1]", 3000));
        assert_eq!(v6.to_string(), "[::1]:3000");
    }

    #[test]
    fn malformed_patterns_say_why() {
        for (text, why) in [
            ("https://example.com", "not a URL"),
            ("example.com:0", "invalid port"),
            ("example.com:99999", "invalid port"),
            ("exa mple.com", "not a valid host name"),
            ("*.*.com", "not a valid host name"),
            ("ex*ample.com", "not a valid host name"),
            ("::1", "without brackets"),
            ("[::1", "unclosed"),
            ("", "not a valid host name"),
        ] {
            let error = HostPattern::parse(text).unwrap_err();
            assert!(error.contains(why), "{text}: {error}");
        }
    }

    #[test]
    fn private_and_special_ranges_are_restricted() {
        for address in [
            "127.0.0.1",
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:10.0.0.1",
            "::",
        ] {
            assert!(is_restricted(address.parse().unwrap()), "{address}");
        }
        for address in ["93.184.216.34", "1.1.1.1", "2606:4700::1111"] {
            assert!(!is_restricted(address.parse().unwrap()), "{address}");
        }
    }
}
