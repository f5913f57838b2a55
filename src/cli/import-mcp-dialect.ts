import type { McpSource } from './mcp-source.ts';
import type { OpRunner } from './session.ts';

/**
 * What `kgw import mcp` gives the reader of one dialect (import-mcp-atmina.ts, -alignbase.ts,
 * -brain.ts): the connected source, the operations of this gateway, and the target. Each reader
 * calls only the tools its dialect's specification names, refuses the source's items one by one
 * with the reason, and returns its part of the report.
 */
export interface McpImportContext {
  readonly run: OpRunner;
  readonly source: McpSource;
  /** The tenant written into, and the person (by email) the writes are saved as. */
  readonly tenant: string;
  readonly as: string;
  readonly dryRun: boolean;
  /** The kinds `--only` chose (each dialect names its own), or undefined for all of them. */
  readonly only: ReadonlySet<string> | undefined;
  /** A progress line (quiet with --json). */
  readonly progress: (line: string) => void;
}

/** What one dialect's reader did: its report (printed as JSON with --json), its summary lines, and whether anything was refused. */
export interface DialectOutcome {
  readonly report: Record<string, unknown>;
  readonly lines: readonly string[];
  readonly refused: boolean;
}

/** A dialect's reader, with the kinds --only may name for it. */
export interface DialectReader {
  readonly kinds: readonly string[];
  read(context: McpImportContext): Promise<DialectOutcome>;
}

/** An item refused or left out, with the reason (the report's lists). */
export interface Refusal {
  readonly name: string;
  readonly reason: string;
}
