-- Company Brain knowledge: the truth of the nodes and relations beyond the directory (people,
-- agents, departments and projects are the directory's, see src/core/graph/org-graph.ts).
-- The graph store (graph_nodes and graph_relations, or Neo4j) is their projection through the
-- outbox. docs/company-brain.md describes every field.

CREATE TABLE brain_nodes (
  tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  -- Written by the organisation (lowercase letters, digits, '.', '_', '-'); never contains ':',
  -- which the directory's ids (person:…, department:…) have, so the two never meet.
  id               text NOT NULL CHECK (id ~ '^[a-z0-9][a-z0-9._-]{0,79}$' AND id <> 'org'),
  type             text NOT NULL CHECK (type IN ('organization', 'person', 'department', 'project', 'agent',
                     'SOP / process', 'tool', 'strategy', 'data source', 'policy')),
  title            text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  summary          text NOT NULL DEFAULT '' CHECK (length(summary) <= 4000),
  access           text NOT NULL
    CHECK (access IN ('public', 'department', 'project', 'manager', 'hr', 'executive', 'restricted')),
  -- The department (or project) a department (or project) node belongs to; required by those tiers.
  department       text CHECK ((access = 'department') = (department IS NOT NULL)),
  project          text CHECK ((access = 'project') = (project IS NOT NULL)),
  -- {"Owner": "…", "Score": 4, …}: the contract's English keys, display values.
  metadata         jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(metadata) = 'object'),
  tags             text[] NOT NULL DEFAULT '{}',
  verified_at      timestamptz,
  review_by        timestamptz,
  -- inferred: an inferred hypothesis needing confirmation; unresolved: an unresolved mapping, not a fact.
  mark             text CHECK (mark IN ('inferred', 'unresolved')),
  -- Who keeps it: the org file's brain section (which removes what it no longer lists), an
  -- import, or an approved proposal.
  origin           text NOT NULL CHECK (origin IN ('org', 'import', 'inbox')),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id)
);

CREATE TABLE brain_relations (
  tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  -- A brain node's id or a directory node's (org, person:<uuid>, agent:<uuid>, department:<name>,
  -- project:<name>). A relation whose end is gone is kept here and left out of the graph.
  from_id          text NOT NULL CHECK (length(from_id) BETWEEN 1 AND 300),
  verb             text NOT NULL CHECK (verb IN ('is part of', 'belongs to', 'manages', 'works on', 'owns', 'uses',
                     'depends on', 'governs', 'can access', 'supports', 'champions', 'targets',
                     'needs clarification with')),
  to_id            text NOT NULL CHECK (length(to_id) BETWEEN 1 AND 300),
  mark             text CHECK (mark IN ('inferred', 'unresolved')),
  origin           text NOT NULL CHECK (origin IN ('org', 'import', 'inbox')),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, from_id, verb, to_id)
);
