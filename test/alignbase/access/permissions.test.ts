import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { VersionSelector } from '../../../src/alignbase/access/context-decisions.ts';
import {
  assignmentState,
  canCreate,
  canDraft,
  canEdit,
  canPublish,
  canRead,
  canReadDraft,
  canReadVersion,
  canWriteArtifact,
  canWriteMemory,
  capabilities,
} from '../../../src/alignbase/access/context-decisions.ts';
import type { ContextRole, ReachingGrant } from '../../../src/alignbase/access/context-roles.ts';
import { CONTEXT_ROLES, combineGrants, highestRole } from '../../../src/alignbase/access/context-roles.ts';
import type { Scope } from '../../../src/kernel/access/scopes.ts';
import type { KbAccessInput } from '../../../src/atmina/access/team-roles.ts';
import { effectiveKbRole, kbAllows } from '../../../src/atmina/access/team-roles.ts';
import type { Tier, TieredNode, TierViewer } from '../../../src/kernel/directory/tiers.ts';
import { clears, countHidden, partitionByTier, TIERS, visibleAtTier } from '../../../src/kernel/directory/tiers.ts';

const READ = new Set<Scope>(['context.read']);
const WRITE = new Set<Scope>(['context.read', 'context.write']);
const R = 'resource-1';

describe('context roles combine additively (Alignbase Permissions)', () => {
  const cases: { title: string; grants: ReachingGrant[]; on: string | undefined; role: ContextRole | undefined }[] = [
    { title: 'no grant is no role', grants: [], on: R, role: undefined },
    {
      title: 'group Viewer + direct Editor = Editor',
      grants: [
        { resourceId: R, role: 'viewer' },
        { resourceId: R, role: 'editor' },
      ],
      on: R,
      role: 'editor',
    },
    {
      title: 'whole-type Publisher beats a specific Viewer',
      grants: [
        { resourceId: null, role: 'publisher' },
        { resourceId: R, role: 'viewer' },
      ],
      on: R,
      role: 'publisher',
    },
    {
      title: 'a specific Owner adds to a whole-type Viewer',
      grants: [
        { resourceId: null, role: 'viewer' },
        { resourceId: R, role: 'owner' },
      ],
      on: R,
      role: 'owner',
    },
    { title: 'a grant on another resource does not reach this one', grants: [{ resourceId: 'other', role: 'owner' }], on: R, role: undefined },
    {
      title: 'the whole-type role ignores specific grants',
      grants: [
        { resourceId: R, role: 'owner' },
        { resourceId: null, role: 'proposer' },
      ],
      on: undefined,
      role: 'proposer',
    },
    { title: 'no whole-type grant is no create role', grants: [{ resourceId: R, role: 'owner' }], on: undefined, role: undefined },
  ];
  for (const { title, grants, on, role } of cases) it(title, () => assert.equal(combineGrants(grants, on), role));

  it('orders the roles Viewer < Proposer < Editor < Publisher < Owner', () => {
    assert.deepEqual(CONTEXT_ROLES, ['viewer', 'proposer', 'editor', 'publisher', 'owner']);
    assert.equal(highestRole(['editor', 'owner', 'viewer']), 'owner');
    assert.equal(highestRole([]), undefined);
  });
});

describe('can_* need the role and, for writes, context.write', () => {
  // [role, can_read, can_draft, can_edit, can_publish] with context.write
  const table: [ContextRole | undefined, boolean, boolean, boolean, boolean][] = [
    [undefined, false, false, false, false],
    ['viewer', true, false, false, false],
    ['proposer', true, true, false, false],
    ['editor', true, true, true, false],
    ['publisher', true, true, true, true],
    ['owner', true, true, true, true],
  ];
  for (const [role, read, draft, edit, publish] of table) {
    it(`${role ?? 'no role'} with context.write`, () => {
      assert.deepEqual(capabilities(role, WRITE), { read, draft, edit, publish });
      assert.equal(canRead(role), read);
      assert.equal(canDraft(role, WRITE), draft);
      assert.equal(canEdit(role, WRITE), edit);
      assert.equal(canPublish(role, WRITE), publish);
    });
    it(`${role ?? 'no role'} without context.write reads only`, () => {
      assert.deepEqual(capabilities(role, READ), { read, draft: false, edit: false, publish: false });
    });
  }

  it('lets the draft author or a Publisher read a draft', () => {
    assert.equal(canReadDraft('proposer', true), true);
    assert.equal(canReadDraft(undefined, true), true);
    assert.equal(canReadDraft('editor', false), false);
    assert.equal(canReadDraft('publisher', false), true);
  });
});

