//! What a host offers beside its tools: prompts, resources and completions, for a caller.
//!
//! An agent sees the prompts and resources of the namespaces whose tools it may see
//! (its policy and session tool set decide, as for tools). A template's resource is
//! read by calling its tool through the whole call pipeline, as the caller: policy,
//! approval, limits, validation and the audit record all apply.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::{CallOptions, ToolHost};
use crate::content::{Content, ResourceContents};
use crate::error::OfferError;
use crate::names;
use crate::policy::Caller;
use crate::prompt::{Role, complete_among};
use crate::registry::{PromptEntry, ResourceEntry, Snapshot};
use crate::resource::{Body, ResourceContent};

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

impl ToolHost {
    /// The prompts `caller` may see, by full name.
    pub fn prompts(&self, caller: &Caller) -> Vec<PromptEntry> {
        let snapshot = self.snapshot.load();
        let visible = self.visible_namespaces(&snapshot, caller);
        snapshot.offered.prompts.values().filter(|entry| visible.contains(&entry.namespace)).cloned().collect()
    }

    /// The prompt `name` (any name form) with `arguments` substituted.
    pub fn get_prompt(
        &self,
        caller: &Caller,
        name: &str,
        arguments: &BTreeMap<String, String>,
    ) -> Result<(PromptEntry, Vec<(Role, Content)>), OfferError> {
        let entry = self.visible_prompt(caller, name)?;
        let messages = entry
            .prompt()
            .render(arguments)
            .map_err(|problem| OfferError::InvalidArguments { prompt: entry.full_name.clone(), problem })?;
        Ok((entry, messages))
    }

    /// The fixed resources `caller` may see, by URI.
    pub fn resources(&self, caller: &Caller) -> Vec<ResourceEntry> {
        let snapshot = self.snapshot.load();
        let visible = self.visible_namespaces(&snapshot, caller);
        snapshot.offered.resources.values().filter(|entry| visible.contains(&entry.namespace)).cloned().collect()
    }

    /// The resource templates `caller` may see, in precedence order.
    pub fn resource_templates(&self, caller: &Caller) -> Vec<ResourceEntry> {
        let snapshot = self.snapshot.load();
        let visible = self.visible_namespaces(&snapshot, caller);
        snapshot.offered.templates.iter().filter(|entry| visible.contains(&entry.namespace)).cloned().collect()
    }

    /// Reads the resource at `uri`: a fixed one's contents, or what the tool behind the
    /// template it matches returns when called with its variables (its output, then
    /// its content blocks).
    pub async fn read_resource(
        &self,
        caller: &Caller,
        uri: &str,
        options: &CallOptions,
    ) -> Result<Vec<ResourceContent>, OfferError> {
        let not_found = || OfferError::ResourceNotFound { uri: uri.to_owned() };
        let (entry, values) = {
            let snapshot = self.snapshot.load();
            let (entry, values) = snapshot.offered.find_resource(uri).ok_or_else(not_found)?;
            if !self.visible_namespaces(&snapshot, caller).contains(&entry.namespace) {
                return Err(not_found());
            }
            (entry.clone(), values)
        };
        let Some(values) = values else {
            let resource = entry.resource();
            let (uri, mime_type) = (resource.uri.clone(), Some(resource.mime_type.clone()));
            return Ok(vec![ResourceContent { uri, mime_type, body: resource.body.clone() }]);
        };
        let template = entry.template();
        let tool = names::full_name(&entry.namespace, &template.tool);
        let input = self.template_input(&tool, values);
        let report = self.call_with(caller, &tool, input, options).await;
        let output = report.outcome.map_err(|error| OfferError::Read { uri: uri.to_owned(), error })?;
        Ok(read_contents(uri, template.mime_type.as_deref(), output, report.content))
    }

    /// Whether `caller` may read `uri`: a resource it sees has it, or a template it sees
    /// matches it.
    pub fn may_read_resource(&self, caller: &Caller, uri: &str) -> bool {
        let snapshot = self.snapshot.load();
        snapshot
            .offered
            .find_resource(uri)
            .is_some_and(|(entry, _)| self.visible_namespaces(&snapshot, caller).contains(&entry.namespace))
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
        let (values, total) = match target {
            CompletionTarget::Prompt(name) => self.visible_prompt(caller, name)?.prompt().complete(argument, typed),
            CompletionTarget::ResourceTemplate(written) => {
                let values = self
                    .template_values(caller, written, argument)
                    .ok_or_else(|| OfferError::ResourceNotFound { uri: written.clone() })?;
                complete_among(&values, typed)
            }
        };
        Ok(Completions { values, total })
    }

    fn visible_prompt(&self, caller: &Caller, name: &str) -> Result<PromptEntry, OfferError> {
        let snapshot = self.snapshot.load();
        let visible = self.visible_namespaces(&snapshot, caller);
        snapshot
            .offered
            .find_prompt(name)
            .filter(|entry| visible.contains(&entry.namespace))
            .cloned()
            .ok_or_else(|| OfferError::PromptNotFound { name: name.to_owned() })
    }

    /// The namespaces of the tools `caller` may see.
    fn visible_namespaces(&self, snapshot: &Snapshot, caller: &Caller) -> BTreeSet<String> {
        let visible = snapshot.tools.values().filter(|entry| self.access(caller, entry).is_ok());
        visible.map(|entry| entry.namespace.clone()).collect()
    }

    /// The `enum` of the input property `variable` of the tool behind the template
    /// written `written`, when `caller` sees the template (else `None`).
    fn template_values(&self, caller: &Caller, written: &str, variable: &str) -> Option<Vec<String>> {
        let snapshot = self.snapshot.load();
        let visible = self.visible_namespaces(&snapshot, caller);
        let entry =
            snapshot.offered.templates.iter().find(|entry| {
                entry.template().uri_template.as_str() == written && visible.contains(&entry.namespace)
            })?;
        let tool = snapshot.tools.get(&names::full_name(&entry.namespace, &entry.template().tool));
        let listed = tool.and_then(|tool| {
            tool.def().input_schema().json().pointer(&format!("/properties/{variable}/enum")).cloned()
        });
        let strings =
            |values: Vec<Value>| values.into_iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned));
        Some(listed.and_then(|listed| listed.as_array().cloned()).map(strings).into_iter().flatten().collect())
    }

    /// A template's variables as the input of `tool`: a variable its schema types as a
    /// number, an integer or a boolean is passed as one when it parses as one.
    fn template_input(&self, tool: &str, values: BTreeMap<String, String>) -> Value {
        let snapshot = self.snapshot.load();
        let schema = snapshot.tools.get(tool).map(|entry| entry.def().input_schema().json()).unwrap_or_default();
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
