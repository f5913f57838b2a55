import type { SearchDocument, SearchSource } from '../../connectors/search/contract.ts';

/*
 * The search projection reads documents from one source; each product offers its own (KB files,
 * Alignbase resources, Company Brain nodes), and the composition root (open-services.ts) puts
 * them together here, by the prefix of the resource keys each one owns.
 */

/**
 * Composes sources by resource-key prefix: a row goes to the source of the first prefix its
 * key starts with; a key no source claims is shown as nothing (its documents are removed).
 */
export function composeSearchSources(sources: readonly { readonly prefixes: readonly string[]; readonly source: SearchSource }[]): SearchSource {
  const sourceOf = (key: string) => sources.find((s) => s.prefixes.some((p) => key.startsWith(p)))?.source;
  return {
    async load(tx, refs, signal) {
      const docs: SearchDocument[] = [];
      for (const { source } of sources) {
        const mine = refs.filter((ref) => sourceOf(ref.resourceKey) === source);
        if (mine.length > 0) docs.push(...(await source.load(tx, mine, signal)));
      }
      return docs;
    },
    documentIds(ref) {
      const source = sourceOf(ref.resourceKey);
      return source?.documentIds?.(ref) ?? [ref.resourceKey];
    },
  };
}
