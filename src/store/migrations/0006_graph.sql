-- The graph projection of Company Brain nodes and relations (connectors/graph/postgres.ts, the
-- default graph store). Rebuilt from the truth by a reindex; docs/connectors.md, "Graph store".

CREATE TABLE graph_nodes (
  tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id          text NOT NULL CHECK (length(id) BETWEEN 1 AND 512),
  type        text NOT NULL CHECK (length(type) BETWEEN 1 AND 100),
  properties  jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(properties) = 'object'),
  access      text NOT NULL
    CHECK (access IN ('public', 'department', 'project', 'manager', 'hr', 'executive', 'restricted')),
  department  text,
  project     text,
  -- inferred: an inferred hypothesis needing confirmation; unresolved: an unresolved mapping, not a fact.
  status      text NOT NULL DEFAULT 'verified' CHECK (status IN ('verified', 'inferred', 'unresolved')),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);

CREATE INDEX graph_nodes_access ON graph_nodes (tenant_id, access);

CREATE TABLE graph_relations (
  tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id          text NOT NULL CHECK (length(id) BETWEEN 1 AND 512),
  from_id     text NOT NULL,
  to_id       text NOT NULL,
  verb        text NOT NULL CHECK (length(verb) BETWEEN 1 AND 100),
  status      text NOT NULL DEFAULT 'verified' CHECK (status IN ('verified', 'inferred', 'unresolved')),
  properties  jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(properties) = 'object'),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  -- Deleting a node deletes its relations, as DETACH DELETE does in Neo4j.
  FOREIGN KEY (tenant_id, from_id) REFERENCES graph_nodes (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, to_id) REFERENCES graph_nodes (tenant_id, id) ON DELETE CASCADE
);

-- Both directions of a walk, optionally narrowed by verb.
CREATE INDEX graph_relations_out ON graph_relations (tenant_id, from_id, verb);
CREATE INDEX graph_relations_in ON graph_relations (tenant_id, to_id, verb);
