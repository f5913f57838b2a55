-- Atmina team shares: a team shares every Knowledge Base it owns, present and future, with
-- another team (each of its members) or with one person or agent, at a team role. They add up
-- with the owning-team role and are capped by an agent's policy (core/access/team-shares.ts,
-- docs/access.md). Per-KB shares arrive with the Knowledge Bases and combine the same way.
CREATE TABLE team_shares (
  tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id               uuid NOT NULL,
  -- The team whose Knowledge Bases are shared.
  team_id          uuid NOT NULL,
  -- Exactly one grantee: another team, or a principal (person or agent).
  grantee_team_id  uuid,
  principal_id     uuid,
  role             text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT team_shares_one_grantee CHECK ((grantee_team_id IS NULL) <> (principal_id IS NULL)),
  CONSTRAINT team_shares_not_itself CHECK (grantee_team_id IS DISTINCT FROM team_id),
  FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, grantee_team_id) REFERENCES teams (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE,
  -- One share per team and grantee: sharing again replaces the role (NULLs compare equal).
  CONSTRAINT team_shares_grantee UNIQUE NULLS NOT DISTINCT (tenant_id, team_id, grantee_team_id, principal_id)
);
CREATE INDEX team_shares_by_team_grantee ON team_shares (tenant_id, grantee_team_id) WHERE grantee_team_id IS NOT NULL;
CREATE INDEX team_shares_by_principal ON team_shares (tenant_id, principal_id) WHERE principal_id IS NOT NULL;
