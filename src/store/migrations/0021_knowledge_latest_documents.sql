-- Search shows every Knowledge's latest version as the document `knowledge.latest:<id>`, also
-- when it is the published version (then shown as `knowledge:<id>` too), so a grant on all
-- Knowledge is one scope prefix (docs/search.md). A store indexed before holds no latest
-- document for a Knowledge whose latest version is its published one: each such Knowledge gets
-- a search row, which the search projection applies as any other (reading the Knowledge as it
-- then is), as `kgw reindex --search` would.

INSERT INTO outbox (tenant_id, projection, resource_key, operation, payload)
SELECT r.tenant_id, 'search', 'knowledge:' || r.id::text, 'upsert', jsonb_build_object('type', 'knowledge', 'id', r.id::text)
  FROM context_resources r
 WHERE r.type = 'knowledge' AND r.status = 'active' AND r.latest_version > 0 AND r.published_version = r.latest_version
 ORDER BY r.tenant_id, r.id;
