import { z } from 'zod';
import { KB_LINK_TYPES } from '../../../connectors/graph/contract.ts';
import { RELATED_LIST_MAX, relatedFiles } from '../kb/graph-links.ts';
import type { RelatedEntry } from '../kb/graph-links.ts';
import { readAsset } from '../kb/asset-rows.ts';
import { kbFor } from '../kb/access.ts';
import { findFile, parseRef } from '../kb/files.ts';
import { readerNote } from '../kb/pages.ts';
import { liveFilesById } from '../kb/found-files.ts';
import { defineTool, jsonReply } from '../../mcp/tool.ts';
import { thumbnailUrl } from './asset-rendition.ts';
import { assetBlock, assetWire } from './asset-wire.ts';
import { READ, contributionNote, fileFields, fileIdentity, fileWire, kbId } from './schemas.ts';

/*
 * Atmina's `related`: the references between a KB's files, as the graph projection keeps them
 * (src/atmina/kb/graph-links.ts). The graph names the files; the catalog (the truth) gives
 * their current path and Asset, so a file deleted since the graph last heard of it is left out.
 * docs/atmina.md ("related") has the rules.
 */

const type = z
  .enum(KB_LINK_TYPES, { error: `must be one of the registered types: ${KB_LINK_TYPES.join(', ')}` })
  .describe('markdown: [text](path); wiki: [[name]]; front_matter: a front-matter value naming a path (key says which).');

const related = z.object({
  path: z.string().describe('The related file’s current path.'),
  file_id: z.string(),
  type,
  key: z.string().optional().describe('For front_matter: the key that names the path.'),
  depth: z.number().int().min(1).max(2),
  via: z.string().optional().describe('At depth 2: the path of the depth-1 file it was reached through.'),
  asset: assetBlock.optional().describe('For a picture or PDF: the Asset the reference names.'),
});

const unresolved = z.object({
  path: z.string().describe('The path the reference points at, or its target as written when it can name no file.'),
  type,
  key: z.string().optional(),
  from_path: z.string().describe('The file that makes the reference: this one, or at depth 2 a file it refers to.'),
});

export const relatedTool = defineTool({
  name: 'related',
  dialect: 'atmina',
  title: 'Related files',
  description: `The files a file refers to (outgoing), the files referring to it (incoming), and its references no file answers (unresolved), by path or file_id (path wins when both are sent). References are Markdown links, wiki links [[…]] and front-matter values naming a KB path. depth 2 adds the files those refer to, or are referred to by. At most ${RELATED_LIST_MAX} entries per list. A write can precede indexing: see atmina://kb/{kb_id}/indexing-status.`,
  input: z
    .object({
      kb_id: kbId,
      ...fileIdentity,
      depth: z
        .union([z.literal(1), z.literal(2)], { error: 'must be 1 or 2' })
        .optional()
        .describe('1 (default): direct references; 2: also the references of the files found.'),
      types: z.array(type).min(1).max(KB_LINK_TYPES.length).optional().describe('Only references of these registered types; all by default.'),
    })
    .strict(),
  output: z.object({
    contribution_note: contributionNote,
    kb_id: z.string(),
    file: z.object(fileFields),
    outgoing: z.array(related),
    incoming: z.array(related),
    unresolved: z.array(unresolved),
    truncated: z.boolean().describe(`true when a list was cut at ${RELATED_LIST_MAX} entries or the walk at its bound.`),
    pending: z.boolean().describe('true when the graph has not yet taken in this file’s latest move or write; the lists may be behind.'),
  }),
  annotations: READ,
  scopes: ['context.read'],
  minimumRole: 'viewer',
  async run({ caller, services, audit }, args) {
    const ref = parseRef({ path: args.path, fileId: args.file_id });
    const kb = await kbFor(services.db, caller, args.kb_id, 'viewer', 'reading files');
    const file = await findFile(services.db, caller.tenant.id, kb.kb.id, ref);
    const found = await relatedFiles(services.graph.kbLinks(), {
      tenantId: caller.tenant.id,
      kbId: kb.kb.id,
      fileId: file.id,
      depth: args.depth ?? 1,
      ...(args.types === undefined ? {} : { types: args.types }),
    });
    const ids = [...found.outgoing, ...found.incoming].map((e) => e.file.fileId);
    const live = await liveFilesById(services.db, caller.tenant.id, kb.kb.id, ids);
    const assets = new Map<string, z.infer<typeof assetBlock>>();
    for (const shown of live.values()) {
      if (shown.kind !== 'asset') continue;
      const asset = await readAsset(services.db, caller.tenant.id, shown.id, shown.version);
      assets.set(shown.id, assetWire(shown, asset, await thumbnailUrl(services, caller, shown, asset)));
    }
    const wire = (entry: RelatedEntry) => {
      const current = live.get(entry.file.fileId);
      if (current === undefined) return [];
      const asset = assets.get(current.id);
      return [
        {
          path: current.path,
          file_id: current.id,
          type: entry.type,
          ...(entry.key === undefined ? {} : { key: entry.key }),
          depth: entry.depth,
          ...(entry.via === undefined ? {} : { via: entry.via }),
          ...(asset === undefined ? {} : { asset }),
        },
      ];
    };
    audit.touch({ type: 'kb_file', id: file.id, version: file.version });
    const note = await readerNote(services, caller, kb);
    return jsonReply({
      ...(note === undefined ? {} : { contribution_note: note }),
      kb_id: kb.kb.id,
      file: fileWire(file),
      outgoing: found.outgoing.flatMap(wire),
      incoming: found.incoming.flatMap(wire),
      unresolved: found.unresolved.map((u) => ({ path: u.path, type: u.type, ...(u.key === undefined ? {} : { key: u.key }), from_path: u.fromPath })),
      truncated: found.truncated,
      pending: found.file?.path !== file.path,
    });
  },
});
