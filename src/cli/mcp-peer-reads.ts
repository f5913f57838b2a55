import { ItemRefused } from './kb-import.ts';
import type { McpSource } from './mcp-source.ts';

/**
 * Reads that kgw import mcp and kgw export mcp both make of the other endpoint's tools, each
 * bounded and checked the same way whichever side the endpoint is (its failures say which).
 */

/** The bytes read_context_attachment sends at most per call (the Alignbase spec: 256 KiB). */
const ATTACHMENT_CHUNK = 256 * 1024;

/**
 * Every item of a listing tool that pages with `cursor` and `next_cursor` (Atmina's list_files),
 * in the tool's order: at most `max`; paging that goes on past it, or names its own page again,
 * is refused whole.
 */
export async function everyPage(
  peer: McpSource,
  tool: string,
  args: Record<string, unknown>,
  field: string,
  bound: { max: number; noun: string },
): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | undefined;
  for (let listed = 0; ;) {
    const page = await peer.call(tool, { ...args, ...(cursor === undefined ? {} : { cursor }) });
    const got: unknown = page[field];
    const pageItems: unknown[] = Array.isArray(got) ? (got as unknown[]) : [];
    items.push(...pageItems);
    listed += Math.max(pageItems.length, 1);
    const next = page['next_cursor'];
    if (typeof next !== 'string' || next === '') return items;
    if (listed >= bound.max || next === cursor) throw new ItemRefused(`the ${peer.side}'s paging did not end within ${bound.max} ${bound.noun}`);
    cursor = next;
  }
}

/**
 * One attachment of an exact Knowledge, Skill or Artifact version, read whole with
 * read_context_attachment (256 KiB a call): no more bytes than `size`, the version id the same
 * across chunks (the spec's check that the version did not change under the reader), each
 * next_offset following the bytes sent, and no more calls than the size needs.
 */
export async function readAttachment(
  peer: McpSource,
  ref: { readonly type: string; readonly id: string; readonly version: number; readonly path: string; readonly size: number },
): Promise<Buffer> {
  const { path, size } = ref;
  const chunks: Buffer[] = [];
  let offset = 0;
  let versionId: string | undefined;
  for (let calls = 0; calls <= Math.ceil(size / ATTACHMENT_CHUNK) + 1; calls += 1) {
    const read = await peer.call('read_context_attachment', { context_type: ref.type, context_id: ref.id, version: ref.version, path, offset });
    const data = read['data_base64'];
    if (typeof data !== 'string') throw new ItemRefused(`read_context_attachment gave no data for ${path}`);
    const chunkVersion = typeof read['version_id'] === 'string' ? read['version_id'] : undefined;
    if (calls > 0 && chunkVersion !== versionId) throw new ItemRefused(`${path} changed at the ${peer.side} while it was read`);
    versionId = chunkVersion;
    const chunk = Buffer.from(data, 'base64');
    chunks.push(chunk);
    offset += chunk.length;
    if (offset > size) throw new ItemRefused(`the ${peer.side} sent more bytes for ${path} than its manifest says`);
    if (read['eof'] === true) return Buffer.concat(chunks);
    const next = read['next_offset'];
    if (typeof next === 'number' && next !== offset)
      throw new ItemRefused(`read_context_attachment at the ${peer.side} gave an offset that does not follow the bytes it sent`);
  }
  throw new ItemRefused(`read_context_attachment at the ${peer.side} did not end ${path}`);
}
