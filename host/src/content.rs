//! Content blocks a call shows its caller beside its output: text, images, audio, resources.
//!
//! Content blocks a call shows its caller beside its JSON output: text, an image, audio,
//! a link to a resource or a resource's contents. Every source makes them: a component
//! through `host.add-content` (contract 0.1.3), a native tool through its
//! [`ClientSession`](crate::ClientSession), an HTTP tool whose answer is an image or
//! audio, an upstream MCP server's result. They serialize as MCP content blocks
//! (`{"type": "image", "data": <base64>, "mimeType": "image/png"}`), the one shape every
//! consumer reads.

use base64::Engine as _;
use serde::ser::SerializeMap;

use crate::text::Escaped;

/// One content block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Text for the model: Markdown, a report.
    Text(String),
    /// An image.
    Image {
        /// Its bytes.
        data: Vec<u8>,
        /// `image/png`, `image/svg+xml`, …
        mime_type: String,
    },
    /// Audio.
    Audio {
        /// Its bytes.
        data: Vec<u8>,
        /// `audio/wav`, `audio/mpeg`, …
        mime_type: String,
    },
    /// A link to a resource the client reads elsewhere.
    ResourceLink {
        /// Where the resource is.
        uri: String,
        /// Its name, for people.
        name: String,
        /// What it is.
        description: Option<String>,
        /// Its media type, when known.
        mime_type: Option<String>,
    },
    /// A resource's contents, carried in the result.
    Resource {
        /// Which resource.
        uri: String,
        /// Its media type, when known.
        mime_type: Option<String>,
        /// What it holds.
        contents: ResourceContents,
    },
}

/// What an embedded resource holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceContents {
    /// Text.
    Text(String),
    /// Bytes (base64 in JSON).
    Blob(Vec<u8>),
}

impl Content {
    /// An image of `mime_type` (`image/png`).
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Content {
        Content::Image { data: data.into(), mime_type: mime_type.into() }
    }

    /// Audio of `mime_type` (`audio/wav`).
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Content {
        Content::Audio { data: data.into(), mime_type: mime_type.into() }
    }

    /// Text.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text(text.into())
    }

    /// Bytes it takes in a result, as counted against a tool's output limit: its text,
    /// its data as base64, its names and media types, and [`BLOCK_OVERHEAD`].
    pub fn size(&self) -> u64 {
        let len = |text: &Option<String>| text.as_ref().map_or(0, String::len);
        let encoded = |data: &[u8]| data.len().div_ceil(3) * 4;
        let size = BLOCK_OVERHEAD
            + match self {
                Content::Text(text) => text.len(),
                Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                    encoded(data) + mime_type.len()
                }
                Content::ResourceLink { uri, name, description, mime_type } => {
                    uri.len() + name.len() + len(description) + len(mime_type)
                }
                Content::Resource { uri, mime_type, contents } => {
                    uri.len()
                        + len(mime_type)
                        + match contents {
                            ResourceContents::Text(text) => text.len(),
                            ResourceContents::Blob(data) => encoded(data),
                        }
                }
            };
        size as u64
    }

    /// Why the block cannot be shown: a media type that is not `type/subtype` (of the
    /// kind its block says, for images and audio), or an empty URI.
    pub fn check(&self) -> Result<(), String> {
        let (mime_type, uri) = match self {
            Content::Text(_) => return Ok(()),
            Content::Image { mime_type, .. } | Content::Audio { mime_type, .. } => {
                let kind = if matches!(self, Content::Image { .. }) { "image" } else { "audio" };
                if !mime_type.starts_with(&format!("{kind}/")) {
                    return Err(format!("an {kind} block's media type is `{kind}/…`, not `{}`", Escaped(mime_type)));
                }
                (Some(mime_type), None)
            }
            Content::ResourceLink { uri, mime_type, .. } | Content::Resource { uri, mime_type, .. } => {
                (mime_type.as_ref(), Some(uri))
            }
        };
        if let Some(mime_type) = mime_type.filter(|mime| !is_media_type(mime)) {
            return Err(format!("`{}` is not a media type (`type/subtype`)", Escaped(mime_type)));
        }
        if uri.is_some_and(|uri| uri.is_empty() || uri.chars().any(char::is_control)) {
            return Err("a resource's URI is empty or holds control characters".to_owned());
        }
        Ok(())
    }

    /// What kind of block it is, as MCP names it (`text`, `image`, `audio`,
    /// `resource_link`, `resource`).
    pub fn kind(&self) -> &'static str {
        match self {
            Content::Text(_) => "text",
            Content::Image { .. } => "image",
            Content::Audio { .. } => "audio",
            Content::ResourceLink { .. } => "resource_link",
            Content::Resource { .. } => "resource",
        }
    }

    /// The block as MCP sends it.
    pub fn to_mcp(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// What a block costs beyond its bytes: its JSON frame, so that empty blocks are not
/// free.
pub const BLOCK_OVERHEAD: usize = 64;

/// Whether `text` is `type/subtype` of token characters (parameters allowed after `;`).
pub(crate) fn is_media_type(text: &str) -> bool {
    let essence = text.split(';').next().unwrap_or("").trim();
    let token =
        |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b"+-.!#$&^_".contains(&b));
    essence.split_once('/').is_some_and(|(kind, subtype)| token(kind) && token(subtype))
        && !text.chars().any(char::is_control)
        && text.len() <= 255
}

