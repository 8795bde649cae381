//! `[oauth]`: access tokens of an OAuth authorization server, accepted by `serve --http` beside its own tokens.
//!
//! ```toml
//! [oauth]
//! issuer = "https://auth.example.com"            # the `iss` of its access tokens
//! resource = "https://tools.example.com/mcp"     # this server as clients reach it: the audience
//! scopes = ["mcp:tools"]                         # every token needs all of them
//! agent_claim = "sub"                            # the claim naming the agent (the default)
//! jwks_uri = "https://auth.example.com/jwks"     # default: as the issuer's metadata says
//! clock_skew = "60s"                             # the default; at most 10 minutes
//! scope_agents = [                               # the first whose scope a token carries
//!   { scope = "tools:ops", agent = "ops" },      # is the agent it acts as
//! ]
//! ```
//!
//! An agent claim that names a scope agent or the agent of a `[[token]]` is refused:
//! no user of the issuer can act as an agent another credential stands for.
//!
//! The issuer and the key address are `https://`, or `http://` to a loopback address.

use serde::Deserialize;
use toml::Spanned;

use crate::serve::{OAuth, OAuthSettings, check_address};
use crate::units::{Problem, parse_duration};

/// `[oauth]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawOAuth {
    issuer: Spanned<String>,
    resource: Spanned<String>,
    jwks_uri: Option<Spanned<String>>,
    #[serde(default)]
    scopes: Vec<Spanned<String>>,
    agent_claim: Option<Spanned<String>>,
    clock_skew: Option<Spanned<String>>,
    #[serde(default)]
    scope_agents: Vec<Spanned<RawScopeAgent>>,
}

/// One entry of `scope_agents`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScopeAgent {
    scope: Spanned<String>,
    agent: String,
}

/// The most clock skew allowed: past it, an expired token would be taken for too long.
const MAX_CLOCK_SKEW: std::time::Duration = std::time::Duration::from_secs(600);

/// The OAuth of `[oauth]`, each value checked.
pub(super) fn oauth(span: std::ops::Range<usize>, raw: RawOAuth) -> Result<OAuth, Problem> {
    let issuer = address(raw.issuer, "issuer")?;
    let resource = resource(raw.resource)?;
    let mut settings = OAuthSettings::new(issuer, resource);
    settings.jwks_uri = raw.jwks_uri.map(|uri| address(uri, "jwks_uri")).transpose()?;
    settings.scopes = raw.scopes.into_iter().map(|scope| scope_name(scope, "scopes")).collect::<Result<_, _>>()?;
    if let Some(claim) = raw.agent_claim {
        let span = claim.span();
        settings.agent_claim = claim.into_inner();
        if settings.agent_claim.is_empty() {
            return Err(Problem::at(span, "[oauth] `agent_claim` must not be empty"));
        }
    }
    if let Some(skew) = raw.clock_skew {
        let span = skew.span();
        let at = |message: String| Problem::at(span.clone(), format!("[oauth] `clock_skew`: {message}"));
        settings.clock_skew = parse_duration(skew.get_ref()).map_err(at)?;
        if settings.clock_skew > MAX_CLOCK_SKEW {
            return Err(at(format!("at most {MAX_CLOCK_SKEW:?}")));
        }
    }
    for entry in raw.scope_agents {
        let entry_span = entry.span();
        let entry = entry.into_inner();
        if entry.agent.trim().is_empty() {
            return Err(Problem::at(entry_span, "[oauth] `scope_agents`: `agent` must not be empty"));
        }
        settings.scope_agents.push((scope_name(entry.scope, "scope_agents")?, entry.agent));
    }
    OAuth::new(settings).map_err(|e| Problem::at(span, format!("[oauth]: {e}")))
}

