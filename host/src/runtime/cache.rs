//! The on-disk compile cache: native code of compiled components, so that a restart compiles nothing it has seen.
//!
//! The on-disk compile cache: native code of compiled components, so that a restart or a
//! reload of an unchanged file does not compile again.
//!
//! Entries live in `<dir>/<engine key>/<content hash>.cwasm`. The engine key covers the
//! wasmtime version and every engine setting that shapes machine code (fuel, epochs,
//! target, ...), so an entry is only ever read by an engine that could have written it.
//! Each entry has a BLAKE3 checksum beside it (`<content hash>.sum`): a torn or corrupted
//! file is detected, deleted and recompiled, never handed to wasmtime.
//!
//! An entry is the artifact exactly as wasmtime serialized it, so that it is *mapped*
//! from the file rather than copied into memory: the code of an idle component costs
//! only the pages that calls touched, and those pages belong to the page cache, shared
//! with every other process serving the same component. A freshly compiled component is
//! swapped for its mapped copy as soon as it is written.
//!
//! Trust: loading native code from the cache is as trusted as the cache directory, so
//! [`CompileCache::open`] refuses a directory that anyone but the user running the host
//! could write to: one owned by another user, one writable by group or others, or one
//! below a directory that others could use to swap it (owned by another user, or
//! world-writable without the sticky bit). New directories are created `0700`. A refused
//! cache only costs compile time: the host runs without it and says why.
//!
//! A *precompiled* cache ([`CompileCache::open_precompiled`]) is one `toolhost compile`
//! filled for replicas to mount read-only: the host only reads it (a bad entry is
//! skipped, not removed), accepts it owned by root as well as by its own user, and says
//! when it holds no code for this host's engine, which then compiles.

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

/// The directory, beside the engines' directories, of what components list: it holds no
/// code, so every engine reads it.
const LISTINGS: &str = "listings";

/// The checksum file: this magic, then the BLAKE3 of the entry.
const MAGIC: &[u8; 16] = b"toolhost-cwasm2\n";
const SUM_LEN: usize = MAGIC.len() + blake3::OUT_LEN;

/// A compile cache bound to one engine configuration.
#[derive(Debug, Clone)]
pub struct CompileCache {
    dir: PathBuf,
    /// What each component lists, by content hash, for every engine
    /// ([`super::listings`]).
    pub(super) listings: PathBuf,
    /// Read, never written (a precompiled cache).
    pub(super) read_only: bool,
}

/// Why a precompiled cache is not used.
#[derive(Debug, thiserror::Error)]
pub enum PrecompiledError {
    /// It cannot be read, or is not trusted.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// It was compiled for other engines: another toolhost or wasmtime version, another
    /// machine's target, or other `[engine]` settings.
    #[error(
        "it holds code for engine {}, not for this host's engine {this} (another toolhost or wasmtime version, \
         target or [engine] settings made it)",
        if .found.is_empty() { "(none)".to_owned() } else { .found.join(", ") }
    )]
    OtherEngines {
        /// This host's engine key.
        this: String,
        /// The engine keys the cache has entries for.
        found: Vec<String>,
    },
}

/// Why a cache entry was not used.
#[derive(Debug, PartialEq, Eq)]
pub enum Miss {
    Absent,
    /// The entry exists but failed its checksum or deserialization; it was removed.
    Corrupt(String),
}

impl CompileCache {
    /// Opens (creating) the cache for `engine` under `base`.
    pub fn open(base: &Path, engine: &Engine) -> std::io::Result<Self> {
        let (dir, listings) = (base.join(engine_key(engine)), base.join(LISTINGS));
        for dir in [&dir, &listings] {
            create_private_dir(dir)?;
            check_trusted(base, dir, Owners::Me)?;
            remove_unfinished_writes(dir, UNFINISHED_WRITE_AGE);
        }
        Ok(CompileCache { dir, listings, read_only: false })
    }

    /// Opens the precompiled cache under `base` for `engine`, to read only.
    pub fn open_precompiled(base: &Path, engine: &Engine) -> Result<Self, PrecompiledError> {
        let this = engine_key(engine);
        let dir = base.join(&this);
        if !dir.is_dir() {
            let mut found: Vec<String> = std::fs::read_dir(base)?
                .flatten()
                .filter(|entry| entry.path().is_dir() && entry.file_name() != LISTINGS)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect();
            found.sort();
            return Err(PrecompiledError::OtherEngines { this, found });
        }
        check_trusted(base, &dir, Owners::MeOrRoot)?;
        let listings = base.join(LISTINGS);
        if listings.is_dir() {
            check_trusted(base, &listings, Owners::MeOrRoot)?;
        }
        Ok(CompileCache { dir, listings, read_only: true })
    }

