import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { docContent, docIdOf, docPath, parseDocuments, parseJudgments, parseQueries } from '../../bench/cranfield.ts';

// Small texts in the collection's own layout, quirks included; no file of the collection is read.
const DOCS = `.I 1
.T
experimental investigation of the aerodynamics of a
wing in a slipstream .
.A
brenckman,m.
.B
j. ae. scs. 25, 1958, 324.
.W
experimental investigation of the aerodynamics of a
wing in a slipstream .
  an experimental study of a wing .
.I 240
.T
heat transfer in separated flow .
.A
chapman
.B
naca technote 3792
.W
the flow field analyzed .
.A
application to turbulent separations .
.B
results in tabular form .
`;

const QUERIES = '.I 001\r\n.W\r\nwhat similarity laws must be obeyed\r\nwhen constructing models .\r\n.I 004\r\n.W\r\nwhat problems of heat conduction .\r\n';

describe('Cranfield documents', () => {
  it('take the title and body with whitespace collapsed', () => {
    const [doc] = parseDocuments(DOCS);
    assert.equal(doc?.id, 1);
    assert.equal(doc?.title, 'experimental investigation of the aerodynamics of a wing in a slipstream .');
    assert.equal(doc?.body, 'experimental investigation of the aerodynamics of a wing in a slipstream . an experimental study of a wing .');
  });

  it('keep the text after stray marker lines inside the body in the body', () => {
    const doc = parseDocuments(DOCS)[1];
    assert.equal(doc?.body, 'the flow field analyzed . application to turbulent separations . results in tabular form .');
  });

  it('become a file with the title as heading', () => {
    assert.equal(docContent({ id: 7, title: 'a title', body: 'a body' }), '# a title\n\na body\n');
  });
});

describe('Cranfield queries', () => {
  it('are numbered in file order, not by label', () => {
    const queries = parseQueries(QUERIES);
    assert.deepEqual(
      queries.map((q) => [q.number, q.label]),
      [
        [1, '001'],
        [2, '004'],
      ],
    );
  });

  it('read their text across CRLF lines', () => {
    assert.equal(parseQueries(QUERIES)[0]?.text, 'what similarity laws must be obeyed when constructing models .');
  });
});

describe('Cranfield judgements', () => {
  it('are kept per query number and document id', () => {
    const judgments = parseJudgments('1 184 2 \n1 29 -1\n2 12 5\n');
    assert.equal(judgments.get(1)?.get('184'), 2);
    assert.equal(judgments.get(1)?.get('29'), -1);
    assert.equal(judgments.get(2)?.get('12'), 5);
  });
});

describe('Cranfield paths', () => {
  it('pad the document id to four digits', () => {
    assert.equal(docPath(12), 'cranfield/0012.md');
  });

  it('map back to the document id the judgements use', () => {
    assert.equal(docIdOf(docPath(12)), '12');
  });

  it('name no document outside the collection folder', () => {
    assert.equal(docIdOf('notes/0012.md'), undefined);
  });
});
