//! `[signatures]`: the public keys one of which must have signed every component.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::trust::SigningKeys;
use crate::units::Problem;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSignatures {
    #[serde(default)]
    keys: Vec<Spanned<PathBuf>>,
}

/// The public keys of `[signatures]`, read now: a key that cannot be used stops the
/// host from starting rather than refusing every component later.
pub(super) fn signing_keys(base: &Path, raw: RawSignatures) -> Result<SigningKeys, Problem> {
    let mut keys = SigningKeys::none();
    for key in raw.keys {
        let span = key.span();
        keys.add(base.join(key.into_inner())).map_err(|e| Problem::at(span, format!("[signatures] {e}")))?;
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use crate::config::HostConfig;

    #[test]
    fn signing_keys_are_read_at_once_and_a_bad_one_is_named_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("toolhost.toml");
        let error = HostConfig::parse(&config, "[signatures]\nkeys = [\n  \"keys/cosign.pub\",\n]\n").unwrap_err();
        assert_eq!(error.line, 3);
        assert!(error.problem.contains("keys/cosign.pub") && error.problem.contains("cannot read"), "{error}");
        std::fs::write(dir.path().join("cosign.pub"), "not a key").unwrap();
        let error = HostConfig::parse(&config, "[signatures]\nkeys = [\"cosign.pub\"]\n").unwrap_err();
        assert!(error.problem.contains("P-256"), "{error}");
        let none = HostConfig::parse(&config, "[signatures]\nkeys = []\n").unwrap();
        assert!(!none.signing_keys.required());
    }
}
