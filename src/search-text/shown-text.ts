import { frontMatterLength } from './front-matter.ts';
import { SNIPPET_MARK } from './snippets.ts';
import type { Analyzer } from './analyzer.ts';

/*
 * What a search result shows a person, beside what it ranks by: snippets of a Markdown
 * document's text without its front matter, and the words behind the terms search added, as
 * the document writes them rather than as stems.
 */

/**
 * The text snippets are cut from: a Markdown document's body after its front matter (the YAML
 * block of tags, title and other keys is metadata, not prose to quote; its words still match, as
 * the document is indexed whole), any other document's text as it is.
 */
export function snippetText(body: string, mediaType: string | undefined): string {
  if (mediaType !== 'text/markdown') return body;
  const skip = frontMatterLength(body);
  return skip === 0 ? body : body.slice(skip);
}

/**
 * Whether snippets that mark no word are so because the document's matches (of the text read)
 * are in its front matter, which snippets leave out: then the start of its body is what it
 * should show, and an engine must not replace it with a crop of the indexed text.
 */
export function matchedInFrontMatterOnly(
  analyzer: Analyzer,
  body: string,
  mediaType: string | undefined,
  matched: ReadonlySet<string>,
  snippets: readonly string[],
): boolean {
  if (mediaType !== 'text/markdown' || snippets.some((s) => s.includes(SNIPPET_MARK.open))) return false;
  const skip = frontMatterLength(body);
  return skip > 0 && analyzer.tokens(body.slice(0, skip)).some((token) => matched.has(token.term));
}

// A word as the analyser reads one: letters, combining marks and digits (analyzer.ts).
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * The word each of `terms` (analysed terms: stems) stands for in `texts` (a document's path,
 * title and body, in that order): the first word whose term it is, as written there. A term
 * none of them holds (it is in the part of the body past what was read) stays as it is. Reading
 * stops once every term has its word.
 */
export function surfaceWords(analyzer: Analyzer, terms: readonly string[], texts: readonly string[]): string[] {
  if (terms.length === 0) return [];
  const wanted = new Set(terms);
  const found = new Map<string, string>();
  search: for (const text of texts) {
    for (const match of text.matchAll(WORD)) {
      const term = analyzer.term(match[0]);
      if (term === undefined || !wanted.has(term) || found.has(term)) continue;
      found.set(term, match[0]);
      if (found.size === wanted.size) break search;
    }
  }
  return terms.map((term) => found.get(term) ?? term);
}
