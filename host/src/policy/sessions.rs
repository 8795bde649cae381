//! Tools switched on and off for one session at run time, narrowing what its agent may call.
//!
//! Tools switched on and off for one session at run time (a conversation's
//! `enabledTools`), on top of the policy: a session can narrow what its agent may call,
//! never widen it.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::policy::glob_match;

/// Which tools one session may use, beside what the policy allows its agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionTools {
    /// When set, only tools matching one of these globs.
    pub enabled: Option<Vec<String>>,
    /// Never tools matching one of these globs.
    pub disabled: Vec<String>,
}

impl SessionTools {
    /// Only the tools matching `globs`.
    pub fn only<S: Into<String>>(globs: impl IntoIterator<Item = S>) -> SessionTools {
        SessionTools { enabled: Some(globs.into_iter().map(Into::into).collect()), disabled: Vec::new() }
    }

    /// Every tool the policy allows but those matching `globs`.
    pub fn without<S: Into<String>>(globs: impl IntoIterator<Item = S>) -> SessionTools {
        SessionTools { enabled: None, disabled: globs.into_iter().map(Into::into).collect() }
    }

    /// Whether the session may use `full_name`; the error is the operator's reason.
    pub fn check(&self, full_name: &str) -> Result<(), String> {
        if let Some(glob) = self.disabled.iter().find(|glob| glob_match(glob, full_name)) {
            return Err(format!("switched off for the session (`{glob}`)"));
        }
        match &self.enabled {
            Some(enabled) if !enabled.iter().any(|glob| glob_match(glob, full_name)) => {
                Err("not among the tools switched on for the session".into())
            }
            _ => Ok(()),
        }
    }
}

/// The sessions that have their own tool set; read on every call without a lock.
#[derive(Default)]
pub(crate) struct SessionToolsets {
    sessions: ArcSwap<HashMap<String, Arc<SessionTools>>>,
}

impl SessionToolsets {
    /// Sets (or, with `None`, removes) one session's tool set.
    pub(crate) fn set(&self, session: &str, tools: Option<SessionTools>) {
        let tools = tools.map(Arc::new);
        self.sessions.rcu(|sessions| {
            let mut sessions = HashMap::clone(sessions);
            match &tools {
                Some(tools) => sessions.insert(session.to_owned(), tools.clone()),
                None => sessions.remove(session),
            };
            sessions
        });
    }

    /// Whether `session` may use `full_name`.
    pub(crate) fn check(&self, session: Option<&str>, full_name: &str) -> Result<(), String> {
        let Some(session) = session else { return Ok(()) };
        match self.sessions.load().get(session) {
            Some(tools) => tools.check(full_name),
            None => Ok(()),
        }
    }

    /// The tool set of `session`, if it has one.
    pub(crate) fn get(&self, session: &str) -> Option<SessionTools> {
        self.sessions.load().get(session).map(|tools| SessionTools::clone(tools))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_narrows_and_never_names_what_it_hides() {
        let sets = SessionToolsets::default();
        sets.set("s-1", Some(SessionTools::only(["math/*"])));
        sets.set("s-2", Some(SessionTools::without(["math/divide"])));
        assert_eq!(sets.check(Some("s-1"), "math/add"), Ok(()));
        assert!(sets.check(Some("s-1"), "text/slugify").is_err());
        assert!(sets.check(Some("s-2"), "math/divide").unwrap_err().contains("switched off"));
        assert_eq!(sets.check(Some("s-2"), "text/slugify"), Ok(()));
        assert_eq!(sets.check(Some("s-3"), "anything/else"), Ok(()), "a session without a set");
        assert_eq!(sets.check(None, "text/slugify"), Ok(()));
        sets.set("s-1", None);
        assert_eq!(sets.check(Some("s-1"), "text/slugify"), Ok(()));
    }
}
