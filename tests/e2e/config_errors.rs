//! Error messages of the operator's files, reviewed like features: every bad manifest in
//! `tests/ui/manifest/` and every bad `toolhost.toml` in `tests/ui/config/` sits beside
//! the exact text (`.err`) it must produce, with the directory written as `$DIR`.
//!
//! After an intended change of wording, `TOOLHOST_BLESS=1 cargo xtask test config_errors`
//! rewrites the `.err` files; review their diff like code.

use std::path::{Path, PathBuf};

use toolhost::{EngineSettings, HostConfig, Limits, Manifest};

fn cases(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui").join(kind);
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 8, "the {kind} cases are there: {cases:?}");
    cases
}

/// Compares each case's error with its `.err` file (or writes it, when blessing).
fn check(kind: &str, error_of: impl Fn(&Path) -> Option<String>) {
    let bless = std::env::var_os("TOOLHOST_BLESS").is_some();
    let mut mismatches = Vec::new();
    for case in cases(kind) {
        let dir = case.parent().unwrap();
        let canonical = dir.canonicalize().unwrap();
        let actual = match error_of(&case) {
            Some(error) => {
                error.replace(&canonical.display().to_string(), "$DIR").replace(&dir.display().to_string(), "$DIR")
            }
            None => format!("no error: {} was accepted", case.display()),
        };
        let expected_path = case.with_extension("err");
        if bless {
            std::fs::write(&expected_path, format!("{actual}\n")).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected.trim_end() != actual {
            mismatches.push(format!("{}:\n  expected: {}\n  actual:   {actual}", case.display(), expected.trim_end()));
        }
    }
    assert!(mismatches.is_empty(), "{} error texts differ:\n{}", mismatches.len(), mismatches.join("\n"));
}

#[test]
fn manifest_errors_match_their_snapshots() {
    let ceilings = EngineSettings::default().ceilings();
    check("manifest", |case| Manifest::load(case, Limits::default(), ceilings).err().map(|e| e.to_string()));
}

#[test]
fn toolhost_toml_errors_match_their_snapshots() {
    check("config", |case| HostConfig::load(case).err().map(|e| e.to_string()));
}
