import { parse } from 'yaml';
import type { OrgEnvironment } from './org-file.ts';

/**
 * The environment variables an org file names with `password_env`, with their values in
 * `env`. The CLI sends this, and nothing else of its environment, when a running gateway
 * applies the file for it: the passwords belong to the `kgw apply` process, not the gateway.
 * A file that does not parse names nothing here; applying it reports why.
 */
export function passwordEnvironment(source: string, env: OrgEnvironment = process.env): Record<string, string> {
  let root: unknown;
  try {
    root = parse(source, { uniqueKeys: false });
  } catch {
    return {};
  }
  const people = isRecord(root) ? root.people : undefined;
  const picked: Record<string, string> = {};
  for (const person of Array.isArray(people) ? people : []) {
    const name = isRecord(person) ? person.password_env : undefined;
    const value = typeof name === 'string' && Object.hasOwn(env, name) ? env[name] : undefined;
    if (typeof name === 'string' && value !== undefined) picked[name] = value;
  }
  return picked;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
