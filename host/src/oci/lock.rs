//! `toolhost.lock`: the exact bytes of every OCI component, pinned by digest for every host of a configuration.
//!
//! `toolhost.lock`: the exact bytes of every OCI component, written by `toolhost pull`
//! beside `toolhost.toml` and read by every host started on that configuration. Commit
//! it: replicas that pull from it run the same bytes, whatever a tag points at since.
//!
//! ```toml
//! # Written by `toolhost pull`; pins every component pulled from an OCI registry.
//! version = 1
//!
//! [[component]]
//! layer = "org"
//! name = "weather/forecast"                       # <namespace>/<file name>
//! reference = "oci://registry.example.com/tools/forecast:1.2"
//! manifest = "sha256:…"                           # the manifest pulled
//! sha256 = "sha256:…"                             # the component's bytes
//! size = 1048576
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::trust::Sha256;

/// The file name, beside `toolhost.toml`.
pub const LOCK_FILE: &str = "toolhost.lock";

const HEADER: &str = "# Written by `toolhost pull`; pins every component pulled from an OCI registry.\n\
                      # Commit it; `toolhost pull --update` moves the pins to what the tags name now.\n";

/// The pins of a configuration's OCI components.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lock {
    /// One entry per component, in layer, then name order.
    pub components: Vec<Locked>,
}

/// One pulled component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    /// The layer it is served in.
    pub layer: String,
    /// `<namespace>/<file name>`.
    pub name: String,
    /// The reference as `toolhost.toml` writes it.
    pub reference: String,
    /// The digest of the manifest pulled.
    pub manifest: Sha256,
    /// The digest of the component's bytes (its `application/wasm` layer).
    pub sha256: Sha256,
    /// Its size in bytes.
    pub size: u64,
    /// The key whose cosign signature of the manifest the pull checked in the
    /// registry, when `[signatures]` requires one.
    pub signed_by: Option<PathBuf>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLock {
    version: u32,
    #[serde(default)]
    component: Vec<RawLocked>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLocked {
    layer: String,
    name: String,
    reference: String,
    manifest: String,
    sha256: String,
    size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    signed_by: Option<PathBuf>,
}

/// A lock file that cannot be read, with the file and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {problem}", .path.display())]
pub struct LockError {
    /// The lock file.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: String,
}

impl Lock {
    /// The lock file of the configuration at `config`.
    pub fn path_for(config: &Path) -> PathBuf {
        config.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).join(LOCK_FILE)
    }

    /// Reads the lock at `path`; a missing file is an empty lock.
    pub fn read(path: &Path) -> Result<Lock, LockError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Lock::default()),
            Err(e) => return Err(LockError { path: path.to_owned(), problem: format!("cannot read: {e}") }),
        };
        Lock::parse(path, &text)
    }

    /// Checks lock text; `path` names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Lock, LockError> {
        let error = |problem: String| LockError { path: path.to_owned(), problem };
        let raw: RawLock = toml::from_str(text).map_err(|e| error(e.message().to_owned()))?;
        if raw.version != 1 {
            return Err(error(format!("version {} is not one this toolhost reads (1)", raw.version)));
        }
        let mut components = Vec::with_capacity(raw.component.len());
        for entry in raw.component {
            let digest = |what: &str, text: &str| {
                Sha256::parse(text).map_err(|problem| error(format!("component `{}`: `{what}`: {problem}", entry.name)))
            };
            components.push(Locked {
                manifest: digest("manifest", &entry.manifest)?,
                sha256: digest("sha256", &entry.sha256)?,
                layer: entry.layer,
                name: entry.name,
                reference: entry.reference,
                size: entry.size,
                signed_by: entry.signed_by,
            });
        }
        Ok(Lock { components })
    }

    /// The entry of `name` in `layer`.
    pub fn get(&self, layer: &str, name: &str) -> Option<&Locked> {
        self.components.iter().find(|c| c.layer == layer && c.name == name)
    }

    /// The lock as text, entries sorted, so that an unchanged toolset writes the same file.
    pub fn to_text(&self) -> String {
        let mut components: Vec<&Locked> = self.components.iter().collect();
        components.sort_by(|a, b| (&a.layer, &a.name).cmp(&(&b.layer, &b.name)));
        let raw = RawLock {
            version: 1,
            component: components
                .into_iter()
                .map(|c| RawLocked {
                    layer: c.layer.clone(),
                    name: c.name.clone(),
                    reference: c.reference.clone(),
                    manifest: c.manifest.to_string(),
                    sha256: c.sha256.to_string(),
                    size: c.size,
                    signed_by: c.signed_by.clone(),
                })
                .collect(),
        };
        format!("{HEADER}{}", toml::to_string(&raw).expect("a lock serializes"))
    }

    /// Writes the lock to `path` atomically (a reader sees the old or the new file).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        crate::oci::store::write_atomically(path, self.to_text().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn locked(name: &str) -> Locked {
        Locked {
            layer: "org".into(),
            name: name.into(),
            reference: format!("oci://r.example/{name}:1"),
            manifest: Sha256::of(name.as_bytes()),
            sha256: Sha256::of(b"bytes"),
            size: 5,
            signed_by: (name == "b/two").then(|| PathBuf::from("keys/cosign.pub")),
        }
    }

    #[test]
    fn a_lock_reads_back_what_it_wrote_sorted() {
        let lock = Lock { components: vec![locked("b/two"), locked("a/one")] };
        let text = lock.to_text();
        assert!(text.starts_with("# Written by `toolhost pull`"), "{text}");
        assert!(text.find("a/one").unwrap() < text.find("b/two").unwrap(), "{text}");
        let read = Lock::parse(Path::new("toolhost.lock"), &text).unwrap();
        assert_eq!(read.get("org", "a/one"), Some(&locked("a/one")));
        assert_eq!(read.components.len(), 2);
        assert_eq!(read.to_text(), text);
    }

    #[test]
    fn a_bad_lock_is_named_with_its_problem() {
        let path = Path::new("/srv/toolhost.lock");
        let error = Lock::parse(path, "version = 2\n").unwrap_err();
        assert!(error.to_string().starts_with("/srv/toolhost.lock: version 2"), "{error}");
        let text = Lock { components: vec![locked("a/one")] }.to_text().replace("sha256:", "md5:");
        let error = Lock::parse(path, &text).unwrap_err();
        assert!(error.problem.contains("component `a/one`: `manifest`"), "{error}");
        let error = Lock::parse(path, "version = 1\nextra = true\n").unwrap_err();
        assert!(error.problem.contains("unknown field `extra`"), "{error}");
        assert_eq!(Lock::read(Path::new("/nonexistent/toolhost.lock")).unwrap(), Lock::default());
    }
}
