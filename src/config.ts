import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import path from 'node:path';
import { parseImapUrl } from './kernel/mail/mailbox.ts';

/** Everything the gateway reads from its environment, read once and frozen. */
export interface Config {
  readonly host: string;
  readonly port: number;
  /** Origin (scheme, host, port) and optional base path; the OAuth issuer and MCP resource base. */
  readonly publicUrl: string;
  readonly dataDir: string;
  /** Browser origins allowed to call the MCP endpoints; requests without Origin are always allowed. */
  readonly allowedOrigins: readonly string[];
  /**
   * KGW_TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For names the client (addresses,
   * CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`); empty, the connection's own address
   * is the client's. Every per-address limit counts the address this yields.
   */
  readonly trustedProxies: readonly string[];
  readonly logLevel: LogLevel;
  readonly databaseUrl: string | undefined;
  readonly s3: S3Config | undefined;
  readonly meili: MeiliConfig | undefined;
  readonly neo4j: Neo4jConfig | undefined;
  /** Rates per minute, counted in each gateway process (see docs/atmina.md, Rates). */
  readonly rateLimits: RateLimitsConfig;
  /** KGW_UPLOAD_URL_TTL_SECONDS: how long request_uploads' URLs and their batch stay valid. */
  readonly uploadUrlSeconds: number;
  /** Anonymous search of public KBs (docs/atmina.md, "Anonymous search"): off unless tenants are named. */
  readonly anonymousSearch: AnonymousSearchConfig;
  /** The embeddings endpoint hybrid search uses (docs/search.md, "Hybrid retrieval"); off when KGW_EMBEDDINGS_URL is unset. */
  readonly embeddings: EmbeddingsConfig | undefined;
  /** Where approved email drafts go (docs/company-brain.md, "Email drafts"). */
  readonly mail: MailConfig;
  /** GET /metrics (docs/architecture.md, "Metrics"). */
  readonly metrics: MetricsConfig;
  /** OpenTelemetry traces over OTLP/HTTP (docs/architecture.md, "Traces"); undefined, none are made. */
  readonly traces: TracesConfig | undefined;
  /**
   * KGW_MEMORY: `throughput` (the default) or `lean`: V8's heap grown by half between collections,
   * no mid-tier compiler and, on PGlite, no optimising compiler for its WebAssembly, for a gateway
   * sized by its memory (docs/decisions.md, "The young generation"; applied by `kgw serve`,
   * src/memory-mode.ts).
   */
  readonly memory: MemoryMode;
}

export const MEMORY_MODES = ['throughput', 'lean'] as const;
export type MemoryMode = (typeof MEMORY_MODES)[number];

export interface TracesConfig {
  /** KGW_TRACES_URL: the collector's OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces. */
  readonly url: string;
  /** KGW_TRACES_SAMPLE: the share of new traces kept, 0 to 1 (a request that continues a trace follows its caller's choice). */
  readonly sampleRatio: number;
}

export interface MetricsConfig {
  /** KGW_METRICS: `on` (the default) or `off` (no /metrics route at all). */
  readonly enabled: boolean;
  /** KGW_METRICS_TOKEN: when set, /metrics asks for it as a bearer token from any address; unset, it answers loopback clients only. Never logged or shown. */
  readonly token: string | undefined;
}

/** A metrics token is a secret: at least this many characters. */
export const METRICS_TOKEN_MIN = 16;

export interface MailConfig {
  /** KGW_MAIL_IMAP_URL: the IMAP server of mailboxes that name none; drafts of people without a mailbox are .eml files. */
  readonly imapUrl: string | undefined;
}

