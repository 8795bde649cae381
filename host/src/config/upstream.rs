//! `[[upstream]]`: MCP servers whose tools are served as namespaces.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::manifest::{duration_key, size_key, timeout_key};
use crate::registry::Layer;
use crate::sources::{ChildSandbox, DEFAULT_UPSTREAM_LAYER, Secret, UpstreamServer, UpstreamTransport};
use crate::tool::Ceilings;
use crate::units::{Problem, Size};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawUpstream {
    name: String,
    layer: Option<String>,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<Vec<String>>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    headers: Option<BTreeMap<String, RawHeader>>,
    timeout: Option<Spanned<String>>,
    max_response: Option<Spanned<Size>>,
    connect_timeout: Option<Spanned<String>>,
    rename: Option<Spanned<BTreeMap<String, String>>>,
    sandbox: Option<RawSandbox>,
    unconfined: Option<bool>,
}

/// `[upstream.sandbox]`: what a stdio server is granted beyond the system's files.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSandbox {
    read: Option<Vec<PathBuf>>,
    write: Option<Vec<PathBuf>>,
    network: Option<bool>,
    memory: Option<Spanned<Size>>,
    processes: Option<u32>,
    open_files: Option<u64>,
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

/// `[[upstream]]` tables: each server's namespace (once), layer, transport and limits.
pub(super) fn upstreams(
    base: &Path,
    layers: &[Layer],
    ceilings: Ceilings,
    raw: Vec<Spanned<RawUpstream>>,
) -> Result<Vec<UpstreamServer>, Problem> {
    let mut servers: Vec<UpstreamServer> = Vec::with_capacity(raw.len());
    for entry in raw {
        let span = entry.span();
        let raw = entry.into_inner();
        let at = |problem: String| Problem::at(span.clone(), format!("upstream `{}`: {problem}", raw.name));
        crate::names::validate_namespace(&raw.name).map_err(|problem| Problem::at(span.clone(), problem))?;
        if servers.iter().any(|server| server.name == raw.name) {
            return Err(at("defined twice".to_owned()));
        }
        let layer = match &raw.layer {
            None => DEFAULT_UPSTREAM_LAYER.to_owned(),
            Some(layer) if layers.iter().any(|l| &l.name == layer) => layer.clone(),
            Some(layer) => return Err(at(format!("no [[layer]] is named `{layer}`"))),
        };
        let timeout = raw.timeout.clone().map(|timeout| timeout_key(timeout, ceilings)).transpose()?;
        let max_response = raw.max_response.map(|size| size_key(size, "max_response")).transpose()?;
        let connect_timeout =
            raw.connect_timeout.clone().map(|time| duration_key(time, "connect_timeout", ceilings)).transpose()?;
        let rename = raw.rename.clone().map(renames).transpose()?.unwrap_or_default();
        let name = raw.name.clone();
        let sandbox = sandbox(base, raw.sandbox, raw.unconfined, at)?;
        let transport = transport(
            base,
            raw.command,
            raw.url,
            ChildKeys { args: raw.args, env: raw.env, cwd: raw.cwd, sandbox },
            raw.headers,
        )
        .map_err(at)?;
        servers.push(UpstreamServer { name, layer, transport, timeout, max_response, connect_timeout, rename });
    }
    Ok(servers)
}

/// `rename`: each name served is a valid tool name, and names one tool.
fn renames(rename: Spanned<BTreeMap<String, String>>) -> Result<BTreeMap<String, String>, Problem> {
    let span = rename.span();
    let rename = rename.into_inner();
    for (remote, served) in &rename {
        crate::names::validate_tool(served)
            .map_err(|problem| Problem::at(span.clone(), format!("`rename` of `{remote}`: {problem}")))?;
        if rename.values().filter(|other| *other == served).count() > 1 {
            return Err(Problem::at(span.clone(), format!("`rename` serves two tools as `{served}`")));
        }
    }
    Ok(rename)
}

