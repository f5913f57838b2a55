/**
 * `npm start`'s command as package.json writes it, read the way the shell runs it, so tests and
 * benches start what users start: the environment it sets (`NAME=value`, or `NAME=${NAME:-value}`,
 * a default the caller's environment overrides), then `node`, Node's flags, and the script with
 * its arguments. Anything else in the script is refused rather than guessed at.
 */
import { readFile } from 'node:fs/promises';

export interface StartCommand {
  /** What the command sets in the environment, with the caller's values where it only gives defaults. */
  readonly env: Readonly<Record<string, string>>;
  /** Node's own flags, before the script. */
  readonly flags: readonly string[];
  /** The script and its arguments. */
  readonly args: readonly string[];
}

const ASSIGNMENT = /^([A-Z_][A-Z0-9_]*)=(?:\$\{([A-Z_][A-Z0-9_]*):-([^${}\s]*)\}|([^${}\s'"`\\]*))$/;

/** Parses a start script; `environment` is the one the shell would run it in. */
export function parseStartCommand(script: string, environment: NodeJS.ProcessEnv = process.env): StartCommand {
  const words = script.trim().split(/\s+/);
  const env: Record<string, string> = {};
  let at = 0;
  for (; at < words.length; at++) {
    const match = ASSIGNMENT.exec(words[at] ?? '');
    if (match === null) break;
    const [, name = '', defaulted, fallback = '', plain = ''] = match;
    if (defaulted !== undefined && defaulted !== name) throw new Error(`npm start defaults ${name} from another variable: ${script}`);
    const given = environment[name];
    env[name] = defaulted === undefined ? plain : given === undefined || given === '' ? fallback : given;
  }
  if (words[at] !== 'node') throw new Error(`npm start does not start node: ${script}`);
  const rest = words.slice(at + 1);
  const script0 = rest.findIndex((word) => !word.startsWith('-'));
  if (script0 < 0) throw new Error(`npm start names no script: ${script}`);
  return { env, flags: rest.slice(0, script0), args: rest.slice(script0) };
}

/** `npm start`'s script as the project's package.json writes it. */
export async function startScript(): Promise<string> {
  const pkg = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start;
}

/** `npm start`'s command, from the project's package.json. */
export async function startCommand(environment: NodeJS.ProcessEnv = process.env): Promise<StartCommand> {
  return parseStartCommand(await startScript(), environment);
}