export interface EmbeddingsConfig {
  /** KGW_EMBEDDINGS_URL: the base of an OpenAI-compatible API, without a trailing slash; requests go to `<url>/embeddings`. */
  readonly url: string;
  /** KGW_EMBEDDINGS_MODEL: the model named in every request. */
  readonly model: string;
  /** KGW_EMBEDDINGS_DIMENSIONS: the vectors' length; an answer of another length is an error. */
  readonly dimensions: number;
  /** KGW_EMBEDDINGS_KEY: sent as a Bearer token; never logged or shown. */
  readonly apiKey: string | undefined;
  /** KGW_EMBEDDINGS_TIMEOUT_MS: one request's time limit. */
  readonly timeoutMs: number;
  /** KGW_EMBEDDINGS_BATCH: texts per request. */
  readonly batch: number;
  /** KGW_EMBEDDINGS_MAX_CHARS: characters of a document's text sent (title, path, then the body's start). */
  readonly maxChars: number;
}

/** Bounds of the embeddings settings (defaults, maxima). */
export const EMBEDDINGS_DIMENSIONS_MAX = 4096;
export const EMBEDDINGS_TIMEOUT_MS_DEFAULT = 10_000;
export const EMBEDDINGS_TIMEOUT_MS_MAX = 120_000;
export const EMBEDDINGS_BATCH_DEFAULT = 32;
export const EMBEDDINGS_BATCH_MAX = 256;
export const EMBEDDINGS_MAX_CHARS_DEFAULT = 8_000;
export const EMBEDDINGS_MAX_CHARS_MAX = 100_000;
/** A model name: 1 to 200 printable characters without spaces (OpenAI's, Ollama's `name:tag`, a path-like Hugging Face id). */
const EMBEDDINGS_MODEL = /^[\x21-\x7e]{1,200}$/;

export interface AnonymousSearchConfig {
  /** KGW_ANONYMOUS_SEARCH_TENANTS: the slugs of the tenants whose public KBs anyone may search without a token. */
  readonly tenants: readonly string[];
  /** KGW_ANONYMOUS_SEARCHES_PER_MINUTE: anonymous searches per client address. */
  readonly perAddressPerMinute: number;
  /** KGW_ANONYMOUS_SEARCHES_PER_TENANT_PER_MINUTE: anonymous searches of one tenant, every address together. */
  readonly perTenantPerMinute: number;
}

export interface RateLimitsConfig {
  /** KGW_KB_WRITES_PER_MINUTE: Knowledge-Base write and upload calls per principal. */
  readonly kbWritesPerMinute: number;
  /** KGW_UPLOAD_PUTS_PER_MINUTE: PUTs to the gateway's own upload URLs per client address. */
  readonly uploadPutsPerMinute: number;
}

export interface S3Config {
  readonly endpoint: string | undefined;
  readonly bucket: string;
  readonly region: string;
  readonly accessKeyId: string | undefined;
  readonly secretAccessKey: string | undefined;
}

export interface MeiliConfig {
  readonly url: string;
  readonly apiKey: string | undefined;
  /** MEILI_INDEX: the index the gateway keeps its documents in (default kgw_documents). */
  readonly index: string;
}

// Meilisearch's own rule for index uids: letters, digits, hyphens and underscores, at most 400 bytes.
const MEILI_INDEX = /^[A-Za-z0-9_-]{1,400}$/;

export interface Neo4jConfig {
  readonly url: string;
  readonly user: string;
  readonly password: string;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A configuration value that stops start-up; the message is one line naming the variable. */
export class ConfigError extends Error {
  readonly variable: string;
  constructor(variable: string, problem: string) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
    this.variable = variable;
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function parsePort(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(name, `must be a whole number from 0 to 65535, got "${raw}"`);
  }
  return Number(raw);
}

function parseCount(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw new ConfigError(name, `must be a whole number from 1, got "${raw}"`);
  return Number(raw);
}

function parseBounded(env: Env, name: string, fallback: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) throw new ConfigError(name, `must be a whole number from 1 to ${max}, got "${raw}"`);
  return Number(raw);
}

/**
 * Upload URLs: 15 minutes by default, long enough for 100 MiB on a slow line. At most a day: a
 * URL is a credential to write its bytes, and the bytes of an abandoned upload stay until its
 * batch expires. As little as 1 s is allowed (tests of expiry use it).
 */
