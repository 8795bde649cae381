//! The crates of the stdlib (`stdlib/`) and where each is installed, as their
//! `Cargo.toml` says. Shared by `cargo xtask stdlib` and the test suite's build script,
//! which hands the tests what to pre-initialize: so it uses nothing but `std`.

use std::path::{Path, PathBuf};

/// One tool component of the stdlib and where it is installed.
#[derive(Debug, PartialEq, Eq)]
pub struct StdlibCrate {
    /// The crate's directory, holding `Cargo.toml` and `manifest.toml`.
    pub dir: PathBuf,
    /// The package name; the component is `<name with _ for ->.wasm`.
    pub package: String,
    /// The namespace directory it is installed in.
    pub namespace: String,
    /// Its file name there, without `.wasm`.
    pub file: String,
    /// The export `toolhost preinit` runs before the component is installed.
    pub preinit: Option<String>,
}

/// Every crate directory under `stdlib/` whose `Cargo.toml` has a
/// `[package.metadata.toolhost]` table, sorted by directory.
pub fn stdlib_crates(stdlib: &Path) -> Result<Vec<StdlibCrate>, String> {
    let entries = std::fs::read_dir(stdlib).map_err(|e| format!("{}: {e}", stdlib.display()))?;
    let mut dirs: Vec<PathBuf> = entries.filter_map(Result::ok).map(|entry| entry.path()).collect();
    dirs.sort();
    let mut crates = Vec::new();
    for dir in dirs {
        let manifest = dir.join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else { continue };
        if let Some(found) = parse_crate(&dir, &text).map_err(|e| format!("{}: {e}", manifest.display()))? {
            crates.push(found);
        }
    }
    if crates.is_empty() {
        return Err(format!("no crate under {} has a [package.metadata.toolhost] table", stdlib.display()));
    }
    Ok(crates)
}

/// Reads `name` of `[package]` and `namespace` and `file` of `[package.metadata.toolhost]`
/// (one `key = "value"` per line, as cargo writes and rustfmt keeps them); `None` for a
/// crate without that table (a library the tools share).
pub fn parse_crate(dir: &Path, cargo_toml: &str) -> Result<Option<StdlibCrate>, String> {
    let (mut table, mut package, mut namespace, mut file, mut preinit) = (String::new(), None, None, None, None);
    for line in cargo_toml.lines().map(str::trim) {
        if line.starts_with('[') {
            table = line.to_owned();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let value = || {
            let value = value.split('#').next().unwrap_or_default().trim();
            value.strip_prefix('"').and_then(|v| v.strip_suffix('"')).map(str::to_owned)
        };
        match (table.as_str(), key.trim()) {
            ("[package]", "name") => package = value(),
            ("[package.metadata.toolhost]", "namespace") => namespace = value(),
            ("[package.metadata.toolhost]", "file") => file = value(),
            ("[package.metadata.toolhost]", "preinit") => preinit = value(),
            _ => {}
        }
    }
    let in_table = cargo_toml.lines().any(|line| line.trim() == "[package.metadata.toolhost]");
    if !in_table {
        return Ok(None);
    }
    let missing = |what: &str| format!("[package.metadata.toolhost] needs `{what} = \"…\"`");
    let package = package.ok_or("[package] has no `name = \"…\"`")?;
    let namespace = namespace.ok_or_else(|| missing("namespace"))?;
    let file = file.ok_or_else(|| missing("file"))?;
    for (what, name) in [("namespace", &namespace), ("file", &file)] {
        let valid = !name.is_empty()
            && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !valid {
            return Err(format!("{what} `{name}` must be lower-case letters, digits, `-` or `_`"));
        }
    }
    Ok(Some(StdlibCrate { dir: dir.to_owned(), package, namespace, file, preinit }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_where_a_crate_is_installed() {
        let text = "[package]\nname = \"stdlib-file\" # the crate\nversion.workspace = true\n\n\
                    [package.metadata.toolhost]\nnamespace = \"file\"\nfile = \"file\"\n\n[lib]\nname = \"other\"\n";
        let parsed = parse_crate(Path::new("stdlib/file"), text).unwrap().unwrap();
        assert_eq!(parsed.package, "stdlib-file");
        assert_eq!((parsed.namespace.as_str(), parsed.file.as_str()), ("file", "file"));
        assert_eq!(parsed.preinit, None);
        let preinit = "[package]\nname = \"x\"\n[package.metadata.toolhost]\nnamespace = \"x\"\nfile = \"x\"\n\
                       preinit = \"wizer-initialize\"\n";
        assert_eq!(parse_crate(Path::new("x"), preinit).unwrap().unwrap().preinit.as_deref(), Some("wizer-initialize"));
        assert_eq!(parse_crate(Path::new("x"), "[package]\nname = \"shared\"\n").unwrap(), None);
        let incomplete = "[package]\nname = \"x\"\n[package.metadata.toolhost]\nnamespace = \"x\"\n";
        assert!(parse_crate(Path::new("x"), incomplete).unwrap_err().contains("`file"));
        let bad = "[package]\nname = \"x\"\n[package.metadata.toolhost]\nnamespace = \"../x\"\nfile = \"x\"\n";
        assert!(parse_crate(Path::new("x"), bad).unwrap_err().contains("namespace `../x`"));
    }
}
