//! `toolhost inspect`: what a component or an HTTP tool offers, or an upstream server's declaration, connection and tools.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;
use toolhost::upstream::{UpstreamServer, UpstreamState};
use toolhost::{HostConfig, SourceKind, exit};

use super::{HostOptions, Lifetime};
use crate::output::{fail, print_json};

#[derive(clap::Args)]
pub struct Args {
    /// A component file (`.wasm`), an HTTP tool (`.http.toml`), or the name of an
    /// `[[upstream]]` server of toolhost.toml (when no file has that name).
    file: PathBuf,
}

pub async fn run(options: &HostOptions, args: Args) -> anyhow::Result<ExitCode> {
    let file = args.file;
    if !file.exists() {
        let config = options.config()?;
        let declared = file.to_str().and_then(|name| config.upstreams.iter().find(|server| server.name == name));
        if let Some(server) = declared.cloned() {
            return upstream(options, config, server).await;
        }
    }
    let host = options.build_without_layers().await?;
    let inspected = if toolhost::is_http_tool_file(&file) {
        host.inspect_http_tool(&file).map(|tool| serde_json::to_value(&tool))
    } else {
        host.inspect_file(&file).await.map(|component| serde_json::to_value(&component))
    };
    match inspected {
        Ok(shown) => {
            print_json(&shown?);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            // What it imports and exports is shown even when an import keeps it from loading.
            if matches!(e.kind, toolhost::LoadErrorKind::Import { .. }) {
                print_json(&serde_json::to_value(&e)?);
            }
            Ok(fail("load", &e.to_string(), exit::LOAD))
        }
    }
}

/// Connects to the upstream server `server` (and loads nothing else of its namespace's
/// layers) and shows its declaration, its connection and the tools it serves; exits
/// with the load error's code when it cannot be reached.
async fn upstream(options: &HostOptions, config: HostConfig, server: UpstreamServer) -> anyhow::Result<ExitCode> {
    let builder = options.builder_from(config, None, Lifetime::OneShot);
    let host = builder.only_namespaces([server.name.as_str()]).build().await?;
    let Some(status) = host.upstreams().await.into_iter().find(|status| status.server.name == server.name) else {
        anyhow::bail!("the upstream server `{}` was not started", server.name);
    };
    let tools: Vec<toolhost::ToolDescription> = host
        .listing()
        .tools
        .into_iter()
        .filter(|tool| {
            tool.source == SourceKind::McpServer
                && toolhost::names::split(&tool.name).is_some_and(|(namespace, _)| namespace == server.name)
        })
        .collect();
    let mut shown = serde_json::to_value(&status)?;
    shown["contract"] = json!("mcp server");
    shown["tools"] = serde_json::to_value(tools)?;
    print_json(&shown);
    match status.state {
        UpstreamState::Failed { problem } => {
            Ok(fail("load", &format!("upstream `{}`: {problem}", server.name), exit::LOAD))
        }
        UpstreamState::Connecting | UpstreamState::Connected { .. } => Ok(ExitCode::SUCCESS),
    }
}
