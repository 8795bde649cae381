//! Prompts a toolbox offers beside its tools: named message templates a person picks.
//!
//! A prompt is declared in a component's manifest (`[[prompts]]`): a name, a
//! description, its arguments and its messages. A message's text may hold `{{arg}}`
//! placeholders, each naming one of the prompt's arguments (checked when the manifest
//! loads); every other character is literal, so code and JSON need no escaping. A
//! message may also carry an image or audio file, or an embedded resource whose URI and
//! text take placeholders too. An argument that lists its `values` gets completions.
//! Rendering runs no code: it substitutes the arguments and nothing else.

use std::collections::BTreeMap;
use std::sync::Arc;

pub use crate::client::Role;
use crate::content::{Content, ResourceContents};
use crate::text::Escaped;

/// The most completions one answer holds (MCP's own bound).
pub const MAX_COMPLETIONS: usize = 100;

/// The longest argument value a prompt takes, in bytes.
pub const MAX_ARGUMENT_BYTES: usize = 64 * 1024;

/// A prompt, as its manifest declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompt {
    /// Its name within its namespace (a tool name's rules).
    pub name: String,
    /// A title for people.
    pub title: Option<String>,
    /// What it is for; never empty.
    pub description: String,
    /// What it takes, in order.
    pub arguments: Vec<PromptArgument>,
    /// What it says, in order.
    pub messages: Vec<PromptMessage>,
}

/// One argument of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name, as placeholders spell it.
    pub name: String,
    /// What it means.
    pub description: Option<String>,
    /// Whether a prompt without it is refused.
    pub required: bool,
    /// The values it takes, offered as completions (any value is accepted).
    pub values: Vec<String>,
}

/// One message of a prompt, before its arguments are substituted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptMessage {
    /// Who speaks it.
    pub role: Role,
    /// What it holds.
    pub content: MessageContent,
}

/// What a message holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MessageContent {
    /// Text with placeholders.
    Text(Template),
    /// An image or audio file's bytes, as a block of its kind.
    Media(Content),
    /// An embedded resource: its URI and text take placeholders; a blob is as read.
    Resource {
        /// Its URI.
        uri: Template,
        /// Its media type.
        mime_type: Option<String>,
        /// Text with placeholders, or bytes.
        body: ResourceBody,
    },
}

/// What an embedded resource of a message holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text with placeholders.
    Text(Template),
    /// Bytes.
    Blob(Arc<[u8]>),
}

/// Text with `{{name}}` placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    Argument(String),
}

impl Template {
    /// Parses `text`: `{{name}}` (spaces inside allowed) is a placeholder and must name
    /// one of `arguments`; braces around anything that is not a name are literal text.
    pub fn parse(text: &str, arguments: &[PromptArgument]) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            literal.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            // Only a name and spaces may stand before `}}`: looking no further keeps a
            // text of many `{{` linear.
            let end = after.find(|c: char| !(is_name_char(c) || c == ' ')).unwrap_or(after.len());
            let name = after[end..].starts_with("}}").then(|| (after[..end].trim(), end));
            let Some((name, end)) = name.filter(|(name, _)| is_placeholder_name(name)) else {
                literal.push_str("{{");
                rest = after;
                continue;
            };
            if !arguments.iter().any(|argument| argument.name == name) {
                return Err(format!("`{{{{{name}}}}}` names no argument of the prompt"));
            }
            pieces.push(Piece::Literal(std::mem::take(&mut literal)));
            pieces.push(Piece::Argument(name.to_owned()));
            rest = &after[end + 2..];
        }
        literal.push_str(rest);
        pieces.push(Piece::Literal(literal));
        pieces.retain(|piece| !matches!(piece, Piece::Literal(text) if text.is_empty()));
        Ok(Template { pieces })
    }

    /// The text with `arguments` in its placeholders (an absent one is empty).
    pub fn render(&self, arguments: &BTreeMap<String, String>) -> String {
        self.pieces
            .iter()
            .map(|piece| match piece {
                Piece::Literal(text) => text.as_str(),
                Piece::Argument(name) => arguments.get(name).map_or("", String::as_str),
            })
            .collect()
    }
}

