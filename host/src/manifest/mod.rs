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
//! config  = { units = "metric", api_key = { env = "WEATHER_KEY" } }  # also wasi:config/store;
//!                          # a secret by where it is: { env = "VAR" } or { file = "path" }
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
//!
//! [[prompts]]              # prompts and resources offered beside the tools (offered.rs)
//! [[resources]]
//! ```

mod files;
mod grants;
mod limits;
mod offered;
mod wassette;

pub(crate) use limits::{RawLimits, check_timeout, duration_key, size_key, timeout_key};
pub use offered::Offered;
pub use wassette::{ImportedPolicy, MAX_POLICY_BYTES, import_wassette_policy};

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::error::{LoadError, LoadErrorKind};

use crate::names;
use crate::sandbox::Grants;
use crate::tool::{Ceilings, Limits};
use crate::tool::{Risk, ToolHints, ToolPolicy};
use crate::trust::Sha256;
use crate::units::Problem;

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
    /// Its prompts and resources (`[[prompts]]`, `[[resources]]`).
    pub offered: Offered,
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
            offered: Offered::default(),
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
        let text = std::fs::read_to_string(path).map_err(|e| LoadError::new(path, LoadErrorKind::Io(e.to_string())))?;
        Manifest::parse(path, &text, defaults, ceilings)
    }

    /// Checks manifest text; `path` names the file in errors and anchors relative paths.
    pub fn parse(path: &Path, text: &str, defaults: Limits, ceilings: Ceilings) -> Result<Manifest, LoadError> {
        check(path, text, defaults, ceilings).map_err(|problem| {
            let kind = LoadErrorKind::Manifest { line: problem.line(text), problem: problem.message };
            LoadError::new(path, kind)
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    sha256: Option<Spanned<String>>,
    #[serde(default)]
    limits: RawLimits,
    #[serde(default)]
    grants: grants::RawGrants,
    #[serde(default)]
    policy: RawPolicy,
    #[serde(default)]
    tools: BTreeMap<String, Spanned<RawTool>>,
    #[serde(default)]
    prompts: Vec<Spanned<offered::RawPrompt>>,
    #[serde(default)]
    resources: Vec<Spanned<offered::RawResource>>,
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

fn check(path: &Path, text: &str, defaults: Limits, ceilings: Ceilings) -> Result<Manifest, Problem> {
    let raw: RawManifest = toml::from_str(text).map_err(|e| Problem::from_toml(&e))?;
    let limits = raw.limits.resolve(defaults, ceilings)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let grants = grants::grants(path, base, raw.grants)?;
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
    let offered = offered::offered(base, raw.prompts, raw.resources)?;
    Ok(Manifest { limits, grants, policy, tools, sha256, offered })
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::time::Duration;

    const CEILINGS: Ceilings = Ceilings { memory: 1 << 30, timeout: Duration::from_secs(600) };

    fn parse_text(text: &str) -> Result<Manifest, LoadError> {
        Manifest::parse(Path::new("/tools/ns/tool.toml"), text, Limits::default(), CEILINGS)
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
}
