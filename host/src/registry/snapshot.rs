//! The immutable view of everything served: every source's tools merged by layer precedence.
//!
//! The immutable view of everything served: the tools of every loaded component and
//! native tool, merged by layer precedence.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use super::Layer;
use super::discovery::{FileStamp, Fingerprint};
use super::merge::{Offer, merge};
use super::offered::{OfferedBy, ServedOffers};
use crate::error::{CallError, LoadError, LoadErrorKind};
use crate::names::{self, NameForm};
use crate::sources::{HttpTool, LoadedComponent, NativeTool, ToolSource, UpstreamTool};
use crate::tool::{Overridden, ToolDef};

/// A component file of a root: the version being served, and why its current file is
/// not (a failed load keeps the last good version serving).
#[derive(Debug, Clone)]
pub struct ComponentSlot {
    /// Index of its layer in [`Snapshot::layers`].
    pub layer: usize,
    /// The namespace directory it sits in.
    pub namespace: String,
    /// The component file.
    pub path: PathBuf,
    /// Its manifest, when one sits beside it.
    pub manifest: Option<PathBuf>,
    /// What the files looked like when this slot was loaded; a reload reuses the slot
    /// while it is unchanged.
    pub(crate) fingerprint: Fingerprint,
    /// The version being served, if any version ever loaded.
    pub loaded: Option<Arc<LoadedComponent>>,
    /// Why the file as it is now is not served.
    pub error: Option<LoadError>,
}

/// An HTTP tool definition file of a root: the version being served, and why its
/// current file is not (a failed load keeps the last good version serving).
#[derive(Debug, Clone)]
pub struct HttpSlot {
    /// Index of its layer in [`Snapshot::layers`].
    pub layer: usize,
    /// The namespace directory it sits in.
    pub namespace: String,
    /// The definition file.
    pub path: PathBuf,
    /// What the file looked like when this slot was loaded; a reload reuses the slot
    /// while it is unchanged.
    pub(crate) stamp: Option<FileStamp>,
    /// The version being served, if any version ever loaded.
    pub loaded: Option<Arc<HttpTool>>,
    /// Why the file as it is now is not served.
    pub error: Option<LoadError>,
}

/// A tool as served: what answers it, from which layer, and what it hides.
#[derive(Debug, Clone)]
pub struct ToolEntry {
    /// `namespace/tool`.
    pub full_name: String,
    /// The namespace it is served in.
    pub namespace: String,
    /// What answers its calls.
    pub source: ToolSource,
    /// Index of its layer in [`Snapshot::layers`].
    pub layer: usize,
    /// Lower layers' tools of the same full name that this one shadows.
    pub overrides: Vec<Overridden>,
}

impl ToolEntry {
    /// The tool's definition.
    pub fn def(&self) -> &ToolDef {
        self.source.def()
    }
}

/// Two tools of one layer have the same full name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    /// The name both have.
    pub full_name: String,
    /// The layer both are in.
    pub layer: String,
    /// Where the served one comes from (component files sort first, by name, then
    /// native tools).
    pub kept: String,
    /// Where the one not served comes from.
    pub ignored: String,
}

/// A native tool registered in a layer.
#[derive(Debug, Clone)]
pub struct NativeSlot {
    /// Index of its layer in [`Snapshot::layers`].
    pub layer: usize,
    /// The tool.
    pub tool: Arc<NativeTool>,
}

/// A tool of an upstream MCP server, served in a layer.
#[derive(Debug, Clone)]
pub struct UpstreamSlot {
    /// Index of its layer in [`Snapshot::layers`].
    pub layer: usize,
    /// The tool.
    pub tool: Arc<UpstreamTool>,
}

