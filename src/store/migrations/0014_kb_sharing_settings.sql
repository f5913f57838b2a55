-- Atmina team settings and per-KB sharing (core/kb/settings.ts, core/kb/sharing.ts;
-- docs/atmina.md, "Team settings" and "Sharing").

-- One row per team that changed a setting; a team without a row has the defaults below, which
-- the code repeats (TEAM_SETTINGS_DEFAULTS) so that reading needs no row.
CREATE TABLE team_settings (
  tenant_id               uuid NOT NULL,
  team_id                 uuid NOT NULL,
  -- Whether audit events keep the text of search queries (record) or leave it out (omit).
  audit_query_text        text NOT NULL DEFAULT 'record' CHECK (audit_query_text IN ('record', 'omit')),
  -- How long a write to a KB silences the reader's contribution note, in days.
  contribution_note_days  integer NOT NULL DEFAULT 14 CHECK (contribution_note_days BETWEEN 1 AND 365),
  -- The visibility create_kb gives a new KB of this team when none is asked for.
  default_kb_visibility   text NOT NULL DEFAULT 'team' CHECK (default_kb_visibility IN ('private', 'team', 'public')),
  updated_at              timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_by              uuid,
  PRIMARY KEY (tenant_id, team_id),
  FOREIGN KEY (tenant_id, team_id) REFERENCES teams (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, updated_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (updated_by)
);

-- A share of one KB: a role to one principal, to every member of one team, or, pending, to the
-- person who will sign in with an email the tenant does not know yet (an invitation). Accepting
-- an invitation turns the row into a share of that person, keeping its id: the grant id that
-- revoke_share takes is the same before and after.
CREATE TABLE kb_shares (
  tenant_id        uuid NOT NULL,
  id               uuid NOT NULL,
  kb_id            uuid NOT NULL,
  grantee_team_id  uuid,
  principal_id     uuid,
  invited_email    text CHECK (invited_email = lower(btrim(invited_email)) AND length(invited_email) BETWEEN 3 AND 254),
  role             text NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  created_by       uuid,
  updated_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, id),
  CONSTRAINT kb_shares_one_grantee CHECK (num_nonnulls(grantee_team_id, principal_id, invited_email) = 1),
  FOREIGN KEY (tenant_id, kb_id) REFERENCES kbs (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, grantee_team_id) REFERENCES teams (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, principal_id) REFERENCES principals (tenant_id, id) ON DELETE CASCADE,
  FOREIGN KEY (tenant_id, created_by) REFERENCES principals (tenant_id, id) ON DELETE SET NULL (created_by),
  -- One share per KB and grantee: sharing again replaces the role (NULLs compare equal).
  CONSTRAINT kb_shares_grantee UNIQUE NULLS NOT DISTINCT (tenant_id, kb_id, grantee_team_id, principal_id, invited_email)
);
CREATE INDEX kb_shares_by_principal ON kb_shares (tenant_id, principal_id) WHERE principal_id IS NOT NULL;
CREATE INDEX kb_shares_by_team ON kb_shares (tenant_id, grantee_team_id) WHERE grantee_team_id IS NOT NULL;
CREATE INDEX kb_shares_by_email ON kb_shares (tenant_id, invited_email) WHERE invited_email IS NOT NULL;
