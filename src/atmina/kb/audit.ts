import type { Caller } from '../../kernel/access/caller.ts';
import type { TeamRole } from '../access/team-roles.ts';
import { kbAllows } from '../access/team-roles.ts';
import type { AuditEntry } from '../../kernel/audit/audit-log.ts';
import { singleResources } from '../../kernel/audit/audit-log.ts';
import type { Queryable } from '../../store/db.ts';
import { accessibleKbs, kbFor } from './access.ts';
import { decodeCursor, encodeCursor } from './cursor.ts';
import type { AuditEventRecord, AuditEventRow } from './queries.ts';
import { AUDIT_EVENT_COLUMNS, AUDIT_EVENT_FROM, toAuditEvent } from './queries.ts';
import { refuseKb } from './refusals.ts';
import { teamSettingsOf } from './settings.ts';

/**
 * The audit log as Atmina's Editors read it (audit_log, get_audit_event), over the one
 * append-only log of src/kernel/audit. An Editor reads the events that name a Knowledge Base it is
 * Editor (or Admin) on, and those that name a team where it is Editor or Admin as a member
 * (team settings), capped by an agent's policy like every role. Of such an event it sees the
 * KBs and teams it may audit and nothing of the others: their ids are left out, and so are the
 * file ids, other resources and details of an event that names a KB it may not audit. An
 * event names a KB by a `kb` resource, by the `kb_id` of its details (file writes) or through
 * a `kb_file` resource (file reads). An event that
 * names nothing it may audit answers like one that does not exist.
 *
 * Query text: a search's audit event keeps its text in `details.query`; when the team owning
 * any KB the event names (or a team it names) says `audit_query_text: omit`, it is left out of
 * both tools' answers. docs/atmina.md, "Audit".
 */

/** The details keys that hold query text, left out where a team's privacy setting says so. */
export const QUERY_TEXT_KEYS = ['query'] as const;

export const AUDIT_PAGE = { default: 20, max: 100 } as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// An ISO 8601 instant with its offset (or Z), as the tools answer them; a date alone is midnight UTC.
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const TOOL_MAX = 100;

/**
 * One event with only what the caller may see of it: its resources and details cut to what it
 * may audit, the KBs, teams and files it names that the caller may see, and a search's query text.
 */
export interface AuditEventView extends Omit<AuditEventRecord, 'atKey'> {
  readonly kbIds: readonly string[];
  readonly teamIds: readonly string[];
  readonly fileIds: readonly string[];
  /** The query text of a search, when the event has one and no team's setting hides it. */
  readonly query: string | undefined;
}

// The KBs an event names: a `kb` resource, the `kb_id` of its details (file writes name their
// KB there) or the KB of a `kb_file` resource (file reads name only the file). `{kbs}` is a
// text[] parameter of KB ids.
const namesKb = (kbs: string): string => `(e.details->>'kb_id' = ANY(${kbs})
   OR EXISTS (SELECT 1 FROM jsonb_array_elements(e.resources) r
               LEFT JOIN kb_files f ON r->>'type' = 'kb_file' AND f.tenant_id = e.tenant_id
                                   AND f.id = CASE WHEN r->>'id' ~ '^[0-9a-f-]{36}$' THEN (r->>'id')::uuid END
              WHERE (r->>'type' = 'kb' AND r->>'id' = ANY(${kbs})) OR f.kb_id::text = ANY(${kbs})))`;
// The events naming a KB of $2 or a team of $3 (both text[] of ids).
const NAMES_AUDITABLE = `(${namesKb('$2::text[]')}
   OR EXISTS (SELECT 1 FROM jsonb_array_elements(e.resources) r WHERE r->>'type' = 'team' AND r->>'id' = ANY($3::text[])))`;

/** What the caller may audit: the KBs it is Editor or Admin on, and the teams where it is as a member. */
interface Auditable {
  readonly kbs: ReadonlySet<string>;
  readonly teams: ReadonlySet<string>;
}

async function auditable(q: Queryable, caller: Caller): Promise<Auditable> {
  const [kbs, teams] = await Promise.all([
    accessibleKbs(q, caller),
    q.query<{ team_id: string; role: TeamRole; policy: TeamRole | null }>(
      `SELECT m.team_id, m.role, p.policy_max_team_role AS policy
         FROM team_members m JOIN principals p ON p.tenant_id = m.tenant_id AND p.id = m.principal_id
        WHERE m.tenant_id = $1 AND m.principal_id = $2`,
      [caller.tenant.id, caller.principal.id],
    ),
  ]);
  const capped = (role: TeamRole, policy: TeamRole | null) => (policy !== null && !kbAllows(policy, role) ? policy : role);
  return {
    kbs: new Set(kbs.filter(({ access }) => kbAllows(access, 'editor')).map(({ kb }) => kb.id)),
    teams: new Set(teams.filter((row) => kbAllows(capped(row.role, row.policy), 'editor')).map((row) => row.team_id)),
  };
}

