import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { CliStore } from './support.ts';
import { ORG, cliStoreBackends, kgw } from './support.ts';

/**
 * kgw export folder, the Alignbase part: Knowledge, Skills and Memories declared by an org file
 * (applied twice, so a Knowledge has two versions) written under alignbase/ with the manifest's
 * versions, grants and routes, through the real CLI on each store.
 */

const sha = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

const CHECKLIST_V1 = '# Release checklist\n\n1. Tag.\n';
const CHECKLIST_V2 = '---\nowner: alice\n---\n# Release checklist\n\n1. Tag.\n2. Announce.\n';
const SKILL_MD = '---\nname: release-check\ndescription: Checks a release.\n---\n# Release check\n';
const SCRIPT = '#!/bin/sh\necho ok\n';

const ORG_FILE = `${ORG}knowledge:
  - title: Release checklist
    file: knowledge/checklist.md
    authority: must_follow
    publish: true
  - title: "Notes: a/b"
    content: "Odd title.\\n"
skills:
  - dir: skills/release-check
memories:
  - name: Release state
    content: "No release in progress.\\n"
grants:
  - { to: release-bot, on: "knowledge:Release checklist", role: publisher }
routes:
  - { deliver: "knowledge:Release checklist", to: release-bot }
  - { deliver: "memory:Release state", to: group:eng }
`;

interface Resource {
  type: string;
  name: string;
  path: string;
  latest_version: number;
  published_version: number | null;
  routes: string[];
  grants: { to: string; role: string }[];
  versions: { version: number; sha256: string; authority: string | null; author: string | null; files: { path: string; sha256: string }[] }[];
  files: { path: string; sha256: string }[];
}

interface Report {
  kbs: unknown[];
  alignbase?: { resources: number; files: number; written: number; unchanged: number; removed: number; failed: unknown[] };
}

for (const backend of cliStoreBackends()) {
  describe(`kgw export folder of Alignbase content on ${backend.name}`, () => {
    let store: CliStore;
    let out: string;
    const run = (...args: string[]) => kgw(args, store.env);
    const exported = async (...args: string[]): Promise<Report> => {
      const result = await run('export', 'folder', out, '--tenant', 'acme', ...args, '--json');
      assert.equal(result.code, 0, result.stderr);
      return JSON.parse(result.stdout) as Report;
    };
    const apply = async (checklist: string): Promise<void> => {
      await writeFile(path.join(store.workDir, 'knowledge', 'checklist.md'), checklist);
      const applied = await run('apply', path.join(store.workDir, 'org.yaml'));
      assert.equal(applied.code, 0, applied.stderr);
    };

    before(async () => {
      store = await backend.open();
      out = path.join(store.workDir, 'export');
      await mkdir(path.join(store.workDir, 'knowledge'));
      await mkdir(path.join(store.workDir, 'skills', 'release-check', 'scripts'), { recursive: true });
      await writeFile(path.join(store.workDir, 'skills', 'release-check', 'SKILL.md'), SKILL_MD);
      await writeFile(path.join(store.workDir, 'skills', 'release-check', 'scripts', 'check.sh'), SCRIPT);
      await writeFile(path.join(store.workDir, 'org.yaml'), ORG_FILE);
      await apply(CHECKLIST_V1);
      await apply(CHECKLIST_V2);
    });
    after(async () => {
      await store?.dispose();
    });

    it('writes each resource’s latest text and files, with every version, grant and route in the manifest', async () => {
      const report = await exported('--kinds', 'alignbase');
      assert.deepEqual(report.kbs, []);
      assert.deepEqual(
        { resources: report.alignbase?.resources, files: report.alignbase?.files, written: report.alignbase?.written },
        { resources: 4, files: 5, written: 5 },
      );
      const checklist = await readFile(path.join(out, 'alignbase', 'knowledge', 'Release checklist.md'), 'utf8');
      const [, head = '', body] = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(checklist) ?? [];
      // The version's own text, front matter and all, follows the export's block exactly.
      assert.equal(body, CHECKLIST_V2);
      assert.match(head, /^alignbase: "knowledge"\nid: "[0-9a-f-]{36}"\ntitle: "Release checklist"\nstatus: "active"\nversion: 2\npublished_version: 2\n/);
      assert.match(head, /\nauthority: "must_follow"\nroutes: \["release-bot"\]$/);
      assert.equal(await readFile(path.join(out, 'alignbase', 'skills', 'release-check', 'SKILL.md'), 'utf8'), SKILL_MD);
      assert.equal(await readFile(path.join(out, 'alignbase', 'skills', 'release-check', 'scripts', 'check.sh'), 'utf8'), SCRIPT);
      assert.match(
        await readFile(path.join(out, 'alignbase', 'memories', 'Release state.md'), 'utf8'),
        /\nroutes: \["group:eng"\]\n---\nNo release in progress\.\n$/,
      );
      // "/" and ":" cannot be in a file name on every system.
      assert.match(await readFile(path.join(out, 'alignbase', 'knowledge', 'Notes- a-b.md'), 'utf8'), /\ntitle: "Notes: a\/b"\n[\s\S]*---\nOdd title\.\n$/);
      const manifest = JSON.parse(await readFile(path.join(out, 'manifest.json'), 'utf8')) as { kbs: unknown[]; alignbase: Resource[] };
      const release = manifest.alignbase.find((r) => r.name === 'Release checklist');
      assert.deepEqual(
        release?.versions.map((v) => [v.version, v.sha256, v.authority, v.author]),
        [
          [1, sha(CHECKLIST_V1), 'must_follow', null],
          [2, sha(CHECKLIST_V2), 'must_follow', null],
        ],
      );
      assert.deepEqual(
        [release?.path, release?.published_version, release?.routes, release?.grants],
        ['alignbase/knowledge/Release checklist.md', 2, ['release-bot'], [{ to: 'release-bot', role: 'publisher' }]],
      );
      const skill = manifest.alignbase.find((r) => r.type === 'skill');
      assert.deepEqual(
        skill?.versions[0]?.files.map((f) => [f.path, f.sha256]),
        [['scripts/check.sh', sha(SCRIPT)]],
      );
      assert.deepEqual(
        skill?.files.map((f) => f.path),
        ['alignbase/skills/release-check/SKILL.md', 'alignbase/skills/release-check/scripts/check.sh'],
      );
    });

    it('writes nothing again when nothing changed, and only the changed file when something did', async () => {
      const again = await exported('--kinds', 'alignbase');
      assert.deepEqual([again.alignbase?.written, again.alignbase?.unchanged], [0, 5]);
      await apply(`${CHECKLIST_V2}3. Celebrate.\n`);
      const changed = await exported();
      assert.deepEqual([changed.alignbase?.written, changed.alignbase?.unchanged], [1, 4]);
    });

    it('refuses kinds it does not know and --kb with Alignbase content', async () => {
      const bad = await run('export', 'folder', out, '--tenant', 'acme', '--kinds', 'kbs,brains');
      assert.deepEqual([bad.code, bad.stderr], [2, 'kgw: --kinds takes kbs, alignbase, brain and org, not "brains" (see "kgw export --help")\n']);
      const both = await run('export', 'folder', out, '--tenant', 'acme', '--kb', 'x', '--kinds', 'alignbase');
      assert.equal(both.code, 2);
      assert.match(both.stderr, /--kb exports one Knowledge Base/);
    });
  });
}
