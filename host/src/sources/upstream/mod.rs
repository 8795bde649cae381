//! Upstream MCP servers as tool sources: each a namespace whose tools are the server's, governed like any other.
//!
//! Upstream MCP servers as tool sources: a server the operator declares in
//! `toolhost.toml` is a namespace whose tools are the server's, served in a layer like
//! any other and governed like any other (caller policy, approval, input validation
//! against the server's input schema, output validation when it declares one, a
//! per-server timeout and response size limit, cancellation forwarded upstream, the
//! audit record).
//!
//! ```toml
//! [[upstream]]
//! name = "everything"                  # the namespace: everything/echo, …
//! command = "npx"                      # a child process speaking MCP on stdio
//! args = ["-y", "@modelcontextprotocol/server-everything"]
//! env = ["PATH", "HOME", "API_KEY=EVERYTHING_KEY"]   # nothing else is inherited
//! timeout = "30s"                      # per call (the default: the host's default limits)
//! max_response = "4 MiB"
//! connect_timeout = "10s"              # starting, `initialize`, each listing (default 30 s)
//! rename = { printEnv = "env" }        # the server's name → the name served
//! layer = "project"                    # a [[layer]] of this file; default: a layer
//!                                      # `upstream` below the directories, above the stdlib
//!
//! [[upstream]]
//! name = "search"
//! url = "https://mcp.example.com/mcp"  # Streamable HTTP
//! headers = { Authorization = { env = "SEARCH_TOKEN", prefix = "Bearer " }, X-Team = { file = "team.txt" } }
//! ```
//!
//! Each server is kept by a [`supervisor`]: connected (servers start in parallel, with
//! the host), listed, re-listed when it says its tools changed, and when it cannot be
//! reached or dies, its namespace is a load error and it is retried with backoff while
//! everything else keeps serving. [`tools`] maps MCP tools and results to toolhost's.

mod children;
mod client;
mod listing;
mod naming;
mod progress;
mod sandbox;
mod status;
mod stdio;
mod supervisor;
mod tools;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use children::{GRACE as STOP_GRACE, stop_all as stop_children};
pub use naming::served_name;
pub use sandbox::ChildSandbox;
pub use status::{Implementation, UpstreamChanges, UpstreamState, UpstreamStatus};
pub(crate) use supervisor::{Publication, Supervisors, section};
pub use tools::UpstreamTool;

/// The layer upstream servers go into when they name none.
pub const DEFAULT_LAYER: &str = "upstream";

/// An upstream MCP server, as `toolhost.toml` declares it.
#[derive(Clone, PartialEq, Eq)]
pub struct UpstreamServer {
    /// Its namespace.
    pub name: String,
    /// The layer its tools are served in.
    pub layer: String,
    /// How to reach it.
    pub transport: UpstreamTransport,
    /// Time limit of one call; `None`: the host's default.
    pub timeout: Option<Duration>,
    /// Largest answer kept (the output's JSON size); `None`: the host's default.
    pub max_response: Option<u64>,
    /// Time limit of connecting (starting the child, `initialize`) and of each whole
    /// listing of its tools; `None`: [`DEFAULT_CONNECT_TIMEOUT`].
    pub connect_timeout: Option<Duration>,
    /// The operator's names for the server's tools: its name → the name served. A tool
    /// not named here is served by [`served_name`]'s rule.
    pub rename: BTreeMap<String, String>,
}

/// How long connecting to a server and listing its tools may take, unless its
/// declaration says otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// How an upstream server is reached.
#[derive(Clone, PartialEq, Eq)]
pub enum UpstreamTransport {
    /// A child process speaking MCP over its stdin and stdout.
    Command {
        /// The program, found on the host's `PATH` unless it is a path.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Its whole environment: (name in the child, name in the host's environment).
        env: Vec<(String, String)>,
        /// Its working directory; `None`: the host's.
        cwd: Option<PathBuf>,
        /// What confines it; `None` runs it with the host's own privileges.
        sandbox: Option<ChildSandbox>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// `http://` or `https://` URL of the MCP endpoint.
        url: String,
        /// Headers sent with every request, their values read when connecting.
        headers: Vec<(String, Secret)>,
    },
}

/// A header value that may be a secret: never printed, read from where it lives each
/// time the server is connected (so a rotated file is picked up by the next connect).
#[derive(Clone, PartialEq, Eq)]
pub enum Secret {
    /// Written in the configuration.
    Plain(String),
    /// `prefix` then the value of a host environment variable.
    Env {
        /// The variable.
        name: String,
        /// Written before its value (`Bearer `).
        prefix: String,
    },
    /// `prefix` then the contents of a file (trailing newlines removed).
    File {
        /// The file.
        path: PathBuf,
        /// Written before its contents.
        prefix: String,
    },
}

