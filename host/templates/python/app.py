"""{{name}}: a toolhost toolbox in Python (CPython runs inside the component).

`Toolbox.list_tools` names the tools with their JSON Schemas; `Toolbox.call(tool, input)`
gets the input as JSON text (already checked against the input schema by the host) and
returns the output as JSON text, or raises a `tool-error`:

    raise Err(types.ToolError_InvalidInput(message))  # fits the schema, makes no sense
    raise Err(types.ToolError_Failed(message))        # tried and could not do it
"""

import json

from componentize_py_types import Err
from wit_world import exports
from wit_world.imports import host, types

SCHEMA = "https://json-schema.org/draft/2020-12/schema"


class InvalidInput(Exception):
    """Input that fits the schema but makes no sense."""


def greet(args):
    name = args["name"].strip()
    if not name:
        raise InvalidInput("`name` is blank")
    # A value the operator granted in the component's manifest (`{{name}}.toml`):
    #   [grants]
    #   config = { greeting = "Hi" }
    word = host.config("greeting") or "Hello"
    host.log(host.LogLevel.INFO, f"greeting {name}")
    return {"greeting": f"{word}, {name}!"}


TOOLS = {
    "greet": (
        greet,
        "Greets someone by name. Replace it with your first real tool.",
        {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Who to greet."}},
            "required": ["name"],
            "additionalProperties": False,
        },
        {
            "type": "object",
            "properties": {"greeting": {"type": "string"}},
            "required": ["greeting"],
            "additionalProperties": False,
        },
    ),
}


class Toolbox(exports.Toolbox):
    def list_tools(self):
        return [
            types.ToolInfo(name, description, json.dumps({"$schema": SCHEMA, **i}), json.dumps({"$schema": SCHEMA, **o}))
            for name, (_, description, i, o) in TOOLS.items()
        ]

    def call(self, tool, input):
        entry = TOOLS.get(tool)
        if entry is None:
            raise Err(types.ToolError_Failed(f"no tool named {tool}"))
        try:
            return json.dumps(entry[0](json.loads(input)))
        except InvalidInput as error:
            raise Err(types.ToolError_InvalidInput(str(error)))
        except Exception as error:
            raise Err(types.ToolError_Failed(str(error)))
