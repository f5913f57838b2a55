import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { OP_NAMES } from '../../src/admin/ops.ts';
import type { Gateway } from '../../src/app.ts';
import { createGateway } from '../../src/app.ts';
import { createLoginLink } from '../../src/auth/login-links.ts';
import { findSession, startSession } from '../../src/auth/sessions.ts';
import { loadConfig } from '../../src/config.ts';
import { cliTrail, oauthTrail } from '../support/audit.ts';
import { ACME_ORG, seedOrg } from '../support/gateway.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';
import { PASSWORD, REDIRECT, pkcePair, setPassword } from '../oauth/support.ts';

/**
 * Property-based fuzzing of the HTTP surface that takes input from anyone: the OAuth endpoints,
 * the upload URLs and the admin endpoint. Every answer must be a deliberate one: no 5xx, no
 * "internal error", within a time bound, and /healthz still answers afterwards.
 *
 * KGW_FUZZ_RUNS raises the runs per property (`npm run fuzz`); KGW_FUZZ_SEED replays another
 * seed. A failure prints the seed and the counterexample's path, which fast-check replays.
 */
const RUNS = positive(process.env.KGW_FUZZ_RUNS, 100);
const SEED = positive(process.env.KGW_FUZZ_SEED, 20_251_105);
// A 10 MB body is parsed, hashed or refused well within this on a busy 2-core machine.
const ANSWER_WITHIN_MS = 15_000;
const ADMIN_SECRET = 'kgw-fuzz-admin-secret-0123456789abcdef';
const MB = 1024 * 1024;

function positive(value: string | undefined, fallback: number): number {
  const number = Number(value);
  return value !== undefined && value !== '' && Number.isSafeInteger(number) && number > 0 ? number : fallback;
}

/** Text cut to a readable length for failure messages: hostile inputs run to megabytes. */
function short(text: string, max = 300): string {
  return text.length > max ? `${JSON.stringify(text.slice(0, max))}… (${text.length} characters)` : JSON.stringify(text);
}

function shorten(value: unknown): unknown {
  if (typeof value === 'string') return value.length > 300 ? `${value.slice(0, 300)}… (${value.length} characters)` : value;
  if (Array.isArray(value)) return value.slice(0, 20).map(shorten);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value)
        .slice(0, 20)
        .map(([key, entry]) => [key, shorten(entry)]),
    );
  return value;
}

/** Runs a property; a failure names the seed and path that replay it, with the inputs cut short. */
async function fuzz<T extends unknown[]>(property: fc.IAsyncPropertyWithHooks<T>): Promise<void> {
  const details = await fc.check(property, { numRuns: RUNS, seed: SEED, endOnFailure: true });
  if (!details.failed) return;
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(
    `failed after ${details.numRuns} runs (replay: KGW_FUZZ_SEED=${details.seed}, path ${details.counterexamplePath})\ninput: ${JSON.stringify(shorten(details.counterexample)).slice(0, 4000)}\n${error.slice(0, 4000)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Hostile values

/** Pieces that have broken parsers, stores and pages elsewhere. */
const NASTY = [
  '\u0000',
  '\uD800',
  '\uDBFF',
  '\uDC00',
  '\uDFFF',
  '\u202E',
  '\u202D',
  '\u2066',
  '\u0085',
  '\u009F',
  '\u0080',
  '\u001B',
  '\u0007',
  '\u007F',
  '\r\n',
  '\n',
  '\r',
  '\t',
  '\u2028',
  '\u2029',
  '\uFEFF',
  '\uFFFE',
  '\uFFFF',
  '\u{1F600}',
  '\u{10FFFF}',
  'e\u0301',
  '\u00e9',
  '\u4e2d',
  '%00',
  '%',
  '%zz',
  '%2e%2e%2f',
  '%252e',
  '../',
  '..\\',
  '/..',
  '....//',
  '/etc/passwd',
  'C:\\Windows',
  '\\\\server\\share',
  '"',
  "'",
  '`',
  '<',
  '>',
  '<script>alert(1)</script>',
  '&amp;',
  '&',
  '=',
  '?',
  '#',
  ';',
  ',',
  ' ',
  '+',
  '*',
  '$',
  '{',
  '}',
  '[',
  ']',
  '${x}',
  '{{x}}',
  '%s%n',
  "' OR '1'='1",
  '--',
  '/*',
  '__proto__',
  'constructor',
  'prototype',
  'null',
  'undefined',
  'NaN',
  'true',
  '-1',
  '1e400',
  'https://evil.example',
  'https:evil.example',
  'javascript:alert(1)',
  'data:text/html,x',
  'file:///etc/passwd',
  'http://127.0.0.1:9/callback',
  'kgw_',
  'kgws_',
  'kgwc_',
  'kgwl_',
  'v1.',
  'Bearer ',
  'context.read',
  'context.write',
  'authorization_code',
  'refresh_token',
  'S256',
  'code',
];

/** The hazards this suite exists for, drawn often enough to reach every field of every route. */
const WORST = ['\u0000', '\uD800', '\uDC00', '\u202E', '\u0085', '\u009F', '\u001B', '\r\n', '%00', '../'];

const nastyUnit = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...WORST) },
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)) },
);

/** 1 to 10 MB of one repeated piece: bodies and fields far beyond every bound. */
const huge = fc
  .tuple(fc.integer({ min: 1, max: 10 }), fc.constantFrom('A', '\u0000', '\uD800', '\u202E', '\u0085', '../', '%00', 'é'))
  .map(([mb, piece]) => piece.repeat(Math.ceil((mb * MB) / piece.length)));

