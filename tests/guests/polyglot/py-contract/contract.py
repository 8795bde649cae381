"""A toolbox that keeps and breaks its own output schema: see ../README.md."""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import types

VALUE = json.dumps(
    {
        "type": "object",
        "properties": {"value": {"type": "number"}},
        "required": ["value"],
        "additionalProperties": False,
    }
)

TOOLS = {
    "echo": ("Returns its input unchanged.", lambda value: value),
    "breaks_its_schema": (
        "Declares a number as its output value, then returns a string.",
        lambda _value: {"value": "not a number"},
    ),
}


class Toolbox(exports.Toolbox):
    def list_tools(self):
        return [types.ToolInfo(name, description, VALUE, VALUE) for name, (description, _) in TOOLS.items()]

    def call(self, tool, input):
        entry = TOOLS.get(tool)
        if entry is None:
            raise Err(types.ToolError_Failed(f"no tool named {tool}"))
        return json.dumps(entry[1](json.loads(input)))
