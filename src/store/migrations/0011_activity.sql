-- Activity: client-reported installations, hook sessions and lifecycle events, and the
-- per-tenant switch. Names and codes only, from fixed lists or conservative patterns: no
-- transcripts, reasoning, tool payloads or environment values. docs/alignbase.md, "Activity".

-- The switch: no row means Activity is enabled (the default); kgw activity --disable adds one.
CREATE TABLE activity_settings (
  tenant_id   uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  enabled     boolean NOT NULL,
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- One installation of one client for one agent (an agent may have several).
CREATE TABLE activity_installations (
  tenant_id       uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id              uuid NOT NULL,
  agent_id        uuid NOT NULL,
  -- Constant 'agent', so the foreign key below admits agents only.
  agent_kind      text NOT NULL DEFAULT 'agent' CHECK (agent_kind = 'agent'),
  integration     text NOT NULL CHECK (integration ~ '^[a-z0-9][a-z0-9._-]{0,99}$'),
  transport       text NOT NULL CHECK (transport IN ('stdio', 'streamable-http', 'sse')),
  capabilities    text[] NOT NULL CHECK (cardinality(capabilities) <= 50),
  client_version  text CHECK (client_version ~ '^[A-Za-z0-9][A-Za-z0-9._+-]{0,49}$'),
  -- Native coverage: hook capability -> when a hook of it last reached the gateway.
  coverage        jsonb NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  last_seen_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, agent_id, agent_kind) REFERENCES principals (tenant_id, id, kind) ON DELETE CASCADE
);
CREATE INDEX activity_installations_by_agent ON activity_installations (tenant_id, agent_id);

-- A hook session: started once per installation and client session id.
CREATE TABLE activity_sessions (
  tenant_id        uuid NOT NULL,
  id               uuid NOT NULL,
  installation_id  uuid NOT NULL,
  session_id       text NOT NULL CHECK (session_id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  hook             text NOT NULL CHECK (hook IN ('session_start', 'prompt_submit')),
  started_at       timestamptz NOT NULL DEFAULT now(),
  last_seen_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT activity_sessions_once UNIQUE (tenant_id, installation_id, session_id),
  FOREIGN KEY (tenant_id, installation_id) REFERENCES activity_installations (tenant_id, id) ON DELETE CASCADE
);

-- Every recorded event, client-reported (record_activity_event) or native (the hook tools).
CREATE TABLE activity_events (
  tenant_id        uuid NOT NULL,
  id               uuid NOT NULL,
  installation_id  uuid NOT NULL,
  agent_id         uuid NOT NULL,
  source           text NOT NULL CHECK (source IN ('client', 'hook')),
  type             text NOT NULL CHECK (type ~ '^[a-z][a-z_]{0,39}$'),
  session_id       text CHECK (session_id ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$'),
  tool_name        text CHECK (tool_name ~ '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$'),
  subject_type     text CHECK (subject_type IN ('knowledge', 'skill', 'memory', 'artifact')),
  subject_id       uuid,
  subject_version  integer CHECK (subject_version > 0),
  status           text NOT NULL CHECK (status IN ('ok', 'error')),
  error_code       text CHECK (error_code ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$'),
  occurred_at      timestamptz NOT NULL,
  recorded_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CHECK ((subject_type IS NULL) = (subject_id IS NULL)),
  CHECK (subject_version IS NULL OR subject_id IS NOT NULL),
  CHECK (error_code IS NULL OR status = 'error'),
  FOREIGN KEY (tenant_id, installation_id) REFERENCES activity_installations (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, agent_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX activity_events_by_time ON activity_events (tenant_id, recorded_at DESC);
CREATE INDEX activity_events_by_agent ON activity_events (tenant_id, agent_id, recorded_at DESC);
CREATE INDEX activity_events_by_installation ON activity_events (tenant_id, installation_id, recorded_at DESC);