/// An address trust is read from: `https://`, or `http://` to loopback.
fn address(raw: Spanned<String>, key: &str) -> Result<String, Problem> {
    let span = raw.span();
    check_address(raw.get_ref()).map_err(|e| Problem::at(span, format!("[oauth] `{key}` {e}")))?;
    Ok(raw.into_inner())
}

/// This server's identifier: an absolute `http(s)` URL without a fragment, which
/// clients compare with the address they reach.
fn resource(raw: Spanned<String>) -> Result<String, Problem> {
    let span = raw.span();
    let at = |message: &str| Problem::at(span.clone(), format!("[oauth] `resource` {message}"));
    let url = url::Url::parse(raw.get_ref()).map_err(|e| at(&format!("is not a URL: {e}")))?;
    if !matches!(url.scheme(), "https" | "http") || url.fragment().is_some() || url.host().is_none() {
        return Err(at("must be this server's http(s) address, without a fragment (`https://tools.example.com/mcp`)"));
    }
    Ok(raw.into_inner())
}

/// A scope as RFC 6749 spells one: printable ASCII without spaces, quotes or backslashes.
fn scope_name(raw: Spanned<String>, key: &str) -> Result<String, Problem> {
    let span = raw.span();
    let valid = |c: char| c.is_ascii_graphic() && c != '"' && c != '\\';
    if raw.get_ref().is_empty() || !raw.get_ref().chars().all(valid) {
        let message = format!("[oauth] `{key}`: a scope is printable ASCII without spaces, quotes or backslashes");
        return Err(Problem::at(span, message));
    }
    Ok(raw.into_inner())
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use crate::config::HostConfig;

    #[test]
    fn oauth_settings_are_read_and_checked() {
        let text = "[oauth]\nissuer = \"https://auth.example.com\"\nresource = \"https://tools.example.com/mcp\"\n\
                    scopes = [\"mcp:tools\"]\nclock_skew = \"5s\"\nscope_agents = [{ scope = \"z:ops\", agent = \"ops\" }, \
                    { scope = \"a:ci\", agent = \"ci\" }]\n";
        let config = HostConfig::parse(Path::new("t.toml"), text).unwrap();
        let settings = config.tokens.oauth().expect("OAuth is configured").settings().clone();
        assert_eq!(settings.issuer, "https://auth.example.com");
        assert_eq!(settings.scopes, ["mcp:tools"]);
        assert_eq!(settings.agent_claim, "sub");
        assert_eq!(settings.clock_skew, Duration::from_secs(5));
        let in_order = [("z:ops".to_owned(), "ops".to_owned()), ("a:ci".to_owned(), "ci".to_owned())];
        assert_eq!(settings.scope_agents, in_order, "in the file's order");
        assert!(!config.tokens.is_empty(), "OAuth alone is a credential");

        let refused = |text: &str, expected: &str| {
            let error = HostConfig::parse(Path::new("t.toml"), text).unwrap_err();
            assert!(error.problem.contains(expected), "{error}");
        };
        let base = "[oauth]\nresource = \"https://tools.example.com/mcp\"\n";
        refused(&format!("{base}issuer = \"http://auth.example.com\"\n"), "`issuer` must be an https:// address");
        refused(&format!("{base}issuer = \"https://a\"\njwks_uri = \"ftp://a/k\"\n"), "`jwks_uri` must be");
        refused(&format!("{base}issuer = \"https://a\"\nscopes = [\"a b\"]\n"), "a scope is printable ASCII");
        refused("[oauth]\nissuer = \"https://a\"\nresource = \"https://t/mcp#x\"\n", "without a fragment");
        refused(
            &format!("{base}issuer = \"https://a\"\nscope_agents = [{{ scope = \"x\", agent = \"\" }}]\n"),
            "must not be empty",
        );
        refused(&format!("{base}issuer = \"https://a\"\nclock_skew = \"11m\"\n"), "at most");
        refused(&format!("{base}issuer = \"https://a\"\naudience = \"x\"\n"), "unknown field `audience`");
    }
}
