import fc from 'fast-check';

/*
 * A small, generic JSON Schema → fast-check arbitrary: enough of draft 2020-12 (and OpenAPI's
 * `nullable`) for the input schemas MCP tools publish in tools/list. It knows object
 * (properties, required, additionalProperties), string (minLength, maxLength, pattern, enum,
 * format), integer and number (minimum, maximum, exclusive bounds), boolean, null, array
 * (items, minItems, maxItems), anyOf, oneOf, const, enum, type lists and nullable.
 *
 * `unsupportedKeywords` names whatever it does not know, so a suite can fail loudly when a tool
 * is published with a schema this generator would silently get wrong.
 *
 * Callers mix their own values into any position through `extra` (real ids, hostile strings,
 * wrong types): at each position the schema's own arbitrary and the extra one are combined
 * with fc.oneof, so fast-check shrinks towards the schema's own, simplest values.
 */

export type JsonSchema = boolean | SchemaObject;
export type SchemaObject = { readonly [keyword: string]: unknown };

/** Where a value is generated: the property names from the root (array items as `[]`). */
export interface SchemaPosition {
  readonly path: readonly string[];
  /** The nearest property name, if the position is (inside) a property. */
  readonly key: string | undefined;
  readonly schema: SchemaObject;
  /** The JSON types the schema allows at this position. */
  readonly types: readonly JsonType[];
}

export type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

export interface SchemaArbitraryOptions {
  /**
   * Values to mix in at a position besides the schema's own (undefined: only the schema's),
   * with their weight against the schema's own values, which weigh 2.
   */
  readonly extra?: (position: SchemaPosition) => fc.WeightedArbitrary<unknown> | undefined;
  /** Longest array when the schema sets no maxItems; default 4. */
  readonly maxItems?: number;
  /** Longest string when the schema sets no maxLength; default 40. */
  readonly maxLength?: number;
  /** Most extra properties where additionalProperties allows them; default 2. */
  readonly maxExtraProperties?: number;
  /** How often an optional property is present: 1 in `optionalFreq` is absent (fc.option's freq); default: half. */
  readonly optionalFreq?: number;
}

const TYPES: readonly JsonType[] = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

/** Keywords that change which values are valid, and that this generator honours. */
const HANDLED = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'anyOf',
  'oneOf',
  'nullable',
]);

/** Keywords that only annotate. */
const ANNOTATIONS = new Set([
  '$schema',
  '$id',
  '$comment',
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentMediaType',
  'contentEncoding',
]);

const FORMATS = new Set(['uuid', 'date-time', 'date', 'time', 'email', 'uri', 'url']);

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function regexOf(pattern: string): RegExp {
  // JSON Schema patterns are ECMA-262 regular expressions, unanchored.
  return new RegExp(pattern, 'u');
}

/** The JSON types a schema allows (from `type`, or inferred from its keywords). */
export function typesOf(schema: SchemaObject): JsonType[] {
  const type = schema.type;
  let types: JsonType[];
  if (typeof type === 'string') types = [type as JsonType];
  else if (Array.isArray(type)) types = type.filter((t): t is JsonType => TYPES.includes(t as JsonType));
  else if (schema.properties !== undefined || schema.additionalProperties !== undefined || schema.required !== undefined) types = ['object'];
  else if (schema.items !== undefined) types = ['array'];
  else if (schema.pattern !== undefined || schema.format !== undefined || schema.minLength !== undefined || schema.maxLength !== undefined) types = ['string'];
  else types = [...TYPES];
  if (schema.nullable === true && !types.includes('null')) types.push('null');
  return types;
}

/**
 * Every part of `schema` this generator cannot honour, as `path: problem` lines; empty when it
 * handles the whole schema (then every value it generates without `extra` validates against it).
 */
