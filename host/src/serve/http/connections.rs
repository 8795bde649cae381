//! Accepting and serving the HTTP/1.1 connections of the MCP server, bounded against clients that stall.
//!
//! Accepting and serving the HTTP/1.1 connections of the MCP server, bounded so that
//! clients which connect and then stall cannot use it up.
//!
//! - At most `max_connections` connections are served at once (fewer when the process
//!   may not open that many files): the accept loop takes a permit before it accepts,
//!   so past the bound connections wait in the kernel's listen backlog instead of
//!   failing `accept` with `EMFILE` over and over.
//! - A connection has `header_timeout` to send a request's headers (a new connection
//!   and a kept-alive one alike) and `max_header_size` bytes for them; hyper enforces
//!   both. Bodies are bounded by the middleware, which reads them.
//! - A connection costs a task and its buffers, never a thread: a stalled client holds
//!   no worker.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::pin;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use crate::serve::http::limits::{HttpLimits, LISTEN_BACKLOG, bounds};

/// How long a connection may take to finish once shutdown began: one idle or between
/// requests closes at once, and the sessions' streams end with the sessions, so only a
/// client in the middle of sending a request is still there; it is cut off.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on the connections `listener` accepts until `shutdown` completes,
/// then stops accepting, lets every connection finish its request in flight (for at
/// most [`SHUTDOWN_GRACE`]), and returns when all are closed. `on_shutdown` runs between the two (it ends the
/// sessions' event streams, which would otherwise keep their connections open).
pub(crate) async fn serve_connections(
    listener: TcpListener,
    router: axum::Router,
    limits: &HttpLimits,
    shutdown: impl Future<Output = ()>,
    on_shutdown: impl FnOnce(),
) {
    let open_files = raise_open_file_limit();
    let max_connections = connection_budget(limits.max_connections, open_files);
    if max_connections < limits.max_connections {
        tracing::warn!(
            configured = limits.max_connections,
            open_files,
            "serving at most {max_connections} connections at once: the process may not open more files"
        );
    }
    let permits = Arc::new(Semaphore::new(max_connections));
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).max_header_size(limits.max_header_size);
    let closing = CancellationToken::new();
    let mut shutdown = pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    back_off_after(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        without_delay(&tcp);
        let connection = http.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(router.clone()));
        tokio::spawn(serve_one(connection, closing.clone(), permit));
    }
    drop(listener);
    on_shutdown();
    closing.cancel();
    // Every permit back means every connection closed.
    let _all = permits.acquire_many(max_connections as u32).await;
}

/// One HTTP/1.1 connection serving the router.
type Connection = hyper::server::conn::http1::Connection<TokioIo<TcpStream>, TowerToHyperService<axum::Router>>;

/// Serves one connection until it ends, or, once `closing` is cancelled, until it
/// finishes its request in flight (for at most [`SHUTDOWN_GRACE`]); holds its `permit`
/// until then.
async fn serve_one(connection: Connection, closing: CancellationToken, permit: tokio::sync::OwnedSemaphorePermit) {
    let _permit = permit;
    let mut connection = pin!(connection);
    let result = tokio::select! {
        result = connection.as_mut() => result,
        () = closing.cancelled() => {
            connection.as_mut().graceful_shutdown();
            match tokio::time::timeout(SHUTDOWN_GRACE, connection).await {
                Ok(result) => result,
                Err(_) => return, // dropped: the socket closes
            }
        }
    };
    if let Err(e) = result {
        tracing::debug!("connection ended: {e}");
    }
}

