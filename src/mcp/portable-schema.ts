/**
 * Tool schemas every major client accepts (docs/mcp.md, "Portable schemas"). zod writes a union
 * of simple types as a `type` array (`["string","null"]`) and a value of any type as `{}`; both
 * are valid JSON Schema, but clients that map schemas onto a single-`type` dialect (the OpenAPI
 * subset of some model providers) reject such a tool or drop the constraint. So:
 *
 * - `{ type: [A, B], …rest }` becomes `{ anyOf: [{ type: A, …rest }, { type: B, …rest }] }`,
 *   annotations (title, description, default, examples) kept outside. Equivalent: a keyword of
 *   one type never constrains a value of another.
 * - `additionalProperties: {}` becomes `additionalProperties: true` (the same contract, in the
 *   one place a boolean schema is portable); any other schema without a single validating
 *   keyword becomes an `anyOf` of the six JSON types, which says "any value" in a form every
 *   client reads.
 *
 * The schemas have no `$ref` (zod inlines what is not recursive, and no tool schema is); one
 * would be refused at start-up rather than sent.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };

const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', 'deprecated', 'readOnly', 'writeOnly', '$comment']);
const ANY_TYPE: Json[] = ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type }));

/** Keywords whose value is one subschema, a list of them, or a map of them. */
const ONE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedProperties', 'unevaluatedItems'];
const LIST = ['anyOf', 'allOf', 'oneOf', 'prefixItems'];
const MAP = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

const isSchema = (value: Json | undefined): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Whether a schema validates nothing: only annotations (or nothing at all). */
const untyped = (schema: Schema): boolean => Object.keys(schema).every((key) => ANNOTATIONS.has(key));

export function portableSchema(schema: Schema, path = '#'): Schema {
  if ('$ref' in schema) throw new Error(`tool schema at ${path} uses $ref, which not every client resolves`);
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (ONE.includes(key) && isSchema(value)) {
      out[key] = key === 'additionalProperties' && Object.keys(value).length === 0 ? true : portableSchema(value, `${path}/${key}`);
    } else if (LIST.includes(key) && Array.isArray(value)) {
      out[key] = value.map((item, i) => (isSchema(item) ? portableSchema(item, `${path}/${key}/${i}`) : item));
    } else if (MAP.includes(key) && isSchema(value)) {
      out[key] = Object.fromEntries(
        Object.entries(value).map(([name, item]) => [name, isSchema(item) ? portableSchema(item, `${path}/${key}/${name}`) : item]),
      );
    } else {
      out[key] = value;
    }
  }
  const type = out.type;
  if (Array.isArray(type)) {
    const annotations: Schema = {};
    const rest: Schema = {};
    for (const [key, value] of Object.entries(out)) {
      if (key === 'type') continue;
      if (ANNOTATIONS.has(key)) annotations[key] = value;
      else rest[key] = value;
    }
    return { ...annotations, anyOf: type.map((one) => ({ type: one, ...rest })) };
  }
  // The root stays an object schema; below it, "any value" is spelled out.
  if (path !== '#' && untyped(out)) return { ...out, anyOf: ANY_TYPE };
  return out;
}