    /// The directory of this engine's entries.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Whether an entry for `content_hash` is written (not whether it is valid).
    pub fn holds(&self, content_hash: &str) -> bool {
        self.entry(content_hash).is_file()
    }

    fn entry(&self, content_hash: &str) -> PathBuf {
        self.dir.join(format!("{content_hash}.cwasm"))
    }

    fn checksum(&self, content_hash: &str) -> PathBuf {
        self.dir.join(format!("{content_hash}.sum"))
    }

    /// Loads the compiled component for `content_hash`, if a sound entry exists, mapped
    /// from its file.
    pub fn get(&self, engine: &Engine, content_hash: &str) -> Result<Component, Miss> {
        let (path, sum_path) = (self.entry(content_hash), self.checksum(content_hash));
        let Ok(sum) = std::fs::read(&sum_path) else { return Err(Miss::Absent) };
        let corrupt = |reason: String| {
            if !self.read_only {
                let _ = std::fs::remove_file(&sum_path);
                let _ = std::fs::remove_file(&path);
            }
            tracing::warn!(entry = %path.display(), "compile cache entry discarded: {reason}");
            Miss::Corrupt(reason)
        };
        if sum.len() != SUM_LEN || &sum[..MAGIC.len()] != MAGIC {
            return Err(corrupt("its checksum file is not a toolhost checksum".into()));
        }
        let checksum = file_checksum(&path).map_err(|e| corrupt(format!("cannot read the entry: {e}")))?;
        if checksum.as_bytes() != &sum[MAGIC.len()..] {
            return Err(corrupt("checksum mismatch".into()));
        }
        // SAFETY: the file is byte-for-byte what `put` wrote from `Component::serialize`
        // of an engine with this same configuration (the directory is keyed by it), as
        // the checksum just proved. Entries are only ever replaced by rename, never
        // written in place, so the mapping cannot change under the component; see the
        // module docs for the trust placed in the cache directory.
        let component = unsafe { Component::deserialize_file(engine, &path) }.map_err(|e| corrupt(format!("{e:#}")))?;
        super::release_pages(&component);
        Ok(component)
    }

    /// Stores a compiled component and returns its copy mapped from the new entry. The
    /// entry and then its checksum are each written to a temporary file and renamed, so
    /// a reader never sees half an entry, nor a checksum of a missing one. Failures only
    /// cost a recompile later (and the component stays in memory), so they are logged,
    /// not returned.
    pub fn put(&self, engine: &Engine, content_hash: &str, component: &Component) -> Option<Component> {
        if self.read_only {
            return None;
        }
        if let Err(e) = self.try_put(content_hash, component) {
            tracing::warn!(dir = %self.dir.display(), "cannot write compile cache entry: {e}");
            return None;
        }
        self.get(engine, content_hash).ok()
    }

    fn try_put(&self, content_hash: &str, component: &Component) -> anyhow::Result<()> {
        let payload = component.serialize().map_err(|e| anyhow::anyhow!("{e:#}"))?;
        let mut entry = tempfile::NamedTempFile::new_in(&self.dir)?;
        entry.write_all(&payload)?;
        entry.persist(self.entry(content_hash))?;
        let mut sum = tempfile::NamedTempFile::new_in(&self.dir)?;
        sum.write_all(MAGIC)?;
        sum.write_all(blake3::hash(&payload).as_bytes())?;
        sum.persist(self.checksum(content_hash))?;
        Ok(())
    }
}

/// A temporary file this old is a write that never finished (its host was killed
/// mid-write); a younger one may be another host's write in progress.
const UNFINISHED_WRITE_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// Removes the temporary files of writes older than `age`, so that hosts killed while
/// writing leave no growing litter. Best effort: the cache works without it.
fn remove_unfinished_writes(dir: &Path, age: std::time::Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        // `tempfile`'s names: `.tmp` and random characters.
        if !entry.file_name().to_string_lossy().starts_with(".tmp") {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified.elapsed().is_ok_and(|elapsed| elapsed >= age));
        if old && std::fs::remove_file(entry.path()).is_ok() {
            tracing::debug!(file = %entry.path().display(), "removed an unfinished compile cache write");
        }
    }
}

/// BLAKE3 of a file, read in small pieces: an entry is mapped, never held in memory.
fn file_checksum(path: &Path) -> std::io::Result<blake3::Hash> {
    let mut hasher = blake3::Hasher::new();
    let mut file = std::fs::File::open(path)?;
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hasher.finalize())
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Who may own a cache directory.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owners {
    /// This process's user: a cache it writes.
    Me,
    /// This user or root: a precompiled cache, which root may have put in place (root
    /// could replace this host's binary as well).
    MeOrRoot,
}

