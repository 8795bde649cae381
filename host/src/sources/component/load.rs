//! From a component file to a served [`LoadedComponent`]: its bytes checked, its code compiled, its tools read.
//!
//! All the expensive work of a tool happens here, once, off the call path. A component
//! exporting the toolbox contract lists its tools (in a sandbox, with no grants); any
//! other component is read for plain exported functions ([`super::plain`]), and runs no
//! code at load at all.

use std::path::Path;
use std::sync::Arc;

use wasmtime::component::{Component, InstancePre};

use super::code::{Code, CodeKind, Resident};
use super::compile::Compiled;
use super::optimize::Upgrade;
use super::{Components, Contract, LoadedComponent, imports, plain};
use crate::contract::{self, ContractCheck, GuestToolInfo, PluginPre};
use crate::error::{LoadError, LoadErrorKind};
use crate::manifest::Manifest;
use crate::runtime::{Tier, TierEngine, Tiering};
use crate::sandbox::SandboxState;
use crate::tool::{DeclaredOutput, ToolDef, check_set};
use crate::trust::{self, Pin, Verified};

/// How a linked component's tools are reached, what they are, and the code that runs them.
struct Linked {
    contract: Contract,
    tools: Vec<ToolDef>,
    plain: Vec<plain::PlainFunction>,
    kind: CodeKind,
}

impl Components {
    /// Loads one component file with the manifest beside it (and its pin in
    /// `toolhost.lock`), to be served, reusing the code of `previous` (the version served
    /// until now) when the bytes are the same: baseline code is queued for the
    /// background compile that replaces it.
    pub(crate) async fn load_file(
        &self,
        path: &Path,
        manifest_path: Option<&Path>,
        lock_pin: Option<&Pin>,
        previous: Option<&LoadedComponent>,
    ) -> Result<Arc<LoadedComponent>, LoadError> {
        let (component, upgrade) = self.read_and_load(path, manifest_path, lock_pin, previous).await?;
        let component = Arc::new(component);
        if let (Some(upgrade), Some(optimizer)) = (upgrade, &self.optimizer) {
            optimizer.enqueue(&component, upgrade);
        }
        Ok(component)
    }

    /// Loads one component file with the manifest beside it (and its pin in
    /// `toolhost.lock`), to be looked at, not served.
    pub(crate) async fn inspect_file(&self, path: &Path, lock_pin: Option<&Pin>) -> Result<LoadedComponent, LoadError> {
        let manifest = path.with_extension("toml");
        let manifest = manifest.is_file().then_some(manifest.as_path());
        self.read_and_load(path, manifest, lock_pin, None).await.map(|(component, _)| component)
    }

    async fn read_and_load(
        &self,
        path: &Path,
        manifest_path: Option<&Path>,
        lock_pin: Option<&Pin>,
        previous: Option<&LoadedComponent>,
    ) -> Result<(LoadedComponent, Option<Upgrade>), LoadError> {
        let manifest = match manifest_path {
            // A manifest reads the files its prompts and resources hold (bounded): off
            // the async workers.
            Some(manifest_path) => {
                let (file, defaults, ceilings) = (manifest_path.to_owned(), self.defaults, self.runtime.ceilings());
                crate::runtime::blocking(move || Manifest::load(&file, defaults, ceilings)).await.map_err(|e| {
                    LoadError::new(manifest_path, LoadErrorKind::Io(format!("reading the manifest stopped: {e}")))
                })??
            }
            None => Manifest::default_for(self.defaults),
        };
        let bytes = tokio::fs::read(path).await.map_err(|e| LoadError::new(path, LoadErrorKind::Io(e.to_string())))?;
        let manifest_pin =
            manifest.sha256.zip(manifest_path).map(|(sha256, by)| Pin { sha256, by: by.to_owned(), signed_by: None });
        let pins: Vec<Pin> = manifest_pin.into_iter().chain(lock_pin.cloned()).collect();
        let (bytes, verified) = self.verify(path, pins, bytes).await?;
        let compiled = match previous.and_then(|previous| Compiled::reused(previous, &bytes)) {
            Some(compiled) => compiled,
            None => self.compile(path, bytes).await?,
        };
        let (mut component, upgrade) = self.finish(path, manifest_path, compiled, manifest).await?;
        component.verified = verified;
        Ok((component, upgrade))
    }

