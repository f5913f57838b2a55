-- The transactional outbox: a write that changes something a projection (search, graph) shows
-- records a row here in its own transaction; the outbox worker applies the rows to the
-- projection's backend afterwards. Rows hold identifiers and what the projector needs, never
-- secrets. A row is deleted in the transaction that applied it; failures stay with a backoff.
--
-- tenant_id has no foreign key on purpose: a tenant's removal must still be able to enqueue
-- deletes for its projections, and those rows outlive the tenant row.

CREATE TABLE outbox (
  id               bigserial PRIMARY KEY,
  tenant_id        uuid NOT NULL,
  projection       text NOT NULL,
  resource_key     text NOT NULL,
  operation        text NOT NULL CHECK (operation IN ('upsert', 'delete')),
  payload          jsonb NOT NULL DEFAULT '{}',
  created_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  last_error       text,
  last_error_at    timestamptz
);
-- Draining: the oldest rows of one projection first.
CREATE INDEX outbox_drain ON outbox (projection, id);
-- Ordering: is there an earlier row for the same resource still waiting?
CREATE INDEX outbox_by_resource ON outbox (projection, resource_key, id);

-- Progress and the latest failure of each projection, for /readyz and kgw doctor.
CREATE TABLE projection_state (
  projection       text PRIMARY KEY,
  last_applied_id  bigint,
  last_applied_at  timestamptz,
  applied_total    bigint NOT NULL DEFAULT 0,
  last_error       text,
  last_error_at    timestamptz,
  last_rebuild_at  timestamptz
);
