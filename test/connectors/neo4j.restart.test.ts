import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import neo4j from 'neo4j-driver';
import type { Driver } from 'neo4j-driver';
import type { PrivateNeo4j } from '../support/services.ts';
import { neo4jSkip, startNeo4j } from '../support/services.ts';

function connect(server: PrivateNeo4j): Driver {
  // Auth is disabled in the launcher: any credentials do.
  return neo4j.driver(server.url, neo4j.auth.basic('neo4j', 'x'), {
    connectionTimeout: 5000,
    connectionAcquisitionTimeout: 10_000,
    maxTransactionRetryTime: 5000,
  });
}

async function ids(driver: Driver, marker: string): Promise<string[]> {
  const session = driver.session();
  try {
    const result = await session.executeRead((tx) => tx.run('MATCH (n:KgwRestart {marker: $marker}) RETURN n.id AS id ORDER BY id', { marker }));
    return result.records.map((record) => record.get('id') as string);
  } finally {
    await session.close();
  }
}

describe('a private Neo4j killed and restarted on the same data folder', { skip: neo4jSkip(), timeout: 300_000 }, () => {
  let server: PrivateNeo4j;

  before(async () => {
    server = await startNeo4j();
  });
  after(async () => {
    await server?.close();
  });

  it('keeps a node committed before SIGKILL', async (t) => {
    const marker = randomUUID();
    const before = connect(server);
    try {
      await before.verifyConnectivity();
      const session = before.session();
      try {
        await session.executeWrite((tx) => tx.run('CREATE (:KgwRestart {marker: $marker, id: $id})', { marker, id: 'committed' }));
      } finally {
        await session.close();
      }
      assert.deepEqual(await ids(before, marker), ['committed']);
    } finally {
      await before.close();
    }

    await server.stop(); // SIGKILL: no shutdown hook, no checkpoint
    assert.equal(server.pid, undefined);
    const down = connect(server);
    try {
      await assert.rejects(down.verifyConnectivity());
    } finally {
      await down.close();
    }

    const started = performance.now();
    await server.restart();
    t.diagnostic(`Bolt was back ${Math.round(performance.now() - started)} ms after the restart began`);
    const again = connect(server);
    try {
      await again.verifyConnectivity();
      assert.deepEqual(await ids(again, marker), ['committed']);
    } finally {
      await again.close();
    }
  });
});