/// How a server is reached: a child process (`command`, its `args`, `env` and `cwd`)
/// or a Streamable HTTP endpoint (`url` with its `headers`), one of them.
fn transport(
    base: &Path,
    command: Option<String>,
    url: Option<String>,
    ChildKeys { args, env, cwd, sandbox }: ChildKeys,
    headers: Option<BTreeMap<String, RawHeader>>,
) -> Result<UpstreamTransport, String> {
    match (command, url) {
        (Some(program), None) => {
            if headers.is_some() {
                return Err("`headers` go with `url`, not `command`".to_owned());
            }
            let env = child_env(env.unwrap_or_default())?;
            Ok(UpstreamTransport::Command {
                program,
                args: args.unwrap_or_default(),
                env,
                cwd: cwd.map(|cwd| base.join(cwd)),
                sandbox: match sandbox {
                    Confinement::Default => Some(ChildSandbox::default()),
                    Confinement::Granted(sandbox) => Some(sandbox),
                    Confinement::Unconfined => None,
                },
            })
        }
        (None, Some(url)) => {
            if args.is_some() || env.is_some() || cwd.is_some() || !matches!(sandbox, Confinement::Default) {
                return Err("`args`, `env`, `cwd`, `sandbox` and `unconfined` go with `command`, not `url`".to_owned());
            }
            if !(url.starts_with("http://") || url.starts_with("https://")) || url::Url::parse(&url).is_err() {
                return Err(format!("`url` must be an http:// or https:// URL, not `{url}`"));
            }
            let headers = headers.unwrap_or_default().into_iter().map(|(name, value)| header(base, name, value));
            Ok(UpstreamTransport::Http { url, headers: headers.collect::<Result<_, _>>()? })
        }
        _ => Err("takes `command` (a child process) or `url` (Streamable HTTP), one of them".to_owned()),
    }
}

/// The keys that go with `command`, as written.
struct ChildKeys {
    args: Option<Vec<String>>,
    env: Option<Vec<String>>,
    cwd: Option<PathBuf>,
    sandbox: Confinement,
}

/// How a stdio server is confined, as written.
enum Confinement {
    /// No `sandbox` table: the default grants.
    Default,
    Granted(ChildSandbox),
    /// `unconfined = true`: the host's own privileges.
    Unconfined,
}

/// `sandbox` and `unconfined`: one of them, its paths relative to `base`.
fn sandbox(
    base: &Path,
    raw: Option<RawSandbox>,
    unconfined: Option<bool>,
    at: impl Fn(String) -> Problem,
) -> Result<Confinement, Problem> {
    let raw = match (raw, unconfined) {
        (Some(_), Some(true)) => return Err(at("takes `sandbox` or `unconfined = true`, not both".to_owned())),
        (None, Some(true)) => return Ok(Confinement::Unconfined),
        (None, _) => return Ok(Confinement::Default),
        (Some(raw), _) => raw,
    };
    let defaults = ChildSandbox::default();
    let paths =
        |paths: Option<Vec<PathBuf>>| paths.unwrap_or_default().into_iter().map(|path| base.join(path)).collect();
    let memory = raw.memory.map(|size| size_key(size, "sandbox.memory")).transpose()?;
    Ok(Confinement::Granted(ChildSandbox {
        read: paths(raw.read),
        write: paths(raw.write),
        network: raw.network.unwrap_or(defaults.network),
        memory: memory.unwrap_or(defaults.memory),
        processes: raw.processes.unwrap_or(defaults.processes),
        open_files: raw.open_files.unwrap_or(defaults.open_files),
    }))
}

/// A child's environment: `NAME` (passed through) or `NAME=HOST_NAME` entries.
fn child_env(entries: Vec<String>) -> Result<Vec<(String, String)>, String> {
    let valid = |name: &str| !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    entries
        .iter()
        .map(|entry| {
            let (child, host) = entry.split_once('=').unwrap_or((entry, entry));
            if !valid(child) || !valid(host) {
                return Err(format!("`env` entry `{entry}` is not `NAME` or `NAME=HOST_NAME`"));
            }
            Ok((child.to_owned(), host.to_owned()))
        })
        .collect()
}

/// A header sent with every request: its value, or where to read it when connecting.
fn header(base: &Path, name: String, value: RawHeader) -> Result<(String, Secret), String> {
    if http::HeaderName::try_from(name.as_str()).is_err() {
        return Err(format!("`{name}` is not a valid header name"));
    }
    let secret = match value {
        RawHeader::Plain(value) => Secret::Plain(value),
        RawHeader::From { env: Some(variable), file: None, prefix } => Secret::Env { name: variable, prefix },
        RawHeader::From { env: None, file: Some(file), prefix } => Secret::File { path: base.join(file), prefix },
        RawHeader::From { .. } => {
            return Err(format!("header `{name}` takes a value, or `env` or `file` (one of them)"));
        }
    };
    Ok((name, secret))
}
