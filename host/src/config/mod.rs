//! `toolhost.toml`, the operator's host-wide configuration: one file per section, and the host it builds.
//!
//! ```toml
//! [[layer]]                     # highest precedence first
//! name = "project"
//! root = "tools"                # relative to this file
//!
//! [[layer]]
//! name = "org"
//! root = "/srv/toolhost/org"       # `toolhost pull` writes OCI components here:
//! [layer.oci.weather]              # namespace `weather` (see crate::oci)
//! forecast = "oci://registry.example.com/tools/forecast:1.2"
//!
//! [[layer]]
//! name = "stdlib"
//! root = "/usr/share/toolhost/stdlib"
//! stdlib = true                 # its tools are also callable by bare name
//!
//! [defaults]                    # default per-call limits; same keys as a manifest's [limits]
//! timeout = "5s"
//!
//! [engine]
//! max_memory = "1 GiB"          # ceiling for any manifest's `memory`
//! max_instances = 256           # instances alive at once
//! tiering = "tiered"            # Winch first, Cranelift in the background; or "optimized"
//! drop_idle_code_after = "60s"  # native code no call used this long leaves memory
//!
//! [cache]
//! dir = "/var/cache/toolhost"   # or: enabled = false
//! precompiled = "/precompiled"  # read-only code from `toolhost compile`, looked up first
//!
//! [oci]
//! plain_http = ["127.0.0.1:5000"]  # registries reached without TLS
//! store = "/var/lib/toolhost/oci"  # pulled blobs (default: <data dir>/oci)
//!
//! [signatures]                # every component must carry a cosign signature by one of
//! keys = ["keys/cosign.pub"]    # these keys (`<name>.wasm.sig`); relative to this file
//!
//! [audit]
//! jsonl = "audit.jsonl"         # one JSON line per call attempt; relative to this file
//!
//! [storage]                     # the buckets of wasi:keyvalue (docs/storage.md)
//! path = "state.sqlite3"        # an SQLite file, relative to this file; the default is
//!                               # storage.sqlite3 in the user's data directory; or:
//! # url = "redis://127.0.0.1:6379/0"   # shared by every host pointed at it (no TLS); with a
//! #                                   # password, { env = "REDIS_URL" } or { file = "…" }
//!
//! [[policy]]                    # see crate::policy; no rules: everyone may call everything
//! agent = "planner"
//! allow = ["math/*", "*/read"]
//! deny = ["fs/write"]
//!
//! [[quota]]                     # see crate::policy::AgentQuota
//! agent = "ci"
//! calls_per_minute = 120
//!
//! [[tool]]                      # see crate::policy::ToolRule: over what the source says
//! match = "everything/*"
//! risk = "high"
//!
//! [[upstream]]                  # an MCP server's tools as a namespace (see docs/upstream.md)
//! name = "everything"
//! command = "npx"               # a child process on stdio; or: url = "https://…/mcp"
//! args = ["-y", "@modelcontextprotocol/server-everything"]
//! env = ["PATH", "HOME"]        # its whole environment ("NAME", or "NAME=HOST_NAME")
//! timeout = "30s"
//! # headers = { Authorization = { env = "TOKEN", prefix = "Bearer " } }   (url only)
//!
//! [[token]]                     # HTTP bearer tokens, see tokens.rs
//! agent = "planner"
//! sha256 = "…"                  # or: file = "…", env = "…"
//!
//! [oauth]                       # OAuth access tokens too (see oauth.rs)
//! issuer = "https://auth.example.com"
//! resource = "https://tools.example.com/mcp"
//!
//! [http]                        # bounds of `serve --http`; defaults in serve/http/limits.rs
//! max_connections = 4096
//! header_timeout = "30s"        # to send a request's headers (and a kept-alive connection's idle time)
//! max_header_size = "16 KiB"
//! body_timeout = "60s"          # to send a POST body
//! max_body_size = "4 MiB"
//! max_sessions = 1024
//! max_streams_per_session = 32  # GET event streams and POSTs being answered
//! session_idle_timeout = "10m"  # without a request or an open stream
//! approval_key = { env = "TOOLHOST_APPROVAL_KEY" }  # or { file = "…" }: the same on every replica
//!
//! [console]                     # the operator's console at /console (docs/console.md)
//! enabled = true
//! approve_via = "both"          # approvals at the console too; "client" (default) or "console"
//! [[console.operator]]          # a person's token, never an agent's
//! name = "alice"
//! sha256 = "…"                  # or: file = "…", env = "…"
//! ```
//!
//! Parsed as strictly as manifests: an unknown key is an error naming file and line.

mod console;
mod engine;
mod http;
mod layers;
mod oauth;
mod signatures;
mod storage;
mod tokens;
mod upstream;
mod watch;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::host::ToolHostBuilder;
use crate::manifest::RawLimits;
use crate::oci::{Lock, OciComponent, OciSettings};
use crate::policy::{AgentQuota, Policy, PolicyRule, ToolRule};
use crate::registry::{DEFAULT_ROOT, Layer};
use crate::runtime::{CacheSetting, EngineSettings};
use crate::serve::{ApprovalKey, ConsoleOptions, HttpLimits, Tokens};
use crate::sources::UpstreamServer;
use crate::storage::StorageSetting;
use crate::tool::Limits;
use crate::trust::{Pin, SigningKeys};
use crate::units::Problem;

