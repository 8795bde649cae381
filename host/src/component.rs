//! Loading one component: from bytes to a ready-to-instantiate [`LoadedComponent`] whose
//! tools are described and whose schemas are compiled. All the expensive work of a tool
//! happens here, once, off the call path.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use crate::contract::{self, ContractCheck, PluginPre};
use crate::error::{LoadError, LoadErrorKind};
use crate::grants::Grants;
use crate::limits::Limits;
use crate::names;
use crate::sandbox::{self, Operation, Returned, SandboxState};
use crate::schema::Schema;

/// A loaded component, shared by every call to its tools.
pub struct LoadedComponent {
    pub path: PathBuf,
    /// BLAKE3 of the file's bytes, hex.
    pub hash: String,
    pub size: u64,
    /// The contract version it was built against, e.g. `0.1.0`.
    pub contract_version: String,
    /// Interfaces the component imports (what it *could* ask for).
    pub imports: Vec<String>,
    pub tools: Vec<ToolDef>,
    /// Time spent compiling (or loading from the compile cache).
    pub compile_time: Duration,
    pub limits: Limits,
    pub grants: Arc<Grants>,
    pub(crate) pre: PluginPre<SandboxState>,
}

impl std::fmt::Debug for LoadedComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedComponent")
            .field("path", &self.path)
            .field("hash", &self.hash)
            .field("tools", &self.tools.iter().map(|t| &t.name).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// One tool of a component.
#[derive(Debug)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub input_schema: Schema,
    pub output_schema: Schema,
}

/// The shared machinery a load needs.
pub(crate) struct Loader<'a> {
    pub engine: &'a Engine,
    pub linker: &'a Linker<SandboxState>,
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
pub(crate) fn compile(engine: &Engine, path: &Path, bytes: &[u8]) -> Result<Component, LoadError> {
    check_preamble(bytes).map_err(|kind| LoadError::new(path, kind))?;
    Component::new(engine, bytes).map_err(|e| LoadError::new(path, LoadErrorKind::Invalid(format!("{e:#}"))))
}

impl Loader<'_> {
    /// Links a compiled component, checks its contract version, and reads and checks its
    /// tool descriptors by running `list-tools` in a sandbox with the component's limits.
    #[allow(clippy::too_many_arguments)]
    pub async fn finish(
        &self,
        path: &Path,
        component: Component,
        hash: String,
        size: u64,
        compile_time: Duration,
        limits: Limits,
        grants: Arc<Grants>,
    ) -> Result<LoadedComponent, LoadError> {
        let error = |kind| LoadError::new(path, kind);
        let contract_version = match contract::check(self.engine, &component) {
            ContractCheck::Supported { version } => version,
            ContractCheck::Unsupported { version } => {
                return Err(error(LoadErrorKind::IncompatibleContract {
                    wanted: format!("{}@{version}", contract::PACKAGE),
                    supported: contract::supported_versions(),
                }));
            }
            ContractCheck::Missing => {
                return Err(error(LoadErrorKind::NoToolbox {
                    expected: format!("{}@{}.x", contract::TOOLBOX_INTERFACE, contract::SUPPORTED_SERIES[0]),
                }));
            }
        };
        let imports = component.component_type().imports(self.engine).map(|(name, _)| name.to_owned()).collect();
        let instance_pre =
            self.linker.instantiate_pre(&component).map_err(|e| error(LoadErrorKind::Link(format!("{e:#}"))))?;
        let pre = PluginPre::new(instance_pre).map_err(|e| error(LoadErrorKind::Link(format!("{e:#}"))))?;

        let label: Arc<str> = Arc::from(path.display().to_string());
        let run = sandbox::run(self.engine, &pre, label, &limits, grants.clone(), Operation::ListTools).await;
        let infos = match run.result {
            Ok(Returned::Tools(infos)) => infos,
            Ok(Returned::Call(_)) => return Err(error(LoadErrorKind::ListTools("answered like a call".into()))),
            Err(e) => return Err(error(LoadErrorKind::ListTools(e.to_string()))),
        };
        let tools = describe_tools(infos).map_err(error)?;
        Ok(LoadedComponent {
            path: path.to_owned(),
            hash,
            size,
            contract_version,
            imports,
            tools,
            compile_time,
            limits,
            grants,
            pre,
        })
    }

    /// Compiles and finishes in one go, timing the compilation.
    pub async fn load_bytes(
        &self,
        path: &Path,
        bytes: Vec<u8>,
        limits: Limits,
        grants: Arc<Grants>,
    ) -> Result<LoadedComponent, LoadError> {
        let hash = content_hash(&bytes);
        let size = bytes.len() as u64;
        let started = Instant::now();
        let engine = self.engine.clone();
        let owned_path = path.to_owned();
        let component = tokio::task::spawn_blocking(move || compile(&engine, &owned_path, &bytes))
            .await
            .map_err(|e| LoadError::new(path, LoadErrorKind::Invalid(format!("compilation panicked: {e}"))))??;
        self.finish(path, component, hash, size, started.elapsed(), limits, grants).await
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
