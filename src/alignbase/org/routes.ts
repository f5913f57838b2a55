import { addRoute, removeRoute } from '../access/routes.ts';
import type { RouteTarget } from '../access/routes.ts';
import type { Transaction } from '../../store/db.ts';
import type { PlannedStep } from '../../kernel/org/section.ts';
import { CONTEXT_RESOURCES } from './resource-index.ts';
import { defineSection, DuplicateCheck, readEntries } from '../../kernel/org/section.ts';
import type { Located } from '../../kernel/org/yaml-reader.ts';
import type { PartyRef, ResourceRef } from './context-references.ts';
import { partyLabel, readParty, readRouteTarget, resolveParty, resolveResource, resourceLabel } from './context-references.ts';

interface RouteSpec {
  readonly deliver: Located<ResourceRef>;
  readonly to: Located<PartyRef>;
}

/** One route by ids. */
interface RouteRow {
  readonly resourceId: string;
  readonly type: ResourceRef['type'];
  readonly agentId: string | null;
  readonly groupId: string | null;
}

const identity = (row: RouteRow): string => [row.resourceId, row.agentId ?? '', row.groupId ?? ''].join('|');
const targetOf = (row: RouteRow): RouteTarget => (row.groupId !== null ? { groupId: row.groupId } : { agentId: row.agentId ?? '' });

/**
 * `routes:` — Always routes: a Knowledge, Skill or Memory delivered by get_current_context to
 * an agent or to a group's agents. People cannot receive routes. When the section is present
 * its list is the tenant's complete set of routes: missing ones are added, others removed.
 */
export const routesSection = defineSection<RouteSpec[]>({
  key: 'routes',
  references: [CONTEXT_RESOURCES],

  read(slot, context) {
    const { reader } = context;
    const duplicates = new DuplicateCheck('route');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['deliver', 'to'], ['deliver', 'to']);
      if (!fields) return undefined;
      const deliverSlot = fields.get('deliver');
      const toSlot = fields.get('to');
      const deliver = deliverSlot && readRouteTarget(deliverSlot, reader);
      const to = toSlot && readParty(toSlot, reader, { people: false });
      if (!deliver || !to) return undefined;
      if (!duplicates.first({ value: `${deliver.value.label} to ${to.value.label}`, line: fields.line, path: item.path }, reader)) return undefined;
      return { deliver, to };
    });
  },

  async plan(routes, context) {
    const { tx, tenant } = context;
    const stored = new Map((await loadRoutes(tx, tenant.id)).map((row) => [identity(row), row]));
    const desired = new Map<string, RouteRow>();
    for (const route of routes) {
      const party = resolveParty(route.to, context);
      const resourceId = resolveResource(route.deliver, context);
      // A route always names one resource (readRouteTarget refuses whole types), so null cannot occur.
      if (party === undefined || resourceId === undefined || resourceId === null) continue;
      const row: RouteRow = {
        resourceId,
        type: route.deliver.value.type,
        agentId: 'principalId' in party ? party.principalId : null,
        groupId: 'groupId' in party ? party.groupId : null,
      };
      desired.set(identity(row), row);
    }
    const describe = (row: RouteRow): { name: string; detail: string } => ({
      name: resourceLabel(context, row.type, row.resourceId),
      detail: `to ${partyLabel(context, row.agentId, row.groupId)}`,
    });
    const steps: PlannedStep[] = [];
    for (const [key, row] of desired) {
      if (stored.has(key)) continue;
      const write = async (q: Transaction): Promise<void> => {
        await addRoute(q, { tenantId: tenant.id, resourceId: row.resourceId, target: targetOf(row) });
      };
      steps.push({ change: { action: 'add', kind: 'route', ...describe(row) }, write });
    }
    const removed = [...stored].filter(([key]) => !desired.has(key)).map(([, row]) => ({ row, ...describe(row) }));
    removed.sort((a, b) => a.name.localeCompare(b.name) || a.detail.localeCompare(b.detail));
    for (const { row, name, detail } of removed) {
      const write = async (q: Transaction): Promise<void> => {
        await removeRoute(q, { tenantId: tenant.id, resourceId: row.resourceId, target: targetOf(row) });
      };
      steps.push({ change: { action: 'remove', kind: 'route', name, detail }, write });
    }
    return steps;
  },
});

async function loadRoutes(tx: Transaction, tenantId: string): Promise<RouteRow[]> {
  return tx.query<RouteRow>(
    `SELECT resource_id AS "resourceId", resource_type AS type, agent_id AS "agentId", group_id AS "groupId"
       FROM context_routes WHERE tenant_id = $1`,
    [tenantId],
  );
}
