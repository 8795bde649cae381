//! Exports `toolhost:tool/toolbox@0.2.0`; the host must refuse it at load and say which
//! versions it supports.

wit_bindgen::generate!({ path: "wit", world: "plugin" });

use exports::toolhost::tool::toolbox::{Guest, ToolError, ToolInfo};

struct Future;

impl Guest for Future {
    fn list_tools() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "noop".into(),
            description: "Does nothing.".into(),
            input_schema: "{}".into(),
            output_schema: "{}".into(),
        }]
    }

    fn call(_tool: String, _input: String) -> Result<String, ToolError> {
        Ok("{}".into())
    }
}

export!(Future);