fn base64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(data)
}

impl serde::Serialize for Content {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("type", self.kind())?;
        match self {
            Content::Text(text) => map.serialize_entry("text", text)?,
            Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
                map.serialize_entry("data", &base64(data))?;
                map.serialize_entry("mimeType", mime_type)?;
            }
            Content::ResourceLink { uri, name, description, mime_type } => {
                map.serialize_entry("uri", uri)?;
                map.serialize_entry("name", name)?;
                if let Some(description) = description {
                    map.serialize_entry("description", description)?;
                }
                if let Some(mime_type) = mime_type {
                    map.serialize_entry("mimeType", mime_type)?;
                }
            }
            Content::Resource { uri, mime_type, contents } => {
                map.serialize_entry("resource", &EmbeddedResource { uri, mime_type, contents })?;
            }
        }
        map.end()
    }
}

struct EmbeddedResource<'a> {
    uri: &'a str,
    mime_type: &'a Option<String>,
    contents: &'a ResourceContents,
}

impl serde::Serialize for EmbeddedResource<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("uri", self.uri)?;
        if let Some(mime_type) = self.mime_type {
            map.serialize_entry("mimeType", mime_type)?;
        }
        match self.contents {
            ResourceContents::Text(text) => map.serialize_entry("text", text)?,
            ResourceContents::Blob(data) => map.serialize_entry("blob", &base64(data))?,
        }
        map.end()
    }
}

/// Content blocks of one call, bounded together by the tool's output limit.
#[derive(Debug, Default)]
pub(crate) struct ContentBlocks {
    blocks: Vec<Content>,
    bytes: u64,
}

impl ContentBlocks {
    /// Adds `block` unless it cannot be shown, or the blocks together would pass
    /// `limit` bytes.
    pub(crate) fn add(&mut self, block: Content, limit: u64) -> Result<(), String> {
        block.check()?;
        let bytes = self.bytes.saturating_add(block.size());
        if bytes > limit {
            return Err(format!(
                "the {} block of {} bytes would bring the call's content to {bytes} bytes, over its output limit of {limit}",
                block.kind(),
                block.size()
            ));
        }
        self.bytes = bytes;
        self.blocks.push(block);
        Ok(())
    }

    pub(crate) fn take(&mut self) -> Vec<Content> {
        self.bytes = 0;
        std::mem::take(&mut self.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialize_as_mcp_content() {
        assert_eq!(Content::text("hi").to_mcp(), json!({"type": "text", "text": "hi"}));
        assert_eq!(
            Content::image(vec![1, 2, 3], "image/png").to_mcp(),
            json!({"type": "image", "data": "AQID", "mimeType": "image/png"})
        );
        let embedded = Content::Resource {
            uri: "test://x".into(),
            mime_type: Some("text/plain".into()),
            contents: ResourceContents::Blob(vec![0xff]),
        };
        assert_eq!(
            embedded.to_mcp(),
            json!({"type": "resource", "resource": {"uri": "test://x", "mimeType": "text/plain", "blob": "/w=="}})
        );
        let link =
            Content::ResourceLink { uri: "file:///a".into(), name: "a".into(), description: None, mime_type: None };
        assert_eq!(link.to_mcp(), json!({"type": "resource_link", "uri": "file:///a", "name": "a"}));
    }

    #[test]
    fn blocks_past_the_limit_are_refused_and_the_rest_kept() {
        let limit = 2 * BLOCK_OVERHEAD as u64 + 8;
        let mut blocks = ContentBlocks::default();
        blocks.add(Content::text("12345"), limit).unwrap();
        let refused = blocks.add(Content::text("6789"), limit).unwrap_err();
        assert!(refused.contains(&format!("over its output limit of {limit}")), "{refused}");
        blocks.add(Content::text("678"), limit).unwrap();
        assert_eq!(blocks.take(), vec![Content::text("12345"), Content::text("678")]);
        // Empty blocks are not free.
        let mut empty = ContentBlocks::default();
        let added = (0..1000).take_while(|_| empty.add(Content::text(""), 10 * BLOCK_OVERHEAD as u64).is_ok()).count();
        assert_eq!(added, 10);
        // Data counts as the base64 it is sent as.
        assert_eq!(Content::image(vec![0; 3], "image/png").size(), BLOCK_OVERHEAD as u64 + 4 + 9);
    }

    #[test]
    fn only_well_formed_media_types_and_uris_are_shown() {
        assert!(Content::image(vec![], "image/png; charset=binary").check().is_ok());
        assert!(Content::image(vec![], "audio/wav").check().unwrap_err().contains("image/…"));
        assert!(Content::audio(vec![], "audio/\u{1b}[31m").check().is_err());
        let resource = |uri: &str, mime: &str| Content::Resource {
            uri: uri.into(),
            mime_type: Some(mime.into()),
            contents: ResourceContents::Text(String::new()),
        };
        assert!(resource("test://x", "text/plain").check().is_ok());
        assert!(resource("", "text/plain").check().is_err());
        assert!(resource("test://x", "plain").check().is_err());
    }
}
