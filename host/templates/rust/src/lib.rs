//! {{name}}: a toolhost toolbox. Every function in `toolbox!` is one tool: its doc comment
//! is the description the agent reads, and the JSON Schemas of its input and output are
//! derived from the Rust types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolhost_guest::{ToolError, toolbox};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GreetInput {
    /// Who to greet.
    #[schemars(length(min = 1, max = 200))]
    name: String,
}

#[derive(Serialize, JsonSchema)]
struct Greeting {
    greeting: String,
}

toolbox! {
    /// Greets someone by name. Replace it with your first real tool.
    fn greet(input: GreetInput) -> Result<Greeting, ToolError> {
        let name = input.name.trim();
        if name.is_empty() {
            // Input that fits the schema but makes no sense: `invalid-input`.
            // (`ToolError::failed` is for a tool that tried and could not do it.)
            return Err(ToolError::invalid_input("`name` is blank"));
        }
        toolhost_guest::log::info(&format!("greeting {name}"));
        Ok(Greeting { greeting: format!("Hello, {name}!") })
    }
}