/**
 * Hostile text for one field. Megabytes are kept for whole bodies and single fields (`huge`):
 * in a form of ten fields they would make nearly every request a 413 that tests nothing else.
 */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.string({ unit: nastyUnit, maxLength: 24 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.constantFrom('', ' ', ...NASTY) },
  { weight: 1, arbitrary: fc.string({ unit: nastyUnit, minLength: 200, maxLength: 1000 }) },
);

const hostileNumber = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 2 ** 31, -(2 ** 31), 2 ** 53 + 2, -(2 ** 53) - 2, Number.MAX_VALUE, -Number.MAX_VALUE, Number.MIN_VALUE, 1e21, 0.5),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const { hostileValue } = fc.letrec<{ hostileValue: unknown }>((tie) => ({
  hostileValue: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('hostileValue'), { maxLength: 4 }),
    fc.dictionary(
      hostileString.filter((key) => key.length < 100),
      tie('hostileValue'),
      { maxKeys: 4 },
    ),
  ),
}));

/** JSON nested far deeper than any parser's recursion would like. */
const deepJson = fc
  .tuple(fc.integer({ min: 10, max: 200_000 }), fc.constantFrom('array', 'object'))
  .map(([depth, kind]) => (kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));

/** Raw JSON text that JSON.stringify would never write: huge numbers, duplicate and prototype keys. */
const oddJson = fc.constantFrom(
  '1e400',
  '-1e400',
  '123456789012345678901234567890123456789',
  '{"__proto__": {"polluted": true}}',
  '{"constructor": {"prototype": {"polluted": true}}}',
  '{"a": 1, "a": 2}',
  '"\\ud800"',
  '"\\u0000"',
  '[1,]',
  '{',
  '',
  'null',
  'true',
  '[]',
  '"x"',
  '\uFEFF{}',
  '{"op": "migrate"}garbage',
);

/**
 * A value for a URL, a form or a header as it arrives over HTTP: a client encodes it as UTF-8,
 * so an unpaired surrogate becomes U+FFFD on the way (only JSON bodies carry one through).
 */
const urlEncode = (text: string): string => encodeURIComponent(text.toWellFormed());

/**
 * Hostile text for URLs: Node's HTTP parser refuses more than 16 KiB of headers (431), so
 * longer URLs never reach a route; app.inject would let them through, unlike a real client.
 */
const urlValue = fc.oneof({ weight: 9, arbitrary: hostileString }, { weight: 1, arbitrary: fc.string({ unit: nastyUnit, minLength: 1000, maxLength: 2000 }) });

/** Header values HTTP lets through: visible ASCII, Latin-1 and spaces; no CR, LF or NUL. */
const headerValue = fc.oneof(
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength: 80,
  }),
  urlValue.map((text) => urlEncode(text)),
);

function form(fields: Record<string, string | undefined>): string {
  return Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([key, value]) => `${urlEncode(key)}=${urlEncode(value)}`)
    .join('&');
}

