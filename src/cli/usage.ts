import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { visible } from './terminal.ts';

/** A mistake in how a command was called; reported with exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * Node's parseArgs refusals in the CLI's own words: its texts ("Unknown option '--x'. To specify
 * a positional argument starting with a '-', place it at the end of the command after '--' …")
 * explain its parser, not the command.
 */
function parseProblem(error: Error & { code?: string }, known: readonly string[]): string {
  const named = /'(-{1,2}[^' ]+)/.exec(error.message)?.[1];
  const options = [...known, 'help'].map((name) => `--${name}`).join(', ');
  if (error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${named ?? error.message}; the options are ${options}`;
  if (error.code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE')
    return /does not take an argument/.test(error.message) ? `${named ?? 'the option'} takes no value` : `${named ?? 'the option'} needs a value`;
  return error.message.split('\n')[0] ?? 'bad arguments';
}

/** Parses a command's arguments strictly; `--help` is always accepted. */
export function parseCommand<O extends Options>(argv: readonly string[], options: O, positionals: { min: number; max: number }) {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(parseProblem(error as Error & { code?: string }, Object.keys(options)));
  }
  const help = (parsed.values as { help?: boolean }).help === true;
  if (!help && (parsed.positionals.length < positionals.min || parsed.positionals.length > positionals.max)) {
    throw new UsageError(
      positionals.max === 0
        ? 'this command takes no arguments'
        : positionals.min === positionals.max
          ? `expected ${positionals.min === 1 ? 'one argument' : `${positionals.min} arguments`}, got ${parsed.positionals.length}`
          : `expected ${positionals.min} to ${positionals.max} arguments, got ${parsed.positionals.length}`,
    );
  }
  return { values: parsed.values, positionals: parsed.positionals, help };
}

/** The named options, each required: a usage error names the first one missing. */
export function requireOptions<V extends object, K extends keyof V & string>(values: V, ...names: K[]): { [P in K]: Exclude<V[P], undefined> } {
  for (const name of names) if (values[name] === undefined) throw new UsageError(`--${name} is required`);
  return values as { [P in K]: Exclude<V[P], undefined> };
}

/** An ISO instant to the second, as the tables show it. */
export const when = (iso: string): string => iso.replace(/\.\d{3}Z$/, 'Z');

/**
 * Lines of a table, columns padded to their widest cell. Each cell is made visible on one line
 * first (terminal.ts), so that a line break or escape in an agent-written cell can neither forge a
 * row nor throw the widths off.
 */
export function table(header: readonly string[], body: readonly (readonly string[])[]): string {
  const rows = body.map((row) => row.map((cell) => visible(cell, { inline: true })));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ');
  return [line(header), ...rows.map(line)].join('\n');
}