export const UPLOAD_URL_SECONDS_DEFAULT = 15 * 60;
export const UPLOAD_URL_SECONDS_MAX = 24 * 3600;

/** A URL as it may be shown in a message: any password replaced by ***. */
function redact(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}

function parseUrl(env: Env, name: string, protocols: readonly string[], fallback?: string): string | undefined {
  const raw = optional(env, name) ?? fallback;
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute URL with a valid host and port, got "${redact(raw)}"`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use ${protocols.map((p) => p.replace(':', '')).join(' or ')}, got "${url.protocol.replace(':', '')}"`);
  }
  return raw;
}

function parsePublicUrl(env: Env, fallback: string): string {
  const raw = parseUrl(env, 'KGW_PUBLIC_URL', ['http:', 'https:'], fallback) ?? fallback;
  const url = new URL(raw);
  if (url.search !== '' || url.hash !== '') {
    throw new ConfigError('KGW_PUBLIC_URL', 'must not have a query or fragment');
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError('KGW_PUBLIC_URL', 'must not contain a user name or password');
  }
  // Canonical form without a trailing slash, so resource URLs can be appended.
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function parseOrigins(env: Env): string[] {
  const raw = optional(env, 'KGW_ALLOWED_ORIGINS');
  if (raw === undefined) return [];
  return raw
    .split(/[\s,]+/)
    .filter((entry) => entry !== '')
    .map((entry) => {
      let url: URL;
      try {
        url = new URL(entry);
      } catch {
        throw new ConfigError('KGW_ALLOWED_ORIGINS', `"${entry}" is not an origin such as https://app.example.com`);
      }
      // An origin is scheme, host and port only; case and a default port are normalised away.
      const bare = url.pathname === '/' && url.search === '' && url.hash === '' && url.username === '' && url.password === '';
      if (url.origin === 'null' || !bare || !/^https?:$/.test(url.protocol)) {
        throw new ConfigError('KGW_ALLOWED_ORIGINS', `"${entry}" is not an origin such as https://app.example.com`);
      }
      return url.origin;
    });
}

/**
 * The data folder when KGW_DATA_DIR is unset: the nearest `.kgw` from `cwd` upward, so a command
 * run in a subfolder of the project finds the project's; else `.kgw` at the project's root (the
 * nearest folder with a package.json, where `npm start` runs); else `.kgw` in `cwd`.
 */
export function defaultDataDir(cwd: string, exists: (file: string) => boolean = existsSync): string {
  let root: string | undefined;
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (exists(path.join(dir, '.kgw'))) return path.join(dir, '.kgw');
    root ??= exists(path.join(dir, 'package.json')) ? dir : undefined;
    if (path.dirname(dir) === dir) break;
  }
  return path.join(root ?? path.resolve(cwd), '.kgw');
}

/** At most this many entries in KGW_TRUSTED_PROXIES. */
export const TRUSTED_PROXIES_MAX = 64;
const PROXY_PRESETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

function parseTrustedProxies(env: Env): string[] {
  const raw = optional(env, 'KGW_TRUSTED_PROXIES');
  if (raw === undefined) return [];
  const entries = raw.split(/[\s,]+/).filter((entry) => entry !== '');
  if (entries.length > TRUSTED_PROXIES_MAX) throw new ConfigError('KGW_TRUSTED_PROXIES', `lists more than ${TRUSTED_PROXIES_MAX} entries`);
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const prefixOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!PROXY_PRESETS.has(entry) && (family === 0 || !prefixOk || extra !== undefined))
      throw new ConfigError('KGW_TRUSTED_PROXIES', `"${entry}" is not an address, a CIDR range (10.0.0.0/8) or one of loopback, linklocal, uniquelocal`);
  }
  return entries;
}

