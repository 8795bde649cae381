//! Who may call what: callers, the policy rules over them, session tool sets, and approval of sensitive tools.
//!
//! Who may call what: callers, the policy over them, per-tool risk, session tool sets,
//! and approval of sensitive tools.
//!
//! A policy is a list of rules, each for the agents whose id matches its `agent` glob
//! (and, when it names one, the sessions matching its `session` glob). The first
//! matching rule decides: a tool matching any `deny` glob is refused, else one matching
//! an `allow` glob above the rule's `max_risk` is refused, else one matching an `allow`
//! glob is permitted, else it is refused. A caller that no rule matches is refused. With
//! no rules at all (the default), every caller may call every tool. Globs use `*` for
//! any run of characters: `math/*`, `*/read`, `planner-*`.
//!
//! A refused tool is hidden: the caller's listings, suggestions and errors never name
//! it, and calling it answers as for a tool that does not exist (the audit record keeps
//! the reason for the operator).
//!
//! A permitted call still needs approval when the tool requires it or its risk is above
//! the rule's `approve_above`.
//!
//! ```toml
//! [[policy]]
//! agent = "planner"
//! session = "review-*"          # optional: only these sessions of the agent
//! allow = ["math/*", "text/*", "*/read"]
//! deny  = ["fs/write"]
//! max_risk = "high"             # optional: never tools above this level
//! approve_above = "medium"      # optional: ask for approval above this level
//! ```

mod approval;
mod caller;
mod quotas;
mod sessions;
mod tools;

use crate::client::{ClientPower, ClientPowers};
use crate::tool::{Risk, ToolPolicy};
pub use approval::{APPROVAL_WAIT, Approval, ApprovalHook, ApprovalRecord, ApprovalRequest, ApproveVia, Approver};
pub use caller::Caller;
pub use quotas::AgentQuota;
pub use sessions::SessionTools;
pub(crate) use sessions::SessionToolsets;
pub use tools::ToolRule;

/// One rule of a [`Policy`].
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyRule {
    /// Glob over agent ids.
    pub agent: String,
    /// Glob over session ids; without it the rule covers every session of the agent,
    /// and calls without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    #[serde(default)]
    /// Globs over full tool names this agent may call.
    pub allow: Vec<String>,
    #[serde(default)]
    /// Globs over full tool names this agent may not call, whatever `allow` says.
    pub deny: Vec<String>,
    /// The highest risk level the agent may call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_risk: Option<Risk>,
    /// Calls of tools above this risk level need approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approve_above: Option<Risk>,
    /// The client's powers (`elicit`, `sample`, `log`) a tool may use on these agents'
    /// behalf, of those its manifest grants; without it, all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<Vec<ClientPower>>,
}

impl PolicyRule {
    /// A rule for the agents matching `agent` that allows nothing yet.
    pub fn for_agent(agent: impl Into<String>) -> PolicyRule {
        PolicyRule { agent: agent.into(), ..PolicyRule::default() }
    }

    /// Also allows the tools matching `globs`.
    pub fn allow<S: Into<String>>(mut self, globs: impl IntoIterator<Item = S>) -> PolicyRule {
        self.allow.extend(globs.into_iter().map(Into::into));
        self
    }

    /// Refuses the tools matching `globs`, whatever `allow` says.
    pub fn deny<S: Into<String>>(mut self, globs: impl IntoIterator<Item = S>) -> PolicyRule {
        self.deny.extend(globs.into_iter().map(Into::into));
        self
    }

    /// Only for the sessions matching `glob`.
    pub fn in_sessions(mut self, glob: impl Into<String>) -> PolicyRule {
        self.session = Some(glob.into());
        self
    }

    /// Never tools above `risk`.
    pub fn max_risk(mut self, risk: Risk) -> PolicyRule {
        self.max_risk = Some(risk);
        self
    }

    /// Approval for tools above `risk`.
    pub fn approve_above(mut self, risk: Risk) -> PolicyRule {
        self.approve_above = Some(risk);
        self
    }

    fn covers(&self, caller: &Caller) -> bool {
        glob_match(&self.agent, &caller.agent)
            && match (&self.session, caller.conversation()) {
                (None, _) => true,
                (Some(glob), Some(conversation)) => glob_match(glob, conversation),
                (Some(_), None) => false,
            }
    }
}

/// What the policy lets a caller do with a tool it may call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permit {
    /// Why the call needs approval first, when it does.
    pub approval: Option<String>,
    /// The client's powers the tool may use for this caller (within its own grants).
    pub client: ClientPowers,
}

impl Permit {
    /// A permit without approval and every client power the tool is granted.
    pub fn granted() -> Permit {
        Permit { approval: None, client: ClientPowers::all() }
    }
}

