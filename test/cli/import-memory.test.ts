import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { entityMarkdown, entityPath, parseMemoryGraph } from '../../src/cli/import-memory.ts';
import type { CliStore, Served } from './support.ts';
import { cliStoreBackends, kgw, serveWithClient } from './support.ts';

/**
 * kgw import memory: the JSONL knowledge graph of the MCP memory server into a Knowledge Base,
 * one file per entity, through the real CLI while kgw serve holds the store, checked through
 * the real Atmina tools (read_file, list_files, related).
 */

interface Report {
  entities: number;
  relations: number;
  dangling_relations: number;
  files: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: { path: string; reason: string }[];
  failed: { path: string; reason: string }[];
}

const line = (value: unknown): string => JSON.stringify(value);
const entity = (name: string, entityType: string, observations: string[]) => line({ type: 'entity', name, entityType, observations });
const relation = (from: string, relationType: string, to: string) => line({ type: 'relation', from, to, relationType });

/** A generated graph: 40 people working at 8 organisations in 4 cities, and the odd lines a file met in the wild can hold. */
function graph(): string {
  const lines: string[] = [];
  for (let o = 0; o < 8; o += 1) lines.push(entity(`Org ${o}`, 'organization', [`Founded in ${2000 + o}`]));
  for (let c = 0; c < 4; c += 1) lines.push(entity(`City ${c}`, 'city', []));
  for (let p = 0; p < 40; p += 1) {
    lines.push(entity(`Person ${p}`, 'person', [`Speaks ${p % 3 === 0 ? 'Spanish' : 'English'}`, `Joined in ${2010 + (p % 10)}`]));
    lines.push(relation(`Person ${p}`, 'works_at', `Org ${p % 8}`));
    lines.push(relation(`Person ${p}`, 'lives_in', `City ${p % 4}`));
  }
  for (let o = 0; o < 8; o += 1) lines.push(relation(`Org ${o}`, 'located_in', `City ${o % 4}`));
  // The same entity again: one file with both observations; the same relation again: one link.
  lines.push(entity('Person 0', 'person', ['Speaks Spanish', 'Plays chess']));
  lines.push(relation('Person 0', 'works_at', 'Org 0'));
  // A relation to an entity the file does not hold stays as text.
  lines.push(relation('Person 1', 'knows', 'Nobody Known'));
  // Hostile names: a slash, controls and bidi characters, a name that maps to nothing.
  lines.push(entity('AC/DC', 'band', ['Rock']));
  lines.push(entity('Eve\u0000\u202E', 'person', ['Hidden characters']));
  lines.push(entity('\u200B', 'person', ['Nothing left of the name']));
  lines.push('', 'not json', line([1, 2]), line({ type: 'entity', observations: ['no name'] }), line({ type: 'note', text: 'x' }));
  lines.push(line({ type: 'relation', from: 'Person 2', to: 'Org 1' }));
  // Two lines within the line bound, one entity over a KB text file's 1 MiB once merged.
  lines.push(entity('Huge', 'blob', ['x'.repeat(600 * 1024)]), entity('Huge', 'blob', ['y'.repeat(600 * 1024)]));
  return `${lines.join('\n')}\n`;
}

describe('memory graph files', () => {
  it('reads entities and relations, merging repeats and refusing what is neither, by line', () => {
    const parsed = parseMemoryGraph(graph());
    assert.equal(parsed.entities.size, 8 + 4 + 40 + 4);
    assert.deepEqual(parsed.entities.get('Person 0')?.observations, ['Speaks Spanish', 'Joined in 2010', 'Plays chess']);
    assert.equal(parsed.relations.length, 40 * 2 + 8 + 1);
    assert.deepEqual(
      parsed.refused.map((item) => item.reason),
      [
        'not JSON',
        'not a JSON object',
        'an entity without a name',
        'neither an entity nor a relation ("type")',
        'a relation without from, to and relationType',
      ],
    );
  });

  it('writes an entity as Markdown with its relations as wiki links relative to its file', () => {
    const at = entityPath('memory', { name: 'Person 1', entityType: 'person', observations: [] }) ?? '';
    assert.equal(at, 'memory/person/Person 1.md');
    const paths = new Map([['Org 1', 'memory/organization/Org 1.md']]);
    const { text, dangling } = entityMarkdown(
      { name: 'Person 1', entityType: 'person', observations: ['Line one\nline two', 'Tab\tand \u0007bell'] },
      at,
      [
        { from: 'Person 1', relationType: 'works_at', to: 'Org 1' },
        { from: 'Person 1', relationType: 'knows', to: 'Nobody [x]' },
      ],
      paths,
    );
    assert.equal(dangling, 1);
    assert.equal(
      text,
      [
        '---',
        'title: "Person 1"',
        'entity_type: "person"',
        'tags: ["person"]',
        '---',
        '# Person 1',
        '',
        '- Line one line two',
        '- Tab\tand bell',
        '',
        '## Relations',
        '',
        '- works_at [[../organization/Org 1|Org 1]]',
        '- knows Nobody [x] (not in the memory file)',
        '',
      ].join('\n'),
    );
    assert.equal(entityPath('', { name: 'AC/DC', entityType: 'band', observations: [] }), 'band/AC-DC.md');
    assert.equal(entityPath('memory', { name: '\u200B', entityType: 'person', observations: [] }), undefined);
  });
});

