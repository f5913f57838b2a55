import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { serializeError } from '../../src/http/log-safety.ts';
import type { TestStore } from '../support/stores.ts';
import { storeBackends } from '../support/stores.ts';

// A failed statement's error, as each driver throws it, logged through the gateway's serializer:
// the parameters (a tenant's content) never reach the log line.

const SECRET = 'the tenant secret content ' + 'z'.repeat(5000);

for (const backend of storeBackends()) {
  describe(`error log lines on ${backend.name}`, () => {
    let store: TestStore;
    before(async () => {
      store = await backend.open({ migrated: true });
    });
    after(async () => store.dispose());

    const failure = async (run: () => Promise<unknown>): Promise<unknown> => {
      try {
        await run();
      } catch (error) {
        return error;
      }
      assert.fail('the statement did not fail');
    };

    it('keeps the code and drops the parameters of a failed write', async () => {
      const error = await failure(() => store.db.tx((tx) => tx.query('INSERT INTO tenants (id, slug, name) VALUES ($1, $2, $3)', [SECRET, 'x', SECRET])));
      const line = JSON.stringify(serializeError(error));
      assert.ok(!line.includes('tenant secret'), line);
      assert.equal(serializeError(error).code, '22P02');
      assert.match(serializeError(error).message, /^invalid input syntax for type uuid: "\[value\]"/);
    });

    it('keeps identifiers such as a relation and a constraint name', async () => {
      const error = await failure(() =>
        store.db.tx((tx) =>
          tx.query(`INSERT INTO tenants (id, slug, name) VALUES (gen_random_uuid(), $1, $2), (gen_random_uuid(), $1, $2)`, ['dup-slug', SECRET]),
        ),
      );
      const logged = serializeError(error);
      assert.ok(!JSON.stringify(logged).includes('tenant secret'));
      assert.equal(logged.message, 'new row for relation "tenants" violates check constraint "tenants_name_check"');
    });
  });
}

describe('serializeError', () => {
  it('keeps kind, code, a bounded message and the frames, and nothing else', () => {
    const error = Object.assign(new Error('m'.repeat(10_000)), { code: 'E_X', query: 'SELECT $1', params: [SECRET], detail: SECRET });
    const logged = serializeError(error);
    assert.deepEqual(Object.keys(logged).sort(), ['code', 'message', 'stack', 'type']);
    assert.ok(logged.message.length < 400);
    assert.ok(!JSON.stringify(logged).includes('tenant secret'));
  });

  it('follows a cause a few levels, and non-errors too', () => {
    const logged = serializeError(new Error('outer', { cause: new Error('inner', { cause: 'text' }) }));
    assert.equal(logged.cause?.message, 'inner');
    assert.deepEqual(logged.cause?.cause, { type: 'string', message: 'text', stack: '' });
  });
});