impl Prompt {
    /// The prompt's messages with `arguments` substituted, or why the arguments are
    /// refused: a required one missing, one the prompt does not take, one too long.
    pub fn render(&self, arguments: &BTreeMap<String, String>) -> Result<Vec<(Role, Content)>, String> {
        if let Some(unknown) = arguments.keys().find(|name| !self.arguments.iter().any(|a| &a.name == *name)) {
            return Err(format!("the prompt takes no argument `{}`", Escaped(unknown)));
        }
        if let Some(missing) = self.arguments.iter().find(|a| a.required && !arguments.contains_key(&a.name)) {
            return Err(format!("the argument `{}` is required", missing.name));
        }
        if let Some((name, _)) = arguments.iter().find(|(_, value)| value.len() > MAX_ARGUMENT_BYTES) {
            return Err(format!("the argument `{name}` is over {MAX_ARGUMENT_BYTES} bytes"));
        }
        let rendered = self.messages.iter().map(|message| {
            let content = match &message.content {
                MessageContent::Text(text) => Content::Text(text.render(arguments)),
                MessageContent::Media(block) => block.clone(),
                MessageContent::Resource { uri, mime_type, body } => Content::Resource {
                    uri: uri.render(arguments),
                    mime_type: mime_type.clone(),
                    contents: match body {
                        ResourceBody::Text(text) => ResourceContents::Text(text.render(arguments)),
                        ResourceBody::Blob(bytes) => ResourceContents::Blob(bytes.to_vec()),
                    },
                },
            };
            (message.role, content)
        });
        let rendered: Vec<_> = rendered.collect();
        if let Some(problem) = rendered.iter().find_map(|(_, content)| content.check().err()) {
            return Err(problem);
        }
        Ok(rendered)
    }

    /// Completions of argument `argument` starting with `typed`: its listed values,
    /// those that begin with it (case-insensitively) first, at most [`MAX_COMPLETIONS`];
    /// and how many matched in all.
    pub fn complete(&self, argument: &str, typed: &str) -> (Vec<String>, usize) {
        let values = self.arguments.iter().find(|a| a.name == argument).map_or(&[][..], |a| &a.values[..]);
        complete_among(values, typed)
    }
}

/// Whether `text` reads as a placeholder's name: letters, digits, `_` and `-`.
fn is_placeholder_name(text: &str) -> bool {
    !text.is_empty() && text.chars().all(is_name_char)
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// The values of `values` that begin with `typed`, case-insensitively, in their order,
/// at most [`MAX_COMPLETIONS`]; and how many matched in all.
pub fn complete_among(values: &[String], typed: &str) -> (Vec<String>, usize) {
    let typed = typed.to_lowercase();
    let matching: Vec<&String> = values.iter().filter(|value| value.to_lowercase().starts_with(&typed)).collect();
    let total = matching.len();
    (matching.into_iter().take(MAX_COMPLETIONS).cloned().collect(), total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argument(name: &str, required: bool) -> PromptArgument {
        PromptArgument { name: name.into(), description: None, required, values: vec![] }
    }

    fn prompt(text: &str) -> Prompt {
        let arguments = vec![argument("city", true), argument("units", false)];
        let text = Template::parse(text, &arguments).unwrap();
        Prompt {
            name: "forecast".into(),
            title: None,
            description: "Asks for a forecast.".into(),
            arguments,
            messages: vec![PromptMessage { role: Role::User, content: MessageContent::Text(text) }],
        }
    }

    fn args(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn placeholders_take_arguments_and_everything_else_is_literal() {
        let prompt = prompt("Weather in {{city}} ({{ units }}); {{ or {{ not a name }}; {\"a\": {1}} {{unclosed");
        let rendered = prompt.render(&args(&[("city", "Lyon"), ("units", "metric")])).unwrap();
        let text = "Weather in Lyon (metric); {{ or {{ not a name }}; {\"a\": {1}} {{unclosed";
        assert_eq!(rendered, vec![(Role::User, Content::Text(text.into()))]);
    }

    #[test]
    fn arguments_are_checked() {
        let prompt = prompt("In {{city}}, {{units}}: {not a placeholder}");
        let rendered = prompt.render(&args(&[("city", "{{units}}")])).unwrap();
        assert_eq!(rendered, vec![(Role::User, Content::Text("In {{units}}, : {not a placeholder}".into()))]);
        assert!(prompt.render(&args(&[])).unwrap_err().contains("`city` is required"));
        assert!(prompt.render(&args(&[("city", "x"), ("town", "y")])).unwrap_err().contains("no argument `town`"));
        let long = "x".repeat(MAX_ARGUMENT_BYTES + 1);
        assert!(prompt.render(&args(&[("city", &long)])).unwrap_err().contains("over"));
        let unknown = Template::parse("{{town}}", &prompt.arguments).unwrap_err();
        assert!(unknown.contains("`{{town}}` names no argument"), "{unknown}");
    }

    #[test]
    fn completions_are_the_listed_values_that_begin_with_what_was_typed() {
        let values: Vec<String> = ["Paris", "parma", "Lyon"].map(String::from).into();
        assert_eq!(complete_among(&values, "PAR"), (vec!["Paris".to_string(), "parma".to_string()], 2));
        assert_eq!(complete_among(&values, "").1, 3);
        let many: Vec<String> = (0..150).map(|i| format!("v{i}")).collect();
        assert_eq!(complete_among(&many, "v"), (many[..MAX_COMPLETIONS].to_vec(), 150));
    }
}
