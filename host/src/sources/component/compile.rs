//! Loading one component: from bytes to a ready-to-instantiate [`LoadedComponent`] whose
//! tools are described and whose schemas are compiled. All the expensive work of a tool
//! happens here, once, off the call path. A component exporting the toolbox contract
//! lists its tools (in a sandbox, with no grants); any other component is read for plain
//! exported functions ([`crate::sources::component::plain`]), and runs no code at load at all.
//!
//! Native code comes from the compile cache when it holds the component; otherwise the
//! host's [`Tiering`] decides: Winch compiles it for the first calls and the background
//! [`Optimizer`](crate::sources::component::optimize::Optimizer) compiles it again with Cranelift,
//! or Cranelift compiles it at once. Only Cranelift's code goes into the cache, and code
//! mapped from the cache can be dropped while idle ([`crate::sources::component::code`]).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::Component;

use crate::config::Manifest;
use crate::contract::{self, ContractCheck, PluginPre};
use crate::error::{LoadError, LoadErrorKind};
use crate::host::Core;
use crate::names;
use crate::runtime::engine::{Tier, Tiering};
use crate::sandbox::grants::Grants;
use crate::sandbox::{self, Operation, Returned, SandboxState, Services, TierEngine};
use crate::schema::Schema;
use crate::sources::component::code::{Code, CodeKind, Resident};
use crate::sources::component::plain::{self, docs::Docs};
use crate::sources::component::{Contract, LoadedComponent};
use crate::text::{MAX_MESSAGE, bounded};
use crate::tool::Limits;
use crate::tool::ToolPolicy;
use crate::tool::{OutputForm, ToolDef};

/// The shared machinery a load needs.
pub(crate) struct Loader<'a> {
    pub core: &'a Arc<Core>,
}

/// Native code of a component, and where it came from.
pub(crate) struct Compiled {
    pub component: Component,
    pub tier: Tier,
    pub hash: String,
    pub size: u64,
    pub time: Duration,
    pub from_cache: bool,
    /// The compile cache holds this code (optimized code, once written).
    pub cached: bool,
    /// The bytes, kept for the background compile that replaces baseline code.
    pub bytes: Option<Arc<[u8]>>,
    /// The WIT documentation the bytes carry.
    pub docs: Docs,
}

/// The resident code of `previous` when `bytes` are what it was compiled from: a
/// changed manifest must not cost a compile (nor, for baseline code, a second background
/// compile; the one under way stores its code in the cache for the next).
fn reuse(previous: &LoadedComponent, bytes: &[u8]) -> Option<Compiled> {
    let code = previous.resident.current()?;
    let hash = content_hash(bytes);
    if hash != previous.hash {
        return None;
    }
    let baseline = code.tier == Tier::Baseline;
    Some(Compiled {
        component: code.component().clone(),
        tier: code.tier,
        hash,
        size: previous.size,
        time: previous.compile_time,
        from_cache: previous.from_cache,
        cached: previous.resident.restorable(),
        bytes: baseline.then(|| bytes.into()),
        docs: Docs::read(bytes),
    })
}

/// Writes optimized code to the compile cache and returns the copy mapped from it (the
/// one in memory when there is no cache, or writing failed), and whether the cache holds
/// it.
pub(crate) fn store(core: &Core, hash: &str, component: Component) -> (Component, bool) {
    match &core.cache {
        Some(cache) => match cache.put(&core.optimized.engine, hash, &component) {
            Some(mapped) => (mapped, true),
            None => (component, false),
        },
        None => (component, false),
    }
}

/// Baseline code to replace: the component it serves and the bytes to compile again.
pub(crate) struct Upgrade {
    pub bytes: Arc<[u8]>,
}

/// The magic number and version of a component binary (a core module has `01 00 00 00`).
const COMPONENT_PREAMBLE: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];

/// Refuses bytes that cannot be a component, with a message that says what they are.
pub(crate) fn check_preamble(bytes: &[u8]) -> Result<(), LoadErrorKind> {
    if bytes.len() < 8 || bytes[..4] != COMPONENT_PREAMBLE[..4] {
        return Err(LoadErrorKind::NotAComponent("the file is not WebAssembly (no `\\0asm` magic number)".into()));
    }
    if bytes[4..8] == [0x01, 0x00, 0x00, 0x00] {
        return Err(LoadErrorKind::NotAComponent(
            "this is a core WebAssembly module, not a component; build for `wasm32-wasip2` \
             or wrap it with `wasm-tools component new`"
                .into(),
        ));
    }
    if bytes[4..8] != COMPONENT_PREAMBLE[4..] {
        return Err(LoadErrorKind::NotAComponent(format!(
            "unsupported WebAssembly binary version/layer {:02x?}",
            &bytes[4..8]
        )));
    }
    Ok(())
}

