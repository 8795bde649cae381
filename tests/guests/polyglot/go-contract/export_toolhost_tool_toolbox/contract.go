// Package export_toolhost_tool_toolbox is a toolbox that keeps and breaks its own output
// schema: see ../../README.md.
package export_toolhost_tool_toolbox

import (
	"wit_component/toolhost_tool_types"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

type result = witTypes.Result[string, toolhost_tool_types.ToolError]

const valueSchema = `{"type":"object","properties":{"value":{"type":"number"}},"required":["value"],` +
	`"additionalProperties":false}`

func tool(name, description string) toolhost_tool_types.ToolInfo {
	return toolhost_tool_types.ToolInfo{
		Name:         name,
		Description:  description,
		InputSchema:  valueSchema,
		OutputSchema: valueSchema,
	}
}

func ListTools() []toolhost_tool_types.ToolInfo {
	return []toolhost_tool_types.ToolInfo{
		tool("echo", "Returns its input unchanged."),
		tool("breaks_its_schema", "Declares a number as its output value, then returns a string."),
	}
}

func Call(name string, input string) result {
	switch name {
	case "echo":
		return witTypes.Ok[string, toolhost_tool_types.ToolError](input)
	case "breaks_its_schema":
		return witTypes.Ok[string, toolhost_tool_types.ToolError](`{"value":"not a number"}`)
	}
	return witTypes.Err[string](toolhost_tool_types.MakeToolErrorFailed("no tool named " + name))
}
