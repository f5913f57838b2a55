import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { applyOrgFile, ORG_FILE, readReferencedFiles } from '../../../src/org-sections.ts';
import { referencesOf } from '../../../src/kernel/org/referenced-files.ts';
import { cliTrail } from '../../support/audit.ts';
import { ACME_RELEASE_BOT_ORG } from '../../support/fixtures.ts';
import { storeBackends } from '../../support/stores.ts';
import type { ContextStore } from './context-support.ts';
import { PNG, openContextStore, skillMd } from './context-support.ts';
import type { RefusalCase } from '../../org/support.ts';
import { itRefuses } from '../../org/support.ts';

/** The org file's folder for every case: files and Skill folders, good and bad. */
const FOLDER = mkdtempSync(path.join(os.tmpdir(), 'kgw-org-refs-'));

function tree(entries: Record<string, string | Buffer>): void {
  for (const [relative, content] of Object.entries(entries)) {
    mkdirSync(path.dirname(path.join(FOLDER, relative)), { recursive: true });
    writeFileSync(path.join(FOLDER, relative), content);
  }
}

tree({
  'docs/ok.md': '# OK\n',
  'docs/empty.md': '',
  'docs/latin1.md': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]),
  'docs/folder/a.md': 'a\n',
  'skills/good/SKILL.md': skillMd('good'),
  'skills/good/logo.png': PNG,
  'skills/no-skill-md/README.md': '# no SKILL.md here\n',
  'skills/bad-frontmatter/SKILL.md': '---\nname: bad-frontmatter\n---\nNo description.\n',
  'skills/wrong-name/SKILL.md': skillMd('right-name'),
  'skills/with-empty/SKILL.md': skillMd('with-empty'),
  'skills/with-empty/__init__.py': '',
  'skills/with-empty/z/.gitkeep': '',
  'skills/with-links/SKILL.md': skillMd('with-links'),
  'skills/big/SKILL.md': skillMd('big'),
  'skills/big/data.bin': Buffer.alloc(2 * 1024 * 1024 + 1, 7),
  'skills/cased/SKILL.md': skillMd('cased'),
  'skills/cased/Notes.txt': 'one\n',
  'skills/cased/notes.txt': 'two\n',
  'skills/a-file': 'not a folder\n',
});
symlinkSync('ok.md', path.join(FOLDER, 'docs/link.md'));
symlinkSync('../good/SKILL.md', path.join(FOLDER, 'skills/with-links/ref.md'));
execFileSync('mkfifo', [path.join(FOLDER, 'skills/with-links/pipe')]);
symlinkSync('skills', path.join(FOLDER, 'linked'));

const BASE = ACME_RELEASE_BOT_ORG;

/** BASE (6 lines) followed by `rest`: line 7 is the first line of `rest`. */
const file = (rest: string): string => `${BASE}${rest}`;

const KNOWLEDGE_KEYS = 'title, content, file, authority, publish, review_by, expires_at';