    /// Checks the bytes just read against their pins (the manifest's, `toolhost.lock`'s)
    /// and the host's signing keys ([`crate::trust`]) before anything treats them as
    /// code: not the compile cache, not the reuse of the code served until now, not a
    /// compile. Off the executor: one SHA-256 pass over a large component takes
    /// milliseconds.
    async fn verify(
        &self,
        path: &Path,
        pins: Vec<Pin>,
        bytes: Vec<u8>,
    ) -> Result<(Vec<u8>, Option<Verified>), LoadError> {
        if pins.is_empty() && !self.signing_keys.required() {
            return Ok((bytes, None));
        }
        let (keys, file) = (self.signing_keys.clone(), path.to_owned());
        let checked = crate::runtime::blocking(move || {
            let verified = trust::verify(&file, &bytes, &pins, &keys);
            (bytes, verified)
        })
        .await;
        match checked {
            Ok((bytes, Ok(verified))) => Ok((bytes, verified)),
            Ok((_, Err(kind))) => Err(LoadError::new(path, kind)),
            Err(e) => Err(LoadError::new(path, LoadErrorKind::Invalid(format!("the check of its bytes failed: {e}")))),
        }
    }

    /// Links compiled code and reads its tools: through the toolbox contract
    /// (`list-tools`, run in a sandbox with the component's limits and no grants) or,
    /// without it, from its plain exported functions. Baseline code comes back with the
    /// [`Upgrade`] that replaces it.
    async fn finish(
        &self,
        path: &Path,
        manifest_path: Option<&Path>,
        compiled: Compiled,
        manifest: Manifest,
    ) -> Result<(LoadedComponent, Option<Upgrade>), LoadError> {
        let error = |kind| LoadError::new(path, kind);
        let Compiled { component, tier, hash, size, time, from_cache, cached, bytes, docs } = compiled;
        let engine = self.runtime.engine(tier);
        let interfaces = imports::interfaces(&engine.engine, &component);
        let instance_pre = match engine.linker.instantiate_pre(&component) {
            Ok(instance_pre) => instance_pre,
            Err(e) => return Err(error(imports::link_error(&e, interfaces))),
        };
        let imports = interfaces.imports;
        let Linked { contract, mut tools, plain, kind } =
            self.link((path, &hash), engine, &component, instance_pre, &docs, &manifest).await.map_err(error)?;
        apply_manifest(&mut tools, &manifest).map_err(error)?;
        let code = Code { tier, engine: engine.engine.clone(), kind };
        let upgrade = match (tier, bytes) {
            (Tier::Baseline, Some(bytes)) if self.runtime.tiering() == Tiering::Tiered => Some(Upgrade { bytes }),
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
            offered: Arc::new(manifest.offered),
            plain,
            resident: Resident::new(code, cached),
            verified: None,
        };
        Ok((loaded, upgrade))
    }

    /// The tools of linked code, by the contract it exports (or its plain functions).
    async fn link(
        &self,
        (path, hash): (&Path, &str),
        engine: &TierEngine,
        component: &Component,
        instance_pre: InstancePre<SandboxState>,
        docs: &plain::Docs,
        manifest: &Manifest,
    ) -> Result<Linked, LoadErrorKind> {
        match contract::check(&engine.engine, component) {
            ContractCheck::Supported { version } => {
                let pre = PluginPre::new(instance_pre).map_err(|e| LoadErrorKind::Link(format!("{e:#}")))?;
                let tools = describe_tools(self.listed_tools(path, hash, engine, &pre, manifest).await?)?;
                Ok(Linked {
                    contract: Contract::Toolbox { version },
                    tools,
                    plain: Vec::new(),
                    kind: CodeKind::Toolbox(pre),
                })
            }
            ContractCheck::Unsupported { version } => Err(LoadErrorKind::IncompatibleContract {
                wanted: format!("{}@{version}", contract::PACKAGE),
                supported: contract::supported_versions(),
            }),
            ContractCheck::Missing => {
                let reflected = plain::reflect(&engine.engine, component, docs);
                if reflected.tools.is_empty() {
                    return Err(LoadErrorKind::NoTools { skipped: reflected.skipped });
                }
                check_set(reflected.tools.iter().map(|tool| tool.def.name())).map_err(LoadErrorKind::Tool)?;
                let (mut tools, mut functions, mut calls) = (Vec::new(), Vec::new(), Vec::new());
                for tool in reflected.tools {
                    tools.push(tool.def);
                    functions.push(tool.function);
                    calls.push(tool.call);
                }
                let contract = Contract::Plain { skipped: reflected.skipped };
                Ok(Linked { contract, tools, plain: functions, kind: CodeKind::Plain { pre: instance_pre, calls } })
            }
        }
    }
}

