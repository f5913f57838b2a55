import type { OpResult } from '../admin/ops.ts';
import { destination, diskSha, reasonOf, removeGone, sha256Of, writeWhole } from './export-files.ts';
import type { OpRunner } from './session.ts';

/**
 * The Alignbase part of `kgw export folder`: every Knowledge, Skill, Memory and Artifact of the
 * tenant (archived ones too), each as files a person can read and a tool can import, under
 * `alignbase/`, and its versions in the manifest. docs/migration.md has the layout.
 */

type ContextPage = OpResult<'context.resources'>;
type Resource = ContextPage['resources'][number];

/** A resource in the manifest: what the store holds, and the files this export wrote for it (paths from the export's root). */
export interface ManifestResource extends Omit<Resource, 'content'> {
  readonly path: string;
  readonly files: readonly { readonly path: string; readonly sha256: string }[];
}

export interface AlignbaseReport {
  resources: number;
  files: number;
  written: number;
  unchanged: number;
  removed: number;
  kept: { path: string; reason: string }[];
  failed: { path: string; reason: string }[];
}

const FOLDERS = { knowledge: 'knowledge', skill: 'skills', memory: 'memories', artifact: 'artifacts' } as const;
/** A file name of at most this many bytes of UTF-8 before its suffix (names are at most 200 characters). */
const NAME_MAX_BYTES = 200;
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\p{Cf}\u2028\u2029/\\:*?"<>|]/gu;

/** A resource's name as a file name: characters no file system takes made "-", cut to NAME_MAX_BYTES, never hidden or empty. */
export function fileNameOf(name: string): string {
  let safe = name.normalize('NFC').replace(UNSAFE, '-').trim().replace(/^\.+/, '');
  while (Buffer.byteLength(safe, 'utf8') > NAME_MAX_BYTES) safe = [...safe].slice(0, -1).join('');
  return safe === '' ? 'unnamed' : safe;
}

/** The front matter an export puts above a Knowledge's, Memory's or Artifact's text; the text below it is exactly the version's. */
export function exportFrontMatter(resource: Resource): string {
  const latest = resource.versions.find((v) => v.version === resource.latest_version);
  const fields: [string, unknown][] = [
    ['alignbase', resource.type],
    ['id', resource.id],
    [resource.type === 'knowledge' ? 'title' : 'name', resource.name],
    ['status', resource.status],
    ['version', resource.latest_version],
    ['published_version', resource.type === 'knowledge' || resource.type === 'skill' ? resource.published_version : null],
    ['authority', resource.type === 'knowledge' ? (latest?.authority ?? 'informational') : null],
    ['review_by', resource.review_by],
    ['expires_at', resource.expires_at],
    ['source_task', latest?.source_task ?? null],
    ['routes', resource.routes.length > 0 ? resource.routes : null],
  ];
  const lines = fields.filter(([, value]) => value !== null && value !== undefined).map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
  return `---\n${lines.join('\n')}\n---\n`;
}

/** Where a resource's text goes (from the export's root), and the folder its files go in. */
function placeOf(resource: Resource, name: string): { text: string; folder: string } {
  const base = `alignbase/${FOLDERS[resource.type]}`;
  if (resource.type === 'skill') return { text: `${base}/${name}/SKILL.md`, folder: `${base}/${name}` };
  if (resource.type === 'artifact') return { text: `${base}/${name}/ARTIFACT.md`, folder: `${base}/${name}` };
  return { text: `${base}/${name}.md`, folder: `${base}/${name}` };
}

/** Writes the tenant's Alignbase context under `root`; returns the manifest's entries and what was done. */
export async function exportAlignbase(
  run: OpRunner,
  tenant: string,
  root: string,
  before: readonly ManifestResource[],
  progress: (line: string) => void,
): Promise<{ entries: ManifestResource[]; report: AlignbaseReport }> {
  const report: AlignbaseReport = { resources: 0, files: 0, written: 0, unchanged: 0, removed: 0, kept: [], failed: [] };
  const entries: ManifestResource[] = [];
  const taken = new Set<string>();
  // Writes the file whose bytes have `sha256` unless the disk holds them already; `read` gives
  // bytes that have that SHA-256 (checked by whoever reads them). Undefined when it failed.
  const write = async (relative: string, sha256: string, read: () => Promise<Buffer>): Promise<string | undefined> => {
    report.files += 1;
    try {
      const target = destination(root, relative);
      if ((await diskSha(target)) === sha256) report.unchanged += 1;
      else {
        await writeWhole(target, await read());
        report.written += 1;
      }
      return sha256;
    } catch (error) {
      report.failed.push({ path: relative, reason: reasonOf(error) });
      return undefined;
    }
  };
  let after: string | undefined;
  do {
    const page = await run('context.resources', { tenant, ...(after === undefined ? {} : { after }) });
    for (const resource of page.resources) {
      report.resources += 1;
      // Names are unique per type, but two can map to one file name: the later one is numbered.
      let name = fileNameOf(resource.name);
      for (let n = 2; taken.has(`${resource.type}/${name.toLowerCase()}`); n += 1) name = `${fileNameOf(resource.name)} (${n})`;
      taken.add(`${resource.type}/${name.toLowerCase()}`);
      const place = placeOf(resource, name);
      const text = resource.type === 'skill' ? resource.content : `${exportFrontMatter(resource)}${resource.content}`;
      const files: { path: string; sha256: string }[] = [];
      const bytes = Buffer.from(text, 'utf8');
      const textSha = await write(place.text, sha256Of(bytes), () => Promise.resolve(bytes));
      if (textSha !== undefined) files.push({ path: place.text, sha256: textSha });
      const latest = resource.versions.find((v) => v.version === resource.latest_version);
      for (const file of latest?.files ?? []) {
        const relative = `${place.folder}/${file.path}`;
        const fetch = async (): Promise<Buffer> => {
          const got = await run('context.file', { tenant, resource_id: resource.id, version: resource.latest_version, path: file.path });
          const bytes = Buffer.from(got.data_base64, 'base64');
          if (sha256Of(bytes) !== file.sha256) throw new Error('the bytes read do not match their SHA-256');
          return bytes;
        };
        const sha = await write(relative, file.sha256, fetch);
        if (sha !== undefined) files.push({ path: relative, sha256: sha });
      }
      const { content: _content, ...meta } = resource;
      entries.push({ ...meta, path: place.text, files });
      if (report.resources % 100 === 0) progress(`alignbase: ${report.resources} resources, ${report.files} files`);
    }
    after = page.next ?? undefined;
  } while (after !== undefined);
  const live = new Set([...entries.flatMap((entry) => entry.files.map((file) => file.path)), ...report.failed.map((failed) => failed.path)]);
  await removeGone(
    root,
    before.flatMap((entry) => entry.files),
    live,
    report,
  );
  return { entries, report };
}

/** The Alignbase entries of an earlier export's manifest (none when it has no such part). */
export function earlierResources(manifest: unknown): ManifestResource[] {
  const list = typeof manifest === 'object' && manifest !== null ? (manifest as { alignbase?: unknown }).alignbase : undefined;
  return Array.isArray(list) ? (list as ManifestResource[]) : [];
}
