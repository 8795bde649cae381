//! How much of the HTTP server one client may take: connections, requests, sessions and their streams.
//!
//! How much of the HTTP server one client may take: connections, how long and how large
//! a request may be, sessions and their streams. Every default is here, and only here;
//! `toolhost.toml`'s `[http]` table overrides them (see `docs/mcp.md`).

use std::time::Duration;

/// Connections the kernel completes and queues before the server accepts them (the
/// kernel lowers it to `net.core.somaxconn`). Not configurable: it costs nothing, and a
/// smaller queue only drops clients during a burst.
pub const LISTEN_BACKLOG: u32 = 4096;
/// Connections served at once. More wait in the listen backlog until one closes; the
/// server lowers this further when the process may not open that many files.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4096;
/// Time a client has to send a request's headers, counted from the moment the server is
/// ready for them: a new connection, or the end of the previous answer on a kept-alive one
/// (so it is also how long an idle connection stays open).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes of a request line and headers together.
pub const DEFAULT_MAX_HEADER_SIZE: usize = 16 << 10;
/// Time a client has to send a whole POST body once its headers arrived.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(60);
/// Bytes of a POST body (the MCP SDK's own limit).
pub const DEFAULT_MAX_BODY_SIZE: usize = 4 << 20;
/// MCP sessions open at once, over all agents.
pub const DEFAULT_MAX_SESSIONS: usize = 1024;
/// Streams one session may hold open at once: `GET` event streams and `POST` requests
/// still being answered.
pub const DEFAULT_MAX_STREAMS_PER_SESSION: usize = 32;
/// A session with no request and no open stream for this long is closed; its id then
/// answers 404 and the client starts a new one. Calls in flight and open event streams
/// count as use, so a long call (or an approval question) never expires its session.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// Bounds of the Streamable HTTP server. The defaults are the `DEFAULT_*` constants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Connections served at once ([`DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// Time to send a request's headers ([`DEFAULT_HEADER_TIMEOUT`]).
    pub header_timeout: Duration,
    /// Bytes of a request's line and headers ([`DEFAULT_MAX_HEADER_SIZE`]); more is
    /// answered `431` and the connection closed.
    pub max_header_size: usize,
    /// Time to send a POST body ([`DEFAULT_BODY_TIMEOUT`]); slower is answered `408` and
    /// the connection closed.
    pub body_timeout: Duration,
    /// Bytes of a POST body ([`DEFAULT_MAX_BODY_SIZE`]); more is answered `413`.
    pub max_body_size: usize,
    /// MCP sessions open at once ([`DEFAULT_MAX_SESSIONS`]); one more is answered `503`.
    pub max_sessions: usize,
    /// Open streams per session ([`DEFAULT_MAX_STREAMS_PER_SESSION`]); one more is
    /// answered `429`.
    pub max_streams_per_session: usize,
    /// Idle time after which a session is closed ([`DEFAULT_SESSION_IDLE_TIMEOUT`]).
    pub session_idle_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: DEFAULT_MAX_CONNECTIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            max_header_size: DEFAULT_MAX_HEADER_SIZE,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            max_sessions: DEFAULT_MAX_SESSIONS,
            max_streams_per_session: DEFAULT_MAX_STREAMS_PER_SESSION,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
        }
    }
}

/// The ranges `toolhost.toml` may set each count and size in: past them a value is a
/// mistake (a header buffer larger than hyper reads, more connections than any process
/// may open).
pub mod bounds {
    use std::ops::RangeInclusive;

    /// `max_connections`.
    pub const CONNECTIONS: RangeInclusive<usize> = 1..=1_000_000;
    /// `max_header_size`: hyper reads at most ~400 KB before it answers 431 anyway.
    pub const HEADER_SIZE: RangeInclusive<usize> = 1 << 10..=256 << 10;
    /// `max_body_size`.
    pub const BODY_SIZE: RangeInclusive<usize> = 1 << 10..=1 << 30;
    /// `max_sessions`.
    pub const SESSIONS: RangeInclusive<usize> = 1..=1_000_000;
    /// `max_streams_per_session`.
    pub const STREAMS_PER_SESSION: RangeInclusive<usize> = 1..=10_000;
}
