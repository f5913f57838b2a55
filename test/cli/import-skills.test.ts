import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CliStore, Served } from './support.ts';
import { ORG, cliStoreBackends, kgw, lookedIn, serveWithClient, writeIn } from './support.ts';

/**
 * kgw import skills: a folder of Skill packages as agent tools keep them (one folder per Skill,
 * SKILL.md and its files) into Alignbase Skills through the real CLI while kgw serve holds the
 * store, checked through the real Alignbase tools.
 */

interface Report {
  skills: number;
  created: string[];
  updated: { name: string; detail: string }[];
  published: string[];
  unchanged: string[];
  skipped: { path: string; reason: string }[];
  failed: { name: string; reason: string }[];
}

const skillMd = (name: string, description: string, body = 'Steps.\n') => `---\nname: ${name}\ndescription: ${description}\n---\n# ${name}\n\n${body}`;

async function makeSkills(root: string): Promise<void> {
  await mkdir(path.join(root, 'release-check', 'scripts'), { recursive: true });
  await writeFile(path.join(root, 'release-check', 'SKILL.md'), skillMd('release-check', 'Checks a release before it ships.'));
  await writeFile(path.join(root, 'release-check', 'scripts', 'check.sh'), '#!/bin/sh\necho ok\n');
  await mkdir(path.join(root, 'pdf-forms'));
  await writeFile(path.join(root, 'pdf-forms', 'SKILL.md'), skillMd('pdf-forms', 'Fills PDF forms.'));
  await writeFile(path.join(root, 'pdf-forms', 'reference.md'), '# Fields\n');
  // SKILL.md names another Skill than its folder: refused alone.
  await mkdir(path.join(root, 'misnamed'));
  await writeFile(path.join(root, 'misnamed', 'SKILL.md'), skillMd('other-name', 'Wrong name.'));
  // A symbolic link inside a package: refused alone, never followed.
  await mkdir(path.join(root, 'linked'));
  await writeFile(path.join(root, 'linked', 'SKILL.md'), skillMd('linked', 'Has a link.'));
  await symlink('/etc/passwd', path.join(root, 'linked', 'passwd'));
  await mkdir(path.join(root, 'notes'));
  await writeFile(path.join(root, 'notes', 'todo.md'), 'not a Skill\n');
  await mkdir(path.join(root, '.git'));
  await writeFile(path.join(root, 'README.md'), '# My skills\n');
}

for (const backend of cliStoreBackends()) {
  describe(`kgw import skills on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    let client: Client;
    let skills: string;
    const run = (...args: string[]) => kgw(args, store.env);
    const imported = async (folder: string, ...args: string[]): Promise<{ code: number | null; report: Report; stderr: string }> => {
      const result = await run('import', 'skills', folder, '--tenant', 'acme', ...args, '--json');
      return { code: result.code, report: JSON.parse(result.stdout || '{}') as Report, stderr: result.stderr };
    };
    const tool = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const result = await client.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      return result.structuredContent as Record<string, unknown>;
    };
    /** Alice made an Editor of the Skills by the org file, so that the tools show them to her. */
    const grantAlice = async (): Promise<void> => {
      const org = `${ORG}grants:\n  - { to: alice@acme.test, on: "skill:release-check", role: editor }\n  - { to: alice@acme.test, on: "skill:pdf-forms", role: editor }\n`;
      const applied = await run('apply', await writeIn(store.workDir, 'org-grants.yaml', org));
      assert.equal(applied.code, 0, applied.stderr);
    };

    before(async () => {
      store = await backend.open();
      skills = path.join(store.workDir, 'skills');
      await makeSkills(skills);
      ({ gateway, client } = await serveWithClient(store, '/mcp'));
    });
    after(async () => {
      await client?.close();
      await gateway?.stop();
      await store?.dispose();
    });

    it('says what a dry run would do and writes nothing', async () => {
      const { code, report } = await imported(skills, '--dry-run');
      assert.equal(code, 1);
      assert.deepEqual([report.skills, report.created, report.unchanged], [4, ['pdf-forms', 'release-check'], []]);
      const again = await imported(skills, '--dry-run');
      assert.deepEqual(again.report.created, ['pdf-forms', 'release-check']);
    });

    it('imports each package as a Skill with its files, refusing a bad one alone and listing what is no Skill', async () => {
      const { code, report } = await imported(skills, '--publish');
      assert.equal(code, 1, 'a refused package makes the command fail');
      assert.deepEqual(report.created, ['pdf-forms', 'release-check']);
      assert.deepEqual(report.published, ['pdf-forms', 'release-check']);
      assert.deepEqual(
        report.failed.map((item) => item.name),
        ['linked', 'misnamed'],
      );
      assert.match(report.failed.find((item) => item.name === 'linked')?.reason ?? '', /symbolic link/);
      assert.match(report.failed.find((item) => item.name === 'misnamed')?.reason ?? '', /other-name/);
      assert.deepEqual(
        report.skipped.map((item) => [item.path, item.reason]),
        [
          ['.git', 'hidden (a tool’s folder or file)'],
          ['README.md', 'not a Skill folder'],
          ['notes', 'no SKILL.md in it'],
        ],
      );
      await grantAlice();
      const listed = (await tool('list_skills', {})) as { skills: { id: string; name: string }[] };
      const id = listed.skills.find((skill) => skill.name === 'release-check')?.id ?? '';
      const read = (await tool('read_skill', { skill_id: id, version: 'published' })) as { skill_md: string; attachments: { path: string }[] };
      assert.equal(read.skill_md, skillMd('release-check', 'Checks a release before it ships.'));
      assert.deepEqual(
        read.attachments.map((file) => file.path),
        ['scripts/check.sh'],
      );
    });

    it('changes nothing when run again, and saves a new version of a changed package only', async () => {
      const again = await imported(path.join(skills, 'release-check'));
      assert.deepEqual([again.code, again.report.unchanged, again.report.created], [0, ['release-check'], []]);
      await writeFile(path.join(skills, 'pdf-forms', 'reference.md'), '# Fields\n\nName, date.\n');
      const changed = await imported(skills);
      assert.deepEqual(changed.report.updated, [{ name: 'pdf-forms', detail: 'changed reference.md; version 1 → 2' }]);
      assert.deepEqual(changed.report.unchanged, ['release-check']);
    });

    it('refuses an unknown tenant, a path that is no folder and bad usage, creating nothing', async () => {
      const unknown = await run('import', 'skills', skills, '--tenant', 'nope');
      assert.deepEqual({ code: unknown.code, stderr: unknown.stderr }, { code: 1, stderr: `kgw: tenant "nope" not found${lookedIn(store)}\n` });
      const file = await run('import', 'skills', path.join(skills, 'README.md'), '--tenant', 'acme');
      assert.equal(file.code, 2);
      assert.match(file.stderr, /is not a folder/);
      const missing = await run('import', 'skills', skills);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /--tenant/);
    });
  });
}
