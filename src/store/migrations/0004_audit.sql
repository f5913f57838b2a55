-- The append-only audit log: who did what to which resource version, and with what result.
-- Never content bodies or secrets; resources and details hold identifiers and metadata only.

CREATE TABLE audit_events (
  tenant_id     uuid NOT NULL REFERENCES tenants (id),
  id            uuid NOT NULL,
  at            timestamptz NOT NULL DEFAULT clock_timestamp(),
  surface       text NOT NULL CHECK (surface IN ('mcp', 'cli', 'oauth', 'console')),
  principal_id  uuid,
  token_id      uuid,
  request_id    text,
  dialect       text,
  tool          text,
  action        text NOT NULL,
  result        text NOT NULL CHECK (result IN ('ok', 'error')),
  error_code    text,
  resources     jsonb NOT NULL DEFAULT '[]',
  details       jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX audit_events_by_time ON audit_events (tenant_id, at DESC);
CREATE INDEX audit_events_by_principal ON audit_events (tenant_id, principal_id, at DESC);

-- Append-only: rows are never changed or removed by the gateway; only an operator's TRUNCATE
-- (which row triggers do not see) can clear them.
CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only';
END;
$$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