/// How the policy decided one caller's access to one tool: the rule that decided (none
/// when the policy has no rules, or none covers the caller) and what it decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explanation {
    /// The deciding rule's place in the policy (from 0), and the rule.
    pub rule: Option<(usize, PolicyRule)>,
    /// The permit, or why the tool is refused.
    pub verdict: Result<Permit, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
/// Which callers may call which tools: rules, the first matching one deciding; and what
/// the operator says of tools by name ([`ToolRule`]), over what their sources say.
pub struct Policy {
    rules: Vec<PolicyRule>,
    tools: Vec<ToolRule>,
    quotas: Vec<AgentQuota>,
}

impl Policy {
    /// Every caller may call every tool.
    pub fn allow_all() -> Policy {
        Policy::default()
    }

    /// A policy of these rules, in order.
    pub fn new(rules: Vec<PolicyRule>) -> Policy {
        Policy { rules, tools: Vec::new(), quotas: Vec::new() }
    }

    /// The same rules, with `quotas` bounding what each agent may use.
    pub fn with_quotas(mut self, quotas: Vec<AgentQuota>) -> Policy {
        self.quotas = quotas;
        self
    }

    /// The quota of `caller`'s agent: the first entry covering it.
    pub fn quota_for(&self, caller: &Caller) -> Option<&AgentQuota> {
        self.quotas.iter().find(|quota| quota.covers(caller))
    }

    /// The same rules, with `tools` setting the risk, approval and hints of the tools
    /// they match over what their sources say.
    pub fn with_tool_rules(mut self, tools: Vec<ToolRule>) -> Policy {
        self.tools = tools;
        self
    }

    /// The rules, in order.
    pub fn rules(&self) -> &[PolicyRule] {
        &self.rules
    }

    /// The operator's word on tools by name, in order.
    pub fn tool_rules(&self) -> &[ToolRule] {
        &self.tools
    }

    /// The policy of the tool `full_name` whose source says `source`: the first
    /// [`ToolRule`] matching it over `source`, else `source`.
    pub fn tool_policy(&self, full_name: &str, source: &ToolPolicy) -> ToolPolicy {
        tools::tool_policy(&self.tools, full_name, source)
    }

    /// Whether `caller` may call the tool `full_name`, whose source says `tool` of it
    /// (the policy's [`ToolRule`]s over that); the error is the reason, for the
    /// operator's eyes (the caller is told nothing).
    pub fn check(&self, caller: &Caller, full_name: &str, tool: &ToolPolicy) -> Result<Permit, String> {
        self.explain(caller, full_name, tool).verdict
    }

    /// [`Policy::check`], with the rule that decided.
    pub fn explain(&self, caller: &Caller, full_name: &str, source: &ToolPolicy) -> Explanation {
        let tool = &self.tool_policy(full_name, source);
        let tool_approval = tool.requires_approval.then(|| "the tool requires approval".to_owned());
        if self.rules.is_empty() {
            return Explanation { rule: None, verdict: Ok(Permit { approval: tool_approval, ..Permit::granted() }) };
        }
        let Some((index, rule)) = self.rules.iter().enumerate().find(|(_, rule)| rule.covers(caller)) else {
            let reason = format!(
                "no policy rule covers {caller}: once any rule exists, an agent no rule covers may call nothing"
            );
            return Explanation { rule: None, verdict: Err(reason) };
        };
        let client = rule.client.as_ref().map_or_else(ClientPowers::all, |powers| powers.iter().copied().collect());
        let verdict =
            rule.decide(full_name, tool).map(|approval| Permit { approval: tool_approval.or(approval), client });
        Explanation { rule: Some((index, rule.clone())), verdict }
    }
}

