//! The check on crates made for each rule: a clean one passes, and each breach fails with its own problem.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::check;

/// A crate of two floors: `low.rs` under `high.rs` and the folder `folder/`.
const DOC: &str = "# Architecture

## The floors

| floor | name | what lives there |
|---|---|---|
| 1 | low | `low.rs` |
| 2 | high | `high.rs` `folder/` |

<!-- map: written by `cargo xtask layers --write` from each file's first `//!` line -->
<!-- end of the map -->

## Elsewhere

| 3 | not a floor | `high.rs` |
";

/// A crate in a directory of its own, removed when dropped.
struct Fixture {
    root: PathBuf,
}

impl Fixture {
    /// The clean crate, with `changes` (path under `host/src`, text) written over it.
    fn new(changes: &[(&str, &str)]) -> Fixture {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!("xtask-layers-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let root = std::env::temp_dir().join(name);
        let files = [
            ("lib.rs", "//! The crate.\n\nmod folder;\nmod high;\nmod low;\n"),
            ("low.rs", "//! The low floor.\n\npub struct Low;\n"),
            ("high.rs", "//! The high floor.\n\nuse crate::low::Low;\n\npub fn high() -> Low {\n    Low\n}\n"),
            ("folder/mod.rs", "//! A folder: its face.\n\nmod inner;\n\npub use inner::Inner;\n"),
            ("folder/inner.rs", "//! A file behind the face.\n\npub struct Inner;\n"),
        ];
        for (path, text) in files.iter().chain(changes) {
            let path = root.join("host/src").join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        std::fs::create_dir_all(root.join("docs")).unwrap();
        std::fs::write(root.join("docs/architecture.md"), DOC).unwrap();
        check(&root, true).expect("the map is written");
        Fixture { root }
    }

    fn problems(&self) -> Vec<String> {
        check(&self.root, false).expect("the check runs").problems
    }

    fn path(&self) -> &Path {
        &self.root
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn one_problem(changes: &[(&str, &str)]) -> String {
    let problems = Fixture::new(changes).problems();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    problems.into_iter().next().unwrap()
}

#[test]
fn a_crate_by_the_rules_is_clean_and_its_map_is_written() {
    let fixture = Fixture::new(&[]);
    assert_eq!(fixture.problems(), Vec::<String>::new());
    let doc = std::fs::read_to_string(fixture.path().join("docs/architecture.md")).unwrap();
    assert!(doc.contains("**Floor 2: high**"), "{doc}");
    assert!(doc.contains("| `folder/inner.rs` | A file behind the face. |"), "{doc}");
}

#[test]
fn an_import_up_a_floor_is_refused() {
    let problem = one_problem(&[("low.rs", "//! The low floor.\n\nuse crate::folder::Inner;\n\npub struct Low;\n")]);
    assert!(
        problem.contains("low.rs:3: `crate::folder::Inner` goes up from floor 1 (`low.rs`) to floor 2"),
        "{problem}"
    );
}

#[test]
fn another_folders_private_file_is_refused_and_its_face_is_not() {
    let private = "//! The high floor.\n\nuse crate::folder::inner::Inner;\n\npub fn high() -> Inner {\n    Inner\n}\n";
    let problem = one_problem(&[("high.rs", private)]);
    assert!(problem.contains("names `folder/inner`, a private file of `folder/`"), "{problem}");
    let face = "//! The high floor.\n\nuse crate::folder::Inner;\n\npub fn high() -> Inner {\n    Inner\n}\n";
    assert_eq!(Fixture::new(&[("high.rs", face)]).problems(), Vec::<String>::new());
}

#[test]
fn an_import_cycle_is_refused_but_not_through_tests() {
    let inner = "//! A file behind the face.\n\nuse crate::high::high;\n\npub struct Inner;\n\npub fn again() {\n    high();\n}\n";
    let cyclic = "//! The high floor.\n\nuse crate::folder::Inner;\nuse crate::low::Low;\n\npub fn high() -> Low {\n    let _ = Inner;\n    Low\n}\n";
    let problem = one_problem(&[("folder/inner.rs", inner), ("high.rs", cyclic)]);
    assert!(problem.starts_with("import cycle of 2 files:"), "{problem}");
    let in_test = "//! A file behind the face.\n\npub struct Inner;\n\n#[cfg(test)]\nmod tests {\n    use crate::high::high;\n}\n";
    assert_eq!(Fixture::new(&[("folder/inner.rs", in_test), ("high.rs", cyclic)]).problems(), Vec::<String>::new());
}

#[test]
fn long_files_and_functions_are_refused_at_their_limits() {
    let body = |lines: usize| "    let _ = 0;\n".repeat(lines - 2);
    let at_limit = format!("//! The low floor.\n\npub fn long() {{\n{}}}\n", body(60));
    assert_eq!(Fixture::new(&[("low.rs", &at_limit)]).problems(), Vec::<String>::new());
    let over = format!("//! The low floor.\n\npub fn long() {{\n{}}}\n", body(61));
    let problem = one_problem(&[("low.rs", &over)]);
    assert!(problem.contains("low.rs:3: fn long is 61 lines, over 60"), "{problem}");
    let file = format!("//! The low floor.\n{}", "// a line\n".repeat(400));
    let problem = one_problem(&[("low.rs", &file)]);
    assert!(problem.contains("low.rs: 401 lines, over 400"), "{problem}");
}

#[test]
fn a_map_that_drifted_from_the_files_is_refused() {
    let fixture = Fixture::new(&[]);
    std::fs::write(fixture.path().join("host/src/low.rs"), "//! The lowest floor.\n\npub struct Low;\n").unwrap();
    let problems = fixture.problems();
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0].contains("the map differs"), "{problems:?}");
    let problem = one_problem(&[("low.rs", "//! no sentence\n\npub struct Low;\n")]);
    assert!(problem.contains("low.rs: its first `//!` line is the map's line for it"), "{problem}");
}
