//! The `toolhost` binary is linked with the functions an idle server runs first
//! (`host/link-order.txt`, written by `cargo xtask link-order`; `host/build.rs`), so that
//! an idle server keeps a few MB of its code resident rather than most of it.

use std::collections::HashMap;
use std::process::Command;

use toolhost_tests::toolhost_bin;

/// The names `host/link-order.txt` lists for the build the test suite runs: those under
/// its `# the workspace's targets` heading.
fn names_for_this_build() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/link-order.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().skip_while(|line| !line.starts_with("# the workspace's targets"));
    assert!(lines.next().is_some(), "{} has no section for the workspace's build", path.display());
    lines.take_while(|line| !line.starts_with('#')).map(str::to_owned).collect()
}

/// Each defined function of `binary`: its address and size, by name (`nm`, which any
/// machine that links Rust has, with the C compiler rustc links through).
fn functions(binary: &std::path::Path) -> HashMap<String, (u64, u64)> {
    let output = Command::new("nm").args(["--defined-only", "--print-size"]).arg(binary).output().expect("run nm");
    assert!(output.status.success(), "nm: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| match line.split_whitespace().collect::<Vec<_>>()[..] {
            [address, size, kind, name] if kind.eq_ignore_ascii_case("t") => {
                Some((name.to_owned(), (u64::from_str_radix(address, 16).ok()?, u64::from_str_radix(size, 16).ok()?)))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn the_binary_is_linked_with_the_code_an_idle_server_runs_first() {
    let listed = names_for_this_build();
    let functions = functions(&toolhost_bin());
    let found: Vec<(u64, u64)> = listed.iter().filter_map(|name| functions.get(name).copied()).collect();
    // Our own code changing renames little; new dependencies or another rustc rename much.
    // The file names the functions of builds as CI and the image make them: an
    // incremental build (the release profile's default, for quick local rebuilds) splits
    // and inlines code differently, and has about two thirds of them.
    let incremental = std::env::var("CARGO_INCREMENTAL").map_or(true, |value| value != "0");
    let percent = if incremental { 40 } else { 80 };
    assert!(
        found.len() * 100 >= listed.len() * percent,
        "host/link-order.txt is stale: {} of its {} names for this build are in the binary, \
         under {percent} % (incremental build: {incremental}); run `cargo xtask link-order` (it needs valgrind)",
        found.len(),
        listed.len()
    );
    // Together, and ahead of the rest of the code.
    let start = found.iter().map(|(address, _)| *address).min().unwrap();
    let end = found.iter().map(|(address, size)| address + size).max().unwrap();
    let size: u64 = found.iter().map(|(_, size)| size).sum();
    assert!(end - start <= size + size / 4, "the listed functions span {} bytes for {size} of code", end - start);
    let first = functions.values().map(|(address, _)| *address).min().unwrap();
    assert!(start - first < 1 << 20, "the listed functions start {} bytes into the code", start - first);
}
