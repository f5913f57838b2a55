import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import type { SeededGateway } from '../support/gateway.ts';
import { connectClient, startSeededGateway } from '../support/gateway.ts';
import { storeBackends } from '../support/stores.ts';

/*
 * Each endpoint's guidance, its spec's own workflow and usage text, as the MCP `instructions`
 * the SDK clients hand their host: in `initialize` (the legacy client) and in `server/discover`
 * (the v2 client in the 2026-07-28 revision), the same text in both.
 */

const ORG = `tenant: acme
name: Acme Inc.
people:
  - { email: alice@acme.test, name: Alice }
`;

// Sentences each spec gives the agent, word for word (company-brain-mcp.md "Workflow",
// alignbase-mcp.md "Recommended Agent Behavior", atmina-mcp.md's usage paragraphs).
const BRAIN = [
  "Company Brain is the organization's permission-scoped knowledge graph: people, departments, processes, systems and tools, AI agents, strategies, data sources, policies, and the relations between them.",
  '1. Call get_skill_pack once at the start of a session for a compact, tier-scoped operating map. It cites the same node ids as the index.',
  '4. Call write_inbox to propose new knowledge: an observation, a correction, a proposal or a work output. Proposals are never written directly into the brain. A manager must approve them in the portal inbox first.',
  'For onboarding, call get_onboarding_status first, then get_onboarding_action_catalog for exact schemas, and use propose_onboarding_action for verified structured changes.',
  'Each mark is a warning sign followed by the phrase "inferred hypothesis; needs confirmation" or "unresolved mapping; not a fact"; match on the phrase, not the whole line. Unmarked items are verified.',
];
const ALIGNBASE = [
  'At the start of a conversation:\n\n1. Call get_current_context.',
  '3. If it fails, tell the user Alignbase context could not be loaded and ask whether to continue without it. Wait for confirmation before answering the original request.',
  '7. Do not store secrets, full conversations, source material, published instructions, Skills, or canonical company knowledge in Memory.',
  '6. If the version IDs differ, call read_skill for the same channel and replace the full local package.',
];
const ATMINA = [
  'Start with `whoami`, then `list_kbs`. If a KB is absent, do not guess its identifier: the caller lacks access or is connected to the wrong team.',
  'Read before changing a file and carry its returned SHA-256 as `if_match`. A conflict means somebody changed the head: reread and reapply the intended edit.',
  "Do not blindly retry those failures. Respect the transport's retry interval after rate limiting.",
];

const EXPECTED: Readonly<Record<string, { holds: readonly string[]; lacks: readonly string[]; startsWith: string }>> = {
  '/brain/mcp': { holds: BRAIN, lacks: [...ALIGNBASE, ...ATMINA], startsWith: "Company Brain is the organization's" },
  '/alignbase/mcp': { holds: ALIGNBASE, lacks: [...BRAIN, ...ATMINA], startsWith: 'At the start of a conversation:' },
  '/atmina/mcp': { holds: ATMINA, lacks: [...BRAIN, ...ALIGNBASE], startsWith: "The server's `tools/list` response is authoritative" },
  '/mcp': { holds: [...ALIGNBASE, ...ATMINA, ...BRAIN], lacks: [], startsWith: 'This endpoint serves three sets of tools.' },
};

for (const backend of storeBackends()) {
  describe(`each endpoint's instructions on ${backend.name}`, () => {
    let gw: SeededGateway;
    const closers: { close(): Promise<void> }[] = [];

    before(async () => {
      gw = await startSeededGateway(backend, ORG);
    });
    after(async () => {
      for (const closer of closers) await closer.close();
      await gw.close();
    });

    for (const [path, expected] of Object.entries(EXPECTED)) {
      it(`${path}: the spec's guidance in initialize and in server/discover, the same text`, async () => {
        const legacy = await connectClient(`${gw.running.url}${path}`, gw.token);
        closers.push(legacy);
        const modern = new ModernClient({ name: 'kgw-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
        await modern.connect(new ModernTransport(new URL(`${gw.running.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${gw.token}` } } }));
        closers.push(modern);
        assert.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28');

        const text = legacy.getInstructions() ?? assert.fail(`${path}: no instructions in initialize`);
        assert.equal(modern.getInstructions(), text, 'server/discover gives the same instructions');
        assert.ok(text.startsWith(expected.startsWith), text.slice(0, 200));
        for (const sentence of expected.holds) assert.ok(text.includes(sentence), `${path} lacks: ${sentence}`);
        for (const sentence of expected.lacks) assert.ok(!text.includes(sentence), `${path} holds another dialect's: ${sentence}`);
      });
    }
  });
}
