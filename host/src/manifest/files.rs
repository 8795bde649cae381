//! The files a manifest's prompts and resources read: inside its directory, regular, bounded.

use std::path::{Path, PathBuf};

/// The largest file a prompt or resource reads.
pub const MAX_FILE_BYTES: u64 = 4 << 20;

/// The most bytes one manifest's prompts and resources read from files, together.
pub const MAX_TOTAL_FILE_BYTES: u64 = 16 << 20;

/// The files of one manifest's declarations: inside `base`, within a byte budget.
pub(super) struct Files<'a> {
    base: &'a Path,
    left: u64,
    read: Vec<PathBuf>,
}

impl<'a> Files<'a> {
    /// The files under `base`, with the whole budget left.
    pub(super) fn new(base: &'a Path) -> Files<'a> {
        Files { base, left: MAX_TOTAL_FILE_BYTES, read: Vec::new() }
    }

    /// The files read so far, each once, as declared.
    pub(super) fn take_read(&mut self) -> Vec<PathBuf> {
        std::mem::take(&mut self.read)
    }

    /// The bytes of `path`: a regular file at a relative path that stays inside the
    /// manifest's directory (symbolic links included), at most [`MAX_FILE_BYTES`] and
    /// within what is left of the manifest's budget.
    pub(super) fn read(&mut self, path: &str) -> Result<Vec<u8>, String> {
        let relative = Path::new(path);
        if relative.is_absolute() || relative.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
            return Err(format!("`{path}` is not a path inside the manifest's directory"));
        }
        let unreadable = |e: std::io::Error| format!("`{path}`: {e}");
        let base = self.base.canonicalize().map_err(unreadable)?;
        let file = base.join(relative).canonicalize().map_err(unreadable)?;
        if !file.starts_with(&base) {
            return Err(format!("`{path}` leads outside the manifest's directory"));
        }
        if !std::fs::metadata(&file).map_err(unreadable)?.is_file() {
            return Err(format!("`{path}` is not a regular file"));
        }
        let limit = MAX_FILE_BYTES.min(self.left);
        let bytes = crate::text::read_bytes_bounded(&file, limit).map_err(|e| match e.kind() {
            std::io::ErrorKind::FileTooLarge if limit < MAX_FILE_BYTES => {
                format!("`{path}` is over what is left of the manifest's {MAX_TOTAL_FILE_BYTES} bytes of files")
            }
            std::io::ErrorKind::FileTooLarge => format!("`{path}` is over {MAX_FILE_BYTES} bytes"),
            _ => unreadable(e),
        })?;
        self.left -= bytes.len() as u64;
        // As declared, not resolved: replacing a link, or its target, is a change.
        let declared = self.base.join(relative);
        if !self.read.contains(&declared) {
            self.read.push(declared);
        }
        Ok(bytes)
    }
}
