//! Tools switched on and off for one session at run time, narrowing what its agent may call.
//!
//! Tools switched on and off for one session at run time (a conversation's
//! `enabledTools`), on top of the policy: a session can narrow what its agent may call,
//! never widen it.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::policy::{Caller, glob_match};

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

    /// Whether `caller` may use `full_name` in its session and in its thread: a thread
    /// named in a session narrows that session's tool set, never escapes it.
    pub(crate) fn check(&self, caller: &Caller, full_name: &str) -> Result<(), String> {
        let sessions = self.sessions.load();
        for named in [caller.session.as_deref(), caller.thread.as_deref()].into_iter().flatten() {
            if let Some(tools) = sessions.get(named) {
                tools.check(full_name)?;
            }
        }
        Ok(())
    }

    /// The tool set of `session`, if it has one.
    pub(crate) fn get(&self, session: &str) -> Option<SessionTools> {
        self.sessions.load().get(session).map(|tools| SessionTools::clone(tools))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_session(session: &str) -> Caller {
        Caller::new("a").with_session(session)
    }

    #[test]
    fn a_thread_narrows_its_session_and_never_escapes_it() {
        let sets = SessionToolsets::default();
        sets.set("s-1", Some(SessionTools::only(["math/*"])));
        sets.set("t-1", Some(SessionTools::without(["math/divide"])));
        let in_thread = |thread: &str| Caller { thread: Some(thread.into()), ..in_session("s-1") };
        assert!(sets.check(&in_thread("t-9"), "text/slugify").is_err(), "the session's set holds in any thread");
        assert!(sets.check(&in_thread("t-1"), "math/divide").is_err(), "and the thread's narrows it");
        assert_eq!(sets.check(&in_thread("t-1"), "math/add"), Ok(()));
    }

    #[test]
    fn a_session_narrows_and_never_names_what_it_hides() {
        let sets = SessionToolsets::default();
        sets.set("s-1", Some(SessionTools::only(["math/*"])));
        sets.set("s-2", Some(SessionTools::without(["math/divide"])));
        assert_eq!(sets.check(&in_session("s-1"), "math/add"), Ok(()));
        assert!(sets.check(&in_session("s-1"), "text/slugify").is_err());
        assert!(sets.check(&in_session("s-2"), "math/divide").unwrap_err().contains("switched off"));
        assert_eq!(sets.check(&in_session("s-2"), "text/slugify"), Ok(()));
        assert_eq!(sets.check(&in_session("s-3"), "anything/else"), Ok(()), "a session without a set");
        assert_eq!(sets.check(&Caller::new("a"), "text/slugify"), Ok(()));
        sets.set("s-1", None);
        assert_eq!(sets.check(&in_session("s-1"), "text/slugify"), Ok(()));
    }
}
