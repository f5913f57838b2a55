import type { SearchDocument } from '../../connectors/search/contract.ts';

/** A search document with plain defaults, for tests that care about a few fields only. */
export function searchDocument(fields: Partial<SearchDocument> & Pick<SearchDocument, 'tenantId' | 'id'>): SearchDocument {
  return {
    kind: 'kb_file',
    scope: 'kb:test',
    language: 'english',
    path: `${fields.id}.md`,
    title: '',
    body: '',
    tags: [],
    mediaType: 'text/markdown',
    contentKind: 'text',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ref: {},
    ...fields,
  };
}
