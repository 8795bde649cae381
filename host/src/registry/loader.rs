//! Loading one component: from bytes to a ready-to-instantiate [`LoadedComponent`] whose
//! tools are described and whose schemas are compiled. All the expensive work of a tool
//! happens here, once, off the call path. A component exporting the toolbox contract
//! lists its tools (in a sandbox, with no grants); any other component is read for plain
//! exported functions ([`crate::plain`]), and runs no code at load at all.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use crate::config::Manifest;
use crate::contract::{self, ContractCheck, PluginPre};
use crate::error::{LoadError, LoadErrorKind};
use crate::names;
use crate::plain::{self, docs::Docs};
use crate::registry::cache::CompileCache;
use crate::registry::component::{ComponentCode, Contract, LoadedComponent, ToolDef};
use crate::sandbox::grants::Grants;
use crate::sandbox::{self, Operation, Returned, SandboxState};
use crate::schema::Schema;

/// The shared machinery a load needs.
pub(crate) struct Loader<'a> {
    pub engine: &'a Engine,
    pub linker: &'a Linker<SandboxState>,
    pub cache: Option<&'a CompileCache>,
}

/// Where the native code of a component came from.
pub(crate) struct Compiled {
    pub component: Component,
    pub hash: String,
    pub size: u64,
    pub time: Duration,
    pub from_cache: bool,
    /// The WIT documentation the bytes carry.
    pub docs: Docs,
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

/// Compiles component bytes. CPU-heavy: run it off the async executor.
fn compile(engine: &Engine, path: &Path, bytes: &[u8]) -> Result<Component, LoadError> {
    Component::new(engine, bytes).map_err(|e| LoadError::new(path, LoadErrorKind::Invalid(format!("{e:#}"))))
}

impl Loader<'_> {
    /// Links a compiled component and reads its tools: through the toolbox contract
    /// (`list-tools`, run in a sandbox with the component's limits and no grants) or,
    /// without it, from its plain exported functions.
    pub async fn finish(
        &self,
        path: &Path,
        manifest_path: Option<&Path>,
        compiled: Compiled,
        manifest: Manifest,
    ) -> Result<LoadedComponent, LoadError> {
        let error = |kind| LoadError::new(path, kind);
        let Compiled { component, hash, size, time, from_cache, docs } = compiled;
        let imports = component.component_type().imports(self.engine).map(|(name, _)| name.to_owned()).collect();
        let instance_pre =
            self.linker.instantiate_pre(&component).map_err(|e| error(LoadErrorKind::Link(format!("{e:#}"))))?;
        let (contract, mut tools, code) = match contract::check(self.engine, &component) {
            ContractCheck::Supported { version } => {
                let pre = PluginPre::new(instance_pre).map_err(|e| error(LoadErrorKind::Link(format!("{e:#}"))))?;
                let tools = self.list_tools(path, &pre, &manifest).await.map_err(error)?;
                (Contract::Toolbox { version }, tools, ComponentCode::Toolbox(pre))
            }
            ContractCheck::Unsupported { version } => {
                return Err(error(LoadErrorKind::IncompatibleContract {
                    wanted: format!("{}@{version}", contract::PACKAGE),
                    supported: contract::supported_versions(),
                }));
            }
            ContractCheck::Missing => {
                let reflected = plain::reflect(self.engine, &component, &docs);
                if reflected.tools.is_empty() {
                    return Err(error(LoadErrorKind::NoTools { skipped: reflected.skipped }));
                }
                let (tools, functions) = reflected.tools.into_iter().unzip();
                let code = ComponentCode::Plain { pre: instance_pre, functions };
                (Contract::Plain { skipped: reflected.skipped }, tools, code)
            }
        };
        apply_descriptions(&mut tools, &manifest.descriptions).map_err(error)?;
        Ok(LoadedComponent {
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
            requires_approval: manifest.requires_approval,
            code,
        })
    }

    /// A toolbox's tool descriptors. They must not depend on what the operator granted,
    /// and a load is no call (nobody audits it), so listing runs with no grants at all.
    async fn list_tools(
        &self,
        path: &Path,
        pre: &PluginPre<SandboxState>,
        manifest: &Manifest,
    ) -> Result<Vec<ToolDef>, LoadErrorKind> {
        let label: Arc<str> = Arc::from(path.display().to_string());
        let no_grants = Arc::new(Grants::default());
        let run = sandbox::run(self.engine, label, &manifest.limits, no_grants, Operation::ListTools(pre)).await;
        match run.result {
            Ok(Returned::Tools(infos)) => describe_tools(infos),
            Ok(_) => Err(LoadErrorKind::ListTools("answered like a call".into())),
            Err(e) => Err(LoadErrorKind::ListTools(e.to_string())),
        }
    }

