//! What the operator says about one tool: how risky it is, how it behaves, whether a person approves each call.
//!
//! What the operator says about one tool: how risky it is, how it behaves, whether a
//! person approves each call. Set in a component's manifest (`[policy]`, and
//! `[tools.NAME.policy]` over it) or when a native tool is registered.

use std::fmt;
use std::str::FromStr;

/// How much harm a call of a tool can do, lowest first. Policy rules cap an agent's
/// level (`max_risk`) and ask for approval above one (`approve_above`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    /// Reads public or harmless data; nothing changes.
    Low,
    /// The default: changes little, or reads data that matters.
    #[default]
    Medium,
    /// Changes or discloses things that matter.
    High,
    /// Can do damage that is hard to undo.
    Critical,
}

impl Risk {
    /// Every level, lowest first.
    pub const ALL: [Risk; 4] = [Risk::Low, Risk::Medium, Risk::High, Risk::Critical];

    /// The level's name, as configuration writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
            Risk::Critical => "critical",
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Risk {
    type Err = String;

    fn from_str(text: &str) -> Result<Risk, String> {
        Risk::ALL
            .into_iter()
            .find(|risk| risk.as_str() == text)
            .ok_or_else(|| format!("`{text}` is not a risk level (low, medium, high, critical)"))
    }
}

/// How a tool behaves, as MCP's tool annotations say it (`readOnlyHint`, …). Unset
/// hints are left out, so a client applies the protocol's defaults.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct ToolHints {
    /// It changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// Its changes may destroy or overwrite something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling it twice with the same input has the effect of calling it once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// It reaches things outside the host (the network, other systems).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
}

impl ToolHints {
    /// `over`'s hints where it sets them, these elsewhere.
    pub fn overridden_by(self, over: ToolHints) -> ToolHints {
        ToolHints {
            read_only: over.read_only.or(self.read_only),
            destructive: over.destructive.or(self.destructive),
            idempotent: over.idempotent.or(self.idempotent),
            open_world: over.open_world.or(self.open_world),
        }
    }

    /// Whether no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == ToolHints::default()
    }

    /// The risk these hints speak of, for a tool whose risk no one set (an upstream
    /// server's tool): `low` for a tool that changes nothing, `high` for one that may
    /// destroy, `medium` for one that changes without destroying and for one that says
    /// nothing. MCP's default for an unset `destructiveHint` is `true`, but a server that
    /// sets no hint at all gets `medium`, like every tool that states no risk.
    pub fn implied_risk(&self) -> Risk {
        match (self.read_only, self.destructive) {
            (Some(true), _) => Risk::Low,
            (_, Some(true)) => Risk::High,
            (Some(false), None) => Risk::High,
            _ => Risk::Medium,
        }
    }
}

/// The operator's decisions about one tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ToolPolicy {
    /// Every call must pass the host's approval hook first.
    pub requires_approval: bool,
    /// How much harm a call can do.
    pub risk: Risk,
    /// How it behaves.
    #[serde(flatten)]
    pub hints: ToolHints,
}

/// What a listing keeps: tools at or below a risk level, with the hints asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolFilter {
    /// Only tools at or below this level.
    pub max_risk: Option<Risk>,
    /// Only tools whose `read_only` hint is this (an unset hint counts as `false`).
    pub read_only: Option<bool>,
    /// Only tools whose `destructive` hint is this (unset counts as MCP's default, `true`).
    pub destructive: Option<bool>,
    /// Only tools whose `idempotent` hint is this (unset counts as `false`).
    pub idempotent: Option<bool>,
    /// Only tools whose `open_world` hint is this (unset counts as MCP's default, `true`).
    pub open_world: Option<bool>,
    /// Only tools that do (or do not) require approval.
    pub requires_approval: Option<bool>,
}

impl ToolFilter {
    /// Whether a tool with this policy passes the filter. Unset hints count as the MCP
    /// defaults a client would assume.
    pub fn keeps(&self, tool: &ToolPolicy) -> bool {
        let wants = |wanted: Option<bool>, hint: Option<bool>, default: bool| {
            wanted.is_none_or(|wanted| hint.unwrap_or(default) == wanted)
        };
        let hints = &tool.hints;
        self.max_risk.is_none_or(|max| tool.risk <= max)
            && wants(self.read_only, hints.read_only, false)
            && wants(self.destructive, hints.destructive, true)
            && wants(self.idempotent, hints.idempotent, false)
            && wants(self.open_world, hints.open_world, true)
            && self.requires_approval.is_none_or(|wanted| tool.requires_approval == wanted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_order_and_parse() {
        assert!(Risk::Low < Risk::Medium && Risk::High < Risk::Critical);
        assert_eq!("critical".parse::<Risk>(), Ok(Risk::Critical));
        assert!("severe".parse::<Risk>().unwrap_err().contains("low, medium, high, critical"));
        assert_eq!(Risk::default(), Risk::Medium);
    }

    #[test]
    fn filters_count_unset_hints_as_mcp_defaults() {
        let unset = ToolPolicy::default();
        let reader = ToolPolicy {
            risk: Risk::Low,
            hints: ToolHints { read_only: Some(true), destructive: Some(false), ..ToolHints::default() },
            ..ToolPolicy::default()
        };
        let read_only = ToolFilter { read_only: Some(true), ..ToolFilter::default() };
        assert!(read_only.keeps(&reader) && !read_only.keeps(&unset));
        let not_destructive = ToolFilter { destructive: Some(false), ..ToolFilter::default() };
        assert!(not_destructive.keeps(&reader) && !not_destructive.keeps(&unset));
        let low = ToolFilter { max_risk: Some(Risk::Low), ..ToolFilter::default() };
        assert!(low.keeps(&reader) && !low.keeps(&unset));
        assert!(ToolFilter::default().keeps(&unset));
    }

    #[test]
    fn hints_imply_a_risk() {
        let hints = |read_only, destructive| ToolHints { read_only, destructive, ..ToolHints::default() };
        assert_eq!(hints(Some(true), Some(true)).implied_risk(), Risk::Low, "read-only wins");
        assert_eq!(hints(None, Some(true)).implied_risk(), Risk::High);
        assert_eq!(hints(Some(false), None).implied_risk(), Risk::High, "MCP: an unset destructiveHint is true");
        assert_eq!(hints(Some(false), Some(false)).implied_risk(), Risk::Medium);
        assert_eq!(hints(None, None).implied_risk(), Risk::Medium);
    }

    #[test]
    fn a_tool_sets_only_the_hints_it_names() {
        let component = ToolHints { read_only: Some(true), open_world: Some(false), ..ToolHints::default() };
        let tool = ToolHints { read_only: Some(false), destructive: Some(true), ..ToolHints::default() };
        assert_eq!(
            component.overridden_by(tool),
            ToolHints { read_only: Some(false), destructive: Some(true), idempotent: None, open_world: Some(false) }
        );
    }
}
