//! `[storage]`: where the buckets of `wasi:keyvalue` live, an SQLite file or a Redis server.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::secret::{RawSecret, secret};
use crate::storage::StorageSetting;
use crate::units::Problem;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStorage {
    path: Option<PathBuf>,
    url: Option<RawUrl>,
}

/// A URL that may hold a password: the URL itself, or where to read it.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawUrl {
    Plain(String),
    From(RawSecret),
}

/// `[storage]`: a file (relative to the configuration), a Redis URL (inline, or from
/// a variable or a file), or the default.
pub(super) fn storage_setting(base: &Path, raw: Option<Spanned<RawStorage>>) -> Result<StorageSetting, Problem> {
    let Some(raw) = raw else { return Ok(StorageSetting::Default) };
    let span = raw.span();
    match raw.into_inner() {
        RawStorage { path: Some(_), url: Some(_) } => {
            Err(Problem::at(span, "[storage] takes `path` or `url`, not both".to_owned()))
        }
        RawStorage { path: Some(path), url: None } => Ok(StorageSetting::File(base.join(path))),
        RawStorage { path: None, url: Some(url) } => {
            let at = |message: String| Problem::at(span.clone(), format!("[storage] `url`: {message}"));
            let url = match url {
                RawUrl::Plain(url) => url,
                RawUrl::From(raw) => {
                    let source =
                        raw.source().ok_or_else(|| at("give the URL, or exactly one of `env` or `file`".into()))?;
                    secret(base, source, "storage URL").map_err(at)?
                }
            };
            let scheme = url.split_once("://").map(|(scheme, _)| scheme);
            match scheme {
                Some("redis") => {}
                // The Redis client is built without TLS: refused here rather than failing
                // every call once the replica reports ready.
                Some("rediss") => {
                    return Err(at("rediss:// (Redis over TLS) is not supported: reach a TLS Redis through a \
                         local TLS proxy (stunnel, a sidecar) with a redis:// URL"
                        .into()));
                }
                _ => return Err(at("must be a redis:// URL".into())),
            }
            Ok(StorageSetting::Redis(url))
        }
        RawStorage { path: None, url: None } => Ok(StorageSetting::Default),
    }
}

#[cfg(test)]
mod tests {
    use crate::config::HostConfig;
    use crate::storage::StorageSetting;

    #[test]
    fn a_redis_url_comes_inline_from_a_variable_or_a_file_and_its_password_never_shows() {
        let dir = tempfile::tempdir().unwrap();
        let url = "redis://:s3cret-pass@10.0.0.1:6379/0";
        std::fs::write(dir.path().join("redis.url"), format!("{url}\n")).unwrap();
        let path = dir.path().join("toolhost.toml");
        let config = HostConfig::parse(&path, "[storage]\nurl = { file = \"redis.url\" }\n").unwrap();
        assert_eq!(config.storage, StorageSetting::Redis(url.into()));
        assert!(!format!("{config:?}").contains("s3cret"), "Debug hides the password: {config:?}");
        let inline = HostConfig::parse(&path, "[storage]\nurl = \"redis://127.0.0.1:6379/0\"\n").unwrap();
        assert_eq!(inline.storage, StorageSetting::Redis("redis://127.0.0.1:6379/0".into()));
        for (text, wanted) in [
            ("{ env = \"TOOLHOST_TEST_SURELY_UNSET\" }", "`TOOLHOST_TEST_SURELY_UNSET` is not set"),
            ("{ env = \"A\", file = \"b\" }", "exactly one of `env` or `file`"),
            ("\"postgres://db/0\"", "must be a redis:// URL"),
            ("\"rediss://db:6380/0\"", "rediss:// (Redis over TLS) is not supported"),
        ] {
            let error = HostConfig::parse(&path, &format!("[storage]\nurl = {text}\n")).unwrap_err();
            assert!(error.problem.contains(wanted), "{text}: {error}");
        }
    }
}
