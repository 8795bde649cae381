//! The operator's manifest beside a component (`<name>.toml` next to `<name>.wasm`):
//! its limits, its grants and its policy. A component can never grant itself anything;
//! only this file can.
//!
//! Parsed strictly: an unknown key, a bad unit, a missing granted directory or a
//! malformed host pattern is an error naming the file, the line and the problem, and
//! the component is not served.
//!
//! ```toml
//! [limits]                 # per call; absent keys keep the host defaults
//! fuel = 500_000_000
//! memory = "64 MiB"
//! timeout = "5s"
//! max_output = "1 MiB"
//! max_log = "64 KiB"
//!
//! [grants]                 # nothing is granted unless listed here
//! files   = [{ host = "data", guest = "/data", mode = "ro" }]  # host path relative to this file
//! network = ["api.example.com:443", "*.example.org"]
//! env     = ["API_TOKEN"]
//! config  = { units = "metric" }
//!
//! [policy]
//! requires_approval = false
//! ```

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Component as PathComponent, Path};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{LoadError, LoadErrorKind};
use crate::sandbox::grants::{FileGrant, Grants};
use crate::sandbox::limits::Limits;
use crate::sandbox::outbound::HostPattern;

/// What a manifest decides for its component.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub limits: Limits,
    pub grants: Grants,
    pub requires_approval: bool,
}

impl Manifest {
    /// The decisions for a component without a manifest: host defaults, nothing
    /// granted.
    pub fn default_for(defaults: Limits) -> Manifest {
        Manifest { limits: defaults, grants: Grants::default(), requires_approval: false }
    }
}

