// {{name}}: a toolhost toolbox in JavaScript, run by QuickJS inside the component.
//
// `toolbox.listTools()` names the tools with their JSON Schemas; `toolbox.call(tool,
// input)` gets the input as JSON text (already checked against the input schema by the
// host) and returns the output as JSON text, or throws a `tool-error`:
//   { tag: 'invalid-input', val: message }  the input fits the schema but makes no sense
//   { tag: 'failed', val: message }         the tool tried and could not do it

import { log, config } from 'toolhost:tool/host@0.1.3';

const SCHEMA = 'https://json-schema.org/draft/2020-12/schema';

const TOOLS = {
  greet: {
    description: 'Greets someone by name. Replace it with your first real tool.',
    input: {
      $schema: SCHEMA,
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 200, description: 'Who to greet.' } },
      required: ['name'],
      additionalProperties: false,
    },
    output: {
      $schema: SCHEMA,
      type: 'object',
      properties: { greeting: { type: 'string' } },
      required: ['greeting'],
      additionalProperties: false,
    },
    run({ name }) {
      const trimmed = name.trim();
      if (!trimmed) throw new InvalidInput('`name` is blank');
      // A value the operator granted in the component's manifest (`{{name}}.toml`):
      //   [grants]
      //   config = { greeting = "Hi" }
      const word = config('greeting') ?? 'Hello';
      log('info', `greeting ${trimmed}`);
      return { greeting: `${word}, ${trimmed}!` };
    },
  },
};

class InvalidInput extends Error {}

export const toolbox = {
  listTools() {
    return Object.entries(TOOLS).map(([name, tool]) => ({
      name,
      description: tool.description,
      inputSchema: JSON.stringify(tool.input),
      outputSchema: JSON.stringify(tool.output),
    }));
  },

  call(name, input) {
    const tool = TOOLS[name];
    if (!tool) throw { tag: 'failed', val: `no tool named ${name}` };
    try {
      return JSON.stringify(tool.run(JSON.parse(input)));
    } catch (error) {
      if (error instanceof InvalidInput) throw { tag: 'invalid-input', val: error.message };
      throw { tag: 'failed', val: String(error?.message ?? error) };
    }
  },
};
