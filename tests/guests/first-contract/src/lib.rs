//! Built against the frozen `toolhost:tool@0.1.0` (no `host.progress`): the host speaks
//! every 0.1.x, so this keeps loading and answering, its imports included.

wit_bindgen::generate!({ path: "wit", world: "plugin" });

use exports::toolhost::tool::toolbox::{Guest, ToolError, ToolInfo};
use toolhost::tool::host::{LogLevel, config, log};

struct First;

impl Guest for First {
    fn list_tools() -> Vec<ToolInfo> {
        vec![ToolInfo {
            name: "greet".into(),
            description: "Greets a name, with the operator's configured greeting.".into(),
            input_schema: r#"{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}"#.into(),
            output_schema: r#"{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"]}"#
                .into(),
        }]
    }

    fn call(_tool: String, input: String) -> Result<String, ToolError> {
        log(LogLevel::Info, "greeting");
        let name = input
            .split("\"name\":\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .ok_or_else(|| ToolError::Failed("no name".into()))?;
        let hello = config("greeting").unwrap_or_else(|| "hello".into());
        Ok(format!(r#"{{"greeting":"{hello}, {name}"}}"#))
    }
}

export!(First);
