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
//!
//! [tools.get-weather]      # settings of one tool
//! description = "Current weather for a city, in metric units."
//! ```

use std::collections::BTreeMap;
use std::path::{Component as PathComponent, Path};

use serde::Deserialize;
use toml::Spanned;

use crate::config::limits::RawLimits;
use crate::config::units::{Problem, span_of};
use crate::error::{LoadError, LoadErrorKind};
use crate::names;
use crate::sandbox::grants::{FileGrant, Grants};
use crate::sandbox::limits::{Ceilings, Limits};
use crate::sandbox::outbound::HostPattern;

/// What a manifest decides for its component.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// Per-call limits: the host's defaults with the manifest's `[limits]` over them.
    pub limits: Limits,
    /// What the guest may reach; nothing unless the manifest grants it.
    pub grants: Grants,
    /// Calls must pass the host's approval hook first.
    pub requires_approval: bool,
    /// Descriptions the operator gives tools (`[tools.NAME] description`), over the
    /// component's own.
    pub descriptions: BTreeMap<String, String>,
}

impl Manifest {
    /// The decisions for a component without a manifest: host defaults, nothing
    /// granted.
    pub fn default_for(defaults: Limits) -> Manifest {
        Manifest {
            limits: defaults,
            grants: Grants::default(),
            requires_approval: false,
            descriptions: BTreeMap::new(),
        }
    }

    /// Reads and checks the manifest at `path`: its limits over `defaults`, within
    /// `ceilings`. The error names the file, the line and the problem.
    pub fn load(path: &Path, defaults: Limits, ceilings: Ceilings) -> Result<Manifest, LoadError> {
        load(path, defaults, ceilings)
    }
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
    #[serde(default)]
    tools: BTreeMap<String, Spanned<RawTool>>,
}

/// `[tools.NAME]`: settings of one tool of the component.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTool {
    description: Option<String>,
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

/// Checks manifest text; `path` names the file in errors and anchors relative paths.
pub fn parse(path: &Path, text: &str, defaults: Limits, ceilings: Ceilings) -> Result<Manifest, LoadError> {
    check(path, text, defaults, ceilings).map_err(|problem| {
        let kind = LoadErrorKind::Manifest { line: problem.line(text), problem: problem.message };
        LoadError::new(path, kind)
    })
}

fn check(path: &Path, text: &str, defaults: Limits, ceilings: Ceilings) -> Result<Manifest, Problem> {
    let raw: RawManifest = toml::from_str(text).map_err(|e| Problem::from_toml(&e))?;
    let limits = raw.limits.resolve(defaults, ceilings)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let grants = Grants {
        files: file_grants(base, text, raw.grants.files)?,
        network: network_grants(raw.grants.network)?.into(),
        env: env_grants(path, raw.grants.env)?,
        config: config_grants(raw.grants.config),
    };
    let mut descriptions = BTreeMap::new();
    for (name, tool) in raw.tools {
        let span = tool.span();
        names::validate_tool(&name).map_err(|problem| Problem::at(span, format!("[tools.{name}]: {problem}")))?;
        if let Some(description) = tool.into_inner().description {
            descriptions.insert(name, description);
        }
    }
    Ok(Manifest { limits, grants, requires_approval: raw.policy.requires_approval, descriptions })
}

fn file_grants(base: &Path, text: &str, raw: Vec<Spanned<RawFileGrant>>) -> Result<Vec<FileGrant>, Problem> {
    let mut grants: Vec<FileGrant> = Vec::with_capacity(raw.len());
    for grant in raw {
        let span = grant.span();
        let grant = file_grant(base, grant.into_inner()).map_err(|message| Problem::at(span, message))?;
        if grants.iter().any(|existing| existing.guest == grant.guest) {
            let message = format!("guest path `{}` is granted twice", grant.guest);
            return Err(Problem::at(span_of(text, &grant.guest), message));
        }
        grants.push(grant);
    }
    Ok(grants)
}

fn network_grants(raw: Vec<Spanned<String>>) -> Result<Vec<HostPattern>, Problem> {
    raw.into_iter()
        .map(|pattern| HostPattern::parse(pattern.get_ref()).map_err(|message| Problem::at(pattern.span(), message)))
        .collect()
}

/// The granted variables' values, read from the host's environment now. One that is not
/// set is simply absent for the guest.
fn env_grants(path: &Path, raw: Vec<Spanned<String>>) -> Result<Vec<(String, String)>, Problem> {
    let mut env = Vec::new();
    for name in raw {
        let span = name.span();
        let name = name.into_inner();
        if !is_env_name(&name) {
            return Err(Problem::at(span, format!("`{name}` is not an environment variable name")));
        }
        match std::env::var(&name) {
            Ok(value) => env.push((name, value)),
            Err(_) => tracing::info!(
                manifest = %path.display(),
                variable = %name,
                "granted environment variable is not set on the host"
            ),
        }
    }
    Ok(env)
}

fn config_grants(raw: BTreeMap<String, Spanned<ConfigValue>>) -> BTreeMap<String, String> {
    raw.into_iter()
        .map(|(key, value)| {
            let value = match value.into_inner() {
                ConfigValue::String(s) => s,
                ConfigValue::Integer(i) => i.to_string(),
                ConfigValue::Float(f) => f.to_string(),
                ConfigValue::Bool(b) => b.to_string(),
            };
            (key, value)
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::Duration;

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
}
