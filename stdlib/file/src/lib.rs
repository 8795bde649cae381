//! `file/*`: read, write, list, stat and delete files, only inside the directories the
//! operator granted in the manifest (`[grants] files`). The host confines every path to
//! the grants (`..`, other absolute paths and symbolic links leading out all fail); these
//! tools check the same first so that a refusal names the granted directories.

mod error;
mod grants;

use std::io::{Read, Seek, SeekFrom, Write};

use base64::Engine as _;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use stdlib_shared::timestamp;
use toolhost_guest::{ToolError, toolbox};

use crate::error::FileError;

/// At most this many bytes are returned by one read: a page of a large file, small
/// enough to sit in a model's context and in the manifest's `max_output` even as
/// base64 or escaped text.
const MAX_READ_BYTES: u64 = 256 << 10;
/// At most this many bytes are written by one call; `append` builds larger files.
const MAX_WRITE_BYTES: u64 = 1 << 20;
/// `content` of a write may be this long as text (UTF-8 bytes are checked separately)
/// or as base64 of MAX_WRITE_BYTES.
const MAX_CONTENT_CHARS: u32 = 1_398_104;
const DEFAULT_LIST_ENTRIES: u32 = 1000;
const MAX_PATH_CHARS: u32 = 4096;

#[derive(Deserialize, Serialize, JsonSchema, Clone, Copy, Default, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
enum Encoding {
    /// UTF-8 text.
    #[default]
    Text,
    /// Any bytes, base64-encoded (standard alphabet, with padding).
    Base64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    /// Absolute path of a file inside a granted directory, e.g. `/data/notes.md`.
    #[schemars(length(min = 1, max = MAX_PATH_CHARS))]
    path: String,
    /// `text` for UTF-8 text (the default), `base64` for any other file.
    #[serde(default)]
    encoding: Encoding,
    /// Byte offset to start reading at (default 0).
    #[serde(default)]
    #[schemars(range(min = 0, max = 9007199254740991u64))]
    offset: u64,
    /// How many bytes to read at most (default and maximum 262144).
    #[serde(default)]
    #[schemars(range(min = 1, max = MAX_READ_BYTES))]
    length: Option<u64>,
}

#[derive(Serialize, JsonSchema)]
struct ReadOutput {
    path: String,
    encoding: Encoding,
    /// The bytes read, as `encoding` says.
    content: String,
    /// Where the read started.
    offset: u64,
    /// How many bytes of the file `content` holds.
    bytes: u64,
    /// The file's whole size in bytes.
    file_size: u64,
    /// Where the next read continues, when the file goes on past this one; absent at the
    /// end of the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_offset: Option<u64>,
}

#[derive(Deserialize, JsonSchema, Clone, Copy, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum WriteMode {
    /// Replace the file's contents, creating it if missing (the default).
    #[default]
    Overwrite,
    /// Add to the end of the file, creating it if missing.
    Append,
    /// Create a new file; fail if it exists.
    Create,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteInput {
    /// Absolute path of the file inside a directory granted read-write.
    #[schemars(length(min = 1, max = MAX_PATH_CHARS))]
    path: String,
    /// What to write: text, or base64 when `encoding` is `base64` (at most 1 MiB of bytes
    /// per call).
    #[schemars(length(max = MAX_CONTENT_CHARS))]
    content: String,
    #[serde(default)]
    encoding: Encoding,
    #[serde(default)]
    mode: WriteMode,
    /// Create missing parent directories (default false).
    #[serde(default)]
    create_directories: bool,
}

#[derive(Serialize, JsonSchema)]
struct WriteOutput {
    path: String,
    /// Bytes written by this call.
    bytes_written: u64,
    /// The file's size afterwards.
    file_size: u64,
    /// True when the file did not exist before.
    created: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListInput {
    /// Absolute path of a directory inside a granted one. Leave it out to see the granted
    /// directories themselves.
    #[serde(default)]
    #[schemars(length(min = 1, max = MAX_PATH_CHARS))]
    path: Option<String>,
    /// Also list the contents of subdirectories (symbolic links are not followed); names
    /// are then paths relative to `path`.
    #[serde(default)]
    recursive: bool,
    /// At most this many entries are returned (default 1000).
    #[serde(default = "default_list_entries")]
    #[schemars(range(min = 1, max = 10000))]
    max_entries: u32,
}

fn default_list_entries() -> u32 {
    DEFAULT_LIST_ENTRIES
}

#[derive(Serialize, JsonSchema, Clone, Copy, PartialEq, Eq, Debug)]
#[serde(rename_all = "snake_case")]
enum Kind {
    File,
    Directory,
    Symlink,
    Other,
}

impl Kind {
    fn of(file_type: std::fs::FileType) -> Kind {
        if file_type.is_symlink() {
            Kind::Symlink
        } else if file_type.is_dir() {
            Kind::Directory
        } else if file_type.is_file() {
            Kind::File
        } else {
            Kind::Other
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Directory => "directory",
            Kind::Symlink => "symbolic link",
            Kind::Other => "special file",
        }
    }
}

#[derive(Serialize, JsonSchema, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Access {
    ReadOnly,
    ReadWrite,
}

