import type { ContextType } from '../access/context-roles.ts';
import { CONTEXT_TYPES, isContextType, isRoutableType } from '../access/context-roles.ts';
import { isResourceName } from '../access/resources.ts';
import { isEmailReference } from '../../kernel/directory/directory.ts';
import { quote } from '../../kernel/org/problems.ts';
import { CONTEXT_RESOURCES, resourceKey } from './resource-index.ts';
import type { ValueRule } from '../../kernel/org/rules.ts';
import { groupNameRule, principalReferenceRule } from '../../kernel/org/rules.ts';
import type { PlanContext } from '../../kernel/org/section.ts';
import type { Located, Slot, YamlReader } from '../../kernel/org/yaml-reader.ts';

/**
 * How grants and routes name their targets and grantees: `knowledge:TITLE`, `all_skills`,
 * `group:NAME`, an agent's name or a person's email. Reading checks the form; resolving
 * finds the ids among what the tenant has and what earlier sections declare.
 */

const WORD_OF_TYPE: Readonly<Record<ContextType, string>> = {
  knowledge: 'all_knowledge',
  skill: 'all_skills',
  memory: 'all_memories',
  artifact: 'all_artifacts',
};
/** The whole-type targets of a grant, by the file's word for them. A Map: "constructor" finds nothing. */
export const WHOLE_TYPES: ReadonlyMap<string, ContextType> = new Map(CONTEXT_TYPES.map((type) => [WORD_OF_TYPE[type], type]));

const GROUP_PREFIX = 'group:';

/** A resource, or with `name` undefined the whole type; `label` is how the file writes it. */
export interface ResourceRef {
  readonly type: ContextType;
  readonly name: string | undefined;
  readonly label: string;
}

function parseResource(value: string): ResourceRef | undefined {
  const type = WHOLE_TYPES.get(value);
  if (type) return { type, name: undefined, label: value };
  const colon = value.indexOf(':');
  const prefix = value.slice(0, colon);
  const name = value.slice(colon + 1);
  if (colon < 0 || !isContextType(prefix) || !isResourceName(name)) return undefined;
  return { type: prefix, name, label: value };
}

const grantTargetRule: ValueRule = {
  expected: `a resource: ${[...WHOLE_TYPES.keys()].join(', ')}, or ${CONTEXT_TYPES.map((type) => `${type}:${type === 'knowledge' ? 'TITLE' : 'NAME'}`).join(', ')}`,
  valid: (value) => parseResource(value) !== undefined,
};

const routeTargetRule: ValueRule = {
  expected: 'a resource to route: knowledge:TITLE, skill:NAME or memory:NAME',
  valid: (value) => {
    const ref = parseResource(value);
    return ref !== undefined && ref.name !== undefined && isRoutableType(ref.type);
  },
};

/** `on:` of a grant: one resource or a whole type. */
export function readGrantTarget(slot: Slot, reader: YamlReader): Located<ResourceRef> | undefined {
  const value = reader.string(slot, grantTargetRule);
  const ref = value && parseResource(value.value);
  return value && ref && { ...value, value: ref };
}

/** `deliver:` of a route: one Knowledge, Skill or Memory; never a whole type or an Artifact. */
export function readRouteTarget(slot: Slot, reader: YamlReader): Located<ResourceRef> | undefined {
  const value = reader.string(slot, routeTargetRule);
  const ref = value && parseResource(value.value);
  return value && ref && { ...value, value: ref };
}

/** A grantee or route target: a principal by its reference, or a group by name. */
export type PartyRef = { readonly principal: string; readonly label: string } | { readonly group: string; readonly label: string };

const partyRule: ValueRule = {
  expected: "an agent's name, a person's email or group:NAME",
  valid: (value) => (value.startsWith(GROUP_PREFIX) ? groupNameRule.valid(value.slice(GROUP_PREFIX.length)) : principalReferenceRule.valid(value)),
  normalize: (value) => (value.startsWith(GROUP_PREFIX) ? value : (principalReferenceRule.normalize?.(value) ?? value)),
};

/** `to:` of a grant (`people: true`) or a route (agents and groups only: a person is refused). */
export function readParty(slot: Slot, reader: YamlReader, options: { people: boolean }): Located<PartyRef> | undefined {
  const value = reader.string(slot, partyRule);
  if (!value) return undefined;
  const text = value.value;
  if (text.startsWith(GROUP_PREFIX)) return { ...value, value: { group: text.slice(GROUP_PREFIX.length), label: text } };
  if (!options.people && isEmailReference(text)) {
    reader.fail(slot, `${slot.path}: ${quote(text)} is a person; routes deliver to agents and groups only`);
    return undefined;
  }
  return { ...value, value: { principal: text, label: text } };
}

/** The ids a party names; undefined (reported) when it names nothing. */
export function resolveParty(party: Located<PartyRef>, context: PlanContext): { principalId: string } | { groupId: string } | undefined {
  const ref = party.value;
  if ('group' in ref) {
    const groupId = context.groups.resolve(ref.group, party, `group ${quote(ref.group)}`, context.problems);
    return groupId === undefined ? undefined : { groupId };
  }
  const principalId = context.principals.resolve({ ...party, value: ref.principal }, context.problems);
  return principalId === undefined ? undefined : { principalId };
}

/** The resource id a reference names (null for a whole type); undefined (reported) when dangling. */
export function resolveResource(target: Located<ResourceRef>, context: PlanContext): string | null | undefined {
  const { type, name } = target.value;
  if (name === undefined) return null;
  return context.indexOf(CONTEXT_RESOURCES).resolve(resourceKey(type, name), target, `${type} ${quote(name)}`, context.problems);
}

/** How the file would write a stored party or resource, for changes that remove rows. */
export function partyLabel(context: PlanContext, principalId: string | null, groupId: string | null): string {
  return groupId !== null ? `${GROUP_PREFIX}${context.groups.referenceOf(groupId)}` : context.principals.referenceOf(principalId ?? '');
}

export function resourceLabel(context: PlanContext, type: ContextType, resourceId: string | null): string {
  return resourceId === null ? WORD_OF_TYPE[type] : context.indexOf(CONTEXT_RESOURCES).referenceOf(resourceId);
}
