import { createHash, randomUUID } from 'node:crypto';
import type { Transaction } from '../../store/db.ts';
import { isKgwError } from '../../kernel/errors.ts';
import { KB_DESCRIPTION_MAX } from '../kb/kbs.ts';
import type { NextVersion } from '../kb/file-versions.ts';
import { KB_TEXT_MAX_BYTES, tagsOf } from '../kb/files.ts';
import { storeVersion } from '../kb/file-versions.ts';
import { mediaTypeOf, parseKbPath } from '../kb/paths.ts';
import type { FileRow, KbFile, KbVisibility } from '../kb/queries.ts';
import { FILE_COLUMNS, KB_VISIBILITIES, toFile } from '../kb/queries.ts';
import { unsafeName } from '../../kernel/text.ts';
import { quote } from '../../kernel/org/problems.ts';
import { quotePath } from '../../kernel/org/referenced-files.ts';
import { displayNameRule, slugRule } from '../../kernel/org/rules.ts';
import type { ValueRule } from '../../kernel/org/rules.ts';
import type { PlanContext, PlannedStep } from '../../kernel/org/section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../../kernel/org/section.ts';
import type { Located, YamlReader } from '../../kernel/org/yaml-reader.ts';
import { decodeBase64, lookUpFolder, readReference, utf8Text } from '../../kernel/org/file-entries.ts';

/** One file of a seeding folder, checked: its KB path, bytes and their SHA-256. */
interface SeedFile {
  readonly path: string;
  readonly bytes: Buffer;
  readonly sha256: string;
}

interface KbSpec {
  readonly slug: Located;
  readonly name: string;
  readonly team: Located;
  readonly visibility: KbVisibility;
  readonly description: string;
  /** The folder's files, or undefined when the file names no `files_from`. */
  readonly files: readonly SeedFile[] | undefined;
}

interface StoredKb {
  id: string;
  name: string;
  description: string;
  visibility: KbVisibility;
  team_id: string;
  archived: boolean;
}

const visibilityRule: ValueRule = {
  expected: `one of ${KB_VISIBILITIES.join(', ')}`,
  valid: (value) => (KB_VISIBILITIES as readonly string[]).includes(value),
};
const descriptionRule: ValueRule = {
  expected: `a description of at most ${KB_DESCRIPTION_MAX} characters`,
  valid: (value) => [...value].length <= KB_DESCRIPTION_MAX,
};
// The KB's own rules (src/atmina/kb/kbs.ts checkName): no control or bidirectional characters, trimmed.
const kbNameRule: ValueRule = {
  expected: displayNameRule.expected,
  valid: (value) => displayNameRule.valid(value) && value === value.trim() && unsafeName(value) === undefined,
};

const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/**
 * The files of a `files_from` folder as KB files: each path by the KB's path rules, UTF-8 text
 * of at most 1 MiB (Assets are uploaded, not seeded). Each problem is reported on the line.
 */
function readSeedFiles(folder: Located, files: readonly { readonly path: string; readonly data_base64: string }[], reader: YamlReader): SeedFile[] | undefined {
  const seeded: SeedFile[] = [];
  let ok = true;
  const fail = (message: string): void => {
    reader.fail(folder, `${folder.path}: ${message}`);
    ok = false;
  };
  for (const file of files) {
    const shown = quotePath(`${folder.value}/${file.path}`);
    let path: string;
    try {
      path = parseKbPath(file.path);
    } catch (error) {
      if (!isKgwError(error, 'validation')) throw error;
      fail(`${shown} cannot be a Knowledge Base file: ${error.message}`);
      continue;
    }
    const bytes = decodeBase64(file.data_base64);
    if (bytes === undefined) fail(`${shown} was not sent as base64`);
    else if (bytes.length > KB_TEXT_MAX_BYTES) fail(`${shown} is larger than 1 MiB; upload large files with request_uploads instead`);
    else if (utf8Text(bytes) === undefined) fail(`${shown} is not UTF-8 text; upload Assets with request_uploads instead`);
    else seeded.push({ path, bytes, sha256: sha256Of(bytes) });
  }
  return ok ? seeded : undefined;
}

/**
 * `kbs:` — Atmina Knowledge Bases by slug (their identity), each with a name, an owning team,
 * a visibility (default `team`) and a description, and optionally seeded from a folder next
 * to the org file (`files_from`). Each file of the folder is the KB file at the same path: a
 * missing one is created, one whose bytes differ gets one new version (`overwrite`), an equal
 * one is left as it is. Files of the KB that the folder does not hold are left alone, as are
 * KBs the file does not list; archived KBs are not changed (kgw kb restore brings one back).
 * Versions are by no one (author null) and the apply records one org.apply event.
 */
