//! What the operator says of tools by name in `toolhost.toml`, over what their source says: risk, approval, hints.
//!
//! What the operator says of tools by name (`[[tool]]` in `toolhost.toml`), over what
//! each tool's source says: its risk, whether every call needs approval, and its hints.
//! The one way to set them for tools whose source has no manifest (an upstream MCP
//! server's, whose annotations are the server's own word) and for overruling a manifest.
//!
//! ```toml
//! [[tool]]
//! match = "github/delete_*"     # glob over full tool names
//! risk = "critical"
//! requires_approval = true
//! destructive = true            # hints: read_only, destructive, idempotent, open_world
//! ```
//!
//! The first entry whose `match` matches decides; each key it sets replaces the
//! source's, and the keys it leaves out keep the source's.

use crate::policy::glob_match;
use crate::tool::{Risk, ToolHints, ToolPolicy};

/// One `[[tool]]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolRule {
    /// Glob over full tool names.
    #[serde(rename = "match")]
    pub pattern: String,
    /// The tools' risk level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// Whether every call needs approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_approval: Option<bool>,
    /// MCP's `readOnlyHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// MCP's `destructiveHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// MCP's `idempotentHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// MCP's `openWorldHint`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolRule {
    /// An entry for the tools matching `pattern` that changes nothing yet.
    pub fn matching(pattern: impl Into<String>) -> ToolRule {
        ToolRule { pattern: pattern.into(), ..ToolRule::default() }
    }

    /// Sets their risk.
    pub fn risk(mut self, risk: Risk) -> ToolRule {
        self.risk = Some(risk);
        self
    }

    /// Every call of them needs approval (or, with `false`, none does for their own sake).
    pub fn requires_approval(mut self, required: bool) -> ToolRule {
        self.requires_approval = Some(required);
        self
    }

    /// Whether it covers the tool `full_name`.
    pub fn covers(&self, full_name: &str) -> bool {
        glob_match(&self.pattern, full_name)
    }

    /// `source`, with what this entry sets in its place.
    pub fn over(&self, source: &ToolPolicy) -> ToolPolicy {
        let hints = ToolHints {
            read_only: self.read_only,
            destructive: self.destructive,
            idempotent: self.idempotent,
            open_world: self.open_world,
        };
        ToolPolicy {
            requires_approval: self.requires_approval.unwrap_or(source.requires_approval),
            risk: self.risk.unwrap_or(source.risk),
            hints: source.hints.overridden_by(hints),
        }
    }
}

/// The policy of the tool `full_name` under `rules`: the first covering entry over what
/// its source says, or what its source says.
pub(crate) fn tool_policy(rules: &[ToolRule], full_name: &str, source: &ToolPolicy) -> ToolPolicy {
    rules.iter().find(|rule| rule.covers(full_name)).map_or(*source, |rule| rule.over(source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_covering_entry_sets_what_it_names_and_keeps_the_rest() {
        let source = ToolPolicy {
            risk: Risk::Low,
            hints: ToolHints { read_only: Some(true), open_world: Some(false), ..ToolHints::default() },
            ..ToolPolicy::default()
        };
        let rules = [
            ToolRule { destructive: Some(true), read_only: Some(false), ..ToolRule::matching("github/delete_*") }
                .risk(Risk::Critical)
                .requires_approval(true),
            ToolRule::matching("github/*").risk(Risk::High),
        ];
        let deleting = tool_policy(&rules, "github/delete_repo", &source);
        assert_eq!((deleting.risk, deleting.requires_approval), (Risk::Critical, true));
        assert_eq!(
            deleting.hints,
            ToolHints { read_only: Some(false), destructive: Some(true), idempotent: None, open_world: Some(false) }
        );
        let reading = tool_policy(&rules, "github/get_issue", &source);
        assert_eq!((reading.risk, reading.requires_approval, reading.hints), (Risk::High, false, source.hints));
        assert_eq!(tool_policy(&rules, "math/add", &source), source, "no entry, the source's word");
    }
}
