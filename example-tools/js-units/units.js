// js_units: unit conversion for agents, which are notoriously unreliable at remembering
// conversion factors. Two tools: `convert` and `list_units`.
//
// Built with componentize-qjs (QuickJS): see docs/guides/javascript.md. Every value that
// crosses the boundary is JSON text; the host has checked the input against the schema
// below before `call` runs, so only input that fits it arrives here.

import { log, config } from 'toolhost:tool/host@0.1.3';

// Factors to the category's base unit (the first unit of each category).
const LINEAR = {
  length: [
    ['m', 'metre', 1], ['km', 'kilometre', 1e3], ['cm', 'centimetre', 1e-2], ['mm', 'millimetre', 1e-3],
    ['um', 'micrometre', 1e-6], ['nm', 'nanometre', 1e-9], ['in', 'inch', 0.0254], ['ft', 'foot', 0.3048],
    ['yd', 'yard', 0.9144], ['mi', 'mile (international)', 1609.344], ['nmi', 'nautical mile', 1852],
  ],
  mass: [
    ['kg', 'kilogram', 1], ['g', 'gram', 1e-3], ['mg', 'milligram', 1e-6], ['ug', 'microgram', 1e-9],
    ['t', 'tonne (metric ton)', 1e3], ['lb', 'pound (avoirdupois)', 0.45359237], ['oz', 'ounce (avoirdupois)', 0.028349523125],
    ['st', 'stone', 6.35029318], ['ton_us', 'short ton (US)', 907.18474],
  ],
  volume: [
    ['m3', 'cubic metre', 1], ['l', 'litre', 1e-3], ['dl', 'decilitre', 1e-4], ['cl', 'centilitre', 1e-5],
    ['ml', 'millilitre', 1e-6], ['gal', 'gallon (US)', 0.003785411784], ['qt', 'quart (US liquid)', 0.000946352946],
    ['pt', 'pint (US liquid)', 0.000473176473], ['cup', 'cup (US customary)', 0.0002365882365],
    ['floz', 'fluid ounce (US)', 0.0000295735295625], ['tbsp', 'tablespoon (US)', 0.00001478676478125],
    ['tsp', 'teaspoon (US)', 0.00000492892159375], ['gal_imp', 'gallon (imperial)', 0.00454609],
    ['pt_imp', 'pint (imperial)', 0.00056826125], ['ft3', 'cubic foot', 0.028316846592], ['in3', 'cubic inch', 0.000016387064],
  ],
  area: [
    ['m2', 'square metre', 1], ['km2', 'square kilometre', 1e6], ['cm2', 'square centimetre', 1e-4],
    ['ha', 'hectare', 1e4], ['acre', 'acre (international)', 4046.8564224], ['ft2', 'square foot', 0.09290304],
    ['in2', 'square inch', 0.00064516], ['yd2', 'square yard', 0.83612736], ['mi2', 'square mile', 2589988.110336],
  ],
  speed: [
    ['m/s', 'metre per second', 1], ['km/h', 'kilometre per hour', 1 / 3.6], ['mph', 'mile per hour', 0.44704],
    ['kn', 'knot', 1852 / 3600], ['ft/s', 'foot per second', 0.3048],
  ],
  time: [
    ['s', 'second', 1], ['ns', 'nanosecond', 1e-9], ['us', 'microsecond', 1e-6], ['ms', 'millisecond', 1e-3],
    ['min', 'minute', 60], ['h', 'hour', 3600], ['d', 'day', 86400], ['wk', 'week', 604800],
    ['yr', 'Julian year (365.25 days)', 31557600],
  ],
  data: [
    ['B', 'byte', 1], ['bit', 'bit', 0.125], ['kB', 'kilobyte (1000 B)', 1e3], ['MB', 'megabyte (10^6 B)', 1e6],
    ['GB', 'gigabyte (10^9 B)', 1e9], ['TB', 'terabyte (10^12 B)', 1e12], ['KiB', 'kibibyte (1024 B)', 1024],
    ['MiB', 'mebibyte (2^20 B)', 1048576], ['GiB', 'gibibyte (2^30 B)', 1073741824], ['TiB', 'tebibyte (2^40 B)', 1099511627776],
  ],
  pressure: [
    ['Pa', 'pascal', 1], ['kPa', 'kilopascal', 1e3], ['MPa', 'megapascal', 1e6], ['hPa', 'hectopascal', 100],
    ['bar', 'bar', 1e5], ['mbar', 'millibar', 100], ['atm', 'standard atmosphere', 101325],
    ['psi', 'pound-force per square inch', 6894.757293168], ['mmHg', 'millimetre of mercury', 133.322387415],
  ],
  energy: [
    ['J', 'joule', 1], ['kJ', 'kilojoule', 1e3], ['MJ', 'megajoule', 1e6], ['cal', 'calorie (thermochemical)', 4.184],
    ['kcal', 'kilocalorie (food Calorie)', 4184], ['Wh', 'watt-hour', 3600], ['kWh', 'kilowatt-hour', 3.6e6],
    ['BTU', 'British thermal unit (IT)', 1055.05585262], ['eV', 'electronvolt', 1.602176634e-19],
  ],
};

// Temperatures are affine: kelvin = (value + offset) * scale.
const TEMPERATURE = [
  ['K', 'kelvin', 1, 0], ['C', 'degree Celsius', 1, 273.15], ['F', 'degree Fahrenheit', 5 / 9, 459.67],
  ['R', 'degree Rankine', 5 / 9, 0],
];

