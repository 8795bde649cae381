//! `[[prompts]]` and `[[resources]]` of a manifest: what the component offers beside its tools.
//!
//! ```toml
//! [[prompts]]
//! name = "forecast"
//! description = "Asks for the week's weather in a city."
//! arguments = [{ name = "city", required = true, values = ["Paris", "Lyon"] }]
//! messages = [{ role = "user", text = "What is the weather in {{city}} this week?" }]
//! # a message holds text, or image = "chart.png", or audio = "a.wav" (with mime_type),
//! # or resource = "docs://{{city}}" with text = "…" or file = "…"
//!
//! [[resources]]                # a fixed resource: a file's bytes or inline text
//! uri = "docs://weather/readme"
//! name = "readme"
//! mime_type = "text/markdown"
//! file = "README.md"           # relative to this file, and inside its directory
//!
//! [[resources]]                # read by calling a tool of the component with {city}
//! uri_template = "weather://forecast/{city}"
//! name = "forecast"
//! tool = "get-forecast"
//! ```
//!
//! Files are read when the manifest loads, bounded (`files.rs`); text files
//! (a `text/*` or JSON, XML, YAML or TOML type) must be UTF-8, others are served as bytes.

use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::files::Files;
use crate::content::{Content, is_media_type};
use crate::names;
use crate::prompt::{MessageContent, Prompt, PromptArgument, PromptMessage, ResourceBody, Role, Template};
use crate::resource::{Body, Resource, ResourceTemplate, UriTemplate, check_uri};
use crate::units::Problem;

/// The most prompts, and the most resources, one manifest declares.
pub const MAX_DECLARED: usize = 256;

