import type { AnonymousTool } from '../../mcp/anonymous.ts';
import { searchFiles, searchInput, searchTool } from './search.ts';

/**
 * `search` for an anonymous connection (src/mcp/anonymous.ts): the same tool, the same
 * arguments and answer, over the tenant's public KBs only (src/atmina/search.ts asks
 * kb/public-kbs.ts for them). The server has checked the arguments against the tool's
 * input already; they are parsed again here so the work gets them typed.
 */
export const anonymousSearchTool: AnonymousTool = {
  def: searchTool,
  run: (context, args) => searchFiles(context, searchInput.parse(args)),
};