#[derive(Serialize, JsonSchema)]
struct Entry {
    /// The entry's name (a path relative to the listed directory when recursive; the
    /// absolute path of a granted directory when no path was given).
    name: String,
    kind: Kind,
    /// Size in bytes, for files.
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    /// Last modification, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    modified: Option<String>,
    /// For granted directories: what the tools may do there.
    #[serde(skip_serializing_if = "Option::is_none")]
    access: Option<Access>,
}

#[derive(Serialize, JsonSchema)]
struct ListOutput {
    /// The directory listed; absent when the granted directories are listed.
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<String>,
    /// Entries sorted by name (depth first when recursive).
    entries: Vec<Entry>,
    /// True when there were more than `max_entries` entries and the rest were left out.
    truncated: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PathInput {
    /// Absolute path inside a granted directory.
    #[schemars(length(min = 1, max = MAX_PATH_CHARS))]
    path: String,
}

#[derive(Serialize, JsonSchema)]
struct StatOutput {
    path: String,
    /// False when nothing is at the path (the other fields are then absent).
    exists: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<Kind>,
    /// Size in bytes (for a directory, what the host reports for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    /// Last modification, RFC 3339 UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    modified: Option<String>,
    /// Where a symbolic link points, as written in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    link_target: Option<String>,
    /// Whether the tools may change it: true in a directory granted read-write.
    writable: bool,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteInput {
    /// Absolute path of the file or directory to delete, inside a directory granted
    /// read-write.
    #[schemars(length(min = 1, max = MAX_PATH_CHARS))]
    path: String,
    /// Delete a directory with everything in it (default false: only an empty one).
    #[serde(default)]
    recursive: bool,
}

#[derive(Serialize, JsonSchema)]
struct DeleteOutput {
    path: String,
    /// What was deleted.
    kind: Kind,
    /// Files, links and directories removed, the path itself included.
    entries_removed: u64,
}

toolbox! {
    /// Reads a file inside a directory the operator granted, as UTF-8 text (the default)
    /// or base64 for binary files. Reads at most 262144 bytes per call: for a larger file
    /// the answer gives `next_offset`; call again with `offset` set to it to read on, or
    /// pick a range with `offset` and `length`. `file_size` is the whole file's size.
    /// Call `file/list` without a path to see the granted directories.
    fn read(input: ReadInput) -> Result<ReadOutput, ToolError> {
        Ok(read_file(input)?)
    }

    /// Writes a file inside a directory granted read-write: replaces its contents
    /// (`mode: "overwrite"`, the default, all at once so a reader never sees half a
    /// file), appends to it (`"append"`) or creates a new one that must not exist yet
    /// (`"create"`). `content` is text, or base64 with `encoding: "base64"`; at most 1 MiB
    /// per call (append for more). Returns the bytes written and the new size.
    fn write(input: WriteInput) -> Result<WriteOutput, ToolError> {
        Ok(write_file(input)?)
    }

    /// Lists a directory inside a granted one: each entry's name, kind (file, directory,
    /// symlink), size and modification time, sorted by name; `recursive` lists
    /// subdirectories too. Without `path`, lists the directories the operator granted
    /// and whether each is read-only or read-write: start there when you do not know
    /// where files are.
    fn list(input: ListInput) -> Result<ListOutput, ToolError> {
        Ok(list_directory(input)?)
    }

    /// Tells whether a path exists inside a granted directory and what it is: kind,
    /// size, modification time (RFC 3339 UTC), a link's target, and whether the tools
    /// may change it. A missing path is an answer (`exists: false`), not an error.
    fn stat(input: PathInput) -> Result<StatOutput, ToolError> {
        Ok(stat_path(input)?)
    }

    /// Deletes a file, a symbolic link (not what it points to) or a directory inside a
    /// directory granted read-write. A directory must be empty unless `recursive` is
    /// true. Cannot be undone. The granted directories themselves cannot be deleted.
    fn delete(input: DeleteInput) -> Result<DeleteOutput, ToolError> {
        Ok(delete_path(input)?)
    }
}

fn read_file(input: ReadInput) -> Result<ReadOutput, FileError> {
    let resolved = grants::resolve(&input.path)?;
    let path = resolved.path;
    let io = |e| FileError::io(&path, e);
    let metadata = std::fs::metadata(&path).map_err(io)?;
    if !metadata.is_file() {
        return Err(FileError::WrongKind { path, wanted: "file", found: Kind::of(metadata.file_type()).noun() });
    }
    let file_size = metadata.len();
    if input.offset > file_size {
        return Err(FileError::OffsetPastEnd { path, offset: input.offset, size: file_size });
    }
    let wanted = input.length.unwrap_or(MAX_READ_BYTES).min(MAX_READ_BYTES);
    let mut file = std::fs::File::open(&path).map_err(io)?;
    file.seek(SeekFrom::Start(input.offset)).map_err(io)?;
    let mut bytes = Vec::new();
    file.take(wanted).read_to_end(&mut bytes).map_err(io)?;
    let (content, returned) = match input.encoding {
        Encoding::Base64 => (base64::engine::general_purpose::STANDARD.encode(&bytes), bytes.len()),
        Encoding::Text => {
            let ends_early = input.offset + (bytes.len() as u64) < file_size;
            let text_len = text_prefix(&bytes, ends_early).map_err(|invalid| {
                if invalid == 0 && input.offset > 0 && is_continuation(bytes[0]) {
                    FileError::SplitCharacter { path: path.clone(), offset: input.offset }
                } else {
                    FileError::NotText { path: path.clone(), offset: input.offset + invalid as u64 }
                }
            })?;
            if text_len == 0 && !bytes.is_empty() {
                return Err(FileError::PartialCharacter { path, offset: input.offset });
            }
            // A character cut by the end of the range is left for the next read.
            bytes.truncate(text_len);
            let text = String::from_utf8(bytes).map_err(|e| FileError::NotText {
                path: path.clone(),
                offset: input.offset + e.utf8_error().valid_up_to() as u64,
            })?;
            (text, text_len)
        }
    };
    let returned = returned as u64;
    let end = input.offset + returned;
    Ok(ReadOutput {
        path,
        encoding: input.encoding,
        content,
        offset: input.offset,
        bytes: returned,
        file_size,
        next_offset: (end < file_size).then_some(end),
    })
}

/// How many leading bytes of `bytes` are whole UTF-8 text. A character cut by the end
/// of a read that stops before the end of the file is left for the next read; any other
/// invalid byte is an error at its index.
fn text_prefix(bytes: &[u8], ends_early: bool) -> Result<usize, usize> {
    match std::str::from_utf8(bytes) {
        Ok(_) => Ok(bytes.len()),
        Err(error) if error.error_len().is_none() && ends_early => Ok(error.valid_up_to()),
        Err(error) => Err(error.valid_up_to()),
    }
}

fn is_continuation(byte: u8) -> bool {
    byte & 0b1100_0000 == 0b1000_0000
}

fn write_file(input: WriteInput) -> Result<WriteOutput, FileError> {
    let resolved = grants::resolve(&input.path)?;
    resolved.require_writable()?;
    if resolved.is_grant_root() {
        return Err(FileError::WrongKind { path: resolved.path, wanted: "file", found: "directory" });
    }
    let bytes = match input.encoding {
        Encoding::Text => input.content.into_bytes(),
        Encoding::Base64 => base64::engine::general_purpose::STANDARD
            .decode(input.content.trim())
            .map_err(|e| FileError::BadBase64 { reason: e.to_string() })?,
    };
    if bytes.len() as u64 > MAX_WRITE_BYTES {
        return Err(FileError::TooLarge { what: "content", bytes: bytes.len() as u64, limit: MAX_WRITE_BYTES });
    }
    let path = resolved.path;
    let io = |e| FileError::io(&path, e);
    let parent = parent_of(&path);
    if input.create_directories {
        std::fs::create_dir_all(parent).map_err(|e| FileError::io(parent, e))?;
    } else {
        match std::fs::metadata(parent) {
            Ok(metadata) if metadata.is_dir() => {}
            Ok(metadata) => {
                let found = Kind::of(metadata.file_type()).noun();
                return Err(FileError::WrongKind { path: parent.to_owned(), wanted: "directory", found });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(FileError::Io {
                    path: path.clone(),
                    reason: format!("its directory `{parent}` does not exist; set create_directories to true"),
                });
            }
            Err(e) => return Err(FileError::io(parent, e)),
        }
    }
    let existing = match std::fs::metadata(&path) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(FileError::WrongKind { path, wanted: "file", found: "directory" });
        }
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(io(e)),
    };
    match input.mode {
        WriteMode::Overwrite => replace(&path, &bytes)?,
        WriteMode::Append | WriteMode::Create => {
            let mut options = std::fs::OpenOptions::new();
            if input.mode == WriteMode::Append {
                options.append(true).create(true);
            } else {
                options.write(true).create_new(true);
            }
            let mut file = options.open(&path).map_err(io)?;
            file.write_all(&bytes).map_err(io)?;
        }
    }
    let file_size = std::fs::metadata(&path).map_err(io)?.len();
    Ok(WriteOutput { path, bytes_written: bytes.len() as u64, file_size, created: !existing })
}

