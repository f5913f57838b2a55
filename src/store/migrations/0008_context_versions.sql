-- Alignbase versions: full snapshots of Knowledge, Skills (and, later, Memory and Artifacts),
-- the pointers to the latest and the published one, staleness dates, drafts of a replacement
-- and proposals of new Knowledge. docs/alignbase.md describes the model.

-- Knowledge titles (and Memory and Artifact names) may repeat, as in Alignbase; a Skill's name
-- is its directory name and stays unique in the tenant.
ALTER TABLE context_resources DROP CONSTRAINT context_resources_tenant_id_type_name_key;
CREATE UNIQUE INDEX context_resources_skill_name ON context_resources (tenant_id, name) WHERE type = 'skill';
CREATE INDEX context_resources_by_type ON context_resources (tenant_id, type, name);

ALTER TABLE context_resources
  -- 0 until the first version is saved (in the same transaction as the identity).
  ADD COLUMN latest_version integer NOT NULL DEFAULT 0 CHECK (latest_version >= 0),
  ADD COLUMN published_version integer,
  ADD COLUMN published_at timestamptz,
  ADD COLUMN review_by date,
  ADD COLUMN expires_at date,
  ADD CONSTRAINT context_resources_published CHECK (published_version IS NULL OR (published_version BETWEEN 1 AND latest_version)),
  ADD CONSTRAINT context_resources_dates CHECK (expires_at IS NULL OR review_by IS NULL OR expires_at >= review_by);

-- One immutable full snapshot per saved version.
CREATE TABLE context_versions (
  tenant_id    uuid NOT NULL,
  resource_id  uuid NOT NULL,
  version      integer NOT NULL CHECK (version > 0),
  -- version_id in the tools.
  id           uuid NOT NULL,
  -- Knowledge markdown, SKILL.md, Memory content or Artifact markdown.
  content      text NOT NULL,
  -- Knowledge only.
  authority    text CHECK (authority IN ('informational', 'must_follow')),
  -- Skills: the frontmatter's name and description at this version.
  name         text,
  description  text,
  -- The file manifest: [{ path, media_type, size, sha256, digest_encoding }], sorted by path;
  -- the bytes are in the blob store under their SHA-256.
  attachments  jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(attachments) = 'array'),
  created_by   uuid,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, resource_id, version),
  UNIQUE (tenant_id, id),
  FOREIGN KEY (tenant_id, resource_id) REFERENCES context_resources (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, created_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (created_by)
);

-- A saved version never changes (only created_by may be cleared when its principal goes).
CREATE FUNCTION context_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.tenant_id, NEW.resource_id, NEW.version, NEW.id, NEW.content, NEW.authority, NEW.name, NEW.description, NEW.attachments, NEW.created_at)
     IS DISTINCT FROM
     (OLD.tenant_id, OLD.resource_id, OLD.version, OLD.id, OLD.content, OLD.authority, OLD.name, OLD.description, OLD.attachments, OLD.created_at) THEN
    RAISE EXCEPTION 'context versions are immutable';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER context_versions_immutable BEFORE UPDATE ON context_versions
  FOR EACH ROW EXECUTE FUNCTION context_versions_immutable();

-- A proposed full replacement of one Knowledge or Skill (SKILL.md only), based on a version.
-- Never a version itself and never delivered; a reviewer accepts (saving it as a new version)
-- or rejects it.
CREATE TABLE context_drafts (
  tenant_id       uuid NOT NULL,
  id              uuid NOT NULL,
  resource_id     uuid NOT NULL,
  resource_type   text NOT NULL CHECK (resource_type IN ('knowledge', 'skill')),
  base_version    integer NOT NULL CHECK (base_version > 0),
  content         text NOT NULL,
  rationale       text,
  author_id       uuid NOT NULL,
  status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'rejected')),
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  decided_at      timestamptz,
  decided_by      uuid,
  decision_note   text,
  -- The version an accepted draft was saved as.
  result_version  integer,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, resource_id, resource_type) REFERENCES context_resources (tenant_id, id, type) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, author_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, decided_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (decided_by),
  CHECK ((status = 'open') = (decided_at IS NULL))
);
CREATE INDEX context_drafts_open ON context_drafts (tenant_id, resource_id, created_at) WHERE status = 'open';

-- A proposed new Knowledge (propose_knowledge): nothing exists until a person accepts it.
CREATE TABLE context_proposals (
  tenant_id       uuid NOT NULL,
  id              uuid NOT NULL,
  resource_type   text NOT NULL DEFAULT 'knowledge' CHECK (resource_type = 'knowledge'),
  title           text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  content         text NOT NULL,
  rationale       text,
  authority       text NOT NULL DEFAULT 'informational' CHECK (authority IN ('informational', 'must_follow')),
  attachments     jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(attachments) = 'array'),
  author_id       uuid NOT NULL,
  status          text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'accepted', 'rejected')),
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  decided_at      timestamptz,
  decided_by      uuid,
  decision_note   text,
  -- The Knowledge an accepted proposal created.
  resource_id     uuid,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, author_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, decided_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (decided_by),
  FOREIGN KEY (tenant_id, resource_id) REFERENCES context_resources (tenant_id, id) ON DELETE SET NULL (resource_id),
  CHECK ((status = 'open') = (decided_at IS NULL))
);
CREATE INDEX context_proposals_open ON context_proposals (tenant_id, created_at) WHERE status = 'open';
