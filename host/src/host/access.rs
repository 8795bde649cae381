//! Who sees what: the caller policy and the session tool sets over a snapshot, hiding a tool the same way everywhere.
//!
//! Who sees what: the caller policy and the session tool sets over a snapshot. Every
//! listing, description, suggestion and call asks here, so a tool a caller may not see
//! is hidden the same way everywhere: it is never named, and asking for it by name
//! answers exactly as for a tool that does not exist.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;

use super::ToolHost;
use crate::definitions::{self, ExportFormat};
use crate::error::CallError;
use crate::names::NameForm;
use crate::policy::{Caller, Explanation, Permit, Policy, SessionTools};
use crate::registry::{Snapshot, ToolEntry};
use crate::tool::ToolDescription;
use crate::tool::ToolFilter;

/// The versions of what a listing is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListingVersion {
    /// The [`Snapshot::generation`] listed.
    pub snapshot: u64,
    /// How many times the policy or a session's tool set changed.
    pub policy: u64,
}

/// A name the caller cannot use: the error it gets, and for the operator, the tool the
/// name meant and why it is hidden.
pub(crate) struct Unseen {
    pub(crate) error: CallError,
    pub(crate) hidden: Option<(String, String)>,
}

impl ToolHost {
    /// Replaces the caller policy; calls that already passed it are not affected.
    pub fn set_policy(&self, policy: Policy) {
        self.policy.store(Arc::new(policy));
        self.policy_generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Narrows the tools of one session (a conversation, a thread) beyond its agent's
    /// policy, from now on: listings and calls in that session see only these.
    pub fn set_session_tools(&self, session: &str, tools: SessionTools) {
        self.sessions.set(session, Some(tools));
        self.policy_generation.fetch_add(1, Ordering::SeqCst);
    }

    /// Gives a session back every tool its agent's policy allows.
    pub fn clear_session_tools(&self, session: &str) {
        self.sessions.set(session, None);
        self.policy_generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The tool set of a session, when it has its own.
    pub fn session_tools(&self, session: &str) -> Option<SessionTools> {
        self.sessions.get(session)
    }

    /// What [`ToolHost::list`] for any caller depends on. A cache of listings is valid
    /// while this stays the same.
    pub fn listing_version(&self) -> ListingVersion {
        ListingVersion {
            snapshot: self.snapshot.load().generation,
            policy: self.policy_generation.load(Ordering::SeqCst),
        }
    }

    /// The tools `caller` may call, in a function-calling format.
    pub fn export(&self, format: ExportFormat, caller: &Caller) -> Value {
        definitions::export(&self.list(caller), format)
    }

    /// A tool's definition by any accepted name, if `caller` may call it; a tool it may
    /// not is not found.
    pub fn describe(&self, caller: &Caller, name: &str) -> Result<ToolDescription, CallError> {
        let snapshot = self.snapshot.load();
        let (entry, _, _) = self.resolve_for(&snapshot, caller, name).map_err(|unseen| unseen.error)?;
        Ok(self.described(&snapshot, entry))
    }

    /// Every tool `caller` may call.
    pub fn list(&self, caller: &Caller) -> Vec<ToolDescription> {
        self.list_filtered(caller, &ToolFilter::default())
    }

    /// The tools `caller` may call that `filter` keeps (risk, hints, approval).
    pub fn list_filtered(&self, caller: &Caller, filter: &ToolFilter) -> Vec<ToolDescription> {
        let mut listed = Vec::new();
        self.for_each_listed(caller, filter, |description| listed.push(description));
        listed
    }

    /// Hands `each` the description of every tool `caller` may call that `filter` keeps,
    /// one at a time: a caller that keeps less than the whole description (the MCP
    /// server's list) never holds every tool's parsed schemas at once.
    pub(crate) fn for_each_listed(&self, caller: &Caller, filter: &ToolFilter, mut each: impl FnMut(ToolDescription)) {
        let snapshot = self.snapshot.load();
        let policy = self.policy.load();
        snapshot
            .tools
            .values()
            .filter(|entry| {
                filter.keeps(&policy.tool_policy(&entry.full_name, &entry.def().policy))
                    && self.access(caller, entry).is_ok()
            })
            .for_each(|entry| each(self.described(&snapshot, entry)));
    }

    /// How `entry` is listed: as its source describes it, under what the operator's
    /// `[[tool]]` entries say of it.
    pub(crate) fn described(&self, snapshot: &Snapshot, entry: &ToolEntry) -> ToolDescription {
        let description = snapshot.describe(entry);
        let policy = self.policy.load().tool_policy(&entry.full_name, &description.policy());
        description.with_policy(policy)
    }

    /// A name no tool answers to, in the namespace of an upstream server that cannot be
    /// reached: the server's problem, for a caller who may see the name.
    fn unreachable(&self, snapshot: &Snapshot, caller: &Caller, name: &str) -> Option<Box<Unseen>> {
        let (full_name, problem) = snapshot.unreachable_server_of(name)?;
        if !self.may_see_name(caller, &full_name) {
            return None;
        }
        let message = problem.kind.to_string();
        Some(Box::new(Unseen { error: CallError::Host { tool: full_name, message }, hidden: None }))
    }

    /// Whether `caller` may see the tool `full_name`: the tool itself when it is served,
    /// else what the policy and the session say of the name.
    pub(crate) fn may_see_name(&self, caller: &Caller, full_name: &str) -> bool {
        if let Some(entry) = self.snapshot.load().tools.get(full_name) {
            return self.access(caller, entry).is_ok();
        }
        self.policy.load().check(caller, full_name, &crate::tool::ToolPolicy::default()).is_ok()
            && self.sessions.check(caller, full_name).is_ok()
    }

    /// For the operator: how the policy (and the session's tool set) decides `caller`'s
    /// access to the tool `name` means, or to every served tool, hidden ones too.
    pub fn explain(&self, caller: &Caller, name: Option<&str>) -> Result<Vec<(String, Explanation)>, CallError> {
        let snapshot = self.snapshot.load();
        let entries: Vec<&ToolEntry> = match name {
            Some(name) => match snapshot.find(name) {
                Some((entry, _)) => vec![entry],
                None => {
                    let suggestions = snapshot.close_matches_among(name, |_| true);
                    return Err(CallError::NotFound { name: name.to_owned(), suggestions });
                }
            },
            None => snapshot.tools.values().collect(),
        };
        let policy = self.policy.load();
        let explain = |entry: &ToolEntry| {
            let mut explained = policy.explain(caller, &entry.full_name, &entry.def().policy);
            if let (Ok(_), Err(reason)) = (&explained.verdict, self.sessions.check(caller, &entry.full_name)) {
                explained.verdict = Err(reason);
            }
            (entry.full_name.clone(), explained)
        };
        Ok(entries.into_iter().map(explain).collect())
    }

    /// Whether `caller` may call `entry`, and on which terms; the error is the
    /// operator's reason.
    pub(crate) fn access(&self, caller: &Caller, entry: &ToolEntry) -> Result<Permit, String> {
        let permit = self.policy.load().check(caller, &entry.full_name, &entry.def().policy)?;
        self.sessions.check(caller, &entry.full_name)?;
        Ok(permit)
    }

    /// The tool `name` means for `caller`, by any name form, with the terms it may call
    /// it on. A hidden tool is not found, and suggestions name only visible tools.
    pub(crate) fn resolve_for<'s>(
        &self,
        snapshot: &'s Snapshot,
        caller: &Caller,
        name: &str,
    ) -> Result<(&'s ToolEntry, NameForm, Permit), Box<Unseen>> {
        let not_found = |hidden| {
            let suggestions = snapshot.close_matches_among(name, |entry| self.access(caller, entry).is_ok());
            Box::new(Unseen { error: CallError::NotFound { name: name.to_owned(), suggestions }, hidden })
        };
        let Some((entry, form)) = snapshot.find(name) else {
            return Err(self.unreachable(snapshot, caller, name).unwrap_or_else(|| not_found(None)));
        };
        match self.access(caller, entry) {
            Ok(permit) => Ok((entry, form, permit)),
            Err(reason) => Err(not_found(Some((entry.full_name.clone(), reason)))),
        }
    }
}
