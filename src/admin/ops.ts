import { z } from 'zod';
import { createLoginLink } from '../auth/login-links.ts';
import {
  acceptResultJson,
  acceptReview,
  adminInbox,
  inboxListing,
  listActivity,
  listReviews,
  OPERATOR_CONTEXT_PAGE_DEFAULT,
  OPERATOR_CONTEXT_PAGE_MAX,
  operatorContext,
  operatorContextFile,
  rejectResultJson,
  rejectReview,
  reviewDetailJson,
  reviewItemJson,
  setActivityEnabled,
  showReview,
  IMPORT_VERSIONS_MAX,
  importContextDraft,
  importContextResource,
  operatorAccess,
  operatorTypeGrants,
} from '../alignbase/index.ts';
import type { Kb, OperatorKbListing, TeamSettings } from '../atmina/index.ts';
import {
  AUDIT_QUERY_TEXT,
  CONTRIBUTION_NOTE_DAYS,
  getTeamSettings,
  IMPORT_BATCH_FILES_MAX,
  importKbFiles,
  KB_VISIBILITIES,
  moveFile,
  OPERATOR_FILES_PAGE_DEFAULT,
  OPERATOR_FILES_PAGE_MAX,
  operatorFileBytes,
  operatorKb,
  operatorKbFiles,
  operatorKbs,
  operatorRestoreKb,
  OPERATOR_TEAMS_PAGE_DEFAULT,
  OPERATOR_TEAMS_PAGE_MAX,
  operatorTeams,
  publicKbs,
  updateTeamSettings,
} from '../atmina/index.ts';
import {
  acceptBrainReview,
  approverPasswordEnv,
  brainDecisionJson,
  brainDetailJson,
  brainItemJson,
  importBrain,
  isBrainReview,
  listBrainReviews,
  OPERATOR_BRAIN_NODES_PAGE_DEFAULT,
  OPERATOR_BRAIN_NODES_PAGE_MAX,
  OPERATOR_BRAIN_RELATIONS_PAGE_DEFAULT,
  OPERATOR_BRAIN_RELATIONS_PAGE_MAX,
  operatorBrainNodes,
  operatorBrainRelations,
  rejectBrainReview,
  showBrainReview,
} from '../brain/index.ts';
import { AuditTrail } from '../kernel/audit/trail.ts';
import { checkReadiness } from '../kernel/health/readiness.ts';
import { applyOrgFile } from '../org-sections.ts';
import { projectionStatus } from '../kernel/outbox/outbox.ts';
import { findTenant, importingPerson, requireTenant } from '../kernel/directory/directory.ts';
import {
  OPERATOR_GROUPS_PAGE_DEFAULT,
  OPERATOR_GROUPS_PAGE_MAX,
  OPERATOR_PRINCIPALS_PAGE_DEFAULT,
  OPERATOR_PRINCIPALS_PAGE_MAX,
  operatorGroups,
  operatorPrincipals,
} from '../kernel/directory/operator-directory.ts';
import { CARRIED_IDS_MAX, carriedVersions } from '../kernel/imports/provenance.ts';
import { iso, isoOrNull } from '../kernel/instants.ts';
import { rebuildProjection } from '../kernel/outbox/rebuild.ts';
import type { RebuildReport } from '../kernel/outbox/rebuild.ts';
import type { Services } from '../kernel/services.ts';
import type { Caller } from '../kernel/access/caller.ts';
import type { Scope } from '../kernel/access/scopes.ts';
import { parseDuration } from '../kernel/tokens/duration.ts';
import { DEFAULT_TOKEN_TTL_MS, createToken, listTokens, revokeToken } from '../kernel/tokens/tokens.ts';
import { isKgwError, validation } from '../kernel/errors.ts';
import { appendToStage, beginStage, takeStage } from './stage.ts';
import { issuesText } from '../kernel/zod-issues.ts';
import { migrate } from '../store/migrate.ts';
import { scopeCatalogue } from '../products.ts';

/** The shape of ReferencedFiles (src/kernel/org/referenced-files.ts). */
const referencedFiles = z.record(
  z.string(),
  z.union([
    z.object({ file: z.string() }).strict(),
    z.object({ folder: z.array(z.object({ path: z.string(), data_base64: z.string() }).strict()) }).strict(),
    z.object({ errors: z.array(z.string()) }).strict(),
  ]),
);

/**
 * What may stand in an operation's result: what JSON.stringify and JSON.parse give back with
 * the same type. Through a gateway (/admin/rpc) a result reaches the CLI as JSON, where a Date
 * would arrive as a string and a Map as {}, while run on the store directly it stays what `run`
 * returned. Rather than type the two paths apart, every result is required to be JSON (an
 * operation writes a core's Dates as ISO strings, as each product's review-json.ts does): then `run`'s return type is honest for both.
 * Anything with methods (a Date, a Map, a Buffer) fails here, as do bigint, symbol and functions;
 * what no type shows (NaN, Infinity, which JSON makes null) is not caught.
 */
