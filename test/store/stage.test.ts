import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, stat, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { STAGES_OPEN_MAX, STAGE_MAX_BYTES, STAGE_PIECE_MAX_BYTES, STAGE_TTL_MS, appendToStage, beginStage, takeStage } from '../../src/admin/stage.ts';
import { isKgwError } from '../../src/kernel/errors.ts';

/**
 * The stages of an operator's import (src/admin/stage.ts): bytes too large for one request,
 * sent in pieces at the offset the stage ends, checked against the size and SHA-256 declared
 * at the start, taken once. Every refusal is a validation or not-found error that leaves the
 * stage as it was.
 */

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

async function refused(promise: Promise<unknown>, code: string, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => isKgwError(error) && error.code === code && pattern.test(error.message));
}

describe('staged bytes of an operator import', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-stage-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('assembles pieces at their offsets and hands the bytes over once', async () => {
    const bytes = Buffer.from('one two three');
    const id = await beginStage(dir, { size: bytes.length, sha256: sha(bytes) });
    assert.equal(await appendToStage(dir, id, 0, bytes.subarray(0, 4)), 4);
    await refused(appendToStage(dir, id, 0, bytes.subarray(0, 4)), 'validation', /offset must be 4/);
    assert.equal(await appendToStage(dir, id, 4, bytes.subarray(4)), bytes.length);
    assert.equal((await stat(path.join(dir, 'staging', id))).mode & 0o777, 0o600);
    assert.deepEqual(await takeStage(dir, id), bytes);
    await refused(takeStage(dir, id), 'not_found', /no stage/);
  });

  it('refuses more than declared, other bytes than declared, and a bad declaration', async () => {
    const bytes = Buffer.from('abc');
    const id = await beginStage(dir, { size: 3, sha256: sha(bytes) });
    await refused(appendToStage(dir, id, 0, Buffer.from('abcd')), 'validation', /declared with 3 bytes/);
    await appendToStage(dir, id, 0, Buffer.from('abd'));
    await refused(takeStage(dir, id), 'validation', /do not match the SHA-256 declared/);
    const short = await beginStage(dir, { size: 3, sha256: sha(bytes) });
    await refused(takeStage(dir, short), 'validation', /holds 0 of the 3 bytes/);
    await refused(beginStage(dir, { size: STAGE_MAX_BYTES + 1, sha256: sha(bytes) }), 'validation', /size must be/);
    await refused(beginStage(dir, { size: -1, sha256: sha(bytes) }), 'validation', /size must be/);
    await refused(beginStage(dir, { size: 1, sha256: 'ABC' }), 'validation', /sha256 must be/);
    await refused(appendToStage(dir, '../../etc/passwd', 0, bytes), 'validation', /stage_id must be/);
    await refused(appendToStage(dir, 'a'.repeat(22), 0, bytes), 'not_found', /no stage/);
    const big = await beginStage(dir, { size: STAGE_PIECE_MAX_BYTES + 1, sha256: sha(bytes) });
    await refused(appendToStage(dir, big, 0, Buffer.alloc(STAGE_PIECE_MAX_BYTES + 1)), 'validation', /a piece may be at most/);
    await takeStage(dir, big).catch(() => undefined);
  });

  it('bounds the stages open at once, and removes those older than an hour', async () => {
    await rm(path.join(dir, 'staging'), { recursive: true, force: true });
    const ids = [];
    for (let i = 0; i < STAGES_OPEN_MAX; i += 1) ids.push(await beginStage(dir, { size: 0, sha256: sha(Buffer.alloc(0)) }));
    await refused(beginStage(dir, { size: 0, sha256: sha(Buffer.alloc(0)) }), 'validation', /at most 16 stages/);
    const old = (Date.now() - STAGE_TTL_MS - 60_000) / 1000;
    await utimes(path.join(dir, 'staging', `${ids[0]}.json`), old, old);
    const next = await beginStage(dir, { size: 0, sha256: sha(Buffer.alloc(0)) });
    const left = await readdir(path.join(dir, 'staging'));
    assert.equal(left.includes(`${ids[0]}.json`), false);
    assert.equal(left.includes(ids[0]!), false);
    assert.deepEqual(await takeStage(dir, next), Buffer.alloc(0));
  });
});