/// An immutable view of everything served. Calls hold an `Arc` to the snapshot they
/// started on, so a reload never changes a call midway.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Counts the snapshots a host published: 0 for the first, then one more per
    /// reload or registration. A cache of anything derived from a snapshot is keyed by it.
    pub generation: u64,
    /// The layers, highest precedence first.
    pub layers: Vec<Layer>,
    /// Every served tool by full name.
    pub tools: BTreeMap<String, ToolEntry>,
    /// Bare names of stdlib tools, to full names. Names exported by two stdlib
    /// namespaces are ambiguous and left out.
    pub bare_names: HashMap<String, String>,
    /// Every component file found, loaded or not.
    pub components: Vec<ComponentSlot>,
    /// Every native tool registered, by layer and name.
    pub natives: Vec<NativeSlot>,
    /// Every HTTP tool definition found, loaded or not.
    pub http_tools: Vec<HttpSlot>,
    /// Every tool of the upstream MCP servers, by layer and name.
    pub upstreams: Vec<UpstreamSlot>,
    /// Names two tools of one layer both have.
    pub conflicts: Vec<Conflict>,
    /// The prompts and resources the loaded components offer.
    pub offered: ServedOffers,
    /// Problems found while discovering (bad names, unreadable directories).
    pub discovery_errors: Vec<LoadError>,
    /// Problems of tool sources that are not files (upstream MCP servers).
    pub source_errors: Vec<LoadError>,
}

/// What a snapshot is made of, before merging.
pub(crate) struct Parts {
    pub generation: u64,
    pub layers: Vec<Layer>,
    pub components: Vec<ComponentSlot>,
    pub natives: Vec<NativeSlot>,
    pub http_tools: Vec<HttpSlot>,
    pub upstreams: Vec<UpstreamSlot>,
    pub discovery_errors: Vec<LoadError>,
    pub source_errors: Vec<LoadError>,
}

impl Snapshot {
    /// Merges what every source offers by layer (highest first; in a layer, component
    /// files by name, then HTTP tools, native tools and upstream tools by name);
    /// [`merge`] decides precedence.
    pub(crate) fn build(mut parts: Parts) -> Snapshot {
        parts.natives.sort_by_key(|native| (native.layer, native.tool.full_name()));
        parts.upstreams.sort_by_key(|upstream| (upstream.layer, upstream.tool.full_name()));
        let (tools, conflicts, bare_names) = merged(&parts);
        log_shadowing(&parts.layers, &tools, &conflicts);
        let loaded = parts.components.iter().filter_map(|slot| {
            let component = slot.loaded.as_ref()?;
            let (layer, namespace, path) = (slot.layer, slot.namespace.as_str(), slot.path.as_path());
            Some(OfferedBy { layer, namespace, path, offered: &component.offered })
        });
        let offered = ServedOffers::merge(&parts.layers, loaded.collect());
        let Parts { generation, layers, components, natives, http_tools, upstreams, discovery_errors, source_errors } =
            parts;
        Snapshot {
            generation,
            layers,
            tools,
            bare_names,
            components,
            natives,
            http_tools,
            upstreams,
            conflicts,
            offered,
            discovery_errors,
            source_errors,
        }
    }

    /// The parts of this snapshot, to build the next one from.
    pub(crate) fn parts(&self) -> Parts {
        Parts {
            generation: self.generation,
            layers: self.layers.clone(),
            components: self.components.clone(),
            natives: self.natives.clone(),
            http_tools: self.http_tools.clone(),
            upstreams: self.upstreams.clone(),
            discovery_errors: self.discovery_errors.clone(),
            source_errors: self.source_errors.clone(),
        }
    }

    /// Finds a tool by full name, by bare name for the stdlib layer, or by an exported
    /// name (`ns__tool`, `ns.tool`).
    pub fn resolve(&self, name: &str) -> Result<&ToolEntry, CallError> {
        self.resolve_form(name).map(|(entry, _)| entry)
    }

    /// [`Snapshot::resolve`], also telling which form the name was in.
    pub fn resolve_form(&self, name: &str) -> Result<(&ToolEntry, NameForm), CallError> {
        self.find(name)
            .ok_or_else(|| CallError::NotFound { name: name.to_owned(), suggestions: self.close_matches(name) })
    }