type JsonSafe<T> = T extends string | number | boolean | null | undefined
  ? T
  : T extends (...args: never[]) => unknown
    ? never
    : T extends object
      ? { [K in keyof T]: JsonSafe<T[K]> }
      : never;

/**
 * A caller's arguments are only read (zod copies what it parses), so a caller may hand in
 * readonly arrays and objects, such as the ReferencedFiles of `kgw apply`.
 */
type ReadonlyDeep<T> = T extends object ? { readonly [K in keyof T]: ReadonlyDeep<T[K]> } : T;

/** One administrative operation: its arguments' schema, checked on every call, and its work. */
interface OpDef<Args extends z.ZodType, Result> {
  readonly args: Args;
  /** Sees the arguments as parsed: z.output, so a field with .default() is always there. */
  readonly run: (services: Services, args: z.output<Args>) => Promise<Result>;
}

/** Ties `run`'s arguments to the schema and keeps its result type (which must be JSON: see below). */
function defineOp<Args extends z.ZodType, Result>(def: OpDef<Args, Result>): OpDef<Args, Result> {
  return def;
}

/**
 * The audit trail of an operation's write: every operation is run by `kgw` (on the store
 * directly or through /admin/rpc), so it is audited on the CLI surface.
 */
const cliTrail = (services: Services): AuditTrail => AuditTrail.forSurface(services.audit, 'cli');

/** The person of the tenant an import or a file operation acts as (`--as`), whose roles decide, and the trail that names them. */
async function actingPerson(services: Services, tenant: string, as: string, scopes?: readonly Scope[]): Promise<{ caller: Caller; audit: AuditTrail }> {
  const caller = await importingPerson(services.db, tenant, as, scopes);
  return { caller, audit: cliTrail(services).about({ tenantId: caller.tenant.id, principalId: caller.principal.id }) };
}

/** One tenant of KGW_ANONYMOUS_SEARCH_TENANTS: publicKbs is null when the tenant does not exist. */
export interface AnonymousTenantStatus {
  readonly tenant: string;
  readonly exists: boolean;
  readonly publicKbs: number | null;
}

async function anonymousTenants(services: Services): Promise<AnonymousTenantStatus[]> {
  const statuses: AnonymousTenantStatus[] = [];
  for (const slug of services.config.anonymousSearch.tenants) {
    const tenant = await findTenant(services.db, slug);
    // The same query the anonymous endpoint searches through, so the count is what it would see.
    const kbs = tenant === undefined ? null : (await publicKbs(services.db, tenant)).length;
    statuses.push({ tenant: slug, exists: tenant !== undefined, publicKbs: kbs });
  }
  return statuses;
}

/**
 * Administrative operations, the same whether the CLI runs them on the store directly or
 * through a running gateway's admin endpoint (when that gateway holds the data folder).
 */
