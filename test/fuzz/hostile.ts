import fc from 'fast-check';
import type { JsonSchema, SchemaObject } from './schema-arbitrary.ts';

/*
 * Hostile values for fuzzing: strings a careless store, log, terminal or file system chokes on,
 * numbers at and beyond every boundary, wrong types, deep nesting, and mutations of otherwise
 * valid arguments (a required field dropped, an unknown one added, one value swapped for a
 * hostile one).
 */

/** Single characters and short sequences that must never break a tool. */
export const HOSTILE_FRAGMENTS: readonly string[] = [
  '\u0000', // NUL: PostgreSQL text refuses it
  '\uD800', // lone high surrogate
  '\uDFFF', // lone low surrogate
  '\uDBFF\uDBFF', // two highs
  '\u202E', // RIGHT-TO-LEFT OVERRIDE
  '\u2066', // LEFT-TO-RIGHT ISOLATE
  '\u2067\u2069',
  '\u200F', // RIGHT-TO-LEFT MARK
  '\u0085', // NEXT LINE (C1)
  '\u009B', // CONTROL SEQUENCE INTRODUCER (C1)
  '\u0080',
  '\u001B[31m', // ESC: ANSI colour
  '\u001B]0;pwned\u0007', // ESC: OSC terminal title
  '\u001Bc', // ESC: terminal reset
  '\r\n',
  '\r',
  '\t',
  '\u0008',
  '\u007F',
  '\u2028',
  '\u2029',
  '\uFEFF',
  '\uFFFE',
  '\uFFFF',
  '\u{10FFFF}',
  '\u{1F4A9}',
  'e\u0301\u0301\u0301',
  '\u200B',
  '%00',
  '%',
  '_',
  '\\',
  "'",
  '"',
  '`',
  '$1',
  '${x}',
  '{{x}}',
  "' OR '1'='1' --",
  '<script>alert(1)</script>',
  '---\n',
  '\n---\nname: x\n---\n',
  // Escapes that an inner parser (YAML frontmatter, HTML, URLs) turns into the characters above.
  '\\0',
  '\\x00',
  '\\u0000',
  '\\ud800',
  '\\u202e',
  '&#0;',
  '&#x202e;',
  '%uD800',
];

/** Strings that look like numbers, booleans or nothing. */
export const NUMBERISH: readonly string[] = [
  '',
  ' ',
  '0',
  '-0',
  '-1',
  '1.0',
  '1.5',
  '01',
  '0x10',
  '1e3',
  '1e309',
  '-1e309',
  'NaN',
  'Infinity',
  '-Infinity',
  '9007199254740993',
  '2147483648',
  '-9223372036854775809',
  '99999999999999999999999999',
  ' 1',
  '1 ',
  '１',
  'null',
  'undefined',
  'true',
  'false',
  '[]',
  '{}',
  'latest',
  'published',
  'LATEST',
  'latest\u0000',
];

/** Path-like strings: traversal, absolute, Windows, encoded. */
export const PATHISH: readonly string[] = [
  '../../etc/passwd',
  '../../../../../../../../etc/passwd',
  '..',
  '.',
  '/',
  '/abs',
  '/etc/passwd',
  'a\\b',
  '..\\..\\windows\\win.ini',
  'C:\\Windows\\win.ini',
  '\\\\server\\share',
  'a/../../b',
  'a/./b',
  'a//b',
  'a/',
  './a',
  '~/.ssh/id_rsa',
  '%2e%2e/%2e%2e/etc/passwd',
  '..%2f..%2f',
  'file:///etc/passwd',
  'a/\u0000/b',
  'CON',
  'aux.txt',
  'SKILL.md',
  'skill.md',
  '.git/config',
  'a'.repeat(300),
  `${'a/'.repeat(200)}x`,
];

/** Id-like strings besides random UUIDs. */
export const IDISH: readonly string[] = [
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
  '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a',
  '0b1e7c5e8f434d8e9a513c2d1f0e9b7a',
  '{0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a}',
  ' 0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a',
  '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a\u0000',
  '0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7g',
  '0b1e7c5e-8f43-4d8e-9a51',
  'urn:uuid:0b1e7c5e-8f43-4d8e-9a51-3c2d1f0e9b7a',
  '1',
  '-1',
  'null',
];

/** Dates at and beyond the calendar's edges. */
export const DATEISH: readonly string[] = [
  '2024-02-29',
  '2023-02-29',
  '2024-02-30',
  '2024-13-01',
  '2024-00-10',
  '0000-01-01',
  '0001-01-01',
  '9999-12-31',
  '+275760-09-13',
  '-000001-01-01',
  '1970-01-01T00:00:00Z',
  '2024-01-01T00:00:00+25:00',
  '2024-1-1',
  '20240101',
  'today',
];

