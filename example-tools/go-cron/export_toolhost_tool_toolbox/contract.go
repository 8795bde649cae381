package export_toolhost_tool_toolbox

// The contract, shared with the `toolhost new --lang go` template (which copies this
// file): typed tools over JSON text, and the two exports the generated bindings call.
// Add tools to `tools`; nothing here needs to change.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"wit_component/toolhost_tool_types"

	witTypes "go.bytecodealliance.org/pkg/wit/types"
)

type tool struct {
	info toolhost_tool_types.ToolInfo
	run  func(input string) (string, error)
}

// newTool makes a tool of a function from its input type to its output type: the input
// JSON decodes into In and Out encodes to the output JSON. The schemas are JSON Schema
// (draft 2020-12) as JSON text; the host holds the tool to them.
func newTool[In, Out any](name, description, inputSchema, outputSchema string, fn func(In) (Out, error)) tool {
	info := toolhost_tool_types.ToolInfo{
		Name: name, Description: description, InputSchema: inputSchema, OutputSchema: outputSchema,
	}
	return tool{info, func(input string) (string, error) {
		var in In
		decoder := json.NewDecoder(bytes.NewReader([]byte(input)))
		// The host has checked the input against the schema; unknown fields are refused
		// anyway so that a schema and its struct drifting apart shows at once.
		decoder.DisallowUnknownFields()
		if err := decoder.Decode(&in); err != nil {
			return "", invalidInput("%v", err)
		}
		out, err := fn(in)
		if err != nil {
			return "", err
		}
		text, err := json.Marshal(out)
		return string(text), err
	}}
}

// invalidInputError is input that fits the schema but makes no sense: the caller gets
// `invalid-input` (exit code 5). Any other error a tool returns is `failed` (exit code 7).
type invalidInputError struct{ message string }

func (e invalidInputError) Error() string { return e.message }

func invalidInput(format string, args ...any) error {
	return invalidInputError{fmt.Sprintf(format, args...)}
}

// ListTools is the contract's list-tools, called once when the component is loaded.
func ListTools() []toolhost_tool_types.ToolInfo {
	infos := make([]toolhost_tool_types.ToolInfo, len(tools))
	for i, t := range tools {
		infos[i] = t.info
	}
	return infos
}

// Call is the contract's call: the input is JSON text that matches the tool's input
// schema; the result is JSON text or a tool-error.
func Call(name string, input string) witTypes.Result[string, toolhost_tool_types.ToolError] {
	for _, t := range tools {
		if t.info.Name != name {
			continue
		}
		output, err := t.run(input)
		var refused invalidInputError
		switch {
		case err == nil:
			return witTypes.Ok[string, toolhost_tool_types.ToolError](output)
		case errors.As(err, &refused):
			return witTypes.Err[string](toolhost_tool_types.MakeToolErrorInvalidInput(err.Error()))
		default:
			return witTypes.Err[string](toolhost_tool_types.MakeToolErrorFailed(err.Error()))
		}
	}
	return witTypes.Err[string](toolhost_tool_types.MakeToolErrorFailed("no tool named " + name))
}
