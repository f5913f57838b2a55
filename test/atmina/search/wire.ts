import type { Agent } from '../support.ts';

/** A file result of Atmina's `search` as it arrives on the wire (the search suites read these fields). */
export interface ResultWire {
  kind: string;
  kb_id: string;
  kb_slug: string;
  path: string;
  file_id: string;
  version: number;
  title: string;
  score: number;
  snippets: string[];
  reasons: {
    terms: { term: string; fields: string[] }[];
    expansions: string[];
    phrases: string[];
    /** Hybrid retrieval only: the ranked lists a result was in. */
    lists?: { list: string; rank: number }[];
    /** Hybrid retrieval only: why the answer is lexical. */
    fallback?: string;
  };
  read_ref: { tool: string; arguments: { kb_id: string; file_id: string } };
}

export interface SearchWire {
  results: ResultWire[];
  total: number;
  next_cursor: string | null;
  retrieval: string;
}

export const paths = (answer: SearchWire): string[] => answer.results.map((r) => r.path);

/** Writes `count` files `secret/<i>.md` into a KB through `writer` (files the searching caller must never see). */
export async function writeSecrets(writer: Agent, kbId: string, content: (i: number) => string, count = 20): Promise<void> {
  await writer.ok('write_files', {
    kb_id: kbId,
    items: Array.from({ length: count }, (_, i) => ({ path: `secret/${i}.md`, mode: 'create', content: content(i) })),
  });
}
