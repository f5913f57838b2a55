import { z } from 'zod';
import { kbAllows } from '../access/team-roles.ts';
import { readAsset } from '../kb/asset-rows.ts';
import { assetFilesById } from '../kb/found-files.ts';
import { QUERY_TEXT_MAX_CHARS } from '../../search-text/query.ts';
import {
  EXACT_PHRASE_FACTOR,
  PATH_BOOSTS_MAX,
  PATH_BOOST_PREFIX_MAX_CHARS,
  PATH_BOOST_WEIGHT_MAX,
  PATH_BOOST_WEIGHT_MIN,
  RANKING_DEPTH,
  RECENCY_HALF_LIFE_DAYS,
} from '../../search-text/ranking.ts';
import { FILTER_VALUES_MAX, MAX_FILES_DEFAULT, MAX_FILES_MAX, RESULT_KINDS, SCOPE_KBS_MAX, SCOPE_PATHS_MAX, searchKbs } from '../search.ts';
import type { SearchPageHit } from '../search.ts';
import type { SearchedContent } from '../searched-content.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import type { StructuredReply } from '../../mcp/tool.ts';
import type { Searcher } from '../../kernel/access/anonymous.ts';
import { isAnonymous } from '../../kernel/access/anonymous.ts';
import type { AuditTrail } from '../../kernel/audit/trail.ts';
import type { Services } from '../../kernel/services.ts';
import { thumbnailUrl } from './asset-rendition.ts';
import { assetBlock, assetWire } from './asset-wire.ts';
import { READ } from './schemas.ts';

const reasons = z
  .object({
    terms: z
      .array(z.object({ term: z.string().describe('The query term as indexed (stemmed).'), fields: z.array(z.enum(['path', 'title', 'body'])) }))
      .describe('Terms of the query the file holds, and where.'),
    expansions: z
      .array(z.string())
      .describe(
        'Words search added that the file holds, as the file writes them: typo corrections, prefix expansions, and words of the best files for the question.',
      ),
    phrases: z.array(z.string()).describe('Quoted phrases of the query, which the file holds as written.'),
    lists: z
      .array(z.object({ list: z.enum(['lexical', 'vector']), rank: z.number().int().min(1) }))
      .optional()
      .describe(
        'retrieval hybrid: the ranked lists the file was in (lexical: the terms above; vector: by meaning) and its rank in each; fused by reciprocal rank.',
      ),
    fallback: z.string().optional().describe('retrieval hybrid was asked for and this answer is lexical: why.'),
  })
  .describe('Why the file ranked here: BM25 over path, title and body (path weighs most) of the terms above; with hybrid retrieval, also its rank by meaning.');

const scored = {
  score: z.number().describe('Higher is better; comparable only within one answer.'),
  snippets: z.array(z.string()).describe('Passages around the matched words, which are marked <mark>…</mark>.'),
  reasons,
};

const fileResult = z.object({
  kind: z.literal('file').describe('file: a Knowledge Base file.'),
  kb_id: z.string(),
  kb_slug: z.string(),
  path: z.string(),
  file_id: z.string(),
  version: z.number().int().describe('The version search indexed.'),
  title: z.string().describe('The front-matter title or first heading; empty when it has none.'),
  ...scored,
  read_ref: z
    .object({ tool: z.literal('read_file'), arguments: z.object({ kb_id: z.string(), file_id: z.string() }) })
    .describe('Call this tool with these arguments to read the whole file.'),
  asset: assetBlock.optional().describe('For a picture or PDF: the Asset behind the Companion text this result cites.'),
});

const versioned = {
  title: z.string().describe('The title of the Knowledge, the name of the Memory or Artifact.'),
  version: z.number().int().describe('The saved version search indexed.'),
  version_id: z.string(),
};

const knowledgeResult = z.object({
  kind: z.literal('knowledge').describe('knowledge: an Alignbase Knowledge.'),
  knowledge_id: z.string(),
  ...versioned,
  is_published_version: z.boolean().describe('Whether the version found is the published one (else it is the latest, unpublished).'),
  ...scored,
  read_ref: z
    .object({
      tool: z.literal('read_knowledge'),
      arguments: z.object({ knowledge_id: z.string(), version: z.enum(['published', 'latest']) }),
    })
    .describe('Call this Alignbase tool with these arguments to read the Knowledge.'),
});

