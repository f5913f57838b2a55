-- Content brought in from another MCP endpoint (kgw import mcp, docs/migration.md). A version
-- an import saves names where it came from (provenance): the source endpoint, the item's id and
-- version there, and its author and instant there as the source gave them; file_history and
-- the Alignbase reads show it as imported_from. imported_items maps each source item to the
-- local one with the last source version carried and its content hash, so that a second run
-- updates instead of duplicating and an interrupted run resumes. Both are written in the
-- transaction that saves the version, so they never disagree.
ALTER TABLE context_versions ADD COLUMN provenance jsonb CHECK (provenance IS NULL OR jsonb_typeof(provenance) = 'object');
ALTER TABLE kb_file_versions ADD COLUMN provenance jsonb CHECK (provenance IS NULL OR jsonb_typeof(provenance) = 'object');

-- A version's provenance is part of the version, which never changes.
CREATE FUNCTION provenance_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.provenance IS DISTINCT FROM OLD.provenance THEN
    RAISE EXCEPTION 'the provenance of a saved version is immutable';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER context_versions_provenance BEFORE UPDATE ON context_versions FOR EACH ROW EXECUTE FUNCTION provenance_immutable();
CREATE TRIGGER kb_file_versions_provenance BEFORE UPDATE ON kb_file_versions FOR EACH ROW EXECUTE FUNCTION provenance_immutable();

CREATE TABLE imported_items (
  tenant_id       uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  -- The source endpoint's URL, as the import was given it.
  source          text NOT NULL CHECK (octet_length(source) BETWEEN 1 AND 2048),
  -- What the item is (kb_file, knowledge, skill, memory, artifact), as its product names it.
  kind            text NOT NULL CHECK (kind ~ '^[a-z][a-z_]{0,31}$'),
  source_id       text NOT NULL CHECK (octet_length(source_id) BETWEEN 1 AND 512),
  local_id        uuid NOT NULL,
  -- The last version of the source item carried here, and the SHA-256 of its content.
  source_version  integer NOT NULL CHECK (source_version >= 1),
  content_sha256  text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  imported_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, source, kind, source_id)
);
CREATE INDEX imported_items_by_local ON imported_items (tenant_id, local_id);