    /// The tool `name` means in any name form, and the form.
    pub fn find(&self, name: &str) -> Option<(&ToolEntry, NameForm)> {
        if let Some(entry) = self.tools.get(name) {
            return Some((entry, NameForm::Full));
        }
        if let Some(entry) = self.bare_names.get(name).and_then(|full| self.tools.get(full)) {
            return Some((entry, NameForm::Bare));
        }
        names::unmap(name).and_then(|full| self.tools.get(&full)).map(|entry| (entry, NameForm::Exported))
    }

    /// The load error of a file in the namespace `name` (any name form) refers to, or of
    /// its directory: what would have served a tool missing from the snapshot.
    pub fn load_error_in_namespace_of(&self, name: &str) -> Option<&LoadError> {
        let full_name = full_name_of(name)?;
        let (namespace, _tool) = names::split(&full_name)?;
        let components = self.components.iter().filter(|slot| slot.namespace == namespace).map(|slot| &slot.error);
        let http_tools = self.http_tools.iter().filter(|slot| slot.namespace == namespace).map(|slot| &slot.error);
        let is_namespace = |path: &std::path::Path| path.file_name().is_some_and(|dir| dir == namespace);
        let directory = || self.discovery_errors.iter().find(|error| is_namespace(&error.path));
        let server = || self.unreachable_server_of(name).map(|(_, error)| error);
        components.chain(http_tools).find_map(Option::as_ref).or_else(directory).or_else(server)
    }

    /// The load errors of the upstream servers that are not connected, one each.
    pub fn unreachable_servers(&self) -> impl Iterator<Item = &LoadError> {
        self.source_errors.iter().filter(|error| matches!(error.kind, LoadErrorKind::Upstream { .. }))
    }

    /// For a name in the namespace of an upstream server that is not connected: the
    /// name in full, and the server's load error.
    pub fn unreachable_server_of(&self, name: &str) -> Option<(String, &LoadError)> {
        let full_name = full_name_of(name)?;
        let (namespace, _tool) = names::split(&full_name)?;
        let error = self
            .unreachable_servers()
            .find(|error| matches!(&error.kind, LoadErrorKind::Upstream { server, .. } if server == namespace))?;
        Some((full_name, error))
    }

    /// Up to three served names close to `name`, best first.
    pub fn close_matches(&self, name: &str) -> Vec<String> {
        self.close_matches_among(name, |_| true)
    }

    /// Up to three names close to `name` among the served tools `keep` accepts, best
    /// first.
    pub fn close_matches_among(&self, name: &str, keep: impl Fn(&ToolEntry) -> bool) -> Vec<String> {
        let wanted_tool = names::split(name).map_or(name, |(_, tool)| tool);
        let mut scored: Vec<(f64, &String)> = self
            .tools
            .iter()
            .filter(|(_, entry)| keep(entry))
            .map(|(candidate, _)| {
                let candidate_tool = names::split(candidate).map_or(candidate.as_str(), |(_, tool)| tool);
                let score =
                    strsim::jaro_winkler(name, candidate).max(strsim::jaro_winkler(wanted_tool, candidate_tool));
                (score, candidate)
            })
            .filter(|(score, _)| *score >= 0.8)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored.into_iter().take(3).map(|(_, name)| name.clone()).collect()
    }

    /// Every load error of this snapshot: discovery problems, failed components and
    /// failed HTTP tool definitions and failing upstream servers.
    pub fn load_errors(&self) -> impl Iterator<Item = &LoadError> {
        self.discovery_errors
            .iter()
            .chain(self.components.iter().filter_map(|slot| slot.error.as_ref()))
            .chain(self.http_tools.iter().filter_map(|slot| slot.error.as_ref()))
            .chain(&self.source_errors)
    }
}

type SourceOf<'a> = Box<dyn Fn(usize) -> ToolSource + 'a>;

