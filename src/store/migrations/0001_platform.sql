-- Tenants, principals (people and agents), groups, teams and static bearer tokens.
-- Every tenant-owned row carries tenant_id as the first column of its key.

CREATE TABLE tenants (
  id          uuid PRIMARY KEY,
  slug        text NOT NULL UNIQUE CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  language    text NOT NULL DEFAULT 'en',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE principals (
  tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id          uuid NOT NULL,
  kind        text NOT NULL CHECK (kind IN ('person', 'agent')),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  email       text CHECK (email = lower(email)),
  owner_id    uuid,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, owner_id) REFERENCES principals (tenant_id, id),
  CHECK ((kind = 'person' AND email IS NOT NULL AND owner_id IS NULL)
      OR (kind = 'agent' AND email IS NULL AND owner_id IS NOT NULL))
);
CREATE UNIQUE INDEX principals_person_email ON principals (tenant_id, email) WHERE kind = 'person';
CREATE UNIQUE INDEX principals_agent_name ON principals (tenant_id, name) WHERE kind = 'agent';

CREATE TABLE groups (
  tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id          uuid NOT NULL,
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, name)
);

CREATE TABLE group_members (
  tenant_id     uuid NOT NULL,
  group_id      uuid NOT NULL,
  principal_id  uuid NOT NULL,
  added_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, group_id, principal_id),
  FOREIGN KEY (tenant_id, group_id) REFERENCES groups (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX group_members_by_principal ON group_members (tenant_id, principal_id);

CREATE TABLE teams (
  tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id          uuid NOT NULL,
  slug        text NOT NULL CHECK (slug ~ '^[a-z0-9][a-z0-9-]{0,62}$'),
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, slug)
);

CREATE TABLE team_members (
  tenant_id     uuid NOT NULL,
  team_id       uuid NOT NULL,
  principal_id  uuid NOT NULL,
  role          text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
  PRIMARY KEY (tenant_id, team_id, principal_id),
  FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX team_members_by_principal ON team_members (tenant_id, principal_id);

-- Bearer tokens are stored as the SHA-256 of the secret; the secret itself is shown once.
CREATE TABLE tokens (
  tenant_id     uuid NOT NULL,
  id            uuid NOT NULL,
  secret_hash   text NOT NULL UNIQUE,
  principal_id  uuid NOT NULL,
  scopes        text[] NOT NULL,
  label         text,
  source        text NOT NULL DEFAULT 'cli' CHECK (source IN ('cli', 'oauth')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz,
  revoked_at    timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX tokens_by_principal ON tokens (tenant_id, principal_id);