/// The file read when none is named: `toolhost.toml` in the working directory.
pub const DEFAULT_CONFIG: &str = "toolhost.toml";

/// The host configuration, resolved (paths absolute, sizes in bytes). The default is
/// what a host without a configuration file runs with.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostConfig {
    /// The layers, highest precedence first.
    pub layers: Vec<Layer>,
    /// Limits of components whose manifest does not set them.
    pub defaults: Limits,
    /// Engine ceilings and pool size.
    pub engine: EngineSettings,
    /// Where compiled components are cached.
    pub cache: CacheSetting,
    /// Code `toolhost compile` made, read before the cache (`[cache] precompiled`).
    pub precompiled: Option<PathBuf>,
    /// Who may call what.
    pub policy: Policy,
    /// A JSON line per call attempt goes here.
    pub audit_jsonl: Option<PathBuf>,
    /// Bearer tokens of the HTTP server and the agents they stand for, and the OAuth
    /// access tokens it takes.
    pub tokens: Tokens,
    /// What one client may take of the HTTP server.
    pub http: HttpLimits,
    /// The key sealing approval questions of `serve --http` (`[http] approval_key`),
    /// shared by replicas; `None`: each process draws its own.
    pub approval_key: Option<ApprovalKey>,
    /// Where the buckets of `wasi:keyvalue` live.
    pub storage: StorageSetting,
    /// Upstream MCP servers whose tools are served.
    pub upstreams: Vec<UpstreamServer>,
    /// Keys one of which must have signed every component; none: no signature needed.
    pub signing_keys: SigningKeys,
    /// Components named by OCI reference (`[layer.oci.NAMESPACE]`), for `toolhost pull`.
    pub oci: Vec<OciComponent>,
    /// How registries are reached and where pulled blobs are kept (`[oci]`).
    pub oci_settings: OciSettings,
    /// `toolhost.lock` beside this file, when there is a file.
    pub lock_path: Option<PathBuf>,
    /// What `toolhost.lock` pins (read when OCI components are declared).
    pub lock: Lock,
    /// The operator's console of `serve --http` (`[console]`), when enabled.
    pub console: Option<ConsoleOptions>,
}

/// A problem in `toolhost.toml`, with the file and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}, line {line}: {problem}", .path.display())]
pub struct ConfigError {
    /// The configuration file.
    pub path: PathBuf,
    /// 1-based line of the problem.
    pub line: usize,
    /// What is wrong.
    pub problem: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    layer: Vec<Spanned<layers::RawLayer>>,
    #[serde(default)]
    defaults: RawLimits,
    #[serde(default)]
    engine: engine::RawEngine,
    #[serde(default)]
    cache: engine::RawCache,
    #[serde(default)]
    audit: RawAudit,
    #[serde(default)]
    policy: Vec<PolicyRule>,
    #[serde(default)]
    tool: Vec<ToolRule>,
    #[serde(default)]
    quota: Vec<AgentQuota>,
    #[serde(default)]
    token: Vec<Spanned<tokens::RawToken>>,
    #[serde(default)]
    http: http::RawHttp,
    oauth: Option<Spanned<oauth::RawOAuth>>,
    storage: Option<Spanned<storage::RawStorage>>,
    #[serde(default)]
    upstream: Vec<Spanned<upstream::RawUpstream>>,
    #[serde(default)]
    signatures: signatures::RawSignatures,
    #[serde(default)]
    oci: layers::RawOci,
    console: Option<Spanned<console::RawConsole>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    jsonl: Option<PathBuf>,
}

