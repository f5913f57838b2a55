-- Gateways keep the tokens they have checked in memory (src/kernel/tokens/token-cache.ts), so a
-- tool call need not read the token, its tenant and its principal again. Whatever changes what
-- that check answered must reach every gateway at once, whichever process or statement made the
-- change: a revocation (CLI, console, OAuth), an expiry moved, a principal renamed or removed by
-- `kgw apply`, a tenant deleted (its rows go by cascade, which fires these triggers too), or an
-- operator's own SQL. So the store itself says so, on the channel `kgw_auth`, at commit, to
-- every session that listens. Row-level, with a WHEN that compares what the check reads: an
-- update that changes nothing of it (a password, a mailbox, a sign-in) and a statement that
-- touches no row say nothing. PostgreSQL folds the notifications of one transaction into one.
CREATE FUNCTION kgw_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('kgw_auth', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER tokens_auth_changed AFTER UPDATE ON tokens FOR EACH ROW
  WHEN (OLD.secret_hash IS DISTINCT FROM NEW.secret_hash OR OLD.scopes IS DISTINCT FROM NEW.scopes OR OLD.audience IS DISTINCT FROM NEW.audience
        OR OLD.expires_at IS DISTINCT FROM NEW.expires_at OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
        OR OLD.principal_id IS DISTINCT FROM NEW.principal_id OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id)
  EXECUTE FUNCTION kgw_auth_changed();
CREATE TRIGGER tokens_auth_removed AFTER DELETE ON tokens FOR EACH ROW EXECUTE FUNCTION kgw_auth_changed();

CREATE TRIGGER principals_auth_changed AFTER UPDATE ON principals FOR EACH ROW
  WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.tenant_id IS DISTINCT FROM NEW.tenant_id OR OLD.kind IS DISTINCT FROM NEW.kind
        OR OLD.name IS DISTINCT FROM NEW.name OR OLD.email IS DISTINCT FROM NEW.email OR OLD.owner_id IS DISTINCT FROM NEW.owner_id)
  EXECUTE FUNCTION kgw_auth_changed();
CREATE TRIGGER principals_auth_removed AFTER DELETE ON principals FOR EACH ROW EXECUTE FUNCTION kgw_auth_changed();

CREATE TRIGGER tenants_auth_changed AFTER UPDATE ON tenants FOR EACH ROW
  WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.slug IS DISTINCT FROM NEW.slug OR OLD.name IS DISTINCT FROM NEW.name OR OLD.language IS DISTINCT FROM NEW.language)
  EXECUTE FUNCTION kgw_auth_changed();
CREATE TRIGGER tenants_auth_removed AFTER DELETE ON tenants FOR EACH ROW EXECUTE FUNCTION kgw_auth_changed();
