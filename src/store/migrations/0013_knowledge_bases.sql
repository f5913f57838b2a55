-- Atmina Knowledge Bases and their files (docs/atmina.md). A KB belongs to one team; access
-- comes from the team role, team shares and an agent's policy, narrowed by the KB's
-- visibility (core/kb/access.ts). A file is a head (kb_files: its path and latest version)
-- with one immutable row per version (kb_file_versions). The bytes live in the blob store
-- under their SHA-256, written before any row points at them; identical bytes are stored once.

CREATE TABLE kbs (
  tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id               uuid NOT NULL,
  -- The owning team. No cascade: a team that still owns KBs cannot be removed by accident.
  team_id          uuid NOT NULL,
  -- Unique in the tenant, archived KBs included, so restoring one never collides.
  slug             text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 200 AND name = btrim(name)),
  description      text NOT NULL DEFAULT '' CHECK (length(description) <= 2000),
  visibility       text NOT NULL DEFAULT 'team' CHECK (visibility IN ('private', 'team', 'public')),
  location_policy  text NOT NULL DEFAULT 'visible' CHECK (location_policy IN ('visible', 'flag_only')),
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  created_by       uuid,
  updated_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_by       uuid,
  archived_at      timestamptz,
  archived_by      uuid,
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT kbs_slug UNIQUE (tenant_id, slug),
  FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id),
  FOREIGN KEY (tenant_id, created_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (created_by),
  FOREIGN KEY (tenant_id, updated_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (updated_by),
  FOREIGN KEY (tenant_id, archived_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (archived_by),
  CHECK (archived_by IS NULL OR archived_at IS NOT NULL)
);
CREATE INDEX kbs_by_team ON kbs (tenant_id, team_id);

-- The head of one file: where it is now and what its latest version holds. Paths are
-- NFC-normalised, relative and '/'-separated (core/kb/paths.ts has every rule; the checks here
-- are the ones a database can state), compared byte for byte, unique among the live files of
-- a KB. A deleted file keeps its row and history; its path is free again.
CREATE TABLE kb_files (
  tenant_id       uuid NOT NULL,
  id              uuid NOT NULL,
  kb_id           uuid NOT NULL,
  path            text COLLATE "C" NOT NULL
                  CHECK (octet_length(path) BETWEEN 1 AND 1024 AND path IS NFC NORMALIZED
                         AND left(path, 1) <> '/' AND right(path, 1) <> '/' AND strpos(path, '//') = 0 AND strpos(path, '\') = 0),
  latest_version  integer NOT NULL CHECK (latest_version >= 1),
  sha256          text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  size_bytes      bigint NOT NULL CHECK (size_bytes >= 0),
  media_type      text NOT NULL CHECK (media_type ~ '^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$'),
  -- text: UTF-8 read and written through the file tools; asset: binary (PDF, images), uploaded.
  kind            text NOT NULL CHECK (kind IN ('text', 'asset')),
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  created_by      uuid,
  updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_by      uuid,
  deleted_at      timestamptz,
  deleted_by      uuid,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, kb_id) REFERENCES kbs (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, created_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (created_by),
  FOREIGN KEY (tenant_id, updated_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (updated_by),
  FOREIGN KEY (tenant_id, deleted_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (deleted_by),
  CHECK (deleted_by IS NULL OR deleted_at IS NOT NULL)
);
-- One live file per path; also the index of list_files (prefix and path order).
CREATE UNIQUE INDEX kb_files_live_path ON kb_files (tenant_id, kb_id, path) WHERE deleted_at IS NULL;

-- One row per saved version of a file, never changed: what the file held and where it was.
CREATE TABLE kb_file_versions (
  tenant_id      uuid NOT NULL,
  file_id        uuid NOT NULL,
  version        integer NOT NULL CHECK (version >= 1),
  id             uuid NOT NULL,
  -- The path at this version (a move writes a version with the new path).
  path           text COLLATE "C" NOT NULL CHECK (octet_length(path) BETWEEN 1 AND 1024 AND path IS NFC NORMALIZED),
  sha256         text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  size_bytes     bigint NOT NULL CHECK (size_bytes >= 0),
  media_type     text NOT NULL CHECK (media_type ~ '^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$'),
  operation      text NOT NULL
                 CHECK (operation IN ('create', 'overwrite', 'append', 'patch', 'move', 'restore', 'upload', 'update', 'delete')),
  -- The version a restore copied.
  restored_from  integer CHECK (restored_from >= 1 AND restored_from < version),
  author_id      uuid,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, file_id, version),
  UNIQUE (tenant_id, id),
  FOREIGN KEY (tenant_id, file_id) REFERENCES kb_files (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, author_id) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (author_id),
  CHECK ((operation = 'restore') = (restored_from IS NOT NULL)),
  CHECK ((operation IN ('create', 'upload')) = (version = 1))
);

-- A saved version never changes (only author_id may be cleared when its principal goes).
CREATE FUNCTION kb_file_versions_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF (NEW.tenant_id, NEW.file_id, NEW.version, NEW.id, NEW.path, NEW.sha256, NEW.size_bytes, NEW.media_type, NEW.operation, NEW.restored_from, NEW.created_at)
     IS DISTINCT FROM
     (OLD.tenant_id, OLD.file_id, OLD.version, OLD.id, OLD.path, OLD.sha256, OLD.size_bytes, OLD.media_type, OLD.operation, OLD.restored_from, OLD.created_at)
     OR (NEW.author_id IS NOT NULL AND NEW.author_id IS DISTINCT FROM OLD.author_id) THEN
    RAISE EXCEPTION 'kb file versions are immutable';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER kb_file_versions_immutable BEFORE UPDATE ON kb_file_versions
  FOR EACH ROW EXECUTE FUNCTION kb_file_versions_immutable();

-- When each principal last wrote to a KB: the reader's own record behind the contribution note
-- read_file shows to those who have not written lately.
CREATE TABLE kb_contributions (
  tenant_id      uuid NOT NULL,
  kb_id          uuid NOT NULL,
  principal_id   uuid NOT NULL,
  last_write_at  timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, kb_id, principal_id),
  FOREIGN KEY (tenant_id, kb_id) REFERENCES kbs (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);
