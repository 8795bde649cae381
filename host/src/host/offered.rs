//! What a host offers beside its tools: prompts, resources and completions, for a caller.
//!
//! An agent sees the prompts and resources of the namespaces whose tools it may see
//! (its policy and session tool set decide, as for tools). A template's resource is
//! read by calling its tool through the whole call pipeline, as the caller: policy,
//! approval, limits, validation and the audit record all apply.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{CallOptions, ToolHost};
use crate::content::{Content, ResourceContents};
use crate::error::OfferError;
use crate::names;
use crate::policy::Caller;
use crate::prompt::{Role, complete_among};
use crate::registry::{PromptEntry, ResourceEntry, Snapshot, ToolEntry};
use crate::resource::{Body, ResourceContent};
use crate::sources::ToolSource;

/// What a completion is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionTarget {
    /// An argument of the prompt of this name (any name form).
    Prompt(String),
    /// A variable of the resource template written so (`weather://forecast/{city}`).
    ResourceTemplate(String),
}

/// Completions of an argument: at most 100 values, and how many matched in all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completions {
    /// The values, best first.
    pub values: Vec<String>,
    /// How many values matched.
    pub total: usize,
}

/// What one caller may see of a snapshot's prompts and resources.
struct Sight<'a> {
    host: &'a ToolHost,
    snapshot: &'a Snapshot,
    caller: &'a Caller,
    /// The namespaces of the tools the caller may see.
    namespaces: BTreeSet<String>,
}

impl<'a> Sight<'a> {
    fn new(host: &'a ToolHost, snapshot: &'a Snapshot, caller: &'a Caller) -> Sight<'a> {
        let visible = snapshot.tools.values().filter(|entry| host.access(caller, entry).is_ok());
        let namespaces = visible.map(|entry| entry.namespace.clone()).collect();
        Sight { host, snapshot, caller, namespaces }
    }

    /// A prompt or fixed resource is seen with its namespace; a template also needs its
    /// tool: served from the template's own component (not shadowed by another one) and
    /// callable by the caller.
    fn sees(&self, entry: &ResourceEntry, is_template: bool) -> bool {
        self.namespaces.contains(&entry.namespace) && (!is_template || self.reader(entry).is_some())
    }

    /// The tool that reads a template's resources, when the caller may call it.
    fn reader(&self, entry: &ResourceEntry) -> Option<&'a ToolEntry> {
        let tool = self.snapshot.tools.get(&names::full_name(&entry.namespace, &entry.template().tool))?;
        let ToolSource::Component { component, .. } = &tool.source else { return None };
        let own = Arc::ptr_eq(&component.offered, entry.offered());
        (own && self.host.access(self.caller, tool).is_ok()).then_some(tool)
    }

    fn prompt(&self, name: &str) -> Result<PromptEntry, OfferError> {
        let found = self.snapshot.offered.find_prompt(name).filter(|entry| self.namespaces.contains(&entry.namespace));
        found.cloned().ok_or_else(|| OfferError::PromptNotFound { name: name.to_owned() })
    }
}

impl ToolHost {
    /// The prompts `caller` may see, by full name.
    pub fn prompts(&self, caller: &Caller) -> Vec<PromptEntry> {
        let snapshot = self.snapshot.load();
        let sight = Sight::new(self, &snapshot, caller);
        snapshot.offered.prompts.values().filter(|entry| sight.namespaces.contains(&entry.namespace)).cloned().collect()
    }

    /// The prompt `name` (any name form) with `arguments` substituted.
    pub fn get_prompt(
        &self,
        caller: &Caller,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<(PromptEntry, Vec<(Role, Content)>), OfferError> {
        let snapshot = self.snapshot.load();
        let entry = Sight::new(self, &snapshot, caller).prompt(name)?;
        let messages = entry
            .prompt()
            .render(arguments)
            .map_err(|problem| OfferError::InvalidArguments { prompt: entry.full_name.clone(), problem })?;
        Ok((entry, messages))
    }

    /// The fixed resources `caller` may see, by URI.
    pub fn resources(&self, caller: &Caller) -> Vec<ResourceEntry> {
        let snapshot = self.snapshot.load();
        let sight = Sight::new(self, &snapshot, caller);
        snapshot.offered.resources.values().filter(|entry| sight.sees(entry, false)).cloned().collect()
    }

    /// The resource templates `caller` may read, in precedence order.
    pub fn resource_templates(&self, caller: &Caller) -> Vec<ResourceEntry> {
        let snapshot = self.snapshot.load();
        let sight = Sight::new(self, &snapshot, caller);
        snapshot.offered.templates.iter().filter(|entry| sight.sees(entry, true)).cloned().collect()
    }

    /// Whether `caller` may read `uri`: a resource it sees has it, or a template it may
    /// read matches it.
    pub fn may_read_resource(&self, caller: &Caller, uri: &str) -> bool {
        let snapshot = self.snapshot.load();
        let sight = Sight::new(self, &snapshot, caller);
        snapshot.offered.find_resource(uri, |entry, is_template| sight.sees(entry, is_template)).is_some()
    }

    /// Of the `(uri, caller)` subscriptions, the URIs their caller may read: what each
    /// caller sees is worked out once, however many URIs it subscribed to.
    pub fn readable_resources<'s>(
        &self,
        subscriptions: impl IntoIterator<Item = (&'s str, &'s Caller)>,
    ) -> BTreeSet<String> {
        let snapshot = self.snapshot.load();
        let mut sights: Vec<Sight<'_>> = Vec::new();
        let mut readable = BTreeSet::new();
        for (uri, caller) in subscriptions {
            let index = match sights.iter().position(|sight| sight.caller == caller) {
                Some(index) => index,
                None => {
                    sights.push(Sight::new(self, &snapshot, caller));
                    sights.len() - 1
                }
            };
            let sight = &sights[index];
            if snapshot.offered.find_resource(uri, |entry, is_template| sight.sees(entry, is_template)).is_some() {
                readable.insert(uri.to_owned());
            }
        }
        readable
    }

