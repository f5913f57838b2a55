import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KgwError } from '../../src/kernel/errors.ts';
import { ScopeCatalogue } from '../../src/kernel/access/scopes.ts';
import { scopeCatalogue } from '../../src/products.ts';

/*
 * The scope catalogue the products declare (src/kernel/access/scopes.ts): the kernel names no
 * scope; each product declares its own, and the composition root joins them.
 */

describe('the scope catalogue', () => {
  it('holds every product scope once, in product order, with Alignbase’s defaults for registration', () => {
    assert.deepEqual(scopeCatalogue.all, ['context.read', 'context.write', 'activity.write', 'brain:read', 'brain:propose', 'outreach:propose']);
    assert.deepEqual(scopeCatalogue.registrationDefaults, ['context.read', 'context.write']);
    // A scope two products share keeps the first product's words on the consent page.
    assert.equal(scopeCatalogue.describe('context.read'), 'read the knowledge, skills and memories the agent may read');
  });

  it('resolves aliases and implications and sorts into catalogue order', () => {
    assert.deepEqual(scopeCatalogue.normalize('outreach:propose documents.write'), ['context.read', 'context.write', 'outreach:propose']);
    assert.deepEqual(scopeCatalogue.normalize(['brain:read', 'brain:read', 'context.read']), ['context.read', 'brain:read']);
    assert.deepEqual(scopeCatalogue.normalize('context.write,activity.write'), ['context.read', 'context.write', 'activity.write']);
  });

  it('refuses unknown and empty requests in words that list the known scopes', () => {
    assert.throws(
      () => scopeCatalogue.normalize('context.read admin'),
      (error: unknown) =>
        error instanceof KgwError &&
        error.message === 'unknown scope "admin"; known scopes: context.read, context.write, activity.write, brain:read, brain:propose, outreach:propose',
    );
    assert.throws(() => scopeCatalogue.normalize(' , '), /at least one scope is required/);
    // Names that only look like a scope: case, invisible characters, a prototype key.
    for (const name of ['Context.Read', 'context.read\u0000', 'context.read\u200B', '__proto__', 'constructor']) {
      assert.throws(() => scopeCatalogue.normalize(name), /unknown scope/, JSON.stringify(name));
    }
  });

  it('joins a scope declared by two products and refuses declarations that disagree', () => {
    const joined = new ScopeCatalogue(
      [
        { name: 'context.read', description: 'first', aliases: ['documents.read'] },
        { name: 'context.write', description: 'write', implies: ['context.read'] },
        { name: 'context.read', description: 'second' },
        { name: 'context.write', description: 'write again', aliases: ['documents.write'] },
      ],
      ['context.read'],
    );
    assert.deepEqual(joined.all, ['context.read', 'context.write']);
    assert.equal(joined.describe('context.read'), 'first');
    // The second declaration's alias and the first one's implication both hold.
    assert.deepEqual(joined.normalize('documents.write'), ['context.read', 'context.write']);
    assert.throws(
      () =>
        new ScopeCatalogue(
          [
            { name: 'context.read', description: 'read', aliases: ['docs'] },
            { name: 'context.write', description: 'write', aliases: ['docs'] },
          ],
          [],
        ),
      /scope alias "docs" is declared for both context.read and context.write/,
    );
    assert.throws(
      () => new ScopeCatalogue([{ name: 'context.write', description: 'write', implies: ['context.read'] }], []),
      /scope context.read is named but declared by no product/,
    );
    assert.throws(() => new ScopeCatalogue([{ name: 'brain:read', description: 'read' }], ['context.read']), /declared by no product/);
  });
});
