import type { ProjectionSet, Rebuilder, ResourceRef } from '../../../connectors/projection.ts';
import type { Db } from '../../store/db.ts';
import { enqueue, lockResources } from './outbox.ts';

export interface RebuildReport {
  readonly projection: string;
  /** Changes (outbox rows) enqueued from the sources; the worker applies them. */
  readonly enqueued: number;
}

const CHUNK = 500;

/**
 * Rebuilds one projection from Postgres alone: clears the backend, then walks the rebuilder's
 * resources in chunks and, per chunk in one transaction, locks them against writers, reads
 * their current state and enqueues it. A write that commits later enqueues a later row for
 * its resource, so the projection ends up current; rows already waiting stay (applying them
 * again is harmless). The worker does the applying, in order, like any other write.
 */
export async function rebuildProjection(db: Db, set: ProjectionSet, name: string): Promise<RebuildReport> {
  const projection = set.projections.find((p) => p.name === name);
  if (projection === undefined) throw new Error(`no projection named ${name} is configured`);
  const rebuilders = set.rebuilders.filter((r) => r.projection === name);
  await projection.clear();
  let enqueued = 0;
  for (const rebuilder of rebuilders) {
    let chunk: ResourceRef[] = [];
    for await (const ref of rebuilder.keys(db)) {
      chunk.push(ref);
      if (chunk.length >= CHUNK) {
        enqueued += await enqueueChunk(db, rebuilder, chunk);
        chunk = [];
      }
    }
    if (chunk.length > 0) enqueued += await enqueueChunk(db, rebuilder, chunk);
  }
  await db.tx((tx) =>
    tx.query(
      `INSERT INTO projection_state (projection, last_rebuild_at) VALUES ($1, clock_timestamp())
       ON CONFLICT (projection) DO UPDATE SET last_rebuild_at = EXCLUDED.last_rebuild_at`,
      [name],
    ),
  );
  return { projection: name, enqueued };
}

function enqueueChunk(db: Db, rebuilder: Rebuilder, refs: readonly ResourceRef[]): Promise<number> {
  return db.tx(async (tx) => {
    await lockResources(tx, rebuilder.projection, refs);
    const entries = (await rebuilder.load(tx, refs)).filter((e) => e.projection === rebuilder.projection);
    await enqueue(tx, entries);
    return entries.length;
  });
}