impl HostConfig {
    /// Reads and checks `toolhost.toml` at `path`.
    pub fn load(path: &Path) -> Result<HostConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            path: path.to_owned(),
            line: 1,
            problem: format!("cannot read: {e}"),
        })?;
        HostConfig::parse(path, &text)
    }

    /// Checks configuration text; `path` names the file in errors and anchors relative
    /// paths.
    pub fn parse(path: &Path, text: &str) -> Result<HostConfig, ConfigError> {
        check(path, text).map_err(|problem| ConfigError {
            path: path.to_owned(),
            line: problem.line(text),
            problem: problem.message,
        })
    }

    /// The configuration at `explicit`, else `./toolhost.toml` when it exists, else none.
    pub fn find(explicit: Option<&Path>) -> Result<Option<HostConfig>, ConfigError> {
        HostConfig::locate(explicit).map(|path| HostConfig::load(&path)).transpose()
    }

    /// The file [`HostConfig::find`] reads: `explicit`, else `./toolhost.toml` when it
    /// exists.
    pub fn locate(explicit: Option<&Path>) -> Option<PathBuf> {
        let implicit = Path::new(DEFAULT_CONFIG);
        match explicit {
            Some(path) => Some(path.to_owned()),
            None => implicit.is_file().then(|| implicit.to_owned()),
        }
    }

    /// The layers to serve when roots are also given by hand (the command line): the
    /// `roots` replace the configured layers (named by [`Layer::for_root`]); with neither,
    /// [`DEFAULT_ROOT`] is the project layer. A `stdlib` root replaces any configured
    /// stdlib layer, below all others.
    pub fn layers_with(&self, roots: &[PathBuf], stdlib: Option<&Path>) -> Vec<Layer> {
        let mut layers = if !roots.is_empty() {
            roots.iter().enumerate().map(|(i, root)| Layer::for_root(i, root.clone())).collect()
        } else if self.layers.is_empty() {
            vec![Layer::for_root(0, PathBuf::from(DEFAULT_ROOT))]
        } else {
            self.layers.clone()
        };
        if let Some(stdlib) = stdlib {
            layers.retain(|layer| !layer.stdlib);
            layers.push(Layer::stdlib(stdlib.to_owned()));
        } else if !layers.iter().any(|layer| layer.stdlib)
            && let Some(installed) = crate::paths::stdlib_dir().filter(|dir| dir.is_dir())
        {
            // Where `cargo xtask stdlib` installs: the stdlib is there without a word.
            layers.push(Layer::stdlib(installed));
        }
        layers
    }

    /// A builder with this configuration applied.
    pub fn builder(&self) -> ToolHostBuilder {
        let mut builder = ToolHostBuilder::default()
            .default_limits(self.defaults)
            .engine_settings(self.engine.clone())
            .compile_cache(self.cache.clone())
            .policy(self.policy.clone())
            .storage(self.storage.clone())
            .signing_keys(self.signing_keys.clone());
        if let Some(path) = &self.audit_jsonl {
            builder = builder.audit_jsonl(path);
        }
        if let Some(dir) = &self.precompiled {
            builder = builder.precompiled_cache(dir);
        }
        for layer in &self.layers {
            builder = builder.layer(layer.clone());
        }
        for server in &self.upstreams {
            builder = builder.upstream(server.clone());
        }
        for (file, pin) in self.oci_pins() {
            builder = builder.pin(file, pin);
        }
        builder
    }
}

fn check(path: &Path, text: &str) -> Result<HostConfig, Problem> {
    let mut raw: RawConfig = toml::from_str(text).map_err(|e| Problem::from_toml(&e))?;
    let base = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let engine = engine::engine_settings(raw.engine)?;
    let defaults = raw.defaults.resolve(Limits::default(), engine.ceilings())?;
    let (layers, oci) = layers::layers(base, raw.layer)?;
    let cache = engine::cache_setting(base, &raw.cache);
    let precompiled = raw.cache.precompiled.map(|dir| base.join(dir));
    let audit_jsonl = raw.audit.jsonl.map(|path| base.join(path));
    let mut tokens = tokens::tokens(base, raw.token)?;
    if let Some(raw) = raw.oauth {
        tokens = tokens.with_oauth(oauth::oauth(raw.span(), raw.into_inner())?);
    }
    let console = console::console(base, raw.console, &tokens)?;
    let approval_key = raw.http.approval_key.take().map(|secret| http::approval_key(base, secret)).transpose()?;
    let http = http::http_limits(raw.http)?;
    let storage = storage::storage_setting(base, raw.storage)?;
    let upstreams = upstream::upstreams(base, &layers, engine.ceilings(), raw.upstream)?;
    let signing_keys = signatures::signing_keys(base, raw.signatures)?;
    let oci_settings = layers::oci_settings(base, raw.oci);
    let lock_path = Lock::path_for(path);
    let lock = if oci.is_empty() {
        Lock::default()
    } else {
        Lock::read(&lock_path).map_err(|e| Problem::at(0..0, e.to_string()))?
    };
    Ok(HostConfig {
        layers,
        defaults,
        engine,
        cache,
        precompiled,
        policy: Policy::new(raw.policy).with_tool_rules(raw.tool).with_quotas(raw.quota),
        audit_jsonl,
        tokens,
        http,
        approval_key,
        storage,
        upstreams,
        signing_keys,
        oci,
        oci_settings,
        lock_path: Some(lock_path),
        lock,
        console,
    })
}

impl HostConfig {
    /// The pins `toolhost.lock` puts on the files its declared OCI components are served
    /// from (entries of components no longer declared pin nothing).
    pub fn oci_pins(&self) -> Vec<(PathBuf, Pin)> {
        let Some(lock_path) = &self.lock_path else { return Vec::new() };
        self.oci
            .iter()
            .filter_map(|component| {
                let locked = self.lock.get(&component.layer, &component.full_name())?;
                let root = self.layers.iter().find(|layer| layer.name == component.layer)?.root.as_deref()?;
                let pin = Pin { sha256: locked.sha256, by: lock_path.clone(), signed_by: locked.signed_by.clone() };
                Some((component.path(root), pin))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
