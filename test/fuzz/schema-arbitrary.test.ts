import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { Caller } from '../../src/kernel/access/caller.ts';
import { scopeCatalogue } from '../../src/products.ts';
import { allTools, dialectErrors, mcpEndpoints } from '../../src/products.ts';
import { ToolRegistry } from '../../src/mcp/registry.ts';
import { applyMutation, placesIn, replaceAt, withOneHostileValue } from './hostile.ts';
import type { JsonSchema, SchemaObject, SchemaPosition } from './schema-arbitrary.ts';
import { arbitraryFromSchema, unsupportedKeywords } from './schema-arbitrary.ts';

/*
 * The fuzz suites' own generator, checked without a gateway: without `extra` every value it
 * generates validates against its schema (Ajv, as the SDK configures it), for every tool input
 * schema the gateway publishes and for each keyword it claims to handle; what it cannot handle
 * it says so.
 */

const ajv = new AjvJsonSchemaValidator();

/** OpenAPI's `nullable`, which Ajv ignores, as JSON Schema. */
function withoutNullable(schema: JsonSchema): JsonSchema {
  if (typeof schema === 'boolean' || schema.nullable !== true) return schema;
  const { nullable: _nullable, ...rest } = schema;
  return { anyOf: [rest, { type: 'null' }] };
}

function assertGeneratesValid(schema: JsonSchema, runs = 200): void {
  // The SDK's Ajv wrapper takes object schemas only; `true` admits everything anyway.
  const validate =
    typeof schema === 'boolean' ? () => ({ valid: schema, errorMessage: 'false admits nothing' }) : ajv.getValidator(withoutNullable(schema) as SchemaObject);
  fc.assert(
    fc.property(arbitraryFromSchema(schema), (value) => {
      const result = validate(value);
      assert.ok(result.valid, `${JSON.stringify(value)} does not match ${JSON.stringify(schema)}: ${result.errorMessage ?? ''}`);
    }),
    { seed: 42, numRuns: runs },
  );
}

function publishedTools() {
  const endpoints = mcpEndpoints('0.0.0');
  const registry = new ToolRegistry(endpoints, allTools, dialectErrors);
  const caller = { scopes: new Set(scopeCatalogue.all) } as unknown as Caller;
  const all = new Map<string, ReturnType<ToolRegistry['listFor']>[number]>();
  for (const endpoint of endpoints) for (const tool of registry.listFor(endpoint, caller)) all.set(tool.name, tool);
  return [...all.values()];
}

