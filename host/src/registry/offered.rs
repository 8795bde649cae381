//! The prompts and resources served: every loaded component's, merged by layer precedence.
//!
//! Prompts merge like tools ([`merge`]): by full name `namespace/prompt`, a higher
//! layer shadowing a lower one, stdlib prompts also answering to their bare names.
//! Resources merge by URI: the first component in precedence order (highest layer,
//! then file order) that declares a URI serves it. Templates are tried in that order.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use super::Layer;
use super::merge::{Offer, merge};
use crate::manifest::Offered;
use crate::names;
use crate::prompt::Prompt;
use crate::resource::{Resource, ResourceTemplate};

/// A prompt as served.
#[derive(Debug, Clone)]
pub struct PromptEntry {
    /// `namespace/prompt`.
    pub full_name: String,
    /// The namespace it is served in: an agent that sees a tool of it sees the prompt.
    pub namespace: String,
    /// Index of its layer.
    pub layer: usize,
    offered: Arc<Offered>,
    index: usize,
}

impl PromptEntry {
    /// The prompt.
    pub fn prompt(&self) -> &Prompt {
        &self.offered.prompts[self.index]
    }
}

/// A fixed resource, or a resource template, as served.
#[derive(Debug, Clone)]
pub struct ResourceEntry {
    /// The namespace it is served in: an agent that sees a tool of it sees the resource.
    pub namespace: String,
    /// Index of its layer.
    pub layer: usize,
    offered: Arc<Offered>,
    index: usize,
}

impl ResourceEntry {
    /// The fixed resource (of an entry in [`ServedOffers::resources`]).
    pub fn resource(&self) -> &Resource {
        &self.offered.resources[self.index]
    }

    /// The template (of an entry in [`ServedOffers::templates`]).
    pub fn template(&self) -> &ResourceTemplate {
        &self.offered.templates[self.index]
    }

    /// What its component's manifest offers: the component it belongs to.
    pub(crate) fn offered(&self) -> &Arc<Offered> {
        &self.offered
    }
}

/// What one loaded component offers, and where it sits.
pub(crate) struct OfferedBy<'a> {
    /// Index of its layer.
    pub layer: usize,
    /// Its namespace.
    pub namespace: &'a str,
    /// Its file, which orders components of one layer.
    pub path: &'a Path,
    /// Its manifest's prompts and resources.
    pub offered: &'a Arc<Offered>,
}

/// Every prompt and resource served.
#[derive(Debug, Clone, Default)]
pub struct ServedOffers {
    /// Prompts by full name.
    pub prompts: BTreeMap<String, PromptEntry>,
    /// Bare names of stdlib prompts, to full names (never ambiguous).
    pub prompt_bare_names: HashMap<String, String>,
    /// Fixed resources by URI.
    pub resources: BTreeMap<String, ResourceEntry>,
    /// Resource templates, in precedence order.
    pub templates: Vec<ResourceEntry>,
}

impl ServedOffers {
    /// Merges the offers of the loaded components.
    pub(crate) fn merge(layers: &[Layer], mut loaded: Vec<OfferedBy<'_>>) -> ServedOffers {
        loaded.sort_by(|a, b| (a.layer, a.path).cmp(&(b.layer, b.path)));
        let entry = |by: &OfferedBy<'_>, index| ResourceEntry {
            namespace: by.namespace.to_owned(),
            layer: by.layer,
            offered: Arc::clone(by.offered),
            index,
        };
        let mut served = ServedOffers::default();
        for by in &loaded {
            for (index, resource) in by.offered.resources.iter().enumerate() {
                served.resources.entry(resource.uri.clone()).or_insert_with(|| entry(by, index));
            }
            served.templates.extend((0..by.offered.templates.len()).map(|index| entry(by, index)));
        }
        let offers: Vec<Offer<'_>> = loaded
            .iter()
            .map(|by| Offer {
                layer: by.layer,
                namespace: by.namespace,
                tools: by.offered.prompts.iter().map(|prompt| prompt.name.as_str()).collect(),
            })
            .collect();
        let merged = merge(&offers, |layer| layers.get(layer).is_some_and(|layer| layer.stdlib));
        for (full_name, winner) in merged.winners {
            let by = &loaded[winner.offer];
            let prompt = PromptEntry {
                full_name: full_name.clone(),
                namespace: by.namespace.to_owned(),
                layer: by.layer,
                offered: Arc::clone(by.offered),
                index: winner.tool,
            };
            served.prompts.insert(full_name, prompt);
        }
        served.prompt_bare_names = merged.bare_names;
        served
    }

    /// The prompt `name` means: a full name, a stdlib prompt's bare name, or the name
    /// MCP clients see (`namespace.prompt`).
    pub fn find_prompt(&self, name: &str) -> Option<&PromptEntry> {
        let full = self.prompt_bare_names.get(name).cloned().or_else(|| names::unmap(name));
        self.prompts.get(name).or_else(|| full.and_then(|full| self.prompts.get(&full)))
    }

    /// What serves `uri` among the entries `visible` keeps (told whether an entry is a
    /// template): a fixed resource, or the first template it matches with the values of
    /// its variables.
    pub fn find_resource(
        &self,
        uri: &str,
        visible: impl Fn(&ResourceEntry, bool) -> bool,
    ) -> Option<(&ResourceEntry, Option<BTreeMap<String, String>>)> {
        if let Some(entry) = self.resources.get(uri).filter(|entry| visible(entry, false)) {
            return Some((entry, None));
        }
        self.templates
            .iter()
            .filter(|entry| visible(entry, true))
            .find_map(|entry| entry.template().uri_template.matches(uri).map(|values| (entry, Some(values))))
    }

    /// URIs of fixed resources that `new` still serves, with another body or media type
    /// (a URI no longer served is a change of the list).
    pub fn updated_resources(&self, new: &ServedOffers) -> Vec<String> {
        self.resources
            .iter()
            .filter(|(uri, old)| {
                new.resources.get(*uri).is_some_and(|now| {
                    let (before, after) = (old.resource(), now.resource());
                    before.body != after.body || before.mime_type != after.mime_type
                })
            })
            .map(|(uri, _)| uri.clone())
            .collect()
    }

    /// Whether `new` lists other prompts than this.
    pub fn prompts_differ(&self, new: &ServedOffers) -> bool {
        self.prompts.len() != new.prompts.len()
            || self
                .prompts
                .iter()
                .any(|(name, entry)| new.prompts.get(name).is_none_or(|now| now.prompt() != entry.prompt()))
    }

    /// Whether `new` lists other resources or templates than this (any of what a list
    /// shows, the size included, or the namespace that decides who sees them).
    pub fn resources_differ(&self, new: &ServedOffers) -> bool {
        let listed = |served: &ServedOffers| {
            let fixed = served.resources.values().map(|e| {
                let r = e.resource();
                let shown = (r.name.clone(), r.title.clone(), r.description.clone(), Some(r.mime_type.clone()));
                (e.namespace.clone(), r.uri.clone(), shown, Some(r.body.len()))
            });
            let templates = served.templates.iter().map(|e| {
                let t = e.template();
                let shown = (t.name.clone(), t.title.clone(), t.description.clone(), t.mime_type.clone());
                (e.namespace.clone(), t.uri_template.as_str().to_owned(), shown, None)
            });
            fixed.chain(templates).collect::<Vec<_>>()
        };
        listed(self) != listed(new)
    }
}
