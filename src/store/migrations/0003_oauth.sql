-- OAuth 2.1 for MCP clients: registered public clients, browser sign-in sessions, one-time
-- login links, grants (one per approval: the token family), authorization codes and refresh
-- tokens. Every secret (session, link, code, refresh token) is stored as its SHA-256 only.

-- Clients register themselves (RFC 7591) before anyone signs in, so they belong to no tenant.
CREATE TABLE oauth_clients (
  client_id      text PRIMARY KEY,
  client_name    text CHECK (length(client_name) <= 200),
  redirect_uris  text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 10),
  grant_types    text[] NOT NULL,
  scopes         text[] NOT NULL,
  -- Optional registered fields echoed back as given (client_uri, logo_uri, software_id, ...).
  metadata       jsonb NOT NULL DEFAULT '{}',
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_sessions (
  tenant_id    uuid NOT NULL,
  id           uuid NOT NULL,
  secret_hash  text NOT NULL UNIQUE,
  person_id    uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, person_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_sessions_expiry ON oauth_sessions (expires_at);

CREATE TABLE oauth_login_links (
  tenant_id    uuid NOT NULL,
  id           uuid NOT NULL,
  secret_hash  text NOT NULL UNIQUE,
  person_id    uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, person_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_login_links_expiry ON oauth_login_links (expires_at);

-- One approval on the consent page: which client may act as which agent, with which scopes,
-- towards which MCP resource. Every code, access and refresh token descends from one grant;
-- revoking the grant revokes them all.
CREATE TABLE oauth_grants (
  tenant_id     uuid NOT NULL,
  id            uuid NOT NULL,
  client_id     text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  principal_id  uuid NOT NULL,
  approved_by   uuid NOT NULL,
  scopes        text[] NOT NULL,
  audience      text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  revoked_at    timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, approved_by) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE oauth_codes (
  tenant_id       uuid NOT NULL,
  id              uuid NOT NULL,
  secret_hash     text NOT NULL UNIQUE,
  grant_id        uuid NOT NULL,
  redirect_uri    text NOT NULL,
  code_challenge  text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, grant_id) REFERENCES oauth_grants (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

CREATE TABLE oauth_refresh_tokens (
  tenant_id    uuid NOT NULL,
  id           uuid NOT NULL,
  secret_hash  text NOT NULL UNIQUE,
  grant_id     uuid NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz NOT NULL,
  -- Set when the token is exchanged; presenting it again revokes the whole grant.
  used_at      timestamptz,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, grant_id) REFERENCES oauth_grants (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_refresh_tokens_by_grant ON oauth_refresh_tokens (tenant_id, grant_id);

-- OAuth access tokens are ordinary bearer tokens (source 'oauth') bound to one MCP resource.
ALTER TABLE tokens
  ADD COLUMN audience text,
  ADD COLUMN client_id text REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
  ADD COLUMN family_id uuid,
  ADD FOREIGN KEY (tenant_id, family_id) REFERENCES oauth_grants (tenant_id, id) ON DELETE CASCADE,
  ADD CHECK (family_id IS NULL OR source = 'oauth');
CREATE INDEX tokens_by_family ON tokens (tenant_id, family_id) WHERE family_id IS NOT NULL;
