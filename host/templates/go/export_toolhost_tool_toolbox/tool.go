// Package export_toolhost_tool_toolbox is {{name}}, a toolhost toolbox in Go.
//
// The build generates the bindings from wit/tool.wit: package main (wit_exports.go)
// exports the contract and calls ListTools and Call (contract.go), which serve the tools
// listed here. Package toolhost_tool_types holds ToolInfo and ToolError, and
// toolhost_tool_host the host's Log and Config.
package export_toolhost_tool_toolbox

import (
	"strings"

	"wit_component/toolhost_tool_host"
)

var tools = []tool{
	newTool("greet", "Greets someone by name. Replace it with your first real tool.",
		`{"type":"object","properties":{"name":{"type":"string","minLength":1,"maxLength":200,`+
			`"description":"Who to greet."}},"required":["name"],"additionalProperties":false}`,
		`{"type":"object","properties":{"greeting":{"type":"string"}},"required":["greeting"],`+
			`"additionalProperties":false}`,
		greet),
}

type greetInput struct {
	Name string `json:"name"`
}

type greetOutput struct {
	Greeting string `json:"greeting"`
}

func greet(in greetInput) (greetOutput, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" {
		// Fits the schema, makes no sense: `invalid-input`. Any other error is `failed`.
		return greetOutput{}, invalidInput("`name` is blank")
	}
	// A value the operator granted in the component's manifest ({{name}}.toml):
	//   [grants]
	//   config = { greeting = "Hi" }
	word := toolhost_tool_host.Config("greeting").SomeOr("Hello")
	toolhost_tool_host.Log(toolhost_tool_host.LogLevel_Info, "greeting "+name)
	return greetOutput{Greeting: word + ", " + name + "!"}, nil
}