pub(crate) fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

impl Loader<'_> {
    /// Compiles component bytes with `engine`, in one of the host's compile slots.
    /// CPU-heavy: runs on the blocking pool.
    async fn compile_with(&self, engine: &TierEngine, bytes: Arc<[u8]>) -> Result<Component, String> {
        let _slot = self.core.compile_slots.acquire().await.map_err(|_| "the host is shutting down".to_owned())?;
        let engine = engine.engine.clone();
        tokio::task::spawn_blocking(move || Component::new(&engine, &bytes).map_err(|e| format!("{e:#}")))
            .await
            .map_err(|e| format!("compilation panicked: {e}"))?
    }

    /// Links a compiled component and reads its tools: through the toolbox contract
    /// (`list-tools`, run in a sandbox with the component's limits and no grants) or,
    /// without it, from its plain exported functions. Baseline code comes back with the
    /// [`Upgrade`] that replaces it.
    pub async fn finish(
        &self,
        path: &Path,
        manifest_path: Option<&Path>,
        compiled: Compiled,
        manifest: Manifest,
    ) -> Result<(LoadedComponent, Option<Upgrade>), LoadError> {
        let error = |kind| LoadError::new(path, kind);
        let Compiled { component, tier, hash, size, time, from_cache, cached, bytes, docs } = compiled;
        let engine = self.core.engine(tier);
        let imports = component.component_type().imports(&engine.engine).map(|(name, _)| name.to_owned()).collect();
        let instance_pre =
            engine.linker.instantiate_pre(&component).map_err(|e| error(LoadErrorKind::Link(format!("{e:#}"))))?;
        let (contract, mut tools, plain, kind) = match contract::check(&engine.engine, &component) {
            ContractCheck::Supported { version } => {
                let pre = PluginPre::new(instance_pre).map_err(|e| error(LoadErrorKind::Link(format!("{e:#}"))))?;
                let tools = self.list_tools(path, engine, &pre, &manifest).await.map_err(error)?;
                (Contract::Toolbox { version }, tools, Vec::new(), CodeKind::Toolbox(pre))
            }
            ContractCheck::Unsupported { version } => {
                return Err(error(LoadErrorKind::IncompatibleContract {
                    wanted: format!("{}@{version}", contract::PACKAGE),
                    supported: contract::supported_versions(),
                }));
            }
            ContractCheck::Missing => {
                let reflected = plain::reflect(&engine.engine, &component, &docs);
                if reflected.tools.is_empty() {
                    return Err(error(LoadErrorKind::NoTools { skipped: reflected.skipped }));
                }
                let mut tools = Vec::with_capacity(reflected.tools.len());
                let mut functions = Vec::with_capacity(reflected.tools.len());
                let mut calls = Vec::with_capacity(reflected.tools.len());
                for tool in reflected.tools {
                    tools.push(tool.def);
                    functions.push(tool.function);
                    calls.push(tool.call);
                }
                (
                    Contract::Plain { skipped: reflected.skipped },
                    tools,
                    functions,
                    CodeKind::Plain { pre: instance_pre, calls },
                )
            }
        };
        apply_manifest(&mut tools, &manifest).map_err(error)?;
        let code = Code { tier, engine: engine.engine.clone(), kind };
        let upgrade = match (tier, bytes) {
            (Tier::Baseline, Some(bytes)) if self.core.tiering == Tiering::Tiered => Some(Upgrade { bytes }),
            _ => None,
        };
        let loaded = LoadedComponent {
            path: path.to_owned(),
            hash,
            size,
            contract,
            imports,
            tools,
            compile_time: time,
            from_cache,
            manifest: manifest_path.map(Path::to_owned),
            limits: manifest.limits,
            grants: Arc::new(manifest.grants),
            policy: manifest.policy,
            plain,
            resident: Resident::new(code, cached),
            verified: None,
        };
        Ok((loaded, upgrade))
    }

    /// A toolbox's tool descriptors. They must not depend on what the operator granted,
    /// and a load is no call (nobody audits it), so listing runs with no grants at all.
    async fn list_tools(
        &self,
        path: &Path,
        engine: &TierEngine,
        pre: &PluginPre<SandboxState>,
        manifest: &Manifest,
    ) -> Result<Vec<ToolDef>, LoadErrorKind> {
        let label: Arc<str> = Arc::from(path.display().to_string());
        let no_grants = Arc::new(Grants::default());
        let resolver = self.core.resolver.clone();
        let run = sandbox::run(
            &engine.engine,
            label,
            &manifest.limits,
            no_grants,
            Services { resolver, storage: None },
            Operation::ListTools(pre),
        )
        .await;
        match run.result {
            Ok(Returned::Tools(infos)) => describe_tools(infos),
            Ok(_) => Err(LoadErrorKind::ListTools("answered like a call".into())),
            Err(e) => Err(LoadErrorKind::ListTools(e.to_string())),
        }
    }

    /// Native code for component bytes: from the compile cache, else compiled by the
    /// tier the host's [`Tiering`] picks (Cranelift when Winch cannot compile them).
    pub async fn compile(&self, path: &Path, bytes: Vec<u8>) -> Result<Compiled, LoadError> {
        check_preamble(&bytes).map_err(|kind| LoadError::new(path, kind))?;
        let hash = content_hash(&bytes);
        let size = bytes.len() as u64;
        let docs = Docs::read(&bytes);
        let started = Instant::now();
        let optimized = &self.core.optimized;
        if let Some(component) = self.core.cached_code(&hash) {
            let time = started.elapsed();
            let tier = Tier::Optimized;
            return Ok(Compiled {
                component,
                tier,
                hash,
                size,
                time,
                from_cache: true,
                cached: true,
                bytes: None,
                docs,
            });
        }
        let bytes: Arc<[u8]> = bytes.into();
        if let Some(baseline) = self.core.baseline() {
            match self.compile_with(baseline, bytes.clone()).await {
                Ok(component) => {
                    let time = started.elapsed();
                    let (tier, bytes) = (Tier::Baseline, Some(bytes));
                    return Ok(Compiled {
                        component,
                        tier,
                        hash,
                        size,
                        time,
                        from_cache: false,
                        cached: false,
                        bytes,
                        docs,
                    });
                }
                Err(reason) => {
                    tracing::debug!(file = %path.display(), "Winch cannot compile it, Cranelift will: {reason}")
                }
            }
        }
        let component = self
            .compile_with(optimized, bytes)
            .await
            .map_err(|reason| LoadError::new(path, LoadErrorKind::Invalid(reason)))?;
        let time = started.elapsed();
        let (component, cached) = self.store(&hash, component).await;
        Ok(Compiled {
            component,
            tier: Tier::Optimized,
            hash,
            size,
            time,
            from_cache: false,
            cached,
            bytes: None,
            docs,
        })
    }

    /// [`store`], off the executor: serializing is cheap next to compiling, but it is
    /// file I/O.
    async fn store(&self, hash: &str, component: Component) -> (Component, bool) {
        if self.core.cache.is_none() {
            return (component, false);
        }
        let (core, hash, compiled) = (self.core.clone(), hash.to_owned(), component.clone());
        tokio::task::spawn_blocking(move || store(&core, &hash, compiled)).await.unwrap_or((component, false))
    }

    /// The optimized code of a loaded component again, for a call after its resident
    /// code was dropped: mapped from the compile cache, or compiled from its file when
    /// the entry is gone and the file still holds the same bytes.
    pub async fn restore(&self, component: &LoadedComponent) -> Result<Code, String> {
        let optimized = &self.core.optimized;
        let (core, hash) = (self.core.clone(), component.hash.clone());
        let cached = tokio::task::spawn_blocking(move || core.cached_code(&hash)).await.ok().flatten();
        let compiled = match cached {
            Some(compiled) => compiled,
            None => {
                let bytes = tokio::fs::read(&component.path)
                    .await
                    .map_err(|e| format!("its code is gone from the compile cache and {e}"))?;
                if content_hash(&bytes) != component.hash {
                    return Err("its file changed on disk; the new version is served once it is reloaded".into());
                }
                let compiled = self.compile_with(optimized, bytes.into()).await?;
                self.store(&component.hash, compiled).await.0
            }
        };
        Code::link(optimized, &compiled, &component.contract, &component.tools)
    }

    /// Compiles (or loads from cache) and finishes in one go.
    pub async fn load_bytes(
        &self,
        path: &Path,
        manifest_path: Option<&Path>,
        bytes: Vec<u8>,
        manifest: Manifest,
        previous: Option<&LoadedComponent>,
    ) -> Result<(LoadedComponent, Option<Upgrade>), LoadError> {
        let compiled = match previous.and_then(|previous| reuse(previous, &bytes)) {
            Some(compiled) => compiled,
            None => self.compile(path, bytes).await?,
        };
        self.finish(path, manifest_path, compiled, manifest).await
    }
}

