import { randomUUID } from 'node:crypto';
import type { Queryable, Transaction } from '../../store/db.ts';
import { notFound, validation } from '../../kernel/errors.ts';
import type { RoutableType } from './context-roles.ts';
import { isRoutableType, ROUTABLE_TYPES } from './context-roles.ts';

/**
 * Always routes: get_current_context delivers a routed resource to the agent, or to every
 * current member agent of a group (so a group route covers future members as they join).
 * A route grants no permission and needs none; the deciders in context-decisions.ts say
 * what being routed allows (reading the published version).
 */

/** Where a route delivers: one agent, or the agents of a group. People receive no routes. */
export type RouteTarget = { readonly agentId: string } | { readonly groupId: string };

export interface RoutedResource {
  readonly id: string;
  readonly type: RoutableType;
  readonly name: string;
}

/**
 * Routes to the agent itself or to a group it belongs to now, as a condition on
 * `context_resources r`. Only agents: a person who is a member of a routed group receives
 * nothing, because delivery is an agent's session context. $1 the tenant, $2 the agent.
 *
 * A semi-join on the routes and a one-time test of the principal, not a join of routes,
 * resources and principals with DISTINCT: at 1,000 routed items the join planned the principal's
 * lookup once per route and the DISTINCT over all of them, and took twice as long (9 against
 * 4 ms on PGlite with the versions joined, 7 December).
 */
export const ROUTED_TO_AGENT = `r.tenant_id = $1 AND r.status = 'active'
     AND r.id IN (SELECT t.resource_id FROM context_routes t
                   WHERE t.tenant_id = $1
                     AND (t.agent_id = $2 OR t.group_id IN (SELECT m.group_id FROM group_members m WHERE m.tenant_id = $1 AND m.principal_id = $2)))
     AND EXISTS (SELECT 1 FROM principals p WHERE p.tenant_id = $1 AND p.id = $2 AND p.kind = 'agent')`;

/** The routed resources (ROUTED_TO_AGENT); more conditions on `r` may follow with AND. */
export const ROUTED = `SELECT r.id, r.type, r.name FROM context_resources r WHERE ${ROUTED_TO_AGENT}`;

/** The active resources routed to the agent, directly or through its groups, by type then name. */
export async function routedTo(q: Queryable, tenantId: string, principalId: string): Promise<RoutedResource[]> {
  return q.query<RoutedResource>(`${ROUTED} ORDER BY r.type, r.name`, [tenantId, principalId]);
}

/** Whether one resource is routed to the agent and active: the route half of canReadVersion. */
export async function isRoutedTo(q: Queryable, tenantId: string, principalId: string, resourceId: string): Promise<boolean> {
  const rows = await q.query(`${ROUTED} AND r.id = $3`, [tenantId, principalId, resourceId]);
  return rows.length > 0;
}

const targetColumns = (target: RouteTarget): [string | null, string | null] => ('agentId' in target ? [target.agentId, null] : [null, target.groupId]);

/**
 * Routes a resource to an agent or group; returns false when the route exists already. An
 * unknown resource is not found and an Artifact cannot be routed; the database refuses a
 * person as target.
 */
export async function addRoute(tx: Transaction, input: { tenantId: string; resourceId: string; target: RouteTarget }): Promise<boolean> {
  const [agentId, groupId] = targetColumns(input.target);
  const [resource] = await tx.query<{ type: string }>('SELECT type FROM context_resources WHERE tenant_id = $1 AND id = $2', [
    input.tenantId,
    input.resourceId,
  ]);
  if (!resource) throw notFound(`no context resource ${input.resourceId}`);
  if (!isRoutableType(resource.type)) throw validation(`a ${resource.type} cannot be routed; only ${ROUTABLE_TYPES.join(', ')}`);
  const rows = await tx.query(
    `INSERT INTO context_routes (tenant_id, id, resource_id, resource_type, agent_id, group_id) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT ON CONSTRAINT context_routes_target DO NOTHING
     RETURNING id`,
    [input.tenantId, randomUUID(), input.resourceId, resource.type, agentId, groupId],
  );
  return rows.length > 0;
}

export async function removeRoute(tx: Transaction, input: { tenantId: string; resourceId: string; target: RouteTarget }): Promise<boolean> {
  const [agentId, groupId] = targetColumns(input.target);
  const rows = await tx.query(
    `DELETE FROM context_routes
      WHERE tenant_id = $1 AND resource_id = $2 AND agent_id IS NOT DISTINCT FROM $3 AND group_id IS NOT DISTINCT FROM $4
      RETURNING id`,
    [input.tenantId, input.resourceId, agentId, groupId],
  );
  return rows.length > 0;
}
