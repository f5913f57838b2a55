import { z } from 'zod';
import { createLoginLink } from '../auth/login-links.ts';
import { listActivity, setActivityEnabled } from '../core/activity/activity.ts';
import { adminInbox } from '../core/context/messages.ts';
import { acceptReview, listReviews, rejectReview, showReview } from '../core/context/review.ts';
import { checkReadiness } from '../core/health/readiness.ts';
import type { Readiness } from '../core/health/readiness.ts';
import { applyOrgFile } from '../core/org/apply.ts';
import type { ReferencedFiles } from '../core/org/apply.ts';
import { projectionStatus } from '../core/outbox/outbox.ts';
import type { ProjectionStatus } from '../core/outbox/outbox.ts';
import { rebuildProjection } from '../core/outbox/rebuild.ts';
import type { RebuildReport } from '../core/outbox/rebuild.ts';
import type { Services } from '../core/services.ts';
import { parseDuration } from '../core/tokens/duration.ts';
import { DEFAULT_TOKEN_TTL_MS, createToken, listTokens, revokeToken } from '../core/tokens/tokens.ts';
import { validation } from '../core/errors.ts';
import { migrate } from '../store/migrate.ts';

/** The shape of ReferencedFiles (src/core/org/referenced-files.ts). */
const referencedFiles = z.record(
  z.string(),
  z.union([
    z.object({ file: z.string() }).strict(),
    z.object({ folder: z.array(z.object({ path: z.string(), data_base64: z.string() }).strict()) }).strict(),
    z.object({ errors: z.array(z.string()) }).strict(),
  ]),
);

/**
 * Administrative operations, the same whether the CLI runs them on the store directly or
 * through a running gateway's admin endpoint (when that gateway holds the data folder).
 */
const definitions = {
  migrate: {
    args: z.object({}).strict(),
    run: (services: Services) => migrate(services.db),
  },
  apply: {
    // env: only the variables the file names with password_env, from the kgw apply process.
    // files: what its file: and dir: name, read by the kgw apply process (readReferencedFiles).
    args: z
      .object({
        source: z.string(),
        fileName: z.string().optional(),
        dryRun: z.boolean().default(false),
        env: z.record(z.string(), z.string()).default({}),
        files: referencedFiles.default({}),
      })
      .strict(),
    run: (services: Services, args: { source: string; fileName?: string | undefined; dryRun: boolean; env: Record<string, string>; files: ReferencedFiles }) =>
      applyOrgFile(
        services.db,
        { source: args.source, fileName: args.fileName, dryRun: args.dryRun, env: args.env, files: args.files, blob: services.blob },
        services.audit,
      ),
  },
  'token.create': {
    args: z
      .object({ tenant: z.string(), principal: z.string(), scopes: z.string(), ttl: z.string().optional(), label: z.string().max(200).optional() })
      .strict(),
    run: (services: Services, args: { tenant: string; principal: string; scopes: string; ttl?: string | undefined; label?: string | undefined }) =>
      createToken(
        services.db,
        {
          tenant: args.tenant,
          principal: args.principal,
          scopes: args.scopes,
          ttlMs: args.ttl === undefined ? DEFAULT_TOKEN_TTL_MS : parseDuration(args.ttl),
          label: args.label,
        },
        services.audit,
      ),
  },
  'token.list': {
    args: z.object({ tenant: z.string().optional(), all: z.boolean().default(false) }).strict(),
    run: (services: Services, args: { tenant?: string | undefined; all: boolean }) =>
      listTokens(services.db, { tenant: args.tenant, includeRevoked: args.all }),
  },
  'token.revoke': {
    args: z.object({ id: z.string() }).strict(),
    run: (services: Services, args: { id: string }) => revokeToken(services.db, args.id, services.audit),
  },
  'oauth.login-link': {
    args: z.object({ tenant: z.string(), email: z.string() }).strict(),
    run: (services: Services, args: { tenant: string; email: string }) =>
      createLoginLink(services.db, services.config, args.tenant, args.email, services.audit),
  },
  readiness: {
    args: z.object({}).strict(),
    run: (services: Services): Promise<Readiness> => checkReadiness(services.probes),
  },
  'projections.status': {
    args: z.object({}).strict(),
    run: (services: Services): Promise<ProjectionStatus[]> =>
      projectionStatus(
        services.db,
        services.projections.projections.map((p) => p.name),
      ),
  },
  'projections.rebuild': {
    // names: the projections to rebuild; omitted means every configured one.
    args: z.object({ names: z.array(z.string()).optional() }).strict(),
    run: (services: Services, args: { names?: string[] | undefined }) => rebuildProjections(services, args.names),
  },
  // Human review of agents' drafts and proposals (kgw review; src/core/context/review.ts).
  'review.list': {
    args: z.object({ tenant: z.string() }).strict(),
    run: (services: Services, args: { tenant: string }) => listReviews(services.db, args),
  },
  'review.show': {
    args: z.object({ tenant: z.string(), id: z.string() }).strict(),
    run: (services: Services, args: { tenant: string; id: string }) => showReview(services.db, args),
  },
  'review.accept': {
    // as: the reviewing person's email; omitted, the decision is the CLI operator's.
    args: z
      .object({ tenant: z.string(), id: z.string(), as: z.string().optional(), publish: z.boolean().default(false), force: z.boolean().default(false) })
      .strict(),
    run: (services: Services, args: { tenant: string; id: string; as?: string | undefined; publish: boolean; force: boolean }) =>
      acceptReview(services.db, services.audit, args),
  },
  'review.reject': {
    args: z.object({ tenant: z.string(), id: z.string(), as: z.string().optional(), note: z.string().optional() }).strict(),
    run: (services: Services, args: { tenant: string; id: string; as?: string | undefined; note?: string | undefined }) =>
      rejectReview(services.db, services.audit, args),
  },
  // An agent's messages for an administrator, marking nothing read (kgw inbox; src/core/context/messages.ts).
  'inbox.list': {
    args: z.object({ tenant: z.string(), agent: z.string(), all: z.boolean().default(false) }).strict(),
    run: (services: Services, args: { tenant: string; agent: string; all: boolean }) => adminInbox(services.db, args),
  },
  // Activity installations and events, and the tenant's Activity switch (kgw activity; src/core/activity/activity.ts).
  'activity.list': {
    args: z.object({ tenant: z.string(), agent: z.string().optional(), limit: z.number().int().optional() }).strict(),
    run: (services: Services, args: { tenant: string; agent?: string | undefined; limit?: number | undefined }) => listActivity(services.db, args),
  },
  'activity.switch': {
    args: z.object({ tenant: z.string(), enabled: z.boolean() }).strict(),
    run: (services: Services, args: { tenant: string; enabled: boolean }) => setActivityEnabled(services.db, services.audit, args),
  },
} as const;

