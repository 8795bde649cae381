//! `py_freeze!` compiles pylib/ into the crate without telling cargo that it read it:
//! rebuild the crate when a file there changes.
fn main() {
    println!("cargo::rerun-if-changed=pylib");
}
