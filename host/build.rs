//! Links the `toolhost` binary so that an idle server keeps little of it resident:
//!
//! - with the functions of `link-order.txt` first: the code an idle server runs sits
//!   together, so the kernel maps a few MB of the binary's code rather than most of it
//!   (`xtask/src/link_order.rs` says why and writes the file);
//! - with its relative relocations packed (`DT_RELR`): the loader reads the relocation
//!   table once at start, and the pages it read stay resident. Unpacked, the table of
//!   this position-independent binary is 1.8 MB (76,000 entries); packed, a few kB.
//!
//! Only where the linker is known to be LLD, which reads `--symbol-ordering-file` and
//! packs relocations: on `x86_64-unknown-linux-gnu`, where rustc links with its own LLD
//! unless the flags ask for another linker. Packed relocations need glibc 2.36 at run
//! time (a binary that has them names `GLIBC_ABI_DT_RELR`, so an older glibc refuses it
//! at start, clearly), so only a native build on glibc 2.36 or later packs them.
//! `TOOLHOST_LINK_ORDER=off` leaves the order to the linker; `TOOLHOST_PACK_RELOCS=off`
//! leaves the relocations unpacked.

include!("glibc_version.rs");

fn main() {
    println!("cargo:rerun-if-changed=link-order.txt");
    println!("cargo:rerun-if-env-changed=TOOLHOST_LINK_ORDER");
    println!("cargo:rerun-if-env-changed=TOOLHOST_PACK_RELOCS");
    let target = std::env::var("TARGET").unwrap_or_default();
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let other_linker = ["linker", "fuse-ld", "link-self-contained"].iter().any(|flag| flags.contains(flag));
    if target != "x86_64-unknown-linux-gnu" || other_linker {
        return;
    }
    let off = |variable: &str| std::env::var(variable).is_ok_and(|value| value == "off");

    let order = std::path::Path::new(&std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default()).join("link-order.txt");
    let path = order.to_string_lossy();
    // A comma would split the `-Wl,` argument.
    if !off("TOOLHOST_LINK_ORDER") && order.is_file() && !path.contains(',') {
        println!("cargo:rustc-link-arg-bin=toolhost=-Wl,--symbol-ordering-file={path}");
        // Names of another build's symbols are expected: the file lists two builds.
        println!("cargo:rustc-link-arg-bin=toolhost=-Wl,--no-warn-symbol-ordering");
    }

    let native = std::env::var("HOST").is_ok_and(|host| host == target);
    if !off("TOOLHOST_PACK_RELOCS") && native && machine_glibc().is_some_and(|version| version >= GLIBC_WITH_RELR) {
        println!("cargo:rustc-link-arg-bin=toolhost=-Wl,-z,pack-relative-relocs");
    }
}