export interface RebuildOutcome {
  /** Every projection this process runs. */
  readonly configured: readonly string[];
  readonly rebuilt: readonly RebuildReport[];
  /** Asked for but not configured here. */
  readonly skipped: readonly string[];
}

async function rebuildProjections(services: Services, names: readonly string[] | undefined): Promise<RebuildOutcome> {
  const set = services.projections;
  const configured = set.projections.map((p) => p.name);
  const wanted = names ?? configured;
  const rebuilt: RebuildReport[] = [];
  for (const name of wanted.filter((n) => configured.includes(n))) rebuilt.push(await rebuildProjection(services.db, set, name));
  return { configured, rebuilt, skipped: wanted.filter((n) => !configured.includes(n)) };
}

export type OpName = keyof typeof definitions;
export const OP_NAMES = Object.keys(definitions) as OpName[];

export function isOpName(name: string): name is OpName {
  return Object.hasOwn(definitions, name);
}

/**
 * Where the first text that PostgreSQL cannot hold sits in checked arguments: a NUL (refused in
 * text with an error) or half of a surrogate pair (refused in jsonb), in a key or a value.
 */
function unstorableText(value: unknown, at: readonly string[]): string[] | undefined {
  if (typeof value === 'string') return value.includes('\0') || !value.isWellFormed() ? [...at] : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  for (const [key, entry] of Object.entries(value)) {
    if (key.includes('\0') || !key.isWellFormed()) return [...at, key];
    const found = unstorableText(entry, [...at, key]);
    if (found) return found;
  }
  return undefined;
}

/** Validates the arguments and runs the operation; bad arguments are a validation error. */
export async function runOp(services: Services, name: OpName, args: unknown): Promise<unknown> {
  const definition = definitions[name];
  const parsed = definition.args.safeParse(args ?? {});
  if (!parsed.success) throw validation(`bad arguments for ${name}: ${parsed.error.issues.map((i) => `${i.path.join('.')} ${i.message}`).join('; ')}`);
  // Checked after the schema, which bounds the depth: such text would otherwise fail in the store.
  const unstorable = unstorableText(parsed.data, []);
  if (unstorable) throw validation(`bad arguments for ${name}: ${unstorable.join('.')} must not contain NUL (U+0000) or a lone surrogate`);
  return (definition.run as (s: Services, a: unknown) => Promise<unknown>)(services, parsed.data);
}
