//! Finding component files and HTTP tool definitions in a root, and telling whether a file changed without reading it.
//!
//! Finding component files and HTTP tool definitions in a root, and telling whether a
//! file changed since it was loaded without reading it.

use std::path::{Path, PathBuf};

use crate::error::{LoadError, LoadErrorKind};
use crate::names;
use crate::registry::Layer;

/// A component file found in a root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    pub layer: usize,
    pub namespace: String,
    pub wasm: PathBuf,
    /// `<component>.toml` beside the `.wasm`, when present.
    pub manifest: Option<PathBuf>,
    /// The pin `toolhost.lock` puts on its bytes, when it was pulled from a registry.
    pub pin: Option<crate::trust::Pin>,
}

/// An HTTP tool definition found in a root (`<namespace>/<tool>.http.toml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredHttp {
    pub layer: usize,
    pub namespace: String,
    pub path: PathBuf,
}

/// What one root holds.
#[derive(Debug, Default)]
pub struct Found {
    pub components: Vec<Discovered>,
    pub http: Vec<DiscoveredHttp>,
    pub errors: Vec<LoadError>,
}

/// Lists the components and HTTP tools of one root, in a deterministic order, in the
/// namespaces `wanted` keeps (the others are not even read). Problems with names are
/// returned beside the findings: a bad directory never hides the good ones.
pub fn discover(layer_index: usize, layer: &Layer, wanted: &dyn Fn(&str) -> bool) -> Found {
    let mut found = Vec::new();
    let mut http = Vec::new();
    let mut errors = Vec::new();
    let Some(root) = &layer.root else { return Found::default() };
    let namespaces = match sorted_entries(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::default(),
        Err(e) => {
            errors.push(LoadError::new(root, LoadErrorKind::Io(e.to_string())));
            return Found { errors, ..Found::default() };
        }
    };
    for namespace_dir in namespaces {
        if !namespace_dir.is_dir() {
            continue;
        }
        let Some(namespace) = namespace_dir.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        if namespace.starts_with('.') || !wanted(&namespace) {
            continue;
        }
        let files = match sorted_entries(&namespace_dir) {
            Ok(files) => files,
            Err(e) => {
                errors.push(LoadError::new(&namespace_dir, LoadErrorKind::Io(e.to_string())));
                continue;
            }
        };
        let (wasm_files, http_files): (Vec<PathBuf>, Vec<PathBuf>) = files
            .into_iter()
            .filter(|f| f.is_file())
            .filter(|f| f.extension().is_some_and(|e| e == "wasm") || crate::sources::is_http_tool_file(f))
            .partition(|f| f.extension().is_some_and(|e| e == "wasm"));
        if wasm_files.is_empty() && http_files.is_empty() {
            continue;
        }
        if let Err(problem) = names::validate_namespace(&namespace) {
            errors.push(LoadError::new(&namespace_dir, LoadErrorKind::BadName(problem)));
            continue;
        }
        for wasm in wasm_files {
            let manifest = wasm.with_extension("toml");
            let manifest = manifest.is_file().then_some(manifest);
            found.push(Discovered { layer: layer_index, namespace: namespace.clone(), wasm, manifest, pin: None });
        }
        for path in http_files {
            http.push(DiscoveredHttp { layer: layer_index, namespace: namespace.clone(), path });
        }
    }
    Found { components: found, http, errors }
}

fn sorted_entries(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut entries = std::fs::read_dir(dir)?.map(|entry| entry.map(|e| e.path())).collect::<Result<Vec<_>, _>>()?;
    entries.sort();
    Ok(entries)
}

/// Identity of a file's current contents without reading it: size, modification time
/// (nanoseconds), inode and change time. An atomic replace (rename) changes the inode; an
/// in-place write changes the times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FileStamp {
    len: u64,
    modified_ns: i128,
    inode: u64,
    changed_ns: i128,
}

impl FileStamp {
    pub fn of(path: &Path) -> Option<FileStamp> {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path).ok()?;
        Some(FileStamp {
            len: metadata.len(),
            modified_ns: i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec()),
            inode: metadata.ino(),
            changed_ns: i128::from(metadata.ctime()) * 1_000_000_000 + i128::from(metadata.ctime_nsec()),
        })
    }
}

/// The stamps of a component, its manifest and its signature (`<name>.wasm.sig`), and
/// its pin in `toolhost.lock`: a change to any of them loads the component again.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint {
    pub wasm: Option<FileStamp>,
    pub manifest: Option<FileStamp>,
    pub signature: Option<FileStamp>,
    pub pin: Option<crate::trust::Sha256>,
    /// The files its manifest's prompts and resources read, as they were after reading.
    pub offered_files: Vec<(PathBuf, Option<FileStamp>)>,
}

impl Fingerprint {
    pub fn of(found: &Discovered) -> Fingerprint {
        Fingerprint {
            wasm: FileStamp::of(&found.wasm),
            manifest: found.manifest.as_deref().and_then(FileStamp::of),
            signature: FileStamp::of(&crate::trust::signature_path(&found.wasm)),
            pin: found.pin.as_ref().map(|pin| pin.sha256),
            offered_files: Vec::new(),
        }
    }

    /// This fingerprint with the stamps of `files`: the files a loaded version's
    /// manifest read, so that editing one (a README a resource serves) reloads it.
    pub fn with_files(mut self, files: &[PathBuf]) -> Fingerprint {
        self.offered_files = files.iter().map(|file| (file.clone(), FileStamp::of(file))).collect();
        self
    }
}