export function unsupportedKeywords(schema: JsonSchema, path = '$'): string[] {
  if (typeof schema === 'boolean') return schema ? [] : [`${path}: the schema false admits no value`];
  if (!isObject(schema)) return [`${path}: not a schema`];
  const problems: string[] = [];
  for (const keyword of Object.keys(schema)) {
    if (!HANDLED.has(keyword) && !ANNOTATIONS.has(keyword) && !keyword.startsWith('x-')) problems.push(`${path}: unsupported keyword "${keyword}"`);
  }
  const type = schema.type;
  for (const t of typeof type === 'string' ? [type] : Array.isArray(type) ? (type as unknown[]) : []) {
    if (!TYPES.includes(t as JsonType)) problems.push(`${path}: unknown type ${JSON.stringify(t)}`);
  }
  if (type !== undefined && typeof type !== 'string' && !Array.isArray(type)) problems.push(`${path}: type is neither a string nor a list`);
  if (schema.format !== undefined && (typeof schema.format !== 'string' || !FORMATS.has(schema.format)))
    problems.push(`${path}: unsupported format ${JSON.stringify(schema.format)}`);
  if (schema.pattern !== undefined) {
    if (typeof schema.pattern !== 'string') problems.push(`${path}: pattern is not a string`);
    else {
      try {
        fc.sample(fc.stringMatching(regexOf(schema.pattern)), { numRuns: 3, seed: 1 });
      } catch (error) {
        problems.push(`${path}: pattern ${schema.pattern} cannot be generated (${(error as Error).message})`);
      }
    }
  }
  for (const bound of ['minLength', 'maxLength', 'minItems', 'maxItems'] as const) {
    const value = schema[bound];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) problems.push(`${path}: ${bound} is not a non-negative integer`);
  }
  for (const bound of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const) {
    const value = schema[bound];
    if (value !== undefined && typeof value !== 'number')
      problems.push(`${path}: ${bound} is not a number (draft 4 boolean exclusive bounds are not supported)`);
  }
  if (typeof schema.minLength === 'number' && typeof schema.maxLength === 'number' && schema.minLength > schema.maxLength)
    problems.push(`${path}: minLength > maxLength`);
  if (typeof schema.minItems === 'number' && typeof schema.maxItems === 'number' && schema.minItems > schema.maxItems)
    problems.push(`${path}: minItems > maxItems`);
  if (schema.enum !== undefined && (!Array.isArray(schema.enum) || schema.enum.length === 0)) problems.push(`${path}: enum is not a non-empty list`);
  if (schema.required !== undefined && (!Array.isArray(schema.required) || schema.required.some((r) => typeof r !== 'string')))
    problems.push(`${path}: required is not a list of names`);
  if (schema.properties !== undefined) {
    if (!isObject(schema.properties)) problems.push(`${path}: properties is not an object`);
    else for (const [name, sub] of Object.entries(schema.properties)) problems.push(...unsupportedKeywords(sub as JsonSchema, `${path}.${name}`));
  }
  if (schema.additionalProperties !== undefined && typeof schema.additionalProperties !== 'boolean')
    problems.push(...unsupportedKeywords(schema.additionalProperties as JsonSchema, `${path}.*`));
  if (schema.items !== undefined) {
    if (Array.isArray(schema.items)) problems.push(`${path}: tuple items are not supported`);
    else problems.push(...unsupportedKeywords(schema.items as JsonSchema, `${path}[]`));
  }
  for (const combinator of ['anyOf', 'oneOf'] as const) {
    const list = schema[combinator];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.length === 0) problems.push(`${path}: ${combinator} is not a non-empty list`);
    else list.forEach((sub, i) => problems.push(...unsupportedKeywords(sub as JsonSchema, `${path}.${combinator}[${i}]`)));
  }
  return problems;
}

/** An arbitrary of values of `schema`, with `options.extra` mixed in at every position. */
export function arbitraryFromSchema(schema: JsonSchema, options: SchemaArbitraryOptions = {}): fc.Arbitrary<unknown> {
  return new Builder(options).build(schema, [], undefined);
}

/** Any JSON value, shallow. */
export const anyJson: fc.Arbitrary<unknown> = fc.jsonValue({ maxDepth: 2 });

class Builder {
  readonly #options: SchemaArbitraryOptions;

  constructor(options: SchemaArbitraryOptions) {
    this.#options = options;
  }

  build(schema: JsonSchema, path: readonly string[], key: string | undefined): fc.Arbitrary<unknown> {
    if (typeof schema === 'boolean') return schema ? anyJson : fc.constant(undefined);
    const own = this.#own(schema, path, key);
    const extra = this.#options.extra?.({ path, key, schema, types: typesOf(schema) });
    if (extra === undefined) return own;
    // The schema's own values first: fast-check shrinks a oneof towards its first branch.
    return fc.oneof({ arbitrary: own, weight: 2 }, extra);
  }

