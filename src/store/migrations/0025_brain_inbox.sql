-- The Company Brain inbox (write_inbox, propose_onboarding_action; docs/company-brain.md): what
-- agents propose, waiting for a manager's decision. Nothing here is knowledge: an item changes
-- the graph only when it is approved, and then through the writers of the brain's truth.
CREATE TABLE brain_inbox (
  tenant_id         uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id                uuid NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('observation', 'correction', 'proposal', 'work_output', 'onboarding_action')),
  -- write_inbox's title (3 to 120 characters) or an onboarding action's summary (3 to 160).
  title             text NOT NULL CHECK (length(title) BETWEEN 3 AND 160),
  body              text NOT NULL DEFAULT '' CHECK (length(body) <= 4000),
  related_node_ids  text[] NOT NULL DEFAULT '{}' CHECK (cardinality(related_node_ids) <= 10),
  -- An onboarding action: its name and its details, valid against the action's schema.
  action            text,
  details           jsonb,
  author_id         uuid NOT NULL,
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'rejected')),
  created_at        timestamptz NOT NULL DEFAULT now(),
  decided_at        timestamptz,
  decided_by        uuid,
  decision_note     text,
  PRIMARY KEY (tenant_id, id),
  CHECK ((kind = 'onboarding_action') = (action IS NOT NULL AND details IS NOT NULL)),
  CHECK (kind = 'onboarding_action' OR length(body) >= 10)
);

CREATE INDEX brain_inbox_pending ON brain_inbox (tenant_id, created_at) WHERE status = 'pending';