for (const backend of cliStoreBackends()) {
  describe(`kgw import memory on ${backend.name}`, () => {
    let store: CliStore;
    let gateway: Served;
    let client: Client;
    let file: string;
    const run = (...args: string[]) => kgw(args, store.env);
    const imported = async (...args: string[]): Promise<{ code: number | null; report: Report; stderr: string }> => {
      const result = await run('import', 'memory', file, '--tenant', 'acme', '--kb', 'graph', '--as', 'alice@acme.test', ...args, '--json');
      return { code: result.code, report: JSON.parse(result.stdout || '{}') as Report, stderr: result.stderr };
    };
    const tool = async (name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const result = await client.callTool({ name, arguments: args });
      assert.notEqual(result.isError, true, JSON.stringify(result.content));
      return result.structuredContent as Record<string, unknown>;
    };

    before(async () => {
      store = await backend.open();
      file = path.join(store.workDir, 'memory.jsonl');
      await writeFile(file, graph());
      ({ gateway, client } = await serveWithClient(store));
      await tool('create_kb', { name: 'Graph', team: 'docs' });
    });
    after(async () => {
      await client?.close();
      await gateway?.stop();
      await store?.dispose();
    });

    it('says what a dry run would do and writes nothing', async () => {
      const { code, report } = await imported('--dry-run');
      assert.equal(code, 1);
      assert.deepEqual([report.files, report.created], [8 + 4 + 40 + 2, 8 + 4 + 40 + 2]);
      assert.deepEqual(((await tool('list_files', { kb_id: 'graph' })) as { files: unknown[] }).files, []);
    });

    it('writes one file per entity, links relations both ways, and lists what it refused', async () => {
      const { code, report } = await imported();
      assert.equal(code, 1, 'refused lines make the command fail');
      assert.deepEqual(
        { entities: report.entities, relations: report.relations, dangling: report.dangling_relations, created: report.created },
        { entities: 56, relations: 89, dangling: 1, created: 54 },
      );
      assert.deepEqual(report.skipped, [{ path: '\u200B', reason: 'no Knowledge Base path is left of its name' }]);
      assert.deepEqual(
        report.failed.map((item) => item.path),
        ['line 148', 'line 149', 'line 150', 'line 151', 'line 152', 'memory/blob/Huge.md'],
      );
      const read = (await tool('read_file', { kb_id: 'graph', path: 'memory/person/Person 0.md' })) as { content: string };
      assert.match(read.content, /- Speaks Spanish\n- Joined in 2010\n- Plays chess\n/);
      assert.match(read.content, /- lives_in \[\[\.\.\/city\/City 0\|City 0\]\]\n- works_at \[\[\.\.\/organization\/Org 0\|Org 0\]\]\n/);
      const listed = (await tool('list_files', { kb_id: 'graph', path_prefix: 'memory/band/' })) as { files: { path: string; tags?: string[] }[] };
      assert.deepEqual(
        listed.files.map((f) => [f.path, f.tags]),
        [['memory/band/AC-DC.md', ['band']]],
      );
      // Eve's path loses the NUL and the bidi override; her file's text loses the NUL only.
      const eve = (await tool('read_file', { kb_id: 'graph', path: 'memory/person/Eve.md' })) as { content: string };
      assert.match(eve.content, /^---\ntitle: "Eve\u202E"\n/);
      // The graph is projected after the write: related is asked until it has caught up.
      let related: { incoming: { path: string }[]; outgoing: { path: string }[]; pending: boolean } | undefined;
      for (let attempt = 0; attempt < 300; attempt += 1) {
        related = (await tool('related', { kb_id: 'graph', path: 'memory/organization/Org 3.md' })) as typeof related;
        if (related?.pending === false && related.incoming.length === 5) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      assert.deepEqual(related?.incoming.map((entry) => entry.path).sort(), [
        'memory/person/Person 11.md',
        'memory/person/Person 19.md',
        'memory/person/Person 27.md',
        'memory/person/Person 3.md',
        'memory/person/Person 35.md',
      ]);
      assert.deepEqual(
        related?.outgoing.map((entry) => entry.path),
        ['memory/city/City 3.md'],
      );
    });

    it('changes only the entities that changed when run again', async () => {
      const again = await imported();
      assert.deepEqual([again.report.created, again.report.updated, again.report.unchanged], [0, 0, 54]);
      await writeFile(file, `${await readFile(file, 'utf8')}${entity('Org 5', 'organization', ['Moved offices'])}\n`);
      const changed = await imported();
      assert.deepEqual([changed.report.created, changed.report.updated, changed.report.unchanged], [0, 1, 53]);
    });

    it('refuses a file that is not there, a folder that is no KB folder and bad usage, writing nothing', async () => {
      const missing = await run('import', 'memory', path.join(store.workDir, 'none.jsonl'), '--tenant', 'acme', '--kb', 'graph', '--as', 'alice@acme.test');
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /is not a file/);
      const folder = await run('import', 'memory', file, '--tenant', 'acme', '--kb', 'graph', '--as', 'alice@acme.test', '--folder', '../up');
      assert.equal(folder.code, 2);
      assert.match(folder.stderr, /--folder must be a KB folder/);
      const noAs = await run('import', 'memory', file, '--tenant', 'acme', '--kb', 'graph');
      assert.equal(noAs.code, 2);
      assert.match(noAs.stderr, /--as/);
    });
  });
}
