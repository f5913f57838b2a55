-- A change to what get_current_context delivers is signalled on the channel `kgw_context`, so a
-- process that keeps what it read (src/alignbase/context/delivered-cache.ts) forgets it as the
-- change commits: resources (their status, names, versions, expiry), routes, group members and
-- principals. Only a session that asks for the signals gets them (`kgw.context_signals` set to
-- on): the embedded store, where one process holds the database and the cache is kept. A
-- PostgreSQL server's sessions never set it, so its writers pay no NOTIFY (which serialises the
-- commits of notifying transactions) for a cache they do not keep. Per statement: a statement
-- that changes many rows signals once; one that changes none signals too, which only costs a
-- read.
CREATE FUNCTION kgw_context_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('kgw.context_signals', true) = 'on' THEN
    PERFORM pg_notify('kgw_context', '');
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER context_resources_context_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON context_resources
  FOR EACH STATEMENT EXECUTE FUNCTION kgw_context_changed();
CREATE TRIGGER context_routes_context_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON context_routes
  FOR EACH STATEMENT EXECUTE FUNCTION kgw_context_changed();
CREATE TRIGGER group_members_context_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON group_members
  FOR EACH STATEMENT EXECUTE FUNCTION kgw_context_changed();
CREATE TRIGGER principals_context_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON principals
  FOR EACH STATEMENT EXECUTE FUNCTION kgw_context_changed();
