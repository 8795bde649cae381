//! `fs`: read, write and list files, but only inside the directories the operator granted
//! in the manifest (for example `/data`). Every path is resolved by the host inside the
//! grant: `..`, absolute paths elsewhere and symlinks that point outside all fail.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_guest::{ToolError, toolbox};

/// Files larger than this are refused by `read`, so an answer stays readable.
const MAX_READ_BYTES: u64 = 1 << 20;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PathInput {
    /// A path inside a granted directory, e.g. `/data/notes.txt`.
    #[schemars(length(min = 1, max = 4096))]
    path: String,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WriteInput {
    #[schemars(length(min = 1, max = 4096))]
    path: String,
    contents: String,
    /// Append instead of replacing the file.
    #[serde(default)]
    append: bool,
}

#[derive(Serialize, JsonSchema)]
struct Contents {
    contents: String,
    bytes: u64,
}

#[derive(Serialize, JsonSchema)]
struct Written {
    bytes: u64,
}

#[derive(Serialize, JsonSchema)]
struct Entry {
    name: String,
    kind: &'static str,
    bytes: u64,
}

#[derive(Serialize, JsonSchema)]
struct Listing {
    entries: Vec<Entry>,
}

fn io_error(path: &str, error: std::io::Error) -> ToolError {
    match error.kind() {
        std::io::ErrorKind::NotFound => ToolError::invalid_input(format!("`{path}` does not exist")),
        std::io::ErrorKind::PermissionDenied => ToolError::failed(format!("`{path}`: permission denied")),
        _ => ToolError::failed(format!("`{path}`: {error}")),
    }
}

toolbox! {
    /// Reads a UTF-8 text file (at most 1 MiB) from a granted directory.
    fn read(input: PathInput) -> Result<Contents, ToolError> {
        let metadata = std::fs::metadata(&input.path).map_err(|e| io_error(&input.path, e))?;
        if metadata.len() > MAX_READ_BYTES {
            return Err(ToolError::invalid_input(format!("`{}` is {} bytes; the limit is {MAX_READ_BYTES}", input.path, metadata.len())));
        }
        let contents = std::fs::read_to_string(&input.path).map_err(|e| io_error(&input.path, e))?;
        Ok(Contents { bytes: contents.len() as u64, contents })
    }

    /// Writes (or appends to) a text file in a directory granted read-write.
    fn write(input: WriteInput) -> Result<Written, ToolError> {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(input.append)
            .truncate(!input.append)
            .open(&input.path)
            .map_err(|e| io_error(&input.path, e))?;
        file.write_all(input.contents.as_bytes()).map_err(|e| io_error(&input.path, e))?;
        Ok(Written { bytes: input.contents.len() as u64 })
    }

    /// Lists a directory: names, kinds (`file`, `dir`, `symlink`) and sizes, sorted by name.
    fn list(input: PathInput) -> Result<Listing, ToolError> {
        let mut entries = Vec::new();
        for entry in std::fs::read_dir(&input.path).map_err(|e| io_error(&input.path, e))? {
            let entry = entry.map_err(|e| io_error(&input.path, e))?;
            let file_type = entry.file_type().map_err(|e| io_error(&input.path, e))?;
            let kind = if file_type.is_dir() { "dir" } else if file_type.is_symlink() { "symlink" } else { "file" };
            let bytes = if file_type.is_file() { entry.metadata().map(|m| m.len()).unwrap_or(0) } else { 0 };
            entries.push(Entry { name: entry.file_name().to_string_lossy().into_owned(), kind, bytes });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Listing { entries })
    }
}
