import type { Authority } from '../context/knowledge.ts';
import { KNOWLEDGE_MAX_BYTES, KNOWLEDGE_TOO_LARGE } from '../context/knowledge.ts';
import { quote } from '../../kernel/org/problems.ts';
import { CONTEXT_RESOURCES, resourceKey } from './resource-index.ts';
import { authorityRule, knowledgeTitleRule } from './rules.ts';
import type { PlannedStep } from '../../kernel/org/section.ts';
import { defineSection, DuplicateCheck, readEntries } from '../../kernel/org/section.ts';
import type { Located } from '../../kernel/org/yaml-reader.ts';
import { appliedToHeads, contentHash } from './applied-content.ts';
import type { Dates } from './context-content.ts';
import { DATE_KEYS, createSteps, latestVersions, loadHeads, readContent, readDates, readPublish, soleHead, updateSteps } from './context-content.ts';

interface KnowledgeSpec {
  readonly title: Located;
  readonly content: string;
  readonly authority: Authority;
  readonly publish: boolean;
  readonly dates: Dates;
}

const DEFAULT_AUTHORITY: Authority = 'informational';
const KNOWLEDGE_WORDS = { itself: 'the markdown itself', kind: 'Knowledge content is markdown' } as const;

/** What the file says of a Knowledge's content, as recorded in org_applied_content: its authority and markdown. */
const knowledgeHash = (content: string, authority: Authority): string => contentHash(JSON.stringify([authority, content]));

/**
 * `knowledge:` — Alignbase Knowledge by title (the identity in the file), with its markdown
 * written inline (`content`) or in a file next to the org file (`file`), its authority, its
 * staleness dates and whether to publish. The file saves one new version (by no one: created_by
 * is the org file's NULL) only when its content or authority changed since it last applied them
 * and differs from the latest version; applying an unchanged file leaves the drafts reviewers
 * accepted since alone (updateSteps). Knowledge the file does not list is left alone, and
 * nothing is ever unpublished.
 */
export const knowledgeSection = defineSection<KnowledgeSpec[]>({
  key: 'knowledge',
  files: { key: 'file', kind: 'file' },
  references: [CONTEXT_RESOURCES],

  read(slot, context) {
    const { reader } = context;
    const duplicates = new DuplicateCheck('knowledge title');
    return readEntries(slot, context, (item) => {
      const fields = reader.fields(item, ['title', 'content', 'file', 'authority', 'publish', ...DATE_KEYS], ['title']);
      if (!fields) return undefined;
      const titleSlot = fields.get('title');
      const title = titleSlot && reader.string(titleSlot, knowledgeTitleRule);
      if (title) context.declaredOf(CONTEXT_RESOURCES).add(resourceKey('knowledge', title.value));
      const text = readContent(item, fields, context, KNOWLEDGE_WORDS)?.text;
      // The same bound as the tools', so a session bundle never meets a Knowledge too large to carry.
      const tooLarge = text !== undefined && Buffer.byteLength(text.value, 'utf8') > KNOWLEDGE_MAX_BYTES;
      if (text && tooLarge) reader.fail(text, `${text.path}: ${KNOWLEDGE_TOO_LARGE}`);
      const content = tooLarge ? undefined : text?.value;
      const authoritySlot = fields.get('authority');
      const authority = authoritySlot ? reader.string(authoritySlot, authorityRule)?.value : DEFAULT_AUTHORITY;
      const publish = readPublish(fields, reader);
      const dates = readDates(fields, reader);
      if (!title || !duplicates.first(title, reader)) return undefined;
      if (content === undefined || authority === undefined || publish === undefined || dates === undefined) return undefined;
      return { title, content, authority: authority as Authority, publish, dates };
    });
  },

  async plan(specs, context) {
    const { tx, tenant } = context;
    const heads = await loadHeads(
      tx,
      tenant.id,
      'knowledge',
      specs.map((spec) => spec.title.value),
      { archived: false },
    );
    const latestOf = await latestVersions(tx, tenant.id, heads);
    const applied = await appliedToHeads(tx, tenant.id, [...heads.values()].flat(), (version) =>
      knowledgeHash(version.content, version.authority ?? DEFAULT_AUTHORITY),
    );
    const steps: PlannedStep[] = [];
    for (const spec of specs) {
      const title = spec.title.value;
      const head = soleHead(context, heads, title, spec.title, `Knowledge titled ${quote(title)}`);
      if (head === null) continue;
      if (!head) {
        const detail = spec.authority === DEFAULT_AUTHORITY ? [] : [`authority ${spec.authority}`];
        const version = { content: spec.content, authority: spec.authority, createdBy: undefined };
        const sha256 = knowledgeHash(spec.content, spec.authority);
        steps.push(...createSteps(context, 'knowledge', title, { version, sha256, dates: spec.dates, details: detail, publish: spec.publish }));
        continue;
      }
      const previous = latestOf(head);
      const authorityWas = previous?.authority ?? DEFAULT_AUTHORITY;
      const differences: string[] = [];
      if (previous === undefined) differences.push('content set');
      else if (previous.content !== spec.content) differences.push('content changed');
      if (previous !== undefined && authorityWas !== spec.authority) differences.push(`authority ${authorityWas} → ${spec.authority}`);
      // Attachments (from an accepted proposal) are not the file's to manage: they stay.
      const version = { content: spec.content, authority: spec.authority, attachments: previous?.attachments ?? [], createdBy: undefined };
      steps.push(
        ...updateSteps(context, 'knowledge', title, head, {
          differences,
          version,
          dates: spec.dates,
          publish: spec.publish,
          sha256: knowledgeHash(spec.content, spec.authority),
          applied: applied.get(head.id),
        }),
      );
    }
    return steps;
  },
});
