-- Scope numbers for the built-in engine's postings and document frequencies (docs/search.md,
-- "Speed"). A posting carried its tenant (16 bytes) and its scope as text ('kb:<uuid>', 40
-- bytes) in the table and again in the key: about half of every posting, and the postings are
-- most of what indexing writes and what a search reads. A scope now has a number, unique
-- across tenants, so the number says the tenant too; a search resolves the scopes its caller
-- may read to their numbers within its tenant (search_scopes), and reads postings by them.

ALTER TABLE search_scopes ADD COLUMN scope_no integer GENERATED ALWAYS AS IDENTITY;

-- Every scope a posting or a frequency names has its row (the writers always made one; this
-- keeps the rewrite below from losing rows if one ever lacked it).
INSERT INTO search_scopes (tenant_id, scope, docs, total_length)
SELECT DISTINCT tenant_id, scope, 0, 0 FROM search_postings
ON CONFLICT (tenant_id, scope) DO NOTHING;
INSERT INTO search_scopes (tenant_id, scope, docs, total_length)
SELECT DISTINCT tenant_id, scope, 0, 0 FROM search_term_df
ON CONFLICT (tenant_id, scope) DO NOTHING;

CREATE UNIQUE INDEX search_scopes_no ON search_scopes (scope_no);

-- Columns from the widest alignment down, the term last, so a row wastes no padding.
CREATE TABLE search_postings_numbered (
  doc_no    bigint NOT NULL,
  scope_no  integer NOT NULL,
  tf        real NOT NULL,
  length    real NOT NULL,
  fields    smallint NOT NULL,
  term      text COLLATE "C" NOT NULL
);
-- In document order, as the writers insert (a document's postings share a page or two).
INSERT INTO search_postings_numbered (doc_no, scope_no, tf, length, fields, term)
SELECT p.doc_no, s.scope_no, p.tf, p.length, p.fields, p.term
  FROM search_postings p JOIN search_scopes s ON s.tenant_id = p.tenant_id AND s.scope = p.scope
 ORDER BY p.doc_no;
DROP TABLE search_postings;
ALTER TABLE search_postings_numbered RENAME TO search_postings;
-- The key still carries what scoring reads (tf, length), for index-only scans (migration 0020).
ALTER TABLE search_postings ADD CONSTRAINT search_postings_pkey PRIMARY KEY (term, scope_no, doc_no) INCLUDE (tf, length);
CREATE INDEX search_postings_doc ON search_postings (doc_no);

-- Every indexing batch updates tens of thousands of these rows in place: pages kept half empty
-- let PostgreSQL write the new version beside the old one (a HOT update, no new key entry).
CREATE TABLE search_term_df_numbered (
  scope_no  integer NOT NULL,
  df        integer NOT NULL,
  term      text COLLATE "C" NOT NULL
) WITH (fillfactor = 50);
INSERT INTO search_term_df_numbered (scope_no, df, term)
SELECT s.scope_no, d.df, d.term
  FROM search_term_df d JOIN search_scopes s ON s.tenant_id = d.tenant_id AND s.scope = d.scope;
DROP TABLE search_term_df;
ALTER TABLE search_term_df_numbered RENAME TO search_term_df;
ALTER TABLE search_term_df ADD CONSTRAINT search_term_df_pkey PRIMARY KEY (term, scope_no);

-- The planner's statistics of the new tables now, not at autovacuum's next round: without them
-- it plans a search's statements as if the tables were empty.
ANALYZE search_scopes, search_postings, search_term_df;
