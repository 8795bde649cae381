//! The operator's manifest beside a component (`<name>.toml` next to `<name>.wasm`):
//! its limits, its grants and its policy. A component can never grant itself anything;
//! only this file can.
//!
//! Parsed strictly: an unknown key, a bad unit, a missing granted directory or a
//! malformed host pattern is an error naming the file, the line and the problem, and
//! the component is not served.
//!
//! ```toml
//! sha256 = "sha256:…"      # optional pin: bytes with another digest are refused
//!
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
//! storage = ["notes"]      # wasi:keyvalue buckets private to this component, or:
//! # [grants.storage]
//! # buckets   = ["notes"]
//! # shared    = ["team"]     # the same bucket for every component whose manifest names it
//! # max_bytes = "64 MiB"     # quota of the component (keys and values), the default
//! # max_keys  = 100_000
//! # max_value = "1 MiB"
//!
//! [policy]                 # every tool of the component
//! requires_approval = false
//! risk = "low"             # low | medium (the default) | high | critical
//! read_only = true         # hints, shown to clients as MCP tool annotations:
//! open_world = false       # read_only, destructive, idempotent, open_world
//!
//! [tools.get-weather]      # settings of one tool, over the component's
//! description = "Current weather for a city, in metric units."
//! [tools.get-weather.limits]
//! timeout = "10s"
//! [tools.get-weather.policy]
//! open_world = true
//! ```

mod limits;

pub(crate) use limits::{RawLimits, check_timeout, size_key, timeout_key};

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{LoadError, LoadErrorKind};

use crate::names;
use crate::sandbox::{FileGrant, Grants, HostPattern};
use crate::storage::{Quota, StorageGrant, is_bucket_name};
use crate::tool::{Ceilings, Limits};
use crate::tool::{Risk, ToolHints, ToolPolicy};
use crate::trust::Sha256;
use crate::units::{Problem, parse_size};

/// What a manifest decides for its component.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// Per-call limits: the host's defaults with the manifest's `[limits]` over them.
    pub limits: Limits,
    /// What the guest may reach; nothing unless the manifest grants it.
    pub grants: Grants,
    /// The operator's policy for every tool of the component (`[policy]`).
    pub policy: ToolPolicy,
    /// Settings of single tools (`[tools.NAME]`), over the component's.
    pub tools: BTreeMap<String, ToolManifest>,
    /// The digest the component's bytes must have (`sha256 = "…"`), when pinned.
    pub sha256: Option<Sha256>,
}

/// What a manifest decides for one tool (`[tools.NAME]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolManifest {
    /// A description over the component's own.
    pub description: Option<String>,
    /// Its per-call limits: `[tools.NAME.limits]` over the component's.
    pub limits: Limits,
    /// Its policy: `[tools.NAME.policy]` over the component's.
    pub policy: ToolPolicy,
}

impl Manifest {
    /// The decisions for a component without a manifest: host defaults, nothing
    /// granted.
    pub fn default_for(defaults: Limits) -> Manifest {
        Manifest {
            limits: defaults,
            grants: Grants::default(),
            policy: ToolPolicy::default(),
            tools: BTreeMap::new(),
            sha256: None,
        }
    }

    /// The limits of tool `name`.
    pub fn limits_of(&self, name: &str) -> Limits {
        self.tools.get(name).map_or(self.limits, |tool| tool.limits)
    }

