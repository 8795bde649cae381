// Read by `host/build.rs`, which packs the binary's relocations on such a glibc, and by
// `tests/e2e/link_order.rs`, which checks that it did: both `include!` this file, so
// that the decision and its test read the machine the same way.

/// The first glibc whose loader reads packed relative relocations (`DT_RELR`).
const GLIBC_WITH_RELR: (u32, u32) = (2, 36);

/// The version of this machine's glibc (`getconf GNU_LIBC_VERSION` prints `glibc 2.36`),
/// if it has one.
fn machine_glibc() -> Option<(u32, u32)> {
    let output = std::process::Command::new("getconf").arg("GNU_LIBC_VERSION").output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let (major, minor) = text.trim().strip_prefix("glibc ")?.split_once('.')?;
    let minor = minor.split(|c: char| !c.is_ascii_digit()).next()?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}
