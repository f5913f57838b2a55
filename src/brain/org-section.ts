import type { BrainSpec } from './content.ts';
import { planBrainContent, readBrainContent } from './content.ts';
import { defineSection } from '../kernel/org/section.ts';

/**
 * `brain:` — the Company Brain's own knowledge: `nodes` and `relations`, as
 * docs/company-brain.md describes them. When the section is present, the nodes and relations
 * the file keeps become exactly its lists (what an import or an approved proposal added is
 * left alone); without it, nothing of the brain changes. Relations name people by email and
 * agents by name, so it comes after the people and agents it may name.
 */
export const brainSection = defineSection<BrainSpec>({
  key: 'brain',
  read: (slot, context) => readBrainContent(slot, context.reader),
  plan: (spec, context) =>
    planBrainContent(spec, { tx: context.tx, tenantId: context.tenant.id, principals: context.principals, problems: context.problems, origin: 'org' }),
});