function parseTraces(env: Env): TracesConfig | undefined {
  const url = parseUrl(env, 'KGW_TRACES_URL', ['http:', 'https:']);
  const rawRatio = optional(env, 'KGW_TRACES_SAMPLE');
  if (url === undefined) {
    if (rawRatio !== undefined) throw new ConfigError('KGW_TRACES_URL', 'is required when KGW_TRACES_SAMPLE is set');
    return undefined;
  }
  const sampleRatio = rawRatio === undefined ? 1 : Number(rawRatio);
  if (rawRatio !== undefined && (!/^(0(\.\d{1,6})?|1(\.0{1,6})?)$/.test(rawRatio) || !(sampleRatio >= 0 && sampleRatio <= 1)))
    throw new ConfigError('KGW_TRACES_SAMPLE', `must be a share from 0 to 1 such as 0.1, got "${rawRatio.slice(0, 20)}"`);
  return { url, sampleRatio };
}

function parseMetrics(env: Env): MetricsConfig {
  const switched = optional(env, 'KGW_METRICS') ?? 'on';
  if (switched !== 'on' && switched !== 'off') throw new ConfigError('KGW_METRICS', `must be on or off, got "${switched.slice(0, 20)}"`);
  const token = optional(env, 'KGW_METRICS_TOKEN');
  // Printable ASCII without spaces, so it fits an Authorization header as it is; never echoed.
  if (token !== undefined && !new RegExp(`^[\\x21-\\x7e]{${METRICS_TOKEN_MIN},512}$`).test(token))
    throw new ConfigError('KGW_METRICS_TOKEN', `must be ${METRICS_TOKEN_MIN} to 512 printable characters without spaces`);
  return { enabled: switched === 'on', token };
}

function parseHost(env: Env): string {
  const host = optional(env, 'KGW_HOST') ?? '127.0.0.1';
  if (!/^[A-Za-z0-9.:\-[\]]+$/.test(host)) throw new ConfigError('KGW_HOST', `"${host}" is not a host name or address`);
  return host.replace(/^\[(.*)\]$/, '$1');
}

function parseS3(env: Env): S3Config | undefined {
  const endpoint = parseUrl(env, 'S3_ENDPOINT', ['http:', 'https:']);
  const bucket = optional(env, 'S3_BUCKET');
  const accessKeyId = optional(env, 'S3_ACCESS_KEY_ID');
  const secretAccessKey = optional(env, 'S3_SECRET_ACCESS_KEY');
  const region = optional(env, 'S3_REGION');
  const anySet = [endpoint, bucket, accessKeyId, secretAccessKey, region].some((v) => v !== undefined);
  if (!anySet) return undefined;
  if (bucket === undefined) throw new ConfigError('S3_BUCKET', 'is required when any S3_* variable is set');
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigError('S3_BUCKET', `"${bucket}" is not a valid bucket name (3-63 lower-case letters, digits, dots, hyphens)`);
  }
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError(
      accessKeyId === undefined ? 'S3_ACCESS_KEY_ID' : 'S3_SECRET_ACCESS_KEY',
      'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together',
    );
  }
  return { endpoint, bucket, region: region ?? 'us-east-1', accessKeyId, secretAccessKey };
}

function parseNeo4j(env: Env): Neo4jConfig | undefined {
  const url = parseUrl(env, 'NEO4J_URL', ['bolt:', 'bolt+s:', 'bolt+ssc:', 'neo4j:', 'neo4j+s:', 'neo4j+ssc:']);
  const user = optional(env, 'NEO4J_USER');
  const password = optional(env, 'NEO4J_PASSWORD');
  if (url === undefined) {
    if (user !== undefined || password !== undefined) throw new ConfigError('NEO4J_URL', 'is required when NEO4J_USER or NEO4J_PASSWORD is set');
    return undefined;
  }
  if (password === undefined) throw new ConfigError('NEO4J_PASSWORD', 'is required when NEO4J_URL is set');
  return { url, user: user ?? 'neo4j', password };
}