/** The KB of each file the events name (deleted files included). */
async function kbsOfFiles(q: Queryable, tenantId: string, fileIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
  const ids = [...new Set(fileIds)].filter((id) => UUID.test(id));
  if (ids.length === 0) return new Map();
  const rows = await q.query<{ id: string; kb_id: string }>('SELECT id, kb_id FROM kb_files WHERE tenant_id = $1 AND id = ANY($2::uuid[])', [tenantId, ids]);
  return new Map(rows.map((row) => [row.id, row.kb_id]));
}

/** The owning team of each KB the events name (archived KBs included), for their privacy settings. */
async function teamsOfKbs(q: Queryable, tenantId: string, kbIds: readonly string[]): Promise<ReadonlyMap<string, string>> {
  const ids = [...new Set(kbIds)].filter((id) => UUID.test(id));
  if (ids.length === 0) return new Map();
  const rows = await q.query<{ id: string; team_id: string }>('SELECT id, team_id FROM kbs WHERE tenant_id = $1 AND id = ANY($2::uuid[])', [tenantId, ids]);
  return new Map(rows.map((row) => [row.id, row.team_id]));
}

const ids = (resources: readonly AuditEntry[], type: string): string[] =>
  singleResources(resources)
    .filter((r) => r.type === type)
    .map((r) => r.id);
const present = <T>(values: readonly (T | undefined)[]): T[] => values.filter((value): value is T => value !== undefined);

/** The events as the caller may see them: resources cut to what it may audit, query text per the teams' settings. */
async function views(q: Queryable, caller: Caller, scope: Auditable, records: readonly AuditEventRecord[]): Promise<AuditEventView[]> {
  const tenantId = caller.tenant.id;
  const fileKbs = await kbsOfFiles(
    q,
    tenantId,
    records.flatMap(({ resources }) => ids(resources, 'kb_file')),
  );
  const events = records.map((record) => {
    const detailKb = typeof record.details.kb_id === 'string' ? [record.details.kb_id] : [];
    const kbs = [...new Set([...ids(record.resources, 'kb'), ...detailKb, ...present(ids(record.resources, 'kb_file').map((id) => fileKbs.get(id)))])];
    return { record, kbs, teams: ids(record.resources, 'team') };
  });
  const kbTeams = await teamsOfKbs(
    q,
    tenantId,
    events.flatMap(({ kbs }) => kbs),
  );
  const teamsOf = (event: { kbs: readonly string[]; teams: readonly string[] }) => [...event.teams, ...present(event.kbs.map((id) => kbTeams.get(id)))];
  const settings = await teamSettingsOf(q, tenantId, [...new Set(events.flatMap(teamsOf))]);
  return events.map((event) => {
    const { atKey: _cursorOnly, resources, details, ...seen } = event.record;
    // Everything the event names is the caller's to see only when every KB and team of it is.
    const whole = event.kbs.every((id) => scope.kbs.has(id)) && event.teams.every((id) => scope.teams.has(id));
    const shown = resources.filter((r) => {
      if (r.type === 'kb') return 'id' in r && scope.kbs.has(r.id);
      if (r.type === 'team') return 'id' in r && scope.teams.has(r.id);
      return whole;
    });
    const hideQuery = teamsOf(event).some((team) => settings.get(team)?.auditQueryText === 'omit');
    const visibleDetails = whole ? details : {};
    const kept = hideQuery
      ? Object.fromEntries(Object.entries(visibleDetails).filter(([key]) => !(QUERY_TEXT_KEYS as readonly string[]).includes(key)))
      : visibleDetails;
    const query = kept.query;
    return {
      ...seen,
      kbIds: event.kbs.filter((id) => scope.kbs.has(id)),
      teamIds: event.teams.filter((id) => scope.teams.has(id)),
      fileIds: [...new Set(ids(shown, 'kb_file'))],
      resources: shown,
      details: kept,
      query: typeof query === 'string' ? query : undefined,
    };
  });
}

export interface AuditLogInput {
  readonly kbId?: string | undefined;
  /** The acting principal's id. */
  readonly actor?: string | undefined;
  readonly tool?: string | undefined;
  /** ISO instants: events at or after `from`, and before `to`. */
  readonly from?: string | undefined;
  readonly to?: string | undefined;
  readonly limit?: number | undefined;
  readonly cursor?: string | undefined;
}

export interface AuditPage {
  readonly events: readonly AuditEventView[];
  readonly nextCursor: string | undefined;
}