const definitions = {
  migrate: defineOp({
    args: z.object({}).strict(),
    run: (services) => migrate(services.db),
  }),
  apply: defineOp({
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
    run: (services, args) =>
      applyOrgFile(
        services.db,
        { source: args.source, fileName: args.fileName, dryRun: args.dryRun, env: args.env, files: args.files, blob: services.blob },
        cliTrail(services),
      ),
  }),
  'tenant.show': defineOp({
    args: z.object({ tenant: z.string() }).strict(),
    run: async (services, args) => {
      const { slug, name, language } = await requireTenant(services.db, args.tenant);
      return { tenant: slug, name, language };
    },
  }),
  'brain.import': defineOp({
    args: z.object({ tenant: z.string(), source: z.string(), fileName: z.string().optional(), dryRun: z.boolean().default(false) }).strict(),
    run: (services, args) => importBrain(services.db, args, cliTrail(services)),
  }),
  'token.create': defineOp({
    args: z
      .object({ tenant: z.string(), principal: z.string(), scopes: z.string(), ttl: z.string().optional(), label: z.string().max(200).optional() })
      .strict(),
    run: (services, args) =>
      createToken(
        services.db,
        {
          tenant: args.tenant,
          principal: args.principal,
          scopes: scopeCatalogue.normalize(args.scopes),
          ttlMs: args.ttl === undefined ? DEFAULT_TOKEN_TTL_MS : parseDuration(args.ttl),
          label: args.label,
        },
        cliTrail(services),
      ),
  }),
  'token.list': defineOp({
    args: z.object({ tenant: z.string().optional(), all: z.boolean().default(false) }).strict(),
    run: (services, args) => listTokens(services.db, { tenant: args.tenant, includeRevoked: args.all }),
  }),
  'token.revoke': defineOp({
    args: z.object({ id: z.string() }).strict(),
    run: (services, args) => revokeToken(services.db, args.id, cliTrail(services)),
  }),
  'oauth.login-link': defineOp({
    args: z.object({ tenant: z.string(), email: z.string() }).strict(),
    run: (services, args) => createLoginLink(services.db, services.config, args.tenant, args.email, cliTrail(services)),
  }),
  readiness: defineOp({
    args: z.object({}).strict(),
    run: (services) => checkReadiness(services.probes),
  }),
  // The configuration of the process that runs the operations (through /admin/rpc, the
  // gateway's), as kgw doctor prints it: where its data is and how it is reached; no secrets.
  'config.summary': defineOp({
    args: z.object({}).strict(),
    run: (services) =>
      Promise.resolve({
        dataDir: services.config.dataDir,
        publicUrl: services.config.publicUrl,
        listen: `${services.config.host}:${services.config.port}`,
      }),
  }),
  'projections.status': defineOp({
    args: z.object({}).strict(),
    run: (services) =>
      projectionStatus(
        services.db,
        services.projections.projections.map((p) => p.name),
      ),
  }),
  // The tenants KGW_ANONYMOUS_SEARCH_TENANTS opens to anonymous search, of this process's own
  // configuration (through /admin/rpc, the gateway's): whether each exists and how many live
  // public KBs an anonymous connection would search (kgw doctor).
  'anonymous.tenants': defineOp({
    args: z.object({}).strict(),
    run: (services) => anonymousTenants(services),
  }),
  'projections.rebuild': defineOp({
    // names: the projections to rebuild; omitted means every configured one.
    args: z.object({ names: z.array(z.string()).optional() }).strict(),
    run: (services, args) => rebuildProjections(services, args.names),
  }),
  // Human review of agents' drafts and proposals (kgw review; src/alignbase/context/review.ts).
  'review.list': defineOp({
    args: z.object({ tenant: z.string() }).strict(),
    run: async (services, args) => (await listReviews(services.db, args)).map(reviewItemJson),
  }),
  'review.show': defineOp({
    args: z.object({ tenant: z.string(), id: z.string() }).strict(),
    run: async (services, args) => reviewDetailJson(await showReview(services.db, args)),
  }),
  'review.accept': defineOp({
    // as: the reviewing person's email; omitted, the decision is the CLI operator's.
    args: z
      .object({ tenant: z.string(), id: z.string(), as: z.string().optional(), publish: z.boolean().default(false), force: z.boolean().default(false) })
      .strict(),
    run: async (services, args) => acceptResultJson(await acceptReview(services.db, cliTrail(services), args)),
  }),
  'review.reject': defineOp({
    args: z.object({ tenant: z.string(), id: z.string(), as: z.string().optional(), note: z.string().optional() }).strict(),
    run: async (services, args) => rejectResultJson(await rejectReview(services.db, cliTrail(services), args)),
  }),
  // The Company Brain inbox (src/brain/review.ts): kgw review shows its items beside the
  // drafts and proposals, and decides on them with a manager's or admin's --as.
  'review.brain.list': defineOp({
    args: z.object({ tenant: z.string() }).strict(),
    run: async (services, args) => (await listBrainReviews(services.db, args)).map(brainItemJson),
  }),
  'review.brain.is': defineOp({
    args: z.object({ tenant: z.string(), id: z.string() }).strict(),
    run: (services, args) => isBrainReview(services.db, args),
  }),
  'review.brain.show': defineOp({
    args: z.object({ tenant: z.string(), id: z.string() }).strict(),
    run: async (services, args) => brainDetailJson(await showBrainReview(services.db, args)),
  }),
  // The variable an approver's mailbox password is in, for the CLI to send with the decision.
  'review.brain.password-env': defineOp({
    args: z.object({ tenant: z.string(), as: z.string().optional() }).strict(),
    run: (services, args) => approverPasswordEnv(services.db, args),
  }),
  'review.brain.accept': defineOp({
    // env: only the approver's mailbox password variable, from the kgw review accept process.
    // apply: a brain file read by the kgw review accept process (--apply FILE).
    args: z
      .object({
        tenant: z.string(),
        id: z.string(),
        as: z.string().optional(),
        env: z.record(z.string(), z.string()).default({}),
        apply: z.object({ source: z.string(), fileName: z.string().optional() }).strict().optional(),
      })
      .strict(),
    run: async (services, { env, ...args }) =>
      brainDecisionJson(
        await acceptBrainReview(services.db, cliTrail(services), args, {
          dataDir: services.config.dataDir,
          defaultImapUrl: services.config.mail.imapUrl,
          env,
        }),
      ),
  }),
  'review.brain.reject': defineOp({
    args: z.object({ tenant: z.string(), id: z.string(), as: z.string().optional(), note: z.string().max(4000).optional() }).strict(),
    run: async (services, args) => brainDecisionJson(await rejectBrainReview(services.db, cliTrail(services), args)),
  }),
  // An agent's messages for an administrator, marking nothing read (kgw inbox; src/alignbase/messages/admin.ts),
  // each as read_inbox gives it.
  'inbox.list': defineOp({
    args: z.object({ tenant: z.string(), agent: z.string(), all: z.boolean().default(false) }).strict(),
    run: async (services, args) => inboxListing(await adminInbox(services.db, args)),
  }),
  // Activity installations and events, and the tenant's Activity switch (kgw activity; src/alignbase/activity/admin.ts).
  'activity.list': defineOp({
    args: z.object({ tenant: z.string(), agent: z.string().optional(), limit: z.number().int().optional() }).strict(),
    run: (services, args) => listActivity(services.db, args),
  }),
  'activity.switch': defineOp({
    args: z.object({ tenant: z.string(), enabled: z.boolean() }).strict(),
    run: (services, args) => setActivityEnabled(services.db, cliTrail(services), args),
  }),
  // Atmina Knowledge Bases for the operator (kgw kb, kgw files; src/atmina/kb/operator.ts).
  'kb.list': defineOp({
    args: z.object({ tenant: z.string().optional(), archived: z.boolean().default(false) }).strict(),
    run: async (services, args) => (await operatorKbs(services.db, args)).map(kbJson),
  }),
  'kb.show': defineOp({
    args: z.object({ tenant: z.string().optional(), kb: z.string() }).strict(),
    run: async (services, args) => kbJson(await operatorKb(services.db, args)),
  }),
  'kb.restore': defineOp({
    args: z.object({ tenant: z.string().optional(), kb: z.string() }).strict(),
    run: async (services, args) => {
      const { tenant, kb, restored } = await operatorRestoreKb(services.db, args, cliTrail(services));
      return { tenant, ...kbFields(kb), restored };
    },
  }),
  // One page of a KB's live files with their versions, for kgw export.
  'kb.files': defineOp({
    args: z
      .object({
        tenant: z.string().optional(),
        kb: z.string(),
        after: z.string().optional(),
        limit: z.number().int({ error: 'must be a whole number' }).min(1).max(OPERATOR_FILES_PAGE_MAX).default(OPERATOR_FILES_PAGE_DEFAULT),
      })
      .strict(),
    run: async (services, args) => {
      const { tenant, kb, files, next } = await operatorKbFiles(services.db, args);
      return {
        tenant,
        ...kbFields(kb),
        files: files.map((file) => ({
          file_id: file.id,
          path: file.path,
          kind: file.kind,
          media_type: file.mediaType,
          sha256: file.sha256,
          size_bytes: file.sizeBytes,
          version: file.version,
          versions: file.versions.map((v) => ({
            version: v.version,
            path: v.path,
            sha256: v.sha256,
            size_bytes: v.sizeBytes,
            media_type: v.mediaType,
            operation: v.operation,
            author: v.author,
            created_at: iso(v.createdAt),
          })),
        })),
        next: next ?? null,
      };
    },
  }),
  // Every Knowledge, Skill, Memory and Artifact of a tenant with its versions (kgw export).
  'context.resources': defineOp({
    args: z
      .object({
        tenant: z.string(),
        after: z.string().optional(),
        limit: z.number().int({ error: 'must be a whole number' }).min(1).max(OPERATOR_CONTEXT_PAGE_MAX).default(OPERATOR_CONTEXT_PAGE_DEFAULT),
      })
      .strict(),
    run: async (services, args) => {
      const { tenant, resources, next } = await operatorContext(services.db, args);
      return {
        tenant,
        resources: resources.map((r) => ({
          id: r.id,
          type: r.type,
          name: r.name,
          status: r.status,
          latest_version: r.latestVersion,
          published_version: r.publishedVersion ?? null,
          review_by: r.reviewBy ?? null,
          expires_at: r.expiresAt ?? null,
          content: r.content,
          routes: [...r.routes],
          grants: r.grants.map((g) => ({ to: g.to, role: g.role })),
          versions: r.versions.map((v) => ({
            version: v.version,
            sha256: v.sha256,
            size_bytes: v.sizeBytes,
            authority: v.authority ?? null,
            description: v.description ?? null,
            source_task: v.sourceTask ?? null,
            files: v.attachments.map((a) => ({ path: a.path, media_type: a.mediaType, size_bytes: a.size, sha256: a.sha256 })),
            author: v.author,
            created_at: iso(v.createdAt),
          })),
        })),
        next: next ?? null,
      };
    },
  }),
  'context.file': defineOp({
    args: z.object({ tenant: z.string(), resource_id: z.string(), version: z.number().int().min(1), path: z.string() }).strict(),
    run: async (services, args) => {
      const { sha256, bytes } = await operatorContextFile(services.db, services.blob, {
        tenant: args.tenant,
        resourceId: args.resource_id,
        version: args.version,
        path: args.path,
      });
      return { sha256, size_bytes: bytes.length, data_base64: bytes.toString('base64') };
    },
  }),
  // The tenant's people and agents with what the org file sets on them, never a password (kgw export folder's org.yaml).
  'directory.principals': defineOp({
    args: z
      .object({
        tenant: z.string(),
        after: z.string().optional(),
        limit: z.number().int({ error: 'must be a whole number' }).min(1).max(OPERATOR_PRINCIPALS_PAGE_MAX).default(OPERATOR_PRINCIPALS_PAGE_DEFAULT),
      })
      .strict(),
    run: async (services, args) => {
      const { tenant, principals, next } = await operatorPrincipals(services.db, args);
      return {
        tenant,
        principals: principals.map((p) => ({
          id: p.id,
          kind: p.kind,
          name: p.name,
          email: p.email,
          owner: p.owner,
          tier: p.tier,
          departments: [...p.departments],
          projects: [...p.projects],
          brain_role: p.brainRole,
          policy_max_team_role: p.policyMaxTeamRole,
          mailbox: p.mailbox === null ? null : { ...p.mailbox },
          admin: p.tenantAdmin,
        })),
        next: next ?? null,
      };
    },
  }),
  // The tenant's groups, each with its members (kgw export folder's org.yaml).
  'directory.groups': defineOp({
    args: z
      .object({
        tenant: z.string(),
        after: z.string().optional(),
        limit: z.number().int({ error: 'must be a whole number' }).min(1).max(OPERATOR_GROUPS_PAGE_MAX).default(OPERATOR_GROUPS_PAGE_DEFAULT),
      })
      .strict(),
    run: async (services, args) => {
      const { tenant, groups, next } = await operatorGroups(services.db, args);
      return { tenant, groups: groups.map((g) => ({ id: g.id, name: g.name, members: [...g.members] })), next: next ?? null };
    },
  }),
  // The tenant's Atmina teams, each with its members, roles and shares (kgw export folder's org.yaml).
  'team.list': defineOp({
    args: z
      .object({
        tenant: z.string(),
        after: z.string().optional(),
        limit: z.number().int({ error: 'must be a whole number' }).min(1).max(OPERATOR_TEAMS_PAGE_MAX).default(OPERATOR_TEAMS_PAGE_DEFAULT),
      })
      .strict(),
    run: async (services, args) => {
      const { tenant, teams, next } = await operatorTeams(services.db, args);
      return {
        tenant,
        teams: teams.map((t) => ({
          id: t.id,
          slug: t.slug,
          name: t.name,
          members: t.members.map((m) => ({ member: m.member, role: m.role })),
          shares: t.shares.map((s) => ({ with: s.with, role: s.role })),
        })),
        next: next ?? null,
      };
    },
  }),
  // The tenant's grants on a whole type (all_knowledge …); a resource's own come with context.resources (kgw export folder's org.yaml).
  'context.type-grants': defineOp({
    args: z.object({ tenant: z.string() }).strict(),
    run: async (services, args) => {
      const { tenant, grants } = await operatorTypeGrants(services.db, args);
      return { tenant, grants: grants.map((g) => ({ to: g.to, on: g.on, role: g.role })) };
    },
  }),
  // Every grant and route as an org file names them, and those it cannot name (the console's org file).
  'context.access': defineOp({
    args: z.object({ tenant: z.string() }).strict(),
    run: async (services, args) => {
      const { tenant, grants, routes, leftOut } = await operatorAccess(services.db, args);
      return {
        tenant,
        grants: grants.map((g) => ({ to: g.to, on: g.on, role: g.role })),
        routes: routes.map((r) => ({ deliver: r.deliver, to: r.to })),
        left_out: leftOut.map((l) => ({ name: l.name, reason: l.reason })),
      };
    },
  }),
  // One page of the tenant's Company Brain nodes, every tier (kgw export folder's brain file).
  'brain.nodes': defineOp({
    args: z
      .object({
        tenant: z.string(),
        after: z.string().optional(),
        limit: z.number().int({ error: 'must be a whole number' }).min(1).max(OPERATOR_BRAIN_NODES_PAGE_MAX).default(OPERATOR_BRAIN_NODES_PAGE_DEFAULT),
      })
      .strict(),
    run: async (services, args) => {
      const { tenant, nodes, next } = await operatorBrainNodes(services.db, args);
      return {
        tenant,
        nodes: nodes.map((n) => ({
          id: n.id,
          type: n.type,
          title: n.title,
          summary: n.summary,
          access: n.access,
          department: n.department,
          project: n.project,
          metadata: { ...n.metadata },
          tags: [...n.tags],
          verified_at: n.verifiedAt,
          review_by: n.reviewBy,
          mark: n.mark,
        })),
        next: next ?? null,
      };
    },
  }),
  // One page of the tenant's Company Brain relations, ends named as a brain file names them (kgw export folder's brain file).
  'brain.relations': defineOp({
    args: z
      .object({
        tenant: z.string(),
        after: z.string().optional(),
        limit: z.number().int({ error: 'must be a whole number' }).min(1).max(OPERATOR_BRAIN_RELATIONS_PAGE_MAX).default(OPERATOR_BRAIN_RELATIONS_PAGE_DEFAULT),
      })
      .strict(),
    run: async (services, args) => {
      const { tenant, relations, next } = await operatorBrainRelations(services.db, args);
      return {
        tenant,
        relations: relations.map((r) => ({ from: r.from, verb: r.verb, to: r.to, mark: r.mark, unresolved: r.unresolved })),
        next: next ?? null,
      };
    },
  }),
  // What earlier imports carried of a source's items (kgw import mcp reads only what is newer).
  'imports.carried': defineOp({
    args: z.object({ tenant: z.string(), source: z.string(), kind: z.string(), source_ids: z.array(z.string()).max(CARRIED_IDS_MAX) }).strict(),
    run: async (services, args) => {
      const tenant = await requireTenant(services.db, args.tenant);
      const carried = await carriedVersions(services.db, tenant.id, args.kind, args.source, args.source_ids);
      return Object.fromEntries([...carried].map(([id, item]) => [id, { local_id: item.localId, source_version: item.sourceVersion }]));
    },
  }),
  // A team's settings changed as a person of the tenant, whose Admin role in the team decides as
  // update_team_settings's caller's does (kgw import mcp, from the source's get_team_settings).
  // The values are those the tool admits, checked here too so that a dry run, which only reads
  // the settings (with the same role check) and says what would change, refuses what the write would.
  'team.settings': defineOp({
    args: z
      .object({
        tenant: z.string(),
        as: z.string(),
        team: z.string(),
        dry_run: z.boolean().default(false),
        audit_query_text: z.enum(AUDIT_QUERY_TEXT).optional(),
        contribution_note_days: z.number().int({ error: 'must be a whole number' }).min(CONTRIBUTION_NOTE_DAYS.min).max(CONTRIBUTION_NOTE_DAYS.max).optional(),
        default_kb_visibility: z.enum(KB_VISIBILITIES).optional(),
      })
      .strict(),
    run: async (services, args) => {
      const asked = {
        audit_query_text: args.audit_query_text,
        contribution_note_days: args.contribution_note_days,
        default_kb_visibility: args.default_kb_visibility,
      };
      if (Object.values(asked).every((value) => value === undefined))
        throw validation('bad arguments for team.settings: give at least one of audit_query_text, contribution_note_days, default_kb_visibility');
      const { caller, audit } = await actingPerson(services, args.tenant, args.as);
      if (args.dry_run) {
        const view = await getTeamSettings(services.db, caller, { team: args.team });
        const now = teamSettingsJson(view.settings);
        // In the order and the words update_team_settings's `changed` has.
        const changed: string[] = (Object.keys(now) as (keyof typeof now)[]).filter((key) => asked[key] !== undefined && asked[key] !== now[key]);
        const next = {
          audit_query_text: asked.audit_query_text ?? now.audit_query_text,
          contribution_note_days: asked.contribution_note_days ?? now.contribution_note_days,
          default_kb_visibility: asked.default_kb_visibility ?? now.default_kb_visibility,
        };
        return { team: view.team.slug, changed, settings: next };
      }
      const updated = await updateTeamSettings(
        services.db,
        caller,
        {
          team: args.team,
          auditQueryText: asked.audit_query_text,
          contributionNoteDays: asked.contribution_note_days,
          defaultKbVisibility: asked.default_kb_visibility,
        },
        audit,
      );
      return { team: updated.team.slug, changed: [...updated.changed], settings: teamSettingsJson(updated.settings) };
    },
  }),
  // A KB file moved as a person of the tenant (kgw import mcp, after the source moved it).
  'kb.move': defineOp({
    args: z.object({ tenant: z.string(), kb: z.string(), as: z.string(), file_id: z.string(), to_path: z.string() }).strict(),
    run: async (services, args) => {
      const { caller, audit } = await actingPerson(services, args.tenant, args.as);
      const moved = await moveFile(services, caller, { kbId: args.kb, fileId: args.file_id, toPath: args.to_path }, audit);
      return { file_id: moved.file.id, from_path: moved.fromPath, path: moved.file.path, changed: moved.changed };
    },
  }),
  // One Alignbase resource with its versions from another endpoint, as a person of the tenant (kgw import mcp).
  'context.import': defineOp({
    args: z
      .object({
        tenant: z.string(),
        as: z.string(),
        dry_run: z.boolean().default(false),
        source: z.string(),
        type: z.enum(['knowledge', 'skill', 'memory', 'artifact']),
        source_id: z.string(),
        name: z.string(),
        published_version: z.number().int().min(1).optional(),
        review_by: z.string().optional(),
        expires_at: z.string().optional(),
        versions: z
          .array(
            z
              .object({
                version: z.number().int().min(1),
                content: z.string(),
                authority: z.enum(['informational', 'must_follow']).optional(),
                source_task: z.string().optional(),
                attachments: z.array(z.object({ path: z.string(), data_base64: z.string() }).strict()).optional(),
                author: z.string().optional(),
                at: z.string().optional(),
              })
              .strict(),
          )
          .max(IMPORT_VERSIONS_MAX),
      })
      .strict(),
    run: async (services, args) => {
      const { caller, audit } = await actingPerson(services, args.tenant, args.as, ['context.read', 'context.write']);
      const result = await importContextResource(
        services,
        caller,
        {
          source: args.source,
          type: args.type,
          sourceId: args.source_id,
          name: args.name,
          versions: args.versions.map((v) => ({ ...v, sourceTask: v.source_task })),
          publishedVersion: args.published_version,
          reviewBy: args.review_by,
          expiresAt: args.expires_at,
          dryRun: args.dry_run,
        },
        audit,
      );
      return { resource_id: result.resourceId ?? null, outcome: result.outcome, saved: result.saved, published: result.published };
    },
  }),
  // An open draft of an imported Knowledge or Skill, proposed again here as a person of the tenant (kgw import mcp).
  'context.import-draft': defineOp({
    args: z
      .object({
        tenant: z.string(),
        as: z.string(),
        dry_run: z.boolean().default(false),
        source: z.string(),
        type: z.enum(['knowledge', 'skill']),
        source_id: z.string(),
        draft_id: z.string(),
        base_version: z.number().int().min(1),
        content: z.string(),
        rationale: z.string().optional(),
        author: z.string().optional(),
        at: z.string().optional(),
      })
      .strict(),
    run: async (services, args) => {
      const { caller, audit } = await actingPerson(services, args.tenant, args.as, ['context.read', 'context.write']);
      const result = await importContextDraft(
        services,
        caller,
        {
          source: args.source,
          type: args.type,
          sourceId: args.source_id,
          draftId: args.draft_id,
          baseVersion: args.base_version,
          content: args.content,
          rationale: args.rationale,
          author: args.author,
          at: args.at,
          dryRun: args.dry_run,
        },
        audit,
      );
      return { draft_id: result.draftId ?? null, outcome: result.outcome };
    },
  }),
  // A batch of files into a KB as a person of the tenant (kgw import folder).
  // Bytes of a file too large for one request, staged in pieces for kb.import (src/admin/stage.ts).
  'stage.begin': defineOp({
    args: z.object({ size: z.number().int(), sha256: z.string() }).strict(),
    run: async (services, args) => ({ stage_id: await beginStage(services.config.dataDir, args) }),
  }),
  'stage.append': defineOp({
    args: z.object({ stage_id: z.string(), offset: z.number().int(), data_base64: z.base64({ error: 'must be base64' }) }).strict(),
    run: async (services, args) => ({
      received: await appendToStage(services.config.dataDir, args.stage_id, args.offset, Buffer.from(args.data_base64, 'base64')),
    }),
  }),
  // A batch of files into a KB as a person of the tenant (kgw import folder, kgw import mcp):
  // each with its bytes, or the stage that holds them.
  'kb.import': defineOp({
    args: z
      .object({
        tenant: z.string(),
        kb: z.string(),
        as: z.string(),
        dry_run: z.boolean().default(false),
        files: z
          .array(
            z
              .object({
                path: z.string(),
                data_base64: z.base64({ error: 'must be base64' }).optional(),
                stage_id: z.string().optional(),
                provenance: z
                  .object({
                    source: z.string(),
                    source_id: z.string(),
                    source_version: z.number().int(),
                    author: z.string().optional(),
                    at: z.string().optional(),
                  })
                  .strict()
                  .optional(),
              })
              .strict()
              .refine((file) => (file.data_base64 === undefined) !== (file.stage_id === undefined), 'give data_base64 or stage_id, not both'),
          )
          .max(IMPORT_BATCH_FILES_MAX),
      })
      .strict(),
    run: async (services, args) => {
      const { caller, audit } = await actingPerson(services, args.tenant, args.as);
      // A stage that cannot be taken refuses its file alone, in its place in the answer.
      const taken = await Promise.all(
        args.files.map(async (file): Promise<{ bytes: Buffer } | { refused: string }> => {
          if (file.stage_id === undefined) return { bytes: Buffer.from(file.data_base64 ?? '', 'base64') };
          try {
            return { bytes: await takeStage(services.config.dataDir, file.stage_id) };
          } catch (error) {
            if (!isKgwError(error)) throw error;
            return { refused: error.message };
          }
        }),
      );
      const files = args.files.flatMap((file, i) => {
        const got = taken[i];
        if (got === undefined || 'refused' in got) return [];
        const provenance = file.provenance && {
          source: file.provenance.source,
          sourceId: file.provenance.source_id,
          sourceVersion: file.provenance.source_version,
          author: file.provenance.author,
          at: file.provenance.at,
        };
        return [{ path: file.path, bytes: got.bytes, provenance }];
      });
      const result = await importKbFiles(services, caller, { kb: args.kb, files, dryRun: args.dry_run }, audit);
      const imported = result.files[Symbol.iterator]();
      const answered = args.files.map((file, i) => {
        const got = taken[i];
        return got !== undefined && 'refused' in got ? { path: file.path, error: got.refused } : imported.next().value!;
      });
      return { tenant: caller.tenant.slug, kb_id: result.kbId, kb_slug: result.slug, files: answered };
    },
  }),
  'files.get': defineOp({
    args: z.object({ tenant: z.string().optional(), kb: z.string(), path: z.string() }).strict(),
    run: async (services, args) => {
      const { tenant, kb, file, bytes } = await operatorFileBytes(services, args);
      // JSON carries the bytes as base64, through the admin endpoint as on the store directly.
      return {
        tenant,
        kb_id: kb.id,
        kb_slug: kb.slug,
        file_id: file.id,
        path: file.path,
        version: file.version,
        sha256: file.sha256,
        size_bytes: file.sizeBytes,
        data_base64: bytes.toString('base64'),
      };
    },
  }),
};