const EMBEDDINGS_VARIABLES = [
  'KGW_EMBEDDINGS_MODEL',
  'KGW_EMBEDDINGS_DIMENSIONS',
  'KGW_EMBEDDINGS_KEY',
  'KGW_EMBEDDINGS_TIMEOUT_MS',
  'KGW_EMBEDDINGS_BATCH',
  'KGW_EMBEDDINGS_MAX_CHARS',
] as const;

/** The embeddings endpoint: all of it when KGW_EMBEDDINGS_URL is set, none of it (hybrid off) otherwise. */
function parseEmbeddings(env: Env): EmbeddingsConfig | undefined {
  const raw = parseUrl(env, 'KGW_EMBEDDINGS_URL', ['http:', 'https:']);
  if (raw === undefined) {
    const stray = EMBEDDINGS_VARIABLES.find((name) => optional(env, name) !== undefined);
    if (stray !== undefined) throw new ConfigError('KGW_EMBEDDINGS_URL', `is required when ${stray} is set`);
    return undefined;
  }
  const url = new URL(raw);
  // The key has a variable of its own, so a URL never carries a secret into a message.
  if (url.username !== '' || url.password !== '')
    throw new ConfigError('KGW_EMBEDDINGS_URL', 'must not contain a user name or password (use KGW_EMBEDDINGS_KEY)');
  if (url.search !== '' || url.hash !== '') throw new ConfigError('KGW_EMBEDDINGS_URL', 'must not have a query or fragment');
  const model = optional(env, 'KGW_EMBEDDINGS_MODEL');
  if (model === undefined) throw new ConfigError('KGW_EMBEDDINGS_MODEL', 'is required when KGW_EMBEDDINGS_URL is set');
  if (!EMBEDDINGS_MODEL.test(model)) throw new ConfigError('KGW_EMBEDDINGS_MODEL', 'must be 1 to 200 printable ASCII characters without spaces');
  if (optional(env, 'KGW_EMBEDDINGS_DIMENSIONS') === undefined)
    throw new ConfigError('KGW_EMBEDDINGS_DIMENSIONS', 'is required when KGW_EMBEDDINGS_URL is set');
  return {
    url: `${url.origin}${url.pathname.replace(/\/+$/, '')}`,
    model,
    dimensions: parseBounded(env, 'KGW_EMBEDDINGS_DIMENSIONS', 0, EMBEDDINGS_DIMENSIONS_MAX),
    apiKey: optional(env, 'KGW_EMBEDDINGS_KEY'),
    timeoutMs: parseBounded(env, 'KGW_EMBEDDINGS_TIMEOUT_MS', EMBEDDINGS_TIMEOUT_MS_DEFAULT, EMBEDDINGS_TIMEOUT_MS_MAX),
    batch: parseBounded(env, 'KGW_EMBEDDINGS_BATCH', EMBEDDINGS_BATCH_DEFAULT, EMBEDDINGS_BATCH_MAX),
    maxChars: parseBounded(env, 'KGW_EMBEDDINGS_MAX_CHARS', EMBEDDINGS_MAX_CHARS_DEFAULT, EMBEDDINGS_MAX_CHARS_MAX),
  };
}

const TENANT_SLUG = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** KGW_ANONYMOUS_SEARCH_TENANTS: tenant slugs, comma or space separated; none by default (anonymous search is off). */
function parseAnonymousTenants(env: Env): string[] {
  const raw = optional(env, 'KGW_ANONYMOUS_SEARCH_TENANTS');
  if (raw === undefined) return [];
  const slugs = raw.split(/[\s,]+/).filter((part) => part !== '');
  const bad = slugs.find((slug) => !TENANT_SLUG.test(slug));
  if (bad !== undefined)
    throw new ConfigError('KGW_ANONYMOUS_SEARCH_TENANTS', `must list tenant slugs (lower-case letters, digits and -), got "${bad.slice(0, 80)}"`);
  return [...new Set(slugs)];
}

