//! The `toolhost` binary is linked so that an idle server keeps little of it resident
//! (`host/build.rs`): with the functions an idle server runs first together
//! (`host/link-order.txt`, written by `cargo xtask link-order`), and with its relative
//! relocations packed.

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
    // The host crate is one code unit, so editing it renames only what the edit changes;
    // new dependencies or another rustc rename much.
    // The file names the functions of builds as CI and the image make them: an
    // incremental build (the release profile's default, for quick local rebuilds) splits
    // and inlines code differently, and has about two thirds of them.
    let incremental = std::env::var("CARGO_INCREMENTAL").map_or(true, |value| value != "0");
    let percent = if incremental { 40 } else { 95 };
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

#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
include!("../../host/glibc_version.rs");

/// The loader reads the relocation table once, at start, and the pages it read stay
/// resident: unpacked, 1.8 MB of them. Packed (`DT_RELR`), the table is a few kB. Where
/// `host/build.rs` packs them: LLD, on x86_64 Linux with glibc.
#[cfg(all(target_arch = "x86_64", target_os = "linux", target_env = "gnu"))]
#[test]
fn the_binary_packs_its_relative_relocations() {
    let binary = toolhost_bin();
    let output = Command::new("readelf").args(["--wide", "--dynamic", "--section-headers"]).arg(&binary).output();
    let output = output.expect("run readelf (binutils, beside nm)");
    assert!(output.status.success(), "readelf: {}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8_lossy(&output.stdout);
    let packs = machine_glibc().is_some_and(|version| version >= GLIBC_WITH_RELR);
    assert_eq!(text.contains("(RELR)"), packs, "DT_RELR, on glibc {:?}:\n{text}", machine_glibc());
    if packs {
        // What is left unpacked: relocations against symbols (a few kB), not 1.8 MB.
        let rela_size = text
            .lines()
            .find(|line| line.contains(" .rela.dyn "))
            .and_then(|line| line.split_whitespace().skip_while(|field| *field != "RELA").nth(3))
            .and_then(|size| u64::from_str_radix(size, 16).ok())
            .expect("the size of .rela.dyn");
        assert!(rela_size < 64 << 10, ".rela.dyn holds {rela_size} bytes");
    }
    // And the binary still starts: its loader read the packed table.
    let started = Command::new(&binary).arg("--version").output().expect("run toolhost --version");
    assert!(started.status.success(), "{}", String::from_utf8_lossy(&started.stderr));
}