/// Upper bounds a manifest may not exceed, set by the host.
#[derive(Debug, Clone, Copy)]
pub struct Ceilings {
    pub memory: u64,
    pub timeout: Duration,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    grants: RawGrants,
    #[serde(default)]
    policy: RawPolicy,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLimits {
    fuel: Option<Spanned<u64>>,
    memory: Option<Spanned<Size>>,
    timeout: Option<Spanned<String>>,
    max_output: Option<Spanned<Size>>,
    max_log: Option<Spanned<Size>>,
}

/// A size: a number of bytes, or text such as `"64 MiB"`.
#[derive(Deserialize)]
#[serde(untagged)]
enum Size {
    Bytes(u64),
    Text(String),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawGrants {
    #[serde(default)]
    files: Vec<Spanned<RawFileGrant>>,
    #[serde(default)]
    network: Vec<Spanned<String>>,
    #[serde(default)]
    env: Vec<Spanned<String>>,
    #[serde(default)]
    config: BTreeMap<String, Spanned<ConfigValue>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFileGrant {
    host: String,
    guest: String,
    mode: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum ConfigValue {
    String(String),
    Integer(i64),
    Float(f64),
    Bool(bool),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawPolicy {
    #[serde(default)]
    requires_approval: bool,
}

/// Reads and checks the manifest at `path`.
pub fn load(path: &Path, defaults: Limits, ceilings: Ceilings) -> Result<Manifest, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|e| LoadError::new(path, LoadErrorKind::Io(e.to_string())))?;
    parse(path, &text, defaults, ceilings)
}

/// The line of a byte offset, for errors.
pub(crate) fn error_at_fn<'a>(
    path: &'a Path,
    text: &'a str,
) -> impl Fn(Option<Range<usize>>, String) -> LoadError + 'a {
    move |span: Option<Range<usize>>, problem: String| {
        let line = span.map_or(1, |span| line_of(text, span.start));
        LoadError::new(path, LoadErrorKind::Manifest { manifest: path.to_owned(), line, problem })
    }
}

/// Checks manifest text; `path` names the file in errors and anchors relative paths.
pub fn parse(path: &Path, text: &str, defaults: Limits, ceilings: Ceilings) -> Result<Manifest, LoadError> {
    let error_at = error_at_fn(path, text);
    let raw: RawManifest = toml::from_str(text).map_err(|e| error_at(e.span(), e.message().to_owned()))?;
    let base = path.parent().unwrap_or(Path::new("."));

    let limits = resolve_limits(raw.limits, defaults, ceilings, &error_at)?;

    let mut grants = Grants::default();
    for grant in raw.grants.files {
        let span = grant.span();
        let file_grant = file_grant(base, grant.into_inner()).map_err(|problem| error_at(Some(span), problem))?;
        if grants.files.iter().any(|existing| existing.guest == file_grant.guest) {
            return Err(error_at(
                Some(grant_span(text, &file_grant.guest)),
                format!("guest path `{}` is granted twice", file_grant.guest),
            ));
        }
        grants.files.push(file_grant);
    }
    let mut network = Vec::new();
    for pattern in raw.grants.network {
        let span = pattern.span();
        network.push(HostPattern::parse(pattern.get_ref()).map_err(|problem| error_at(Some(span), problem))?);
    }
    grants.network = network.into();
    for name in raw.grants.env {
        let span = name.span();
        let name = name.into_inner();
        if !is_env_name(&name) {
            return Err(error_at(Some(span), format!("`{name}` is not an environment variable name")));
        }
        match std::env::var(&name) {
            Ok(value) => grants.env.push((name, value)),
            Err(_) => {
                tracing::info!(manifest = %path.display(), variable = %name, "granted environment variable is not set on the host")
            }
        }
    }
    for (key, value) in raw.grants.config {
        let value = match value.into_inner() {
            ConfigValue::String(s) => s,
            ConfigValue::Integer(i) => i.to_string(),
            ConfigValue::Float(f) => f.to_string(),
            ConfigValue::Bool(b) => b.to_string(),
        };
        grants.config.insert(key, value);
    }
    Ok(Manifest { limits, grants, requires_approval: raw.policy.requires_approval })
}

/// Applies a `[limits]` table over `defaults`. Shared by manifests and the host config.
pub(crate) fn resolve_limits(
    raw: RawLimits,
    defaults: Limits,
    ceilings: Ceilings,
    error_at: &dyn Fn(Option<Range<usize>>, String) -> LoadError,
) -> Result<Limits, LoadError> {
    let mut limits = defaults;
    if let Some(fuel) = raw.fuel {
        if *fuel.get_ref() == 0 {
            return Err(error_at(Some(fuel.span()), "`fuel` must be greater than 0".into()));
        }
        limits.fuel = fuel.into_inner();
    }
    let size = |value: Spanned<Size>, key: &str| -> Result<u64, LoadError> {
        let span = value.span();
        let bytes = match value.into_inner() {
            Size::Bytes(bytes) => bytes,
            Size::Text(text) => {
                parse_size(&text).map_err(|problem| error_at(Some(span.clone()), format!("`{key}`: {problem}")))?
            }
        };
        if bytes == 0 {
            return Err(error_at(Some(span), format!("`{key}` must be greater than 0")));
        }
        Ok(bytes)
    };
    if let Some(memory) = raw.memory {
        let span = memory.span();
        limits.memory = size(memory, "memory")?;
        if limits.memory > ceilings.memory {
            return Err(error_at(
                Some(span),
                format!("`memory` is {} bytes, over the host's ceiling of {} bytes", limits.memory, ceilings.memory),
            ));
        }
    }
    if let Some(max_output) = raw.max_output {
        limits.max_output = size(max_output, "max_output")?;
    }
    if let Some(max_log) = raw.max_log {
        limits.max_log = size(max_log, "max_log")?;
    }
    if let Some(timeout) = raw.timeout {
        let span = timeout.span();
        limits.timeout = parse_duration(timeout.get_ref())
            .map_err(|problem| error_at(Some(span.clone()), format!("`timeout`: {problem}")))?;
        if limits.timeout > ceilings.timeout {
            return Err(error_at(
                Some(span),
                format!("`timeout` is {:?}, over the host's ceiling of {:?}", limits.timeout, ceilings.timeout),
            ));
        }
    }

    Ok(limits)
}

/// Best effort: the span of the first occurrence of `needle`, for errors found after
/// parsing.
fn grant_span(text: &str, needle: &str) -> Range<usize> {
    let start = text.find(needle).unwrap_or(0);
    start..start + needle.len()
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].bytes().filter(|b| *b == b'\n').count() + 1
}

