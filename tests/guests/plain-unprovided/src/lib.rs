//! Imports an interface no toolhost version provides: the host must refuse it by name
//! and still show what it imports and exports.

wit_bindgen::generate!({ path: ["../../../wit/config-0.2.0-draft", "wit"], world: "test:unprovided/greeter", generate_all });

struct Component;

impl Guest for Component {
    fn greet(name: String) -> String {
        wasi::logging::logging::log(wasi::logging::logging::Level::Info, "greet", &name);
        let greeting = wasi::config::store::get("greeting").ok().flatten().unwrap_or_else(|| "hello".into());
        format!("{greeting}, {name}")
    }
}

export!(Component);
