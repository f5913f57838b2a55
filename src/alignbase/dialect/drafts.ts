import { importedFromWire } from '../../mcp/imported-from.ts';
import type { DraftItem } from '../context/drafts.ts';
import { iso } from '../../kernel/instants.ts';

/** The fields list_*_drafts and read_*_draft give every draft (the tool adds the resource's id field). */
export function draftWire(d: DraftItem) {
  return {
    draft_id: d.draftId,
    base_version: d.baseVersion,
    current_version: d.currentVersion,
    is_stale: d.isStale,
    author_name: d.authorName ?? null,
    author_email: d.authorEmail ?? null,
    agent_name: d.agentName ?? null,
    rationale: d.rationale ?? null,
    created_at: iso(d.createdAt),
    created_by_this_agent: d.createdByThisAgent,
    ...importedFromWire(d.importedFrom),
  };
}