const CASES: RefusalCase[] = [
  {
    title: 'knowledge entries that break the rules of their keys',
    folder: FOLDER,
    source: file(`knowledge:
  - { content: No title. }
  - { title: "   ", content: Blank title. }
  - { title: "${'x'.repeat(201)}", content: Too long. }
  - { title: Neither }
  - { title: Both, content: Inline., file: docs/ok.md }
  - { title: Empty, content: "" }
  - { title: Number, content: 42 }
  - { title: Authority, content: x, authority: binding }
  - { title: Publish, content: x, publish: "yes" }
  - { title: Dates, content: x, review_by: 2025-02-30, expires_at: 2025/03/01 }
  - { title: Order, content: x, review_by: 2025-06-30, expires_at: 2025-06-01 }
  - { title: Order, content: again }
  - { title: Unknown, content: x, owner: alice@acme.test }
`),
    errors: [
      [8, 'knowledge[0] is missing the required key "title"'],
      [9, 'knowledge[1].title: "   " is not a title of 1 to 200 characters'],
      [10, `knowledge[2].title: "${'x'.repeat(75)}…" is not a title of 1 to 200 characters`],
      [11, 'knowledge[3] needs content (the markdown itself) or file (a path to it)'],
      [12, 'knowledge[4] has both content and file; give one of them'],
      [13, 'knowledge[5].content: "" is not text (markdown) of at least one character'],
      [14, 'knowledge[6].content must be text (markdown) of at least one character, not a number; put it in quotes to make it text'],
      [15, 'knowledge[7].authority: "binding" is not an authority: informational, must_follow'],
      [16, 'knowledge[8].publish must be true or false, not text'],
      [17, 'knowledge[9].review_by: "2025-02-30" is not a date written YYYY-MM-DD'],
      [17, 'knowledge[9].expires_at: "2025/03/01" is not a date written YYYY-MM-DD'],
      [18, 'knowledge[10].expires_at: 2025-06-01 is before review_by 2025-06-30'],
      [19, 'knowledge[11].title: duplicate knowledge title "Order" (already listed at line 18)'],
      [20, `unknown key "owner" in knowledge[12] (expected ${KNOWLEDGE_KEYS})`],
    ],
  },
  {
    title: 'knowledge files that cannot be used',
    folder: FOLDER,
    source: file(`knowledge:
  - { title: Absolute, file: /etc/passwd }
  - { title: Escaping, file: ../secrets.md }
  - { title: Backslash, file: 'docs\\ok.md' }
  - { title: Dot, file: ./ }
  - { title: Missing, file: docs/missing.md }
  - { title: Folder, file: docs/folder }
  - { title: Empty, file: docs/empty.md }
  - { title: Latin-1, file: docs/latin1.md }
  - { title: Link, file: docs/link.md }
  - { title: Through a link, file: linked/good/SKILL.md }
  - { title: Number, file: 7 }
`),
    errors: [
      [8, 'knowledge[0].file: "/etc/passwd" must be relative to the org file\'s folder, not absolute'],
      [9, 'knowledge[1].file: "../secrets.md" must stay inside the org file\'s folder (no ..)'],
      [10, 'knowledge[2].file: "docs\\\\ok.md" must separate folders with /, not \\'],
      [11, 'knowledge[3].file: "./" must name a file or folder inside the org file\'s folder'],
      [12, 'knowledge[4].file: "docs/missing.md" does not exist'],
      [13, 'knowledge[5].file: "docs/folder" is a folder, not a file'],
      [14, 'knowledge[6].file: "docs/empty.md" is empty'],
      [15, 'knowledge[7].file: "docs/latin1.md" is not UTF-8 text; Knowledge content is markdown'],
      [16, 'knowledge[8].file: "docs/link.md" is a symbolic link; the org file reads only regular files and folders'],
      [17, 'knowledge[9].file: "linked" is a symbolic link; the org file reads only regular files and folders'],
      [18, 'knowledge[10].file must be a path relative to the org file, not a number; put it in quotes to make it text'],
    ],
  },
  {
    title: 'skill folders that are not Skill packages',
    folder: FOLDER,
    source: file(`skills:
  - { publish: true }
  - { dir: skills/missing }
  - { dir: skills/a-file }
  - { dir: skills/no-skill-md }
  - { dir: skills/bad-frontmatter }
  - { dir: skills/wrong-name }
  - { dir: skills/with-empty }
  - { dir: skills/with-links }
  - { dir: skills/big }
  - { dir: skills/cased }
  - { dir: linked/linked-skill }
  - { dir: skills/good, publish: 1, review_by: tomorrow }
  - { dir: other/good }
  - { dir: skills/good, name: good }
`),
    errors: [
      [8, 'skills[0] is missing the required key "dir"'],
      [9, 'skills[1].dir: "skills/missing" does not exist'],
      [10, 'skills[2].dir: "skills/a-file" is a file, not a folder'],
      [11, 'skills[3].dir: "skills/no-skill-md" holds no SKILL.md'],
      [12, 'skills[4].dir: "skills/bad-frontmatter" is not a valid Skill package: frontmatter must include description'],
      [13, 'skills[5].dir: "skills/wrong-name/SKILL.md" names the Skill "right-name"; a Skill\'s folder must have its name (skills/right-name)'],
      [14, 'skills[6].dir: "skills/with-empty/__init__.py" is empty; a Skill\'s files cannot be empty'],
      [14, 'skills[6].dir: "skills/with-empty/z/.gitkeep" is empty; a Skill\'s files cannot be empty'],
      [15, 'skills[7].dir: "skills/with-links/pipe" is not a regular file or folder'],
      [15, 'skills[7].dir: "skills/with-links/ref.md" is a symbolic link; the org file reads only regular files and folders'],
      [16, 'skills[8].dir: "skills/big" is not a valid Skill package: "skills/big/data.bin" cannot exceed 2 MiB decoded, got 2097153 bytes'],
      [17, 'skills[9].dir: "skills/cased" is not a valid Skill package: "skills/cased/notes.txt" differs only in case from "skills/cased/Notes.txt"'],
      [18, 'skills[10].dir: "linked" is a symbolic link; the org file reads only regular files and folders'],
      [19, 'skills[11].publish must be true or false, not a number'],
      [19, 'skills[11].review_by: "tomorrow" is not a date written YYYY-MM-DD'],
      [20, 'skills[12].dir: "other/good" does not exist'],
      [20, 'skills[12].dir: duplicate skill "good" (already listed at line 19)'],
      [21, 'unknown key "name" in skills[13] (expected dir, publish, review_by, expires_at)'],
      [21, 'skills[13].dir: duplicate skill "good" (already listed at line 19)'],
    ],
  },
  {
    title: 'grants and routes naming declared resources that have problems of their own, reported once',
    folder: FOLDER,
    source: file(`knowledge:
  - { title: Broken, file: docs/missing.md }
skills:
  - { dir: skills/no-skill-md }
grants:
  - { to: release-bot, on: knowledge:Broken, role: viewer }
  - { to: release-bot, on: skill:no-skill-md, role: viewer }
  - { to: release-bot, on: knowledge:Undeclared, role: viewer }
routes:
  - { deliver: skill:no-skill-md, to: release-bot }
`),
    errors: [
      [8, 'knowledge[0].file: "docs/missing.md" does not exist'],
      [10, 'skills[0].dir: "skills/no-skill-md" holds no SKILL.md'],
      [14, 'grants[2].on: no knowledge "Undeclared" is declared in the file or exists in tenant "acme"'],
    ],
  },
  {
    title: 'references the applying process did not send',
    source: file(`knowledge:
  - { title: Unsent, file: docs/ok.md }
skills:
  - { dir: skills/good }
`),
    errors: [
      [8, 'knowledge[0].file: "docs/ok.md" is not among the files sent with the org file'],
      [10, 'skills[0].dir: "skills/good" is not among the files sent with the org file'],
    ],
  },
];