impl PolicyRule {
    /// What this rule, covering the caller, decides of `full_name`: refused (why), or
    /// permitted (and why approval is needed, when it is).
    fn decide(&self, full_name: &str, tool: &ToolPolicy) -> Result<Option<String>, String> {
        let rule = self;
        if let Some(pattern) = rule.deny.iter().find(|pattern| glob_match(pattern, full_name)) {
            return Err(format!("denied by the policy rule for `{}` (deny `{pattern}`)", rule.agent));
        }
        if rule.allow.is_empty() {
            return Err(format!(
                "the policy rule for `{}` has no `allow`, so it allows nothing (`deny` only takes away from `allow`)",
                rule.agent
            ));
        }
        if !rule.allow.iter().any(|pattern| glob_match(pattern, full_name)) {
            return Err(format!("not in the allow list of the policy rule for `{}`", rule.agent));
        }
        if let Some(max) = rule.max_risk.filter(|max| tool.risk > *max) {
            return Err(format!(
                "its risk `{}` is above the `{max}` the policy rule for `{}` allows",
                tool.risk, rule.agent
            ));
        }
        Ok(match rule.approve_above {
            Some(level) if tool.risk > level => {
                Some(format!("its risk `{}` is above `{level}`, which the policy approves calls above", tool.risk))
            }
            _ => None,
        })
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
            PolicyRule::for_agent("planner").allow(["math/*", "*/read"]).deny(["math/divide"]),
            PolicyRule::for_agent("*").allow(["text/*"]),
        ]);
        let any = ToolPolicy::default();
        let planner = Caller::new("planner");
        assert!(policy.check(&planner, "math/add", &any).is_ok());
        assert!(policy.check(&planner, "fs/read", &any).is_ok());
        assert!(policy.check(&planner, "math/divide", &any).unwrap_err().contains("deny `math/divide`"));
        assert!(policy.check(&planner, "text/slugify", &any).unwrap_err().contains("not in the allow list"));
        assert!(policy.check(&Caller::new("other"), "text/slugify", &any).is_ok());
        assert!(
            Policy::new(vec![policy.rules()[0].clone()])
                .check(&Caller::new("x"), "math/add", &any)
                .unwrap_err()
                .contains("no policy rule")
        );
        assert!(Policy::allow_all().check(&Caller::new("x"), "fs/write", &any).is_ok());
    }

    #[test]
    fn the_rules_users_trip_on_say_what_they_do() {
        let any = ToolPolicy::default();
        // Once any rule exists, an agent no rule covers may call nothing.
        let planner_only = Policy::new(vec![PolicyRule::for_agent("planner").allow(["*"])]);
        let outsider = planner_only.explain(&Caller::new("ci"), "math/add", &any);
        assert_eq!(outsider.rule, None);
        assert!(outsider.verdict.unwrap_err().contains("an agent no rule covers may call nothing"));
        // A rule with only `deny` allows nothing, not everything else.
        let deny_only = Policy::new(vec![PolicyRule::for_agent("*").deny(["fs/*"])]);
        let explained = deny_only.explain(&Caller::new("a"), "math/add", &any);
        assert_eq!(explained.rule.map(|(index, _)| index), Some(0));
        assert!(explained.verdict.unwrap_err().contains("allows nothing"));
        // `*` covers every agent, the CLI's `local` too; the first covering rule decides.
        let star = Policy::new(vec![
            PolicyRule::for_agent("*").allow(["text/*"]),
            PolicyRule::for_agent("planner").allow(["*"]),
        ]);
        assert!(star.check(&Caller::local(), "text/slugify", &any).is_ok());
        let shadowed = star.explain(&Caller::new("planner"), "math/add", &any);
        assert_eq!(shadowed.rule.map(|(index, rule)| (index, rule.agent)), Some((0, "*".to_owned())));
        assert!(shadowed.verdict.is_err(), "the later, more specific rule is never reached");
    }

    #[test]
    fn rules_can_cover_only_some_sessions() {
        let policy = Policy::new(vec![
            PolicyRule::for_agent("planner").in_sessions("review-*").allow(["text/*"]),
            PolicyRule::for_agent("planner").allow(["math/*"]),
        ]);
        let any = ToolPolicy::default();
        let reviewing = Caller::new("planner").with_session("review-7");
        assert!(policy.check(&reviewing, "text/slugify", &any).is_ok());
        assert!(policy.check(&reviewing, "math/add", &any).is_err(), "the first matching rule decides");
        let elsewhere = Caller::new("planner").with_session("chat-1");
        assert!(policy.check(&elsewhere, "math/add", &any).is_ok());
        assert!(policy.check(&Caller::new("planner"), "text/slugify", &any).is_err(), "no session, no match");
    }

    #[test]
    fn risk_caps_hide_and_thresholds_ask() {
        let policy =
            Policy::new(vec![PolicyRule::for_agent("*").allow(["*"]).max_risk(Risk::High).approve_above(Risk::Low)]);
        let at = |risk| ToolPolicy { risk, ..ToolPolicy::default() };
        let caller = Caller::new("a");
        assert_eq!(policy.check(&caller, "x/low", &at(Risk::Low)), Ok(Permit::granted()));
        assert!(policy.check(&caller, "x/high", &at(Risk::High)).unwrap().approval.unwrap().contains("above `low`"));
        assert!(policy.check(&caller, "x/critical", &at(Risk::Critical)).unwrap_err().contains("above the `high`"));
        let required = ToolPolicy { requires_approval: true, ..at(Risk::Low) };
        assert!(Policy::allow_all().check(&caller, "x/y", &required).unwrap().approval.is_some());
    }
}