const UNITS = new Map();
for (const [category, units] of Object.entries(LINEAR)) {
  for (const [symbol, name, factor] of units) UNITS.set(symbol, { category, name, toBase: (v) => v * factor, fromBase: (v) => v / factor });
}
for (const [symbol, name, scale, offset] of TEMPERATURE) {
  UNITS.set(symbol, { category: 'temperature', name, toBase: (v) => (v + offset) * scale, fromBase: (k) => k / scale - offset });
}
const CATEGORIES = [...Object.keys(LINEAR), 'temperature'];
const SYMBOLS = [...UNITS.keys()];

const SCHEMA = 'https://json-schema.org/draft/2020-12/schema';

const TOOLS = {
  convert: {
    description:
      'Converts a value between units of the same kind: length, mass, volume, area, speed, time, data size, ' +
      'pressure, energy or temperature. Units are case-sensitive symbols such as `km`, `mi`, `lb`, `C`, `F`, ' +
      '`MiB`, `kWh`; `list_units` names them all. Exact factors (the international inch, pound and so on).',
    input: {
      $schema: SCHEMA,
      type: 'object',
      properties: {
        value: { type: 'number', description: 'The quantity to convert.' },
        from: { type: 'string', enum: SYMBOLS, description: 'The unit of `value`.' },
        to: { type: 'string', enum: SYMBOLS, description: 'The unit to convert to; the same kind as `from`.' },
        significant_digits: {
          type: 'integer', minimum: 1, maximum: 17,
          description: 'Round the result to this many significant digits (default 15, which hides floating-point noise).',
        },
      },
      required: ['value', 'from', 'to'],
      additionalProperties: false,
    },
    output: {
      $schema: SCHEMA,
      type: 'object',
      properties: {
        value: { type: 'number', description: 'The converted quantity, in `to`.' },
        from: { type: 'string' },
        to: { type: 'string' },
        category: { type: 'string', enum: CATEGORIES },
        text: { type: 'string', description: 'The conversion as a sentence, e.g. `1 mi = 1.609344 km`.' },
      },
      required: ['value', 'from', 'to', 'category', 'text'],
      additionalProperties: false,
    },
    run: convert,
  },
  list_units: {
    description: 'Lists the units `convert` knows, by kind, with their symbols and names.',
    input: {
      $schema: SCHEMA,
      type: 'object',
      properties: {
        category: { type: 'string', enum: CATEGORIES, description: 'Only this kind of unit (default: every kind).' },
      },
      additionalProperties: false,
    },
    output: {
      $schema: SCHEMA,
      type: 'object',
      properties: {
        categories: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              units: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { symbol: { type: 'string' }, name: { type: 'string' } },
                  required: ['symbol', 'name'],
                  additionalProperties: false,
                },
              },
            },
            required: ['name', 'units'],
            additionalProperties: false,
          },
        },
      },
      required: ['categories'],
      additionalProperties: false,
    },
    run: listUnits,
  },
};

/** Refuses input that fits the schema but makes no sense: the host reports it as invalid input. */
class InvalidInput extends Error {}

function convert({ value, from, to, significant_digits }) {
  const source = UNITS.get(from);
  const target = UNITS.get(to);
  if (source.category !== target.category) {
    throw new InvalidInput(`cannot convert ${source.category} (${from}) to ${target.category} (${to})`);
  }
  const base = source.toBase(value);
  if (source.category === 'temperature' && base < 0) {
    throw new InvalidInput(`${value} ${from} is below absolute zero`);
  }
  const digits = significant_digits ?? defaultDigits();
  const result = Number(target.fromBase(base).toPrecision(digits));
  if (!Number.isFinite(result)) {
    throw new InvalidInput(`${value} ${from} in ${to} is too large for a 64-bit number`);
  }
  return { value: result, from, to, category: source.category, text: `${value} ${from} = ${result} ${to}` };
}

/** The operator may set another default in the component's manifest: `[grants] config = { significant_digits = 6 }`. */
function defaultDigits() {
  const configured = Number.parseInt(config('significant_digits') ?? '', 10);
  if (configured >= 1 && configured <= 17) return configured;
  return 15;
}

function listUnits({ category }) {
  const categories = (category ? [category] : CATEGORIES).map((name) => ({
    name,
    units: [...UNITS].filter(([, unit]) => unit.category === name).map(([symbol, unit]) => ({ symbol, name: unit.name })),
  }));
  return { categories };
}

export const toolbox = {
  listTools() {
    return Object.entries(TOOLS).map(([name, tool]) => ({
      name,
      description: tool.description,
      inputSchema: JSON.stringify(tool.input),
      outputSchema: JSON.stringify(tool.output),
    }));
  },

  // Returns the output as JSON text, or throws a `tool-error` variant:
  // `{ tag: 'invalid-input', val: message }` or `{ tag: 'failed', val: message }`.
  call(name, input) {
    const tool = TOOLS[name];
    if (!tool) throw { tag: 'failed', val: `no tool named ${name} in this toolbox` };
    try {
      return JSON.stringify(tool.run(JSON.parse(input)));
    } catch (error) {
      if (error instanceof InvalidInput) throw { tag: 'invalid-input', val: error.message };
      log('error', `${name} failed: ${error?.stack ?? error}`);
      throw { tag: 'failed', val: String(error?.message ?? error) };
    }
  },
};
