-- What the org file last wrote (or found already there) as the content of each Memory,
-- Knowledge and Skill it declares, per resource: the SHA-256 of the file's content for it and
-- the version holding that content (docs/org-file.md). The file saves a new version only when
-- its own content changed since; applying an unchanged file leaves alone what agents and
-- reviewers wrote after it. The Memories' rows of org_memory_content stay as they are.
ALTER TABLE org_memory_content RENAME TO org_applied_content;
ALTER TABLE org_applied_content RENAME CONSTRAINT org_memory_content_pkey TO org_applied_content_pkey;
ALTER TABLE org_applied_content DROP CONSTRAINT org_memory_content_resource_type_check;
ALTER TABLE org_applied_content ALTER COLUMN resource_type DROP DEFAULT;
ALTER TABLE org_applied_content ADD CONSTRAINT org_applied_content_resource_type_check CHECK (resource_type IN ('memory', 'knowledge', 'skill'));
ALTER TABLE org_applied_content RENAME CONSTRAINT org_memory_content_tenant_id_resource_id_resource_type_fkey TO org_applied_content_tenant_id_resource_id_resource_type_fkey;
ALTER TABLE org_applied_content RENAME CONSTRAINT org_memory_content_content_sha256_check TO org_applied_content_content_sha256_check;
ALTER TABLE org_applied_content RENAME CONSTRAINT org_memory_content_version_check TO org_applied_content_version_check;
