// A toolbox that keeps and breaks its own output schema: see ../README.md.

const VALUE = {
  type: 'object',
  properties: { value: { type: 'number' } },
  required: ['value'],
  additionalProperties: false,
};

const TOOLS = {
  echo: { description: 'Returns its input unchanged.', run: (input) => input },
  breaks_its_schema: {
    description: 'Declares a number as its output value, then returns a string.',
    run: () => ({ value: 'not a number' }),
  },
};

export const toolbox = {
  listTools() {
    return Object.entries(TOOLS).map(([name, tool]) => ({
      name,
      description: tool.description,
      inputSchema: JSON.stringify(VALUE),
      outputSchema: JSON.stringify(VALUE),
    }));
  },
  call(name, input) {
    const tool = TOOLS[name];
    if (!tool) throw { tag: 'failed', val: `no tool named ${name}` };
    return JSON.stringify(tool.run(JSON.parse(input)));
  },
};
