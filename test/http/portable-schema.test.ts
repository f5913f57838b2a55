import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { portableSchema } from '../../src/mcp/portable-schema.ts';

/*
 * The tool schemas as every client reads them: no `type` arrays, no bare `{}`, no `$ref`, and
 * the same values accepted and refused as the schema zod wrote.
 */

const ANY = ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type }));

describe('portableSchema', () => {
  it('splits a type array into anyOf branches, annotations kept outside', () => {
    assert.deepEqual(portableSchema({ type: 'object', properties: { a: { description: 'A.', type: ['string', 'null'], maxLength: 3 } } }), {
      type: 'object',
      properties: {
        a: {
          description: 'A.',
          anyOf: [
            { type: 'string', maxLength: 3 },
            { type: 'null', maxLength: 3 },
          ],
        },
      },
    });
  });

  it('writes a free-form map as additionalProperties: true and any other untyped value as anyOf of the six types', () => {
    assert.deepEqual(portableSchema({ type: 'object', properties: { m: { type: 'object', additionalProperties: {} }, v: { description: 'Any.' } } }), {
      type: 'object',
      properties: { m: { type: 'object', additionalProperties: true }, v: { description: 'Any.', anyOf: ANY } },
    });
  });

  it('reaches into items, anyOf and nested properties, and refuses a $ref', () => {
    const out = portableSchema({ type: 'array', items: { anyOf: [{ type: 'object', properties: { x: { type: ['number', 'string'] } } }] } });
    assert.deepEqual(out, { type: 'array', items: { anyOf: [{ type: 'object', properties: { x: { anyOf: [{ type: 'number' }, { type: 'string' }] } } }] } });
    assert.throws(() => portableSchema({ type: 'object', properties: { r: { $ref: '#/$defs/r' } } }), /#\/properties\/r uses \$ref/);
  });

  it('accepts and refuses exactly what the schema zod wrote does', () => {
    const schema = z
      .object({ a: z.string().max(3).nullable(), b: z.union([z.string(), z.number()]).optional(), c: z.record(z.string(), z.unknown()).optional() })
      .strict();
    const raw = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as unknown as Parameters<typeof portableSchema>[0];
    const ajv = new Ajv2020({ strict: false });
    const [before, after] = [ajv.compile(raw), ajv.compile(portableSchema(raw))];
    for (const value of [
      { a: null },
      { a: 'abc' },
      { a: 'abcd' },
      { a: 1 },
      { a: 'x', b: 2 },
      { a: 'x', b: true },
      { a: 'x', c: { k: [1] } },
      { a: 'x', d: 1 },
      {},
    ]) {
      assert.equal(after(value), before(value), JSON.stringify(value));
    }
  });
});
