//! The directories the operator granted (the component's WASI preopens) and where a
//! path lands among them. The host enforces the grants whatever this module says; it
//! exists so that a refusal names the granted directories instead of a bare errno.

use std::fmt;

use wasip2::filesystem::preopens::get_directories;
use wasip2::filesystem::types::DescriptorFlags;

use crate::error::FileError;

/// One granted directory, by the path the tools see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// Absolute, normalized (`/data`, or `/` for the root).
    pub path: String,
    pub writable: bool,
}

impl fmt::Display for Grant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let access = if self.writable { "read-write" } else { "read-only" };
        write!(f, "{} ({access})", self.path)
    }
}

/// Every granted directory, as a list for messages: `/data (read-only), /work
/// (read-write)`.
#[derive(Debug)]
pub struct Granted(pub Vec<Grant>);

impl fmt::Display for Granted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, grant) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{grant}")?;
        }
        Ok(())
    }
}

/// The granted directories, as the host passed them to this call.
pub fn granted() -> Vec<Grant> {
    let mut grants: Vec<Grant> = get_directories()
        .into_iter()
        .filter_map(|(descriptor, path)| {
            // A read-only grant is opened without write access: the host refuses every
            // change under it, and its flags lack MUTATE_DIRECTORY.
            let writable = descriptor.get_flags().is_ok_and(|flags| flags.contains(DescriptorFlags::MUTATE_DIRECTORY));
            normalize(&path).map(|path| Grant { path, writable })
        })
        .collect();
    grants.sort_by(|a, b| a.path.cmp(&b.path));
    grants
}

/// A path the tools may use: normalized, inside `grant`.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub path: String,
    pub grant: Grant,
}

impl Resolved {
    /// The granted directory itself, not something in it.
    pub fn is_grant_root(&self) -> bool {
        self.path == self.grant.path
    }

    pub fn require_writable(&self) -> Result<(), FileError> {
        if self.grant.writable {
            Ok(())
        } else {
            Err(FileError::ReadOnly { path: self.path.clone(), grant: self.grant.path.clone() })
        }
    }
}

/// Finds the granted directory `path` is in (the deepest, when grants nest).
pub fn resolve(path: &str) -> Result<Resolved, FileError> {
    let grants = granted();
    if grants.is_empty() {
        return Err(FileError::NoGrant);
    }
    let Some(normalized) = normalize(path) else {
        return Err(FileError::Relative { path: path.to_owned(), granted: Granted(grants) });
    };
    let grant = grants.iter().filter(|grant| contains(&grant.path, &normalized)).max_by_key(|grant| grant.path.len());
    match grant {
        Some(grant) => Ok(Resolved { path: normalized, grant: grant.clone() }),
        None => Err(FileError::Outside { path: path.to_owned(), granted: Granted(grants) }),
    }
}

fn contains(directory: &str, path: &str) -> bool {
    directory == "/" || path == directory || path.strip_prefix(directory).is_some_and(|rest| rest.starts_with('/'))
}

/// An absolute path with `.`, `..` and repeated slashes resolved as text (`..` never
/// above `/`); `None` for a relative path.
pub fn normalize(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return None;
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    Some(format!("/{}", segments.join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_normalize_as_text() {
        assert_eq!(normalize("/data/./a//b/../c/").as_deref(), Some("/data/a/c"));
        assert_eq!(normalize("/data/../../etc").as_deref(), Some("/etc"));
        assert_eq!(normalize("/").as_deref(), Some("/"));
        assert_eq!(normalize("data/a"), None);
        assert_eq!(normalize(""), None);
    }

    #[test]
    fn a_directory_contains_itself_and_what_is_below_it() {
        assert!(contains("/data", "/data"));
        assert!(contains("/data", "/data/a"));
        assert!(!contains("/data", "/database"));
        assert!(contains("/", "/anything"));
    }
}
