-- The skill pack registry (get_skill_pack, docs/company-brain.md): one derived revision per
-- distinct pack a tenant's tokens were given. A pack is its visible graph compiled, so the same
-- visible graph gives the same content hash and finds its revision again; only a pack never
-- given before appends one. Derived data: it never changes knowledge.
CREATE TABLE brain_skill_pack_revisions (
  tenant_id     uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  revision      integer NOT NULL CHECK (revision >= 1),
  content_hash  text NOT NULL CHECK (content_hash ~ '^sha256:[0-9a-f]{64}$'),
  generated_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, revision),
  UNIQUE (tenant_id, content_hash)
);
