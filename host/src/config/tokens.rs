//! `[[token]]`: the HTTP server's bearer tokens, each standing for an agent, kept as digests.
//!
//! `[[token]]` in `toolhost.toml`: the bearer tokens of the HTTP server, each standing
//! for an agent. A token is given by its SHA-256 digest (so the file holds no secret),
//! or read from a file or an environment variable when the configuration is loaded.
//!
//! ```toml
//! [[token]]
//! agent = "planner"
//! sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
//!
//! [[token]]
//! agent = "ci"
//! file = "/run/secrets/toolhost-ci"   # relative to this file; surrounding whitespace ignored
//!
//! [[token]]
//! agent = "reviewer"
//! env = "REVIEWER_TOKEN"
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::secret::{SecretSource, secret};
use crate::serve::{Tokens, parse_digest};
use crate::units::Problem;

/// One `[[token]]` as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawToken {
    agent: String,
    sha256: Option<String>,
    file: Option<PathBuf>,
    env: Option<String>,
}

/// The tokens of `raw`, files resolved against `base`. Errors never contain a token.
pub(super) fn tokens(base: &Path, raw: Vec<Spanned<RawToken>>) -> Result<Tokens, Problem> {
    let mut tokens = Tokens::none();
    for entry in raw {
        let span = entry.span();
        let entry = entry.into_inner();
        let at = |message: String| Problem::at(span.clone(), format!("[[token]] for `{}`: {message}", entry.agent));
        if entry.agent.trim().is_empty() {
            return Err(Problem::at(span.clone(), "[[token]]: `agent` must not be empty"));
        }
        let given = TokenGiven { sha256: &entry.sha256, file: &entry.file, env: &entry.env };
        tokens = with_token(tokens, base, &entry.agent, given).map_err(at)?;
    }
    Ok(tokens)
}

/// How a token is given in the file: exactly one of its digest, a file or a variable.
pub(super) struct TokenGiven<'a> {
    pub sha256: &'a Option<String>,
    pub file: &'a Option<PathBuf>,
    pub env: &'a Option<String>,
}

/// `tokens` with the token `given` standing for `owner`; the error never contains a
/// token.
pub(super) fn with_token(tokens: Tokens, base: &Path, owner: &str, given: TokenGiven) -> Result<Tokens, String> {
    Ok(match (given.sha256, given.file, given.env) {
        (Some(hex), None, None) => tokens.with_digest(owner, parse_digest(hex)?),
        (None, Some(file), None) => tokens.with_token(owner, &secret(base, SecretSource::File(file), "token")?),
        (None, None, Some(variable)) => tokens.with_token(owner, &secret(base, SecretSource::Env(variable), "token")?),
        _ => return Err("give the token as exactly one of `sha256`, `file` or `env`".into()),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::HostConfig;

    #[test]
    fn tokens_come_as_digests_files_or_variables_and_never_show_in_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ci.token"), "  from-a-file\n").unwrap();
        let digest: String = crate::serve::digest("by-digest").iter().map(|b| format!("{b:02x}")).collect();
        let text = format!(
            "[[token]]\nagent = \"planner\"\nsha256 = \"{digest}\"\n[[token]]\nagent = \"ci\"\nfile = \"ci.token\"\n"
        );
        let config = HostConfig::parse(&dir.path().join("toolhost.toml"), &text).unwrap();
        assert_eq!(config.tokens.agent_for("by-digest"), Some("planner"));
        assert_eq!(config.tokens.agent_for("from-a-file"), Some("ci"));
        assert_eq!(config.tokens.agent_for(&digest), None, "the digest is no token");

        let both = "[[token]]\nagent = \"a\"\nsha256 = \"00\"\nenv = \"X\"\n";
        let error = HostConfig::parse(Path::new("t.toml"), both).unwrap_err();
        assert!(error.problem.contains("exactly one of"), "{error}");
        let unset = "[[token]]\nagent = \"a\"\nenv = \"TOOLHOST_TEST_SURELY_UNSET\"\n";
        let error = HostConfig::parse(Path::new("t.toml"), unset).unwrap_err();
        assert!(error.problem.contains("is not set"), "{error}");
        let short = "[[token]]\nagent = \"a\"\nsha256 = \"secret-looking\"\n";
        let error = HostConfig::parse(Path::new("t.toml"), short).unwrap_err();
        assert!(error.problem.contains("64 hex digits") && !error.problem.contains("secret-looking"), "{error}");
    }
}
