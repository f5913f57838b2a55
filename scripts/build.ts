/*
 * Builds the installable package (`npm run build`, run by `npm pack`): the TypeScript of src/ and
 * connectors/ compiled to JavaScript in dist/ (tsconfig.build.json; relative imports rewritten to
 * .js), then the files the code reads at run time beside its modules: the SQL migrations and the
 * sign-in pages' stylesheet, the console's stylesheet and script, and the console sections' own. A clone of the repository never needs it: it runs the sources.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIST = path.join(ROOT, 'dist');
/** Files the code loads by URL beside itself, by folder. Anything else not TypeScript stays out. */
const ASSETS: readonly { readonly folder: string; readonly suffix: string }[] = [
  { folder: 'src/store/migrations', suffix: '.sql' },
  { folder: 'src/http/pages', suffix: '.css' },
  { folder: 'src/console/static', suffix: '.css' },
  { folder: 'src/console/static', suffix: '.js' },
  { folder: 'src/brain/console/static', suffix: '.css' },
  { folder: 'src/brain/console/static', suffix: '.js' },
  { folder: 'src/atmina/console/static', suffix: '.css' },
  { folder: 'src/atmina/console/static', suffix: '.js' },
];

rmSync(DIST, { recursive: true, force: true });
execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(ROOT, 'tsconfig.build.json')], {
  stdio: 'inherit',
});
let copied = 0;
for (const { folder, suffix } of ASSETS) {
  mkdirSync(path.join(DIST, folder), { recursive: true });
  for (const name of readdirSync(path.join(ROOT, folder)).filter((file) => file.endsWith(suffix))) {
    cpSync(path.join(ROOT, folder, name), path.join(DIST, folder, name));
    copied++;
  }
}
process.stdout.write(`built dist/ and copied ${copied} files the code reads at run time\n`);
