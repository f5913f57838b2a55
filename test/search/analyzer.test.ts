import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TERM_MAX_CHARS, analyzer, analyzerLanguage } from '../../src/core/search/analyzer.ts';

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
