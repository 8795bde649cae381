//! The sender behind the hook: one new connection to exactly the address the rules checked.
//!
//! The sender behind the hook: one new connection to exactly the address the rules
//! checked, with TLS verified for the name the guest asked for.

use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use rustls::pki_types::ServerName;
use wasmtime_wasi_http::{Error as HttpError, RequestOptions, WasiBody};

/// Sends `request` over a new connection to `address` (already checked), with TLS
/// verified for `host` when `use_tls`. The shape of wasmtime-wasi-http's
/// `default_send_request`, whose only difference is that it resolves the name again.
pub(crate) async fn send_pinned(
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

    let stream = connect(address, use_tls, host, connect_timeout).await?;
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

/// A new connection to `address`, TLS verified for `host` when `use_tls`.
async fn connect(
    address: SocketAddr,
    use_tls: bool,
    host: &str,
    timeout: Duration,
) -> Result<Box<dyn Stream>, HttpError> {
    let tcp = tcp_connect(address, timeout).await?;
    if !use_tls {
        return Ok(Box::new(tcp));
    }
    let server_name = match host.parse::<IpAddr>() {
        Ok(ip) => ServerName::from(ip),
        Err(_) => ServerName::try_from(host.to_owned())?,
    };
    let tls = tokio::time::timeout(timeout, tls_connector().connect(server_name, tcp))
        .await
        .map_err(|_| HttpError::ConnectionTimeout)?
        .map_err(tls_error)?;
    Ok(Box::new(tls))
}

/// A TCP connection to `address` that sends without Nagle's delay: a request's head and
/// body may go out as separate small writes.
async fn tcp_connect(address: SocketAddr, timeout: Duration) -> Result<tokio::net::TcpStream, HttpError> {
    let tcp = tokio::time::timeout(timeout, tokio::net::TcpStream::connect(address))
        .await
        .map_err(|_| HttpError::ConnectionTimeout)?
        .map_err(HttpError::Connect)?;
    tcp.set_nodelay(true).map_err(HttpError::Connect)?;
    Ok(tcp)
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

/// The host's TLS client configuration (`crate::tls`), as a connector.
fn tls_connector() -> tokio_rustls::TlsConnector {
    tokio_rustls::TlsConnector::from(crate::tls::client_config())
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

    #[tokio::test]
    async fn outgoing_connections_send_without_delay() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let tcp = tcp_connect(listener.local_addr().unwrap(), Duration::from_secs(5)).await.unwrap();
        assert!(tcp.nodelay().unwrap());
    }
}