/// Replaces `path` by a sibling file renamed over it, so a reader sees the old contents
/// or the new, never a mix, and a call stopped halfway leaves the old file intact.
fn replace(path: &str, bytes: &[u8]) -> Result<(), FileError> {
    let name = path.rsplit('/').next().unwrap_or_default();
    let temporary = format!("{}/.{name}.{:016x}.partial", parent_of(path), wasip2::random::random::get_random_u64());
    let written = std::fs::File::create_new(&temporary).and_then(|mut file| file.write_all(bytes));
    let renamed = written.and_then(|()| std::fs::rename(&temporary, path));
    if let Err(error) = renamed {
        // The partial file is ours and useless; the error that matters is the one above.
        let _ = std::fs::remove_file(&temporary);
        return Err(FileError::io(path, error));
    }
    Ok(())
}

/// The directory holding `path` (a normalized absolute path).
fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(slash) => &path[..slash],
    }
}

fn list_directory(input: ListInput) -> Result<ListOutput, FileError> {
    let Some(path) = input.path else {
        let granted = grants::granted();
        if granted.is_empty() {
            return Err(FileError::NoGrant);
        }
        let entries = granted
            .into_iter()
            .map(|grant| Entry {
                modified: std::fs::metadata(&grant.path).ok().and_then(|m| m.modified().ok()).and_then(timestamp::of),
                name: grant.path,
                kind: Kind::Directory,
                size: None,
                access: Some(if grant.writable { Access::ReadWrite } else { Access::ReadOnly }),
            })
            .collect();
        return Ok(ListOutput { path: None, entries, truncated: false });
    };
    let resolved = grants::resolve(&path)?;
    let metadata = std::fs::metadata(&resolved.path).map_err(|e| FileError::io(&resolved.path, e))?;
    if !metadata.is_dir() {
        let found = Kind::of(metadata.file_type()).noun();
        return Err(FileError::WrongKind { path: resolved.path, wanted: "directory", found });
    }
    let mut listing = Listing { entries: Vec::new(), limit: input.max_entries as usize, truncated: false };
    listing.walk(&resolved.path, "", input.recursive)?;
    Ok(ListOutput { path: Some(resolved.path), entries: listing.entries, truncated: listing.truncated })
}

