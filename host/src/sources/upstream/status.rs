//! How an upstream server is doing, and what applying a new set of servers did.

use super::UpstreamServer;

/// How an upstream server is doing.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum UpstreamState {
    /// The first connection is being made.
    Connecting,
    /// Connected, and its tools listed.
    Connected {
        /// The MCP revision the server and toolhost agreed on.
        protocol: String,
        /// What the server said it is (text from the server), when it did.
        implementation: Option<Implementation>,
        /// How many of its tools are served.
        tools_served: usize,
    },
    /// Not connected (never, or no longer); retried with backoff.
    Failed {
        /// Why, and when the next attempt is.
        problem: String,
    },
}

/// An MCP implementation's name and version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Implementation {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// An upstream server, as declared, and how it is doing.
#[derive(Debug, Clone, serde::Serialize)]
pub struct UpstreamStatus {
    /// Its declaration (where secrets come from, never their values).
    pub server: UpstreamServer,
    /// Its connection.
    #[serde(flatten)]
    pub state: UpstreamState,
}

/// What [`Supervisors::apply`] did, by server name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpstreamChanges {
    /// Declared now, not before: connected.
    pub started: Vec<String>,
    /// Declared before, not now: disconnected, their tools gone.
    pub stopped: Vec<String>,
    /// Declared differently: disconnected and connected again.
    pub restarted: Vec<String>,
}

impl UpstreamChanges {
    /// Whether nothing started, stopped or restarted.
    pub fn is_empty(&self) -> bool {
        self.started.is_empty() && self.stopped.is_empty() && self.restarted.is_empty()
    }
}