const memoryResult = z.object({
  kind: z.literal('memory').describe('memory: an Alignbase Memory (its latest version).'),
  memory_id: z.string(),
  ...versioned,
  ...scored,
  read_ref: z
    .object({ tool: z.literal('read_memory'), arguments: z.object({ memory_id: z.string() }) })
    .describe('Call this Alignbase tool with these arguments to read the Memory.'),
});

const artifactResult = z.object({
  kind: z.literal('artifact').describe('artifact: an Alignbase Artifact (its latest version).'),
  artifact_id: z.string(),
  ...versioned,
  ...scored,
  read_ref: z
    .object({ tool: z.literal('read_artifact'), arguments: z.object({ artifact_id: z.string(), version: z.number().int() }) })
    .describe('Call this Alignbase tool with these arguments to read the Artifact version found.'),
});

const result = z.discriminatedUnion('kind', [fileResult, knowledgeResult, memoryResult, artifactResult]);

async function assetBlocks(services: Services, caller: Searcher, hits: readonly SearchPageHit[]) {
  const ids = hits.flatMap((h) => (h.kb === undefined ? [] : [String(h.ref.file_id ?? '')])).filter((id) => id !== '');
  const blocks = new Map<string, z.infer<typeof assetBlock>>();
  if (ids.length === 0) return blocks;
  for (const file of await assetFilesById(services.db, caller.tenant.id, ids)) {
    const hit = hits.find((h) => h.ref.file_id === file.id);
    const asset = await readAsset(services.db, caller.tenant.id, file.id, file.version);
    // A thumbnail is a read of the file: only for a caller who may read the KB, not one who may
    // only search it (an anonymous connection never may).
    const url =
      hit?.kb !== undefined && !isAnonymous(caller) && kbAllows(hit.kb.access, 'viewer') ? await thumbnailUrl(services, caller, file, asset) : undefined;
    blocks.set(file.id, assetWire(file, asset, url));
  }
  return blocks;
}

function reasonsWire(hit: SearchPageHit): z.infer<typeof reasons> {
  return {
    terms: hit.reasons.terms.map((t) => ({ term: t.term, fields: [...t.fields] })),
    // The words as the file writes them: the terms themselves are stems ("titl" for "Titles").
    expansions: [...new Set(hit.reasons.expansionWords ?? hit.reasons.expansions)],
    phrases: [...hit.reasons.phrases],
    ...(hit.reasons.lists === undefined ? {} : { lists: hit.reasons.lists.map((l) => ({ list: l.list, rank: l.rank })) }),
    ...(hit.reasons.fallback === undefined ? {} : { fallback: hit.reasons.fallback }),
  };
}

/** A Knowledge, Memory or Artifact hit, named by the identifiers the Alignbase tools take. */
function contextResult(hit: SearchPageHit & { kb?: undefined }): z.infer<typeof result> {
  const { resource } = hit;
  const common = {
    title: hit.title,
    version: Number(hit.ref.version),
    version_id: String(hit.ref.version_id),
    score: hit.score,
    snippets: [...hit.snippets],
    reasons: reasonsWire(hit),
  };
  if (resource.type === 'knowledge') {
    const version = resource.latest ? ('latest' as const) : ('published' as const);
    return {
      kind: 'knowledge',
      knowledge_id: resource.id,
      ...common,
      is_published_version: resource.published,
      read_ref: { tool: 'read_knowledge', arguments: { knowledge_id: resource.id, version } },
    };
  }
  if (resource.type === 'memory')
    return { kind: 'memory', memory_id: resource.id, ...common, read_ref: { tool: 'read_memory', arguments: { memory_id: resource.id } } };
  return {
    kind: 'artifact',
    artifact_id: resource.id,
    ...common,
    read_ref: { tool: 'read_artifact', arguments: { artifact_id: resource.id, version: common.version } },
  };
}

