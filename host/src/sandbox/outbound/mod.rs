//! Outgoing HTTP for guests (`wasi:http/outgoing-handler`), through an allow-list.
//!
//! Every request passes one hook, [`OutboundHttp::send_request`]:
//! 1. the destination `host[:port]` must match a granted [`HostPattern`];
//! 2. the host is resolved once (by the host's [`Resolve`]r), and any address in a
//!    special-purpose range ([`addresses`]: loopback, private, link-local, shared,
//!    documentation, IPv6 forms of such IPv4 addresses, …) is refused unless a grant
//!    names that address literally (`127.0.0.1:8080`): granting a *name* never grants
//!    what it may resolve to inside the host's network (not even `localhost`);
//! 3. the request is sent over a connection to exactly the address that was checked,
//!    so a second DNS answer cannot redirect it ("DNS rebinding"); HTTPS still verifies
//!    the server's certificate against the *name* the guest asked for (webpki roots).
//!
//! Every refusal is recorded with the call (which host, why). Raw sockets
//! (`wasi:sockets`) stay denied: the WASI context never enables TCP, UDP or name lookup.

mod addresses;
mod rules;
mod sender;

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use http::uri::Scheme;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody, WasiHttpHooks};

use addresses::special_purpose;
pub use rules::HostPattern;
pub(crate) use sender::send_pinned;

/// Resolves the host names guests send requests to (once the allow-list let a name
/// through). The host's default is the system resolver; another one (split-horizon
/// DNS, a test's fixed answers) goes to
/// [`ToolHostBuilder::resolver`](crate::ToolHostBuilder::resolver). Whatever it answers
/// is checked address by address before any connection.
pub trait Resolve: Send + Sync {
    /// The addresses of `host` (a DNS name, never an address literal) at `port`.
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>>;
}

/// The system's resolver (`getaddrinfo`: `/etc/hosts`, then DNS).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> {
        let host = host.to_owned();
        Box::pin(async move { Ok(tokio::net::lookup_host((host.as_str(), port)).await?.collect()) })
    }
}

/// A refused outgoing request, recorded with the call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeniedRequest {
    /// `host:port` the guest asked for.
    pub destination: String,
    /// Why it was refused.
    pub reason: String,
}

/// The per-call `wasi:http` hooks: the component's allow-list and the call's record of
/// refusals.
pub(crate) struct OutboundHttp {
    patterns: Arc<[HostPattern]>,
    /// `None` for a component granted no destination: nothing it asks for is resolved.
    resolver: Option<Arc<dyn Resolve>>,
    /// Made at the call's first request: most calls send none.
    denied: Option<Arc<Mutex<Vec<DeniedRequest>>>>,
}

impl OutboundHttp {
    pub fn new(patterns: Arc<[HostPattern]>, resolver: Option<Arc<dyn Resolve>>) -> Self {
        OutboundHttp { patterns, resolver, denied: None }
    }

    pub fn denied(&self) -> Vec<DeniedRequest> {
        let denied = self.denied.as_ref().and_then(|denied| denied.lock().ok().map(|denied| denied.clone()));
        denied.unwrap_or_default()
    }
}

/// The resolver of a component granted no destination. The allow-list refuses each of
/// its requests first; this refuses too, should one ever get past it.
struct NoResolver;

impl Resolve for NoResolver {
    fn resolve(&self, host: &str, _port: u16) -> BoxFuture<'static, std::io::Result<Vec<SocketAddr>>> {
        let error = std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("no network access is granted to resolve {host:?}"),
        );
        Box::pin(async move { Err(error) })
    }
}

fn deny(record: &Mutex<Vec<DeniedRequest>>, destination: String, reason: String, error: HttpError) -> HttpError {
    tracing::info!(target: "toolhost::outbound", %destination, %reason, "outgoing request refused");
    if let Ok(mut denied) = record.lock() {
        denied.push(DeniedRequest { destination, reason });
    }
    error
}

/// Why a destination was refused before any connection: for the record, and in
/// `wasi:http` terms.
pub(crate) struct Refusal {
    pub reason: String,
    pub error: HttpError,
}

/// The one address a request to `host:port` may connect to: the destination must match
/// a granted pattern, and the name (unless it is an address literal) is resolved once
/// by `resolver`; an address in a special-purpose range is refused unless a grant that
/// matched names that address itself. Every sender of outgoing HTTP (guests' `wasi:http`,
/// declarative HTTP tools) decides here, so there is one allow-list.
pub(crate) async fn checked_address(
    patterns: &[HostPattern],
    resolver: &dyn Resolve,
    host: &str,
    port: u16,
) -> Result<SocketAddr, Refusal> {
    let granted: Vec<&HostPattern> = patterns.iter().filter(|p| p.matches(host, port)).collect();
    if granted.is_empty() {
        let reason = if patterns.is_empty() {
            "no network access is granted to this component".to_owned()
        } else {
            format!(
                "not in the allow-list ({})",
                patterns.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            )
        };
        return Err(Refusal { reason, error: HttpError::HttpRequestDenied });
    }

    let bare_host = host.trim_start_matches('[').trim_end_matches(']');
    let addresses: Vec<SocketAddr> = match bare_host.parse::<IpAddr>() {
        Ok(address) => vec![SocketAddr::new(address, port)],
        Err(_) => match resolver.resolve(bare_host, port).await {
            Ok(addresses) => addresses,
            Err(e) => {
                let reason = format!("name resolution failed: {e}");
                return Err(Refusal { reason, error: HttpError::DestinationNotFound });
            }
        },
    };
    // Only a grant that matched the destination may name its address: a granted
    // name never leads to an internal address granted for another destination.
    let refusal = |address: &SocketAddr| {
        let named = granted.iter().any(|p| p.names_address(*address));
        special_purpose(address.ip()).filter(|_| !named)
    };
    let Some(checked) = addresses.iter().copied().find(|address| refusal(address).is_none()) else {
        let listed: Vec<String> =
            addresses.iter().map(|a| format!("{} ({})", a.ip(), refusal(a).unwrap_or_default())).collect();
        let listed = if listed.is_empty() { "no address".to_owned() } else { listed.join(", ") };
        let reason = format!("resolves only to non-public addresses: {listed}; grant the address itself to allow it");
        return Err(Refusal { reason, error: HttpError::DestinationIpProhibited });
    };
    Ok(checked)
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
        let resolver: Arc<dyn Resolve> = self.resolver.clone().unwrap_or_else(|| Arc::new(NoResolver));
        let denied = self.denied.get_or_insert_with(Arc::default).clone();
        Box::new(async move {
            let uri = request.uri().clone();
            let use_tls = uri.scheme() == Some(&Scheme::HTTPS);
            let host = uri.host().unwrap_or_default().to_owned();
            let port = uri.port_u16().unwrap_or(if use_tls { 443 } else { 80 });
            let destination = format!("{host}:{port}");
            let bare_host = host.trim_start_matches('[').trim_end_matches(']');
            let checked = match checked_address(&patterns, resolver.as_ref(), &host, port).await {
                Ok(checked) => checked,
                Err(refusal) => return Err(deny(&denied, destination, refusal.reason, refusal.error)),
            };
            send_pinned(request, options, checked, use_tls, bare_host).await
        })
    }
}