impl Secret {
    /// The value, or why it cannot be read (naming the variable or file, never a value).
    pub(crate) fn read(&self) -> Result<String, String> {
        match self {
            Secret::Plain(value) => Ok(value.clone()),
            Secret::Env { name, prefix } => match std::env::var(name) {
                Ok(value) => Ok(format!("{prefix}{value}")),
                Err(_) => Err(format!("the environment variable `{name}` is not set")),
            },
            Secret::File { path, prefix } => match std::fs::read_to_string(path) {
                Ok(value) => Ok(format!("{prefix}{}", value.trim_end_matches(['\r', '\n']))),
                Err(e) => Err(format!("cannot read {}: {e}", path.display())),
            },
        }
    }

    /// The secret part of `value` (what [`Secret::read`] gave): without its prefix.
    pub(crate) fn value_without_prefix<'v>(&self, value: &'v str) -> Option<&'v str> {
        match self {
            Secret::Plain(_) => None,
            Secret::Env { prefix, .. } | Secret::File { prefix, .. } => {
                value.strip_prefix(prefix.as_str()).filter(|rest| !rest.is_empty())
            }
        }
    }
}

/// How operators are shown a declaration (`toolhost inspect NAME`): where each secret
/// comes from, never a value, and a value written in the file not even then.
impl serde::Serialize for UpstreamServer {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let transport = match &self.transport {
            UpstreamTransport::Command { program, args, env, cwd, sandbox } => {
                let env: serde_json::Map<String, serde_json::Value> =
                    env.iter().map(|(child, host)| (child.clone(), serde_json::json!({ "env": host }))).collect();
                let sandbox = match sandbox {
                    None => serde_json::json!("unconfined"),
                    Some(sandbox) => serde_json::json!({
                        "read": sandbox.read,
                        "write": sandbox.write,
                        "network": sandbox.network,
                        "memory_bytes": sandbox.memory,
                        "processes": sandbox.processes,
                        "open_files": sandbox.open_files,
                    }),
                };
                serde_json::json!({ "command": program, "args": args, "env": env, "cwd": cwd, "sandbox": sandbox })
            }
            UpstreamTransport::Http { url, headers } => {
                let headers: serde_json::Map<String, serde_json::Value> =
                    headers.iter().map(|(name, secret)| (name.clone(), secret.shown())).collect();
                serde_json::json!({ "url": url, "headers": headers })
            }
        };
        let mut shown = serde_json::json!({
            "name": self.name,
            "layer": self.layer,
            "timeout_ms": self.timeout.map(|timeout| u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)),
            "max_response_bytes": self.max_response,
            "connect_timeout_ms": self.connect_timeout.map(|timeout| u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX)),
            "rename": self.rename,
        });
        if let (Some(shown), serde_json::Value::Object(transport)) = (shown.as_object_mut(), transport) {
            shown.extend(transport);
        }
        shown.serialize(serializer)
    }
}

impl Secret {
    /// Where the value comes from, as JSON.
    fn shown(&self) -> serde_json::Value {
        match self {
            Secret::Plain(_) => serde_json::json!({ "value": "(written in toolhost.toml; not shown)" }),
            Secret::Env { name, prefix } => serde_json::json!({ "env": name, "prefix": prefix }),
            Secret::File { path, prefix } => serde_json::json!({ "file": path, "prefix": prefix }),
        }
    }
}

/// Says where a value comes from, never the value.
impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Secret::Plain(_) => f.write_str("Secret::Plain(..)"),
            Secret::Env { name, .. } => write!(f, "Secret::Env({name})"),
            Secret::File { path, .. } => write!(f, "Secret::File({})", path.display()),
        }
    }
}

impl std::fmt::Debug for UpstreamServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamServer")
            .field("name", &self.name)
            .field("layer", &self.layer)
            .field("transport", &self.transport)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for UpstreamTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamTransport::Command { program, args, env, .. } => {
                let names: Vec<&str> = env.iter().map(|(name, _)| name.as_str()).collect();
                f.debug_struct("Command").field("program", program).field("args", args).field("env", &names).finish()
            }
            UpstreamTransport::Http { url, headers } => {
                let names: Vec<&str> = headers.iter().map(|(name, _)| name.as_str()).collect();
                f.debug_struct("Http").field("url", url).field("headers", &names).finish()
            }
        }
    }
}
