-- A version's content size without its trailing line breaks (\n and \r), kept with the row: what
-- get_current_context's size rule weighs a document by. A bundle never carries a document's
-- trailing line breaks (src/alignbase/context/bundle.ts), so a document of 1 MiB that is nearly
-- all of them costs the bundle a few bytes; weighed by its stored size it was read whole, and an
-- agent with many of them routed read their whole size, over many rounds, at every call.
-- octet_length of the whole content is read from the value's header without reading the value;
-- this size is the same: computed once, when the version is written (versions never change).
-- Adding the column rewrites the table once.
ALTER TABLE context_versions ADD COLUMN body_bytes integer GENERATED ALWAYS AS (octet_length(rtrim(content, E'\r\n'))) STORED;
