//! Who may call what: callers, the policy over them, and approval of sensitive tools.
//!
//! A policy is a list of rules, each for the agents whose id matches its `agent` glob.
//! The first matching rule decides: a tool matching any `deny` glob is refused, else one
//! matching an `allow` glob is permitted, else it is refused. A caller that no rule
//! matches is refused. With no rules at all (the default), every caller may call every
//! tool. Globs use `*` for any run of characters: `math/*`, `*/read`, `planner-*`.
//!
//! ```toml
//! [[policy]]
//! agent = "planner"
//! allow = ["math/*", "text/*", "*/read"]
//! deny  = ["fs/write"]
//! ```

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;

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

/// One rule of a [`Policy`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRule {
    /// Glob over agent ids.
    pub agent: String,
    #[serde(default)]
    /// Globs over full tool names this agent may call.
    pub allow: Vec<String>,
    #[serde(default)]
    /// Globs over full tool names this agent may not call, whatever `allow` says.
    pub deny: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
/// Which callers may call which tools: rules, the first matching one deciding.
pub struct Policy {
    rules: Vec<PolicyRule>,
}

impl Policy {
    /// Every caller may call every tool.
    pub fn allow_all() -> Policy {
        Policy::default()
    }

    /// A policy of these rules, in order.
    pub fn new(rules: Vec<PolicyRule>) -> Policy {
        Policy { rules }
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[PolicyRule] {
        &self.rules
    }

    /// Whether `caller` may call the tool `full_name`; the error is the reason.
    pub fn check(&self, caller: &Caller, full_name: &str) -> Result<(), String> {
        if self.rules.is_empty() {
            return Ok(());
        }
        let Some(rule) = self.rules.iter().find(|rule| glob_match(&rule.agent, &caller.agent)) else {
            return Err(format!("no policy rule covers agent `{}`", caller.agent));
        };
        if let Some(pattern) = rule.deny.iter().find(|pattern| glob_match(pattern, full_name)) {
            return Err(format!("denied by the policy rule for `{}` (deny `{pattern}`)", rule.agent));
        }
        if rule.allow.iter().any(|pattern| glob_match(pattern, full_name)) {
            return Ok(());
        }
        Err(format!("not in the allow list of the policy rule for `{}`", rule.agent))
    }
}

/// `*` matches any run of characters (including none); everything else literally.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (pattern, text) = (pattern.as_bytes(), text.as_bytes());
    let (mut p, mut t) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            backtrack = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((star, matched)) = backtrack {
            p = star + 1;
            t = matched + 1;
            backtrack = Some((star, matched + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// What an approval hook is asked.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ApprovalRequest {
    /// Who asks to call.
    pub caller: Caller,
    /// The full name of the tool.
    pub tool: String,
    /// The input the tool would get.
    pub input: Value,
}

#[derive(Debug, Clone, PartialEq, Eq)]
/// The answer of an approval hook.
pub enum Approval {
    /// The call may run.
    Approved,
    /// The call is refused; `reason` reaches the caller.
    #[allow(missing_docs)]
    Denied { reason: String },
}

/// Decides calls to tools whose manifest sets `requires_approval` (a human in the loop,
/// a second model, a rules engine…).
pub type ApprovalHook = Arc<dyn Fn(ApprovalRequest) -> BoxFuture<'static, Approval> + Send + Sync>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("math/*", "math/add"));
        assert!(glob_match("*/read", "fs/read"));
        assert!(!glob_match("*/read", "fs/reader"));
        assert!(glob_match("*", "anything/at-all"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
        assert!(glob_match("fs/write", "fs/write"));
        assert!(!glob_match("fs/write", "fs/writes"));
    }

    #[test]
    fn first_matching_rule_decides_and_deny_wins() {
        let policy = Policy::new(vec![
            PolicyRule {
                agent: "planner".into(),
                allow: vec!["math/*".into(), "*/read".into()],
                deny: vec!["math/divide".into()],
            },
            PolicyRule { agent: "*".into(), allow: vec!["text/*".into()], deny: vec![] },
        ]);
        let planner = Caller::new("planner");
        assert_eq!(policy.check(&planner, "math/add"), Ok(()));
        assert_eq!(policy.check(&planner, "fs/read"), Ok(()));
        assert!(policy.check(&planner, "math/divide").unwrap_err().contains("deny `math/divide`"));
        assert!(policy.check(&planner, "text/slugify").unwrap_err().contains("not in the allow list"));
        assert_eq!(policy.check(&Caller::new("other"), "text/slugify"), Ok(()));
        assert!(
            Policy::new(vec![policy.rules()[0].clone()])
                .check(&Caller::new("x"), "math/add")
                .unwrap_err()
                .contains("no policy rule")
        );
        assert_eq!(Policy::allow_all().check(&Caller::new("x"), "fs/write"), Ok(()));
    }
}
