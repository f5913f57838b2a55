import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';

/*
 * The import rules of .dependency-cruiser.cjs (docs/architecture.md), run by `npm test` over
 * the real tree. Here each rule is shown to fail on a small tree that breaks it, with the
 * rule's name in the message, so a rule that matches nothing (a mistyped folder in a pattern)
 * cannot pass unnoticed.
 */

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const CONFIG = path.join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = path.join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
const run = promisify(execFile);

interface Outcome {
  readonly code: number;
  readonly output: string;
}

/** Runs the project's rules over a tree of the given files (path → content). */
async function cruise(files: Readonly<Record<string, string>>): Promise<Outcome> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'kgw-imports-'));
  try {
    await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { allowImportingTsExtensions: true, noEmit: true } }));
    for (const [name, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), content);
    }
    const roots = [...new Set(Object.keys(files).map((name) => name.split('/')[0] ?? name))];
    try {
      const { stdout, stderr } = await run(process.execPath, [DEPCRUISE, ...roots, '--config', CONFIG], { cwd: dir });
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code?: number; stdout?: string; stderr?: string };
      return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const EXPORT = 'export const x = 1;\n';
const importing = (spec: string): string => `import { x } from '${spec}';\nexport const y = x;\n`;

describe('import rules', () => {
  it('let a product import the kernel, the transport and its own files, and the composition root its index.ts', async () => {
    const outcome = await cruise({
      'src/kernel/errors.ts': EXPORT,
      'src/mcp/tool.ts': importing('../kernel/errors.ts'),
      'src/atmina/kb/files.ts': importing('../../mcp/tool.ts'),
      'src/atmina/dialect/files.ts': importing('../kb/files.ts'),
      'src/atmina/index.ts': importing('./dialect/files.ts'),
      'src/products.ts': importing('./atmina/index.ts'),
    });
    assert.equal(outcome.code, 0, outcome.output);
  });

  const breaches: readonly (readonly [string, Readonly<Record<string, string>>])[] = [
    ['product-imports-another-product', { 'src/atmina/b.ts': EXPORT, 'src/alignbase/a.ts': importing('../atmina/b.ts') }],
    ['product-imports-composition', { 'src/products.ts': EXPORT, 'src/brain/a.ts': importing('../products.ts') }],
    ['composition-imports-product-internals', { 'src/atmina/kb/kbs.ts': EXPORT, 'src/admin/ops.ts': importing('../atmina/kb/kbs.ts') }],
    ['composition-imports-product-internals', { 'src/brain/review.ts': EXPORT, 'src/open-services.ts': importing('./brain/review.ts') }],
    ['kernel-imports-only-kernel', { 'src/brain/b.ts': EXPORT, 'src/kernel/errors.ts': importing('../brain/b.ts') }],
    ['kernel-imports-only-kernel', { 'src/mcp/tool.ts': EXPORT, 'src/store/db.ts': importing('../mcp/tool.ts') }],
    [
      'search-text-imports-only-kernel',
      { 'connectors/search/contract.ts': EXPORT, 'src/search-text/ranking.ts': importing('../../connectors/search/contract.ts') },
    ],
    ['connector-imports-product', { 'src/atmina/links.ts': EXPORT, 'connectors/graph/neo4j.ts': importing('../../src/atmina/links.ts') }],
    ['connector-imports-product', { 'src/search/search.ts': EXPORT, 'connectors/search/builtin.ts': importing('../../src/search/search.ts') }],
    ['search-service-imports-product', { 'src/alignbase/source.ts': EXPORT, 'src/search/search.ts': importing('../alignbase/source.ts') }],
    ['transport-imports-product', { 'src/atmina/kb/standing.ts': EXPORT, 'src/mcp/tool.ts': importing('../atmina/kb/standing.ts') }],
    ['transport-imports-product', { 'src/app.ts': EXPORT, 'src/http/routes.ts': importing('../app.ts') }],
    ['no-circular', { 'src/kernel/a.ts': importing('./b.ts'), 'src/kernel/b.ts': importing('./a.ts') }],
  ];
  for (const [rule, files] of breaches) {
    it(`fail ${Object.keys(files).at(-1) ?? ''} with ${rule}`, async () => {
      const outcome = await cruise(files);
      assert.notEqual(outcome.code, 0, outcome.output);
      assert.match(outcome.output, new RegExp(`error ${rule}:`));
    });
  }
});
