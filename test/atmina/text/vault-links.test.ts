import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { referencesOf } from '../../../src/atmina/kb/text/references.ts';
import type { VaultFile } from '../../../src/atmina/kb/text/vault-links.ts';
import { VaultIndex, aliasesOf, relinkNote } from '../../../src/atmina/kb/text/vault-links.ts';

/** A vault as kgw import folder sees it: each file's vault path and KB path (the same but where a name was mapped). */
const FILES: VaultFile[] = [
  { source: 'Notes/Welcome.md', path: 'Notes/Welcome.md' },
  { source: 'Notes/Project Plan.md', path: 'Notes/Project Plan.md' },
  { source: 'Daily/2026-12-01.md', path: 'Daily/2026-12-01.md' },
  { source: 'Daily/Ideas.md', path: 'Daily/Ideas.md' },
  { source: 'Archive/Old/Ideas.md', path: 'Archive/Old/Ideas.md' },
  { source: 'Top.md', path: 'Top.md' },
  { source: 'attachments/diagram.png', path: 'attachments/diagram.png' },
  { source: 'odd\u200Bname.md', path: 'oddname.md' },
];

function vault(): VaultIndex {
  const index = new VaultIndex(FILES);
  index.addAliases('Notes/Welcome.md', ['Home', 'Start Page']);
  return index;
}

/** Where `related` would send each distinct wiki reference of `text` (the file at `path`) among the vault's KB paths: its first candidate path held, else its name held by one file. */
function resolvedBy(text: string, path: string): (string | undefined)[] {
  const paths = FILES.map((file) => file.path);
  return referencesOf(text, path)
    .references.filter((r) => r.type === 'wiki')
    .map((r) => {
      const named = paths.filter((p) => p.slice(p.lastIndexOf('/') + 1) === r.name);
      return r.paths.find((p) => paths.includes(p)) ?? (named.length === 1 ? named[0] : undefined);
    });
}

describe('vault links', () => {
  it('reads aliases from a list or a single string, bounded, ignoring what is not text', () => {
    assert.deepEqual(aliasesOf('---\naliases: [Home, " Start Page ", 7, ""]\n---\n# x\n'), ['Home', 'Start Page']);
    assert.deepEqual(aliasesOf('---\nalias: Home\n---\n'), ['Home']);
    assert.deepEqual(aliasesOf('# no front matter\n'), []);
    assert.deepEqual(aliasesOf(`---\naliases: [${Array.from({ length: 150 }, (_, n) => `a${n}`).join(', ')}]\n---\n`).length, 100);
    assert.deepEqual(aliasesOf(`---\naliases: ["${'x'.repeat(201)}", ok]\n---\n`), ['ok']);
  });

  it('leaves a link alone when the KB resolves it to the file the vault does', () => {
    const text = 'See [[Project Plan]], [[Welcome|home]], [[../Notes/Welcome#Intro]] and ![[diagram.png]].\n';
    assert.deepEqual(relinkNote(text, 'Notes/Welcome.md', 'Notes/Welcome.md', vault()), { text, links: 0 });
  });

  it('rewrites an alias, a name in another case and a mapped file name as relative paths, keeping the text shown', () => {
    const text = 'Go [[Home]], read [[project plan#Goals]], see [[Start Page|the start]] and [[odd\u200Bname]].\n';
    const { text: out, links } = relinkNote(text, 'Daily/2026-12-01.md', 'Daily/2026-12-01.md', vault());
    assert.equal(links, 4);
    assert.equal(
      out,
      'Go [[../Notes/Welcome|Home]], read [[../Notes/Project Plan#Goals|project plan]], see [[../Notes/Welcome|the start]] and [[../oddname|odd\u200Bname]].\n',
    );
    // Every rewritten link now resolves in the KB to the file the vault meant.
    assert.deepEqual(resolvedBy(out, 'Daily/2026-12-01.md'), ['Notes/Welcome.md', 'Notes/Project Plan.md', 'oddname.md']);
    assert.deepEqual(resolvedBy(text, 'Daily/2026-12-01.md'), [undefined, undefined, undefined, undefined]);
  });

  it('sends a name several files share to the one beside the note, else the shallowest, as the vault does', () => {
    const index = vault();
    // From Daily/, [[Ideas]] is Daily/Ideas.md: the KB's relative candidate finds it, so nothing changes.
    assert.equal(relinkNote('[[Ideas]]\n', 'Daily/2026-12-01.md', 'Daily/2026-12-01.md', index).links, 0);
    // From the root, the vault takes the shallowest; the KB's name lookup sees two files and resolves none.
    assert.equal(relinkNote('[[Ideas]]\n', 'Top.md', 'Top.md', index).text, '[[Daily/Ideas|Ideas]]\n');
  });

  it('keeps embeds without a label and their size suffix, and the extension of a file that is not a note', () => {
    const index = vault();
    assert.equal(
      relinkNote('![[DIAGRAM.png|300]] ![[Diagram.PNG]]\n', 'Top.md', 'Top.md', index).text,
      '![[attachments/diagram.png|300]] ![[attachments/diagram.png]]\n',
    );
  });

  it('leaves front matter, fenced code, code spans and links to nothing as written', () => {
    const text = [
      '---',
      'related: "[[Home]]"',
      '---',
      '```md',
      '[[Home]]',
      '```',
      'Code `[[Home]]` and text [[Home]] and [[Nowhere]] and [[]].',
      '~~~~',
      '[[Home]]',
      '~~~',
      'still code [[Home]]',
      '~~~~',
      '',
    ].join('\n');
    const { text: out, links } = relinkNote(text, 'Top.md', 'Top.md', vault());
    assert.equal(links, 1);
    assert.equal(out, text.replace('text [[Home]]', 'text [[Notes/Welcome|Home]]'));
  });

  it('is idempotent: a relinked note relinks to itself', () => {
    const once = relinkNote('[[Home]] [[project plan]] [[Ideas]]\n', 'Top.md', 'Top.md', vault()).text;
    assert.deepEqual(relinkNote(once, 'Top.md', 'Top.md', vault()), { text: once, links: 0 });
  });

  it('refuses nothing and stays linear on hostile text', () => {
    const index = vault();
    const hostile = `${'[['.repeat(50_000)}Home${']]'.repeat(50_000)}\n\u0000[[Home\u202E]] [[${'x'.repeat(5000)}]] [[../../../../etc/passwd]] [[\uD800]]\n`;
    const started = performance.now();
    const { text } = relinkNote(hostile, 'Top.md', 'Top.md', index);
    assert.ok(typeof text === 'string');
    assert.ok(performance.now() - started < 5000);
  });
});