/// The served tools by full name, the conflicts within layers, and the bare names.
fn merged(parts: &Parts) -> (BTreeMap<String, ToolEntry>, Vec<Conflict>, HashMap<String, String>) {
    let layers = &parts.layers;
    let offered = offered(parts);
    let offers: Vec<Offer<'_>> = offered.iter().map(|(offer, _)| offer.clone()).collect();
    let merged = merge(&offers, |layer| layers[layer].stdlib);
    let source = |offer: usize, tool: usize| offered[offer].1(tool);
    let overridden = |offer: usize| {
        let source = source(offer, 0);
        Overridden {
            layer: layers[offers[offer].layer].name.clone(),
            source: source.kind(),
            origin: source.origin(),
            hash: source.hash().map(str::to_owned),
        }
    };
    let tools = merged
        .winners
        .into_iter()
        .map(|(full_name, winner)| {
            let entry = ToolEntry {
                full_name: full_name.clone(),
                namespace: offers[winner.offer].namespace.to_owned(),
                source: source(winner.offer, winner.tool),
                layer: offers[winner.offer].layer,
                overrides: winner.shadows.into_iter().map(overridden).collect(),
            };
            (full_name, entry)
        })
        .collect();
    let conflicts = merged
        .conflicts
        .into_iter()
        .map(|(full_name, kept, ignored)| Conflict {
            full_name,
            layer: layers[offers[kept].layer].name.clone(),
            kept: source(kept, 0).origin(),
            ignored: source(ignored, 0).origin(),
        })
        .collect();
    (tools, conflicts, merged.bare_names)
}

/// Every loaded component, HTTP tool, native tool and upstream tool as an offer to
/// [`merge`], in precedence order, with how to make the [`ToolSource`] of its `n`-th
/// tool.
fn offered(parts: &Parts) -> Vec<(Offer<'_>, SourceOf<'_>)> {
    let mut offered: Vec<(Offer<'_>, SourceOf<'_>)> = Vec::new();
    for layer in 0..parts.layers.len() {
        for slot in parts.components.iter().filter(|slot| slot.layer == layer) {
            let Some(component) = &slot.loaded else { continue };
            let tools = component.tools.iter().map(ToolDef::name).collect();
            let offer = Offer { layer, namespace: &slot.namespace, tools };
            let source = move |index| ToolSource::Component { component: component.clone(), index };
            offered.push((offer, Box::new(source)));
        }
        for slot in parts.http_tools.iter().filter(|slot| slot.layer == layer) {
            let Some(tool) = &slot.loaded else { continue };
            let offer = Offer { layer, namespace: &slot.namespace, tools: vec![tool.def.name()] };
            offered.push((offer, Box::new(move |_| ToolSource::Http(tool.clone()))));
        }
        for native in parts.natives.iter().filter(|native| native.layer == layer) {
            let offer = Offer { layer, namespace: &native.tool.namespace, tools: vec![native.tool.def.name()] };
            offered.push((offer, Box::new(move |_| ToolSource::Native(native.tool.clone()))));
        }
        for upstream in parts.upstreams.iter().filter(|upstream| upstream.layer == layer) {
            let offer = Offer { layer, namespace: &upstream.tool.server, tools: vec![upstream.tool.def.name()] };
            offered.push((offer, Box::new(move |_| ToolSource::Upstream(upstream.tool.clone()))));
        }
    }
    offered
}

/// Every shadowing is worth a line in the operator's log (a layer overriding another
/// is what layers are for: `info`), and every conflict a warning.
fn log_shadowing(layers: &[Layer], tools: &BTreeMap<String, ToolEntry>, conflicts: &[Conflict]) {
    for entry in tools.values() {
        for overridden in &entry.overrides {
            tracing::info!(
                tool = %entry.full_name,
                layer = %layers[entry.layer].name,
                origin = %entry.source.origin(),
                shadows = %overridden.origin,
                shadowed_layer = %overridden.layer,
                "tool shadows a lower layer's tool of the same name"
            );
        }
    }
    for conflict in conflicts {
        tracing::warn!(
            tool = %conflict.full_name,
            layer = %conflict.layer,
            kept = %conflict.kept,
            ignored = %conflict.ignored,
            "two components of one layer export the same tool; the first file by name keeps it"
        );
    }
}

/// `name` in its full form (`namespace/tool`), from the full or an exported form.
fn full_name_of(name: &str) -> Option<String> {
    if name.contains('/') { Some(name.to_owned()) } else { names::unmap(name) }
}
