//! What each component lists, kept by content hash beside the compile cache: a load that finds it runs no guest code.
//!
//! A toolbox component says what it offers by running: its `list-tools` export, in a
//! sandbox. Running it touches the component's code and memory image, so a host that
//! loads a hundred components from the compile cache would hold every page of their
//! code before any tool is called. The listing of a component's bytes never changes, so
//! the first load writes it here, and a later load of the same bytes (by any engine, any
//! toolhost version: a listing holds no code) reads it instead of running the guest.
//!
//! Entries are `<cache>/listings/<content hash>.json`, written to a temporary file and
//! renamed, so a reader never sees half of one; an entry that does not parse is a miss
//! (and is removed), since the guest can always list again. They are as trusted as the
//! compile cache, whose directory checks they share: a listing decides which file
//! serves a tool.

use std::io::{Read, Write};
use std::path::PathBuf;

use super::CompileCache;

/// The largest listing read: a component lists at most 256 tools, and their schemas
/// rarely pass a few kilobytes. A larger listing is not kept; the guest lists again.
const MAX_LISTING_BYTES: u64 = 4 << 20;

impl CompileCache {
    fn listing_path(&self, content_hash: &str) -> PathBuf {
        self.listings.join(format!("{content_hash}.json"))
    }

    /// The listing kept for `content_hash`, if any (bounded). Blocking file I/O.
    pub fn listing(&self, content_hash: &str) -> Option<Vec<u8>> {
        let file = std::fs::File::open(self.listing_path(content_hash)).ok()?;
        let mut bytes = Vec::new();
        file.take(MAX_LISTING_BYTES + 1).read_to_end(&mut bytes).ok()?;
        (bytes.len() as u64 <= MAX_LISTING_BYTES).then_some(bytes)
    }

    /// Forgets a listing that did not parse.
    pub fn forget_listing(&self, content_hash: &str) {
        if !self.read_only {
            let _ = std::fs::remove_file(self.listing_path(content_hash));
        }
    }

    /// Keeps the listing of `content_hash`. Failures only cost a `list-tools` run at the
    /// next load, so they are logged, not returned. Blocking file I/O.
    pub fn remember_listing(&self, content_hash: &str, listing: &[u8]) {
        if self.read_only || listing.len() as u64 > MAX_LISTING_BYTES {
            return;
        }
        let write = || -> std::io::Result<()> {
            let mut entry = tempfile::NamedTempFile::new_in(&self.listings)?;
            entry.write_all(listing)?;
            entry.persist(self.listing_path(content_hash))?;
            Ok(())
        };
        if let Err(e) = write() {
            tracing::warn!(dir = %self.listings.display(), "cannot keep a component's listing: {e}");
        }
    }
}
