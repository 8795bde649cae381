//! Plain functions that return media: a record shaped `{ data: list<u8>, mime-type: string }` is a content block.
//!
//! The convention for a plain component's media: a function whose result (or whose
//! `result`'s `ok` payload) is a record of exactly two fields, `data: list<u8>` and
//! `mime-type: string` (whatever the record is called), shows its value as a content
//! block instead of returning it as JSON: an image for `image/*`, audio for `audio/*`,
//! and otherwise an embedded resource holding the bytes (`toolhost:<tool>/output`). The
//! tool's output is then `null`, and its output schema says so.

use wasmtime::component::{Type, Val};

use crate::content::{Content, ResourceContents};

/// Whether values of `ty` are media.
pub(super) fn is_media(ty: &Type) -> bool {
    let Type::Record(record) = ty else { return false };
    let fields: Vec<_> = record.fields().collect();
    let field = |name: &str| fields.iter().find(|field| field.name == name).map(|field| &field.ty);
    fields.len() == 2
        && matches!(field("data"), Some(Type::List(list)) if matches!(list.ty(), Type::U8))
        && matches!(field("mime-type"), Some(Type::String))
}

/// The content block of a media value returned by `tool`; `None` for a value that is
/// not a media record.
pub(super) fn content(tool: &str, val: &Val) -> Option<Content> {
    let Val::Record(fields) = val else { return None };
    let field = |name: &str| fields.iter().find(|(field, _)| field == name).map(|(_, value)| value);
    let Some(Val::List(bytes)) = field("data") else { return None };
    let Some(Val::String(mime_type)) = field("mime-type") else { return None };
    let data: Vec<u8> =
        bytes.iter().filter_map(|byte| if let Val::U8(byte) = byte { Some(*byte) } else { None }).collect();
    let mime_type = mime_type.trim().to_ascii_lowercase();
    Some(match mime_type.split('/').next() {
        Some("image") => Content::Image { data, mime_type },
        Some("audio") => Content::Audio { data, mime_type },
        _ => Content::Resource {
            uri: format!("toolhost:{tool}/output"),
            mime_type: (!mime_type.is_empty()).then_some(mime_type),
            contents: ResourceContents::Blob(data),
        },
    })
}
