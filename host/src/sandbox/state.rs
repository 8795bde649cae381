//! The data of one call's store, and every import a guest may link against.
//!
//! The data of one call's `Store`, and every import a guest may link against. What a
//! call can actually *do* through those imports is decided by the grants in its state.

use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::client::{ClientError, ClientPower, ClientSession};
use crate::contract::{self, CallerInfo, LogLevel, Plugin};
use crate::error::BuildError;
use crate::policy::Caller;
use crate::progress::ProgressReports;
use crate::sandbox::config;
use crate::sandbox::grants::Grants;
use crate::sandbox::keyvalue::{self, CallStorage};
use crate::sandbox::limits::CallLimiter;
use crate::sandbox::outbound::OutboundHttp;
use crate::sandbox::output::{OutputSink, level_name};
use crate::text::Escaped;

use contract::toolhost::tool::host as guest;

/// The data of one call's `Store`.
pub(crate) struct SandboxState {
    pub(super) wasi: WasiCtx,
    pub(super) http: WasiHttpCtx,
    pub(super) outbound: OutboundHttp,
    pub(super) table: ResourceTable,
    pub(super) limiter: CallLimiter,
    pub(super) output: OutputSink,
    pub(super) grants: Arc<Grants>,
    /// `namespace/tool` (or the file, while listing tools), for log lines.
    pub(super) label: Arc<str>,
    pub(super) progress: ProgressReports,
    /// The buckets it may open, and its writes until they commit.
    pub(super) storage: CallStorage,
    /// Who is calling, when the component is granted to know (`host.caller`).
    pub(super) caller: Option<Caller>,
    /// What the call may ask of its client, and the content it shows (none while a
    /// component's tools are listed).
    pub(super) client: Option<ClientSession>,
}

impl SandboxState {
    fn client(&self) -> Result<ClientSession, contract::toolhost::tool::host::ClientError> {
        self.client
            .clone()
            .ok_or_else(|| ClientError::Unsupported("no call is running: tools are being listed".to_owned()).into())
    }
}

impl WasiView for SandboxState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for SandboxState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.outbound }
    }
}

impl contract::toolhost::tool::types::Host for SandboxState {}

impl contract::toolhost::tool::host::Host for SandboxState {
    fn log(&mut self, level: LogLevel, message: String) {
        if let Some(kept) = self.output.log(level, &message) {
            tracing::event!(target: "toolhost::guest", tracing::Level::DEBUG, tool = %self.label, level = level_name(level), "{}", Escaped(&message[..kept]));
            if let Some(client) = &self.client {
                client.log(level.into(), &message[..kept]);
            }
        }
    }

    fn config(&mut self, key: String) -> Option<String> {
        self.grants.config.get(&key).cloned()
    }

    fn progress(&mut self, done: u64, total: Option<u64>, message: Option<String>) {
        self.progress.report(done as f64, total.map(|total| total as f64), message);
    }

    fn caller(&mut self) -> Option<CallerInfo> {
        let caller = self.caller.as_ref()?;
        Some(CallerInfo { agent: caller.agent.clone(), session: caller.conversation().map(str::to_owned) })
    }

    fn add_content(&mut self, block: guest::Content) -> Result<(), String> {
        match &self.client {
            Some(client) => client.add_content(block.into()),
            None => Err("no call is running: tools are being listed".to_owned()),
        }
    }

    async fn elicit(
        &mut self,
        message: String,
        requested_schema: String,
    ) -> Result<guest::ElicitAnswer, guest::ClientError> {
        let client = self.client()?;
        if requested_schema.len() > crate::client::MAX_FORM_BYTES {
            let problem = format!("the form is over the {} bytes a question may take", crate::client::MAX_FORM_BYTES);
            return Err(client.unreadable(ClientPower::Elicit, problem).into());
        }
        let schema = serde_json::from_str(&requested_schema)
            .map_err(|e| client.unreadable(ClientPower::Elicit, format!("the requested schema is not JSON: {e}")))?;
        Ok(client.elicit(&message, schema).await?.into())
    }

    async fn sample(&mut self, request: guest::SamplingRequest) -> Result<guest::SamplingReply, guest::ClientError> {
        let client = self.client()?;
        Ok(client.sample(request.into()).await?.into())
    }
}

/// Links everything a guest may import. What a call can actually *do* through these
/// imports is decided per call by its [`WasiCtx`], which starts empty.
pub(crate) fn new_linker(engine: &Engine) -> Result<Linker<SandboxState>, BuildError> {
    let mut linker: Linker<SandboxState> = Linker::new(engine);
    let failed = |e: wasmtime::Error| BuildError::Engine(format!("linking the host's imports: {e:#}"));
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(failed)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).map_err(failed)?;
    Plugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state).map_err(failed)?;
    keyvalue::add_to_linker(&mut linker, |state| &mut state.storage)?;
    config::add_to_linker(&mut linker, |state| &state.grants.config).map_err(failed)?;
    Ok(linker)
}

/// Every interface [`new_linker`] provides, by interface, with the versions it serves:
/// what a component refused for an import is told toolhost has instead. wasmtime links
/// any 0.2 release of WASI to the one it implements.
pub(crate) fn provided_interfaces() -> Vec<(String, Vec<String>)> {
    const WASI: &[&str] = &["0.2.x"];
    let mut provided: Vec<(String, Vec<String>)> = Vec::new();
    let mut add = |package: &str, interfaces: &[&str], versions: &[&str]| {
        for interface in interfaces {
            provided.push((format!("{package}/{interface}"), versions.iter().map(|v| (*v).to_owned()).collect()));
        }
    };
    add(
        "wasi:cli",
        &[
            "environment",
            "exit",
            "stdin",
            "stdout",
            "stderr",
            "terminal-input",
            "terminal-output",
            "terminal-stdin",
            "terminal-stdout",
            "terminal-stderr",
        ],
        WASI,
    );
    add("wasi:clocks", &["monotonic-clock", "wall-clock"], WASI);
    add("wasi:filesystem", &["types", "preopens"], WASI);
    add("wasi:io", &["error", "poll", "streams"], WASI);
    add("wasi:random", &["random", "insecure", "insecure-seed"], WASI);
    add(
        "wasi:sockets",
        &["network", "instance-network", "tcp", "tcp-create-socket", "udp", "udp-create-socket", "ip-name-lookup"],
        WASI,
    );
    add("wasi:http", &["types", "outgoing-handler"], WASI);
    add("wasi:keyvalue", &["store", "atomics", "batch"], &["0.2.0-draft2", "0.2.0-draft"]);
    add("wasi:config", &["store"], &config::VERSIONS);
    let series: Vec<String> = contract::SUPPORTED_SERIES.iter().map(|series| format!("{series}.x")).collect();
    add(contract::PACKAGE, &["host", "types"], &series.iter().map(String::as_str).collect::<Vec<_>>());
    provided
}
