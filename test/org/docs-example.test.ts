import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { appendFile, cp } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import type { OrgApplyResult } from '../../src/kernel/org/apply.ts';
import { applyOrgFile, readReferencedFiles } from '../../src/org-sections.ts';
import { cliTrail } from '../support/audit.ts';
import { storeBackends } from '../support/stores.ts';
import type { ContextStore } from '../alignbase/org/context-support.ts';
import { openContextStore } from '../alignbase/org/context-support.ts';

/**
 * The complete example of docs/org-file.md, applied from docs/examples/ (where the files it
 * names are shipped), must give exactly the change lists the page shows.
 */

const EXAMPLES = fileURLToPath(new URL('../../docs/examples/', import.meta.url));
const PAGE = readFileSync(new URL('../../docs/org-file.md', import.meta.url), 'utf8');

/** The first fenced block of `language` after `heading` (the first `heading` after `within`, when given). */
function blockAfter(heading: string, language: string, within?: string): string {
  const start = PAGE.indexOf(heading, within === undefined ? 0 : PAGE.indexOf(within));
  assert.ok(start >= 0, `docs/org-file.md has "${heading}"`);
  const open = PAGE.indexOf(`\`\`\`${language}\n`, start);
  const close = PAGE.indexOf('\n```\n', open);
  assert.ok(open >= 0 && close > open, `a ${language} block follows "${heading}"`);
  return PAGE.slice(open + language.length + 4, close + 1);
}

const EXAMPLE = blockAfter('## A complete example', 'yaml');
const CREATED = blockAfter('The result lists each change', 'text');
const CHANGED = blockAfter('and, after renaming Alice', 'text');
const BAD = blockAfter('## Errors', 'yaml');
const REFUSED = blockAfter('is refused with', 'text', '## Errors');

/** How `kgw apply` prints a result. */
function printed(result: OrgApplyResult): string {
  const sign = { create: '+', add: '+', update: '~', publish: '~', remove: '-' } as const;
  const changes = result.changes.map((c) => `${sign[c.action]} ${c.action} ${c.kind} ${c.name}${c.detail ? ` (${c.detail})` : ''}\n`).join('');
  return `${changes}applied ${result.changes.length} changes to tenant ${result.tenant}\n`;
}

for (const backend of storeBackends()) {
  describe(`the complete example of docs/org-file.md on ${backend.name}`, () => {
    let store: ContextStore;
    before(async () => {
      store = await openContextStore(backend);
    });
    after(() => store.dispose());

    it('applies from docs/examples/ with the documented changes, and then with the documented edits', async () => {
      const first = await applyOrgFile(
        store.db,
        {
          source: EXAMPLE,
          files: await readReferencedFiles(EXAMPLE, EXAMPLES),
          blob: store.blob,
          env: { ALICE_PASSWORD: 'correct horse' },
        },
        cliTrail(store.db),
      );
      assert.equal(printed(first), CREATED);

      // The edits the page lists, made to a copy of the example's folder.
      await cp(path.join(EXAMPLES, 'knowledge'), path.join(store.folder, 'knowledge'), { recursive: true });
      await cp(path.join(EXAMPLES, 'skills'), path.join(store.folder, 'skills'), { recursive: true });
      await appendFile(path.join(store.folder, 'knowledge', 'release-checklist.md'), '4. Close the release milestone.\n');
      let edited = EXAMPLE;
      for (const [from, to] of [
        ['    name: Alice\n', '    name: Alice Smith\n'],
        ['    tier: project\n', '    tier: manager\n'],
        ['    policy: { max_team_role: editor }\n', ''],
        ['      No release in progress.\n', '      Release 1.2 is being prepared.\n'],
        ['{ to: group:eng, on: all_knowledge, role: viewer }', '{ to: group:eng, on: all_knowledge, role: editor }'],
        ['  - { deliver: skill:release-check, to: release-bot }\n', ''],
      ] as const) {
        assert.ok(edited.includes(from), `the example holds ${JSON.stringify(from)}`);
        edited = edited.replace(from, to);
      }
      const second = await applyOrgFile(
        store.db,
        {
          source: edited,
          files: await readReferencedFiles(edited, store.folder),
          blob: store.blob,
          env: { ALICE_PASSWORD: 'battery staple' },
        },
        cliTrail(store.db),
      );
      assert.equal(printed(second), CHANGED);
    });

    it('refuses the example of the Errors section with exactly the documented lines', async () => {
      await assert.rejects(
        applyOrgFile(store.db, { source: BAD, files: await readReferencedFiles(BAD, EXAMPLES), blob: store.blob }, cliTrail(store.db)),
        (error: Error) => {
          assert.equal(`${error.message}\n`, REFUSED);
          return true;
        },
      );
    });
  });
}
