//! `toolhost.toml`: the operator's host-wide configuration.
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
//! [[upstream]]                  # an MCP server's tools as a namespace (see crate::sources::upstream)
//! name = "everything"
//! command = "npx"               # a child process on stdio; or: url = "https://…/mcp"
//! args = ["-y", "@modelcontextprotocol/server-everything"]
//! env = ["PATH", "HOME"]        # its whole environment ("NAME", or "NAME=HOST_NAME")
//! timeout = "30s"
//! # headers = { Authorization = { env = "TOKEN", prefix = "Bearer " } }   (url only)
//!
//! [[token]]                     # HTTP bearer tokens, see config::tokens
//! agent = "planner"
//! sha256 = "…"                  # or: file = "…", env = "…"
//!
//! [http]                        # bounds of `serve --http`; defaults in serve::limits
//! max_connections = 4096
//! header_timeout = "30s"        # to send a request's headers (and a kept-alive connection's idle time)
//! max_header_size = "16 KiB"
//! body_timeout = "60s"          # to send a POST body
//! max_body_size = "4 MiB"
//! max_sessions = 1024
//! max_streams_per_session = 32  # GET event streams and POSTs being answered
//! session_idle_timeout = "10m"  # without a request or an open stream
//! approval_key = { env = "TOOLHOST_APPROVAL_KEY" }  # or { file = "…" }: the same on every replica
//! ```
//!
//! Parsed as strictly as manifests: an unknown key is an error naming file and line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::config::tokens::{RawToken, SecretSource, secret, tokens};
use crate::manifest::RawLimits;
use crate::oci::{Lock, OciComponent, OciReference, OciSettings};
use crate::policy::{Policy, PolicyRule};
use crate::registry::{DEFAULT_ROOT, Layer};
use crate::runtime::{MAX_INSTANCES, MIN_MAX_MEMORY};
use crate::serve::ApprovalKey;
use crate::serve::{HttpLimits, Tokens, bounds};
use crate::sources::{DEFAULT_UPSTREAM_LAYER, Secret, UpstreamServer, UpstreamTransport};
use crate::storage::StorageSetting;
use crate::tool::Limits;
use crate::tool::MAX_TIMEOUT;
use crate::trust::{Pin, SigningKeys};
use crate::units::{Problem, parse_duration, parse_size};
use crate::{CacheSetting, EngineSettings, ToolHostBuilder};

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
    /// Bearer tokens of the HTTP server and the agents they stand for.
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
    layer: Vec<Spanned<RawLayer>>,
    #[serde(default)]
    defaults: RawLimits,
    #[serde(default)]
    engine: RawEngine,
    #[serde(default)]
    cache: RawCache,
    #[serde(default)]
    audit: RawAudit,
    #[serde(default)]
    policy: Vec<PolicyRule>,
    #[serde(default)]
    token: Vec<Spanned<RawToken>>,
    #[serde(default)]
    http: RawHttp,
    storage: Option<Spanned<RawStorage>>,
    #[serde(default)]
    upstream: Vec<Spanned<RawUpstream>>,
    #[serde(default)]
    signatures: RawSignatures,
    #[serde(default)]
    oci: RawOci,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawOci {
    #[serde(default)]
    plain_http: Vec<String>,
    store: Option<PathBuf>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSignatures {
    #[serde(default)]
    keys: Vec<Spanned<PathBuf>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawUpstream {
    name: String,
    layer: Option<String>,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<Vec<String>>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    headers: Option<std::collections::BTreeMap<String, RawHeader>>,
    timeout: Option<String>,
    max_response: Option<String>,
}

/// A header value: the value itself, or where to read it.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawHeader {
    Plain(String),
    From {
        env: Option<String>,
        file: Option<PathBuf>,
        #[serde(default)]
        prefix: String,
    },
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawStorage {
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

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawHttp {
    max_connections: Option<Spanned<u64>>,
    header_timeout: Option<Spanned<String>>,
    max_header_size: Option<Spanned<String>>,
    body_timeout: Option<Spanned<String>>,
    max_body_size: Option<Spanned<String>>,
    max_sessions: Option<Spanned<u64>>,
    max_streams_per_session: Option<Spanned<u64>>,
    session_idle_timeout: Option<Spanned<String>>,
    approval_key: Option<Spanned<RawSecret>>,
}

/// A secret named by where it is, never written in the file itself.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSecret {
    env: Option<String>,
    file: Option<PathBuf>,
}

impl RawSecret {
    /// Where the secret is, if exactly one place is named.
    fn source(&self) -> Option<SecretSource<'_>> {
        match (&self.env, &self.file) {
            (Some(variable), None) => Some(SecretSource::Env(variable)),
            (None, Some(file)) => Some(SecretSource::File(file)),
            _ => None,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawAudit {
    jsonl: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayer {
    name: String,
    root: PathBuf,
    #[serde(default)]
    stdlib: bool,
    /// Namespace, then file name, to an `oci://` reference.
    #[serde(default)]
    oci: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawEngine {
    max_memory: Option<Spanned<String>>,
    max_instances: Option<Spanned<u32>>,
    tiering: Option<Spanned<String>>,
    drop_idle_code_after: Option<Spanned<String>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawCache {
    dir: Option<PathBuf>,
    enabled: Option<bool>,
    precompiled: Option<PathBuf>,
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
    let engine = engine_settings(raw.engine)?;
    let defaults = raw.defaults.resolve(Limits::default(), engine.ceilings())?;
    let mut layers: Vec<Layer> = Vec::new();
    let mut oci = Vec::new();
    for layer in raw.layer {
        let span = layer.span();
        let layer = layer.into_inner();
        if layers.iter().any(|l| l.name == layer.name) {
            return Err(Problem::at(span, format!("layer `{}` is defined twice", layer.name)));
        }
        oci.extend(oci_components(&layer.name, layer.oci, &span)?);
        layers.push(Layer { name: layer.name, root: Some(base.join(layer.root)), stdlib: layer.stdlib });
    }
    let cache = match (raw.cache.enabled, raw.cache.dir) {
        (Some(false), _) => CacheSetting::Disabled,
        (_, Some(dir)) => CacheSetting::Dir(base.join(dir)),
        _ => CacheSetting::Default,
    };
    let precompiled = raw.cache.precompiled.map(|dir| base.join(dir));
    let audit_jsonl = raw.audit.jsonl.map(|path| base.join(path));
    let tokens = tokens(base, raw.token)?;
    let approval_key = raw.http.approval_key.take().map(|secret| approval_key(base, secret)).transpose()?;
    let http = http_limits(raw.http)?;
    let storage = storage_setting(base, raw.storage)?;
    let upstreams = upstreams(base, &layers, raw.upstream)?;
    let signing_keys = signing_keys(base, raw.signatures)?;
    let oci_settings =
        OciSettings { plain_http: raw.oci.plain_http, store: raw.oci.store.map(|store| base.join(store)) };
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
        policy: Policy::new(raw.policy),
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
    })
}

/// `[layer.oci.NAMESPACE]` tables: a component per file name, by reference.
fn oci_components(
    layer: &str,
    raw: BTreeMap<String, BTreeMap<String, String>>,
    span: &std::ops::Range<usize>,
) -> Result<Vec<OciComponent>, Problem> {
    let mut components = Vec::new();
    for (namespace, entries) in raw {
        let at =
            |problem: String| Problem::at(span.clone(), format!("layer `{layer}`, [layer.oci.{namespace}]: {problem}"));
        crate::names::validate_namespace(&namespace).map_err(&at)?;
        for (name, reference) in entries {
            crate::names::validate_namespace(&name).map_err(|problem| at(format!("`{name}`: {problem}")))?;
            let reference = OciReference::parse(&reference).map_err(|problem| at(format!("`{name}`: {problem}")))?;
            components.push(OciComponent { layer: layer.to_owned(), namespace: namespace.clone(), name, reference });
        }
    }
    Ok(components)
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
                let pin = Pin { sha256: locked.sha256, by: lock_path.clone() };
                Some((component.path(root), pin))
            })
            .collect()
    }
}

/// The public keys of `[signatures]`, read now: a key that cannot be used stops the
/// host from starting rather than refusing every component later.
fn signing_keys(base: &Path, raw: RawSignatures) -> Result<SigningKeys, Problem> {
    let mut keys = SigningKeys::none();
    for key in raw.keys {
        let span = key.span();
        keys.add(base.join(key.into_inner())).map_err(|e| Problem::at(span, format!("[signatures] {e}")))?;
    }
    Ok(keys)
}

fn upstreams(base: &Path, layers: &[Layer], raw: Vec<Spanned<RawUpstream>>) -> Result<Vec<UpstreamServer>, Problem> {
    let mut servers: Vec<UpstreamServer> = Vec::with_capacity(raw.len());
    for entry in raw {
        let span = entry.span();
        let raw = entry.into_inner();
        let at = |problem: String| Problem::at(span.clone(), format!("upstream `{}`: {problem}", raw.name));
        crate::names::validate_namespace(&raw.name).map_err(|problem| Problem::at(span.clone(), problem))?;
        if servers.iter().any(|server| server.name == raw.name) {
            return Err(at("defined twice".to_owned()));
        }
        let layer = match raw.layer {
            None => DEFAULT_UPSTREAM_LAYER.to_owned(),
            Some(layer) if layers.iter().any(|l| l.name == layer) => layer,
            Some(layer) => return Err(at(format!("no [[layer]] is named `{layer}`"))),
        };
        let transport = match (raw.command, raw.url) {
            (Some(program), None) => {
                if raw.headers.is_some() {
                    return Err(at("`headers` go with `url`, not `command`".to_owned()));
                }
                let mut env = Vec::new();
                for entry in raw.env.unwrap_or_default() {
                    let (child, host) = entry.split_once('=').unwrap_or((&entry, &entry));
                    let valid =
                        |name: &str| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    if !valid(child) || !valid(host) {
                        return Err(at(format!("`env` entry `{entry}` is not `NAME` or `NAME=HOST_NAME`")));
                    }
                    env.push((child.to_owned(), host.to_owned()));
                }
                UpstreamTransport::Command {
                    program,
                    args: raw.args.unwrap_or_default(),
                    env,
                    cwd: raw.cwd.map(|cwd| base.join(cwd)),
                }
            }
            (None, Some(url)) => {
                if raw.args.is_some() || raw.env.is_some() || raw.cwd.is_some() {
                    return Err(at("`args`, `env` and `cwd` go with `command`, not `url`".to_owned()));
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) || url::Url::parse(&url).is_err() {
                    return Err(at(format!("`url` must be an http:// or https:// URL, not `{url}`")));
                }
                let mut headers = Vec::new();
                for (name, value) in raw.headers.unwrap_or_default() {
                    if http::HeaderName::try_from(name.as_str()).is_err() {
                        return Err(at(format!("`{name}` is not a valid header name")));
                    }
                    let secret = match value {
                        RawHeader::Plain(value) => Secret::Plain(value),
                        RawHeader::From { env: Some(name), file: None, prefix } => Secret::Env { name, prefix },
                        RawHeader::From { env: None, file: Some(file), prefix } => {
                            Secret::File { path: base.join(file), prefix }
                        }
                        RawHeader::From { .. } => {
                            return Err(at(format!("header `{name}` takes a value, or `env` or `file` (one of them)")));
                        }
                    };
                    headers.push((name, secret));
                }
                UpstreamTransport::Http { url, headers }
            }
            _ => {
                return Err(at("takes `command` (a child process) or `url` (Streamable HTTP), one of them".to_owned()));
            }
        };
        let timeout = match raw.timeout {
            Some(text) => {
                let timeout = parse_duration(&text).map_err(|e| at(format!("`timeout`: {e}")))?;
                if timeout.is_zero() || timeout > MAX_TIMEOUT {
                    return Err(at(format!("`timeout` must be more than 0 and at most {} s", MAX_TIMEOUT.as_secs())));
                }
                Some(timeout)
            }
            None => None,
        };
        let max_response = match raw.max_response {
            Some(text) => Some(parse_size(&text).map_err(|e| at(format!("`max_response`: {e}")))?),
            None => None,
        };
        servers.push(UpstreamServer { name: raw.name, layer, transport, timeout, max_response });
    }
    Ok(servers)
}

fn storage_setting(base: &Path, raw: Option<Spanned<RawStorage>>) -> Result<StorageSetting, Problem> {
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

/// `[http] approval_key = { env = "NAME" }` or `{ file = "PATH" }` (relative to the
/// configuration). Errors never contain the secret.
fn approval_key(base: &Path, raw: Spanned<RawSecret>) -> Result<ApprovalKey, Problem> {
    let span = raw.span();
    let at = |message: String| Problem::at(span.clone(), format!("[http] approval_key: {message}"));
    let raw = raw.into_inner();
    let source = raw.source().ok_or_else(|| at("give exactly one of `env` or `file`".into()))?;
    ApprovalKey::from_secret(&secret(base, source, "approval key").map_err(at)?).map_err(at)
}

fn http_limits(raw: RawHttp) -> Result<HttpLimits, Problem> {
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

fn engine_settings(raw: RawEngine) -> Result<EngineSettings, Problem> {
    let mut engine = EngineSettings::default();
    if let Some(max_memory) = raw.max_memory {
        let span = max_memory.span();
        engine.max_memory =
            parse_size(max_memory.get_ref()).map_err(|e| Problem::at(span.clone(), format!("`max_memory`: {e}")))?;
        if engine.max_memory < MIN_MAX_MEMORY {
            return Err(Problem::at(span, "`max_memory` must be at least 64 KiB (one WebAssembly page)"));
        }
    }
    if let Some(max_instances) = raw.max_instances {
        if !(1..=MAX_INSTANCES).contains(max_instances.get_ref()) {
            return Err(Problem::at(
                max_instances.span(),
                format!("`max_instances` must be between 1 and {MAX_INSTANCES}"),
            ));
        }
        engine.max_instances = max_instances.into_inner();
    }
    if let Some(tiering) = raw.tiering {
        engine.tiering =
            tiering.get_ref().parse().map_err(|e| Problem::at(tiering.span(), format!("`tiering`: {e}")))?;
    }
    if let Some(after) = raw.drop_idle_code_after {
        engine.drop_idle_code_after = parse_duration(after.get_ref())
            .map_err(|e| Problem::at(after.span(), format!("`drop_idle_code_after`: {e}")))?;
    }
    Ok(engine)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn layers_resolve_relative_to_the_file_in_order() {
        let config = HostConfig::parse(
            Path::new("/etc/toolhost/toolhost.toml"),
            "[[layer]]\nname = \"project\"\nroot = \"tools\"\n\n[[layer]]\nname = \"stdlib\"\nroot = \"/usr/share/stdlib\"\nstdlib = true\n\n[defaults]\ntimeout = \"2s\"\n\n[engine]\nmax_memory = \"512 MiB\"\n\n[cache]\nenabled = false\n",
        )
        .unwrap();
        assert_eq!(
            config.layers,
            vec![Layer::directory("project", "/etc/toolhost/tools"), Layer::stdlib("/usr/share/stdlib".into()),]
        );
        assert_eq!(config.defaults.timeout, Duration::from_secs(2));
        assert_eq!(config.engine.max_memory, 512 << 20);
        assert_eq!(config.cache, CacheSetting::Disabled);
    }

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

    #[test]
    fn errors_name_file_and_line() {
        let error =
            HostConfig::parse(Path::new("t.toml"), "[engine]\nmax_memory = \"1 GiB\"\nthreads = 4\n").unwrap_err();
        assert_eq!(error.line, 3);
        assert!(error.problem.contains("unknown field `threads`"), "{error}");
        let error = HostConfig::parse(Path::new("t.toml"), "[engine]\nmax_memory = \"0\"\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.problem.contains("at least 64 KiB"), "{error}");
        let error = HostConfig::parse(Path::new("t.toml"), "[defaults]\nmemory = \"2 GiB\"\n").unwrap_err();
        assert!(error.problem.contains("over the host's ceiling"), "{error}");
        let error = HostConfig::parse(
            Path::new("t.toml"),
            "[[layer]]\nname = \"a\"\nroot = \"x\"\n[[layer]]\nname = \"a\"\nroot = \"y\"\n",
        )
        .unwrap_err();
        assert_eq!(error.line, 4, "the line of the second `[[layer]]`");
        assert!(error.to_string().starts_with("t.toml, line 4: layer `a` is defined twice"), "{error}");
    }

    #[test]
    fn tokens_come_as_digests_files_or_variables_and_never_show_in_errors() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("ci.token"), "  from-a-file\n").unwrap();
        let digest: String = crate::serve::digest("by-digest").iter().map(|b| format!("{b:02x}")).collect();
        let text = format!(
            "[[token]]\nagent = \"planner\"\nsha256 = \"{digest}\"\n[[token]]\nagent = \"ci\"\nfile = \"ci.token\"\n"
        );
        let config = HostConfig::parse(&dir.path().join("toolhost.toml"), &text).unwrap();
        assert_eq!(config.tokens.agent_for("by-digest"), Some("planner"));
        assert_eq!(config.tokens.agent_for("from-a-file"), Some("ci"));
        assert_eq!(config.tokens.agent_for(&digest), None, "the digest is no token");

        let both = "[[token]]\nagent = \"a\"\nsha256 = \"00\"\nenv = \"X\"\n";
        let error = HostConfig::parse(Path::new("t.toml"), both).unwrap_err();
        assert!(error.problem.contains("exactly one of"), "{error}");
        let unset = "[[token]]\nagent = \"a\"\nenv = \"TOOLHOST_TEST_SURELY_UNSET\"\n";
        let error = HostConfig::parse(Path::new("t.toml"), unset).unwrap_err();
        assert!(error.problem.contains("is not set"), "{error}");
        let short = "[[token]]\nagent = \"a\"\nsha256 = \"secret-looking\"\n";
        let error = HostConfig::parse(Path::new("t.toml"), short).unwrap_err();
        assert!(error.problem.contains("64 hex digits") && !error.problem.contains("secret-looking"), "{error}");
    }

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

    #[test]
    fn max_instances_is_bounded_both_ways() {
        for text in ["0", "4097", "4294967295"] {
            let error =
                HostConfig::parse(Path::new("t.toml"), &format!("[engine]\nmax_instances = {text}\n")).unwrap_err();
            assert_eq!(error.line, 2, "{text}");
            assert!(error.problem.contains("between 1 and 4096"), "{text}: {error}");
        }
        let config = HostConfig::parse(Path::new("t.toml"), "[engine]\nmax_instances = 4096\n").unwrap();
        assert_eq!(config.engine.max_instances, 4096);
    }
}