    /// Reads the resource at `uri`: a fixed one's contents, or what the tool behind the
    /// template it matches returns when called with its variables (its output, then
    /// its content blocks). A URI the caller may not read is not found.
    pub async fn read_resource(
        &self,
        caller: &Caller,
        uri: &str,
        options: &CallOptions,
    ) -> Result<Vec<ResourceContent>, OfferError> {
        let (entry, input) = {
            let snapshot = self.snapshot.load();
            let sight = Sight::new(self, &snapshot, caller);
            let found = snapshot.offered.find_resource(uri, |entry, is_template| sight.sees(entry, is_template));
            let (entry, values) = found.ok_or_else(|| OfferError::ResourceNotFound { uri: uri.to_owned() })?;
            let input = values.map(|values| template_input(sight.reader(entry), values));
            (entry.clone(), input)
        };
        let Some(input) = input else {
            let resource = entry.resource();
            let (uri, mime_type) = (resource.uri.clone(), Some(resource.mime_type.clone()));
            return Ok(vec![ResourceContent { uri, mime_type, body: resource.body.clone() }]);
        };
        let template = entry.template();
        let tool = names::full_name(&entry.namespace, &template.tool);
        let report = self.call_with(caller, &tool, input, options).await;
        let output = report.outcome.map_err(|error| OfferError::Read { uri: uri.to_owned(), error })?;
        Ok(read_contents(uri, template.mime_type.as_deref(), output, report.content))
    }

    /// Completions of `argument` of `target` that begin with `typed`: a prompt
    /// argument's listed values, or the `enum` of the input property a template's
    /// variable fills.
    pub fn complete(
        &self,
        caller: &Caller,
        target: &CompletionTarget,
        argument: &str,
        typed: &str,
    ) -> Result<Completions, OfferError> {
        let snapshot = self.snapshot.load();
        let sight = Sight::new(self, &snapshot, caller);
        let (values, total) = match target {
            CompletionTarget::Prompt(name) => sight.prompt(name)?.prompt().complete(argument, typed),
            CompletionTarget::ResourceTemplate(written) => {
                let entry = snapshot
                    .offered
                    .templates
                    .iter()
                    .find(|entry| entry.template().uri_template.as_str() == written && sight.sees(entry, true))
                    .ok_or_else(|| OfferError::ResourceNotFound { uri: written.clone() })?;
                let is_variable = entry.template().uri_template.variables().any(|name| name == argument);
                let listed = sight.reader(entry).filter(|_| is_variable).map(|tool| {
                    let schema = tool.def().input_schema().json();
                    let values =
                        schema.pointer(&format!("/properties/{argument}/enum")).and_then(Value::as_array).cloned();
                    values
                        .unwrap_or_default()
                        .into_iter()
                        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                });
                complete_among(&listed.into_iter().flatten().collect::<Vec<_>>(), typed)
            }
        };
        Ok(Completions { values, total })
    }
}

/// A template's variables as the input of its tool: a variable the tool's schema types
/// as a number, an integer or a boolean is passed as one when it parses as one.
fn template_input(reader: Option<&ToolEntry>, values: BTreeMap<String, String>) -> Value {
    let schema = reader.map(|tool| tool.def().input_schema().json()).unwrap_or_default();
    let input: Map<String, Value> = values
        .into_iter()
        .map(|(name, text)| {
            let typed = match schema.pointer(&format!("/properties/{name}/type")).and_then(Value::as_str) {
                Some("integer" | "number" | "boolean") => {
                    serde_json::from_str(&text).ok().filter(|v: &Value| !v.is_string())
                }
                _ => None,
            };
            (name, typed.unwrap_or(Value::String(text)))
        })
        .collect();
    Value::Object(input)
}

/// A template read's contents: the tool's output (a string as its text, other JSON as
/// JSON text), then its content blocks (resource links are left out: they are not
/// contents).
fn read_contents(uri: &str, mime_type: Option<&str>, output: Value, blocks: Vec<Content>) -> Vec<ResourceContent> {
    let part = |mime_type: Option<&str>, body| ResourceContent {
        uri: uri.to_owned(),
        mime_type: mime_type.map(str::to_owned),
        body,
    };
    let mut contents = Vec::new();
    match output {
        Value::Null => {}
        Value::String(text) => contents.push(part(Some(mime_type.unwrap_or("text/plain")), Body::Text(text.into()))),
        json => contents.push(part(Some(mime_type.unwrap_or("application/json")), Body::Text(json.to_string().into()))),
    }
    for block in blocks {
        contents.push(match block {
            Content::Text(text) => part(Some("text/plain"), Body::Text(text.into())),
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                part(Some(&mime_type), Body::Blob(data.into()))
            }
            Content::Resource { uri, mime_type, contents } => ResourceContent {
                uri,
                mime_type,
                body: match contents {
                    ResourceContents::Text(text) => Body::Text(text.into()),
                    ResourceContents::Blob(data) => Body::Blob(data.into()),
                },
            },
            Content::ResourceLink { .. } => continue,
        });
    }
    contents
}
