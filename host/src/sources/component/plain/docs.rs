//! The WIT documentation a component carries, read leniently.
//!
//! The WIT documentation a component carries: the `package-docs` custom section that
//! wit-component writes (a version byte, then JSON), read leniently: a component without
//! it, or with a format this host does not know, simply has no documentation.

use std::collections::HashMap;

use serde::Deserialize;

/// Doc comments of exported functions, by interface (short name) and function.
#[derive(Debug, Default)]
pub(crate) struct Docs {
    /// `(interface, function)` → docs; `interface` is `None` for world-level functions.
    functions: HashMap<(Option<String>, String), String>,
}

impl Docs {
    /// Reads every `package-docs` section of the component bytes.
    pub(crate) fn read(bytes: &[u8]) -> Docs {
        let mut docs = Docs::default();
        for payload in wasmparser::Parser::new(0).parse_all(bytes) {
            let Ok(wasmparser::Payload::CustomSection(section)) = payload else { continue };
            if section.name() != "package-docs" {
                continue;
            }
            // Versions 0 and 1 share one JSON shape; others are unknown here.
            let Some((&(0 | 1), json)) = section.data().split_first() else { continue };
            if let Ok(package) = serde_json::from_slice::<PackageDocs>(json) {
                docs.add(package);
            }
        }
        docs
    }

    /// The doc comment of `function` (in `interface`, an export name such as
    /// `acme:tools/weather@1.0.0`, or at the world's top level).
    pub(crate) fn function(&self, interface: Option<&str>, function: &str) -> Option<&str> {
        let interface = interface.map(short_interface_name);
        self.functions.get(&(interface.map(str::to_owned), function.to_owned())).map(String::as_str)
    }

    fn add(&mut self, package: PackageDocs) {
        let mut interfaces = package.interfaces;
        for world in package.worlds.into_values() {
            for (name, func) in world.func_exports.into_iter().chain(world.funcs) {
                if let Some(text) = func.text() {
                    self.functions.insert((None, name), text);
                }
            }
            interfaces.extend(world.interface_exports);
            interfaces.extend(world.interfaces);
        }
        for (interface, docs) in interfaces {
            for (name, func) in docs.funcs {
                if let Some(text) = func.text() {
                    self.functions.insert((Some(short_interface_name(&interface).to_owned()), name), text);
                }
            }
        }
    }
}

/// `acme:tools/weather@1.0.0` → `weather`.
pub(crate) fn short_interface_name(name: &str) -> &str {
    let name = name.split('@').next().unwrap_or(name);
    name.rsplit(['/', ':']).next().unwrap_or(name)
}

#[derive(Deserialize, Default)]
struct PackageDocs {
    #[serde(default)]
    worlds: HashMap<String, WorldDocs>,
    #[serde(default)]
    interfaces: HashMap<String, InterfaceDocs>,
}

#[derive(Deserialize, Default)]
struct WorldDocs {
    #[serde(default)]
    func_exports: HashMap<String, FunctionDocs>,
    #[serde(default)]
    funcs: HashMap<String, FunctionDocs>,
    #[serde(default)]
    interface_exports: HashMap<String, InterfaceDocs>,
    #[serde(default)]
    interfaces: HashMap<String, InterfaceDocs>,
}

#[derive(Deserialize, Default)]
struct InterfaceDocs {
    #[serde(default)]
    funcs: HashMap<String, FunctionDocs>,
}

/// Version 0 wrote a bare string, version 1 an object with the docs and stability.
#[derive(Deserialize)]
#[serde(untagged)]
enum FunctionDocs {
    Text(Option<String>),
    Described { docs: Option<String> },
}

impl FunctionDocs {
    fn text(self) -> Option<String> {
        let text = match self {
            FunctionDocs::Text(text) | FunctionDocs::Described { docs: text } => text?,
        };
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interface_names_lose_package_and_version() {
        assert_eq!(short_interface_name("acme:tools/weather@1.0.0"), "weather");
        assert_eq!(short_interface_name("weather"), "weather");
        assert_eq!(short_interface_name("wasi:cli/run@0.2.3"), "run");
    }

    #[test]
    fn both_section_versions_are_read() {
        let v1 = br#"{"worlds":{"w":{"func_exports":{"now":{"docs":" The time. "}}}},"interfaces":{"clock":{"funcs":{"tick":"Ticks."}}}}"#;
        let mut section = vec![1u8];
        section.extend_from_slice(v1);
        let mut docs = Docs::default();
        docs.add(serde_json::from_slice(&section[1..]).unwrap());
        assert_eq!(docs.function(None, "now"), Some("The time."));
        assert_eq!(docs.function(Some("acme:time/clock@0.1.0"), "tick"), Some("Ticks."));
        assert_eq!(docs.function(None, "tick"), None);
    }
}