/// Most tools one component may offer.
pub const MAX_TOOLS: usize = 256;
/// Longest JSON Schema text a tool may declare (each of input and output), in bytes.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Longest tool description, in bytes: it goes to every model that lists the tool.
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;

fn describe_tools(infos: Vec<contract::GuestToolInfo>) -> Result<Vec<ToolDef>, LoadErrorKind> {
    if infos.is_empty() {
        return Err(LoadErrorKind::ListTools("the component lists no tools".into()));
    }
    if infos.len() > MAX_TOOLS {
        return Err(LoadErrorKind::ListTools(format!(
            "it lists {} tools; at most {MAX_TOOLS} are served",
            infos.len()
        )));
    }
    let mut tools: Vec<ToolDef> = Vec::with_capacity(infos.len());
    for info in infos {
        // The name is the guest's: bounded before it goes into any error.
        let shown = || bounded(info.name.clone(), 64);
        let bad = |problem: String| LoadErrorKind::BadTool { tool: shown(), problem: bounded(problem, MAX_MESSAGE) };
        names::validate_tool(&info.name).map_err(|e| LoadErrorKind::BadName(bounded(e, MAX_MESSAGE)))?;
        if tools.iter().any(|t| t.name == info.name) {
            return Err(bad("listed twice".into()));
        }
        for (what, size, max) in [
            ("description", info.description.len(), MAX_DESCRIPTION_BYTES),
            ("input schema", info.input_schema.len(), MAX_SCHEMA_BYTES),
            ("output schema", info.output_schema.len(), MAX_SCHEMA_BYTES),
        ] {
            if size > max {
                return Err(bad(format!("its {what} is {size} bytes; at most {max} are accepted")));
            }
        }
        // Checked now, compiled for good by the tool's first call: a tool never called
        // holds no validator.
        let input_schema = Schema::verify(&info.input_schema).map_err(|e| bad(format!("input schema: {e}")))?;
        let output_schema = Schema::verify(&info.output_schema).map_err(|e| bad(format!("output schema: {e}")))?;
        tools.push(ToolDef {
            name: info.name,
            description: info.description,
            input_schema,
            output_schema,
            limits: Limits::default(),
            policy: ToolPolicy::default(),
            output_form: OutputForm::Json,
        });
    }
    Ok(tools)
}

