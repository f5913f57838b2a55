-- The front-matter tags of each Knowledge-Base file's current version (core/kb/text/front-matter.ts,
-- normaliseTags: at most 50, each 1 to 64 characters), kept on the head at write time so that
-- list_files shows and filters them without reading any content. Files saved before this
-- migration have none until their next version.
ALTER TABLE kb_files ADD COLUMN tags text[] NOT NULL DEFAULT '{}'
  CONSTRAINT kb_files_tags_bounded CHECK (cardinality(tags) <= 50 AND array_position(tags, NULL) IS NULL);