/// A toolbox's tools as it lists them, each made by the one constructor every source's
/// tools go through.
fn describe_tools(infos: Vec<GuestToolInfo>) -> Result<Vec<ToolDef>, LoadErrorKind> {
    if infos.is_empty() {
        return Err(LoadErrorKind::ListTools("the component lists no tools".into()));
    }
    check_set(infos.iter().map(|info| info.name.as_str())).map_err(LoadErrorKind::Tool)?;
    infos
        .iter()
        .map(|info| {
            let output = DeclaredOutput::Json(&info.output_schema);
            ToolDef::new(&info.name, &info.description, &info.input_schema, output).map_err(LoadErrorKind::Tool)
        })
        .collect()
}

/// The manifest's limits and policy on every tool, and its `[tools.NAME]` settings over
/// the component's own description; a name the component does not offer is an error,
/// not a silent no-op.
fn apply_manifest(tools: &mut [ToolDef], manifest: &Manifest) -> Result<(), LoadErrorKind> {
    if let Some(name) = manifest.tools.keys().find(|name| !tools.iter().any(|tool| tool.name() == name.as_str())) {
        let offered: Vec<&str> = tools.iter().map(ToolDef::name).collect();
        return Err(LoadErrorKind::BadTool {
            tool: name.clone(),
            problem: format!(
                "the manifest has settings for it, but the component offers no such tool (it offers {})",
                offered.join(", ")
            ),
        });
    }
    let reader = manifest.offered.templates.iter().find(|t| !tools.iter().any(|tool| tool.name() == t.tool));
    if let Some(template) = reader {
        return Err(LoadErrorKind::BadTool {
            tool: template.tool.clone(),
            problem: format!(
                "the resource template `{}` is read by it, but the component offers no such tool",
                template.uri_template.as_str()
            ),
        });
    }
    for tool in tools {
        tool.limits = manifest.limits_of(tool.name());
        tool.policy = manifest.policy_of(tool.name());
        if let Some(description) = manifest.tools.get(tool.name()).and_then(|settings| settings.description.as_ref()) {
            tool.set_description(description).map_err(LoadErrorKind::Tool)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{MAX_SCHEMA_BYTES, MAX_TOOLS};

    fn info(name: &str, schema: &str) -> GuestToolInfo {
        GuestToolInfo {
            name: name.into(),
            description: "A tool.".into(),
            input_schema: schema.into(),
            output_schema: "{}".into(),
        }
    }

    #[test]
    fn what_a_component_lists_obeys_the_tool_rules() {
        let many: Vec<_> = (0..=MAX_TOOLS).map(|i| info(&format!("tool{i}"), "{}")).collect();
        let error = describe_tools(many).unwrap_err().to_string();
        assert_eq!(error, "it offers 257 tools; at most 256 are served from one source");

        let huge = format!(r#"{{"description":"{}"}}"#, "x".repeat(MAX_SCHEMA_BYTES));
        let error = describe_tools(vec![info("big", &huge)]).unwrap_err().to_string();
        assert_eq!(error, "tool `big`: its input schema is 262162 bytes; at most 262144 are accepted");

        let error = describe_tools(vec![info("twice", "{}"), info("twice", "{}")]).unwrap_err().to_string();
        assert_eq!(error, "tool `twice`: it is offered twice");
        assert!(describe_tools(vec![info("fits", "{}")]).is_ok());
    }
}