/// The manifest's limits and policy on every tool, and its `[tools.NAME]` settings over
/// the component's own description; a name the component does not offer is an error,
/// not a silent no-op.
fn apply_manifest(tools: &mut [ToolDef], manifest: &Manifest) -> Result<(), LoadErrorKind> {
    if let Some(name) = manifest.tools.keys().find(|name| !tools.iter().any(|tool| &tool.name == *name)) {
        let offered: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        return Err(LoadErrorKind::BadTool {
            tool: name.clone(),
            problem: format!(
                "the manifest has settings for it, but the component offers no such tool (it offers {})",
                offered.join(", ")
            ),
        });
    }
    for tool in tools {
        tool.limits = manifest.limits_of(&tool.name);
        tool.policy = manifest.policy_of(&tool.name);
        if let Some(description) = manifest.tools.get(&tool.name).and_then(|settings| settings.description.as_ref()) {
            tool.description = description.clone();
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preamble_tells_modules_components_and_junk_apart() {
        assert_eq!(check_preamble(&[0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0, 0]), Ok(()));
        let module = check_preamble(&[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]).unwrap_err();
        assert!(matches!(module, LoadErrorKind::NotAComponent(m) if m.contains("core WebAssembly module")));
        let junk = check_preamble(b"#!/bin/sh\necho hi").unwrap_err();
        assert!(matches!(junk, LoadErrorKind::NotAComponent(m) if m.contains("not WebAssembly")));
        assert!(check_preamble(&[0, 0x61]).is_err());
    }

    fn info(name: &str, schema: &str) -> contract::GuestToolInfo {
        contract::GuestToolInfo {
            name: name.into(),
            description: "A tool.".into(),
            input_schema: schema.into(),
            output_schema: "{}".into(),
        }
    }

    #[test]
    fn what_a_component_declares_is_bounded() {
        let many: Vec<_> = (0..=MAX_TOOLS).map(|i| info(&format!("tool{i}"), "{}")).collect();
        let error = describe_tools(many).unwrap_err().to_string();
        assert!(error.contains("lists 257 tools; at most 256"), "{error}");

        let huge = format!(r#"{{"description":"{}"}}"#, "x".repeat(MAX_SCHEMA_BYTES));
        let error = describe_tools(vec![info("big", &huge)]).unwrap_err().to_string();
        assert!(error.contains("its input schema is 262162 bytes; at most 262144"), "{error}");

        let long_name = "\u{1b}".repeat(100_000);
        let error = describe_tools(vec![info(&long_name, "{}")]).unwrap_err().to_string();
        assert!(error.len() < MAX_MESSAGE + 100, "a guest's name cannot make an error huge: {}", error.len());
        assert!(describe_tools(vec![info("fits", "{}")]).is_ok());
    }
}