export const kbsSection = defineSection<KbSpec[]>({
  key: 'kbs',
  files: { key: 'files_from', kind: 'folder' },

  read(slot, context) {
    const { reader } = context;
    const duplicates = new DuplicateCheck('Knowledge Base');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['slug', 'name', 'team', 'visibility', 'description', 'files_from'], ['slug', 'name', 'team']);
      if (!fields) return undefined;
      const get = (key: string) => fields.get(key);
      const slugSlot = get('slug');
      const nameSlot = get('name');
      const teamSlot = get('team');
      const visibilitySlot = get('visibility');
      const descriptionSlot = get('description');
      const folderSlot = get('files_from');
      const slug = slugSlot && reader.string(slugSlot, slugRule);
      const name = nameSlot && reader.string(nameSlot, kbNameRule);
      const team = teamSlot && reader.string(teamSlot, slugRule);
      const visibility = visibilitySlot ? reader.string(visibilitySlot, visibilityRule)?.value : 'team';
      const description = descriptionSlot ? reader.string(descriptionSlot, descriptionRule)?.value : '';
      const folder = folderSlot && readReference(folderSlot, reader);
      const listed = folder && lookUpFolder(folder, context.files, reader);
      const files = folder && listed ? readSeedFiles(folder, listed, reader) : undefined;
      if (!slug || !duplicates.first(slug, reader) || !name || !team || visibility === undefined || description === undefined) return undefined;
      if (folderSlot && files === undefined) return undefined;
      return { slug, name: name.value, team, visibility: visibility as KbVisibility, description, files };
    });
  },

  async plan(specs, context) {
    const { tx, tenant, problems } = context;
    const stored = await loadKbs(tx, tenant.id);
    const steps: PlannedStep[] = [];
    for (const spec of specs) {
      const slug = spec.slug.value;
      const teamId = context.teams.resolve(spec.team.value, spec.team, `team ${quote(spec.team.value)}`, problems);
      if (teamId === undefined) continue;
      const existing = stored.get(slug);
      if (existing?.archived === true) {
        problems.add(
          spec.slug.line,
          `${spec.slug.path}: the Knowledge Base ${quote(slug)} is archived in tenant "${tenant.slug}"; restore it with kgw kb restore first`,
        );
        continue;
      }
      let kbId: string;
      if (existing === undefined) {
        kbId = randomUUID();
        const id = kbId;
        const write = async (q: Transaction): Promise<void> => {
          await q.query(`INSERT INTO kbs (tenant_id, id, team_id, slug, name, description, visibility) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
            tenant.id,
            id,
            teamId,
            slug,
            spec.name,
            spec.description,
            spec.visibility,
          ]);
        };
        steps.push({ change: { action: 'create', kind: 'knowledge base', name: slug, detail: `team ${spec.team.value}, ${spec.visibility}` }, write });
      } else {
        kbId = existing.id;
        const differences: string[] = [];
        if (existing.name !== spec.name) differences.push(`name ${quote(existing.name)} → ${quote(spec.name)}`);
        if (existing.team_id !== teamId) differences.push(`team → ${spec.team.value}`);
        if (existing.visibility !== spec.visibility) differences.push(`visibility ${existing.visibility} → ${spec.visibility}`);
        if (existing.description !== spec.description) differences.push('description changed');
        if (differences.length > 0) {
          const id = kbId;
          const write = async (q: Transaction): Promise<void> => {
            await q.query(
              `UPDATE kbs SET name = $3, team_id = $4, visibility = $5, description = $6, updated_at = clock_timestamp(), updated_by = NULL
                WHERE tenant_id = $1 AND id = $2`,
              [tenant.id, id, spec.name, teamId, spec.visibility, spec.description],
            );
          };
          steps.push({ change: { action: 'update', kind: 'knowledge base', name: slug, detail: differences.join('; ') }, write });
        }
      }
      if (spec.files !== undefined) steps.push(...(await planFiles(context, spec.slug, kbId, existing === undefined, spec.files)));
    }
    return steps;
  },
});

async function loadKbs(tx: Transaction, tenantId: string): Promise<Map<string, StoredKb>> {
  // Locked, so that an update_kb or delete_kb cannot change a KB between the plan and its writes.
  const rows = await tx.query<StoredKb & { slug: string }>(
    `SELECT id, slug, name, description, visibility, team_id, archived_at IS NOT NULL AS archived FROM kbs WHERE tenant_id = $1 FOR UPDATE`,
    [tenantId],
  );
  return new Map(rows.map((row) => [row.slug, row]));
}

/** The writes that make each file of the folder the KB's file at its path; the heads are locked so that no tool write slips in between. */
async function planFiles(context: PlanContext, kb: Located, kbId: string, isNew: boolean, files: readonly SeedFile[]): Promise<PlannedStep[]> {
  const { tx, tenant, blob, problems } = context;
  const slug = kb.value;
  const heads = new Map<string, KbFile>();
  if (!isNew) {
    const rows = await tx.query<FileRow>(`SELECT ${FILE_COLUMNS} FROM kb_files f WHERE f.tenant_id = $1 AND f.kb_id = $2 AND f.deleted_at IS NULL FOR UPDATE`, [
      tenant.id,
      kbId,
    ]);
    for (const row of rows) heads.set(row.path, toFile(row));
  }
  const steps: PlannedStep[] = [];
  for (const file of files) {
    const head = heads.get(file.path);
    if (head?.sha256 === file.sha256) continue;
    if (head !== undefined && head.kind !== 'text') {
      problems.add(kb.line, `${kb.path}: ${quotePath(file.path)} is an Asset in the Knowledge Base ${quote(slug)}; the org file seeds text files only`);
      continue;
    }
    const next: NextVersion = {
      path: file.path,
      sha256: file.sha256,
      sizeBytes: file.bytes.length,
      mediaType: mediaTypeOf(file.path),
      kind: 'text',
      // The catalog's tags, as a tool's write keeps them.
      tags: tagsOf(mediaTypeOf(file.path), file.bytes),
      operation: head === undefined ? 'create' : 'overwrite',
    };
    steps.push({
      change: {
        action: head === undefined ? 'create' : 'update',
        kind: 'kb file',
        name: `${slug}/${file.path}`,
        ...(head === undefined ? {} : { detail: 'content changed' }),
      },
      // Bytes before metadata, as every KB write: the version names bytes already stored.
      prepare: async () => {
        if (!blob) throw new Error('applyOrgFile: a kbs section with files_from needs a blob store');
        await blob.put({ body: file.bytes, size: file.bytes.length, sha256: file.sha256 });
      },
      write: async (q) => {
        await storeVersion(q, { tenantId: tenant.id, authorId: undefined }, kbId, head, next);
      },
    });
  }
  return steps;
}