export const searchInput = z
  .object({
    query: z.string().max(QUERY_TEXT_MAX_CHARS).describe(`The question or keywords, 1 to ${QUERY_TEXT_MAX_CHARS} characters.`),
    scope: z
      .object({
        kb_ids: z.array(z.string()).max(SCOPE_KBS_MAX).optional().describe('KBs by kb_id from list_kbs.'),
        kb_slugs: z
          .array(z.string())
          .max(SCOPE_KBS_MAX)
          .optional()
          .describe('KBs by slug: bare ("handbook") or with your organisation\'s slug ("acme/handbook").'),
        path_prefixes: z.array(z.string()).max(SCOPE_PATHS_MAX).optional().describe('Only paths starting with one of these, e.g. "policies/".'),
      })
      .strict()
      .optional()
      .describe('Where to search; by default every KB you can search and every Knowledge, Memory and Artifact you may read.'),
    filters: z
      .object({
        tags: z.array(z.string()).max(FILTER_VALUES_MAX).optional().describe('Files with any of these front-matter tags.'),
        media_types: z.array(z.string()).max(FILTER_VALUES_MAX).optional().describe('Files of these media types, e.g. "text/markdown", "application/pdf".'),
        content: z.enum(['text', 'asset']).optional().describe('text: text files only; asset: pictures and PDFs only.'),
        updated_since: z.string().optional().describe('ISO 8601: files changed at or after it.'),
        kinds: z
          .array(z.enum(RESULT_KINDS))
          .max(RESULT_KINDS.length)
          .optional()
          .describe('What to find: file, knowledge, memory, artifact; all of them by default. Naming KBs or path prefixes in scope finds files only.'),
      })
      .strict()
      .optional(),
    retrieval: z
      .enum(['lexical', 'hybrid'])
      .optional()
      .describe(
        'lexical (default): words and their forms; hybrid adds meaning (the nearest documents by embedding, fused with the lexical ones) when an embeddings endpoint is configured.',
      ),
    ranking: z
      .object({
        recency: z
          .number()
          .min(0)
          .max(1)
          .optional()
          .describe(`0 to 1 (default 0: relevance alone): how much a file's age lowers its score; at 1 it halves every ${RECENCY_HALF_LIFE_DAYS} days.`),
        path_boosts: z
          .array(
            z
              .object({
                prefix: z.string().min(1).max(PATH_BOOST_PREFIX_MAX_CHARS).describe('The start of a path, e.g. "policies/".'),
                weight: z
                  .number()
                  .min(PATH_BOOST_WEIGHT_MIN)
                  .max(PATH_BOOST_WEIGHT_MAX)
                  .describe(
                    `${PATH_BOOST_WEIGHT_MIN} to ${PATH_BOOST_WEIGHT_MAX}: the score of a file under prefix is multiplied by it (above 1 lifts, below 1 lowers).`,
                  ),
              })
              .strict(),
          )
          .max(PATH_BOOSTS_MAX)
          .optional()
          .describe(`At most ${PATH_BOOSTS_MAX}; a file takes the weight of the longest prefix it starts with.`),
        prefer_exact_phrase: z
          .boolean()
          .optional()
          .describe(`true: files holding the query's words in order, as one phrase (forms aside), weigh ${EXACT_PHRASE_FACTOR} times as much. Default false.`),
      })
      .strict()
      .optional()
      .describe(
        `Reorders the ${RANKING_DEPTH} most relevant results: each control multiplies a file's score by a factor. With retrieval hybrid, it orders the lexical list.`,
      ),
    max_files: z.number().int().min(1).max(MAX_FILES_MAX).optional().describe(`Files per page, 1 to ${MAX_FILES_MAX}; default ${MAX_FILES_DEFAULT}.`),
    cursor: z.string().max(200).optional().describe('next_cursor of the previous page of the same search.'),
  })
  .strict();

const searchOutput = z.object({
  results: z.array(result),
  total: z
    .number()
    .int()
    .describe(
      'Files and resources matching the query within the scope and filters (at most the first 1000 can be paged to); estimated when the words are found in thousands of files (then at least 1000), exact with filters; with retrieval hybrid, those of the lexical and the vector list together (at most 200).',
    ),
  next_cursor: z.string().nullable().describe('Pass it as cursor, with the same search, for the next page; null on the last page.'),
  retrieval: z.enum(['lexical', 'hybrid']).describe('What was done: lexical when a hybrid search could not search by meaning (each result says why).'),
  flagged_kbs: z
    .array(z.object({ kb_id: z.string(), kb_slug: z.string(), name: z.string() }))
    .optional()
    .describe(
      'Knowledge Bases you may search but not read whose location_policy is flag_only, that hold a match: search does not show which files or where (they are not in results or total); ask the owning team for access. Absent when there are none.',
    ),
});

/** What a search runs with: a signed-in caller's tool context, or an anonymous connection's (src/mcp/anonymous.ts). */
export interface SearchContext {
  readonly caller: Searcher;
  readonly services: Services;
  readonly audit: AuditTrail;
}

export type SearchArgs = z.infer<typeof searchInput>;

