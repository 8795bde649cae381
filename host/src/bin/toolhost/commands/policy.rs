//! `toolhost policy explain`: which `[[policy]]` rule decides what an agent may call, tool by tool.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::{Value, json};
use toolhost::{Caller, Explanation};

use super::{HostOptions, Lifetime};
use crate::output::{fail, print_json};

#[derive(clap::Subcommand)]
pub enum PolicyCommand {
    /// For AGENT (in --session), and TOOL or every served tool, hidden ones too: whether
    /// it may call it, needs approval first, or is refused, why, and which `[[policy]]`
    /// rule decided (the first whose `agent` and `session` cover the caller).
    Explain {
        agent: String,
        /// A tool by any name form; every served tool without it.
        tool: Option<String>,
        /// The session the agent acts in.
        #[arg(long)]
        session: Option<String>,
        /// A tools directory (`<namespace>/<component>.wasm`), as if given with --root.
        #[arg(long)]
        dir: Option<PathBuf>,
    },
}

pub async fn run(options: &HostOptions, command: PolicyCommand) -> anyhow::Result<ExitCode> {
    let PolicyCommand::Explain { agent, tool, session, dir } = command;
    let caller = match session {
        Some(session) => Caller::new(agent).with_session(session),
        None => Caller::new(agent),
    };
    let host = options.build(dir, Lifetime::OneShot).await?;
    let explained = match host.explain(&caller, tool.as_deref()) {
        Ok(explained) => explained,
        Err(error) => return Ok(fail(error.kind().as_str(), &error.to_string(), error.kind().exit_code())),
    };
    print_json(&Value::Array(explained.iter().map(|(tool, explanation)| shown(tool, explanation)).collect()));
    Ok(ExitCode::SUCCESS)
}

/// One tool's decision as JSON: the rule is numbered from 1, as a reader counts the
/// `[[policy]]` tables of toolhost.toml.
fn shown(tool: &str, explanation: &Explanation) -> Value {
    let rule = explanation
        .rule
        .as_ref()
        .map(|(index, rule)| json!({ "number": index + 1, "agent": rule.agent, "session": rule.session }));
    let (decision, reason) = match &explanation.verdict {
        Ok(permit) => match &permit.approval {
            Some(why) => ("approval", Some(why.clone())),
            None => ("allowed", None),
        },
        Err(why) => ("refused", Some(why.clone())),
    };
    let reason = reason.or_else(|| {
        explanation.rule.is_none().then(|| "the policy has no rules: every agent may call every tool".to_owned())
    });
    json!({ "tool": tool, "decision": decision, "reason": reason, "rule": rule })
}
