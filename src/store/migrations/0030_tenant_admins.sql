-- A tenant's administrators (the org file's `admin: true` on a person): who may open the
-- console's Admin pages, where tokens are issued and revoked and the audit log is read. Until
-- now only the operator (kgw, on the store) could do either, so every person starts as no
-- administrator, and a file that leaves `admin` out keeps it so.
ALTER TABLE principals ADD COLUMN tenant_admin boolean NOT NULL DEFAULT false;

-- When a token was last used, for the Admin pages' token list: the newest audited event that
-- names it. The log is the record already (every MCP call is audited with its token), so the
-- token needs no column written on every request; this index finds that event without reading
-- the tenant's whole log.
CREATE INDEX audit_events_by_token ON audit_events (tenant_id, token_id, at DESC) WHERE token_id IS NOT NULL;
