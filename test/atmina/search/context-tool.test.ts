import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { storeBackends } from '../../support/stores.ts';
import type { KbWire, ReadWire } from '../support.ts';
import { KbSuite, assertAtminaError, backendLabel } from '../support.ts';
import { CONTEXT_SCAN_BYTES } from '../../../src/atmina/context-package.ts';
import type { SearchEngine } from '../../search/engines.ts';
import { searchEngines } from '../../search/engines.ts';

/*
 * Atmina's `get_context` through the MCP SDK's client on /atmina/mcp, the gateway's own outbox
 * worker feeding the engine: the passages of a KB that answer a question, within the budget,
 * within what the caller may read.
 */

interface PassageWire {
  path: string;
  file_id: string;
  version: number;
  sha256: string;
  start_line: number;
  end_line: number;
  heading: string;
  text: string;
  score: number;
  read_ref: { tool: string; arguments: { kb_id: string; file_id: string } };
}
interface ContextWire {
  kb_id: string;
  question: string;
  budget_chars: number;
  used_chars: number;
  passages: PassageWire[];
  files_considered: number;
  truncated: boolean;
}

// A paragraph of its own (over the passage minimum) about `topic`.
const paragraph = (topic: string) => `${topic} ${'and some further words of ordinary prose about the matter '.repeat(5)}`.trim();

const RETENTION = [
  '# Customer data retention',
  '',
  'We keep customer data for 30 days after the contract ends.',
  '',
  '## Backups',
  '',
  'Backups of customer data are kept for 90 days, then deleted.',
  '',
  '## Unrelated',
  '',
  paragraph('Parking'),
  '',
].join('\n');

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