fn file_grant(base: &Path, raw: RawFileGrant) -> Result<FileGrant, String> {
    let writable = match raw.mode.as_str() {
        "ro" => false,
        "rw" => true,
        other => return Err(format!("file grant mode `{other}` is neither \"ro\" nor \"rw\"")),
    };
    let guest = Path::new(&raw.guest);
    if !guest.is_absolute() || guest.components().any(|c| matches!(c, PathComponent::ParentDir | PathComponent::CurDir))
    {
        return Err(format!("guest path `{}` must be absolute, without `.` or `..`", raw.guest));
    }
    let host = base.join(&raw.host);
    let host = host
        .canonicalize()
        .map_err(|e| format!("granted directory `{}` ({}) cannot be used: {e}", raw.host, host.display()))?;
    if !host.is_dir() {
        return Err(format!("granted path `{}` ({}) is not a directory", raw.host, host.display()));
    }
    Ok(FileGrant { host, guest: raw.guest, writable })
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `"64 MiB"`, `"512KiB"`, `"1 MB"`, `"1024"` (bytes).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| format!("`{text}` is not a size such as \"64 MiB\""))?;
    let multiplier: u64 = match unit.trim() {
        "" | "B" => 1,
        "KB" => 1_000,
        "KiB" => 1 << 10,
        "MB" => 1_000_000,
        "MiB" => 1 << 20,
        "GB" => 1_000_000_000,
        "GiB" => 1 << 30,
        other => return Err(format!("unknown size unit `{other}` (use B, KB, KiB, MB, MiB, GB or GiB)")),
    };
    number.checked_mul(multiplier).ok_or_else(|| format!("`{text}` is too large"))
}

