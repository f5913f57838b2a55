import assert from 'node:assert/strict';
import { SKILL_MD, b64 } from '../support/fixtures.ts';
import type { RunningGateway } from '../support/gateway.ts';
import { ACME_ORG, GLOBEX_ORG, seedOrg } from '../support/gateway.ts';
import type { Agent } from '../support/harness.ts';
import { OrgGateway, s3GatewayEnv } from '../support/harness.ts';
import type { StoreBackend, TestStore } from '../support/stores.ts';
import type { Db } from '../../src/store/db.ts';

export * from '../support/harness.ts';

/*
 * Shared setup of the Alignbase end-to-end suites: one store and one gateway per describe, the
 * suites' starting tenant (test/fixtures/acme.yaml) with the agents below, real tokens and the
 * MCP SDK's own client over HTTP on /alignbase/mcp.
 *
 * Agents and their whole-type roles (grants on single resources are added by the tests, once
 * the resources exist, through the org file's grants and routes sections):
 *
 *   admin-bot      Owner on All Knowledge and All Skills: makes the fixtures
 *   viewer-bot     Viewer on both
 *   proposer-bot   Proposer on both
 *   editor-bot     Editor on both
 *   publisher-bot  Publisher on both
 *   scoped-bot     nothing on the types; roles on single resources only
 *   outsider-bot   no role at all
 *   routed-bot     no role; receives Always routes directly
 *   fleet-bot      no role; receives Always routes through group fleet
 */

export const MCP_PATH = '/alignbase/mcp';
export const TENANT = 'acme';

export const BASE_ORG = `tenant: acme
name: Acme Inc.
language: en
people:
  - { email: alice@acme.test, name: Alice }
agents:
  - { name: admin-bot, owner: alice@acme.test }
  - { name: viewer-bot, owner: alice@acme.test }
  - { name: proposer-bot, owner: alice@acme.test }
  - { name: editor-bot, owner: alice@acme.test }
  - { name: publisher-bot, owner: alice@acme.test }
  - { name: scoped-bot, owner: alice@acme.test }
  - { name: outsider-bot, owner: alice@acme.test }
  - { name: routed-bot, owner: alice@acme.test }
  - { name: fleet-bot, owner: alice@acme.test }
groups:
  - { name: fleet, members: [fleet-bot] }
`;

const BASE_GRANTS = [
  ['admin-bot', 'owner'],
  ['viewer-bot', 'viewer'],
  ['proposer-bot', 'proposer'],
  ['editor-bot', 'editor'],
  ['publisher-bot', 'publisher'],
].flatMap(([to, role]) => [`{ to: ${to}, on: all_knowledge, role: ${role} }`, `{ to: ${to}, on: all_skills, role: ${role} }`]);

/** One grant line of the org file; `on` is all_knowledge, all_skills, knowledge:TITLE or skill:NAME. */
export const grant = (to: string, on: string, role: string): string => `{ to: ${JSON.stringify(to)}, on: ${JSON.stringify(on)}, role: ${role} }`;
/** One route line of the org file. */
export const route = (deliver: string, to: string): string => `{ deliver: ${JSON.stringify(deliver)}, to: ${JSON.stringify(to)} }`;

/** A second tenant whose agent holds Owner on everything of its own tenant. */
export const GLOBEX_WITH_GRANTS = `${GLOBEX_ORG}grants:
  - { to: globex-bot, on: all_knowledge, role: owner }
  - { to: globex-bot, on: all_skills, role: owner }
`;

/** The gateway of the tenant above (test/fixtures/acme.yaml plus this suite's agents), with grants and routes the tests add. */
export class Suite extends OrgGateway {
  readonly tenantId: string;
  readonly s3: boolean;
  readonly #grants: string[] = [];
  readonly #routes: string[] = [];

  private constructor(store: TestStore, running: RunningGateway, tenantId: string, s3: boolean) {
    super(store, running, TENANT, MCP_PATH);
    this.tenantId = tenantId;
    this.s3 = s3;
  }

