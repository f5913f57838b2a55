/*
 * Each dialect's guidance to the agent, served as the MCP `instructions` of its endpoint (in
 * `initialize` and `server/discover`): its spec's own workflow and usage text, word for word,
 * so a client that puts server instructions before the model gives it what the spec tells an
 * agent to do. /mcp serves all three, each under its dialect's name. docs/mcp.md, Instructions.
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

/** Alignbase: its spec's Recommended Agent Behavior section, whole. */
export const ALIGNBASE_GUIDANCE = [
  'At the start of a conversation:',
  '',
  '1. Call get_current_context.',
  '2. If it succeeds, follow the returned published Knowledge and Skills, and use each routed Memory as scoped working recall.',
  '3. If it fails, tell the user Alignbase context could not be loaded and ask whether to continue without it. Wait for confirmation before answering the original request.',
  '',
  'When editing context:',
  '',
  '1. Use list_knowledge to find the Knowledge unless you already have the ID.',
  '2. Use read_knowledge with version: "latest".',
  '3. Send the full replacement content to write_knowledge.',
  '4. Pass the latest version as expected_version.',
  '5. Publish only when the user asked for the change to go live.',
  '6. Leave Group, permission, and route changes to the Alignbase UI.',
  '',
  'When creating context:',
  '',
  '1. Use write_knowledge.',
  '2. Omit knowledge_id.',
  '3. Send expected_version: 0, title, and full content.',
  '4. Set publish: true only when the user asked for the new context to go live and the agent has the required capability on All Knowledge.',
  '',
  'When working with skills:',
  '',
  '1. Use list_skills to find the skill unless you already have the ID.',
  '2. Use read_skill with version: "latest".',
  '3. Send the full replacement package to write_skill.',
  '4. Pass the latest version as expected_version.',
  '5. Publish only when the user asked for the skill version to go live.',
  '6. Leave Group, permission, and route changes to the Alignbase UI.',
  '',
  'When maintaining Memory:',
  '',
  '1. Use the routed Memories from get_current_context, or call list_memories to discover other permitted files.',
  '2. Before finishing meaningful work, decide whether current working state, a user correction, a stable preference, unfinished work, a failed approach, or a known trap would help the next session.',
  '3. If can_write is false or the context says writes are forbidden, use Memory as read-only.',
  '4. Before writing, call read_memory with the selected memory_id to load the latest file.',
  '5. When writing is allowed, send memory_id, the exact latest version as expected_version, and the full concise replacement to write_memory without asking the user.',
  '6. If Memory changed, read it again, preserve relevant changes, and retry. If Editor permission changed, stop.',
  '7. Do not store secrets, full conversations, source material, published instructions, Skills, or canonical company knowledge in Memory.',
  '',
  'When installing a skill locally:',
  '',
  '1. Use list_skills to find the skill unless you already have the ID.',
  '2. Use read_skill with version: "published" unless the user asked for a draft.',
  '3. Create a local skill directory named from directory_name.',
  '4. Write skill_md as SKILL.md.',
  '5. Fetch each attachment with read_context_attachment, decode data_base64, and write it to its relative path.',
  '6. Keep every package file under the local skill directory. Do not write absolute paths or parent directory paths.',
  '7. Add or update Alignbase provenance under SKILL.md frontmatter metadata, not as top-level frontmatter fields.',
  '',
  'When updating local skill installs:',
  '',
  '1. Read each installed skill’s metadata.alignbase-skill-id, metadata.alignbase-channel, and metadata.alignbase-version-id.',
  '2. Use list_skills to check the remote skill version IDs the agent can read.',
  '3. For published installs, compare the local metadata.alignbase-version-id to published_version_id.',
  '4. For draft installs, compare the local metadata.alignbase-version-id to latest_version_id.',
  '5. If the version IDs match, leave the local package unchanged.',
  '6. If the version IDs differ, call read_skill for the same channel and replace the full local package.',
].join('\n');

/**
 * Atmina: its spec's usage paragraphs, in its order. The tables of tools are left out (the tool
 * list describes each tool), with the sentences that point at them; confirm_uploads' example
 * call is said in words.
 */
export const ATMINA_GUIDANCE = [
  "The server's `tools/list` response is authoritative: Atmina removes tools that the caller, selected Knowledge Base, or active surface cannot use.",
  '',
  'Start with `whoami`, then `list_kbs`. If a KB is absent, do not guess its identifier: the caller lacks access or is connected to the wrong team.',
  '',
  "Answer from a sufficient snippet. For detail, pass the top result's path or file ID to `read_file`. Use `list_files` for an exhaustive request such as every file under `policies/`. If fresh content is absent, inspect `atmina://kb/{kb_id}/indexing-status`; a successful write can precede indexing.",
  '',
  'Read before changing a file and carry its returned SHA-256 as `if_match`. A conflict means somebody changed the head: reread and reapply the intended edit.',
  '',
  'Call `get_file_outline` afterward and compare `size_bytes` and `sha256`. Recompute both from the exact UTF-8 bytes after `content_integrity`.',
  '',
  'For large or binary content, call `request_uploads`, PUT the exact bytes to each URL with every returned required header, then call `confirm_uploads` with the `kb_id` and `batch_token`.',
  '',
  'Presigned image and PDF Assets may be at most 25 MiB; other admitted files retain the 100 MiB single-PUT ceiling. Expired URLs require a new request. Batch failures are per item, except duplicate paths reject the whole batch. Apply multiple edits to one path sequentially, carrying each new hash forward.',
  '',
  'Use `audit_log` to find an ID before `get_audit_event`. Query text may be absent because team privacy settings control audit detail.',
  '',
  'Useful read-only resources include `atmina://status`, `atmina://my-team`, `atmina://my-kbs`, `atmina://my-team-status`, `atmina://kb/{kb_id}`, `atmina://kb/{kb_id}/files`, `atmina://kb/{kb_id}/files/{file_id}`, and `atmina://kb/{kb_id}/indexing-status`. The server also publishes `atmina://docs/agent-quickstart` and `atmina://kb/{kb_id}/write-guide`.',
  '',
  "Treat `validation` as bad input, `permission_denied` as role or scope, `conflict` as stale state, `content_integrity` as a byte/hash mismatch, and `payload_too_large` as a signal to use presigned upload. Do not blindly retry those failures. Respect the transport's retry interval after rate limiting.",
].join('\n');

/** /mcp: the three, each under the name its tools go by there. */
export const COMBINED_GUIDANCE = [
  'This endpoint serves three sets of tools. Follow the guidance of the set a tool belongs to.',
  `## Alignbase (get_current_context; Knowledge, Skills, Memory, Artifacts, messages, Activity)\n\n${ALIGNBASE_GUIDANCE}`,
  `## Atmina (Knowledge Bases and their files: search, read_file, write_file, …)\n\n${ATMINA_GUIDANCE}`,
  `## Company Brain (get_skill_pack, query_index, read_concept, write_inbox, onboarding)\n\n${BRAIN_GUIDANCE}`,
].join('\n\n');
