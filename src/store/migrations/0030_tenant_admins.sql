-- A tenant's administrators (the org file's `admin: true` on a person): who may open the
-- console's Admin pages, where tokens are issued and revoked and the audit log is read. Until
-- now only the operator (kgw, on the store) could do either, so every person starts as no
-- administrator, and a file that leaves `admin` out keeps it so.
ALTER TABLE principals ADD COLUMN tenant_admin boolean NOT NULL DEFAULT false;