/** A team's settings in the words of the Atmina tools (get_team_settings). */
function teamSettingsJson(settings: TeamSettings) {
  return {
    audit_query_text: settings.auditQueryText,
    contribution_note_days: settings.contributionNoteDays,
    default_kb_visibility: settings.defaultKbVisibility,
  };
}

/** A KB as kgw kb prints it: JSON of the core's Kb. */
function kbFields(kb: Kb) {
  return {
    kb_id: kb.id,
    slug: kb.slug,
    name: kb.name,
    description: kb.description,
    visibility: kb.visibility,
    location_policy: kb.locationPolicy,
    team: kb.team.slug,
    created_at: iso(kb.createdAt),
    updated_at: iso(kb.updatedAt),
    archived_at: isoOrNull(kb.archivedAt),
  };
}

function kbJson(listing: OperatorKbListing) {
  return { tenant: listing.tenant, ...kbFields(listing.kb), files: listing.totals.files, bytes: listing.totals.bytes };
}

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

type Definitions = typeof definitions;
export type OpName = keyof Definitions;
/** What a caller passes: z.input, so a field with .default() may be left out. */
export type OpArgs<N extends OpName> = ReadonlyDeep<z.input<Definitions[N]['args']>>;
export type OpResult<N extends OpName> = Definitions[N] extends OpDef<z.ZodType, infer Result> ? Result : never;
/** An operation's arguments may be left out when it has none that are required. */
export type OpCallArgs<N extends OpName> = Record<never, never> extends OpArgs<N> ? [args?: OpArgs<N>] : [args: OpArgs<N>];
/**
 * Runs administrative operations, wherever the store is reachable from this process: typed by
 * the operation's name, with the arguments its schema takes and the result its `run` returns.
 */
