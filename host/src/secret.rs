//! Secrets named by where they are, never written in a configuration file itself: an environment variable or a file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// A secret named by where it is, never written in the file itself.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSecret {
    env: Option<String>,
    file: Option<PathBuf>,
}

impl RawSecret {
    /// Where the secret is, if exactly one place is named.
    pub fn source(&self) -> Option<SecretSource<'_>> {
        match (&self.env, &self.file) {
            (Some(variable), None) => Some(SecretSource::Env(variable)),
            (None, Some(file)) => Some(SecretSource::File(file)),
            _ => None,
        }
    }
}

/// Longest secret file read (a token, a key): a secret is a line of text; a path to
/// something endless (`/dev/zero`, a pipe that never closes its end is the operator's)
/// must not be read for ever.
const MAX_SECRET_FILE: u64 = 4096;

/// Where the operator keeps a secret out of the configuration file.
pub(crate) enum SecretSource<'a> {
    /// An environment variable of the host, by name.
    Env(&'a str),
    /// A file, relative to the configuration.
    File(&'a Path),
}

/// The secret `what` (token, approval key, storage URL, configuration value): the variable's value or the
/// file's text, without surrounding whitespace, never empty. Errors name the variable
/// or the file, never the value.
pub(crate) fn secret(base: &Path, source: SecretSource<'_>, what: &str) -> Result<String, String> {
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
    crate::text::read_file_bounded(path, MAX_SECRET_FILE).map_err(|e| match e.kind() {
        std::io::ErrorKind::FileTooLarge => {
            format!("the {what} file {} is longer than {MAX_SECRET_FILE} bytes", path.display())
        }
        _ => format!("cannot read the {what} file {}: {e}", path.display()),
    })
}
