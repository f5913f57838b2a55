import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Agent } from './support.ts';
import { MCP_PATH, OrgGateway, b64, backendLabel, s3GatewayEnv, textOf } from './support.ts';
import { storeBackends } from '../support/stores.ts';

/** The Artifact tools through the SDK's client over HTTP. */

const ORG = `tenant: art
name: Artifact Co
people:
  - email: ann@art.test
    name: Ann
agents:
  - name: maker
    owner: ann@art.test
  - name: viewer
    owner: ann@art.test
  - name: outsider
    owner: ann@art.test
grants:
  - { to: maker, on: all_artifacts, role: editor }
  - { to: viewer, on: all_artifacts, role: viewer }
`;

const OTHER = `tenant: art-other
name: Other
people:
  - email: oz@other.test
    name: Oz
agents:
  - name: spy
    owner: oz@other.test
grants:
  - { to: spy, on: all_artifacts, role: owner }
`;

async function download(client: Agent, id: string, version: number, path: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let offset = 0;
  let versionId: unknown;
  for (;;) {
    const chunk = await client.ok('read_context_attachment', { context_type: 'artifact', context_id: id, version, path, offset });
    versionId ??= chunk.version_id;
    assert.equal(chunk.version_id, versionId);
    parts.push(Buffer.from(String(chunk.data_base64), 'base64'));
    if (chunk.eof === true) break;
    offset = Number(chunk.next_offset);
  }
  return Buffer.concat(parts);
}

