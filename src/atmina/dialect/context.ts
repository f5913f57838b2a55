import { z } from 'zod';
import {
  BUDGET_CHARS_DEFAULT,
  BUDGET_CHARS_MAX,
  BUDGET_CHARS_MIN,
  CONTEXT_FILES_MAX,
  MAX_PASSAGES_DEFAULT,
  MAX_PASSAGES_MAX,
  contextPackage,
} from '../context-package.ts';
import { QUERY_TEXT_MAX_CHARS } from '../../search-text/query.ts';
import { SCOPE_PATHS_MAX } from '../search.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { READ, kbId } from './schemas.ts';

const passage = z.object({
  path: z.string(),
  file_id: z.string(),
  version: z.number().int().describe('The version the passage was read from: the head when the package was made.'),
  sha256: z.string().describe('SHA-256 of that version: read_file answers the same while the file is unchanged.'),
  start_line: z.number().int().describe('1-based, inclusive.'),
  end_line: z.number().int().describe('1-based, inclusive.'),
  heading: z.string().describe('The headings above the passage, outermost first, joined with " > "; empty when none.'),
  text: z.string().describe('The passage as the file holds it.'),
  score: z.number().describe('Higher is better; comparable only within one package.'),
  read_ref: z
    .object({ tool: z.literal('read_file'), arguments: z.object({ kb_id: z.string(), file_id: z.string() }) })
    .describe('Call this tool with these arguments to read the whole file.'),
});

export const getContextTool = defineTool({
  name: 'get_context',
  heavy: true,
  dialect: 'atmina',
  title: 'Get context',
  description: `Gathers the passages of one Knowledge Base that best answer a question, across its files, within a size budget: each with path, version, sha256 and lines to cite, and read_ref to read the whole file. Passages that touch in a file come as one; the same question over the same versions gives the same package. Use search to find files, this to answer from their text.`,
  input: z
    .object({
      kb_id: kbId,
      question: z.string().max(QUERY_TEXT_MAX_CHARS).describe(`The question, as you would ask it; 1 to ${QUERY_TEXT_MAX_CHARS} characters.`),
      path_prefixes: z.array(z.string()).max(SCOPE_PATHS_MAX).optional().describe('Only paths starting with one of these, e.g. "policies/".'),
      budget_chars: z
        .number()
        .int()
        .min(BUDGET_CHARS_MIN)
        .max(BUDGET_CHARS_MAX)
        .optional()
        .describe(`Characters of passage text at most, ${BUDGET_CHARS_MIN} to ${BUDGET_CHARS_MAX}; default ${BUDGET_CHARS_DEFAULT}.`),
      max_passages: z
        .number()
        .int()
        .min(1)
        .max(MAX_PASSAGES_MAX)
        .optional()
        .describe(`Passages at most, 1 to ${MAX_PASSAGES_MAX}; default ${MAX_PASSAGES_DEFAULT}.`),
    })
    .strict(),
  output: z.object({
    kb_id: z.string(),
    question: z.string(),
    budget_chars: z.number().int(),
    used_chars: z.number().int().describe('Characters of passage text in the package, at most budget_chars.'),
    passages: z.array(passage).describe('By file (its best passage first), then by position in the file.'),
    files_considered: z.number().int().describe(`Files search found and the passages were chosen from (at most ${CONTEXT_FILES_MAX}).`),
    truncated: z.boolean().describe('True when a passage that matches was left out for the budget or max_passages.'),
  }),
  annotations: READ,
  scopes: ['context.read'],
  minimumRole: 'viewer',
  async run({ caller, services, audit }, args) {
    const pkg = await contextPackage(
      services,
      caller,
      {
        kbId: args.kb_id,
        question: args.question,
        ...(args.path_prefixes === undefined ? {} : { pathPrefixes: args.path_prefixes }),
        ...(args.budget_chars === undefined ? {} : { budgetChars: args.budget_chars }),
        ...(args.max_passages === undefined ? {} : { maxPassages: args.max_passages }),
      },
      audit,
    );
    return jsonReply({
      kb_id: pkg.kbId,
      question: pkg.question,
      budget_chars: pkg.budgetChars,
      used_chars: pkg.usedChars,
      passages: pkg.passages.map((p) => ({
        path: p.path,
        file_id: p.fileId,
        version: p.version,
        sha256: p.sha256,
        start_line: p.startLine,
        end_line: p.endLine,
        heading: p.heading,
        text: p.text,
        score: p.score,
        read_ref: { tool: 'read_file' as const, arguments: { kb_id: pkg.kbId, file_id: p.fileId } },
      })),
      files_considered: pkg.filesConsidered,
      truncated: pkg.truncated,
    });
  },
});