    /// The policy of tool `name`.
    pub fn policy_of(&self, name: &str) -> ToolPolicy {
        self.tools.get(name).map_or(self.policy, |tool| tool.policy)
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
    sha256: Option<Spanned<String>>,
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
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    policy: RawPolicy,
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
    storage: Option<Spanned<RawStorage>>,
}

/// `[grants] storage`: a list of private buckets, or the whole table.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawStorage {
    Buckets(Vec<String>),
    Table(RawStorageTable),
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawStorageTable {
    #[serde(default)]
    buckets: Vec<String>,
    #[serde(default)]
    shared: Vec<String>,
    max_bytes: Option<String>,
    max_keys: Option<u64>,
    max_value: Option<String>,
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

/// `[policy]` and `[tools.NAME.policy]`: absent keys keep what is above them.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPolicy {
    requires_approval: Option<bool>,
    risk: Option<Risk>,
    read_only: Option<bool>,
    destructive: Option<bool>,
    idempotent: Option<bool>,
    open_world: Option<bool>,
}

impl RawPolicy {
    pub(crate) fn over(self, base: ToolPolicy) -> ToolPolicy {
        ToolPolicy {
            requires_approval: self.requires_approval.unwrap_or(base.requires_approval),
            risk: self.risk.unwrap_or(base.risk),
            hints: base.hints.overridden_by(ToolHints {
                read_only: self.read_only,
                destructive: self.destructive,
                idempotent: self.idempotent,
                open_world: self.open_world,
            }),
        }
    }
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
        files: file_grants(base, raw.grants.files)?,
        network: network_grants(raw.grants.network)?.into(),
        env: env_grants(path, raw.grants.env)?,
        config: config_grants(raw.grants.config),
        storage: storage_grant(path, raw.grants.storage)?,
    };
    let policy = raw.policy.over(ToolPolicy::default());
    let mut tools = BTreeMap::new();
    for (name, tool) in raw.tools {
        let span = tool.span();
        names::validate_tool(&name).map_err(|problem| Problem::at(span, format!("[tools.{name}]: {problem}")))?;
        let tool = tool.into_inner();
        let settings = ToolManifest {
            description: tool.description,
            limits: tool.limits.resolve(limits, ceilings)?,
            policy: tool.policy.over(policy),
        };
        tools.insert(name, settings);
    }
    let sha256 = raw
        .sha256
        .map(|pin| {
            Sha256::parse(pin.get_ref()).map_err(|problem| Problem::at(pin.span(), format!("`sha256`: {problem}")))
        })
        .transpose()?;
    Ok(Manifest { limits, grants, policy, tools, sha256 })
}