/// `"5s"`, `"250ms"`, `"2m"`, `"1.5s"`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("`{text}` is not a duration such as \"5s\""))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "s" => number,
        "m" | "min" => number * 60.0,
        "" => return Err(format!("`{text}` has no unit (use ms, s or m)")),
        other => return Err(format!("unknown duration unit `{other}` (use ms, s or m)")),
    };
    if seconds <= 0.0 || !seconds.is_finite() {
        return Err(format!("`{text}` must be greater than 0"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CEILINGS: Ceilings = Ceilings { memory: 1 << 30, timeout: Duration::from_secs(600) };

    fn parse_text(text: &str) -> Result<Manifest, LoadError> {
        parse(Path::new("/tools/ns/tool.toml"), text, Limits::default(), CEILINGS)
    }

    fn problem(text: &str) -> (usize, String) {
        match parse_text(text).unwrap_err().kind {
            LoadErrorKind::Manifest { line, problem, .. } => (line, problem),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_empty_manifest_keeps_defaults_and_grants_nothing() {
        assert_eq!(parse_text("").unwrap(), Manifest::default_for(Limits::default()));
    }

    #[test]
    fn limits_take_units() {
        let manifest = parse_text(
            "[limits]\nfuel = 5_000\nmemory = \"2 MiB\"\ntimeout = \"250ms\"\nmax_output = 4096\nmax_log = \"1 KiB\"\n",
        )
        .unwrap();
        assert_eq!(
            manifest.limits,
            Limits {
                fuel: 5000,
                memory: 2 << 20,
                timeout: Duration::from_millis(250),
                max_output: 4096,
                max_log: 1024
            }
        );
    }

    #[test]
    fn errors_name_the_line_and_the_problem() {
        let (line, message) = problem("[limits]\nfuel = 1\nmemroy = \"1 MiB\"\n");
        assert_eq!(line, 3);
        assert!(message.contains("unknown field `memroy`"), "{message}");

        let (line, message) = problem("[limits]\n\nmemory = \"64 MB/s\"\n");
        assert_eq!(line, 3);
        assert!(message.contains("unknown size unit `MB/s`"), "{message}");

        let (line, message) = problem("[limits]\ntimeout = \"5 parsecs\"\n");
        assert_eq!(line, 2);
        assert!(message.contains("unknown duration unit"), "{message}");

        let (line, message) = problem("[limits]\ntimeout = \"5\"\n");
        assert_eq!(line, 2);
        assert!(message.contains("has no unit"), "{message}");

        let (line, message) = problem("[grants]\nnetwork = [\n  \"ok.example.com\",\n  \"bad host:99999\",\n]\n");
        assert_eq!(line, 4);
        assert!(message.contains("bad host"), "{message}");

        let (line, message) = problem("[grants]\nenv = [\"NOT-A-NAME\"]\n");
        assert_eq!(line, 2);
        assert!(message.contains("not an environment variable name"), "{message}");

        let (line, message) = problem("[policy]\nrequires_approval = \"yes\"\n");
        assert_eq!(line, 2);
        assert!(message.contains("invalid type"), "{message}");

        let (_, message) = problem("[limits]\nmemory = \"2 GiB\"\n");
        assert!(message.contains("over the host's ceiling"), "{message}");

        let (_, message) = problem("[sandbox]\n");
        assert!(message.contains("unknown field `sandbox`"), "{message}");
    }

    #[test]
    fn file_grants_resolve_relative_to_the_manifest_and_must_exist() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("data")).unwrap();
        let manifest_path = dir.path().join("tool.toml");
        let text = "[grants]\nfiles = [{ host = \"data\", guest = \"/data\", mode = \"rw\" }]\n";
        let manifest = parse(&manifest_path, text, Limits::default(), CEILINGS).unwrap();
        assert_eq!(
            manifest.grants.files,
            vec![FileGrant {
                host: dir.path().join("data").canonicalize().unwrap(),
                guest: "/data".into(),
                writable: true
            }]
        );

        let missing = "[grants]\n\nfiles = [{ host = \"nope\", guest = \"/data\", mode = \"ro\" }]\n";
        let error = parse(&manifest_path, missing, Limits::default(), CEILINGS).unwrap_err();
        assert!(
            matches!(&error.kind, LoadErrorKind::Manifest { line: 3, problem, .. } if problem.contains("granted directory `nope`")),
            "{error}"
        );

        let relative_guest = "[grants]\nfiles = [{ host = \"data\", guest = \"data\", mode = \"ro\" }]\n";
        let error = parse(&manifest_path, relative_guest, Limits::default(), CEILINGS).unwrap_err();
        assert!(error.to_string().contains("must be absolute"), "{error}");

        let bad_mode = "[grants]\nfiles = [{ host = \"data\", guest = \"/data\", mode = \"rwx\" }]\n";
        let error = parse(&manifest_path, bad_mode, Limits::default(), CEILINGS).unwrap_err();
        assert!(error.to_string().contains("neither \"ro\" nor \"rw\""), "{error}");
    }

    #[test]
    fn config_values_become_strings() {
        let manifest = parse_text("[grants]\nconfig = { units = \"metric\", retries = 3, verbose = true }\n").unwrap();
        assert_eq!(manifest.grants.config.get("units").map(String::as_str), Some("metric"));
        assert_eq!(manifest.grants.config.get("retries").map(String::as_str), Some("3"));
        assert_eq!(manifest.grants.config.get("verbose").map(String::as_str), Some("true"));
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(parse_size("64 MiB"), Ok(64 << 20));
        assert_eq!(parse_size("10KB"), Ok(10_000));
        assert_eq!(parse_size("12"), Ok(12));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("99999999999 GiB").unwrap_err().contains("too large"));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("0s").is_err());
    }
}
