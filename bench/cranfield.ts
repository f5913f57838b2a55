import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Judgments } from './ir-metrics.ts';

/**
 * The Cranfield test collection as the search-quality bench uses it: its documents as KB
 * files, its queries numbered 1..225 in file order (the relevance file numbers them so; the
 * labels in the query file skip numbers), and its judgements per query number. The collection
 * lives beside the repository (its README defines how figures are computed).
 */

export interface CranfieldDoc {
  readonly id: number;
  /** The `.T` text, whitespace collapsed. */
  readonly title: string;
  /** The `.W` text, whitespace collapsed. */
  readonly body: string;
}

export interface CranfieldQuery {
  /** 1..225 in file order: the number the relevance file uses. */
  readonly number: number;
  /** The `.I` label of the query file (001, 002, 004, …). */
  readonly label: string;
  readonly text: string;
}

export interface Cranfield {
  readonly docs: readonly CranfieldDoc[];
  readonly queries: readonly CranfieldQuery[];
  /** Judgements per query number, keyed by document id as a decimal string. */
  readonly judgments: ReadonlyMap<number, Judgments>;
}

const FIELD = /^\.([TABW])\s*$/;
const RECORD = /^\.I\s+(\S+)\s*$/;

const collapse = (lines: readonly string[]): string => lines.join(' ').replace(/\s+/g, ' ').trim();

/**
 * Splits a Cranfield file into records: each `.I <label>` line starts one, and each field
 * marker line (`.T`, `.A`, `.B`, `.W`) starts a field of it. Once the body (`.W`) has begun,
 * it runs to the next record: a few documents (240, 576, 578) carry stray marker lines inside
 * their abstract, and what follows them is still abstract text, so it stays in the body.
 */
function records(text: string): { label: string; fields: Map<string, string[]> }[] {
  const out: { label: string; fields: Map<string, string[]> }[] = [];
  let current: { label: string; fields: Map<string, string[]> } | undefined;
  let field: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const record = RECORD.exec(line);
    if (record !== null) {
      current = { label: record[1]!, fields: new Map() };
      out.push(current);
      field = undefined;
      continue;
    }
    if (current === undefined) continue;
    const marker = FIELD.exec(line);
    if (marker !== null) {
      if (field !== 'W') field = marker[1]!;
      if (!current.fields.has(field)) current.fields.set(field, []);
      continue;
    }
    if (field !== undefined) current.fields.get(field)!.push(line);
  }
  return out;
}

/** The documents of `cran.all.1400`: id, title and body. */
export function parseDocuments(text: string): CranfieldDoc[] {
  return records(text).map((r) => ({ id: Number(r.label), title: collapse(r.fields.get('T') ?? []), body: collapse(r.fields.get('W') ?? []) }));
}

/** The queries of `cran.qry`, numbered 1.. in file order. */
export function parseQueries(text: string): CranfieldQuery[] {
  return records(text).map((r, index) => ({ number: index + 1, label: r.label, text: collapse(r.fields.get('W') ?? []) }));
}

/** The judgements of `cranqrel` (`query doc code` per line), per query number. */
export function parseJudgments(text: string): Map<number, Map<string, number>> {
  const judgments = new Map<number, Map<string, number>>();
  for (const line of text.split(/\r?\n/)) {
    const parts = line.trim().split(/\s+/);
    if (parts.length < 3) continue;
    const [query, doc, code] = parts.map(Number) as [number, number, number];
    if (![query, doc, code].every(Number.isInteger)) throw new Error(`cranqrel: not a "query doc code" line: ${line}`);
    const forQuery = judgments.get(query) ?? new Map<string, number>();
    forQuery.set(String(doc), code);
    judgments.set(query, forQuery);
  }
  return judgments;
}

/** Reads the collection's three files from `dir`. */
export async function readCranfield(dir: string): Promise<Cranfield> {
  const read = (name: string) => readFile(path.join(dir, name), 'utf8');
  const [docs, queries, qrels] = await Promise.all([read('cran.all.1400'), read('cran.qry'), read('cranqrel')]);
  return { docs: parseDocuments(docs), queries: parseQueries(queries), judgments: parseJudgments(qrels) };
}

/** Where a document goes in the KB: `cranfield/<id padded to 4>.md`. */
export function docPath(id: number): string {
  return `cranfield/${String(id).padStart(4, '0')}.md`;
}

/** A document's file: its title as the heading, then its body. */
export function docContent(doc: CranfieldDoc): string {
  return `# ${doc.title}\n\n${doc.body}\n`;
}

const DOC_PATH = /^cranfield\/(\d{4})\.md$/;

/** The document id (a decimal string, as the judgements key it) of a path, or undefined for a path that is no document's. */
export function docIdOf(filePath: string): string | undefined {
  const match = DOC_PATH.exec(filePath);
  return match === null ? undefined : String(Number(match[1]));
}