struct Listing {
    entries: Vec<Entry>,
    limit: usize,
    truncated: bool,
}

impl Listing {
    /// Adds the entries of `directory` (named with `prefix`), depth first when
    /// `recursive`, until the limit.
    fn walk(&mut self, directory: &str, prefix: &str, recursive: bool) -> Result<(), FileError> {
        let mut children = Vec::new();
        for entry in std::fs::read_dir(directory).map_err(|e| FileError::io(directory, e))? {
            let entry = entry.map_err(|e| FileError::io(directory, e))?;
            children.push(entry.file_name().to_string_lossy().into_owned());
        }
        children.sort();
        for name in children {
            if self.entries.len() == self.limit {
                self.truncated = true;
                return Ok(());
            }
            let full = format!("{}/{name}", directory.trim_end_matches('/'));
            // Not following links: a link is listed as a link, and never walked into.
            let metadata = std::fs::symlink_metadata(&full).map_err(|e| FileError::io(&full, e))?;
            let kind = Kind::of(metadata.file_type());
            let relative = format!("{prefix}{name}");
            self.entries.push(Entry {
                name: relative.clone(),
                kind,
                size: (kind == Kind::File).then_some(metadata.len()),
                modified: metadata.modified().ok().and_then(timestamp::of),
                access: None,
            });
            if recursive && kind == Kind::Directory {
                self.walk(&full, &format!("{relative}/"), true)?;
                if self.truncated {
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

fn stat_path(input: PathInput) -> Result<StatOutput, FileError> {
    let resolved = grants::resolve(&input.path)?;
    let writable = resolved.grant.writable;
    let path = resolved.path;
    let metadata = match std::fs::symlink_metadata(&path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(StatOutput {
                path,
                exists: false,
                kind: None,
                size: None,
                modified: None,
                link_target: None,
                writable,
            });
        }
        Err(e) => return Err(FileError::io(&path, e)),
    };
    let kind = Kind::of(metadata.file_type());
    let link_target = if kind == Kind::Symlink {
        std::fs::read_link(&path).ok().map(|target| target.to_string_lossy().into_owned())
    } else {
        None
    };
    Ok(StatOutput {
        exists: true,
        kind: Some(kind),
        size: Some(metadata.len()),
        modified: metadata.modified().ok().and_then(timestamp::of),
        link_target,
        writable,
        path,
    })
}

fn delete_path(input: DeleteInput) -> Result<DeleteOutput, FileError> {
    let resolved = grants::resolve(&input.path)?;
    if resolved.is_grant_root() {
        return Err(FileError::GrantRoot { path: resolved.path });
    }
    resolved.require_writable()?;
    let path = resolved.path;
    let metadata = std::fs::symlink_metadata(&path).map_err(|e| FileError::io(&path, e))?;
    let kind = Kind::of(metadata.file_type());
    let entries_removed = if kind == Kind::Directory {
        if input.recursive {
            remove_tree(&path)?
        } else {
            // Asked before removing: WASI's "not empty" error reaches Rust's std as an
            // uncategorized one, which would make a worse message.
            let mut entries = std::fs::read_dir(&path).map_err(|e| FileError::io(&path, e))?;
            if entries.next().is_some() {
                return Err(FileError::NotEmpty { path });
            }
            std::fs::remove_dir(&path).map_err(|e| FileError::io(&path, e))?;
            1
        }
    } else {
        std::fs::remove_file(&path).map_err(|e| FileError::io(&path, e))?;
        1
    };
    Ok(DeleteOutput { path, kind, entries_removed })
}

/// Removes a directory and everything under it, links as links; returns how many
/// entries went, the directory included.
fn remove_tree(directory: &str) -> Result<u64, FileError> {
    let mut removed = 0;
    for entry in std::fs::read_dir(directory).map_err(|e| FileError::io(directory, e))? {
        let entry = entry.map_err(|e| FileError::io(directory, e))?;
        let full = format!("{directory}/{}", entry.file_name().to_string_lossy());
        let metadata = std::fs::symlink_metadata(&full).map_err(|e| FileError::io(&full, e))?;
        if metadata.is_dir() {
            removed += remove_tree(&full)?;
        } else {
            std::fs::remove_file(&full).map_err(|e| FileError::io(&full, e))?;
            removed += 1;
        }
    }
    std::fs::remove_dir(directory).map_err(|e| FileError::io(directory, e))?;
    Ok(removed + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_reads_stop_before_a_cut_character_only_when_the_file_goes_on() {
        let text = "aé".as_bytes(); // 61 C3 A9
        assert_eq!(text_prefix(&text[..2], true), Ok(1));
        assert_eq!(text_prefix(&text[..2], false), Err(1));
        assert_eq!(text_prefix(text, false), Ok(3));
        assert_eq!(text_prefix(b"a\xffb", true), Err(1));
    }

    #[test]
    fn parents_of_normalized_paths() {
        assert_eq!(parent_of("/data/a/b.txt"), "/data/a");
        assert_eq!(parent_of("/top.txt"), "/");
    }

    #[test]
    fn content_bound_fits_the_write_limit_in_base64() {
        assert_eq!(u64::from(MAX_CONTENT_CHARS), MAX_WRITE_BYTES.div_ceil(3) * 4);
    }
}