fn file_grants(base: &Path, raw: Vec<Spanned<RawFileGrant>>) -> Result<Vec<FileGrant>, Problem> {
    let mut grants: Vec<(FileGrant, Range<usize>)> = Vec::with_capacity(raw.len());
    for grant in raw {
        let span = grant.span();
        let grant = file_grant(base, grant.into_inner()).map_err(|message| Problem::at(span.clone(), message))?;
        // The same directory however written (`/data`, `/data/`, `//data`).
        let same_directory = |(existing, _): &&(FileGrant, Range<usize>)| {
            Path::new(&existing.guest).components().eq(Path::new(&grant.guest).components())
        };
        if let Some((_, first)) = grants.iter().find(same_directory) {
            let message = format!("guest path `{}` is granted twice", grant.guest);
            return Err(Problem::at(first.clone(), message));
        }
        grants.push((grant, span));
    }
    Ok(grants.into_iter().map(|(grant, _)| grant).collect())
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

/// The storage grant; the component's identity (`namespace/file`) comes from where its
/// manifest lies, so that every version of the file keeps the same data.
fn storage_grant(path: &Path, raw: Option<Spanned<RawStorage>>) -> Result<StorageGrant, Problem> {
    let Some(raw) = raw else { return Ok(StorageGrant::default()) };
    let span = raw.span();
    let at = |message: String| Problem::at(span.clone(), message);
    let table = match raw.into_inner() {
        RawStorage::Buckets(buckets) => RawStorageTable { buckets, ..RawStorageTable::default() },
        RawStorage::Table(table) => table,
    };
    let namespace = path.parent().and_then(Path::file_name).and_then(|n| n.to_str());
    let file = path.file_stem().and_then(|n| n.to_str());
    let (Some(namespace), Some(file)) = (namespace, file) else {
        return Err(at(format!("storage needs the manifest in a namespace directory, not at {}", path.display())));
    };
    for name in table.buckets.iter().chain(&table.shared) {
        if !is_bucket_name(name) {
            return Err(at(format!("`{name}` is not a bucket name: [a-z0-9] then up to 63 of [a-z0-9_.-]")));
        }
    }
    if let Some(twice) = table.buckets.iter().find(|name| table.shared.contains(name)) {
        return Err(at(format!("bucket `{twice}` is granted both as private and as shared")));
    }
    let mut quota = Quota::default();
    if let Some(size) = &table.max_bytes {
        quota.max_bytes = parse_size(size).map_err(|e| at(format!("`max_bytes`: {e}")))?;
    }
    if let Some(keys) = table.max_keys {
        quota.max_keys = keys;
    }
    if let Some(size) = &table.max_value {
        quota.max_value = parse_size(size).map_err(|e| at(format!("`max_value`: {e}")))?;
    }
    Ok(StorageGrant { owner: format!("{namespace}/{file}"), buckets: table.buckets, shared: table.shared, quota })
}

fn file_grant(base: &Path, raw: RawFileGrant) -> Result<FileGrant, String> {
    let writable = match raw.mode.as_str() {
        "ro" => false,
        "rw" => true,
        other => return Err(format!("file grant mode `{other}` is neither \"ro\" nor \"rw\"")),
    };
    // Segments as written: `Path::components` drops a `.` inside a path.
    if !Path::new(&raw.guest).is_absolute() || raw.guest.split('/').any(|segment| matches!(segment, "." | "..")) {
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

        let (line, message) = problem("# pinned\nsha256 = \"sha256:abc\"\n");
        assert_eq!(line, 2);
        assert!(message.contains("`sha256`: `sha256:abc` is not a SHA-256 digest"), "{message}");
    }

    #[test]
    fn a_pin_reads_with_or_without_its_prefix() {
        let hex = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        let pinned = Some(Sha256::of(b"abc"));
        assert_eq!(parse_text(&format!("sha256 = \"sha256:{hex}\"\n")).unwrap().sha256, pinned);
        assert_eq!(parse_text(&format!("sha256 = \"{hex}\"\n[limits]\nfuel = 1\n")).unwrap().sha256, pinned);
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
    fn a_tool_overrides_the_component_limits_and_policy_key_by_key() {
        let manifest = parse_text(
            "[limits]\ntimeout = \"2s\"\nfuel = 10\n[policy]\nrisk = \"low\"\nread_only = true\nopen_world = false\n\
             [tools.wipe]\ndescription = \"Deletes.\"\n[tools.wipe.limits]\ntimeout = \"30s\"\n\
             [tools.wipe.policy]\nrisk = \"critical\"\nread_only = false\ndestructive = true\nrequires_approval = true\n",
        )
        .unwrap();
        assert_eq!(manifest.limits_of("read").timeout, Duration::from_secs(2));
        let wipe = &manifest.tools["wipe"];
        assert_eq!((wipe.limits.timeout, wipe.limits.fuel), (Duration::from_secs(30), 10));
        assert_eq!(wipe.description.as_deref(), Some("Deletes."));
        assert_eq!(
            manifest.policy_of("wipe"),
            ToolPolicy {
                requires_approval: true,
                risk: Risk::Critical,
                hints: ToolHints {
                    read_only: Some(false),
                    destructive: Some(true),
                    idempotent: None,
                    open_world: Some(false)
                },
            }
        );
        assert_eq!(manifest.policy_of("read").risk, Risk::Low);

        let (line, message) = problem("[tools.wipe.policy]\nrisk = \"severe\"\n");
        assert_eq!(line, 2);
        assert!(message.contains("unknown variant `severe`"), "{message}");
        let (_, message) = problem("[tools.wipe.limits]\nmemory = \"2 GiB\"\n");
        assert!(message.contains("over the host's ceiling"), "{message}");
    }

    #[test]
    fn config_values_become_strings() {
        let manifest = parse_text("[grants]\nconfig = { units = \"metric\", retries = 3, verbose = true }\n").unwrap();
        assert_eq!(manifest.grants.config.get("units").map(String::as_str), Some("metric"));
        assert_eq!(manifest.grants.config.get("retries").map(String::as_str), Some("3"));
        assert_eq!(manifest.grants.config.get("verbose").map(String::as_str), Some("true"));
    }
}
