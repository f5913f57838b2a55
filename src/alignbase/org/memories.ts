import { Buffer } from 'node:buffer';
import type { Transaction } from '../../store/db.ts';
import { MEMORY_MAX_BYTES, MEMORY_TOO_LARGE } from '../context/memory.ts';
import { saveVersion } from '../versions/versions.ts';
import { quote } from '../../kernel/org/problems.ts';
import { CONTEXT_RESOURCES, resourceKey } from './resource-index.ts';
import { quotePath } from '../../kernel/org/referenced-files.ts';
import { memoryNameRule } from './rules.ts';
import type { PlannedStep } from '../../kernel/org/section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../../kernel/org/section.ts';
import type { Located, YamlReader } from '../../kernel/org/yaml-reader.ts';
import { contentHash, loadApplied, remember, replacesSince } from './applied-content.ts';
import type { EntryContent } from './context-content.ts';
import { createSteps, latestVersions, loadHeads, readContent, soleHead } from './context-content.ts';

interface MemorySpec {
  readonly name: Located;
  readonly content: string;
}

const MEMORY_WORDS = { itself: 'the text itself', kind: 'Memory content is text' } as const;

/**
 * `memories:` — Alignbase Memories by name, with their content written inline (`content`) or in
 * a file next to the org file (`file`), at most 25 KiB of UTF-8. Memory is the agents' working
 * state with live versions (no publishing), so the file's content is a starting point that the
 * file changes only deliberately: a Memory the file creates gets it as version 1, and later the
 * file saves one new version (by no one) only when its content for the Memory differs from the
 * content it last applied there (remembered as a SHA-256) and from the latest version. Applying
 * an unchanged file therefore leaves what agents wrote since alone. Memories the file does not
 * list are left alone.
 */
export const memoriesSection = defineSection<MemorySpec[]>({
  key: 'memories',
  files: { key: 'file', kind: 'file' },
  references: [CONTEXT_RESOURCES],

  read(slot, context) {
    const { reader } = context;
    const duplicates = new DuplicateCheck('memory name');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['name', 'content', 'file'], ['name']);
      if (!fields) return undefined;
      const nameSlot = fields.get('name');
      const name = nameSlot && reader.string(nameSlot, memoryNameRule);
      if (name) context.declaredOf(CONTEXT_RESOURCES).add(resourceKey('memory', name.value));
      const content = readContent(item, fields, context, MEMORY_WORDS);
      const fits = content !== undefined && fitsMemory(content, reader);
      if (!name || !duplicates.first(name, reader)) return undefined;
      if (content === undefined || !fits) return undefined;
      return { name, content: content.text.value };
    });
  },

  async plan(specs, context) {
    const { tx, tenant } = context;
    const heads = await loadHeads(
      tx,
      tenant.id,
      'memory',
      specs.map((spec) => spec.name.value),
      { archived: false },
    );
    const all = [...heads.values()].flat();
    const latestOf = await latestVersions(tx, tenant.id, heads);
    const applied = await loadApplied(
      tx,
      tenant.id,
      all.map((head) => head.id),
    );
    const steps: PlannedStep[] = [];
    for (const spec of specs) {
      const name = spec.name.value;
      const sha256 = contentHash(spec.content);
      const head = soleHead(context, heads, name, spec.name, `Memories named ${quote(name)}`);
      if (head === null) continue;
      if (!head) {
        steps.push(...createSteps(context, 'memory', name, { version: { content: spec.content, createdBy: undefined }, sha256 }));
        continue;
      }
      const previous = latestOf(head);
      const last = applied.get(head.id);
      // The file says what it said when it was last applied: whatever agents wrote since stays.
      if (previous !== undefined && last?.sha256 === sha256) continue;
      if (previous !== undefined && previous.content === spec.content) {
        // Nothing to save, but remembered, so that a later write by an agent is kept.
        const write = (q: Transaction): Promise<void> => remember(q, tenant.id, { id: head.id, type: 'memory' }, { sha256, version: head.latestVersion });
        steps.push({ change: { action: 'update', kind: 'memory', name, detail: `version ${head.latestVersion} already holds the file's content` }, write });
        continue;
      }
      const version = head.latestVersion + 1;
      const detail = [previous === undefined ? 'content set' : 'content changed', `version ${head.latestVersion} → ${version}`];
      const replaces = replacesSince(last, head.latestVersion);
      if (replaces !== undefined) detail.push(replaces);
      const write = async (q: Transaction): Promise<void> => {
        await saveVersion(q, tenant.id, head, { content: spec.content, createdBy: undefined });
        await remember(q, tenant.id, { id: head.id, type: 'memory' }, { sha256, version });
      };
      steps.push({ change: { action: 'update', kind: 'memory', name, detail: detail.join('; ') }, write });
    }
    return steps;
  },
});

/** At most MEMORY_MAX_BYTES of UTF-8, as create_memory and write_memory take it; reported on the content's or file's line. */
function fitsMemory(content: EntryContent, reader: YamlReader): boolean {
  const bytes = Buffer.byteLength(content.text.value, 'utf8');
  if (bytes <= MEMORY_MAX_BYTES) return true;
  const what = content.file === undefined ? 'the content' : quotePath(content.file);
  reader.fail(content.text, `${content.text.path}: ${MEMORY_TOO_LARGE} (${grouped(MEMORY_MAX_BYTES)} bytes of UTF-8); ${what} is ${grouped(bytes)} bytes`);
  return false;
}

const grouped = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