const pick = <T>(values: readonly T[]) => fc.constantFrom(...values);
/** The arbitrary's value one time in `oneIn`, otherwise undefined. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, oneIn = 3) => fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });

// ---------------------------------------------------------------------------------------------

for (const backend of storeBackends()) {
  describe(`HTTP surface under hostile input on ${backend.name}`, { timeout: 600_000 }, () => {
    let store: TestStore;
    let gateway: Gateway;
    let dataDir: string;
    let clientId: string;
    let cookie: string;
    let csrf: string;
    let loginLink: string;
    const challenge = pkcePair().challenge;
    // Each run comes from its own address, so the per-address limits do not hide the routes.
    let addresses = 0;
    const nextAddress = () => {
      addresses++;
      return `10.${(addresses >> 16) & 255}.${(addresses >> 8) & 255}.${addresses & 255}`;
    };

    /** Sends one request and checks the answer is a deliberate one, in time. */
    async function send(options: InjectOptions & { url: string }): Promise<LightMyRequestResponse> {
      const what = `${options.method ?? 'GET'} ${short(options.url)}`;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ANSWER_WITHIN_MS} ms`)), ANSWER_WITHIN_MS);
      });
      let response: LightMyRequestResponse;
      try {
        response = await Promise.race([gateway.app.inject(options), timeout]);
      } finally {
        clearTimeout(timer);
      }
      const body = response.body;
      const context = () =>
        `${what} with ${short(typeof options.payload === 'string' ? options.payload : JSON.stringify(options.payload ?? ''))} answered ${response.statusCode}: ${short(body)}`;
      assert.ok(response.statusCode < 500, context());
      assert.doesNotMatch(body, /internal error|internal server error/i, context());
      return response;
    }

    async function healthy(): Promise<void> {
      const response = await send({ method: 'GET', url: '/healthz' });
      assert.equal(response.statusCode, 200);
    }

    before(async () => {
      store = await backend.open({ migrated: true });
      // Alice administers Acme, so that the console's Admin pages are fuzzed as well.
      await seedOrg(store.db, ACME_ORG.replace('    name: Alice\n', '    name: Alice\n    admin: true\n'));
      await setPassword(store.db, 'acme', 'alice@acme.test', PASSWORD);
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'kgw-fuzz-'));
      // KGW_FUZZ_LOG=error shows the gateway's own account of a failure.
      const config = loadConfig({
        KGW_PORT: '7400',
        KGW_PUBLIC_URL: 'http://127.0.0.1:7400',
        KGW_LOG_LEVEL: process.env.KGW_FUZZ_LOG ?? 'silent',
        KGW_DATA_DIR: dataDir,
        // The anonymous endpoint is fuzzed too; per-address limits are lifted by nextAddress.
        KGW_ANONYMOUS_SEARCH_TENANTS: 'acme',
      });
      gateway = await createGateway(config, { db: store.db, adminSecret: ADMIN_SECRET });
      const registered = await send({
        method: 'POST',
        url: '/oauth/register',
        headers: { 'content-type': 'application/json' },
        payload: { client_name: 'Fuzz', redirect_uris: [REDIRECT] },
      });
      assert.equal(registered.statusCode, 201, registered.body);
      clientId = registered.json<{ client_id: string }>().client_id;
      const [alice] = await store.db.query<{ tenant_id: string; id: string }>("SELECT tenant_id, id FROM principals WHERE email = 'alice@acme.test'");
      const secret = await store.db.tx((tx) => startSession(tx, alice!.tenant_id, alice!.id, oauthTrail(store.db)));
      cookie = `kgw_session=${secret}`;
      csrf = (await findSession(store.db, secret))!.csrf;
      loginLink = new URL((await createLoginLink(store.db, config, 'acme', 'alice@acme.test', cliTrail(store.db))).url).pathname;
    });
    after(async () => {
      await gateway?.close();
      await store?.dispose();
      if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    });

    it('POST /oauth/register refuses hostile registrations with 4xx, and stores only normal redirect URIs', async () => {
      const known = [
        'redirect_uris',
        'client_name',
        'client_uri',
        'logo_uri',
        'tos_uri',
        'policy_uri',
        'software_id',
        'software_version',
        'contacts',
        'scope',
        'grant_types',
        'response_types',
        'token_endpoint_auth_method',
        'jwks_uri',
        '__proto__',
      ];
      const redirectUri = fc.oneof(
        pick([REDIRECT, 'https://app.example/cb', 'http://localhost:1/x']),
        hostileString,
        hostileString.map((text) => `https://app.example/${text}`),
        hostileString.map((text) => `http://127.0.0.1:9/${text}`),
      );
      const typedBody = fc.record(
        {
          redirect_uris: fc.oneof({ weight: 4, arbitrary: fc.array(redirectUri, { minLength: 1, maxLength: 3 }) }, { weight: 1, arbitrary: hostileValue }),
          client_name: fc.oneof(hostileString, hostileValue),
          client_uri: hostileString,
          software_id: hostileString,
          software_version: hostileValue,
          contacts: fc.oneof(fc.array(hostileString, { maxLength: 12 }), hostileValue),
          scope: fc.oneof(pick(['context.read', 'context.write brain:read']), hostileString, hostileValue),
          grant_types: fc.oneof(
            fc.array(pick(['authorization_code', 'refresh_token']), { maxLength: 3 }),
            fc.array(hostileString, { maxLength: 3 }),
            hostileValue,
          ),
          response_types: fc.oneof(fc.constant(['code']), hostileValue),
          token_endpoint_auth_method: fc.oneof(fc.constant('none'), hostileValue),
        },
        { requiredKeys: ['redirect_uris'] },
      );
      // Text a registration may well hold: bidi overrides, zero-width and astral characters,
      // backslashes and dot segments, but no control characters. Some of it is accepted.
      const oddText = fc.string({
        unit: fc.oneof(
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }),
          pick(['\u202E', '\u2066', '\u200B', '\uFEFF', '\u{1F600}', 'é', '%', '%2e', '../', '\\', '@', ':', '?', ' ']),
        ),
        maxLength: 30,
      });
      const plausibleBody = fc.record(
        {
          redirect_uris: fc.array(
            fc.oneof(
              pick(['https://app.example/', 'https://app.example:8443/cb?x=', 'http://127.0.0.1:9/', 'http://[::1]:1/', 'https://xn--e1afmkfd.example/']),
              oddText.map((text) => `https://app.example/${text}`),
            ),
            { minLength: 1, maxLength: 3 },
          ),
          client_name: oddText,
          client_uri: oddText,
          contacts: fc.array(oddText, { maxLength: 3 }),
          software_id: oddText,
          scope: pick(['context.read', 'context.write brain:read', 'documents.write']),
        },
        { requiredKeys: ['redirect_uris'] },
      );
      const body = fc.oneof(
        { weight: 3, arbitrary: plausibleBody.map((value) => JSON.stringify(value)) },
        { weight: 6, arbitrary: typedBody.map((value) => JSON.stringify(value)) },
        { weight: 2, arbitrary: fc.dictionary(pick(known), hostileValue, { maxKeys: 6 }).map((value) => JSON.stringify(value)) },
        { weight: 1, arbitrary: hostileValue.map((value) => JSON.stringify(value) ?? 'null') },
        { weight: 1, arbitrary: fc.oneof(deepJson, oddJson, hostileString) },
        {
          weight: 1,
          arbitrary: fc.oneof(
            huge,
            huge.map((text) => JSON.stringify({ redirect_uris: [REDIRECT], client_name: text })),
          ),
        },
      );
      const contentType = fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/json') },
        { weight: 1, arbitrary: pick(['application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'APPLICATION/JSON']) },
        { weight: 1, arbitrary: headerValue },
      );
      await fuzz(
        fc.asyncProperty(body, contentType, async (payload, type) => {
          const response = await send({ method: 'POST', url: '/oauth/register', headers: { 'content-type': type }, payload, remoteAddress: nextAddress() });
          if (response.statusCode === 201) {
            const client = response.json<{ redirect_uris: string[] }>();
            for (const uri of client.redirect_uris) assert.equal(new URL(uri).href, uri, `registered ${short(uri)} as sent, not in normal form`);
          } else if (response.statusCode !== 413 && response.statusCode !== 415) {
            assert.equal(response.statusCode, 400, response.body);
            assert.match(response.json<{ error: string }>().error, /^invalid_(?:client_metadata|redirect_uri)$/);
          }
          await healthy();
        }),
      );
    });

    /**
     * The parameters of an authorization request: half of them a valid request with hostile
     * extras (so the sign-in and consent code behind the checks is reached), half hostile all over.
     */
    const authorizeParams = (value: fc.Arbitrary<string> = urlValue): fc.Arbitrary<Record<string, string | undefined>> =>
      fc.oneof(
        fc
          .record(
            {
              state: value,
              scope: fc.oneof(pick(['context.read', 'context.write', 'brain:read']), value),
              resource: fc.oneof(pick(['http://127.0.0.1:7400/mcp', 'http://127.0.0.1:7400/atmina/mcp']), value),
            },
            { requiredKeys: [] },
          )
          .map((extra) => ({
            response_type: 'code',
            client_id: clientId,
            redirect_uri: REDIRECT,
            code_challenge: challenge,
            code_challenge_method: 'S256',
            ...extra,
          })),
        fc.record(
          {
            response_type: fc.oneof(fc.constant('code'), value),
            client_id: fc.oneof({ weight: 3, arbitrary: fc.constant(clientId) }, { weight: 1, arbitrary: value }),
            redirect_uri: fc.oneof({ weight: 3, arbitrary: fc.constant(REDIRECT) }, { weight: 1, arbitrary: value }),
            code_challenge: fc.oneof(fc.constant(challenge), value),
            code_challenge_method: fc.oneof(fc.constant('S256'), value),
            scope: fc.oneof(pick(['context.read', 'context.write', 'brain:read']), value),
            state: value,
            resource: fc.oneof(pick(['http://127.0.0.1:7400/mcp', 'http://127.0.0.1:7400/atmina/mcp']), value),
            'x-extra': value,
          },
          { requiredKeys: [] },
        ),
      );

    it('GET /oauth/authorize answers hostile queries with a page or a redirect, never an error', async () => {
      const query = fc.oneof(
        { weight: 4, arbitrary: authorizeParams().map((params) => form(params)) },
        { weight: 1, arbitrary: fc.tuple(authorizeParams(), authorizeParams()).map(([a, b]) => `${form(a)}&${form(b)}`) },
        { weight: 1, arbitrary: urlValue.map((text) => urlEncode(text)) },
      );
      await fuzz(
        fc.asyncProperty(query, fc.boolean(), sometimes(headerValue), async (search, signedIn, otherCookie) => {
          const headers: Record<string, string> = {};
          if (signedIn) headers.cookie = cookie;
          else if (otherCookie !== undefined) headers.cookie = `kgw_session=${otherCookie}`;
          const response = await send({ method: 'GET', url: `/oauth/authorize?${search}`, headers, remoteAddress: nextAddress() });
          if (response.statusCode === 303) assert.ok(response.headers.location?.startsWith(REDIRECT), `redirected to ${response.headers.location}`);
          await healthy();
        }),
      );
    });

    // Browser forms: mostly well-formed posts from the gateway's own page, so the checks behind
    // the Origin and Content-Type gates are reached; sometimes not.
    const formOrigin = fc.oneof(
      { weight: 8, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: pick(['http://127.0.0.1:7400', 'https://evil.example', 'null']) },
      { weight: 1, arbitrary: headerValue },
    );
    const formType = fc.oneof(
      { weight: 12, arbitrary: fc.constant('application/x-www-form-urlencoded') },
      { weight: 1, arbitrary: pick(['application/json', 'multipart/form-data; boundary=x', 'text/plain']) },
      { weight: 1, arbitrary: headerValue },
    );
    const formHeaders = (type: string, origin: string | undefined, sessionCookie: string | undefined) => ({
      'content-type': type,
      ...(origin === undefined ? {} : { origin }),
      ...(sessionCookie === undefined ? {} : { cookie: sessionCookie }),
    });

    it('POST /oauth/authorize answers hostile consent forms with a page or a redirect to the client', async () => {
      const consentForm = fc.record(
        {
          csrf: fc.oneof({ weight: 3, arbitrary: fc.constant(csrf) }, { weight: 1, arbitrary: hostileString }),
          decision: fc.oneof(pick(['approve', 'deny']), hostileString),
          agent: fc.oneof(pick(['new', '00000000-0000-0000-0000-000000000000']), hostileString),
          new_agent_name: fc.oneof(pick(['fuzz agent', 'release-bot']), hostileString),
        },
        { requiredKeys: [] },
      );
      const payload = fc.oneof(
        { weight: 6, arbitrary: fc.tuple(authorizeParams(hostileString), consentForm).map(([params, extra]) => form({ ...params, ...extra })) },
        { weight: 1, arbitrary: fc.oneof(hostileString, huge) },
      );
      await fuzz(
        fc.asyncProperty(
          payload,
          formOrigin,
          formType,
          fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
          async (body, origin, type, signedIn) => {
            const response = await send({
              method: 'POST',
              url: '/oauth/authorize',
              headers: formHeaders(type, origin, signedIn ? cookie : undefined),
              payload: body,
              remoteAddress: nextAddress(),
            });
            if (response.statusCode === 303) assert.ok(response.headers.location?.startsWith(`${REDIRECT}?`), `redirected to ${response.headers.location}`);
            await healthy();
          },
        ),
      );
    });

    it('the sign-in, sign-out and login-link forms answer hostile input with a page or a redirect', async () => {
      // Never the shared session: signing in or out here would end it for the consent property.
      const target = fc.oneof(
        {
          weight: 4,
          arbitrary: fc
            .record(
              {
                authorize: fc.oneof({ weight: 3, arbitrary: authorizeParams().map((params) => form(params)) }, { weight: 1, arbitrary: hostileString }),
                tenant: fc.oneof(fc.constant('acme'), hostileString),
                email: fc.oneof(fc.constant('alice@acme.test'), hostileString),
                password: fc.oneof(
                  fc.constant(PASSWORD),
                  hostileString,
                  huge.map((text) => text.slice(0, 1000)),
                ),
              },
              { requiredKeys: [] },
            )
            .map((fields) => ({ method: 'POST' as const, url: '/oauth/login', payload: form(fields) })),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(authorizeParams(), fc.record({ csrf: hostileString }, { requiredKeys: [] }))
            .map(([params, extra]) => ({ method: 'POST' as const, url: '/oauth/logout', payload: form({ authorize: form(params), ...extra }) })),
        },
        {
          weight: 2,
          arbitrary: fc
            .tuple(
              pick(['GET', 'POST'] as const),
              fc.oneof(
                fc.constant(loginLink),
                urlValue.map((text) => `/oauth/login/${urlEncode(text)}`),
              ),
            )
            .map(([method, url]) => ({ method, url, payload: '' })),
        },
      );
      await fuzz(
        fc.asyncProperty(target, formOrigin, formType, sometimes(headerValue), async (request, origin, type, otherCookie) => {
          const headers = formHeaders(type, origin, otherCookie === undefined ? undefined : `kgw_session=${otherCookie}`);
          const response = await send({
            method: request.method,
            url: request.url,
            headers,
            payload: request.method === 'GET' ? undefined : request.payload,
            remoteAddress: nextAddress(),
          });
          // Back to the authorization request, or its error to the registered client; nowhere else.
          const location = response.headers.location ?? '';
          if (response.statusCode === 303)
            assert.ok(location.startsWith('http://127.0.0.1:7400/oauth/authorize?') || location.startsWith(`${REDIRECT}?`), `redirected to ${location}`);
          await healthy();
        }),
      );
    });

    it('the console answers hostile queries, ids and forms with a page or a redirect, never an error', async () => {
      const id = fc.oneof({ weight: 2, arbitrary: fc.constant('00000000-0000-4000-8000-000000000000') }, { weight: 3, arbitrary: urlValue.map(urlEncode) });
      const source = fc.oneof({ weight: 3, arbitrary: pick(['alignbase', 'brain']) }, { weight: 1, arbitrary: urlValue.map(urlEncode) });
      const target = fc.oneof(
        {
          weight: 2,
          arbitrary: fc
            .record({ kind: hostileString, age: hostileString, page: hostileString }, { requiredKeys: [] })
            .map((query) => ({ method: 'GET' as const, url: `/console/inbox?${form(query)}`, payload: '' })),
        },
        { weight: 2, arbitrary: fc.tuple(source, id).map(([s, i]) => ({ method: 'GET' as const, url: `/console/inbox/${s}/${i}`, payload: '' })) },
        {
          weight: 4,
          arbitrary: fc
            .tuple(
              source,
              id,
              fc.record(
                {
                  csrf: fc.oneof({ weight: 3, arbitrary: fc.constant(csrf) }, { weight: 1, arbitrary: hostileString }),
                  decision: fc.oneof({ weight: 3, arbitrary: pick(['accept', 'reject']) }, { weight: 1, arbitrary: hostileString }),
                  note: fc.oneof(
                    hostileString,
                    huge.map((text) => text.slice(0, 3000)),
                  ),
                  publish: hostileString,
                  force: hostileString,
                  password: hostileString,
                },
                { requiredKeys: [] },
              ),
            )
            .map(([s, i, fields]) => ({ method: 'POST' as const, url: `/console/inbox/${s}/${i}`, payload: form(fields) })),
        },
        {
          weight: 1,
          arbitrary: fc
            .record({ tenant: hostileString, email: hostileString, password: hostileString }, { requiredKeys: [] })
            .map((fields) => ({ method: 'POST' as const, url: '/console/signin', payload: form(fields) })),
        },
        { weight: 1, arbitrary: urlValue.map((text) => ({ method: 'GET' as const, url: `/console/static/${urlEncode(text)}`, payload: '' })) },
        {
          weight: 2,
          arbitrary: fc
            .record(
              { actor: hostileString, action: hostileString, resource: hostileString, from: hostileString, to: hostileString, page: hostileString },
              { requiredKeys: [] },
            )
            .map((query) => ({ method: 'GET' as const, url: `/console/admin/audit?${form(query)}`, payload: '' })),
        },
        { weight: 1, arbitrary: id.map((i) => ({ method: 'GET' as const, url: `/console/admin/audit/${i}`, payload: '' })) },
        { weight: 1, arbitrary: hostileString.map((page) => ({ method: 'GET' as const, url: `/console/admin/tokens?${form({ page })}`, payload: '' })) },
        {
          weight: 2,
          arbitrary: fc
            .record(
              {
                csrf: fc.oneof({ weight: 3, arbitrary: fc.constant(csrf) }, { weight: 1, arbitrary: hostileString }),
                principal: fc.oneof({ weight: 2, arbitrary: pick(['release-bot', 'bob@acme.test']) }, { weight: 1, arbitrary: hostileString }),
                'scope:context.read': hostileString,
                'scope:nope': hostileString,
                lifetime: hostileString,
                label: hostileString,
              },
              { requiredKeys: [] },
            )
            .map((fields) => ({ method: 'POST' as const, url: '/console/admin/tokens', payload: form(fields) })),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(id, fc.oneof({ weight: 3, arbitrary: fc.constant(csrf) }, { weight: 1, arbitrary: hostileString }))
            .map(([i, value]) => ({ method: 'POST' as const, url: `/console/admin/tokens/${i}/revoke`, payload: form({ csrf: value }) })),
        },
        {
          weight: 1,
          arbitrary: fc
            .tuple(fc.oneof(pick(['people', 'agents', 'groups', 'teams', 'kbs', 'grants', 'routes']), id), hostileString)
            .map(([part, page]) => ({ method: 'GET' as const, url: `/console/admin/org/${part}?${form({ page })}`, payload: '' })),
        },
        { weight: 1, arbitrary: hostileString.map((agent) => ({ method: 'GET' as const, url: `/console/activity?${form({ agent })}`, payload: '' })) },
        {
          weight: 1,
          arbitrary: fc
            .record(
              { csrf: fc.oneof({ weight: 3, arbitrary: fc.constant(csrf) }, { weight: 1, arbitrary: hostileString }), enabled: hostileString },
              { requiredKeys: [] },
            )
            .map((fields) => ({ method: 'POST' as const, url: '/console/activity', payload: form(fields) })),
        },
      );
      await fuzz(
        fc.asyncProperty(target, formOrigin, formType, fc.boolean(), async (request, origin, type, signedIn) => {
          const response = await send({
            method: request.method,
            url: request.url,
            headers: formHeaders(type, origin, signedIn ? cookie : undefined),
            payload: request.method === 'GET' ? undefined : request.payload,
            remoteAddress: nextAddress(),
          });
          // Redirects stay on the console.
          if (response.statusCode === 303)
            assert.ok((response.headers.location ?? '').startsWith('http://127.0.0.1:7400/console/'), String(response.headers.location));
          await healthy();
        }),
      );
    });

    it('POST /oauth/token refuses hostile token requests with OAuth errors', async () => {
      const fields = fc.record(
        {
          grant_type: fc.oneof(
            { weight: 4, arbitrary: pick(['authorization_code', 'refresh_token']) },
            { weight: 1, arbitrary: pick(['client_credentials', 'password', '']) },
            { weight: 1, arbitrary: hostileString },
          ),
          client_id: fc.oneof({ weight: 3, arbitrary: fc.constant(clientId) }, { weight: 1, arbitrary: hostileString }),
          code: hostileString,
          code_verifier: fc.oneof(fc.constant('a'.repeat(43)), hostileString),
          redirect_uri: fc.oneof(fc.constant(REDIRECT), hostileString),
          refresh_token: fc.oneof(fc.constant(`kgwr_${'a'.repeat(43)}`), hostileString),
          scope: hostileString,
          resource: hostileString,
        },
        { requiredKeys: ['grant_type', 'client_id'] },
      );
      const payload = fc.oneof(
        { weight: 5, arbitrary: fields.map((f) => form(f)) },
        { weight: 1, arbitrary: fc.tuple(fields, fields).map(([a, b]) => `${form(a)}&${form(b)}`) },
        { weight: 1, arbitrary: fc.oneof(hostileString, deepJson, oddJson, huge) },
        { weight: 1, arbitrary: fc.tuple(fields, hostileString).map(([f, secret]) => form({ ...f, client_secret: secret })) },
      );
      const contentType = fc.oneof(
        { weight: 6, arbitrary: fc.constant('application/x-www-form-urlencoded') },
        { weight: 1, arbitrary: pick(['application/json', 'text/plain']) },
        { weight: 1, arbitrary: headerValue },
      );
      await fuzz(
        fc.asyncProperty(payload, contentType, sometimes(headerValue, 8), async (body, type, authorization) => {
          const headers: Record<string, string> = { 'content-type': type };
          if (authorization !== undefined) headers.authorization = authorization;
          const response = await send({ method: 'POST', url: '/oauth/token', headers, payload: body, remoteAddress: nextAddress() });
          if (response.statusCode !== 413 && response.statusCode !== 415) {
            assert.ok(response.statusCode === 400 || response.statusCode === 401, `${response.statusCode}: ${response.body}`);
            assert.equal(typeof response.json<{ error: unknown }>().error, 'string');
          }
          assert.equal(response.headers['cache-control'], 'no-store');
          await healthy();
        }),
      );
    });

    it('the metadata documents and other OAuth paths answer hostile paths and methods with 2xx, 3xx or 4xx', async () => {
      const bases = [
        '/.well-known/oauth-protected-resource',
        '/.well-known/oauth-authorization-server',
        '/.well-known/openid-configuration',
        '/oauth/jwks',
        '/oauth/static/oauth.css',
        '/oauth/register',
        '/oauth/token',
        '/oauth/login',
        '/oauth/',
        '/',
      ];
      const suffix = fc.oneof(
        fc.constant(''),
        pick([
          '/mcp',
          '/atmina/mcp',
          '/brain/mcp',
          '/../../etc/passwd',
          '/%2e%2e/%2e%2e/etc/passwd',
          '/..%2f..%2f',
          '//',
          '/.',
          '/%00',
          '%00',
          '?x=%00',
          '?a=1&a=2',
        ]),
        urlValue.map((text) => `/${urlEncode(text)}`),
        urlValue.map((text) => `?${urlEncode(text)}=${urlEncode(text)}`),
      );
      await fuzz(
        fc.asyncProperty(
          pick(bases),
          suffix,
          pick(['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'DELETE', 'PATCH'] as const),
          sometimes(headerValue),
          async (base, tail, method, accept) => {
            const headers: Record<string, string> = {};
            if (accept !== undefined) headers.accept = accept;
            await send({ method, url: `${base}${tail}`, headers, remoteAddress: nextAddress() });
            await healthy();
          },
        ),
      );
    });

    it('POST /atmina/public/<tenant>/mcp answers hostile tenants, headers and JSON-RPC bodies with 2xx or 4xx', async () => {
      const tenant = fc.oneof(pick(['acme', 'globex', 'ACME', '']), urlValue.map(urlEncode));
      const args = fc.oneof(
        fc.record({ query: hostileString }),
        fc.record({ query: hostileValue, max_files: hostileValue, cursor: hostileValue, scope: hostileValue, kinds: hostileValue }, { requiredKeys: [] }),
        hostileValue,
      );
      const body = fc.oneof(
        {
          weight: 6,
          arbitrary: fc
            .tuple(pick(['search', 'read_file', 'whoami', '']), args)
            .map(([name, a]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: a } })),
        },
        {
          weight: 1,
          arbitrary: pick(['tools/list', 'initialize', 'ping', 'resources/list']).map((method) =>
            JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: {} }),
          ),
        },
        { weight: 1, arbitrary: oddJson },
        { weight: 1, arbitrary: deepJson },
      );
      await fuzz(
        fc.asyncProperty(
          tenant,
          body,
          sometimes(headerValue),
          sometimes(pick(['Bearer kgw_not-a-token', 'Basic YTpi', ''])),
          pick(['POST', 'POST', 'POST', 'GET', 'DELETE'] as const),
          async (segment, payload, accept, authorization, method) => {
            const headers: Record<string, string> = {
              'content-type': 'application/json',
              accept: accept ?? 'application/json, text/event-stream',
            };
            if (authorization !== undefined) headers.authorization = authorization;
            await send({ method, url: `/atmina/public/${segment}/mcp`, headers, payload, remoteAddress: nextAddress() });
          },
        ),
      );
      await healthy();
      // The endpoint was open all along: a plain search of the listed tenant is answered.
      const plain = await send({
        method: 'POST',
        url: '/atmina/public/acme/mcp',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: { query: 'retention' } } },
        remoteAddress: nextAddress(),
      });
      assert.equal(plain.statusCode, 200, plain.body);
      assert.equal(plain.json<{ result: { isError?: boolean } }>().result.isError, undefined, plain.body);
    });

    it('PUT /uploads/<ticket> refuses hostile tickets, headers and bodies with 4xx', async () => {
      const presign = async (bytes: Buffer) =>
        gateway.services.blob.presignPut({
          size: bytes.length,
          sha256: createHash('sha256').update(bytes).digest('hex'),
          contentType: 'application/octet-stream',
          expiresInSeconds: 300,
        });
      const forged = fc
        .tuple(hostileString, hostileString)
        .map(
          ([payload, mac]) =>
            `v1.${Buffer.from(payload).toString('base64url').slice(0, 3000)}.${Buffer.from(mac).toString('base64url').padEnd(43, 'A').slice(0, 43)}`,
        );
      const ticket = fc.oneof(
        { weight: 6, arbitrary: fc.constant('valid') },
        { weight: 2, arbitrary: forged },
        { weight: 2, arbitrary: urlValue.map((text) => urlEncode(text)) },
        {
          weight: 1,
          arbitrary: pick([
            '',
            '../../upload-secret',
            '..%2f..%2fupload-secret',
            '%2e%2e/%2e%2e/pgdata',
            'v1..',
            `v1.${'A'.repeat(2049)}.${'A'.repeat(43)}`,
            'v1.e30.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
          ]),
        },
      );
      const declared = fc.oneof(
        fc.constant(Buffer.from('hello, fuzz')),
        fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
      );
      const body = fc.oneof(
        { weight: 4, arbitrary: fc.constant('declared') },
        { weight: 2, arbitrary: hostileString },
        { weight: 1, arbitrary: huge },
        { weight: 1, arbitrary: fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)) },
      );
      const header = (arbitrary: fc.Arbitrary<string>) =>
        fc.oneof({ weight: 6, arbitrary: fc.constant('declared') }, { weight: 1, arbitrary }, { weight: 1, arbitrary: fc.constant(undefined) });
      await fuzz(
        fc.asyncProperty(ticket, declared, body, header(headerValue), header(headerValue), async (which, bytes, sent, type, checksum) => {
          const presigned = await presign(bytes);
          const path = which === 'valid' ? new URL(presigned.url).pathname : `/uploads/${which}`;
          const payload = sent === 'declared' ? bytes : sent;
          const headers: Record<string, string> = {};
          if (type !== undefined) headers['content-type'] = type === 'declared' ? presigned.headers['content-type']! : type;
          if (checksum !== undefined) headers['x-amz-checksum-sha256'] = checksum === 'declared' ? presigned.headers['x-amz-checksum-sha256']! : checksum;
          const response = await send({ method: 'PUT', url: path, headers, payload, remoteAddress: nextAddress() });
          if (response.statusCode === 200) assert.equal(response.headers.etag, `"${presigned.sha256}"`);
          await healthy();
        }),
      );
    });

    it('POST /admin/rpc refuses wrong secrets and hostile operations and arguments with 4xx', async () => {
      // The arguments each operation takes (src/admin/ops.ts; "?" marks an optional one), so most
      // calls get past the schema to the operation itself.
      const OP_KEYS: Readonly<Record<string, readonly string[]>> = {
        apply: ['source', 'fileName?', 'dryRun?', 'env?', 'files?'],
        'token.create': ['tenant', 'principal', 'scopes', 'ttl?', 'label?'],
        'token.list': ['tenant?', 'all?'],
        'token.revoke': ['id'],
        'oauth.login-link': ['tenant', 'email'],
        'projections.rebuild': ['names?'],
        'review.list': ['tenant'],
        'review.show': ['tenant', 'id'],
        'review.accept': ['tenant', 'id', 'as?', 'publish?', 'force?'],
        'review.reject': ['tenant', 'id', 'as?', 'note?'],
        'inbox.list': ['tenant', 'agent', 'all?'],
        'activity.list': ['tenant', 'agent?', 'limit?'],
        'activity.switch': ['tenant', 'enabled'],
        'kb.list': ['tenant?', 'archived?'],
        'kb.show': ['tenant?', 'kb'],
        'kb.restore': ['tenant?', 'kb'],
        'files.get': ['tenant?', 'kb', 'path'],
      };
      const keysOf = (op: string) => (OP_KEYS[op] ?? []).map((key) => key.replace('?', ''));
      const text = (...plausible: string[]) => fc.oneof({ weight: 3, arbitrary: hostileString }, { weight: 1, arbitrary: pick(plausible) });
      const files = fc.dictionary(
        hostileString,
        fc.oneof(
          fc.record({ file: hostileString }),
          fc.record({
            folder: fc.array(
              fc.record({ path: fc.oneof(pick(['../../etc/passwd', '/etc/passwd', 'a/../../b', 'SKILL.md']), hostileString), data_base64: hostileString }),
              { maxLength: 3 },
            ),
          }),
          fc.record({ errors: fc.array(hostileString, { maxLength: 2 }) }),
        ),
        { maxKeys: 3 },
      );
      // Org files that parse, with hostile values where names, emails and titles go.
      const orgSource = fc
        .tuple(hostileString, hostileString, hostileString, pick(['fuzz', 'acme']))
        .map(
          ([name, email, agent, tenant]) =>
            `tenant: ${tenant}\nname: ${JSON.stringify(name)}\npeople:\n  - email: ${JSON.stringify(email)}\n    name: ${JSON.stringify(name)}\nagents:\n  - name: ${JSON.stringify(agent)}\n    owner: ${JSON.stringify(email)}\n`,
        );
      const VALUES: Readonly<Record<string, fc.Arbitrary<unknown>>> = {
        source: fc.oneof(orgSource, hostileString),
        fileName: text('org.yaml', '../../etc/passwd'),
        dryRun: fc.boolean(),
        env: fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
        files,
        tenant: text('acme', 'globex'),
        principal: text('alice@acme.test', 'release-bot'),
        scopes: text('context.read', 'brain:read context.write'),
        ttl: text('1h', '90d', '0s', '-1h', '999999999999d'),
        label: hostileString,
        id: text('00000000-0000-0000-0000-000000000000'),
        email: text('alice@acme.test'),
        as: text('alice@acme.test'),
        note: hostileString,
        agent: text('release-bot'),
        publish: fc.boolean(),
        force: fc.boolean(),
        all: fc.boolean(),
        enabled: fc.boolean(),
        limit: hostileNumber,
        names: fc.array(text('search', 'graph'), { maxLength: 3 }),
        archived: fc.boolean(),
        kb: text('handbook', '00000000-0000-0000-0000-000000000000'),
        path: text('a.md', '../../etc/passwd'),
      };
      const call = pick(OP_NAMES).chain((op) =>
        fc.record({
          op: fc.constant(op),
          args: fc.oneof(
            {
              weight: 6,
              arbitrary: fc.record(Object.fromEntries(keysOf(op).map((key) => [key, VALUES[key] ?? hostileValue])), {
                requiredKeys: (OP_KEYS[op] ?? []).filter((key) => !key.endsWith('?')),
              }),
            },
            { weight: 1, arbitrary: hostileValue },
          ),
        }),
      );
      const body = fc.oneof(
        { weight: 8, arbitrary: call.map((value) => JSON.stringify(value)) },
        { weight: 1, arbitrary: fc.record({ op: hostileValue, args: hostileValue }).map((value) => JSON.stringify(value)) },
        {
          weight: 1,
          arbitrary: fc.oneof(
            deepJson,
            oddJson,
            hostileString,
            deepJson.map((deep) => `{"op": "apply", "args": ${deep}}`),
          ),
        },
        { weight: 1, arbitrary: fc.tuple(pick(Object.keys(OP_KEYS)), huge).map(([op, big]) => JSON.stringify({ op, args: { [keysOf(op)[0]!]: big } })) },
      );
      const secret = fc.oneof(
        { weight: 8, arbitrary: fc.constant(`Bearer ${ADMIN_SECRET}`) },
        { weight: 1, arbitrary: headerValue.map((value) => `Bearer ${value}`) },
        { weight: 1, arbitrary: headerValue },
        {
          weight: 1,
          arbitrary: pick([
            `Bearer ${ADMIN_SECRET} `,
            `bearer ${ADMIN_SECRET}`,
            `Bearer ${ADMIN_SECRET.slice(1)}`,
            `Bearer ${ADMIN_SECRET}x`,
            `Basic ${Buffer.from(`x:${ADMIN_SECRET}`).toString('base64')}`,
            'Bearer ',
          ]),
        },
        { weight: 1, arbitrary: fc.constant(undefined) },
      );
      const fromLoopback = fc.oneof({ weight: 8, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
      const contentType = fc.oneof(
        { weight: 12, arbitrary: fc.constant('application/json') },
        { weight: 1, arbitrary: pick(['text/plain', 'application/x-www-form-urlencoded']) },
        { weight: 1, arbitrary: headerValue },
      );
      await fuzz(
        fc.asyncProperty(body, secret, fromLoopback, contentType, async (payload, authorization, loopback, type) => {
          const headers: Record<string, string> = { 'content-type': type };
          if (authorization !== undefined) headers.authorization = authorization;
          const response = await send({ method: 'POST', url: '/admin/rpc', headers, payload, remoteAddress: loopback ? '127.0.0.1' : nextAddress() });
          // Without the secret from loopback, nothing runs: the body may be refused first, never accepted.
          if (!loopback || authorization !== `Bearer ${ADMIN_SECRET}`)
            assert.ok([400, 401, 413, 415].includes(response.statusCode), `${response.statusCode}: ${response.body}`);
          await healthy();
        }),
      );
    });
  });
}
