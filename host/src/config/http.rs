//! `[http]`: the bounds of `serve --http` and the approval key its replicas share.

use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::secret::{RawSecret, secret};
use crate::serve::{ApprovalKey, HttpLimits, bounds};
use crate::units::{Problem, parse_duration, parse_size};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHttp {
    max_connections: Option<Spanned<u64>>,
    header_timeout: Option<Spanned<String>>,
    max_header_size: Option<Spanned<String>>,
    body_timeout: Option<Spanned<String>>,
    max_body_size: Option<Spanned<String>>,
    max_sessions: Option<Spanned<u64>>,
    max_streams_per_session: Option<Spanned<u64>>,
    session_idle_timeout: Option<Spanned<String>>,
    pub approval_key: Option<Spanned<RawSecret>>,
}

/// `[http] approval_key = { env = "NAME" }` or `{ file = "PATH" }` (relative to the
/// configuration). Errors never contain the secret.
pub(super) fn approval_key(base: &Path, raw: Spanned<RawSecret>) -> Result<ApprovalKey, Problem> {
    let span = raw.span();
    let at = |message: String| Problem::at(span.clone(), format!("[http] approval_key: {message}"));
    let raw = raw.into_inner();
    let source = raw.source().ok_or_else(|| at("give exactly one of `env` or `file`".into()))?;
    ApprovalKey::from_secret(&secret(base, source, "approval key").map_err(at)?).map_err(at)
}

/// `[http]`'s bounds over the defaults, each within its range.
pub(super) fn http_limits(raw: RawHttp) -> Result<HttpLimits, Problem> {
    let mut limits = HttpLimits::default();
    let count = |value: Option<Spanned<u64>>, key: &str, range: std::ops::RangeInclusive<usize>, into: &mut usize| {
        if let Some(value) = value {
            let span = value.span();
            *into = usize::try_from(value.into_inner()).ok().filter(|n| range.contains(n)).ok_or_else(|| {
                Problem::at(span, format!("`{key}` must be between {} and {}", range.start(), range.end()))
            })?;
        }
        Ok::<(), Problem>(())
    };
    count(raw.max_connections, "max_connections", bounds::CONNECTIONS, &mut limits.max_connections)?;
    count(raw.max_sessions, "max_sessions", bounds::SESSIONS, &mut limits.max_sessions)?;
    count(
        raw.max_streams_per_session,
        "max_streams_per_session",
        bounds::STREAMS_PER_SESSION,
        &mut limits.max_streams_per_session,
    )?;
    let size = |value: Option<Spanned<String>>, key: &str, range: std::ops::RangeInclusive<usize>, into: &mut usize| {
        if let Some(value) = value {
            let span = value.span();
            let bytes = parse_size(value.get_ref()).map_err(|e| Problem::at(span.clone(), format!("`{key}`: {e}")))?;
            *into = usize::try_from(bytes).ok().filter(|n| range.contains(n)).ok_or_else(|| {
                Problem::at(span, format!("`{key}` must be between {} and {} bytes", range.start(), range.end()))
            })?;
        }
        Ok::<(), Problem>(())
    };
    size(raw.max_header_size, "max_header_size", bounds::HEADER_SIZE, &mut limits.max_header_size)?;
    size(raw.max_body_size, "max_body_size", bounds::BODY_SIZE, &mut limits.max_body_size)?;
    let duration = |value: Option<Spanned<String>>, key: &str, into: &mut std::time::Duration| {
        if let Some(value) = value {
            let span = value.span();
            *into = parse_duration(value.get_ref()).map_err(|e| Problem::at(span, format!("`{key}`: {e}")))?;
        }
        Ok::<(), Problem>(())
    };
    duration(raw.header_timeout, "header_timeout", &mut limits.header_timeout)?;
    duration(raw.body_timeout, "body_timeout", &mut limits.body_timeout)?;
    duration(raw.session_idle_timeout, "session_idle_timeout", &mut limits.session_idle_timeout)?;
    Ok(limits)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use crate::config::HostConfig;
    use crate::serve::{ApprovalKey, HttpLimits};

    #[test]
    fn the_approval_key_comes_from_a_file_or_a_variable_and_never_shows() {
        let dir = tempfile::tempdir().unwrap();
        let secret = "k".repeat(20) + "-shared-by-replicas";
        std::fs::write(dir.path().join("approval.key"), format!("{secret}\n")).unwrap();
        let config = HostConfig::parse(
            &dir.path().join("toolhost.toml"),
            "[http]\napproval_key = { file = \"approval.key\" }\n",
        )
        .unwrap();
        assert_eq!(config.approval_key, Some(ApprovalKey::from_secret(&secret).unwrap()));
        assert_eq!(HostConfig::parse(Path::new("t.toml"), "").unwrap().approval_key, None, "none: per process");
        assert!(!format!("{config:?}").contains(&secret), "Debug shows no key");

        std::fs::write(dir.path().join("short.key"), "hunter2").unwrap();
        for (text, wanted) in [
            ("{ file = \"short.key\" }", "at least 32 characters"),
            ("{ file = \"missing.key\" }", "cannot read the approval key file"),
            ("{ env = \"TOOLHOST_TEST_SURELY_UNSET\" }", "`TOOLHOST_TEST_SURELY_UNSET` is not set"),
            ("{ env = \"A\", file = \"b\" }", "exactly one of `env` or `file`"),
            ("{ value = \"inline\" }", "unknown field `value`"),
        ] {
            let error =
                HostConfig::parse(&dir.path().join("toolhost.toml"), &format!("[http]\napproval_key = {text}\n"))
                    .unwrap_err();
            assert_eq!(error.line, 2, "{text}");
            assert!(error.problem.contains(wanted) && !error.problem.contains("hunter2"), "{text}: {error}");
        }
    }

    #[test]
    fn http_limits_default_and_are_checked() {
        let config = HostConfig::parse(Path::new("t.toml"), "").unwrap();
        assert_eq!(config.http, HttpLimits::default());
        let text = "[http]\nmax_connections = 10\nheader_timeout = \"2s\"\nmax_header_size = \"8 KiB\"\n\
                    body_timeout = \"500ms\"\nmax_body_size = \"64 KiB\"\nmax_sessions = 2\n\
                    max_streams_per_session = 3\nsession_idle_timeout = \"1s\"\n";
        let config = HostConfig::parse(Path::new("t.toml"), text).unwrap();
        let expected = HttpLimits {
            max_connections: 10,
            header_timeout: Duration::from_secs(2),
            max_header_size: 8 << 10,
            body_timeout: Duration::from_millis(500),
            max_body_size: 64 << 10,
            max_sessions: 2,
            max_streams_per_session: 3,
            session_idle_timeout: Duration::from_secs(1),
        };
        assert_eq!(config.http, expected);
        for (text, wanted) in [
            ("max_sessions = 0", "`max_sessions` must be between 1 and 1000000"),
            ("max_header_size = \"100\"", "`max_header_size` must be between 1024 and 262144 bytes"),
            ("max_body_size = \"2 TB\"", "`max_body_size`: unknown size unit `TB`"),
            ("session_idle_timeout = \"0s\"", "`session_idle_timeout`: `0s` must be greater than 0"),
            ("keep_alive = \"1s\"", "unknown field `keep_alive`"),
        ] {
            let error = HostConfig::parse(Path::new("t.toml"), &format!("[http]\n{text}\n")).unwrap_err();
            assert_eq!(error.line, 2, "{text}");
            assert!(error.problem.contains(wanted), "{text}: {error}");
        }
    }
}