/// Refuses a cache that someone other than this process's user (or root, when `owners`
/// allows) could write to.
#[cfg(unix)]
fn check_trusted(base: &Path, dir: &Path, owners: Owners) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;

    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let refuse = |path: &Path, why: String| {
        std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "{} {why}; the cache holds native code the host runs, so it must be writable only by uid {me}",
                path.display()
            ),
        )
    };
    for path in [base, dir] {
        let meta = std::fs::metadata(path)?;
        let owner_ok = meta.uid() == me || (owners == Owners::MeOrRoot && meta.uid() == 0);
        if !owner_ok {
            return Err(refuse(path, format!("is owned by uid {}", meta.uid())));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(refuse(path, format!("is writable by group or others (mode {:o})", meta.mode() & 0o7777)));
        }
    }
    let base = std::fs::canonicalize(base)?;
    for ancestor in base.ancestors().skip(1) {
        let meta = std::fs::metadata(ancestor)?;
        if meta.uid() != me && meta.uid() != 0 {
            return Err(refuse(ancestor, format!("(above the cache) is owned by uid {}", meta.uid())));
        }
        let sticky = meta.mode() & 0o1000 != 0;
        if meta.mode() & 0o002 != 0 && !sticky {
            return Err(refuse(ancestor, "(above the cache) is world-writable without the sticky bit".into()));
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_trusted(_base: &Path, _dir: &Path, _owners: Owners) -> std::io::Result<()> {
    Ok(())
}

/// A stable hex key for everything that makes compiled code of two engines
/// incompatible: wasmtime's own compatibility hash (target, compiler flags, tunables,
/// features and the wasmtime version) plus this crate's version and entry format.
fn engine_key(engine: &Engine) -> String {
    let mut hasher = Blake3Hasher(blake3::Hasher::new());
    env!("CARGO_PKG_VERSION").hash(&mut hasher);
    MAGIC.hash(&mut hasher);
    engine.precompile_compatibility_hash().hash(&mut hasher);
    hasher.0.finalize().to_hex()[..16].to_owned()
}

/// `Hasher` over BLAKE3, so the key does not depend on std's unspecified hasher.
struct Blake3Hasher(blake3::Hasher);

impl Hasher for Blake3Hasher {
    fn finish(&self) -> u64 {
        let hash = self.0.finalize();
        u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes"))
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    use super::*;

    fn set_mode(path: &Path, mode: u32) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn writes_a_killed_host_left_unfinished_are_removed_once_old() {
        let temp = tempfile::tempdir().unwrap();
        let dir = CompileCache::open(temp.path(), &Engine::default()).unwrap().dir().to_owned();
        let (stale, fresh, entry) = (dir.join(".tmpAbC123"), dir.join(".tmpXyZ789"), dir.join("0123.cwasm"));
        for path in [&stale, &fresh, &entry] {
            std::fs::write(path, b"partial").unwrap();
        }
        let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
        for path in [&stale, &entry] {
            std::fs::File::options().write(true).open(path).unwrap().set_modified(two_hours_ago).unwrap();
        }
        CompileCache::open(temp.path(), &Engine::default()).unwrap();
        assert!(!stale.exists(), "an old unfinished write is removed");
        assert!(fresh.exists(), "a young one may be another host's write in progress");
        assert!(entry.exists(), "entries are not temporary files");
    }

    #[test]
    fn a_new_cache_is_private_to_its_user() {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().join("cache");
        let cache = CompileCache::open(&base, &Engine::default()).unwrap();
        assert_eq!(std::fs::metadata(&base).unwrap().mode() & 0o777, 0o700);
        assert_eq!(std::fs::metadata(cache.dir()).unwrap().mode() & 0o777, 0o700);
        // Reopening an existing private cache is fine; so is a 0755 one.
        set_mode(&base, 0o755);
        CompileCache::open(&base, &Engine::default()).unwrap();
    }

    #[test]
    fn a_cache_others_can_write_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().join("cache");
        std::fs::create_dir(&base).unwrap();
        for mode in [0o777, 0o775, 0o757] {
            set_mode(&base, mode);
            let error = CompileCache::open(&base, &Engine::default()).unwrap_err();
            assert_eq!(error.kind(), std::io::ErrorKind::PermissionDenied);
            assert!(error.to_string().contains("writable by group or others"), "{mode:o}: {error}");
            assert!(error.to_string().contains(&base.display().to_string()), "{error}");
        }
    }

    #[test]
    fn a_cache_under_a_world_writable_directory_needs_its_sticky_bit() {
        let temp = tempfile::tempdir().unwrap();
        let shared = temp.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        let base = shared.join("cache");
        set_mode(&shared, 0o777);
        let error = CompileCache::open(&base, &Engine::default()).unwrap_err();
        assert!(error.to_string().contains("world-writable without the sticky bit"), "{error}");
        assert!(error.to_string().contains(&shared.display().to_string()), "{error}");
        set_mode(&shared, 0o1777);
        CompileCache::open(&base, &Engine::default()).unwrap();
    }
}