/// What a manifest offers beside its tools.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Offered {
    /// Its prompts.
    pub prompts: Vec<Prompt>,
    /// Its fixed resources.
    pub resources: Vec<Resource>,
    /// Its resource templates.
    pub templates: Vec<ResourceTemplate>,
    /// The files its declarations read, each once, as declared: a change to one
    /// reloads the component.
    pub files: Vec<std::path::PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrompt {
    name: String,
    title: Option<String>,
    description: String,
    #[serde(default)]
    arguments: Vec<RawArgument>,
    messages: Vec<RawMessage>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawArgument {
    name: String,
    description: Option<String>,
    #[serde(default)]
    required: bool,
    #[serde(default)]
    values: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMessage {
    #[serde(default = "user")]
    role: Role,
    text: Option<String>,
    image: Option<String>,
    audio: Option<String>,
    resource: Option<String>,
    file: Option<String>,
    mime_type: Option<String>,
}

fn user() -> Role {
    Role::User
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawResource {
    uri: Option<String>,
    uri_template: Option<String>,
    name: String,
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    text: Option<String>,
    file: Option<String>,
    tool: Option<String>,
}

/// Checks the declarations; `base` is the manifest's directory, which holds every file
/// they read.
pub(super) fn offered(
    base: &Path,
    prompts: Vec<Spanned<RawPrompt>>,
    resources: Vec<Spanned<RawResource>>,
) -> Result<Offered, Problem> {
    let mut offered = Offered::default();
    let files = &mut Files::new(base);
    for raw in prompts.into_iter().take(MAX_DECLARED + 1) {
        let span = raw.span();
        let at = |problem: String| Problem::at(span.clone(), problem);
        if offered.prompts.len() == MAX_DECLARED {
            return Err(at(format!("a manifest declares at most {MAX_DECLARED} prompts")));
        }
        let raw = raw.into_inner();
        let name = raw.name.clone();
        let prompt = prompt(files, raw).map_err(|problem| at(format!("[[prompts]] `{name}`: {problem}")))?;
        if offered.prompts.iter().any(|other| other.name == prompt.name) {
            return Err(at(format!("two prompts are named `{name}`")));
        }
        offered.prompts.push(prompt);
    }
    for raw in resources.into_iter().take(MAX_DECLARED + 1) {
        let span = raw.span();
        if offered.resources.len() + offered.templates.len() == MAX_DECLARED {
            return Err(Problem::at(span, format!("a manifest declares at most {MAX_DECLARED} resources")));
        }
        let raw = raw.into_inner();
        let name = raw.name.clone();
        resource(files, raw, &mut offered)
            .map_err(|problem| Problem::at(span, format!("[[resources]] `{name}`: {problem}")))?;
    }
    offered.files = files.take_read();
    Ok(offered)
}

fn prompt(files: &mut Files<'_>, raw: RawPrompt) -> Result<Prompt, String> {
    names::validate_tool(&raw.name)?;
    if raw.description.trim().is_empty() {
        return Err("the description is empty".into());
    }
    let mut arguments: Vec<PromptArgument> = Vec::new();
    for argument in raw.arguments {
        if arguments.iter().any(|other| other.name == argument.name) || argument.name.is_empty() {
            return Err(format!("the argument `{}` is empty or declared twice", argument.name));
        }
        let RawArgument { name, description, required, values } = argument;
        arguments.push(PromptArgument { name, description, required, values });
    }
    if raw.messages.is_empty() {
        return Err("a prompt has one or more messages".into());
    }
    let messages = raw.messages.into_iter().map(|message| self::message(files, message, &arguments));
    let messages = messages.collect::<Result<Vec<_>, String>>()?;
    Ok(Prompt { name: raw.name, title: raw.title, description: raw.description, arguments, messages })
}

fn message(files: &mut Files<'_>, raw: RawMessage, arguments: &[PromptArgument]) -> Result<PromptMessage, String> {
    let RawMessage { role, text, image, audio, resource, file, mime_type } = raw;
    let content = match (text, image, audio, resource) {
        (Some(text), None, None, None) if file.is_none() && mime_type.is_none() => {
            MessageContent::Text(Template::parse(&text, arguments)?)
        }
        (None, Some(path), None, None) if file.is_none() => {
            let mime_type = mime_type.ok_or("an image message names its `mime_type`")?;
            media(Content::image(files.read(&path)?, mime_type))?
        }
        (None, None, Some(path), None) if file.is_none() => {
            let mime_type = mime_type.ok_or("an audio message names its `mime_type`")?;
            media(Content::audio(files.read(&path)?, mime_type))?
        }
        (text, None, None, Some(uri)) => {
            let mime_type = mime_type.map(checked_media_type).transpose()?;
            let body = match (text, file) {
                (Some(text), None) => ResourceBody::Text(Template::parse(&text, arguments)?),
                (None, Some(path)) => ResourceBody::Blob(files.read(&path)?.into()),
                _ => return Err("an embedded resource holds `text` or a `file`".into()),
            };
            MessageContent::Resource { uri: Template::parse(&uri, arguments)?, mime_type, body }
        }
        _ => return Err("a message holds one of `text`, `image`, `audio` or `resource`".into()),
    };
    Ok(PromptMessage { role, content })
}

fn resource(files: &mut Files<'_>, raw: RawResource, offered: &mut Offered) -> Result<(), String> {
    let RawResource { uri, uri_template, name, title, description, mime_type, text, file, tool } = raw;
    if name.trim().is_empty() {
        return Err("the name is empty".into());
    }
    let mime_type = mime_type.map(checked_media_type).transpose()?;
    match (uri, uri_template) {
        (Some(uri), None) if tool.is_none() => {
            check_uri(&uri)?;
            if offered.resources.iter().any(|other| other.uri == uri) {
                return Err(format!("two resources have the URI `{uri}`"));
            }
            let mime_type = mime_type.unwrap_or_else(|| "text/plain".to_owned());
            let body = match (text, file) {
                (Some(text), None) => Body::Text(text.into()),
                (None, Some(path)) => {
                    let bytes = files.read(&path)?;
                    if is_text(&mime_type) {
                        let text = String::from_utf8(bytes).map_err(|_| format!("`{path}` is not UTF-8 text"))?;
                        Body::Text(text.into())
                    } else {
                        Body::Blob(bytes.into())
                    }
                }
                _ => return Err("a resource holds `text` or a `file`".into()),
            };
            offered.resources.push(Resource { uri, name, title, description, mime_type, body });
        }
        (None, Some(template)) if text.is_none() && file.is_none() => {
            let uri_template = UriTemplate::parse(&template)?;
            let tool = tool.ok_or("a template names the `tool` that reads it")?;
            names::validate_tool(&tool)?;
            offered.templates.push(ResourceTemplate { uri_template, name, title, description, mime_type, tool });
        }
        _ => return Err("a resource has a `uri` with `text` or a `file`, or a `uri_template` with a `tool`".into()),
    }
    Ok(())
}

/// An image or audio block whose media type is of its kind.
fn media(block: Content) -> Result<MessageContent, String> {
    block.check()?;
    Ok(MessageContent::Media(block))
}

fn checked_media_type(mime_type: String) -> Result<String, String> {
    if is_media_type(&mime_type) { Ok(mime_type) } else { Err(format!("`{mime_type}` is not a media type")) }
}

/// Whether a resource of `mime_type` is text.
fn is_text(mime_type: &str) -> bool {
    let essence = mime_type.split(';').next().unwrap_or_default().trim();
    essence.starts_with("text/")
        || ["application/json", "application/xml", "application/yaml", "application/toml"].contains(&essence)
        || essence.ends_with("+json")
        || essence.ends_with("+xml")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::ResourceContents;

    fn parse(base: &Path, text: &str) -> Result<Offered, String> {
        #[derive(Deserialize)]
        struct Raw {
            #[serde(default)]
            prompts: Vec<Spanned<RawPrompt>>,
            #[serde(default)]
            resources: Vec<Spanned<RawResource>>,
        }
        let raw: Raw = toml::from_str(text).map_err(|e| e.to_string())?;
        offered(base, raw.prompts, raw.resources).map_err(|problem| problem.message)
    }

    #[test]
    fn prompts_and_resources_read_their_files_and_check_their_text() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("guide.md"), "# Guide").unwrap();
        std::fs::write(dir.path().join("logo.bin"), [0u8, 159, 146, 150]).unwrap();
        let offered = parse(
            dir.path(),
            r#"
            [[prompts]]
            name = "review"
            description = "Reviews a file."
            arguments = [{ name = "path", required = true }]
            messages = [
              { resource = "file:///{{path}}", file = "logo.bin", mime_type = "application/octet-stream" },
              { role = "assistant", text = "Reviewing {{path}}." },
            ]
            [[resources]]
            uri = "docs://guide"
            name = "guide"
            mime_type = "text/markdown"
            file = "guide.md"
            [[resources]]
            uri = "docs://logo"
            name = "logo"
            mime_type = "application/octet-stream"
            file = "logo.bin"
            "#,
        )
        .unwrap();
        assert_eq!(offered.resources[0].body, Body::Text("# Guide".into()));
        assert!(matches!(&offered.resources[1].body, Body::Blob(bytes) if bytes.len() == 4));
        let arguments = [("path".to_string(), "a.rs".to_string())].into();
        let rendered = offered.prompts[0].render(&arguments).unwrap();
        let Content::Resource { uri, contents: ResourceContents::Blob(bytes), .. } = &rendered[0].1 else {
            panic!("{rendered:?}")
        };
        assert_eq!((uri.as_str(), bytes.len()), ("file:///a.rs", 4));
        assert_eq!(rendered[1], (Role::Assistant, Content::Text("Reviewing a.rs.".into())));
    }

    #[test]
    fn bad_declarations_are_refused_with_the_problem() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("guide.md"), "# Guide").unwrap();
        std::fs::write(dir.path().join("logo.bin"), [0u8, 159, 146, 150]).unwrap();
        for (text, problem) in [
            (
                "[[resources]]\nuri = \"docs://x\"\nname = \"x\"\nmime_type = \"text/plain\"\nfile = \"logo.bin\"",
                "not UTF-8",
            ),
            ("[[resources]]\nuri = \"docs://x\"\nname = \"x\"\nfile = \"absent.md\"", "`absent.md`:"),
            (
                "[[resources]]\nuri = \"docs://x\"\nname = \"x\"\ntext = \"a\"\nfile = \"guide.md\"",
                "holds `text` or a `file`",
            ),
            (
                "[[resources]]\nuri = \"docs://x\"\nname = \"x\"\ntext = \"a\"\nmime_type = \"plain\"",
                "not a media type",
            ),
            ("[[prompts]]\nname = \"p\"\ndescription = \"d\"\nmessages = []", "one or more messages"),
            (
                "[[prompts]]\nname = \"p\"\ndescription = \"d\"\nmessages = [{ image = \"logo.bin\" }]",
                "names its `mime_type`",
            ),
            (
                "[[prompts]]\nname = \"p\"\ndescription = \"d\"\nmessages = [{ text = \"a\", image = \"logo.bin\" }]",
                "one of `text`",
            ),
            (
                "[[prompts]]\nname = \"p\"\ndescription = \"d\"\nmessages = [{ audio = \"logo.bin\", mime_type = \"image/png\" }]",
                "`audio/…`",
            ),
            ("[[resources]]\nuri = \"docs://x\"\nname = \"x\"\nfile = \".\"", "not a regular file"),
            ("[[prompts]]\nname = \"Bad Name\"\ndescription = \"d\"\nmessages = [{ text = \"a\" }]", "lowercase"),
        ] {
            let error = parse(dir.path(), text).unwrap_err();
            assert!(error.contains(problem), "{text}: {error}");
        }
    }
}
