-- What the org file last set as the content of each Memory it declares (docs/org-file.md,
-- "memories"): the SHA-256 of that text and the version holding it. A Memory is the agents'
-- working state, so applying a file whose content for a Memory is the one it last applied
-- leaves the agents' later writes alone; only a changed content in the file is saved again.
CREATE TABLE org_memory_content (
  tenant_id       uuid NOT NULL,
  resource_id     uuid NOT NULL,
  -- Constant 'memory', so the foreign key below admits Memories only.
  resource_type   text NOT NULL DEFAULT 'memory' CHECK (resource_type = 'memory'),
  content_sha256  text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  version         integer NOT NULL CHECK (version > 0),
  applied_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, resource_id),
  FOREIGN KEY (tenant_id, resource_id, resource_type) REFERENCES context_resources (tenant_id, id, type) ON DELETE CASCADE
);
