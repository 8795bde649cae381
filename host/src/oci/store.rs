//! The local content-addressed store of pulled blobs, each written whole after its digest was checked.
//!
//! The local content-addressed store of pulled blobs: `<store>/blobs/sha256/<hex>`, each
//! written only after its bytes were checked against its digest, by a rename, so a blob
//! present is a blob whole. `toolhost pull` fetches only what the store lacks.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::trust::Sha256;

/// Blobs by digest.
#[derive(Debug, Clone)]
pub struct BlobStore {
    dir: PathBuf,
}

impl BlobStore {
    /// The store under `dir` (created when first written to).
    pub fn new(dir: impl Into<PathBuf>) -> BlobStore {
        BlobStore { dir: dir.into() }
    }

    /// Where the store is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path(&self, digest: &Sha256) -> PathBuf {
        let hex = digest.to_string();
        self.dir.join("blobs").join("sha256").join(&hex["sha256:".len()..])
    }

    /// The bytes of `digest`, when the store holds them and they still hash to it (a
    /// blob damaged on disk is removed and reported missing, to be fetched again).
    pub fn get(&self, digest: &Sha256) -> Option<Vec<u8>> {
        let path = self.path(digest);
        let bytes = std::fs::read(&path).ok()?;
        if Sha256::of(&bytes) == *digest {
            return Some(bytes);
        }
        tracing::warn!(blob = %path.display(), "a stored blob no longer matches its digest; fetching it again");
        let _ = std::fs::remove_file(&path);
        None
    }

    /// Stores `bytes`, which the caller checked hash to `digest`.
    pub fn put(&self, digest: &Sha256, bytes: &[u8]) -> std::io::Result<PathBuf> {
        let path = self.path(digest);
        write_atomically(&path, bytes)?;
        Ok(path)
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a
/// rename, creating the directory: a reader (or a file watcher) sees the old file or the
/// new one, never a part.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_kept_by_digest_and_a_damaged_one_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlobStore::new(dir.path());
        let digest = Sha256::of(b"component");
        assert_eq!(store.get(&digest), None);
        let path = store.put(&digest, b"component").unwrap();
        assert!(path.ends_with(&digest.to_string()["sha256:".len()..]));
        assert_eq!(store.get(&digest).as_deref(), Some(&b"component"[..]));
        std::fs::write(&path, b"damaged").unwrap();
        assert_eq!(store.get(&digest), None);
        assert!(!path.exists());
    }
}
