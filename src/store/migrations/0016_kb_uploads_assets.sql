-- Uploads and Assets of Knowledge Bases: what is known of an Asset's version (its Companion
-- text and metadata), and the batches of presigned uploads between request and confirmation.

-- One row per version of an image or PDF Asset, written in the version's own transaction.
-- A table beside kb_file_versions rather than columns in it: the versions stay as narrow and as
-- immutable as before, and a text file's versions carry nothing empty.
CREATE TABLE kb_file_assets (
  tenant_id       uuid NOT NULL,
  file_id         uuid NOT NULL,
  version         integer NOT NULL,
  format          text NOT NULL CHECK (format IN ('png', 'jpeg', 'gif', 'webp', 'pdf')),
  width           integer CHECK (width >= 1),
  height          integer CHECK (height >= 1),
  pages           integer CHECK (pages >= 0),
  state           text NOT NULL CHECK (state IN ('ready', 'failed')),
  reason          text CHECK (reason IN ('encrypted', 'corrupt', 'deadline', 'memory')),
  -- The Companion: a PDF's extracted text (at most 1 MiB) or an image's description (16 KiB).
  companion       text NOT NULL DEFAULT '' CHECK (octet_length(companion) <= 1048576),
  truncated       boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, file_id, version),
  FOREIGN KEY (tenant_id, file_id, version) REFERENCES kb_file_versions (tenant_id, file_id, version) ON DELETE CASCADE,
  CHECK ((state = 'failed') = (reason IS NOT NULL)),
  CHECK ((format = 'pdf') OR pages IS NULL)
);

-- A batch of presigned uploads: request_uploads writes it, confirm_uploads stores its result so
-- that a retried confirmation answers the same and catalogs nothing twice. The batch token is a
-- secret held by the caller; only its SHA-256 is kept.
CREATE TABLE kb_upload_batches (
  tenant_id       uuid NOT NULL,
  id              uuid NOT NULL,
  kb_id           uuid NOT NULL,
  token_sha256    text NOT NULL CHECK (token_sha256 ~ '^[0-9a-f]{64}$'),
  principal_id    uuid NOT NULL,
  -- The declared items: [{ path, mediaType, sizeBytes, sha256 }], at most 50.
  items           jsonb NOT NULL CHECK (jsonb_typeof(items) = 'array' AND jsonb_array_length(items) BETWEEN 1 AND 50),
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  expires_at      timestamptz NOT NULL,
  -- Set while a confirmation works, so that a concurrent one waits instead of doing it twice.
  claimed_at      timestamptz,
  confirmed_at    timestamptz,
  result          jsonb,
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT kb_upload_batches_token UNIQUE (token_sha256),
  FOREIGN KEY (tenant_id, kb_id) REFERENCES kbs (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE,
  CHECK ((confirmed_at IS NULL) = (result IS NULL))
);
CREATE INDEX kb_upload_batches_expiry ON kb_upload_batches (expires_at) WHERE confirmed_at IS NULL;

-- The key that signs short-lived download links of Asset originals (core/kb/download-links.ts):
-- one row, made on first use, shared by every gateway process over this store so that a link
-- one replica signed is valid on another.
CREATE TABLE kb_link_keys (
  id          smallint PRIMARY KEY CHECK (id = 1),
  secret      text NOT NULL CHECK (secret ~ '^[A-Za-z0-9_-]{43}$'),
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
