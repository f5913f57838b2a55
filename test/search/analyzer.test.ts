import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TERM_MAX_CHARS, analyzer, analyzerLanguage } from '../../src/search-text/analyzer.ts';
import { editDistance } from '../../src/search-text/query.ts';

describe('the search analyser', () => {
  it('stems English words and drops its stop words', () => {
    assert.deepEqual(analyzer('english').terms('What are the boundary layers of flows?'), ['boundari', 'layer', 'flow']);
  });

  it('stems German words with the German stemmer and stop list', () => {
    assert.deepEqual(analyzer('german').terms('Die Häuser und die Übersetzungen'), ['haus', 'ubersetz']);
  });

  it('folds case, compatibility forms and accents for English', () => {
    assert.deepEqual(analyzer('english').terms('CAFÉ ﬁne Ｆｌｏｗ'), ['cafe', 'fine', 'flow']);
  });

  it('treats control, bidi and zero-width characters and lone surrogates as separators', () => {
    assert.deepEqual(analyzer('english').terms('wing\u0000tip\u202eflap\u200bslat\ud800rib'), ['wing', 'tip', 'flap', 'slat', 'rib']);
  });

  it('leaves out words longer than a term may be', () => {
    assert.deepEqual(analyzer('english').terms(`${'x'.repeat(TERM_MAX_CHARS + 1)} wing`), ['wing']);
  });

  it('counts stop words in positions and gives offsets into the text as written', () => {
    const [first, second] = analyzer('english').tokens('state of the art');
    assert.equal(first?.position, 0);
    assert.equal(second?.position, 3);
    assert.equal('state of the art'.slice(second?.start, second?.end), 'art');
  });

  it('maps a tenant language tag to its analyser, and an unknown one to simple', () => {
    assert.deepEqual(
      [analyzerLanguage('en'), analyzerLanguage('de-AT'), analyzerLanguage('pt-BR'), analyzerLanguage('x-klingon')],
      ['english', 'german', 'portuguese', 'simple'],
    );
  });

  it('only normalises with the simple analyser', () => {
    assert.deepEqual(analyzer('simple').terms('The Flows'), ['the', 'flows']);
  });
});

describe('the typo distance', () => {
  it('counts a character outside the BMP once, as the candidates are chosen by their length in characters', () => {
    // 𝔞 (U+1D51E) is two UTF-16 units: counted in units, the swap below would cost more than one edit.
    assert.equal(editDistance('wing𝔞', 'wing', 1), 1);
    assert.equal(editDistance('𝔞wing', 'w𝔞ing', 2), 1);
  });

  it('counts insertions, deletions, substitutions and adjacent swaps, and stops past the budget', () => {
    assert.deepEqual(
      [editDistance('rudder', 'rudder', 2), editDistance('rudder', 'ruddr', 2), editDistance('rudder', 'rduder', 2), editDistance('rudder', 'flap', 2)],
      [0, 1, 1, 3],
    );
  });
});
