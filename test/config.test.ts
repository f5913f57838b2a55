import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Config } from '../src/config.ts';
import { ConfigError, defaultDataDir, loadConfig } from '../src/config.ts';

const CWD = path.resolve('/srv/kgw');

describe('loadConfig', () => {
  it('has embedded defaults with an empty environment', () => {
    const config = loadConfig({}, CWD);
    assert.deepEqual({ ...config }, {
      host: '127.0.0.1',
      port: 8787,
      publicUrl: 'http://127.0.0.1:8787',
      dataDir: path.join(CWD, '.kgw'),
      allowedOrigins: [],
      trustedProxies: [],
      logLevel: 'info',
      databaseUrl: undefined,
      s3: undefined,
      meili: undefined,
      neo4j: undefined,
      rateLimits: { kbWritesPerMinute: 600, uploadPutsPerMinute: 120 },
      uploadUrlSeconds: 900,
      anonymousSearch: { tenants: [], perAddressPerMinute: 30, perTenantPerMinute: 600 },
      embeddings: undefined,
      mail: { imapUrl: undefined },
      metrics: { enabled: true, token: undefined },
      traces: undefined,
      memory: 'throughput',
    } satisfies Config);
  });

  it('reads only the environment it is given', () => {
    const saved = process.env.KGW_PORT;
    process.env.KGW_PORT = 'not-a-port';
    try {
      assert.equal(loadConfig({}, CWD).port, 8787);
      assert.throws(() => loadConfig(undefined, CWD), { name: 'ConfigError', message: 'KGW_PORT: must be a whole number from 0 to 65535, got "not-a-port"' });
    } finally {
      if (saved === undefined) delete process.env.KGW_PORT;
      else process.env.KGW_PORT = saved;
    }
  });

  it('parses every variable', () => {
    const config = loadConfig(
      {
        KGW_HOST: '0.0.0.0',
        KGW_PORT: '9000',
        KGW_PUBLIC_URL: 'https://gw.acme.test/kgw/',
        KGW_DATA_DIR: 'var/data',
        KGW_ALLOWED_ORIGINS: 'https://console.acme.test, https://app.acme.test:8443/ http://localhost:3000',
        KGW_LOG_LEVEL: 'debug',
        KGW_TRUSTED_PROXIES: 'loopback, 10.0.0.0/8 2001:db8::1 fd00::/8',
        DATABASE_URL: 'postgresql://kgw:secret@db.acme.test:5432/kgw?sslmode=require',
        S3_ENDPOINT: 'http://minio:9000',
        S3_BUCKET: 'kgw-files',
        S3_REGION: 'eu-central-1',
        S3_ACCESS_KEY_ID: 'AKIA',
        S3_SECRET_ACCESS_KEY: 's3cret',
        MEILI_URL: 'http://meili:7700',
        MEILI_API_KEY: 'mk',
        NEO4J_URL: 'neo4j+s://graph.acme.test:7687',
        NEO4J_USER: 'kgw',
        NEO4J_PASSWORD: 'pw',
        KGW_KB_WRITES_PER_MINUTE: '30',
        KGW_UPLOAD_PUTS_PER_MINUTE: '10',
        KGW_UPLOAD_URL_TTL_SECONDS: '3600',
        KGW_ANONYMOUS_SEARCH_TENANTS: 'acme, docs acme',
        KGW_ANONYMOUS_SEARCHES_PER_MINUTE: '5',
        KGW_ANONYMOUS_SEARCHES_PER_TENANT_PER_MINUTE: '50',
        KGW_EMBEDDINGS_URL: 'https://embed.acme.test/v1/',
        KGW_EMBEDDINGS_MODEL: 'text-embedding-3-small',
        KGW_EMBEDDINGS_DIMENSIONS: '512',
        KGW_EMBEDDINGS_KEY: 'ek',
        KGW_EMBEDDINGS_TIMEOUT_MS: '2500',
        KGW_EMBEDDINGS_BATCH: '16',
        KGW_EMBEDDINGS_MAX_CHARS: '4000',
        KGW_MAIL_IMAP_URL: 'imaps://mail.acme.test',
        KGW_METRICS: 'off',
        KGW_METRICS_TOKEN: 'scrape-token-0123456789',
        KGW_TRACES_URL: 'http://otel.acme.test:4318/v1/traces',
        KGW_TRACES_SAMPLE: '0.25',
        KGW_MEMORY: 'lean',
      },
      CWD,
    );
    assert.deepEqual({ ...config }, {
      host: '0.0.0.0',
      port: 9000,
      publicUrl: 'https://gw.acme.test/kgw',
      dataDir: path.join(CWD, 'var', 'data'),
      allowedOrigins: ['https://console.acme.test', 'https://app.acme.test:8443', 'http://localhost:3000'],
      trustedProxies: ['loopback', '10.0.0.0/8', '2001:db8::1', 'fd00::/8'],
      logLevel: 'debug',
      databaseUrl: 'postgresql://kgw:secret@db.acme.test:5432/kgw?sslmode=require',
      s3: { endpoint: 'http://minio:9000', bucket: 'kgw-files', region: 'eu-central-1', accessKeyId: 'AKIA', secretAccessKey: 's3cret' },
      meili: { url: 'http://meili:7700', apiKey: 'mk', index: 'kgw_documents' },
      neo4j: { url: 'neo4j+s://graph.acme.test:7687', user: 'kgw', password: 'pw' },
      rateLimits: { kbWritesPerMinute: 30, uploadPutsPerMinute: 10 },
      uploadUrlSeconds: 3600,
      anonymousSearch: { tenants: ['acme', 'docs'], perAddressPerMinute: 5, perTenantPerMinute: 50 },
      embeddings: {
        url: 'https://embed.acme.test/v1',
        model: 'text-embedding-3-small',
        dimensions: 512,
        apiKey: 'ek',
        timeoutMs: 2500,
        batch: 16,
        maxChars: 4000,
      },
      mail: { imapUrl: 'imaps://mail.acme.test' },
      metrics: { enabled: false, token: 'scrape-token-0123456789' },
      traces: { url: 'http://otel.acme.test:4318/v1/traces', sampleRatio: 0.25 },
      memory: 'lean',
    } satisfies Config);
  });

  it('fills in what a backend leaves out', () => {
    const config = loadConfig({ S3_BUCKET: 'kgw', MEILI_URL: 'https://search.acme.test', NEO4J_URL: 'bolt://graph:7687', NEO4J_PASSWORD: 'pw' }, CWD);
    assert.deepEqual(config.s3, { endpoint: undefined, bucket: 'kgw', region: 'us-east-1', accessKeyId: undefined, secretAccessKey: undefined });
    assert.deepEqual(config.meili, { url: 'https://search.acme.test', apiKey: undefined, index: 'kgw_documents' });
    assert.deepEqual(config.neo4j, { url: 'bolt://graph:7687', user: 'neo4j', password: 'pw' });
  });

  it('fills in the embeddings bounds an endpoint leaves out', () => {
    const config = loadConfig(
      { KGW_EMBEDDINGS_URL: 'http://127.0.0.1:11434/v1', KGW_EMBEDDINGS_MODEL: 'nomic-embed-text', KGW_EMBEDDINGS_DIMENSIONS: '768' },
      CWD,
    );
    assert.deepEqual(config.embeddings, {
      url: 'http://127.0.0.1:11434/v1',
      model: 'nomic-embed-text',
      dimensions: 768,
      apiKey: undefined,
      timeoutMs: 10_000,
      batch: 32,
      maxChars: 8000,
    });
  });

  it('takes embeddings bounds up to their maxima', () => {
    const config = loadConfig(
      {
        KGW_EMBEDDINGS_URL: 'http://e.test',
        KGW_EMBEDDINGS_MODEL: 'm',
        KGW_EMBEDDINGS_DIMENSIONS: '4096',
        KGW_EMBEDDINGS_TIMEOUT_MS: '120000',
        KGW_EMBEDDINGS_BATCH: '256',
        KGW_EMBEDDINGS_MAX_CHARS: '100000',
      },
      CWD,
    );
    assert.deepEqual(
      {
        dimensions: config.embeddings?.dimensions,
        timeoutMs: config.embeddings?.timeoutMs,
        batch: config.embeddings?.batch,
        maxChars: config.embeddings?.maxChars,
      },
      { dimensions: 4096, timeoutMs: 120_000, batch: 256, maxChars: 100_000 },
    );
  });

  it('derives the public URL from the port, and keeps a base path without trailing slashes', () => {
    assert.equal(loadConfig({ KGW_PORT: '9999' }, CWD).publicUrl, 'http://127.0.0.1:9999');
    assert.equal(loadConfig({ KGW_PUBLIC_URL: 'https://gw.acme.test/' }, CWD).publicUrl, 'https://gw.acme.test');
    assert.equal(loadConfig({ KGW_PUBLIC_URL: 'https://gw.acme.test//base//' }, CWD).publicUrl, 'https://gw.acme.test//base');
    assert.equal(loadConfig({ KGW_PUBLIC_URL: 'HTTPS://GW.Acme.test:443/Base' }, CWD).publicUrl, 'https://gw.acme.test/Base');
    assert.equal(loadConfig({ KGW_PUBLIC_URL: 'http://gw.acme.test:8080' }, CWD).publicUrl, 'http://gw.acme.test:8080');
  });

  it('finds the data folder from a subfolder: the nearest .kgw upward, else the project root, else here', () => {
    const existing =
      (...files: string[]) =>
      (file: string) =>
        files.includes(file);
    const at = (...parts: string[]) => path.join(path.resolve('/work/app'), ...parts);
    // A .kgw above wins over a package.json nearer by.
    assert.equal(defaultDataDir(at('docs', 'guides'), existing(at('.kgw'), at('docs', 'package.json'))), at('.kgw'));
    assert.equal(defaultDataDir(at('docs'), existing(at('docs', '.kgw'), at('.kgw'))), at('docs', '.kgw'));
    // No .kgw anywhere: the nearest project root, where npm start would make it.
    assert.equal(defaultDataDir(at('src', 'cli'), existing(at('package.json'), path.resolve('/work', 'package.json'))), at('.kgw'));
    // Neither: the working directory, as before.
    assert.equal(defaultDataDir(at('src'), existing()), at('src', '.kgw'));
  });

  it('resolves the data folder against the working directory unless absolute', () => {
    assert.equal(loadConfig({ KGW_DATA_DIR: 'data' }, CWD).dataDir, path.join(CWD, 'data'));
    assert.equal(loadConfig({ KGW_DATA_DIR: '../elsewhere' }, CWD).dataDir, path.resolve(CWD, '../elsewhere'));
    assert.equal(loadConfig({ KGW_DATA_DIR: '/var/lib/kgw' }, CWD).dataDir, path.resolve('/var/lib/kgw'));
    assert.equal(loadConfig({}, '/other').dataDir, path.resolve('/other', '.kgw'));
  });

  it('accepts ports 0 to 65535 and hosts as names or addresses', () => {
    assert.equal(loadConfig({ KGW_PORT: '0' }, CWD).port, 0);
    assert.equal(loadConfig({ KGW_PORT: '65535' }, CWD).port, 65535);
    assert.equal(loadConfig({ KGW_HOST: '[::1]' }, CWD).host, '::1');
    assert.equal(loadConfig({ KGW_HOST: '::' }, CWD).host, '::');
    assert.equal(loadConfig({ KGW_HOST: 'gateway.internal' }, CWD).host, 'gateway.internal');
  });

  it('takes upload URL lifetimes from 1 s to a day', () => {
    assert.deepStrictEqual(
      {
        shortest: loadConfig({ KGW_UPLOAD_URL_TTL_SECONDS: '1' }, CWD).uploadUrlSeconds,
        longest: loadConfig({ KGW_UPLOAD_URL_TTL_SECONDS: '86400' }, CWD).uploadUrlSeconds,
      },
      { shortest: 1, longest: 86400 },
    );
  });

  it('refuses an anonymous search tenant that is not a slug', () => {
    assert.throws(
      () => loadConfig({ KGW_ANONYMOUS_SEARCH_TENANTS: 'acme,Not A Slug' }, CWD),
      /^ConfigError: KGW_ANONYMOUS_SEARCH_TENANTS: must list tenant slugs .*got "Not"/,
    );
  });

  it('takes every log level', () => {
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) assert.equal(loadConfig({ KGW_LOG_LEVEL: level }, CWD).logLevel, level);
  });

  it('trims values and treats empty ones as unset', () => {
    const config = loadConfig(
      { KGW_PORT: ' 9001 ', KGW_HOST: '', KGW_LOG_LEVEL: '  ', DATABASE_URL: ' ', S3_BUCKET: '', MEILI_API_KEY: '', KGW_ALLOWED_ORIGINS: ' , ' },
      CWD,
    );
    assert.equal(config.port, 9001);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.logLevel, 'info');
    assert.equal(config.databaseUrl, undefined);
    assert.equal(config.s3, undefined);
    assert.equal(config.meili, undefined);
    assert.deepEqual(config.allowedOrigins, []);
  });

  it('returns a frozen object, its parts frozen too', () => {
    const config = loadConfig(
      { KGW_ALLOWED_ORIGINS: 'https://a.test', S3_BUCKET: 'kgw', MEILI_URL: 'http://m:7700', NEO4J_URL: 'bolt://g:7687', NEO4J_PASSWORD: 'pw' },
      CWD,
    );
    for (const part of [config, config.allowedOrigins, config.s3, config.meili, config.neo4j]) assert.ok(Object.isFrozen(part));
    assert.ok(Object.isFrozen(loadConfig({ KGW_EMBEDDINGS_URL: 'http://e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '8' }, CWD).embeddings));
    assert.throws(() => {
      (config as { port: number }).port = 1;
    }, TypeError);
    assert.throws(() => {
      (config.allowedOrigins as string[]).push('https://evil.test');
    }, TypeError);
    assert.ok(Object.isFrozen(loadConfig({}, CWD)));
  });

  const BAD: [Record<string, string>, string, string][] = [
    [{ KGW_HOST: 'bad host!' }, 'KGW_HOST', '"bad host!" is not a host name or address'],
    [{ KGW_PORT: 'abc' }, 'KGW_PORT', 'must be a whole number from 0 to 65535, got "abc"'],
    [{ KGW_PORT: '-1' }, 'KGW_PORT', 'must be a whole number from 0 to 65535, got "-1"'],
    [{ KGW_PORT: '1.5' }, 'KGW_PORT', 'must be a whole number from 0 to 65535, got "1.5"'],
    [{ KGW_PORT: '65536' }, 'KGW_PORT', 'must be a whole number from 0 to 65535, got "65536"'],
    [{ KGW_PORT: '123456' }, 'KGW_PORT', 'must be a whole number from 0 to 65535, got "123456"'],
    [{ KGW_PUBLIC_URL: 'gw.acme.test' }, 'KGW_PUBLIC_URL', 'must be an absolute URL with a valid host and port, got "gw.acme.test"'],
    [{ KGW_PUBLIC_URL: 'ftp://x' }, 'KGW_PUBLIC_URL', 'must use http or https, got "ftp"'],
    [{ KGW_PUBLIC_URL: 'https://gw.acme.test/?tenant=acme' }, 'KGW_PUBLIC_URL', 'must not have a query or fragment'],
    [{ KGW_PUBLIC_URL: 'https://gw.acme.test/#top' }, 'KGW_PUBLIC_URL', 'must not have a query or fragment'],
    [{ KGW_ALLOWED_ORIGINS: 'not-an-origin' }, 'KGW_ALLOWED_ORIGINS', '"not-an-origin" is not an origin such as https://app.example.com'],
    [
      { KGW_ALLOWED_ORIGINS: 'https://a.test https://b.test/app' },
      'KGW_ALLOWED_ORIGINS',
      '"https://b.test/app" is not an origin such as https://app.example.com',
    ],
    [{ KGW_ALLOWED_ORIGINS: 'file:///tmp' }, 'KGW_ALLOWED_ORIGINS', '"file:///tmp" is not an origin such as https://app.example.com'],
    [{ KGW_UPLOAD_URL_TTL_SECONDS: '0' }, 'KGW_UPLOAD_URL_TTL_SECONDS', 'must be a whole number from 1 to 86400, got "0"'],
    [{ KGW_UPLOAD_URL_TTL_SECONDS: '86401' }, 'KGW_UPLOAD_URL_TTL_SECONDS', 'must be a whole number from 1 to 86400, got "86401"'],
    [{ KGW_UPLOAD_URL_TTL_SECONDS: '15m' }, 'KGW_UPLOAD_URL_TTL_SECONDS', 'must be a whole number from 1 to 86400, got "15m"'],
    [{ KGW_LOG_LEVEL: 'loud' }, 'KGW_LOG_LEVEL', 'must be one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL', 'must use postgres or postgresql, got "mysql"'],
    [{ DATABASE_URL: 'kgw@localhost/kgw' }, 'DATABASE_URL', 'must be an absolute URL with a valid host and port, got "kgw@localhost/kgw"'],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, 'S3_BUCKET', 'is required when any S3_* variable is set'],
    [{ S3_REGION: 'eu-central-1' }, 'S3_BUCKET', 'is required when any S3_* variable is set'],
    [{ S3_ENDPOINT: 's3://bucket', S3_BUCKET: 'kgw' }, 'S3_ENDPOINT', 'must use http or https, got "s3"'],
    [{ S3_BUCKET: 'Kgw_Files' }, 'S3_BUCKET', '"Kgw_Files" is not a valid bucket name (3-63 lower-case letters, digits, dots, hyphens)'],
    [{ S3_BUCKET: 'ab' }, 'S3_BUCKET', '"ab" is not a valid bucket name (3-63 lower-case letters, digits, dots, hyphens)'],
    [{ S3_BUCKET: 'kgw', S3_ACCESS_KEY_ID: 'AKIA' }, 'S3_SECRET_ACCESS_KEY', 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together'],
    [{ S3_BUCKET: 'kgw', S3_SECRET_ACCESS_KEY: 's' }, 'S3_ACCESS_KEY_ID', 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together'],
    [{ MEILI_API_KEY: 'mk' }, 'MEILI_URL', 'is required when MEILI_API_KEY is set'],
    [{ MEILI_URL: 'meili:7700' }, 'MEILI_URL', 'must use http or https, got "meili"'],
    [{ NEO4J_URL: 'bolt://127.0.0.1:7687' }, 'NEO4J_PASSWORD', 'is required when NEO4J_URL is set'],
    [{ NEO4J_URL: 'http://graph:7474', NEO4J_PASSWORD: 'pw' }, 'NEO4J_URL', 'must use bolt or bolt+s or bolt+ssc or neo4j or neo4j+s or neo4j+ssc, got "http"'],
    [{ NEO4J_USER: 'neo4j' }, 'NEO4J_URL', 'is required when NEO4J_USER or NEO4J_PASSWORD is set'],
    [{ NEO4J_PASSWORD: 'pw' }, 'NEO4J_URL', 'is required when NEO4J_USER or NEO4J_PASSWORD is set'],
    [{ KGW_EMBEDDINGS_MODEL: 'm' }, 'KGW_EMBEDDINGS_URL', 'is required when KGW_EMBEDDINGS_MODEL is set'],
    [{ KGW_EMBEDDINGS_KEY: 'k' }, 'KGW_EMBEDDINGS_URL', 'is required when KGW_EMBEDDINGS_KEY is set'],
    [
      { KGW_EMBEDDINGS_URL: 'ftp://e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '8' },
      'KGW_EMBEDDINGS_URL',
      'must use http or https, got "ftp"',
    ],
    [
      { KGW_EMBEDDINGS_URL: 'https://user:pw@e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '8' },
      'KGW_EMBEDDINGS_URL',
      'must not contain a user name or password (use KGW_EMBEDDINGS_KEY)',
    ],
    [
      { KGW_EMBEDDINGS_URL: 'https://e.test/v1?x=1', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '8' },
      'KGW_EMBEDDINGS_URL',
      'must not have a query or fragment',
    ],
    [{ KGW_EMBEDDINGS_URL: 'https://e.test', KGW_EMBEDDINGS_DIMENSIONS: '8' }, 'KGW_EMBEDDINGS_MODEL', 'is required when KGW_EMBEDDINGS_URL is set'],
    [
      { KGW_EMBEDDINGS_URL: 'https://e.test', KGW_EMBEDDINGS_MODEL: 'a model', KGW_EMBEDDINGS_DIMENSIONS: '8' },
      'KGW_EMBEDDINGS_MODEL',
      'must be 1 to 200 printable ASCII characters without spaces',
    ],
    [{ KGW_EMBEDDINGS_URL: 'https://e.test', KGW_EMBEDDINGS_MODEL: 'm' }, 'KGW_EMBEDDINGS_DIMENSIONS', 'is required when KGW_EMBEDDINGS_URL is set'],
    [
      { KGW_EMBEDDINGS_URL: 'https://e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '0' },
      'KGW_EMBEDDINGS_DIMENSIONS',
      'must be a whole number from 1 to 4096, got "0"',
    ],
    [
      { KGW_EMBEDDINGS_URL: 'https://e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '4097' },
      'KGW_EMBEDDINGS_DIMENSIONS',
      'must be a whole number from 1 to 4096, got "4097"',
    ],
    [
      { KGW_EMBEDDINGS_URL: 'https://e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '8', KGW_EMBEDDINGS_TIMEOUT_MS: '120001' },
      'KGW_EMBEDDINGS_TIMEOUT_MS',
      'must be a whole number from 1 to 120000, got "120001"',
    ],
    [
      { KGW_EMBEDDINGS_URL: 'https://e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '8', KGW_EMBEDDINGS_BATCH: '257' },
      'KGW_EMBEDDINGS_BATCH',
      'must be a whole number from 1 to 256, got "257"',
    ],
    [
      { KGW_EMBEDDINGS_URL: 'https://e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '8', KGW_EMBEDDINGS_MAX_CHARS: '1e5' },
      'KGW_EMBEDDINGS_MAX_CHARS',
      'must be a whole number from 1 to 100000, got "1e5"',
    ],
    [{ KGW_MAIL_IMAP_URL: 'https://mail.acme.test' }, 'KGW_MAIL_IMAP_URL', 'must be an imap:// or imaps:// URL'],
    ...['proxy.acme.test', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/8', '10.0.0.1/', '*', 'loopback/8', '10.0.0.256'].map(
      (entry): [Record<string, string>, string, string] => [
        { KGW_TRUSTED_PROXIES: `loopback, ${entry}` },
        'KGW_TRUSTED_PROXIES',
        `"${entry}" is not an address, a CIDR range (10.0.0.0/8) or one of loopback, linklocal, uniquelocal`,
      ],
    ),
    [{ KGW_METRICS: 'yes' }, 'KGW_METRICS', 'must be on or off, got "yes"'],
    [{ KGW_TRACES_SAMPLE: '0.5' }, 'KGW_TRACES_URL', 'is required when KGW_TRACES_SAMPLE is set'],
    [{ KGW_TRACES_URL: 'grpc://otel:4317' }, 'KGW_TRACES_URL', 'must use http or https, got "grpc"'],
    ...['1.5', '-0.1', 'NaN', '1e-1', '.5', '0.1234567'].map((ratio): [Record<string, string>, string, string] => [
      { KGW_TRACES_URL: 'http://otel:4318/v1/traces', KGW_TRACES_SAMPLE: ratio },
      'KGW_TRACES_SAMPLE',
      `must be a share from 0 to 1 such as 0.1, got "${ratio}"`,
    ]),
    [{ KGW_METRICS_TOKEN: 'short' }, 'KGW_METRICS_TOKEN', 'must be 16 to 512 printable characters without spaces'],
    [{ KGW_METRICS_TOKEN: 'a token with spaces in it' }, 'KGW_METRICS_TOKEN', 'must be 16 to 512 printable characters without spaces'],
    [{ KGW_TRUSTED_PROXIES: Array.from({ length: 65 }, (_, i) => `10.0.0.${i}`).join(',') }, 'KGW_TRUSTED_PROXIES', 'lists more than 64 entries'],
    [{ KGW_MAIL_IMAP_URL: 'mail.acme.test' }, 'KGW_MAIL_IMAP_URL', 'is not a URL such as imaps://mail.example.com'],
    [
      { KGW_MAIL_IMAP_URL: 'imaps://ana:secret@mail.acme.test' },
      'KGW_MAIL_IMAP_URL',
      'must not contain a user name or password (use the mailbox user and password_env)',
    ],
    [{ KGW_MAIL_IMAP_URL: 'imap://mail.acme.test/INBOX' }, 'KGW_MAIL_IMAP_URL', 'must be only a scheme, a host and a port'],
  ];
  for (const [env, variable, problem] of BAD) {
    it(`refuses ${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}, naming ${variable}`, () => {
      let caught: unknown;
      try {
        loadConfig(env, CWD);
      } catch (error) {
        caught = error;
      }
      assert.ok(caught instanceof ConfigError, 'a ConfigError');
      assert.equal(caught.name, 'ConfigError');
      assert.equal(caught.variable, variable);
      assert.equal(caught.message, `${variable}: ${problem}`);
      assert.ok(!caught.message.includes('\n'), 'one line');
    });
  }

  it('names the first bad variable when several are bad', () => {
    assert.throws(() => loadConfig({ KGW_LOG_LEVEL: 'loud', KGW_PORT: 'abc', DATABASE_URL: 'mysql://x' }, CWD), { variable: 'KGW_PORT' });
  });

  it('does not echo secrets in its messages', () => {
    assert.throws(
      () => loadConfig({ NEO4J_URL: 'http://graph:7474', NEO4J_PASSWORD: 'hunter2' }, CWD),
      (error: Error) => !error.message.includes('hunter2'),
    );
    assert.throws(
      () => loadConfig({ S3_BUCKET: 'kgw', S3_SECRET_ACCESS_KEY: 'hunter2' }, CWD),
      (error: Error) => !error.message.includes('hunter2'),
    );
    assert.throws(
      () => loadConfig({ KGW_EMBEDDINGS_URL: 'https://e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: 'x', KGW_EMBEDDINGS_KEY: 'hunter2' }, CWD),
      (error: Error) => !error.message.includes('hunter2'),
    );
    assert.throws(
      () => loadConfig({ KGW_EMBEDDINGS_URL: 'https://kgw:hunter2@e.test', KGW_EMBEDDINGS_MODEL: 'm', KGW_EMBEDDINGS_DIMENSIONS: '8' }, CWD),
      (error: Error) => !error.message.includes('hunter2'),
    );
  });

  // src/config.ts parseUrl quotes the whole raw value, credentials included, when new URL() refuses it.
  it('does not echo the password of a DATABASE_URL it cannot parse', () => {
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'postgres://kgw:hunter2@db:99999/kgw' }, CWD),
      (error: Error) => error instanceof ConfigError && error.variable === 'DATABASE_URL' && !error.message.includes('hunter2'),
    );
  });
});
