import type { AnonymousTool } from '../../mcp/anonymous.ts';
import type { ToolDef } from '../../mcp/tool.ts';
import { searchFiles, searchInput } from './search.ts';
import { NO_CONTENT } from '../searched-content.ts';

/**
 * `search` for an anonymous connection (src/mcp/anonymous.ts): the same tool, the same
 * arguments and answer, over the tenant's public KBs only (src/atmina/search.ts asks
 * kb/public-kbs.ts for them). The server has checked the arguments against the tool's
 * input already; they are parsed again here so the work gets them typed. An anonymous connection
 * reads no other product's content, so none is searched.
 */
export const anonymousSearchTool = (search: ToolDef): AnonymousTool => ({
  def: search,
  run: (context, args) => searchFiles(NO_CONTENT, context, searchInput.parse(args)),
});