for (const backend of storeBackends()) {
  for (const choice of searchEngines())
    describe(`Atmina get_context with the ${choice.name} engine on ${backendLabel(backend)}`, () => {
      let engine: SearchEngine;
      let suite: KbSuite;
      let kb: KbWire;
      let hidden: KbWire;
      before(async () => {
        engine = choice.open();
        suite = await KbSuite.open(backend, engine.env, { projections: true });
        kb = await suite.kb();
        await suite.file(kb.kb_id, 'decisions/retention.md', RETENTION);
        await suite.file(
          kb.kb_id,
          'notes/meeting.md',
          `# Weekly meeting\n\n${paragraph('Retention of logs came up')}\n\n${paragraph('The customer survey')}\n`,
        );
        await suite.file(kb.kb_id, 'guides/wings.md', `# Wing design\n\n${paragraph('The boundary layer over a swept wing thickens toward the tip.')}\n`);
        await suite.file(
          kb.kb_id,
          'guides/long.md',
          Array.from({ length: 40 }, (_, i) => `## Airfoil ${i}\n\n${paragraph(`Airfoil section ${i} lift`)}`).join('\n\n'),
        );
        hidden = await suite.kb({ team: 'support' }, 'support-bot');
        await (
          await suite.agent('support-bot')
        ).ok('write_file', {
          kb_id: hidden.kb_id,
          path: 'secret/retention.md',
          mode: 'create',
          content: '# Customer data retention\n\ncustomer data retention customer data retention\n',
        });
        await suite.settled();
      });
      after(async () => {
        await suite?.close();
        await engine?.dispose();
      });

      it('gives first the passage that answers the question', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'How long do we keep customer data?' });
        assert.equal(answer.passages[0]?.path, 'decisions/retention.md');
      });

      it('gives each passage the version and SHA-256 read_file answers for it', async () => {
        const viewer = await suite.agent('viewer-bot');
        const [first] = (await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'swept wing boundary layer' })).passages;
        assert.ok(first);
        const read = await viewer.ok<ReadWire>('read_file', first.read_ref.arguments);
        assert.deepEqual([first.version, first.sha256], [read.version, read.sha256]);
      });

      it('gives a passage as the lines of the file it names', async () => {
        const viewer = await suite.agent('viewer-bot');
        const [first] = (await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'backups kept 90 days' })).passages;
        assert.ok(first);
        const lines = RETENTION.split('\n').slice(first.start_line - 1, first.end_line);
        assert.equal(first.text, lines.join('\n'));
      });

      it('names the headings above a passage', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'backups', max_passages: 1 });
        assert.equal(answer.passages[0]?.heading, 'Customer data retention > Backups');
      });

      it('merges the touching passages of a file into one, nothing given twice', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'customer data kept days backups' });
        const retention = answer.passages.filter((p) => p.path === 'decisions/retention.md');
        assert.deepEqual(
          retention.map((p) => [p.start_line, p.end_line]),
          [[1, 7]],
        );
      });

      it('stays within the budget and says what it left out', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'airfoil section lift', budget_chars: 1000 });
        const text = answer.passages.reduce((sum, p) => sum + [...p.text].length, 0);
        assert.deepEqual([answer.used_chars <= 1000, text <= answer.used_chars, answer.truncated], [true, true, true]);
      });

      it('reports the default budget when none is given', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'airfoil' });
        assert.equal(answer.budget_chars, 8000);
      });

      it('answers the same question over the same versions with the same bytes', async () => {
        const viewer = await suite.agent('viewer-bot');
        const call = async () => {
          const result = await viewer.call('get_context', { kb_id: kb.kb_id, question: 'airfoil lift customer data', budget_chars: 3000 });
          const [first] = result.content as { type: string; text: string }[];
          return first?.text ?? '';
        };
        const once = await call();
        assert.equal(sha256(await call()), sha256(once));
      });

      it('keeps to the path prefixes given', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'customer retention', path_prefixes: ['notes/'] });
        assert.deepEqual([...new Set(answer.passages.map((p) => p.path))], ['notes/meeting.md']);
      });

      it('refuses a KB the caller may not read as not found', async () => {
        const viewer = await suite.agent('viewer-bot');
        assertAtminaError(await viewer.fail('get_context', { kb_id: hidden.kb_id, question: 'customer data retention' }), 'not_found');
      });

      it('never gives passages of another KB than the one named', async () => {
        const support = await suite.agent('support-bot');
        const answer = await support.ok<ContextWire>('get_context', { kb_id: hidden.kb_id, question: 'customer data retention' });
        assert.deepEqual([...new Set(answer.passages.map((p) => p.path))], ['secret/retention.md']);
      });

      it('refuses a KB of another tenant as not found', async () => {
        const globex = await suite.agent('globex-bot', 'context.read context.write', 'globex');
        assertAtminaError(await globex.fail('get_context', { kb_id: kb.kb_id, question: 'retention' }), 'not_found');
      });

      it('reads a file at its head: a moved file under its new path, a deleted one not at all', async () => {
        const editor = await suite.agent('editor-bot');
        const written = await editor.ok<{ file_id: string }>('write_file', {
          kb_id: kb.kb_id,
          path: 'tmp/zeppelin.md',
          mode: 'create',
          content: 'zeppelin hangar',
        });
        await suite.settled();
        await editor.ok('move_file', { kb_id: kb.kb_id, file_id: written.file_id, to_path: 'archive/zeppelin.md' });
        const moved = await editor.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'zeppelin' });
        await (await suite.agent('admin-bot')).ok('delete_file', { kb_id: kb.kb_id, file_id: written.file_id, confirm: 'archive/zeppelin.md' });
        const deleted = await editor.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'zeppelin' });
        assert.deepEqual([moved.passages.map((p) => p.path), deleted.passages.length], [['archive/zeppelin.md'], 0]);
      });

      it('reads the head a change since indexing left, with its version and SHA-256', async () => {
        const editor = await suite.agent('editor-bot');
        const written = await editor.ok<{ file_id: string; sha256: string }>('write_file', {
          kb_id: kb.kb_id,
          path: 'tmp/dirigible.md',
          mode: 'create',
          content: 'dirigible mooring mast',
        });
        await suite.settled();
        const changed = await editor.ok<{ version: number; sha256: string }>('write_file', {
          kb_id: kb.kb_id,
          path: 'tmp/dirigible.md',
          mode: 'overwrite',
          content: 'dirigible mooring mast, now taller',
          if_match: written.sha256,
        });
        const [first] = (await editor.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'dirigible' })).passages;
        assert.deepEqual([first?.version, first?.sha256, first?.text], [changed.version, changed.sha256, 'dirigible mooring mast, now taller']);
      });

      for (const [name, question, part] of [
        ['an empty question', '   ', 'question must not be empty'],
        ['a NUL', 'wing\u0000', 'must not contain NUL'],
        ['a lone surrogate', 'wing\ud800', 'well-formed Unicode'],
      ] as const) {
        it(`refuses ${name} with the reason`, async () => {
          const viewer = await suite.agent('viewer-bot');
          assertAtminaError(await viewer.fail('get_context', { kb_id: kb.kb_id, question }), 'validation', part);
        });
      }

      it('reads control and bidi characters in a question as separators', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: '\u202eswept\u0007wing\u200b' });
        assert.equal(answer.passages[0]?.path, 'guides/wings.md');
      });

      for (const [name, args, part] of [
        ['a question longer than its bound', { question: 'w'.repeat(4001) }, 'question'],
        ['a budget above its bound', { question: 'wing', budget_chars: 64_001 }, 'budget_chars'],
        ['a budget below its bound', { question: 'wing', budget_chars: 499 }, 'budget_chars'],
        ['a budget that is not a whole number', { question: 'wing', budget_chars: 1000.5 }, 'budget_chars'],
        ['more passages than the bound', { question: 'wing', max_passages: 51 }, 'max_passages'],
        ['more path prefixes than the bound', { question: 'wing', path_prefixes: Array.from({ length: 21 }, (_, i) => `p${i}/`) }, 'path_prefixes'],
        ['an input it does not know', { question: 'wing', query: 'wing' }, 'query'],
      ] as const) {
        it(`refuses ${name}, naming the field`, async () => {
          const viewer = await suite.agent('viewer-bot');
          assertAtminaError(await viewer.fail('get_context', { kb_id: kb.kb_id, ...args }), 'validation', part);
        });
      }

      it('finds passages for a misspelt question through the corrections of search', async () => {
        const viewer = await suite.agent('viewer-bot');
        const answer = await viewer.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'retnetion' });
        assert.ok(
          answer.passages.some((p) => p.path === 'decisions/retention.md'),
          JSON.stringify(answer.passages.map((p) => p.path)),
        );
      });

      it('gives a heading without the control and bidi characters its file holds', async () => {
        const editor = await suite.agent('editor-bot');
        await editor.ok('write_file', {
          kb_id: kb.kb_id,
          path: 'tmp/hostile.md',
          mode: 'create',
          content: '# Gondola\u202e\u0007 rules\n\ngondola cables are checked daily\n',
        });
        await suite.settled();
        const [first] = (await editor.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'gondola cables' })).passages;
        assert.equal(first?.heading, 'Gondola rules');
      });

      it('reads a file no further than its scan bound', async () => {
        const editor = await suite.agent('editor-bot');
        const filler = `${'plain filler line\n\n'.repeat(Math.ceil(CONTEXT_SCAN_BYTES / 19))}`;
        await editor.ok('write_file', {
          kb_id: kb.kb_id,
          path: 'tmp/deep.md',
          mode: 'create',
          content: `# Deep\n\nquetzal near the top\n\n${filler}quetzal past the bound\n`,
        });
        await suite.settled();
        const answer = await editor.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'quetzal' });
        assert.deepEqual(
          answer.passages.map((p) => [p.start_line, p.text.includes('past the bound')]),
          [[1, false]],
        );
      });

      it('audits a package as kb.context with the question and the KB', async () => {
        const editor = await suite.agent('editor-bot');
        await editor.ok<ContextWire>('get_context', { kb_id: kb.kb_id, question: 'audited airfoil question' });
        const log = await (
          await suite.agent('admin-bot')
        ).ok<{ events: { tool: string | null; action: string; query?: string }[] }>('audit_log', { kb_id: kb.kb_id, tool: 'get_context' });
        assert.deepEqual(
          log.events.filter((e) => e.query === 'audited airfoil question').map((e) => e.action),
          ['kb.context'],
        );
      });

      it('refuses a call without kb_id', async () => {
        const viewer = await suite.agent('viewer-bot');
        assertAtminaError(await viewer.fail('get_context', { question: 'wing' }), 'validation', 'kb_id');
      });
    });
}
