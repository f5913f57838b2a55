/*
 * Company Brain's guidance to the agent, served as the MCP `instructions` of its endpoint (in
 * `initialize` and `server/discover`) and, under its heading, of /mcp: its spec's own text,
 * word for word, so a client that puts server instructions before the model gives it what the
 * spec tells an agent to do. docs/mcp.md, Instructions.
 */

/** Company Brain: its spec's Workflow section, whole. */
export const BRAIN_GUIDANCE = [
  "Company Brain is the organization's permission-scoped knowledge graph: people, departments, processes, systems and tools, AI agents, strategies, data sources, policies, and the relations between them.",
  '',
  '1. Call get_skill_pack once at the start of a session for a compact, tier-scoped operating map. It cites the same node ids as the index.',
  '2. Call query_index to find relevant nodes.',
  '3. Call read_concept with a node id, shown in brackets, for details and relations. Always cite the node ids your answers build on.',
  '4. Call write_inbox to propose new knowledge: an observation, a correction, a proposal or a work output. Proposals are never written directly into the brain. A manager must approve them in the portal inbox first.',
  '',
  'For onboarding, call get_onboarding_status first, then get_onboarding_action_catalog for exact schemas, and use propose_onboarding_action for verified structured changes. Onboarding proposals sit behind the same manager approval, and the external client never applies them itself.',
  '',
  'Your token carries two independent limits. Its access tier decides which knowledge it may see; matches behind a higher tier are hidden and only reported as a count. Its scopes decide which tools it may call: the reading tools require brain:read, and both proposal tools require brain:propose on top of the viewer role and manager approval boundaries. A tool called without the scope it needs is refused as Forbidden and registers nothing: report the missing scope to the user instead of retrying.',
  '',
  'Knowledge status: nodes and relations may be marked as an inferred hypothesis or an unresolved mapping. Qualify those in your answer and never present them as established facts. Each mark is a warning sign followed by the phrase "inferred hypothesis; needs confirmation" or "unresolved mapping; not a fact"; match on the phrase, not the whole line. Unmarked items are verified.',
].join('\n');