export type OpRunner = <N extends OpName>(op: N, ...args: OpCallArgs<N>) => Promise<OpResult<N>>;

/** Every item of a paged operation (its `next` names where the next page starts), page by page. */
export async function allPages<T>(page: (after: string | undefined) => Promise<{ items: readonly T[]; next: string | null }>): Promise<T[]> {
  const items: T[] = [];
  let after: string | undefined;
  do {
    const got = await page(after);
    items.push(...got.items);
    after = got.next ?? undefined;
  } while (after !== undefined);
  return items;
}

// Every result must be JSON (JsonSafe): an operation whose result is not is named by tsc here,
// as a type that does not satisfy `never`. Checked here rather than in defineOp, where the
// result type is not yet inferred when a constraint on it is checked.
type NotJson = { [N in OpName]: [OpResult<N>] extends [JsonSafe<OpResult<N>>] ? never : N }[OpName];
type OnlyNever<T extends never> = T;
type _EveryResultIsJson = OnlyNever<NotJson>;

/** The operations with each one's own types, so that runOp can call the one it is named without a cast. */
const ops: { readonly [N in OpName]: OpDef<z.ZodType<z.output<Definitions[N]['args']>, z.input<Definitions[N]['args']>>, OpResult<N>> } = definitions;
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

/** What unstorableText finds, said as an issue of the argument it is in. */
const UNSTORABLE = 'must not contain NUL (U+0000) or a lone surrogate';

/** Validates the arguments and runs the operation; bad arguments are a validation error. */
export async function runOp<N extends OpName>(services: Services, name: N, args: unknown): Promise<OpResult<N>> {
  const definition = ops[name];
  const parsed = definition.args.safeParse(args ?? {});
  if (!parsed.success) throw validation(`bad arguments for ${name}: ${issuesText(parsed.error.issues, 'phrase')}`);
  // Checked after the schema, which bounds the depth: such text would otherwise fail in the store.
  const unstorable = unstorableText(parsed.data, []);
  if (unstorable) throw validation(`bad arguments for ${name}: ${issuesText([{ path: unstorable, message: UNSTORABLE }], 'phrase')}`);
  return definition.run(services, parsed.data);
}
