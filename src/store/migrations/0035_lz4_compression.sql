-- Large values compressed with lz4 instead of PostgreSQL's default pglz where the server has it
-- (PostgreSQL 14 and later built with lz4, as Debian's and the official images are; PGlite is
-- not, and keeps pglz). A value over about 2 KB is compressed when it is written: pglz took
-- 2.1 ms for the 137 KB of a get_current_context's audit resources at 1,000 items, lz4 0.4 ms,
-- to the same size, and lz4 also reads back faster. Only new values are written so; the
-- columns: an audit event's resources and details (each call's), a Knowledge or Skill
-- version's content and a search document's body and positions (read back for snippets).
DO $$
BEGIN
  ALTER TABLE audit_events ALTER COLUMN resources SET COMPRESSION lz4, ALTER COLUMN details SET COMPRESSION lz4;
  ALTER TABLE context_versions ALTER COLUMN content SET COMPRESSION lz4;
  ALTER TABLE search_docs ALTER COLUMN body SET COMPRESSION lz4, ALTER COLUMN stems SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;