    /// Compiles component bytes, or loads their native code from the compile cache.
    /// CPU-heavy on a miss: runs on the blocking pool.
    pub async fn compile(&self, path: &Path, bytes: Vec<u8>) -> Result<Compiled, LoadError> {
        check_preamble(&bytes).map_err(|kind| LoadError::new(path, kind))?;
        let hash = content_hash(&bytes);
        let size = bytes.len() as u64;
        let docs = Docs::read(&bytes);
        let started = Instant::now();
        if let Some(cache) = self.cache
            && let Ok(component) = cache.get(self.engine, &hash)
        {
            return Ok(Compiled { component, hash, size, time: started.elapsed(), from_cache: true, docs });
        }
        let engine = self.engine.clone();
        let owned_path = path.to_owned();
        let component = tokio::task::spawn_blocking(move || compile(&engine, &owned_path, &bytes))
            .await
            .map_err(|e| LoadError::new(path, LoadErrorKind::Invalid(format!("compilation panicked: {e}"))))??;
        let time = started.elapsed();
        if let Some(cache) = self.cache {
            let (cache, component, hash) = (cache.clone(), component.clone(), hash.clone());
            // Serializing is cheap next to compiling, but it is file I/O: off the executor.
            let _ = tokio::task::spawn_blocking(move || cache.put(&hash, &component)).await;
        }
        Ok(Compiled { component, hash, size, time, from_cache: false, docs })
    }

    /// Compiles (or loads from cache) and finishes in one go.
    pub async fn load_bytes(
        &self,
        path: &Path,
        manifest_path: Option<&Path>,
        bytes: Vec<u8>,
        manifest: Manifest,
    ) -> Result<LoadedComponent, LoadError> {
        let compiled = self.compile(path, bytes).await?;
        self.finish(path, manifest_path, compiled, manifest).await
    }
}

fn describe_tools(infos: Vec<contract::GuestToolInfo>) -> Result<Vec<ToolDef>, LoadErrorKind> {
    if infos.is_empty() {
        return Err(LoadErrorKind::ListTools("the component lists no tools".into()));
    }
    let mut tools: Vec<ToolDef> = Vec::with_capacity(infos.len());
    for info in infos {
        let bad = |problem: String| LoadErrorKind::BadTool { tool: info.name.clone(), problem };
        names::validate_tool(&info.name).map_err(LoadErrorKind::BadName)?;
        if tools.iter().any(|t| t.name == info.name) {
            return Err(bad("listed twice".into()));
        }
        let input_schema = Schema::compile(&info.input_schema).map_err(|e| bad(format!("input schema: {e}")))?;
        let output_schema = Schema::compile(&info.output_schema).map_err(|e| bad(format!("output schema: {e}")))?;
        tools.push(ToolDef { name: info.name, description: info.description, input_schema, output_schema });
    }
    Ok(tools)
}

/// The manifest's `[tools.NAME] description` over what the component says; a name the
/// component does not offer is an error, not a silent no-op.
fn apply_descriptions(tools: &mut [ToolDef], descriptions: &BTreeMap<String, String>) -> Result<(), LoadErrorKind> {
    for (name, description) in descriptions {
        let Some(tool) = tools.iter_mut().find(|tool| &tool.name == name) else {
            let offered: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
            return Err(LoadErrorKind::BadTool {
                tool: name.clone(),
                problem: format!(
                    "the manifest describes it, but the component offers no such tool (it offers {})",
                    offered.join(", ")
                ),
            });
        };
        tool.description = description.clone();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check_preamble;
    use crate::error::LoadErrorKind;

    #[test]
    fn preamble_tells_modules_components_and_junk_apart() {
        assert_eq!(check_preamble(&[0, 0x61, 0x73, 0x6d, 0x0d, 0, 1, 0, 0]), Ok(()));
        let module = check_preamble(&[0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]).unwrap_err();
        assert!(matches!(module, LoadErrorKind::NotAComponent(m) if m.contains("core WebAssembly module")));
        let junk = check_preamble(b"#!/bin/sh\necho hi").unwrap_err();
        assert!(matches!(junk, LoadErrorKind::NotAComponent(m) if m.contains("not WebAssembly")));
        assert!(check_preamble(&[0, 0x61]).is_err());
    }
}
