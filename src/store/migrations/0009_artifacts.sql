-- Artifacts: versioned Markdown packages (context_versions.content and attachments), with the
-- task they came from and a digest of the whole package. docs/alignbase.md, "Artifacts".

ALTER TABLE context_versions
  ADD COLUMN source_task text,
  -- sha256:<hex> over the Markdown and the manifest (paths and file digests), for Artifacts.
  ADD COLUMN digest text;

CREATE OR REPLACE FUNCTION context_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.tenant_id, NEW.resource_id, NEW.version, NEW.id, NEW.content, NEW.authority, NEW.name, NEW.description, NEW.attachments, NEW.created_at, NEW.source_task, NEW.digest)
     IS DISTINCT FROM
     (OLD.tenant_id, OLD.resource_id, OLD.version, OLD.id, OLD.content, OLD.authority, OLD.name, OLD.description, OLD.attachments, OLD.created_at, OLD.source_task, OLD.digest) THEN
    RAISE EXCEPTION 'context versions are immutable';
  END IF;
  RETURN NEW;
END $$;