/** A few sizes of long string; the largest are rare so runs stay bounded. */
const LONG = fc.oneof(
  { arbitrary: fc.constantFrom(1_000, 10_000, 70_000), weight: 6 },
  { arbitrary: fc.constantFrom(300_000, 1_100_000), weight: 2 },
  { arbitrary: fc.constantFrom(3_000_000, 10_000_000), weight: 1 },
);

const longString: fc.Arbitrary<string> = fc
  .tuple(LONG, fc.constantFrom('a', 'é', '\u{1F600}', 'ab\u0000', '\u202E', '\n'))
  .map(([length, unit]) => unit.repeat(Math.max(1, Math.floor(length / unit.length))));

/** A string with hostile fragments spliced into ordinary text. */
const spliced: fc.Arbitrary<string> = fc
  .array(fc.oneof({ arbitrary: fc.string({ maxLength: 8 }), weight: 2 }, { arbitrary: fc.constantFrom(...HOSTILE_FRAGMENTS), weight: 2 }), {
    minLength: 1,
    maxLength: 5,
  })
  .map((parts) => parts.join(''));

export interface HostileStringOptions {
  /** Mix in path traversal (for names that look like paths or ids). */
  readonly pathish?: boolean;
  /** Mix in id-like strings. */
  readonly idish?: boolean;
  /** Mix in broken dates. */
  readonly dateish?: boolean;
}

/** Hostile strings, with more of the kinds that suit a position. */
export function hostileString(options: HostileStringOptions = {}): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...HOSTILE_FRAGMENTS), weight: 4 },
    { arbitrary: spliced, weight: 4 },
    { arbitrary: fc.constantFrom(...NUMBERISH), weight: 2 },
    { arbitrary: fc.constantFrom(...PATHISH), weight: options.pathish === true ? 5 : 1 },
    { arbitrary: fc.constantFrom(...IDISH), weight: options.idish === true ? 4 : 1 },
    { arbitrary: fc.uuid(), weight: options.idish === true ? 4 : 1 },
    { arbitrary: fc.constantFrom(...DATEISH), weight: options.dateish === true ? 4 : 1 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 30 }), weight: 2 },
    { arbitrary: longString, weight: 1 },
  );
}

/** Numbers at and beyond every boundary (JSON has no NaN or Infinity; JSON.stringify writes them as null). */
export const HOSTILE_NUMBERS: readonly number[] = [
  0,
  -1,
  -0.5,
  0.5,
  1.5,
  -(2 ** 31),
  2 ** 31,
  2 ** 31 - 1,
  2 ** 32,
  -(2 ** 63),
  2 ** 63,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER - 2,
  1e21,
  1e308,
  -1e308,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  5e-324,
  1e-7,
];

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  { arbitrary: fc.constantFrom(...HOSTILE_NUMBERS), weight: 3 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.integer(), weight: 1 },
);

/**
 * Arrays or objects nested `depth` deep. The SDK client serialises with JSON.stringify, which
 * overflows the stack a little beyond 2,000 levels; deeper nesting goes over raw HTTP (rpc.fuzz.test.ts).
 */
export function nested(depth: number, kind: 'array' | 'object'): unknown {
  let value: unknown = kind === 'array' ? [] : {};
  for (let i = 0; i < depth; i += 1) value = kind === 'array' ? [value] : { a: value };
  return value;
}

const deepNesting: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom(10, 100, 1_000, 2_000), fc.constantFrom('array' as const, 'object' as const))
  .map(([depth, kind]) => nested(depth, kind));

/** A value of the wrong type for almost any position. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, [], {}, [null], { '': null }, [1, 'a'], JSON.parse('{"__proto__":{"polluted":true}}')),
  hostileNumber,
  fc.constantFrom(...NUMBERISH),
  deepNesting,
  fc.jsonValue({ maxDepth: 3 }),
);

/** Keys that must never reach an object unchecked. */
export const HOSTILE_KEYS: readonly string[] = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '',
  ' ',
  '\u0000',
  'a.b',
  '$where',
  'tenant_id',
  'tenant',
  'principal_id',
  'caller',
];

/** One way to break otherwise valid arguments. */
export type Mutation =
  | { readonly kind: 'none' }
  | { readonly kind: 'drop-required'; readonly pick: number }
  | { readonly kind: 'drop-all' }
  | { readonly kind: 'extra-field'; readonly key: string; readonly value: unknown }
  | { readonly kind: 'wrong-type'; readonly pick: number; readonly value: unknown };

