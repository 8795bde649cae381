//! Who is calling: the agent, the session it acts in, and the thread its client names.

/// Who is calling: an agent, and optionally the session it acts in and the thread (the
/// conversation) its client named for the call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Caller {
    /// The agent's id, matched by the policy's `agent` globs.
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The session the agent acts in (over MCP, its `Mcp-Session-Id`).
    pub session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The thread its client named for the call (over MCP, `_meta`'s `toolhost/thread`):
    /// the conversation the policy's `session` globs match before the session.
    pub thread: Option<String>,
}

impl Caller {
    /// An agent without a session.
    pub fn new(agent: impl Into<String>) -> Caller {
        Caller { agent: agent.into(), session: None, thread: None }
    }

    /// The conversation the caller acts in, as the policy matches it: its thread, else
    /// its session.
    pub fn conversation(&self) -> Option<&str> {
        self.thread.as_deref().or(self.session.as_deref())
    }

    /// The same agent in `session`.
    pub fn with_session(mut self, session: impl Into<String>) -> Caller {
        self.session = Some(session.into());
        self
    }

    /// The caller of the CLI and of [`crate::ToolHost::call`].
    pub fn local() -> Caller {
        Caller::new("local")
    }
}

impl std::fmt::Display for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.thread, &self.session) {
            (Some(thread), _) => write!(f, "{} (thread {thread})", self.agent),
            (None, Some(session)) => write!(f, "{} (session {session})", self.agent),
            (None, None) => f.write_str(&self.agent),
        }
    }
}