  #own(schema: SchemaObject, path: readonly string[], key: string | undefined): fc.Arbitrary<unknown> {
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum) && schema.enum.length > 0) {
      const values: unknown[] = [...(schema.enum as unknown[])];
      if (schema.nullable === true && !values.includes(null)) values.push(null);
      return fc.constantFrom(...values);
    }
    for (const combinator of ['anyOf', 'oneOf'] as const) {
      const list = schema[combinator];
      if (Array.isArray(list) && list.length > 0) {
        // The branches only; sibling keywords besides annotations are not merged in.
        const branches = (list as JsonSchema[]).map((sub) => this.build(sub, path, key));
        if (schema.nullable === true) branches.push(fc.constant(null));
        return fc.oneof(...branches);
      }
    }
    const types = typesOf(schema);
    const arbitraries = types.map((type) => this.#ofType(type, schema, path, key));
    return arbitraries.length === 1 ? arbitraries[0]! : fc.oneof(...arbitraries);
  }

  #ofType(type: JsonType, schema: SchemaObject, path: readonly string[], key: string | undefined): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
        // A range without an integer admits no value; the bounds themselves are then the nearest misses.
        return integers(schema) ?? fc.constantFrom(bound(schema, 'minimum') ?? 0, bound(schema, 'maximum') ?? 0);
      case 'number':
        return numbers(schema);
      case 'string':
        return this.#strings(schema);
      case 'array':
        return this.#array(schema, path, key);
      case 'object':
        return this.#object(schema, path);
    }
  }

  #strings(schema: SchemaObject): fc.Arbitrary<string> {
    const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
    const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : Math.max(minLength, this.#options.maxLength ?? 40);
    const fits = (s: string) => {
      const length = [...s].length; // JSON Schema counts code points
      return length >= minLength && length <= maxLength;
    };
    const pattern = typeof schema.pattern === 'string' ? regexOf(schema.pattern) : undefined;
    const byFormat = typeof schema.format === 'string' ? formatted(schema.format) : undefined;
    if (byFormat !== undefined) {
      if (pattern === undefined) return byFormat.filter(fits);
      // The format's own generator when its values match the pattern too (zod's do), else the pattern's.
      const agrees = fc.sample(byFormat, { numRuns: 20, seed: 7 }).every((s) => pattern.test(s));
      return agrees ? fc.oneof(byFormat.filter(fits), fc.stringMatching(pattern).filter(fits)) : fc.stringMatching(pattern).filter(fits);
    }
    if (pattern !== undefined) return fc.stringMatching(pattern, { size: 'small' }).filter(fits);
    // fast-check counts units (graphemes, code points), JSON Schema code points: hence the filter.
    return fc.oneof(
      { arbitrary: fc.string({ minLength, maxLength }), weight: 3 },
      { arbitrary: fc.string({ minLength, maxLength, unit: 'grapheme' }).filter(fits), weight: 1 },
      { arbitrary: fc.string({ minLength, maxLength, unit: 'binary' }).filter(fits), weight: 1 },
    );
  }

  #array(schema: SchemaObject, path: readonly string[], key: string | undefined): fc.Arbitrary<unknown[]> {
    const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
    const cap = this.#options.maxItems ?? 4;
    const maxLength = typeof schema.maxItems === 'number' ? Math.min(schema.maxItems, Math.max(minLength, cap)) : Math.max(minLength, cap);
    const items = schema.items === undefined ? anyJson : this.build(schema.items as JsonSchema, [...path, '[]'], key);
    return fc.array(items, { minLength, maxLength });
  }

  #object(schema: SchemaObject, path: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
    const properties = isObject(schema.properties) ? (schema.properties as Record<string, JsonSchema>) : {};
    const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, sub] of Object.entries(properties)) model[name] = this.build(sub, [...path, name], name);
    // A required name without a property schema takes any value.
    for (const name of required) model[name] ??= anyJson;
    const requiredKeys = required.filter((name) => name in model);
    const freq = this.#options.optionalFreq;
    const record =
      freq === undefined
        ? fc.record(model, { requiredKeys })
        : fc
            .record(
              Object.fromEntries(
                Object.entries(model).map(([name, arbitrary]) => [
                  name,
                  requiredKeys.includes(name) ? arbitrary : fc.option(arbitrary, { nil: undefined, freq }),
                ]),
              ),
            )
            .map((value) => Object.fromEntries(Object.entries(value).filter(([name, item]) => item !== undefined || requiredKeys.includes(name))));
    const additional = schema.additionalProperties;
    if (additional === false) return record;
    const extraValues = additional === undefined || additional === true ? anyJson : this.build(additional as JsonSchema, [...path, '*'], undefined);
    const extraKeys = fc.string({ minLength: 1, maxLength: 12 }).filter((name) => !(name in properties) && name !== '__proto__');
    return fc
      .tuple(record, fc.dictionary(extraKeys, extraValues, { maxKeys: this.#options.maxExtraProperties ?? 2 }))
      .map(([known, extra]) => ({ ...extra, ...known }));
  }
}

function bound(schema: SchemaObject, name: string): number | undefined {
  const value = schema[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

const INT32 = 2 ** 31 - 1;

/** Integers within the schema's bounds, or undefined when there is none. */
function integers(schema: SchemaObject): fc.Arbitrary<number> | undefined {
  let min = bound(schema, 'minimum') ?? -Number.MAX_SAFE_INTEGER;
  let max = bound(schema, 'maximum') ?? Number.MAX_SAFE_INTEGER;
  const exclusiveMin = bound(schema, 'exclusiveMinimum');
  const exclusiveMax = bound(schema, 'exclusiveMaximum');
  if (exclusiveMin !== undefined) min = Math.max(min, Math.floor(exclusiveMin) + 1);
  if (exclusiveMax !== undefined) max = Math.min(max, Math.ceil(exclusiveMax) - 1);
  min = Math.ceil(Math.max(min, -Number.MAX_SAFE_INTEGER));
  max = Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER));
  if (min > max) return undefined;
  const edges = fc.constantFrom(...[min, max, 0, 1, -1, INT32, INT32 + 1, -INT32 - 1].filter((n) => n >= min && n <= max));
  const wideMin = Math.max(min, -INT32 - 1);
  const wideMax = Math.min(max, INT32);
  if (wideMin > wideMax) return edges;
  const wide = fc.integer({ min: wideMin, max: wideMax });
  if (min > 1000 || max < -1000) return fc.oneof(wide, edges);
  // Mostly small values (where the interesting boundaries are), sometimes the extremes.
  const small = fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1000) });
  return fc.oneof({ arbitrary: small, weight: 4 }, { arbitrary: wide, weight: 1 }, { arbitrary: edges, weight: 1 });
}