describe('fuzz: the JSON Schema generator', () => {
  it('covers every input schema the gateway publishes, and every value it generates is valid', () => {
    const tools = publishedTools();
    assert.ok(tools.length > 0);
    for (const tool of tools) {
      assert.deepEqual(unsupportedKeywords(tool.inputSchema as SchemaObject), [], `${tool.name}: the generator covers its input schema`);
      assertGeneratesValid(tool.inputSchema, 100);
    }
  });

  it('honours each keyword it claims', () => {
    const schemas: SchemaObject[] = [
      { type: 'string', minLength: 3, maxLength: 5 },
      { type: 'string', pattern: '^[a-z][a-z0-9-]{0,9}$' },
      { type: 'string', format: 'uuid' },
      { type: 'string', format: 'date-time' },
      { type: 'string', format: 'date' },
      { type: 'string', format: 'email' },
      { type: 'string', enum: ['a', 'b'] },
      { type: 'string', enum: ['a'], nullable: true },
      { const: 'fixed' },
      { type: 'integer', minimum: 1, maximum: 3 },
      { type: 'integer', exclusiveMinimum: 0, maximum: 2_147_483_647 },
      { type: 'integer', minimum: -9_007_199_254_740_991, maximum: 9_007_199_254_740_991 },
      { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'null' },
      { type: ['string', 'number'] },
      { type: 'string', nullable: true },
      { type: 'array', items: { type: 'integer' }, minItems: 2, maxItems: 3 },
      { type: 'array', items: { type: 'string', enum: ['x', 'y'] }, maxItems: 50 },
      { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      { oneOf: [{ type: 'string' }, { type: 'boolean' }] },
      {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'object', properties: { c: { type: 'integer' } }, required: ['c'], additionalProperties: false } },
        required: ['a'],
        additionalProperties: false,
      },
      { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'integer' } },
      { type: 'object', properties: {}, required: ['x'] },
      { description: 'anything' },
      true,
    ] as SchemaObject[];
    for (const schema of schemas) {
      assert.deepEqual(unsupportedKeywords(schema), [], JSON.stringify(schema));
      assertGeneratesValid(schema);
    }
  });

  it('names what it cannot honour', () => {
    const cases: [SchemaObject, RegExp][] = [
      [{ $ref: '#/$defs/x' }, /unsupported keyword "\$ref"/],
      [{ allOf: [{ type: 'string' }] }, /unsupported keyword "allOf"/],
      [{ not: { type: 'string' } }, /unsupported keyword "not"/],
      [{ type: 'object', patternProperties: { '^a': {} } }, /unsupported keyword "patternProperties"/],
      [{ type: 'object', properties: { a: { type: 'string', format: 'ipv4' } } }, /\$\.a: unsupported format "ipv4"/],
      [{ type: 'array', items: [{ type: 'string' }] }, /tuple items/],
      [{ type: 'number', exclusiveMinimum: true, minimum: 0 }, /draft 4/],
      [{ type: 'string', minLength: 5, maxLength: 2 }, /minLength > maxLength/],
      [{ type: 'thing' }, /unknown type "thing"/],
      [{ anyOf: [] }, /anyOf is not a non-empty list/],
    ];
    for (const [schema, problem] of cases) {
      const problems = unsupportedKeywords(schema);
      assert.ok(
        problems.some((p) => problem.test(p)),
        `${JSON.stringify(schema)}: ${JSON.stringify(problems)}`,
      );
    }
    assert.deepEqual(unsupportedKeywords(false), ['$: the schema false admits no value']);
  });

  it('offers every position to `extra`, with its path, name and types', () => {
    const seen: SchemaPosition[] = [];
    const schema: SchemaObject = {
      type: 'object',
      properties: {
        list: { type: 'array', items: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
        n: { type: ['integer', 'null'] },
      },
      required: ['list', 'n'],
      additionalProperties: false,
    };
    const arbitrary = arbitraryFromSchema(schema, {
      extra: (position) => {
        seen.push(position);
        return position.key === 'id' ? { arbitrary: fc.constant('EXTRA'), weight: 1_000_000 } : undefined;
      },
    });
    assert.deepEqual(
      seen.map((p) => `${p.path.join('/')} ${p.key ?? '-'} ${p.types.join('|')}`),
      ['list/[]/id id string', 'list/[] list object', 'list list array', 'n n integer|null', ' - object'],
    );
    const values = fc.sample(arbitrary, { seed: 1, numRuns: 50 }) as { list: { id: string }[] }[];
    const ids = values.flatMap((v) => v.list.map((item) => item.id));
    assert.ok(ids.length > 0 && ids.every((id) => id === 'EXTRA'), 'a heavy extra wins at its position');
  });

  it('mutates arguments: drops a required field, adds an own "__proto__" key, swaps one value at any depth', () => {
    const schema: SchemaObject = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'integer' } }, required: ['a', 'b'] };
    assert.deepEqual(applyMutation(schema, { a: 'x', b: 1 }, { kind: 'drop-required', pick: 1 }), { a: 'x' });
    const polluted = applyMutation(schema, { a: 'x', b: 1 }, { kind: 'extra-field', key: '__proto__', value: { admin: true } });
    assert.equal(JSON.stringify(polluted), '{"a":"x","b":1,"__proto__":{"admin":true}}');
    assert.equal(Object.getPrototypeOf(polluted), Object.prototype);
    assert.deepEqual(applyMutation(schema, { a: 'x', b: 1 }, { kind: 'wrong-type', pick: 0, value: [] }), { a: [], b: 1 });
    assert.deepEqual(placesIn({ a: [{ b: 1 }] }), [['a'], ['a', 0], ['a', 0, 'b']]);
    assert.deepEqual(replaceAt({ a: [{ b: 1 }, 2] }, ['a', 0, 'b'], 'z'), { a: [{ b: 'z' }, 2] });
    const valid = { a: 'plain', b: 1, c: ['x', 'y'] };
    for (const mutated of fc.sample(withOneHostileValue(fc.constant(valid)), { seed: 3, numRuns: 100 })) {
      const get = (v: unknown, place: readonly (string | number)[]) =>
        place.reduce<unknown>((at, step) => (at as Record<string | number, unknown> | undefined)?.[step], v);
      const differing = placesIn(valid).filter((place) => JSON.stringify(get(valid, place)) !== JSON.stringify(get(mutated, place)));
      // One place changed: every differing place is it or inside it.
      const [first] = [...differing].sort((x, y) => x.length - y.length);
      if (first !== undefined)
        assert.ok(
          differing.every((place) => first.every((step, i) => place[i] === step)),
          `one value changed: ${JSON.stringify(mutated)}`,
        );
    }
  });
});
