-- Alignbase messages (send_context, read_inbox, get_current_context): a note and exact Artifact
-- versions from one agent to agents and Groups, one inbox row per delivered agent, and the
-- Artifact access a send grants (context_shares, which the access core reads next to
-- context_grants). docs/alignbase.md, "Messages".

CREATE TABLE context_messages (
  tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id               uuid NOT NULL,
  -- Orders messages, also those sent in the same instant.
  seq              bigint GENERATED ALWAYS AS IDENTITY,
  sender_id        uuid NOT NULL,
  -- Constant 'agent', so the foreign key below admits agents only.
  sender_kind      text GENERATED ALWAYS AS ('agent') STORED,
  idempotency_key  uuid NOT NULL,
  -- sha256 (hex) of the canonical input: a retry with the same key must send the same input.
  request_hash     text NOT NULL CHECK (request_hash ~ '^[0-9a-f]{64}$'),
  -- The optional note; NULL when the message only hands over Artifacts.
  message          text CHECK (message IS NULL OR char_length(message) BETWEEN 1 AND 10000),
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, id),
  UNIQUE (seq),
  CONSTRAINT context_messages_idempotency UNIQUE (tenant_id, sender_id, idempotency_key),
  FOREIGN KEY (tenant_id, sender_id, sender_kind) REFERENCES principals (tenant_id, id, kind) ON DELETE CASCADE
);

-- Whom the sender addressed, in the order given: one agent or one Group each.
CREATE TABLE context_message_recipients (
  tenant_id   uuid NOT NULL,
  message_id  uuid NOT NULL,
  position    smallint NOT NULL CHECK (position BETWEEN 0 AND 19),
  agent_id    uuid,
  agent_kind  text GENERATED ALWAYS AS (CASE WHEN agent_id IS NULL THEN NULL ELSE 'agent' END) STORED,
  group_id    uuid,
  PRIMARY KEY (tenant_id, message_id, position),
  CHECK ((agent_id IS NULL) <> (group_id IS NULL)),
  CONSTRAINT context_message_recipients_once UNIQUE NULLS NOT DISTINCT (tenant_id, message_id, agent_id, group_id),
  FOREIGN KEY (tenant_id, message_id) REFERENCES context_messages (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, agent_id, agent_kind) REFERENCES principals (tenant_id, id, kind) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, group_id) REFERENCES groups (tenant_id, id) ON DELETE CASCADE
);

-- The exact Artifact versions a message pins, with the access it grants on each.
CREATE TABLE context_message_artifacts (
  tenant_id      uuid NOT NULL,
  message_id     uuid NOT NULL,
  position       smallint NOT NULL CHECK (position BETWEEN 0 AND 19),
  artifact_id    uuid NOT NULL,
  artifact_type  text NOT NULL DEFAULT 'artifact' CHECK (artifact_type = 'artifact'),
  version        integer NOT NULL CHECK (version > 0),
  access         text NOT NULL CHECK (access IN ('viewer', 'editor')),
  PRIMARY KEY (tenant_id, message_id, position),
  CONSTRAINT context_message_artifacts_once UNIQUE (tenant_id, message_id, artifact_id),
  FOREIGN KEY (tenant_id, message_id) REFERENCES context_messages (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, artifact_id, artifact_type) REFERENCES context_resources (tenant_id, id, type) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, artifact_id, version) REFERENCES context_versions (tenant_id, resource_id, version) ON DELETE CASCADE
);

-- One row per agent a message was delivered to (never its sender): the agent itself was
-- addressed (via_group_id NULL) or it was a member of an addressed Group at send time.
CREATE TABLE context_inbox (
  tenant_id     uuid NOT NULL,
  agent_id      uuid NOT NULL,
  agent_kind    text GENERATED ALWAYS AS ('agent') STORED,
  message_id    uuid NOT NULL,
  -- The message's seq, so an inbox is read in order from its own index.
  message_seq   bigint NOT NULL,
  via_group_id  uuid,
  -- Set when get_current_context or read_inbox issued the message; NULL while it is new.
  read_at       timestamptz,
  PRIMARY KEY (tenant_id, agent_id, message_id),
  FOREIGN KEY (tenant_id, message_id) REFERENCES context_messages (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, agent_id, agent_kind) REFERENCES principals (tenant_id, id, kind) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, via_group_id) REFERENCES groups (tenant_id, id) ON DELETE SET NULL (via_group_id)
);
CREATE INDEX context_inbox_by_agent ON context_inbox (tenant_id, agent_id, message_seq);
CREATE INDEX context_inbox_unread ON context_inbox (tenant_id, agent_id, message_seq) WHERE read_at IS NULL;
CREATE INDEX context_inbox_by_message ON context_inbox (tenant_id, message_id);

-- Artifact access granted by a message: Viewer or Editor on one Artifact for one agent or one
-- Group (every current and future member). Kept apart from context_grants, which the org file
-- owns as the tenant's complete list; the access core reads both (core/access/grants.ts).
CREATE TABLE context_shares (
  tenant_id       uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id              uuid NOT NULL,
  principal_id    uuid,
  principal_kind  text GENERATED ALWAYS AS (CASE WHEN principal_id IS NULL THEN NULL ELSE 'agent' END) STORED,
  group_id        uuid,
  resource_type   text NOT NULL DEFAULT 'artifact' CHECK (resource_type = 'artifact'),
  resource_id     uuid NOT NULL,
  role            text NOT NULL CHECK (role IN ('viewer', 'editor')),
  message_id      uuid NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, id),
  CHECK ((principal_id IS NULL) <> (group_id IS NULL)),
  CONSTRAINT context_shares_once UNIQUE NULLS NOT DISTINCT (tenant_id, message_id, principal_id, group_id, resource_id),
  FOREIGN KEY (tenant_id, principal_id, principal_kind) REFERENCES principals (tenant_id, id, kind) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, group_id) REFERENCES groups (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, resource_id, resource_type) REFERENCES context_resources (tenant_id, id, type) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, message_id) REFERENCES context_messages (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX context_shares_by_principal ON context_shares (tenant_id, principal_id) WHERE principal_id IS NOT NULL;
CREATE INDEX context_shares_by_group ON context_shares (tenant_id, group_id) WHERE group_id IS NOT NULL;
CREATE INDEX context_shares_by_resource ON context_shares (tenant_id, resource_id);
