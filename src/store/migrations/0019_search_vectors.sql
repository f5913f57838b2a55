-- Vectors of the search documents for hybrid retrieval (src/core/search/vectors.ts), filled by
-- the `vectors` outbox projection from search_docs when an embeddings endpoint is configured
-- (KGW_EMBEDDINGS_URL); docs/search.md, "Hybrid retrieval". A projection of search_docs: a
-- vector goes with its document (the foreign key deletes it with the document, and with
-- `kgw reindex --search`'s clearing), so a vector of a document search no longer holds never
-- stays behind.
CREATE TABLE search_vectors (
  tenant_id   uuid NOT NULL,
  doc_id      text NOT NULL,
  -- The document's scope when it was embedded; queries filter by search_docs' own scope.
  scope       text NOT NULL,
  -- SHA-256 (hex) of the text embedded: an unchanged document is not embedded again.
  text_sha256 text NOT NULL CHECK (text_sha256 ~ '^[0-9a-f]{64}$'),
  model       text NOT NULL CHECK (length(model) BETWEEN 1 AND 200),
  dims        integer NOT NULL CHECK (dims BETWEEN 1 AND 4096),
  -- dims little-endian float32 values, of unit length.
  vector      bytea NOT NULL CHECK (length(vector) = 4 * dims),
  updated_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, doc_id),
  FOREIGN KEY (tenant_id, doc_id) REFERENCES search_docs (tenant_id, doc_id) ON DELETE CASCADE
);