function parseMemoryMode(env: Env): MemoryMode {
  const raw = optional(env, 'KGW_MEMORY') ?? 'throughput';
  const mode = MEMORY_MODES.find((m) => m === raw);
  if (mode === undefined) throw new ConfigError('KGW_MEMORY', `must be one of ${MEMORY_MODES.join(', ')}, got "${raw.slice(0, 80)}"`);
  return mode;
}

function parseLogLevel(env: Env): LogLevel {
  const raw = optional(env, 'KGW_LOG_LEVEL') ?? 'info';
  const level = LOG_LEVELS.find((l) => l === raw);
  if (level === undefined) throw new ConfigError('KGW_LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}, got "${raw}"`);
  return level;
}

/** KGW_MAIL_IMAP_URL: imap:// or imaps://, a host and a port, no credentials (those are each mailbox's). */
function parseImapUrlVariable(env: Env): string | undefined {
  const raw = optional(env, 'KGW_MAIL_IMAP_URL');
  if (raw === undefined) return undefined;
  const url = parseImapUrl(raw);
  if (typeof url === 'string') throw new ConfigError('KGW_MAIL_IMAP_URL', url);
  return raw;
}

/** Reads the configuration; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const host = parseHost(env);
  const port = parsePort(env, 'KGW_PORT', 8787);
  const meiliUrl = parseUrl(env, 'MEILI_URL', ['http:', 'https:']);
  const meiliKey = optional(env, 'MEILI_API_KEY');
  if (meiliUrl === undefined && meiliKey !== undefined) throw new ConfigError('MEILI_URL', 'is required when MEILI_API_KEY is set');
  const meiliIndex = optional(env, 'MEILI_INDEX') ?? 'kgw_documents';
  if (!MEILI_INDEX.test(meiliIndex)) throw new ConfigError('MEILI_INDEX', 'must be 1 to 400 letters, digits, hyphens or underscores');
  const config: Config = {
    host,
    port,
    publicUrl: parsePublicUrl(env, `http://127.0.0.1:${port}`),
    dataDir: ((dir) => (dir === undefined ? defaultDataDir(cwd) : path.resolve(cwd, dir)))(optional(env, 'KGW_DATA_DIR')),
    allowedOrigins: Object.freeze(parseOrigins(env)),
    trustedProxies: Object.freeze(parseTrustedProxies(env)),
    logLevel: parseLogLevel(env),
    databaseUrl: parseUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    s3: parseS3(env),
    meili: meiliUrl === undefined ? undefined : { url: meiliUrl, apiKey: meiliKey, index: meiliIndex },
    neo4j: parseNeo4j(env),
    rateLimits: Object.freeze({
      kbWritesPerMinute: parseCount(env, 'KGW_KB_WRITES_PER_MINUTE', 600),
      uploadPutsPerMinute: parseCount(env, 'KGW_UPLOAD_PUTS_PER_MINUTE', 120),
    }),
    uploadUrlSeconds: parseBounded(env, 'KGW_UPLOAD_URL_TTL_SECONDS', UPLOAD_URL_SECONDS_DEFAULT, UPLOAD_URL_SECONDS_MAX),
    anonymousSearch: Object.freeze({
      tenants: Object.freeze(parseAnonymousTenants(env)),
      perAddressPerMinute: parseCount(env, 'KGW_ANONYMOUS_SEARCHES_PER_MINUTE', 30),
      perTenantPerMinute: parseCount(env, 'KGW_ANONYMOUS_SEARCHES_PER_TENANT_PER_MINUTE', 600),
    }),
    embeddings: parseEmbeddings(env),
    mail: Object.freeze({ imapUrl: parseImapUrlVariable(env) }),
    metrics: Object.freeze(parseMetrics(env)),
    traces: parseTraces(env),
    memory: parseMemoryMode(env),
  };
  for (const part of [config.s3, config.meili, config.neo4j, config.embeddings, config.traces]) if (part) Object.freeze(part);
  return Object.freeze(config);
}
