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
        tokens = match (&entry.sha256, &entry.file, &entry.env) {
            (Some(hex), None, None) => tokens.with_digest(&entry.agent, parse_digest(hex).map_err(at)?),
            (None, Some(file), None) => {
                tokens.with_token(&entry.agent, &secret(base, SecretSource::File(file), "token").map_err(at)?)
            }
            (None, None, Some(variable)) => {
                tokens.with_token(&entry.agent, &secret(base, SecretSource::Env(variable), "token").map_err(at)?)
            }
            _ => return Err(at("give the token as exactly one of `sha256`, `file` or `env`".into())),
        };
    }
    Ok(tokens)
}

/// Longest secret file read (a token, a key): a secret is a line of text; a path to
/// something endless (`/dev/zero`, a pipe that never closes its end is the operator's)
/// must not be read for ever.
const MAX_SECRET_FILE: u64 = 4096;

/// Where the operator keeps a secret out of the configuration file.
pub(super) enum SecretSource<'a> {
    /// An environment variable of the host, by name.
    Env(&'a str),
    /// A file, relative to the configuration.
    File(&'a Path),
}

/// The secret `what` (token, approval key, storage URL): the variable's value or the
/// file's text, without surrounding whitespace, never empty. Errors name the variable
/// or the file, never the value.
pub(super) fn secret(base: &Path, source: SecretSource<'_>, what: &str) -> Result<String, String> {
    let (value, empty) = match source {
        SecretSource::Env(variable) => (
            std::env::var(variable).map_err(|_| format!("the environment variable `{variable}` is not set"))?,
            format!("`{variable}` is empty"),
        ),
        SecretSource::File(file) => {
            let path = base.join(file);
            (read_secret_file(&path, what)?, format!("the {what} file {} is empty", path.display()))
        }
    };
    let value = value.trim();
    if value.is_empty() { Err(empty) } else { Ok(value.to_owned()) }
}

/// The text of the file holding a `what`; errors name the file, never its content.
fn read_secret_file(path: &Path, what: &str) -> Result<String, String> {
    use std::io::Read;
    let cannot = |e: std::io::Error| format!("cannot read the {what} file {}: {e}", path.display());
    let mut text = String::new();
    let file = std::fs::File::open(path).map_err(cannot)?;
    file.take(MAX_SECRET_FILE + 1).read_to_string(&mut text).map_err(cannot)?;
    if text.len() as u64 > MAX_SECRET_FILE {
        return Err(format!("the {what} file {} is longer than {MAX_SECRET_FILE} bytes", path.display()));
    }
    Ok(text)
}
