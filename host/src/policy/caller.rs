//! Who is calling: the agent and the session it acts in.

/// Who is calling: an agent, and optionally the session it acts in.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Caller {
    /// The agent's id, matched by the policy's `agent` globs.
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The session (conversation, thread) the agent acts in.
    pub session: Option<String>,
}

impl Caller {
    /// An agent without a session.
    pub fn new(agent: impl Into<String>) -> Caller {
        Caller { agent: agent.into(), session: None }
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
        match &self.session {
            Some(session) => write!(f, "{} (session {session})", self.agent),
            None => f.write_str(&self.agent),
        }
    }
}