describe('creating needs Editor on the whole type', () => {
  const cases: [Parameters<typeof canCreate>[0], ContextRole | undefined, ReadonlySet<Scope>, boolean][] = [
    ['knowledge', 'editor', WRITE, true],
    ['knowledge', 'proposer', WRITE, false],
    ['knowledge', undefined, WRITE, false],
    ['knowledge', 'owner', READ, false],
    ['skill', 'publisher', WRITE, true],
    ['skill', 'editor', READ, false],
    ['memory', 'editor', READ, true],
    ['memory', 'viewer', WRITE, false],
    ['artifact', 'editor', WRITE, true],
    ['artifact', 'editor', READ, false],
  ];
  for (const [type, role, scopes, allowed] of cases) {
    it(`${type} with ${role ?? 'no role'} on the type and ${[...scopes].join(' ')}: ${allowed ? 'allowed' : 'refused'}`, () => {
      assert.equal(canCreate(type, role, scopes), allowed);
    });
  }
});

describe('Memory and Artifact writes', () => {
  it('writes a Memory with Editor or higher, on context.read alone and without a route', () => {
    assert.deepEqual(
      CONTEXT_ROLES.map((role) => canWriteMemory(role)),
      [false, false, true, true, true],
    );
    assert.equal(canWriteMemory(undefined), false);
  });
  it('writes an Artifact with Editor and context.write', () => {
    assert.equal(canWriteArtifact('editor', WRITE), true);
    assert.equal(canWriteArtifact('editor', READ), false);
    assert.equal(canWriteArtifact('proposer', WRITE), false);
  });
  it('reports assignment_state from routing alone', () => {
    assert.equal(assignmentState(true), 'always');
    assert.equal(assignmentState(false), 'available');
  });
});

describe('a route alone reads the published version only', () => {
  const cases: { role: ContextRole | undefined; routed: boolean; selector: VersionSelector; allowed: boolean }[] = [
    { role: undefined, routed: true, selector: 'published', allowed: true },
    { role: undefined, routed: true, selector: 'latest', allowed: false },
    { role: undefined, routed: true, selector: { exact: 2 }, allowed: false },
    { role: undefined, routed: true, selector: { exact: 3 }, allowed: true }, // the published one, as attachments name it
    { role: undefined, routed: false, selector: 'published', allowed: false },
    { role: 'viewer', routed: false, selector: 'latest', allowed: true },
    { role: 'viewer', routed: false, selector: { exact: 1 }, allowed: true },
  ];
  for (const { role, routed, selector, allowed } of cases) {
    it(`${role ?? 'no role'}${routed ? ', routed' : ''}, ${JSON.stringify(selector)}: ${allowed ? 'allowed' : 'refused'}`, () => {
      assert.equal(canReadVersion({ role, routed, selector, publishedVersion: 3 }), allowed);
    });
  }
  it('reads no exact version when nothing is published', () => {
    assert.equal(canReadVersion({ role: undefined, routed: true, selector: { exact: 1 }, publishedVersion: undefined }), false);
  });
});

describe('Atmina team roles, shares and agent policy', () => {
  const base: KbAccessInput = { teamRole: undefined, shareRoles: [], agentPolicyMax: undefined, isPublic: false };
  const cases: { title: string; input: Partial<KbAccessInput>; access: ReturnType<typeof effectiveKbRole> }[] = [
    { title: 'a stranger to a private KB has nothing', input: {}, access: 'none' },
    { title: 'anonymous on a public KB may search only', input: { isPublic: true }, access: 'search' },
    { title: 'the owning-team role', input: { teamRole: 'editor' }, access: 'editor' },
    { title: 'a share adds to a lower team role', input: { teamRole: 'viewer', shareRoles: ['admin'] }, access: 'admin' },
    { title: 'a lower share never reduces the team role', input: { teamRole: 'admin', shareRoles: ['viewer'] }, access: 'admin' },
    { title: 'shares alone give their highest role', input: { shareRoles: ['viewer', 'editor'] }, access: 'editor' },
    { title: 'an agent policy narrows the team role', input: { teamRole: 'admin', agentPolicyMax: 'viewer' }, access: 'viewer' },
    { title: 'an agent policy narrows shares too', input: { shareRoles: ['admin'], agentPolicyMax: 'editor' }, access: 'editor' },
    { title: 'an agent policy never raises', input: { teamRole: 'viewer', agentPolicyMax: 'admin' }, access: 'viewer' },
    { title: 'an agent policy grants nothing by itself', input: { agentPolicyMax: 'admin' }, access: 'none' },
    { title: 'a capped agent still searches a public KB', input: { agentPolicyMax: 'viewer', isPublic: true }, access: 'search' },
    { title: 'a member of a public KB keeps the team role', input: { teamRole: 'editor', isPublic: true }, access: 'editor' },
  ];
  for (const { title, input, access } of cases) it(title, () => assert.equal(effectiveKbRole({ ...base, ...input }), access));

  it('checks a tool minimum against the access', () => {
    assert.equal(kbAllows('search', 'search'), true);
    assert.equal(kbAllows('search', 'viewer'), false);
    assert.equal(kbAllows('editor', 'viewer'), true);
    assert.equal(kbAllows('editor', 'admin'), false);
    assert.equal(kbAllows('none', 'search'), false);
  });
});