for (const backend of storeBackends()) {
  describe(`Alignbase Artifacts on ${backendLabel(backend)}`, () => {
    let gw: OrgGateway;
    let maker: Agent;
    let viewer: Agent;
    let outsider: Agent;
    let spy: Agent;
    let readOnlyMaker: Agent;
    let artifactId: string;
    const binary = randomBytes(600 * 1024);

    const connect = (tenant: string, principal: string, scopes = 'context.read context.write') => gw.connect(principal, scopes, { tenant });

    before(async () => {
      gw = await OrgGateway.start(backend, [ORG, OTHER], { tenant: 'art', endpoint: MCP_PATH, env: s3GatewayEnv(backend) });
      maker = await connect('art', 'maker');
      viewer = await connect('art', 'viewer');
      outsider = await connect('art', 'outsider');
      spy = await connect('art-other', 'spy');
      readOnlyMaker = await connect('art', 'maker', 'context.read');
    });
    after(() => gw.close());

    it('creates a package version with files, source task, digest and provenance', async () => {
      const created = await maker.ok('write_artifact', {
        expected_version: 0,
        name: 'Release notes',
        markdown: '# Notes\n\nSee the [tracker](https://example.test/t).',
        attachments: [
          { path: 'data/report.bin', data_base64: b64(binary) },
          { path: 'summary.md', data_base64: b64('# Summary') },
        ],
        source_task: 'Prepare the 1.2 release',
      });
      assert.equal(created.version, 1);
      assert.equal(created.created, true);
      assert.match(String(created.package_digest), /^sha256:[0-9a-f]{64}$/);
      artifactId = String(created.artifact_id);
      const read = await viewer.ok('read_artifact', { artifact_id: artifactId });
      assert.equal(read.name, 'Release notes');
      assert.equal(read.markdown, '# Notes\n\nSee the [tracker](https://example.test/t).');
      assert.deepEqual(read.attachments, [
        { path: 'data/report.bin', media_type: 'application/octet-stream', size: binary.length, digest_encoding: 'binary' },
        { path: 'summary.md', media_type: 'text/markdown', size: 9, digest_encoding: 'text' },
      ]);
      assert.equal(read.package_digest, created.package_digest);
      assert.equal(read.source_task, 'Prepare the 1.2 release');
      assert.deepEqual(read.provenance, { agent_name: 'maker', author_name: 'Ann', author_email: 'ann@art.test', saved_at: read.version_created_at });
      assert.equal(read.can_edit, false);
      assert.ok((await download(viewer, artifactId, 1, 'data/report.bin')).equals(binary));
    });

    it('keeps omitted files and source task, clears with [] and "", and saves nothing for an equal package', async () => {
      const v2 = await maker.ok('write_artifact', { artifact_id: artifactId, expected_version: 1, markdown: '# Notes v2' });
      assert.equal(v2.version, 2);
      let read = await maker.ok('read_artifact', { artifact_id: artifactId });
      assert.equal((read.attachments as unknown[]).length, 2);
      assert.equal(read.source_task, 'Prepare the 1.2 release');
      const same = await maker.ok('write_artifact', { artifact_id: artifactId, expected_version: 2, markdown: '# Notes v2' });
      assert.partialDeepStrictEqual(same, { updated: false, version: 2, version_id: v2.version_id });
      const v3 = await maker.ok('write_artifact', { artifact_id: artifactId, expected_version: 2, markdown: '# Notes v2', attachments: [], source_task: '' });
      assert.equal(v3.version, 3);
      read = await maker.ok('read_artifact', { artifact_id: artifactId });
      assert.deepEqual({ attachments: read.attachments, source_task: read.source_task }, { attachments: [], source_task: null });
      // Earlier versions stay as they were: immutable packages.
      const first = await maker.ok('read_artifact', { artifact_id: artifactId, version: 1 });
      assert.equal((first.attachments as unknown[]).length, 2);
      assert.ok((await download(maker, artifactId, 1, 'summary.md')).equals(Buffer.from('# Summary')));
      const numeric = await maker.ok('read_artifact', { artifact_id: artifactId, version: '2' });
      assert.equal(numeric.version, 2);
    });

    it('refuses in clear words and changes nothing', async () => {
      assert.equal(await maker.fail('read_artifact', { artifact_id: 'x' }), 'invalid artifact_id');
      assert.equal(await maker.fail('read_artifact', { artifact_id: artifactId, version: 'published' }), 'version must be latest or a positive version number');
      assert.equal(await maker.fail('read_artifact', { artifact_id: artifactId, version: 9 }), 'Artifact version not found');
      assert.equal(
        await maker.fail('write_artifact', { expected_version: -1, name: 'x', markdown: 'x' }),
        'expected_version must be 0 for create or positive for write',
      );
      assert.equal(
        await maker.fail('write_artifact', { artifact_id: artifactId, expected_version: 0, name: 'x', markdown: 'x' }),
        'artifact_id must be omitted when expected_version is 0',
      );
      assert.equal(
        await maker.fail('write_artifact', { expected_version: 2, markdown: 'x' }),
        'artifact_id is required when expected_version is greater than 0',
      );
      assert.equal(await maker.fail('write_artifact', { expected_version: 0, name: ' ', markdown: 'x' }), 'name required');
      assert.equal(await maker.fail('write_artifact', { expected_version: 0, name: 'n'.repeat(201), markdown: 'x' }), 'name too long');
      assert.equal(await maker.fail('write_artifact', { expected_version: 0, name: 'Empty', markdown: '' }), 'markdown is required');
      assert.equal(
        await maker.fail('write_artifact', { artifact_id: artifactId, expected_version: 1, markdown: 'stale' }),
        'version conflict: read the Artifact again before writing',
      );
      assert.match(
        await maker.fail('write_artifact', { expected_version: 0, name: 'Bad', markdown: 'x', attachments: [{ path: '../x', data_base64: b64('x') }] }),
        /^invalid artifact package: /,
      );
      assert.match(
        await maker.fail('write_artifact', {
          expected_version: 0,
          name: 'Big',
          markdown: 'x',
          attachments: [{ path: 'big.bin', data_base64: b64(Buffer.alloc(2 * 1024 * 1024 + 1)) }],
        }),
        /^invalid artifact package: /,
      );
      assert.equal(
        await maker.fail('read_context_attachment', { context_type: 'artifact', context_id: artifactId, version: 'latest', path: 'summary.md' }),
        'version must be an exact positive version number',
      );
      assert.equal(
        await maker.fail('read_context_attachment', { context_type: 'artifact', context_id: artifactId, version: 1, path: 'nope.md' }),
        'attachment not found',
      );
      const read = await maker.ok('read_artifact', { artifact_id: artifactId });
      assert.equal(read.version, 3);
      assert.deepEqual(
        ((await maker.ok('list_artifacts', {})).artifacts as { name: string }[]).map((a) => a.name),
        ['Release notes'],
      );
    });

    it('needs Create on the type to create and Editor to replace; a read-only connection cannot write', async () => {
      assert.equal(await viewer.fail('write_artifact', { expected_version: 0, name: 'Mine', markdown: 'x' }), 'forbidden');
      assert.equal(await viewer.fail('write_artifact', { artifact_id: artifactId, expected_version: 3, markdown: 'x' }), 'forbidden');
      assert.equal(await outsider.fail('read_artifact', { artifact_id: artifactId }), 'Artifact not found');
      assert.equal(await outsider.fail('write_artifact', { artifact_id: artifactId, expected_version: 3, markdown: 'x' }), 'Artifact not found');
      assert.deepEqual((await outsider.ok('list_artifacts', {})).artifacts, []);
      const tools = (await readOnlyMaker.client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes('read_artifact') && !tools.includes('write_artifact'));
      const listed = (await readOnlyMaker.ok('list_artifacts', {})).artifacts as { can_edit: boolean }[];
      assert.equal(listed[0]?.can_edit, false);
      assert.equal(((await maker.ok('list_artifacts', {})).artifacts as { can_edit: boolean }[])[0]?.can_edit, true);
    });

    it('keeps tenants apart', async () => {
      assert.equal(await spy.fail('read_artifact', { artifact_id: artifactId }), 'Artifact not found');
      assert.equal(
        await spy.fail('read_context_attachment', { context_type: 'artifact', context_id: artifactId, version: 1, path: 'summary.md' }),
        'Artifact not found',
      );
      assert.deepEqual((await spy.ok('list_artifacts', {})).artifacts, []);
    });

    it('lets one of 12 concurrent writers of a version win, the others get the conflict text', async () => {
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => maker.call('write_artifact', { artifact_id: artifactId, expected_version: 3, markdown: `writer ${i}` })),
      );
      assert.equal(results.filter((r) => r.isError !== true).length, 1);
      for (const r of results.filter((r) => r.isError === true)) assert.equal(textOf(r), 'version conflict: read the Artifact again before writing');
      const read = await maker.ok('read_artifact', { artifact_id: artifactId });
      assert.equal(read.version, 4);
      assert.equal(read.markdown, `writer ${results.findIndex((r) => r.isError !== true)}`);
    });
  });
}
