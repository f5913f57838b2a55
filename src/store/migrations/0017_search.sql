-- The built-in search engine (connectors/search/builtin.ts): an inverted index with BM25
-- statistics in the gateway's own store, so every replica on one PostgreSQL reads the same
-- index and a restart rebuilds nothing. A projection of the truth: `kgw reindex --search`
-- rebuilds it. docs/search.md says how it ranks.

-- One row per indexed document (a KB file ...), with what snippets and filters need.
CREATE TABLE search_docs (
  tenant_id     uuid NOT NULL,
  doc_id        text NOT NULL CHECK (length(doc_id) BETWEEN 1 AND 200),
  -- A compact number for the postings; never reused.
  doc_no        bigserial NOT NULL,
  kind          text NOT NULL,
  -- The access scope a caller must hold ('kb:<uuid>'), filtered inside every query.
  scope         text NOT NULL,
  language      text NOT NULL,
  path          text NOT NULL,
  title         text NOT NULL,
  body          text NOT NULL,
  -- The terms of title and body at their positions (' '-separated, '.' for a stop word), for phrases.
  stems         text NOT NULL,
  -- The document's length in weighted terms (BM25's |d|).
  length        real NOT NULL,
  tags          text[] NOT NULL DEFAULT '{}',
  media_type    text NOT NULL,
  content_kind  text NOT NULL CHECK (content_kind IN ('text', 'asset')),
  updated_at    timestamptz NOT NULL,
  ref           jsonb NOT NULL DEFAULT '{}',
  indexed_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, doc_id)
);
CREATE UNIQUE INDEX search_docs_no ON search_docs (doc_no);

-- The inverted index: a term's documents within a scope, with the weighted term frequency and
-- the document's length, so scoring reads this index alone; `fields` says where the term is
-- (1 path, 2 title, 4 body).
CREATE TABLE search_postings (
  tenant_id  uuid NOT NULL,
  term       text COLLATE "C" NOT NULL,
  scope      text NOT NULL,
  doc_no     bigint NOT NULL,
  tf         real NOT NULL,
  length     real NOT NULL,
  fields     smallint NOT NULL,
  PRIMARY KEY (tenant_id, term, scope, doc_no)
);
-- A document's terms: replacing or removing it, and the terms of feedback documents.
CREATE INDEX search_postings_doc ON search_postings (doc_no);

-- Documents and their total length per scope: N and the average length over the scopes a caller reads.
CREATE TABLE search_scopes (
  tenant_id     uuid NOT NULL,
  scope         text NOT NULL,
  docs          integer NOT NULL,
  total_length  double precision NOT NULL,
  PRIMARY KEY (tenant_id, scope)
);

-- Every term ever indexed in a tenant (never shrinks): typo corrections and prefixes are looked up here.
CREATE TABLE search_terms (
  tenant_id  uuid NOT NULL,
  term       text COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant_id, term)
);