  static async open(backend: StoreBackend, options: { globex?: boolean } = {}): Promise<Suite> {
    const env = s3GatewayEnv(backend);
    // The documented example org first (people, release-bot, group eng, team docs), then this suite's agents.
    const orgs = [ACME_ORG, `${BASE_ORG}grants:\n${BASE_GRANTS.map((g) => `  - ${g}`).join('\n')}\n`, ...(options.globex === true ? [GLOBEX_WITH_GRANTS] : [])];
    const { store, running } = await OrgGateway.launch(backend, orgs, env);
    const [tenant] = await store.db.query<{ id: string }>('SELECT id FROM tenants WHERE slug = $1', [TENANT]);
    assert.ok(tenant);
    return new Suite(store, running, tenant.id, Object.keys(env).length > 0);
  }

  /** Adds (or drops) grants and routes of the tenant's org file (whose grants and routes sections are complete lists) and applies it. */
  async access(input: {
    grants?: readonly string[];
    routes?: readonly string[];
    dropGrants?: readonly string[];
    dropRoutes?: readonly string[];
  }): Promise<void> {
    this.#grants.push(...(input.grants ?? []));
    this.#routes.push(...(input.routes ?? []));
    for (const [list, drop] of [
      [this.#grants, input.dropGrants],
      [this.#routes, input.dropRoutes],
    ] as const) {
      for (const line of drop ?? []) {
        const at = list.indexOf(line);
        assert.ok(at >= 0, `no ${line} to drop`);
        list.splice(at, 1);
      }
    }
    const lines = (items: readonly string[]) => (items.length === 0 ? ' []\n' : `\n${items.map((item) => `  - ${item}`).join('\n')}\n`);
    await seedOrg(this.db, `${BASE_ORG}grants:${lines([...BASE_GRANTS, ...this.#grants])}routes:${lines(this.#routes)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Fixtures and shapes

// SKILL.md and base64 as every suite builds them; the Alignbase suites take them from here.
export { SKILL_MD, b64 };

export interface CreatedKnowledge {
  knowledge_id: string;
  title: string;
  version_id: string;
  version: number;
  updated: boolean;
  published: boolean;
  created: boolean;
}

/** Creates a Knowledge as `agent` (default content, informational). */
export async function createKnowledge(agent: Agent, title: string, extra: Record<string, unknown> = {}): Promise<CreatedKnowledge> {
  return agent.ok<CreatedKnowledge>('write_knowledge', { title, expected_version: 0, content: `# ${title}\n\nVersion one.`, ...extra });
}

export interface CreatedSkill {
  skill_id: string;
  name: string;
  directory_name: string;
  version_id: string;
  version: number;
  created: boolean;
}

export async function createSkill(agent: Agent, name: string, extra: Record<string, unknown> = {}): Promise<CreatedSkill> {
  return agent.ok<CreatedSkill>('create_skill', { skill_md: SKILL_MD(name), ...extra });
}

const CAPABILITIES = { can_read: 'bool', can_draft: 'bool', can_edit: 'bool', can_publish: 'bool' } as const;
const LIST_FIELDS = {
  current_version_id: 'uuid',
  current_version: 'int',
  latest_version_id: 'uuid',
  latest_version: 'int',
  published_version_id: 'uuid?',
  published_version: 'int?',
  created_at: 'iso',
  updated_at: 'iso',
  current_version_created_at: 'iso',
  latest_version_created_at: 'iso',
  published_version_created_at: 'iso?',
  review_by: 'date?',
  expires_at: 'date?',
  status: 'status',
  publication_status: 'publication',
  has_unpublished_changes: 'bool',
  ...CAPABILITIES,
} as const;
const READ_FIELDS = {
  version_id: 'uuid',
  version: 'int',
  latest_version: 'int',
  published_version: 'int?',
  is_published_version: 'bool',
  has_unpublished_changes: 'bool',
  created_at: 'iso',
  updated_at: 'iso',
  version_created_at: 'iso',
  review_by: 'date?',
  expires_at: 'date?',
  status: 'status',
  publication_status: 'publication',
  ...CAPABILITIES,
} as const;

/** The spec's list_knowledge item. */
export const KNOWLEDGE_ITEM = { knowledge_id: 'uuid', title: 'string', ...LIST_FIELDS } as const;
/** The spec's read_knowledge output, plus authority and the attachment manifest (ours, docs/alignbase.md). */
export const KNOWLEDGE_READ = {
  knowledge_id: 'uuid',
  title: 'string',
  ...READ_FIELDS,
  content: 'string',
  authority: 'authority',
  attachment_format: 'string',
  attachments: 'array',
} as const;
export const KNOWLEDGE_WRITE = {
  knowledge_id: 'uuid',
  title: 'string',
  version_id: 'uuid',
  version: 'int',
  updated: 'bool',
  published: 'bool',
  created: 'bool',
} as const;
export const KNOWLEDGE_PUBLISH = { knowledge_id: 'uuid', title: 'string', version_id: 'uuid', version: 'int', published: 'bool' } as const;
/** The spec's list_skills item. */
export const SKILL_ITEM = { id: 'uuid', name: 'string', directory_name: 'string', description: 'string', ...LIST_FIELDS } as const;
/** The spec's read_skill output, plus install_metadata (ours: the provenance keys to record). */
export const SKILL_READ = {
  skill_id: 'uuid',
  name: 'string',
  directory_name: 'string',
  description: 'string',
  ...READ_FIELDS,
  skill_md: 'string',
  attachment_format: 'string',
  attachments: 'array',
  install_metadata: 'object',
} as const;
export const SKILL_CREATE = { skill_id: 'uuid', name: 'string', directory_name: 'string', version_id: 'uuid', version: 'int', created: 'bool' } as const;
export const SKILL_WRITE = { skill_id: 'uuid', name: 'string', directory_name: 'string', version_id: 'uuid', version: 'int', updated: 'bool' } as const;
export const SKILL_PUBLISH = { skill_id: 'uuid', name: 'string', version_id: 'uuid', version: 'int', published: 'bool' } as const;
const DRAFT_FIELDS = {
  draft_id: 'uuid',
  base_version: 'int',
  current_version: 'int',
  is_stale: 'bool',
  author_name: 'string?',
  author_email: 'string?',
  agent_name: 'string?',
  rationale: 'string?',
  created_at: 'iso',
  created_by_this_agent: 'bool',
} as const;
export const KNOWLEDGE_DRAFT_ITEM = { ...DRAFT_FIELDS, knowledge_id: 'uuid' } as const;
export const KNOWLEDGE_DRAFT_READ = { ...KNOWLEDGE_DRAFT_ITEM, content: 'string' } as const;
export const SKILL_DRAFT_ITEM = { ...DRAFT_FIELDS, skill_id: 'uuid' } as const;
export const SKILL_DRAFT_READ = { ...SKILL_DRAFT_ITEM, skill_md: 'string' } as const;
export const ATTACHMENT_CHUNK = {
  data_base64: 'string',
  offset: 'count',
  next_offset: 'count',
  size: 'count',
  eof: 'bool',
  media_type: 'string',
  version_id: 'uuid',
} as const;

/** The Knowledge and Skill rows of the tenant, to show that a failed call changed nothing. */
export async function snapshot(db: Db, tenantId: string): Promise<unknown> {
  const resources = await db.query(
    `SELECT id, type, name, status, latest_version, published_version, review_by::text, expires_at::text, updated_at::text
       FROM context_resources WHERE tenant_id = $1 ORDER BY id`,
    [tenantId],
  );
  const versions = await db.query(
    'SELECT resource_id, version, id, content, authority, name, description, attachments::text FROM context_versions WHERE tenant_id = $1 ORDER BY resource_id, version',
    [tenantId],
  );
  const drafts = await db.query('SELECT id, resource_id, status FROM context_drafts WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  const proposals = await db.query('SELECT id, status FROM context_proposals WHERE tenant_id = $1 ORDER BY id', [tenantId]);
  return { resources, versions, drafts, proposals };
}