function mutations(schema: SchemaObject): fc.Arbitrary<Mutation> {
  const required = Array.isArray(schema.required) ? schema.required.length : 0;
  const properties = typeof schema.properties === 'object' && schema.properties !== null ? Object.keys(schema.properties).length : 0;
  const choices: fc.WeightedArbitrary<Mutation>[] = [
    { arbitrary: fc.constant<Mutation>({ kind: 'none' }), weight: 12 },
    {
      arbitrary: fc.record({
        kind: fc.constant('extra-field' as const),
        key: fc.oneof(fc.constantFrom(...HOSTILE_KEYS), fc.string({ maxLength: 10 })),
        value: fc.oneof(wrongType, hostileString()),
      }),
      weight: 1,
    },
    { arbitrary: fc.constant<Mutation>({ kind: 'drop-all' }), weight: 1 },
  ];
  if (required > 0) choices.push({ arbitrary: fc.record({ kind: fc.constant('drop-required' as const), pick: fc.nat({ max: required - 1 }) }), weight: 2 });
  if (properties > 0)
    choices.push({ arbitrary: fc.record({ kind: fc.constant('wrong-type' as const), pick: fc.nat({ max: properties - 1 }), value: wrongType }), weight: 2 });
  return fc.oneof(...choices);
}

/** Applies a mutation to arguments of an object schema. */
export function applyMutation(schema: SchemaObject, args: Record<string, unknown>, mutation: Mutation): Record<string, unknown> {
  const out: Record<string, unknown> = { ...args };
  switch (mutation.kind) {
    case 'none':
      return out;
    case 'drop-all':
      return {};
    case 'drop-required': {
      const name = (schema.required as string[])[mutation.pick];
      if (name !== undefined) delete out[name];
      return out;
    }
    case 'extra-field':
      // defineProperty, so "__proto__" becomes an own key as JSON.parse would make it.
      Object.defineProperty(out, mutation.key, { value: mutation.value, enumerable: true, writable: true, configurable: true });
      return out;
    case 'wrong-type': {
      const name = Object.keys(schema.properties as Record<string, JsonSchema>)[mutation.pick];
      if (name !== undefined) out[name] = mutation.value;
      return out;
    }
  }
}

/** Arguments from `valid`, sometimes mutated into invalid ones (shrinks towards no mutation). */
export function withMutations(schema: SchemaObject, valid: fc.Arbitrary<unknown>): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(valid, mutations(schema)).map(([args, mutation]) => {
    const object = typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
    return applyMutation(schema, object, mutation);
  });
}

/** Every place in a JSON value (object keys and array indices), root excluded. */
export function placesIn(value: unknown, prefix: readonly (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null || prefix.length > 8) return out;
  for (const [key, item] of Object.entries(value)) {
    const place = [...prefix, Array.isArray(value) ? Number(key) : key];
    out.push(place);
    placesIn(item, place, out);
  }
  return out;
}

/** A copy of `value` with the thing at `place` replaced. */
export function replaceAt(value: unknown, place: readonly (string | number)[], replacement: unknown): unknown {
  if (place.length === 0) return replacement;
  const [head, ...rest] = place;
  if (Array.isArray(value)) return (value as unknown[]).map((item, i) => (i === head ? replaceAt(item, rest, replacement) : item));
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    copy[String(head)] = replaceAt(copy[String(head)], rest, replacement);
    return copy;
  }
  return value;
}

const oneHostile = fc.record({
  where: fc.nat(),
  string: hostileString({ pathish: true, idish: true, dateish: true }),
  number: hostileNumber,
  other: wrongType,
  swapType: fc.nat({ max: 5 }),
});

/**
 * Otherwise valid arguments with one value, at any depth, replaced by a hostile one: a hostile
 * string for a string, a hostile number for a number, and sometimes a value of another type.
 */
export function withOneHostileValue(valid: fc.Arbitrary<Record<string, unknown>>): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(valid, oneHostile).map(([args, hostile]) => {
    const places = placesIn(args);
    const place = places[hostile.where % Math.max(1, places.length)];
    if (place === undefined) return args;
    let current: unknown = args;
    for (const step of place) current = (current as Record<string | number, unknown>)[step];
    const replacement =
      hostile.swapType === 0 ? hostile.other : typeof current === 'string' ? hostile.string : typeof current === 'number' ? hostile.number : hostile.other;
    return replaceAt(args, place, replacement) as Record<string, unknown>;
  });
}
