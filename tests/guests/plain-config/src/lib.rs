//! Written against `wasi:config/store` only, as for wassette, Spin or wasmCloud: no
//! toolhost SDK, no toolhost contract. The suite serves its exports as tools.

wit_bindgen::generate!({
    path: ["../../../wit/config-0.2.0-draft", "../../../wit/config-0.2.0-rc.1", "wit"],
    world: "test:config/settings",
    generate_all
});

use wasi::config0_2_0_draft::store as draft;
use wasi::config0_2_0_rc_1::store as rc;

struct Component;

impl Guest for Component {
    fn setting(key: String) -> Result<Option<String>, String> {
        draft::get(&key).map_err(|e| format!("{e:?}"))
    }

    fn setting_rc(key: String) -> Result<Option<String>, String> {
        rc::get(&key).map_err(|e| format!("{e:?}"))
    }

    fn keys() -> Result<Vec<String>, String> {
        let mut keys: Vec<String> =
            draft::get_all().map_err(|e| format!("{e:?}"))?.into_iter().map(|(key, _)| key).collect();
        keys.sort();
        Ok(keys)
    }
}

export!(Component);