function checkInstant(field: string, value: string): Date {
  const instant = new Date(value);
  if (!ISO_INSTANT.test(value) || Number.isNaN(instant.getTime()))
    throw refuseKb.invalidField(field, 'must be an ISO 8601 instant such as 2026-01-31T09:00:00Z');
  return instant;
}

/** audit_log (Editor): the events the caller may audit, newest first, filtered and paged. */
export async function auditLog(q: Queryable, caller: Caller, input: AuditLogInput): Promise<AuditPage> {
  const limit = input.limit ?? AUDIT_PAGE.default;
  if (!Number.isInteger(limit) || limit < 1 || limit > AUDIT_PAGE.max)
    throw refuseKb.invalidField('limit', `must be a whole number from 1 to ${AUDIT_PAGE.max}`);
  if (input.actor !== undefined && !UUID.test(input.actor)) throw refuseKb.invalidField('actor', 'must be a principal id (whoami shows yours)');
  if (input.tool !== undefined && (input.tool === '' || input.tool.length > TOOL_MAX || !/^[a-z0-9_.-]+$/i.test(input.tool)))
    throw refuseKb.invalidField('tool', 'must be a tool name such as write_file');
  const from = input.from === undefined ? undefined : checkInstant('from', input.from);
  const to = input.to === undefined ? undefined : checkInstant('to', input.to);
  if (from !== undefined && to !== undefined && from.getTime() > to.getTime()) throw refuseKb.invalidField('to', 'must not be before from');
  const filters = JSON.stringify([
    input.kbId ?? null,
    input.actor?.toLowerCase() ?? null,
    input.tool ?? null,
    from?.toISOString() ?? null,
    to?.toISOString() ?? null,
  ]);
  const position = input.cursor === undefined ? undefined : decodeCursor(input.cursor, `audit_log:${filters}`, ['string', 'string']);

  const kb = input.kbId === undefined ? undefined : (await kbFor(q, caller, input.kbId, 'editor', 'reading the audit log')).kb;
  const scope = await auditable(q, caller);
  if (scope.kbs.size === 0 && scope.teams.size === 0) throw refuseKb.auditRole();

  const params: unknown[] = [caller.tenant.id, [...scope.kbs], [...scope.teams]];
  const where = ['e.tenant_id = $1', NAMES_AUDITABLE];
  const add = (condition: (at: string) => string, value: unknown) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  if (kb !== undefined) add((at) => namesKb(`${at}::text[]`), [kb.id]);
  if (input.actor !== undefined) add((at) => `e.principal_id = ${at}::uuid`, input.actor.toLowerCase());
  if (input.tool !== undefined) add((at) => `e.tool = ${at}`, input.tool);
  if (from !== undefined) add((at) => `e.at >= ${at}::timestamptz`, from.toISOString());
  if (to !== undefined) add((at) => `e.at < ${at}::timestamptz`, to.toISOString());
  if (position !== undefined) {
    const [atKey, id] = position;
    if (typeof id !== 'string' || !UUID.test(id)) throw refuseKb.invalidCursor();
    params.push(atKey, id);
    where.push(`(e.at, e.id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  params.push(limit + 1);
  const rows = await q.query<AuditEventRow>(
    `SELECT ${AUDIT_EVENT_COLUMNS} FROM ${AUDIT_EVENT_FROM} WHERE ${where.join(' AND ')} ORDER BY e.at DESC, e.id DESC LIMIT $${params.length}`,
    params,
  );
  const page = rows.slice(0, limit).map(toAuditEvent);
  const last = page.at(-1);
  return {
    events: await views(q, caller, scope, page),
    nextCursor: rows.length > limit && last !== undefined ? encodeCursor(`audit_log:${filters}`, [last.atKey, last.id]) : undefined,
  };
}

/** get_audit_event (Editor): one event with its permitted detail; one the caller may not audit is `not_found`. */
export async function getAuditEvent(q: Queryable, caller: Caller, eventId: string): Promise<AuditEventView> {
  if (!UUID.test(eventId)) throw refuseKb.auditEventNotFound(eventId);
  const scope = await auditable(q, caller);
  const [row] = await q.query<AuditEventRow>(
    `SELECT ${AUDIT_EVENT_COLUMNS} FROM ${AUDIT_EVENT_FROM} WHERE e.tenant_id = $1 AND ${NAMES_AUDITABLE} AND e.id = $4::uuid`,
    [caller.tenant.id, [...scope.kbs], [...scope.teams], eventId.toLowerCase()],
  );
  if (row === undefined) throw refuseKb.auditEventNotFound(eventId);
  const [view] = await views(q, caller, scope, [toAuditEvent(row)]);
  if (view === undefined) throw refuseKb.auditEventNotFound(eventId);
  return view;
}
