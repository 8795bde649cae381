//! Loading one component: from bytes to a ready-to-instantiate [`LoadedComponent`] whose
//! tools are described and whose schemas are compiled. All the expensive work of a tool
//! happens here, once, off the call path.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

use crate::config::Manifest;
use crate::contract::{self, ContractCheck, PluginPre};
use crate::error::{LoadError, LoadErrorKind};
use crate::names;
use crate::registry::cache::CompileCache;
use crate::sandbox::grants::{Capabilities, Grants};
use crate::sandbox::limits::Limits;
use crate::sandbox::{self, Operation, Returned, SandboxState};
use crate::schema::Schema;

/// A loaded component, shared by every call to its tools.
pub struct LoadedComponent {
    /// The component file.
    pub path: PathBuf,
    /// BLAKE3 of the file's bytes, hex.
    pub hash: String,
    /// Bytes of the file.
    pub size: u64,
    /// The contract version it was built against, e.g. `0.1.0`.
    pub contract_version: String,
    /// Interfaces the component imports (what it *could* ask for).
    pub imports: Vec<String>,
    /// The tools it lists, in its order.
    pub tools: Vec<ToolDef>,
    /// Time spent compiling, or loading native code from the compile cache.
    pub compile_time: Duration,
    /// Whether the native code came from the compile cache.
    pub from_cache: bool,
    /// The manifest beside the component, when there is one.
    pub manifest: Option<PathBuf>,
    /// Per-call limits, from the manifest over the host's defaults.
    pub limits: Limits,
    /// What the manifest grants.
    pub grants: Arc<Grants>,
    /// Calls must pass the host's approval hook first.
    pub requires_approval: bool,
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

impl LoadedComponent {
    /// Which capabilities its imports ask for, beside what its manifest grants.
    pub fn capabilities(&self) -> Capabilities {
        Capabilities::of(&self.imports, &self.grants)
    }
}

/// How `toolhost inspect` shows a component: what it offers, what it imports and what it
/// is granted (configuration keys, never values).
impl serde::Serialize for LoadedComponent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema.json(),
                    "output_schema": tool.output_schema.json(),
                })
            })
            .collect();
        json!({
            "file": self.path,
            "hash": self.hash,
            "size_bytes": self.size,
            "compile_ms": self.compile_time.as_secs_f64() * 1000.0,
            "from_compile_cache": self.from_cache,
            "contract": format!("{}@{}", contract::PACKAGE, self.contract_version),
            "manifest": self.manifest,
            "limits": self.limits,
            "requires_approval": self.requires_approval,
            "capabilities": self.capabilities(),
            "imports": self.imports,
            "tools": tools,
        })
        .serialize(serializer)
    }
}

/// One tool of a component.
#[derive(Debug)]
pub struct ToolDef {
    /// The tool's name within its namespace.
    pub name: String,
    /// What it does, for the agent deciding whether to call it.
    pub description: String,
    /// Its input, checked before every call.
    pub input_schema: Schema,
    /// Its output, checked after every call.
    pub output_schema: Schema,
}

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
    /// Links a compiled component, checks its contract version, and reads and checks its
    /// tool descriptors by running `list-tools` in a sandbox with the component's limits
    /// and grants.
    pub async fn finish(
        &self,
        path: &Path,
        manifest_path: Option<&Path>,
        compiled: Compiled,
        manifest: Manifest,
    ) -> Result<LoadedComponent, LoadError> {
        let error = |kind| LoadError::new(path, kind);
        let Compiled { component, hash, size, time, from_cache } = compiled;
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

        let grants = Arc::new(manifest.grants);
        let label: Arc<str> = Arc::from(path.display().to_string());
        // Descriptors must not depend on what the operator granted, and a load is no
        // call: nobody audits it. So listing runs with no grants at all.
        let no_grants = Arc::new(Grants::default());
        let run = sandbox::run(self.engine, &pre, label, &manifest.limits, no_grants, Operation::ListTools).await;
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
            compile_time: time,
            from_cache,
            manifest: manifest_path.map(Path::to_owned),
            limits: manifest.limits,
            grants,
            requires_approval: manifest.requires_approval,
            pre,
        })
    }

    /// Compiles component bytes, or loads their native code from the compile cache.
    /// CPU-heavy on a miss: runs on the blocking pool.
    pub async fn compile(&self, path: &Path, bytes: Vec<u8>) -> Result<Compiled, LoadError> {
        check_preamble(&bytes).map_err(|kind| LoadError::new(path, kind))?;
        let hash = content_hash(&bytes);
        let size = bytes.len() as u64;
        let started = Instant::now();
        if let Some(cache) = self.cache
            && let Ok(component) = cache.get(self.engine, &hash)
        {
            return Ok(Compiled { component, hash, size, time: started.elapsed(), from_cache: true });
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
        Ok(Compiled { component, hash, size, time, from_cache: false })
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