for (const backend of storeBackends()) {
  describe(`org file knowledge and skills errors on ${backend.name}`, () => {
    let store: ContextStore;
    before(async () => {
      store = await openContextStore(backend);
      await applyOrgFile(store.db, { source: BASE }, cliTrail(store.db));
    });
    after(() => store.dispose());

    itRefuses(
      () => store.db,
      CASES,
      {},
      () => store.blob,
    );

    it('applies the good folder of the same fixtures, so the refusals above are about the bad ones only', async () => {
      const source = file('knowledge:\n  - { title: OK, file: docs/ok.md }\nskills:\n  - { dir: skills/good }\n');
      const result = await applyOrgFile(
        store.db,
        { source, files: await readReferencedFiles(source, FOLDER), blob: store.blob, dryRun: true },
        cliTrail(store.db),
      );
      assert.deepEqual(
        result.changes.map((c) => `${c.action} ${c.kind} ${c.name}`),
        ['create knowledge OK', 'create skill good'],
      );
    });
  });
}

describe('reading the files an org file references', () => {
  after(() => rmSync(FOLDER, { recursive: true, force: true }));

  it('finds file: and dir: values by their normalised path, and none in a file that does not parse', () => {
    const source =
      'knowledge:\n  - { title: A, file: ./docs//a.md }\n  - { title: B, file: ../b.md }\nskills:\n  - { dir: skills/x/ }\n  - { dir: docs/a.md }\n';
    assert.deepEqual(
      [...referencesOf(ORG_FILE.sections, source)].map(([key, named]) => [key, [...named.kinds]]),
      [
        ['docs/a.md', ['file', 'folder']],
        ['skills/x', ['folder']],
      ],
    );
    assert.deepEqual(referencesOf(ORG_FILE.sections, 'knowledge: ['), new Map());
  });

  it('reads a folder as its files with / paths, binary ones included, and reports every link and special file in it', async () => {
    const files = await readReferencedFiles('skills:\n  - dir: skills/good\n  - dir: skills/with-links\n', FOLDER);
    assert.deepEqual(files['skills/good'], {
      folder: [
        { path: 'SKILL.md', data_base64: Buffer.from(skillMd('good')).toString('base64') },
        { path: 'logo.png', data_base64: PNG.toString('base64') },
      ],
    });
    assert.deepEqual(files['skills/with-links'], {
      errors: [
        '"skills/with-links/pipe" is not a regular file or folder',
        '"skills/with-links/ref.md" is a symbolic link; the org file reads only regular files and folders',
      ],
    });
  });

  it('stops at 10 MiB of referenced files and at 500 files in one folder', async () => {
    const big = mkdtempSync(path.join(os.tmpdir(), 'kgw-org-big-'));
    try {
      mkdirSync(path.join(big, 'many'));
      for (let i = 0; i < 501; i++) writeFileSync(path.join(big, 'many', `f${String(i).padStart(3, '0')}.txt`), 'x');
      writeFileSync(path.join(big, 'a.md'), Buffer.alloc(6 * 1024 * 1024, 0x61));
      writeFileSync(path.join(big, 'b.md'), Buffer.alloc(5 * 1024 * 1024, 0x62));
      writeFileSync(path.join(big, 'c.md'), 'small\n');
      const files = await readReferencedFiles(
        'knowledge:\n  - { title: A, file: a.md }\n  - { title: B, file: b.md }\n  - { title: C, file: c.md }\nskills:\n  - { dir: many }\n',
        big,
      );
      assert.ok('file' in files['a.md']!);
      assert.deepEqual(files['b.md'], { errors: ['"b.md" takes the files the org file references over 10 MiB together'] });
      assert.deepEqual(files['c.md'], { file: Buffer.from('small\n').toString('base64') });
      assert.deepEqual(files.many, { errors: ['"many" holds more than 500 files; a Skill is at most 500 files, SKILL.md included'] });
    } finally {
      rmSync(big, { recursive: true, force: true });
    }
  });

  it("bounds a folder's files by the sections that name it: a Knowledge Base's files_from is not a Skill", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'kgw-org-kb-'));
    try {
      mkdirSync(path.join(dir, 'notes'));
      for (let i = 0; i < 1200; i++) writeFileSync(path.join(dir, 'notes', `n${String(i).padStart(4, '0')}.md`), `# ${i}\n`);
      const kb = '  - { slug: notes, name: Notes, team: eng, files_from: notes }\n';
      const onlyKb = await readReferencedFiles(`kbs:\n${kb}`, dir);
      assert.ok(onlyKb.notes !== undefined && 'folder' in onlyKb.notes, JSON.stringify(onlyKb.notes).slice(0, 300));
      assert.equal(onlyKb.notes.folder.length, 1200);
      // Named by a Skill too, the folder is read once, within the Skill's bound.
      const both = await readReferencedFiles(`kbs:\n${kb}skills:\n  - { dir: notes }\n`, dir);
      assert.deepEqual(both.notes, { errors: ['"notes" holds more than 500 files; a Skill is at most 500 files, SKILL.md included'] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
