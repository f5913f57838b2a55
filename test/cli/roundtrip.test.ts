import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pngOf } from '../atmina/assets/fixtures.ts';
import type { CliStore, ExportManifest } from './support.ts';
import { ORG, cliStoreBackends, comparableExport, kgw } from './support.ts';

/**
 * Export → import → export: a tenant with Knowledge Base files (text and an image) and Alignbase
 * Knowledge, Memories and a Skill, exported with kgw export folder, brought into another store
 * with kgw import export, and exported again: every file and every resource's latest content
 * has the same SHA-256 on both sides. Through the real CLI on each store.
 */

const ORG_KB = `${ORG}kbs:
  - slug: runbooks
    name: Runbooks
    team: docs
`;

const ORG_CONTENT = `${ORG_KB}knowledge:
  - title: Release checklist
    content: "---\\nowner: alice\\n---\\n# Release checklist\\n\\n1. Tag.\\n"
    authority: must_follow
    publish: true
    review_by: 2030-06-30
  - title: "Draft: ideas"
    content: "Not published.\\n"
skills:
  - dir: skills/release-check
    publish: true
memories:
  - name: Release state
    content: "No release in progress.\\u0007\\n"
`;

for (const backend of cliStoreBackends()) {
  describe(`export, import, export again on ${backend.name}`, () => {
    let from: CliStore;
    let to: CliStore;
    const exportOf = async (store: CliStore, folder: string): Promise<ExportManifest> => {
      const result = await kgw(['export', 'folder', folder, '--tenant', 'acme', '--json'], store.env);
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(await readFile(path.join(folder, 'manifest.json'), 'utf8')) as ExportManifest;
    };
    const importInto = (...args: string[]) =>
      kgw(['import', 'export', path.join(from.workDir, 'out'), '--tenant', 'acme', '--as', 'alice@acme.test', '--json', ...args], to.env);

    before(async () => {
      from = await backend.open();
      to = await backend.open();
      await mkdir(path.join(from.workDir, 'skills', 'release-check', 'scripts'), { recursive: true });
      await writeFile(path.join(from.workDir, 'skills', 'release-check', 'SKILL.md'), '---\nname: release-check\ndescription: Checks.\n---\n# Check\n');
      await writeFile(path.join(from.workDir, 'skills', 'release-check', 'scripts', 'check.sh'), '#!/bin/sh\n');
      await writeFile(path.join(from.workDir, 'org.yaml'), ORG_CONTENT);
      assert.equal((await kgw(['apply', path.join(from.workDir, 'org.yaml')], from.env)).code, 0);
      const vault = path.join(from.workDir, 'vault');
      await mkdir(path.join(vault, 'img'), { recursive: true });
      await writeFile(path.join(vault, 'README.md'), '# Runbooks\n\nSee [[ops/deploy]].\n');
      await mkdir(path.join(vault, 'ops'));
      await writeFile(path.join(vault, 'ops', 'deploy.md'), '\uFEFF# Deploy\r\n\r\nStep one.\r\n');
      await writeFile(path.join(vault, 'img', 'chart.png'), pngOf(9, 4));
      const seeded = await kgw(['import', 'folder', vault, '--tenant', 'acme', '--kb', 'runbooks', '--as', 'alice@acme.test'], from.env);
      assert.equal(seeded.code, 0, seeded.stderr);
      await writeFile(path.join(to.workDir, 'org.yaml'), ORG_KB);
      assert.equal((await kgw(['apply', path.join(to.workDir, 'org.yaml')], to.env)).code, 0);
    });
    after(async () => {
      await from?.dispose();
      await to?.dispose();
    });

    it('reproduces every file and resource with the same SHA-256, changes nothing the second time, and lists what it does not carry', async () => {
      const first = await exportOf(from, path.join(from.workDir, 'out'));
      assert.equal(first.alignbase.length, 4);
      const dry = await importInto('--dry-run');
      assert.equal(dry.code, 0, dry.stdout + dry.stderr);
      const empty = await exportOf(to, path.join(to.workDir, 'empty'));
      assert.deepEqual([empty.kbs[0]?.files, empty.alignbase], [[], []]);
      const imported = await importInto();
      assert.equal(imported.code, 0, imported.stdout + imported.stderr);
      const report = JSON.parse(imported.stdout) as { alignbase: { created: string[]; not_carried: { name: string; reason: string }[] } };
      assert.deepEqual(report.alignbase.created.sort(), [
        'knowledge:Draft: ideas',
        'knowledge:Release checklist',
        'memory:Release state',
        'skill:release-check',
      ]);
      const second = await exportOf(to, path.join(to.workDir, 'out'));
      assert.deepEqual(comparableExport(second), comparableExport(first));
      const again = await importInto();
      const twice = JSON.parse(again.stdout) as { kbs: { created: number; updated: number; unchanged: number }[]; alignbase: { unchanged: string[] } };
      assert.deepEqual(
        twice.kbs.map(({ created, updated, unchanged }) => ({ created, updated, unchanged })),
        [{ created: 0, updated: 0, unchanged: 3 }],
      );
      assert.equal(twice.alignbase.unchanged.length, 4);
    });

    it('refuses a folder that is no export, and a KB the tenant does not have, importing the rest', async () => {
      const none = await kgw(['import', 'export', to.workDir, '--tenant', 'acme', '--as', 'alice@acme.test'], to.env);
      assert.equal(none.code, 2);
      assert.match(none.stderr, /holds no export of kgw/);
      const manifestPath = path.join(from.workDir, 'out', 'manifest.json');
      const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as { kbs: { slug: string }[] };
      await writeFile(manifestPath, JSON.stringify({ ...manifest, kbs: [...manifest.kbs, { slug: 'missing', files: [{ path: 'a.md', size_bytes: 1 }] }] }));
      const missing = await importInto();
      assert.equal(missing.code, 1);
      const report = JSON.parse(missing.stdout) as { kbs: { slug: string; failed: { reason: string }[] }[] };
      assert.match(report.kbs.find((kb) => kb.slug === 'missing')?.failed[0]?.reason ?? '', /no Knowledge Base "missing"/, missing.stdout);
    });
  });
}