describe('Company Brain tiers', () => {
  // Which node access levels each tier clears: the lattice of docs/access.md.
  const CLEARED: Record<Tier, Tier[]> = {
    public: ['public'],
    department: ['public', 'department'],
    project: ['public', 'department', 'project'],
    manager: ['public', 'department', 'project', 'manager'],
    hr: ['public', 'department', 'project', 'manager', 'hr'],
    executive: ['public', 'department', 'project', 'manager', 'executive'],
    restricted: [...TIERS],
  };
  for (const tier of TIERS) {
    it(`${tier} clears ${CLEARED[tier].join(', ')}`, () => {
      assert.deepEqual(
        TIERS.filter((level) => clears(tier, level)),
        CLEARED[tier],
      );
    });
  }

  const member = (tier: Tier): TierViewer => ({ tier, departments: ['Sales'], projects: ['Apollo'], brainRole: 'viewer' });
  const nodes: Record<string, TieredNode> = {
    public: { access: 'public' },
    'own department': { access: 'department', department: 'Sales' },
    'other department': { access: 'department', department: 'Legal' },
    'department, unnamed': { access: 'department' },
    'own project': { access: 'project', project: 'Apollo' },
    'other project': { access: 'project', project: 'Gemini' },
    manager: { access: 'manager' },
    hr: { access: 'hr' },
    executive: { access: 'executive' },
    restricted: { access: 'restricted' },
  };
  // The visibility table of docs/access.md, for a viewer in department Sales and project Apollo.
  const VISIBLE: Record<Tier, string[]> = {
    public: ['public'],
    department: ['public', 'own department'],
    project: ['public', 'own department', 'own project'],
    manager: ['public', 'own department', 'other department', 'department, unnamed', 'own project', 'other project', 'manager'],
    hr: ['public', 'own department', 'other department', 'department, unnamed', 'own project', 'other project', 'manager', 'hr'],
    executive: ['public', 'own department', 'other department', 'department, unnamed', 'own project', 'other project', 'manager', 'executive'],
    restricted: Object.keys(nodes),
  };
  for (const tier of TIERS) {
    it(`a ${tier} viewer sees ${VISIBLE[tier].join(', ')}`, () => {
      const seen = Object.entries(nodes)
        .filter(([, node]) => visibleAtTier(member(tier), node))
        .map(([name]) => name);
      assert.deepEqual(seen, VISIBLE[tier]);
    });
  }

  it('limits department and project nodes to members below manager', () => {
    const outsider: TierViewer = { tier: 'project', departments: [], projects: [] };
    assert.equal(visibleAtTier(outsider, nodes['own department']!), false);
    assert.equal(visibleAtTier(outsider, nodes['own project']!), false);
    // Membership without the tier is not enough: a public viewer sees public nodes only.
    assert.equal(visibleAtTier(member('public'), nodes['own department']!), false);
    // A department viewer does not see its own project's nodes: project is the next tier up.
    assert.equal(visibleAtTier(member('department'), nodes['own project']!), false);
  });

  it('never widens visibility for a brain admin', () => {
    const admin: TierViewer = { tier: 'manager', departments: [], projects: [], brainRole: 'admin' };
    assert.equal(visibleAtTier(admin, nodes.restricted!), false);
    assert.equal(visibleAtTier(admin, nodes.hr!), false);
  });

  it('counts every match the viewer may not see, keeping the order of the rest', () => {
    const matches = Object.values(nodes);
    const { visible, hidden } = partitionByTier(member('department'), matches);
    assert.deepEqual(visible, [nodes.public, nodes['own department']]);
    assert.equal(hidden, matches.length - 2);
    assert.equal(countHidden(member('restricted'), matches), 0);
    assert.equal(countHidden(member('public'), matches), matches.length - 1);
  });
});