/// A listener on `addr` whose backlog holds a burst of connections: the standard
/// library's (and tokio's) 128 overflows when many clients connect at once, and the
/// kernel then drops connection attempts, which clients retry only a second later.
pub(crate) fn listen(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    // As the standard library does: a restarted server can bind at once.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Waits after a failed `accept`. A connection reset before it was accepted is the
/// client's affair; running out of files or memory passes only with time, and
/// retrying at once would spin.
async fn back_off_after(error: std::io::Error) {
    use std::io::ErrorKind;
    if matches!(
        error.kind(),
        ErrorKind::ConnectionAborted
            | ErrorKind::ConnectionReset
            | ErrorKind::ConnectionRefused
            | ErrorKind::Interrupted
    ) {
        return;
    }
    tracing::warn!("cannot accept a connection: {error}; retrying in 100 ms");
    tokio::time::sleep(Duration::from_millis(100)).await;
}

/// Turns off Nagle's algorithm on an accepted connection: an answer goes out in more
/// than one segment, and a client that delays its acknowledgements (as Linux clients do)
/// would hold the second one back for ~40 ms on every call.
fn without_delay(tcp: &TcpStream) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::warn!("cannot turn off Nagle's algorithm on a connection: {e}");
    }
}

/// Connections the server may hold when the process may have `open_files` files open:
/// the configured number, less what the rest of the process needs (components, the
/// compile cache, the audit log, the watcher, tools' outgoing requests).
fn connection_budget(configured: usize, open_files: u64) -> usize {
    let reserved = (open_files / 4).clamp(64, 1024);
    let available = usize::try_from(open_files.saturating_sub(reserved)).unwrap_or(usize::MAX);
    configured.min(available).clamp(1, *bounds::CONNECTIONS.end())
}

/// Raises this process's soft limit on open files to its hard limit (a server holds a
/// file per connection, and the usual soft default of 1024 is a desktop's), and returns
/// the limit now in force.
#[cfg(unix)]
#[allow(clippy::unnecessary_cast)] // `rlim_t` is `u64` on Linux, not on every Unix
pub fn raise_open_file_limit() -> u64 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes only the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return 1024;
    }
    if limit.rlim_cur < limit.rlim_max {
        let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
        // SAFETY: setrlimit reads only the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return raised.rlim_cur as u64;
        }
        // macOS refuses an unlimited hard limit; the soft one stays.
    }
    limit.rlim_cur as u64
}

/// Raises this process's soft limit on open files to its hard limit, and returns the
/// limit now in force (nothing to raise here).
#[cfg(not(unix))]
pub fn raise_open_file_limit() -> u64 {
    u64::MAX
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_listener_takes_a_burst_of_connections_before_it_accepts_any() {
        let queue = std::fs::read_to_string("/proc/sys/net/core/somaxconn").ok().and_then(|s| s.trim().parse().ok());
        if queue.is_some_and(|queue: u32| queue < 300) {
            return; // the kernel lowers every backlog to this (Linux before 5.4: 128)
        }
        let listener = listen("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let started = std::time::Instant::now();
        // Past a backlog of 128 the kernel would drop attempts, retried a second later.
        let mut burst = Vec::new();
        for _ in 0..300 {
            burst.push(TcpStream::connect(addr).await.unwrap());
        }
        assert!(started.elapsed() < Duration::from_millis(900), "connected in {:?}", started.elapsed());
        drop(listener);
    }

    #[test]
    fn the_budget_leaves_files_for_the_rest_of_the_process() {
        assert_eq!(connection_budget(4096, 1024), 768);
        assert_eq!(connection_budget(4096, 1_048_576), 4096);
        assert_eq!(connection_budget(10, 1024), 10);
        assert_eq!(connection_budget(4096, 100), 36);
        assert_eq!(connection_budget(4096, 10), 1, "always one");
        assert_eq!(connection_budget(usize::MAX, u64::MAX), 1_000_000, "at most the bound toolhost.toml may set");
    }

    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_limit() {
        let now = raise_open_file_limit();
        assert!(now >= 64, "{now}");
        assert_eq!(raise_open_file_limit(), now, "raising twice changes nothing");
    }

    #[tokio::test]
    async fn accepted_connections_send_without_delay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(TcpStream::connect(addr));
        let (accepted, _) = listener.accept().await.unwrap();
        without_delay(&accepted);
        assert!(accepted.nodelay().unwrap(), "TCP_NODELAY on the accepted socket");
        let client = client.await.unwrap().unwrap();
        assert!(!client.nodelay().unwrap(), "and only there: the client's socket keeps its default");
    }
}
