//! `[console]`: the operator's console of `serve --http`, its operators' tokens, and where approvals go.
//!
//! ```toml
//! [console]
//! enabled = true              # off unless said: served at /console by `serve --http`
//! approve_via = "both"        # "client" (the default), "console" or "both"
//! session_lifetime = "8h"     # how long a sign-in lasts
//!
//! [[console.operator]]        # as [[token]], but for a person at the console
//! name = "alice"
//! sha256 = "…"                # or: file = "…", env = "…"
//! ```
//!
//! An operator's token is never an agent's: a token given for both is an error.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::tokens::{TokenGiven, with_token};
use crate::policy::ApproveVia;
use crate::serve::{ConsoleOptions, Tokens};
use crate::units::{Problem, parse_duration};

/// The longest a sign-in may last.
const MAX_SESSION_LIFETIME: Duration = Duration::from_secs(7 * 24 * 3600);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConsole {
    #[serde(default)]
    enabled: bool,
    approve_via: Option<ApproveVia>,
    session_lifetime: Option<Spanned<String>>,
    #[serde(default)]
    operator: Vec<Spanned<RawOperator>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOperator {
    name: String,
    sha256: Option<String>,
    file: Option<PathBuf>,
    env: Option<String>,
}

/// The console's options, `None` when it is not enabled; `agents` are the `[[token]]`s,
/// none of which may be an operator's.
pub(super) fn console(
    base: &Path,
    raw: Option<Spanned<RawConsole>>,
    agents: &Tokens,
) -> Result<Option<ConsoleOptions>, Problem> {
    let Some(raw) = raw else { return Ok(None) };
    let span = raw.span();
    let raw = raw.into_inner();
    let mut operators = Tokens::none();
    for entry in raw.operator {
        let entry_span = entry.span();
        let entry = entry.into_inner();
        let problem = |message: String| Problem::at(entry_span.clone(), message);
        if entry.name.trim().is_empty() || entry.name.chars().any(char::is_control) {
            return Err(problem(
                "[[console.operator]]: `name` must be a non-empty name without control characters".into(),
            ));
        }
        let given = TokenGiven { sha256: &entry.sha256, file: &entry.file, env: &entry.env };
        operators = with_token(operators, base, &entry.name, given)
            .map_err(|message| problem(format!("[[console.operator]] `{}`: {message}", entry.name)))?;
    }
    if let Some((operator, agent)) = operators.shared_with(agents) {
        return Err(Problem::at(
            span,
            format!(
                "[console]: the operator `{operator}` has the same token as the agent `{agent}`; give each its own"
            ),
        ));
    }
    if !raw.enabled {
        if raw.approve_via.is_some_and(|via| via != ApproveVia::Client) {
            return Err(Problem::at(span, "[console]: `approve_via` sends approvals to the console: enable it too"));
        }
        return Ok(None);
    }
    if operators.is_empty() {
        return Err(Problem::at(
            span,
            "[console]: `enabled = true` needs at least one [[console.operator]] (`toolhost token new NAME --operator` makes one)",
        ));
    }
    let session_lifetime = match raw.session_lifetime {
        None => ConsoleOptions::DEFAULT_SESSION_LIFETIME,
        Some(text) => {
            let span = text.span();
            let lifetime = parse_duration(text.get_ref())
                .map_err(|e| Problem::at(span.clone(), format!("[console] session_lifetime: {e}")))?;
            if lifetime.is_zero() || lifetime > MAX_SESSION_LIFETIME {
                return Err(Problem::at(span, "[console] session_lifetime: between 1 second and 7 days"));
            }
            lifetime
        }
    };
    Ok(Some(ConsoleOptions { operators, approve_via: raw.approve_via.unwrap_or_default(), session_lifetime }))
}