/** The search tool's work, for a signed-in caller and an anonymous connection alike. */
export async function searchFiles(
  content: SearchedContent,
  { caller, services, audit }: SearchContext,
  args: SearchArgs,
): Promise<StructuredReply<z.infer<typeof searchOutput>>> {
  const page = await searchKbs(services, content, caller, {
    query: args.query,
    ...(args.scope?.kb_ids === undefined ? {} : { kbIds: args.scope.kb_ids }),
    ...(args.scope?.kb_slugs === undefined ? {} : { kbSlugs: args.scope.kb_slugs }),
    ...(args.scope?.path_prefixes === undefined ? {} : { pathPrefixes: args.scope.path_prefixes }),
    ...(args.filters?.tags === undefined ? {} : { tags: args.filters.tags }),
    ...(args.filters?.media_types === undefined ? {} : { mediaTypes: args.filters.media_types }),
    ...(args.filters?.content === undefined ? {} : { content: args.filters.content }),
    ...(args.filters?.updated_since === undefined ? {} : { updatedSince: args.filters.updated_since }),
    ...(args.filters?.kinds === undefined ? {} : { kinds: args.filters.kinds }),
    ...(args.retrieval === undefined ? {} : { retrieval: args.retrieval }),
    ...(args.ranking === undefined
      ? {}
      : {
          ranking: {
            ...(args.ranking.recency === undefined ? {} : { recency: args.ranking.recency }),
            ...(args.ranking.path_boosts === undefined ? {} : { pathBoosts: args.ranking.path_boosts }),
            ...(args.ranking.prefer_exact_phrase === undefined ? {} : { preferExactPhrase: args.ranking.prefer_exact_phrase }),
          },
        }),
    ...(args.max_files === undefined ? {} : { maxFiles: args.max_files }),
    ...(args.cursor === undefined ? {} : { cursor: args.cursor }),
  });
  // The event names the KBs searched, so their teams' audit_query_text setting decides whether the query is shown.
  audit.readAs('kb.search');
  audit.detail({ query: args.query, results: page.hits.length, total: page.total });
  audit.touch(
    ...page.searched.map((kb) => ({ type: 'kb', id: kb })),
    ...page.hits.map((h) => (h.kb === undefined ? { type: h.resource.type, id: h.resource.id } : { type: 'kb_file', id: String(h.ref.file_id) })),
  );
  const assets = await assetBlocks(services, caller, page.hits);
  return jsonReply({
    results: page.hits.map((hit): z.infer<typeof result> => {
      if (hit.kb === undefined) return contextResult(hit);
      const fileId = String(hit.ref.file_id);
      const asset = assets.get(fileId);
      return {
        kind: 'file' as const,
        kb_id: hit.kb.kb.id,
        kb_slug: hit.kb.kb.slug,
        path: hit.path,
        file_id: fileId,
        version: Number(hit.ref.version),
        title: hit.title,
        score: hit.score,
        snippets: [...hit.snippets],
        reasons: reasonsWire(hit),
        read_ref: { tool: 'read_file' as const, arguments: { kb_id: hit.kb.kb.id, file_id: fileId } },
        ...(asset === undefined ? {} : { asset }),
      };
    }),
    total: page.total,
    next_cursor: page.nextCursor ?? null,
    retrieval: page.retrieval,
    ...(page.flagged.length === 0 ? {} : { flagged_kbs: page.flagged.map(({ kb }) => ({ kb_id: kb.id, kb_slug: kb.slug, name: kb.name })) }),
  });
}

/** Atmina's `search`, finding `content` of other products beside KB files (the composition root says which: src/products.ts). */
export const searchTool = (content: SearchedContent) =>
  defineTool({
    name: 'search',
    heavy: true,
    dialect: 'atmina',
    title: 'Search',
    description:
      'Finds the files that best answer a question or keywords across the Knowledge Bases you can search (or those scope names), and the Alignbase Knowledge, Memories and Artifacts you may read, best first, one result per file or resource: its kind, snippets with the matched words marked, a score, reasons, and read_ref naming the tool and arguments that read it whole. Write the question as you would ask it; quote "a phrase" to require it, end a word with * to match its prefix. Answer from a sufficient snippet; use list_files for an exhaustive listing. A write can precede indexing: see atmina://kb/{kb_id}/indexing-status.',
    input: searchInput,
    output: searchOutput,
    annotations: READ,
    scopes: ['context.read'],
    // Search access (a public KB of the organisation), or reading some Knowledge, Memory or
    // Artifact (a Viewer grant, or a route to a published Knowledge), is enough: search shows
    // what the caller may find.
    minimumRole: 'finder',
    run: (context, args) => searchFiles(content, context, args),
  });
