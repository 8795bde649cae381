//! Written against the standard `wasi:keyvalue` only, as for Spin or wasmCloud: no
//! toolhost SDK, no toolhost contract. The suite serves `hit` as a tool.

wit_bindgen::generate!({ path: ["../../../wit/deps/keyvalue", "wit"], world: "test:counter/counter", generate_all });

use wasi::keyvalue::{atomics, store};

struct Component;

impl Guest for Component {
    fn hit(page: String) -> Result<i64, String> {
        let bucket = store::open("default").map_err(|e| format!("{e:?}"))?;
        atomics::increment(&bucket, &page, 1).map_err(|e| format!("{e:?}"))
    }
}

export!(Component);
