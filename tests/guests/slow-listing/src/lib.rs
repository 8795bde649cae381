//! `list-tools` spins until the host stops it: a component that never finishes loading.
//! Other components must be served meanwhile, and it must cost its own time limit only.

wit_bindgen::generate!({ path: "../../../wit", world: "plugin" });

use exports::toolhost::tool::toolbox::{Guest, ToolError, ToolInfo};

struct SlowListing;

impl Guest for SlowListing {
    fn list_tools() -> Vec<ToolInfo> {
        let mut turns: u64 = 0;
        loop {
            turns = std::hint::black_box(turns.wrapping_add(1));
        }
    }

    fn call(_tool: String, _input: String) -> Result<String, ToolError> {
        Err(ToolError::Failed("never listed, never called".into()))
    }
}

export!(SlowListing);
