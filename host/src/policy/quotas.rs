//! How much each agent may use: calls per minute, calls at once, fuel per minute, its share of each upstream server.
//!
//! ```toml
//! [[quota]]
//! agent = "ci-*"                # glob over agent ids; the first covering entry applies
//! calls_per_minute = 120        # in each clock minute, across replicas on a Redis store
//! concurrent_calls = 4          # at once, on each replica
//! fuel_per_minute = 50_000_000_000  # burned by its component calls in each clock minute
//! upstream_calls = 2            # at once on each upstream MCP server, on each replica
//! ```
//!
//! An agent no entry covers has no quota. A call over a quota runs nothing and fails
//! with [`crate::CallError::QuotaExceeded`], saying when to retry.

use crate::policy::{Caller, glob_match};

/// One `[[quota]]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentQuota {
    /// Glob over agent ids.
    pub agent: String,
    /// Calls that may start in each clock minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls_per_minute: Option<u32>,
    /// Calls that may run at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrent_calls: Option<u32>,
    /// Fuel its component calls may burn in each clock minute: a call starts only while
    /// less is burned, counting the whole fuel limit of the calls still running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_per_minute: Option<u64>,
    /// Calls that may run at once on each upstream MCP server: the agent's share of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_calls: Option<u32>,
}

impl AgentQuota {
    /// A quota for the agents matching `agent` that limits nothing yet.
    pub fn for_agent(agent: impl Into<String>) -> AgentQuota {
        AgentQuota { agent: agent.into(), ..AgentQuota::default() }
    }

    /// At most `calls` calls starting in each clock minute.
    pub fn calls_per_minute(mut self, calls: u32) -> AgentQuota {
        self.calls_per_minute = Some(calls);
        self
    }

    /// At most `calls` calls running at once.
    pub fn concurrent_calls(mut self, calls: u32) -> AgentQuota {
        self.concurrent_calls = Some(calls);
        self
    }

    /// At most `fuel` burned by calls starting in each clock minute.
    pub fn fuel_per_minute(mut self, fuel: u64) -> AgentQuota {
        self.fuel_per_minute = Some(fuel);
        self
    }

    /// At most `calls` calls running at once on each upstream MCP server.
    pub fn upstream_calls(mut self, calls: u32) -> AgentQuota {
        self.upstream_calls = Some(calls);
        self
    }

    /// Whether it covers `caller`'s agent.
    pub fn covers(&self, caller: &Caller) -> bool {
        glob_match(&self.agent, &caller.agent)
    }
}
