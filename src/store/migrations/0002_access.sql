-- The one permission model: Company Brain tiers and roles on principals, Atmina agent policies,
-- and Alignbase context resources with their grants and Always routes. docs/access.md explains it.

ALTER TABLE principals
  ADD COLUMN tier text NOT NULL DEFAULT 'public'
    CHECK (tier IN ('public', 'department', 'project', 'manager', 'hr', 'executive', 'restricted')),
  ADD COLUMN brain_role text NOT NULL DEFAULT 'viewer' CHECK (brain_role IN ('viewer', 'manager', 'admin')),
  ADD COLUMN departments text[] NOT NULL DEFAULT '{}' CHECK (array_position(departments, NULL) IS NULL),
  ADD COLUMN projects text[] NOT NULL DEFAULT '{}' CHECK (array_position(projects, NULL) IS NULL),
  -- scrypt hash from core/access/passwords.ts; NULL means the person has no password.
  ADD COLUMN password_hash text CHECK (password_hash IS NULL OR kind = 'person'),
  -- Narrows an agent below its team role, never raises it; NULL means no policy.
  ADD COLUMN policy_max_team_role text
    CHECK (policy_max_team_role IS NULL OR (policy_max_team_role IN ('viewer', 'editor', 'admin') AND kind = 'agent')),
  -- Lets routes require, through a foreign key, that their target is an agent.
  ADD CONSTRAINT principals_id_kind UNIQUE (tenant_id, id, kind);

-- The identity of an Alignbase resource; its versions live in the tables of each type.
CREATE TABLE context_resources (
  tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id          uuid NOT NULL,
  type        text NOT NULL CHECK (type IN ('knowledge', 'skill', 'memory', 'artifact')),
  -- The title of a Knowledge, the name of a Skill, Memory or Artifact.
  name        text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
  created_by  uuid,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, type, name),
  -- Grants and routes name the type next to the id, so the database keeps the two consistent.
  UNIQUE (tenant_id, id, type),
  FOREIGN KEY (tenant_id, created_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (created_by)
);

-- A context role for a principal or a group, on one resource or (resource_id NULL) on the
-- whole type: All Knowledge, All Skills, All Memories, All Artifacts.
CREATE TABLE context_grants (
  tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id             uuid NOT NULL,
  principal_id   uuid,
  group_id       uuid,
  resource_type  text NOT NULL CHECK (resource_type IN ('knowledge', 'skill', 'memory', 'artifact')),
  resource_id    uuid,
  role           text NOT NULL CHECK (role IN ('viewer', 'proposer', 'editor', 'publisher', 'owner')),
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CHECK ((principal_id IS NULL) <> (group_id IS NULL)),
  FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, group_id) REFERENCES groups (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, resource_id, resource_type) REFERENCES context_resources (tenant_id, id, type) ON DELETE CASCADE,
  -- One role per grantee and target: granting again replaces the role (NULLs compare equal).
  CONSTRAINT context_grants_target UNIQUE NULLS NOT DISTINCT (tenant_id, principal_id, group_id, resource_type, resource_id)
);
CREATE INDEX context_grants_by_principal ON context_grants (tenant_id, principal_id) WHERE principal_id IS NOT NULL;
CREATE INDEX context_grants_by_group ON context_grants (tenant_id, group_id) WHERE group_id IS NOT NULL;
CREATE INDEX context_grants_by_resource ON context_grants (tenant_id, resource_id) WHERE resource_id IS NOT NULL;

-- Always routes: the resource is delivered by get_current_context to the agent, or to every
-- current member of the group. A route grants no permission.
CREATE TABLE context_routes (
  tenant_id      uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id             uuid NOT NULL,
  resource_id    uuid NOT NULL,
  resource_type  text NOT NULL CHECK (resource_type IN ('knowledge', 'skill', 'memory')),
  agent_id       uuid,
  -- Constant 'agent' when agent_id is set, so the foreign key below admits agents only.
  agent_kind     text GENERATED ALWAYS AS (CASE WHEN agent_id IS NULL THEN NULL ELSE 'agent' END) STORED,
  group_id       uuid,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CHECK ((agent_id IS NULL) <> (group_id IS NULL)),
  FOREIGN KEY (tenant_id, resource_id, resource_type) REFERENCES context_resources (tenant_id, id, type) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, agent_id, agent_kind) REFERENCES principals (tenant_id, id, kind) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, group_id) REFERENCES groups (tenant_id, id) ON DELETE CASCADE,
  CONSTRAINT context_routes_target UNIQUE NULLS NOT DISTINCT (tenant_id, resource_id, agent_id, group_id)
);
CREATE INDEX context_routes_by_agent ON context_routes (tenant_id, agent_id) WHERE agent_id IS NOT NULL;
CREATE INDEX context_routes_by_group ON context_routes (tenant_id, group_id) WHERE group_id IS NOT NULL;
