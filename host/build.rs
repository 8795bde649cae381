//! Links the `toolhost` binary with the functions of `link-order.txt` first: the code an
//! idle server runs sits together, so the kernel maps a few MB of the binary's code
//! rather than most of it (`xtask/src/link_order.rs` says why and writes the file).
//!
//! Only where the linker is known to be LLD, which reads `--symbol-ordering-file`: on
//! `x86_64-unknown-linux-gnu`, where rustc links with its own LLD unless the flags ask
//! for another linker. `TOOLHOST_LINK_ORDER=off` leaves the order to the linker.

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=TOOLHOST_LINK_ORDER");
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let other_linker = ["linker", "fuse-ld", "link-self-contained"].iter().any(|flag| flags.contains(flag));
    let off = std::env::var("TOOLHOST_LINK_ORDER").is_ok_and(|value| value == "off");
    let order = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("link-order.txt");
    let path = order.to_string_lossy();
    // A comma would split the `-Wl,` argument.
    if target != "x86_64-unknown-linux-gnu" || other_linker || off || !order.is_file() || path.contains(',') {
        return;
    }
    println!("cargo:rustc-link-arg-bin=toolhost=-Wl,--symbol-ordering-file={path}");
    // Names of another build's symbols are expected: the file lists two builds.
    println!("cargo:rustc-link-arg-bin=toolhost=-Wl,--no-warn-symbol-ordering");
}