function numbers(schema: SchemaObject): fc.Arbitrary<number> {
  const minimum = bound(schema, 'minimum');
  const maximum = bound(schema, 'maximum');
  const exclusiveMin = bound(schema, 'exclusiveMinimum');
  const exclusiveMax = bound(schema, 'exclusiveMaximum');
  const inRange = (n: number) =>
    (minimum === undefined || n >= minimum) &&
    (maximum === undefined || n <= maximum) &&
    (exclusiveMin === undefined || n > exclusiveMin) &&
    (exclusiveMax === undefined || n < exclusiveMax);
  const min = Math.max(minimum ?? -Number.MAX_VALUE, exclusiveMin ?? -Number.MAX_VALUE);
  const max = Math.min(maximum ?? Number.MAX_VALUE, exclusiveMax ?? Number.MAX_VALUE);
  // JSON has no NaN or Infinity; -0 is written as 0.
  const doubles = fc.double({ noNaN: true, noDefaultInfinity: true, min, max }).filter((n) => inRange(n) && !Object.is(n, -0));
  const whole = integers(schema);
  return whole === undefined ? doubles : fc.oneof({ arbitrary: whole.filter(inRange), weight: 3 }, { arbitrary: doubles, weight: 1 });
}

function isoDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

const DATES = fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-12-31T23:59:59Z'), noInvalidDate: true });

function formatted(format: string): fc.Arbitrary<string> | undefined {
  switch (format) {
    case 'uuid':
      return fc.uuid({ version: [1, 2, 3, 4, 5, 6, 7, 8] });
    case 'date-time':
      return DATES.map((d) => d.toISOString());
    case 'date':
      return DATES.map(isoDate);
    case 'time':
      return DATES.map((d) => d.toISOString().slice(11));
    case 'email':
      return fc.emailAddress();
    case 'uri':
    case 'url':
      return fc.webUrl();
    default:
      return undefined;
  }
}
