//! Why a component's imports cannot be linked: the interface at fault, and what toolhost provides instead.
//!
//! wasmtime's linker says an import has "the wrong type" or has no "matching
//! implementation", without saying whether the host lacks the interface, serves another
//! version of it, or serves the version in another shape. A user coming from another
//! host needs exactly that, so the load error names the interface and its version and
//! lists what toolhost provides of its package.

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::error::{Interfaces, LoadErrorKind};
use crate::sandbox::provided_interfaces;

/// What `component` imports and exports, by name.
pub(super) fn interfaces(engine: &Engine, component: &Component) -> Interfaces {
    let ty = component.component_type();
    Interfaces {
        imports: ty.imports(engine).map(|(name, _)| name.to_owned()).collect(),
        exports: ty.exports(engine).map(|(name, _)| name.to_owned()).collect(),
    }
}

/// The load error of a link that failed: the import at fault when wasmtime's error
/// names one of the component's imports, else wasmtime's own words.
pub(super) fn link_error(error: &wasmtime::Error, interfaces: Interfaces) -> LoadErrorKind {
    // The outermost context names the import; the rest of the chain says what of it failed.
    let outer = error.to_string();
    let Some(import) = interfaces.imports.iter().find(|name| outer.contains(&format!("`{name}`"))).cloned() else {
        return LoadErrorKind::Link(format!("{error:#}"));
    };
    let cause: Vec<String> = error.chain().skip(1).map(|cause| cause.to_string()).collect();
    let problem = problem(&import, &cause.join(": "));
    LoadErrorKind::Import { import, problem, interfaces }
}

/// What is wrong with `import` (`package/interface@version`), and what toolhost has instead.
fn problem(import: &str, cause: &str) -> String {
    let (name, version) = import.split_once('@').unwrap_or((import, ""));
    let provided = provided_interfaces();
    if let Some((_, versions)) = provided.iter().find(|(interface, _)| interface == name) {
        if versions.iter().any(|provided| serves(provided, version)) {
            return format!("whose shape differs from the one toolhost provides ({cause})");
        }
        return format!("a version toolhost does not provide (it provides `{name}` at {})", versions.join(", "));
    }
    let package = name.split_once('/').map_or(name, |(package, _)| package);
    let others: Vec<String> = provided
        .iter()
        .filter(|(interface, _)| interface.split_once('/').is_some_and(|(of, _)| of == package))
        .map(|(interface, versions)| format!("`{interface}` at {}", versions.join(", ")))
        .collect();
    if others.is_empty() {
        format!("which toolhost does not provide (it provides no interface of `{package}`)")
    } else {
        format!("which toolhost does not provide (of `{package}` it provides {})", others.join("; "))
    }
}

/// Whether a provided version (`0.2.0-draft`, or a series `0.2.x`) serves `wanted`: a
/// series serves its releases, not their pre-releases.
fn serves(provided: &str, wanted: &str) -> bool {
    match provided.strip_suffix(".x") {
        Some(series) => wanted
            .strip_prefix(series)
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|patch| !patch.is_empty() && patch.bytes().all(|b| b.is_ascii_digit())),
        None => provided == wanted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_serves_its_releases_only() {
        assert!(serves("0.2.x", "0.2.0") && serves("0.2.x", "0.2.12") && serves("0.2.x", "0.2.99"));
        assert!(!serves("0.2.x", "0.3.0") && !serves("0.2.x", "0.2.0-rc-2023-11-10") && !serves("0.2.x", "0.20.1"));
        assert!(serves("0.2.0-draft", "0.2.0-draft") && !serves("0.2.0-draft", "0.2.0-draft2"));
    }

    #[test]
    fn the_problem_says_what_toolhost_has_instead() {
        let absent = problem("wasi:logging/logging@0.1.0-draft", "");
        assert_eq!(absent, "which toolhost does not provide (it provides no interface of `wasi:logging`)");
        let other_version = problem("wasi:config/store@0.3.0", "");
        assert!(
            other_version.contains("`wasi:config/store` at 0.2.0-draft, 0.2.0-draft-2024-09-27, 0.2.0-rc.1"),
            "{other_version}"
        );
        let other_interface = problem("wasi:http/incoming-handler@0.2.0", "");
        assert!(other_interface.contains("of `wasi:http` it provides `wasi:http/types` at 0.2.x"), "{other_interface}");
        let shape = problem("wasi:keyvalue/store@0.2.0-draft", "instance export `get` has the wrong type");
        assert!(shape.starts_with("whose shape differs") && shape.contains("`get` has the wrong type"), "{shape}");
    }
}
