-- Knowledge-Base files and the references between them, as the graph projection keeps them in
-- the gateway's own store (connectors/graph/postgres.ts) for Atmina's `related`. Fed by the
-- outbox from the files themselves and rebuilt by `kgw reindex --graph`; docs/atmina.md
-- ("related"). A reference names paths, not files: it is resolved when it is read.

CREATE TABLE graph_kb_files (
  tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  file_id     uuid NOT NULL,
  kb_id       uuid NOT NULL,
  path        text NOT NULL CHECK (length(path) BETWEEN 1 AND 1024),
  -- The path's last segment, which a bare wiki name matches.
  name        text NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('text', 'asset')),
  media_type  text NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, file_id)
);

-- Not unique: a move and a create projected out of order can share a path for a moment.
CREATE INDEX graph_kb_files_path ON graph_kb_files (tenant_id, kb_id, path);
CREATE INDEX graph_kb_files_name ON graph_kb_files (tenant_id, kb_id, name);

CREATE TABLE graph_kb_links (
  tenant_id     uuid NOT NULL,
  from_file_id  uuid NOT NULL,
  -- The reference's place among the file's (they are replaced together).
  ord           integer NOT NULL,
  kb_id         uuid NOT NULL,
  type          text NOT NULL CHECK (type IN ('markdown', 'wiki', 'front_matter')),
  key           text,
  target        text NOT NULL,
  -- Candidate paths in order (a wiki link: as written, then with .md), and a bare wiki name.
  path          text,
  alt_path      text,
  name          text,
  PRIMARY KEY (tenant_id, from_file_id, ord),
  FOREIGN KEY (tenant_id, from_file_id) REFERENCES graph_kb_files (tenant_id, file_id) ON DELETE CASCADE
);

-- Incoming references are found by the paths and the name they name.
CREATE INDEX graph_kb_links_path ON graph_kb_links (tenant_id, kb_id, path);
CREATE INDEX graph_kb_links_alt_path ON graph_kb_links (tenant_id, kb_id, alt_path) WHERE alt_path IS NOT NULL;
CREATE INDEX graph_kb_links_name ON graph_kb_links (tenant_id, kb_id, name) WHERE name IS NOT NULL;
